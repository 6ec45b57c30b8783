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

#endif
