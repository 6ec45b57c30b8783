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
#include "app/outdir.h"
#include "app/overlay.h"
#include "app/video.h"
#include "shoal/render.h"
#include "support/json.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
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

/* The frames DIR/manifest.json lists (list_frames): each entry's file must be the name step
 * gives its step, and be there. */
static long list_manifest(const opt_values *o, const char *dir, const char *mpath,
                          replay_frame **out, long long *count)
{
    json_value m;
    char err[4400];
    if (json_load_file(mpath, JSON_STRICT, &m, err, sizeof err) != JSON_OK) {
        options_fail(o, "--in %s: %s", dir, err);
        return -1;
    }
    const json_value *fmt = json_get(&m, "format"), *frames = json_get(&m, "frames");
    const json_value *cnt = json_get(&m, "count");
    const char *why = NULL;
    if (!frames || frames->type != JSON_ARRAY || !cnt || cnt->type != JSON_NUMBER ||
        !(cnt->num >= 1) || cnt->num != floor(cnt->num) || cnt->num > 1e12 || !fmt ||
        fmt->type != JSON_STRING)
        why = "not a trajectory manifest (format, count, frames)";
    else if (strcmp(fmt->str, "npy") != 0) {
        options_fail(o,
                     "--in %s: a trajectory of format '%s' (manifest.json): replay draws .npy "
                     "states (step --out-dir without --format vtk)",
                     dir, fmt->str);
        json_free(&m);
        return -1;
    }
    size_t n = why ? 0 : (size_t)frames->count;
    replay_frame *v = n ? calloc(n, sizeof *v) : NULL;
    if (n && !v)
        why = "out of memory for its frame list";
    for (size_t i = 0; i < n && !why; i++) {
        const json_value *f = &frames->items[i];
        const json_value *st = json_get(f, "step"), *file = json_get(f, "file");
        long long step;
        if (!st || st->type != JSON_NUMBER || !file || file->type != JSON_STRING ||
            !(st->num >= 0) || st->num != floor(st->num) || st->num > 1e17 ||
            strlen(file->str) >= sizeof v[i].name ||
            !app_frame_step(file->str, "state_", ".npy", &step) || step != (long long)st->num) {
            why = "a frame entry is not {step, file: state_NNNNNN.npy of that step}";
            break;
        }
        if (i > 0 && step <= v[i - 1].step) {
            why = "its frames are not in increasing step order";
            break;
        }
        v[i].step = step;
        snprintf(v[i].name, sizeof v[i].name, "%s", file->str);
        char p[4400];
        struct stat fst;
        snprintf(p, sizeof p, "%s/%s", dir, file->str);
        if (stat(p, &fst) != 0) {
            options_fail(o, "--in %s: %s lists %s, which is missing: %s", dir, mpath, file->str,
                         strerror(errno));
            free(v);
            json_free(&m);
            return -1;
        }
    }
    if (!why && n == 0)
        why = "it lists no frames";
    if (why) {
        options_fail(o, "--in %s: %s: %s", dir, mpath, why);
        free(v);
        json_free(&m);
        return -1;
    }
    *count = (long long)cnt->num;
    json_free(&m);
    *out = v;
    return (long)n;
}

/* The frames of a trajectory directory: the manifest's list when DIR/manifest.json exists
 * (step --out-dir writes it last, naming exactly the frames of its run: a frame it does not
 * list is another run's), else the files named state_NNNNNN.npy exactly as step names them
 * (state_5.npy or state_+10.npy are not frames). *count is the manifest's boid count (0
 * without one). Returns the frame count, or -1 after printing the problem. */
static long list_frames(const opt_values *o, const char *dir, replay_frame **out, long long *count)
{
    *out = NULL;
    *count = 0;
    char mpath[4200];
    snprintf(mpath, sizeof mpath, "%s/manifest.json", dir);
    struct stat mst;
    if (stat(mpath, &mst) == 0)
        return list_manifest(o, dir, mpath, out, count);
    DIR *d = opendir(dir);
    if (!d) {
        options_fail(o, "--in %s: cannot read the directory: %s", dir, strerror(errno));
        return -1;
    }
    size_t n = 0, cap = 0;
    replay_frame *v = NULL;
    struct dirent *de;
    while ((de = readdir(d))) {
        long long step;
        if (strlen(de->d_name) >= sizeof v->name ||
            !app_frame_step(de->d_name, "state_", ".npy", &step))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            replay_frame *g = realloc(v, cap * sizeof *v);
            if (!g) {
                free(v);
                closedir(d);
                options_fail(o, "out of memory for the frame list of %s", dir);
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

/* A replay's --out DIR holds frame_NNNNNN.png: another replay's are refused unless
 * --overwrite (then replaced, all of them). */
static int replay_owns(const char *name)
{
    long long step;
    return app_frame_step(name, "frame_", ".png", &step);
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
    const char *dir = options_get(o, "in"), *out = options_out(o); /* '-': none */
    const char *video = options_get(o, "video");
    int follow = options_given(o, "follow");
    double fps = 30;
    int rc;
    if (options_given(o, "scene"))
        return options_fail(o, "--scene is for a single state, not a replay of %s", dir);
    /* the world (--set): a torus's fish across its seams, followed by the circular mean */
    shoal_world world;
    if ((rc = app_render_world(o, &world)))
        return rc;
    int boxed = world.size[0] > 0 || world.size[1] > 0 || world.size[2] > 0;
    if (app_world_drawn(&world) && !have_camera) {
        cam = shoal_render_camera_world(&world, (float)desc->width / (float)desc->height,
                                        desc->fish_length);
        have_camera = 1;
    }
    if (options_given(o, "fps") && (rc = options_double(o, "fps", 1e-3, 1000, &fps)))
        return rc;
    if (video) {
        size_t n = strlen(video);
        if (n < 5 || strcmp(video + n - 4, ".mp4") != 0)
            return options_fail(o, "--video: '%s' must end in .mp4", video);
    }
    replay_frame *frames;
    long long manifest_count;
    long nf = list_frames(o, dir, &frames, &manifest_count);
    if (nf < 0)
        return 2;
    if (nf == 0) {
        free(frames);
        return options_fail(o,
                            "--in %s: no state_NNNNNN.npy files (shoal step --out-dir "
                            "writes them)",
                            dir);
    }
    shoal_error e;
    /* the video first: a missing ffmpeg is refused before --out's directory is made */
    app_video *vd = NULL;
    if (video && video_open(&vd, video, desc->width, desc->height, fps, &e)) {
        free(frames);
        options_fail(o, "--video: %s", e.message);
        return app_exit_code(e.status);
    }
    /* --out DIR: one owner (a lock), another replay's frames refused unless --overwrite,
     * the frames staged and moved in only when the whole replay succeeded */
    app_outdir od;
    if (out && app_outdir_open(&od, "--out", out, replay_owns, options_given(o, "overwrite"), &e)) {
        shoal_error ve;
        video_close(vd, 0, &ve);
        free(frames);
        return app_fail_status(o, &e);
    }
    shoal_renderer *r = NULL;
    uint32_t *over = boxed ? malloc((size_t)desc->width * (size_t)desc->height * 4) : NULL;
    shoal_status cst =
        boxed && !over
            ? shoal_error_set(&e, SHOAL_ERR_NOMEM, "out of memory for the box's overlay")
            : app_render_create(desc, options_given(o, "mesh") ? options_get(o, "mesh") : NULL,
                                options_given(o, "lod-mesh") ? options_get(o, "lod-mesh") : NULL,
                                &r, &e);
    if (!cst)
        cst = shoal_render_set_world(r, &world, &e);
    if (cst) {
        shoal_render_destroy(r);
        free(over);
        shoal_error ve;
        video_close(vd, 0, &ve);
        if (out)
            app_outdir_close(&od, 1);
        free(frames);
        options_fail(o, "%s", e.message);
        return app_exit_code(e.status);
    }
    /* the writer thread writes the PNGs (as shoal render writes them: each the bytes of
     * `shoal render` of that state) and feeds ffmpeg while the next state is drawn */
    frame_out *fo = NULL;
    if (frame_out_open(&fo, desc->width, desc->height, 0, vd, &e)) {
        if (out)
            app_outdir_close(&od, 1);
        free(over);
        shoal_render_destroy(r);
        free(frames);
        options_fail(o, "%s", e.message);
        return app_exit_code(e.status);
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
        if (manifest_count > 0 && (long long)n != manifest_count) {
            rc = options_fail(o, "%s: %zu boids, but %s/manifest.json says %lld", path, n, dir,
                              manifest_count);
            break;
        }
        if (f == 0 && !have_camera)
            shoal_render_camera_frame(inst.px, inst.py, inst.pz, n, desc->fish_length,
                                      (float)desc->width / (float)desc->height, &cam);
        if (f == 0)
            for (int k = 0; k < 3; k++)
                offset[k] = cam.eye[k] - cam.target[k];
        if (follow && app_world_drawn(&world)) {
            const float *const pp[3] = {inst.px, inst.py, inst.pz};
            app_world_centre(&world, pp, n, cam.target);
            for (int k = 0; k < 3; k++)
                cam.eye[k] = cam.target[k] + offset[k];
        } else if (follow) {
            centre(&inst, cam.target);
            for (int k = 0; k < 3; k++)
                cam.eye[k] = cam.target[k] + offset[k];
        }
        if (shoal_render_frame(r, &inst, &cam, &e)) {
            rc = options_fail(o, "%s: %s", path, e.message);
            break;
        }
        shoal_framebuffer fb = shoal_render_framebuffer(r);
        const uint32_t *img = fb.argb;
        int img_stride = fb.stride_px;
        if (over) { /* the world's box over the frame */
            canvas cv = {over, fb.width, fb.height, fb.width};
            for (int y = 0; y < fb.height; y++)
                memcpy(over + (size_t)y * (size_t)fb.width,
                       fb.argb + (size_t)y * (size_t)fb.stride_px, (size_t)fb.width * 4);
            proj p = proj_make_world(&cam, fb.width, fb.height, &world);
            overlay_world_box(&cv, &p, &world, OVERLAY_BOX_RGB, 200);
            img = over;
            img_stride = fb.width;
        }
        char png[4400];
        if (out)
            snprintf(png, sizeof png, "%s/frame_%06lld.png", od.stage, frames[f].step);
        if (frame_out_submit(fo, img, img_stride, out ? png : NULL, &e)) {
            if (out)
                app_message_rename(&e, od.stage, out);
            rc = options_fail(o, "%s", e.message);
            break;
        }
        progress_update(&pg, f + 1, 0);
    }
    progress_end(&pg);
    /* every frame written, the video checked and renamed (or, after a failure, dropped) */
    if (frame_out_close(fo, rc == 0, NULL, &e) && !rc) {
        if (out)
            app_message_rename(&e, od.stage, out);
        rc = app_fail_status(o, &e);
    }
    if (out) {
        /* the frames go in only once the video (if any) is written too */
        if (!rc && app_outdir_commit(&od, NULL, &e))
            rc = app_fail_status(o, &e);
        app_outdir_close(&od, rc != 0);
    }
    free(soa);
    free(frames);
    free(over);
    shoal_render_destroy(r);
    return rc;
}
