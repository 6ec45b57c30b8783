/* SPDX-License-Identifier: MIT */
/* bench_sort: why the grid uses a counting sort. On the cell keys of 2^20 boids (uniform in
 * a box of side 128, density 0.5, steer's cell size 2), times
 *   - shoal's parallel stable counting sort: the real grid code (sim_sort_only: assign keys,
 *     per-block histograms, scan, stable scatter of all six state arrays and the rows);
 *   - an OpenMP bitonic sort of (key << 32 | row) pairs, padded to a power of two (the
 *     method of seed 004, the vector-field avoidance post, which reports it 1.2x faster
 *     than std::sort at 2^20 on 6 cores);
 *   - qsort of the same pairs (one thread).
 * The pair sorts only order 8-byte pairs: they do not compute keys nor move the state, so
 * the comparison flatters them. Median of repeats, on 1 and 2 (or --threads) threads.
 * Then the sort as a step sees it (issue 40: the state arrives in the last step's cell order,
 * a few boids changed cells): two simulations of the same school stepped in turn, one
 * scattering through the staged non-temporal lines (the default from 2^19 boids), one slot
 * by slot; the
 * medians of their assign, scan and scatter stages over --steps steps, and a check that both
 * hold the same bytes at the end.
 * Usage: bench_sort [--count N] [--repeat K] [--threads T,T,...] [--steps S] [--steady-only] */
#include "core/parallel.h"
#include "core/profile.h"
#include "core/timer.h"
#include "sim/sim_internal.h"
#include "support/scenes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- bitonic sort over parallel.h (one region, a barrier between stages) ---------------- */

typedef struct bitonic_ctx {
    uint64_t *a;
    int64_t n; /* a power of two */
} bitonic_ctx;

static void bitonic_body(void *p, int t, int nt)
{
    bitonic_ctx *c = p;
    uint64_t *a = c->a;
    const int64_t half = c->n / 2;
    int64_t b, e;
    parallel_split(half, t, nt, &b, &e);
    for (int64_t k = 2; k <= c->n; k <<= 1) {
        for (int64_t j = k >> 1; j > 0; j >>= 1) {
            /* comparator q joins i = (q / j) * 2j + q % j with i + j; ascending when
             * (i & k) == 0: the classic network, n/2 independent comparators a stage */
            for (int64_t q = b; q < e; q++) {
                int64_t i = (q / j) * 2 * j + (q % j), l = i + j;
                uint64_t x = a[i], y = a[l];
                int up = (i & k) == 0;
                if ((x > y) == up) {
                    a[i] = y;
                    a[l] = x;
                }
            }
            parallel_barrier();
        }
    }
}

static void bitonic_sort(uint64_t *a, int64_t n)
{
    bitonic_ctx c = {a, n};
    parallel_region(bitonic_body, &c);
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

static double median_of(double *v, int n) { return prof_median(v, (size_t)n); }

/* The sort inside steps: variant 0 scatters slot by slot, variant 1 staged (sort_staged);
 * stepped in turn from the same state, per-step stage times from the sims' own stage clocks
 * (thread 0's wall time up to each stage's barrier). Returns 0 when both end bit-identical. */
static int steady(const float *rows, size_t count, double side, int threads, int steps)
{
    shoal_sim *s[2];
    shoal_error e;
    for (int v = 0; v < 2; v++) {
        shoal_sim_desc d = shoal_sim_desc_default();
        d.boid_count = count;
        d.thread_count = threads;
        for (int c = 0; c < 3; c++)
            d.params.wall_size[c] = (float)side;
        if (shoal_sim_create(&d, &s[v], &e) || shoal_sim_set_rows(s[v], rows, count, &e) ||
            shoal_sim_step(s[v], 2, &e)) { /* warm-up: into cell order, cells_valid */
            fprintf(stderr, "bench_sort: %s\n", e.message);
            return 1;
        }
        s[v]->sort_staged = 2 * v; /* never, always */
    }
    double *ms = malloc((size_t)steps * 2 * 4 * sizeof *ms); /* [v][stage][step] */
    if (!ms)
        return 1;
    for (int k = 0; k < steps; k++)
        for (int v = 0; v < 2; v++) {
            uint64_t before[STAGE_COUNT];
            memcpy(before, s[v]->stage_ns, sizeof before);
            if (shoal_sim_step(s[v], 1, &e)) {
                fprintf(stderr, "bench_sort: %s\n", e.message);
                return 1;
            }
            double sum = 0;
            for (int st = 0; st < 3; st++) {
                double t = (double)(s[v]->stage_ns[st] - before[st]) * 1e-6;
                ms[((size_t)v * 4 + (size_t)st) * (size_t)steps + (size_t)k] = t;
                sum += t;
            }
            ms[((size_t)v * 4 + 3) * (size_t)steps + (size_t)k] = sum;
        }
    static const char *vn[2] = {"slot by slot", "staged lines"};
    for (int v = 0; v < 2; v++) {
        double med[4];
        for (int st = 0; st < 4; st++)
            med[st] = median_of(ms + ((size_t)v * 4 + (size_t)st) * (size_t)steps, steps);
        printf("steady %-27s %8d %10.3f %10.3f %10.3f %10.3f\n", vn[v], threads, med[3], med[0],
               med[1], med[2]);
    }
    int same = 1;
    for (int k = 0; k < 6; k++)
        same &= memcmp(s[0]->cur[k], s[1]->cur[k], count * sizeof(float)) == 0;
    same &= memcmp(s[0]->row_cur, s[1]->row_cur, count * sizeof(uint32_t)) == 0;
    free(ms);
    shoal_sim_destroy(s[0]);
    shoal_sim_destroy(s[1]);
    if (!same)
        printf("# steady: the two scatters' states DIFFER\n");
    return same ? 0 : 1;
}

int main(int argc, char **argv)
{
    size_t count = (size_t)1 << 20;
    int repeat = 9;
    int thread_list[16] = {1, 2}, thread_n = 2;
    int steps = 20, steady_only = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--count") == 0 && i + 1 < argc)
            count = (size_t)strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
            repeat = atoi(argv[++i]);
        else if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc)
            steps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--steady-only") == 0)
            steady_only = 1;
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            thread_n = 0;
            for (char *s = strtok(argv[++i], ","); s && thread_n < 16; s = strtok(NULL, ","))
                thread_list[thread_n++] = atoi(s);
        } else {
            fprintf(stderr, "usage: bench_sort [--count N] [--repeat K] [--threads T,T,...] "
                            "[--steps S] [--steady-only]\n");
            return 2;
        }
    }
    if (repeat < 1 || repeat > 1000 || count < 2 || steps < 1 || steps > 100000) {
        fprintf(stderr, "bench_sort: bad --repeat, --count or --steps\n");
        return 2;
    }
    /* density 0.5: side = (2 N)^(1/3); 128 for 2^20 */
    double side = 1;
    while (side * side * side < 2.0 * (double)count)
        side += 1;
    float *rows = scene_uniform(count, (float)(side / 2), 1.0f, 42);
    int64_t pow2 = 1;
    while (pow2 < (int64_t)count)
        pow2 <<= 1;
    uint64_t *keys = malloc((size_t)pow2 * 8), *work = malloc((size_t)pow2 * 8);
    double *ms = malloc((size_t)repeat * sizeof(double));
    if (!rows || !keys || !work || !ms) {
        fprintf(stderr, "bench_sort: out of memory\n");
        return 1;
    }
    printf("# bench_sort: %zu boids uniform in a box of side %.0f (density %.2f), steer cell "
           "size 2; median of %d repeats (ms)\n",
           count, side, (double)count / (side * side * side), repeat);
    int steady_ok = 0;
    printf("# the sort inside steps, median of %d steps each (ms): sum of the stages, assign, "
           "scan, scatter\n",
           steps);
    printf("%-34s %8s %10s %10s %10s %10s\n", "steady scatter", "threads", "sort", "assign", "scan",
           "scatter");
    for (int ti = 0; ti < thread_n; ti++)
        steady_ok += steady(rows, count, side, thread_list[ti], steps) == 0;
    if (steady_only) {
        free(rows);
        free(keys);
        free(work);
        free(ms);
        return steady_ok == thread_n ? 0 : 1;
    }
    printf("# a fresh state in row order each repeat\n");
    printf("%-34s %8s %10s %10s %10s\n", "sort", "threads", "median", "min", "max");

    int checked = 0;
    for (int ti = 0; ti < thread_n; ti++) {
        int threads = thread_list[ti];
        shoal_sim_desc d = shoal_sim_desc_default();
        d.boid_count = count;
        d.thread_count = threads;
        for (int c = 0; c < 3; c++)
            d.params.wall_size[c] = (float)side;
        shoal_error e;
        shoal_sim *s;
        if (shoal_sim_create(&d, &s, &e)) {
            fprintf(stderr, "bench_sort: %s\n", e.message);
            return 1;
        }
        /* counting sort: fresh (unsorted) state each repeat, as a step sees after motion */
        prof_reset(s->prof);
        for (int r = 0; r < repeat + 1; r++) {
            shoal_sim_set_rows(s, rows, count, &e);
            uint64_t t0 = timer_now_ns();
            sim_sort_only(s);
            double t = (double)(timer_now_ns() - t0) * 1e-6;
            if (r > 0)
                ms[r - 1] = t; /* the first is a warm-up (page faults) */
        }
        double mn = ms[0], mx = ms[0];
        for (int r = 0; r < repeat; r++) {
            mn = ms[r] < mn ? ms[r] : mn;
            mx = ms[r] > mx ? ms[r] : mx;
        }
        printf("%-34s %8d %10.3f %10.3f %10.3f\n", "shoal counting sort (+keys, gather)", threads,
               median_of(ms, repeat), mn, mx);
        prof_summary sum[PROF_MAX_STAGES];
        int ns = prof_summaries(s->prof, sum, PROF_MAX_STAGES);
        for (int k = 0; k < ns; k++)
            printf("  %-32s %8d %10.3f %10.3f %10.3f\n", sum[k].name, threads, sum[k].median_ms,
                   sum[k].min_ms, sum[k].max_ms);

        /* the keys of input order: cell_of after a sort of the fresh state */
        shoal_sim_set_rows(s, rows, count, &e);
        sim_sort_only(s);
        for (size_t i = 0; i < count; i++)
            keys[i] = (uint64_t)s->cell_of[i] << 32 | (uint64_t)i;
        for (int64_t i = (int64_t)count; i < pow2; i++)
            keys[i] = UINT64_MAX; /* padding sorts to the end */

        parallel_set_threads(threads);
        for (int r = 0; r < repeat + 1; r++) {
            memcpy(work, keys, (size_t)pow2 * 8);
            uint64_t t0 = timer_now_ns();
            bitonic_sort(work, pow2);
            double t = (double)(timer_now_ns() - t0) * 1e-6;
            if (r > 0)
                ms[r - 1] = t;
        }
        /* check: the pairs' rows in sorted order are the counting sort's row order */
        int ok = 1;
        for (size_t i = 0; i < count && ok; i++)
            ok = (uint32_t)work[i] == s->row_cur[i] &&
                 (uint32_t)(work[i] >> 32) == grid_cell_of_slot(s, (uint32_t)i);
        checked += ok;
        mn = ms[0], mx = ms[0];
        for (int r = 0; r < repeat; r++) {
            mn = ms[r] < mn ? ms[r] : mn;
            mx = ms[r] > mx ? ms[r] : mx;
        }
        printf("%-34s %8d %10.3f %10.3f %10.3f%s\n", "OpenMP bitonic (pairs only)", threads,
               median_of(ms, repeat), mn, mx, ok ? "" : "  MISMATCH");
        shoal_sim_destroy(s);
    }

    /* qsort: one thread, fewer repeats (it is the slowest) */
    int qrep = repeat < 5 ? repeat : 5;
    for (int r = 0; r < qrep; r++) {
        memcpy(work, keys, count * 8);
        uint64_t t0 = timer_now_ns();
        qsort(work, count, 8, cmp_u64);
        ms[r] = (double)(timer_now_ns() - t0) * 1e-6;
    }
    double mn = ms[0], mx = ms[0];
    for (int r = 0; r < qrep; r++) {
        mn = ms[r] < mn ? ms[r] : mn;
        mx = ms[r] > mx ? ms[r] : mx;
    }
    printf("%-34s %8d %10.3f %10.3f %10.3f\n", "qsort (pairs only)", 1, median_of(ms, qrep), mn,
           mx);
    printf("# bitonic result equal to the counting sort's order: %d of %d thread counts\n", checked,
           thread_n);
    free(rows);
    free(keys);
    free(work);
    free(ms);
    return checked == thread_n && steady_ok == thread_n ? 0 : 1;
}
