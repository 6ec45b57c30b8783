/* SPDX-License-Identifier: MIT */
/* `shoal run`: the interactive program's entry point. Owns its options (the table, --help,
 * parsing into run_cfg, the scene that --scene/--model/--count/--seed/--set describe) and the
 * order of a run: window or headless, the app state set up (run_sim.c), the loop run
 * (run_window.c or run_capture.c), the trace and the summary. The app state and the files
 * that share it are described in run_app.h. */
#include "app/app.h"
#include "app/options.h"
#include "app/outdir.h"
#include "app/run_app.h"
#include "app/video.h"
#include "shoal/profile.h"
#include "shoal/system.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- options --------------------------------------------------------------------------- */

static const opt_spec run_specs[] = {
    {"scene", OPT_VALUE, "FILE.ini", "assets/scenes/school.ini; with --model, MODEL.ini",
     "scene file: model, parameters, count, seed, camera, fish length"},
    {"model", OPT_VALUE, "M", "the default scene's (" OPT_MODEL_DEFAULT ")",
     APP_MODEL_HELP " (its scene, assets/scenes/MODEL.ini)"},
    {"count", OPT_VALUE, "N", "the scene's (school: 4096)",
     "number of fish; walls, start region and camera are scaled by cbrt(N / the scene's "
     "count) to keep the scene's density (--set wins)"},
    {"keep-geometry", OPT_FLAG, NULL, NULL,
     "with --count: keep the scene's walls, start region and camera as they are"},
    {"seed", OPT_VALUE, "S", "the scene's (1)", "seed of the initial state"},
    {"set", OPT_REPEAT, "NAME=VALUE", NULL, "set a model parameter (e.g. wall_size=58,58,58)"},
    {"size", OPT_VALUE, "WxH", "1280x720", "window / frame size in pixels"},
    {"threads", OPT_VALUE, "T", "0", "threads for simulation and rendering (0: all cores)"},
    {"simd", OPT_VALUE, "auto|scalar|avx2|avx512|neon", "auto",
     "ISA of force kernels and rasterizer"},
    {"backend", OPT_VALUE, "cpu|cuda", "cpu",
     "simulate on the CPU or on an NVIDIA GPU (the same bits; each frame shows the GPU's state)"},
    {"gpu-order", OPT_VALUE, "stable|atomic", "stable",
     "--backend cuda: order inside a cell (stable: the CPU's bits; atomic: seed 001's)"},
    {"headless", OPT_FLAG, NULL, NULL,
     "no window: write a video (--video) and/or PNG frames (--out), with the HUD drawn"},
    {"frames", OPT_VALUE, "K", "10 s of simulated time headless, unlimited in a window",
     "frames to run, then quit"},
    {"out", OPT_VALUE, "DIR", "out/frames headless when ffmpeg is missing",
     "headless: write DIR/frame_NNNNN.png ('-': draw the frames but keep none, for timing)"},
    {"overwrite", OPT_FLAG, NULL, NULL,
     "--out DIR: replace the frames of another run in DIR (else refused; the default "
     "out/frames is replaced)"},
    {"video", OPT_VALUE, "FILE.mp4", "out/shoal.mp4 headless when ffmpeg is there",
     "headless: encode the frames with ffmpeg (H.264)"},
    {"fps", OPT_VALUE, "F", "30",
     "headless: frames per second of the video; steps per frame follow it (real time) "
     "unless --steps-per-frame is given"},
    {"steps-per-frame", OPT_VALUE, "K", "0 in a window, real time at --fps headless (2)",
     "simulation steps per frame; 0: real time (fixed dt, steps follow the wall clock)"},
    {"speed", OPT_VALUE, "X", "1", "simulated seconds per wall second, 1/16..16 (keys [ ])"},
    {"vsync", OPT_VALUE, "on|off", "on",
     "wait for the display refresh (paced when the present "
     "path cannot); off: as fast as possible"},
    {"interp", OPT_VALUE, "on|off", "on", "draw positions extrapolated to the display time"},
    {"lod", OPT_VALUE, "on|off", "on", "level of detail: reduced mesh and splats when far"},
    {"shade", OPT_VALUE, "lit|id", "lit", "lit: lighting, fog, underwater gradient; id: ids"},
    {"fish-length", OPT_VALUE, "L", "the scene's, else 0.6", "length of a fish, world units"},
    {"eye", OPT_VALUE, "x,y,z", "the scene's camera (else framing the school)",
     "camera position (with --target)"},
    {"target", OPT_VALUE, "x,y,z", "the scene's camera", "point the camera looks at (up is +Y)"},
    {"hud", OPT_VALUE, "on|off", "on",
     "HUD at start (key i); headless frames have it too (it shows timings: off for frames "
     "that must repeat)"},
    {"grid", OPT_FLAG, NULL, NULL, "start in grid view (key g)"},
    {"trails", OPT_FLAG, NULL, NULL, "start with trails (key t)"},
    {"follow", OPT_FLAG, NULL, NULL,
     "start with the camera following the school (key f; the default scene does)"},
    {"stats", OPT_FLAG, NULL, NULL, "print the timings every half second as well as at the end"},
    {"trace", OPT_VALUE, "FILE.json", NULL,
     "write a Chrome trace of the run: a span per stage per thread per step and frame (the "
     "first 64 MiB of spans)"},
    {"script", OPT_VALUE, "FILE", NULL,
     "automation: lines 'frames N', 'key NAME', 'click X Y [B]', 'drag X0 Y0 X1 Y1 [B]', "
     "'wheel N', 'resize W H', 'minimize', 'restore', 'screenshot PATH', 'wait-key NAME S', "
     "'touch PATH', 'echo TEXT', 'quit'"},
};
#define RUN_SPEC_COUNT ((int)(sizeof run_specs / sizeof run_specs[0]))

static const char *run_usage =
    "[--scene F.ini] [--model M] [--count N] [--size WxH] [options]\n"
    "       shoal run --headless [--frames K] [--video FILE.mp4] [--out DIR] [options]\n\n"
    "Opens a window on the scene and lets you play with it (press h in the window for the\n"
    "keys). Without a display it runs headless: 10 s of simulated time into out/shoal.mp4\n"
    "(PNG frames in out/frames without ffmpeg). `shoal` with no arguments is `shoal run`.";

/* ---- command line ---------------------------------------------------------------------- */

static int parse_onoff(const opt_values *o, const char *name, int *out)
{
    const char *v = options_get(o, name);
    if (strcmp(v, "on") == 0)
        *out = 1;
    else if (strcmp(v, "off") == 0)
        *out = 0;
    else
        return options_fail(o, "--%s: '%s' is not on or off", name, v);
    return 0;
}

static int parse_cfg(const opt_values *o, run_cfg *c)
{
    memset(c, 0, sizeof *c);
    int rc;
    long long ll;
    double d;
    if ((rc = app_parse_size(o, &c->width, &c->height)))
        return rc;
    if ((rc = options_int(o, "threads", 0, SHOAL_MAX_THREADS, &ll)))
        return rc;
    c->threads = (int)ll;
    shoal_error e;
    if (shoal_isa_parse(options_get(o, "simd"), &c->isa, &e))
        return options_fail(o, "%s", e.message);
    const char *backend = options_get(o, "backend");
    if (strcmp(backend, "cuda") == 0)
        c->cuda = 1;
    else if (strcmp(backend, "cpu") != 0)
        return options_fail(o, "--backend: '%s' (expected cpu or cuda)", backend);
    if (shoal_gpu_order_parse(options_get(o, "gpu-order"), &c->gpu_order, &e))
        return options_fail(o, "--gpu-order: %s", e.message);
    if (c->cuda && shoal_gpu_available(&e))
        return options_fail(o, "--backend cuda: %s", e.message);
    c->headless = options_given(o, "headless");
    if (options_given(o, "frames")) {
        if ((rc = options_int(o, "frames", 1, 100000000, &c->frames)))
            return rc;
    }
    c->out_dir = options_given(o, "out") ? options_get(o, "out") : NULL;
    c->out_overwrite = options_given(o, "overwrite");
    c->video = options_given(o, "video") ? options_get(o, "video") : NULL;
    if (options_given(o, "fps") && (rc = options_double(o, "fps", 1e-3, 1000, &c->fps)))
        return rc;
    int has_eye = options_given(o, "eye"), has_target = options_given(o, "target");
    if (has_eye != has_target)
        return options_fail(o, "give both --eye and --target, or neither (the scene's camera)");
    if (has_eye) {
        if ((rc = options_vec3(o, "eye", c->eye)) || (rc = options_vec3(o, "target", c->target)))
            return rc;
        float dv[3] = {c->eye[0] - c->target[0], c->eye[1] - c->target[1],
                       c->eye[2] - c->target[2]};
        if (!(dv[0] * dv[0] + dv[1] * dv[1] + dv[2] * dv[2] > 0))
            return options_fail(o, "--eye and --target are the same point");
        c->has_view = 1;
    }
    if (options_given(o, "steps-per-frame")) {
        if ((rc = options_int(o, "steps-per-frame", 0, 1000, &ll)))
            return rc;
        c->steps_per_frame = (int)ll;
    }
    if ((rc = options_double(o, "speed", 1.0 / 16, 16, &c->speed)))
        return rc;
    if ((rc = parse_onoff(o, "vsync", &c->vsync)) || (rc = parse_onoff(o, "interp", &c->interp)) ||
        (rc = parse_onoff(o, "lod", &c->lod)) || (rc = parse_onoff(o, "hud", &c->hud)))
        return rc;
    const char *shade = options_get(o, "shade");
    if (strcmp(shade, "lit") == 0)
        c->shade = SHOAL_SHADE_LIT;
    else if (strcmp(shade, "id") == 0)
        c->shade = SHOAL_SHADE_ID;
    else
        return options_fail(o, "--shade: '%s' is not lit or id", shade);
    if (options_given(o, "fish-length")) {
        if ((rc = options_double(o, "fish-length", 1e-6, 1e6, &d)))
            return rc;
        c->fish_length = (float)d;
    }
    c->grid = options_given(o, "grid");
    c->trails = options_given(o, "trails");
    c->follow = options_given(o, "follow");
    c->stats = options_given(o, "stats");
    c->script = options_given(o, "script") ? options_get(o, "script") : NULL;
    if ((c->out_dir || c->video || options_given(o, "fps")) && !c->headless)
        return options_fail(o, "--out, --video and --fps are for --headless (in a window, "
                               "press p for a screenshot)");
    if (c->script && c->headless)
        return options_fail(o, "--script drives the window; it cannot be used with --headless");
    if (c->out_dir && strcmp(c->out_dir, "-") == 0) {
        c->out_dir = NULL; /* draw but keep no frames: for timing */
        c->discard = 1;
    }
    if (c->video) {
        size_t n = strlen(c->video);
        if (n < 5 || strcmp(c->video + n - 4, ".mp4") != 0)
            return options_fail(o, "--video: '%s' must end in .mp4", c->video);
    }
    return 0;
}

/* --scene / --model / --count / --seed / --set: the sim desc, camera and fish length. */
static int build_scene(const opt_values *o, scene_setup *s, app_scaled *scaled)
{
    shoal_error e;
    shoal_model m;
    shoal_scene sc;
    int rc0 = app_scene_model(o, &sc, &m);
    if (rc0)
        return rc0;
    if (options_given(o, "scene")) {
        memset(s, 0, sizeof *s);
        s->desc = sc.desc;
        s->has_camera = sc.has_eye && sc.has_target;
        memcpy(s->eye, sc.eye, sizeof s->eye);
        memcpy(s->target, sc.target, sizeof s->target);
        s->fov_deg = sc.has_fov ? sc.fov_deg : 60.0f;
        s->fish_length = sc.has_fish_length ? sc.fish_length : 0.0f;
        s->follow = sc.follow;
        snprintf(s->name, sizeof s->name, "%s", options_get(o, "scene"));
        s->mesh_count = sc.mesh_count;
        memcpy(s->meshes, sc.meshes, sizeof s->meshes);
    } else if (options_given(o, "model")) {
        if (run_scene_for_model(m, s, &e))
            return options_fail(o, "%s", e.message);
    } else {
        if (run_scene_default(s, &e))
            return options_fail(o, "%s", e.message);
    }
    shoal_sim_desc *d = &s->desc;
    scaled->before = *d;
    scaled->s = 1.0;
    long long ll;
    int rc;
    if (options_given(o, "count")) {
        if ((rc = options_int(o, "count", 1, 100000000, &ll)))
            return rc;
        scaled->s = run_setup_set_count(s, (size_t)ll, options_given(o, "keep-geometry"));
    }
    scaled->scaled = *d;
    if (options_given(o, "seed")) {
        if ((rc = options_int(o, "seed", 0, INT64_MAX, &ll)))
            return rc;
        d->seed = (uint64_t)ll;
    }
    if ((rc = app_set_params(o, d)))
        return rc;
    if (shoal_params_validate(d->model, &d->params, &e) ||
        shoal_world_validate(&d->world, shoal_params_interaction_radius(d->model, &d->params), &e))
        return options_fail(o, "%s", e.message);
    return 0;
}

/* Headless: the video's rate, steps per frame, the frame count and the outputs, from what
 * was given. The defaults play in real time: --fps 30, steps per frame 1 / (fps dt) (2 at
 * the scenes' dt of 1/60 s; --steps-per-frame alone sets the rate instead), and 10 s of
 * simulated time. Without --out and --video: out/shoal.mp4 when ffmpeg is there, else PNG
 * frames in out/frames. */
static void headless_defaults(run_cfg *c, double dt)
{
    if (!c->steps_per_frame) {
        double fps = c->fps > 0 ? c->fps : 30.0;
        long k = lround(1.0 / (fps * dt));
        c->steps_per_frame = k < 1 ? 1 : k > 1000 ? 1000 : (int)k;
    }
    if (!(c->fps > 0))
        c->fps = 1.0 / (dt * c->steps_per_frame);
    if (!c->frames) {
        double k = ceil(10.0 / (dt * c->steps_per_frame) - 1e-9);
        c->frames = k < 1 ? 1 : (long long)k;
    }
    if (!c->out_dir && !c->video && !c->discard) {
        if (video_ffmpeg_found()) {
            c->video = "out/shoal.mp4";
            c->video_default = 1;
        } else {
            c->out_dir = "out/frames";
            c->out_overwrite = 1; /* the program's own default, like out/shoal.mp4 */
        }
    }
}

int cmd_run(int argc, char **argv)
{
    opt_values o;
    int rc = options_parse(&o, "run", run_usage, run_specs, RUN_SPEC_COUNT, 0, argc, argv);
    if (rc)
        return rc == 1 ? 0 : rc;
    /* (--video's default is a sentence for --help: only a given one is checked here) */
    if ((rc = options_check_outputs(&o, options_given(&o, "video")
                                            ? (const char *const[]){"video", "trace", NULL}
                                            : (const char *const[]){"trace", NULL})))
        return rc;
    app *a = calloc(1, sizeof *a);
    if (!a)
        return options_fail(&o, "out of memory");
    run_cfg *c = &a->cfg;
    if ((rc = parse_cfg(&o, c))) {
        free(a);
        return rc;
    }
    /* --trace and --video: not a frame of --out DIR (the frames would replace it, or it a
     * frame), nor an input */
    const char *const run_outs[] = {"trace", "video", NULL};
    if ((rc = app_outputs_distinct(&o, run_outs, c->out_dir, run_frames_owns)) ||
        (rc = app_output_not_input(&o, run_outs, options_get(&o, "in"), "--in")) ||
        (rc = app_output_not_input(&o, run_outs, options_get(&o, "scene"), "--scene"))) {
        free(a);
        return rc;
    }
    scene_setup s;
    app_scaled scaled;
    if ((rc = build_scene(&o, &s, &scaled))) {
        free(a);
        return rc;
    }
    const char *trace = options_get(&o, "trace");
    if (trace && !(a->prof = app_profile())) {
        free(a);
        return options_fail(&o, "out of memory for the trace's profile");
    }
    /* Under mpirun with 2+ ranks: headless, the school stepped over the ranks and each
     * frame composited on rank 0 (docs/ARCHITECTURE.md, "MPI"); what needs the whole
     * school in one process is refused. */
    a->ranks = mpi_running() ? mpi_size() : 1;
    if (a->ranks > 1) {
        const char *why = !c->headless                 ? "draws headless only: add --headless"
                          : c->cuda                    ? "steps on the CPU: --backend cuda"
                          : options_given(&o, "trace") ? "writes no trace: --trace"
                          : c->grid || c->trails       ? "draws no --grid or --trails"
                                                       : NULL;
        if (why) {
            free(a);
            return options_fail(&o, "under mpirun, run %s (run in one process for that)", why);
        }
        if (mpi_rank() != 0) { /* rank 0 speaks: failures are agreed, so it says them too */
            if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
                clearerr(stderr);
        }
    }

    /* The window first: without one we say so and go headless. */
    if (!c->headless) {
        char why[512] = "";
        app_window_desc wd = {"shoal", c->width, c->height, c->vsync, 0};
        if (window_display_available())
            a->win = window_open(&wd, why, sizeof why);
        else
            snprintf(why, sizeof why, "no display");
        if (!a->win) {
            if (c->script) {
                fprintf(stderr, "shoal run: --script needs a window: %s\n", why);
                free(a);
                return 2;
            }
            c->headless = 1;
            c->fallback = 1;
            if (strcmp(why, "no display") != 0)
                fprintf(stderr, "shoal: %s\n", why);
        }
    }
    if (c->headless)
        headless_defaults(c, s.desc.dt_s);
    if (c->fallback) {
        printf("shoal: no display; running headless: %lld frames (%.3g s of simulated time) to "
               "%s\n",
               c->frames, (double)c->frames * (double)c->steps_per_frame * s.desc.dt_s,
               c->video     ? c->video
               : c->out_dir ? c->out_dir
                            : "nowhere");
        fflush(stdout);
    }

    a->desc = s.desc;
    a->seed = s.desc.seed;
    a->scene_params = s.desc.params;
    snprintf(a->scene_name, sizeof a->scene_name, "%s", s.name);
    a->speed = c->speed;
    if (options_given(&o, "count"))
        a->count_override = s.desc.boid_count;
    a->keep_geometry = options_given(&o, "keep-geometry");
    a->hud = c->hud;
    a->grid = c->grid;
    a->trails = c->trails;
    a->follow = c->follow || s.follow;
    a->picked_row = -1;
    a->trail = malloc(sizeof(float) * 3 * TRAIL_BOIDS * TRAIL_LEN);
    shoal_error e;
    for (int k = 0; k < s.mesh_count; k++) {
        shoal_mesh *m = &a->obs_mesh[k];
        if (shoal_mesh_load(s.meshes[k].path, m, &e) ||
            (!m->normals && shoal_mesh_compute_normals(m, &e))) {
            rc = app_exit_code(e.status);
            options_fail(&o, "%s: [mesh %s]: %s", s.name, s.meshes[k].name, e.message);
            run_app_free(a);
            free(a);
            return rc;
        }
        a->obs_xf[k] = s.meshes[k].transform;
        a->obs_count = k + 1;
    }
    if (!a->trail) {
        run_app_free(a);
        free(a);
        return options_fail(&o, "out of memory");
    }
    if (run_sim_open(a, &e)) {
        rc = app_exit_code(e.status);
        options_fail(&o, "%s", e.message);
        run_app_free(a);
        free(a);
        return rc;
    }
    a->rdesc = shoal_render_desc_default();
    a->rdesc.width = c->width;
    a->rdesc.height = c->height;
    a->rdesc.shade = c->shade;
    a->rdesc.lod = c->lod;
    a->rdesc.isa = c->isa;
    a->rdesc.thread_count = c->threads;
    float fl = c->fish_length > 0  ? c->fish_length
               : s.fish_length > 0 ? s.fish_length
                                   : APP_FISH_LENGTH;
    if (run_renderer_open(a, fl, &e)) {
        rc = app_exit_code(e.status);
        options_fail(&o, "%s", e.message);
        run_app_free(a);
        free(a);
        return rc;
    }
    if (c->has_view) {
        run_orbit_from_eye(&a->cam_home, c->eye, c->target, s.fov_deg);
    } else if (s.has_camera) {
        run_orbit_from_eye(&a->cam_home, s.eye, s.target, s.fov_deg);
    } else if (run_camera_home(a, &e)) {
        rc = app_exit_code(e.status);
        options_fail(&o, "%s", e.message);
        run_app_free(a);
        free(a);
        return rc;
    }
    a->cam = a->cam_home;
    if (a->grid)
        run_pick_default(a);

    if (trace) {
        /* preallocated: 64 MiB of spans over the threads; later spans are counted dropped */
        int tracks = run_thread_count(a);
        if (shoal_profile_trace_start(a->prof, tracks, ((size_t)64 << 20) / 32 / (size_t)tracks,
                                      &e)) {
            rc = app_exit_code(e.status);
            options_fail(&o, "%s", e.message);
            run_app_free(a);
            free(a);
            return rc;
        }
    }
    rc = c->headless ? run_headless(a) : run_window(a);
    if (rc == 0 && c->stats && a->ranks > 1)
        mpi_school_print_stats(a->school, "run"); /* collective: the decomposition's numbers */
    if (trace) {
        uint64_t dropped = 0, kept = shoal_profile_trace_spans(a->prof, &dropped);
        shoal_error te;
        if (rc == 0 && shoal_profile_trace_save(a->prof, trace, &te)) {
            rc = app_exit_code(te.status);
            options_fail(&o, "%s", te.message);
        } else if (rc == 0) {
            fprintf(stderr, "shoal run: trace %s: %llu spans", trace, (unsigned long long)kept);
            if (dropped)
                fprintf(stderr, " (%llu more dropped: the buffer was full)",
                        (unsigned long long)dropped);
            fputc('\n', stderr);
        }
        shoal_profile_trace_stop(a->prof);
    }
    if (rc == 0 && mpi_rank() == 0) /* after the run: an error stays the one line on stderr */
        app_print_scaled("run", &scaled, &s.desc);
    run_app_free(a);
    free(a);
    return rc;
}
