/* SPDX-License-Identifier: MIT */
/* The wide types the force kernels and the rasterizer are written against, and their scalar
 * twins. A file defines one of SIMD_AVX512 / SIMD_AVX2 (and is compiled with the matching -m
 * flags) or neither (scalar, VW = 1), then includes this. Every float operation is an IEEE
 * single-precision operation with round-to-nearest (no FMA, no approximate reciprocal or
 * square root), every integer operation is two's complement int32 that wraps (the scalar twin
 * computes in uint32, so it has no undefined overflow), and conversions are those of the x86
 * instructions (an out-of-range or NaN float converts to INT32_MIN in every branch): so lane
 * i of a wide op gives the same bits as the scalar op, which is what makes the kernels'
 * results identical across ISAs. Masks are per lane; vf_select/vi_select keep exact bits.
 *
 * Float: vf (VW floats). Integer: vi (VW int32). Mask: vm (one truth value per lane), from
 * the comparisons of either; vm_bits gives lane i as bit i. */
#ifndef SHOAL_CORE_SIMD_H
#define SHOAL_CORE_SIMD_H

#include <stddef.h>
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
 * src/verify (verify/real64.h: double; verify/real_bound.h: double with a rounding bound). The
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
/* lane i set when bit i of b is */
static inline vm vm_of_bits(unsigned b) { return (vm)b; }
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
static inline vf vf_load(const float *p) { return _mm512_loadu_ps(p); }
static inline void vf_store(float *p, vf v) { _mm512_storeu_ps(p, v); }
/* -a (the sign bit flipped, C's unary minus; vf_neg is 0 - a, which differs on +0) */
static inline vf vf_minus(vf a) { return _mm512_xor_ps(a, _mm512_set1_ps(-0.0f)); }
static inline vf vf_abs(vf a) { return _mm512_abs_ps(a); }
/* a > b ? a : b (the instruction's rule: b when either is NaN or both are zeros) */
static inline vf vf_max(vf a, vf b) { return _mm512_max_ps(a, b); }
/* a < b ? a : b (likewise) */
static inline vf vf_min(vf a, vf b) { return _mm512_min_ps(a, b); }
static inline vm vf_ge(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ); }
static inline int vm_all(vm a) { return a == (vm)0xFFFF; }
static inline int vm_count(vm a) { return __builtin_popcount((unsigned)a); }

typedef __m512i vi;
static inline vi vi_set1(int32_t x) { return _mm512_set1_epi32(x); }
/* lane i holds i */
static inline vi vi_lanes(void)
{
    return _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}
static inline vi vi_load(const int32_t *p) { return _mm512_loadu_si512((const void *)p); }
static inline void vi_store(int32_t *p, vi v) { _mm512_storeu_si512((void *)p, v); }
static inline vi vi_add(vi a, vi b) { return _mm512_add_epi32(a, b); }
static inline vi vi_sub(vi a, vi b) { return _mm512_sub_epi32(a, b); }
static inline vi vi_mul(vi a, vi b) { return _mm512_mullo_epi32(a, b); }
static inline vi vi_min(vi a, vi b) { return _mm512_min_epi32(a, b); }
static inline vi vi_max(vi a, vi b) { return _mm512_max_epi32(a, b); }
static inline vi vi_and(vi a, vi b) { return _mm512_and_si512(a, b); }
static inline vi vi_or(vi a, vi b) { return _mm512_or_si512(a, b); }
/* shifts by n in 0..31: arithmetic right, logical right, left */
static inline vi vi_sra(vi a, int n) { return _mm512_srai_epi32(a, (unsigned)n); }
static inline vi vi_srl(vi a, int n) { return _mm512_srli_epi32(a, (unsigned)n); }
static inline vi vi_sll(vi a, int n) { return _mm512_slli_epi32(a, (unsigned)n); }
static inline vm vi_gt(vi a, vi b) { return _mm512_cmpgt_epi32_mask(a, b); }
static inline vm vi_eq(vi a, vi b) { return _mm512_cmpeq_epi32_mask(a, b); }
/* (uint32_t)a < (uint32_t)b */
static inline vm vi_ltu(vi a, vi b) { return _mm512_cmplt_epu32_mask(a, b); }
static inline vi vi_select(vm m, vi a, vi b) { return _mm512_mask_blend_epi32(m, b, a); }
/* lane i = base[idx_i] */
static inline vi vi_gather(const int32_t *base, vi idx)
{
    return _mm512_i32gather_epi32(idx, (const void *)base, 4);
}
static inline vf vf_gather(const float *base, vi idx)
{
    return _mm512_i32gather_ps(idx, (const void *)base, 4);
}
/* (float)a; float -> int32 rounded to nearest even / truncated (INT32_MIN out of range) */
static inline vf vf_from_vi(vi a) { return _mm512_cvtepi32_ps(a); }
static inline vi vi_round(vf a) { return _mm512_cvtps_epi32(a); }
static inline vi vi_trunc(vf a) { return _mm512_cvttps_epi32(a); }
static inline int32_t vi_hmin(vi a) { return _mm512_reduce_min_epi32(a); }
static inline int32_t vi_hmax(vi a) { return _mm512_reduce_max_epi32(a); }
/* the wrapping sum of the lanes */
static inline int32_t vi_hsum(vi a) { return _mm512_reduce_add_epi32(a); }
/* the least / greatest lane (exact: any order of pairwise min / max gives it, the lanes being
 * neither NaN nor zeros of both signs where the caller relies on the bits) */
static inline float vf_hmin(vf a) { return _mm512_reduce_min_ps(a); }
static inline float vf_hmax(vf a) { return _mm512_reduce_max_ps(a); }
/* the first n lanes (0 <= n <= VW) stored at p, nothing past them */
static inline void vi_store_n(int32_t *p, vi v, int n)
{
    _mm512_mask_storeu_epi32((void *)p, (__mmask16)((1u << n) - 1u), v);
}
/* Appending the lanes of a mask, in lane order, at p: vm_perm once per mask, then vi_append /
 * vf_append per column, which may store a whole vector (the caller leaves VW values of slack
 * after p: what lies past the selected lanes is overwritten), or vi_append_n, which writes
 * exactly the k = popcount(mask) selected lanes. */
typedef vm vperm;
static inline vperm vm_perm(vm m) { return m; }
static inline void vi_append(int32_t *p, vperm m, vi v)
{
    _mm512_storeu_si512((void *)p, _mm512_maskz_compress_epi32(m, v));
}
static inline void vf_append(float *p, vperm m, vf v)
{
    _mm512_storeu_ps(p, _mm512_maskz_compress_ps(m, v));
}
/* Lanes 4k .. 4k + 3 = p[idx[k * stride]], k < VW / 4: a value per quarter of the lanes (the
 * cluster lists of sim/forces_cluster.h walk one candidate per cluster of 4 lanes). */
#define SIMD_HAS_QUADS 1
static inline vf vf_quads(const float *p, const uint32_t *idx, size_t stride)
{
    __m512 r = _mm512_set1_ps(p[idx[0]]);
    r = _mm512_insertf32x4(r, _mm_broadcast_ss(p + idx[stride]), 1);
    r = _mm512_insertf32x4(r, _mm_broadcast_ss(p + idx[2 * stride]), 2);
    return _mm512_insertf32x4(r, _mm_broadcast_ss(p + idx[3 * stride]), 3);
}
/* the same, writing exactly the k = popcount(m) selected lanes (no slack needed) */
static inline void vi_append_n(int32_t *p, vperm m, vi v, int k)
{
    _mm512_mask_storeu_epi32((void *)p, (__mmask16)((1u << k) - 1u),
                             _mm512_maskz_compress_epi32(m, v));
}
/* r[i] lane j <- r[j] lane i (VW x VW 32-bit transpose) */
static inline void vi_transpose(vi r[16])
{
    vi t[16], u[16];
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
    }
    /* u[4 g + c], 128-bit lane k: rows 4 g .. 4 g + 3 of column 4 k + c */
    for (int g = 0; g < 4; g++) {
        u[4 * g] = _mm512_unpacklo_epi64(t[4 * g], t[4 * g + 2]);
        u[4 * g + 1] = _mm512_unpackhi_epi64(t[4 * g], t[4 * g + 2]);
        u[4 * g + 2] = _mm512_unpacklo_epi64(t[4 * g + 1], t[4 * g + 3]);
        u[4 * g + 3] = _mm512_unpackhi_epi64(t[4 * g + 1], t[4 * g + 3]);
    }
    for (int c = 0; c < 4; c++) {
        vi a = _mm512_shuffle_i32x4(u[c], u[4 + c], 0x44),
           b = _mm512_shuffle_i32x4(u[c], u[4 + c], 0xEE);
        vi a2 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0x44);
        vi b2 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0xEE);
        r[c] = _mm512_shuffle_i32x4(a, a2, 0x88);
        r[4 + c] = _mm512_shuffle_i32x4(a, a2, 0xDD);
        r[8 + c] = _mm512_shuffle_i32x4(b, b2, 0x88);
        r[12 + c] = _mm512_shuffle_i32x4(b, b2, 0xDD);
    }
}
/* A block of rows: lane i = p[(i >> log2w) * stride + (i & (2^log2w - 1))], rows of
 * 2^log2w lanes (log2w = 2, 3 or 4: 4x4, 8x2, 16x1). */
static inline vf vf_load_rows(const float *p, size_t stride, int log2w)
{
    if (log2w == 4)
        return _mm512_loadu_ps(p);
    if (log2w == 3)
        return _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_loadu_ps(p)),
                                  _mm256_loadu_ps(p + stride), 1);
    __m512 v = _mm512_castps128_ps512(_mm_loadu_ps(p));
    v = _mm512_insertf32x4(v, _mm_loadu_ps(p + stride), 1);
    v = _mm512_insertf32x4(v, _mm_loadu_ps(p + 2 * stride), 2);
    return _mm512_insertf32x4(v, _mm_loadu_ps(p + 3 * stride), 3);
}
static inline void vf_store_rows(float *p, size_t stride, int log2w, vf v)
{
    if (log2w == 4) {
        _mm512_storeu_ps(p, v);
    } else if (log2w == 3) {
        _mm256_storeu_ps(p, _mm512_castps512_ps256(v));
        _mm256_storeu_ps(p + stride, _mm512_extractf32x8_ps(v, 1));
    } else {
        _mm_storeu_ps(p, _mm512_castps512_ps128(v));
        _mm_storeu_ps(p + stride, _mm512_extractf32x4_ps(v, 1));
        _mm_storeu_ps(p + 2 * stride, _mm512_extractf32x4_ps(v, 2));
        _mm_storeu_ps(p + 3 * stride, _mm512_extractf32x4_ps(v, 3));
    }
}
static inline vi vi_load_rows(const int32_t *p, size_t stride, int log2w)
{
    return _mm512_castps_si512(vf_load_rows((const float *)(const void *)p, stride, log2w));
}
static inline void vi_store_rows(int32_t *p, size_t stride, int log2w, vi v)
{
    vf_store_rows((float *)(void *)p, stride, log2w, _mm512_castsi512_ps(v));
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
static inline vm vm_of_bits(unsigned b)
{
    const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    __m256i v = _mm256_and_si256(_mm256_set1_epi32((int)b), bit);
    return _mm256_castsi256_ps(_mm256_cmpeq_epi32(v, bit));
}
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
static inline vf vf_load(const float *p) { return _mm256_loadu_ps(p); }
static inline void vf_store(float *p, vf v) { _mm256_storeu_ps(p, v); }
static inline vf vf_minus(vf a) { return _mm256_xor_ps(a, _mm256_set1_ps(-0.0f)); }
static inline vf vf_abs(vf a)
{
    return _mm256_and_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF)));
}
static inline vf vf_max(vf a, vf b) { return _mm256_max_ps(a, b); }
static inline vf vf_min(vf a, vf b) { return _mm256_min_ps(a, b); }
static inline vm vf_ge(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
static inline int vm_all(vm a) { return _mm256_movemask_ps(a) == 0xFF; }
static inline int vm_count(vm a) { return __builtin_popcount((unsigned)_mm256_movemask_ps(a)); }

typedef __m256i vi;
static inline vi vi_set1(int32_t x) { return _mm256_set1_epi32(x); }
static inline vi vi_lanes(void) { return _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7); }
static inline vi vi_load(const int32_t *p)
{
    return _mm256_loadu_si256((const __m256i *)(const void *)p);
}
static inline void vi_store(int32_t *p, vi v) { _mm256_storeu_si256((__m256i *)(void *)p, v); }
static inline vi vi_add(vi a, vi b) { return _mm256_add_epi32(a, b); }
static inline vi vi_sub(vi a, vi b) { return _mm256_sub_epi32(a, b); }
static inline vi vi_mul(vi a, vi b) { return _mm256_mullo_epi32(a, b); }
static inline vi vi_min(vi a, vi b) { return _mm256_min_epi32(a, b); }
static inline vi vi_max(vi a, vi b) { return _mm256_max_epi32(a, b); }
static inline vi vi_and(vi a, vi b) { return _mm256_and_si256(a, b); }
static inline vi vi_or(vi a, vi b) { return _mm256_or_si256(a, b); }
static inline vi vi_sra(vi a, int n) { return _mm256_srai_epi32(a, n); }
static inline vi vi_srl(vi a, int n) { return _mm256_srli_epi32(a, n); }
static inline vi vi_sll(vi a, int n) { return _mm256_slli_epi32(a, n); }
static inline vm vi_gt(vi a, vi b) { return _mm256_castsi256_ps(_mm256_cmpgt_epi32(a, b)); }
static inline vm vi_eq(vi a, vi b) { return _mm256_castsi256_ps(_mm256_cmpeq_epi32(a, b)); }
static inline vm vi_ltu(vi a, vi b)
{
    const __m256i bias = _mm256_set1_epi32((int)0x80000000u);
    return vi_gt(_mm256_xor_si256(b, bias), _mm256_xor_si256(a, bias));
}
static inline vi vi_select(vm m, vi a, vi b)
{
    return _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(b), _mm256_castsi256_ps(a), m));
}
static inline vi vi_gather(const int32_t *base, vi idx)
{
    return _mm256_i32gather_epi32((const int *)base, idx, 4);
}
static inline vf vf_gather(const float *base, vi idx) { return _mm256_i32gather_ps(base, idx, 4); }
static inline vf vf_from_vi(vi a) { return _mm256_cvtepi32_ps(a); }
static inline vi vi_round(vf a) { return _mm256_cvtps_epi32(a); }
static inline vi vi_trunc(vf a) { return _mm256_cvttps_epi32(a); }
static inline int32_t vi_hmin(vi a)
{
    __m128i m = _mm_min_epi32(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
    m = _mm_min_epi32(m, _mm_shuffle_epi32(m, 0x4E));
    m = _mm_min_epi32(m, _mm_shuffle_epi32(m, 0xB1));
    return _mm_cvtsi128_si32(m);
}
static inline int32_t vi_hmax(vi a)
{
    __m128i m = _mm_max_epi32(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
    m = _mm_max_epi32(m, _mm_shuffle_epi32(m, 0x4E));
    m = _mm_max_epi32(m, _mm_shuffle_epi32(m, 0xB1));
    return _mm_cvtsi128_si32(m);
}
static inline int32_t vi_hsum(vi a)
{
    __m128i h = _mm_add_epi32(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
    h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4E));
    h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0xB1));
    return _mm_cvtsi128_si32(h);
}
static inline float vf_hmin(vf a)
{
    a = _mm256_min_ps(a, _mm256_permute2f128_ps(a, a, 1));
    a = _mm256_min_ps(a, _mm256_shuffle_ps(a, a, 0x4E));
    return _mm256_cvtss_f32(_mm256_min_ps(a, _mm256_shuffle_ps(a, a, 0xB1)));
}
static inline float vf_hmax(vf a)
{
    a = _mm256_max_ps(a, _mm256_permute2f128_ps(a, a, 1));
    a = _mm256_max_ps(a, _mm256_shuffle_ps(a, a, 0x4E));
    return _mm256_cvtss_f32(_mm256_max_ps(a, _mm256_shuffle_ps(a, a, 0xB1)));
}
static inline void vi_store_n(int32_t *p, vi v, int n)
{
    _mm256_maskstore_epi32((int *)p, simd_lane_mask(n), v);
}
/* Appending by a permutation: entry m of the table lists the lanes of mask m in order, one
 * nibble each from the lowest; the whole permuted vector is stored (the lanes past the
 * selected ones are overwritten by the next append or fall in the caller's slack). */
typedef __m256i vperm;
static inline vperm vm_perm(vm m)
{
    static const uint32_t lanes_of[256] = {
        0x00000000, 0x00000000, 0x00000001, 0x00000010, 0x00000002, 0x00000020, 0x00000021,
        0x00000210, 0x00000003, 0x00000030, 0x00000031, 0x00000310, 0x00000032, 0x00000320,
        0x00000321, 0x00003210, 0x00000004, 0x00000040, 0x00000041, 0x00000410, 0x00000042,
        0x00000420, 0x00000421, 0x00004210, 0x00000043, 0x00000430, 0x00000431, 0x00004310,
        0x00000432, 0x00004320, 0x00004321, 0x00043210, 0x00000005, 0x00000050, 0x00000051,
        0x00000510, 0x00000052, 0x00000520, 0x00000521, 0x00005210, 0x00000053, 0x00000530,
        0x00000531, 0x00005310, 0x00000532, 0x00005320, 0x00005321, 0x00053210, 0x00000054,
        0x00000540, 0x00000541, 0x00005410, 0x00000542, 0x00005420, 0x00005421, 0x00054210,
        0x00000543, 0x00005430, 0x00005431, 0x00054310, 0x00005432, 0x00054320, 0x00054321,
        0x00543210, 0x00000006, 0x00000060, 0x00000061, 0x00000610, 0x00000062, 0x00000620,
        0x00000621, 0x00006210, 0x00000063, 0x00000630, 0x00000631, 0x00006310, 0x00000632,
        0x00006320, 0x00006321, 0x00063210, 0x00000064, 0x00000640, 0x00000641, 0x00006410,
        0x00000642, 0x00006420, 0x00006421, 0x00064210, 0x00000643, 0x00006430, 0x00006431,
        0x00064310, 0x00006432, 0x00064320, 0x00064321, 0x00643210, 0x00000065, 0x00000650,
        0x00000651, 0x00006510, 0x00000652, 0x00006520, 0x00006521, 0x00065210, 0x00000653,
        0x00006530, 0x00006531, 0x00065310, 0x00006532, 0x00065320, 0x00065321, 0x00653210,
        0x00000654, 0x00006540, 0x00006541, 0x00065410, 0x00006542, 0x00065420, 0x00065421,
        0x00654210, 0x00006543, 0x00065430, 0x00065431, 0x00654310, 0x00065432, 0x00654320,
        0x00654321, 0x06543210, 0x00000007, 0x00000070, 0x00000071, 0x00000710, 0x00000072,
        0x00000720, 0x00000721, 0x00007210, 0x00000073, 0x00000730, 0x00000731, 0x00007310,
        0x00000732, 0x00007320, 0x00007321, 0x00073210, 0x00000074, 0x00000740, 0x00000741,
        0x00007410, 0x00000742, 0x00007420, 0x00007421, 0x00074210, 0x00000743, 0x00007430,
        0x00007431, 0x00074310, 0x00007432, 0x00074320, 0x00074321, 0x00743210, 0x00000075,
        0x00000750, 0x00000751, 0x00007510, 0x00000752, 0x00007520, 0x00007521, 0x00075210,
        0x00000753, 0x00007530, 0x00007531, 0x00075310, 0x00007532, 0x00075320, 0x00075321,
        0x00753210, 0x00000754, 0x00007540, 0x00007541, 0x00075410, 0x00007542, 0x00075420,
        0x00075421, 0x00754210, 0x00007543, 0x00075430, 0x00075431, 0x00754310, 0x00075432,
        0x00754320, 0x00754321, 0x07543210, 0x00000076, 0x00000760, 0x00000761, 0x00007610,
        0x00000762, 0x00007620, 0x00007621, 0x00076210, 0x00000763, 0x00007630, 0x00007631,
        0x00076310, 0x00007632, 0x00076320, 0x00076321, 0x00763210, 0x00000764, 0x00007640,
        0x00007641, 0x00076410, 0x00007642, 0x00076420, 0x00076421, 0x00764210, 0x00007643,
        0x00076430, 0x00076431, 0x00764310, 0x00076432, 0x00764320, 0x00764321, 0x07643210,
        0x00000765, 0x00007650, 0x00007651, 0x00076510, 0x00007652, 0x00076520, 0x00076521,
        0x00765210, 0x00007653, 0x00076530, 0x00076531, 0x00765310, 0x00076532, 0x00765320,
        0x00765321, 0x07653210, 0x00007654, 0x00076540, 0x00076541, 0x00765410, 0x00076542,
        0x00765420, 0x00765421, 0x07654210, 0x00076543, 0x00765430, 0x00765431, 0x07654310,
        0x00765432, 0x07654320, 0x07654321, 0x76543210,
    };
    const __m256i shift = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
    __m256i v = _mm256_srlv_epi32(_mm256_set1_epi32((int)lanes_of[_mm256_movemask_ps(m)]), shift);
    return _mm256_and_si256(v, _mm256_set1_epi32(7));
}
static inline void vi_append(int32_t *p, vperm m, vi v)
{
    vi_store(p, _mm256_permutevar8x32_epi32(v, m));
}
static inline void vf_append(float *p, vperm m, vf v)
{
    _mm256_storeu_ps(p, _mm256_permutevar8x32_ps(v, m));
}
/* Lanes 4k .. 4k + 3 = p[idx[k * stride]], k < VW / 4 (AVX-512's vf_quads) */
#define SIMD_HAS_QUADS 1
static inline vf vf_quads(const float *p, const uint32_t *idx, size_t stride)
{
    return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_broadcast_ss(p + idx[0])),
                                _mm_broadcast_ss(p + idx[stride]), 1);
}
static inline void vi_append_n(int32_t *p, vperm m, vi v, int k)
{
    _mm256_maskstore_epi32((int *)p, _mm256_castps_si256(vm_first(k)),
                           _mm256_permutevar8x32_epi32(v, m));
}
static inline void vi_transpose(vi r[8])
{
    __m256 t[8], u[8];
    for (int i = 0; i < 4; i++) {
        t[2 * i] =
            _mm256_unpacklo_ps(_mm256_castsi256_ps(r[2 * i]), _mm256_castsi256_ps(r[2 * i + 1]));
        t[2 * i + 1] =
            _mm256_unpackhi_ps(_mm256_castsi256_ps(r[2 * i]), _mm256_castsi256_ps(r[2 * i + 1]));
    }
    for (int g = 0; g < 2; g++) {
        u[4 * g] = _mm256_shuffle_ps(t[4 * g], t[4 * g + 2], 0x44);
        u[4 * g + 1] = _mm256_shuffle_ps(t[4 * g], t[4 * g + 2], 0xEE);
        u[4 * g + 2] = _mm256_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0x44);
        u[4 * g + 3] = _mm256_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0xEE);
    }
    for (int c = 0; c < 4; c++) {
        r[c] = _mm256_castps_si256(_mm256_permute2f128_ps(u[c], u[4 + c], 0x20));
        r[4 + c] = _mm256_castps_si256(_mm256_permute2f128_ps(u[c], u[4 + c], 0x31));
    }
}
/* rows of 2^log2w lanes (log2w = 2 or 3: 4x2, 8x1) */
static inline vf vf_load_rows(const float *p, size_t stride, int log2w)
{
    if (log2w == 3)
        return _mm256_loadu_ps(p);
    return _mm256_set_m128(_mm_loadu_ps(p + stride), _mm_loadu_ps(p));
}
static inline void vf_store_rows(float *p, size_t stride, int log2w, vf v)
{
    if (log2w == 3) {
        _mm256_storeu_ps(p, v);
    } else {
        _mm_storeu_ps(p, _mm256_castps256_ps128(v));
        _mm_storeu_ps(p + stride, _mm256_extractf128_ps(v, 1));
    }
}
static inline vi vi_load_rows(const int32_t *p, size_t stride, int log2w)
{
    return _mm256_castps_si256(vf_load_rows((const float *)(const void *)p, stride, log2w));
}
static inline void vi_store_rows(int32_t *p, size_t stride, int log2w, vi v)
{
    vf_store_rows((float *)(void *)p, stride, log2w, _mm256_castsi256_ps(v));
}

#elif defined(SIMD_NEON)
/* NEON (AArch64 Advanced SIMD, part of every ARMv8-A core): a vector of VW = 4 SIMD_NEON_WORDS
 * lanes is SIMD_NEON_WORDS 128-bit words (1, 2 or 4: 4, 8 or 16 lanes; the file that includes
 * this picks it). Every operation works word by word, lane i in word i / 4. What
 * NEON does differently from x86 is done the x86 way here: max/min by comparison (FMAX
 * returns NaN and orders the zeros), conversions to int32 give INT32_MIN out of range or on
 * NaN (FCVTZS/FCVTNS saturate and give 0 for NaN), -a flips the sign bit by an integer XOR
 * (FNEG keeps a NaN's sign under FPCR.AH), masked adds select (no -0 argument needed).
 * Division and square root are the IEEE instructions; -ffp-contract=off keeps FMLA out. */
#include <arm_neon.h>
#if !defined(SIMD_NEON_WORDS) ||                                                                   \
    (SIMD_NEON_WORDS != 1 && SIMD_NEON_WORDS != 2 && SIMD_NEON_WORDS != 4)
#error "SIMD_NEON_WORDS must be 1, 2 or 4 (128-bit words per vector)"
#endif
#define SIMD_NW SIMD_NEON_WORDS
/* Every function here, and the vf3 helpers below, always inlined: a vector of two or four
 * words is a struct, which gcc's inliner weighs as much larger than one register, and
 * left to itself it kept v3_add, v3_dot ... and the rules' pair functions out of line, each
 * call passing its vectors through memory (2.5x the instructions of a step at 8 lanes). */
#define SIMD_NEON_FN static inline __attribute__((always_inline))
#undef SIMD_FN
#define SIMD_FN SIMD_NEON_FN
#define VW (4 * SIMD_NW)
typedef struct vf {
    float32x4_t w[SIMD_NW];
} vf;
typedef struct vm {
    uint32x4_t w[SIMD_NW];
} vm;
typedef struct vi {
    int32x4_t w[SIMD_NW];
} vi;
/* STMT for every word k = 0 .. SIMD_NW - 1, written out (not a loop: gcc weighs a loop over
 * the words, before it unrolls it, as a loop with memory accesses, and stops inlining) */
#define SIMD_K(n, stmt)                                                                            \
    {                                                                                              \
        const int k __attribute__((unused)) = (n);                                                 \
        stmt;                                                                                      \
    }
#if SIMD_NW == 1
#define SIMD_FOR(stmt)                                                                             \
    do {                                                                                           \
        SIMD_K(0, stmt)                                                                            \
    } while (0)
#elif SIMD_NW == 2
#define SIMD_FOR(stmt)                                                                             \
    do {                                                                                           \
        SIMD_K(0, stmt) SIMD_K(1, stmt)                                                            \
    } while (0)
#else
#define SIMD_FOR(stmt)                                                                             \
    do {                                                                                           \
        SIMD_K(0, stmt) SIMD_K(1, stmt) SIMD_K(2, stmt) SIMD_K(3, stmt)                            \
    } while (0)
#endif
/* r.w[k] = EXPR for every word k (EXPR names k) */
#define SIMD_EACH(r, expr) SIMD_FOR((r).w[k] = (expr))
SIMD_NEON_FN uint32x4_t simd_word_lanes(int k)
{
    const uint32x4_t base = {0, 1, 2, 3};
    return vaddq_u32(base, vdupq_n_u32(4u * (unsigned)k));
}
SIMD_NEON_FN vf vf_set1(float x)
{
    vf r;
    SIMD_EACH(r, vdupq_n_f32(x));
    return r;
}
SIMD_NEON_FN vf vf_zero(void) { return vf_set1(0.0f); }
SIMD_NEON_FN vf vf_load(const float *p)
{
    vf r;
    SIMD_EACH(r, vld1q_f32(p + 4 * k));
    return r;
}
SIMD_NEON_FN void vf_store(float *p, vf v) { SIMD_FOR(vst1q_f32(p + 4 * k, v.w[k])); }
/* the first n lanes from p, the others 0; reads p[0 .. n) only */
SIMD_NEON_FN vf vf_load_n(const float *p, int n)
{
    if (n >= VW)
        return vf_load(p);
    float t[VW] = {0};
    for (int i = 0; i < n; i++)
        t[i] = p[i];
    return vf_load(t);
}
SIMD_NEON_FN void vf_store_n(float *p, vf v, int n)
{
    if (n >= VW) {
        vf_store(p, v);
        return;
    }
    float t[VW];
    vf_store(t, v);
    for (int i = 0; i < n; i++)
        p[i] = t[i];
}
SIMD_NEON_FN vf vf_add(vf a, vf b)
{
    vf r;
    SIMD_EACH(r, vaddq_f32(a.w[k], b.w[k]));
    return r;
}
SIMD_NEON_FN vf vf_sub(vf a, vf b)
{
    vf r;
    SIMD_EACH(r, vsubq_f32(a.w[k], b.w[k]));
    return r;
}
SIMD_NEON_FN vf vf_mul(vf a, vf b)
{
    vf r;
    SIMD_EACH(r, vmulq_f32(a.w[k], b.w[k]));
    return r;
}
SIMD_NEON_FN vf vf_div(vf a, vf b)
{
    vf r;
    SIMD_EACH(r, vdivq_f32(a.w[k], b.w[k]));
    return r;
}
SIMD_NEON_FN vf vf_sqrt(vf a)
{
    vf r;
    SIMD_EACH(r, vsqrtq_f32(a.w[k]));
    return r;
}
SIMD_NEON_FN vf vf_neg(vf a) { return vf_sub(vf_zero(), a); }
SIMD_NEON_FN vm vf_le(vf a, vf b)
{
    vm r;
    SIMD_EACH(r, vcleq_f32(a.w[k], b.w[k]));
    return r;
}
SIMD_NEON_FN vm vf_lt(vf a, vf b)
{
    vm r;
    SIMD_EACH(r, vcltq_f32(a.w[k], b.w[k]));
    return r;
}
SIMD_NEON_FN vm vf_gt(vf a, vf b)
{
    vm r;
    SIMD_EACH(r, vcgtq_f32(a.w[k], b.w[k]));
    return r;
}
SIMD_NEON_FN vm vf_eq(vf a, vf b)
{
    vm r;
    SIMD_EACH(r, vceqq_f32(a.w[k], b.w[k]));
    return r;
}
SIMD_NEON_FN vm vf_ge(vf a, vf b)
{
    vm r;
    SIMD_EACH(r, vcgeq_f32(a.w[k], b.w[k]));
    return r;
}
SIMD_NEON_FN vm vm_and(vm a, vm b)
{
    vm r;
    SIMD_EACH(r, vandq_u32(a.w[k], b.w[k]));
    return r;
}
SIMD_NEON_FN vm vm_or(vm a, vm b)
{
    vm r;
    SIMD_EACH(r, vorrq_u32(a.w[k], b.w[k]));
    return r;
}
/* a and not b */
SIMD_NEON_FN vm vm_andnot(vm a, vm b)
{
    vm r;
    SIMD_EACH(r, vbicq_u32(a.w[k], b.w[k]));
    return r;
}
SIMD_NEON_FN int vm_any(vm a)
{
    uint32x4_t o = a.w[0];
    SIMD_FOR(if (k > 0) o = vorrq_u32(o, a.w[k]));
    return vmaxvq_u32(o) != 0;
}
SIMD_NEON_FN int vm_all(vm a)
{
    uint32x4_t o = a.w[0];
    SIMD_FOR(if (k > 0) o = vandq_u32(o, a.w[k]));
    return vminvq_u32(o) != 0;
}
SIMD_NEON_FN unsigned vm_bits(vm a)
{
    const uint32x4_t bit = {1, 2, 4, 8};
    unsigned b = 0;
    SIMD_FOR(b |= vaddvq_u32(vandq_u32(a.w[k], bit)) << (4 * k));
    return b;
}
SIMD_NEON_FN int vm_count(vm a)
{
    uint32x4_t s = vshrq_n_u32(a.w[0], 31);
    SIMD_FOR(if (k > 0) s = vaddq_u32(s, vshrq_n_u32(a.w[k], 31)));
    return (int)vaddvq_u32(s);
}
SIMD_NEON_FN vm vm_first(int n)
{
    vm r;
    SIMD_EACH(r, vcltq_u32(simd_word_lanes(k), vdupq_n_u32((uint32_t)(n < 0 ? 0 : n))));
    return r;
}
/* lane i set when bit i of b is */
SIMD_NEON_FN vm vm_of_bits(unsigned b)
{
    const uint32x4_t bit = {1, 2, 4, 8};
    vm r;
    SIMD_EACH(r, vtstq_u32(vdupq_n_u32(b >> (4 * k)), bit));
    return r;
}
/* m ? a : b, lane by lane */
SIMD_NEON_FN vf vf_select(vm m, vf a, vf b)
{
    vf r;
    SIMD_EACH(r, vbslq_f32(m.w[k], a.w[k], b.w[k]));
    return r;
}
/* m ? acc + x : acc (exactly; no condition on acc) */
SIMD_NEON_FN vf vf_add_masked(vf acc, vm m, vf x)
{
    vf r;
    SIMD_EACH(r, vbslq_f32(m.w[k], vaddq_f32(acc.w[k], x.w[k]), acc.w[k]));
    return r;
}
SIMD_NEON_FN float vf_lane(vf v, int i)
{
    float t[VW];
    vf_store(t, v);
    return t[i];
}
/* -a (the sign bit flipped, C's unary minus; vf_neg is 0 - a, which differs on +0) */
SIMD_NEON_FN vf vf_minus(vf a)
{
    vf r;
    SIMD_EACH(r, vreinterpretq_f32_u32(
                     veorq_u32(vreinterpretq_u32_f32(a.w[k]), vdupq_n_u32(0x80000000u))));
    return r;
}
SIMD_NEON_FN vf vf_abs(vf a)
{
    vf r;
    SIMD_EACH(r, vreinterpretq_f32_u32(
                     vandq_u32(vreinterpretq_u32_f32(a.w[k]), vdupq_n_u32(0x7FFFFFFFu))));
    return r;
}
/* a > b ? a : b (x86's rule: b when either is NaN or both are zeros) */
SIMD_NEON_FN vf vf_max(vf a, vf b)
{
    vf r;
    SIMD_EACH(r, vbslq_f32(vcgtq_f32(a.w[k], b.w[k]), a.w[k], b.w[k]));
    return r;
}
/* a < b ? a : b (likewise) */
SIMD_NEON_FN vf vf_min(vf a, vf b)
{
    vf r;
    SIMD_EACH(r, vbslq_f32(vcltq_f32(a.w[k], b.w[k]), a.w[k], b.w[k]));
    return r;
}

SIMD_NEON_FN vi vi_set1(int32_t x)
{
    vi r;
    SIMD_EACH(r, vdupq_n_s32(x));
    return r;
}
/* lane i holds i */
SIMD_NEON_FN vi vi_lanes(void)
{
    vi r;
    SIMD_EACH(r, vreinterpretq_s32_u32(simd_word_lanes(k)));
    return r;
}
SIMD_NEON_FN vi vi_load(const int32_t *p)
{
    vi r;
    SIMD_EACH(r, vld1q_s32(p + 4 * k));
    return r;
}
SIMD_NEON_FN void vi_store(int32_t *p, vi v) { SIMD_FOR(vst1q_s32(p + 4 * k, v.w[k])); }
/* the first n lanes to p; writes p[0 .. n) only */
SIMD_NEON_FN void vi_store_n(int32_t *p, vi v, int n)
{
    if (n >= VW) {
        vi_store(p, v);
        return;
    }
    int32_t t[VW];
    vi_store(t, v);
    for (int i = 0; i < n; i++)
        p[i] = t[i];
}
SIMD_NEON_FN vi vi_add(vi a, vi b)
{
    vi r;
    SIMD_EACH(r, vaddq_s32(a.w[k], b.w[k]));
    return r;
}
SIMD_NEON_FN vi vi_sub(vi a, vi b)
{
    vi r;
    SIMD_EACH(r, vsubq_s32(a.w[k], b.w[k]));
    return r;
}
/* the low 32 bits of the product (wraps, as vpmulld) */
SIMD_NEON_FN vi vi_mul(vi a, vi b)
{
    vi r;
    SIMD_EACH(r, vmulq_s32(a.w[k], b.w[k]));
    return r;
}
SIMD_NEON_FN vi vi_min(vi a, vi b)
{
    vi r;
    SIMD_EACH(r, vminq_s32(a.w[k], b.w[k]));
    return r;
}
SIMD_NEON_FN vi vi_max(vi a, vi b)
{
    vi r;
    SIMD_EACH(r, vmaxq_s32(a.w[k], b.w[k]));
    return r;
}
SIMD_NEON_FN vi vi_and(vi a, vi b)
{
    vi r;
    SIMD_EACH(r, vandq_s32(a.w[k], b.w[k]));
    return r;
}
SIMD_NEON_FN vi vi_or(vi a, vi b)
{
    vi r;
    SIMD_EACH(r, vorrq_s32(a.w[k], b.w[k]));
    return r;
}
/* shifts by n in 0..31 (SSHL/USHL by a register: a negative count shifts right) */
SIMD_NEON_FN vi vi_sra(vi a, int n)
{
    vi r;
    SIMD_EACH(r, vshlq_s32(a.w[k], vdupq_n_s32(-n)));
    return r;
}
SIMD_NEON_FN vi vi_srl(vi a, int n)
{
    vi r;
    SIMD_EACH(r, vreinterpretq_s32_u32(vshlq_u32(vreinterpretq_u32_s32(a.w[k]), vdupq_n_s32(-n))));
    return r;
}
SIMD_NEON_FN vi vi_sll(vi a, int n)
{
    vi r;
    SIMD_EACH(r, vshlq_s32(a.w[k], vdupq_n_s32(n)));
    return r;
}
SIMD_NEON_FN vm vi_gt(vi a, vi b)
{
    vm r;
    SIMD_EACH(r, vcgtq_s32(a.w[k], b.w[k]));
    return r;
}
SIMD_NEON_FN vm vi_eq(vi a, vi b)
{
    vm r;
    SIMD_EACH(r, vceqq_s32(a.w[k], b.w[k]));
    return r;
}
/* (uint32_t)a < (uint32_t)b */
SIMD_NEON_FN vm vi_ltu(vi a, vi b)
{
    vm r;
    SIMD_EACH(r, vcltq_u32(vreinterpretq_u32_s32(a.w[k]), vreinterpretq_u32_s32(b.w[k])));
    return r;
}
SIMD_NEON_FN vi vi_select(vm m, vi a, vi b)
{
    vi r;
    SIMD_EACH(r, vbslq_s32(m.w[k], a.w[k], b.w[k]));
    return r;
}
/* lane i = base[idx_i] (NEON has no gather: lane by lane) */
SIMD_NEON_FN vi vi_gather(const int32_t *base, vi idx)
{
    int32_t i[VW], t[VW];
    vi_store(i, idx);
    for (int l = 0; l < VW; l++)
        t[l] = base[i[l]];
    return vi_load(t);
}
SIMD_NEON_FN vf vf_gather(const float *base, vi idx)
{
    int32_t i[VW];
    float t[VW];
    vi_store(i, idx);
    for (int l = 0; l < VW; l++)
        t[l] = base[i[l]];
    return vf_load(t);
}
/* (float)a, rounded to nearest (SCVTF, as cvtdq2ps) */
SIMD_NEON_FN vf vf_from_vi(vi a)
{
    vf r;
    SIMD_EACH(r, vcvtq_f32_s32(a.w[k]));
    return r;
}
/* float -> int32 rounded to nearest even (FCVTNS) / truncated (FCVTZS); x86 gives INT32_MIN
 * for NaN and out of range, so lanes outside (-2^31, 2^31) are set to it */
SIMD_NEON_FN uint32x4_t simd_in_int32(float32x4_t a)
{
    return vandq_u32(vcgtq_f32(a, vdupq_n_f32(-2147483648.0f)),
                     vcltq_f32(a, vdupq_n_f32(2147483648.0f)));
}
SIMD_NEON_FN vi vi_round(vf a)
{
    vi r;
    SIMD_EACH(r, vbslq_s32(simd_in_int32(a.w[k]), vcvtnq_s32_f32(a.w[k]), vdupq_n_s32(INT32_MIN)));
    return r;
}
SIMD_NEON_FN vi vi_trunc(vf a)
{
    vi r;
    SIMD_EACH(r, vbslq_s32(simd_in_int32(a.w[k]), vcvtq_s32_f32(a.w[k]), vdupq_n_s32(INT32_MIN)));
    return r;
}
SIMD_NEON_FN int32_t vi_hmin(vi a)
{
    int32x4_t m = a.w[0];
    SIMD_FOR(if (k > 0) m = vminq_s32(m, a.w[k]));
    return vminvq_s32(m);
}
SIMD_NEON_FN int32_t vi_hmax(vi a)
{
    int32x4_t m = a.w[0];
    SIMD_FOR(if (k > 0) m = vmaxq_s32(m, a.w[k]));
    return vmaxvq_s32(m);
}
/* the word's sum (integer adds wrap as the other branches'), least and greatest lane: the
 * force kernel's lane counts and its group's box (forces_kernel.h lane_sum, lane_box) */
SIMD_NEON_FN int32_t vi_hsum(vi a)
{
    int32x4_t m = a.w[0];
    SIMD_FOR(if (k > 0) m = vaddq_s32(m, a.w[k]));
    return vaddvq_s32(m);
}
/* min and max are exact whatever the order (the box filter's bounds) */
SIMD_NEON_FN float vf_hmin(vf a)
{
    float32x4_t m = a.w[0];
    SIMD_FOR(if (k > 0) m = vminq_f32(m, a.w[k]));
    return vminvq_f32(m);
}
SIMD_NEON_FN float vf_hmax(vf a)
{
    float32x4_t m = a.w[0];
    SIMD_FOR(if (k > 0) m = vmaxq_f32(m, a.w[k]));
    return vmaxvq_f32(m);
}
/* Appending by a permutation: per word, the byte indices (TBL) that pack its selected lanes
 * to the front, and how many there are; vi_append stores each packed word at the running
 * position (a whole word: what lies past the selected lanes falls in the caller's slack of
 * VW values or is overwritten by the next word). */
typedef struct vperm {
    uint8x16_t idx[SIMD_NW];
    int count[SIMD_NW];
} vperm;
SIMD_NEON_FN vperm vm_perm(vm m)
{
    /* bytes_of[b]: the TBL indices that move the lanes of the 4-bit mask b, in order, to
     * the front of a word */
    static const uint8_t bytes_of[16][16] = {
        {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
        {0, 1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
        {4, 5, 6, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
        {0, 1, 2, 3, 4, 5, 6, 7, 0, 0, 0, 0, 0, 0, 0, 0},
        {8, 9, 10, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
        {0, 1, 2, 3, 8, 9, 10, 11, 0, 0, 0, 0, 0, 0, 0, 0},
        {4, 5, 6, 7, 8, 9, 10, 11, 0, 0, 0, 0, 0, 0, 0, 0},
        {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0, 0, 0, 0},
        {12, 13, 14, 15, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
        {0, 1, 2, 3, 12, 13, 14, 15, 0, 0, 0, 0, 0, 0, 0, 0},
        {4, 5, 6, 7, 12, 13, 14, 15, 0, 0, 0, 0, 0, 0, 0, 0},
        {0, 1, 2, 3, 4, 5, 6, 7, 12, 13, 14, 15, 0, 0, 0, 0},
        {8, 9, 10, 11, 12, 13, 14, 15, 0, 0, 0, 0, 0, 0, 0, 0},
        {0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 0, 0, 0, 0},
        {4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 0, 0, 0},
        {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}};
    const uint32x4_t bit = {1, 2, 4, 8};
    vperm p;
    SIMD_FOR(unsigned b = vaddvq_u32(vandq_u32(m.w[k], bit)); p.idx[k] = vld1q_u8(bytes_of[b]);
             p.count[k] = __builtin_popcount(b));
    return p;
}
SIMD_NEON_FN void vi_append(int32_t *p, vperm m, vi v)
{
    SIMD_FOR(vst1q_s32(p, vreinterpretq_s32_u8(vqtbl1q_u8(vreinterpretq_u8_s32(v.w[k]), m.idx[k])));
             p += m.count[k]);
}
SIMD_NEON_FN void vf_append(float *p, vperm m, vf v)
{
    SIMD_FOR(vst1q_f32(p, vreinterpretq_f32_u8(vqtbl1q_u8(vreinterpretq_u8_f32(v.w[k]), m.idx[k])));
             p += m.count[k]);
}
/* the same, writing exactly the k = popcount(m) selected lanes (no slack needed) */
SIMD_NEON_FN void vi_append_n(int32_t *p, vperm m, vi v, int n)
{
    int32_t t[VW + 4];
    vi_append(t, m, v);
    for (int i = 0; i < n; i++)
        p[i] = t[i];
}
/* r[i] lane j <- r[j] lane i (VW x VW 32-bit transpose): 4x4 blocks, block (a, b) of the
 * input (rows 4 a .., word b) transposed into block (b, a) */
SIMD_NEON_FN int32x4x4_t simd_transpose4(int32x4_t r0, int32x4_t r1, int32x4_t r2, int32x4_t r3)
{
    int32x4_t t0 = vtrn1q_s32(r0, r1), t1 = vtrn2q_s32(r0, r1);
    int32x4_t t2 = vtrn1q_s32(r2, r3), t3 = vtrn2q_s32(r2, r3);
    int32x4x4_t o;
    o.val[0] =
        vreinterpretq_s32_s64(vtrn1q_s64(vreinterpretq_s64_s32(t0), vreinterpretq_s64_s32(t2)));
    o.val[1] =
        vreinterpretq_s32_s64(vtrn1q_s64(vreinterpretq_s64_s32(t1), vreinterpretq_s64_s32(t3)));
    o.val[2] =
        vreinterpretq_s32_s64(vtrn2q_s64(vreinterpretq_s64_s32(t0), vreinterpretq_s64_s32(t2)));
    o.val[3] =
        vreinterpretq_s32_s64(vtrn2q_s64(vreinterpretq_s64_s32(t1), vreinterpretq_s64_s32(t3)));
    return o;
}
SIMD_NEON_FN void vi_transpose(vi r[VW])
{
    vi t[VW];
    for (int a = 0; a < SIMD_NW; a++)
        for (int b = 0; b < SIMD_NW; b++) {
            int32x4x4_t o = simd_transpose4(r[4 * a].w[b], r[4 * a + 1].w[b], r[4 * a + 2].w[b],
                                            r[4 * a + 3].w[b]);
            for (int i = 0; i < 4; i++)
                t[4 * b + i].w[a] = o.val[i];
        }
    for (int i = 0; i < VW; i++)
        r[i] = t[i];
}
/* A block of rows: lane i = p[(i >> log2w) * stride + (i & (2^log2w - 1))], rows of 2^log2w
 * lanes (2 <= log2w <= log2 VW): word k is 4 lanes of one row. */
SIMD_NEON_FN const float *simd_row_word(const float *p, size_t stride, int log2w, int k)
{
    unsigned l = 4u * (unsigned)k;
    return p + (size_t)(l >> log2w) * stride + (l & ((1u << log2w) - 1u));
}
SIMD_NEON_FN vf vf_load_rows(const float *p, size_t stride, int log2w)
{
    vf r;
    SIMD_EACH(r, vld1q_f32(simd_row_word(p, stride, log2w, k)));
    return r;
}
SIMD_NEON_FN void vf_store_rows(float *p, size_t stride, int log2w, vf v)
{
    SIMD_FOR(vst1q_f32((float *)(uintptr_t)simd_row_word(p, stride, log2w, k), v.w[k]));
}
SIMD_NEON_FN vi vi_load_rows(const int32_t *p, size_t stride, int log2w)
{
    vi r;
    SIMD_EACH(r, vld1q_s32((const int32_t *)(const void *)simd_row_word(
                     (const float *)(const void *)p, stride, log2w, k)));
    return r;
}
SIMD_NEON_FN void vi_store_rows(int32_t *p, size_t stride, int log2w, vi v)
{
    SIMD_FOR(vst1q_s32(
        (int32_t *)(uintptr_t)simd_row_word((const float *)(const void *)p, stride, log2w, k),
        v.w[k]));
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
SIMD_FN vm vm_of_bits(unsigned b) { return (vm)(b & 1u); }
SIMD_FN vf vf_select(vm m, vf a, vf b) { return m ? a : b; }
SIMD_FN vf vf_add_masked(vf acc, vm m, vf x) { return m ? acc + x : acc; }
SIMD_FN float vf_lane(vf v, int i)
{
    (void)i;
    return v;
}
/* The scalar integer twin (the CPU's; the GPU uses the float part). Arithmetic is done in
 * uint32 so that it wraps as the vector instructions do. */
static inline vf vf_load(const float *p) { return *p; }
static inline void vf_store(float *p, vf v) { *p = v; }
static inline vf vf_minus(vf a) { return -a; }
static inline vf vf_abs(vf a) { return __builtin_fabsf(a); }
static inline vf vf_max(vf a, vf b) { return a > b ? a : b; }
static inline vf vf_min(vf a, vf b) { return a < b ? a : b; }
static inline vm vf_ge(vf a, vf b) { return a >= b; }
static inline int vm_all(vm a) { return a != 0; }
static inline int vm_count(vm a) { return a != 0; }

typedef int32_t vi;
static inline vi vi_set1(int32_t x) { return x; }
static inline vi vi_lanes(void) { return 0; }
static inline vi vi_load(const int32_t *p) { return *p; }
static inline void vi_store(int32_t *p, vi v) { *p = v; }
static inline vi vi_add(vi a, vi b) { return (int32_t)((uint32_t)a + (uint32_t)b); }
static inline vi vi_sub(vi a, vi b) { return (int32_t)((uint32_t)a - (uint32_t)b); }
static inline vi vi_mul(vi a, vi b) { return (int32_t)((uint32_t)a * (uint32_t)b); }
static inline vi vi_min(vi a, vi b) { return a < b ? a : b; }
static inline vi vi_max(vi a, vi b) { return a > b ? a : b; }
static inline vi vi_and(vi a, vi b) { return a & b; }
static inline vi vi_or(vi a, vi b) { return a | b; }
/* >> of a negative int is arithmetic with every compiler shoal builds with (gcc, clang) */
static inline vi vi_sra(vi a, int n) { return a >> n; }
static inline vi vi_srl(vi a, int n) { return (int32_t)((uint32_t)a >> n); }
static inline vi vi_sll(vi a, int n) { return (int32_t)((uint32_t)a << n); }
static inline vm vi_gt(vi a, vi b) { return a > b; }
static inline vm vi_eq(vi a, vi b) { return a == b; }
static inline vm vi_ltu(vi a, vi b) { return (uint32_t)a < (uint32_t)b; }
static inline vi vi_select(vm m, vi a, vi b) { return m ? a : b; }
static inline vi vi_gather(const int32_t *base, vi idx) { return base[idx]; }
static inline vf vf_gather(const float *base, vi idx) { return base[idx]; }
static inline vf vf_from_vi(vi a) { return (float)a; }
static inline vi vi_round(vf a)
{
    return a > -2147483648.0f && a < 2147483648.0f ? (int32_t)__builtin_lrintf(a) : INT32_MIN;
}
static inline vi vi_trunc(vf a)
{
    return a > -2147483648.0f && a < 2147483648.0f ? (int32_t)a : INT32_MIN;
}
static inline int32_t vi_hmin(vi a) { return a; }
static inline int32_t vi_hmax(vi a) { return a; }
static inline int32_t vi_hsum(vi a) { return a; }
static inline float vf_hmin(vf a) { return a; }
static inline float vf_hmax(vf a) { return a; }
static inline void vi_store_n(int32_t *p, vi v, int n)
{
    if (n > 0)
        *p = v;
}
typedef vm vperm;
static inline vperm vm_perm(vm m) { return m; }
static inline void vi_append(int32_t *p, vperm m, vi v)
{
    if (m)
        *p = v;
}
static inline void vf_append(float *p, vperm m, vf v)
{
    if (m)
        *p = v;
}
static inline void vi_append_n(int32_t *p, vperm m, vi v, int k)
{
    (void)k;
    if (m)
        *p = v;
}
static inline void vi_transpose(vi r[1]) { (void)r; }
/* rows of one lane (log2w = 0) */
static inline vf vf_load_rows(const float *p, size_t stride, int log2w)
{
    (void)stride;
    (void)log2w;
    return *p;
}
static inline void vf_store_rows(float *p, size_t stride, int log2w, vf v)
{
    (void)stride;
    (void)log2w;
    *p = v;
}
static inline vi vi_load_rows(const int32_t *p, size_t stride, int log2w)
{
    (void)stride;
    (void)log2w;
    return *p;
}
static inline void vi_store_rows(int32_t *p, size_t stride, int log2w, vi v)
{
    (void)stride;
    (void)log2w;
    *p = v;
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
