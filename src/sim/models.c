/* SPDX-License-Identifier: MIT */
/* The rule models' names, parameter tables, defaults and validation (MODELS.md). The
 * per-pair and per-boid math lives in forces_kernel.h; this file only says which
 * parameters each model has, their ranges and their defaults. */
#include "sim/sim_internal.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OFF(field) offsetof(shoal_params, field)
#define P(name, field, lo, hi, def, help)                                                          \
    {                                                                                              \
        name, help, OFF(field), lo, hi, def, 0                                                     \
    }
#define PI(name, field, lo, hi, def, help)                                                         \
    {                                                                                              \
        name, help, OFF(field), lo, hi, def, 1                                                     \
    }
#define P3(name, field, lo, hi, d0, d1, d2, help)                                                  \
    {name "_x", help " (x)", OFF(field[0]), lo, hi, d0, 0},                                        \
        {name "_y", help " (y)", OFF(field[1]), lo, hi, d1, 0},                                    \
    {                                                                                              \
        name "_z", help " (z)", OFF(field[2]), lo, hi, d2, 0                                       \
    }

#define BIG 1e6f
#define OBSTACLE_PARAMS                                                                            \
    P("avoid_force", avoid_force, 0, BIG, 0, "weight of the obstacle avoidance force"),            \
        PI("sphere_count", sphere_count, 0, SHOAL_MAX_SPHERES, 0,                                  \
           "number of obstacle spheres (set in a scene file)"),                                    \
        P("field_cell", field_cell, 1e-3f, BIG, 1, "obstacle field: cell size"),                   \
        P("field_margin", field_margin, 0, BIG, 1, "obstacle field: margin around the meshes"),    \
        PI("predator_count", predator_count, 0, SHOAL_MAX_PREDATORS, 0, "number of predators"),    \
        P("predator_speed", predator_speed, 0, BIG, 8, "predator speed, units/s"),                 \
        P("predator_turn", predator_turn, 0, BIG, 2, "predator turn rate: lerp factor per s"),     \
        PI("predator_chase", predator_chase, 0, 1, 0,                                              \
           "predators chase: 0 nearest boid, 1 centre"),                                           \
        P("flee_radius", flee_radius, 1e-4f, BIG, 6, "boids flee predators closer than this"),     \
        P("flee_weight", flee_weight, 0, BIG, 10, "weight of the flee force"),                     \
        P3("predator_start", predator_start, -BIG, BIG, 0, 0, 30, "predators' start"),             \
        P("predator_spread", predator_spread, 0, BIG, 2, "predators' spacing along x at start")

/* steer: seed 003 (UnityGraphicsProgramming Boids.compute). */
static const shoal_param_info steer_params[] = {
    P("sep_radius", sep_radius, 1e-4f, BIG, 1, "separation radius (d <= r)"),
    P("ali_radius", ali_radius, 1e-4f, BIG, 2, "alignment radius (d <= r)"),
    P("coh_radius", coh_radius, 1e-4f, BIG, 2, "cohesion radius (d <= r)"),
    P("sep_weight", sep_weight, -BIG, BIG, 3, "separation weight"),
    P("ali_weight", ali_weight, -BIG, BIG, 1, "alignment weight"),
    P("coh_weight", coh_weight, -BIG, BIG, 1, "cohesion weight"),
    P("max_speed", max_speed, 1e-6f, BIG, 5, "speed limit, units/s"),
    P("max_steer", max_steer, 0, BIG, 0.5f, "steering force limit per rule"),
    P("wall_weight", wall_weight, 0, BIG, 10, "weight of the wall force"),
    P3("wall_center", wall_center, -BIG, BIG, 0, 0, 0, "centre of the wall box"),
    P3("wall_size", wall_size, 1e-4f, BIG, 32, 32, 32, "size of the wall box"),
    P("init_pos_radius", init_pos_radius, 0, BIG, 1, "initial positions: ball radius"),
    P("init_vel_radius", init_vel_radius, 0, BIG, 0.1f, "initial velocities: ball radius"),
    OBSTACLE_PARAMS,
};

/* average: seed 000 (a Unity fish-school blog post), its project's Default preset. */
static const shoal_param_info average_params[] = {
    P("sep_radius", sep_radius, 1e-4f, BIG, 1.75f, "separation radius (d <= r)"),
    P("ali_radius", ali_radius, 1e-4f, BIG, 3.5f, "alignment radius (d <= r)"),
    P("coh_radius", coh_radius, 1e-4f, BIG, 3.5f, "cohesion radius (d <= r)"),
    P("sep_weight", sep_weight, -BIG, BIG, 16, "separation weight"),
    P("ali_weight", ali_weight, -BIG, BIG, 12, "alignment weight"),
    P("coh_weight", coh_weight, -BIG, BIG, 6, "cohesion weight"),
    P("max_speed", max_speed, 1e-6f, BIG, 3.5f, "speed limit, units/s"),
    P("max_steer", max_steer, 0, BIG, 1.5f, "limit of the summed force"),
    P("wall_weight", wall_weight, 0, BIG, 10, "weight of the wall force"),
    P3("wall_center", wall_center, -BIG, BIG, 0, 0, 0, "centre of the wall box"),
    P3("wall_size", wall_size, 1e-4f, BIG, 32, 32, 32, "size of the wall box"),
    P("init_pos_radius", init_pos_radius, 0, BIG, 1, "initial positions: ball radius"),
    P("init_vel_radius", init_vel_radius, 0, BIG, 0.5f, "initial velocities: ball radius"),
    OBSTACLE_PARAMS,
};

/* heading: seed 001 (grid + counting sort article); the seed gives no defaults. */
static const shoal_param_info heading_params[] = {
    P("neighbor_radius", neighbor_radius, 1e-4f, BIG, 2, "neighbour radius (d < R)"),
    P("sep_weight", sep_weight, -BIG, BIG, 1, "separation weight"),
    P("ali_weight", ali_weight, -BIG, BIG, 1, "alignment weight"),
    P("coh_weight", coh_weight, -BIG, BIG, 1, "cohesion weight"),
    P("target_weight", target_weight, -BIG, BIG, 1, "weight of the pull to the nearest target"),
    P("rotate_speed", rotate_speed, 0, BIG, 3, "turn rate: lerp factor per second"),
    P("move_speed", move_speed, 0, BIG, 4, "speed, units/s"),
    P("target_period", target_period, 1e-3f, BIG, 5, "targets are redrawn every this many s"),
    PI("target_count", target_count, 1, SHOAL_MAX_TARGETS, 16, "number of targets"),
    P3("bounds_center", bounds_center, -BIG, BIG, 0, 0, 0, "centre of the target box"),
    P3("bounds_size", bounds_size, 1e-4f, BIG, 64, 64, 64, "size of the target box"),
    P("init_pos_radius", init_pos_radius, 0, BIG, 16, "initial positions: ball radius"),
    OBSTACLE_PARAMS,
};

/* classic: seed 002 (Unity CPU version). */
static const shoal_param_info classic_params[] = {
    P("fov", fov, 1e-4f, BIG, 5, "neighbour and wall radius (d <= fov)"),
    P("min_speed", min_speed, 0, BIG, 2, "lowest speed, units/s"),
    P("max_speed", max_speed, 1e-6f, BIG, 5, "highest speed, units/s"),
    P("w1", w1, -BIG, BIG, 5, "separation weight (rule1)"),
    P("w2", w2, -BIG, BIG, 2, "alignment weight (rule2)"),
    P("w3", w3, -BIG, BIG, 1, "cohesion weight (rule3)"),
    P("sep_strength", sep_strength, -BIG, BIG, 10, "rule1 numerator (the seed's 10)"),
    P3("box_min", box_min, -BIG, BIG, -10, 0, -10, "box corner (low)"),
    P3("box_max", box_max, -BIG, BIG, 10, 20, 10, "box corner (high)"),
    OBSTACLE_PARAMS,
};

/* fov: seed 004 (vector-field avoidance). The seed gives no values: these flock visibly
 * (units per step for speeds, as the seed's p += v). */
static const shoal_param_info fov_params[] = {
    P("coh_dist2", coh_dist2, 1e-8f, BIG, 9, "cohesion: squared distance (d^2 < value)"),
    P("sep_dist2", sep_dist2, 1e-8f, BIG, 1, "separation: squared distance"),
    P("ali_dist2", ali_dist2, 1e-8f, BIG, 4, "alignment: squared distance"),
    P("coh_angle", coh_angle, 0, 3.14159265f, 2.0f, "cohesion view half-angle, radians"),
    P("sep_angle", sep_angle, 0, 3.14159265f, 3.14159265f, "separation view half-angle"),
    P("ali_angle", ali_angle, 0, 3.14159265f, 1.5f, "alignment view half-angle"),
    P("coh_force", coh_force, -BIG, BIG, 0.5f, "cohesion force"),
    P("sep_force", sep_force, -BIG, BIG, 1.5f, "separation force"),
    P("ali_force", ali_force, -BIG, BIG, 1.0f, "alignment force"),
    P("max_force", max_force, 0, BIG, 1.0f, "limit of each rule's force"),
    P("min_speed", min_speed, 0, BIG, 0.05f, "lowest speed, units per step"),
    P("max_speed", max_speed, 1e-6f, BIG, 0.15f, "highest speed, units per step"),
    P("boundary_force", boundary_force, 0, BIG, 1.0f, "pull back into the sphere"),
    P("boundary_range2", boundary_range2, 1e-6f, BIG *BIG, 400, "squared radius of the sphere"),
    P3("boundary_center", boundary_center, -BIG, BIG, 0, 0, 0, "centre of the sphere"),
    P("init_pos_radius", init_pos_radius, 0, BIG, 20, "initial positions: ball radius"),
    OBSTACLE_PARAMS,
};

typedef struct model_entry {
    const char *name;
    const shoal_param_info *params;
    size_t param_count;
    size_t default_count;
} model_entry;

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))
static const model_entry models[SHOAL_MODEL_COUNT] = {
    [SHOAL_MODEL_STEER] = {"steer", steer_params, COUNT_OF(steer_params), 16384},
    [SHOAL_MODEL_AVERAGE] = {"average", average_params, COUNT_OF(average_params), 4096},
    [SHOAL_MODEL_HEADING] = {"heading", heading_params, COUNT_OF(heading_params), 16384},
    [SHOAL_MODEL_CLASSIC] = {"classic", classic_params, COUNT_OF(classic_params), 100},
    [SHOAL_MODEL_FOV] = {"fov", fov_params, COUNT_OF(fov_params), 4096},
};

const char *shoal_model_name(shoal_model model)
{
    if ((unsigned)model >= SHOAL_MODEL_COUNT)
        return NULL;
    return models[model].name;
}

shoal_status shoal_model_parse(const char *name, shoal_model *model, shoal_error *err)
{
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
        if (name && strcmp(name, models[m].name) == 0) {
            *model = (shoal_model)m;
            return SHOAL_OK;
        }
    }
    return shoal_error_set(err, SHOAL_ERR_INPUT,
                           "unknown model '%s' (expected steer, average, heading, classic or fov)",
                           name ? name : "");
}

size_t shoal_model_default_count(shoal_model model)
{
    return (unsigned)model < SHOAL_MODEL_COUNT ? models[model].default_count : 0;
}

const shoal_param_info *shoal_params_list(shoal_model model, size_t *count_out)
{
    if ((unsigned)model >= SHOAL_MODEL_COUNT) {
        *count_out = 0;
        return NULL;
    }
    *count_out = models[model].param_count;
    return models[model].params;
}

static float *param_ptr(shoal_params *p, const shoal_param_info *info)
{
    return (float *)((char *)p + info->offset);
}

void shoal_params_default(shoal_model model, shoal_params *params)
{
    memset(params, 0, sizeof *params);
    size_t n;
    const shoal_param_info *list = shoal_params_list(model, &n);
    for (size_t i = 0; i < n; i++)
        *param_ptr(params, &list[i]) = list[i].default_value;
    if (list)
        params->defaults_of = (int32_t)model + 1;
}

/* Parse one float; rejects empty strings, trailing junk, NaN and infinities. */
static int parse_float(const char *s, float *out)
{
    if (!s || !*s)
        return 0;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    while (*end == ' ' || *end == '\t')
        end++;
    if (*end != '\0' || errno == ERANGE || !isfinite(v) || fabs(v) > FLT_MAX)
        return 0;
    *out = (float)v;
    return 1;
}

static shoal_status set_one(shoal_model model, shoal_params *params, const shoal_param_info *info,
                            const char *value, shoal_error *err)
{
    float v;
    if (!parse_float(value, &v))
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "parameter %s of model %s: '%s' is not a finite number", info->name,
                               shoal_model_name(model), value);
    if (!(v >= info->min && v <= info->max))
        return shoal_error_set(
            err, SHOAL_ERR_INPUT, "parameter %s of model %s: %g is out of range [%g, %g]",
            info->name, shoal_model_name(model), (double)v, (double)info->min, (double)info->max);
    if (info->is_integer && v != floorf(v))
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "parameter %s of model %s: %g must be an integer", info->name,
                               shoal_model_name(model), (double)v);
    *param_ptr(params, info) = v;
    return SHOAL_OK;
}

shoal_status shoal_params_set(shoal_model model, shoal_params *params, const char *name,
                              const char *value, shoal_error *err)
{
    size_t n;
    const shoal_param_info *list = shoal_params_list(model, &n);
    if (!list)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "invalid model");
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i].name, name) == 0)
            return set_one(model, params, &list[i], value, err);
    /* A vector parameter as one "x,y,z" value: NAME_x, NAME_y, NAME_z. */
    size_t len = strlen(name);
    if (len < 60) {
        char comp[64];
        snprintf(comp, sizeof comp, "%s_x", name);
        for (size_t i = 0; i + 2 < n; i++) {
            if (strcmp(list[i].name, comp) != 0)
                continue;
            char buf[256];
            snprintf(buf, sizeof buf, "%s", value);
            char *parts[3];
            int k = 0;
            char *save = NULL;
            for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                if (k == 3) {
                    k = 4;
                    break;
                }
                parts[k++] = tok;
            }
            if (k != 3)
                return shoal_error_set(err, SHOAL_ERR_INPUT,
                                       "parameter %s of model %s: '%s' is not x,y,z", name,
                                       shoal_model_name(model), value);
            shoal_params tmp = *params;
            for (int c = 0; c < 3; c++) {
                shoal_status st = set_one(model, &tmp, &list[i + (size_t)c], parts[c], err);
                if (st)
                    return st;
            }
            *params = tmp;
            return SHOAL_OK;
        }
    }
    /* Unknown: list the valid names so the user can fix the line. */
    char names[400];
    size_t used = 0;
    names[0] = 0;
    for (size_t i = 0; i < n && used + 32 < sizeof names; i++)
        used +=
            (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? " " : "", list[i].name);
    return shoal_error_set(err, SHOAL_ERR_INPUT, "unknown parameter '%s' for model %s (known: %s)",
                           name, shoal_model_name(model), names);
}

shoal_status shoal_params_validate(shoal_model model, const shoal_params *params, shoal_error *err)
{
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
    if (model == SHOAL_MODEL_CLASSIC) {
        for (int c = 0; c < 3; c++)
            if (!(params->box_min[c] < params->box_max[c]))
                return shoal_error_set(
                    err, SHOAL_ERR_INPUT, "classic: box_min_%c (%g) must be below box_max_%c (%g)",
                    "xyz"[c], (double)params -> box_min[c], "xyz"[c], (double)params -> box_max[c]);
        if (params->min_speed > params->max_speed)
            return shoal_error_set(err, SHOAL_ERR_INPUT,
                                   "classic: min_speed (%g) is above max_speed (%g)",
                                   (double)params->min_speed, (double)params->max_speed);
    }
    if (model == SHOAL_MODEL_FOV && params->min_speed > params->max_speed)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "fov: min_speed (%g) is above max_speed (%g)",
                               (double)params->min_speed, (double)params->max_speed);
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
    if (!(factor > 0) || !isfinite(factor) || factor == 1.0)
        return;
    size_t n;
    const shoal_param_info *list = shoal_params_list(model, &n);
    if (!list)
        return;
    size_t lengths[8], count = 0;
    for (int c = 0; c < 3; c++) {
        switch (model) {
        case SHOAL_MODEL_STEER:
        case SHOAL_MODEL_AVERAGE:
            lengths[count++] = OFF(wall_center[c]);
            lengths[count++] = OFF(wall_size[c]);
            break;
        case SHOAL_MODEL_HEADING:
            lengths[count++] = OFF(bounds_center[c]);
            lengths[count++] = OFF(bounds_size[c]);
            break;
        case SHOAL_MODEL_CLASSIC:
            lengths[count++] = OFF(box_min[c]);
            lengths[count++] = OFF(box_max[c]);
            break;
        default:
            lengths[count++] = OFF(boundary_center[c]);
            break;
        }
    }
    if (model != SHOAL_MODEL_CLASSIC)
        lengths[count++] = OFF(init_pos_radius);
    for (size_t k = 0; k < count; k++)
        scale_one(list, n, p, lengths[k], factor);
    if (model == SHOAL_MODEL_FOV)
        scale_one(list, n, p, OFF(boundary_range2), factor * factor);
}

float shoal_params_interaction_radius(shoal_model model, const shoal_params *p)
{
    switch (model) {
    case SHOAL_MODEL_STEER:
    case SHOAL_MODEL_AVERAGE:
        return fmaxf(p->sep_radius, fmaxf(p->ali_radius, p->coh_radius));
    case SHOAL_MODEL_HEADING:
        return p->neighbor_radius;
    case SHOAL_MODEL_CLASSIC:
        return p->fov;
    case SHOAL_MODEL_FOV:
        return sqrtf(fmaxf(p->coh_dist2, fmaxf(p->sep_dist2, p->ali_dist2)));
    default:
        return 1.0f;
    }
}

/* an earlier name */
const shoal_param_info *shoal_param_list(shoal_model model, size_t *count_out)
{
    return shoal_params_list(model, count_out);
}
