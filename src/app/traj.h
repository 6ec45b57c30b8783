/* SPDX-License-Identifier: MIT */
/* Long runs in the program: the progress line on a terminal, trajectories (a state every E
 * steps into a directory, .npy or VTK, with a JSON manifest and a ParaView .pvd), the step
 * loop that feeds both, and JSON helpers shared by step, render replay and sweep. */
#ifndef SHOAL_APP_TRAJ_H
#define SHOAL_APP_TRAJ_H

#include "shoal/shoal.h"
#include "app/outdir.h"
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
 * last, and DIR/trajectory.pvd with vtk. The directory has one owner (app_outdir: a lock);
 * the files are written into its staging directory and moved in by traj_commit once the
 * whole command has succeeded, the manifest last: a failed run leaves nothing. */
typedef struct traj_frame_rec {
    long long step;
    double t;
} traj_frame_rec;

/* Writes a frame's state to path (with its simulated time): for states that are not in one
 * process's sim (MPI: every rank writes its rows). */
typedef shoal_status (*traj_writer)(void *ctx, const char *path, double time, shoal_error *e);

typedef struct traj {
    app_outdir out;
    char dir[4200];             /* where the files are written now: the staging directory */
    const shoal_io_format *fmt; /* the library's table: npy, or vtk (with trajectory.pvd) */
    long long every;
    float *rows;
    size_t count;
    traj_frame_rec *frames;
    size_t frame_count, frame_cap;
    traj_writer write; /* or NULL: the sim's state, written here */
    void *write_ctx;
} traj;

/* Create DIR (and parents) and check that it can be written: SHOAL_ERR_IO naming it if not. */
shoal_status traj_mkdir(const char *dir, shoal_error *e);
/* The files a trajectory directory holds (state_NNNNNN.npy/.vtp, manifest.json,
 * trajectory.pvd): another run's are refused unless overwrite. */
int traj_owns(const char *name);
/* Open DIR for a trajectory (app_outdir_open with "--out-dir": lock, leftovers of killed
 * runs removed, another run's trajectory refused unless overwrite). */
shoal_status traj_open(traj *t, const char *dir, const char *format, long long every, size_t count,
                       int overwrite, shoal_error *e);
/* Frames through w(ctx, ...) instead of the sim's state (frees the rows traj_open made). */
void traj_set_writer(traj *t, traj_writer w, void *ctx);
/* The trajectory that another process opened (MPI: rank 0 opened DIR, staging directory and
 * lock, and writes the manifest; the other ranks take part in writing each frame): t's
 * frames go to `stage` (rank 0's staging directory) through w, and nothing is created,
 * checked, locked or allocated here. traj_close(t, ..., 0, ...) frees it; no traj_commit or
 * traj_release. */
shoal_status traj_follow(traj *t, const char *stage, const char *format, long long every,
                         size_t count, traj_writer w, void *ctx, shoal_error *e);
/* Room for n frames in the frame list up front (SHOAL_ERR_NOMEM naming it): traj_write then
 * never fails for want of it. */
shoal_status traj_reserve(traj *t, size_t n, shoal_error *e);
/* Write the sim's state as frame `step` (steps done in this run), into the staging area. */
shoal_status traj_write(traj *t, const shoal_sim *sim, long long step, shoal_error *e);
/* With ok: the manifest (and .pvd) into the staging area. Frees the frame buffers either
 * way; the files stay staged until traj_commit, the directory locked until traj_release. */
shoal_status traj_close(traj *t, const shoal_sim *sim, long long steps, int ok, shoal_error *e);
/* Move the staged files into DIR, the manifest last. */
shoal_status traj_commit(traj *t, shoal_error *e);
/* Drop what was not committed, unlock DIR (failed: remove the directories traj_open made). */
void traj_release(traj *t, int failed);

/* Step `steps` steps: a trajectory frame at 0, every, 2 every, ... and at `steps` (tr may be
 * NULL), the progress line between chunks (pg may be NULL). The result is the same bits as
 * one shoal_sim_step(sim, steps) call (a run does not depend on how it is split). */
shoal_status app_sim_run(shoal_sim *sim, long long steps, traj *tr, progress *pg, shoal_error *e);
/* The same loop with another way to step `n` steps (MPI: the school over the ranks, sim
 * its part, whose time is the school's). */
typedef shoal_status (*app_stepper)(void *ctx, long long n, shoal_error *e);
shoal_status app_run_steps(shoal_sim *sim, app_stepper step, void *step_ctx, long long steps,
                           traj *tr, progress *pg, shoal_error *e);

/* JSON: the model's parameters as an object {"name": value, ...} (every entry of
 * shoal_params_list, 9 significant digits: exact float32) plus "spheres". Strings go through
 * json_write_string (support/json.h). */
void app_json_params(FILE *f, shoal_model model, const shoal_params *p);

#endif
