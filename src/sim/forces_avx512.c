/* SPDX-License-Identifier: MIT */
/* The AVX-512 instance of forces_kernel.h (16 lanes = 16 boids). Compiled with
 * -mavx512f/bw/dq/vl and run only after cpu_has_avx512(); must equal the scalar kernel bit
 * for bit. */
#define SIMD_AVX512 1
#define KSUFFIX avx512
#include "sim/forces_kernel.h"
