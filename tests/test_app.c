/* SPDX-License-Identifier: MIT */
/* `shoal run` as a user runs it ($SHOAL_EXE): headless PNG frames and the timing summary,
 * the no-display fallback, --video through ffmpeg (and its clear error without ffmpeg), and
 * the window under Xvfb driven by a --script of real SDL events plus real X events from
 * xdotool: key presses, drags, the wheel, model switches, tiny sizes, minimise and restore,
 * screenshots that must show lit fish over the underwater gradient. Never a timing check.
 * The window part is skipped, saying so, when Xvfb is not installed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <png.h>

#include "shoal/gpu.h"
#include "tests/cli_harness.h"
#include "xwindow.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int setup(void **state)
{
    (void)state;
    return cli_setup("app");
}

static int teardown(void **state)
{
    (void)state;
    return cli_teardown();
}

/* A whole file ("" when it cannot be read); free it. */
static char *slurp(const char *p)
{
    char *s = read_all(p, NULL);
    return s ? s : strdup("");
}

/* ---- reading screenshots --------------------------------------------------------------- */

typedef struct image {
    int w, h;
    uint8_t *rgb;
} image;

static image load_png(const char *p)
{
    image im = {0, 0, NULL};
    png_image pi;
    memset(&pi, 0, sizeof pi);
    pi.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&pi, p))
        fail_msg("%s: not a PNG: %s", p, pi.message);
    pi.format = PNG_FORMAT_RGB;
    im.w = (int)pi.width;
    im.h = (int)pi.height;
    im.rgb = malloc(PNG_IMAGE_SIZE(pi));
    if (!png_image_finish_read(&pi, NULL, im.rgb, 0, NULL))
        fail_msg("%s: %s", p, pi.message);
    return im;
}

typedef struct image_check {
    long distinct;   /* distinct colours (24-bit) in the whole image */
    double variance; /* of the luminance over the whole image */
    long fish;       /* pixels of the band that stand out from their row's background */
    long warm;       /* of those, lit fish colours: red well above the background's */
} image_check;

/* Every row of the background is one colour (the underwater gradient): a row's most common
 * colour is its background. Fish pixels differ from it; the lit palette (silver, orange,
 * group colours) has much more red than the blue-green water. Rows [y0, y1) are examined
 * (the middle of the image, away from the HUD and the status line). */
static image_check check_image(const image *im, double band0, double band1)
{
    image_check c = {0, 0, 0, 0};
    uint8_t *seen = calloc((size_t)1 << 21, 1); /* 2^24 bits */
    double sum = 0, sum2 = 0;
    long n = (long)im->w * im->h;
    for (long i = 0; i < n; i++) {
        const uint8_t *p = im->rgb + 3 * i;
        uint32_t v = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
        if (!(seen[v >> 3] & (1u << (v & 7)))) {
            seen[v >> 3] |= (uint8_t)(1u << (v & 7));
            c.distinct++;
        }
        double l = 0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2];
        sum += l;
        sum2 += l * l;
    }
    c.variance = sum2 / (double)n - (sum / (double)n) * (sum / (double)n);
    free(seen);
    int y0 = (int)(band0 * im->h), y1 = (int)(band1 * im->h);
    for (int y = y0; y < y1; y++) {
        const uint8_t *row = im->rgb + (size_t)3 * (size_t)im->w * (size_t)y;
        /* the row's background: the most common of a few samples' colours */
        uint32_t best = 0;
        int best_n = -1;
        for (int s = 0; s < 16; s++) {
            const uint8_t *q = row + 3 * (size_t)(s * (im->w - 1) / 15);
            uint32_t v = (uint32_t)q[0] << 16 | (uint32_t)q[1] << 8 | q[2];
            int cnt = 0;
            for (int x = 0; x < im->w; x += 3) {
                const uint8_t *r = row + 3 * (size_t)x;
                cnt += ((uint32_t)r[0] << 16 | (uint32_t)r[1] << 8 | r[2]) == v;
            }
            if (cnt > best_n) {
                best_n = cnt;
                best = v;
            }
        }
        int br = (int)(best >> 16), bg = (int)((best >> 8) & 255), bb = (int)(best & 255);
        for (int x = 0; x < im->w; x++) {
            const uint8_t *r = row + 3 * (size_t)x;
            int d = abs(r[0] - br) + abs(r[1] - bg) + abs(r[2] - bb);
            if (d > 24) {
                c.fish++;
                if (r[0] > br + 40)
                    c.warm++;
            }
        }
    }
    return c;
}

static void expect_fish(const char *p, int w, int h, long min_fish)
{
    assert_true(file_exists(p));
    image im = load_png(p);
    if (w)
        assert_int_equal(im.w, w);
    if (h)
        assert_int_equal(im.h, h);
    image_check c = check_image(&im, 0.40, 0.85);
    printf("  %s: %dx%d, %ld colours, luminance variance %.1f, %ld fish pixels (%ld lit warm)\n",
           strrchr(p, '/') + 1, im.w, im.h, c.distinct, c.variance, c.fish, c.warm);
    assert_true(c.distinct >= 40);
    assert_true(c.variance > 1.0);
    assert_true(c.fish >= min_fish);
    assert_true(c.warm >= min_fish / 8);
    free(im.rgb);
}

/* ---- headless -------------------------------------------------------------------------- */

static void test_headless(void **state)
{
    (void)state;
    assert_int_equal(sh("%s run --headless --frames 5 --out frames --size 320x240 --count 2000 "
                        "--threads 2",
                        g_exe),
                     0);
    char *out = slurp(path("stdout.txt"));
    assert_non_null(strstr(out, "shoal run: headless: 5 frames"));
    assert_non_null(strstr(out, "render (shoal_render_frame)"));
    assert_non_null(strstr(out, "sim (shoal_sim_step)"));
    assert_non_null(strstr(out, "sim: forces"));
    free(out);
    for (int f = 0; f < 5; f++) {
        char name[64];
        snprintf(name, sizeof name, "frames/frame_%05d.png", f);
        expect_fish(path(name), 320, 240, 30);
    }
    assert_false(file_exists(path("frames/frame_00005.png")));

    /* a wider school (larger initial ball) fills more of the frame */
    assert_int_equal(sh("%s run --headless --frames 2 --out wide --size 320x240 --count 3000 "
                        "--set init_pos_radius=12 --grid --trails",
                        g_exe),
                     0);
    expect_fish(path("wide/frame_00001.png"), 320, 240, 300);

    /* bad options: exit 2, one line */
    assert_int_equal(sh("%s run --headless --size 0x10", g_exe), 2);
    assert_int_equal(sh("%s run --headless --video out.avi", g_exe), 2);
    assert_int_equal(sh("%s run --out x", g_exe), 2);
    assert_int_equal(sh("%s run --headless --model nope", g_exe), 2);
}

static void test_no_display(void **state)
{
    (void)state;
    assert_int_equal(sh("env -u DISPLAY -u WAYLAND_DISPLAY -u SDL_VIDEODRIVER %s run --frames 3 "
                        "--size 160x120 --count 500",
                        g_exe),
                     0);
    char *out = slurp(path("stdout.txt"));
    /* the default output: a video where ffmpeg is, else PNG frames (test_video.c has more) */
    int ffmpeg = system("ffmpeg -version > /dev/null 2>&1") == 0;
    assert_non_null(strstr(out, ffmpeg ? "shoal: no display; running headless: 3 frames (0.1 s "
                                         "of simulated time) to out/shoal.mp4"
                                       : "shoal: no display; running headless: 3 frames (0.1 s "
                                         "of simulated time) to out/frames"));
    assert_non_null(strstr(out, "shoal run: headless: 3 frames"));
    free(out);
    assert_true(file_exists(path(ffmpeg ? "out/shoal.mp4" : "out/frames/frame_00002.png")));
}

/* --backend: a bad name, and cuda where there is no GPU: exit 2, one line naming it, no
 * frames. (With a GPU the run must succeed; test_gpu compares its frames with the CPU's.) */
static void test_backend_option(void **state)
{
    (void)state;
    assert_int_equal(sh("%s run --headless --frames 1 --out bk --backend vulkan", g_exe), 2);
    char *err = slurp(path("stderr.txt"));
    assert_non_null(strstr(err, "--backend: 'vulkan' (expected cpu or cuda)"));
    free(err);
    assert_int_equal(sh("%s run --headless --frames 1 --out bk --gpu-order random", g_exe), 2);
    shoal_error e;
    int gpu = shoal_gpu_available(&e) == SHOAL_OK;
    int rc = sh("%s run --headless --frames 2 --size 160x120 --count 500 --out bk --backend cuda",
                g_exe);
    if (gpu) {
        assert_int_equal(rc, 0);
        assert_true(file_exists(path("bk/frame_00001.png")));
    } else {
        assert_int_equal(rc, 2);
        err = slurp(path("stderr.txt"));
        assert_non_null(strstr(err, "shoal run: --backend cuda: "));
        assert_non_null(strstr(err, e.message));
        free(err);
        assert_false(file_exists(path("bk/frame_00000.png")));
    }
}

/* run --out DIR follows the output rules (docs/ROBUSTNESS.md): another run's frames are
 * refused unless --overwrite, a directory in use by a live run is refused (its lock), nothing
 * of a failed run is left, an interrupted run keeps the frames it made. */
static void test_out_dir_rules(void **state)
{
    (void)state;
    const char *run = "%s run --headless --frames 3 --size 96x64 --count 300 --hud off --out fr";
    assert_int_equal(sh(run, g_exe), 0);
    assert_true(file_exists(path("fr/frame_00002.png")));
    /* again: refused, the frames kept */
    assert_int_equal(sh("%s run --headless --frames 2 --size 96x64 --count 300 --out fr", g_exe),
                     2);
    char *err = slurp(path("stderr.txt"));
    assert_non_null(strstr(err, "--out fr holds another run's output"));
    assert_non_null(strstr(err, "--overwrite"));
    free(err);
    assert_true(file_exists(path("fr/frame_00002.png")));
    /* --overwrite: the new run's two frames, none of the old third */
    assert_int_equal(sh("%s run --headless --frames 2 --size 96x64 --count 300 --out fr "
                        "--overwrite",
                        g_exe),
                     0);
    assert_true(file_exists(path("fr/frame_00001.png")));
    assert_false(file_exists(path("fr/frame_00002.png")));
    /* a run refused (a bad parameter) makes no directory */
    assert_int_equal(sh("%s run --headless --frames 2 --size 96x64 --count 300 --out gone "
                        "--set max_speed=-1",
                        g_exe),
                     2);
    assert_false(file_exists(path("gone/frame_00000.png")));
    /* a live run holds the directory: a second one is refused by the lock; SIGINT ends the
     * first, which keeps the frames it had made */
    assert_int_equal(sh("(%s run --headless --frames 100000 --size 96x64 --count 300 --out live "
                        "> live.txt 2>&1 & echo $! > live.pid); "
                        "for i in $(seq 100); do [ -e live/.shoal.lock ] && break; sleep 0.05; "
                        "done; sleep 0.3",
                        g_exe),
                     0);
    assert_int_equal(sh("%s run --headless --frames 2 --size 96x64 --count 300 --out live "
                        "--overwrite",
                        g_exe),
                     2);
    err = slurp(path("stderr.txt"));
    assert_non_null(strstr(err, "another shoal run"));
    free(err);
    assert_int_equal(sh("kill -INT $(cat live.pid); while kill -0 $(cat live.pid) 2>/dev/null; "
                        "do sleep 0.05; done"),
                     0);
    assert_true(file_exists(path("live/frame_00000.png")));
    assert_false(file_exists(path("live/.shoal.lock")) &&
                 sh("ls -a live | grep -q shoal-stage") == 0);
}

static void test_video(void **state)
{
    (void)state;
    /* without ffmpeg on the PATH: the clear error, exit 2, no file */
    assert_int_equal(sh("env PATH=/nonexistent %s run --headless --frames 3 --size 64x48 "
                        "--count 100 --video v.mp4",
                        g_exe),
                     2);
    char *err = slurp(path("stderr.txt"));
    assert_non_null(strstr(err, "ffmpeg not found: install it (apt-get install ffmpeg) or use "
                                "--out DIR"));
    free(err);
    assert_false(file_exists(path("v.mp4")));
    if (system("ffmpeg -version > /dev/null 2>&1") != 0) {
        printf("SKIP: ffmpeg not installed (the --video encode is not tested)\n");
        return;
    }
    /* odd sizes are padded for H.264 */
    assert_int_equal(
        sh("%s run --headless --frames 12 --size 161x91 --count 800 --video v.mp4", g_exe), 0);
    struct stat st;
    assert_int_equal(stat(path("v.mp4"), &st), 0);
    assert_true(st.st_size > 1000);
    /* the stream: 12 frames, the size padded to even numbers */
    if (system("ffprobe -version > /dev/null 2>&1") == 0) {
        assert_int_equal(sh("ffprobe -v error -count_frames -select_streams v:0 -show_entries "
                            "stream=width,height,nb_read_frames -of csv=p=0 v.mp4"),
                         0);
        char *probe = slurp(path("stdout.txt")); /* sh() keeps stdout there */
        assert_non_null(probe);
        printf("# ffprobe v.mp4: %s", probe);
        assert_non_null(strstr(probe, "162,92,12"));
        free(probe);
    }
    DIR *d = opendir(g_dir); /* no temporary left behind */
    assert_non_null(d);
    for (struct dirent *e = readdir(d); e; e = readdir(d))
        if (strstr(e->d_name, ".tmp."))
            fail_msg("temporary file left behind: %s", e->d_name);
    closedir(d);
}

/* ---- the window under Xvfb ------------------------------------------------------------- */

static void test_window(void **state)
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
    int xdotool = have_program("xdotool");
    if (!xdotool)
        printf("SKIP (part): xdotool not installed: real X input is not tested\n");
    char display[16];
    pid_t xpid = xvfb_start(77, path("xvfb.txt"), display);

    /* The script: real SDL events (SDL_PushEvent) for every key the app has, mouse, wheel,
     * tiny sizes, minimise; screenshots through the app's screenshot key. */
    FILE *f = fopen(path("script.txt"), "w");
    assert_non_null(f);
    fprintf(f,
            "frames 20\n"
            "screenshot %s\n"
            "key space\nframes 3\nkey .\nkey space\n"
            "key 3\nframes 5\n"        /* heading */
            "key 5\nframes 5\n"        /* fov */
            "key 1\nframes 10\n"       /* back to steer */
            "drag 300 200 360 230\n"   /* orbit */
            "drag 300 200 320 210 3\n" /* pan */
            "wheel -3\nwheel 3\n"
            "key Up\nkey Down\nkey Right\nkey Left\nkey Backspace\nkey shift+Tab\n"
            "key PageDown\nkey PageUp\nkey r\n"
            "key ]\nkey [\nkey 0\n"
            "key l\nkey l\nkey f\nkey c\n"
            "key h\nframes 3\nkey h\n"
            "key g\nkey t\nframes 15\n"
            "click 320 200 3\n" /* pick a boid */
            "screenshot %s\n"
            "key i\nframes 2\nkey i\n"
            "resize 64 48\nframes 3\n"
            "resize 1 1\nframes 3\n"
            "resize 2 300\nframes 2\n"
            "minimize\nframes 5\n"
            "restore\nframes 2\n"
            "resize 640 360\nframes 5\n",
            path("shot1.png"), path("shot2.png"));
    if (xdotool)
        fprintf(f, "touch %s\nwait-key x 30\nframes 3\n", path("ready"));
    fprintf(f, "key g\nkey t\nframes 5\nscreenshot %s\nquit\n", path("shot3.png"));
    fclose(f);

    char *argv[] = {(char *)g_exe, "run",     "--script", path("script.txt"),
                    "--size",      "640x360", "--count",  "2000",
                    "--threads",   "2",       NULL};
    pid_t pid = spawn(argv, display, path("run.txt"));
    assert_true(pid > 0);
    int xdo_rc = 0;
    if (xdotool) {
        if (wait_file(path("ready"), 60)) {
            /* real X input, from outside the process: focus, click, drag, a key */
            char cmd[512];
            snprintf(cmd, sizeof cmd,
                     "DISPLAY=%s xdotool search --name '^shoal$' windowfocus --sync %%1 "
                     "mousemove --window %%1 300 180 click 1 mousedown 1 mousemove_relative 40 "
                     "10 mouseup 1 key x > %s 2>&1",
                     display, path("xdotool.txt"));
            xdo_rc = system(cmd);
        }
    }
    int rc = wait_for(pid, 90);
    kill(xpid, SIGTERM);
    waitpid(xpid, NULL, 0);
    char *out = slurp(path("run.txt"));
    if (rc != 0 || xdo_rc != 0) {
        static char msg[16384];
        snprintf(msg, sizeof msg, "%s", out);
        free(out);
        fail_msg("shoal run exited %d (xdotool %d): %s", rc, xdo_rc, msg);
    }
    assert_non_null(strstr(out, "present path"));
    assert_non_null(strstr(out, "input: key 3 (script)"));
    assert_non_null(strstr(out, "model heading"));
    assert_non_null(strstr(out, "model fov"));
    assert_non_null(strstr(out, "picked boid"));
    /* Issue 37 item 7: Right raises the selected parameter by 10 % and sets that value itself
     * (its text read back was rounded to 6 digits: 3 * 1.1f became 3.29999995, not the
     * 3.30000019 that was asked for) */
    {
        /* the selection line ("parameter NAME = V", Up / Down) whose next status line is the
         * edit of that parameter ("NAME = W", Right) */
        char name[64] = "";
        double v = 0, w = 0;
        int found = 0;
        for (const char *sel = strstr(out, "shoal: parameter "); sel && !found;
             sel = strstr(sel + 1, "shoal: parameter ")) {
            const char *next = strstr(sel + 1, "shoal: ");
            char want[96];
            if (sscanf(sel, "shoal: parameter %63s = %lf", name, &v) != 2 || !next)
                continue;
            snprintf(want, sizeof want, "shoal: %s = ", name);
            found = strncmp(next, want, strlen(want)) == 0 &&
                    sscanf(next + strlen(want), "%lf", &w) == 1;
        }
        if (!found)
            fail_msg("no 'parameter NAME = V' line followed by 'NAME = W': %.3000s", out);
        float fv = (float)v, expect = fv > 0 ? fv * 1.1f : fv / 1.1f;
        if ((float)w != expect)
            fail_msg("%s: %.9g raised to %.9g, expected %.9g (the value, not its text)", name, v, w,
                     (double)expect);
    }
    assert_non_null(strstr(out, "shoal run: window:"));
    if (xdotool) {
        assert_non_null(strstr(out, "input: key x (platform)"));
        assert_non_null(strstr(out, "input: button 1 down"));
        assert_non_null(strstr(out, "(platform)"));
    }
    free(out);
    expect_fish(path("shot1.png"), 640, 360, 100);
    expect_fish(path("shot2.png"), 640, 360, 100);
    expect_fish(path("shot3.png"), 640, 360, 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_headless),       cmocka_unit_test(test_no_display),
        cmocka_unit_test(test_backend_option), cmocka_unit_test(test_video),
        cmocka_unit_test(test_window),         cmocka_unit_test(test_out_dir_rules),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
