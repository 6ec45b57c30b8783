/* SPDX-License-Identifier: MIT */
/* flockers (the "Flocking" declaration of JuliaDynamics/ABMFrameworksComparison,
 * Flocking/DECLARATION.md, the workload Agents.jl, MASON, NetLogo and Mesa implement;
 * docs/SCIENCE.md): a bird with unit direction vel = v / speed sums, over the birds within
 * visual_distance (d <= it, itself excluded), cohere += (p_j - p_i), separate -= (p_j - p_i) for
 * those closer than separation, match += vel_j; vel = unit(vel + (cohere * cohere_factor +
 * separate * separate_factor + match * match_factor) / max(n, 1)) (the declaration's halving
 * does not change the direction); it moves speed * vel per unit time. Synchronous: every bird
 * from the state at the start of the step (the declaration activates them one at a time in a
 * random order, each seeing the birds already moved: other trajectories, the same work). Its
 * rules, its adapter, its constants and its parameter table; included by sim/rules.h (the table
 * only where SIM_MODEL_TABLE is defined: models.c). */

/* ---- constants (model_consts.k) ------------------------------------------------------- */

enum { FL_R2, FL_SEP2 };

RULE_FN void flockers_consts(const RULE_PARAMS *p, RULE_CONSTS *mc)
{
    mc->k[FL_R2] = p->neighbor_radius * p->neighbor_radius;
    mc->k[FL_SEP2] = p->sep_radius * p->sep_radius;
}

/* the visual distance's (separation only acts on birds within it) */
RULE_FN vreal flockers_reach2(const RULE_PARAMS *p, const RULE_CONSTS *mc)
{
    (void)p;
    return mc->k[FL_R2];
}

/* ---- rules ------------------------------------------------------------------------------ */

typedef struct rule_fl {
    vf3 coh_neg; /* -cohere: the sum of p_i - p_j (negated once in finish: negation is exact) */
    vf3 sep;     /* separate: the sum of p_i - p_j closer than separation */
    vf3 match;   /* the sum of v_j (divided by speed once in finish: the sum of vel_j) */
    vf n;
} rule_fl;

/* The terms of a candidate within visual_distance of some lane (near). */
RULE_FN void rule_flockers_add(rule_fl *a, vm near, vf3 diff, vf d2, const rule_cand *c,
                               const RULE_CONSTS *mc)
{
    a->coh_neg = v3_add_masked(a->coh_neg, near, diff);
    a->sep = v3_add_masked(a->sep, vm_and(near, vf_lt(d2, vf_set1(mc->k[FL_SEP2]))), diff);
    a->match = v3_add_masked(a->match, near, rule_cand_v(c));
    a->n = vf_add_masked(a->n, near, vf_set1(1.0f));
}

RULE_FN void rule_flockers_finish(const rule_fl *a, const RULE_PARAMS *prm, const RULE_CONSTS *mc,
                                  const rule_extras *x, vf3 *pp, vf3 *vp)
{
    vf3 p = *pp;
    vf one = vf_set1(1.0f), speed = vf_set1(prm->move_speed);
    vf3 vel = v3_div(*vp, speed);
    vf nn = vf_select(vf_gt(a->n, one), a->n, one); /* max(n, 1) */
    vf3 f = v3_add(v3_add(v3_mul(a->coh_neg, vf_set1(-prm->coh_weight)),
                          v3_mul(a->sep, vf_set1(prm->sep_weight))),
                   v3_mul(v3_div(a->match, speed), vf_set1(prm->ali_weight)));
    vf3 w = v3_add(vel, v3_div(f, nn));
    /* obstacles and predators (every model's, off by default) join the new direction */
    if (prm->sphere_count > 0 || x->field_on || x->flee_on) {
        vf3 e = v3_zero();
        if (prm->sphere_count > 0)
            e = v3_mul(rule_sphere_avoid(prm, mc, p), vf_set1(prm->avoid_force));
        w = v3_add(w, rule_add_extras(e, x));
    }
    /* a direction of length 0 keeps vel's */
    vf3 nv = v3_select(vf_gt(v3_dot(w, w), vf_zero()), v3_normalize(w), v3_normalize(vel));
    vf3 v = v3_mul(nv, speed);
    *pp = v3_add(p, v3_mul(v, vf_set1(mc->dt)));
    *vp = v;
}

/* ---- the adapter (rules.h RULE_ADAPTER) -------------------------------------------------- */

/* The CPU walks every listed candidate (no skip of one no lane is near: its masked adds are +0,
 * and a sum that starts at +0 never turns -0, so the same bits): the skip's branch mispredicted
 * more than the adds it saved cost (-21% CPU time at 10^5, docs/results/
 * 2026-11-28-literature-models-steps.md). */
typedef rule_fl flockers_acc;
RULE_MODEL_TRAITS(flockers, 0, 0, 0, 2, SHOAL_TERM_NONE);

/* The CPU's variant 1 is the plane (a 2D world), where every z and vz is +-0 (the world's check
 * of the rows, and each step's placement makes them +0): the z terms of the sums are +-0, and a
 * sum that starts at +0 stays +0 under them (+0 + -0 = +0), so variant 1 leaves them out, the
 * same bits with a third fewer adds. The GPU and the reference run variant 0. */
RULE_FN int flockers_variant(const RULE_CONSTS *mc) { return rule_plane(mc); }

RULE_FN void flockers_begin(rule_fl *a, const RULE_PARAMS *prm, const RULE_CONSTS *mc, vf3 p, vf3 v)
{
    (void)prm, (void)mc, (void)p, (void)v;
    a->coh_neg = a->sep = a->match = v3_zero();
    a->n = vf_zero();
}

/* 0 < d^2 <= visual_distance^2 (itself excluded: a bird exactly on top of another does not see
 * it either) */
RULE_FN vm flockers_near(vf d2, vf reach2)
{
    return vm_and(vf_gt(d2, vf_zero()), vf_le(d2, reach2));
}

RULE_FN vm flockers_pair(rule_fl *a, vm near, vf3 p, vf3 diff, vf d2, const rule_cand *c,
                         const RULE_PARAMS *prm, const RULE_CONSTS *mc, int variant)
{
    (void)p, (void)prm;
    if (variant) { /* the plane: the z sums stay begin's +0 (see flockers_variant) */
        vm sep = vm_and(near, vf_lt(d2, vf_set1(mc->k[FL_SEP2])));
        a->coh_neg.x = vf_add_masked(a->coh_neg.x, near, diff.x);
        a->coh_neg.y = vf_add_masked(a->coh_neg.y, near, diff.y);
        a->sep.x = vf_add_masked(a->sep.x, sep, diff.x);
        a->sep.y = vf_add_masked(a->sep.y, sep, diff.y);
        vf3 v = rule_cand_v(c);
        a->match.x = vf_add_masked(a->match.x, near, v.x);
        a->match.y = vf_add_masked(a->match.y, near, v.y);
        a->n = vf_add_masked(a->n, near, vf_set1(1.0f));
        return near;
    }
    rule_flockers_add(a, near, diff, d2, c, mc);
    return near;
}

RULE_FN void flockers_late(rule_fl *a, vf3 diff, vf d2, const RULE_CONSTS *mc)
{
    (void)a, (void)diff, (void)d2, (void)mc;
}

RULE_FN vf flockers_useful(const rule_fl *a, int variant)
{
    (void)variant;
    return a->n;
}

RULE_FN void flockers_finish(rule_fl *a, const RULE_PARAMS *prm, const RULE_CONSTS *mc, int variant,
                             const rule_extras *x, vf3 *p, vf3 *v)
{
    (void)variant;
    rule_flockers_finish(a, prm, mc, x, p, v);
}

/* ---- the reference's ties (src/verify) -------------------------------------------------- */

#if defined(RULE_REFERENCE)
/* the visual distance gates every sum; separation has its own threshold inside it */
static inline void flockers_ties(const rule_fl *a, double t[SHOAL_TERM_COUNT])
{
    t[SHOAL_TERM_SEPARATION] = REF_T3(a->sep);
    t[SHOAL_TERM_NEIGHBORS] = REF_T3(a->coh_neg) + REF_T3(a->match) + REF_T1(a->n);
}

static inline int flockers_finish_tie(const RULE_PARAMS *p, const RULE_CONSTS *mc,
                                      const double x[6])
{
    (void)p, (void)mc, (void)x;
    return SHOAL_TERM_NONE;
}
#endif

/* ---- the table (models.c) --------------------------------------------------------------- */

#if defined(SIM_MODEL_TABLE)
/* The declaration's values, its large case (400 birds, 150 x 150, visual distance 15; dt 1, the
 * scene's: one step is the declaration's step). */
#define FLOCKERS_ROWS(P, PI, P3)                                                                   \
    P("speed", move_speed, "units/s", 1e-6f, BIG, 1, "speed: distance per unit time",              \
      H_FACTOR(INTEGRATION)),                                                                      \
        P("separation", sep_radius, "units", 0, BIG, 1,                                            \
          "separate from birds closer than this (d < separation)",                                 \
          H_RADIUS(SEPARATION, FL_SEP2, -1, 1)),                                                   \
        P("visual_distance", neighbor_radius, "units", 1e-4f, BIG, 15,                             \
          "neighbours: d <= visual_distance, itself excluded", H_RADIUS(NEIGHBORS, FL_R2, -1, 0)), \
        P("cohere_factor", coh_weight, "-", -BIG, BIG, 0.03f, "weight of cohesion",                \
          H_WEIGHT(COHESION)),                                                                     \
        P("separate_factor", sep_weight, "-", -BIG, BIG, 0.015f, "weight of separation",           \
          H_WEIGHT(SEPARATION)),                                                                   \
        P("match_factor", ali_weight, "-", -BIG, BIG, 0.05f, "weight of alignment",                \
          H_WEIGHT(ALIGNMENT)),                                                                    \
        P3("box_center", bounds_center, "units", -BIG, BIG, 0, 0, 0, "centre of the start box",    \
           H_NONE),                                                                                \
        P3("box_size", bounds_size, "units", 1e-4f, BIG, 150, 150, 150,                            \
           "start box: positions uniform in it, then wrapped into a periodic world (no walls)",    \
           H_NONE),                                                                                \
        OBSTACLE_ROWS(P, PI, P3)

static const shoal_param_info flockers_params[] = {FLOCKERS_ROWS(ROW_INFO, ROW_INFO_I, ROW_INFO_3)};
static const sim_hyp flockers_hyps[] = {FLOCKERS_ROWS(ROW_HYP, ROW_HYP_I, ROW_HYP_3)};

static const char *const flockers_live[] = {
    "cohere_factor",   "separate_factor", "match_factor", "separation",
    "visual_distance", "speed",           "avoid_force",
};

static float flockers_radius(const shoal_params *p) { return p->neighbor_radius; }

static void flockers_bounds(const shoal_params *p, float lo[3], float hi[3])
{
    for (int c = 0; c < 3; c++) {
        lo[c] = p->bounds_center[c] - 0.5f * p->bounds_size[c];
        hi[c] = p->bounds_center[c] + 0.5f * p->bounds_size[c];
    }
}

/* the frameworks' start: positions uniform in the box, vel uniform in [-1, 1] per axis (not
 * unit: the first step normalises it), v = speed * vel */
static void flockers_start(const shoal_params *p, rng *r, float row[6])
{
    for (int c = 0; c < 3; c++)
        row[c] = rng_range(r, p->bounds_center[c] - 0.5f * p->bounds_size[c],
                           p->bounds_center[c] + 0.5f * p->bounds_size[c]);
    for (int c = 0; c < 3; c++)
        row[3 + c] = rng_range(r, -1.0f, 1.0f) * p->move_speed;
}

static const sim_model model_flockers = {
    .info = {SHOAL_MODEL_FLOCKERS, "flockers",
             "the ABMFrameworksComparison Flocking declaration (synchronous)", 400, flockers_params,
             COUNT_OF(flockers_params), flockers_live, COUNT_OF(flockers_live), 0},
    .hyps = flockers_hyps,
    .radius = flockers_radius,
    .bounds = flockers_bounds,
    .start = flockers_start,
    .consts = flockers_consts,
    .reach2 = flockers_reach2,
    .lengths = {OFF(bounds_center[0]), OFF(bounds_center[1]), OFF(bounds_center[2]),
                OFF(bounds_size[0]), OFF(bounds_size[1]), OFF(bounds_size[2])},
};
#endif
