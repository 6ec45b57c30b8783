/* SPDX-License-Identifier: MIT */
/* Predators (MODELS.md "Predators"): a few agents with their own speed that chase the
 * nearest boid (or the school's centre). Their state lives in the sim; this file resets it
 * and advances it once per step in one serial pass over the start-of-step boids, so it
 * never depends on threads or ISA. The arithmetic (start, distance, turn, move) is in
 * sim/rules.h, which the CUDA backend runs too; the boids' flee term is there as well. */
#include "sim/rules.h"
#include "core/check.h"
#include "sim/sim_internal.h"

#include <math.h>
#include <string.h>

void predators_reset(shoal_sim *s)
{
    const shoal_params *p = &s->desc.params;
    int n = (int)p->predator_count;
    s->predator_count = n;
    for (int k = 0; k < n; k++) {
        rule_predator_start(p, k, n, s->pred_p[k]);
        s->pred_v[k][0] = s->pred_v[k][1] = s->pred_v[k][2] = 0.0f;
    }
}

/* Runs on one thread after the forces, reading cur (the start-of-step state, cell order). */
void predators_step(shoal_sim *s)
{
    if (s->predator_count <= 0 || s->count == 0)
        return;
    float tgt[SHOAL_MAX_PREDATORS][3];
    predators_targets(s, tgt);
    predators_advance(s, (const float(*)[3])tgt);
}

void predators_targets(const shoal_sim *s, float tgt_out[][3])
{
    const shoal_params *p = &s->desc.params;
    const int n = s->predator_count;
    const float *X = s->cur[0], *Y = s->cur[1], *Z = s->cur[2];
    float centre[3] = {0, 0, 0};
    if (p->predator_chase >= 1.0f) {
        /* sums in the engine's (deterministic) cell order */
        double c[3] = {0, 0, 0};
        for (size_t i = 0; i < s->count; i++) {
            c[0] += X[i];
            c[1] += Y[i];
            c[2] += Z[i];
        }
        for (int k = 0; k < 3; k++)
            centre[k] = (float)(c[k] / (double)s->count);
    }
    for (int k = 0; k < n; k++) {
        const float *q = s->pred_p[k];
        float *tgt = tgt_out[k];
        if (p->predator_chase >= 1.0f) {
            memcpy(tgt, centre, 3 * sizeof(float));
        } else {
            /* nearest boid; ties go to the lowest input row */
            float best = INFINITY;
            uint32_t best_row = UINT32_MAX;
            size_t best_i = 0;
            for (size_t i = 0; i < s->count; i++) {
                float d2 = rule_predator_d2(X[i], Y[i], Z[i], q);
                uint32_t row = s->row_cur[i];
                if (d2 < best || (d2 == best && row < best_row)) {
                    best = d2;
                    best_row = row;
                    best_i = i;
                }
            }
            tgt[0] = X[best_i];
            tgt[1] = Y[best_i];
            tgt[2] = Z[best_i];
        }
    }
}

void predators_advance(shoal_sim *s, const float tgt[][3])
{
    const shoal_params *p = &s->desc.params;
    const float dt = (float)s->desc.dt_s;
    float turn = rule_predator_turn(p, dt);
    for (int k = 0; k < s->predator_count; k++)
        rule_predator_move(p, s->pred_p[k], s->pred_v[k], tgt[k], turn, dt);
}

size_t shoal_sim_predators(const shoal_sim *s, float *pos, float *vel, size_t max)
{
    if (!s)
        return 0;
    size_t n = (size_t)s->predator_count;
    for (size_t k = 0; k < n && k < max; k++) {
        if (pos)
            memcpy(pos + 3 * k, s->pred_p[k], 3 * sizeof(float));
        if (vel)
            memcpy(vel + 3 * k, s->pred_v[k], 3 * sizeof(float));
    }
    return n;
}
