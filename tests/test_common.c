/* SPDX-License-Identifier: MIT */
/* What every test shares (tests/scenes.h): the skip reporting (a part that could not be
 * checked here turns a passing run into SKIP, exit 77, never OK) and the ISA selection of
 * the tests that check every ISA (meson runs each ISA as its own case). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/scenes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int skipped_parts;

void test_skip_part(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("# SKIP (part): ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
    skipped_parts++;
}

int test_exit(int failed)
{
    if (failed)
        return failed;
    if (skipped_parts) {
        printf("# %d part(s) could not be checked here: reporting SKIP (77), not OK\n",
               skipped_parts);
        return 77;
    }
    return 0;
}

/* ---- ISA cases ----------------------------------------------------------------------------- */

static unsigned isa_wanted_mask = ~0u; /* bit per shoal_isa; all without --isa */
static int isa_selected;

int test_isa_wanted(shoal_isa isa) { return (isa_wanted_mask >> (unsigned)isa) & 1u; }

int test_isa_selected(void) { return isa_selected; }

int test_isa_skip(shoal_isa isa)
{
    if (!test_isa_wanted(isa))
        return 1;
    if (!shoal_isa_supported(isa)) {
        test_skip_part("%s: not supported by this CPU", shoal_isa_name(isa));
        return 1;
    }
    return 0;
}

size_t test_isa_args(int argc, char **argv, struct CMUnitTest *tests, size_t count,
                     const char *const isa_tests[])
{
    int only = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--isa-only") == 0) {
            only = 1;
        } else if (strcmp(argv[i], "--isa") == 0 && i + 1 < argc) {
            shoal_isa isa;
            shoal_error e;
            if (shoal_isa_parse(argv[++i], &isa, &e) || isa == SHOAL_ISA_AUTO) {
                fprintf(stderr, "--isa %s: expected scalar, avx2, avx512 or neon\n", argv[i]);
                exit(2);
            }
            if (!isa_selected)
                isa_wanted_mask = 0;
            isa_selected = 1;
            isa_wanted_mask |= 1u << (unsigned)isa;
            if (!shoal_isa_supported(isa)) {
                /* the whole case is this ISA's: nothing here can run it */
                printf("SKIP: %s: not supported by this CPU (or build)\n", shoal_isa_name(isa));
                exit(77);
            }
        } else {
            fprintf(stderr, "%s: unknown argument '%s' (--isa NAME, --isa-only)\n", argv[0],
                    argv[i]);
            exit(2);
        }
    }
    if (!only)
        return count;
    size_t n = 0;
    for (size_t i = 0; i < count; i++)
        for (size_t k = 0; isa_tests[k]; k++)
            if (strcmp(tests[i].name, isa_tests[k]) == 0) {
                tests[n++] = tests[i];
                break;
            }
    if (n == 0) {
        fprintf(stderr, "%s --isa-only: none of the ISA tests is in the list\n", argv[0]);
        exit(2);
    }
    return n;
}
