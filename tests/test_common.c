/* SPDX-License-Identifier: MIT */
/* The skip reporting every test shares (tests/scenes.h): a part that could not be checked
 * here turns a passing run into SKIP (exit 77), never OK. */
#include "tests/scenes.h"

#include <stdarg.h>
#include <stdio.h>

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
