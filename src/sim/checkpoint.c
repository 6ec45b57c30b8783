/* SPDX-License-Identifier: MIT */
/* Checkpoints (shoal/sim.h): the sim's state beyond the boids, copied out and back in, so
 * that a run split over processes gives the bits of one run: the step counter (time), the
 * predators and the pinned heading targets. Owns no state; files are src/io/checkpoint.c. */
#include "sim/sim_internal.h"
#include "core/check.h"

#include <math.h>
#include <string.h>

void shoal_sim_get_checkpoint(const shoal_sim *s, shoal_sim_checkpoint *ck)
{
    if (!s || !ck)
        return;
    memset(ck, 0, sizeof *ck);
    ck->steps_done = s->steps_done;
    ck->predator_count = s->predator_count;
    memcpy(ck->predator_pos, s->pred_p, sizeof ck->predator_pos);
    memcpy(ck->predator_vel, s->pred_v, sizeof ck->predator_vel);
    memcpy(ck->target_pinned, s->target_pinned, sizeof ck->target_pinned);
    memcpy(ck->target_pin, s->target_pin, sizeof ck->target_pin);
}

shoal_status shoal_sim_set_checkpoint(shoal_sim *s, const shoal_sim_checkpoint *ck,
                                      shoal_error *err)
{
    CHECK_ARG(s, "sim", err);
    CHECK_ARG(ck, "ck", err);
    if (ck->predator_count != (int32_t)s->desc.params.predator_count)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "checkpoint has %d predators, the parameters say %d",
                               (int)ck->predator_count, (int)s->desc.params.predator_count);
    if (ck->steps_done > ((uint64_t)1 << 53))
        return shoal_error_set(err, SHOAL_ERR_INPUT, "checkpoint step count %llu is too large",
                               (unsigned long long)ck->steps_done);
    for (int k = 0; k < ck->predator_count; k++)
        for (int c = 0; c < 3; c++)
            if (!isfinite(ck->predator_pos[k][c]) || !isfinite(ck->predator_vel[k][c]))
                return shoal_error_set(err, SHOAL_ERR_INPUT, "checkpoint predator %d is not finite",
                                       k);
    for (int k = 0; k < SHOAL_MAX_TARGETS; k++)
        for (int c = 0; c < 3; c++)
            if (ck->target_pinned[k] > 1 || !isfinite(ck->target_pin[k][c]))
                return shoal_error_set(err, SHOAL_ERR_INPUT,
                                       "checkpoint heading target %d is not valid", k);
    s->steps_done = ck->steps_done;
    s->predator_count = ck->predator_count;
    memcpy(s->pred_p, ck->predator_pos, sizeof s->pred_p);
    memcpy(s->pred_v, ck->predator_vel, sizeof s->pred_v);
    memcpy(s->target_pinned, ck->target_pinned, sizeof s->target_pinned);
    memcpy(s->target_pin, ck->target_pin, sizeof s->target_pin);
    return SHOAL_OK;
}
