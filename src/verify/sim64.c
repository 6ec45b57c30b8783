/* SPDX-License-Identifier: MIT */
/* The shoal_sim64 object (shoal/sim64.h): a school stepped by the float64 reference (ref64.c)
 * over its own grid (ref_grid.c), with its obstacle meshes and field in double, its predators
 * and its pinned targets. Owns all its memory; shares no table with anything. */
#include "core/alloc.h"
#include "core/parallel.h"
#include "sim/world.h"
#include "verify/ref_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the object ------------------------------------------------------------------------- */

struct shoal_sim64 {
    shoal_sim_desc desc;
    ref_env env;
    size_t count;
    double *rows, *next;
    ref_grid grid;
    obstacle obstacles[SHOAL_MAX_OBSTACLES];
    size_t obstacle_count;
    field64 fld;
    int predator_count;
    double pred_p[SHOAL_MAX_PREDATORS][3], pred_v[SHOAL_MAX_PREDATORS][3];
    uint8_t target_pinned[SHOAL_MAX_TARGETS];
    double target_pin[SHOAL_MAX_TARGETS][3];
    uint64_t steps_done;
};

static shoal_status sim64_validate(const shoal_sim_desc *d, shoal_error *err)
{
    if ((unsigned)d->model >= SHOAL_MODEL_COUNT)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "invalid model %d", (int)d->model);
    if (d->boid_count < 1 || d->boid_count > (size_t)UINT32_MAX - 64)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "boid count %zu outside [1, %u]",
                               d->boid_count, UINT32_MAX - 64);
    if (!(d->dt_s > 0) || !isfinite(d->dt_s) || d->dt_s > 1e6)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "dt must be finite and > 0 (got %g)", d->dt_s);
    if (!isfinite(d->t0_s) || fabs(d->t0_s) > 1e15)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "t0 %g: expected a finite time in [-1e15, 1e15] s", d->t0_s);
    char why[160];
    if (parallel_check_threads(d->thread_count, why, sizeof why))
        return shoal_error_set(err, SHOAL_ERR_INPUT, "%s", why);
    if (d->neighbors != SHOAL_NEIGHBORS_GRID && d->neighbors != SHOAL_NEIGHBORS_BRUTE)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "invalid neighbour method");
    shoal_status st = shoal_params_validate(d->model, &d->params, err);
    return st ? st : world_check_desc(d, "shoal_sim64", err);
}

void shoal_sim64_destroy(shoal_sim64 *s)
{
    if (!s)
        return;
    alloc_free(s->rows);
    alloc_free(s->next);
    ref_grid_free(&s->grid);
    for (size_t i = 0; i < s->obstacle_count; i++) {
        alloc_free(s->obstacles[i].pos);
        alloc_free(s->obstacles[i].nrm);
    }
    field_free64(&s->fld);
    free(s);
}

shoal_status shoal_sim64_create(const shoal_sim_desc *desc, shoal_sim64 **out, shoal_error *err)
{
    *out = NULL;
    shoal_status st = sim64_validate(desc, err);
    if (st)
        return st;
    shoal_sim64 *s = calloc(1, sizeof *s);
    if (!s)
        return shoal_error_set(err, SHOAL_ERR_NOMEM, "out of memory allocating the simulation");
    s->desc = *desc;
    s->count = desc->boid_count;
    params64_from(&desc->params, &s->env.prm);
    s->rows = alloc_array_zero(s->count * 6, sizeof(double), "boid state", err);
    s->next = s->rows ? alloc_array_zero(s->count * 6, sizeof(double), "boid state", err) : NULL;
    if (!s->next) {
        shoal_sim64_destroy(s);
        return err ? err->status : SHOAL_ERR_NOMEM;
    }
    s->predator_count = (int)desc->params.predator_count;
    predators64_reset(&s->env.prm, s->predator_count, s->pred_p, s->pred_v);
    *out = s;
    return SHOAL_OK;
}

size_t shoal_sim64_count(const shoal_sim64 *s) { return s->count; }

double shoal_sim64_time(const shoal_sim64 *s)
{
    return s->desc.t0_s + (double)s->steps_done * s->desc.dt_s;
}

shoal_status shoal_sim64_set_state(shoal_sim64 *s, const double *rows, shoal_error *err)
{
    static const char *const names[6] = {"px", "py", "pz", "vx", "vy", "vz"};
    for (size_t i = 0; i < s->count * 6; i++)
        if (!isfinite(rows[i]))
            return shoal_error_set(err, SHOAL_ERR_INPUT, "state: row %zu column %d (%s) is %s",
                                   i / 6, (int)(i % 6), names[i % 6],
                                   isnan(rows[i]) ? "nan"
                                   : rows[i] > 0  ? "inf"
                                                  : "-inf");
    memcpy(s->rows, rows, s->count * 6 * sizeof(double));
    predators64_reset(&s->env.prm, s->predator_count, s->pred_p, s->pred_v);
    return SHOAL_OK;
}

shoal_status shoal_sim64_set_state_f32(shoal_sim64 *s, const float *rows, shoal_error *err)
{
    shoal_status st = shoal_state_check_finite(rows, s->count, "state", err);
    if (st)
        return st;
    for (size_t i = 0; i < s->count * 6; i++)
        s->rows[i] = rows[i];
    predators64_reset(&s->env.prm, s->predator_count, s->pred_p, s->pred_v);
    return SHOAL_OK;
}

void shoal_sim64_get_state(const shoal_sim64 *s, double *rows)
{
    memcpy(rows, s->rows, s->count * 6 * sizeof(double));
}

/* The interaction radius the rules need the grid to cover (a hypothesis of verify.c may
 * have changed it: ref_env_refresh). */
double ref_env_radius(const ref_env *env) { return sqrt(env->mc.reach2); }

shoal_status shoal_sim64_step(shoal_sim64 *s, int step_count, shoal_error *err)
{
    for (int k = 0; k < step_count; k++) {
        consts64_prepare(&s->env, s->desc.model, s->desc.dt_s, shoal_sim64_time(s), s->desc.seed,
                         s->target_pinned, (const double(*)[3])s->target_pin, s->predator_count,
                         (const double(*)[3])s->pred_p);
        s->env.fld = s->fld.vec ? &s->fld : NULL;
        shoal_status st = ref_grid_build(&s->grid, s->rows, s->count, ref_env_radius(&s->env),
                                         s->desc.neighbors == SHOAL_NEIGHBORS_BRUTE, err);
        if (st)
            return st;
        ref_school_step(&s->env, &s->grid, s->rows, s->next, NULL, s->desc.thread_count);
        for (size_t i = 0; i < s->count * 6; i++)
            if (!isfinite(s->next[i]))
                return shoal_error_set(err, SHOAL_ERR_NONFINITE,
                                       "non-finite value in boid %zu (input row) at step %llu "
                                       "(t = %.6f s); state left as before that step",
                                       i / 6, (unsigned long long)s->steps_done + 1,
                                       shoal_sim64_time(s));
        predators64_step(&s->env.prm, s->predator_count, s->pred_p, s->pred_v, s->rows, s->count,
                         s->desc.dt_s);
        double *t = s->rows;
        s->rows = s->next;
        s->next = t;
        s->steps_done++;
    }
    return SHOAL_OK;
}

static shoal_status sim64_rebuild_field(shoal_sim64 *s, shoal_error *err)
{
    return field_build64(&s->fld, s->obstacles, s->obstacle_count, s->desc.params.field_cell,
                         s->desc.params.field_margin, err);
}

shoal_status shoal_sim64_add_obstacle(shoal_sim64 *s, const float *positions, const float *normals,
                                      size_t vertex_count, const shoal_transform *xf,
                                      shoal_error *err)
{
    if (s->obstacle_count >= SHOAL_MAX_OBSTACLES)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "more than %d obstacle meshes",
                               SHOAL_MAX_OBSTACLES);
    if (vertex_count == 0 || vertex_count > ((size_t)1 << 24) || !positions || !normals)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "obstacle mesh: expected 1 to 16M vertices with normals");
    for (size_t i = 0; i < 3 * vertex_count; i++)
        if (!isfinite(positions[i]) || !isfinite(normals[i]))
            return shoal_error_set(err, SHOAL_ERR_INPUT,
                                   "obstacle mesh: vertex %zu has a non-finite value", i / 3);
    obstacle *o = &s->obstacles[s->obstacle_count];
    o->pos = alloc_array(3 * vertex_count, sizeof(float), "obstacle mesh", err);
    o->nrm = o->pos ? alloc_array(3 * vertex_count, sizeof(float), "obstacle mesh", err) : NULL;
    if (!o->nrm) {
        alloc_free(o->pos);
        o->pos = NULL;
        return err ? err->status : SHOAL_ERR_NOMEM;
    }
    memcpy(o->pos, positions, 3 * vertex_count * sizeof(float));
    memcpy(o->nrm, normals, 3 * vertex_count * sizeof(float));
    o->count = vertex_count;
    o->xf = xf ? *xf : shoal_transform_identity();
    s->obstacle_count++;
    shoal_status st = sim64_rebuild_field(s, err);
    if (st) {
        s->obstacle_count--;
        alloc_free(o->pos);
        alloc_free(o->nrm);
        memset(o, 0, sizeof *o);
    }
    return st;
}

shoal_status shoal_sim64_copy_obstacles(shoal_sim64 *s, const shoal_sim *from, shoal_error *err)
{
    for (size_t i = 0; i < from->obstacle_count; i++) {
        const obstacle *o = &from->obstacles[i];
        shoal_status st = shoal_sim64_add_obstacle(s, o->pos, o->nrm, o->count, &o->xf, err);
        if (st)
            return st;
    }
    return SHOAL_OK;
}

shoal_status shoal_sim64_set_checkpoint(shoal_sim64 *s, const shoal_sim_checkpoint *ck,
                                        shoal_error *err)
{
    if (ck->predator_count != (int32_t)s->desc.params.predator_count)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "checkpoint has %d predators, the parameters say %d",
                               (int)ck->predator_count, (int)s->desc.params.predator_count);
    if (ck->steps_done > ((uint64_t)1 << 53))
        return shoal_error_set(err, SHOAL_ERR_INPUT, "checkpoint step count %llu is too large",
                               (unsigned long long)ck->steps_done);
    for (int k = 0; k < ck->predator_count; k++)
        for (int c = 0; c < 3; c++)
            if (!isfinite(ck->predator_pos[k][c]) || !isfinite(ck->predator_vel[k][c]))
                return shoal_error_set(err, SHOAL_ERR_INPUT, "checkpoint predator %d is not finite",
                                       k);
    for (int k = 0; k < SHOAL_MAX_TARGETS; k++)
        for (int c = 0; c < 3; c++)
            if (ck->target_pinned[k] > 1 || !isfinite(ck->target_pin[k][c]))
                return shoal_error_set(err, SHOAL_ERR_INPUT,
                                       "checkpoint heading target %d is not valid", k);
    s->steps_done = ck->steps_done;
    s->predator_count = ck->predator_count;
    for (int k = 0; k < SHOAL_MAX_PREDATORS; k++)
        for (int c = 0; c < 3; c++) {
            s->pred_p[k][c] = ck->predator_pos[k][c];
            s->pred_v[k][c] = ck->predator_vel[k][c];
        }
    for (int k = 0; k < SHOAL_MAX_TARGETS; k++) {
        s->target_pinned[k] = ck->target_pinned[k];
        for (int c = 0; c < 3; c++)
            s->target_pin[k][c] = ck->target_pin[k][c];
    }
    return SHOAL_OK;
}

size_t shoal_sim64_predators(const shoal_sim64 *s, double *pos, double *vel, size_t max)
{
    size_t n = (size_t)s->predator_count;
    for (size_t k = 0; k < n && k < max; k++) {
        if (pos)
            memcpy(pos + 3 * k, s->pred_p[k], 3 * sizeof(double));
        if (vel)
            memcpy(vel + 3 * k, s->pred_v[k], 3 * sizeof(double));
    }
    return n;
}

shoal_status shoal_sim64_set_predators(shoal_sim64 *s, const double *pos, const double *vel,
                                       size_t count, shoal_error *err)
{
    if (count != (size_t)s->predator_count)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "%zu predators given, the parameters say %d",
                               count, s->predator_count);
    for (size_t i = 0; i < 3 * count; i++)
        if (!isfinite(pos[i]) || !isfinite(vel[i]))
            return shoal_error_set(err, SHOAL_ERR_INPUT, "predator %zu is not finite", i / 3);
    for (size_t k = 0; k < count; k++)
        for (int c = 0; c < 3; c++) {
            s->pred_p[k][c] = pos[3 * k + (size_t)c];
            s->pred_v[k][c] = vel[3 * k + (size_t)c];
        }
    return SHOAL_OK;
}
