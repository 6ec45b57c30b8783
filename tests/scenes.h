/* SPDX-License-Identifier: MIT */
/* What the tests share besides the CLI harness: the seeded scene builders (in the support
 * library, support/scenes.h, with the benchmarks) and the skip reporting (test_common.c). */
#ifndef SHOAL_TESTS_SCENES_H
#define SHOAL_TESTS_SCENES_H

#include "support/scenes.h"

/* A test that could not check part of what it should (an ISA this CPU lacks, a missing
 * tool or input) calls test_skip_part with the reason; test_exit then turns a passing
 * run into exit 77, which meson reports as SKIP, never OK. */
void test_skip_part(const char *fmt, ...);
int test_exit(int failed);

#endif
