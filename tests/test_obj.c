/* SPDX-License-Identifier: MIT */
/* The OBJ loader (src/io/obj.c): the forms it accepts, every error it must report (naming the
 * line), and the shipped fish meshes: closed, outward, about the size the contract says;
 * the asset search (src/io/asset.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "shoal/io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static shoal_status parse(const char *text, shoal_mesh *m, shoal_error *e)
{
    memset(e, 0, sizeof *e);
    return shoal_mesh_parse(text, strlen(text), "t.obj", m, e);
}

static void test_forms(void **state)
{
    (void)state;
    shoal_mesh m;
    shoal_error e;
    const char *text = "# comment\n"
                       "o fish\n"
                       "v 0 0 0\n"
                       "v 1 0 0 1.0\n"
                       "v 1 1 0\n"
                       "v 0 1 0\n"
                       "vt 0 0\nvn 0 0 1\n"
                       "s off\n"
                       "f 1/1/1 2/2/1 3//1\r\n"
                       "f -4 -2 -1\n"
                       "f 1/1 2 3 4\n";
    assert_int_equal(parse(text, &m, &e), SHOAL_OK);
    assert_int_equal(m.vertex_count, 4);
    assert_int_equal(m.triangle_count, 1 + 1 + 2);
    /* negative indices are relative to the vertices read so far */
    assert_int_equal(m.indices[3], 0);
    assert_int_equal(m.indices[4], 2);
    assert_int_equal(m.indices[5], 3);
    /* a quad is fanned from its first vertex */
    assert_int_equal(m.indices[9], 0);
    assert_int_equal(m.indices[10], 2);
    assert_int_equal(m.indices[11], 3);
    assert_true(m.positions[3] == 1.0f);
    shoal_mesh_free(&m);
    assert_null(m.positions);
}

typedef struct bad_case {
    const char *text;
    const char *expect; /* substring of the message */
} bad_case;

static void test_errors(void **state)
{
    (void)state;
    static const bad_case cases[] = {
        {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n", "t.obj:4: face index 4 is out of range"},
        {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 -4\n", ":4: face index -4 is out of range"},
        {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n", ":4: face index 0 is invalid"},
        {"v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\n", ":4: degenerate face"},
        {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 2\n", ":4: degenerate face"},
        {"v 0 0 0\nv 1 0 0\nv 0 1 0\n", "t.obj: no faces"},
        {"", "no faces"},
        {"v 0 zero 0\n", ":1: vertex coordinate 'zero' is not a number"},
        {"v 0 nan 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n", ":1: vertex coordinate 'nan' is not finite"},
        {"v 0 inf 0\n", "is not finite"},
        {"v 0 1e39 0\n", "is not finite"},
        {"v 0 0\n", ":1: a vertex needs 3 coordinates"},
        {"v 0 0 0 1 2\n", "at most 4 coordinates"},
        {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2\n", ":4: a face needs at least 3 vertices"},
        {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 x\n", "face index 'x' is not an integer"},
        {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3/a\n", "is not of the form"},
        {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3/1/1/1\n", "too many '/'"},
        {"v 0 0 0\nbogus 1 2\n", ":2: unknown statement 'bogus'"},
        {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 99999999999999999999\n", "out of range"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        shoal_mesh m;
        shoal_error e;
        shoal_status st = parse(cases[i].text, &m, &e);
        if (st != SHOAL_ERR_INPUT || !strstr(e.message, cases[i].expect))
            fail_msg("case %zu: status %d message '%s', expected '%s'", i, (int)st, e.message,
                     cases[i].expect);
        assert_null(m.positions);
        assert_int_equal(m.triangle_count, 0);
    }
    /* a NUL byte inside the data */
    shoal_mesh m;
    shoal_error e;
    const char nul[] = "v 0 0 0\nv 1\0 0 0\n";
    assert_int_equal(shoal_mesh_parse(nul, sizeof nul - 1, "t.obj", &m, &e), SHOAL_ERR_INPUT);
    /* a file that is not there */
    assert_int_equal(shoal_mesh_load("/nonexistent/fish.obj", &m, &e), SHOAL_ERR_IO);
    assert_non_null(strstr(e.message, "/nonexistent/fish.obj"));
}

/* Random bytes and mutations of a valid file never crash and either load or fail cleanly. */
static void test_garbage(void **state)
{
    (void)state;
    const char *base = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\nf 1 3 4\nf -1 -2 -3\n";
    size_t n = strlen(base);
    char buf[256];
    uint64_t x = 12345;
    for (int it = 0; it < 20000; it++) {
        memcpy(buf, base, n);
        int edits = 1 + it % 4;
        for (int k = 0; k < edits; k++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            size_t pos = (size_t)(x >> 33) % n;
            static const char alphabet[] = "0123456789 -/#\nfv.eE+nai\t\r";
            buf[pos] = alphabet[(x >> 20) % (sizeof alphabet - 1)];
        }
        shoal_mesh m;
        shoal_error e;
        shoal_status st = shoal_mesh_parse(buf, n, "fuzz", &m, &e);
        if (st == SHOAL_OK) {
            for (size_t t = 0; t < 3 * m.triangle_count; t++)
                assert_true(m.indices[t] < m.vertex_count);
            shoal_mesh_free(&m);
        } else {
            assert_int_equal(st, SHOAL_ERR_INPUT);
            assert_non_null(strstr(e.message, "fuzz"));
        }
    }
}

/* Every directed edge appears once and its reverse once: closed and consistently oriented. */
static void check_closed_outward(const shoal_mesh *m, const char *name)
{
    size_t ne = 3 * m->triangle_count;
    uint64_t *edges = malloc(ne * sizeof *edges);
    assert_non_null(edges);
    for (size_t t = 0; t < m->triangle_count; t++)
        for (int k = 0; k < 3; k++) {
            uint64_t a = m->indices[3 * t + k], b = m->indices[3 * t + (k + 1) % 3];
            edges[3 * t + (size_t)k] = a << 32 | b;
        }
    for (size_t i = 0; i < ne; i++) {
        uint64_t a = edges[i] >> 32, b = edges[i] & 0xFFFFFFFFu;
        int same = 0, reverse = 0;
        for (size_t j = 0; j < ne; j++) {
            same += edges[j] == edges[i];
            reverse += edges[j] == (b << 32 | a);
        }
        if (same != 1 || reverse != 1)
            fail_msg("%s: edge %llu-%llu used %d times, reversed %d times", name,
                     (unsigned long long)a, (unsigned long long)b, same, reverse);
    }
    free(edges);
    double vol = 0.0, zmin = 1e9, zmax = -1e9;
    for (size_t t = 0; t < m->triangle_count; t++) {
        const float *a = m->positions + 3 * m->indices[3 * t];
        const float *b = m->positions + 3 * m->indices[3 * t + 1];
        const float *c = m->positions + 3 * m->indices[3 * t + 2];
        vol += (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) +
                a[2] * (b[0] * c[1] - b[1] * c[0])) /
               6.0;
    }
    for (size_t v = 0; v < m->vertex_count; v++) {
        zmin = fmin(zmin, m->positions[3 * v + 2]);
        zmax = fmax(zmax, m->positions[3 * v + 2]);
    }
    if (!(vol > 0.0))
        fail_msg("%s: signed volume %g is not positive (faces point inwards)", name, vol);
    assert_true(fabs(zmin + 0.5) < 1e-6 && fabs(zmax - 0.5) < 1e-6);
}

static void test_fish_assets(void **state)
{
    (void)state;
    shoal_mesh m;
    shoal_error e;
    assert_int_equal(shoal_mesh_load(SHOAL_SOURCE_ROOT "/assets/fish.obj", &m, &e), SHOAL_OK);
    assert_true(m.vertex_count >= 40 && m.vertex_count <= 64);
    assert_true(m.triangle_count >= 80 && m.triangle_count <= 112);
    check_closed_outward(&m, "fish.obj");
    shoal_mesh_free(&m);
    assert_int_equal(shoal_mesh_load(SHOAL_SOURCE_ROOT "/assets/fish_lod1.obj", &m, &e), SHOAL_OK);
    assert_true(m.triangle_count >= 12 && m.triangle_count <= 24);
    check_closed_outward(&m, "fish_lod1.obj");
    shoal_mesh_free(&m);
    assert_int_equal(shoal_mesh_load(SHOAL_SOURCE_ROOT "/assets/fish_lod2.obj", &m, &e), SHOAL_OK);
    assert_true(m.triangle_count <= 12); /* a handful */
    check_closed_outward(&m, "fish_lod2.obj");
    shoal_mesh_free(&m);
}

/* Assets are found where $SHOAL_ASSETS says first; a name found nowhere is 0 (out = name)
 * and a load of it SHOAL_ERR_IO naming it. */
static void test_asset_search(void **state)
{
    (void)state;
    char dir[] = "/tmp/shoal-test-assets-XXXXXX", out[4096], cmd[8192];
    assert_non_null(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "cp %s/assets/fish_lod1.obj %s/fish.obj", SHOAL_SOURCE_ROOT, dir);
    assert_int_equal(system(cmd), 0);
    const char *old = getenv("SHOAL_ASSETS");
    char *keep = old ? strdup(old) : NULL;
    setenv("SHOAL_ASSETS", dir, 1);
    assert_int_equal(shoal_io_asset_path("fish.obj", out, sizeof out), 1);
    snprintf(cmd, sizeof cmd, "%s/fish.obj", dir);
    assert_string_equal(out, cmd);
    shoal_mesh m;
    shoal_error e;
    assert_int_equal(shoal_mesh_load_asset("fish.obj", &m, &e), SHOAL_OK);
    assert_int_equal(m.triangle_count, 20); /* the copy in $SHOAL_ASSETS, not assets/fish.obj */
    shoal_mesh_free(&m);
    assert_int_equal(shoal_io_asset_path("no_such_asset.obj", out, sizeof out), 0);
    assert_string_equal(out, "no_such_asset.obj");
    assert_int_equal(shoal_mesh_load_asset("no_such_asset.obj", &m, &e), SHOAL_ERR_IO);
    assert_non_null(strstr(e.message, "no_such_asset.obj: not found"));
    assert_int_equal(m.vertex_count, 0);
    if (keep)
        setenv("SHOAL_ASSETS", keep, 1);
    else
        unsetenv("SHOAL_ASSETS");
    free(keep);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    /* without $SHOAL_ASSETS the source tree's (or the installed) fish is found */
    assert_int_equal(shoal_mesh_load_asset("fish.obj", &m, &e), SHOAL_OK);
    assert_true(m.triangle_count >= 80);
    shoal_mesh_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forms),        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_garbage),      cmocka_unit_test(test_fish_assets),
        cmocka_unit_test(test_asset_search),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
