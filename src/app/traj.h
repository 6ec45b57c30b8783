/* SPDX-License-Identifier: MIT */
/* Long runs in the program: the progress line on a terminal, trajectories (a state every E
 * steps into a directory, .npy or VTK, with a JSON manifest and a ParaView .pvd), the step
 * loop that feeds both, and JSON helpers shared by step, render replay and sweep. */
#ifndef SHOAL_APP_TRAJ_H
#define SHOAL_APP_TRAJ_H

#include "shoal/shoal.h"
#include "support/json.h"

#include <stdio.h>

/* One updating line on stderr ("\r...\033[K"), only when stderr is a terminal and not
 * quiet; at most 4 redraws a second; progress_end clears it. `label` is the command. */
typedef struct progress {
    int on;
    const char *label;
    long long total;
    double t_start, t_last;
    char note[160]; /* shown after the counts (a sweep's current member) */
    int drawn;
} progress;

void progress_begin(progress *p, const char *label, long long total, int quiet);
/* Redraw when at least 0.25 s passed since the last redraw (or `force`). Cheap otherwise:
 * one clock read. */
void progress_update(progress *p, long long done, int force);
void progress_end(progress *p);

/* A trajectory directory: DIR/state_NNNNNN.npy (or .vtp with vtk), DIR/manifest.json written
 * last, and DIR/trajectory.pvd with vtk. Every file is written atomically. */
typedef struct traj_frame_rec {
    long long step;
    double t;
} traj_frame_rec;

typedef struct traj {
    char dir[4096];
    const struct app_format *fmt; /* app.c's table: npy, or vtk (with trajectory.pvd) */
    long long every;
    float *rows;
    size_t count;
    traj_frame_rec *frames;
    size_t frame_count, frame_cap;
} traj;

/* Create DIR (and parents) and check that it can be written: SHOAL_ERR_IO naming it if not. */
shoal_status traj_mkdir(const char *dir, shoal_error *e);
shoal_status traj_open(traj *t, const char *dir, const char *format, long long every, size_t count,
                       shoal_error *e);
/* Write the sim's state as frame `step` (steps done in this run). */
shoal_status traj_write(traj *t, const shoal_sim *sim, long long step, shoal_error *e);
/* Manifest (and .pvd); frees. `ok` 0: free only. */
shoal_status traj_close(traj *t, const shoal_sim *sim, long long steps, int ok, shoal_error *e);

/* Step `steps` steps: a trajectory frame at 0, every, 2 every, ... and at `steps` (tr may be
 * NULL), the progress line between chunks (pg may be NULL). The result is the same bits as
 * one shoal_sim_step(sim, steps) call (a run does not depend on how it is split). */
shoal_status app_sim_run(shoal_sim *sim, long long steps, traj *tr, progress *pg, shoal_error *e);

/* JSON: the model's parameters as an object {"name": value, ...} (every entry of
 * shoal_params_list, 9 significant digits: exact float32) plus "spheres". Strings go through
 * json_write_string (support/json.h). */
void app_json_params(FILE *f, shoal_model model, const shoal_params *p);

#endif
