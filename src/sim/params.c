/* SPDX-License-Identifier: MIT */
/* Parameters by name: found in the model's table (shoal_params_list), read, and set from text
 * (the command line's --set, scene files, manifests, sweeps) or by value (the Python package,
 * the window). One place for the lookup, the range and integer checks and their messages, so
 * every front end refuses the same values with the same words. The tables themselves, the
 * defaults, the cross-field rules and the geometry scaling are models.c's. */
#include "core/check.h"
#include "core/text.h"
#include "sim/sim_internal.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static float *param_ptr(shoal_params *p, const shoal_param_info *info)
{
    return (float *)((char *)p + info->offset);
}

/* The shortest text that reads back as v (as Python's repr and the command line show it). */
static void shortest(double v, char *buf, size_t size)
{
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, size, "%.*g", p, v);
        if (strtod(buf, NULL) == v)
            return;
    }
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

/* The range and integer checks of one value (already a finite float). */
static shoal_status check_one(shoal_model model, const shoal_param_info *info, float v,
                              shoal_error *err)
{
    if (!(v >= info->min && v <= info->max))
        return shoal_error_set(
            err, SHOAL_ERR_INPUT, "parameter %s of model %s: %g is out of range [%g, %g]",
            info->name, shoal_model_name(model), (double)v, (double)info->min, (double)info->max);
    if (info->is_integer && v != floorf(v))
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "parameter %s of model %s: %g must be an integer", info->name,
                               shoal_model_name(model), (double)v);
    return SHOAL_OK;
}

static shoal_status set_one(shoal_model model, shoal_params *params, const shoal_param_info *info,
                            const char *value, shoal_error *err)
{
    float v;
    if (!parse_float(value, &v))
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "parameter %s of model %s: '%s' is not a finite number", info->name,
                               shoal_model_name(model), value);
    shoal_status st = check_one(model, info, v, err);
    if (!st)
        *param_ptr(params, info) = v;
    return st;
}

/* By value: the same refusals as set_one's, the value shown as the shortest text of it. */
static shoal_status set_one_value(shoal_model model, shoal_params *params,
                                  const shoal_param_info *info, double value, shoal_error *err)
{
    if (!isfinite(value) || fabs(value) > FLT_MAX) {
        char text[32];
        shortest(value, text, sizeof text);
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "parameter %s of model %s: '%s' is not a finite number", info->name,
                               shoal_model_name(model), text);
    }
    float v = (float)value;
    shoal_status st = check_one(model, info, v, err);
    if (!st)
        *param_ptr(params, info) = v;
    return st;
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

const shoal_param_info *shoal_params_find(shoal_model model, const char *name,
                                          size_t *component_count, shoal_error *err)
{
    size_t n;
    const shoal_param_info *list = shoal_params_list(model, &n);
    if (component_count)
        *component_count = 0;
    if (!name) {
        shoal_error_set(err, SHOAL_ERR_INPUT, "%s: name is NULL", __func__);
        return NULL;
    }
    if (!list) {
        shoal_error_set(err, SHOAL_ERR_INPUT, "invalid model");
        return NULL;
    }
    if (!name)
        name = "";
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i].name, name) == 0) {
            if (component_count)
                *component_count = 1;
            return &list[i];
        }
    /* a vector by its base name: NAME_x, NAME_y, NAME_z in a row */
    size_t len = strlen(name);
    for (size_t i = 0; len > 0 && i + 2 < n; i++)
        if (strncmp(list[i].name, name, len) == 0 && strcmp(list[i].name + len, "_x") == 0 &&
            strncmp(list[i + 2].name, name, len) == 0 &&
            strcmp(list[i + 2].name + len, "_z") == 0) {
            if (component_count)
                *component_count = 3;
            return &list[i];
        }
    unknown_param(model, list, n, name, err);
    return NULL;
}

shoal_status shoal_params_get(shoal_model model, const shoal_params *params, const char *name,
                              double *values, size_t max, size_t *count, shoal_error *err)
{
    size_t k;
    const shoal_param_info *info = shoal_params_find(model, name, &k, err);
    if (count)
        *count = 0;
    if (!info)
        return err ? err->status : SHOAL_ERR_INPUT;
    if (k > max)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "parameter %s of model %s: %zu values, room for %zu", name,
                               shoal_model_name(model), k, max);
    for (size_t c = 0; c < k; c++)
        values[c] = (double)*param_ptr((shoal_params *)params, &info[c]);
    if (count)
        *count = k;
    return SHOAL_OK;
}

shoal_status shoal_params_set_value(shoal_model model, shoal_params *params, const char *name,
                                    const double *values, size_t count, shoal_error *err)
{
    CHECK_ARG(params, "params", err);
    CHECK_ARG(name, "name", err);
    CHECK_ARG(values, "values", err);
    size_t k;
    const shoal_param_info *info = shoal_params_find(model, name, &k, err);
    if (!info)
        return err ? err->status : SHOAL_ERR_INPUT;
    if (count != k)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               k == 3
                                   ? "parameter %s of model %s: takes 3 values (x, y, z), not %zu"
                                   : "parameter %s of model %s: takes one value, not %zu",
                               name, shoal_model_name(model), count);
    shoal_params tmp = *params; /* all or nothing */
    for (size_t c = 0; c < k; c++) {
        shoal_status st = set_one_value(model, &tmp, &info[c], values[c], err);
        if (st)
            return st;
    }
    *params = tmp;
    return SHOAL_OK;
}

shoal_status shoal_params_set(shoal_model model, shoal_params *params, const char *name,
                              const char *value, shoal_error *err)
{
    CHECK_ARG(params, "params", err);
    CHECK_ARG(name, "name", err);
    CHECK_ARG(value, "value", err);
    size_t k;
    const shoal_param_info *info = shoal_params_find(model, name, &k, err);
    if (!info)
        return err ? err->status : SHOAL_ERR_INPUT;
    if (!value)
        value = "";
    if (k == 1)
        return set_one(model, params, info, value, err);
    /* a vector parameter as one "x,y,z" value: NAME_x, NAME_y, NAME_z */
    char buf[256];
    int k3 = 0;
    char *parts[3];
    if (strlen(value) < sizeof buf) { /* a longer text is no number, and is not cut */
        snprintf(buf, sizeof buf, "%s", value);
        char *save = NULL;
        for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            if (k3 == 3) {
                k3 = 4;
                break;
            }
            parts[k3++] = tok;
        }
    }
    if (k3 != 3)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "parameter %s of model %s: '%s' is not x,y,z",
                               name, shoal_model_name(model), value);
    shoal_params tmp = *params;
    for (int c = 0; c < 3; c++) {
        shoal_status st = set_one(model, &tmp, &info[c], parts[c], err);
        if (st)
            return st;
    }
    *params = tmp;
    return SHOAL_OK;
}

int shoal_params_write_json(FILE *f, shoal_model model, const shoal_params *p)
{
    size_t n;
    const shoal_param_info *info = shoal_params_list(model, &n);
    fputc('{', f);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%s", i ? ", " : "");
        text_json_string(f, info[i].name);
        fprintf(f, ": %.9g", (double)*param_ptr((shoal_params *)p, &info[i]));
    }
    fprintf(f, "%s\"spheres\": [", n ? ", " : "");
    for (int k = 0; k < (int)p->sphere_count && k < SHOAL_MAX_SPHERES; k++)
        fprintf(f, "%s[%.9g, %.9g, %.9g, %.9g]", k ? ", " : "", (double)p->spheres[k].center[0],
                (double)p->spheres[k].center[1], (double)p->spheres[k].center[2],
                (double)p->spheres[k].radius);
    fprintf(f, "]}");
    return ferror(f) ? -1 : 0;
}
