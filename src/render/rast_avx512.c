/* SPDX-License-Identifier: MIT */
/* The AVX-512 instance of rast_kernel.h: 16 lanes (transform: 16 vertices; splats: 16
 * instances; setup and micro-triangles: 16 triangles; larger triangles: 4x4, 8x2 or 16x1
 * pixel stamps). Compiled with -mavx512f/dq (meson.build says why not bw), used only after
 * cpu_has_avx512(); draws the same bits as the scalar instance. */
#define SIMD_AVX512 1
#define KSUFFIX avx512
#define RK_NAME "avx512"
#include "render/rast_kernel.h"
