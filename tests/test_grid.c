/* SPDX-License-Identifier: MIT */
/* The grid against brute force: the same neighbour sets for every boid (random states,
 * boids outside the bounds, coincident boids), and for every model the state after one
 * step within 1e-6 relative of the all-pairs (--neighbors brute) result. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/sim_internal.h"
#include "tests/scenes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static void check_neighbor_sets(shoal_model model, float *rows, size_t n)
{
    shoal_sim_desc d = shoal_sim_desc_default();
    d.model = model;
    shoal_params_default(model, &d.params);
    d.boid_count = n;
    d.thread_count = 2;
    shoal_sim *s;
    assert_int_equal(shoal_sim_create(&d, &s, NULL), SHOAL_OK);
    assert_int_equal(shoal_sim_set_rows(s, rows, shoal_sim_count(s), NULL), SHOAL_OK);
    sim_sort_only(s);
    float radius = shoal_params_interaction_radius(model, &d.params);
    float r2 = radius * radius;
    uint32_t *got = malloc(n * sizeof *got), *want = malloc(n * sizeof *want);
    size_t checked = 0, total = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = sim_grid_neighbors(s, (uint32_t)i, radius, got, n);
        size_t m = 0;
        for (size_t j = 0; j < n; j++) {
            float dx = rows[i * 6] - rows[j * 6], dy = rows[i * 6 + 1] - rows[j * 6 + 1],
                  dz = rows[i * 6 + 2] - rows[j * 6 + 2];
            float d2 = dx * dx + dy * dy + dz * dz;
            if (d2 > 0.0f && d2 <= r2)
                want[m++] = (uint32_t)j;
        }
        qsort(got, k, sizeof *got, cmp_u32);
        if (k != m || memcmp(got, want, k * sizeof *got) != 0)
            fail_msg("model %s boid %zu: grid found %zu neighbours, brute force %zu",
                     shoal_model_name(model), i, k, m);
        checked++;
        total += m;
    }
    assert_int_equal(checked, n);
    /* the test must look at real neighbourhoods, not empty ones */
    assert_true(total > n);
    free(got);
    free(want);
    shoal_sim_destroy(s);
}

static void test_neighbor_sets(void **state)
{
    (void)state;
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
        size_t n = 3000;
        float *rows = scene_uniform(n, 8.0f, 1.0f, 100 + (uint64_t)m);
        scene_add_outliers(rows, n, 5);
        check_neighbor_sets((shoal_model)m, rows, n);
        free(rows);
        rows = scene_clustered(n, 5, 2.0f, 12.0f, 1.0f, 200 + (uint64_t)m);
        check_neighbor_sets((shoal_model)m, rows, n);
        free(rows);
    }
}

/* One step, grid vs brute force. Sums are taken in another order, so compare with a
 * tolerance of 1e-6 relative: positions relative to max(|p|, 1), velocities relative to
 * max(|v|, the model's speed limit). (Relative to |v| alone is too strict: a boid whose
 * separation vectors nearly cancel has a steering direction that is ill-conditioned, and
 * another summation order moves it by ~1e-4 of the force, ~1e-6 of |v| after a step.) */
static void step_one(shoal_model model, shoal_neighbors nb, const float *rows, size_t n, float *out)
{
    shoal_sim_desc d = shoal_sim_desc_default();
    d.model = model;
    shoal_params_default(model, &d.params);
    d.boid_count = n;
    d.neighbors = nb;
    d.thread_count = 2;
    shoal_sim *s;
    assert_int_equal(shoal_sim_create(&d, &s, NULL), SHOAL_OK);
    assert_int_equal(shoal_sim_set_rows(s, rows, shoal_sim_count(s), NULL), SHOAL_OK);
    shoal_error e;
    assert_int_equal(shoal_sim_step(s, 1, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_get_rows(s, out, shoal_sim_count(s), NULL), SHOAL_OK);
    shoal_sim_destroy(s);
}

static void check_grid_vs_brute(shoal_model model, float *rows, size_t n, double vscale_in)
{
    shoal_params q;
    shoal_params_default(model, &q);
    /* the model's speed: its limit, or the constant speed of a model without one */
    double vscale = q.max_speed > 0 ? q.max_speed : q.move_speed;
    float *a = malloc(n * 6 * sizeof(float)), *b = malloc(n * 6 * sizeof(float));
    step_one(model, SHOAL_NEIGHBORS_GRID, rows, n, a);
    step_one(model, SHOAL_NEIGHBORS_BRUTE, rows, n, b);
    double worst = 0;
    size_t moved = 0;
    for (size_t i = 0; i < n; i++) {
        for (int k = 0; k < 6; k += 3) {
            const float *x = a + i * 6 + k, *y = b + i * 6 + k;
            double mag = sqrt((double)y[0] * y[0] + (double)y[1] * y[1] + (double)y[2] * y[2]);
            double diff = sqrt(pow((double)x[0] - y[0], 2) + pow((double)x[1] - y[1], 2) +
                               pow((double)x[2] - y[2], 2));
            double floor_mag = k == 0 ? 1.0 : vscale;
            double rel = diff / (mag > floor_mag ? mag : floor_mag);
            /* A boid that starts nearly at rest in a model that normalises its new direction
             * (flockers: vel + the neighbours' terms) gets that direction from a sum that may
             * nearly cancel, whose rounding another order changes more: below a quarter of
             * the scene's speed its tolerance grows as its speed shrinks. */
            const float *vin = rows + i * 6 + 3;
            double sin_ =
                sqrt((double)vin[0] * vin[0] + (double)vin[1] * vin[1] + (double)vin[2] * vin[2]);
            if (k == 3 && sin_ < 0.25 * vscale_in)
                rel *= sin_ / (0.25 * vscale_in);
            if (rel > worst) {
                worst = rel;
                if (getenv("SHOAL_TEST_VERBOSE"))
                    printf("# boid %zu k %d rel %g mag %g: %.9g %.9g %.9g vs %.9g %.9g %.9g\n", i,
                           k, rel, mag, x[0], x[1], x[2], y[0], y[1], y[2]);
            }
            if (k == 3 && memcmp(x, rows + i * 6 + 3, 3 * sizeof(float)) != 0)
                moved++;
        }
    }
    if (worst > 1e-6)
        fail_msg("model %s: grid vs brute differ by %g relative", shoal_model_name(model), worst);
    assert_true(moved > n / 2); /* the step did change velocities */
    free(a);
    free(b);
}

static void test_grid_equals_brute(void **state)
{
    (void)state;
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
        size_t n = 2000;
        float speed = m == SHOAL_MODEL_FOV ? 0.1f : 2.0f;
        float *rows = scene_uniform(n, 7.0f, speed, 300 + (uint64_t)m);
        scene_add_outliers(rows, n, 9);
        check_grid_vs_brute((shoal_model)m, rows, n, speed);
        free(rows);
        rows = scene_clustered(n, 4, 2.5f, 10.0f, speed, 400 + (uint64_t)m);
        check_grid_vs_brute((shoal_model)m, rows, n, speed);
        free(rows);
    }
}

/* NaN and huge positions never index memory: they clamp to border cells. */
static void test_grid_coord_clamps(void **state)
{
    (void)state;
    assert_int_equal(grid_coord(NAN, 0.0f, 1.0f, 10), 0);
    assert_int_equal(grid_coord(-NAN, 0.0f, 1.0f, 10), 0);
    assert_int_equal(grid_coord(INFINITY, 0.0f, 1.0f, 10), 9);
    assert_int_equal(grid_coord(-INFINITY, 0.0f, 1.0f, 10), 0);
    assert_int_equal(grid_coord(1e30f, 0.0f, 1.0f, 10), 9);
    assert_int_equal(grid_coord(-1e30f, 0.0f, 1.0f, 10), 0);
    assert_int_equal(grid_coord(3.5f, 0.0f, 1.0f, 10), 3);
    assert_int_equal(grid_coord(9.99f, 0.0f, 1.0f, 10), 9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grid_coord_clamps),
        cmocka_unit_test(test_neighbor_sets),
        cmocka_unit_test(test_grid_equals_brute),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
