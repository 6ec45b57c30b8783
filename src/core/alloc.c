/* SPDX-License-Identifier: MIT */
/* Aligned allocation with overflow checks and messages (see alloc.h). */
#include "core/alloc.h"

#include <stdlib.h>
#include <string.h>

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
