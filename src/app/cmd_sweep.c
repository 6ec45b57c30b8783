/* SPDX-License-Identifier: MIT */
/* `shoal sweep`: an ensemble over a parameter grid and a range of seeds. Every combination
 * of the --vary values times every seed is one member: the model's initial state from that
 * seed, K steps, the flock statistics (shoal/stats.h) at steps 0, E, 2E, ... and K. Members
 * run in child processes, J at a time, the threads shared out; each writes its rows to
 * DIR/members/member_NNNNNN.csv atomically, so a killed sweep keeps what finished and
 * --resume runs only the rest. DIR/sweep.csv (header + members in order) is assembled at the
 * end: its bytes depend on the options alone, never on J, T or interruptions.
 * Under mpirun the members go to the ranks instead (member k to rank k mod R, run in the
 * rank's own process, one at a time, on its threads); rank 0 owns DIR (lock, spec,
 * manifest) and assembles sweep.csv: the same bytes. */
#include "app/app.h"
#include "app/options.h"
#include "app/outdir.h"
#include "app/traj.h"
#include "mpi_app.h"
#include "shoal/system.h"
#include "shoal/stats.h"
#include "shoal/sweep.h"
#include "support/digest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

#define SWEEP_MAX_VARY SHOAL_SWEEP_MAX_VARY
#define SWEEP_MAX_MEMBERS SHOAL_SWEEP_MAX_MEMBERS

static const opt_spec sweep_opts[] = {
    {"model", OPT_VALUE, "M", OPT_MODEL_DEFAULT, APP_MODEL_HELP},
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
    {"threads", OPT_VALUE, "T", "0",
     "threads in all (under mpirun: per rank), 0: all cores (results do not depend on it)"},
    {"jobs", OPT_VALUE, "J", "1",
     "members run at once, each with T / J threads (not under mpirun)"},
    {"resume", OPT_FLAG, NULL, NULL, "go on with a killed sweep in DIR (same options)"},
    {"quiet", OPT_FLAG, NULL, NULL, "no progress line (shown only when stderr is a terminal)"},
};

static const char *sweep_usage =
    "--model M [--scene F.ini] --vary NAME=a:b:step|v1,v2,... [--vary ...] --seeds S1..S2\n"
    "       [--count N] --steps K --every E --out DIR [--threads T] [--jobs J] [--resume]";

/* A file the sweep reads (its scene, a mesh the scene names): its bytes, read once by the
 * sweep before any member starts (members are forked: they use these very bytes, so a file
 * edited during the sweep cannot reach half of them) and their SHA-256 for sweep.spec. */
typedef struct sweep_input {
    unsigned char *data;
    size_t size;
    char sha[65];
} sweep_input;

typedef struct sweep {
    shoal_sim_desc base;
    shoal_scene scene;
    sweep_input scene_file;
    sweep_input mesh[SHOAL_SCENE_MAX_MESHES];
    shoal_sweep *lib; /* the grid, each member's desc and run, the rows (shoal/sweep.h) */
    int nv;
    uint64_t seed_lo, seed_hi;
    long long combos, members, steps, every;
    int threads_per_member, jobs, ranks;
    double radius;
    const char *dir;
} sweep;

static void member_path(const sweep *sw, long long k, char *buf, size_t n)
{
    snprintf(buf, n, "%s/members/member_%06lld.csv", sw->dir, k);
}

#define SWEEP_STAT_COLUMNS 9

/* The first columns of every row of member k: "member,seed,value,value,..." (its length). */
static int member_prefix(const sweep *sw, long long k, char *buf, size_t size)
{
    long long nseeds = (long long)(sw->seed_hi - sw->seed_lo) + 1;
    int n = snprintf(buf, size, "%lld,%llu", k,
                     (unsigned long long)(sw->seed_lo + (uint64_t)(k % nseeds)));
    for (int i = 0; i < sw->nv && n < (int)size; i++)
        n += snprintf(buf + n, size - (size_t)n, ",%s",
                      shoal_sweep_member_value(sw->lib, (uint64_t)k, (size_t)i));
    return n < (int)size ? n : (int)size - 1;
}

/* How many rows a member has: steps 0, E, 2E, ... and K (the library's schedule). */
static long long next_sample_count(const sweep *sw)
{
    return (long long)shoal_sweep_sample_count(sw->lib);
}

/* One member, in a child process: the library runs it (from the scene's bytes the sweep
 * read: shoal_sweep_set_mesh_bytes) and formats its rows; returns the exit code. */
static int run_member(const sweep *sw, long long k)
{
    shoal_error e;
    shoal_atomic_file af;
    memset(&af, 0, sizeof af);
    int rc = 0;
    size_t n = shoal_sweep_sample_count(sw->lib);
    shoal_sweep_sample *samples = malloc(n * sizeof *samples);
    if (!samples) {
        shoal_error_set(&e, SHOAL_ERR_NOMEM, "out of memory for %zu samples", n);
        rc = 2;
        goto fail;
    }
    if (shoal_sweep_run_member(sw->lib, (uint64_t)k, sw->threads_per_member, samples, n, &e)) {
        rc = app_exit_code(e.status);
        goto fail;
    }
    char path[4300];
    member_path(sw, k, path, sizeof path);
    if (shoal_io_atomic_open(&af, path, &e)) {
        rc = 2;
        goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        char row[4096];
        shoal_sweep_format_sample(sw->lib, &samples[i], row, sizeof row);
        fprintf(af.file, "%s\n", row);
    }
    if (shoal_io_atomic_commit(&af, &e)) {
        rc = 2;
        goto fail;
    }
    free(samples);
    return 0;
fail:
    shoal_io_atomic_abort(&af);
    fprintf(stderr, "shoal sweep: member %lld: %s\n", k, e.message);
    free(samples);
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
    /* what the scene's files hold, not only their names: an edited scene or mesh is a
     * different sweep (--resume refuses it) */
    fprintf(f, ", \"scene_sha256\": \"%s\", \"meshes\": [", scene_path ? sw->scene_file.sha : "");
    for (int i = 0; i < sw->scene.mesh_count; i++) {
        fprintf(f, "%s{\"name\": ", i ? ", " : "");
        json_write_string(f, sw->scene.meshes[i].name);
        fprintf(f, ", \"file\": ");
        json_write_string(f, sw->scene.meshes[i].path);
        fprintf(f, ", \"sha256\": \"%s\"}", sw->mesh[i].sha);
    }
    fprintf(f, "]");
    fprintf(f,
            ", \"count\": %zu, \"steps\": %lld, \"every\": %lld, \"dt\": %.17g, \"t0\": %.17g, "
            "\"seeds\": [%llu, %llu], \"radius\": %.17g, \"vary\": {",
            sw->base.boid_count, sw->steps, sw->every, sw->base.dt_s, sw->base.t0_s,
            (unsigned long long)sw->seed_lo, (unsigned long long)sw->seed_hi, sw->radius);
    for (int i = 0; i < sw->nv; i++) {
        fprintf(f, "%s", i ? ", " : "");
        json_write_string(f, shoal_sweep_vary_name(sw->lib, (size_t)i));
        fprintf(f, ": [");
        for (size_t j = 0; j < shoal_sweep_vary_value_count(sw->lib, (size_t)i); j++)
            fprintf(f, "%s%s", j ? ", " : "", shoal_sweep_vary_value(sw->lib, (size_t)i, j));
        fprintf(f, "]");
    }
    fprintf(f, "}, \"base_parameters\": ");
    app_json_params(f, sw->base.model, &sw->base.params);
    fprintf(f, "}\n");
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
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
    if (sw->ranks > 1)
        fprintf(f, ",\n  \"ranks\": %d", sw->ranks);
    fprintf(f, ",\n  \"jobs\": %d,\n  \"threads_per_member\": %d,\n  \"sweep\": %.*s,\n", sw->jobs,
            sw->threads_per_member, (int)strcspn(spec, "\n"), spec);
    char header[4096];
    shoal_sweep_format_header(sw->lib, header, sizeof header);
    fprintf(f, "  \"columns\": \"%s\",\n  \"members\": [", header);
    for (long long k = 0; k < sw->members; k++) {
        shoal_sim_desc d;
        shoal_error me;
        shoal_sweep_member_desc(sw->lib, (uint64_t)k, sw->threads_per_member, &d, &me);
        fprintf(f, "%s\n    {\"member\": %lld, \"seed\": %llu, \"parameters\": ", k ? "," : "", k,
                (unsigned long long)d.seed);
        app_json_params(f, d.model, &d.params);
        fprintf(f, "}");
    }
    fprintf(f, "\n  ]\n}\n");
    return shoal_io_atomic_commit(&af, e);
}

/* ---- member files: checked whole before they are reused ------------------------------ */

/* A whole regular file into memory (at most 1 GiB). 0, or -1 with errno (EISDIR, EFBIG ...). */
static int read_whole(const char *path, unsigned char **data, size_t *size)
{
    *data = NULL;
    *size = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (1 << 30)) {
        int err = S_ISDIR(st.st_mode) ? EISDIR : !S_ISREG(st.st_mode) ? EINVAL : EFBIG;
        close(fd);
        errno = err;
        return -1;
    }
    size_t cap = (size_t)st.st_size + 1, n = 0;
    unsigned char *buf = malloc(cap);
    if (!buf) {
        close(fd);
        errno = ENOMEM;
        return -1;
    }
    for (;;) {
        if (n == cap) { /* it grew meanwhile */
            if (cap > (1u << 30)) {
                free(buf);
                close(fd);
                errno = EFBIG;
                return -1;
            }
            unsigned char *g = realloc(buf, cap * 2);
            if (!g) {
                free(buf);
                close(fd);
                errno = ENOMEM;
                return -1;
            }
            buf = g;
            cap *= 2;
        }
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int err = errno;
            free(buf);
            close(fd);
            errno = err;
            return -1;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    close(fd);
    *data = buf;
    *size = n;
    return 0;
}

/* One number of a member row at *p, ending at `end` (',' or '\n'): 1 and *p past it. */
static int row_number(const char **p, const char *lim, char end, int integer)
{
    const char *q = *p;
    if (q >= lim || *q == end || *q == ' ' || *q == '\t')
        return 0;
    char *stop;
    if (integer) {
        if (*q < '0' || *q > '9')
            return 0;
        (void)strtoull(q, &stop, 10);
    } else {
        (void)strtod(q, &stop);
    }
    if (stop == q || stop >= lim || *stop != end)
        return 0;
    *p = stop + 1;
    return 1;
}

/* Is `buf` (len bytes) exactly what member k writes: one row per sample (steps 0, E, 2E, ...
 * and K), each with this member's id, seed and values, the sample's step, then t and the
 * nine statistics as numbers, nothing else? NULL if so, else the reason. */
static const char *member_rows_check(const sweep *sw, long long k, const char *buf, size_t len,
                                     char *why, size_t why_size)
{
    char prefix[2048];
    int plen = member_prefix(sw, k, prefix, sizeof prefix);
    const char *p = buf, *lim = buf + len;
    long long row = 0, rows = next_sample_count(sw);
    for (long long done = 0;; row++) {
        done = shoal_sweep_sample_step(sw->lib, (size_t)row);
        char head[64];
        int hlen = snprintf(head, sizeof head, ",%lld,", done);
        if ((size_t)(lim - p) < (size_t)(plen + hlen) || memcmp(p, prefix, (size_t)plen) != 0 ||
            memcmp(p + plen, head, (size_t)hlen) != 0) {
            if (p >= lim)
                snprintf(why, why_size, "ends after %lld of its %lld rows", row,
                         next_sample_count(sw));
            else
                snprintf(why, why_size, "row %lld is not member %lld's row of step %lld", row, k,
                         done);
            return why;
        }
        p += plen + hlen;
        /* t, polarization, milling, mean_speed, mean_nn_distance, group_count (an integer),
         * largest_group_fraction, extent_x, extent_y, extent_z */
        for (int c = 0; c < 1 + SWEEP_STAT_COLUMNS; c++)
            if (!row_number(&p, lim, c == SWEEP_STAT_COLUMNS ? '\n' : ',', c == 5)) {
                snprintf(why, why_size, "row %lld (step %lld): column %d is not a number", row,
                         done, 2 + sw->nv + 2 + c);
                return why;
            }
        if (row + 1 >= rows)
            break;
    }
    if (p != lim) {
        snprintf(why, why_size, "more than its %lld rows", row + 1);
        return why;
    }
    return NULL;
}

/* The member file at `path`, read and checked (member_rows_check). 0 and *data (malloc'ed)
 * when whole, else 1 with the reason in why. */
static int member_file_load(const sweep *sw, long long k, const char *path, unsigned char **data,
                            size_t *size, char *why, size_t why_size)
{
    if (read_whole(path, data, size) != 0) {
        snprintf(why, why_size, "cannot be read: %s", strerror(errno));
        return 1;
    }
    if (member_rows_check(sw, k, (const char *)*data, *size, why, why_size)) {
        free(*data);
        *data = NULL;
        return 1;
    }
    return 0;
}

/* DIR/sweep.csv: the header, then every member's rows in member order, each member file
 * checked again as it is copied. Staged in *af: committed by the caller. */
static shoal_status assemble(const sweep *sw, shoal_atomic_file *af, shoal_error *e)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/sweep.csv", sw->dir);
    shoal_status st = shoal_io_atomic_open(af, path, e);
    if (st)
        return st;
    FILE *f = af->file;
    char header[4096];
    shoal_sweep_format_header(sw->lib, header, sizeof header);
    fprintf(f, "%s\n", header);
    for (long long k = 0; k < sw->members; k++) {
        char mp[4300], why[256];
        unsigned char *data;
        size_t n;
        member_path(sw, k, mp, sizeof mp);
        if (member_file_load(sw, k, mp, &data, &n, why, sizeof why)) {
            shoal_io_atomic_abort(af);
            return shoal_error_set(e, SHOAL_ERR_IO, "%s: %s (changed during the sweep?)", mp, why);
        }
        size_t put = fwrite(data, 1, n, f);
        free(data);
        if (put != n) {
            int err = errno;
            shoal_io_atomic_abort(af);
            return shoal_error_set(e, SHOAL_ERR_IO, "%s: cannot write: %s", path, strerror(err));
        }
    }
    return SHOAL_OK;
}

static int file_exists(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0;
}

/* --seeds S1..S2 or S: each bound read as init reads --seed (0 .. 2^63 - 1). */
static int parse_seeds(const opt_values *o, sweep *sw)
{
    const char *s = options_get(o, "seeds");
    const char *dots = strstr(s, "..");
    long long a, b;
    char first[64];
    const char *lo_text = s, *hi_text = NULL;
    if (dots) {
        if ((size_t)(dots - s) >= sizeof first)
            return options_fail(o, "--seeds '%s': expected S1..S2 or S", s);
        snprintf(first, sizeof first, "%.*s", (int)(dots - s), s);
        lo_text = first;
        hi_text = dots + 2;
    }
    const long long max = 9223372036854775807LL;
    int bad = options_int_text(lo_text, 0, max, &a);
    if (!bad && hi_text)
        bad = options_int_text(hi_text, 0, max, &b);
    else
        b = a;
    if (bad == 1)
        return options_fail(o, "--seeds: '%s' is not an integer or S1..S2",
                            hi_text && !options_int_text(lo_text, 0, max, &a) ? hi_text : lo_text);
    if (bad == 2)
        return options_fail(o, "--seeds: '%s' is out of range [0, %lld]",
                            hi_text && !options_int_text(lo_text, 0, max, &a) ? hi_text : lo_text,
                            max);
    if (b < a)
        return options_fail(o, "--seeds '%s': empty range (S1 > S2)", s);
    sw->seed_lo = (uint64_t)a;
    sw->seed_hi = (uint64_t)b;
    if ((uint64_t)(b - a) >= (uint64_t)SWEEP_MAX_MEMBERS)
        return options_fail(o, "--seeds '%s': too many seeds", s);
    return 0;
}

/* The scene file and the meshes it names, read once (sweep_input); SHOAL_ERR_IO naming the
 * file when one cannot be read. */
static shoal_status read_inputs(const opt_values *o, sweep *sw, shoal_error *e)
{
    const char *scene = options_get(o, "scene");
    if (!scene)
        return SHOAL_OK;
    if (read_whole(scene, &sw->scene_file.data, &sw->scene_file.size) != 0)
        return shoal_error_set(e, SHOAL_ERR_IO, "--scene %s: cannot read: %s", scene,
                               strerror(errno));
    sha256_hex(sw->scene_file.data, sw->scene_file.size, sw->scene_file.sha);
    for (int i = 0; i < sw->scene.mesh_count; i++) {
        sweep_input *in = &sw->mesh[i];
        const shoal_scene_mesh *m = &sw->scene.meshes[i];
        if (read_whole(m->path, &in->data, &in->size) != 0)
            return shoal_error_set(e, SHOAL_ERR_IO, "%s: [mesh %s]: %s: cannot read: %s", scene,
                                   m->name, m->path, strerror(errno));
        sha256_hex(in->data, in->size, in->sha);
    }
    return SHOAL_OK;
}

static void free_inputs(sweep *sw)
{
    free(sw->scene_file.data);
    for (int i = 0; i < SHOAL_SCENE_MAX_MESHES; i++)
        free(sw->mesh[i].data);
    shoal_sweep_destroy(sw->lib);
    sw->lib = NULL;
}

/* Members that have failed or not run, for the closing line. */
typedef struct sweep_tally {
    long long finished, failed, worst_rc;
} sweep_tally;

static int sweep_run(const opt_values *o, sweep *sw, sweep_tally *t);

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
    if (strcmp(sw.dir, OPTIONS_OUT_NONE) ==
        0) /* '-' writes nothing elsewhere; a sweep is its files */
        return options_fail(&o, "--out -: a sweep writes a directory (sweep.csv, manifest.json)");
    if ((rc = options_int(&o, "steps", 0, 1000000000LL, &sw.steps)))
        return rc;
    sw.every = sw.steps >= 10 ? sw.steps / 10 : 1;
    if (options_given(&o, "every") && (rc = options_int(&o, "every", 1, 1000000000LL, &sw.every)))
        return rc;
    if (options_given(&o, "dt") && (rc = options_double(&o, "dt", 1e-12, 1e6, &sw.base.dt_s)))
        return rc;
    /* the limits of step --threads: a member never gets more than a step may have */
    if ((rc = options_int(&o, "threads", 0, SHOAL_MAX_THREADS, &threads)) ||
        (rc = options_int(&o, "jobs", 1, 1024, &jobs)))
        return rc;
    if ((rc = parse_seeds(&o, &sw)))
        return rc;
    shoal_error e;
    if (shoal_sweep_create(&sw.base, &sw.scene, &sw.lib, &e))
        return app_fail_status(&o, &e);
    for (int i = 0; i < o.repeat_count; i++) {
        if (strcmp(o.specs[o.repeat_of[i]].name, "vary") != 0)
            continue;
        if (sw.nv == SWEEP_MAX_VARY)
            return options_fail(&o, "more than %d --vary options", SWEEP_MAX_VARY);
        /* the library's messages name the spec as "vary ...": the option is --vary */
        if (shoal_sweep_vary(sw.lib, o.repeat[i], &e))
            return options_fail(&o, "%s%s", strncmp(e.message, "vary ", 5) ? "" : "--", e.message);
        sw.nv++;
    }
    sw.combos = (long long)shoal_sweep_combination_count(sw.lib);
    sw.members = sw.combos * (long long)(sw.seed_hi - sw.seed_lo + 1);
    if (sw.members > SWEEP_MAX_MEMBERS)
        return options_fail(&o, "%lld members: more than %lld", sw.members, SWEEP_MAX_MEMBERS);
    sw.radius = shoal_params_interaction_radius(sw.base.model, &sw.base.params);
    if (options_given(&o, "radius") && (rc = options_double(&o, "radius", 0, 1e30, &sw.radius)))
        return rc;
    int total = threads > 0 ? (int)threads : shoal_system_cpu_count();
    sw.jobs = (int)jobs;
    sw.threads_per_member = total / sw.jobs > 0 ? total / sw.jobs : 1;
    sw.ranks = mpi_running() ? mpi_size() : 1;
    if (sw.ranks > 1) {
        /* each rank runs its members one at a time on its own threads: --threads per rank
         * (0: OpenMP's default, as the launcher set it), no child processes */
        if (options_given(&o, "jobs") && jobs != 1)
            return options_fail(&o,
                                "--jobs %lld: under mpirun each rank runs one member at a "
                                "time (use more ranks)",
                                jobs);
        sw.threads_per_member = (int)threads;
    }
    if (shoal_sweep_set_seeds(sw.lib, sw.seed_lo, sw.seed_hi, &e) ||
        shoal_sweep_set_steps(sw.lib, sw.steps, sw.every, &e) ||
        shoal_sweep_set_radius(sw.lib, sw.radius, &e))
        return app_fail_status(&o, &e);
    /* every member's parameter set must be valid: checked before anything is written */
    for (long long k = 0; k < sw.combos; k++) {
        shoal_sim_desc d;
        if (shoal_sweep_member_desc(sw.lib,
                                    (uint64_t)(k * (long long)(sw.seed_hi - sw.seed_lo + 1)),
                                    sw.threads_per_member, &d, &e))
            return options_fail(&o, "member %lld: %s", k, e.message);
    }
    /* under mpirun every rank reads them (the first that cannot is every rank's error) */
    if (mpi_agree(read_inputs(&o, &sw, &e), &e)) {
        free_inputs(&sw);
        return app_fail_status(&o, &e);
    }
    /* the members use the bytes read now, not the files (which may change meanwhile) */
    for (int i = 0; i < sw.scene.mesh_count; i++)
        if (shoal_sweep_set_mesh_bytes(sw.lib, (size_t)i, sw.mesh[i].data, sw.mesh[i].size, &e)) {
            free_inputs(&sw);
            return app_fail_status(&o, &e);
        }
    sweep_tally t = {0, 0, 0};
    rc = sweep_run(&o, &sw, &t);
    free_inputs(&sw);
    return rc;
}

static int sweep_open(const opt_values *o, sweep *sw, const char *spec, size_t spec_len,
                      app_dir_lock *lock, char created[4096], char members_dir[4300]);
static int sweep_members_ranks(const opt_values *o, sweep *sw, sweep_tally *t,
                               const char *members_dir);
static int sweep_members_forked(const opt_values *o, sweep *sw, sweep_tally *t,
                                const char *members_dir, app_dir_lock *lock);
static int sweep_finish(const opt_values *o, sweep *sw, sweep_tally *t, app_dir_lock *lock);

/* The directory (locked for the whole sweep), the spec, the members, sweep.csv. */
static int sweep_run(const opt_values *o, sweep *sw, sweep_tally *t)
{
    size_t spec_len;
    char *spec = sweep_spec(sw, options_get(o, "scene"), &spec_len);
    int rc = spec ? 0 : options_fail(o, "out of memory");
    if (sw->ranks > 1) {
        /* every rank read the same inputs and options: the spec holds them (and the scene's
         * and meshes' SHA-256) */
        shoal_error e;
        if (!rc && mpi_same(spec, spec_len,
                            "the sweep's options or scene files differ from rank 0's (every "
                            "rank must read the same files)",
                            &e))
            rc = app_fail_status(o, &e);
        rc = mpi_any(rc) ? (rc ? rc : 2) : 0;
    }
    if (rc) {
        free(spec);
        return rc;
    }
    app_dir_lock lock;
    char created[4096], members_dir[4300];
    snprintf(members_dir, sizeof members_dir, "%s/members", sw->dir);
    /* under mpirun rank 0 owns DIR: the lock, the spec, the manifest, sweep.csv */
    int owner = sw->ranks == 1 || mpi_rank() == 0;
    rc = owner ? sweep_open(o, sw, spec, spec_len, &lock, created, members_dir) : 0;
    free(spec);
    if (sw->ranks > 1)
        mpi_broadcast(&rc, sizeof rc);
    if (rc)
        return rc;
    if (sw->ranks > 1)
        rc = sweep_members_ranks(o, sw, t, members_dir);
    else
        rc = sweep_members_forked(o, sw, t, members_dir, &lock);
    if (rc)
        return rc;
    rc = owner ? sweep_finish(o, sw, t, &lock) : 0;
    if (sw->ranks > 1)
        mpi_broadcast(&rc, sizeof rc);
    return rc;
}

/* DIR made (with parents) and locked for the whole sweep, its sweep.spec checked against
 * spec (--resume) or written, what killed sweeps left removed, members/ made, the manifest
 * written. 0 (lock held; created: the highest directory made, members_dir: DIR/members), or
 * the exit code after printing (nothing held). */
static int sweep_open(const opt_values *o, sweep *sw, const char *spec, size_t spec_len,
                      app_dir_lock *lock, char created[4096], char members_dir[4300])
{
    shoal_error e;
    /* one sweep at a time in DIR: the lock is taken before DIR is looked at, and held (also
     * by the members) until the end */
    if (app_dir_create("--out", sw->dir, created, 4096, &e))
        return app_fail_status(o, &e);
    if (app_dir_lock_take(lock, sw->dir, &e)) {
        app_dir_uncreate(sw->dir, created);
        return options_fail(o, "--out %s", e.message);
    }
    int rc = 0;
    char path[4300];
    snprintf(path, sizeof path, "%s/sweep.spec", sw->dir);
    snprintf(members_dir, 4300, "%s/members", sw->dir);
    int resume = options_given(o, "resume");
    if (file_exists(path)) {
        if (!resume) {
            rc = options_fail(o,
                              "--out %s holds a sweep already: add --resume to finish it, or "
                              "choose another directory",
                              sw->dir);
        } else {
            unsigned char *old;
            size_t n;
            int same =
                read_whole(path, &old, &n) == 0 && n == spec_len && memcmp(old, spec, n) == 0;
            if (!same)
                rc = options_fail(o,
                                  "--resume: %s holds a different sweep (%s differs from these "
                                  "options, the scene or its meshes)",
                                  sw->dir, path);
            free(old);
        }
    } else {
        /* member files with no spec belong to no sweep this command could check them by */
        DIR *md = opendir(members_dir);
        struct dirent *de;
        while (!rc && md && (de = readdir(md)))
            if (strncmp(de->d_name, "member_", 7) == 0)
                rc = options_fail(o,
                                  "--out %s: members/ holds %s but there is no sweep.spec: it "
                                  "is no sweep this command can finish; choose another "
                                  "directory",
                                  sw->dir, de->d_name);
        if (md)
            closedir(md);
    }
    if (rc) {
        app_dir_lock_release(lock);
        app_dir_uncreate(sw->dir, created);
        return rc;
    }
    /* what killed sweeps left (temporaries of sweep.csv, manifest.json, sweep.spec and of
     * members): no other sweep writes these names while the lock is held (only these: a
     * command writing another file into DIR takes no lock) */
    app_dir_clean_temps(sw->dir, ".sweep.csv.tmp.");
    app_dir_clean_temps(sw->dir, ".manifest.json.tmp.");
    app_dir_clean_temps(sw->dir, ".sweep.spec.tmp.");
    app_dir_clean_temps(members_dir, ".member_");
    /* A new sweep that cannot write its spec or manifest (a full disk) leaves nothing: the
     * spec, members/ and DIR are removed again if this run made them (a --resume keeps
     * the sweep it found). */
    struct stat mst;
    int members_made = stat(members_dir, &mst) != 0, spec_made = !file_exists(path);
    shoal_atomic_file af;
    int failed = 0;
    if (traj_mkdir(members_dir, &e) || shoal_io_atomic_open(&af, path, &e)) {
        rc = options_fail(o, "--out %s", e.message);
        failed = 1;
        spec_made = 0;
    } else {
        fwrite(spec, 1, spec_len, af.file);
        if (shoal_io_atomic_commit(&af, &e)) {
            rc = options_fail(o, "%s", e.message);
            failed = 1;
            spec_made = 0;
        } else if (write_manifest(sw, spec, &e)) {
            rc = options_fail(o, "%s", e.message);
            failed = 1;
        }
    }
    if (!failed)
        return 0;
    if (spec_made)
        (void)unlink(path);
    if (members_made)
        (void)rmdir(members_dir);
    app_dir_lock_release(lock);
    if (spec_made || !file_exists(path))
        app_dir_uncreate(sw->dir, created);
    return rc;
}

/* Member k's file is there and whole (a finished member of a killed sweep): 1. A damaged
 * one is removed (it runs again) with one line; a directory stays (the member's write then
 * fails). */
static int member_reusable(const sweep *sw, long long k, progress *pg)
{
    char mp[4300];
    member_path(sw, k, mp, sizeof mp);
    if (!file_exists(mp))
        return 0;
    char why[256];
    unsigned char *data;
    size_t n;
    if (!member_file_load(sw, k, mp, &data, &n, why, sizeof why)) {
        free(data);
        return 1;
    }
    progress_end(pg);
    options_error("sweep", "member %lld: %s %s: running it again", k, mp, why);
    struct stat st;
    if (lstat(mp, &st) == 0 && !S_ISDIR(st.st_mode))
        unlink(mp);
    return 0;
}

/* Under mpirun: member k on rank k mod R, in this process, one at a time, each on the rank's
 * threads (a member that fails stops this rank's list). The tally is every rank's. Returns
 * 0 (the owner then finishes). */
static int sweep_members_ranks(const opt_values *o, sweep *sw, sweep_tally *t,
                               const char *members_dir)
{
    (void)members_dir;
    const long long R = sw->ranks, me = mpi_rank();
    progress pg;
    progress_begin(&pg, "shoal sweep (rank 0's members)", (sw->members - me + R - 1) / R,
                   options_given(o, "quiet") || me != 0);
    long long finished = 0, failed = 0, worst = 0, done = 0;
    for (long long k = me; k < sw->members && !failed; k += R, done++) {
        progress_update(&pg, done, 0);
        if (member_reusable(sw, k, &pg)) {
            finished++;
            continue;
        }
        int mrc = run_member(sw, k); /* prints its own line on failure */
        if (mrc == 0) {
            finished++;
        } else {
            failed++;
            worst = mrc > worst ? mrc : worst;
        }
    }
    progress_end(&pg);
    t->finished = mpi_sum(finished);
    t->failed = mpi_sum(failed);
    t->worst_rc = mpi_max(worst);
    return 0;
}

/* The members in J child processes at a time (the one-process sweep). Fills t; returns 0,
 * or the exit code after printing when the sweep could not go on (lock released). */
static int sweep_members_forked(const opt_values *o, sweep *sw, sweep_tally *t,
                                const char *members_dir, app_dir_lock *lock)
{
    /* members: J child processes at a time; the parent never enters OpenMP before fork */
    progress pg;
    progress_begin(&pg, "shoal sweep", sw->members, options_given(o, "quiet"));
    long long next = 0;
    int running = 0;
    long long *slot = calloc((size_t)sw->jobs, sizeof *slot);
    pid_t *pids = calloc((size_t)sw->jobs, sizeof *pids);
    if (!slot || !pids) {
        free(slot);
        free(pids);
        app_dir_lock_release(lock);
        return options_fail(o, "out of memory");
    }
    /* a signal to the sweep goes to its members too, and the sweep waits for them to remove
     * their temporaries before it dies (signals.c) */
    app_signal_children(pids, sw->jobs);
    const pid_t parent = getpid();
    fflush(stdout);
    fflush(stderr);
    while (t->finished + t->failed < sw->members) {
        while (running < sw->jobs && next < sw->members && !t->failed) {
            char mp[4300];
            member_path(sw, next, mp, sizeof mp);
            if (member_reusable(sw, next, &pg)) { /* finished before a kill, whole */
                next++;
                t->finished++;
                continue;
            }
            int j = 0;
            while (pids[j])
                j++;
            sigset_t set, old;
            sigemptyset(&set);
            sigaddset(&set, SIGINT);
            sigaddset(&set, SIGTERM);
            sigaddset(&set, SIGHUP);
            sigaddset(&set, SIGQUIT);
            pthread_sigmask(SIG_BLOCK, &set, &old); /* no signal between fork and pids[j] */
            pid_t pid = fork();
            if (pid < 0) {
                int err = errno;
                pthread_sigmask(SIG_SETMASK, &old, NULL);
                t->failed++;
                t->worst_rc = 2;
                options_fail(o, "member %lld: cannot start a process (fork): %s", next,
                             strerror(err));
                break;
            }
            if (pid == 0) {
                app_signal_after_fork();
                prctl(PR_SET_PDEATHSIG, SIGKILL); /* a killed sweep takes its members along */
                pthread_sigmask(SIG_SETMASK, &old, NULL);
                if (getppid() != parent)
                    _exit(1);
                _exit(run_member(sw, next));
            }
            pids[j] = pid;
            slot[j] = next++;
            running++;
            pthread_sigmask(SIG_SETMASK, &old, NULL);
        }
        if (running == 0) {
            if (next >= sw->members || t->failed)
                break;
            continue;
        }
        /* the lowest member running, for the progress line */
        long long cur = -1;
        for (int j = 0; j < sw->jobs; j++)
            if (pids[j] && (cur < 0 || slot[j] < cur))
                cur = slot[j];
        if (pg.on && cur >= 0) {
            int n = snprintf(
                pg.note, sizeof pg.note, "member %lld seed %llu", cur,
                (unsigned long long)(sw->seed_lo +
                                     (uint64_t)(cur % (long long)(sw->seed_hi - sw->seed_lo + 1))));
            for (int i = 0; i < sw->nv && n < (int)sizeof pg.note; i++)
                n += snprintf(pg.note + n, sizeof pg.note - (size_t)n, " %s=%s",
                              shoal_sweep_vary_name(sw->lib, (size_t)i),
                              shoal_sweep_member_value(sw->lib, (uint64_t)cur, (size_t)i));
        }
        progress_update(&pg, t->finished, 0);
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
        for (int j = 0; j < sw->jobs; j++)
            if (pids[j] == w) {
                pids[j] = 0;
                running--;
                if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
                    t->finished++;
                } else {
                    t->failed++;
                    /* a member's own failure printed its line; a killed one cannot */
                    int mrc = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
                    if (WIFSIGNALED(status)) {
                        /* killed from outside (SIGKILL: it could not remove its temporary;
                         * the sweep, holding the directory, does) */
                        char prefix[64];
                        snprintf(prefix, sizeof prefix, ".member_%06lld.csv.tmp.", slot[j]);
                        app_dir_clean_temps(members_dir, prefix);
                        progress_end(&pg);
                        options_fail(o, "member %lld: killed by signal %d (%s)", slot[j],
                                     WTERMSIG(status), strsignal(WTERMSIG(status)));
                    }
                    if (mrc > t->worst_rc)
                        t->worst_rc = mrc;
                }
            }
    }
    app_signal_children(NULL, 0);
    progress_end(&pg);
    free(slot);
    free(pids);
    return 0;
}

/* After the members: the closing line of a sweep with members left (exit 1 or 2), or
 * sweep.csv assembled, the summary printed and sweep.csv renamed into place. Releases the
 * lock. Returns the exit code. */
static int sweep_finish(const opt_values *o, sweep *sw, sweep_tally *t, app_dir_lock *lock)
{
    shoal_error e;
    if (t->failed || t->finished < sw->members) {
        options_fail(o,
                     "%lld of %lld members finished, %lld failed, %lld not started; the "
                     "finished ones are kept (--resume runs the rest)",
                     t->finished, sw->members, t->failed, sw->members - t->finished - t->failed);
        app_dir_lock_release(lock);
        /* 2 when a member could not write its file or read its input (what the user fixes),
         * 1 when one produced a non-finite value (or died) */
        return t->worst_rc == 2 ? 2 : 1;
    }
    /* sweep.csv staged, the summary printed, then sweep.csv renamed into place: a sweep that
     * fails (a full disk, a lost stdout) replaces no sweep.csv */
    shoal_atomic_file csv;
    memset(&csv, 0, sizeof csv);
    if (assemble(sw, &csv, &e)) {
        app_dir_lock_release(lock);
        return options_fail(o, "%s", e.message);
    }
    printf("shoal sweep: %lld members (%lld combinations x %llu seeds), %s/sweep.csv\n",
           sw->members, sw->combos, (unsigned long long)(sw->seed_hi - sw->seed_lo + 1), sw->dir);
    if (app_stdout_check("sweep")) {
        shoal_io_atomic_abort(&csv);
        app_dir_lock_release(lock);
        return 2;
    }
    if (shoal_io_atomic_commit(&csv, &e)) {
        app_dir_lock_release(lock);
        return options_fail(o, "%s", e.message);
    }
    app_dir_lock_release(lock);
    return 0;
}
