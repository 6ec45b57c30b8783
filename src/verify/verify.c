/* SPDX-License-Identifier: MIT */
/* shoal_verify (shoal/verify.h, docs/VERIFY.md): one reference step from another program's
 * state k, compared with its state k+1 against the rounding bound of ref_bound.c; where boids
 * are beyond it, hypotheses of one changed parameter each, evaluated with the double rules
 * (ref64.c) on the worst boids' own neighbours, name the term that differs (verify_fit.c). Owns its
 * references (a shoal_sim for float32; the double rules need no object), their scratch and
 * the predators it carries from step to step. */
#include "core/alloc.h"
#include "verify/verify_internal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const verdict_names[SHOAL_VERDICT_COUNT] = {"agrees", "drift", "threshold tie",
                                                               "rule differs"};
static const char *const term_names[SHOAL_TERM_COUNT] = {
    "",        "separation", "alignment", "cohesion",    "walls",
    "targets", "obstacles",  "predators", "integration", "neighbours"};

const char *shoal_verdict_name(shoal_verdict v)
{
    return (unsigned)v < SHOAL_VERDICT_COUNT ? verdict_names[v] : NULL;
}

const char *shoal_term_name(shoal_term t)
{
    return (unsigned)t < SHOAL_TERM_COUNT ? term_names[t] : NULL;
}

shoal_verify_desc shoal_verify_desc_default(void)
{
    shoal_verify_desc d;
    memset(&d, 0, sizeof d);
    d.sim = shoal_sim_desc_default();
    d.reference = SHOAL_VERIFY_F32;
    d.worst_count = 8;
    return d;
}

/* ---- the object --------------------------------------------------------------------- */

void shoal_verify_set_cancel(shoal_verify *v, const volatile int *flag)
{
    if (v)
        v->cancel = flag;
}

static shoal_status cancelled(const shoal_verify *v, shoal_error *err)
{
    if (v->cancel && *v->cancel)
        return shoal_error_set(err, SHOAL_ERR_CANCELLED, "verify: cancelled at step %llu",
                               (unsigned long long)v->k);
    return SHOAL_OK;
}

void shoal_verify_destroy(shoal_verify *v)
{
    if (!v)
        return;
    shoal_sim_destroy(v->f32);
    field_free64(&v->fld);
    ref_grid_free(&v->grid);
    ref_grid_free(&v->grid_h);
    alloc_free(v->rows32);
    alloc_free(v->ref);
    alloc_free(v->alt);
    alloc_free(v->b);
    alloc_free(v->ratio);
    alloc_free(v->scratch);
    alloc_free(v->order);
    for (int i = 0; i < SHOAL_VERIFY_MAX_WORST; i++)
        for (int k = 0; k < 6; k++)
            free(v->diag[i].x[k]);
    free(v);
}

shoal_status shoal_verify_create(const shoal_verify_desc *desc, shoal_verify **out,
                                 shoal_error *err)
{
    *out = NULL;
    if (desc->reference != SHOAL_VERIFY_F32 && desc->reference != SHOAL_VERIFY_F64)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "invalid reference %d", (int)desc->reference);
    if (desc->worst_count < 1 || desc->worst_count > SHOAL_VERIFY_MAX_WORST)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "worst boids %d outside [1, %d]",
                               desc->worst_count, SHOAL_VERIFY_MAX_WORST);
    shoal_verify *v = calloc(1, sizeof *v);
    if (!v)
        return shoal_error_set(err, SHOAL_ERR_NOMEM, "out of memory for the verifier");
    v->desc = *desc;
    v->n = desc->sim.boid_count;
    shoal_status st = shoal_sim_create(&desc->sim, &v->f32, err);
    if (st) {
        free(v);
        return st;
    }
    v->fam_count = families_build(desc->sim.model, v->fam);
    params64_from(&desc->sim.params, &v->prm);
    size_t n = v->n;
    int ok = (v->rows32 = alloc_array(n * 6, sizeof(float), "verify state", err)) != NULL;
    ok = ok && (v->ref = alloc_array(n * 6, sizeof(double), "verify reference", err));
    ok = ok && (v->alt = alloc_array(n * 6, sizeof(double), "verify reference", err));
    ok = ok && (v->b = alloc_array(n, sizeof(refb_out), "verify bounds", err));
    ok = ok && (v->ratio = alloc_array(n, sizeof(double), "verify errors", err));
    ok = ok && (v->scratch = alloc_array(n, sizeof(double), "verify errors", err));
    ok = ok && (v->order = alloc_array(n, sizeof(uint32_t), "verify errors", err));
    if (!ok) {
        shoal_verify_destroy(v);
        return err ? err->status : SHOAL_ERR_NOMEM;
    }
    v->pred_count = (int)desc->sim.params.predator_count;
    predators64_reset(&v->prm, v->pred_count, v->pred_p, v->pred_v);
    *out = v;
    return SHOAL_OK;
}

shoal_status shoal_verify_copy_obstacles(shoal_verify *v, const shoal_sim *from, shoal_error *err)
{
    for (size_t i = 0; i < from->obstacle_count; i++) {
        const obstacle *o = &from->obstacles[i];
        shoal_status st =
            shoal_sim_add_obstacle(v->f32, o->pos, o->nrm, o->count, &o->xf, NULL, err);
        if (st)
            return st;
    }
    return field_build64(&v->fld, v->f32->obstacles, v->f32->obstacle_count,
                         v->desc.sim.params.field_cell, v->desc.sim.params.field_margin, err);
}

shoal_status shoal_verify_set_targets(shoal_verify *v, const double *xyz, size_t count,
                                      shoal_error *err)
{
    int targets = sim_model_target_count(v->desc.sim.model, &v->desc.sim.params);
    if (targets == 0)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "targets: model %s has none",
                               shoal_model_name(v->desc.sim.model));
    if (count > (size_t)targets)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "%zu targets given, the parameters say %d",
                               count, targets);
    for (size_t i = 0; i < 3 * count; i++)
        if (!isfinite(xyz[i]))
            return shoal_error_set(err, SHOAL_ERR_INPUT, "target %zu is not finite", i / 3);
    memset(v->pinned, 0, sizeof v->pinned);
    for (size_t k = 0; k < count; k++) {
        v->pinned[k] = 1;
        memcpy(v->pin[k], xyz + 3 * k, sizeof v->pin[k]);
    }
    return SHOAL_OK;
}

/* ---- one step ------------------------------------------------------------------------ */

static shoal_status check_rows(const shoal_verify *v, const double *rows, const char *which,
                               shoal_error *err)
{
    static const char *const names[6] = {"px", "py", "pz", "vx", "vy", "vz"};
    for (size_t i = 0; i < v->n * 6; i++) {
        double x = rows[i];
        if (!isfinite(x))
            return shoal_error_set(err, SHOAL_ERR_INPUT, "%s: row %zu column %d (%s) is %s", which,
                                   i / 6, (int)(i % 6), names[i % 6],
                                   isnan(x) ? "nan"
                                   : x > 0  ? "inf"
                                            : "-inf");
        if (v->desc.reference == SHOAL_VERIFY_F32 && (double)(float)x != x)
            return shoal_error_set(err, SHOAL_ERR_INPUT,
                                   "%s: row %zu column %d (%s) is %.17g, not a float32 value: the "
                                   "float32 reference steps float32 states (use the float64 "
                                   "reference)",
                                   which, i / 6, (int)(i % 6), names[i % 6], x);
    }
    return SHOAL_OK;
}

/* The float32 reference's step from `state`: v->ref and the predators after it. */
static shoal_status step_f32(shoal_verify *v, const double *state, double (*pp)[3], double (*pv)[3],
                             shoal_error *err)
{
    for (size_t i = 0; i < v->n * 6; i++)
        v->rows32[i] = (float)state[i];
    shoal_status st = shoal_sim_set_state(v->f32, v->rows32, err);
    shoal_sim_checkpoint ck;
    memset(&ck, 0, sizeof ck);
    ck.steps_done = v->k;
    ck.predator_count = v->pred_count;
    for (int k = 0; k < v->pred_count; k++)
        for (int c = 0; c < 3; c++) {
            ck.predator_pos[k][c] = (float)v->pred_p[k][c];
            ck.predator_vel[k][c] = (float)v->pred_v[k][c];
        }
    for (int k = 0; k < SHOAL_MAX_TARGETS; k++) {
        ck.target_pinned[k] = v->pinned[k];
        for (int c = 0; c < 3; c++)
            ck.target_pin[k][c] = (float)v->pin[k][c];
    }
    if (!st)
        st = shoal_sim_set_checkpoint(v->f32, &ck, err);
    if (!st)
        st = shoal_sim_step(v->f32, 1, err);
    if (st)
        return st;
    shoal_sim_get_state(v->f32, v->rows32);
    for (size_t i = 0; i < v->n * 6; i++)
        v->ref[i] = v->rows32[i];
    float fp[SHOAL_MAX_PREDATORS * 3], fv[SHOAL_MAX_PREDATORS * 3];
    size_t np = shoal_sim_predators(v->f32, fp, fv, SHOAL_MAX_PREDATORS);
    for (size_t k = 0; k < np; k++)
        for (int c = 0; c < 3; c++) {
            pp[k][c] = fp[3 * k + (size_t)c];
            pv[k][c] = fv[3 * k + (size_t)c];
        }
    return SHOAL_OK;
}

/* sort indices by ratio, largest first (a small merge sort: qsort has no context in C11) */
static void sort_by_ratio(uint32_t *idx, size_t n, const double *key, uint32_t *tmp)
{
    if (n < 2)
        return;
    size_t h = n / 2;
    sort_by_ratio(idx, h, key, tmp);
    sort_by_ratio(idx + h, n - h, key, tmp);
    size_t i = 0, j = h, o = 0;
    while (i < h && j < n) {
        /* larger first; equal keys keep the lower row first (stable) */
        if (key[idx[j]] > key[idx[i]])
            tmp[o++] = idx[j++];
        else
            tmp[o++] = idx[i++];
    }
    while (i < h)
        tmp[o++] = idx[i++];
    while (j < n)
        tmp[o++] = idx[j++];
    memcpy(idx, tmp, n * sizeof *idx);
}

shoal_status shoal_verify_step(shoal_verify *v, const double *state, const double *next,
                               shoal_verify_report *rep, shoal_error *err)
{
    memset(rep, 0, sizeof *rep);
    char which[64];
    snprintf(which, sizeof which, "state %llu", (unsigned long long)v->k);
    shoal_status st = check_rows(v, state, which, err);
    snprintf(which, sizeof which, "state %llu", (unsigned long long)v->k + 1);
    if (!st)
        st = check_rows(v, next, which, err);
    if (st)
        return st;
    const shoal_sim_desc *sd = &v->desc.sim;
    double t = sd->t0_s + (double)v->k * sd->dt_s;
    rep->step = v->k;
    rep->t = t;
    rep->count = v->n;
    rep->beyond_after = SIZE_MAX;

    /* the bound (and the double values) from the other program's state k */
    ref_env env;
    memset(&env, 0, sizeof env);
    env.prm = v->prm;
    consts64_prepare(&env, sd->model, sd->dt_s, t, sd->seed, v->pinned, (const double(*)[3])v->pin,
                     v->pred_count, (const double(*)[3])v->pred_p);
    env.fld = v->fld.vec ? &v->fld : NULL;
    env.cancel = v->cancel;
    if ((st = ref_grid_build(&v->grid, state, v->n, ref_env_radius(&env), 0, err)))
        return st;
    ref_school_step(&env, &v->grid, state, NULL, v->b, sd->thread_count);
    if ((st = cancelled(v, err)))
        return st;

    /* the reference's step and the predators after it */
    double pp[SHOAL_MAX_PREDATORS][3], pv[SHOAL_MAX_PREDATORS][3];
    memcpy(pp, v->pred_p, sizeof pp);
    memcpy(pv, v->pred_v, sizeof pv);
    /* the predators move by the float32 rules in both cases: they are part of the other
     * program's state that its files do not carry, and a float32 program holds them as the
     * float32 rules compute them */
    if (v->desc.reference == SHOAL_VERIFY_F32 || v->pred_count > 0)
        if ((st = step_f32(v, state, pp, pv, err)))
            return st;
    if (v->desc.reference == SHOAL_VERIFY_F64) {
        for (size_t i = 0; i < v->n; i++) {
            memcpy(v->ref + i * 6, v->b[i].value, 6 * sizeof(double));
            for (int c = 0; c < 6; c++)
                if (!isfinite(v->b[i].value[c]))
                    return shoal_error_set(err, SHOAL_ERR_NONFINITE,
                                           "the float64 reference step from state %llu gives a "
                                           "non-finite value in row %zu",
                                           (unsigned long long)v->k, i);
        }
    }

    size_ties(v, &env, state, next);

    /* errors against the bound */
    double *ep_all = v->scratch;
    size_t beyond = 0, ties = 0, unver = 0;
    double pmax = 0, vmax = 0, rmax = 0;
    for (size_t i = 0; i < v->n; i++) {
        const refb_out *o = &v->b[i];
        double ep, ev;
        errors6(v->ref + i * 6, next + i * 6, &ep, &ev);
        double tp = BOUND_RHO * norm3(o->err[0], o->err[1], o->err[2]);
        double tv = BOUND_RHO * norm3(o->err[3], o->err[4], o->err[5]);
        double xp = norm3(o->tie[0], o->tie[1], o->tie[2]);
        double xv = norm3(o->tie[3], o->tie[4], o->tie[5]);
        double r = fmax(ratio_of(ep, tp), ratio_of(ev, tv));
        if (!(r == r))
            r = INFINITY; /* an infinite bound and an infinite error */
        v->ratio[i] = r;
        ep_all[i] = ep;
        pmax = ep > pmax ? ep : pmax;
        vmax = ev > vmax ? ev : vmax;
        if (isinf(tp) || isinf(tv))
            unver++;
        if (ep <= tp && ev <= tv)
            continue;
        if (ep <= tp + xp && ev <= tv + xv) {
            ties++;
            continue;
        }
        beyond++;
        rmax = r > rmax ? r : rmax;
    }
    rep->pos_max = pmax;
    rep->vel_max = vmax;
    rep->pos_median = median(ep_all, v->n);
    for (size_t i = 0; i < v->n; i++) {
        double ep, ev;
        errors6(v->ref + i * 6, next + i * 6, &ep, &ev);
        ep_all[i] = ev;
    }
    rep->vel_median = median(ep_all, v->n);
    memcpy(ep_all, v->ratio, v->n * sizeof(double));
    double all_max = 0;
    for (size_t i = 0; i < v->n; i++)
        all_max = v->ratio[i] > all_max ? v->ratio[i] : all_max;
    rep->ratio_median = median(ep_all, v->n);
    rep->ratio_max = all_max;
    rep->beyond = beyond;
    rep->ties = ties;
    rep->unverifiable = unver;

    /* the worst boids: beyond the bound and its ties first, by ratio */
    uint32_t *idx = v->order;
    uint32_t *tmp = (uint32_t *)v->scratch; /* n doubles hold n indices */
    for (size_t i = 0; i < v->n; i++) {
        idx[i] = (uint32_t)i;
        const refb_out *o = &v->b[i];
        double ep, ev;
        errors6(v->ref + i * 6, next + i * 6, &ep, &ev);
        double tp = BOUND_RHO * norm3(o->err[0], o->err[1], o->err[2]) +
                    norm3(o->tie[0], o->tie[1], o->tie[2]);
        double tv = BOUND_RHO * norm3(o->err[3], o->err[4], o->err[5]) +
                    norm3(o->tie[3], o->tie[4], o->tie[5]);
        /* beyond tolerance + tie first, then the ties, then the rest, each by its ratio */
        double r = fmax(ratio_of(ep, tp), ratio_of(ev, tv));
        int tied = !(ep <= tp && ev <= tv) ? 0 : v->ratio[i] > 1;
        v->alt[i] = !(ep <= tp && ev <= tv) ? 4.0 + atan(r)
                    : tied                  ? 2.0 + atan(v->ratio[i])
                                            : atan(v->ratio[i]);
    }
    sort_by_ratio(idx, v->n, v->alt, tmp);
    int wc = v->desc.worst_count < (int)v->n ? v->desc.worst_count : (int)v->n;
    rep->worst_count = wc;
    for (int w = 0; w < wc; w++) {
        uint32_t i = idx[w];
        shoal_verify_boid *b = &rep->worst[w];
        const refb_out *o = &v->b[i];
        b->row = i;
        errors6(v->ref + (size_t)i * 6, next + (size_t)i * 6, &b->pos_err, &b->vel_err);
        b->pos_tol = BOUND_RHO * norm3(o->err[0], o->err[1], o->err[2]);
        b->vel_tol = BOUND_RHO * norm3(o->err[3], o->err[4], o->err[5]);
        b->pos_tie = norm3(o->tie[0], o->tie[1], o->tie[2]);
        b->vel_tie = norm3(o->tie[3], o->tie[4], o->tie[5]);
        b->ratio = v->ratio[i];
        b->tie_row = o->tie_term != SHOAL_TERM_NONE ? o->tie_cand : -1;
        b->tie_term = (shoal_term)o->tie_term;
        for (int c = 0; c < 3; c++)
            b->residual[c] =
                next[(size_t)i * 6 + 3 + (size_t)c] - v->ref[(size_t)i * 6 + 3 + (size_t)c];
        term_parts(v, &env, state, i, b);
    }

    if (beyond == 0) {
        rep->verdict = ties ? SHOAL_VERDICT_TIE : SHOAL_VERDICT_AGREES;
        if (ties) {
            int per[SHOAL_TERM_COUNT] = {0};
            for (size_t i = 0; i < v->n; i++) {
                double ep, ev;
                errors6(v->ref + i * 6, next + i * 6, &ep, &ev);
                const refb_out *o = &v->b[i];
                if (ep > BOUND_RHO * norm3(o->err[0], o->err[1], o->err[2]) ||
                    ev > BOUND_RHO * norm3(o->err[3], o->err[4], o->err[5]))
                    per[o->tie_term]++;
            }
            int top = 0;
            for (int k = 1; k < SHOAL_TERM_COUNT; k++)
                top = per[k] > per[top] ? k : top;
            rep->term = (shoal_term)top;
            snprintf(rep->detail, sizeof rep->detail,
                     "%zu boids beyond the rounding bound, each within rounding of a threshold "
                     "(most: %s, %d)",
                     ties, term_names[top], per[top]);
        } else {
            snprintf(rep->detail, sizeof rep->detail, "%s",
                     pmax == 0 && vmax == 0 ? "bit-identical to the reference"
                                            : "every boid within the float32 rounding bound");
        }
    } else {
        diagnose(v, &env, state, next, idx, beyond, rep, err);
        if ((st = cancelled(v, err)))
            return st;
    }
    /* next step */
    v->k++;
    memcpy(v->pred_p, pp, sizeof pp);
    memcpy(v->pred_v, pv, sizeof pv);
    return SHOAL_OK;
}
