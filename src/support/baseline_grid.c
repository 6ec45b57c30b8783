/* SPDX-License-Identifier: MIT */
/* baseline_grid: the yardstick `shoal bench` divides shoal's step time by (issue 18). A
 * plain uniform-grid neighbour pass, written the way anyone would write it without shoal's
 * constraints: a stable counting sort of the positions by cell (per-thread histograms over
 * contiguous blocks, a scan, a scatter of x, y, z and the row id into SoA arrays), then for
 * every sorted point the 27 cells around it as 9 contiguous x-runs, counting the points
 * within `radius` and summing their positions. No forces, no integration, no fixed summation
 * order: the AVX2 path tests 8 candidates per instruction against one point (candidates as
 * lanes, the fastest layout for this job) and sums in whatever order the lanes give.
 *
 * So the ratio shoal_step / baseline says how close shoal's full step (sort + five-rule
 * forces in a canonical order + integrate) comes to the cost of merely finding and touching
 * the same number of neighbours. In the support library: `shoal bench` calls it, and
 * tools/baseline_grid.c is the program `baseline_grid` around it. */
#include "support/baseline_grid.h"

#include "core/cpu.h"
#include "core/parallel.h"
#include "core/timer.h"
#include "shoal/profile.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct bl_grid {
    size_t n;
    int threads;
    int avx2;
    float lo[3], inv_cell, r2;
    int32_t dims[3];
    int64_t cells;
    const float *rows;
    size_t stride;
    uint32_t *key;        /* cell of each input row */
    uint32_t *hist;       /* threads x cells, then their offsets */
    uint32_t *start;      /* cells + 1 */
    float *x, *y, *z;     /* sorted SoA */
    uint32_t *id;         /* sorted -> input row */
    uint32_t *count;      /* per sorted point */
    float *sum;           /* per sorted point, 3 */
    int64_t *block_total; /* per thread: points in its cell range */
    parallel_counter counter;
} bl_grid;

static int32_t cell_coord(float v, float lo, float inv, int32_t dim)
{
    float c = (v - lo) * inv;
    if (!(c >= 0.0f)) /* below, or NaN */
        return 0;
    if (c >= (float)dim)
        return dim - 1;
    return (int32_t)c;
}

static void assign_hist(void *ctx, int t, int nt)
{
    bl_grid *g = ctx;
    int64_t b, e;
    parallel_split((int64_t)g->n, t, nt, &b, &e);
    uint32_t *h = g->hist + (size_t)t * (size_t)g->cells;
    memset(h, 0, (size_t)g->cells * sizeof *h);
    for (int64_t i = b; i < e; i++) {
        const float *p = g->rows + (size_t)i * g->stride;
        int32_t cx = cell_coord(p[0], g->lo[0], g->inv_cell, g->dims[0]);
        int32_t cy = cell_coord(p[1], g->lo[1], g->inv_cell, g->dims[1]);
        int32_t cz = cell_coord(p[2], g->lo[2], g->inv_cell, g->dims[2]);
        uint32_t k = (uint32_t)(((int64_t)cz * g->dims[1] + cy) * g->dims[0] + cx);
        g->key[i] = k;
        h[k]++;
    }
    parallel_barrier();
    /* scan over (cell, thread): each thread owns a range of cells */
    int64_t cb, ce;
    parallel_split(g->cells, t, nt, &cb, &ce);
    int64_t total = 0;
    for (int64_t c = cb; c < ce; c++)
        for (int k = 0; k < nt; k++)
            total += g->hist[(size_t)k * (size_t)g->cells + (size_t)c];
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
    /* scatter, stable: thread t's block of rows goes to its own offsets */
    for (int64_t i = b; i < e; i++) {
        uint32_t d = h[g->key[i]]++;
        const float *p = g->rows + (size_t)i * g->stride;
        g->x[d] = p[0];
        g->y[d] = p[1];
        g->z[d] = p[2];
        g->id[d] = (uint32_t)i;
    }
    if (t == 0)
        g->counter.next = 0;
    parallel_barrier();
}

/* the 9 x-runs around the cell of sorted point i: [rb, re) each */
static int runs_of(const bl_grid *g, uint32_t i, uint32_t *rb, uint32_t *re)
{
    uint32_t k = g->key[g->id[i]];
    int32_t nx = g->dims[0], ny = g->dims[1], nz = g->dims[2];
    int32_t cx = (int32_t)(k % (uint32_t)nx), cy = (int32_t)((k / (uint32_t)nx) % (uint32_t)ny),
            cz = (int32_t)(k / ((uint32_t)nx * (uint32_t)ny));
    int32_t x0 = cx > 0 ? cx - 1 : 0, x1 = cx < nx - 1 ? cx + 1 : nx - 1;
    int runs = 0;
    for (int32_t z = cz - 1; z <= cz + 1; z++)
        for (int32_t y = cy - 1; y <= cy + 1; y++) {
            if (z < 0 || z >= nz || y < 0 || y >= ny)
                continue;
            int64_t row = ((int64_t)z * ny + y) * nx;
            rb[runs] = g->start[row + x0];
            re[runs] = g->start[row + x1 + 1];
            runs++;
        }
    return runs;
}

static void pass_scalar(bl_grid *g, int64_t b, int64_t e)
{
    for (int64_t i = b; i < e; i++) {
        uint32_t rb[9], re[9];
        int runs = runs_of(g, (uint32_t)i, rb, re);
        float px = g->x[i], py = g->y[i], pz = g->z[i];
        uint32_t cnt = 0;
        float sx = 0, sy = 0, sz = 0;
        for (int r = 0; r < runs; r++)
            for (uint32_t j = rb[r]; j < re[r]; j++) {
                float dx = g->x[j] - px, dy = g->y[j] - py, dz = g->z[j] - pz;
                if (dx * dx + dy * dy + dz * dz <= g->r2 && j != (uint32_t)i) {
                    cnt++;
                    sx += g->x[j];
                    sy += g->y[j];
                    sz += g->z[j];
                }
            }
        g->count[i] = cnt;
        g->sum[3 * i] = sx;
        g->sum[3 * i + 1] = sy;
        g->sum[3 * i + 2] = sz;
    }
}

#if defined(__x86_64__)
__attribute__((target("avx2"))) static float hsum8(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}

__attribute__((target("avx2"))) static void pass_avx2(bl_grid *g, int64_t b, int64_t e)
{
    const __m256 r2 = _mm256_set1_ps(g->r2);
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (int64_t i = b; i < e; i++) {
        uint32_t rb[9], re[9];
        int runs = runs_of(g, (uint32_t)i, rb, re);
        __m256 px = _mm256_set1_ps(g->x[i]), py = _mm256_set1_ps(g->y[i]),
               pz = _mm256_set1_ps(g->z[i]);
        __m256 sx = _mm256_setzero_ps(), sy = sx, sz = sx;
        uint32_t cnt = 0;
        for (int r = 0; r < runs; r++) {
            uint32_t j = rb[r];
            for (; j < re[r]; j += 8) {
                uint32_t left = re[r] - j;
                __m256 live = _mm256_castsi256_ps(
                    _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(left < 8 ? left : 8)), iota));
                /* whole vectors (the arrays have 8 floats of padding); lanes past the run
                 * are dropped by `live` */
                __m256 qx = _mm256_loadu_ps(g->x + j);
                __m256 qy = _mm256_loadu_ps(g->y + j);
                __m256 qz = _mm256_loadu_ps(g->z + j);
                __m256 dx = _mm256_sub_ps(qx, px), dy = _mm256_sub_ps(qy, py),
                       dz = _mm256_sub_ps(qz, pz);
                __m256 d2 =
                    _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(dx, dx), _mm256_mul_ps(dy, dy)),
                                  _mm256_mul_ps(dz, dz));
                __m256 m = _mm256_and_ps(live, _mm256_cmp_ps(d2, r2, _CMP_LE_OQ));
                cnt += (uint32_t)__builtin_popcount((unsigned)_mm256_movemask_ps(m));
                sx = _mm256_add_ps(sx, _mm256_and_ps(m, qx));
                sy = _mm256_add_ps(sy, _mm256_and_ps(m, qy));
                sz = _mm256_add_ps(sz, _mm256_and_ps(m, qz));
            }
        }
        /* the point itself was counted (d2 = 0) */
        g->count[i] = cnt - 1;
        g->sum[3 * i] = hsum8(sx) - g->x[i];
        g->sum[3 * i + 1] = hsum8(sy) - g->y[i];
        g->sum[3 * i + 2] = hsum8(sz) - g->z[i];
    }
}

#endif

static void pass_region(void *ctx, int t, int nt)
{
    (void)t;
    (void)nt;
    bl_grid *g = ctx;
    int64_t b, e;
    while (parallel_dynamic_next(&g->counter, (int64_t)g->n, 1024, &b, &e)) {
#if defined(__x86_64__)
        if (g->avx2) {
            pass_avx2(g, b, e);
            continue;
        }
#endif
        pass_scalar(g, b, e);
    }
}

static void bl_free(bl_grid *g)
{
    free(g->key);
    free(g->hist);
    free(g->start);
    free(g->x);
    free(g->y);
    free(g->z);
    free(g->id);
    free(g->count);
    free(g->sum);
    free(g->block_total);
}

static int bl_init(bl_grid *g, const float *rows, size_t stride, size_t n, const float lo[3],
                   const float size[3], float radius, int threads, int allow_avx2)
{
    memset(g, 0, sizeof *g);
    if (!(radius > 0) || n == 0 || n > UINT32_MAX - 1)
        return 1;
    g->n = n;
    g->rows = rows;
    g->stride = stride;
    g->threads = parallel_resolve_threads(threads);
    g->avx2 = allow_avx2 && cpu_has_avx2();
    g->inv_cell = 1.0f / radius;
    g->r2 = radius * radius;
    g->cells = 1;
    for (int k = 0; k < 3; k++) {
        g->lo[k] = lo[k];
        double d = ceil((double)size[k] / radius);
        g->dims[k] = d < 1 ? 1 : d > 4096 ? 4096 : (int32_t)d;
        g->cells *= g->dims[k];
    }
    if (g->cells > (int64_t)1 << 28)
        return 1;
    size_t c = (size_t)g->cells, t = (size_t)g->threads;
    g->key = malloc(n * sizeof *g->key);
    g->hist = malloc(t * c * sizeof *g->hist);
    g->start = malloc((c + 1) * sizeof *g->start);
    g->x = calloc(n + 8, sizeof *g->x); /* 8 more: whole vectors past a run */
    g->y = calloc(n + 8, sizeof *g->y); /* 8 more: whole vectors past a run */
    g->z = calloc(n + 8, sizeof *g->z); /* 8 more: whole vectors past a run */
    g->id = malloc(n * sizeof *g->id);
    g->count = malloc(n * sizeof *g->count);
    g->sum = malloc(3 * n * sizeof *g->sum);
    g->block_total = malloc(t * sizeof *g->block_total);
    if (!g->key || !g->hist || !g->start || !g->x || !g->y || !g->z || !g->id || !g->count ||
        !g->sum || !g->block_total) {
        bl_free(g);
        return 1;
    }
    return 0;
}

static void bl_step(bl_grid *g, double *sort_ms, double *pass_ms)
{
    uint64_t t0 = timer_now_ns();
    parallel_region_n(assign_hist, g, g->threads);
    uint64_t t1 = timer_now_ns();
    parallel_region_n(pass_region, g, g->threads);
    uint64_t t2 = timer_now_ns();
    *sort_ms = (double)(t1 - t0) * 1e-6;
    *pass_ms = (double)(t2 - t1) * 1e-6;
}

int baseline_grid_neighbours(const float *rows, size_t stride, size_t n, const float lo[3],
                             const float size[3], float radius, int threads, int allow_avx2,
                             uint32_t *count, float *sum)
{
    bl_grid g;
    if (bl_init(&g, rows, stride, n, lo, size, radius, threads, allow_avx2))
        return 1;
    double a, b;
    bl_step(&g, &a, &b);
    for (size_t i = 0; i < n; i++) {
        uint32_t r = g.id[i];
        count[r] = g.count[i];
        for (int k = 0; k < 3; k++)
            sum[3 * (size_t)r + k] = g.sum[3 * i + k];
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
    if (reps < 1 || bl_init(&g, rows, stride, n, lo, size, radius, threads, 1))
        return 1;
    double s, p;
    bl_step(&g, &s, &p); /* warm-up: page faults, the thread team */
    enum { MAXR = 64 };
    reps = reps > MAXR ? MAXR : reps;
    double tot[MAXR], so[MAXR], pa[MAXR];
    for (int k = 0; k < reps; k++) {
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
