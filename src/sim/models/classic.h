/* SPDX-License-Identifier: MIT */
/* classic (seed 002, a Unity CPU boids article): one radius, 0 < d <= fov; rule1 repels from
 * the neighbours and from a virtual boid on each wall of the box within fov (k / d^2), rule2
 * aligns, rule3 coheres, the three weighted by w1 w2 w3 over their sum; p += v dt + a dt^2 / 2
 * and the speed clamped to [min_speed, max_speed]. Its rules, its adapter, its constants and
 * its parameter table; included by sim/rules.h (the table only where SIM_MODEL_TABLE is
 * defined: models.c). */

/* ---- constants (model_consts.k) ------------------------------------------------------- */

enum { CL_FOV2 };

RULE_FN void classic_consts(const RULE_PARAMS *p, RULE_CONSTS *mc)
{
    mc->k[CL_FOV2] = p->fov * p->fov;
}

RULE_FN vreal classic_reach2(const RULE_PARAMS *p, const RULE_CONSTS *mc)
{
    (void)p;
    return mc->k[CL_FOV2];
}

/* ---- rules ------------------------------------------------------------------------------ */

typedef struct rule_cl {
    vf3 r1, vsum, psum;
    vf n1, n;
} rule_cl;

/* classic rule1 term for a point q seen from p: -normalize(q - p) * k / |q - p|^2, with
 * the seed's operation order: ((-(e / d)) * k) / (d * d). */
RULE_FN vf3 rule_classic_repel(vf3 e, vf d, vf k)
{
    vf dd = vf_mul(d, d);
    vf3 r = {vf_div(vf_mul(vf_neg(vf_div(e.x, d)), k), dd),
             vf_div(vf_mul(vf_neg(vf_div(e.y, d)), k), dd),
             vf_div(vf_mul(vf_neg(vf_div(e.z, d)), k), dd)};
    return r;
}

/* One virtual wall boid: the plane with normal n at signed distance sd (positive inside)
 * gives the point q = p - sd * n when sd <= fov; e = q - p. */
RULE_FN void rule_classic_wall(rule_cl *a, vf3 p, vf sd, vreal nx, vreal ny, vreal nz, vf fov, vf k)
{
    vf3 q = {vf_sub(p.x, vf_mul(sd, vf_set1(nx))), vf_sub(p.y, vf_mul(sd, vf_set1(ny))),
             vf_sub(p.z, vf_mul(sd, vf_set1(nz)))};
    vf3 e = v3_sub(q, p);
    vf e2 = v3_dot(e, e);
    vm m = vm_and(vf_le(sd, fov), vf_gt(e2, vf_zero()));
    if (!vm_any(m))
        return;
    vf d = vf_sqrt(e2);
    a->r1 = v3_add_masked(a->r1, m, rule_classic_repel(e, d, k));
    a->n1 = vf_add_masked(a->n1, m, vf_set1(1.0f));
}

/* The virtual wall boids first (Up, Down, Left, Right, Forward, Back, as the seed adds
 * them), then the real neighbours (rule_classic_pair), in one mean for rule1. No wall boids
 * on a periodic axis, nor in z in 2D (RULE_WALL_ON). */
RULE_FN void rule_classic_begin(rule_cl *a, const RULE_PARAMS *prm, const RULE_CONSTS *mc, vf3 p)
{
    vf fov = vf_set1(prm->fov), k = vf_set1(prm->sep_strength);
    a->r1 = a->vsum = a->psum = v3_zero();
    a->n1 = a->n = vf_zero();
    if (RULE_WALL_ON(mc, 1)) {
        rule_classic_wall(a, p, vf_sub(vf_set1(prm->box_max[1]), p.y), 0, -1, 0, fov, k);
        rule_classic_wall(a, p, vf_sub(p.y, vf_set1(prm->box_min[1])), 0, 1, 0, fov, k);
    }
    if (RULE_WALL_ON(mc, 0)) {
        rule_classic_wall(a, p, vf_sub(p.x, vf_set1(prm->box_min[0])), 1, 0, 0, fov, k);
        rule_classic_wall(a, p, vf_sub(vf_set1(prm->box_max[0]), p.x), -1, 0, 0, fov, k);
    }
    if (RULE_WALL_ON(mc, 2)) {
        rule_classic_wall(a, p, vf_sub(vf_set1(prm->box_max[2]), p.z), 0, 0, -1, fov, k);
        rule_classic_wall(a, p, vf_sub(p.z, vf_set1(prm->box_min[2])), 0, 0, 1, fov, k);
    }
}

/* The terms of a candidate that passed classic_near in some lane (m). */
RULE_FN void rule_classic_add(rule_cl *a, vm m, vf3 p, vf d2, const rule_cand *c,
                              const RULE_PARAMS *prm)
{
    vf3 pj = rule_cand_p(c);
    vf3 e = v3_sub(pj, p); /* the seed's diff = other - me */
    vf one = vf_set1(1.0f);
    vf d = vf_sqrt(d2);
    a->r1 = v3_add_masked(a->r1, m, rule_classic_repel(e, d, vf_set1(prm->sep_strength)));
    a->n1 = vf_add_masked(a->n1, m, one);
    a->vsum = v3_add_masked(a->vsum, m, rule_cand_v(c));
    a->psum = v3_add_masked(a->psum, m, pj);
    a->n = vf_add_masked(a->n, m, one);
}

RULE_FN void rule_classic_finish(const rule_cl *a, const RULE_PARAMS *prm, const RULE_CONSTS *mc,
                                 const rule_extras *x, vf3 *pp, vf3 *vp)
{
    vf3 p = *pp, v = *vp;
    vf zero = vf_zero();
    vm has1 = vf_gt(a->n1, zero), has = vf_gt(a->n, zero);
    vf3 rule1 = v3_select(has1, v3_div(a->r1, a->n1), v3_zero());
    vf3 rule2 = v3_select(has, v3_sub(v3_div(a->vsum, a->n), v), v3_zero());
    vf3 rule3 = v3_select(has, v3_sub(v3_div(a->psum, a->n), p), v3_zero());
    /* a = (w1 r1 + w2 r2 + w3 r3) / (w1 + w2 + w3), the seed's divisor (the sum added left to
     * right in float: 8 exactly at the defaults 5 2 1); a zero sum gives a = 0 */
    vf3 acc = v3_add(v3_add(v3_mul(rule1, vf_set1(prm->w1)), v3_mul(rule2, vf_set1(prm->w2))),
                     v3_mul(rule3, vf_set1(prm->w3)));
    vreal wsum = prm->w1 + prm->w2 + prm->w3;
    acc = wsum != 0.0f ? v3_div(acc, vf_set1(wsum)) : v3_zero();
    if (prm->sphere_count > 0)
        acc = v3_add(acc, v3_mul(rule_sphere_avoid(prm, mc, p), vf_set1(prm->avoid_force)));
    acc = rule_add_extras(acc, x);
    /* p += v dt + a dt^2 / 2; v += a dt; |v| clamped to [min_speed, max_speed] */
    vf dt = vf_set1(mc->dt), half_dt2 = vf_set1(mc->dt * mc->dt * 0.5f);
    p = v3_add(p, v3_add(v3_mul(v, dt), v3_mul(acc, half_dt2)));
    v = v3_add(v, v3_mul(acc, dt));
    v = v3_clamp_speed(v, vf_set1(prm->min_speed), vf_set1(prm->max_speed));
    *pp = p;
    *vp = v;
}

/* ---- the adapter (rules.h RULE_ADAPTER) -------------------------------------------------- */

/* Every backend skips a candidate no lane is near. The wall boids are added by begin: the
 * reference's tie of begin is the walls'. */
typedef rule_cl classic_acc;
RULE_MODEL_TRAITS(classic, 1, 0, 0, 1, SHOAL_TERM_WALLS);

RULE_FN int classic_variant(const RULE_CONSTS *mc)
{
    (void)mc;
    return 0;
}

RULE_FN void classic_begin(rule_cl *a, const RULE_PARAMS *prm, const RULE_CONSTS *mc, vf3 p, vf3 v)
{
    (void)v;
    rule_classic_begin(a, prm, mc, p);
}

/* 0 < d^2 <= fov^2 */
RULE_FN vm classic_near(vf d2, vf reach2)
{
    return vm_and(vf_gt(d2, vf_zero()), vf_le(d2, reach2));
}

RULE_FN vm classic_pair(rule_cl *a, vm near, vf3 p, vf3 diff, vf d2, const rule_cand *c,
                        const RULE_PARAMS *prm, const RULE_CONSTS *mc, int variant)
{
    (void)diff, (void)mc, (void)variant;
    rule_classic_add(a, near, p, d2, c, prm);
    return near;
}

RULE_FN void classic_late(rule_cl *a, vf3 diff, vf d2, const RULE_CONSTS *mc)
{
    (void)a, (void)diff, (void)d2, (void)mc;
}

RULE_FN vf classic_useful(const rule_cl *a, int variant)
{
    (void)variant;
    return a->n;
}

RULE_FN void classic_finish(rule_cl *a, const RULE_PARAMS *prm, const RULE_CONSTS *mc, int variant,
                            const rule_extras *x, vf3 *p, vf3 *v)
{
    (void)variant;
    rule_classic_finish(a, prm, mc, x, p, v);
}

/* ---- the reference's ties (src/verify) -------------------------------------------------- */

#if defined(RULE_REFERENCE)
static inline void classic_ties(const rule_cl *a, double t[SHOAL_TERM_COUNT])
{
    t[SHOAL_TERM_SEPARATION] = REF_T3(a->r1) + REF_T1(a->n1);
    t[SHOAL_TERM_ALIGNMENT] = REF_T3(a->vsum);
    t[SHOAL_TERM_COHESION] = REF_T3(a->psum) + REF_T1(a->n);
}

/* the wall planes within rounding of fov are begin's ties (classic_BEGIN_TERM) */
static inline int classic_finish_tie(const RULE_PARAMS *p, const RULE_CONSTS *mc, const double x[6])
{
    (void)p, (void)mc, (void)x;
    return SHOAL_TERM_NONE;
}
#endif

/* ---- the table (models.c) --------------------------------------------------------------- */

#if defined(SIM_MODEL_TABLE)
#define CLASSIC_ROWS(P, PI, P3)                                                                    \
    P("fov", fov, "units", 1e-4f, BIG, 5, "neighbour and wall radius (d <= fov)",                  \
      H_RADIUS(NEIGHBORS, CL_FOV2, -1, 0)),                                                        \
        P("min_speed", min_speed, "units/s", 0, BIG, 2, "lowest speed, units/s",                   \
          H_FACTOR(INTEGRATION)),                                                                  \
        P("max_speed", max_speed, "units/s", 1e-6f, BIG, 5, "highest speed, units/s",              \
          H_FACTOR(INTEGRATION)),                                                                  \
        P("w1", w1, "-", -BIG, BIG, 5, "separation weight (rule1)", H_WEIGHT(SEPARATION)),         \
        P("w2", w2, "-", -BIG, BIG, 2, "alignment weight (rule2)", H_WEIGHT(ALIGNMENT)),           \
        P("w3", w3, "-", -BIG, BIG, 1, "cohesion weight (rule3)", H_WEIGHT(COHESION)),             \
        P("sep_strength", sep_strength, "-", -BIG, BIG, 10, "rule1 numerator (the seed's 10)",     \
          H_FACTOR(SEPARATION)),                                                                   \
        P3("box_min", box_min, "units", -BIG, BIG, -10, 0, -10, "box corner (low)",                \
           H_OFF(WALLS, -1)),                                                                      \
        P3("box_max", box_max, "units", -BIG, BIG, 10, 20, 10, "box corner (high)",                \
           H_OFF(WALLS, 1)),                                                                       \
        OBSTACLE_ROWS(P, PI, P3)

static const shoal_param_info classic_params[] = {CLASSIC_ROWS(ROW_INFO, ROW_INFO_I, ROW_INFO_3)};
static const sim_hyp classic_hyps[] = {CLASSIC_ROWS(ROW_HYP, ROW_HYP_I, ROW_HYP_3)};

static const char *const classic_live[] = {
    "max_speed", "min_speed", "fov", "w1", "w2", "w3", "sep_strength", "avoid_force",
};

static float classic_radius(const shoal_params *p) { return p->fov; }

static void classic_bounds(const shoal_params *p, float lo[3], float hi[3])
{
    for (int c = 0; c < 3; c++) {
        lo[c] = p->box_min[c];
        hi[c] = p->box_max[c];
    }
}

/* seed 002: uniform in the box (Random.Range per axis), a random rotation and Velocity =
 * transform.forward * 2: speed 2 in a uniform direction, whatever min_speed and max_speed
 * are (the first step clamps it, as the seed's does) */
static void classic_start(const shoal_params *p, rng *r, float row[6])
{
    float dir[3];
    for (int c = 0; c < 3; c++)
        row[c] = rng_range(r, p->box_min[c], p->box_max[c]);
    rng_direction(r, dir);
    for (int c = 0; c < 3; c++)
        row[3 + c] = dir[c] * 2.0f;
}

static shoal_status classic_check(const shoal_params *p, shoal_error *err)
{
    for (int c = 0; c < 3; c++)
        if (!(p->box_min[c] < p->box_max[c]))
            return shoal_error_set(
                err, SHOAL_ERR_INPUT, "classic: box_min_%c (%g) must be below box_max_%c (%g)",
                "xyz"[c], (double)p -> box_min[c], "xyz"[c], (double)p -> box_max[c]);
    if (p->min_speed > p->max_speed)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "classic: min_speed (%g) is above max_speed (%g)",
                               (double)p->min_speed, (double)p->max_speed);
    return SHOAL_OK;
}

static const sim_model model_classic = {
    .info = {SHOAL_MODEL_CLASSIC, "classic", "seed 002, a Unity CPU boids article", 100,
             classic_params, COUNT_OF(classic_params), classic_live, COUNT_OF(classic_live), 0},
    .hyps = classic_hyps,
    .radius = classic_radius,
    .bounds = classic_bounds,
    .start = classic_start,
    .consts = classic_consts,
    .reach2 = classic_reach2,
    .check = classic_check,
    /* it starts in its box: no start radius */
    .lengths = {OFF(box_min[0]), OFF(box_min[1]), OFF(box_min[2]), OFF(box_max[0]), OFF(box_max[1]),
                OFF(box_max[2])},
};
#endif
