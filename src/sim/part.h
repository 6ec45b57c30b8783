/* SPDX-License-Identifier: MIT */
/* A part of a school: the boids one MPI rank owns (a brick of whole grid cells) plus a halo
 * of the boids in the cells around it, stepped with the whole school's grid so that every
 * owned boid sums its neighbours in the one-process order (cell, then input row) and gets
 * the one-process bits. This is the simulation side of src/mpi and knows nothing of MPI:
 * the caller brings the boids (with their input rows), says which cells are its own, and
 * takes the owned boids' new state back. Not thread safe; OpenMP inside, as a sim. */
#ifndef SHOAL_SIM_PART_H
#define SHOAL_SIM_PART_H

#include "shoal/sim.h"

#include <stdint.h>

/* One boid on the wire and in a part: the state row and its input row id (28 bytes). */
typedef struct part_boid {
    float s[6];
    uint32_t row;
} part_boid;

/* A sim for a part of the school described by d (d->boid_count: the WHOLE school's N, which
 * sizes the grid exactly as one process of N boids does). It holds no boids until
 * part_load. Destroy with shoal_sim_destroy. */
shoal_status part_create(const shoal_sim_desc *d, shoal_sim **out, shoal_error *err);

/* The whole school's grid: cell counts per axis. */
void part_grid_dims(const shoal_sim *s, int32_t dims[3]);

/* The threads a part's own loops use (its desc's thread count, resolved). */
int part_thread_count(const shoal_sim *s);

/* The whole grid's cell of position p (clamped to the edge cells, as one process does). */
void part_cell_of(const shoal_sim *s, const float p[3], int32_t cell[3]);

/* Own the cells [lo, hi) of the whole grid (per axis, 0 <= lo < hi <= dims): the sub-box
 * becomes those cells plus one layer around them (clipped to the grid), the halo. */
shoal_status part_set_box(shoal_sim *s, const int32_t lo[3], const int32_t hi[3], shoal_error *err);

/* The boids of the step to come: the n owned ones and the halo_n of the halo, each in any
 * order and in the sub-box (the sort puts every cell in input-row order). */
shoal_status part_load(shoal_sim *s, const part_boid *b, size_t n, const part_boid *halo,
                       size_t halo_n, shoal_error *err);

/* Sort and forces (no predator move): returns the lowest input row among the owned boids
 * whose new state is not finite, or UINT32_MAX. */
uint32_t part_step(shoal_sim *s);

/* The owned boids' new state (in cell order) into out (room for the loaded count);
 * returns how many, or SIZE_MAX when out of memory. */
size_t part_extract(const shoal_sim *s, part_boid *out);

/* The owned boids' new state (as part_extract) of the active cells outside the box
 * [skip_lo, skip_hi) of whole-grid cells (an empty box skips nothing) into out; *bad: the
 * lowest input row among them whose new state is not finite, or UINT32_MAX. Returns how
 * many, or SIZE_MAX when out of memory. For a step in two parts: the interior cells from
 * one part_step, the boundary cells (these) from another. */
size_t part_extract_outside(const shoal_sim *s, const int32_t skip_lo[3], const int32_t skip_hi[3],
                            part_boid *out, uint32_t *bad);

/* poll(ctx) is called by the step's thread 0 (the main thread, so it may call MPI under
 * MPI_THREAD_FUNNELED) between chunks of the forces of part_step; NULL: none. It must not
 * touch the sim. */
void part_set_poll(shoal_sim *s, void (*poll)(void *ctx), void *ctx);

/* After a step: move the predators toward tgt (one target per predator, found by the
 * caller over the whole school) and count the step. */
void part_finish_step(shoal_sim *s, const float tgt[][3]);

/* The predators' targets when this part holds the whole school (one rank): exactly
 * predators_step's, read from the sorted start-of-step state of the last part_step. */
void part_predator_targets(const shoal_sim *s, float tgt[][3]);

/* Rows [first, first + count) of the initial state `shoal init` draws for d (row i is a
 * function of (d->seed, i) alone). */
void part_init_rows(const shoal_sim_desc *d, size_t first, size_t count, float *rows);

#endif
