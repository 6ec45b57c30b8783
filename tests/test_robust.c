/* SPDX-License-Identifier: MIT */
/* Robustness: what test_cli.c does not already cover of the bad-input list of the
 * robustness issue, run as a user runs it (the shoal executable, $SHOAL_EXE), plus the
 * fuzzers' regression inputs (tests/fuzz/regressions/TARGET/: each file is fed to its parser
 * and must be accepted or refused cleanly, never crash).
 *
 * Covered here: a .npy header claiming more rows than memory holds; an allocation failure
 * (`shoal init --count 4000000000` under a memory limit); zero and negative radii and dt
 * through --set and scene files; unknown models, parameters, sections and keys in scenes;
 * render image sizes 0 and 16385; meshes with out-of-range indices, degenerate triangles or
 * no faces; a step that overflows to infinity (exit 1 naming boid and step, nothing
 * written); boids at 1e30 (the step completes and the other boids get the very bits they
 * get without them); and every output (state, PNG, trace JSON) leaving neither a temporary
 * nor a partial file when writing fails part way (RLIMIT_FSIZE) or cannot start. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/cli_harness.h"

#include "shoal/shoal.h"
#include "shoal/render.h"
#include "tests/scenes.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define ROBUST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ROBUST_ASAN 1
#endif
#endif
#ifndef ROBUST_ASAN
#define ROBUST_ASAN 0
#endif

static int g_has_render, g_has_trace;

/* A temporary left by the atomic writer (".NAME.tmp.XXXXXX") anywhere in the scratch dir
 * or one level below. */
static void expect_no_temporaries(const char *what)
{
    const char *dirs[] = {"", "sub"};
    for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++) {
        DIR *dir = opendir(path(dirs[d]));
        if (!dir)
            continue;
        struct dirent *de;
        while ((de = readdir(dir))) {
            if (de->d_name[0] == '.' && strstr(de->d_name, ".tmp.")) {
                closedir(dir);
                fail_msg("%s: left the temporary file %s/%s behind", what, dirs[d], de->d_name);
            }
        }
        closedir(dir);
    }
}

static void write_bytes(const char *name, const void *data, size_t len)
{
    FILE *f = fopen(path(name), "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

static void write_rows(const char *name, const float *rows, size_t n)
{
    shoal_error e;
    if (shoal_io_npy_write(path(name), rows, n, &e))
        fail_msg("%s", e.message);
}

static float *load(const char *name, size_t *n)
{
    float *rows;
    shoal_error e;
    if (shoal_io_npy_read(path(name), &rows, n, &e))
        fail_msg("%s", e.message);
    return rows;
}

/* Exit code `code`, one line on stderr holding every word of the NULL-terminated list,
 * `out` (if any) not created and no temporary file left. */
static void expect_fail_v(int code, const char *prefix, const char *out, const char *args,
                          va_list words)
{
    if (out)
        unlink(path(out));
    int rc = run_with(prefix, "%s", args);
    if (rc != code)
        fail_msg("'shoal %s' exited %d, expected %d (stderr: %s)", args, rc, code, g_err);
    char *nl = strchr(g_err, '\n');
    if (!nl || nl[1] != 0)
        fail_msg("'shoal %s': message is not one line: %s", args, g_err);
    for (const char *w; (w = va_arg(words, const char *));)
        if (!strstr(g_err, w))
            fail_msg("'shoal %s': message '%s' lacks '%s'", args, g_err, w);
    if (out && exists(out))
        fail_msg("'shoal %s' left %s behind", args, out);
    expect_no_temporaries(args);
}

static void expect_fail(int code, const char *out, const char *args, ...)
{
    va_list ap;
    va_start(ap, args);
    expect_fail_v(code, "", out, args, ap);
    va_end(ap);
}

static void expect_fail_with(int code, const char *prefix, const char *out, const char *args, ...)
{
    va_list ap;
    va_start(ap, args);
    expect_fail_v(code, prefix, out, args, ap);
    va_end(ap);
}

static int setup(void **state)
{
    (void)state;
    if (cli_setup("robust"))
        return -1;
    /* Which optional parts this build has (render, step --trace). */
    run("--help");
    size_t n;
    char *help = read_all(path("stdout.txt"), &n);
    g_has_render = help && strstr(help, "render") != NULL;
    free(help);
    run("step --help");
    help = read_all(path("stdout.txt"), &n);
    g_has_trace = help && strstr(help, "--trace") != NULL;
    free(help);
    if (run("init --count 500 --seed 4 --out ok.npy") != 0)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return cli_teardown();
}

/* ---- fuzz regressions ----------------------------------------------------------------- */

typedef shoal_status (*parse_fn)(const char *name, const char *data, size_t size);

static shoal_status parse_npy(const char *name, const char *data, size_t size)
{
    float *rows = NULL;
    size_t n = 0;
    shoal_error e;
    shoal_status st = shoal_io_npy_parse(data, size, name, &rows, &n, &e);
    if (st == SHOAL_OK) {
        (void)shoal_state_check_finite(rows, n, name, &e);
        free(rows);
    } else if (rows || n) {
        fail_msg("%s: rows handed out on failure", name);
    }
    return st;
}

static shoal_status parse_scene(const char *name, const char *data, size_t size)
{
    (void)size; /* read_all NUL-terminates */
    shoal_scene sc;
    shoal_error e;
    shoal_status st = shoal_scene_parse(data, name, &sc, &e);
    if (st == SHOAL_OK) {
        /* as fuzz_scene does: a few boids of the scene, two steps, one thread */
        shoal_sim_desc d = sc.desc;
        d.boid_count = d.boid_count < 24 ? d.boid_count : 24;
        d.thread_count = 1;
        shoal_sim *sim;
        if (shoal_sim_create(&d, &sim, &e) == SHOAL_OK) {
            (void)shoal_sim_draw_state(sim, &e);
            (void)shoal_sim_step(sim, 2, &e);
            shoal_sim_destroy(sim);
        }
    }
    return st;
}

static shoal_status parse_obj(const char *name, const char *data, size_t size)
{
    shoal_mesh m;
    shoal_error e;
    shoal_status st = shoal_mesh_parse(data, size, name, &m, &e);
    shoal_mesh_free(&m);
    return st;
}

static shoal_status parse_unity(const char *name, const char *data, size_t size)
{
    float *rows = NULL;
    size_t n = 0;
    shoal_error e;
    shoal_status st = shoal_io_unity_parse(data, size, name, &rows, &n, &e);
    free(rows);
    return st;
}

/* The command line: the file's lines are the arguments (first: the subcommand), run in
 * the scratch directory; it must exit 0, 1 or 2, never die of a signal. */
static shoal_status parse_cli(const char *name, const char *data, size_t size)
{
    char args[4096];
    size_t n = 0;
    for (size_t i = 0; i < size && n + 8 < sizeof args; i++) {
        unsigned char c = (unsigned char)data[i];
        if (c == '\n' || c == 0) {
            memcpy(args + n, "' '", 3);
            n += 3;
        } else if (c == '\'') {
            memcpy(args + n, "'\\''", 4);
            n += 4;
        } else {
            args[n++] = (char)c;
        }
    }
    args[n] = 0;
    int rc = run("'%s'", args);
    if (rc != 0 && rc != 1 && rc != 2)
        fail_msg("%s: shoal exited %d (stderr: %s)", name, rc, g_err);
    return SHOAL_OK;
}

static void run_regressions(const char *target, parse_fn fn)
{
    char dirpath[1024];
    snprintf(dirpath, sizeof dirpath, "%s/tests/fuzz/regressions/%s", SHOAL_SOURCE_ROOT, target);
    DIR *dir = opendir(dirpath);
    if (!dir) {
        /* the folders are part of the tree: without one, its parser's past crashes are
         * not replayed, which is a SKIP, not a pass */
        test_skip_part("regressions/%s: no such folder (%s)", target, dirpath);
        return;
    }
    int count = 0;
    struct dirent *de;
    while ((de = readdir(dir))) {
        if (de->d_name[0] == '.' || strcmp(de->d_name, "README.md") == 0)
            continue;
        char p[2048];
        snprintf(p, sizeof p, "%s/%s", dirpath, de->d_name);
        size_t size;
        char *data = read_all(p, &size);
        if (!data)
            continue;
        shoal_status st = fn(de->d_name, data, size);
        if (st != SHOAL_OK && st != SHOAL_ERR_INPUT && st != SHOAL_ERR_NOMEM)
            fail_msg("regressions/%s/%s: status %d", target, de->d_name, (int)st);
        free(data);
        count++;
    }
    closedir(dir);
    printf("  regressions/%s: %d inputs\n", target, count);
    if (count == 0)
        test_skip_part("regressions/%s: the folder holds no input", target);
}

static void test_fuzz_regressions(void **state)
{
    (void)state;
    run_regressions("npy", parse_npy);
    run_regressions("scene", parse_scene);
    run_regressions("obj", parse_obj);
    run_regressions("unity", parse_unity);
    run_regressions("cli", parse_cli);
}

/* ---- sizes and memory ----------------------------------------------------------------- */

static size_t npy_header(char *buf, const char *descr, const char *shape)
{
    char dict[256];
    int len = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                       descr, shape);
    size_t total = 10 + (size_t)len + 1;
    size_t pad = (64 - total % 64) % 64;
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    uint16_t hl = (uint16_t)((size_t)len + pad + 1);
    buf[8] = (char)(hl & 0xff);
    buf[9] = (char)(hl >> 8);
    memcpy(buf + 10, dict, (size_t)len);
    memset(buf + 10 + len, ' ', pad);
    buf[10 + (size_t)len + pad] = '\n';
    return 10 + (size_t)len + pad + 1;
}

/* N larger than memory: headers claiming 2^40 and 2^61 rows over a few bytes of data are
 * refused from the header and the file size, before anything is allocated. */
static void test_huge_row_count(void **state)
{
    (void)state;
    char buf[512];
    size_t h = npy_header(buf, "<f4", "(1099511627776, 6)");
    memset(buf + h, 0, 48);
    write_bytes("huge.npy", buf, h + 48);
    expect_fail(2, "out.npy", "step --in huge.npy --out out.npy", "huge.npy", "truncated", NULL);
    h = npy_header(buf, "<f8", "(2305843009213693952, 6)");
    memset(buf + h, 0, 48);
    write_bytes("huge2.npy", buf, h + 48);
    expect_fail(2, "out.npy", "step --in huge2.npy --out out.npy", "huge2.npy", NULL);
    h = npy_header(buf, "<f4", "(99999999999999999999999, 6)");
    write_bytes("huge3.npy", buf, h);
    expect_fail(2, "out.npy", "step --in huge3.npy --out out.npy", "huge3.npy", "shape", NULL);
    /* and through the API, without a file */
    float *rows = NULL;
    size_t n = 7;
    shoal_error e;
    assert_int_equal(shoal_io_npy_parse(buf, h, "mem.npy", &rows, &n, &e), SHOAL_ERR_INPUT);
    assert_null(rows);
    assert_int_equal(n, 0);
}

/* An allocation that fails is reported (exit 2, "memory"), never a crash. The limit is
 * RLIMIT_AS in a plain build; under AddressSanitizer (which reserves terabytes of address
 * space up front) its own allocation cap does the same. */
static void test_allocation_failure(void **state)
{
    (void)state;
    const char *limit = ROBUST_ASAN
                            ? "export ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1:"
                              "max_allocation_size_mb=2048"
                            : "ulimit -v 4194304";
    expect_fail_with(2, limit, "out.npy", "init --count 4000000000 --out out.npy", "memory", NULL);
    expect_fail_with(2, limit, "out.npy", "init --model classic --count 3000000000 --out out.npy",
                     "memory", NULL);
}

/* ---- parameters ----------------------------------------------------------------------- */

static void test_zero_and_negative(void **state)
{
    (void)state;
    /* radii and dt through --set and --dt (test_cli has sep_radius=-2 and --dt 0) */
    expect_fail(2, "out.npy", "step --in ok.npy --out out.npy --set sep_radius=0", "sep_radius",
                NULL);
    expect_fail(2, "out.npy", "step --in ok.npy --out out.npy --set coh_radius=-0.5", "coh_radius",
                NULL);
    expect_fail(2, "out.npy", "step --in ok.npy --out out.npy --set ali_radius=-0", "ali_radius",
                NULL);
    expect_fail(2, "out.npy",
                "step --model heading --in ok.npy --out out.npy --set neighbor_radius=0",
                "neighbor_radius", NULL);
    expect_fail(2, "out.npy", "step --model classic --in ok.npy --out out.npy --set fov=-1", "fov",
                NULL);
    expect_fail(2, "out.npy", "step --model fov --in ok.npy --out out.npy --set sep_dist2=0",
                "sep_dist2", NULL);
    expect_fail(2, "out.npy", "step --in ok.npy --out out.npy --dt -0.01", "--dt", NULL);
    expect_fail(2, "out.npy", "step --in ok.npy --out out.npy --dt 1e-300", "--dt", NULL);
    expect_fail(2, "out.npy", "init --out out.npy --set init_pos_radius=-1", "init_pos_radius",
                NULL);
    /* the same through scene files: the message names the file, the section and the key */
    write_text("r0.ini", "[scene]\nmodel = steer\n[params]\nsep_radius = 0\n");
    expect_fail(2, "out.npy", "step --scene r0.ini --in ok.npy --out out.npy", "r0.ini", "[params]",
                "sep_radius", NULL);
    write_text("rneg.ini", "[scene]\nmodel = average\n[params]\ncoh_radius = -3\n");
    expect_fail(2, "out.npy", "init --scene rneg.ini --out out.npy", "rneg.ini", "coh_radius",
                NULL);
    write_text("dt0.ini", "[scene]\ndt = 0\n");
    expect_fail(2, "out.npy", "step --scene dt0.ini --in ok.npy --out out.npy", "dt0.ini",
                "[scene]", "dt", NULL);
    write_text("dtneg.ini", "[scene]\ndt = -0.016\n");
    expect_fail(2, "out.npy", "step --scene dtneg.ini --in ok.npy --out out.npy", "dtneg.ini", "dt",
                NULL);
    write_text("sph0.ini", "[sphere]\ncenter = 0,0,0\nradius = 0\n");
    expect_fail(2, "out.npy", "step --scene sph0.ini --in ok.npy --out out.npy", "sph0.ini",
                "[sphere]", "radius", NULL);
    write_text("sphneg.ini", "[sphere rock]\ncenter = 0,0,0\nradius = -2\n");
    expect_fail(2, "out.npy", "step --scene sphneg.ini --in ok.npy --out out.npy", "sphneg.ini",
                "radius", NULL);
    write_text("cnt0.ini", "[scene]\ncount = 0\n");
    expect_fail(2, "out.npy", "init --scene cnt0.ini --out out.npy", "cnt0.ini", "count", NULL);
}

static void test_unknown_names_in_scene(void **state)
{
    (void)state;
    write_text("um.ini", "[scene]\nmodel = flock\n");
    expect_fail(2, "out.npy", "step --scene um.ini --in ok.npy --out out.npy", "um.ini", "model",
                "flock", NULL);
    write_text("up.ini", "[scene]\nmodel = classic\n[params]\nsep_radius = 1\n");
    expect_fail(2, "out.npy", "step --scene up.ini --in ok.npy --out out.npy", "up.ini", "[params]",
                "sep_radius", NULL);
    write_text("uk.ini", "[scene]\ncolour = blue\n");
    expect_fail(2, "out.npy", "init --scene uk.ini --out out.npy", "uk.ini", "colour", NULL);
    write_text("us.ini", "[fish]\nfins = 2\n");
    expect_fail(2, "out.npy", "init --scene us.ini --out out.npy", "us.ini", "fish", NULL);
    write_text("junk.ini", "[scene]\nthis is not ini\n");
    expect_fail(2, "out.npy", "init --scene junk.ini --out out.npy", "junk.ini", "line 2", NULL);
    write_text("t0.ini", "[scene]\nmodel = heading\nt0 = 1e300\n");
    expect_fail(2, "out.npy", "init --scene t0.ini --out out.npy", "t0.ini", "t0", NULL);
    write_text("nan.ini", "[params]\nmax_speed = nan\n");
    expect_fail(2, "out.npy", "init --scene nan.ini --out out.npy", "nan.ini", "max_speed", NULL);
}

/* ---- render --------------------------------------------------------------------------- */

static void test_render_sizes(void **state)
{
    (void)state;
    if (!g_has_render) {
        printf("  skipped: this shoal has no render command\n");
        return;
    }
    const char *sizes[] = {"0x720", "1280x0", "16385x720", "720x16385", "-1x5", "0x0"};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        char args[256];
        snprintf(args, sizeof args, "render --in ok.npy --out f.png --size %s", sizes[i]);
        expect_fail(2, "f.png", args, "--size", NULL);
    }
}

static const char *bad_meshes[][3] = {
    /* name, contents, word the message must hold */
    {"range.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n", "out of range"},
    {"range_neg.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf -1 -2 -4\n", "out of range"},
    {"zero_index.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n", "0"},
    {"degenerate.obj", "v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\n", "zero area"},
    {"repeated.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nf 1 1 2\n", "zero area"},
    {"nofaces.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\n", "no faces"},
    {"empty.obj", "", "no faces"},
};

static void test_bad_meshes(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad_meshes / sizeof bad_meshes[0]; i++) {
        const char *name = bad_meshes[i][0], *text = bad_meshes[i][1], *word = bad_meshes[i][2];
        /* the loader */
        shoal_mesh m;
        shoal_error e;
        assert_int_equal(shoal_mesh_parse(text, strlen(text), name, &m, &e), SHOAL_ERR_INPUT);
        if (!strstr(e.message, name) || !strstr(e.message, word))
            fail_msg("%s: message '%s' lacks the file name or '%s'", name, e.message, word);
        assert_null(m.positions);
        assert_null(m.indices);
        /* the program */
        if (!g_has_render)
            continue;
        write_text(name, text);
        char args[512];
        snprintf(args, sizeof args, "render --in ok.npy --out f.png --size 64x64 --mesh %s", name);
        expect_fail(2, "f.png", args, name, word, NULL);
        snprintf(args, sizeof args, "render --in ok.npy --out f.png --size 64x64 --lod-mesh %s",
                 name);
        expect_fail(2, "f.png", args, name, NULL);
    }
    if (!g_has_render)
        printf("  skipped the program half: this shoal has no render command\n");
}

/* ---- simulation faults ---------------------------------------------------------------- */

/* Three neighbouring boids with speeds near FLT_MAX: the sum of two neighbours' velocities
 * (alignment) overflows to infinity in the first step. Exit 1, the message names the first
 * such boid by input row and step 1, and no state (nor trace) is written. */
static void test_step_overflow(void **state)
{
    (void)state;
    float rows[10 * 6];
    memset(rows, 0, sizeof rows);
    for (int i = 0; i < 10; i++) {
        rows[i * 6 + 0] = 10.0f * (float)i;
        rows[i * 6 + 3] = 1.0f;
    }
    for (int i = 5; i <= 7; i++) { /* rows 5, 6, 7: within 1 of each other */
        rows[i * 6 + 0] = 50.0f + 0.5f * (float)(i - 5);
        rows[i * 6 + 3] = 3.0e38f;
    }
    write_rows("ovf.npy", rows, 10);
    /* each model's walls made to hold the state (x up to 90), so that the one line is the
     * fault's and not also step's warning of a state outside its walls */
    const char *models[] = {"steer", "average", "classic"};
    const char *fit[] = {"--set wall_size=200,200,200", "--set wall_size=200,200,200",
                         "--set box_min=-100,-100,-100 --set box_max=100,100,100"};
    for (size_t m = 0; m < sizeof models / sizeof models[0]; m++) {
        char args[256];
        snprintf(args, sizeof args, "step --model %s --in ovf.npy --out out.npy --steps 3 %s",
                 models[m], fit[m]);
        expect_fail(1, "out.npy", args, "boid 5", "step 1", NULL);
    }
    expect_fail(1, "out.npy",
                "step --in ovf.npy --out out.npy --neighbors brute --threads 1 --set "
                "wall_size=200,200,200",
                "boid 5", "step 1", NULL);
    /* rows shuffled: the message follows the input row, not the engine's order */
    float shuffled[10 * 6];
    for (int i = 0; i < 10; i++)
        memcpy(shuffled + 6 * i, rows + 6 * (9 - i), 6 * sizeof(float));
    write_rows("ovf_rev.npy", shuffled, 10);
    expect_fail(1, "out.npy",
                "step --in ovf_rev.npy --out out.npy --steps 2 --set wall_size=200,200,200",
                "boid 2", "step 1", NULL);
    if (g_has_trace) {
        /* a trace is an output too: nothing is written when the step fails */
        unlink(path("t.json"));
        int rc = run("step --in ovf.npy --out out.npy --trace t.json");
        assert_int_equal(rc, 1);
        if (exists("t.json"))
            fail_msg("a trace was written although the step failed");
        expect_no_temporaries("step --trace after a fault");
    }
}

/* Boids at 1e30 sit far outside the grid (they clamp to its border cells) and are nobody's
 * neighbour: the step completes, they stay finite, and every other boid gets exactly the
 * bits it gets when they are not there at all. N stays below 8192 so that the grid (whose
 * cell budget grows with N above that) is the same with and without them. */
static void test_far_boids(void **state)
{
    (void)state;
    const char *models[] = {"steer", "average", "heading", "classic", "fov"};
    const char *neighbors[] = {"grid", "brute"};
    const float far[4][3] = {
        {1e30f, 0, 0}, {-1e30f, 1e30f, -1e30f}, {0, 0, -1e30f}, {1e30f, 1e30f, 1e30f}};
    for (size_t m = 0; m < sizeof models / sizeof models[0]; m++) {
        for (size_t k = 0; k < 2; k++) {
            if (k == 1 && m != 0)
                continue; /* brute force once is enough */
            assert_int_equal(run("init --model %s --count 3000 --seed 9 --out near.npy", models[m]),
                             0);
            size_t n;
            float *near = load("near.npy", &n);
            float *all = malloc((n + 4) * 6 * sizeof(float));
            /* far boids first and last, so rows shift: compare by boid */
            memcpy(all + 6 * 2, near, n * 6 * sizeof(float));
            for (int f = 0; f < 4; f++) {
                size_t row = f < 2 ? (size_t)f : n + (size_t)f;
                memset(all + 6 * row, 0, 6 * sizeof(float));
                memcpy(all + 6 * row, far[f], 3 * sizeof(float));
                all[6 * row + 3] = f == 3 ? -1e30f : 0.5f;
            }
            write_rows("all.npy", all, n + 4);
            const char *opts = "--steps 6 --threads 2 --seed 3";
            unlink(path("near6.npy"));
            unlink(path("all6.npy"));
            int rc = run("step --model %s --neighbors %s %s --in near.npy --out near6.npy",
                         models[m], neighbors[k], opts);
            if (rc != 0)
                fail_msg("%s without far boids: exit %d: %s", models[m], rc, g_err);
            rc = run("step --model %s --neighbors %s %s --in all.npy --out all6.npy", models[m],
                     neighbors[k], opts);
            if (rc != 0)
                fail_msg("%s, %s, boids at 1e30: exit %d: %s", models[m], neighbors[k], rc, g_err);
            size_t n1, n2;
            float *a = load("near6.npy", &n1), *b = load("all6.npy", &n2);
            assert_int_equal(n2, n1 + 4);
            if (memcmp(a, b + 6 * 2, n1 * 6 * sizeof(float)) != 0) {
                size_t i = 0;
                while (memcmp(a + 6 * i, b + 6 * (i + 2), 6 * sizeof(float)) == 0)
                    i++;
                fail_msg("%s, %s: boid %zu differs when far boids are present "
                         "(%.9g %.9g %.9g vs %.9g %.9g %.9g)",
                         models[m], neighbors[k], i, (double)a[6 * i], (double)a[6 * i + 1],
                         (double)a[6 * i + 2], (double)b[6 * (i + 2)], (double)b[6 * (i + 2) + 1],
                         (double)b[6 * (i + 2) + 2]);
            }
            for (size_t i = 0; i < 6 * n2; i++)
                assert_true(isfinite(b[i]));
            free(a);
            free(b);
            free(near);
            free(all);
        }
    }
}

/* ---- outputs -------------------------------------------------------------------------- */

/* Every output goes through a temporary and a rename. A write that fails part way (the
 * file-size limit, with SIGXFSZ ignored so write(2) returns EFBIG), a target that is a
 * directory, and a directory that does not exist: exit 2, no temporary, and an existing
 * file at the target is left as it was. */
static void test_outputs_atomic(void **state)
{
    (void)state;
    static const char old[] = "the previous contents\n";
    /* 16 KiB: the header fits, the data does not (and libomp's start-up shared-memory file,
     * which it cannot do without, still does) */
    const char *fsize = "trap '' XFSZ; ulimit -f 16";
    assert_int_equal(run("init --count 3000 --out big.npy"), 0);
    mkdir(path("sub"), 0755);
    mkdir(path("adir"), 0755);

    /* state files: step and init */
    write_text("keep.npy", old);
    expect_fail_with(2, fsize, NULL, "step --in big.npy --out keep.npy", "keep.npy", NULL);
    size_t len;
    char *got = read_all(path("keep.npy"), &len);
    assert_non_null(got);
    assert_string_equal(got, old);
    free(got);
    expect_fail_with(2, fsize, "sub/new.npy", "init --count 3000 --out sub/new.npy", "new.npy",
                     NULL);
    expect_fail(2, NULL, "step --in ok.npy --out adir", "adir", NULL);
    expect_fail(2, "nodir/x.npy", "step --in ok.npy --out nodir/x.npy", "nodir", NULL);
    expect_fail(2, NULL, "init --count 10 --out sub/", "sub/", NULL);

    /* PNG */
    if (g_has_render) {
        write_text("keep.png", old);
        int rc = run_with(fsize, "render --in big.npy --out keep.png --size 640x480");
        if (rc != 2 || !strstr(g_err, "keep.png"))
            fail_msg("render under a file-size limit: exit %d, expected 2 naming keep.png (%s)", rc,
                     g_err);
        if (strchr(g_err, '\n') != g_err + strlen(g_err) - 1)
            fail_msg("a failed PNG write printed more than one line: %s", g_err);
        expect_no_temporaries("render under a file-size limit");
        got = read_all(path("keep.png"), &len);
        assert_non_null(got);
        assert_string_equal(got, old);
        free(got);
        expect_fail(2, NULL, "render --in ok.npy --out adir --size 64x64", "adir", NULL);
        expect_fail(2, "nodir/f.png", "render --in ok.npy --out nodir/f.png --size 64x64", "nodir",
                    NULL);
    } else {
        printf("  skipped PNG: this shoal has no render command\n");
    }

    /* trace JSON */
    if (g_has_trace) {
        write_text("keep.json", old);
        int rc = run_with(fsize, "step --in ok.npy --out t_out.npy --steps 200 --trace keep.json");
        if (rc != 2)
            fail_msg("trace under a file-size limit: exit %d, expected 2 (%s)", rc, g_err);
        got = read_all(path("keep.json"), &len);
        assert_non_null(got);
        assert_string_equal(got, old);
        free(got);
        expect_no_temporaries("step --trace under a file-size limit");
        rc = run("step --in ok.npy --out t_out2.npy --trace nodir/t.json");
        if (rc != 2)
            fail_msg("trace into a missing directory: exit %d, expected 2 (%s)", rc, g_err);
        if (exists("t_out2.npy")) /* outputs are checked before the work */
            fail_msg("step --trace into a missing directory wrote the state");
        expect_no_temporaries("step --trace into a missing directory");
    } else {
        printf("  skipped trace: this shoal's step has no --trace\n");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fuzz_regressions),
        cmocka_unit_test(test_huge_row_count),
        cmocka_unit_test(test_allocation_failure),
        cmocka_unit_test(test_zero_and_negative),
        cmocka_unit_test(test_unknown_names_in_scene),
        cmocka_unit_test(test_render_sizes),
        cmocka_unit_test(test_bad_meshes),
        cmocka_unit_test(test_step_overflow),
        cmocka_unit_test(test_far_boids),
        cmocka_unit_test(test_outputs_atomic),
    };
    return test_exit(cmocka_run_group_tests(tests, setup, teardown));
}
