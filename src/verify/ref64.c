/* SPDX-License-Identifier: MIT */
/* The float64 reference's rules (shoal/sim64.h, docs/VERIFY.md): sim/rules.h compiled for
 * double (verify/real64.h through verify/ref_kernel.h, every model's walker), the parameters
 * and the obstacle field in double (sim/field_build.h, the template field.c uses), the step
 * constants, a school's step over the reference's grid and the predators in double. A boid's
 * result depends on the state and its candidate order only, so the bits do not depend on
 * threads. Owns no state. */
#include "core/alloc.h"
#include "core/parallel.h"
#include "verify/ref_internal.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define SIMD_REAL_HEADER "verify/real64.h"
#define RFN(name) name##_f64
#include "verify/ref_kernel.h"

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
    mc->seed = seed;
    mc->step = sim_step_index(t_s, dt);
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

void ref64_boid(const ref_env *env, const ref_cands *c, uint32_t row, const double in[6],
                double out[6])
{
    vf3 p = v3_set1(in[0], in[1], in[2]), v = v3_set1(in[3], in[4], in[5]);
    boid_step_f64(env, c, row, &p, &v, NULL);
    out[0] = p.x;
    out[1] = p.y;
    out[2] = p.z;
    out[3] = v.x;
    out[4] = v.y;
    out[5] = v.z;
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
    if (c->env->cancel && *c->env->cancel)
        return; /* cancelled: the caller drops the step */
    for (int64_t i = b; i < e; i++) {
        const double *in = c->rows + (size_t)i * 6;
        uint32_t rb[9], re[9];
        ref_cands cands = {{g->x[0], g->x[1], g->x[2], g->x[3], g->x[4], g->x[5]}, rb, re, 0};
        cands.runs = ref_grid_runs(g, in, rb, re);
        if (c->outb) {
            refb_out *o = &c->outb[i];
            refb_boid(c->env, &cands, (uint32_t)i, in, o);
            if (o->tie_cand >= 0)
                o->tie_cand = g->row_of[o->tie_cand]; /* a slot: its input row */
            if (c->out)
                memcpy(c->out + (size_t)i * 6, o->value, 6 * sizeof(double));
        } else {
            ref64_boid(c->env, &cands, (uint32_t)i, in, c->out + (size_t)i * 6);
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
