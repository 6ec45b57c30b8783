/* SPDX-License-Identifier: MIT */
/* The float64 reference with a rounding bound: sim/rules.h compiled against
 * verify/real_bound.h (through verify/ref_kernel.h), so the bound on the float32 rounding of each
 * boid's step is derived from the very operations the rules make (docs/VERIFY.md, "Tolerances").
 * Its values are those of the double instantiation (ref64.c), bit for bit. Owns no state. */
#include "verify/ref_internal.h"

#include <math.h>
#include <string.h>

#define SIMD_REAL_HEADER "verify/real_bound.h"
#define RFN(name) name##_bnd
#include "verify/ref_kernel.h"

/* Each model's own ties of the finish (NAME_finish_tie), indexed by the enum. */
typedef int (*finish_tie_fn)(const params64 *p, const model_consts64 *mc, const double x[6]);
#define FINISH_TIE_ENTRY(id, M) [id] = M##_finish_tie,
static const finish_tie_fn finish_ties[] = {SIM_MODELS(FINISH_TIE_ENTRY)};
#undef FINISH_TIE_ENTRY
SIM_MODEL_TABLE_CHECK(finish_ties);

/* A tie that no candidate made: which of the per-boid terms sits on its threshold (the
 * model's own, then the spheres, the obstacle field, the predators). */
static int finish_tie_term(const ref_env *env, const double in[6])
{
    const params64 *p = &env->prm;
    const model_consts64 *mc = &env->mc;
    const double *x = in;
    double size = fabs(x[0]) + fabs(x[1]) + fabs(x[2]);
    int own = finish_ties[env->model](p, mc, x);
    if (own != SHOAL_TERM_NONE)
        return own;
    for (int k = 0; k < (int)p->sphere_count; k++) {
        double d2 = 0;
        for (int c = 0; c < 3; c++)
            d2 += (x[c] - p->spheres[k].center[c]) * (x[c] - p->spheres[k].center[c]);
        if (REF_NEAR(sqrt(d2), 2.0 * p->spheres[k].radius, size))
            return SHOAL_TERM_OBSTACLES;
    }
    if (env->fld && env->fld->vec)
        for (int c = 0; c < 3; c++) {
            double u = (x[c] - env->fld->origin[c]) / env->fld->cell;
            if (REF_NEAR(u, floor(u + 0.5), fabs(x[c]) / env->fld->cell + 1.0))
                return SHOAL_TERM_OBSTACLES;
        }
    for (int k = 0; k < mc->predator_count; k++) {
        double d2 = 0;
        for (int c = 0; c < 3; c++)
            d2 += (x[c] - mc->predators[k][c]) * (x[c] - mc->predators[k][c]);
        if (REF_NEAR(d2, mc->flee_r2, size * size))
            return SHOAL_TERM_PREDATORS;
    }
    return SHOAL_TERM_INTEGRATION;
}

void refb_boid(const ref_env *env, const ref_cands *c, uint32_t row, const double in[6],
               refb_out *out)
{
    vf3 p = v3_set1(in[0], in[1], in[2]), v = v3_set1(in[3], in[4], in[5]);
    tie_track_bnd tr = {0.0, -1, SHOAL_TERM_NONE};
    boid_step_bnd(env, c, row, &p, &v, &tr);
    const vf r[6] = {p.x, p.y, p.z, v.x, v.y, v.z};
    double tie = 0;
    for (int k = 0; k < 6; k++) {
        out->value[k] = r[k].v;
        out->err[k] = bnd_e(r[k]);
        out->tie[k] = r[k].t;
        tie += r[k].t;
    }
    out->tie_cand = tr.cand;
    out->tie_term = tr.term;
    if (tie > 0 && tr.term == SHOAL_TERM_NONE)
        out->tie_term = finish_tie_term(env, in);
}
