/* SPDX-License-Identifier: MIT */
/* heading (seed 001, a compute-shader grid and counting-sort article): one radius, strict
 * 0 < d < R; separation weighted by (R - d) / R, alignment of the neighbours' unit headings,
 * cohesion, a pull to the nearest of the time's targets (rules.h rule_targets), then the
 * heading turns toward the sum at rotate_speed and the boid moves at move_speed. Its rules,
 * its adapter, its constants and its parameter table; included by sim/rules.h (the table only
 * where SIM_MODEL_TABLE is defined: models.c). */

/* ---- constants (model_consts.k) ------------------------------------------------------- */

enum { HD_R, HD_R2 };

/* the targets themselves depend on the time: every backend draws them each step */
RULE_FN void heading_consts(const RULE_PARAMS *p, RULE_CONSTS *mc)
{
    mc->k[HD_R] = p->neighbor_radius;
    mc->k[HD_R2] = p->neighbor_radius * p->neighbor_radius;
    mc->target_count = (int)p->target_count;
}

RULE_FN vreal heading_reach2(const RULE_PARAMS *p, const RULE_CONSTS *mc)
{
    (void)p;
    return mc->k[HD_R2];
}

/* ---- rules ------------------------------------------------------------------------------ */

typedef struct rule_hd {
    vf3 sep, ali, coh;
    vf n;
} rule_hd;

/* The terms of a candidate that passed heading_near in some lane (dir: its dir_j). */
RULE_FN void rule_heading_add(rule_hd *a, vm m, vf3 diff, vf d2, vf3 pj, vf3 dir,
                              const RULE_CONSTS *mc)
{
    vf R = vf_set1(mc->k[HD_R]);
    vf d = vf_sqrt(d2);
    /* -normalize(p_j - p_i) * (R - d) / R == diff * ((R - d) / (R * d)): one square root and
     * one division per pair instead of four divisions */
    vf w = vf_div(vf_sub(R, d), vf_mul(R, d));
    a->sep = v3_add_masked(a->sep, m, v3_mul(diff, w));
    a->ali = v3_add_masked(a->ali, m, dir);
    a->coh = v3_add_masked(a->coh, m, pj);
    a->n = vf_add_masked(a->n, m, vf_set1(1.0f));
}

RULE_FN void rule_heading_finish(const rule_hd *a, const RULE_PARAMS *prm, const RULE_CONSTS *mc,
                                 const rule_extras *x, vf3 *pp, vf3 *vp)
{
    vf3 p = *pp, v = *vp;
    vf one = vf_set1(1.0f);
    /* a = 1 / max(n, 1) */
    vf an = vf_div(one, vf_select(vf_gt(a->n, one), a->n, one));
    vf3 sep = v3_mul(a->sep, vf_mul(an, vf_set1(prm->sep_weight)));
    vf3 ali = v3_mul(a->ali, vf_mul(an, vf_set1(prm->ali_weight)));
    vf3 coh = v3_mul(v3_sub(v3_mul(a->coh, an), p),
                     vf_set1(prm->coh_weight)); /* quirk: n = 0 pulls to 0 */

    /* nearest target (first on ties): tgt_d is target - p (0 - p before any), in a periodic
     * world the nearest image's (rule_world_delta) */
    vf best_d2 = vf_set1(RF_INF);
    vf3 tgt_d = v3_sub(v3_zero(), p);
    for (int k = 0; k < mc->target_count; k++) {
        vf3 t = v3_set1(mc->targets[k][0], mc->targets[k][1], mc->targets[k][2]);
        vf3 dt3 = rule_world_delta(mc, v3_sub(t, p));
        vf td2 = v3_dot(dt3, dt3);
        vm closer = vf_lt(td2, best_d2);
        best_d2 = vf_select(closer, td2, best_d2);
        tgt_d = v3_select(closer, dt3, tgt_d);
    }
    vf3 fsum = v3_mul(tgt_d, vf_set1(prm->target_weight));
    fsum = v3_add(v3_add(v3_add(fsum, sep), ali), coh);
    if (prm->sphere_count > 0)
        fsum = v3_add(fsum, v3_mul(rule_sphere_avoid(prm, mc, p), vf_set1(prm->avoid_force)));
    fsum = rule_add_extras(fsum, x);
    vf3 fdir = v3_normalize(fsum);
    vf3 dir = v3_normalize(v);
    /* lerp(a, b, s) = a + (b - a) * s */
    vf s_l = vf_set1(prm->rotate_speed * mc->dt);
    dir = v3_normalize(v3_add(dir, v3_mul(v3_sub(fdir, dir), s_l)));
    vf lo = vf_set1(-0.5f), hi = vf_set1(0.5f);
    dir.y = vf_select(vf_lt(dir.y, lo), lo, dir.y);
    dir.y = vf_select(vf_gt(dir.y, hi), hi, dir.y);
    dir = v3_normalize(dir);
    vf ms = vf_set1(prm->move_speed);
    p = v3_add(p, v3_mul(v3_mul(dir, ms), vf_set1(mc->dt)));
    v = v3_mul(dir, ms);
    *pp = p;
    *vp = v;
}

/* ---- the adapter (rules.h RULE_ADAPTER) -------------------------------------------------- */

/* Every backend skips a candidate no lane is near; its pair reads dir_j (rules.h rule_cand). */
typedef rule_hd heading_acc;
RULE_MODEL_TRAITS(heading, 1, 1, 0, 1, SHOAL_TERM_NONE);

RULE_FN int heading_variant(const RULE_CONSTS *mc)
{
    (void)mc;
    return 0;
}

RULE_FN void heading_begin(rule_hd *a, const RULE_PARAMS *prm, const RULE_CONSTS *mc, vf3 p, vf3 v)
{
    (void)prm, (void)mc, (void)p, (void)v;
    a->sep = a->ali = a->coh = v3_zero();
    a->n = vf_zero();
}

/* 0 < d^2 < R^2 */
RULE_FN vm heading_near(vf d2, vf reach2)
{
    return vm_and(vf_gt(d2, vf_zero()), vf_lt(d2, reach2));
}

RULE_FN vm heading_pair(rule_hd *a, vm near, vf3 p, vf3 diff, vf d2, const rule_cand *c,
                        const RULE_PARAMS *prm, const RULE_CONSTS *mc, int variant)
{
    (void)p, (void)prm, (void)variant;
    rule_heading_add(a, near, diff, d2, rule_cand_p(c), rule_cand_dir(c), mc);
    return near;
}

RULE_FN void heading_late(rule_hd *a, vf3 diff, vf d2, const RULE_CONSTS *mc)
{
    (void)a, (void)diff, (void)d2, (void)mc;
}

RULE_FN vf heading_useful(const rule_hd *a, int variant)
{
    (void)variant;
    return a->n;
}

RULE_FN void heading_finish(rule_hd *a, const RULE_PARAMS *prm, const RULE_CONSTS *mc, int variant,
                            const rule_extras *x, vf3 *p, vf3 *v)
{
    (void)variant;
    rule_heading_finish(a, prm, mc, x, p, v);
}

/* ---- the reference's ties (src/verify) -------------------------------------------------- */

#if defined(RULE_REFERENCE)
/* one radius for the three sums: one term */
static inline void heading_ties(const rule_hd *a, double t[SHOAL_TERM_COUNT])
{
    t[SHOAL_TERM_NEIGHBORS] = REF_T3(a->sep) + REF_T3(a->ali) + REF_T3(a->coh) + REF_T1(a->n);
}

/* A tie no candidate made: the two nearest targets within rounding of each other. */
static inline int heading_finish_tie(const RULE_PARAMS *p, const RULE_CONSTS *mc, const double x[6])
{
    (void)p;
    double size = fabs(x[0]) + fabs(x[1]) + fabs(x[2]);
    double b1 = INFINITY, b2 = INFINITY;
    for (int k = 0; k < mc->target_count; k++) {
        double d2 = 0;
        for (int c = 0; c < 3; c++) {
            double d = rule_world_delta_s(mc, c, mc->targets[k][c] - x[c]);
            d2 += d * d;
        }
        if (d2 < b1) {
            b2 = b1;
            b1 = d2;
        } else if (d2 < b2) {
            b2 = d2;
        }
    }
    if (isfinite(b2) && REF_NEAR(b1, b2, size * size))
        return SHOAL_TERM_TARGETS;
    return SHOAL_TERM_NONE;
}
#endif

/* ---- the table (models.c) --------------------------------------------------------------- */

#if defined(SIM_MODEL_TABLE)
/* the seed gives no defaults */
#define HEADING_ROWS(P, PI, P3)                                                                    \
    P("neighbor_radius", neighbor_radius, "units", 1e-4f, BIG, 2, "neighbour radius (d < R)",      \
      H_RADIUS(NEIGHBORS, HD_R2, HD_R, 1)),                                                        \
        P("sep_weight", sep_weight, "-", -BIG, BIG, 1, "separation weight", H_WEIGHT(SEPARATION)), \
        P("ali_weight", ali_weight, "-", -BIG, BIG, 1, "alignment weight", H_WEIGHT(ALIGNMENT)),   \
        P("coh_weight", coh_weight, "-", -BIG, BIG, 1, "cohesion weight", H_WEIGHT(COHESION)),     \
        P("target_weight", target_weight, "-", -BIG, BIG, 1,                                       \
          "weight of the pull to the nearest target", H_WEIGHT(TARGETS)),                          \
        P("rotate_speed", rotate_speed, "1/s", 0, BIG, 3, "turn rate: lerp factor per second",     \
          H_FACTOR(INTEGRATION)),                                                                  \
        P("move_speed", move_speed, "units/s", 0, BIG, 4, "speed, units/s",                        \
          H_FACTOR(INTEGRATION)),                                                                  \
        P("target_period", target_period, "s", 1e-3f, BIG, 5,                                      \
          "targets are redrawn every this many s", H_NONE),                                        \
        PI("target_count", target_count, "count", 1, SHOAL_MAX_TARGETS, 16, "number of targets",   \
           H_NONE),                                                                                \
        P3("bounds_center", bounds_center, "units", -BIG, BIG, 0, 0, 0,                            \
           "centre of the target box", H_NONE),                                                    \
        P3("bounds_size", bounds_size, "units", 1e-4f, BIG, 64, 64, 64, "size of the target box",  \
           H_NONE),                                                                                \
        P("init_pos_radius", init_pos_radius, "units", 0, BIG, 16,                                 \
          "initial positions: ball radius", H_NONE),                                               \
        OBSTACLE_ROWS(P, PI, P3)

static const shoal_param_info heading_params[] = {HEADING_ROWS(ROW_INFO, ROW_INFO_I, ROW_INFO_3)};
static const sim_hyp heading_hyps[] = {HEADING_ROWS(ROW_HYP, ROW_HYP_I, ROW_HYP_3)};

static const char *const heading_live[] = {
    "sep_weight",    "ali_weight",   "coh_weight", "neighbor_radius",
    "target_weight", "rotate_speed", "move_speed", "avoid_force",
};

static float heading_radius(const shoal_params *p) { return p->neighbor_radius; }

static void heading_bounds(const shoal_params *p, float lo[3], float hi[3])
{
    for (int c = 0; c < 3; c++) {
        lo[c] = p->bounds_center[c] - 0.5f * p->bounds_size[c];
        hi[c] = p->bounds_center[c] + 0.5f * p->bounds_size[c];
    }
}

static void heading_start(const shoal_params *p, rng *r, float row[6])
{
    float dir[3];
    rng_in_ball(r, p->init_pos_radius, row);
    rng_direction(r, dir);
    for (int c = 0; c < 3; c++)
        row[3 + c] = dir[c] * p->move_speed;
}

static const sim_model model_heading = {
    .info = {SHOAL_MODEL_HEADING, "heading",
             "seed 001, a compute-shader grid and counting-sort article", 16384, heading_params,
             COUNT_OF(heading_params), heading_live, COUNT_OF(heading_live), 0},
    .hyps = heading_hyps,
    .radius = heading_radius,
    .bounds = heading_bounds,
    .start = heading_start,
    .consts = heading_consts,
    .reach2 = heading_reach2,
    .lengths = {OFF(bounds_center[0]), OFF(bounds_center[1]), OFF(bounds_center[2]),
                OFF(bounds_size[0]), OFF(bounds_size[1]), OFF(bounds_size[2]),
                OFF(init_pos_radius)},
};
#endif
