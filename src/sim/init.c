/* SPDX-License-Identifier: MIT */
/* Initial states, drawn from counter-based streams: boid i's draws are a function of
 * (seed, i) alone, so every machine and thread count gives the same bits. Where each model
 * puts its boids is its entry's `start` (sim/models/NAME.h); the targets are drawn by
 * rules.h's rule_targets (sim_targets, models.c). */
#include "core/rng.h"
#include "sim/models.h"
#include "sim/sim_internal.h"

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
