/* SPDX-License-Identifier: MIT */
/* The float64 reference (shoal/sim64.h): sim/rules.h compiled for double (sim/real64.h through
 * sim/ref_kernel.h), its grid, the obstacle field built in double (sim/field_build.h, the
 * template field.c uses), the step constants, the targets and the predators in double, and
 * the shoal_sim64 object. A boid's result depends on the state and its candidate order only
 * (cell-major, row-minor over a grid that is a function of the state), so the bits do not depend on
 * threads. Owns the reference's memory; shares no table with anything. */
#include "core/alloc.h"
#include "core/parallel.h"
#include "core/rng.h"
#include "sim/sim64_internal.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define SIMD_REAL_HEADER "sim/real64.h"
#define RFN(name) name##_f64
#include "sim/ref_kernel.h"

/* ---- parameters in double ------------------------------------------------------------ */

/* params64 mirrors shoal_params field for field (every float a double): a field added to one
 * and not the other stops the build here. */
#define P64_CHECK(f)                                                                               \
    _Static_assert(offsetof(params64, f) == 2 * offsetof(shoal_params, f),                         \
                   "params64 must mirror shoal_params: " #f);
P64_CHECK(sep_radius)
P64_CHECK(wall_weight)
P64_CHECK(wall_size)
P64_CHECK(neighbor_radius)
P64_CHECK(target_count)
P64_CHECK(fov)
P64_CHECK(box_max)
P64_CHECK(coh_dist2)
P64_CHECK(max_force)
P64_CHECK(boundary_center)
P64_CHECK(avoid_force)
P64_CHECK(sphere_count)
P64_CHECK(spheres)
P64_CHECK(field_cell)
P64_CHECK(predator_count)
P64_CHECK(flee_weight)
P64_CHECK(predator_spread)
P64_CHECK(init_vel_radius)
/* the floats of shoal_params are everything before defaults_of (its model tag, no parameter) */
#define P64_FLOATS (offsetof(shoal_params, defaults_of) / sizeof(float))
_Static_assert(sizeof(params64) == 2 * offsetof(shoal_params, defaults_of) &&
                   offsetof(shoal_params, defaults_of) % sizeof(float) == 0 &&
                   sizeof(sphere64) == 2 * sizeof(shoal_sphere),
               "params64 must mirror shoal_params (every parameter a float)");

void params64_from(const shoal_params *p, params64 *out)
{
    float f[P64_FLOATS];
    double d[P64_FLOATS];
    memcpy(f, p, sizeof f);
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        d[i] = f[i];
    memcpy(out, d, sizeof d);
}

double *params64_field(params64 *p, const shoal_param_info *info)
{
    return (double *)((char *)p + 2 * info->offset);
}

/* ---- the obstacle field in double (sim/field_build.h) --------------------------------- */

void field_free64(field64 *f)
{
    alloc_free(f->vec);
    f->vec = NULL;
    memset(f->dims, 0, sizeof f->dims);
}

#define FB_REAL double
#define FB_FIELD field64
#define FB_FN(name) name##64
#define FB_FABS fabs
#include "sim/field_build.h"

/* ---- the step constants ------------------------------------------------------------- */

void sim64_targets(const params64 *p, int target_count, uint64_t seed, double t_s, double *xyz)
{
    rule_targets(p, target_count, seed, t_s, xyz);
}

/* Each model's constants and largest squared radius in double (its NAME_consts and
 * NAME_reach2, the functions the float sim runs, here on params64): the reference's table,
 * indexed by the enum. */
typedef struct ref_model {
    void (*consts)(const params64 *p, model_consts64 *mc);
    double (*reach2)(const params64 *p, const model_consts64 *mc);
} ref_model;
#define REF_MODEL_ENTRY(id, M) [id] = {M##_consts, M##_reach2},
static const ref_model ref_models[] = {SIM_MODELS(REF_MODEL_ENTRY)};
#undef REF_MODEL_ENTRY
SIM_MODEL_TABLE_CHECK(ref_models);

void consts64_prepare(ref_env *env, shoal_model model, double dt, double t_s, uint64_t seed,
                      const uint8_t *pinned, const double (*pin)[3], int predator_count,
                      const double (*pred_p)[3])
{
    const params64 *p = &env->prm;
    model_consts64 *mc = &env->mc;
    memset(mc, 0, sizeof *mc);
    env->model = model;
    mc->dt = dt;
    ref_models[model].consts(p, mc);
    mc->reach2 = ref_models[model].reach2(p, mc);
    if (mc->target_count > 0) {
        sim64_targets(p, mc->target_count, seed, t_s, &mc->targets[0][0]);
        for (int k = 0; k < mc->target_count && pinned && pin; k++)
            if (pinned[k])
                memcpy(mc->targets[k], pin[k], sizeof mc->targets[k]);
    }
    mc->predator_count = predator_count;
    mc->flee_r = p->flee_radius;
    mc->flee_r2 = p->flee_radius * p->flee_radius;
    if (predator_count > 0)
        memcpy(mc->predators, pred_p, (size_t)predator_count * sizeof mc->predators[0]);
}

void ref_env_refresh(ref_env *env)
{
    env->mc.reach2 = ref_models[env->model].reach2(&env->prm, &env->mc);
}

/* ---- one boid ------------------------------------------------------------------------- */

void ref64_boid(const ref_env *env, const ref_cands *c, const double in[6], double out[6])
{
    vf3 p = v3_set1(in[0], in[1], in[2]), v = v3_set1(in[3], in[4], in[5]);
    boid_step_f64(env, c, &p, &v, NULL);
    out[0] = p.x;
    out[1] = p.y;
    out[2] = p.z;
    out[3] = v.x;
    out[4] = v.y;
    out[5] = v.z;
}

/* ---- the grid ------------------------------------------------------------------------- */

void ref_grid_free(ref_grid *g)
{
    alloc_free(g->cell_start);
    alloc_free(g->row_of);
    alloc_free(g->slot_of);
    for (int k = 0; k < 6; k++)
        alloc_free(g->x[k]);
    memset(g, 0, sizeof *g);
}

static int32_t ref_cell_coord(const ref_grid *g, double x, int c)
{
    double f = floor((x - g->origin[c]) / g->cell);
    if (!(f >= 0))
        return 0;
    if (f >= (double)(g->dims[c] - 1))
        return g->dims[c] - 1;
    return (int32_t)f;
}

static size_t ref_cell_index(const ref_grid *g, int32_t x, int32_t y, int32_t z)
{
    return (size_t)x + (size_t)g->dims[0] * ((size_t)y + (size_t)g->dims[1] * (size_t)z);
}

shoal_status ref_grid_build(ref_grid *g, const double *rows, size_t n, double radius, int brute,
                            shoal_error *err)
{
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) {
            double x = rows[i * 6 + (size_t)c];
            lo[c] = x < lo[c] ? x : lo[c];
            hi[c] = x > hi[c] ? x : hi[c];
        }
    /* a little over the radius, so that the rounding of the cell coordinates can never put
     * two boids within the radius two cells apart */
    double cell = radius * (1.0 + 1e-9);
    int one = brute || !(cell > 0) || !isfinite(cell);
    double limit = 8.0 * (double)n + 64.0, cells = 1;
    int32_t dims[3] = {1, 1, 1};
    for (int pass = 0; !one && pass < 2100; pass++) {
        cells = 1;
        for (int c = 0; c < 3; c++) {
            double d = floor((hi[c] - lo[c]) / cell) + 1.0;
            dims[c] = d < 2e9 ? (int32_t)d : 2000000000;
            cells *= d;
        }
        if (cells <= limit)
            break;
        cell *= 2.0; /* a school spread thin: bigger cells (still >= the radius) */
    }
    if (one || !(cells <= limit)) {
        dims[0] = dims[1] = dims[2] = 1;
        cell = INFINITY;
    }
    size_t cell_count = (size_t)dims[0] * (size_t)dims[1] * (size_t)dims[2];
    if (cell_count + 1 > g->cap_cells) {
        alloc_free(g->cell_start);
        g->cap_cells = 0;
        if (!(g->cell_start = alloc_array(cell_count + 1, sizeof(uint32_t), "reference grid", err)))
            return err ? err->status : SHOAL_ERR_NOMEM;
        g->cap_cells = cell_count + 1;
    }
    if (n > g->cap_count) {
        alloc_free(g->row_of);
        alloc_free(g->slot_of);
        for (int k = 0; k < 6; k++) {
            alloc_free(g->x[k]);
            g->x[k] = NULL;
        }
        g->cap_count = 0;
        int ok = (g->row_of = alloc_array(n, sizeof(uint32_t), "reference grid", err)) != NULL;
        ok = ok && (g->slot_of = alloc_array(n, sizeof(uint32_t), "reference grid", err));
        for (int k = 0; k < 6 && ok; k++)
            ok = (g->x[k] = alloc_array(n, sizeof(double), "reference grid", err)) != NULL;
        if (!ok)
            return err ? err->status : SHOAL_ERR_NOMEM;
        g->cap_count = n;
    }
    for (int c = 0; c < 3; c++) {
        g->origin[c] = isfinite(lo[c]) ? lo[c] : 0.0;
        g->dims[c] = dims[c];
    }
    g->cell = cell;
    g->cell_count = cell_count;
    g->count = n;
    /* counting sort, stable: cell-major, input-row-minor */
    memset(g->cell_start, 0, (cell_count + 1) * sizeof(uint32_t));
    for (size_t i = 0; i < n; i++) {
        const double *r = rows + i * 6;
        size_t ci = cell_count == 1
                        ? 0
                        : ref_cell_index(g, ref_cell_coord(g, r[0], 0), ref_cell_coord(g, r[1], 1),
                                         ref_cell_coord(g, r[2], 2));
        g->slot_of[i] = (uint32_t)ci; /* the cell, for now */
        g->cell_start[ci + 1]++;
    }
    for (size_t c = 0; c < cell_count; c++)
        g->cell_start[c + 1] += g->cell_start[c];
    for (size_t i = 0; i < n; i++) {
        uint32_t ci = g->slot_of[i];
        uint32_t slot = g->cell_start[ci]++;
        g->slot_of[i] = slot;
        g->row_of[slot] = (uint32_t)i;
        for (int k = 0; k < 6; k++)
            g->x[k][slot] = rows[i * 6 + (size_t)k];
    }
    /* cell_start was advanced to each cell's end: shift back */
    for (size_t c = cell_count; c > 0; c--)
        g->cell_start[c] = g->cell_start[c - 1];
    g->cell_start[0] = 0;
    return SHOAL_OK;
}

int ref_grid_runs(const ref_grid *g, const double p[3], uint32_t rb[9], uint32_t re[9])
{
    if (g->cell_count == 1) {
        rb[0] = 0;
        re[0] = (uint32_t)g->count;
        return 1;
    }
    int32_t cx = ref_cell_coord(g, p[0], 0), cy = ref_cell_coord(g, p[1], 1),
            cz = ref_cell_coord(g, p[2], 2);
    int32_t x0 = cx > 0 ? cx - 1 : 0, x1 = cx + 1 < g->dims[0] ? cx + 1 : g->dims[0] - 1;
    int runs = 0;
    for (int32_t z = cz - 1; z <= cz + 1; z++) {
        if (z < 0 || z >= g->dims[2])
            continue;
        for (int32_t y = cy - 1; y <= cy + 1; y++) {
            if (y < 0 || y >= g->dims[1])
                continue;
            uint32_t b = g->cell_start[ref_cell_index(g, x0, y, z)];
            uint32_t e = g->cell_start[ref_cell_index(g, x1, y, z) + 1];
            if (e > b) {
                rb[runs] = b;
                re[runs] = e;
                runs++;
            }
        }
    }
    return runs;
}

/* ---- a school's step ------------------------------------------------------------------- */

typedef struct school_ctx {
    const ref_env *env;
    const ref_grid *g;
    const double *rows;
    double *out;
    refb_out *outb;
} school_ctx;

/* Worker threads: boids [b, e) (input rows); writes only their out rows. */
static void school_range(void *p, int64_t b, int64_t e, int thread_index)
{
    (void)thread_index;
    const school_ctx *c = p;
    const ref_grid *g = c->g;
    for (int64_t i = b; i < e; i++) {
        const double *in = c->rows + (size_t)i * 6;
        uint32_t rb[9], re[9];
        ref_cands cands = {{g->x[0], g->x[1], g->x[2], g->x[3], g->x[4], g->x[5]}, rb, re, 0};
        cands.runs = ref_grid_runs(g, in, rb, re);
        if (c->outb) {
            refb_out *o = &c->outb[i];
            refb_boid(c->env, &cands, in, o);
            if (o->tie_cand >= 0)
                o->tie_cand = g->row_of[o->tie_cand]; /* a slot: its input row */
            if (c->out)
                memcpy(c->out + (size_t)i * 6, o->value, 6 * sizeof(double));
        } else {
            ref64_boid(c->env, &cands, in, c->out + (size_t)i * 6);
        }
    }
}

void ref_school_step(const ref_env *env, const ref_grid *g, const double *rows, double *out,
                     refb_out *outb, int thread_count)
{
    school_ctx c = {env, g, rows, out, outb};
    parallel_for_n((int64_t)g->count, 64, school_range, &c, thread_count);
}

/* ---- predators in double ---------------------------------------------------------------- */

void predators64_reset(const params64 *p, int count, double (*pos)[3], double (*vel)[3])
{
    for (int k = 0; k < count; k++) {
        rule_predator_start(p, k, count, pos[k]);
        vel[k][0] = vel[k][1] = vel[k][2] = 0.0;
    }
}

void predators64_step(const params64 *p, int count, double (*pos)[3], double (*vel)[3],
                      const double *rows, size_t n, double dt)
{
    if (count <= 0 || n == 0)
        return;
    double tgt[SHOAL_MAX_PREDATORS][3];
    double centre[3] = {0, 0, 0};
    if (p->predator_chase >= 1.0) {
        for (size_t i = 0; i < n; i++)
            for (int c = 0; c < 3; c++)
                centre[c] += rows[i * 6 + (size_t)c];
        for (int c = 0; c < 3; c++)
            centre[c] /= (double)n;
    }
    for (int k = 0; k < count; k++) {
        if (p->predator_chase >= 1.0) {
            memcpy(tgt[k], centre, sizeof centre);
            continue;
        }
        /* the nearest boid; ties go to the lowest input row (rows are in row order) */
        double best = INFINITY;
        size_t bi = 0;
        for (size_t i = 0; i < n; i++) {
            const double *r = rows + i * 6;
            double d2 = rule_predator_d2(r[0], r[1], r[2], pos[k]);
            if (d2 < best) {
                best = d2;
                bi = i;
            }
        }
        memcpy(tgt[k], rows + bi * 6, 3 * sizeof(double));
    }
    double turn = rule_predator_turn(p, dt);
    for (int k = 0; k < count; k++)
        rule_predator_move(p, pos[k], vel[k], tgt[k], turn, dt);
}

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
    if (d->thread_count < 0 || d->thread_count > SHOAL_MAX_THREADS)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "thread count %d outside [0, %d]",
                               d->thread_count, SHOAL_MAX_THREADS);
    if (d->neighbors != SHOAL_NEIGHBORS_GRID && d->neighbors != SHOAL_NEIGHBORS_BRUTE)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "invalid neighbour method");
    return shoal_params_validate(d->model, &d->params, err);
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
