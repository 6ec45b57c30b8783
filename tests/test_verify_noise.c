/* SPDX-License-Identifier: MIT */
/* shoal verify --noise outside (shoal_noise_check, docs/VERIFY.md "Outside noise"):
 * - shoal's own vicsek and couzin trajectories, 2D and 3D, are true samples: they agree;
 * - an outside program written here with its own RNG (splitmix64, not core/noise.h): vicsek
 *   whole (brute-force neighbours in a periodic box, float32 states), couzin's noise and turn
 *   limit on the desired direction of the float64 reference with noise 0: they agree;
 * - it fails naming the part for uniform noise wider than eta (support), a clipped Gaussian of
 *   the same sd (distribution), twice couzin's sigma (distribution), the mean heading without
 *   the boid itself, couzin without its turn limit (turn limit), a wrong speed (speed), the
 *   other update order (integration);
 * - the program: both modes' lines, exit codes, --noise refusals (exit 2, one line). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "shoal/shoal.h"
#include "tests/cli_harness.h"
#include "tests/scenes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979323846

typedef struct rng {
    uint64_t s;
} rng;
static double uni(rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) * 0x1.0p-53;
}
static double gauss(rng *r) { return sqrt(-2.0 * log(uni(r))) * cos(2.0 * PI * uni(r)); }

static shoal_sim_desc make_desc(shoal_model m, int dims, size_t n, const char *const *sets)
{
    shoal_sim_desc d = shoal_sim_desc_for(m);
    shoal_error e;
    d.boid_count = n;
    d.seed = 7;
    if (dims == 2 && shoal_sim_desc_set(&d, "dims", "2", &e))
        fail_msg("%s", e.message);
    for (; sets && *sets; sets += 2)
        if (shoal_sim_desc_set(&d, sets[0], sets[1], &e))
            fail_msg("%s: %s", sets[0], e.message);
    return d;
}

/* steps + 1 states of shoal's float32 engine, as doubles */
static double *engine(const shoal_sim_desc *d, int steps)
{
    shoal_sim *s;
    shoal_error e;
    if (shoal_sim_create(d, &s, &e) || shoal_sim_draw_state(s, &e))
        fail_msg("%s", e.message);
    size_t n = d->boid_count;
    double *t = malloc((size_t)(steps + 1) * n * 6 * sizeof *t);
    float *f = malloc(n * 6 * sizeof *f);
    for (int k = 0; k <= steps; k++) {
        if (k && shoal_sim_step(s, 1, &e))
            fail_msg("%s", e.message);
        shoal_sim_get_rows(s, f, n, NULL);
        for (size_t i = 0; i < n * 6; i++)
            t[(size_t)k * n * 6 + i] = f[i];
    }
    free(f);
    shoal_sim_destroy(s);
    return t;
}

static shoal_noise_result check(const shoal_sim_desc *d, const double *t, int steps)
{
    shoal_noise_check *c;
    shoal_error e;
    if (shoal_noise_check_create(d, &c, &e))
        fail_msg("%s", e.message);
    size_t n = d->boid_count;
    for (int k = 0; k < steps; k++)
        if (shoal_noise_check_step(c, t + (size_t)k * n * 6, t + (size_t)(k + 1) * n * 6, &e))
            fail_msg("%s", e.message);
    shoal_noise_result r;
    shoal_noise_check_result(c, &r);
    shoal_noise_check_destroy(c);
    print_message("    %s\n", r.detail);
    return r;
}

/* the outside programs' variants */
enum { OK_V, WIDE, GAUSS, NO_SELF, NO_LIMIT, SPEED, ORDER, SIGMA2 };

static void unit(double *v)
{
    double l = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    for (int a = 0; a < 3; a++)
        v[a] /= l;
}

/* a direction at angle th from unit m, azimuth phi about a basis of m */
static void tilt(const double *m, double th, double phi, double *out)
{
    double ref[3] = {fabs(m[0]) < 0.6 ? 1.0 : 0.0, fabs(m[0]) < 0.6 ? 0.0 : 1.0, 0.0};
    double e1[3] = {m[1] * ref[2] - m[2] * ref[1], m[2] * ref[0] - m[0] * ref[2],
                    m[0] * ref[1] - m[1] * ref[0]};
    unit(e1);
    double e2[3] = {m[1] * e1[2] - m[2] * e1[1], m[2] * e1[0] - m[0] * e1[2],
                    m[0] * e1[1] - m[1] * e1[0]};
    for (int a = 0; a < 3; a++)
        out[a] = cos(th) * m[a] + sin(th) * (cos(phi) * e1[a] + sin(phi) * e2[a]);
}

/* vicsek in a periodic box, brute force, in double, stored as float32 */
static double *vicsek_outside(const shoal_sim_desc *d, int dims, int steps, int variant)
{
    size_t n = d->boid_count;
    double *t = engine(d, 0), *all = malloc((size_t)(steps + 1) * n * 6 * sizeof *all);
    memcpy(all, t, n * 6 * sizeof *t);
    free(t);
    rng r = {12345};
    double eta = d->params.noise, h = 0.5 * eta, v0 = d->params.move_speed,
           R = d->params.neighbor_radius;
    double u = variant == ORDER ? 1.0 - d->params.update_order : d->params.update_order;
    double L[3], C[3];
    for (int a = 0; a < 3; a++) {
        L[a] = shoal_world_axis_periodic(&d->world, a) ? d->world.size[a] : 0.0;
        C[a] = d->world.center[a];
    }
    for (int k = 0; k < steps; k++) {
        const double *s = all + (size_t)k * n * 6;
        double *o = all + (size_t)(k + 1) * n * 6;
        for (size_t i = 0; i < n; i++) {
            double m[3] = {0, 0, 0};
            for (size_t j = 0; j < n; j++) {
                if (variant == NO_SELF && j == i)
                    continue;
                double q = 0;
                for (int a = 0; a < 3; a++) {
                    double x = s[6 * j + a] - s[6 * i + a];
                    if (L[a] > 0)
                        x -= L[a] * nearbyint(x / L[a]);
                    q += x * x;
                }
                if (q <= R * R) {
                    double w[3] = {s[6 * j + 3], s[6 * j + 4], s[6 * j + 5]};
                    unit(w);
                    for (int a = 0; a < 3; a++)
                        m[a] += w[a];
                }
            }
            if (m[0] == 0 && m[1] == 0 && m[2] == 0)
                memcpy(m, s + 6 * i + 3, sizeof m);
            unit(m);
            double x = variant == WIDE ? (uni(&r) - 0.5) * 1.5 * eta : (uni(&r) - 0.5) * eta;
            if (variant == GAUSS)
                do
                    x = gauss(&r) * eta / sqrt(12.0);
                while (fabs(x) > h);
            double nv[3];
            if (dims == 2) {
                double a = atan2(m[1], m[0]) + x;
                nv[0] = cos(a), nv[1] = sin(a), nv[2] = 0.0;
            } else {
                double c = variant == WIDE ? 1.0 - uni(&r) * (1.0 - cos(1.5 * h))
                                           : 1.0 - uni(&r) * (1.0 - cos(h));
                if (variant == GAUSS) {
                    double th;
                    do
                        th = fabs(gauss(&r)) * h * 0.6;
                    while (th > h);
                    c = cos(th);
                }
                tilt(m, acos(c), 2.0 * PI * uni(&r), nv);
            }
            double sp = variant == SPEED ? 1.01 * v0 : v0;
            for (int a = 0; a < 3; a++) {
                double v = sp * nv[a];
                double p = s[6 * i + a] + d->dt_s * ((1 - u) * s[6 * i + 3 + a] + u * v);
                if (L[a] > 0)
                    p -= L[a] * floor((p - (C[a] - 0.5 * L[a])) / L[a]);
                o[6 * i + a] = (float)p;
                o[6 * i + 3 + a] = (float)v;
            }
        }
    }
    return all;
}

/* couzin: the desired direction from the float64 reference with noise 0 and the turn
 * unlimited (its zones are checked against shoal's own noise by test_verify); the noise, the
 * turn limit and the move here */
static double *couzin_outside(const shoal_sim_desc *d, int dims, int steps, int variant)
{
    size_t n = d->boid_count;
    double *t = engine(d, 0), *all = malloc((size_t)(steps + 1) * n * 6 * sizeof *all);
    double *w = malloc(n * 6 * sizeof *w);
    memcpy(all, t, n * 6 * sizeof *t);
    free(t);
    shoal_sim_desc z = *d;
    z.params.noise = 0.0f;
    z.params.turn_rate_deg = 1.0e6f;
    shoal_sim64 *ref;
    shoal_error e;
    if (shoal_sim64_create(&z, &ref, &e))
        fail_msg("%s", e.message);
    rng r = {999};
    double sg = variant == SIGMA2 ? 2.0 * d->params.noise : d->params.noise;
    double T = d->params.turn_rate_deg * PI / 180.0 * d->dt_s, sp = d->params.move_speed;
    if (variant == SPEED)
        sp *= 1.01;
    for (int k = 0; k < steps; k++) {
        const double *s = all + (size_t)k * n * 6;
        double *o = all + (size_t)(k + 1) * n * 6;
        if (shoal_sim64_set_state(ref, s, &e) || shoal_sim64_step(ref, 1, &e))
            fail_msg("%s", e.message);
        shoal_sim64_get_state(ref, w);
        for (size_t i = 0; i < n; i++) {
            double want[3] = {w[6 * i + 3], w[6 * i + 4], w[6 * i + 5]};
            double hd[3] = {s[6 * i + 3], s[6 * i + 4], s[6 * i + 5]}, nv[3];
            unit(want);
            unit(hd);
            double ang = sg * gauss(&r);
            if (dims == 2) {
                double a = atan2(want[1], want[0]) + ang, ah = atan2(hd[1], hd[0]);
                double dl = remainder(a - ah, 2.0 * PI);
                if (variant != NO_LIMIT && fabs(dl) > T)
                    dl = dl > 0 ? T : -T;
                nv[0] = cos(ah + dl), nv[1] = sin(ah + dl), nv[2] = 0.0;
            } else {
                double dd[3];
                tilt(want, ang, 2.0 * PI * uni(&r), dd);
                double c = dd[0] * hd[0] + dd[1] * hd[1] + dd[2] * hd[2];
                double beta = acos(c < -1 ? -1 : c > 1 ? 1 : c);
                if (variant == NO_LIMIT || beta <= T)
                    memcpy(nv, dd, sizeof nv);
                else {
                    double q[3] = {dd[0] - c * hd[0], dd[1] - c * hd[1], dd[2] - c * hd[2]};
                    unit(q);
                    for (int a = 0; a < 3; a++)
                        nv[a] = cos(T) * hd[a] + sin(T) * q[a];
                }
            }
            for (int a = 0; a < 3; a++) {
                o[6 * i + 3 + a] = (float)(sp * nv[a]);
                o[6 * i + a] = (float)(s[6 * i + a] + d->dt_s * o[6 * i + 3 + a]);
            }
        }
    }
    shoal_sim64_destroy(ref);
    free(w);
    return all;
}

static const char *const vicsek_sets[] = {"noise",      "1.2",   "periodic", "1",
                                          "world_size", "6,6,6", NULL};
static const char *const couzin_sets[] = {"noise", "0.3", "turn_rate_deg", "3000", NULL};

static void expect(shoal_noise_result r, shoal_noise_part part)
{
    if (part == SHOAL_NOISE_OK) {
        assert_int_equal(r.part, SHOAL_NOISE_OK);
        assert_true(r.ks_p >= SHOAL_NOISE_P_MIN);
        assert_true(r.samples > 1000);
    } else
        assert_int_equal(r.part, part);
}

static void test_engine_agrees(void **state)
{
    (void)state;
    int steps = TEST_LONG(20, 6);
    for (int dims = 2; dims <= 3; dims++) {
        shoal_sim_desc d = make_desc(SHOAL_MODEL_VICSEK, dims, 300, vicsek_sets);
        double *t = engine(&d, steps);
        expect(check(&d, t, steps), SHOAL_NOISE_OK);
        free(t);
        d = make_desc(SHOAL_MODEL_COUZIN, dims, 300, couzin_sets);
        t = engine(&d, steps);
        shoal_noise_result r = check(&d, t, steps);
        expect(r, SHOAL_NOISE_OK);
        assert_true(r.limited < r.samples); /* both kinds of boid were tested */
        free(t);
    }
}

static void test_outside_variants(void **state)
{
    (void)state;
    int steps = TEST_LONG(20, 6);
    static const struct {
        int variant;
        shoal_noise_part vicsek, couzin;
    } cases[] = {
        {OK_V, SHOAL_NOISE_OK, SHOAL_NOISE_OK},
        {WIDE, SHOAL_NOISE_SUPPORT, SHOAL_NOISE_OK},
        {GAUSS, SHOAL_NOISE_DISTRIBUTION, SHOAL_NOISE_OK},
        {SIGMA2, SHOAL_NOISE_OK, SHOAL_NOISE_DISTRIBUTION},
        {NO_LIMIT, SHOAL_NOISE_OK, SHOAL_NOISE_TURN_LIMIT},
        {SPEED, SHOAL_NOISE_SPEED, SHOAL_NOISE_SPEED},
        {ORDER, SHOAL_NOISE_INTEGRATION, SHOAL_NOISE_OK},
    };
    for (int dims = 2; dims <= 3; dims++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            print_message("  %dD variant %d\n", dims, cases[c].variant);
            shoal_sim_desc d = make_desc(SHOAL_MODEL_VICSEK, dims, 300, vicsek_sets);
            if (cases[c].variant != SIGMA2 && cases[c].variant != NO_LIMIT) {
                double *t = vicsek_outside(&d, dims, steps, cases[c].variant);
                expect(check(&d, t, steps), cases[c].vicsek);
                free(t);
            }
            if (cases[c].variant == WIDE || cases[c].variant == GAUSS || cases[c].variant == ORDER)
                continue;
            d = make_desc(SHOAL_MODEL_COUZIN, dims, 300, couzin_sets);
            double *t = couzin_outside(&d, dims, steps, cases[c].variant);
            expect(check(&d, t, steps), cases[c].couzin);
            free(t);
        }
    /* the mean heading without the boid itself: the turns are no longer the declared noise */
    for (int dims = 2; dims <= 3; dims++) {
        shoal_sim_desc d = make_desc(SHOAL_MODEL_VICSEK, dims, 300, vicsek_sets);
        double *t = vicsek_outside(&d, dims, steps, NO_SELF);
        shoal_noise_result r = check(&d, t, steps);
        assert_true(r.part == SHOAL_NOISE_SUPPORT || r.part == SHOAL_NOISE_DISTRIBUTION);
        free(t);
    }
}

static void test_refusals(void **state)
{
    (void)state;
    shoal_sim_desc d = shoal_sim_desc_for(SHOAL_MODEL_STEER);
    shoal_noise_check *c = (shoal_noise_check *)&d;
    shoal_error e;
    assert_int_equal(shoal_noise_check_create(&d, &c, &e), SHOAL_ERR_INPUT);
    assert_null(c);
    assert_non_null(strstr(e.message, "no noise parameter"));
    assert_string_equal(shoal_noise_part_name(SHOAL_NOISE_SUPPORT), "support");
    assert_null(shoal_noise_part_name((shoal_noise_part)99));
}

/* the program: both modes on one trajectory of shoal's, the reports, the refusals */
static void test_cli(void **state)
{
    (void)state;
    assert_int_equal(run("init --model vicsek --count 300 --set periodic=1 --set world_size=6,6,6 "
                         "--set noise=1.2 --out a.npy"),
                     0);
    assert_int_equal(run("step --model vicsek --set periodic=1 --set world_size=6,6,6 --set "
                         "noise=1.2 --in a.npy --steps 12 --every 1 --out-dir tr --quiet"),
                     0);
    assert_int_equal(run("verify --trajectory tr --quiet"), 0); /* shoal's own draws */
    assert_non_null(strstr(g_out, "verdict: agrees"));
    assert_int_equal(run("verify --trajectory tr --noise outside --csv n.csv --json n.json"), 0);
    assert_non_null(strstr(g_out, "noise outside"));
    assert_non_null(strstr(g_out, "summary: noise outside: verdict: agrees: the noise agrees"));
    char buf[4096];
    cli_read_into("n.csv", buf, sizeof buf);
    assert_non_null(strstr(buf, "steps,samples,limited,ks_d,ks_p"));
    assert_non_null(strstr(buf, ",agrees,ok,0"));
    cli_read_into("n.json", buf, sizeof buf);
    assert_non_null(strstr(buf, "\"noise\": \"outside\""));
    assert_non_null(strstr(buf, "\"verdict\": \"agrees\""));
    /* a program with another speed */
    assert_int_equal(run("verify --trajectory tr --noise outside --set speed=0.05 --json m.json"),
                     1);
    assert_non_null(strstr(g_out, "verdict: rule differs: speed"));
    cli_read_into("m.json", buf, sizeof buf);
    assert_non_null(strstr(buf, "\"part\": \"speed\""));
    /* a narrower declared eta: its turns are outside the support */
    assert_int_equal(run("verify --trajectory tr --noise outside --set noise=0.6 --quiet"), 1);
    assert_non_null(strstr(g_out, "outside its support"));
    /* refusals: one line, exit 2, no report */
    assert_int_equal(run("verify --trajectory tr --noise other --csv x.csv"), 2);
    assert_non_null(strstr(g_err, "--noise: 'other' (expected shoal or outside)"));
    assert_false(exists("x.csv"));
    assert_int_equal(run("init --count 50 --out s.npy"), 0);
    assert_int_equal(run("step --in s.npy --steps 2 --every 1 --out-dir st --quiet"), 0);
    assert_int_equal(run("verify --trajectory st --noise outside --csv x.csv"), 2);
    assert_non_null(strstr(g_err, "model steer has no noise parameter"));
    assert_null(strchr(g_err, '\n') == NULL ? NULL : strchr(strchr(g_err, '\n') + 1, '\n'));
    assert_false(exists("x.csv"));
}

static int setup(void **state)
{
    (void)state;
    return cli_setup("verify-noise");
}

static int teardown(void **state)
{
    (void)state;
    return cli_teardown();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cli),
        cmocka_unit_test(test_engine_agrees),
        cmocka_unit_test(test_outside_variants),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
