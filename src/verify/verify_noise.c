/* SPDX-License-Identifier: MIT */
/* shoal verify --noise outside (shoal/verify.h, docs/VERIFY.md "Outside noise"): a program
 * that draws its own noise checked without shoal's draws. The float64 reference run with the
 * noise 0 (and couzin's turn unlimited) gives per boid the noise-free direction: vicsek's
 * mean heading, couzin's desired direction. What the noise cannot change is compared within
 * float32 tolerances (the speed, the position given the observed new velocity, couzin's turn
 * limit); the turn the noise made is checked against its support, and its probability
 * integral transform, pooled over boids and steps, against uniform (Kolmogorov-Smirnov). */
#include "shoal/sim64.h"
#include "shoal/verify.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NC_PI 3.14159265358979323846
#define NC_BINS 20
/* float32 tolerances: relative 2^-16 (a few hundred ulps of the values compared, the rounding
 * of an outside float32 step), angles 2^-12 rad (a direction rounded to float32 and averaged
 * over neighbours in float32) */
#define NC_REL 1.52587890625e-05
#define NC_ANG 2.44140625e-04

struct shoal_noise_check {
    shoal_sim_desc desc;
    shoal_sim64 *ref;
    int model, dims, periodic[3];
    double L[3], dt, u, eta, sigma, turn;
    size_t n;
    uint64_t k;
    double *det;
    double *pit;
    size_t pit_n, pit_cap;
    double rsum, rsum2, esum, esum2;
    size_t rcount, limited;
    shoal_noise_part part;
    size_t beyond;
    uint64_t worst_step;
    uint32_t worst_row;
    double worst_value, worst_limit, worst_excess;
};

static const char *const part_names[] = {"ok",         "speed",   "integration",
                                         "turn limit", "support", "distribution"};

const char *shoal_noise_part_name(shoal_noise_part p)
{
    return (unsigned)p <= SHOAL_NOISE_DISTRIBUTION ? part_names[p] : NULL;
}

shoal_status shoal_noise_check_create(const shoal_sim_desc *sim, shoal_noise_check **out,
                                      shoal_error *err)
{
    *out = NULL;
    if (sim->model != SHOAL_MODEL_VICSEK && sim->model != SHOAL_MODEL_COUZIN)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "--noise outside: model %s has no noise parameter (vicsek and "
                               "couzin have)",
                               shoal_model_name(sim->model));
    shoal_noise_check *c = calloc(1, sizeof *c);
    if (!c)
        return shoal_error_set(err, SHOAL_ERR_NOMEM, "out of memory for the noise check");
    c->desc = *sim;
    c->model = sim->model;
    c->dims = shoal_world_dims(&sim->world);
    for (int a = 0; a < 3; a++) {
        c->periodic[a] = shoal_world_axis_periodic(&sim->world, a);
        c->L[a] = sim->world.size[a];
    }
    c->dt = sim->dt_s;
    c->eta = sim->params.noise;
    c->sigma = sim->params.noise;
    c->u = c->model == SHOAL_MODEL_VICSEK ? sim->params.update_order : 1.0;
    c->turn = (double)sim->params.turn_rate_deg * (NC_PI / 180.0) * c->dt;
    shoal_sim_desc d = *sim;
    d.params.noise = 0.0f;
    if (c->model == SHOAL_MODEL_COUZIN) {
        d.params.turn_rate_deg = 1.0e6f; /* its largest: beyond pi per step unless dt < 2e-4 s */
        if (1.0e6 * (NC_PI / 180.0) * c->dt < NC_PI) {
            double dt = c->dt;
            free(c);
            return shoal_error_set(err, SHOAL_ERR_INPUT,
                                   "--noise outside: dt %g s is too small to run couzin's "
                                   "reference with the turn unlimited (needs dt >= 1.8e-4)",
                                   dt);
        }
    }
    shoal_status st = shoal_sim64_create(&d, &c->ref, err);
    if (st) {
        free(c);
        return st;
    }
    c->n = sim->boid_count;
    if (!(c->det = malloc(c->n * 6 * sizeof *c->det))) {
        shoal_noise_check_destroy(c);
        return shoal_error_set(err, SHOAL_ERR_NOMEM, "out of memory for the noise check");
    }
    *out = c;
    return SHOAL_OK;
}

void shoal_noise_check_destroy(shoal_noise_check *c)
{
    if (!c)
        return;
    shoal_sim64_destroy(c->ref);
    free(c->det);
    free(c->pit);
    free(c);
}

static void fail(shoal_noise_check *c, shoal_noise_part part, uint32_t row, double value,
                 double limit)
{
    if (c->part && part > c->part)
        return; /* the first part in the order wins; count only its boids */
    if (part < c->part || !c->part) {
        c->part = part;
        c->beyond = 0;
        c->worst_excess = -1.0;
    }
    c->beyond++;
    double ex = value - limit;
    if (ex > c->worst_excess) {
        c->worst_excess = ex;
        c->worst_step = c->k;
        c->worst_row = row;
        c->worst_value = value;
        c->worst_limit = limit;
    }
}

static int push(shoal_noise_check *c, double u)
{
    if (c->pit_n == c->pit_cap) {
        size_t cap = c->pit_cap ? 2 * c->pit_cap : 4096;
        double *p = realloc(c->pit, cap * sizeof *p);
        if (!p)
            return -1;
        c->pit = p;
        c->pit_cap = cap;
    }
    c->pit[c->pit_n++] = u < 0.0 ? 0.0 : u > 1.0 ? 1.0 : u;
    return 0;
}

/* splitmix64 of (step, row): the randomised PIT's uniform, the same on every run */
static double rand01(uint64_t step, uint32_t row, uint64_t salt)
{
    uint64_t z = step * 0x9E3779B97F4A7C15ull ^ ((uint64_t)row << 20) ^ salt;
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) * 0x1.0p-53;
}

static double norm3(const double *v) { return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }
static double dot3(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
static double wrap_pi(double a) { return a - 2.0 * NC_PI * floor((a + NC_PI) / (2.0 * NC_PI)); }
static double angle_between(const double *a, const double *b)
{
    double na = norm3(a), nb = norm3(b);
    double x[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
    return atan2(norm3(x), dot3(a, b)) + 0.0 * na * nb;
}
static double Phi(double x) { return 0.5 * erfc(-x / sqrt(2.0)); }

/* couzin 2D: P(wrap(a + sigma z) <= x), x in [-pi, pi] */
static double wn_cdf(double x, double a, double s)
{
    int K = (int)(8.0 * s / (2.0 * NC_PI)) + 2;
    double f = 0.0;
    for (int k = -K; k <= K; k++)
        f += Phi((x - a + 2.0 * NC_PI * k) / s) - Phi((-NC_PI - a + 2.0 * NC_PI * k) / s);
    return f;
}

/* density of |wrap(sigma z)| on [0, pi] */
static double tilt_pdf(double t, double s)
{
    int K = (int)(8.0 * s / (2.0 * NC_PI)) + 2;
    double f = 0.0;
    for (int k = -K; k <= K; k++) {
        double y1 = (t + 2.0 * NC_PI * k) / s, y2 = (-t + 2.0 * NC_PI * k) / s;
        f += exp(-0.5 * y1 * y1) + exp(-0.5 * y2 * y2);
    }
    return f / (s * sqrt(2.0 * NC_PI));
}

/* couzin 3D: P(angle(h, d) <= x), d the desired direction at angle a from h tilted by
 * |wrap(sigma z)| about a uniform perpendicular axis: Simpson over the tilt */
static double cz3_cdf(double x, double a, double s)
{
    enum { M = 400 };
    double hi = s * 9.0 < NC_PI ? s * 9.0 : NC_PI, h = hi / M, sum = 0.0, norm = 0.0;
    double ca = cos(a), sa = sin(a), cx = cos(x);
    for (int i = 0; i <= M; i++) {
        double t = i * h, w = (i == 0 || i == M) ? 1.0 : (i & 1) ? 4.0 : 2.0;
        double g = tilt_pdf(t, s) * w;
        double den = sa * sin(t), frac;
        if (den < 1e-300)
            frac = ca * cos(t) >= cx ? 1.0 : 0.0;
        else {
            double q = (cx - ca * cos(t)) / den;
            frac = q <= -1.0 ? 1.0 : q >= 1.0 ? 0.0 : acos(q) / NC_PI;
        }
        sum += g * frac;
        norm += g;
    }
    return norm > 0.0 ? sum / norm : 0.0;
}

shoal_status shoal_noise_check_step(shoal_noise_check *c, const double *state, const double *next,
                                    shoal_error *err)
{
    shoal_status st = shoal_sim64_set_state(c->ref, state, err);
    if (!st)
        st = shoal_sim64_step(c->ref, 1, err);
    if (st)
        return st;
    shoal_sim64_get_state(c->ref, c->det);
    for (size_t i = 0; i < c->n; i++) {
        const double *p0 = state + 6 * i, *v0 = p0 + 3, *p1 = next + 6 * i, *v1 = p1 + 3;
        const double *pd = c->det + 6 * i, *vd = pd + 3;
        uint32_t row = (uint32_t)i;
        for (int a = 0; a < 6; a++)
            if (!isfinite(p1[a]))
                return shoal_error_set(err, SHOAL_ERR_INPUT,
                                       "state %llu row %zu: a value is not finite",
                                       (unsigned long long)c->k + 1, i);
        double s0 = norm3(v0), s1 = norm3(v1), sd = norm3(vd);
        double speed_tol = NC_REL * (sd > s0 ? sd : s0) + 1e-30;
        if (fabs(s1 - sd) > speed_tol) {
            fail(c, SHOAL_NOISE_SPEED, row, fabs(s1 - sd), speed_tol);
            continue;
        }
        double e2 = 0.0, scale = 0.0;
        for (int a = 0; a < 3; a++) {
            double e = p1[a] - (pd[a] + c->dt * c->u * (v1[a] - vd[a]));
            if (c->periodic[a] && c->L[a] > 0.0)
                e -= c->L[a] * nearbyint(e / c->L[a]);
            e2 += e * e;
            double m = fabs(p0[a]) + c->dt * (fabs(v0[a]) + fabs(v1[a]));
            if (c->periodic[a] && c->L[a] > m)
                m = c->L[a];
            scale = m > scale ? m : scale;
        }
        double pos_tol = NC_REL * scale + 1e-30;
        if (sqrt(e2) > pos_tol) {
            fail(c, SHOAL_NOISE_INTEGRATION, row, sqrt(e2), pos_tol);
            continue;
        }
        if (c->model == SHOAL_MODEL_VICSEK) {
            double half = 0.5 * c->eta;
            if (c->dims == 2) {
                double r = wrap_pi(atan2(v1[1], v1[0]) - atan2(vd[1], vd[0]));
                if (fabs(r) > half + NC_ANG) {
                    fail(c, SHOAL_NOISE_SUPPORT, row, fabs(r), half);
                    continue;
                }
                c->rsum += r;
                c->rsum2 += r * r;
                c->rcount++;
                if (c->eta > 0.0 && push(c, (r + half) / c->eta))
                    goto nomem;
            } else {
                double th = angle_between(vd, v1);
                if (th > half + NC_ANG) {
                    fail(c, SHOAL_NOISE_SUPPORT, row, th, half);
                    continue;
                }
                c->rsum += th;
                c->rsum2 += th * th;
                c->rcount++;
                double chalf = cos(half);
                if (c->eta > 0.0 && push(c, (1.0 - cos(th)) / (1.0 - chalf)))
                    goto nomem;
                /* the azimuth about the mean, in a fixed basis of it */
                double m[3] = {vd[0] / sd, vd[1] / sd, vd[2] / sd}, ref[3] = {0, 0, 0};
                int ax = fabs(m[0]) < fabs(m[1]) ? (fabs(m[0]) < fabs(m[2]) ? 0 : 2)
                                                 : (fabs(m[1]) < fabs(m[2]) ? 1 : 2);
                ref[ax] = 1.0;
                double e1[3] = {m[1] * ref[2] - m[2] * ref[1], m[2] * ref[0] - m[0] * ref[2],
                                m[0] * ref[1] - m[1] * ref[0]};
                double n1 = norm3(e1);
                for (int a = 0; a < 3; a++)
                    e1[a] /= n1;
                double e2v[3] = {m[1] * e1[2] - m[2] * e1[1], m[2] * e1[0] - m[0] * e1[2],
                                 m[0] * e1[1] - m[1] * e1[0]};
                if (th > 1e-3 && c->eta > 0.0 &&
                    push(c, (atan2(dot3(v1, e2v), dot3(v1, e1)) + NC_PI) / (2.0 * NC_PI)))
                    goto nomem;
            }
        } else { /* couzin */
            double T = c->turn, sg = c->sigma;
            int unlimited = T >= NC_PI;
            double obs = c->dims == 2 ? wrap_pi(atan2(v1[1], v1[0]) - atan2(v0[1], v0[0]))
                                      : angle_between(v0, v1);
            if (!unlimited && fabs(obs) > T + NC_ANG) {
                fail(c, SHOAL_NOISE_TURN_LIMIT, row, fabs(obs), T);
                continue;
            }
            int lim = !unlimited && fabs(obs) >= T - NC_ANG;
            double U;
            if (c->dims == 2) {
                double a = wrap_pi(atan2(vd[1], vd[0]) - atan2(v0[1], v0[0]));
                if (sg <= 0.0)
                    continue;
                if (lim) {
                    double lo = obs > 0 ? wn_cdf(T, a, sg) : 0.0;
                    double hi = obs > 0 ? 1.0 : wn_cdf(-T, a, sg);
                    U = lo + (hi - lo) * rand01(c->k, row, 0x6e6f697365ull);
                    c->limited++;
                } else {
                    U = wn_cdf(obs, a, sg);
                    double r = wrap_pi(obs - a);
                    c->rsum += r;
                    c->rsum2 += r * r;
                    c->rcount++;
                }
            } else {
                double a = angle_between(v0, vd);
                if (sg <= 0.0)
                    continue;
                if (lim) {
                    double lo = cz3_cdf(T, a, sg);
                    U = lo + (1.0 - lo) * rand01(c->k, row, 0x6e6f697365ull);
                    c->limited++;
                } else {
                    U = cz3_cdf(obs, a, sg);
                    double r = angle_between(vd, v1);
                    c->rsum += r;
                    c->rsum2 += r * r;
                    c->rcount++;
                }
            }
            if (push(c, U))
                goto nomem;
        }
    }
    c->k++;
    return SHOAL_OK;
nomem:
    return shoal_error_set(err, SHOAL_ERR_NOMEM, "out of memory for the noise check");
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Kolmogorov's distribution, Stephens' small-sample correction */
static double ks_pvalue(double d, size_t n)
{
    double sn = sqrt((double)n), l = (sn + 0.12 + 0.11 / sn) * d;
    if (l < 0.2)
        return 1.0;
    double s = 0.0;
    for (int j = 1; j <= 100; j++) {
        double t = 2.0 * ((j & 1) ? 1.0 : -1.0) * exp(-2.0 * j * j * l * l);
        s += t;
        if (fabs(t) < 1e-16)
            break;
    }
    return s < 0.0 ? 0.0 : s > 1.0 ? 1.0 : s;
}

/* the upper tail of chi-square with k degrees of freedom (k odd or even; series) */
static double chi2_upper(double x, int k)
{
    /* regularized upper incomplete gamma Q(k/2, x/2) by its series / continued fraction */
    double a = 0.5 * k, z = 0.5 * x;
    if (z <= 0.0)
        return 1.0;
    double lg = lgamma(a);
    if (z < a + 1.0) {
        double term = 1.0 / a, sum = term;
        for (int n = 1; n < 500; n++) {
            term *= z / (a + n);
            sum += term;
            if (term < sum * 1e-15)
                break;
        }
        double p = sum * exp(-z + a * log(z) - lg);
        return 1.0 - p;
    }
    double b = z + 1.0 - a, cc = 1.0 / 1e-300, d = 1.0 / b, h = d;
    for (int i = 1; i < 500; i++) {
        double an = -i * (i - a);
        b += 2.0;
        d = an * d + b;
        if (fabs(d) < 1e-300)
            d = 1e-300;
        cc = b + an / cc;
        if (fabs(cc) < 1e-300)
            cc = 1e-300;
        d = 1.0 / d;
        double del = d * cc;
        h *= del;
        if (fabs(del - 1.0) < 1e-15)
            break;
    }
    return exp(-z + a * log(z) - lg) * h;
}

void shoal_noise_check_result(shoal_noise_check *c, shoal_noise_result *r)
{
    memset(r, 0, sizeof *r);
    r->steps = (size_t)c->k;
    r->samples = c->pit_n;
    r->limited = c->limited;
    r->ks_p = r->chi2_p = NAN;
    r->ks_d = r->chi2 = NAN;
    if (c->pit_n > 0) {
        qsort(c->pit, c->pit_n, sizeof *c->pit, cmp_d);
        double n = (double)c->pit_n, d = 0.0;
        size_t bins[NC_BINS] = {0};
        for (size_t i = 0; i < c->pit_n; i++) {
            double u = c->pit[i], a = u - (double)i / n, b = (double)(i + 1) / n - u;
            d = a > d ? a : d;
            d = b > d ? b : d;
            int k = (int)(u * NC_BINS);
            bins[k >= NC_BINS ? NC_BINS - 1 : k]++;
        }
        r->ks_d = d;
        r->ks_p = ks_pvalue(d, c->pit_n);
        double e = n / NC_BINS, x2 = 0.0;
        for (int k = 0; k < NC_BINS; k++)
            x2 += ((double)bins[k] - e) * ((double)bins[k] - e) / e;
        r->chi2 = x2;
        r->chi2_p = chi2_upper(x2, NC_BINS - 1);
    }
    r->resid_mean = c->rcount ? c->rsum / (double)c->rcount : NAN;
    r->resid_sd =
        c->rcount > 1
            ? sqrt(fmax(0.0, (c->rsum2 - c->rsum * r->resid_mean) / (double)(c->rcount - 1)))
            : NAN;
    /* the declared noise's residual: vicsek 2D uniform on [-eta/2, eta/2]; 3D the tilt of
     * the uniform cap; couzin the normal's (wrapped: close for sigma << pi) */
    double h = 0.5 * c->eta;
    if (c->model == SHOAL_MODEL_VICSEK && c->dims == 2) {
        r->expect_mean = 0.0;
        r->expect_sd = c->eta / sqrt(12.0);
    } else if (c->model == SHOAL_MODEL_VICSEK) {
        /* tilt density sin t / (1 - cos h) on [0, h] */
        double ch = cos(h), sh = sin(h), den = 1.0 - ch;
        double m1 = den > 0 ? (sh - h * ch) / den : 0.0;
        double m2 = den > 0 ? (2.0 * h * sh - (h * h - 2.0) * ch - 2.0) / den : 0.0;
        r->expect_mean = m1;
        r->expect_sd = sqrt(fmax(0.0, m2 - m1 * m1));
    } else if (c->dims == 2) {
        r->expect_mean = 0.0;
        r->expect_sd = c->sigma;
    } else {
        r->expect_mean = c->sigma * sqrt(2.0 / NC_PI);
        r->expect_sd = c->sigma * sqrt(1.0 - 2.0 / NC_PI);
    }
    r->part = c->part;
    r->beyond = c->beyond;
    r->worst_step = c->worst_step;
    r->worst_row = c->worst_row;
    r->worst_value = c->worst_value;
    r->worst_limit = c->worst_limit;
    const char *unit = c->part == SHOAL_NOISE_SPEED || c->part == SHOAL_NOISE_INTEGRATION
                           ? (c->part == SHOAL_NOISE_SPEED ? "units/s" : "units")
                           : "rad";
    if (c->part == SHOAL_NOISE_SUPPORT)
        snprintf(r->detail, sizeof r->detail,
                 "the noise's turn %.6g rad is outside its support [-%.6g, %.6g] (eta/2) at "
                 "step %llu row %u; %zu boid-steps beyond",
                 r->worst_value, r->worst_limit, r->worst_limit, (unsigned long long)r->worst_step,
                 r->worst_row, r->beyond);
    else if (c->part)
        snprintf(r->detail, sizeof r->detail,
                 "%s: %.6g %s against a limit of %.6g at step %llu row %u; %zu boid-steps beyond",
                 part_names[c->part], r->worst_value, unit, r->worst_limit,
                 (unsigned long long)r->worst_step, r->worst_row, r->beyond);
    else if (c->pit_n > 0 && r->ks_p < SHOAL_NOISE_P_MIN) {
        r->part = SHOAL_NOISE_DISTRIBUTION;
        snprintf(r->detail, sizeof r->detail,
                 "the noise's distribution: KS D %.4g p %.3g < %.0e over %zu samples "
                 "(residual mean %.4g sd %.4g rad, expected %.4g sd %.4g)",
                 r->ks_d, r->ks_p, SHOAL_NOISE_P_MIN, r->samples, r->resid_mean, r->resid_sd,
                 r->expect_mean, r->expect_sd);
    } else
        snprintf(r->detail, sizeof r->detail,
                 "the noise agrees: KS D %.4g p %.3g over %zu samples (residual mean %.4g sd "
                 "%.4g rad, expected %.4g sd %.4g)",
                 r->ks_d, r->ks_p, r->samples, r->resid_mean, r->resid_sd, r->expect_mean,
                 r->expect_sd);
}
