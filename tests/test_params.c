/* SPDX-License-Identifier: MIT */
/* Parameters by name (every model's table, ranges, vectors, unknown names), and scene
 * files: every shipped scene loads, and malformed ones get a message naming the problem. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "shoal/shoal.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_every_param_settable(void **state)
{
    (void)state;
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
        size_t n;
        const shoal_param_info *list = shoal_params_list((shoal_model)m, &n);
        assert_true(n >= 5);
        shoal_params p;
        shoal_params_default((shoal_model)m, &p);
        assert_int_equal(shoal_params_validate((shoal_model)m, &p, NULL), SHOAL_OK);
        for (size_t i = 0; i < n; i++) {
            float *field = (float *)((char *)&p + list[i].offset);
            assert_float_equal(*field, list[i].default_value, 0);
            /* a value inside the range sticks */
            char buf[64];
            float v = list[i].is_integer ? list[i].min : (list[i].min + list[i].max) * 0.5f;
            if (list[i].min <= 1 && list[i].max >= 1)
                v = 1;
            snprintf(buf, sizeof buf, "%.9g", (double)v);
            shoal_error e;
            if (shoal_params_set((shoal_model)m, &p, list[i].name, buf, &e))
                fail_msg("%s: %s", list[i].name, e.message);
            assert_float_equal(*field, v, 0);
            /* outside the range: an error naming the parameter */
            snprintf(buf, sizeof buf, "%.9g", (double)list[i].max * 4 + 10);
            assert_int_equal(shoal_params_set((shoal_model)m, &p, list[i].name, buf, &e),
                             SHOAL_ERR_INPUT);
            assert_non_null(strstr(e.message, list[i].name));
            assert_int_equal(shoal_params_set((shoal_model)m, &p, list[i].name, "nan", &e),
                             SHOAL_ERR_INPUT);
            assert_int_equal(shoal_params_set((shoal_model)m, &p, list[i].name, "1x", &e),
                             SHOAL_ERR_INPUT);
            assert_int_equal(shoal_params_set((shoal_model)m, &p, list[i].name, "", &e),
                             SHOAL_ERR_INPUT);
        }
    }
}

static void test_param_errors(void **state)
{
    (void)state;
    shoal_params p;
    shoal_error e;
    shoal_params_default(SHOAL_MODEL_STEER, &p);
    assert_int_equal(shoal_params_set(SHOAL_MODEL_STEER, &p, "no_such", "1", &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "unknown parameter 'no_such'"));
    assert_non_null(strstr(e.message, "sep_radius")); /* lists the known ones */
    /* heading's parameter is not steer's */
    assert_int_equal(shoal_params_set(SHOAL_MODEL_STEER, &p, "move_speed", "1", &e),
                     SHOAL_ERR_INPUT);
    assert_int_equal(shoal_params_set(SHOAL_MODEL_STEER, &p, "sep_radius", "0", &e),
                     SHOAL_ERR_INPUT);
    assert_int_equal(shoal_params_set(SHOAL_MODEL_STEER, &p, "sep_radius", "-1", &e),
                     SHOAL_ERR_INPUT);
    /* vectors: x,y,z or per component; a bad vector changes nothing */
    assert_int_equal(shoal_params_set(SHOAL_MODEL_STEER, &p, "wall_size", "10,20,30", &e),
                     SHOAL_OK);
    assert_float_equal(p.wall_size[1], 20, 0);
    assert_int_equal(shoal_params_set(SHOAL_MODEL_STEER, &p, "wall_size_z", "7", &e), SHOAL_OK);
    assert_float_equal(p.wall_size[2], 7, 0);
    assert_int_equal(shoal_params_set(SHOAL_MODEL_STEER, &p, "wall_size", "1,2", &e),
                     SHOAL_ERR_INPUT);
    assert_int_equal(shoal_params_set(SHOAL_MODEL_STEER, &p, "wall_size", "1,2,-3", &e),
                     SHOAL_ERR_INPUT);
    assert_float_equal(p.wall_size[0], 10, 0);
    /* integer parameters */
    shoal_params_default(SHOAL_MODEL_HEADING, &p);
    assert_int_equal(shoal_params_set(SHOAL_MODEL_HEADING, &p, "target_count", "2.5", &e),
                     SHOAL_ERR_INPUT);
    assert_int_equal(shoal_params_set(SHOAL_MODEL_HEADING, &p, "target_count", "0", &e),
                     SHOAL_ERR_INPUT);
    /* cross-field rules */
    shoal_params_default(SHOAL_MODEL_CLASSIC, &p);
    p.box_min[0] = 20;
    assert_int_equal(shoal_params_validate(SHOAL_MODEL_CLASSIC, &p, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "box_min_x"));
    /* an empty box (min == max) on each axis, and min_speed above max_speed, are refused;
     * min_speed == max_speed is a valid constant speed */
    for (int c = 0; c < 3; c++) {
        shoal_params_default(SHOAL_MODEL_CLASSIC, &p);
        p.box_min[c] = p.box_max[c];
        assert_int_equal(shoal_params_validate(SHOAL_MODEL_CLASSIC, &p, &e), SHOAL_ERR_INPUT);
        assert_non_null(strstr(e.message, c == 0   ? "box_min_x"
                                          : c == 1 ? "box_min_y"
                                                   : "box_min_z"));
    }
    for (int m = 0; m < 2; m++) {
        shoal_model model = m ? SHOAL_MODEL_FOV : SHOAL_MODEL_CLASSIC;
        shoal_params_default(model, &p);
        p.min_speed = p.max_speed;
        assert_int_equal(shoal_params_validate(model, &p, &e), SHOAL_OK);
        p.min_speed = nextafterf(p.max_speed, INFINITY);
        assert_int_equal(shoal_params_validate(model, &p, &e), SHOAL_ERR_INPUT);
        assert_non_null(strstr(e.message, "min_speed"));
    }
    /* models */
    shoal_model m;
    assert_int_equal(shoal_model_parse("fov", &m, &e), SHOAL_OK);
    assert_int_equal(m, SHOAL_MODEL_FOV);
    assert_int_equal(shoal_model_parse("boids", &m, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "steer"));
    /* the desc rejects zero boids, zero dt */
    shoal_sim_desc d = shoal_sim_desc_default();
    shoal_sim *s;
    d.boid_count = 0;
    assert_int_equal(shoal_sim_create(&d, &s, &e), SHOAL_ERR_INPUT);
    d = shoal_sim_desc_default();
    d.dt_s = 0;
    assert_int_equal(shoal_sim_create(&d, &s, &e), SHOAL_ERR_INPUT);
    d = shoal_sim_desc_default();
    d.dt_s = -1;
    assert_int_equal(shoal_sim_create(&d, &s, &e), SHOAL_ERR_INPUT);
    /* t0 beyond 1e15 s would overflow heading's 64-bit target epoch */
    d = shoal_sim_desc_default();
    d.t0_s = 2e15;
    assert_int_equal(shoal_sim_create(&d, &s, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "t0"));
}

/* An unknown name is told every valid one, whole: no message is cut mid-list (the error
 * record holds 511 bytes); a vector is listed once by its NAME (--set NAME=x,y,z); a bad
 * name too long for the list to fit ends the list at a whole name with how many more. */
static void test_unknown_lists_every_name(void **state)
{
    (void)state;
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
        shoal_params p;
        shoal_error e;
        shoal_params_default((shoal_model)m, &p);
        assert_int_equal(shoal_params_set((shoal_model)m, &p, "no_such", "1", &e), SHOAL_ERR_INPUT);
        const char *k = strstr(e.message, "(known: ");
        assert_non_null(k);
        const char *end = strstr(e.message, "; shoal params --model ");
        assert_non_null(end);
        assert_true(strlen(e.message) < sizeof e.message - 1);
        assert_string_equal(e.message + strlen(e.message) - strlen(" explains them)"),
                            " explains them)");
        /* every listed word is a name (or a vector's NAME) and every name is listed */
        char listed[512];
        snprintf(listed, sizeof listed, " %.*s ", (int)(end - (k + 8)), k + 8);
        size_t n;
        const shoal_param_info *list = shoal_params_list((shoal_model)m, &n);
        for (size_t i = 0; i < n; i++) {
            char word[80];
            size_t len = strlen(list[i].name);
            int comp = len > 2 && list[i].name[len - 2] == '_' &&
                       strchr("xyz", list[i].name[len - 1]) != NULL;
            snprintf(word, sizeof word, " %.*s ", (int)(comp ? len - 2 : len), list[i].name);
            if (!strstr(listed, word))
                fail_msg("%s: '%s' missing from: %s", shoal_model_name((shoal_model)m),
                         list[i].name, e.message);
        }
        assert_null(strstr(listed, " more "));
        /* a 300-byte name: the message still ends whole */
        char longname[301];
        memset(longname, 'q', 300);
        longname[300] = 0;
        assert_int_equal(shoal_params_set((shoal_model)m, &p, longname, "1", &e), SHOAL_ERR_INPUT);
        assert_true(strlen(e.message) < sizeof e.message - 1);
        assert_string_equal(e.message + strlen(e.message) - 1, ")");
    }
}

static void test_shipped_scenes(void **state)
{
    (void)state;
    const char *dir = SHOAL_SOURCE_ROOT "/assets/scenes";
    DIR *d = opendir(dir);
    assert_non_null(d);
    int count = 0;
    struct dirent *ent;
    int seen_model[SHOAL_MODEL_COUNT] = {0};
    while ((ent = readdir(d))) {
        size_t len = strlen(ent->d_name);
        if (len < 5 || strcmp(ent->d_name + len - 4, ".ini") != 0)
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
        shoal_scene sc;
        shoal_error e;
        if (shoal_scene_load(path, &sc, &e))
            fail_msg("%s", e.message);
        assert_true(sc.has_model);
        assert_true(sc.has_count);
        seen_model[sc.desc.model] = 1;
        shoal_sim *s;
        sc.desc.boid_count = 64;
        if (shoal_sim_create(&sc.desc, &s, &e))
            fail_msg("%s: %s", path, e.message);
        shoal_sim_destroy(s);
        count++;
    }
    closedir(d);
    assert_true(count >= 9);
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++)
        assert_true(seen_model[m]);
}

static void test_scene_parse(void **state)
{
    (void)state;
    shoal_scene sc;
    shoal_error e;
    const char *ok = "[scene]\nmodel = heading\ncount = 100\nseed = 7\n[params]\n"
                     "move_speed = 2\nbounds_size = 10,20,30\n"
                     "[sphere]\ncenter = 1,2,3\nradius = 2\n[sphere]\nradius = 1\ncenter = 0,0,0\n"
                     "[camera]\neye = 0,0,10\nfov_deg = 45\n";
    assert_int_equal(shoal_scene_parse(ok, "t", &sc, &e), SHOAL_OK);
    assert_int_equal(sc.desc.model, SHOAL_MODEL_HEADING);
    assert_int_equal(sc.desc.boid_count, 100);
    assert_int_equal(sc.desc.seed, 7);
    assert_float_equal(sc.desc.params.move_speed, 2, 0);
    assert_float_equal(sc.desc.params.bounds_size[2], 30, 0);
    assert_float_equal(sc.desc.params.rotate_speed, 3, 0); /* heading default */
    assert_int_equal((int)sc.desc.params.sphere_count, 2);
    assert_float_equal(sc.desc.params.spheres[0].center[2], 3, 0);
    assert_float_equal(sc.desc.params.spheres[1].radius, 1, 0);
    assert_true(sc.has_eye && sc.has_fov && !sc.has_target);

    const struct {
        const char *text, *word;
    } bad[] = {
        {"[scene]\nmodel = bogus\n", "bogus"},
        {"[scene]\ncount = 0\n", "count"},
        {"[scene]\ncount = 1.5\n", "count"},
        {"[scene]\nseed = -1\n", "seed"},
        {"[scene]\ndt = 0\n", "dt"},
        {"[scene]\nwhat = 1\n", "what"},
        {"[params]\nsep_radius = -1\n", "sep_radius"},
        {"[params]\nnope = 1\n", "nope"},
        {"[params]\nwall_size = 1,2\n", "wall_size"},
        {"[sphere]\ncenter = 0,0,0\n", "radius"},
        {"[sphere]\nradius = 0\n", "radius"},
        {"[camera]\nfov_deg = 200\n", "fov_deg"},
        {"[nowhere]\na = 1\n", "unknown section"},
        {"[scene]\nthis line has no equals sign\n", "line 2"},
        {"[scene\nmodel = steer\n", "line 1"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        e.message[0] = 0;
        if (shoal_scene_parse(bad[i].text, "bad.ini", &sc, &e) != SHOAL_ERR_INPUT)
            fail_msg("case %zu accepted: %s", i, bad[i].text);
        if (!strstr(e.message, bad[i].word) || !strstr(e.message, "bad.ini"))
            fail_msg("case %zu: message '%s' lacks '%s'", i, e.message, bad[i].word);
    }
    /* a scene that cannot be opened is a file error, as every other input (issue 44, N22) */
    assert_int_equal(shoal_scene_load("/nonexistent/x.ini", &sc, &e), SHOAL_ERR_IO);
    assert_non_null(strstr(e.message, "/nonexistent/x.ini"));
}

/* Parameters by value and by name (shoal_params_find / _get / _set_value, the lookup every
 * front end uses): the same entries as the table, the same refusals in the same words as the
 * text path, all or nothing; and the formats table the program and the Python package read. */
static void test_params_by_value(void **state)
{
    (void)state;
    shoal_error e, et;
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
        size_t n, k;
        const shoal_param_info *list = shoal_params_list((shoal_model)m, &n);
        for (size_t i = 0; i < n; i++) {
            assert_ptr_equal(shoal_params_find((shoal_model)m, list[i].name, &k, &e), &list[i]);
            assert_int_equal(k, 1);
        }
    }
    shoal_params p, q;
    shoal_params_default(SHOAL_MODEL_STEER, &p);
    size_t k = 0;
    const shoal_param_info *wall = shoal_params_find(SHOAL_MODEL_STEER, "wall_size", &k, &e);
    assert_non_null(wall);
    assert_int_equal(k, 3);
    assert_string_equal(wall->name, "wall_size_x");
    double v3[3] = {40, 41, 42}, got[3];
    assert_int_equal(shoal_params_set_value(SHOAL_MODEL_STEER, &p, "wall_size", v3, 3, &e), 0);
    assert_int_equal(shoal_params_get(SHOAL_MODEL_STEER, &p, "wall_size", got, 3, &k, &e), 0);
    assert_true(k == 3 && got[0] == 40 && got[1] == 41 && got[2] == 42);
    assert_int_equal(shoal_params_get(SHOAL_MODEL_STEER, &p, "wall_size_y", got, 1, &k, &e), 0);
    assert_true(k == 1 && got[0] == 41);
    /* refusals: the text path's words, the params unchanged */
    q = p;
    double bad = -1;
    assert_int_equal(shoal_params_set_value(SHOAL_MODEL_STEER, &q, "max_speed", &bad, 1, &e),
                     SHOAL_ERR_INPUT);
    assert_int_equal(shoal_params_set(SHOAL_MODEL_STEER, &q, "max_speed", "-1", &et),
                     SHOAL_ERR_INPUT);
    assert_string_equal(e.message, et.message);
    double huge = 1e39, inf = INFINITY;
    assert_int_equal(shoal_params_set_value(SHOAL_MODEL_STEER, &q, "sep_weight", &huge, 1, &e),
                     SHOAL_ERR_INPUT);
    assert_int_equal(shoal_params_set(SHOAL_MODEL_STEER, &q, "sep_weight", "1e+39", &et),
                     SHOAL_ERR_INPUT);
    assert_string_equal(e.message, et.message);
    assert_int_equal(shoal_params_set_value(SHOAL_MODEL_STEER, &q, "sep_weight", &inf, 1, &e),
                     SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "'inf' is not a finite number"));
    double half = 1.5;
    assert_int_equal(shoal_params_set_value(SHOAL_MODEL_STEER, &q, "predator_count", &half, 1, &e),
                     SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "must be an integer"));
    assert_int_equal(shoal_params_set_value(SHOAL_MODEL_STEER, &q, "wall_size", v3, 1, &e),
                     SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "takes 3 values (x, y, z), not 1"));
    assert_int_equal(shoal_params_set_value(SHOAL_MODEL_STEER, &q, "sep_weight", v3, 3, &e),
                     SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "takes one value, not 3"));
    double vbad[3] = {40, -5, 42}; /* all or nothing */
    assert_int_equal(shoal_params_set_value(SHOAL_MODEL_STEER, &q, "wall_size", vbad, 3, &e),
                     SHOAL_ERR_INPUT);
    assert_memory_equal(&q, &p, sizeof p);
    assert_null(shoal_params_find(SHOAL_MODEL_STEER, "nope", &k, &e));
    assert_int_equal(shoal_params_set(SHOAL_MODEL_STEER, &q, "nope", "1", &et), SHOAL_ERR_INPUT);
    assert_string_equal(e.message, et.message);
    /* a vector's text is not cut: a long one is refused whole (the trial's N16) */
    char longv[400];
    snprintf(longv, sizeof longv, "25%*s,26,27", 300, "x");
    assert_int_equal(shoal_params_set(SHOAL_MODEL_STEER, &q, "wall_size", longv, &e),
                     SHOAL_ERR_INPUT);
    assert_memory_equal(&q, &p, sizeof p);
    /* the JSON form reads back through the manifest reader's set_value */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(shoal_params_write_json(f, SHOAL_MODEL_STEER, &p), 0);
    fclose(f);
    assert_non_null(strstr(buf, "\"wall_size_y\": 41"));
    free(buf);

    /* the formats table */
    assert_string_equal(shoal_io_format_at(0)->name, "npy");
    assert_false(shoal_io_format_find("vtk", 0)->readable);
    assert_string_equal(shoal_io_format_of_path("a.bin", 1)->name, "unity");
    assert_string_equal(shoal_io_format_of_path("a.vtp", 0)->name, "vtk");
    assert_string_equal(shoal_io_format_of_path("a.vtp", 1)->name, "npy"); /* vtk is write-only */
    assert_null(shoal_io_format_find("unity", 1));                         /* no trajectories */
    char names[128];
    shoal_io_format_names(names, sizeof names, 1, 0, "auto");
    assert_string_equal(names, "auto, npy or unity");
    float *rows;
    size_t count;
    assert_int_equal(shoal_io_state_read("x.npy", "vtk", &rows, &count, &e), SHOAL_ERR_INPUT);
    assert_string_equal(e.message, "format 'vtk' (expected auto, npy or unity)");
}

/* Every section refuses a key it does not know, naming it (one case per section); the same
 * section without that key is accepted, so the refusal is the key's. */
static void test_scene_unknown_keys(void **state)
{
    (void)state;
    static const struct {
        const char *section, *good;
    } sections[] = {
        {"[scene]", "count = 10\n"},
        {"[params]", "max_speed = 2\n"},
        {"[sphere]", "center = 1,2,3\nradius = 2\n"},
        {"[sphere rock]", "center = 1,2,3\nradius = 2\n"},
        {"[mesh rock]", "file = rock.obj\nposition = 1,2,3\n"},
        {"[predators]", "count = 2\nspeed = 3\n"},
        {"[camera]", "eye = 0,0,10\nfov_deg = 45\n"},
    };
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
        char text[512];
        shoal_scene sc;
        shoal_error e;
        snprintf(text, sizeof text, "%s\n%s", sections[i].section, sections[i].good);
        if (shoal_scene_parse(text, "k.ini", &sc, &e) != SHOAL_OK)
            fail_msg("%s: the valid keys are refused: %s", sections[i].section, e.message);
        for (int where = 0; where < 2; where++) {
            /* the unknown key first, or after the valid ones */
            if (where == 0)
                snprintf(text, sizeof text, "%s\nbogus_key = 1\n%s", sections[i].section,
                         sections[i].good);
            else
                snprintf(text, sizeof text, "%s\n%sbogus_key = 1\n", sections[i].section,
                         sections[i].good);
            e.message[0] = 0;
            if (shoal_scene_parse(text, "k.ini", &sc, &e) != SHOAL_ERR_INPUT)
                fail_msg("%s: unknown key accepted:\n%s", sections[i].section, text);
            if (!strstr(e.message, "bogus_key") || !strstr(e.message, "k.ini"))
                fail_msg("%s: message '%s' does not name the key and file", sections[i].section,
                         e.message);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_param_settable),
        cmocka_unit_test(test_param_errors),
        cmocka_unit_test(test_unknown_lists_every_name),
        cmocka_unit_test(test_shipped_scenes),
        cmocka_unit_test(test_scene_parse),
        cmocka_unit_test(test_scene_unknown_keys),
        cmocka_unit_test(test_params_by_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
