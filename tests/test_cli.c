/* SPDX-License-Identifier: MIT */
/* The command-line contract of shoal init / shoal step, run as a user runs it (the shoal
 * executable, $SHOAL_EXE): options and --help, row correspondence, split runs through state
 * files, and every kind of bad input: exit code 2, one line on stderr, no output file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/cli_harness.h"

#include "shoal/shoal.h"
#include "support/json.h"
#include "tests/scenes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static float *load(const char *name, size_t *n)
{
    float *rows;
    shoal_error e;
    if (shoal_io_npy_read(path(name), &rows, n, &e))
        fail_msg("%s", e.message);
    return rows;
}

static int setup(void **state)
{
    (void)state;
    return cli_setup("cli");
}

static int teardown(void **state)
{
    (void)state;
    return cli_teardown();
}

static void test_help(void **state)
{
    (void)state;
    assert_int_equal(run("--help"), 0);
    assert_int_equal(run("step --help"), 0);
    FILE *f = fopen(path("stdout.txt"), "r");
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    const char *opts[] = {"--model",     "--in",  "--out",   "--steps", "--dt",   "--threads",
                          "--neighbors", "--set", "--scene", "--t0",    "--simd", "default: 1/60"};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        if (!strstr(buf, opts[i]))
            fail_msg("step --help lacks %s", opts[i]);
    assert_int_equal(run("init --help"), 0);
    assert_int_equal(run("frobnicate"), 2);
    assert_non_null(strstr(g_err, "frobnicate"));
    /* every command's --model names every model (app.h APP_MODEL_HELP), and a wrong one
     * is told all of them */
    const char *with_model[] = {"init",    "step",   "run",    "sweep",
                                "diverge", "verify", "params", "compare"};
    for (size_t c = 0; c < sizeof with_model / sizeof with_model[0]; c++) {
        assert_int_equal(run("%s --help", with_model[c]), 0);
        const char *line = strstr(g_out, "\n  --model"); /* its line of the options */
        assert_non_null(line);
        const char *eol = strchr(line + 1, '\n');
        for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
            const char *at = strstr(line, shoal_model_name((shoal_model)m));
            if (!at || (eol && at > eol))
                fail_msg("%s --help: --model does not name %s", with_model[c],
                         shoal_model_name((shoal_model)m));
        }
        /* the placeholders of the option tables are expanded (options.h) */
        assert_null(strstr(g_out, "{model"));
    }
    assert_int_equal(run("init --model frob --out x.npy"), 2);
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++)
        assert_non_null(strstr(g_err, shoal_model_name((shoal_model)m)));
}

static void test_init_and_step(void **state)
{
    (void)state;
    assert_int_equal(run("init --model steer --count 5000 --seed 3 --out a.npy"), 0);
    size_t n;
    float *a = load("a.npy", &n);
    assert_int_equal(n, 5000);
    /* same seed, same bytes */
    assert_int_equal(run("init --model steer --count 5000 --seed 3 --out a2.npy"), 0);
    float *a2 = load("a2.npy", &n);
    assert_memory_equal(a, a2, 5000 * 6 * sizeof(float));
    assert_int_equal(run("step --model steer --in a.npy --out b.npy --steps 10 --threads 2"), 0);
    float *b = load("b.npy", &n);
    assert_int_equal(n, 5000);
    assert_true(memcmp(a, b, n * 6 * sizeof(float)) != 0);
    /* brute force agrees */
    assert_int_equal(run("step --in a.npy --out c.npy --steps 1 --neighbors brute"), 0);
    assert_int_equal(run("step --in a.npy --out d.npy --steps 1 --threads 1 --simd scalar"), 0);
    float *c = load("c.npy", &n), *d = load("d.npy", &n);
    for (size_t i = 0; i < n * 6; i++)
        assert_float_equal(c[i], d[i], 1e-5);
    /* --stats names the stages */
    assert_int_equal(run("step --in a.npy --out e.npy --steps 2 --stats"), 0);
    assert_non_null(strstr(g_err, "grid_scan"));
    assert_non_null(strstr(g_err, "forces"));
    free(a);
    free(a2);
    free(b);
    free(c);
    free(d);
}

/* K steps in one run == the same K steps over three runs through state files (heading,
 * targets redrawn every 0.1 s so the cut crosses epochs, --t0 saying where each starts). */
static void test_split_runs(void **state)
{
    (void)state;
    const char *common = "--model heading --set target_period=0.1 --seed 4";
    assert_int_equal(run("init --model heading --count 3000 --seed 8 --out h0.npy"), 0);
    assert_int_equal(run("step %s --in h0.npy --out h30.npy --steps 30 --threads 2", common), 0);
    assert_int_equal(run("step %s --in h0.npy --out s1.npy --steps 7 --threads 1", common), 0);
    assert_int_equal(
        run("step %s --in s1.npy --out s2.npy --steps 11 --t0 0.11666666666666667", common), 0);
    assert_int_equal(
        run("step %s --in s2.npy --out s3.npy --steps 12 --t0 0.3 --threads 3", common), 0);
    size_t n;
    float *one = load("h30.npy", &n), *split = load("s3.npy", &n);
    assert_memory_equal(one, split, n * 6 * sizeof(float));
    free(one);
    free(split);
}

/* Row i out is boid i in, whatever the engine reorders: reversing the input rows reverses
 * the output rows (up to summation order inside cells, which follows row order). */
static void test_row_correspondence(void **state)
{
    (void)state;
    assert_int_equal(run("init --count 4000 --seed 2 --out r.npy"), 0);
    size_t n;
    float *r = load("r.npy", &n);
    float *rev = malloc(n * 6 * sizeof(float));
    for (size_t i = 0; i < n; i++)
        memcpy(rev + i * 6, r + (n - 1 - i) * 6, 6 * sizeof(float));
    shoal_error e;
    assert_int_equal(shoal_io_npy_write(path("rev.npy"), rev, n, &e), SHOAL_OK);
    assert_int_equal(run("step --in r.npy --out r1.npy --steps 5"), 0);
    assert_int_equal(run("step --in rev.npy --out rev1.npy --steps 5"), 0);
    float *a = load("r1.npy", &n), *b = load("rev1.npy", &n);
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 6; k++)
            assert_float_equal(a[i * 6 + (size_t)k], b[(n - 1 - i) * 6 + (size_t)k], 1e-4);
    free(r);
    free(rev);
    free(a);
    free(b);
}

static void write_bytes(const char *name, const void *data, size_t len)
{
    FILE *f = fopen(path(name), "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

/* A .npy header for dtype/shape, padded as NumPy pads it. */
static size_t npy_header(char *buf, const char *descr, const char *shape)
{
    char dict[256];
    int len = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                       descr, shape);
    size_t total = 10 + (size_t)len + 1;
    size_t pad = (64 - total % 64) % 64;
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    uint16_t hl = (uint16_t)((size_t)len + pad + 1);
    memcpy(buf + 8, &hl, 2);
    memcpy(buf + 10, dict, (size_t)len);
    memset(buf + 10 + len, ' ', pad);
    buf[10 + (size_t)len + pad] = '\n';
    return 10 + (size_t)len + pad + 1;
}

static void expect_bad(const char *args, const char *word)
{
    int rc = run("%s", args);
    if (rc != 2)
        fail_msg("'shoal %s' exited %d, expected 2 (stderr: %s)", args, rc, g_err);
    if (!strstr(g_err, word))
        fail_msg("'shoal %s': message '%s' lacks '%s'", args, g_err, word);
    /* one line */
    char *nl = strchr(g_err, '\n');
    if (!nl || nl[1] != 0)
        fail_msg("'shoal %s': message is not one line: %s", args, g_err);
    if (exists("out.npy"))
        fail_msg("'shoal %s' left out.npy behind", args);
}

static void test_bad_input(void **state)
{
    (void)state;
    assert_int_equal(run("init --count 100 --out ok.npy"), 0);
    char buf[1024];
    size_t h;
    /* float64 is accepted */
    double d64[2 * 6] = {0, 0, 0, 1, 0, 0, 0.5, 0, 0, 0, 1, 0};
    h = npy_header(buf, "<f8", "(2, 6)");
    memcpy(buf + h, d64, sizeof d64);
    write_bytes("f64.npy", buf, h + sizeof d64);
    assert_int_equal(run("step --in f64.npy --out f64out.npy"), 0);
    /* dtype, shape, truncation */
    h = npy_header(buf, "<i4", "(2, 6)");
    memset(buf + h, 0, 48);
    write_bytes("i4.npy", buf, h + 48);
    expect_bad("step --in i4.npy --out out.npy", "i4");
    h = npy_header(buf, "<f4", "(4, 3)");
    memset(buf + h, 0, 48);
    write_bytes("shape.npy", buf, h + 48);
    expect_bad("step --in shape.npy --out out.npy", "shape");
    h = npy_header(buf, "<f4", "(4, 6)");
    memset(buf + h, 0, 50);
    write_bytes("trunc.npy", buf, h + 50);
    expect_bad("step --in trunc.npy --out out.npy", "trunc.npy");
    write_bytes("junk.npy", "hello", 5);
    expect_bad("step --in junk.npy --out out.npy", "junk.npy");
    /* NaN in the state */
    float nanrows[12] = {0, 0, 0, 1, 0, 0, 0.5f, NAN, 0, 0, 1, 0};
    h = npy_header(buf, "<f4", "(2, 6)");
    memcpy(buf + h, nanrows, sizeof nanrows);
    write_bytes("nan.npy", buf, h + sizeof nanrows);
    expect_bad("step --in nan.npy --out out.npy", "row 1");
    /* options */
    expect_bad("step --in missing.npy --out out.npy", "missing.npy");
    expect_bad("step --out out.npy", "--in");
    expect_bad("step --in ok.npy", "--out");
    expect_bad("step --in ok.npy --out out.npy --model bogus", "bogus");
    expect_bad("step --in ok.npy --out out.npy --set nosuch=1", "nosuch");
    expect_bad("step --in ok.npy --out out.npy --set sep_radius=-2", "sep_radius");
    expect_bad("step --in ok.npy --out out.npy --set sep_radius", "name=value");
    expect_bad("step --in ok.npy --out out.npy --steps -1", "--steps");
    expect_bad("step --in ok.npy --out out.npy --dt 0", "--dt");
    expect_bad("step --in ok.npy --out out.npy --dt nan", "--dt");
    expect_bad("step --in ok.npy --out out.npy --threads -1", "--threads");
    expect_bad("step --in ok.npy --out out.npy --threads 1025", "--threads");
    expect_bad("step --in ok.npy --out out.npy --steps 3x", "--steps"); /* trailing junk */
    expect_bad("step --in ok.npy --out out.npy --threads 2.5", "--threads");
    assert_int_equal(run("step --in ok.npy --out out0.npy --threads 0"), 0); /* all cores */
    expect_bad("step --in ok.npy --out out.npy --neighbors kd", "kd");
    expect_bad("step --in ok.npy --out out.npy --simd sse9", "sse9");
    expect_bad("step --in ok.npy --out out.npy --frobnicate", "--frobnicate");
    expect_bad("step --in ok.npy --out out.npy --scene nowhere.ini", "nowhere.ini");
    expect_bad("init --count 0 --out out.npy", "--count");
    expect_bad("init --count 10", "--out");
    expect_bad("step --in ok.npy --out out.npy --model fov --scene " SHOAL_SOURCE_ROOT
               "/assets/scenes/steer.ini",
               "contradicts");
    /* an output into a directory that does not exist: an error, nothing written */
    assert_int_not_equal(run("step --in ok.npy --out nodir/out.npy"), 0);
    assert_non_null(strstr(g_err, "nodir"));
    /* scene files drive the model */
    assert_int_equal(
        run("init --scene " SHOAL_SOURCE_ROOT "/assets/scenes/classic.ini --out cl.npy"), 0);
    size_t n;
    float *cl = load("cl.npy", &n);
    assert_int_equal(n, 100);
    free(cl);
    assert_int_equal(run("step --scene " SHOAL_SOURCE_ROOT
                         "/assets/scenes/classic.ini --in cl.npy --out cl2.npy --steps 3"),
                     0);
}

/* --simd and SHOAL_SIMD: every ISA gives the same bytes; an ISA the CPU lacks is a clear
 * error (SHOAL_CPU_DISABLE plays a CPU without AVX2/AVX-512, or without NEON), and auto falls
 * back; another architecture's ISA is an error that says which architecture it needs. */
static void test_isa_selection(void **state)
{
    (void)state;
    assert_int_equal(run("init --count 3000 --seed 5 --out i.npy"), 0);
    assert_int_equal(run("step --in i.npy --out i_scalar.npy --steps 20 --simd scalar"), 0);
    assert_int_equal(run("step --in i.npy --out i_auto.npy --steps 20"), 0);
    size_t n;
    float *a = load("i_scalar.npy", &n), *b = load("i_auto.npy", &n);
    assert_memory_equal(a, b, n * 6 * sizeof(float));
    free(b);
    char disable[64] = "SHOAL_CPU_DISABLE=";
    for (int i = 1; i < TEST_ISA_COUNT; i++) {
        const char *name = shoal_isa_name(test_isas[i]);
        snprintf(disable + strlen(disable), sizeof disable - strlen(disable), "%s%s",
                 i > 1 ? "," : "", name);
        if (test_isa_skip(test_isas[i]))
            continue;
        assert_int_equal(run("step --in i.npy --out i_%s.npy --steps 20 --simd %s", name, name), 0);
        char file[64];
        snprintf(file, sizeof file, "i_%s.npy", name);
        b = load(file, &n);
        assert_memory_equal(a, b, n * 6 * sizeof(float));
        free(b);
        /* the same through the environment */
        char env[64];
        snprintf(env, sizeof env, "SHOAL_SIMD=%s", name);
        g_env = env;
        assert_int_equal(run("step --in i.npy --out i_env.npy --steps 20"), 0);
        g_env = "";
        b = load("i_env.npy", &n);
        assert_memory_equal(a, b, n * 6 * sizeof(float));
        free(b);
    }
    /* a CPU without the wide ISAs: asking is an error, auto runs scalar with the same bits */
    g_env = disable;
    for (int i = 1; i < TEST_ISA_COUNT; i++) {
        char cmd[96];
        snprintf(cmd, sizeof cmd, "step --in i.npy --out out.npy --simd %s",
                 shoal_isa_name(test_isas[i]));
        expect_bad(cmd, shoal_isa_name(test_isas[i]));
    }
    assert_int_equal(run("step --in i.npy --out i_old.npy --steps 20"), 0);
    b = load("i_old.npy", &n);
    assert_memory_equal(a, b, n * 6 * sizeof(float));
    free(b);
    /* another architecture's ISA: this build has no kernel for it, and says so */
    g_env = "";
#if defined(__aarch64__)
    expect_bad("step --in i.npy --out out.npy --simd avx2", "avx2 is for x86-64 CPUs");
    expect_bad("render --in i.npy --out out.png --simd avx512", "avx512 is for x86-64 CPUs");
#else
    expect_bad("step --in i.npy --out out.npy --simd neon", "neon is for ARM (aarch64) CPUs");
    expect_bad("render --in i.npy --out out.png --simd neon", "neon is for ARM (aarch64) CPUs");
#endif
    g_env = "SHOAL_SIMD=sse9";
    expect_bad("step --in i.npy --out out.npy", "SHOAL_SIMD");
    g_env = "";
    free(a);
}

/* Largest |p - c| of a state file's positions (c = centre). */
static double max_radius(const char *name, const double c[3], size_t *n_out)
{
    size_t n;
    float *r = load(name, &n);
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        double d[3] = {r[6 * i] - c[0], r[6 * i + 1] - c[1], r[6 * i + 2] - c[2]};
        double q = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        m = q > m ? q : m;
    }
    free(r);
    *n_out = n;
    return m;
}

/* --count keeps the scene's density (docs/CLI.md): walls and start region scaled by
 * cbrt(N / the scene's count), --set wins, --keep-geometry keeps the scene, the scene's own
 * count changes nothing; init and run report the values they gave. */
static void test_count_scaling(void **state)
{
    (void)state;
    const double o[3] = {0, 0, 0};
    size_t n;
    /* steer: the model's scene starts 16384 boids in a ball of radius 12 (3/8 of the 32^3
     * walls; the seed's unit ball is steer_seed.ini); 10^6 get a ball of radius
     * 12 cbrt(10^6/16384) */
    assert_int_equal(run("init --model steer --count 1000000 --seed 3 --out big.npy"), 0);
    double s = cbrt(1000000.0 / 16384.0), r = max_radius("big.npy", o, &n);
    assert_int_equal(n, 1000000);
    if (!(r <= 12 * s * 1.000001 && r > 0.99 * 12 * s))
        fail_msg("steer at 10^6: start radius %g, want about %g", r, 12 * s);
    assert_non_null(strstr(g_err, "scaled by 3.93725"));
    assert_non_null(strstr(g_err, "wall_size_x=125.99"));
    assert_non_null(strstr(g_err, "init_pos_radius=47.24"));
    /* --keep-geometry: the scene's ball of radius 12, whatever the count; nothing to report */
    assert_int_equal(run("init --model steer --count 1000000 --keep-geometry --out keep.npy"), 0);
    r = max_radius("keep.npy", o, &n);
    assert_true(r <= 12.0 && r > 11.9);
    assert_null(strstr(g_err, "scaled"));
    /* the seed's own start, by name: the unit ball */
    assert_int_equal(
        run("init --scene %s/assets/scenes/steer_seed.ini --count 1000 --keep-geometry "
            "--out seed.npy",
            SHOAL_SOURCE_ROOT),
        0);
    r = max_radius("seed.npy", o, &n);
    assert_true(r <= 1.0 && r > 0.9);
    /* --set wins over the scaling (the walls are still scaled) */
    assert_int_equal(
        run("init --model steer --count 1000000 --set init_pos_radius=2 --out set.npy"), 0);
    r = max_radius("set.npy", o, &n);
    assert_true(r <= 2.0 && r > 1.98);
    assert_non_null(strstr(g_err, "init_pos_radius=2\n"));
    assert_non_null(strstr(g_err, "wall_size_x=125.99"));
    /* the scene's own count: the same bytes as no --count, nothing reported */
    assert_int_equal(run("init --model steer --count 16384 --seed 3 --out own.npy"), 0);
    assert_int_equal(g_err[0], 0);
    assert_int_equal(run("init --model steer --seed 3 --out dflt.npy"), 0);
    size_t n1, n2;
    float *a = load("own.npy", &n1), *b = load("dflt.npy", &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(a, b, n1 * 6 * sizeof(float));
    free(a);
    free(b);
    /* a scene's count is the reference: steer_100k.ini (100000 fish, start radius 22) at
     * 800000 doubles its geometry */
    assert_int_equal(run("init --scene %s/assets/scenes/steer_100k.ini --count 800000 --out "
                         "k8.npy",
                         SHOAL_SOURCE_ROOT),
                     0);
    r = max_radius("k8.npy", o, &n);
    assert_true(r <= 44.0001 && r > 43.5);
    assert_non_null(strstr(g_err, "wall_size_x=116 "));
    /* steer_1m.ini (1000000 fish, start radius 50, walls 128^3) at 1000 fish: a tenth of
     * its geometry */
    assert_int_equal(run("init --scene %s/assets/scenes/steer_1m.ini --count 1000 --out m1.npy",
                         SHOAL_SOURCE_ROOT),
                     0);
    r = max_radius("m1.npy", o, &n);
    assert_int_equal(n, 1000);
    assert_true(r <= 5.0001 && r > 4.5);
    assert_non_null(strstr(g_err, "scaled by 0.1 "));
    assert_non_null(strstr(g_err, "init_pos_radius=5"));
    /* classic: the box scales about the origin (y in [0, 20] -> [0, 40] at 8x the count) */
    assert_int_equal(run("init --model classic --count 800 --out c.npy"), 0);
    float *c = load("c.npy", &n);
    assert_int_equal(n, 800);
    float hi[3] = {-1e9f, -1e9f, -1e9f}, lo[3] = {1e9f, 1e9f, 1e9f};
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            hi[k] = c[6 * i + k] > hi[k] ? c[6 * i + k] : hi[k];
            lo[k] = c[6 * i + k] < lo[k] ? c[6 * i + k] : lo[k];
        }
    free(c);
    assert_true(lo[0] >= -20 && lo[0] < -18 && hi[0] <= 20 && hi[0] > 18);
    assert_true(lo[1] >= 0 && lo[1] < 2 && hi[1] <= 40 && hi[1] > 38);
    /* fov: the ball of radius 20 at 8x the count has radius 40 (boundary_range2 1600) */
    assert_int_equal(run("init --model fov --count 32768 --out f.npy"), 0);
    r = max_radius("f.npy", o, &n);
    assert_true(r <= 40.0001 && r > 39);
    assert_non_null(strstr(g_err, "boundary_range2=1600 "));
    /* run --headless --model steer: the model's scene at 8x its count has walls of 64 (and
     * starts spread over a ball of 3/8 of them: 24); --keep-geometry keeps 32; --set wins */
    const char *headless =
        "run --headless --model steer --frames 1 --size 64x48 --out - --threads 2";
    assert_int_equal(run("%s --count 131072", headless), 0);
    assert_non_null(strstr(g_err, "shoal run: 131072 boids, the scene's 16384"));
    assert_non_null(strstr(g_err, "wall_size_x=64 "));
    assert_non_null(strstr(g_err, "init_pos_radius=24"));
    assert_int_equal(run("%s --count 131072 --keep-geometry", headless), 0);
    assert_null(strstr(g_err, "scaled"));
    assert_int_equal(run("%s --count 131072 --set wall_size=50,50,50", headless), 0);
    assert_non_null(strstr(g_err, "wall_size_x=50 "));
    assert_int_equal(run("%s --count 16384", headless), 0);
    assert_null(strstr(g_err, "scaled"));
    /* the default scene (school.ini: 4096 fish in a 64 x 32 x 64 tank, a start ball of 6)
     * at 8x its count: twice its geometry */
    assert_int_equal(run("run --headless --frames 1 --size 64x48 --out - --threads 2 --count "
                         "32768"),
                     0);
    assert_non_null(strstr(g_err, "shoal run: 32768 boids, the scene's 4096"));
    assert_non_null(strstr(g_err, "wall_size_x=128 wall_size_y=64 wall_size_z=128 "));
    assert_non_null(strstr(g_err, "init_pos_radius=12"));
    /* --help says which */
    assert_int_equal(run("init --help"), 0);
    FILE *f = fopen(path("stdout.txt"), "r");
    char buf[8192];
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    buf[len] = 0;
    fclose(f);
    assert_non_null(strstr(buf, "--keep-geometry"));
    assert_non_null(strstr(buf, "cbrt"));
    assert_int_equal(run("run --help"), 0);
    f = fopen(path("stdout.txt"), "r");
    len = fread(buf, 1, sizeof buf - 1, f);
    buf[len] = 0;
    fclose(f);
    assert_non_null(strstr(buf, "--keep-geometry"));
    unlink(path("big.npy"));
    unlink(path("keep.npy"));
    unlink(path("set.npy"));
    unlink(path("k8.npy"));
}

/* The table rows ("| `name` | ...") of the Markdown text s, from the line that starts with
 * `from` to the next "## " heading; appended to rows (at most max), returns how many. */
static int doc_rows(const char *s, const char *from, char rows[][256], int count, int max)
{
    const char *p = strstr(s, from);
    if (!p)
        return count;
    p = strchr(p + strlen(from), '\n');
    while (p && *++p && strncmp(p, "## ", 3) != 0) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (strncmp(p, "| `", 3) == 0 && count < max && len < 256) {
            memcpy(rows[count], p, len);
            rows[count++][len] = 0;
        }
        p = nl;
    }
    return count;
}

/* `shoal params` lists the library's own table (text, JSON, the Markdown rows), and
 * docs/MODELS.md carries the same rows: each model's section and the section of the
 * parameters every model has together hold exactly the rows of `shoal params --model NAME
 * --markdown`. A model missing from the document fails here. */
static void test_params_and_doc(void **state)
{
    (void)state;
    size_t len;
    char *doc = read_all(SHOAL_SOURCE_ROOT "/docs/MODELS.md", &len);
    assert_non_null(doc);
    static char shared[64][256], rows[128][256], want[128][256];
    int ns = doc_rows(doc, "\n## Parameters every model has", shared, 0, 64);
    assert_true(ns > 0);
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
        const char *name = shoal_model_name((shoal_model)m);
        char head[64];
        snprintf(head, sizeof head, "\n## %s:", name);
        if (!strstr(doc, head))
            fail_msg("docs/MODELS.md has no section '## %s:'", name);
        int nd = doc_rows(doc, head, rows, 0, 128);
        assert_int_equal(run("params --model %s --markdown", name), 0);
        int nw = doc_rows(g_out, "| name | meaning", want, 0, 128);
        size_t count;
        shoal_params_list((shoal_model)m, &count);
        assert_int_equal(nw, (int)count);
        if (nd + ns != nw)
            fail_msg("docs/MODELS.md: %s has %d rows and the shared table %d; shoal params "
                     "lists %d",
                     name, nd, ns, nw);
        for (int i = 0; i < nw; i++) {
            int found = 0;
            for (int k = 0; k < nd; k++)
                found += strcmp(rows[k], want[i]) == 0;
            for (int k = 0; k < ns; k++)
                found += strcmp(shared[k], want[i]) == 0;
            if (found != 1)
                fail_msg("docs/MODELS.md, %s: the row '%s' of shoal params is there %d times", name,
                         want[i], found);
        }
        /* plain text: the model, its origin and every parameter */
        assert_int_equal(run("params --model %s", name), 0);
        const shoal_model_info *mi = shoal_model_get_info((shoal_model)m);
        assert_non_null(strstr(g_out, mi->origin));
        for (size_t i = 0; i < mi->param_count; i++)
            assert_non_null(strstr(g_out, mi->params[i].name));
    }
    free(doc);
    /* JSON (strict RFC 8259): every model, every parameter, the numbers read back exactly */
    assert_int_equal(run("params --json > p.json"), 0);
    json_value v;
    assert_int_equal(json_load_file(path("p.json"), JSON_STRICT, &v, NULL, 0), JSON_OK);
    const json_value *models = json_get(&v, "models");
    assert_non_null(models);
    assert_int_equal(models->count, SHOAL_MODEL_COUNT);
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
        const shoal_model_info *mi = shoal_model_get_info((shoal_model)m);
        const json_value *jm = &models->items[m];
        assert_string_equal(json_get(jm, "name")->str, mi->name);
        const json_value *ps = json_get(jm, "parameters");
        assert_int_equal(ps->count, (int)mi->param_count);
        for (int i = 0; i < ps->count; i++) {
            const shoal_param_info *p = &mi->params[i];
            assert_string_equal(json_get(&ps->items[i], "name")->str, p->name);
            assert_string_equal(json_get(&ps->items[i], "unit")->str, p->unit);
            assert_true((float)json_get(&ps->items[i], "default")->num == p->default_value);
            assert_true((float)json_get(&ps->items[i], "min")->num == p->min);
            assert_true((float)json_get(&ps->items[i], "max")->num == p->max);
        }
    }
    json_free(&v);
    expect_bad("params --json --markdown", "one output format");
    expect_bad("params --names --json", "one output format");
    expect_bad("params --model frob", "frob");
    /* --names: the table's models, one a line, in enum order (what the scripts iterate) */
    assert_int_equal(run("params --names"), 0);
    char want_names[512] = "";
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
        strcat(want_names, shoal_model_name((shoal_model)m));
        strcat(want_names, "\n");
    }
    assert_string_equal(g_out, want_names);
    assert_int_equal(run("params --names --model %s", shoal_model_name(SHOAL_MODEL_COUNT - 1)), 0);
    assert_int_equal(strcmp(g_out, want_names + strlen(want_names) - strlen(g_out)), 0);
    /* no file of the repository points outside it (the models' contract lives in docs/) */
    assert_int_equal(sh("cd %s && ! grep -rlI --exclude-dir='build*' --exclude-dir=.git "
                        "-e '[.][.]/shared/' -e '/work/[s]hared' .",
                        SHOAL_SOURCE_ROOT),
                     0);
}

/* The world on the command line (docs/WORLD.md): --set and a scene's [world], its errors,
 * render's 2D check (nothing written), the step's refusal until it runs such worlds, and
 * shoal params' world table. */
static void test_world_options(void **state)
{
    (void)state;
    char buf[1024];
    float rows2d[12] = {1, 2, 0, 1, 0, 0, -3, 4, 0, 0, 1, 0};
    size_t h = npy_header(buf, "<f4", "(2, 6)");
    memcpy(buf + h, rows2d, sizeof rows2d);
    write_bytes("w2d.npy", buf, h + sizeof rows2d);
    rows2d[8] = 0.25f; /* z of row 1 */
    memcpy(buf + h, rows2d, sizeof rows2d);
    write_bytes("w2dz.npy", buf, h + sizeof rows2d);
    const char *w2 = "--set dims=2 --set periodic=1 --set world_size=20,10,0";
    assert_int_equal(run("render --in w2d.npy --out w2d.png --size 64x48 %s", w2), 0);
    assert_true(exists("w2d.png"));
    int rc = run("render --in w2dz.npy --out out.png --size 64x48 %s", w2);
    assert_int_equal(rc, 2);
    assert_non_null(strstr(g_err, "row 1 has z = 0.25 in a 2D world"));
    assert_false(exists("out.png"));
    expect_bad("render --in w2d.npy --out out.npy --set periodic=1", "periodic_x needs a size");
    expect_bad("render --in w2d.npy --out out.npy --set dims=4", "dims: 4 is out of range");
    expect_bad("init --count 10 --set periodic=1 --set world_size=1,1,1 --out out.npy",
               "smaller than twice the interaction radius");
    expect_bad("init --count 10 --set world_size=1,2 --out out.npy", "is not x,y,z");
    /* valid, but the step does not run periodic worlds yet: refused, nothing written */
    rc = run("init --count 10 --set periodic=1 --set world_size=40,40,40 --out out.npy");
    assert_true(rc != 0);
    assert_non_null(strstr(g_err, "not stepped yet"));
    assert_false(exists("out.npy"));
    /* a scene's [world] */
    const char *wini = "[world]\ndims = 2\nperiodic = 1\nsize = 20, 10, 0\n";
    write_bytes("w.ini", wini, strlen(wini));
    assert_int_equal(run("render --in w2d.npy --out ws.png --size 64x48 --scene w.ini"), 0);
    const char *wbad = "[world]\nperiodic = 1\n";
    write_bytes("wbad.ini", wbad, strlen(wbad));
    expect_bad("render --in w2d.npy --out out.npy --scene wbad.ini", "periodic_x needs a size");
    /* shoal params lists the world */
    assert_int_equal(run("params --world --markdown"), 0);
    assert_non_null(strstr(g_out, "| `periodic_x` |"));
    assert_int_equal(run("params --model steer"), 0);
    assert_non_null(strstr(g_out, "world_size_x"));
}

int main(int argc, char **argv)
{
    struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_params_and_doc),
        cmocka_unit_test(test_init_and_step),
        cmocka_unit_test(test_split_runs),
        cmocka_unit_test(test_row_correspondence),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_isa_selection),
        cmocka_unit_test(test_count_scaling),
        cmocka_unit_test(test_world_options),
    };
    static const char *const isa_tests[] = {"test_isa_selection", NULL}; /* tests/scenes.h */
    size_t n = test_isa_args(argc, argv, tests, sizeof tests / sizeof tests[0], isa_tests);
    return test_exit(_cmocka_run_group_tests("test_cli", tests, n, setup, teardown));
}
