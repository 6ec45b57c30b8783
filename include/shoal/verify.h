/* SPDX-License-Identifier: MIT */
/* shoal: checking another program's simulation against the rules, one step at a time
 * (docs/VERIFY.md). Given that program's state at step k and at step k+1, a shoal_verify runs
 * one reference step from its state k (shoal's float32 step, or the float64 reference of
 * shoal/sim64.h) and compares with its state k+1, boid by boid, against a tolerance derived
 * from the rules themselves: a first-order bound on the float32 rounding of every operation on
 * the boid's path (src/verify/real_bound.h), and how far a comparison sitting within that
 * rounding of its threshold may move the boid (a threshold tie). Where boids are beyond it,
 * the worst ones are diagnosed: each model's terms are re-evaluated with one parameter changed
 * (a weight, a radius, a threshold's strictness, a term left out, dt), and the change that
 * explains them names the term that differs.
 *
 * Not thread-safe on one object; two objects share nothing. The verdicts do not depend on the
 * thread count. */
#ifndef SHOAL_VERIFY_H
#define SHOAL_VERIFY_H

#include "shoal/sim.h"
#include "shoal/traj.h"

#include <stdio.h>

/** Which step the other program's state k+1 is compared with. */
typedef enum shoal_verify_reference {
    SHOAL_VERIFY_F32 = 0, /**< shoal's float32 step (shoal_sim): two float32 programs */
    SHOAL_VERIFY_F64 = 1  /**< the float64 reference: the other program's own float32 drift */
} shoal_verify_reference;

/** A step's verdict. */
typedef enum shoal_verdict {
    SHOAL_VERDICT_AGREES = 0, /**< every boid within the float32 rounding bound */
    SHOAL_VERDICT_DRIFT,      /**< boids beyond it, by no more than the same bound at half
                                   precision (2^-11), and no single rule change explains them */
    SHOAL_VERDICT_TIE,        /**< boids beyond it only where a threshold tie explains them */
    SHOAL_VERDICT_RULE,       /**< a rule differs: see term and param */
    SHOAL_VERDICT_COUNT
} shoal_verdict;

/** The terms a step is made of. heading's and classic's single radius serves separation,
 *  alignment and cohesion at once: "neighbours". */
typedef enum shoal_term {
    SHOAL_TERM_NONE = 0,
    SHOAL_TERM_SEPARATION,
    SHOAL_TERM_ALIGNMENT,
    SHOAL_TERM_COHESION,
    SHOAL_TERM_WALLS, /**< steer/average walls, classic's wall boids, fov's boundary sphere */
    SHOAL_TERM_TARGETS,
    SHOAL_TERM_OBSTACLES,   /**< spheres and the obstacle field */
    SHOAL_TERM_PREDATORS,   /**< the flee term */
    SHOAL_TERM_INTEGRATION, /**< speed limits, turn rate, dt */
    SHOAL_TERM_NEIGHBORS,
    SHOAL_TERM_COUNT
} shoal_term;

/** "agrees", "drift", "threshold tie", "rule differs"; NULL out of range. */
SHOAL_API const char *shoal_verdict_name(shoal_verdict v);
/** "separation", "alignment", ...; "" for SHOAL_TERM_NONE, NULL out of range. */
SHOAL_API const char *shoal_term_name(shoal_term t);

#define SHOAL_VERIFY_MAX_WORST 32

typedef struct shoal_verify_desc {
    /** model, params, boid_count, dt_s, t0_s (the time of the first state verified), seed
     *  (heading's targets), thread_count, neighbors (of the float32 reference) */
    shoal_sim_desc sim;
    shoal_verify_reference reference;
    /** the worst boids diagnosed and reported per step: 1..SHOAL_VERIFY_MAX_WORST (8) */
    int worst_count;
} shoal_verify_desc;

/** Defaults: shoal_sim_desc_default(), the float32 reference, 8 worst boids. */
SHOAL_API shoal_verify_desc shoal_verify_desc_default(void);

/** One of the worst boids of a step. Errors are Euclidean norms over x, y, z. */
typedef struct shoal_verify_boid {
    uint32_t row;            /**< its row in the states given */
    double pos_err, vel_err; /**< |p - p_ref|, |v - v_ref| at step k+1 */
    double pos_tol, vel_tol; /**< the float32 rounding bound */
    double pos_tie, vel_tie; /**< what a threshold tie may add to it */
    double ratio;            /**< max(err / tol) over position and velocity */
    int64_t tie_row;         /**< the neighbour (row) within rounding of a threshold, or -1 */
    shoal_term tie_term;     /**< the term of that threshold (NONE: no tie) */
    shoal_term explained_by; /**< the step's hypothesis explains this boid: its term */
    double residual[3];      /**< v - v_ref */
    double term_dv[SHOAL_TERM_COUNT][3]; /**< how much each term moves v in the reference step
                                              (v_ref - v_ref without the term; 0: none) */
} shoal_verify_boid;

/** A step's report (steps counted from the first state given, from 0). */
typedef struct shoal_verify_report {
    uint64_t step; /**< k: the pair (k, k+1) */
    double t;      /**< the simulated time of state k */
    size_t count;
    double pos_max, pos_median, vel_max, vel_median; /**< errors over the boids */
    double ratio_max, ratio_median;                  /**< error / tolerance */
    size_t beyond;                                   /**< boids beyond tolerance + tie */
    size_t ties;         /**< boids beyond the tolerance that a threshold tie explains */
    size_t unverifiable; /**< boids whose bound is infinite (a direction of a ~0 vector) */
    shoal_verdict verdict;
    shoal_term term;       /**< RULE: the term that differs (NONE: no single change explains) */
    char param[32];        /**< RULE: the parameter whose change explains it, "" if none */
    double contract_value; /**< that parameter in the contract (radii: the radius) */
    double fitted_lo, fitted_hi; /**< the values that explain the other program */
    int strictness;              /**< 1: it excludes neighbours exactly on the threshold where the
                                      contract includes them; -1 the other way; 0 neither */
    size_t diagnosed, explained; /**< worst boids examined; how many the change explains */
    size_t beyond_after; /**< boids beyond tolerance with the change applied to all (or SIZE_MAX) */
    char detail[320];    /**< one line for people: what was found */
    int worst_count;
    shoal_verify_boid worst[SHOAL_VERIFY_MAX_WORST];
} shoal_verify_report;

typedef struct shoal_verify shoal_verify;

SHOAL_API shoal_status shoal_verify_create(const shoal_verify_desc *desc, shoal_verify **out,
                                           shoal_error *err);
SHOAL_API void shoal_verify_destroy(shoal_verify *v);
/** The obstacle meshes of a float32 simulation (a scene's, loaded into it), for both
 *  references. */
SHOAL_API shoal_status shoal_verify_copy_obstacles(shoal_verify *v, const shoal_sim *from,
                                                   shoal_error *err);

/** heading: the other program's targets from the next step on (count points, xyz each, at
 *  most params.target_count; the rest keep shoal's seeded schedule). count 0: shoal's
 *  schedule for all. SHOAL_ERR_INPUT for another model, too many or non-finite points. */
SHOAL_API shoal_status shoal_verify_set_targets(shoal_verify *v, const double *xyz, size_t count,
                                                shoal_error *err);

/** Verify one step: `state` is the other program's state k, `next` its state k+1, both
 *  boid_count rows of (px py pz vx vy vz) in the same row order (map ids first). Values in
 *  double (a float32 state is exact in it; the float32 reference needs float32 values:
 *  SHOAL_ERR_INPUT otherwise, naming the row). Steps are taken in order: the k-th call is step
 *  k (time t0 + k dt; the predators move with the reference). SHOAL_ERR_INPUT for a non-finite
 *  value; SHOAL_ERR_NONFINITE when the reference step itself overflows. The predators (the
 *  other program's files do not carry them) start where params put them and move by the
 *  float32 rules from each state given, for both references. */
SHOAL_API shoal_status shoal_verify_step(shoal_verify *v, const double *state, const double *next,
                                         shoal_verify_report *report, shoal_error *err);

/** A cancel flag for long steps (NULL: none): while *flag is nonzero, shoal_verify_step stops
 *  within a fraction of a second (its workers skip their remaining boids) and returns
 *  SHOAL_ERR_CANCELLED, the verifier left at the step it was on (that step may be verified
 *  again). Set the flag from a signal handler or another thread (the Python package raises
 *  it on Ctrl-C); clear it before the next step. The flag is borrowed: it must outlive its
 *  use. */
SHOAL_API void shoal_verify_set_cancel(shoal_verify *v, const volatile int *flag);

/* ---------------------------------------------------------------------------------------
 * A whole trajectory, and the report as files (src/io/verify_run.c): what shoal verify and
 * shoal.verify both run, so that they give the same verdicts, refusals and JSON.
 * ------------------------------------------------------------------------------------- */

/** How to verify a trajectory. Start from shoal_verify_run_desc_default(). */
typedef struct shoal_verify_run_desc {
    /** The rules (sim: model, params, dt_s, t0_s: the time of the trajectory's state 0, seed,
     *  thread_count, neighbors), the reference and the worst boids reported. boid_count is
     *  the trajectory's. */
    shoal_verify_desc verify;
    /** Its obstacle meshes (a scene's; NULL or none: no obstacle field). Borrowed. */
    const shoal_scene *scene;
    /** The state to start from, and how many consecutive pairs to verify (0: all). */
    size_t first, steps;
    /** heading: the other program's targets, target_frames x target_count points (x y z):
     *  one set for every step (target_frames 1) or one per state (the trajectory's frame
     *  count, or one less: set k for the pair (k, k+1)). NULL: shoal's seeded schedule. */
    const double *targets;
    size_t target_frames, target_count;
    /** Called after each verified pair with its report, its step (the manifest's, else the
     *  index of the first state of the pair) and the ids of the rows (shoal_traj_ids, NULL
     *  for none); a nonzero return stops the run with SHOAL_ERR_CANCELLED. May be NULL. */
    int (*on_step)(void *ctx, const shoal_verify_report *report, int64_t step, const double *ids);
    void *ctx;
    /** A cancel flag (shoal_verify_set_cancel): the run stops within a fraction of a second
     *  of it being raised, SHOAL_ERR_CANCELLED. NULL: none. */
    const volatile int *cancel;
} shoal_verify_run_desc;

/** What a run found: the trajectory's verdict is "rule differs" when any step has one, else
 *  "drift" when any drifts, else "agrees" (a threshold tie is float32 behaving as float32). */
typedef struct shoal_verify_summary {
    shoal_verify_desc desc; /**< what was run: boid_count and t0_s (of the first pair) set */
    size_t steps;           /**< pairs verified */
    size_t counts[SHOAL_VERDICT_COUNT];
    shoal_verdict verdict;
    int64_t first_rule_step;    /**< the first step whose rule differs, -1 when none */
    shoal_term first_rule_term; /**< its term (NONE: no single parameter explains it) */
} shoal_verify_summary;

/** Defaults: shoal_verify_desc_default(), no scene, every pair from state 0, no targets, no
 *  callback, no cancel flag. */
SHOAL_API shoal_verify_run_desc shoal_verify_run_desc_default(void);

/** Verify the trajectory `t` pair by pair: states are read through shoal_traj_read (ids
 *  matched), the window [first, first + steps] must be consecutive steps (a manifest's steps,
 *  or the numbers of numbered files: a gap is refused, not verified as one step), each pair
 *  is verified by shoal_verify_step with time t0 + first * dt (a manifest: its frame's time)
 *  and handed to on_step. Errors: the trajectory's (SHOAL_ERR_INPUT/IO naming the file),
 *  a step's ("A -> B: ..." naming both states), SHOAL_ERR_CANCELLED. `summary` (may be NULL)
 *  is filled on success. */
SHOAL_API shoal_status shoal_verify_run(shoal_traj *t, const shoal_verify_run_desc *desc,
                                        shoal_verify_summary *summary, shoal_error *err);

/** shoal verify --json, written by the library for every front end (docs/VERIFY.md):
 *  _json_head opens the document (shoal's version, the trajectory's name, model, count, dt,
 *  t0, seed, reference, every parameter) and its "steps" list; _json_step writes one step
 *  (`index` 0 for the first: the others are preceded by a comma), its worst boids named by
 *  `ids` (NULL: by row); _json_tail closes the list and writes the summary. Each returns 0,
 *  or -1 when a write failed. Numbers are %.17g (null when not finite). */
SHOAL_API int shoal_verify_write_json_head(FILE *f, const char *trajectory,
                                           const shoal_verify_desc *desc);
SHOAL_API int shoal_verify_write_json_step(FILE *f, const shoal_verify_report *report, int64_t step,
                                           const double *ids, size_t index);
SHOAL_API int shoal_verify_write_json_tail(FILE *f, const shoal_verify_summary *summary);
/** shoal verify --csv: the header line, then a row per step. */
SHOAL_API int shoal_verify_write_csv_head(FILE *f);
SHOAL_API int shoal_verify_write_csv_row(FILE *f, const shoal_verify_report *report, int64_t step);

/* ---------------------------------------------------------------------------------------
 * Outside noise (shoal verify --noise outside, docs/VERIFY.md "Outside noise"): a program
 * whose noise is not shoal's Philox draws (NumPy, curand, Agents.jl) checked on what does not
 * depend on the draws (speed, integration, couzin's turn limit, against the float64 reference
 * run with the noise 0), on the noise's support, and on its distribution (a probability
 * integral transform per boid, pooled over boids and steps, Kolmogorov-Smirnov against
 * uniform). Models with a noise parameter: vicsek, couzin.
 * ------------------------------------------------------------------------------------- */

/** The p-value under which the noise's distribution differs (documented in VERIFY.md). */
#define SHOAL_NOISE_P_MIN 1e-4

typedef enum shoal_noise_part {
    SHOAL_NOISE_OK = 0,
    SHOAL_NOISE_SPEED,       /**< the speed is not the rule's */
    SHOAL_NOISE_INTEGRATION, /**< the position does not follow the observed velocity */
    SHOAL_NOISE_TURN_LIMIT,  /**< couzin: a heading turned by more than turn_rate dt */
    SHOAL_NOISE_SUPPORT,     /**< vicsek: a turn outside [-eta/2, eta/2] */
    SHOAL_NOISE_DISTRIBUTION /**< the pooled PIT is not uniform (p < SHOAL_NOISE_P_MIN) */
} shoal_noise_part;

typedef struct shoal_noise_result {
    size_t steps, samples; /**< pairs checked; PIT values pooled */
    size_t beyond;         /**< boid-steps failing the part named (first failing part) */
    shoal_noise_part part; /**< OK, or the first part that differs (in the order above) */
    uint64_t worst_step;   /**< the worst boid of that part: its step and row */
    uint32_t worst_row;
    double worst_value, worst_limit; /**< its figure and the limit it passed */
    double ks_d, ks_p;               /**< Kolmogorov-Smirnov statistic and p-value */
    double chi2, chi2_p;             /**< chi-square over 20 equal bins (19 dof) */
    double resid_mean, resid_sd;     /**< the observed residual angle (rad): vicsek 2D the
                                          signed turn, 3D the tilt; couzin the turn before the
                                          limit's clamp where not limited */
    double expect_mean, expect_sd;   /**< the same under the declared noise (unlimited boids) */
    size_t limited;                  /**< couzin: boid-steps at the turn limit (randomised PIT) */
    char detail[320];                /**< one line for people */
} shoal_noise_result;

typedef struct shoal_noise_check shoal_noise_check;

/** SHOAL_ERR_INPUT (one line) for a model without a noise parameter. */
SHOAL_API shoal_status shoal_noise_check_create(const shoal_sim_desc *sim, shoal_noise_check **out,
                                                shoal_error *err);
SHOAL_API void shoal_noise_check_destroy(shoal_noise_check *c);
/** One pair of states (boid_count rows of px py pz vx vy vz each), in order. */
SHOAL_API shoal_status shoal_noise_check_step(shoal_noise_check *c, const double *state,
                                              const double *next, shoal_error *err);
/** The verdict over the steps so far. */
SHOAL_API void shoal_noise_check_result(shoal_noise_check *c, shoal_noise_result *out);
/** "ok", "speed", "integration", "turn limit", "support", "distribution". */
SHOAL_API const char *shoal_noise_part_name(shoal_noise_part p);

#endif
