#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Mutation testing: put each small bug of tools/mutations.txt into a copy of the tree, one
# at a time, build it (gcc) and run the test suite against it; a mutation is killed when a
# test fails (or the build breaks, or a test hangs past its timeout). Prints the kill rate
# and the survivors. Never touches the checkout: the copy and its build live in
# $MUTATE_DIR (default /tmp/shoal-mutate). Not part of CI: it takes long (docs/TESTING.md).
#
# Usage: tools/mutate.sh [--check] [FIRST [LAST]]
#   --check      only verify that every mutation applies (its OLD text is found)
#   FIRST LAST   run mutations FIRST..LAST (1-based, in file order) only
# Environment: MUTATIONS (list file), MUTATE_DIR (work directory), MUTATE_TIMEOUT (s per
# test), MUTATE_SKIP_BASELINE=1 (do not run the unmutated suite first).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
list=${MUTATIONS:-$root/tools/mutations.txt}
work=${MUTATE_DIR:-/tmp/shoal-mutate}
per_test_timeout=${MUTATE_TIMEOUT:-900}
py=/usr/bin/python3
[ -x "$py" ] || py=python3

check=0
if [ "${1:-}" = "--check" ]; then
  check=1
  shift
fi
first=${1:-1}
last=${2:-100000}

# The mutations as NUL-free records: file, old, new, description (fields split on " @@ ").
mapfile -t lines < <(grep -v '^\s*#' "$list" | grep -v '^\s*$')

apply() { # apply FILE OLD NEW -> 0 when applied
  "$py" - "$1" "$2" "$3" <<'EOF'
import sys
path, old, new = sys.argv[1:4]
old, new = old.replace("\\n", "\n"), new.replace("\\n", "\n")
text = open(path, encoding="utf-8").read()
if old not in text:
    sys.exit(3)
open(path, "w", encoding="utf-8").write(text.replace(old, new, 1))
EOF
}

field() { # field N LINE
  "$py" -c 'import sys; f = sys.argv[2].split(" @@ "); print(f[int(sys.argv[1])] if len(f) == 4 else "")' "$1" "$2"
}

if [ $check -eq 1 ]; then
  bad=0
  n=0
  for line in "${lines[@]}"; do
    n=$((n + 1))
    f=$(field 0 "$line")
    old=$(field 1 "$line")
    cp "$root/$f" "${TMPDIR:-/tmp}/mutate-check.$$" 2>/dev/null || true
    if [ -z "$f" ] || ! apply "${TMPDIR:-/tmp}/mutate-check.$$" "$old" "$old"; then
      echo "mutation $n does not apply: $line"
      bad=$((bad + 1))
    fi
  done
  rm -f "${TMPDIR:-/tmp}/mutate-check.$$"
  echo "$n mutations, $bad do not apply"
  exit $((bad > 0))
fi

# A copy of the tree as it is now (tracked and untracked-but-not-ignored files).
src=$work/src
build=$work/build
rm -rf "$src"
mkdir -p "$src"
(cd "$root" && git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$src")
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" "$src" --buildtype=debugoptimized -Dcuda=disabled >/dev/null
fi
ninja -C "$build" >/dev/null

# Tests in the order most likely to fail first (the rest after them, as meson lists them).
preferred="test_reference test_models test_grid test_scan test_raster test_render test_params
test_npy test_obj test_field test_predators test_targets test_cli test_robust"
last_tests="test_determinism"
all=$(meson test -C "$build" --list 2>/dev/null | sed 's/^.* \/ //')
order=$preferred
for t in $all; do
  case " $(echo $preferred $last_tests) " in *" $t "*) ;; *) order="$order $t" ;; esac
done
order="$order $last_tests" # the slowest last

run_suite() { # -> prints the first failing test, or nothing
  for t in $order; do
    # CMOCKA_TEST_ABORT: a test program stops at its first failure (faster kills)
    if ! CMOCKA_TEST_ABORT=1 timeout "$per_test_timeout" meson test -C "$build" --no-rebuild \
      -q "$t" >/dev/null 2>&1; then
      echo "$t"
      return
    fi
  done
}

# MUTATE_SKIP_BASELINE=1: trust that the unmutated suite passes (it just did in CI)
failing=
if [ "${MUTATE_SKIP_BASELINE:-0}" != 1 ]; then
  echo "baseline: the unmutated suite must pass"
  failing=$(run_suite)
fi
if [ -n "$failing" ]; then
  echo "the unmutated suite fails ($failing): fix that first" >&2
  exit 1
fi

report=$work/report.txt
: >"$report"
n=0 killed=0 survived=0 invalid=0
survivors=()
for line in "${lines[@]}"; do
  n=$((n + 1))
  [ $n -ge "$first" ] && [ $n -le "$last" ] || continue
  f=$(field 0 "$line")
  old=$(field 1 "$line")
  new=$(field 2 "$line")
  what=$(field 3 "$line")
  cp "$src/$f" "$work/saved"
  if ! apply "$src/$f" "$old" "$new"; then
    echo "[$n] does not apply: $what" | tee -a "$report"
    invalid=$((invalid + 1))
    continue
  fi
  start=$(date +%s)
  if ! ninja -C "$build" >"$work/build.log" 2>&1; then
    result="killed (does not build)"
    killed=$((killed + 1))
  else
    failing=$(run_suite)
    if [ -n "$failing" ]; then
      result="killed by $failing"
      killed=$((killed + 1))
    else
      result="SURVIVED"
      survived=$((survived + 1))
      survivors+=("[$n] $f: $what")
    fi
  fi
  cp "$work/saved" "$src/$f"
  echo "[$n] $f: $what: $result ($(($(date +%s) - start)) s)" | tee -a "$report"
done
ninja -C "$build" >/dev/null 2>&1 || true

total=$((killed + survived))
echo
echo "mutations: $total run, $killed killed, $survived survived, $invalid did not apply" | tee -a "$report"
if [ $total -gt 0 ]; then
  echo "kill rate: $((100 * killed / total))% ($killed/$total)" | tee -a "$report"
fi
for s in "${survivors[@]}"; do
  echo "survivor: $s" | tee -a "$report"
done
