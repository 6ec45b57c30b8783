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
 * The arithmetic of the rules (per candidate, per boid) is in sim/rules.h, which the CUDA
 * backend compiles too: this file is the CPU's walk over the candidates (lane groups,
 * steer's deferred separation list), loads, stores and finite checks.
 *
 * Exactness rules: no FMA (-ffp-contract=off), IEEE division and square root, sums added
 * in candidate order, dot products x + y + z left to right. The formulas are MODELS.md's;
 * where it leaves a choice, the choice is commented in rules.h. */

#include "core/simd.h"
#include "sim/models.h"
#include "sim/rules.h"
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

/* The obstacle field (seed 004) at each lane's cell, times avoid_force: sampled per lane by
 * the scalar rule_field_sample, so every ISA reads the same cell and value. Out of line: the
 * kernels' hot loops stay as they were when no obstacle mesh is loaded. */
static __attribute__((noinline)) vf3 KFN(field_avoid)(const shoal_sim *s, const kgroup *g, vf3 p)
{
    float x[VW], y[VW], z[VW], ax[VW], ay[VW], az[VW];
    vf_store_n(x, p.x, g->n);
    vf_store_n(y, p.y, g->n);
    vf_store_n(z, p.z, g->n);
    for (int i = 0; i < g->n; i++) {
        float o[3];
        rule_field_sample(&s->fld, x[i], y[i], z[i], o);
        ax[i] = o[0];
        ay[i] = o[1];
        az[i] = o[2];
    }
    vf3 a = {vf_load_n(ax, g->n), vf_load_n(ay, g->n), vf_load_n(az, g->n)};
    return rule_field_term(&s->desc.params, a);
}

static __attribute__((noinline)) vf3 KFN(flee_weighted)(const shoal_sim *s, vf3 p)
{
    return rule_flee_term(&s->desc.params, &s->mc, (const float(*)[3])s->mc.predators, p);
}

/* The per-boid terms every model adds after its own (rules.h rule_extras). One predictable
 * branch each when the feature is off. */
static inline void KFN(extras)(const shoal_sim *s, const kgroup *g, vf3 p, rule_extras *x)
{
    x->field_on = __builtin_expect(s->fld.vec != NULL, 0);
    x->flee_on = __builtin_expect(s->mc.predator_count > 0, 0);
    x->field = x->flee = v3_zero();
    if (x->field_on)
        x->field = KFN(field_avoid)(s, g, p);
    if (x->flee_on)
        x->flee = KFN(flee_weighted)(s, p);
}

/* The end of every group: the finite check, then the new state stored at the group's slots. */
static inline void KFN(store_state)(const shoal_sim *s, const kgroup *g, vf3 p, vf3 v, sim_fault *f)
{
    KFN(check_finite)(s, g, p, v, f);
    KFN(store3)(s->nxt, 0, g->base, g->n, p);
    KFN(store3)(s->nxt, 3, g->base, g->n, v);
}

#define SEP_LIST_MAX 256

/* steer's separation over the candidates the pair loop listed (in candidate order). Equal to
 * adding it inside the loop: sep is touched by nothing else, so the order of its additions
 * is unchanged. Returns 0. */
static inline int KFN(steer_sep_flush)(float *const *in, vf3 p, vf sep_r2, const uint32_t *list,
                                       int count, rule_sa *a)
{
    for (int k = 0; k < count; k++) {
        uint32_t j = list[k];
        rule_steer_sep(a, p, in[0][j], in[1][j], in[2][j], sep_r2);
    }
    return 0;
}

/* steer and average share the pair loop (rules.h rule_sa_pair); they differ in the
 * separation term. */
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
    vf sep_r2 = vf_set1(mc->sep_r2);
    float max_r2f = mc->sep_r2 > mc->ali_r2 ? mc->sep_r2 : mc->ali_r2;
    max_r2f = mc->coh_r2 > max_r2f ? mc->coh_r2 : max_r2f;
    vf max_r2 = vf_set1(max_r2f);
    rule_sa a;
    rule_sa_begin(&a);
    uint32_t sep_list[SEP_LIST_MAX + 1];
    int sep_count = 0;

    for (int r = 0; r < g->runs; r++) {
        for (uint32_t j = g->rb[r]; j < g->re[r]; j++) {
            vm m_sep = rule_sa_pair(&a, p, qx[j], qy[j], qz[j], wx[j], wy[j], wz[j], mc, max_r2,
                                    average, shared_mask, 0);
            if (!average) {
                /* steer's term needs a division. Few candidates are that close (about one
                 * iteration in seven has any lane within sep_radius), and a branch on it
                 * mispredicts: remember the candidate without branching and add the terms
                 * after the loop, in the same candidate order. */
                sep_list[sep_count] = j;
                sep_count += vm_any(m_sep);
                if (sep_count == SEP_LIST_MAX)
                    sep_count = KFN(steer_sep_flush)(in, p, sep_r2, sep_list, sep_count, &a);
            }
        }
    }
    rule_sa_end(&a, shared_mask);
    if (sep_count)
        KFN(steer_sep_flush)(in, p, sep_r2, sep_list, sep_count, &a);
    rule_extras x;
    KFN(extras)(s, g, p, &x);
    rule_sa_finish(&a, prm, mc, average, &x, &p, &v);
    KFN(store_state)(s, g, p, v, f);
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

static void KFN(group_steer)(const shoal_sim *s, const kgroup *g, sim_fault *f)
{
    KFN(group_steer_average)(s, g, 0, f);
}

static void KFN(group_average)(const shoal_sim *s, const kgroup *g, sim_fault *f)
{
    KFN(group_steer_average)(s, g, 1, f);
}

/* heading (seed 001): rules.h rule_heading_*. */
static void KFN(group_heading)(const shoal_sim *s, const kgroup *g, sim_fault *f)
{
    const shoal_params *prm = &s->desc.params;
    const model_consts *mc = &s->mc;
    float *const *in = s->cur;
    const float *qx = in[0], *qy = in[1], *qz = in[2], *wx = in[3], *wy = in[4], *wz = in[5];
    vf3 p = KFN(load3)(in, 0, g->base, g->n);
    vf3 v = KFN(load3)(in, 3, g->base, g->n);
    rule_hd a;
    rule_heading_begin(&a);
    for (int r = 0; r < g->runs; r++) {
        for (uint32_t j = g->rb[r]; j < g->re[r]; j++) {
            vf3 diff;
            vf d2;
            vm m = rule_heading_test(p, qx[j], qy[j], qz[j], mc, &diff, &d2);
            if (!vm_any(m))
                continue;
            /* dir_j: a property of the candidate, computed here when some lane needs it */
            float dir[3];
            rule_heading_dir(wx[j], wy[j], wz[j], dir);
            rule_heading_add(&a, m, diff, d2, qx[j], qy[j], qz[j], dir, mc);
        }
    }
    rule_extras x;
    KFN(extras)(s, g, p, &x);
    rule_heading_finish(&a, prm, mc, &x, &p, &v);
    KFN(store_state)(s, g, p, v, f);
}

/* classic (seed 002): rules.h rule_classic_*. */
static void KFN(group_classic)(const shoal_sim *s, const kgroup *g, sim_fault *f)
{
    const shoal_params *prm = &s->desc.params;
    const model_consts *mc = &s->mc;
    float *const *in = s->cur;
    const float *qx = in[0], *qy = in[1], *qz = in[2], *wx = in[3], *wy = in[4], *wz = in[5];
    vf3 p = KFN(load3)(in, 0, g->base, g->n);
    vf3 v = KFN(load3)(in, 3, g->base, g->n);
    rule_cl a;
    rule_classic_begin(&a, prm, p);
    for (int r = 0; r < g->runs; r++)
        for (uint32_t j = g->rb[r]; j < g->re[r]; j++)
            rule_classic_pair(&a, p, qx[j], qy[j], qz[j], wx[j], wy[j], wz[j], prm, mc);
    rule_extras x;
    KFN(extras)(s, g, p, &x);
    rule_classic_finish(&a, prm, mc, &x, &p, &v);
    KFN(store_state)(s, g, p, v, f);
}

/* fov (seed 004): rules.h rule_fov_*. */
static void KFN(group_fov)(const shoal_sim *s, const kgroup *g, sim_fault *f)
{
    const shoal_params *prm = &s->desc.params;
    const model_consts *mc = &s->mc;
    float *const *in = s->cur;
    const float *qx = in[0], *qy = in[1], *qz = in[2], *wx = in[3], *wy = in[4], *wz = in[5];
    vf3 p = KFN(load3)(in, 0, g->base, g->n);
    vf3 v = KFN(load3)(in, 3, g->base, g->n);
    vf max2 = vf_set1(rule_fov_max2(prm));
    rule_fv a;
    rule_fov_begin(&a, v);
    for (int r = 0; r < g->runs; r++)
        for (uint32_t j = g->rb[r]; j < g->re[r]; j++)
            rule_fov_pair(&a, p, qx[j], qy[j], qz[j], wx[j], wy[j], wz[j], prm, mc, max2);
    rule_extras x;
    KFN(extras)(s, g, p, &x);
    rule_fov_finish(&a, prm, mc, &x, &p, &v);
    KFN(store_state)(s, g, p, v, f);
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
    /* Only the active cells get forces (all of them in one process; an MPI brick's own
     * cells, not its halo): rows outside the active y, z range are skipped, and inside a
     * row the groups start at the first active cell. A lane's sums do not depend on which
     * lanes share its group, so this changes no bit of an active boid. */
    const int32_t *alo = s->g.act_lo, *ahi = s->g.act_hi;
    uint32_t i = (uint32_t)b0;
    while (i < (uint32_t)b1) {
        int64_t row = (int64_t)(s->cell_sorted[i] / (uint32_t)nx);
        int32_t y = (int32_t)(row % ny), z = (int32_t)(row / ny);
        int64_t cell0 = row * nx;
        uint32_t row_end = s->cell_start[cell0 + nx];
        if (y < alo[1] || y >= ahi[1] || z < alo[2] || z >= ahi[2]) {
            i = row_end;
            continue;
        }
        uint32_t begin = s->cell_start[cell0 + alo[0]], end = s->cell_start[cell0 + ahi[0]];
        /* the first group start of this row at or after i */
        uint32_t from = i > begin ? i : begin;
        uint32_t first = begin + (from - begin + VW - 1) / VW * VW;
        for (uint32_t g0 = first; g0 < end && g0 < (uint32_t)b1; g0 += VW) {
            kgroup g;
            g.base = g0;
            g.n = end - g0 < VW ? (int)(end - g0) : VW;
            int32_t x_first = (int32_t)(s->cell_sorted[g0] - (uint32_t)cell0);
            int32_t x_last = (int32_t)(s->cell_sorted[g0 + (uint32_t)g.n - 1] - (uint32_t)cell0);
            g.runs = grid_runs(s, x_first - 1, x_last + 1, y, z, g.rb, g.re);
            /* the model's group walk: group_NAME for every model of sim/models.h */
            switch (model) {
#define GROUP_CASE(id, name)                                                                       \
    case id:                                                                                       \
        KFN(group_##name)(s, &g, f);                                                               \
        break;
                SIM_MODELS(GROUP_CASE)
#undef GROUP_CASE
            default:
                break;
            }
        }
        i = row_end; /* the next row's first boid */
    }
}
