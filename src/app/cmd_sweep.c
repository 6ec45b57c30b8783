/* SPDX-License-Identifier: MIT */
/* `shoal sweep`: an ensemble over a parameter grid and a range of seeds. Every combination
 * of the --vary values times every seed is one member: the model's initial state from that
 * seed, K steps, the flock statistics (shoal/stats.h) at steps 0, E, 2E, ... and K. Members
 * run in child processes, J at a time, the threads shared out; each writes its rows to
 * DIR/members/member_NNNNNN.csv atomically, so a killed sweep keeps what finished and
 * --resume runs only the rest. DIR/sweep.csv (header + members in order) is assembled at the
 * end: its bytes depend on the options alone, never on J, T or interruptions.
 * Under MPI members could go to ranks; this file does not do that (one host). */
#include "app/app.h"
#include "app/options.h"
#include "app/traj.h"
#include "shoal/system.h"
#include "shoal/stats.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SWEEP_MAX_VARY 16
#define SWEEP_MAX_VALUES 100000
#define SWEEP_MAX_MEMBERS 10000000LL

static const opt_spec sweep_opts[] = {
    {"model", OPT_VALUE, "M", "steer", APP_MODEL_HELP},
    {"scene", OPT_VALUE, "FILE.ini", NULL, "scene file: model, parameters, count, obstacles"},
    {"set", OPT_REPEAT, "NAME=VALUE", NULL, "set a parameter for every member"},
    {"vary", OPT_REPEAT, "NAME=a:b:step|v1,v2,...", NULL,
     "a parameter's values (repeatable: every combination is run)"},
    {"seeds", OPT_VALUE, "S1..S2", "1", "seeds of the initial states (inclusive range or one)"},
    {"count", OPT_VALUE, "N", "the scene's or model's",
     "boids per member; the scene's walls and start region scale to keep its density"},
    {"keep-geometry", OPT_FLAG, NULL, NULL, "with --count: keep the scene's walls as they are"},
    {"steps", OPT_VALUE, "K", "600", "steps per member"},
    {"every", OPT_VALUE, "E", "K / 10", "steps between statistics samples (0 and K always)"},
    {"dt", OPT_VALUE, "DT", "the scene's, 1/60", "time step in seconds"},
    {"radius", OPT_VALUE, "R", "the model's interaction radius", "radius of groups (statistics)"},
    {"out", OPT_VALUE, "DIR", NULL, "output directory: sweep.csv, manifest.json (required)"},
    {"threads", OPT_VALUE, "T", "0", "threads in all, 0: all cores (results do not depend on it)"},
    {"jobs", OPT_VALUE, "J", "1", "members run at once, each with T / J threads"},
    {"resume", OPT_FLAG, NULL, NULL, "go on with a killed sweep in DIR (same options)"},
    {"quiet", OPT_FLAG, NULL, NULL, "no progress line (shown only when stderr is a terminal)"},
};

static const char *sweep_usage =
    "--model M [--scene F.ini] --vary NAME=a:b:step|v1,v2,... [--vary ...] --seeds S1..S2\n"
    "       [--count N] --steps K --every E --out DIR [--threads T] [--jobs J] [--resume]";

typedef struct vary {
    char name[64];
    int n;
    char (*txt)[32]; /* each value as given to shoal_params_set (%.9g) */
} vary;

typedef struct sweep {
    shoal_sim_desc base;
    shoal_scene scene;
    vary v[SWEEP_MAX_VARY];
    int nv;
    uint64_t seed_lo, seed_hi;
    long long combos, members, steps, every;
    int threads_per_member, jobs;
    double radius;
    const char *dir;
} sweep;

/* NAME=a:b:step or NAME=v1,v2,...: the values as text. 0 or 2 (message printed). */
static int parse_vary(const opt_values *o, const char *spec, const shoal_sim_desc *base, vary *v)
{
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec || (size_t)(eq - spec) >= sizeof v->name)
        return options_fail(o, "--vary '%s': expected NAME=a:b:step or NAME=v1,v2,...", spec);
    snprintf(v->name, sizeof v->name, "%.*s", (int)(eq - spec), spec);
    const char *val = eq + 1;
    double a, b, step;
    int used = 0;
    double list[SWEEP_MAX_VALUES];
    int n = 0;
    if (strchr(val, ':')) {
        if (sscanf(val, "%lf:%lf:%lf%n", &a, &b, &step, &used) != 3 || val[used] || !isfinite(a) ||
            !isfinite(b) || !isfinite(step))
            return options_fail(o, "--vary '%s': expected NAME=a:b:step", spec);
        if (!(step > 0) || b < a)
            return options_fail(o, "--vary '%s': empty range (need a <= b and step > 0)", spec);
        double span = (b - a) / step;
        if (span >= SWEEP_MAX_VALUES)
            return options_fail(o, "--vary '%s': more than %d values", spec, SWEEP_MAX_VALUES);
        /* a, a + step, ... up to b, b included when it falls on the grid (to 1e-9 steps) */
        int cnt = (int)floor(span + 1e-9) + 1;
        for (int i = 0; i < cnt; i++)
            list[n++] = a + (double)i * step;
    } else {
        const char *p = val;
        for (;;) {
            char *end;
            double x = strtod(p, &end);
            if (end == p || !isfinite(x) || (*end && *end != ','))
                return options_fail(o, "--vary '%s': '%s' is not a list of numbers", spec, val);
            if (n >= SWEEP_MAX_VALUES)
                return options_fail(o, "--vary '%s': more than %d values", spec, SWEEP_MAX_VALUES);
            list[n++] = x;
            if (!*end)
                break;
            p = end + 1;
        }
    }
    v->n = n;
    v->txt = malloc((size_t)n * sizeof *v->txt);
    if (!v->txt)
        return options_fail(o, "out of memory");
    for (int i = 0; i < n; i++) {
        snprintf(v->txt[i], sizeof v->txt[i], "%.9g", list[i]);
        /* every value must be one the model takes: checked now, before anything is written */
        shoal_params p = base->params;
        shoal_error e;
        if (shoal_params_set(base->model, &p, v->name, v->txt[i], &e))
            return options_fail(o, "--vary %s: %s", v->name, e.message);
    }
    return 0;
}

/* The desc of member k: base + its combination, its seed. */
static shoal_status member_desc(const sweep *sw, long long k, shoal_sim_desc *d, shoal_error *e)
{
    long long nseeds = (long long)(sw->seed_hi - sw->seed_lo) + 1;
    long long combo = k / nseeds;
    *d = sw->base;
    d->seed = sw->seed_lo + (uint64_t)(k % nseeds);
    for (int i = sw->nv - 1; i >= 0; i--) {
        int idx = (int)(combo % sw->v[i].n);
        combo /= sw->v[i].n;
        shoal_status st =
            shoal_params_set(d->model, &d->params, sw->v[i].name, sw->v[i].txt[idx], e);
        if (st)
            return st;
    }
    d->thread_count = sw->threads_per_member;
    return shoal_params_validate(d->model, &d->params, e);
}

static void member_values(const sweep *sw, long long k, int idx[SWEEP_MAX_VARY])
{
    long long combo = k / ((long long)(sw->seed_hi - sw->seed_lo) + 1);
    for (int i = sw->nv - 1; i >= 0; i--) {
        idx[i] = (int)(combo % sw->v[i].n);
        combo /= sw->v[i].n;
    }
}

static void member_path(const sweep *sw, long long k, char *buf, size_t n)
{
    snprintf(buf, n, "%s/members/member_%06lld.csv", sw->dir, k);
}

static const char *stat_columns =
    "polarization,milling,mean_speed,mean_nn_distance,group_count,largest_group_fraction,"
    "extent_x,extent_y,extent_z";

/* One member, in a child process: returns the exit code. */
static int run_member(const sweep *sw, long long k)
{
    shoal_error e;
    shoal_sim_desc d;
    shoal_sim *sim = NULL;
    float *rows = NULL;
    shoal_atomic_file af;
    memset(&af, 0, sizeof af);
    int rc = 0;
    if (member_desc(sw, k, &d, &e) || shoal_sim_create(&d, &sim, &e)) {
        rc = app_exit_code(e.status);
        goto fail;
    }
    shoal_sim_init_state(sim, d.seed);
    if (shoal_scene_add_obstacles(&sw->scene, sim, &e)) {
        rc = app_exit_code(e.status);
        goto fail;
    }
    rows = malloc(d.boid_count * 6 * sizeof(float));
    if (!rows) {
        shoal_error_set(&e, SHOAL_ERR_NOMEM, "out of memory for %zu boids", d.boid_count);
        rc = 2;
        goto fail;
    }
    char path[4300];
    member_path(sw, k, path, sizeof path);
    if (shoal_io_atomic_open(&af, path, &e)) {
        rc = 2;
        goto fail;
    }
    int idx[SWEEP_MAX_VARY];
    member_values(sw, k, idx);
    char prefix[2048];
    int plen = snprintf(prefix, sizeof prefix, "%lld,%llu", k, (unsigned long long)d.seed);
    for (int i = 0; i < sw->nv && plen < (int)sizeof prefix; i++)
        plen += snprintf(prefix + plen, sizeof prefix - (size_t)plen, ",%s", sw->v[i].txt[idx[i]]);
    shoal_stats_desc sd = shoal_stats_desc_default();
    sd.radius = sw->radius;
    sd.thread_count = sw->threads_per_member;
    for (long long done = 0;;) {
        shoal_sim_get_state(sim, rows);
        shoal_stats s;
        if (shoal_stats_compute(rows, d.boid_count, &sd, &s, &e)) {
            rc = app_exit_code(e.status);
            goto fail;
        }
        fprintf(af.file, "%s,%lld,%.17g,%.17g,%.17g,%.17g,%.17g,%llu,%.17g,%.17g,%.17g,%.17g\n",
                prefix, done, shoal_sim_time(sim), s.polarisation, s.milling, s.mean_speed,
                s.mean_nn_distance, (unsigned long long)s.group_count, s.largest_group_fraction,
                s.extent[0], s.extent[1], s.extent[2]);
        if (done >= sw->steps)
            break;
        long long next = (done / sw->every + 1) * sw->every;
        long long n = (next < sw->steps ? next : sw->steps) - done;
        if (shoal_sim_step(sim, (int)n, &e)) {
            rc = app_exit_code(e.status);
            goto fail;
        }
        done += n;
    }
    if (shoal_io_atomic_commit(&af, &e)) {
        rc = 2;
        goto fail;
    }
    free(rows);
    shoal_sim_destroy(sim);
    return 0;
fail:
    shoal_io_atomic_abort(&af);
    fprintf(stderr, "shoal sweep: member %lld: %s\n", k, e.message);
    free(rows);
    if (sim)
        shoal_sim_destroy(sim);
    return rc ? rc : 1;
}

/* The sweep's definition (no machine, no time): a resume must match it byte for byte. */
static char *sweep_spec(const sweep *sw, const char *scene_path, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f)
        return NULL;
    fprintf(f, "{\"model\": ");
    json_write_string(f, shoal_model_name(sw->base.model));
    fprintf(f, ", \"scene\": ");
    json_write_string(f, scene_path ? scene_path : "");
    fprintf(f,
            ", \"count\": %zu, \"steps\": %lld, \"every\": %lld, \"dt\": %.17g, \"t0\": %.17g, "
            "\"seeds\": [%llu, %llu], \"radius\": %.17g, \"vary\": {",
            sw->base.boid_count, sw->steps, sw->every, sw->base.dt_s, sw->base.t0_s,
            (unsigned long long)sw->seed_lo, (unsigned long long)sw->seed_hi, sw->radius);
    for (int i = 0; i < sw->nv; i++) {
        fprintf(f, "%s", i ? ", " : "");
        json_write_string(f, sw->v[i].name);
        fprintf(f, ": [");
        for (int j = 0; j < sw->v[i].n; j++)
            fprintf(f, "%s%s", j ? ", " : "", sw->v[i].txt[j]);
        fprintf(f, "]");
    }
    fprintf(f, "}, \"base_parameters\": ");
    app_json_params(f, sw->base.model, &sw->base.params);
    fprintf(f, "}\n");
    fclose(f);
    return buf;
}

static void machine(FILE *f)
{
    struct utsname u;
    fprintf(f, "{\"system\": ");
    if (uname(&u) == 0) {
        char sys[1024];
        snprintf(sys, sizeof sys, "%s %s %s", u.sysname, u.release, u.machine);
        json_write_string(f, sys);
        fprintf(f, ", \"host\": ");
        json_write_string(f, u.nodename);
    } else {
        json_write_string(f, "unknown");
    }
    fprintf(f, ", \"cpu\": ");
    json_write_string(f, shoal_system_cpu_model());
    fprintf(f, ", \"cpus\": %d}", shoal_system_cpu_count());
}

static shoal_status write_manifest(const sweep *sw, const char *spec, shoal_error *e)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/manifest.json", sw->dir);
    shoal_atomic_file af;
    shoal_status st = shoal_io_atomic_open(&af, path, e);
    if (st)
        return st;
    FILE *f = af.file;
    fprintf(f, "{\n  \"shoal\": \"%s\",\n  \"machine\": ", SHOAL_VERSION_STRING);
    machine(f);
    fprintf(f, ",\n  \"jobs\": %d,\n  \"threads_per_member\": %d,\n  \"sweep\": %.*s,\n", sw->jobs,
            sw->threads_per_member, (int)strcspn(spec, "\n"), spec);
    fprintf(f, "  \"columns\": \"member,seed");
    for (int i = 0; i < sw->nv; i++)
        fprintf(f, ",%s", sw->v[i].name);
    fprintf(f, ",step,t,%s\",\n  \"members\": [", stat_columns);
    for (long long k = 0; k < sw->members; k++) {
        shoal_sim_desc d;
        shoal_error me;
        member_desc(sw, k, &d, &me);
        fprintf(f, "%s\n    {\"member\": %lld, \"seed\": %llu, \"parameters\": ", k ? "," : "", k,
                (unsigned long long)d.seed);
        app_json_params(f, d.model, &d.params);
        fprintf(f, "}");
    }
    fprintf(f, "\n  ]\n}\n");
    return shoal_io_atomic_commit(&af, e);
}

/* DIR/sweep.csv: the header, then every member's rows in member order. */
static shoal_status assemble(const sweep *sw, shoal_error *e)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/sweep.csv", sw->dir);
    shoal_atomic_file af;
    shoal_status st = shoal_io_atomic_open(&af, path, e);
    if (st)
        return st;
    FILE *f = af.file;
    fprintf(f, "member,seed");
    for (int i = 0; i < sw->nv; i++)
        fprintf(f, ",%s", sw->v[i].name);
    fprintf(f, ",step,t,%s\n", stat_columns);
    char buf[65536];
    for (long long k = 0; k < sw->members; k++) {
        char mp[4300];
        member_path(sw, k, mp, sizeof mp);
        FILE *m = fopen(mp, "rb");
        if (!m) {
            shoal_io_atomic_abort(&af);
            return shoal_error_set(e, SHOAL_ERR_IO, "%s: cannot open: %s", mp, strerror(errno));
        }
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, m)) > 0)
            fwrite(buf, 1, n, f);
        fclose(m);
    }
    return shoal_io_atomic_commit(&af, e);
}

static int file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

static int parse_seeds(const opt_values *o, sweep *sw)
{
    const char *s = options_get(o, "seeds");
    unsigned long long a, b;
    int used = 0;
    if (sscanf(s, "%llu..%llu%n", &a, &b, &used) == 2 && !s[used]) {
        if (b < a)
            return options_fail(o, "--seeds '%s': empty range (S1 > S2)", s);
    } else if (sscanf(s, "%llu%n", &a, &used) == 1 && !s[used] && s[0] != '-') {
        b = a;
    } else {
        return options_fail(o, "--seeds '%s': expected S1..S2 or S", s);
    }
    if (strchr(s, '-'))
        return options_fail(o, "--seeds '%s': seeds are >= 0", s);
    sw->seed_lo = a;
    sw->seed_hi = b;
    if (b - a >= (unsigned long long)SWEEP_MAX_MEMBERS)
        return options_fail(o, "--seeds '%s': too many seeds", s);
    return 0;
}

int cmd_sweep(int argc, char **argv)
{
    opt_values o;
    int rc = options_parse(&o, "sweep", sweep_usage, sweep_opts,
                           (int)(sizeof sweep_opts / sizeof sweep_opts[0]), 0, argc, argv);
    if (rc)
        return rc == 1 ? 0 : rc;
    static sweep sw;
    memset(&sw, 0, sizeof sw);
    long long count = 0, threads = 0, jobs = 1;
    if (options_given(&o, "count") && (rc = options_int(&o, "count", 1, 4000000000LL, &count)))
        return rc;
    /* --count keeps the scene's density as init and run do (walls and start region scaled
     * by cbrt(N / the scene's count); --set still wins) */
    if ((rc = app_sim_desc(&o, &sw.base, &sw.scene, (size_t)count,
                           options_given(&o, "keep-geometry"), NULL)))
        return rc;
    sw.dir = options_get(&o, "out");
    if (!sw.dir)
        return options_fail(&o, "--out DIR is required");
    if ((rc = options_int(&o, "steps", 0, 1000000000LL, &sw.steps)))
        return rc;
    sw.every = sw.steps >= 10 ? sw.steps / 10 : 1;
    if (options_given(&o, "every") && (rc = options_int(&o, "every", 1, 1000000000LL, &sw.every)))
        return rc;
    if (options_given(&o, "dt") && (rc = options_double(&o, "dt", 1e-12, 1e6, &sw.base.dt_s)))
        return rc;
    if ((rc = options_int(&o, "threads", 0, 1024, &threads)) ||
        (rc = options_int(&o, "jobs", 1, 1024, &jobs)))
        return rc;
    if ((rc = parse_seeds(&o, &sw)))
        return rc;
    sw.combos = 1;
    for (int i = 0; i < o.repeat_count; i++) {
        if (strcmp(o.specs[o.repeat_of[i]].name, "vary") != 0)
            continue;
        if (sw.nv == SWEEP_MAX_VARY)
            return options_fail(&o, "more than %d --vary options", SWEEP_MAX_VARY);
        if ((rc = parse_vary(&o, o.repeat[i], &sw.base, &sw.v[sw.nv])))
            return rc;
        for (int j = 0; j < sw.nv; j++)
            if (strcmp(sw.v[j].name, sw.v[sw.nv].name) == 0)
                return options_fail(&o, "--vary %s given twice", sw.v[j].name);
        sw.combos *= sw.v[sw.nv].n;
        sw.nv++;
        if (sw.combos > SWEEP_MAX_MEMBERS)
            return options_fail(&o, "more than %lld combinations", SWEEP_MAX_MEMBERS);
    }
    sw.members = sw.combos * (long long)(sw.seed_hi - sw.seed_lo + 1);
    if (sw.members > SWEEP_MAX_MEMBERS)
        return options_fail(&o, "%lld members: more than %lld", sw.members, SWEEP_MAX_MEMBERS);
    sw.radius = shoal_params_interaction_radius(sw.base.model, &sw.base.params);
    if (options_given(&o, "radius") && (rc = options_double(&o, "radius", 0, 1e30, &sw.radius)))
        return rc;
    int total = threads > 0 ? (int)threads : shoal_system_cpu_count();
    sw.jobs = (int)jobs;
    sw.threads_per_member = total / sw.jobs > 0 ? total / sw.jobs : 1;
    /* every member's parameter set must be valid: checked before anything is written */
    shoal_error e;
    for (long long k = 0; k < sw.combos; k++) {
        shoal_sim_desc d;
        if (member_desc(&sw, k * (long long)(sw.seed_hi - sw.seed_lo + 1), &d, &e))
            return options_fail(&o, "member %lld: %s", k, e.message);
    }
    /* the directory: new, or the same sweep with --resume */
    size_t spec_len;
    char *spec = sweep_spec(&sw, options_get(&o, "scene"), &spec_len);
    if (!spec)
        return options_fail(&o, "out of memory");
    char path[4300];
    snprintf(path, sizeof path, "%s/sweep.spec", sw.dir);
    int resume = options_given(&o, "resume");
    if (file_exists(path)) {
        if (!resume) {
            free(spec);
            return options_fail(&o,
                                "--out %s holds a sweep already: add --resume to finish it, "
                                "or choose another directory",
                                sw.dir);
        }
        FILE *f = fopen(path, "rb");
        char *old = malloc(spec_len + 2);
        size_t n = f && old ? fread(old, 1, spec_len + 1, f) : 0;
        int same = n == spec_len && memcmp(old, spec, n) == 0;
        free(old);
        if (f)
            fclose(f);
        if (!same) {
            free(spec);
            return options_fail(&o,
                                "--resume: %s holds a different sweep (%s differs from these "
                                "options)",
                                sw.dir, path);
        }
    }
    char members_dir[4300];
    snprintf(members_dir, sizeof members_dir, "%s/members", sw.dir);
    shoal_atomic_file af;
    if (traj_mkdir(sw.dir, &e) || traj_mkdir(members_dir, &e) ||
        shoal_io_atomic_open(&af, path, &e)) {
        free(spec);
        return options_fail(&o, "--out %s", e.message);
    }
    /* members killed mid-write leave a temporary: remove them (nothing else is there) */
    DIR *md = opendir(members_dir);
    if (md) {
        struct dirent *de;
        while ((de = readdir(md)))
            if (strncmp(de->d_name, ".member_", 8) == 0 && strstr(de->d_name, ".tmp.")) {
                char tp[4600];
                snprintf(tp, sizeof tp, "%s/%s", members_dir, de->d_name);
                unlink(tp);
            }
        closedir(md);
    }
    fwrite(spec, 1, spec_len, af.file);
    if (shoal_io_atomic_commit(&af, &e) || write_manifest(&sw, spec, &e)) {
        free(spec);
        return options_fail(&o, "%s", e.message);
    }
    free(spec);

    /* members: J child processes at a time; the parent never enters OpenMP before fork */
    progress pg;
    progress_begin(&pg, "shoal sweep", sw.members, options_given(&o, "quiet"));
    long long next = 0, done = 0, failed = 0;
    int running = 0;
    long long *slot = calloc((size_t)sw.jobs, sizeof *slot);
    pid_t *pids = calloc((size_t)sw.jobs, sizeof *pids);
    if (!slot || !pids) {
        free(slot);
        free(pids);
        return options_fail(&o, "out of memory");
    }
    fflush(stdout);
    fflush(stderr);
    while (done + failed < sw.members) {
        while (running < sw.jobs && next < sw.members && !failed) {
            char mp[4300];
            member_path(&sw, next, mp, sizeof mp);
            if (file_exists(mp)) { /* finished before a kill: --resume keeps it */
                next++;
                done++;
                continue;
            }
            int j = 0;
            while (pids[j])
                j++;
            pid_t pid = fork();
            if (pid < 0) {
                failed++;
                fprintf(stderr, "shoal sweep: fork: %s\n", strerror(errno));
                break;
            }
            if (pid == 0) {
                prctl(PR_SET_PDEATHSIG, SIGKILL); /* a killed sweep takes its members along */
                if (getppid() == 1)
                    _exit(1);
                _exit(run_member(&sw, next));
            }
            pids[j] = pid;
            slot[j] = next++;
            running++;
        }
        if (running == 0) {
            if (next >= sw.members || failed)
                break;
            continue;
        }
        /* the lowest member running, for the progress line */
        long long cur = -1;
        for (int j = 0; j < sw.jobs; j++)
            if (pids[j] && (cur < 0 || slot[j] < cur))
                cur = slot[j];
        if (pg.on && cur >= 0) {
            int idx[SWEEP_MAX_VARY];
            member_values(&sw, cur, idx);
            int n = snprintf(
                pg.note, sizeof pg.note, "member %lld seed %llu", cur,
                (unsigned long long)(sw.seed_lo +
                                     (uint64_t)(cur % (long long)(sw.seed_hi - sw.seed_lo + 1))));
            for (int i = 0; i < sw.nv && n < (int)sizeof pg.note; i++)
                n += snprintf(pg.note + n, sizeof pg.note - (size_t)n, " %s=%s", sw.v[i].name,
                              sw.v[i].txt[idx[i]]);
        }
        progress_update(&pg, done, 0);
        int status;
        pid_t w = pg.on ? waitpid(-1, &status, WNOHANG) : waitpid(-1, &status, 0);
        if (w == 0) {
            struct timespec ts = {0, 50000000};
            nanosleep(&ts, NULL);
            continue;
        }
        if (w < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (int j = 0; j < sw.jobs; j++)
            if (pids[j] == w) {
                pids[j] = 0;
                running--;
                if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                    done++;
                else
                    failed++;
            }
    }
    progress_end(&pg);
    free(slot);
    free(pids);
    if (failed || done < sw.members) {
        fprintf(stderr,
                "shoal sweep: %lld of %lld members failed; the finished ones are kept (--resume "
                "runs the rest)\n",
                sw.members - done, sw.members);
        return 1;
    }
    if (assemble(&sw, &e))
        return options_fail(&o, "%s", e.message);
    printf("shoal sweep: %lld members (%lld combinations x %llu seeds), %s/sweep.csv\n", sw.members,
           sw.combos, (unsigned long long)(sw.seed_hi - sw.seed_lo + 1), sw.dir);
    return 0;
}
