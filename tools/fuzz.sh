#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fuzz every parser: build the libFuzzer targets of tests/fuzz with clang and
# -fsanitize=fuzzer,address,undefined, then run each for SECONDS (default 30) from its seed
# corpus (tests/fuzz/corpus/TARGET, read only) into a working corpus under the build
# directory, and print a summary. Exit status 1 if any target crashed, leaked, timed out or
# ran out of memory; the input that did it is kept as BUILD/fuzz-crashes/TARGET-*. Turn a
# real finding into a regression: copy it to tests/fuzz/regressions/TARGET/ (test_robust
# runs the parser on every file there).
# The targets run side by side, one per core.
# Usage: tools/fuzz.sh [SECONDS] [TARGET...]      env: SHOAL_FUZZ_BUILD (build-fuzz),
#        SHOAL_FUZZ_JOBS (targets at a time; default: the cores)
#        tools/fuzz.sh --build-only [TARGET...]  (build them, run nothing: tools/test.sh builds
#        them in the background while its suites run)
set -euo pipefail
cd "$(dirname "$0")/.."
build_only=0
if [ "${1:-}" = --build-only ]; then
  build_only=1
  shift
  set -- 0 "$@"
fi
secs=${1:-30}
shift || true
build=${SHOAL_FUZZ_BUILD:-build-fuzz}

# meson's output goes to a log, shown (without its progress bars: lines redrawn with
# carriage returns) only when the set-up fails
setup_log=$(mktemp /tmp/shoal-fuzzsetup.XXXXXX)
trap 'rm -f "$setup_log"' EXIT
if [ ! -f "$build/build.ninja" ] || ! grep -q "fuzz_npy" "$build/build.ninja" 2>/dev/null; then
  rm -rf "$build"
  # CUDA off: nvcc would become the linker, and it knows no -fsanitize=fuzzer.
  CC=clang CXX=clang++ meson setup "$build" --buildtype=debug -Doptimization=1 -Dfuzz=true \
    -Dtests=false -Dcuda=disabled -Db_sanitize=address,undefined -Db_lundef=false \
    >"$setup_log" 2>&1 || { sed 's/.*\r//' "$setup_log" >&2; exit 1; }
else
  meson setup --reconfigure "$build" -Dcuda=disabled >"$setup_log" 2>&1 ||
    { sed 's/.*\r//' "$setup_log" >&2; exit 1; }
fi
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  read -r -a targets < "$build/tests/fuzz/fuzz_targets.txt"
fi
if ! ninja -C "$build" $(printf 'tests/fuzz/%s ' "${targets[@]}") > "$build/fuzz-build.log" 2>&1; then
  tail -n 30 "$build/fuzz-build.log" >&2
  echo "fuzz: building the targets failed (log: $build/fuzz-build.log)" >&2
  exit 1
fi
if [ $build_only = 1 ]; then
  echo "fuzz: built ${targets[*]} in $build"
  exit 0
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
[ -f tests/lsan.supp ] && export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/lsan.supp}
mkdir -p "$build/fuzz-crashes" "$build/fuzz-logs"
# One target for SECONDS, its exit status into its .rc file.
fuzz_one() {
  local t=$1 name=${1#fuzz_} rc=0
  local work="$build/fuzz-corpus/$name" log="$build/fuzz-logs/$1.log"
  mkdir -p "$work"
  local args=(-max_total_time="$secs" -timeout=5 -rss_limit_mb=2048 -max_len=65536
              -print_final_stats=1 -artifact_prefix="$build/fuzz-crashes/$t-")
  [ -f "tests/fuzz/$name.dict" ] && args+=(-dict="tests/fuzz/$name.dict")
  local seeds=()
  [ -d "tests/fuzz/corpus/$name" ] && seeds+=("tests/fuzz/corpus/$name")
  "$build/tests/fuzz/$t" "${args[@]}" "$work" "${seeds[@]}" >"$log" 2>&1 || rc=$?
  echo "$rc" >"$build/fuzz-logs/$t.rc"
}
# The targets run one per core at a time (each is one process, one thread): on 2 cores the
# five take 3 x SECONDS instead of 5 x (SHOAL_FUZZ_JOBS overrides the count).
jobs=${SHOAL_FUZZ_JOBS:-$(nproc)}
running=0
for t in "${targets[@]}"; do
  rm -f "$build/fuzz-logs/$t.rc"
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz_one "$t" &
  running=$((running + 1))
done
wait || true
failed=0
summary=()
for t in "${targets[@]}"; do
  work="$build/fuzz-corpus/${t#fuzz_}"
  log="$build/fuzz-logs/$t.log"
  rc=$(cat "$build/fuzz-logs/$t.rc" 2>/dev/null || echo "no status")
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo "?")
  files=$(find "$work" -type f | wc -l)
  if [ "$rc" = 0 ]; then
    summary+=("$(printf '%-12s ok       %4ss  %10s runs  cov %6s  corpus %5s' "$t" "$secs" "$runs" "$cov" "$files")")
  else
    failed=1
    what=$(grep -m1 -oE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer): [a-z-]+|runtime error: .*' "$log" || echo "exit $rc")
    summary+=("$(printf '%-12s FAILED   %s (log %s)' "$t" "$what" "$log")")
    tail -n 40 "$log" >&2
  fi
done
echo "fuzz summary ($secs s per target, build $build):"
printf '  %s\n' "${summary[@]}"
exit $failed
