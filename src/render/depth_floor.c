/* SPDX-License-Identifier: MIT */
/* The depth floor of a mesh ref's triangles (render_internal.h). Its own library, built with
 * -fno-trapping-math so that gcc vectorises the loop (the default floating-point environment
 * masks every exception, so nothing traps and every operation is the same IEEE one). */
#include "render/render_internal.h"

#include <math.h>

/* A depth that no covered sample of these triangles gets below (the tile pass skips refs
 * hidden behind nearer pixels by it; render_internal.h, rast.c). The exact plane through the
 * three vertices stays within their depths inside the triangle; render_depth_at differs
 * from it by the rounding of z1 - z0, z2 - z0, the gradients and the evaluation: at most about
 * 2^-20 (|z| + S (W + H)), with W x H the triangle's box in x_fx8 units and S = (|dz1| +
 * |dz2|) (|e1x| + |e1y| + |e2x| + |e2y|) / |area2| bounding |dz/dx| and |dz/dy| and the terms
 * of their formula. The floor takes 16 times that below the smallest vertex depth; for a
 * triangle whose float area is not clearly nonzero, or a NaN, it is -inf (never hidden).
 * Float only, branch-free per triangle: the compiler vectorises it. */
static inline float fl_min(float a, float b) { return a < b ? a : b; }
static inline float fl_max(float a, float b) { return a > b ? a : b; }

static inline float setup_tri_floor(const tri_cols *s, size_t i)
{
    float e1x = (float)(s->x1[i] - s->x0[i]), e1y = (float)(s->y1[i] - s->y0[i]);
    float e2x = (float)(s->x2[i] - s->x0[i]), e2y = (float)(s->y2[i] - s->y0[i]);
    float z0 = s->z0[i], z1 = s->z1[i], z2 = s->z2[i];
    float a = e1x * e2y, b = e2x * e1y;
    float area = fabsf(a - b) - (fabsf(a) + fabsf(b)) * 0x1p-20f;
    float edges = (fabsf(e1x) + fabsf(e1y)) + (fabsf(e2x) + fabsf(e2y));
    float w = fl_max(fabsf(e1x), fl_max(fabsf(e2x), fabsf(e1x - e2x)));
    float h = fl_max(fabsf(e1y), fl_max(fabsf(e2y), fabsf(e1y - e2y)));
    float za = fl_max(fabsf(z0), fl_max(fabsf(z1), fabsf(z2)));
    /* area <= 0: the quotient is not used; 1 keeps it finite */
    float S = (fabsf(z1 - z0) + fabsf(z2 - z0)) * edges / (area > 0.0f ? area : 1.0f);
    float zl = fl_min(z0, fl_min(z1, z2)) - (za + S * (w + h)) * 0x1p-16f;
    /* NaN depth, inf S or a doubtful area: no floor (a NaN zl fails zl >= -inf) */
    int ok = (area > 0.0f) & (zl >= -INFINITY);
    return ok ? zl : -INFINITY;
}

/* Eight lanes of minima so the compiler can vectorise the loop (a min reduction over one
 * accumulator is not reassociated without -ffast-math); no NaN reaches them. */
float render_depth_floor(const tri_cols *s, size_t n)
{
    float acc[8] = {INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY};
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++)
            acc[k] = fl_min(setup_tri_floor(s, i + (size_t)k), acc[k]);
    for (; i < n; i++)
        acc[0] = fl_min(setup_tri_floor(s, i), acc[0]);
    float lo = acc[0];
    for (int k = 1; k < 8; k++)
        lo = fl_min(acc[k], lo);
    return lo;
}
