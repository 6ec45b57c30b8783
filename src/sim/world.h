/* SPDX-License-Identifier: MIT */
/* The world's arithmetic inside the library (the public side is shoal/world.h): the box of
 * a shoal_world in the form the integrator and the walkers use, and the two operations every
 * backend needs on a periodic axis, defined here once in scalar float and double:
 *  - wrap: a position into [lo, hi), the box's half-open interval (the integrator, and a
 *    state as it is loaded);
 *  - minimum image: a difference a - b turned into the nearest image's (the walkers).
 * The wide versions (core/simd.h's words, every ISA and the float64 reference) are
 * sim/world_kernel.h; they give these functions' bits lane by lane. Owns no state. */
#ifndef SHOAL_SIM_WORLD_H
#define SHOAL_SIM_WORLD_H

#include "shoal/sim.h"

#include <math.h>

#if defined(__CUDACC__)
#define WORLD_FN static __host__ __device__ __forceinline__
#else
#define WORLD_FN static inline
#endif

/** A world's box as the step uses it: per axis the period L = size, half = L / 2 (exact),
 *  lo = center - half and hi = lo + L (each one float rounding; positions live in
 *  [lo, hi)). Only the axes with periodic[a] set are read by wrap and minimum image. */
typedef struct world_axes {
    int dims;        /* 2 or 3 */
    int periodic[3]; /* as shoal_world_axis_periodic */
    int any_periodic;
    float lo[3], hi[3], size[3], half[3];
} world_axes;

/** The axes of `w` (valid or not: validate first). */
void world_axes_make(const shoal_world *w, world_axes *a);

/* ---- wrap: x into [lo, hi) ------------------------------------------------------------------
 * y = x + L below lo, x - L at or above hi, else x; when y is still outside [lo, hi) (x was
 * more than a period away, or the shift rounded onto hi), the far path: r = x - lo,
 * y = lo + (r - floor(r / L) L), then lo for a y that rounded outside. A point exactly on
 * the seam (x = hi) goes to lo; x = lo stays. NaN stays NaN and infinities become NaN (the
 * step's non-finite check names them). Every operation is one IEEE operation in this order. */

WORLD_FN float world_wrap_far_f(float x, float lo, float L, float hi)
{
    float r = x - lo;
    float n = (float)floor((double)(r / L)); /* floor of a float is a float: exact */
    float y = lo + (r - n * L);
    if (y < lo || hi <= y)
        y = lo;
    return y;
}

WORLD_FN float world_wrap_f(float x, float lo, float L, float hi)
{
    float y = x < lo ? x + L : (hi <= x ? x - L : x);
    if (!(lo <= y && y < hi))
        y = world_wrap_far_f(x, lo, L, hi);
    return y;
}

WORLD_FN double world_wrap_far_d(double x, double lo, double L, double hi)
{
    double r = x - lo;
    double n = floor(r / L);
    double y = lo + (r - n * L);
    if (y < lo || hi <= y)
        y = lo;
    return y;
}

WORLD_FN double world_wrap_d(double x, double lo, double L, double hi)
{
    double y = x < lo ? x + L : (hi <= x ? x - L : x);
    if (!(lo <= y && y < hi))
        y = world_wrap_far_d(x, lo, L, hi);
    return y;
}

/* ---- minimum image --------------------------------------------------------------------------
 * d = a - b for a and b in the box (so |d| < L): d - L above half, d + L below -half, else d.
 * |d| = half exactly stays as it is, so the image of (b, a) is minus that of (a, b): the
 * pair's terms stay antisymmetric. With L >= 2 r (shoal_world_validate) a neighbour within
 * the radius r has exactly one image within r. */

WORLD_FN float world_min_image_f(float d, float L, float half)
{
    return d > half ? d - L : (d < -half ? d + L : d);
}

WORLD_FN double world_min_image_d(double d, double L, double half)
{
    return d > half ? d - L : (d < -half ? d + L : d);
}

/** Wrap row-major (N, 6) rows' positions into the box on every periodic axis (a state as
 *  it is loaded). Velocities and non-periodic axes are untouched. */
void world_wrap_rows(const world_axes *a, float *rows, size_t row_count);

/** The validation every backend's create runs on desc->world (shoal_world_validate with the
 *  model's interaction radius), plus, until the backends step such worlds, a refusal of any
 *  world but today's (SHOAL_ERR_UNSUPPORTED naming `backend`): a periodic or 2D desc never
 *  runs silently as a walled 3D one. */
shoal_status world_check_desc(const shoal_sim_desc *d, const char *backend, shoal_error *err);

#endif
