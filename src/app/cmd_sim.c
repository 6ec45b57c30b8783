/* SPDX-License-Identifier: MIT */
/* `shoal init` and `shoal step`: state files in, state files out (the contract of
 * docs/CLI.md). Model, parameters and counts come from --model, --scene and --set, in that
 * order of precedence from weakest to strongest. */
#include "app/app.h"
#include "app/options.h"
#include "shoal/system.h"
#include "shoal/profile.h"
#include "app/traj.h"
#include "shoal/gpu.h"
#include "mpi_app.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void app_stage_done(const char *group, const char *name, uint64_t t0_ns)
{
    int id = shoal_profile_stage(group, name);
    if (id >= 0)
        shoal_profile_stage_call(id, shoal_profile_now_ns() - t0_ns);
}

int app_exit_code(shoal_status st)
{
    switch (st) {
    case SHOAL_OK:
        return 0;
    case SHOAL_ERR_INPUT:
    case SHOAL_ERR_NOMEM:
    case SHOAL_ERR_UNSUPPORTED:
    case SHOAL_ERR_IO:
        return 2;
    default:
        return 1;
    }
}

shoal_status app_gpu_add_obstacles(shoal_gpu_sim *g, const shoal_sim_desc *d,
                                   const shoal_scene *scene, shoal_error *e)
{
    if (!scene || scene->mesh_count == 0)
        return SHOAL_OK;
    shoal_sim_desc one = *d;
    one.boid_count = 1;
    shoal_sim *s;
    shoal_status st = shoal_sim_create(&one, &s, e);
    if (st)
        return st;
    if (!(st = shoal_scene_add_obstacles(scene, s, e)))
        st = shoal_gpu_sim_copy_obstacles(g, s, e);
    shoal_sim_destroy(s);
    return st;
}

static int fail_status(const opt_values *o, const shoal_error *e)
{
    options_fail(o, "%s", e->message);
    return app_exit_code(e->status);
}

/* Print the parameters the count scaling changed (name=value), so that a `step` of the
 * state can be given the same geometry with --set. */
void app_print_scaled(const char *cmd, const app_scaled *sc, const shoal_sim_desc *after)
{
    if (sc->s == 1.0)
        return;
    const shoal_sim_desc *before = &sc->before, *scaled = &sc->scaled;
    fprintf(stderr,
            "shoal %s: %zu boids, the scene's %zu: walls and start region scaled by %.6g to "
            "keep its density (--keep-geometry keeps them):",
            cmd, after->boid_count, before->boid_count, sc->s);
    size_t n;
    const shoal_param_info *list = shoal_param_list(after->model, &n);
    for (size_t i = 0; i < n; i++) {
        float a = *(const float *)((const char *)&before->params + list[i].offset);
        float b = *(const float *)((const char *)&scaled->params + list[i].offset);
        float c = *(const float *)((const char *)&after->params + list[i].offset);
        if (a != b)
            fprintf(stderr, " %s=%.9g", list[i].name, (double)c);
    }
    fputc('\n', stderr);
}

int app_scene_model(const opt_values *o, shoal_scene *scene, shoal_model *model)
{
    shoal_error e;
    memset(scene, 0, sizeof *scene);
    *model = SHOAL_MODEL_STEER;
    int given = options_given(o, "model");
    if (given && shoal_model_parse(options_get(o, "model"), model, &e))
        return fail_status(o, &e);
    if (!options_given(o, "scene")) /* (run's default is a sentence for --help) */
        return 0;
    const char *path = options_get(o, "scene");
    if (shoal_scene_load(path, scene, &e))
        return fail_status(o, &e);
    if (given && *model != scene->desc.model)
        return options_fail(o, "--model %s contradicts the scene file %s (model %s%s)",
                            shoal_model_name(*model), path, shoal_model_name(scene->desc.model),
                            scene->has_model ? ""
                                             : ": it names none, so steer; add model = to "
                                               "its [scene]");
    *model = scene->desc.model;
    return 0;
}

/* --model, --scene, --set: the sim desc (model, params, count, seed, dt) they describe.
 * count > 0 (init --count) gives the scene that count, its geometry scaled to keep its
 * density unless keep_geometry (shoal_scene_set_count), before --set is applied. */
static int build_desc(const opt_values *o, shoal_sim_desc *d, shoal_scene *scene_out, size_t count,
                      int keep_geometry, app_scaled *sc)
{
    shoal_error e;
    *d = shoal_sim_desc_default();
    shoal_scene scene;
    shoal_model m;
    int rc = app_scene_model(o, &scene, &m);
    if (rc)
        return rc;
    if (options_get(o, "scene")) {
        *d = scene.desc;
    } else if (options_given(o, "model")) {
        d->model = m;
        shoal_params_default(m, &d->params);
        d->boid_count = shoal_model_default_count(m);
    }
    if (!options_get(o, "scene"))
        scene.desc = *d;
    if (sc) {
        sc->before = scene.desc;
        sc->s = 1.0;
    }
    if (count > 0) {
        double s = shoal_scene_set_count(&scene, count, keep_geometry);
        *d = scene.desc;
        if (sc)
            sc->s = s;
    }
    if (sc)
        sc->scaled = *d;
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
            return fail_status(o, &e);
    }
    if (shoal_params_validate(d->model, &d->params, &e))
        return fail_status(o, &e);
    if (scene_out)
        *scene_out = scene;
    return 0;
}

int app_sim_desc(const opt_values *o, shoal_sim_desc *d, shoal_scene *scene, size_t count,
                 int keep_geometry)
{
    return build_desc(o, d, scene, count, keep_geometry, NULL);
}

static const opt_spec init_opts[] = {
    {"model", OPT_VALUE, "M", "steer", "model: steer, average, heading, classic, fov"},
    {"count", OPT_VALUE, "N", "the scene's (model's default)",
     "number of boids; walls and start region are scaled by cbrt(N / the scene's count) to "
     "keep the scene's density (--set wins)"},
    {"keep-geometry", OPT_FLAG, NULL, NULL,
     "with --count: keep the scene's walls and start region as they are (its density changes)"},
    {"seed", OPT_VALUE, "S", "1", "random seed (same seed, same state on every machine)"},
    {"out", OPT_VALUE, "FILE.npy", NULL, "output state file (required)"},
    {"scene", OPT_VALUE, "FILE.ini", NULL, "scene file: model, parameters, count, seed"},
    {"set", OPT_REPEAT, "NAME=VALUE", NULL, "set a model parameter (init radii, walls)"},
    {"stats", OPT_FLAG, NULL, NULL, "print the time of each stage (draw, write)"},
};

int cmd_init(int argc, char **argv)
{
    opt_values o;
    int rc = options_parse(&o, "init", "--out FILE.npy [options]", init_opts,
                           (int)(sizeof init_opts / sizeof init_opts[0]), 0, argc, argv);
    if (rc)
        return rc == 1 ? 0 : rc;
    if ((rc = options_check_outputs(&o, (const char *const[]){"out", NULL})))
        return rc;
    long long count = 0;
    if (options_given(&o, "count") && (rc = options_int(&o, "count", 1, 4000000000LL, &count)))
        return rc;
    shoal_sim_desc d;
    shoal_scene scene;
    app_scaled scaled;
    if ((rc = build_desc(&o, &d, &scene, (size_t)count, options_given(&o, "keep-geometry"),
                         &scaled)))
        return rc;
    const char *out = options_get(&o, "out");
    if (!out)
        return options_fail(&o, "--out FILE.npy is required");
    long long seed = (long long)d.seed;
    if (options_given(&o, "seed") &&
        (rc = options_int(&o, "seed", 0, 9223372036854775807LL, &seed)))
        return rc;
    d.seed = (uint64_t)seed;
    shoal_error e;
    if (mpi_running()) {
        /* each rank draws and writes its own rows (docs/ARCHITECTURE.md, "MPI") */
        shoal_status mst = mpi_init_file(&d, out, options_given(&o, "stats"), &e);
        return mst ? fail_status(&o, &e) : 0;
    }
    shoal_sim *sim;
    shoal_profile_reset();
    uint64_t t0 = shoal_profile_now_ns();
    if (shoal_sim_create(&d, &sim, &e))
        return fail_status(&o, &e);
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
    shoal_status st = app_state_write(out, NULL, rows, d.boid_count, &e);
    free(rows);
    if (st)
        return fail_status(&o, &e);
    app_stage_done("init", "write", t0);
    app_print_scaled("init", &scaled, &d);
    if (options_given(&o, "stats")) {
        char title[128];
        snprintf(title, sizeof title, "shoal init: %zu boids", d.boid_count);
        shoal_profile_print(stderr, title, 0);
    }
    return 0;
}

static const opt_spec step_opts[] = {
    {"model", OPT_VALUE, "M", "steer", "model: steer, average, heading, classic, fov"},
    {"in", OPT_VALUE, "A.npy", NULL, "input state file (required)"},
    {"out", OPT_VALUE, "B.npy", NULL, "output state file (required)"},
    {"steps", OPT_VALUE, "K", "1", "number of synchronous steps"},
    {"dt", OPT_VALUE, "DT", "1/60", "time step in seconds"},
    {"t0", OPT_VALUE, "SECONDS", "0", "simulated time at the first step (heading targets)"},
    {"seed", OPT_VALUE, "S", "1", "seed of time-dependent model state (heading targets)"},
    {"threads", OPT_VALUE, "T", "0", "worker threads, 0: all cores (results do not depend on it)"},
    {"neighbors", OPT_VALUE, "grid|brute", "grid", "neighbour search (brute: O(N^2) reference)"},
    {"simd", OPT_VALUE, "ISA", "auto", "force kernel: auto, scalar, avx2, avx512 (or $SHOAL_SIMD)"},
    {"set", OPT_REPEAT, "NAME=VALUE", NULL, "set a model parameter"},
    {"scene", OPT_VALUE, "FILE.ini", NULL, "scene file: model and parameters"},
    {"stats", OPT_FLAG, NULL, NULL,
     "print per-stage timings to stderr (calls, total, mean, median, max, per thread)"},
    {"trace", OPT_VALUE, "FILE.json", NULL,
     "write a Chrome trace (Perfetto, chrome://tracing): a span per stage per thread per step"},
    {"backend", OPT_VALUE, "cpu|cuda", "cpu", "run on the CPU or on an NVIDIA GPU (same bits)"},
    {"gpu-order", OPT_VALUE, "stable|atomic", "stable", "GPU order in a cell (atomic: seed 001's)"},
    {"out-dir", OPT_VALUE, "DIR", NULL,
     "trajectory: the state at steps 0, E, 2E, ... and K as DIR/state_NNNNNN.npy (or .vtp), "
     "DIR/manifest.json last"},
    {"every", OPT_VALUE, "E", "K (first and last state only)", "--out-dir: steps between states"},
    {"format", OPT_VALUE, "npy|vtk", "npy",
     "--out-dir: NumPy states, or VTK .vtp + trajectory.pvd"},
    {"checkpoint", OPT_VALUE, "F.ckpt", NULL,
     "write a checkpoint at the end: boids, predators, pinned targets, time, every parameter"},
    {"resume", OPT_VALUE, "F.ckpt", NULL,
     "start from a checkpoint instead of --in (it carries model, parameters, dt, t0, seed)"},
    {"quiet", OPT_FLAG, NULL, NULL, "no progress line (shown only when stderr is a terminal)"},
};

int cmd_step(int argc, char **argv)
{
    opt_values o;
    int rc = options_parse(&o, "step", "--in A.npy --out B.npy [options]", step_opts,
                           (int)(sizeof step_opts / sizeof step_opts[0]), 0, argc, argv);
    if (rc)
        return rc == 1 ? 0 : rc;
    if ((rc = options_check_outputs(&o, (const char *const[]){"out", "trace", "checkpoint", NULL})))
        return rc;
    shoal_sim_desc d;
    shoal_scene scene;
    if ((rc = build_desc(&o, &d, &scene, 0, 0, NULL)))
        return rc;
    const char *in = options_get(&o, "in"), *out = options_get(&o, "out");
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
    if (!out && !out_dir && !ckpt)
        return options_fail(&o, "--out B.npy is required (or --out-dir DIR, --checkpoint F)");
    if (!out_dir && (options_given(&o, "every") || options_given(&o, "format")))
        return options_fail(&o, "--every and --format are for --out-dir");
    long long steps, threads = 0, seed = (long long)d.seed;
    if ((rc = options_int(&o, "steps", 0, 1000000000LL, &steps)))
        return rc;
    if (options_given(&o, "threads") && (rc = options_int(&o, "threads", 0, 256, &threads)))
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
        return fail_status(&o, &e);
    d.thread_count = (int)threads;
    long long every = steps > 0 ? steps : 1;
    if (options_given(&o, "every") && (rc = options_int(&o, "every", 1, 1000000000LL, &every)))
        return rc;
    const char *format = options_get(&o, "format");
    if (strcmp(format, "npy") != 0 && strcmp(format, "vtk") != 0)
        return options_fail(&o, "--format: '%s' (expected npy or vtk)", format);
    if (mpi_running()) {
        /* over MPI ranks: the same bytes as one process (docs/ARCHITECTURE.md, "MPI") */
        if (strcmp(options_get(&o, "backend"), "cpu") != 0)
            return options_fail(&o, "--backend %s: under MPI only the cpu backend runs",
                                options_get(&o, "backend"));
        if (options_get(&o, "trace"))
            return options_fail(&o, "--trace: not under MPI (one trace per process)");
        if (out_dir)
            return options_fail(&o, "--out-dir: not under MPI (--out B.npy, --checkpoint F)");
        shoal_status mst = mpi_step_file(&d, &scene, resume ? NULL : in, resume, out, ckpt, steps,
                                         options_given(&o, "stats"), &e);
        return mst ? fail_status(&o, &e) : 0;
    }

    float *rows;
    size_t count;
    shoal_sim_checkpoint ck;
    if (resume) {
        shoal_sim_desc rd;
        if (shoal_io_checkpoint_read(resume, &rd, &rows, &ck, &e))
            return fail_status(&o, &e);
        rd.thread_count = d.thread_count;
        rd.neighbors = d.neighbors;
        rd.isa = d.isa;
        d = rd;
        count = d.boid_count;
        in = resume;
    } else {
        if (app_state_read(in, NULL, &rows, &count, &e)) /* refuses NaN and infinity too */
            return fail_status(&o, &e);
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
        rc = app_step_gpu(&d, &scene, options_get(&o, "gpu-order"), rows, steps,
                          options_given(&o, "stats"), &e);
        if (!rc)
            rc = app_state_write(out, NULL, rows, count, &e);
        free(rows);
        return rc ? fail_status(&o, &e) : 0;
    }
    shoal_sim *sim;
    if (shoal_sim_create(&d, &sim, &e)) {
        free(rows);
        return fail_status(&o, &e);
    }
    shoal_sim_set_state(sim, rows, &e);
    if ((resume && shoal_sim_set_checkpoint(sim, &ck, &e)) ||
        shoal_scene_add_obstacles(&scene, sim, &e)) {
        shoal_sim_destroy(sim);
        free(rows);
        return fail_status(&o, &e);
    }
    traj tr;
    if (out_dir && traj_open(&tr, out_dir, format, every, count, &e)) {
        traj_close(&tr, sim, 0, 0, NULL);
        shoal_sim_destroy(sim);
        free(rows);
        return fail_status(&o, &e);
    }
    const char *trace = options_get(&o, "trace");
    if (trace) {
        /* one span per stage and one per step, per thread; preallocated, capped at 64 MiB */
        int tracks = threads > 0 ? (int)threads : shoal_system_thread_count();
        size_t spans = (size_t)steps * 6 + 16, cap = ((size_t)64 << 20) / 32 / (size_t)tracks;
        if (shoal_profile_trace_open(tracks, spans < cap ? spans : cap, &e)) {
            shoal_sim_destroy(sim);
            free(rows);
            return fail_status(&o, &e);
        }
    }
    shoal_profile_reset();
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
    if (!st && ckpt)
        st = shoal_io_checkpoint_write(ckpt, sim, &e);
    if (options_given(&o, "stats")) {
        char title[128];
        snprintf(title, sizeof title, "shoal step: %zu boids, %lld steps, %s, %d threads", count,
                 steps, shoal_sim_isa_name(sim), shoal_system_thread_count());
        shoal_profile_print(stderr, title, 1);
    }
    if (trace) {
        /* a failed run writes no output file, the trace included */
        shoal_error te;
        shoal_status tst = st ? SHOAL_OK : shoal_profile_trace_write(trace, &te);
        shoal_profile_trace_close();
        if (tst) {
            shoal_sim_destroy(sim);
            free(rows);
            return fail_status(&o, &te);
        }
    }
    if (st) {
        shoal_sim_destroy(sim);
        free(rows);
        return fail_status(&o, &e);
    }
    shoal_sim_get_state(sim, rows);
    shoal_sim_destroy(sim);
    st = out ? app_state_write(out, NULL, rows, count, &e) : SHOAL_OK;
    free(rows);
    if (st)
        return fail_status(&o, &e);
    return 0;
}
