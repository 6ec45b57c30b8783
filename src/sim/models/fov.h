/* SPDX-License-Identifier: MIT */
/* fov (seed 004, a blog post on boids avoiding obstacles through a vector field): view cones
 * and squared-distance thresholds per rule (strict: d^2 < value, cos > cos(angle)), forces
 * limited to max_force, a sphere that pulls the school back, and the seed's p += v without dt.
 * Its rules, its adapter, its constants and its parameter table; included by sim/rules.h (the
 * table only where SIM_MODEL_TABLE is defined: models.c). */

/* ---- constants (model_consts.k) ------------------------------------------------------- */

enum { FV_COS_COH, FV_COS_SEP, FV_COS_ALI };

/* the cosines of the view half-angles */
RULE_FN void fov_consts(const RULE_PARAMS *p, RULE_CONSTS *mc)
{
    mc->k[FV_COS_COH] = RF_COS(p->coh_angle);
    mc->k[FV_COS_SEP] = RF_COS(p->sep_angle);
    mc->k[FV_COS_ALI] = RF_COS(p->ali_angle);
}

/* the largest of the three squared thresholds (the candidate test's bound) */
RULE_FN vreal rule_fov_max2(const RULE_PARAMS *prm)
{
    vreal mx = prm->coh_dist2 > prm->sep_dist2 ? prm->coh_dist2 : prm->sep_dist2;
    return prm->ali_dist2 > mx ? prm->ali_dist2 : mx;
}

RULE_FN vreal fov_reach2(const RULE_PARAMS *p, const RULE_CONSTS *mc)
{
    (void)mc;
    return rule_fov_max2(p);
}

/* ---- rules ------------------------------------------------------------------------------ */

typedef struct rule_fv {
    vf3 vhat, coh, sep, ali;
    vf coh_n, ali_n;
    vf near_n; /* candidates within the largest distance: a work statistic only */
} rule_fv;

RULE_FN void rule_fov_begin(rule_fv *a, vf3 v)
{
    a->vhat = v3_normalize(v);
    a->coh = a->sep = a->ali = v3_zero();
    a->coh_n = a->ali_n = a->near_n = vf_zero();
}

/* The terms of a candidate within reach of some lane (near): the cones decide. */
RULE_FN void rule_fov_add(rule_fv *a, vm near, vf3 p, vf3 diff, vf d2, const rule_cand *c,
                          const RULE_PARAMS *prm, const RULE_CONSTS *mc)
{
    vf3 pj = rule_cand_p(c);
    vf3 e = v3_sub(pj, p); /* p_j - p_i */
    vf one = vf_set1(1.0f);
    a->near_n = vf_add_masked(a->near_n, near, one);
    vf d = vf_sqrt(d2);
    /* angle < A  <=>  cos(angle) > cos(A), cos(angle) = normalize(v_i).(e / d) */
    vf cs = vf_div(v3_dot(a->vhat, e), d);
    vm m_coh = vm_and(vm_and(near, vf_lt(d2, vf_set1(prm->coh_dist2))),
                      vf_gt(cs, vf_set1(mc->k[FV_COS_COH])));
    vm m_sep = vm_and(vm_and(near, vf_lt(d2, vf_set1(prm->sep_dist2))),
                      vf_gt(cs, vf_set1(mc->k[FV_COS_SEP])));
    vm m_ali = vm_and(vm_and(near, vf_lt(d2, vf_set1(prm->ali_dist2))),
                      vf_gt(cs, vf_set1(mc->k[FV_COS_ALI])));
    a->coh = v3_add_masked(a->coh, m_coh, pj);
    a->coh_n = vf_add_masked(a->coh_n, m_coh, one);
    if (vm_any(m_sep)) /* normalize(p_i - p_j) / sqrt(d^2) */
        a->sep = v3_add_masked(a->sep, m_sep, v3_div(v3_div(diff, d), d));
    a->ali = v3_add_masked(a->ali, m_ali, rule_cand_v(c));
    a->ali_n = vf_add_masked(a->ali_n, m_ali, one);
}

/* fov's boundary force -bf (p - c) (|p - c|^2 - R^2) / |p - c|^2 for a boid so far from the
 * centre that it overflows in float (rule_fov_finish calls it only for lanes whose float
 * result is not finite): p - c in float as the float path forms it, the rest in double (no
 * contraction on either backend: -ffp-contract=off, -fmad=false; double division is IEEE on
 * both), rounded once to float. Finite whenever bf |p - c| is below FLT_MAX. */
RULE_FN void rule_fov_boundary_far(const RULE_PARAMS *prm, const RULE_CONSTS *mc, vreal px,
                                   vreal py, vreal pz, vreal out[3])
{
    vreal pc[3] = {px - prm->boundary_center[0], py - prm->boundary_center[1],
                   pz - prm->boundary_center[2]};
    for (int c = 0; c < 3; c++)
        if (!RULE_WALL_ON(mc, c))
            pc[c] = 0.0f;
    double q[3] = {pc[0], pc[1], pc[2]};
    double sq = (q[0] * q[0] + q[1] * q[1]) + q[2] * q[2];
    double f = (sq - (double)prm->boundary_range2) / sq;
    double nbf = -(double)prm->boundary_force;
    for (int c = 0; c < 3; c++)
        out[c] = (vreal)((nbf * q[c]) * f);
}

/* rule_fov_boundary_far for the lanes in `far`, lane by lane, so every ISA (and the GPU, one
 * lane) gives the same bits; the other lanes keep b. */
RULE_FN vf3 rule_fov_boundary_far_lanes(const RULE_PARAMS *prm, const RULE_CONSTS *mc, vf3 p,
                                        vm far, vf3 b)
{
    vreal x[VW], y[VW], z[VW], bx[VW], by[VW], bz[VW];
    vf_store_n(x, p.x, VW);
    vf_store_n(y, p.y, VW);
    vf_store_n(z, p.z, VW);
    vf_store_n(bx, b.x, VW);
    vf_store_n(by, b.y, VW);
    vf_store_n(bz, b.z, VW);
    unsigned bits = vm_bits(far);
    for (int i = 0; i < VW; i++) {
        if (!(bits & (1u << i)))
            continue;
        vreal o[3];
        rule_fov_boundary_far(prm, mc, x[i], y[i], z[i], o);
        bx[i] = o[0];
        by[i] = o[1];
        bz[i] = o[2];
    }
    vf3 r = {vf_load_n(bx, VW), vf_load_n(by, VW), vf_load_n(bz, VW)};
    return r;
}

RULE_FN void rule_fov_finish(const rule_fv *a, const RULE_PARAMS *prm, const RULE_CONSTS *mc,
                             const rule_extras *x, vf3 *pp, vf3 *vp)
{
    vf3 p = *pp, v = *vp;
    vf zero = vf_zero();
    vf3 cohf =
        v3_select(vf_gt(a->coh_n, zero),
                  v3_mul(v3_sub(v3_div(a->coh, a->coh_n), p), vf_set1(prm->coh_force)), v3_zero());
    vf3 alif =
        v3_select(vf_gt(a->ali_n, zero),
                  v3_mul(v3_sub(v3_div(a->ali, a->ali_n), v), vf_set1(prm->ali_force)), v3_zero());
    vf3 sepf = v3_mul(a->sep, vf_set1(prm->sep_force));
    /* boundary sphere: -bf * (p - c) * (|p - c|^2 - R^2) / |p - c|^2 outside it; in a world
     * with a periodic axis (or in 2D, z) that axis's part of p - c is 0: the sphere becomes
     * a cylinder (or a slab) around the axes that keep their boundary */
    vf3 c3 = v3_set1(prm->boundary_center[0], prm->boundary_center[1], prm->boundary_center[2]);
    vf3 cp = v3_sub(c3, p);
    vf3 pc = v3_sub(p, c3);
    if (mc->world_on) {
        if (!mc->wall_on[0])
            cp.x = pc.x = vf_zero();
        if (!mc->wall_on[1])
            cp.y = pc.y = vf_zero();
        if (!mc->wall_on[2])
            cp.z = pc.z = vf_zero();
    }
    vf sq = v3_dot(cp, cp);
    vf R2 = vf_set1(prm->boundary_range2);
    vf excess = vf_sub(sq, R2);
    vf nbf = vf_set1(-prm->boundary_force);
    vf3 b = {vf_div(vf_mul(vf_mul(nbf, pc.x), excess), sq),
             vf_div(vf_mul(vf_mul(nbf, pc.y), excess), sq),
             vf_div(vf_mul(vf_mul(nbf, pc.z), excess), sq)};
    vm outside = vf_gt(sq, R2);
    b = v3_select(outside, b, v3_zero());
    /* A boid so far out that the product overflows (|p - c| beyond ~7e12 at bf = 1; beyond
     * ~1.8e19 |p - c|^2 itself is infinite) gets the same force computed in double. Only
     * lanes whose float result is not finite take it: every other boid keeps its bits. */
    vm finite_b = vm_and(vm_and(vf_eq(vf_sub(b.x, b.x), zero), vf_eq(vf_sub(b.y, b.y), zero)),
                         vf_eq(vf_sub(b.z, b.z), zero));
    vm far = vm_andnot(outside, finite_b);
    if (vm_any(far))
        b = rule_fov_boundary_far_lanes(prm, mc, p, far, b);
    vf maxf = vf_set1(prm->max_force);
    cohf = v3_limit(cohf, maxf);
    sepf = v3_limit(sepf, maxf);
    alif = v3_limit(alif, maxf);
    vf3 avoid = v3_zero();
    if (prm->sphere_count > 0)
        avoid = v3_mul(rule_sphere_avoid(prm, mc, p), vf_set1(prm->avoid_force));
    vf3 sum = v3_add(v3_add(v3_add(v3_add(cohf, sepf), alif), b), avoid);
    sum = rule_add_extras(sum, x);
    v = v3_add(v, v3_mul(sum, vf_set1(mc->dt)));
    v = v3_clamp_speed(v, vf_set1(prm->min_speed), vf_set1(prm->max_speed));
    p = v3_add(p, v); /* quirk: no dt, as in the seed */
    *pp = p;
    *vp = v;
}

/* ---- the adapter (rules.h RULE_ADAPTER) -------------------------------------------------- */

/* Every backend skips a candidate no lane is near. */
typedef rule_fv fov_acc;
RULE_MODEL_TRAITS(fov, 1, 0, 0, 1, SHOAL_TERM_NONE);

RULE_FN int fov_variant(const RULE_CONSTS *mc)
{
    (void)mc;
    return 0;
}

RULE_FN void fov_begin(rule_fv *a, const RULE_PARAMS *prm, const RULE_CONSTS *mc, vf3 p, vf3 v)
{
    (void)prm, (void)mc, (void)p;
    rule_fov_begin(a, v);
}

/* 0 < d^2 < the largest squared distance */
RULE_FN vm fov_near(vf d2, vf reach2) { return vm_and(vf_gt(d2, vf_zero()), vf_lt(d2, reach2)); }

RULE_FN vm fov_pair(rule_fv *a, vm near, vf3 p, vf3 diff, vf d2, const rule_cand *c,
                    const RULE_PARAMS *prm, const RULE_CONSTS *mc, int variant)
{
    (void)variant;
    rule_fov_add(a, near, p, diff, d2, c, prm, mc);
    return near;
}

RULE_FN void fov_late(rule_fv *a, vf3 diff, vf d2, const RULE_CONSTS *mc)
{
    (void)a, (void)diff, (void)d2, (void)mc;
}

RULE_FN vf fov_useful(const rule_fv *a, int variant)
{
    (void)variant;
    return a->near_n;
}

RULE_FN void fov_finish(rule_fv *a, const RULE_PARAMS *prm, const RULE_CONSTS *mc, int variant,
                        const rule_extras *x, vf3 *p, vf3 *v)
{
    (void)variant;
    rule_fov_finish(a, prm, mc, x, p, v);
}

/* ---- the reference's ties (src/verify) -------------------------------------------------- */

#if defined(RULE_REFERENCE)
static inline void fov_ties(const rule_fv *a, double t[SHOAL_TERM_COUNT])
{
    t[SHOAL_TERM_SEPARATION] = REF_T3(a->sep);
    t[SHOAL_TERM_ALIGNMENT] = REF_T3(a->ali) + REF_T1(a->ali_n);
    t[SHOAL_TERM_COHESION] = REF_T3(a->coh) + REF_T1(a->coh_n);
}

/* A tie no candidate made: the boid within rounding of the boundary sphere. */
static inline int fov_finish_tie(const RULE_PARAMS *p, const RULE_CONSTS *mc, const double x[6])
{
    double size = fabs(x[0]) + fabs(x[1]) + fabs(x[2]);
    double sq = 0;
    for (int c = 0; c < 3; c++)
        if (RULE_WALL_ON(mc, c))
            sq += (x[c] - p->boundary_center[c]) * (x[c] - p->boundary_center[c]);
    if (REF_NEAR(sq, p->boundary_range2, size * size))
        return SHOAL_TERM_WALLS;
    return SHOAL_TERM_NONE;
}
#endif

/* ---- the table (models.c) --------------------------------------------------------------- */

#if defined(SIM_MODEL_TABLE)
/* The seed gives no values: these flock visibly (units per step for speeds, as the seed's
 * p += v). A view cone's hypothesis reaches as far as its term's squared distance. */
#define FOV_ROWS(P, PI, P3)                                                                        \
    P("coh_dist2", coh_dist2, "units^2", 1e-8f, BIG, 9,                                            \
      "cohesion: squared distance (d^2 < value)", H_DIST2(COHESION, 1)),                           \
        P("sep_dist2", sep_dist2, "units^2", 1e-8f, BIG, 1, "separation: squared distance",        \
          H_DIST2(SEPARATION, 1)),                                                                 \
        P("ali_dist2", ali_dist2, "units^2", 1e-8f, BIG, 4, "alignment: squared distance",         \
          H_DIST2(ALIGNMENT, 1)),                                                                  \
        P("coh_angle", coh_angle, "rad", 0, 3.14159265f, 2.0f,                                     \
          "cohesion view half-angle, radians", H_COS(COHESION, FV_COS_COH, 1)),                    \
        P("sep_angle", sep_angle, "rad", 0, 3.14159265f, 3.14159265f,                              \
          "separation view half-angle", H_COS(SEPARATION, FV_COS_SEP, 1)),                         \
        P("ali_angle", ali_angle, "rad", 0, 3.14159265f, 1.5f, "alignment view half-angle",        \
          H_COS(ALIGNMENT, FV_COS_ALI, 1)),                                                        \
        P("coh_force", coh_force, "-", -BIG, BIG, 0.5f, "cohesion force", H_WEIGHT(COHESION)),     \
        P("sep_force", sep_force, "-", -BIG, BIG, 1.5f, "separation force", H_WEIGHT(SEPARATION)), \
        P("ali_force", ali_force, "-", -BIG, BIG, 1.0f, "alignment force", H_WEIGHT(ALIGNMENT)),   \
        P("max_force", max_force, "units/step/s", 0, BIG, 1.0f, "limit of each rule's force",      \
          H_FACTOR(INTEGRATION)),                                                                  \
        P("min_speed", min_speed, "units/step", 0, BIG, 0.05f, "lowest speed, units per step",     \
          H_FACTOR(INTEGRATION)),                                                                  \
        P("max_speed", max_speed, "units/step", 1e-6f, BIG, 0.15f,                                 \
          "highest speed, units per step", H_FACTOR(INTEGRATION)),                                 \
        P("boundary_force", boundary_force, "-", 0, BIG, 1.0f, "pull back into the sphere",        \
          H_WEIGHT(WALLS)),                                                                        \
        P("boundary_range2", boundary_range2, "units^2", 1e-6f, BIG *BIG, 400,                     \
          "squared radius of the sphere", H_FACTOR(WALLS)),                                        \
        P3("boundary_center", boundary_center, "units", -BIG, BIG, 0, 0, 0,                        \
           "centre of the sphere", H_NONE),                                                        \
        P("init_pos_radius", init_pos_radius, "units", 0, BIG, 20,                                 \
          "initial positions: ball radius", H_NONE),                                               \
        OBSTACLE_ROWS(P, PI, P3)

static const shoal_param_info fov_params[] = {FOV_ROWS(ROW_INFO, ROW_INFO_I, ROW_INFO_3)};
static const sim_hyp fov_hyps[] = {FOV_ROWS(ROW_HYP, ROW_HYP_I, ROW_HYP_3)};

static const char *const fov_live[] = {
    "max_speed", "min_speed", "sep_dist2",      "ali_dist2",   "coh_dist2",
    "sep_angle", "ali_angle", "coh_angle",      "sep_force",   "ali_force",
    "coh_force", "max_force", "boundary_force", "avoid_force",
};

static float fov_radius(const shoal_params *p)
{
    return sqrtf(fmaxf(p->coh_dist2, fmaxf(p->sep_dist2, p->ali_dist2)));
}

static void fov_bounds(const shoal_params *p, float lo[3], float hi[3])
{
    float r = sqrtf(p->boundary_range2);
    for (int c = 0; c < 3; c++) {
        lo[c] = p->boundary_center[c] - r;
        hi[c] = p->boundary_center[c] + r;
    }
}

/* seed 004: p in a ball around the sphere's centre, v = normalize(uniform cube sample) *
 * min_speed */
static void fov_start(const shoal_params *p, rng *r, float row[6])
{
    rng_in_ball(r, p->init_pos_radius, row);
    for (int c = 0; c < 3; c++)
        row[c] += p->boundary_center[c];
    float v[3], d2;
    do {
        for (int c = 0; c < 3; c++)
            v[c] = rng_range(r, -1.0f, 1.0f);
        d2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    } while (d2 < 1e-6f);
    float d = sqrtf(d2);
    for (int c = 0; c < 3; c++)
        row[3 + c] = v[c] / d * p->min_speed;
}

static shoal_status fov_check(const shoal_params *p, shoal_error *err)
{
    if (p->min_speed > p->max_speed)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "fov: min_speed (%g) is above max_speed (%g)",
                               (double)p->min_speed, (double)p->max_speed);
    return SHOAL_OK;
}

static const sim_model model_fov = {
    .info = {SHOAL_MODEL_FOV, "fov", "seed 004, a vector-field obstacle-avoidance post", 4096,
             fov_params, COUNT_OF(fov_params), fov_live, COUNT_OF(fov_live), 1},
    .hyps = fov_hyps,
    .radius = fov_radius,
    .bounds = fov_bounds,
    .start = fov_start,
    .consts = fov_consts,
    .reach2 = fov_reach2,
    .check = fov_check,
    .lengths = {OFF(boundary_center[0]), OFF(boundary_center[1]), OFF(boundary_center[2]),
                OFF(init_pos_radius)},
    .areas = {OFF(boundary_range2)},
};
#endif
