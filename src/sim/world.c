/* SPDX-License-Identifier: MIT */
/* The world as a contract (shoal/world.h, docs/WORLD.md): its parameters by name (the table
 * `shoal params` lists beside each model's, what --set and a scene's [world] set), their
 * validation, the 2D check of states, and the box the step uses (sim/world.h). The model
 * tables are models.c's; shoal_sim_desc_set sends a name to the world or to the model. */
#include "sim/world.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

shoal_world shoal_world_default(void)
{
    shoal_world w;
    memset(&w, 0, sizeof w);
    w.dims = 3;
    return w;
}

int shoal_world_dims(const shoal_world *w) { return w->dims == 2 ? 2 : 3; }

int shoal_world_axis_periodic(const shoal_world *w, int axis)
{
    if (axis < 0 || axis > 2 || (axis == 2 && shoal_world_dims(w) == 2))
        return 0;
    return w->periodic[axis] != 0;
}

int shoal_world_any_periodic(const shoal_world *w)
{
    return shoal_world_axis_periodic(w, 0) || shoal_world_axis_periodic(w, 1) ||
           shoal_world_axis_periodic(w, 2);
}

int shoal_world_is_default(const shoal_world *w)
{
    return (w->dims == 0 || w->dims == 3) && !w->periodic[0] && !w->periodic[1] && !w->periodic[2];
}

/* ---- the parameter table ------------------------------------------------------------------ */

#define WORLD_LIMIT 1e9f /* largest size or |centre| (world units) */

static const shoal_param_info world_params[] = {
    {"dims", "3: three dimensions; 2: the plane z = 0 (z and vz exactly 0)",
     offsetof(shoal_world, dims), 2, 3, 3, 1, "count"},
    {"periodic_x",
     "1: x wraps in the box (periodic=1 sets every axis; the model's walls are off "
     "on a periodic axis)",
     offsetof(shoal_world, periodic), 0, 1, 0, 1, "-"},
    {"periodic_y", "1: y wraps in the box", offsetof(shoal_world, periodic) + sizeof(int32_t), 0, 1,
     0, 1, "-"},
    {"periodic_z", "1: z wraps in the box (not read in 2D)",
     offsetof(shoal_world, periodic) + 2 * sizeof(int32_t), 0, 1, 0, 1, "-"},
    {"world_size_x",
     "the box's edge Lx (the period on a periodic axis, >= 2 x the interaction "
     "radius; 0: no box)",
     offsetof(shoal_world, size), 0, WORLD_LIMIT, 0, 0, "units"},
    {"world_size_y", "the box's edge Ly", offsetof(shoal_world, size) + sizeof(float), 0,
     WORLD_LIMIT, 0, 0, "units"},
    {"world_size_z", "the box's edge Lz", offsetof(shoal_world, size) + 2 * sizeof(float), 0,
     WORLD_LIMIT, 0, 0, "units"},
    {"world_center_x", "the box's centre", offsetof(shoal_world, center), -WORLD_LIMIT, WORLD_LIMIT,
     0, 0, "units"},
    {"world_center_y", "the box's centre", offsetof(shoal_world, center) + sizeof(float),
     -WORLD_LIMIT, WORLD_LIMIT, 0, 0, "units"},
    {"world_center_z", "the box's centre", offsetof(shoal_world, center) + 2 * sizeof(float),
     -WORLD_LIMIT, WORLD_LIMIT, 0, 0, "units"},
};
#define WORLD_PARAM_COUNT (sizeof world_params / sizeof world_params[0])

const shoal_param_info *shoal_world_params_list(size_t *count_out)
{
    if (count_out)
        *count_out = WORLD_PARAM_COUNT;
    return world_params;
}

double shoal_world_param_value(const shoal_world *w, const shoal_param_info *info)
{
    const char *base = (const char *)w + info->offset;
    if (info->is_integer) {
        int32_t v;
        memcpy(&v, base, sizeof v);
        return info->offset == offsetof(shoal_world, dims) && v == 0 ? 3.0 : (double)v;
    }
    float f;
    memcpy(&f, base, sizeof f);
    return (double)f;
}

static const shoal_param_info *find_param(const char *name)
{
    for (size_t i = 0; i < WORLD_PARAM_COUNT; i++)
        if (strcmp(world_params[i].name, name) == 0)
            return &world_params[i];
    return NULL;
}

/* the table entry of "NAME_x" for a vector name NAME (world_size, world_center, periodic) */
static const shoal_param_info *find_vector(const char *name)
{
    char comp[64];
    if (strlen(name) + 3 > sizeof comp)
        return NULL;
    snprintf(comp, sizeof comp, "%s_x", name);
    return find_param(comp);
}

int shoal_world_has_param(const char *name)
{
    return name && (find_param(name) || find_vector(name));
}

/* one value onto a copy of the world */
static shoal_status set_one(shoal_world *w, const shoal_param_info *p, const char *text,
                            const char *shown_name, shoal_error *err)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    while (*end == ' ' || *end == '\t')
        end++;
    if (end == text || *end || errno == ERANGE || !isfinite(v))
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "world parameter %s: '%s' is not a finite number", shown_name, text);
    if (v < (double)p->min || v > (double)p->max || (p->is_integer && v != floor(v)))
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "world parameter %s: %s is out of range [%g, %g]%s", p->name, text,
                               (double)p->min, (double)p->max, p->is_integer ? " (integer)" : "");
    char *base = (char *)w + p->offset;
    if (p->is_integer) {
        int32_t i = (int32_t)v;
        memcpy(base, &i, sizeof i);
    } else {
        float f = (float)v;
        memcpy(base, &f, sizeof f);
    }
    return SHOAL_OK;
}

shoal_status shoal_world_set(shoal_world *w, const char *name, const char *value, shoal_error *err)
{
    if (!name || !value)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "world parameter: no name or value");
    const shoal_param_info *p = find_param(name);
    shoal_world tmp = *w;
    if (p) {
        shoal_status st = set_one(&tmp, p, value, name, err);
        if (!st)
            *w = tmp;
        return st;
    }
    p = find_vector(name);
    if (!p) {
        char shown[80];
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "unknown world parameter '%s' (known: dims, periodic, periodic_x "
                               "periodic_y periodic_z, world_size, world_center and their _x _y "
                               "_z)",
                               shoal_error_escape(shown, sizeof shown, name));
    }
    /* "x,y,z", or for periodic one value for every axis */
    char buf[256];
    if (strlen(value) >= sizeof buf)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "world parameter %s: value too long", name);
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
    int scalar_ok = strcmp(name, "periodic") == 0 && k == 1 && !strchr(value, ',');
    if (k != 3 && !scalar_ok)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "world parameter %s: '%s' is not %s", name,
                               value,
                               scalar_ok                       ? "0 or 1"
                               : strcmp(name, "periodic") == 0 ? "0, 1 or x,y,z"
                                                               : "x,y,z");
    for (int c = 0; c < 3; c++) {
        shoal_status st = set_one(&tmp, p + c, parts[scalar_ok ? 0 : c], name, err);
        if (st)
            return st;
    }
    *w = tmp;
    return SHOAL_OK;
}

shoal_status shoal_sim_desc_set(shoal_sim_desc *d, const char *name, const char *value,
                                shoal_error *err)
{
    if (shoal_world_has_param(name))
        return shoal_world_set(&d->world, name, value, err);
    return shoal_params_set(d->model, &d->params, name, value, err);
}

/* ---- validation --------------------------------------------------------------------------- */

shoal_status shoal_world_validate(const shoal_world *w, float interaction_radius, shoal_error *err)
{
    static const char axis_name[3] = {'x', 'y', 'z'};
    if (w->dims != 0 && w->dims != 2 && w->dims != 3)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "world: dims %d is not 2 or 3", (int)w->dims);
    for (int a = 0; a < 3; a++) {
        if (w->periodic[a] != 0 && w->periodic[a] != 1)
            return shoal_error_set(err, SHOAL_ERR_INPUT, "world: periodic_%c %d is not 0 or 1",
                                   axis_name[a], (int)w->periodic[a]);
        if (!(w->size[a] >= 0.0f && w->size[a] <= WORLD_LIMIT))
            return shoal_error_set(err, SHOAL_ERR_INPUT,
                                   "world: world_size_%c %g must be finite, >= 0 and <= %g",
                                   axis_name[a], (double)w->size[a], (double)WORLD_LIMIT);
        if (!(fabsf(w->center[a]) <= WORLD_LIMIT))
            return shoal_error_set(err, SHOAL_ERR_INPUT,
                                   "world: world_center_%c %g must be finite, within %g",
                                   axis_name[a], (double)w->center[a], (double)WORLD_LIMIT);
    }
    for (int a = 0; a < 3; a++) {
        if (!shoal_world_axis_periodic(w, a))
            continue;
        if (w->size[a] == 0.0f)
            return shoal_error_set(err, SHOAL_ERR_INPUT,
                                   "world: periodic_%c needs a size: give world_size_%c > 0 (or "
                                   "world_size=Lx,Ly,Lz)",
                                   axis_name[a], axis_name[a]);
        double r = interaction_radius;
        if (isfinite(r) && (double)w->size[a] < 2.0 * r)
            return shoal_error_set(err, SHOAL_ERR_INPUT,
                                   "world: world_size_%c %g is smaller than twice the interaction "
                                   "radius %g: a periodic box must be at least %g wide so that a "
                                   "neighbour has one nearest image",
                                   axis_name[a], (double)w->size[a], r, 2.0 * r);
        /* the box's bounds must be distinct floats with room for positions: a size that
         * vanishes against its centre's magnitude cannot hold a boid */
        float half = 0.5f * w->size[a];
        float lo = w->center[a] - half, hi = lo + w->size[a];
        if (!(lo < hi) || !(hi - lo >= 0.5f * w->size[a]))
            return shoal_error_set(err, SHOAL_ERR_INPUT,
                                   "world: world_size_%c %g is too small for floats at centre %g",
                                   axis_name[a], (double)w->size[a], (double)w->center[a]);
    }
    return SHOAL_OK;
}

shoal_status shoal_world_check_rows(const shoal_world *w, const float *rows, size_t row_count,
                                    const char *name, shoal_error *err)
{
    if (shoal_world_dims(w) != 2)
        return SHOAL_OK;
    for (size_t i = 0; i < row_count; i++) {
        const float *r = rows + i * 6;
        if (r[2] != 0.0f || r[5] != 0.0f) {
            char shown[200];
            return shoal_error_set(err, SHOAL_ERR_INPUT,
                                   "%s: row %zu has %s = %g in a 2D world (dims=2: every z and "
                                   "vz must be 0)",
                                   shoal_error_escape(shown, sizeof shown, name ? name : "state"),
                                   i, r[2] != 0.0f ? "z" : "vz",
                                   (double)(r[2] != 0.0f ? r[2] : r[5]));
        }
    }
    return SHOAL_OK;
}

/* ---- the step's side ---------------------------------------------------------------------- */

void world_axes_make(const shoal_world *w, world_axes *a)
{
    memset(a, 0, sizeof *a);
    a->dims = shoal_world_dims(w);
    for (int k = 0; k < 3; k++) {
        a->periodic[k] = shoal_world_axis_periodic(w, k);
        a->any_periodic |= a->periodic[k];
        a->size[k] = w->size[k];
        a->half[k] = 0.5f * w->size[k];
        a->lo[k] = w->center[k] - a->half[k];
        a->hi[k] = a->lo[k] + w->size[k];
    }
}

void world_wrap_rows(const world_axes *a, float *rows, size_t row_count)
{
    for (int k = 0; k < 3; k++) {
        if (!a->periodic[k])
            continue;
        for (size_t i = 0; i < row_count; i++)
            rows[i * 6 + (size_t)k] =
                world_wrap_f(rows[i * 6 + (size_t)k], a->lo[k], a->size[k], a->hi[k]);
    }
}

shoal_status world_check_desc(const shoal_sim_desc *d, const char *backend, shoal_error *err)
{
    shoal_status st =
        shoal_world_validate(&d->world, shoal_params_interaction_radius(d->model, &d->params), err);
    if (st)
        return st;
    if (!shoal_world_is_default(&d->world))
        return shoal_error_set(err, SHOAL_ERR_UNSUPPORTED,
                               "%s: periodic and 2D worlds are not stepped yet (issue 38: the "
                               "walkers' minimum image, the grid's wrapping cells and 2D rules "
                               "come next); the renderer and the statistics take them already",
                               backend);
    return SHOAL_OK;
}
