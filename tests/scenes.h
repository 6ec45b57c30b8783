/* SPDX-License-Identifier: MIT */
/* What the tests share besides the CLI harness: the seeded scene builders (in the support
 * library, support/scenes.h, with the benchmarks), the skip reporting and the ISA cases
 * (test_common.c). */
#ifndef SHOAL_TESTS_SCENES_H
#define SHOAL_TESTS_SCENES_H

#include "shoal/base.h"
#include "support/scenes.h"

#include <stddef.h>

/* A test that could not check part of what it should (an ISA this CPU lacks, a missing
 * tool or input) calls test_skip_part with the reason; test_exit then turns a passing
 * run into exit 77, which meson reports as SKIP, never OK. */
void test_skip_part(const char *fmt, ...);
int test_exit(int failed);

/* The ISAs of this build's architecture, scalar first (the reference of the others): x86-64
 * has AVX2 and AVX-512, aarch64 NEON. Loops over ISAs walk this list with test_isa_skip, so
 * an ISA of another architecture is never a gap of this run, and a new ISA is added here
 * once (and to wide_isas in tests/meson.build). */
#if defined(__x86_64__)
#define TEST_ISA_COUNT 3
#define TEST_ISA_LIST                                                                              \
    {                                                                                              \
        SHOAL_ISA_SCALAR, SHOAL_ISA_AVX2, SHOAL_ISA_AVX512                                         \
    }
#elif defined(__aarch64__)
#define TEST_ISA_COUNT 2
#define TEST_ISA_LIST                                                                              \
    {                                                                                              \
        SHOAL_ISA_SCALAR, SHOAL_ISA_NEON                                                           \
    }
#else
#define TEST_ISA_COUNT 1
#define TEST_ISA_LIST                                                                              \
    {                                                                                              \
        SHOAL_ISA_SCALAR                                                                           \
    }
#endif
static const shoal_isa test_isas[TEST_ISA_COUNT] = TEST_ISA_LIST;

/* TEST_LONG(full, short): a loop's length (steps, cases) in the gcc suite and in a sanitizer
 * or coverage build (tests/meson.build sets SHOAL_TEST_SHORT). Under ASan + UBSan on 2 cores
 * every step costs several times more, and what the sanitizers look for (a bad access, a leak,
 * undefined arithmetic) shows in the first steps; the coverage build (the smallest one) counts
 * which lines run, which the length does not change. The long runs that look for a lane or an
 * order bug after many steps are the gcc suite's (and the ARM check's). */
#ifndef SHOAL_TEST_SHORT
#define SHOAL_TEST_SHORT 0
#endif
#define TEST_LONG(full, short) (SHOAL_TEST_SHORT ? (short) : (full))
/* TEST_SAN(other, sanitized): a length in every build but the sanitizer ones (ASan + UBSan,
 * TSan; tests/meson.build sets SHOAL_TEST_SANITIZED), where a step costs 3-15x the coverage
 * build's -O2 step. For loops whose checks the gcc and coverage suites keep: under the
 * sanitizers the code runs (every branch the short run takes) for its accesses alone. */
#ifndef SHOAL_TEST_SANITIZED
#define SHOAL_TEST_SANITIZED 0
#endif
#define TEST_SAN(other, sanitized) (SHOAL_TEST_SANITIZED ? (sanitized) : (other))

/* The tests that check every ISA run as one meson case per ISA (tests/meson.build:
 * `test_render` checks scalar and what does not depend on the ISA, `test_render:avx2` and
 * `test_render:avx512` only their ISA; `test_render:neon` on aarch64), so that a CPU
 * without AVX-512 reports SKIP for the AVX-512 cases alone. test_isa_args reads `--isa NAME`
 * (repeatable: the ISAs this run checks; without it, every ISA) and `--isa-only` (run only the
 * tests named in isa_tests, NULL-terminated); a named ISA this CPU lacks ends the run with SKIP
 * (77). Returns how many of `tests` to run (they are moved to the front). */
struct CMUnitTest;
size_t test_isa_args(int argc, char **argv, struct CMUnitTest *tests, size_t count,
                     const char *const isa_tests[]);
/* Whether this run checks `isa` (--isa, or every ISA without it). */
int test_isa_wanted(shoal_isa isa);
/* Whether --isa was given. */
int test_isa_selected(void);
/* For a loop over ISAs: 1 to skip `isa`, because this run does not check it or (then also
 * reported with test_skip_part) this CPU lacks it. */
int test_isa_skip(shoal_isa isa);

#endif
