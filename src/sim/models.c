/* SPDX-License-Identifier: MIT */
/* The model table (models.h): one section per rule model -- its parameters (name, unit,
 * range, default, meaning: docs/MODELS.md and `shoal params` show this table), where it
 * starts its boids, the box it keeps them in, its per-step constants, its interaction
 * radius, its cross-parameter rules -- and the table of those sections that the sim, the
 * GPU backend, init, the grid, the window and the tests read. The per-pair and per-boid
 * math of each model is its section of rules.h. Also the parameters by name (--set, scene
 * files) and their validation. */
#include "core/rng.h"
#include "core/check.h"
#include "sim/models.h"
#include "sim/sim_internal.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OFF(field) offsetof(shoal_params, field)
#define P(name, field, unit, lo, hi, def, help)                                                    \
    {                                                                                              \
        name, help, OFF(field), lo, hi, def, 0, unit                                               \
    }
#define PI(name, field, unit, lo, hi, def, help)                                                   \
    {                                                                                              \
        name, help, OFF(field), lo, hi, def, 1, unit                                               \
    }
#define P3(name, field, unit, lo, hi, d0, d1, d2, help)                                            \
    {name "_x", help " (x)", OFF(field[0]), lo, hi, d0, 0, unit},                                  \
        {name "_y", help " (y)", OFF(field[1]), lo, hi, d1, 0, unit},                              \
    {                                                                                              \
        name "_z", help " (z)", OFF(field[2]), lo, hi, d2, 0, unit                                 \
    }
#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

#define BIG 1e6f
/* Every model has these too: obstacles (spheres in scene files, the field of obstacle
 * meshes) and predators (MODELS.md "Predators"). */
#define OBSTACLE_PARAMS                                                                            \
    P("avoid_force", avoid_force, "-", 0, BIG, 0, "weight of the obstacle avoidance force"),       \
        PI("sphere_count", sphere_count, "count", 0, SHOAL_MAX_SPHERES, 0,                         \
           "number of obstacle spheres (set in a scene file)"),                                    \
        P("field_cell", field_cell, "units", 1e-3f, BIG, 1, "obstacle field: cell size"),          \
        P("field_margin", field_margin, "units", 0, BIG, 1,                                        \
          "obstacle field: margin around the meshes"),                                             \
        PI("predator_count", predator_count, "count", 0, SHOAL_MAX_PREDATORS, 0,                   \
           "number of predators"),                                                                 \
        P("predator_speed", predator_speed, "units/s", 0, BIG, 8, "predator speed, units/s"),      \
        P("predator_turn", predator_turn, "1/s", 0, BIG, 2,                                        \
          "predator turn rate: lerp factor per s"),                                                \
        PI("predator_chase", predator_chase, "-", 0, 1, 0,                                         \
           "predators chase: 0 nearest boid, 1 centre"),                                           \
        P("flee_radius", flee_radius, "units", 1e-4f, BIG, 6,                                      \
          "boids flee predators closer than this"),                                                \
        P("flee_weight", flee_weight, "-", 0, BIG, 10, "weight of the flee force"),                \
        P3("predator_start", predator_start, "units", -BIG, BIG, 0, 0, 30, "predators' start"),    \
        P("predator_spread", predator_spread, "units", 0, BIG, 2,                                  \
          "predators' spacing along x at start")

/* ---- steer: seed 003 (UnityGraphicsProgramming Boids.compute) ------------------------------ */

static const shoal_param_info steer_params[] = {
    P("sep_radius", sep_radius, "units", 1e-4f, BIG, 1, "separation radius (d <= r)"),
    P("ali_radius", ali_radius, "units", 1e-4f, BIG, 2, "alignment radius (d <= r)"),
    P("coh_radius", coh_radius, "units", 1e-4f, BIG, 2, "cohesion radius (d <= r)"),
    P("sep_weight", sep_weight, "-", -BIG, BIG, 3, "separation weight"),
    P("ali_weight", ali_weight, "-", -BIG, BIG, 1, "alignment weight"),
    P("coh_weight", coh_weight, "-", -BIG, BIG, 1, "cohesion weight"),
    P("max_speed", max_speed, "units/s", 1e-6f, BIG, 5, "speed limit, units/s"),
    P("max_steer", max_steer, "units/s^2", 0, BIG, 0.5f, "steering force limit per rule"),
    P("wall_weight", wall_weight, "units/s^2", 0, BIG, 10, "weight of the wall force"),
    P3("wall_center", wall_center, "units", -BIG, BIG, 0, 0, 0, "centre of the wall box"),
    P3("wall_size", wall_size, "units", 1e-4f, BIG, 32, 32, 32, "size of the wall box"),
    P("init_pos_radius", init_pos_radius, "units", 0, BIG, 1, "initial positions: ball radius"),
    P("init_vel_radius", init_vel_radius, "units/s", 0, BIG, 0.1f,
      "initial velocities: ball radius"),
    OBSTACLE_PARAMS,
};

/* The keys of the window edit these, in this order (docs/APP.md). */
static const char *const steer_live[] = {
    "sep_weight", "ali_weight", "coh_weight", "sep_radius",  "ali_radius",
    "coh_radius", "max_speed",  "max_steer",  "wall_weight", "avoid_force",
};

/* steer and average share the radius tests, the walls and the start */
static float sa_radius(const shoal_params *p)
{
    return fmaxf(p->sep_radius, fmaxf(p->ali_radius, p->coh_radius));
}

static void sa_bounds(const shoal_params *p, float lo[3], float hi[3])
{
    for (int c = 0; c < 3; c++) {
        lo[c] = p->wall_center[c] - 0.5f * p->wall_size[c];
        hi[c] = p->wall_center[c] + 0.5f * p->wall_size[c];
    }
}

/* seeds 003/000: p in a ball (their unit ball at the defaults), v in a small ball */
static void sa_start(const shoal_params *p, rng *r, float row[6])
{
    rng_in_ball(r, p->init_pos_radius, row);
    rng_in_ball(r, p->init_vel_radius, row + 3);
}

/* The default school of steer and average: the seeds start every boid in a ball of radius 1
 * (init_pos_radius 1, shoal_params_default keeps it), where each sees every other for the
 * first ~150 steps; shoal_sim_desc_for spreads them over 3/8 of the smallest wall (12 in the
 * 32^3 box), as assets/scenes/steer.ini and average.ini do. */
static void sa_school(shoal_params *p)
{
    float m = fminf(p->wall_size[0], fminf(p->wall_size[1], p->wall_size[2]));
    if (m > 0 && p->init_pos_radius < 0.375f * m)
        p->init_pos_radius = 0.375f * m;
}

/* the squared radii every model gets (sim_model_consts) are all steer and average need */
static void sa_consts(const shoal_params *p, model_consts *mc)
{
    (void)p;
    (void)mc;
}

#define SA_GEOMETRY                                                                                \
    .lengths = {OFF(wall_center[0]), OFF(wall_center[1]), OFF(wall_center[2]), OFF(wall_size[0]),  \
                OFF(wall_size[1]),   OFF(wall_size[2]),   OFF(init_pos_radius)}

static const sim_model model_steer = {
    .info = {SHOAL_MODEL_STEER, "steer", "seed 003, UnityGraphicsProgramming Boids.compute", 16384,
             steer_params, COUNT_OF(steer_params), steer_live, COUNT_OF(steer_live), 0},
    .radius = sa_radius,
    .bounds = sa_bounds,
    .start = sa_start,
    .school = sa_school,
    .consts = sa_consts,
    SA_GEOMETRY,
};

/* ---- average: seed 000 (a Unity fish-school blog post), its project's Default preset ----- */

static const shoal_param_info average_params[] = {
    P("sep_radius", sep_radius, "units", 1e-4f, BIG, 1.75f, "separation radius (d <= r)"),
    P("ali_radius", ali_radius, "units", 1e-4f, BIG, 3.5f, "alignment radius (d <= r)"),
    P("coh_radius", coh_radius, "units", 1e-4f, BIG, 3.5f, "cohesion radius (d <= r)"),
    P("sep_weight", sep_weight, "-", -BIG, BIG, 16, "separation weight"),
    P("ali_weight", ali_weight, "-", -BIG, BIG, 12, "alignment weight"),
    P("coh_weight", coh_weight, "-", -BIG, BIG, 6, "cohesion weight"),
    P("max_speed", max_speed, "units/s", 1e-6f, BIG, 3.5f, "speed limit, units/s"),
    P("max_steer", max_steer, "units/s^2", 0, BIG, 1.5f, "limit of the summed force"),
    P("wall_weight", wall_weight, "units/s^2", 0, BIG, 10, "weight of the wall force"),
    P3("wall_center", wall_center, "units", -BIG, BIG, 0, 0, 0, "centre of the wall box"),
    P3("wall_size", wall_size, "units", 1e-4f, BIG, 32, 32, 32, "size of the wall box"),
    P("init_pos_radius", init_pos_radius, "units", 0, BIG, 1, "initial positions: ball radius"),
    P("init_vel_radius", init_vel_radius, "units/s", 0, BIG, 0.5f,
      "initial velocities: ball radius"),
    OBSTACLE_PARAMS,
};

static const sim_model model_average = {
    .info = {SHOAL_MODEL_AVERAGE, "average", "seed 000, a Unity fish-school blog post", 4096,
             average_params, COUNT_OF(average_params), steer_live, COUNT_OF(steer_live), 0},
    .radius = sa_radius,
    .bounds = sa_bounds,
    .start = sa_start,
    .school = sa_school,
    .consts = sa_consts,
    SA_GEOMETRY,
};

/* ---- heading: seed 001 (grid + counting sort article); the seed gives no defaults -------- */

static const shoal_param_info heading_params[] = {
    P("neighbor_radius", neighbor_radius, "units", 1e-4f, BIG, 2, "neighbour radius (d < R)"),
    P("sep_weight", sep_weight, "-", -BIG, BIG, 1, "separation weight"),
    P("ali_weight", ali_weight, "-", -BIG, BIG, 1, "alignment weight"),
    P("coh_weight", coh_weight, "-", -BIG, BIG, 1, "cohesion weight"),
    P("target_weight", target_weight, "-", -BIG, BIG, 1,
      "weight of the pull to the nearest target"),
    P("rotate_speed", rotate_speed, "1/s", 0, BIG, 3, "turn rate: lerp factor per second"),
    P("move_speed", move_speed, "units/s", 0, BIG, 4, "speed, units/s"),
    P("target_period", target_period, "s", 1e-3f, BIG, 5, "targets are redrawn every this many s"),
    PI("target_count", target_count, "count", 1, SHOAL_MAX_TARGETS, 16, "number of targets"),
    P3("bounds_center", bounds_center, "units", -BIG, BIG, 0, 0, 0, "centre of the target box"),
    P3("bounds_size", bounds_size, "units", 1e-4f, BIG, 64, 64, 64, "size of the target box"),
    P("init_pos_radius", init_pos_radius, "units", 0, BIG, 16, "initial positions: ball radius"),
    OBSTACLE_PARAMS,
};

static const char *const heading_live[] = {
    "sep_weight",    "ali_weight",   "coh_weight", "neighbor_radius",
    "target_weight", "rotate_speed", "move_speed", "avoid_force",
};

static float heading_radius(const shoal_params *p) { return p->neighbor_radius; }

static void heading_bounds(const shoal_params *p, float lo[3], float hi[3])
{
    for (int c = 0; c < 3; c++) {
        lo[c] = p->bounds_center[c] - 0.5f * p->bounds_size[c];
        hi[c] = p->bounds_center[c] + 0.5f * p->bounds_size[c];
    }
}

static void heading_start(const shoal_params *p, rng *r, float row[6])
{
    float dir[3];
    rng_in_ball(r, p->init_pos_radius, row);
    rng_direction(r, dir);
    for (int c = 0; c < 3; c++)
        row[3 + c] = dir[c] * p->move_speed;
}

/* the targets themselves depend on the time: sim.c and the GPU draw them each step */
static void heading_consts(const shoal_params *p, model_consts *mc)
{
    mc->r = p->neighbor_radius;
    mc->r2 = p->neighbor_radius * p->neighbor_radius;
    mc->inv_r = 1.0f / p->neighbor_radius;
    mc->target_count = (int)p->target_count;
}

static const sim_model model_heading = {
    .info = {SHOAL_MODEL_HEADING, "heading",
             "seed 001, a compute-shader grid and counting-sort article", 16384, heading_params,
             COUNT_OF(heading_params), heading_live, COUNT_OF(heading_live), 0},
    .radius = heading_radius,
    .bounds = heading_bounds,
    .start = heading_start,
    .consts = heading_consts,
    .lengths = {OFF(bounds_center[0]), OFF(bounds_center[1]), OFF(bounds_center[2]),
                OFF(bounds_size[0]), OFF(bounds_size[1]), OFF(bounds_size[2]),
                OFF(init_pos_radius)},
};

/* ---- classic: seed 002 (Unity CPU version) ------------------------------------------------ */

static const shoal_param_info classic_params[] = {
    P("fov", fov, "units", 1e-4f, BIG, 5, "neighbour and wall radius (d <= fov)"),
    P("min_speed", min_speed, "units/s", 0, BIG, 2, "lowest speed, units/s"),
    P("max_speed", max_speed, "units/s", 1e-6f, BIG, 5, "highest speed, units/s"),
    P("w1", w1, "-", -BIG, BIG, 5, "separation weight (rule1)"),
    P("w2", w2, "-", -BIG, BIG, 2, "alignment weight (rule2)"),
    P("w3", w3, "-", -BIG, BIG, 1, "cohesion weight (rule3)"),
    P("sep_strength", sep_strength, "-", -BIG, BIG, 10, "rule1 numerator (the seed's 10)"),
    P3("box_min", box_min, "units", -BIG, BIG, -10, 0, -10, "box corner (low)"),
    P3("box_max", box_max, "units", -BIG, BIG, 10, 20, 10, "box corner (high)"),
    OBSTACLE_PARAMS,
};

static const char *const classic_live[] = {
    "max_speed", "min_speed", "fov", "w1", "w2", "w3", "sep_strength", "avoid_force",
};

static float classic_radius(const shoal_params *p) { return p->fov; }

static void classic_bounds(const shoal_params *p, float lo[3], float hi[3])
{
    for (int c = 0; c < 3; c++) {
        lo[c] = p->box_min[c];
        hi[c] = p->box_max[c];
    }
}

/* seed 002: uniform in the box (Random.Range per axis), a random rotation and Velocity =
 * transform.forward * 2: speed 2 in a uniform direction, whatever min_speed and max_speed
 * are (the first step clamps it, as the seed's does) */
static void classic_start(const shoal_params *p, rng *r, float row[6])
{
    float dir[3];
    for (int c = 0; c < 3; c++)
        row[c] = rng_range(r, p->box_min[c], p->box_max[c]);
    rng_direction(r, dir);
    for (int c = 0; c < 3; c++)
        row[3 + c] = dir[c] * 2.0f;
}

static void classic_consts(const shoal_params *p, model_consts *mc)
{
    mc->r = p->fov;
    mc->r2 = p->fov * p->fov;
}

static shoal_status classic_check(const shoal_params *p, shoal_error *err)
{
    for (int c = 0; c < 3; c++)
        if (!(p->box_min[c] < p->box_max[c]))
            return shoal_error_set(
                err, SHOAL_ERR_INPUT, "classic: box_min_%c (%g) must be below box_max_%c (%g)",
                "xyz"[c], (double)p -> box_min[c], "xyz"[c], (double)p -> box_max[c]);
    if (p->min_speed > p->max_speed)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "classic: min_speed (%g) is above max_speed (%g)",
                               (double)p->min_speed, (double)p->max_speed);
    return SHOAL_OK;
}

static const sim_model model_classic = {
    .info = {SHOAL_MODEL_CLASSIC, "classic", "seed 002, a Unity CPU boids article", 100,
             classic_params, COUNT_OF(classic_params), classic_live, COUNT_OF(classic_live), 0},
    .radius = classic_radius,
    .bounds = classic_bounds,
    .start = classic_start,
    .consts = classic_consts,
    .check = classic_check,
    /* it starts in its box: no start radius */
    .lengths = {OFF(box_min[0]), OFF(box_min[1]), OFF(box_min[2]), OFF(box_max[0]), OFF(box_max[1]),
                OFF(box_max[2])},
};

/* ---- fov: seed 004 (vector-field avoidance) ----------------------------------------------- */

/* The seed gives no values: these flock visibly (units per step for speeds, as the seed's
 * p += v). */
static const shoal_param_info fov_params[] = {
    P("coh_dist2", coh_dist2, "units^2", 1e-8f, BIG, 9, "cohesion: squared distance (d^2 < value)"),
    P("sep_dist2", sep_dist2, "units^2", 1e-8f, BIG, 1, "separation: squared distance"),
    P("ali_dist2", ali_dist2, "units^2", 1e-8f, BIG, 4, "alignment: squared distance"),
    P("coh_angle", coh_angle, "rad", 0, 3.14159265f, 2.0f, "cohesion view half-angle, radians"),
    P("sep_angle", sep_angle, "rad", 0, 3.14159265f, 3.14159265f, "separation view half-angle"),
    P("ali_angle", ali_angle, "rad", 0, 3.14159265f, 1.5f, "alignment view half-angle"),
    P("coh_force", coh_force, "-", -BIG, BIG, 0.5f, "cohesion force"),
    P("sep_force", sep_force, "-", -BIG, BIG, 1.5f, "separation force"),
    P("ali_force", ali_force, "-", -BIG, BIG, 1.0f, "alignment force"),
    P("max_force", max_force, "units/step/s", 0, BIG, 1.0f, "limit of each rule's force"),
    P("min_speed", min_speed, "units/step", 0, BIG, 0.05f, "lowest speed, units per step"),
    P("max_speed", max_speed, "units/step", 1e-6f, BIG, 0.15f, "highest speed, units per step"),
    P("boundary_force", boundary_force, "-", 0, BIG, 1.0f, "pull back into the sphere"),
    P("boundary_range2", boundary_range2, "units^2", 1e-6f, BIG *BIG, 400,
      "squared radius of the sphere"),
    P3("boundary_center", boundary_center, "units", -BIG, BIG, 0, 0, 0, "centre of the sphere"),
    P("init_pos_radius", init_pos_radius, "units", 0, BIG, 20, "initial positions: ball radius"),
    OBSTACLE_PARAMS,
};

static const char *const fov_live[] = {
    "max_speed", "min_speed", "sep_dist2",      "ali_dist2",   "coh_dist2",
    "sep_angle", "ali_angle", "coh_angle",      "sep_force",   "ali_force",
    "coh_force", "max_force", "boundary_force", "avoid_force",
};

static float fov_radius(const shoal_params *p)
{
    return sqrtf(fmaxf(p->coh_dist2, fmaxf(p->sep_dist2, p->ali_dist2)));
}

static void fov_bounds(const shoal_params *p, float lo[3], float hi[3])
{
    float r = sqrtf(p->boundary_range2);
    for (int c = 0; c < 3; c++) {
        lo[c] = p->boundary_center[c] - r;
        hi[c] = p->boundary_center[c] + r;
    }
}

/* seed 004: p in a ball around the sphere's centre, v = normalize(uniform cube sample) *
 * min_speed */
static void fov_start(const shoal_params *p, rng *r, float row[6])
{
    rng_in_ball(r, p->init_pos_radius, row);
    for (int c = 0; c < 3; c++)
        row[c] += p->boundary_center[c];
    float v[3], d2;
    do {
        for (int c = 0; c < 3; c++)
            v[c] = rng_range(r, -1.0f, 1.0f);
        d2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    } while (d2 < 1e-6f);
    float d = sqrtf(d2);
    for (int c = 0; c < 3; c++)
        row[3 + c] = v[c] / d * p->min_speed;
}

static void fov_consts(const shoal_params *p, model_consts *mc)
{
    mc->cos_coh = cosf(p->coh_angle);
    mc->cos_sep = cosf(p->sep_angle);
    mc->cos_ali = cosf(p->ali_angle);
}

static shoal_status fov_check(const shoal_params *p, shoal_error *err)
{
    if (p->min_speed > p->max_speed)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "fov: min_speed (%g) is above max_speed (%g)",
                               (double)p->min_speed, (double)p->max_speed);
    return SHOAL_OK;
}

static const sim_model model_fov = {
    .info = {SHOAL_MODEL_FOV, "fov", "seed 004, a vector-field obstacle-avoidance post", 4096,
             fov_params, COUNT_OF(fov_params), fov_live, COUNT_OF(fov_live), 1},
    .radius = fov_radius,
    .bounds = fov_bounds,
    .start = fov_start,
    .consts = fov_consts,
    .check = fov_check,
    .lengths = {OFF(boundary_center[0]), OFF(boundary_center[1]), OFF(boundary_center[2]),
                OFF(init_pos_radius)},
    .areas = {OFF(boundary_range2)},
};

/* ---- the table ---------------------------------------------------------------------------- */

#define MODEL_ENTRY(id, name) [id] = &model_##name,
static const sim_model *const models[SHOAL_MODEL_COUNT] = {SIM_MODELS(MODEL_ENTRY)};
#undef MODEL_ENTRY
#define MODEL_ONE(id, name) +1
_Static_assert(0 SIM_MODELS(MODEL_ONE) == SHOAL_MODEL_COUNT,
               "SIM_MODELS (sim/models.h) lists every shoal_model once");
#undef MODEL_ONE

const sim_model *sim_model_of(shoal_model model)
{
    return (unsigned)model < SHOAL_MODEL_COUNT ? models[model] : NULL;
}

const shoal_model_info *shoal_model_get_info(shoal_model model)
{
    const sim_model *m = sim_model_of(model);
    return m ? &m->info : NULL;
}

void sim_model_consts(shoal_model model, const shoal_params *p, double dt_s, model_consts *mc)
{
    mc->dt = (float)dt_s;
    mc->sep_r2 = p->sep_radius * p->sep_radius;
    mc->ali_r2 = p->ali_radius * p->ali_radius;
    mc->coh_r2 = p->coh_radius * p->coh_radius;
    sim_model_of(model)->consts(p, mc);
    mc->flee_r = p->flee_radius;
    mc->flee_r2 = p->flee_radius * p->flee_radius;
}

const char *shoal_model_name(shoal_model model)
{
    const sim_model *m = sim_model_of(model);
    return m ? m->info.name : NULL;
}

shoal_status shoal_model_parse(const char *name, shoal_model *model, shoal_error *err)
{
    CHECK_ARG(name, "name", err);
    CHECK_ARG(model, "model", err);
    char known[256];
    size_t used = 0;
    known[0] = 0;
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
        const char *mn = models[m]->info.name;
        if (name && strcmp(name, mn) == 0) {
            *model = (shoal_model)m;
            return SHOAL_OK;
        }
        /* "a, b, c or d" */
        const char *sep = m == 0 ? "" : m == SHOAL_MODEL_COUNT - 1 ? " or " : ", ";
        int n = snprintf(known + used, sizeof known - used, "%s%s", sep, mn);
        used += n > 0 && (size_t)n < sizeof known - used ? (size_t)n : 0;
    }
    return shoal_error_set(err, SHOAL_ERR_INPUT, "unknown model '%s' (expected %s)",
                           name ? name : "", known);
}

size_t shoal_model_default_count(shoal_model model)
{
    const sim_model *m = sim_model_of(model);
    return m ? m->info.default_count : 0;
}

const shoal_param_info *shoal_params_list(shoal_model model, size_t *count_out)
{
    const sim_model *m = sim_model_of(model);
    *count_out = m ? m->info.param_count : 0;
    return m ? m->info.params : NULL;
}

static float *param_ptr(shoal_params *p, const shoal_param_info *info)
{
    return (float *)((char *)p + info->offset);
}

void shoal_params_default(shoal_model model, shoal_params *params)
{
    if (!params)
        return;
    memset(params, 0, sizeof *params);
    size_t n;
    const shoal_param_info *list = shoal_params_list(model, &n);
    for (size_t i = 0; i < n; i++)
        *param_ptr(params, &list[i]) = list[i].default_value;
    if (list)
        params->defaults_of = (int32_t)model + 1;
}

shoal_status shoal_params_validate(shoal_model model, const shoal_params *params, shoal_error *err)
{
    CHECK_ARG(params, "params", err);
    size_t n;
    const shoal_param_info *list = shoal_params_list(model, &n);
    if (!list)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "invalid model %d", (int)model);
    /* parameters filled for another model: the trap of setting desc.model alone */
    if (params->defaults_of != 0 && params->defaults_of != (int32_t)model + 1) {
        const char *of = shoal_model_name((shoal_model)(params->defaults_of - 1));
        const char *to = shoal_model_name(model);
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "the parameters are model %s's, the model is %s: start from "
                               "shoal_sim_desc_for(%s), or call shoal_params_default after "
                               "changing desc.model",
                               of ? of : "(invalid)", to, to);
    }
    for (size_t i = 0; i < n; i++) {
        float v = *param_ptr((shoal_params *)params, &list[i]);
        if (!(v >= list[i].min && v <= list[i].max) || (list[i].is_integer && v != floorf(v)))
            return shoal_error_set(
                err, SHOAL_ERR_INPUT, "parameter %s of model %s: %g is out of range [%g, %g]%s",
                list[i].name, shoal_model_name(model), (double)v, (double)list[i].min,
                (double)list[i].max, list[i].is_integer ? " (integer)" : "");
    }
    const sim_model *m = sim_model_of(model);
    shoal_status st = m->check ? m->check(params, err) : SHOAL_OK;
    if (st)
        return st;
    for (int s = 0; s < (int)params->sphere_count; s++) {
        const shoal_sphere *sp = &params->spheres[s];
        if (!(sp->radius > 0) || !isfinite(sp->radius) || !isfinite(sp->center[0]) ||
            !isfinite(sp->center[1]) || !isfinite(sp->center[2]))
            return shoal_error_set(err, SHOAL_ERR_INPUT,
                                   "obstacle sphere %d: radius must be > 0 and values finite", s);
    }
    return SHOAL_OK;
}

/* Multiply the parameter at `offset` by k, clamped to its range. */
static void scale_one(const shoal_param_info *list, size_t n, shoal_params *p, size_t offset,
                      double k)
{
    for (size_t i = 0; i < n; i++) {
        if (list[i].offset != offset)
            continue;
        float *v = param_ptr(p, &list[i]);
        double x = (double)*v * k;
        x = x < (double)list[i].min ? (double)list[i].min : x;
        x = x > (double)list[i].max ? (double)list[i].max : x;
        *v = (float)x;
        return;
    }
}

void shoal_params_scale_geometry(shoal_model model, shoal_params *p, double factor)
{
    if (!p)
        return;
    if (!(factor > 0) || !isfinite(factor) || factor == 1.0)
        return;
    const sim_model *m = sim_model_of(model);
    if (!m)
        return;
    const shoal_param_info *list = m->info.params;
    size_t n = m->info.param_count;
    for (size_t k = 0; k < COUNT_OF(m->lengths) && m->lengths[k]; k++)
        scale_one(list, n, p, m->lengths[k], factor);
    for (size_t k = 0; k < COUNT_OF(m->areas) && m->areas[k]; k++)
        scale_one(list, n, p, m->areas[k], factor * factor);
}

float shoal_params_interaction_radius(shoal_model model, const shoal_params *p)
{
    if (!p)
        return 0;
    const sim_model *m = sim_model_of(model);
    return m ? m->radius(p) : 1.0f;
}

/* an earlier name */
const shoal_param_info *shoal_param_list(shoal_model model, size_t *count_out)
{
    return shoal_params_list(model, count_out);
}
