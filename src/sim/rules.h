/* SPDX-License-Identifier: MIT */
/* The rules, written once: the terms every model shares (the obstacle spheres, the obstacle
 * field's sample, the flee term, the time's targets, the candidate a walker hands a model)
 * and the predators' move here, then every model's own file (sim/models/NAME.h: its rules,
 * its adapter, its constants, its parameter table), included at the end. Four backends
 * compile this file, each with one walker over the candidates that calls a model through its
 * adapter (docs/ARCHITECTURE.md, "Models and walkers"):
 *   - the CPU (src/sim/forces_kernel.h, once per ISA) against the wide type of core/simd.h:
 *     vf is a float at W = 1 (the scalar reference), __m256 or __m512 (lane = boid);
 *   - the GPU (src/gpu/gpu_sim.cu, nvcc) against the scalar branch of core/simd.h, W = 1,
 *     where RULE_FN makes every function a device function and division and square root are
 *     __fdiv_rn / __fsqrt_rn;
 *   - the float64 reference of `shoal step --precision f64` and `shoal verify` (src/verify:
 *     ref_kernel.h with verify/real64.h, double) and its float32 rounding bound (with
 *     verify/real_bound.h, double and a bound per value), which define RULE_REFERENCE.
 * So a rule changed here changes on every backend, and the GPU keeps the CPU's bits
 * (docs/GPU.md). What stays in each backend is its walk (the CPU's lane groups and deferred
 * late terms, the GPU's thread per boid, the reference's ties), the sort, memory, finite
 * checks and stores.
 *
 * The seeds the rules come from (docs/MODELS.md says what each takes from its seed): seed 000 is a
 * Unity fish-school blog post (average), seed 001 a compute-shader article on a grid built by a
 * counting sort (heading), seed 002 a Unity CPU Boids article (classic), seed 003 the
 * UnityGraphicsProgramming GPU Boids chapter, Boids.compute (steer), seed 004 a blog post
 * on boids avoiding obstacles through a vector field (fov, the obstacle field).
 *
 * The subset of C used: static inline functions, structs, no statics or globals, no library
 * calls in what a walker runs (RF_DIV / RF_SQRT for scalar float division and square root).
 * Exactness rules are forces_kernel.h's: no FMA, IEEE division and square root, sums in
 * candidate order, dot products x + y + z left to right. Every masked add keeps exact bits
 * (simd.h); a walker's early skip of a candidate no lane is near only skips work that would
 * add nothing.
 *
 * Calling order for a boid (every backend): NAME_begin, then for every candidate in the
 * candidate order the difference p - p_j and its square, NAME_near, NAME_pair (and NAME_late
 * where the pair asks for it, in the same candidate order), then rule_extras (field and flee at
 * the start position) and NAME_finish, which writes the new position and velocity. */
#ifndef SHOAL_SIM_RULES_H
#define SHOAL_SIM_RULES_H

#include "core/noise.h" /* the models' counter-based noise (docs/NOISE.md) */
#include "core/simd.h"
#include "shoal/verify.h" /* shoal_term: the hypothesis columns of the models' tables */
#if !defined(__CUDACC__)
#include "core/rng.h"
#include "sim/sim_internal.h" /* gpu_sim.cu includes it itself, inside extern "C" */

#include <math.h>
#endif

/* The types the rules read. By default float32's: the parameters as the user set them, the
 * per-step constants and the obstacle field of sim_internal.h. The float64 reference
 * (verify/ref_kernel.h, docs/VERIFY.md) defines these four as its double twins
 * (verify/ref_internal.h) and SIMD_REAL_HEADER as its scalar type before including this
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
#define RF_COS(a) cosf(a)
#elif defined(SIMD_REAL_HEADER)
/* the float64 reference: scalars are double */
#define RF_DIV(a, b) ((a) / (b))
#define RF_SQRT(a) __builtin_sqrt(a)
#define RF_INF __builtin_inf()
#define RF_COS(a) cos(a)
#else
#define RF_DIV(a, b) ((a) / (b))
#define RF_SQRT(a) __builtin_sqrtf(a)
#define RF_INF __builtin_inff()
#define RF_COS(a) cosf(a)
#endif

/* ---- the world (docs/WORLD.md) ---------------------------------------------------------- */

/* A difference d = a - b of two points in the box on an axis of period L (half = L / 2; +inf
 * where the axis does not wrap, which leaves d as it is) as the minimum image: sim/world.h's
 * world_min_image_f, on any vf (the wide types, the GPU's float, the reference's double and
 * its bounded double): d - L above half, d + L below -half, else d. */
RULE_FN vf rule_min_image(vf d, vreal L, vreal half)
{
    return vf_select(vf_gt(d, vf_set1(half)), vf_sub(d, vf_set1(L)),
                     vf_select(vf_lt(d, vf_set1(-half)), vf_add(d, vf_set1(L)), d));
}

/* The same on a scalar (the predators' scalar rules). */
RULE_FN vreal rule_min_image_s(vreal d, vreal L, vreal half)
{
    return d > half ? d - L : (d < -half ? d + L : d);
}

/* The difference p - c of a boid and a point of the world (an obstacle sphere's centre, a
 * predator, a target, a model's boundary centre) as the world sees it: the minimum image on
 * every periodic axis, and in 2D no z (the plane: a point's z counts as 0, so every term stays
 * in the plane). Today's world (world_on 0): d as it is. */
RULE_FN vf3 rule_world_delta(const RULE_CONSTS *mc, vf3 d)
{
    if (!mc->world_on)
        return d;
    if (mc->periodic[0])
        d.x = rule_min_image(d.x, mc->wsize[0], mc->whalf[0]);
    if (mc->periodic[1])
        d.y = rule_min_image(d.y, mc->wsize[1], mc->whalf[1]);
    if (mc->periodic[2])
        d.z = rule_min_image(d.z, mc->wsize[2], mc->whalf[2]);
    if (mc->world_dims == 2)
        d.z = vf_zero();
    return d;
}

/* One axis of rule_image: d (p - p_j) to its minimum image and q (p_j) moved by the same
 * whole period. */
RULE_FN void rule_image_axis(vf *d, vf *q, vreal L, vreal half)
{
    vm up = vf_gt(*d, vf_set1(half)), down = vf_lt(*d, vf_set1(-half));
    vf l = vf_set1(L);
    *d = vf_select(up, vf_sub(*d, l), vf_select(down, vf_add(*d, l), *d));
    *q = vf_select(up, vf_add(*q, l), vf_select(down, vf_sub(*q, l), *q));
}

/* A candidate seen from the boid in a world with a periodic axis (every walker calls it
 * there, right after rule_diff): diff = p - p_j becomes the minimum image on each periodic
 * axis and pos (p_j) the candidate's image nearest the boid, lane by lane (p_j plus or minus
 * the period: exactly p_j where the direct difference is already the nearest). */
RULE_FN void rule_image(const RULE_CONSTS *mc, vf3 *diff, vf3 *pos)
{
    if (mc->periodic[0])
        rule_image_axis(&diff->x, &pos->x, mc->wsize[0], mc->whalf[0]);
    if (mc->periodic[1])
        rule_image_axis(&diff->y, &pos->y, mc->wsize[1], mc->whalf[1]);
    if (mc->periodic[2])
        rule_image_axis(&diff->z, &pos->z, mc->wsize[2], mc->whalf[2]);
}

/* rule_image on the periodic axes in `axes` (bit a: axis a) only: a walker that knows the
 * other axes cannot wrap for any candidate its lanes are near (their cells do not touch the
 * seam there: forces_kernel.h) gives the same bits with less work. */
RULE_FN void rule_image_axes(const RULE_CONSTS *mc, vf3 *diff, vf3 *pos, int axes)
{
    if (axes & 1)
        rule_image_axis(&diff->x, &pos->x, mc->wsize[0], mc->whalf[0]);
    if (axes & 2)
        rule_image_axis(&diff->y, &pos->y, mc->wsize[1], mc->whalf[1]);
    if (axes & 4)
        rule_image_axis(&diff->z, &pos->z, mc->wsize[2], mc->whalf[2]);
}

/* Whether a model's own walls or boundary act on axis a (0 x, 1 y, 2 z): always in today's
 * world; not on a periodic axis, nor on z in 2D (WORLD_CONSTS_SET's wall_on). */
#define RULE_WALL_ON(mc, a) (!(mc)->world_on || (mc)->wall_on[a])

/* ---- terms every model shares ----------------------------------------------------------- */

/* Obstacle spheres (every model): for each sphere with centre c and radius r, a boid
 * closer than 2r to c is pushed along (p - c) / |p - c| with strength (2r - |p - c|) / r
 * (1 at the surface, 0 at 2r). Summed in sphere order; returns the unweighted sum. In a
 * periodic world p - c is the minimum image (a sphere repeats with the box), in 2D its
 * centre's z counts as 0 (rule_world_delta). */
RULE_FN vf3 rule_sphere_avoid(const RULE_PARAMS *prm, const RULE_CONSTS *mc, vf3 p)
{
    vf3 acc = v3_zero();
    int count = (int)prm->sphere_count;
    for (int k = 0; k < count; k++) {
        const RULE_SPHERE *sp = &prm->spheres[k];
        vf3 q =
            rule_world_delta(mc, v3_sub(p, v3_set1(sp->center[0], sp->center[1], sp->center[2])));
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
 * predator, 0 at R). Returns the unweighted sum. p - q through the world (rule_world_delta). */
RULE_FN vf3 rule_flee(const RULE_CONSTS *mc, const vreal (*pred)[3], int pred_count, vreal flee_r,
                      vreal flee_r2, vf3 p)
{
    vf3 acc = v3_zero();
    vf r = vf_set1(flee_r), r2 = vf_set1(flee_r2);
    for (int k = 0; k < pred_count; k++) {
        vf3 q = rule_world_delta(mc, v3_sub(p, v3_set1(pred[k][0], pred[k][1], pred[k][2])));
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
 * finish adds them with rule_add_extras. It also says who the lanes are: lane i (i < lanes)
 * is the boid of input row rows[i], the identity a model's counter-based noise is keyed by
 * with the step's constants' seed and step (a draw of lane i depends on (seed, step, rows[i],
 * draw) alone, whatever walker, lane or thread computes it). */
typedef struct rule_extras {
    int field_on, flee_on;
    vf3 field; /* field(p) * avoid_force */
    vf3 flee;  /* flee(p) * flee_weight */
    const uint32_t *rows;
    int lanes;
} rule_extras;

RULE_FN vf3 rule_field_term(const RULE_PARAMS *prm, vf3 cell_vec)
{
    return v3_mul(cell_vec, vf_set1(prm->avoid_force));
}

RULE_FN vf3 rule_flee_term(const RULE_PARAMS *prm, const RULE_CONSTS *mc, const vreal (*pred)[3],
                           vf3 p)
{
    return v3_mul(rule_flee(mc, pred, mc->predator_count, mc->flee_r, mc->flee_r2, p),
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

/* ---- what a walker hands a model ------------------------------------------------------ */

/* One candidate j of a boid: its position per lane (pos: p_j in every lane, or in a periodic
 * world the image of p_j nearest each lane, rule_image), its velocity and, for a model whose
 * NAME_USES_DIR is 1, its unit heading dir_j = rule_dir(v_j) (the reference computes it per
 * candidate, the CPU per candidate or, for a model that walks every candidate, VW candidates
 * at a time by v3_normalize (forces_kernel.h kdir), the GPU once per boid in its gather: the
 * same arithmetic, so the same bits). A model reads them through rule_cand_p, rule_cand_v and
 * rule_cand_dir. On the CPU and the GPU the velocity and heading are the walker's wide type (vf):
 * the lane groups put one candidate in every lane (a velocity is the same in every image), the
 * cluster lists (forces_cluster.h) a different candidate in each quarter of the lanes; in the
 * float64 reference they are its exact scalar (the bound's vf is not a number). */
#if defined(SIMD_REAL_HEADER)
typedef vreal rule_cand_t;
#define RULE_CAND_WIDE 0
#else
typedef vf rule_cand_t;
#define RULE_CAND_WIDE 1
#endif
typedef struct rule_cand {
    vf3 pos;
    rule_cand_t vx, vy, vz;
    rule_cand_t dir[3];
} rule_cand;

RULE_FN vf3 rule_cand_p(const rule_cand *c) { return c->pos; }
RULE_FN vf3 rule_cand_v(const rule_cand *c)
{
#if RULE_CAND_WIDE
    vf3 r = {c->vx, c->vy, c->vz};
    return r;
#else
    return v3_set1(c->vx, c->vy, c->vz);
#endif
}
RULE_FN vf3 rule_cand_dir(const rule_cand *c)
{
#if RULE_CAND_WIDE
    vf3 r = {c->dir[0], c->dir[1], c->dir[2]};
    return r;
#else
    return v3_set1(c->dir[0], c->dir[1], c->dir[2]);
#endif
}

/* v / |v| (0 for v = 0), |v| as (x^2 + y^2) + z^2 */
RULE_FN void rule_dir(vreal vx, vreal vy, vreal vz, vreal d[3])
{
    vreal vl = RF_SQRT(vx * vx + vy * vy + vz * vz);
    d[0] = d[1] = d[2] = 0.0f;
    if (vl > 0.0f) {
        d[0] = RF_DIV(vx, vl);
        d[1] = RF_DIV(vy, vl);
        d[2] = RF_DIV(vz, vl);
    }
}

/* p - p_j, the difference every walker forms and hands the model with its square
 * (v3_dot(diff, diff)): from the candidate to the boid. */
RULE_FN vf3 rule_diff(vf3 p, vreal pjx, vreal pjy, vreal pjz)
{
    vf3 d = {vf_sub(p.x, vf_set1(pjx)), vf_sub(p.y, vf_set1(pjy)), vf_sub(p.z, vf_set1(pjz))};
    return d;
}

#if RULE_CAND_WIDE
/* rule_dir lane by lane (the same operations, IEEE division and square root: the same bits
 * in every lane as rule_dir of that lane's velocity) */
RULE_FN void rule_dir_v(vf vx, vf vy, vf vz, vf d[3])
{
    vf vl = vf_sqrt(vf_add(vf_add(vf_mul(vx, vx), vf_mul(vy, vy)), vf_mul(vz, vz)));
    vm pos = vf_gt(vl, vf_zero());
    d[0] = vf_select(pos, vf_div(vx, vl), vf_zero());
    d[1] = vf_select(pos, vf_div(vy, vl), vf_zero());
    d[2] = vf_select(pos, vf_div(vz, vl), vf_zero());
}

/* rule_diff of a candidate per lane */
RULE_FN vf3 rule_diff_v(vf3 p, vf3 pj) { return v3_sub(p, pj); }
#endif

/* The targets of time t_s (heading's: any model whose constants set target_count draws them):
 * target_count points uniform in the box bounds_center +- bounds_size / 2, redrawn every
 * target_period s. The epoch, not the step count, picks them: a run split over state files
 * (with --t0) sees the same targets at the same simulated time. u has 24 random bits, so
 * lo + (hi - lo) * u is the same expression in float and in double. Host code (the GPU
 * draws them on the host, sim_targets). */
#if !defined(__CUDACC__)
static inline void rule_targets(const RULE_PARAMS *p, int target_count, uint64_t seed, double t_s,
                                vreal *xyz)
{
    double epoch_d = floor(t_s / (double)p->target_period);
    int64_t epoch = (int64_t)epoch_d;
    rng r = rng_stream(seed ^ 0x7461726765747321ull, (uint64_t)epoch);
    for (int k = 0; k < target_count; k++)
        for (int c = 0; c < 3; c++) {
            vreal lo = p->bounds_center[c] - 0.5f * p->bounds_size[c];
            vreal hi = p->bounds_center[c] + 0.5f * p->bounds_size[c];
            vreal u = (vreal)(rng_next(&r) >> 40) * (vreal)0x1p-24;
            xyz[k * 3 + c] = lo + (hi - lo) * u;
        }
}
#endif

/* ---- noise (core/noise.h, docs/NOISE.md) ------------------------------------------------ */

/* A model draws its noise in its finish, lane by lane: block `draw` of each lane's input row
 * (rule_extras.rows) under the step's key (rule_noise_key: the run's seed and the step's
 * index, model_consts.seed and .step), made into the numbers it needs by core/noise.h's float
 * functions. Those numbers depend on the bits alone, never on the state, so every backend
 * computes the same floats (the float64 reference and its bound take them as exact inputs),
 * then loads them as wide values (vf_load_n) and applies them with the rules' arithmetic: a
 * lane is the scalar function of its row, whatever walker, ISA, lane, thread or rank
 * computes it. Lanes from x->lanes up get `fill` (no row: their results are never stored). */
RULE_FN noise_key rule_noise_key(const RULE_CONSTS *mc)
{
    return noise_key_make(mc->seed, mc->step);
}

/* 1 when the world is the plane (a 2D world: z = vz = 0), where a model's noise is a plane
 * rotation rather than a draw on the sphere. */
RULE_FN int rule_plane(const RULE_CONSTS *mc) { return mc->world_on && mc->world_dims == 2; }

/* noise_basis (Duff et al. 2017) in the wide type: an orthonormal pair (e1, e2) perpendicular to
 * the unit n, the same operations in the same order (the sign of n.z by a comparison: -0 counts
 * as +0, where noise_basis's copysign gives -1; negation as 0 - x). */
RULE_FN void rule_basis(vf3 n, vf3 *e1, vf3 *e2)
{
    vf one = vf_set1(1.0f), mone = vf_set1(-1.0f);
    vf sign = vf_select(vf_lt(n.z, vf_zero()), mone, one);
    vf a = vf_div(mone, vf_add(sign, n.z));
    vf b = vf_mul(vf_mul(n.x, n.y), a);
    e1->x = vf_add(one, vf_mul(vf_mul(vf_mul(sign, n.x), n.x), a));
    e1->y = vf_mul(sign, b);
    e1->z = vf_mul(vf_neg(sign), n.x);
    e2->x = b;
    e2->y = vf_add(sign, vf_mul(vf_mul(n.y, n.y), a));
    e2->z = vf_neg(n.y);
}

/* c h + s (cp e1 + sp e2), (e1, e2) = rule_basis(h): noise_tilt in the wide type (the cap of
 * Vicsek's 3D noise, Couzin's turn on the sphere) */
RULE_FN vf3 rule_tilt(vf3 h, vf c, vf s, vf cp, vf sp)
{
    vf3 e1, e2;
    rule_basis(h, &e1, &e2);
    vf3 r = {vf_add(vf_mul(c, h.x), vf_mul(s, vf_add(vf_mul(cp, e1.x), vf_mul(sp, e2.x)))),
             vf_add(vf_mul(c, h.y), vf_mul(s, vf_add(vf_mul(cp, e1.y), vf_mul(sp, e2.y)))),
             vf_add(vf_mul(c, h.z), vf_mul(s, vf_add(vf_mul(cp, e1.z), vf_mul(sp, e2.z))))};
    return r;
}

/* (hx, hy) turned by the angle whose cosine and sine are (c, s): noise_turn2 in the wide type,
 * z kept (the plane of a 2D world: 0) */
RULE_FN vf3 rule_turn2(vf3 h, vf c, vf s)
{
    vf3 r = {vf_sub(vf_mul(c, h.x), vf_mul(s, h.y)), vf_add(vf_mul(s, h.x), vf_mul(c, h.y)), h.z};
    return r;
}

/* ---- predators (MODELS.md "Predators"), scalar --------------------------------------- */

/* Predator k of n at the start: spread along x around predator_start (in 2D at z = 0; in
 * a periodic world wrapped into the box: rule_predator_place). */
RULE_FN void rule_predator_start(const RULE_PARAMS *p, int k, int n, vreal q[3])
{
    vreal off = ((vreal)k - 0.5f * (vreal)(n - 1)) * p->predator_spread;
    q[0] = p->predator_start[0] + off;
    q[1] = p->predator_start[1];
    q[2] = p->predator_start[2];
}

/* A difference of two points of the world, scalar (rule_world_delta's rule, one axis). */
RULE_FN vreal rule_world_delta_s(const RULE_CONSTS *mc, int c, vreal d)
{
    if (!mc->world_on)
        return d;
    if (c == 2 && mc->world_dims == 2)
        return 0.0f;
    return mc->periodic[c] ? rule_min_image_s(d, mc->wsize[c], mc->whalf[c]) : d;
}

/* The squared distance the nearest-boid search compares (ties: lowest input row); in a
 * periodic world the minimum image's. */
RULE_FN vreal rule_predator_d2(const RULE_CONSTS *mc, vreal x, vreal y, vreal z, const vreal q[3])
{
    vreal dx = rule_world_delta_s(mc, 0, x - q[0]), dy = rule_world_delta_s(mc, 1, y - q[1]),
          dz = rule_world_delta_s(mc, 2, z - q[2]);
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
 * turn), normalised, then move at predator_speed. In a periodic world it turns toward the
 * target's nearest image; in 2D it stays in the plane (rule_predator_place wraps it). */
RULE_FN void rule_predator_move(const RULE_PARAMS *p, const RULE_CONSTS *mc, vreal q[3], vreal v[3],
                                const vreal tgt[3], vreal turn, vreal dt)
{
    vreal want[3] = {rule_world_delta_s(mc, 0, tgt[0] - q[0]),
                     rule_world_delta_s(mc, 1, tgt[1] - q[1]),
                     rule_world_delta_s(mc, 2, tgt[2] - q[2])};
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

/* x wrapped into [lo, hi) on an axis of period L: sim/world.h's world_wrap_f (or _d in
 * double), the same operations in the same order, on a scalar of any backend. */
RULE_FN vreal rule_wrap_s(vreal x, vreal lo, vreal L, vreal hi)
{
    vreal y = x < lo ? x + L : (hi <= x ? x - L : x);
    if (!(lo <= y && y < hi)) {
        vreal r = x - lo;
        vreal n = (vreal)floor((double)RF_DIV(r, L));
        y = lo + (r - n * L);
        if (y < lo || hi <= y)
            y = lo;
    }
    return y;
}

/* A predator (its position q, velocity v) placed in the world after its start or a move:
 * wrapped into the box on each periodic axis, and in 2D at z = 0 with no vz. Today's world:
 * nothing. */
RULE_FN void rule_predator_place(const RULE_CONSTS *mc, vreal q[3], vreal v[3])
{
    if (!mc->world_on)
        return;
    for (int c = 0; c < 3; c++)
        if (mc->periodic[c])
            q[c] = rule_wrap_s(q[c], mc->wlo[c], mc->wsize[c], mc->whi[c]);
    if (mc->world_dims == 2) {
        q[2] = 0.0f;
        v[2] = 0.0f;
    }
}

/* ---- the adapter: what every walker calls of a model ------------------------------------ */

/* A model NAME (sim/models.h SIM_MODELS) is walked by every backend through these pieces of
 * its file sim/models/NAME.h; a walker is written once, generated for every model of the list
 * (the CPU's lane groups in forces_kernel.h, the GPU's thread per boid in gpu/gpu_models.h,
 * the float64 reference and its bound in verify/ref_kernel.h), so a piece missing does not
 * compile. The walker forms the difference and its square itself (rule_diff: p - p_j, and in
 * a periodic world the minimum image) and hands them to the model, which never sees lanes,
 * cells or memory: a walker that orders its candidates otherwise (cluster pairs) calls the
 * same pieces.
 *   NAME_acc                 the accumulator of one boid's (one lane group's) sums
 *   NAME_consts(prm, mc)     its constants mc->k[] (and target_count), from the parameters
 *   NAME_reach2(prm, mc)     the largest squared radius its tests compare (mc->reach2)
 *   NAME_variant(mc)         which compile-time variant of the pair loop the CPU runs
 *                            (0 .. NAME_VARIANTS - 1, same bits; the GPU and reference take 0)
 *   NAME_begin(a, prm, mc, p, v)
 *   NAME_near(d2, reach2)    the cheap test: the lanes the candidate may add to; a candidate
 *                            no lane is near adds nothing (skipped where NAME_SKIP_FAR, and
 *                            always by the GPU and the reference)
 *   NAME_pair(a, near, p, diff, d2, cand, prm, mc, variant)
 *                            the candidate's terms; returns the lanes that need NAME_late
 *   NAME_late(a, diff, d2, mc)
 *                            (NAME_LATE) a term the CPU defers to the end of its chunk, added
 *                            in the same candidate order (steer's separation: a division)
 *   NAME_useful(a, variant)  per lane, the candidates within reach (a work statistic)
 *   NAME_finish(a, prm, mc, variant, extras, &p, &v)
 *                            the per-boid rules and the integration; a model's noise is drawn
 *                            here, per lane, keyed by (mc->seed, mc->step, extras->rows[lane],
 *                            draw): the same bits on every walker
 *   NAME_ties(a, t), NAME_finish_tie(prm, mc, row)
 *                            (the reference, RULE_REFERENCE) how far each term's sums may move
 *                            with a comparison within rounding, and which of the boid's own
 *                            terms sits on a threshold; NAME_BEGIN_TERM the term of ties that
 *                            begin makes (classic's wall boids)
 * and its traits: */
#define RULE_MODEL_TRAITS(name, skip_far, uses_dir, late, variants, begin_term)                    \
    enum {                                                                                         \
        name##_SKIP_FAR = skip_far,    /* the CPU skips a candidate no lane is near */             \
        name##_USES_DIR = uses_dir,    /* its pair reads the candidate's dir (rule_cand) */        \
        name##_LATE = late,            /* its pair may ask for NAME_late */                        \
        name##_VARIANTS = variants,    /* compile-time variants of the CPU's pair loop (1 or 2) */ \
        name##_BEGIN_TERM = begin_term /* the term of the reference's ties made by begin */        \
    }

/* ---- the models, one file each --------------------------------------------------------- */

/* sim/models.h includes every model's file (its list: SIM_MODELS and the #include beside each
 * line) once this file's shared terms are defined. */
#include "sim/models.h"

#endif
