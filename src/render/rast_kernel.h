/* SPDX-License-Identifier: MIT */
/* The per-ISA kernels of the renderer, written once: the vertex transform of one instance and
 * the rasterization of one ref's triangles inside one tile. A file defines KSUFFIX and one of
 * RK_AVX512 / RK_AVX2 (compiled with the matching -m flags) or neither (scalar), then includes
 * this.
 *
 * Exactness: coverage is decided by integer edge functions (identical in every path: 32-bit
 * when the values provably fit, 64-bit otherwise); depth is render_depth_at's formula done
 * lane by lane with IEEE single operations and no contraction; the transform does the scalar
 * operations of render_internal.h in the same order per lane. So every ISA draws the same
 * bits. Lanes of a stamp are pixels: lane i = pixel (x + (i & (SW-1)), y + (i >> log2 SW)). */
#include "render/render_internal.h"

#include <math.h>

#if defined(RK_AVX512) || defined(RK_AVX2)
#include <immintrin.h>
#endif

#define RK_CAT2(a, b) a##_##b
#define RK_CAT(a, b) RK_CAT2(a, b)
#define RK(name) RK_CAT(name, KSUFFIX)

/* ---- transform -------------------------------------------------------------------------- */

#if defined(RK_AVX512)
#define TW 16
typedef __m512 tvf;
typedef __m512i tvi;
typedef __mmask16 tvm;
#define T_LOAD(p) _mm512_loadu_ps(p)
#define T_SET1(x) _mm512_set1_ps(x)
#define T_ADD(a, b) _mm512_add_ps(a, b)
#define T_SUB(a, b) _mm512_sub_ps(a, b)
#define T_MUL(a, b) _mm512_mul_ps(a, b)
#define T_DIV(a, b) _mm512_div_ps(a, b)
#define T_CVT(a) _mm512_cvtps_epi32(a)
#define T_STI(p, v) _mm512_storeu_si512((void *)(p), v)
#define T_STF(p, v) _mm512_storeu_ps(p, v)
#define T_MINI(a, b) _mm512_min_epi32(a, b)
#define T_MAXI(a, b) _mm512_max_epi32(a, b)
#define T_SET1I(x) _mm512_set1_epi32(x)
/* 1 when every lane of a >= 0 (ordered: NaN counts as failing) */
static inline int t_all_ge0(tvf a)
{
    return _mm512_cmp_ps_mask(a, _mm512_setzero_ps(), _CMP_GE_OQ) == 0xFFFF;
}
static inline int t_all_gt0(tvf a)
{
    return _mm512_cmp_ps_mask(a, _mm512_setzero_ps(), _CMP_GT_OQ) == 0xFFFF;
}
static inline int32_t t_hmin(tvi v) { return _mm512_reduce_min_epi32(v); }
static inline int32_t t_hmax(tvi v) { return _mm512_reduce_max_epi32(v); }
#elif defined(RK_AVX2)
#define TW 8
typedef __m256 tvf;
typedef __m256i tvi;
#define T_LOAD(p) _mm256_loadu_ps(p)
#define T_SET1(x) _mm256_set1_ps(x)
#define T_ADD(a, b) _mm256_add_ps(a, b)
#define T_SUB(a, b) _mm256_sub_ps(a, b)
#define T_MUL(a, b) _mm256_mul_ps(a, b)
#define T_DIV(a, b) _mm256_div_ps(a, b)
#define T_CVT(a) _mm256_cvtps_epi32(a)
#define T_STI(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), v)
#define T_STF(p, v) _mm256_storeu_ps(p, v)
#define T_MINI(a, b) _mm256_min_epi32(a, b)
#define T_MAXI(a, b) _mm256_max_epi32(a, b)
#define T_SET1I(x) _mm256_set1_epi32(x)
static inline int t_all_ge0(tvf a)
{
    return _mm256_movemask_ps(_mm256_cmp_ps(a, _mm256_setzero_ps(), _CMP_GE_OQ)) == 0xFF;
}
static inline int t_all_gt0(tvf a)
{
    return _mm256_movemask_ps(_mm256_cmp_ps(a, _mm256_setzero_ps(), _CMP_GT_OQ)) == 0xFF;
}
static inline int32_t t_hmin(tvi v)
{
    __m128i m = _mm_min_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    m = _mm_min_epi32(m, _mm_shuffle_epi32(m, 0x4E));
    m = _mm_min_epi32(m, _mm_shuffle_epi32(m, 0xB1));
    return _mm_cvtsi128_si32(m);
}
static inline int32_t t_hmax(tvi v)
{
    __m128i m = _mm_max_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    m = _mm_max_epi32(m, _mm_shuffle_epi32(m, 0x4E));
    m = _mm_max_epi32(m, _mm_shuffle_epi32(m, 0xB1));
    return _mm_cvtsi128_si32(m);
}
#endif

/* Lane j of vertex v: clip = ((m0 x + m1 y) + m2 z) + m3 per row; rw = 1 / w; window
 * x = rint(x_clip * rw * win_sx + win_ox) etc.; z_ndc = z_clip * rw. Exactly the scalar
 * sequence below. */
static int RK(transform)(const render_mesh *m, const float *mvp, const frame_consts *fc,
                         int32_t *ox, int32_t *oy, float *oz, int32_t bbox[4])
{
#if defined(RK_AVX512) || defined(RK_AVX2)
    const tvf m0 = T_SET1(mvp[0]), m1 = T_SET1(mvp[1]), m2 = T_SET1(mvp[2]), m3 = T_SET1(mvp[3]);
    const tvf m4 = T_SET1(mvp[4]), m5 = T_SET1(mvp[5]), m6 = T_SET1(mvp[6]), m7 = T_SET1(mvp[7]);
    const tvf m8 = T_SET1(mvp[8]), m9 = T_SET1(mvp[9]), m10 = T_SET1(mvp[10]),
              m11 = T_SET1(mvp[11]);
    const tvf m12 = T_SET1(mvp[12]), m13 = T_SET1(mvp[13]), m14 = T_SET1(mvp[14]),
              m15 = T_SET1(mvp[15]);
    const tvf sx = T_SET1(fc->win_sx), offx = T_SET1(fc->win_ox);
    const tvf sy = T_SET1(fc->win_sy), offy = T_SET1(fc->win_oy);
    const tvf gx = T_SET1(fc->guard_x), gy = T_SET1(fc->guard_y), one = T_SET1(1.0f);
    tvi mnx = T_SET1I(INT32_MAX), mny = T_SET1I(INT32_MAX);
    tvi mxx = T_SET1I(INT32_MIN), mxy = T_SET1I(INT32_MIN);
    int ok = 1;
    for (int j = 0; j < m->vertex_padded; j += TW) {
        tvf x = T_LOAD(m->x + j), y = T_LOAD(m->y + j), z = T_LOAD(m->z + j);
        tvf cx = T_ADD(T_ADD(T_ADD(T_MUL(m0, x), T_MUL(m1, y)), T_MUL(m2, z)), m3);
        tvf cy = T_ADD(T_ADD(T_ADD(T_MUL(m4, x), T_MUL(m5, y)), T_MUL(m6, z)), m7);
        tvf cz = T_ADD(T_ADD(T_ADD(T_MUL(m8, x), T_MUL(m9, y)), T_MUL(m10, z)), m11);
        tvf cw = T_ADD(T_ADD(T_ADD(T_MUL(m12, x), T_MUL(m13, y)), T_MUL(m14, z)), m15);
        tvf gxw = T_MUL(gx, cw), gyw = T_MUL(gy, cw);
        ok &= t_all_gt0(cw) & t_all_ge0(T_ADD(cz, cw)) & t_all_ge0(T_SUB(gxw, cx)) &
              t_all_ge0(T_ADD(gxw, cx)) & t_all_ge0(T_SUB(gyw, cy)) & t_all_ge0(T_ADD(gyw, cy));
        tvf rw = T_DIV(one, cw);
        tvi ix = T_CVT(T_ADD(T_MUL(T_MUL(cx, rw), sx), offx));
        tvi iy = T_CVT(T_ADD(T_MUL(T_MUL(cy, rw), sy), offy));
        T_STI(ox + j, ix);
        T_STI(oy + j, iy);
        T_STF(oz + j, T_MUL(cz, rw));
        mnx = T_MINI(mnx, ix);
        mny = T_MINI(mny, iy);
        mxx = T_MAXI(mxx, ix);
        mxy = T_MAXI(mxy, iy);
    }
    /* padding lanes repeat the last vertex, so they change neither the checks nor the box */
    bbox[0] = t_hmin(mnx);
    bbox[1] = t_hmin(mny);
    bbox[2] = t_hmax(mxx);
    bbox[3] = t_hmax(mxy);
    return !ok;
#else
    int32_t mnx = INT32_MAX, mny = INT32_MAX, mxx = INT32_MIN, mxy = INT32_MIN;
    for (int j = 0; j < m->vertex_count; j++) {
        float x = m->x[j], y = m->y[j], z = m->z[j];
        float cx = ((mvp[0] * x + mvp[1] * y) + mvp[2] * z) + mvp[3];
        float cy = ((mvp[4] * x + mvp[5] * y) + mvp[6] * z) + mvp[7];
        float cz = ((mvp[8] * x + mvp[9] * y) + mvp[10] * z) + mvp[11];
        float cw = ((mvp[12] * x + mvp[13] * y) + mvp[14] * z) + mvp[15];
        float gxw = fc->guard_x * cw, gyw = fc->guard_y * cw;
        if (!(cw > 0.0f) || !(cz + cw >= 0.0f) || !(gxw - cx >= 0.0f) || !(gxw + cx >= 0.0f) ||
            !(gyw - cy >= 0.0f) || !(gyw + cy >= 0.0f))
            return 1;
        float rw = 1.0f / cw;
        int32_t ix = render_round(cx * rw * fc->win_sx + fc->win_ox);
        int32_t iy = render_round(cy * rw * fc->win_sy + fc->win_oy);
        ox[j] = ix;
        oy[j] = iy;
        oz[j] = cz * rw;
        mnx = ix < mnx ? ix : mnx;
        mny = iy < mny ? iy : mny;
        mxx = ix > mxx ? ix : mxx;
        mxy = iy > mxy ? iy : mxy;
    }
    bbox[0] = mnx;
    bbox[1] = mny;
    bbox[2] = mxx;
    bbox[3] = mxy;
    return 0;
#endif
}

#if defined(RK_AVX512) || defined(RK_AVX2)
/* ---- splats: the splat path of setup for TW instances at once ------------------------------ */

#if defined(RK_AVX512)
#define T_SQRT(a) _mm512_sqrt_ps(a)
#define T_CVTT(a) _mm512_cvttps_epi32(a)
#define T_CVTIF(a) _mm512_cvtepi32_ps(a)
#define T_ADDI(a, b) _mm512_add_epi32(a, b)
#define T_ANDI(a, b) _mm512_and_si512(a, b)
#define T_ORI(a, b) _mm512_or_si512(a, b)
#define T_SRAI(a, n) _mm512_srai_epi32(a, n)
#define T_SRLI(a, n) _mm512_srli_epi32(a, n)
#define T_SLLI(a, n) _mm512_slli_epi32(a, n)
#define T_LOADI(p) _mm512_loadu_si512((const void *)(p))
#define T_ABS(a) _mm512_abs_ps(a)
#define T_NEG(a) _mm512_xor_ps(a, _mm512_set1_ps(-0.0f))
#define T_SUBI(a, b) _mm512_sub_epi32(a, b)
static inline tvm t_lt(tvf a, tvf b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
static inline tvm t_gt(tvf a, tvf b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
static inline tvm t_ge(tvf a, tvf b) { return _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ); }
static inline tvm t_eq(tvf a, tvf b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
static inline tvm t_gti(tvi a, tvi b) { return _mm512_cmpgt_epi32_mask(a, b); }
static inline tvm t_and(tvm a, tvm b) { return (tvm)(a & b); }
static inline tvm t_or(tvm a, tvm b) { return (tvm)(a | b); }
static inline unsigned t_bits(tvm a) { return (unsigned)a; }
/* m ? a : b, lane by lane */
static inline tvf t_sel(tvm m, tvf a, tvf b) { return _mm512_mask_blend_ps(m, b, a); }
static inline tvi t_seli(tvm m, tvi a, tvi b) { return _mm512_mask_blend_epi32(m, b, a); }
static inline tvi t_gather(const uint32_t *base, tvi idx)
{
    return _mm512_i32gather_epi32(idx, (const void *)base, 4);
}
#else
typedef __m256 tvm;
#define T_SQRT(a) _mm256_sqrt_ps(a)
#define T_CVTT(a) _mm256_cvttps_epi32(a)
#define T_CVTIF(a) _mm256_cvtepi32_ps(a)
#define T_ADDI(a, b) _mm256_add_epi32(a, b)
#define T_ANDI(a, b) _mm256_and_si256(a, b)
#define T_ORI(a, b) _mm256_or_si256(a, b)
#define T_SRAI(a, n) _mm256_srai_epi32(a, n)
#define T_SRLI(a, n) _mm256_srli_epi32(a, n)
#define T_SLLI(a, n) _mm256_slli_epi32(a, n)
#define T_LOADI(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define T_ABS(a) _mm256_and_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF)))
#define T_NEG(a) _mm256_xor_ps(a, _mm256_set1_ps(-0.0f))
#define T_SUBI(a, b) _mm256_sub_epi32(a, b)
static inline tvm t_lt(tvf a, tvf b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
static inline tvm t_gt(tvf a, tvf b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
static inline tvm t_ge(tvf a, tvf b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
static inline tvm t_eq(tvf a, tvf b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
static inline tvm t_gti(tvi a, tvi b) { return _mm256_castsi256_ps(_mm256_cmpgt_epi32(a, b)); }
static inline tvm t_and(tvm a, tvm b) { return _mm256_and_ps(a, b); }
static inline tvm t_or(tvm a, tvm b) { return _mm256_or_ps(a, b); }
static inline unsigned t_bits(tvm a) { return (unsigned)_mm256_movemask_ps(a); }
static inline tvf t_sel(tvm m, tvf a, tvf b) { return _mm256_blendv_ps(b, a, m); }
static inline tvi t_seli(tvm m, tvi a, tvi b)
{
    return _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(b), _mm256_castsi256_ps(a), m));
}
static inline tvi t_gather(const uint32_t *base, tvi idx)
{
    return _mm256_i32gather_epi32((const int *)(const void *)base, idx, 4);
}
#endif

/* t < 0 ? 0 : t > 1 ? 1 : t, NaN kept (shade.c's clamp) */
static inline tvf t_clamp01(tvf t)
{
    const tvf zero = T_SET1(0.0f), one = T_SET1(1.0f);
    return t_sel(t_lt(t, zero), zero, t_sel(t_gt(t, one), one, t));
}
/* ((c0 * 0 + c1 * 0) + c2 * z) + c3: clip_vertex of the model point (0, 0, z), one row */
static inline tvf t_clip_row(tvf c0, tvf c1, tvf c2, tvf c3, tvf z)
{
    const tvf zero = T_SET1(0.0f);
    return T_ADD(T_ADD(T_ADD(T_MUL(c0, zero), T_MUL(c1, zero)), T_MUL(c2, z)), c3);
}
/* shade_pack's channel: render_cvtt(v + 0.5f) clamped to [0, 255] (cvttps is render_cvtt) */
static inline tvi t_channel(tvf v)
{
    tvi q = T_CVTT(T_ADD(v, T_SET1(0.5f)));
    return T_MINI(T_MAXI(q, T_SET1I(0)), T_SET1I(255));
}

/* Instances i .. i + TW - 1 through setup.c's splat path: instance_matrix (the rotation and
 * the mvp), the centre's image row, shade_instance's a and b, setup_splat and
 * shade_pack(sh, 0.55f), each operation as the scalar code does it, in the same order, lane
 * by lane (the cross products, X and the mvp's first two columns only enter as m * 0, kept so
 * that zero signs and non-finite values come out the same). */
static void RK(splats)(const frame_consts *fc, const shoal_render_instances *inst, size_t i,
                       splat_lanes *out)
{
    const tvf zero = T_SET1(0.0f), one = T_SET1(1.0f), half = T_SET1(0.5f), two = T_SET1(2.0f);
    const tvf vx = T_LOAD(inst->vx + i), vy = T_LOAD(inst->vy + i), vz = T_LOAD(inst->vz + i);
    const tvf px = T_LOAD(inst->px + i), py = T_LOAD(inst->py + i), pz = T_LOAD(inst->pz + i);
    /* instance_matrix: Z = v / |v|, X = normalize(Z.z, 0, -Z.x), Y = cross(Z, X) */
    tvf s2 = T_ADD(T_ADD(T_MUL(vx, vx), T_MUL(vy, vy)), T_MUL(vz, vz));
    tvm moving = t_and(t_gt(s2, zero), t_lt(s2, T_SET1(INFINITY)));
    tvf inv = T_DIV(one, T_SQRT(s2));
    tvf z0 = T_MUL(vx, inv), z1 = T_MUL(vy, inv), z2 = T_MUL(vz, inv);
    tvf x2 = T_ADD(T_MUL(z2, z2), T_MUL(z0, z0));
    tvm flat = t_gt(x2, zero);
    tvf xi = T_DIV(one, T_SQRT(x2));
    tvf X0 = t_sel(flat, T_MUL(z2, xi), one), X1 = zero;
    tvf X2 = t_sel(flat, T_MUL(T_NEG(z0), xi), zero);
    tvf Y0 = T_SUB(T_MUL(z1, X2), T_MUL(z2, X1));
    tvf Y1 = T_SUB(T_MUL(z2, X0), T_MUL(z0, X2));
    tvf Y2 = T_SUB(T_MUL(z0, X1), T_MUL(z1, X0));
    X0 = t_sel(moving, X0, one);
    X2 = t_sel(moving, X2, zero);
    Y0 = t_sel(moving, Y0, zero);
    Y1 = t_sel(moving, Y1, one);
    Y2 = t_sel(moving, Y2, zero);
    z0 = t_sel(moving, z0, zero);
    z1 = t_sel(moving, z1, zero);
    z2 = t_sel(moving, z2, one);
    tvf L = T_SET1(fc->fish_length);
    if (inst->scale) {
        tvf sc = T_LOAD(inst->scale + i);
        L = t_sel(t_eq(sc, one), L, T_MUL(L, sc));
    }
    /* clip rows x, y, z, w of the centre (0,0,0), head (0,0,0.45) and tail (0,0,-0.45) */
    tvf cc[4], ch[4], ct[4];
    const tvf zh = T_SET1(0.45f), zt = T_SET1(-0.45f);
    for (int r = 0; r < 4; r++) {
        const float *m = fc->vp + 4 * r;
        const tvf a = T_SET1(m[0]), b = T_SET1(m[1]), c = T_SET1(m[2]), d = T_SET1(m[3]);
        tvf c0 = T_MUL(T_ADD(T_ADD(T_MUL(a, X0), T_MUL(b, X1)), T_MUL(c, X2)), L);
        tvf c1 = T_MUL(T_ADD(T_ADD(T_MUL(a, Y0), T_MUL(b, Y1)), T_MUL(c, Y2)), L);
        tvf c2 = T_MUL(T_ADD(T_ADD(T_MUL(a, z0), T_MUL(b, z1)), T_MUL(c, z2)), L);
        tvf c3 = T_ADD(T_ADD(T_ADD(T_MUL(a, px), T_MUL(b, py)), T_MUL(c, pz)), d);
        cc[r] = t_clip_row(c0, c1, c2, c3, zero);
        ch[r] = t_clip_row(c0, c1, c2, c3, zh);
        ct[r] = t_clip_row(c0, c1, c2, c3, zt);
    }
    const tvf wsx = T_SET1(fc->win_sx), wox = T_SET1(fc->win_ox);
    const tvf wsy = T_SET1(fc->win_sy), woy = T_SET1(fc->win_oy);
    /* the centre's row: c.w > 0 ? (c.y / c.w * win_sy + win_oy) / FX_ONE : 0 */
    tvf rowf = T_DIV(T_ADD(T_MUL(T_DIV(cc[1], cc[3]), wsy), woy), T_SET1((float)FX_ONE));
    rowf = t_sel(t_gt(cc[3], zero), rowf, zero);
    /* shade_instance: the base colour, by speed unless a colour or group says otherwise */
    tvf base[3];
    {
        tvf t = fc->max_speed > 0.0f ? T_DIV(T_SQRT(s2), T_SET1(fc->max_speed)) : zero;
        t = t_clamp01(t);
        tvm lo = t_lt(t, half);
        tvf u = t_sel(lo, T_MUL(t, two), T_MUL(T_SUB(t, half), two));
        for (int c = 0; c < 3; c++) {
            const float *s0 = shade_speed_stops[0], *s1 = shade_speed_stops[1],
                        *s2p = shade_speed_stops[2];
            tvf lo_v = T_ADD(T_SET1(s0[c]), T_MUL(T_SET1(s1[c] - s0[c]), u));
            tvf hi_v = T_ADD(T_SET1(s1[c]), T_MUL(T_SET1(s2p[c] - s1[c]), u));
            base[c] = t_sel(lo, lo_v, hi_v);
        }
    }
    if (inst->color || inst->group) {
        _Alignas(64) float b3[3][TW];
        for (int c = 0; c < 3; c++)
            T_STF(b3[c], base[c]);
        for (int j = 0; j < TW; j++) {
            float fb[3];
            if (shade_base_fixed(inst, i + (size_t)j, fb))
                for (int c = 0; c < 3; c++)
                    b3[c][j] = fb[c];
        }
        for (int c = 0; c < 3; c++)
            base[c] = T_LOAD(b3[c]);
    }
    /* fog by the distance to the eye, mixed toward the background of the centre's row */
    tvf dx = T_SUB(px, T_SET1(fc->eye[0])), dy = T_SUB(py, T_SET1(fc->eye[1])),
        dz = T_SUB(pz, T_SET1(fc->eye[2]));
    tvf dist = T_SQRT(T_ADD(T_ADD(T_MUL(dx, dx), T_MUL(dy, dy)), T_MUL(dz, dz)));
    tvf f = T_DIV(T_SUB(dist, T_SET1(fc->fog_start)), T_SET1(fc->fog_end - fc->fog_start));
    f = T_MUL(t_clamp01(f), T_SET1(fc->fog_max));
    tvi row = T_CVTT(rowf);
    row = t_seli(t_gti(T_SET1I(0), row), T_SET1I(0), row);
    row = t_seli(t_gti(row, T_SET1I(fc->height - 1)), T_SET1I(fc->height - 1), row);
    tvi bg = t_gather(fc->bg_row, row);
    const tvf omf = T_SUB(one, f), amb = T_SET1(shade_ambient), dif = T_SET1(shade_diffuse);
    const tvf k = T_SET1(0.55f);
    tvi colour = T_SET1I((int32_t)0xFF000000u);
    for (int c = 0; c < 3; c++) {
        tvf fogc = T_CVTIF(T_ANDI(T_SRLI(bg, 16 - 8 * c), T_SET1I(255)));
        tvf a = T_ADD(T_MUL(T_MUL(base[c], amb), omf), T_MUL(fogc, f));
        tvf b = T_MUL(T_MUL(base[c], dif), omf);
        colour = T_ORI(colour, T_SLLI(t_channel(T_ADD(a, T_MUL(b, k))), 16 - 8 * c));
    }
    /* setup_splat: every point in front of the near plane and within 4e6 x_fx8 */
    tvf *pts[3] = {cc, ch, ct};
    tvi wx[3], wy[3];
    tvm ok = t_gt(one, zero); /* all lanes */
    const tvf lim = T_SET1(4.0e6f);
    for (int p = 0; p < 3; p++) {
        const tvf *q = pts[p];
        ok = t_and(ok, t_and(t_gt(q[3], zero), t_ge(T_ADD(q[2], q[3]), zero)));
        tvf rw = T_DIV(one, q[3]);
        tvf fx = T_ADD(T_MUL(T_MUL(q[0], rw), wsx), wox);
        tvf fy = T_ADD(T_MUL(T_MUL(q[1], rw), wsy), woy);
        ok = t_and(ok, t_and(t_lt(T_ABS(fx), lim), t_lt(T_ABS(fy), lim)));
        wx[p] = T_CVT(fx);
        wy[p] = T_CVT(fy);
    }
    tvf zc = T_DIV(cc[2], cc[3]);
    tvm draw = t_and(ok, t_lt(zc, one));
    tvi mnx = T_MINI(wx[1], wx[2]), mxx = T_MAXI(wx[1], wx[2]);
    tvi mny = T_MINI(wy[1], wy[2]), mxy = T_MAXI(wy[1], wy[2]);
    const tvi q4 = T_SET1I(FX_ONE / 4), c127 = T_SET1I(FX_ONE - 1 - FX_HALF),
              c128 = T_SET1I(FX_HALF);
    tvi px0 = T_SRAI(T_ADDI(T_SUBI(mnx, q4), c127), FX_BITS);
    tvi px1 = T_SRAI(T_SUBI(T_ADDI(mxx, q4), c128), FX_BITS);
    tvi py0 = T_SRAI(T_ADDI(T_SUBI(mny, q4), c127), FX_BITS);
    tvi py1 = T_SRAI(T_SUBI(T_ADDI(mxy, q4), c128), FX_BITS);
    tvm empty = t_or(t_gti(px0, px1), t_gti(py0, py1));
    tvi cx = T_SRAI(wx[0], FX_BITS), cy = T_SRAI(wy[0], FX_BITS);
    px0 = t_seli(empty, cx, px0);
    px1 = t_seli(empty, cx, px1);
    py0 = t_seli(empty, cy, py0);
    py1 = t_seli(empty, cy, py1);
    px0 = T_MAXI(px0, T_SET1I(0));
    py0 = T_MAXI(py0, T_SET1I(0));
    px1 = T_MINI(px1, T_SET1I(fc->width - 1));
    py1 = T_MINI(py1, T_SET1I(fc->height - 1));
    tvm none = t_or(t_gti(px0, px1), t_gti(py0, py1));
    unsigned ok_bits = t_bits(ok), draw_bits = t_bits(draw) & ~t_bits(none);
    T_STI(out->px0, px0);
    T_STI(out->py0, py0);
    T_STI(out->px1, px1);
    T_STI(out->py1, py1);
    T_STF((float *)(void *)out->z, zc);
    T_STI(out->colour, colour);
    out->done = ok_bits;
    out->ref = draw_bits;
}

#endif

/* ---- SIMD vocabulary of the setup and raster kernels ------------------------------------ */

#if defined(RK_AVX512)
#define L 16
typedef __m512i vi;
typedef __m512 vfl;
typedef __mmask16 vmk;
#define VI_SET1(x) _mm512_set1_epi32(x)
#define VF_SET1(x) _mm512_set1_ps(x)
#define VI_LOAD(p) _mm512_loadu_si512((const void *)(p))
#define VF_LOAD(p) _mm512_loadu_ps(p)
#define VI_ADD(a, b) _mm512_add_epi32(a, b)
#define VI_SUB(a, b) _mm512_sub_epi32(a, b)
#define VI_MUL(a, b) _mm512_mullo_epi32(a, b)
#define VI_MIN(a, b) _mm512_min_epi32(a, b)
#define VI_MAX(a, b) _mm512_max_epi32(a, b)
#define VI_OR(a, b) _mm512_or_si512(a, b)
#define VI_SRAI(a, n) _mm512_srai_epi32(a, n)
#define VI_SLLI(a, n) _mm512_slli_epi32(a, n)
#define VI_GATHER(base, idx) _mm512_i32gather_epi32(idx, (const void *)(base), 4)
#define VF_GATHER(base, idx) _mm512_i32gather_ps(idx, (const void *)(base), 4)
#define VF_ADD(a, b) _mm512_add_ps(a, b)
#define VF_SUB(a, b) _mm512_sub_ps(a, b)
#define VF_MUL(a, b) _mm512_mul_ps(a, b)
#define VF_DIV(a, b) _mm512_div_ps(a, b)
#define VF_MAX(a, b) _mm512_max_ps(a, b)
#define VF_CVT(a) _mm512_cvtepi32_ps(a)
#define VF_TRUNC(a) _mm512_cvttps_epi32(a)
#define VI_STORE(p, v) _mm512_storeu_si512((void *)(p), v)
#define VF_STORE(p, v) _mm512_storeu_ps(p, v)
static inline vmk mk_gt(vi a, vi b) { return _mm512_cmpgt_epi32_mask(a, b); }
static inline vmk mk_eq(vi a, vi b) { return _mm512_cmpeq_epi32_mask(a, b); }
static inline vmk mk_and(vmk a, vmk b) { return (vmk)(a & b); }
static inline vmk mk_or(vmk a, vmk b) { return (vmk)(a | b); }
static inline vmk mk_andnot(vmk a, vmk b) { return (vmk)(a & ~b); } /* a & !b */
static inline unsigned mk_bits(vmk a) { return (unsigned)a; }
static inline vmk mk_first(int n) { return (vmk)(n >= 16 ? 0xFFFFu : (1u << n) - 1u); }
static inline vi vi_blend(vmk m, vi a, vi b) { return _mm512_mask_blend_epi32(m, b, a); }
/* append the lanes of v selected by m at p (in lane order) */
static inline void vi_compress(int32_t *p, vmk m, vi v)
{
    _mm512_mask_compressstoreu_epi32(p, m, v);
}
static inline void vf_compress(float *p, vmk m, vfl v) { _mm512_mask_compressstoreu_ps(p, m, v); }
typedef vmk vperm; /* AVX-512 compresses with the mask itself */
static inline vperm perm_of(vmk m) { return m; }
static inline void vi_append(int32_t *p, vperm m, vi v) { vi_compress(p, m, v); }
static inline void vf_append(float *p, vperm m, vfl v) { vf_compress(p, m, v); }
#elif defined(RK_AVX2)
#define L 8
typedef __m256i vi;
typedef __m256 vfl;
typedef __m256i vmk;
#define VI_SET1(x) _mm256_set1_epi32(x)
#define VF_SET1(x) _mm256_set1_ps(x)
#define VI_LOAD(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define VF_LOAD(p) _mm256_loadu_ps(p)
#define VI_ADD(a, b) _mm256_add_epi32(a, b)
#define VI_SUB(a, b) _mm256_sub_epi32(a, b)
#define VI_MUL(a, b) _mm256_mullo_epi32(a, b)
#define VI_MIN(a, b) _mm256_min_epi32(a, b)
#define VI_MAX(a, b) _mm256_max_epi32(a, b)
#define VI_OR(a, b) _mm256_or_si256(a, b)
#define VI_SRAI(a, n) _mm256_srai_epi32(a, n)
#define VI_SLLI(a, n) _mm256_slli_epi32(a, n)
#define VI_GATHER(base, idx) _mm256_i32gather_epi32((const int *)(const void *)(base), idx, 4)
#define VF_GATHER(base, idx) _mm256_i32gather_ps((const float *)(base), idx, 4)
#define VF_ADD(a, b) _mm256_add_ps(a, b)
#define VF_SUB(a, b) _mm256_sub_ps(a, b)
#define VF_MUL(a, b) _mm256_mul_ps(a, b)
#define VF_DIV(a, b) _mm256_div_ps(a, b)
#define VF_MAX(a, b) _mm256_max_ps(a, b)
#define VF_CVT(a) _mm256_cvtepi32_ps(a)
#define VF_TRUNC(a) _mm256_cvttps_epi32(a)
#define VI_STORE(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), v)
#define VF_STORE(p, v) _mm256_storeu_ps(p, v)
static inline vmk mk_gt(vi a, vi b) { return _mm256_cmpgt_epi32(a, b); }
static inline vmk mk_eq(vi a, vi b) { return _mm256_cmpeq_epi32(a, b); }
static inline vmk mk_and(vmk a, vmk b) { return _mm256_and_si256(a, b); }
static inline vmk mk_or(vmk a, vmk b) { return _mm256_or_si256(a, b); }
static inline vmk mk_andnot(vmk a, vmk b) { return _mm256_andnot_si256(b, a); }
static inline unsigned mk_bits(vmk a)
{
    return (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(a));
}
static inline vmk mk_first(int n)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
static inline vi vi_blend(vmk m, vi a, vi b)
{
    return _mm256_castps_si256(
        _mm256_blendv_ps(_mm256_castsi256_ps(b), _mm256_castsi256_ps(a), _mm256_castsi256_ps(m)));
}
/* Compression by a permutation from a 256-entry table: lanes of the mask move to the front in
 * lane order; the whole vector is stored (the tail is garbage overwritten by the next append
 * or left in the columns' slack). */
static const uint8_t rk_compress_lut[256][8] = {
    {0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 0}, {1, 0, 0, 0, 0, 0, 0, 0},
    {0, 1, 0, 0, 0, 0, 0, 0}, {2, 0, 0, 0, 0, 0, 0, 0}, {0, 2, 0, 0, 0, 0, 0, 0},
    {1, 2, 0, 0, 0, 0, 0, 0}, {0, 1, 2, 0, 0, 0, 0, 0}, {3, 0, 0, 0, 0, 0, 0, 0},
    {0, 3, 0, 0, 0, 0, 0, 0}, {1, 3, 0, 0, 0, 0, 0, 0}, {0, 1, 3, 0, 0, 0, 0, 0},
    {2, 3, 0, 0, 0, 0, 0, 0}, {0, 2, 3, 0, 0, 0, 0, 0}, {1, 2, 3, 0, 0, 0, 0, 0},
    {0, 1, 2, 3, 0, 0, 0, 0}, {4, 0, 0, 0, 0, 0, 0, 0}, {0, 4, 0, 0, 0, 0, 0, 0},
    {1, 4, 0, 0, 0, 0, 0, 0}, {0, 1, 4, 0, 0, 0, 0, 0}, {2, 4, 0, 0, 0, 0, 0, 0},
    {0, 2, 4, 0, 0, 0, 0, 0}, {1, 2, 4, 0, 0, 0, 0, 0}, {0, 1, 2, 4, 0, 0, 0, 0},
    {3, 4, 0, 0, 0, 0, 0, 0}, {0, 3, 4, 0, 0, 0, 0, 0}, {1, 3, 4, 0, 0, 0, 0, 0},
    {0, 1, 3, 4, 0, 0, 0, 0}, {2, 3, 4, 0, 0, 0, 0, 0}, {0, 2, 3, 4, 0, 0, 0, 0},
    {1, 2, 3, 4, 0, 0, 0, 0}, {0, 1, 2, 3, 4, 0, 0, 0}, {5, 0, 0, 0, 0, 0, 0, 0},
    {0, 5, 0, 0, 0, 0, 0, 0}, {1, 5, 0, 0, 0, 0, 0, 0}, {0, 1, 5, 0, 0, 0, 0, 0},
    {2, 5, 0, 0, 0, 0, 0, 0}, {0, 2, 5, 0, 0, 0, 0, 0}, {1, 2, 5, 0, 0, 0, 0, 0},
    {0, 1, 2, 5, 0, 0, 0, 0}, {3, 5, 0, 0, 0, 0, 0, 0}, {0, 3, 5, 0, 0, 0, 0, 0},
    {1, 3, 5, 0, 0, 0, 0, 0}, {0, 1, 3, 5, 0, 0, 0, 0}, {2, 3, 5, 0, 0, 0, 0, 0},
    {0, 2, 3, 5, 0, 0, 0, 0}, {1, 2, 3, 5, 0, 0, 0, 0}, {0, 1, 2, 3, 5, 0, 0, 0},
    {4, 5, 0, 0, 0, 0, 0, 0}, {0, 4, 5, 0, 0, 0, 0, 0}, {1, 4, 5, 0, 0, 0, 0, 0},
    {0, 1, 4, 5, 0, 0, 0, 0}, {2, 4, 5, 0, 0, 0, 0, 0}, {0, 2, 4, 5, 0, 0, 0, 0},
    {1, 2, 4, 5, 0, 0, 0, 0}, {0, 1, 2, 4, 5, 0, 0, 0}, {3, 4, 5, 0, 0, 0, 0, 0},
    {0, 3, 4, 5, 0, 0, 0, 0}, {1, 3, 4, 5, 0, 0, 0, 0}, {0, 1, 3, 4, 5, 0, 0, 0},
    {2, 3, 4, 5, 0, 0, 0, 0}, {0, 2, 3, 4, 5, 0, 0, 0}, {1, 2, 3, 4, 5, 0, 0, 0},
    {0, 1, 2, 3, 4, 5, 0, 0}, {6, 0, 0, 0, 0, 0, 0, 0}, {0, 6, 0, 0, 0, 0, 0, 0},
    {1, 6, 0, 0, 0, 0, 0, 0}, {0, 1, 6, 0, 0, 0, 0, 0}, {2, 6, 0, 0, 0, 0, 0, 0},
    {0, 2, 6, 0, 0, 0, 0, 0}, {1, 2, 6, 0, 0, 0, 0, 0}, {0, 1, 2, 6, 0, 0, 0, 0},
    {3, 6, 0, 0, 0, 0, 0, 0}, {0, 3, 6, 0, 0, 0, 0, 0}, {1, 3, 6, 0, 0, 0, 0, 0},
    {0, 1, 3, 6, 0, 0, 0, 0}, {2, 3, 6, 0, 0, 0, 0, 0}, {0, 2, 3, 6, 0, 0, 0, 0},
    {1, 2, 3, 6, 0, 0, 0, 0}, {0, 1, 2, 3, 6, 0, 0, 0}, {4, 6, 0, 0, 0, 0, 0, 0},
    {0, 4, 6, 0, 0, 0, 0, 0}, {1, 4, 6, 0, 0, 0, 0, 0}, {0, 1, 4, 6, 0, 0, 0, 0},
    {2, 4, 6, 0, 0, 0, 0, 0}, {0, 2, 4, 6, 0, 0, 0, 0}, {1, 2, 4, 6, 0, 0, 0, 0},
    {0, 1, 2, 4, 6, 0, 0, 0}, {3, 4, 6, 0, 0, 0, 0, 0}, {0, 3, 4, 6, 0, 0, 0, 0},
    {1, 3, 4, 6, 0, 0, 0, 0}, {0, 1, 3, 4, 6, 0, 0, 0}, {2, 3, 4, 6, 0, 0, 0, 0},
    {0, 2, 3, 4, 6, 0, 0, 0}, {1, 2, 3, 4, 6, 0, 0, 0}, {0, 1, 2, 3, 4, 6, 0, 0},
    {5, 6, 0, 0, 0, 0, 0, 0}, {0, 5, 6, 0, 0, 0, 0, 0}, {1, 5, 6, 0, 0, 0, 0, 0},
    {0, 1, 5, 6, 0, 0, 0, 0}, {2, 5, 6, 0, 0, 0, 0, 0}, {0, 2, 5, 6, 0, 0, 0, 0},
    {1, 2, 5, 6, 0, 0, 0, 0}, {0, 1, 2, 5, 6, 0, 0, 0}, {3, 5, 6, 0, 0, 0, 0, 0},
    {0, 3, 5, 6, 0, 0, 0, 0}, {1, 3, 5, 6, 0, 0, 0, 0}, {0, 1, 3, 5, 6, 0, 0, 0},
    {2, 3, 5, 6, 0, 0, 0, 0}, {0, 2, 3, 5, 6, 0, 0, 0}, {1, 2, 3, 5, 6, 0, 0, 0},
    {0, 1, 2, 3, 5, 6, 0, 0}, {4, 5, 6, 0, 0, 0, 0, 0}, {0, 4, 5, 6, 0, 0, 0, 0},
    {1, 4, 5, 6, 0, 0, 0, 0}, {0, 1, 4, 5, 6, 0, 0, 0}, {2, 4, 5, 6, 0, 0, 0, 0},
    {0, 2, 4, 5, 6, 0, 0, 0}, {1, 2, 4, 5, 6, 0, 0, 0}, {0, 1, 2, 4, 5, 6, 0, 0},
    {3, 4, 5, 6, 0, 0, 0, 0}, {0, 3, 4, 5, 6, 0, 0, 0}, {1, 3, 4, 5, 6, 0, 0, 0},
    {0, 1, 3, 4, 5, 6, 0, 0}, {2, 3, 4, 5, 6, 0, 0, 0}, {0, 2, 3, 4, 5, 6, 0, 0},
    {1, 2, 3, 4, 5, 6, 0, 0}, {0, 1, 2, 3, 4, 5, 6, 0}, {7, 0, 0, 0, 0, 0, 0, 0},
    {0, 7, 0, 0, 0, 0, 0, 0}, {1, 7, 0, 0, 0, 0, 0, 0}, {0, 1, 7, 0, 0, 0, 0, 0},
    {2, 7, 0, 0, 0, 0, 0, 0}, {0, 2, 7, 0, 0, 0, 0, 0}, {1, 2, 7, 0, 0, 0, 0, 0},
    {0, 1, 2, 7, 0, 0, 0, 0}, {3, 7, 0, 0, 0, 0, 0, 0}, {0, 3, 7, 0, 0, 0, 0, 0},
    {1, 3, 7, 0, 0, 0, 0, 0}, {0, 1, 3, 7, 0, 0, 0, 0}, {2, 3, 7, 0, 0, 0, 0, 0},
    {0, 2, 3, 7, 0, 0, 0, 0}, {1, 2, 3, 7, 0, 0, 0, 0}, {0, 1, 2, 3, 7, 0, 0, 0},
    {4, 7, 0, 0, 0, 0, 0, 0}, {0, 4, 7, 0, 0, 0, 0, 0}, {1, 4, 7, 0, 0, 0, 0, 0},
    {0, 1, 4, 7, 0, 0, 0, 0}, {2, 4, 7, 0, 0, 0, 0, 0}, {0, 2, 4, 7, 0, 0, 0, 0},
    {1, 2, 4, 7, 0, 0, 0, 0}, {0, 1, 2, 4, 7, 0, 0, 0}, {3, 4, 7, 0, 0, 0, 0, 0},
    {0, 3, 4, 7, 0, 0, 0, 0}, {1, 3, 4, 7, 0, 0, 0, 0}, {0, 1, 3, 4, 7, 0, 0, 0},
    {2, 3, 4, 7, 0, 0, 0, 0}, {0, 2, 3, 4, 7, 0, 0, 0}, {1, 2, 3, 4, 7, 0, 0, 0},
    {0, 1, 2, 3, 4, 7, 0, 0}, {5, 7, 0, 0, 0, 0, 0, 0}, {0, 5, 7, 0, 0, 0, 0, 0},
    {1, 5, 7, 0, 0, 0, 0, 0}, {0, 1, 5, 7, 0, 0, 0, 0}, {2, 5, 7, 0, 0, 0, 0, 0},
    {0, 2, 5, 7, 0, 0, 0, 0}, {1, 2, 5, 7, 0, 0, 0, 0}, {0, 1, 2, 5, 7, 0, 0, 0},
    {3, 5, 7, 0, 0, 0, 0, 0}, {0, 3, 5, 7, 0, 0, 0, 0}, {1, 3, 5, 7, 0, 0, 0, 0},
    {0, 1, 3, 5, 7, 0, 0, 0}, {2, 3, 5, 7, 0, 0, 0, 0}, {0, 2, 3, 5, 7, 0, 0, 0},
    {1, 2, 3, 5, 7, 0, 0, 0}, {0, 1, 2, 3, 5, 7, 0, 0}, {4, 5, 7, 0, 0, 0, 0, 0},
    {0, 4, 5, 7, 0, 0, 0, 0}, {1, 4, 5, 7, 0, 0, 0, 0}, {0, 1, 4, 5, 7, 0, 0, 0},
    {2, 4, 5, 7, 0, 0, 0, 0}, {0, 2, 4, 5, 7, 0, 0, 0}, {1, 2, 4, 5, 7, 0, 0, 0},
    {0, 1, 2, 4, 5, 7, 0, 0}, {3, 4, 5, 7, 0, 0, 0, 0}, {0, 3, 4, 5, 7, 0, 0, 0},
    {1, 3, 4, 5, 7, 0, 0, 0}, {0, 1, 3, 4, 5, 7, 0, 0}, {2, 3, 4, 5, 7, 0, 0, 0},
    {0, 2, 3, 4, 5, 7, 0, 0}, {1, 2, 3, 4, 5, 7, 0, 0}, {0, 1, 2, 3, 4, 5, 7, 0},
    {6, 7, 0, 0, 0, 0, 0, 0}, {0, 6, 7, 0, 0, 0, 0, 0}, {1, 6, 7, 0, 0, 0, 0, 0},
    {0, 1, 6, 7, 0, 0, 0, 0}, {2, 6, 7, 0, 0, 0, 0, 0}, {0, 2, 6, 7, 0, 0, 0, 0},
    {1, 2, 6, 7, 0, 0, 0, 0}, {0, 1, 2, 6, 7, 0, 0, 0}, {3, 6, 7, 0, 0, 0, 0, 0},
    {0, 3, 6, 7, 0, 0, 0, 0}, {1, 3, 6, 7, 0, 0, 0, 0}, {0, 1, 3, 6, 7, 0, 0, 0},
    {2, 3, 6, 7, 0, 0, 0, 0}, {0, 2, 3, 6, 7, 0, 0, 0}, {1, 2, 3, 6, 7, 0, 0, 0},
    {0, 1, 2, 3, 6, 7, 0, 0}, {4, 6, 7, 0, 0, 0, 0, 0}, {0, 4, 6, 7, 0, 0, 0, 0},
    {1, 4, 6, 7, 0, 0, 0, 0}, {0, 1, 4, 6, 7, 0, 0, 0}, {2, 4, 6, 7, 0, 0, 0, 0},
    {0, 2, 4, 6, 7, 0, 0, 0}, {1, 2, 4, 6, 7, 0, 0, 0}, {0, 1, 2, 4, 6, 7, 0, 0},
    {3, 4, 6, 7, 0, 0, 0, 0}, {0, 3, 4, 6, 7, 0, 0, 0}, {1, 3, 4, 6, 7, 0, 0, 0},
    {0, 1, 3, 4, 6, 7, 0, 0}, {2, 3, 4, 6, 7, 0, 0, 0}, {0, 2, 3, 4, 6, 7, 0, 0},
    {1, 2, 3, 4, 6, 7, 0, 0}, {0, 1, 2, 3, 4, 6, 7, 0}, {5, 6, 7, 0, 0, 0, 0, 0},
    {0, 5, 6, 7, 0, 0, 0, 0}, {1, 5, 6, 7, 0, 0, 0, 0}, {0, 1, 5, 6, 7, 0, 0, 0},
    {2, 5, 6, 7, 0, 0, 0, 0}, {0, 2, 5, 6, 7, 0, 0, 0}, {1, 2, 5, 6, 7, 0, 0, 0},
    {0, 1, 2, 5, 6, 7, 0, 0}, {3, 5, 6, 7, 0, 0, 0, 0}, {0, 3, 5, 6, 7, 0, 0, 0},
    {1, 3, 5, 6, 7, 0, 0, 0}, {0, 1, 3, 5, 6, 7, 0, 0}, {2, 3, 5, 6, 7, 0, 0, 0},
    {0, 2, 3, 5, 6, 7, 0, 0}, {1, 2, 3, 5, 6, 7, 0, 0}, {0, 1, 2, 3, 5, 6, 7, 0},
    {4, 5, 6, 7, 0, 0, 0, 0}, {0, 4, 5, 6, 7, 0, 0, 0}, {1, 4, 5, 6, 7, 0, 0, 0},
    {0, 1, 4, 5, 6, 7, 0, 0}, {2, 4, 5, 6, 7, 0, 0, 0}, {0, 2, 4, 5, 6, 7, 0, 0},
    {1, 2, 4, 5, 6, 7, 0, 0}, {0, 1, 2, 4, 5, 6, 7, 0}, {3, 4, 5, 6, 7, 0, 0, 0},
    {0, 3, 4, 5, 6, 7, 0, 0}, {1, 3, 4, 5, 6, 7, 0, 0}, {0, 1, 3, 4, 5, 6, 7, 0},
    {2, 3, 4, 5, 6, 7, 0, 0}, {0, 2, 3, 4, 5, 6, 7, 0}, {1, 2, 3, 4, 5, 6, 7, 0},
    {0, 1, 2, 3, 4, 5, 6, 7},
};
typedef __m256i vperm;
static inline vperm perm_of(vmk m)
{
    return _mm256_cvtepu8_epi32(
        _mm_loadl_epi64((const __m128i *)(const void *)rk_compress_lut[mk_bits(m)]));
}
static inline void vi_append(int32_t *p, vperm m, vi v)
{
    VI_STORE(p, _mm256_permutevar8x32_epi32(v, m));
}
static inline void vf_append(float *p, vperm m, vfl v)
{
    VF_STORE(p, _mm256_permutevar8x32_ps(v, m));
}
#endif

/* ---- setup of one instance's triangles ---------------------------------------------------- */

#if defined(RK_AVX512) || defined(RK_AVX2)
/* Lane j = mesh triangle t + j. Exactly setup_tri_one's decisions and values: area2 is exact
 * in int32 here because the instance's box is under SETUP_SMALL_FX (|products| < 2^28); the
 * colour repeats shade_pack's float operations. Kept lanes are appended in lane order. */
static uint32_t RK(setup_tris)(const render_mesh *m, const int32_t *X, const int32_t *Y,
                               const float *Z, const tri_shade *ts, const frame_consts *fc,
                               const tri_cols *out, size_t base, int32_t rect[4])
{
    const vi zero = VI_SET1(0), wmax = VI_SET1(fc->width - 1), hmax = VI_SET1(fc->height - 1);
    const vi c127 = VI_SET1(FX_ONE - 1 - FX_HALF), c128 = VI_SET1(FX_HALF);
    const vfl l0 = VF_SET1(ts->sh.light_model[0]), l1 = VF_SET1(ts->sh.light_model[1]),
              l2 = VF_SET1(ts->sh.light_model[2]);
    const vfl fzero = VF_SET1(0.0f), half = VF_SET1(0.5f);
    const vfl a0 = VF_SET1(ts->sh.a[0]), a1 = VF_SET1(ts->sh.a[1]), a2 = VF_SET1(ts->sh.a[2]);
    const vfl b0 = VF_SET1(ts->sh.b[0]), b1 = VF_SET1(ts->sh.b[1]), b2 = VF_SET1(ts->sh.b[2]);
    const vi c255 = VI_SET1(255), alpha = VI_SET1((int32_t)0xFF000000u);
    const vi idc = VI_SET1((int32_t)ts->id_colour);
    vi rx0 = VI_SET1(INT32_MAX), ry0 = VI_SET1(INT32_MAX);
    vi rx1 = VI_SET1(INT32_MIN), ry1 = VI_SET1(INT32_MIN);
    uint32_t kept = 0;
    for (int t = 0; t < m->triangle_padded; t += L) {
        vi i0 = VI_LOAD(m->i0 + t), i1 = VI_LOAD(m->i1 + t), i2 = VI_LOAD(m->i2 + t);
        vi x0 = VI_GATHER(X, i0), y0 = VI_GATHER(Y, i0);
        vi x1 = VI_GATHER(X, i1), y1 = VI_GATHER(Y, i1);
        vi x2 = VI_GATHER(X, i2), y2 = VI_GATHER(Y, i2);
        vi area2 =
            VI_SUB(VI_MUL(VI_SUB(x1, x0), VI_SUB(y2, y0)), VI_MUL(VI_SUB(x2, x0), VI_SUB(y1, y0)));
        vmk front = mk_gt(zero, area2);
        vi mnx = VI_MIN(VI_MIN(x0, x1), x2), mxx = VI_MAX(VI_MAX(x0, x1), x2);
        vi mny = VI_MIN(VI_MIN(y0, y1), y2), mxy = VI_MAX(VI_MAX(y0, y1), y2);
        vi px0 = VI_MAX(VI_SRAI(VI_ADD(mnx, c127), FX_BITS), zero);
        vi px1 = VI_MIN(VI_SRAI(VI_SUB(mxx, c128), FX_BITS), wmax);
        vi py0 = VI_MAX(VI_SRAI(VI_ADD(mny, c127), FX_BITS), zero);
        vi py1 = VI_MIN(VI_SRAI(VI_SUB(mxy, c128), FX_BITS), hmax);
        vmk keep = mk_andnot(mk_andnot(front, mk_gt(px0, px1)), mk_gt(py0, py1));
        unsigned bits = mk_bits(keep);
        if (!bits)
            continue;
        vi col;
        if (ts->id_mode) {
            col = idc;
        } else {
            vfl d = VF_ADD(VF_ADD(VF_MUL(VF_LOAD(m->nx + t), l0), VF_MUL(VF_LOAD(m->ny + t), l1)),
                           VF_MUL(VF_LOAD(m->nz + t), l2));
            vfl k = VF_MAX(d, fzero);
            vi r = VF_TRUNC(VF_ADD(VF_ADD(a0, VF_MUL(b0, k)), half));
            vi g = VF_TRUNC(VF_ADD(VF_ADD(a1, VF_MUL(b1, k)), half));
            vi b = VF_TRUNC(VF_ADD(VF_ADD(a2, VF_MUL(b2, k)), half));
            r = VI_MIN(VI_MAX(r, zero), c255);
            g = VI_MIN(VI_MAX(g, zero), c255);
            b = VI_MIN(VI_MAX(b, zero), c255);
            col = VI_OR(VI_OR(alpha, VI_SLLI(r, 16)), VI_OR(VI_SLLI(g, 8), b));
        }
        vfl z0 = VF_GATHER(Z, i0), z1 = VF_GATHER(Z, i1), z2 = VF_GATHER(Z, i2);
        size_t at = base + kept;
        vperm p = perm_of(keep);
        vi_append(out->x0 + at, p, x0);
        vi_append(out->y0 + at, p, y0);
        vf_append(out->z0 + at, p, z0);
        vi_append(out->x1 + at, p, x2); /* positive orientation: vertices 1 and 2 swap */
        vi_append(out->y1 + at, p, y2);
        vf_append(out->z1 + at, p, z2);
        vi_append(out->x2 + at, p, x1);
        vi_append(out->y2 + at, p, y1);
        vf_append(out->z2 + at, p, z1);
        vi_append((int32_t *)out->col + at, p, col);
        rx0 = VI_MIN(rx0, vi_blend(keep, px0, VI_SET1(INT32_MAX)));
        ry0 = VI_MIN(ry0, vi_blend(keep, py0, VI_SET1(INT32_MAX)));
        rx1 = VI_MAX(rx1, vi_blend(keep, px1, VI_SET1(INT32_MIN)));
        ry1 = VI_MAX(ry1, vi_blend(keep, py1, VI_SET1(INT32_MIN)));
        kept += (uint32_t)__builtin_popcount(bits);
    }
    int32_t v;
    v = t_hmin(rx0);
    rect[0] = v < rect[0] ? v : rect[0];
    v = t_hmin(ry0);
    rect[1] = v < rect[1] ? v : rect[1];
    v = t_hmax(rx1);
    rect[2] = v > rect[2] ? v : rect[2];
    v = t_hmax(ry1);
    rect[3] = v > rect[3] ? v : rect[3];
    return kept;
}
#else
static uint32_t RK(setup_tris)(const render_mesh *m, const int32_t *X, const int32_t *Y,
                               const float *Z, const tri_shade *ts, const frame_consts *fc,
                               const tri_cols *out, size_t base, int32_t rect[4])
{
    uint32_t kept = 0;
    for (int t = 0; t < m->triangle_count; t++) {
        int i0 = m->i0[t], i1 = m->i1[t], i2 = m->i2[t];
        kept += (uint32_t)setup_tri_one(fc, ts, out, base + kept, rect, X[i0], Y[i0], Z[i0], X[i1],
                                        Y[i1], Z[i1], X[i2], Y[i2], Z[i2], m->nx[t], m->ny[t],
                                        m->nz[t]);
    }
    return kept;
}
#endif

/* ---- rasterization of one triangle of any size ----------------------------------------- */

/* Edge functions of a triangle over a rect of samples, ready for 32-bit stepping:
 * inside(px, py) <=> e[k] + sx[k] (px - px0) + sy[k] (py - py0) >= 0 for k = 0, 1, 2
 * (the top-left bias is folded into e). */
typedef struct rk_edges {
    int32_t e[3], sx[3], sy[3];
} rk_edges;

/* Returns 1 when the 32-bit form is ready, 0 when no sample of the rect is inside, -1 when
 * the values would leave int32 (use the 64-bit path). Edges that hold on the whole rect are
 * turned into constants (0 with zero steps), which changes no pixel. */
static inline int RK(edges_setup)(const int32_t *X, const int32_t *Y, int px0, int py0, int w,
                                  int h, rk_edges *ed)
{
    int64_t sx0 = (int64_t)px0 * FX_ONE + FX_HALF, sy0 = (int64_t)py0 * FX_ONE + FX_HALF;
    int ok32 = 1;
    for (int k = 0; k < 3; k++) {
        int a = k, b = k == 2 ? 0 : k + 1;
        int64_t dx = (int64_t)X[b] - X[a], dy = (int64_t)Y[b] - Y[a];
        int tl = dy < 0 || (dy == 0 && dx > 0);
        int64_t e = dx * (sy0 - Y[a]) - dy * (sx0 - X[a]) + tl - 1;
        int64_t stx = -dy * FX_ONE, sty = dx * FX_ONE;
        int64_t ax = stx * (w - 1), ay = sty * (h - 1);
        int64_t lo = e + (ax < 0 ? ax : 0) + (ay < 0 ? ay : 0);
        int64_t hi = e + (ax > 0 ? ax : 0) + (ay > 0 ? ay : 0);
        if (hi < 0)
            return 0;
        if (lo >= 0) {
            ed->e[k] = 0;
            ed->sx[k] = 0;
            ed->sy[k] = 0;
            continue;
        }
        if (lo < INT32_MIN || hi > INT32_MAX || stx < INT32_MIN || stx > INT32_MAX ||
            sty < INT32_MIN || sty > INT32_MAX) {
            ok32 = 0;
            continue;
        }
        ed->e[k] = (int32_t)e;
        ed->sx[k] = (int32_t)stx;
        ed->sy[k] = (int32_t)sty;
    }
    return ok32 ? 1 : -1;
}

/* wrapping int32 multiply (lanes outside the rect may overflow; they are masked) */
static inline int32_t rk_wrap_mul(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a * (uint32_t)b);
}

#if defined(RK_AVX512) || defined(RK_AVX2)

#if defined(RK_AVX512)
#define SW_LANES 16
typedef __m512i svi;
typedef __m512 svf;
typedef __mmask16 svm;
#define S_SET1I(x) _mm512_set1_epi32(x)
#define S_SET1F(x) _mm512_set1_ps(x)
#define S_ADDI(a, b) _mm512_add_epi32(a, b)
#define S_MULI(a, b) _mm512_mullo_epi32(a, b)
#define S_ORI(a, b) _mm512_or_si512(a, b)
#define S_CVTF(a) _mm512_cvtepi32_ps(a)
#define S_ADDF(a, b) _mm512_add_ps(a, b)
#define S_MULF(a, b) _mm512_mul_ps(a, b)
static inline svm s_ge0(svi a) { return _mm512_cmpge_epi32_mask(a, _mm512_setzero_si512()); }
static inline svm s_lt(svi a, svi b) { return _mm512_cmplt_epi32_mask(a, b); }
static inline svm s_and(svm a, svm b) { return (svm)(a & b); }
static inline int s_none(svm a) { return a == 0; }
static inline int s_count(svm a) { return __builtin_popcount((unsigned)a); }
static inline svm s_depth_pass(svf z, svf zb, svi id, svi idb)
{
    svm lt = _mm512_cmp_ps_mask(z, zb, _CMP_LT_OQ);
    svm eq = _mm512_cmp_ps_mask(z, zb, _CMP_EQ_OQ);
    svm idlt = _mm512_cmplt_epu32_mask(id, idb);
    return (svm)(lt | (eq & idlt));
}
static inline svf s_blendf(svm m, svf a, svf b) { return _mm512_mask_blend_ps(m, b, a); }
static inline svi s_blendi(svm m, svi a, svi b) { return _mm512_mask_blend_epi32(m, b, a); }
/* stamp rows are SW pixels wide: 16x1, 8x2 or 4x4 */
static inline svf s_ldf(const float *p, int swlog)
{
    if (swlog == 4)
        return _mm512_loadu_ps(p);
    if (swlog == 3)
        return _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_loadu_ps(p)),
                                  _mm256_loadu_ps(p + TILE_SIZE), 1);
    __m512 v = _mm512_castps128_ps512(_mm_loadu_ps(p));
    v = _mm512_insertf32x4(v, _mm_loadu_ps(p + TILE_SIZE), 1);
    v = _mm512_insertf32x4(v, _mm_loadu_ps(p + 2 * TILE_SIZE), 2);
    return _mm512_insertf32x4(v, _mm_loadu_ps(p + 3 * TILE_SIZE), 3);
}
static inline void s_stf(float *p, svf v, int swlog)
{
    if (swlog == 4) {
        _mm512_storeu_ps(p, v);
    } else if (swlog == 3) {
        _mm256_storeu_ps(p, _mm512_castps512_ps256(v));
        _mm256_storeu_ps(p + TILE_SIZE, _mm512_extractf32x8_ps(v, 1));
    } else {
        _mm_storeu_ps(p, _mm512_castps512_ps128(v));
        _mm_storeu_ps(p + TILE_SIZE, _mm512_extractf32x4_ps(v, 1));
        _mm_storeu_ps(p + 2 * TILE_SIZE, _mm512_extractf32x4_ps(v, 2));
        _mm_storeu_ps(p + 3 * TILE_SIZE, _mm512_extractf32x4_ps(v, 3));
    }
}
static inline svi s_ldi(const uint32_t *p, int swlog)
{
    return _mm512_castps_si512(s_ldf((const float *)(const void *)p, swlog));
}
static inline void s_sti(uint32_t *p, svi v, int swlog)
{
    s_stf((float *)(void *)p, _mm512_castsi512_ps(v), swlog);
}
static inline svi s_lane_x(int swlog)
{
    svi lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    return _mm512_and_si512(lane, _mm512_set1_epi32((1 << swlog) - 1));
}
static inline svi s_lane_y(int swlog)
{
    svi lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    return _mm512_srlv_epi32(lane, _mm512_set1_epi32(swlog));
}
#else /* AVX2 */
#define SW_LANES 8
typedef __m256i svi;
typedef __m256 svf;
typedef __m256i svm;
#define S_SET1I(x) _mm256_set1_epi32(x)
#define S_SET1F(x) _mm256_set1_ps(x)
#define S_ADDI(a, b) _mm256_add_epi32(a, b)
#define S_MULI(a, b) _mm256_mullo_epi32(a, b)
#define S_ORI(a, b) _mm256_or_si256(a, b)
#define S_CVTF(a) _mm256_cvtepi32_ps(a)
#define S_ADDF(a, b) _mm256_add_ps(a, b)
#define S_MULF(a, b) _mm256_mul_ps(a, b)
static inline svm s_ge0(svi a) { return _mm256_cmpgt_epi32(a, _mm256_set1_epi32(-1)); }
static inline svm s_lt(svi a, svi b) { return _mm256_cmpgt_epi32(b, a); }
static inline svm s_and(svm a, svm b) { return _mm256_and_si256(a, b); }
static inline int s_none(svm a) { return _mm256_testz_si256(a, a); }
static inline int s_count(svm a)
{
    return __builtin_popcount((unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(a)));
}
static inline svm s_depth_pass(svf z, svf zb, svi id, svi idb)
{
    __m256 lt = _mm256_cmp_ps(z, zb, _CMP_LT_OQ);
    __m256 eq = _mm256_cmp_ps(z, zb, _CMP_EQ_OQ);
    const __m256i bias = _mm256_set1_epi32((int)0x80000000u);
    __m256i idlt = _mm256_cmpgt_epi32(_mm256_xor_si256(idb, bias), _mm256_xor_si256(id, bias));
    return _mm256_or_si256(_mm256_castps_si256(lt),
                           _mm256_and_si256(_mm256_castps_si256(eq), idlt));
}
static inline svf s_blendf(svm m, svf a, svf b)
{
    return _mm256_blendv_ps(b, a, _mm256_castsi256_ps(m));
}
static inline svi s_blendi(svm m, svi a, svi b)
{
    return _mm256_castps_si256(
        _mm256_blendv_ps(_mm256_castsi256_ps(b), _mm256_castsi256_ps(a), _mm256_castsi256_ps(m)));
}
/* stamp rows are SW pixels wide: 8x1 or 4x2 */
static inline svf s_ldf(const float *p, int swlog)
{
    if (swlog == 3)
        return _mm256_loadu_ps(p);
    return _mm256_set_m128(_mm_loadu_ps(p + TILE_SIZE), _mm_loadu_ps(p));
}
static inline void s_stf(float *p, svf v, int swlog)
{
    if (swlog == 3) {
        _mm256_storeu_ps(p, v);
    } else {
        _mm_storeu_ps(p, _mm256_castps256_ps128(v));
        _mm_storeu_ps(p + TILE_SIZE, _mm256_extractf128_ps(v, 1));
    }
}
static inline svi s_ldi(const uint32_t *p, int swlog)
{
    return _mm256_castps_si256(s_ldf((const float *)(const void *)p, swlog));
}
static inline void s_sti(uint32_t *p, svi v, int swlog)
{
    s_stf((float *)(void *)p, _mm256_castsi256_ps(v), swlog);
}
static inline svi s_lane_x(int swlog)
{
    svi lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_and_si256(lane, _mm256_set1_epi32((1 << swlog) - 1));
}
static inline svi s_lane_y(int swlog)
{
    svi lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_srlv_epi32(lane, _mm256_set1_epi32(swlog));
}
#endif

/* Stamps of SW x SH pixels (SW = 1 << swlog, SW * SH = lanes) over the rect [px0, px1] x
 * [py0, py1] (tile-local pixels). Lane values that overflow are outside the rect and masked. */
static void RK(stamps)(tile_ctx *t, const rk_edges *ed, int swlog, int px0, int py0, int px1,
                       int py1, depth_plane dp, int32_t ax, int32_t ay, uint32_t id,
                       uint32_t colour)
{
    const int SW = 1 << swlog, SH = SW_LANES >> swlog;
    const svi lx = s_lane_x(swlog), ly = s_lane_y(swlog);
    svi e0 = S_ADDI(S_ADDI(S_SET1I(ed->e[0]), S_MULI(lx, S_SET1I(ed->sx[0]))),
                    S_MULI(ly, S_SET1I(ed->sy[0])));
    svi e1 = S_ADDI(S_ADDI(S_SET1I(ed->e[1]), S_MULI(lx, S_SET1I(ed->sx[1]))),
                    S_MULI(ly, S_SET1I(ed->sy[1])));
    svi e2 = S_ADDI(S_ADDI(S_SET1I(ed->e[2]), S_MULI(lx, S_SET1I(ed->sx[2]))),
                    S_MULI(ly, S_SET1I(ed->sy[2])));
    const svi stx0 = S_SET1I(rk_wrap_mul(ed->sx[0], SW)),
              sty0 = S_SET1I(rk_wrap_mul(ed->sy[0], SH));
    const svi stx1 = S_SET1I(rk_wrap_mul(ed->sx[1], SW)),
              sty1 = S_SET1I(rk_wrap_mul(ed->sy[1], SH));
    const svi stx2 = S_SET1I(rk_wrap_mul(ed->sx[2], SW)),
              sty2 = S_SET1I(rk_wrap_mul(ed->sy[2], SH));
    const svi lx256 = S_MULI(lx, S_SET1I(FX_ONE)), ly256 = S_MULI(ly, S_SET1I(FX_ONE));
    const svf dzdx = S_SET1F(dp.dzdx), dzdy = S_SET1F(dp.dzdy), z0 = S_SET1F(dp.z0);
    const svi vid = S_SET1I((int32_t)id), vcol = S_SET1I((int32_t)colour);
    uint64_t written = 0;
    for (int y = py0; y <= py1; y += SH) {
        svi r0 = e0, r1 = e1, r2 = e2;
        svm rowok = s_lt(ly, S_SET1I(py1 - y + 1));
        /* dy of each lane's sample from vertex 0, then the row part of the depth formula */
        int32_t sy = (t->oy + y) * FX_ONE + FX_HALF - ay;
        svf zrow = S_ADDF(z0, S_MULF(dzdy, S_CVTF(S_ADDI(S_SET1I(sy), ly256))));
        for (int x = px0; x <= px1; x += SW) {
            svm m = s_and(s_ge0(S_ORI(S_ORI(r0, r1), r2)),
                          s_and(rowok, s_lt(lx, S_SET1I(px1 - x + 1))));
            if (!s_none(m)) {
                int32_t sx = (t->ox + x) * FX_ONE + FX_HALF - ax;
                svf z = S_ADDF(zrow, S_MULF(dzdx, S_CVTF(S_ADDI(S_SET1I(sx), lx256))));
                size_t off = (size_t)y * TILE_SIZE + (size_t)x;
                svf zb = s_ldf(t->depth + off, swlog);
                svi idb = s_ldi(t->idb + off, swlog);
                svm pass = s_and(m, s_depth_pass(z, zb, vid, idb));
                if (!s_none(pass)) {
                    svi cb = s_ldi(t->col + off, swlog);
                    s_stf(t->depth + off, s_blendf(pass, z, zb), swlog);
                    s_sti(t->idb + off, s_blendi(pass, vid, idb), swlog);
                    s_sti(t->col + off, s_blendi(pass, vcol, cb), swlog);
                    written += (uint64_t)s_count(pass);
                }
            }
            r0 = S_ADDI(r0, stx0);
            r1 = S_ADDI(r1, stx1);
            r2 = S_ADDI(r2, stx2);
        }
        e0 = S_ADDI(e0, sty0);
        e1 = S_ADDI(e1, sty1);
        e2 = S_ADDI(e2, sty2);
    }
    t->pixels_written += written;
}
#endif /* SIMD */

/* Scalar 32-bit loop: the reference the stamps must equal. */
static inline void RK(pixels32)(tile_ctx *t, const rk_edges *ed, int px0, int py0, int px1, int py1,
                                depth_plane dp, int32_t ax, int32_t ay, uint32_t id,
                                uint32_t colour)
{
    int32_t e0 = ed->e[0], e1 = ed->e[1], e2 = ed->e[2];
    for (int y = py0; y <= py1; y++) {
        int32_t a0 = e0, a1 = e1, a2 = e2;
        int32_t dy = (t->oy + y) * FX_ONE + FX_HALF - ay;
        for (int x = px0; x <= px1; x++) {
            if ((a0 | a1 | a2) >= 0) {
                int32_t dx = (t->ox + x) * FX_ONE + FX_HALF - ax;
                float z = render_depth_at(dp, dx, dy);
                size_t off = (size_t)y * TILE_SIZE + (size_t)x;
                if (render_depth_pass(z, id, t->depth[off], t->idb[off])) {
                    t->depth[off] = z;
                    t->idb[off] = id;
                    t->col[off] = colour;
                    t->pixels_written++;
                }
            }
            if (x < px1) {
                a0 += ed->sx[0];
                a1 += ed->sx[1];
                a2 += ed->sx[2];
            }
        }
        if (y < py1) {
            e0 += ed->sy[0];
            e1 += ed->sy[1];
            e2 += ed->sy[2];
        }
    }
}

/* One triangle of any size inside the tile (tile-local x_fx8 X, Y), rect already clipped to
 * the tile and non-empty: 32-bit stamps when the edge values fit, else the shared 64-bit
 * path. */
static void RK(tri_big)(tile_ctx *t, const int32_t *X, const int32_t *Y, const float *Z, int px0,
                        int py0, int px1, int py1, uint32_t id, uint32_t colour)
{
    const int32_t ox_fx = t->ox * FX_ONE, oy_fx = t->oy * FX_ONE;
    rk_edges ed = {{0}, {0}, {0}};
    int w = px1 - px0 + 1, h = py1 - py0 + 1;
    int r = RK(edges_setup)(X, Y, px0, py0, w, h, &ed);
    if (r == 0)
        return;
    if (r < 0) {
        tile_ctx sub = *t;
        sub.cx0 = t->ox + px0;
        sub.cy0 = t->oy + py0;
        sub.cx1 = t->ox + px1;
        sub.cy1 = t->oy + py1;
        sub.pixels_written = 0;
        rast_tri_int64(&sub, X[0] + ox_fx, Y[0] + oy_fx, Z[0], X[1] + ox_fx, Y[1] + oy_fx, Z[1],
                       X[2] + ox_fx, Y[2] + oy_fx, Z[2], id, colour);
        t->pixels_written += sub.pixels_written;
        return;
    }
    int64_t area2 = (int64_t)(X[1] - X[0]) * (Y[2] - Y[0]) - (int64_t)(X[2] - X[0]) * (Y[1] - Y[0]);
    /* the plane depends on vertex differences only: tile-local and window frames agree */
    depth_plane dp =
        render_depth_plane(X[0], Y[0], Z[0], X[1], Y[1], Z[1], X[2], Y[2], Z[2], area2);
    int32_t ax = X[0] + ox_fx, ay = Y[0] + oy_fx;
#if defined(RK_AVX512)
    int swlog = w <= 4 ? 2 : w <= 8 ? 3 : 4;
    RK(stamps)(t, &ed, swlog, px0, py0, px1, py1, dp, ax, ay, id, colour);
#elif defined(RK_AVX2)
    int swlog = w <= 4 ? 2 : 3;
    RK(stamps)(t, &ed, swlog, px0, py0, px1, py1, dp, ax, ay, id, colour);
#else
    RK(pixels32)(t, &ed, px0, py0, px1, py1, dp, ax, ay, id, colour);
#endif
}

/* Depth test and write of one sample (tile-local pixel). */
static inline void rk_sample(tile_ctx *t, int px, int py, float z, uint32_t id, uint32_t colour)
{
    size_t off = (size_t)py * TILE_SIZE + (size_t)px;
    if (render_depth_pass(z, id, t->depth[off], t->idb[off])) {
        t->depth[off] = z;
        t->idb[off] = id;
        t->col[off] = colour;
        t->pixels_written++;
    }
}

/* Micro-triangles: a rect of at most 2x2 samples and a box under SETUP_SMALL_FX, so every edge
 * value below fits int32 exactly. Samples s = 0..3 are (sx, sy) = (s & 1, s >> 1). */
#define RK_MICRO_SPAN SETUP_SMALL_FX

#if defined(RK_AVX512) || defined(RK_AVX2)
/* Lanes are triangles: lane j = triangle first + i + j. Edges, coverage of the <= 4 samples
 * and their depths are computed for L triangles at once; the depth tests then run in
 * triangle order, so the result equals drawing them one by one (the scalar kernel). */
static void RK(rast_tris)(tile_ctx *t, const tri_cols *c, uint32_t count, uint32_t id)
{
    const int32_t ox_fx = t->ox * FX_ONE, oy_fx = t->oy * FX_ONE;
    const vi vox = VI_SET1(ox_fx), voy = VI_SET1(oy_fx);
    const vi tx0 = VI_SET1(t->cx0 - t->ox), ty0 = VI_SET1(t->cy0 - t->oy);
    const vi tx1 = VI_SET1(t->cx1 - t->ox), ty1 = VI_SET1(t->cy1 - t->oy);
    const vi c127 = VI_SET1(FX_ONE - 1 - FX_HALF), c128 = VI_SET1(FX_HALF);
    const vi one = VI_SET1(1), zero = VI_SET1(0), minus1 = VI_SET1(-1);
    const vi span = VI_SET1(RK_MICRO_SPAN), c256 = VI_SET1(FX_ONE);
    _Alignas(64) int32_t PX[L], PY[L], XX[3][L], YY[3][L];
    _Alignas(64) float ZS[4][L], ZZ[3][L];
    for (uint32_t i = 0; i < count; i += L) {
        size_t at = i;
        int n = count - i < (uint32_t)L ? (int)(count - i) : L;
        vi x0 = VI_SUB(VI_LOAD(c->x0 + at), vox), y0 = VI_SUB(VI_LOAD(c->y0 + at), voy);
        vi x1 = VI_SUB(VI_LOAD(c->x1 + at), vox), y1 = VI_SUB(VI_LOAD(c->y1 + at), voy);
        vi x2 = VI_SUB(VI_LOAD(c->x2 + at), vox), y2 = VI_SUB(VI_LOAD(c->y2 + at), voy);
        vi mnx = VI_MIN(VI_MIN(x0, x1), x2), mxx = VI_MAX(VI_MAX(x0, x1), x2);
        vi mny = VI_MIN(VI_MIN(y0, y1), y2), mxy = VI_MAX(VI_MAX(y0, y1), y2);
        vi px0 = VI_MAX(VI_SRAI(VI_ADD(mnx, c127), FX_BITS), tx0);
        vi px1 = VI_MIN(VI_SRAI(VI_SUB(mxx, c128), FX_BITS), tx1);
        vi py0 = VI_MAX(VI_SRAI(VI_ADD(mny, c127), FX_BITS), ty0);
        vi py1 = VI_MIN(VI_SRAI(VI_SUB(mxy, c128), FX_BITS), ty1);
        vi w1 = VI_SUB(px1, px0), h1 = VI_SUB(py1, py0);
        vmk nonempty = mk_andnot(mk_andnot(mk_first(n), mk_gt(zero, w1)), mk_gt(zero, h1));
        unsigned ne_bits = mk_bits(nonempty);
        if (!ne_bits)
            continue;
        t->tris_rasterized += (uint64_t)__builtin_popcount(ne_bits);
        /* spans are compared as unsigned-safe: huge boxes may overflow the subtraction, which
         * only makes them fail the test and take the exact per-triangle path */
        vi sw = VI_SUB(mxx, mnx), sh = VI_SUB(mxy, mny);
        vmk small = mk_and(nonempty, mk_and(mk_and(mk_gt(span, sw), mk_gt(sw, minus1)),
                                            mk_and(mk_gt(span, sh), mk_gt(sh, minus1))));
        small = mk_andnot(small, mk_or(mk_gt(w1, one), mk_gt(h1, one)));
        unsigned small_bits = mk_bits(small);
        unsigned hit[4] = {0, 0, 0, 0};
        if (small_bits) {
            vi s0x = VI_ADD(VI_SLLI(px0, FX_BITS), c128), s0y = VI_ADD(VI_SLLI(py0, FX_BITS), c128);
            vi X[3] = {x0, x1, x2}, Y[3] = {y0, y1, y2};
            vi e[3], ex[3], ey[3];
            for (int k = 0; k < 3; k++) {
                int a = k, b = k == 2 ? 0 : k + 1;
                vi dx = VI_SUB(X[b], X[a]), dy = VI_SUB(Y[b], Y[a]);
                /* top-left: dy < 0, or dy == 0 and dx > 0; bias = tl - 1 */
                vmk tl = mk_or(mk_gt(zero, dy), mk_and(mk_eq(dy, zero), mk_gt(dx, zero)));
                vi bias = vi_blend(tl, zero, minus1);
                e[k] = VI_ADD(VI_SUB(VI_MUL(dx, VI_SUB(s0y, Y[a])), VI_MUL(dy, VI_SUB(s0x, X[a]))),
                              bias);
                ex[k] = VI_SUB(zero, VI_SLLI(dy, FX_BITS));
                ey[k] = VI_SLLI(dx, FX_BITS);
            }
            vmk okx = mk_gt(w1, zero), oky = mk_gt(h1, zero);
            vmk in[4];
            vi e1s[3], e2s[3], e3s[3];
            for (int k = 0; k < 3; k++) {
                e1s[k] = VI_ADD(e[k], ex[k]);
                e2s[k] = VI_ADD(e[k], ey[k]);
                e3s[k] = VI_ADD(e1s[k], ey[k]);
            }
            in[0] = mk_and(small, mk_gt(VI_OR(VI_OR(e[0], e[1]), e[2]), minus1));
            in[1] = mk_and(mk_and(small, okx), mk_gt(VI_OR(VI_OR(e1s[0], e1s[1]), e1s[2]), minus1));
            in[2] = mk_and(mk_and(small, oky), mk_gt(VI_OR(VI_OR(e2s[0], e2s[1]), e2s[2]), minus1));
            in[3] = mk_and(mk_and(mk_and(small, okx), oky),
                           mk_gt(VI_OR(VI_OR(e3s[0], e3s[1]), e3s[2]), minus1));
            unsigned any = 0;
            for (int s = 0; s < 4; s++) {
                hit[s] = mk_bits(in[s]);
                any |= hit[s];
            }
            if (any) {
                /* render_depth_plane and render_depth_at, lane by lane */
                vfl z0 = VF_LOAD(c->z0 + at), z1 = VF_LOAD(c->z1 + at), z2 = VF_LOAD(c->z2 + at);
                vi area2 = VI_SUB(VI_MUL(VI_SUB(x1, x0), VI_SUB(y2, y0)),
                                  VI_MUL(VI_SUB(x2, x0), VI_SUB(y1, y0)));
                vfl e1x = VF_CVT(VI_SUB(x1, x0)), e1y = VF_CVT(VI_SUB(y1, y0));
                vfl e2x = VF_CVT(VI_SUB(x2, x0)), e2y = VF_CVT(VI_SUB(y2, y0));
                vfl dz1 = VF_SUB(z1, z0), dz2 = VF_SUB(z2, z0);
                vfl area = VF_CVT(area2);
                vfl dzdx = VF_DIV(VF_SUB(VF_MUL(dz1, e2y), VF_MUL(dz2, e1y)), area);
                vfl dzdy = VF_DIV(VF_SUB(VF_MUL(dz2, e1x), VF_MUL(dz1, e2x)), area);
                vi dxs = VI_SUB(s0x, x0), dys = VI_SUB(s0y, y0);
                vfl fdx0 = VF_CVT(dxs), fdx1 = VF_CVT(VI_ADD(dxs, c256));
                vfl fdy0 = VF_CVT(dys), fdy1 = VF_CVT(VI_ADD(dys, c256));
                vfl zr0 = VF_ADD(z0, VF_MUL(dzdy, fdy0)), zr1 = VF_ADD(z0, VF_MUL(dzdy, fdy1));
                VF_STORE(ZS[0], VF_ADD(zr0, VF_MUL(dzdx, fdx0)));
                VF_STORE(ZS[1], VF_ADD(zr0, VF_MUL(dzdx, fdx1)));
                VF_STORE(ZS[2], VF_ADD(zr1, VF_MUL(dzdx, fdx0)));
                VF_STORE(ZS[3], VF_ADD(zr1, VF_MUL(dzdx, fdx1)));
            }
        }
        VI_STORE(PX, px0);
        VI_STORE(PY, py0);
        unsigned big_bits = ne_bits & ~small_bits;
        unsigned any_hit = hit[0] | hit[1] | hit[2] | hit[3];
        if (big_bits) {
            VI_STORE(XX[0], x0);
            VI_STORE(XX[1], x1);
            VI_STORE(XX[2], x2);
            VI_STORE(YY[0], y0);
            VI_STORE(YY[1], y1);
            VI_STORE(YY[2], y2);
            VF_STORE(ZZ[0], VF_LOAD(c->z0 + at));
            VF_STORE(ZZ[1], VF_LOAD(c->z1 + at));
            VF_STORE(ZZ[2], VF_LOAD(c->z2 + at));
        }
        unsigned todo = big_bits | any_hit;
        while (todo) {
            int j = __builtin_ctz(todo);
            todo &= todo - 1;
            uint32_t colour = c->col[at + (size_t)j];
            if (big_bits >> j & 1) {
                int32_t X3[3] = {XX[0][j], XX[1][j], XX[2][j]};
                int32_t Y3[3] = {YY[0][j], YY[1][j], YY[2][j]};
                float Z3[3] = {ZZ[0][j], ZZ[1][j], ZZ[2][j]};
                int bx1 = PX[j], by1 = PY[j];
                /* recompute the clipped rect's far corner (not kept in lanes) */
                int32_t mx = X3[0] > X3[1] ? X3[0] : X3[1], my = Y3[0] > Y3[1] ? Y3[0] : Y3[1];
                mx = X3[2] > mx ? X3[2] : mx;
                my = Y3[2] > my ? Y3[2] : my;
                int ex1 = render_sample_last(mx), ey1 = render_sample_last(my);
                ex1 = ex1 > t->cx1 - t->ox ? t->cx1 - t->ox : ex1;
                ey1 = ey1 > t->cy1 - t->oy ? t->cy1 - t->oy : ey1;
                RK(tri_big)(t, X3, Y3, Z3, bx1, by1, ex1, ey1, id, colour);
                continue;
            }
            for (int s = 0; s < 4; s++)
                if (hit[s] >> j & 1)
                    rk_sample(t, PX[j] + (s & 1), PY[j] + (s >> 1), ZS[s][j], id, colour);
        }
    }
}
#else
/* Scalar: triangle by triangle, the reference the SIMD kernels equal. */
static void RK(rast_tris)(tile_ctx *t, const tri_cols *c, uint32_t count, uint32_t id)
{
    const int32_t ox_fx = t->ox * FX_ONE, oy_fx = t->oy * FX_ONE;
    const int tx0 = t->cx0 - t->ox, ty0 = t->cy0 - t->oy;
    const int tx1 = t->cx1 - t->ox, ty1 = t->cy1 - t->oy;
    for (uint32_t i = 0; i < count; i++) {
        size_t at = i;
        int32_t X[3] = {c->x0[at] - ox_fx, c->x1[at] - ox_fx, c->x2[at] - ox_fx};
        int32_t Y[3] = {c->y0[at] - oy_fx, c->y1[at] - oy_fx, c->y2[at] - oy_fx};
        float Z[3] = {c->z0[at], c->z1[at], c->z2[at]};
        int32_t mnx = X[0] < X[1] ? X[0] : X[1], mxx = X[0] > X[1] ? X[0] : X[1];
        int32_t mny = Y[0] < Y[1] ? Y[0] : Y[1], mxy = Y[0] > Y[1] ? Y[0] : Y[1];
        mnx = X[2] < mnx ? X[2] : mnx;
        mxx = X[2] > mxx ? X[2] : mxx;
        mny = Y[2] < mny ? Y[2] : mny;
        mxy = Y[2] > mxy ? Y[2] : mxy;
        int px0 = render_sample_first(mnx), px1 = render_sample_last(mxx);
        int py0 = render_sample_first(mny), py1 = render_sample_last(mxy);
        px0 = px0 < tx0 ? tx0 : px0;
        py0 = py0 < ty0 ? ty0 : py0;
        px1 = px1 > tx1 ? tx1 : px1;
        py1 = py1 > ty1 ? ty1 : py1;
        if (px0 > px1 || py0 > py1)
            continue;
        t->tris_rasterized++;
        uint32_t colour = c->col[at];
        int64_t swx = (int64_t)mxx - mnx, swy = (int64_t)mxy - mny;
        if (px1 - px0 > 1 || py1 - py0 > 1 || swx >= RK_MICRO_SPAN || swy >= RK_MICRO_SPAN) {
            RK(tri_big)(t, X, Y, Z, px0, py0, px1, py1, id, colour);
            continue;
        }
        int32_t s0x = px0 * FX_ONE + FX_HALF, s0y = py0 * FX_ONE + FX_HALF;
        int32_t e[3], ex[3], ey[3];
        for (int k = 0; k < 3; k++) {
            int a = k, b = k == 2 ? 0 : k + 1;
            int32_t dx = X[b] - X[a], dy = Y[b] - Y[a];
            int tl = dy < 0 || (dy == 0 && dx > 0);
            e[k] = dx * (s0y - Y[a]) - dy * (s0x - X[a]) + tl - 1;
            ex[k] = -dy * FX_ONE;
            ey[k] = dx * FX_ONE;
        }
        int have_plane = 0;
        depth_plane dp = {0, 0, 0};
        for (int s = 0; s < 4; s++) {
            int sx = s & 1, sy = s >> 1;
            if (px0 + sx > px1 || py0 + sy > py1)
                continue;
            int32_t a0 = e[0] + sx * ex[0] + sy * ey[0];
            int32_t a1 = e[1] + sx * ex[1] + sy * ey[1];
            int32_t a2 = e[2] + sx * ex[2] + sy * ey[2];
            if ((a0 | a1 | a2) < 0)
                continue;
            if (!have_plane) {
                int64_t area2 =
                    (int64_t)(X[1] - X[0]) * (Y[2] - Y[0]) - (int64_t)(X[2] - X[0]) * (Y[1] - Y[0]);
                dp =
                    render_depth_plane(X[0], Y[0], Z[0], X[1], Y[1], Z[1], X[2], Y[2], Z[2], area2);
                have_plane = 1;
            }
            float z = render_depth_at(dp, s0x + sx * FX_ONE - X[0], s0y + sy * FX_ONE - Y[0]);
            rk_sample(t, px0 + sx, py0 + sy, z, id, colour);
        }
    }
}
#endif

#if defined(RK_AVX512) || defined(RK_AVX2)
const render_kernels RK(render_kernels) = {
    RK(transform), RK(setup_tris), RK(rast_tris), RK(splats), TW, RK_NAME};
#else
const render_kernels RK(render_kernels) = {RK(transform), RK(setup_tris), RK(rast_tris), NULL, 0,
                                           RK_NAME};
#endif
