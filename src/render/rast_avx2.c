/* SPDX-License-Identifier: MIT */
/* The AVX2 instance of rast_kernel.h: 8 lanes (transform: 8 vertices; splats: 8 instances;
 * setup and micro-triangles: 8 triangles; larger triangles: 4x2 or 8x1 pixel stamps).
 * Compiled with -mavx2, used only after cpu_has_avx2(); draws the same bits as the scalar
 * instance. */
#define SIMD_AVX2 1
#define KSUFFIX avx2
#define RK_NAME "avx2"
#include "render/rast_kernel.h"
