/* SPDX-License-Identifier: MIT */
/* The progress line, trajectory directories and the chunked step loop of long commands
 * (traj.h). The step loop only decides where to cut a run into shoal_sim_step calls; the
 * library guarantees the cuts change no bit. Owns the files of a trajectory directory. */
#include "app/traj.h"
#include "app/app.h"
#include "app/outdir.h"
#include "shoal/profile.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- progress line -------------------------------------------------------------------- */

static double now_s(void) { return (double)shoal_profile_now_ns() * 1e-9; }

void progress_begin(progress *p, const char *label, long long total, int quiet)
{
    memset(p, 0, sizeof *p);
    p->on = !quiet && isatty(STDERR_FILENO);
    p->label = label;
    p->total = total;
    p->t_start = now_s();
    p->t_last = p->t_start - 1.0; /* the first update draws */
}

static void fmt_time(char *buf, size_t n, double s)
{
    if (!(s >= 0) || s > 1e8) {
        snprintf(buf, n, "?");
        return;
    }
    long long t = (long long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, n, "%lld:%02lld:%02lld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, n, "%lld:%02lld", t / 60, t % 60);
}

void progress_update(progress *p, long long done, int force)
{
    if (!p || !p->on)
        return;
    double now = now_s();
    if (!force && now - p->t_last < 0.25)
        return;
    p->t_last = now;
    double el = now - p->t_start;
    double rate = el > 0 ? (double)done / el : 0;
    char e[32], left[32];
    fmt_time(e, sizeof e, el);
    fmt_time(left, sizeof left, rate > 0 ? (double)(p->total - done) / rate : -1);
    fprintf(stderr, "\r%s: %lld/%lld (%.0f%%)  %.4g/s  elapsed %s  left %s%s%s\033[K", p->label,
            done, p->total, p->total > 0 ? 100.0 * (double)done / (double)p->total : 100.0, rate, e,
            left, p->note[0] ? "  " : "", p->note);
    fflush(stderr);
    p->drawn = 1;
}

void progress_end(progress *p)
{
    if (!p || !p->on || !p->drawn)
        return;
    fprintf(stderr, "\r\033[K");
    fflush(stderr);
    p->drawn = 0;
}

/* ---- JSON ----------------------------------------------------------------------------- */

void app_json_params(FILE *f, shoal_model model, const shoal_params *p)
{
    shoal_params_write_json(f, model, p); /* the library's form, which it reads back */
}

/* ---- trajectories --------------------------------------------------------------------- */

shoal_status traj_mkdir(const char *dir, shoal_error *e)
{
    char tmp[4096];
    if (!dir || !*dir || strlen(dir) >= sizeof tmp)
        return shoal_error_set(e, SHOAL_ERR_IO, "'%s': not a usable directory name",
                               dir ? dir : "");
    snprintf(tmp, sizeof tmp, "%s", dir);
    for (char *q = tmp + 1; *q; q++) {
        if (*q == '/') {
            *q = 0;
            if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
                return shoal_error_set(e, SHOAL_ERR_IO, "%s: cannot create: %s", tmp,
                                       strerror(errno));
            *q = '/';
        }
    }
    if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
        return shoal_error_set(e, SHOAL_ERR_IO, "%s: cannot create: %s", dir, strerror(errno));
    struct stat sb;
    if (stat(tmp, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return shoal_error_set(e, SHOAL_ERR_IO, "%s: not a directory", dir);
    if (access(tmp, W_OK | X_OK) != 0)
        return shoal_error_set(e, SHOAL_ERR_IO, "%s: cannot write in it: %s", dir, strerror(errno));
    return SHOAL_OK;
}

int traj_owns(const char *name)
{
    long long step;
    const shoal_io_format *f;
    for (size_t i = 0; (f = shoal_io_format_at(i)); i++)
        if (f->trajectory && app_frame_step(name, "state_", f->ext, &step))
            return 1;
    return strcmp(name, "manifest.json") == 0 || strcmp(name, "trajectory.pvd") == 0;
}

shoal_status traj_open(traj *t, const char *dir, const char *format, long long every, size_t count,
                       int overwrite, shoal_error *e)
{
    memset(t, 0, sizeof *t);
    t->out.lock.fd = -1;
    if (!(t->fmt = shoal_io_format_find(format, 1))) {
        char names[128];
        shoal_io_format_names(names, sizeof names, 0, 1, NULL);
        return shoal_error_set(e, SHOAL_ERR_INPUT, "--format: '%s' (expected %s)", format, names);
    }
    shoal_status st = app_outdir_open(&t->out, "--out-dir", dir, traj_owns, overwrite, e);
    if (st)
        return st;
    snprintf(t->dir, sizeof t->dir, "%s", t->out.stage);
    t->every = every;
    t->count = count;
    t->rows = malloc(count * 6 * sizeof(float));
    if (!t->rows)
        return shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for %zu boids", count);
    return SHOAL_OK;
}

void traj_set_writer(traj *t, traj_writer w, void *ctx)
{
    free(t->rows);
    t->rows = NULL;
    t->write = w;
    t->write_ctx = ctx;
}

shoal_status traj_follow(traj *t, const char *stage, const char *format, long long every,
                         size_t count, traj_writer w, void *ctx, shoal_error *e)
{
    memset(t, 0, sizeof *t);
    t->out.lock.fd = -1;
    if (!(t->fmt = shoal_io_format_find(format, 1))) {
        char names[128];
        shoal_io_format_names(names, sizeof names, 0, 1, NULL);
        return shoal_error_set(e, SHOAL_ERR_INPUT, "--format: '%s' (expected %s)", format, names);
    }
    snprintf(t->dir, sizeof t->dir, "%s", stage);
    t->every = every;
    t->count = count;
    t->write = w;
    t->write_ctx = ctx;
    return SHOAL_OK;
}

shoal_status traj_reserve(traj *t, size_t n, shoal_error *e)
{
    if (n <= t->frame_cap)
        return SHOAL_OK;
    traj_frame_rec *fr = realloc(t->frames, n * sizeof *fr);
    if (!fr)
        return shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for the frame list");
    t->frames = fr;
    t->frame_cap = n;
    return SHOAL_OK;
}

shoal_status traj_commit(traj *t, shoal_error *e)
{
    return app_outdir_commit(&t->out, "manifest.json", e);
}

void traj_release(traj *t, int failed) { app_outdir_close(&t->out, failed); }

static void frame_name(const traj *t, long long step, char *buf, size_t n)
{
    snprintf(buf, n, "state_%06lld%s", step, t->fmt->ext);
}

shoal_status traj_write(traj *t, const shoal_sim *sim, long long step, shoal_error *e)
{
    if (t->frame_count == t->frame_cap) {
        size_t cap = t->frame_cap ? t->frame_cap * 2 : 64;
        traj_frame_rec *fr = realloc(t->frames, cap * sizeof *fr);
        if (!fr)
            return shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for the frame list");
        t->frames = fr;
        t->frame_cap = cap;
    }
    char name[64], path[4400];
    frame_name(t, step, name, sizeof name);
    snprintf(path, sizeof path, "%s/%s", t->dir, name);
    double time = shoal_sim_time(sim);
    shoal_status st;
    if (t->write) {
        st = t->write(t->write_ctx, path, time, e);
    } else {
        shoal_sim_get_state(sim, t->rows);
        st = shoal_io_state_write(path, t->fmt->name, t->rows, t->count, time, e);
    }
    if (st) {
        if (t->out.dir[0])
            app_message_rename(e, t->dir, t->out.dir); /* DIR/NAME, not its staging directory */
        return st;
    }
    t->frames[t->frame_count].step = step;
    t->frames[t->frame_count].t = time;
    t->frame_count++;
    return SHOAL_OK;
}

static shoal_status write_pvd(const traj *t, shoal_error *e)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/trajectory.pvd", t->dir);
    shoal_atomic_file af;
    shoal_status st = shoal_io_atomic_open(&af, path, e);
    if (st)
        return st;
    FILE *f = af.file;
    fprintf(f, "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\" "
               "byte_order=\"LittleEndian\">\n  <Collection>\n");
    for (size_t i = 0; i < t->frame_count; i++) {
        char name[64];
        frame_name(t, t->frames[i].step, name, sizeof name);
        fprintf(f, "    <DataSet timestep=\"%.17g\" group=\"\" part=\"0\" file=\"%s\"/>\n",
                t->frames[i].t, name);
    }
    fprintf(f, "  </Collection>\n</VTKFile>\n");
    return shoal_io_atomic_commit(&af, e);
}

shoal_status traj_close(traj *t, const shoal_sim *sim, long long steps, int ok, shoal_error *e)
{
    shoal_status st = SHOAL_OK;
    if (ok && t->fmt && t->fmt->collection)
        st = write_pvd(t, e);
    if (ok && !st) {
        char path[4400];
        snprintf(path, sizeof path, "%s/manifest.json", t->dir);
        shoal_atomic_file af;
        st = shoal_io_atomic_open(&af, path, e);
        if (!st) {
            FILE *f = af.file;
            const shoal_sim_desc *d = shoal_sim_get_desc(sim);
            fprintf(f, "{\n  \"shoal\": \"%s\",\n  \"format\": \"%s\",\n  \"model\": ",
                    SHOAL_VERSION_STRING, t->fmt->name);
            json_write_string(f, shoal_model_name(d->model));
            /* t0: the simulated time of this run's first state, so that frame k's t is
             * t0 + step * dt also after --resume (the checkpoint's own t0 is earlier) */
            double t0 = t->frame_count ? t->frames[0].t : d->t0_s;
            fprintf(f,
                    ",\n  \"count\": %zu,\n  \"seed\": %llu,\n  \"dt\": %.17g,\n  \"t0\": %.17g,\n"
                    "  \"steps\": %lld,\n  \"every\": %lld,\n  \"parameters\": ",
                    t->count, (unsigned long long)d->seed, d->dt_s, t0, steps, t->every);
            app_json_params(f, d->model, &d->params);
            fprintf(f, ",\n  \"frames\": [");
            for (size_t i = 0; i < t->frame_count; i++) {
                char name[64];
                frame_name(t, t->frames[i].step, name, sizeof name);
                fprintf(f, "%s\n    {\"step\": %lld, \"t\": %.17g, \"file\": \"%s\"}", i ? "," : "",
                        t->frames[i].step, t->frames[i].t, name);
            }
            fprintf(f, "\n  ]\n}\n");
            st = shoal_io_atomic_commit(&af, e);
        }
    }
    if (st)
        app_message_rename(e, t->dir, t->out.dir);
    free(t->rows);
    free(t->frames);
    t->rows = NULL;
    t->frames = NULL;
    return st;
}

/* ---- the step loop -------------------------------------------------------------------- */

static shoal_status sim_stepper(void *ctx, long long n, shoal_error *e)
{
    return shoal_sim_step(ctx, (int)n, e);
}

shoal_status app_sim_run(shoal_sim *sim, long long steps, traj *tr, progress *pg, shoal_error *e)
{
    return app_run_steps(sim, sim_stepper, sim, steps, tr, pg, e);
}

shoal_status app_run_steps(shoal_sim *sim, app_stepper step, void *step_ctx, long long steps,
                           traj *tr, progress *pg, shoal_error *e)
{
    shoal_status st;
    if (!tr && !(pg && pg->on))
        return step(step_ctx, steps, e);
    long long done = 0, chunk = 1;
    if (tr && (st = traj_write(tr, sim, 0, e)))
        return st;
    while (done < steps) {
        long long stop = steps;
        if (tr) {
            long long next = (done / tr->every + 1) * tr->every;
            stop = next < steps ? next : steps;
        }
        /* With the progress line: chunks that grow while they take under 0.05 s, so the
         * clock is read a few times a second at most and a step costs nothing extra. */
        long long n = stop - done;
        if (pg && pg->on && chunk < n)
            n = chunk;
        double t0 = pg && pg->on ? (double)shoal_profile_now_ns() : 0;
        if ((st = step(step_ctx, n, e)))
            return st;
        done += n;
        if (pg && pg->on) {
            if (((double)shoal_profile_now_ns() - t0) < 0.05e9 && chunk < (1LL << 30))
                chunk *= 2;
            progress_update(pg, done, 0);
        }
        if (tr && (done % tr->every == 0 || done == steps) && (st = traj_write(tr, sim, done, e)))
            return st;
    }
    return SHOAL_OK;
}
