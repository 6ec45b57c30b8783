/* SPDX-License-Identifier: MIT */
/* Aligned allocation with overflow checks and messages (see alloc.h). */
#include "core/alloc.h"

#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

/* Arrays of 2 MiB and more start on a 2 MiB boundary and ask for transparent huge pages:
 * a 1M-boid simulation's two dozen 4 MiB arrays then take ~50 page faults on their first
 * touch instead of ~25,000 (the first step cost 2x the others), and the force kernels'
 * scattered reads of neighbour cells miss the TLB less. Advice only: where THP is off, or
 * not Linux, nothing changes but the alignment. */
#define HUGE_BYTES ((size_t)2 << 20)

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
    size_t align = 64;
    if (bytes >= HUGE_BYTES) {
        align = HUGE_BYTES;
        if (bytes <= SIZE_MAX - HUGE_BYTES)
            bytes = (bytes + HUGE_BYTES - 1) & ~(HUGE_BYTES - 1);
    }
    void *p = NULL;
    if (posix_memalign(&p, align, bytes) != 0 || !p) {
        shoal_error_set(err, SHOAL_ERR_NOMEM, "out of memory allocating %s (%zu bytes)", what,
                        bytes);
        return NULL;
    }
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (align == HUGE_BYTES)
        (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
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
