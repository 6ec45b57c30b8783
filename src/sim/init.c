/* SPDX-License-Identifier: MIT */
/* Initial states and heading's targets, drawn from counter-based streams: boid i's draws
 * are a function of (seed, i) alone, the targets of (seed, epoch) alone, so every machine
 * and thread count gives the same bits. */
#include "core/rng.h"
#include "sim/sim_internal.h"

#include <math.h>

void sim_init_row(shoal_model model, const shoal_params *p, uint64_t seed, size_t i, float row[6])
{
    rng r = rng_stream(seed, (uint64_t)i);
    float dir[3];
    switch (model) {
    case SHOAL_MODEL_STEER:
    case SHOAL_MODEL_AVERAGE:
        /* seeds 003/000: p in the unit ball, v in a small ball */
        rng_in_ball(&r, p->init_pos_radius, row);
        rng_in_ball(&r, p->init_vel_radius, row + 3);
        break;
    case SHOAL_MODEL_HEADING:
        rng_in_ball(&r, p->init_pos_radius, row);
        rng_direction(&r, dir);
        for (int c = 0; c < 3; c++)
            row[3 + c] = dir[c] * p->move_speed;
        break;
    case SHOAL_MODEL_CLASSIC: {
        /* seed 002: uniform in the box (Random.Range per axis), a random rotation and
         * Velocity = transform.forward * 2: speed 2 in a uniform direction, whatever
         * min_speed and max_speed are (the first step clamps it, as the seed's does) */
        for (int c = 0; c < 3; c++)
            row[c] = rng_range(&r, p->box_min[c], p->box_max[c]);
        rng_direction(&r, dir);
        for (int c = 0; c < 3; c++)
            row[3 + c] = dir[c] * 2.0f;
        break;
    }
    default: {
        /* seed 004: p in a ball, v = normalize(uniform cube sample) * min_speed */
        rng_in_ball(&r, p->init_pos_radius, row);
        for (int c = 0; c < 3; c++)
            row[c] += p->boundary_center[c];
        float v[3], d2;
        do {
            for (int c = 0; c < 3; c++)
                v[c] = rng_range(&r, -1.0f, 1.0f);
            d2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
        } while (d2 < 1e-6f);
        float d = sqrtf(d2);
        for (int c = 0; c < 3; c++)
            row[3 + c] = v[c] / d * p->min_speed;
        break;
    }
    }
}

void sim_init_rows(shoal_model model, const shoal_params *p, uint64_t seed, size_t count,
                   float *rows)
{
    for (size_t i = 0; i < count; i++)
        sim_init_row(model, p, seed, i, rows + i * 6);
}

void sim_init_rows_range(shoal_model model, const shoal_params *p, uint64_t seed, size_t first,
                         size_t count, float *rows)
{
    for (size_t i = 0; i < count; i++)
        sim_init_row(model, p, seed, first + i, rows + i * 6);
}

void sim_heading_targets(const shoal_params *p, uint64_t seed, double t_s, float *xyz)
{
    /* The epoch, not the step count, picks the targets: a run split over state files (with
     * --t0) sees the same targets at the same simulated time. */
    double epoch_d = floor(t_s / (double)p->target_period);
    int64_t epoch = (int64_t)epoch_d;
    rng r = rng_stream(seed ^ 0x7461726765747321ull, (uint64_t)epoch);
    int n = (int)p->target_count;
    for (int k = 0; k < n; k++)
        for (int c = 0; c < 3; c++) {
            float lo = p->bounds_center[c] - 0.5f * p->bounds_size[c];
            float hi = p->bounds_center[c] + 0.5f * p->bounds_size[c];
            xyz[k * 3 + c] = rng_range(&r, lo, hi);
        }
}
