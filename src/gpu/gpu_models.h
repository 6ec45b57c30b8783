/* SPDX-License-Identifier: MIT */
/* Device glue of the CUDA backend: the step constants and one adapter per model that feeds
 * src/sim/rules.h -- the rules both backends compile -- from the GPU's thread-per-boid walk
 * (gpu_sim.cu k_forces): begin(p, v), pair(p, candidate) in the CPU's candidate order,
 * finish(p, v, extras), one gpu_model_NAME for every model of sim/models.h (gpu_sim.cu
 * launches k_forces<gpu_model_NAME> from that list). No arithmetic of a rule is written here. The
 * constants are a kernel parameter of every launch, so each simulation's kernels read its own: two
 * simulations of one process stepped in turn, or from two threads, never see each other's
 * (a __constant__ block is one per process, whatever object uploaded it last).
 * Included only by gpu_sim.cu. Exactness: rules.h under nvcc uses __fdiv_rn / __fsqrt_rn,
 * and meson builds with -fmad=false -prec-div=true -prec-sqrt=true -ftz=false. */
#ifndef SHOAL_GPU_MODELS_H
#define SHOAL_GPU_MODELS_H

#include <stdint.h>

#include "sim/models.h"
#include "sim/rules.h"

/* Everything a step's kernels read that is the same for every boid. Passed by value to
 * every kernel as a `const __grid_constant__` parameter (gpu_sim.cu): it lives in the
 * launch's parameter bank, a constant bank like __constant__ memory (all threads of a warp
 * read the same word: a broadcast; the same registers, no spills: ptxas -v), and the
 * kernels take its address without a copy. 5.3 KB: parameters past 4 KB need CUDA 12.1 and
 * Volta or later (sm_70+), which the build's sm_90 and compute_80 targets are. */
struct gpu_consts {
    shoal_params prm;
    model_consts mc; /* sim.c prepare_consts' values; the predators are in device memory */
    float origin[3];
    float inv_cell;
    int32_t dims[3];
    float max_r2; /* steer, average: the largest squared radius */
    float max2;   /* fov: the largest squared threshold */
    int field_on; /* an obstacle field: fld.vec is device memory */
    field fld;
    float pred_turn; /* predators: rule_predator_turn */
};

/* Predator state on the device: positions (read by the flee term of the next step), the
 * velocities, and each predator's nearest boid this step as (d^2 bits << 32 | input row). */
struct gpu_predators {
    float p[SHOAL_MAX_PREDATORS][3];
    float v[SHOAL_MAX_PREDATORS][3];
    unsigned long long key[SHOAL_MAX_PREDATORS];
    double centre[3];
};

/* steer (AVERAGE = false) and average (true): rules.h rule_sa_*. Separate alignment and
 * cohesion masks always (shared_mask 0: the same sums as the CPU's shared variant); the
 * shared variant made ptxas spill in the steer kernel. */
template <bool AVERAGE> struct model_steer_average {
    static const bool DIRS = false; /* no per-candidate direction (heading's dir_j) */
    const gpu_consts *__restrict__ k;
    rule_sa a;
    __device__ __forceinline__ explicit model_steer_average(const gpu_consts *kk) : k(kk) {}
    __device__ __forceinline__ void begin(vf3, vf3) { rule_sa_begin(&a); }
    __device__ __forceinline__ void pair(vf3 p, float4 pj, float4 vj, float4)
    {
        vm m_sep = rule_sa_pair(&a, p, pj.x, pj.y, pj.z, vj.x, vj.y, vj.z, &k->mc, k->max_r2,
                                AVERAGE, 0, 1);
        if (!AVERAGE && m_sep) /* the CPU adds these after its loop, in the same order */
            rule_steer_sep(&a, p, pj.x, pj.y, pj.z, k->mc.sep_r2);
    }
    __device__ __forceinline__ void finish(vf3 &p, vf3 &v, const rule_extras *x)
    {
        rule_sa_end(&a, 0);
        rule_sa_finish(&a, &k->prm, &k->mc, AVERAGE, x, &p, &v);
    }
};

typedef model_steer_average<false> gpu_model_steer;
typedef model_steer_average<true> gpu_model_average;

/* heading: rules.h rule_heading_*. dir_j (rule_heading_dir) is a property of the candidate:
 * the gather computed it once per boid into sdir. */
struct gpu_model_heading {
    static const bool DIRS = true; /* the gather fills sdir with dir_j */
    const gpu_consts *__restrict__ k;
    rule_hd a;
    __device__ __forceinline__ explicit gpu_model_heading(const gpu_consts *kk) : k(kk) {}
    __device__ __forceinline__ void begin(vf3, vf3) { rule_heading_begin(&a); }
    __device__ __forceinline__ void pair(vf3 p, float4 pj, float4, float4 dj)
    {
        vf3 diff;
        vf d2;
        vm m = rule_heading_test(p, pj.x, pj.y, pj.z, &k->mc, &diff, &d2);
        if (!m)
            return;
        const float dir[3] = {dj.x, dj.y, dj.z};
        rule_heading_add(&a, m, diff, d2, pj.x, pj.y, pj.z, dir, &k->mc);
    }
    __device__ __forceinline__ void finish(vf3 &p, vf3 &v, const rule_extras *x)
    {
        rule_heading_finish(&a, &k->prm, &k->mc, x, &p, &v);
    }
};

/* classic: rules.h rule_classic_*. The virtual wall boids come first (begin). */
struct gpu_model_classic {
    static const bool DIRS = false;
    const gpu_consts *__restrict__ k;
    rule_cl a;
    __device__ __forceinline__ explicit gpu_model_classic(const gpu_consts *kk) : k(kk) {}
    __device__ __forceinline__ void begin(vf3 p, vf3) { rule_classic_begin(&a, &k->prm, p); }
    __device__ __forceinline__ void pair(vf3 p, float4 pj, float4 vj, float4)
    {
        rule_classic_pair(&a, p, pj.x, pj.y, pj.z, vj.x, vj.y, vj.z, &k->prm, &k->mc);
    }
    __device__ __forceinline__ void finish(vf3 &p, vf3 &v, const rule_extras *x)
    {
        rule_classic_finish(&a, &k->prm, &k->mc, x, &p, &v);
    }
};

/* fov: rules.h rule_fov_* */
struct gpu_model_fov {
    static const bool DIRS = false;
    const gpu_consts *__restrict__ k;
    rule_fv a;
    __device__ __forceinline__ explicit gpu_model_fov(const gpu_consts *kk) : k(kk) {}
    __device__ __forceinline__ void begin(vf3, vf3 v) { rule_fov_begin(&a, v); }
    __device__ __forceinline__ void pair(vf3 p, float4 pj, float4 vj, float4)
    {
        rule_fov_pair(&a, p, pj.x, pj.y, pj.z, vj.x, vj.y, vj.z, &k->prm, &k->mc, k->max2);
    }
    __device__ __forceinline__ void finish(vf3 &p, vf3 &v, const rule_extras *x)
    {
        rule_fov_finish(&a, &k->prm, &k->mc, x, &p, &v);
    }
};

#endif
