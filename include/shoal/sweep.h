/* SPDX-License-Identifier: MIT */
/* shoal: parameter sweeps. A sweep is a grid of parameter values (every combination of the
 * varied parameters) times a range of seeds; each (combination, seed) is one member: the
 * model's initial state drawn from that seed, K steps, and the flock statistics
 * (shoal/stats.h) at steps 0, E, 2E, ... and K. This is the member logic of `shoal sweep`
 * (which runs members in child processes and writes DIR/sweep.csv) and of the Python
 * module's shoal.sweep; both format rows with shoal_sweep_format_sample, so they give the
 * same table byte for byte.
 *
 * Determinism: a member's samples depend on the base desc, the scene's obstacles, its values,
 * its seed, K, E and the radius; never on the thread count or on which members run. */
#ifndef SHOAL_SWEEP_H
#define SHOAL_SWEEP_H

#include "shoal/base.h"
#include "shoal/io.h"
#include "shoal/sim.h"
#include "shoal/stats.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Limits: varied parameters, values of one parameter, members. */
#define SHOAL_SWEEP_MAX_VARY 16
#define SHOAL_SWEEP_MAX_VALUES 100000
#define SHOAL_SWEEP_MAX_MEMBERS 10000000LL

/** One sample of one member. */
typedef struct shoal_sweep_sample {
    uint64_t member; /**< member index: combination * seeds + seed - first seed */
    uint64_t seed;
    int64_t step;      /**< steps done, 0..K */
    double time_s;     /**< simulated time of the sample (t0 + step * dt) */
    shoal_stats stats; /**< the flock statistics of the state at that step */
} shoal_sweep_sample;

typedef struct shoal_sweep shoal_sweep;

/** A sweep over `base` (model, parameters, boid count, dt, t0; its seed is replaced by each
 *  member's), whose members carry `scene`'s obstacle meshes (NULL: none; copied). Starts with
 *  no varied parameter, seeds 1..1, K = 600, E = K / 10 and the model's interaction radius
 *  for the statistics. Validates `base`. */
SHOAL_API shoal_status shoal_sweep_create(const shoal_sim_desc *base, const shoal_scene *scene,
                                          shoal_sweep **out, shoal_error *err);
SHOAL_API void shoal_sweep_destroy(shoal_sweep *sw);

/** Vary a parameter: "NAME=a:b:step" (a, a + step, ... up to b, b included when it falls on
 *  the grid to 1e-9 steps) or "NAME=v1,v2,...". Each value is kept as text ("%.9g", what
 *  shoal_params_set is given and what a row shows) and must be one the model takes. The
 *  last parameter varied changes fastest in member order. SHOAL_ERR_INPUT naming the spec. */
SHOAL_API shoal_status shoal_sweep_vary(shoal_sweep *sw, const char *spec, shoal_error *err);
/** Seeds first..last (inclusive; each member's initial state and heading targets), at most
 *  2^63 - 1 (the command line's range, for every front end). */
SHOAL_API shoal_status shoal_sweep_set_seeds(shoal_sweep *sw, uint64_t first, uint64_t last,
                                             shoal_error *err);
/** K steps per member (0..1e9), a sample every E steps (1..1e9; 0: K / 10, at least 1). */
SHOAL_API shoal_status shoal_sweep_set_steps(shoal_sweep *sw, int64_t steps, int64_t every,
                                             shoal_error *err);
/** Radius of the statistics' neighbour count and groups (>= 0, finite). */
SHOAL_API shoal_status shoal_sweep_set_radius(shoal_sweep *sw, double radius, shoal_error *err);

/** Mesh `index` of the scene as the bytes of its OBJ file (copied), instead of reading the
 *  file in every member: a sweep that read its inputs once gives every member the same
 *  meshes even if a file changes meanwhile (`shoal sweep` does). Give every mesh or none. */
SHOAL_API shoal_status shoal_sweep_set_mesh_bytes(shoal_sweep *sw, size_t index, const void *data,
                                                  size_t size, shoal_error *err);

/** Counts: combinations (product of the value counts), members (combinations x seeds),
 *  samples per member (steps 0, E, 2E, ..., K). */
SHOAL_API uint64_t shoal_sweep_combination_count(const shoal_sweep *sw);
SHOAL_API uint64_t shoal_sweep_member_count(const shoal_sweep *sw);
SHOAL_API size_t shoal_sweep_sample_count(const shoal_sweep *sw);
/** The step of sample i of every member: 0, E, 2E, ... and K last. */
SHOAL_API int64_t shoal_sweep_sample_step(const shoal_sweep *sw, size_t i);
SHOAL_API size_t shoal_sweep_vary_count(const shoal_sweep *sw);
/** Name of varied parameter i, and its value in `member` as text; NULL out of range. */
SHOAL_API const char *shoal_sweep_vary_name(const shoal_sweep *sw, size_t i);
SHOAL_API const char *shoal_sweep_member_value(const shoal_sweep *sw, uint64_t member, size_t i);
/** Varied parameter i's values: how many, and value j as text; NULL out of range. */
SHOAL_API size_t shoal_sweep_vary_value_count(const shoal_sweep *sw, size_t i);
SHOAL_API const char *shoal_sweep_vary_value(const shoal_sweep *sw, size_t i, size_t j);
/** The desc of `member`: base + its values + its seed, validated. */
SHOAL_API shoal_status shoal_sweep_member_desc(const shoal_sweep *sw, uint64_t member,
                                               int thread_count, shoal_sim_desc *desc,
                                               shoal_error *err);
/** Check that every combination gives a valid parameter set (before any member runs). */
SHOAL_API shoal_status shoal_sweep_check(const shoal_sweep *sw, shoal_error *err);
/** The steps, time and radius settings as the sweep holds them. */
SHOAL_API int64_t shoal_sweep_steps(const shoal_sweep *sw);
SHOAL_API int64_t shoal_sweep_every(const shoal_sweep *sw);
SHOAL_API double shoal_sweep_radius(const shoal_sweep *sw);
SHOAL_API const shoal_sim_desc *shoal_sweep_base(const shoal_sweep *sw);

/** A cancel flag for members (NULL: none): while *flag is nonzero a running member stops
 *  after the step it is in and returns SHOAL_ERR_CANCELLED (the samples are then incomplete).
 *  With a flag the member steps one step at a time between samples (the same bits). Set it
 *  from a signal handler or another thread; borrowed, it must outlive its use. Call before
 *  members run (not while they do). */
SHOAL_API void shoal_sweep_set_cancel(shoal_sweep *sw, const volatile int *flag);

/** Run one member on `thread_count` threads (0: the process default) and write its
 *  shoal_sweep_sample_count samples to `samples` (`sample_count` must be that). Creates its
 *  own simulation: members may run in parallel threads on one sweep. Errors: the member's
 *  desc, a non-finite step (SHOAL_ERR_NONFINITE), memory. */
SHOAL_API shoal_status shoal_sweep_run_member(const shoal_sweep *sw, uint64_t member,
                                              int thread_count, shoal_sweep_sample *samples,
                                              size_t sample_count, shoal_error *err);

/** The header of the table (no newline): member,seed,NAME...,step,t, then the statistics
 *  polarization,milling,mean_speed,mean_nn_distance,group_count,largest_group_fraction,
 *  extent_x,extent_y,extent_z. Returns the length snprintf would (output cut to `size`). */
SHOAL_API size_t shoal_sweep_format_header(const shoal_sweep *sw, char *buf, size_t size);
/** One row of the table for a sample (no newline): integers in decimal, the varied values
 *  as their text, every other number "%.17g" (exact: parsing it gives the double back). */
SHOAL_API size_t shoal_sweep_format_sample(const shoal_sweep *sw, const shoal_sweep_sample *s,
                                           char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif
