/* SPDX-License-Identifier: MIT */
/* shoal verify's hypotheses (docs/VERIFY.md, "Diagnosis"): the families of one changed
 * parameter each, built from the model's own parameter table (its hypothesis columns,
 * sim/models/NAME.h), evaluated with the double rules on the worst boids' own neighbours,
 * fitted (a weight by golden section, a threshold over the pieces its neighbours' distances
 * cut), narrowed on the school and named; and the ties the rounding bound cannot size. Owns
 * no state: it works on the verifier's (verify_internal.h). */
#include "verify/verify_internal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the families ---------------------------------------------------------------------- */

/* The model's families, in its table's order, then dt: every row with a hypothesis column,
 * the OFF rows of a term as one family. Returns how many. */
size_t families_build(shoal_model model, hyp_family *fam)
{
    const sim_model *m = sim_model_of(model);
    size_t n = 0;
    for (size_t i = 0; i < m->info.param_count; i++) {
        const sim_hyp *h = &m->hyps[i];
        hyp_family f;
        memset(&f, 0, sizeof f);
        f.term = h->term;
        f.param = m->info.params[i].name;
        f.info = &m->info.params[i];
        f.k2 = h->k2;
        f.k1 = h->k1;
        f.strict = h->strict;
        f.need = h->term == SHOAL_TERM_OBSTACLES   ? NEED_OBSTACLES
                 : h->term == SHOAL_TERM_PREDATORS ? NEED_PREDATORS
                                                   : NEED_NONE;
        switch ((sim_hyp_kind)h->kind) {
        case SIM_HYP_NONE:
            continue;
        case SIM_HYP_WEIGHT:
        case SIM_HYP_FACTOR:
            f.kind = HK_WEIGHT;
            f.term_weight = h->kind == SIM_HYP_WEIGHT;
            break;
        case SIM_HYP_RADIUS:
            f.kind = HK_R2;
            break;
        case SIM_HYP_FLEE:
            f.kind = HK_R2;
            f.flee = 1;
            break;
        case SIM_HYP_DIST2:
            f.kind = HK_DIST2;
            break;
        case SIM_HYP_COS:
            f.kind = HK_COS;
            break;
        case SIM_HYP_OFF: {
            int seen = 0;
            for (size_t k = 0; k < n; k++)
                seen |= fam[k].kind == HK_OFF && fam[k].term == h->term;
            if (seen)
                continue;
            f.kind = HK_OFF;
            f.param = shoal_term_name(h->term);
            f.info = NULL;
            break;
        }
        }
        fam[n++] = f;
    }
    hyp_family dt;
    memset(&dt, 0, sizeof dt);
    dt.term = SHOAL_TERM_INTEGRATION;
    dt.param = "dt";
    dt.kind = HK_DT;
    dt.k2 = dt.k1 = -1;
    fam[n++] = dt;
    return n;
}

/* ---- evaluating a hypothesis on the diagnosed boids ---------------------------------- */

/* the contract's value of a family's parameter (radii: squared; cones: cosine) */
static double family_value(const hyp_family *f, const ref_env *env)
{
    const model_consts64 *mc = &env->mc;
    switch (f->kind) {
    case HK_DT:
        return mc->dt;
    case HK_R2:
        return f->flee ? mc->flee_r2 : mc->k[f->k2];
    case HK_COS:
        return mc->k[f->k2];
    case HK_OFF:
        return 0;
    case HK_WEIGHT:
    case HK_DIST2:
        break;
    }
    return *params64_field((params64 *)&env->prm, f->info);
}

/* env with the family's value x (then its largest radius again: ref_env_refresh) */
static void family_apply(const hyp_family *f, ref_env *env, double x)
{
    model_consts64 *mc = &env->mc;
    switch (f->kind) {
    case HK_DT:
        mc->dt = x;
        break;
    case HK_R2:
        if (f->flee) {
            mc->flee_r2 = x;
            mc->flee_r = sqrt(x);
            break;
        }
        /* the square the tests compare, the radius where the rules use it, and the parameter
         * (classic's fov: the walls' reach too) */
        mc->k[f->k2] = x;
        if (f->k1 >= 0)
            mc->k[f->k1] = sqrt(x);
        *params64_field(&env->prm, f->info) = sqrt(x);
        break;
    case HK_COS:
        mc->k[f->k2] = x;
        break;
    case HK_OFF: {
        /* every OFF row of the term out of reach (its column says which way) */
        const sim_model *m = sim_model_of(env->model);
        for (size_t i = 0; i < m->info.param_count; i++)
            if (m->hyps[i].kind == SIM_HYP_OFF && m->hyps[i].term == f->term)
                *params64_field(&env->prm, &m->info.params[i]) = m->hyps[i].k2 * 1e300;
        break;
    }
    case HK_WEIGHT:
    case HK_DIST2:
        *params64_field(&env->prm, f->info) = x;
        break;
    }
    ref_env_refresh(env);
}

/* boid d's step under env: its errors against the other program */
static void diag_eval(const ref_env *env, const diag_boid *d, double out[6], double *ep, double *ev)
{
    ref_cands c = {{d->x[0], d->x[1], d->x[2], d->x[3], d->x[4], d->x[5]}, d->rb, d->re, 1};
    ref64_boid(env, &c, d->row, d->in, out);
    errors6(out, d->next, ep, ev);
}

static int diag_explained(const diag_boid *d, double ep, double ev)
{
    return ep <= d->tol_p + d->tie_p && ev <= d->tol_v + d->tie_v;
}

/* The score of one value on all diagnosed boids: how many it explains, and the sum of the
 * squared errors relative to each boid's error under the contract (lower is better). */
typedef struct score {
    int explained;
    double obj;
} score;

static score score_value(const shoal_verify *v, const hyp_family *f, const ref_env *base, double x,
                         int count)
{
    ref_env env = *base;
    family_apply(f, &env, x);
    score s = {0, 0};
    for (int i = 0; i < count; i++) {
        double out[6], ep, ev;
        diag_eval(&env, &v->diag[i], out, &ep, &ev);
        s.explained += diag_explained(&v->diag[i], ep, ev);
        double r = (ep + ev) / v->diag[i].err0;
        s.obj += r == r ? r * r : 1e300;
    }
    return s;
}

static int better(score a, score b)
{
    return a.explained > b.explained || (a.explained == b.explained && a.obj < b.obj);
}

/* The squared distance a view cone's neighbours must be within: its term's DIST2 parameter
 * (fov's), or any distance. */
static double cos_reach2(const hyp_family *f, const ref_env *env)
{
    const sim_model *m = sim_model_of(env->model);
    for (size_t i = 0; i < m->info.param_count; i++)
        if (m->hyps[i].kind == SIM_HYP_DIST2 && m->hyps[i].term == f->term)
            return *params64_field((params64 *)&env->prm, &m->info.params[i]);
    return INFINITY;
}

/* The values at which a threshold family can change boid d's result: each of its neighbours'
 * squared distance (or view-cone cosine; flee: the predators' squared distances) within a
 * factor of 4 of the contract's value c0 (cosines: any). Sorted, without repeats; malloc'ed. */
static double *boid_breaks(const hyp_family *f, const ref_env *env, const diag_boid *d, double c0,
                           size_t *len)
{
    size_t cap = d->cand_count + (size_t)env->mc.predator_count + 1, n = 0;
    double *b = malloc(cap * sizeof *b);
    if (!b)
        return NULL;
    const double *p = d->in;
    double vl = sqrt((p[3] * p[3] + p[4] * p[4]) + p[5] * p[5]);
    if (f->kind == HK_R2 && f->flee) {
        for (int k = 0; k < env->mc.predator_count; k++) {
            const double *q = env->mc.predators[k];
            double e[3] = {p[0] - q[0], p[1] - q[1], p[2] - q[2]};
            double d2 = (e[0] * e[0] + e[1] * e[1]) + e[2] * e[2];
            if (d2 >= c0 * 0.25 && d2 <= c0 * 4.0)
                b[n++] = d2;
        }
    } else {
        for (size_t j = 0; j < d->cand_count; j++) {
            /* the rules' own arithmetic: diff, d^2 = (x^2 + y^2) + z^2 */
            double e[3] = {p[0] - d->x[0][j], p[1] - d->x[1][j], p[2] - d->x[2][j]};
            double d2 = (e[0] * e[0] + e[1] * e[1]) + e[2] * e[2];
            if (d2 == 0)
                continue;
            double x = d2;
            if (f->kind == HK_COS) {
                if (!(vl > 0) || !(d2 < cos_reach2(f, env)))
                    continue;
                double vh[3] = {p[3] / vl, p[4] / vl, p[5] / vl};
                /* the rules' cosine is vhat . (p_j - p) / d = -(vhat . e) / d */
                x = ((vh[0] * e[0] + vh[1] * e[1]) + vh[2] * e[2]) / sqrt(d2);
            } else if (!(x >= c0 * 0.25 && x <= c0 * 4.0)) {
                continue;
            }
            b[n++] = x;
        }
    }
    qsort(b, n, sizeof *b, cmp_double);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (m == 0 || b[i] != b[m - 1])
            b[m++] = b[i];
    *len = m;
    return b;
}

/* The best value of a family and the range of values as good. */
typedef struct fit {
    score s;
    double x, lo, hi;
    int strictness;
} fit;

/* Evaluation points of a sorted break list: below the first, each break (the tie itself) and
 * between each two (or above the last): 2 n + 1 of them. */
static double break_point(const double *b, size_t n, size_t i)
{
    if (n == 0)
        return 0;
    if (i == 0)
        return b[0] - (fabs(b[0]) * 0.5 + 1e-300);
    size_t k = (i - 1) / 2;
    if (i % 2 == 1)
        return b[k];
    return k + 1 < n ? 0.5 * (b[k] + b[k + 1]) : b[k] + (fabs(b[k]) * 0.5 + 1e-300);
}

/* Which of a sorted break list's evaluation points gives the result at x. */
static size_t break_index(const double *b, size_t n, double x)
{
    size_t lo = 0, hi = n; /* first break >= x */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (b[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && b[lo] == x ? 2 * lo + 1 : 2 * lo;
}

/* A threshold family (a radius, a squared distance, a view cone): its result on a boid changes
 * only where the threshold passes one of the boid's neighbours, so each boid is evaluated once
 * per piece of its own break list, and the pieces are combined over all diagnosed boids. */
static fit fit_threshold(const shoal_verify *v, const hyp_family *f, const ref_env *env, int count)
{
    fit best = {{-1, INFINITY}, 0, 0, 0, 0};
    /* a radius the rules also use as a length (heading's) */
    int continuous = f->kind == HK_R2 && !f->flee && f->k1 >= 0;
    double c0 = family_value(f, env);
    if (f->kind == HK_COS)
        c0 = -c0; /* breaks are -cos: included while -c < -cos, as a squared distance is */
    double *br[SHOAL_VERIFY_MAX_WORST] = {0};
    size_t nbr[SHOAL_VERIFY_MAX_WORST] = {0};
    score *val[SHOAL_VERIFY_MAX_WORST] = {0};
    double *all = NULL, *pts = NULL;
    score *sc = NULL;
    size_t total = 1;
    int ok = 1;
    for (int i = 0; i < count && ok; i++) {
        br[i] = boid_breaks(f, env, &v->diag[i], c0, &nbr[i]);
        val[i] = br[i] ? malloc((2 * nbr[i] + 1) * sizeof(score)) : NULL;
        ok = val[i] != NULL;
        for (size_t k = 0; ok && k < 2 * nbr[i] + 1; k++) {
            ref_env h = *env;
            double x = break_point(br[i], nbr[i], k);
            family_apply(f, &h, f->kind == HK_COS ? -x : x);
            double out[6], ep, ev;
            diag_eval(&h, &v->diag[i], out, &ep, &ev);
            double r = (ep + ev) / v->diag[i].err0;
            val[i][k].explained = diag_explained(&v->diag[i], ep, ev);
            val[i][k].obj = r == r ? r * r : 1e300;
        }
        total += nbr[i];
    }
    /* the global break list: every boid's, and the contract's value */
    if (ok && (all = malloc(total * sizeof *all))) {
        size_t n = 0;
        all[n++] = c0;
        for (int i = 0; i < count; i++)
            for (size_t k = 0; k < nbr[i]; k++)
                all[n++] = br[i][k];
        qsort(all, n, sizeof *all, cmp_double);
        size_t nb = 0;
        for (size_t i = 0; i < n; i++)
            if (nb == 0 || all[i] != all[nb - 1])
                all[nb++] = all[i];
        size_t np = 2 * nb + 1;
        pts = malloc(np * sizeof *pts);
        sc = malloc(np * sizeof *sc);
        if (pts && sc) {
            size_t best_i = 0;
            for (size_t k = 0; k < np; k++) {
                pts[k] = break_point(all, nb, k);
                score t = {0, 0};
                for (int i = 0; i < count; i++) {
                    const score *q = &val[i][break_index(br[i], nbr[i], pts[k])];
                    t.explained += q->explained;
                    t.obj += q->obj;
                }
                sc[k] = t;
                /* heading's radius also enters its separation term continuously ((R - d) /
                 * (R d)): a piece's midpoint is not its value, so the piece is chosen by the
                 * objective and the value found inside it below */
                int take = continuous ? t.obj < sc[best_i].obj : better(t, sc[best_i]);
                if (k == 0 || take)
                    best_i = k;
            }
            /* the run of points around the best that explain as many boids: the values as
             * good on this evidence (refine_threshold narrows it with more boids) */
            size_t lo = best_i, hi = best_i;
            while (lo > 0 && sc[lo - 1].explained == sc[best_i].explained)
                lo--;
            while (hi + 1 < np && sc[hi + 1].explained == sc[best_i].explained)
                hi++;
            best.s = sc[best_i];
            best.x = pts[best_i];
            /* the range: open at the breaks that bound the run, closed at a break inside it */
            best.lo = lo % 2 == 1 ? pts[lo] : lo > 0 ? pts[lo - 1] : -INFINITY;
            best.hi = hi % 2 == 1 ? pts[hi] : hi + 1 < np ? pts[hi + 1] : INFINITY;
            /* a strictness flip: some neighbour sits exactly on the contract's threshold,
             * and the threshold moved off it by the least step (the tie left out where the
             * contract, <=, counts it; counted where it, <, does not) explains as many boids:
             * the smallest change that explains them is the one reported */
            int on_tie = 0;
            for (int i = 0; i < count; i++)
                on_tie |= break_index(br[i], nbr[i], c0) % 2 == 1;
            int flip = 0;
            if (on_tie) {
                double xs = nextafter(c0, f->strict ? INFINITY : -INFINITY);
                score ss = score_value(v, f, env, f->kind == HK_COS ? -xs : xs, count);
                if (ss.explained > 0 && ss.explained >= best.s.explained) {
                    best.s = ss;
                    best.x = best.lo = best.hi = xs;
                    best.strictness = f->strict ? -1 : 1;
                    flip = 1;
                }
            }
            if (continuous && !flip) {
                /* golden section on R over the values that give the chosen neighbour set: the
                 * piece between two breaks and the break its test puts on the same side (<:
                 * the upper one; <=: the lower one) */
                size_t ia, ib; /* indices of the bounding breaks in pts, or np for none */
                if (best_i % 2 == 0) {
                    ia = best_i > 0 ? best_i - 1 : np;
                    ib = best_i + 1 < np ? best_i + 1 : np;
                } else if (f->strict) {
                    ia = best_i >= 3 ? best_i - 2 : np;
                    ib = best_i;
                } else {
                    ia = best_i;
                    ib = best_i + 2 < np ? best_i + 2 : np;
                }
                double xa = ia < np ? pts[ia] : pts[best_i] * 0.5;
                double xb = ib < np ? pts[ib] : pts[best_i] * 1.5;
                double a = sqrt(fmax(xa, 0.0)), b = sqrt(fmax(xb, 0.0));
                const double g = 0.6180339887498949;
                double x1 = b - g * (b - a), x2 = a + g * (b - a);
                score s1 = score_value(v, f, env, x1 * x1, count);
                score s2 = score_value(v, f, env, x2 * x2, count);
                for (int it = 0; it < 60 && b - a > 1e-13 * b; it++) {
                    if (s1.obj < s2.obj) {
                        b = x2;
                        x2 = x1;
                        s2 = s1;
                        x1 = b - g * (b - a);
                        s1 = score_value(v, f, env, x1 * x1, count);
                    } else {
                        a = x1;
                        x1 = x2;
                        s1 = s2;
                        x2 = a + g * (b - a);
                        s2 = score_value(v, f, env, x2 * x2, count);
                    }
                }
                double r = 0.5 * (a + b);
                best.x = best.lo = best.hi = r * r;
                best.s = score_value(v, f, env, best.x, count);
            }
            if (f->kind == HK_COS) {
                double l = -best.hi, h = -best.lo;
                best.x = -best.x;
                best.lo = l;
                best.hi = h;
            }
        }
    }
    for (int i = 0; i < count; i++) {
        free(br[i]);
        free(val[i]);
    }
    free(all);
    free(pts);
    free(sc);
    return best;
}

static fit fit_weight(const shoal_verify *v, const hyp_family *f, const ref_env *env, int count)
{
    double c0 = family_value(f, env);
    static const double factors[] = {-1,   0,    0.25, 0.5,  0.75, 0.9, 0.95, 0.99, 1,
                                     1.01, 1.05, 1.1,  1.25, 1.5,  2,   3,    4,    8};
    static const double absolute[] = {-8, -4, -2, -1, -0.5, 0, 0.5, 1, 2, 4, 8};
    double vals[32];
    int ng = 0;
    if (c0 != 0)
        for (size_t i = 0; i < sizeof factors / sizeof factors[0]; i++)
            vals[ng++] = c0 * factors[i];
    else
        for (size_t i = 0; i < sizeof absolute / sizeof absolute[0]; i++)
            vals[ng++] = absolute[i];
    qsort(vals, (size_t)ng, sizeof vals[0], cmp_double);
    fit best = {{-1, INFINITY}, c0, c0, c0, 0};
    int bi = 0;
    for (int i = 0; i < ng; i++) {
        if (f->kind == HK_DT && !(vals[i] > 0))
            continue;
        score s = score_value(v, f, env, vals[i], count);
        if (best.s.explained < 0 || better(s, best.s)) {
            best.s = s;
            best.x = vals[i];
            bi = i;
        }
    }
    /* golden section on the objective between the best point's neighbours */
    double a = bi > 0 ? vals[bi - 1] : vals[bi] - fabs(vals[bi]) - 1;
    double b = bi + 1 < ng ? vals[bi + 1] : vals[bi] + fabs(vals[bi]) + 1;
    if (f->kind == HK_DT && a <= 0)
        a = vals[bi] * 0.5;
    const double g = 0.6180339887498949;
    double x1 = b - g * (b - a), x2 = a + g * (b - a);
    score s1 = score_value(v, f, env, x1, count), s2 = score_value(v, f, env, x2, count);
    for (int it = 0; it < 60 && b - a > 1e-12 * (fabs(a) + fabs(b)); it++) {
        if (s1.obj < s2.obj) {
            b = x2;
            x2 = x1;
            s2 = s1;
            x1 = b - g * (b - a);
            s1 = score_value(v, f, env, x1, count);
        } else {
            a = x1;
            x1 = x2;
            s1 = s2;
            x2 = a + g * (b - a);
            s2 = score_value(v, f, env, x2, count);
        }
    }
    double xm = 0.5 * (a + b);
    score sm = score_value(v, f, env, xm, count);
    if (better(sm, best.s)) {
        best.s = sm;
        best.x = xm;
    }
    /* a term left out: prefer exactly 0 when it explains as many (the fit lands within
     * rounding of it) */
    if (best.x != 0 && f->kind == HK_WEIGHT) {
        score s0 = score_value(v, f, env, 0.0, count);
        if (s0.explained >= best.s.explained && fabs(best.x) <= 1e-3 * (fabs(c0) + 1e-300)) {
            best.s = s0;
            best.x = 0;
        }
    }
    best.lo = best.hi = best.x;
    return best;
}

static fit fit_family(const shoal_verify *v, const hyp_family *f, const ref_env *env, int count)
{
    switch (f->kind) {
    case HK_R2:
    case HK_DIST2:
    case HK_COS:
        return fit_threshold(v, f, env, count);
    case HK_OFF: {
        fit r = {score_value(v, f, env, 0, count), 0, 0, 0, 0};
        return r;
    }
    default:
        return fit_weight(v, f, env, count);
    }
}

/* boid `row`'s result `out` against the other program, within its bound and tie? */
static int row_explained(const shoal_verify *v, uint32_t row, const double out[6],
                         const double *next)
{
    const refb_out *o = &v->b[row];
    double ep, ev;
    errors6(out, next + (size_t)row * 6, &ep, &ev);
    return ep <= BOUND_RHO * norm3(o->err[0], o->err[1], o->err[2]) +
                     norm3(o->tie[0], o->tie[1], o->tie[2]) &&
           ev <= BOUND_RHO * norm3(o->err[3], o->err[4], o->err[5]) +
                     norm3(o->tie[3], o->tie[4], o->tie[5]);
}

/* A growing array of doubles / bytes (refine_threshold's lists). */
typedef struct dbuf {
    double *d;
    size_t n, cap;
} dbuf;
static int dbuf_push(dbuf *b, double x)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 1024;
        double *nd = realloc(b->d, cap * sizeof *nd);
        if (!nd)
            return 0;
        b->d = nd;
        b->cap = cap;
    }
    b->d[b->n++] = x;
    return 1;
}

/* Point k of the pieces that the sorted breaks b[0..u) cut (lo, hi) into: odd k a break,
 * even k the middle of the piece between two. */
static double piece_point(const double *b, size_t u, double lo, double hi, size_t k)
{
    if (k % 2 == 1)
        return b[(k - 1) / 2];
    if (u == 0)
        return 0.5 * (lo + hi);
    if (k == 0)
        return 0.5 * (lo + b[0]);
    if (k / 2 < u)
        return 0.5 * (b[k / 2 - 1] + b[k / 2]);
    return 0.5 * (b[u - 1] + hi);
}

/* Narrow a threshold fit with the whole school: every boid with a neighbour whose break falls
 * inside the fitted range (the boids beyond the bound first) is evaluated once per piece of the
 * range that its own breaks cut, and the value that leaves the most boids within the bound
 * wins. (The worst boids alone leave a range that other boids' neighbours still cut, and a
 * value in it may move boids that agreed.) Stops adding boids after 400000 evaluations. */
static void refine_threshold(shoal_verify *v, const hyp_family *f, const ref_env *env,
                             const double *state, const double *next, const uint32_t *idx,
                             fit *best, shoal_error *err)
{
    if (best->strictness || (f->kind == HK_R2 && (f->flee || f->k1 >= 0)))
        return;
    int cosk = f->kind == HK_COS;
    double lo = cosk ? -best->hi : best->lo, hi = cosk ? -best->lo : best->hi;
    if (!(isfinite(lo) && isfinite(hi) && lo < hi))
        return;
    ref_env wide = *env;
    family_apply(f, &wide, cosk ? family_value(f, env) : hi);
    if (ref_grid_build(&v->grid_h, state, v->n, ref_env_radius(&wide), 0, err))
        return;
    const ref_grid *g = &v->grid_h;
    double reach2 = cosk ? cos_reach2(f, env) : INFINITY;
    dbuf brk = {0}, okb = {0}, all = {0};
    size_t *first = malloc((v->n + 1) * sizeof *first),
           *okfirst = malloc((v->n + 1) * sizeof *okfirst);
    size_t m = 0, evals = 0;
    int fail = !first || !okfirst;
    for (size_t i = 0; i < v->n && !fail && evals < 400000; i++) {
        uint32_t row = idx[i];
        const double *p = state + (size_t)row * 6;
        uint32_t rb[9], re[9];
        ref_cands c = {{g->x[0], g->x[1], g->x[2], g->x[3], g->x[4], g->x[5]}, rb, re, 0};
        c.runs = ref_grid_runs(g, p, rb, re);
        double vl = sqrt((p[3] * p[3] + p[4] * p[4]) + p[5] * p[5]);
        size_t b0 = brk.n;
        for (int r = 0; r < c.runs && !fail; r++)
            for (uint32_t j = rb[r]; j < re[r] && !fail; j++) {
                double e[3] = {p[0] - g->x[0][j], p[1] - g->x[1][j], p[2] - g->x[2][j]};
                double d2 = (e[0] * e[0] + e[1] * e[1]) + e[2] * e[2];
                if (d2 == 0 || !(d2 < reach2))
                    continue;
                double x = d2;
                if (cosk) {
                    if (!(vl > 0))
                        continue;
                    /* -cos: the rules' cosine is vhat . (p_j - p) / d */
                    x = ((p[3] / vl * e[0] + p[4] / vl * e[1]) + p[5] / vl * e[2]) / sqrt(d2);
                }
                if (x > lo && x < hi)
                    fail = !dbuf_push(&brk, x);
            }
        size_t u = brk.n - b0;
        if (u == 0 || fail)
            continue; /* the same result over the whole range */
        double *b = brk.d + b0;
        qsort(b, u, sizeof *b, cmp_double);
        size_t w = 0;
        for (size_t k = 0; k < u; k++)
            if (w == 0 || b[k] != b[w - 1])
                b[w++] = b[k];
        brk.n = b0 + w;
        first[m] = b0;
        okfirst[m] = okb.n;
        for (size_t k = 0; k < 2 * w + 1 && !fail; k++) {
            double x = piece_point(b, w, lo, hi, k);
            ref_env h = *env;
            family_apply(f, &h, cosk ? -x : x);
            double out[6];
            ref64_boid(&h, &c, row, p, out);
            fail = !dbuf_push(&okb, row_explained(v, row, out, next));
            evals++;
        }
        m++;
    }
    if (!fail && m > 0) {
        first[m] = brk.n;
        okfirst[m] = okb.n;
        for (size_t k = 0; k < brk.n && !fail; k++)
            fail = !dbuf_push(&all, brk.d[k]);
    }
    if (!fail && m > 0) {
        qsort(all.d, all.n, sizeof *all.d, cmp_double);
        size_t u = 0;
        for (size_t k = 0; k < all.n; k++)
            if (u == 0 || all.d[k] != all.d[u - 1])
                all.d[u++] = all.d[k];
        size_t best_k = 0, best_n = 0;
        for (size_t k = 0; k < 2 * u + 1; k++) {
            double x = piece_point(all.d, u, lo, hi, k);
            size_t n = 0;
            for (size_t i = 0; i < m; i++)
                n +=
                    okb.d[okfirst[i] + break_index(brk.d + first[i], first[i + 1] - first[i], x)] !=
                    0;
            /* a piece rather than a break when both leave as many boids within the bound */
            if (n > best_n || (n == best_n && best_k % 2 == 1 && k % 2 == 0)) {
                best_n = n;
                best_k = k;
            }
        }
        double x = piece_point(all.d, u, lo, hi, best_k);
        size_t pk = best_k;
        if (pk % 2 == 1) /* a break: the piece with the same neighbours (<: below; <=: above) */
            pk = f->strict ? pk - 1 : pk + 1;
        double nlo = pk == 0 ? lo : all.d[pk / 2 - 1];
        double nhi = pk / 2 < u ? all.d[pk / 2] : hi;
        best->x = cosk ? -x : x;
        best->lo = cosk ? -nhi : nlo;
        best->hi = cosk ? -nlo : nhi;
    }
    free(brk.d);
    free(okb.d);
    free(all.d);
    free(first);
    free(okfirst);
}

static int family_applies(const shoal_verify *v, const hyp_family *f, const ref_env *env)
{
    (void)env;
    if (f->need == NEED_OBSTACLES)
        return env->prm.sphere_count > 0 || v->fld.vec != NULL;
    if (f->need == NEED_PREDATORS)
        return env->mc.predator_count > 0;
    return 1;
}

/* ---- ties the bound cannot size -------------------------------------------------------- */

/* The value a threshold family compares for the pair (p, q): the squared distance, or minus
 * the view cone's cosine (as boid_breaks computes them). */
static double pair_value(const hyp_family *f, const double *p, const double *q)
{
    double e[3] = {p[0] - q[0], p[1] - q[1], p[2] - q[2]};
    double d2 = (e[0] * e[0] + e[1] * e[1]) + e[2] * e[2];
    if (f->kind != HK_COS)
        return d2;
    double vl = sqrt((p[3] * p[3] + p[4] * p[4]) + p[5] * p[5]);
    if (!(vl > 0) || d2 == 0)
        return NAN;
    return ((p[3] / vl * e[0] + p[4] / vl * e[1]) + p[5] / vl * e[2]) / sqrt(d2);
}

/* A neighbour within rounding of a threshold that decides a count (the only neighbour of a
 * term, say: a count of 0 or 1) leaves the bound's tie unbounded. Its size then comes from
 * the two worlds themselves: the boid stepped with the threshold moved just past the
 * neighbour each way (with that world's own rounding bound), the tie the largest distance
 * from the reference. For the boids beyond the rounding bound only. */
void size_ties(shoal_verify *v, const ref_env *env, const double *state, const double *next)
{
    const ref_grid *g = &v->grid;
    for (size_t i = 0; i < v->n; i++) {
        refb_out *o = &v->b[i];
        int unbounded = 0;
        for (int c = 0; c < 6; c++)
            unbounded |= !(o->tie[c] <= DBL_MAX);
        if (!unbounded || o->tie_cand < 0)
            continue;
        double ep, ev;
        errors6(v->ref + i * 6, next + i * 6, &ep, &ev);
        if (ep <= BOUND_RHO * norm3(o->err[0], o->err[1], o->err[2]) &&
            ev <= BOUND_RHO * norm3(o->err[3], o->err[4], o->err[5]))
            continue;
        const double *p = state + i * 6, *q = state + (size_t)o->tie_cand * 6;
        uint32_t rb[9], re[9];
        ref_cands c = {{g->x[0], g->x[1], g->x[2], g->x[3], g->x[4], g->x[5]}, rb, re, 0};
        c.runs = ref_grid_runs(g, p, rb, re);
        double tie[6] = {0, 0, 0, 0, 0, 0};
        int sized = 0;
        /* every threshold the pair sits within rounding of; thresholds of one value (steer's
         * alignment and cohesion radii when equal) are one comparison in float32: they flip
         * together */
        const hyp_family *near[8];
        double xs[8];
        int group[8], nn = 0, groups = 0;
        for (size_t k = 0; k < v->fam_count && nn < 8; k++) {
            const hyp_family *f = &v->fam[k];
            if (!family_applies(v, f, env) || f->kind == HK_WEIGHT || f->kind == HK_DT ||
                f->kind == HK_OFF || (f->kind == HK_R2 && f->flee))
                continue;
            double x = pair_value(f, p, q), c0 = family_value(f, env);
            if (f->kind == HK_COS)
                c0 = -c0;
            if (!(x == x) || !(fabs(x - c0) <= 1e-5 * (fabs(c0) + 1e-30)))
                continue;
            int gi = groups;
            for (int m = 0; m < nn; m++)
                if (family_value(near[m], env) == family_value(f, env) && near[m]->kind == f->kind)
                    gi = group[m];
            if (gi == groups)
                groups++;
            near[nn] = f;
            xs[nn] = x;
            group[nn++] = gi;
        }
        for (int world = 0; groups > 0 && world < (1 << groups); world++) {
            ref_env h = *env;
            for (int m = 0; m < nn; m++) {
                const hyp_family *f = near[m];
                int include = (world >> group[m]) & 1;
                /* include: the threshold at the pair's value (<=) or just past it (<) */
                double x = include ? (f->strict ? nextafter(xs[m], INFINITY) : xs[m])
                                   : (f->strict ? xs[m] : nextafter(xs[m], -INFINITY));
                family_apply(f, &h, f->kind == HK_COS ? -x : x);
                if (f->kind == HK_R2) /* a neighbour's tie: the parameter stays (classic's walls) */
                    *params64_field(&h.prm, f->info) =
                        *params64_field((params64 *)&env->prm, f->info);
            }
            /* that world's step and its own rounding bound */
            refb_out alt;
            refb_boid(&h, &c, (uint32_t)i, p, &alt);
            for (int d = 0; d < 6; d++) {
                double dd = fabs(alt.value[d] - o->value[d]) + BOUND_RHO * alt.err[d];
                tie[d] = dd > tie[d] ? dd : tie[d];
            }
            sized = 1;
        }
        if (sized)
            for (int d = 0; d < 6; d++)
                o->tie[d] = tie[d];
    }
}

/* ---- the diagnosis --------------------------------------------------------------------- */

/* The neighbourhood of a diagnosed boid: every boid within `reach`, in row order. */
static shoal_status diag_gather(shoal_verify *v, diag_boid *d, const double *state, double reach,
                                shoal_error *err)
{
    const double *p = state + (size_t)d->row * 6;
    double r2 = reach * reach;
    size_t n = 0;
    for (int pass = 0; pass < 2; pass++) {
        n = 0;
        for (size_t j = 0; j < v->n; j++) {
            const double *q = state + j * 6;
            double d2 = ((q[0] - p[0]) * (q[0] - p[0]) + (q[1] - p[1]) * (q[1] - p[1])) +
                        (q[2] - p[2]) * (q[2] - p[2]);
            if (!(d2 <= r2))
                continue;
            if (pass == 1)
                for (int k = 0; k < 6; k++)
                    d->x[k][n] = q[k];
            n++;
        }
        if (pass == 0) {
            for (int k = 0; k < 6; k++) {
                free(d->x[k]);
                d->x[k] = malloc((n ? n : 1) * sizeof(double));
                if (!d->x[k])
                    return shoal_error_set(err, SHOAL_ERR_NOMEM,
                                           "out of memory for a boid's neighbours");
            }
        }
    }
    d->cand_count = n;
    d->rb[0] = 0;
    d->re[0] = (uint32_t)n;
    return SHOAL_OK;
}

/* A radius-like value for people: squared thresholds as radii, cosines as angles. */
static double family_show(const hyp_family *f, double x)
{
    if (f->kind == HK_R2)
        return x > 0 ? sqrt(x) : x;
    if (f->kind == HK_COS)
        return acos(x < -1 ? -1 : x > 1 ? 1 : x);
    return x;
}

/* Boids beyond tolerance + tie when the whole school steps under env (double rules), or
 * SIZE_MAX when the grid cannot be built. */
static size_t count_beyond(shoal_verify *v, const ref_env *env, const double *state,
                           const double *next, shoal_error *err)
{
    if (ref_grid_build(&v->grid_h, state, v->n, ref_env_radius(env), 0, err))
        return SIZE_MAX;
    ref_school_step(env, &v->grid_h, state, v->alt, NULL, v->desc.sim.thread_count);
    size_t after = 0;
    for (size_t i = 0; i < v->n; i++)
        after += !row_explained(v, (uint32_t)i, v->alt + i * 6, next);
    return after;
}

void diagnose(shoal_verify *v, const ref_env *env, const double *state, const double *next,
              const uint32_t *idx, size_t beyond, shoal_verify_report *rep, shoal_error *err)
{
    /* the worst boids beyond the bound, up to 32: the evidence every hypothesis is fitted to */
    int count = (int)(beyond < SHOAL_VERIFY_MAX_WORST ? beyond : SHOAL_VERIFY_MAX_WORST);
    double reach = 2.0 * ref_env_radius(env) * (1.0 + 1e-9);
    for (int i = 0; i < count; i++) {
        diag_boid *d = &v->diag[i];
        d->row = idx[i];
        memcpy(d->in, state + (size_t)d->row * 6, sizeof d->in);
        memcpy(d->next, next + (size_t)d->row * 6, sizeof d->next);
        const refb_out *o = &v->b[d->row];
        d->tol_p = BOUND_RHO * norm3(o->err[0], o->err[1], o->err[2]);
        d->tol_v = BOUND_RHO * norm3(o->err[3], o->err[4], o->err[5]);
        d->tie_p = norm3(o->tie[0], o->tie[1], o->tie[2]);
        d->tie_v = norm3(o->tie[3], o->tie[4], o->tie[5]);
        if (diag_gather(v, d, state, reach, err))
            return;
        double out[6], ep, ev;
        diag_eval(env, d, out, &ep, &ev);
        d->err0 = ep + ev > 0 ? ep + ev : 1e-300;
    }
    rep->diagnosed = (size_t)count;
    const hyp_family *best_f = NULL;
    fit best = {{-1, INFINITY}, 0, 0, 0, 0};
    int explains[FAMILY_MAX];
    fit fits[FAMILY_MAX];
    for (size_t i = 0; i < v->fam_count; i++) {
        const hyp_family *f = &v->fam[i];
        explains[i] = -1;
        if (!family_applies(v, f, env))
            continue;
        fits[i] = fit_family(v, f, env, count);
        explains[i] = fits[i].s.explained;
        if (!best_f || better(fits[i].s, best.s)) {
            best = fits[i];
            best_f = f;
        }
    }
    if (!best_f)
        return;
    rep->explained = (size_t)(best.s.explained > 0 ? best.s.explained : 0);
    int convincing = best.s.explained > 0 && 4 * best.s.explained >= 3 * count;
    if (!convincing) {
        if (rep->ratio_max <= DRIFT_RATIO) {
            rep->verdict = SHOAL_VERDICT_DRIFT;
            snprintf(rep->detail, sizeof rep->detail,
                     "errors up to %.3g times the float32 bound, within the bound at half "
                     "precision; no single parameter explains them",
                     rep->ratio_max);
        } else {
            rep->verdict = SHOAL_VERDICT_RULE;
            rep->term = SHOAL_TERM_NONE;
            /* The closest term: the family that lowers the error most. But a parameter of
             * the integration (a speed limit, dt) acts on every term at once and so absorbs
             * part of any one term's difference: a term's own family that explains as many
             * and lowers the error at least half as much names the term instead (an
             * un-normalised alignment vector is alignment's, though max_speed, which rescales
             * it among the others, fits it better). */
            const hyp_family *cf = best_f;
            fit cfit = best;
            if (best_f->term == SHOAL_TERM_INTEGRATION) {
                const hyp_family *tf = NULL;
                fit tfit = best;
                for (size_t i = 0; i < v->fam_count; i++)
                    if (explains[i] >= 0 && v->fam[i].term != SHOAL_TERM_INTEGRATION &&
                        (!tf || better(fits[i].s, tfit.s))) {
                        tf = &v->fam[i];
                        tfit = fits[i];
                    }
                double gain = count - best.s.obj, tgain = tf ? count - tfit.s.obj : 0;
                if (tf && tfit.s.explained >= best.s.explained && tgain > 0 && 2 * tgain >= gain) {
                    cf = tf;
                    cfit = tfit;
                }
            }
            /* what is left of the error with the family's best value: the RMS of each boid's
             * error relative to its error under the contract */
            snprintf(rep->detail, sizeof rep->detail,
                     "no single parameter explains it; closest: %s (%s explains %d of %d, "
                     "leaves %.0f%% of the error)",
                     shoal_term_name(cf->term), cf->param,
                     cfit.s.explained > 0 ? cfit.s.explained : 0, count,
                     100.0 * sqrt(fmax(cfit.s.obj, 0.0) / count));
            size_t len = strlen(rep->detail);
            if (cf != best_f && len + 1 < sizeof rep->detail)
                snprintf(rep->detail + len, sizeof rep->detail - len,
                         "; %s (%s) leaves %.0f%% but acts on every term", best_f->param,
                         shoal_term_name(best_f->term),
                         100.0 * sqrt(fmax(best.s.obj, 0.0) / count));
        }
        return;
    }
    /* Every change that explains as many of the worst boids is applied to the whole school,
     * and the one that leaves the fewest boids beyond tolerance wins (the worst boids alone
     * may not tell, say, heading's target weight doubled from its cohesion halved: for a boid
     * without neighbours the two turn it alike). Threshold fits are narrowed on the school
     * first. */
    size_t best_after = SIZE_MAX, afters[FAMILY_MAX];
    const hyp_family *chosen = NULL;
    fit chosen_fit = best;
    for (size_t i = 0; i < v->fam_count; i++)
        afters[i] = SIZE_MAX;
    int tried = 0;
    for (size_t i = 0; i < v->fam_count && tried < 6; i++) {
        if (explains[i] != best.s.explained)
            continue;
        const hyp_family *f = &v->fam[i];
        fit r = fits[i];
        if (f->kind == HK_R2 || f->kind == HK_DIST2 || f->kind == HK_COS)
            refine_threshold(v, f, env, state, next, idx, &r, err);
        ref_env h = *env;
        family_apply(f, &h, r.x);
        size_t after = count_beyond(v, &h, state, next, err);
        afters[i] = after;
        tried++;
        /* as few left beyond: a neighbour exactly on a threshold taken the other way (a
         * strictness flip) is the smallest change, so it wins over a weight at 0 or a
         * moved threshold that does the same on this school (a lattice whose only close
         * neighbours sit on the radius: the radius test is the difference) */
        if (!chosen || after < best_after ||
            (after == best_after && r.strictness != 0 && chosen_fit.strictness == 0)) {
            chosen = f;
            chosen_fit = r;
            best_after = after;
        }
    }
    best_f = chosen;
    best = chosen_fit;
    rep->beyond_after = best_after;
    rep->verdict = SHOAL_VERDICT_RULE;
    rep->term = best_f->term;
    snprintf(rep->param, sizeof rep->param, "%s", best_f->param);
    double c0 = family_value(best_f, env);
    rep->contract_value = family_show(best_f, c0);
    double lo = family_show(best_f, best.lo), hi = family_show(best_f, best.hi);
    rep->fitted_lo = lo < hi ? lo : hi;
    rep->fitted_hi = lo < hi ? hi : lo;
    rep->strictness = best.strictness;
    if (best_f->kind == HK_WEIGHT || best_f->kind == HK_DT)
        rep->fitted_lo = rep->fitted_hi = best.x;
    char *dt = rep->detail;
    size_t ds = sizeof rep->detail;
    if (best.strictness != 0) {
        snprintf(dt, ds, "a neighbour exactly on %s is %s (the contract: %s)", best_f->param,
                 best.strictness > 0 ? "left out" : "counted",
                 best_f->strict ? "strictly inside only" : "inside or on it");
    } else if (best_f->kind == HK_OFF) {
        snprintf(dt, ds, "the other program has no %s term", shoal_term_name(best_f->term));
    } else if (best_f->kind == HK_WEIGHT && best.x == 0) {
        snprintf(dt, ds, "%s acts as 0: the term is missing (the contract: %.7g)", best_f->param,
                 c0);
    } else if (best_f->kind == HK_WEIGHT || best_f->kind == HK_DT) {
        snprintf(dt, ds, "%s acts as %.7g (the contract: %.7g)", best_f->param, best.x, c0);
    } else {
        snprintf(dt, ds, "%s acts as a value in [%.7g, %.7g] (the contract: %.7g)", best_f->param,
                 rep->fitted_lo, rep->fitted_hi, rep->contract_value);
    }
    size_t len = strlen(dt);
    if (len + 1 < ds)
        snprintf(dt + len, ds - len, "; explains %d of %d worst, %zu of %zu boids beyond with it",
                 best.s.explained, count, rep->beyond_after == SIZE_MAX ? 0 : rep->beyond_after,
                 v->n);
    /* other changes that explain as many of the worst boids, and what the school says of
     * them (a lattice whose only close neighbours sit on the radius: leaving the ties out and
     * leaving the term out are the same there, and the school too may not tell) */
    int alt = 0;
    for (size_t i = 0; i < v->fam_count; i++) {
        if (&v->fam[i] == best_f || explains[i] != best.s.explained)
            continue;
        len = strlen(dt);
        if (len + 60 < ds)
            snprintf(dt + len, ds - len, "%s%s (%s%s",
                     alt++ ? "; " : "; the worst boids fit too: ", v->fam[i].param,
                     shoal_term_name(v->fam[i].term),
                     afters[i] == SIZE_MAX     ? ")"
                     : afters[i] == best_after ? ", the school as well)"
                                               : ", not the school)");
    }
    /* which diagnosed boids the change explains */
    ref_env e2 = *env;
    family_apply(best_f, &e2, best.x);
    for (int i = 0; i < count && i < rep->worst_count; i++) {
        double out[6], ep, ev;
        diag_eval(&e2, &v->diag[i], out, &ep, &ev);
        for (int w = 0; w < rep->worst_count; w++)
            if (rep->worst[w].row == v->diag[i].row && diag_explained(&v->diag[i], ep, ev))
                rep->worst[w].explained_by = best_f->term;
    }
}

/* How much each term moves the boid's velocity in the reference step: v_ref - v_ref with the
 * term's weight at 0 (classic's walls: none). */
void term_parts(shoal_verify *v, const ref_env *env, const double *state, uint32_t row,
                shoal_verify_boid *w)
{
    double reach = ref_env_radius(env) * (1.0 + 1e-9);
    diag_boid d;
    memset(&d, 0, sizeof d);
    d.row = row;
    memcpy(d.in, state + (size_t)row * 6, sizeof d.in);
    if (diag_gather(v, &d, state, reach, NULL))
        goto done;
    double base[6], ep, ev;
    diag_eval(env, &d, base, &ep, &ev);
    int done_term[SHOAL_TERM_COUNT] = {0};
    for (size_t i = 0; i < v->fam_count; i++) {
        const hyp_family *f = &v->fam[i];
        if (done_term[f->term] || !family_applies(v, f, env) ||
            (f->kind != HK_WEIGHT && f->kind != HK_OFF) || f->term == SHOAL_TERM_INTEGRATION)
            continue;
        if (f->kind == HK_WEIGHT && !f->term_weight)
            continue; /* another factor of the term: 0 does not leave the term out */
        done_term[f->term] = 1;
        ref_env h = *env;
        family_apply(f, &h, 0);
        double out[6];
        diag_eval(&h, &d, out, &ep, &ev);
        for (int c = 0; c < 3; c++)
            w->term_dv[f->term][c] = base[3 + c] - out[3 + c];
    }
done:
    for (int k = 0; k < 6; k++)
        free(d.x[k]);
}
