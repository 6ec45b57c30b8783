/* SPDX-License-Identifier: MIT */
/* The C API's traps (issue 27), one test each: a state call without a length, a model
 * changed without its parameters, two seeds, a step before any state, no version or ABI
 * check, no row-order render entry. Every test here failed on 0.1 (most did not even
 * compile). Only the current calls (the 0.1 names: tests/test_compat.c). */
#include "shoal/shoal.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static shoal_sim *make(shoal_sim_desc d)
{
    shoal_sim *s = NULL;
    shoal_error e;
    shoal_status st = shoal_sim_create(&d, &s, &e);
    if (st)
        fail_msg("create: %s", e.message);
    return s;
}

/* A buffer of the wrong size is refused, naming both counts, and nothing is read or
 * written (0.1: shoal_sim_set_state read N rows whatever the buffer held). */
static void test_rows_have_a_length(void **state)
{
    (void)state;
    shoal_sim_desc d = shoal_sim_desc_for(SHOAL_MODEL_STEER);
    d.boid_count = 100;
    shoal_sim *s = make(d);
    float *rows = calloc(101 * 6, sizeof(float));
    shoal_error e;
    assert_int_equal(shoal_sim_set_rows(s, rows, 99, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "99 rows"));
    assert_non_null(strstr(e.message, "100 boids"));
    assert_int_equal(shoal_sim_has_state(s), 0);
    assert_int_equal(shoal_sim_set_rows(s, rows, 100, &e), SHOAL_OK);
    for (int i = 0; i < 101 * 6; i++)
        rows[i] = -7.0f;
    assert_int_equal(shoal_sim_get_rows(s, rows, 101, &e), SHOAL_ERR_INPUT);
    assert_int_equal(shoal_sim_get_rows(s, rows, 99, &e), SHOAL_ERR_INPUT);
    assert_true(rows[0] == -7.0f); /* nothing written */
    assert_int_equal(shoal_sim_get_rows(s, rows, 100, &e), SHOAL_OK);
    assert_true(rows[0] == 0.0f && rows[100 * 6] == -7.0f);
    assert_int_equal(shoal_sim_set_rows(s, NULL, 100, &e), SHOAL_ERR_INPUT);
    shoal_sim_destroy(s);
    free(rows);
}

/* Setting desc.model alone kept the old model's parameters: fov failed with "coh_dist2 ...
 * out of range" and no hint, average ran silently on steer's values. Now both are refused
 * with the fix in the message, and shoal_sim_desc_for gives each model's defaults. */
static void test_model_needs_its_parameters(void **state)
{
    (void)state;
    shoal_error e;
    shoal_sim *s = NULL;
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
        shoal_sim_desc d = shoal_sim_desc_default(); /* steer's */
        d.boid_count = 64;
        d.model = (shoal_model)m;
        shoal_status st = shoal_sim_create(&d, &s, &e);
        if (m == SHOAL_MODEL_STEER) {
            assert_int_equal(st, SHOAL_OK);
            shoal_sim_destroy(s);
            continue;
        }
        assert_int_equal(st, SHOAL_ERR_INPUT);
        assert_null(s);
        assert_non_null(strstr(e.message, "shoal_sim_desc_for"));
        assert_non_null(strstr(e.message, "model steer's"));
        /* the per-model initialiser, and the 0.1 fix (shoal_params_default), both work */
        shoal_sim_desc f = shoal_sim_desc_for((shoal_model)m);
        assert_int_equal(f.model, m);
        assert_int_equal(f.boid_count, shoal_model_default_count((shoal_model)m));
        f.boid_count = 64;
        assert_int_equal(shoal_sim_create(&f, &s, &e), SHOAL_OK);
        shoal_sim_destroy(s);
        shoal_params_default(d.model, &d.params);
        assert_int_equal(shoal_sim_create(&d, &s, &e), SHOAL_OK);
        shoal_sim_destroy(s);
    }
    /* a running sim refuses another model's parameters too */
    shoal_sim_desc d = shoal_sim_desc_for(SHOAL_MODEL_AVERAGE);
    d.boid_count = 64;
    s = make(d);
    shoal_params p;
    shoal_params_default(SHOAL_MODEL_STEER, &p);
    assert_int_equal(shoal_sim_set_params(s, &p, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "model steer's, the model is average"));
    shoal_sim_destroy(s);
}

/* One seed: desc.seed draws the initial state and picks heading's targets. */
static void test_one_seed(void **state)
{
    (void)state;
    shoal_error e;
    shoal_sim_desc d = shoal_sim_desc_for(SHOAL_MODEL_HEADING);
    d.boid_count = 50;
    d.seed = 7;
    shoal_sim *a = make(d);
    assert_int_equal(shoal_sim_draw_state(a, &e), SHOAL_OK);
    float ra[50 * 6], rb[50 * 6];
    assert_int_equal(shoal_sim_get_rows(a, ra, 50, &e), SHOAL_OK);
    d.seed = 8;
    shoal_sim *b = make(d);
    assert_int_equal(shoal_sim_draw_state(b, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_get_rows(b, rb, 50, &e), SHOAL_OK);
    assert_memory_not_equal(ra, rb, sizeof ra);
    float ta[3 * SHOAL_MAX_TARGETS], tb[3 * SHOAL_MAX_TARGETS];
    size_t na = shoal_sim_targets(a, 0.0, ta, SHOAL_MAX_TARGETS);
    size_t nb = shoal_sim_targets(b, 0.0, tb, SHOAL_MAX_TARGETS);
    assert_true(na > 0 && na == nb);
    assert_memory_not_equal(ta, tb, na * 3 * sizeof(float));
    /* the same seed again: the same state, bit for bit */
    d.seed = 7;
    shoal_sim *c = make(d);
    assert_int_equal(shoal_sim_draw_state(c, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_get_rows(c, rb, 50, &e), SHOAL_OK);
    assert_memory_equal(ra, rb, sizeof ra);
    shoal_sim_destroy(a);
    shoal_sim_destroy(b);
    shoal_sim_destroy(c);
}

/* A step before any state succeeded with every fish at the origin; now it is an error. */
static void test_step_needs_a_state(void **state)
{
    (void)state;
    shoal_error e;
    shoal_sim_desc d = shoal_sim_desc_for(SHOAL_MODEL_STEER);
    d.boid_count = 32;
    shoal_sim *s = make(d);
    assert_int_equal(shoal_sim_has_state(s), 0);
    assert_int_equal(shoal_sim_step(s, 1, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "no state"));
    float rows[32 * 6];
    assert_int_equal(shoal_sim_get_rows(s, rows, 32, &e), SHOAL_ERR_INPUT);
    assert_int_equal(shoal_sim_step(s, -1, &e), SHOAL_ERR_INPUT);
    assert_int_equal(shoal_sim_draw_state(s, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_has_state(s), 1);
    assert_int_equal(shoal_sim_step(s, 2, &e), SHOAL_OK);
    assert_true(shoal_sim_time(s) > 0);
    shoal_sim_destroy(s);
}

/* A run-time version and an ABI check of every public struct's size. */
static void test_version_and_abi(void **state)
{
    (void)state;
    shoal_error e;
    assert_string_equal(shoal_version(), SHOAL_VERSION_STRING);
    assert_int_equal(shoal_version_number(), SHOAL_VERSION_NUMBER);
    assert_int_equal(SHOAL_VERSION_NUMBER, 200);
    assert_int_equal(shoal_abi_check(&e), SHOAL_OK);
    size_t sizes[] = {SHOAL_ABI_STRUCTS(SHOAL_ABI_SIZEOF_)};
    size_t n = sizeof sizes / sizeof sizes[0];
    /* a parameter added in the library but not in the program's headers */
    sizes[2] += 4;
    assert_int_equal(shoal_abi_check_sizes(SHOAL_VERSION_NUMBER, sizes, n, &e),
                     SHOAL_ERR_UNSUPPORTED);
    assert_non_null(strstr(e.message, "struct shoal_params"));
    sizes[2] -= 4;
    assert_int_equal(shoal_abi_check_sizes(SHOAL_VERSION_NUMBER, sizes, n, &e), SHOAL_OK);
    assert_int_equal(shoal_abi_check_sizes(100, sizes, n, &e), SHOAL_ERR_UNSUPPORTED);
    assert_non_null(strstr(e.message, "0.1.0"));
    assert_int_equal(shoal_abi_check_sizes(SHOAL_VERSION_NUMBER, sizes, n - 1, &e),
                     SHOAL_ERR_UNSUPPORTED);
    /* the parameter block is what an added parameter changes: it is in the check, and the
     * desc that embeds it */
    assert_int_equal(sizes[2], sizeof(shoal_params));
    assert_int_equal(sizes[4], sizeof(shoal_sim_desc));
}

/* Rows can be drawn as they are (0.1 had only the columns of a view): the same pixels. */
static void test_render_rows(void **state)
{
    (void)state;
    shoal_error e;
    shoal_sim_desc d = shoal_sim_desc_for(SHOAL_MODEL_STEER);
    d.boid_count = 300;
    shoal_sim *s = make(d);
    assert_int_equal(shoal_sim_draw_state(s, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_step(s, 3, &e), SHOAL_OK);
    float *rows = malloc(300 * 6 * sizeof(float));
    assert_int_equal(shoal_sim_get_rows(s, rows, 300, &e), SHOAL_OK);
    shoal_render_desc rd = shoal_render_desc_default();
    rd.width = 160;
    rd.height = 90;
    shoal_mesh mesh, lod;
    assert_int_equal(shoal_mesh_load_asset("fish.obj", &mesh, &e), SHOAL_OK);
    assert_int_equal(shoal_mesh_load_asset("fish_lod1.obj", &lod, &e), SHOAL_OK);
    rd.mesh = &mesh;
    rd.lod_mesh = &lod;
    shoal_renderer *r = NULL;
    assert_int_equal(shoal_render_create(&rd, &r, &e), SHOAL_OK);
    shoal_mesh_free(&mesh); /* create copied them */
    shoal_mesh_free(&lod);
    shoal_camera cam = shoal_camera_default();
    cam.eye[2] = 4.0f;
    assert_int_equal(shoal_render_frame_rows(r, rows, 300, NULL, NULL, &cam, &e), SHOAL_OK);
    uint64_t h_rows = shoal_render_hash(shoal_render_framebuffer(r));
    /* the sim's own (cell-sorted) view with its row ids: the same image */
    shoal_boid_view v = shoal_sim_view(s);
    shoal_render_instances inst = {.count = v.count,
                                   .px = v.px,
                                   .py = v.py,
                                   .pz = v.pz,
                                   .vx = v.vx,
                                   .vy = v.vy,
                                   .vz = v.vz,
                                   .id = v.row_of};
    assert_int_equal(shoal_render_frame(r, &inst, &cam, &e), SHOAL_OK);
    assert_true(shoal_render_hash(shoal_render_framebuffer(r)) == h_rows);
    assert_true(shoal_render_get_stats(r).pixels_written > 0);
    /* groups colour the fish: another image */
    uint8_t *group = malloc(300);
    for (int i = 0; i < 300; i++)
        group[i] = (uint8_t)(i % 3);
    assert_int_equal(shoal_render_frame_rows(r, rows, 300, group, NULL, &cam, &e), SHOAL_OK);
    assert_true(shoal_render_hash(shoal_render_framebuffer(r)) != h_rows);
    rows[5 * 6 + 4] = INFINITY;
    assert_int_equal(shoal_render_frame_rows(r, rows, 300, NULL, NULL, &cam, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "row 5 column 4"));
    free(group);
    free(rows);
    shoal_render_destroy(r);
    shoal_sim_destroy(s);
}

/* shoal_state_compare: what `shoal compare` prints, as a library call. */
static void test_state_compare(void **state)
{
    (void)state;
    float a[3 * 6] = {0}, b[3 * 6] = {0};
    for (int i = 0; i < 18; i++)
        a[i] = b[i] = (float)(i + 1);
    b[6 + 0] += 3.0f; /* row 1: position off by (3, 4, 0) */
    b[6 + 1] += 4.0f;
    shoal_state_diff d;
    shoal_error e;
    assert_int_equal(shoal_state_compare(a, b, 3, &d, &e), SHOAL_OK);
    assert_int_equal(d.count, 3);
    assert_int_equal(d.identical, 2);
    assert_true(d.pos_max_abs == 5.0);
    assert_true(d.pos_rms_abs == sqrt(25.0 / 3.0));
    assert_true(d.vel_max_abs == 0.0 && d.vel_rms_rel == 0.0);
    assert_int_equal(shoal_state_compare(NULL, b, 3, &d, &e), SHOAL_ERR_INPUT);
}

/* A checkpoint keeps the parameters' model: a resumed sim is created without complaint. */
static void test_checkpoint_keeps_model(void **state)
{
    (void)state;
    shoal_error e;
    shoal_sim_desc d = shoal_sim_desc_for(SHOAL_MODEL_CLASSIC);
    d.boid_count = 40;
    shoal_sim *s = make(d);
    assert_int_equal(shoal_sim_draw_state(s, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_step(s, 3, &e), SHOAL_OK);
    char path[] = "/tmp/shoal-test-api-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(shoal_io_checkpoint_write(path, s, &e), SHOAL_OK);
    shoal_sim_desc r;
    float *rows = NULL;
    shoal_sim_checkpoint ck;
    assert_int_equal(shoal_io_checkpoint_read(path, &r, &rows, &ck, &e), SHOAL_OK);
    unlink(path);
    assert_int_equal(r.model, SHOAL_MODEL_CLASSIC);
    assert_memory_equal(&r.params, &d.params, sizeof d.params);
    shoal_sim *t = make(r);
    assert_int_equal(shoal_sim_set_rows(t, rows, r.boid_count, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_set_checkpoint(t, &ck, &e), SHOAL_OK);
    free(rows);
    shoal_sim_destroy(s);
    shoal_sim_destroy(t);
}

/* A checkpoint written before the parameters of the literature's models (issue 39) were
 * appended to shoal_params holds a prefix of today's floats: it is read, the missing ones at
 * the model's defaults; one with more floats than this version knows is refused. */
static void test_checkpoint_earlier_layout(void **state)
{
    (void)state;
    shoal_error e;
    shoal_sim_desc d = shoal_sim_desc_for(SHOAL_MODEL_HEADING);
    d.boid_count = 30;
    d.params.move_speed = 3.5f;
    shoal_sim *s = make(d);
    assert_int_equal(shoal_sim_draw_state(s, &e), SHOAL_OK);
    char path[] = "/tmp/shoal-test-api-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(shoal_io_checkpoint_write(path, s, &e), SHOAL_OK);
    shoal_sim_destroy(s);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static unsigned char buf[1 << 16];
    size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    assert_true(len > 64 && len < sizeof buf);
    /* the header's float count (offset 12) and the floats (from offset 64): drop the last
     * four, the fields that came after 0.2's first layout */
    uint32_t floats;
    memcpy(&floats, buf + 12, 4);
    const size_t old_floats = offsetof(shoal_params, noise) / sizeof(float);
    assert_int_equal(floats, old_floats + 4);
    uint32_t k = (uint32_t)old_floats;
    memcpy(buf + 12, &k, 4);
    size_t cut = 64 + old_floats * 4;
    memmove(buf + cut, buf + cut + 16, len - cut - 16);
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, len - 16, f), len - 16);
    fclose(f);
    shoal_sim_desc r;
    float *rows = NULL;
    shoal_sim_checkpoint ck;
    if (shoal_io_checkpoint_read(path, &r, &rows, &ck, &e))
        fail_msg("%s", e.message);
    assert_int_equal(r.model, SHOAL_MODEL_HEADING);
    assert_float_equal(r.params.move_speed, 3.5f, 0);
    assert_memory_equal(&r.params, &d.params, sizeof d.params);
    free(rows);
    /* more floats than this version has: refused, saying so */
    k = (uint32_t)(old_floats + 5);
    memcpy(buf + 12, &k, 4);
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, len - 16, f), len - 16);
    fclose(f);
    assert_int_equal(shoal_io_checkpoint_read(path, &r, &rows, &ck, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "another shoal version"));
    unlink(path);
}

/* The GPU backend has the same lengths and the same refusal of a step before any state
 * (runs on the device: tools/device.sh; skipped without a GPU). */
static void test_gpu_rows(void **state)
{
    (void)state;
    shoal_error e;
    if (shoal_gpu_available(&e)) {
        printf("SKIP gpu: %s\n", e.message);
        skip();
    }
    shoal_sim_desc d = shoal_sim_desc_for(SHOAL_MODEL_STEER);
    d.boid_count = 256;
    shoal_gpu_sim *g = NULL;
    assert_int_equal(shoal_gpu_sim_create(&d, SHOAL_GPU_ORDER_STABLE, &g, &e), SHOAL_OK);
    assert_int_equal(shoal_gpu_sim_step(g, 1, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "no state"));
    float *rows = calloc(257 * 6, sizeof(float));
    for (int i = 0; i < 256 * 6; i++)
        rows[i] = (float)(i % 13) * 0.1f;
    assert_int_equal(shoal_gpu_sim_set_rows(g, rows, 255, &e), SHOAL_ERR_INPUT);
    assert_int_equal(shoal_gpu_sim_set_rows(g, rows, 256, &e), SHOAL_OK);
    assert_int_equal(shoal_gpu_sim_step(g, 2, &e), SHOAL_OK);
    assert_int_equal(shoal_gpu_sim_get_rows(g, rows, 257, &e), SHOAL_ERR_INPUT);
    assert_int_equal(shoal_gpu_sim_get_rows(g, rows, 256, &e), SHOAL_OK);
    free(rows);
    shoal_gpu_sim_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_have_a_length),
        cmocka_unit_test(test_model_needs_its_parameters),
        cmocka_unit_test(test_one_seed),
        cmocka_unit_test(test_step_needs_a_state),
        cmocka_unit_test(test_version_and_abi),
        cmocka_unit_test(test_render_rows),
        cmocka_unit_test(test_state_compare),
        cmocka_unit_test(test_checkpoint_keeps_model),
        cmocka_unit_test(test_checkpoint_earlier_layout),
        cmocka_unit_test(test_gpu_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
