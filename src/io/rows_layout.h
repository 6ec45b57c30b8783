/* SPDX-License-Identifier: MIT */
/* The files that hold a state row by row (.npy, VTK .vtp, checkpoints) as pieces at byte
 * offsets that depend on the row count alone: fixed bytes (headers, section sizes, a
 * footer) and sections of a fixed number of bytes per row. The library's writers write a
 * layout front to back (rows_layout_write); the MPI-IO path of src/mpi writes the fixed
 * pieces on one rank and each rank's rows of every section at their offsets, so both give
 * the same bytes by construction. Internal to shoal. */
#ifndef SHOAL_IO_ROWS_LAYOUT_H
#define SHOAL_IO_ROWS_LAYOUT_H

#include "shoal/sim.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* What a section holds for row i of a state (px py pz vx vy vz), little-endian. */
typedef enum rows_kind {
    ROWS_STATE,    /* 24 bytes: the six float32 */
    ROWS_POSITION, /* 12 bytes: px py pz */
    ROWS_VELOCITY, /* 12 bytes: vx vy vz */
    ROWS_SPEED,    /*  4 bytes: float32 sqrtf((vx*vx + vy*vy) + vz*vz) */
    ROWS_INDEX,    /*  8 bytes: int64 i */
    ROWS_INDEX1,   /*  8 bytes: int64 i + 1 */
} rows_kind;

typedef struct rows_piece {
    uint64_t offset;
    size_t size;
    size_t at; /* its bytes: layout->bytes + at */
} rows_piece;

typedef struct rows_section {
    uint64_t offset; /* of row 0 */
    rows_kind kind;
} rows_section;

#define ROWS_MAX_PIECES 8
#define ROWS_MAX_SECTIONS 5

typedef struct rows_layout {
    size_t count;         /* rows */
    uint64_t total_bytes; /* the whole file */
    int piece_count, section_count;
    rows_piece piece[ROWS_MAX_PIECES];
    rows_section section[ROWS_MAX_SECTIONS];
    unsigned char *bytes; /* the fixed pieces' bytes (malloc'ed; rows_layout_free) */
} rows_layout;

/* Bytes per row of a section of this kind. */
size_t rows_kind_size(rows_kind k);

/* The layouts; SHOAL_ERR_NOMEM (naming `name`) when the fixed bytes cannot be allocated,
 * SHOAL_ERR_INPUT for count 0. .npy version 1.0 '<f4' (N, 6). */
shoal_status rows_layout_npy(rows_layout *l, size_t count, const char *name, shoal_error *err);
/* VTK XML PolyData as shoal_io_vtp_write writes it (time NaN: no TimeValue field). */
shoal_status rows_layout_vtp(rows_layout *l, size_t count, double time, const char *name,
                             shoal_error *err);
/* A checkpoint of desc d (model, params, seed, dt, t0; count given here) and ck. */
shoal_status rows_layout_checkpoint(rows_layout *l, const shoal_sim_desc *d,
                                    const shoal_sim_checkpoint *ck, size_t count, const char *name,
                                    shoal_error *err);
void rows_layout_free(rows_layout *l);

/* Rows [first, first + n) of a state (rows: n x 6 floats, the rows themselves) encoded as
 * section kind k into dst (n * rows_kind_size(k) bytes). */
void rows_encode(rows_kind k, const float *rows, size_t first, size_t n, void *dst);

/* The whole file front to back onto f (rows: count x 6 floats): 0, or -1 when a write
 * failed (errno as fwrite left it). */
int rows_layout_write(const rows_layout *l, const float *rows, FILE *f);

#endif
