/* SPDX-License-Identifier: MIT */
/* The force kernels of every model, written once against the wide type of core/simd.h and
 * instantiated per ISA by forces_scalar.c, forces_avx2.c and forces_avx512.c (each defines
 * KSUFFIX and its SIMD_* macro, then includes this file).
 *
 * Lane layout: lane i = boid slot base+i; the lanes of a group are consecutive boids of one
 * grid row (same y, z), so their 27-cell neighbourhoods share one union: the 9 contiguous
 * x-runs of cells x_lo-1 .. x_hi+1. Every lane walks that union in the scalar order; a
 * candidate outside a lane's own 27 cells is farther than the largest radius, fails every
 * radius test and adds nothing (masked adds keep the accumulator's exact bits). With
 * W = 1 the union is the boid's own 9 runs: the scalar kernel. Hence every ISA gives the
 * same bits as the scalar kernel, for any thread count (threads only choose which rows
 * they take).
 *
 * Exactness rules: no FMA (-ffp-contract=off), IEEE division and square root, sums added
 * in candidate order, dot products x + y + z left to right. The formulas are MODELS.md's;
 * where it leaves a choice, the choice is commented (and the CUDA backend makes the same). */

#include "core/simd.h"
#include "sim/sim_internal.h"

#define KCAT2(a, b) a##_##b
#define KCAT(a, b) KCAT2(a, b)
#define KFN(name) KCAT(name, KSUFFIX)

/* One lane group: slots [base, base+n), the union of their candidate runs. */
typedef struct kgroup {
    uint32_t base;
    int n;
    int runs;
    uint32_t rb[9], re[9];
} kgroup;

static inline vf3 KFN(load3)(float *const a[6], int k, uint32_t base, int n)
{
    vf3 r = {vf_load_n(a[k] + base, n), vf_load_n(a[k + 1] + base, n),
             vf_load_n(a[k + 2] + base, n)};
    return r;
}

static inline void KFN(store3)(float *const a[6], int k, uint32_t base, int n, vf3 v)
{
    vf_store_n(a[k] + base, v.x, n);
    vf_store_n(a[k + 1] + base, v.y, n);
    vf_store_n(a[k + 2] + base, v.z, n);
}

/* Finite check of the new state: x - x is 0 exactly when x is finite. Records the lowest
 * input row among the group's non-finite lanes. */
static inline void KFN(check_finite)(const shoal_sim *s, const kgroup *g, vf3 p, vf3 v,
                                     sim_fault *f)
{
    vf z = vf_zero();
    vm ok = vm_and(vm_and(vf_eq(vf_sub(p.x, p.x), z), vf_eq(vf_sub(p.y, p.y), z)),
                   vf_eq(vf_sub(p.z, p.z), z));
    ok = vm_and(ok, vm_and(vm_and(vf_eq(vf_sub(v.x, v.x), z), vf_eq(vf_sub(v.y, v.y), z)),
                           vf_eq(vf_sub(v.z, v.z), z)));
    unsigned bad = vm_bits(vm_andnot(vm_first(g->n), ok));
    if (!bad)
        return;
    for (int i = 0; i < g->n; i++) {
        if (bad & (1u << i)) {
            uint32_t row = s->row_cur[g->base + (uint32_t)i];
            if (!f->found || row < f->row) {
                f->row = row;
                f->found = 1;
            }
        }
    }
}

/* Obstacle spheres (every model): for each sphere with centre c and radius r, a boid
 * closer than 2r to c is pushed along (p - c) / |p - c| with strength (2r - |p - c|) / r
 * (1 at the surface, 0 at 2r). Summed in sphere order; returns the unweighted sum. */
static inline vf3 KFN(sphere_avoid)(const shoal_params *prm, vf3 p)
{
    vf3 acc = v3_zero();
    int count = (int)prm->sphere_count;
    for (int k = 0; k < count; k++) {
        const shoal_sphere *sp = &prm->spheres[k];
        vf3 q = v3_sub(p, v3_set1(sp->center[0], sp->center[1], sp->center[2]));
        vf d2 = v3_dot(q, q);
        float reach = 2.0f * sp->radius;
        vm in = vm_and(vf_lt(d2, vf_set1(reach * reach)), vf_gt(d2, vf_zero()));
        if (!vm_any(in))
            continue;
        vf d = vf_sqrt(d2);
        vf w = vf_div(vf_sub(vf_set1(reach), d), vf_set1(sp->radius));
        acc = v3_add_masked(acc, in, v3_mul(v3_div(q, d), w));
    }
    return acc;
}

/* Flee (every model): for each predator q (in predator order), a boid closer than
 * flee_radius R is pushed along (p - q) / |p - q| with strength (R - |p - q|) / R (1 at the
 * predator, 0 at R). Returns the unweighted sum. */
static inline vf3 KFN(flee)(const model_consts *mc, vf3 p)
{
    vf3 acc = v3_zero();
    vf r = vf_set1(mc->flee_r), r2 = vf_set1(mc->flee_r2);
    for (int k = 0; k < mc->predator_count; k++) {
        vf3 q = v3_sub(p, v3_set1(mc->predators[k][0], mc->predators[k][1], mc->predators[k][2]));
        vf d2 = v3_dot(q, q);
        vm in = vm_and(vf_lt(d2, r2), vf_gt(d2, vf_zero()));
        if (!vm_any(in))
            continue;
        vf d = vf_sqrt(d2);
        vf w = vf_div(vf_sub(r, d), r);
        acc = v3_add_masked(acc, in, v3_mul(v3_div(q, d), w));
    }
    return acc;
}

/* The obstacle field (seed 004) at each lane's cell, times avoid_force: sampled per lane by
 * the scalar field_sample, so every ISA reads the same cell and value. Out of line: the
 * kernels' hot loops stay as they were when no obstacle mesh is loaded. */
static __attribute__((noinline)) vf3 KFN(field_avoid)(const shoal_sim *s, const kgroup *g, vf3 p)
{
    float x[VW], y[VW], z[VW], ax[VW], ay[VW], az[VW];
    vf_store_n(x, p.x, g->n);
    vf_store_n(y, p.y, g->n);
    vf_store_n(z, p.z, g->n);
    for (int i = 0; i < g->n; i++) {
        float o[3];
        field_sample(&s->fld, x[i], y[i], z[i], o);
        ax[i] = o[0];
        ay[i] = o[1];
        az[i] = o[2];
    }
    vf3 a = {vf_load_n(ax, g->n), vf_load_n(ay, g->n), vf_load_n(az, g->n)};
    return v3_mul(a, vf_set1(s->desc.params.avoid_force));
}

static __attribute__((noinline)) vf3 KFN(flee_weighted)(const shoal_sim *s, vf3 p)
{
    return v3_mul(KFN(flee)(&s->mc, p), vf_set1(s->desc.params.flee_weight));
}

/* The per-boid terms every model adds after its neighbour sums and its own obstacle terms:
 * f + field(p) * avoid_force + flee(p) * flee_weight, in that order. One predictable branch
 * each when the feature is off. */
static inline vf3 KFN(extra_forces)(const shoal_sim *s, const kgroup *g, vf3 p, vf3 f)
{
    if (__builtin_expect(s->fld.vec != NULL, 0))
        f = v3_add(f, KFN(field_avoid)(s, g, p));
    if (__builtin_expect(s->mc.predator_count > 0, 0))
        f = v3_add(f, KFN(flee_weighted)(s, p));
    return f;
}

/* steer wall force: +1 below centre - size/2, -1 above centre + size/2, per axis. */
static inline vf KFN(wall_axis)(vf p, float lo, float hi)
{
    vf acc = vf_zero();
    acc = vf_select(vf_lt(p, vf_set1(lo)), vf_add(acc, vf_set1(1.0f)), acc);
    acc = vf_select(vf_gt(p, vf_set1(hi)), vf_sub(acc, vf_set1(1.0f)), acc);
    return acc;
}

static inline vf3 KFN(wall)(const shoal_params *prm, vf3 p)
{
    vf3 w;
    w.x = KFN(wall_axis)(p.x, prm->wall_center[0] - prm->wall_size[0] * 0.5f,
                         prm->wall_center[0] + prm->wall_size[0] * 0.5f);
    w.y = KFN(wall_axis)(p.y, prm->wall_center[1] - prm->wall_size[1] * 0.5f,
                         prm->wall_center[1] + prm->wall_size[1] * 0.5f);
    w.z = KFN(wall_axis)(p.z, prm->wall_center[2] - prm->wall_size[2] * 0.5f,
                         prm->wall_center[2] + prm->wall_size[2] * 0.5f);
    return w;
}

#define SEP_LIST_MAX 256

/* steer's separation over the candidates the pair loop listed (in candidate order):
 * sep += diff * (1 / d^2) where 0 < d^2 <= sep_r2. Equal to adding it inside the loop:
 * sep is touched by nothing else, so the order of its additions is unchanged. Returns 0. */
static inline int KFN(steer_sep_flush)(float *const *in, vf3 p, vf sep_r2, const uint32_t *list,
                                       int count, vf3 *sep, vf *sep_n)
{
    vf zero = vf_zero(), one = vf_set1(1.0f);
    for (int k = 0; k < count; k++) {
        uint32_t j = list[k];
        vf3 diff = {vf_sub(p.x, vf_set1(in[0][j])), vf_sub(p.y, vf_set1(in[1][j])),
                    vf_sub(p.z, vf_set1(in[2][j]))};
        vf d2 = v3_dot(diff, diff);
        vm m = vm_and(vf_gt(d2, zero), vf_le(d2, sep_r2));
        /* normalize(diff) / d == diff / d^2, taken as diff * (1 / d^2): one IEEE division
         * instead of a square root and six (DESIGN.md: prefer formulas without a root) */
        *sep = v3_add_masked(*sep, m, v3_mul(diff, vf_div(one, d2)));
        *sep_n = vf_add_masked(*sep_n, m, one);
    }
    return 0;
}

/* steer and average share the pair loop: both need the three radius tests and the sums of
 * v_j and p_j; they differ in the separation term (steer: diff / d / d, average: diff). */
static inline __attribute__((always_inline)) void
KFN(steer_average_impl)(const shoal_sim *s, const kgroup *g, int average, int shared_mask,
                        sim_fault *f)
{
    const shoal_params *prm = &s->desc.params;
    const model_consts *mc = &s->mc;
    float *const *in = s->cur;
    const float *qx = in[0], *qy = in[1], *qz = in[2], *wx = in[3], *wy = in[4], *wz = in[5];
    vf3 p = KFN(load3)(in, 0, g->base, g->n);
    vf3 v = KFN(load3)(in, 3, g->base, g->n);
    vf sep_r2 = vf_set1(mc->sep_r2), ali_r2 = vf_set1(mc->ali_r2), coh_r2 = vf_set1(mc->coh_r2);
    float max_r2f = mc->sep_r2 > mc->ali_r2 ? mc->sep_r2 : mc->ali_r2;
    max_r2f = mc->coh_r2 > max_r2f ? mc->coh_r2 : max_r2f;
    vf max_r2 = vf_set1(max_r2f);
    vf zero = vf_zero(), one = vf_set1(1.0f);
    vf3 sep = v3_zero(), ali = v3_zero(), coh = v3_zero();
    vf sep_n = zero, ali_n = zero, coh_n = zero;
    uint32_t sep_list[SEP_LIST_MAX + 1];
    int sep_count = 0;

    for (int r = 0; r < g->runs; r++) {
        for (uint32_t j = g->rb[r]; j < g->re[r]; j++) {
            /* diff = p_i - p_j (from the neighbour to me) */
            vf3 diff = {vf_sub(p.x, vf_set1(qx[j])), vf_sub(p.y, vf_set1(qy[j])),
                        vf_sub(p.z, vf_set1(qz[j]))};
            vf d2 = v3_dot(diff, diff);
            /* d == 0 skips the pair (and the boid itself); radius tests are d^2 <= r^2 */
            vm near = vm_and(vf_gt(d2, zero), vf_le(d2, max_r2));
            /* No early exit when no lane is near: the branch would be taken about half the
             * time and mispredict; the masked adds below cost less. */
            vm m_sep = vm_and(near, vf_le(d2, sep_r2));
            vm m_ali = near, m_coh = near;
            if (!shared_mask) {
                m_ali = vm_and(near, vf_le(d2, ali_r2));
                m_coh = vm_and(near, vf_le(d2, coh_r2));
            }
            if (average) {
                /* seed 000: the plain difference; cheap enough to add unconditionally */
                sep = v3_add_masked(sep, m_sep, diff);
                sep_n = vf_add_masked(sep_n, m_sep, one);
            } else {
                /* steer's term needs a division. Few candidates are that close (about one
                 * iteration in seven has any lane within sep_radius), and a branch on it
                 * mispredicts: remember the candidate without branching and add the terms
                 * after the loop, in the same candidate order. */
                sep_list[sep_count] = j;
                sep_count += vm_any(m_sep);
                if (sep_count == SEP_LIST_MAX)
                    sep_count =
                        KFN(steer_sep_flush)(in, p, sep_r2, sep_list, sep_count, &sep, &sep_n);
            }
            vf3 vj = v3_set1(wx[j], wy[j], wz[j]);
            vf3 pj = v3_set1(qx[j], qy[j], qz[j]);
            ali = v3_add_masked(ali, m_ali, vj);
            ali_n = vf_add_masked(ali_n, m_ali, one);
            coh = v3_add_masked(coh, m_coh, pj);
            if (!shared_mask)
                coh_n = vf_add_masked(coh_n, m_coh, one);
        }
    }
    if (shared_mask)
        coh_n = ali_n; /* same mask, so the same count, exactly */
    if (sep_count)
        KFN(steer_sep_flush)(in, p, sep_r2, sep_list, sep_count, &sep, &sep_n);

    vf3 force = v3_zero();
    vm has_sep = vf_gt(sep_n, zero), has_ali = vf_gt(ali_n, zero), has_coh = vf_gt(coh_n, zero);
    if (!average) {
        /* seed 003: each rule steers toward max speed along its direction, limited */
        vf max_speed = vf_set1(prm->max_speed), max_steer = vf_set1(prm->max_steer);
        vf3 sep_f =
            v3_limit(v3_sub(v3_mul(v3_normalize(v3_div(sep, sep_n)), max_speed), v), max_steer);
        vf3 ali_f =
            v3_limit(v3_sub(v3_mul(v3_normalize(v3_div(ali, ali_n)), max_speed), v), max_steer);
        vf3 coh_f = v3_limit(
            v3_sub(v3_mul(v3_normalize(v3_sub(v3_div(coh, coh_n), p)), max_speed), v), max_steer);
        sep_f = v3_select(has_sep, sep_f, v3_zero());
        ali_f = v3_select(has_ali, ali_f, v3_zero());
        coh_f = v3_select(has_coh, coh_f, v3_zero());
        force = v3_add(force, v3_mul(ali_f, vf_set1(prm->ali_weight)));
        force = v3_add(force, v3_mul(coh_f, vf_set1(prm->coh_weight)));
        force = v3_add(force, v3_mul(sep_f, vf_set1(prm->sep_weight)));
    } else {
        /* seed 000: plain averages, weighted, then the sum limited */
        vf3 sep_f = v3_mul(v3_div(sep, sep_n), vf_set1(prm->sep_weight));
        vf3 ali_f = v3_mul(v3_div(ali, ali_n), vf_set1(prm->ali_weight));
        vf3 coh_f = v3_mul(v3_sub(v3_div(coh, coh_n), p), vf_set1(prm->coh_weight));
        force = v3_add_masked(force, has_sep, sep_f);
        force = v3_add_masked(force, has_ali, ali_f);
        force = v3_add_masked(force, has_coh, coh_f);
        force = v3_limit(force, vf_set1(prm->max_steer));
    }

    /* integrate (seed 003 IntegrateCS): walls, obstacles, speed limit, Euler */
    vf dt = vf_set1(mc->dt);
    force = v3_add(force, v3_mul(KFN(wall)(prm, p), vf_set1(prm->wall_weight)));
    if (prm->sphere_count > 0)
        force = v3_add(force, v3_mul(KFN(sphere_avoid)(prm, p), vf_set1(prm->avoid_force)));
    force = KFN(extra_forces)(s, g, p, force);
    v = v3_limit(v3_add(v, v3_mul(force, dt)), vf_set1(prm->max_speed));
    p = v3_add(p, v3_mul(v, dt));
    KFN(check_finite)(s, g, p, v, f);
    KFN(store3)(s->nxt, 0, g->base, g->n, p);
    KFN(store3)(s->nxt, 3, g->base, g->n, v);
}

/* Dispatch to a variant where alignment and cohesion share one mask (the usual case:
 * ali_radius == coh_radius >= sep_radius), which saves two compares and a count per
 * candidate. Same masks, same sums: the same bits as the general variant. */
static void KFN(group_steer_average)(const shoal_sim *s, const kgroup *g, int average, sim_fault *f)
{
    const model_consts *mc = &s->mc;
    int shared = mc->ali_r2 == mc->coh_r2 && mc->sep_r2 <= mc->ali_r2;
    if (shared)
        KFN(steer_average_impl)(s, g, average, 1, f);
    else
        KFN(steer_average_impl)(s, g, average, 0, f);
}

/* heading (seed 001): one radius, strict d < R, direction-based. */
static void KFN(group_heading)(const shoal_sim *s, const kgroup *g, sim_fault *f)
{
    const shoal_params *prm = &s->desc.params;
    const model_consts *mc = &s->mc;
    float *const *in = s->cur;
    const float *qx = in[0], *qy = in[1], *qz = in[2], *wx = in[3], *wy = in[4], *wz = in[5];
    vf3 p = KFN(load3)(in, 0, g->base, g->n);
    vf3 v = KFN(load3)(in, 3, g->base, g->n);
    vf zero = vf_zero(), one = vf_set1(1.0f);
    vf r2 = vf_set1(mc->r2), R = vf_set1(mc->r);
    vf3 sep = v3_zero(), ali = v3_zero(), coh = v3_zero();
    vf n = zero;
    for (int r = 0; r < g->runs; r++) {
        for (uint32_t j = g->rb[r]; j < g->re[r]; j++) {
            vf3 diff = {vf_sub(p.x, vf_set1(qx[j])), vf_sub(p.y, vf_set1(qy[j])),
                        vf_sub(p.z, vf_set1(qz[j]))};
            vf d2 = v3_dot(diff, diff);
            vm m = vm_and(vf_gt(d2, zero), vf_lt(d2, r2));
            if (!vm_any(m))
                continue;
            vf d = vf_sqrt(d2);
            /* -normalize(p_j - p_i) * (R - d) / R == diff * ((R - d) / (R * d)): one square
             * root and one division per pair instead of four divisions */
            vf w = vf_div(vf_sub(R, d), vf_mul(R, d));
            sep = v3_add_masked(sep, m, v3_mul(diff, w));
            /* dir_j = v_j / |v_j|: a property of the candidate, computed once (scalar) */
            float vjx = wx[j], vjy = wy[j], vjz = wz[j];
            float vl = __builtin_sqrtf(vjx * vjx + vjy * vjy + vjz * vjz);
            float djx = 0.0f, djy = 0.0f, djz = 0.0f;
            if (vl > 0.0f) {
                djx = vjx / vl;
                djy = vjy / vl;
                djz = vjz / vl;
            }
            ali = v3_add_masked(ali, m, v3_set1(djx, djy, djz));
            coh = v3_add_masked(coh, m, v3_set1(qx[j], qy[j], qz[j]));
            n = vf_add_masked(n, m, one);
        }
    }
    /* a = 1 / max(n, 1) */
    vf a = vf_div(one, vf_select(vf_gt(n, one), n, one));
    sep = v3_mul(sep, vf_mul(a, vf_set1(prm->sep_weight)));
    ali = v3_mul(ali, vf_mul(a, vf_set1(prm->ali_weight)));
    coh = v3_mul(v3_sub(v3_mul(coh, a), p), vf_set1(prm->coh_weight)); /* quirk: n = 0 pulls to 0 */

    /* nearest target (first on ties) */
    vf best_d2 = vf_set1(__builtin_inff());
    vf3 tgt = v3_zero();
    for (int k = 0; k < mc->target_count; k++) {
        vf3 t = v3_set1(mc->targets[k][0], mc->targets[k][1], mc->targets[k][2]);
        vf3 dt3 = v3_sub(t, p);
        vf td2 = v3_dot(dt3, dt3);
        vm closer = vf_lt(td2, best_d2);
        best_d2 = vf_select(closer, td2, best_d2);
        tgt = v3_select(closer, t, tgt);
    }
    vf3 fsum = v3_mul(v3_sub(tgt, p), vf_set1(prm->target_weight));
    fsum = v3_add(v3_add(v3_add(fsum, sep), ali), coh);
    if (prm->sphere_count > 0)
        fsum = v3_add(fsum, v3_mul(KFN(sphere_avoid)(prm, p), vf_set1(prm->avoid_force)));
    fsum = KFN(extra_forces)(s, g, p, fsum);
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
    KFN(check_finite)(s, g, p, v, f);
    KFN(store3)(s->nxt, 0, g->base, g->n, p);
    KFN(store3)(s->nxt, 3, g->base, g->n, v);
}

/* classic rule1 term for a point q seen from p: -normalize(q - p) * k / |q - p|^2, with
 * the seed's operation order: ((-(e / d)) * k) / (d * d). Returns 0-contribution mask. */
static inline vf3 KFN(classic_repel)(vf3 e, vf d, vf k)
{
    vf dd = vf_mul(d, d);
    vf3 r = {vf_div(vf_mul(vf_neg(vf_div(e.x, d)), k), dd),
             vf_div(vf_mul(vf_neg(vf_div(e.y, d)), k), dd),
             vf_div(vf_mul(vf_neg(vf_div(e.z, d)), k), dd)};
    return r;
}

/* classic (seed 002): virtual wall boids first (Up, Down, Left, Right, Forward, Back, as
 * the seed adds them), then real neighbours, in one mean for rule1. */
static void KFN(group_classic)(const shoal_sim *s, const kgroup *g, sim_fault *f)
{
    const shoal_params *prm = &s->desc.params;
    const model_consts *mc = &s->mc;
    float *const *in = s->cur;
    const float *qx = in[0], *qy = in[1], *qz = in[2], *wx = in[3], *wy = in[4], *wz = in[5];
    vf3 p = KFN(load3)(in, 0, g->base, g->n);
    vf3 v = KFN(load3)(in, 3, g->base, g->n);
    vf zero = vf_zero(), one = vf_set1(1.0f), fov = vf_set1(prm->fov);
    vf k = vf_set1(prm->sep_strength);
    vf3 r1 = v3_zero(), vsum = v3_zero(), psum = v3_zero();
    vf n1 = zero, n = zero;

    /* Planes (normal n, signed distance s = n.p - n.q0, positive inside). */
    static const float normals[6][3] = {{0, -1, 0}, {0, 1, 0},  {1, 0, 0},
                                        {-1, 0, 0}, {0, 0, -1}, {0, 0, 1}};
    vf dist[6] = {
        vf_sub(vf_set1(prm->box_max[1]), p.y), vf_sub(p.y, vf_set1(prm->box_min[1])),
        vf_sub(p.x, vf_set1(prm->box_min[0])), vf_sub(vf_set1(prm->box_max[0]), p.x),
        vf_sub(vf_set1(prm->box_max[2]), p.z), vf_sub(p.z, vf_set1(prm->box_min[2])),
    };
    for (int w = 0; w < 6; w++) {
        vf sd = dist[w];
        /* virtual boid q = p - s * n; e = q - p */
        vf3 q = {vf_sub(p.x, vf_mul(sd, vf_set1(normals[w][0]))),
                 vf_sub(p.y, vf_mul(sd, vf_set1(normals[w][1]))),
                 vf_sub(p.z, vf_mul(sd, vf_set1(normals[w][2])))};
        vf3 e = v3_sub(q, p);
        vf e2 = v3_dot(e, e);
        vm m = vm_and(vf_le(sd, fov), vf_gt(e2, zero));
        if (!vm_any(m))
            continue;
        vf d = vf_sqrt(e2);
        r1 = v3_add_masked(r1, m, KFN(classic_repel)(e, d, k));
        n1 = vf_add_masked(n1, m, one);
    }
    vf r2 = vf_set1(mc->r2);
    for (int r = 0; r < g->runs; r++) {
        for (uint32_t j = g->rb[r]; j < g->re[r]; j++) {
            vf3 pj = v3_set1(qx[j], qy[j], qz[j]);
            vf3 e = v3_sub(pj, p); /* the seed's diff = other - me */
            vf d2 = v3_dot(e, e);
            vm m = vm_and(vf_gt(d2, zero), vf_le(d2, r2));
            if (!vm_any(m))
                continue;
            vf d = vf_sqrt(d2);
            r1 = v3_add_masked(r1, m, KFN(classic_repel)(e, d, k));
            n1 = vf_add_masked(n1, m, one);
            vsum = v3_add_masked(vsum, m, v3_set1(wx[j], wy[j], wz[j]));
            psum = v3_add_masked(psum, m, pj);
            n = vf_add_masked(n, m, one);
        }
    }
    vm has1 = vf_gt(n1, zero), has = vf_gt(n, zero);
    vf3 rule1 = v3_select(has1, v3_div(r1, n1), v3_zero());
    vf3 rule2 = v3_select(has, v3_sub(v3_div(vsum, n), v), v3_zero());
    vf3 rule3 = v3_select(has, v3_sub(v3_div(psum, n), p), v3_zero());
    /* a = (w1 r1 + w2 r2 + w3 r3) / (w1 + w2 + w3), the seed's divisor (the sum added left to
     * right in float: 8 exactly at the defaults 5 2 1); a zero sum gives a = 0 */
    vf3 acc = v3_add(v3_add(v3_mul(rule1, vf_set1(prm->w1)), v3_mul(rule2, vf_set1(prm->w2))),
                     v3_mul(rule3, vf_set1(prm->w3)));
    float wsum = prm->w1 + prm->w2 + prm->w3;
    acc = wsum != 0.0f ? v3_div(acc, vf_set1(wsum)) : v3_zero();
    if (prm->sphere_count > 0)
        acc = v3_add(acc, v3_mul(KFN(sphere_avoid)(prm, p), vf_set1(prm->avoid_force)));
    acc = KFN(extra_forces)(s, g, p, acc);
    /* p += v dt + a dt^2 / 2; v += a dt; |v| clamped to [min_speed, max_speed] */
    vf dt = vf_set1(mc->dt), half_dt2 = vf_set1(mc->dt * mc->dt * 0.5f);
    p = v3_add(p, v3_add(v3_mul(v, dt), v3_mul(acc, half_dt2)));
    v = v3_add(v, v3_mul(acc, dt));
    v = v3_clamp_speed(v, vf_set1(prm->min_speed), vf_set1(prm->max_speed));
    KFN(check_finite)(s, g, p, v, f);
    KFN(store3)(s->nxt, 0, g->base, g->n, p);
    KFN(store3)(s->nxt, 3, g->base, g->n, v);
}

/* fov's boundary force for the lanes in `far` (far outside the sphere; see group_fov), lane by
 * lane through the scalar fov_boundary_far_1, so every ISA gives the same bits; the other
 * lanes keep b. Out of line: taken only for boids at absurd distances. */
static __attribute__((noinline)) vf3 KFN(fov_boundary_far)(const shoal_params *prm, const kgroup *g,
                                                           vf3 p, vm far, vf3 b)
{
    float x[VW], y[VW], z[VW], bx[VW], by[VW], bz[VW];
    vf_store_n(x, p.x, g->n);
    vf_store_n(y, p.y, g->n);
    vf_store_n(z, p.z, g->n);
    vf_store_n(bx, b.x, g->n);
    vf_store_n(by, b.y, g->n);
    vf_store_n(bz, b.z, g->n);
    unsigned bits = vm_bits(far);
    for (int i = 0; i < g->n; i++) {
        if (!(bits & (1u << i)))
            continue;
        float o[3];
        const float pi[3] = {x[i], y[i], z[i]};
        fov_boundary_far_1(prm, pi, o);
        bx[i] = o[0];
        by[i] = o[1];
        bz[i] = o[2];
    }
    vf3 r = {vf_load_n(bx, g->n), vf_load_n(by, g->n), vf_load_n(bz, g->n)};
    return r;
}

/* fov (seed 004): view cones, squared-distance thresholds, sphere boundary, p += v. */
static void KFN(group_fov)(const shoal_sim *s, const kgroup *g, sim_fault *f)
{
    const shoal_params *prm = &s->desc.params;
    const model_consts *mc = &s->mc;
    float *const *in = s->cur;
    const float *qx = in[0], *qy = in[1], *qz = in[2], *wx = in[3], *wy = in[4], *wz = in[5];
    vf3 p = KFN(load3)(in, 0, g->base, g->n);
    vf3 v = KFN(load3)(in, 3, g->base, g->n);
    vf zero = vf_zero(), one = vf_set1(1.0f);
    vf3 vhat = v3_normalize(v);
    vf coh2 = vf_set1(prm->coh_dist2), sep2 = vf_set1(prm->sep_dist2),
       ali2 = vf_set1(prm->ali_dist2);
    float mx = prm->coh_dist2 > prm->sep_dist2 ? prm->coh_dist2 : prm->sep_dist2;
    mx = prm->ali_dist2 > mx ? prm->ali_dist2 : mx;
    vf max2 = vf_set1(mx);
    vf cc = vf_set1(mc->cos_coh), cs = vf_set1(mc->cos_sep), ca = vf_set1(mc->cos_ali);
    vf3 coh = v3_zero(), sep = v3_zero(), ali = v3_zero();
    vf coh_n = zero, ali_n = zero;
    for (int r = 0; r < g->runs; r++) {
        for (uint32_t j = g->rb[r]; j < g->re[r]; j++) {
            vf3 pj = v3_set1(qx[j], qy[j], qz[j]);
            vf3 e = v3_sub(pj, p); /* p_j - p_i */
            vf d2 = v3_dot(e, e);
            vm near = vm_and(vf_gt(d2, zero), vf_lt(d2, max2));
            if (!vm_any(near))
                continue;
            vf d = vf_sqrt(d2);
            /* angle < A  <=>  cos(angle) > cos(A), cos(angle) = normalize(v_i).(e / d) */
            vf c = vf_div(v3_dot(vhat, e), d);
            vm m_coh = vm_and(vm_and(near, vf_lt(d2, coh2)), vf_gt(c, cc));
            vm m_sep = vm_and(vm_and(near, vf_lt(d2, sep2)), vf_gt(c, cs));
            vm m_ali = vm_and(vm_and(near, vf_lt(d2, ali2)), vf_gt(c, ca));
            coh = v3_add_masked(coh, m_coh, pj);
            coh_n = vf_add_masked(coh_n, m_coh, one);
            if (vm_any(m_sep)) {
                vf3 diff = v3_sub(p, pj); /* normalize(p_i - p_j) / sqrt(d^2) */
                sep = v3_add_masked(sep, m_sep, v3_div(v3_div(diff, d), d));
            }
            ali = v3_add_masked(ali, m_ali, v3_set1(wx[j], wy[j], wz[j]));
            ali_n = vf_add_masked(ali_n, m_ali, one);
        }
    }
    vf3 cohf = v3_select(vf_gt(coh_n, zero),
                         v3_mul(v3_sub(v3_div(coh, coh_n), p), vf_set1(prm->coh_force)), v3_zero());
    vf3 alif = v3_select(vf_gt(ali_n, zero),
                         v3_mul(v3_sub(v3_div(ali, ali_n), v), vf_set1(prm->ali_force)), v3_zero());
    vf3 sepf = v3_mul(sep, vf_set1(prm->sep_force));
    /* boundary sphere: -bf * (p - c) * (|p - c|^2 - R^2) / |p - c|^2 outside it */
    vf3 c3 = v3_set1(prm->boundary_center[0], prm->boundary_center[1], prm->boundary_center[2]);
    vf3 cp = v3_sub(c3, p);
    vf sq = v3_dot(cp, cp);
    vf R2 = vf_set1(prm->boundary_range2);
    vf3 pc = v3_sub(p, c3);
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
    vm far = vm_andnot(vm_and(outside, vm_first(g->n)), finite_b);
    if (vm_any(far))
        b = KFN(fov_boundary_far)(prm, g, p, far, b);
    vf maxf = vf_set1(prm->max_force);
    cohf = v3_limit(cohf, maxf);
    sepf = v3_limit(sepf, maxf);
    alif = v3_limit(alif, maxf);
    vf3 avoid = v3_zero();
    if (prm->sphere_count > 0)
        avoid = v3_mul(KFN(sphere_avoid)(prm, p), vf_set1(prm->avoid_force));
    vf3 sum = v3_add(v3_add(v3_add(v3_add(cohf, sepf), alif), b), avoid);
    sum = KFN(extra_forces)(s, g, p, sum);
    v = v3_add(v, v3_mul(sum, vf_set1(mc->dt)));
    v = v3_clamp_speed(v, vf_set1(prm->min_speed), vf_set1(prm->max_speed));
    p = v3_add(p, v); /* quirk: no dt, as in the seed */
    KFN(check_finite)(s, g, p, v, f);
    KFN(store3)(s->nxt, 0, g->base, g->n, p);
    KFN(store3)(s->nxt, 3, g->base, g->n, v);
}

/* Worker threads: every group that starts in the sorted boid range [b0, b1). Groups are VW
 * consecutive boids of one grid row, starting at the row's first boid and every VW after
 * it, so they (and the bits they produce) do not depend on how [0, N) is cut into ranges:
 * a range owns the groups that start in it, and a group may reach past its end. Cutting
 * by boids rather than by rows keeps the threads busy when a few rows hold most boids. */
void KFN(forces_range)(const shoal_sim *s, int64_t b0, int64_t b1, sim_fault *f)
{
    const int32_t nx = s->g.dims[0], ny = s->g.dims[1];
    const shoal_model model = s->desc.model;
    uint32_t i = (uint32_t)b0;
    while (i < (uint32_t)b1) {
        int64_t row = (int64_t)(s->cell_sorted[i] / (uint32_t)nx);
        int32_t y = (int32_t)(row % ny), z = (int32_t)(row / ny);
        int64_t cell0 = row * nx;
        uint32_t begin = s->cell_start[cell0], end = s->cell_start[cell0 + nx];
        /* the first group start of this row at or after i */
        uint32_t first = begin + (i - begin + VW - 1) / VW * VW;
        for (uint32_t g0 = first; g0 < end && g0 < (uint32_t)b1; g0 += VW) {
            kgroup g;
            g.base = g0;
            g.n = end - g0 < VW ? (int)(end - g0) : VW;
            int32_t x_first = (int32_t)(s->cell_sorted[g0] - (uint32_t)cell0);
            int32_t x_last = (int32_t)(s->cell_sorted[g0 + (uint32_t)g.n - 1] - (uint32_t)cell0);
            g.runs = grid_runs(s, x_first - 1, x_last + 1, y, z, g.rb, g.re);
            switch (model) {
            case SHOAL_MODEL_STEER:
                KFN(group_steer_average)(s, &g, 0, f);
                break;
            case SHOAL_MODEL_AVERAGE:
                KFN(group_steer_average)(s, &g, 1, f);
                break;
            case SHOAL_MODEL_HEADING:
                KFN(group_heading)(s, &g, f);
                break;
            case SHOAL_MODEL_CLASSIC:
                KFN(group_classic)(s, &g, f);
                break;
            default:
                KFN(group_fov)(s, &g, f);
                break;
            }
        }
        i = end; /* the next row's first boid */
    }
}
