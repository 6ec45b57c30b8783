/* SPDX-License-Identifier: MIT */
/* shoal compare on hand-made pairs (identical, shifted by a known amount, permuted), the
 * JSON it writes, and Unity's raw boid buffers (24-byte records, velocity then position):
 * round trip, layout, bad sizes, and shoal step / compare reading them by extension. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "shoal/shoal.h"
#include "tests/cli_harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char g_json[16384];

static void save(const char *name, const float *rows, size_t n)
{
    shoal_error e;
    if (shoal_io_npy_write(path(name), rows, n, &e))
        fail_msg("%s", e.message);
}

/* Load the JSON written by the last compare. */
static void load_json(const char *name)
{
    FILE *f = fopen(path(name), "r");
    assert_non_null(f);
    size_t n = fread(g_json, 1, sizeof g_json - 1, f);
    g_json[n] = 0;
    fclose(f);
}

/* The number after "key": inside the object "section" (NULL: top level). A tiny reader:
 * finds the section's key, then the key after it. NaN when absent or null. */
static double jget(const char *section, const char *key)
{
    const char *p = g_json;
    char k[128];
    if (section) {
        snprintf(k, sizeof k, "\"%s\":", section);
        p = strstr(p, k);
        if (!p)
            return NAN;
    }
    snprintf(k, sizeof k, "\"%s\":", key);
    p = strstr(p, k);
    if (!p)
        return NAN;
    p += strlen(k);
    while (*p == ' ' || *p == '[')
        p++;
    if (strncmp(p, "null", 4) == 0)
        return NAN;
    return strtod(p, NULL);
}

/* N boids on a small lattice with exactly representable coordinates and headings that
 * vary, so every statistic is non-trivial. */
static float *lattice(size_t n)
{
    float *r = malloc(n * 6 * sizeof(float));
    for (size_t i = 0; i < n; i++) {
        float *x = r + i * 6;
        x[0] = (float)(i % 10) * 0.5f;
        x[1] = (float)((i / 10) % 10) * 0.5f;
        x[2] = (float)(i / 100) * 0.5f;
        x[3] = 1.0f + (float)(i % 3) * 0.25f;
        x[4] = (float)(i % 5) * 0.25f - 0.5f;
        x[5] = (float)(i % 7) * 0.125f;
    }
    return r;
}

static int setup(void **state)
{
    (void)state;
    return cli_setup("compare");
}

static int teardown(void **state)
{
    (void)state;
    return cli_teardown();
}

static void test_identical(void **state)
{
    (void)state;
    const size_t n = 500;
    float *a = lattice(n);
    save("a.npy", a, n);
    save("a2.npy", a, n);
    assert_int_equal(run("compare a.npy a2.npy --json c.json"), 0);
    load_json("c.json");
    assert_true(jget(NULL, "count") == 500);
    assert_true(jget(NULL, "identical") == 500);
    assert_true(jget(NULL, "identical_fraction") == 1);
    assert_true(jget("position", "max_abs") == 0);
    assert_true(jget("position", "rms_abs") == 0);
    assert_true(jget("velocity", "max_abs") == 0);
    assert_true(jget("velocity", "rms_rel") == 0);
    assert_true(jget("stats_diff", "polarisation") == 0);
    assert_true(jget("stats_diff", "mean_nn_distance") == 0);
    /* lattice spacing 0.5: the nearest neighbour is 0.5 away for every boid */
    assert_true(fabs(jget("stats_a", "mean_nn_distance") - 0.5) < 1e-12);
    free(a);
}

static void test_shifted(void **state)
{
    (void)state;
    const size_t n = 500;
    float *a = lattice(n), *b = lattice(n);
    /* half of the boids moved by exactly 0.5 in x; every velocity by 0.25 in y */
    for (size_t i = 0; i < n; i++) {
        if (i % 2 == 0)
            b[i * 6 + 0] += 0.5f;
        b[i * 6 + 4] += 0.25f;
    }
    save("a.npy", a, n);
    save("b.npy", b, n);
    assert_int_equal(run("compare a.npy b.npy --json c.json"), 0);
    load_json("c.json");
    assert_true(jget(NULL, "identical") == 0);
    assert_true(jget("position", "max_abs") == 0.5);
    assert_true(fabs(jget("position", "rms_abs") - sqrt(0.5 * 0.25)) < 1e-9);
    assert_true(jget("velocity", "max_abs") == 0.25);
    assert_true(fabs(jget("velocity", "rms_abs") - 0.25) < 1e-9);
    /* centroid moves by 0.25 in x: the statistics see it */
    assert_true(fabs(jget("stats_diff", "centroid") - 0.25) < 1e-6);
    /* the same boids, the velocity unchanged: only the position shifted */
    for (size_t i = 0; i < n; i++)
        b[i * 6 + 4] = a[i * 6 + 4];
    save("b.npy", b, n);
    assert_int_equal(run("compare a.npy b.npy --json c.json"), 0);
    load_json("c.json");
    assert_true(jget(NULL, "identical") == 250);
    assert_true(jget("velocity", "max_abs") == 0);
    free(a);
    free(b);
}

static void test_permuted(void **state)
{
    (void)state;
    const size_t n = 500;
    float *a = lattice(n), *b = malloc(n * 6 * sizeof(float));
    for (size_t i = 0; i < n; i++) /* reversed rows: the same flock, other boid names */
        memcpy(b + i * 6, a + (n - 1 - i) * 6, 6 * sizeof(float));
    save("a.npy", a, n);
    save("b.npy", b, n);
    assert_int_equal(run("compare a.npy b.npy --json c.json --radius 1"), 0);
    load_json("c.json");
    assert_true(jget(NULL, "identical") < 10);
    assert_true(jget("position", "max_abs") > 4);
    assert_true(jget(NULL, "radius") == 1);
    const char *keys[] = {"polarisation",       "milling", "mean_nn_distance", "mean_neighbors",
                          "radius_of_gyration", "extent"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        double d = jget("stats_diff", keys[k]);
        if (!(fabs(d) < 1e-9))
            fail_msg("statistic %s differs by %g between permutations", keys[k], d);
    }
    assert_true(jget("stats_a", "mean_neighbors") > 1);
    free(a);
    free(b);
}

static void test_json_keys(void **state)
{
    (void)state;
    float *a = lattice(100);
    save("a.npy", a, 100);
    assert_int_equal(run("compare a.npy a.npy --json c.json"), 0);
    load_json("c.json");
    const char *keys[] = {"\"a\":",
                          "\"b\":",
                          "\"count\":",
                          "\"identical\":",
                          "\"position\":",
                          "\"velocity\":",
                          "\"max_abs\":",
                          "\"rms_abs\":",
                          "\"max_rel\":",
                          "\"rms_rel\":",
                          "\"stats_a\":",
                          "\"stats_b\":",
                          "\"stats_diff\":",
                          "\"polarisation\":",
                          "\"milling\":",
                          "\"mean_nn_distance\":",
                          "\"mean_neighbors\":",
                          "\"centroid\":",
                          "\"extent\":"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        if (!strstr(g_json, keys[k]))
            fail_msg("JSON lacks %s", keys[k]);
    /* balanced braces and brackets, starts and ends as an object */
    int depth = 0;
    for (const char *p = g_json; *p; p++) {
        depth += (*p == '{' || *p == '[') - (*p == '}' || *p == ']');
        assert_true(depth >= 0);
    }
    assert_int_equal(depth, 0);
    assert_int_equal(g_json[0], '{');
    /* different counts: a clear error */
    save("b.npy", a, 50);
    assert_int_equal(run("compare a.npy b.npy"), 2);
    assert_non_null(strstr(g_err, "100"));
    assert_int_equal(run("compare a.npy"), 2);
    free(a);
}

static void test_unity_roundtrip(void **state)
{
    (void)state;
    const size_t n = 300;
    float *a = lattice(n);
    a[7] = NAN; /* written bit for bit, NaN included */
    shoal_error e;
    assert_int_equal(shoal_io_unity_write(path("u.bin"), a, n, &e), SHOAL_OK);
    /* layout: 24 bytes a boid, velocity xyz then position xyz, little-endian float32 */
    FILE *f = fopen(path("u.bin"), "rb");
    assert_non_null(f);
    unsigned char raw[48];
    assert_int_equal(fread(raw, 1, 48, f), 48);
    fseek(f, 0, SEEK_END);
    assert_int_equal(ftell(f), (long)(n * 24));
    fclose(f);
    for (int c = 0; c < 6; c++) {
        const unsigned char *b = raw + 24 + 4 * c; /* boid 1 */
        uint32_t u =
            (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
        float v;
        memcpy(&v, &u, 4);
        float want = a[6 + (c < 3 ? 3 + c : c - 3)];
        assert_memory_equal(&v, &want, 4);
    }
    float *back;
    size_t m;
    assert_int_equal(shoal_io_unity_read(path("u.bin"), &back, &m, &e), SHOAL_OK);
    assert_int_equal(m, n);
    assert_memory_equal(back, a, n * 6 * sizeof(float));
    free(back);
    /* not a multiple of 24 bytes: input error naming the file */
    f = fopen(path("bad.bin"), "wb");
    fwrite(raw, 1, 25, f);
    fclose(f);
    assert_int_equal(shoal_io_unity_read(path("bad.bin"), &back, &m, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "bad.bin"));
    assert_null(back);
    assert_int_equal(shoal_io_unity_parse(raw, 0, "empty", &back, &m, &e), SHOAL_ERR_INPUT);
    assert_int_equal(run("compare bad.bin u.bin"), 2);
    assert_non_null(strstr(g_err, "bad.bin"));
    free(a);
}

/* The states that once never finished or overflowed (issue 14): 1,000 boids at one point,
 * --radius 1e6 and 1e30, a school 5e-7 long; compare prints every statistic of the library
 * (shoal/stats.h) and diverge writes them. A case that hangs hits meson's timeout. */
static void test_degenerate_stats(void **state)
{
    (void)state;
    const size_t n = 1000;
    float *a = lattice(n);
    for (size_t i = 0; i < n; i++)
        a[i * 6 + 0] = a[i * 6 + 1] = a[i * 6 + 2] = 2.5f;
    save("p.npy", a, n);
    assert_int_equal(run("compare p.npy p.npy --json c.json"), 0);
    load_json("c.json");
    assert_true(jget("stats_a", "mean_neighbors") == 999);
    assert_true(jget("stats_a", "mean_nn_distance") == 0);
    assert_true(jget("stats_a", "group_count") == 1);
    assert_true(jget("stats_a", "largest_group_fraction") == 1);
    free(a);
    a = lattice(n);
    save("a.npy", a, n);
    const char *radii[] = {"1e6", "1e30"};
    for (int k = 0; k < 2; k++) {
        assert_int_equal(run("compare a.npy a.npy --json c.json --radius %s --threads 2", radii[k]),
                         0);
        load_json("c.json");
        assert_true(jget("stats_a", "mean_neighbors") == 999);
        assert_true(jget("stats_a", "group_count") == 1);
    }
    /* lattice spacing 0.5, radius 0.5: 10 x 10 x 10, so sum of axis neighbours 3 * 2 * 900 */
    assert_int_equal(run("compare a.npy a.npy --json c.json --radius 0.5"), 0);
    load_json("c.json");
    assert_true(jget("stats_a", "mean_neighbors") == 5.4);
    assert_true(jget("stats_a", "group_count") == 1);
    /* speeds 1 + (i % 3) / 4 and the rest: the mean is checked by the library's test */
    assert_true(jget("stats_a", "mean_speed") > 1);
    assert_int_equal(run("compare a.npy a.npy --json c.json --radius 0.49"), 0);
    load_json("c.json");
    assert_true(jget("stats_a", "mean_neighbors") == 0);
    assert_true(jget("stats_a", "group_count") == 1000);
    assert_true(jget("stats_a", "largest_group_fraction") == 0.001);
    /* every statistic is a line of the text */
    assert_int_equal(run("compare a.npy a.npy --radius 0.5"), 0);
    FILE *f = fopen(path("stdout.txt"), "r");
    assert_non_null(f);
    static char text[8192];
    text[fread(text, 1, sizeof text - 1, f)] = 0;
    fclose(f);
    const char *lines[] = {"\nmean neighbors       ", "\nradius of gyration   ",
                           "\nmean speed           ", "\ngroups               ",
                           "\nlargest group        ", "\n(mean neighbors within radius 0.5)\n"};
    for (size_t k = 0; k < sizeof lines / sizeof lines[0]; k++)
        if (!strstr(text, lines[k]))
            fail_msg("compare output lacks '%s':\n%s", lines[k] + 1, text);
    /* 1,000 boids spread over 5e-7 along x */
    for (size_t i = 0; i < n; i++) {
        a[i * 6 + 0] = (float)i * 5e-10f;
        a[i * 6 + 1] = a[i * 6 + 2] = 0;
    }
    save("l.npy", a, n);
    assert_int_equal(run("compare l.npy l.npy --json c.json"), 0);
    load_json("c.json");
    assert_true(jget("stats_a", "mean_neighbors") == 999);
    assert_int_equal(run("compare l.npy l.npy --json c.json --radius 0"), 0);
    load_json("c.json");
    assert_true(jget("stats_a", "mean_neighbors") >= 0);
    /* --threads is checked like everywhere */
    assert_int_equal(run("compare l.npy l.npy --threads -1"), 2);
    /* diverge with radii of 1e6: finishes, writes the new columns */
    assert_int_equal(run("diverge --in a.npy --a cpu --b cpu --steps 2 --stats-every 1 --set "
                         "sep_radius=1e6 --set ali_radius=1e6 --set coh_radius=1e6 --csv d.csv"),
                     0);
    f = fopen(path("d.csv"), "r");
    assert_non_null(f);
    text[fread(text, 1, sizeof text - 1, f)] = 0;
    fclose(f);
    assert_non_null(strstr(text, ",centroid_dist,a_speed,b_speed,a_groups,b_groups,"
                                 "a_largest_group,b_largest_group\n"));
    assert_non_null(strstr(text, "\n0,0,1000,0,0,0,0,0,0,"));
    assert_non_null(strstr(text, ",999,999,")); /* a_neighbors, b_neighbors */
    free(a);
}

/* tools/diverge_plot.py draws a diverge CSV: a PNG of the right kind, no temporary left.
 * Skipped where python3 has no matplotlib (tools/deps.sh test installs it). */
static void test_diverge_plot(void **state)
{
    (void)state;
    if (system("/usr/bin/python3 -c 'import matplotlib, numpy' > /dev/null 2>&1") != 0) {
        printf("SKIP: python3 with matplotlib and numpy not installed (tools/deps.sh test)\n");
        skip();
    }
    assert_int_equal(run("init --count 500 --seed 3 --out p.npy"), 0);
    assert_int_equal(run("diverge --in p.npy --a cpu --b cpu --steps 20 --every 2 --stats-every "
                         "5 --csv d.csv"),
                     0);
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cd %s && /usr/bin/python3 %s/tools/diverge_plot.py d.png d.csv --title t "
             "> plot.txt 2>&1",
             g_dir, SHOAL_SOURCE_ROOT);
    if (system(cmd) != 0) {
        char *msg = NULL;
        FILE *f = fopen(path("plot.txt"), "r");
        static char buf[2048];
        if (f) {
            size_t n = fread(buf, 1, sizeof buf - 1, f);
            buf[n] = 0;
            fclose(f);
            msg = buf;
        }
        fail_msg("diverge_plot.py failed: %s", msg ? msg : "");
    }
    FILE *f = fopen(path("d.png"), "rb");
    assert_non_null(f);
    unsigned char sig[8];
    assert_int_equal(fread(sig, 1, 8, f), 8);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    static const unsigned char png_sig[8] = {0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a};
    assert_memory_equal(sig, png_sig, 8);
    assert_true(size > 10000);
    printf("# diverge_plot.py wrote a %ld-byte PNG\n", size);
    char ls[600];
    snprintf(ls, sizeof ls, "ls %s | grep -q '\\.tmp\\.'", g_dir);
    assert_int_not_equal(system(ls), 0); /* no temporary left behind */
}

static void test_unity_cli(void **state)
{
    (void)state;
    /* the same run through .npy and through Unity buffers gives the same boids */
    assert_int_equal(run("init --model steer --count 2000 --seed 5 --out s.npy"), 0);
    assert_int_equal(run("step --in s.npy --out s5.npy --steps 5"), 0);
    assert_int_equal(run("step --in s.npy --out s.bin --steps 0"), 0);
    assert_int_equal(run("step --in s.bin --out s5.bin --steps 5"), 0);
    assert_int_equal(run("compare s5.npy s5.bin --json c.json"), 0);
    load_json("c.json");
    assert_true(jget(NULL, "identical") == 2000);
    /* init writes a Unity buffer for a .bin name too */
    assert_int_equal(run("init --model steer --count 2000 --seed 5 --out i.bin"), 0);
    assert_int_equal(run("compare s.bin i.bin --json c2.json"), 0);
    load_json("c2.json");
    assert_true(jget(NULL, "identical") == 2000);
    /* --format forces the reading of a file whatever its name */
    assert_int_equal(run("step --in s.npy --out raw.dat --steps 0"), 0);
    assert_int_equal(run("compare --format npy s.npy raw.dat"), 0);
    assert_int_equal(run("compare --format unity s.bin s.npy"), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identical),       cmocka_unit_test(test_shifted),
        cmocka_unit_test(test_permuted),        cmocka_unit_test(test_json_keys),
        cmocka_unit_test(test_unity_roundtrip), cmocka_unit_test(test_unity_cli),
        cmocka_unit_test(test_diverge_plot),    cmocka_unit_test(test_degenerate_stats),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
