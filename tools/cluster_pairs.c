/* SPDX-License-Identifier: MIT */
/* cluster_pairs: the cluster-pair design of issue 40 measured outside the force kernel
 * (docs/KERNEL_DESIGN.md). On a state file or the geometry (N boids uniform in a
 * cube at density 0.5, interaction radius 2) it sorts the boids as shoal's grid does
 * (cells of side r * 1.001, (cell, row) order), forms clusters of boids in several ways and
 * counts, per boid, the lane-pairs a SIMD kernel would evaluate and the useful fraction
 * (the pairs within r, the neighbours, over the lane-pairs), for:
 *   today     lanes = W consecutive boids of one grid row, candidates = the union of their
 *             9 cell runs, each kept when its distance to the lanes' box is within r (the
 *             kernel of forces_kernel.h: should print its own count, 98.5 / 165.8 for W =
 *             8 / 16 at 1M);
 *   ilanes    lanes = the W boids of a compact i-cluster, candidates = every boid within r
 *             of its box, walked in slot order (today's summation order kept exactly);
 *   ilanes-jc the same walking whole j-clusters of N consecutive slots of a grid row, kept
 *             when their box is within r of the i-cluster's box (no test per candidate);
 *   MxN       lanes = j-boids (GROMACS's 4xN / 2xNN): pairs of an i-cluster of M and a
 *             j-cluster of N kept when their boxes are within r ("box"), or when some pair
 *             of their boids is ("exact", GROMACS's check at a column's ends, everywhere);
 *   packed    16 lanes as 4 lists of 4 (2 of 8), 8 lanes as 2 lists of 4: consecutive
 *             i-clusters walking their own candidate lists in lock step, each step as long
 *             as the longest list;
 * with clusters cut from: "row" (consecutive slots of a grid row, as today's groups),
 * "morton" (the cells in Morton order, consecutive slots), "column" (GROMACS's grid: x-y
 * columns of side cbrt(S / density), boids sorted by z in a column, cut every S), "zcol"
 * (shoal's own cells as columns, 1x1, 2x1 or 2x2 cells, boids by z, cut every S; also with
 * a cell's boids left in row order). Each
 * scheme's list building is timed on one thread (ns per boid): the lists a kernel would walk,
 * built from the sorted arrays, not the kernel. Nothing here is used by the library.
 * Usage: cluster_pairs [--in STATE.npy | --count N] [--density D] [--radius R] [--seed S]
 *                      [--dims 2|3] [--quick] [--build-only] [--check]
 * --check: every scheme's lanes must cover each neighbour pair exactly once (the box tests
 * are exact, the clusters partition the boids); a scheme that does not fails the run. */
#include "core/rng.h"
#include "core/timer.h"
#include "shoal/io.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "cluster_pairs: out of memory (%zu bytes)\n", n);
        exit(1);
    }
    return p;
}

/* ---- the points, sorted as shoal's grid sorts them ------------------------------------ */

typedef struct sgrid {
    size_t n;
    float r, r2, cell, inv, origin[3], lo[3], hi[3];
    int32_t dims[3];
    int64_t cells;
    uint32_t *start;   /* cells + 1 */
    float *x, *y, *z;  /* sorted, (cell, row) */
    uint32_t *cell_of; /* per slot */
    double density;    /* per volume, per area in 2D */
    int flat_dims;     /* the axes with an extent: 3, or 2 */
} sgrid;

static int32_t coord(float v, float o, float inv, int32_t n)
{
    float f = (v - o) * inv;
    if (!(f >= 0.0f))
        return 0;
    if (f >= (float)(n - 1))
        return n - 1;
    return (int32_t)f;
}

static void grid_build(sgrid *g, const float *p, size_t n, float r)
{
    memset(g, 0, sizeof *g);
    g->n = n;
    g->r = r;
    g->r2 = r * r;
    g->cell = r * 1.001f;
    g->inv = 1.0f / g->cell;
    for (int k = 0; k < 3; k++) {
        g->lo[k] = INFINITY;
        g->hi[k] = -INFINITY;
    }
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            g->lo[k] = fminf(g->lo[k], p[3 * i + k]);
            g->hi[k] = fmaxf(g->hi[k], p[3 * i + k]);
        }
    double vol = 1;
    g->cells = 1;
    for (int k = 0; k < 3; k++) {
        g->origin[k] = g->lo[k];
        g->dims[k] = (int32_t)ceil((g->hi[k] - g->lo[k]) / g->cell) + 1;
        g->cells *= g->dims[k];
        if (g->hi[k] > g->lo[k]) { /* a flat axis (2D) is no extent */
            vol *= g->hi[k] - g->lo[k];
            g->flat_dims++;
        }
    }
    g->density = (double)n / vol;
    uint32_t *key = xmalloc(n * sizeof *key);
    g->start = calloc((size_t)g->cells + 1, sizeof *g->start);
    g->x = xmalloc(n * sizeof(float));
    g->y = xmalloc(n * sizeof(float));
    g->z = xmalloc(n * sizeof(float));
    g->cell_of = xmalloc(n * sizeof(uint32_t));
    if (!g->start) {
        fprintf(stderr, "cluster_pairs: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++) {
        int32_t c[3];
        for (int k = 0; k < 3; k++)
            c[k] = coord(p[3 * i + k], g->origin[k], g->inv, g->dims[k]);
        key[i] = (uint32_t)(c[0] + g->dims[0] * (c[1] + g->dims[1] * c[2]));
        g->start[key[i] + 1]++;
    }
    for (int64_t c = 0; c < g->cells; c++)
        g->start[c + 1] += g->start[c];
    uint32_t *at = xmalloc((size_t)g->cells * sizeof *at);
    memcpy(at, g->start, (size_t)g->cells * sizeof *at);
    for (size_t i = 0; i < n; i++) { /* stable: rows ascend inside a cell */
        uint32_t s = at[key[i]]++;
        g->x[s] = p[3 * i];
        g->y[s] = p[3 * i + 1];
        g->z[s] = p[3 * i + 2];
        g->cell_of[s] = key[i];
    }
    free(at);
    free(key);
}

/* The neighbours (pairs within r, self excluded) of every boid: the useful pairs. */
static uint64_t useful_pairs(const sgrid *g)
{
    uint64_t u = 0;
    const int32_t nx = g->dims[0], ny = g->dims[1], nz = g->dims[2];
    for (int64_t c = 0; c < g->cells; c++) {
        int32_t cx = (int32_t)(c % nx), cy = (int32_t)(c / nx % ny), cz = (int32_t)(c / nx / ny);
        for (uint32_t i = g->start[c]; i < g->start[c + 1]; i++)
            for (int32_t z = cz - 1; z <= cz + 1; z++)
                for (int32_t y = cy - 1; y <= cy + 1; y++) {
                    if (z < 0 || z >= nz || y < 0 || y >= ny)
                        continue;
                    int64_t row = ((int64_t)z * ny + y) * nx;
                    int32_t x0 = cx > 0 ? cx - 1 : 0, x1 = cx < nx - 1 ? cx + 1 : nx - 1;
                    for (uint32_t j = g->start[row + x0]; j < g->start[row + x1 + 1]; j++) {
                        float dx = g->x[j] - g->x[i], dy = g->y[j] - g->y[i],
                              dz = g->z[j] - g->z[i];
                        u += j != i && (dx * dx + dy * dy) + dz * dz <= g->r2;
                    }
                }
    }
    return u;
}

/* ---- clusters ----------------------------------------------------------------------------- */

/* Clusters of at most S slots each: members mem[off[k] .. off[k+1]), their box bb[6k..]. */
typedef struct clist {
    int S;
    size_t count;
    uint32_t *off, *mem;
    float *bb; /* min x y z, max x y z */
} clist;

static void clist_alloc(clist *c, size_t n, int S)
{
    c->S = S;
    c->count = 0;
    size_t cap = n / (size_t)S + n + 1; /* every cluster holds one boid at least */
    c->off = xmalloc((cap + 1) * sizeof *c->off);
    c->mem = xmalloc(n * sizeof *c->mem);
    c->off[0] = 0;
}

static void clist_boxes(clist *c, const sgrid *g)
{
    c->bb = xmalloc(c->count * 6 * sizeof(float));
    for (size_t k = 0; k < c->count; k++) {
        float *b = c->bb + 6 * k;
        b[0] = b[1] = b[2] = INFINITY;
        b[3] = b[4] = b[5] = -INFINITY;
        for (uint32_t m = c->off[k]; m < c->off[k + 1]; m++) {
            uint32_t s = c->mem[m];
            float v[3] = {g->x[s], g->y[s], g->z[s]};
            for (int a = 0; a < 3; a++) {
                b[a] = fminf(b[a], v[a]);
                b[3 + a] = fmaxf(b[3 + a], v[a]);
            }
        }
    }
}

static void clist_free(clist *c)
{
    free(c->off);
    free(c->mem);
    free(c->bb);
}

/* Append slots [b, e) cut every S (a run that must not share a cluster with another). */
static void cut_run(clist *c, const uint32_t *slots, size_t b, size_t e)
{
    size_t m = c->off[c->count];
    for (size_t i = b; i < e; i++) {
        c->mem[m++] = slots ? slots[i] : (uint32_t)i;
        if (m - c->off[c->count] == (size_t)c->S || i + 1 == e)
            c->off[++c->count] = (uint32_t)m;
    }
}

/* today's groups: consecutive slots of one grid row, from the row's first boid */
static void clusters_row(clist *c, const sgrid *g, int S)
{
    clist_alloc(c, g->n, S);
    const int64_t rows = (int64_t)g->dims[1] * g->dims[2];
    for (int64_t row = 0; row < rows; row++)
        cut_run(c, NULL, g->start[row * g->dims[0]], g->start[row * g->dims[0] + g->dims[0]]);
}

static uint64_t spread3(uint32_t v)
{
    uint64_t x = v & 0x1fffff;
    x = (x | x << 32) & 0x1f00000000ffffULL;
    x = (x | x << 16) & 0x1f0000ff0000ffULL;
    x = (x | x << 8) & 0x100f00f00f00f00fULL;
    x = (x | x << 4) & 0x10c30c30c30c30c3ULL;
    x = (x | x << 2) & 0x1249249249249249ULL;
    return x;
}

typedef struct keyed {
    uint64_t key;
    uint32_t idx;
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key ? 1 : (x->idx > y->idx) - (x->idx < y->idx);
}

/* the cells in Morton order, their slots in order, cut every S */
static void clusters_morton(clist *c, const sgrid *g, int S)
{
    clist_alloc(c, g->n, S);
    keyed *k = xmalloc((size_t)g->cells * sizeof *k);
    for (int64_t cell = 0; cell < g->cells; cell++) {
        uint32_t cx = (uint32_t)(cell % g->dims[0]),
                 cy = (uint32_t)(cell / g->dims[0] % g->dims[1]),
                 cz = (uint32_t)(cell / g->dims[0] / g->dims[1]);
        k[cell].key = spread3(cx) | spread3(cy) << 1 | spread3(cz) << 2;
        k[cell].idx = (uint32_t)cell;
    }
    qsort(k, (size_t)g->cells, sizeof *k, cmp_keyed);
    uint32_t *slots = xmalloc(g->n * sizeof *slots);
    size_t m = 0;
    for (int64_t i = 0; i < g->cells; i++)
        for (uint32_t s = g->start[k[i].idx]; s < g->start[k[i].idx + 1]; s++)
            slots[m++] = s;
    cut_run(c, slots, 0, g->n);
    free(slots);
    free(k);
}

/* GROMACS's grid: x-y columns of side cbrt(S / density) (rounded to fewer columns), the
 * boids of a column by z, cut every S; a column's last cluster may be short */
static void clusters_column(clist *c, const sgrid *g, int S)
{
    clist_alloc(c, g->n, S);
    double side = pow((double)S / g->density, 1.0 / g->flat_dims); /* 2D: the strip's width */
    int32_t ncx = (int32_t)fmax(1.0, floor((g->hi[0] - g->lo[0]) / side));
    int32_t ncy = (int32_t)fmax(1.0, floor((g->hi[1] - g->lo[1]) / side));
    float ix = (float)ncx / fmaxf(g->hi[0] - g->lo[0], 1e-6f);
    float iy = (float)ncy / fmaxf(g->hi[1] - g->lo[1], 1e-6f);
    keyed *k = xmalloc(g->n * sizeof *k);
    for (size_t s = 0; s < g->n; s++) {
        int32_t cx = coord(g->x[s], g->lo[0], ix, ncx), cy = coord(g->y[s], g->lo[1], iy, ncy);
        /* column, then z (a float's bits order as the float for z >= lo: shift to >= 0) */
        float zz = g->z[s] - g->lo[2];
        uint32_t zb;
        memcpy(&zb, &zz, sizeof zb);
        k[s].key = (uint64_t)(uint32_t)(cy * ncx + cx) << 32 | zb;
        k[s].idx = (uint32_t)s;
    }
    qsort(k, g->n, sizeof *k, cmp_keyed);
    uint32_t *slots = xmalloc(g->n * sizeof *slots);
    for (size_t s = 0; s < g->n; s++)
        slots[s] = k[s].idx;
    for (size_t b = 0; b < g->n;) {
        size_t e = b;
        while (e < g->n && k[e].key >> 32 == k[b].key >> 32)
            e++;
        cut_run(c, slots, b, e);
        b = e;
    }
    free(slots);
    free(k);
}

/* shoal's own cells as GROMACS's columns: columns of bx x by cells (S = 4: 1 x 1, 8: 2 x 1,
 * 16: 2 x 2), the boids of a column by z (each cell's few boids sorted by z, the cells of the
 * column in z order: no second sort of the state, an index permutation per step), cut every
 * S; the storage order (cell, row) is untouched: lanes are gathered */
static void clusters_zcol_sorted(clist *c, const sgrid *g, int S, int by_z)
{
    clist_alloc(c, g->n, S);
    int bx = S >= 8 ? 2 : 1, by = S >= 16 ? 2 : 1;
    const int32_t nx = g->dims[0], ny = g->dims[1], nz = g->dims[2];
    uint32_t *slots = xmalloc(g->n * sizeof *slots);
    for (int32_t y0 = 0; y0 < ny; y0 += by)
        for (int32_t x0 = 0; x0 < nx; x0 += bx) {
            size_t m = 0;
            for (int32_t z = 0; z < nz; z++) {
                size_t first = m;
                for (int32_t y = y0; y < y0 + by && y < ny; y++)
                    for (int32_t x = x0; x < x0 + bx && x < nx; x++) {
                        int64_t cell = ((int64_t)z * ny + y) * nx + x;
                        for (uint32_t s = g->start[cell]; s < g->start[cell + 1]; s++)
                            slots[m++] = s;
                    }
                /* this z-layer's few boids by z (insertion sort; ties by slot) */
                for (size_t i = first + 1; by_z && i < m; i++) {
                    uint32_t v = slots[i];
                    size_t j = i;
                    while (j > first && g->z[slots[j - 1]] > g->z[v])
                        slots[j] = slots[j - 1], j--;
                    slots[j] = v;
                }
            }
            cut_run(c, slots, 0, m);
        }
    free(slots);
}

static void clusters_zcol(clist *c, const sgrid *g, int S) { clusters_zcol_sorted(c, g, S, 1); }

/* the same, a cell's boids in row order (no sort by z inside a cell) */
static void clusters_zrow(clist *c, const sgrid *g, int S) { clusters_zcol_sorted(c, g, S, 0); }

/* The i-clusters of 4 as a kernel would build them each step: one streaming pass over the
 * sorted arrays in storage order (z-layers outer, so every load is sequential), each 1x1
 * column keeping the up to 3 boids of its open cluster; a cell's boids join in z order (a
 * few, insertion-sorted by index); a cluster closes at 4 or at the slab's end (slabs of 16
 * layers, so threads could take slabs and the clusters not depend on them). Writes 4 slots
 * (UINT32_MAX: an empty lane) and the box per cluster. Returns the cluster count. */
static void zcol4_close(const sgrid *g, const uint32_t *sl, uint32_t n, uint32_t *mem, float *bb)
{
    if (!bb) { /* the slots only: the kernel forms the box from its lanes, as today */
        for (uint32_t k = 0; k < 4; k++)
            mem[k] = k < n ? sl[k] : UINT32_MAX;
        return;
    }
    bb[0] = bb[1] = bb[2] = INFINITY;
    bb[3] = bb[4] = bb[5] = -INFINITY;
    for (uint32_t k = 0; k < 4; k++) {
        mem[k] = k < n ? sl[k] : UINT32_MAX;
        if (k >= n)
            continue;
        float v[3] = {g->x[sl[k]], g->y[sl[k]], g->z[sl[k]]};
        for (int a = 0; a < 3; a++) {
            bb[a] = fminf(bb[a], v[a]);
            bb[3 + a] = fmaxf(bb[3 + a], v[a]);
        }
    }
}

__attribute__((noinline)) static size_t zcol4_build(const sgrid *g, uint32_t *mem, float *bb,
                                                    uint32_t *open)
{
    const int32_t nz = g->dims[2];
    const int64_t cols = (int64_t)g->dims[0] * g->dims[1];
    size_t count = 0;
    /* open[4 col .. 4 col + 2]: the open cluster's slots, open[4 col + 3]: how many */
    for (int64_t c = 0; c < cols; c++)
        open[4 * c + 3] = 0;
    for (int32_t z = 0; z < nz; z++) {
        int slab_end = (z & 15) == 15 || z == nz - 1;
        for (int64_t col = 0; col < cols; col++) {
            int64_t cell = (int64_t)z * cols + col;
            uint32_t b0 = g->start[cell], b1 = g->start[cell + 1];
            uint32_t *o = open + 4 * col;
            /* the cell's boids (a handful) by z: insertion sort of their slots, in chunks of
             * 16 for a crowded cell */
            uint32_t ord[16];
            for (uint32_t c0 = b0; c0 < b1; c0 += 16) {
                uint32_t n = b1 - c0 < 16 ? b1 - c0 : 16;
                for (uint32_t k = 0; k < n; k++) {
                    uint32_t j = k;
                    while (j > 0 && g->z[ord[j - 1]] > g->z[c0 + k])
                        ord[j] = ord[j - 1], j--;
                    ord[j] = c0 + k;
                }
                for (uint32_t k = 0; k < n; k++) {
                    if (o[3] < 3) {
                        o[o[3]++] = ord[k];
                        continue;
                    }
                    uint32_t full[4] = {o[0], o[1], o[2], ord[k]};
                    zcol4_close(g, full, 4, mem + 4 * count, bb ? bb + 6 * count : NULL);
                    count++;
                    o[3] = 0;
                }
            }
            if (slab_end && o[3]) {
                zcol4_close(g, o, o[3], mem + 4 * count, bb ? bb + 6 * count : NULL);
                count++;
                o[3] = 0;
            }
        }
    }
    return count;
}

/* ---- counts ------------------------------------------------------------------------------ */

/* d^2 from q to the box b, as the kernel's filter forms it */
static inline float box_d2(const float *b, float x, float y, float z)
{
    float dx = x < b[0] ? b[0] - x : x > b[3] ? x - b[3] : 0.0f;
    float dy = y < b[1] ? b[1] - y : y > b[4] ? y - b[4] : 0.0f;
    float dz = z < b[2] ? b[2] - z : z > b[5] ? z - b[5] : 0.0f;
    return (dx * dx + dy * dy) + dz * dz;
}

static inline float boxbox_d2(const float *a, const float *b)
{
    float g[3];
    for (int k = 0; k < 3; k++) {
        float u = b[k] - a[3 + k], v = a[k] - b[3 + k];
        g[k] = u > 0 ? u : v > 0 ? v : 0.0f;
    }
    return (g[0] * g[0] + g[1] * g[1]) + g[2] * g[2];
}

/* --check: the neighbour pairs each scheme's lanes cover (must be all of them, once) */
static int g_check;
static uint64_t g_covered, g_useful;

/* the members of cluster k within r of slot j (j itself excluded) */
static uint64_t cover(const sgrid *g, const struct clist *c, size_t k, uint32_t j)
{
    uint64_t n = 0;
    for (uint32_t m = c->off[k]; m < c->off[k + 1]; m++) {
        uint32_t i = c->mem[m];
        float dx = g->x[j] - g->x[i], dy = g->y[j] - g->y[i], dz = g->z[j] - g->z[i];
        n += i != j && (dx * dx + dy * dy) + dz * dz <= g->r2;
    }
    return n;
}

typedef struct result {
    char name[64];
    double lane_pairs; /* per boid */
    double useful;     /* fraction */
    double build_ns;   /* per boid, list building */
    double pairs;      /* cluster pairs (or candidates) per i-cluster */
    double tests;      /* box tests per boid (candidates or cluster pairs looked at) */
} result;

static double now_ns(void) { return (double)timer_now_ns(); }

/* today's kernel: groups of W consecutive slots of a row, the union of their 9 runs
 * (cells x_first-1 .. x_last+1, y-1 .. y+1, z-1 .. z+1), each candidate kept when within r
 * of the group's box */
static void count_today(const sgrid *g, int W, uint64_t useful, result *res)
{
    clist c;
    double t0 = now_ns();
    clusters_row(&c, g, W);
    clist_boxes(&c, g);
    uint64_t kept = 0, tested = 0;
    const int32_t nx = g->dims[0], ny = g->dims[1], nz = g->dims[2];
    for (size_t k = 0; k < c.count; k++) {
        const float *b = c.bb + 6 * k;
        uint32_t s0 = c.mem[c.off[k]], s1 = c.mem[c.off[k + 1] - 1];
        uint32_t cell0 = g->cell_of[s0], cell1 = g->cell_of[s1];
        int32_t x0 = (int32_t)(cell0 % nx) - 1, x1 = (int32_t)(cell1 % nx) + 1;
        int32_t y = (int32_t)(cell0 / nx % ny), z = (int32_t)(cell0 / nx / ny);
        x0 = x0 < 0 ? 0 : x0;
        x1 = x1 > nx - 1 ? nx - 1 : x1;
        uint64_t kk = 0;
        for (int32_t zz = z - 1; zz <= z + 1; zz++)
            for (int32_t yy = y - 1; yy <= y + 1; yy++) {
                if (zz < 0 || zz >= nz || yy < 0 || yy >= ny)
                    continue;
                int64_t row = ((int64_t)zz * ny + yy) * nx;
                for (uint32_t j = g->start[row + x0]; j < g->start[row + x1 + 1]; j++) {
                    int keep = box_d2(b, g->x[j], g->y[j], g->z[j]) <= g->r2;
                    kk += keep;
                    if (g_check && keep)
                        g_covered += cover(g, &c, k, j);
                }
                tested += g->start[row + x1 + 1] - g->start[row + x0];
            }
        kept += kk * (uint64_t)W;
    }
    double t1 = now_ns();
    res->tests = (double)tested / (double)g->n;
    snprintf(res->name, sizeof res->name, "today %2d lanes (row groups)", W);
    res->lane_pairs = (double)kept / (double)g->n;
    res->useful = (double)useful / (double)kept;
    res->build_ns = (t1 - t0) / (double)g->n;
    res->pairs = (double)kept / (double)W / (double)c.count;
    clist_free(&c);
}

/* The cells overlapping box b widened by w. */
static void cell_range(const sgrid *g, const float *b, float w, int32_t lo[3], int32_t hi[3])
{
    for (int k = 0; k < 3; k++) {
        lo[k] = coord(b[k] - w, g->origin[k], g->inv, g->dims[k]);
        hi[k] = coord(b[3 + k] + w, g->origin[k], g->inv, g->dims[k]);
    }
}

/* lanes = the W boids of each i-cluster; candidates: every boid within r of its box, in
 * slot order (jc == 0), or the j-clusters of jc consecutive slots of a grid row whose box is
 * within r of it, every member walked (jc > 0) */
static void count_ilanes(const sgrid *g, const clist *ic, const clist *jrow, const char *how,
                         int jc, uint64_t useful, double build_clusters_ns, result *res)
{
    const int W = ic->S;
    uint64_t kept = 0, tested = 0;
    double t0 = now_ns();
    const int32_t nx = g->dims[0], ny = g->dims[1];
    /* the j-clusters of a grid row start at the row's first slot: the first j-cluster of
     * slot s is found from its row's first cluster (jrow_first) */
    uint32_t *row_first = NULL;
    if (jc > 0) {
        int64_t rows = (int64_t)ny * g->dims[2];
        row_first = xmalloc(((size_t)rows + 1) * sizeof *row_first);
        size_t k = 0;
        for (int64_t row = 0; row < rows; row++) {
            uint32_t s = g->start[row * nx];
            while (k < jrow->count && jrow->mem[jrow->off[k]] < s)
                k++;
            row_first[row] = (uint32_t)k;
        }
        row_first[rows] = (uint32_t)jrow->count;
    }
    for (size_t k = 0; k < ic->count; k++) {
        const float *b = ic->bb + 6 * k;
        int32_t lo[3], hi[3];
        cell_range(g, b, g->r, lo, hi);
        uint64_t kk = 0;
        for (int32_t z = lo[2]; z <= hi[2]; z++)
            for (int32_t y = lo[1]; y <= hi[1]; y++) {
                int64_t row = ((int64_t)z * ny + y) * nx;
                uint32_t sb = g->start[row + lo[0]], se = g->start[row + hi[0] + 1];
                if (jc == 0) {
                    for (uint32_t j = sb; j < se; j++) {
                        int keep = box_d2(b, g->x[j], g->y[j], g->z[j]) <= g->r2;
                        kk += keep;
                        if (g_check && keep)
                            g_covered += cover(g, ic, k, j);
                    }
                    tested += se - sb;
                    continue;
                }
                /* j-clusters of this row overlapping [sb, se) */
                int64_t rix = (int64_t)z * ny + y;
                for (uint32_t q = row_first[rix]; q < row_first[rix + 1]; q++) {
                    uint32_t m0 = jrow->off[q], m1 = jrow->off[q + 1];
                    if (jrow->mem[m1 - 1] < sb || jrow->mem[m0] >= se)
                        continue;
                    tested++;
                    if (boxbox_d2(b, jrow->bb + 6 * q) <= g->r2) {
                        kk += (uint64_t)jc; /* a short j-cluster still takes jc steps */
                        /* its members in [sb, se): the part of it this row's range walks */
                        for (uint32_t m = m0; g_check && m < m1; m++)
                            if (jrow->mem[m] >= sb && jrow->mem[m] < se)
                                g_covered += cover(g, ic, k, jrow->mem[m]);
                    }
                }
            }
        kept += kk * (uint64_t)W;
    }
    double t1 = now_ns();
    res->tests = (double)tested / (double)g->n;
    free(row_first);
    if (jc == 0)
        snprintf(res->name, sizeof res->name, "ilanes %2d (%s), per-candidate test", W, how);
    else
        snprintf(res->name, sizeof res->name, "ilanes %2d (%s), j-clusters of %d", W, how, jc);
    res->lane_pairs = (double)kept / (double)g->n;
    res->useful = (double)useful / (double)kept;
    res->build_ns = (t1 - t0 + build_clusters_ns) / (double)g->n;
    res->pairs = (double)kept / (double)W / (double)ic->count;
}

/* V lanes as L = V / S lists: L consecutive i-clusters of S walk their own candidate lists
 * in lock step (order kept: each lane still walks its own cluster's candidates in slot
 * order); a step costs V lane-pairs, the steps are the longest list's */
static void count_packed(const sgrid *g, const clist *ic, const char *how, int V, uint64_t useful,
                         double build_clusters_ns, result *res)
{
    const int L = V / ic->S;
    uint64_t steps = 0, longest = 0, tested = 0;
    double t0 = now_ns();
    const int32_t nx = g->dims[0], ny = g->dims[1];
    for (size_t k = 0; k < ic->count; k++) {
        const float *b = ic->bb + 6 * k;
        int32_t lo[3], hi[3];
        cell_range(g, b, g->r, lo, hi);
        uint64_t kk = 0;
        for (int32_t z = lo[2]; z <= hi[2]; z++)
            for (int32_t y = lo[1]; y <= hi[1]; y++) {
                int64_t row = ((int64_t)z * ny + y) * nx;
                for (uint32_t j = g->start[row + lo[0]]; j < g->start[row + hi[0] + 1]; j++) {
                    int keep = box_d2(b, g->x[j], g->y[j], g->z[j]) <= g->r2;
                    kk += keep;
                    if (g_check && keep)
                        g_covered += cover(g, ic, k, j);
                }
                tested += g->start[row + hi[0] + 1] - g->start[row + lo[0]];
            }
        longest = kk > longest ? kk : longest;
        if (k % (size_t)L == (size_t)L - 1 || k + 1 == ic->count) {
            steps += longest;
            longest = 0;
        }
    }
    double t1 = now_ns();
    res->tests = (double)tested / (double)g->n;
    uint64_t lp = steps * (uint64_t)V;
    snprintf(res->name, sizeof res->name, "%d lanes = %d lists of %d (%s)", V, L, ic->S, how);
    res->lane_pairs = (double)lp / (double)g->n;
    res->useful = (double)useful / (double)lp;
    res->build_ns = (t1 - t0 + build_clusters_ns) / (double)g->n;
    res->pairs = (double)steps * L / (double)ic->count;
}

/* The j-clusters binned by their box centre (bins of side r), for the pair search. */
typedef struct jbins {
    float origin[3], inv, half[3]; /* half: the largest half extent of a j box per axis */
    int32_t dims[3];
    uint32_t *start, *item;
} jbins;

static void jbins_build(jbins *jb, const sgrid *g, const clist *jc)
{
    for (int k = 0; k < 3; k++) {
        jb->origin[k] = g->lo[k];
        jb->half[k] = 0;
        jb->dims[k] = (int32_t)ceil((g->hi[k] - g->lo[k]) / g->r) + 1;
    }
    jb->inv = 1.0f / g->r;
    size_t nb = (size_t)jb->dims[0] * jb->dims[1] * jb->dims[2];
    jb->start = calloc(nb + 1, sizeof *jb->start);
    jb->item = xmalloc(jc->count * sizeof *jb->item);
    uint32_t *key = xmalloc(jc->count * sizeof *key);
    if (!jb->start) {
        fprintf(stderr, "cluster_pairs: out of memory\n");
        exit(1);
    }
    for (size_t k = 0; k < jc->count; k++) {
        const float *b = jc->bb + 6 * k;
        int32_t c[3];
        for (int a = 0; a < 3; a++) {
            jb->half[a] = fmaxf(jb->half[a], 0.5f * (b[3 + a] - b[a]));
            c[a] = coord(0.5f * (b[a] + b[3 + a]), jb->origin[a], jb->inv, jb->dims[a]);
        }
        key[k] = (uint32_t)(c[0] + jb->dims[0] * (c[1] + jb->dims[1] * c[2]));
        jb->start[key[k] + 1]++;
    }
    for (size_t i = 0; i < nb; i++)
        jb->start[i + 1] += jb->start[i];
    uint32_t *at = xmalloc(nb * sizeof *at);
    memcpy(at, jb->start, nb * sizeof *at);
    for (size_t k = 0; k < jc->count; k++)
        jb->item[at[key[k]]++] = (uint32_t)k;
    free(at);
    free(key);
}

/* any pair of the two clusters within r */
static int any_pair(const sgrid *g, const clist *ic, size_t i, const clist *jc, size_t j)
{
    for (uint32_t a = ic->off[i]; a < ic->off[i + 1]; a++)
        for (uint32_t b = jc->off[j]; b < jc->off[j + 1]; b++) {
            uint32_t p = ic->mem[a], q = jc->mem[b];
            float dx = g->x[p] - g->x[q], dy = g->y[p] - g->y[q], dz = g->z[p] - g->z[q];
            if ((dx * dx + dy * dy) + dz * dz <= g->r2)
                return 1;
        }
    return 0;
}

/* lanes = j-boids: cluster pairs (i of M, j of N) kept by their boxes' distance (exact = 0)
 * or by a pair of their boids within r (exact = 1); each costs M x N lane-pairs */
static void count_mxn(const sgrid *g, const clist *ic, const clist *jc, const char *how, int exact,
                      uint64_t useful, double build_clusters_ns, result *res)
{
    jbins jb;
    double t0 = now_ns();
    jbins_build(&jb, g, jc);
    uint64_t pairs = 0, tested = 0;
    for (size_t i = 0; i < ic->count; i++) {
        const float *b = ic->bb + 6 * i;
        int32_t lo[3], hi[3];
        for (int a = 0; a < 3; a++) {
            float w = g->r + jb.half[a];
            lo[a] = coord(b[a] - w, jb.origin[a], jb.inv, jb.dims[a]);
            hi[a] = coord(b[3 + a] + w, jb.origin[a], jb.inv, jb.dims[a]);
        }
        for (int32_t z = lo[2]; z <= hi[2]; z++)
            for (int32_t y = lo[1]; y <= hi[1]; y++) {
                size_t row = ((size_t)z * jb.dims[1] + y) * jb.dims[0];
                for (uint32_t t = jb.start[row + lo[0]]; t < jb.start[row + hi[0] + 1]; t++) {
                    uint32_t j = jb.item[t];
                    tested++;
                    if (boxbox_d2(b, jc->bb + 6 * j) > g->r2)
                        continue;
                    if (exact && !any_pair(g, ic, i, jc, j))
                        continue;
                    pairs++;
                    for (uint32_t m = jc->off[j]; g_check && m < jc->off[j + 1]; m++)
                        g_covered += cover(g, ic, i, jc->mem[m]);
                }
            }
    }
    double t1 = now_ns();
    free(jb.start);
    free(jb.item);
    res->tests = (double)tested / (double)g->n;
    uint64_t lp = pairs * (uint64_t)ic->S * (uint64_t)jc->S;
    snprintf(res->name, sizeof res->name, "%dx%d (%s), %s", ic->S, jc->S, how,
             exact ? "exact pairs" : "box pairs");
    res->lane_pairs = (double)lp / (double)g->n;
    res->useful = (double)useful / (double)lp;
    res->build_ns = (t1 - t0 + build_clusters_ns) / (double)g->n;
    res->pairs = (double)pairs / (double)ic->count;
}

/* ---- the program ----------------------------------------------------------------------- */

typedef void (*cluster_fn)(clist *, const sgrid *, int);

static double make_clusters(clist *c, cluster_fn fn, const sgrid *g, int S)
{
    double t0 = now_ns();
    fn(c, g, S);
    clist_boxes(c, g);
    return now_ns() - t0;
}

static int g_failed;

static void print(const result *r)
{
    if (g_check && !isnan(r->lane_pairs) && g_covered != g_useful) {
        printf("CHECK FAILED: %s covers %llu of the %llu neighbour pairs\n", r->name,
               (unsigned long long)g_covered, (unsigned long long)g_useful);
        g_failed = 1;
    }
    g_covered = 0;
    printf("%-50s %8.1f %7.1f%% %9.1f %8.1f %9.1f\n", r->name, r->lane_pairs, 100 * r->useful,
           r->pairs, r->tests, r->build_ns);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    const char *in = NULL;
    size_t n = 1000000;
    double density = 0.5;
    float r = 2.0f;
    uint64_t seed = 1;
    int quick = 0, build_only = 0, dims = 3;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--in") == 0 && i + 1 < argc)
            in = argv[++i];
        else if (strcmp(argv[i], "--count") == 0 && i + 1 < argc)
            n = (size_t)strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--density") == 0 && i + 1 < argc)
            density = atof(argv[++i]);
        else if (strcmp(argv[i], "--radius") == 0 && i + 1 < argc)
            r = (float)atof(argv[++i]);
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--build-only") == 0)
            build_only = 1;
        else if (strcmp(argv[i], "--check") == 0)
            g_check = 1;
        else if (strcmp(argv[i], "--dims") == 0 && i + 1 < argc)
            dims = atoi(argv[++i]);
        else {
            fprintf(stderr,
                    "usage: cluster_pairs [--in STATE.npy | --count N] [--density D] "
                    "[--radius R] [--seed S] [--dims 2|3] [--quick] [--build-only] [--check]\n");
            return 2;
        }
    }
    if (!(r > 0) || !(density > 0) || n < 1 || n > (size_t)1 << 30 || (dims != 2 && dims != 3)) {
        fprintf(stderr, "cluster_pairs: bad --radius, --density or --count\n");
        return 2;
    }
    float *p = NULL;
    if (in) {
        float *rows;
        size_t count;
        shoal_error e;
        if (shoal_io_npy_read(in, &rows, &count, &e)) {
            fprintf(stderr, "cluster_pairs: %s\n", e.message);
            return 1;
        }
        n = count;
        p = xmalloc(3 * n * sizeof *p);
        for (size_t i = 0; i < n; i++)
            for (int k = 0; k < 3; k++)
                p[3 * i + k] = rows[6 * i + (size_t)k];
        free(rows);
    } else {
        /* the geometry: uniform in a cube of side (N / density)^(1/3); --dims 2: a
         * square of side (N / density)^(1/2), density per area, in the x-z plane (y = 0:
         * the grid's one layer is then y, and the columns of zcol run along z, as a 2D
         * kernel's would along its last axis) */
        float side = (float)(dims == 3 ? cbrt((double)n / density) : sqrt((double)n / density));
        p = xmalloc(3 * n * sizeof *p);
        for (size_t i = 0; i < n; i++) {
            rng g = rng_stream(seed, i);
            for (int k = 0; k < 3; k++)
                p[3 * i + k] = rng_range(&g, -side / 2, side / 2);
            if (dims == 2)
                p[3 * i + 1] = 0.0f;
        }
    }
    sgrid g;
    grid_build(&g, p, n, r);
    free(p);
    uint64_t useful = useful_pairs(&g);
    g_useful = useful;
    printf("# cluster_pairs: %zu boids (%s), density %.3f, r = %g (cells %.4f, %d x %d x %d); "
           "%.2f neighbours per boid\n",
           n, in ? in : "uniform cube", g.density, (double)r, (double)g.cell, g.dims[0], g.dims[1],
           g.dims[2], (double)useful / (double)n);
    printf("# lane-pairs / boid: the pairs a W-lane kernel evaluates per boid; useful: the "
           "neighbour pairs among them;\n# per i-cluster: candidates (today, ilanes) or "
           "kept cluster pairs (MxN); tests: box tests per boid (candidates, or cluster pairs);\n# "
           "build: ns per boid, one thread, the clusters and the tests (not the kernel)\n");
    result res;
    {
        /* the kernel-side i-cluster build, timed alone (median of 5) */
        const int64_t cols = (int64_t)g.dims[0] * g.dims[1];
        size_t cap = n + (size_t)cols * (size_t)(g.dims[2] / 16 + 1) + 1;
        uint32_t *mem = xmalloc(4 * cap * sizeof *mem), *open = xmalloc(4 * (size_t)cols * 4);
        float *bb = xmalloc(6 * cap * sizeof *bb);
        double t[2][5];
        size_t count = 0;
        for (int k = 0; k < 10; k++) {
            double t0 = now_ns();
            count = zcol4_build(&g, mem, k % 2 ? bb : NULL, open);
            t[k % 2][k / 2] = now_ns() - t0;
        }
        for (int v = 0; v < 2; v++) /* medians */
            for (int a = 1; a < 5; a++)
                for (int b = a; b > 0 && t[v][b - 1] > t[v][b]; b--) {
                    double x = t[v][b];
                    t[v][b] = t[v][b - 1];
                    t[v][b - 1] = x;
                }
        size_t lanes = 4 * count;
        printf("# zcol i-clusters of 4, the kernel-side build (one streaming pass, one thread): "
               "%.1f ns per boid for the slots, %.1f with the boxes; %zu clusters, lanes %.1f%% "
               "filled\n",
               t[0][2] / (double)n, t[1][2] / (double)n, count, 100.0 * (double)n / (double)lanes);
        free(mem);
        free(open);
        free(bb);
        if (build_only)
            return 0;
    }
    printf("%-50s %8s %8s %9s %8s %9s\n", "scheme", "lp/boid", "useful", "per i-cl", "tests",
           "build ns");
    count_today(&g, 8, useful, &res);
    print(&res);
    count_today(&g, 16, useful, &res);
    print(&res);

    static const struct {
        const char *name;
        cluster_fn fn;
    } methods[5] = {{"row", clusters_row},
                    {"morton", clusters_morton},
                    {"column", clusters_column},
                    {"zcol", clusters_zcol},
                    {"zcol, cells unsorted", clusters_zrow}};
    const int sizes[3] = {4, 8, 16};
    clist jrow8;
    make_clusters(&jrow8, clusters_row, &g, 8);
    for (int mi = 0; mi < 5; mi++)
        for (int si = 0; si < 3; si++) {
            if ((quick && mi < 2) || (mi == 4 && sizes[si] != 4))
                continue;
            clist ic;
            double t = make_clusters(&ic, methods[mi].fn, &g, sizes[si]);
            if (mi == 3) {
                snprintf(res.name, sizeof res.name, "  (zcol %d: clusters + boxes only)",
                         sizes[si]);
                res.lane_pairs = res.useful = res.pairs = res.tests = NAN;
                res.build_ns = t / (double)g.n;
                print(&res);
            }
            count_ilanes(&g, &ic, NULL, methods[mi].name, 0, useful, t, &res);
            print(&res);
            if (mi > 0 && mi < 4 && !quick) {
                count_ilanes(&g, &ic, &jrow8, methods[mi].name, 8, useful, t, &res);
                print(&res);
            }
            for (int V = 8; V <= 16; V *= 2)
                if (mi >= 2 && sizes[si] < V) {
                    count_packed(&g, &ic, methods[mi].name, V, useful, t, &res);
                    print(&res);
                }
            clist_free(&ic);
        }
    clist_free(&jrow8);

    /* lanes = j-boids: i-clusters of 4 (8), j-clusters of 4, 8, 16, from the same method */
    static const int mxn[][2] = {{4, 4}, {4, 8}, {4, 16}, {8, 8}, {8, 16}};
    for (int mi = 2; mi < 4; mi++) /* (Morton's clusters straddle its jumps: their boxes
                                    * are long, see ilanes above) */
        for (size_t q = 0; q < sizeof mxn / sizeof mxn[0]; q++) {
            clist ic, jc;
            double t = make_clusters(&ic, methods[mi].fn, &g, mxn[q][0]);
            t += make_clusters(&jc, methods[mi].fn, &g, mxn[q][1]);
            for (int exact = 0; exact < 2; exact++) {
                if (exact && (quick || q > 1)) /* exact: 4x4 and 4x8 */
                    continue;
                count_mxn(&g, &ic, &jc, methods[mi].name, exact, useful, t, &res);
                print(&res);
            }
            clist_free(&ic);
            clist_free(&jc);
        }
    free(g.start);
    free(g.x);
    free(g.y);
    free(g.z);
    free(g.cell_of);
    if (g_check)
        printf("# check: %s\n",
               g_failed ? "FAILED" : "every scheme covers every neighbour pair once");
    return g_failed;
}
