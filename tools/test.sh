#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The test command: install what is missing, build with gcc (warnings are errors), run the
# whole suite; then, on x86-64, the aarch64 cross build and its bits under qemu-user (the
# same bytes as x86's: tools/arm_check.sh); the same suite under AddressSanitizer +
# UndefinedBehaviorSanitizer (clang); test_concurrent under ThreadSanitizer (clang, libomp +
# Archer); test_threads and test_profile on GNU libgomp (the runtime where libomp is
# missing); then the line and branch coverage (gcovr) of the suite of the smallest build.
# Usage: tools/test.sh [--quick]  (--quick: the gcc build only)
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh test

# The tree is clang-formatted (.clang-format at the root): a file that is not fails here.
if ! clang-format --dry-run --Werror $(git ls-files '*.c' '*.h' '*.cu') 2>/tmp/shoal-format.$$; then
  grep 'error:' /tmp/shoal-format.$$ | cut -d: -f1 | sort -u | sed 's/^/not clang-formatted: /' >&2
  rm -f /tmp/shoal-format.$$
  exit 1
fi
rm -f /tmp/shoal-format.$$

quick=0
[ "${1:-}" = "--quick" ] && quick=1
jobs=$(nproc)

meson setup build-test --buildtype=debugoptimized -Dwerror=true --wipe >/dev/null 2>&1 ||
  meson setup build-test --buildtype=debugoptimized -Dwerror=true
ninja -C build-test
meson test -C build-test --print-errorlogs --num-processes "$jobs"

if [ $quick -eq 0 ] && [ "$(uname -m)" = x86_64 ]; then
  # ARM: the aarch64 cross build (library, program, suite; kept in build-arm between runs),
  # its NEON cases and the no-FMA check under qemu-user, and every output of
  # tools/bits_set.sh compared byte for byte with the gcc build's (tools/arm_check.sh,
  # docs/ARM.md). An aarch64 host runs its NEON cases in the suite above instead.
  tools/arm_check.sh build-test/src/app/shoal build-arm
fi

if [ $quick -eq 0 ]; then
  # Sanitizers: clang with ASan + UBSan, leak checking on; libomp's own team bookkeeping
  # is suppressed (tests/lsan.supp).
  CC=clang CXX=clang++ meson setup build-asan --buildtype=debug -Doptimization=1 -Dcuda=disabled \
    -Db_sanitize=address,undefined -Db_lundef=false --wipe >/dev/null 2>&1 ||
    CC=clang CXX=clang++ meson setup build-asan --buildtype=debug -Doptimization=1 -Dcuda=disabled \
      -Db_sanitize=address,undefined -Db_lundef=false
  ninja -C build-asan
  # intercept_tls_get_addr=0: clang 14's LeakSanitizer tracks dynamic TLS blocks through
  # __tls_get_addr and, with Debian 12's glibc, sometimes records a bogus block (seen: "DTLS 6
  # at 0x34d-0x20000144f", then "Tracer caught signal 11" at exit, test_render 2 runs in 4 on
  # a loaded machine); without the interception 0 in 8 failed and leaks are still found.
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1:intercept_tls_get_addr=0 \
    LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp \
    meson test -C build-asan --print-errorlogs --num-processes "$jobs" --timeout-multiplier 4
fi

if [ $quick -eq 0 ]; then
  # ThreadSanitizer: test_concurrent (two simulations and two renderers stepped and drawn
  # from two threads; every object owns its tables) built with clang -fsanitize=thread,
  # OpenMP on (LLVM's libomp) so that each object's own team runs too. libomp itself is
  # not instrumented: Archer (libarcher.so, LLVM's OpenMP tool for TSan) tells TSan about
  # the runtime's barriers and joins, and ignore_noninstrumented_modules keeps TSan out of
  # libomp's internals. Any report fails the run (halt_on_error).
  archer=/usr/lib/llvm-$(clang -dumpversion | cut -d. -f1)/lib/libarcher.so
  [ -f "$archer" ] || { echo "tools/test.sh: $archer is missing (libomp-dev)" >&2; exit 1; }
  CC=clang CXX=clang++ meson setup build-tsan --buildtype=debug -Doptimization=1 -Dcuda=disabled \
    -Dmpi=disabled -Dsdl=disabled -Db_sanitize=thread -Db_lundef=false --wipe >/dev/null 2>&1 ||
    CC=clang CXX=clang++ meson setup build-tsan --buildtype=debug -Doptimization=1 -Dcuda=disabled \
      -Dmpi=disabled -Dsdl=disabled -Db_sanitize=thread -Db_lundef=false
  ninja -C build-tsan tests/test_concurrent
  TSAN_OPTIONS="halt_on_error=1 ignore_noninstrumented_modules=1 second_deadlock_stack=1" \
    OMP_TOOL_LIBRARIES="$archer" build-tsan/tests/test_concurrent
fi

if [ $quick -eq 0 ]; then
  # GNU libgomp instead of LLVM's libomp (-Dopenmp_runtime=gnu: where libomp is missing): the
  # library's threads there (bounds, a child of fork() stepping, the wait policy it cannot
  # set, the program's start-time choice); only what differs by runtime is built and run.
  meson setup build-gnu --buildtype=debugoptimized -Dwerror=true -Dopenmp_runtime=gnu \
    -Dcuda=disabled -Dsdl=disabled -Dmpi=disabled -Dpython=disabled --wipe >/dev/null 2>&1 ||
    meson setup build-gnu --buildtype=debugoptimized -Dwerror=true -Dopenmp_runtime=gnu \
      -Dcuda=disabled -Dsdl=disabled -Dmpi=disabled -Dpython=disabled
  ninja -C build-gnu src/app/shoal tests/test_threads tests/test_profile
  meson test -C build-gnu --no-rebuild --print-errorlogs test_threads test_profile
fi

if [ $quick -eq 0 ]; then
  # The smallest build: no OpenMP, no SDL2 window, no CUDA, no MPI. Everything must build and the
  # suite pass (tests of threads or of the window report SKIP there).
  # It is also the coverage build (-Db_coverage: gcov counters on the same -O2 code; meson
  # cannot instrument a build with CUDA, and this one has none), so coverage costs no
  # extra build or run; tools/coverage.sh prints it at the end.
  meson setup build-min --buildtype=debugoptimized -Dwerror=true -Dopenmp=disabled \
    -Dsdl=disabled -Dcuda=disabled -Dmpi=disabled -Db_coverage=true --wipe >/dev/null 2>&1 ||
    meson setup build-min --buildtype=debugoptimized -Dwerror=true -Dopenmp=disabled \
      -Dsdl=disabled -Dcuda=disabled -Dmpi=disabled -Db_coverage=true
  ninja -C build-min
  find build-min -name '*.gcda' -delete
  meson test -C build-min --print-errorlogs --num-processes "$jobs"
fi

if [ $quick -eq 0 ]; then
  tools/pip_check.sh
fi

if [ $quick -eq 0 ]; then
  # Fuzz every parser (.npy, scene, OBJ, Unity buffer, command line) for 30 s each with
  # libFuzzer + ASan + UBSan; a crash fails the run (tools/fuzz.sh, docs/ROBUSTNESS.md).
  tools/fuzz.sh 30
fi

if [ $quick -eq 0 ]; then
  # Line and branch coverage of the build-min suite run above (docs/TESTING.md).
  tools/coverage.sh build-min
fi
