/* SPDX-License-Identifier: MIT */
/* The earlier names (the 0.1 calls and the names from before shoal_<module>_<verb>, every
 * SHOAL_DEPRECATED and SHOAL_DEPRECATED_0_1 of include/shoal/) still link and do what their
 * replacements do: libshoal exports them for programs written against them until 1.0
 * (docs/LIBRARY.md, Earlier names). The only file of the tree that defines SHOAL_ALLOW_0_1:
 * everything else is built without the earlier names (meson.build), and
 * tests/test_docs.py fails when another file defines it. */
#define SHOAL_ALLOW_0_1
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "shoal/gpu.h"
#include "shoal/shoal.h"
#include "support/scenes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static shoal_sim *make(shoal_model m, size_t n, uint64_t seed)
{
    shoal_sim_desc d = shoal_sim_desc_for(m);
    d.boid_count = n;
    d.seed = seed;
    d.thread_count = 1;
    shoal_sim *s = NULL;
    shoal_error e;
    if (shoal_sim_create(&d, &s, &e))
        fail_msg("%s", e.message);
    return s;
}

/* shoal_sim_set_state / get_state / init_state against set_rows / get_rows / draw_state. */
static void test_sim_state_calls(void **state)
{
    (void)state;
    const size_t n = 300;
    shoal_error e;
    float *a = malloc(n * 6 * sizeof *a), *b = malloc(n * 6 * sizeof *b);
    assert_non_null(a);
    assert_non_null(b);
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
        /* init_state(seed) draws what draw_state draws for desc.seed = seed, and says OK */
        shoal_sim *s = make((shoal_model)m, n, 4), *t = make((shoal_model)m, n, 9);
        assert_int_equal(shoal_sim_draw_state(s, &e), SHOAL_OK);
        assert_int_equal(shoal_sim_init_state(t, 4), SHOAL_OK);
        assert_int_equal(shoal_sim_has_state(t), 1);
        assert_int_equal(shoal_sim_get_rows(s, a, n, &e), SHOAL_OK);
        shoal_sim_get_state(t, b);
        assert_memory_equal(a, b, n * 6 * sizeof *a);
        shoal_sim_destroy(t);
        /* set_state then steps: the bits of set_rows then the same steps */
        t = make((shoal_model)m, n, 4);
        assert_int_equal(shoal_sim_set_state(t, a, &e), SHOAL_OK);
        assert_int_equal(shoal_sim_step(s, 4, &e), SHOAL_OK);
        assert_int_equal(shoal_sim_step(t, 4, &e), SHOAL_OK);
        assert_int_equal(shoal_sim_get_rows(s, a, n, &e), SHOAL_OK);
        shoal_sim_get_state(t, b);
        assert_memory_equal(a, b, n * 6 * sizeof *a);
        /* and its refusals: a NaN (named), no sim */
        b[7] = NAN;
        assert_int_equal(shoal_sim_set_state(t, b, &e), SHOAL_ERR_INPUT);
        assert_non_null(strstr(e.message, "row 1"));
        assert_int_equal(shoal_sim_set_state(NULL, a, &e), SHOAL_ERR_INPUT);
        assert_int_equal(shoal_sim_init_state(NULL, 1), SHOAL_ERR_INPUT);
        shoal_sim_get_state(NULL, b); /* does nothing */
        shoal_sim_destroy(s);
        shoal_sim_destroy(t);
    }
    free(a);
    free(b);
}

/* shoal_sim_stats and shoal_param_list: the same answers as their new names. */
static void test_sim_earlier_names(void **state)
{
    (void)state;
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
        size_t n_old = 0, n_new = 0;
        assert_ptr_equal(shoal_param_list((shoal_model)m, &n_old),
                         shoal_params_list((shoal_model)m, &n_new));
        assert_int_equal(n_old, n_new);
    }
    shoal_sim *s = make(SHOAL_MODEL_STEER, 500, 1);
    shoal_error e;
    assert_int_equal(shoal_sim_draw_state(s, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_step(s, 2, &e), SHOAL_OK);
    shoal_stage_stats a[8], b[8];
    size_t na = shoal_sim_stats(s, a, 8), nb = shoal_sim_get_stats(s, b, 8);
    assert_int_equal(na, nb);
    assert_true(na > 0);
    for (size_t k = 0; k < na; k++) {
        assert_string_equal(a[k].name, b[k].name);
        assert_int_equal(a[k].calls, b[k].calls);
    }
    shoal_sim_destroy(s);
}

/* The profile names of before profiles were objects: one process-wide profile that only
 * they use; the library's objects record into their own, so it sees none of their steps. */
static void test_profile_earlier_names(void **state)
{
    (void)state;
    shoal_sim *s = make(SHOAL_MODEL_STEER, 400, 1);
    shoal_error e;
    assert_int_equal(shoal_sim_draw_state(s, &e), SHOAL_OK);
    shoal_profile_reset();
    assert_int_equal(shoal_sim_step(s, 3, &e), SHOAL_OK);
    shoal_sim_destroy(s);
    shoal_profile_summary sum[SHOAL_PROFILE_MAX_STAGES];
    assert_int_equal(shoal_profile_summaries(sum, SHOAL_PROFILE_MAX_STAGES), 0);
    int legacy = shoal_profile_stage("app", "legacy");
    assert_true(legacy >= 16);
    assert_int_equal(shoal_profile_stage("app", "legacy"), legacy); /* found, not added */
    shoal_profile_stage_call(legacy, 2000000);
    shoal_profile_stage_call(legacy, 4000000);
    assert_int_equal(shoal_profile_summaries(sum, SHOAL_PROFILE_MAX_STAGES), 1);
    assert_string_equal(sum[0].name, "legacy");
    assert_int_equal(sum[0].calls, 2);
    /* the table names the stage */
    FILE *f = tmpfile();
    assert_non_null(f);
    shoal_profile_print(f, "earlier names", 0);
    long size = ftell(f);
    assert_true(size > 0);
    rewind(f);
    char *text = calloc(1, (size_t)size + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    assert_non_null(strstr(text, "legacy"));
    free(text);
    /* the trace calls: open, count, write a Chrome trace, close */
    assert_int_equal(shoal_profile_trace_open(1, 16, &e), SHOAL_OK);
    uint64_t dropped = 1;
    assert_int_equal(shoal_profile_trace_count(&dropped), 0);
    assert_int_equal(dropped, 0);
    char dir[] = "/tmp/shoal_compat_XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/trace.json", dir);
    assert_int_equal(shoal_profile_trace_write(path, &e), SHOAL_OK);
    f = fopen(path, "rb");
    assert_non_null(f);
    char head[64] = {0};
    assert_true(fread(head, 1, sizeof head - 1, f) > 0);
    fclose(f);
    assert_non_null(strstr(head, "traceEvents"));
    assert_int_equal(remove(path), 0);
    assert_int_equal(rmdir(dir), 0);
    shoal_profile_trace_close();
    assert_int_equal(shoal_profile_trace_count(NULL), 0);
    shoal_profile_reset();
    assert_int_equal(shoal_profile_summaries(sum, SHOAL_PROFILE_MAX_STAGES), 0);
}

/* shoal_renderer_create (0.1's create: finds shoal's meshes itself when the desc has none),
 * shoal_renderer_destroy and shoal_render_asset_path. */
static void test_render_earlier_names(void **state)
{
    (void)state;
    char a[4096], b[4096];
    assert_int_equal(shoal_render_asset_path("fish.obj", a, sizeof a),
                     shoal_io_asset_path("fish.obj", b, sizeof b));
    assert_string_equal(a, b);
    shoal_render_desc rd = shoal_render_desc_default();
    rd.width = 64;
    rd.height = 48;
    rd.thread_count = 1;
    shoal_renderer *r = NULL;
    shoal_error e;
    assert_int_equal(shoal_renderer_create(&rd, &r, &e), SHOAL_OK);
    assert_non_null(r);
    shoal_renderer_destroy(r);
    shoal_renderer_destroy(NULL);
}

/* shoal_gpu_sim_set_state / get_state / stats against the new names (on a CUDA device). */
static void test_gpu_earlier_names(void **state)
{
    (void)state;
    shoal_error e;
    if (shoal_gpu_available(&e)) {
        printf("SKIP: no CUDA device: %s\n", e.message);
        skip();
    }
    const size_t n = 1000;
    float *rows = scene_uniform(n, 8.0f, 1.0f, 3);
    float *a = malloc(n * 6 * sizeof *a), *b = malloc(n * 6 * sizeof *b);
    assert_non_null(rows);
    assert_non_null(a);
    assert_non_null(b);
    shoal_sim_desc d = shoal_sim_desc_default();
    d.boid_count = n;
    shoal_gpu_sim *g1, *g2;
    assert_int_equal(shoal_gpu_sim_create(&d, SHOAL_GPU_ORDER_STABLE, &g1, &e), SHOAL_OK);
    assert_int_equal(shoal_gpu_sim_create(&d, SHOAL_GPU_ORDER_STABLE, &g2, &e), SHOAL_OK);
    assert_int_equal(shoal_gpu_sim_set_rows(g1, rows, n, &e), SHOAL_OK);
    assert_int_equal(shoal_gpu_sim_set_state(g2, rows, &e), SHOAL_OK);
    assert_int_equal(shoal_gpu_sim_step(g1, 5, &e), SHOAL_OK);
    assert_int_equal(shoal_gpu_sim_step(g2, 5, &e), SHOAL_OK);
    assert_int_equal(shoal_gpu_sim_get_rows(g1, a, n, &e), SHOAL_OK);
    assert_int_equal(shoal_gpu_sim_get_state(g2, b, &e), SHOAL_OK);
    assert_memory_equal(a, b, n * 6 * sizeof *a);
    shoal_gpu_stats s1 = shoal_gpu_sim_get_stats(g2), s2 = shoal_gpu_sim_stats(g2);
    assert_int_equal(s1.steps, s2.steps);
    assert_int_equal(s1.steps, 5);
    shoal_gpu_sim_destroy(g1);
    shoal_gpu_sim_destroy(g2);
    free(rows);
    free(a);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sim_state_calls),       cmocka_unit_test(test_sim_earlier_names),
        cmocka_unit_test(test_profile_earlier_names), cmocka_unit_test(test_render_earlier_names),
        cmocka_unit_test(test_gpu_earlier_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
