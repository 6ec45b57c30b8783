/* SPDX-License-Identifier: MIT */
/* Each model's per-boid formulas on 2-4 boids: literal hand-computed values for the
 * simplest cases, and a plain double-precision transcription of MODELS.md (written
 * independently of the SIMD kernel template, seed formulas as written there: acos for the
 * view cones, sqrt distances) for the rest. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/rng.h"
#include "shoal/shoal.h"
#include "sim/models.h"
#include "sim/sim_internal.h"
#include "tests/scenes.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct d3 {
    double x, y, z;
} d3;
static d3 mk(double x, double y, double z) { return (d3){x, y, z}; }
static d3 add(d3 a, d3 b) { return mk(a.x + b.x, a.y + b.y, a.z + b.z); }
static d3 sub(d3 a, d3 b) { return mk(a.x - b.x, a.y - b.y, a.z - b.z); }
static d3 mul(d3 a, double s) { return mk(a.x * s, a.y * s, a.z * s); }
static double dot(d3 a, d3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static double len(d3 a) { return sqrt(dot(a, a)); }
static d3 normalize(d3 a)
{
    double l = len(a);
    return l > 0 ? mul(a, 1.0 / l) : mk(0, 0, 0);
}
static d3 limit(d3 a, double m)
{
    double l = len(a);
    return l > m ? mul(a, m / l) : a;
}
static d3 clamp_speed(d3 v, double lo, double hi)
{
    double l = len(v);
    if (l > 0 && l < lo)
        return mul(v, lo / l);
    if (l > hi)
        return mul(v, hi / l);
    return v;
}

#define MAXB 4
typedef struct world {
    int n;
    d3 p[MAXB], v[MAXB];
} world;

static world ref_step(shoal_model model, const shoal_params *q, const world *w, double dt,
                      const float *targets, int target_count)
{
    world o = *w;
    for (int i = 0; i < w->n; i++) {
        d3 pi = w->p[i], vi = w->v[i];
        if (model == SHOAL_MODEL_STEER || model == SHOAL_MODEL_AVERAGE) {
            d3 ss = mk(0, 0, 0), as = ss, cs = ss;
            int sn = 0, an = 0, cn = 0;
            for (int j = 0; j < w->n; j++) {
                d3 diff = sub(pi, w->p[j]);
                double d = len(diff);
                if (d == 0)
                    continue;
                if (d <= q->sep_radius) {
                    ss = add(ss, model == SHOAL_MODEL_STEER ? mul(diff, 1.0 / (d * d)) : diff);
                    sn++;
                }
                if (d <= q->ali_radius) {
                    as = add(as, w->v[j]);
                    an++;
                }
                if (d <= q->coh_radius) {
                    cs = add(cs, w->p[j]);
                    cn++;
                }
            }
            d3 f = mk(0, 0, 0);
            if (model == SHOAL_MODEL_STEER) {
                if (sn)
                    f = add(f, mul(limit(sub(mul(normalize(mul(ss, 1.0 / sn)), q->max_speed), vi),
                                         q->max_steer),
                                   q->sep_weight));
                if (an)
                    f = add(f, mul(limit(sub(mul(normalize(mul(as, 1.0 / an)), q->max_speed), vi),
                                         q->max_steer),
                                   q->ali_weight));
                if (cn)
                    f = add(
                        f,
                        mul(limit(sub(mul(normalize(sub(mul(cs, 1.0 / cn), pi)), q->max_speed), vi),
                                  q->max_steer),
                            q->coh_weight));
            } else {
                if (sn)
                    f = add(f, mul(ss, q->sep_weight / sn));
                if (an)
                    f = add(f, mul(as, q->ali_weight / an));
                if (cn)
                    f = add(f, mul(sub(mul(cs, 1.0 / cn), pi), q->coh_weight));
                f = limit(f, q->max_steer);
            }
            double wall[3];
            const double pc[3] = {pi.x, pi.y, pi.z};
            for (int c = 0; c < 3; c++) {
                wall[c] = 0;
                if (pc[c] < q->wall_center[c] - q->wall_size[c] / 2)
                    wall[c] += 1;
                if (pc[c] > q->wall_center[c] + q->wall_size[c] / 2)
                    wall[c] -= 1;
            }
            f = add(f, mul(mk(wall[0], wall[1], wall[2]), q->wall_weight));
            o.v[i] = limit(add(vi, mul(f, dt)), q->max_speed);
            o.p[i] = add(pi, mul(o.v[i], dt));
        } else if (model == SHOAL_MODEL_HEADING) {
            double R = q->neighbor_radius;
            d3 sep = mk(0, 0, 0), ali = sep, coh = sep;
            int n = 0;
            for (int j = 0; j < w->n; j++) {
                double d = len(sub(w->p[j], pi));
                if (d == 0 || !(d < R))
                    continue;
                sep = add(sep, mul(normalize(sub(w->p[j], pi)), -(R - d) / R));
                ali = add(ali, normalize(w->v[j]));
                coh = add(coh, w->p[j]);
                n++;
            }
            double a = 1.0 / (n > 1 ? n : 1);
            sep = mul(sep, a * q->sep_weight);
            ali = mul(ali, a * q->ali_weight);
            coh = mul(sub(mul(coh, a), pi), q->coh_weight);
            int best = 0;
            double bd = INFINITY;
            for (int k = 0; k < target_count; k++) {
                d3 t = mk(targets[k * 3], targets[k * 3 + 1], targets[k * 3 + 2]);
                double dd = dot(sub(t, pi), sub(t, pi));
                if (dd < bd) {
                    bd = dd;
                    best = k;
                }
            }
            d3 t = mk(targets[best * 3], targets[best * 3 + 1], targets[best * 3 + 2]);
            d3 f = normalize(add(add(add(mul(sub(t, pi), q->target_weight), sep), ali), coh));
            d3 dir = normalize(vi);
            dir = normalize(add(dir, mul(sub(f, dir), q->rotate_speed * dt)));
            dir.y = dir.y < -0.5 ? -0.5 : dir.y > 0.5 ? 0.5 : dir.y;
            dir = normalize(dir);
            o.p[i] = add(pi, mul(dir, q->move_speed * dt));
            o.v[i] = mul(dir, q->move_speed);
        } else if (model == SHOAL_MODEL_CLASSIC) {
            d3 r1 = mk(0, 0, 0), vs = r1, ps = r1;
            int n1 = 0, n = 0;
            const d3 normals[6] = {mk(0, -1, 0), mk(0, 1, 0),  mk(1, 0, 0),
                                   mk(-1, 0, 0), mk(0, 0, -1), mk(0, 0, 1)};
            const double sd[6] = {q->box_max[1] - pi.y, pi.y - q->box_min[1], pi.x - q->box_min[0],
                                  q->box_max[0] - pi.x, q->box_max[2] - pi.z, pi.z - q->box_min[2]};
            for (int k = 0; k < 6; k++) {
                if (sd[k] > q->fov || sd[k] == 0)
                    continue;
                d3 e = mul(normals[k], -sd[k]); /* q - p */
                double d = len(e);
                r1 = add(r1, mul(normalize(e), -q->sep_strength / (d * d)));
                n1++;
            }
            for (int j = 0; j < w->n; j++) {
                d3 e = sub(w->p[j], pi);
                double d = len(e);
                if (d == 0 || d > q->fov)
                    continue;
                r1 = add(r1, mul(normalize(e), -q->sep_strength / (d * d)));
                n1++;
                vs = add(vs, w->v[j]);
                ps = add(ps, w->p[j]);
                n++;
            }
            d3 a1 = n1 ? mul(r1, 1.0 / n1) : mk(0, 0, 0);
            d3 a2 = n ? sub(mul(vs, 1.0 / n), vi) : mk(0, 0, 0);
            d3 a3 = n ? sub(mul(ps, 1.0 / n), pi) : mk(0, 0, 0);
            double wsum = (double)q->w1 + q->w2 + q->w3; /* seed 002's divisor */
            d3 acc = wsum != 0
                         ? mul(add(add(mul(a1, q->w1), mul(a2, q->w2)), mul(a3, q->w3)), 1.0 / wsum)
                         : mk(0, 0, 0);
            o.p[i] = add(pi, add(mul(vi, dt), mul(acc, dt * dt / 2)));
            o.v[i] = clamp_speed(add(vi, mul(acc, dt)), q->min_speed, q->max_speed);
        } else {
            d3 cs = mk(0, 0, 0), sep = cs, as = cs;
            int cn = 0, an = 0;
            for (int j = 0; j < w->n; j++) {
                d3 e = sub(w->p[j], pi);
                double d2 = dot(e, e);
                if (d2 == 0)
                    continue;
                double ang = acos(dot(normalize(vi), normalize(e)));
                if (d2 < q->coh_dist2 && ang < q->coh_angle) {
                    cs = add(cs, w->p[j]);
                    cn++;
                }
                if (d2 < q->sep_dist2 && ang < q->sep_angle)
                    sep = add(sep, mul(normalize(sub(pi, w->p[j])), 1.0 / sqrt(d2)));
                if (d2 < q->ali_dist2 && ang < q->ali_angle) {
                    as = add(as, w->v[j]);
                    an++;
                }
            }
            d3 coh = cn ? mul(sub(mul(cs, 1.0 / cn), pi), q->coh_force) : mk(0, 0, 0);
            d3 ali = an ? mul(sub(mul(as, 1.0 / an), vi), q->ali_force) : mk(0, 0, 0);
            sep = mul(sep, q->sep_force);
            d3 c = mk(q->boundary_center[0], q->boundary_center[1], q->boundary_center[2]);
            double sq = dot(sub(c, pi), sub(c, pi));
            d3 b = mk(0, 0, 0);
            if (sq > q->boundary_range2)
                b = mul(sub(pi, c), -q->boundary_force * (sq - q->boundary_range2) / sq);
            coh = limit(coh, q->max_force);
            sep = limit(sep, q->max_force);
            ali = limit(ali, q->max_force);
            d3 v = add(vi, mul(add(add(add(coh, sep), ali), b), dt));
            v = clamp_speed(v, q->min_speed, q->max_speed);
            o.v[i] = v;
            o.p[i] = add(pi, v);
        }
    }
    return o;
}

/* Run the engine on `w` for one step (grid) and compare with the reference. */
static void check_case(shoal_model model, const shoal_params *q, const world *w, double tol,
                       const char *what)
{
    shoal_sim_desc d = shoal_sim_desc_default();
    d.model = model;
    d.params = *q;
    d.boid_count = (size_t)w->n;
    d.seed = 3;
    shoal_sim *s;
    shoal_error e;
    if (shoal_sim_create(&d, &s, &e))
        fail_msg("%s", e.message);
    float rows[MAXB * 6];
    for (int i = 0; i < w->n; i++) {
        const double r[6] = {w->p[i].x, w->p[i].y, w->p[i].z, w->v[i].x, w->v[i].y, w->v[i].z};
        for (int k = 0; k < 6; k++)
            rows[i * 6 + k] = (float)r[k];
    }
    world wf = *w; /* the float-rounded inputs */
    for (int i = 0; i < w->n; i++) {
        wf.p[i] = mk(rows[i * 6], rows[i * 6 + 1], rows[i * 6 + 2]);
        wf.v[i] = mk(rows[i * 6 + 3], rows[i * 6 + 4], rows[i * 6 + 5]);
    }
    float targets[SHOAL_MAX_TARGETS * 3];
    int tc = (int)shoal_sim_targets(s, 0.0, targets, SHOAL_MAX_TARGETS);
    assert_int_equal(shoal_sim_set_state(s, rows, NULL), SHOAL_OK);
    assert_int_equal(shoal_sim_step(s, 1, NULL), SHOAL_OK);
    shoal_sim_get_state(s, rows);
    shoal_sim_destroy(s);
    world r = ref_step(model, q, &wf, (double)(float)(1.0 / 60.0), targets, tc);
    for (int i = 0; i < w->n; i++) {
        const double want[6] = {r.p[i].x, r.p[i].y, r.p[i].z, r.v[i].x, r.v[i].y, r.v[i].z};
        for (int k = 0; k < 6; k++) {
            double got = rows[i * 6 + k];
            double scale = fabs(want[k]) > 1 ? fabs(want[k]) : 1;
            if (fabs(got - want[k]) > tol * scale)
                fail_msg("%s (%s): boid %d column %d: engine %.9g, reference %.9g", what,
                         shoal_model_name(model), i, k, got, want[k]);
        }
    }
}

/* steer, literal: boid 0 at the origin, boid 1 at (0.5, 0, 0), both at rest.
 * sep = limit(normalize(-2,0,0) * 5, 0.5) = (-0.5,0,0); coh = limit((5,0,0), 0.5) =
 * (0.5,0,0); ali = 0; f = coh + 3 sep = (-1,0,0); v = f dt; p = v dt. */
static void test_steer_literal(void **state)
{
    (void)state;
    shoal_sim_desc d = shoal_sim_desc_default();
    d.boid_count = 2;
    shoal_sim *s;
    assert_int_equal(shoal_sim_create(&d, &s, NULL), SHOAL_OK);
    float rows[12] = {0, 0, 0, 0, 0, 0, 0.5f, 0, 0, 0, 0, 0};
    shoal_sim_set_state(s, rows, NULL);
    assert_int_equal(shoal_sim_step(s, 1, NULL), SHOAL_OK);
    shoal_sim_get_state(s, rows);
    shoal_sim_destroy(s);
    float dt = (float)(1.0 / 60.0);
    assert_float_equal(rows[3], -dt, 1e-9);
    assert_float_equal(rows[0], -dt * dt, 1e-10);
    assert_float_equal(rows[9], dt, 1e-9);
    assert_float_equal(rows[6], 0.5f + dt * dt, 1e-7);
    assert_float_equal(rows[1], 0, 0);
    assert_float_equal(rows[4], 0, 0);
}

/* classic, literal: one boid 1 unit below the top wall (fov 5), at rest, far from the
 * other walls. Virtual boid at distance 1 above: rule1 = -(0,1,0) * 10 / 1 = (0,-10,0),
 * mean over 1; a = 5 * (0,-10,0) / 8 = (0,-6.25,0). v = a dt, then raised to min_speed 2. */
static void test_classic_literal(void **state)
{
    (void)state;
    shoal_sim_desc d = shoal_sim_desc_default();
    d.model = SHOAL_MODEL_CLASSIC;
    shoal_params_default(d.model, &d.params);
    d.params.box_min[0] = d.params.box_min[2] = -100;
    d.params.box_max[0] = d.params.box_max[2] = 100;
    d.params.box_min[1] = -100;
    d.boid_count = 1;
    shoal_sim *s;
    assert_int_equal(shoal_sim_create(&d, &s, NULL), SHOAL_OK);
    float rows[6] = {0, 19, 0, 0, 0, 0};
    shoal_sim_set_state(s, rows, NULL);
    assert_int_equal(shoal_sim_step(s, 1, NULL), SHOAL_OK);
    shoal_sim_get_state(s, rows);
    shoal_sim_destroy(s);
    double dt = (float)(1.0 / 60.0);
    assert_float_equal(rows[1], 19 - 6.25 * dt * dt / 2, 1e-5);
    assert_float_equal(rows[4], -2.0, 1e-6); /* |v| = 6.25 dt < 2: raised to min_speed */
    assert_float_equal(rows[3], 0, 0);
}

/* One classic step of a boid 1 unit below the top wall, at rest, min_speed 0 (so v = a dt
 * is not raised to a speed floor), with weights w1 w2 w3; rows out. */
static void classic_wall_step(float w1, float w2, float w3, float rows[6])
{
    shoal_sim_desc d = shoal_sim_desc_default();
    d.model = SHOAL_MODEL_CLASSIC;
    shoal_params_default(d.model, &d.params);
    d.params.box_min[0] = d.params.box_min[2] = -100;
    d.params.box_max[0] = d.params.box_max[2] = 100;
    d.params.box_min[1] = -100;
    d.params.min_speed = 0;
    d.params.w1 = w1;
    d.params.w2 = w2;
    d.params.w3 = w3;
    d.boid_count = 1;
    shoal_sim *s;
    assert_int_equal(shoal_sim_create(&d, &s, NULL), SHOAL_OK);
    const float in[6] = {0, 19, 0, 0, 0, 0};
    memcpy(rows, in, sizeof in);
    shoal_sim_set_state(s, rows, NULL);
    assert_int_equal(shoal_sim_step(s, 1, NULL), SHOAL_OK);
    shoal_sim_get_state(s, rows);
    shoal_sim_destroy(s);
}

/* classic divides by the sum of the weights (seed 002: (R1f*Rule1 + R2f*Rule2 + R3f*Rule3) /
 * (R1f + R2f + R3f)), not by a fixed 8. Weights 1 1 1: rule1 = (0,-10,0) (wall 1 above, no
 * neighbour), rules 2 and 3 = 0, so a = (0,-10,0) / 3; v = a dt, p = 19 + a dt^2 / 2. A fixed
 * 8 would give a = (0,-1.25,0). A zero sum gives a = 0: the boid stays where it is, at rest. */
static void test_classic_weight_sum(void **state)
{
    (void)state;
    float rows[6];
    float dt = (float)(1.0 / 60.0);
    classic_wall_step(1, 1, 1, rows);
    double a = -10.0 / 3.0;
    assert_float_equal(rows[4], a * dt, 1e-7);
    assert_float_equal(rows[1], 19 + a * dt * dt / 2, 2e-6);
    assert_float_equal(rows[0], 0, 0);
    assert_float_equal(rows[3], 0, 0);
    assert_float_equal(rows[5], 0, 0);
    /* the defaults 5 2 1 sum to 8: a = 5 (0,-10,0) / 8 */
    classic_wall_step(5, 2, 1, rows);
    assert_float_equal(rows[4], -6.25 * dt, 1e-7);
    /* w1 + w2 + w3 == 0 */
    classic_wall_step(1, -1, 0, rows);
    const float rest[6] = {0, 19, 0, 0, 0, 0};
    assert_memory_equal(rows, rest, sizeof rest);
    classic_wall_step(0, 0, 0, rows);
    assert_memory_equal(rows, rest, sizeof rest);
}

/* The starts of seed 002 (classic) and seed 004 (fov), through shoal_sim_init_state. */
static void init_rows(shoal_model m, const shoal_params *q, size_t n, float *rows)
{
    shoal_sim_desc d = shoal_sim_desc_default();
    d.model = m;
    d.params = *q;
    d.boid_count = n;
    shoal_sim *s;
    assert_int_equal(shoal_sim_create(&d, &s, NULL), SHOAL_OK);
    shoal_sim_init_state(s, 7);
    shoal_sim_get_state(s, rows);
    shoal_sim_destroy(s);
}

/* classic: Velocity = transform.forward * 2 at a random position in the box, so every boid
 * starts at speed 2 (whatever min_speed and max_speed are), in all directions. */
static void test_classic_start(void **state)
{
    (void)state;
    enum { N = 4000 };
    static float rows[N * 6];
    shoal_params q;
    shoal_params_default(SHOAL_MODEL_CLASSIC, &q);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            q.min_speed = 3; /* the start does not follow the speed range */
            q.max_speed = 4;
        }
        init_rows(SHOAL_MODEL_CLASSIC, &q, N, rows);
        double lo[3] = {1e9, 1e9, 1e9}, hi[3] = {-1e9, -1e9, -1e9}, vsum[3] = {0, 0, 0};
        for (int i = 0; i < N; i++) {
            const float *r = rows + 6 * i;
            double sp = sqrt((double)r[3] * r[3] + (double)r[4] * r[4] + (double)r[5] * r[5]);
            if (fabs(sp - 2.0) > 1e-6)
                fail_msg("classic start: boid %d has speed %.9g, want 2", i, sp);
            for (int c = 0; c < 3; c++) {
                assert_true(r[c] >= q.box_min[c] && r[c] <= q.box_max[c]);
                lo[c] = r[c] < lo[c] ? r[c] : lo[c];
                hi[c] = r[c] > hi[c] ? r[c] : hi[c];
                vsum[c] += r[3 + c];
            }
        }
        for (int c = 0; c < 3; c++) {
            /* uniform over the whole box, directions uniform: the mean velocity ~ 0 */
            assert_true(lo[c] < q.box_min[c] + 0.05 * (q.box_max[c] - q.box_min[c]));
            assert_true(hi[c] > q.box_max[c] - 0.05 * (q.box_max[c] - q.box_min[c]));
            assert_true(fabs(vsum[c] / N) < 0.1);
        }
    }
}

/* fov: seed 004 draws Random.insideUnitSphere * m_boundaryRange around the origin, with
 * velocity normalize(uniform in [-1,1]^3) * min_speed. shoal's defaults (boundary_center 0,
 * init_pos_radius 20 = sqrt(boundary_range2 400)) give the same: uniform in the ball of
 * radius 20 at the origin. Otherwise the ball has radius init_pos_radius and is centred at
 * boundary_center (docs/MODELS.md). */
static void test_fov_start(void **state)
{
    (void)state;
    enum { N = 8000 };
    static float rows[N * 6];
    shoal_params q;
    shoal_params_default(SHOAL_MODEL_FOV, &q);
    assert_float_equal(q.init_pos_radius * q.init_pos_radius, q.boundary_range2, 0);
    for (int pass = 0; pass < 2; pass++) {
        double c[3] = {0, 0, 0}, R = sqrt((double)q.boundary_range2);
        if (pass == 1) {
            q.boundary_center[0] = 100;
            q.boundary_center[1] = -50;
            q.init_pos_radius = 5;
            c[0] = 100;
            c[1] = -50;
            R = 5;
        }
        init_rows(SHOAL_MODEL_FOV, &q, N, rows);
        int inner = 0;
        double rmax = 0, mean[3] = {0, 0, 0};
        for (int i = 0; i < N; i++) {
            const float *r = rows + 6 * i;
            double d[3] = {r[0] - c[0], r[1] - c[1], r[2] - c[2]};
            double rr = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
            assert_true(rr <= R * (1 + 1e-6));
            rmax = rr > rmax ? rr : rmax;
            inner += rr < R / 2;
            for (int k = 0; k < 3; k++)
                mean[k] += d[k] / N;
            double sp = sqrt((double)r[3] * r[3] + (double)r[4] * r[4] + (double)r[5] * r[5]);
            assert_float_equal(sp, q.min_speed, 1e-7);
        }
        /* uniform in the ball: 1/8 of the boids within R/2, the farthest near R */
        assert_true(rmax > 0.99 * R);
        assert_true(fabs((double)inner / N - 0.125) < 0.02);
        for (int k = 0; k < 3; k++)
            assert_true(fabs(mean[k]) < 0.05 * R);
    }
}

/* fov with boids far outside the boundary sphere: beyond ~7e12 from the centre the float
 * boundary force overflowed (inf, then NaN through the speed clamp), beyond ~1.8e19 so did
 * |p - c|^2. Now it is finite and pulls the boid back: after one step its velocity points
 * to the centre at max_speed (the pull, ~|p - c| dt, dwarfs everything else). A boid at 1e30
 * moving at 1e30 keeps moving at max_speed: the speed clamp of a velocity whose square
 * overflows keeps its direction (classic too). */
static void test_far_boids_pulled_back(void **state)
{
    (void)state;
    enum { N = 4 };
    static const float start[N][6] = {
        {1e30f, 0, 0, 0.1f, 0, 0},
        {0, -1e13f, 0, 0, 0, 0.1f},
        {3e19f, 3e19f, -3e19f, 0, 0.1f, 0},
        {8e12f, 0, 5e12f, 0, 0, 0},
    };
    shoal_sim_desc d = shoal_sim_desc_default();
    d.model = SHOAL_MODEL_FOV;
    shoal_params_default(d.model, &d.params);
    d.boid_count = N;
    float rows[N * 6];
    for (int isa = 0; isa < TEST_ISA_COUNT; isa++) {
        d.isa = test_isas[isa];
        if (!shoal_isa_supported(d.isa))
            continue;
        shoal_sim *s;
        assert_int_equal(shoal_sim_create(&d, &s, NULL), SHOAL_OK);
        memcpy(rows, start, sizeof start);
        assert_int_equal(shoal_sim_set_state(s, rows, NULL), SHOAL_OK);
        shoal_error e;
        if (shoal_sim_step(s, 1, &e))
            fail_msg("fov, far boids, %s: %s", shoal_sim_isa_name(s), e.message);
        shoal_sim_get_state(s, rows);
        shoal_sim_destroy(s);
        for (int i = 0; i < N; i++) {
            const float *r = rows + 6 * i;
            d3 p0 = mk(start[i][0], start[i][1], start[i][2]);
            d3 v = mk(r[3], r[4], r[5]);
            d3 want = mul(normalize(p0), -(double)d.params.max_speed);
            if (len(sub(v, want)) > 1e-6)
                fail_msg("fov, far boid %d: v = (%g %g %g), want (%g %g %g)", i, (double)r[3],
                         (double)r[4], (double)r[5], want.x, want.y, want.z);
        }
    }
    /* classic: a boid far outside the box at speed 1e30: |v|^2 overflows; it keeps its
     * direction at max_speed (it used to stop dead) */
    d.model = SHOAL_MODEL_CLASSIC;
    shoal_params_default(d.model, &d.params);
    d.boid_count = 1;
    d.isa = SHOAL_ISA_AUTO;
    shoal_sim *s;
    assert_int_equal(shoal_sim_create(&d, &s, NULL), SHOAL_OK);
    float one[6] = {1e30f, 5, 0, -1e30f, 0, 0};
    shoal_sim_set_state(s, one, NULL);
    assert_int_equal(shoal_sim_step(s, 1, NULL), SHOAL_OK);
    shoal_sim_get_state(s, one);
    shoal_sim_destroy(s);
    assert_float_equal(one[3], -d.params.max_speed, 1e-6);
    assert_float_equal(one[4], 0, 1e-6);
    assert_float_equal(one[5], 0, 1e-6);
}

static void world_set(world *w, int n, const double (*pv)[6])
{
    w->n = n;
    for (int i = 0; i < n; i++) {
        w->p[i] = mk(pv[i][0], pv[i][1], pv[i][2]);
        w->v[i] = mk(pv[i][3], pv[i][4], pv[i][5]);
    }
}

static void test_reference_cases(void **state)
{
    (void)state;
    /* 2-4 boids: inside/outside each radius, one near and past a wall, moving */
    static const double c2[2][6] = {{0, 0, 0, 1, 0, 0}, {0.8, 0.3, 0, 0, 1, 0}};
    static const double c3[3][6] = {
        {1, 2, 3, 0.5, -0.2, 0.1}, {1.6, 2.4, 3.1, 0.1, 0.3, 0.2}, {2.5, 2, 3.5, -0.3, 0, 0.4}};
    static const double c4[4][6] = {{15.5, 0, 0, 1, 0.1, 0},
                                    {16.5, 0.5, 0.2, 0.5, 0.5, 0},
                                    {15.9, -0.4, 0.7, 0.2, 0, 0.3},
                                    {17.2, 0.1, -0.6, 1.2, -0.4, 0.1}};
    static const double f3[3][6] = {
        {0, 0, 0, 0.1, 0, 0}, {1.2, 0.2, 0, 0.05, 0.02, 0}, {-0.5, 0.9, 0.3, 0, 0.08, 0.01}};
    static const double f4[4][6] = {{20.5, 0, 0, 0.1, 0, 0},
                                    {21.2, 0.3, 0, -0.05, 0.02, 0},
                                    {19.9, 1.1, 0.4, 0.02, 0.08, 0.01},
                                    {20.1, -0.2, 0.6, 0.07, -0.03, 0.02}};
    static const double k3[3][6] = {
        {-9.5, 1, 0, 3, 0, 0}, {-8, 2, 1, 0, 3, 0}, {-6, 0.5, -2, 1, 1, 1}};
    world w;
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
        shoal_params q;
        shoal_params_default((shoal_model)m, &q);
        if (m == SHOAL_MODEL_FOV) {
            world_set(&w, 3, f3);
            check_case(m, &q, &w, 2e-6, "3 boids");
            world_set(&w, 4, f4);
            check_case(m, &q, &w, 2e-6, "4 boids, outside the sphere");
            continue;
        }
        if (m == SHOAL_MODEL_CLASSIC) {
            world_set(&w, 3, k3);
            check_case(m, &q, &w, 2e-6, "3 boids near the x wall");
            world_set(&w, 2, c2);
            check_case(m, &q, &w, 2e-6, "2 boids on the floor plane");
            continue;
        }
        world_set(&w, 2, c2);
        check_case(m, &q, &w, 2e-6, "2 boids");
        world_set(&w, 3, c3);
        check_case(m, &q, &w, 2e-6, "3 boids");
        world_set(&w, 4, c4);
        check_case(m, &q, &w, 2e-6, "4 boids past the +x wall");
    }
}

/* The model table (sim/models.h) has every model, complete: each shoal_model has its entry,
 * whose parameters are well formed, whose keys name its own parameters, whose functions
 * answer, and whose scene file ships. A model added to the enum and missed in any of
 * these fails here (the per-backend code built from SIM_MODELS fails to compile). */
static void test_model_table(void **state)
{
    (void)state;
#define ONE(id, name) +1
    assert_int_equal(0 SIM_MODELS(ONE), SHOAL_MODEL_COUNT);
#undef ONE
    int listed[SHOAL_MODEL_COUNT] = {0};
#define MARK(id, name)                                                                             \
    listed[id]++;                                                                                  \
    assert_string_equal(shoal_model_name(id), #name);
    SIM_MODELS(MARK)
#undef MARK
    static const char *const units[] = {"units",        "units/s", "units/step", "units/s^2",
                                        "units/step/s", "units^2", "rad",        "s",
                                        "1/s",          "count",   "-"};
    assert_true(SHOAL_MODEL_COUNT <= 9); /* the window's keys 1-9 pick the models */
    assert_null(shoal_model_get_info(SHOAL_MODEL_COUNT));
    assert_null(sim_model_of(SHOAL_MODEL_COUNT));
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
        assert_int_equal(listed[m], 1);
        const sim_model *e = sim_model_of((shoal_model)m);
        assert_non_null(e);
        const shoal_model_info *mi = shoal_model_get_info((shoal_model)m);
        assert_ptr_equal(mi, &e->info);
        assert_int_equal(mi->model, m);
        shoal_model parsed;
        assert_int_equal(shoal_model_parse(mi->name, &parsed, NULL), SHOAL_OK);
        assert_int_equal(parsed, m);
        assert_true(mi->origin && strlen(mi->origin) > 0);
        assert_true(mi->default_count > 0);
        assert_int_equal(shoal_model_default_count((shoal_model)m), mi->default_count);
        size_t n;
        assert_ptr_equal(shoal_params_list((shoal_model)m, &n), mi->params);
        assert_int_equal(n, mi->param_count);
        assert_true(n > 0);
        shoal_params q;
        shoal_params_default((shoal_model)m, &q);
        for (size_t i = 0; i < n; i++) {
            const shoal_param_info *p = &mi->params[i];
            assert_true(p->name && p->help && p->unit && *p->help);
            int known = 0;
            for (size_t u = 0; u < sizeof units / sizeof units[0]; u++)
                known |= strcmp(p->unit, units[u]) == 0;
            if (!known)
                fail_msg("%s.%s: unit '%s' is none of the table's", mi->name, p->name, p->unit);
            assert_true(p->min <= p->default_value && p->default_value <= p->max);
            for (size_t j = 0; j < i; j++)
                if (strcmp(mi->params[j].name, p->name) == 0)
                    fail_msg("%s: parameter %s listed twice", mi->name, p->name);
        }
        /* the window's keys name parameters of this model, each once */
        assert_true(mi->live_count > 0);
        for (size_t k = 0; k < mi->live_count; k++) {
            int found = 0;
            for (size_t i = 0; i < n; i++)
                found += strcmp(mi->params[i].name, mi->live_params[k]) == 0;
            if (found != 1)
                fail_msg("%s: the window key parameter '%s' is not one of its parameters", mi->name,
                         mi->live_params[k]);
            for (size_t j = 0; j < k; j++)
                assert_string_not_equal(mi->live_params[j], mi->live_params[k]);
        }
        /* the functions answer at the defaults */
        assert_non_null(e->radius);
        assert_non_null(e->bounds);
        assert_non_null(e->start);
        assert_non_null(e->consts);
        assert_true(e->radius(&q) > 0);
        assert_float_equal(shoal_params_interaction_radius((shoal_model)m, &q), e->radius(&q), 0);
        float lo[3], hi[3];
        e->bounds(&q, lo, hi);
        for (int c = 0; c < 3; c++)
            assert_true(lo[c] < hi[c]);
        rng r = rng_stream(1, 2);
        float row[6];
        e->start(&q, &r, row);
        for (int c = 0; c < 6; c++)
            assert_true(isfinite(row[c]));
        assert_int_equal(shoal_params_validate((shoal_model)m, &q, NULL), SHOAL_OK);
        /* scale_geometry's lengths are parameters of this model */
        for (size_t k = 0; k < sizeof e->lengths / sizeof e->lengths[0] && e->lengths[k]; k++) {
            int found = 0;
            for (size_t i = 0; i < n; i++)
                found |= mi->params[i].offset == e->lengths[k];
            assert_true(found);
        }
        /* its scene file ships (the window's key, `shoal run --model`) */
        char path[1024];
        snprintf(path, sizeof path, "%s/assets/scenes/%s.ini", SHOAL_SOURCE_ROOT, mi->name);
        shoal_scene sc;
        shoal_error e2;
        if (shoal_scene_load(path, &sc, &e2))
            fail_msg("%s", e2.message);
        assert_int_equal(sc.desc.model, m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steer_literal),      cmocka_unit_test(test_classic_literal),
        cmocka_unit_test(test_classic_weight_sum), cmocka_unit_test(test_classic_start),
        cmocka_unit_test(test_fov_start),          cmocka_unit_test(test_far_boids_pulled_back),
        cmocka_unit_test(test_reference_cases),    cmocka_unit_test(test_model_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
