/* SPDX-License-Identifier: MIT */
/* The rules of every model, written once: the per-candidate terms, the per-boid finish and
 * integration of the five models, the obstacle spheres, the obstacle field's sample, the
 * flee term and the predators' move. Both backends compile this file:
 *   - the CPU (src/sim/forces_kernel.h, once per ISA) against the wide type of core/simd.h:
 *     vf is a float at W = 1 (the scalar reference), __m256 or __m512 (lane = boid);
 *   - the GPU (src/gpu/gpu_sim.cu, nvcc) against the scalar branch of core/simd.h, W = 1,
 *     where RULE_FN makes every function a device function and division and square root are
 *     __fdiv_rn / __fsqrt_rn.
 * So a rule changed here changes on both backends, and the GPU keeps the CPU's bits
 * (docs/GPU.md). A third instantiation evaluates the rules in double: the float64 reference
 * of `shoal step --precision f64` and `shoal verify` (sim/ref_kernel.h, docs/VERIFY.md), so
 * the reference cannot drift from the float32 rules. What stays in each backend is the walk over
 * the candidates (the CPU's lane groups and deferred separation list, the GPU's thread per boid),
 * the sort, memory, finite checks and stores.
 *
 * The seeds the rules come from (docs/MODELS.md says what each takes from its seed): seed 000 is a
 * Unity fish-school blog post (average), seed 001 a compute-shader article on a grid built by a
 * counting sort (heading), seed 002 a Unity CPU Boids article (classic), seed 003 the
 * UnityGraphicsProgramming GPU Boids chapter, Boids.compute (steer), seed 004 a blog post
 * on boids avoiding obstacles through a vector field (fov, the obstacle field).
 *
 * The subset of C used: static inline functions, structs, no statics or globals, no library
 * calls (RF_DIV / RF_SQRT for scalar float division and
 * square root). Exactness rules are forces_kernel.h's: no FMA, IEEE division and square
 * root, sums in candidate order, dot products x + y + z left to right. Every masked add
 * below keeps exact bits (simd.h); an early return "if no lane is in range" only skips work
 * that would add nothing.
 *
 * Calling order for a boid (both backends): X_begin, X_pair for every candidate in the
 * candidate order, then rule_extras (field and flee at the start position) and X_finish,
 * which writes the new position and velocity. */
#ifndef SHOAL_SIM_RULES_H
#define SHOAL_SIM_RULES_H

#include "core/simd.h"
#if !defined(__CUDACC__)
#include "sim/sim_internal.h" /* gpu_sim.cu includes it itself, inside extern "C" */
#endif

/* The types the rules read. By default float32's: the parameters as the user set them, the
 * per-step constants and the obstacle field of sim_internal.h. The float64 reference
 * (sim/ref_kernel.h, docs/VERIFY.md) defines these four as its double twins
 * (sim/sim64_internal.h) and SIMD_REAL_HEADER as its scalar type before including this
 * file, so the same source evaluates every rule in double: scalar arithmetic here is
 * written in vreal (core/simd.h: float, or double there) and every parameter is read
 * through prm, which holds doubles there. */
#ifndef RULE_PARAMS
#define RULE_PARAMS shoal_params
#define RULE_SPHERE shoal_sphere
#define RULE_CONSTS model_consts
#define RULE_FIELD field
#endif

#if defined(__CUDACC__)
#define RULE_FN static __host__ __device__ __forceinline__
#else
#define RULE_FN static inline
#endif
/* scalar division and square root, IEEE round-to-nearest on both backends */
#if defined(__CUDA_ARCH__)
#define RF_DIV(a, b) __fdiv_rn(a, b)
#define RF_SQRT(a) __fsqrt_rn(a)
#define RF_INF __int_as_float(0x7f800000)
#elif defined(SIMD_REAL_HEADER)
/* the float64 reference: scalars are double */
#define RF_DIV(a, b) ((a) / (b))
#define RF_SQRT(a) __builtin_sqrt(a)
#define RF_INF __builtin_inf()
#else
#define RF_DIV(a, b) ((a) / (b))
#define RF_SQRT(a) __builtin_sqrtf(a)
#define RF_INF __builtin_inff()
#endif

/* ---- terms every model shares ----------------------------------------------------------- */

/* Obstacle spheres (every model): for each sphere with centre c and radius r, a boid
 * closer than 2r to c is pushed along (p - c) / |p - c| with strength (2r - |p - c|) / r
 * (1 at the surface, 0 at 2r). Summed in sphere order; returns the unweighted sum. */
RULE_FN vf3 rule_sphere_avoid(const RULE_PARAMS *prm, vf3 p)
{
    vf3 acc = v3_zero();
    int count = (int)prm->sphere_count;
    for (int k = 0; k < count; k++) {
        const RULE_SPHERE *sp = &prm->spheres[k];
        vf3 q = v3_sub(p, v3_set1(sp->center[0], sp->center[1], sp->center[2]));
        vf d2 = v3_dot(q, q);
        vreal reach = 2.0f * sp->radius;
        vm in = vm_and(vf_lt(d2, vf_set1(reach * reach)), vf_gt(d2, vf_zero()));
        if (!vm_any(in))
            continue;
        vf d = vf_sqrt(d2);
        vf w = vf_div(vf_sub(vf_set1(reach), d), vf_set1(sp->radius));
        acc = v3_add_masked(acc, in, v3_mul(v3_div(q, d), w));
    }
    return acc;
}

/* Flee (every model): for each predator q (in predator order), a boid closer than
 * flee_radius R is pushed along (p - q) / |p - q| with strength (R - |p - q|) / R (1 at the
 * predator, 0 at R). Returns the unweighted sum. */
RULE_FN vf3 rule_flee(const vreal (*pred)[3], int pred_count, vreal flee_r, vreal flee_r2, vf3 p)
{
    vf3 acc = v3_zero();
    vf r = vf_set1(flee_r), r2 = vf_set1(flee_r2);
    for (int k = 0; k < pred_count; k++) {
        vf3 q = v3_sub(p, v3_set1(pred[k][0], pred[k][1], pred[k][2]));
        vf d2 = v3_dot(q, q);
        vm in = vm_and(vf_lt(d2, r2), vf_gt(d2, vf_zero()));
        if (!vm_any(in))
            continue;
        vf d = vf_sqrt(d2);
        vf w = vf_div(vf_sub(r, d), r);
        acc = v3_add_masked(acc, in, v3_mul(v3_div(q, d), w));
    }
    return acc;
}

/* The obstacle field (seed 004, field.c builds it): the vector of the cell holding
 * (px, py, pz), or 0 outside the field. Scalar: the CPU samples it lane by lane. */
RULE_FN void rule_field_sample(const RULE_FIELD *f, vreal px, vreal py, vreal pz, vreal out[3])
{
    out[0] = out[1] = out[2] = 0.0f;
    if (!(px >= f->origin[0] && px < f->hi[0] && py >= f->origin[1] && py < f->hi[1] &&
          pz >= f->origin[2] && pz < f->hi[2]))
        return;
    int32_t ix = (int32_t)RF_DIV(px - f->origin[0], f->cell);
    int32_t iy = (int32_t)RF_DIV(py - f->origin[1], f->cell);
    int32_t iz = (int32_t)RF_DIV(pz - f->origin[2], f->cell);
    ix = ix < f->dims[0] ? ix : f->dims[0] - 1;
    iy = iy < f->dims[1] ? iy : f->dims[1] - 1;
    iz = iz < f->dims[2] ? iz : f->dims[2] - 1;
    const vreal *v = f->vec + 3 * ((size_t)ix + (size_t)f->dims[0] *
                                                    ((size_t)iy + (size_t)f->dims[1] * (size_t)iz));
    out[0] = v[0];
    out[1] = v[1];
    out[2] = v[2];
}

/* The per-boid terms every model adds after its own (neighbour sums, obstacle spheres):
 * f + field(p) * avoid_force + flee(p) * flee_weight, in that order; each only when on. The
 * backend fills `field` (the sampled cell vector, per lane) and `flee`, then the model's
 * finish adds them with rule_add_extras. */
typedef struct rule_extras {
    int field_on, flee_on;
    vf3 field; /* field(p) * avoid_force */
    vf3 flee;  /* flee(p) * flee_weight */
} rule_extras;

RULE_FN vf3 rule_field_term(const RULE_PARAMS *prm, vf3 cell_vec)
{
    return v3_mul(cell_vec, vf_set1(prm->avoid_force));
}

RULE_FN vf3 rule_flee_term(const RULE_PARAMS *prm, const RULE_CONSTS *mc, const vreal (*pred)[3],
                           vf3 p)
{
    return v3_mul(rule_flee(pred, mc->predator_count, mc->flee_r, mc->flee_r2, p),
                  vf_set1(prm->flee_weight));
}

RULE_FN vf3 rule_add_extras(vf3 f, const rule_extras *x)
{
    if (x->field_on)
        f = v3_add(f, x->field);
    if (x->flee_on)
        f = v3_add(f, x->flee);
    return f;
}

/* ---- steer and average (seeds 003 and 000) --------------------------------------------- */

/* steer wall force: +1 below centre - size/2, -1 above centre + size/2, per axis. */
RULE_FN vf rule_wall_axis(vf p, vreal lo, vreal hi)
{
    vf acc = vf_zero();
    acc = vf_select(vf_lt(p, vf_set1(lo)), vf_add(acc, vf_set1(1.0f)), acc);
    acc = vf_select(vf_gt(p, vf_set1(hi)), vf_sub(acc, vf_set1(1.0f)), acc);
    return acc;
}

RULE_FN vf3 rule_wall(const RULE_PARAMS *prm, vf3 p)
{
    vf3 w;
    w.x = rule_wall_axis(p.x, prm->wall_center[0] - prm->wall_size[0] * 0.5f,
                         prm->wall_center[0] + prm->wall_size[0] * 0.5f);
    w.y = rule_wall_axis(p.y, prm->wall_center[1] - prm->wall_size[1] * 0.5f,
                         prm->wall_center[1] + prm->wall_size[1] * 0.5f);
    w.z = rule_wall_axis(p.z, prm->wall_center[2] - prm->wall_size[2] * 0.5f,
                         prm->wall_center[2] + prm->wall_size[2] * 0.5f);
    return w;
}

typedef struct rule_sa {
    vf3 sep, ali, coh;
    vf sep_n, ali_n, coh_n;
    vf near_n; /* candidates within the largest radius, counted when !shared_mask (with a
                * shared mask that is ali_n): a work statistic, no result depends on it */
} rule_sa;

RULE_FN void rule_sa_begin(rule_sa *a)
{
    a->sep = a->ali = a->coh = v3_zero();
    a->sep_n = a->ali_n = a->coh_n = a->near_n = vf_zero();
}

/* One candidate j (position pj, velocity vj) of steer (average = 0) or average (1). The
 * radius tests are 0 < d^2 <= r^2 (d == 0 skips the pair and the boid itself). Adds the
 * alignment and cohesion sums and average's separation (the plain difference); returns the
 * separation mask: steer's separation term (rule_steer_sep) is added by the caller, for the
 * candidates where the mask has a lane, in candidate order (the CPU lists them and adds
 * them after the loop: sep is touched by nothing else, so the order of its additions is the
 * same). shared_mask: ali_r2 == coh_r2 >= sep_r2, so one mask serves both (and coh_n is
 * ali_n, see rule_sa_end): the same sums, two compares and a count fewer. skip_far: return
 * at once when no lane is near (adds nothing either way). */
RULE_FN vm rule_sa_pair(rule_sa *a, vf3 p, vreal pjx, vreal pjy, vreal pjz, vreal vjx, vreal vjy,
                        vreal vjz, const RULE_CONSTS *mc, vf max_r2, int average, int shared_mask,
                        int skip_far)
{
    /* diff = p_i - p_j (from the neighbour to me) */
    vf3 diff = {vf_sub(p.x, vf_set1(pjx)), vf_sub(p.y, vf_set1(pjy)), vf_sub(p.z, vf_set1(pjz))};
    vf d2 = v3_dot(diff, diff);
    vf one = vf_set1(1.0f);
    vm near = vm_and(vf_gt(d2, vf_zero()), vf_le(d2, max_r2));
    /* The CPU takes no early exit when no lane is near (skip_far = 0): the branch would be
     * taken about half the time and mispredict; the masked adds below cost less. The GPU's
     * thread (one boid) returns. */
    if (skip_far && !vm_any(near))
        return near;
    vm m_sep = vm_and(near, vf_le(d2, vf_set1(mc->sep_r2)));
    vm m_ali = near, m_coh = near;
    if (!shared_mask) {
        m_ali = vm_and(near, vf_le(d2, vf_set1(mc->ali_r2)));
        m_coh = vm_and(near, vf_le(d2, vf_set1(mc->coh_r2)));
        a->near_n = vf_add_masked(a->near_n, near, one);
    }
    if (average) {
        /* seed 000: the plain difference; cheap enough to add unconditionally */
        a->sep = v3_add_masked(a->sep, m_sep, diff);
        a->sep_n = vf_add_masked(a->sep_n, m_sep, one);
    }
    a->ali = v3_add_masked(a->ali, m_ali, v3_set1(vjx, vjy, vjz));
    a->ali_n = vf_add_masked(a->ali_n, m_ali, one);
    a->coh = v3_add_masked(a->coh, m_coh, v3_set1(pjx, pjy, pjz));
    if (!shared_mask)
        a->coh_n = vf_add_masked(a->coh_n, m_coh, one);
    return m_sep;
}

/* steer's separation term of candidate pj: sep += diff * (1 / d^2) where 0 < d^2 <= sep_r2.
 * normalize(diff) / d == diff / d^2, taken as diff * (1 / d^2): one IEEE division instead of
 * a square root and six (DESIGN.md: prefer formulas without a root). */
RULE_FN void rule_steer_sep(rule_sa *a, vf3 p, vreal pjx, vreal pjy, vreal pjz, vf sep_r2)
{
    vf one = vf_set1(1.0f);
    vf3 diff = {vf_sub(p.x, vf_set1(pjx)), vf_sub(p.y, vf_set1(pjy)), vf_sub(p.z, vf_set1(pjz))};
    vf d2 = v3_dot(diff, diff);
    vm m = vm_and(vf_gt(d2, vf_zero()), vf_le(d2, sep_r2));
    a->sep = v3_add_masked(a->sep, m, v3_mul(diff, vf_div(one, d2)));
    a->sep_n = vf_add_masked(a->sep_n, m, one);
}

RULE_FN void rule_sa_end(rule_sa *a, int shared_mask)
{
    if (shared_mask)
        a->coh_n = a->ali_n; /* same mask, so the same count, exactly */
}

RULE_FN void rule_sa_finish(const rule_sa *a, const RULE_PARAMS *prm, const RULE_CONSTS *mc,
                            int average, const rule_extras *x, vf3 *pp, vf3 *vp)
{
    vf3 p = *pp, v = *vp;
    vf zero = vf_zero();
    vf3 force = v3_zero();
    vm has_sep = vf_gt(a->sep_n, zero), has_ali = vf_gt(a->ali_n, zero),
       has_coh = vf_gt(a->coh_n, zero);
    if (!average) {
        /* seed 003: each rule steers toward max speed along its direction, limited */
        vf max_speed = vf_set1(prm->max_speed), max_steer = vf_set1(prm->max_steer);
        vf3 sep_f = v3_limit(v3_sub(v3_mul(v3_normalize(v3_div(a->sep, a->sep_n)), max_speed), v),
                             max_steer);
        vf3 ali_f = v3_limit(v3_sub(v3_mul(v3_normalize(v3_div(a->ali, a->ali_n)), max_speed), v),
                             max_steer);
        vf3 coh_f = v3_limit(
            v3_sub(v3_mul(v3_normalize(v3_sub(v3_div(a->coh, a->coh_n), p)), max_speed), v),
            max_steer);
        sep_f = v3_select(has_sep, sep_f, v3_zero());
        ali_f = v3_select(has_ali, ali_f, v3_zero());
        coh_f = v3_select(has_coh, coh_f, v3_zero());
        force = v3_add(force, v3_mul(ali_f, vf_set1(prm->ali_weight)));
        force = v3_add(force, v3_mul(coh_f, vf_set1(prm->coh_weight)));
        force = v3_add(force, v3_mul(sep_f, vf_set1(prm->sep_weight)));
    } else {
        /* seed 000: plain averages, weighted, then the sum limited */
        vf3 sep_f = v3_mul(v3_div(a->sep, a->sep_n), vf_set1(prm->sep_weight));
        vf3 ali_f = v3_mul(v3_div(a->ali, a->ali_n), vf_set1(prm->ali_weight));
        vf3 coh_f = v3_mul(v3_sub(v3_div(a->coh, a->coh_n), p), vf_set1(prm->coh_weight));
        force = v3_add_masked(force, has_sep, sep_f);
        force = v3_add_masked(force, has_ali, ali_f);
        force = v3_add_masked(force, has_coh, coh_f);
        force = v3_limit(force, vf_set1(prm->max_steer));
    }

    /* integrate (seed 003 IntegrateCS): walls, obstacles, speed limit, Euler */
    vf dt = vf_set1(mc->dt);
    force = v3_add(force, v3_mul(rule_wall(prm, p), vf_set1(prm->wall_weight)));
    if (prm->sphere_count > 0)
        force = v3_add(force, v3_mul(rule_sphere_avoid(prm, p), vf_set1(prm->avoid_force)));
    force = rule_add_extras(force, x);
    v = v3_limit(v3_add(v, v3_mul(force, dt)), vf_set1(prm->max_speed));
    p = v3_add(p, v3_mul(v, dt));
    *pp = p;
    *vp = v;
}

/* ---- heading (seed 001): one radius, strict d < R, direction-based ---------------------- */

typedef struct rule_hd {
    vf3 sep, ali, coh;
    vf n;
} rule_hd;

RULE_FN void rule_heading_begin(rule_hd *a)
{
    a->sep = a->ali = a->coh = v3_zero();
    a->n = vf_zero();
}

/* dir_j = v_j / |v_j| (0 for v_j = 0): a property of the candidate, scalar. The CPU
 * computes it per candidate, the GPU once per boid in its gather: the same function. */
RULE_FN void rule_heading_dir(vreal vjx, vreal vjy, vreal vjz, vreal d[3])
{
    vreal vl = RF_SQRT(vjx * vjx + vjy * vjy + vjz * vjz);
    d[0] = d[1] = d[2] = 0.0f;
    if (vl > 0.0f) {
        d[0] = RF_DIV(vjx, vl);
        d[1] = RF_DIV(vjy, vl);
        d[2] = RF_DIV(vjz, vl);
    }
}

/* The test of candidate pj: the mask 0 < d^2 < R^2, and diff = p - pj, d^2 for the add. */
RULE_FN vm rule_heading_test(vf3 p, vreal pjx, vreal pjy, vreal pjz, const RULE_CONSTS *mc,
                             vf3 *diff, vf *d2)
{
    vf3 df = {vf_sub(p.x, vf_set1(pjx)), vf_sub(p.y, vf_set1(pjy)), vf_sub(p.z, vf_set1(pjz))};
    *diff = df;
    *d2 = v3_dot(df, df);
    return vm_and(vf_gt(*d2, vf_zero()), vf_lt(*d2, vf_set1(mc->r2)));
}

/* The terms of a candidate that passed rule_heading_test in some lane (dir: its dir_j). */
RULE_FN void rule_heading_add(rule_hd *a, vm m, vf3 diff, vf d2, vreal pjx, vreal pjy, vreal pjz,
                              const vreal dir[3], const RULE_CONSTS *mc)
{
    vf R = vf_set1(mc->r);
    vf d = vf_sqrt(d2);
    /* -normalize(p_j - p_i) * (R - d) / R == diff * ((R - d) / (R * d)): one square root and
     * one division per pair instead of four divisions */
    vf w = vf_div(vf_sub(R, d), vf_mul(R, d));
    a->sep = v3_add_masked(a->sep, m, v3_mul(diff, w));
    a->ali = v3_add_masked(a->ali, m, v3_set1(dir[0], dir[1], dir[2]));
    a->coh = v3_add_masked(a->coh, m, v3_set1(pjx, pjy, pjz));
    a->n = vf_add_masked(a->n, m, vf_set1(1.0f));
}

RULE_FN void rule_heading_finish(const rule_hd *a, const RULE_PARAMS *prm, const RULE_CONSTS *mc,
                                 const rule_extras *x, vf3 *pp, vf3 *vp)
{
    vf3 p = *pp, v = *vp;
    vf one = vf_set1(1.0f);
    /* a = 1 / max(n, 1) */
    vf an = vf_div(one, vf_select(vf_gt(a->n, one), a->n, one));
    vf3 sep = v3_mul(a->sep, vf_mul(an, vf_set1(prm->sep_weight)));
    vf3 ali = v3_mul(a->ali, vf_mul(an, vf_set1(prm->ali_weight)));
    vf3 coh = v3_mul(v3_sub(v3_mul(a->coh, an), p),
                     vf_set1(prm->coh_weight)); /* quirk: n = 0 pulls to 0 */

    /* nearest target (first on ties) */
    vf best_d2 = vf_set1(RF_INF);
    vf3 tgt = v3_zero();
    for (int k = 0; k < mc->target_count; k++) {
        vf3 t = v3_set1(mc->targets[k][0], mc->targets[k][1], mc->targets[k][2]);
        vf3 dt3 = v3_sub(t, p);
        vf td2 = v3_dot(dt3, dt3);
        vm closer = vf_lt(td2, best_d2);
        best_d2 = vf_select(closer, td2, best_d2);
        tgt = v3_select(closer, t, tgt);
    }
    vf3 fsum = v3_mul(v3_sub(tgt, p), vf_set1(prm->target_weight));
    fsum = v3_add(v3_add(v3_add(fsum, sep), ali), coh);
    if (prm->sphere_count > 0)
        fsum = v3_add(fsum, v3_mul(rule_sphere_avoid(prm, p), vf_set1(prm->avoid_force)));
    fsum = rule_add_extras(fsum, x);
    vf3 fdir = v3_normalize(fsum);
    vf3 dir = v3_normalize(v);
    /* lerp(a, b, s) = a + (b - a) * s */
    vf s_l = vf_set1(prm->rotate_speed * mc->dt);
    dir = v3_normalize(v3_add(dir, v3_mul(v3_sub(fdir, dir), s_l)));
    vf lo = vf_set1(-0.5f), hi = vf_set1(0.5f);
    dir.y = vf_select(vf_lt(dir.y, lo), lo, dir.y);
    dir.y = vf_select(vf_gt(dir.y, hi), hi, dir.y);
    dir = v3_normalize(dir);
    vf ms = vf_set1(prm->move_speed);
    p = v3_add(p, v3_mul(v3_mul(dir, ms), vf_set1(mc->dt)));
    v = v3_mul(dir, ms);
    *pp = p;
    *vp = v;
}

/* ---- classic (seed 002) ----------------------------------------------------------------- */

typedef struct rule_cl {
    vf3 r1, vsum, psum;
    vf n1, n;
} rule_cl;

/* classic rule1 term for a point q seen from p: -normalize(q - p) * k / |q - p|^2, with
 * the seed's operation order: ((-(e / d)) * k) / (d * d). */
RULE_FN vf3 rule_classic_repel(vf3 e, vf d, vf k)
{
    vf dd = vf_mul(d, d);
    vf3 r = {vf_div(vf_mul(vf_neg(vf_div(e.x, d)), k), dd),
             vf_div(vf_mul(vf_neg(vf_div(e.y, d)), k), dd),
             vf_div(vf_mul(vf_neg(vf_div(e.z, d)), k), dd)};
    return r;
}

/* One virtual wall boid: the plane with normal n at signed distance sd (positive inside)
 * gives the point q = p - sd * n when sd <= fov; e = q - p. */
RULE_FN void rule_classic_wall(rule_cl *a, vf3 p, vf sd, vreal nx, vreal ny, vreal nz, vf fov, vf k)
{
    vf3 q = {vf_sub(p.x, vf_mul(sd, vf_set1(nx))), vf_sub(p.y, vf_mul(sd, vf_set1(ny))),
             vf_sub(p.z, vf_mul(sd, vf_set1(nz)))};
    vf3 e = v3_sub(q, p);
    vf e2 = v3_dot(e, e);
    vm m = vm_and(vf_le(sd, fov), vf_gt(e2, vf_zero()));
    if (!vm_any(m))
        return;
    vf d = vf_sqrt(e2);
    a->r1 = v3_add_masked(a->r1, m, rule_classic_repel(e, d, k));
    a->n1 = vf_add_masked(a->n1, m, vf_set1(1.0f));
}

/* The virtual wall boids first (Up, Down, Left, Right, Forward, Back, as the seed adds
 * them), then the real neighbours (rule_classic_pair), in one mean for rule1. */
RULE_FN void rule_classic_begin(rule_cl *a, const RULE_PARAMS *prm, vf3 p)
{
    vf fov = vf_set1(prm->fov), k = vf_set1(prm->sep_strength);
    a->r1 = a->vsum = a->psum = v3_zero();
    a->n1 = a->n = vf_zero();
    rule_classic_wall(a, p, vf_sub(vf_set1(prm->box_max[1]), p.y), 0, -1, 0, fov, k);
    rule_classic_wall(a, p, vf_sub(p.y, vf_set1(prm->box_min[1])), 0, 1, 0, fov, k);
    rule_classic_wall(a, p, vf_sub(p.x, vf_set1(prm->box_min[0])), 1, 0, 0, fov, k);
    rule_classic_wall(a, p, vf_sub(vf_set1(prm->box_max[0]), p.x), -1, 0, 0, fov, k);
    rule_classic_wall(a, p, vf_sub(vf_set1(prm->box_max[2]), p.z), 0, 0, -1, fov, k);
    rule_classic_wall(a, p, vf_sub(p.z, vf_set1(prm->box_min[2])), 0, 0, 1, fov, k);
}

/* The lanes that accept candidate pj: 0 < d^2 <= fov^2 (the CPU tests it first, so that a
 * candidate no lane accepts costs no loads of its velocity). */
RULE_FN vm rule_classic_near(vf3 p, vreal pjx, vreal pjy, vreal pjz, const RULE_CONSTS *mc)
{
    vf3 e = v3_sub(v3_set1(pjx, pjy, pjz), p);
    vf d2 = v3_dot(e, e);
    return vm_and(vf_gt(d2, vf_zero()), vf_le(d2, vf_set1(mc->r2)));
}

RULE_FN void rule_classic_pair(rule_cl *a, vf3 p, vreal pjx, vreal pjy, vreal pjz, vreal vjx,
                               vreal vjy, vreal vjz, const RULE_PARAMS *prm, const RULE_CONSTS *mc)
{
    vf3 pj = v3_set1(pjx, pjy, pjz);
    vf3 e = v3_sub(pj, p); /* the seed's diff = other - me */
    vf d2 = v3_dot(e, e);
    vm m = rule_classic_near(p, pjx, pjy, pjz, mc);
    if (!vm_any(m))
        return;
    vf one = vf_set1(1.0f);
    vf d = vf_sqrt(d2);
    a->r1 = v3_add_masked(a->r1, m, rule_classic_repel(e, d, vf_set1(prm->sep_strength)));
    a->n1 = vf_add_masked(a->n1, m, one);
    a->vsum = v3_add_masked(a->vsum, m, v3_set1(vjx, vjy, vjz));
    a->psum = v3_add_masked(a->psum, m, pj);
    a->n = vf_add_masked(a->n, m, one);
}

RULE_FN void rule_classic_finish(const rule_cl *a, const RULE_PARAMS *prm, const RULE_CONSTS *mc,
                                 const rule_extras *x, vf3 *pp, vf3 *vp)
{
    vf3 p = *pp, v = *vp;
    vf zero = vf_zero();
    vm has1 = vf_gt(a->n1, zero), has = vf_gt(a->n, zero);
    vf3 rule1 = v3_select(has1, v3_div(a->r1, a->n1), v3_zero());
    vf3 rule2 = v3_select(has, v3_sub(v3_div(a->vsum, a->n), v), v3_zero());
    vf3 rule3 = v3_select(has, v3_sub(v3_div(a->psum, a->n), p), v3_zero());
    /* a = (w1 r1 + w2 r2 + w3 r3) / (w1 + w2 + w3), the seed's divisor (the sum added left to
     * right in float: 8 exactly at the defaults 5 2 1); a zero sum gives a = 0 */
    vf3 acc = v3_add(v3_add(v3_mul(rule1, vf_set1(prm->w1)), v3_mul(rule2, vf_set1(prm->w2))),
                     v3_mul(rule3, vf_set1(prm->w3)));
    vreal wsum = prm->w1 + prm->w2 + prm->w3;
    acc = wsum != 0.0f ? v3_div(acc, vf_set1(wsum)) : v3_zero();
    if (prm->sphere_count > 0)
        acc = v3_add(acc, v3_mul(rule_sphere_avoid(prm, p), vf_set1(prm->avoid_force)));
    acc = rule_add_extras(acc, x);
    /* p += v dt + a dt^2 / 2; v += a dt; |v| clamped to [min_speed, max_speed] */
    vf dt = vf_set1(mc->dt), half_dt2 = vf_set1(mc->dt * mc->dt * 0.5f);
    p = v3_add(p, v3_add(v3_mul(v, dt), v3_mul(acc, half_dt2)));
    v = v3_add(v, v3_mul(acc, dt));
    v = v3_clamp_speed(v, vf_set1(prm->min_speed), vf_set1(prm->max_speed));
    *pp = p;
    *vp = v;
}

/* ---- fov (seed 004): view cones, squared-distance thresholds, sphere boundary, p += v --- */

typedef struct rule_fv {
    vf3 vhat, coh, sep, ali;
    vf coh_n, ali_n;
    vf near_n; /* candidates within the largest distance: a work statistic only */
} rule_fv;

RULE_FN void rule_fov_begin(rule_fv *a, vf3 v)
{
    a->vhat = v3_normalize(v);
    a->coh = a->sep = a->ali = v3_zero();
    a->coh_n = a->ali_n = a->near_n = vf_zero();
}

/* the largest of the three squared thresholds (the candidate test's bound) */
RULE_FN vreal rule_fov_max2(const RULE_PARAMS *prm)
{
    vreal mx = prm->coh_dist2 > prm->sep_dist2 ? prm->coh_dist2 : prm->sep_dist2;
    return prm->ali_dist2 > mx ? prm->ali_dist2 : mx;
}

/* The lanes within reach of candidate pj: 0 < d^2 < max2 (the CPU tests it first, so that a
 * candidate no lane reaches costs no loads of its velocity). */
RULE_FN vm rule_fov_near(vf3 p, vreal pjx, vreal pjy, vreal pjz, vf max2)
{
    vf3 e = v3_sub(v3_set1(pjx, pjy, pjz), p);
    vf d2 = v3_dot(e, e);
    return vm_and(vf_gt(d2, vf_zero()), vf_lt(d2, max2));
}

RULE_FN void rule_fov_pair(rule_fv *a, vf3 p, vreal pjx, vreal pjy, vreal pjz, vreal vjx, vreal vjy,
                           vreal vjz, const RULE_PARAMS *prm, const RULE_CONSTS *mc, vf max2)
{
    vf3 pj = v3_set1(pjx, pjy, pjz);
    vf3 e = v3_sub(pj, p); /* p_j - p_i */
    vf d2 = v3_dot(e, e);
    vm near = rule_fov_near(p, pjx, pjy, pjz, max2);
    if (!vm_any(near))
        return;
    vf one = vf_set1(1.0f);
    a->near_n = vf_add_masked(a->near_n, near, one);
    vf d = vf_sqrt(d2);
    /* angle < A  <=>  cos(angle) > cos(A), cos(angle) = normalize(v_i).(e / d) */
    vf c = vf_div(v3_dot(a->vhat, e), d);
    vm m_coh =
        vm_and(vm_and(near, vf_lt(d2, vf_set1(prm->coh_dist2))), vf_gt(c, vf_set1(mc->cos_coh)));
    vm m_sep =
        vm_and(vm_and(near, vf_lt(d2, vf_set1(prm->sep_dist2))), vf_gt(c, vf_set1(mc->cos_sep)));
    vm m_ali =
        vm_and(vm_and(near, vf_lt(d2, vf_set1(prm->ali_dist2))), vf_gt(c, vf_set1(mc->cos_ali)));
    a->coh = v3_add_masked(a->coh, m_coh, pj);
    a->coh_n = vf_add_masked(a->coh_n, m_coh, one);
    if (vm_any(m_sep)) {
        vf3 diff = v3_sub(p, pj); /* normalize(p_i - p_j) / sqrt(d^2) */
        a->sep = v3_add_masked(a->sep, m_sep, v3_div(v3_div(diff, d), d));
    }
    a->ali = v3_add_masked(a->ali, m_ali, v3_set1(vjx, vjy, vjz));
    a->ali_n = vf_add_masked(a->ali_n, m_ali, one);
}

/* fov's boundary force -bf (p - c) (|p - c|^2 - R^2) / |p - c|^2 for a boid so far from the
 * centre that it overflows in float (rule_fov_finish calls it only for lanes whose float
 * result is not finite): p - c in float as the float path forms it, the rest in double (no
 * contraction on either backend: -ffp-contract=off, -fmad=false; double division is IEEE on
 * both), rounded once to float. Finite whenever bf |p - c| is below FLT_MAX. */
RULE_FN void rule_fov_boundary_far(const RULE_PARAMS *prm, vreal px, vreal py, vreal pz,
                                   vreal out[3])
{
    vreal pc[3] = {px - prm->boundary_center[0], py - prm->boundary_center[1],
                   pz - prm->boundary_center[2]};
    double q[3] = {pc[0], pc[1], pc[2]};
    double sq = (q[0] * q[0] + q[1] * q[1]) + q[2] * q[2];
    double f = (sq - (double)prm->boundary_range2) / sq;
    double nbf = -(double)prm->boundary_force;
    for (int c = 0; c < 3; c++)
        out[c] = (vreal)((nbf * q[c]) * f);
}

/* rule_fov_boundary_far for the lanes in `far`, lane by lane, so every ISA (and the GPU, one
 * lane) gives the same bits; the other lanes keep b. */
RULE_FN vf3 rule_fov_boundary_far_lanes(const RULE_PARAMS *prm, vf3 p, vm far, vf3 b)
{
    vreal x[VW], y[VW], z[VW], bx[VW], by[VW], bz[VW];
    vf_store_n(x, p.x, VW);
    vf_store_n(y, p.y, VW);
    vf_store_n(z, p.z, VW);
    vf_store_n(bx, b.x, VW);
    vf_store_n(by, b.y, VW);
    vf_store_n(bz, b.z, VW);
    unsigned bits = vm_bits(far);
    for (int i = 0; i < VW; i++) {
        if (!(bits & (1u << i)))
            continue;
        vreal o[3];
        rule_fov_boundary_far(prm, x[i], y[i], z[i], o);
        bx[i] = o[0];
        by[i] = o[1];
        bz[i] = o[2];
    }
    vf3 r = {vf_load_n(bx, VW), vf_load_n(by, VW), vf_load_n(bz, VW)};
    return r;
}

RULE_FN void rule_fov_finish(const rule_fv *a, const RULE_PARAMS *prm, const RULE_CONSTS *mc,
                             const rule_extras *x, vf3 *pp, vf3 *vp)
{
    vf3 p = *pp, v = *vp;
    vf zero = vf_zero();
    vf3 cohf =
        v3_select(vf_gt(a->coh_n, zero),
                  v3_mul(v3_sub(v3_div(a->coh, a->coh_n), p), vf_set1(prm->coh_force)), v3_zero());
    vf3 alif =
        v3_select(vf_gt(a->ali_n, zero),
                  v3_mul(v3_sub(v3_div(a->ali, a->ali_n), v), vf_set1(prm->ali_force)), v3_zero());
    vf3 sepf = v3_mul(a->sep, vf_set1(prm->sep_force));
    /* boundary sphere: -bf * (p - c) * (|p - c|^2 - R^2) / |p - c|^2 outside it */
    vf3 c3 = v3_set1(prm->boundary_center[0], prm->boundary_center[1], prm->boundary_center[2]);
    vf3 cp = v3_sub(c3, p);
    vf sq = v3_dot(cp, cp);
    vf R2 = vf_set1(prm->boundary_range2);
    vf3 pc = v3_sub(p, c3);
    vf excess = vf_sub(sq, R2);
    vf nbf = vf_set1(-prm->boundary_force);
    vf3 b = {vf_div(vf_mul(vf_mul(nbf, pc.x), excess), sq),
             vf_div(vf_mul(vf_mul(nbf, pc.y), excess), sq),
             vf_div(vf_mul(vf_mul(nbf, pc.z), excess), sq)};
    vm outside = vf_gt(sq, R2);
    b = v3_select(outside, b, v3_zero());
    /* A boid so far out that the product overflows (|p - c| beyond ~7e12 at bf = 1; beyond
     * ~1.8e19 |p - c|^2 itself is infinite) gets the same force computed in double. Only
     * lanes whose float result is not finite take it: every other boid keeps its bits. */
    vm finite_b = vm_and(vm_and(vf_eq(vf_sub(b.x, b.x), zero), vf_eq(vf_sub(b.y, b.y), zero)),
                         vf_eq(vf_sub(b.z, b.z), zero));
    vm far = vm_andnot(outside, finite_b);
    if (vm_any(far))
        b = rule_fov_boundary_far_lanes(prm, p, far, b);
    vf maxf = vf_set1(prm->max_force);
    cohf = v3_limit(cohf, maxf);
    sepf = v3_limit(sepf, maxf);
    alif = v3_limit(alif, maxf);
    vf3 avoid = v3_zero();
    if (prm->sphere_count > 0)
        avoid = v3_mul(rule_sphere_avoid(prm, p), vf_set1(prm->avoid_force));
    vf3 sum = v3_add(v3_add(v3_add(v3_add(cohf, sepf), alif), b), avoid);
    sum = rule_add_extras(sum, x);
    v = v3_add(v, v3_mul(sum, vf_set1(mc->dt)));
    v = v3_clamp_speed(v, vf_set1(prm->min_speed), vf_set1(prm->max_speed));
    p = v3_add(p, v); /* quirk: no dt, as in the seed */
    *pp = p;
    *vp = v;
}

/* ---- predators (MODELS.md "Predators"), scalar --------------------------------------- */

/* Predator k of n at the start: spread along x around predator_start. */
RULE_FN void rule_predator_start(const RULE_PARAMS *p, int k, int n, vreal q[3])
{
    vreal off = ((vreal)k - 0.5f * (vreal)(n - 1)) * p->predator_spread;
    q[0] = p->predator_start[0] + off;
    q[1] = p->predator_start[1];
    q[2] = p->predator_start[2];
}

/* The squared distance the nearest-boid search compares (ties: lowest input row). */
RULE_FN vreal rule_predator_d2(vreal x, vreal y, vreal z, const vreal q[3])
{
    vreal dx = x - q[0], dy = y - q[1], dz = z - q[2];
    return (dx * dx + dy * dy) + dz * dz;
}

/* The turn rate of one step: predator_turn * dt, at most 1. */
RULE_FN vreal rule_predator_turn(const RULE_PARAMS *p, vreal dt)
{
    vreal turn = p->predator_turn * dt;
    return turn > 1.0f ? 1.0f : turn;
}

RULE_FN vreal rule_len3(const vreal v[3])
{
    return RF_SQRT((v[0] * v[0] + v[1] * v[1]) + v[2] * v[2]);
}

/* One predator's step toward its target tgt: turn the heading toward it by lerp(dir, want,
 * turn), normalised, then move at predator_speed. */
RULE_FN void rule_predator_move(const RULE_PARAMS *p, vreal q[3], vreal v[3], const vreal tgt[3],
                                vreal turn, vreal dt)
{
    vreal want[3] = {tgt[0] - q[0], tgt[1] - q[1], tgt[2] - q[2]};
    vreal wl = rule_len3(want), vl = rule_len3(v);
    vreal dir[3];
    if (wl > 0.0f) {
        for (int c = 0; c < 3; c++)
            want[c] = RF_DIV(want[c], wl);
        if (vl > 0.0f) {
            /* turn toward the target: lerp(dir, want, turn * dt), normalised */
            for (int c = 0; c < 3; c++) {
                vreal h = RF_DIV(v[c], vl);
                dir[c] = h + (want[c] - h) * turn;
            }
            vreal dl = rule_len3(dir);
            if (dl > 0.0f)
                for (int c = 0; c < 3; c++)
                    dir[c] = RF_DIV(dir[c], dl);
            else
                for (int c = 0; c < 3; c++)
                    dir[c] = want[c];
        } else {
            for (int c = 0; c < 3; c++)
                dir[c] = want[c];
        }
    } else if (vl > 0.0f) {
        for (int c = 0; c < 3; c++)
            dir[c] = RF_DIV(v[c], vl);
    } else {
        dir[0] = dir[1] = dir[2] = 0.0f;
    }
    for (int c = 0; c < 3; c++) {
        v[c] = dir[c] * p->predator_speed;
        q[c] += v[c] * dt;
    }
}

#endif
