/* SPDX-License-Identifier: MIT */
/* The public functions' checks of their pointer arguments (docs/LIBRARY.md, Errors): a NULL
 * where an object, a desc, a path, an array with a count or an out pointer is needed is
 * SHOAL_ERR_INPUT naming the function and the argument ("shoal_sim_step: sim is NULL"),
 * never a crash. A function without a status returns its empty value instead (0, NULL,
 * nothing done). What a pointer cannot tell (a destroyed object, a short buffer) is not
 * checked. */
#ifndef SHOAL_CORE_CHECK_H
#define SHOAL_CORE_CHECK_H

#include "shoal/base.h"

/* `ptr` (the argument the public header calls `name`) must not be NULL. */
#define CHECK_ARG(ptr, name, err)                                                                  \
    do {                                                                                           \
        if (!(ptr))                                                                                \
            return shoal_error_set((err), SHOAL_ERR_INPUT, "%s: %s is NULL", __func__, (name));    \
    } while (0)

/* An array of `count` items: NULL only when count is 0. */
#define CHECK_ARRAY(ptr, count, name, err)                                                         \
    do {                                                                                           \
        if (!(ptr) && (count) > 0)                                                                 \
            return shoal_error_set((err), SHOAL_ERR_INPUT, "%s: %s is NULL (%zu items)", __func__, \
                                   (name), (size_t)(count));                                       \
    } while (0)

#endif
