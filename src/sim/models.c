/* SPDX-License-Identifier: MIT */
/* The model table (models.h): each model's entry comes from its own file (sim/models/NAME.h,
 * its SIM_MODEL_TABLE section: the parameter table with its hypothesis columns, where it
 * starts its boids, the box it keeps them in, its radius, its cross-parameter rules), and this
 * file gathers them into the table the sim, the GPU backend, init, the grid, the window, the
 * reference and the tests read. Also the parameters by name (--set, scene files) and their
 * validation. */
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

/* every model's entry, compiled here once (and its rules, compiled by every backend, here
 * for the table's consts and reach2) */
#define SIM_MODEL_TABLE 1
#include "sim/models/table.h"
#include "sim/rules.h"

/* ---- the table ---------------------------------------------------------------------------- */

#define MODEL_ENTRY(id, name) [id] = &model_##name,
static const sim_model *const models[] = {SIM_MODELS(MODEL_ENTRY)};
#undef MODEL_ENTRY
SIM_MODEL_TABLE_CHECK(models);
_Static_assert(SIM_MODEL_DEFAULT == 0, "the default model is the first of the table (the "
                                       "scripts take the first of shoal params --names)");
/* each model's table: NAME_params with a hypothesis column NAME_hyps of one entry a row */
#define MODEL_ROWS_CHECK(id, name)                                                                 \
    _Static_assert(COUNT_OF(name##_params) == COUNT_OF(name##_hyps) &&                             \
                       COUNT_OF(name##_params) <= SIM_MODEL_MAX_PARAMS,                            \
                   #name ": one hypothesis column entry per parameter row");
SIM_MODELS(MODEL_ROWS_CHECK)
#undef MODEL_ROWS_CHECK

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
    const sim_model *m = sim_model_of(model);
    mc->dt = (float)dt_s;
    mc->target_count = 0;
    m->consts(p, mc);
    mc->reach2 = m->reach2(p, mc);
    mc->flee_r = p->flee_radius;
    mc->flee_r2 = p->flee_radius * p->flee_radius;
}

void sim_targets(const shoal_params *p, int target_count, uint64_t seed, double t_s, float *xyz)
{
    rule_targets(p, target_count, seed, t_s, xyz);
}

uint64_t sim_step_index(double t_s, double dt_s)
{
    double k = floor(t_s / dt_s + 0.5);
    return k > 0 && k < 1.8e19 ? (uint64_t)k : 0;
}

/* how many targets the model draws (its constants' target_count) */
int sim_model_target_count(shoal_model model, const shoal_params *p)
{
    model_consts mc;
    memset(&mc, 0, sizeof mc);
    sim_model_consts(model, p, 1.0, &mc);
    return mc.target_count;
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
