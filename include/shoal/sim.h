/* SPDX-License-Identifier: MIT */
/* shoal: the simulation. A shoal_sim owns N boids (float32 structure of arrays), a
 * uniform grid rebuilt every step by a stable parallel counting sort, and the rule
 * model of docs/MODELS.md it steps with. It knows nothing of rendering or files.
 *
 * Determinism: the state after K steps depends only on the input state (by row), the
 * model parameters, dt, t0 and the seed; never on the thread count, the SIMD ISA, or
 * how the K steps are split over calls. */
#ifndef SHOAL_SIM_H
#define SHOAL_SIM_H

#include "shoal/base.h"
#include "shoal/profile.h"
#include "shoal/world.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The rule models (docs/MODELS.md). */
typedef enum shoal_model {
    SHOAL_MODEL_STEER = 0, /**< seed 003, UnityGraphicsProgramming Boids.compute (default) */
    SHOAL_MODEL_AVERAGE,   /**< seed 000, a Unity fish-school blog post */
    SHOAL_MODEL_HEADING,   /**< seed 001, compute-shader grid + counting-sort article */
    SHOAL_MODEL_CLASSIC,   /**< seed 002, Unity CPU Boids article, virtual wall boids */
    SHOAL_MODEL_FOV,       /**< seed 004, vector-field avoidance post: view cones, sphere */
    SHOAL_MODEL_COUNT
} shoal_model;

/** Neighbour search method: the grid, or all pairs in row order (the O(N^2) reference). */
typedef enum shoal_neighbors {
    SHOAL_NEIGHBORS_GRID = 0,
    SHOAL_NEIGHBORS_BRUTE = 1,
} shoal_neighbors;

/** Maximum number of heading targets, obstacle spheres, predators and obstacle meshes. */
#define SHOAL_MAX_TARGETS 256
#define SHOAL_MAX_SPHERES 64
#define SHOAL_MAX_PREDATORS 64
#define SHOAL_MAX_OBSTACLES 16
/** Largest obstacle field, in cells (12 bytes each). */
#define SHOAL_FIELD_MAX_CELLS (4 * 1024 * 1024)

/** An analytic obstacle: a sphere boids steer away from (see avoid_* parameters). */
typedef struct shoal_sphere {
    float center[3];
    float radius;
} shoal_sphere;

/** Every model parameter, flat. Each model reads its own subset (listed, with ranges and
 *  defaults, by shoal_param_info); the rest are ignored. Lengths in world units, times in
 *  seconds, speeds in units per second (fov: units per step, as in its seed), angles in
 *  radians. Fill with shoal_params_default, then change by name or field. */
typedef struct shoal_params {
    /* steer, average */
    float sep_radius, ali_radius, coh_radius;
    float sep_weight, ali_weight, coh_weight;
    float max_speed, max_steer;
    float wall_weight;
    float wall_center[3], wall_size[3];
    /* heading (also uses sep/ali/coh_weight) */
    float neighbor_radius, target_weight, rotate_speed, move_speed, target_period;
    float bounds_center[3], bounds_size[3];
    float target_count; /* integer valued, 1..SHOAL_MAX_TARGETS */
    /* classic (also uses max_speed) */
    float fov, min_speed, w1, w2, w3, sep_strength;
    float box_min[3], box_max[3];
    /* fov (also uses min_speed, max_speed) */
    float coh_dist2, sep_dist2, ali_dist2;
    float coh_angle, sep_angle, ali_angle;
    float coh_force, sep_force, ali_force, max_force;
    float boundary_force, boundary_range2, boundary_center[3];
    /* obstacles (every model): spheres, and the field of the obstacle meshes (seed 004) */
    float avoid_force;
    float sphere_count; /* integer valued */
    shoal_sphere spheres[SHOAL_MAX_SPHERES];
    float field_cell, field_margin;
    /* predators (every model; MODELS.md "Predators") */
    float predator_count; /* integer valued, 0..SHOAL_MAX_PREDATORS */
    float predator_speed, predator_turn, predator_chase; /* chase: 0 nearest boid, 1 centre */
    float flee_radius, flee_weight;
    float predator_start[3], predator_spread;
    /* initial state */
    float init_pos_radius, init_vel_radius;
    /** Not a parameter: the model whose defaults these values started from, plus 1, set by
     *  shoal_params_default (0: unknown, as in a zeroed struct, and then not checked).
     *  shoal_params_validate, and so shoal_sim_create and shoal_sim_set_params, refuse
     *  parameters of another model: changing desc.model alone would run the new model on the
     *  old one's values. Everything before this field is float parameters (checkpoints
     *  store those). */
    int32_t defaults_of;
} shoal_params;

/** One named parameter of a model: where it lives in shoal_params, its valid range
 *  (inclusive), its default for that model, its unit and what it means (docs/MODELS.md
 *  and `shoal params` list the same table). Static storage; do not free. */
typedef struct shoal_param_info {
    const char *name;
    const char *help; /* what it means, one line */
    size_t offset;    /* byte offset of the float in shoal_params */
    float min, max;
    float default_value;
    int is_integer;
    /** "units" (world length), "units/s", "units/step", "units^2", "rad", "s", "1/s",
     *  "count", or "-" for a pure number (a weight, a factor, a switch) */
    const char *unit;
} shoal_param_info;

/** A rule model as a program lists or edits it (`shoal params`, the window's keys).
 *  Static storage; do not free. */
typedef struct shoal_model_info {
    shoal_model model;
    const char *name;               /**< "steer": --model, scene files, assets/scenes/NAME.ini */
    const char *origin;             /**< the program it reproduces, one line (docs/MODELS.md) */
    size_t default_count;           /**< boids of its default scene */
    const shoal_param_info *params; /**< its parameters, as shoal_params_list */
    size_t param_count;
    const char *const *live_params; /**< the names the window's keys edit, in key order */
    size_t live_count;
    /** 1 when its velocities are in units per step (fov: p += v, as its seed), else units
     *  per second */
    int speed_per_step;
} shoal_model_info;

/** The model's name ("steer", ...), or NULL for an invalid value. */
SHOAL_API const char *shoal_model_name(shoal_model model);
/** Parse a model name. SHOAL_ERR_INPUT listing the valid names when unknown. */
SHOAL_API shoal_status shoal_model_parse(const char *name, shoal_model *model, shoal_error *err);
/** Default boid count of the model (MODELS.md). */
SHOAL_API size_t shoal_model_default_count(shoal_model model);
/** What the model is (name, origin, parameters, the window's keys), or NULL for a value
 *  outside the enum. Every model 0 .. SHOAL_MODEL_COUNT - 1 has one. */
SHOAL_API const shoal_model_info *shoal_model_get_info(shoal_model model);

/** Fill `params` with the model's defaults (all fields, including those it ignores). */
SHOAL_API void shoal_params_default(shoal_model model, shoal_params *params);
/** The model's parameters; `*count_out` receives how many. */
SHOAL_API const shoal_param_info *shoal_params_list(shoal_model model, size_t *count_out);
/** Set a parameter by name from text (the command line's --set, scene files). Vector
 *  parameters take "x,y,z" by their base name, or a number by per-component names
 *  ("wall_center_x"). A value is a finite number that fits a float (trailing blanks allowed),
 *  within the table's range, whole for integer parameters; unknown names list the model's
 *  parameters. Every refusal is SHOAL_ERR_INPUT naming the parameter, the model and the value,
 *  and leaves `params` unchanged (a vector is set whole or not at all). Thread-safe (touches
 *  only *params). */
SHOAL_API shoal_status shoal_params_set(shoal_model model, shoal_params *params, const char *name,
                                        const char *value, shoal_error *err);
/** Find the parameter `name` of the model (every front end's lookup: the program, the window,
 *  the Python package): a scalar or a vector's component ("wall_size_x": *component_count 1),
 *  or a vector by its base name ("wall_size": the entry of its x component, whose y and z
 *  follow it in the table; *component_count 3). NULL when the model has no such parameter:
 *  then SHOAL_ERR_INPUT in err, listing the model's parameters (shoal_params_set's words).
 *  component_count and err may be NULL. The entry is static. */
SHOAL_API const shoal_param_info *shoal_params_find(shoal_model model, const char *name,
                                                    size_t *component_count, shoal_error *err);
/** The value of the parameter `name` (shoal_params_find's names) into `values` (room for
 *  `max`): one value, or x, y, z of a vector by its base name; *count (may be NULL) says how
 *  many. SHOAL_ERR_INPUT for an unknown name or too little room. */
SHOAL_API shoal_status shoal_params_get(shoal_model model, const shoal_params *params,
                                        const char *name, double *values, size_t max, size_t *count,
                                        shoal_error *err);
/** Set the parameter `name` by value: `count` values, 1 (a scalar or a component) or 3 (a
 *  vector by its base name). Each is checked as shoal_params_set checks text (finite and
 *  within float range, in the table's range, whole for integer parameters) and refused with
 *  the same words, the value shown as its shortest text. All or nothing; thread-safe (touches
 *  only *params). */
SHOAL_API shoal_status shoal_params_set_value(shoal_model model, shoal_params *params,
                                              const char *name, const double *values, size_t count,
                                              shoal_error *err);
/** Write the model's parameters as one JSON object: each of shoal_params_list by name with
 *  its value (%.9g: the float exactly), then "spheres": [[x, y, z, radius], ...]. The form of
 *  trajectory manifests and shoal verify --json (read back by shoal_traj_open). Returns 0, or
 *  -1 when a write failed. */
SHOAL_API int shoal_params_write_json(FILE *f, shoal_model model, const shoal_params *params);
/** Check every parameter of the model against its range and the cross-field rules
 *  (box_min < box_max, ...). */
SHOAL_API shoal_status shoal_params_validate(shoal_model model, const shoal_params *params,
                                             shoal_error *err);
/** Scale the model's geometry by `factor` about the origin: its walls (steer, average:
 *  wall_center and wall_size; heading: bounds_center and bounds_size; classic: box_min and
 *  box_max; fov: boundary_center, and boundary_range2 by factor^2) and its start region
 *  (init_pos_radius; classic starts in its box). Interaction radii, speeds, forces,
 *  obstacles and predators are left alone. A scaled value is clamped to its parameter's
 *  range. factor 1 (or not finite and > 0) changes nothing. Used by shoal_scene_set_count
 *  to keep a scene's density for another boid count. */
SHOAL_API void shoal_params_scale_geometry(shoal_model model, shoal_params *params, double factor);
/** The largest interaction radius of the model: the grid's cell size. */
SHOAL_API float shoal_params_interaction_radius(shoal_model model, const shoal_params *params);

/** Everything needed to create a simulation. Start from shoal_sim_desc_for(model) (or
 *  shoal_sim_desc_default(), the steer model's). */
typedef struct shoal_sim_desc {
    shoal_model model;
    shoal_params params;
    size_t boid_count; /**< N >= 1 */
    double dt_s;       /**< step length, > 0 (default 1/60) */
    double t0_s;       /**< simulated time at the first step (default 0) */
    /** The simulation's one seed: it draws the initial state (shoal_sim_draw_state) and
     *  heading's targets; nothing else in a step is random. Default 1. */
    uint64_t seed;
    int thread_count; /**< 0: OpenMP's default; results do not depend on it */
    shoal_neighbors neighbors;
    shoal_isa isa;
    /** The world the model runs in (shoal/world.h): today's 3D world by default (and when
     *  zeroed). Its own struct, not parameters in shoal_params: it is the same for every
     *  model, it is not a float (dims, flags), and checkpoints store shoal_params as they
     *  are. Set by name with shoal_sim_desc_set. */
    shoal_world world;
} shoal_sim_desc;

/** Set a parameter of the desc by name, as `--set NAME=VALUE` and scene files do: a world
 *  parameter (shoal_world_has_param: dims, periodic, world_size, ...) goes to desc->world
 *  (shoal_world_set), any other name to the model's (shoal_params_set with desc->model).
 *  SHOAL_ERR_INPUT naming the parameter; on failure the desc is unchanged. */
SHOAL_API shoal_status shoal_sim_desc_set(shoal_sim_desc *desc, const char *name, const char *value,
                                          shoal_error *err);
/** The world's parameters (dims, periodic_x/_y/_z, world_size_x/_y/_z, world_center_x/_y/_z)
 *  as a table like a model's (`shoal params` lists both): `offset` is the byte offset in
 *  shoal_world, of an int32_t when is_integer, else of a float. Static storage. */
SHOAL_API const shoal_param_info *shoal_world_params_list(size_t *count_out);
/** The value of one entry of shoal_world_params_list in `world` (dims 0 reads 3). */
SHOAL_API double shoal_world_param_value(const shoal_world *world, const shoal_param_info *info);

/** Defaults: steer, its parameters, 16384 boids, dt 1/60, t0 0, seed 1, grid, auto ISA. */
SHOAL_API shoal_sim_desc shoal_sim_desc_default(void);
/** The defaults for `model`: shoal_sim_desc_default() with that model, its parameters
 *  (shoal_params_default) and its default boid count, started as the default school of
 *  `shoal init --model M`, `shoal run --model M` and Python's Simulation(model=M): steer and
 *  average spread their boids over 3/8 of the smallest wall (init_pos_radius 12 in the
 *  32^3 box) instead of the seeds' ball of radius 1 (shoal_params_default keeps the seeds'
 *  value; docs/MODELS.md). The way to pick a model: setting
 *  desc.model alone leaves the other model's parameters, which shoal_sim_create refuses. An
 *  invalid model gives steer's desc with `model` set (shoal_sim_create refuses it). */
SHOAL_API shoal_sim_desc shoal_sim_desc_for(shoal_model model);

typedef struct shoal_sim shoal_sim;

/** Create a simulation. It has no state yet: give it one with shoal_sim_set_rows or
 *  shoal_sim_draw_state before the first step (a step before that is SHOAL_ERR_INPUT).
 *  Validates the desc (parameters of another model than desc.model included). Allocates
 *  everything it will ever use. */
SHOAL_API shoal_status shoal_sim_create(const shoal_sim_desc *desc, shoal_sim **sim_out,
                                        shoal_error *err);
SHOAL_API void shoal_sim_destroy(shoal_sim *sim);

/** Load the state: `row_count` rows of SHOAL_STATE_COLUMNS floats (px py pz vx vy vz),
 *  row-major. Row i stays boid i in shoal_sim_get_rows whatever the engine reorders.
 *  row_count must equal shoal_sim_count (else SHOAL_ERR_INPUT naming both, nothing read)
 *  and every value be finite (SHOAL_ERR_INPUT naming row and column); the predators restart.
 *  On failure the sim is unchanged. */
SHOAL_API shoal_status shoal_sim_set_rows(shoal_sim *sim, const float *rows, size_t row_count,
                                          shoal_error *err);
/** Copy the state out as `row_count` rows in input row order (row_count must equal
 *  shoal_sim_count, else SHOAL_ERR_INPUT and nothing is written; before any state,
 *  SHOAL_ERR_INPUT too). */
SHOAL_API shoal_status shoal_sim_get_rows(const shoal_sim *sim, float *rows, size_t row_count,
                                          shoal_error *err);
/** Draw the model's initial state from desc.seed (boid i from (seed, i) alone: the same bits
 *  on every machine and thread count; MODELS.md gives each model's start) and restart the
 *  predators. Cannot fail today; returns a status so that it may. */
SHOAL_API shoal_status shoal_sim_draw_state(shoal_sim *sim, shoal_error *err);
/** 1 once the sim has a state (set_rows, draw_state, or the 0.1 calls below), else 0. */
SHOAL_API int shoal_sim_has_state(const shoal_sim *sim);

/** 0.1 state calls, kept for programs written against them (they still link and work).
 *  shoal_sim_set_state and shoal_sim_get_state read or write shoal_sim_count rows with no
 *  length to check the buffer against: use shoal_sim_set_rows / shoal_sim_get_rows.
 *  shoal_sim_init_state draws from `seed`, not desc.seed (which still decides heading's
 *  targets): use shoal_sim_draw_state, which has one seed for both. It returns a status
 *  since 0.2 (always SHOAL_OK). */
SHOAL_DEPRECATED_0_1("shoal_sim_set_rows")
SHOAL_API shoal_status shoal_sim_set_state(shoal_sim *sim, const float *rows, shoal_error *err);
SHOAL_DEPRECATED_0_1("shoal_sim_draw_state")
SHOAL_API shoal_status shoal_sim_init_state(shoal_sim *sim, uint64_t seed);
SHOAL_DEPRECATED_0_1("shoal_sim_get_rows")
SHOAL_API void shoal_sim_get_state(const shoal_sim *sim, float *rows);

/** Advance `step_count` (>= 0) synchronous steps of dt. A sim without a state
 *  (shoal_sim_has_state) or a negative count: SHOAL_ERR_INPUT. On a NaN or infinity the step stops,
 *  the state is the one before the failing step, and SHOAL_ERR_NONFINITE names the boid
 *  (input row) and step. Not thread-safe on one sim; runs its own OpenMP team. */
SHOAL_API shoal_status shoal_sim_step(shoal_sim *sim, int step_count, shoal_error *err);

/** Simulated time of the next step (t0 + steps done * dt). */
SHOAL_API double shoal_sim_time(const shoal_sim *sim);
SHOAL_API size_t shoal_sim_count(const shoal_sim *sim);
SHOAL_API const shoal_sim_desc *shoal_sim_get_desc(const shoal_sim *sim);
/** Change parameters of the running model (validated); takes effect at the next step. */
SHOAL_API shoal_status shoal_sim_set_params(shoal_sim *sim, const shoal_params *params,
                                            shoal_error *err);
/** The ISA the force kernel uses ("scalar", "avx2", "avx512"). */
SHOAL_API const char *shoal_sim_isa_name(const shoal_sim *sim);

/** Read-only view of the boids in the engine's current (cell-sorted) order, for the
 *  renderer: six arrays of `count` floats plus `row_of`, the input row of each entry.
 *  Valid until the next step or destroy. */
typedef struct shoal_boid_view {
    size_t count;
    const float *px, *py, *pz, *vx, *vy, *vz;
    const uint32_t *row_of;
} shoal_boid_view;
SHOAL_API shoal_boid_view shoal_sim_view(const shoal_sim *sim);

/** The grid's geometry (for drawing it, and for tools that must reproduce the candidate
 *  order): cell (x, y, z) spans origin + [x, x+1) * cell_size on each axis; boids outside
 *  clamp to the border cells. With --neighbors brute: dims 1 1 1 and cell_size infinity. */
SHOAL_API void shoal_sim_grid_info(const shoal_sim *sim, float origin[3], float *cell_size,
                                   int32_t dims[3]);

/** Heading targets in force at simulated time t (seed and t alone decide them). Writes
 *  up to `max` points (xyz) and returns how many. 0 for other models. */
SHOAL_API size_t shoal_sim_targets(const shoal_sim *sim, double t_s, float *xyz, size_t max);

/** Pin heading target `index` (< target_count) to `xyz` from the next step on, until
 *  shoal_sim_clear_targets: the user's placed or dragged target. The other targets keep
 *  their seeded schedule. Deterministic: pins are state, like the boids. */
SHOAL_API shoal_status shoal_sim_set_target(shoal_sim *sim, size_t index, const float xyz[3],
                                            shoal_error *err);
SHOAL_API void shoal_sim_clear_targets(shoal_sim *sim);

/* ---- obstacle meshes and their vector field (seed 004; MODELS.md "Obstacle field") ---- */

/** Where an obstacle mesh sits. Applied as seed 004 does: rotate (Euler angles in degrees,
 *  Unity's order: z, then x, then y), then scale per world axis, then translate. Normals are
 *  rotated only. */
typedef struct shoal_transform {
    float position[3];
    float rotation_deg[3];
    float scale[3];
} shoal_transform;

/** position 0, rotation 0, scale 1. */
SHOAL_API shoal_transform shoal_transform_identity(void);
/** A model-space point (or, with `is_normal`, a normal) in world space, as the field build
 *  computes it (so a drawing of the obstacle matches the field). */
SHOAL_API void shoal_transform_apply(const shoal_transform *xf, const float in[3], int is_normal,
                                     float out[3]);

/** Add an obstacle mesh: `vertex_count` vertices (positions and unit normals, xyz each, model
 *  space; copied). Rebuilds the field. Every model adds `field(p) * avoid_force` to each boid.
 *  SHOAL_ERR_INPUT for non-finite values, no vertices, more than SHOAL_MAX_OBSTACLES meshes
 *  or a field over SHOAL_FIELD_MAX_CELLS cells (raise field_cell); the sim is unchanged then.
 *  `index_out` (may be NULL) receives the obstacle's index. Not thread-safe with a step. */
SHOAL_API shoal_status shoal_sim_add_obstacle(shoal_sim *sim, const float *positions,
                                              const float *normals, size_t vertex_count,
                                              const shoal_transform *xf, size_t *index_out,
                                              shoal_error *err);
/** Give obstacle `index` a new transform and rebuild the field (the next step sees it). */
SHOAL_API shoal_status shoal_sim_move_obstacle(shoal_sim *sim, size_t index,
                                               const shoal_transform *xf, shoal_error *err);
SHOAL_API size_t shoal_sim_obstacle_count(const shoal_sim *sim);
/** The transform of obstacle `index` (identity when out of range). */
SHOAL_API shoal_transform shoal_sim_obstacle_transform(const shoal_sim *sim, size_t index);

/** The obstacle field: cell (x, y, z) spans origin + [x, x+1) * cell_size per axis; its
 *  vector is vectors[3 * (x + dims[0] * (y + dims[1] * z))]. No obstacle: dims 0 and
 *  vectors NULL. `builds` counts rebuilds. Valid until the next add, move or set_params. */
typedef struct shoal_field_view {
    float origin[3];
    float cell_size;
    int32_t dims[3];
    const float *vectors;
    uint64_t builds;
} shoal_field_view;
SHOAL_API shoal_field_view shoal_sim_field(const shoal_sim *sim);
/** The field's vector at world point p (0 outside the grid), as the force kernels sample it. */
SHOAL_API void shoal_sim_field_sample(const shoal_sim *sim, const float p[3], float out[3]);

/* ---- an obstacle field on its own, lent to any simulation ------------------------------ */

/** Obstacle meshes, where they sit and the vector field they make, owned by no simulation:
 *  built once and lent to any number of them, CPU (shoal_sim_set_obstacles) or GPU
 *  (shoal_gpu_sim_set_obstacles), as meshes are lent to the renderer: each copies what it
 *  needs during the call, so the object may change or go afterwards. The field is built with
 *  the field_cell and field_margin the object was created with, by the build a simulation
 *  runs itself (shoal_sim_add_obstacle): the same meshes give the same bits either way.
 *  Not thread-safe: one thread at a time per object (lending only reads it). */
typedef struct shoal_obstacles shoal_obstacles;

/** A new, empty obstacle field built with `params`' field_cell and field_margin (the other
 *  parameters are not read; shoal_params_default's values are the models' defaults). */
SHOAL_API shoal_status shoal_obstacles_create(const shoal_params *params, shoal_obstacles **out,
                                              shoal_error *err);
SHOAL_API void shoal_obstacles_destroy(shoal_obstacles *obstacles);
/** Add a mesh and rebuild the field: as shoal_sim_add_obstacle (the same checks, errors and
 *  limits; nothing changes on failure). */
SHOAL_API shoal_status shoal_obstacles_add(shoal_obstacles *obstacles, const float *positions,
                                           const float *normals, size_t vertex_count,
                                           const shoal_transform *xf, size_t *index_out,
                                           shoal_error *err);
/** Give mesh `index` a new transform and rebuild the field (lend it again to the sims). */
SHOAL_API shoal_status shoal_obstacles_move(shoal_obstacles *obstacles, size_t index,
                                            const shoal_transform *xf, shoal_error *err);
SHOAL_API size_t shoal_obstacles_count(const shoal_obstacles *obstacles);
/** The field, as shoal_sim_field; valid until the next add or move. */
SHOAL_API shoal_field_view shoal_obstacles_field(const shoal_obstacles *obstacles);
/** Lend `obstacles` to `sim`: its meshes and field replace the sim's (copied; NULL or an
 *  empty object removes them). The field is copied when it was built with the sim's
 *  field_cell and field_margin, else built again with the sim's (so a sim's field always
 *  follows its own parameters). On failure the sim is unchanged. Not thread-safe with a
 *  step. */
SHOAL_API shoal_status shoal_sim_set_obstacles(shoal_sim *sim, const shoal_obstacles *obstacles,
                                               shoal_error *err);

/* ---- predators (MODELS.md "Predators") ------------------------------------------------ */

/** Predators now: writes up to `max` positions and velocities (xyz each; either may be NULL)
 *  and returns how many there are (params.predator_count). They start at predator_start
 *  spread along x by predator_spread, at rest, whenever the state is set or initialised. */
SHOAL_API size_t shoal_sim_predators(const shoal_sim *sim, float *pos, float *vel, size_t max);

/* ---- checkpoints: the state beyond the boids ------------------------------------------ */

/** What a step depends on besides the boids, the desc and the obstacles: the steps done
 *  (simulated time is desc.t0_s + steps_done * dt_s, so a restart keeps the exact time),
 *  the predators and the pinned heading targets. Plain data. */
typedef struct shoal_sim_checkpoint {
    uint64_t steps_done;
    int32_t predator_count;
    float predator_pos[SHOAL_MAX_PREDATORS][3], predator_vel[SHOAL_MAX_PREDATORS][3];
    uint8_t target_pinned[SHOAL_MAX_TARGETS];
    float target_pin[SHOAL_MAX_TARGETS][3];
} shoal_sim_checkpoint;

/** Copy the sim's state beyond the boids into `ck`. */
SHOAL_API void shoal_sim_get_checkpoint(const shoal_sim *sim, shoal_sim_checkpoint *ck);
/** Restore it (after shoal_sim_set_state, which resets the predators). The predator count
 *  must equal params.predator_count and every value be finite, else SHOAL_ERR_INPUT and
 *  the sim is unchanged. The steps after this give the same bits as the uninterrupted run. */
SHOAL_API shoal_status shoal_sim_set_checkpoint(shoal_sim *sim, const shoal_sim_checkpoint *ck,
                                                shoal_error *err);

/** Per-stage timing of the last steps (cheap, always on). Stage names are the function
 *  names perf shows. */
typedef struct shoal_stage_stats {
    const char *name;
    uint64_t calls;
    double total_ms;
    /** busy time of the least and most loaded thread (load imbalance), ms in total */
    double thread_min_ms, thread_max_ms;
} shoal_stage_stats;

/** Stage timers since creation: fills up to `max` entries, returns how many stages. */
SHOAL_API size_t shoal_sim_get_stats(const shoal_sim *sim, shoal_stage_stats *out, size_t max);

/** The profile the simulation's steps record their stages into (shoal/profile.h: per-call
 *  median and max, per-thread busy time, the trace): its own, created with it, unless one
 *  was lent with shoal_sim_set_profile. Owned by the sim (its own) or by the lender. */
SHOAL_API shoal_profile *shoal_sim_get_profile(const shoal_sim *sim);
/** Record the stages into `profile` from the next step on (NULL: back to the sim's own).
 *  The caller keeps ownership; the profile must outlive the sim or be unset first, and
 *  objects sharing a profile must not run at the same time (one thread drives them). */
SHOAL_API void shoal_sim_set_profile(shoal_sim *sim, shoal_profile *profile);

/** The stages of one step, in order: the entries of shoal_sim_get_stats, and in the stage
 *  profiler (shoal/profile.h) the ids SHOAL_PROFILE_SIM_BASE + stage. */
typedef enum shoal_sim_stage {
    SHOAL_SIM_STAGE_ASSIGN,  /**< grid_assign: the cell of each boid, per-block histograms */
    SHOAL_SIM_STAGE_SCAN,    /**< grid_scan: cell totals, exclusive scan, block offsets */
    SHOAL_SIM_STAGE_SCATTER, /**< grid_scatter: stable scatter into cell order */
    SHOAL_SIM_STAGE_FORCES,  /**< forces: neighbour sums, the rules, integration */
    SHOAL_SIM_STAGE_COUNT
} shoal_sim_stage;

/** The name of a stage as perf and the profiler show it ("grid_assign", "grid_scan",
 *  "grid_scatter", "forces"); NULL out of range. Static storage. */
SHOAL_API const char *shoal_sim_stage_name(shoal_sim_stage stage);

/** Sort the boids into cell order without stepping: the first half of a step, so a
 *  benchmark can time steps from a state in the order a running simulation keeps it. The
 *  state (shoal_sim_get_state), the time and the results of later steps do not change (a
 *  step's result is a function of the state alone); the sort's stages are recorded in the
 *  stage timers as a step's are. Not thread-safe on one sim. */
SHOAL_API void shoal_sim_sort(shoal_sim *sim);

/** The neighbour-candidate pairs the force kernel walked in the last step, counted by the
 *  kernel itself. `lane_pairs`: candidates x W summed over the lane groups (W: 16 for
 *  AVX-512, 8 for AVX2, 1 for scalar; a group is a compact cluster of up to W boids and
 *  walks the candidates its box test keeps), i.e. the work the vector unit did, dead lanes
 *  included; `useful_pairs`: the (boid, candidate) pairs among them within the model's
 *  interaction radius (neighbours, the boid itself excluded). Per boid: divide by the
 *  boid count. Both 0 before the first step. A measure of work for benchmarks; reads the
 *  sim only. */
SHOAL_API void shoal_sim_candidate_pairs(const shoal_sim *sim, double *lane_pairs,
                                         double *useful_pairs);

/** Number of float columns of a state row: px py pz vx vy vz. */
#define SHOAL_STATE_COLUMNS 6

/** Check that every value of `count` rows is finite. On the first NaN or infinity returns
 *  SHOAL_ERR_INPUT naming `what` (a file name), the row and the column, both counted from
 *  0 as NumPy indexes them: "state.npy: row 2 column 3 (vx) is nan". */
SHOAL_API shoal_status shoal_state_check_finite(const float *rows, size_t count, const char *what,
                                                shoal_error *err);

/* Earlier names (before shoal_<module>_<verb> throughout). */
SHOAL_DEPRECATED("shoal_sim_get_stats")
SHOAL_API size_t shoal_sim_stats(const shoal_sim *sim, shoal_stage_stats *out, size_t max);
SHOAL_DEPRECATED("shoal_params_list")
SHOAL_API const shoal_param_info *shoal_param_list(shoal_model model, size_t *count_out);

#ifdef __cplusplus
}
#endif

#endif
