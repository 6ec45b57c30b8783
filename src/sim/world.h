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

/** The validation every backend's create runs on desc->world: shoal_world_validate with the
 *  model's interaction radius (`backend` is not named: the world's own messages say what is
 *  wrong). Every backend steps every valid world. */
shoal_status world_check_desc(const shoal_sim_desc *d, const char *backend, shoal_error *err);

/** The world's fields of a step's constants (sim_internal.h MODEL_CONSTS_FIELDS: model_consts,
 *  or the float64 reference's double twin), from the world `w`: world_on 0 for today's world;
 *  on each axis periodic, the period and its half (+inf where the axis does not wrap), the
 *  box, and wall_on (the model's walls act on the axis: not periodic, not z in 2D). */
#define WORLD_CONSTS_SET(mc, w)                                                                    \
    do {                                                                                           \
        world_axes wc_a;                                                                           \
        world_axes_make((w), &wc_a);                                                               \
        (mc)->world_on = !shoal_world_is_default(w);                                               \
        (mc)->world_dims = wc_a.dims;                                                              \
        for (int wc_k = 0; wc_k < 3; wc_k++) {                                                     \
            (mc)->periodic[wc_k] = wc_a.periodic[wc_k];                                            \
            (mc)->wall_on[wc_k] = !wc_a.periodic[wc_k] && !(wc_k == 2 && wc_a.dims == 2);          \
            (mc)->wsize[wc_k] = wc_a.periodic[wc_k] ? wc_a.size[wc_k] : 0.0f;                      \
            (mc)->whalf[wc_k] = wc_a.periodic[wc_k] ? wc_a.half[wc_k] : INFINITY;                  \
            (mc)->wlo[wc_k] = wc_a.lo[wc_k];                                                       \
            (mc)->whi[wc_k] = wc_a.hi[wc_k];                                                       \
        }                                                                                          \
    } while (0)

/** A state's rows placed in the world as it is loaded (the backends that take rows): the 2D
 *  check (shoal_world_check_rows: z and vz exactly 0, else SHOAL_ERR_INPUT naming the row)
 *  and the positions wrapped into the box on every periodic axis (world_wrap_rows; `rows` is
 *  changed). Today's world: nothing. */
shoal_status world_place_rows(const shoal_world *w, float *rows, size_t row_count, const char *name,
                              shoal_error *err);

/** A drawn initial row placed in the world (sim_init_row): in 2D z = 0 and the velocity
 *  turned into the plane with its speed kept (vx, vy scaled by |v| / |v_xy|; along x when
 *  the draw had no in-plane part), vz = 0; on a periodic axis the position wrapped into the
 *  box. Today's world: nothing. */
void world_place_init_row(const shoal_world *w, float row[6]);

#endif
