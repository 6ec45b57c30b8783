/* SPDX-License-Identifier: MIT */
/* The obstacle field of seed 004 (the vector-field avoidance post): a regular grid of vectors built
 * from the vertex normals of the obstacle meshes, sampled by the force kernels at each boid's cell
 * (MODELS.md, "Obstacle field"). Owns the obstacle meshes' transform math and the build; the
 * kernels only read the finished grid. The build is serial, in obstacle then vertex order, so the
 * field's bits never depend on threads. */
#include "core/alloc.h"
#include "core/check.h"
#include "sim/rules.h"
#include "sim/sim_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

shoal_transform shoal_transform_identity(void)
{
    shoal_transform t;
    memset(&t, 0, sizeof t);
    t.scale[0] = t.scale[1] = t.scale[2] = 1.0f;
    return t;
}

#define FB_REAL float
#define FB_FIELD field
#define FB_FN(name) name
#define FB_FABS fabsf
#include "sim/field_build.h"

void shoal_transform_apply(const shoal_transform *xf, const float in[3], int is_normal,
                           float out[3])
{
    float m[9];
    rotation_matrix(xf->rotation_deg, m);
    apply(m, xf, in, is_normal, out);
}

void field_free(field *f)
{
    alloc_free(f->vec);
    f->vec = NULL;
    memset(f->dims, 0, sizeof f->dims);
}

/* ---- public API (sim.h) --------------------------------------------------------------- */

static void obstacle_free(obstacle *o);
static shoal_status obstacle_copy_in(obstacle *o, const float *positions, const float *normals,
                                     size_t vertex_count, const shoal_transform *xf,
                                     shoal_error *err);

static int finite3(const float v[3]) { return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]); }

static shoal_status check_transform(const shoal_transform *xf, shoal_error *err)
{
    if (!finite3(xf->position) || !finite3(xf->rotation_deg) || !finite3(xf->scale))
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "obstacle transform: position, rotation and scale must be finite");
    for (int c = 0; c < 3; c++)
        if (fabsf(xf->position[c]) > 1e6f || fabsf(xf->scale[c]) > 1e6f ||
            fabsf(xf->rotation_deg[c]) > 1e6f)
            return shoal_error_set(err, SHOAL_ERR_INPUT,
                                   "obstacle transform: values beyond 1e6 are not supported");
    return SHOAL_OK;
}

shoal_status sim_field_rebuild(shoal_sim *s, shoal_error *err)
{
    return field_build(&s->fld, s->obstacles, s->obstacle_count, s->desc.params.field_cell,
                       s->desc.params.field_margin, err);
}

shoal_status shoal_sim_add_obstacle(shoal_sim *s, const float *positions, const float *normals,
                                    size_t vertex_count, const shoal_transform *xf,
                                    size_t *index_out, shoal_error *err)
{
    CHECK_ARG(s, "sim", err);
    if (s->obstacle_count >= SHOAL_MAX_OBSTACLES)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "more than %d obstacle meshes",
                               SHOAL_MAX_OBSTACLES);
    obstacle *o = &s->obstacles[s->obstacle_count];
    shoal_status st = obstacle_copy_in(o, positions, normals, vertex_count, xf, err);
    if (st)
        return st;
    s->obstacle_count++;
    st = sim_field_rebuild(s, err);
    if (st) {
        s->obstacle_count--;
        obstacle_free(o);
        return st;
    }
    if (index_out)
        *index_out = s->obstacle_count - 1;
    return SHOAL_OK;
}

shoal_status shoal_sim_move_obstacle(shoal_sim *s, size_t index, const shoal_transform *xf,
                                     shoal_error *err)
{
    CHECK_ARG(s, "sim", err);
    CHECK_ARG(xf, "xf", err);
    if (index >= s->obstacle_count)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "no obstacle %zu (there are %zu)", index,
                               s->obstacle_count);
    shoal_status st = check_transform(xf, err);
    if (st)
        return st;
    shoal_transform old = s->obstacles[index].xf;
    s->obstacles[index].xf = *xf;
    st = sim_field_rebuild(s, err);
    if (st)
        s->obstacles[index].xf = old;
    return st;
}

size_t shoal_sim_obstacle_count(const shoal_sim *s)
{
    if (!s)
        return 0;
    return s->obstacle_count;
}

shoal_transform shoal_sim_obstacle_transform(const shoal_sim *s, size_t index)
{
    if (!s)
        return shoal_transform_identity();
    return index < s->obstacle_count ? s->obstacles[index].xf : shoal_transform_identity();
}

shoal_field_view shoal_sim_field(const shoal_sim *s)
{
    if (!s) {
        shoal_field_view none;
        memset(&none, 0, sizeof none);
        return none;
    }
    shoal_field_view v;
    memset(&v, 0, sizeof v);
    if (s->fld.vec) {
        memcpy(v.origin, s->fld.origin, sizeof v.origin);
        memcpy(v.dims, s->fld.dims, sizeof v.dims);
        v.cell_size = s->fld.cell;
        v.vectors = s->fld.vec;
    }
    v.builds = s->fld.builds;
    return v;
}

void shoal_sim_field_sample(const shoal_sim *s, const float p[3], float out[3])
{
    if (!out)
        return;
    if (!s || !p) {
        out[0] = out[1] = out[2] = 0;
        return;
    }
    out[0] = out[1] = out[2] = 0.0f;
    if (s->fld.vec)
        rule_field_sample(&s->fld, p[0], p[1], p[2], out);
}

void sim_obstacles_free(shoal_sim *s)
{
    for (size_t i = 0; i < s->obstacle_count; i++) {
        alloc_free(s->obstacles[i].pos);
        alloc_free(s->obstacles[i].nrm);
    }
    s->obstacle_count = 0;
    field_free(&s->fld);
}

/* ---- an obstacle field on its own (shoal_obstacles) ------------------------------------ */

struct shoal_obstacles {
    obstacle obs[SHOAL_MAX_OBSTACLES];
    size_t count;
    float cell, margin; /* what the field is built with */
    field fld;
};

static void obstacle_free(obstacle *o)
{
    alloc_free(o->pos);
    alloc_free(o->nrm);
    memset(o, 0, sizeof *o);
}

/* The checks of shoal_sim_add_obstacle, then a copy of the mesh into `o`. */
static shoal_status obstacle_copy_in(obstacle *o, const float *positions, const float *normals,
                                     size_t vertex_count, const shoal_transform *xf,
                                     shoal_error *err)
{
    if (vertex_count == 0 || vertex_count > ((size_t)1 << 24) || !positions || !normals)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "obstacle mesh: expected 1 to 16M vertices with normals");
    shoal_transform t = xf ? *xf : shoal_transform_identity();
    shoal_status st = check_transform(&t, err);
    if (st)
        return st;
    for (size_t i = 0; i < 3 * vertex_count; i++)
        if (!isfinite(positions[i]) || !isfinite(normals[i]) || fabsf(positions[i]) > 1e6f ||
            fabsf(normals[i]) > 1e6f)
            return shoal_error_set(err, SHOAL_ERR_INPUT,
                                   "obstacle mesh: vertex %zu has a non-finite or huge value",
                                   i / 3);
    memset(o, 0, sizeof *o);
    o->pos = alloc_array(3 * vertex_count, sizeof(float), "obstacle mesh", err);
    o->nrm = alloc_array(3 * vertex_count, sizeof(float), "obstacle mesh", err);
    if (!o->pos || !o->nrm) {
        obstacle_free(o);
        return err ? err->status : SHOAL_ERR_NOMEM;
    }
    memcpy(o->pos, positions, 3 * vertex_count * sizeof(float));
    memcpy(o->nrm, normals, 3 * vertex_count * sizeof(float));
    o->count = vertex_count;
    o->xf = t;
    return SHOAL_OK;
}

/* A copy of the field `from` (its vectors owned by `to`). */
static shoal_status field_copy(field *to, const field *from, shoal_error *err)
{
    memset(to, 0, sizeof *to);
    if (!from->vec)
        return SHOAL_OK;
    size_t floats = 3 * (size_t)from->dims[0] * (size_t)from->dims[1] * (size_t)from->dims[2];
    float *v = alloc_array(floats, sizeof(float), "obstacle field", err);
    if (!v)
        return err ? err->status : SHOAL_ERR_NOMEM;
    memcpy(v, from->vec, floats * sizeof(float));
    *to = *from;
    to->vec = v;
    return SHOAL_OK;
}

shoal_status obstacles_take(obstacle *to, size_t *to_count, field *to_field, float cell,
                            float margin, const shoal_obstacles *from, shoal_error *err)
{
    obstacle copy[SHOAL_MAX_OBSTACLES];
    size_t n = from ? from->count : 0;
    memset(copy, 0, sizeof copy);
    shoal_status st = SHOAL_OK;
    for (size_t i = 0; i < n && !st; i++)
        st = obstacle_copy_in(&copy[i], from->obs[i].pos, from->obs[i].nrm, from->obs[i].count,
                              &from->obs[i].xf, err);
    field f;
    memset(&f, 0, sizeof f);
    if (!st) {
        /* the object's field when it was built as this sim would build it, else the sim's */
        if (n && from->cell == cell && from->margin == margin)
            st = field_copy(&f, &from->fld, err);
        else
            st = field_build(&f, copy, n, cell, margin, err);
    }
    if (st) {
        for (size_t i = 0; i < n; i++)
            obstacle_free(&copy[i]);
        field_free(&f);
        return st;
    }
    for (size_t i = 0; i < *to_count; i++)
        obstacle_free(&to[i]);
    memcpy(to, copy, sizeof copy);
    *to_count = n;
    f.builds = to_field->builds + 1;
    field_free(to_field);
    *to_field = f;
    return SHOAL_OK;
}

shoal_status shoal_obstacles_create(const shoal_params *params, shoal_obstacles **out,
                                    shoal_error *err)
{
    CHECK_ARG(out, "out", err);
    *out = NULL;
    CHECK_ARG(params, "params", err);
    if (!(params->field_cell > 0) || !isfinite(params->field_cell) ||
        !(params->field_margin >= 0) || !isfinite(params->field_margin))
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "obstacles: field_cell %g must be > 0 and field_margin %g >= 0",
                               (double)params->field_cell, (double)params->field_margin);
    shoal_obstacles *o = calloc(1, sizeof *o);
    if (!o)
        return shoal_error_set(err, SHOAL_ERR_NOMEM, "out of memory for an obstacle field");
    o->cell = params->field_cell;
    o->margin = params->field_margin;
    *out = o;
    return SHOAL_OK;
}

void shoal_obstacles_destroy(shoal_obstacles *o)
{
    if (!o)
        return;
    for (size_t i = 0; i < o->count; i++)
        obstacle_free(&o->obs[i]);
    field_free(&o->fld);
    free(o);
}

shoal_status shoal_obstacles_add(shoal_obstacles *o, const float *positions, const float *normals,
                                 size_t vertex_count, const shoal_transform *xf, size_t *index_out,
                                 shoal_error *err)
{
    CHECK_ARG(o, "obstacles", err);
    if (o->count >= SHOAL_MAX_OBSTACLES)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "more than %d obstacle meshes",
                               SHOAL_MAX_OBSTACLES);
    obstacle *ob = &o->obs[o->count];
    shoal_status st = obstacle_copy_in(ob, positions, normals, vertex_count, xf, err);
    if (st)
        return st;
    o->count++;
    st = field_build(&o->fld, o->obs, o->count, o->cell, o->margin, err);
    if (st) {
        o->count--;
        obstacle_free(ob);
        return st;
    }
    if (index_out)
        *index_out = o->count - 1;
    return SHOAL_OK;
}

shoal_status shoal_obstacles_move(shoal_obstacles *o, size_t index, const shoal_transform *xf,
                                  shoal_error *err)
{
    CHECK_ARG(o, "obstacles", err);
    CHECK_ARG(xf, "xf", err);
    if (index >= o->count)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "no obstacle %zu (there are %zu)", index,
                               o->count);
    shoal_status st = check_transform(xf, err);
    if (st)
        return st;
    shoal_transform old = o->obs[index].xf;
    o->obs[index].xf = *xf;
    st = field_build(&o->fld, o->obs, o->count, o->cell, o->margin, err);
    if (st)
        o->obs[index].xf = old;
    return st;
}

size_t shoal_obstacles_count(const shoal_obstacles *o) { return o ? o->count : 0; }

static shoal_field_view field_view(const field *f)
{
    shoal_field_view v;
    memset(&v, 0, sizeof v);
    if (f->vec) {
        memcpy(v.origin, f->origin, sizeof v.origin);
        memcpy(v.dims, f->dims, sizeof v.dims);
        v.cell_size = f->cell;
        v.vectors = f->vec;
    }
    v.builds = f->builds;
    return v;
}

shoal_field_view shoal_obstacles_field(const shoal_obstacles *o)
{
    if (!o) {
        shoal_field_view none;
        memset(&none, 0, sizeof none);
        return none;
    }
    return field_view(&o->fld);
}

shoal_status shoal_sim_set_obstacles(shoal_sim *s, const shoal_obstacles *o, shoal_error *err)
{
    CHECK_ARG(s, "sim", err);
    return obstacles_take(s->obstacles, &s->obstacle_count, &s->fld, s->desc.params.field_cell,
                          s->desc.params.field_margin, o, err);
}
