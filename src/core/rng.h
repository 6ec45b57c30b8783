/* SPDX-License-Identifier: MIT */
/* Counter-based random numbers: a stream is a pure function of (seed, stream id), so
 * every boid draws the same numbers whatever thread draws them, on every machine. */
#ifndef SHOAL_CORE_RNG_H
#define SHOAL_CORE_RNG_H

#include <stdint.h>

typedef struct rng {
    uint64_t state;
} rng;

static inline uint64_t rng_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/** A stream for (seed, id): independent streams for each boid, epoch, ... */
static inline rng rng_stream(uint64_t seed, uint64_t id)
{
    rng r = {rng_mix64(seed * 0x9e3779b97f4a7c15ull + rng_mix64(id + 0x632be59bd9b4e019ull))};
    return r;
}

/** splitmix64 step. */
static inline uint64_t rng_next(rng *r)
{
    r->state += 0x9e3779b97f4a7c15ull;
    return rng_mix64(r->state);
}

/** Uniform float in [0, 1) with 24 random bits (exact on every machine). */
static inline float rng_float01(rng *r)
{
    return (float)(rng_next(r) >> 40) * (1.0f / 16777216.0f);
}

/** Uniform float in [lo, hi). */
static inline float rng_range(rng *r, float lo, float hi)
{
    return lo + (hi - lo) * rng_float01(r);
}

/** Uniform point in the ball of radius `radius` (rejection sampling from the cube). */
static inline void rng_in_ball(rng *r, float radius, float out[3])
{
    for (;;) {
        float x = 2.0f * rng_float01(r) - 1.0f;
        float y = 2.0f * rng_float01(r) - 1.0f;
        float z = 2.0f * rng_float01(r) - 1.0f;
        float d2 = x * x + y * y + z * z;
        if (d2 <= 1.0f) {
            out[0] = x * radius;
            out[1] = y * radius;
            out[2] = z * radius;
            return;
        }
    }
}

/** Uniform direction on the unit sphere (from a ball sample, normalised). */
void rng_direction(rng *r, float out[3]);

#endif
