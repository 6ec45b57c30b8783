/* SPDX-License-Identifier: MIT */
/* This machine's FP32 peak (peak.c): the ceiling `shoal bench` divides the force kernels'
 * GFLOP/s by, and what tools/peak.c prints. */
#ifndef SHOAL_SUPPORT_PEAK_H
#define SHOAL_SUPPORT_PEAK_H

/* Which kernel: 0 AVX2 FMA, 1 AVX-512 FMA, 2 AVX2 add+mul, 3 AVX-512 add+mul. */
enum { PEAK_AVX2_FMA, PEAK_AVX512_FMA, PEAK_AVX2_ADDMUL, PEAK_AVX512_ADDMUL, PEAK_KIND_COUNT };

/* GFLOP/s of `kind` on `threads` threads: the best of 5 runs of about seconds/5 each; 0
 * when this CPU cannot run the kind. Sets the process default thread count while it runs
 * and restores OpenMP's default (0) after: call from the main thread, outside other work. */
double peak_gflops(int kind, int threads, double seconds);
/* "avx2-fma", "avx512-fma", "avx2-addmul", "avx512-addmul"; "?" out of range. */
const char *peak_kind_name(int kind);
/* True when this CPU (and SHOAL_CPU_DISABLE) allows the kind's kernel. */
int peak_kind_supported(int kind);

#endif
