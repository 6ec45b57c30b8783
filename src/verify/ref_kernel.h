/* SPDX-License-Identifier: MIT */
/* One boid's step in the float64 reference: the walk over its candidates and the calls of a
 * model's adapter (sim/rules.h) in the order forces_kernel.h makes them (begin, near and pair
 * per candidate in the candidate order, late right after its pair, extras, finish), at W = 1,
 * generated for every model of sim/models.h. Written once against the wide type and
 * instantiated twice: ref64.c with verify/real64.h (double), ref_bound.c with
 * verify/real_bound.h (double with a float32 rounding bound). The includer has included
 * verify/ref_internal.h,
 * defined SIMD_REAL_HEADER and RFN(name) (its names), and includes this file once. */

#define RULE_PARAMS params64
#define RULE_SPHERE sphere64
#define RULE_CONSTS model_consts64
#define RULE_FIELD field64
#define RULE_REFERENCE 1
/* |a - b| within the rounding float32 may make of numbers of these sizes (the models'
 * NAME_finish_tie) */
#define REF_NEAR(a, b, size) (fabs((a) - (b)) <= 4.0 * BOUND_RHO * (fabs(a) + fabs(b) + (size)))
#include "core/simd.h"
#include "sim/models.h"
#include "sim/rules.h"

/* The accumulators' tie so far, per term (real_bound.h only): how much each term's sums may
 * still move because a comparison sat within rounding of its threshold. */
typedef struct RFN(ties) {
    double t[SHOAL_TERM_COUNT];
} RFN(ties);

/* Records the candidate whose pair raised some term's tie the most (bound only). */
typedef struct RFN(tie_track) {
    double best;
    int64_t cand;
    int term;
} RFN(tie_track);

static void RFN(tie_note)(RFN(tie_track) * tr, const RFN(ties) * before, const RFN(ties) * after,
                          int64_t cand)
{
    for (int k = 0; k < SHOAL_TERM_COUNT; k++) {
        double d = after->t[k] - before->t[k];
        if (d > tr->best) {
            tr->best = d;
            tr->cand = cand;
            tr->term = k;
        }
    }
}

/* The obstacle field's vector at p (times nothing: rule_field_term weights it). The bound
 * build also samples the corners of p's rounding box: a boid within rounding of a cell edge
 * may read the neighbouring cell in float32, and the difference is its tie. */
static vf3 RFN(field_vec)(const ref_env *env, vf3 p)
{
    double o[3];
    double px = vf_lane(p.x, 0), py = vf_lane(p.y, 0), pz = vf_lane(p.z, 0);
    rule_field_sample(env->fld, px, py, pz, o);
    vf3 r = v3_set1(o[0], o[1], o[2]);
#if defined(REF_BOUND)
    double dx = BOUND_RHO * (bnd_e(p.x) + __builtin_fabs(px)) + p.x.t;
    double dy = BOUND_RHO * (bnd_e(p.y) + __builtin_fabs(py)) + p.y.t;
    double dz = BOUND_RHO * (bnd_e(p.z) + __builtin_fabs(pz)) + p.z.t;
    double tie = 0;
    for (int k = 0; k < 8; k++) {
        double q[3];
        rule_field_sample(env->fld, px + (k & 1 ? dx : -dx), py + (k & 2 ? dy : -dy),
                          pz + (k & 4 ? dz : -dz), q);
        double d =
            __builtin_fabs(q[0] - o[0]) + __builtin_fabs(q[1] - o[1]) + __builtin_fabs(q[2] - o[2]);
        tie = d > tie ? d : tie;
    }
    r.x.t = r.y.t = r.z.t = tie;
#endif
    return r;
}

static void RFN(extras)(const ref_env *env, vf3 p, const uint32_t *row, rule_extras *x)
{
    x->field_on = env->fld != NULL && env->fld->vec != NULL;
    x->flee_on = env->mc.predator_count > 0;
    x->field = x->flee = v3_zero();
    x->rows = row;
    x->lanes = 1;
    if (x->field_on)
        x->field = rule_field_term(&env->prm, RFN(field_vec)(env, p));
    if (x->flee_on)
        x->flee = rule_flee_term(&env->prm, &env->mc, (const double(*)[3])env->mc.predators, p);
}

/* Candidate j is so far beyond every threshold of the model (reach2: its largest squared
 * radius) that its pair adds nothing and no comparison of it can be a tie: the pair is
 * skipped before any rule arithmetic (a plain double test with a margin far above the
 * rounding bound). Skipping a pair that adds nothing changes no bit. */
static int RFN(far)(const double *p, const double *X, const double *Y, const double *Z, uint32_t j,
                    double reach2)
{
    double dx = p[0] - X[j], dy = p[1] - Y[j], dz = p[2] - Z[j];
    return (dx * dx + dy * dy) + dz * dz > reach2 * (1.0 + 1e-4);
}

/* The sum of a model's ties over its terms */
static double RFN(ties_sum)(const RFN(ties) * t)
{
    double s = 0;
    for (int k = 0; k < SHOAL_TERM_COUNT; k++)
        s += t->t[k];
    return s;
}

/* The step of the boid at (*pp, *vp) in model M over the candidates c; tr (may be NULL)
 * records ties: boid_M for every model of the list. A candidate no lane is near is skipped
 * (the reference is one lane). */
#define RWALK_MODEL(id, M)                                                                         \
    static void RFN(boid_##M)(const ref_env *env, const ref_cands *c, uint32_t row, vf3 *pp,       \
                              vf3 *vp, RFN(tie_track) * tr)                                        \
    {                                                                                              \
        const params64 *prm = &env->prm;                                                           \
        const model_consts64 *mc = &env->mc;                                                       \
        const double *X = c->x[0], *Y = c->x[1], *Z = c->x[2];                                     \
        const double *U = c->x[3], *V = c->x[4], *W = c->x[5];                                     \
        vf3 p = *pp, v = *vp;                                                                      \
        const double p0[3] = {vf_lane(p.x, 0), vf_lane(p.y, 0), vf_lane(p.z, 0)};                  \
        RFN(ties) before, after;                                                                   \
        memset(&before, 0, sizeof before);                                                         \
        memset(&after, 0, sizeof after);                                                           \
        M##_acc a;                                                                                 \
        M##_begin(&a, prm, mc, p, v);                                                              \
        if (tr) {                                                                                  \
            M##_ties(&a, before.t);                                                                \
            double t0 = RFN(ties_sum)(&before);                                                    \
            if (t0 > tr->best) { /* a threshold of begin's own terms (classic's walls) */          \
                tr->best = t0;                                                                     \
                tr->cand = -1;                                                                     \
                tr->term = M##_BEGIN_TERM;                                                         \
            }                                                                                      \
        }                                                                                          \
        vf reach2 = vf_set1(mc->reach2);                                                           \
        for (int r = 0; r < c->runs; r++)                                                          \
            for (uint32_t j = c->rb[r]; j < c->re[r]; j++) {                                       \
                if (RFN(far)(p0, X, Y, Z, j, mc->reach2))                                          \
                    continue;                                                                      \
                vf3 diff = rule_diff(p, X[j], Y[j], Z[j]);                                         \
                vf d2 = v3_dot(diff, diff);                                                        \
                vm near = M##_near(d2, reach2);                                                    \
                if (!vm_any(near))                                                                 \
                    continue;                                                                      \
                if (tr)                                                                            \
                    M##_ties(&a, before.t);                                                        \
                rule_cand cd = {X[j], Y[j], Z[j], U[j], V[j], W[j], {0.0, 0.0, 0.0}};              \
                if (M##_USES_DIR)                                                                  \
                    rule_dir(cd.vx, cd.vy, cd.vz, cd.dir);                                         \
                vm late = M##_pair(&a, near, p, diff, d2, &cd, prm, mc, 0);                        \
                if (M##_LATE && vm_any(late))                                                      \
                    M##_late(&a, diff, d2, mc);                                                    \
                if (tr) {                                                                          \
                    M##_ties(&a, after.t);                                                         \
                    RFN(tie_note)(tr, &before, &after, j);                                         \
                }                                                                                  \
            }                                                                                      \
        rule_extras x;                                                                             \
        RFN(extras)(env, p, &row, &x);                                                             \
        M##_finish(&a, prm, mc, 0, &x, &p, &v);                                                    \
        *pp = p;                                                                                   \
        *vp = v;                                                                                   \
    }
SIM_MODELS(RWALK_MODEL)
#undef RWALK_MODEL

typedef void (*RFN(boid_fn))(const ref_env *env, const ref_cands *c, uint32_t row, vf3 *pp, vf3 *vp,
                             RFN(tie_track) * tr);
#define RWALK_ENTRY(id, M) [id] = RFN(boid_##M),
static const RFN(boid_fn) RFN(boids)[] = {SIM_MODELS(RWALK_ENTRY)};
#undef RWALK_ENTRY
SIM_MODEL_TABLE_CHECK(RFN(boids));

/* The step of the boid of input row `row` at (*pp, *vp) in env's model. */
static void RFN(boid_step)(const ref_env *env, const ref_cands *c, uint32_t row, vf3 *pp, vf3 *vp,
                           RFN(tie_track) * tr)
{
    RFN(boids)[env->model](env, c, row, pp, vp, tr);
}
