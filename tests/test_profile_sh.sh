#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tools/profile.sh --allow-sysctl with runs that overlap (issue 44, N8): the settings found
# before the first run are back after the last one ends, whichever ends first; a run killed
# with SIGKILL is cleaned up by the next; and a missing binary is named as such (N25). The
# kernel's settings are not touched: the script's sysctl directory and state file are moved
# to a scratch directory (PROFILE_SYSCTL_DIR, PROFILE_SYSCTL_STATE), perf is a stand-in that
# runs the command, and the "shoal" binary sleeps.
# Usage: test_profile_sh.sh SOURCE_ROOT
set -euo pipefail
root=$1
dir=$(mktemp -d /tmp/shoal-profile-sh-XXXXXX)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/bin" "$dir/sys"
cat > "$dir/bin/perf" <<'EOF'
#!/usr/bin/env bash
# stand-in for perf: record runs the command after --, the rest prints nothing
case "$1" in
  --version) echo "perf version stand-in" ;;
  stat) echo "instructions not supported" >&2; exit 0 ;;
  record) while [ $# -gt 0 ] && [ "$1" != "--" ]; do shift; done; shift; exec "$@" ;;
  *) exit 0 ;;
esac
EOF
cat > "$dir/bin/fake-shoal" <<'EOF'
#!/usr/bin/env bash
# "shoal step ... SECONDS": sleeps that long
exec sleep "${@: -1}"
EOF
chmod +x "$dir/bin/perf" "$dir/bin/fake-shoal"
export PATH="$dir/bin:$PATH" PROFILE_SYSCTL_DIR="$dir/sys" PROFILE_SYSCTL_STATE="$dir/state"
export SHOAL_EXE="$dir/bin/fake-shoal" PERF_OUT="$dir/out"
fail() { echo "FAIL: $*" >&2; exit 1; }
values() { echo "$(cat "$dir/sys/perf_event_paranoid") $(cat "$dir/sys/kptr_restrict")"; }
wait_for() { # wait (at most 20 s) until the shell test $1 holds
  local i=0
  until eval "$1"; do
    i=$((i + 1))
    [ $i -lt 2000 ] || fail "timed out waiting for: $1"
    sleep 0.01
  done
}
run() { "$root/tools/profile.sh" --allow-sysctl step "$1" > "$dir/out.$2" 2>&1; }

# A short run inside a long one: B starts after A lowered the settings and ends after A.
echo 2 > "$dir/sys/perf_event_paranoid"
echo 1 > "$dir/sys/kptr_restrict"
run 1.5 a &
a=$!
wait_for '[ "$(values)" = "-1 0" ]'
run 3 b &
b=$!
wait_for 'grep -q "kptr_restrict = 0 for this run" "$dir/out.b"'
wait "$a" || fail "run A failed: $(cat "$dir/out.a")"
[ "$(values)" = "-1 0" ] || fail "A ended while B runs: settings $(values), expected -1 0"
wait "$b" || fail "run B failed: $(cat "$dir/out.b")"
[ "$(values)" = "2 1" ] || fail "after both runs: settings $(values), expected 2 1 (as before)"
[ ! -e "$dir/state" ] || fail "the state file stays after the last run"
grep -q "was 2" "$dir/out.b" || fail "B did not report the values found before A: $(cat "$dir/out.b")"

# The long one first, the short one inside it (the order the trial saw).
run 3 c &
c=$!
wait_for '[ "$(values)" = "-1 0" ]'
run 0.5 d || fail "run D failed: $(cat "$dir/out.d")"
[ "$(values)" = "-1 0" ] || fail "D ended while C runs: settings $(values)"
wait "$c" || fail "run C failed"
[ "$(values)" = "2 1" ] || fail "after C and D: settings $(values), expected 2 1"

# A run killed with SIGKILL leaves them loosened (nothing can run at SIGKILL); the next run
# finds its pid dead and puts back the first values when it ends.
run 30 e &
e=$!
wait_for 'grep -q "^pid" "$dir/state" 2> /dev/null'
epid=$(sed -n 's/^pid //p' "$dir/state")
wait_for '[ -n "$(pgrep -P "$epid")" ]'
child=$(pgrep -P "$epid") # the stand-in perf, which became the sleeping "shoal"
kill -KILL "$epid"
kill -KILL $child 2> /dev/null || true
wait "$e" || true
[ "$(values)" = "-1 0" ] || fail "after SIGKILL: settings $(values)"
run 0.2 f || fail "run F failed: $(cat "$dir/out.f")"
[ "$(values)" = "2 1" ] || fail "the run after a SIGKILLed one: settings $(values), expected 2 1"

# N25: a binary that is not there is named, not blamed on perf_event_paranoid.
set +e
SHOAL_EXE=/nonexistent/shoal "$root/tools/profile.sh" --allow-sysctl step x > "$dir/out.g" 2>&1
rc=$?
set -e
[ $rc -eq 2 ] || fail "a missing binary: exit $rc, expected 2"
grep -q "/nonexistent/shoal is not there" "$dir/out.g" || fail "message: $(cat "$dir/out.g")"
grep -q "paranoid" "$dir/out.g" && fail "a missing binary blamed on the sysctl: $(cat "$dir/out.g")"
[ "$(values)" = "2 1" ] || fail "settings changed by a run that could not start: $(values)"
echo "ok: overlapping runs restore 2 / 1; a SIGKILLed run is cleaned up by the next; a missing binary is named"
