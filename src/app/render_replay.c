/* SPDX-License-Identifier: MIT */
/* `shoal render --in DIR`: replay a stored trajectory (DIR/state_NNNNNN.npy, as `shoal step
 * --out-dir` writes it) frame by frame without simulating: PNGs into --out DIR2 (frame_NNNNNN
 * .png, the state's step number) and/or an H.264 --video through ffmpeg. The camera is
 * render's (given, or framing the first state) and stays put, or follows the school's centre
 * with --follow. A frame is the image `shoal render` draws of that state with that camera.
 * Owns only the replay loop; options are cmd_render.c's. */
#include "app/app.h"
#include "app/options.h"
#include "app/traj.h"
#include "shoal/render.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct replay_frame {
    long long step;
    char name[64];
} replay_frame;

static int frame_cmp(const void *a, const void *b)
{
    long long x = ((const replay_frame *)a)->step, y = ((const replay_frame *)b)->step;
    return x < y ? -1 : x > y;
}

/* The state_NNNNNN.npy files of `dir`, by step. Returns the count, -1 when unreadable. */
static long list_frames(const char *dir, replay_frame **out)
{
    *out = NULL;
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    size_t n = 0, cap = 0;
    replay_frame *v = NULL;
    struct dirent *de;
    while ((de = readdir(d))) {
        long long step;
        int used = 0;
        size_t len = strlen(de->d_name);
        if (len >= 64 || sscanf(de->d_name, "state_%lld.npy%n", &step, &used) != 1 ||
            (size_t)used != len || step < 0)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            replay_frame *g = realloc(v, cap * sizeof *v);
            if (!g) {
                free(v);
                closedir(d);
                return -1;
            }
            v = g;
        }
        v[n].step = step;
        snprintf(v[n].name, sizeof v[n].name, "%s", de->d_name);
        n++;
    }
    closedir(d);
    if (n > 1) /* qsort's pointer must not be NULL, even for no elements */
        qsort(v, n, sizeof *v, frame_cmp);
    *out = v;
    return (long)n;
}

/* ---- ffmpeg (as shoal run --video: H.264, yuv420p, odd sides padded) ----------------- */

typedef struct replay_video {
    FILE *pipe;
    char path[4096], tmp[4200];
} replay_video;

static int video_open(const opt_values *o, replay_video *vd, const char *path, int w, int h,
                      double fps)
{
    memset(vd, 0, sizeof *vd);
    if (system("ffmpeg -version > /dev/null 2>&1") != 0)
        return options_fail(o, "--video: ffmpeg not found: install it (apt-get install ffmpeg) "
                               "or use --out DIR");
    snprintf(vd->path, sizeof vd->path, "%s", path);
    const char *slash = strrchr(path, '/');
    if (slash)
        snprintf(vd->tmp, sizeof vd->tmp, "%.*s/.%s.tmp.%d", (int)(slash - path), path, slash + 1,
                 (int)getpid());
    else
        snprintf(vd->tmp, sizeof vd->tmp, ".%s.tmp.%d", path, (int)getpid());
    /* single-quote the temporary name for /bin/sh */
    char q[9000], cmd[9600];
    size_t k = 0;
    q[k++] = '\'';
    for (const char *s = vd->tmp; *s && k + 6 < sizeof q; s++) {
        if (*s == '\'') {
            memcpy(q + k, "'\\''", 4);
            k += 4;
        } else {
            q[k++] = *s;
        }
    }
    q[k++] = '\'';
    q[k] = 0;
    snprintf(cmd, sizeof cmd,
             "ffmpeg -nostdin -hide_banner -loglevel error -y -f rawvideo -pixel_format bgra "
             "-video_size %dx%d -framerate %g -i - -vf 'pad=ceil(iw/2)*2:ceil(ih/2)*2' "
             "-c:v libx264 -preset veryfast -crf 20 -pix_fmt yuv420p -movflags +faststart "
             "-f mp4 %s",
             w, h, fps, q);
    signal(SIGPIPE, SIG_IGN);
    vd->pipe = popen(cmd, "w");
    if (!vd->pipe)
        return options_fail(o, "--video: cannot start ffmpeg: %s", strerror(errno));
    return 0;
}

static int video_close(const opt_values *o, replay_video *vd, int ok)
{
    if (!vd->pipe)
        return 0;
    int st = pclose(vd->pipe);
    vd->pipe = NULL;
    if (ok && st == 0 && rename(vd->tmp, vd->path) == 0)
        return 0;
    unlink(vd->tmp);
    return ok ? options_fail(o, "--video: ffmpeg failed (status %d): %s not written", st, vd->path)
              : 2;
}

/* ---- the replay ------------------------------------------------------------------------ */

static int load_soa(const char *path, float **soa, size_t *n, shoal_render_instances *inst,
                    shoal_error *e)
{
    float *rows;
    shoal_status st = shoal_io_npy_read(path, &rows, n, e);
    if (!st)
        st = shoal_state_check_finite(rows, *n, path, e);
    if (st) {
        free(rows);
        return st;
    }
    free(*soa);
    *soa = malloc(*n * 6 * sizeof(float));
    if (!*soa) {
        free(rows);
        return shoal_error_set(e, SHOAL_ERR_NOMEM, "%s: out of memory for %zu fish", path, *n);
    }
    float *c[6];
    for (int k = 0; k < 6; k++)
        c[k] = *soa + (size_t)k * *n;
    for (size_t i = 0; i < *n; i++)
        for (int k = 0; k < 6; k++)
            c[k][i] = rows[i * 6 + (size_t)k];
    free(rows);
    memset(inst, 0, sizeof *inst);
    inst->count = *n;
    inst->px = c[0];
    inst->py = c[1];
    inst->pz = c[2];
    inst->vx = c[3];
    inst->vy = c[4];
    inst->vz = c[5];
    return SHOAL_OK;
}

/* The centre of the finite positions, summed in row order in double. */
static void centre(const shoal_render_instances *in, float c[3])
{
    double s[3] = {0, 0, 0};
    for (size_t i = 0; i < in->count; i++) {
        s[0] += in->px[i];
        s[1] += in->py[i];
        s[2] += in->pz[i];
    }
    for (int k = 0; k < 3; k++)
        c[k] = in->count ? (float)(s[k] / (double)in->count) : 0.0f;
}

int app_render_replay(const opt_values *o, const shoal_render_desc *desc, shoal_camera cam,
                      int have_camera)
{
    const char *dir = options_get(o, "in"), *out = options_get(o, "out");
    const char *video = options_get(o, "video");
    int follow = options_given(o, "follow");
    double fps = 30;
    int rc;
    if (options_given(o, "fps") && (rc = options_double(o, "fps", 1e-3, 1000, &fps)))
        return rc;
    if (options_given(o, "scene"))
        return options_fail(o, "--scene is for a single state, not a replay of %s", dir);
    if (video) {
        size_t n = strlen(video);
        if (n < 5 || strcmp(video + n - 4, ".mp4") != 0)
            return options_fail(o, "--video: '%s' must end in .mp4", video);
    }
    replay_frame *frames;
    long nf = list_frames(dir, &frames);
    if (nf < 0)
        return options_fail(o, "--in %s: cannot read the directory: %s", dir, strerror(errno));
    if (nf == 0) {
        free(frames);
        return options_fail(o,
                            "--in %s: no state_NNNNNN.npy files (shoal step --out-dir "
                            "writes them)",
                            dir);
    }
    shoal_error e;
    if (out && traj_mkdir(out, &e)) {
        free(frames);
        return options_fail(o, "--out %s", e.message);
    }
    shoal_renderer *r;
    if (app_render_create(desc, options_given(o, "mesh") ? options_get(o, "mesh") : NULL,
                          options_given(o, "lod-mesh") ? options_get(o, "lod-mesh") : NULL, &r,
                          &e)) {
        free(frames);
        options_fail(o, "%s", e.message);
        return app_exit_code(e.status);
    }
    replay_video vd;
    memset(&vd, 0, sizeof vd);
    if (video && (rc = video_open(o, &vd, video, desc->width, desc->height, fps))) {
        shoal_render_destroy(r);
        free(frames);
        return rc;
    }
    progress pg;
    progress_begin(&pg, "shoal render", nf, options_given(o, "quiet"));
    float *soa = NULL, offset[3] = {0, 0, 0};
    rc = 0;
    for (long f = 0; f < nf && !rc; f++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, frames[f].name);
        size_t n;
        shoal_render_instances inst;
        if (load_soa(path, &soa, &n, &inst, &e)) {
            rc = options_fail(o, "%s", e.message);
            break;
        }
        if (f == 0 && !have_camera)
            shoal_render_camera_frame(inst.px, inst.py, inst.pz, n, desc->fish_length,
                                      (float)desc->width / (float)desc->height, &cam);
        if (f == 0)
            for (int k = 0; k < 3; k++)
                offset[k] = cam.eye[k] - cam.target[k];
        if (follow) {
            centre(&inst, cam.target);
            for (int k = 0; k < 3; k++)
                cam.eye[k] = cam.target[k] + offset[k];
        }
        if (shoal_render_frame(r, &inst, &cam, &e)) {
            rc = options_fail(o, "%s: %s", path, e.message);
            break;
        }
        shoal_framebuffer fb = shoal_render_framebuffer(r);
        if (out) {
            char png[4200];
            snprintf(png, sizeof png, "%s/frame_%06lld.png", out, frames[f].step);
            if (shoal_io_png_write(png, fb.argb, fb.width, fb.height, fb.stride_px, &e)) {
                rc = options_fail(o, "%s", e.message);
                break;
            }
        }
        if (vd.pipe)
            for (int y = 0; y < fb.height && !rc; y++)
                if (fwrite(fb.argb + (size_t)y * (size_t)fb.stride_px, 4, (size_t)fb.width,
                           vd.pipe) != (size_t)fb.width)
                    rc = options_fail(o, "--video: writing to ffmpeg failed (it exited?)");
        progress_update(&pg, f + 1, 0);
    }
    progress_end(&pg);
    int vrc = video_close(o, &vd, rc == 0);
    if (!rc)
        rc = vrc;
    free(soa);
    free(frames);
    shoal_render_destroy(r);
    return rc;
}
