/* SPDX-License-Identifier: MIT */
/* peak: this machine's floating-point peak, the ceiling that `shoal bench` divides the
 * force kernels' GFLOP/s by. Independent chains of fused multiply-adds (an FMA counts as 2
 * flops) on AVX2 (8 floats) and AVX-512 (16 floats), enough accumulators to cover the FMA
 * latency on two ports, on 1 thread and on every thread (through core/parallel.h, the only
 * OpenMP). Also the add+mul peak without FMA, which is the ceiling of shoal's kernels:
 * they are built with -ffp-contract=off (bit-identical results across ISAs).
 *
 * Also the copy bandwidth (read + write bytes per second of a large memcpy), the ceiling of
 * the grid's sort, which moves data and computes little.
 *
 * In the support library: `shoal bench` calls peak_gflops() and peak_copy_gbs(), and
 * tools/peak.c is the program `peak` around them. Kernels use target attributes, so no file needs
 * ISA flags; they only run after the CPU check. */
#include "support/peak.h"

#include "core/cpu.h"
#include "core/parallel.h"
#include "core/timer.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The chains converge to c / (1 - m): no overflow, no denormals, the same speed forever. */
#define ACC_AVX2 10
#define ACC_AVX512 12

#if defined(__x86_64__)
__attribute__((target("avx2,fma"), noinline)) static float chains_avx2_fma(long iters)
{
    __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-6f);
    __m256 a[ACC_AVX2];
    for (int k = 0; k < ACC_AVX2; k++)
        a[k] = _mm256_set1_ps((float)k);
    for (long i = 0; i < iters; i++) {
#pragma GCC unroll 16
        for (int k = 0; k < ACC_AVX2; k++)
            a[k] = _mm256_fmadd_ps(a[k], m, c);
    }
    __m256 s = a[0];
    for (int k = 1; k < ACC_AVX2; k++)
        s = _mm256_add_ps(s, a[k]);
    float out[8];
    _mm256_storeu_ps(out, s);
    return out[0];
}

__attribute__((target("avx512f"), noinline)) static float chains_avx512_fma(long iters)
{
    __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-6f);
    __m512 a[ACC_AVX512];
    for (int k = 0; k < ACC_AVX512; k++)
        a[k] = _mm512_set1_ps((float)k);
    for (long i = 0; i < iters; i++) {
#pragma GCC unroll 16
        for (int k = 0; k < ACC_AVX512; k++)
            a[k] = _mm512_fmadd_ps(a[k], m, c);
    }
    __m512 s = a[0];
    for (int k = 1; k < ACC_AVX512; k++)
        s = _mm512_add_ps(s, a[k]);
    return _mm512_reduce_add_ps(s);
}

/* add+mul: half the chains multiply, half add (two ports, one op = one flop). The factor
 * is 1 read through a volatile, so the products stay normal (a decaying chain would end in
 * denormals, 100x slower) and the compiler cannot fold the multiply away. */
static volatile float g_one = 1.0f;
__attribute__((target("avx2"), noinline)) static float chains_avx2_addmul(long iters)
{
    __m256 m = _mm256_set1_ps(g_one), c = _mm256_set1_ps(1e-6f);
    __m256 a[ACC_AVX2];
    for (int k = 0; k < ACC_AVX2; k++)
        a[k] = _mm256_set1_ps((float)k + 1.0f);
    for (long i = 0; i < iters; i++) {
#pragma GCC unroll 16
        for (int k = 0; k < ACC_AVX2; k += 2) {
            a[k] = _mm256_mul_ps(a[k], m);
            a[k + 1] = _mm256_add_ps(a[k + 1], c);
        }
    }
    __m256 s = a[0];
    for (int k = 1; k < ACC_AVX2; k++)
        s = _mm256_add_ps(s, a[k]);
    float out[8];
    _mm256_storeu_ps(out, s);
    return out[0];
}

__attribute__((target("avx512f"), noinline)) static float chains_avx512_addmul(long iters)
{
    __m512 m = _mm512_set1_ps(g_one), c = _mm512_set1_ps(1e-6f);
    __m512 a[ACC_AVX512];
    for (int k = 0; k < ACC_AVX512; k++)
        a[k] = _mm512_set1_ps((float)k + 1.0f);
    for (long i = 0; i < iters; i++) {
#pragma GCC unroll 16
        for (int k = 0; k < ACC_AVX512; k += 2) {
            a[k] = _mm512_mul_ps(a[k], m);
            a[k + 1] = _mm512_add_ps(a[k + 1], c);
        }
    }
    __m512 s = a[0];
    for (int k = 1; k < ACC_AVX512; k++)
        s = _mm512_add_ps(s, a[k]);
    return _mm512_reduce_add_ps(s);
}

#endif

const char *peak_kind_name(int kind)
{
    static const char *names[] = {"avx2-fma", "avx512-fma", "avx2-addmul", "avx512-addmul"};
    return (unsigned)kind < PEAK_KIND_COUNT ? names[kind] : "?";
}

int peak_kind_supported(int kind)
{
#if !defined(__x86_64__)
    (void)kind;
    return 0; /* the kernels are x86's (an aarch64 build measures no peak yet) */
#else
    switch (kind) {
    case PEAK_AVX2_FMA:
        return cpu_has_avx2() && __builtin_cpu_supports("fma");
    case PEAK_AVX2_ADDMUL:
        return cpu_has_avx2();
    case PEAK_AVX512_FMA:
    case PEAK_AVX512_ADDMUL:
        return cpu_has_avx512();
    }
    return 0;
#endif
}

/* flops of one iteration of a kernel, per thread */
static double flops_per_iter(int kind)
{
    switch (kind) {
    case PEAK_AVX2_FMA:
        return ACC_AVX2 * 8 * 2;
    case PEAK_AVX512_FMA:
        return ACC_AVX512 * 16 * 2;
    case PEAK_AVX2_ADDMUL:
        return ACC_AVX2 * 8;
    default:
        return ACC_AVX512 * 16;
    }
}

#define PEAK_MAX_THREADS 256
typedef struct peak_ctx {
    int kind;
    long iters;
    int threads; /* how many threads the region really ran */
    float sink[PEAK_MAX_THREADS];
    uint64_t start[PEAK_MAX_THREADS], stop[PEAK_MAX_THREADS];
} peak_ctx;

/* Every thread starts its chains after a barrier (thread start-up is not timed) and
 * records its own start and stop; the run's time is first start to last stop, and the
 * flops are counted for the threads that really ran. */
static void peak_body(void *p, int t, int n)
{
    peak_ctx *c = p;
    if (t == 0)
        c->threads = n;
    parallel_barrier();
    uint64_t t0 = timer_now_ns();
    float r = 0;
#if defined(__x86_64__)
    switch (c->kind) {
    case PEAK_AVX2_FMA:
        r = chains_avx2_fma(c->iters);
        break;
    case PEAK_AVX512_FMA:
        r = chains_avx512_fma(c->iters);
        break;
    case PEAK_AVX2_ADDMUL:
        r = chains_avx2_addmul(c->iters);
        break;
    default:
        r = chains_avx512_addmul(c->iters);
        break;
    }
#endif
    if (t < PEAK_MAX_THREADS) {
        c->sink[t] = r;
        c->start[t] = t0;
        c->stop[t] = timer_now_ns();
    }
}

/* seconds from the first thread's start to the last thread's stop */
static double region_seconds(const peak_ctx *c)
{
    int n = c->threads < PEAK_MAX_THREADS ? c->threads : PEAK_MAX_THREADS;
    uint64_t first = c->start[0], last = c->stop[0];
    for (int t = 1; t < n; t++) {
        first = c->start[t] < first ? c->start[t] : first;
        last = c->stop[t] > last ? c->stop[t] : last;
    }
    return (double)(last - first) * 1e-9;
}

/* The best of 5 runs, not the median: a peak is what the hardware can do when nothing
 * interferes. */
double peak_gflops(int kind, int threads, double seconds)
{
    if (!peak_kind_supported(kind))
        return 0.0;
    peak_ctx c;
    memset(&c, 0, sizeof c);
    c.kind = kind;
    /* its own team of `threads`: the process default is read by others, never written here */
    /* calibrate: iterations for about seconds / 5 */
    c.iters = 1 << 14;
    for (;;) {
        parallel_region_n(peak_body, &c, threads);
        double dt = region_seconds(&c);
        if (dt > seconds / 20 || c.iters > (1L << 34))
            break;
        c.iters *= 2;
    }
    c.iters = (long)((double)c.iters * 4.0);
    double best = 0;
    for (int rep = 0; rep < 5; rep++) {
        parallel_region_n(peak_body, &c, threads);
        double dt = region_seconds(&c);
        int ran = c.threads < PEAK_MAX_THREADS ? c.threads : PEAK_MAX_THREADS;
        double g = flops_per_iter(kind) * (double)c.iters * ran / dt * 1e-9;
        best = g > best ? g : best;
    }
    return best;
}

/* ---- copy bandwidth ---------------------------------------------------------------------- */

typedef struct copy_ctx {
    char *src, *dst;
    size_t bytes; /* per array */
    int threads;
    uint64_t start[PEAK_MAX_THREADS], stop[PEAK_MAX_THREADS];
} copy_ctx;

/* Each thread copies its static share with memcpy (glibc streams large copies past the
 * caches, as a bandwidth test should), after a barrier, timing itself. */
static void copy_body(void *p, int t, int n)
{
    copy_ctx *c = p;
    if (t == 0)
        c->threads = n;
    size_t share = c->bytes / (size_t)n / 64 * 64;
    size_t b = share * (size_t)t, len = t == n - 1 ? c->bytes - b : share;
    parallel_barrier();
    uint64_t t0 = timer_now_ns();
    memcpy(c->dst + b, c->src + b, len);
    if (t < PEAK_MAX_THREADS) {
        c->start[t] = t0;
        c->stop[t] = timer_now_ns();
    }
}

/* Each thread first writes its own share of both arrays, so their pages sit where the
 * threads that copy them run. */
static void copy_touch(void *p, int t, int n)
{
    copy_ctx *c = p;
    size_t share = c->bytes / (size_t)n / 64 * 64;
    size_t b = share * (size_t)t, len = t == n - 1 ? c->bytes - b : share;
    memset(c->src + b, 1, len);
    memset(c->dst + b, 0, len);
}

double peak_copy_gbs(int threads, double seconds)
{
    copy_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return 0.0;
    c->bytes = (size_t)256 << 20; /* far beyond any cache */
    c->src = aligned_alloc(64, c->bytes);
    c->dst = aligned_alloc(64, c->bytes);
    double best = 0;
    if (c->src && c->dst) {
        parallel_set_threads(threads);
        parallel_region(copy_touch, c);
        uint64_t t_end = timer_now_ns() + (uint64_t)(seconds * 1e9);
        for (int rep = 0; rep < 20 && (rep < 3 || timer_now_ns() < t_end); rep++) {
            parallel_region(copy_body, c);
            int n = c->threads < PEAK_MAX_THREADS ? c->threads : PEAK_MAX_THREADS;
            uint64_t first = c->start[0], last = c->stop[0];
            for (int k = 1; k < n; k++) {
                first = c->start[k] < first ? c->start[k] : first;
                last = c->stop[k] > last ? c->stop[k] : last;
            }
            double gbs = 2.0 * (double)c->bytes / ((double)(last - first) * 1e-9) * 1e-9;
            best = gbs > best ? gbs : best;
        }
        parallel_set_threads(0);
    }
    free(c->src);
    free(c->dst);
    free(c);
    return best;
}
