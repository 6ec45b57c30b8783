/* SPDX-License-Identifier: MIT */
/* shoal_verify's private parts (src/verify, docs/VERIFY.md), shared by verify.c (the object
 * and its step: the bound, the errors, the worst boids, the verdict) and verify_fit.c (the
 * hypotheses: families built from the model's table, fitted on the worst boids' own
 * neighbours, the ties the bound cannot size). Not installed. */
#ifndef SHOAL_VERIFY_INTERNAL_H
#define SHOAL_VERIFY_INTERNAL_H

#include "shoal/verify.h"
#include "sim/models.h"
#include "verify/ref_internal.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* errors up to the bound taken at half precision (unit roundoff 2^-11) are drift */
#define DRIFT_RATIO (0x1p-11 / BOUND_RHO)

/* ---- hypotheses: one parameter changed ----------------------------------------------- */

typedef enum hyp_kind {
    HK_WEIGHT, /* a parameter, fitted as a continuous value (0: the term left out) */
    HK_DT,     /* the step length */
    HK_R2,     /* a radius, as its square in the constants */
    HK_DIST2,  /* a squared distance parameter */
    HK_COS,    /* a view cone, as its cosine in the constants */
    HK_OFF     /* a term's OFF parameters out of reach (classic: no wall boids) */
} hyp_kind;

enum { NEED_NONE, NEED_OBSTACLES, NEED_PREDATORS };

/* A family of hypotheses: one parameter of the model's table (its sim_hyp column,
 * sim/models/NAME.h), a term's OFF parameters together, or dt. */
typedef struct hyp_family {
    shoal_term term;
    const char *param; /* the parameter's name ("dt"; OFF: the term's name) */
    hyp_kind kind;
    const shoal_param_info *info; /* the parameter's row (NULL: dt, OFF) */
    int k2, k1;                   /* HK_R2: the constants of the square and the radius (-1: none);
                                   * HK_COS: of the cosine */
    int flee;                     /* HK_R2: the flee radius (the predators' distances) */
    int term_weight;              /* HK_WEIGHT: the term's own weight (0 leaves it out) */
    int strict;                   /* the contract's threshold is strict (<; cos >) */
    int need;
} hyp_family;

/* at most every parameter, and dt */
#define FAMILY_MAX (SIM_MODEL_MAX_PARAMS + 1)

/* a diagnosed boid: its neighbourhood (wide enough for a radius twice the contract's) */
typedef struct diag_boid {
    uint32_t row;
    double in[6], next[6];
    double tol_p, tol_v, tie_p, tie_v, err0; /* err0: its error under the contract */
    size_t cand_count;
    double *x[6];
    uint32_t rb[1], re[1];
} diag_boid;

struct shoal_verify {
    shoal_verify_desc desc;
    size_t n;
    shoal_sim *f32; /* the float32 reference; also holds the obstacle meshes */
    params64 prm;
    field64 fld;
    int pred_count;
    double pred_p[SHOAL_MAX_PREDATORS][3], pred_v[SHOAL_MAX_PREDATORS][3];
    uint8_t pinned[SHOAL_MAX_TARGETS];
    double pin[SHOAL_MAX_TARGETS][3];
    uint64_t k;
    ref_grid grid, grid_h;
    float *rows32;
    double *ref, *alt;
    refb_out *b;
    double *ratio, *scratch;
    uint32_t *order;
    diag_boid diag[SHOAL_VERIFY_MAX_WORST];
    const volatile int *cancel; /* shoal_verify_set_cancel */
    hyp_family fam[FAMILY_MAX]; /* the model's hypotheses (families_build) */
    size_t fam_count;
};

/* ---- errors ---- */

static inline double norm3(double x, double y, double z) { return sqrt((x * x + y * y) + z * z); }

static inline double ratio_of(double err, double tol)
{
    if (err == 0)
        return 0;
    return tol > 0 ? err / tol : INFINITY;
}

/* errors of a result `r` (6 values) against the other program's next row */
static inline void errors6(const double *r, const double *next, double *ep, double *ev)
{
    *ep = norm3(r[0] - next[0], r[1] - next[1], r[2] - next[2]);
    *ev = norm3(r[3] - next[3], r[4] - next[4], r[5] - next[5]);
}

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y ? 1 : 0;
}

static inline double median(double *a, size_t n)
{
    if (n == 0)
        return 0;
    qsort(a, n, sizeof *a, cmp_double);
    return n % 2 ? a[n / 2] : 0.5 * (a[n / 2 - 1] + a[n / 2]);
}

/* ---- verify_fit.c ---- */

/* The model's hypothesis families (its table's columns, then dt) into fam; how many. */
size_t families_build(shoal_model model, hyp_family *fam);
/* Ties the bound leaves unbounded, sized from the two worlds of the threshold (the boids
 * beyond the rounding bound only). */
void size_ties(shoal_verify *v, const ref_env *env, const double *state, const double *next);
/* The worst boids beyond the bound (idx, `beyond` of them): which family of one changed
 * parameter explains them, fitted and tried on the school; fills the report's verdict,
 * term, parameter and detail. */
void diagnose(shoal_verify *v, const ref_env *env, const double *state, const double *next,
              const uint32_t *idx, size_t beyond, shoal_verify_report *rep, shoal_error *err);
/* How much each term moves boid `row`'s velocity in the reference step. */
void term_parts(shoal_verify *v, const ref_env *env, const double *state, uint32_t row,
                shoal_verify_boid *w);

#endif
