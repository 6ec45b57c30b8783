/* SPDX-License-Identifier: MIT */
/* The model table: the one list of rule models and what each one is, read by every part
 * that differs per model. A model is its section of rules.h (the per-pair and per-boid
 * math, compiled by both backends) plus one entry here (models.c): its parameters, where
 * it starts its boids, the box it keeps them in, its per-step constants and its radius.
 * The CPU kernel (forces_kernel.h: group_NAME), the GPU adapter (gpu_models.h:
 * gpu_model_NAME) and the tests build their per-model code from SIM_MODELS by name, so a
 * model missing there does not compile; test_models fails when the list, the table, the
 * window's keys, the scene files or docs/MODELS.md miss one (docs/ARCHITECTURE.md, "Where
 * things go"). Included by C and by CUDA (gpu_sim.cu, gpu_models.h: C linkage). */
#ifndef SHOAL_SIM_MODELS_H
#define SHOAL_SIM_MODELS_H

#include "shoal/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every rule model, in enum order: X(enum value, name). */
#define SIM_MODELS(X)                                                                              \
    X(SHOAL_MODEL_STEER, steer)                                                                    \
    X(SHOAL_MODEL_AVERAGE, average)                                                                \
    X(SHOAL_MODEL_HEADING, heading)                                                                \
    X(SHOAL_MODEL_CLASSIC, classic)                                                                \
    X(SHOAL_MODEL_FOV, fov)

struct model_consts;
struct rng;

/* One model's entry. `info` is what the public API shows (shoal_model_get_info); the
 * functions are the model's own answers, called by the parts that used to switch on the
 * model. */
typedef struct sim_model {
    shoal_model_info info;
    /* the largest interaction radius: the grid's cell size (shoal_params_interaction_radius) */
    float (*radius)(const shoal_params *p);
    /* the box it keeps its boids in, which the grid covers (grid_setup) */
    void (*bounds)(const shoal_params *p, float lo[3], float hi[3]);
    /* boid i's initial row (px py pz vx vy vz) from its stream (seed, i) (init.c) */
    void (*start)(const shoal_params *p, struct rng *r, float row[6]);
    /* shoal_sim_desc_for: the default school's start where it differs from the seed's
     * (parameters from shoal_params_default in, the start shoal init, shoal run and Python
     * use out), or NULL: the seed's start is the default school's */
    void (*school)(shoal_params *p);
    /* its fields of the step constants, from the parameters alone (sim_model_consts) */
    void (*consts)(const shoal_params *p, struct model_consts *mc);
    /* rules across parameters beyond each one's range (shoal_params_validate), or NULL */
    shoal_status (*check)(const shoal_params *p, shoal_error *err);
    /* shoal_params_scale_geometry: the offsets of its lengths (times the factor) and of its
     * areas (times the factor squared), each list ended by 0 (the offset of sep_radius,
     * never a length of the geometry) */
    size_t lengths[8], areas[2];
} sim_model;

/* The entry of `model`, or NULL for a value outside the enum. */
const sim_model *sim_model_of(shoal_model model);

/* The step constants that follow from the parameters alone (dt, squared radii, the model's
 * own through its entry, the flee radius): what sim.c and the GPU backend fill before
 * adding the time's targets and the predators. */
void sim_model_consts(shoal_model model, const shoal_params *p, double dt_s,
                      struct model_consts *mc);

#ifdef __cplusplus
}
#endif

#endif
