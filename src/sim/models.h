/* SPDX-License-Identifier: MIT */
/* The model list and the model table: the one list of rule models, and what each one is,
 * read by every part that differs per model. A model is one file, sim/models/NAME.h (its
 * rules and adapter, compiled by every backend through sim/rules.h; its constants; its
 * parameter table with shoal verify's hypotheses as columns; its entry below, compiled in
 * models.c), plus its line in SIM_MODELS. Every backend's walker (forces_kernel.h,
 * gpu_models.h, the reference's ref_kernel.h) and the tests are generated from SIM_MODELS
 * by name, and every dispatch table is indexed by the enum with a size check, so a model
 * missing a piece does not compile; test_models fails when the list, the table, the
 * window's keys, the scene files or docs/MODELS.md miss one (docs/ARCHITECTURE.md, "Where
 * new code goes"). Included by C and by CUDA (gpu_sim.cu, gpu_models.h: C linkage). */
#ifndef SHOAL_SIM_MODELS_H
#define SHOAL_SIM_MODELS_H

#include "shoal/sim.h"
#include "shoal/verify.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every rule model, in enum order: X(enum value, name). Its file sim/models/NAME.h is
 * included at the end of this header (for sim/rules.h). */
#define SIM_MODELS(X)                                                                              \
    X(SHOAL_MODEL_STEER, steer)                                                                    \
    X(SHOAL_MODEL_AVERAGE, average)                                                                \
    X(SHOAL_MODEL_HEADING, heading)                                                                \
    X(SHOAL_MODEL_CLASSIC, classic)                                                                \
    X(SHOAL_MODEL_FOV, fov)

/* The default model (shoal_sim_desc_default; the program and the scripts take it from the
 * library: shoal params --names lists it first). */
#define SIM_MODEL_DEFAULT SHOAL_MODEL_STEER

/* A table indexed by the model enum, t[] = {SIM_MODELS(ENTRY)} with ENTRY(id, name) giving
 * [id] = ...: this checks that the list names every model once and the table has an entry
 * for each (a model missing from the list or a piece missing from the table fails here). */
#define SIM_MODEL_ONE_(id, name) +1
#if defined(__cplusplus)
#define SIM_STATIC_ASSERT_ static_assert
#else
#define SIM_STATIC_ASSERT_ _Static_assert
#endif
#define SIM_MODEL_TABLE_CHECK(t)                                                                   \
    SIM_STATIC_ASSERT_(0 SIM_MODELS(SIM_MODEL_ONE_) == SHOAL_MODEL_COUNT &&                        \
                           sizeof(t) / sizeof((t)[0]) == SHOAL_MODEL_COUNT,                        \
                       "SIM_MODELS (sim/models.h) lists every shoal_model once, " #t " has each")

/* How a wrong value of a parameter would show in another program's step: shoal verify's
 * hypothesis of it (src/verify), a column of the model's parameter table. */
typedef enum sim_hyp_kind {
    SIM_HYP_NONE = 0, /* no hypothesis of this parameter */
    SIM_HYP_WEIGHT,   /* its term's weight: fitted as a continuous value, 0 leaves the term out */
    SIM_HYP_FACTOR,   /* another factor of its term (a speed, a limit): fitted as a value */
    SIM_HYP_RADIUS,   /* a radius: a threshold on the squared distance, the constant k[k2]
                       * (and k[k1] the radius itself where the rules use it, else k1 = -1) */
    SIM_HYP_DIST2,    /* a squared distance, compared as it is */
    SIM_HYP_COS,      /* a view cone's half-angle: a threshold on its cosine, the constant k[k2];
                       * its neighbours are those within its term's DIST2 parameter */
    SIM_HYP_OFF,      /* with the other OFF rows of its term, set to k2 * 1e300: the term off */
    SIM_HYP_FLEE,     /* the flee radius (a threshold on the predators' squared distances) */
} sim_hyp_kind;

/* the most rows a model's parameter table may have (checked in models.c) */
#define SIM_MODEL_MAX_PARAMS 64

typedef struct sim_hyp {
    shoal_term term;  /* the term it belongs to (SHOAL_TERM_NONE with SIM_HYP_NONE) */
    signed char kind; /* sim_hyp_kind */
    signed char k2, k1;
    signed char strict; /* the contract compares it strictly (<; cos >) */
} sim_hyp;

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
    /* its constants (model_consts.k, target_count), from the parameters alone
     * (sim_model_consts): NAME_consts of its file */
    void (*consts)(const shoal_params *p, struct model_consts *mc);
    /* the largest squared radius its candidate tests compare (model_consts.reach2: the box
     * filter's and the reference's bound), from its constants: NAME_reach2 */
    float (*reach2)(const shoal_params *p, const struct model_consts *mc);
    /* shoal verify's hypotheses: hyps[i] is the column of info.params[i] */
    const sim_hyp *hyps;
    /* rules across parameters beyond each one's range (shoal_params_validate), or NULL */
    shoal_status (*check)(const shoal_params *p, shoal_error *err);
    /* shoal_params_scale_geometry: the offsets of its lengths (times the factor) and of its
     * areas (times the factor squared), each list ended by 0 (the offset of sep_radius,
     * never a length of the geometry) */
    size_t lengths[8], areas[2];
} sim_model;

/* The entry of `model`, or NULL for a value outside the enum. */
const sim_model *sim_model_of(shoal_model model);

/* The step constants that follow from the parameters alone (dt, the model's own through its
 * entry, its largest squared radius, the flee radius): what sim.c and the GPU backend fill
 * before adding the time's targets and the predators. */
void sim_model_consts(shoal_model model, const shoal_params *p, double dt_s,
                      struct model_consts *mc);

/* The index of the step that starts at simulated time t_s: round(t / dt) (0 for a negative t),
 * the same for the same simulated time however a run is split over calls or files: what a
 * model's counter-based noise is keyed by (model_consts.step), on every backend. */
uint64_t sim_step_index(double t_s, double dt_s);

/* How many targets the model draws each step (its constants' target_count: heading's), 0 for
 * a model without targets. */
int sim_model_target_count(shoal_model model, const shoal_params *p);

#ifdef __cplusplus
}
#endif

#endif

/* The model files, one per model of SIM_MODELS (steer and average share one): their rules and
 * adapters for the backends, compiled where sim/rules.h is (which includes this file after its
 * shared terms; each file is included once), their tables where SIM_MODEL_TABLE is defined
 * (models.c). A model is its line in SIM_MODELS above and its #include here. */
#if defined(SHOAL_SIM_RULES_H) && !defined(SHOAL_SIM_MODEL_FILES)
#define SHOAL_SIM_MODEL_FILES
#include "sim/models/steer_average.h" /* steer, average */
#include "sim/models/heading.h"
#include "sim/models/classic.h"
#include "sim/models/fov.h"
#endif
