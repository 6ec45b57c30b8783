/* SPDX-License-Identifier: MIT */
/* Initial states and heading's targets, drawn from counter-based streams: boid i's draws
 * are a function of (seed, i) alone, the targets of (seed, epoch) alone, so every machine
 * and thread count gives the same bits. Where each model puts its boids is its entry's
 * `start` (models.c). */
#include "core/rng.h"
#include "sim/models.h"
#include "sim/sim_internal.h"

#include <math.h>

void sim_init_row(shoal_model model, const shoal_params *p, uint64_t seed, size_t i, float row[6])
{
    rng r = rng_stream(seed, (uint64_t)i);
    sim_model_of(model)->start(p, &r, row); /* the model's own start (models.c) */
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
