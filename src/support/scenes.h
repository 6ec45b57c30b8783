/* SPDX-License-Identifier: MIT */
/* Seeded scene builders shared by the tests, the benchmarks (`shoal bench`, tools/) and
 * `shoal render --bench` (see scenes.c). Every builder returns malloc'ed rows of
 * (px py pz vx vy vz), or NULL when out of memory; the same (count, seed) gives the same
 * bits on every machine, and row i does not depend on count. Thread-safe (no state). */
#ifndef SHOAL_SUPPORT_SCENES_H
#define SHOAL_SUPPORT_SCENES_H

#include <stddef.h>
#include <stdint.h>

/* Positions uniform in [-half_extent, half_extent)^3, velocity components in [-speed, speed). */
float *scene_uniform(size_t count, float half_extent, float speed, uint64_t seed);
/* scene_uniform's velocities, positions in `clusters` (<= 64) balls of radius `spread`. */
float *scene_clustered(size_t count, int clusters, float spread, float half_extent, float speed,
                       uint64_t seed);
/* Put a few boids far outside any grid and make some exact duplicates (count >= 8). */
void scene_add_outliers(float *rows, size_t count, uint64_t seed);
/* FNV-1a over the bytes of `count` rows: equal states, equal hashes. */
uint64_t state_hash(const float *rows, size_t count);

/* The render benchmark's school (`shoal render --bench`, `shoal bench`'s render cases,
 * tools/bench_llvmpipe):
 * fish uniform in x [-50, 50], y [-28, 28], z [-50, 50], random directions, speeds in
 * [0.5, 1.5]. count 0 gives a valid one-row buffer. */
float *scene_render_bench(size_t count, uint64_t seed);

#endif
