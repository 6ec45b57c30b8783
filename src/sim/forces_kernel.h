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

#include <string.h>

#define KCAT2(a, b) a##_##b
#define KCAT(a, b) KCAT2(a, b)
#define KFN(name) KCAT(name, KSUFFIX)

/* The candidate list of a group is built and walked in chunks of at most KLIST_CAP. */
#define KLIST_CAP 512

/* One lane group: slots [base, base + n), consecutive boids of one grid row (VW = 1: one
 * boid), and the 9 candidate runs of the cells x_lo-1 .. x_hi+1 around its row (x_lo,
 * x_hi: the cells of its first and last boid): the union of its lanes' 27 cells, in the
 * canonical order. VW > 1: `box` is the box of its boids (min x y z, max x y z), and the
 * group walks only the candidates of the runs that the box test keeps (filter_run); VW =
 * 1 walks every candidate. */
typedef struct kgroup {
    uint32_t base;
    int n;
    int runs;
    uint32_t rb[9], re[9];
    float box[6];
    float filter_r2; /* the model's largest squared radius, as its tests compare it */
    int filter;      /* 0: walk every candidate (the box test would keep nearly all) */
    uint32_t count;  /* boids in the arrays */
} kgroup;

/* Where a group's walk is: run r, slot j. */
typedef struct kwalk {
    int r;
    uint32_t j;
#if VW > 1
    vf box[6], r2;  /* the group's box and filter_r2, in every lane */
    uint32_t limit; /* the boid count: a vector load below it stays in the arrays */
#endif
} kwalk;

static inline void KFN(walk_init)(const kgroup *g, kwalk *w)
{
    w->r = 0;
    w->j = g->runs > 0 ? g->rb[0] : 0;
#if VW > 1
    for (int k = 0; k < 6; k++)
        w->box[k] = vf_set1(g->box[k]);
    w->r2 = vf_set1(g->filter_r2);
    w->limit = g->count;
#endif
}

#if VW > 1
/* Every candidate of [*j, re) into list[n...], VW at a time, until the run ends or the list
 * holds KLIST_CAP (writes up to VW - 1 entries beyond what it counts). */
static inline int KFN(all_run)(uint32_t *jp, uint32_t re, uint32_t *list, int n)
{
    uint32_t j = *jp;
    while (j < re && n < KLIST_CAP) {
        vi_store((int32_t *)(list + n), vi_add(vi_set1((int32_t)j), vi_lanes()));
        uint32_t take = re - j < VW ? re - j : VW;
        n += (int)take;
        j += take;
    }
    *jp = j;
    return n;
}

/* The box test of one vector of candidates, slots j .. j + VW - 1: the lanes whose squared
 * distance to the group's box is at most filter_r2. `tail` (1 to VW - 1, or 0 for a whole
 * vector) lanes are candidates; the others are masked out of the test, and their positions
 * are loaded only where the vector stays in the arrays (masked loads cost several times a
 * plain load on some cores). The distance is formed as the lanes form theirs (per axis the
 * float difference to the nearer face, 0 inside; (x^2 + y^2) + z^2). Rounding is monotonic,
 * so each lane's d^2 to the candidate is at least this: a candidate whose box d^2 exceeds
 * filter_r2 fails every lane's radius test and adds exactly nothing (the filter is exact, not
 * a heuristic). */
static inline __attribute__((always_inline)) vm KFN(filter_keep)(const float *px, const float *py,
                                                                 const float *pz, uint32_t j,
                                                                 int tail, int whole,
                                                                 const kwalk *w)
{
    vf zero = vf_zero();
    vf qx = whole ? vf_load(px + j) : vf_load_n(px + j, tail);
    vf qy = whole ? vf_load(py + j) : vf_load_n(py + j, tail);
    vf qz = whole ? vf_load(pz + j) : vf_load_n(pz + j, tail);
    vf ex = vf_max(vf_max(vf_sub(w->box[0], qx), vf_sub(qx, w->box[3])), zero);
    vf ey = vf_max(vf_max(vf_sub(w->box[1], qy), vf_sub(qy, w->box[4])), zero);
    vf ez = vf_max(vf_max(vf_sub(w->box[2], qz), vf_sub(qz, w->box[5])), zero);
    vf d2 = vf_add(vf_add(vf_mul(ex, ex), vf_mul(ey, ey)), vf_mul(ez, ez));
    vm keep = vf_le(d2, w->r2);
    return tail ? vm_and(keep, vm_first(tail)) : keep;
}

/* The box test of candidates [*j, re), the kept slots appended to list[n...] in slot order
 * until the run ends or the list holds KLIST_CAP (writes up to VW - 1 entries beyond what it
 * counts); returns the new n and advances *j. */
static inline int KFN(filter_run)(const float *px, const float *py, const float *pz, uint32_t *jp,
                                  uint32_t re, const kwalk *w, uint32_t *list, int n)
{
    uint32_t j = *jp;
    vi idx = vi_add(vi_set1((int32_t)j), vi_lanes());
    const vi step = vi_set1(VW);
    while (re - j >= VW && n < KLIST_CAP) {
        vm keep = KFN(filter_keep)(px, py, pz, j, 0, 1, w);
        vi_append((int32_t *)(list + n), vm_perm(keep), idx);
        n += vm_count(keep);
        j += VW;
        idx = vi_add(idx, step);
    }
    if (j < re && n < KLIST_CAP) {
        vm keep = KFN(filter_keep)(px, py, pz, j, (int)(re - j), j + VW <= w->limit, w);
        vi_append((int32_t *)(list + n), vm_perm(keep), idx);
        n += vm_count(keep);
        j = re;
    }
    *jp = j;
    return n;
}

/* The box of the group's lanes p (lanes n and above ignored: +inf / -inf there). The
 * positions at a step's start are finite (a step that made one non-finite was undone), so
 * the least and greatest lanes do not depend on the order the reduction takes them in. */
static inline void KFN(lane_box)(kgroup *g, vf3 p)
{
    vm m = vm_first(g->n);
    vf inf = vf_set1(__builtin_inff()), ninf = vf_set1(-__builtin_inff());
    g->box[0] = vf_hmin(vf_select(m, p.x, inf));
    g->box[1] = vf_hmin(vf_select(m, p.y, inf));
    g->box[2] = vf_hmin(vf_select(m, p.z, inf));
    g->box[3] = vf_hmax(vf_select(m, p.x, ninf));
    g->box[4] = vf_hmax(vf_select(m, p.y, ninf));
    g->box[5] = vf_hmax(vf_select(m, p.z, ninf));
}
#endif

/* The next chunk of the group's candidates (slots, in the canonical order) into list;
 * returns how many (0: none left). */
static inline __attribute__((always_inline)) int KFN(walk_next)(const shoal_sim *s, const kgroup *g,
                                                                kwalk *w, uint32_t *list)
{
    int n = 0;
#if VW > 1
    const float *px = s->cur[0], *py = s->cur[1], *pz = s->cur[2];
#else
    (void)s;
#endif
    while (w->r < g->runs) {
        uint32_t re = g->re[w->r];
#if VW > 1
        if (g->filter)
            n = KFN(filter_run)(px, py, pz, &w->j, re, w, list, n);
        else
            n = KFN(all_run)(&w->j, re, list, n);
#else
        while (w->j < re && n < KLIST_CAP)
            list[n++] = w->j++;
#endif
        if (w->j < re)
            break; /* the list is full */
        if (++w->r < g->runs)
            w->j = g->rb[w->r];
    }
    return n;
}

static inline vf3 KFN(load3)(float *const a[6], int k, const kgroup *g)
{
    if (g->n == VW) { /* a whole group: plain loads (masked ones cost more on some cores) */
        vf3 r = {vf_load(a[k] + g->base), vf_load(a[k + 1] + g->base), vf_load(a[k + 2] + g->base)};
        return r;
    }
    vf3 r = {vf_load_n(a[k] + g->base, g->n), vf_load_n(a[k + 1] + g->base, g->n),
             vf_load_n(a[k + 2] + g->base, g->n)};
    return r;
}

static inline void KFN(store3)(float *const a[6], int k, const kgroup *g, vf3 v)
{
    if (g->n == VW) {
        vf_store(a[k] + g->base, v.x);
        vf_store(a[k + 1] + g->base, v.y);
        vf_store(a[k + 2] + g->base, v.z);
        return;
    }
    vf_store_n(a[k] + g->base, v.x, g->n);
    vf_store_n(a[k + 1] + g->base, v.y, g->n);
    vf_store_n(a[k + 2] + g->base, v.z, g->n);
}

/* The sum of a per-lane count over the group's live lanes (counts are exact integers). */
static inline uint64_t KFN(lane_sum)(const kgroup *g, vf c)
{
    return (uint32_t)vi_hsum(vi_select(vm_first(g->n), vi_trunc(c), vi_set1(0)));
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

/* The cells of the new positions p (grid.c cell_index lane by lane: grid_coord against the
 * whole grid, minus the sub-box offset), stored at the group's slots of cell_of: the next
 * step's sort keys, so grid_assign need not read the positions again (sim.c cells_valid).
 * coord is grid_coord lane by lane: NaN and negative clamp to 0, at or past the last cell to
 * it (the conversion of a value that large is masked out). */
static inline vi KFN(coord)(vf v, const grid *gr, int c)
{
    vf f = vf_mul(vf_sub(v, vf_set1(gr->origin[c])), vf_set1(gr->inv_cell));
    vm in = vf_ge(f, vf_zero()); /* not NaN, >= 0 */
    vm top = vf_ge(f, vf_set1((float)(gr->gdims[c] - 1)));
    vi k = vi_select(top, vi_set1(gr->gdims[c] - 1), vi_trunc(f));
    k = vi_select(in, k, vi_set1(0));
    return vi_sub(k, vi_set1(gr->off[c]));
}

static inline void KFN(store_cells)(const shoal_sim *s, const kgroup *g, vf3 p)
{
    const grid *gr = &s->g;
    vi cell = vi_add(
        KFN(coord)(p.x, gr, 0),
        vi_mul(vi_set1(gr->dims[0]), vi_add(KFN(coord)(p.y, gr, 1),
                                            vi_mul(vi_set1(gr->dims[1]), KFN(coord)(p.z, gr, 2)))));
    int32_t *out = (int32_t *)(s->cell_of + g->base);
    if (g->n == VW)
        vi_store(out, cell);
    else
        vi_store_n(out, cell, g->n);
}

/* The end of every group: the finite check, then the new state stored at the group's slots
 * and the cells of the new positions in cell_of. */
static inline void KFN(store_state)(const shoal_sim *s, const kgroup *g, vf3 p, vf3 v, sim_fault *f)
{
    KFN(check_finite)(s, g, p, v, f);
    KFN(store3)(s->nxt, 0, g, p);
    KFN(store3)(s->nxt, 3, g, v);
    KFN(store_cells)(s, g, p);
}

/* steer's separation over the candidates the pair loop listed (in candidate order), after
 * each chunk. Equal to adding it inside the loop: sep is touched by nothing else, so the
 * order of its additions is unchanged. Returns 0. */
static inline __attribute__((always_inline)) int KFN(steer_sep_flush)(float *const *in, vf3 p,
                                                                      vf sep_r2,
                                                                      const uint32_t *list,
                                                                      int count, rule_sa *a)
{
    for (int k = 0; k < count; k++) {
        uint32_t j = list[k];
        rule_steer_sep(a, p, in[0][j], in[1][j], in[2][j], sep_r2);
    }
    return 0;
}

/* The pair loops run over one chunk of the candidate list at a time, each in a function of
 * its own that takes the accumulators from a struct and puts them back: the loop then has
 * the vector registers to itself (with the filter in the same function, AVX2's 16 ymm
 * registers held the filter's constants and the accumulators went to memory). */

/* steer and average: the pair loop's state across chunks. */
typedef struct ksa {
    vf3 p;
    rule_sa a;
    vf sep_r2, max_r2;
    int sep_count;
    uint32_t sep_list[KLIST_CAP + VW]; /* at most one chunk's candidates */
} ksa;

/* steer and average share the pair loop (rules.h rule_sa_pair); they differ in the
 * separation term. */
static inline __attribute__((always_inline)) void
KFN(sa_pairs)(const shoal_sim *s, ksa *k, const uint32_t *list, int n, int average, int shared_mask)
{
    const model_consts *mc = &s->mc;
    float *const *in = s->cur;
    const float *qx = in[0], *qy = in[1], *qz = in[2], *wx = in[3], *wy = in[4], *wz = in[5];
    vf3 p = k->p;
    vf max_r2 = k->max_r2;
    rule_sa a = k->a;
    int sep_count = k->sep_count;
    for (int q = 0; q < n; q++) {
        uint32_t j = list[q];
        vm m_sep = rule_sa_pair(&a, p, qx[j], qy[j], qz[j], wx[j], wy[j], wz[j], mc, max_r2,
                                average, shared_mask, 0);
        if (!average) {
            /* steer's term needs a division. Few candidates are that close (about one
             * iteration in seven has any lane within sep_radius), and a branch on it
             * mispredicts: remember the candidate without branching and add the terms
             * after the loop, in the same candidate order. */
            k->sep_list[sep_count] = j;
            sep_count += vm_any(m_sep);
        }
    }
    k->a = a;
    k->sep_count = sep_count;
}

static __attribute__((noinline)) void KFN(sa_pairs_00)(const shoal_sim *s, ksa *k,
                                                       const uint32_t *list, int n)
{
    KFN(sa_pairs)(s, k, list, n, 0, 0);
}
static __attribute__((noinline)) void KFN(sa_pairs_01)(const shoal_sim *s, ksa *k,
                                                       const uint32_t *list, int n)
{
    KFN(sa_pairs)(s, k, list, n, 0, 1);
}
static __attribute__((noinline)) void KFN(sa_pairs_10)(const shoal_sim *s, ksa *k,
                                                       const uint32_t *list, int n)
{
    KFN(sa_pairs)(s, k, list, n, 1, 0);
}
static __attribute__((noinline)) void KFN(sa_pairs_11)(const shoal_sim *s, ksa *k,
                                                       const uint32_t *list, int n)
{
    KFN(sa_pairs)(s, k, list, n, 1, 1);
}

static inline __attribute__((always_inline)) void
KFN(steer_average_impl)(const shoal_sim *s, const kgroup *g, int average, int shared_mask,
                        sim_fault *f)
{
    const shoal_params *prm = &s->desc.params;
    const model_consts *mc = &s->mc;
    ksa k;
    k.p = KFN(load3)(s->cur, 0, g);
    vf3 v = KFN(load3)(s->cur, 3, g);
    k.sep_r2 = vf_set1(mc->sep_r2);
    float max_r2f = mc->sep_r2 > mc->ali_r2 ? mc->sep_r2 : mc->ali_r2;
    max_r2f = mc->coh_r2 > max_r2f ? mc->coh_r2 : max_r2f;
    k.max_r2 = vf_set1(max_r2f);
    rule_sa_begin(&k.a);
    k.sep_count = 0;

    kwalk w;
    KFN(walk_init)(g, &w);
    uint32_t list[KLIST_CAP + VW];
    int n;
    while ((n = KFN(walk_next)(s, g, &w, list)) > 0) {
        f->lane_pairs += (uint64_t)n * VW;
        if (average) {
            shared_mask ? KFN(sa_pairs_11)(s, &k, list, n) : KFN(sa_pairs_10)(s, &k, list, n);
        } else {
            shared_mask ? KFN(sa_pairs_01)(s, &k, list, n) : KFN(sa_pairs_00)(s, &k, list, n);
            if (k.sep_count)
                k.sep_count =
                    KFN(steer_sep_flush)(s->cur, k.p, k.sep_r2, k.sep_list, k.sep_count, &k.a);
        }
    }
    f->useful += KFN(lane_sum)(g, shared_mask ? k.a.ali_n : k.a.near_n);
    rule_sa_end(&k.a, shared_mask);
    vf3 p = k.p;
    rule_extras x;
    KFN(extras)(s, g, p, &x);
    rule_sa_finish(&k.a, prm, mc, average, &x, &p, &v);
    KFN(store_state)(s, g, p, v, f);
}

/* Dispatch to a variant where alignment and cohesion share one mask (the usual case:
 * ali_radius == coh_radius >= sep_radius), which saves two compares and a count per
 * candidate. Same masks, same sums: the same bits as the general variant. */
static void KFN(group_steer)(const shoal_sim *s, const kgroup *g, sim_fault *f)
{
    const model_consts *mc = &s->mc;
    if (mc->ali_r2 == mc->coh_r2 && mc->sep_r2 <= mc->ali_r2)
        KFN(steer_average_impl)(s, g, 0, 1, f);
    else
        KFN(steer_average_impl)(s, g, 0, 0, f);
}

static void KFN(group_average)(const shoal_sim *s, const kgroup *g, sim_fault *f)
{
    const model_consts *mc = &s->mc;
    if (mc->ali_r2 == mc->coh_r2 && mc->sep_r2 <= mc->ali_r2)
        KFN(steer_average_impl)(s, g, 1, 1, f);
    else
        KFN(steer_average_impl)(s, g, 1, 0, f);
}

/* heading (seed 001): rules.h rule_heading_*. The pair loop over one chunk (see ksa). */
typedef struct khd {
    vf3 p;
    rule_hd a;
} khd;

static __attribute__((noinline)) void KFN(hd_pairs)(const shoal_sim *s, khd *k,
                                                    const uint32_t *list, int n)
{
    const model_consts *mc = &s->mc;
    float *const *in = s->cur;
    const float *qx = in[0], *qy = in[1], *qz = in[2], *wx = in[3], *wy = in[4], *wz = in[5];
    vf3 p = k->p;
    rule_hd a = k->a;
    for (int q = 0; q < n; q++) {
        uint32_t j = list[q];
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
    k->a = a;
}

static void KFN(group_heading)(const shoal_sim *s, const kgroup *g, sim_fault *f)
{
    const shoal_params *prm = &s->desc.params;
    const model_consts *mc = &s->mc;
    khd k;
    k.p = KFN(load3)(s->cur, 0, g);
    vf3 v = KFN(load3)(s->cur, 3, g);
    rule_heading_begin(&k.a);
    kwalk w;
    KFN(walk_init)(g, &w);
    uint32_t list[KLIST_CAP + VW];
    int n;
    while ((n = KFN(walk_next)(s, g, &w, list)) > 0) {
        f->lane_pairs += (uint64_t)n * VW;
        KFN(hd_pairs)(s, &k, list, n);
    }
    f->useful += KFN(lane_sum)(g, k.a.n);
    vf3 p = k.p;
    rule_extras x;
    KFN(extras)(s, g, p, &x);
    rule_heading_finish(&k.a, prm, mc, &x, &p, &v);
    KFN(store_state)(s, g, p, v, f);
}

/* classic (seed 002): rules.h rule_classic_*. The pair loop over one chunk (see ksa): a
 * candidate no lane accepts is skipped before its velocity is loaded. */
typedef struct kcl {
    vf3 p;
    rule_cl a;
} kcl;

static __attribute__((noinline)) void KFN(cl_pairs)(const shoal_sim *s, kcl *k,
                                                    const uint32_t *list, int n)
{
    const shoal_params *prm = &s->desc.params;
    const model_consts *mc = &s->mc;
    float *const *in = s->cur;
    const float *qx = in[0], *qy = in[1], *qz = in[2], *wx = in[3], *wy = in[4], *wz = in[5];
    vf3 p = k->p;
    rule_cl a = k->a;
    for (int q = 0; q < n; q++) {
        uint32_t j = list[q];
        if (!vm_any(rule_classic_near(p, qx[j], qy[j], qz[j], mc)))
            continue;
        rule_classic_pair(&a, p, qx[j], qy[j], qz[j], wx[j], wy[j], wz[j], prm, mc);
    }
    k->a = a;
}

static void KFN(group_classic)(const shoal_sim *s, const kgroup *g, sim_fault *f)
{
    const shoal_params *prm = &s->desc.params;
    const model_consts *mc = &s->mc;
    kcl k;
    k.p = KFN(load3)(s->cur, 0, g);
    vf3 v = KFN(load3)(s->cur, 3, g);
    rule_classic_begin(&k.a, prm, k.p);
    kwalk w;
    KFN(walk_init)(g, &w);
    uint32_t list[KLIST_CAP + VW];
    int n;
    while ((n = KFN(walk_next)(s, g, &w, list)) > 0) {
        f->lane_pairs += (uint64_t)n * VW;
        KFN(cl_pairs)(s, &k, list, n);
    }
    f->useful += KFN(lane_sum)(g, k.a.n);
    vf3 p = k.p;
    rule_extras x;
    KFN(extras)(s, g, p, &x);
    rule_classic_finish(&k.a, prm, mc, &x, &p, &v);
    KFN(store_state)(s, g, p, v, f);
}

/* fov (seed 004): rules.h rule_fov_*. The pair loop over one chunk (see ksa and kcl). */
typedef struct kfv {
    vf3 p;
    vf max2;
    rule_fv a;
} kfv;

static __attribute__((noinline)) void KFN(fv_pairs)(const shoal_sim *s, kfv *k,
                                                    const uint32_t *list, int n)
{
    const shoal_params *prm = &s->desc.params;
    const model_consts *mc = &s->mc;
    float *const *in = s->cur;
    const float *qx = in[0], *qy = in[1], *qz = in[2], *wx = in[3], *wy = in[4], *wz = in[5];
    vf3 p = k->p;
    vf max2 = k->max2;
    rule_fv a = k->a;
    for (int q = 0; q < n; q++) {
        uint32_t j = list[q];
        if (!vm_any(rule_fov_near(p, qx[j], qy[j], qz[j], max2)))
            continue;
        rule_fov_pair(&a, p, qx[j], qy[j], qz[j], wx[j], wy[j], wz[j], prm, mc, max2);
    }
    k->a = a;
}

static void KFN(group_fov)(const shoal_sim *s, const kgroup *g, sim_fault *f)
{
    const shoal_params *prm = &s->desc.params;
    const model_consts *mc = &s->mc;
    kfv k;
    k.p = KFN(load3)(s->cur, 0, g);
    vf3 v = KFN(load3)(s->cur, 3, g);
    k.max2 = vf_set1(rule_fov_max2(prm));
    rule_fov_begin(&k.a, v);
    kwalk w;
    KFN(walk_init)(g, &w);
    uint32_t list[KLIST_CAP + VW];
    int n;
    while ((n = KFN(walk_next)(s, g, &w, list)) > 0) {
        f->lane_pairs += (uint64_t)n * VW;
        KFN(fv_pairs)(s, &k, list, n);
    }
    f->useful += KFN(lane_sum)(g, k.a.near_n);
    vf3 p = k.p;
    rule_extras x;
    KFN(extras)(s, g, p, &x);
    rule_fov_finish(&k.a, prm, mc, &x, &p, &v);
    KFN(store_state)(s, g, p, v, f);
}

#if VW > 1
/* The largest squared radius of the model's candidate tests (steer, average: the three
 * radii; heading: R; classic: fov; fov: the largest squared distance), as they compare it. */
static float KFN(filter_r2)(const shoal_sim *s)
{
    const model_consts *mc = &s->mc;
    switch (s->desc.model) {
    case SHOAL_MODEL_STEER:
    case SHOAL_MODEL_AVERAGE: {
        float m = mc->sep_r2 > mc->ali_r2 ? mc->sep_r2 : mc->ali_r2;
        return mc->coh_r2 > m ? mc->coh_r2 : m;
    }
    case SHOAL_MODEL_HEADING:
    case SHOAL_MODEL_CLASSIC:
        return mc->r2;
    default:
        return rule_fov_max2(&s->desc.params);
    }
}
#endif

/* The model's group walk: group_NAME for every model of sim/models.h (a model missing its
 * walk does not compile). */
static inline void KFN(group)(const shoal_sim *s, const kgroup *g, sim_fault *f)
{
    switch (s->desc.model) {
#define GROUP_CASE(id, name)                                                                       \
    case id:                                                                                       \
        KFN(group_##name)(s, g, f);                                                                \
        break;
        SIM_MODELS(GROUP_CASE)
#undef GROUP_CASE
    default:
        break;
    }
}

/* Worker threads: every group that starts in the sorted boid range [b0, b1). Groups are VW
 * consecutive boids of one grid row, starting at the row's first boid and every VW after
 * it, so they (and the bits they produce) do not depend on how [0, N) is cut into ranges:
 * a range owns the groups that start in it, and a group may reach past its end. Cutting
 * by boids rather than by rows keeps the threads busy when a few rows hold most boids. */
void KFN(forces_range)(const shoal_sim *s, int64_t b0, int64_t b1, sim_fault *f)
{
    const int32_t nx = s->g.dims[0], ny = s->g.dims[1];
    /* Only the active cells get forces (all of them in one process; an MPI brick's own
     * cells, not its halo): rows outside the active y, z range are skipped, and inside a
     * row the groups start at the first active cell. A lane's sums do not depend on which
     * lanes share its group, so this changes no bit of an active boid. */
    const int32_t *alo = s->g.act_lo, *ahi = s->g.act_hi;
    kgroup g;
    memset(&g, 0, sizeof g);
#if VW > 1
    g.filter_r2 = KFN(filter_r2)(s);
    g.count = (uint32_t)s->count;
#endif
    const uint32_t *cs = s->cell_start;
    /* The box test costs about a tenth of a pair iteration per candidate: where it keeps
     * nearly every candidate (a dense school, every boid near every other), the next groups
     * skip it, and every eighth group tests again. Either way the same bits. */
    int skip = 0;
    (void)skip;
    uint32_t i = (uint32_t)b0;
    int64_t row = -1;
    while (i < (uint32_t)b1) {
        if (row < 0)
            row = (int64_t)(grid_cell_of_slot(s, i) / (uint32_t)nx);
        while (cs[(row + 1) * nx] <= i) /* the row holding slot i: the next non-empty one */
            row++;
        int32_t y = (int32_t)(row % ny), z = (int32_t)(row / ny);
        int64_t cell0 = row * nx;
        uint32_t row_end = cs[cell0 + nx];
        if (y < alo[1] || y >= ahi[1] || z < alo[2] || z >= ahi[2]) {
            i = row_end;
            continue;
        }
        uint32_t begin = cs[cell0 + alo[0]], end = cs[cell0 + ahi[0]];
        /* the first group start of this row at or after i */
        uint32_t from = i > begin ? i : begin;
        uint32_t first = begin + (from - begin + VW - 1) / VW * VW;
        const grid *gr = &s->g;
        for (uint32_t g0 = first; g0 < end && g0 < (uint32_t)b1; g0 += VW) {
            g.base = g0;
            g.n = end - g0 < VW ? (int)(end - g0) : VW;
            /* the cells of the group's first and last boid: the cells of its smallest and
             * largest x (cells ascend along the row, grid_coord is monotonic, and it is the
             * sort's own cell function) */
#if VW > 1
            KFN(lane_box)(&g, KFN(load3)(s->cur, 0, &g));
            float xlo = g.box[0], xhi = g.box[3];
#else
            float xlo = s->cur[0][g0], xhi = xlo;
#endif
            int32_t x_first =
                grid_coord(xlo, gr->origin[0], gr->inv_cell, gr->gdims[0]) - gr->off[0];
            int32_t x_last =
                grid_coord(xhi, gr->origin[0], gr->inv_cell, gr->gdims[0]) - gr->off[0];
            g.runs = grid_runs(s, x_first - 1, x_last + 1, y, z, g.rb, g.re);
#if VW > 1
            g.filter = skip == 0;
            skip -= skip > 0;
            uint64_t kept = f->lane_pairs;
#endif
            KFN(group)(s, &g, f);
#if VW > 1
            /* (summed after the group: right after grid_runs stored them, a vector load of
             * the runs waited for the stores) */
            uint64_t scanned = 0;
            for (int r = 0; r < g.runs; r++)
                scanned += g.re[r] - g.rb[r];
            kept = (f->lane_pairs - kept) / VW;
            if (g.filter && kept * 10 > scanned * 9)
                skip = 7;
#endif
            f->groups++;
            f->boids += (uint64_t)g.n;
        }
        i = row_end; /* the next row's first boid */
    }
}
