/* SPDX-License-Identifier: MIT */
/* The NEON instance of rast_kernel.h for aarch64: 4 lanes, one 128-bit word (transform: 4
 * vertices; splats: 4 instances; setup and micro-triangles: 4 triangles; larger triangles:
 * 4x1 pixel stamps). SIMD_NEON_WORDS = 2 or 4 builds 8 or 16 lanes (docs/ARM.md measured
 * them: 4 executes the fewest instructions). NEON is part of every ARMv8-A core; draws the
 * same bits as the scalar instance. */
#define SIMD_NEON 1
#ifndef SIMD_NEON_WORDS
#define SIMD_NEON_WORDS 1
#endif
#define KSUFFIX neon
#define RK_NAME "neon"
#include "render/rast_kernel.h"
