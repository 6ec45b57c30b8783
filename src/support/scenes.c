/* SPDX-License-Identifier: MIT */
/* Seeded scene builders shared by the tests, the benchmarks and `shoal render --bench`:
 * random states in a box, clustered states, boids outside the bounds, coincident boids, the
 * render benchmark's school. Every row draws from its own counter-based stream (core/rng.h),
 * so a scene is the same on every machine and for any thread count. */
#include "support/scenes.h"

#include "core/rng.h"

#include <stdlib.h>
#include <string.h>

float *scene_uniform(size_t count, float half_extent, float speed, uint64_t seed)
{
    float *rows = malloc(count * 6 * sizeof(float));
    if (!rows)
        return NULL;
    for (size_t i = 0; i < count; i++) {
        rng r = rng_stream(seed, i);
        for (int c = 0; c < 3; c++)
            rows[i * 6 + (size_t)c] = rng_range(&r, -half_extent, half_extent);
        for (int c = 0; c < 3; c++)
            rows[i * 6 + 3 + (size_t)c] = rng_range(&r, -speed, speed);
    }
    return rows;
}

float *scene_clustered(size_t count, int clusters, float spread, float half_extent, float speed,
                       uint64_t seed)
{
    float *rows = scene_uniform(count, half_extent, speed, seed);
    if (!rows)
        return NULL;
    float centre[64][3];
    if (clusters > 64)
        clusters = 64;
    rng r = rng_stream(seed ^ 0xc1u, 0);
    for (int k = 0; k < clusters; k++)
        for (int c = 0; c < 3; c++)
            centre[k][c] = rng_range(&r, -half_extent * 0.7f, half_extent * 0.7f);
    for (size_t i = 0; i < count; i++) {
        rng b = rng_stream(seed ^ 0xc2u, i);
        int k = (int)(rng_next(&b) % (uint64_t)clusters);
        float p[3];
        rng_in_ball(&b, spread, p);
        for (int c = 0; c < 3; c++)
            rows[i * 6 + (size_t)c] = centre[k][c] + p[c];
    }
    return rows;
}

void scene_add_outliers(float *rows, size_t count, uint64_t seed)
{
    /* a few boids far outside any grid, and some exact duplicates of others */
    if (count < 8)
        return;
    rows[0 * 6 + 0] = 1e6f;
    rows[1 * 6 + 1] = -1e6f;
    rows[2 * 6 + 2] = 500.0f;
    rows[3 * 6 + 0] = 500.0f;
    rows[3 * 6 + 1] = 500.0f;
    rows[3 * 6 + 2] = 500.0f;
    rows[4 * 6 + 0] = 500.5f;
    rows[4 * 6 + 1] = 500.0f;
    rows[4 * 6 + 2] = 500.0f;
    rng r = rng_stream(seed ^ 0xd0u, 0);
    for (int k = 0; k < 4; k++) {
        size_t a = 5 + (size_t)(rng_next(&r) % (count - 5));
        size_t b = 5 + (size_t)(rng_next(&r) % (count - 5));
        memcpy(rows + a * 6, rows + b * 6, 3 * sizeof(float));
    }
}

uint64_t state_hash(const float *rows, size_t count)
{
    /* FNV-1a over the bytes of the state */
    uint64_t h = 1469598103934665603ull;
    const unsigned char *p = (const unsigned char *)rows;
    for (size_t i = 0; i < count * 6 * sizeof(float); i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

float *scene_render_bench(size_t count, uint64_t seed)
{
    float *rows = malloc((count ? count : 1) * 6 * sizeof(float));
    if (!rows)
        return NULL;
    for (size_t i = 0; i < count; i++) {
        rng r = rng_stream(seed, i);
        float *row = rows + 6 * i;
        row[0] = rng_range(&r, -50.0f, 50.0f);
        row[1] = rng_range(&r, -28.0f, 28.0f);
        row[2] = rng_range(&r, -50.0f, 50.0f);
        float d[3];
        rng_direction(&r, d);
        float s = rng_range(&r, 0.5f, 1.5f);
        row[3] = d[0] * s;
        row[4] = d[1] * s;
        row[5] = d[2] * s;
    }
    return rows;
}
