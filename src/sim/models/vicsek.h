/* SPDX-License-Identifier: MIT */
/* vicsek (T. Vicsek, A. Czirok, E. Ben-Jacob, I. Cohen, O. Shochet, Phys. Rev. Lett. 75, 1226,
 * 1995; docs/SCIENCE.md): every boid moves at one speed; its new heading is the direction of the
 * sum of the unit headings of the boids within `radius` (d <= r, itself included), turned by a
 * uniform random angle in [-eta/2, eta/2] in the plane (a 2D world, the paper's), or drawn
 * uniform on the spherical cap of half-angle eta/2 around it in 3D (the same angular width);
 * the position moves with the velocity of the start of the step (the paper's eq. 1,
 * update_order 0) or with the new one (update_order 1, the later convention). Its rules, its
 * adapter, its constants and its parameter table; included by sim/rules.h (the table only
 * where SIM_MODEL_TABLE is defined: models.c). */

/* ---- constants (model_consts.k) ------------------------------------------------------- */

enum { VK_R2, VK_CAP_COS };

/* The squared radius; the 3D cap's cos(eta / 2), libm's double cosine rounded to float once on
 * the host (core/noise.h noise_cap_cos): the draws depend on it, so every backend (the double
 * reference included) takes this float. */
RULE_FN void vicsek_consts(const RULE_PARAMS *p, RULE_CONSTS *mc)
{
    mc->k[VK_R2] = p->neighbor_radius * p->neighbor_radius;
    mc->k[VK_CAP_COS] = (vreal)(float)cos((double)p->noise * 0.5);
}

RULE_FN vreal vicsek_reach2(const RULE_PARAMS *p, const RULE_CONSTS *mc)
{
    (void)p;
    return mc->k[VK_R2];
}

/* ---- rules ------------------------------------------------------------------------------ */

typedef struct rule_vk {
    vf3 h;   /* the boid's own unit heading: a sum of length 0 keeps it */
    vf3 sum; /* the unit headings within the radius, itself included */
    vf n;    /* how many (a work statistic) */
} rule_vk;

/* The CPU's wide kernels (W > 1) take the plane's draws VW lanes at a time: vk_sym and vk_sincos
 * are core/noise.h's noise_sym and noise_sincos lane by lane, the same float operations in the
 * same order (no FMA: -ffp-contract=off), the integer conversions as C's (truncation), the
 * quadrant's swaps and signs exact; so the same bits as the scalar calls (docs/NOISE.md's
 * numbers), which the scalar kernel, the GPU and the reference still make. */
#if VW > 1 && !defined(SIMD_REAL_HEADER) && !defined(__CUDACC__)
#define VK_WIDE_NOISE 1
/* noise_sym(w, a) per lane: ((int32)((w >> 9) << 1) + 1 - 2^23) 2^-23 a */
static inline vf vk_sym(vi w, float a)
{
    vi k = vi_add(vi_sll(vi_srl(w, 9), 1), vi_set1(1 - 8388608));
    return vf_mul(vf_mul(vf_from_vi(k), vf_set1(1.0f / 8388608.0f)), vf_set1(a));
}

/* Word 0 of noise_draw(k, rows[i], 0) for the lanes i < lanes (0 past them): Philox4x32-10
 * (Random123's philox4x32_R(10, {row, 0, step_lo, step_hi}, {seed_lo, seed_hi}), its rounds and
 * key schedule) written over the lanes, which the compiler vectorises (32 x 32 -> 64-bit
 * products): integer arithmetic, so the same words on any ISA. */
static inline vi vk_draw_w0(noise_key k, const uint32_t *rows, int lanes)
{
    uint32_t c0[VW], c1[VW], c2[VW], c3[VW];
    for (int i = 0; i < VW; i++) {
        c0[i] = i < lanes ? rows[i] : 0u;
        c1[i] = 0u;
        c2[i] = k.step_lo;
        c3[i] = k.step_hi;
    }
    uint32_t k0 = k.seed_lo, k1 = k.seed_hi;
    for (int r = 0; r < 10; r++) {
        for (int i = 0; i < VW; i++) {
            uint64_t p0 = (uint64_t)0xD2511F53u * c0[i], p1 = (uint64_t)0xCD9E8D57u * c2[i];
            uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1[i] ^ k0;
            uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3[i] ^ k1;
            c1[i] = (uint32_t)p1;
            c3[i] = (uint32_t)p0;
            c0[i] = n0;
            c2[i] = n2;
        }
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    int32_t w[VW];
    memcpy(w, c0, sizeof w);
    return vi_load(w);
}

/* noise_sincos(x, s, c) per lane */
static inline void vk_sincos(vf x, vf *s, vf *c)
{
    vf qf = vf_mul(x, vf_set1(0.636619772367581343f));
    vm in = vm_and(vf_gt(qf, vf_set1(-8192.0f)), vf_lt(qf, vf_set1(8192.0f)));
    qf = vf_select(in, qf, vf_zero());
    vf up = vf_from_vi(vi_trunc(vf_add(qf, vf_set1(0.5f))));
    vf down = vf_minus(vf_from_vi(vi_trunc(vf_sub(vf_set1(0.5f), qf))));
    qf = vf_select(vf_ge(qf, vf_zero()), up, down);
    vi q = vi_trunc(qf);
    vf t = vf_sub(x, vf_mul(qf, vf_set1(1.5703125f)));
    t = vf_sub(t, vf_mul(qf, vf_set1(4.837512969970703125e-4f)));
    t = vf_sub(t, vf_mul(qf, vf_set1(7.54978995489188216e-8f)));
    /* noise_sincos_small */
    vf z = vf_mul(t, t);
    vf ps = vf_set1(-1.9515295891e-4f);
    ps = vf_add(vf_mul(ps, z), vf_set1(8.3321608736e-3f));
    ps = vf_sub(vf_mul(ps, z), vf_set1(1.6666654611e-1f));
    vf s0 = vf_add(vf_mul(vf_mul(ps, z), t), t);
    vf pc = vf_set1(2.443315711809948e-5f);
    pc = vf_sub(vf_mul(pc, z), vf_set1(1.388731625493765e-3f));
    pc = vf_add(vf_mul(pc, z), vf_set1(4.166664568298827e-2f));
    vf c0 = vf_add(vf_sub(vf_mul(vf_mul(pc, z), z), vf_mul(vf_set1(0.5f), z)), vf_set1(1.0f));
    /* noise_quadrant: q odd swaps the pair; s is negated for q & 2, c for q = 1 or 2 */
    vi one = vi_set1(1), two = vi_set1(2);
    vm swap = vi_eq(vi_and(q, one), one);
    vm neg_s = vi_eq(vi_and(q, two), two);
    vm neg_c = vi_eq(vi_and(vi_add(q, one), two), two); /* q & 3 = 1 or 2 (two's complement) */
    vf a = vf_select(swap, c0, s0), b = vf_select(swap, s0, c0);
    *s = vf_select(neg_s, vf_minus(a), a);
    *c = vf_select(neg_c, vf_minus(b), b);
}
#else
#define VK_WIDE_NOISE 0
#endif

/* The sum's direction (or the own heading for a sum of length 0; the extras, when on, added
 * first), turned by the boid's draw: in the plane by noise_sym(w0, eta/2) (noise_turn2's
 * rotation), in 3D onto the cap of noise_cap; v = speed * unit(heading), and the position moves
 * with (1 - u) v(t) + u v(t+1), u = update_order (0 or 1, so one of the two exactly; verify fits
 * it as a factor between them). */
RULE_FN void rule_vicsek_finish(const rule_vk *a, const RULE_PARAMS *prm, const RULE_CONSTS *mc,
                                const rule_extras *x, vf3 *pp, vf3 *vp)
{
    vf3 p = *pp, v = *vp;
    vf3 s = a->sum;
    /* obstacles and predators (every model's, off by default): their terms join the sum of
     * headings, in units of one neighbour's heading */
    if (prm->sphere_count > 0 || x->field_on || x->flee_on) {
        vf3 e = v3_zero();
        if (prm->sphere_count > 0)
            e = v3_mul(rule_sphere_avoid(prm, mc, p), vf_set1(prm->avoid_force));
        s = v3_add(s, rule_add_extras(e, x));
    }
    vf len = vf_sqrt(v3_dot(s, s));
    vf3 m = v3_select(vf_gt(len, vf_zero()), v3_div(s, len), a->h);
    /* the draws: draw 0 of the lane's row */
    int plane = rule_plane(mc);
    noise_key key = rule_noise_key(mc);
    float half = (float)prm->noise * 0.5f, cap_cos = (float)mc->k[VK_CAP_COS];
    vreal q[4][VW];
    vf c, sn;
#if VK_WIDE_NOISE
    if (plane) { /* the plane's angles and their sine and cosine VW lanes at a time */
        vk_sincos(vk_sym(vk_draw_w0(key, x->rows, x->lanes), half), &sn, &c);
        vm live = vm_first(x->lanes); /* the lanes past the group's: (1, 0) as below */
        c = vf_select(live, c, vf_set1(1.0f));
        sn = vf_select(live, sn, vf_zero());
    } else
#endif
    {
        for (int i = 0; i < VW; i++) {
            float d[4] = {1.0f, 0.0f, 1.0f, 0.0f};
            if (i < x->lanes) {
                noise_bits b = noise_draw(key, x->rows[i], 0);
                if (plane)
                    noise_sincos(noise_sym(b.w[0], half), &d[1], &d[0]);
                else
                    noise_cap_parts(b, cap_cos, d);
            }
            for (int k = 0; k < 4; k++)
                q[k][i] = d[k];
        }
        c = vf_load_n(q[0], VW);
        sn = vf_load_n(q[1], VW);
    }
    vf3 nh;
    if (plane) {
        nh = rule_turn2(m, c, sn);
        nh.z = vf_zero();
    } else {
        nh = rule_tilt(m, c, sn, vf_load_n(q[2], VW), vf_load_n(q[3], VW));
    }
    vf3 vn = v3_mul(v3_normalize(nh), vf_set1(prm->move_speed));
    vf u = vf_set1(prm->update_order);
    vf3 step = v3_add(v3_mul(v, vf_sub(vf_set1(1.0f), u)), v3_mul(vn, u));
    *pp = v3_add(p, v3_mul(step, vf_set1(mc->dt)));
    *vp = vn;
}

/* ---- the adapter (rules.h RULE_ADAPTER) -------------------------------------------------- */

/* Its pair reads dir_j (rules.h rule_cand). The CPU walks every listed candidate (no skip of one
 * no lane is near: a far candidate's masked adds are +0, and a sum that starts at +0 never turns
 * -0, so the same bits): at about a third of the lanes near (the box filter keeps the rest), the
 * skip's branch mispredicted more than its few adds cost (-14% CPU time at 10^5 in the plane,
 * docs/results/2026-11-28-literature-models-steps.md). */
typedef rule_vk vicsek_acc;
RULE_MODEL_TRAITS(vicsek, 0, 1, 0, 2, SHOAL_TERM_NONE);

/* The CPU's variant 1 is the plane (a 2D world), where every vz is +-0, so each dir_j's z is +-0
 * and sum.z, which starts at +0, stays +0 (+0 + -0 = +0): variant 1 leaves it out, the same
 * bits. The GPU and the reference run variant 0. */
RULE_FN int vicsek_variant(const RULE_CONSTS *mc) { return rule_plane(mc); }

RULE_FN void vicsek_begin(rule_vk *a, const RULE_PARAMS *prm, const RULE_CONSTS *mc, vf3 p, vf3 v)
{
    (void)prm, (void)mc, (void)p;
    a->h = v3_normalize(v);
    a->sum = v3_zero();
    a->n = vf_zero();
}

/* d^2 <= r^2: the boid itself (d = 0) included, as the paper's "within r" */
RULE_FN vm vicsek_near(vf d2, vf reach2) { return vf_le(d2, reach2); }

RULE_FN vm vicsek_pair(rule_vk *a, vm near, vf3 p, vf3 diff, vf d2, const rule_cand *c,
                       const RULE_PARAMS *prm, const RULE_CONSTS *mc, int variant)
{
    (void)p, (void)diff, (void)d2, (void)prm, (void)mc;
    vf3 dir = rule_cand_dir(c);
    if (variant) { /* the plane: sum.z stays begin's +0 (see vicsek_variant) */
        a->sum.x = vf_add_masked(a->sum.x, near, dir.x);
        a->sum.y = vf_add_masked(a->sum.y, near, dir.y);
        a->n = vf_add_masked(a->n, near, vf_set1(1.0f));
        return near;
    }
    a->sum = v3_add_masked(a->sum, near, dir);
    a->n = vf_add_masked(a->n, near, vf_set1(1.0f));
    return near;
}

RULE_FN void vicsek_late(rule_vk *a, vf3 diff, vf d2, const RULE_CONSTS *mc)
{
    (void)a, (void)diff, (void)d2, (void)mc;
}

RULE_FN vf vicsek_useful(const rule_vk *a, int variant)
{
    (void)variant;
    return a->n;
}

RULE_FN void vicsek_finish(rule_vk *a, const RULE_PARAMS *prm, const RULE_CONSTS *mc, int variant,
                           const rule_extras *x, vf3 *p, vf3 *v)
{
    (void)variant;
    rule_vicsek_finish(a, prm, mc, x, p, v);
}

/* ---- the reference's ties (src/verify) -------------------------------------------------- */

#if defined(RULE_REFERENCE)
/* one radius, one sum of headings */
static inline void vicsek_ties(const rule_vk *a, double t[SHOAL_TERM_COUNT])
{
    t[SHOAL_TERM_ALIGNMENT] = REF_T3(a->sum) + REF_T1(a->n);
}

static inline int vicsek_finish_tie(const RULE_PARAMS *p, const RULE_CONSTS *mc, const double x[6])
{
    (void)p, (void)mc, (void)x;
    return SHOAL_TERM_NONE;
}
#endif

/* ---- the table (models.c) --------------------------------------------------------------- */

#if defined(SIM_MODEL_TABLE)
/* The paper's values: v = 0.03, r = 1, dt = 1 (the scene's); eta = 2 and the box of Fig. 2a's
 * largest school (N = 4000, L = 31.6, density 4). update_order 0 is the paper's eq. (1). */
#define VICSEK_ROWS(P, PI, P3)                                                                     \
    P("speed", move_speed, "units/s", 0, BIG, 0.03f, "speed v (units per unit time)",              \
      H_FACTOR(INTEGRATION)),                                                                      \
        P("radius", neighbor_radius, "units", 1e-4f, BIG, 1,                                       \
          "interaction radius r (d <= r, itself included)", H_RADIUS(ALIGNMENT, VK_R2, -1, 0)),    \
        P("noise", noise, "rad", 0, 6.2831855f, 2,                                                 \
          "noise eta: the heading turns by a uniform angle in [-eta/2, eta/2]",                    \
          H_FACTOR(INTEGRATION)),                                                                  \
        PI("update_order", update_order, "-", 0, 1, 0,                                             \
           "position update: 0 p += v(t) dt (the paper's eq. 1), 1 p += v(t+1) dt",                \
           H_FACTOR(INTEGRATION)),                                                                 \
        P3("box_center", bounds_center, "units", -BIG, BIG, 0, 0, 0, "centre of the start box",    \
           H_NONE),                                                                                \
        P3("box_size", bounds_size, "units", 1e-4f, BIG, 31.6f, 31.6f, 31.6f,                      \
           "start box: positions uniform in it, then wrapped into a periodic world (no walls)",    \
           H_NONE),                                                                                \
        OBSTACLE_ROWS(P, PI, P3)

static const shoal_param_info vicsek_params[] = {VICSEK_ROWS(ROW_INFO, ROW_INFO_I, ROW_INFO_3)};
static const sim_hyp vicsek_hyps[] = {VICSEK_ROWS(ROW_HYP, ROW_HYP_I, ROW_HYP_3)};

static const char *const vicsek_live[] = {"noise", "radius", "speed", "avoid_force"};

static float vicsek_radius(const shoal_params *p) { return p->neighbor_radius; }

static void vicsek_bounds(const shoal_params *p, float lo[3], float hi[3])
{
    for (int c = 0; c < 3; c++) {
        lo[c] = p->bounds_center[c] - 0.5f * p->bounds_size[c];
        hi[c] = p->bounds_center[c] + 0.5f * p->bounds_size[c];
    }
}

/* the paper's start: positions uniform in the box, headings uniform, every speed v */
static void vicsek_start(const shoal_params *p, rng *r, float row[6])
{
    float dir[3];
    for (int c = 0; c < 3; c++)
        row[c] = rng_range(r, p->bounds_center[c] - 0.5f * p->bounds_size[c],
                           p->bounds_center[c] + 0.5f * p->bounds_size[c]);
    rng_direction(r, dir);
    for (int c = 0; c < 3; c++)
        row[3 + c] = dir[c] * p->move_speed;
}

static const sim_model model_vicsek = {
    .info = {SHOAL_MODEL_VICSEK, "vicsek", "Vicsek et al., Phys. Rev. Lett. 75, 1226 (1995)", 4000,
             vicsek_params, COUNT_OF(vicsek_params), vicsek_live, COUNT_OF(vicsek_live), 0},
    .hyps = vicsek_hyps,
    .radius = vicsek_radius,
    .bounds = vicsek_bounds,
    .start = vicsek_start,
    .consts = vicsek_consts,
    .reach2 = vicsek_reach2,
    .lengths = {OFF(bounds_center[0]), OFF(bounds_center[1]), OFF(bounds_center[2]),
                OFF(bounds_size[0]), OFF(bounds_size[1]), OFF(bounds_size[2])},
};
#endif
