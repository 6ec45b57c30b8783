/* SPDX-License-Identifier: MIT */
/* baseline_grid: the yardstick of `shoal bench`'s ratio on its own (the grid is in the
 * support library, src/support/baseline_grid.c): N points uniform at density 0.5, 30
 * neighbours each on average. Usage: baseline_grid [N [THREADS [REPS]]]. */
#include "support/baseline_grid.h"

#include "core/rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 1000000;
    int threads = argc > 2 ? atoi(argv[2]) : 0;
    int reps = argc > 3 ? atoi(argv[3]) : 11;
    if (n == 0 || reps < 1) {
        fprintf(stderr, "usage: baseline_grid [N [THREADS [REPS]]]\n");
        return 2;
    }
    /* uniform box at density 0.5, 30 neighbours per point on average */
    float side = (float)cbrt(2.0 * (double)n);
    float *rows = malloc(n * 3 * sizeof *rows);
    if (!rows) {
        fprintf(stderr, "baseline_grid: out of memory for %zu points\n", n);
        return 2;
    }
    for (size_t i = 0; i < n; i++) {
        rng r = rng_stream(7, i);
        for (int k = 0; k < 3; k++)
            rows[3 * i + k] = rng_range(&r, -side / 2, side / 2);
    }
    float lo[3] = {-side / 2, -side / 2, -side / 2}, size[3] = {side, side, side};
    baseline_result res;
    if (baseline_grid_time(rows, 3, n, lo, size, baseline_grid_radius(0.5, 30), threads, reps,
                           &res)) {
        fprintf(stderr, "baseline_grid: cannot build the grid\n");
        free(rows);
        return 1;
    }
    printf("baseline_grid: %zu points, %d threads, %s: %.3f ms (sort %.3f, pass %.3f), "
           "%.1f neighbours per point\n",
           n, res.threads, res.avx2 ? "avx2" : "scalar", res.median_ms, res.sort_ms, res.pass_ms,
           res.mean_neighbours);
    free(rows);
    return 0;
}
