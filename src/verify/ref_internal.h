/* SPDX-License-Identifier: MIT */
/* The float64 reference's private types, shared by ref64.c (the double instantiation of the
 * rules), ref_grid.c (its grid), sim64.c (the shoal_sim64 object), ref_bound.c (the rules with
 * a rounding bound) and verify.c / verify_fit.c: the double twins of the parameters, the per-step
 * constants and the obstacle field that sim/rules.h reads (its RULE_PARAMS, RULE_CONSTS,
 * RULE_FIELD), the reference's grid, and the per-boid entry points. Not installed. */
#ifndef SHOAL_SIM_SIM64_INTERNAL_H
#define SHOAL_SIM_SIM64_INTERNAL_H

#include "shoal/sim.h"
#include "shoal/sim64.h"
#include "shoal/verify.h"
#include "sim/sim_internal.h"

#include <stddef.h>
#include <stdint.h>

/* shoal_params with every float a double, field for field (params64_from converts; the
 * static assertions in ref64.c keep the two layouts in step). */
typedef struct sphere64 {
    double center[3];
    double radius;
} sphere64;

typedef struct params64 {
    double sep_radius, ali_radius, coh_radius;
    double sep_weight, ali_weight, coh_weight;
    double max_speed, max_steer;
    double wall_weight;
    double wall_center[3], wall_size[3];
    double neighbor_radius, target_weight, rotate_speed, move_speed, target_period;
    double bounds_center[3], bounds_size[3];
    double target_count;
    double fov, min_speed, w1, w2, w3, sep_strength;
    double box_min[3], box_max[3];
    double coh_dist2, sep_dist2, ali_dist2;
    double coh_angle, sep_angle, ali_angle;
    double coh_force, sep_force, ali_force, max_force;
    double boundary_force, boundary_range2, boundary_center[3];
    double avoid_force;
    double sphere_count;
    sphere64 spheres[SHOAL_MAX_SPHERES];
    double field_cell, field_margin;
    double predator_count;
    double predator_speed, predator_turn, predator_chase;
    double flee_radius, flee_weight;
    double predator_start[3], predator_spread;
    double init_pos_radius, init_vel_radius;
} params64;

/* Every parameter, exactly (a float is a double). */
void params64_from(const shoal_params *p, params64 *out);
/* The double of the parameter `info` names (shoal_params_list's offset), and a pointer to it. */
double *params64_field(params64 *p, const shoal_param_info *info);

/* model_consts in double: the same field list (sim_internal.h MODEL_CONSTS_FIELDS), prepared
 * by consts64_prepare. */
typedef struct model_consts64 {
    MODEL_CONSTS_FIELDS(double)
} model_consts64;

/* The obstacle field in double (built by field_build64 from the same meshes, by the same
 * template as field.c's: sim/field_build.h). */
typedef struct field64 {
    double origin[3];
    double cell, inv_unused;
    int32_t dims[3];
    double hi[3];
    double *vec;
    uint64_t builds;
} field64;

shoal_status field_build64(field64 *f, const obstacle *obs, size_t obstacle_count, double cell,
                           double margin, shoal_error *err);
void field_free64(field64 *f);

/* The targets of time t in double (rules.h rule_targets: the same draws as sim_targets, lo +
 * (hi - lo) * u evaluated in double), target_count of them. */
void sim64_targets(const params64 *p, int target_count, uint64_t seed, double t_s, double *xyz);

/* Everything a boid's step reads besides the boids: the rules' inputs. */
typedef struct ref_env {
    shoal_model model;
    params64 prm;
    model_consts64 mc;
    const field64 *fld; /* NULL or vec NULL: no obstacle field */
    /* shoal_verify_set_cancel's flag (NULL: none): a school step stops early while it is set
     * (its results then unused) */
    const volatile int *cancel;
} ref_env;

/* The step constants: the model's own (NAME_consts in double), its largest squared radius,
 * dt, the targets of time t where the model draws them (pinned ones from `pinned`/`pin`, may
 * be NULL), the predators (count, positions) the flee term reads. */
void consts64_prepare(ref_env *env, shoal_model model, double dt, double t_s, uint64_t seed,
                      const uint8_t *pinned, const double (*pin)[3], int predator_count,
                      const double (*pred_p)[3]);

/* The largest squared radius again (NAME_reach2 in double), after a hypothesis of verify.c
 * changed the constants or the parameters it follows from. */
void ref_env_refresh(ref_env *env);

/* The interaction radius the rules of `env` need a grid to cover: sqrt(mc.reach2). */
double ref_env_radius(const ref_env *env);

/* A uniform grid over double positions, cell >= the interaction radius (grown when the
 * school is so spread out that the cells would outnumber 8 N + 64), boids in cell-major,
 * input-row-minor order. brute: one cell. */
typedef struct ref_grid {
    double origin[3], cell;
    int32_t dims[3];
    size_t cell_count, count;
    uint32_t *cell_start; /* cell_count + 1 */
    uint32_t *row_of;     /* slot -> input row */
    uint32_t *slot_of;    /* input row -> slot */
    double *x[6];         /* the boids in slot order: px py pz vx vy vz */
    size_t cap_cells, cap_count;
} ref_grid;

shoal_status ref_grid_build(ref_grid *g, const double *rows, size_t count, double radius, int brute,
                            shoal_error *err);
void ref_grid_free(ref_grid *g);
/* The candidate runs of the boid at p: up to 9 slot ranges [b, e) (z outer, y inner, the x
 * run of 3 cells), in the candidate order. Returns how many. */
int ref_grid_runs(const ref_grid *g, const double p[3], uint32_t rb[9], uint32_t re[9]);

/* Candidates as six arrays and slot runs into them. */
typedef struct ref_cands {
    const double *x[6];
    const uint32_t *rb, *re;
    int runs;
} ref_cands;

/* One boid's step in double (verify/ref_kernel.h instantiated in ref64.c): in = its row at the
 * start of the step, out = its row after; row = its input row (its noise's key). */
void ref64_boid(const ref_env *env, const ref_cands *c, uint32_t row, const double in[6],
                double out[6]);

/* One boid's step with a first-order bound on the float32 rounding of every operation of its
 * path (ref_bound.c, verify/real_bound.h): value (bit for bit ref64_boid's), err (the bound, in
 * units of BOUND_RHO: the error of a float32 program that follows the rules is at most
 * BOUND_RHO * err per component) and tie (how far the result may move because a comparison
 * sits within that rounding of its threshold). tie_row: the candidate (as its index into the
 * candidate arrays) whose comparison made the largest tie, or -1; tie_term: its term
 * (shoal_term). */
#define BOUND_UNITS 10.0
#define BOUND_RHO (BOUND_UNITS * 0x1p-24)
typedef struct refb_out {
    double value[6], err[6], tie[6];
    int64_t tie_cand;
    int tie_term;
} refb_out;
void refb_boid(const ref_env *env, const ref_cands *c, uint32_t row, const double in[6],
               refb_out *out);

/* A whole school's step over a grid, in parallel over boids (each boid's sum in the grid's
 * candidate order, so the bits do not depend on threads). rows: input order; out: input
 * order. With `bound` the rounding bound of every boid too (outb may be NULL otherwise). */
void ref_school_step(const ref_env *env, const ref_grid *g, const double *rows, double *out,
                     refb_out *outb, int thread_count);

/* Predators in double (predators.c's rules): the target of each predator from the boids
 * (rows, input order; nearest boid with the lowest row on ties, or their mean), then the move
 * of one step. */
void predators64_step(const params64 *p, int count, double (*pos)[3], double (*vel)[3],
                      const double *rows, size_t n, double dt);
void predators64_reset(const params64 *p, int count, double (*pos)[3], double (*vel)[3]);

#endif
