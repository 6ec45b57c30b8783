/* SPDX-License-Identifier: MIT */
/* The C and command-line faults of the hostile trial of 2026-11-27 (issue 44; the report is
 * trials/hostile-2026-11-27.md), one test each, named after the fault, driving the real
 * program ($SHOAL_EXE) and the public C API as the trial did: a FIFO named as an input (N12),
 * outputs naming an input of the same command (N13), --trace naming a frame of run's or a
 * replay's --out DIR (N14), a missing scene file's status (N22), a sweep on a full disk
 * (N26), and NULL pointers given to the public functions (the report's notes). Each fails
 * against the program and library built before the fixes (N4, N5: test_threads; N10, N11:
 * test_profile; N8, N25: test_profile_sh.sh). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/cli_harness.h"
#include "tests/scenes.h"

#include "shoal/shoal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *slurp(const char *name, size_t *n_out)
{
    size_t n = 0;
    char *b = read_all(path(name), &n);
    if (!b)
        fail_msg("cannot read %s", name);
    if (n_out)
        *n_out = n;
    return b;
}

static void assert_err_has(const char *what)
{
    if (!strstr(g_err, what))
        fail_msg("expected '%s' in stderr: '%s'", what, g_err);
}

/* Run SCRIPT (sh, $S = shoal) in a private mount namespace with a tmpfs of SIZE mounted on
 * ./tiny: the exit code, or 77 when no such mount can be made here (not root, no unshare). */
static int on_tiny_fs(const char *size, const char *script)
{
    FILE *f = fopen(path("tiny.sh"), "w");
    assert_non_null(f);
    fprintf(f,
            "set -u\nmkdir -p tiny\nmount -t tmpfs -o size=%s tmpfs tiny 2>/dev/null || exit "
            "77\nS=%s\n%s\n",
            size, g_exe, script);
    fclose(f);
    return sh("command -v unshare > /dev/null || exit 77; unshare -m sh ./tiny.sh");
}

static int setup(void **state)
{
    (void)state;
    if (cli_setup("trial1127"))
        return -1;
    /* a state, a 3-frame trajectory (frames 0, 1, 2 and a manifest) and its (T, N, 6) form */
    if (run("init --count 200 --seed 3 --out a.npy") != 0 ||
        sh("cp a.npy b.npy && cp a.npy ids.npy") != 0 ||
        run("step --in a.npy --out-dir traj --every 1 --steps 2") != 0)
        return -1;
    float *frames[3];
    size_t n = 0;
    for (int k = 0; k < 3; k++) {
        char name[64];
        snprintf(name, sizeof name, "traj/state_%06d.npy", k);
        shoal_error e;
        if (shoal_io_npy_read(path(name), &frames[k], &n, &e))
            return -1;
    }
    /* (3, 200, 6) float32, C order: the .npy header written by hand */
    FILE *f = fopen(path("t3.npy"), "wb");
    char header[118];
    int hl = snprintf(header, sizeof header,
                      "{'descr': '<f4', 'fortran_order': False, 'shape': (3, %zu, 6), }", n);
    memset(header + hl, ' ', sizeof header - (size_t)hl - 1);
    header[sizeof header - 1] = '\n';
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 118, 0};
    int ok = f && fwrite(pre, 1, 10, f) == 10 && fwrite(header, 1, 118, f) == 118;
    for (int k = 0; k < 3; k++) {
        ok = ok && fwrite(frames[k], sizeof(float), n * 6, f) == n * 6;
        free(frames[k]);
    }
    if (f)
        fclose(f);
    return ok ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return cli_teardown();
}

/* ---- N12: a FIFO named as an input ----------------------------------------------------- */

/* `step --in ff.bin` blocked in open (a FIFO with no writer); so did compare, and verify on
 * a directory of .bin dumps with a FIFO among them. Refused at once: a .bin must be a
 * regular file (CLI.md). */
static void test_n12_fifo_input(void **state)
{
    (void)state;
    assert_int_equal(sh("rm -rf ff.bin fd && mkfifo ff.bin && mkdir fd && mkfifo "
                        "fd/frame_000001.bin && head -c 4800 /dev/zero > fd/frame_000000.bin"),
                     0);
    int rc = sh("timeout 20 $S step --in ff.bin --out o.npy --steps 1");
    if (rc != 2)
        fail_msg("step --in FIFO.bin: exit %d (124: it blocked), expected 2: %s", rc, g_err);
    assert_err_has("not a regular file");
    assert_false(exists("o.npy"));
    rc = sh("timeout 20 $S compare ff.bin a.npy");
    if (rc != 2)
        fail_msg("compare FIFO.bin: exit %d, expected 2: %s", rc, g_err);
    assert_err_has("not a regular file");
    rc = sh("timeout 20 $S verify --trajectory fd --layout vp --quiet");
    if (rc != 2)
        fail_msg("verify with a FIFO frame: exit %d, expected 2: %s", rc, g_err);
    assert_err_has("not a regular file");
}

/* ---- N13: an output naming an input ---------------------------------------------------- */

/* Every form of the report: exit 2 with one line, the input unchanged. */
static void refused_keeps(const char *cmd, const char *input)
{
    size_t n0, n1;
    char *before = slurp(input, &n0);
    int rc = sh("$S %s", cmd);
    char *after = slurp(input, &n1);
    int same = n0 == n1 && memcmp(before, after, n0) == 0;
    free(before);
    free(after);
    if (rc != 2)
        fail_msg("'%s': exit %d, expected 2 (%s)", cmd, rc, g_err);
    if (!strstr(g_err, "is the input") && !strstr(g_err, "is a file of the input directory"))
        fail_msg("'%s': message '%s'", cmd, g_err);
    if (!same)
        fail_msg("'%s': the input %s was changed", cmd, input);
}

static void test_n13_output_over_input(void **state)
{
    (void)state;
    refused_keeps("verify --trajectory traj --json traj/manifest.json --quiet",
                  "traj/manifest.json");
    refused_keeps("verify --trajectory traj --json traj/state_000001.npy --quiet",
                  "traj/state_000001.npy");
    refused_keeps("verify --trajectory ./traj --csv traj/./state_000002.npy --quiet",
                  "traj/state_000002.npy");
    refused_keeps("verify --trajectory t3.npy --csv t3.npy --quiet", "t3.npy");
    refused_keeps("verify --trajectory traj --ids ids.npy --json ids.npy --quiet", "ids.npy");
    refused_keeps("compare a.npy b.npy --json a.npy", "a.npy");
    refused_keeps("compare a.npy b.npy --json ./b.npy", "b.npy");
    refused_keeps("step --in a.npy --out b.npy --steps 1 --trace a.npy", "a.npy");
    refused_keeps("step --in a.npy --out-dir dd --steps 1 --checkpoint a.npy", "a.npy");
    refused_keeps("render --in a.npy --out a.npy --size 32x24", "a.npy");
    assert_false(exists("dd"));
    /* a link to the input is the input */
    assert_int_equal(sh("ln -sf a.npy link.npy"), 0);
    refused_keeps("render --in a.npy --out link.npy --size 32x24", "a.npy");
    /* the documented updates in place still work: --in X --out X, --resume F --checkpoint F */
    assert_int_equal(sh("cp a.npy inplace.npy && $S step --in inplace.npy --out inplace.npy "
                        "--steps 1 --checkpoint c.ckpt"),
                     0);
    assert_int_equal(sh("$S step --resume c.ckpt --checkpoint c.ckpt --steps 1 --out -"), 0);
    /* and a report beside the trajectory, not over it, is fine */
    assert_int_equal(sh("$S verify --trajectory traj --json traj/report.json --quiet"), 0);
}

/* ---- N14: --trace naming a frame of --out DIR ------------------------------------------ */

static void test_n14_trace_in_out_dir(void **state)
{
    (void)state;
    assert_int_equal(sh("rm -rf d9 rp3 rp4 && mkdir d9 rp3"), 0);
    int rc = sh("$S run --headless --count 200 --size 64x48 --hud off --frames 2 --out d9 "
                "--trace d9/frame_00000.png");
    if (rc != 2)
        fail_msg("run --out d9 --trace d9/frame_00000.png: exit %d (%s)", rc, g_err);
    assert_err_has("is a file of the output directory");
    assert_false(exists("d9/frame_00000.png"));
    rc = sh("$S run --headless --count 200 --size 64x48 --hud off --frames 2 --out d9 "
            "--trace d9/./frame_00001.png");
    assert_int_equal(rc, 2);
    /* a replay: its frames and a frame of the trajectory it reads */
    rc = sh("$S render --in traj --out rp3 --size 32x24 --trace rp3/frame_000001.png");
    if (rc != 2)
        fail_msg("replay --out rp3 --trace rp3/frame_000001.png: exit %d (%s)", rc, g_err);
    assert_err_has("is a file of the output directory");
    assert_false(exists("rp3/frame_000001.png"));
    rc = sh("$S render --in traj --out rp4 --size 32x24 --trace traj/state_000001.npy");
    if (rc != 2)
        fail_msg("replay --trace traj/state_000001.npy: exit %d (%s)", rc, g_err);
    assert_err_has("is a file of the input directory");
    /* a trace beside the frames is fine */
    assert_int_equal(sh("$S run --headless --count 200 --size 64x48 --hud off --frames 2 --out "
                        "d9 --trace d9/trace.json"),
                     0);
    assert_true(exists("d9/frame_00001.png") && exists("d9/trace.json"));
}

/* ---- N22: a missing scene file is SHOAL_ERR_IO ----------------------------------------- */

static void test_n22_scene_missing_is_io(void **state)
{
    (void)state;
    shoal_scene sc;
    shoal_error e;
    assert_int_equal(shoal_scene_load("/nonexistent/nowhere.ini", &sc, &e), SHOAL_ERR_IO);
    assert_int_equal(e.status, SHOAL_ERR_IO);
    assert_non_null(strstr(e.message, "cannot open"));
    /* the program: still exit 2 and the file named */
    assert_int_equal(run("init --scene nowhere.ini --out x.npy"), 2);
    assert_err_has("nowhere.ini");
}

/* ---- N26: a sweep that cannot write its manifest leaves nothing ------------------------- */

static void test_n26_sweep_full_disk_leaves_nothing(void **state)
{
    (void)state;
    /* 12 KB free: the spec fits, the manifest does not (as in the trial); then the same
     * command with room again runs, without --resume */
    int rc = on_tiny_fs(
        "200k", "head -c $(( $(df --output=avail -B1 tiny | tail -1) - 12000 )) /dev/zero > "
                "tiny/filler\n"
                "$S sweep --vary sep_weight=1,2,3 --count 100 --steps 10 --every 1 --out tiny/sw "
                "--quiet; rc=$?\n"
                "[ $rc -eq 2 ] || { echo \"exit $rc\" >&2; exit 10; }\n"
                "if [ -e tiny/sw ]; then ls -laR tiny/sw >&2; exit 11; fi\n"
                "rm tiny/filler\n"
                "$S sweep --vary sep_weight=1,2,3 --count 100 --steps 10 --every 1 --out tiny/sw "
                "--quiet || exit 12\n"
                "[ -f tiny/sw/sweep.csv ] || exit 13\n");
    if (rc == 77) {
        test_skip_part("N26: no tmpfs can be mounted here");
        return;
    }
    if (rc == 11)
        fail_msg("a sweep that failed on a full disk left its directory: %s", g_err);
    if (rc != 0)
        fail_msg("full-disk sweep script: exit %d (%s)", rc, g_err);
}

/* ---- the report's notes: NULL pointers to the public functions -------------------------- */

/* Each returns SHOAL_ERR_INPUT naming the argument (they crashed in the library). */
#define EXPECT_NULL_REFUSED(call, what)                                                            \
    do {                                                                                           \
        memset(&e, 0, sizeof e);                                                                   \
        shoal_status st_ = (call);                                                                 \
        if (st_ != SHOAL_ERR_INPUT || !strstr(e.message, what))                                    \
            fail_msg("%s: status %d, message '%s' (expected SHOAL_ERR_INPUT naming %s)", #call,    \
                     (int)st_, e.message, what);                                                   \
    } while (0)

static void test_null_arguments(void **state)
{
    (void)state;
    shoal_error e;
    shoal_sim_desc d = shoal_sim_desc_for(SHOAL_MODEL_STEER);
    d.boid_count = 50;
    shoal_sim *s = (shoal_sim *)1;
    EXPECT_NULL_REFUSED(shoal_sim_create(NULL, &s, &e), "desc is NULL");
    assert_null(s);
    EXPECT_NULL_REFUSED(shoal_sim_create(&d, NULL, &e), "sim_out is NULL");
    /* the NULL a failed create left, stepped */
    EXPECT_NULL_REFUSED(shoal_sim_step(s, 1, &e), "sim is NULL");
    EXPECT_NULL_REFUSED(shoal_sim_draw_state(NULL, &e), "sim is NULL");
    EXPECT_NULL_REFUSED(shoal_sim_set_rows(NULL, NULL, 5, &e), "sim is NULL");
    EXPECT_NULL_REFUSED(shoal_sim_get_rows(NULL, NULL, 5, &e), "sim is NULL");
    EXPECT_NULL_REFUSED(shoal_sim_set_params(NULL, &d.params, &e), "sim is NULL");
    EXPECT_NULL_REFUSED(shoal_sim_move_obstacle(NULL, 0, NULL, &e), "sim is NULL");
    EXPECT_NULL_REFUSED(shoal_sim_set_checkpoint(NULL, NULL, &e), "sim is NULL");
    EXPECT_NULL_REFUSED(shoal_params_set(d.model, NULL, "sep_weight", "1", &e), "params is NULL");
    EXPECT_NULL_REFUSED(shoal_params_set(d.model, &d.params, NULL, "1", &e), "name is NULL");
    EXPECT_NULL_REFUSED(shoal_params_set(d.model, &d.params, "sep_weight", NULL, &e),
                        "value is NULL");
    EXPECT_NULL_REFUSED(shoal_params_validate(d.model, NULL, &e), "params is NULL");
    EXPECT_NULL_REFUSED(shoal_model_parse(NULL, &d.model, &e), "name is NULL");
    assert_int_equal(shoal_sim_count(NULL), 0);
    assert_true(shoal_sim_time(NULL) == 0);
    assert_null(shoal_sim_get_desc(NULL));
    assert_int_equal(shoal_sim_has_state(NULL), 0);
    shoal_sim_destroy(NULL);

    assert_int_equal(shoal_sim_create(&d, &s, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_draw_state(s, &e), SHOAL_OK);
    EXPECT_NULL_REFUSED(shoal_sim_set_rows(s, NULL, 50, &e), "rows is NULL");
    EXPECT_NULL_REFUSED(shoal_sim_get_rows(s, NULL, 50, &e), "rows is NULL");
    EXPECT_NULL_REFUSED(shoal_sim_set_params(s, NULL, &e), "params is NULL");
    EXPECT_NULL_REFUSED(shoal_sim_set_checkpoint(s, NULL, &e), "ck is NULL");
    EXPECT_NULL_REFUSED(shoal_io_checkpoint_write(NULL, s, &e), "path is NULL");
    EXPECT_NULL_REFUSED(shoal_io_checkpoint_write(path("c.ckpt"), NULL, &e), "sim is NULL");
    /* statistics of NULL rows with a count were those of 0 boids */
    shoal_stats st;
    EXPECT_NULL_REFUSED(shoal_stats_compute(NULL, 5, NULL, &st, &e), "rows is NULL");
    float rows[50 * 6];
    assert_int_equal(shoal_sim_get_rows(s, rows, 50, &e), SHOAL_OK);
    EXPECT_NULL_REFUSED(shoal_stats_compute(rows, 50, NULL, NULL, &e), "out is NULL");
    assert_int_equal(shoal_stats_compute(NULL, 0, NULL, &st, &e), SHOAL_OK);
    EXPECT_NULL_REFUSED(shoal_state_compare(rows, rows, 50, NULL, &e), "out is NULL");
    shoal_sim_destroy(s);

    shoal_renderer *r = (shoal_renderer *)1;
    EXPECT_NULL_REFUSED(shoal_render_create(NULL, &r, &e), "desc is NULL");
    assert_null(r);
    shoal_render_desc rd = shoal_render_desc_default();
    EXPECT_NULL_REFUSED(shoal_render_create(&rd, NULL, &e), "out is NULL");
    shoal_camera cam = shoal_camera_default();
    EXPECT_NULL_REFUSED(shoal_render_frame_rows(NULL, rows, 50, NULL, NULL, &cam, &e), "r is NULL");
    EXPECT_NULL_REFUSED(shoal_render_set_size(NULL, 10, 10, &e), "r is NULL");
    shoal_framebuffer fb = shoal_render_framebuffer(NULL);
    assert_null(fb.argb);

    EXPECT_NULL_REFUSED(shoal_io_npy_write(NULL, rows, 50, &e), "path is NULL");
    EXPECT_NULL_REFUSED(shoal_io_npy_write(path("x.npy"), NULL, 50, &e), "rows is NULL");
    assert_false(exists("x.npy"));
    shoal_scene sc;
    EXPECT_NULL_REFUSED(shoal_scene_load(NULL, &sc, &e), "path is NULL");
    EXPECT_NULL_REFUSED(shoal_scene_parse(NULL, "x", &sc, &e), "text is NULL");
    EXPECT_NULL_REFUSED(shoal_scene_parse("[scene]\n", "x", NULL, &e), "scene is NULL");
    shoal_mesh m;
    EXPECT_NULL_REFUSED(shoal_mesh_load(NULL, &m, &e), "path is NULL");
    EXPECT_NULL_REFUSED(shoal_mesh_load_asset("fish.obj", NULL, &e), "mesh is NULL");
    EXPECT_NULL_REFUSED(shoal_io_png_write(path("x.png"), NULL, 4, 4, 4, &e), "argb is NULL");
    shoal_sweep *sw = (shoal_sweep *)1;
    EXPECT_NULL_REFUSED(shoal_sweep_create(NULL, NULL, &sw, &e), "base is NULL");
    assert_null(sw);
    EXPECT_NULL_REFUSED(shoal_sweep_vary(NULL, "sep_weight=1,2", &e), "sw is NULL");
    assert_int_equal(shoal_sweep_member_count(NULL), 0);
    EXPECT_NULL_REFUSED(shoal_profile_trace_start(NULL, 1, 10, &e), "profile is NULL");
    EXPECT_NULL_REFUSED(shoal_profile_create(NULL, &e), "profile_out is NULL");
    EXPECT_NULL_REFUSED(shoal_isa_parse(NULL, NULL, &e), "name is NULL");
    EXPECT_NULL_REFUSED(shoal_state_check_finite(NULL, 3, "x", &e), "rows is NULL");
    /* err itself may be NULL, as everywhere */
    assert_int_equal(shoal_sim_step(NULL, 1, NULL), SHOAL_ERR_INPUT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_n12_fifo_input),
        cmocka_unit_test(test_n13_output_over_input),
        cmocka_unit_test(test_n14_trace_in_out_dir),
        cmocka_unit_test(test_n22_scene_missing_is_io),
        cmocka_unit_test(test_n26_sweep_full_disk_leaves_nothing),
        cmocka_unit_test(test_null_arguments),
    };
    return test_exit(cmocka_run_group_tests(tests, setup, teardown));
}
