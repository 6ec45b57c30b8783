/* SPDX-License-Identifier: MIT */
/* The schools a new user starts ($SHOAL_EXE): the default scene (assets/scenes/school.ini)
 * is an ordered school at 10 s of simulated time (polarisation or milling >= 0.5, measured
 * with shoal/stats.h on the state `init` + `step` give, which is the state `shoal run`
 * shows) and one school (largest group >= 90 %) at every 10 s up to 60 s; every model's own start
 * (init/run/sweep without --scene) is its scene file's and places the fish where the grid works
 * (few neighbours each), while the seeds' unit-ball starts stay reachable by name; step --count,
 * --out - in every command, the predator note of step --out, and the one fish-length default. No
 * timing is asserted (benchmarks do). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cli_harness.h"
#include "shoal/shoal.h"
#include "shoal/stats.h"

#include <math.h>

/* 1 in the sanitizer builds (tests/meson.build) */
#ifndef SHOAL_TEST_SANITIZED
#define SHOAL_TEST_SANITIZED 0
#endif

static int setup(void **state)
{
    (void)state;
    return cli_setup("school");
}

static int teardown(void **state)
{
    (void)state;
    return cli_teardown();
}

static shoal_stats stats_of(const char *name, double radius)
{
    float *rows;
    size_t n;
    shoal_error e;
    if (shoal_io_npy_read(path(name), &rows, &n, &e))
        fail_msg("%s", e.message);
    shoal_stats_desc d = shoal_stats_desc_default();
    d.radius = radius;
    shoal_stats s;
    if (shoal_stats_compute(rows, n, &d, &s, &e))
        fail_msg("%s", e.message);
    free(rows);
    return s;
}

/* The default scene is a school at 10 s: ordered (polarisation or milling >= 0.5), one body
 * (most fish in one group, groups at 3 units), and moving; and it stays one school for a
 * minute, the predator chasing it: at 10, 20, ..., 60 s of one run the largest group holds
 * at least 90 % of the fish (it fell to 45 % at 20 s and 24 % at 30 s before the scene was
 * tuned; the 10 s state alone could not show it). One run of 3600 steps of 4096 fish. */
static void test_default_scene_orders(void **state)
{
    (void)state;
    const char *sc = SHOAL_SOURCE_ROOT "/assets/scenes/school.ini";
    /* the gcc suite the minute, the coverage build (-O2) the first 10 s; under the sanitizers
     * (a step of this scene costs ~16x there: 179 s of the ASan suite for 10 s) one second, for
     * the accesses of every stage the scene runs (predator, field, trails of the hold
     * directory): the order and the one body at 10 s and later are the other suites' checks */
    const int checks = SHOAL_TEST_SHORT ? 1 : 6;
    const int every = SHOAL_TEST_SANITIZED ? 60 : 600;
    assert_int_equal(run("init --scene %s --out s0.npy", sc), 0);
    assert_int_equal(run("step --scene %s --in s0.npy --out s60.npy --steps %d --every %d "
                         "--out-dir hold --quiet",
                         sc, every * checks, every),
                     0);
    /* it has a predator: step --out says the file holds the boids only */
    assert_non_null(strstr(g_err, "not the 1 predator"));
    for (int k = 1; k <= checks && !SHOAL_TEST_SANITIZED; k++) {
        char name[64];
        snprintf(name, sizeof name, "hold/state_%06d.npy", 600 * k);
        shoal_stats g = stats_of(name, 3);
        printf("  school.ini at %d s: largest group %.3f (%llu groups), polarisation %.3f, "
               "milling %.3f\n",
               10 * k, g.largest_group_fraction, (unsigned long long)g.group_count, g.polarisation,
               g.milling);
        if (!(g.largest_group_fraction >= 0.9))
            fail_msg("school.ini at %d s: the largest group holds %.3f of the fish (< 0.9)", 10 * k,
                     g.largest_group_fraction);
    }
    shoal_stats a = stats_of("s0.npy", 3),
                b = stats_of(
                    SHOAL_TEST_SANITIZED ? "hold/state_000060.npy" : "hold/state_000600.npy", 3);
    printf("  school.ini at 0 s: polarisation %.3f, milling %.3f\n", a.polarisation, a.milling);
    printf("  school.ini at %d s: polarisation %.3f, milling %.3f, largest group %.3f, mean "
           "speed %.2f, %llu groups, extent %.1f x %.1f x %.1f\n",
           SHOAL_TEST_SANITIZED ? 1 : 10, b.polarisation, b.milling, b.largest_group_fraction,
           b.mean_speed, (unsigned long long)b.group_count, b.extent[0], b.extent[1], b.extent[2]);
    assert_int_equal(b.count, 4096);
    assert_true(a.polarisation < 0.2); /* it starts disordered ... */
    if (!SHOAL_TEST_SANITIZED) {
        assert_true(b.polarisation >= 0.5 || b.milling >= 0.5); /* ... and orders */
        assert_true(b.largest_group_fraction >= 0.8);
        assert_true(b.mean_speed > 2.0); /* 2.2-3.2 units/s over seeds 1-4 and 10-60 s (max 5) */
    }
    /* `shoal run` without --scene and --model starts this scene */
    assert_int_equal(run("run --headless --frames 1 --size 32x24 --out - --hud off"), 0);
    assert_non_null(strstr(g_out, "4096 fish, model steer"));
}

/* Each model's start: init --model M is the scene file M.ini (init, sweep and run start the
 * same school), the fish are spread so the grid works (a few dozen neighbours each at the
 * interaction radius, not all of them), and the seeds' unit balls are there by name. */
static void test_model_starts(void **state)
{
    (void)state;
    const char *models[] = {"steer", "average", "heading", "classic", "fov"};
    const double radius[] = {2, 3.5, 2, 5, 3};
    for (int m = 0; m < 5; m++) {
        assert_int_equal(run("init --model %s --out m.npy", models[m]), 0);
        assert_int_equal(
            run("init --scene %s/assets/scenes/%s.ini --out s.npy", SHOAL_SOURCE_ROOT, models[m]),
            0);
        assert_int_equal(sh("cmp m.npy s.npy"), 0);
        shoal_stats s = stats_of("m.npy", radius[m]);
        printf("  %s: %zu fish start with %.1f neighbours each within %g\n", models[m], s.count,
               s.mean_neighbors, radius[m]);
        assert_true(s.mean_neighbors < 150);
    }
    /* no --model: steer's */
    assert_int_equal(run("init --out d.npy"), 0);
    assert_int_equal(run("init --model steer --out m.npy"), 0);
    assert_int_equal(sh("cmp d.npy m.npy"), 0);
    /* the seeds' own starts: every fish within reach of every other */
    const char *seeds[] = {"steer_seed", "average_seed", "average_bigwave", "average_diffuse",
                           "average_suimi"};
    for (int k = 0; k < 5; k++) {
        assert_int_equal(
            run("init --scene %s/assets/scenes/%s.ini --out u.npy", SHOAL_SOURCE_ROOT, seeds[k]),
            0);
        shoal_stats s = stats_of("u.npy", 2);
        assert_true(s.extent[0] <= 2 && s.extent[1] <= 2 && s.extent[2] <= 2);
        assert_true(s.mean_neighbors > 0.99 * (double)(s.count - 1));
    }
}

/* step --count N: the geometry init --count N gave the state */
static void test_step_count(void **state)
{
    (void)state;
    assert_int_equal(run("init --model average --count 32768 --out a.npy"), 0);
    assert_non_null(strstr(g_err, "wall_size_x=64 "));
    assert_int_equal(run("step --model average --count 32768 --in a.npy --out b.npy --steps 2 "
                         "--set wall_weight=10"),
                     0);
    assert_non_null(strstr(g_err, "shoal step: 32768 boids, the scene's 4096"));
    assert_non_null(strstr(g_err, "wall_size_x=64 "));
    /* the same as giving the walls by hand */
    assert_int_equal(run("step --model average --in a.npy --out c.npy --steps 2 --set "
                         "wall_size=64,64,64 --set init_pos_radius=24"),
                     0);
    assert_int_equal(sh("cmp b.npy c.npy"), 0);
    /* without --count, the state does not fit the scene's 32-unit walls: one warning line
     * naming the option (issue 43), and the step runs */
    assert_int_equal(run("step --model average --in a.npy --out - --steps 1"), 0);
    assert_non_null(strstr(g_err, "shoal step: warning: "));
    assert_non_null(strstr(g_err, " of the 32768 boids of a.npy are outside the walls they are "
                                  "stepped in (average's wall_center, wall_size: 32 x 32 x 32 "
                                  "about 0,0,0), made for 4096 boids: --count 32768 gives"));
    assert_null(strchr(strchr(g_err, '\n') + 1, '\n')); /* one line */
    /* with it, or a state of the scene's own count stepped for 10 s: no warning */
    assert_int_equal(run("step --model average --count 32768 --in a.npy --out - --steps 1"), 0);
    assert_null(strstr(g_err, "warning"));
    assert_int_equal(run("init --model average --out a0.npy"), 0);
    assert_int_equal(run("step --model average --in a0.npy --out a1.npy --steps 600 --quiet"), 0);
    assert_int_equal(run("step --model average --in a1.npy --out - --steps 1"), 0);
    assert_string_equal(g_err, "");
    /* the right count in walls moved away: --scene or --set */
    assert_int_equal(run("step --model average --in a1.npy --out - --steps 1 --set "
                         "wall_center=100,0,0"),
                     0);
    assert_non_null(strstr(g_err, "4096 of the 4096 boids of a1.npy are outside the walls"));
    assert_non_null(strstr(g_err, "32 x 32 x 32 about 100,0,0): give the walls the state was "
                                  "made in with --scene or --set\n"));
    /* another count than the state's: refused */
    assert_int_equal(run("step --model average --count 1000 --in a.npy --out x.npy"), 2);
    assert_non_null(strstr(g_err, "--count 1000, but a.npy holds 32768 boids"));
    assert_false(exists("x.npy"));
}

/* `--out -`: the work is done, nothing written (init, step, render, run); a sweep refuses. */
static void test_out_dash(void **state)
{
    (void)state;
    assert_int_equal(run("init --count 200 --out a.npy"), 0);
    assert_int_equal(run("init --count 200 --out -"), 0);
    assert_int_equal(run("step --in a.npy --out - --steps 3"), 0);
    assert_int_equal(run("render --in a.npy --out - --size 32x24"), 0);
    assert_int_equal(run("run --headless --frames 2 --count 100 --size 32x24 --out -"), 0);
    assert_false(exists("-"));
    assert_false(exists("out"));
    assert_int_equal(run("sweep --vary sep_weight=1 --count 10 --steps 1 --out -"), 2);
    assert_non_null(strstr(g_err, "--out -: a sweep writes a directory"));
    assert_false(exists("-"));
    /* a file named - is ./- */
    assert_int_equal(run("init --count 200 --out ./-"), 0);
    assert_true(exists("-"));
}

/* step --out with predators: a note that the file does not hold them (not with a
 * checkpoint, not without predators) */
static void test_predator_note(void **state)
{
    (void)state;
    assert_int_equal(run("init --count 300 --out a.npy"), 0);
    assert_int_equal(run("step --in a.npy --out b.npy --steps 2 --set predator_count=2"), 0);
    assert_non_null(strstr(g_err, "b.npy holds the boids, not the 2 predators"));
    assert_non_null(strstr(g_err, "--checkpoint F and --resume F carry them"));
    assert_int_equal(run("step --in a.npy --out b.npy --steps 2 --set predator_count=2 "
                         "--checkpoint b.ckpt"),
                     0);
    assert_null(strstr(g_err, "predator"));
    assert_int_equal(run("step --in a.npy --out b.npy --steps 2"), 0);
    assert_string_equal(g_err, "");
}

/* One fish length: render's default is the scenes' 0.6, and a --scene's own wins. */
static void test_fish_length(void **state)
{
    (void)state;
    assert_int_equal(run("init --count 300 --out a.npy"), 0);
    assert_int_equal(run("render --in a.npy --out d.png --size 160x90"), 0);
    assert_int_equal(run("render --in a.npy --out e.png --size 160x90 --fish-length 0.6"), 0);
    assert_int_equal(sh("cmp d.png e.png"), 0);
    assert_int_equal(run("render --in a.npy --out f.png --size 160x90 --fish-length 1"), 0);
    assert_int_equal(sh("cmp -s d.png f.png"), 1);
    /* classic.ini says fish_length = 1 */
    assert_int_equal(
        run("render --in a.npy --out g.png --size 160x90 --scene %s/assets/scenes/classic.ini",
            SHOAL_SOURCE_ROOT),
        0);
    assert_int_equal(run("render --in a.npy --out h.png --size 160x90 --fish-length 1 --scene "
                         "%s/assets/scenes/classic.ini",
                         SHOAL_SOURCE_ROOT),
                     0);
    assert_int_equal(sh("cmp g.png h.png"), 0);
    shoal_render_desc rd = shoal_render_desc_default();
    assert_true(rd.fish_length == SHOAL_FISH_LENGTH && SHOAL_FISH_LENGTH == 0.6f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_scene_orders), cmocka_unit_test(test_model_starts),
        cmocka_unit_test(test_step_count),           cmocka_unit_test(test_out_dash),
        cmocka_unit_test(test_predator_note),        cmocka_unit_test(test_fish_length),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
