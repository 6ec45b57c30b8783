/* SPDX-License-Identifier: MIT */
/* The model table (models.h): each model's entry comes from its own file (sim/models/NAME.h,
 * its SIM_MODEL_TABLE section: the parameter table with its hypothesis columns, where it
 * starts its boids, the box it keeps them in, its radius, its cross-parameter rules), and this
 * file gathers them into the table the sim, the GPU backend, init, the grid, the window, the
 * reference and the tests read. Also the parameters by name (--set, scene files) and their
 * validation. */
#include "core/rng.h"
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

/* Unknown: the whole list of valid names (a vector once, as NAME: --set NAME=x,y,z), so the
 * user can fix the line. The message fits the error record whole: a name never stops
 * midway, and when the list cannot fit (only with a very long bad name) it ends with how
 * many more there are; `shoal params` lists them all either way. */
static shoal_status unknown_param(shoal_model model, const shoal_param_info *list, size_t n,
                                  const char *name, shoal_error *err)
{
    const char *mn = shoal_model_name(model);
    /* the bad name as the message will show it: at most 60 bytes, then escaped */
    char shown[64], shown_esc[4 * sizeof shown];
    snprintf(shown, sizeof shown, "%s", name);
    if (strlen(name) >= sizeof shown)
        memcpy(shown + sizeof shown - 4, "...", 4);
    shoal_error_escape(shown_esc, sizeof shown_esc, shown);
    static const char head[] = "unknown parameter '' for model  (known: ";
    static const char tail[] = "; shoal params --model  explains them)";
    size_t budget = sizeof((shoal_error *)0)->message - 1;
    size_t fixed = strlen(head) + strlen(shown_esc) + 2 * strlen(mn) + strlen(tail);
    size_t room = budget > fixed + 24 ? budget - fixed - 24 : 0; /* 24: " and NNN more" */
    char names[sizeof((shoal_error *)0)->message];
    size_t used = 0, listed = 0, total = 0;
    names[0] = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(list[i].name);
        int vec = len > 2 && strcmp(list[i].name + len - 2, "_x") == 0 && i + 2 < n;
        if (len > 2 &&
            (strcmp(list[i].name + len - 2, "_y") == 0 ||
             strcmp(list[i].name + len - 2, "_z") == 0) &&
            i > 0 && strncmp(list[i - 1].name, list[i].name, len - 2) == 0)
            continue; /* the y and z of a vector listed as its NAME */
        size_t show = vec ? len - 2 : len;
        total++;
        if (listed == total - 1 && used + show + 1 <= room) {
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%.*s", used ? " " : "",
                                     (int)show, list[i].name);
            listed++;
        }
    }
    if (listed < total)
        snprintf(names + used, sizeof names - used, " and %zu more", total - listed);
    return shoal_error_set(err, SHOAL_ERR_INPUT,
                           "unknown parameter '%s' for model %s (known: %s; shoal params --model "
                           "%s explains them)",
                           shown, mn, names, mn);
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
    return unknown_param(model, list, n, name, err);
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
    const sim_model *m = sim_model_of(model);
    return m ? m->radius(p) : 1.0f;
}

/* an earlier name */
const shoal_param_info *shoal_param_list(shoal_model model, size_t *count_out)
{
    return shoal_params_list(model, count_out);
}
