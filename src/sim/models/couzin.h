/* SPDX-License-Identifier: MIT */
/* couzin (I. D. Couzin, J. Krause, R. James, G. D. Ruxton, N. R. Franks, J. Theor. Biol. 218,
 * 1-11, 2002; docs/SCIENCE.md): constant speed; around each boid a zone of repulsion (d < r_r),
 * of orientation (r_r <= d < r_o) and of attraction (r_o <= d < r_a), the last two blind to a
 * neighbour in the volume behind it (outside the field of perception); repulsion overrides, else
 * the mean of the unit orientation and attraction directions (or whichever zone is not empty), else
 * the heading; the desired direction is turned by a wrapped-normal angle of standard deviation
 * sigma (on the sphere, or in the plane of a 2D world), then the heading turns toward it by at most
 * turn_rate * dt, and the boid moves with its new velocity. Its rules, its adapter, its constants
 * and its parameter table; included by sim/rules.h (the table only where SIM_MODEL_TABLE is
 * defined: models.c). */

/* ---- constants (model_consts.k) ------------------------------------------------------- */

enum { CZ_RR2, CZ_RO2, CZ_RA2, CZ_COS_SEE, CZ_COS_TURN, CZ_SIN_TURN };

/* The squared zone radii; the cosine of half the field of perception (-2 at 360 degrees:
 * nothing is blind, whatever a cosine rounds to); the cosine and sine of the largest turn of
 * one step, turn_rate * dt (at or beyond pi any direction is reached: cosine -2). Computed on
 * the host in double (libm), rounded once to the backend's type. */
RULE_FN void couzin_consts(const RULE_PARAMS *p, RULE_CONSTS *mc)
{
    const double pi = 3.14159265358979323846, deg = pi / 180.0;
    mc->k[CZ_RR2] = p->sep_radius * p->sep_radius;
    mc->k[CZ_RO2] = p->ali_radius * p->ali_radius;
    mc->k[CZ_RA2] = p->coh_radius * p->coh_radius;
    mc->k[CZ_COS_SEE] = p->perception_deg >= 360.0f
                            ? (vreal)-2.0f
                            : (vreal)cos((double)p->perception_deg * 0.5 * deg);
    double turn = (double)p->turn_rate_deg * deg * (double)mc->dt;
    mc->k[CZ_COS_TURN] = turn >= pi ? (vreal)-2.0f : (vreal)cos(turn);
    mc->k[CZ_SIN_TURN] = turn >= pi ? (vreal)0.0f : (vreal)sin(turn);
}

/* the zone of attraction's (the zones nest: couzin_check) */
RULE_FN vreal couzin_reach2(const RULE_PARAMS *p, const RULE_CONSTS *mc)
{
    (void)p;
    return mc->k[CZ_RA2];
}

/* ---- rules ------------------------------------------------------------------------------ */

typedef struct rule_cz {
    vf3 h;      /* the boid's own unit heading */
    vf3 dr;     /* repulsion: -sum of u_ij, u_ij the unit vector from the boid to j */
    vf3 dor;    /* orientation: sum of the unit headings h_j */
    vf3 da_neg; /* attraction: -sum of u_ij (negated once in finish: the same bits as summing
                 * u_ij, negation being exact) */
    vf nr, no, na;
    vf near_n; /* candidates within r_a (a work statistic) */
} rule_cz;

/* The terms of a candidate within r_a of some lane (near: 0 < d^2 < r_a^2), its zone by d^2:
 * repulsion whatever the angle (the paper's first rule holds "at all times"), orientation and
 * attraction only when it is seen, the angle between the heading and u_ij at most half the
 * field of perception (cos >= cos(alpha / 2)): the blind volume behind. */
RULE_FN void rule_couzin_add(rule_cz *a, vm near, vf3 diff, vf d2, const rule_cand *c,
                             const RULE_CONSTS *mc)
{
    vf one = vf_set1(1.0f);
    a->near_n = vf_add_masked(a->near_n, near, one);
    /* diff = p_i - p_j, so diff / d = -u_ij */
    vf3 w = v3_div(diff, vf_sqrt(d2));
    vf cs = vf_neg(v3_dot(a->h, w)); /* h . u_ij */
    vm seen = vm_and(near, vf_le(vf_set1(mc->k[CZ_COS_SEE]), cs));
    vm in_r = vf_lt(d2, vf_set1(mc->k[CZ_RR2]));
    vm in_o = vf_lt(d2, vf_set1(mc->k[CZ_RO2]));
    vm zr = vm_and(near, in_r);
    vm zo = vm_and(vm_andnot(seen, in_r), in_o);
    vm za = vm_andnot(seen, in_o);
    a->dr = v3_add_masked(a->dr, zr, w);
    a->nr = vf_add_masked(a->nr, zr, one);
    a->dor = v3_add_masked(a->dor, zo, rule_cand_dir(c));
    a->no = vf_add_masked(a->no, zo, one);
    a->da_neg = v3_add_masked(a->da_neg, za, w);
    a->na = vf_add_masked(a->na, za, one);
}

RULE_FN void rule_couzin_finish(const rule_cz *a, const RULE_PARAMS *prm, const RULE_CONSTS *mc,
                                const rule_extras *x, vf3 *pp, vf3 *vp)
{
    vf3 p = *pp;
    vf zero = vf_zero();
    vf3 h = a->h;
    /* the desired direction */
    vm hr = vf_gt(a->nr, zero), ho = vf_gt(a->no, zero), ha = vf_gt(a->na, zero);
    vf3 uo = v3_normalize(a->dor);
    vf3 ua = v3_mul(v3_normalize(a->da_neg), vf_set1(-1.0f));
    vf3 want = v3_select(vm_and(ho, ha), v3_normalize(v3_add(uo, ua)), v3_select(ho, uo, ua));
    want = v3_select(hr, v3_normalize(a->dr), want);
    /* nobody seen, or a direction of length 0: the heading */
    want = v3_select(vf_gt(v3_dot(want, want), zero), want, h);
    /* obstacles and predators (every model's, off by default) join the desired direction */
    if (prm->sphere_count > 0 || x->field_on || x->flee_on) {
        vf3 e = v3_zero();
        if (prm->sphere_count > 0)
            e = v3_mul(rule_sphere_avoid(prm, mc, p), vf_set1(prm->avoid_force));
        want = v3_normalize(v3_add(want, rule_add_extras(e, x)));
    }
    /* the noise: draw 0 of the lane's row, a wrapped-normal angle sigma z */
    int plane = rule_plane(mc);
    noise_key key = rule_noise_key(mc);
    float sigma = (float)prm->noise;
    vreal q[4][VW];
    for (int i = 0; i < VW; i++) {
        float d[4] = {1.0f, 0.0f, 1.0f, 0.0f};
        if (i < x->lanes) {
            noise_bits b = noise_draw(key, x->rows[i], 0);
            if (plane) {
                float z[2];
                noise_gauss2(b.w[0], b.w[1], z);
                noise_sincos(sigma * z[0], &d[1], &d[0]);
            } else {
                noise_sphere_gauss_parts(b, sigma, d);
            }
        }
        for (int k = 0; k < 4; k++)
            q[k][i] = d[k];
    }
    vf ct = vf_load_n(q[0], VW), st = vf_load_n(q[1], VW);
    vf3 dn;
    if (plane) {
        dn = rule_turn2(want, ct, st);
        dn.z = zero;
    } else {
        dn = rule_tilt(want, ct, st, vf_load_n(q[2], VW), vf_load_n(q[3], VW));
    }
    dn = v3_normalize(dn);
    /* the turn: to dn when it is within turn_rate * dt of the heading, else by that angle
     * toward it in their common plane (dn exactly opposite: toward the basis' e1, in 2D the
     * heading turned left) */
    vf c = v3_dot(h, dn);
    vf cos_t = vf_set1(mc->k[CZ_COS_TURN]), sin_t = vf_set1(mc->k[CZ_SIN_TURN]);
    vm within = vf_le(cos_t, c);
    vf3 w = v3_sub(dn, v3_mul(h, c));
    vf wl = vf_sqrt(v3_dot(w, w));
    vm flat = vm_andnot(vm_first(VW), vf_gt(wl, zero));
    vf3 wd = v3_div(w, wl);
    if (vm_any(flat)) {
        vf3 perp, e2;
        if (plane) {
            perp.x = vf_neg(h.y);
            perp.y = h.x;
            perp.z = zero;
        } else {
            rule_basis(h, &perp, &e2);
        }
        wd = v3_select(flat, perp, wd);
    }
    vf3 turned = v3_normalize(v3_add(v3_mul(h, cos_t), v3_mul(wd, sin_t)));
    vf3 nh = v3_select(within, dn, turned);
    vf3 v = v3_mul(nh, vf_set1(prm->move_speed));
    *pp = v3_add(p, v3_mul(v, vf_set1(mc->dt)));
    *vp = v;
}

/* ---- the adapter (rules.h RULE_ADAPTER) -------------------------------------------------- */

/* Every backend skips a candidate no lane is near; its pair reads dir_j (rules.h rule_cand). */
typedef rule_cz couzin_acc;
RULE_MODEL_TRAITS(couzin, 1, 1, 0, 1, SHOAL_TERM_NONE);

RULE_FN int couzin_variant(const RULE_CONSTS *mc)
{
    (void)mc;
    return 0;
}

RULE_FN void couzin_begin(rule_cz *a, const RULE_PARAMS *prm, const RULE_CONSTS *mc, vf3 p, vf3 v)
{
    (void)prm, (void)mc, (void)p;
    a->h = v3_normalize(v);
    a->dr = a->dor = a->da_neg = v3_zero();
    a->nr = a->no = a->na = a->near_n = vf_zero();
}

/* 0 < d^2 < r_a^2 (the boid itself and a boid on top of it excluded) */
RULE_FN vm couzin_near(vf d2, vf reach2) { return vm_and(vf_gt(d2, vf_zero()), vf_lt(d2, reach2)); }

RULE_FN vm couzin_pair(rule_cz *a, vm near, vf3 p, vf3 diff, vf d2, const rule_cand *c,
                       const RULE_PARAMS *prm, const RULE_CONSTS *mc, int variant)
{
    (void)p, (void)prm, (void)variant;
    rule_couzin_add(a, near, diff, d2, c, mc);
    return near;
}

RULE_FN void couzin_late(rule_cz *a, vf3 diff, vf d2, const RULE_CONSTS *mc)
{
    (void)a, (void)diff, (void)d2, (void)mc;
}

RULE_FN vf couzin_useful(const rule_cz *a, int variant)
{
    (void)variant;
    return a->near_n;
}

RULE_FN void couzin_finish(rule_cz *a, const RULE_PARAMS *prm, const RULE_CONSTS *mc, int variant,
                           const rule_extras *x, vf3 *p, vf3 *v)
{
    (void)variant;
    rule_couzin_finish(a, prm, mc, x, p, v);
}

/* ---- the reference's ties (src/verify) -------------------------------------------------- */

#if defined(RULE_REFERENCE)
/* a zone per term (the blind angle's ties land in orientation's or attraction's) */
static inline void couzin_ties(const rule_cz *a, double t[SHOAL_TERM_COUNT])
{
    t[SHOAL_TERM_SEPARATION] = REF_T3(a->dr) + REF_T1(a->nr);
    t[SHOAL_TERM_ALIGNMENT] = REF_T3(a->dor) + REF_T1(a->no);
    t[SHOAL_TERM_COHESION] = REF_T3(a->da_neg) + REF_T1(a->na);
}

static inline int couzin_finish_tie(const RULE_PARAMS *p, const RULE_CONSTS *mc, const double x[6])
{
    (void)p, (void)mc, (void)x;
    return SHOAL_TERM_NONE;
}
#endif

/* ---- the table (models.c) --------------------------------------------------------------- */

#if defined(SIM_MODEL_TABLE)
/* The paper's values: N = 100, r_r = 1, alpha = 270 degrees, theta = 40 degrees/s, sigma = 0.05,
 * s = 3 (dt 0.1, the scene's); delta r_o = 2 and delta r_a = 14, the torus of the paper's phase
 * plane (docs/SCIENCE.md). The box: the periodic world of its scene (300 units). */
#define COUZIN_ROWS(P, PI, P3)                                                                     \
    P("repulsion_radius", sep_radius, "units", 0, BIG, 1, "zone of repulsion r_r: d < r_r",        \
      H_RADIUS(SEPARATION, CZ_RR2, -1, 1)),                                                        \
        P("orientation_radius", ali_radius, "units", 0, BIG, 3,                                    \
          "zone of orientation r_o: r_r <= d < r_o", H_RADIUS(ALIGNMENT, CZ_RO2, -1, 1)),          \
        P("attraction_radius", coh_radius, "units", 1e-4f, BIG, 17,                                \
          "zone of attraction r_a: r_o <= d < r_a", H_RADIUS(COHESION, CZ_RA2, -1, 1)),            \
        P("perception_deg", perception_deg, "deg", 0, 360, 270,                                    \
          "field of perception alpha in (0, 360]: the rest, behind, is blind",                     \
          H_COS(NEIGHBORS, CZ_COS_SEE, 0)),                                                        \
        P("turn_rate_deg", turn_rate_deg, "deg/s", 0, BIG, 40,                                     \
          "turning rate theta: at most theta * dt per step", H_FACTOR(INTEGRATION)),               \
        P("speed", move_speed, "units/s", 0, BIG, 3, "speed s", H_FACTOR(INTEGRATION)),            \
        P("noise", noise, "rad", 0, 1000, 0.05f,                                                   \
          "noise sigma: the desired direction turns by a wrapped-normal angle",                    \
          H_FACTOR(INTEGRATION)),                                                                  \
        P3("box_center", bounds_center, "units", -BIG, BIG, 0, 0, 0,                               \
           "centre of the start ball and of the grid's box", H_NONE),                              \
        P3("box_size", bounds_size, "units", 1e-4f, BIG, 300, 300, 300,                            \
           "the grid's box where the world has none (no walls)", H_NONE),                          \
        P("init_pos_radius", init_pos_radius, "units", 0, BIG, 5,                                  \
          "initial positions: ball radius", H_NONE),                                               \
        OBSTACLE_ROWS(P, PI, P3)

static const shoal_param_info couzin_params[] = {COUZIN_ROWS(ROW_INFO, ROW_INFO_I, ROW_INFO_3)};
static const sim_hyp couzin_hyps[] = {COUZIN_ROWS(ROW_HYP, ROW_HYP_I, ROW_HYP_3)};

static const char *const couzin_live[] = {
    "orientation_radius",
    "attraction_radius",
    "repulsion_radius",
    "perception_deg",
    "turn_rate_deg",
    "noise",
    "speed",
    "avoid_force",
};

static float couzin_radius(const shoal_params *p) { return p->coh_radius; }

static void couzin_bounds(const shoal_params *p, float lo[3], float hi[3])
{
    for (int c = 0; c < 3; c++) {
        lo[c] = p->bounds_center[c] - 0.5f * p->bounds_size[c];
        hi[c] = p->bounds_center[c] + 0.5f * p->bounds_size[c];
    }
}

/* a compact school: positions in the ball around box_center, headings uniform, speed s */
static void couzin_start(const shoal_params *p, rng *r, float row[6])
{
    float dir[3];
    rng_in_ball(r, p->init_pos_radius, row);
    for (int c = 0; c < 3; c++)
        row[c] += p->bounds_center[c];
    rng_direction(r, dir);
    for (int c = 0; c < 3; c++)
        row[3 + c] = dir[c] * p->move_speed;
}

static shoal_status couzin_check(const shoal_params *p, shoal_error *err)
{
    if (!(p->sep_radius <= p->ali_radius && p->ali_radius <= p->coh_radius))
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "couzin: the zones must nest: repulsion_radius (%g) <= "
                               "orientation_radius (%g) <= attraction_radius (%g)",
                               (double)p->sep_radius, (double)p->ali_radius, (double)p->coh_radius);
    if (!(p->perception_deg > 0))
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "couzin: perception_deg %g is outside (0, 360]: a boid must see "
                               "some angle",
                               (double)p->perception_deg);
    return SHOAL_OK;
}

static const sim_model model_couzin = {
    .info = {SHOAL_MODEL_COUZIN, "couzin", "Couzin et al., J. Theor. Biol. 218, 1-11 (2002)", 100,
             couzin_params, COUNT_OF(couzin_params), couzin_live, COUNT_OF(couzin_live), 0},
    .hyps = couzin_hyps,
    .radius = couzin_radius,
    .bounds = couzin_bounds,
    .start = couzin_start,
    .consts = couzin_consts,
    .reach2 = couzin_reach2,
    .check = couzin_check,
    .lengths = {OFF(bounds_center[0]), OFF(bounds_center[1]), OFF(bounds_center[2]),
                OFF(bounds_size[0]), OFF(bounds_size[1]), OFF(bounds_size[2]),
                OFF(init_pos_radius)},
};
#endif
