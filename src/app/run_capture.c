/* SPDX-License-Identifier: MIT */
/* `shoal run`: output. Screenshots, PNG frames and the ffmpeg pipe of --video (a temporary
 * renamed into place on success), and the headless loop that steps, draws and writes them
 * (under MPI: every rank steps and draws, rank 0 writes). */
#include "app/app.h"
#include "app/options.h"
#include "app/run_app.h"

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

/* Single-quote a string for /bin/sh. */
static void sh_quote(char *out, size_t size, const char *s)
{
    size_t n = 0;
    if (size < 3)
        return;
    out[n++] = '\'';
    for (; *s && n + 5 < size; s++) {
        if (*s == '\'') {
            memcpy(out + n, "'\\''", 4);
            n += 4;
        } else {
            out[n++] = *s;
        }
    }
    out[n++] = '\'';
    out[n] = 0;
}

typedef struct video {
    FILE *pipe;
    char path[2048], tmp[2100];
} video;

static int video_open(video *vd, const char *path, int w, int h, double fps)
{
    memset(vd, 0, sizeof *vd);
    if (system("ffmpeg -version > /dev/null 2>&1") != 0) {
        fprintf(stderr, "shoal run: ffmpeg not found: install it (apt-get install ffmpeg) or "
                        "use --out DIR\n");
        return 2;
    }
    snprintf(vd->path, sizeof vd->path, "%s", path);
    const char *slash = strrchr(path, '/');
    if (slash)
        snprintf(vd->tmp, sizeof vd->tmp, "%.*s/.%s.tmp.%d", (int)(slash - path), path, slash + 1,
                 (int)getpid());
    else
        snprintf(vd->tmp, sizeof vd->tmp, ".%s.tmp.%d", path, (int)getpid());
    char q[4400], cmd[5000];
    sh_quote(q, sizeof q, vd->tmp);
    app_signal_temp(vd->tmp);
    /* ARGB8888 words in little-endian memory are the bytes B G R A: ffmpeg's bgra. H.264
     * in yuv420p needs even sides: pad by one pixel when odd. */
    snprintf(cmd, sizeof cmd,
             "ffmpeg -nostdin -hide_banner -loglevel error -y -f rawvideo -pixel_format bgra "
             "-video_size %dx%d -framerate %g -i - -vf 'pad=ceil(iw/2)*2:ceil(ih/2)*2' "
             "-c:v libx264 -preset veryfast -crf 20 -pix_fmt yuv420p -movflags +faststart "
             "-f mp4 %s",
             w, h, fps, q);
    signal(SIGPIPE, SIG_IGN);
    vd->pipe = popen(cmd, "w");
    if (!vd->pipe) {
        fprintf(stderr, "shoal run: cannot start ffmpeg: %s\n", strerror(errno));
        return 2;
    }
    return 0;
}

static int video_write(video *vd, const canvas *cv)
{
    for (int y = 0; y < cv->h; y++)
        if (fwrite(cv->px + (size_t)y * (size_t)cv->stride, 4, (size_t)cv->w, vd->pipe) !=
            (size_t)cv->w)
            return -1;
    return 0;
}

/* Finish the video: rename into place when everything went well, else remove it. */
static int video_close(video *vd, int ok)
{
    if (!vd->pipe)
        return 0;
    int st = pclose(vd->pipe);
    vd->pipe = NULL;
    app_signal_temp(NULL);
    if (ok && st == 0 && rename(vd->tmp, vd->path) == 0) {
        printf("shoal run: wrote %s\n", vd->path);
        return 0;
    }
    unlink(vd->tmp);
    if (ok)
        options_error("run", "ffmpeg failed (status %d): %s not written", st, vd->path);
    return 2;
}

/* ---- headless -------------------------------------------------------------------------- */

int run_headless(app *a)
{
    int rc = 0;
    const run_cfg *c = &a->cfg;
    /* under MPI rank 0 writes the frames and the video; every rank steps and draws */
    const int writer = a->ranks == 1 || mpi_rank() == 0;
    shoal_error me;
    if (writer && c->out_dir && mkdir_p(c->out_dir) != 0) {
        options_error("run", "--out %s: cannot create the directory: %s", c->out_dir,
                      strerror(errno));
        rc = 2;
    }
    if (a->ranks > 1 && mpi_agree(rc ? shoal_error_set(&me, SHOAL_ERR_IO, "--out") : SHOAL_OK, &me))
        rc = 2;
    if (rc)
        return rc;
    video vd;
    memset(&vd, 0, sizeof vd);
    int spf = c->steps_per_frame > 0 ? c->steps_per_frame : 1;
    if (writer && c->video)
        rc = video_open(&vd, c->video, c->width, c->height, 1.0 / (a->desc.dt_s * spf));
    if (a->ranks > 1 &&
        mpi_agree(rc ? shoal_error_set(&me, SHOAL_ERR_IO, "--video") : SHOAL_OK, &me))
        rc = rc ? rc : 2;
    if (rc) {
        video_close(&vd, 0);
        return rc;
    }
    canvas cv;
    cv.w = c->width;
    cv.h = c->height;
    cv.stride = c->width;
    cv.px = malloc((size_t)cv.w * (size_t)cv.h * 4);
    if (!cv.px) {
        video_close(&vd, 0);
        fprintf(stderr, "shoal run: out of memory for a %dx%d frame\n", cv.w, cv.h);
        return 2;
    }
    signal(SIGINT, run_on_signal);
    signal(SIGTERM, run_on_signal);
    a->t_start = a->hud_since = run_now_s();
    long long frames_written = 0;
    for (long long f = 0; f < c->frames; f++) {
        /* under MPI every rank stops at the same frame (a signal may reach one first) */
        if (a->ranks > 1 ? mpi_any(run_interrupted != 0) : run_interrupted)
            break;
        double t0 = run_now_s();
        if ((rc = run_sim_steps(a, spf)))
            break;
        if ((rc = run_draw_frame(a, &cv, 1)))
            break;
        double t1 = run_now_s();
        if (!writer) {
            /* rank 0's output may fail: every rank stops with it */
            if (mpi_any(0)) {
                rc = 2;
                break;
            }
        } else if (c->out_dir) {
            char path[4200];
            snprintf(path, sizeof path, "%s/frame_%05lld.png", c->out_dir, f);
            shoal_error e;
            if (shoal_io_png_write(path, cv.px, cv.w, cv.h, cv.stride, &e)) {
                fprintf(stderr, "shoal run: %s\n", e.message);
                rc = 2;
            } else {
                frames_written = f + 1;
            }
        }
        if (writer && !rc && vd.pipe && video_write(&vd, &cv)) {
            fprintf(stderr, "shoal run: writing to ffmpeg failed (it exited?)\n");
            rc = 2;
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
    /* A failed run leaves no frames, as it leaves no video (an interrupted one keeps them). */
    for (long long f = 0; rc && rc != 130 && f < frames_written; f++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/frame_%05lld.png", c->out_dir, f);
        unlink(path);
    }
    int vrc = video_close(&vd, rc == 0);
    if (!rc)
        rc = vrc;
    free(cv.px);
    if (c->out_dir && !rc)
        printf("shoal run: wrote %lld frames to %s/frame_NNNNN.png\n", c->frames, c->out_dir);
    run_print_summary(a, "headless");
    return rc;
}
