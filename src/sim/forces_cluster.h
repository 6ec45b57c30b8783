/* SPDX-License-Identifier: MIT */
/* The cluster-list kernel of issue 40 (docs/KERNEL_DESIGN.md), included at the end of
 * forces_kernel.h by the ISAs whose core/simd.h branch has vf_quads (AVX2: 8 lanes, AVX-512:
 * 16); sim.c forces_plan picks it (SHOAL_KERNEL=clusters). It gives the lane groups' bits,
 * and so the scalar kernel's.
 *
 * Clusters. The work is cut into items: a column (x, y) of the active cells and a slab of
 * KC_SLAB cell layers along z. An item's boids, cell by cell up the slab, a cell's boids by z
 * (small cells; a crowded one keeps its slot order), are cut every 4: a cluster is 4 boids
 * close in space (a box of about one cell), the last of a slab 1 to 4. Which boids share a
 * cluster never changes a bit (below): test_determinism cuts them at random too.
 *
 * Lanes. KC = VW / 4 clusters share a vector: lane 4k + a is boid a of cluster k (a lane
 * left over repeats a boid of the vector and is never stored). The vector scans the cells
 * z_lo - 1 .. z_hi + 1, y - 1 .. y + 1, x - 1 .. x + 1 around its clusters (every member's 27
 * cells) in ascending slot order (cells are numbered x + nx (y + ny z) and sorted by (cell,
 * row)), testing each candidate against each cluster's box (the lane groups' exact box test:
 * a candidate farther from the box than the model's largest radius adds nothing to any
 * member), and appends the kept slots to that cluster's list. The lists are walked in lock
 * step: step t puts candidate t of list k in the 4 lanes of cluster k (vf_quads); a list that
 * has ended gives the guard slot after the last boid (sim.c step_body: a candidate at
 * infinity, which no radius test takes).
 *
 * Why the bits are the lane groups': a lane adds, in ascending slot order, a superset of its
 * boid's neighbours, every other candidate adding exactly 0 (masked adds keep the
 * accumulator's bits, simd.h) -- which is what a lane group does (forces_kernel.h) and what
 * the scalar kernel does with its 27 cells. Deferred terms (NAME_late) keep their order: the
 * steps that asked for one are replayed after the round's walk, in step order. */

#if defined(SIMD_HAS_QUADS) && VW >= 8

#define KC (VW / 4)                     /* clusters per vector */
#define KC_SLAB SIM_CLUSTER_SLAB        /* cell layers per work item */
#define KC_CAP 256                      /* candidates per list per round */
#define KC_SORT_MAX 32                  /* cells of up to this many boids are sorted by z */
#define KC_RUNS (2 * 3 * (KC_SLAB + 2)) /* a periodic x: two ranges a row */

/* The clusters of one vector. */
typedef struct kcvec {
    uint32_t slot[VW];      /* lane 4k + a: boid a of cluster k (a dead lane: a live lane's slot) */
    unsigned live;          /* the lanes with a boid of their own */
    int32_t za[KC], zb[KC]; /* the cluster's first and last cell layer */
    int n;                  /* boids so far (4 k + a) */
} kcvec;

/* One round of the lists: the slots of cluster k's candidates at list[k], n[k] of them, then
 * the guard slot (s->count: a candidate at infinity, sim.c step_body) up to the round's steps. */
#define KC_LS (KC_CAP + VW) /* entries from list k to list k + 1 */
typedef struct kcbuf {
    uint32_t list[KC][KC_LS];
    int n[KC];
} kcbuf;

/* The vector's scan: the runs of the cells x - 1 .. x + 1 of the rows y - 1 .. y + 1 of the
 * layers z_lo - 1 .. z_hi + 1 around all its clusters (every member's 27 cells), in the grid,
 * in ascending slot order; where it is; and each cluster's box test. */
typedef struct kcscan {
    int runs, r;
    uint32_t j;
    uint32_t rb[KC_RUNS], re[KC_RUNS];
    vf box[KC][6];    /* the cluster's box (min x y z, max x y z) in every lane */
    vf r2;            /* the model's largest squared radius, as its tests compare it */
    unsigned present; /* the clusters the vector has */
    uint32_t limit;   /* the boid count: a vector load below it stays in the arrays */
    int axes;         /* the periodic axes whose minimum image the vector takes (kc_axes) */
    vf period[3];     /* on those axes the period, +inf elsewhere (the box test's wrap) */
} kcscan;

/* The layers za - 1 .. zb + 1 (or the rows y - 1 .. y + 1: za = zb = y) of axis c in
 * ascending order, each once: clipped to the grid, or on a periodic axis wrapped (grid.c
 * grid_axis_cells's rule for one cell: the same cells, the same order). Returns how many. */
static int KFN(kc_axis)(const grid *g, int c, int32_t za, int32_t zb, int32_t *out)
{
    const int32_t n = g->dims[c];
    int m = 0;
    if (!g->wrap[c]) {
        for (int32_t z = za > 0 ? za - 1 : 0; z <= zb + 1 && z < n; z++)
            out[m++] = z;
        return m;
    }
    if (zb - za + 3 >= n) { /* every layer of the axis */
        for (int32_t z = 0; z < n; z++)
            out[m++] = z;
        return m;
    }
    int32_t lo = za - 1, hi = zb + 1; /* at most one end wraps */
    if (lo < 0) {
        for (int32_t z = 0; z <= hi; z++)
            out[m++] = z;
        for (int32_t z = lo + n; z < n; z++)
            out[m++] = z;
    } else if (hi >= n) {
        for (int32_t z = 0; z <= hi - n; z++)
            out[m++] = z;
        for (int32_t z = lo; z < n; z++)
            out[m++] = z;
    } else {
        for (int32_t z = lo; z <= hi; z++)
            out[m++] = z;
    }
    return m;
}

/* The runs of the cells x - 1 .. x + 1 of the rows y - 1 .. y + 1 of the layers z_lo - 1 ..
 * z_hi + 1 (each axis clipped, or wrapped where periodic: kc_axis), in ascending slot order:
 * every member's 27 cells, the walk's order in every world (ARCHITECTURE.md). */
static void KFN(kc_runs)(const shoal_sim *s, int32_t x, int32_t y, int32_t za, int32_t zb,
                         kcscan *sc)
{
    const grid *g = &s->g;
    int32_t xs[3], ys[3], zs[KC_SLAB + 2];
    int nxs = KFN(kc_axis)(g, 0, x, x, xs), nys = KFN(kc_axis)(g, 1, y, y, ys),
        nzs = KFN(kc_axis)(g, 2, za, zb, zs);
    /* the x cells as ascending ranges of consecutive cells (at most two) */
    int32_t xa[3], xb[3];
    int xr = 0;
    for (int q = 0; q < nxs; q++) {
        if (xr > 0 && xs[q] == xb[xr - 1] + 1)
            xb[xr - 1] = xs[q];
        else {
            xa[xr] = xs[q];
            xb[xr] = xs[q];
            xr++;
        }
    }
    int n = 0;
    for (int iz = 0; iz < nzs; iz++)
        for (int iy = 0; iy < nys; iy++) {
            int64_t row = (int64_t)g->dims[0] * (ys[iy] + (int64_t)g->dims[1] * zs[iz]);
            for (int r = 0; r < xr; r++) {
                uint32_t rb = s->cell_start[row + xa[r]], re = s->cell_start[row + xb[r] + 1];
                if (rb < re) {
                    sc->rb[n] = rb;
                    sc->re[n] = re;
                    n++;
                }
            }
        }
    sc->runs = n;
    sc->r = 0;
    sc->j = n > 0 ? sc->rb[0] : 0;
}

/* The box test of KFN(filter_keep) on candidates already loaded: the lanes whose squared
 * distance to the box is at most r2 (each lane's own d^2 is at least this). */
static inline __attribute__((always_inline)) vm KFN(kc_keep)(vf qx, vf qy, vf qz, const vf *box,
                                                             vf r2, const kcscan *sc, int wrap)
{
    vf zero = vf_zero();
    vf ex = vf_max(vf_max(vf_sub(box[0], qx), vf_sub(qx, box[3])), zero);
    vf ey = vf_max(vf_max(vf_sub(box[1], qy), vf_sub(qy, box[4])), zero);
    vf ez = vf_max(vf_max(vf_sub(box[2], qz), vf_sub(qz, box[5])), zero);
    if (wrap) { /* forces_kernel.h filter_wrap: a lower bound of every image's distance */
        ex = KFN(filter_wrap)(ex, qx, box[0], box[3], sc->period[0]);
        ey = KFN(filter_wrap)(ey, qy, box[1], box[4], sc->period[1]);
        ez = KFN(filter_wrap)(ez, qz, box[2], box[5], sc->period[2]);
    }
    vf d2 = vf_add(vf_add(vf_mul(ex, ex), vf_mul(ey, ey)), vf_mul(ez, ez));
    return vf_le(d2, r2);
}

/* The next round of the lists: the scan's candidates, loaded once, tested against every
 * cluster's box, the kept slots appended to its list, until the scan ends or a list holds
 * KC_CAP; returns the longest list. */
static inline int KFN(kc_fill)(const shoal_sim *s, kcscan *sc, kcbuf *b)
{
    /* the scan's state in locals: the list stores cannot alias them */
    const float *px = s->cur[0], *py = s->cur[1], *pz = s->cur[2];
    const unsigned present = sc->present;
    const uint32_t limit = sc->limit;
    const int runs = sc->runs;
    const vf r2 = sc->r2;
    const int wrap = sc->axes != 0;
    int r = sc->r;
    uint32_t j = sc->j;
    int n[KC], most = 0;
    uint32_t *list[KC];
    for (int k = 0; k < KC; k++) {
        n[k] = 0;
        list[k] = b->list[k];
    }
    while (r < runs && most < KC_CAP) {
        const uint32_t re = sc->re[r];
        while (j < re && most < KC_CAP) {
            int tail = re - j < VW ? (int)(re - j) : 0;
            vf qx, qy, qz;
            vm live = vm_first(VW);
            if (tail == 0 || j + VW <= limit) {
                qx = vf_load(px + j);
                qy = vf_load(py + j);
                qz = vf_load(pz + j);
                if (tail)
                    live = vm_first(tail);
            } else {
                qx = vf_load_n(px + j, tail);
                qy = vf_load_n(py + j, tail);
                qz = vf_load_n(pz + j, tail);
                live = vm_first(tail);
            }
            vi idx = vi_add(vi_set1((int32_t)j), vi_lanes());
            for (int k = 0; k < KC; k++) {
                if (!(present & (1u << k)))
                    continue;
                vm keep = vm_and(KFN(kc_keep)(qx, qy, qz, sc->box[k], r2, sc, wrap), live);
                if (!vm_any(keep))
                    continue;
                vi_append((int32_t *)(list[k] + n[k]), vm_perm(keep), idx);
                n[k] += vm_count(keep);
                most = n[k] > most ? n[k] : most;
            }
            j += tail ? (uint32_t)tail : VW;
        }
        if (j >= re && ++r < runs)
            j = sc->rb[r];
    }
    sc->r = r;
    sc->j = j;
    for (int k = 0; k < KC; k++)
        b->n[k] = n[k];
    return most;
}

/* The new state of the vector's live lanes at their slots, the cells of the new positions in
 * cell_of, and the finite check (the lowest input row of a live lane not finite). */
static inline void KFN(kc_store)(const shoal_sim *s, const kcvec *cv, vf3 p, vf3 v, sim_fault *f)
{
    float o[6][VW];
    int32_t cell[VW];
    vf_store(o[0], p.x);
    vf_store(o[1], p.y);
    vf_store(o[2], p.z);
    vf_store(o[3], v.x);
    vf_store(o[4], v.y);
    vf_store(o[5], v.z);
    const grid *gr = &s->g;
    vi cv_ = vi_add(
        KFN(coord)(p.x, gr, 0),
        vi_mul(vi_set1(gr->dims[0]), vi_add(KFN(coord)(p.y, gr, 1),
                                            vi_mul(vi_set1(gr->dims[1]), KFN(coord)(p.z, gr, 2)))));
    vi_store(cell, cv_);
    vf z = vf_zero();
    vm ok = vm_and(vm_and(vf_eq(vf_sub(p.x, p.x), z), vf_eq(vf_sub(p.y, p.y), z)),
                   vf_eq(vf_sub(p.z, p.z), z));
    ok = vm_and(ok, vm_and(vm_and(vf_eq(vf_sub(v.x, v.x), z), vf_eq(vf_sub(v.y, v.y), z)),
                           vf_eq(vf_sub(v.z, v.z), z)));
    unsigned bad = cv->live & ~vm_bits(ok);
    for (int i = 0; i < VW; i++) {
        if (!(cv->live & (1u << i)))
            continue;
        uint32_t j = cv->slot[i];
        for (int k = 0; k < 6; k++)
            s->nxt[k][j] = o[k][i];
        s->cell_of[j] = (uint32_t)cell[i];
        if (bad & (1u << i)) {
            uint32_t row = s->row_cur[j];
            if (!f->found || row < f->row) {
                f->row = row;
                f->found = 1;
            }
        }
    }
}

/* rule_extras of the vector's lanes (KFN(extras) for lanes that are not consecutive slots). */
static inline void KFN(kc_extras)(const shoal_sim *s, vf3 p, const uint32_t *rows, rule_extras *x)
{
    x->field_on = __builtin_expect(s->fld.vec != NULL, 0);
    x->flee_on = __builtin_expect(s->mc.predator_count > 0, 0);
    x->field = x->flee = v3_zero();
    x->rows = rows;
    x->lanes = VW;
    if (x->field_on) {
        kgroup g = {.n = VW}; /* field_avoid samples lanes 0 .. n - 1: all of them */
        x->field = KFN(field_avoid)(s, &g, p);
        if (s->mc.world_on && s->mc.world_dims == 2)
            x->field.z = vf_zero(); /* the plane: the field's z does not act */
    }
    if (x->flee_on)
        x->flee = KFN(flee_weighted)(s, p);
}

/* The periodic axes on which the vector takes the minimum image: those where its clusters'
 * cells (column x, y; layers za .. zb) touch the seam (forces_kernel.h's kgroup.wrap, same
 * reasoning: elsewhere the image is the identity for every candidate a lane is near). */
static inline int KFN(kc_axes)(const shoal_sim *s, int32_t x, int32_t y, int32_t za, int32_t zb)
{
    const grid *g = &s->g;
    int axes = g->wrap[0] && (x < 1 || x > g->dims[0] - 2);
    axes |= (g->wrap[1] && (y < 1 || y > g->dims[1] - 2)) << 1;
    axes |= (g->wrap[2] && (za < 1 || zb > g->dims[2] - 2)) << 2;
    return axes;
}

/* The walkers, one per model (forces_kernel.h's KWALK_MODEL for lane groups):
 *   kcst_M        the walk's state: the lanes' positions, M's accumulator, the late steps;
 *   kcpairs_M_V   (noinline) one round's lock-step walk over the lists' buffers;
 *   kcwalk_M      a vector's walk: M_begin, the rounds (each followed by M_late over the steps
 *                 that asked for it, in step order), the counts, the extras, M_finish, stores. */
#define KCWALK_MODEL(id, M)                                                                        \
    typedef struct KFN(kcst_##M) {                                                                 \
        vf3 p;                                                                                     \
        vf reach2;                                                                                 \
        M##_acc a;                                                                                 \
        int late_n;                                                                                \
        int axes; /* the axes whose minimum image the vector takes (kcscan.axes) */                \
        int late[KC_CAP + VW];                                                                     \
    } KFN(kcst_##M);                                                                               \
                                                                                                   \
    static inline __attribute__((always_inline)) void KFN(kcpairs_##M)(                            \
        const shoal_sim *s, KFN(kcst_##M) * k, const kcbuf *b, int steps, const int variant,       \
        const int wrap)                                                                            \
    {                                                                                              \
        const shoal_params *prm = &s->desc.params;                                                 \
        const model_consts *mc = &s->mc;                                                           \
        vf3 p = k->p;                                                                              \
        vf reach2 = k->reach2;                                                                     \
        M##_acc a = k->a;                                                                          \
        int late_n = k->late_n;                                                                    \
        float *const *in = s->cur;                                                                 \
        const float *qx = in[0], *qy = in[1], *qz = in[2], *wx = in[3], *wy = in[4], *wz = in[5];  \
        for (int t = 0; t < steps; t++) {                                                          \
            const uint32_t *ix = &b->list[0][t];                                                   \
            vf3 pj = {vf_quads(qx, ix, KC_LS), vf_quads(qy, ix, KC_LS), vf_quads(qz, ix, KC_LS)};  \
            vf3 diff = rule_diff_v(p, pj);                                                         \
            if (wrap)                                                                              \
                rule_image_axes(mc, &diff, &pj, k->axes);                                          \
            vf d2 = v3_dot(diff, diff);                                                            \
            vm near = M##_near(d2, reach2);                                                        \
            if (M##_SKIP_FAR && !vm_any(near))                                                     \
                continue;                                                                          \
            rule_cand c = {pj,                                                                     \
                           vf_quads(wx, ix, KC_LS),                                                \
                           vf_quads(wy, ix, KC_LS),                                                \
                           vf_quads(wz, ix, KC_LS),                                                \
                           {vf_zero(), vf_zero(), vf_zero()}};                                     \
            if (M##_USES_DIR)                                                                      \
                rule_dir_v(c.vx, c.vy, c.vz, c.dir);                                               \
            vm late = M##_pair(&a, near, p, diff, d2, &c, prm, mc, variant);                       \
            if (M##_LATE) {                                                                        \
                k->late[late_n] = t;                                                               \
                late_n += vm_any(late);                                                            \
            }                                                                                      \
        }                                                                                          \
        k->a = a;                                                                                  \
        k->late_n = late_n;                                                                        \
    }                                                                                              \
    static __attribute__((noinline)) void KFN(kcpairs_##M##_00)(                                   \
        const shoal_sim *s, KFN(kcst_##M) * k, const kcbuf *b, int steps)                          \
    {                                                                                              \
        KFN(kcpairs_##M)(s, k, b, steps, 0, 0);                                                    \
    }                                                                                              \
    static __attribute__((noinline)) void KFN(kcpairs_##M##_10)(                                   \
        const shoal_sim *s, KFN(kcst_##M) * k, const kcbuf *b, int steps)                          \
    {                                                                                              \
        KFN(kcpairs_##M)(s, k, b, steps, M##_VARIANTS > 1, 0);                                     \
    }                                                                                              \
    static __attribute__((noinline)) void KFN(kcpairs_##M##_01)(                                   \
        const shoal_sim *s, KFN(kcst_##M) * k, const kcbuf *b, int steps)                          \
    {                                                                                              \
        KFN(kcpairs_##M)(s, k, b, steps, 0, 1);                                                    \
    }                                                                                              \
    static __attribute__((noinline)) void KFN(kcpairs_##M##_11)(                                   \
        const shoal_sim *s, KFN(kcst_##M) * k, const kcbuf *b, int steps)                          \
    {                                                                                              \
        KFN(kcpairs_##M)(s, k, b, steps, M##_VARIANTS > 1, 1);                                     \
    }                                                                                              \
                                                                                                   \
    static __attribute__((noinline)) void KFN(kcwalk_##M)(                                         \
        const shoal_sim *s, const kcvec *cv, int32_t x, int32_t y, kcbuf *b, sim_fault *f)         \
    {                                                                                              \
        const shoal_params *prm = &s->desc.params;                                                 \
        const model_consts *mc = &s->mc;                                                           \
        const int variant = M##_VARIANTS > 1 && M##_variant(mc);                                   \
        float in[6][VW];                                                                           \
        uint32_t rows[VW];                                                                         \
        for (int i = 0; i < VW; i++) {                                                             \
            for (int q = 0; q < 6; q++)                                                            \
                in[q][i] = s->cur[q][cv->slot[i]];                                                 \
            rows[i] = s->row_cur[cv->slot[i]];                                                     \
        }                                                                                          \
        KFN(kcst_##M) k;                                                                           \
        k.p = (vf3){vf_load(in[0]), vf_load(in[1]), vf_load(in[2])};                               \
        vf3 v = {vf_load(in[3]), vf_load(in[4]), vf_load(in[5])};                                  \
        k.reach2 = vf_set1(mc->reach2);                                                            \
        M##_begin(&k.a, prm, mc, k.p, v);                                                          \
        k.late_n = 0;                                                                              \
        kcscan sc;                                                                                 \
        sc.present = 0;                                                                            \
        int32_t za = INT32_MAX, zb = INT32_MIN;                                                    \
        for (int c = 0; c < KC; c++) {                                                             \
            if (cv->za[c] > cv->zb[c])                                                             \
                continue; /* no cluster here */                                                    \
            sc.present |= 1u << c;                                                                 \
            za = cv->za[c] < za ? cv->za[c] : za;                                                  \
            zb = cv->zb[c] > zb ? cv->zb[c] : zb;                                                  \
            float box[6] = {__builtin_inff(),  __builtin_inff(),  __builtin_inff(),                \
                            -__builtin_inff(), -__builtin_inff(), -__builtin_inff()};              \
            for (int a = 4 * c; a < 4 * c + 4; a++) {                                              \
                if (!(cv->live & (1u << a)))                                                       \
                    continue;                                                                      \
                for (int q = 0; q < 3; q++) {                                                      \
                    box[q] = in[q][a] < box[q] ? in[q][a] : box[q];                                \
                    box[3 + q] = in[q][a] > box[3 + q] ? in[q][a] : box[3 + q];                    \
                }                                                                                  \
            }                                                                                      \
            for (int q = 0; q < 6; q++)                                                            \
                sc.box[c][q] = vf_set1(box[q]);                                                    \
        }                                                                                          \
        sc.r2 = vf_set1(mc->reach2);                                                               \
        sc.limit = (uint32_t)s->count;                                                             \
        k.axes = sc.axes = KFN(kc_axes)(s, x, y, za, zb);                                          \
        for (int q = 0; q < 3; q++)                                                                \
            sc.period[q] = vf_set1(sc.axes >> q & 1 ? mc->wsize[q] : __builtin_inff());            \
        KFN(kc_runs)(s, x, y, za, zb, &sc);                                                        \
        const uint32_t guard = (uint32_t)s->count;                                                 \
        int steps;                                                                                 \
        while ((steps = KFN(kc_fill)(s, &sc, b)) > 0) {                                            \
            for (int c = 0; c < KC; c++) /* an ended list: the guard, at infinity */               \
                for (int t = b->n[c]; t < steps; t++)                                              \
                    b->list[c][t] = guard;                                                         \
            f->lane_pairs += (uint64_t)steps * VW;                                                 \
            if (!k.axes)                                                                           \
                variant ? KFN(kcpairs_##M##_10)(s, &k, b, steps)                                   \
                        : KFN(kcpairs_##M##_00)(s, &k, b, steps);                                  \
            else                                                                                   \
                variant ? KFN(kcpairs_##M##_11)(s, &k, b, steps)                                   \
                        : KFN(kcpairs_##M##_01)(s, &k, b, steps);                                  \
            if (M##_LATE && k.late_n) {                                                            \
                for (int q = 0; q < k.late_n; q++) {                                               \
                    const uint32_t *ix = &b->list[0][k.late[q]];                                   \
                    vf3 pj = {vf_quads(s->cur[0], ix, KC_LS), vf_quads(s->cur[1], ix, KC_LS),      \
                              vf_quads(s->cur[2], ix, KC_LS)};                                     \
                    vf3 diff = rule_diff_v(k.p, pj);                                               \
                    if (k.axes)                                                                    \
                        rule_image_axes(mc, &diff, &pj, k.axes);                                   \
                    M##_late(&k.a, diff, v3_dot(diff, diff), mc);                                  \
                }                                                                                  \
                k.late_n = 0;                                                                      \
            }                                                                                      \
        }                                                                                          \
        vm live = vm_of_bits(cv->live);                                                            \
        f->useful +=                                                                               \
            (uint32_t)vi_hsum(vi_select(live, vi_trunc(M##_useful(&k.a, variant)), vi_set1(0)));   \
        vf3 p = k.p;                                                                               \
        rule_extras xe;                                                                            \
        KFN(kc_extras)(s, p, rows, &xe);                                                           \
        M##_finish(&k.a, prm, mc, variant, &xe, &p, &v);                                           \
        if (mc->world_on)                                                                          \
            KFN(world_place)(s, &p, &v);                                                           \
        KFN(kc_store)(s, cv, p, v, f);                                                             \
    }

SIM_MODELS(KCWALK_MODEL)
#undef KCWALK_MODEL

typedef void (*KFN(kcwalk_fn))(const shoal_sim *s, const kcvec *cv, int32_t x, int32_t y, kcbuf *b,
                               sim_fault *f);
#define KCWALK_ENTRY(id, M) [id] = KFN(kcwalk_##M),
static const KFN(kcwalk_fn) KFN(kcwalks)[] = {SIM_MODELS(KCWALK_ENTRY)};
#undef KCWALK_ENTRY
SIM_MODEL_TABLE_CHECK(KFN(kcwalks));

/* The vector's lanes past its boids: dead, each a copy of a live lane (its cluster's first, or
 * the vector's first), so what they compute is finite and never stored. */
static void KFN(kc_close)(kcvec *cv)
{
    for (int i = cv->n; i < VW; i++) {
        int c = i / 4;
        cv->slot[i] = (i & 3) && cv->za[c] <= cv->zb[c] ? cv->slot[4 * c] : cv->slot[0];
    }
}

/* Boids of cell layer z appended to the item's open vector, walking it when full. `cut`: the
 * test's odd clusters (sim_internal.h kernel_clusters == 2): a cluster also closes where a
 * hash of the slot says so. */
static inline void KFN(kc_push)(const shoal_sim *s, kcvec *cv, uint32_t slot, int32_t z, int cut,
                                int32_t x, int32_t y, kcbuf *b, KFN(kcwalk_fn) walk, sim_fault *f)
{
    int c = cv->n / 4;
    if ((cv->n & 3) == 0) {
        cv->za[c] = z;
        cv->zb[c] = z;
    }
    cv->slot[cv->n] = slot;
    cv->live |= 1u << cv->n;
    cv->zb[c] = z;
    cv->n++;
    if (cut && (cv->n & 3) && ((slot * 2654435761u) >> 30) == 0) /* close this cluster early */
        while (cv->n & 3) {
            cv->slot[cv->n] = cv->slot[4 * c]; /* a dead lane */
            cv->n++;
        }
    if (cv->n == VW) {
        KFN(kc_close)(cv);
        walk(s, cv, x, y, b, f);
        f->groups++;
        cv->n = 0;
        cv->live = 0;
        for (int k = 0; k < KC; k++) {
            cv->za[k] = 1;
            cv->zb[k] = 0;
        }
    }
}

/* Worker threads: work items [i0, i1) (sim.c forces_cluster_items counts them): item i is
 * column x = act_lo[0] + i % cx, y = act_lo[1] + (i / cx) % cy of the active cells, layers
 * act_lo[2] + KC_SLAB (i / (cx cy)) and up. Every active boid is in exactly one item. */
void KFN(forces_clusters)(const shoal_sim *s, int64_t i0, int64_t i1, sim_fault *f)
{
    const grid *g = &s->g;
    const int32_t *alo = g->act_lo, *ahi = g->act_hi;
    const int64_t cx = ahi[0] - alo[0], cy = ahi[1] - alo[1];
    const KFN(kcwalk_fn) walk = KFN(kcwalks)[s->desc.model];
    const int cut = s->kernel_clusters == 2;
    const float *pz = s->cur[2];
    kcbuf b;
    kcvec cv;
    for (int64_t i = i0; i < i1; i++) {
        int32_t x = alo[0] + (int32_t)(i % cx), y = alo[1] + (int32_t)((i / cx) % cy);
        int32_t z0 = alo[2] + KC_SLAB * (int32_t)(i / (cx * cy));
        int32_t z1 = z0 + KC_SLAB < ahi[2] ? z0 + KC_SLAB : ahi[2];
        cv.n = 0;
        cv.live = 0;
        for (int k = 0; k < KC; k++) {
            cv.za[k] = 1;
            cv.zb[k] = 0;
        }
        uint64_t boids = 0;
        for (int32_t z = z0; z < z1; z++) {
            int64_t cell = x + (int64_t)g->dims[0] * (y + (int64_t)g->dims[1] * z);
            uint32_t b0 = s->cell_start[cell], b1 = s->cell_start[cell + 1];
            uint32_t n = b1 - b0;
            boids += n;
            if (n > 1 && n <= KC_SORT_MAX) { /* by z (ties: slot order) */
                uint32_t ord[KC_SORT_MAX];
                for (uint32_t q = 0; q < n; q++) {
                    uint32_t j = b0 + q, w = q;
                    while (w > 0 && pz[ord[w - 1]] > pz[j]) {
                        ord[w] = ord[w - 1];
                        w--;
                    }
                    ord[w] = j;
                }
                for (uint32_t q = 0; q < n; q++)
                    KFN(kc_push)(s, &cv, ord[q], z, cut, x, y, &b, walk, f);
            } else {
                for (uint32_t j = b0; j < b1; j++)
                    KFN(kc_push)(s, &cv, j, z, cut, x, y, &b, walk, f);
            }
        }
        if (cv.n > 0) {
            KFN(kc_close)(&cv);
            walk(s, &cv, x, y, &b, f);
            f->groups++;
        }
        f->boids += boids;
    }
}

#undef KC
#undef KC_SLAB
#undef KC_CAP
#undef KC_SORT_MAX
#undef KC_RUNS
#undef KC_LS
#endif
