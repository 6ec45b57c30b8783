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
 * The arithmetic of the rules (per candidate, per boid) is each model's file, reached through
 * its adapter (sim/rules.h), which every backend compiles: this file is the CPU's walker over
 * the candidates (lane groups, the box filter, deferred late terms), generated for every
 * model of sim/models.h, and its loads, stores and finite checks. It holds no intrinsic:
 * every wide operation is a word of core/simd.h, so a new ISA is a new branch there.
 *
 * Exactness rules: no FMA (-ffp-contract=off), IEEE division and square root, sums added
 * in candidate order, dot products x + y + z left to right. The formulas are MODELS.md's;
 * where it leaves a choice, the choice is commented in the model's file. */

#include "core/simd.h"
#include "sim/models.h"
#include "sim/rules.h"
#include "sim/sim_internal.h"
#include "sim/world_kernel.h"

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
    uint32_t rb[GRID_RUNS_MAX], re[GRID_RUNS_MAX];
    float box[6];
    float filter_r2; /* the model's largest squared radius, as its tests compare it */
    int filter;      /* 0: walk every candidate (the box test would keep nearly all) */
    int wrap;        /* bit a: its cells wrap on periodic axis a (take the minimum image there) */
    uint32_t count;  /* boids in the arrays */
} kgroup;

/* Where a group's walk is: run r, slot j. */
typedef struct kwalk {
    int r;
    uint32_t j;
#if VW > 1
    vf box[6], r2;  /* the group's box and filter_r2, in every lane */
    vf period[3];   /* a periodic world: each axis's period, +inf where it does not wrap */
    uint32_t limit; /* the boid count: a vector load below it stays in the arrays */
#endif
} kwalk;

static inline void KFN(walk_init)(const shoal_sim *s, const kgroup *g, kwalk *w)
{
    w->r = 0;
    w->j = g->runs > 0 ? g->rb[0] : 0;
#if VW > 1
    for (int k = 0; k < 6; k++)
        w->box[k] = vf_set1(g->box[k]);
    w->r2 = vf_set1(g->filter_r2);
    w->limit = g->count;
    for (int k = 0; k < 3; k++)
        w->period[k] = vf_set1(s->mc.periodic[k] ? s->mc.wsize[k] : __builtin_inff());
#else
    (void)s;
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

/* The box filter's distance on an axis of a periodic world, at least every lane's |minimum
 * image| (rules.h rule_image): a lane whose difference d keeps its image has |d| >= e, the
 * direct distance to the box; one that takes the other image has |d - L| = L - |d| (rounded
 * once, and the negation is exact) >= L - M, M the larger difference to the box's far face
 * (rounding is monotonic). So the smaller of the two is a lower bound for every lane; on an
 * axis that does not wrap L = +inf leaves e. */
static inline __attribute__((always_inline)) vf KFN(filter_wrap)(vf e, vf q, vf lo, vf hi, vf L)
{
    vf far = vf_max(vf_sub(hi, q), vf_sub(q, lo));
    return vf_min(e, vf_max(vf_sub(L, far), vf_zero()));
}

/* The box test of one vector of candidates, slots j .. j + VW - 1: the lanes whose squared
 * distance to the group's box is at most filter_r2. `tail` (1 to VW - 1, or 0 for a whole
 * vector) lanes are candidates; the others are masked out of the test, and their positions
 * are loaded only where the vector stays in the arrays (masked loads cost several times a
 * plain load on some cores). The distance is formed as the lanes form theirs (per axis the
 * float difference to the nearer face, 0 inside; (x^2 + y^2) + z^2; in a periodic world the
 * smaller of that and the wrapped bound, filter_wrap). Rounding is monotonic, so each lane's
 * d^2 to the candidate is at least this: a candidate whose box d^2 exceeds filter_r2 fails
 * every lane's radius test and adds exactly nothing (the filter is exact, not a heuristic). */
static inline __attribute__((always_inline)) vm KFN(filter_keep)(const float *px, const float *py,
                                                                 const float *pz, uint32_t j,
                                                                 int tail, int whole,
                                                                 const kwalk *w, const int wrap)
{
    vf zero = vf_zero();
    vf qx = whole ? vf_load(px + j) : vf_load_n(px + j, tail);
    vf qy = whole ? vf_load(py + j) : vf_load_n(py + j, tail);
    vf qz = whole ? vf_load(pz + j) : vf_load_n(pz + j, tail);
    vf ex = vf_max(vf_max(vf_sub(w->box[0], qx), vf_sub(qx, w->box[3])), zero);
    vf ey = vf_max(vf_max(vf_sub(w->box[1], qy), vf_sub(qy, w->box[4])), zero);
    vf ez = vf_max(vf_max(vf_sub(w->box[2], qz), vf_sub(qz, w->box[5])), zero);
    if (wrap) {
        ex = KFN(filter_wrap)(ex, qx, w->box[0], w->box[3], w->period[0]);
        ey = KFN(filter_wrap)(ey, qy, w->box[1], w->box[4], w->period[1]);
        ez = KFN(filter_wrap)(ez, qz, w->box[2], w->box[5], w->period[2]);
    }
    vf d2 = vf_add(vf_add(vf_mul(ex, ex), vf_mul(ey, ey)), vf_mul(ez, ez));
    vm keep = vf_le(d2, w->r2);
    return tail ? vm_and(keep, vm_first(tail)) : keep;
}

/* The box test of candidates [*j, re), the kept slots appended to list[n...] in slot order
 * until the run ends or the list holds KLIST_CAP (writes up to VW - 1 entries beyond what it
 * counts); returns the new n and advances *j. */
static inline int KFN(filter_run)(const float *px, const float *py, const float *pz, uint32_t *jp,
                                  uint32_t re, const kwalk *w, uint32_t *list, int n,
                                  const int wrap)
{
    uint32_t j = *jp;
    vi idx = vi_add(vi_set1((int32_t)j), vi_lanes());
    const vi step = vi_set1(VW);
    while (re - j >= VW && n < KLIST_CAP) {
        vm keep = KFN(filter_keep)(px, py, pz, j, 0, 1, w, wrap);
        vi_append((int32_t *)(list + n), vm_perm(keep), idx);
        n += vm_count(keep);
        j += VW;
        idx = vi_add(idx, step);
    }
    if (j < re && n < KLIST_CAP) {
        vm keep = KFN(filter_keep)(px, py, pz, j, (int)(re - j), j + VW <= w->limit, w, wrap);
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
static inline __attribute__((always_inline)) int
KFN(walk_next)(const shoal_sim *s, const kgroup *g, kwalk *w, uint32_t *list, const int wrap)
{
    (void)wrap;
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
            n = KFN(filter_run)(px, py, pz, &w->j, re, w, list, n, wrap);
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
    x->rows = s->row_cur + g->base; /* lane i's input row (MPI: its global row) */
    x->lanes = g->n;
    if (x->field_on) {
        x->field = KFN(field_avoid)(s, g, p);
        if (s->mc.world_on && s->mc.world_dims == 2)
            x->field.z = vf_zero(); /* the plane: the field's z does not act */
    }
    if (x->flee_on)
        x->flee = KFN(flee_weighted)(s, p);
}

/* The new state placed in the world (docs/WORLD.md): positions wrapped into the box on each
 * periodic axis (world_wrap_v: world_wrap_f lane by lane), and in 2D z = vz = 0 exactly (the
 * rules' z terms are all +-0 there, so the plane's arithmetic is the 2D one; this makes the
 * zeros positive). Out of line: today's world never calls it. */
static __attribute__((noinline)) void KFN(world_place)(const shoal_sim *s, vf3 *p, vf3 *v)
{
    const model_consts *mc = &s->mc;
    if (mc->periodic[0])
        p->x = world_wrap_v(p->x, mc->wlo[0], mc->wsize[0], mc->whi[0]);
    if (mc->periodic[1])
        p->y = world_wrap_v(p->y, mc->wlo[1], mc->wsize[1], mc->whi[1]);
    if (mc->periodic[2])
        p->z = world_wrap_v(p->z, mc->wlo[2], mc->wsize[2], mc->whi[2]);
    if (mc->world_dims == 2) {
        p->z = vf_zero();
        v->z = vf_zero();
    }
}

/* The cells of the new positions p (grid.c cell_index lane by lane: grid_coord against the
 * whole grid, minus the sub-box offset), stored at the group's slots of cell_of: the next
 * step's sort keys, so grid_assign need not read the positions again (sim.c cells_valid).
 * coord is grid_coord lane by lane: NaN and negative clamp to 0, at or past the last cell to
 * it (the conversion of a value that large is masked out). */
static inline vi KFN(coord)(vf v, const grid *gr, int c)
{
    vf f = vf_mul(vf_sub(v, vf_set1(gr->origin[c])), vf_set1(gr->inv[c]));
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

/* The unit headings of the listed candidates list[0 .. n), dir[c][q] = rule_dir(v_list[q])'s
 * component c, computed VW candidates at a time (the models whose pair reads dir_j): v3_normalize
 * is rule_dir's arithmetic, (x^2 + y^2) + z^2, IEEE square root and division, 0 for v = 0, so the
 * same bits as the scalar call per candidate, at a vector's cost for VW of them. */
static inline __attribute__((always_inline)) void KFN(kdir)(const float *wx, const float *wy,
                                                            const float *wz, const uint32_t *list,
                                                            int n, float dir[3][KLIST_CAP + VW])
{
    for (int q = 0; q < n; q += VW) {
        vi idx = vi_load((const int32_t *)(list + q));
        if (n - q < VW) /* the list's slack past n holds no slot */
            idx = vi_select(vm_first(n - q), idx, vi_set1(0));
        vf3 v = {vf_gather(wx, idx), vf_gather(wy, idx), vf_gather(wz, idx)};
        vf3 d = v3_normalize(v);
        vf_store(dir[0] + q, d.x);
        vf_store(dir[1] + q, d.y);
        vf_store(dir[2] + q, d.z);
    }
}

/* ---- the walker: one per model of the list, generated ---------------------------------- */

/* The pair loops run over one chunk of the candidate list at a time, each in a function of
 * its own that takes the accumulators from a struct and puts them back: the loop then has
 * the vector registers to itself (with the filter in the same function, AVX2's 16 ymm
 * registers held the filter's constants and the accumulators went to memory). For every
 * model M of sim/models.h (rules.h: its adapter):
 *   kst_M           the walk's state across chunks: the lanes' positions, M's accumulator,
 *                   the candidates listed for M_late;
 *   pairs_M_V       (noinline) the pair loop over one chunk in variant V: the difference
 *                   and its square (rule_diff, v3_dot), M_near, a candidate no lane is near
 *                   skipped where M_SKIP_FAR (its velocity never loaded), M_pair; where
 *                   M_LATE, a candidate whose pair asks for M_late is listed without a
 *                   branch;
 *   walk_M_V        a group's walk: M_begin, the chunks (each followed by M_late over the
 *                   listed candidates, in candidate order: the accumulator's terms are
 *                   touched by nothing else in between, so the order of the additions is
 *                   unchanged), the work counts, the extras, M_finish, the stores;
 *   group_M         M_variant picks the variant (every variant gives the same bits). */
#define KWALK_MODEL(id, M)                                                                         \
    typedef struct KFN(kst_##M) {                                                                  \
        vf3 p;                                                                                     \
        vf reach2;                                                                                 \
        M##_acc a;                                                                                 \
        int late_n;                                                                                \
        int axes; /* the axes whose minimum image the group takes (kgroup.wrap) */                 \
        uint32_t late[KLIST_CAP + VW]; /* at most one chunk's candidates */                        \
    } KFN(kst_##M);                                                                                \
                                                                                                   \
    static inline __attribute__((always_inline)) void KFN(pairs_##M)(                              \
        const shoal_sim *s, KFN(kst_##M) * k, const uint32_t *list, int n, const int variant,      \
        const int wrap)                                                                            \
    {                                                                                              \
        const shoal_params *prm = &s->desc.params;                                                 \
        const model_consts *mc = &s->mc;                                                           \
        float *const *in = s->cur;                                                                 \
        const float *qx = in[0], *qy = in[1], *qz = in[2], *wx = in[3], *wy = in[4], *wz = in[5];  \
        vf3 p = k->p;                                                                              \
        vf reach2 = k->reach2;                                                                     \
        M##_acc a = k->a;                                                                          \
        int late_n = k->late_n;                                                                    \
        /* a model that walks every candidate: their unit headings VW at a time (kdir: rule_dir's  \
         * bits); one that skips the far ones: rule_dir per candidate kept (couzin: +7% when       \
         * every listed one took kdir's) */                                                        \
        enum { KDIR = M##_USES_DIR && !M##_SKIP_FAR };                                             \
        float dir[3][KLIST_CAP + VW];                                                              \
        if (KDIR)                                                                                  \
            KFN(kdir)(wx, wy, wz, list, n, dir);                                                   \
        for (int q = 0; q < n; q++) {                                                              \
            uint32_t j = list[q];                                                                  \
            vf3 diff = rule_diff(p, qx[j], qy[j], qz[j]);                                          \
            vf3 pos = v3_set1(qx[j], qy[j], qz[j]);                                                \
            if (wrap)                                                                              \
                rule_image_axes(mc, &diff, &pos, k->axes);                                         \
            vf d2 = v3_dot(diff, diff);                                                            \
            vm near = M##_near(d2, reach2);                                                        \
            if (M##_SKIP_FAR && !vm_any(near))                                                     \
                continue;                                                                          \
            rule_cand c = {pos,                                                                    \
                           vf_set1(wx[j]),                                                         \
                           vf_set1(wy[j]),                                                         \
                           vf_set1(wz[j]),                                                         \
                           {vf_zero(), vf_zero(), vf_zero()}};                                     \
            if (KDIR) { /* computed VW candidates at a time above, in every lane */                \
                for (int d = 0; d < 3; d++)                                                        \
                    c.dir[d] = vf_set1(dir[d][q]);                                                 \
            } else if (M##_USES_DIR) { /* dir_j once, as a scalar, then in every lane */           \
                float dj[3];                                                                       \
                rule_dir(wx[j], wy[j], wz[j], dj);                                                 \
                for (int d = 0; d < 3; d++)                                                        \
                    c.dir[d] = vf_set1(dj[d]);                                                     \
            }                                                                                      \
            vm late = M##_pair(&a, near, p, diff, d2, &c, prm, mc, variant);                       \
            if (M##_LATE) {                                                                        \
                k->late[late_n] = j;                                                               \
                late_n += vm_any(late);                                                            \
            }                                                                                      \
        }                                                                                          \
        k->a = a;                                                                                  \
        k->late_n = late_n;                                                                        \
    }                                                                                              \
    /* the four compiled pair loops: variant 0 or 1 (M's), in a world with a periodic axis         \
     * or not (the minimum image per candidate) */                                                 \
    static __attribute__((noinline)) void KFN(pairs_##M##_00)(                                     \
        const shoal_sim *s, KFN(kst_##M) * k, const uint32_t *list, int n)                         \
    {                                                                                              \
        KFN(pairs_##M)(s, k, list, n, 0, 0);                                                       \
    }                                                                                              \
    static __attribute__((noinline)) void KFN(pairs_##M##_10)(                                     \
        const shoal_sim *s, KFN(kst_##M) * k, const uint32_t *list, int n)                         \
    {                                                                                              \
        KFN(pairs_##M)(s, k, list, n, M##_VARIANTS > 1, 0);                                        \
    }                                                                                              \
    static __attribute__((noinline)) void KFN(pairs_##M##_01)(                                     \
        const shoal_sim *s, KFN(kst_##M) * k, const uint32_t *list, int n)                         \
    {                                                                                              \
        KFN(pairs_##M)(s, k, list, n, 0, 1);                                                       \
    }                                                                                              \
    static __attribute__((noinline)) void KFN(pairs_##M##_11)(                                     \
        const shoal_sim *s, KFN(kst_##M) * k, const uint32_t *list, int n)                         \
    {                                                                                              \
        KFN(pairs_##M)(s, k, list, n, M##_VARIANTS > 1, 1);                                        \
    }                                                                                              \
                                                                                                   \
    static inline __attribute__((always_inline)) void KFN(walk_##M)(                               \
        const shoal_sim *s, const kgroup *g, sim_fault *f, const int variant, const int wrap)      \
    {                                                                                              \
        const shoal_params *prm = &s->desc.params;                                                 \
        const model_consts *mc = &s->mc;                                                           \
        KFN(kst_##M) k;                                                                            \
        k.p = KFN(load3)(s->cur, 0, g);                                                            \
        vf3 v = KFN(load3)(s->cur, 3, g);                                                          \
        k.reach2 = vf_set1(mc->reach2);                                                            \
        M##_begin(&k.a, prm, mc, k.p, v);                                                          \
        k.late_n = 0;                                                                              \
        k.axes = g->wrap;                                                                          \
        kwalk w;                                                                                   \
        KFN(walk_init)(s, g, &w);                                                                  \
        uint32_t list[KLIST_CAP + VW];                                                             \
        int n;                                                                                     \
        while ((n = KFN(walk_next)(s, g, &w, list, wrap)) > 0) {                                   \
            f->lane_pairs += (uint64_t)n * VW;                                                     \
            if (wrap)                                                                              \
                variant ? KFN(pairs_##M##_11)(s, &k, list, n)                                      \
                        : KFN(pairs_##M##_01)(s, &k, list, n);                                     \
            else                                                                                   \
                variant ? KFN(pairs_##M##_10)(s, &k, list, n)                                      \
                        : KFN(pairs_##M##_00)(s, &k, list, n);                                     \
            if (M##_LATE && k.late_n) {                                                            \
                for (int q = 0; q < k.late_n; q++) {                                               \
                    uint32_t j = k.late[q];                                                        \
                    vf3 diff = rule_diff(k.p, s->cur[0][j], s->cur[1][j], s->cur[2][j]);           \
                    if (wrap) {                                                                    \
                        vf3 pos = v3_set1(s->cur[0][j], s->cur[1][j], s->cur[2][j]);               \
                        rule_image_axes(mc, &diff, &pos, k.axes);                                  \
                    }                                                                              \
                    M##_late(&k.a, diff, v3_dot(diff, diff), mc);                                  \
                }                                                                                  \
                k.late_n = 0;                                                                      \
            }                                                                                      \
        }                                                                                          \
        f->useful += KFN(lane_sum)(g, M##_useful(&k.a, variant));                                  \
        vf3 p = k.p;                                                                               \
        rule_extras x;                                                                             \
        KFN(extras)(s, g, p, &x);                                                                  \
        M##_finish(&k.a, prm, mc, variant, &x, &p, &v);                                            \
        if (mc->world_on)                                                                          \
            KFN(world_place)(s, &p, &v);                                                           \
        KFN(store_state)(s, g, p, v, f);                                                           \
    }                                                                                              \
                                                                                                   \
    static void KFN(group_##M)(const shoal_sim *s, const kgroup *g, sim_fault *f)                  \
    {                                                                                              \
        const int variant = M##_VARIANTS > 1 && M##_variant(&s->mc);                               \
        if (g->wrap)                                                                               \
            variant ? KFN(walk_##M)(s, g, f, 1, 1) : KFN(walk_##M)(s, g, f, 0, 1);                 \
        else                                                                                       \
            variant ? KFN(walk_##M)(s, g, f, 1, 0) : KFN(walk_##M)(s, g, f, 0, 0);                 \
    }

SIM_MODELS(KWALK_MODEL)
#undef KWALK_MODEL

/* A group's walk in the sim's model: group_M for every model of the list, indexed by the
 * enum (a model missing from the list or its walk does not compile). */
typedef void (*KFN(group_fn))(const shoal_sim *s, const kgroup *g, sim_fault *f);
#define KGROUP_ENTRY(id, M) [id] = KFN(group_##M),
static const KFN(group_fn) KFN(groups)[] = {SIM_MODELS(KGROUP_ENTRY)};
#undef KGROUP_ENTRY
SIM_MODEL_TABLE_CHECK(KFN(groups));

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
    g.filter_r2 = s->mc.reach2; /* the model's largest squared radius, as its tests compare it */
    g.count = (uint32_t)s->count;
#endif
    const KFN(group_fn) group = KFN(groups)[s->desc.model];
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
            int32_t x_first = grid_coord(xlo, gr->origin[0], gr->inv[0], gr->gdims[0]) - gr->off[0];
            int32_t x_last = grid_coord(xhi, gr->origin[0], gr->inv[0], gr->gdims[0]) - gr->off[0];
            g.runs = grid_runs(s, x_first - 1, x_last + 1, y, z, g.rb, g.re);
            /* The minimum image only where the group's cells wrap: a group whose cells
             * x_first-1 .. x_last+1, y-1 .. y+1, z-1 .. z+1 stay inside every periodic axis
             * has each lane's neighbours in its cells' direct neighbours, so at their direct
             * difference (under half a period: a near image through the seam would need a
             * lane in an edge cell): the image is the identity for every candidate a lane is
             * near, and a candidate no lane is near adds nothing either way. The same bits,
             * with most groups on the walled loop (about 80% in a box of 29 cells a side). */
            g.wrap = gr->wrap[0] && (x_first < 1 || x_last > gr->dims[0] - 2);
            g.wrap |= (gr->wrap[1] && (y < 1 || y > gr->dims[1] - 2)) << 1;
            g.wrap |= (gr->wrap[2] && (z < 1 || z > gr->dims[2] - 2)) << 2;
#if VW > 1
            g.filter = skip == 0;
            skip -= skip > 0;
            uint64_t kept = f->lane_pairs;
#endif
            group(s, &g, f);
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

/* The cluster-list kernel (issue 40) where this ISA has its words. */
#include "sim/forces_cluster.h"
