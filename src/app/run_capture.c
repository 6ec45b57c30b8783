/* SPDX-License-Identifier: MIT */
/* `shoal run`: output. Screenshots, and the headless loop that steps, draws and hands each
 * frame to the writer thread of video.h (PNG frames and/or the ffmpeg video, a temporary
 * checked and renamed into place on success); under MPI every rank steps and draws, rank 0
 * writes. */
#include "app/app.h"
#include "app/options.h"
#include "app/outdir.h"
#include "app/run_app.h"
#include "app/video.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- screenshots and output ------------------------------------------------------------ */

static int mkdir_p(const char *dir)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", dir);
    for (char *p = tmp + 1; *p; p++) {
        if (*p == '/') {
            *p = 0;
            if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    }
    if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
        return -1;
    struct stat sb;
    return stat(tmp, &sb) == 0 && S_ISDIR(sb.st_mode) ? 0 : -1;
}

void run_screenshot(app *a, const canvas *cv)
{
    char path[1100];
    if (a->shot_path[0]) {
        snprintf(path, sizeof path, "%s", a->shot_path);
    } else {
        time_t now = time(NULL);
        struct tm tmv;
        localtime_r(&now, &tmv);
        char stamp[32];
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tmv);
        snprintf(path, sizeof path, "shoal-%s-%03d.png", stamp, a->shot_counter++);
    }
    shoal_error e;
    if (shoal_io_png_write(path, cv->px, cv->w, cv->h, cv->stride, &e))
        run_set_status(a, "screenshot failed: %s", e.message);
    else
        run_set_status(a, "screenshot: %s (%dx%d)", path, cv->w, cv->h);
    a->shot_path[0] = 0;
    a->shot_requested = 0;
}

/* ---- headless -------------------------------------------------------------------------- */

/* The HUD headless: the font of the window, opened without one (once a run). */
static void headless_font(app *a)
{
    if (!a->hud || a->own_font || (a->ranks > 1 && mpi_rank() != 0))
        return;
    a->own_font = font_open(15);
    a->font = a->own_font;
    memset(&a->winfo, 0, sizeof a->winfo);
    a->winfo.present_path = a->cfg.video ? "headless, video" : "headless";
    a->winfo.font_path = font_path(a->font);
    font_cell(a->font, &a->winfo.char_w, &a->winfo.char_h);
}

int run_frames_owns(const char *name)
{
    size_t n = strlen(name), digits = 0;
    if (n < 10 || strncmp(name, "frame_", 6) != 0 || strcmp(name + n - 4, ".png") != 0)
        return 0;
    for (size_t i = 6; i < n - 4; i++, digits++)
        if (name[i] < '0' || name[i] > '9')
            return 0;
    return digits >= 5;
}

int run_headless(app *a)
{
    int rc = 0;
    const run_cfg *c = &a->cfg;
    /* under MPI rank 0 writes the frames and the video; every rank steps and draws */
    const int writer = a->ranks == 1 || mpi_rank() == 0;
    shoal_error me, e;
    /* the video first: a missing ffmpeg is refused before --out's directory is made */
    app_video *video = NULL;
    if (writer && c->video_default && mkdir_p("out") != 0) {
        options_error("run", "out: cannot create the directory: %s", strerror(errno));
        rc = 2;
    }
    if (!rc && writer && c->video &&
        video_open(&video, c->video, c->width, c->height, c->fps, &e)) {
        options_error("run", "--video: %s", e.message);
        rc = 2;
    }
    /* --out DIR: its lock (a second run into it is refused), another run's frames refused
     * unless --overwrite, the frames written into its staging directory and moved in when
     * the run ends (an interrupted run keeps the frames it made; a failed one none) */
    app_outdir od;
    int have_od = 0;
    if (!rc && writer && c->out_dir) {
        if (app_outdir_open(&od, "--out", c->out_dir, run_frames_owns, c->out_overwrite, &e)) {
            fprintf(stderr, "shoal run: %s\n", e.message);
            rc = 2;
        } else {
            have_od = 1;
        }
    }
    frame_out *fo = NULL;
    if (!rc && writer && (c->out_dir || video)) {
        shoal_status fst = frame_out_open(&fo, c->width, c->height, 1, video, &e);
        video = NULL; /* fo owns it (and closed it when it failed) */
        if (fst) {
            options_error("run", "%s", e.message);
            rc = 2;
        }
    }
    if (a->ranks > 1 &&
        mpi_agree(rc ? shoal_error_set(&me, SHOAL_ERR_IO, "--out/--video") : SHOAL_OK, &me))
        rc = rc ? rc : 2;
    if (rc) {
        video_close(video, 0, &e);
        frame_out_close(fo, 0, NULL, &e);
        if (have_od)
            app_outdir_close(&od, 1);
        return rc;
    }
    int spf = c->steps_per_frame > 0 ? c->steps_per_frame : 1;
    canvas cv;
    cv.w = c->width;
    cv.h = c->height;
    cv.stride = c->width;
    cv.px = malloc((size_t)cv.w * (size_t)cv.h * 4);
    if (!cv.px) {
        frame_out_close(fo, 0, NULL, &e);
        if (have_od)
            app_outdir_close(&od, 1);
        fprintf(stderr, "shoal run: out of memory for a %dx%d frame\n", cv.w, cv.h);
        return 2;
    }
    headless_font(a);
    signal(SIGINT, run_on_signal);
    signal(SIGTERM, run_on_signal);
    a->t_start = a->hud_since = run_now_s();
    long long frames_submitted = 0;
    for (long long f = 0; f < c->frames; f++) {
        /* under MPI every rank stops at the same frame (a signal may reach one first) */
        if (a->ranks > 1 ? mpi_any(run_interrupted != 0) : run_interrupted)
            break;
        double t0 = run_now_s();
        if ((rc = run_sim_steps(a, spf)))
            break;
        run_camera_update(a, spf * a->desc.dt_s);
        if ((rc = run_draw_frame(a, &cv, 1)))
            break;
        double t1 = run_now_s();
        if (!writer) {
            /* rank 0's output may fail: every rank stops with it */
            if (mpi_any(0)) {
                rc = 2;
                break;
            }
        } else if (fo) {
            char path[sizeof od.stage + 64];
            if (have_od)
                snprintf(path, sizeof path, "%s/frame_%05lld.png", od.stage, f);
            if (frame_out_submit(fo, cv.px, cv.stride, have_od ? path : NULL, &e)) {
                if (have_od)
                    app_message_rename(&e, od.stage, c->out_dir);
                fprintf(stderr, "shoal run: %s\n", e.message);
                rc = 2;
            }
            frames_submitted = f + 1;
        }
        if (writer && a->ranks > 1)
            mpi_any(rc != 0);
        if (rc)
            break;
        double t2 = run_now_s();
        run_time_add(&a->win_t, T_OUTPUT, (t2 - t1) * 1e3);
        run_time_add(&a->win_t, T_FRAME, (t2 - t0) * 1e3);
        a->win_t.frames++;
        run_stats_roll(a, 0);
    }
    if (run_interrupted && !rc) {
        fprintf(stderr, "shoal run: interrupted\n");
        rc = 130;
    }
    /* every frame written (the writer thread's queue emptied), the video checked and renamed */
    double t_close = run_now_s();
    int vrc = 0;
    if (fo && frame_out_close(fo, rc == 0, &a->out_busy_ms, &e)) {
        if (!rc)
            fprintf(stderr, "shoal run: %s\n", e.message);
        vrc = 2;
    }
    a->total.ms[T_OUTPUT] += (run_now_s() - t_close) * 1e3;
    if (!rc)
        rc = vrc;
    /* A failed run leaves no frames, as it leaves no video; an interrupted one keeps them. */
    (void)frames_submitted;
    if (have_od) {
        if ((rc == 0 || rc == 130) && app_outdir_commit(&od, NULL, &e)) {
            fprintf(stderr, "shoal run: %s\n", e.message);
            rc = 2;
        }
        app_outdir_close(&od, rc != 0 && rc != 130);
    }
    free(cv.px);
    if (writer && c->video && !rc)
        printf("shoal run: wrote %s (%lld frames, %g fps)\n", c->video, c->frames, c->fps);
    if (writer && c->out_dir && !rc)
        printf("shoal run: wrote %lld frames to %s/frame_NNNNN.png\n", c->frames, c->out_dir);
    run_print_summary(a, "headless");
    return rc;
}
