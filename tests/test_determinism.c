/* SPDX-License-Identifier: MIT */
/* Determinism (Box2D's test_determinism in spirit): the state hash after K steps is the
 * same for 1, 2, 3, 7 and 16 threads and for every force-kernel ISA, on random and on
 * clustered states; K steps in one run equal the same K steps split over runs through
 * the row-ordered state (as state files do), heading's targets included. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "shoal/shoal.h"
#include "tests/scenes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t run_hash(shoal_model model, const float *rows, size_t n, int steps, int threads,
                         shoal_isa isa, float *out)
{
    shoal_sim_desc d = shoal_sim_desc_default();
    d.model = model;
    shoal_params_default(model, &d.params);
    d.boid_count = n;
    d.thread_count = threads;
    d.isa = isa;
    d.seed = 42;
    shoal_sim *s;
    shoal_error e;
    if (shoal_sim_create(&d, &s, &e))
        fail_msg("%s", e.message);
    assert_int_equal(shoal_sim_set_rows(s, rows, shoal_sim_count(s), NULL), SHOAL_OK);
    if (shoal_sim_step(s, steps, &e))
        fail_msg("%s", e.message);
    assert_int_equal(shoal_sim_get_rows(s, out, shoal_sim_count(s), NULL), SHOAL_OK);
    shoal_sim_destroy(s);
    return state_hash(out, n);
}

/* The scenes' lengths for a model: 1 up to an interaction radius of 5 (the first five models'
 * scenes as they were), beyond it the radius over 3, so that a model of long reach (couzin's
 * zone of attraction, the flockers' visual distance) sees at most as many neighbours as
 * classic does, not the whole school (the suite's time). */
static float reach_scale(shoal_model model)
{
    shoal_params q;
    shoal_params_default(model, &q);
    float r = shoal_params_interaction_radius(model, &q);
    return r > 5.0f ? r / 3.0f : 1.0f;
}

static void check_model(shoal_model model, const float *rows, size_t n, int steps, int all_threads)
{
    const int threads_all[] = {1, 3, 2, 7, 16}, threads_some[] = {2, 7};
    const int *threads = all_threads ? threads_all : threads_some;
    size_t thread_cases = all_threads ? TEST_LONG(5, 2) : TEST_LONG(2, 1);
    const shoal_isa *isas = test_isas;
    float *out = malloc(n * 6 * sizeof(float));
    float *ref = malloc(n * 6 * sizeof(float));
    uint64_t h0 = run_hash(model, rows, n, steps, 1, SHOAL_ISA_SCALAR, ref);
    assert_true(memcmp(ref, rows, n * 6 * sizeof(float)) != 0);
    for (size_t i = 0; i < TEST_ISA_COUNT; i++) {
        if (test_isa_skip(isas[i]))
            continue;
        for (size_t t = 0; t < thread_cases; t++) {
            uint64_t h = run_hash(model, rows, n, steps, threads[t], isas[i], out);
            if (h != h0) {
                size_t first = 0;
                while (first < n * 6 && memcmp(out + first, ref + first, sizeof(float)) == 0)
                    first++;
                fail_msg("model %s, %s, %d threads: hash %016llx != scalar/1 thread %016llx "
                         "(first difference: row %zu col %zu: %.9g vs %.9g)",
                         shoal_model_name(model), shoal_isa_name(isas[i]), threads[t],
                         (unsigned long long)h, (unsigned long long)h0, first / 6, first % 6,
                         (double)out[first], (double)ref[first]);
            }
        }
    }
    free(out);
    free(ref);
}

static void test_threads_and_isas_random(void **state)
{
    (void)state;
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
        size_t n = 3000;
        float *rows = scene_uniform(n, 8.0f * reach_scale((shoal_model)m),
                                    m == SHOAL_MODEL_FOV ? 0.1f : 2.0f, 500 + (uint64_t)m);
        /* under the sanitizers 6 steps: every branch of the step runs in its first steps */
        check_model((shoal_model)m, rows, n, TEST_SAN(20, 6), 1);
        free(rows);
    }
}

/* Clustered schools, 300 steps: long enough for any lane or order bug to show (every ISA;
 * 2 and 7 threads against the scalar single-thread run, to keep the suite short). */
static void test_threads_and_isas_clustered(void **state)
{
    (void)state;
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
        size_t n = 1500;
        float k = reach_scale((shoal_model)m);
        float *rows = scene_clustered(n, 3, 2.0f * k, 10.0f * k, m == SHOAL_MODEL_FOV ? 0.1f : 2.0f,
                                      600 + (uint64_t)m);
        check_model((shoal_model)m, rows, n, TEST_LONG(300, TEST_SAN(60, 15)), 0);
        free(rows);
    }
}

/* The cluster-list kernel of AVX2 and AVX-512 (issue 40, SHOAL_KERNEL=clusters): the lane
 * groups' bits, and so the scalar kernel's, for every model, on random and clustered schools,
 * with the clusters as the kernel forms them and cut at random places (clusters-random: which
 * boids share a cluster, and how many, must not change a bit). */
static void test_cluster_lists(void **state)
{
    (void)state;
    const char *modes[] = {"clusters-random", "clusters"};
    for (int k = TEST_LONG(0, 1); k < 2; k++) { /* the short suites: the kernel's own clusters */
        setenv("SHOAL_KERNEL", modes[k], 1);
        for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
            size_t n = 3000;
            float k_ = reach_scale((shoal_model)m); /* the new models' long reach */
            float *rows =
                scene_uniform(n, 8.0f * k_, m == SHOAL_MODEL_FOV ? 0.1f : 2.0f, 700 + (uint64_t)m);
            check_model((shoal_model)m, rows, n, TEST_SAN(20, 6), 0);
            free(rows);
            n = 1500;
            rows = scene_clustered(n, 3, 2.0f * k_, 10.0f * k_, m == SHOAL_MODEL_FOV ? 0.1f : 2.0f,
                                   800 + (uint64_t)m);
            check_model((shoal_model)m, rows, n,
                        k == 0 ? TEST_LONG(100, 30) : TEST_LONG(30, TEST_SAN(15, 6)), 0);
            free(rows);
        }
    }
    unsetenv("SHOAL_KERNEL");
}

/* The cluster lists walk fewer lane-pairs than the lane groups (issue 40: 2 lists of 4 in 8
 * lanes, 4 in 16), with the same useful pairs: what shows that SHOAL_KERNEL picks the kernel. */
static void test_cluster_lane_pairs(void **state)
{
    (void)state;
    size_t n = 6000;
    float *rows = scene_uniform(n, 9.0f, 2.0f, 900);
    for (size_t i = 0; i < TEST_ISA_COUNT; i++) {
        shoal_isa isa = test_isas[i];
        if (test_isa_skip(isa) || (isa != SHOAL_ISA_AVX2 && isa != SHOAL_ISA_AVX512))
            continue;
        double lp[2], useful[2];
        for (int k = 0; k < 2; k++) {
            if (k)
                setenv("SHOAL_KERNEL", "clusters", 1);
            shoal_sim_desc d = shoal_sim_desc_default();
            d.boid_count = n;
            d.thread_count = 1;
            d.isa = isa;
            shoal_sim *s;
            shoal_error e;
            if (shoal_sim_create(&d, &s, &e))
                fail_msg("%s", e.message);
            assert_int_equal(shoal_sim_set_rows(s, rows, n, NULL), SHOAL_OK);
            assert_int_equal(shoal_sim_step(s, 1, &e), SHOAL_OK);
            shoal_sim_candidate_pairs(s, &lp[k], &useful[k]);
            shoal_sim_destroy(s);
            unsetenv("SHOAL_KERNEL");
        }
        print_message("%s: %.1f lane-pairs per boid as lane groups, %.1f as cluster lists\n",
                      shoal_isa_name(isa), lp[0] / (double)n, lp[1] / (double)n);
        assert_true(useful[0] == useful[1] && useful[0] > 0);
        assert_true(lp[1] * 1.25 < lp[0]);
    }
    free(rows);
}

/* K steps at once == K1 steps, state out by row, state in, K - K1 more steps from t0. */
static void test_split_runs(void **state)
{
    (void)state;
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
        size_t n = TEST_SAN(2000, 600); /* 600: still many grid cells, lanes and threads */
        float *rows = scene_uniform(n, 8.0f * reach_scale((shoal_model)m),
                                    m == SHOAL_MODEL_FOV ? 0.1f : 2.0f, 700 + (uint64_t)m);
        float *a = malloc(n * 6 * sizeof(float)), *b = malloc(n * 6 * sizeof(float));
        shoal_sim_desc d = shoal_sim_desc_default();
        d.model = (shoal_model)m;
        shoal_params_default(d.model, &d.params);
        /* short target period so the split crosses a target epoch */
        if (m == SHOAL_MODEL_HEADING)
            d.params.target_period = 0.25f;
        d.boid_count = n;
        d.seed = 9;
        shoal_sim *s;
        assert_int_equal(shoal_sim_create(&d, &s, NULL), SHOAL_OK);
        shoal_sim_set_rows(s, rows, shoal_sim_count(s), NULL);
        assert_int_equal(shoal_sim_step(s, 40, NULL), SHOAL_OK);
        assert_int_equal(shoal_sim_get_rows(s, a, shoal_sim_count(s), NULL), SHOAL_OK);
        shoal_sim_destroy(s);

        const int cuts[] = {13, 27};
        memcpy(b, rows, n * 6 * sizeof(float));
        int done = 0;
        for (int part = 0; part < 3; part++) {
            int upto = part < 2 ? cuts[part] : 40;
            shoal_sim_desc d2 = d;
            d2.t0_s = d.t0_s + (double)done * d.dt_s;
            d2.thread_count = 1 + part;
            assert_int_equal(shoal_sim_create(&d2, &s, NULL), SHOAL_OK);
            shoal_sim_set_rows(s, b, shoal_sim_count(s), NULL);
            assert_int_equal(shoal_sim_step(s, upto - done, NULL), SHOAL_OK);
            assert_int_equal(shoal_sim_get_rows(s, b, shoal_sim_count(s), NULL), SHOAL_OK);
            shoal_sim_destroy(s);
            done = upto;
        }
        if (memcmp(a, b, n * 6 * sizeof(float)) != 0)
            fail_msg("model %s: split run differs from the single run",
                     shoal_model_name((shoal_model)m));
        free(a);
        free(b);
        free(rows);
    }
}

/* The initial state a sim of desc d with `seed` draws (shoal_sim_draw_state), into rows. */
static void draw(shoal_sim_desc d, uint64_t seed, float *rows)
{
    d.seed = seed;
    shoal_sim *s;
    assert_int_equal(shoal_sim_create(&d, &s, NULL), SHOAL_OK);
    assert_int_equal(shoal_sim_draw_state(s, NULL), SHOAL_OK);
    assert_int_equal(shoal_sim_get_rows(s, rows, d.boid_count, NULL), SHOAL_OK);
    shoal_sim_destroy(s);
}

/* The same initial state on every machine: a fixed hash for a fixed seed. */
static void test_init_is_seeded(void **state)
{
    (void)state;
    shoal_sim_desc d = shoal_sim_desc_default();
    d.boid_count = 1000;
    float *a = malloc(1000 * 6 * sizeof(float)), *b = malloc(1000 * 6 * sizeof(float));
    draw(d, 5, a);
    draw(d, 5, b);
    assert_memory_equal(a, b, 1000 * 6 * sizeof(float));
    draw(d, 6, b);
    assert_true(memcmp(a, b, 1000 * 6 * sizeof(float)) != 0);
    /* steer: p in the unit ball, v in the ball of radius 0.1 */
    for (int i = 0; i < 1000; i++) {
        float *r = a + i * 6;
        assert_true(r[0] * r[0] + r[1] * r[1] + r[2] * r[2] <= 1.0f);
        assert_true(r[3] * r[3] + r[4] * r[4] + r[5] * r[5] <= 0.0100001f);
    }
    free(a);
    free(b);
}

/* shoal_sim_draw_state draws every model's start with the bits of sim_init_rows: golden
 * hashes (FNV-1a of the rows, seed 5, 1000 boids). Also guards the path that once fell back,
 * on a failed allocation, to a state left at zero (init now needs no allocation at all). */
static void test_init_golden(void **state)
{
    (void)state;
    static const uint64_t want[SHOAL_MODEL_COUNT] = {
        [SHOAL_MODEL_STEER] = 0x639b1e65eee1bdccull,
        [SHOAL_MODEL_AVERAGE] = 0x14f214d80aa90ddbull,
        [SHOAL_MODEL_HEADING] = 0x3fc2285facff61ddull,
        [SHOAL_MODEL_CLASSIC] =
            0xa52944dcdcf569c7ull, /* speed 2 at start (was 0x8d005480fd46b947) */
        [SHOAL_MODEL_FOV] = 0xa2dbb3325951aea6ull,
        [SHOAL_MODEL_VICSEK] = 0x9bbed5f0f6e5655bull,
        [SHOAL_MODEL_COUZIN] = 0x2de01fd8ba914d12ull,
        [SHOAL_MODEL_FLOCKERS] = 0x24def281b2bc87f6ull,
    };
    float *rows = malloc(1000 * 6 * sizeof(float));
    int bad = 0;
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
        shoal_sim_desc d = shoal_sim_desc_default();
        d.model = (shoal_model)m;
        shoal_params_default(d.model, &d.params);
        d.boid_count = 1000;
        draw(d, 5, rows);
        uint64_t h = state_hash(rows, 1000);
        if (h != want[m]) {
            printf("init of %s: hash 0x%016llxull, want 0x%016llxull\n",
                   shoal_model_name((shoal_model)m), (unsigned long long)h,
                   (unsigned long long)want[m]);
            bad++;
        }
    }
    free(rows);
    assert_int_equal(bad, 0);
}

/* Golden step hashes (1 thread, scalar; every ISA and thread count equals it, see above):
 * 10 steps of every model at its default parameters from two seeded states. They pin the
 * results for boids in the normal range, so a change meant for another range (classic's
 * weight divisor at other weights, fov's far-boid boundary branch, the speed clamp of a
 * velocity whose square overflows) is seen to leave them alone. */
static void test_step_golden(void **state)
{
    (void)state;
    static const uint64_t want[SHOAL_MODEL_COUNT][2] = {
        [SHOAL_MODEL_STEER] = {0xc2a82120a1ed1301ull, 0xb219575aa0d84644ull},
        [SHOAL_MODEL_AVERAGE] = {0x096f5f58dd2192baull, 0x93892a7a3b92bf1dull},
        [SHOAL_MODEL_HEADING] = {0x226e1ffb89e35f86ull, 0xf2c5c1f55f52aa2cull},
        [SHOAL_MODEL_CLASSIC] = {0x5dfeec397ad809a5ull, 0x12992ce8b7a1401bull},
        [SHOAL_MODEL_FOV] = {0x9a29edf9bc0a7f33ull, 0xb1a34eaba8a5133aull},
        [SHOAL_MODEL_VICSEK] = {0xfd060073981c3a2eull, 0x53877c1e613f478dull},
        [SHOAL_MODEL_COUZIN] = {0x5e354a7b571a0a8eull, 0x46ec2249a3c42c51ull},
        [SHOAL_MODEL_FLOCKERS] = {0x91bcdb5a784941ffull, 0x1aad1819bed07edaull},
    };
    enum { N = 3000 };
    float *out = malloc(N * 6 * sizeof(float));
    int bad = 0;
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
        for (int k = 0; k < 2; k++) {
            float ks = reach_scale((shoal_model)m);
            float *rows = k == 0 ? scene_uniform(N, 24.0f * ks, 1.0f, 11)
                                 : scene_clustered(N, 6, 2.0f * ks, 12.0f * ks, 3.0f, 12);
            if (m == SHOAL_MODEL_CLASSIC)
                for (size_t i = 0; i < N; i++)
                    rows[i * 6 + 1] += 10.0f; /* the box is y in [0, 20] */
            uint64_t h = run_hash((shoal_model)m, rows, N, 10, 1, SHOAL_ISA_SCALAR, out);
            if (h != want[m][k]) {
                printf("golden %s state %d: hash 0x%016llxull, want 0x%016llxull\n",
                       shoal_model_name((shoal_model)m), k, (unsigned long long)h,
                       (unsigned long long)want[m][k]);
                bad++;
            }
            free(rows);
        }
    }
    free(out);
    assert_int_equal(bad, 0);
}

int main(int argc, char **argv)
{
    struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_is_seeded),
        cmocka_unit_test(test_init_golden),
        cmocka_unit_test(test_step_golden),
        cmocka_unit_test(test_threads_and_isas_random),
        cmocka_unit_test(test_threads_and_isas_clustered),
        cmocka_unit_test(test_cluster_lists),
        cmocka_unit_test(test_cluster_lane_pairs),
        cmocka_unit_test(test_split_runs),
    };
    /* the ISA parts, one meson case per ISA (tests/scenes.h) */
    static const char *const isa_tests[] = {"test_threads_and_isas_random",
                                            "test_threads_and_isas_clustered", NULL};
    size_t n = test_isa_args(argc, argv, tests, sizeof tests / sizeof tests[0], isa_tests);
    return test_exit(_cmocka_run_group_tests("test_determinism", tests, n, NULL, NULL));
}
