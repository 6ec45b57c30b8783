/* SPDX-License-Identifier: MIT */
/* The scalar instance of rast_kernel.h (core/simd.h's scalar twin, VW = 1): one vertex,
 * instance, triangle or pixel at a time. It is the reference the SIMD instances equal bit for
 * bit, and the build used where the CPU has neither AVX2 nor AVX-512. */
#define KSUFFIX scalar
#define RK_NAME "scalar"
#include "render/rast_kernel.h"
