/* SPDX-License-Identifier: MIT */
/* baseline_grid: the yardstick `shoal bench` divides shoal's step time by (issues 18, 40). A
 * plain uniform-grid neighbour pass, written the way anyone would write it for speed without
 * shoal's constraints, and at least as fast as the plain grid of the yardstick
 * (a counting-sort grid that only counts and sums; docs/PERFORMANCE.md compares the two):
 *   - the sort: the points stay in the last pass's cell order (as a running simulation's
 *     do), so each pass sorts nearly sorted data: per-thread histograms over contiguous
 *     blocks of it, a parallel scan over (cell, thread), and a scatter of x, y, z and the
 *     input row into SoA arrays (16 bytes a point, nothing else moves);
 *   - the pass: one task per (z, y) row of cells, the 9 contiguous x-runs around a cell found
 *     once for all its points; every point counts the points within `radius` and sums their
 *     positions. No forces, no integration, no fixed summation order: the AVX2 path tests 8
 *     candidates per instruction against one point (candidates as lanes, the fastest layout
 *     for this job) and sums in whatever order the lanes give.
 * Between timed passes the points move by a small constant step (4% of the radius, reflected
 * at the box: the plain grid's motion), untimed, so the next sort sees what a step's sort
 * sees: a few points changed cells.
 *
 * So the ratio shoal_step / baseline says how close shoal's full step (sort + five-rule
 * forces in a canonical order + integrate) comes to the cost of merely finding and touching
 * the same number of neighbours. In the support library: `shoal bench` calls it, and
 * tools/baseline_grid.c is the program `baseline_grid` around it. */
#include "support/baseline_grid.h"

#include "core/cpu.h"
#include "core/parallel.h"
#include "core/rng.h"
#include "core/timer.h"
#include "shoal/profile.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define BL_X86 1
#else
#define BL_X86 0
#endif

typedef struct bl_grid {
    size_t n;
    int threads;
    int avx2;
    float lo[3], hi[3], inv_cell, r2;
    int32_t dims[3];
    int64_t cells;
    /* cur: the points in the last sort's order (before the first sort: input order);
     * nxt: the scatter's destination, swapped with cur after it */
    float *x, *y, *z, *nx, *ny, *nz; /* n + 8 each: whole vectors past a run */
    uint32_t *id, *nid;              /* slot -> input row */
    float *step;                     /* per input row: the untimed motion's step, 3 */
    uint32_t *key;                   /* cell of each cur slot */
    uint32_t *hist;                  /* threads x cells, then their offsets */
    uint32_t *start;                 /* cells + 1 */
    uint32_t *count;                 /* per sorted point */
    float *sum;                      /* per sorted point, 3 */
    int64_t *block_total;            /* per thread: points in its cell range */
    parallel_counter counter;
} bl_grid;

/* The clamped cell coordinate of v: below the box or NaN -> 0, beyond it -> dim - 1
 * (branch-free, so the key loop vectorizes). */
static inline int32_t cell_coord(float v, float lo, float inv, float top)
{
    float c = (v - lo) * inv;
    c = c > 0.0f ? c : 0.0f; /* NaN -> 0 */
    c = c < top ? c : top;
    return (int32_t)c;
}

/* The sort, one region: keys and per-thread histograms of contiguous blocks of cur, the
 * scan over (cell, thread) with each thread owning a range of cells, then the scatter of
 * each block to its own offsets (stable for a given thread count; the baseline keeps no
 * order across thread counts). */
static void sort_region(void *ctx, int t, int nt)
{
    bl_grid *g = ctx;
    int64_t b, e;
    parallel_split((int64_t)g->n, t, nt, &b, &e);
    uint32_t *h = g->hist + (size_t)t * (size_t)g->cells;
    memset(h, 0, (size_t)g->cells * sizeof *h);
    const int32_t dx = g->dims[0], dy = g->dims[1];
    const float tx = (float)(g->dims[0] - 1), ty = (float)(dy - 1), tz = (float)(g->dims[2] - 1);
    const float *X = g->x, *Y = g->y, *Z = g->z;
    uint32_t *key = g->key;
    for (int64_t i = b; i < e; i++) {
        int32_t cx = cell_coord(X[i], g->lo[0], g->inv_cell, tx);
        int32_t cy = cell_coord(Y[i], g->lo[1], g->inv_cell, ty);
        int32_t cz = cell_coord(Z[i], g->lo[2], g->inv_cell, tz);
        key[i] = (uint32_t)((cz * dy + cy) * dx + cx); /* < 2^28 cells */
    }
    for (int64_t i = b; i < e; i++)
        h[key[i]]++;
    parallel_barrier();
    int64_t cb, ce;
    parallel_split(g->cells, t, nt, &cb, &ce);
    int64_t total = 0;
    for (int k = 0; k < nt; k++) {
        const uint32_t *hk = g->hist + (size_t)k * (size_t)g->cells;
        for (int64_t c = cb; c < ce; c++)
            total += hk[c];
    }
    g->block_total[t] = total;
    parallel_barrier();
    int64_t base = 0;
    for (int k = 0; k < t; k++)
        base += g->block_total[k];
    for (int64_t c = cb; c < ce; c++) {
        g->start[c] = (uint32_t)base;
        for (int k = 0; k < nt; k++) {
            uint32_t *hk = g->hist + (size_t)k * (size_t)g->cells + (size_t)c;
            uint32_t v = *hk;
            *hk = (uint32_t)base;
            base += v;
        }
    }
    if (t == nt - 1)
        g->start[g->cells] = (uint32_t)g->n;
    parallel_barrier();
    for (int64_t i = b; i < e; i++) {
        uint32_t d = h[g->key[i]]++;
        g->nx[d] = g->x[i];
        g->ny[d] = g->y[i];
        g->nz[d] = g->z[i];
        g->nid[d] = g->id[i];
    }
}

/* The 9 x-runs [rb, re) around cell (cx, cy, cz). */
static int runs_of(const bl_grid *g, int32_t cx, int32_t cy, int32_t cz, uint32_t *rb, uint32_t *re)
{
    int32_t nx = g->dims[0], ny = g->dims[1], nz = g->dims[2];
    int32_t x0 = cx > 0 ? cx - 1 : 0, x1 = cx < nx - 1 ? cx + 1 : nx - 1;
    int runs = 0;
    for (int32_t z = cz > 0 ? cz - 1 : 0; z <= cz + 1 && z < nz; z++)
        for (int32_t y = cy > 0 ? cy - 1 : 0; y <= cy + 1 && y < ny; y++) {
            int64_t row = ((int64_t)z * ny + y) * nx;
            rb[runs] = g->start[row + x0];
            re[runs] = g->start[row + x1 + 1];
            runs++;
        }
    return runs;
}

static void points_scalar(bl_grid *g, uint32_t b, uint32_t e, int runs, const uint32_t *rb,
                          const uint32_t *re)
{
    for (uint32_t i = b; i < e; i++) {
        float px = g->x[i], py = g->y[i], pz = g->z[i];
        uint32_t cnt = 0;
        float sx = 0, sy = 0, sz = 0;
        for (int r = 0; r < runs; r++)
            for (uint32_t j = rb[r]; j < re[r]; j++) {
                float dx = g->x[j] - px, dy = g->y[j] - py, dz = g->z[j] - pz;
                if (dx * dx + dy * dy + dz * dz <= g->r2 && j != i) {
                    cnt++;
                    sx += g->x[j];
                    sy += g->y[j];
                    sz += g->z[j];
                }
            }
        g->count[i] = cnt;
        g->sum[3 * (size_t)i] = sx;
        g->sum[3 * (size_t)i + 1] = sy;
        g->sum[3 * (size_t)i + 2] = sz;
    }
}

#if BL_X86
__attribute__((target("avx2"))) static float hsum8(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}

/* Points [b, e) of one cell against its runs. Each run is read as whole vectors (the arrays
 * have 8 floats of padding); the last one's lanes past the run are dropped by a mask. The
 * point itself is counted (d2 = 0) and taken off at the end. d^2 = fma(dz, dz, fma(dy, dy,
 * dx * dx)), as the plain grid forms it (baseline_grid.h). */
__attribute__((target("avx2,fma"))) static void
points_avx2(bl_grid *g, uint32_t b, uint32_t e, int runs, const uint32_t *rb, const uint32_t *re)
{
    /* lanes [0, k) of tail_mask + 8 - k are set */
    static const int32_t tail_mask[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
    const __m256 r2 = _mm256_set1_ps(g->r2);
    const float *X = g->x, *Y = g->y, *Z = g->z;
    /* 8 candidates from j against the point, lanes outside `live` dropped */
#define BL_LANES(live)                                                                             \
    do {                                                                                           \
        __m256 qx = _mm256_loadu_ps(X + j), qy = _mm256_loadu_ps(Y + j),                           \
               qz = _mm256_loadu_ps(Z + j);                                                        \
        __m256 dx = _mm256_sub_ps(qx, px), dy = _mm256_sub_ps(qy, py), dz = _mm256_sub_ps(qz, pz); \
        __m256 d2 = _mm256_fmadd_ps(dz, dz, _mm256_fmadd_ps(dy, dy, _mm256_mul_ps(dx, dx)));       \
        __m256 m = _mm256_and_ps((live), _mm256_cmp_ps(d2, r2, _CMP_LE_OQ));                       \
        cnt = _mm256_sub_epi32(cnt, _mm256_castps_si256(m));                                       \
        sx = _mm256_add_ps(sx, _mm256_and_ps(m, qx));                                              \
        sy = _mm256_add_ps(sy, _mm256_and_ps(m, qy));                                              \
        sz = _mm256_add_ps(sz, _mm256_and_ps(m, qz));                                              \
    } while (0)
    for (uint32_t i = b; i < e; i++) {
        __m256 px = _mm256_set1_ps(X[i]), py = _mm256_set1_ps(Y[i]), pz = _mm256_set1_ps(Z[i]);
        __m256 sx = _mm256_setzero_ps(), sy = sx, sz = sx;
        __m256i cnt = _mm256_setzero_si256();
        for (int r = 0; r < runs; r++) {
            uint32_t j = rb[r];
            for (; j + 8 <= re[r]; j += 8)
                BL_LANES(_mm256_castsi256_ps(_mm256_set1_epi32(-1)));
            if (j < re[r])
                BL_LANES(_mm256_loadu_ps((const float *)(tail_mask + 8 - (re[r] - j))));
        }
        __m128i c4 = _mm_add_epi32(_mm256_castsi256_si128(cnt), _mm256_extracti128_si256(cnt, 1));
        c4 = _mm_add_epi32(c4, _mm_shuffle_epi32(c4, 0x4e));
        c4 = _mm_add_epi32(c4, _mm_shuffle_epi32(c4, 0xb1));
        g->count[i] = (uint32_t)_mm_cvtsi128_si32(c4) - 1;
        g->sum[3 * (size_t)i] = hsum8(sx) - X[i];
        g->sum[3 * (size_t)i + 1] = hsum8(sy) - Y[i];
        g->sum[3 * (size_t)i + 2] = hsum8(sz) - Z[i];
    }
#undef BL_LANES
}
#endif

/* The neighbour pass: rows of cells taken dynamically. */
static void pass_region(void *ctx, int t, int nt)
{
    (void)t;
    (void)nt;
    bl_grid *g = ctx;
    const int64_t rows = (int64_t)g->dims[1] * g->dims[2];
    int64_t b, e;
    while (parallel_dynamic_next(&g->counter, rows, 2, &b, &e)) {
        for (int64_t row = b; row < e; row++) {
            int32_t cy = (int32_t)(row % g->dims[1]), cz = (int32_t)(row / g->dims[1]);
            for (int32_t cx = 0; cx < g->dims[0]; cx++) {
                int64_t c = row * g->dims[0] + cx;
                uint32_t pb = g->start[c], pe = g->start[c + 1];
                if (pb == pe)
                    continue;
                uint32_t rb[9], re[9];
                int runs = runs_of(g, cx, cy, cz, rb, re);
#if BL_X86
                if (g->avx2) {
                    points_avx2(g, pb, pe, runs, rb, re);
                    continue;
                }
#endif
                points_scalar(g, pb, pe, runs, rb, re);
            }
        }
    }
}

/* The untimed motion between passes: every point one step along its own direction,
 * reflected at the box (its direction flips there). Worker threads: each writes its slots
 * and the steps of their rows. */
static void move_range(void *ctx, int64_t b, int64_t e, int t)
{
    (void)t;
    bl_grid *g = ctx;
    float *p[3] = {g->x, g->y, g->z};
    for (int64_t i = b; i < e; i++) {
        float *s = g->step + 3 * (size_t)g->id[i];
        for (int k = 0; k < 3; k++) {
            float v = p[k][i] + s[k];
            if (v < g->lo[k]) {
                v = 2 * g->lo[k] - v;
                s[k] = -s[k];
            } else if (v >= g->hi[k]) {
                v = nextafterf(2 * g->hi[k] - v, g->lo[k]);
                s[k] = -s[k];
            }
            p[k][i] = v;
        }
    }
}

static void bl_free(bl_grid *g)
{
    free(g->x);
    free(g->y);
    free(g->z);
    free(g->nx);
    free(g->ny);
    free(g->nz);
    free(g->id);
    free(g->nid);
    free(g->step);
    free(g->key);
    free(g->hist);
    free(g->start);
    free(g->count);
    free(g->sum);
    free(g->block_total);
}

static int bl_init(bl_grid *g, const float *rows, size_t stride, size_t n, const float lo[3],
                   const float size[3], float radius, int threads, int allow_avx2, int moving)
{
    memset(g, 0, sizeof *g);
    if (!(radius > 0) || n == 0 || n > UINT32_MAX - 8)
        return 1;
    g->n = n;
    g->threads = parallel_resolve_threads(threads);
    g->avx2 = allow_avx2 && baseline_grid_avx2_available();
    g->inv_cell = 1.0f / radius;
    g->r2 = radius * radius;
    g->cells = 1;
    for (int k = 0; k < 3; k++) {
        g->lo[k] = lo[k];
        g->hi[k] = lo[k] + size[k];
        double d = ceil((double)size[k] / radius);
        g->dims[k] = d < 1 ? 1 : d > 4096 ? 4096 : (int32_t)d;
        g->cells *= g->dims[k];
    }
    if (g->cells > (int64_t)1 << 28)
        return 1;
    size_t c = (size_t)g->cells, t = (size_t)g->threads;
    float **f[6] = {&g->x, &g->y, &g->z, &g->nx, &g->ny, &g->nz};
    int ok = 1;
    for (int k = 0; k < 6; k++)
        ok &= (*f[k] = calloc(n + 8, sizeof(float))) != NULL;
    g->id = malloc(n * sizeof *g->id);
    g->nid = malloc(n * sizeof *g->nid);
    g->step = moving ? malloc(3 * n * sizeof *g->step) : NULL;
    g->key = malloc(n * sizeof *g->key);
    g->hist = malloc(t * c * sizeof *g->hist);
    g->start = malloc((c + 1) * sizeof *g->start);
    g->count = malloc(n * sizeof *g->count);
    g->sum = malloc(3 * n * sizeof *g->sum);
    g->block_total = malloc(t * sizeof *g->block_total);
    if (!ok || !g->id || !g->nid || (moving && !g->step) || !g->key || !g->hist || !g->start ||
        !g->count || !g->sum || !g->block_total) {
        bl_free(g);
        return 1;
    }
    for (size_t i = 0; i < n; i++) {
        const float *p = rows + i * stride;
        g->x[i] = p[0];
        g->y[i] = p[1];
        g->z[i] = p[2];
        g->id[i] = (uint32_t)i;
        if (moving) {
            /* 4% of the radius a pass in a direction of the point's own */
            rng r = rng_stream(0x6261736cu, i);
            float d[3];
            rng_in_ball(&r, 1.0f, d);
            float len = sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
            for (int k = 0; k < 3; k++)
                g->step[3 * i + k] = len > 0 ? 0.04f * radius * d[k] / len : 0.0f;
        }
    }
    return 0;
}

int baseline_grid_avx2_available(void)
{
#if BL_X86
    return cpu_has_avx2() && __builtin_cpu_supports("fma");
#else
    return 0;
#endif
}

/* One timed sort (then cur is in cell order) and one timed neighbour pass. */
static void bl_step(bl_grid *g, double *sort_ms, double *pass_ms)
{
    uint64_t t0 = timer_now_ns();
    parallel_region_n(sort_region, g, g->threads);
    float *tf;
    tf = g->x, g->x = g->nx, g->nx = tf;
    tf = g->y, g->y = g->ny, g->ny = tf;
    tf = g->z, g->z = g->nz, g->nz = tf;
    uint32_t *tu = g->id;
    g->id = g->nid, g->nid = tu;
    g->counter.next = 0;
    uint64_t t1 = timer_now_ns();
    parallel_region_n(pass_region, g, g->threads);
    uint64_t t2 = timer_now_ns();
    *sort_ms = (double)(t1 - t0) * 1e-6;
    *pass_ms = (double)(t2 - t1) * 1e-6;
}

int baseline_grid_neighbours(const float *rows, size_t stride, size_t n, const float lo[3],
                             const float size[3], float radius, int threads, int allow_avx2,
                             int moves, uint32_t *count, float *sum, float *moved)
{
    bl_grid g;
    if (moves < 0 || bl_init(&g, rows, stride, n, lo, size, radius, threads, allow_avx2, moves > 0))
        return 1;
    double a, b;
    bl_step(&g, &a, &b);
    for (int k = 0; k < moves; k++) {
        parallel_for_n((int64_t)n, 16384, move_range, &g, g.threads);
        bl_step(&g, &a, &b);
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t r = g.id[i];
        count[r] = g.count[i];
        for (int k = 0; k < 3; k++)
            sum[3 * (size_t)r + k] = g.sum[3 * i + k];
        if (moved) {
            moved[3 * (size_t)r] = g.x[i];
            moved[3 * (size_t)r + 1] = g.y[i];
            moved[3 * (size_t)r + 2] = g.z[i];
        }
    }
    bl_free(&g);
    return 0;
}

int baseline_grid_time(const float *rows, size_t stride, size_t n, const float lo[3],
                       const float size[3], float radius, int threads, int reps,
                       baseline_result *out)
{
    memset(out, 0, sizeof *out);
    bl_grid g;
    if (reps < 1 || bl_init(&g, rows, stride, n, lo, size, radius, threads, 1, 1))
        return 1;
    double s, p;
    /* warm-up: page faults, the thread team, and the points into cell order */
    bl_step(&g, &s, &p);
    enum { MAXR = 64 };
    reps = reps > MAXR ? MAXR : reps;
    double tot[MAXR], so[MAXR], pa[MAXR];
    for (int k = 0; k < reps; k++) {
        parallel_for_n((int64_t)n, 16384, move_range, &g, g.threads);
        bl_step(&g, &so[k], &pa[k]);
        tot[k] = so[k] + pa[k];
    }
    double neigh = 0;
    for (size_t i = 0; i < n; i++)
        neigh += g.count[i];
    out->median_ms = shoal_profile_median(tot, (size_t)reps);
    out->sort_ms = shoal_profile_median(so, (size_t)reps);
    out->pass_ms = shoal_profile_median(pa, (size_t)reps);
    out->mean_neighbours = neigh / (double)n;
    out->avx2 = g.avx2;
    out->threads = g.threads;
    bl_free(&g);
    return 0;
}

float baseline_grid_radius(double density, double neighbours)
{
    /* neighbours = density * 4/3 pi r^3 */
    return (float)cbrt(neighbours * 3.0 / (4.0 * 3.14159265358979323846 * density));
}
