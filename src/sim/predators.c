/* SPDX-License-Identifier: MIT */
/* Predators (MODELS.md "Predators"): a few agents with their own speed that chase the
 * nearest boid (or the school's centre). Their state lives in the sim; this file resets it
 * and advances it once per step in one serial pass over the start-of-step boids, so it
 * never depends on threads or ISA. The boids' flee term is in forces_kernel.h. */
#include "sim/sim_internal.h"

#include <math.h>
#include <string.h>

void predators_reset(shoal_sim *s)
{
    const shoal_params *p = &s->desc.params;
    int n = (int)p->predator_count;
    s->predator_count = n;
    for (int k = 0; k < n; k++) {
        float off = ((float)k - 0.5f * (float)(n - 1)) * p->predator_spread;
        s->pred_p[k][0] = p->predator_start[0] + off;
        s->pred_p[k][1] = p->predator_start[1];
        s->pred_p[k][2] = p->predator_start[2];
        s->pred_v[k][0] = s->pred_v[k][1] = s->pred_v[k][2] = 0.0f;
    }
}

static float len3(const float v[3]) { return sqrtf((v[0] * v[0] + v[1] * v[1]) + v[2] * v[2]); }

/* Runs on one thread after the forces, reading cur (the start-of-step state, cell order). */
void predators_step(shoal_sim *s)
{
    if (s->predator_count <= 0 || s->count == 0)
        return;
    float tgt[SHOAL_MAX_PREDATORS][3];
    predators_targets(s, tgt);
    predators_advance(s, tgt);
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
                float dx = X[i] - q[0], dy = Y[i] - q[1], dz = Z[i] - q[2];
                float d2 = (dx * dx + dy * dy) + dz * dz;
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

void predators_advance(shoal_sim *s, const float tgt_in[][3])
{
    const shoal_params *p = &s->desc.params;
    const int n = s->predator_count;
    const float dt = (float)s->desc.dt_s;
    float turn = p->predator_turn * dt;
    turn = turn > 1.0f ? 1.0f : turn;
    for (int k = 0; k < n; k++) {
        float *q = s->pred_p[k], *v = s->pred_v[k];
        const float *tgt = tgt_in[k];
        float want[3] = {tgt[0] - q[0], tgt[1] - q[1], tgt[2] - q[2]};
        float wl = len3(want), vl = len3(v);
        float dir[3];
        if (wl > 0.0f) {
            for (int c = 0; c < 3; c++)
                want[c] /= wl;
            if (vl > 0.0f) {
                /* turn toward the target: lerp(dir, want, turn * dt), normalised */
                for (int c = 0; c < 3; c++) {
                    float h = v[c] / vl;
                    dir[c] = h + (want[c] - h) * turn;
                }
                float dl = len3(dir);
                if (dl > 0.0f)
                    for (int c = 0; c < 3; c++)
                        dir[c] /= dl;
                else
                    memcpy(dir, want, sizeof dir);
            } else {
                memcpy(dir, want, sizeof dir);
            }
        } else if (vl > 0.0f) {
            for (int c = 0; c < 3; c++)
                dir[c] = v[c] / vl;
        } else {
            dir[0] = dir[1] = dir[2] = 0.0f;
        }
        for (int c = 0; c < 3; c++) {
            v[c] = dir[c] * p->predator_speed;
            q[c] += v[c] * dt;
        }
    }
}

size_t shoal_sim_predators(const shoal_sim *s, float *pos, float *vel, size_t max)
{
    size_t n = (size_t)s->predator_count;
    for (size_t k = 0; k < n && k < max; k++) {
        if (pos)
            memcpy(pos + 3 * k, s->pred_p[k], 3 * sizeof(float));
        if (vel)
            memcpy(vel + 3 * k, s->pred_v[k], 3 * sizeof(float));
    }
    return n;
}
