/* SPDX-License-Identifier: MIT */
/* The pieces of the .npy reader and writer (npy.c) that a reader of row ranges needs (the
 * MPI-IO path of src/mpi): the header's layout without the data, the value conversion,
 * the preamble the writer makes. Internal to shoal. */
#ifndef SHOAL_IO_NPY_LAYOUT_H
#define SHOAL_IO_NPY_LAYOUT_H

#include "shoal/base.h"

#include <stddef.h>
#include <stdint.h>

typedef struct npy_layout {
    size_t count;       /* rows N of shape (N, 6) */
    size_t item_size;   /* 4 ('<f4') or 8 ('<f8') */
    size_t data_offset; /* bytes before row 0 */
} npy_layout;

/* Bytes of the preamble and header dict, from the file's first 12 bytes; 0 when they are
 * not a .npy preamble (npy_layout_parse then says what is wrong). */
size_t npy_preamble_size(const void *data, size_t size);

/* Check the preamble and header in data[0..size) of a file of file_size bytes (the same
 * checks and messages as shoal_io_npy_parse, data size included) and describe it. */
shoal_status npy_layout_parse(const void *data, size_t size, uint64_t file_size, const char *name,
                              npy_layout *out, shoal_error *err);

/* value_count little-endian values of item_size bytes to floats (f8 rounds to nearest). */
void npy_decode(const void *src, size_t item_size, size_t value_count, float *rows);
/* value_count floats to little-endian '<f4' bytes. */
void npy_encode(const float *rows, size_t value_count, void *dst);
/* The writer's version 1.0 preamble for count rows (a multiple of 64 bytes, at most 192);
 * returns its size. */
size_t npy_preamble_write(unsigned char preamble[192], size_t count);

#endif
