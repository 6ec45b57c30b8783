/* SPDX-License-Identifier: MIT */
/* The world's wrap and minimum image on core/simd.h's words, for the walkers and the
 * integrator of every ISA and of the float64 reference (include after defining the ISA, or
 * SIMD_REAL_HEADER, as forces_kernel.h is). Lane i gives the bits of sim/world.h's scalar
 * function of lane i's value (world_wrap_f / world_min_image_f, or the _d ones in double):
 * the same comparisons and the same operations, selected per lane. Not for real_bound.h's
 * bounded type (its vf is not a number). */
#ifndef SHOAL_SIM_WORLD_KERNEL_H
#define SHOAL_SIM_WORLD_KERNEL_H

#include "core/simd.h"
#include "sim/world.h"

/* the scalar of this build's vf: float, or double under verify/real64.h */
typedef SIMD_SCALAR world_real;

WORLD_FN world_real world_wrap_far_s(world_real x, world_real lo, world_real L, world_real hi)
{
    world_real r = x - lo;
    world_real n = (world_real)floor((double)(r / L));
    world_real y = lo + (r - n * L);
    if (y < lo || hi <= y)
        y = lo;
    return y;
}

/** Lanes of x wrapped into [lo, hi) on an axis of period L (world_wrap_f's rule). The far
 *  path (a lane more than a period out, or rounded onto hi) is taken lane by lane, rarely:
 *  a boid moves less than a period in a step. */
WORLD_FN vf world_wrap_v(vf x, world_real lo, world_real L, world_real hi)
{
    const vf vlo = vf_set1(lo), vL = vf_set1(L), vhi = vf_set1(hi);
    vf y = vf_select(vf_lt(x, vlo), vf_add(x, vL), vf_select(vf_le(vhi, x), vf_sub(x, vL), x));
    vm out = vm_andnot(vm_first(VW), vm_and(vf_le(vlo, y), vf_lt(y, vhi)));
    if (vm_any(out)) {
        world_real lanes[VW];
        unsigned bits = vm_bits(out);
        for (int i = 0; i < VW; i++)
            lanes[i] =
                (bits >> i) & 1u ? world_wrap_far_s(vf_lane(x, i), lo, L, hi) : vf_lane(y, i);
        y = vf_load_n(lanes, VW);
    }
    return y;
}

/** Lanes of d = a - b (both in the box) as the minimum image on an axis of period L,
 *  half = L / 2 (world_min_image_f's rule). */
WORLD_FN vf world_min_image_v(vf d, world_real L, world_real half)
{
    const vf vL = vf_set1(L), vh = vf_set1(half), vmh = vf_set1(-half);
    return vf_select(vf_gt(d, vh), vf_sub(d, vL), vf_select(vf_lt(d, vmh), vf_add(d, vL), d));
}

#endif
