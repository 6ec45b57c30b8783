/* SPDX-License-Identifier: MIT */
/* `shoal init` and `shoal step`: state files in, state files out (the contract of
 * docs/CLI.md). Model, parameters and counts come from --model, --scene and --set, in that
 * order of precedence from weakest to strongest (app_sim_desc, app.c). */
#include "app/app.h"
#include "app/cli_specs.h"
#include "app/options.h"
#include "shoal/system.h"
#include "shoal/profile.h"
#include "app/traj.h"
#include "app/outdir.h"
#include "shoal/gpu.h"
#include "mpi_app.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --stats: the force kernel's own count of its work in the last step (issue 28). */
static void print_pairs(FILE *f, const shoal_sim *sim)
{
    double lane_pairs, useful;
    shoal_sim_candidate_pairs(sim, &lane_pairs, &useful);
    double n = (double)shoal_sim_count(sim);
    if (lane_pairs > 0 && n > 0)
        fprintf(f,
                "forces (last step): %.1f lane-pairs per boid (%s), %.1f neighbours per boid: "
                "%.1f%% useful\n",
                lane_pairs / n, shoal_sim_isa_name(sim), useful / n, 100.0 * useful / lane_pairs);
}

/* The GPU path of shoal step: create, load, step, read back (--stats: device time per step
 * on stderr). */
static int step_gpu(const shoal_sim_desc *d, const shoal_scene *scene, const char *order_name,
                    float *rows, long long steps, int stats, shoal_error *e)
{
    shoal_gpu_order order;
    shoal_status st = shoal_gpu_order_parse(order_name, &order, e);
    if (st)
        return st;
    shoal_gpu_sim *g;
    if ((st = shoal_gpu_sim_create(d, order, &g, e)))
        return st;
    if ((st = shoal_gpu_sim_set_state(g, rows, e)) || (st = app_gpu_add_obstacles(g, scene, e))) {
        shoal_gpu_sim_destroy(g);
        return st;
    }
    /* With --stats the first step runs alone (module load, first-touch costs), then the
     * rest: the same bits as one call (a run's result does not depend on how it is split). */
    long long first = stats && steps > 1 ? 1 : 0;
    double warm_ms = 0;
    if (first) {
        st = shoal_gpu_sim_step(g, 1, e);
        warm_ms = shoal_gpu_sim_get_stats(g).last_ms;
    }
    for (long long done = first; !st && done < steps;) {
        long long k = steps - done > 1000000 ? 1000000 : steps - done;
        st = shoal_gpu_sim_step(g, (int)k, e);
        done += k;
    }
    if (stats) {
        shoal_gpu_stats s = shoal_gpu_sim_get_stats(g);
        double rest = s.total_ms - warm_ms;
        uint64_t rest_steps = s.steps - (uint64_t)first;
        fprintf(stderr, "gpu %s (%s order), %zu boids: %llu steps %.3f ms",
                shoal_gpu_sim_device_name(g), order_name, shoal_gpu_sim_count(g),
                (unsigned long long)s.steps, s.total_ms);
        if (first)
            fprintf(stderr, " (first step %.3f ms)", warm_ms);
        fprintf(stderr, "\n%-14s %8llu %12.3f %10.4f   (cuda, device time)\n", "step",
                (unsigned long long)rest_steps, rest, rest_steps ? rest / (double)rest_steps : 0.0);
    }
    if (!st)
        st = shoal_gpu_sim_get_state(g, rows, e);
    shoal_gpu_sim_destroy(g);
    return st;
}

/* ---- shoal step under mpirun ---------------------------------------------------------- */

static shoal_status school_stepper(void *m, long long n, shoal_error *e)
{
    return mpi_school_step(m, n, e);
}

static shoal_status school_frame(void *m, const char *path, double time, shoal_error *e)
{
    return mpi_school_write_frame(m, path, time, e);
}

typedef struct bytes_out {
    const char *data;
    size_t len;
} bytes_out;

/* app_write_fn: the bytes as the file at path. */
static shoal_status write_bytes(const char *path, const void *ctx, shoal_error *e)
{
    const bytes_out *b = ctx;
    shoal_atomic_file af;
    shoal_status st = shoal_io_atomic_open(&af, path, e);
    if (st)
        return st;
    if (fwrite(b->data, 1, b->len, af.file) != b->len) {
        int err = errno;
        shoal_io_atomic_abort(&af);
        return shoal_error_set(e, SHOAL_ERR_IO, "%s: write failed: %s", path, strerror(err));
    }
    return shoal_io_atomic_commit(&af, e);
}

/* --trace under mpirun: every rank writes its trace to a file of its own (in $TMPDIR, or
 * /tmp), rank 0 merges them (mpi_trace_merge) and stages the one trace in *ts (ts->ctx: a
 * bytes_out to free). Collective; agreed. */
static shoal_status step_mpi_trace(shoal_profile *p, const char *trace, app_staged *ts,
                                   shoal_error *e)
{
    const char *tmpdir = getenv("TMPDIR");
    char local[4096];
    snprintf(local, sizeof local, "%s/.shoal-trace-rank.XXXXXX",
             tmpdir && *tmpdir ? tmpdir : "/tmp");
    int fd = mkstemp(local);
    shoal_status st =
        fd >= 0 ? SHOAL_OK
                : shoal_error_set(e, SHOAL_ERR_IO, "%s: cannot create: %s", local, strerror(errno));
    if (fd >= 0)
        close(fd);
    if (!st)
        st = shoal_profile_trace_save(p, local, e);
    if (!(st = mpi_agree(st, e))) {
        char *merged = NULL;
        size_t len = 0;
        st = mpi_trace_merge(local, &merged, &len, e); /* agreed */
        shoal_status sst = SHOAL_OK;
        if (!st && mpi_rank() == 0) {
            bytes_out *b = malloc(sizeof *b);
            if (b) {
                b->data = merged;
                b->len = len;
                sst = app_stage_file(ts, trace, write_bytes, b, e);
                ts->ctx = b; /* freed by the caller (trace_stage_free) */
            } else {
                free(merged);
                sst = shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for the trace");
            }
        }
        if (!st)
            st = mpi_agree(sst, e);
    }
    if (fd >= 0)
        unlink(local);
    return st;
}

/* `shoal step` over the ranks (docs/ARCHITECTURE.md, "MPI"): the school read (or resumed)
 * by rows, stepped, its trajectory frames and outputs written at row offsets; rank 0 makes
 * the --out-dir directory and its manifest, every rank writes its rows of each frame. The
 * bytes of one process. Returns the exit code. */
static int step_mpi(const opt_values *o, shoal_sim_desc *d, const shoal_scene *scene,
                    const char *in, const char *resume, const char *out, const char *ckpt,
                    const char *out_dir, long long every, long long steps)
{
    shoal_error e;
    mpi_school *m;
    shoal_status st =
        resume ? mpi_school_resume(d, resume, &m, &e) : mpi_school_read(d, in, &m, &e);
    if (st)
        return app_fail_status(o, &e);
    if (options_given(o, "stats"))
        mpi_school_want_stats(m);
    st = mpi_agree(shoal_scene_add_obstacles(scene, mpi_school_sim(m), &e), &e);
    traj tr;
    int have_traj = 0;
    if (!st && out_dir) {
        /* rank 0 makes the directory as one process does (its checks and messages), the
         * others write into what it made; the frame list is made whole up front, so that
         * no rank can fail to record a frame the others wrote */
        char dir[sizeof tr.dir] = "";
        const char *format = options_get(o, "format");
        size_t count = mpi_school_count(m);
        if (mpi_rank() == 0) {
            st = traj_open(&tr, out_dir, format, every, count, options_given(o, "overwrite"), &e);
            if (!st) {
                traj_set_writer(&tr, school_frame, m);
            } else {
                traj_close(&tr, mpi_school_sim(m), 0, 0, NULL);
                traj_release(&tr, 1);
            }
            snprintf(dir, sizeof dir, "%s", tr.dir); /* its staging directory */
        }
        if (!(st = mpi_agree(st, &e))) {
            mpi_broadcast(dir, sizeof dir);
            if (mpi_rank() != 0)
                st = traj_follow(&tr, dir, format, every, count, school_frame, m, &e);
            if (!st)
                st = traj_reserve(&tr, (size_t)(steps / every) + 2, &e);
            have_traj = 1;
            if ((st = mpi_agree(st, &e)))
                traj_close(&tr, mpi_school_sim(m), 0, 0, NULL);
        }
    }
    const char *trace = options_get(o, "trace");
    if (!st && trace) {
        /* every rank its own trace (a track per thread), started together; one file at the
         * end (mpi_trace_merge) */
        int tracks = d->thread_count > 0 ? d->thread_count : shoal_system_thread_count();
        /* thread 0's track: the sim's 5 spans a step and the exchange's 6 */
        size_t spans = (size_t)steps * 12 + 32, cap = ((size_t)64 << 20) / 32 / (size_t)tracks;
        mpi_trace_sync();
        st = mpi_agree(shoal_profile_trace_start(shoal_sim_get_profile(mpi_school_sim(m)), tracks,
                                                 spans < cap ? spans : cap, &e),
                       &e);
    }
    if (!st) {
        progress pg;
        progress_begin(&pg, "shoal step", steps, options_given(o, "quiet") || mpi_rank() != 0);
        shoal_profile_clear(shoal_sim_get_profile(mpi_school_sim(m)));
        st = app_run_steps(mpi_school_sim(m), school_stepper, m, steps, have_traj ? &tr : NULL, &pg,
                           &e);
        progress_end(&pg);
    }
    if (!st && options_given(o, "stats"))
        mpi_school_print_stats(m, "step");
    if (have_traj) {
        /* the manifest (rank 0's), staged with the frames, agreed; frees the lists */
        shoal_error te;
        shoal_status tst = traj_close(&tr, mpi_school_sim(m), steps, !st && mpi_rank() == 0, &te);
        if (!st && (tst = mpi_agree(tst, &te))) {
            st = tst;
            e = te;
        }
    }
    /* all or nothing, in one process's order: --checkpoint, --out and --trace to their
     * temporaries, the trajectory moved into its directory (rank 0), then the three renamed */
    if (!st)
        st = mpi_school_stage(m, out, ckpt, &e);
    app_staged tstage;
    memset(&tstage, 0, sizeof tstage);
    tstage.af.slot = -1;
    if (!st && trace)
        st = step_mpi_trace(shoal_sim_get_profile(mpi_school_sim(m)), trace, &tstage, &e);
    if (trace)
        shoal_profile_trace_stop(shoal_sim_get_profile(mpi_school_sim(m)));
    if (!st && have_traj)
        st = mpi_agree(mpi_rank() == 0 ? traj_commit(&tr, &e) : SHOAL_OK, &e);
    if (!st)
        st = mpi_school_commit(m, &e);
    if (!st && trace)
        st = mpi_agree(mpi_rank() == 0 ? app_stage_commit(&tstage, &e) : SHOAL_OK, &e);
    app_stage_abort(&tstage); /* (nothing when it went in) */
    if (tstage.ctx) {
        const bytes_out *b = tstage.ctx;
        free((void *)b->data);
        free((void *)b);
    }
    if (have_traj && mpi_rank() == 0)
        traj_release(&tr, st != SHOAL_OK);
    mpi_school_destroy(m); /* (drops what was staged and not committed) */
    return st ? app_fail_status(o, &e) : 0;
}

/* A state file holds the boids only: predators (their positions and velocities) are not in
 * it, so a later `step --in` of it starts them again at predator_start and does not give
 * the bits of one longer run (docs/CLI.md). Said once, on stderr, after the file is written,
 * unless a checkpoint (which carries them) was written too. */
static void step_warn_predators(const shoal_sim_desc *d, const char *out, const char *ckpt)
{
    if (!out || ckpt || d->params.predator_count < 1)
        return;
    char esc[600];
    shoal_error_escape(esc, sizeof esc, out);
    fprintf(stderr,
            "shoal step: note: %s holds the boids, not the %d predator%s: a step from it starts "
            "them again at predator_start (not the bits of one longer run); --checkpoint F and "
            "--resume F carry them\n",
            esc, (int)d->params.predator_count, d->params.predator_count == 1 ? "" : "s");
}

/* `step --precision f64`: the float64 reference (shoal/sim64.h) from a float32 or float64
 * state (N, 6), written as float64 .npy. The scene's obstacle meshes go through a one-boid
 * float32 simulation, which loads them as every command does. */
static shoal_status step_f64(const shoal_sim_desc *desc, const shoal_scene *scene, const char *in,
                             const char *out, long long steps, int quiet, shoal_error *e)
{
    shoal_npy_array a;
    shoal_status st = shoal_io_npy_read_array(in, &a, e);
    if (st)
        return st;
    if (a.ndim != 2 || a.dims[1] != SHOAL_STATE_COLUMNS || a.dtype[1] != 'f') {
        char what[96];
        snprintf(what, sizeof what, "%d dimension%s of %s", a.ndim, a.ndim == 1 ? "" : "s",
                 a.dtype);
        shoal_npy_array_free(&a);
        return shoal_error_set(e, SHOAL_ERR_INPUT,
                               "%s: %s, expected a state: float32 or float64 of shape (N, 6)", in,
                               what);
    }
    shoal_sim_desc d = *desc;
    d.boid_count = a.dims[0];
    shoal_sim64 *s = NULL;
    shoal_sim *holder = NULL;
    shoal_sim_desc one = d;
    one.boid_count = 1;
    if (!(st = shoal_sim64_create(&d, &s, e)) && !(st = shoal_sim64_set_state(s, a.data, e)) &&
        scene->mesh_count > 0 && !(st = shoal_sim_create(&one, &holder, e)) &&
        !(st = shoal_scene_add_obstacles(scene, holder, e)))
        st = shoal_sim64_copy_obstacles(s, holder, e);
    shoal_sim_destroy(holder);
    progress pg;
    progress_begin(&pg, "shoal step", steps, quiet);
    for (long long done = 0; !st && done < steps;) {
        long long k = steps - done > 16 ? 16 : steps - done;
        st = shoal_sim64_step(s, (int)k, e);
        done += k;
        progress_update(&pg, done, 0);
    }
    progress_end(&pg);
    if (!st) {
        shoal_sim64_get_state(s, a.data);
        st = shoal_io_npy_write_f64(out, a.data, d.boid_count, e);
    }
    shoal_sim64_destroy(s);
    shoal_npy_array_free(&a);
    return st;
}

int cmd_init(int argc, char **argv)
{
    opt_values o;
    int rc = options_parse(&o, "init", "--out FILE.npy [options]", app_init_specs,
                           app_init_spec_count, 0, argc, argv);
    if (rc)
        return rc == 1 ? 0 : rc;
    if ((rc = options_check_outputs(&o, (const char *const[]){"out", NULL})) ||
        (rc = app_output_not_input(&o, (const char *const[]){"out", NULL}, options_get(&o, "scene"),
                                   "--scene")))
        return rc;
    long long count = 0;
    if (options_given(&o, "count") && (rc = options_int(&o, "count", 1, 4000000000LL, &count)))
        return rc;
    shoal_sim_desc d;
    shoal_scene scene;
    app_scaled scaled;
    if ((rc = app_sim_desc(&o, &d, &scene, (size_t)count, options_given(&o, "keep-geometry"),
                           &scaled)))
        return rc;
    if (!options_given(&o, "out"))
        return options_fail(&o, "--out FILE.npy is required ('-': draw it, write nothing)");
    const char *out = options_out(&o);
    long long seed = (long long)d.seed;
    if (options_given(&o, "seed") &&
        (rc = options_int(&o, "seed", 0, 9223372036854775807LL, &seed)))
        return rc;
    d.seed = (uint64_t)seed;
    shoal_error e;
    if (mpi_running() && out) {
        /* each rank draws and writes its own rows (docs/ARCHITECTURE.md, "MPI") */
        uint64_t t0 = shoal_profile_now_ns();
        mpi_school *m;
        if (mpi_school_create(&d, &m, &e))
            return app_fail_status(&o, &e);
        uint64_t t1 = shoal_profile_now_ns();
        shoal_status mst = mpi_school_write(m, out, NULL, &e);
        mpi_school_destroy(m);
        if (mst)
            return app_fail_status(&o, &e);
        if (options_given(&o, "stats") && mpi_rank() == 0)
            fprintf(stderr,
                    "shoal init (MPI): %zu boids over %d ranks: draw %.1f ms, write %.1f ms\n",
                    d.boid_count, mpi_size(), (double)(t1 - t0) * 1e-6,
                    (double)(shoal_profile_now_ns() - t1) * 1e-6);
        if (mpi_rank() == 0)
            app_print_scaled("init", &scaled, &d);
        return 0;
    }
    shoal_sim *sim;
    uint64_t t0 = shoal_profile_now_ns();
    if (shoal_sim_create(&d, &sim, &e))
        return app_fail_status(&o, &e);
    shoal_sim_init_state(sim, d.seed);
    float *rows = malloc(d.boid_count * 6 * sizeof(float));
    if (!rows) {
        shoal_sim_destroy(sim);
        return options_fail(&o, "out of memory for %zu boids", d.boid_count);
    }
    shoal_sim_get_state(sim, rows);
    shoal_sim_destroy(sim);
    app_stage_done("init", "draw", t0);
    t0 = shoal_profile_now_ns();
    shoal_status st = out ? app_state_write(out, NULL, rows, d.boid_count, &e) : SHOAL_OK;
    free(rows);
    if (st)
        return app_fail_status(&o, &e);
    app_stage_done("init", "write", t0);
    app_print_scaled("init", &scaled, &d);
    if (options_given(&o, "stats")) {
        char title[128];
        snprintf(title, sizeof title, "shoal init: %zu boids", d.boid_count);
        app_profile_print(app_profile(), title, 0);
    }
    return 0;
}

int cmd_step(int argc, char **argv)
{
    opt_values o;
    int rc = options_parse(&o, "step", "--in A.npy --out B.npy [options]", app_step_specs,
                           app_step_spec_count, 0, argc, argv);
    if (rc)
        return rc == 1 ? 0 : rc;
    if ((rc = options_check_outputs(&o, (const char *const[]){"out", "trace", "checkpoint", NULL})))
        return rc;
    /* --count N: the geometry `init --count N` gave the state (a state file carries none) */
    long long count_geo = 0;
    if (options_given(&o, "count") && (rc = options_int(&o, "count", 1, 4000000000LL, &count_geo)))
        return rc;
    if (count_geo && options_given(&o, "resume"))
        return options_fail(&o, "--count with --resume: the checkpoint carries the parameters");
    if (count_geo && mpi_running())
        return options_fail(&o, "--count: not under MPI (give the scaled walls with --set, as "
                                "`shoal init --count N` prints them)");
    shoal_sim_desc d;
    shoal_scene scene;
    app_scaled scaled;
    if ((rc = app_sim_desc(&o, &d, &scene, (size_t)count_geo, 0, &scaled)))
        return rc;
    const char *in = options_get(&o, "in"), *out = options_out(&o);
    const char *out_dir = options_get(&o, "out-dir"), *ckpt = options_get(&o, "checkpoint");
    const char *resume = options_get(&o, "resume");
    if (resume) {
        const char *carried[] = {"in", "model", "set", "dt", "t0", "seed"};
        for (size_t i = 0; i < sizeof carried / sizeof carried[0]; i++)
            if (options_given(&o, carried[i]))
                return options_fail(&o,
                                    "--%s with --resume: the checkpoint carries the state, model, "
                                    "parameters, dt, t0 and seed",
                                    carried[i]);
    } else if (!in) {
        return options_fail(&o, "--in A.npy is required");
    }
    if (!options_given(&o, "out") && !out_dir && !ckpt)
        return options_fail(&o, "--out B.npy is required (or --out-dir DIR, --checkpoint F; "
                                "'--out -': step, write nothing)");
    if (!out_dir && (options_given(&o, "every") || options_given(&o, "format") ||
                     options_given(&o, "overwrite")))
        return options_fail(&o, "--every, --format and --overwrite are for --out-dir");
    if ((rc = app_outputs_distinct(&o, (const char *const[]){"out", "checkpoint", "trace", NULL},
                                   out_dir, traj_owns)))
        return rc;
    /* no output over an input, but for the two updates in place: --in X --out X (the
     * state) and --resume F --checkpoint F (the run continued) */
    if ((rc = app_output_not_input(&o, (const char *const[]){"checkpoint", "trace", NULL}, in,
                                   "--in")) ||
        (rc = app_output_not_input(&o, (const char *const[]){"out", "trace", NULL}, resume,
                                   "--resume")) ||
        (rc = app_output_not_input(&o, (const char *const[]){"out", "checkpoint", "trace", NULL},
                                   options_get(&o, "scene"), "--scene")))
        return rc;
    long long steps, threads = 0, seed = (long long)d.seed;
    if ((rc = options_int(&o, "steps", 0, 1000000000LL, &steps)))
        return rc;
    if (options_given(&o, "threads") &&
        (rc = options_int(&o, "threads", 0, SHOAL_MAX_THREADS, &threads)))
        return rc;
    if (options_given(&o, "seed") &&
        (rc = options_int(&o, "seed", 0, 9223372036854775807LL, &seed)))
        return rc;
    d.seed = (uint64_t)seed;
    if (options_given(&o, "dt")) {
        if ((rc = options_double(&o, "dt", 1e-12, 1e6, &d.dt_s)))
            return rc;
        if (!(d.dt_s > 0))
            return options_fail(&o, "--dt must be > 0");
    }
    if (options_given(&o, "t0") && (rc = options_double(&o, "t0", -1e15, 1e15, &d.t0_s)))
        return rc;
    const char *nb = options_get(&o, "neighbors");
    if (strcmp(nb, "grid") == 0)
        d.neighbors = SHOAL_NEIGHBORS_GRID;
    else if (strcmp(nb, "brute") == 0)
        d.neighbors = SHOAL_NEIGHBORS_BRUTE;
    else
        return options_fail(&o, "--neighbors: '%s' (expected grid or brute)", nb);
    shoal_error e;
    if (shoal_isa_parse(options_get(&o, "simd"), &d.isa, &e))
        return app_fail_status(&o, &e);
    d.thread_count = (int)threads;
    long long every = steps > 0 ? steps : 1;
    if (options_given(&o, "every") && (rc = options_int(&o, "every", 1, 1000000000LL, &every)))
        return rc;
    const char *format = options_get(&o, "format");
    if (!shoal_io_format_find(format, 1)) {
        char names[128];
        shoal_io_format_names(names, sizeof names, 0, 1, NULL);
        return options_fail(&o, "--format: '%s' (expected %s)", format, names);
    }
    const char *precision = options_get(&o, "precision");
    if (strcmp(precision, "f32") != 0 && strcmp(precision, "f64") != 0)
        return options_fail(&o, "--precision: '%s' (expected f32 or f64)", precision);
    if (strcmp(precision, "f64") == 0) {
        /* the float64 reference: one process, the CPU, a state in and a state out */
        const char *refused[] = {"out-dir", "checkpoint", "resume", "trace", "simd", "stats"};
        for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
            if (options_given(&o, refused[i]))
                return options_fail(&o, "--%s: not with --precision f64", refused[i]);
        if (strcmp(options_get(&o, "backend"), "cpu") != 0)
            return options_fail(&o, "--backend %s: --precision f64 runs on the CPU",
                                options_get(&o, "backend"));
        if (mpi_running())
            return options_fail(&o, "--precision f64: not under MPI");
        if (!out)
            return options_fail(&o, "--out B.npy is required");
        size_t ol = strlen(out), il = strlen(in);
        if (ol < 4 || strcmp(out + ol - 4, ".npy") != 0 || il < 4 ||
            strcmp(in + il - 4, ".npy") != 0)
            return options_fail(&o, "--precision f64 reads and writes .npy states (float64 out)");
        shoal_status fst = step_f64(&d, &scene, in, out, steps, options_given(&o, "quiet"), &e);
        return fst ? app_fail_status(&o, &e) : 0;
    }
    if (mpi_running()) {
        /* over MPI ranks: the same bytes as one process (docs/ARCHITECTURE.md, "MPI") */
        if (strcmp(options_get(&o, "backend"), "cpu") != 0)
            return options_fail(&o, "--backend %s: under MPI only the cpu backend runs",
                                options_get(&o, "backend"));
        return step_mpi(&o, &d, &scene, in, resume, out, ckpt, out_dir, every, steps);
    }

    float *rows;
    size_t count;
    shoal_sim_checkpoint ck;
    if (resume) {
        shoal_sim_desc rd;
        if (shoal_io_checkpoint_read(resume, &rd, &rows, &ck, &e))
            return app_fail_status(&o, &e);
        rd.thread_count = d.thread_count;
        rd.neighbors = d.neighbors;
        rd.isa = d.isa;
        d = rd;
        count = d.boid_count;
        in = resume;
    } else {
        if (app_state_read(in, NULL, &rows, &count, &e)) /* refuses NaN and infinity too */
            return app_fail_status(&o, &e);
        if (count_geo && (size_t)count_geo != count) {
            free(rows);
            return options_fail(&o, "--count %lld, but %s holds %zu boids", count_geo, in, count);
        }
    }
    d.boid_count = count;
    const char *backend = options_get(&o, "backend");
    if (strcmp(backend, "cpu") != 0 && (out_dir || ckpt || resume)) {
        free(rows);
        return options_fail(&o, "--out-dir, --checkpoint and --resume are for --backend cpu");
    }
    if (strcmp(backend, "cpu") != 0) {
        if (strcmp(backend, "cuda") != 0) {
            free(rows);
            return options_fail(&o, "--backend: '%s' (expected cpu or cuda)", backend);
        }
        rc = step_gpu(&d, &scene, options_get(&o, "gpu-order"), rows, steps,
                      options_given(&o, "stats"), &e);
        if (!rc && out)
            rc = app_state_write(out, NULL, rows, count, &e);
        free(rows);
        return rc ? app_fail_status(&o, &e) : 0;
    }
    shoal_sim *sim;
    if (shoal_sim_create(&d, &sim, &e)) {
        free(rows);
        return app_fail_status(&o, &e);
    }
    shoal_sim_set_state(sim, rows, &e);
    if ((resume && shoal_sim_set_checkpoint(sim, &ck, &e)) ||
        shoal_scene_add_obstacles(&scene, sim, &e)) {
        shoal_sim_destroy(sim);
        free(rows);
        return app_fail_status(&o, &e);
    }
    traj tr;
    if (out_dir &&
        traj_open(&tr, out_dir, format, every, count, options_given(&o, "overwrite"), &e)) {
        traj_close(&tr, sim, 0, 0, NULL);
        traj_release(&tr, 1);
        shoal_sim_destroy(sim);
        free(rows);
        return app_fail_status(&o, &e);
    }
    const char *trace = options_get(&o, "trace");
    if (trace) {
        /* one span per stage and one per step, per thread; preallocated, capped at 64 MiB */
        int tracks = threads > 0 ? (int)threads : shoal_system_thread_count();
        size_t spans = (size_t)steps * 6 + 16, cap = ((size_t)64 << 20) / 32 / (size_t)tracks;
        if (shoal_profile_trace_start(shoal_sim_get_profile(sim), tracks, spans < cap ? spans : cap,
                                      &e)) {
            if (out_dir) {
                traj_close(&tr, sim, 0, 0, NULL);
                traj_release(&tr, 1);
            }
            shoal_sim_destroy(sim);
            free(rows);
            return app_fail_status(&o, &e);
        }
    }
    progress pg;
    progress_begin(&pg, "shoal step", steps, options_given(&o, "quiet"));
    shoal_status st = app_sim_run(sim, steps, out_dir ? &tr : NULL, &pg, &e);
    progress_end(&pg);
    if (out_dir) {
        shoal_error te;
        shoal_status tst = traj_close(&tr, sim, steps, st == SHOAL_OK, &te);
        if (!st && tst) {
            st = tst;
            e = te;
        }
    }
    if (options_given(&o, "stats")) {
        char title[128];
        snprintf(title, sizeof title, "shoal step: %zu boids, %lld steps, %s, %d threads", count,
                 steps, shoal_sim_isa_name(sim),
                 threads > 0 ? (int)threads : shoal_system_thread_count());
        shoal_profile_write_table(shoal_sim_get_profile(sim), stderr, title, 1);
        print_pairs(stderr, sim);
    }
    /* Every output is written to a temporary first (the trajectory to its staging
     * directory); only when all of them are whole are they moved into place, so a step that
     * fails (a full disk, a write error) replaces none of its outputs. */
    app_staged staged[3];
    memset(staged, 0, sizeof staged);
    int nstaged = 0;
    app_state_ctx out_ctx = {out, rows, count};
    if (!st && ckpt)
        st = app_stage_file(&staged[nstaged++], ckpt, app_write_checkpoint, sim, &e);
    if (!st && out) {
        shoal_sim_get_state(sim, rows);
        st = app_stage_file(&staged[nstaged++], out, app_write_state, &out_ctx, &e);
    }
    if (!st && trace)
        st = app_stage_file(&staged[nstaged++], trace, app_write_trace, shoal_sim_get_profile(sim),
                            &e);
    if (trace)
        shoal_profile_trace_stop(shoal_sim_get_profile(sim));
    if (!st && out_dir)
        st = traj_commit(&tr, &e);
    if (!st)
        st = app_stage_commit_all(staged, nstaged, &e);
    for (int i = 0; i < nstaged; i++)
        app_stage_abort(&staged[i]); /* what was not committed (nothing when all went in) */
    if (out_dir)
        traj_release(&tr, st != SHOAL_OK);
    shoal_sim_destroy(sim);
    free(rows);
    if (st)
        return app_fail_status(&o, &e);
    app_print_scaled("step", &scaled, &d);
    step_warn_predators(&d, out, ckpt);
    return 0;
}
