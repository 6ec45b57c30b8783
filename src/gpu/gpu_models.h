/* SPDX-License-Identifier: MIT */
/* Device code of the CUDA backend: the per-pair terms, per-boid finish and integration of
 * the five models, transcribed from src/sim/forces_kernel.h at W = 1 (the scalar kernel).
 * Included only by gpu_sim.cu. Owns no memory; the host side (gpu_sim.cu) owns the sort.
 *
 * Exactness: these functions must give the CPU's bits. Hence
 *   - the same operations in the same order as forces_kernel.h with vf = float
 *     (v3_dot = (x*x + y*y) + z*z, a masked add is `if (m) acc = acc + x`, a select is
 *     `m ? a : b`, vf_neg(x) is 0 - x), never "simplified";
 *   - compiled with -fmad=false (no contraction into FMA), -prec-div=true,
 *     -prec-sqrt=true, -ftz=false; square roots and divisions are also written as
 *     __fsqrt_rn / __fdiv_rn so they are IEEE round-to-nearest whatever the flags;
 *   - no fast-math intrinsics (__expf, rsqrtf, __fdividef ...). */
#ifndef SHOAL_GPU_MODELS_H
#define SHOAL_GPU_MODELS_H

#include <stdint.h>

/* Everything a step's kernels read that is the same for every boid. Lives in constant
 * memory (all threads of a warp read the same word: a broadcast). */
struct gpu_consts {
    shoal_params prm;
    float origin[3];
    float inv_cell;
    int32_t dims[3];
    float sep_r2, ali_r2, coh_r2, max_r2; /* steer, average */
    float r, r2;                          /* heading: R, R^2; classic: fov, fov^2 */
    float cos_coh, cos_sep, cos_ali;      /* fov */
    float max2;                           /* fov: the largest squared threshold */
    float dt;
    int32_t target_count;
    float targets[SHOAL_MAX_TARGETS][3];
};

__constant__ gpu_consts c_k;

struct f3 {
    float x, y, z;
};

static __device__ __forceinline__ f3 mk3(float x, float y, float z)
{
    f3 r = {x, y, z};
    return r;
}
static __device__ __forceinline__ f3 zero3() { return mk3(0.0f, 0.0f, 0.0f); }
static __device__ __forceinline__ f3 add3(f3 a, f3 b)
{
    return mk3(a.x + b.x, a.y + b.y, a.z + b.z);
}
static __device__ __forceinline__ f3 sub3(f3 a, f3 b)
{
    return mk3(a.x - b.x, a.y - b.y, a.z - b.z);
}
static __device__ __forceinline__ f3 mul3(f3 a, float s) { return mk3(a.x * s, a.y * s, a.z * s); }
static __device__ __forceinline__ float fdiv(float a, float b) { return __fdiv_rn(a, b); }
static __device__ __forceinline__ float fsqrt(float a) { return __fsqrt_rn(a); }
static __device__ __forceinline__ f3 div3(f3 a, float s)
{
    return mk3(fdiv(a.x, s), fdiv(a.y, s), fdiv(a.z, s));
}
/* x, y, z left to right, as v3_dot */
static __device__ __forceinline__ float dot3(f3 a, f3 b)
{
    return (a.x * b.x + a.y * b.y) + a.z * b.z;
}
static __device__ __forceinline__ f3 sel3(bool m, f3 a, f3 b) { return m ? a : b; }
/* vf_add_masked: acc + x where m, acc (exact bits) elsewhere */
static __device__ __forceinline__ f3 addm3(f3 acc, bool m, f3 x) { return m ? add3(acc, x) : acc; }
static __device__ __forceinline__ float addm(float acc, bool m, float x)
{
    return m ? acc + x : acc;
}

/* v3_normalize: x / |x|, 0 for |x| == 0 (and for NaN lengths, as the select does) */
static __device__ __forceinline__ f3 normalize3(f3 a)
{
    float len = fsqrt(dot3(a, a));
    return len > 0.0f ? div3(a, len) : zero3();
}
/* v3_limit: |x| > m ? x * (m / |x|) : x */
static __device__ __forceinline__ f3 limit3(f3 a, float m)
{
    float len = fsqrt(dot3(a, a));
    bool over = (len > m) && (len > 0.0f);
    return over ? mul3(a, fdiv(m, len)) : a;
}
/* v3_clamp_speed: (v / |v|) * lo below lo, (v / |v|) * hi above hi, 0 stays 0 */
static __device__ __forceinline__ f3 clamp_speed3(f3 a, float lo, float hi)
{
    float len = fsqrt(dot3(a, a));
    bool nz = len > 0.0f;
    f3 dir = div3(a, len);
    bool below = nz && (len < lo);
    bool above = nz && (len > hi);
    f3 r = below ? mul3(dir, lo) : a;
    r = above ? mul3(dir, hi) : r;
    /* |v|^2 overflows: the direction of v * 2^-70 (v3_clamp_speed's far branch) */
    if (len > 3.40282347e38f) {
        f3 s = mul3(a, 8.4703294725430034e-22f); /* 2^-70 */
        r = mul3(div3(s, fsqrt(dot3(s, s))), hi);
    }
    return r;
}

/* Obstacle spheres, summed in sphere order (forces_kernel.h sphere_avoid). */
static __device__ __forceinline__ f3 sphere_avoid3(f3 p)
{
    const shoal_params &prm = c_k.prm;
    f3 acc = zero3();
    int count = (int)prm.sphere_count;
    for (int k = 0; k < count; k++) {
        const shoal_sphere &sp = prm.spheres[k];
        f3 q = sub3(p, mk3(sp.center[0], sp.center[1], sp.center[2]));
        float d2 = dot3(q, q);
        float reach = 2.0f * sp.radius;
        bool in = (d2 < reach * reach) && (d2 > 0.0f);
        if (!in)
            continue;
        float d = fsqrt(d2);
        float w = fdiv(reach - d, sp.radius);
        acc = addm3(acc, in, mul3(div3(q, d), w));
    }
    return acc;
}

/* steer wall force per axis: +1 below lo, -1 above hi (forces_kernel.h wall_axis) */
static __device__ __forceinline__ float wall_axis(float p, float lo, float hi)
{
    float acc = 0.0f;
    acc = p < lo ? acc + 1.0f : acc;
    acc = p > hi ? acc - 1.0f : acc;
    return acc;
}
static __device__ __forceinline__ f3 wall3(f3 p)
{
    const shoal_params &prm = c_k.prm;
    return mk3(wall_axis(p.x, prm.wall_center[0] - prm.wall_size[0] * 0.5f,
                         prm.wall_center[0] + prm.wall_size[0] * 0.5f),
               wall_axis(p.y, prm.wall_center[1] - prm.wall_size[1] * 0.5f,
                         prm.wall_center[1] + prm.wall_size[1] * 0.5f),
               wall_axis(p.z, prm.wall_center[2] - prm.wall_size[2] * 0.5f,
                         prm.wall_center[2] + prm.wall_size[2] * 0.5f));
}

/* ---- per-model accumulators: begin(p, v), pair(j), finish(p, v) -> new p, v ----------- */

/* steer (AVERAGE = false) and average (true): forces_kernel.h group_steer_average */
template <bool AVERAGE> struct model_steer_average {
    f3 sep, ali, coh;
    float sep_n, ali_n, coh_n;
    __device__ __forceinline__ void begin(f3, f3)
    {
        sep = ali = coh = zero3();
        sep_n = ali_n = coh_n = 0.0f;
    }
    __device__ __forceinline__ void pair(f3 p, f3 pj, f3 vj, f3)
    {
        f3 diff = sub3(p, pj); /* p_i - p_j */
        float d2 = dot3(diff, diff);
        bool near = (d2 > 0.0f) && (d2 <= c_k.max_r2);
        if (!near)
            return;
        bool m_sep = d2 <= c_k.sep_r2;
        bool m_ali = d2 <= c_k.ali_r2;
        bool m_coh = d2 <= c_k.coh_r2;
        if (m_sep) {
            f3 term;
            if (AVERAGE)
                term = diff;
            else /* normalize(diff) / d taken as diff * (1 / d^2), as the CPU does */
                term = mul3(diff, fdiv(1.0f, d2));
            sep = add3(sep, term);
            sep_n = sep_n + 1.0f;
        }
        ali = addm3(ali, m_ali, vj);
        ali_n = addm(ali_n, m_ali, 1.0f);
        coh = addm3(coh, m_coh, pj);
        coh_n = addm(coh_n, m_coh, 1.0f);
    }
    __device__ __forceinline__ void finish(f3 &p, f3 &v) const
    {
        const shoal_params &prm = c_k.prm;
        f3 force = zero3();
        bool has_sep = sep_n > 0.0f, has_ali = ali_n > 0.0f, has_coh = coh_n > 0.0f;
        if (!AVERAGE) {
            float max_speed = prm.max_speed, max_steer = prm.max_steer;
            f3 sep_f = limit3(sub3(mul3(normalize3(div3(sep, sep_n)), max_speed), v), max_steer);
            f3 ali_f = limit3(sub3(mul3(normalize3(div3(ali, ali_n)), max_speed), v), max_steer);
            f3 coh_f =
                limit3(sub3(mul3(normalize3(sub3(div3(coh, coh_n), p)), max_speed), v), max_steer);
            sep_f = sel3(has_sep, sep_f, zero3());
            ali_f = sel3(has_ali, ali_f, zero3());
            coh_f = sel3(has_coh, coh_f, zero3());
            force = add3(force, mul3(ali_f, prm.ali_weight));
            force = add3(force, mul3(coh_f, prm.coh_weight));
            force = add3(force, mul3(sep_f, prm.sep_weight));
        } else {
            f3 sep_f = mul3(div3(sep, sep_n), prm.sep_weight);
            f3 ali_f = mul3(div3(ali, ali_n), prm.ali_weight);
            f3 coh_f = mul3(sub3(div3(coh, coh_n), p), prm.coh_weight);
            force = addm3(force, has_sep, sep_f);
            force = addm3(force, has_ali, ali_f);
            force = addm3(force, has_coh, coh_f);
            force = limit3(force, prm.max_steer);
        }
        /* integrate (seed 003 IntegrateCS): walls, obstacles, speed limit, Euler */
        float dt = c_k.dt;
        force = add3(force, mul3(wall3(p), prm.wall_weight));
        if (prm.sphere_count > 0)
            force = add3(force, mul3(sphere_avoid3(p), prm.avoid_force));
        v = limit3(add3(v, mul3(force, dt)), prm.max_speed);
        p = add3(p, mul3(v, dt));
    }
};

/* heading: forces_kernel.h group_heading. dir_j (v_j / |v_j|) is a property of the
 * candidate: the gather computed it once per boid with the CPU's per-candidate formula. */
struct model_heading {
    f3 sep, ali, coh;
    float n;
    __device__ __forceinline__ void begin(f3, f3)
    {
        sep = ali = coh = zero3();
        n = 0.0f;
    }
    __device__ __forceinline__ void pair(f3 p, f3 pj, f3, f3 dirj)
    {
        f3 diff = sub3(p, pj);
        float d2 = dot3(diff, diff);
        bool m = (d2 > 0.0f) && (d2 < c_k.r2);
        if (!m)
            return;
        float d = fsqrt(d2);
        float w = fdiv(c_k.r - d, c_k.r * d); /* (R - d) / (R * d), as the CPU does */
        sep = add3(sep, mul3(diff, w));
        ali = add3(ali, dirj);
        coh = add3(coh, pj);
        n = n + 1.0f;
    }
    __device__ __forceinline__ void finish(f3 &p, f3 &v) const
    {
        const shoal_params &prm = c_k.prm;
        float a = fdiv(1.0f, n > 1.0f ? n : 1.0f); /* 1 / max(n, 1) */
        f3 s = mul3(sep, a * prm.sep_weight);
        f3 al = mul3(ali, a * prm.ali_weight);
        f3 co = mul3(sub3(mul3(coh, a), p), prm.coh_weight); /* quirk: n = 0 pulls to 0 */
        /* nearest target, the first on ties */
        float best_d2 = __int_as_float(0x7f800000); /* +inf */
        f3 tgt = zero3();
        for (int k = 0; k < c_k.target_count; k++) {
            f3 t = mk3(c_k.targets[k][0], c_k.targets[k][1], c_k.targets[k][2]);
            f3 dt3 = sub3(t, p);
            float td2 = dot3(dt3, dt3);
            bool closer = td2 < best_d2;
            best_d2 = closer ? td2 : best_d2;
            tgt = closer ? t : tgt;
        }
        f3 fsum = mul3(sub3(tgt, p), prm.target_weight);
        fsum = add3(add3(add3(fsum, s), al), co);
        if (prm.sphere_count > 0)
            fsum = add3(fsum, mul3(sphere_avoid3(p), prm.avoid_force));
        f3 fdir = normalize3(fsum);
        f3 dir = normalize3(v);
        float s_l = prm.rotate_speed * c_k.dt; /* lerp(a, b, s) = a + (b - a) * s */
        dir = normalize3(add3(dir, mul3(sub3(fdir, dir), s_l)));
        dir.y = dir.y < -0.5f ? -0.5f : dir.y;
        dir.y = dir.y > 0.5f ? 0.5f : dir.y;
        dir = normalize3(dir);
        float ms = prm.move_speed;
        p = add3(p, mul3(mul3(dir, ms), c_k.dt));
        v = mul3(dir, ms);
    }
};

/* classic rule1 term: ((-(e / d)) * k) / (d * d), vf_neg(x) = 0 - x */
static __device__ __forceinline__ f3 classic_repel(f3 e, float d, float k)
{
    float dd = d * d;
    return mk3(fdiv((0.0f - fdiv(e.x, d)) * k, dd), fdiv((0.0f - fdiv(e.y, d)) * k, dd),
               fdiv((0.0f - fdiv(e.z, d)) * k, dd));
}

/* classic: forces_kernel.h group_classic. The virtual wall boids come first (begin). */
struct model_classic {
    f3 r1, vsum, psum;
    float n1, n;
    __device__ __forceinline__ void begin(f3 p, f3)
    {
        const shoal_params &prm = c_k.prm;
        r1 = vsum = psum = zero3();
        n1 = n = 0.0f;
        const float fov = prm.fov, k = prm.sep_strength;
        /* planes Up, Down, Left, Right, Forward, Back: normal, signed distance inside */
        const float nrm[6][3] = {{0, -1, 0}, {0, 1, 0},  {1, 0, 0},
                                 {-1, 0, 0}, {0, 0, -1}, {0, 0, 1}};
        const float dist[6] = {prm.box_max[1] - p.y, p.y - prm.box_min[1], p.x - prm.box_min[0],
                               prm.box_max[0] - p.x, prm.box_max[2] - p.z, p.z - prm.box_min[2]};
#pragma unroll
        for (int w = 0; w < 6; w++) {
            float sd = dist[w];
            f3 q = mk3(p.x - sd * nrm[w][0], p.y - sd * nrm[w][1], p.z - sd * nrm[w][2]);
            f3 e = sub3(q, p);
            float e2 = dot3(e, e);
            bool m = (sd <= fov) && (e2 > 0.0f);
            if (!m)
                continue;
            float d = fsqrt(e2);
            r1 = add3(r1, classic_repel(e, d, k));
            n1 = n1 + 1.0f;
        }
    }
    __device__ __forceinline__ void pair(f3 p, f3 pj, f3 vj, f3)
    {
        f3 e = sub3(pj, p); /* the seed's diff = other - me */
        float d2 = dot3(e, e);
        bool m = (d2 > 0.0f) && (d2 <= c_k.r2);
        if (!m)
            return;
        float d = fsqrt(d2);
        r1 = add3(r1, classic_repel(e, d, c_k.prm.sep_strength));
        n1 = n1 + 1.0f;
        vsum = add3(vsum, vj);
        psum = add3(psum, pj);
        n = n + 1.0f;
    }
    __device__ __forceinline__ void finish(f3 &p, f3 &v) const
    {
        const shoal_params &prm = c_k.prm;
        bool has1 = n1 > 0.0f, has = n > 0.0f;
        f3 rule1 = has1 ? div3(r1, n1) : zero3();
        f3 rule2 = has ? sub3(div3(vsum, n), v) : zero3();
        f3 rule3 = has ? sub3(div3(psum, n), p) : zero3();
        f3 acc = add3(add3(mul3(rule1, prm.w1), mul3(rule2, prm.w2)), mul3(rule3, prm.w3));
        /* the seed's divisor, the sum of the weights; a zero sum gives a = 0 */
        float wsum = prm.w1 + prm.w2 + prm.w3;
        acc = wsum != 0.0f ? div3(acc, wsum) : zero3();
        if (prm.sphere_count > 0)
            acc = add3(acc, mul3(sphere_avoid3(p), prm.avoid_force));
        float dt = c_k.dt, half_dt2 = c_k.dt * c_k.dt * 0.5f;
        p = add3(p, add3(mul3(v, dt), mul3(acc, half_dt2)));
        v = add3(v, mul3(acc, dt));
        v = clamp_speed3(v, prm.min_speed, prm.max_speed);
    }
};

/* fov: forces_kernel.h group_fov */
struct model_fov {
    f3 vhat, coh, sep, ali;
    float coh_n, ali_n;
    __device__ __forceinline__ void begin(f3, f3 v)
    {
        vhat = normalize3(v);
        coh = sep = ali = zero3();
        coh_n = ali_n = 0.0f;
    }
    __device__ __forceinline__ void pair(f3 p, f3 pj, f3 vj, f3)
    {
        const shoal_params &prm = c_k.prm;
        f3 e = sub3(pj, p); /* p_j - p_i */
        float d2 = dot3(e, e);
        bool near = (d2 > 0.0f) && (d2 < c_k.max2);
        if (!near)
            return;
        float d = fsqrt(d2);
        /* angle < A <=> cos(angle) > cos(A), cos(angle) = normalize(v_i).(e / d) */
        float c = fdiv(dot3(vhat, e), d);
        bool m_coh = (d2 < prm.coh_dist2) && (c > c_k.cos_coh);
        bool m_sep = (d2 < prm.sep_dist2) && (c > c_k.cos_sep);
        bool m_ali = (d2 < prm.ali_dist2) && (c > c_k.cos_ali);
        coh = addm3(coh, m_coh, pj);
        coh_n = addm(coh_n, m_coh, 1.0f);
        if (m_sep) {
            f3 diff = sub3(p, pj); /* normalize(p_i - p_j) / sqrt(d^2) */
            sep = add3(sep, div3(div3(diff, d), d));
        }
        ali = addm3(ali, m_ali, vj);
        ali_n = addm(ali_n, m_ali, 1.0f);
    }
    __device__ __forceinline__ void finish(f3 &p, f3 &v) const
    {
        const shoal_params &prm = c_k.prm;
        f3 cohf = coh_n > 0.0f ? mul3(sub3(div3(coh, coh_n), p), prm.coh_force) : zero3();
        f3 alif = ali_n > 0.0f ? mul3(sub3(div3(ali, ali_n), v), prm.ali_force) : zero3();
        f3 sepf = mul3(sep, prm.sep_force);
        /* boundary sphere: -bf * (p - c) * (|p - c|^2 - R^2) / |p - c|^2 outside it */
        f3 c3 = mk3(prm.boundary_center[0], prm.boundary_center[1], prm.boundary_center[2]);
        f3 cp = sub3(c3, p);
        float sq = dot3(cp, cp);
        float R2 = prm.boundary_range2;
        f3 pc = sub3(p, c3);
        float excess = sq - R2;
        float nbf = -prm.boundary_force;
        f3 b = mk3(fdiv((nbf * pc.x) * excess, sq), fdiv((nbf * pc.y) * excess, sq),
                   fdiv((nbf * pc.z) * excess, sq));
        b = sq > R2 ? b : zero3();
        /* far outside, the float product overflows: group_fov's double branch */
        bool finite_b = (b.x - b.x == 0.0f) && (b.y - b.y == 0.0f) && (b.z - b.z == 0.0f);
        if (sq > R2 && !finite_b) {
            double q[3] = {pc.x, pc.y, pc.z};
            double dsq = __dadd_rn(__dadd_rn(__dmul_rn(q[0], q[0]), __dmul_rn(q[1], q[1])),
                                   __dmul_rn(q[2], q[2]));
            double f = __ddiv_rn(__dadd_rn(dsq, -(double)R2), dsq);
            double dnbf = -(double)prm.boundary_force;
            b = mk3((float)__dmul_rn(__dmul_rn(dnbf, q[0]), f),
                    (float)__dmul_rn(__dmul_rn(dnbf, q[1]), f),
                    (float)__dmul_rn(__dmul_rn(dnbf, q[2]), f));
        }
        float maxf = prm.max_force;
        cohf = limit3(cohf, maxf);
        sepf = limit3(sepf, maxf);
        alif = limit3(alif, maxf);
        f3 avoid = zero3();
        if (prm.sphere_count > 0)
            avoid = mul3(sphere_avoid3(p), prm.avoid_force);
        f3 sum = add3(add3(add3(add3(cohf, sepf), alif), b), avoid);
        v = add3(v, mul3(sum, c_k.dt));
        v = clamp_speed3(v, prm.min_speed, prm.max_speed);
        p = add3(p, v); /* quirk: no dt, as in the seed */
    }
};

#endif
