/* SPDX-License-Identifier: MIT */
/* steer (seed 003, the UnityGraphicsProgramming Boids.compute) and average (seed 000, a Unity
 * fish-school blog post): three radii (separation, alignment, cohesion; 0 < d^2 <= r^2), a wall
 * box, Euler steps. They share one walk of the neighbours and differ in the separation term
 * (steer: diff / d^2, added late; average: the plain difference) and in the finish (steer
 * steers each rule toward max_speed and limits each; average weighs plain averages and limits
 * the sum). Its rules, its adapter, its constants and its parameter table; included by
 * sim/rules.h (the table only where SIM_MODEL_TABLE is defined: models.c). */

/* ---- constants (model_consts.k) ------------------------------------------------------- */

enum { SA_SEP_R2, SA_ALI_R2, SA_COH_R2 };

RULE_FN void sa_consts(const RULE_PARAMS *p, RULE_CONSTS *mc)
{
    mc->k[SA_SEP_R2] = p->sep_radius * p->sep_radius;
    mc->k[SA_ALI_R2] = p->ali_radius * p->ali_radius;
    mc->k[SA_COH_R2] = p->coh_radius * p->coh_radius;
}

/* the largest of the three squared radii (the candidate test's bound) */
RULE_FN vreal sa_reach2(const RULE_PARAMS *p, const RULE_CONSTS *mc)
{
    (void)p;
    vreal m = mc->k[SA_SEP_R2] > mc->k[SA_ALI_R2] ? mc->k[SA_SEP_R2] : mc->k[SA_ALI_R2];
    return mc->k[SA_COH_R2] > m ? mc->k[SA_COH_R2] : m;
}

/* ---- rules ------------------------------------------------------------------------------ */

/* steer wall force: +1 below centre - size/2, -1 above centre + size/2, per axis. */
RULE_FN vf rule_wall_axis(vf p, vreal lo, vreal hi)
{
    vf acc = vf_zero();
    acc = vf_select(vf_lt(p, vf_set1(lo)), vf_add(acc, vf_set1(1.0f)), acc);
    acc = vf_select(vf_gt(p, vf_set1(hi)), vf_sub(acc, vf_set1(1.0f)), acc);
    return acc;
}

/* off on a periodic axis and on z in 2D (RULE_WALL_ON) */
RULE_FN vf3 rule_wall(const RULE_PARAMS *prm, const RULE_CONSTS *mc, vf3 p)
{
    vf3 w = v3_zero();
    if (RULE_WALL_ON(mc, 0))
        w.x = rule_wall_axis(p.x, prm->wall_center[0] - prm->wall_size[0] * 0.5f,
                             prm->wall_center[0] + prm->wall_size[0] * 0.5f);
    if (RULE_WALL_ON(mc, 1))
        w.y = rule_wall_axis(p.y, prm->wall_center[1] - prm->wall_size[1] * 0.5f,
                             prm->wall_center[1] + prm->wall_size[1] * 0.5f);
    if (RULE_WALL_ON(mc, 2))
        w.z = rule_wall_axis(p.z, prm->wall_center[2] - prm->wall_size[2] * 0.5f,
                             prm->wall_center[2] + prm->wall_size[2] * 0.5f);
    return w;
}

typedef struct rule_sa {
    vf3 sep, ali, coh;
    vf sep_n, ali_n, coh_n;
    vf near_n; /* candidates within the largest radius, counted when !shared_mask (with a
                * shared mask that is ali_n): a work statistic, no result depends on it */
} rule_sa;

RULE_FN void rule_sa_begin(rule_sa *a)
{
    a->sep = a->ali = a->coh = v3_zero();
    a->sep_n = a->ali_n = a->coh_n = a->near_n = vf_zero();
}

/* 0 < d^2 <= the largest radius^2 (d == 0 skips the pair and the boid itself) */
RULE_FN vm rule_sa_near(vf d2, vf reach2)
{
    return vm_and(vf_gt(d2, vf_zero()), vf_le(d2, reach2));
}

/* One candidate c of steer (average = 0) or average (1), near: rule_sa_near's lanes. The
 * radius tests are 0 < d^2 <= r^2. Adds the alignment and cohesion sums and average's
 * separation (the plain difference); returns the separation mask: steer's separation term
 * (rule_steer_sep) is added for the candidates where the mask has a lane, in candidate order
 * (the CPU lists them and adds them after its chunk: sep is touched by nothing else, so the
 * order of its additions is the same). shared_mask: ali_r2 == coh_r2 >= sep_r2, so one mask
 * serves both (and coh_n is ali_n, see rule_sa_end): the same sums, two compares and a count
 * fewer. */
RULE_FN vm rule_sa_pair(rule_sa *a, vm near, vf3 diff, vf d2, const rule_cand *c,
                        const RULE_CONSTS *mc, int average, int shared_mask)
{
    vf one = vf_set1(1.0f);
    vm m_sep = vm_and(near, vf_le(d2, vf_set1(mc->k[SA_SEP_R2])));
    vm m_ali = near, m_coh = near;
    if (!shared_mask) {
        m_ali = vm_and(near, vf_le(d2, vf_set1(mc->k[SA_ALI_R2])));
        m_coh = vm_and(near, vf_le(d2, vf_set1(mc->k[SA_COH_R2])));
        a->near_n = vf_add_masked(a->near_n, near, one);
    }
    if (average) {
        /* seed 000: the plain difference; cheap enough to add unconditionally */
        a->sep = v3_add_masked(a->sep, m_sep, diff);
        a->sep_n = vf_add_masked(a->sep_n, m_sep, one);
    }
    a->ali = v3_add_masked(a->ali, m_ali, rule_cand_v(c));
    a->ali_n = vf_add_masked(a->ali_n, m_ali, one);
    a->coh = v3_add_masked(a->coh, m_coh, rule_cand_p(c));
    if (!shared_mask)
        a->coh_n = vf_add_masked(a->coh_n, m_coh, one);
    return m_sep;
}

/* steer's separation term of a candidate: sep += diff * (1 / d^2) where 0 < d^2 <= sep_r2.
 * normalize(diff) / d == diff / d^2, taken as diff * (1 / d^2): one IEEE division instead of
 * a square root and six (DESIGN.md: prefer formulas without a root). */
RULE_FN void rule_steer_sep(rule_sa *a, vf3 diff, vf d2, const RULE_CONSTS *mc)
{
    vf one = vf_set1(1.0f);
    vm m = vm_and(vf_gt(d2, vf_zero()), vf_le(d2, vf_set1(mc->k[SA_SEP_R2])));
    a->sep = v3_add_masked(a->sep, m, v3_mul(diff, vf_div(one, d2)));
    a->sep_n = vf_add_masked(a->sep_n, m, one);
}

RULE_FN void rule_sa_end(rule_sa *a, int shared_mask)
{
    if (shared_mask)
        a->coh_n = a->ali_n; /* same mask, so the same count, exactly */
}

RULE_FN void rule_sa_finish(const rule_sa *a, const RULE_PARAMS *prm, const RULE_CONSTS *mc,
                            int average, const rule_extras *x, vf3 *pp, vf3 *vp)
{
    vf3 p = *pp, v = *vp;
    vf zero = vf_zero();
    vf3 force = v3_zero();
    vm has_sep = vf_gt(a->sep_n, zero), has_ali = vf_gt(a->ali_n, zero),
       has_coh = vf_gt(a->coh_n, zero);
    if (!average) {
        /* seed 003: each rule steers toward max speed along its direction, limited */
        vf max_speed = vf_set1(prm->max_speed), max_steer = vf_set1(prm->max_steer);
        vf3 sep_f = v3_limit(v3_sub(v3_mul(v3_normalize(v3_div(a->sep, a->sep_n)), max_speed), v),
                             max_steer);
        vf3 ali_f = v3_limit(v3_sub(v3_mul(v3_normalize(v3_div(a->ali, a->ali_n)), max_speed), v),
                             max_steer);
        vf3 coh_f = v3_limit(
            v3_sub(v3_mul(v3_normalize(v3_sub(v3_div(a->coh, a->coh_n), p)), max_speed), v),
            max_steer);
        sep_f = v3_select(has_sep, sep_f, v3_zero());
        ali_f = v3_select(has_ali, ali_f, v3_zero());
        coh_f = v3_select(has_coh, coh_f, v3_zero());
        force = v3_add(force, v3_mul(ali_f, vf_set1(prm->ali_weight)));
        force = v3_add(force, v3_mul(coh_f, vf_set1(prm->coh_weight)));
        force = v3_add(force, v3_mul(sep_f, vf_set1(prm->sep_weight)));
    } else {
        /* seed 000: plain averages, weighted, then the sum limited */
        vf3 sep_f = v3_mul(v3_div(a->sep, a->sep_n), vf_set1(prm->sep_weight));
        vf3 ali_f = v3_mul(v3_div(a->ali, a->ali_n), vf_set1(prm->ali_weight));
        vf3 coh_f = v3_mul(v3_sub(v3_div(a->coh, a->coh_n), p), vf_set1(prm->coh_weight));
        force = v3_add_masked(force, has_sep, sep_f);
        force = v3_add_masked(force, has_ali, ali_f);
        force = v3_add_masked(force, has_coh, coh_f);
        force = v3_limit(force, vf_set1(prm->max_steer));
    }

    /* integrate (seed 003 IntegrateCS): walls, obstacles, speed limit, Euler */
    vf dt = vf_set1(mc->dt);
    force = v3_add(force, v3_mul(rule_wall(prm, mc, p), vf_set1(prm->wall_weight)));
    if (prm->sphere_count > 0)
        force = v3_add(force, v3_mul(rule_sphere_avoid(prm, mc, p), vf_set1(prm->avoid_force)));
    force = rule_add_extras(force, x);
    v = v3_limit(v3_add(v, v3_mul(force, dt)), vf_set1(prm->max_speed));
    p = v3_add(p, v3_mul(v, dt));
    *pp = p;
    *vp = v;
}

/* ---- the adapters (rules.h RULE_ADAPTER: what every walker calls) ----------------------- */

/* Variant 1: alignment and cohesion share one mask (the usual case: ali_radius == coh_radius
 * >= sep_radius), which saves two compares and a count per candidate. Same masks, same sums:
 * the same bits as variant 0, which the GPU and the reference always take. The CPU's
 * candidates are not skipped when no lane is near: the branch would be taken about half the
 * time and mispredict; the masked adds cost less. */
RULE_FN int sa_variant(const RULE_CONSTS *mc)
{
    return mc->k[SA_ALI_R2] == mc->k[SA_COH_R2] && mc->k[SA_SEP_R2] <= mc->k[SA_ALI_R2];
}

RULE_FN void sa_begin(rule_sa *a, const RULE_PARAMS *prm, const RULE_CONSTS *mc, vf3 p, vf3 v)
{
    (void)prm, (void)mc, (void)p, (void)v;
    rule_sa_begin(a);
}

/* the candidates within the largest radius: a work statistic */
RULE_FN vf sa_useful(const rule_sa *a, int variant) { return variant ? a->ali_n : a->near_n; }

typedef rule_sa steer_acc;
RULE_MODEL_TRAITS(steer, 0, 0, 1, 2, SHOAL_TERM_NONE);
#define steer_consts sa_consts
#define steer_reach2 sa_reach2
#define steer_variant sa_variant
#define steer_begin sa_begin
#define steer_near rule_sa_near
#define steer_useful sa_useful
RULE_FN vm steer_pair(rule_sa *a, vm near, vf3 p, vf3 diff, vf d2, const rule_cand *c,
                      const RULE_PARAMS *prm, const RULE_CONSTS *mc, int variant)
{
    (void)p, (void)prm;
    return rule_sa_pair(a, near, diff, d2, c, mc, 0, variant);
}
RULE_FN void steer_late(rule_sa *a, vf3 diff, vf d2, const RULE_CONSTS *mc)
{
    rule_steer_sep(a, diff, d2, mc);
}
RULE_FN void steer_finish(rule_sa *a, const RULE_PARAMS *prm, const RULE_CONSTS *mc, int variant,
                          const rule_extras *x, vf3 *p, vf3 *v)
{
    rule_sa_end(a, variant);
    rule_sa_finish(a, prm, mc, 0, x, p, v);
}

typedef rule_sa average_acc;
RULE_MODEL_TRAITS(average, 0, 0, 0, 2, SHOAL_TERM_NONE);
#define average_consts sa_consts
#define average_reach2 sa_reach2
#define average_variant sa_variant
#define average_begin sa_begin
#define average_near rule_sa_near
#define average_useful sa_useful
RULE_FN vm average_pair(rule_sa *a, vm near, vf3 p, vf3 diff, vf d2, const rule_cand *c,
                        const RULE_PARAMS *prm, const RULE_CONSTS *mc, int variant)
{
    (void)p, (void)prm;
    return rule_sa_pair(a, near, diff, d2, c, mc, 1, variant);
}
RULE_FN void average_late(rule_sa *a, vf3 diff, vf d2, const RULE_CONSTS *mc)
{
    (void)a, (void)diff, (void)d2, (void)mc; /* average's separation is in its pair */
}
RULE_FN void average_finish(rule_sa *a, const RULE_PARAMS *prm, const RULE_CONSTS *mc, int variant,
                            const rule_extras *x, vf3 *p, vf3 *v)
{
    rule_sa_end(a, variant);
    rule_sa_finish(a, prm, mc, 1, x, p, v);
}

/* ---- the reference's ties (src/verify) -------------------------------------------------- */

#if defined(RULE_REFERENCE)
/* How far each term's sums may still move (real_bound.h's t of its accumulators). */
static inline void sa_ties(const rule_sa *a, double t[SHOAL_TERM_COUNT])
{
    t[SHOAL_TERM_SEPARATION] = REF_T3(a->sep) + REF_T1(a->sep_n);
    t[SHOAL_TERM_ALIGNMENT] = REF_T3(a->ali) + REF_T1(a->ali_n);
    t[SHOAL_TERM_COHESION] = REF_T3(a->coh) + REF_T1(a->coh_n);
}
#define steer_ties sa_ties
#define average_ties sa_ties

/* A tie no candidate made, of the boid's own terms (x: its row): the walls. */
static inline int sa_finish_tie(const RULE_PARAMS *p, const RULE_CONSTS *mc, const double x[6])
{
    double size = fabs(x[0]) + fabs(x[1]) + fabs(x[2]);
    for (int c = 0; c < 3; c++)
        if (RULE_WALL_ON(mc, c) &&
            (REF_NEAR(x[c], p->wall_center[c] - p->wall_size[c] * 0.5, size) ||
             REF_NEAR(x[c], p->wall_center[c] + p->wall_size[c] * 0.5, size)))
            return SHOAL_TERM_WALLS;
    return SHOAL_TERM_NONE;
}
#define steer_finish_tie sa_finish_tie
#define average_finish_tie sa_finish_tie
#endif

/* ---- the table (models.c) --------------------------------------------------------------- */

#if defined(SIM_MODEL_TABLE)
/* The parameter table: name, field, unit, range, default, meaning (docs/MODELS.md and `shoal
 * params` show it), then the hypothesis `shoal verify` makes of it (sim/models/table.h). */
#define STEER_ROWS(P, PI, P3)                                                                      \
    P("sep_radius", sep_radius, "units", 1e-4f, BIG, 1, "separation radius (d <= r)",              \
      H_RADIUS(SEPARATION, SA_SEP_R2, -1, 0)),                                                     \
        P("ali_radius", ali_radius, "units", 1e-4f, BIG, 2, "alignment radius (d <= r)",           \
          H_RADIUS(ALIGNMENT, SA_ALI_R2, -1, 0)),                                                  \
        P("coh_radius", coh_radius, "units", 1e-4f, BIG, 2, "cohesion radius (d <= r)",            \
          H_RADIUS(COHESION, SA_COH_R2, -1, 0)),                                                   \
        P("sep_weight", sep_weight, "-", -BIG, BIG, 3, "separation weight", H_WEIGHT(SEPARATION)), \
        P("ali_weight", ali_weight, "-", -BIG, BIG, 1, "alignment weight", H_WEIGHT(ALIGNMENT)),   \
        P("coh_weight", coh_weight, "-", -BIG, BIG, 1, "cohesion weight", H_WEIGHT(COHESION)),     \
        P("max_speed", max_speed, "units/s", 1e-6f, BIG, 5, "speed limit, units/s",                \
          H_FACTOR(INTEGRATION)),                                                                  \
        P("max_steer", max_steer, "units/s^2", 0, BIG, 0.5f, "steering force limit per rule",      \
          H_FACTOR(INTEGRATION)),                                                                  \
        P("wall_weight", wall_weight, "units/s^2", 0, BIG, 10, "weight of the wall force",         \
          H_WEIGHT(WALLS)),                                                                        \
        P3("wall_center", wall_center, "units", -BIG, BIG, 0, 0, 0, "centre of the wall box",      \
           H_NONE),                                                                                \
        P3("wall_size", wall_size, "units", 1e-4f, BIG, 32, 32, 32, "size of the wall box",        \
           H_NONE),                                                                                \
        P("init_pos_radius", init_pos_radius, "units", 0, BIG, 1,                                  \
          "initial positions: ball radius", H_NONE),                                               \
        P("init_vel_radius", init_vel_radius, "units/s", 0, BIG, 0.1f,                             \
          "initial velocities: ball radius", H_NONE),                                              \
        OBSTACLE_ROWS(P, PI, P3)

/* seed 000's project, its Default preset */
#define AVERAGE_ROWS(P, PI, P3)                                                                    \
    P("sep_radius", sep_radius, "units", 1e-4f, BIG, 1.75f, "separation radius (d <= r)",          \
      H_RADIUS(SEPARATION, SA_SEP_R2, -1, 0)),                                                     \
        P("ali_radius", ali_radius, "units", 1e-4f, BIG, 3.5f, "alignment radius (d <= r)",        \
          H_RADIUS(ALIGNMENT, SA_ALI_R2, -1, 0)),                                                  \
        P("coh_radius", coh_radius, "units", 1e-4f, BIG, 3.5f, "cohesion radius (d <= r)",         \
          H_RADIUS(COHESION, SA_COH_R2, -1, 0)),                                                   \
        P("sep_weight", sep_weight, "-", -BIG, BIG, 16, "separation weight",                       \
          H_WEIGHT(SEPARATION)),                                                                   \
        P("ali_weight", ali_weight, "-", -BIG, BIG, 12, "alignment weight", H_WEIGHT(ALIGNMENT)),  \
        P("coh_weight", coh_weight, "-", -BIG, BIG, 6, "cohesion weight", H_WEIGHT(COHESION)),     \
        P("max_speed", max_speed, "units/s", 1e-6f, BIG, 3.5f, "speed limit, units/s",             \
          H_FACTOR(INTEGRATION)),                                                                  \
        P("max_steer", max_steer, "units/s^2", 0, BIG, 1.5f, "limit of the summed force",          \
          H_FACTOR(INTEGRATION)),                                                                  \
        P("wall_weight", wall_weight, "units/s^2", 0, BIG, 10, "weight of the wall force",         \
          H_WEIGHT(WALLS)),                                                                        \
        P3("wall_center", wall_center, "units", -BIG, BIG, 0, 0, 0, "centre of the wall box",      \
           H_NONE),                                                                                \
        P3("wall_size", wall_size, "units", 1e-4f, BIG, 32, 32, 32, "size of the wall box",        \
           H_NONE),                                                                                \
        P("init_pos_radius", init_pos_radius, "units", 0, BIG, 1,                                  \
          "initial positions: ball radius", H_NONE),                                               \
        P("init_vel_radius", init_vel_radius, "units/s", 0, BIG, 0.5f,                             \
          "initial velocities: ball radius", H_NONE),                                              \
        OBSTACLE_ROWS(P, PI, P3)

static const shoal_param_info steer_params[] = {STEER_ROWS(ROW_INFO, ROW_INFO_I, ROW_INFO_3)};
static const sim_hyp steer_hyps[] = {STEER_ROWS(ROW_HYP, ROW_HYP_I, ROW_HYP_3)};
static const shoal_param_info average_params[] = {AVERAGE_ROWS(ROW_INFO, ROW_INFO_I, ROW_INFO_3)};
static const sim_hyp average_hyps[] = {AVERAGE_ROWS(ROW_HYP, ROW_HYP_I, ROW_HYP_3)};

/* The keys of the window edit these, in this order (docs/APP.md). */
static const char *const steer_live[] = {
    "sep_weight", "ali_weight", "coh_weight", "sep_radius",  "ali_radius",
    "coh_radius", "max_speed",  "max_steer",  "wall_weight", "avoid_force",
};

/* the grid's cell: the largest radius */
static float sa_radius(const shoal_params *p)
{
    return fmaxf(p->sep_radius, fmaxf(p->ali_radius, p->coh_radius));
}

static void sa_bounds(const shoal_params *p, float lo[3], float hi[3])
{
    for (int c = 0; c < 3; c++) {
        lo[c] = p->wall_center[c] - 0.5f * p->wall_size[c];
        hi[c] = p->wall_center[c] + 0.5f * p->wall_size[c];
    }
}

/* seeds 003/000: p in a ball (their unit ball at the defaults), v in a small ball */
static void sa_start(const shoal_params *p, rng *r, float row[6])
{
    rng_in_ball(r, p->init_pos_radius, row);
    rng_in_ball(r, p->init_vel_radius, row + 3);
}

/* The default school of steer and average: the seeds start every boid in a ball of radius 1
 * (init_pos_radius 1, shoal_params_default keeps it), where each sees every other for the
 * first ~150 steps; shoal_sim_desc_for spreads them over 3/8 of the smallest wall (12 in the
 * 32^3 box), as assets/scenes/steer.ini and average.ini do. */
static void sa_school(shoal_params *p)
{
    float m = fminf(p->wall_size[0], fminf(p->wall_size[1], p->wall_size[2]));
    if (m > 0 && p->init_pos_radius < 0.375f * m)
        p->init_pos_radius = 0.375f * m;
}

#define SA_ENTRY                                                                                   \
    .radius = sa_radius, .bounds = sa_bounds, .start = sa_start, .school = sa_school,              \
    .consts = sa_consts, .reach2 = sa_reach2,                                                      \
    .lengths = {OFF(wall_center[0]), OFF(wall_center[1]), OFF(wall_center[2]), OFF(wall_size[0]),  \
                OFF(wall_size[1]),   OFF(wall_size[2]),   OFF(init_pos_radius)}

static const sim_model model_steer = {
    .info = {SHOAL_MODEL_STEER, "steer", "seed 003, UnityGraphicsProgramming Boids.compute", 16384,
             steer_params, COUNT_OF(steer_params), steer_live, COUNT_OF(steer_live), 0},
    .hyps = steer_hyps,
    SA_ENTRY,
};

static const sim_model model_average = {
    .info = {SHOAL_MODEL_AVERAGE, "average", "seed 000, a Unity fish-school blog post", 4096,
             average_params, COUNT_OF(average_params), steer_live, COUNT_OF(steer_live), 0},
    .hyps = average_hyps,
    SA_ENTRY,
};
#endif
