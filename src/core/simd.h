/* SPDX-License-Identifier: MIT */
/* The wide float type the force kernels are written against, and its scalar twin. A file
 * defines one of SIMD_AVX512 / SIMD_AVX2 (and is compiled with the matching -m flags) or
 * neither (scalar, W = 1), then includes this. Every operation is an IEEE single-precision
 * operation with round-to-nearest (no FMA, no approximate reciprocal or square root), so
 * lane i of a wide op gives the same bits as the scalar op: that is what makes the
 * kernels' results identical across ISAs. Masks are per lane; vf_select keeps exact bits. */
#ifndef SHOAL_CORE_SIMD_H
#define SHOAL_CORE_SIMD_H

#include <stdint.h>

/* How the functions of the scalar branch and the vf3 helpers are declared: static inline
 * in C; under nvcc also device functions, so that src/sim/rules.h compiles for the GPU. */
#if defined(__CUDACC__)
#define SIMD_FN static __host__ __device__ __forceinline__
#else
#define SIMD_FN static inline
#endif

#if defined(SIMD_REAL_HEADER)
/* Another scalar type (W = 1) with the same vocabulary, for the float64 reference of
 * src/sim (sim/real64.h: double; sim/real_bound.h: double with a rounding bound). The
 * header defines vf, vm, the vf_* and vm_* functions, VW and SIMD_SCALAR. */
#include SIMD_REAL_HEADER
#elif defined(SIMD_AVX512)
#include <immintrin.h>
#define VW 16
typedef __m512 vf;
typedef __mmask16 vm;
static inline vf vf_set1(float x) { return _mm512_set1_ps(x); }
static inline vf vf_zero(void) { return _mm512_setzero_ps(); }
static inline vf vf_load_n(const float *p, int n)
{
    return _mm512_maskz_loadu_ps((__mmask16)((1u << n) - 1u), p);
}
static inline void vf_store_n(float *p, vf v, int n)
{
    _mm512_mask_storeu_ps(p, (__mmask16)((1u << n) - 1u), v);
}
static inline vf vf_add(vf a, vf b) { return _mm512_add_ps(a, b); }
static inline vf vf_sub(vf a, vf b) { return _mm512_sub_ps(a, b); }
static inline vf vf_mul(vf a, vf b) { return _mm512_mul_ps(a, b); }
static inline vf vf_div(vf a, vf b) { return _mm512_div_ps(a, b); }
static inline vf vf_sqrt(vf a) { return _mm512_sqrt_ps(a); }
static inline vf vf_neg(vf a) { return _mm512_sub_ps(_mm512_setzero_ps(), a); }
static inline vm vf_le(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_LE_OQ); }
static inline vm vf_lt(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
static inline vm vf_gt(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
static inline vm vf_eq(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
static inline vm vm_and(vm a, vm b) { return (vm)(a & b); }
static inline vm vm_or(vm a, vm b) { return (vm)(a | b); }
static inline vm vm_andnot(vm a, vm b) { return (vm)(a & ~b); }
static inline int vm_any(vm a) { return a != 0; }
static inline unsigned vm_bits(vm a) { return (unsigned)a; }
static inline vm vm_first(int n) { return (vm)((1u << n) - 1u); }
/* m ? a : b, lane by lane */
static inline vf vf_select(vm m, vf a, vf b) { return _mm512_mask_blend_ps(m, b, a); }
/* m ? acc + x : acc (one masked add) */
static inline vf vf_add_masked(vf acc, vm m, vf x) { return _mm512_mask_add_ps(acc, m, acc, x); }
static inline float vf_lane(vf v, int i)
{
    float t[16];
    _mm512_storeu_ps(t, v);
    return t[i];
}

#elif defined(SIMD_AVX2)
#include <immintrin.h>
#define VW 8
typedef __m256 vf;
typedef __m256 vm;
static inline vf vf_set1(float x) { return _mm256_set1_ps(x); }
static inline vf vf_zero(void) { return _mm256_setzero_ps(); }
static inline __m256i simd_lane_mask(int n)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
static inline vf vf_load_n(const float *p, int n)
{
    return n == 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, simd_lane_mask(n));
}
static inline void vf_store_n(float *p, vf v, int n)
{
    if (n == 8)
        _mm256_storeu_ps(p, v);
    else
        _mm256_maskstore_ps(p, simd_lane_mask(n), v);
}
static inline vf vf_add(vf a, vf b) { return _mm256_add_ps(a, b); }
static inline vf vf_sub(vf a, vf b) { return _mm256_sub_ps(a, b); }
static inline vf vf_mul(vf a, vf b) { return _mm256_mul_ps(a, b); }
static inline vf vf_div(vf a, vf b) { return _mm256_div_ps(a, b); }
static inline vf vf_sqrt(vf a) { return _mm256_sqrt_ps(a); }
static inline vf vf_neg(vf a) { return _mm256_sub_ps(_mm256_setzero_ps(), a); }
static inline vm vf_le(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_LE_OQ); }
static inline vm vf_lt(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
static inline vm vf_gt(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
static inline vm vf_eq(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
static inline vm vm_and(vm a, vm b) { return _mm256_and_ps(a, b); }
static inline vm vm_or(vm a, vm b) { return _mm256_or_ps(a, b); }
static inline vm vm_andnot(vm a, vm b) { return _mm256_andnot_ps(b, a); }
static inline int vm_any(vm a) { return _mm256_movemask_ps(a) != 0; }
static inline unsigned vm_bits(vm a) { return (unsigned)_mm256_movemask_ps(a); }
static inline vm vm_first(int n) { return _mm256_castsi256_ps(simd_lane_mask(n)); }
static inline vf vf_select(vm m, vf a, vf b) { return _mm256_blendv_ps(b, a, m); }
/* m ? acc + x : acc, as acc + (x & m): a masked lane adds +0, which leaves acc's bits
 * unchanged because acc starts at +0 and a round-to-nearest sum is never -0 unless both
 * terms are -0 (so acc is never -0, and acc + 0 == acc exactly, NaN and inf included). */
static inline vf vf_add_masked(vf acc, vm m, vf x)
{
    return _mm256_add_ps(acc, _mm256_and_ps(x, m));
}
static inline float vf_lane(vf v, int i)
{
    float t[8];
    _mm256_storeu_ps(t, v);
    return t[i];
}

#else
/* The scalar type, W = 1: the CPU's reference kernel, and the CUDA device code of src/gpu
 * (nvcc compiles this branch too: SIMD_FN makes the functions __host__ __device__, and on
 * the device division and square root are the explicitly rounded-to-nearest intrinsics,
 * IEEE whatever the compiler flags). */
#define VW 1
#if defined(__CUDA_ARCH__)
#define SIMD_DIV(a, b) __fdiv_rn(a, b)
#define SIMD_SQRT(a) __fsqrt_rn(a)
#else
#define SIMD_DIV(a, b) ((a) / (b))
#define SIMD_SQRT(a) __builtin_sqrtf(a)
#endif
typedef float vf;
typedef int vm;
SIMD_FN vf vf_set1(float x) { return x; }
SIMD_FN vf vf_zero(void) { return 0.0f; }
SIMD_FN vf vf_load_n(const float *p, int n) { return n > 0 ? *p : 0.0f; }
SIMD_FN void vf_store_n(float *p, vf v, int n)
{
    if (n > 0)
        *p = v;
}
SIMD_FN vf vf_add(vf a, vf b) { return a + b; }
SIMD_FN vf vf_sub(vf a, vf b) { return a - b; }
SIMD_FN vf vf_mul(vf a, vf b) { return a * b; }
SIMD_FN vf vf_div(vf a, vf b) { return SIMD_DIV(a, b); }
SIMD_FN vf vf_sqrt(vf a) { return SIMD_SQRT(a); }
SIMD_FN vf vf_neg(vf a) { return 0.0f - a; }
SIMD_FN vm vf_le(vf a, vf b) { return a <= b; }
SIMD_FN vm vf_lt(vf a, vf b) { return a < b; }
SIMD_FN vm vf_gt(vf a, vf b) { return a > b; }
SIMD_FN vm vf_eq(vf a, vf b) { return a == b; }
SIMD_FN vm vm_and(vm a, vm b) { return a & b; }
SIMD_FN vm vm_or(vm a, vm b) { return a | b; }
SIMD_FN vm vm_andnot(vm a, vm b) { return a & !b; }
SIMD_FN int vm_any(vm a) { return a != 0; }
SIMD_FN unsigned vm_bits(vm a) { return (unsigned)a; }
SIMD_FN vm vm_first(int n) { return n > 0; }
SIMD_FN vf vf_select(vm m, vf a, vf b) { return m ? a : b; }
SIMD_FN vf vf_add_masked(vf acc, vm m, vf x) { return m ? acc + x : acc; }
SIMD_FN float vf_lane(vf v, int i)
{
    (void)i;
    return v;
}
#endif

/* The scalar a vf is made of: float, or double in the float64 reference (sim/rules.h
 * writes its scalar arithmetic in it, so one source serves both precisions). */
#ifndef SIMD_SCALAR
#define SIMD_SCALAR float
#define SIMD_SCALAR_MAX 3.40282347e38f /* the largest finite scalar */
#define SIMD_SCALAR_DOWN 0x1p-70f      /* x * DOWN squared cannot overflow, for any finite x */
#endif
typedef SIMD_SCALAR vreal;

/* Three-component helpers on wide vectors. Dot products add x, y, z left to right. */
typedef struct vf3 {
    vf x, y, z;
} vf3;
SIMD_FN vf3 v3_set1(vreal x, vreal y, vreal z)
{
    vf3 r = {vf_set1(x), vf_set1(y), vf_set1(z)};
    return r;
}
SIMD_FN vf3 v3_zero(void)
{
    vf3 r = {vf_zero(), vf_zero(), vf_zero()};
    return r;
}
SIMD_FN vf3 v3_add(vf3 a, vf3 b)
{
    vf3 r = {vf_add(a.x, b.x), vf_add(a.y, b.y), vf_add(a.z, b.z)};
    return r;
}
SIMD_FN vf3 v3_sub(vf3 a, vf3 b)
{
    vf3 r = {vf_sub(a.x, b.x), vf_sub(a.y, b.y), vf_sub(a.z, b.z)};
    return r;
}
SIMD_FN vf3 v3_mul(vf3 a, vf s)
{
    vf3 r = {vf_mul(a.x, s), vf_mul(a.y, s), vf_mul(a.z, s)};
    return r;
}
SIMD_FN vf3 v3_div(vf3 a, vf s)
{
    vf3 r = {vf_div(a.x, s), vf_div(a.y, s), vf_div(a.z, s)};
    return r;
}
SIMD_FN vf v3_dot(vf3 a, vf3 b)
{
    return vf_add(vf_add(vf_mul(a.x, b.x), vf_mul(a.y, b.y)), vf_mul(a.z, b.z));
}
SIMD_FN vf3 v3_select(vm m, vf3 a, vf3 b)
{
    vf3 r = {vf_select(m, a.x, b.x), vf_select(m, a.y, b.y), vf_select(m, a.z, b.z)};
    return r;
}
/* acc + x where m, acc elsewhere (bit-exact "masked-out adds nothing"). Only for
 * accumulators that start at +0 (see vf_add_masked). */
SIMD_FN vf3 v3_add_masked(vf3 acc, vm m, vf3 x)
{
    vf3 r = {vf_add_masked(acc.x, m, x.x), vf_add_masked(acc.y, m, x.y),
             vf_add_masked(acc.z, m, x.z)};
    return r;
}
/* normalize(x), with normalize(0) = 0: x / |x| */
SIMD_FN vf3 v3_normalize(vf3 a)
{
    vf len = vf_sqrt(v3_dot(a, a));
    vm nz = vf_gt(len, vf_zero());
    return v3_select(nz, v3_div(a, len), v3_zero());
}
/* limit(x, m) = |x| > m ? x * (m / |x|) : x   (Boids.compute's limit, seed 003) */
SIMD_FN vf3 v3_limit(vf3 a, vf m)
{
    vf len = vf_sqrt(v3_dot(a, a));
    vm over = vm_and(vf_gt(len, m), vf_gt(len, vf_zero()));
    return v3_select(over, v3_mul(a, vf_div(m, len)), a);
}
/* |v| clamped to [lo, hi]: (v / |v|) * lo below, (v / |v|) * hi above; 0 stays 0. */
SIMD_FN vf3 v3_clamp_speed(vf3 a, vf lo, vf hi)
{
    vf len = vf_sqrt(v3_dot(a, a));
    vm nz = vf_gt(len, vf_zero());
    vf3 dir = v3_div(a, len);
    vm below = vm_and(nz, vf_lt(len, lo));
    vm above = vm_and(nz, vf_gt(len, hi));
    vf3 r = v3_select(below, v3_mul(dir, lo), a);
    r = v3_select(above, v3_mul(dir, hi), r);
    /* |v|^2 overflows (|v| beyond ~1.8e19, len infinite, dir 0): the direction of v * 2^-70
     * instead, whose square cannot overflow, so a huge velocity keeps its direction rather
     * than dropping to 0. Taken only for those lanes: no other bit changes. */
    vm huge = vf_gt(len, vf_set1(SIMD_SCALAR_MAX));
    if (vm_any(huge)) {
        vf3 s = v3_mul(a, vf_set1(SIMD_SCALAR_DOWN));
        vf3 sdir = v3_div(s, vf_sqrt(v3_dot(s, s)));
        r = v3_select(huge, v3_mul(sdir, hi), r);
    }
    return r;
}

#endif
