/* SPDX-License-Identifier: MIT */
/* The NEON instance of forces_kernel.h for aarch64: VW = 4 lanes = 4 boids, one 128-bit word
 * (SIMD_NEON_WORDS = 2 or 4 builds 8 or 16 lanes from two or four: docs/ARM.md measured them;
 * at 4 lanes every model's pair loop keeps its accumulators in registers). NEON is part of
 * every ARMv8-A core: no flag, no run-time check beyond SHOAL_CPU_DISABLE. Must equal the
 * scalar kernel bit for bit. */
#define SIMD_NEON 1
#ifndef SIMD_NEON_WORDS
#define SIMD_NEON_WORDS 1
#endif
#define KSUFFIX neon
#include "sim/forces_kernel.h"
