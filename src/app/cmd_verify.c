/* SPDX-License-Identifier: MIT */
/* `shoal verify`: another program's trajectory checked step by step against the rules
 * (shoal/verify.h, docs/VERIFY.md). This file turns the options into the library's calls and
 * prints the verdict lines; the library reads the trajectory (shoal_traj_open: manifests,
 * numbered .npy or .bin files, one (T, N, 6|7) array, ids), verifies it pair by pair
 * (shoal_verify_run) and writes the CSV and JSON reports, as it does for the Python package. */
#include "app/app.h"
#include "app/options.h"
#include "app/outdir.h"
#include "app/traj.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const opt_spec verify_opts[] = {
    {"trajectory", OPT_VALUE, "T", NULL,
     "the other program's states (required): a directory (shoal's trajectory with "
     "manifest.json, or numbered .npy or .bin files) or one .npy of shape (T, N, 6) or (T, N, 7)"},
    {"model", OPT_VALUE, "M", "the manifest's, the scene's, else " OPT_MODEL_DEFAULT,
     APP_MODEL_HELP},
    {"scene", OPT_VALUE, "FILE.ini", NULL, "scene file: model, parameters, obstacles"},
    {"set", OPT_REPEAT, "NAME=VALUE", NULL,
     "set a model or world parameter (periodic=1, world_size=Lx,Ly,Lz, dims=2: docs/WORLD.md)"},
    {"dt", OPT_VALUE, "DT", "the manifest's, the scene's, else 1/60", "time step in seconds"},
    {"t0", OPT_VALUE, "SECONDS", "the manifest's, the scene's, else 0",
     "simulated time of the first state (heading's targets)"},
    {"seed", OPT_VALUE, "S", "the manifest's, the scene's, else 1", "seed of heading's targets"},
    {"reference", OPT_VALUE, "f32|f64", "f32",
     "the step compared with: shoal's float32 step, or the float64 reference (the other "
     "program's own float32 drift)"},
    {"noise", OPT_VALUE, "shoal|outside", "shoal",
     "the noise of vicsek and couzin: shoal's own draws (--seed, compared step by step), or "
     "the other program's own (outside: the noise-free part, the noise's support and its "
     "distribution, docs/VERIFY.md)"},
    {"ids", OPT_VALUE, "FILE.npy", NULL,
     "the id of each row: (N,) for every state or (T, N); rows are matched by id (else by a "
     "7th column, else by row)"},
    {"layout", OPT_VALUE, "vp|pv|S:P:V[:I]", "vp",
     ".bin records: vp (seeds 000/003 BoidData: float3 velocity, float3 position), pv (seed "
     "004 BoidsData: position, velocity), or S 4-byte words with the position at word P, the "
     "velocity at word V and a uint32 id at word I"},
    {"targets", OPT_VALUE, "FILE.npy", NULL,
     "heading: the other program's targets, (K, 3) for every step or (T, K, 3)"},
    {"csv", OPT_VALUE, "OUT.csv", NULL, "a row per step (docs/VERIFY.md)"},
    {"json", OPT_VALUE, "OUT.json", NULL, "the whole report, the worst boids of each step too"},
    {"worst", OPT_VALUE, "K", "8", "worst boids reported per step (1..32)"},
    {"first", OPT_VALUE, "K", "0", "the state to start from (0: the first given)"},
    {"steps", OPT_VALUE, "K", "all", "how many consecutive pairs to verify"},
    {"threads", OPT_VALUE, "T", "0", "worker threads, 0: all cores (no verdict depends on it)"},
    {"quiet", OPT_FLAG, NULL, NULL, "no progress line, no per-boid lines"},
};

/* ---- output ---------------------------------------------------------------------------- */

/* A report built in memory, written only once the whole command has succeeded (CLI.md: a
 * command that fails replaces none of its outputs). */
typedef struct membuf {
    char *data;
    size_t len;
} membuf;

static shoal_status write_membuf(const char *path, const void *ctx, shoal_error *e)
{
    const membuf *m = ctx;
    shoal_atomic_file af;
    shoal_status st = shoal_io_atomic_open(&af, path, e);
    if (st)
        return st;
    if (fwrite(m->data, 1, m->len, (FILE *)af.file) != m->len) {
        int er = errno;
        shoal_io_atomic_abort(&af);
        return shoal_error_set(e, SHOAL_ERR_IO, "%s: write failed: %s", path, strerror(er));
    }
    return shoal_io_atomic_commit(&af, e);
}

/* The verdict line of a step: what it found, in one line. */
static void print_step(const shoal_verify_report *r, long long step, const double *ids, int quiet,
                       const char *ref)
{
    printf("step %lld  t %.6g  pos worst %.3g median %.3g  vel worst %.3g  x tolerance %.3g  "
           "beyond %zu/%zu  ties %zu  (%s): %s",
           step, r->t, r->pos_max, r->pos_median, r->vel_max, r->ratio_max, r->beyond, r->count,
           r->ties, ref, shoal_verdict_name(r->verdict));
    if (r->term != SHOAL_TERM_NONE && r->verdict != SHOAL_VERDICT_AGREES)
        printf(": %s", shoal_term_name(r->term));
    printf(" -- %s\n", r->detail);
    if (quiet || r->verdict == SHOAL_VERDICT_AGREES)
        return;
    int show = r->worst_count < 3 ? r->worst_count : 3;
    for (int w = 0; w < show; w++) {
        const shoal_verify_boid *b = &r->worst[w];
        double id = ids ? ids[b->row] : (double)b->row;
        printf("    boid %.0f: pos err %.3g (tolerance %.3g, tie %.3g), vel err %.3g (tolerance "
               "%.3g)",
               id, b->pos_err, b->pos_tol, b->pos_tie, b->vel_err, b->vel_tol);
        if (b->explained_by != SHOAL_TERM_NONE)
            printf("; %s explains it", shoal_term_name(b->explained_by));
        if (b->tie_term != SHOAL_TERM_NONE) {
            if (b->tie_row >= 0)
                printf("; neighbour %.0f within rounding of the %s threshold",
                       ids ? ids[b->tie_row] : (double)b->tie_row, shoal_term_name(b->tie_term));
            else
                printf("; within rounding of the %s threshold", shoal_term_name(b->tie_term));
        } else {
            printf("; no neighbour within rounding of a threshold");
        }
        printf("\n");
    }
}

/* ---- the command -------------------------------------------------------------------------- */

/* The model, parameters, dt, t0 and seed: defaults < the manifest < the scene < options
 * (shoal_traj_verify_desc, then --set, --dt, --t0, --seed). */
static int verify_desc(const opt_values *o, const shoal_traj *t, shoal_sim_desc *d,
                       shoal_scene *scene)
{
    shoal_error e;
    shoal_model m;
    int rc = app_scene_model(o, scene, &m);
    if (rc)
        return rc;
    const char *scene_path = options_get(o, "scene");
    if (shoal_traj_verify_desc(t, scene_path ? scene : NULL, options_given(o, "model"), m, d, &e))
        return app_fail_status(o, &e);
    if ((rc = app_set_params(o, d)))
        return rc;
    if (options_given(o, "dt")) {
        if ((rc = options_double(o, "dt", 1e-12, 1e6, &d->dt_s)))
            return rc;
    }
    if (options_given(o, "t0") && (rc = options_double(o, "t0", -1e15, 1e15, &d->t0_s)))
        return rc;
    long long seed = (long long)d->seed;
    if (options_given(o, "seed") && (rc = options_int(o, "seed", 0, 9223372036854775807LL, &seed)))
        return rc;
    d->seed = (uint64_t)seed;
    if (shoal_params_validate(d->model, &d->params, &e))
        return app_fail_status(o, &e);
    return 0;
}

/* What each verified pair does here: its verdict line, its CSV row and JSON entry (into
 * memory: the files are written once the whole command succeeded), the progress line. */
typedef struct run_ctx {
    const opt_values *o;
    const char *ref_name;
    FILE *csv, *js;
    size_t done, pairs;
    progress *pg;
    const shoal_verify_run_desc *rd;
} run_ctx;

static int on_step(void *p, const shoal_verify_report *r, int64_t step, const double *ids)
{
    run_ctx *c = p;
    if (c->done == 0) /* the run's line, once the first state told the count */
        printf("shoal verify: %s, %zu boids, %zu step%s from state %zu, reference %s "
               "(tolerance: the float32 rounding bound of each boid's step, docs/VERIFY.md)\n",
               shoal_model_name(c->rd->verify.sim.model), r->count, c->pairs,
               c->pairs == 1 ? "" : "s", c->rd->first,
               c->rd->verify.reference == SHOAL_VERIFY_F32 ? "float32 (shoal's step)" : "float64");
    print_step(r, step, ids, options_given(c->o, "quiet"), c->ref_name);
    if (c->csv)
        shoal_verify_write_csv_row(c->csv, r, step);
    if (c->js)
        shoal_verify_write_json_step(c->js, r, step, ids, c->done);
    c->done++;
    progress_update(c->pg, (long long)c->done, 0);
    return 0;
}

/* --noise outside: every pair through the noise check (shoal/verify.h), one verdict for
 * the run; the CSV is one row of its figures, the JSON one object. Exit 1 when a part
 * differs. */
static int run_outside(const opt_values *o, shoal_traj *t, const shoal_verify_run_desc *rd,
                       const char *path)
{
    shoal_error e;
    shoal_noise_check *nc = NULL;
    size_t total = shoal_traj_frame_count(t), first = rd->first;
    size_t pairs = first + 1 < total ? total - 1 - first : 0;
    if (rd->steps && rd->steps < pairs)
        pairs = rd->steps;
    if (pairs == 0) {
        shoal_error_set(&e, SHOAL_ERR_INPUT, "first %zu: the trajectory has %zu states", first,
                        total);
        return app_fail_status(o, &e);
    }
    double *a = NULL, *b = NULL;
    size_t n = 0, nb = 0;
    shoal_sim_desc sd = rd->verify.sim;
    shoal_status st = shoal_traj_read(t, first, &a, &n, &e);
    if (!st) {
        sd.boid_count = n;
        st = shoal_noise_check_create(&sd, &nc, &e);
    }
    if (!st)
        printf("shoal verify: %s, %zu boids, %zu step%s from state %zu, noise outside (the "
               "other program's own draws: the noise-free part against the float64 reference "
               "with noise 0, the noise's support, its distribution by KS, docs/VERIFY.md)\n",
               shoal_model_name(sd.model), n, pairs, pairs == 1 ? "" : "s", first);
    progress pg;
    progress_begin(&pg, "shoal verify", (long long)pairs, options_given(o, "quiet"));
    for (size_t k = 0; !st && k < pairs; k++) {
        if ((st = shoal_traj_read(t, first + k + 1, &b, &nb, &e)))
            break;
        st = shoal_noise_check_step(nc, a, b, &e);
        free(a);
        a = b;
        b = NULL;
        progress_update(&pg, (long long)k + 1, 0);
    }
    progress_end(&pg);
    free(a);
    free(b);
    shoal_noise_result r;
    memset(&r, 0, sizeof r);
    int exit_rc = 0;
    if (!st) {
        shoal_noise_check_result(nc, &r);
        printf("noise: %zu steps, %zu samples (%zu at the turn limit), KS D %.6g p %.6g, "
               "chi-square %.6g (19 dof) p %.6g, residual mean %.6g sd %.6g rad (expected %.6g "
               "sd %.6g)\n",
               r.steps, r.samples, r.limited, r.ks_d, r.ks_p, r.chi2, r.chi2_p, r.resid_mean,
               r.resid_sd, r.expect_mean, r.expect_sd);
        printf("summary: noise outside: verdict: %s: %s\n", r.part ? "rule differs" : "agrees",
               r.detail);
        exit_rc = r.part ? 1 : 0;
    }
    /* the reports in memory, then staged: a command that fails replaces none of its outputs */
    membuf bufs[2] = {{NULL, 0}, {NULL, 0}};
    const char *outs[2] = {options_get(o, "csv"), options_get(o, "json")};
    for (int w = 0; !st && w < 2; w++) {
        if (!outs[w])
            continue;
        FILE *f = open_memstream(&bufs[w].data, &bufs[w].len);
        if (!f) {
            st = shoal_error_set(&e, SHOAL_ERR_NOMEM, "out of memory for the reports");
            break;
        }
        if (w == 0) {
            fprintf(f, "steps,samples,limited,ks_d,ks_p,chi2,chi2_p,resid_mean,resid_sd,"
                       "expect_mean,expect_sd,verdict,part,beyond\n");
            fprintf(f, "%zu,%zu,%zu,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%s,%s,%zu\n", r.steps,
                    r.samples, r.limited, r.ks_d, r.ks_p, r.chi2, r.chi2_p, r.resid_mean,
                    r.resid_sd, r.expect_mean, r.expect_sd, r.part ? "rule differs" : "agrees",
                    shoal_noise_part_name(r.part), r.beyond);
        } else {
            fprintf(f, "{\"trajectory\": \"");
            for (const char *q = path; *q; q++)
                fprintf(f, (*q == '"' || *q == '\\') ? "\\%c" : "%c", *q);
            fprintf(f,
                    "\", \"model\": \"%s\", \"noise\": \"outside\", \"summary\": "
                    "{\"steps\": %zu, \"samples\": %zu, \"limited\": %zu, ",
                    shoal_model_name(sd.model), r.steps, r.samples, r.limited);
            const double vals[] = {r.ks_d,       r.ks_p,     r.chi2,        r.chi2_p,
                                   r.resid_mean, r.resid_sd, r.expect_mean, r.expect_sd};
            const char *names[] = {"ks_d",       "ks_p",     "chi2",        "chi2_p",
                                   "resid_mean", "resid_sd", "expect_mean", "expect_sd"};
            for (int i = 0; i < 8; i++) {
                if (isfinite(vals[i]))
                    fprintf(f, "\"%s\": %.17g, ", names[i], vals[i]);
                else
                    fprintf(f, "\"%s\": null, ", names[i]);
            }
            fprintf(f, "\"verdict\": \"%s\", \"part\": \"%s\", \"beyond\": %zu, \"detail\": \"",
                    r.part ? "rule differs" : "agrees", shoal_noise_part_name(r.part), r.beyond);
            for (const char *q = r.detail; *q; q++)
                fprintf(f, (*q == '"' || *q == '\\') ? "\\%c" : "%c", *q);
            fprintf(f, "\"}}\n");
        }
        if (fclose(f) != 0)
            st = shoal_error_set(&e, SHOAL_ERR_NOMEM, "out of memory for the reports");
    }
    if (!st && app_stdout_check("verify"))
        exit_rc = -2;
    if (!st && exit_rc != -2) {
        app_staged staged[2];
        int nstaged = 0;
        for (int w = 0; !st && w < 2; w++)
            if (outs[w])
                st = app_stage_file(&staged[nstaged++], outs[w], write_membuf, &bufs[w], &e);
        if (!st)
            st = app_stage_commit_all(staged, nstaged, &e);
        for (int i = 0; i < nstaged; i++)
            app_stage_abort(&staged[i]);
    }
    free(bufs[0].data);
    free(bufs[1].data);
    shoal_noise_check_destroy(nc);
    if (exit_rc == -2)
        return 2;
    if (st)
        return app_fail_status(o, &e);
    return exit_rc;
}

int cmd_verify(int argc, char **argv)
{
    opt_values o;
    int rc = options_parse(&o, "verify", "--trajectory T [--model M] [options]", verify_opts,
                           (int)(sizeof verify_opts / sizeof verify_opts[0]), 0, argc, argv);
    if (rc)
        return rc == 1 ? 0 : rc;
    if ((rc = options_check_outputs(&o, (const char *const[]){"csv", "json", NULL})) ||
        (rc = app_outputs_distinct(&o, (const char *const[]){"csv", "json", NULL}, NULL, NULL)))
        return rc;
    const char *path = options_get(&o, "trajectory");
    if (!path)
        return options_fail(&o, "--trajectory T is required (a directory of states or a .npy)");
    /* no report over a file it reads (the frames of a directory are checked once listed) */
    const char *const reports[] = {"csv", "json", NULL};
    if ((rc = app_output_not_input(&o, reports, path, "--trajectory")) ||
        (rc = app_output_not_input(&o, reports, options_get(&o, "ids"), "--ids")) ||
        (rc = app_output_not_input(&o, reports, options_get(&o, "targets"), "--targets")) ||
        (rc = app_output_not_input(&o, reports, options_get(&o, "scene"), "--scene")))
        return rc;
    const char *ref_name = options_get(&o, "reference");
    shoal_verify_run_desc rd = shoal_verify_run_desc_default();
    if (strcmp(ref_name, "f32") == 0)
        rd.verify.reference = SHOAL_VERIFY_F32;
    else if (strcmp(ref_name, "f64") == 0)
        rd.verify.reference = SHOAL_VERIFY_F64;
    else
        return options_fail(&o, "--reference: '%s' (expected f32 or f64)", ref_name);
    const char *noise_name = options_get(&o, "noise");
    int outside = 0;
    if (strcmp(noise_name, "outside") == 0)
        outside = 1;
    else if (strcmp(noise_name, "shoal") != 0)
        return options_fail(&o, "--noise: '%s' (expected shoal or outside)", noise_name);
    long long worst = 8, first = 0, steps = -1, threads = 0;
    if ((options_given(&o, "worst") &&
         (rc = options_int(&o, "worst", 1, SHOAL_VERIFY_MAX_WORST, &worst))) ||
        (options_given(&o, "first") && (rc = options_int(&o, "first", 0, 1000000000LL, &first))) ||
        (options_given(&o, "steps") && (rc = options_int(&o, "steps", 1, 1000000000LL, &steps))) ||
        (options_given(&o, "threads") &&
         (rc = options_int(&o, "threads", 0, SHOAL_MAX_THREADS, &threads))))
        return rc;

    /* the trajectory, its ids and targets */
    shoal_error e;
    shoal_traj *t = NULL;
    shoal_npy_array ids_arr, tg;
    memset(&ids_arr, 0, sizeof ids_arr);
    memset(&tg, 0, sizeof tg);
    shoal_status st = shoal_traj_open(
        path, options_given(&o, "layout") ? options_get(&o, "layout") : NULL, &t, &e);
    if (!st && options_given(&o, "ids") &&
        !(st = shoal_io_npy_read_array(options_get(&o, "ids"), &ids_arr, &e))) {
        char what[4200];
        snprintf(what, sizeof what, "--ids %s", options_get(&o, "ids"));
        if (ids_arr.ndim == 1 || ids_arr.ndim == 2)
            st = shoal_traj_set_ids(t, ids_arr.data, ids_arr.ndim == 2 ? ids_arr.dims[0] : 1,
                                    ids_arr.dims[ids_arr.ndim - 1], what, &e);
        else
            st = shoal_error_set(&e, SHOAL_ERR_INPUT, "%s: %d dimensions: expected (N,) or (T, N)",
                                 what, ids_arr.ndim);
    }
    if (!st && options_given(&o, "targets") &&
        !(st = shoal_io_npy_read_array(options_get(&o, "targets"), &tg, &e))) {
        if (tg.ndim == 2 && tg.dims[1] == 3) {
            rd.target_frames = 1;
            rd.target_count = tg.dims[0];
        } else if (tg.ndim == 3 && tg.dims[2] == 3) {
            rd.target_frames = tg.dims[0];
            rd.target_count = tg.dims[1];
        } else {
            st = shoal_error_set(&e, SHOAL_ERR_INPUT,
                                 "--targets %s: expected (K, 3) or (T, K, 3) with T = %zu states",
                                 options_get(&o, "targets"), shoal_traj_frame_count(t));
        }
        rd.targets = tg.data;
    }
    shoal_npy_array_free(&ids_arr); /* set_ids copied them */
    if (!st) {
        /* a directory's frames and manifest are inputs too */
        struct stat sb;
        if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
            char name[4200];
            for (size_t k = 0; !rc && k < shoal_traj_frame_count(t); k++)
                rc = app_output_not_input(&o, reports,
                                          shoal_traj_frame_name(t, k, name, sizeof name),
                                          "a frame of the trajectory");
        }
    }
    if (!st && !rc) {
        char mpath[4200];
        snprintf(mpath, sizeof mpath, "%s/manifest.json", path);
        struct stat sb;
        if (stat(mpath, &sb) == 0)
            rc = app_output_not_input(&o, reports, mpath, "the trajectory's manifest");
    }
    if (rc) {
        shoal_traj_close(t);
        shoal_npy_array_free(&tg);
        return rc;
    }
    shoal_scene scene;
    if (!st && (rc = verify_desc(&o, t, &rd.verify.sim, &scene)))
        st = SHOAL_ERR_INPUT; /* said */
    else
        rc = 0;
    if (st) {
        shoal_traj_close(t);
        shoal_npy_array_free(&tg);
        return rc ? rc : app_fail_status(&o, &e);
    }
    rd.verify.sim.thread_count = (int)threads;
    rd.verify.worst_count = (int)worst;
    rd.scene = &scene;
    rd.first = (size_t)first;
    rd.steps = steps > 0 ? (size_t)steps : 0;
    if (outside) {
        if (rd.verify.sim.model != SHOAL_MODEL_VICSEK &&
            rd.verify.sim.model != SHOAL_MODEL_COUZIN) {
            shoal_traj_close(t);
            shoal_npy_array_free(&tg);
            return options_fail(&o,
                                "--noise outside: model %s has no noise parameter (vicsek and "
                                "couzin have)",
                                shoal_model_name(rd.verify.sim.model));
        }
        int orc = run_outside(&o, t, &rd, path);
        shoal_npy_array_free(&tg);
        shoal_traj_close(t);
        return orc;
    }

    /* the reports go to memory first: a command that fails replaces none of its outputs */
    membuf csv_buf = {NULL, 0}, steps_buf = {NULL, 0}, js_buf = {NULL, 0};
    run_ctx c = {&o, ref_name, NULL, NULL, 0, 0, NULL, &rd};
    if (options_get(&o, "csv")) {
        if (!(c.csv = open_memstream(&csv_buf.data, &csv_buf.len)))
            st = shoal_error_set(&e, SHOAL_ERR_NOMEM, "out of memory for the CSV report");
        else
            shoal_verify_write_csv_head(c.csv);
    }
    if (!st && options_get(&o, "json") && !(c.js = open_memstream(&steps_buf.data, &steps_buf.len)))
        st = shoal_error_set(&e, SHOAL_ERR_NOMEM, "out of memory for the JSON report");
    size_t total = shoal_traj_frame_count(t);
    size_t pairs = (size_t)first + 1 < total ? total - 1 - (size_t)first : 0;
    if (rd.steps && rd.steps < pairs)
        pairs = rd.steps;
    progress pg;
    progress_begin(&pg, "shoal verify", (long long)pairs, options_given(&o, "quiet"));
    c.pg = &pg;
    c.pairs = pairs;
    rd.on_step = on_step;
    rd.ctx = &c;
    shoal_verify_summary sum;
    if (!st)
        st = shoal_verify_run(t, &rd, &sum, &e);
    progress_end(&pg);
    int exit_rc = 0;
    if (!st) {
        printf("summary: %zu steps: %zu agree, %zu drift, %zu threshold tie, %zu rule differs; "
               "verdict: %s",
               sum.steps, sum.counts[SHOAL_VERDICT_AGREES], sum.counts[SHOAL_VERDICT_DRIFT],
               sum.counts[SHOAL_VERDICT_TIE], sum.counts[SHOAL_VERDICT_RULE],
               shoal_verdict_name(sum.verdict));
        if (sum.first_rule_step >= 0)
            printf(": %s (first at step %lld)",
                   sum.first_rule_term ? shoal_term_name(sum.first_rule_term)
                                       : "no single parameter",
                   (long long)sum.first_rule_step);
        printf("\n");
        exit_rc = sum.counts[SHOAL_VERDICT_RULE] ? 1 : 0;
    }
    int mem_failed = 0;
    if (c.csv && fclose(c.csv) != 0) /* both closed, whatever the first gave */
        mem_failed = 1;
    if (c.js && fclose(c.js) != 0)
        mem_failed = 1;
    if (!st && c.js && !mem_failed) { /* head, the steps, the summary */
        FILE *js = open_memstream(&js_buf.data, &js_buf.len);
        if (!js)
            mem_failed = 1;
        else {
            shoal_verify_write_json_head(js, path, &sum.desc);
            fwrite(steps_buf.data, 1, steps_buf.len, js);
            shoal_verify_write_json_tail(js, &sum);
            mem_failed = fclose(js) != 0;
        }
    }
    if (!st && mem_failed)
        st = shoal_error_set(&e, SHOAL_ERR_NOMEM, "out of memory for the reports");
    /* the reports only once the report on stdout was written: a lost report writes no file */
    if (!st && app_stdout_check("verify"))
        exit_rc = -2;
    if (!st && exit_rc != -2) {
        app_staged staged[2];
        int nstaged = 0;
        if (c.csv)
            st = app_stage_file(&staged[nstaged++], options_get(&o, "csv"), write_membuf, &csv_buf,
                                &e);
        if (!st && c.js)
            st = app_stage_file(&staged[nstaged++], options_get(&o, "json"), write_membuf, &js_buf,
                                &e);
        if (!st)
            st = app_stage_commit_all(staged, nstaged, &e);
        for (int i = 0; i < nstaged; i++)
            app_stage_abort(&staged[i]);
    }
    free(csv_buf.data);
    free(steps_buf.data);
    free(js_buf.data);
    shoal_npy_array_free(&tg);
    shoal_traj_close(t);
    if (exit_rc == -2)
        return 2;
    if (st)
        return app_fail_status(&o, &e);
    return exit_rc;
}
