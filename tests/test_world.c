/* SPDX-License-Identifier: MIT */
/* The world's contract (shoal/world.h, sim/world.h, docs/WORLD.md): parameters by name
 * (--set and scenes' [world]), validation and its messages, the 2D check of states, the
 * refusal of worlds the step does not run yet, scene scaling; and the arithmetic the step
 * will call: wrap into the box and the minimum image, scalar float and double against
 * their definitions (boxes that are not multiples of a cell, points exactly on the seam,
 * far away, NaN), and the wide versions of every ISA and of the float64 reference equal to
 * the scalar ones bit for bit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/cpu.h"
#include "shoal/shoal.h"
#include "sim/world.h"
#include "tests/world_isa.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void expect_error(shoal_status st, const shoal_error *e, const char *part)
{
    if (st == SHOAL_OK)
        fail_msg("expected an error containing '%s'", part);
    if (!strstr(e->message, part))
        fail_msg("message '%s' lacks '%s'", e->message, part);
}

/* ---- parameters by name ------------------------------------------------------------------- */

static void test_defaults(void **state)
{
    (void)state;
    shoal_world w = shoal_world_default();
    assert_int_equal(w.dims, 3);
    assert_true(shoal_world_is_default(&w));
    shoal_world z;
    memset(&z, 0, sizeof z); /* a zeroed world is today's world */
    assert_true(shoal_world_is_default(&z));
    assert_int_equal(shoal_world_dims(&z), 3);
    shoal_error e;
    assert_int_equal(shoal_world_validate(&z, 1.0f, &e), SHOAL_OK);
    shoal_sim_desc d = shoal_sim_desc_default();
    assert_true(shoal_world_is_default(&d.world));
    assert_int_equal(d.world.dims, 3);
    size_t n;
    const shoal_param_info *list = shoal_world_params_list(&n);
    assert_int_equal(n, 10);
    for (size_t i = 0; i < n; i++) {
        assert_true(shoal_world_has_param(list[i].name));
        assert_true(shoal_world_param_value(&w, &list[i]) == (double)list[i].default_value);
    }
}

static void test_set_by_name(void **state)
{
    (void)state;
    shoal_world w = shoal_world_default();
    shoal_error e;
    assert_int_equal(shoal_world_set(&w, "periodic", "1", &e), SHOAL_OK);
    assert_true(w.periodic[0] == 1 && w.periodic[1] == 1 && w.periodic[2] == 1);
    assert_int_equal(shoal_world_set(&w, "periodic", "1,0,1", &e), SHOAL_OK);
    assert_true(w.periodic[0] == 1 && w.periodic[1] == 0 && w.periodic[2] == 1);
    assert_int_equal(shoal_world_set(&w, "periodic_y", "1", &e), SHOAL_OK);
    assert_int_equal(w.periodic[1], 1);
    assert_int_equal(shoal_world_set(&w, "world_size", "10.5, 20,30", &e), SHOAL_OK);
    assert_true(w.size[0] == 10.5f && w.size[1] == 20.0f && w.size[2] == 30.0f);
    assert_int_equal(shoal_world_set(&w, "world_center_z", "-4", &e), SHOAL_OK);
    assert_true(w.center[2] == -4.0f);
    assert_int_equal(shoal_world_set(&w, "dims", "2", &e), SHOAL_OK);
    assert_int_equal(w.dims, 2);
    /* in 2D z does not wrap whatever its flag says */
    assert_int_equal(shoal_world_axis_periodic(&w, 2), 0);
    assert_int_equal(shoal_world_axis_periodic(&w, 0), 1);

    shoal_world before = w;
    expect_error(shoal_world_set(&w, "dims", "4", &e), &e, "dims: 4 is out of range [2, 3]");
    expect_error(shoal_world_set(&w, "dims", "2.5", &e), &e, "(integer)");
    expect_error(shoal_world_set(&w, "periodic_x", "2", &e), &e, "periodic_x");
    expect_error(shoal_world_set(&w, "periodic", "1,0", &e), &e, "is not 0, 1 or x,y,z");
    expect_error(shoal_world_set(&w, "world_size", "1,2", &e), &e, "is not x,y,z");
    expect_error(shoal_world_set(&w, "world_size", "1,-2,3", &e), &e, "out of range");
    expect_error(shoal_world_set(&w, "world_size_x", "nan", &e), &e, "not a finite number");
    expect_error(shoal_world_set(&w, "world_center", "1,2,1e40", &e), &e, "world_center");
    expect_error(shoal_world_set(&w, "wrap", "1", &e), &e, "unknown world parameter 'wrap'");
    assert_memory_equal(&w, &before, sizeof w); /* a failed set changes nothing */

    /* the desc sends world names to the world, the rest to the model */
    shoal_sim_desc d = shoal_sim_desc_default();
    assert_int_equal(shoal_sim_desc_set(&d, "periodic_x", "1", &e), SHOAL_OK);
    assert_int_equal(shoal_sim_desc_set(&d, "sep_radius", "2", &e), SHOAL_OK);
    assert_true(d.world.periodic[0] == 1 && d.params.sep_radius == 2.0f);
    expect_error(shoal_sim_desc_set(&d, "no_such", "2", &e), &e, "unknown parameter");
}

static void test_validate(void **state)
{
    (void)state;
    shoal_error e;
    shoal_world w = shoal_world_default();
    w.dims = 1;
    expect_error(shoal_world_validate(&w, 1, &e), &e, "dims 1 is not 2 or 3");
    w = shoal_world_default();
    w.periodic[1] = 1;
    expect_error(shoal_world_validate(&w, 1, &e), &e, "periodic_y needs a size");
    w.size[1] = 3.9f;
    expect_error(shoal_world_validate(&w, 2, &e), &e, "smaller than twice the interaction");
    w.size[1] = 4.0f; /* exactly 2 r */
    assert_int_equal(shoal_world_validate(&w, 2, &e), SHOAL_OK);
    w.size[0] = -1;
    expect_error(shoal_world_validate(&w, 2, &e), &e, "world_size_x");
    w.size[0] = NAN;
    expect_error(shoal_world_validate(&w, 2, &e), &e, "world_size_x");
    w.size[0] = 0;
    w.center[2] = INFINITY;
    expect_error(shoal_world_validate(&w, 2, &e), &e, "world_center_z");
    w.center[2] = 0;
    w.periodic[2] = 7;
    expect_error(shoal_world_validate(&w, 2, &e), &e, "periodic_z 7 is not 0 or 1");
    /* a box that vanishes against its centre */
    w = shoal_world_default();
    w.periodic[0] = 1;
    w.size[0] = 1.0f;
    w.center[0] = 1e9f;
    expect_error(shoal_world_validate(&w, 0.1f, &e), &e, "too small for floats");
    /* 2D: z's flag and size are not read */
    w = shoal_world_default();
    w.dims = 2;
    w.periodic[0] = w.periodic[1] = w.periodic[2] = 1;
    w.size[0] = w.size[1] = 10;
    assert_int_equal(shoal_world_validate(&w, 2, &e), SHOAL_OK);
}

static void test_check_rows_2d(void **state)
{
    (void)state;
    shoal_error e;
    float rows[3 * 6] = {1, 2, 0, 1, 0, 0, 3, 4, 0, 0, 1, 0, 5, 6, 0, 0, 0, 0};
    shoal_world w = shoal_world_default();
    rows[8] = 0.5f;
    assert_int_equal(shoal_world_check_rows(&w, rows, 3, "s.npy", &e), SHOAL_OK); /* 3D */
    w.dims = 2;
    expect_error(shoal_world_check_rows(&w, rows, 3, "s.npy", &e), &e,
                 "s.npy: row 1 has z = 0.5 in a 2D world");
    rows[8] = 0;
    rows[17] = -1e-30f;
    expect_error(shoal_world_check_rows(&w, rows, 3, "s.npy", &e), &e, "row 2 has vz = -1e-30");
    rows[17] = -0.0f; /* minus zero is zero */
    assert_int_equal(shoal_world_check_rows(&w, rows, 3, "s.npy", &e), SHOAL_OK);
}

/* Until the step runs them, every backend refuses a periodic or 2D world (never a walled 3D
 * run in its place); a box alone (drawn, not periodic) is today's world. */
static void test_backends_refuse(void **state)
{
    (void)state;
    shoal_error e;
    shoal_sim *sim = NULL;
    shoal_sim_desc d = shoal_sim_desc_default();
    d.boid_count = 16;
    d.world.size[0] = d.world.size[1] = d.world.size[2] = 50;
    assert_int_equal(shoal_sim_create(&d, &sim, &e), SHOAL_OK);
    shoal_sim_destroy(sim);
    d.world.periodic[0] = 1;
    assert_int_equal(shoal_sim_create(&d, &sim, &e), SHOAL_ERR_UNSUPPORTED);
    assert_non_null(strstr(e.message, "not stepped yet"));
    d.world.periodic[0] = 0;
    d.world.dims = 2;
    assert_int_equal(shoal_sim_create(&d, &sim, &e), SHOAL_ERR_UNSUPPORTED);
    shoal_sim64 *s64 = NULL;
    assert_int_equal(shoal_sim64_create(&d, &s64, &e), SHOAL_ERR_UNSUPPORTED);
    d.world.dims = 5;
    assert_int_equal(shoal_sim_create(&d, &sim, &e), SHOAL_ERR_INPUT);
}

static void test_scene_world(void **state)
{
    (void)state;
    shoal_scene sc;
    shoal_error e;
    const char *text = "[scene]\ncount = 100\n[world]\ndims = 2\nperiodic = 1\n"
                       "size = 40, 30, 0\ncenter_x = 5\n";
    assert_int_equal(shoal_scene_parse(text, "w.ini", &sc, &e), SHOAL_OK);
    assert_int_equal(sc.desc.world.dims, 2);
    assert_true(sc.desc.world.periodic[0] && sc.desc.world.periodic[1]);
    assert_true(sc.desc.world.size[0] == 40 && sc.desc.world.size[1] == 30);
    assert_true(sc.desc.world.center[0] == 5);
    /* 4x the boids in 2D: the box grows by sqrt(4) = 2 (density by area) */
    double s = shoal_scene_set_count(&sc, 400, 0);
    assert_true(s == 2.0);
    assert_true(sc.desc.world.size[0] == 80 && sc.desc.world.size[1] == 60);
    assert_true(sc.desc.world.center[0] == 10);
    /* 8x in 3D: cbrt(8) = 2 */
    assert_int_equal(
        shoal_scene_parse("[scene]\ncount = 100\n[world]\nsize = 40,40,40\n", "w3.ini", &sc, &e),
        SHOAL_OK);
    assert_true(shoal_scene_set_count(&sc, 800, 0) == 2.0);
    assert_true(sc.desc.world.size[2] == 80);
    expect_error(shoal_scene_parse("[world]\nperiodic = 1\n", "bad.ini", &sc, &e), &e,
                 "scene bad.ini: world: periodic_x needs a size");
    expect_error(shoal_scene_parse("[world]\nwrap = 1\n", "bad.ini", &sc, &e), &e,
                 "[world] wrap: unknown key");
    expect_error(shoal_scene_parse("[world]\ndims = 1\n", "bad.ini", &sc, &e), &e,
                 "[world] dims: world parameter dims: 1 is out of range");
    expect_error(shoal_scene_parse("[world]\nperiodic = 1\nsize = 1,1,1\n", "bad.ini", &sc, &e), &e,
                 "smaller than twice the interaction radius");
}

/* ---- wrap ------------------------------------------------------------------------------------ */

/* a box whose size is no multiple of anything: L = 10.3 centred at 0.7 */
#define BOX_C 0.7f
#define BOX_L 10.3f

static void box(float *lo, float *hi, float *half)
{
    *half = 0.5f * BOX_L;
    *lo = BOX_C - *half;
    *hi = *lo + BOX_L;
}

static void test_wrap_seam(void **state)
{
    (void)state;
    float lo, hi, half;
    box(&lo, &hi, &half);
    /* the seam: hi goes to lo, lo stays, the float below hi stays */
    assert_true(world_wrap_f(hi, lo, BOX_L, hi) == lo);
    assert_true(world_wrap_f(lo, lo, BOX_L, hi) == lo);
    float below = nextafterf(hi, 0.0f);
    assert_true(world_wrap_f(below, lo, BOX_L, hi) == below);
    /* just below lo: wraps to just below hi, or to lo if that rounds onto hi */
    float under = nextafterf(lo, -INFINITY);
    float w = world_wrap_f(under, lo, BOX_L, hi);
    assert_true(w >= lo && w < hi);
    assert_true(w == lo || fabsf(w - hi) < 1e-5f);
    /* a point a little across each seam comes back a little inside the other */
    assert_true(fabsf(world_wrap_f(hi + 0.25f, lo, BOX_L, hi) - (lo + 0.25f)) < 1e-6f);
    assert_true(fabsf(world_wrap_f(lo - 0.25f, lo, BOX_L, hi) - (hi - 0.25f)) < 1e-6f);
    /* far away: many periods, both sides */
    for (int k = -1000; k <= 1000; k += 37) {
        float x = BOX_C + 1.234f + (float)k * BOX_L;
        float y = world_wrap_f(x, lo, BOX_L, hi);
        assert_true(y >= lo && y < hi);
        double m = fmod((double)y - (double)x, (double)BOX_L);
        m = fabs(m) > BOX_L / 2 ? fabs(m) - BOX_L : m; /* a whole number of periods */
        if (fabs(m) > 1e-6 * (1 + fabs((double)x)))
            fail_msg("wrap(%.9g) = %.9g is not a whole number of periods away", (double)x,
                     (double)y);
    }
    assert_true(isnan(world_wrap_f(NAN, lo, BOX_L, hi)));
    assert_true(isnan(world_wrap_f(INFINITY, lo, BOX_L, hi)));
    assert_true(isnan(world_wrap_f(-INFINITY, lo, BOX_L, hi)));
    /* double: the same rule */
    assert_true(world_wrap_d(hi, lo, BOX_L, hi) == lo);
    assert_true(fabs(world_wrap_d(hi + 0.25, lo, BOX_L, hi) - (lo + 0.25)) < 1e-12);
    /* rows: only the periodic axes, only positions */
    shoal_world wd = shoal_world_default();
    wd.periodic[0] = 1;
    wd.size[0] = BOX_L;
    wd.center[0] = BOX_C;
    world_axes a;
    world_axes_make(&wd, &a);
    assert_true(a.lo[0] == lo && a.hi[0] == hi && a.half[0] == half);
    float rows[6] = {hi + 0.25f, 100.0f, -100.0f, 50.0f, 60.0f, 70.0f};
    world_wrap_rows(&a, rows, 1);
    assert_true(rows[0] == world_wrap_f(hi + 0.25f, lo, BOX_L, hi));
    assert_true(rows[1] == 100.0f && rows[2] == -100.0f && rows[3] == 50.0f);
}

static void test_min_image(void **state)
{
    (void)state;
    float lo, hi, half;
    box(&lo, &hi, &half);
    /* 1 apart across the seam: +-1 as in the middle of the box */
    float a = hi - 0.5f, b = lo + 0.5f;
    float dab = world_min_image_f(a - b, BOX_L, half), dba = world_min_image_f(b - a, BOX_L, half);
    assert_true(fabsf(dab + 1.0f) < 1e-5f && dba == -dab);
    /* exactly half a period stays as it is, with its sign: antisymmetric */
    assert_true(world_min_image_f(half, BOX_L, half) == half);
    assert_true(world_min_image_f(-half, BOX_L, half) == -half);
    assert_true(world_min_image_f(nextafterf(half, 100.0f), BOX_L, half) < 0);
    /* every pair of points in the box: |d| <= half and d = a - b + a whole period */
    uint64_t s = 1;
    for (int i = 0; i < 100000; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        float x = lo + (float)((s >> 40) * (1.0 / 16777216.0)) * BOX_L;
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        float y = lo + (float)((s >> 40) * (1.0 / 16777216.0)) * BOX_L;
        if (!(x < hi) || !(y < hi))
            continue;
        float d = world_min_image_f(x - y, BOX_L, half);
        assert_true(fabsf(d) <= half);
        assert_true(world_min_image_f(y - x, BOX_L, half) == -d);
        double k = ((double)d - ((double)x - (double)y)) / BOX_L;
        assert_true(fabs(k - round(k)) < 1e-5);
    }
    assert_true(world_min_image_d(-(double)half, BOX_L, half) == -(double)half);
}

/* ---- the wide versions: every ISA and the float64 reference ---------------------------------- */

#define WIDE_N 4099 /* not a multiple of any lane count */

static float *wide_inputs(float lo, float hi)
{
    float *x = malloc(WIDE_N * sizeof *x);
    uint64_t s = 7;
    for (size_t i = 0; i < WIDE_N; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        double u = (double)(s >> 11) * (1.0 / 9007199254740992.0);
        switch (i % 8) {
        case 0:
            x[i] = lo + (float)u * (hi - lo);
            break; /* inside */
        case 1:
            x[i] = hi + (float)u * BOX_L;
            break; /* one period above */
        case 2:
            x[i] = lo - (float)u * BOX_L;
            break; /* one period below */
        case 3:
            x[i] = (float)((u - 0.5) * 1e5);
            break; /* far */
        case 4:
            x[i] = i % 16 == 4 ? hi : lo;
            break; /* the seam */
        case 5:
            x[i] = nextafterf(i % 16 == 5 ? lo : hi, -INFINITY);
            break; /* beside it */
        case 6:
            x[i] = i % 32 == 6 ? NAN : (i % 32 == 14 ? INFINITY : -INFINITY);
            break;
        default:
            x[i] = hi + (float)u * 1e-5f;
            break; /* just past hi */
        }
    }
    return x;
}

static void test_wide_equals_scalar(void **state)
{
    (void)state;
    float lo, hi, half;
    box(&lo, &hi, &half);
    float *x = wide_inputs(lo, hi), *y = wide_inputs(lo, hi);
    for (size_t i = 0; i < WIDE_N; i++) /* second operand: points in the box */
        y[i] = world_wrap_f(y[(i * 7919) % WIDE_N], lo, BOX_L, hi);
    float *want_w = malloc(WIDE_N * sizeof(float)), *want_m = malloc(WIDE_N * sizeof(float));
    float *got = malloc(WIDE_N * sizeof(float));
    for (size_t i = 0; i < WIDE_N; i++) {
        want_w[i] = world_wrap_f(x[i], lo, BOX_L, hi);
        want_m[i] = world_min_image_f(want_w[i] - y[i], BOX_L, half);
    }
    typedef void (*wrap_fn)(const float *, size_t, float, float, float, float *);
    typedef void (*mi_fn)(const float *, const float *, size_t, float, float, float *);
    struct {
        const char *name;
        wrap_fn wrap;
        mi_fn mi;
        int have;
    } isas[] = {
        {"scalar", world_isa_wrap_scalar, world_isa_min_image_scalar, 1},
#if defined(__x86_64__)
        {"avx2", world_isa_wrap_avx2, world_isa_min_image_avx2, cpu_has_avx2()},
        {"avx512", world_isa_wrap_avx512, world_isa_min_image_avx512, cpu_has_avx512()},
#endif
    };
    for (size_t k = 0; k < sizeof isas / sizeof isas[0]; k++) {
        if (!isas[k].have) {
            printf("  %s: not on this CPU\n", isas[k].name);
            continue;
        }
        isas[k].wrap(x, WIDE_N, lo, BOX_L, hi, got);
        assert_memory_equal(got, want_w, WIDE_N * sizeof(float));
        isas[k].mi(want_w, y, WIDE_N, BOX_L, half, got);
        assert_memory_equal(got, want_m, WIDE_N * sizeof(float));
        printf("  %s: wrap and minimum image equal the scalar functions\n", isas[k].name);
    }
    /* the float64 reference's words against world_wrap_d / world_min_image_d */
    double *xd = malloc(WIDE_N * sizeof *xd), *yd = malloc(WIDE_N * sizeof *yd);
    double *gd = malloc(WIDE_N * sizeof *gd), *wd = malloc(WIDE_N * sizeof *wd);
    for (size_t i = 0; i < WIDE_N; i++) {
        xd[i] = x[i];
        yd[i] = y[i];
    }
    world_isa_wrap_real64(xd, WIDE_N, lo, BOX_L, hi, gd);
    for (size_t i = 0; i < WIDE_N; i++) {
        wd[i] = world_wrap_d(xd[i], lo, BOX_L, hi);
        if (memcmp(&gd[i], &wd[i], sizeof(double)) != 0)
            fail_msg("real64 wrap(%.17g) = %.17g, scalar %.17g", xd[i], gd[i], wd[i]);
    }
    world_isa_min_image_real64(wd, yd, WIDE_N, BOX_L, half, gd);
    for (size_t i = 0; i < WIDE_N; i++) {
        double m = world_min_image_d(wd[i] - yd[i], BOX_L, half);
        if (memcmp(&gd[i], &m, sizeof(double)) != 0)
            fail_msg("real64 minimum image %zu: %.17g, scalar %.17g", i, gd[i], m);
    }
    free(x);
    free(y);
    free(want_w);
    free(want_m);
    free(got);
    free(xd);
    free(yd);
    free(gd);
    free(wd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),           cmocka_unit_test(test_set_by_name),
        cmocka_unit_test(test_validate),           cmocka_unit_test(test_check_rows_2d),
        cmocka_unit_test(test_backends_refuse),    cmocka_unit_test(test_scene_world),
        cmocka_unit_test(test_wrap_seam),          cmocka_unit_test(test_min_image),
        cmocka_unit_test(test_wide_equals_scalar),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
