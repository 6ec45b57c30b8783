/* SPDX-License-Identifier: MIT */
/* Hostile input that used to get a wrong answer instead of a refusal (issue 14, "Bad input
 * that gets the wrong answer"), each through the parser and, where the command line is the
 * contract, through the shoal executable ($SHOAL_EXE):
 * NaN in the states compare and diverge read (.npy and .bin); --model against a scene's
 * model in every command that takes both; scene files whose long comment lines, indented
 * lines, long lines, long section names, empty [sphere] sections or long directory paths
 * were read as something else; bench --compare times that are not > 0; /dev/zero and FIFOs
 * read as states; control characters in the file names that messages quote. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/cli_harness.h"

#include "shoal/shoal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/* Exit 2 and one line on stderr holding every word of the NULL-terminated list. */
static void expect_refused(const char *args, ...)
{
    int rc = run("%s", args);
    if (rc != 2)
        fail_msg("'shoal %s' exited %d, expected 2 (stderr: %s)", args, rc, g_err);
    char *nl = strchr(g_err, '\n');
    if (!nl || nl[1] != 0)
        fail_msg("'shoal %s': message is not one line: %s", args, g_err);
    va_list ap;
    va_start(ap, args);
    for (const char *w; (w = va_arg(ap, const char *));)
        if (!strstr(g_err, w))
            fail_msg("'shoal %s': message '%s' lacks '%s'", args, g_err, w);
    va_end(ap);
}

static int setup(void **state)
{
    (void)state;
    if (cli_setup("inputs"))
        return -1;
    if (run("init --count 40 --seed 3 --out ok.npy") != 0 ||
        run("init --count 40 --seed 3 --out ok.bin") != 0)
        return -1;
    write_text("steer.ini", "[scene]\nmodel = steer\n");
    write_text("nomodel.ini", "[params]\nsep_radius = 1\n");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return cli_teardown();
}

/* ---- NaN in compared states ------------------------------------------------------------ */

static void test_compare_refuses_nonfinite(void **state)
{
    (void)state;
    float rows[2 * 6] = {0, 0, 0, 1, 0, 0, 1, 1, 1, 0, 1, 0};
    rows[7] = NAN; /* row 1 py */
    shoal_error e;
    assert_int_equal(shoal_io_npy_write(path("nan.npy"), rows, 2, &e), SHOAL_OK);
    assert_int_equal(shoal_io_unity_write(path("nan.bin"), rows, 2, &e), SHOAL_OK);
    rows[7] = INFINITY;
    assert_int_equal(shoal_io_npy_write(path("inf.npy"), rows, 2, &e), SHOAL_OK);
    rows[7] = 1;
    assert_int_equal(shoal_io_npy_write(path("two.npy"), rows, 2, &e), SHOAL_OK);
    assert_int_equal(shoal_io_unity_write(path("two.bin"), rows, 2, &e), SHOAL_OK);
    assert_int_equal(run("compare two.npy two.npy"), 0);

    expect_refused("compare nan.npy two.npy", "nan.npy", "row 1", "py", "nan", NULL);
    expect_refused("compare two.npy nan.npy", "nan.npy", "row 1", "nan", NULL);
    expect_refused("compare two.npy inf.npy", "inf.npy", "row 1", "inf", NULL);
    expect_refused("compare nan.bin two.bin", "nan.bin", "row 1", "py", "nan", NULL);
    expect_refused("compare --format unity nan.bin two.bin", "nan.bin", "nan", NULL);
    expect_refused("diverge --in nan.npy --a cpu --b cpu --steps 1 --csv d.csv", "nan.npy", "nan",
                   NULL);
    assert_int_equal(access(path("d.csv"), F_OK), -1);
}

/* ---- --model against the scene's model ----------------------------------------------- */

static void test_model_contradicts_scene(void **state)
{
    (void)state;
    /* every command that takes both refuses with the same words */
    const char *cmds[] = {
        "init --out m.npy",
        "step --in ok.npy --out m.npy",
        "diverge --in ok.npy --a cpu --b cpu --steps 1 --csv m.csv",
        "run --headless --frames 1 --out - --count 50",
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        char args[512];
        snprintf(args, sizeof args, "%s --model heading --scene steer.ini", cmds[i]);
        expect_refused(args, "--model heading contradicts the scene file steer.ini (model steer)",
                       NULL);
        /* a scene that names no model is steer's: --model heading contradicts it too (it
         * used to be ignored, the run being steer's) */
        snprintf(args, sizeof args, "%s --model heading --scene nomodel.ini", cmds[i]);
        expect_refused(args, "--model heading contradicts the scene file nomodel.ini", NULL);
        /* agreeing is fine */
        snprintf(args, sizeof args, "%s --model steer --scene steer.ini", cmds[i]);
        if (run("%s", args) != 0)
            fail_msg("'shoal %s' failed: %s", args, g_err);
    }
    assert_int_equal(access(path("m.csv"), F_OK), 0);
}

/* ---- scene files ---------------------------------------------------------------------- */

static void test_scene_long_and_indented_lines(void **state)
{
    (void)state;
    shoal_params def;
    shoal_params_default(SHOAL_MODEL_STEER, &def);
    shoal_scene sc;
    shoal_error e;

    /* A comment whose 200th byte starts "sep_radius = 0.25": inih's 200-byte line buffer
     * read that tail as a key, so a comment changed a parameter. */
    char text[24000];
    char comment[10001];
    memset(comment, 'x', sizeof comment - 1);
    comment[0] = ';';
    comment[sizeof comment - 1] = 0;
    snprintf(text, sizeof text, "[scene]\nmodel = steer\n[params]\n; %.*ssep_radius = 0.25\n", 197,
             comment + 1);
    assert_int_equal(shoal_scene_parse(text, "c.ini", &sc, &e), SHOAL_OK);
    assert_true(sc.desc.params.sep_radius == def.sep_radius);
    /* a comment of 10000 bytes, and one starting with '#' after spaces */
    snprintf(text, sizeof text, "[params]\n%s\n   # %s\nsep_radius = 0.5\n", comment, comment);
    assert_int_equal(shoal_scene_parse(text, "c.ini", &sc, &e), SHOAL_OK);
    assert_true(sc.desc.params.sep_radius == 0.5f);

    const struct {
        const char *text, *words[3];
    } bad[] = {
        /* an indented line after a key was its value's continuation: "1\n2" */
        {"[params]\nsep_radius = 1\n  2\n", {"line 3", "indented", NULL}},
        {"[params]\nsep_radius = 1\n\tali_radius = 2\n", {"line 3", "indented", NULL}},
        {"[sphere]\n  radius = 1\n", {"line 2", "indented", NULL}},
        {"[scene] model = fov\n", {"line 1", "after the section header", NULL}},
        {"[scene\n", {"line 1", "']'", NULL}},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        e.message[0] = 0;
        if (shoal_scene_parse(bad[i].text, "bad.ini", &sc, &e) != SHOAL_ERR_INPUT)
            fail_msg("case %zu accepted: %s", i, bad[i].text);
        for (int k = 0; k < 3 && bad[i].words[k]; k++)
            if (!strstr(e.message, bad[i].words[k]) || !strstr(e.message, "bad.ini"))
                fail_msg("case %zu: message '%s' lacks '%s'", i, e.message, bad[i].words[k]);
    }
    /* a key line longer than inih reads: refused with its number, never cut in two */
    snprintf(text, sizeof text, "[scene]\nmodel = steer\n[params]\nsep_radius = 0.5%*s\n", 300,
             "0");
    assert_int_equal(shoal_scene_parse(text, "long.ini", &sc, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "line 4"));
    assert_non_null(strstr(e.message, "long.ini"));
    snprintf(text, sizeof text, "[mesh a]\nfile = /%.*s.obj\n", 250, comment + 1);
    assert_int_equal(shoal_scene_parse(text, "long.ini", &sc, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "line 2"));
    /* CRLF and a BOM still read */
    assert_int_equal(
        shoal_scene_parse("\xEF\xBB\xBF[params]\r\nsep_radius = 0.5\r\n\r\n", "crlf", &sc, &e),
        SHOAL_OK);
    assert_true(sc.desc.params.sep_radius == 0.5f);

    /* and through the program: the step is refused, nothing written */
    snprintf(text, sizeof text, "[params]\nsep_radius = 1\n    2\n");
    write_text("indent.ini", text);
    expect_refused("step --in ok.npy --out i.npy --scene indent.ini", "indent.ini", "line 3", NULL);
    assert_int_equal(access(path("i.npy"), F_OK), -1);
}

static void test_scene_sphere_names(void **state)
{
    (void)state;
    shoal_scene sc;
    shoal_error e;
    char name[101], text[4096];
    memset(name, 'n', 100);
    name[100] = 0;
    /* names sharing their first 90 bytes: two spheres (inih cut names at 49 bytes, shoal at
     * 63, and the two merged into one) */
    snprintf(text, sizeof text,
             "[sphere %s1]\ncenter = 1,0,0\nradius = 1\n[sphere %s2]\ncenter = 0,2,0\nradius = 2\n",
             name, name);
    assert_int_equal(shoal_scene_parse(text, "s.ini", &sc, &e), SHOAL_OK);
    assert_int_equal((int)sc.desc.params.sphere_count, 2);
    assert_true(sc.desc.params.spheres[0].radius == 1.0f);
    assert_true(sc.desc.params.spheres[1].radius == 2.0f);
    assert_true(sc.desc.params.spheres[1].center[1] == 2.0f);
    /* the second without a radius: refused, not merged into the first */
    snprintf(text, sizeof text,
             "[sphere %s1]\ncenter = 1,0,0\nradius = 1\n[sphere %s2]\ncenter = 0,2,0\n", name,
             name);
    assert_int_equal(shoal_scene_parse(text, "s.ini", &sc, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "radius"));
    assert_non_null(strstr(e.message, "line 4"));
    /* a [sphere] with no keys at all is a sphere without radius too */
    assert_int_equal(shoal_scene_parse("[sphere]\n[params]\nsep_radius = 1\n", "s.ini", &sc, &e),
                     SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "radius"));
    assert_int_equal(shoal_scene_parse("[scene]\nmodel = fov\n[mesh m]\n", "s.ini", &sc, &e),
                     SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "file"));
    /* the same name twice is two spheres, as [sphere] twice is */
    assert_int_equal(
        shoal_scene_parse("[sphere a]\nradius = 1\n[sphere a]\nradius = 2\n", "s.ini", &sc, &e),
        SHOAL_OK);
    assert_int_equal((int)sc.desc.params.sphere_count, 2);
}

/* A scene whose own path is over 1023 bytes: its relative mesh is looked up beside it, not
 * in the directory a 1024-byte buffer cut the path back to. */
static void test_scene_long_directory(void **state)
{
    (void)state;
    char dir[SHOAL_PATH_MAX], comp[201];
    memset(comp, 'd', 200);
    comp[200] = 0;
    snprintf(dir, sizeof dir, "%s", g_dir);
    for (int i = 0; i < 6; i++) {
        size_t n = strlen(dir);
        snprintf(dir + n, sizeof dir - n, "/%s", comp);
        assert_true(mkdir(dir, 0700) == 0);
    }
    char scene_path[2300], mesh_path[2300], cmd[8192];
    snprintf(scene_path, sizeof scene_path, "%s/scene.ini", dir);
    snprintf(mesh_path, sizeof mesh_path, "%s/rock.obj", dir);
    assert_true(strlen(scene_path) > 1100);
    FILE *f = fopen(scene_path, "w");
    assert_non_null(f);
    fputs("[scene]\nmodel = fov\n[mesh rock]\nfile = rock.obj\n", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "cp %s/assets/rock.obj %s", SHOAL_SOURCE_ROOT, mesh_path);
    assert_int_equal(system(cmd), 0);
    /* a decoy where the cut path pointed: not an OBJ */
    char cut[1024];
    snprintf(cut, sizeof cut, "%s", scene_path);
    *strrchr(cut, '/') = 0;
    char decoy[1100];
    snprintf(decoy, sizeof decoy, "%s/rock.obj", cut);
    f = fopen(decoy, "w");
    assert_non_null(f);
    fputs("not an obj\n", f);
    fclose(f);

    shoal_scene sc;
    shoal_error e;
    if (shoal_scene_load(scene_path, &sc, &e))
        fail_msg("%s", e.message);
    assert_int_equal(sc.mesh_count, 1);
    assert_string_equal(sc.meshes[0].path, mesh_path);
    if (run("step --in ok.npy --out deep.npy --scene %s", scene_path) != 0)
        fail_msg("step with the deep scene failed: %s", g_err);
    /* a joined path past the system's limit (PATH_MAX) is refused, not cut */
    for (int i = 6; i < 20; i++) {
        size_t n = strlen(dir);
        snprintf(dir + n, sizeof dir - n, "/%s", comp);
        assert_true(mkdir(dir, 0700) == 0);
    }
    char far[SHOAL_PATH_MAX + 64];
    snprintf(far, sizeof far, "%s/s.ini", dir);
    assert_true(strlen(far) < SHOAL_PATH_MAX);
    f = fopen(far, "w");
    assert_non_null(f);
    fprintf(f, "[scene]\nmodel = fov\n[mesh m]\nfile = %.180s.obj\n", comp);
    fclose(f);
    assert_int_equal(shoal_scene_load(far, &sc, &e), SHOAL_ERR_INPUT);
    if (!strstr(e.message, "path too long"))
        fail_msg("%s", e.message);
}

/* ---- bench --compare ------------------------------------------------------------------- */

static void test_bench_compare_times(void **state)
{
    (void)state;
    write_text("good.json", "{\"results\": [{\"name\": \"a\", \"median_ms\": 2, \"mad_ms\": 0.1}, "
                            "{\"name\": \"b\", \"median_ms\": 1, \"mad_ms\": 0}]}");
    assert_int_equal(run("bench --compare good.json --current good.json"), 0);
    const char *bad[][2] = {
        {"{\"results\": [{\"name\": \"a\", \"median_ms\": 2}, {\"name\": \"b\", \"median_ms\": "
         "-1}]}",
         "results[1] (b): median_ms is -1"},
        {"{\"results\": [{\"name\": \"zero\", \"median_ms\": 0, \"mad_ms\": 0}]}",
         "results[0] (zero): median_ms is 0"},
        {"{\"results\": [{\"name\": \"a\", \"median_ms\": 1, \"mad_ms\": -0.5}]}",
         "results[0] (a): mad_ms is -0.5"},
        {"{\"results\": [{\"name\": \"a\", \"median_ms\": 1e999}]}", "median_ms is inf"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_text("bad.json", bad[i][0]);
        expect_refused("bench --compare bad.json --current good.json", "bad.json", bad[i][1], NULL);
        expect_refused("bench --compare good.json --current bad.json", "bad.json", bad[i][1], NULL);
    }
}

/* ---- states that are not files -------------------------------------------------------- */

static void test_state_not_a_file(void **state)
{
    (void)state;
    /* /dev/zero never ends: refused at the magic (it used to be read to 4 GiB first) */
    expect_refused("step --in /dev/zero --out z.npy", "/dev/zero", "bad magic", NULL);
    expect_refused("compare /dev/zero ok.npy", "/dev/zero", "bad magic", NULL);
    expect_refused("compare --format unity /dev/zero ok.bin", "/dev/zero", "not a regular file",
                   NULL);
    /* a FIFO: a state through it reads as from a file; zeros fail at the magic */
    /* one FIFO per case: a writer still dying from the case before cannot feed the next */
    const char *fifos[] = {"fifo1", "fifo2", "fifo3", "fifo4"};
    for (int i = 0; i < 4; i++)
        assert_int_equal(mkfifo(path(fifos[i]), 0600), 0);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd %s && (cat ok.npy > fifo1 &)", g_dir);
    assert_int_equal(system(cmd), 0);
    if (run("compare fifo1 ok.npy") != 0)
        fail_msg("compare through a FIFO: %s", g_err);
    snprintf(cmd, sizeof cmd, "cd %s && (head -c 100000000 /dev/zero > fifo2 2>/dev/null &)",
             g_dir);
    assert_int_equal(system(cmd), 0);
    expect_refused("compare fifo2 ok.npy", "fifo2", "bad magic", NULL);
    /* a valid header announcing far more than comes: truncated, after what came */
    float rows[6] = {0};
    shoal_error e;
    assert_int_equal(shoal_io_npy_write(path("one.npy"), rows, 1, &e), SHOAL_OK);
    snprintf(cmd, sizeof cmd,
             "cd %s && (head -c 128 one.npy | sed 's/(1, 6)/(9999999999, 6)/' > fifo3 &)", g_dir);
    assert_int_equal(system(cmd), 0);
    expect_refused("compare fifo3 ok.npy", "fifo3", "truncated data", NULL);
    /* a Unity buffer through a FIFO: its size cannot be known */
    snprintf(cmd, sizeof cmd, "cd %s && (cat ok.bin > fifo4 2>/dev/null &)", g_dir);
    assert_int_equal(system(cmd), 0);
    expect_refused("compare --format unity fifo4 ok.bin", "fifo4", "not a regular file", NULL);
    /* unblock any writer whose reader never opened its FIFO */
    for (int i = 0; i < 4; i++) {
        int fd = open(path(fifos[i]), O_RDONLY | O_NONBLOCK);
        if (fd >= 0)
            close(fd);
    }
}

/* ---- control characters in names ------------------------------------------------------ */

static void test_names_escaped(void **state)
{
    (void)state;
    char buf[64];
    assert_string_equal(shoal_error_escape(buf, sizeof buf, "a\x1b[31mb\nc\td"),
                        "a\\x1b[31mb\\x0ac\\x09d");
    /* valid UTF-8 kept; invalid bytes and C1 controls escaped; escaping twice is a no-op */
    assert_string_equal(shoal_error_escape(buf, sizeof buf, "caf\xc3\xa9 \xff \xc2\x9b \\x41"),
                        "caf\xc3\xa9 \\xff \\xc2\\x9b \\x41");
    char twice[64];
    assert_string_equal(shoal_error_escape(twice, sizeof twice, buf), buf);
    /* cut to fit, never in the middle of an escape */
    assert_string_equal(shoal_error_escape(buf, 7, "ab\ncd"), "ab\\x0a");
    assert_string_equal(shoal_error_escape(buf, 6, "ab\ncd"), "ab");

    /* through the program: one line, no raw ESC or newline */
    expect_refused("compare \"$(printf 'x\\033[31my\\nz.npy')\" ok.npy", "x\\x1b[31my\\x0az.npy",
                   NULL);
    assert_null(strchr(g_err, '\x1b'));
    expect_refused("step --in ok.npy --out o.npy --scene \"$(printf 'a\\rb.ini')\"", "a\\x0db.ini",
                   NULL);
    expect_refused("\"$(printf 'bad\\tcommand')\"", "bad\\x09command", NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compare_refuses_nonfinite),
        cmocka_unit_test(test_model_contradicts_scene),
        cmocka_unit_test(test_scene_long_and_indented_lines),
        cmocka_unit_test(test_scene_sphere_names),
        cmocka_unit_test(test_scene_long_directory),
        cmocka_unit_test(test_bench_compare_times),
        cmocka_unit_test(test_state_not_a_file),
        cmocka_unit_test(test_names_escaped),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
