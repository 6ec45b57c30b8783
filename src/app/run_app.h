/* SPDX-License-Identifier: MIT */
/* `shoal run`: the interactive program's state (struct app) and what its files share. The
 * files by job: cmd_run.c (options, entry), run_sim.c (clock, camera, simulation and renderer
 * lifetime, stepping, statistics), run_input.c (keys, mouse, parameters, scripted input),
 * run_draw.c (one frame: instances, overlays, HUD), run_capture.c (screenshots, PNG frames,
 * video, the headless loop), run_window.c (the window loop). They talk to the platform only
 * through window.h (no SDL here), to the simulation only through sim.h and gpu.h, to the
 * renderer only through render.h, to MPI only through mpi_app.h. */
#ifndef SHOAL_APP_RUN_APP_H
#define SHOAL_APP_RUN_APP_H

#include "app/overlay.h" /* proj, canvas, line3d, v3_sub, v3_dot (shared with shoal render) */
#include "app/window.h"
#include "mpi_app.h"
#include "shoal/gpu.h"
#include "shoal/render.h"

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

/* The command line, parsed (cmd_run.c). */
typedef struct run_cfg {
    int width, height;
    int threads;
    shoal_isa isa;
    int cuda;                  /* --backend cuda */
    shoal_gpu_order gpu_order; /* --gpu-order */
    int headless, fallback;
    long long frames; /* 0: unlimited */
    const char *out_dir;
    int out_overwrite; /* --overwrite, or out/frames by default: replace another run's frames */
    const char *video;
    int video_default;   /* out/shoal.mp4: its directory is made */
    double fps;          /* --video's frame rate */
    int steps_per_frame; /* 0: real time */
    double speed;
    int vsync, interp, lod, hud, grid, trails, follow, stats;
    shoal_shade shade;
    float fish_length; /* 0: the scene's */
    const char *script;
    int discard;  /* --out -: frames are drawn and dropped */
    int has_view; /* --eye and --target given */
    float eye[3], target[3];
} run_cfg;

/* An orbit camera: the eye on a sphere around `target` (yaw about +Y, pitch above the
 * horizon), distance eased toward dist_goal so that the wheel zooms smoothly. */
typedef struct orbit {
    float target[3];
    float yaw, pitch, dist, dist_goal;
    float fov_deg;
} orbit;

/* Timing: the stages of a frame, summed per window of frames and over the run. */
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

typedef struct timings {
    double ms[T_COUNT];
    uint64_t calls[T_COUNT];
    uint64_t frames, steps;
} timings;

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
    /* the HUD's font: the window's, or (headless) one of our own */
    const app_font *font;
    app_font *own_font;
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
    mpi_frame *frame; /* the composite's buffers and numbers */
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
    /* --trace: the one profile lent to every sim and renderer of the run, so that steps and
     * frames land on the same tracks (NULL: each records into its own) */
    shoal_profile *prof;
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
    double out_busy_ms; /* headless: the writer thread's time (PNG encoding, the video pipe) */
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

/* A scene as run starts it: --scene's or a model's (key 1-5). */
typedef struct scene_setup {
    shoal_sim_desc desc;
    int has_camera;
    float eye[3], target[3], fov_deg;
    float fish_length; /* 0: none given */
    int follow;        /* [camera] follow = on */
    char name[1024];
    int mesh_count;
    shoal_scene_mesh meshes[SHOAL_MAX_OBSTACLES];
} scene_setup;

/* --script: its lines and what the window loop waits for before the next. */
typedef struct run_script {
    char **lines;
    int count, next;
    long long wait_frames;
    int wait_key;      /* key code to wait for from the platform (0: none) */
    double wait_until; /* its deadline */
    int wait_shot;
    int failed;
} run_script;

/* The most rule parameters the keys edit in one model (its shoal_model_info.live_params). */
#define RUN_EDITABLE_COUNT 32

/* ---- run_sim.c ------------------------------------------------------------------------- */

/* Wall clock in seconds (the stage profiler's clock). */
double run_now_s(void);
/* The worker threads of the run's sim and renderer (--threads, else the process default). */
int run_thread_count(const app *a);
/* Set the orbit camera from an eye, a target and a vertical field of view in degrees. */
void run_orbit_from_eye(orbit *o, const float eye[3], const float target[3], float fov);
/* The renderer's camera for an orbit camera. */
shoal_camera run_orbit_camera(const orbit *o);
/* Add one call of `ms` to timing stage k (T_*). */
void run_time_add(timings *t, int k, double ms);
/* Set by run_on_signal (SIGINT, SIGTERM): the loops stop after the frame. */
extern volatile sig_atomic_t run_interrupted;
/* The loops' SIGINT/SIGTERM handler: stop after this frame, die in a second otherwise. */
void run_on_signal(int sig);
/* The status line (3 s on screen; printed on stdout headless or with --script). */
void run_set_status(app *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Give the setup `count` fish (shoal_scene_set_count); returns the scale factor. */
double run_setup_set_count(scene_setup *s, size_t count, int keep_geometry);
/* The model's scene file from the assets (scenes/MODEL.ini), else the same scene built in
 * (the model's defaults, shoal_sim_desc_for). */
shoal_status run_scene_for_model(shoal_model m, scene_setup *s, shoal_error *e);
/* The default scene (`shoal`, `shoal run` without --scene and --model): assets/scenes/
 * RUN_DEFAULT_SCENE, else (an install without the scenes) steer's. */
#define RUN_DEFAULT_SCENE "school.ini"
shoal_status run_scene_default(scene_setup *s, shoal_error *e);
/* Empty the trails and pick which rows they follow for the school's size. */
void run_trails_reset(app *a);
/* Simulated time of the next step, on whichever backend steps. */
double run_sim_time(const app *a);
/* Ease the camera for a frame of frame_s seconds: the zoom toward its goal and, with follow
 * on, the target toward the school's centre (or the picked boid). Headless frames pass
 * their simulated time, so the camera's path is a function of the run. Collective under
 * MPI (the centre is summed over the ranks, exactly). */
void run_camera_update(app *a, double frame_s);
/* --backend cuda: (re)create the GPU simulation from a->desc and the current state. */
shoal_status run_gpu_open(app *a, shoal_error *e);
/* (Re)create the simulation (one process, MPI school or GPU) from a->desc, seeded. */
shoal_status run_sim_open(app *a, shoal_error *e);
/* The home camera framing the current school (rank 0 frames under MPI, all get it). */
shoal_status run_camera_home(app *a, shoal_error *e);
/* (Re)create the renderer when there is none or the fish length changed. */
shoal_status run_renderer_open(app *a, float fish_length, shoal_error *e);
/* Step `n` times (timed); 0 or an exit code after printing. */
int run_sim_steps(app *a, int n);
/* Fold the frame window into the totals and (every 0.5 s, or when forced) the HUD's numbers. */
void run_stats_roll(app *a, int force);
/* The end-of-run table on stdout. */
void run_print_summary(app *a, const char *what);
/* Free everything the app owns (not `a` itself). */
void run_app_free(app *a);

/* The parameters the keys edit (the model's shoal_model_info.live_params, in key order)
 * into `out` (RUN_EDITABLE_COUNT at most); returns how many. */
int run_params_editable(shoal_model m, const shoal_param_info **out);
/* A parameter's current value in `p`. */
float run_param_value(const shoal_params *p, const shoal_param_info *info);
/* Set it (a value the editor has clamped to the parameter's range; the sim validates). */
void run_param_set(shoal_params *p, const shoal_param_info *info, float value);
/* Pick the boid nearest the camera's target (the grid view's default). */
void run_pick_default(app *a);
/* The mean position of the view's boids (collective under MPI with 2+ ranks: the whole
 * school's), summed in fixed point so that it is the same for any order and split. */
void run_school_centre(const app *a, const shoal_boid_view *v, float c[3]);
/* "on" or "off". */
static inline const char *run_onoff(int v) { return v ? "on" : "off"; }

/* ---- run_input.c ----------------------------------------------------------------------- */
/* Apply one event (key, button, motion, wheel, window) to the app; w, h: the frame size. */
void run_handle_event(app *a, const app_event *ev, int w, int h);
/* Read --script's lines; 0, or 2 after printing. */
int run_script_load(run_script *s, const char *path);
void run_script_free(run_script *s);
/* Run script lines until one makes the app wait; 0, or an exit code after printing. */
int run_script_advance(app *a, run_script *s);

/* ---- run_draw.c ------------------------------------------------------------------------ */

/* The index in the view of input row `row`, or (size_t)-1. */
size_t run_view_index_of_row(const shoal_boid_view *v, long long row);
/* Draw the current state into `cv` (renderer image + overlays); 0 or an exit code. */
int run_draw_frame(app *a, canvas *cv, int sampled_trails);

/* ---- run_capture.c, run_window.c -------------------------------------------------------- */

/* Write `cv` to the requested screenshot path (or a time-stamped one); says so in the status. */
void run_screenshot(app *a, const canvas *cv);
/* The headless loop: --frames frames stepped, drawn and written; the exit code. */
int run_headless(app *a);
/* The frames of `run --out DIR` (frame_NNNNN.png, five digits or more): what a later run may
 * replace with --overwrite, and what no other output of the run may name. */
int run_frames_owns(const char *name);
/* The window loop until quit, --frames or the script's end; the exit code. */
int run_window(app *a);

#endif
