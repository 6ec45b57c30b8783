/* SPDX-License-Identifier: MIT */
/* The non-inline part of rng.h. */
#include "core/rng.h"

#include <math.h>

void rng_direction(rng *r, float out[3])
{
    for (;;) {
        float p[3];
        rng_in_ball(r, 1.0f, p);
        float d2 = p[0] * p[0] + p[1] * p[1] + p[2] * p[2];
        if (d2 > 1e-6f) {
            float d = sqrtf(d2);
            out[0] = p[0] / d;
            out[1] = p[1] / d;
            out[2] = p[2] / d;
            return;
        }
    }
}
