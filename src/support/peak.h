/* SPDX-License-Identifier: MIT */
/* This machine's FP32 peak and copy bandwidth (peak.c): the ceilings `shoal bench` divides
 * the force kernels' GFLOP/s and the sort's bytes per second by, and what tools/peak.c
 * prints. */
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
/* Copy bandwidth on `threads` threads: GB/s of bytes read plus bytes written by a memcpy of
 * 256 MiB split over the threads, the best of at least 3 runs (more while `seconds` last);
 * 0 when the buffers cannot be allocated. Sets and restores the process default thread
 * count as peak_gflops does. */
double peak_copy_gbs(int threads, double seconds);

#endif
