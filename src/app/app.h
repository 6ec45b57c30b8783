/* SPDX-License-Identifier: MIT */
/* The subcommands of the shoal program and the helpers they share (app.c; no cmd_*.c calls
 * another's). Each command takes argv with argv[0] = its name and
 * returns the process exit code (0 ok, 2 bad input, 1 other failure). */
#ifndef SHOAL_APP_APP_H
#define SHOAL_APP_APP_H

#include "shoal/shoal.h"

#include <sys/types.h>

int cmd_init(int argc, char **argv);
int cmd_step(int argc, char **argv);
int cmd_render(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_bench(int argc, char **argv);

int cmd_compare(int argc, char **argv);
int cmd_diverge(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_params(int argc, char **argv);
int cmd_verify(int argc, char **argv);

/* render_replay.c (part of shoal render): `shoal render --in DIR` (a trajectory), with
 * render's parsed options. */
struct shoal_render_desc;
struct shoal_camera;
struct opt_values;
int app_render_replay(const struct opt_values *o, const struct shoal_render_desc *desc,
                      struct shoal_camera cam, int have_camera);

/* ---- app.c: what several commands share ---------------------------------------------- */

/* Exit code for a library status: 2 for what the user can fix (bad input, a file that
 * cannot be read or written, memory, an unsupported ISA), 1 for a simulation fault. */
int app_exit_code(shoal_status st);
/* e's message as the command's one error line (options_fail); returns its exit code. */
int app_fail_status(const struct opt_values *o, const shoal_error *e);
/* Flush stdout: 0 when everything printed there was written, else one line "shoal CMD:
 * cannot write the standard output: REASON" and 2. A command that prints a report and also
 * writes files calls it before committing them (a lost report fails the command, and a
 * failed command replaces no file); main calls it after every command. */
int app_stdout_check(const char *cmd);

/* The one default fish length (world units) of every command and scene without one. */
#define APP_FISH_LENGTH SHOAL_FISH_LENGTH

/* The program's own profile (shoal/profile.h): the stages of commands whose work is not a
 * library object's (init, compare), and the one table a command lends to the objects it
 * drives together (run's sim and renderer, diverge's two sims). The library objects
 * otherwise record into their own. Created on first use (main thread); NULL when out of
 * memory. */
shoal_profile *app_profile(void);
/* --stats for the commands whose work is not a library stage (init, compare): the time
 * from t0_ns to now as one call of stage `group/name` of app_profile(). */
void app_stage_done(const char *group, const char *name, uint64_t t0_ns);
/* A profile's table on stderr under `title` (a line saying so when `p` is NULL). */
void app_profile_print(const shoal_profile *p, const char *title, int per_thread);

/* The help of every command's --model option: the models of the library's table, in enum
 * order (options.h "{models}"; test_cli checks that every model is named). */
#define APP_MODEL_HELP "model: {models}"

/* The library's default model (shoal_sim_desc_default: the first of the table). */
shoal_model app_default_model(void);

/* --scene and --model, for every command that takes both (init, step, run, diverge): the
 * scene loaded into *scene (zeroed without --scene) and the model they name (--model, else
 * the scene's, else the default model). A --model other than the scene's model (the default
 * when the scene names none) is refused with one line: "--model M contradicts the scene file
 * F (model S)". Returns 0, or the exit code (2) after printing. */
int app_scene_model(const struct opt_values *o, shoal_scene *scene, shoal_model *model);

/* What shoal_scene_set_count did to a scene (before -> scaled, factor s; s == 1: nothing). */
typedef struct app_scaled {
    shoal_sim_desc before, scaled;
    double s;
} app_scaled;
/* The desc (model, parameters, count, seed, dt) and scene that --model, --scene and --set
 * describe, as init and step read them (count > 0: the scene given that count, its density
 * kept unless keep_geometry, before --set); sc, if not NULL, says what the scaling did; 0,
 * or the exit code after printing the problem. */
int app_sim_desc(const struct opt_values *o, shoal_sim_desc *d, shoal_scene *scene, size_t count,
                 int keep_geometry, app_scaled *sc);
/* Each --set NAME=VALUE in order onto d's parameters (not validated together); 0, or the
 * exit code (2) after printing the problem. */
int app_set_params(const struct opt_values *o, shoal_sim_desc *d);
/* `shoal render`'s world: the --scene's [world], then --set; validated. 0, or the exit
 * code after printing. */
int app_render_world(const struct opt_values *o, shoal_world *w);
/* 1 when the world changes the drawing (a periodic axis, or the plane): the camera then
 * frames the world (shoal_render_camera_world), not the state. */
int app_world_drawn(const shoal_world *w);
/* The school's centre for --follow: on a periodic axis the circular mean of the positions
 * (angle 2 pi (x - lo) / L; the box's centre when the mean vector vanishes), as
 * docs/STATS.md's centroid, from exact fixed-point sums of the cosines and sines (the same
 * for any order of the fish); elsewhere the mean of the positions in row order, in double. */
void app_world_centre(const shoal_world *w, const float *const p[3], size_t n, float c[3]);
/* --size WxH, each side 1..SHOAL_RENDER_MAX_SIZE; 0, or 2 after printing. */
int app_parse_size(const struct opt_values *o, int *w, int *h);
/* A renderer for `desc` drawing the fish of mesh_path (OBJ) and, when desc is lit with LOD, the
 * reduced fish of lod_path, each NULL meaning shoal's own asset (fish.obj, fish_lod1.obj;
 * without lod_path also the coarse fish_lod2.obj): io loads them, shoal_render_create copies
 * them, they are freed again. */
struct shoal_renderer;
shoal_status app_render_create(const struct shoal_render_desc *desc, const char *mesh_path,
                               const char *lod_path, struct shoal_renderer **out, shoal_error *e);
/* When sc->s != 1, one line on stderr: the counts, s, and each parameter the scaling changed
 * with its final value in `after` (--set may have overridden it) as name=value: what `step
 * --set` needs for the same walls. Printed once the command has succeeded, so that an error
 * stays the one line on stderr. */
void app_print_scaled(const char *cmd, const app_scaled *sc, const shoal_sim_desc *after);

/* State files by format: the library's table (shoal_io_state_read / _write, shoal/io.h). */
shoal_status app_state_read(const char *path, const char *format, float **rows, size_t *count,
                            shoal_error *e);
shoal_status app_state_write(const char *path, const char *format, const float *rows, size_t count,
                             shoal_error *e);

/* Writers of the form outdir.h's staging takes (path, ctx): a state (ctx an app_state_ctx:
 * the format from `name`, the option's value, as app_state_write decides it), a checkpoint
 * (ctx the shoal_sim), the trace of the profiler (ctx unused). */
typedef struct app_state_ctx {
    const char *name;
    const float *rows;
    size_t count;
} app_state_ctx;
shoal_status app_write_state(const char *path, const void *ctx, shoal_error *e);
shoal_status app_write_checkpoint(const char *path, const void *ctx, shoal_error *e);
shoal_status app_write_trace(const char *path, const void *ctx, shoal_error *e);

/* The obstacle meshes of `scene` (if any) onto a GPU simulation: an obstacle field of
 * their own (shoal_scene_make_obstacles) lent to it, whose field is built on the host by
 * the CPU's own code with the GPU sim's parameters, so both backends sample the same bits. */
struct shoal_gpu_sim;
shoal_status app_gpu_add_obstacles(struct shoal_gpu_sim *g, const shoal_scene *scene,
                                   shoal_error *e);

/* signals.c: SIGINT, SIGTERM, SIGHUP and SIGQUIT remove the temporaries of outputs being
 * written and kill the process by the signal (installed by main, where not ignored).
 * app_die_by_signal does that now (async-signal-safe). app_signal_deadline, from a graceful
 * handler (shoal run): the process dies by `sig` in one second unless it exits first; a
 * second call dies at once. */
void app_signals_install(void);
void app_die_by_signal(int sig);
void app_signal_deadline(int sig);
/* A child process (ffmpeg, writing a video temporary) for those signals to kill (SIGKILL)
 * before anything else; 0: none. */
void app_signal_child(int pid);
/* A path those signals remove too: a file (is_dir 0: a lock file) or a staging directory
 * (is_dir 1: its files, then itself). Returns a slot for app_signal_path_forget, or -1 when
 * the 8 slots are taken or the path is too long (then nothing is registered). */
int app_signal_path(const char *path, int is_dir);
void app_signal_path_forget(int slot);
/* Child processes to pass those signals to (pids[i] > 0 are live; the array is read from
 * the handler, so it must stay valid and be updated in place); the handler waits for them
 * (at most 5 s) before it dies. NULL: none. */
void app_signal_children(const volatile pid_t *pids, int count);
/* In a child after fork(): forget the parent's registrations (its lock file, staging
 * directories and children are not the child's to remove). */
void app_signal_after_fork(void);
/* Empty a directory (one level) and remove it, async-signal-safe (also used outside
 * handlers to remove a staging directory). */
void app_remove_dir_now(const char *dir);

#endif
