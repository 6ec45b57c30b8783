/* SPDX-License-Identifier: MIT */
/* `shoal compare` (two states: how many boids are bit-identical, the errors, and the flock
 * statistics that say whether two runs are the same kind of school after they diverge),
 * `shoal diverge` (two backends or orders from one state, per-step errors and statistics
 * to CSV). State files are read through app.c's readers (.npy or Unity's raw buffer). */
#include "app/app.h"
#include "shoal/profile.h"
#include "app/options.h"
#include "app/outdir.h"
#include "app/traj.h"
#include "shoal/system.h"
#include "shoal/gpu.h"
#include "support/json.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- comparison ---------------------------------------------------------------------- */

typedef struct err_stats {
    double max_abs, rms_abs, max_rel, rms_rel;
} err_stats;

typedef struct compare_result {
    size_t count, identical;
    err_stats pos, vel;
    double radius;
    shoal_stats a, b;
} compare_result;

/* The flock statistics of both states come from the library (shoal/stats.h). */
static shoal_status compare_states(const float *a, const float *b, size_t n, double radius,
                                   int with_stats, int threads, const shoal_world *world,
                                   compare_result *r, shoal_error *e)
{
    memset(r, 0, sizeof *r);
    r->count = n;
    r->radius = radius;
    /* the errors are the library's (shoal_state_compare), as the Python module's are */
    shoal_state_diff df;
    shoal_status st = shoal_state_compare(a, b, n, &df, e);
    if (st)
        return st;
    r->identical = df.identical;
    r->pos = (err_stats){df.pos_max_abs, df.pos_rms_abs, df.pos_max_rel, df.pos_rms_rel};
    r->vel = (err_stats){df.vel_max_abs, df.vel_rms_abs, df.vel_max_rel, df.vel_rms_rel};
    if (!with_stats)
        return SHOAL_OK;
    shoal_stats_desc d = shoal_stats_desc_default();
    d.radius = radius;
    d.thread_count = threads;
    d.world = *world; /* periodic axes: circular means, minimum-image distances */
    st = shoal_stats_compute(a, n, &d, &r->a, e);
    if (!st)
        st = shoal_stats_compute(b, n, &d, &r->b, e);
    return st;
}

/* The statistics as compare prints them, in one place for the text, the JSON and B - A. */
typedef struct stat_row {
    double polarisation, milling, nn_mean, neighbors_mean, centroid[3], extent[3], gyration;
    double mean_speed, groups, largest_group;
    double nonfinite;
} stat_row;

static stat_row stat_row_of(const shoal_stats *s)
{
    stat_row r = {.polarisation = s->polarisation,
                  .milling = s->milling,
                  .nn_mean = s->mean_nn_distance,
                  .neighbors_mean = s->mean_neighbors,
                  .gyration = s->radius_of_gyration,
                  .mean_speed = s->mean_speed,
                  .groups = (double)s->group_count,
                  .largest_group = s->largest_group_fraction,
                  .nonfinite = (double)s->nonfinite};
    for (int k = 0; k < 3; k++) {
        r.centroid[k] = s->centroid[k];
        r.extent[k] = s->extent[k];
    }
    return r;
}

static void json_stats(FILE *f, const char *key, const stat_row *s)
{
    fprintf(f, "  \"%s\": {\"polarisation\": ", key);
    json_write_number(f, s->polarisation, 9);
    fputs(", \"milling\": ", f);
    json_write_number(f, s->milling, 9);
    fputs(", \"mean_nn_distance\": ", f);
    json_write_number(f, s->nn_mean, 9);
    fputs(", \"mean_neighbors\": ", f);
    json_write_number(f, s->neighbors_mean, 9);
    fputs(", \"centroid\": [", f);
    for (int k = 0; k < 3; k++) {
        json_write_number(f, s->centroid[k], 9);
        fputs(k < 2 ? ", " : "], \"extent\": [", f);
    }
    for (int k = 0; k < 3; k++) {
        json_write_number(f, s->extent[k], 9);
        fputs(k < 2 ? ", " : "], \"radius_of_gyration\": ", f);
    }
    json_write_number(f, s->gyration, 9);
    fprintf(f, ", \"nonfinite\": %.0f, \"mean_speed\": ", s->nonfinite);
    json_write_number(f, s->mean_speed, 9);
    fprintf(f, ", \"group_count\": %.0f, \"largest_group_fraction\": ", s->groups);
    json_write_number(f, s->largest_group, 9);
    fputs("}", f);
}

/* B - A; the counts (groups, nonfinite rows) as signed differences. */
static stat_row stats_diff(const shoal_stats *sa, const shoal_stats *sb)
{
    stat_row a = stat_row_of(sa), b = stat_row_of(sb), d;
    d.polarisation = b.polarisation - a.polarisation;
    d.milling = b.milling - a.milling;
    d.nn_mean = b.nn_mean - a.nn_mean;
    d.neighbors_mean = b.neighbors_mean - a.neighbors_mean;
    for (int k = 0; k < 3; k++) {
        d.centroid[k] = b.centroid[k] - a.centroid[k];
        d.extent[k] = b.extent[k] - a.extent[k];
    }
    d.gyration = b.gyration - a.gyration;
    d.mean_speed = b.mean_speed - a.mean_speed;
    d.groups = b.groups - a.groups;
    d.largest_group = b.largest_group - a.largest_group;
    /* kept as before: the absolute difference of the non-finite row counts */
    d.nonfinite = fabs(b.nonfinite - a.nonfinite);
    return d;
}

static void json_err(FILE *f, const char *key, const err_stats *e)
{
    fprintf(f, "  \"%s\": {\"max_abs\": ", key);
    json_write_number(f, e->max_abs, 9);
    fputs(", \"rms_abs\": ", f);
    json_write_number(f, e->rms_abs, 9);
    fputs(", \"max_rel\": ", f);
    json_write_number(f, e->max_rel, 9);
    fputs(", \"rms_rel\": ", f);
    json_write_number(f, e->rms_rel, 9);
    fputs("}", f);
}

static shoal_status write_json(const char *path, const char *na, const char *nb,
                               const compare_result *r, shoal_error *e)
{
    shoal_atomic_file af;
    shoal_status st = shoal_io_atomic_open(&af, path, e);
    if (st)
        return st;
    FILE *f = af.file;
    fputs("{\n  \"a\": ", f);
    json_write_string(f, na);
    fputs(",\n  \"b\": ", f);
    json_write_string(f, nb);
    fprintf(f, ",\n  \"count\": %zu,\n  \"identical\": %zu,\n  \"identical_fraction\": ", r->count,
            r->identical);
    json_write_number(f, (double)r->identical / (double)r->count, 9);
    fputs(",\n", f);
    json_err(f, "position", &r->pos);
    fputs(",\n", f);
    json_err(f, "velocity", &r->vel);
    fputs(",\n  \"radius\": ", f);
    json_write_number(f, r->radius, 9);
    fputs(",\n", f);
    stat_row sa = stat_row_of(&r->a), sb = stat_row_of(&r->b), d = stats_diff(&r->a, &r->b);
    json_stats(f, "stats_a", &sa);
    fputs(",\n", f);
    json_stats(f, "stats_b", &sb);
    fputs(",\n", f);
    json_stats(f, "stats_diff", &d);
    fputs("\n}\n", f);
    if (ferror(f)) {
        shoal_io_atomic_abort(&af);
        return shoal_error_set(e, SHOAL_ERR_IO, "%s: write failed", path);
    }
    return shoal_io_atomic_commit(&af, e);
}

static void print_result(FILE *f, const compare_result *r)
{
    fprintf(f, "boids                %zu\n", r->count);
    fprintf(f, "bit-identical        %zu (%.4f%%)\n", r->identical,
            100.0 * (double)r->identical / (double)r->count);
    fprintf(f, "%-20s %14s %14s %14s %14s\n", "error", "max abs", "rms abs", "max rel", "rms rel");
    fprintf(f, "%-20s %14.6g %14.6g %14.6g %14.6g\n", "position", r->pos.max_abs, r->pos.rms_abs,
            r->pos.max_rel, r->pos.rms_rel);
    fprintf(f, "%-20s %14.6g %14.6g %14.6g %14.6g\n", "velocity", r->vel.max_abs, r->vel.rms_abs,
            r->vel.max_rel, r->vel.rms_rel);
    stat_row s3[3] = {stat_row_of(&r->a), stat_row_of(&r->b), stats_diff(&r->a, &r->b)};
    fprintf(f, "%-20s %14s %14s %14s\n", "statistic", "A", "B", "B - A");
    /* the first eleven rows are the original table; the rest were added after it */
    const char *names[] = {"polarisation", "milling",      "mean nn distance",   "mean neighbors",
                           "centroid x",   "centroid y",   "centroid z",         "extent x",
                           "extent y",     "extent z",     "radius of gyration", "mean speed",
                           "groups",       "largest group"};
    for (int k = 0; k < 14; k++) {
        double v[3];
        for (int j = 0; j < 3; j++) {
            const stat_row *s = &s3[j];
            v[j] = k == 0    ? s->polarisation
                   : k == 1  ? s->milling
                   : k == 2  ? s->nn_mean
                   : k == 3  ? s->neighbors_mean
                   : k < 7   ? s->centroid[k - 4]
                   : k < 10  ? s->extent[k - 7]
                   : k == 10 ? s->gyration
                   : k == 11 ? s->mean_speed
                   : k == 12 ? s->groups
                             : s->largest_group;
        }
        fprintf(f, "%-20s %14.6g %14.6g %14.6g\n", names[k], v[0], v[1], v[2]);
    }
    fprintf(f, "(mean neighbors within radius %g)\n", r->radius);
}

static const opt_spec compare_opts[] = {
    {"json", OPT_VALUE, "FILE", NULL, "also write the result as JSON"},
    {"format", OPT_VALUE, "auto|npy|unity", "auto", "state format (auto: .bin is Unity's)"},
    {"model", OPT_VALUE, "M", OPT_MODEL_DEFAULT,
     "model whose interaction radius counts neighbours ({models})"},
    {"radius", OPT_VALUE, "R", "model's", "radius for the neighbour count"},
    {"set", OPT_REPEAT, "NAME=VALUE", NULL,
     "a world parameter (periodic=1, world_size=Lx,Ly,Lz ...): statistics by circular means "
     "and minimum images (docs/STATS.md)"},
    {"stats", OPT_FLAG, NULL, NULL, "print the time of each stage (read, compare, write)"},
    {"threads", OPT_VALUE, "T", "0", "worker threads for the statistics (0: all cores)"},
};

int cmd_compare(int argc, char **argv)
{
    opt_values o;
    int rc = options_parse(&o, "compare", "A.npy B.npy [--json FILE]", compare_opts,
                           (int)(sizeof compare_opts / sizeof compare_opts[0]), 2, argc, argv);
    if (rc)
        return rc == 1 ? 0 : rc;
    if ((rc = options_check_outputs(&o, (const char *const[]){"json", NULL})))
        return rc;
    if (o.positional_count != 2)
        return options_fail(&o, "expected two state files A and B");
    if ((rc = app_output_not_input(&o, (const char *const[]){"json", NULL}, o.positional[0],
                                   "compare's first state")) ||
        (rc = app_output_not_input(&o, (const char *const[]){"json", NULL}, o.positional[1],
                                   "compare's second state")))
        return rc;
    shoal_error e;
    shoal_model model;
    if (shoal_model_parse(options_get(&o, "model"), &model, &e))
        return options_fail(&o, "%s", e.message);
    shoal_params prm;
    shoal_params_default(model, &prm);
    double radius = shoal_params_interaction_radius(model, &prm);
    if (options_given(&o, "radius") && (rc = options_double(&o, "radius", 0, 1e30, &radius)))
        return rc;
    long long threads = 0;
    if (options_given(&o, "threads") &&
        (rc = options_int(&o, "threads", 0, SHOAL_MAX_THREADS, &threads)))
        return rc;
    shoal_world world = shoal_world_default();
    for (int i = 0; i < o.repeat_count; i++) {
        const char *kv = o.repeat[i], *eq = strchr(kv, '=');
        char name[128];
        if (!eq || eq == kv || (size_t)(eq - kv) >= sizeof name)
            return options_fail(&o, "--set '%s': expected name=value", kv);
        memcpy(name, kv, (size_t)(eq - kv));
        name[eq - kv] = 0;
        if (shoal_world_set(&world, name, eq + 1, &e))
            return options_fail(&o, "%s", e.message);
    }
    if (shoal_world_validate(&world, 0.0f, &e))
        return options_fail(&o, "%s", e.message);
    const char *fmt = options_get(&o, "format");
    float *a = NULL, *b = NULL;
    size_t na, nb;
    uint64_t t0 = shoal_profile_now_ns();
    if (app_state_read(o.positional[0], fmt, &a, &na, &e)) {
        options_fail(&o, "%s", e.message);
        return app_exit_code(e.status);
    }
    if (app_state_read(o.positional[1], fmt, &b, &nb, &e)) {
        free(a);
        options_fail(&o, "%s", e.message);
        return app_exit_code(e.status);
    }
    if (na != nb) {
        free(a);
        free(b);
        return options_fail(&o, "%s has %zu boids, %s has %zu", o.positional[0], na,
                            o.positional[1], nb);
    }
    app_stage_done("compare", "read", t0);
    t0 = shoal_profile_now_ns();
    compare_result r;
    if (compare_states(a, b, na, radius, 1, (int)threads, &world, &r, &e)) {
        free(a);
        free(b);
        options_fail(&o, "%s", e.message);
        return app_exit_code(e.status);
    }
    free(a);
    free(b);
    app_stage_done("compare", "compare", t0);
    print_result(stdout, &r);
    if (app_stdout_check("compare")) /* the report lost: fail before writing --json */
        return 2;
    const char *json = options_get(&o, "json");
    t0 = shoal_profile_now_ns();
    if (json && write_json(json, o.positional[0], o.positional[1], &r, &e)) {
        options_fail(&o, "%s", e.message);
        return app_exit_code(e.status);
    }
    if (json)
        app_stage_done("compare", "write", t0);
    if (options_given(&o, "stats")) {
        char title[128];
        snprintf(title, sizeof title, "shoal compare: %zu boids", na);
        app_profile_print(app_profile(), title, 0);
    }
    return 0;
}

/* ---- diverge ------------------------------------------------------------------------- */

/* One run: the CPU simulation or a GPU one (stable or atomic order). */
typedef struct runner {
    const char *name;
    shoal_sim *cpu;
    shoal_gpu_sim *gpu;
} runner;

static shoal_status runner_create(runner *r, const char *name, const shoal_sim_desc *d,
                                  const shoal_scene *scene, const float *rows, shoal_error *e)
{
    memset(r, 0, sizeof *r);
    r->name = name;
    shoal_status st;
    if (strcmp(name, "cpu") == 0) {
        if ((st = shoal_sim_create(d, &r->cpu, e)) || (st = shoal_sim_set_state(r->cpu, rows, e)))
            return st;
        /* both CPU runs in one table (--stats): they step one after the other */
        shoal_sim_set_profile(r->cpu, app_profile());
        return shoal_scene_add_obstacles(scene, r->cpu, e);
    }
    shoal_gpu_order order;
    if (strcmp(name, "cuda") == 0 || strcmp(name, "cuda-stable") == 0)
        order = SHOAL_GPU_ORDER_STABLE;
    else if (strcmp(name, "cuda-atomic") == 0)
        order = SHOAL_GPU_ORDER_ATOMIC;
    else
        return shoal_error_set(e, SHOAL_ERR_INPUT,
                               "unknown run '%s' (expected cpu, cuda, cuda-stable or cuda-atomic)",
                               name);
    if ((st = shoal_gpu_sim_create(d, order, &r->gpu, e)) ||
        (st = shoal_gpu_sim_set_state(r->gpu, rows, e)))
        return st;
    return app_gpu_add_obstacles(r->gpu, scene, e);
}

static shoal_status runner_step(runner *r, int k, shoal_error *e)
{
    return r->cpu ? shoal_sim_step(r->cpu, k, e) : shoal_gpu_sim_step(r->gpu, k, e);
}

static shoal_status runner_get(runner *r, float *rows, shoal_error *e)
{
    if (r->cpu) {
        shoal_sim_get_state(r->cpu, rows);
        return SHOAL_OK;
    }
    return shoal_gpu_sim_get_state(r->gpu, rows, e);
}

static void runner_destroy(runner *r)
{
    shoal_sim_destroy(r->cpu);
    shoal_gpu_sim_destroy(r->gpu);
}

static const opt_spec diverge_opts[] = {
    {"in", OPT_VALUE, "A.npy", NULL, "initial state (required)"},
    {"a", OPT_VALUE, "RUN", "cpu", "first run: cpu, cuda (stable order) or cuda-atomic"},
    {"b", OPT_VALUE, "RUN", "cuda", "second run"},
    {"steps", OPT_VALUE, "K", "1000", "steps"},
    {"every", OPT_VALUE, "E", "1", "compare every E steps"},
    {"stats-every", OPT_VALUE, "S", "10", "flock statistics every S steps (0: never)"},
    {"csv", OPT_VALUE, "FILE.csv", NULL, "per-step errors and statistics (required)"},
    {"format", OPT_VALUE, "auto|npy|unity", "auto", "input format"},
    {"model", OPT_VALUE, "M", OPT_MODEL_DEFAULT, APP_MODEL_HELP},
    {"scene", OPT_VALUE, "FILE.ini", NULL, "scene file: model and parameters"},
    {"set", OPT_REPEAT, "NAME=VALUE", NULL, "set a model parameter"},
    {"dt", OPT_VALUE, "DT", "1/60", "time step in seconds"},
    {"seed", OPT_VALUE, "S", "1", "seed of time-dependent model state"},
    {"neighbors", OPT_VALUE, "grid|brute", "grid", "neighbour search"},
    {"threads", OPT_VALUE, "T", "0", "CPU worker threads (0: all cores)"},
    {"stats", OPT_FLAG, NULL, NULL,
     "print the per-stage times of the CPU run's steps (calls, mean, median, max, per thread)"},
    {"quiet", OPT_FLAG, NULL, NULL, "no progress line (shown only when stderr is a terminal)"},
};

int cmd_diverge(int argc, char **argv)
{
    opt_values o;
    int rc =
        options_parse(&o, "diverge", "--in A.npy --csv OUT.csv [--a cpu] [--b cuda]", diverge_opts,
                      (int)(sizeof diverge_opts / sizeof diverge_opts[0]), 0, argc, argv);
    if (rc)
        return rc == 1 ? 0 : rc;
    if ((rc = options_check_outputs(&o, (const char *const[]){"csv", NULL})) ||
        (rc = app_output_not_input(&o, (const char *const[]){"csv", NULL}, options_get(&o, "in"),
                                   "--in")) ||
        (rc = app_output_not_input(&o, (const char *const[]){"csv", NULL}, options_get(&o, "scene"),
                                   "--scene")))
        return rc;
    shoal_error e;
    shoal_sim_desc d = shoal_sim_desc_default();
    const char *scene_path = options_get(&o, "scene");
    shoal_scene scene;
    if ((rc = app_scene_model(&o, &scene, &d.model)))
        return rc;
    if (scene_path)
        d = scene.desc;
    else
        shoal_params_default(d.model, &d.params);
    for (int i = 0; i < o.repeat_count; i++) {
        const char *kv = o.repeat[i];
        const char *eq = strchr(kv, '=');
        char name[128];
        if (!eq || eq == kv || (size_t)(eq - kv) >= sizeof name)
            return options_fail(&o, "--set '%s': expected name=value", kv);
        memcpy(name, kv, (size_t)(eq - kv));
        name[eq - kv] = 0;
        if (shoal_sim_desc_set(&d, name, eq + 1, &e)) /* the world's or the model's */
            return options_fail(&o, "%s", e.message);
    }
    long long steps, every, stats_every, seed, threads = 0;
    if ((rc = options_int(&o, "steps", 0, 100000000LL, &steps)) ||
        (rc = options_int(&o, "every", 1, 100000000LL, &every)) ||
        (rc = options_int(&o, "stats-every", 0, 100000000LL, &stats_every)))
        return rc;
    if (options_given(&o, "seed")) {
        if ((rc = options_int(&o, "seed", 0, 9223372036854775807LL, &seed)))
            return rc;
        d.seed = (uint64_t)seed;
    }
    if (options_given(&o, "threads") &&
        (rc = options_int(&o, "threads", 0, SHOAL_MAX_THREADS, &threads)))
        return rc;
    d.thread_count = (int)threads;
    if (options_given(&o, "dt") && (rc = options_double(&o, "dt", 1e-12, 1e6, &d.dt_s)))
        return rc;
    const char *nb = options_get(&o, "neighbors");
    if (strcmp(nb, "grid") != 0 && strcmp(nb, "brute") != 0)
        return options_fail(&o, "--neighbors: '%s' (expected grid or brute)", nb);
    d.neighbors = strcmp(nb, "brute") == 0 ? SHOAL_NEIGHBORS_BRUTE : SHOAL_NEIGHBORS_GRID;
    const char *in = options_get(&o, "in"), *csv = options_get(&o, "csv");
    if (!in)
        return options_fail(&o, "--in A.npy is required");
    if (!csv)
        return options_fail(&o, "--csv FILE.csv is required");
    float *rows, *ra = NULL, *rb = NULL;
    size_t n;
    if (app_state_read(in, options_get(&o, "format"), &rows, &n, &e)) {
        options_fail(&o, "%s", e.message);
        return app_exit_code(e.status);
    }
    d.boid_count = n;
    double radius = shoal_params_interaction_radius(d.model, &d.params);
    runner A, B;
    memset(&A, 0, sizeof A);
    memset(&B, 0, sizeof B);
    shoal_status st = runner_create(&A, options_get(&o, "a"), &d, &scene, rows, &e);
    if (!st)
        st = runner_create(&B, options_get(&o, "b"), &d, &scene, rows, &e);
    ra = malloc(n * 6 * sizeof(float));
    rb = malloc(n * 6 * sizeof(float));
    if (!st && (!ra || !rb))
        st = shoal_error_set(&e, SHOAL_ERR_NOMEM, "out of memory for %zu boids", n);
    shoal_atomic_file af;
    if (!st)
        st = shoal_io_atomic_open(&af, csv, &e);
    if (st) {
        runner_destroy(&A);
        runner_destroy(&B);
        free(rows);
        free(ra);
        free(rb);
        options_fail(&o, "%s", e.message);
        return app_exit_code(e.status);
    }
    FILE *f = af.file;
    fprintf(f, "step,t,identical,pos_max_abs,pos_rms_abs,pos_max_rel,vel_max_abs,vel_rms_abs,"
               "vel_max_rel,a_polarisation,b_polarisation,a_milling,b_milling,a_nn,b_nn,"
               "a_neighbors,b_neighbors,a_gyration,b_gyration,centroid_dist,a_speed,b_speed,"
               "a_groups,b_groups,a_largest_group,b_largest_group\n");
    long long done = 0;
    int fault = 0;
    compare_result r;
    progress pg;
    progress_begin(&pg, "shoal diverge", steps, options_given(&o, "quiet"));
    for (;;) {
        progress_update(&pg, done, 0);
        int with_stats = stats_every > 0 && done % stats_every == 0;
        if ((st = runner_get(&A, ra, &e)) || (st = runner_get(&B, rb, &e)))
            break;
        if ((st = compare_states(ra, rb, n, radius, with_stats, d.thread_count, &d.world, &r, &e)))
            break;
        fprintf(f, "%lld,%.9g,%zu,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g", done,
                d.t0_s + (double)done * d.dt_s, r.identical, r.pos.max_abs, r.pos.rms_abs,
                r.pos.max_rel, r.vel.max_abs, r.vel.rms_abs, r.vel.max_rel);
        if (with_stats) {
            double cd = 0;
            for (int k = 0; k < 3; k++)
                cd += (r.a.centroid[k] - r.b.centroid[k]) * (r.a.centroid[k] - r.b.centroid[k]);
            fprintf(f, ",%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g", r.a.polarisation,
                    r.b.polarisation, r.a.milling, r.b.milling, r.a.mean_nn_distance,
                    r.b.mean_nn_distance, r.a.mean_neighbors, r.b.mean_neighbors,
                    r.a.radius_of_gyration, r.b.radius_of_gyration, sqrt(cd));
            fprintf(f, ",%.9g,%.9g,%llu,%llu,%.9g,%.9g\n", r.a.mean_speed, r.b.mean_speed,
                    (unsigned long long)r.a.group_count, (unsigned long long)r.b.group_count,
                    r.a.largest_group_fraction, r.b.largest_group_fraction);
        } else {
            fputs(",,,,,,,,,,,,,,,,,\n", f);
        }
        if (done >= steps)
            break;
        int k = (int)(steps - done < every ? steps - done : every);
        if ((st = runner_step(&A, k, &e)) || (st = runner_step(&B, k, &e))) {
            fault = 1;
            break;
        }
        done += k;
    }
    progress_end(&pg);
    printf("%s vs %s, %zu boids, %lld steps: %zu bit-identical at the end, position error max "
           "%.6g rms %.6g\n",
           A.name, B.name, n, done, r.identical, r.pos.max_abs, r.pos.rms_abs);
    /* the CSV is renamed into place only once the summary is written: a failed command
     * replaces no file */
    int lost = !st && app_stdout_check("diverge");
    shoal_status wst =
        st || lost ? (shoal_io_atomic_abort(&af), SHOAL_OK) : shoal_io_atomic_commit(&af, &e);
    if (options_given(&o, "stats")) {
        char title[160];
        snprintf(title, sizeof title, "shoal diverge: %zu boids, %lld steps (the CPU runs)", n,
                 done);
        app_profile_print(app_profile(), title, 1);
    }
    runner_destroy(&A);
    runner_destroy(&B);
    free(rows);
    free(ra);
    free(rb);
    if (lost)
        return 2;
    if (st || wst) {
        options_fail(&o, "%s%s", fault ? "step failed: " : "", e.message);
        return app_exit_code(e.status);
    }
    return 0;
}
