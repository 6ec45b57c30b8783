/* SPDX-License-Identifier: MIT */
/* The AVX2 instance of forces_kernel.h (8 lanes = 8 boids). Compiled with -mavx2 and run
 * only after cpu_has_avx2(); must equal the scalar kernel bit for bit. */
#define SIMD_AVX2 1
#define KSUFFIX avx2
#include "sim/forces_kernel.h"
