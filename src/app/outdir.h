/* SPDX-License-Identifier: MIT */
/* Outputs of a command that must appear all together or not at all (docs/ROBUSTNESS.md,
 * "Rules"): output directories with one owner (a lock) whose files are written into a
 * staging directory and moved in only when the command succeeded, and single files staged
 * beside their targets and renamed only once every output of the command is ready. */
#ifndef SHOAL_APP_OUTDIR_H
#define SHOAL_APP_OUTDIR_H

#include "shoal/shoal.h"

/* ---- one owner per output directory ------------------------------------------------- */

/* DIR/.shoal.lock, held with flock(2) for the life of the run (also by its children) and
 * removed when released; a lock file left by a killed run is simply taken again. */
typedef struct app_dir_lock {
    int fd; /* -1: not held */
    int slot;
    char path[4200];
} app_dir_lock;

/* Take the lock of `dir` (which exists). SHOAL_OK; SHOAL_ERR_IO "DIR: another shoal run
 * (pid N) holds it (DIR/.shoal.lock): wait for it to end, or choose another directory" when
 * a live process holds it, or naming the system's reason. */
shoal_status app_dir_lock_take(app_dir_lock *l, const char *dir, shoal_error *e);
void app_dir_lock_release(app_dir_lock *l);

/* mkdir -p `dir` and check it is a writable directory; `created_top` gets the highest
 * directory this call created ("" none), for app_dir_uncreate. Messages start with opt. */
shoal_status app_dir_create(const char *opt, const char *dir, char *created_top, size_t size,
                            shoal_error *e);
/* Remove, deepest first, the directories app_dir_create made, as far as they are empty. */
void app_dir_uncreate(const char *dir, char *created_top);

/* Remove what killed runs left in `dir` (call only while holding its lock, and only for
 * names the lock holder alone writes: single-file outputs take no lock): temporaries of
 * atomic outputs (".NAME.tmp.XXXXXX") and staging directories (".shoal-stage.tmp.XXXXXX")
 * whose name starts with `prefix` (NULL: all). Returns how many were removed. */
int app_dir_clean_temps(const char *dir, const char *prefix);

/* ---- output directories written all at once ------------------------------------------ */

/* `name` is one of the files this kind of directory holds (a trajectory's state_NNNNNN.npy,
 * manifest.json, ...): such files of another run are refused, or replaced with overwrite. */
typedef int (*app_outdir_owns)(const char *name);

typedef struct app_outdir {
    char dir[4096];
    char stage[4200]; /* DIR/.shoal-stage.tmp.XXXXXX: files are written here first */
    app_dir_lock lock;
    app_outdir_owns owns;
    int overwrite, stage_slot, created;
    char created_top[4096]; /* the highest directory this run created ("" none) */
} app_outdir;

/* Create `dir` (and parents), take its lock, remove what killed runs left, refuse (unless
 * `overwrite`) a directory that holds files `owns` claims, and make the staging directory.
 * `opt` names the option in messages ("--out-dir"). Every failure is one message in e and
 * leaves nothing behind (a directory this call created is removed again). */
shoal_status app_outdir_open(app_outdir *d, const char *opt, const char *dir, app_outdir_owns owns,
                             int overwrite, shoal_error *e);
/* Move the staged files into the directory: with overwrite the files of the old run that
 * `owns` claims are removed first (`last` first of all); then every staged file but `last`,
 * then `last` (a manifest: written last, so a directory with one is complete). */
shoal_status app_outdir_commit(app_outdir *d, const char *last, shoal_error *e);
/* Remove the staging directory (what was not committed is dropped) and release the lock;
 * with `failed`, the directories app_outdir_open created are removed when empty. */
void app_outdir_close(app_outdir *d, int failed);

/* ---- single files staged until the command has succeeded ----------------------------- */

/* Writes the output at `path` (a library writer: npy, checkpoint, trace, PNG ...). */
typedef shoal_status (*app_write_fn)(const char *path, const void *ctx, shoal_error *e);

typedef struct app_staged {
    const char *path;
    shoal_atomic_file af; /* af.tmp_path: the staged file beside the target */
    app_write_fn fn;
    const void *ctx;
    int in_place; /* a device or FIFO: written at commit, in place, last */
    int staged;
} app_staged;

/* Write the output now into a temporary beside its target (symbolic links followed, the
 * mode of an existing file kept: shoal_io_atomic_open), or, for a device or FIFO, remember
 * to write it in place at commit. On failure nothing is left. */
shoal_status app_stage_file(app_staged *s, const char *path, app_write_fn fn, const void *ctx,
                            shoal_error *e);
/* Rename the staged file onto its target (or write it in place). */
shoal_status app_stage_commit(app_staged *s, shoal_error *e);
void app_stage_abort(app_staged *s);

/* Commit staged files: every renamed one first, then the ones written in place (a device or
 * FIFO cannot be undone, so it goes last). Stops at the first failure. */
shoal_status app_stage_commit_all(app_staged *s, int n, shoal_error *e);

/* The output options `names` (NULL-terminated; those given) name distinct files, none of
 * them one that the output directory `dir` (if given) will hold (`owns`): else one line
 * "--a and --b name the same file F" and 2. 0 when all is well. */
struct opt_values;
int app_outputs_distinct(const struct opt_values *o, const char *const *names, const char *dir,
                         app_outdir_owns owns);

/* No output option of `outputs` (NULL-terminated; those given) names the input file
 * `input` that the command reads (NULL: none): an output there would replace the input
 * (`compare a.npy b.npy --json a.npy` wrote its report over a.npy). Else one line "--json
 * a.npy is the input a.npy (WHAT): ... give the output another name" and 2; 0 when all is
 * well. `what` says which input ("--in", "compare's first state", "a frame of the
 * trajectory"). The one in-place update shoal documents, `step --in X --out X`, is left
 * out by its caller. */
int app_output_not_input(const struct opt_values *o, const char *const *outputs, const char *input,
                         const char *what);

/* No output option of `outputs` names a file of the input directory `dir` that the command
 * reads (`owns`: a trajectory's frames and manifest): else one line "--trace d/f is a file
 * of the input directory d (WHAT) ..." and 2. */
int app_output_not_in_input_dir(const struct opt_values *o, const char *const *outputs,
                                const char *dir, app_outdir_owns owns, const char *what);

/* In e's message, the first `from` (a temporary or staging path) becomes `to` (the output
 * the user named). */
void app_message_rename(shoal_error *e, const char *from, const char *to);

/* Two outputs that would land on the same file (after symbolic links; "x" and "./x" are
 * one file): 1. */
int app_same_output(const char *a, const char *b);

/* ---- frame names ---------------------------------------------------------------------- */

/* `name` is exactly PREFIX + the step with at least six digits (%06lld, no sign, no extra
 * leading zeros) + EXT, as shoal writes frame names: 1 and *step set; else 0. */
int app_frame_step(const char *name, const char *prefix, const char *ext, long long *step);

#endif
