/* SPDX-License-Identifier: MIT */
/* An independent float64 reference for every model, the obstacle spheres, the obstacle
 * field, flee and the predators, written from the equations of docs/MODELS.md (it
 * calls none of the library's rule, field or predator code: only create/set/step/get).
 *
 * - Random: hundreds of seeded parameter sets per model (unequal radii, which runs the
 *   "non-shared mask" branch of steer/average; zero and negative weights; extreme but
 *   valid values; spheres, predators and obstacle meshes on some), random small states,
 *   every supported ISA, grid and brute force, 1 or 2 threads. Each of 3 steps is checked
 *   against the reference taken from the engine's state at the start of that step.
 * - Thresholds: boids placed exactly on every radius, squared distance, angle and wall
 *   threshold, and one float step past it; the reference must tell the two apart and the
 *   engine must agree with it on both sides.
 *
 * Tolerance. The engine works in float32 (eps = 2^-24 ~ 6e-8 per operation); each result is
 * a short chain of sums (at most ~150 terms here) and products. A boid's error is bounded
 * by about k * eps * (1 + cond) * S, where S is the size of the quantities that enter its
 * update (|p|, |v|, dt * the sum of |each force term|, see `scale` below) and cond is the
 * worst conditioning of a normalize() on its path (|sum of |terms|| / |sum|). With k = 64
 * (sums of up to 150 terms rarely lose more than sqrt(150) ~ 12 ulps, plus the divisions
 * and square roots after them) the bound is REL_TOL = 4e-6 times (1 + cond) times S. A
 * boid whose result sits on a discontinuity that float rounding can cross (a neighbour
 * within rounding of a radius, an angle, a wall, two equidistant targets, a field cell
 * edge, a normalize() with cond > 1000) is counted and skipped; the test asserts that such
 * skips stay rare (< 5 % of the boid checks; 0.2 % to 2.2 % in practice), so the reference really
 * checks the engine. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "shoal/shoal.h"
#include "sim/models.h"
#include "tests/scenes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REL_TOL 4e-6
#ifndef CLASSIC_SUM_8
#define CLASSIC_SUM_8 0
#endif
#define COND_MAX 1000.0

/* ---- a private PRNG (splitmix64), so the sets do not depend on the library's ---- */
static uint64_t rs;
static uint64_t rnext(void)
{
    uint64_t z = (rs += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static double runi(double lo, double hi) { return lo + (hi - lo) * ((rnext() >> 11) * 0x1p-53); }
static int rint_(int lo, int hi) { return lo + (int)(rnext() % (uint64_t)(hi - lo + 1)); }
static int rchance(double p) { return runi(0, 1) < p; }

/* ---- double vectors ---- */
typedef struct d3 {
    double x, y, z;
} d3;
static d3 mk(double x, double y, double z) { return (d3){x, y, z}; }
static d3 add(d3 a, d3 b) { return mk(a.x + b.x, a.y + b.y, a.z + b.z); }
static d3 sub(d3 a, d3 b) { return mk(a.x - b.x, a.y - b.y, a.z - b.z); }
static d3 mul(d3 a, double s) { return mk(a.x * s, a.y * s, a.z * s); }
static double dot(d3 a, d3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static double len(d3 a) { return sqrt(dot(a, a)); }
static double comp(d3 a, int c) { return c == 0 ? a.x : c == 1 ? a.y : a.z; }
static d3 f3(const float *f) { return mk(f[0], f[1], f[2]); }

/* Per boid bookkeeping of the reference: the size S of its update, its worst
 * normalize() conditioning, and whether it sits on a rounding-sensitive discontinuity. */
typedef struct book {
    double force_abs; /* sum of |each force term| (before dt) */
    double cond;
    int ambiguous;
    int strict; /* threshold tests: no ambiguity detection (placed exactly) */
} book;

/* |x| <= eps_rel * scale: a test that float rounding could flip */
static void near_edge(book *b, double x, double scale, double eps_rel)
{
    if (!b->strict && fabs(x) <= eps_rel * scale)
        b->ambiguous = 1;
}

/* normalize(x) where x was summed from terms whose magnitudes add to `abs_sum`. */
static d3 nrm(d3 x, double abs_sum, book *b)
{
    double l = len(x);
    if (l == 0) {
        if (abs_sum > 0 && !b->strict)
            b->ambiguous = 1; /* an exact cancellation that float may not reproduce */
        return mk(0, 0, 0);
    }
    double c = abs_sum / l;
    if (c > b->cond)
        b->cond = c;
    if (c > COND_MAX && !b->strict)
        b->ambiguous = 1;
    return mul(x, 1.0 / l);
}
static d3 limit(d3 a, double m)
{
    double l = len(a);
    return l > m ? mul(a, m / l) : a;
}
static d3 clamp_speed(d3 v, double lo, double hi, book *b)
{
    double l = len(v);
    if (l > 0 && l < lo) {
        nrm(v, l + hi, b); /* direction of a short vector: conditioning */
        return mul(v, lo / l);
    }
    if (l > hi)
        return mul(v, hi / l);
    return v;
}

/* ---- the world the reference steps ---- */
#define MAXN 320
typedef struct field_ref {
    int on;
    double origin[3], cell;
    int dims[3];
    double *vec;
} field_ref;

typedef struct world {
    shoal_model model;
    shoal_params q;
    double dt;
    int n;
    d3 p[MAXN], v[MAXN];
    int tc;
    d3 targets[SHOAL_MAX_TARGETS];
    int pc;
    d3 pred_p[SHOAL_MAX_PREDATORS], pred_v[SHOAL_MAX_PREDATORS];
    field_ref fld;
} world;

typedef struct out {
    d3 p[MAXN], v[MAXN];
    book b[MAXN];
    d3 pred_p[SHOAL_MAX_PREDATORS], pred_v[SHOAL_MAX_PREDATORS];
    int pred_ambiguous;
} out;

/* ---- obstacle field (docs/MODELS.md "Obstacle field") ---- */
static void rot_matrix(const float deg[3], double m[9])
{
    const double k = 3.14159265358979323846 / 180.0;
    double ax = deg[0] * k, ay = deg[1] * k, az = deg[2] * k;
    /* R = Ry Rx Rz */
    double Rz[9] = {cos(az), -sin(az), 0, sin(az), cos(az), 0, 0, 0, 1};
    double Rx[9] = {1, 0, 0, 0, cos(ax), -sin(ax), 0, sin(ax), cos(ax)};
    double Ry[9] = {cos(ay), 0, sin(ay), 0, 1, 0, -sin(ay), 0, cos(ay)};
    double t[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            t[3 * i + j] = 0;
            for (int l = 0; l < 3; l++)
                t[3 * i + j] += Rx[3 * i + l] * Rz[3 * l + j];
        }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            m[3 * i + j] = 0;
            for (int l = 0; l < 3; l++)
                m[3 * i + j] += Ry[3 * i + l] * t[3 * l + j];
        }
}

typedef struct mesh_in {
    int count;
    float pos[3 * 12], nrm[3 * 12];
    shoal_transform xf;
} mesh_in;

/* Builds the reference field; returns 0 when a vertex lies within rounding of a cell edge
 * or the grid size within rounding of an integer (the caller draws again). */
static int field_ref_build(field_ref *f, const mesh_in *ms, int mesh_count, double cell,
                           double margin)
{
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    static double w[16][12][3], nw[16][12][3];
    for (int o = 0; o < mesh_count; o++) {
        double m[9];
        rot_matrix(ms[o].xf.rotation_deg, m);
        for (int v = 0; v < ms[o].count; v++)
            for (int i = 0; i < 3; i++) {
                double r = 0, rn = 0;
                for (int j = 0; j < 3; j++) {
                    r += m[3 * i + j] * ms[o].pos[3 * v + j];
                    rn += m[3 * i + j] * ms[o].nrm[3 * v + j];
                }
                w[o][v][i] = r * ms[o].xf.scale[i] + ms[o].xf.position[i];
                nw[o][v][i] = rn;
                lo[i] = fmin(lo[i], w[o][v][i]);
                hi[i] = fmax(hi[i], w[o][v][i]);
            }
    }
    size_t cells = 1;
    for (int c = 0; c < 3; c++) {
        f->origin[c] = lo[c] - margin;
        double span = (hi[c] + margin - f->origin[c]) / cell;
        if (fabs(span - floor(span + 0.5)) < 1e-3)
            return 0;
        f->dims[c] = (int)floor(span) + 1;
        cells *= (size_t)f->dims[c];
    }
    f->cell = cell;
    free(f->vec);
    f->vec = calloc(cells * 3, sizeof(double));
    assert_non_null(f->vec);
    for (int o = 0; o < mesh_count; o++)
        for (int v = 0; v < ms[o].count; v++) {
            int idx[3];
            for (int c = 0; c < 3; c++) {
                double u = (w[o][v][c] - f->origin[c]) / cell;
                if (fabs(u - floor(u + 0.5)) < 1e-3)
                    return 0;
                idx[c] = (int)floor(u);
                idx[c] = idx[c] < 0 ? 0 : idx[c] >= f->dims[c] ? f->dims[c] - 1 : idx[c];
            }
            double *d = f->vec + 3 * (idx[0] + f->dims[0] * (idx[1] + f->dims[1] * idx[2]));
            for (int c = 0; c < 3; c++)
                d[c] += nw[o][v][c];
            for (int a = 0; a < 3; a++) {
                double na = nw[o][v][a];
                if (na == 0)
                    continue;
                if (fabs(na) < 1e-6)
                    return 0; /* a sign float rounding could flip */
                int j[3] = {idx[0], idx[1], idx[2]};
                j[a] += na > 0 ? 1 : -1;
                if (j[a] < 0 || j[a] >= f->dims[a])
                    continue;
                double *q = f->vec + 3 * (j[0] + f->dims[0] * (j[1] + f->dims[1] * j[2]));
                for (int c = 0; c < 3; c++)
                    q[c] += nw[o][v][c] * fabs(na);
            }
        }
    f->on = 1;
    return 1;
}

static d3 field_sample_ref(const field_ref *f, d3 p, book *b)
{
    if (!f->on)
        return mk(0, 0, 0);
    int idx[3];
    for (int c = 0; c < 3; c++) {
        double u = (comp(p, c) - f->origin[c]) / f->cell;
        double fr = u - floor(u);
        if (fr < 1e-4 || fr > 1 - 1e-4)
            near_edge(b, 0, 1, 1); /* on a cell edge: rounding decides the cell */
        if (u < 0 || u >= f->dims[c])
            return mk(0, 0, 0);
        idx[c] = (int)floor(u);
    }
    const double *d = f->vec + 3 * (idx[0] + f->dims[0] * (idx[1] + f->dims[1] * idx[2]));
    return mk(d[0], d[1], d[2]);
}

/* spheres, field, flee: the terms every model adds (docs/MODELS.md) */
static d3 sphere_force(const world *w, d3 p, book *b)
{
    d3 acc = mk(0, 0, 0);
    for (int k = 0; k < (int)w->q.sphere_count; k++) {
        const shoal_sphere *sp = &w->q.spheres[k];
        d3 e = sub(p, f3(sp->center));
        double d = len(e), reach = 2.0 * sp->radius;
        if (d > 0 && d < reach) {
            acc = add(acc, mul(e, (reach - d) / sp->radius / d));
            b->force_abs += fabs(w->q.avoid_force) * (reach - d) / sp->radius;
        }
    }
    return mul(acc, w->q.avoid_force);
}
static d3 flee_force(const world *w, d3 p, book *b)
{
    d3 acc = mk(0, 0, 0);
    double R = w->q.flee_radius;
    for (int k = 0; k < w->pc; k++) {
        d3 e = sub(p, w->pred_p[k]);
        double d = len(e);
        if (d > 0 && d < R) {
            acc = add(acc, mul(e, (R - d) / R / d));
            b->force_abs += fabs(w->q.flee_weight) * (R - d) / R;
        }
    }
    return mul(acc, w->q.flee_weight);
}
static d3 extra_forces(const world *w, d3 p, book *b)
{
    d3 fd = mul(field_sample_ref(&w->fld, p, b), w->q.avoid_force);
    b->force_abs += len(fd);
    return add(fd, flee_force(w, p, b));
}

/* ---- the models (docs/MODELS.md) ---- */
static void step_steer_average(const world *w, int i, out *o)
{
    const shoal_params *q = &w->q;
    book *b = &o->b[i];
    int steer = w->model == SHOAL_MODEL_STEER;
    d3 pi = w->p[i], vi = w->v[i];
    d3 ss = mk(0, 0, 0), as = ss, cs = ss;
    double ss_abs = 0, as_abs = 0;
    int sn = 0, an = 0, cn = 0;
    /* the engine compares d^2 with r*r rounded to float */
    double sr2 = (float)(q->sep_radius * q->sep_radius);
    double ar2 = (float)(q->ali_radius * q->ali_radius);
    double cr2 = (float)(q->coh_radius * q->coh_radius);
    for (int j = 0; j < w->n; j++) {
        d3 diff = sub(pi, w->p[j]);
        double d2 = dot(diff, diff);
        if (d2 == 0)
            continue;
        double sc = 1e-5 * (dot(pi, pi) + dot(w->p[j], w->p[j]) + d2);
        near_edge(b, d2 - sr2, sc, 1);
        near_edge(b, d2 - ar2, sc, 1);
        near_edge(b, d2 - cr2, sc, 1);
        if (d2 <= sr2) {
            d3 t = steer ? mul(diff, 1.0 / d2) : diff;
            ss = add(ss, t);
            ss_abs += len(t);
            sn++;
        }
        if (d2 <= ar2) {
            as = add(as, w->v[j]);
            as_abs += len(w->v[j]);
            an++;
        }
        if (d2 <= cr2) {
            cs = add(cs, w->p[j]);
            cn++;
        }
    }
    d3 f = mk(0, 0, 0);
    if (steer) {
        double ms = q->max_speed, mst = q->max_steer;
        if (an) {
            d3 t = limit(sub(mul(nrm(mul(as, 1.0 / an), as_abs / an, b), ms), vi), mst);
            f = add(f, mul(t, q->ali_weight));
            b->force_abs += fabs(q->ali_weight) * (ms + len(vi));
        }
        if (cn) {
            d3 c = sub(mul(cs, 1.0 / cn), pi);
            /* cancellation: the mean position minus p_i, both of size |p| */
            d3 t = limit(sub(mul(nrm(c, len(pi) + len(c), b), ms), vi), mst);
            f = add(f, mul(t, q->coh_weight));
            b->force_abs += fabs(q->coh_weight) * (ms + len(vi));
        }
        if (sn) {
            d3 t = limit(sub(mul(nrm(mul(ss, 1.0 / sn), ss_abs / sn, b), ms), vi), mst);
            f = add(f, mul(t, q->sep_weight));
            b->force_abs += fabs(q->sep_weight) * (ms + len(vi));
        }
    } else {
        double fa = 0;
        if (sn) {
            f = add(f, mul(ss, q->sep_weight / sn));
            fa += fabs(q->sep_weight) * ss_abs / sn;
        }
        if (an) {
            f = add(f, mul(as, q->ali_weight / an));
            fa += fabs(q->ali_weight) * as_abs / an;
        }
        if (cn) {
            d3 c = sub(mul(cs, 1.0 / cn), pi);
            f = add(f, mul(c, q->coh_weight));
            fa += fabs(q->coh_weight) * (len(pi) + len(c));
        }
        if (len(f) > q->max_steer)
            nrm(f, fa, b);
        f = limit(f, q->max_steer);
        b->force_abs += fmin(fa, 2 * q->max_steer + fa * 1e-3);
    }
    for (int c = 0; c < 3; c++) {
        double lo = (double)q->wall_center[c] - (double)q->wall_size[c] * 0.5;
        double hi = (double)q->wall_center[c] + (double)q->wall_size[c] * 0.5;
        double pc = comp(pi, c), wv = 0;
        near_edge(b, pc - lo, 1 + fabs(lo), 1e-6);
        near_edge(b, pc - hi, 1 + fabs(hi), 1e-6);
        if (pc < lo)
            wv += 1;
        if (pc > hi)
            wv -= 1;
        double add_ = wv * q->wall_weight;
        if (c == 0)
            f.x += add_;
        else if (c == 1)
            f.y += add_;
        else
            f.z += add_;
        b->force_abs += fabs(add_);
    }
    f = add(f, sphere_force(w, pi, b));
    f = add(f, extra_forces(w, pi, b));
    o->v[i] = limit(add(vi, mul(f, w->dt)), q->max_speed);
    o->p[i] = add(pi, mul(o->v[i], w->dt));
}

static void step_heading(const world *w, int i, out *o)
{
    const shoal_params *q = &w->q;
    book *b = &o->b[i];
    d3 pi = w->p[i], vi = w->v[i];
    double R = q->neighbor_radius, r2 = (float)(q->neighbor_radius * q->neighbor_radius);
    d3 sep = mk(0, 0, 0), ali = sep, coh = sep;
    int n = 0;
    for (int j = 0; j < w->n; j++) {
        d3 e = sub(w->p[j], pi);
        double d2 = dot(e, e);
        if (d2 == 0)
            continue;
        near_edge(b, d2 - r2, 1e-5 * (dot(pi, pi) + dot(w->p[j], w->p[j]) + d2), 1);
        if (!(d2 < r2))
            continue;
        double d = sqrt(d2);
        sep = add(sep, mul(e, -(R - d) / R / d));
        double vl = len(w->v[j]);
        ali = add(ali, vl > 0 ? mul(w->v[j], 1.0 / vl) : mk(0, 0, 0));
        coh = add(coh, w->p[j]);
        n++;
    }
    double a = 1.0 / (n > 1 ? n : 1);
    sep = mul(sep, a * q->sep_weight);
    ali = mul(ali, a * q->ali_weight);
    d3 cm = sub(mul(coh, a), pi);
    coh = mul(cm, q->coh_weight);
    double fa = fabs(q->sep_weight) + fabs(q->ali_weight) +
                fabs(q->coh_weight) * (len(pi) + len(cm) + 1e-30);
    int best = 0;
    double bd = INFINITY, bd2 = INFINITY;
    for (int k = 0; k < w->tc; k++) {
        d3 t = sub(w->targets[k], pi);
        double dd = dot(t, t);
        if (dd < bd) {
            bd2 = bd;
            bd = dd;
            best = k;
        } else if (dd < bd2) {
            bd2 = dd;
        }
    }
    if (w->tc > 1)
        near_edge(b, bd2 - bd, bd2 + dot(pi, pi), 1e-5);
    d3 tp = sub(w->targets[best], pi);
    fa += fabs(q->target_weight) * (len(tp) + len(pi));
    d3 fs = add(add(add(mul(tp, q->target_weight), sep), ali), coh);
    b->force_abs = 0;
    fs = add(fs, sphere_force(w, pi, b));
    fs = add(fs, extra_forces(w, pi, b));
    fa += b->force_abs;
    d3 f = nrm(fs, fa, b);
    double vl = len(vi);
    d3 dir = vl > 0 ? mul(vi, 1.0 / vl) : mk(0, 0, 0);
    double s = (double)(float)(q->rotate_speed * (float)w->dt);
    d3 l = add(dir, mul(sub(f, dir), s));
    dir = nrm(l, 1 + fabs(s) * 2 + fabs(1 - s), b);
    dir.y = dir.y < -0.5 ? -0.5 : dir.y > 0.5 ? 0.5 : dir.y;
    dir = nrm(dir, 1, b);
    o->p[i] = add(pi, mul(dir, q->move_speed * w->dt));
    o->v[i] = mul(dir, q->move_speed);
    b->force_abs = q->move_speed; /* the size of v */
}

static void step_classic(const world *w, int i, out *o)
{
    const shoal_params *q = &w->q;
    book *b = &o->b[i];
    d3 pi = w->p[i], vi = w->v[i];
    d3 r1 = mk(0, 0, 0), vs = r1, ps = r1;
    double r1_abs = 0;
    int n1 = 0, n = 0;
    const d3 normals[6] = {mk(0, -1, 0), mk(0, 1, 0),  mk(1, 0, 0),
                           mk(-1, 0, 0), mk(0, 0, -1), mk(0, 0, 1)};
    const double sd[6] = {(double)q->box_max[1] - pi.y, pi.y - q->box_min[1],
                          pi.x - q->box_min[0],         (double)q->box_max[0] - pi.x,
                          (double)q->box_max[2] - pi.z, pi.z - q->box_min[2]};
    double k = q->sep_strength;
    for (int s = 0; s < 6; s++) {
        near_edge(b, sd[s] - q->fov, 1e-6 * (1 + fabs(q->fov) + len(pi)), 1);
        if (sd[s] > q->fov)
            continue;
        near_edge(b, sd[s], 1e-6 * (1 + len(pi)), 1);
        if (sd[s] == 0)
            continue;
        d3 e = mul(normals[s], -sd[s]); /* q - p */
        double d = fabs(sd[s]);
        d3 t = mul(e, -k / (d * d * d));
        r1 = add(r1, t);
        r1_abs += len(t);
        n1++;
    }
    double r2 = (float)(q->fov * q->fov);
    for (int j = 0; j < w->n; j++) {
        d3 e = sub(w->p[j], pi);
        double d2 = dot(e, e);
        if (d2 == 0)
            continue;
        near_edge(b, d2 - r2, 1e-5 * (dot(pi, pi) + dot(w->p[j], w->p[j]) + d2), 1);
        if (d2 > r2)
            continue;
        double d = sqrt(d2);
        d3 t = mul(e, -k / (d2 * d));
        r1 = add(r1, t);
        r1_abs += len(t);
        n1++;
        vs = add(vs, w->v[j]);
        ps = add(ps, w->p[j]);
        n++;
    }
    d3 a1 = n1 ? mul(r1, 1.0 / n1) : mk(0, 0, 0);
    d3 a2 = n ? sub(mul(vs, 1.0 / n), vi) : mk(0, 0, 0);
    d3 a3 = n ? sub(mul(ps, 1.0 / n), pi) : mk(0, 0, 0);
    /* MODELS.md: a = (w1 r1 + w2 r2 + w3 r3) / (w1 + w2 + w3); a zero sum gives 0 */
    double wsum = (double)q->w1 + q->w2 + q->w3;
    double fa = fabs(q->w1) * (n1 ? r1_abs / n1 : 0) + fabs(q->w2) * (len(vi) + q->max_speed) +
                fabs(q->w3) * (len(pi) + len(a3));
    d3 acc = mk(0, 0, 0);
    if (wsum != 0) {
        acc = mul(add(add(mul(a1, q->w1), mul(a2, q->w2)), mul(a3, q->w3)), 1.0 / wsum);
        fa /= fabs(wsum);
        /* a sum of weights that nearly cancels magnifies the rounding of the weights' sum */
        double wabs = fabs(q->w1) + fabs(q->w2) + fabs(q->w3);
        fa *= 1 + wabs / fabs(wsum);
    } else {
        fa = 0;
    }
    b->force_abs = fa;
    acc = add(acc, sphere_force(w, pi, b));
    acc = add(acc, extra_forces(w, pi, b));
    double dt = w->dt;
    o->p[i] = add(pi, add(mul(vi, dt), mul(acc, dt * dt * 0.5)));
    o->v[i] = clamp_speed(add(vi, mul(acc, dt)), q->min_speed, q->max_speed, b);
}

static void step_fov(const world *w, int i, out *o)
{
    const shoal_params *q = &w->q;
    book *b = &o->b[i];
    d3 pi = w->p[i], vi = w->v[i];
    d3 cs = mk(0, 0, 0), sep = cs, as = cs;
    double sep_abs = 0, as_abs = 0;
    int cn = 0, an = 0;
    double vl = len(vi);
    d3 vh = vl > 0 ? mul(vi, 1.0 / vl) : mk(0, 0, 0);
    for (int j = 0; j < w->n; j++) {
        d3 e = sub(w->p[j], pi);
        double d2 = dot(e, e);
        if (d2 == 0)
            continue;
        double sc = 1e-5 * (dot(pi, pi) + dot(w->p[j], w->p[j]) + d2);
        near_edge(b, d2 - q->coh_dist2, sc, 1);
        near_edge(b, d2 - q->sep_dist2, sc, 1);
        near_edge(b, d2 - q->ali_dist2, sc, 1);
        double d = sqrt(d2);
        double cang = dot(vh, e) / d;
        double ang = acos(cang < -1 ? -1 : cang > 1 ? 1 : cang);
        /* rounding of the cosine near a threshold (relative to the boid's position) */
        double ce = 1e-5 * (1 + len(pi) / d);
        near_edge(b, cang - cos(q->coh_angle), ce, 1);
        near_edge(b, cang - cos(q->sep_angle), ce, 1);
        near_edge(b, cang - cos(q->ali_angle), ce, 1);
        if (d2 < q->coh_dist2 && ang < q->coh_angle) {
            cs = add(cs, w->p[j]);
            cn++;
        }
        if (d2 < q->sep_dist2 && ang < q->sep_angle) {
            sep = add(sep, mul(e, -1.0 / d2));
            sep_abs += 1.0 / d;
        }
        if (d2 < q->ali_dist2 && ang < q->ali_angle) {
            as = add(as, w->v[j]);
            as_abs += len(w->v[j]);
            an++;
        }
    }
    d3 cm = cn ? sub(mul(cs, 1.0 / cn), pi) : mk(0, 0, 0);
    d3 coh = mul(cm, q->coh_force);
    d3 am = an ? sub(mul(as, 1.0 / an), vi) : mk(0, 0, 0);
    d3 ali = mul(am, q->ali_force);
    sep = mul(sep, q->sep_force);
    double mf = q->max_force;
    /* limit() of a vector that is itself a cancellation: its direction's conditioning */
    if (len(coh) > mf)
        nrm(cm, len(pi) + len(cm), b);
    if (len(sep) > mf)
        nrm(sep, fabs(q->sep_force) * sep_abs, b);
    if (len(ali) > mf)
        nrm(am, as_abs / (an ? an : 1) + vl, b);
    coh = limit(coh, mf);
    sep = limit(sep, mf);
    ali = limit(ali, mf);
    b->force_abs = fmin(fabs(q->coh_force) * (len(pi) + len(cm)), mf) +
                   fmin(fabs(q->sep_force) * sep_abs, mf) +
                   fmin(fabs(q->ali_force) * (as_abs / (an ? an : 1) + vl), mf);
    d3 c = f3(q->boundary_center);
    d3 pc = sub(pi, c);
    double sq = dot(pc, pc);
    d3 bnd = mk(0, 0, 0);
    if (sq > q->boundary_range2) {
        bnd = mul(pc, -q->boundary_force * (sq - q->boundary_range2) / sq);
        b->force_abs += fabs(q->boundary_force) * len(pc) * (1 + q->boundary_range2 / sq);
    }
    d3 sum = add(add(add(coh, sep), ali), bnd);
    sum = add(sum, sphere_force(w, pi, b));
    sum = add(sum, extra_forces(w, pi, b));
    d3 v = add(vi, mul(sum, w->dt));
    v = clamp_speed(v, q->min_speed, q->max_speed, b);
    o->v[i] = v;
    o->p[i] = add(pi, v);
}

/* predators (docs/MODELS.md "Predators"): one step from the start-of-step boids */
static void step_predators(const world *w, out *o)
{
    const shoal_params *q = &w->q;
    d3 centre = mk(0, 0, 0);
    for (int i = 0; i < w->n; i++)
        centre = add(centre, w->p[i]);
    centre = mul(centre, 1.0 / w->n);
    double turn = fmin((double)(float)(q->predator_turn * (float)w->dt), 1.0);
    for (int k = 0; k < w->pc; k++) {
        d3 qp = w->pred_p[k], v = w->pred_v[k], tgt;
        if (q->predator_chase >= 1) {
            tgt = centre;
        } else {
            double best = INFINITY, second = INFINITY;
            int bi = 0;
            for (int i = 0; i < w->n; i++) {
                double d2 = dot(sub(w->p[i], qp), sub(w->p[i], qp));
                if (d2 < best) {
                    second = best;
                    best = d2;
                    bi = i;
                } else if (d2 < second) {
                    second = d2;
                }
            }
            if (second - best <= 1e-5 * (second + dot(qp, qp)) && second > best)
                o->pred_ambiguous = 1;
            tgt = w->p[bi];
        }
        d3 want = sub(tgt, qp);
        double wl = len(want), vl = len(v);
        d3 dir;
        if (wl > 0) {
            want = mul(want, 1.0 / wl);
            if (vl > 0) {
                d3 h = mul(v, 1.0 / vl);
                dir = add(h, mul(sub(want, h), turn));
                double dl = len(dir);
                if (dl < 1e-3)
                    o->pred_ambiguous = 1;
                dir = dl > 0 ? mul(dir, 1.0 / dl) : want;
            } else {
                dir = want;
            }
        } else {
            dir = vl > 0 ? mul(v, 1.0 / vl) : mk(0, 0, 0);
        }
        o->pred_v[k] = mul(dir, q->predator_speed);
        o->pred_p[k] = add(qp, mul(o->pred_v[k], w->dt));
    }
}

/* The reference of each model of sim/models.h, by name: a model without its ref_NAME does
 * not compile. */
typedef void (*ref_boid_fn)(const world *w, int i, out *o);
#define ref_steer step_steer_average
#define ref_average step_steer_average
#define ref_heading step_heading
#define ref_classic step_classic
#define ref_fov step_fov
#define REF_ENTRY(id, name) [id] = ref_##name,
static const ref_boid_fn ref_models[SHOAL_MODEL_COUNT] = {SIM_MODELS(REF_ENTRY)};
#undef REF_ENTRY

static void ref_step(const world *w, out *o, int strict)
{
    memset(o->b, 0, sizeof(book) * (size_t)w->n);
    o->pred_ambiguous = 0;
    for (int i = 0; i < w->n; i++) {
        o->b[i].strict = strict;
        ref_models[w->model](w, i, o);
    }
    step_predators(w, o);
}

/* ---- running the engine and comparing ---- */
typedef struct tally {
    long checked, skipped, sets;
    double worst; /* largest error / allowed error seen */
} tally;

static const shoal_isa *const isas = test_isas;

/* Read the engine's state (boids, predators, targets in force for the next step). */
static void world_from_sim(world *w, shoal_sim *s, float *rows)
{
    shoal_sim_get_state(s, rows);
    for (int i = 0; i < w->n; i++) {
        w->p[i] = f3(rows + 6 * i);
        w->v[i] = f3(rows + 6 * i + 3);
    }
    float pp[3 * SHOAL_MAX_PREDATORS], pv[3 * SHOAL_MAX_PREDATORS];
    w->pc = (int)shoal_sim_predators(s, pp, pv, SHOAL_MAX_PREDATORS);
    for (int k = 0; k < w->pc; k++) {
        w->pred_p[k] = f3(pp + 3 * k);
        w->pred_v[k] = f3(pv + 3 * k);
    }
}

/* The targets in force at time t, from the documented stream: epoch k = floor(t / period),
 * stream (seed ^ "targets!", k) of the counter-based splitmix64 of core/rng.h, 24-bit
 * uniforms scaled to [lo, hi) per coordinate. Written out here, so a step that uses the
 * wrong epoch or the wrong stream fails. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static int ref_targets(const shoal_params *q, uint64_t seed, double t, float *xyz)
{
    int64_t epoch = (int64_t)floor(t / (double)q->target_period);
    uint64_t st = mix64((seed ^ 0x7461726765747321ull) * 0x9e3779b97f4a7c15ull +
                        mix64((uint64_t)epoch + 0x632be59bd9b4e019ull));
    int n = (int)q->target_count;
    for (int k = 0; k < n; k++)
        for (int c = 0; c < 3; c++) {
            float lo = q->bounds_center[c] - 0.5f * q->bounds_size[c];
            float hi = q->bounds_center[c] + 0.5f * q->bounds_size[c];
            st += 0x9e3779b97f4a7c15ull;
            float u = (float)(mix64(st) >> 40) * (1.0f / 16777216.0f);
            xyz[3 * k + c] = lo + (hi - lo) * u;
        }
    return n;
}

/* Compare one engine step with the reference; returns the number of boids it could not
 * judge (ambiguous). `strict`: placed cases, every boid must be judged. */
static long compare(const world *w, const out *o, const float *rows, const float *pp,
                    const float *pv, tally *t, const char *what, int strict)
{
    long skipped = 0;
    for (int i = 0; i < w->n; i++) {
        const book *b = &o->b[i];
        if (b->ambiguous) {
            skipped++;
            continue;
        }
        double dt = w->dt;
        double sv = len(w->v[i]) + dt * b->force_abs + len(o->v[i]);
        double sp = len(w->p[i]) + (w->model == SHOAL_MODEL_FOV ? 1.0 : dt) * sv;
        double k = REL_TOL * (1 + b->cond);
        const double want[6] = {o->p[i].x, o->p[i].y, o->p[i].z, o->v[i].x, o->v[i].y, o->v[i].z};
        for (int c = 0; c < 6; c++) {
            double got = rows[6 * i + c];
            double allowed = k * (c < 3 ? sp : sv) + 1e-30;
            double err = fabs(got - want[c]);
            if (err / allowed > t->worst)
                t->worst = err / allowed;
            if (!(err <= allowed))
                fail_msg("%s: %s boid %d of %d, column %d: engine %.9g, reference %.9g "
                         "(allowed %.3g; |p| %.3g |v| %.3g force %.3g cond %.3g)",
                         what, shoal_model_name(w->model), i, w->n, c, got, want[c], allowed,
                         len(w->p[i]), len(w->v[i]), b->force_abs, b->cond);
        }
        t->checked++;
    }
    if (!o->pred_ambiguous) {
        for (int k = 0; k < w->pc; k++) {
            d3 gp = f3(pp + 3 * k), gv = f3(pv + 3 * k);
            double sv = w->q.predator_speed + 1e-30;
            double sp = len(w->pred_p[k]) + sv * w->dt + 1e-30;
            if (len(sub(gv, o->pred_v[k])) > 1e-5 * sv || len(sub(gp, o->pred_p[k])) > 1e-5 * sp)
                fail_msg("%s: predator %d: engine p (%.9g %.9g %.9g) v (%.9g %.9g %.9g), "
                         "reference p (%.9g %.9g %.9g) v (%.9g %.9g %.9g)",
                         what, k, gp.x, gp.y, gp.z, gv.x, gv.y, gv.z, o->pred_p[k].x,
                         o->pred_p[k].y, o->pred_p[k].z, o->pred_v[k].x, o->pred_v[k].y,
                         o->pred_v[k].z);
        }
    }
    if (strict && skipped)
        fail_msg("%s: %ld boids undecidable in a placed case", what, skipped);
    t->skipped += skipped;
    return skipped;
}

/* Run `steps` steps of the engine on `w` (its p, v as float rows), checking each. */
static void run_and_check(world *w, const mesh_in *ms, int mesh_count, shoal_isa isa,
                          shoal_neighbors nb, int threads, uint64_t seed, double t0, int steps,
                          tally *t, const char *what, int strict)
{
    shoal_sim_desc d = shoal_sim_desc_default();
    d.model = w->model;
    d.params = w->q;
    d.boid_count = (size_t)w->n;
    d.dt_s = w->dt;
    d.t0_s = t0;
    d.seed = seed;
    d.isa = isa;
    d.neighbors = nb;
    d.thread_count = threads;
    shoal_sim *s;
    shoal_error e;
    if (shoal_sim_create(&d, &s, &e))
        fail_msg("%s: create: %s", what, e.message);
    for (int m = 0; m < mesh_count; m++)
        if (shoal_sim_add_obstacle(s, ms[m].pos, ms[m].nrm, (size_t)ms[m].count, &ms[m].xf, NULL,
                                   &e))
            fail_msg("%s: obstacle: %s", what, e.message);
    static float rows[MAXN * 6];
    for (int i = 0; i < w->n; i++) {
        rows[6 * i] = (float)w->p[i].x;
        rows[6 * i + 1] = (float)w->p[i].y;
        rows[6 * i + 2] = (float)w->p[i].z;
        rows[6 * i + 3] = (float)w->v[i].x;
        rows[6 * i + 4] = (float)w->v[i].y;
        rows[6 * i + 5] = (float)w->v[i].z;
    }
    if (shoal_sim_set_state(s, rows, &e))
        fail_msg("%s: set_state: %s", what, e.message);
    /* the engine's dt is float: step with the value it uses */
    w->dt = (double)(float)w->dt;
    static out o;
    for (int k = 0; k < steps; k++) {
        world_from_sim(w, s, rows);
        double tnow = shoal_sim_time(s);
        if (w->model == SHOAL_MODEL_HEADING) {
            float tg[3 * SHOAL_MAX_TARGETS];
            w->tc = ref_targets(&w->q, seed, tnow, tg);
            for (int j = 0; j < w->tc; j++)
                w->targets[j] = f3(tg + 3 * j);
        }
        ref_step(w, &o, strict);
        shoal_status st = shoal_sim_step(s, 1, &e);
        if (st)
            fail_msg("%s: step %d: %s", what, k, e.message);
        shoal_sim_get_state(s, rows);
        float pp[3 * SHOAL_MAX_PREDATORS], pv[3 * SHOAL_MAX_PREDATORS];
        shoal_sim_predators(s, pp, pv, SHOAL_MAX_PREDATORS);
        char buf[200];
        snprintf(buf, sizeof buf, "%s, step %d (t %.9g), isa %s, %s, %d threads", what, k, tnow,
                 shoal_sim_isa_name(s), nb == SHOAL_NEIGHBORS_BRUTE ? "brute" : "grid", threads);
        compare(w, &o, rows, pp, pv, t, buf, strict);
    }
    shoal_sim_destroy(s);
}

/* ---- random parameter sets ---- */
static double pick(double lo, double hi, double extreme_lo, double extreme_hi)
{
    double r = runi(0, 1);
    if (r < 0.08)
        return extreme_lo;
    if (r < 0.16)
        return extreme_hi;
    return runi(lo, hi);
}
static double weight(void)
{
    double r = runi(0, 1);
    if (r < 0.15)
        return 0;
    if (r < 0.2)
        return runi(-1000, 1000);
    return runi(-5, 10);
}

/* Fills w->q (starting from the defaults) and returns the interaction radius. */
static double random_params(world *w)
{
    shoal_params *q = &w->q;
    shoal_params_default(w->model, q);
    double R = 1;
    switch (w->model) {
    case SHOAL_MODEL_STEER:
    case SHOAL_MODEL_AVERAGE: {
        int kind = rint_(0, 3);
        q->sep_radius = (float)runi(0.2, 2.5);
        q->ali_radius = (float)runi(0.3, 3);
        q->coh_radius = (float)runi(0.3, 3);
        if (kind == 0) /* the shared mask: ali == coh >= sep */
            q->coh_radius = q->ali_radius = fmaxf(q->ali_radius, q->sep_radius);
        else if (kind == 1) /* ali == coh < sep: general branch */
            q->coh_radius = q->ali_radius = q->sep_radius * 0.7f;
        q->sep_weight = (float)weight();
        q->ali_weight = (float)weight();
        q->coh_weight = (float)weight();
        q->max_speed = (float)pick(0.5, 20, 1e-3, 1e4);
        q->max_steer = (float)pick(0.1, 10, 0, 1e5);
        q->wall_weight = (float)pick(0, 20, 0, 1e3);
        for (int c = 0; c < 3; c++) {
            q->wall_center[c] = (float)runi(-1, 1);
            q->wall_size[c] = (float)runi(1, 8);
        }
        R = fmax(q->sep_radius, fmax(q->ali_radius, q->coh_radius));
        break;
    }
    case SHOAL_MODEL_HEADING:
        q->neighbor_radius = (float)runi(0.3, 3);
        q->sep_weight = (float)weight();
        q->ali_weight = (float)weight();
        q->coh_weight = (float)weight();
        q->target_weight = (float)weight();
        q->rotate_speed = (float)pick(0, 10, 0, 1e3);
        q->move_speed = (float)pick(0.1, 10, 0, 1e4);
        q->target_period = (float)pick(0.01, 5, 1e-3, 1e5);
        q->target_count = (float)rint_(1, 20);
        for (int c = 0; c < 3; c++) {
            q->bounds_center[c] = (float)runi(-3, 3);
            q->bounds_size[c] = (float)runi(0.5, 30);
        }
        R = q->neighbor_radius;
        break;
    case SHOAL_MODEL_CLASSIC:
        q->fov = (float)runi(0.3, 3);
        q->min_speed = (float)pick(0, 2, 0, 0);
        q->max_speed = (float)(q->min_speed + pick(0, 10, 0, 1e4));
        if (q->max_speed < 1e-6f)
            q->max_speed = 1e-6f;
        q->w1 = (float)weight();
        q->w2 = (float)weight();
        q->w3 = (float)weight();
        if (rchance(0.05)) { /* a zero sum of weights: a = 0 */
            q->w1 = 2;
            q->w2 = -1.5f;
            q->w3 = -0.5f;
        }
#if CLASSIC_SUM_8
        /* -DCLASSIC_SUM_8=1: weights that sum to exactly 8, the seed's old constant, for an
         * engine that divides by 8 (as shoal did before it followed MODELS.md) */
        q->w1 = (float)(int)runi(-20, 20);
        q->w2 = (float)(int)runi(-20, 20);
        q->w3 = 8 - q->w1 - q->w2;
#endif
        q->sep_strength = (float)pick(-20, 20, 0, 1e4);
        for (int c = 0; c < 3; c++) {
            q->box_min[c] = (float)runi(-4, -0.5);
            q->box_max[c] = (float)runi(0.5, 4);
        }
        R = q->fov;
        break;
    case SHOAL_MODEL_FOV:
        q->coh_dist2 = (float)runi(0.05, 9);
        q->sep_dist2 = (float)runi(0.05, 9);
        q->ali_dist2 = (float)runi(0.05, 9);
        q->coh_angle = (float)pick(0, 3.14159265, 0, 3.14159265);
        q->sep_angle = (float)pick(0, 3.14159265, 0, 3.14159265);
        q->ali_angle = (float)pick(0, 3.14159265, 0, 3.14159265);
        q->coh_force = (float)weight();
        q->sep_force = (float)weight();
        q->ali_force = (float)weight();
        q->max_force = (float)pick(0.01, 5, 0, 1e5);
        q->min_speed = (float)pick(0, 0.5, 0, 0);
        q->max_speed = (float)(q->min_speed + pick(0.01, 2, 1e-6, 1e3));
        q->boundary_force = (float)pick(0, 5, 0, 1e3);
        q->boundary_range2 = (float)runi(0.5, 10);
        for (int c = 0; c < 3; c++)
            q->boundary_center[c] = (float)runi(-1, 1);
        R = sqrt(fmax(q->coh_dist2, fmax(q->sep_dist2, q->ali_dist2)));
        break;
    default:
        fail_msg("no random parameters for model %s: add its case", shoal_model_name(w->model));
    }
    return R;
}

static void random_extras(world *w, double L, mesh_in *ms, int *mesh_count)
{
    shoal_params *q = &w->q;
    *mesh_count = 0;
    if (rchance(0.3)) {
        q->sphere_count = (float)rint_(1, 3);
        q->avoid_force = (float)pick(0, 10, 0, 1e3);
        for (int k = 0; k < (int)q->sphere_count; k++) {
            for (int c = 0; c < 3; c++)
                q->spheres[k].center[c] = (float)runi(-L, L);
            q->spheres[k].radius = (float)runi(0.1, L);
        }
    }
    if (rchance(0.3)) {
        q->predator_count = (float)rint_(1, 4);
        q->predator_speed = (float)pick(0, 10, 0, 1e4);
        q->predator_turn = (float)pick(0, 5, 0, 1e4);
        q->predator_chase = (float)rint_(0, 1);
        q->flee_radius = (float)runi(0.2, 2 * L);
        q->flee_weight = (float)pick(0, 20, 0, 1e3);
        for (int c = 0; c < 3; c++)
            q->predator_start[c] = (float)runi(-L, L);
        q->predator_spread = (float)runi(0, L);
    }
    if (rchance(0.25)) {
        q->avoid_force = (float)pick(0, 10, 0, 1e3);
        q->field_cell = (float)runi(0.2, 1.5);
        q->field_margin = (float)runi(0, 1);
        *mesh_count = rint_(1, 2);
        for (int o = 0; o < *mesh_count; o++) {
            mesh_in *m = &ms[o];
            m->count = rint_(1, 12);
            for (int v = 0; v < m->count; v++) {
                d3 nv;
                do
                    nv = mk(runi(-1, 1), runi(-1, 1), runi(-1, 1));
                while (len(nv) < 0.2 || len(nv) > 1);
                nv = mul(nv, 1.0 / len(nv));
                if (rchance(0.2)) /* an axis-aligned normal: n_a == 0 on two axes */
                    nv = mk(0, rchance(0.5) ? 1 : -1, 0);
                for (int c = 0; c < 3; c++) {
                    m->pos[3 * v + c] = (float)runi(-L * 0.7, L * 0.7);
                    m->nrm[3 * v + c] = (float)comp(nv, c);
                }
            }
            m->xf = shoal_transform_identity();
            if (rchance(0.5)) {
                for (int c = 0; c < 3; c++) {
                    m->xf.position[c] = (float)runi(-1, 1);
                    m->xf.rotation_deg[c] = (float)runi(-180, 180);
                    m->xf.scale[c] = (float)runi(0.5, 1.5);
                }
            }
        }
    }
}

/* The ISAs this run checks (tests/scenes.h: one meson case per ISA) that this CPU runs. */
static int isa_list(shoal_isa *list)
{
    static int noted[TEST_ISA_COUNT];
    int n = 0;
    for (int k = 0; k < TEST_ISA_COUNT; k++)
        if (!test_isa_wanted(isas[k]))
            continue;
        else if (shoal_isa_supported(isas[k]))
            list[n++] = isas[k];
        else if (!noted[k]) {
            noted[k] = 1;
            test_skip_part("%s: not supported by this CPU", shoal_isa_name(isas[k]));
        }
    return n;
}

static void random_model(shoal_model model, int sets, uint64_t seed0)
{
    tally t = {0};
    shoal_isa avail[TEST_ISA_COUNT];
    int na = isa_list(avail);
    static world w;
    static mesh_in ms[2];
    for (int set = 0; set < sets; set++) {
        /* with --isa (one meson case per ISA), set k belongs to ISA k mod TEST_ISA_COUNT:
         * the cases together check every set once */
        if (test_isa_selected() && !test_isa_wanted(isas[set % TEST_ISA_COUNT]))
            continue;
        rs = seed0 * 1000003u + (uint64_t)set;
        memset(&w, 0, sizeof w);
        w.model = model;
        double R = random_params(&w);
        w.dt = rchance(0.5) ? 1.0 / 60.0 : runi(1e-3, 0.2);
        w.n = rint_(2, 120);
        /* a density that gives each boid a few to dozens of neighbours */
        double L = R * runi(0.4, 1.2) * cbrt((double)w.n / 8.0);
        int mc;
        random_extras(&w, L, ms, &mc);
        double vmax = model == SHOAL_MODEL_FOV ? (double)w.q.max_speed : 5.0;
        for (int i = 0; i < w.n; i++) {
            w.p[i] = mk(runi(-L, L), runi(-L, L), runi(-L, L));
            w.v[i] = mk(runi(-vmax, vmax), runi(-vmax, vmax), runi(-vmax, vmax));
            if (rchance(0.03))
                w.v[i] = mk(0, 0, 0);
            if (i > 0 && rchance(0.03)) /* a pair at d == 0 */
                w.p[i] = w.p[i - 1];
        }
        if (mc) {
        field_ref_build_retry:;
            free(w.fld.vec);
            w.fld.vec = NULL;
            w.fld.on = 0;
            if (!field_ref_build(&w.fld, ms, mc, w.q.field_cell, w.q.field_margin)) {
                /* a vertex on a cell edge, or a grid size on an integer: widen the margin
                 * a little (this moves the origin and the size) and build again */
                w.q.field_margin += 0.01237f;
                goto field_ref_build_retry;
            }
        }
        char what[96];
        snprintf(what, sizeof what, "set %d (seed %llu)", set, (unsigned long long)seed0);
        shoal_isa isa = test_isa_selected() ? isas[set % TEST_ISA_COUNT] : avail[set % na];
        shoal_neighbors nb = set % 4 == 3 ? SHOAL_NEIGHBORS_BRUTE : SHOAL_NEIGHBORS_GRID;
        double t0 = model == SHOAL_MODEL_HEADING ? runi(0, 3) * w.q.target_period : 0;
        run_and_check(&w, ms, mc, isa, nb, 1 + set % 2, 17 + (uint64_t)set, t0, 3, &t, what, 0);
        free(w.fld.vec);
        w.fld.vec = NULL;
        t.sets++;
    }
    printf("%s: %ld sets, %ld boid steps checked, %ld skipped (on a rounding-sensitive edge), "
           "worst error %.3g of the allowed\n",
           shoal_model_name(model), t.sets, t.checked, t.skipped, t.worst);
    assert_true(t.checked > 0);
    assert_true(t.skipped * 20 < t.checked + t.skipped); /* < 5 % unjudged */
}

/* test_random_NAME for every model of sim/models.h (seed: the enum value + 1) */
#define SETS 300
#define RANDOM_TEST(id, name)                                                                      \
    static void test_random_##name(void **st)                                                      \
    {                                                                                              \
        (void)st;                                                                                  \
        random_model(id, SETS, (uint64_t)(id) + 1);                                                \
    }
SIM_MODELS(RANDOM_TEST)
#undef RANDOM_TEST

/* ---- placed cases: exactly on each threshold, and one float step past it ---- */

typedef struct placed {
    int n;
    float rows[8 * 6];
} placed;

/* Check the engine against the reference on `pl` for every supported ISA, grid and brute;
 * returns the reference's velocities of the first step (to compare the two sides). */
static void check_placed(shoal_model model, const shoal_params *q, const placed *pl, double dt,
                         d3 *v_out, const char *what)
{
    shoal_isa avail[TEST_ISA_COUNT];
    int na = isa_list(avail);
    static world w;
    tally t = {0};
    for (int k = 0; k < na; k++)
        for (int nb = 0; nb < 2; nb++) {
            memset(&w, 0, sizeof w);
            w.model = model;
            w.q = *q;
            w.dt = dt;
            w.n = pl->n;
            for (int i = 0; i < pl->n; i++) {
                w.p[i] = f3(pl->rows + 6 * i);
                w.v[i] = f3(pl->rows + 6 * i + 3);
            }
            run_and_check(&w, NULL, 0, avail[k], nb ? SHOAL_NEIGHBORS_BRUTE : SHOAL_NEIGHBORS_GRID,
                          1, 5, 0, 1, &t, what, 1);
        }
    /* the reference's own first step, for the caller's sensitivity check */
    memset(&w, 0, sizeof w);
    w.model = model;
    w.q = *q;
    w.dt = (float)dt;
    w.n = pl->n;
    for (int i = 0; i < pl->n; i++) {
        w.p[i] = f3(pl->rows + 6 * i);
        w.v[i] = f3(pl->rows + 6 * i + 3);
    }
    if (model == SHOAL_MODEL_HEADING) {
        float tg[3 * SHOAL_MAX_TARGETS];
        w.tc = ref_targets(q, 5, 0, tg);
        for (int j = 0; j < w.tc; j++)
            w.targets[j] = f3(tg + 3 * j);
    }
    if (q->predator_count > 0) {
        w.pc = (int)q->predator_count;
        for (int k = 0; k < w.pc; k++) {
            double off = ((double)k - 0.5 * (w.pc - 1)) * q->predator_spread;
            w.pred_p[k] =
                mk(q->predator_start[0] + off, q->predator_start[1], q->predator_start[2]);
        }
    }
    static out o;
    ref_step(&w, &o, 1);
    for (int i = 0; i < pl->n; i++)
        v_out[i] = o.v[i];
}

/* Boid 0 at `a`, boid 1 at `b` (velocities fixed); both sides of a threshold: `on` and
 * `past` must give different reference results, and the engine must match both. */
static void two_sides(shoal_model model, const shoal_params *q, d3 a, d3 on, d3 past, double dt,
                      const char *what)
{
    placed pl = {2, {0}};
    const float va[3] = {0.3f, 0.1f, -0.05f}, vb[3] = {-0.1f, 0.4f, 0.2f};
    d3 v_on[8], v_past[8];
    for (int side = 0; side < 2; side++) {
        d3 b = side ? past : on;
        const double r[12] = {a.x, a.y, a.z, va[0], va[1], va[2],
                              b.x, b.y, b.z, vb[0], vb[1], vb[2]};
        for (int k = 0; k < 12; k++)
            pl.rows[k] = (float)r[k];
        char buf[160];
        snprintf(buf, sizeof buf, "%s, %s", what, side ? "one float past the threshold" : "on it");
        check_placed(model, q, &pl, dt, side ? v_past : v_on, buf);
    }
    double diff = len(sub(v_on[0], v_past[0])) + len(sub(v_on[1], v_past[1]));
    if (!(diff > 1e-4))
        fail_msg("%s: the two sides of the threshold give the same reference (%.3g)", what, diff);
}

static float up(float x) { return nextafterf(x, INFINITY); }
static float down(float x) { return nextafterf(x, -INFINITY); }

static void test_thresholds_steer_average(void **st)
{
    (void)st;
    for (int m = 0; m < 2; m++) {
        shoal_model model = m ? SHOAL_MODEL_AVERAGE : SHOAL_MODEL_STEER;
        /* radii with exact squares; shared (ali == coh) and unequal both ways */
        static const float radii[3][3] = {{1, 1.5f, 2}, {1, 2, 1.5f}, {1.5f, 2, 2}};
        for (int r = 0; r < 3; r++) {
            shoal_params q;
            shoal_params_default(model, &q);
            q.sep_radius = radii[r][0];
            q.ali_radius = radii[r][1];
            q.coh_radius = radii[r][2];
            q.sep_weight = 3;
            q.ali_weight = 1.25f;
            q.coh_weight = 0.75f;
            q.max_steer = 50;
            for (int k = 0; k < 3; k++) {
                float R = radii[r][k];
                char what[120];
                snprintf(what, sizeof what, "%s radii %g/%g/%g, at radius %d",
                         shoal_model_name(model), (double)radii[r][0], (double)radii[r][1],
                         (double)radii[r][2], k);
                two_sides(model, &q, mk(0, 0, 0), mk(R, 0, 0), mk(up(R), 0, 0), 1.0 / 60, what);
            }
        }
        /* walls: p < centre - size/2 is strict, p > centre + size/2 too */
        shoal_params q;
        shoal_params_default(model, &q);
        q.wall_size[0] = 8;
        q.wall_size[1] = 6;
        two_sides(model, &q, mk(0, 0, 0), mk(-4, 0, 0), mk(down(-4), 0, 0), 1.0 / 60, "wall -x");
        two_sides(model, &q, mk(0, 0, 0), mk(0, 3, 0), mk(0, up(3), 0), 1.0 / 60, "wall +y");
        /* a predator exactly on a boid (d == 0 adds nothing) and one float away */
        q.predator_count = 1;
        q.flee_radius = 3;
        q.flee_weight = 20;
        q.predator_start[0] = 1;
        q.predator_start[1] = 0;
        q.predator_start[2] = 0;
        two_sides(model, &q, mk(10, 0, 0), mk(1, 0, 0), mk(up(1), 0, 0), 1.0 / 60, "predator on");
        /* and a sphere's centre on a boid */
        shoal_params_default(model, &q);
        q.sphere_count = 1;
        q.spheres[0].center[2] = 1;
        q.spheres[0].radius = 1;
        q.avoid_force = 5;
        two_sides(model, &q, mk(10, 0, 0), mk(0, 0, 1), mk(0, 0, up(1)), 1.0 / 60, "sphere centre");
    }
}

static void test_thresholds_heading(void **st)
{
    (void)st;
    shoal_params q;
    shoal_params_default(SHOAL_MODEL_HEADING, &q);
    q.neighbor_radius = 2;
    q.sep_weight = 3;
    q.ali_weight = 1.5f;
    q.coh_weight = 0.5f;
    /* d < R strictly: at R the neighbour is out, one float closer it is in */
    two_sides(SHOAL_MODEL_HEADING, &q, mk(0, 0, 0), mk(2, 0, 0), mk(down(2), 0, 0), 1.0 / 60,
              "heading radius");
    two_sides(SHOAL_MODEL_HEADING, &q, mk(1, 1, 1), mk(1, 3, 1), mk(1, down(3), 1), 1.0 / 60,
              "heading radius (y)");
}

static void test_thresholds_classic(void **st)
{
    (void)st;
    shoal_params q;
    shoal_params_default(SHOAL_MODEL_CLASSIC, &q);
    q.fov = 2;
    for (int c = 0; c < 3; c++) {
        q.box_min[c] = -100;
        q.box_max[c] = 100;
    }
    /* neighbours: d <= fov */
    two_sides(SHOAL_MODEL_CLASSIC, &q, mk(0, 0, 0), mk(2, 0, 0), mk(up(2), 0, 0), 1.0 / 60,
              "classic fov");
    /* walls: a plane at signed distance s <= fov makes a virtual boid */
    q.box_max[1] = 10;
    two_sides(SHOAL_MODEL_CLASSIC, &q, mk(0, 0, 0), mk(5, 8, 5), mk(5, down(8), 5), 1.0 / 60,
              "classic top wall");
    q.box_max[1] = 100;
    q.box_min[0] = -10;
    two_sides(SHOAL_MODEL_CLASSIC, &q, mk(0, 50, 0), mk(-8, 0, 5), mk(up(-8), 0, 5), 1.0 / 60,
              "classic -x wall");
}

static void test_thresholds_fov(void **st)
{
    (void)st;
    for (int rule = 0; rule < 3; rule++) {
        shoal_params q;
        shoal_params_default(SHOAL_MODEL_FOV, &q);
        float *dist2[3] = {&q.coh_dist2, &q.sep_dist2, &q.ali_dist2};
        float *angle[3] = {&q.coh_angle, &q.sep_angle, &q.ali_angle};
        q.coh_dist2 = q.sep_dist2 = q.ali_dist2 = 1; /* the others: out of reach at d = 2 */
        q.coh_angle = q.sep_angle = q.ali_angle = 3.14159265f;
        q.max_force = 100;
        q.min_speed = 0;
        q.max_speed = 10;
        *dist2[rule] = 4;
        const char *names[3] = {"coh", "sep", "ali"};
        char what[80];
        /* d^2 < dist2 strictly: d = 2 is out, one float closer in */
        snprintf(what, sizeof what, "fov %s_dist2", names[rule]);
        two_sides(SHOAL_MODEL_FOV, &q, mk(0, 0, 0), mk(0, 0, 2), mk(0, 0, down(2)), 1.0 / 60, what);
        /* angle < A: A = pi/2 (float, a hair above pi/2) and a neighbour square to the
         * velocity (0.3, 0.1, -0.05): on the cone's edge it counts; a little behind, not */
        *angle[rule] = (float)(3.14159265358979 / 2);
        snprintf(what, sizeof what, "fov %s_angle", names[rule]);
        d3 perp = mk(-0.1, 0.3, 0); /* dot with (0.3, 0.1, -0.05) is 0 */
        d3 behind = mk(-0.1 - 0.003, 0.3, 0);
        two_sides(SHOAL_MODEL_FOV, &q, mk(0, 0, 0), perp, behind, 1.0 / 60, what);
    }
}

/* flee and sphere strength by size at known distances: (R - d) / R, not d / R */
static void test_flee_size(void **st)
{
    (void)st;
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
        if (m == SHOAL_MODEL_HEADING)
            continue; /* heading normalises its force: checked by the reference sets */
        shoal_params q;
        shoal_params_default((shoal_model)m, &q);
        q.sep_weight = q.ali_weight = q.coh_weight = 0;
        q.w1 = q.w2 = q.w3 = 0;
        q.w1 = 1; /* a nonzero sum of weights: no neighbour, no wall, so a = flee alone */
        q.coh_force = q.sep_force = q.ali_force = 0;
        q.boundary_force = 0;
        q.wall_weight = 0;
        q.min_speed = 0;
        q.max_speed = 1000;
        q.max_steer = 1000;
        for (int c = 0; c < 3; c++) {
            q.box_min[c] = -1000;
            q.box_max[c] = 1000;
        }
        q.predator_count = 1;
        q.flee_radius = 6;
        q.flee_weight = 10;
        q.predator_start[0] = 1.5f; /* d = 1.5: strength (6 - 1.5) / 6 = 0.75 */
        q.predator_start[1] = q.predator_start[2] = 0;
        shoal_sim_desc d = shoal_sim_desc_default();
        d.model = (shoal_model)m;
        d.params = q;
        d.boid_count = 1;
        d.dt_s = 0.125;
        shoal_sim *s;
        shoal_error e;
        if (shoal_sim_create(&d, &s, &e))
            fail_msg("%s", e.message);
        float rows[6] = {0, 0, 0, 0, 0, 0};
        assert_int_equal(shoal_sim_set_state(s, rows, NULL), SHOAL_OK);
        assert_int_equal(shoal_sim_step(s, 1, NULL), SHOAL_OK);
        shoal_sim_get_state(s, rows);
        float pp[3], pv[3];
        assert_int_equal(shoal_sim_predators(s, pp, pv, 1), 1);
        shoal_sim_destroy(s);
        /* dv = -x * 10 * 0.75 * dt = -0.9375 (classic: the sum of weights is 1) */
        if (fabs(rows[3] + 0.9375) > 1e-5 || rows[4] != 0 || rows[5] != 0)
            fail_msg("%s: flee at d = 1.5 of R = 6: v = (%g %g %g), want (-0.9375 0 0)",
                     shoal_model_name((shoal_model)m), rows[3], rows[4], rows[5]);
        /* the predator, at rest, heads straight for the boid at predator_speed 8 */
        if (fabs(pv[0] + 8) > 1e-5 || fabs(pp[0] - (1.5 - 8 * 0.125)) > 1e-5)
            fail_msg("predator: p %g v %g, want 0.5 and -8", pp[0], pv[0]);
        /* an obstacle sphere of radius 2 at d = 1: strength (2r - d) / r = 1.5 */
        d.params.predator_count = 0;
        d.params.sphere_count = 1;
        d.params.spheres[0].center[0] = 0;
        d.params.spheres[0].center[1] = -1;
        d.params.spheres[0].radius = 2;
        d.params.avoid_force = 4;
        if (shoal_sim_create(&d, &s, &e))
            fail_msg("%s", e.message);
        memset(rows, 0, sizeof rows);
        assert_int_equal(shoal_sim_set_state(s, rows, NULL), SHOAL_OK);
        assert_int_equal(shoal_sim_step(s, 1, NULL), SHOAL_OK);
        shoal_sim_get_state(s, rows);
        shoal_sim_destroy(s);
        /* dv = +y * 4 * 1.5 * 0.125 = 0.75 */
        if (fabs(rows[4] - 0.75) > 1e-5 || rows[3] != 0 || rows[5] != 0)
            fail_msg("%s: sphere at d = 1 of r = 2: v = (%g %g %g), want (0 0.75 0)",
                     shoal_model_name((shoal_model)m), rows[3], rows[4], rows[5]);
    }
}

/* Heading targets by value, at epoch boundaries: shoal_sim_targets and the targets the
 * step uses are those of epoch floor(t / period) (the step at t = k * period uses epoch k,
 * the step before it epoch k - 1). */
static void test_targets_epochs(void **st)
{
    (void)st;
    shoal_sim_desc d = shoal_sim_desc_default();
    d.model = SHOAL_MODEL_HEADING;
    shoal_params_default(d.model, &d.params);
    d.params.target_period = 0.5f;
    d.params.target_count = 3;
    d.boid_count = 1;
    d.seed = 99;
    shoal_sim *s;
    assert_int_equal(shoal_sim_create(&d, &s, NULL), SHOAL_OK);
    const double times[] = {0, 0.5, 1.0, -0.5, 1e6, 2.5};
    for (size_t k = 0; k < sizeof times / sizeof times[0]; k++) {
        for (int side = 0; side < 2; side++) {
            double t = side ? nextafter(times[k], -INFINITY) : times[k];
            float got[9], want[9];
            assert_int_equal(shoal_sim_targets(s, t, got, 3), 3);
            ref_targets(&d.params, 99, t, want);
            for (int c = 0; c < 9; c++)
                if (got[c] != want[c])
                    fail_msg("targets at t = %.17g: [%d] %.9g, want %.9g", t, c, got[c], want[c]);
        }
        float a[9], b[9];
        shoal_sim_targets(s, times[k], a, 3);
        shoal_sim_targets(s, nextafter(times[k], -INFINITY), b, 3);
        assert_true(memcmp(a, b, sizeof a) != 0); /* a new epoch: new targets */
    }
    shoal_sim_destroy(s);

    /* the step at each time uses that time's targets: dt 0.25 from t0 0.25, so steps at
     * 0.25 (epoch 0), 0.5 (epoch 1), 0.75, 1.0 (epoch 2); targets dominate the force */
    static world w;
    tally t = {0};
    memset(&w, 0, sizeof w);
    w.model = SHOAL_MODEL_HEADING;
    shoal_params_default(w.model, &w.q);
    w.q.target_period = 0.5f;
    w.q.target_count = 4;
    w.q.target_weight = 50;
    w.q.rotate_speed = 2;
    w.dt = 0.25;
    w.n = 3;
    for (int i = 0; i < w.n; i++) {
        w.p[i] = mk(i * 5.0, -i * 3.0, i);
        w.v[i] = mk(1, 0.5 * i, 0);
    }
    shoal_isa avail[TEST_ISA_COUNT];
    int na = isa_list(avail);
    for (int k = 0; k < na; k++) {
        world w2 = w;
        run_and_check(&w2, NULL, 0, avail[k], SHOAL_NEIGHBORS_GRID, 1, 99, 0.25, 4, &t,
                      "heading across epochs", 0);
    }
    assert_true(t.skipped == 0);
}

/* A dense cluster: every boid within every radius of 300 others, so steer's list of
 * separation candidates fills (256) and is flushed inside the pair loop. */
static void test_dense_cluster(void **st)
{
    (void)st;
    static world w;
    tally t = {0};
    shoal_isa avail[TEST_ISA_COUNT];
    int na = isa_list(avail);
    for (int m = 0; m < 2; m++) {
        for (int k = 0; k < na; k++) {
            memset(&w, 0, sizeof w);
            w.model = m ? SHOAL_MODEL_AVERAGE : SHOAL_MODEL_STEER;
            shoal_params_default(w.model, &w.q);
            w.q.ali_weight = 1.5f;
            w.dt = 1.0 / 60;
            w.n = 300;
            rs = 4242;
            for (int i = 0; i < w.n; i++) {
                d3 q;
                do
                    q = mk(runi(-1, 1), runi(-1, 1), runi(-1, 1));
                while (len(q) > 1);
                w.p[i] = mul(q, 0.4);
                w.v[i] = mk(runi(-1, 1), runi(-1, 1), runi(-1, 1));
            }
            run_and_check(&w, NULL, 0, avail[k], SHOAL_NEIGHBORS_GRID, 2, 1, 0, 2, &t,
                          "dense cluster", 0);
        }
    }
    assert_true(t.skipped * 20 < t.checked);
}

int main(int argc, char **argv)
{
    /* classic follows MODELS.md: a divided by the sum of the weights (any weights, a zero
     * sum included) */
    struct CMUnitTest tests[] = {
#define RANDOM_CASE(id, name) cmocka_unit_test(test_random_##name),
        SIM_MODELS(RANDOM_CASE)
#undef RANDOM_CASE
            cmocka_unit_test(test_thresholds_classic),
        cmocka_unit_test(test_thresholds_steer_average),
        cmocka_unit_test(test_thresholds_heading),
        cmocka_unit_test(test_thresholds_fov),
        cmocka_unit_test(test_flee_size),
        cmocka_unit_test(test_targets_epochs),
        cmocka_unit_test(test_dense_cluster),
    };
    /* every test here checks ISAs: one meson case per ISA (tests/scenes.h) */
    size_t n = sizeof tests / sizeof tests[0];
    const char *isa_tests[sizeof tests / sizeof tests[0] + 1];
    for (size_t i = 0; i < n; i++)
        isa_tests[i] = tests[i].name;
    isa_tests[n] = NULL;
    n = test_isa_args(argc, argv, tests, n, isa_tests);
    return test_exit(_cmocka_run_group_tests("test_reference", tests, n, NULL, NULL));
}
