/* SPDX-License-Identifier: MIT */
/* Device glue of the CUDA backend: the step constants and, generated for every model of
 * sim/models.h, the adapter gpu_model_NAME through which the GPU's thread-per-boid walk
 * (gpu_sim.cu k_forces<M>) calls the model's file (src/sim/rules.h, the rules every backend
 * compiles): begin, near and pair per candidate in the CPU's candidate order, late, finish.
 * No arithmetic of a rule is written here. The
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

/* Every model's adapter for the GPU's thread-per-boid walk (gpu_sim.cu k_forces<M>): the
 * pieces of sim/models/NAME.h (rules.h: "the adapter") as static members, the accumulator as
 * M::acc. One lane, so the pair's variant is 0 (the CPU's variants give the same bits) and
 * a late term is added right after its pair. DIRS: the gather fills sdir with each
 * candidate's unit heading (rule_dir), computed once per boid. */
#define GPU_MODEL(id, M)                                                                           \
    struct gpu_model_##M {                                                                         \
        typedef M##_acc acc;                                                                       \
        static const bool DIRS = M##_USES_DIR != 0, LATE = M##_LATE != 0;                          \
        static __device__ __forceinline__ void begin(acc *a, const gpu_consts *k, vf3 p, vf3 v)    \
        {                                                                                          \
            M##_begin(a, &k->prm, &k->mc, p, v);                                                   \
        }                                                                                          \
        static __device__ __forceinline__ vm near(vf d2, vf reach2)                                \
        {                                                                                          \
            return M##_near(d2, reach2);                                                           \
        }                                                                                          \
        static __device__ __forceinline__ vm pair(acc *a, vm near, vf3 p, vf3 diff, vf d2,         \
                                                  const rule_cand *c, const gpu_consts *k)         \
        {                                                                                          \
            return M##_pair(a, near, p, diff, d2, c, &k->prm, &k->mc, 0);                          \
        }                                                                                          \
        static __device__ __forceinline__ void late(acc *a, vf3 diff, vf d2, const gpu_consts *k)  \
        {                                                                                          \
            M##_late(a, diff, d2, &k->mc);                                                         \
        }                                                                                          \
        static __device__ __forceinline__ void finish(acc *a, const gpu_consts *k,                 \
                                                      const rule_extras *x, vf3 &p, vf3 &v)        \
        {                                                                                          \
            M##_finish(a, &k->prm, &k->mc, 0, x, &p, &v);                                          \
        }                                                                                          \
    };
SIM_MODELS(GPU_MODEL)
#undef GPU_MODEL

#endif
