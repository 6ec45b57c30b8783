/* SPDX-License-Identifier: MIT */
/* `shoal run`: the interactive program. Owns the app state machine: the simulation stepped
 * at a fixed dt decoupled from the display (an accumulator of wall time, a cap on steps per
 * frame, positions extrapolated by the leftover fraction of a step), the renderer, an orbit
 * camera, key and mouse handling, live parameter editing, re-seeding, the grid view (a
 * picked boid, its 27 cells and its neighbours), trails, the HUD and help overlay, and
 * scripted input for the tests. Headless it writes PNG frames and/or pipes raw frames to
 * ffmpeg. It talks to the platform only through window.h (no SDL here), to the simulation
 * only through sim.h and to the renderer only through render.h. */
#include "app/app.h"
#include "app/options.h"
#include "app/overlay.h" /* proj, canvas, line3d, v3_sub, v3_dot (shared with shoal render) */
#include "app/window.h"
#include "shoal/system.h"
#include "shoal/profile.h"
#include "mpi_app.h"
#include "shoal/gpu.h"
#include "shoal/render.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- options --------------------------------------------------------------------------- */

static const opt_spec run_specs[] = {
    {"scene", OPT_VALUE, "FILE.ini", "the model's assets/scenes/MODEL.ini",
     "scene file: model, parameters, count, seed, camera, fish length"},
    {"model", OPT_VALUE, "M", "steer", "model: steer, average, heading, classic, fov"},
    {"count", OPT_VALUE, "N", "the scene's (steer: 16384)",
     "number of fish; walls, start region and camera are scaled by cbrt(N / the scene's "
     "count) to keep the scene's density (--set wins)"},
    {"keep-geometry", OPT_FLAG, NULL, NULL,
     "with --count: keep the scene's walls, start region and camera as they are"},
    {"seed", OPT_VALUE, "S", "the scene's (1)", "seed of the initial state"},
    {"set", OPT_REPEAT, "NAME=VALUE", NULL, "set a model parameter (e.g. wall_size=58,58,58)"},
    {"size", OPT_VALUE, "WxH", "1280x720", "window / frame size in pixels"},
    {"threads", OPT_VALUE, "T", "0", "threads for simulation and rendering (0: all cores)"},
    {"simd", OPT_VALUE, "auto|scalar|avx2|avx512", "auto", "ISA of force kernels and rasterizer"},
    {"backend", OPT_VALUE, "cpu|cuda", "cpu",
     "simulate on the CPU or on an NVIDIA GPU (the same bits; each frame shows the GPU's state)"},
    {"gpu-order", OPT_VALUE, "stable|atomic", "stable",
     "--backend cuda: order inside a cell (stable: the CPU's bits; atomic: seed 001's)"},
    {"headless", OPT_FLAG, NULL, NULL, "no window: write PNG frames (--out) and/or a video"},
    {"frames", OPT_VALUE, "K", "120 headless, unlimited in a window", "frames to run, then quit"},
    {"out", OPT_VALUE, "DIR", "out/frames when headless",
     "headless: write DIR/frame_NNNNN.png ('-': draw the frames but keep none, for timing)"},
    {"video", OPT_VALUE, "FILE.mp4", NULL, "headless: encode the frames with ffmpeg (H.264)"},
    {"steps-per-frame", OPT_VALUE, "K", "0 in a window, 1 headless",
     "simulation steps per frame; 0: real time (fixed dt, steps follow the wall clock)"},
    {"speed", OPT_VALUE, "X", "1", "simulated seconds per wall second, 1/16..16 (keys [ ])"},
    {"vsync", OPT_VALUE, "on|off", "on",
     "wait for the display refresh (paced when the present "
     "path cannot); off: as fast as possible"},
    {"interp", OPT_VALUE, "on|off", "on", "draw positions extrapolated to the display time"},
    {"lod", OPT_VALUE, "on|off", "on", "level of detail: reduced mesh and splats when far"},
    {"shade", OPT_VALUE, "lit|id", "lit", "lit: lighting, fog, underwater gradient; id: ids"},
    {"fish-length", OPT_VALUE, "L", "the scene's (steer: 0.6)", "length of a fish, world units"},
    {"hud", OPT_VALUE, "on|off", "on", "HUD at start (key i)"},
    {"grid", OPT_FLAG, NULL, NULL, "start in grid view (key g)"},
    {"trails", OPT_FLAG, NULL, NULL, "start with trails (key t)"},
    {"follow", OPT_FLAG, NULL, NULL, "start with the camera following the school (key f)"},
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
    "       shoal run --headless --frames K --out DIR [--video FILE.mp4] [options]\n\n"
    "Opens a window on the scene and lets you play with it (press h in the window for the\n"
    "keys). Without a display it runs headless. `shoal` with no arguments is `shoal run`.";

typedef struct run_cfg {
    int width, height;
    int threads;
    shoal_isa isa;
    int cuda;                  /* --backend cuda */
    shoal_gpu_order gpu_order; /* --gpu-order */
    int headless, fallback;
    long long frames; /* 0: unlimited */
    const char *out_dir;
    const char *video;
    int steps_per_frame; /* 0: real time */
    double speed;
    int vsync, interp, lod, hud, grid, trails, follow, stats;
    shoal_shade shade;
    float fish_length; /* 0: the scene's */
    const char *script;
    int discard; /* --out -: frames are drawn and dropped */
} run_cfg;

/* ---- small vector helpers -------------------------------------------------------------- */

static double now_s(void) { return (double)shoal_profile_now_ns() * 1e-9; }
static void sleep_s(double s)
{
    if (s <= 0)
        return;
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    nanosleep(&ts, NULL);
}

/* ---- camera ---------------------------------------------------------------------------- */

/* An orbit camera: the eye on a sphere around `target` (yaw about +Y, pitch above the
 * horizon), distance eased toward dist_goal so that the wheel zooms smoothly. */
typedef struct orbit {
    float target[3];
    float yaw, pitch, dist, dist_goal;
    float fov_deg;
} orbit;

static void orbit_from_eye(orbit *o, const float eye[3], const float target[3], float fov)
{
    float d[3];
    v3_sub(d, eye, target);
    float r = sqrtf(v3_dot(d, d));
    if (!(r > 1e-4f)) {
        d[0] = 0;
        d[1] = 0;
        d[2] = 1;
        r = 10;
    }
    memcpy(o->target, target, sizeof o->target);
    o->dist = o->dist_goal = r;
    o->pitch = asinf(fmaxf(-1.0f, fminf(1.0f, d[1] / r)));
    o->yaw = atan2f(d[0], d[2]);
    o->fov_deg = fov;
}

static shoal_camera orbit_camera(const orbit *o)
{
    shoal_camera c = shoal_camera_default();
    float cp = cosf(o->pitch);
    c.eye[0] = o->target[0] + o->dist * cp * sinf(o->yaw);
    c.eye[1] = o->target[1] + o->dist * sinf(o->pitch);
    c.eye[2] = o->target[2] + o->dist * cp * cosf(o->yaw);
    memcpy(c.target, o->target, sizeof c.target);
    c.fov_deg = o->fov_deg;
    c.near = fmaxf(0.01f, o->dist * 0.002f);
    c.far = fmaxf(2000.0f, o->dist * 8.0f);
    return c;
}

/* ---- timing ---------------------------------------------------------------------------- */

enum {
    T_SIM,
    T_INSTANCE,
    T_SETUP,
    T_RASTER,
    T_RESOLVE,
    T_RENDER,
    T_OVERLAY,
    T_PRESENT,
    T_OUTPUT,
    T_FRAME,
    T_COUNT
};
static const char *const t_names[T_COUNT] = {"sim (shoal_sim_step)", "  render: instance",
                                             "  render: setup",      "  render: raster",
                                             "  render: resolve",    "render (shoal_render_frame)",
                                             "overlays + HUD",       "present",
                                             "output (PNG / video)", "frame (all of it)"};

typedef struct timings {
    double ms[T_COUNT];
    uint64_t calls[T_COUNT];
    uint64_t frames, steps;
} timings;

static void t_add(timings *t, int k, double ms)
{
    t->ms[k] += ms;
    t->calls[k]++;
}

/* ---- the app --------------------------------------------------------------------------- */

#define TRAIL_BOIDS 192
#define TRAIL_LEN 48
#define SIM_STAGES 8

typedef struct app {
    run_cfg cfg;
    /* obstacle meshes of the scene (model space: drawn, and added to every new sim) */
    shoal_mesh obs_mesh[SHOAL_MAX_OBSTACLES];
    shoal_transform obs_xf[SHOAL_MAX_OBSTACLES];
    int obs_count;
    /* instances with predators appended (boids first, in view order) */
    float *ex[6];
    uint32_t *ex_id, *ex_color;
    float *ex_scale;
    uint8_t *ex_group;
    size_t ex_cap;
    /* heading targets: the one being dragged (index + 1, 0 none), the next ctrl+click sets */
    int target_drag, target_next;
    int place_mode; /* key k: a left click places the next target (as ctrl+click does) */
    app_window *win;
    app_window_info winfo;
    /* simulation */
    shoal_sim *sim;
    /* under mpirun with 2+ ranks (docs/ARCHITECTURE.md, "MPI"): the school over the ranks;
     * `sim` is then this rank's part (predators, targets, obstacles and time are the whole
     * school's) and the fish drawn are the rank's own, loc[] and loc_row (their input rows,
     * the instance ids), composited by depth on rank 0 */
    mpi_school *school;
    int ranks;
    float *loc[6];
    uint32_t *loc_row;
    size_t loc_cap;
    double composite_ms;
    uint64_t composites;
    /* --backend cuda: the GPU steps; after each step call its state is copied into `sim`,
     * which then serves the renderer, the grid view and the HUD as it does on the CPU */
    shoal_gpu_sim *gpu;
    float *gpu_rows;
    size_t gpu_rows_cap;
    shoal_sim_desc desc;
    shoal_params scene_params; /* what Backspace returns a parameter to */
    uint64_t seed;
    char scene_name[1024];
    /* stage totals of sims already destroyed (model switches, re-seeds) */
    double sim_stage_ms_closed[SIM_STAGES];
    uint64_t sim_steps_closed;
    /* renderer */
    shoal_renderer *ren;
    shoal_render_desc rdesc;
    shoal_render_stats rstats;
    /* instance buffers */
    float *ipx, *ipy, *ipz;
    uint8_t *group;
    size_t cap;
    /* camera */
    orbit cam, cam_home;
    int follow;
    /* time */
    double acc_s, speed;
    int paused, step_once;
    /* ui */
    int hud, help, grid, trails;
    int param_index;
    long long picked_row; /* -1: none */
    char status[256];
    double status_until;
    int drag_button, drag_moved, drag_x, drag_y, mods;
    int minimized;
    int quit;
    /* grid view results of the last frame */
    size_t grid_candidates, grid_neighbors;
    int32_t grid_cell[3];
    /* trails: TRAIL_BOIDS rows, TRAIL_LEN positions each (ring) */
    float *trail;
    int trail_head, trail_fill;
    size_t trail_stride;
    /* screenshot */
    int shot_requested;
    char shot_path[1024];
    int shot_counter;
    /* timing: totals and the HUD's window */
    timings total, win_t, hud_t;
    double hud_since;
    double sim_stage_prev[SIM_STAGES];
    uint64_t sim_steps_prev;
    double hud_stage_ms[SIM_STAGES];
    double hud_fps;
    double t_start;
    uint64_t steps_total;
    int log_input;
    size_t count_override; /* --count: kept when keys 1-5 switch scenes */
    int keep_geometry;     /* --keep-geometry: --count does not scale the scenes */
} app;

static volatile sig_atomic_t g_interrupted;
/* Stop after this frame; a frame (a long step) that does not end within a second is cut
 * short by the signal itself (app_signal_deadline), its temporaries removed. */
static void on_signal(int sig)
{
    g_interrupted = 1;
    app_signal_deadline(sig);
}

static void set_status(app *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_status(app *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->status, sizeof a->status, fmt, ap);
    va_end(ap);
    a->status_until = now_s() + 3.0;
    if (a->win == NULL || a->log_input)
        printf("shoal: %s\n", a->status);
}

/* The rule parameters the keys edit, in this order, where the model has them. */
static const char *const editable[] = {"sep_weight",
                                       "ali_weight",
                                       "coh_weight",
                                       "sep_radius",
                                       "ali_radius",
                                       "coh_radius",
                                       "max_speed",
                                       "max_steer",
                                       "min_speed",
                                       "neighbor_radius",
                                       "target_weight",
                                       "rotate_speed",
                                       "move_speed",
                                       "fov",
                                       "w1",
                                       "w2",
                                       "w3",
                                       "sep_strength",
                                       "sep_dist2",
                                       "ali_dist2",
                                       "coh_dist2",
                                       "sep_angle",
                                       "ali_angle",
                                       "coh_angle",
                                       "sep_force",
                                       "ali_force",
                                       "coh_force",
                                       "max_force",
                                       "wall_weight",
                                       "boundary_force",
                                       "avoid_force"};
#define EDITABLE_COUNT ((int)(sizeof editable / sizeof editable[0]))

static const shoal_param_info *param_find(shoal_model m, const char *name)
{
    size_t n;
    const shoal_param_info *l = shoal_param_list(m, &n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(l[i].name, name) == 0)
            return &l[i];
    return NULL;
}

/* The model's editable parameters: fills `out` (EDITABLE_COUNT), returns how many. */
static int params_editable(shoal_model m, const shoal_param_info **out)
{
    int n = 0;
    for (int i = 0; i < EDITABLE_COUNT; i++) {
        const shoal_param_info *p = param_find(m, editable[i]);
        if (p)
            out[n++] = p;
    }
    return n;
}

static float param_value(const shoal_params *p, const shoal_param_info *info)
{
    float v;
    memcpy(&v, (const char *)p + info->offset, sizeof v);
    return v;
}

/* ---- sim and scene --------------------------------------------------------------------- */

typedef struct scene_setup {
    shoal_sim_desc desc;
    int has_camera;
    float eye[3], target[3], fov_deg;
    float fish_length; /* 0: none given */
    char name[1024];
    int mesh_count;
    shoal_scene_mesh meshes[SHOAL_MAX_OBSTACLES];
} scene_setup;

/* steer and average start, as their seeds do, from a unit ball: 16384 fish that all see
 * each other for the first ~150 steps (O(N^2), seconds of slow motion on 2 cores) before the
 * school spreads. The interactive program starts them spread over a ball filling 3/4 of the
 * wall box instead (the rules and their parameters stay the seed's); --scene FILE or
 * --set init_pos_radius=1 gives the seed's start. */
static void spread_start(shoal_sim_desc *d)
{
    if (d->model != SHOAL_MODEL_STEER && d->model != SHOAL_MODEL_AVERAGE)
        return;
    float m = fminf(d->params.wall_size[0], fminf(d->params.wall_size[1], d->params.wall_size[2]));
    if (m > 0 && d->params.init_pos_radius < 0.375f * m)
        d->params.init_pos_radius = 0.375f * m;
}

/* Give the setup `count` fish (shoal_scene_set_count: walls, start region and camera scaled
 * to keep the scene's density unless keep_geometry). Returns the factor. */
static double setup_set_count(scene_setup *s, size_t count, int keep_geometry)
{
    shoal_scene sc;
    memset(&sc, 0, sizeof sc);
    sc.desc = s->desc;
    sc.has_eye = sc.has_target = s->has_camera;
    memcpy(sc.eye, s->eye, sizeof sc.eye);
    memcpy(sc.target, s->target, sizeof sc.target);
    double f = shoal_scene_set_count(&sc, count, keep_geometry);
    s->desc = sc.desc;
    memcpy(s->eye, sc.eye, sizeof s->eye);
    memcpy(s->target, sc.target, sizeof s->target);
    return f;
}

/* The model's scene file from the assets (scenes/MODEL.ini), or the model's defaults when
 * there is none. A scene file that is there but cannot be loaded (out of memory, say) is an
 * error, not a silent switch to other parameters. */
static shoal_status scene_for_model(shoal_model m, scene_setup *s, shoal_error *e)
{
    memset(s, 0, sizeof *s);
    char path[1024], name[64];
    snprintf(name, sizeof name, "scenes/%s.ini", shoal_model_name(m));
    shoal_scene sc;
    int found = shoal_render_asset_path(name, path, sizeof path);
    if (found && shoal_scene_load(path, &sc, e))
        return e->status;
    if (found && sc.desc.model == m) {
        s->desc = sc.desc;
        s->has_camera = sc.has_eye && sc.has_target;
        memcpy(s->eye, sc.eye, sizeof s->eye);
        memcpy(s->target, sc.target, sizeof s->target);
        s->fov_deg = sc.has_fov ? sc.fov_deg : 60.0f;
        s->fish_length = sc.has_fish_length ? sc.fish_length : 0.0f;
        snprintf(s->name, sizeof s->name, "%s", path);
        spread_start(&s->desc);
        return SHOAL_OK;
    }
    s->desc = shoal_sim_desc_default();
    s->desc.model = m;
    shoal_params_default(m, &s->desc.params);
    s->desc.boid_count = shoal_model_default_count(m);
    spread_start(&s->desc);
    s->fov_deg = 60.0f;
    snprintf(s->name, sizeof s->name, "%s defaults", shoal_model_name(m));
    return SHOAL_OK;
}

static void sim_close(app *a)
{
    if (!a->sim)
        return;
    shoal_stage_stats st[SIM_STAGES];
    size_t n = shoal_sim_stats(a->sim, st, SIM_STAGES);
    for (size_t k = 0; k < n && k < SIM_STAGES; k++)
        a->sim_stage_ms_closed[k] += st[k].total_ms;
    a->sim_steps_closed += n ? st[0].calls : 0;
    if (a->school)
        mpi_school_destroy(a->school); /* and its part, a->sim */
    else
        shoal_sim_destroy(a->sim);
    a->school = NULL;
    a->sim = NULL;
    shoal_gpu_sim_destroy(a->gpu);
    a->gpu = NULL;
    memset(a->sim_stage_prev, 0, sizeof a->sim_stage_prev);
    a->sim_steps_prev = 0;
}

static int buffers_reserve(app *a, size_t n)
{
    if (n <= a->cap)
        return 1;
    float *x = realloc(a->ipx, n * sizeof *x), *y, *z;
    if (!x)
        return 0;
    a->ipx = x;
    if (!(y = realloc(a->ipy, n * sizeof *y)))
        return 0;
    a->ipy = y;
    if (!(z = realloc(a->ipz, n * sizeof *z)))
        return 0;
    a->ipz = z;
    uint8_t *g = realloc(a->group, n);
    if (!g)
        return 0;
    a->group = g;
    a->cap = n;
    return 1;
}

static void trails_reset(app *a)
{
    a->trail_head = 0;
    a->trail_fill = 0;
    size_t n = a->sim ? shoal_sim_count(a->sim) : 1;
    a->trail_stride = n > TRAIL_BOIDS ? n / TRAIL_BOIDS : 1;
}

/* Simulated time of the next step, on whichever backend steps. */
static double app_sim_time(const app *a)
{
    return a->gpu ? shoal_gpu_sim_time(a->gpu) : shoal_sim_time(a->sim);
}

/* --backend cuda: (re)create the GPU simulation from a->desc, starting from the state and
 * time it had (or the CPU mirror's after a new school). */
static shoal_status gpu_open(app *a, shoal_error *e)
{
    size_t n = shoal_sim_count(a->sim);
    if (a->gpu_rows_cap < n) {
        float *r = realloc(a->gpu_rows, n * 6 * sizeof(float));
        if (!r)
            return shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for %zu fish", n);
        a->gpu_rows = r;
        a->gpu_rows_cap = n;
    }
    shoal_sim_desc d = a->desc;
    d.t0_s = app_sim_time(a);
    shoal_sim_get_state(a->sim, a->gpu_rows);
    shoal_gpu_sim *g;
    shoal_status st = shoal_gpu_sim_create(&d, a->cfg.gpu_order, &g, e);
    if (st)
        return st;
    /* the obstacle meshes: the CPU mirror's field (its own build), uploaded */
    if ((st = shoal_gpu_sim_set_state(g, a->gpu_rows, e)) ||
        (a->obs_count > 0 && (st = shoal_gpu_sim_copy_obstacles(g, a->sim, e)))) {
        shoal_gpu_sim_destroy(g);
        return st;
    }
    shoal_gpu_sim_destroy(a->gpu);
    a->gpu = g;
    return SHOAL_OK;
}

/* (Re)create the simulation from a->desc and seed it. */
static shoal_status sim_open(app *a, shoal_error *e)
{
    sim_close(a);
    a->desc.thread_count = a->cfg.threads;
    a->desc.isa = a->cfg.isa;
    shoal_status st;
    if (a->ranks > 1) {
        /* every rank draws its own rows of the same initial state (row i from the seed and
         * i alone) and the first step sends each boid to the rank owning its cell */
        shoal_sim_desc d = a->desc;
        d.seed = a->seed;
        if ((st = mpi_school_create(&d, &a->school, e)))
            return st;
        a->sim = mpi_school_sim(a->school);
    } else {
        if ((st = shoal_sim_create(&a->desc, &a->sim, e)))
            return st;
        shoal_sim_init_state(a->sim, a->seed);
    }
    for (int k = 0; k < a->obs_count; k++) {
        st = shoal_sim_add_obstacle(a->sim, a->obs_mesh[k].positions, a->obs_mesh[k].normals,
                                    a->obs_mesh[k].vertex_count, &a->obs_xf[k], NULL, e);
        if (a->ranks > 1)
            st = mpi_agree(st, e);
        if (st) {
            sim_close(a);
            return st;
        }
    }
    a->target_drag = 0;
    if (!buffers_reserve(a, a->ranks > 1 ? 1 : a->desc.boid_count)) {
        shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for %zu fish", a->desc.boid_count);
        return SHOAL_ERR_NOMEM;
    }
    if (a->cfg.cuda) {
        shoal_status st_gpu = gpu_open(a, e);
        if (st_gpu)
            return st_gpu;
    }
    a->acc_s = 0;
    a->picked_row = -1;
    trails_reset(a);
    return SHOAL_OK;
}

static shoal_status camera_home_from_state(app *a, shoal_error *e)
{
    shoal_camera c = shoal_camera_default();
    c.fov_deg = 60;
    float aspect = (float)a->cfg.width / (float)a->cfg.height;
    if (a->ranks > 1) {
        /* framed on rank 0 from the whole initial state (gathered there once, 24 bytes a
         * boid: give the scene a camera to avoid it) and sent to every rank */
        size_t n = a->desc.boid_count;
        float *rows = mpi_rank() == 0 ? malloc(n * 6 * sizeof(float) + 1) : NULL, *soa = NULL;
        if (rows)
            soa = malloc(n * 3 * sizeof(float) + 1);
        shoal_status st =
            mpi_rank() != 0 || (rows && soa)
                ? SHOAL_OK
                : shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory framing %zu fish", n);
        if (!(st = mpi_agree(st, e)))
            st = mpi_school_gather(a->school, rows, e);
        if (!st && mpi_rank() == 0) {
            for (size_t i = 0; i < n; i++)
                for (int k = 0; k < 3; k++)
                    soa[(size_t)k * n + i] = rows[6 * i + (size_t)k];
            shoal_render_camera_frame(soa, soa + n, soa + 2 * n, n, a->rdesc.fish_length, aspect,
                                      &c);
        }
        free(rows);
        free(soa);
        if (st)
            return st;
        mpi_broadcast(&c, sizeof c);
    } else {
        shoal_boid_view v = shoal_sim_view(a->sim);
        shoal_render_camera_frame(v.px, v.py, v.pz, v.count, a->rdesc.fish_length, aspect, &c);
    }
    orbit_from_eye(&a->cam_home, c.eye, c.target, c.fov_deg);
    return SHOAL_OK;
}

static shoal_status renderer_open(app *a, float fish_length, shoal_error *e)
{
    if (a->ren && a->rdesc.fish_length == fish_length)
        return SHOAL_OK;
    int w = a->rdesc.width, h = a->rdesc.height;
    a->rdesc.fish_length = fish_length;
    a->rdesc.width = w;
    a->rdesc.height = h;
    shoal_renderer *r = NULL;
    shoal_status st = shoal_renderer_create(&a->rdesc, &r, e);
    if (!st && a->ranks > 1)
        st = shoal_render_keep_depth(r, 1, e);
    if (a->ranks > 1)
        st = mpi_agree(st, e);
    if (st) {
        shoal_renderer_destroy(r);
        return st;
    }
    if (a->ren)
        shoal_renderer_destroy(a->ren);
    a->ren = r;
    return SHOAL_OK;
}

/* Key 1-5: switch to a model's scene (sim, parameters, camera, fish length). */
static void switch_model(app *a, shoal_model m)
{
    scene_setup s;
    shoal_error se;
    if (scene_for_model(m, &s, &se)) {
        set_status(a, "%s", se.message);
        return;
    }
    if (a->count_override)
        setup_set_count(&s, a->count_override, a->keep_geometry);
    shoal_sim_desc old = a->desc;
    for (int k = 0; k < a->obs_count; k++)
        shoal_mesh_free(&a->obs_mesh[k]);
    a->obs_count = 0; /* the model scenes have no meshes */
    a->desc = s.desc;
    a->seed = s.desc.seed;
    a->scene_params = s.desc.params;
    shoal_error e;
    if (sim_open(a, &e)) {
        set_status(a, "cannot switch to %s: %s", shoal_model_name(m), e.message);
        a->desc = old;
        sim_open(a, &e);
        return;
    }
    float fl = s.fish_length > 0 ? s.fish_length : 1.0f;
    if (renderer_open(a, fl, &e))
        set_status(a, "renderer: %s", e.message);
    if (s.has_camera)
        orbit_from_eye(&a->cam_home, s.eye, s.target, s.fov_deg);
    else
        camera_home_from_state(a, &se);
    a->cam = a->cam_home;
    a->param_index = 0;
    snprintf(a->scene_name, sizeof a->scene_name, "%s", s.name);
    const char *short_name = strstr(s.name, "scenes/") ? strstr(s.name, "scenes/") : s.name;
    set_status(a, "model %s: %zu fish (%s)", shoal_model_name(m), a->desc.boid_count, short_name);
}

/* PageUp/PageDown and r: a new school of `n` fish with `seed`, same model and parameters. */
static void reseed(app *a, size_t n, uint64_t seed)
{
    shoal_sim_desc old = a->desc;
    uint64_t old_seed = a->seed;
    a->desc.boid_count = n;
    a->seed = seed;
    if (a->count_override)
        a->count_override = n;
    shoal_error e;
    if (sim_open(a, &e)) {
        set_status(a, "cannot make %zu fish: %s", n, e.message);
        a->desc = old;
        a->seed = old_seed;
        sim_open(a, &e);
        return;
    }
    set_status(a, "%zu fish, seed %llu", n, (unsigned long long)seed);
}

static void param_adjust(app *a, int dir, int reset)
{
    const shoal_param_info *list[EDITABLE_COUNT];
    int n = params_editable(a->desc.model, list);
    if (n == 0)
        return;
    const shoal_param_info *p = list[a->param_index % n];
    float v = param_value(&a->desc.params, p), nv;
    if (reset) {
        nv = param_value(&a->scene_params, p);
    } else if (p->is_integer) {
        nv = v + (float)dir;
    } else if (fabsf(v) > 1e-6f) {
        nv = dir > 0 ? (v > 0 ? v * 1.1f : v / 1.1f) : (v > 0 ? v / 1.1f : v * 1.1f);
    } else {
        float span = p->max - p->min;
        nv = (float)dir * (span < 10 ? span * 0.02f : 0.1f);
    }
    nv = nv < p->min ? p->min : nv > p->max ? p->max : nv;
    char val[64];
    snprintf(val, sizeof val, "%.6g", (double)nv);
    shoal_params np = a->desc.params;
    shoal_error e;
    if (shoal_params_set(a->desc.model, &np, p->name, val, &e) ||
        shoal_sim_set_params(a->sim, &np, &e)) {
        set_status(a, "%s", e.message);
        return;
    }
    shoal_params old = a->desc.params;
    a->desc.params = np;
    if (a->gpu && gpu_open(a, &e)) { /* the GPU simulation takes parameters at creation */
        a->desc.params = old;
        shoal_sim_set_params(a->sim, &old, &e);
        set_status(a, "GPU: %s", e.message);
        return;
    }
    set_status(a, "%s = %s", p->name, val);
}

/* ---- per-frame work -------------------------------------------------------------------- */

static float extrapolation_scale(const app *a)
{
    /* fov's velocities are units per step (its seed adds v to p with no dt) */
    return a->desc.model == SHOAL_MODEL_FOV ? 1.0f : (float)a->desc.dt_s;
}

/* Grid view: colour groups for every instance (view order) and the picked boid's cell. */
static void grid_groups(app *a, const shoal_boid_view *v, const float *px, const float *py,
                        const float *pz, const float pick[3])
{
    float origin[3], cell;
    int32_t dims[3];
    shoal_sim_grid_info(a->sim, origin, &cell, dims);
    float r = shoal_params_interaction_radius(a->desc.model, &a->desc.params);
    float r2 = r * r;
    int32_t c[3];
    for (int k = 0; k < 3; k++) {
        float q = isfinite(cell) && cell > 0 ? floorf((pick[k] - origin[k]) / cell) : 0;
        int32_t ci = q < 0 ? 0 : q >= (float)dims[k] ? dims[k] - 1 : (int32_t)q;
        c[k] = ci;
    }
    memcpy(a->grid_cell, c, sizeof c);
    size_t cand = 0, nb = 0;
    for (size_t i = 0; i < v->count; i++) {
        float p[3] = {v->px[i], v->py[i], v->pz[i]};
        int in = 1;
        for (int k = 0; k < 3 && in; k++) {
            float q = isfinite(cell) && cell > 0 ? floorf((p[k] - origin[k]) / cell) : 0;
            int32_t ci = q < 0 ? 0 : q >= (float)dims[k] ? dims[k] - 1 : (int32_t)q;
            in = ci >= c[k] - 1 && ci <= c[k] + 1;
        }
        uint8_t g = 5; /* silver: the rest of the school */
        if ((long long)v->row_of[i] == a->picked_row) {
            g = 0; /* orange: the picked boid */
        } else if (in) {
            cand++;
            float d[3] = {p[0] - pick[0], p[1] - pick[1], p[2] - pick[2]};
            if (v3_dot(d, d) <= r2) {
                g = 3; /* green: neighbours within the interaction radius */
                nb++;
            } else {
                g = 1; /* blue: in the 27 cells but farther than the radius */
            }
        }
        a->group[i] = g;
    }
    (void)px, (void)py, (void)pz;
    a->grid_candidates = cand;
    a->grid_neighbors = nb;
}

/* The picked boid's index in the view, or (size_t)-1. */
static size_t view_index_of_row(const shoal_boid_view *v, long long row)
{
    if (row < 0)
        return (size_t)-1;
    for (size_t i = 0; i < v->count; i++)
        if ((long long)v->row_of[i] == row)
            return i;
    return (size_t)-1;
}

/* The boid nearest the camera's target (grid view's default pick). */
static void pick_default(app *a)
{
    shoal_boid_view v = shoal_sim_view(a->sim);
    float best = INFINITY;
    for (size_t i = 0; i < v.count; i++) {
        float d[3] = {v.px[i] - a->cam.target[0], v.py[i] - a->cam.target[1],
                      v.pz[i] - a->cam.target[2]};
        float d2 = v3_dot(d, d);
        if (d2 < best) {
            best = d2;
            a->picked_row = v.row_of[i];
        }
    }
}

/* Right click: the boid drawn nearest to pixel (x, y), within 40 pixels. */
static void pick_at(app *a, int x, int y, int w, int h)
{
    shoal_boid_view v = shoal_sim_view(a->sim);
    shoal_camera c = orbit_camera(&a->cam);
    proj p = proj_make(&c, w, h);
    float best = 40.0f * 40.0f, best_depth = INFINITY;
    long long row = -1;
    for (size_t i = 0; i < v.count; i++) {
        float q[3] = {v.px[i], v.py[i], v.pz[i]}, sx, sy, vv[3];
        if (!proj_point(&p, q, &sx, &sy))
            continue;
        float dx = sx - (float)x, dy = sy - (float)y, d2 = dx * dx + dy * dy;
        proj_view(&p, q, vv);
        /* nearest on screen; among those within 6 px, the nearest to the eye */
        if (d2 < best - 36.0f || (d2 < 36.0f && vv[2] < best_depth)) {
            best = d2;
            best_depth = d2 < 36.0f ? vv[2] : INFINITY;
            row = v.row_of[i];
        }
    }
    if (row >= 0) {
        a->picked_row = row;
        a->grid = 1;
        set_status(a, "picked boid %lld", row);
    }
}

static void school_centre(const shoal_boid_view *v, float c[3])
{
    double s[3] = {0, 0, 0};
    for (size_t i = 0; i < v->count; i++) {
        s[0] += v->px[i];
        s[1] += v->py[i];
        s[2] += v->pz[i];
    }
    double n = v->count ? (double)v->count : 1.0;
    for (int k = 0; k < 3; k++)
        c[k] = (float)(s[k] / n);
}

static void draw_grid_overlay(app *a, canvas *cv, const proj *p, const float pick[3],
                              const shoal_boid_view *v, const float *px, const float *py,
                              const float *pz)
{
    float origin[3], cell;
    int32_t dims[3];
    shoal_sim_grid_info(a->sim, origin, &cell, dims);
    if (isfinite(cell) && cell > 0) {
        int32_t lo[3], hi[3];
        for (int k = 0; k < 3; k++) {
            lo[k] = a->grid_cell[k] - 1 < 0 ? 0 : a->grid_cell[k] - 1;
            hi[k] = a->grid_cell[k] + 2 > dims[k] ? dims[k] : a->grid_cell[k] + 2;
        }
        /* the lattice of the (up to) 3x3x3 block: lines along each axis */
        for (int ax = 0; ax < 3; ax++) {
            int b1 = (ax + 1) % 3, b2 = (ax + 2) % 3;
            for (int i = lo[b1]; i <= hi[b1]; i++) {
                for (int j = lo[b2]; j <= hi[b2]; j++) {
                    float s[3], e[3];
                    s[ax] = origin[ax] + (float)lo[ax] * cell;
                    e[ax] = origin[ax] + (float)hi[ax] * cell;
                    s[b1] = e[b1] = origin[b1] + (float)i * cell;
                    s[b2] = e[b2] = origin[b2] + (float)j * cell;
                    int outer = (i == lo[b1] || i == hi[b1]) && (j == lo[b2] || j == hi[b2]);
                    line3d(cv, p, s, e, outer ? 0xFFFFFF : 0xB8E8FF, outer ? 230 : 110);
                }
            }
        }
    }
    /* links from the picked boid to its neighbours */
    for (size_t i = 0; i < v->count; i++) {
        if (a->group[i] != 3)
            continue;
        float q[3] = {px[i], py[i], pz[i]};
        line3d(cv, p, pick, q, 0x90FFA0, 120);
    }
    /* a ring around the picked boid, so it can be found among its neighbours */
    float sx, sy;
    if (proj_point(p, pick, &sx, &sy)) {
        for (int k = 0; k < 24; k++) {
            float t0 = (float)k * 6.2831853f / 24, t1 = (float)(k + 1) * 6.2831853f / 24;
            for (int r = 9; r <= 10; r++)
                line2d(cv, sx + r * cosf(t0), sy + r * sinf(t0), sx + r * cosf(t1),
                       sy + r * sinf(t1), 0xFF9040, 255);
        }
    }
}

static void trails_sample(app *a, const shoal_boid_view *v, const float *px, const float *py,
                          const float *pz)
{
    int head = a->trail_head;
    size_t stride = a->trail_stride;
    for (size_t i = 0; i < v->count; i++) {
        uint32_t row = v->row_of[i];
        if (row % stride)
            continue;
        size_t t = row / stride;
        if (t >= TRAIL_BOIDS)
            continue;
        float *dst = a->trail + (t * TRAIL_LEN + (size_t)head) * 3;
        dst[0] = px[i];
        dst[1] = py[i];
        dst[2] = pz[i];
    }
    a->trail_head = (head + 1) % TRAIL_LEN;
    if (a->trail_fill < TRAIL_LEN)
        a->trail_fill++;
}

static void trails_draw(app *a, canvas *cv, const proj *p)
{
    size_t nt = shoal_sim_count(a->sim) / a->trail_stride;
    if (nt > TRAIL_BOIDS)
        nt = TRAIL_BOIDS;
    int n = a->trail_fill;
    for (size_t t = 0; t < nt; t++) {
        const float *base = a->trail + t * TRAIL_LEN * 3;
        for (int k = 1; k < n; k++) {
            int i0 = (a->trail_head - n + k - 1 + 2 * TRAIL_LEN) % TRAIL_LEN;
            int i1 = (i0 + 1) % TRAIL_LEN;
            unsigned alpha = (unsigned)(30 + 190 * k / n);
            line3d(cv, p, base + i0 * 3, base + i1 * 3, 0xC8F4FF, alpha);
        }
    }
}

/* ---- HUD and help ---------------------------------------------------------------------- */

static void hud_text_block(app *a, canvas *cv, int x, int y, const char *text, uint32_t color,
                           int panel)
{
    if (!a->win || !a->winfo.char_w)
        return;
    int lines = 1, cols = 0, c = 0;
    for (const char *s = text; *s; s++) {
        if (*s == '\n') {
            lines++;
            c = 0;
        } else if (++c > cols) {
            cols = c;
        }
    }
    if (panel)
        fill_rect(cv, x - 8, y - 6, cols * a->winfo.char_w + 16, lines * a->winfo.char_h + 12,
                  0x04101C, 150);
    window_draw_text(a->win, cv->px, cv->w, cv->h, cv->stride, x + 1, y + 1, text, 0xC0000000u);
    window_draw_text(a->win, cv->px, cv->w, cv->h, cv->stride, x, y, text, color);
}

static const char *onoff(int v) { return v ? "on" : "off"; }

static void draw_hud(app *a, canvas *cv)
{
    char buf[2048];
    size_t len = 0;
#define OUT(...)                                                                                   \
    do {                                                                                           \
        if (len < sizeof buf)                                                                      \
            len += (size_t)snprintf(buf + len, sizeof buf - len, __VA_ARGS__);                     \
    } while (0)
    const timings *h = &a->hud_t;
    double fr = h->frames ? (double)h->frames : 1.0;
    double steps = h->steps ? (double)h->steps : 1.0;
    const char *isa_s = a->gpu ? "cuda" : shoal_sim_isa_name(a->sim),
               *isa_r = a->rstats.isa ? a->rstats.isa : "-";
    const shoal_param_info *plist[EDITABLE_COUNT];
    int pn = params_editable(a->desc.model, plist);
    if (cv->w < 100 * a->winfo.char_w) {
        /* a small window: the few numbers that matter */
        OUT("%.1f fps  %.1f ms  N %zu  %s%s\n", a->hud_fps, h->ms[T_FRAME] / fr,
            shoal_sim_count(a->sim), shoal_model_name(a->desc.model), a->paused ? "  PAUSED" : "");
        OUT("sim %.1f  render %.1f  present %.1f ms\n", h->ms[T_SIM] / fr, h->ms[T_RENDER] / fr,
            h->ms[T_PRESENT] / fr);
        if (pn) {
            const shoal_param_info *p = plist[a->param_index % pn];
            OUT("%s = %.4g\n", p->name, (double)param_value(&a->desc.params, p));
        }
        OUT("%d thr %s  h: help", shoal_system_thread_count(), isa_r);
        hud_text_block(a, cv, 10, 8, buf, 0xFFE8F4FF, 1);
        return;
    }
    OUT("shoal %6.1f fps (%.2f ms)   N %zu   model %s   %dx%d\n", a->hud_fps, h->ms[T_FRAME] / fr,
        shoal_sim_count(a->sim), shoal_model_name(a->desc.model), cv->w, cv->h);
    if (strcmp(isa_s, isa_r) == 0)
        OUT("threads %d   ISA %s   ", shoal_system_thread_count(), isa_s);
    else
        OUT("threads %d   ISA sim %s, render %s   ", shoal_system_thread_count(), isa_s, isa_r);
    OUT("%s%s\n", a->winfo.present_path ? a->winfo.present_path : "-",
        a->cfg.vsync ? (a->winfo.vsync ? ", vsync" : ", paced") : ", vsync off");
    OUT("sim     %6.2f ms/step x%.2f:", h->ms[T_SIM] / steps, (double)h->steps / fr);
    shoal_stage_stats st[SIM_STAGES];
    size_t ns = shoal_sim_stats(a->sim, st, SIM_STAGES);
    for (size_t k = 0; k < ns && k < SIM_STAGES; k++) {
        const char *nm = strncmp(st[k].name, "grid_", 5) == 0 ? st[k].name + 5 : st[k].name;
        OUT(" %s %.2f", nm, a->hud_stage_ms[k]);
    }
    OUT("\n");
    OUT("render  %6.2f ms: instance %.2f setup %.2f raster %.2f resolve %.2f\n",
        h->ms[T_RENDER] / fr, h->ms[T_INSTANCE] / fr, h->ms[T_SETUP] / fr, h->ms[T_RASTER] / fr,
        h->ms[T_RESOLVE] / fr);
    OUT("present %6.2f ms   HUD %.2f ms   drawn %llu: %llu full %llu reduced %llu splat\n",
        h->ms[T_PRESENT] / fr, h->ms[T_OVERLAY] / fr,
        (unsigned long long)a->rstats.instances_visible,
        (unsigned long long)a->rstats.instances_full,
        (unsigned long long)a->rstats.instances_reduced,
        (unsigned long long)a->rstats.instances_splat);
    const shoal_param_info *list[EDITABLE_COUNT];
    int np = params_editable(a->desc.model, list);
    if (np) {
        const shoal_param_info *p = list[a->param_index % np];
        OUT("param   < %s = %.4g >  %d/%d  (Up/Down: select, Left/Right: change)\n", p->name,
            (double)param_value(&a->desc.params, p), a->param_index % np + 1, np);
    }
    OUT("t %.1f s  speed %gx%s  LOD %s  grid %s  trails %s  follow %s   h: help", app_sim_time(a),
        a->speed, a->paused ? "  PAUSED" : "", onoff(a->rdesc.lod), onoff(a->grid),
        onoff(a->trails), onoff(a->follow));
    if (a->grid && a->picked_row >= 0)
        OUT("\ngrid    boid %lld, cell (%d, %d, %d): %zu in its 27 cells, %zu within r = %.3g",
            a->picked_row, a->grid_cell[0], a->grid_cell[1], a->grid_cell[2], a->grid_candidates,
            a->grid_neighbors,
            (double)shoal_params_interaction_radius(a->desc.model, &a->desc.params));
#undef OUT
    hud_text_block(a, cv, 14, 12, buf, 0xFFE8F4FF, 1);
}

static const char *help_text =
    "shoal: keys and mouse\n"
    "\n"
    "  Esc, q          quit\n"
    "  Space           pause / resume        .  single step\n"
    "  [  ]            slower / faster       0  normal speed\n"
    "  1 2 3 4 5       model: steer average heading classic fov (resets to its scene)\n"
    "  PgUp  PgDn      twice / half the fish (new school)   r  new seed\n"
    "  Up  Down        select a rule parameter (Tab too)\n"
    "  Left Right - +  change it (10%)       Backspace  back to the scene's value\n"
    "  i, F3           HUD on / off          l  level of detail on / off\n"
    "  g               grid view: picked boid (orange), its 27 cells, neighbours\n"
    "                  (green) and the rest of its cells (blue); right click picks\n"
    "  t               trails                f  camera follows the school (or the pick)\n"
    "  p, F12          screenshot (PNG)      c, Home  reset the camera\n"
    "  h, F1           this help\n"
    "\n"
    "  m  shift+m      move the obstacle mesh +x / -x (field rebuilt)   n  turn it 15 deg\n"
    "\n"
    "  mouse           left drag: orbit    right/middle or shift+left drag: pan\n"
    "                  wheel: zoom         right click: pick a boid for the grid view\n"
    "  heading         left drag a target marker (yellow) to move it; ctrl+left click\n"
    "                  (or k, then left click) places the next target there, on the\n"
    "                  plane through the school facing the camera";

static void draw_help(app *a, canvas *cv)
{
    if (!a->winfo.char_w)
        return;
    int cols = 0, lines = 1, c = 0;
    for (const char *s = help_text; *s; s++) {
        if (*s == '\n') {
            lines++;
            c = 0;
        } else if (++c > cols) {
            cols = c;
        }
    }
    int w = cols * a->winfo.char_w, h = lines * a->winfo.char_h;
    int x = (cv->w - w) / 2, y = (cv->h - h) / 2;
    if (x < 10)
        x = 10;
    if (y < 10)
        y = 10;
    fill_rect(cv, x - 16, y - 12, w + 32, h + 24, 0x020A14, 200);
    hud_text_block(a, cv, x, y, help_text, 0xFFFFF2D0u, 0);
}

static void draw_status(app *a, canvas *cv)
{
    if (!a->status[0] || now_s() > a->status_until || !a->winfo.char_w)
        return;
    int w = (int)strlen(a->status) * a->winfo.char_w;
    hud_text_block(a, cv, (cv->w - w) / 2, cv->h - a->winfo.char_h - 16, a->status, 0xFFFFE080u, 1);
}

/* ---- one frame ------------------------------------------------------------------------- */

/* The predators of the simulation that steps (the GPU's with --backend cuda: the CPU
 * mirror only holds the boids). */
static size_t app_predators(const app *a, float *pos, float *vel)
{
    if (a->gpu)
        return shoal_gpu_sim_predators(a->gpu, pos, vel, SHOAL_MAX_PREDATORS);
    return shoal_sim_predators(a->sim, pos, vel, SHOAL_MAX_PREDATORS);
}

/* Draw the current state into `cv` (renderer image + overlays). Returns 0 or an exit code. */
/* Predators drawn as fish twice as long, red, after the boids (ids N + k). Fills the ex
 * buffers from the instances `in` and returns 1, or 0 when there are no predators or no
 * memory (then the boids alone are drawn). */
#define PREDATOR_SCALE 2.0f
#define PREDATOR_ARGB 0xFFE02828u
static int with_predators(app *a, shoal_render_instances *in)
{
    float pp[SHOAL_MAX_PREDATORS * 3], pv[SHOAL_MAX_PREDATORS * 3];
    size_t np = app_predators(a, pp, pv);
    if (np == 0)
        return 0;
    size_t n = in->count, total = n + np;
    if (total > a->ex_cap) {
        for (int k = 0; k < 6; k++) {
            float *q = realloc(a->ex[k], total * sizeof(float));
            if (!q)
                return 0;
            a->ex[k] = q;
        }
        uint32_t *id = realloc(a->ex_id, total * sizeof *id);
        if (id)
            a->ex_id = id;
        uint32_t *col = realloc(a->ex_color, total * sizeof *col);
        if (col)
            a->ex_color = col;
        float *sc = realloc(a->ex_scale, total * sizeof *sc);
        if (sc)
            a->ex_scale = sc;
        uint8_t *g = realloc(a->ex_group, total);
        if (g)
            a->ex_group = g;
        if (!id || !col || !sc || !g)
            return 0;
        a->ex_cap = total;
    }
    const float *src[6] = {in->px, in->py, in->pz, in->vx, in->vy, in->vz};
    for (int k = 0; k < 6; k++) {
        memcpy(a->ex[k], src[k], n * sizeof(float));
        for (size_t j = 0; j < np; j++)
            a->ex[k][n + j] = k < 3 ? pp[3 * j + (size_t)k] : pv[3 * j + (size_t)k - 3];
    }
    for (size_t i = 0; i < n; i++) {
        a->ex_id[i] = in->id ? in->id[i] : (uint32_t)i;
        a->ex_scale[i] = 1.0f;
        a->ex_color[i] = 0;
        a->ex_group[i] = in->group ? in->group[i] : 0;
    }
    /* ids after the whole school's (under MPI n is this rank's share) */
    size_t base = a->ranks > 1 ? a->desc.boid_count : n;
    for (size_t j = 0; j < np; j++) {
        a->ex_id[n + j] = (uint32_t)(base + j);
        a->ex_scale[n + j] = PREDATOR_SCALE;
        a->ex_color[n + j] = PREDATOR_ARGB;
        a->ex_group[n + j] = 0;
    }
    in->count = total;
    in->px = a->ex[0];
    in->py = a->ex[1];
    in->pz = a->ex[2];
    in->vx = a->ex[3];
    in->vy = a->ex[4];
    in->vz = a->ex[5];
    in->id = a->ex_id;
    in->scale = a->ex_scale;
    in->color = a->ex_color;
    if (in->group)
        in->group = a->ex_group;
    return 1;
}

/* Obstacles (wireframes of the meshes, circles of the spheres) and heading targets. */
static void draw_scene_overlays(app *a, canvas *cv, const proj *p)
{
    for (int k = 0; k < a->obs_count; k++)
        overlay_mesh(cv, p, &a->obs_mesh[k], &a->obs_xf[k], OVERLAY_MESH_RGB, 110);
    const shoal_params *prm = &a->desc.params;
    for (int k = 0; k < (int)prm->sphere_count; k++)
        overlay_sphere(cv, p, prm->spheres[k].center, prm->spheres[k].radius, OVERLAY_MESH_RGB, 90);
    float t[SHOAL_MAX_TARGETS * 3];
    size_t nt = shoal_sim_targets(a->sim, app_sim_time(a), t, SHOAL_MAX_TARGETS);
    for (size_t k = 0; k < nt; k++)
        overlay_target(cv, p, t + 3 * k, a->target_drag == (int)k + 1);
    /* predators: their flee radius as a red ring facing the camera */
    float pp[SHOAL_MAX_PREDATORS * 3];
    size_t np = app_predators(a, pp, NULL);
    for (size_t k = 0; k < np; k++) {
        float v[3], x, y;
        proj_view(p, pp + 3 * k, v);
        if (!proj_point(p, pp + 3 * k, &x, &y))
            continue;
        float r = prm->flee_radius * p->k / v[2];
        for (int i = 0; i < 40; i++) {
            float a0 = 6.2831853f * (float)i / 40.0f, a1 = 6.2831853f * (float)(i + 1) / 40.0f;
            line2d(cv, x + r * cosf(a0), y + r * sinf(a0), x + r * cosf(a1), y + r * sinf(a1),
                   0xFF3030u, 150);
        }
    }
}

/* The target whose marker is within OVERLAY_PICK_PX of pixel (x, y), nearest first; -1. */
static int target_at(app *a, const proj *p, int x, int y, float pos[3])
{
    float t[SHOAL_MAX_TARGETS * 3];
    size_t nt = shoal_sim_targets(a->sim, app_sim_time(a), t, SHOAL_MAX_TARGETS);
    int best = -1;
    float best_d2 = (float)(OVERLAY_PICK_PX * OVERLAY_PICK_PX);
    for (size_t k = 0; k < nt; k++) {
        float sx, sy;
        if (!proj_point(p, t + 3 * k, &sx, &sy))
            continue;
        float dx = sx - (float)x, dy = sy - (float)y, d2 = dx * dx + dy * dy;
        if (d2 <= best_d2) {
            best_d2 = d2;
            best = (int)k;
            memcpy(pos, t + 3 * k, 3 * sizeof(float));
        }
    }
    return best;
}

/* Move target k under pixel (x, y), on the plane through `on` facing the camera. */
static void target_move(app *a, int k, int x, int y, int w, int h, const float on[3],
                        const char *what)
{
    shoal_camera c = orbit_camera(&a->cam);
    proj p = proj_make(&c, w > 0 ? w : 1, h > 0 ? h : 1);
    float q[3];
    proj_unproject(&p, (float)x + 0.5f, (float)y + 0.5f, on, q);
    if (a->gpu) {
        set_status(a, "the CUDA backend keeps the seed's target schedule: drag targets with "
                      "--backend cpu");
        return;
    }
    shoal_error e;
    if (shoal_sim_set_target(a->sim, (size_t)k, q, &e)) {
        set_status(a, "%s", e.message);
        return;
    }
    if (what)
        set_status(a, "target %d %s (%.2f, %.2f, %.2f)", k, what, (double)q[0], (double)q[1],
                   (double)q[2]);
}

/* Keys m/M and n: nudge and turn the first obstacle mesh (the field is rebuilt). */
static void obstacle_nudge(app *a, float dx, float dry)
{
    if (a->obs_count == 0 || !a->sim) {
        set_status(a, "no obstacle mesh in this scene");
        return;
    }
    shoal_transform t = a->obs_xf[0];
    t.position[0] += dx;
    t.rotation_deg[1] += dry;
    shoal_error e;
    if (shoal_sim_move_obstacle(a->sim, 0, &t, &e) ||
        (a->gpu && shoal_gpu_sim_copy_obstacles(a->gpu, a->sim, &e))) {
        set_status(a, "%s", e.message);
        return;
    }
    a->obs_xf[0] = t;
    set_status(a, "obstacle at x %.2f, turned %.0f deg (field rebuilt, %llu builds)",
               (double)t.position[0], (double)t.rotation_deg[1],
               (unsigned long long)shoal_sim_field(a->sim).builds);
}

/* Under MPI: this rank's own fish as a view (rows as ids); count SIZE_MAX: no memory. */
static shoal_boid_view local_view(app *a)
{
    shoal_boid_view v;
    memset(&v, 0, sizeof v);
    size_t n = mpi_school_local_count(a->school);
    if (n > a->loc_cap) {
        size_t cap = n + n / 4;
        for (int k = 0; k < 6; k++) {
            float *q = realloc(a->loc[k], cap * sizeof(float));
            if (!q) {
                v.count = SIZE_MAX;
                return v;
            }
            a->loc[k] = q;
        }
        uint32_t *r = realloc(a->loc_row, cap * sizeof *r);
        if (!r) {
            v.count = SIZE_MAX;
            return v;
        }
        a->loc_row = r;
        a->loc_cap = cap;
    }
    if (n)
        mpi_school_local(a->school, a->loc, a->loc_row);
    v.count = n;
    v.px = a->loc[0];
    v.py = a->loc[1];
    v.pz = a->loc[2];
    v.vx = a->loc[3];
    v.vy = a->loc[4];
    v.vz = a->loc[5];
    v.row_of = a->loc_row;
    return v;
}

static int draw_frame(app *a, canvas *cv, int sampled_trails)
{
    shoal_error e;
    double t0 = now_s();
    if (cv->w != a->rdesc.width || cv->h != a->rdesc.height) {
        if (shoal_render_set_size(a->ren, cv->w, cv->h, &e)) {
            fprintf(stderr, "shoal run: %s\n", e.message);
            return app_exit_code(e.status);
        }
        a->rdesc.width = cv->w;
        a->rdesc.height = cv->h;
    }
    shoal_boid_view v = a->ranks > 1 ? local_view(a) : shoal_sim_view(a->sim);
    if (a->ranks > 1 &&
        mpi_agree(v.count == SIZE_MAX
                      ? shoal_error_set(&e, SHOAL_ERR_NOMEM, "out of memory for this rank's fish")
                      : SHOAL_OK,
                  &e)) {
        fprintf(stderr, "shoal run: %s\n", e.message);
        return 2;
    }
    const float *px = v.px, *py = v.py, *pz = v.pz;
    float alpha = a->cfg.interp && !a->cfg.steps_per_frame ? (float)(a->acc_s / a->desc.dt_s) : 0;
    if (alpha > 0 && v.count <= a->cap) {
        float k = alpha * extrapolation_scale(a);
        for (size_t i = 0; i < v.count; i++) {
            a->ipx[i] = v.px[i] + v.vx[i] * k;
            a->ipy[i] = v.py[i] + v.vy[i] * k;
            a->ipz[i] = v.pz[i] + v.vz[i] * k;
        }
        px = a->ipx;
        py = a->ipy;
        pz = a->ipz;
    }
    /* follow: ease the target toward the school's centre (or the picked boid) */
    float pick[3] = {0, 0, 0};
    size_t pi = a->grid ? view_index_of_row(&v, a->picked_row) : (size_t)-1;
    if (a->grid && pi == (size_t)-1) {
        pick_default(a);
        pi = view_index_of_row(&v, a->picked_row);
    }
    if (pi != (size_t)-1) {
        pick[0] = px[pi];
        pick[1] = py[pi];
        pick[2] = pz[pi];
    }
    shoal_render_instances inst;
    memset(&inst, 0, sizeof inst);
    inst.count = v.count;
    inst.px = px;
    inst.py = py;
    inst.pz = pz;
    inst.vx = v.vx;
    inst.vy = v.vy;
    inst.vz = v.vz;
    inst.id = v.row_of;
    if (a->grid && pi != (size_t)-1) {
        grid_groups(a, &v, px, py, pz, pick);
        inst.group = a->group;
    }
    if (a->trails && sampled_trails)
        trails_sample(a, &v, px, py, pz);
    with_predators(a, &inst);
    shoal_camera cam = orbit_camera(&a->cam);
    double t1 = now_s();
    shoal_status rst = shoal_render_frame(a->ren, &inst, &cam, &e);
    double t_comp = 0;
    if (a->ranks > 1 && !(rst = mpi_agree(rst, &e))) {
        /* colour by speed scales by the school's largest visible speed: a rank whose own
         * fish were slower draws again against it; then rank 0 composites by depth */
        float mine = shoal_render_get_stats(a->ren).speed_scale, all = mpi_max_float(mine);
        if (all != mine) {
            shoal_render_set_speed_scale(a->ren, all);
            rst = shoal_render_frame(a->ren, &inst, &cam, &e);
            shoal_render_set_speed_scale(a->ren, 0);
        }
        if (!(rst = mpi_agree(rst, &e))) {
            const float *z;
            const uint32_t *idb;
            shoal_render_depth(a->ren, &z, &idb);
            shoal_framebuffer cfb = shoal_render_framebuffer(a->ren);
            rst = mpi_composite((uint32_t *)(uintptr_t)cfb.argb, z, idb,
                                (size_t)cfb.width * (size_t)cfb.height, &t_comp, &e);
            a->composite_ms += t_comp;
            a->composites++;
        }
    }
    if (rst) {
        fprintf(stderr, "shoal run: %s\n", e.message);
        return app_exit_code(rst);
    }
    double t2 = now_s();
    a->rstats = shoal_render_get_stats(a->ren);
    t_add(&a->win_t, T_RENDER, (t2 - t1) * 1e3);
    t_add(&a->win_t, T_INSTANCE, a->rstats.instance_ms);
    t_add(&a->win_t, T_SETUP, a->rstats.setup_ms);
    t_add(&a->win_t, T_RASTER, a->rstats.raster_ms);
    t_add(&a->win_t, T_RESOLVE, a->rstats.resolve_ms);
    if (a->ranks > 1 && mpi_rank() != 0) { /* the composite and its overlays are rank 0's */
        t_add(&a->win_t, T_OVERLAY, (t1 - t0) * 1e3);
        return 0;
    }
    shoal_framebuffer fb = shoal_render_framebuffer(a->ren);
    int cw = fb.width < cv->w ? fb.width : cv->w, ch = fb.height < cv->h ? fb.height : cv->h;
    for (int y = 0; y < ch; y++)
        memcpy(cv->px + (size_t)y * (size_t)cv->stride, fb.argb + (size_t)y * (size_t)fb.stride_px,
               (size_t)cw * 4);
    proj p = proj_make(&cam, cv->w, cv->h);
    draw_scene_overlays(a, cv, &p);
    if (a->trails)
        trails_draw(a, cv, &p);
    if (a->grid && pi != (size_t)-1)
        draw_grid_overlay(a, cv, &p, pick, &v, px, py, pz);
    if (a->win) {
        if (a->hud)
            draw_hud(a, cv);
        if (a->help)
            draw_help(a, cv);
        draw_status(a, cv);
    }
    t_add(&a->win_t, T_OVERLAY, (now_s() - t2) * 1e3 + (t1 - t0) * 1e3);
    return 0;
}

/* Step the simulation `n` times (timed). Returns 0 or an exit code. */
static int sim_steps(app *a, int n)
{
    if (n <= 0)
        return 0;
    shoal_error e;
    double t0 = now_s();
    shoal_status st;
    if (a->school) {
        st = mpi_school_step(a->school, n, &e);
    } else if (a->gpu) {
        st = shoal_gpu_sim_step(a->gpu, n, &e);
        if (!st)
            st = shoal_gpu_sim_get_state(a->gpu, a->gpu_rows, &e);
        if (!st)
            st = shoal_sim_set_state(a->sim, a->gpu_rows, &e);
    } else {
        st = shoal_sim_step(a->sim, n, &e);
    }
    double ms = (now_s() - t0) * 1e3;
    a->win_t.ms[T_SIM] += ms;
    a->win_t.calls[T_SIM] += (uint64_t)n;
    a->win_t.steps += (uint64_t)n;
    a->steps_total += (uint64_t)n;
    if (st) {
        fprintf(stderr, "shoal run: %s\n", e.message);
        return app_exit_code(st);
    }
    return 0;
}

/* Fold the frame window into the totals and, every half second, into the HUD's numbers. */
static void stats_roll(app *a, int force)
{
    double t = now_s();
    if (!force && t - a->hud_since < 0.5)
        return;
    double span = t - a->hud_since;
    a->hud_fps = span > 0 ? (double)a->win_t.frames / span : 0;
    a->hud_t = a->win_t;
    shoal_stage_stats st[SIM_STAGES];
    size_t ns = shoal_sim_stats(a->sim, st, SIM_STAGES);
    uint64_t calls = ns ? st[0].calls : 0;
    uint64_t dc = calls - a->sim_steps_prev;
    for (size_t k = 0; k < ns && k < SIM_STAGES; k++) {
        a->hud_stage_ms[k] = dc ? (st[k].total_ms - a->sim_stage_prev[k]) / (double)dc : 0;
        a->sim_stage_prev[k] = st[k].total_ms;
    }
    a->sim_steps_prev = calls;
    for (int k = 0; k < T_COUNT; k++) {
        a->total.ms[k] += a->win_t.ms[k];
        a->total.calls[k] += a->win_t.calls[k];
    }
    a->total.frames += a->win_t.frames;
    a->total.steps += a->win_t.steps;
    if (a->cfg.stats && a->win_t.frames) {
        double fr = (double)a->win_t.frames;
        printf("stats: %.1f fps  sim %.2f ms/frame (%llu steps)  render %.2f  overlays %.2f  "
               "present %.2f  output %.2f  frame %.2f ms\n",
               a->hud_fps, a->win_t.ms[T_SIM] / fr, (unsigned long long)a->win_t.steps,
               a->win_t.ms[T_RENDER] / fr, a->win_t.ms[T_OVERLAY] / fr, a->win_t.ms[T_PRESENT] / fr,
               a->win_t.ms[T_OUTPUT] / fr, a->win_t.ms[T_FRAME] / fr);
    }
    memset(&a->win_t, 0, sizeof a->win_t);
    a->hud_since = t;
}

static void print_summary(app *a, const char *what)
{
    stats_roll(a, 1);
    double wall = now_s() - a->t_start;
    const timings *t = &a->total;
    double fr = t->frames ? (double)t->frames : 1;
    printf("\nshoal run: %s: %llu frames, %llu steps in %.2f s: %.1f fps (%dx%d, %zu fish, "
           "model %s, %d threads, sim %s, render %s)\n",
           what, (unsigned long long)t->frames, (unsigned long long)a->steps_total, wall,
           wall > 0 ? (double)t->frames / wall : 0.0, a->rdesc.width, a->rdesc.height,
           a->ranks > 1 ? a->desc.boid_count : shoal_sim_count(a->sim),
           shoal_model_name(a->desc.model), shoal_system_thread_count(), shoal_sim_isa_name(a->sim),
           a->rstats.isa ? a->rstats.isa : "-");
    printf("  %-30s %10s %12s %12s\n", "stage", "calls", "total ms", "ms/frame");
    shoal_stage_stats st[SIM_STAGES];
    size_t ns = shoal_sim_stats(a->sim, st, SIM_STAGES);
    for (int k = 0; k < T_COUNT; k++) {
        if (!t->calls[k] && k != T_FRAME)
            continue;
        printf("  %-30s %10llu %12.2f %12.3f\n", t_names[k], (unsigned long long)t->calls[k],
               t->ms[k], t->ms[k] / fr);
        if (k == T_SIM)
            for (size_t s = 0; s < ns && s < SIM_STAGES; s++) {
                char name[64];
                snprintf(name, sizeof name, "  sim: %s", st[s].name);
                double ms = st[s].total_ms + a->sim_stage_ms_closed[s];
                printf("  %-30s %10llu %12.2f %12.3f\n", name,
                       (unsigned long long)(st[s].calls + a->sim_steps_closed), ms, ms / fr);
            }
    }
    if (a->ranks > 1) /* rank 0's: the composite happens there */
        printf("  %-30s %10llu %12.2f %12.3f\n", "composite (MPI, depth)",
               (unsigned long long)a->composites, a->composite_ms, a->composite_ms / fr);
    fflush(stdout);
}

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

static void screenshot(app *a, const canvas *cv)
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
        set_status(a, "screenshot failed: %s", e.message);
    else
        set_status(a, "screenshot: %s (%dx%d)", path, cv->w, cv->h);
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

static int run_headless(app *a)
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
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    a->t_start = a->hud_since = now_s();
    long long frames_written = 0;
    for (long long f = 0; f < c->frames; f++) {
        /* under MPI every rank stops at the same frame (a signal may reach one first) */
        if (a->ranks > 1 ? mpi_any(g_interrupted != 0) : g_interrupted)
            break;
        double t0 = now_s();
        if ((rc = sim_steps(a, spf)))
            break;
        if ((rc = draw_frame(a, &cv, 1)))
            break;
        double t1 = now_s();
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
        double t2 = now_s();
        t_add(&a->win_t, T_OUTPUT, (t2 - t1) * 1e3);
        t_add(&a->win_t, T_FRAME, (t2 - t0) * 1e3);
        a->win_t.frames++;
        stats_roll(a, 0);
    }
    if (g_interrupted && !rc) {
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
    print_summary(a, "headless");
    return rc;
}

/* ---- the window: input ----------------------------------------------------------------- */

static const char *key_label(int key, char *buf, size_t n)
{
    if (key > 32 && key < 127)
        snprintf(buf, n, "%c", key);
    else if (key == ' ')
        snprintf(buf, n, "space");
    else
        snprintf(buf, n, "#%d", key);
    return buf;
}

static void handle_key(app *a, int key, int mods, int width, int height)
{
    const shoal_param_info *list[EDITABLE_COUNT];
    int np = params_editable(a->desc.model, list);
    (void)width, (void)height;
    switch (key) {
    case APP_KEY_ESCAPE:
    case 'q':
        a->quit = 1;
        break;
    case ' ':
        a->paused = !a->paused;
        set_status(a, "%s", a->paused ? "paused" : "running");
        break;
    case '.':
        a->paused = 1;
        a->step_once = 1;
        break;
    case '[':
        a->speed = fmax(1.0 / 16, a->speed * 0.5);
        set_status(a, "speed %gx", a->speed);
        break;
    case ']':
        a->speed = fmin(16.0, a->speed * 2);
        set_status(a, "speed %gx", a->speed);
        break;
    case '0':
        a->speed = 1;
        set_status(a, "speed 1x");
        break;
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
        switch_model(a, (shoal_model)(key - '1'));
        break;
    case APP_KEY_PAGEUP:
        if (a->desc.boid_count * 2 <= (size_t)4 << 20)
            reseed(a, a->desc.boid_count * 2, a->seed);
        break;
    case APP_KEY_PAGEDOWN:
        if (a->desc.boid_count >= 2)
            reseed(a, a->desc.boid_count / 2, a->seed);
        break;
    case 'r':
        reseed(a, a->desc.boid_count, a->seed + 1);
        break;
    case APP_KEY_UP:
    case APP_KEY_DOWN:
    case APP_KEY_TAB:
        if (np) {
            int d = key == APP_KEY_UP || (key == APP_KEY_TAB && (mods & APP_MOD_SHIFT)) ? -1 : 1;
            a->param_index = ((a->param_index % np) + d + np) % np;
            const shoal_param_info *p = list[a->param_index];
            set_status(a, "parameter %s = %.4g: %s", p->name,
                       (double)param_value(&a->desc.params, p), p->help);
        }
        break;
    case APP_KEY_RIGHT:
    case '=':
    case '+':
    case APP_KEY_KP_PLUS:
        param_adjust(a, 1, 0);
        break;
    case APP_KEY_LEFT:
    case '-':
    case APP_KEY_KP_MINUS:
        param_adjust(a, -1, 0);
        break;
    case APP_KEY_BACKSPACE:
        param_adjust(a, 0, 1);
        break;
    case 'i':
    case APP_KEY_F3:
        a->hud = !a->hud;
        break;
    case 'h':
    case '/':
    case APP_KEY_F1:
        a->help = !a->help;
        break;
    case 'l': {
        a->rdesc.lod = !a->rdesc.lod;
        shoal_renderer *r;
        shoal_error e;
        if (shoal_renderer_create(&a->rdesc, &r, &e) == 0) {
            shoal_renderer_destroy(a->ren);
            a->ren = r;
            set_status(a, "level of detail %s", onoff(a->rdesc.lod));
        } else {
            a->rdesc.lod = !a->rdesc.lod;
            set_status(a, "%s", e.message);
        }
        break;
    }
    case 'k':
        a->place_mode = !a->place_mode;
        set_status(a, "target placing %s (left click places the next heading target)",
                   onoff(a->place_mode));
        break;
    case 'm':
        obstacle_nudge(a, (mods & APP_MOD_SHIFT) ? -1.0f : 1.0f, 0.0f);
        break;
    case 'n':
        obstacle_nudge(a, 0.0f, (mods & APP_MOD_SHIFT) ? -15.0f : 15.0f);
        break;
    case 'g':
        a->grid = !a->grid;
        if (a->grid && a->picked_row < 0)
            pick_default(a);
        set_status(a, "grid view %s", onoff(a->grid));
        break;
    case 't':
        a->trails = !a->trails;
        trails_reset(a);
        set_status(a, "trails %s", onoff(a->trails));
        break;
    case 'f':
        a->follow = !a->follow;
        set_status(a, "follow %s", onoff(a->follow));
        break;
    case 'c':
    case APP_KEY_HOME:
        a->cam = a->cam_home;
        a->follow = 0;
        set_status(a, "camera reset");
        break;
    case 'p':
    case APP_KEY_F12:
        a->shot_requested = 1;
        break;
    default:
        break;
    }
}

static void handle_event(app *a, const app_event *ev, int w, int h)
{
    char kb[16];
    switch (ev->type) {
    case APP_EVENT_QUIT:
        a->quit = 1;
        break;
    case APP_EVENT_KEY:
        if (a->log_input)
            printf("input: key %s (%s)\n", key_label(ev->key, kb, sizeof kb),
                   ev->injected ? "script" : "platform");
        handle_key(a, ev->key, ev->mods, w, h);
        break;
    case APP_EVENT_BUTTON_DOWN:
        if (a->log_input)
            printf("input: button %d down at %d %d (%s)\n", ev->button, ev->x, ev->y,
                   ev->injected ? "script" : "platform");
        a->drag_button = ev->button;
        a->drag_moved = 0;
        a->drag_x = ev->x;
        a->drag_y = ev->y;
        a->mods = ev->mods;
        if (ev->button == APP_BUTTON_LEFT && a->desc.model == SHOAL_MODEL_HEADING) {
            /* a marker under the pointer: drag it; ctrl+click elsewhere: place the next */
            shoal_camera c = orbit_camera(&a->cam);
            proj p = proj_make(&c, w > 0 ? w : 1, h > 0 ? h : 1);
            float pos[3];
            int k = target_at(a, &p, ev->x, ev->y, pos);
            if (k >= 0) {
                a->target_drag = k + 1;
                a->drag_button = 0; /* no orbit */
                set_status(a, "target %d grabbed", k);
            } else if ((ev->mods & APP_MOD_CTRL) || a->place_mode) {
                int n = (int)a->desc.params.target_count;
                int t = a->target_next++ % (n > 0 ? n : 1);
                float centre[3];
                shoal_boid_view v = shoal_sim_view(a->sim);
                school_centre(&v, centre);
                target_move(a, t, ev->x, ev->y, w, h, centre, "placed at");
                a->drag_button = 0;
            }
        }
        break;
    case APP_EVENT_BUTTON_UP:
        if (a->log_input)
            printf("input: button %d up at %d %d (%s)\n", ev->button, ev->x, ev->y,
                   ev->injected ? "script" : "platform");
        if (ev->button == APP_BUTTON_RIGHT && !a->drag_moved)
            pick_at(a, ev->x, ev->y, w, h);
        if (ev->button == APP_BUTTON_LEFT && a->target_drag) {
            int k = a->target_drag - 1;
            float t[SHOAL_MAX_TARGETS * 3];
            if (shoal_sim_targets(a->sim, app_sim_time(a), t, SHOAL_MAX_TARGETS) > (size_t)k)
                target_move(a, k, ev->x, ev->y, w, h, t + 3 * k, "dragged to");
            a->target_drag = 0;
        }
        a->drag_button = 0;
        break;
    case APP_EVENT_MOTION: {
        if (a->target_drag && (ev->buttons & 1)) {
            int k = a->target_drag - 1;
            float t[SHOAL_MAX_TARGETS * 3];
            if (shoal_sim_targets(a->sim, app_sim_time(a), t, SHOAL_MAX_TARGETS) > (size_t)k)
                target_move(a, k, ev->x, ev->y, w, h, t + 3 * k, NULL);
            break;
        }
        if (!a->drag_button || !ev->buttons)
            break;
        int dx = ev->dx, dy = ev->dy;
        if (abs(ev->x - a->drag_x) + abs(ev->y - a->drag_y) > 3)
            a->drag_moved = 1;
        int pan = a->drag_button == APP_BUTTON_RIGHT || a->drag_button == APP_BUTTON_MIDDLE ||
                  (a->mods & APP_MOD_SHIFT);
        if (!pan) {
            a->cam.yaw -= (float)dx * 0.006f;
            a->cam.pitch += (float)dy * 0.006f;
            a->cam.pitch = fmaxf(-1.50f, fminf(1.50f, a->cam.pitch));
        } else {
            shoal_camera c = orbit_camera(&a->cam);
            proj p = proj_make(&c, w > 0 ? w : 1, h > 0 ? h : 1);
            float s = a->cam.dist / p.k; /* world units per pixel at the target */
            for (int k = 0; k < 3; k++)
                a->cam.target[k] += (-(float)dx * p.s[k] + (float)dy * p.u[k]) * s;
            a->follow = 0;
        }
        if (a->log_input && !ev->injected)
            printf("input: drag %d %d (platform)\n", dx, dy);
        break;
    }
    case APP_EVENT_WHEEL:
        if (a->log_input)
            printf("input: wheel %g (%s)\n", (double)ev->wheel,
                   ev->injected ? "script" : "platform");
        a->cam.dist_goal *= powf(0.88f, ev->wheel);
        a->cam.dist_goal = fmaxf(0.5f, fminf(5000.0f, a->cam.dist_goal));
        break;
    case APP_EVENT_RESIZED:
        if (a->log_input)
            printf("input: resized %dx%d\n", ev->width, ev->height);
        break;
    case APP_EVENT_MINIMIZED:
        if (a->log_input)
            printf("input: minimized\n");
        a->minimized = 1;
        break;
    case APP_EVENT_RESTORED:
        if (a->log_input && a->minimized)
            printf("input: restored\n");
        a->minimized = 0;
        break;
    default:
        break;
    }
}

/* ---- the window: script ---------------------------------------------------------------- */

typedef struct script {
    char **lines;
    int count, next;
    long long wait_frames;
    int wait_key;      /* key code to wait for from the platform (0: none) */
    double wait_until; /* its deadline */
    int wait_shot;
    int failed;
} script;

static int script_load(script *s, const char *path)
{
    memset(s, 0, sizeof *s);
    FILE *f = fopen(path, "r");
    if (!f) {
        options_error("run", "--script %s: %s", path, strerror(errno));
        return 2;
    }
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        size_t n = strlen(line);
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' '))
            line[--n] = 0;
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p || *p == '#')
            continue;
        char **nl = realloc(s->lines, sizeof *nl * (size_t)(s->count + 1));
        if (!nl) {
            fclose(f);
            return 2;
        }
        s->lines = nl;
        s->lines[s->count++] = strdup(p);
    }
    fclose(f);
    return 0;
}

static void script_free(script *s)
{
    for (int i = 0; i < s->count; i++)
        free(s->lines[i]);
    free(s->lines);
}

/* The app key code of a key name as scripts write them (for wait-key). */
static int script_key_code(const char *name)
{
    if (strlen(name) == 1)
        return (unsigned char)name[0] >= 'A' && (unsigned char)name[0] <= 'Z' ? name[0] + 32
                                                                              : name[0];
    if (strcmp(name, "space") == 0)
        return ' ';
    if (strcmp(name, "Escape") == 0)
        return APP_KEY_ESCAPE;
    return -1;
}

/* Run script lines until one makes the app wait. Returns 0, or an exit code on failure. */
static int script_advance(app *a, script *s)
{
    while (s->next < s->count && !s->wait_frames && !s->wait_key && !s->wait_shot) {
        const char *line = s->lines[s->next++];
        char cmd[32] = "", arg[1024] = "";
        sscanf(line, "%31s %1023[^\n]", cmd, arg);
        if (strcmp(cmd, "frames") == 0) {
            s->wait_frames = atoll(arg);
        } else if (strcmp(cmd, "screenshot") == 0) {
            if (!arg[0]) {
                fprintf(stderr, "shoal run: script: screenshot needs a path\n");
                return 2;
            }
            snprintf(a->shot_path, sizeof a->shot_path, "%s", arg);
            char why[128];
            window_inject(a->win, "key F12", why, sizeof why);
            s->wait_shot = 1;
        } else if (strcmp(cmd, "wait-key") == 0) {
            char name[64] = "";
            double secs = 10;
            sscanf(arg, "%63s %lf", name, &secs);
            s->wait_key = script_key_code(name);
            if (s->wait_key < 0) {
                options_error("run", "script: wait-key: unknown key '%s'", name);
                return 2;
            }
            s->wait_until = now_s() + secs;
        } else if (strcmp(cmd, "touch") == 0) {
            FILE *f = fopen(arg, "w");
            if (f)
                fclose(f);
        } else if (strcmp(cmd, "echo") == 0) {
            printf("%s\n", arg);
        } else {
            char why[256];
            if (window_inject(a->win, line, why, sizeof why) != 0) {
                options_error("run", "script line %d '%s': %s", s->next, line, why);
                return 2;
            }
            s->wait_frames = 1; /* let the events arrive and a frame be drawn */
        }
        fflush(stdout);
    }
    return 0;
}

/* ---- the window: main loop ------------------------------------------------------------- */

static int run_window(app *a)
{
    const run_cfg *c = &a->cfg;
    script sc;
    memset(&sc, 0, sizeof sc);
    int rc = 0;
    if (c->script && (rc = script_load(&sc, c->script)))
        return rc;
    a->log_input = c->script != NULL;
    a->winfo = window_get_info(a->win);
    printf("shoal run: window %dx%d, present path %s%s%s%s, video driver %s, %s, font %s\n",
           c->width, c->height, a->winfo.present_path, a->winfo.gpu_note[0] ? " (" : "",
           a->winfo.gpu_note, a->winfo.gpu_note[0] ? ")" : "", a->winfo.video_driver,
           c->vsync ? (a->winfo.vsync ? "vsync" : "no vsync on this path: frames paced")
                    : "vsync off",
           a->winfo.font_path ? a->winfo.font_path : "none (no HUD text)");
    fflush(stdout);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    double pace = 0;
    if (c->vsync && !a->winfo.vsync)
        pace = 1.0 / (a->winfo.refresh_hz > 0 ? a->winfo.refresh_hz : 60);
    a->t_start = a->hud_since = now_s();
    double last = now_s(), next_deadline = last;
    long long frames = 0;
    int shot_wait_frames = 0;
    double step_ms_ema = 0;
    while (!a->quit && !g_interrupted) {
        double t0 = now_s();
        if (sc.lines && (rc = script_advance(a, &sc)))
            break;
        int w = a->rdesc.width, h = a->rdesc.height;
        app_event ev;
        while (window_poll(a->win, &ev, 0)) {
            if (sc.wait_key && ev.type == APP_EVENT_KEY && !ev.injected && ev.key == sc.wait_key)
                sc.wait_key = 0;
            handle_event(a, &ev, w, h);
        }
        if (a->quit)
            break;
        if (sc.wait_key && now_s() > sc.wait_until) {
            fprintf(stderr, "shoal run: script: timed out waiting for a key from the display\n");
            rc = 1;
            break;
        }
        /* fixed dt: the accumulator gets wall time x speed; at most a few steps a frame
         * (falling behind turns into slow motion, never a spiral) */
        double frame_s = t0 - last;
        last = t0;
        if (frame_s > 0.25)
            frame_s = 0.25;
        int steps = 0;
        if (a->minimized) {
            a->acc_s = 0;
        } else if (c->steps_per_frame > 0) {
            steps = a->paused ? 0 : c->steps_per_frame;
        } else if (!a->paused) {
            a->acc_s += frame_s * a->speed;
            steps = (int)(a->acc_s / a->desc.dt_s);
            /* no more steps than fit in ~20 ms: when the simulation is the bottleneck,
             * catching up would only make every frame longer */
            int cap = 4 + (int)ceil(a->speed);
            if (step_ms_ema > 0 && 20.0 / step_ms_ema < cap)
                cap = 20.0 / step_ms_ema < 1 ? 1 : (int)(20.0 / step_ms_ema);
            if (steps > cap) {
                steps = cap;
                a->acc_s = 0;
            } else {
                a->acc_s -= steps * a->desc.dt_s;
            }
        }
        if (a->step_once) {
            steps = 1;
            a->step_once = 0;
        }
        double ts0 = now_s();
        if ((rc = sim_steps(a, steps)))
            break;
        if (steps > 0) {
            double ms = (now_s() - ts0) * 1e3 / steps;
            step_ms_ema = step_ms_ema > 0 ? step_ms_ema * 0.8 + ms * 0.2 : ms;
        }
        /* camera easing: zoom and follow */
        float ease = 1.0f - expf(-(float)frame_s * 10.0f);
        a->cam.dist += (a->cam.dist_goal - a->cam.dist) * ease;
        if (a->follow) {
            shoal_boid_view v = shoal_sim_view(a->sim);
            float ctr[3];
            size_t pi = a->grid ? view_index_of_row(&v, a->picked_row) : (size_t)-1;
            if (pi != (size_t)-1) {
                ctr[0] = v.px[pi];
                ctr[1] = v.py[pi];
                ctr[2] = v.pz[pi];
            } else {
                school_centre(&v, ctr);
            }
            float fe = 1.0f - expf(-(float)frame_s * 3.0f);
            for (int k = 0; k < 3; k++)
                a->cam.target[k] += (ctr[k] - a->cam.target[k]) * fe;
        }
        canvas cv;
        cv.px = a->minimized ? NULL : window_begin_frame(a->win, &cv.w, &cv.h, &cv.stride);
        if (!cv.px) {
            /* minimised or zero-sized: nothing to draw; wait for events, use no CPU */
            if (sc.wait_shot && ++shot_wait_frames > 300) {
                fprintf(stderr, "shoal run: script: screenshot: the window shows nothing\n");
                rc = 1;
                break;
            }
            if (window_poll(a->win, &ev, 50))
                handle_event(a, &ev, w, h);
            if (sc.wait_frames > 0)
                sc.wait_frames--;
            continue;
        }
        if ((rc = draw_frame(a, &cv, steps > 0)))
            break;
        if (a->shot_requested) {
            double ts = now_s();
            screenshot(a, &cv);
            sc.wait_shot = 0;
            shot_wait_frames = 0;
            a->win_t.ms[T_OUTPUT] += (now_s() - ts) * 1e3;
            a->win_t.calls[T_OUTPUT]++;
        }
        double tp = now_s();
        window_present(a->win);
        double tq = now_s();
        t_add(&a->win_t, T_PRESENT, (tq - tp) * 1e3);
        t_add(&a->win_t, T_FRAME, (tq - t0) * 1e3);
        a->win_t.frames++;
        frames++;
        if (sc.wait_frames > 0)
            sc.wait_frames--;
        stats_roll(a, 0);
        if (c->frames && frames >= c->frames)
            break;
        if (pace > 0) {
            next_deadline += pace;
            double t = now_s();
            if (next_deadline < t - pace)
                next_deadline = t; /* fell behind: do not try to catch up */
            sleep_s(next_deadline - t);
        }
    }
    if (sc.lines && !rc && (sc.next < sc.count || sc.wait_key || sc.wait_shot) && !a->quit)
        rc = g_interrupted ? 130 : 0;
    script_free(&sc);
    print_summary(a, "window");
    return rc;
}

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

static int parse_size(const opt_values *o, int *w, int *h)
{
    const char *v = options_get(o, "size");
    char *end;
    long a = strtol(v, &end, 10);
    if (end == v || (*end != 'x' && *end != 'X'))
        return options_fail(o, "--size: '%s' is not WxH", v);
    const char *p = end + 1;
    long b = strtol(p, &end, 10);
    if (end == p || *end)
        return options_fail(o, "--size: '%s' is not WxH", v);
    if (a < 1 || b < 1 || a > SHOAL_RENDER_MAX_SIZE || b > SHOAL_RENDER_MAX_SIZE)
        return options_fail(o, "--size: %ldx%ld is outside 1..%d per side", a, b,
                            SHOAL_RENDER_MAX_SIZE);
    *w = (int)a;
    *h = (int)b;
    return 0;
}

static int parse_cfg(const opt_values *o, run_cfg *c)
{
    memset(c, 0, sizeof *c);
    int rc;
    long long ll;
    double d;
    if ((rc = parse_size(o, &c->width, &c->height)))
        return rc;
    if ((rc = options_int(o, "threads", 0, 1024, &ll)))
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
    c->video = options_given(o, "video") ? options_get(o, "video") : NULL;
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
    if ((c->out_dir || c->video) && !c->headless)
        return options_fail(o, "--out and --video are for --headless (in a window, press p "
                               "for a screenshot)");
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
        const char *path = options_get(o, "scene");
        memset(s, 0, sizeof *s);
        s->desc = sc.desc;
        s->has_camera = sc.has_eye && sc.has_target;
        memcpy(s->eye, sc.eye, sizeof s->eye);
        memcpy(s->target, sc.target, sizeof s->target);
        s->fov_deg = sc.has_fov ? sc.fov_deg : 60.0f;
        s->fish_length = sc.has_fish_length ? sc.fish_length : 0.0f;
        snprintf(s->name, sizeof s->name, "%s", path);
        s->mesh_count = sc.mesh_count;
        memcpy(s->meshes, sc.meshes, sizeof s->meshes);
    } else {
        if (scene_for_model(m, s, &e))
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
        scaled->s = setup_set_count(s, (size_t)ll, options_given(o, "keep-geometry"));
    }
    scaled->scaled = *d;
    if (options_given(o, "seed")) {
        if ((rc = options_int(o, "seed", 0, INT64_MAX, &ll)))
            return rc;
        d->seed = (uint64_t)ll;
    }
    for (int i = 0; i < o->repeat_count; i++) {
        if (strcmp(o->specs[o->repeat_of[i]].name, "set") != 0)
            continue;
        const char *kv = o->repeat[i];
        const char *eq = strchr(kv, '=');
        if (!eq || eq == kv)
            return options_fail(o, "--set '%s': expected name=value", kv);
        char name[128];
        size_t len = (size_t)(eq - kv);
        if (len >= sizeof name)
            return options_fail(o, "--set '%s': name too long", kv);
        memcpy(name, kv, len);
        name[len] = 0;
        if (shoal_params_set(d->model, &d->params, name, eq + 1, &e))
            return options_fail(o, "%s", e.message);
    }
    if (shoal_params_validate(d->model, &d->params, &e))
        return options_fail(o, "%s", e.message);
    return 0;
}

static void app_free(app *a)
{
    sim_close(a);
    if (a->ren)
        shoal_renderer_destroy(a->ren);
    if (a->win)
        window_close(a->win);
    free(a->ipx);
    free(a->ipy);
    free(a->ipz);
    free(a->group);
    free(a->trail);
    for (int k = 0; k < 6; k++)
        free(a->ex[k]);
    free(a->ex_id);
    for (int k = 0; k < 6; k++)
        free(a->loc[k]);
    free(a->loc_row);
    free(a->ex_color);
    free(a->ex_scale);
    free(a->ex_group);
    for (int k = 0; k < a->obs_count; k++)
        shoal_mesh_free(&a->obs_mesh[k]);
    free(a->gpu_rows);
}

int cmd_run(int argc, char **argv)
{
    opt_values o;
    int rc = options_parse(&o, "run", run_usage, run_specs, RUN_SPEC_COUNT, 0, argc, argv);
    if (rc)
        return rc == 1 ? 0 : rc;
    if ((rc = options_check_outputs(&o, (const char *const[]){"video", "trace", NULL})))
        return rc;
    app *a = calloc(1, sizeof *a);
    if (!a)
        return options_fail(&o, "out of memory");
    run_cfg *c = &a->cfg;
    if ((rc = parse_cfg(&o, c))) {
        free(a);
        return rc;
    }
    scene_setup s;
    app_scaled scaled;
    if ((rc = build_scene(&o, &s, &scaled))) {
        free(a);
        return rc;
    }
    if (c->threads > 0)
        shoal_system_set_thread_count(c->threads);
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
            if (!c->frames)
                c->frames = 120;
            if (!c->out_dir)
                c->out_dir = "out/frames";
            if (strcmp(why, "no display") != 0)
                fprintf(stderr, "shoal: %s\n", why);
            printf("shoal: no display; running headless: writing %lld frames to %s\n", c->frames,
                   c->out_dir);
            fflush(stdout);
        }
    } else {
        if (!c->frames)
            c->frames = 120;
        if (!c->out_dir && !c->video && !c->discard)
            c->out_dir = "out/frames";
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
    a->follow = c->follow;
    a->picked_row = -1;
    a->trail = malloc(sizeof(float) * 3 * TRAIL_BOIDS * TRAIL_LEN);
    shoal_error e;
    for (int k = 0; k < s.mesh_count; k++) {
        shoal_mesh *m = &a->obs_mesh[k];
        if (shoal_mesh_load(s.meshes[k].path, m, &e) ||
            (!m->normals && shoal_mesh_compute_normals(m, &e))) {
            rc = app_exit_code(e.status);
            options_fail(&o, "%s: [mesh %s]: %s", s.name, s.meshes[k].name, e.message);
            app_free(a);
            free(a);
            return rc;
        }
        a->obs_xf[k] = s.meshes[k].transform;
        a->obs_count = k + 1;
    }
    if (!a->trail) {
        app_free(a);
        free(a);
        return options_fail(&o, "out of memory");
    }
    if (sim_open(a, &e)) {
        rc = app_exit_code(e.status);
        options_fail(&o, "%s", e.message);
        app_free(a);
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
    float fl = c->fish_length > 0 ? c->fish_length : s.fish_length > 0 ? s.fish_length : 1.0f;
    if (renderer_open(a, fl, &e)) {
        rc = app_exit_code(e.status);
        options_fail(&o, "%s", e.message);
        app_free(a);
        free(a);
        return rc;
    }
    if (s.has_camera) {
        orbit_from_eye(&a->cam_home, s.eye, s.target, s.fov_deg);
    } else if (camera_home_from_state(a, &e)) {
        rc = app_exit_code(e.status);
        options_fail(&o, "%s", e.message);
        app_free(a);
        free(a);
        return rc;
    }
    a->cam = a->cam_home;
    if (a->grid)
        pick_default(a);

    const char *trace = options_get(&o, "trace");
    if (trace) {
        /* preallocated: 64 MiB of spans over the threads; later spans are counted dropped */
        int tracks = shoal_system_thread_count();
        if (shoal_profile_trace_open(tracks, ((size_t)64 << 20) / 32 / (size_t)tracks, &e)) {
            rc = app_exit_code(e.status);
            options_fail(&o, "%s", e.message);
            app_free(a);
            free(a);
            return rc;
        }
    }
    rc = c->headless ? run_headless(a) : run_window(a);
    if (rc == 0 && c->stats && a->ranks > 1)
        mpi_school_print_stats(a->school); /* collective: the decomposition's numbers */
    if (trace) {
        uint64_t dropped = 0, kept = shoal_profile_trace_count(&dropped);
        shoal_error te;
        if (rc == 0 && shoal_profile_trace_write(trace, &te)) {
            rc = app_exit_code(te.status);
            options_fail(&o, "%s", te.message);
        } else if (rc == 0) {
            fprintf(stderr, "shoal run: trace %s: %llu spans", trace, (unsigned long long)kept);
            if (dropped)
                fprintf(stderr, " (%llu more dropped: the buffer was full)",
                        (unsigned long long)dropped);
            fputc('\n', stderr);
        }
        shoal_profile_trace_close();
    }
    if (rc == 0 && mpi_rank() == 0) /* after the run: an error stays the one line on stderr */
        app_print_scaled("run", &scaled, &s.desc);
    app_free(a);
    free(a);
    return rc;
}
