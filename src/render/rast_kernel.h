/* SPDX-License-Identifier: MIT */
/* The per-ISA kernels of the renderer, written once against the wide types of core/simd.h
 * (vf, vi, vm; VW lanes) and instantiated by rast_scalar.c (VW = 1), rast_avx2.c (8),
 * rast_avx512.c (16) and rast_neon.c (4, 8 or 16), each of which defines KSUFFIX, RK_NAME and
 * its SIMD_* macro, then includes this. The scalar instance is the reference; the wide ones do its
 * operations lane by lane, so every ISA draws the same bits by construction (as the force kernels
 * do):
 *  - transform: lanes = vertices of one instance;
 *  - splats: lanes = consecutive instances (setup's splat path);
 *  - setup_tris: lanes = triangles of one instance's mesh;
 *  - rast_tris: lanes = micro-triangles of one ref; larger triangles are drawn in stamps
 *    whose lanes are pixels: lane i = pixel (x + (i & (SW-1)), y + (i >> log2 SW)).
 *
 * Exactness: coverage is decided by integer edge functions (identical in every path: 32-bit
 * when the values provably fit, 64-bit otherwise); depth is render_depth_at's formula done
 * lane by lane with IEEE single operations and no contraction; the transform does the scalar
 * operations of render_internal.h in the same order per lane. */
#include "core/simd.h"
#include "render/render_internal.h"

#include <math.h>

#define RK_CAT2(a, b) a##_##b
#define RK_CAT(a, b) RK_CAT2(a, b)
#define RK(name) RK_CAT(name, KSUFFIX)

#if VW == 16
#define VW_LOG2 4
#elif VW == 8
#define VW_LOG2 3
#elif VW == 4
#define VW_LOG2 2
#else
#define VW_LOG2 0
#endif

/* ---- transform -------------------------------------------------------------------------- */

/* Lane j = vertex v + j: clip = ((m0 x + m1 y) + m2 z) + m3 per row; rw = 1 / w; window
 * x = rint(x_clip * rw * win_sx + win_ox) etc.; z_ndc = z_clip * rw. The mesh's padding
 * repeats its last vertex, so whole vectors change neither the checks nor the box. */
static int RK(transform)(const render_mesh *m, const float *mvp, const frame_consts *fc,
                         int32_t *ox, int32_t *oy, float *oz, int32_t bbox[4])
{
    const vf m0 = vf_set1(mvp[0]), m1 = vf_set1(mvp[1]), m2 = vf_set1(mvp[2]), m3 = vf_set1(mvp[3]);
    const vf m4 = vf_set1(mvp[4]), m5 = vf_set1(mvp[5]), m6 = vf_set1(mvp[6]), m7 = vf_set1(mvp[7]);
    const vf m8 = vf_set1(mvp[8]), m9 = vf_set1(mvp[9]), m10 = vf_set1(mvp[10]),
             m11 = vf_set1(mvp[11]);
    const vf m12 = vf_set1(mvp[12]), m13 = vf_set1(mvp[13]), m14 = vf_set1(mvp[14]),
             m15 = vf_set1(mvp[15]);
    const vf sx = vf_set1(fc->win_sx), offx = vf_set1(fc->win_ox);
    const vf sy = vf_set1(fc->win_sy), offy = vf_set1(fc->win_oy);
    const vf gx = vf_set1(fc->guard_x), gy = vf_set1(fc->guard_y), one = vf_set1(1.0f);
    const vf zero = vf_zero();
    vi mnx = vi_set1(INT32_MAX), mny = vi_set1(INT32_MAX);
    vi mxx = vi_set1(INT32_MIN), mxy = vi_set1(INT32_MIN);
    const int n = (m->vertex_count + VW - 1) / VW * VW; /* <= vertex_padded */
    for (int j = 0; j < n; j += VW) {
        vf x = vf_load(m->x + j), y = vf_load(m->y + j), z = vf_load(m->z + j);
        vf cx = vf_add(vf_add(vf_add(vf_mul(m0, x), vf_mul(m1, y)), vf_mul(m2, z)), m3);
        vf cy = vf_add(vf_add(vf_add(vf_mul(m4, x), vf_mul(m5, y)), vf_mul(m6, z)), m7);
        vf cz = vf_add(vf_add(vf_add(vf_mul(m8, x), vf_mul(m9, y)), vf_mul(m10, z)), m11);
        vf cw = vf_add(vf_add(vf_add(vf_mul(m12, x), vf_mul(m13, y)), vf_mul(m14, z)), m15);
        vf gxw = vf_mul(gx, cw), gyw = vf_mul(gy, cw);
        /* ordered compares: a NaN fails, as the clipper wants */
        vm ok = vm_and(vf_gt(cw, zero), vf_ge(vf_add(cz, cw), zero));
        ok = vm_and(ok, vm_and(vf_ge(vf_sub(gxw, cx), zero), vf_ge(vf_add(gxw, cx), zero)));
        ok = vm_and(ok, vm_and(vf_ge(vf_sub(gyw, cy), zero), vf_ge(vf_add(gyw, cy), zero)));
        if (!vm_all(ok))
            return 1;
        vf rw = vf_div(one, cw);
        vi ix = vi_round(vf_add(vf_mul(vf_mul(cx, rw), sx), offx));
        vi iy = vi_round(vf_add(vf_mul(vf_mul(cy, rw), sy), offy));
        vi_store(ox + j, ix);
        vi_store(oy + j, iy);
        vf_store(oz + j, vf_mul(cz, rw));
        mnx = vi_min(mnx, ix);
        mny = vi_min(mny, iy);
        mxx = vi_max(mxx, ix);
        mxy = vi_max(mxy, iy);
    }
    bbox[0] = vi_hmin(mnx);
    bbox[1] = vi_hmin(mny);
    bbox[2] = vi_hmax(mxx);
    bbox[3] = vi_hmax(mxy);
    return 0;
}

/* ---- instances in lanes: the splat path and the mesh path of setup ------------------------ */

/* t < 0 ? 0 : t > 1 ? 1 : t, NaN kept (shade.c's clamp) */
static inline vf rk_clamp01(vf t)
{
    const vf zero = vf_zero(), one = vf_set1(1.0f);
    return vf_select(vf_lt(t, zero), zero, vf_select(vf_gt(t, one), one, t));
}
/* ((c0 * 0 + c1 * 0) + c2 * z) + c3: clip_vertex of the model point (0, 0, z), one row */
static inline vf rk_clip_row(vf c0, vf c1, vf c2, vf c3, vf z)
{
    const vf zero = vf_zero();
    return vf_add(vf_add(vf_add(vf_mul(c0, zero), vf_mul(c1, zero)), vf_mul(c2, z)), c3);
}
/* shade_pack's channel: render_cvtt(v + 0.5f) clamped to [0, 255] */
static inline vi rk_channel(vf v)
{
    vi q = vi_trunc(vf_add(v, vf_set1(0.5f)));
    return vi_min(vi_max(q, vi_set1(0)), vi_set1(255));
}
/* shade_pack(a, b, d) of lanes: 0xFF000000 | channels of (a + b * max(d, 0)) + 0.5 */
static inline vi rk_pack(const vf a[3], const vf b[3], vf d)
{
    vf k = vf_max(d, vf_zero());
    vi colour = vi_set1((int32_t)0xFF000000u);
    for (int c = 0; c < 3; c++)
        colour = vi_or(colour, vi_sll(rk_channel(vf_add(a[c], vf_mul(b[c], k))), 16 - 8 * c));
    return colour;
}

/* Lane j = instance i + j of n (1 <= n <= VW; the others are zeros and their results unused):
 * instance_matrix done lane by lane, each operation in its order (the cross products, X and
 * the mvp's first two columns only enter as m * 0, kept so that zero signs and non-finite
 * values come out the same). */
typedef struct rk_inst {
    vf px, py, pz, s2; /* position; squared speed */
    vf X[3], Y[3], Z[3];
    vf mvp[16];
} rk_inst;

static inline void rk_instances(const frame_consts *fc, const shoal_render_instances *inst,
                                size_t i, int n, rk_inst *q)
{
    const vf zero = vf_zero(), one = vf_set1(1.0f);
    const vf vx = vf_load_n(inst->vx + i, n), vy = vf_load_n(inst->vy + i, n),
             vz = vf_load_n(inst->vz + i, n);
    q->px = vf_load_n(inst->px + i, n);
    q->py = vf_load_n(inst->py + i, n);
    q->pz = vf_load_n(inst->pz + i, n);
    /* Z = v / |v|, X = normalize(Z.z, 0, -Z.x) (or (1, 0, 0) when vertical), Y = cross(Z, X);
     * the identity when v is zero or not finite */
    vf s2 = vf_add(vf_add(vf_mul(vx, vx), vf_mul(vy, vy)), vf_mul(vz, vz));
    vm moving = vm_and(vf_gt(s2, zero), vf_lt(s2, vf_set1(INFINITY)));
    vf inv = vf_div(one, vf_sqrt(s2));
    vf z0 = vf_mul(vx, inv), z1 = vf_mul(vy, inv), z2 = vf_mul(vz, inv);
    vf x2 = vf_add(vf_mul(z2, z2), vf_mul(z0, z0));
    vm flat = vf_gt(x2, zero);
    vf xi = vf_div(one, vf_sqrt(x2));
    vf X0 = vf_select(flat, vf_mul(z2, xi), one), X1 = zero;
    vf X2 = vf_select(flat, vf_mul(vf_minus(z0), xi), zero);
    vf Y0 = vf_sub(vf_mul(z1, X2), vf_mul(z2, X1));
    vf Y1 = vf_sub(vf_mul(z2, X0), vf_mul(z0, X2));
    vf Y2 = vf_sub(vf_mul(z0, X1), vf_mul(z1, X0));
    q->s2 = s2;
    q->X[0] = vf_select(moving, X0, one);
    q->X[1] = X1;
    q->X[2] = vf_select(moving, X2, zero);
    q->Y[0] = vf_select(moving, Y0, zero);
    q->Y[1] = vf_select(moving, Y1, one);
    q->Y[2] = vf_select(moving, Y2, zero);
    q->Z[0] = vf_select(moving, z0, zero);
    q->Z[1] = vf_select(moving, z1, zero);
    q->Z[2] = vf_select(moving, z2, one);
    vf L = vf_set1(fc->fish_length);
    if (inst->scale) {
        vf sc = vf_load_n(inst->scale + i, n);
        L = vf_select(vf_eq(sc, one), L, vf_mul(L, sc));
    }
    for (int r = 0; r < 4; r++) {
        const float *m = fc->vp + 4 * r;
        const vf a = vf_set1(m[0]), b = vf_set1(m[1]), c = vf_set1(m[2]), d = vf_set1(m[3]);
        const vf *X = q->X, *Y = q->Y, *Z = q->Z;
        q->mvp[4 * r + 0] =
            vf_mul(vf_add(vf_add(vf_mul(a, X[0]), vf_mul(b, X[1])), vf_mul(c, X[2])), L);
        q->mvp[4 * r + 1] =
            vf_mul(vf_add(vf_add(vf_mul(a, Y[0]), vf_mul(b, Y[1])), vf_mul(c, Y[2])), L);
        q->mvp[4 * r + 2] =
            vf_mul(vf_add(vf_add(vf_mul(a, Z[0]), vf_mul(b, Z[1])), vf_mul(c, Z[2])), L);
        q->mvp[4 * r + 3] =
            vf_add(vf_add(vf_add(vf_mul(a, q->px), vf_mul(b, q->py)), vf_mul(c, q->pz)), d);
    }
}

/* shade_instance of the lanes, with the image row `rowf` of each: a and b of colour(d) =
 * a + b * max(0, d) per channel (the base colour by speed unless a colour or group says
 * otherwise, the fog by the distance to the eye toward the background of that row). */
static inline void rk_shade(const frame_consts *fc, const shoal_render_instances *inst, size_t i,
                            int n, const rk_inst *q, vf rowf, vf a[3], vf b[3])
{
    const vf zero = vf_zero(), one = vf_set1(1.0f), half = vf_set1(0.5f), two = vf_set1(2.0f);
    vf base[3];
    {
        vf t = fc->max_speed > 0.0f ? vf_div(vf_sqrt(q->s2), vf_set1(fc->max_speed)) : zero;
        t = rk_clamp01(t);
        vm lo = vf_lt(t, half);
        vf u = vf_select(lo, vf_mul(t, two), vf_mul(vf_sub(t, half), two));
        for (int c = 0; c < 3; c++) {
            const float *s0 = shade_speed_stops[0], *s1 = shade_speed_stops[1],
                        *s2p = shade_speed_stops[2];
            vf lo_v = vf_add(vf_set1(s0[c]), vf_mul(vf_set1(s1[c] - s0[c]), u));
            vf hi_v = vf_add(vf_set1(s1[c]), vf_mul(vf_set1(s2p[c] - s1[c]), u));
            base[c] = vf_select(lo, lo_v, hi_v);
        }
    }
    if (inst->color || inst->group) {
        _Alignas(64) float b3[3][VW];
        for (int c = 0; c < 3; c++)
            vf_store(b3[c], base[c]);
        for (int j = 0; j < n; j++) {
            float fb[3];
            if (shade_base_fixed(inst, i + (size_t)j, fb))
                for (int c = 0; c < 3; c++)
                    b3[c][j] = fb[c];
        }
        for (int c = 0; c < 3; c++)
            base[c] = vf_load(b3[c]);
    }
    vf dx = vf_sub(q->px, vf_set1(fc->eye[0])), dy = vf_sub(q->py, vf_set1(fc->eye[1])),
       dz = vf_sub(q->pz, vf_set1(fc->eye[2]));
    vf dist = vf_sqrt(vf_add(vf_add(vf_mul(dx, dx), vf_mul(dy, dy)), vf_mul(dz, dz)));
    vf f = vf_div(vf_sub(dist, vf_set1(fc->fog_start)), vf_set1(fc->fog_end - fc->fog_start));
    f = vf_mul(rk_clamp01(f), vf_set1(fc->fog_max));
    vi row = vi_trunc(rowf);
    row = vi_max(row, vi_set1(0));
    row = vi_min(row, vi_set1(fc->height - 1));
    vi bg = vi_gather((const int32_t *)fc->bg_row, row);
    const vf omf = vf_sub(one, f), amb = vf_set1(shade_ambient), dif = vf_set1(shade_diffuse);
    for (int c = 0; c < 3; c++) {
        vf fogc = vf_from_vi(vi_and(vi_srl(bg, 16 - 8 * c), vi_set1(255)));
        a[c] = vf_add(vf_mul(vf_mul(base[c], amb), omf), vf_mul(fogc, f));
        b[c] = vf_mul(vf_mul(base[c], dif), omf);
    }
}

/* The splat path for instances i .. i + n - 1 (1 <= n <= VW; lane j = instance i + j): the
 * centre's image row, the colour shade_pack(sh, 0.55f) (a splat is lit as a fish seen from
 * the side), the three projected points and the box. A far fish is a depth-tested splat over
 * the samples inside the box of its projected head and tail (grown by a quarter pixel), or
 * the pixel holding its centre; one depth (the centre's). */
static void RK(splats)(const frame_consts *fc, const shoal_render_instances *inst, size_t i, int n,
                       splat_lanes *out)
{
    const vf zero = vf_zero(), one = vf_set1(1.0f);
    rk_inst q;
    rk_instances(fc, inst, i, n, &q);
    /* clip rows x, y, z, w of the centre (0,0,0), head (0,0,0.45) and tail (0,0,-0.45) */
    vf cc[4], ch[4], ct[4];
    const vf zh = vf_set1(0.45f), zt = vf_set1(-0.45f);
    for (int r = 0; r < 4; r++) {
        const vf *m = q.mvp + 4 * r;
        cc[r] = rk_clip_row(m[0], m[1], m[2], m[3], zero);
        ch[r] = rk_clip_row(m[0], m[1], m[2], m[3], zh);
        ct[r] = rk_clip_row(m[0], m[1], m[2], m[3], zt);
    }
    const vf wsx = vf_set1(fc->win_sx), wox = vf_set1(fc->win_ox);
    const vf wsy = vf_set1(fc->win_sy), woy = vf_set1(fc->win_oy);
    /* the centre's row: c.w > 0 ? (c.y / c.w * win_sy + win_oy) / FX_ONE : 0 */
    vf rowf = vf_div(vf_add(vf_mul(vf_div(cc[1], cc[3]), wsy), woy), vf_set1((float)FX_ONE));
    rowf = vf_select(vf_gt(cc[3], zero), rowf, zero);
    vf a[3], b[3];
    rk_shade(fc, inst, i, n, &q, rowf, a, b);
    vi colour = rk_pack(a, b, vf_set1(0.55f));
    /* every point in front of the near plane and within 4e6 x_fx8, else the mesh path (which
     * clips) takes the fish */
    vf *pts[3] = {cc, ch, ct};
    vi wx[3], wy[3];
    vm ok = vm_first(n);
    const vf lim = vf_set1(4.0e6f);
    for (int p = 0; p < 3; p++) {
        const vf *qq = pts[p];
        ok = vm_and(ok, vm_and(vf_gt(qq[3], zero), vf_ge(vf_add(qq[2], qq[3]), zero)));
        vf rw = vf_div(one, qq[3]);
        vf fx = vf_add(vf_mul(vf_mul(qq[0], rw), wsx), wox);
        vf fy = vf_add(vf_mul(vf_mul(qq[1], rw), wsy), woy);
        ok = vm_and(ok, vm_and(vf_lt(vf_abs(fx), lim), vf_lt(vf_abs(fy), lim)));
        wx[p] = vi_round(fx);
        wy[p] = vi_round(fy);
    }
    /* beyond the far plane: nothing to draw */
    vf zc = vf_div(cc[2], cc[3]);
    vm draw = vm_and(ok, vf_lt(zc, one));
    vi mnx = vi_min(wx[1], wx[2]), mxx = vi_max(wx[1], wx[2]);
    vi mny = vi_min(wy[1], wy[2]), mxy = vi_max(wy[1], wy[2]);
    const vi q4 = vi_set1(FX_ONE / 4), c127 = vi_set1(FX_ONE - 1 - FX_HALF),
             c128 = vi_set1(FX_HALF);
    vi px0 = vi_sra(vi_add(vi_sub(mnx, q4), c127), FX_BITS);
    vi px1 = vi_sra(vi_sub(vi_add(mxx, q4), c128), FX_BITS);
    vi py0 = vi_sra(vi_add(vi_sub(mny, q4), c127), FX_BITS);
    vi py1 = vi_sra(vi_sub(vi_add(mxy, q4), c128), FX_BITS);
    vm empty = vm_or(vi_gt(px0, px1), vi_gt(py0, py1));
    vi cx = vi_sra(wx[0], FX_BITS), cy = vi_sra(wy[0], FX_BITS);
    px0 = vi_select(empty, cx, px0);
    px1 = vi_select(empty, cx, px1);
    py0 = vi_select(empty, cy, py0);
    py1 = vi_select(empty, cy, py1);
    px0 = vi_max(px0, vi_set1(0));
    py0 = vi_max(py0, vi_set1(0));
    px1 = vi_min(px1, vi_set1(fc->width - 1));
    py1 = vi_min(py1, vi_set1(fc->height - 1));
    vm none = vm_or(vi_gt(px0, px1), vi_gt(py0, py1));
    vi_store(out->px0, px0);
    vi_store(out->py0, py0);
    vi_store(out->px1, px1);
    vi_store(out->py1, py1);
    vf_store((float *)(void *)out->z, zc);
    vi_store((int32_t *)(void *)out->colour, colour);
    out->done = vm_bits(ok);
    out->ref = vm_bits(draw) & ~vm_bits(none);
}

/* The depth floor of kept triangles (depth_floor.c's setup_tri_floor, lane by lane) */
static inline vf rk_tri_floor(vi x0, vi y0, vf z0, vi x1, vi y1, vf z1, vi x2, vi y2, vf z2)
{
    const vf zero = vf_zero(), one = vf_set1(1.0f);
    vf e1x = vf_from_vi(vi_sub(x1, x0)), e1y = vf_from_vi(vi_sub(y1, y0));
    vf e2x = vf_from_vi(vi_sub(x2, x0)), e2y = vf_from_vi(vi_sub(y2, y0));
    vf a = vf_mul(e1x, e2y), b = vf_mul(e2x, e1y);
    vf area = vf_sub(vf_abs(vf_sub(a, b)), vf_mul(vf_add(vf_abs(a), vf_abs(b)), vf_set1(0x1p-20f)));
    vf edges = vf_add(vf_add(vf_abs(e1x), vf_abs(e1y)), vf_add(vf_abs(e2x), vf_abs(e2y)));
    vf w = vf_max(vf_abs(e1x), vf_max(vf_abs(e2x), vf_abs(vf_sub(e1x, e2x))));
    vf h = vf_max(vf_abs(e1y), vf_max(vf_abs(e2y), vf_abs(vf_sub(e1y, e2y))));
    vf za = vf_max(vf_abs(z0), vf_max(vf_abs(z1), vf_abs(z2)));
    vm pos = vf_gt(area, zero);
    vf S = vf_div(vf_mul(vf_add(vf_abs(vf_sub(z1, z0)), vf_abs(vf_sub(z2, z0))), edges),
                  vf_select(pos, area, one));
    vf zl = vf_sub(vf_min(z0, vf_min(z1, z2)),
                   vf_mul(vf_add(za, vf_mul(S, vf_add(w, h))), vf_set1(0x1p-16f)));
    vm ok = vm_and(pos, vf_ge(zl, vf_set1(-INFINITY)));
    return vf_select(ok, zl, vf_set1(-INFINITY));
}

/* The mesh path of setup for the instances of `lanes` (bits of lane j = instance i + j, all
 * drawn with mesh m): instance_matrix, the vertex transform with its clip test (a broadcast
 * model vertex, each lane its own matrix), the box, shade_instance from the box's middle row,
 * then per mesh triangle the back-face and sample-gap culls, the colour, the sample rect and
 * the depth floor, each in the order of the scalar functions (setup.c, instance.c, shade.c).
 * A lane with a vertex that needs the clipper, or a box of SETUP_SMALL_FX or more (its areas
 * need int64), is left to the per-instance path (out->fallback). `vs` is scratch for
 * 3 * m->vertex_count vectors. */
static void RK(meshes)(const frame_consts *fc, const shoal_render_instances *inst, size_t i, int n,
                       unsigned lanes, const render_mesh *m, mesh_lanes *out, int32_t *vs)
{
    const vf zero = vf_zero(), one = vf_set1(1.0f);
    rk_inst q;
    rk_instances(fc, inst, i, n, &q);
    const vf *M = q.mvp;
    const vf sx = vf_set1(fc->win_sx), offx = vf_set1(fc->win_ox);
    const vf sy = vf_set1(fc->win_sy), offy = vf_set1(fc->win_oy);
    const vf gx = vf_set1(fc->guard_x), gy = vf_set1(fc->guard_y);
    vi mnx = vi_set1(INT32_MAX), mny = vi_set1(INT32_MAX);
    vi mxx = vi_set1(INT32_MIN), mxy = vi_set1(INT32_MIN);
    vm ok = vm_first(n);
    /* lane j of vertex v: VX at vs[(3 v) VW + j], VY at vs[(3 v + 1) VW + j], VZ after */
    for (int v = 0; v < m->vertex_count; v++) {
        const vf x = vf_set1(m->x[v]), y = vf_set1(m->y[v]), z = vf_set1(m->z[v]);
        vf cx = vf_add(vf_add(vf_add(vf_mul(M[0], x), vf_mul(M[1], y)), vf_mul(M[2], z)), M[3]);
        vf cy = vf_add(vf_add(vf_add(vf_mul(M[4], x), vf_mul(M[5], y)), vf_mul(M[6], z)), M[7]);
        vf cz = vf_add(vf_add(vf_add(vf_mul(M[8], x), vf_mul(M[9], y)), vf_mul(M[10], z)), M[11]);
        vf cw = vf_add(vf_add(vf_add(vf_mul(M[12], x), vf_mul(M[13], y)), vf_mul(M[14], z)), M[15]);
        vf gxw = vf_mul(gx, cw), gyw = vf_mul(gy, cw);
        ok = vm_and(ok, vm_and(vf_gt(cw, zero), vf_ge(vf_add(cz, cw), zero)));
        ok = vm_and(ok, vm_and(vf_ge(vf_sub(gxw, cx), zero), vf_ge(vf_add(gxw, cx), zero)));
        ok = vm_and(ok, vm_and(vf_ge(vf_sub(gyw, cy), zero), vf_ge(vf_add(gyw, cy), zero)));
        vf rw = vf_div(one, cw);
        vi ix = vi_round(vf_add(vf_mul(vf_mul(cx, rw), sx), offx));
        vi iy = vi_round(vf_add(vf_mul(vf_mul(cy, rw), sy), offy));
        int32_t *o = vs + (size_t)3 * (size_t)v * VW;
        vi_store(o, ix);
        vi_store(o + VW, iy);
        vf_store((float *)(void *)(o + 2 * VW), vf_mul(cz, rw));
        mnx = vi_min(mnx, ix);
        mny = vi_min(mny, iy);
        mxx = vi_max(mxx, ix);
        mxy = vi_max(mxy, iy);
    }
    /* the per-instance path: a vertex for the clipper, or a box too big for int32 areas */
    const vi small = vi_set1(SETUP_SMALL_FX - 1);
    vm big = vm_or(vi_gt(vi_sub(mxx, mnx), small), vi_gt(vi_sub(mxy, mny), small));
    unsigned fallback = lanes & ~(vm_bits(ok) & ~vm_bits(big));
    out->fallback = fallback;
    /* whole fish off the image's samples: nothing to draw */
    const vi c127 = vi_set1(FX_ONE - 1 - FX_HALF), c128 = vi_set1(FX_HALF);
    const vi izero = vi_set1(0), wmax = vi_set1(fc->width - 1), hmax = vi_set1(fc->height - 1);
    vm off = vm_or(vi_gt(vi_sra(vi_add(mnx, c127), FX_BITS), wmax),
                   vi_gt(izero, vi_sra(vi_sub(mxx, c128), FX_BITS)));
    off = vm_or(off, vm_or(vi_gt(vi_sra(vi_add(mny, c127), FX_BITS), hmax),
                           vi_gt(izero, vi_sra(vi_sub(mxy, c128), FX_BITS))));
    unsigned active = lanes & ~fallback & ~vm_bits(off);
    vi count = izero;
    vi rx0 = vi_set1(INT32_MAX), ry0 = vi_set1(INT32_MAX);
    vi rx1 = vi_set1(INT32_MIN), ry1 = vi_set1(INT32_MIN);
    vf floor = vf_set1(INFINITY);
    if (active) {
        vf a[3] = {zero, zero, zero}, b[3] = {zero, zero, zero}, l[3] = {zero, zero, zero};
        vi idc = izero;
        if (fc->shade_id) {
            _Alignas(64) int32_t ids[VW] = {0};
            for (int j = 0; j < n; j++) {
                size_t k = i + (size_t)j;
                ids[j] = (int32_t)shade_id_colour(inst->id ? inst->id[k] : (uint32_t)k);
            }
            idc = vi_load(ids);
        } else {
            /* the row of the box's middle: ((y0 >> 1) + (y1 >> 1)) / FX_ONE */
            vf rowf =
                vf_div(vf_from_vi(vi_add(vi_sra(mny, 1), vi_sra(mxy, 1))), vf_set1((float)FX_ONE));
            rk_shade(fc, inst, i, n, &q, rowf, a, b);
            /* the light in model space: (R^T l)_c = rot[0][c] L0 + rot[1][c] L1 + rot[2][c] L2 */
            const vf *axes[3] = {q.X, q.Y, q.Z};
            float L[3];
            shade_light(L);
            for (int c = 0; c < 3; c++)
                l[c] = vf_add(
                    vf_add(vf_mul(axes[c][0], vf_set1(L[0])), vf_mul(axes[c][1], vf_set1(L[1]))),
                    vf_mul(axes[c][2], vf_set1(L[2])));
        }
        uint32_t *tri = out->tri;
        const vm actm = vm_of_bits(active);
        for (int t = 0; t < m->triangle_count; t++) {
            const int32_t *p0 = vs + (size_t)3 * (size_t)m->i0[t] * VW;
            const int32_t *p1 = vs + (size_t)3 * (size_t)m->i1[t] * VW;
            const int32_t *p2 = vs + (size_t)3 * (size_t)m->i2[t] * VW;
            vi x0 = vi_load(p0), y0 = vi_load(p0 + VW);
            vi x1 = vi_load(p1), y1 = vi_load(p1 + VW);
            vi x2 = vi_load(p2), y2 = vi_load(p2 + VW);
            vi area2 = vi_sub(vi_mul(vi_sub(x1, x0), vi_sub(y2, y0)),
                              vi_mul(vi_sub(x2, x0), vi_sub(y1, y0)));
            vi tx0 = vi_min(vi_min(x0, x1), x2), tx1 = vi_max(vi_max(x0, x1), x2);
            vi ty0 = vi_min(vi_min(y0, y1), y2), ty1 = vi_max(vi_max(y0, y1), y2);
            vi px0 = vi_max(vi_sra(vi_add(tx0, c127), FX_BITS), izero);
            vi px1 = vi_min(vi_sra(vi_sub(tx1, c128), FX_BITS), wmax);
            vi py0 = vi_max(vi_sra(vi_add(ty0, c127), FX_BITS), izero);
            vi py1 = vi_min(vi_sra(vi_sub(ty1, c128), FX_BITS), hmax);
            vm keep = vm_and(actm, vi_gt(izero, area2));
            keep = vm_andnot(vm_andnot(keep, vi_gt(px0, px1)), vi_gt(py0, py1));
            unsigned kb = vm_bits(keep);
            out->keep[t] = kb;
            if (!kb)
                continue;
            vi col = idc;
            if (!fc->shade_id) {
                vf d =
                    vf_add(vf_add(vf_mul(vf_set1(m->nx[t]), l[0]), vf_mul(vf_set1(m->ny[t]), l[1])),
                           vf_mul(vf_set1(m->nz[t]), l[2]));
                col = rk_pack(a, b, d);
            }
            vf z0 = vf_load((const float *)(const void *)(p0 + 2 * VW));
            vf z1 = vf_load((const float *)(const void *)(p1 + 2 * VW));
            vf z2 = vf_load((const float *)(const void *)(p2 + 2 * VW));
            /* positive orientation: vertices 1 and 2 swap */
            int32_t *o = (int32_t *)(void *)(tri + (size_t)t * TRI_FIELDS * VW);
            vi_store(o, x0);
            vi_store(o + VW, y0);
            vi_store(o + 2 * VW, x2);
            vi_store(o + 3 * VW, y2);
            vi_store(o + 4 * VW, x1);
            vi_store(o + 5 * VW, y1);
            vf_store((float *)(void *)(o + 6 * VW), z0);
            vf_store((float *)(void *)(o + 7 * VW), z2);
            vf_store((float *)(void *)(o + 8 * VW), z1);
            vi_store(o + 9 * VW, col);
            count = vi_add(count, vi_select(keep, vi_set1(1), izero));
            rx0 = vi_min(rx0, vi_select(keep, px0, vi_set1(INT32_MAX)));
            ry0 = vi_min(ry0, vi_select(keep, py0, vi_set1(INT32_MAX)));
            rx1 = vi_max(rx1, vi_select(keep, px1, vi_set1(INT32_MIN)));
            ry1 = vi_max(ry1, vi_select(keep, py1, vi_set1(INT32_MIN)));
            floor = vf_select(keep, vf_min(rk_tri_floor(x0, y0, z0, x2, y2, z2, x1, y1, z1), floor),
                              floor);
        }
    } else {
        for (int t = 0; t < m->triangle_count; t++)
            out->keep[t] = 0;
    }
    for (int t = m->triangle_count; t < m->triangle_padded; t++)
        out->keep[t] = 0; /* whole blocks of VW for meshes_emit */
    vi_store(out->count, count);
    vi_store(out->rect[0], rx0);
    vi_store(out->rect[1], ry0);
    vi_store(out->rect[2], rx1);
    vi_store(out->rect[3], ry1);
    vf_store(out->floor, floor);
}

/* The kept triangles of each lane of `lanes` (a meshes call's done lanes) to dst[j]: ten
 * columns of count[j] words, as tri_cols_at reads them. Blocks of VW triangles are
 * transposed (rows = triangles, lanes = instances -> rows = instances, lanes = triangles)
 * and each instance's kept ones appended exactly, in triangle order. */
static void RK(meshes_emit)(const mesh_lanes *ml, const render_mesh *m, unsigned lanes,
                            uint32_t *const *dst)
{
    const vi zero = vi_set1(0);
    int32_t pos[VW];
    for (int j = 0; j < VW; j++)
        pos[j] = 0;
    for (int b = 0; b < m->triangle_count; b += VW) {
        /* lane j's kept triangles among b .. b + VW - 1 (bit u: triangle b + u) */
        vi kv = vi_load((const int32_t *)ml->keep + b);
        unsigned km[VW];
        int kc[VW];
        unsigned any = 0;
        for (int j = 0; j < VW; j++) {
            km[j] = (lanes >> j & 1u) ? vm_bits(vi_gt(vi_and(kv, vi_set1(1 << j)), zero)) : 0u;
            kc[j] = __builtin_popcount(km[j]);
            any |= km[j];
        }
        if (!any)
            continue;
        for (int f = 0; f < TRI_FIELDS; f++) {
            vi rows[VW];
            for (int u = 0; u < VW; u++)
                rows[u] =
                    vi_load((const int32_t *)ml->tri + ((size_t)(b + u) * TRI_FIELDS + f) * VW);
            vi_transpose(rows);
            for (int j = 0; j < VW; j++)
                if (kc[j])
                    vi_append_n((int32_t *)dst[j] + (size_t)f * (size_t)ml->count[j] + pos[j],
                                vm_perm(vm_of_bits(km[j])), rows[j], kc[j]);
        }
        for (int j = 0; j < VW; j++)
            pos[j] += kc[j];
    }
}

/* ---- setup of one instance's triangles ---------------------------------------------------- */

/* Lane j = mesh triangle t + j. setup_tri_one's decisions and values: area2 is exact in int32
 * here because the instance's box is under SETUP_SMALL_FX (|products| < 2^28); the colour
 * repeats shade_pack's float operations. Kept lanes are appended in lane order (the padding
 * triangles (0, 0, 0) have zero area and are never kept). */
static uint32_t RK(setup_tris)(const render_mesh *m, const int32_t *X, const int32_t *Y,
                               const float *Z, const tri_shade *ts, const frame_consts *fc,
                               const tri_cols *out, size_t base, int32_t rect[4])
{
    const vi zero = vi_set1(0), wmax = vi_set1(fc->width - 1), hmax = vi_set1(fc->height - 1);
    const vi c127 = vi_set1(FX_ONE - 1 - FX_HALF), c128 = vi_set1(FX_HALF);
    const vf l0 = vf_set1(ts->sh.light_model[0]), l1 = vf_set1(ts->sh.light_model[1]),
             l2 = vf_set1(ts->sh.light_model[2]);
    const vf fzero = vf_zero(), half = vf_set1(0.5f);
    const vf a0 = vf_set1(ts->sh.a[0]), a1 = vf_set1(ts->sh.a[1]), a2 = vf_set1(ts->sh.a[2]);
    const vf b0 = vf_set1(ts->sh.b[0]), b1 = vf_set1(ts->sh.b[1]), b2 = vf_set1(ts->sh.b[2]);
    const vi c255 = vi_set1(255), alpha = vi_set1((int32_t)0xFF000000u);
    const vi idc = vi_set1((int32_t)ts->id_colour);
    vi rx0 = vi_set1(INT32_MAX), ry0 = vi_set1(INT32_MAX);
    vi rx1 = vi_set1(INT32_MIN), ry1 = vi_set1(INT32_MIN);
    uint32_t kept = 0;
    const int nt = (m->triangle_count + VW - 1) / VW * VW; /* <= triangle_padded */
    for (int t = 0; t < nt; t += VW) {
        vi i0 = vi_load(m->i0 + t), i1 = vi_load(m->i1 + t), i2 = vi_load(m->i2 + t);
        vi x0 = vi_gather(X, i0), y0 = vi_gather(Y, i0);
        vi x1 = vi_gather(X, i1), y1 = vi_gather(Y, i1);
        vi x2 = vi_gather(X, i2), y2 = vi_gather(Y, i2);
        vi area2 =
            vi_sub(vi_mul(vi_sub(x1, x0), vi_sub(y2, y0)), vi_mul(vi_sub(x2, x0), vi_sub(y1, y0)));
        vm front = vi_gt(zero, area2);
        vi mnx = vi_min(vi_min(x0, x1), x2), mxx = vi_max(vi_max(x0, x1), x2);
        vi mny = vi_min(vi_min(y0, y1), y2), mxy = vi_max(vi_max(y0, y1), y2);
        vi px0 = vi_max(vi_sra(vi_add(mnx, c127), FX_BITS), zero);
        vi px1 = vi_min(vi_sra(vi_sub(mxx, c128), FX_BITS), wmax);
        vi py0 = vi_max(vi_sra(vi_add(mny, c127), FX_BITS), zero);
        vi py1 = vi_min(vi_sra(vi_sub(mxy, c128), FX_BITS), hmax);
        vm keep = vm_andnot(vm_andnot(front, vi_gt(px0, px1)), vi_gt(py0, py1));
        if (!vm_any(keep))
            continue;
        vi col;
        if (ts->id_mode) {
            col = idc;
        } else {
            vf d = vf_add(vf_add(vf_mul(vf_load(m->nx + t), l0), vf_mul(vf_load(m->ny + t), l1)),
                          vf_mul(vf_load(m->nz + t), l2));
            vf k = vf_max(d, fzero);
            vi r = vi_trunc(vf_add(vf_add(a0, vf_mul(b0, k)), half));
            vi g = vi_trunc(vf_add(vf_add(a1, vf_mul(b1, k)), half));
            vi b = vi_trunc(vf_add(vf_add(a2, vf_mul(b2, k)), half));
            r = vi_min(vi_max(r, zero), c255);
            g = vi_min(vi_max(g, zero), c255);
            b = vi_min(vi_max(b, zero), c255);
            col = vi_or(vi_or(alpha, vi_sll(r, 16)), vi_or(vi_sll(g, 8), b));
        }
        vf z0 = vf_gather(Z, i0), z1 = vf_gather(Z, i1), z2 = vf_gather(Z, i2);
        size_t at = base + kept;
        vperm p = vm_perm(keep);
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
        rx0 = vi_min(rx0, vi_select(keep, px0, vi_set1(INT32_MAX)));
        ry0 = vi_min(ry0, vi_select(keep, py0, vi_set1(INT32_MAX)));
        rx1 = vi_max(rx1, vi_select(keep, px1, vi_set1(INT32_MIN)));
        ry1 = vi_max(ry1, vi_select(keep, py1, vi_set1(INT32_MIN)));
        kept += (uint32_t)vm_count(keep);
    }
    int32_t v;
    v = vi_hmin(rx0);
    rect[0] = v < rect[0] ? v : rect[0];
    v = vi_hmin(ry0);
    rect[1] = v < rect[1] ? v : rect[1];
    v = vi_hmax(rx1);
    rect[2] = v > rect[2] ? v : rect[2];
    v = vi_hmax(ry1);
    rect[3] = v > rect[3] ? v : rect[3];
    return kept;
}

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

/* Stamps of SW x SH pixels (SW = 1 << swlog, SW * SH = VW) over the rect [px0, px1] x
 * [py0, py1] (tile-local pixels). Lane values that wrap are outside the rect and masked;
 * lanes past the tile's right or bottom edge read and write back the buffers' padding. */
static void RK(stamps)(tile_ctx *t, const rk_edges *ed, int swlog, int px0, int py0, int px1,
                       int py1, depth_plane dp, int32_t ax, int32_t ay, uint32_t id,
                       uint32_t colour)
{
    const int SW = 1 << swlog, SH = VW >> swlog;
    const vi lanes = vi_lanes();
    const vi lx = vi_and(lanes, vi_set1(SW - 1)), ly = vi_srl(lanes, swlog);
    vi e[3];
    vi stx[3], sty[3];
    for (int k = 0; k < 3; k++) {
        e[k] = vi_add(vi_add(vi_set1(ed->e[k]), vi_mul(lx, vi_set1(ed->sx[k]))),
                      vi_mul(ly, vi_set1(ed->sy[k])));
        stx[k] = vi_mul(vi_set1(ed->sx[k]), vi_set1(SW));
        sty[k] = vi_mul(vi_set1(ed->sy[k]), vi_set1(SH));
    }
    const vi lx256 = vi_mul(lx, vi_set1(FX_ONE)), ly256 = vi_mul(ly, vi_set1(FX_ONE));
    const vf dzdx = vf_set1(dp.dzdx), dzdy = vf_set1(dp.dzdy), z0 = vf_set1(dp.z0);
    const vi vid = vi_set1((int32_t)id), vcol = vi_set1((int32_t)colour);
    const vi minus1 = vi_set1(-1);
    uint64_t written = 0;
    for (int y = py0; y <= py1; y += SH) {
        vi r0 = e[0], r1 = e[1], r2 = e[2];
        vm rowok = vi_gt(vi_set1(py1 - y + 1), ly);
        /* dy of each lane's sample from vertex 0, then the row part of the depth formula */
        int32_t sy = (t->oy + y) * FX_ONE + FX_HALF - ay;
        vf zrow = vf_add(z0, vf_mul(dzdy, vf_from_vi(vi_add(vi_set1(sy), ly256))));
        for (int x = px0; x <= px1; x += SW) {
            vm m = vm_and(vi_gt(vi_or(vi_or(r0, r1), r2), minus1),
                          vm_and(rowok, vi_gt(vi_set1(px1 - x + 1), lx)));
            if (vm_any(m)) {
                int32_t sx = (t->ox + x) * FX_ONE + FX_HALF - ax;
                vf z = vf_add(zrow, vf_mul(dzdx, vf_from_vi(vi_add(vi_set1(sx), lx256))));
                size_t off = (size_t)y * TILE_SIZE + (size_t)x;
                vf zb = vf_load_rows(t->depth + off, TILE_SIZE, swlog);
                vi idb = vi_load_rows((const int32_t *)t->idb + off, TILE_SIZE, swlog);
                /* render_depth_pass: nearer, or as near with a lower id */
                vm pass = vm_or(vf_lt(z, zb), vm_and(vf_eq(z, zb), vi_ltu(vid, idb)));
                pass = vm_and(m, pass);
                if (vm_any(pass)) {
                    vi cb = vi_load_rows((const int32_t *)t->col + off, TILE_SIZE, swlog);
                    vf_store_rows(t->depth + off, TILE_SIZE, swlog, vf_select(pass, z, zb));
                    vi_store_rows((int32_t *)t->idb + off, TILE_SIZE, swlog,
                                  vi_select(pass, vid, idb));
                    vi_store_rows((int32_t *)t->col + off, TILE_SIZE, swlog,
                                  vi_select(pass, vcol, cb));
                    written += (uint64_t)vm_count(pass);
                }
            }
            r0 = vi_add(r0, stx[0]);
            r1 = vi_add(r1, stx[1]);
            r2 = vi_add(r2, stx[2]);
        }
        e[0] = vi_add(e[0], sty[0]);
        e[1] = vi_add(e[1], sty[1]);
        e[2] = vi_add(e[2], sty[2]);
    }
    t->pixels_written += written;
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
    /* stamp rows as wide as the rect needs, up to a whole vector: 4x4, 8x2, 16x1 (AVX-512),
     * 4x2, 8x1 (AVX2), 1x1 (scalar) */
    int swlog = w <= 4 ? 2 : w <= 8 ? 3 : 4;
    swlog = swlog < VW_LOG2 ? swlog : VW_LOG2;
    RK(stamps)(t, &ed, swlog, px0, py0, px1, py1, dp, ax, ay, id, colour);
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

/* Small triangles: a rect of at most 4x4 samples and a box under SETUP_SMALL_FX, so every
 * edge value below fits int32 exactly (|dx|, |dy| < 2^14, sample offsets < 2^15: products
 * < 2^29). Sample s = 0..15 of a triangle is pixel (px0 + (s & 3), py0 + (s >> 2)). */
#define RK_SMALL_SPAN SETUP_SMALL_FX
#define RK_SMALL_SIDE 4

/* Lanes are triangles: lane j = triangle i + j of the ref. For every triangle whose box is
 * under RK_SMALL_SPAN the edge functions and the depth plane are set up in lanes (32-bit,
 * exact); the small ones (at most 4x4 samples) have their samples' coverage and depths
 * computed in lanes too (the per-triangle cost of a splat's few pixels), the others are drawn
 * in stamps from the lanes' setup; larger boxes take the exact per-triangle path (tri_big).
 * The depth tests run in triangle order, sample by sample, so the result equals drawing the
 * triangles one by one. */
static void RK(rast_tris)(tile_ctx *t, const tri_cols *c, uint32_t count, uint32_t id)
{
    const int32_t ox_fx = t->ox * FX_ONE, oy_fx = t->oy * FX_ONE;
    const vi vox = vi_set1(ox_fx), voy = vi_set1(oy_fx);
    const vi tx0 = vi_set1(t->cx0 - t->ox), ty0 = vi_set1(t->cy0 - t->oy);
    const vi tx1 = vi_set1(t->cx1 - t->ox), ty1 = vi_set1(t->cy1 - t->oy);
    const vi c127 = vi_set1(FX_ONE - 1 - FX_HALF), c128 = vi_set1(FX_HALF);
    const vi zero = vi_set1(0), minus1 = vi_set1(-1);
    const vi span = vi_set1(RK_SMALL_SPAN), c256 = vi_set1(FX_ONE);
    const vi side1 = vi_set1(RK_SMALL_SIDE - 1);
    _Alignas(64) int32_t PX[VW], PY[VW], QX[VW], QY[VW], PM[VW], WX[VW], WY[VW];
    _Alignas(64) int32_t XX[3][VW], YY[3][VW], EE[3][VW], EX[3][VW], EY[3][VW];
    _Alignas(64) float ZS[RK_SMALL_SIDE * RK_SMALL_SIDE][VW], ZZ[3][VW], DZ[3][VW];
    for (uint32_t i = 0; i < count; i += VW) {
        size_t at = i;
        int n = count - i < (uint32_t)VW ? (int)(count - i) : VW;
        vi x0 = vi_sub(vi_load(c->x0 + at), vox), y0 = vi_sub(vi_load(c->y0 + at), voy);
        vi x1 = vi_sub(vi_load(c->x1 + at), vox), y1 = vi_sub(vi_load(c->y1 + at), voy);
        vi x2 = vi_sub(vi_load(c->x2 + at), vox), y2 = vi_sub(vi_load(c->y2 + at), voy);
        vi mnx = vi_min(vi_min(x0, x1), x2), mxx = vi_max(vi_max(x0, x1), x2);
        vi mny = vi_min(vi_min(y0, y1), y2), mxy = vi_max(vi_max(y0, y1), y2);
        vi px0 = vi_max(vi_sra(vi_add(mnx, c127), FX_BITS), tx0);
        vi px1 = vi_min(vi_sra(vi_sub(mxx, c128), FX_BITS), tx1);
        vi py0 = vi_max(vi_sra(vi_add(mny, c127), FX_BITS), ty0);
        vi py1 = vi_min(vi_sra(vi_sub(mxy, c128), FX_BITS), ty1);
        vi w1 = vi_sub(px1, px0), h1 = vi_sub(py1, py0);
        vm nonempty = vm_andnot(vm_andnot(vm_first(n), vi_gt(zero, w1)), vi_gt(zero, h1));
        unsigned ne_bits = vm_bits(nonempty);
        if (!ne_bits)
            continue;
        t->tris_rasterized += (uint64_t)__builtin_popcount(ne_bits);
        /* spans are compared as unsigned-safe: huge boxes may wrap in the subtraction, which
         * only makes them fail the test and take the exact per-triangle path */
        vi sw = vi_sub(mxx, mnx), sh = vi_sub(mxy, mny);
        vm fits = vm_and(nonempty, vm_and(vm_and(vi_gt(span, sw), vi_gt(sw, minus1)),
                                          vm_and(vi_gt(span, sh), vi_gt(sh, minus1))));
        vm small = vm_andnot(fits, vm_or(vi_gt(w1, side1), vi_gt(h1, side1)));
        unsigned fit_bits = vm_bits(fits), small_bits = vm_bits(small);
        vi_store(PX, px0);
        vi_store(PY, py0);
        /* the setup of every lane (a huge one's values may wrap: it does not use them), stored
         * whatever the bits: cheaper than branches, and the compiler sees them written */
        vi pm = zero; /* lane j: bit s when its small sample s is covered */
        {
            vi s0x = vi_add(vi_sll(px0, FX_BITS), c128), s0y = vi_add(vi_sll(py0, FX_BITS), c128);
            vi X[3] = {x0, x1, x2}, Y[3] = {y0, y1, y2};
            vi e[3], ex[3], ey[3];
            for (int k = 0; k < 3; k++) {
                int a = k, b = k == 2 ? 0 : k + 1;
                vi dx = vi_sub(X[b], X[a]), dy = vi_sub(Y[b], Y[a]);
                /* top-left: dy < 0, or dy == 0 and dx > 0; bias = tl - 1 */
                vm tl = vm_or(vi_gt(zero, dy), vm_and(vi_eq(dy, zero), vi_gt(dx, zero)));
                vi bias = vi_select(tl, zero, minus1);
                e[k] = vi_add(vi_sub(vi_mul(dx, vi_sub(s0y, Y[a])), vi_mul(dy, vi_sub(s0x, X[a]))),
                              bias);
                ex[k] = vi_sub(zero, vi_sll(dy, FX_BITS));
                ey[k] = vi_sll(dx, FX_BITS);
            }
            /* render_depth_plane and render_depth_at, lane by lane */
            vf z0 = vf_load(c->z0 + at), z1 = vf_load(c->z1 + at), z2 = vf_load(c->z2 + at);
            vi area2 = vi_sub(vi_mul(vi_sub(x1, x0), vi_sub(y2, y0)),
                              vi_mul(vi_sub(x2, x0), vi_sub(y1, y0)));
            vf e1x = vf_from_vi(vi_sub(x1, x0)), e1y = vf_from_vi(vi_sub(y1, y0));
            vf e2x = vf_from_vi(vi_sub(x2, x0)), e2y = vf_from_vi(vi_sub(y2, y0));
            vf dz1 = vf_sub(z1, z0), dz2 = vf_sub(z2, z0);
            vf area = vf_from_vi(area2);
            vf dzdx = vf_div(vf_sub(vf_mul(dz1, e2y), vf_mul(dz2, e1y)), area);
            vf dzdy = vf_div(vf_sub(vf_mul(dz2, e1x), vf_mul(dz1, e2x)), area);
            vi dxs = vi_sub(s0x, x0), dys = vi_sub(s0y, y0);
            /* the stamps' setup of the medium ones, from the same lanes */
            for (int k = 0; k < 3; k++) {
                vi_store(EE[k], e[k]);
                vi_store(EX[k], ex[k]);
                vi_store(EY[k], ey[k]);
            }
            vf_store(DZ[0], dzdx);
            vf_store(DZ[1], dzdy);
            vf_store(DZ[2], z0);
            vi_store(QX, px1);
            vi_store(QY, py1);
            vi_store(WX, vi_add(x0, vox)); /* the window frame: stamps' ax, ay */
            vi_store(WY, vi_add(y0, voy));
            /* the samples that some small lane has: the largest rect among them */
            int wmax = -1, hmax = -1;
            if (small_bits) {
                wmax = vi_hmax(vi_select(small, w1, minus1));
                hmax = vi_hmax(vi_select(small, h1, minus1));
            }
            vi rowe[3] = {e[0], e[1], e[2]};
            vi dyv = dys;
            for (int sy = 0; sy <= hmax; sy++) {
                vm rowin = vm_and(small, vi_gt(h1, vi_set1(sy - 1))); /* sy <= h1 */
                vi a0 = rowe[0], a1 = rowe[1], a2 = rowe[2];
                vf zr = vf_add(z0, vf_mul(dzdy, vf_from_vi(dyv)));
                vi dxv = dxs;
                for (int sx = 0; sx <= wmax; sx++) {
                    vm in = vm_and(vm_and(rowin, vi_gt(w1, vi_set1(sx - 1))),
                                   vi_gt(vi_or(vi_or(a0, a1), a2), minus1));
                    if (vm_any(in)) {
                        int s = sy * RK_SMALL_SIDE + sx;
                        vf_store(ZS[s], vf_add(zr, vf_mul(dzdx, vf_from_vi(dxv))));
                        pm = vi_or(pm, vi_select(in, vi_set1(1 << s), zero));
                    }
                    a0 = vi_add(a0, ex[0]);
                    a1 = vi_add(a1, ex[1]);
                    a2 = vi_add(a2, ex[2]);
                    dxv = vi_add(dxv, c256);
                }
                rowe[0] = vi_add(rowe[0], ey[0]);
                rowe[1] = vi_add(rowe[1], ey[1]);
                rowe[2] = vi_add(rowe[2], ey[2]);
                dyv = vi_add(dyv, c256);
            }
        }
        unsigned any_hit = vm_bits(vi_gt(pm, zero));
        vi_store(PM, pm);
        unsigned mid_bits = fit_bits & ~small_bits, huge_bits = ne_bits & ~fit_bits;
        vi_store(XX[0], x0);
        vi_store(XX[1], x1);
        vi_store(XX[2], x2);
        vi_store(YY[0], y0);
        vi_store(YY[1], y1);
        vi_store(YY[2], y2);
        vf_store(ZZ[0], vf_load(c->z0 + at));
        vf_store(ZZ[1], vf_load(c->z1 + at));
        vf_store(ZZ[2], vf_load(c->z2 + at));
        unsigned todo = mid_bits | huge_bits | any_hit;
        while (todo) {
            int j = __builtin_ctz(todo);
            todo &= todo - 1;
            uint32_t colour = c->col[at + (size_t)j];
            if (mid_bits >> j & 1) {
                rk_edges ed;
                for (int k = 0; k < 3; k++) {
                    ed.e[k] = EE[k][j];
                    ed.sx[k] = EX[k][j];
                    ed.sy[k] = EY[k][j];
                }
                depth_plane dp = {DZ[2][j], DZ[0][j], DZ[1][j]};
                int w = QX[j] - PX[j] + 1;
                int swlog = w <= 4 ? 2 : w <= 8 ? 3 : 4;
                swlog = swlog < VW_LOG2 ? swlog : VW_LOG2;
                int32_t ax = WX[j], ay = WY[j];
                RK(stamps)(t, &ed, swlog, PX[j], PY[j], QX[j], QY[j], dp, ax, ay, id, colour);
                continue;
            }
            if (huge_bits >> j & 1) {
                int32_t X3[3] = {XX[0][j], XX[1][j], XX[2][j]};
                int32_t Y3[3] = {YY[0][j], YY[1][j], YY[2][j]};
                float Z3[3] = {ZZ[0][j], ZZ[1][j], ZZ[2][j]};
                /* recompute the clipped rect's far corner (not kept in lanes) */
                int32_t mx = X3[0] > X3[1] ? X3[0] : X3[1], my = Y3[0] > Y3[1] ? Y3[0] : Y3[1];
                mx = X3[2] > mx ? X3[2] : mx;
                my = Y3[2] > my ? Y3[2] : my;
                int ex1 = render_sample_last(mx), ey1 = render_sample_last(my);
                ex1 = ex1 > t->cx1 - t->ox ? t->cx1 - t->ox : ex1;
                ey1 = ey1 > t->cy1 - t->oy ? t->cy1 - t->oy : ey1;
                RK(tri_big)(t, X3, Y3, Z3, PX[j], PY[j], ex1, ey1, id, colour);
                continue;
            }
            for (unsigned m = (unsigned)PM[j]; m; m &= m - 1) {
                int s = __builtin_ctz(m);
                rk_sample(t, PX[j] + (s & (RK_SMALL_SIDE - 1)), PY[j] + s / RK_SMALL_SIDE, ZS[s][j],
                          id, colour);
            }
        }
    }
}

const render_kernels RK(render_kernels) = {
    RK(transform), RK(setup_tris), RK(rast_tris), RK(splats), RK(meshes), RK(meshes_emit), VW,
    RK_NAME};
