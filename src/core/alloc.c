/* SPDX-License-Identifier: MIT */
/* Aligned allocation with overflow checks and messages (see alloc.h). */
#include "core/alloc.h"

#include <stdlib.h>
#include <string.h>

/* No huge-page advice: madvise(MADV_HUGEPAGE) on the sim's arrays was measured on the
 * device (16-core Xeon VM, THP "madvise"): 1M steer on 2 threads 117/88/126 ms per step with
 * it against 72/60/69 without and 74/83/91 before, 16 threads 14.1/12.6/14.1 against
 * 11.5/13.0/12.7 (docs/results/2026-11-24-frame-1m.md). The first step's page faults are paid
 * at create instead (sim.c, first_touch). */

void *alloc_array(size_t count, size_t size, const char *what, shoal_error *err)
{
    if (size != 0 && count > (SIZE_MAX - 64) / size) {
        shoal_error_set(err, SHOAL_ERR_NOMEM, "cannot allocate %s: %zu x %zu bytes overflows", what,
                        count, size);
        return NULL;
    }
    size_t bytes = count * size;
    bytes = (bytes + 63) & ~(size_t)63;
    if (bytes == 0)
        bytes = 64;
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes) != 0 || !p) {
        shoal_error_set(err, SHOAL_ERR_NOMEM, "out of memory allocating %s (%zu bytes)", what,
                        bytes);
        return NULL;
    }
    return p;
}

void *alloc_array_zero(size_t count, size_t size, const char *what, shoal_error *err)
{
    void *p = alloc_array(count, size, what, err);
    if (p)
        memset(p, 0, count * size);
    return p;
}

void alloc_free(void *p) { free(p); }
