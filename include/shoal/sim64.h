/* SPDX-License-Identifier: MIT */
/* shoal: the float64 reference. A shoal_sim64 steps a school with the rules of shoal_sim
 * (every model, obstacle spheres, the obstacle field, predators, heading's targets), every
 * operation in double: the same rule source (src/sim/rules.h) compiled for double, so the
 * two cannot drift apart. Its use is measuring float32's own rounding (`shoal step --precision
 * f64`, `shoal verify --reference f64`, docs/VERIFY.md); it is a plain loop over boids on a
 * grid, not tuned for speed.
 *
 * Determinism: the state after K steps depends only on the input state (by row), the desc
 * (model, params, dt, t0, seed, neighbors), the obstacles, the checkpoint; not on the thread
 * count. It is not bit-identical to shoal_sim (float32); the two agree to float32 rounding
 * per step. */
#ifndef SHOAL_SIM64_H
#define SHOAL_SIM64_H

#include "shoal/sim.h"

typedef struct shoal_sim64 shoal_sim64;

/** Create from the same desc as shoal_sim_create (validated the same way; `isa` is ignored:
 *  the reference is scalar). Boids zeroed; load them with shoal_sim64_set_state. */
SHOAL_API shoal_status shoal_sim64_create(const shoal_sim_desc *desc, shoal_sim64 **sim_out,
                                          shoal_error *err);
SHOAL_API void shoal_sim64_destroy(shoal_sim64 *sim);

/** Load N rows of (px py pz vx vy vz) in double; resets the predators to their start. A NaN
 *  or infinity: SHOAL_ERR_INPUT naming row and column. */
SHOAL_API shoal_status shoal_sim64_set_state(shoal_sim64 *sim, const double *rows,
                                             shoal_error *err);
/** The same from float32 rows (exact: every float is a double). */
SHOAL_API shoal_status shoal_sim64_set_state_f32(shoal_sim64 *sim, const float *rows,
                                                 shoal_error *err);
/** Copy the state out as N rows in input row order. */
SHOAL_API void shoal_sim64_get_state(const shoal_sim64 *sim, double *rows);

/** Advance `step_count` synchronous steps. On a NaN or infinity the step stops, the state is
 *  the one before it, and SHOAL_ERR_NONFINITE names the boid (input row) and the step. */
SHOAL_API shoal_status shoal_sim64_step(shoal_sim64 *sim, int step_count, shoal_error *err);

SHOAL_API size_t shoal_sim64_count(const shoal_sim64 *sim);
/** Simulated time of the next step (t0 + steps done * dt). */
SHOAL_API double shoal_sim64_time(const shoal_sim64 *sim);

/** An obstacle mesh, as shoal_sim_add_obstacle (the field is built in double). */
SHOAL_API shoal_status shoal_sim64_add_obstacle(shoal_sim64 *sim, const float *positions,
                                                const float *normals, size_t vertex_count,
                                                const shoal_transform *xf, shoal_error *err);
/** Copy the obstacle meshes of a float32 simulation (a scene's, already loaded). */
SHOAL_API shoal_status shoal_sim64_copy_obstacles(shoal_sim64 *sim, const shoal_sim *from,
                                                  shoal_error *err);

/** Steps done, predators and pinned targets from a checkpoint (as shoal_sim_set_checkpoint;
 *  the float values become doubles). */
SHOAL_API shoal_status shoal_sim64_set_checkpoint(shoal_sim64 *sim, const shoal_sim_checkpoint *ck,
                                                  shoal_error *err);
/** Predators now (positions and velocities, xyz each, either may be NULL); returns the count. */
SHOAL_API size_t shoal_sim64_predators(const shoal_sim64 *sim, double *pos, double *vel,
                                       size_t max);
/** Set the predators' positions and velocities (count must be params.predator_count). */
SHOAL_API shoal_status shoal_sim64_set_predators(shoal_sim64 *sim, const double *pos,
                                                 const double *vel, size_t count, shoal_error *err);

#endif
