/* SPDX-License-Identifier: MIT */
/* The program's video and headless output (src/app/video.c, run_capture.c, render_replay.c)
 * as a user meets it ($SHOAL_EXE): the headless default (10 s of simulated time into
 * out/shoal.mp4 at 30 fps, PNG frames without ffmpeg), --fps and --steps-per-frame, the HUD
 * in headless frames, --eye/--target; and the faults of issue 33 it fixed: an ffmpeg that
 * exits 0 after failing its trailer (a full disk: F2; a fake ffmpeg, and a real full tmpfs
 * where the test may mount one), a signal to a replay with --video (F12), and --video
 * without ffmpeg creating --out's directory first (F23). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cli_harness.h"

#include <dirent.h>
#include <png.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int g_ffmpeg, g_ffprobe;

static int setup(void **state)
{
    (void)state;
    if (cli_setup("video"))
        return -1;
    g_ffmpeg = system("ffmpeg -version > /dev/null 2>&1") == 0;
    g_ffprobe = system("ffprobe -version > /dev/null 2>&1") == 0;
    /* a small trajectory for the replays */
    if (run("init --count 500 --seed 2 --out in.npy") != 0 ||
        run("step --in in.npy --out-dir traj --every 5 --steps 20 --quiet") != 0)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return cli_teardown();
}

/* Names in the scratch directory (or DIR under it) that contain ".tmp.": temporaries. */
static int temporaries(const char *dir)
{
    DIR *d = opendir(dir ? path(dir) : g_dir);
    if (!d)
        return 0;
    int n = 0;
    for (struct dirent *e = readdir(d); e; e = readdir(d))
        if (strstr(e->d_name, ".tmp.")) {
            printf("  temporary left: %s\n", e->d_name);
            n++;
        }
    closedir(d);
    return n;
}

/* One line on stderr (what every error is). */
static void one_line(void)
{
    size_t n = strlen(g_err);
    if (n == 0 || strchr(g_err, '\n') != g_err + n - 1)
        fail_msg("expected one line on stderr, got: %s", g_err);
}

/* ffprobe's "width,height,rate,frames" of a video's first stream, into buf. */
static const char *probe(const char *video, char *buf, size_t size)
{
    int rc = sh("ffprobe -v error -count_frames -select_streams v:0 -show_entries "
                "stream=width,height,r_frame_rate,nb_read_frames -of csv=p=0 %s",
                video);
    snprintf(buf, size, "%.*s", (int)(size - 1), rc == 0 ? g_out : "(ffprobe failed)");
    buf[strcspn(buf, "\n")] = 0;
    return buf;
}

/* ---- F23: no ffmpeg, nothing made ------------------------------------------------------ */

static void test_no_ffmpeg(void **state)
{
    (void)state;
    /* the replay: exit 2, the clear line, and neither --out's directory nor the video */
    assert_int_equal(run_with("export PATH=/nonexistent",
                              "render --in traj --video v.mp4 --out frames --size 64x48"),
                     2);
    one_line();
    assert_non_null(strstr(g_err,
                           "--video: ffmpeg not found: install it (apt-get install ffmpeg) or use "
                           "--out DIR"));
    assert_false(exists("frames"));
    assert_false(exists("v.mp4"));
    /* run --headless: the same */
    assert_int_equal(run_with("export PATH=/nonexistent", "run --headless --frames 3 --count 100 "
                                                          "--size 64x48 --video v.mp4 --out fr"),
                     2);
    one_line();
    assert_non_null(strstr(g_err, "ffmpeg not found"));
    assert_false(exists("fr"));
    assert_false(exists("v.mp4"));
    assert_int_equal(temporaries(NULL), 0);
    /* the headless default without ffmpeg: PNG frames in out/frames, 10 s of them */
    assert_int_equal(
        run_with("export PATH=/nonexistent", "run --headless --count 100 --size 32x24 --hud off"),
        0);
    assert_true(exists("out/frames/frame_00299.png"));
    assert_false(exists("out/frames/frame_00300.png"));
    assert_false(exists("out/shoal.mp4"));
    assert_non_null(strstr(g_out, "headless: 300 frames, 600 steps"));
    assert_int_equal(sh("rm -rf out"), 0);
}

/* ---- F2: an ffmpeg that fails its trailer and exits 0 ---------------------------------- */

/* A stand-in for ffmpeg on a full disk, as the real one behaves there (issue 33, F2): it
 * reads every frame, leaves 4 KB that are no MP4 (an ftyp box, then an mdat box longer than
 * the file and no moov), says so on stderr and exits with `status`. */
static void fake_ffmpeg(int status)
{
    assert_int_equal(sh("mkdir -p fake && cat > fake/ffmpeg <<'EOF'\n"
                        "#!/bin/sh\n"
                        "[ \"$1\" = -version ] && { echo 'ffmpeg version fake'; exit 0; }\n"
                        "for a; do out=$a; done\n"
                        "cat > /dev/null\n"
                        "printf '\\000\\000\\000\\040ftypisom\\000\\000\\002\\000isomiso2avc1mp41"
                        "\\000\\000\\020\\000mdat' > \"$out\"\n"
                        "head -c 4056 /dev/zero >> \"$out\"\n"
                        "echo \"[out#0/mp4] Error writing trailer of $out: No space left on "
                        "device\" >&2\n"
                        "exit %d\n"
                        "EOF\n"
                        "chmod +x fake/ffmpeg",
                        status),
                     0);
}

static void expect_old_video_kept(const char *what)
{
    char *v = read_all(path("v.mp4"), NULL);
    assert_non_null(v);
    if (strcmp(v, "the old video\n") != 0)
        fail_msg("%s: v.mp4 was replaced", what);
    free(v);
    if (temporaries(NULL))
        fail_msg("%s: a temporary was left", what);
}

static void test_trailer_fails(void **state)
{
    (void)state;
    for (int status = 0; status < 2; status++) {
        fake_ffmpeg(status);
        write_text("v.mp4", "the old video\n");
        const char *env = "export PATH=$PWD/fake:$PATH";
        /* the replay */
        assert_int_equal(run_with(env, "render --in traj --video v.mp4 --size 64x48 --quiet"), 2);
        one_line();
        printf("  render --in DIR --video, ffmpeg exits %d: %s", status, g_err);
        assert_non_null(strstr(g_err, "v.mp4 not written"));
        assert_non_null(strstr(g_err, "No space left on device"));
        expect_old_video_kept("render --in DIR --video");
        /* run --headless */
        assert_int_equal(run_with(env, "run --headless --frames 5 --count 100 --size 64x48 "
                                       "--video v.mp4"),
                         2);
        printf("  run --headless --video, ffmpeg exits %d: %s", status, g_err);
        assert_non_null(strstr(g_err, "v.mp4 not written"));
        assert_non_null(strstr(g_err, "No space left on device"));
        expect_old_video_kept("run --headless --video");
    }
    assert_int_equal(sh("rm -rf fake v.mp4"), 0);
}

/* The real thing where this process may mount a tmpfs (root): a disk that fills while
 * ffmpeg writes the video. */
static void test_full_disk(void **state)
{
    (void)state;
    if (!g_ffmpeg || geteuid() != 0) {
        printf("SKIP: needs ffmpeg and root (to mount a small tmpfs)\n");
        skip();
    }
    assert_int_equal(sh("mkdir -p tiny"), 0);
    if (sh("mount -t tmpfs -o size=200k tmpfs tiny") != 0) {
        printf("SKIP: cannot mount a tmpfs here: %s", g_err);
        skip();
    }
    int ok = run("render --in traj --video tiny/v.mp4 --size 160x100 --quiet") == 0;
    ok = ok && sh("cp tiny/v.mp4 v_before.mp4") == 0;
    /* leave 5000 bytes */
    ok = ok && sh("head -c $(( $(df --output=avail -B1 tiny | tail -1) - 5000 )) /dev/zero > "
                  "tiny/filler; true") == 0;
    int rc_render = ok ? run("render --in traj --video tiny/v.mp4 --size 320x200 --quiet") : -1;
    char err_render[1024];
    snprintf(err_render, sizeof err_render, "%.1000s", g_err);
    int same_render = ok && sh("cmp tiny/v.mp4 v_before.mp4") == 0;
    int rc_run = ok ? run("run --headless --frames 20 --count 500 --size 320x200 --video "
                          "tiny/v.mp4")
                    : -1;
    char err_run[1024];
    snprintf(err_run, sizeof err_run, "%.1000s", g_err);
    int same_run = ok && sh("cmp tiny/v.mp4 v_before.mp4") == 0;
    int temps = temporaries("tiny");
    sh("umount tiny");
    assert_true(ok);
    printf("  full disk: render exit %d: %s", rc_render, err_render);
    printf("  full disk: run exit %d: %s", rc_run, err_run);
    assert_int_equal(rc_render, 2);
    assert_true(same_render);
    assert_int_equal(rc_run, 2);
    assert_true(same_run);
    assert_int_equal(temps, 0);
}

/* ---- F12: a signal to a replay that writes a video ------------------------------------- */

static void test_signal_replay(void **state)
{
    (void)state;
    if (!g_ffmpeg) {
        printf("SKIP: ffmpeg not installed\n");
        skip();
    }
    assert_int_equal(sh("rm -f v.mp4"), 0);
    /* long enough to be caught while ffmpeg writes (60 states of 20000 fish at 640x360) */
    assert_int_equal(run("init --count 20000 --set init_pos_radius=8 --out in20k.npy"), 0);
    assert_int_equal(run("step --in in20k.npy --out-dir traj20k --every 1 --steps 60 --quiet"), 0);
    const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
    for (int k = 0; k < 3; k++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            if (chdir(g_dir) != 0)
                _exit(127);
            signal(SIGINT, SIG_DFL);
            execl(g_exe, g_exe, "render", "--in", "traj20k", "--video", "v.mp4", "--size",
                  "640x360", "--quiet", (char *)NULL);
            _exit(127);
        }
        /* wait until the video's temporary exists, then signal */
        int seen = 0, status = 0, ended = 0;
        for (int i = 0; i < 20000 && !seen; i++) {
            DIR *d = opendir(g_dir);
            for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d))
                seen |= strncmp(e->d_name, ".v.mp4.tmp.", 11) == 0;
            if (d)
                closedir(d);
            if (!seen && waitpid(pid, &status, WNOHANG) == pid) {
                ended = 1;
                break;
            }
            struct timespec ts = {0, 500000};
            nanosleep(&ts, NULL);
        }
        if (ended)
            fail_msg("the replay ended before its temporary was seen (status 0x%x)", status);
        kill(pid, sigs[k]);
        waitpid(pid, &status, 0);
        if (!WIFSIGNALED(status) || WTERMSIG(status) != sigs[k])
            fail_msg("signal %d: the replay did not die by it (status 0x%x)", sigs[k], status);
        /* ffmpeg was killed before the temporary was removed: nothing may appear later */
        struct timespec ts = {0, 200000000};
        nanosleep(&ts, NULL);
        if (temporaries(NULL))
            fail_msg("signal %d to render --in DIR --video left its temporary", sigs[k]);
        assert_false(exists("v.mp4"));
        printf("  signal %d while the video was written: no temporary left\n", sigs[k]);
    }
}

/* ---- the headless default and its rates ------------------------------------------------ */

static void test_default_video(void **state)
{
    (void)state;
    if (!g_ffmpeg) {
        printf("SKIP: ffmpeg not installed\n");
        skip();
    }
    char buf[256];
    /* 10 s of simulated time at 30 fps, 2 steps a frame: 300 frames into out/shoal.mp4 */
    assert_int_equal(run("run --headless --count 200 --size 96x54"), 0);
    assert_non_null(strstr(g_out, "shoal run: wrote out/shoal.mp4 (300 frames, 30 fps)"));
    assert_non_null(strstr(g_out, "headless: 300 frames, 600 steps"));
    assert_false(exists("out/frames"));
    if (g_ffprobe)
        assert_string_equal(probe("out/shoal.mp4", buf, sizeof buf), "96,54,30/1,300");
    /* --fps: the steps per frame follow it (real time) */
    assert_int_equal(run("run --headless --count 200 --size 96x54 --fps 60 --frames 12 --video "
                         "a.mp4"),
                     0);
    assert_non_null(strstr(g_out, "headless: 12 frames, 12 steps"));
    if (g_ffprobe)
        assert_string_equal(probe("a.mp4", buf, sizeof buf), "96,54,60/1,12");
    /* --steps-per-frame alone: the rate follows it */
    assert_int_equal(run("run --headless --count 200 --size 96x54 --steps-per-frame 4 --frames 5 "
                         "--video b.mp4"),
                     0);
    assert_non_null(strstr(g_out, "headless: 5 frames, 20 steps"));
    if (g_ffprobe)
        assert_string_equal(probe("b.mp4", buf, sizeof buf), "96,54,15/1,5");
    /* both: decoupled (slow motion) */
    assert_int_equal(run("run --headless --count 200 --size 96x54 --steps-per-frame 1 --fps 30 "
                         "--frames 4 --video c.mp4"),
                     0);
    assert_non_null(strstr(g_out, "headless: 4 frames, 4 steps"));
    if (g_ffprobe)
        assert_string_equal(probe("c.mp4", buf, sizeof buf), "96,54,30/1,4");
    /* in a window --fps means nothing: refused like --out and --video */
    assert_int_equal(run("run --fps 30 --frames 1"), 2);
    one_line();
    assert_non_null(strstr(g_err, "--out, --video and --fps are for --headless"));
    assert_int_equal(temporaries(NULL), 0);
    assert_int_equal(sh("rm -rf out a.mp4 b.mp4 c.mp4"), 0);
}

/* ---- the HUD headless, --eye and --target ---------------------------------------------- */

typedef struct rgb_image {
    int w, h;
    uint8_t *px;
} rgb_image;

static rgb_image load(const char *name)
{
    rgb_image im = {0, 0, NULL};
    png_image pi;
    memset(&pi, 0, sizeof pi);
    pi.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&pi, path(name)))
        fail_msg("%s: %s", name, pi.message);
    pi.format = PNG_FORMAT_RGB;
    im.w = (int)pi.width;
    im.h = (int)pi.height;
    im.px = malloc(PNG_IMAGE_SIZE(pi));
    if (!png_image_finish_read(&pi, NULL, im.px, 0, NULL))
        fail_msg("%s: %s", name, pi.message);
    return im;
}

static void test_hud_headless(void **state)
{
    (void)state;
    const char *common = "run --headless --frames 3 --count 300 --size 480x270 --threads 2";
    assert_int_equal(run("%s --out hud_on", common), 0);
    if (strstr(g_err, "the HUD has no text")) {
        printf("SKIP: no font here (%s)", g_err);
        skip();
    }
    assert_int_equal(run("%s --hud off --out hud_off", common), 0);
    /* the same frame but for the HUD's panel in the top left corner */
    rgb_image a = load("hud_on/frame_00002.png"), b = load("hud_off/frame_00002.png");
    assert_int_equal(a.w, b.w);
    long differ = 0, outside = 0;
    int maxx = 0, maxy = 0;
    for (int y = 0; y < a.h; y++)
        for (int x = 0; x < a.w; x++) {
            size_t i = 3 * ((size_t)y * (size_t)a.w + (size_t)x);
            if (memcmp(a.px + i, b.px + i, 3) != 0) {
                differ++;
                maxx = x > maxx ? x : maxx;
                maxy = y > maxy ? y : maxy;
                outside += y > a.h / 2;
            }
        }
    printf("  HUD headless: %ld pixels differ, within x < %d, y < %d\n", differ, maxx + 1,
           maxy + 1);
    assert_true(differ > 2000); /* a panel with text */
    assert_int_equal(outside, 0);
    free(a.px);
    free(b.px);
    /* --eye/--target: another camera, another picture; given alone: refused */
    assert_int_equal(run("%s --hud off --eye 0,0,400 --target 0,0,0 --out far", common), 0);
    assert_int_equal(sh("cmp -s far/frame_00002.png hud_off/frame_00002.png"), 1);
    assert_int_equal(run("%s --eye 0,0,40 --out x", common), 2);
    one_line();
    assert_non_null(strstr(g_err, "give both --eye and --target"));
    assert_false(exists("x"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_ffmpeg),     cmocka_unit_test(test_trailer_fails),
        cmocka_unit_test(test_full_disk),     cmocka_unit_test(test_signal_replay),
        cmocka_unit_test(test_default_video), cmocka_unit_test(test_hud_headless),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
