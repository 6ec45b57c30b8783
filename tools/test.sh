#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The test command: install what is missing, build with gcc (warnings are errors), run the
# whole suite; then, on x86-64, the aarch64 cross build and its bits under qemu-user (the
# same bytes as x86's: tools/arm_check.sh); the same suite under AddressSanitizer +
# UndefinedBehaviorSanitizer (clang); test_concurrent under ThreadSanitizer (clang, libomp +
# Archer); test_threads and test_profile on GNU libgomp (the runtime where libomp is
# missing); the smallest build's suite; the Python package through pip; the parsers fuzzed;
# then the line and branch coverage (gcovr) of the smallest build's suite.
# Usage: tools/test.sh [--quick]  (--quick: the gcc build and suite only). Each phase's wall
# and CPU time is printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
[ "${1:-}" = "--quick" ] && quick=1
jobs=$(nproc)

# Each phase's wall time and CPU time (user + sys of the processes it ran, from this shell's
# cutime/cstime in /proc) are printed at the end, also after a failure: where the time goes.
tck=$(getconf CLK_TCK)
phases=()
cpu_ticks() { local s; read -r s </proc/${1:-$$}/stat; s=${s##*) }; set -- $s; echo $((${14} + ${15})); }
phase() { # phase NAME COMMAND...: run it, note its times
  local name=$1 w0 c0 rc=0
  shift
  w0=$(date +%s.%N)
  c0=$(cpu_ticks)
  set +e
  (set -e; "$@") # errexit holds inside (a function called from `||` would ignore it)
  rc=$?
  set -e
  phases+=("$(awk -v n="$name" -v w0="$w0" -v w1="$(date +%s.%N)" -v c="$(($(cpu_ticks) - c0))" \
    -v t="$tck" 'BEGIN { printf "  %-40s %7.1f s wall %8.1f s cpu", n, w1 - w0, c / t }')")
  return $rc
}
report() {
  [ ${#phases[@]} -gt 0 ] || return 0
  echo "tools/test.sh: time by phase (wall; cpu = user + sys of its processes):"
  printf '%s\n' "${phases[@]}"
  if [ -n "$bgpid" ]; then
    echo "  in the background (niced, beside the phases above; a phase's wait for one is its wall):"
    cat "$bgdir/times" 2>/dev/null || true
  fi
  echo "  total: $(($(date +%s) - start)) s wall"
}
finish() {
  local rc=$?
  [ -n "$bgpid" ] && kill -TERM -- -"$bgpid" 2>/dev/null || true
  report
  [ -n "$bgdir" ] && rm -rf "$bgdir"
  exit $rc
}
start=$(date +%s)
bgpid="" bgdir=""
trap finish EXIT

# The builds the later phases need (and the ARM check and the pip install, which are mostly
# builds) run in one background chain, niced, from the start of the gcc suite: they take the
# cores' idle time while the suites run (mpirun's starts, Python's, a long test's tail: a suite
# kept 10-20% of the 2 cores idle, about 460 core-seconds over the whole command), and a phase
# waits only for what is not built yet, at full speed then. Each step's output goes to
# $bgdir/NAME.log, its exit status to NAME.rc, its times to $bgdir/times; the phase that needs it
# prints the log (the test log reads in order) and fails with the step.
bg_step() { # NAME COMMAND...
  local name=$1 w0 c0 rc=0 me=$BASHPID # (inside $(...) BASHPID is that subshell's)
  shift
  w0=$(date +%s.%N)
  c0=$(cpu_ticks "$me")
  (set -e; "$@") >"$bgdir/$name.log" 2>&1 || rc=$?
  awk -v n="$name" -v w0="$w0" -v w1="$(date +%s.%N)" -v c="$(($(cpu_ticks "$me") - c0))" \
    -v t="$tck" 'BEGIN { printf "  %-40s %7.1f s wall %8.1f s cpu\n", n, w1 - w0, c / t }' \
    >>"$bgdir/times"
  echo "$rc" >"$bgdir/$name.rc"
}
bg_wait() { # NAME: wait for a background step, show its output, its status
  while [ ! -f "$bgdir/$1.rc" ]; do
    kill -0 "$bgpid" 2>/dev/null || { echo "tools/test.sh: the background builds stopped before $1" >&2; return 1; }
    sleep 1
  done
  sed 's/.*\r//' "$bgdir/$1.log"
  return "$(cat "$bgdir/$1.rc")"
}

# meson setup DIR ARGS...: a build directory set up afresh (--wipe where one is there); its
# output without meson's progress bars (tqdm redraws them with carriage returns: in a log
# they are one long line each).
setup() {
  local log rc=0
  log=$(mktemp /tmp/shoal-setup.XXXXXX)
  if [ -f "$1/build.ninja" ]; then
    meson setup "$@" --wipe >"$log" 2>&1 || rc=$?
  else
    meson setup "$@" >"$log" 2>&1 || rc=$?
  fi
  sed 's/.*\r//' "$log"
  rm -f "$log"
  return $rc
}

# The tree is clang-formatted (.clang-format at the root): a file that is not fails here.
format_check() {
  if ! clang-format --dry-run --Werror $(git ls-files '*.c' '*.h' '*.cu') 2>/tmp/shoal-format.$$; then
    grep 'error:' /tmp/shoal-format.$$ | cut -d: -f1 | sort -u | sed 's/^/not clang-formatted: /' >&2
    rm -f /tmp/shoal-format.$$
    exit 1
  fi
  rm -f /tmp/shoal-format.$$
}

gcc_build() {
  setup build-test --buildtype=debugoptimized -Dwerror=true
  ninja -C build-test
}
gcc_suite() {
  meson test -C build-test --print-errorlogs --num-processes "$jobs"
}

# ARM: the aarch64 cross build (library, program, suite; kept in build-arm between runs),
# its NEON cases and the no-FMA check under qemu-user, and every output of
# tools/bits_set.sh compared byte for byte with the gcc build's (tools/arm_check.sh,
# docs/ARM.md). An aarch64 host runs its NEON cases in the suite above instead.
arm_check() {
  tools/arm_check.sh build-test/src/app/shoal build-arm
}

# Sanitizers: clang with ASan + UBSan, leak checking on; libomp's own team bookkeeping
# is suppressed (tests/lsan.supp).
asan_build() {
  CC=clang CXX=clang++ setup build-asan --buildtype=debug -Doptimization=1 -Dcuda=disabled \
    -Db_sanitize=address,undefined -Db_lundef=false
  ninja -C build-asan
}
asan_suite() {
  # intercept_tls_get_addr=0: clang 14's LeakSanitizer tracks dynamic TLS blocks through
  # __tls_get_addr and, with Debian 12's glibc, sometimes records a bogus block (seen: "DTLS 6
  # at 0x34d-0x20000144f", then "Tracer caught signal 11" at exit, test_render 2 runs in 4 on
  # a loaded machine); without the interception 0 in 8 failed and leaks are still found.
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1:intercept_tls_get_addr=0 \
    LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp \
    meson test -C build-asan --print-errorlogs --num-processes "$jobs" --timeout-multiplier 4
}

# ThreadSanitizer: test_concurrent (two simulations and two renderers stepped and drawn
# from two threads; every object owns its tables) built with clang -fsanitize=thread,
# OpenMP on (LLVM's libomp) so that each object's own team runs too. libomp itself is
# not instrumented: Archer (libarcher.so, LLVM's OpenMP tool for TSan) tells TSan about
# the runtime's barriers and joins, and ignore_noninstrumented_modules keeps TSan out of
# libomp's internals. Any report fails the run (halt_on_error).
tsan_build() {
  archer=/usr/lib/llvm-$(clang -dumpversion | cut -d. -f1)/lib/libarcher.so
  [ -f "$archer" ] || { echo "tools/test.sh: $archer is missing (libomp-dev)" >&2; exit 1; }
  CC=clang CXX=clang++ setup build-tsan --buildtype=debug -Doptimization=1 -Dcuda=disabled \
    -Dmpi=disabled -Dsdl=disabled -Db_sanitize=thread -Db_lundef=false
  ninja -C build-tsan tests/test_concurrent
}
tsan_run() {
  archer=/usr/lib/llvm-$(clang -dumpversion | cut -d. -f1)/lib/libarcher.so
  TSAN_OPTIONS="halt_on_error=1 ignore_noninstrumented_modules=1 second_deadlock_stack=1" \
    OMP_TOOL_LIBRARIES="$archer" build-tsan/tests/test_concurrent
}

# GNU libgomp instead of LLVM's libomp (-Dopenmp_runtime=gnu: where libomp is missing): the
# library's threads there (bounds, a child of fork() stepping, the wait policy it cannot
# set, the program's start-time choice); only what differs by runtime is built and run.
gnu_build() {
  setup build-gnu --buildtype=debugoptimized -Dwerror=true -Dopenmp_runtime=gnu \
    -Dcuda=disabled -Dsdl=disabled -Dmpi=disabled -Dpython=disabled
  ninja -C build-gnu src/app/shoal tests/test_threads tests/test_profile
}
gnu_run() {
  meson test -C build-gnu --no-rebuild --print-errorlogs test_threads test_profile
}

# The smallest build: no OpenMP, no SDL2 window, no CUDA, no MPI. Everything must build and the
# suite pass (tests of threads or of the window report SKIP there).
# It is also the coverage build (-Db_coverage: gcov counters on the same -O2 code; meson
# cannot instrument a build with CUDA, and this one has none), so coverage costs no
# extra build or run; tools/coverage.sh prints it at the end.
min_build() {
  setup build-min --buildtype=debugoptimized -Dwerror=true -Dopenmp=disabled \
    -Dsdl=disabled -Dcuda=disabled -Dmpi=disabled -Db_coverage=true
  ninja -C build-min
}
min_suite() {
  find build-min -name '*.gcda' -delete
  meson test -C build-min --print-errorlogs --num-processes "$jobs"
}

phase "deps (tools/deps.sh test)" tools/deps.sh test
phase "clang-format check" format_check
phase "gcc build" gcc_build
if [ $quick -eq 0 ]; then
  bgdir=$(mktemp -d /tmp/shoal-test-bg.XXXXXX)
  # setsid: its own process group, which finish() stops on a failure; started from a subshell
  # so that it is not this shell's child: its CPU time is its own report's, not added to the
  # phase that happens to run when it ends
  (setsid nice -n 19 bash -c "$(declare -f cpu_ticks bg_step setup asan_build arm_check \
    tsan_build gnu_build min_build)
    set -uo pipefail
    bgdir=$bgdir tck=$tck
    echo \$\$ >$bgdir/pid
    bg_step asan_build asan_build
    if [ \"\$(uname -m)\" = x86_64 ]; then bg_step arm_check arm_check; fi
    bg_step tsan_build tsan_build
    bg_step gnu_build gnu_build
    bg_step min_build min_build
    bg_step pip_check tools/pip_check.sh
    bg_step fuzz_build tools/fuzz.sh --build-only" </dev/null &)
  while [ ! -s "$bgdir/pid" ]; do sleep 0.1; done
  bgpid=$(cat "$bgdir/pid")
fi
phase "gcc suite" gcc_suite
[ $quick -eq 1 ] && exit 0
phase "asan+ubsan build (wait)" bg_wait asan_build
phase "asan+ubsan suite" asan_suite
if [ "$(uname -m)" = x86_64 ]; then
  # ARM: the aarch64 cross build and its bits under qemu, against the gcc build's program
  phase "arm: cross build + qemu bits (wait)" bg_wait arm_check
fi
phase "tsan build (wait)" bg_wait tsan_build
phase "tsan: test_concurrent" tsan_run
phase "libgomp build (wait)" bg_wait gnu_build
phase "libgomp: thread tests" gnu_run
phase "min build (coverage) (wait)" bg_wait min_build
phase "min suite" min_suite
# The Python package through pip and meson-python, offline, as a user installs it
# (tools/pip_check.sh, docs/PYTHON.md).
phase "pip install . (wait; tools/pip_check.sh)" bg_wait pip_check
# Fuzz every parser (.npy, scene, OBJ, Unity buffer, command line) with
# libFuzzer + ASan + UBSan; a crash fails the run (tools/fuzz.sh, docs/ROBUSTNESS.md). 10 s
# each here, from the seed corpus (every saved regression input also runs in test_robust);
# longer runs by hand: tools/fuzz.sh 600.
phase "fuzz build (wait)" bg_wait fuzz_build
phase "fuzz (10 s a parser)" tools/fuzz.sh 10
# Line and branch coverage of the build-min suite run above (docs/TESTING.md).
phase "coverage report" tools/coverage.sh build-min
