/* SPDX-License-Identifier: MIT */
/* Seeded scene builders shared by tests and benchmarks (see scenes.c). Every builder
 * returns malloc'ed rows of (px py pz vx vy vz), or NULL when out of memory. */
#ifndef SHOAL_TESTS_SCENES_H
#define SHOAL_TESTS_SCENES_H

#include <stddef.h>
#include <stdint.h>

float *scene_uniform(size_t count, float half_extent, float speed, uint64_t seed);
float *scene_clustered(size_t count, int clusters, float spread, float half_extent, float speed,
                       uint64_t seed);
void scene_add_outliers(float *rows, size_t count, uint64_t seed);
uint64_t state_hash(const float *rows, size_t count);
/* The renderer's benchmark scene (`shoal render --bench`, tools/bench_llvmpipe): fish uniform
 * in x [-50, 50], y [-28, 28], z [-50, 50], random directions, speeds in [0.5, 1.5]. */
float *scene_render_bench(size_t n, uint64_t seed);

/* A test that could not check part of what it should (an ISA this CPU lacks, a missing
 * tool or input) calls test_skip_part with the reason; test_exit then turns a passing
 * run into exit 77, which meson reports as SKIP, never OK. */
void test_skip_part(const char *fmt, ...);
int test_exit(int failed);

#endif
