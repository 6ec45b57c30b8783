#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Profile one shoal run with perf: tools/profile.sh ARGS...  (ARGS are shoal's, e.g.
#   tools/profile.sh step --in start.npy --out end.npy --steps 200)
# Records call graphs (`perf record -g`, frame pointers) on the cycles counter where the
# CPU's counters are available, else on the software cpu-clock event (VMs, containers),
# prints the top entries of `perf report --stdio --no-children`, and `perf stat` when
# hardware counters exist.
# Builds build-profile (debugoptimized: -O2 -g -fno-omit-frame-pointer) unless $SHOAL_EXE
# names a binary. Installs linux-perf with apt-get when perf is missing.
# Environment: SHOAL_EXE (binary), PERF_CALLGRAPH (fp | dwarf; default fp), PERF_TOP (25),
# PERF_FREQ (sampling Hz, default 2000), PERF_OUT (directory for perf.data, default
# out/profile).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ $# -eq 0 ]; then
  sed -n '3,13p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi

if ! command -v perf > /dev/null 2>&1 || ! perf --version > /dev/null 2>&1; then
  echo "profile.sh: perf not found; installing linux-perf" >&2
  if command -v apt-get > /dev/null 2>&1; then
    sudo_cmd=""
    [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq && $sudo_cmd apt-get install -y -qq linux-perf > /dev/null
  fi
  command -v perf > /dev/null 2>&1 || { echo "profile.sh: no perf available" >&2; exit 1; }
fi

exe="${SHOAL_EXE:-}"
if [ -z "$exe" ]; then
  build="$root/build-profile"
  if [ ! -f "$build/build.ninja" ]; then
    meson setup "$build" "$root" --buildtype=debugoptimized -Dtests=false > /dev/null
  fi
  ninja -C "$build" src/app/shoal > /dev/null
  exe="$build/src/app/shoal"
fi

out="${PERF_OUT:-out/profile}"
mkdir -p "$out"
data="$out/perf.data"
cg="${PERF_CALLGRAPH:-fp}"
top="${PERF_TOP:-25}"
freq="${PERF_FREQ:-2000}"

# Kernel symbols and unprivileged sampling: loosen what we may (harmless if we may not).
if [ -w /proc/sys/kernel/perf_event_paranoid ]; then
  echo -1 > /proc/sys/kernel/perf_event_paranoid 2> /dev/null || true
fi
if [ -w /proc/sys/kernel/kptr_restrict ]; then
  echo 0 > /proc/sys/kernel/kptr_restrict 2> /dev/null || true
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
perf record -q -e "$event" -F "$freq" -g --call-graph "$cg" -o "$data" -- "$exe" "$@"

echo
echo "== perf report --stdio --no-children (top $top, self time by symbol)"
perf report -i "$data" --stdio --no-children --sort symbol -g none --percent-limit 0.3 \
  2> /dev/null | grep -v '^#' | grep -v '^$' | head -n "$top"

echo
echo "== callers of the hottest stages (perf report -g caller, first 40 lines)"
perf report -i "$data" --stdio --no-children --sort symbol -g caller,0.5,callee,function \
  --percent-limit 5 2> /dev/null | grep -v '^#' | grep -v '^$' | head -n 40

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
