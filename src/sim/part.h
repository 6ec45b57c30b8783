/* SPDX-License-Identifier: MIT */
/* A part of a school: the boids one MPI rank owns (a brick of whole grid cells) plus a halo
 * of the boids in the cells around it, stepped with the whole school's grid so that every
 * owned boid sums its neighbours in the one-process order (cell, then input row) and gets
 * the one-process bits. This is the simulation side of src/mpi and knows nothing of MPI:
 * the caller brings boids (with their input rows), says which cells are its own, and is
 * told which boids leave the brick or lie on its faces. Not thread safe; OpenMP inside, as
 * a sim.
 *
 * The boids stay in the sim between steps (structure of arrays, in the last sort's cell
 * order): a step is part_classify (the boids that others need, and the sort keys of the
 * next step: a boid that left the part or a halo boid of the last step is dropped by the
 * sort), part_append (the boids that arrived: new owned ones and the halo, in any order),
 * part_step (one sort of all of them, then the forces of the owned cells), part_commit. */
#ifndef SHOAL_SIM_PART_H
#define SHOAL_SIM_PART_H

#include "shoal/sim.h"

#include <stdint.h>

/* One boid on the wire: the state row and its input row id (28 bytes). */
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
 * becomes those cells plus one layer around them (clipped to the grid), the halo. Drops
 * every boid: part_load next. */
shoal_status part_set_box(shoal_sim *s, const int32_t lo[3], const int32_t hi[3], shoal_error *err);

/* The n owned boids b (any order; every one in the owned cells), sorted: the current state,
 * without a halo. */
shoal_status part_load(shoal_sim *s, const part_boid *b, size_t n, shoal_error *err);

/* Called for each owned boid of the walked state that another part may need: its whole-grid
 * cell (of its position in that state) lies outside the owned box or on one of the box's
 * faces that is not the grid's edge. By worker threads (`thread` < part_thread_count) at
 * once; it may write only what belongs to `thread`. `slot` indexes that state (part_gather). */
typedef void (*part_edge_fn)(void *ctx, int thread, uint32_t slot, const int32_t cell[3]);

/* One threaded pass over the current state (next = 0) or over the new state of the last
 * part_step (next = 1; then part_commit before part_append): the sort key of every slot
 * for the next part_step (an owned boid's cell when it is still in the sub-box, owned or
 * halo; otherwise, and for the halo of the last step, dropped), and `edge` for every boid
 * that others may need. The caller decides where those go (they stay here too when their
 * cell is in the sub-box). */
void part_classify(shoal_sim *s, int next, part_edge_fn edge, void *ctx);

/* The boids at slots[0..n) of the state part_classify walked (after part_commit when it
 * walked the new state) into out. May be called by worker threads at once. */
void part_gather(const shoal_sim *s, const uint32_t *slots, size_t n, part_boid *out);

/* Add the n boids that arrived (owned ones and halo, any order) to the state for the next
 * part_step, after part_classify (and part_commit). A boid outside the sub-box is
 * SHOAL_ERR_INPUT (the sender's decomposition is not this one's); out of memory
 * SHOAL_ERR_NOMEM. n may be 0. */
shoal_status part_append(shoal_sim *s, const part_boid *b, size_t n, shoal_error *err);

/* Sort (the classified and appended boids, or those just loaded) and the forces of the
 * owned cells (no predator move, nothing replaced yet): returns the lowest input row among
 * the owned boids whose new state is not finite, or UINT32_MAX. After it the current state
 * is the sorted start of the step (its owned boids: the predators' targets). */
uint32_t part_step(shoal_sim *s);

/* The new state of the last part_step becomes the current one (the owned boids' slots are
 * unchanged). */
void part_commit(shoal_sim *s);

/* The owned boids of the current state: how many; their slots, as one range [*begin, *end)
 * per row of owned cells (r < part_owned_rows; in cell order, possibly empty), whose state
 * and rows are shoal_sim_view's columns; and the boids themselves (state and row; out has
 * room for part_owned_count). */
size_t part_owned_count(const shoal_sim *s);
size_t part_owned_rows(const shoal_sim *s);
void part_owned_range(const shoal_sim *s, size_t r, uint32_t *begin, uint32_t *end);
void part_owned(const shoal_sim *s, part_boid *out);
/* The same as six columns (px py pz vx vy vz, room for part_owned_count each) and rows. */
void part_owned_soa(const shoal_sim *s, float *const soa[6], uint32_t *row);

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
