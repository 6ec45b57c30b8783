/* SPDX-License-Identifier: MIT */
/* Checked, aligned allocation. Every large buffer goes through here so that a failed
 * allocation becomes a clear SHOAL_ERR_NOMEM naming what and how much, never a crash. */
#ifndef SHOAL_CORE_ALLOC_H
#define SHOAL_CORE_ALLOC_H

#include "shoal/base.h"

/** 64-byte aligned block of count*size bytes (overflow-checked); NULL and `err` filled
 *  on failure, naming `what`. Free with alloc_free. */
void *alloc_array(size_t count, size_t size, const char *what, shoal_error *err);
/** As alloc_array, zero-filled. */
void *alloc_array_zero(size_t count, size_t size, const char *what, shoal_error *err);
void alloc_free(void *p);

#endif
