/* SPDX-License-Identifier: MIT */
/* CPU feature detection, done once, and the choice of kernels it drives. Owns no
 * simulation or rendering state. */
#ifndef SHOAL_CORE_CPU_H
#define SHOAL_CORE_CPU_H

/** True when the CPU and OS support AVX2 (FMA is not required: we never use it), unless
 *  SHOAL_CPU_DISABLE lists "avx2" (to test the fallback on any machine). */
int cpu_has_avx2(void);
/** True when the CPU and OS support AVX-512 F, BW, DQ and VL, unless SHOAL_CPU_DISABLE
 *  lists "avx512". */
int cpu_has_avx512(void);
/** True on aarch64 (NEON, ARMv8-A's Advanced SIMD, is part of every 64-bit ARM core), unless
 *  SHOAL_CPU_DISABLE lists "neon"; false on other architectures. */
int cpu_has_neon(void);
/** The CPU's model name (from /proc/cpuinfo), or "unknown". Static storage. */
const char *cpu_model_name(void);

#endif
