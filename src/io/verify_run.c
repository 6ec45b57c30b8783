/* SPDX-License-Identifier: MIT */
/* A trajectory verified pair by pair (shoal_verify_run), and the report as JSON and CSV: the
 * loop and the schema of shoal verify, owned by the library so that the program and the
 * Python package give the same verdicts, refusals and files (docs/VERIFY.md). The reading is
 * traj.c's, the verification of one pair shoal_verify_step's (src/sim/verify.c). */
#include "shoal/verify.h"

#include "core/text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

shoal_verify_run_desc shoal_verify_run_desc_default(void)
{
    shoal_verify_run_desc d;
    memset(&d, 0, sizeof d);
    d.verify = shoal_verify_desc_default();
    return d;
}

/* The obstacle meshes of a scene into the verifier: loaded into a one-boid float32 sim, whose
 * field the verifier copies (both references sample the same field). */
static shoal_status add_scene(shoal_verify *v, const shoal_sim_desc *d, const shoal_scene *scene,
                              shoal_error *e)
{
    if (!scene || scene->mesh_count == 0)
        return SHOAL_OK;
    shoal_sim_desc one = *d;
    one.boid_count = 1;
    shoal_sim *holder = NULL;
    shoal_status st = shoal_sim_create(&one, &holder, e);
    if (!st && !(st = shoal_scene_add_obstacles(scene, holder, e)))
        st = shoal_verify_copy_obstacles(v, holder, e);
    shoal_sim_destroy(holder);
    return st;
}

/* Consecutive steps only: a gap between two states (a dropped file, a trajectory written
 * every E > 1 steps) is refused, not verified as one step. */
static shoal_status check_consecutive(shoal_traj *t, size_t first, size_t pairs, shoal_error *e)
{
    for (size_t k = first; k < first + pairs; k++) {
        int64_t a = shoal_traj_step(t, k), b = shoal_traj_step(t, k + 1);
        if (b - a == 1)
            continue;
        if (shoal_traj_has_manifest(t))
            return shoal_error_set(e, SHOAL_ERR_INPUT,
                                   "%s: frames of steps %lld and %lld are %lld steps apart; verify "
                                   "compares consecutive steps (write the trajectory with --every "
                                   "1)",
                                   shoal_traj_path(t), (long long)a, (long long)b,
                                   (long long)(b - a));
        char na[SHOAL_PATH_MAX], nb[SHOAL_PATH_MAX];
        return shoal_error_set(e, SHOAL_ERR_INPUT,
                               "%s: %s and %s are numbered %lld and %lld; verify compares "
                               "consecutive steps (a state missing, or states numbered by "
                               "something else than the step?)",
                               shoal_traj_path(t), shoal_traj_frame_name(t, k, na, sizeof na),
                               shoal_traj_frame_name(t, k + 1, nb, sizeof nb), (long long)a,
                               (long long)b);
    }
    return SHOAL_OK;
}

static int raised(const volatile int *flag) { return flag && *flag; }

shoal_status shoal_verify_run(shoal_traj *t, const shoal_verify_run_desc *d,
                              shoal_verify_summary *summary, shoal_error *err)
{
    size_t T = shoal_traj_frame_count(t), first = d->first;
    if (first + 1 >= T)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "first %zu: the trajectory has %zu states",
                               first, T);
    size_t pairs = T - 1 - first;
    if (d->steps > 0 && d->steps < pairs)
        pairs = d->steps;
    shoal_status st = check_consecutive(t, first, pairs, err);
    if (st)
        return st;
    if (d->targets && (d->target_count < 1 || !(d->target_frames == 1 || d->target_frames == T ||
                                                d->target_frames + 1 == T)))
        return shoal_error_set(
            err, SHOAL_ERR_INPUT,
            "targets: %zu sets of %zu: expected (K, 3) or (T, K, 3) with T = %zu "
            "states (or T - 1)",
            d->target_frames, d->target_count, T);

    shoal_verify_desc vd = d->verify;
    /* the time of the first pair: the manifest's frame, else t0 + first dt */
    double t0 = vd.sim.t0_s, tf = shoal_traj_time(t, first), tz = shoal_traj_time(t, 0);
    if (isfinite(tf) && isfinite(tz))
        vd.sim.t0_s = t0 == tz ? tf : t0 + (tf - tz);
    else if (first > 0)
        vd.sim.t0_s = t0 + (double)first * vd.sim.dt_s;

    double *a = NULL, *b = NULL;
    size_t n = 0, nb = 0;
    shoal_verify *v = NULL;
    shoal_verify_summary sum;
    memset(&sum, 0, sizeof sum);
    sum.first_rule_step = -1;
    shoal_verify_report *r = malloc(sizeof *r);
    if (!r)
        return shoal_error_set(err, SHOAL_ERR_NOMEM, "out of memory for a verify report");
    if (!(st = shoal_traj_read(t, first, &a, &n, err))) {
        vd.sim.boid_count = n;
        st = shoal_verify_create(&vd, &v, err);
    }
    if (!st)
        st = add_scene(v, &vd.sim, d->scene, err);
    if (!st)
        shoal_verify_set_cancel(v, d->cancel);
    for (size_t k = 0; !st && k < pairs; k++) {
        size_t ka = first + k, kb = ka + 1;
        if (raised(d->cancel)) {
            st = shoal_error_set(err, SHOAL_ERR_CANCELLED, "verify: cancelled before step %zu", ka);
            break;
        }
        if ((st = shoal_traj_read(t, kb, &b, &nb, err)))
            break;
        if (d->targets) {
            size_t row = d->target_frames == 1 ? 0 : ka;
            const double *xyz = d->targets + row * d->target_count * 3;
            if ((st = shoal_verify_set_targets(v, xyz, d->target_count, err)))
                break;
        }
        if ((st = shoal_verify_step(v, a, b, r, err))) {
            if (st != SHOAL_ERR_CANCELLED) { /* name the states, not the verifier's count */
                char msg[sizeof err->message], na[SHOAL_PATH_MAX], nbn[SHOAL_PATH_MAX];
                snprintf(msg, sizeof msg, "%s", err ? err->message : "");
                shoal_error_set(err, st, "%s -> %s: %s",
                                shoal_traj_frame_name(t, ka, na, sizeof na),
                                shoal_traj_frame_name(t, kb, nbn, sizeof nbn), msg);
            }
            break;
        }
        int64_t step = shoal_traj_has_manifest(t) ? shoal_traj_step(t, ka) : (int64_t)ka;
        sum.counts[r->verdict]++;
        if (r->verdict == SHOAL_VERDICT_RULE && sum.first_rule_step < 0) {
            sum.first_rule_step = step;
            sum.first_rule_term = r->term;
        }
        sum.steps++;
        if (d->on_step && d->on_step(d->ctx, r, step, shoal_traj_ids(t))) {
            st = shoal_error_set(err, SHOAL_ERR_CANCELLED, "verify: stopped after step %lld",
                                 (long long)step);
            break;
        }
        free(a);
        a = b;
        b = NULL;
    }
    free(a);
    free(b);
    free(r);
    shoal_verify_destroy(v);
    if (st)
        return st;
    sum.verdict = sum.counts[SHOAL_VERDICT_RULE]    ? SHOAL_VERDICT_RULE
                  : sum.counts[SHOAL_VERDICT_DRIFT] ? SHOAL_VERDICT_DRIFT
                                                    : SHOAL_VERDICT_AGREES;
    sum.desc = vd;
    if (summary)
        *summary = sum;
    return SHOAL_OK;
}

/* ---- the report as files ---------------------------------------------------------------- */

static void jnum(FILE *f, double x)
{
    if (isfinite(x))
        fprintf(f, "%.17g", x);
    else
        fputs("null", f);
}

static const char *term_or_none(shoal_term t)
{
    const char *n = shoal_term_name(t);
    return n && *n ? n : "";
}

int shoal_verify_write_json_head(FILE *f, const char *trajectory, const shoal_verify_desc *d)
{
    fprintf(f, "{\n  \"shoal\": \"%s\",\n  \"trajectory\": ", SHOAL_VERSION_STRING);
    text_json_string(f, trajectory);
    fputs(",\n  \"model\": ", f);
    text_json_string(f, shoal_model_name(d->sim.model));
    fprintf(f,
            ",\n  \"count\": %zu,\n  \"dt\": %.17g,\n  \"t0\": %.17g,\n  \"seed\": %llu,"
            "\n  \"reference\": \"%s\",\n  \"parameters\": ",
            d->sim.boid_count, d->sim.dt_s, d->sim.t0_s, (unsigned long long)d->sim.seed,
            d->reference == SHOAL_VERIFY_F64 ? "f64" : "f32");
    shoal_params_write_json(f, d->sim.model, &d->sim.params);
    fputs(",\n  \"steps\": [", f);
    return ferror(f) ? -1 : 0;
}

int shoal_verify_write_json_step(FILE *f, const shoal_verify_report *r, int64_t step,
                                 const double *ids, size_t index)
{
    fprintf(f, "%s\n    {\"step\": %lld, \"t\": ", index ? "," : "", (long long)step);
    jnum(f, r->t);
    fprintf(f, ", \"count\": %zu, \"pos_max\": ", r->count);
    jnum(f, r->pos_max);
    fputs(", \"pos_median\": ", f);
    jnum(f, r->pos_median);
    fputs(", \"vel_max\": ", f);
    jnum(f, r->vel_max);
    fputs(", \"vel_median\": ", f);
    jnum(f, r->vel_median);
    fputs(", \"ratio_max\": ", f);
    jnum(f, r->ratio_max);
    fputs(", \"ratio_median\": ", f);
    jnum(f, r->ratio_median);
    fprintf(f, ", \"beyond\": %zu, \"ties\": %zu, \"unverifiable\": %zu, \"verdict\": ", r->beyond,
            r->ties, r->unverifiable);
    text_json_string(f, shoal_verdict_name(r->verdict));
    fputs(", \"term\": ", f);
    text_json_string(f, term_or_none(r->term));
    fputs(", \"param\": ", f);
    text_json_string(f, r->param);
    fputs(", \"contract\": ", f);
    jnum(f, r->param[0] ? r->contract_value : NAN);
    fputs(", \"fitted\": [", f);
    jnum(f, r->param[0] ? r->fitted_lo : NAN);
    fputs(", ", f);
    jnum(f, r->param[0] ? r->fitted_hi : NAN);
    fprintf(f, "], \"strictness\": %d, \"diagnosed\": %zu, \"explained\": %zu, \"beyond_after\": ",
            r->strictness, r->diagnosed, r->explained);
    if (r->beyond_after != SIZE_MAX)
        fprintf(f, "%zu", r->beyond_after);
    else
        fputs("null", f);
    fputs(", \"detail\": ", f);
    text_json_string(f, r->detail);
    fputs(", \"worst\": [", f);
    for (int w = 0; w < r->worst_count; w++) {
        const shoal_verify_boid *b = &r->worst[w];
        fprintf(f, "%s\n      {\"row\": %u, \"id\": ", w ? "," : "", b->row);
        if (ids)
            fprintf(f, "%.0f", ids[b->row]);
        else
            fprintf(f, "%u", b->row);
        fputs(", \"pos_err\": ", f);
        jnum(f, b->pos_err);
        fputs(", \"pos_tol\": ", f);
        jnum(f, b->pos_tol);
        fputs(", \"pos_tie\": ", f);
        jnum(f, b->pos_tie);
        fputs(", \"vel_err\": ", f);
        jnum(f, b->vel_err);
        fputs(", \"vel_tol\": ", f);
        jnum(f, b->vel_tol);
        fputs(", \"vel_tie\": ", f);
        jnum(f, b->vel_tie);
        fputs(", \"ratio\": ", f);
        jnum(f, b->ratio);
        fputs(", \"tie_neighbor\": ", f);
        if (b->tie_term != SHOAL_TERM_NONE && b->tie_row >= 0)
            fprintf(f, "%.0f", ids ? ids[b->tie_row] : (double)b->tie_row);
        else
            fputs("null", f);
        fputs(", \"tie_term\": ", f);
        text_json_string(f, term_or_none(b->tie_term));
        fputs(", \"explained_by\": ", f);
        text_json_string(f, term_or_none(b->explained_by));
        fputs(", \"residual_v\": [", f);
        for (int c = 0; c < 3; c++) {
            if (c)
                fputs(", ", f);
            jnum(f, b->residual[c]);
        }
        fputs("], \"term_dv\": {", f);
        int k = 0;
        for (int t = 1; t < SHOAL_TERM_COUNT; t++) {
            const double *dv = b->term_dv[t];
            if (dv[0] == 0 && dv[1] == 0 && dv[2] == 0)
                continue;
            fprintf(f, "%s", k++ ? ", " : "");
            text_json_string(f, shoal_term_name((shoal_term)t));
            fputs(": [", f);
            for (int c = 0; c < 3; c++) {
                if (c)
                    fputs(", ", f);
                jnum(f, dv[c]);
            }
            fputc(']', f);
        }
        fputs("}}", f);
    }
    fputs("]}", f);
    return ferror(f) ? -1 : 0;
}

int shoal_verify_write_json_tail(FILE *f, const shoal_verify_summary *s)
{
    fprintf(f,
            "\n  ],\n  \"summary\": {\"steps\": %zu, \"agrees\": %zu, \"drift\": %zu, "
            "\"threshold_tie\": %zu, \"rule_differs\": %zu, \"verdict\": \"%s\", \"term\": ",
            s->steps, s->counts[SHOAL_VERDICT_AGREES], s->counts[SHOAL_VERDICT_DRIFT],
            s->counts[SHOAL_VERDICT_TIE], s->counts[SHOAL_VERDICT_RULE],
            shoal_verdict_name(s->verdict));
    text_json_string(f, s->first_rule_step >= 0 ? term_or_none(s->first_rule_term) : "");
    fputs(", \"first_rule_step\": ", f);
    if (s->first_rule_step >= 0)
        fprintf(f, "%lld", (long long)s->first_rule_step);
    else
        fputs("null", f);
    fputs("}\n}\n", f);
    return ferror(f) ? -1 : 0;
}

int shoal_verify_write_csv_head(FILE *f)
{
    fprintf(f, "step,t,count,pos_max,pos_median,vel_max,vel_median,ratio_max,ratio_median,"
               "beyond,ties,unverifiable,verdict,term,param,contract,fitted_lo,fitted_hi,"
               "strictness,diagnosed,explained,beyond_after,detail\n");
    return ferror(f) ? -1 : 0;
}

static void csv_num(FILE *f, double x)
{
    if (isfinite(x))
        fprintf(f, ",%.9g", x);
    else
        fprintf(f, ",%s", x > 0 ? "inf" : x < 0 ? "-inf" : "nan");
}

int shoal_verify_write_csv_row(FILE *f, const shoal_verify_report *r, int64_t step)
{
    fprintf(f, "%lld,%.17g,%zu", (long long)step, r->t, r->count);
    csv_num(f, r->pos_max);
    csv_num(f, r->pos_median);
    csv_num(f, r->vel_max);
    csv_num(f, r->vel_median);
    csv_num(f, r->ratio_max);
    csv_num(f, r->ratio_median);
    fprintf(f, ",%zu,%zu,%zu,%s,%s,%s", r->beyond, r->ties, r->unverifiable,
            shoal_verdict_name(r->verdict), term_or_none(r->term), r->param);
    if (r->param[0]) {
        csv_num(f, r->contract_value);
        csv_num(f, r->fitted_lo);
        csv_num(f, r->fitted_hi);
    } else {
        fputs(",,,", f);
    }
    fprintf(f, ",%d,%zu,%zu,", r->strictness, r->diagnosed, r->explained);
    if (r->beyond_after != SIZE_MAX)
        fprintf(f, "%zu", r->beyond_after);
    /* the detail, quoted (it holds commas) */
    fputc(',', f);
    fputc('"', f);
    for (const char *p = r->detail; *p; p++) {
        if (*p == '"')
            fputc('"', f);
        fputc(*p, f);
    }
    fputs("\"\n", f);
    return ferror(f) ? -1 : 0;
}
