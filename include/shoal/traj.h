/* SPDX-License-Identifier: MIT */
/* shoal: trajectories read back: the states of one school over consecutive steps, as another
 * program (or shoal step --out-dir) wrote them. One reader for every front end (shoal verify,
 * the Python package's shoal.verify), so both take and refuse the same inputs with the same
 * words (docs/VERIFY.md, "Inputs"):
 *   - shoal's trajectory directory: manifest.json (written by step --out-dir) names the
 *     frames, their steps and times, and the run's model, parameters, dt, t0 and seed;
 *   - a directory of numbered states: *.npy of (N, 6) or (N, 7) (an id column), float32 or
 *     float64, or *.bin buffer dumps (a record layout), ordered by the last number in their
 *     names; hidden files (a writer's temporaries) are not states, any other .npy or .bin must
 *     carry a number and no two the same;
 *   - one .npy of shape (T, N, 6) or (T, N, 7);
 *   - states in memory (shoal_traj_wrap).
 * Rows are matched by id when the states carry ids (a 7th column, an id word of the layout, or
 * shoal_traj_set_ids): every state is read in ascending id order, and every state must hold
 * the ids of the first one read. Not thread-safe on one object; two objects share nothing. */
#ifndef SHOAL_TRAJ_H
#define SHOAL_TRAJ_H

#include "shoal/io.h"
#include "shoal/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct shoal_traj shoal_traj;

/** Open the trajectory at `path` (a directory or a (T, N, 6|7) .npy file). `layout` is the
 *  record layout of .bin dumps: "vp" (seeds 000/003 BoidData: float3 velocity, float3
 *  position; the default, NULL), "pv" (seed 004: position, velocity) or "S:P:V[:I]" (S 4-byte
 *  words a record, 6..1024, the position at word P, the velocity at V, a uint32 id at I); a
 *  layout given for a trajectory without .bin files is refused. Lists the frames and reads a
 *  manifest (every field checked: a field of the wrong type or out of range is refused, not
 *  skipped); the states are read by shoal_traj_read. SHOAL_ERR_IO when the path cannot be
 *  opened, SHOAL_ERR_INPUT for everything that is not a trajectory (fewer than 2 states, two
 *  files with one number, a file without one, .npy and .bin together, a bad manifest, a bad
 *  layout), naming the file. *out is NULL on failure. */
SHOAL_API shoal_status shoal_traj_open(const char *path, const char *layout, shoal_traj **out,
                                       shoal_error *err);
/** A trajectory held in memory: `frame_count` (>= 2) states of `boid_count` (>= 1) rows of
 *  `columns` doubles (6: px py pz vx vy vz; 7: and an id), row-major, state after state.
 *  Borrowed: `states` must stay valid and unchanged until shoal_traj_close. */
SHOAL_API shoal_status shoal_traj_wrap(const double *states, size_t frame_count, size_t boid_count,
                                       size_t columns, shoal_traj **out, shoal_error *err);
/** Give each row an id: `id_rows` rows of `count` ids, 1 (the same for every state) or the
 *  trajectory's frame count (one row per state); integral values, unique within a state
 *  (checked as each state is read). Copied. `what` names them in messages ("ids", or the
 *  file they came from). A trajectory whose states carry ids already refuses them when read. */
SHOAL_API shoal_status shoal_traj_set_ids(shoal_traj *t, const double *ids, size_t id_rows,
                                          size_t count, const char *what, shoal_error *err);
/** NULL is fine. */
SHOAL_API void shoal_traj_close(shoal_traj *t);

/** The number of states. */
SHOAL_API size_t shoal_traj_frame_count(const shoal_traj *t);
/** The step of state k: the manifest's, the number in a numbered file's name, else k. */
SHOAL_API int64_t shoal_traj_step(const shoal_traj *t, size_t k);
/** 1 when the steps are the manifest's (shoal's own trajectory directory), else 0. */
SHOAL_API int shoal_traj_has_manifest(const shoal_traj *t);
/** The simulated time of state k (the manifest's), NAN when the trajectory does not say. */
SHOAL_API double shoal_traj_time(const shoal_traj *t, size_t k);
/** The name of state k for messages (its file, or "state k"), into buf; returns buf. */
SHOAL_API const char *shoal_traj_frame_name(const shoal_traj *t, size_t k, char *buf, size_t size);
/** The path given to shoal_traj_open ("states" for a wrapped one). Owned by t. */
SHOAL_API const char *shoal_traj_path(const shoal_traj *t);

/** Read state k: `*rows` a malloc'ed array of `*count` rows of 6 doubles (the caller frees
 *  it), in ascending id order when the states carry ids, else in the file's row order.
 *  Refused with SHOAL_ERR_INPUT naming the state: not float32 or float64 (a .npy), another
 *  shape, another row count than the first state read, an id that is not an integer or
 *  repeats, other ids than the first state read, ids on some states only, a manifest's count
 *  that differs; a state that is not a regular file (a FIFO, a directory) too. SHOAL_ERR_IO
 *  when it cannot be read (a dangling link: its name). Values are not checked for finiteness
 *  here (shoal_verify_step does). The first state read fixes the ids and the row count. */
SHOAL_API shoal_status shoal_traj_read(shoal_traj *t, size_t k, double **rows, size_t *count,
                                       shoal_error *err);
/** The ids of the first state read, ascending (row r of every state read is the boid of id
 *  ids[r]), or NULL when the states carry none (rows are matched by row). Owned by t. */
SHOAL_API const double *shoal_traj_ids(const shoal_traj *t);

/** The desc a trajectory is verified with, before a front end's own settings: the defaults
 *  of `model` (steer when !model_given), then the manifest (its model, parameters, dt, seed
 *  and t0, the time of its first frame), then `scene` when not NULL (its whole desc: the
 *  manifest's parameters do not apply then, its model must agree). A model given (or the
 *  scene's) that contradicts the manifest's is SHOAL_ERR_INPUT. The caller sets what it was
 *  asked for after this (parameters, dt, t0: the time of the trajectory's first state, seed)
 *  and validates. boid_count is left to shoal_verify_run. */
SHOAL_API shoal_status shoal_traj_verify_desc(const shoal_traj *t, const shoal_scene *scene,
                                              int model_given, shoal_model model,
                                              shoal_sim_desc *out, shoal_error *err);

#ifdef __cplusplus
}
#endif

#endif
