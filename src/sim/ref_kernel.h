/* SPDX-License-Identifier: MIT */
/* One boid's step in the float64 reference: the walk over its candidates and the calls of
 * sim/rules.h in the order forces_kernel.h makes them (begin, pair per candidate in the
 * candidate order, extras, finish), at W = 1. Written once against the wide type and
 * instantiated twice: sim64.c with sim/real64.h (double), ref_bound.c with sim/real_bound.h
 * (double with a float32 rounding bound). The includer has included sim/sim64_internal.h,
 * defined SIMD_REAL_HEADER and RFN(name) (its names), and includes this file once.
 * steer's separation term is added right after its pair (the CPU defers it to a list and
 * adds it in the same candidate order: the same sums). */

#define RULE_PARAMS params64
#define RULE_SPHERE sphere64
#define RULE_CONSTS model_consts64
#define RULE_FIELD field64
#include "core/simd.h"
#include "sim/rules.h"

/* The accumulators' tie so far, per term (real_bound.h only): how much each term's sums may
 * still move because a comparison sat within rounding of its threshold. */
typedef struct RFN(ties) {
    double t[REF_TERM_COUNT];
} RFN(ties);

#if defined(REF_BOUND)
static double RFN(t3)(vf3 a) { return a.x.t + a.y.t + a.z.t; }
#define REF_T3(a) RFN(t3)(a)
#define REF_T1(a) ((a).t)
#else
#define REF_T3(a) ((void)(a), 0.0)
#define REF_T1(a) ((void)(a), 0.0)
#endif

/* Records the candidate whose pair raised some term's tie the most (bound only). */
typedef struct RFN(tie_track) {
    double best;
    int64_t cand;
    int term;
} RFN(tie_track);

static void RFN(tie_note)(RFN(tie_track) * tr, const RFN(ties) * before, const RFN(ties) * after,
                          int64_t cand)
{
    for (int k = 0; k < REF_TERM_COUNT; k++) {
        double d = after->t[k] - before->t[k];
        if (d > tr->best) {
            tr->best = d;
            tr->cand = cand;
            tr->term = k;
        }
    }
}

static void RFN(ties_sa)(const rule_sa *a, RFN(ties) * o)
{
    o->t[REF_TERM_SEPARATION] = REF_T3(a->sep) + REF_T1(a->sep_n);
    o->t[REF_TERM_ALIGNMENT] = REF_T3(a->ali) + REF_T1(a->ali_n);
    o->t[REF_TERM_COHESION] = REF_T3(a->coh) + REF_T1(a->coh_n);
}
static void RFN(ties_hd)(const rule_hd *a, RFN(ties) * o)
{
    o->t[REF_TERM_NEIGHBORS] = REF_T3(a->sep) + REF_T3(a->ali) + REF_T3(a->coh) + REF_T1(a->n);
}
static void RFN(ties_cl)(const rule_cl *a, RFN(ties) * o)
{
    o->t[REF_TERM_SEPARATION] = REF_T3(a->r1) + REF_T1(a->n1);
    o->t[REF_TERM_ALIGNMENT] = REF_T3(a->vsum);
    o->t[REF_TERM_COHESION] = REF_T3(a->psum) + REF_T1(a->n);
}
static void RFN(ties_fv)(const rule_fv *a, RFN(ties) * o)
{
    o->t[REF_TERM_SEPARATION] = REF_T3(a->sep);
    o->t[REF_TERM_ALIGNMENT] = REF_T3(a->ali) + REF_T1(a->ali_n);
    o->t[REF_TERM_COHESION] = REF_T3(a->coh) + REF_T1(a->coh_n);
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

static void RFN(extras)(const ref_env *env, vf3 p, rule_extras *x)
{
    x->field_on = env->fld != NULL && env->fld->vec != NULL;
    x->flee_on = env->mc.predator_count > 0;
    x->field = x->flee = v3_zero();
    if (x->field_on)
        x->field = rule_field_term(&env->prm, RFN(field_vec)(env, p));
    if (x->flee_on)
        x->flee = rule_flee_term(&env->prm, &env->mc, (const double(*)[3])env->mc.predators, p);
}

/* Candidate j is so far beyond every threshold of the model (max2: the largest squared
 * radius) that its pair adds nothing and no comparison of it can be a tie: the pair is
 * skipped before any rule arithmetic (a plain double test with a margin far above the
 * rounding bound). Skipping a pair that adds nothing changes no bit. */
static int RFN(far)(const double *p, const double *X, const double *Y, const double *Z, uint32_t j,
                    double max2)
{
    double dx = p[0] - X[j], dy = p[1] - Y[j], dz = p[2] - Z[j];
    return (dx * dx + dy * dy) + dz * dz > max2 * (1.0 + 1e-4);
}

/* The step of the boid at (*pp, *vp) over the candidates c; tr (may be NULL) records ties. */
static void RFN(boid_step)(const ref_env *env, const ref_cands *c, vf3 *pp, vf3 *vp,
                           RFN(tie_track) * tr)
{
    const params64 *prm = &env->prm;
    const model_consts64 *mc = &env->mc;
    const double *X = c->x[0], *Y = c->x[1], *Z = c->x[2];
    const double *U = c->x[3], *V = c->x[4], *W = c->x[5];
    vf3 p = *pp, v = *vp;
    const double p0[3] = {vf_lane(p.x, 0), vf_lane(p.y, 0), vf_lane(p.z, 0)};
    rule_extras x;
    RFN(ties) before, after;
    memset(&before, 0, sizeof before);
    memset(&after, 0, sizeof after);
    switch (env->model) {
    case SHOAL_MODEL_STEER:
    case SHOAL_MODEL_AVERAGE: {
        int average = env->model == SHOAL_MODEL_AVERAGE;
        double mx = mc->sep_r2 > mc->ali_r2 ? mc->sep_r2 : mc->ali_r2;
        mx = mc->coh_r2 > mx ? mc->coh_r2 : mx;
        vf max_r2 = vf_set1(mx), sep_r2 = vf_set1(mc->sep_r2);
        rule_sa a;
        rule_sa_begin(&a);
        for (int r = 0; r < c->runs; r++)
            for (uint32_t j = c->rb[r]; j < c->re[r]; j++) {
                if (RFN(far)(p0, X, Y, Z, j, mx))
                    continue;
                if (tr)
                    RFN(ties_sa)(&a, &before);
                vm m_sep = rule_sa_pair(&a, p, X[j], Y[j], Z[j], U[j], V[j], W[j], mc, max_r2,
                                        average, 0, 1);
                if (!average && vm_any(m_sep))
                    rule_steer_sep(&a, p, X[j], Y[j], Z[j], sep_r2);
                if (tr) {
                    RFN(ties_sa)(&a, &after);
                    RFN(tie_note)(tr, &before, &after, j);
                }
            }
        rule_sa_end(&a, 0);
        RFN(extras)(env, p, &x);
        rule_sa_finish(&a, prm, mc, average, &x, &p, &v);
        break;
    }
    case SHOAL_MODEL_HEADING: {
        rule_hd a;
        rule_heading_begin(&a);
        for (int r = 0; r < c->runs; r++)
            for (uint32_t j = c->rb[r]; j < c->re[r]; j++) {
                if (RFN(far)(p0, X, Y, Z, j, mc->r2))
                    continue;
                vf3 diff;
                vf d2;
                vm m = rule_heading_test(p, X[j], Y[j], Z[j], mc, &diff, &d2);
                if (!vm_any(m))
                    continue;
                if (tr)
                    RFN(ties_hd)(&a, &before);
                double dir[3];
                rule_heading_dir(U[j], V[j], W[j], dir);
                rule_heading_add(&a, m, diff, d2, X[j], Y[j], Z[j], dir, mc);
                if (tr) {
                    RFN(ties_hd)(&a, &after);
                    RFN(tie_note)(tr, &before, &after, j);
                }
            }
        RFN(extras)(env, p, &x);
        rule_heading_finish(&a, prm, mc, &x, &p, &v);
        break;
    }
    case SHOAL_MODEL_CLASSIC: {
        rule_cl a;
        rule_classic_begin(&a, prm, p);
        if (tr && REF_T3(a.r1) + REF_T1(a.n1) > tr->best) {
            /* a wall plane within rounding of fov (the virtual wall boids) */
            tr->best = REF_T3(a.r1) + REF_T1(a.n1);
            tr->cand = -1;
            tr->term = REF_TERM_WALLS;
        }
        for (int r = 0; r < c->runs; r++)
            for (uint32_t j = c->rb[r]; j < c->re[r]; j++) {
                if (RFN(far)(p0, X, Y, Z, j, mc->r2))
                    continue;
                if (tr)
                    RFN(ties_cl)(&a, &before);
                rule_classic_pair(&a, p, X[j], Y[j], Z[j], U[j], V[j], W[j], prm, mc);
                if (tr) {
                    RFN(ties_cl)(&a, &after);
                    RFN(tie_note)(tr, &before, &after, j);
                }
            }
        RFN(extras)(env, p, &x);
        rule_classic_finish(&a, prm, mc, &x, &p, &v);
        break;
    }
    default: {
        double m2 = rule_fov_max2(prm);
        vf max2 = vf_set1(m2);
        rule_fv a;
        rule_fov_begin(&a, v);
        for (int r = 0; r < c->runs; r++)
            for (uint32_t j = c->rb[r]; j < c->re[r]; j++) {
                if (RFN(far)(p0, X, Y, Z, j, m2))
                    continue;
                if (tr)
                    RFN(ties_fv)(&a, &before);
                rule_fov_pair(&a, p, X[j], Y[j], Z[j], U[j], V[j], W[j], prm, mc, max2);
                if (tr) {
                    RFN(ties_fv)(&a, &after);
                    RFN(tie_note)(tr, &before, &after, j);
                }
            }
        RFN(extras)(env, p, &x);
        rule_fov_finish(&a, prm, mc, &x, &p, &v);
        break;
    }
    }
    *pp = p;
    *vp = v;
}
