#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Profile one shoal run with perf: tools/profile.sh [--allow-sysctl] ARGS...  (ARGS are
# shoal's, e.g.  tools/profile.sh step --in start.npy --out end.npy --steps 200)
# Records call graphs (`perf record -g`, frame pointers) on the cycles counter where the
# CPU's counters are available, else on the software cpu-clock event (VMs, containers),
# prints the top entries of `perf report --stdio --no-children` and the callers of the
# hottest, and `perf stat` when hardware counters exist.
# The binary: $SHOAL_EXE if set, else the release build (build-release, brought up to date;
# set up as tools/run.sh does when missing). Every build has -g and frame pointers.
# System settings are left alone unless --allow-sysctl is given: then, where writable,
# kernel.perf_event_paranoid is set to -1 and kernel.kptr_restrict to 0 for the run (a
# user may sample the kernel and read its symbols) and both are put back on exit, also on
# failure or Ctrl-C. Without it, perf runs as the system allows (say, user space only).
# linux-perf is installed (tools/deps.sh profile) when perf is missing.
# Environment: SHOAL_EXE (binary), PERF_CALLGRAPH (fp | dwarf; default fp), PERF_TOP (25),
# PERF_FREQ (sampling Hz, default 2000), PERF_EVENT (the event), PERF_OUT (directory for
# perf.data, default out/profile).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
allow_sysctl=0
if [ "${1:-}" = "--allow-sysctl" ]; then
  allow_sysctl=1
  shift
fi
if [ $# -eq 0 ]; then
  sed -n '3,19p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi

if ! command -v perf > /dev/null 2>&1 || ! perf --version > /dev/null 2>&1; then
  echo "profile.sh: perf not found; installing linux-perf (tools/deps.sh profile)" >&2
  "$root/tools/deps.sh" profile
  command -v perf > /dev/null 2>&1 || { echo "profile.sh: no perf available" >&2; exit 1; }
fi

exe="${SHOAL_EXE:-}"
if [ -z "$exe" ]; then
  build="$root/build-release"
  if [ ! -f "$build/build.ninja" ]; then
    meson setup "$build" "$root" --buildtype=release -Dtests=false > /dev/null
  fi
  ninja -C "$build" src/app/shoal > /dev/null
  exe="$build/src/app/shoal"
fi
if [ ! -f "$exe" ] || [ ! -x "$exe" ]; then
  echo "profile.sh: the shoal binary $exe is not there or not executable (SHOAL_EXE names" \
    "another; unset, the release build is used)" >&2
  exit 2
fi

out="${PERF_OUT:-out/profile}"
mkdir -p "$out"
data="$out/perf.data"
cg="${PERF_CALLGRAPH:-fp}"
top="${PERF_TOP:-25}"
freq="${PERF_FREQ:-2000}"

# --allow-sysctl: loosen what we may for this run, and put it back whatever happens. The
# settings are the machine's, so runs that overlap share them: a state file (under a lock)
# keeps the values found before the first run and the pids of the runs using them; each run
# adds itself, and the last one to end puts the first values back. (Each run saving what it
# found and restoring that left them loosened: B saved the values A had set and put them back
# after A had restored the real ones.) A run killed with SIGKILL cannot restore them: the
# next run finds its pid dead and the first values still in the state file. The state file
# and the sysctl directory can be moved for tests (PROFILE_SYSCTL_STATE, PROFILE_SYSCTL_DIR).
sysdir="${PROFILE_SYSCTL_DIR:-/proc/sys/kernel}"
state="${PROFILE_SYSCTL_STATE:-}"
if [ -z "$state" ]; then
  state=/run/shoal-profile-sysctl
  [ -d /run ] && [ -w /run ] || state=/tmp/shoal-profile-sysctl
fi
held=0
# sysctl_state enter|leave: under the lock, update the state file and the settings.
sysctl_state() {
  local fd pids=() origs=() line name val kv f alive=()
  exec {fd}> "$state.lock"
  flock "$fd"
  if [ -f "$state" ]; then
    while read -r line; do
      case "$line" in
        pid\ *) pids+=("${line#pid }") ;;
        orig\ *) origs+=("${line#orig }") ;;
      esac
    done < "$state"
  fi
  for p in "${pids[@]}"; do
    [ "$p" != "$$" ] && kill -0 "$p" 2> /dev/null && alive+=("$p")
  done
  if [ "$1" = enter ]; then
    for kv in perf_event_paranoid=-1 kptr_restrict=0; do
      name=${kv%%=*}
      f=$sysdir/$name
      if [ ! -w "$f" ]; then
        echo "profile.sh: kernel.$name is not writable here; left at $(cat "$f" 2> /dev/null)" >&2
        continue
      fi
      val=""
      for line in "${origs[@]}"; do
        [ "${line%% *}" = "$name" ] && val=${line#* }
      done
      if [ -z "$val" ]; then
        val=$(cat "$f")
        origs+=("$name $val")
      fi
      if echo "${kv#*=}" > "$f" 2> /dev/null; then
        echo "profile.sh: kernel.$name = ${kv#*=} for this run (was $val; put back when the" \
          "last profile.sh run using it ends)" >&2
      fi
    done
    alive+=("$$")
    held=1
  else
    held=0
  fi
  if [ ${#alive[@]} -eq 0 ]; then
    for line in "${origs[@]}"; do
      name=${line%% *}
      echo "${line#* }" > "$sysdir/$name" 2> /dev/null ||
        echo "profile.sh: could not restore kernel.$name to ${line#* }" >&2
    done
    rm -f "$state"
  else
    {
      for p in "${alive[@]}"; do echo "pid $p"; done
      for line in "${origs[@]}"; do echo "orig $line"; done
    } > "$state.new" && mv "$state.new" "$state"
  fi
  flock -u "$fd"
  exec {fd}>&-
}
restore_sysctl() {
  if [ "$held" = 1 ]; then
    sysctl_state leave
  fi
}
if [ $allow_sysctl -eq 1 ]; then
  trap restore_sysctl EXIT
  trap 'exit 130' INT TERM HUP QUIT
  sysctl_state enter
fi

# Hardware counters? (VMs often have none: then cpu-clock, a software timer event.)
hw=0
if perf stat -e instructions -x, true > /dev/null 2> "$out/hwcheck.txt" &&
   ! grep -q "not supported\|<not counted>" "$out/hwcheck.txt"; then
  hw=1
fi
# the cycles counter where the CPU's counters are there, else the software clock
event="cpu-clock"
[ $hw = 1 ] && event="cycles"
[ "${PERF_EVENT:-}" != "" ] && event="$PERF_EVENT"

echo "== perf record -e $event -F $freq -g --call-graph $cg -- shoal $*"
if ! perf record -q -e "$event" -F "$freq" -g --call-graph "$cg" -o "$data" -- "$exe" "$@"; then
  paranoid=$(cat "$sysdir/perf_event_paranoid" 2> /dev/null || echo '?')
  if [ "$paranoid" != "?" ] && [ "$paranoid" -gt -1 ] 2> /dev/null && [ $allow_sysctl -eq 0 ]; then
    echo "profile.sh: perf record failed (kernel.perf_event_paranoid is $paranoid; as root," \
      "--allow-sysctl lowers it for the run)" >&2
  else
    echo "profile.sh: perf record failed (its message is above; kernel.perf_event_paranoid" \
      "is $paranoid)" >&2
  fi
  exit 1
fi

echo
echo "== perf report --stdio --no-children (top $top, self time by symbol)"
perf report -i "$data" --stdio --no-children --sort symbol -g none --percent-limit 0.3 \
  2> /dev/null | grep -v '^#' | grep -v '^$' | head -n "$top" || true

echo
echo "== callers of the hottest stages (perf report -g caller, first 40 lines)"
perf report -i "$data" --stdio --no-children --sort symbol -g caller,0.5,callee,function \
  --percent-limit 5 2> /dev/null | grep -v '^#' | grep -v '^$' | head -n 40 || true

if [ "$hw" -eq 1 ]; then
  echo
  echo "== perf stat"
  perf stat -e task-clock,cycles,instructions,branches,branch-misses,cache-misses \
    -- "$exe" "$@" 2>&1 > /dev/null | sed -n '/Performance counter/,$p'
else
  echo
  echo "(perf stat skipped: no hardware counters here -- 'perf stat -e instructions true'"
  echo " reports them unsupported; cpu-clock sampling above still works)"
fi
echo
echo "perf.data: $data   (perf report -i $data  for the interactive view)"
