/* SPDX-License-Identifier: MIT */
/* `shoal bench`: the fixed benchmark matrix (docs/BENCH.md). Simulation scenes x thread
 * counts x ISAs, and with the renderer linked the render scenes; each case warmed up, then
 * timed over repeats whose median, min, max and MAD are reported with the machine they ran
 * on; --json writes them, --compare reads a previous file and flags regressions beyond the
 * noise. Owns only the benchmark's choices and reporting: it times through the public API
 * (candidate pairs: shoal_sim_candidate_pairs; stage medians: shoal/profile.h). */
#include "app/app.h"
#include "app/options.h"
#include "shoal/system.h"
#include "shoal/profile.h"
#include "support/baseline_grid.h"
#include "support/json.h"
#include "support/peak.h"
#include "support/scenes.h"
#include "shoal/render.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#ifndef SHOAL_BUILDTYPE
#define SHOAL_BUILDTYPE "unknown"
#endif

/* Flops per candidate lane-pair in steer's pair loop (forces_kernel.h's walker with
 * sim/models/steer_average.h): diff 3 sub, d^2 3 mul + 2 add, 5 compares (d2 > 0, d2 <= max r^2,
 * and the three radius tests), masked accumulation of ali (3 + count 1), coh (3 + 1) and
 * sep (3 + 1) = 12: 25. The separation term (1 sqrt, 2 x 3 div) runs only when some lane is
 * within the separation radius and is not counted; a candidate that is near no lane stops
 * after 10 (the early `continue`). So 25 is an estimate of the work a lane-pair costs. */
#define FLOPS_PER_PAIR 25.0

/* The least memory traffic of the grid's sort per boid (src/sim/grid.c): grid_assign reads
 * the cell keys twice (the cell range of its block, then the histogram: 8 bytes), the
 * scatter reads the key, the row and the 6 state floats and writes the row and the 6
 * floats (60 bytes). The histograms, the scan and the per-cell row check add a few bytes a
 * cell on top. */
#define SORT_BYTES_PER_BOID 68.0

/* ---- options ------------------------------------------------------------------------ */

static const opt_spec bench_opts[] = {
    {"quick", OPT_FLAG, NULL, NULL, "a small subset (about a minute): the anchors only"},
    {"filter", OPT_VALUE, "SUBSTRING", NULL, "run only the cases whose name contains it"},
    {"repeat", OPT_VALUE, "K", "7 (quick: 5)", "timed repeats per case"},
    {"json", OPT_VALUE, "FILE.json", NULL, "write the results (schema: docs/BENCH.md)"},
    {"compare", OPT_VALUE, "BASELINE.json", NULL,
     "compare with a previous --json: speedups, REGRESSION beyond the noise"},
    {"current", OPT_VALUE, "NEW.json", NULL,
     "with --compare: compare this file instead of running the benchmark"},
    {"list", OPT_FLAG, NULL, NULL, "print the case names and exit"},
    {"threads", OPT_VALUE, "T,T,...", "1, powers of 2, all cores", "thread counts to run"},
    {"peak-seconds", OPT_VALUE, "S", "0.5", "time for measuring the FP peak (0: skip it)"},
    {"tiny", OPT_FLAG, NULL, NULL, "a few-second smoke run (for the tests)"},
    {"plain-grid", OPT_VALUE, "PROGRAM", NULL,
     "also time this plain-grid yardstick (run as PROGRAM -n N -s K -w 2, OMP_NUM_THREADS=T; "
     "it prints total_ms_med=MS) on each uniform case, right after the baseline"},
};
#define BENCH_OPT_COUNT ((int)(sizeof bench_opts / sizeof bench_opts[0]))

/* ---- cases ---------------------------------------------------------------------------- */

typedef enum scene_id {
    SC_STEER_16K,  /* steer defaults, 16384 boids, after 600 steps (clumped school) */
    SC_STEER_1M,   /* 1M uniform, density 0.5, box side 126, walls = the box */
    SC_STEER_131K, /* 131072 uniform, density 0.5 (side 64), walls = the box */
    SC_MODEL_DEF,  /* a model at its default N and initial state (+ 30 steps) */
    SC_TINY,       /* 4096 uniform steer (tests) */
    SC_RENDER,     /* issue 4's render scene */
} scene_id;

typedef struct bench_case {
    char name[96];
    scene_id scene;
    shoal_model model;
    size_t n;
    int threads;
    shoal_isa isa;
    int lod; /* render */
    int render_w, render_h;
} bench_case;

typedef struct bench_result {
    bench_case c;
    int ok;
    char error[520];
    int repeats;
    long per_repeat; /* steps or frames per timed repeat */
    double median_ms, min_ms, max_ms, mad_ms;
    /* sim */
    double stage_median_ms[SHOAL_SIM_STAGE_COUNT];
    double thread_busy_min_ms, thread_busy_max_ms; /* forces, per step */
    double lane_pairs, useful_pairs;               /* candidate pairs of one step */
    /* the sort (assign + scan + scatter medians) and its bytes per second over the
     * minimum traffic of its design (SORT_BYTES_PER_BOID), against the copy bandwidth */
    double sort_ms, sort_gbs, copy_gbs, copy_fraction;
    double pairs_per_s, pairs_per_s_per_core, gflops, peak_fraction, peak_gflops;
    /* the uniform scenes: support/baseline_grid.c on the same positions, threads and run
     * (30 neighbours per point), and shoal's step / the baseline's pass (issue 18: <= 0.45) */
    double baseline_ms, baseline_sort_ms, baseline_neighbours, baseline_ratio;
    int baseline_avx2;
    /* --plain-grid: the outside yardstick's median step on the same N and threads (its own
     * points at the same density and neighbour count), shoal's step / it, the baseline / it */
    double plain_ms, plain_neighbours, plain_ratio, plain_baseline_ratio;
    char plain_error[200];
    /* render */
    double render_stage_ms[4];
    double triangles_rasterized, pixels_written;
} bench_result;

#define MAX_CASES 512

typedef struct bench_ctx {
    bench_case cases[MAX_CASES];
    int case_count;
    int quick, tiny, repeat;
    double target_s; /* time per repeat */
    const char *filter;
    const char *plain_grid; /* --plain-grid PROGRAM, or NULL */
    int threads[16], thread_count;
    shoal_isa isas[4];
    int isa_count;
    /* scene caches */
    float *rows[9];
    size_t rows_n[9];
    shoal_sim_desc descs[9];
    double peak[4][2]; /* kind x {1 thread, all threads}: GFLOP/s */
    double copy[2];    /* copy bandwidth, GB/s read + write: 1 thread, all threads */
    int max_threads;
} bench_ctx;

static const char *isa_short(shoal_isa isa) { return shoal_isa_name(isa); }

static void count_name(size_t n, char *out, size_t size)
{
    if (n >= 1000000 && n % 1000000 == 0)
        snprintf(out, size, "%zum", n / 1000000);
    else if (n >= 1024 && n % 1024 == 0)
        snprintf(out, size, "%zuk", n / 1024);
    else if (n >= 1000 && n % 1000 == 0)
        snprintf(out, size, "%zuk", n / 1000);
    else
        snprintf(out, size, "%zu", n);
}

static void add_case(bench_ctx *b, bench_case c, const char *scene_name)
{
    if (b->case_count >= MAX_CASES)
        return;
    if (c.scene == SC_RENDER)
        snprintf(c.name, sizeof c.name, "render/%s-%s/t%d/%s", scene_name, c.lod ? "lod" : "nolod",
                 c.threads, isa_short(c.isa));
    else
        snprintf(c.name, sizeof c.name, "sim/%s/t%d/%s", scene_name, c.threads, isa_short(c.isa));
    if (b->filter && !strstr(c.name, b->filter))
        return;
    b->cases[b->case_count++] = c;
}

static void build_matrix(bench_ctx *b)
{
    shoal_isa best = b->isas[b->isa_count - 1];
    int tmax = b->max_threads;
    bench_case c;
    if (b->tiny) {
        memset(&c, 0, sizeof c);
        c.scene = SC_TINY;
        c.model = app_default_model();
        c.n = 4096;
        c.threads = tmax;
        c.isa = best;
        char tn[64];
        snprintf(tn, sizeof tn, "%s-tiny", shoal_model_name(c.model));
        add_case(b, c, tn);
        memset(&c, 0, sizeof c);
        c.scene = SC_RENDER;
        c.n = 2000;
        c.threads = tmax;
        c.isa = best;
        c.lod = 1;
        c.render_w = 320;
        c.render_h = 180;
        add_case(b, c, "2000-320x180");
        return;
    }
    struct {
        scene_id id;
        size_t n;
        const char *name;
    } sims[] = {{SC_STEER_16K, 16384, "16k"},
                {SC_STEER_131K, 131072, "131k"},
                {SC_STEER_1M, 1000000, "1m"}};
    /* the anchors are the library's default model (steer), named after it: steer-16k ... */
    const shoal_model anchor = app_default_model();
    for (size_t s = 0; s < sizeof sims / sizeof sims[0]; s++)
        for (int ti = 0; ti < b->thread_count; ti++)
            for (int ii = 0; ii < b->isa_count; ii++) {
                memset(&c, 0, sizeof c);
                c.scene = sims[s].id;
                c.model = anchor;
                c.n = sims[s].n;
                c.threads = b->threads[ti];
                c.isa = b->isas[ii];
                if (b->quick) {
                    /* the anchors: best ISA; 16k on 1 and all threads, the others on all */
                    if (c.isa != best)
                        continue;
                    if (c.threads != tmax && !(s == 0 && c.threads == 1))
                        continue;
                }
                char an[64];
                snprintf(an, sizeof an, "%s-%s", shoal_model_name(anchor), sims[s].name);
                add_case(b, c, an);
            }
    if (!b->quick)
        for (int m = 0; m < SHOAL_MODEL_COUNT; m++)
            for (int ti = 0; ti < b->thread_count; ti++)
                for (int ii = 0; ii < b->isa_count; ii++) {
                    memset(&c, 0, sizeof c);
                    c.scene = SC_MODEL_DEF;
                    c.model = (shoal_model)m;
                    c.n = shoal_model_default_count(c.model);
                    c.threads = b->threads[ti];
                    c.isa = b->isas[ii];
                    char nm[64], cn[24];
                    count_name(c.n, cn, sizeof cn);
                    snprintf(nm, sizeof nm, "%s-default-%s", shoal_model_name(c.model), cn);
                    add_case(b, c, nm);
                }
    size_t counts[] = {10000, 100000, 1000000};
    const char *cnames[] = {"10k", "100k", "1m"};
    for (int k = 0; k < 3; k++)
        for (int lod = 0; lod < 2; lod++)
            for (int ti = 0; ti < b->thread_count; ti++)
                for (int ii = 0; ii < b->isa_count; ii++) {
                    memset(&c, 0, sizeof c);
                    c.scene = SC_RENDER;
                    c.n = counts[k];
                    c.threads = b->threads[ti];
                    c.isa = b->isas[ii];
                    c.lod = lod;
                    c.render_w = 1280;
                    c.render_h = 720;
                    if (b->quick && !(k == 1 && lod == 1 && c.threads == tmax && c.isa == best))
                        continue;
                    add_case(b, c, cnames[k]);
                }
}

/* ---- scenes ----------------------------------------------------------------------------- */

static int scene_slot(const bench_case *c)
{
    if (c->scene == SC_MODEL_DEF)
        return 3 + (int)c->model;                   /* 3..7 */
    return c->scene == SC_TINY ? 8 : (int)c->scene; /* 0..2, 8 */
}

/* The start state and desc of a sim scene (built once, shared by its cases). */
static int get_scene(bench_ctx *b, const bench_case *c, const float **rows, shoal_sim_desc *desc,
                     char *err, size_t err_size)
{
    int slot = scene_slot(c);
    if (b->rows[slot] && b->rows_n[slot] == c->n) {
        *rows = b->rows[slot];
        *desc = b->descs[slot];
        return 0;
    }
    free(b->rows[slot]);
    b->rows[slot] = NULL;
    shoal_sim_desc d = shoal_sim_desc_default();
    d.model = c->model;
    shoal_params_default(d.model, &d.params);
    d.boid_count = c->n;
    float *r = NULL;
    shoal_error e;
    int warm_steps = 0;
    if (c->scene == SC_STEER_1M || c->scene == SC_STEER_131K || c->scene == SC_TINY) {
        /* uniform at density 0.5: side = (2 N)^(1/3): 126 for 1M, 64 for 131072 */
        float side = c->scene == SC_STEER_1M ? 126.0f : c->scene == SC_STEER_131K ? 64.0f : 20.0f;
        for (int k = 0; k < 3; k++) {
            d.params.wall_center[k] = 0.0f;
            d.params.wall_size[k] = side;
        }
        r = scene_uniform(c->n, side / 2, 1.0f, 7);
    } else {
        warm_steps = c->scene == SC_STEER_16K ? 600 : 30;
    }
    if (!r && (c->scene == SC_STEER_16K || c->scene == SC_MODEL_DEF)) {
        /* the model's own initial state, then warm-up steps on all threads */
        d.thread_count = 0;
        d.isa = SHOAL_ISA_AUTO;
        shoal_sim *s;
        if (shoal_sim_create(&d, &s, &e)) {
            snprintf(err, err_size, "%s", e.message);
            return 1;
        }
        /* from the default desc's seed, 1 */
        if (shoal_sim_draw_state(s, &e)) {
            snprintf(err, err_size, "%s", e.message);
            shoal_sim_destroy(s);
            return 1;
        }
        if (warm_steps) {
            fprintf(stderr, "bench: preparing %s (%d steps of %zu boids)...\n",
                    shoal_model_name(d.model), warm_steps, c->n);
            if (shoal_sim_step(s, warm_steps, &e)) {
                snprintf(err, err_size, "%s", e.message);
                shoal_sim_destroy(s);
                return 1;
            }
        }
        r = malloc(c->n * 6 * sizeof(float));
        if (r && shoal_sim_get_rows(s, r, c->n, &e)) {
            snprintf(err, err_size, "%s", e.message);
            shoal_sim_destroy(s);
            free(r);
            return 1;
        }
        d.t0_s = shoal_sim_time(s);
        shoal_sim_destroy(s);
    }
    if (!r) {
        snprintf(err, err_size, "out of memory building the scene of %zu boids", c->n);
        return 1;
    }
    b->rows[slot] = r;
    b->rows_n[slot] = c->n;
    b->descs[slot] = d;
    *rows = r;
    *desc = d;
    return 0;
}

/* ---- statistics ------------------------------------------------------------------------- */

static void summarize(double *ms, int n, bench_result *r)
{
    double *tmp = malloc((size_t)n * 2 * sizeof(double));
    if (!tmp)
        return;
    memcpy(tmp, ms, (size_t)n * sizeof(double));
    r->min_ms = r->max_ms = ms[0];
    for (int i = 0; i < n; i++) {
        r->min_ms = ms[i] < r->min_ms ? ms[i] : r->min_ms;
        r->max_ms = ms[i] > r->max_ms ? ms[i] : r->max_ms;
    }
    r->median_ms = shoal_profile_median(tmp, (size_t)n);
    r->mad_ms = shoal_profile_mad(ms, (size_t)n, r->median_ms, tmp + n);
    r->repeats = n;
    free(tmp);
}

/* ---- running a case --------------------------------------------------------------------- */

/* The plain-grid yardstick of issue 40 (a program outside shoal, e.g. the shared
 * baselines' plaingrid.cpp built): `PROGRAM -n N -s STEPS -w 2` with OMP_NUM_THREADS=T in
 * its environment, its stdout read for `total_ms_med=MS` (its median step: sort + pass) and
 * `nb_per_pt=K`. 0 and *ms > 0 on success; else a one-line reason in err. */
static int run_plain_grid(const char *prog, size_t n, int threads, int steps, double *ms,
                          double *neighbours, char *err, size_t err_size)
{
    char a_n[32], a_s[16], env_t[40];
    snprintf(a_n, sizeof a_n, "%zu", n);
    snprintf(a_s, sizeof a_s, "%d", steps);
    snprintf(env_t, sizeof env_t, "OMP_NUM_THREADS=%d", threads);
    char *argv[] = {(char *)prog, "-n", a_n, "-s", a_s, "-w", "2", NULL};
    size_t env_n = 0;
    while (environ && environ[env_n])
        env_n++;
    char **envp = malloc((env_n + 2) * sizeof *envp);
    int fd[2];
    if (!envp || pipe(fd) != 0) {
        free(envp);
        snprintf(err, err_size, "plain grid: cannot start %s (out of memory or pipes)", prog);
        return 1;
    }
    size_t k = 0;
    for (size_t i = 0; i < env_n; i++)
        if (strncmp(environ[i], "OMP_NUM_THREADS=", 16) != 0)
            envp[k++] = environ[i];
    envp[k++] = env_t;
    envp[k] = NULL;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) { /* the child: only async-signal-safe calls until exec */
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        execve(prog, argv, envp);
        _exit(127);
    }
    close(fd[1]);
    free(envp);
    if (pid < 0) {
        close(fd[0]);
        snprintf(err, err_size, "plain grid: cannot fork to run %s", prog);
        return 1;
    }
    char out[4096];
    size_t len = 0;
    for (;;) { /* keep the first 4 KiB, drain the rest */
        char tmp[1024];
        ssize_t got = read(fd[0], tmp, sizeof tmp);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        size_t take = (size_t)got < sizeof out - 1 - len ? (size_t)got : sizeof out - 1 - len;
        memcpy(out + len, tmp, take);
        len += take;
    }
    out[len] = 0;
    close(fd[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 127) {
        snprintf(err, err_size, "plain grid: cannot run %s", prog);
        return 1;
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        snprintf(err, err_size, "plain grid: %s %s %d", prog,
                 WIFEXITED(st) ? "exited with status" : "killed by signal",
                 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
        return 1;
    }
    const char *t = strstr(out, "total_ms_med=");
    char *end = NULL;
    *ms = t ? strtod(t + 13, &end) : 0;
    if (!t || end == t + 13 || !(*ms > 0) || !isfinite(*ms)) {
        snprintf(err, err_size, "plain grid: %s printed no total_ms_med=MS (a time > 0)", prog);
        return 1;
    }
    const char *nb = strstr(out, "nb_per_pt=");
    *neighbours = nb ? strtod(nb + 10, NULL) : NAN;
    return 0;
}

static void run_sim_case(bench_ctx *b, bench_result *r)
{
    const bench_case *c = &r->c;
    const float *rows;
    shoal_sim_desc d;
    if (get_scene(b, c, &rows, &d, r->error, sizeof r->error))
        return;
    d.thread_count = c->threads;
    d.isa = c->isa;
    shoal_sim *s;
    shoal_error e;
    if (shoal_sim_create(&d, &s, &e) || shoal_sim_set_rows(s, rows, c->n, &e)) {
        snprintf(r->error, sizeof r->error, "%s", e.message);
        if (s)
            shoal_sim_destroy(s);
        return;
    }
    /* warm-up: 2 steps (page faults, caches, thread team), timed to calibrate */
    uint64_t t0 = shoal_profile_now_ns();
    if (shoal_sim_step(s, 2, &e)) {
        snprintf(r->error, sizeof r->error, "%s", e.message);
        shoal_sim_destroy(s);
        return;
    }
    double step_s = (double)(shoal_profile_now_ns() - t0) * 1e-9 / 2;
    long per = (long)ceil(b->target_s / (step_s > 1e-7 ? step_s : 1e-7));
    per = per < 1 ? 1 : per > 2000 ? 2000 : per;
    /* the candidate pairs change as the school moves: count them at both ends of the timed
     * steps and use the mean */
    double lp0, up0;
    shoal_sim_candidate_pairs(s, &lp0, &up0);
    double ms[1000];
    int reps = b->repeat;
    shoal_profile *prof = shoal_sim_get_profile(s);
    shoal_profile_clear(prof); /* the warm-up steps are not counted */
    for (int k = 0; k < reps; k++) {
        /* every repeat times the same steps from the same state (a school keeps changing) */
        shoal_sim_set_rows(s, rows, c->n, &e); /* rows that passed once */
        shoal_sim_sort(s); /* untimed: into cell order, as a running simulation is */
        t0 = shoal_profile_now_ns();
        if (shoal_sim_step(s, (int)per, &e)) {
            snprintf(r->error, sizeof r->error, "%s", e.message);
            shoal_sim_destroy(s);
            return;
        }
        ms[k] = (double)(shoal_profile_now_ns() - t0) * 1e-6 / (double)per;
    }
    summarize(ms, reps, r);
    r->per_repeat = per;
    shoal_profile_summary sum[SHOAL_PROFILE_MAX_STAGES];
    int ns = shoal_profile_get_summaries(prof, sum, SHOAL_PROFILE_MAX_STAGES);
    double steps_total = (double)per * reps;
    for (int k = 0; k < ns; k++)
        if (sum[k].id >= SHOAL_PROFILE_SIM_BASE &&
            sum[k].id < SHOAL_PROFILE_SIM_BASE + SHOAL_SIM_STAGE_COUNT) {
            r->stage_median_ms[sum[k].id - SHOAL_PROFILE_SIM_BASE] = sum[k].median_ms;
            if (sum[k].id == SHOAL_PROFILE_SIM_BASE + SHOAL_SIM_STAGE_FORCES) {
                r->thread_busy_min_ms = sum[k].thread_min_ms / steps_total;
                r->thread_busy_max_ms = sum[k].thread_max_ms / steps_total;
            }
        }
    shoal_sim_candidate_pairs(s, &r->lane_pairs, &r->useful_pairs);
    if (c->scene == SC_STEER_1M || c->scene == SC_STEER_131K || c->scene == SC_TINY) {
        /* the baseline on the same start positions and thread count, right after */
        float side = d.params.wall_size[0];
        float lo[3] = {-side / 2, -side / 2, -side / 2}, size[3] = {side, side, side};
        baseline_result br;
        if (baseline_grid_time(rows, 6, c->n, lo, size, baseline_grid_radius(0.5, 30.0), c->threads,
                               reps, &br) == 0) {
            r->baseline_ms = br.median_ms;
            r->baseline_sort_ms = br.sort_ms;
            r->baseline_neighbours = br.mean_neighbours;
            r->baseline_avx2 = br.avx2;
            r->baseline_ratio = br.median_ms > 0 ? r->median_ms / br.median_ms : 0;
        }
        /* the outside yardstick, same N and threads, right after (--plain-grid) */
        if (b->plain_grid &&
            run_plain_grid(b->plain_grid, c->n, c->threads, reps, &r->plain_ms,
                           &r->plain_neighbours, r->plain_error, sizeof r->plain_error) == 0) {
            r->plain_ratio = r->median_ms / r->plain_ms;
            r->plain_baseline_ratio = r->baseline_ms > 0 ? r->baseline_ms / r->plain_ms : 0;
        }
    }
    r->lane_pairs = 0.5 * (r->lane_pairs + lp0);
    r->useful_pairs = 0.5 * (r->useful_pairs + up0);
    r->sort_ms = r->stage_median_ms[SHOAL_SIM_STAGE_ASSIGN] +
                 r->stage_median_ms[SHOAL_SIM_STAGE_SCAN] +
                 r->stage_median_ms[SHOAL_SIM_STAGE_SCATTER];
    if (r->sort_ms > 0) {
        r->sort_gbs = SORT_BYTES_PER_BOID * (double)c->n / (r->sort_ms * 1e-3) * 1e-9;
        /* the bandwidth of this many threads: 1-thread copy x threads, at most the
         * all-thread copy */
        double bw = b->copy[0] * c->threads;
        bw = b->copy[1] > 0 && (bw > b->copy[1] || c->threads >= b->max_threads) ? b->copy[1] : bw;
        r->copy_gbs = bw;
        r->copy_fraction = bw > 0 ? r->sort_gbs / bw : 0;
    }
    double forces_s = r->stage_median_ms[SHOAL_SIM_STAGE_FORCES] * 1e-3;
    if (forces_s > 0) {
        r->pairs_per_s = r->lane_pairs / forces_s;
        r->pairs_per_s_per_core = r->pairs_per_s / c->threads;
        r->gflops = r->pairs_per_s * FLOPS_PER_PAIR * 1e-9;
        /* the kernels cannot use FMA (-ffp-contract=off): their ceiling is add+mul */
        int kind = c->isa == SHOAL_ISA_AVX512 ? PEAK_AVX512_ADDMUL
                   : c->isa == SHOAL_ISA_AVX2 ? PEAK_AVX2_ADDMUL
                                              : -1;
        if (kind >= 0) {
            double peak_all = b->peak[kind][1], peak_1 = b->peak[kind][0];
            /* per-core peak x threads (more threads than cores: the all-core peak) */
            double peak = c->threads >= b->max_threads ? peak_all : peak_1 * c->threads;
            r->peak_gflops = peak;
            r->peak_fraction = peak > 0 ? r->gflops / peak : 0;
        }
    }
    r->ok = 1;
    shoal_sim_destroy(s);
}

static void run_render_case(bench_ctx *b, bench_result *r)
{
    const bench_case *c = &r->c;
    /* the issue-4 scene, the same as `shoal render --bench` (seed 1), as SoA */
    float *rows = scene_render_bench(c->n, 1);
    float *soa = malloc((c->n ? c->n : 1) * 6 * sizeof(float));
    if (!rows || !soa) {
        free(rows);
        free(soa);
        snprintf(r->error, sizeof r->error, "out of memory for %zu fish", c->n);
        return;
    }
    for (size_t i = 0; i < c->n; i++)
        for (int k = 0; k < 6; k++)
            soa[(size_t)k * c->n + i] = rows[i * 6 + (size_t)k];
    free(rows);
    shoal_render_instances inst = {c->n,
                                   soa,
                                   soa + c->n,
                                   soa + 2 * c->n,
                                   soa + 3 * c->n,
                                   soa + 4 * c->n,
                                   soa + 5 * c->n,
                                   NULL,
                                   NULL,
                                   NULL,
                                   NULL};
    shoal_render_desc d = shoal_render_desc_default();
    d.width = c->render_w;
    d.height = c->render_h;
    d.shade = SHOAL_SHADE_LIT;
    d.lod = c->lod;
    d.fish_length = 1.5f;
    d.isa = c->isa;
    d.thread_count = c->threads;
    shoal_camera cam = shoal_camera_default();
    cam.eye[0] = 0, cam.eye[1] = 0, cam.eye[2] = 75;
    cam.target[0] = cam.target[1] = cam.target[2] = 0;
    cam.fov_deg = 60;
    shoal_renderer *rd = NULL;
    shoal_error e;
    if (app_render_create(&d, NULL, NULL, &rd, &e)) {
        snprintf(r->error, sizeof r->error, "%s", e.message);
        free(soa);
        return;
    }
    uint64_t t0 = shoal_profile_now_ns();
    int ok = !shoal_render_frame(rd, &inst, &cam, &e) && !shoal_render_frame(rd, &inst, &cam, &e);
    double frame_s = (double)(shoal_profile_now_ns() - t0) * 1e-9 / 2;
    long per = (long)ceil(b->target_s / (frame_s > 1e-7 ? frame_s : 1e-7));
    per = per < 1 ? 1 : per > 1000 ? 1000 : per;
    double ms[1000];
    shoal_profile *prof = shoal_render_get_profile(rd);
    shoal_profile_clear(prof); /* the warm-up frames are not counted */
    for (int k = 0; ok && k < b->repeat; k++) {
        double total = 0;
        for (long f = 0; ok && f < per; f++) {
            uint64_t a = shoal_profile_now_ns();
            ok = !shoal_render_frame(rd, &inst, &cam, &e);
            uint64_t z = shoal_profile_now_ns();
            total += (double)(z - a); /* the renderer records its stages itself */
        }
        ms[k] = total * 1e-6 / (double)per;
    }
    if (!ok) {
        snprintf(r->error, sizeof r->error, "%s", e.message);
    } else {
        summarize(ms, b->repeat, r);
        r->per_repeat = per;
        shoal_profile_summary sum[SHOAL_PROFILE_MAX_STAGES];
        int ns = shoal_profile_get_summaries(prof, sum, SHOAL_PROFILE_MAX_STAGES);
        for (int k = 0; k < ns; k++)
            if (sum[k].id >= SHOAL_PROFILE_RENDER_BASE && sum[k].id < SHOAL_PROFILE_RENDER_BASE + 4)
                r->render_stage_ms[sum[k].id - SHOAL_PROFILE_RENDER_BASE] = sum[k].median_ms;
        shoal_render_stats st = shoal_render_get_stats(rd);
        r->triangles_rasterized = (double)st.triangles_rasterized;
        r->pixels_written = (double)st.pixels_written;
        r->ok = 1;
    }
    shoal_render_destroy(rd);
    free(soa);
}

/* ---- machine ---------------------------------------------------------------------------- */

static const char *env_or_null(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static void print_machine(const bench_ctx *b, FILE *f)
{
    fprintf(f, "# machine: %s, %d logical CPUs, ISAs:", shoal_system_cpu_model(),
            shoal_system_cpu_count());
    for (int i = 0; i < b->isa_count; i++)
        fprintf(f, " %s", shoal_isa_name(b->isas[i]));
    const char *wp = env_or_null("OMP_WAIT_POLICY"), *pb = env_or_null("OMP_PROC_BIND"),
               *nt = env_or_null("OMP_NUM_THREADS");
    fprintf(f, "\n# OMP_WAIT_POLICY=%s OMP_PROC_BIND=%s OMP_NUM_THREADS=%s; %s, %s build\n",
            wp ? wp : "(unset)", pb ? pb : "(unset)", nt ? nt : "(unset)",
#ifdef __clang__
            "clang " __clang_version__,
#else
            "gcc " __VERSION__,
#endif
            SHOAL_BUILDTYPE);
    const char *sd = env_or_null("SHOAL_OMP_DEFAULT"), *sc = env_or_null("GOMP_SPINCOUNT");
    if (sc)
        fprintf(f, "# GOMP_SPINCOUNT=%s\n", sc);
    char wait[256];
    shoal_system_wait_in_effect(wait, sizeof wait);
    fprintf(f, "# OpenMP runtime %s; wait: %s\n", shoal_system_openmp_runtime(), wait);
    if (sd && !(wp && strcmp(wp, "passive") != 0))
        fprintf(
            f,
            "# wait policy chosen by shoal (neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT set): %s\n",
            sd);
    if (b->peak[PEAK_AVX512_FMA][1] > 0 || b->peak[PEAK_AVX2_FMA][1] > 0)
        fprintf(f,
                "# FP32 peak GFLOP/s (1 / %d threads): avx2 fma %.0f / %.0f, add+mul %.0f / %.0f;"
                " avx512 fma %.0f / %.0f, add+mul %.0f / %.0f\n",
                b->max_threads, b->peak[0][0], b->peak[0][1], b->peak[2][0], b->peak[2][1],
                b->peak[1][0], b->peak[1][1], b->peak[3][0], b->peak[3][1]);
    if (b->copy[1] > 0)
        fprintf(f, "# copy bandwidth GB/s, read + write (1 / %d threads): %.1f / %.1f\n",
                b->max_threads, b->copy[0], b->copy[1]);
}

static int write_json(const bench_ctx *b, const bench_result *res, int n, const char *path,
                      shoal_error *e)
{
    shoal_atomic_file af;
    if (shoal_io_atomic_open(&af, path, e))
        return 1;
    FILE *f = af.file;
    char date[64];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    fprintf(f, "{\n  \"schema\": \"shoal-bench/1\",\n  \"shoal_version\": \"%s\",\n",
            SHOAL_VERSION_STRING);
    fprintf(f, "  \"date\": \"%s\",\n  \"machine\": {\n    \"cpu_model\": ", date);
    json_write_string(f, shoal_system_cpu_model());
    fprintf(f, ",\n    \"cores\": %d,\n    \"isa\": [", shoal_system_cpu_count());
    for (int i = 0; i < b->isa_count; i++)
        fprintf(f, "%s\"%s\"", i ? ", " : "", shoal_isa_name(b->isas[i]));
    fprintf(f, "],\n    \"omp\": {\"OMP_WAIT_POLICY\": ");
    json_write_string(f, env_or_null("OMP_WAIT_POLICY"));
    fprintf(f, ", \"OMP_PROC_BIND\": ");
    json_write_string(f, env_or_null("OMP_PROC_BIND"));
    fprintf(f, ", \"OMP_NUM_THREADS\": ");
    json_write_string(f, env_or_null("OMP_NUM_THREADS"));
    fprintf(f, ", \"GOMP_SPINCOUNT\": ");
    json_write_string(f, env_or_null("GOMP_SPINCOUNT"));
    fprintf(f, ", \"shoal_default\": ");
    json_write_string(f, env_or_null("SHOAL_OMP_DEFAULT"));
    char wait[256];
    shoal_system_wait_in_effect(wait, sizeof wait);
    fprintf(f, ", \"runtime\": ");
    json_write_string(f, shoal_system_openmp_runtime());
    fprintf(f, ", \"wait\": ");
    json_write_string(f, wait);
    fprintf(f, "},\n    \"compiler\": ");
#ifdef __clang__
    json_write_string(f, "clang " __clang_version__);
#else
    json_write_string(f, "gcc " __VERSION__);
#endif
    fprintf(f, ",\n    \"build_type\": \"%s\",\n    \"peak_gflops\": {", SHOAL_BUILDTYPE);
    static const char *kinds[4] = {"avx2_fma", "avx512_fma", "avx2_addmul", "avx512_addmul"};
    for (int k = 0; k < 4; k++) {
        fprintf(f, "%s\"%s\": {\"1\": ", k ? ", " : "", kinds[k]);
        json_write_number(f, b->peak[k][0], 6);
        fprintf(f, ", \"%d\": ", b->max_threads);
        json_write_number(f, b->peak[k][1], 6);
        fputc('}', f);
    }
    fprintf(f, "},\n    \"copy_gbs\": {\"1\": ");
    json_write_number(f, b->copy[0] > 0 ? b->copy[0] : NAN, 6);
    fprintf(f, ", \"%d\": ", b->max_threads);
    json_write_number(f, b->copy[1] > 0 ? b->copy[1] : NAN, 6);
    fprintf(f,
            "}\n  },\n  \"options\": {\"quick\": %s, \"tiny\": %s, \"repeat\": %d, "
            "\"filter\": ",
            b->quick ? "true" : "false", b->tiny ? "true" : "false", b->repeat);
    json_write_string(f, b->filter);
    fprintf(f, "},\n  \"results\": [");
    int first = 1;
    for (int i = 0; i < n; i++) {
        const bench_result *r = &res[i];
        const bench_case *c = &r->c;
        fprintf(f, "%s\n    {\"name\": ", first ? "" : ",");
        first = 0;
        json_write_string(f, c->name);
        int render = c->scene == SC_RENDER;
        fprintf(f, ", \"kind\": \"%s\", \"model\": ", render ? "render" : "sim");
        json_write_string(f, render ? NULL : shoal_model_name(c->model));
        fprintf(f, ", \"n\": %zu, \"threads\": %d, \"isa\": \"%s\", \"ok\": %s", c->n, c->threads,
                shoal_isa_name(c->isa), r->ok ? "true" : "false");
        if (!r->ok) {
            fprintf(f, ", \"error\": ");
            json_write_string(f, r->error);
            fputc('}', f);
            continue;
        }
        fprintf(f, ",\n     \"unit\": \"%s\", \"median_ms\": ", render ? "ms/frame" : "ms/step");
        json_write_number(f, r->median_ms, 6);
        fprintf(f, ", \"min_ms\": ");
        json_write_number(f, r->min_ms, 6);
        fprintf(f, ", \"max_ms\": ");
        json_write_number(f, r->max_ms, 6);
        fprintf(f, ", \"mad_ms\": ");
        json_write_number(f, r->mad_ms, 6);
        fprintf(f, ", \"repeats\": %d, \"per_repeat\": %ld", r->repeats, r->per_repeat);
        if (!render) {
            fprintf(f, ",\n     \"stages_median_ms\": {");
            for (int k = 0; k < SHOAL_SIM_STAGE_COUNT; k++) {
                fprintf(f, "%s\"%s\": ", k ? ", " : "", shoal_sim_stage_name(k));
                json_write_number(f, r->stage_median_ms[k], 6);
            }
            fprintf(f, "}, \"forces_thread_busy_ms\": {\"min\": ");
            json_write_number(f, r->thread_busy_min_ms, 6);
            fprintf(f, ", \"max\": ");
            json_write_number(f, r->thread_busy_max_ms, 6);
            fprintf(f, "},\n     \"lane_pairs\": ");
            json_write_number(f, r->lane_pairs, 6);
            fprintf(f, ", \"useful_pairs\": ");
            json_write_number(f, r->useful_pairs, 6);
            fprintf(f, ", \"lane_pairs_per_boid\": ");
            json_write_number(f, r->lane_pairs / (double)c->n, 6);
            fprintf(f, ", \"useful_fraction\": ");
            json_write_number(f, r->lane_pairs > 0 ? r->useful_pairs / r->lane_pairs : NAN, 6);
            fprintf(f, ",\n     \"sort_ms\": ");
            json_write_number(f, r->sort_ms, 6);
            fprintf(f, ", \"sort_gbs\": ");
            json_write_number(f, r->sort_gbs, 6);
            fprintf(f, ", \"copy_gbs\": ");
            json_write_number(f, r->copy_gbs > 0 ? r->copy_gbs : NAN, 6);
            fprintf(f, ", \"copy_fraction\": ");
            json_write_number(f, r->copy_gbs > 0 ? r->copy_fraction : NAN, 6);
            fprintf(f, ", \"pairs_per_s\": ");
            json_write_number(f, r->pairs_per_s, 6);
            fprintf(f, ", \"pairs_per_s_per_core\": ");
            json_write_number(f, r->pairs_per_s_per_core, 6);
            fprintf(f, ", \"gflops\": ");
            json_write_number(f, r->gflops, 6);
            fprintf(f, ", \"peak_gflops\": ");
            json_write_number(f, r->peak_gflops > 0 ? r->peak_gflops : NAN, 6);
            fprintf(f, ", \"peak_fraction\": ");
            json_write_number(f, r->peak_gflops > 0 ? r->peak_fraction : NAN, 6);
            if (r->baseline_ms > 0) {
                fprintf(f, ",\n     \"baseline\": {\"median_ms\": ");
                json_write_number(f, r->baseline_ms, 6);
                fprintf(f, ", \"sort_ms\": ");
                json_write_number(f, r->baseline_sort_ms, 6);
                fprintf(f, ", \"mean_neighbours\": ");
                json_write_number(f, r->baseline_neighbours, 6);
                fprintf(f, ", \"isa\": \"%s\", \"ratio\": ", r->baseline_avx2 ? "avx2" : "scalar");
                json_write_number(f, r->baseline_ratio, 6);
                fputc('}', f);
            }
            if (r->plain_ms > 0) {
                fprintf(f, ",\n     \"plain_grid\": {\"median_ms\": ");
                json_write_number(f, r->plain_ms, 6);
                fprintf(f, ", \"mean_neighbours\": ");
                json_write_number(f, r->plain_neighbours, 6);
                fprintf(f, ", \"ratio\": ");
                json_write_number(f, r->plain_ratio, 6);
                fprintf(f, ", \"baseline_ratio\": ");
                json_write_number(f, r->plain_baseline_ratio > 0 ? r->plain_baseline_ratio : NAN,
                                  6);
                fputc('}', f);
            } else if (r->plain_error[0]) {
                fprintf(f, ",\n     \"plain_grid\": {\"error\": ");
                json_write_string(f, r->plain_error);
                fputc('}', f);
            }
        } else {
            static const char *rn[4] = {"instance", "setup", "raster", "resolve"};
            fprintf(f,
                    ", \"lod\": %s, \"width\": %d, \"height\": %d,\n     \"stages_median_ms\": {",
                    c->lod ? "true" : "false", c->render_w, c->render_h);
            for (int k = 0; k < 4; k++) {
                fprintf(f, "%s\"%s\": ", k ? ", " : "", rn[k]);
                json_write_number(f, r->render_stage_ms[k], 6);
            }
            fprintf(f, "}, \"triangles_rasterized\": ");
            json_write_number(f, r->triangles_rasterized, 6);
            fprintf(f, ", \"pixels_written\": ");
            json_write_number(f, r->pixels_written, 6);
        }
        fputc('}', f);
    }
    fprintf(f, "\n  ]\n}\n");
    if (ferror(f)) {
        shoal_io_atomic_abort(&af);
        shoal_error_set(e, SHOAL_ERR_IO, "%s: write failed", path);
        return 1;
    }
    return shoal_io_atomic_commit(&af, e) ? 1 : 0;
}

/* ---- reading a results file (for --compare) ----------------------------------------------- */

static int jload(const char *path, json_value *root, char *err, size_t err_size)
{
    int rc = json_load_file(path, 0, root, err, err_size);
    if (rc == JSON_ERR_IO)
        return 1;
    int bad = rc != JSON_OK;
    const json_value *res = json_get(root, "results");
    if (bad || !res || res->type != JSON_ARRAY) {
        json_free(root);
        snprintf(err, err_size, "%s: not a shoal bench JSON file (%s)", path,
                 bad ? "malformed JSON" : "no \"results\" array");
        return 1;
    }
    /* A time that is not > 0 would print a speedup from nothing (0 or negative medians) or a
     * noise band from nothing: refuse the file, naming the entry. An entry without a median
     * (a case that failed) is skipped by compare(). */
    for (int i = 0; i < res->count; i++) {
        const json_value *name = json_get(&res->items[i], "name");
        const char *key[2] = {"median_ms", "mad_ms"};
        for (int k = 0; k < 2; k++) {
            const json_value *t = json_get(&res->items[i], key[k]);
            if (!t || t->type != JSON_NUMBER ||
                ((k == 0 ? t->num > 0 : t->num >= 0) && isfinite(t->num)))
                continue;
            snprintf(err, err_size, "%s: results[%d] (%s): %s is %g, expected a time %s", path, i,
                     name && name->type == JSON_STRING ? name->str : "no name", key[k], t->num,
                     k == 0 ? "> 0" : ">= 0");
            json_free(root);
            return 1;
        }
    }
    return 0;
}

/* Baseline vs new, per matching name. speedup = base / new; REGRESSION when the new median
 * exceeds the baseline by more than max(3 x combined MAD, 5 % of the baseline). */
static int compare(const json_value *base, const json_value *cur, FILE *f)
{
    const json_value *rb = json_get(base, "results"), *rc = json_get(cur, "results");
    int matched = 0, regressions = 0, faster = 0;
    fprintf(f, "%-40s %11s %11s %8s %10s  %s\n", "case", "base ms", "new ms", "speedup", "noise ms",
            "verdict");
    for (int i = 0; i < rc->count; i++) {
        const json_value *n = json_get(&rc->items[i], "name"),
                         *nm = json_get(&rc->items[i], "median_ms"),
                         *nd = json_get(&rc->items[i], "mad_ms");
        if (!n || n->type != JSON_STRING || !nm || nm->type != JSON_NUMBER)
            continue;
        for (int j = 0; j < rb->count; j++) {
            const json_value *bn = json_get(&rb->items[j], "name"),
                             *bm = json_get(&rb->items[j], "median_ms"),
                             *bd = json_get(&rb->items[j], "mad_ms");
            if (!bn || bn->type != JSON_STRING || strcmp(bn->str, n->str) != 0 || !bm ||
                bm->type != JSON_NUMBER)
                continue;
            double mb = bm->num, mn = nm->num;
            double db = bd && bd->type == JSON_NUMBER ? bd->num : 0;
            double dn = nd && nd->type == JSON_NUMBER ? nd->num : 0;
            double noise = fmax(3.0 * sqrt(db * db + dn * dn), 0.05 * mb);
            const char *verdict = "same (within noise)";
            if (mn - mb > noise) {
                verdict = "REGRESSION";
                regressions++;
            } else if (mb - mn > noise) {
                verdict = "faster";
                faster++;
            }
            fprintf(f, "%-40s %11.4f %11.4f %7.2fx %10.4f  %s\n", n->str, mb, mn,
                    mn > 0 ? mb / mn : 0.0, noise, verdict);
            matched++;
            break;
        }
    }
    fprintf(f, "# %d cases compared: %d regressions, %d faster, %d within the noise\n", matched,
            regressions, faster, matched - regressions - faster);
    return regressions;
}

/* ---- the command ------------------------------------------------------------------------ */

static void print_result(const bench_result *r, FILE *f)
{
    const bench_case *c = &r->c;
    if (!r->ok) {
        fprintf(f, "%-34s  failed: %s\n", c->name, r->error);
        return;
    }
    if (c->scene == SC_RENDER) {
        fprintf(f,
                "%-34s %9.3f %9.3f %9.3f %8.3f %4d  inst %.2f setup %.2f raster %.2f "
                "resolve %.2f ms\n",
                c->name, r->median_ms, r->min_ms, r->max_ms, r->mad_ms, r->repeats,
                r->render_stage_ms[0], r->render_stage_ms[1], r->render_stage_ms[2],
                r->render_stage_ms[3]);
        return;
    }
    fprintf(f, "%-34s %9.3f %9.3f %9.3f %8.3f %4d  forces %.3f ms, %.3g pairs/s/core, %.1f GFLOP/s",
            c->name, r->median_ms, r->min_ms, r->max_ms, r->mad_ms, r->repeats,
            r->stage_median_ms[SHOAL_SIM_STAGE_FORCES], r->pairs_per_s_per_core, r->gflops);
    if (r->peak_gflops > 0)
        fprintf(f, " (%.0f%% of add+mul peak)", 100 * r->peak_fraction);
    fprintf(f, ", %.1f lane-pairs/boid (%.1f%% useful)", r->lane_pairs / (double)c->n,
            r->lane_pairs > 0 ? 100 * r->useful_pairs / r->lane_pairs : 0.0);
    fprintf(f, "; sort %.3f ms", r->sort_ms);
    if (r->copy_gbs > 0)
        fprintf(f, " (%.0f%% of copy)", 100 * r->copy_fraction);
    if (r->baseline_ms > 0)
        fprintf(f, "; baseline %.3f ms (%s), ratio %.2f", r->baseline_ms,
                r->baseline_avx2 ? "avx2" : "scalar", r->baseline_ratio);
    if (r->plain_ms > 0)
        fprintf(f, "; plain grid %.3f ms, ratio %.2f (baseline / plain grid %.2f)", r->plain_ms,
                r->plain_ratio, r->plain_baseline_ratio);
    else if (r->plain_error[0])
        fprintf(f, "; %s", r->plain_error);
    fprintf(f, "\n");
}

int cmd_bench(int argc, char **argv)
{
    opt_values o;
    int rc =
        options_parse(&o, "bench", "[--quick] [--json FILE] [--compare BASELINE.json] [options]",
                      bench_opts, BENCH_OPT_COUNT, 0, argc, argv);
    if (rc)
        return rc == 1 ? 0 : rc;
    if ((rc = options_check_outputs(&o, (const char *const[]){"json", NULL})))
        return rc;
    char err[512];
    if (options_given(&o, "current")) {
        if (!options_given(&o, "compare"))
            return options_fail(&o, "--current needs --compare BASELINE.json");
        json_value base, cur;
        if (jload(options_get(&o, "compare"), &base, err, sizeof err))
            return options_fail(&o, "%s", err);
        if (jload(options_get(&o, "current"), &cur, err, sizeof err)) {
            json_free(&base);
            return options_fail(&o, "%s", err);
        }
        compare(&base, &cur, stdout);
        json_free(&base);
        json_free(&cur);
        return 0;
    }
    bench_ctx *b = calloc(1, sizeof *b);
    if (!b)
        return options_fail(&o, "out of memory");
    b->quick = options_given(&o, "quick");
    b->tiny = options_given(&o, "tiny");
    b->filter = options_get(&o, "filter");
    b->plain_grid = options_get(&o, "plain-grid");
    if (b->plain_grid && access(b->plain_grid, X_OK) != 0) {
        free(b);
        return options_fail(&o, "--plain-grid: %s is not an executable program",
                            options_get(&o, "plain-grid"));
    }
    long long v = b->tiny ? 3 : b->quick ? 5 : 7;
    if (options_given(&o, "repeat") && (rc = options_int(&o, "repeat", 1, 1000, &v))) {
        free(b);
        return rc;
    }
    b->repeat = (int)v;
    b->target_s = b->tiny ? 0.01 : b->quick ? 0.15 : 0.25;
    double peak_s = b->tiny ? 0 : 0.5;
    if (options_given(&o, "peak-seconds") &&
        (rc = options_double(&o, "peak-seconds", 0, 60, &peak_s))) {
        free(b);
        return rc;
    }
    b->max_threads = shoal_system_cpu_count();
    if (options_given(&o, "threads")) {
        char list[256];
        snprintf(list, sizeof list, "%s", options_get(&o, "threads"));
        for (char *s = strtok(list, ","); s && b->thread_count < 16; s = strtok(NULL, ",")) {
            char *end;
            long t = strtol(s, &end, 10);
            if (*end || t < 1 || t > SHOAL_MAX_THREADS) {
                free(b);
                return options_fail(&o, "--threads: '%s' is not a list of counts in 1..%d",
                                    options_get(&o, "threads"), SHOAL_MAX_THREADS);
            }
            b->threads[b->thread_count++] = (int)t;
            if (t > b->max_threads)
                b->max_threads = (int)t;
        }
    } else {
        for (int t = 1; t < b->max_threads && b->thread_count < 15; t *= 2)
            b->threads[b->thread_count++] = t;
        b->threads[b->thread_count++] = b->max_threads;
    }
    shoal_isa all[4] = {SHOAL_ISA_SCALAR, SHOAL_ISA_AVX2, SHOAL_ISA_AVX512, SHOAL_ISA_NEON};
    for (int i = 0; i < 4; i++)
        if (shoal_isa_supported(all[i]))
            b->isas[b->isa_count++] = all[i];
    build_matrix(b);
    if (options_given(&o, "list")) {
        for (int i = 0; i < b->case_count; i++)
            printf("%s\n", b->cases[i].name);
        free(b);
        return 0;
    }
    json_value base;
    int have_base = 0;
    if (options_given(&o, "compare")) {
        if (jload(options_get(&o, "compare"), &base, err, sizeof err)) {
            free(b);
            return options_fail(&o, "%s", err);
        }
        have_base = 1;
    }
    if (b->case_count == 0) {
        if (have_base)
            json_free(&base);
        free(b);
        return options_fail(&o, "no case matches --filter '%s' (see --list)",
                            options_get(&o, "filter") ? options_get(&o, "filter") : "");
    }
    if (peak_s > 0) {
        for (int k = 0; k < 4; k++) {
            b->peak[k][0] = peak_gflops(k, 1, peak_s / 4);
            b->peak[k][1] = peak_gflops(k, b->max_threads, peak_s / 4);
        }
        b->copy[0] = peak_copy_gbs(1, peak_s / 4);
        b->copy[1] = peak_copy_gbs(b->max_threads, peak_s / 4);
    }
    print_machine(b, stdout);
    printf("# %d cases, %d repeats each after warm-up; times per step (sim) or frame (render)\n",
           b->case_count, b->repeat);
    printf("%-34s %9s %9s %9s %8s %4s\n", "case", "median", "min", "max", "MAD", "reps");
    fflush(stdout);
    bench_result *res = calloc((size_t)b->case_count, sizeof *res);
    if (!res) {
        free(b);
        return options_fail(&o, "out of memory");
    }
    for (int i = 0; i < b->case_count; i++) {
        res[i].c = b->cases[i];
        if (b->cases[i].scene == SC_RENDER)
            run_render_case(b, &res[i]);
        else
            run_sim_case(b, &res[i]);
        print_result(&res[i], stdout);
        fflush(stdout);
    }
    rc = 0;
    if (have_base && !rc) {
        /* the results of this run as the reader's tree, compared as a file would be */
        json_value cur;
        memset(&cur, 0, sizeof cur);
        cur.type = JSON_OBJECT;
        cur.count = 1;
        cur.keys = malloc(sizeof(char *));
        cur.items = calloc(1, sizeof(json_value));
        if (cur.keys && cur.items) {
            cur.keys[0] = strdup("results");
            json_value *arr = &cur.items[0];
            arr->type = JSON_ARRAY;
            arr->items = calloc((size_t)b->case_count, sizeof(json_value));
            for (int i = 0; arr->items && i < b->case_count; i++) {
                if (!res[i].ok)
                    continue;
                json_value *it = &arr->items[arr->count++];
                it->type = JSON_OBJECT;
                it->count = 3;
                it->keys = malloc(3 * sizeof(char *));
                it->items = calloc(3, sizeof(json_value));
                if (!it->keys || !it->items) {
                    it->count = 0;
                    continue;
                }
                it->keys[0] = strdup("name");
                it->items[0].type = JSON_STRING;
                it->items[0].str = strdup(res[i].c.name);
                it->keys[1] = strdup("median_ms");
                it->items[1].type = JSON_NUMBER;
                it->items[1].num = res[i].median_ms;
                it->keys[2] = strdup("mad_ms");
                it->items[2].type = JSON_NUMBER;
                it->items[2].num = res[i].mad_ms;
            }
            printf("\n# compared with %s\n", options_get(&o, "compare"));
            compare(&base, &cur, stdout);
        }
        json_free(&cur);
        json_free(&base);
    }
    /* the report is on stdout: the --json file is written only once it was written whole */
    if (app_stdout_check("bench"))
        rc = 2;
    if (!rc && options_given(&o, "json")) {
        shoal_error e;
        if (write_json(b, res, b->case_count, options_get(&o, "json"), &e))
            rc = options_fail(&o, "%s", e.message);
    }
    for (int i = 0; i < 9; i++)
        free(b->rows[i]);
    free(res);
    free(b);
    return rc;
}
