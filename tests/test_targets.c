/* SPDX-License-Identifier: MIT */
/* Heading targets as the user sees them: `shoal render --scene` draws the K targets as
 * markers (pixels of the marker colour appear, and none without --scene); the library pins
 * a target where it is put; and `shoal run` under Xvfb, driven by its --script of SDL
 * events, places a target (key k, click) and drags it with the mouse: the target moves and
 * its marker is drawn where it was dropped. The window part is skipped without Xvfb. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "shoal/shoal.h"
#include "tests/cli_harness.h"
#include "xwindow.h"

#include <fcntl.h>
#include <math.h>
#include <png.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MARKER_R 0xFF
#define MARKER_G 0xE0
#define MARKER_B 0x20

/* A whole file ("" when it cannot be read); free it. */
static char *slurp(const char *p)
{
    char *s = read_all(p, NULL);
    return s ? s : strdup("");
}

/* Pixels of the marker colour in the rectangle [x0, x1) x [y0, y1) of a PNG. */
static int marker_pixels(const char *p, int x0, int y0, int x1, int y1)
{
    png_image pi;
    memset(&pi, 0, sizeof pi);
    pi.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&pi, p))
        fail_msg("%s: not a PNG: %s", p, pi.message);
    pi.format = PNG_FORMAT_RGB;
    uint8_t *rgb = malloc(PNG_IMAGE_SIZE(pi));
    if (!png_image_finish_read(&pi, NULL, rgb, 0, NULL))
        fail_msg("%s: %s", p, pi.message);
    int w = (int)pi.width, h = (int)pi.height, n = 0;
    x1 = x1 > w ? w : x1;
    y1 = y1 > h ? h : y1;
    for (int y = y0 < 0 ? 0 : y0; y < y1; y++)
        for (int x = x0 < 0 ? 0 : x0; x < x1; x++) {
            const uint8_t *c = rgb + 3 * ((size_t)y * (size_t)w + (size_t)x);
            /* within a few levels (the PNG reader may convert gamma) */
            n += abs(c[0] - MARKER_R) <= 12 && abs(c[1] - MARKER_G) <= 12 &&
                 abs(c[2] - MARKER_B) <= 12;
        }
    free(rgb);
    return n;
}

static int setup(void **state)
{
    (void)state;
    return cli_setup("targets");
}

static int teardown(void **state)
{
    (void)state;
    return cli_teardown();
}

#define SCENE SHOAL_SOURCE_ROOT "/assets/scenes/heading_targets.ini"

static void test_render_markers(void **state)
{
    (void)state;
    assert_int_equal(sh("%s init --scene %s --count 3000 --out s.npy", g_exe, SCENE), 0);
    assert_int_equal(sh("%s render --in s.npy --out plain.png --size 480x270 --eye 0,25,80 "
                        "--target 0,0,0",
                        g_exe),
                     0);
    assert_int_equal(sh("%s render --in s.npy --out marked.png --size 480x270 --eye 0,25,80 "
                        "--target 0,0,0 --scene %s --time 0",
                        g_exe, SCENE),
                     0);
    int plain = marker_pixels(path("plain.png"), 0, 0, 480, 270);
    int marked = marker_pixels(path("marked.png"), 0, 0, 480, 270);
    printf("# marker pixels: %d without --scene, %d with\n", plain, marked);
    assert_int_equal(plain, 0);
    /* 4 targets, each a diamond and a cross of some 60 pixels */
    assert_true(marked > 4 * 30);
    /* a bad --time: one line, exit 2 */
    assert_int_equal(sh("%s render --in s.npy --out x.png --scene %s --time nan", g_exe, SCENE), 2);
}

static void test_pin(void **state)
{
    (void)state;
    shoal_scene sc;
    shoal_error e;
    assert_int_equal(shoal_scene_load(SCENE, &sc, &e), SHOAL_OK);
    sc.desc.boid_count = 100;
    shoal_sim *s;
    assert_int_equal(shoal_sim_create(&sc.desc, &s, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_draw_state(s, &e), SHOAL_OK);
    float t0[12], t1[12];
    assert_int_equal(shoal_sim_targets(s, 0.0, t0, 4), 4);
    const float q[3] = {1, 2, 3};
    assert_int_equal(shoal_sim_set_target(s, 2, q, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_set_target(s, 4, q, &e), SHOAL_ERR_INPUT);
    const float bad[3] = {NAN, 0, 0};
    assert_int_equal(shoal_sim_set_target(s, 0, bad, &e), SHOAL_ERR_INPUT);
    /* pinned for every time (the others keep their schedule) */
    assert_int_equal(shoal_sim_targets(s, 100.0, t1, 4), 4);
    assert_true(t1[6] == 1 && t1[7] == 2 && t1[8] == 3);
    assert_int_equal(shoal_sim_step(s, 5, &e), SHOAL_OK);
    shoal_sim_clear_targets(s);
    assert_int_equal(shoal_sim_targets(s, 0.0, t1, 4), 4);
    assert_memory_equal(t0, t1, sizeof t0);
    shoal_sim_destroy(s);
}

/* ---- the window under Xvfb ------------------------------------------------------------ */

static void test_window_drag(void **state)
{
    if (!SHOAL_TEST_WINDOW) {
        printf("SKIP: this build has no SDL2 window (-Dsdl=disabled)\n");
        skip();
    }
    (void)state;
    if (!have_program("Xvfb")) {
        printf("SKIP: Xvfb not installed (apt-get install xvfb): the window is not tested\n");
        skip();
    }
    char display[16];
    pid_t xpid = xvfb_start(140, path("xvfb.txt"), display);
    FILE *f = fopen(path("script.txt"), "w");
    assert_non_null(f);
    /* pause (the school stays put), place target 0 under (320, 180), drag it to (420, 240) */
    fprintf(f,
            "frames 5\nkey space\nkey i\nkey k\nclick 320 180\nkey k\nframes 3\n"
            "drag 320 180 420 240\nframes 3\nscreenshot %s\nquit\n",
            path("drag.png"));
    fclose(f);
    char *argv[] = {(char *)g_exe, "run",    "--script", path("script.txt"), "--scene",
                    SCENE,         "--size", "640x360",  "--count",          "2000",
                    "--threads",   "2",      NULL};
    pid_t pid = spawn(argv, display, path("run.txt"));
    int rc = wait_for(pid, 90);
    kill(xpid, SIGTERM);
    waitpid(xpid, NULL, 0);
    char *out = slurp(path("run.txt"));
    if (rc != 0)
        fail_msg("shoal run exited %d: %s", rc, out);
    float a[3], b[3];
    const char *placed = strstr(out, "target 0 placed at (");
    const char *dragged = strstr(out, "target 0 dragged to (");
    if (!placed || !dragged)
        fail_msg("no target placed/dragged in the output: %s", out);
    assert_int_equal(sscanf(placed, "target 0 placed at (%f, %f, %f)", &a[0], &a[1], &a[2]), 3);
    assert_int_equal(sscanf(dragged, "target 0 dragged to (%f, %f, %f)", &b[0], &b[1], &b[2]), 3);
    printf("# target 0: placed at (%g, %g, %g), dragged to (%g, %g, %g)\n", (double)a[0],
           (double)a[1], (double)a[2], (double)b[0], (double)b[1], (double)b[2]);
    /* dragged right and down on the screen: +x and -y in the world (camera above, +z) */
    assert_true(b[0] > a[0] + 1.0f);
    assert_true(b[1] < a[1]);
    /* its marker where it was dropped */
    int n = marker_pixels(path("drag.png"), 420 - 12, 240 - 12, 420 + 13, 240 + 13);
    printf("# marker pixels around (420, 240): %d\n", n);
    assert_true(n > 10);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_render_markers),
        cmocka_unit_test(test_pin),
        cmocka_unit_test(test_window_drag),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
