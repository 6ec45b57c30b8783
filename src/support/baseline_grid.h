/* SPDX-License-Identifier: MIT */
/* The baseline grid (baseline_grid.c): what `shoal bench` measures shoal's step against
 * (docs/BENCH.md, "Baseline"); tools/baseline_grid.c runs it on its own. */
#ifndef SHOAL_SUPPORT_BASELINE_GRID_H
#define SHOAL_SUPPORT_BASELINE_GRID_H

#include <stddef.h>
#include <stdint.h>

typedef struct baseline_result {
    double median_ms;        /* one pass: sort + neighbour pass, median of the repeats */
    double sort_ms, pass_ms; /* their own medians */
    double mean_neighbours;  /* per point, within the radius, itself excluded */
    int avx2;                /* 1: the AVX2 pass ran, 0: the scalar one */
    int threads;
} baseline_result;

/** Radius giving `neighbours` points on average at `density` points per unit volume. */
float baseline_grid_radius(double density, double neighbours);

/** Time `reps` passes over n points (x, y, z at the start of every `stride` floats) in the
 *  box [lo, lo + size) with cells of side `radius`; points outside count in the edge cells.
 *  A pass is a sort of the points (kept in the last pass's cell order) and the neighbour
 *  pass; between passes every point moves 4% of `radius` along a direction of its own
 *  (reflected at the box), untimed. `threads` <= 0: the process default. 0 on success, 1 if
 *  the grid cannot be built (allocation, radius <= 0, too many cells). */
int baseline_grid_time(const float *rows, size_t stride, size_t n, const float lo[3],
                       const float size[3], float radius, int threads, int reps,
                       baseline_result *out);

/** 1 when this CPU runs the AVX2 pass (AVX2 and FMA): its squared distance is
 *  fmaf(dz, dz, fmaf(dy, dy, dx * dx)), the scalar pass's (dx * dx + dy * dy) + dz * dz. */
int baseline_grid_avx2_available(void);

/** One pass, after `moves` (>= 0) untimed moves each followed by a pass, as baseline_grid_time
 *  does them; per input row: the number of other points within `radius` and the sum of their
 *  positions (count[n], sum[3n]), and where the point is (moved[3n], unless NULL).
 *  allow_avx2 = 0 forces the scalar pass. 0 on success. */
int baseline_grid_neighbours(const float *rows, size_t stride, size_t n, const float lo[3],
                             const float size[3], float radius, int threads, int allow_avx2,
                             int moves, uint32_t *count, float *sum, float *moved);

#endif
