/* SPDX-License-Identifier: MIT */
/* Predators (src/sim/predators.c, the flee term of forces_kernel.h): chase the nearest boid
 * with ties to the lowest input row, or the centre; boids flee away from them; the state
 * hash with predators, an obstacle field and spheres is the same for 1, 2 and 3 threads and
 * every ISA, for every model. Also the command line's one-line errors (exit 2) for bad
 * scenes: missing OBJ, NaN transform, too many predators, the CUDA backend refusing them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "shoal/render.h"
#include "shoal/shoal.h"
#include "tests/cli_harness.h"
#include "tests/scenes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static shoal_sim *make(shoal_model m, size_t n, int threads, shoal_isa isa,
                       void (*tweak)(shoal_params *))
{
    shoal_sim_desc d = shoal_sim_desc_default();
    d.model = m;
    shoal_params_default(m, &d.params);
    d.boid_count = n;
    d.thread_count = threads;
    d.isa = isa;
    if (tweak)
        tweak(&d.params);
    shoal_sim *s;
    shoal_error e;
    if (shoal_sim_create(&d, &s, &e))
        fail_msg("%s", e.message);
    return s;
}

static void one_predator_at_origin(shoal_params *p)
{
    p->predator_count = 1;
    p->predator_start[0] = p->predator_start[1] = p->predator_start[2] = 0;
    p->predator_speed = 6;
}

static void test_chase_nearest(void **state)
{
    (void)state;
    /* rows 0 and 1 are equally near: the lowest row wins, whichever it is */
    for (int flip = 0; flip < 2; flip++) {
        float rows[18] = {0};
        float a = flip ? -2.0f : 2.0f;
        rows[0] = a;     /* row 0 */
        rows[6] = -a;    /* row 1, same distance */
        rows[12] = 9.0f; /* row 2, farther */
        rows[13] = 9.0f;
        shoal_sim *s = make(SHOAL_MODEL_STEER, 3, 1, SHOAL_ISA_AUTO, one_predator_at_origin);
        shoal_error e;
        assert_int_equal(shoal_sim_set_state(s, rows, &e), SHOAL_OK);
        float q[3], v[3];
        assert_int_equal(shoal_sim_predators(s, q, v, 1), 1);
        assert_true(q[0] == 0.0f && v[0] == 0.0f);
        assert_int_equal(shoal_sim_step(s, 1, &e), SHOAL_OK);
        shoal_sim_predators(s, q, v, 1);
        /* first step from rest: straight at the target, at its speed */
        assert_true(v[0] == (flip ? -6.0f : 6.0f));
        assert_true(v[1] == 0.0f && v[2] == 0.0f);
        assert_true(fabsf(q[0] - v[0] / 60.0f) < 1e-6f);
        shoal_sim_destroy(s);
    }
}

static void chase_centre(shoal_params *p)
{
    one_predator_at_origin(p);
    p->predator_chase = 1;
}

static void test_chase_centre(void **state)
{
    (void)state;
    float rows[12] = {0};
    rows[1] = 4; /* (0, 4, 0) */
    rows[7] = 8; /* (0, 8, 0): centre (0, 6, 0) */
    shoal_sim *s = make(SHOAL_MODEL_STEER, 2, 1, SHOAL_ISA_AUTO, chase_centre);
    shoal_error e;
    assert_int_equal(shoal_sim_set_state(s, rows, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_step(s, 1, &e), SHOAL_OK);
    float v[3];
    shoal_sim_predators(s, NULL, v, 1);
    assert_true(v[0] == 0.0f && v[1] == 6.0f && v[2] == 0.0f);
    shoal_sim_destroy(s);
}

static void still_predator(shoal_params *p)
{
    one_predator_at_origin(p);
    p->predator_speed = 0;
    p->flee_radius = 4;
    p->flee_weight = 10;
}

static void test_flee_direction(void **state)
{
    (void)state;
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
        /* one boid at (1, 2, 0) - a predator at the origin pushes it along (1, 2, 0) */
        float rows[6] = {1, 2, 0, 0, 0, 0.5f}, with[6], without[6];
        for (int k = 0; k < 2; k++) {
            shoal_sim *s = make((shoal_model)m, 1, 1, SHOAL_ISA_AUTO, still_predator);
            if (k == 1) {
                shoal_params p = shoal_sim_get_desc(s)->params;
                p.predator_count = 0;
                assert_int_equal(shoal_sim_set_params(s, &p, NULL), SHOAL_OK);
            }
            shoal_error e;
            assert_int_equal(shoal_sim_set_state(s, rows, &e), SHOAL_OK);
            assert_int_equal(shoal_sim_step(s, 1, &e), SHOAL_OK);
            shoal_sim_get_state(s, k == 0 ? with : without);
            shoal_sim_destroy(s);
        }
        /* the velocity change points away from the predator, along (1, 2, 0) */
        if (!((with[3] - without[3]) + 2.0f * (with[4] - without[4]) > 0.0f))
            fail_msg("model %s: no flee (%g %g vs %g %g)", shoal_model_name((shoal_model)m),
                     (double)with[3], (double)with[4], (double)without[3], (double)without[4]);
        /* out of the flee radius: no effect at all */
        float far_rows[6] = {5, 0, 0, 0, 0, 0.5f}, a[6], b[6];
        for (int k = 0; k < 2; k++) {
            shoal_sim *s = make((shoal_model)m, 1, 1, SHOAL_ISA_AUTO, k ? NULL : still_predator);
            assert_int_equal(shoal_sim_set_state(s, far_rows, NULL), SHOAL_OK);
            assert_int_equal(shoal_sim_step(s, 1, NULL), SHOAL_OK);
            shoal_sim_get_state(s, k ? b : a);
            shoal_sim_destroy(s);
        }
        assert_memory_equal(a, b, sizeof a);
    }
}

static void everything_on(shoal_params *p)
{
    p->predator_count = 3;
    p->predator_start[0] = 0;
    p->predator_start[1] = 0;
    p->predator_start[2] = 6;
    p->predator_spread = 3;
    p->flee_radius = 3;
    p->avoid_force = 4;
    p->field_cell = 0.75f;
    p->sphere_count = 1;
    p->spheres[0].radius = 1.5f;
    p->spheres[0].center[0] = -3;
}

static uint64_t run_hash(shoal_model m, const float *rows, size_t n, int threads, shoal_isa isa,
                         const shoal_mesh *rock, float *out)
{
    shoal_sim *s = make(m, n, threads, isa, everything_on);
    shoal_error e;
    shoal_transform t = shoal_transform_identity();
    t.scale[0] = t.scale[1] = t.scale[2] = 2.5f;
    t.rotation_deg[1] = 30;
    t.position[0] = 2;
    assert_int_equal(
        shoal_sim_add_obstacle(s, rock->positions, rock->normals, rock->vertex_count, &t, NULL, &e),
        SHOAL_OK);
    assert_int_equal(shoal_sim_set_state(s, rows, &e), SHOAL_OK);
    if (shoal_sim_step(s, 10, &e))
        fail_msg("%s", e.message);
    /* moving the rock mid-run is part of the run */
    t.position[0] = -1;
    assert_int_equal(shoal_sim_move_obstacle(s, 0, &t, &e), SHOAL_OK);
    if (shoal_sim_step(s, 10, &e))
        fail_msg("%s", e.message);
    shoal_sim_get_state(s, out);
    float pred[9];
    shoal_sim_predators(s, pred, NULL, 3);
    shoal_sim_destroy(s);
    uint64_t h = state_hash(out, n);
    /* fold the predators in */
    for (int k = 0; k < 9; k++) {
        uint32_t u;
        memcpy(&u, &pred[k], 4);
        h = (h ^ u) * 1099511628211ull;
    }
    return h;
}

static void test_determinism(void **state)
{
    (void)state;
    shoal_mesh rock;
    shoal_error e;
    assert_int_equal(shoal_mesh_load(SHOAL_SOURCE_ROOT "/assets/rock.obj", &rock, &e), SHOAL_OK);
    const shoal_isa *isas = test_isas;
    const int threads[] = {1, 2, 3};
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
        size_t n = 1500;
        float *rows = scene_uniform(n, 6.0f, m == SHOAL_MODEL_FOV ? 0.1f : 2.0f, 77 + (uint64_t)m);
        float *out = malloc(n * 6 * sizeof(float));
        uint64_t h0 = run_hash((shoal_model)m, rows, n, 1, SHOAL_ISA_SCALAR, &rock, out);
        for (size_t i = 0; i < TEST_ISA_COUNT; i++) {
            if (test_isa_skip(isas[i]))
                continue;
            for (size_t t = 0; t < 3; t++) {
                uint64_t h = run_hash((shoal_model)m, rows, n, threads[t], isas[i], &rock, out);
                if (h != h0)
                    fail_msg("model %s, %s, %d threads: %016llx != %016llx",
                             shoal_model_name((shoal_model)m), shoal_isa_name(isas[i]), threads[t],
                             (unsigned long long)h, (unsigned long long)h0);
            }
        }
        free(rows);
        free(out);
    }
    shoal_mesh_free(&rock);
}

static void test_params(void **state)
{
    (void)state;
    shoal_params p;
    shoal_error e;
    shoal_params_default(SHOAL_MODEL_HEADING, &p);
    assert_int_equal(shoal_params_set(SHOAL_MODEL_HEADING, &p, "predator_count", "65", &e),
                     SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "out of range"));
    assert_int_equal(shoal_params_set(SHOAL_MODEL_HEADING, &p, "predator_count", "1.5", &e),
                     SHOAL_ERR_INPUT);
    assert_int_equal(shoal_params_set(SHOAL_MODEL_FOV, &p, "predator_start", "1,2,3", &e),
                     SHOAL_OK);
    assert_int_equal(shoal_params_set(SHOAL_MODEL_FOV, &p, "field_cell", "0", &e), SHOAL_ERR_INPUT);
}

/* ---- the command line ---------------------------------------------------------------- */

/* `shoal ARGS` must fail with exit 2 and one line naming `substr`. */
static void expect_fail(const char *args, const char *substr)
{
    int rc = run("%s", args);
    if (rc != 2 || !strstr(g_err, substr))
        fail_msg("'%s': exit %d, stderr '%s' (expected 2 and '%s')", args, rc, g_err, substr);
    /* one line */
    char *nl = strchr(g_err, '\n');
    assert_true(nl == NULL || nl[1] == 0);
}

static void test_cli_errors(void **state)
{
    (void)state;
    assert_int_equal(cli_setup("pred"), 0);
    assert_int_equal(run("init --model steer --count 200 --out s.npy"), 0);
    write_text("missing.ini", "[scene]\nmodel = steer\n[mesh rock]\nfile = nothere.obj\n");
    expect_fail("step --scene missing.ini --in s.npy --out o.npy", "nothere.obj");
    write_text("nan.ini",
               "[scene]\nmodel = steer\n[mesh rock]\nfile = r.obj\nrotation = 0,nan,0\n");
    expect_fail("step --scene nan.ini --in s.npy --out o.npy", "rotation");
    expect_fail("step --in s.npy --out o.npy --set predator_count=65", "predator_count");
    write_text("flat.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
    write_text("flat.ini", "[scene]\nmodel = steer\n[mesh f]\nfile = flat.obj\n"
                           "[params]\navoid_force = 3\n");
    /* an OBJ without normals: computed from the faces, the run goes on */
    assert_int_equal(run("step --scene flat.ini --in s.npy --out o.npy --steps 3"), 0);
    /* (the CUDA backend runs meshes and predators too: test_gpu checks their parity) */
    assert_int_equal(cli_teardown(), 0);
}

int main(int argc, char **argv)
{
    struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chase_nearest),  cmocka_unit_test(test_chase_centre),
        cmocka_unit_test(test_flee_direction), cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_params),         cmocka_unit_test(test_cli_errors),
    };
    static const char *const isa_tests[] = {"test_determinism", NULL}; /* tests/scenes.h */
    size_t n = test_isa_args(argc, argv, tests, sizeof tests / sizeof tests[0], isa_tests);
    return test_exit(_cmocka_run_group_tests("test_predators", tests, n, NULL, NULL));
}
