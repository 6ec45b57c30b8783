/* SPDX-License-Identifier: MIT */
/* `shoal verify`: another program's trajectory checked step by step against the rules
 * (shoal/verify.h, docs/VERIFY.md). This file reads the trajectory (shoal's trajectory
 * directories, numbered .npy or Unity .bin files, one (T, N, 6|7) array), matches rows by id,
 * runs the verifier over each consecutive pair and writes the verdict lines, the CSV and the
 * JSON report. The verification itself is the library's. */
#include "app/app.h"
#include "app/options.h"
#include "app/outdir.h"
#include "app/traj.h"
#include "support/json.h"

#include <dirent.h>
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
    {"set", OPT_REPEAT, "NAME=VALUE", NULL, "set a model parameter"},
    {"dt", OPT_VALUE, "DT", "the manifest's, the scene's, else 1/60", "time step in seconds"},
    {"t0", OPT_VALUE, "SECONDS", "the manifest's, the scene's, else 0",
     "simulated time of the first state (heading's targets)"},
    {"seed", OPT_VALUE, "S", "the manifest's, the scene's, else 1", "seed of heading's targets"},
    {"reference", OPT_VALUE, "f32|f64", "f32",
     "the step compared with: shoal's float32 step, or the float64 reference (the other "
     "program's own float32 drift)"},
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

/* ---- the trajectory ------------------------------------------------------------------ */

typedef struct layout {
    int words, pos, vel, id; /* id -1: none */
} layout;

typedef struct source {
    /* files (a directory) or one array */
    char **files;
    size_t count;
    int bin;
    layout lay;
    shoal_npy_array arr; /* (T, N, 6|7) when files is NULL */
    /* the manifest, when there is one */
    int manifest;
    long long *steps;
    double *times;
} source;

static void source_free(source *s)
{
    for (size_t i = 0; i < s->count && s->files; i++)
        free(s->files[i]);
    free(s->files);
    free(s->steps);
    free(s->times);
    shoal_npy_array_free(&s->arr);
    memset(s, 0, sizeof *s);
}

static int ends_with(const char *s, const char *tail)
{
    size_t a = strlen(s), b = strlen(tail);
    return a >= b && strcmp(s + a - b, tail) == 0;
}

/* The number a file name carries: its last run of digits (frame_000012.npy: 12). */
static int name_number(const char *name, long long *out)
{
    const char *last = NULL;
    for (const char *p = name; *p; p++)
        if (*p >= '0' && *p <= '9' && (p == name || !(p[-1] >= '0' && p[-1] <= '9')))
            last = p;
    if (!last)
        return 0;
    long long v = 0;
    for (const char *p = last; *p >= '0' && *p <= '9'; p++) {
        if (v > 100000000000000LL)
            return 0;
        v = v * 10 + (*p - '0');
    }
    *out = v;
    return 1;
}

typedef struct numbered {
    long long n;
    char *name;
} numbered;

static int cmp_numbered(const void *a, const void *b)
{
    const numbered *x = a, *y = b;
    return x->n < y->n ? -1 : x->n > y->n ? 1 : strcmp(x->name, y->name);
}

static char *join_path(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

/* A directory of numbered .npy or .bin files, in number order. */
static shoal_status source_numbered(source *s, const char *dir, shoal_error *e)
{
    DIR *d = opendir(dir);
    if (!d)
        return shoal_error_set(e, SHOAL_ERR_IO, "%s: cannot open: %s", dir, strerror(errno));
    numbered *list = NULL;
    size_t n = 0, cap = 0;
    int npy = 0, bin = 0;
    shoal_status st = SHOAL_OK;
    struct dirent *de;
    while (!st && (de = readdir(d))) {
        const char *name = de->d_name;
        int is_npy = ends_with(name, ".npy"), is_bin = ends_with(name, ".bin");
        if (name[0] == '.' || (!is_npy && !is_bin))
            continue;
        long long num;
        if (!name_number(name, &num)) {
            st = shoal_error_set(e, SHOAL_ERR_INPUT,
                                 "%s/%s: no step number in the name (states of a directory are "
                                 "ordered by the last number in their names)",
                                 dir, name);
            break;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            numbered *nl = realloc(list, cap * sizeof *nl);
            if (!nl) {
                st = shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory listing %s", dir);
                break;
            }
            list = nl;
        }
        list[n].n = num;
        list[n].name = strdup(name);
        if (!list[n].name) {
            st = shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory listing %s", dir);
            break;
        }
        n++;
        npy += is_npy;
        bin += is_bin;
    }
    closedir(d);
    if (!st && npy && bin)
        st = shoal_error_set(e, SHOAL_ERR_INPUT,
                             "%s: holds both .npy and .bin states; keep one kind per directory",
                             dir);
    if (!st && n < 2)
        st = shoal_error_set(e, SHOAL_ERR_INPUT,
                             "%s: %zu state%s: a trajectory needs at least 2 (.npy or .bin files "
                             "numbered by step)",
                             dir, n, n == 1 ? "" : "s");
    if (!st) {
        qsort(list, n, sizeof *list, cmp_numbered);
        for (size_t i = 1; i < n && !st; i++)
            if (list[i].n == list[i - 1].n)
                st = shoal_error_set(e, SHOAL_ERR_INPUT, "%s: %s and %s carry the same number %lld",
                                     dir, list[i - 1].name, list[i].name, list[i].n);
    }
    if (!st && !(s->files = calloc(n, sizeof *s->files)))
        st = shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory listing %s", dir);
    for (size_t i = 0; i < n && !st; i++)
        if (!(s->files[i] = join_path(dir, list[i].name)))
            st = shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory listing %s", dir);
    if (!st) {
        s->count = n;
        s->bin = bin > 0;
    }
    for (size_t i = 0; i < n; i++)
        free(list[i].name);
    free(list);
    return st;
}

/* shoal's trajectory directory: manifest.json names the frames, their steps and times, and
 * the run's model, dt, t0, seed and parameters. */
static shoal_status source_manifest(source *s, const char *dir, const json_value *m, shoal_error *e)
{
    const json_value *fmt = json_get(m, "format"), *frames = json_get(m, "frames");
    if (fmt && fmt->type == JSON_STRING && strcmp(fmt->str, "npy") != 0)
        return shoal_error_set(e, SHOAL_ERR_INPUT,
                               "%s/manifest.json: format '%s': verify reads .npy trajectories "
                               "(step --out-dir without --format vtk)",
                               dir, fmt->str);
    if (!frames || frames->type != JSON_ARRAY || frames->count < 2)
        return shoal_error_set(e, SHOAL_ERR_INPUT,
                               "%s/manifest.json: fewer than 2 frames (a trajectory needs 2)", dir);
    size_t n = (size_t)frames->count;
    s->files = calloc(n, sizeof *s->files);
    s->steps = calloc(n, sizeof *s->steps);
    s->times = calloc(n, sizeof *s->times);
    if (!s->files || !s->steps || !s->times)
        return shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory reading %s", dir);
    s->count = n;
    for (size_t i = 0; i < n; i++) {
        const json_value *f = &frames->items[i];
        const json_value *step = json_get(f, "step"), *t = json_get(f, "t"),
                         *file = json_get(f, "file");
        if (!step || step->type != JSON_NUMBER || !t || t->type != JSON_NUMBER || !file ||
            file->type != JSON_STRING || strchr(file->str, '/'))
            return shoal_error_set(e, SHOAL_ERR_INPUT,
                                   "%s/manifest.json: frame %zu lacks step, t or a file name", dir,
                                   i);
        s->steps[i] = (long long)step->num;
        s->times[i] = t->num;
        if (!(s->files[i] = join_path(dir, file->str)))
            return shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory reading %s", dir);
    }
    s->manifest = 1;
    return SHOAL_OK;
}

static shoal_status parse_layout(const char *v, layout *l, shoal_error *e)
{
    if (strcmp(v, "vp") == 0) {
        *l = (layout){6, 3, 0, -1};
        return SHOAL_OK;
    }
    if (strcmp(v, "pv") == 0) {
        *l = (layout){6, 0, 3, -1};
        return SHOAL_OK;
    }
    int w, p, q, id = -1, used = 0;
    int n = sscanf(v, "%d:%d:%d%n:%d%n", &w, &p, &q, &used, &id, &used);
    if (n < 3 || v[used] != '\0' || w < 6 || w > 1024 || p < 0 || q < 0 || p + 3 > w || q + 3 > w ||
        (p < q + 3 && q < p + 3) || (n == 4 && (id < 0 || id >= w)) ||
        (n == 4 && ((id >= p && id < p + 3) || (id >= q && id < q + 3))))
        return shoal_error_set(e, SHOAL_ERR_INPUT,
                               "--layout '%s': expected vp, pv or S:P:V[:I] (S words a record, "
                               "6..1024; position at word P, velocity at V, non-overlapping; a "
                               "uint32 id at I)",
                               v);
    *l = (layout){w, p, q, n == 4 ? id : -1};
    return SHOAL_OK;
}

/* One record-stride buffer file: rows (double) and, with an id word, ids. */
static shoal_status read_bin(const char *path, const layout *l, double **rows, double **ids,
                             size_t *count, shoal_error *e)
{
    *rows = NULL;
    *ids = NULL;
    *count = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return shoal_error_set(e, SHOAL_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fclose(f);
        return shoal_error_set(e, SHOAL_ERR_INPUT,
                               "%s: not a regular file: a buffer dump has no header, so its size "
                               "must come from the file system",
                               path);
    }
    size_t rec = (size_t)l->words * 4, size = (size_t)sb.st_size;
    if (size == 0 || size % rec != 0) {
        fclose(f);
        return shoal_error_set(e, SHOAL_ERR_INPUT,
                               "%s: %zu bytes is not a whole number of %zu-byte records (--layout)",
                               path, size, rec);
    }
    size_t n = size / rec;
    unsigned char *buf = malloc(size);
    double *r = malloc(n * 6 * sizeof *r);
    double *id = l->id >= 0 ? malloc(n * sizeof *id) : NULL;
    shoal_status st = SHOAL_OK;
    if (!buf || !r || (l->id >= 0 && !id))
        st = shoal_error_set(e, SHOAL_ERR_NOMEM, "%s: out of memory", path);
    else if (fread(buf, 1, size, f) != size)
        st = shoal_error_set(e, SHOAL_ERR_IO, "%s: read error", path);
    fclose(f);
    for (size_t i = 0; !st && i < n; i++) {
        const unsigned char *b = buf + i * rec;
        for (int c = 0; c < 6; c++) {
            int w = c < 3 ? l->pos + c : l->vel + c - 3;
            const unsigned char *q = b + 4 * w;
            uint32_t u =
                (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
            float x;
            memcpy(&x, &u, 4);
            r[i * 6 + (size_t)c] = x;
        }
        if (id) {
            const unsigned char *q = b + 4 * l->id;
            id[i] = (double)((uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 |
                             (uint32_t)q[3] << 24);
        }
    }
    free(buf);
    if (st) {
        free(r);
        free(id);
        return st;
    }
    *rows = r;
    *ids = id;
    *count = n;
    return SHOAL_OK;
}

/* Frame k: rows (N x 6, doubles) and ids (N, or NULL), the name to quote. */
typedef struct frame {
    double *rows, *ids;
    size_t count;
    char name[4200];
} frame;

static void frame_free(frame *f)
{
    free(f->rows);
    free(f->ids);
    f->rows = f->ids = NULL;
}

static shoal_status load_frame(const source *s, size_t k, frame *f, shoal_error *e)
{
    frame_free(f);
    if (!s->files) {
        const shoal_npy_array *a = &s->arr;
        size_t n = a->dims[1], w = a->dims[2];
        snprintf(f->name, sizeof f->name, "state %zu", k);
        f->rows = malloc(n * 6 * sizeof(double));
        f->ids = w == 7 ? malloc(n * sizeof(double)) : NULL;
        if (!f->rows || (w == 7 && !f->ids))
            return shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for a state");
        const double *src = a->data + k * n * w;
        for (size_t i = 0; i < n; i++) {
            memcpy(f->rows + i * 6, src + i * w, 6 * sizeof(double));
            if (f->ids)
                f->ids[i] = src[i * w + 6];
        }
        f->count = n;
        return SHOAL_OK;
    }
    snprintf(f->name, sizeof f->name, "%s", s->files[k]);
    if (s->bin)
        return read_bin(s->files[k], &s->lay, &f->rows, &f->ids, &f->count, e);
    shoal_npy_array a;
    shoal_status st = shoal_io_npy_read_array(s->files[k], &a, e);
    if (st)
        return st;
    if (a.ndim != 2 || (a.dims[1] != 6 && a.dims[1] != 7) || a.dtype[1] != 'f') {
        char what[96];
        snprintf(what, sizeof what, "%d dimension%s of %s", a.ndim, a.ndim == 1 ? "" : "s",
                 a.dtype);
        shoal_npy_array_free(&a);
        return shoal_error_set(e, SHOAL_ERR_INPUT,
                               "%s: %s, expected a state: float32 or float64 of shape (N, 6), or "
                               "(N, 7) with an id column",
                               s->files[k], what);
    }
    size_t n = a.dims[0], w = a.dims[1];
    f->count = n;
    if (w == 6) {
        f->rows = a.data;
        a.data = NULL;
    } else {
        f->rows = malloc(n * 6 * sizeof(double));
        f->ids = malloc(n * sizeof(double));
        if (!f->rows || !f->ids) {
            shoal_npy_array_free(&a);
            return shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for a state");
        }
        for (size_t i = 0; i < n; i++) {
            memcpy(f->rows + i * 6, a.data + i * 7, 6 * sizeof(double));
            f->ids[i] = a.data[i * 7 + 6];
        }
    }
    shoal_npy_array_free(&a);
    return SHOAL_OK;
}

/* ---- ids --------------------------------------------------------------------------- */

typedef struct id_row {
    double id;
    size_t row;
} id_row;

static int cmp_id(const void *a, const void *b)
{
    const id_row *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id ? 1 : 0;
}

/* Reorder f's rows by ascending id. ref_ids: the first state's sorted ids (NULL: this is the
 * first; then they are written there). */
static shoal_status order_by_id(frame *f, const double *ids, double *ref_ids, int first,
                                id_row *scratch, shoal_error *e)
{
    size_t n = f->count;
    for (size_t i = 0; i < n; i++) {
        if (!(ids[i] == floor(ids[i])) || fabs(ids[i]) > 9007199254740992.0)
            return shoal_error_set(e, SHOAL_ERR_INPUT, "%s: row %zu: id %.17g is not an integer",
                                   f->name, i, ids[i]);
        scratch[i].id = ids[i];
        scratch[i].row = i;
    }
    qsort(scratch, n, sizeof *scratch, cmp_id);
    for (size_t i = 1; i < n; i++)
        if (scratch[i].id == scratch[i - 1].id)
            return shoal_error_set(e, SHOAL_ERR_INPUT, "%s: rows %zu and %zu share the id %.0f",
                                   f->name, scratch[i - 1].row, scratch[i].row, scratch[i].id);
    for (size_t i = 0; i < n; i++) {
        if (first)
            ref_ids[i] = scratch[i].id;
        else if (ref_ids[i] != scratch[i].id)
            return shoal_error_set(e, SHOAL_ERR_INPUT,
                                   "%s: the ids differ from the first state's (id %.0f here, "
                                   "%.0f there)",
                                   f->name, scratch[i].id, ref_ids[i]);
    }
    double *r = malloc(n * 6 * sizeof *r);
    if (!r)
        return shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for a state");
    for (size_t i = 0; i < n; i++)
        memcpy(r + i * 6, f->rows + scratch[i].row * 6, 6 * sizeof(double));
    free(f->rows);
    f->rows = r;
    return SHOAL_OK;
}

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

static void csv_header(FILE *f)
{
    fprintf(f, "step,t,count,pos_max,pos_median,vel_max,vel_median,ratio_max,ratio_median,"
               "beyond,ties,unverifiable,verdict,term,param,contract,fitted_lo,fitted_hi,"
               "strictness,diagnosed,explained,beyond_after,detail\n");
}

static void csv_num(FILE *f, double x)
{
    if (isfinite(x))
        fprintf(f, ",%.9g", x);
    else
        fprintf(f, ",%s", x > 0 ? "inf" : x < 0 ? "-inf" : "nan");
}

static void csv_row(FILE *f, const shoal_verify_report *r, long long step)
{
    fprintf(f, "%lld,%.17g,%zu", step, r->t, r->count);
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
}

static void json_step(FILE *f, const shoal_verify_report *r, long long step, const double *ids,
                      int first)
{
    fprintf(f, "%s\n    {\"step\": %lld, \"t\": ", first ? "" : ",", step);
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
    json_write_string(f, shoal_verdict_name(r->verdict));
    fputs(", \"term\": ", f);
    json_write_string(f, term_or_none(r->term));
    fputs(", \"param\": ", f);
    json_write_string(f, r->param);
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
    json_write_string(f, r->detail);
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
        json_write_string(f, term_or_none(b->tie_term));
        fputs(", \"explained_by\": ", f);
        json_write_string(f, term_or_none(b->explained_by));
        fputs(", \"residual_v\": [", f);
        for (int c = 0; c < 3; c++) {
            if (c)
                fputs(", ", f);
            jnum(f, b->residual[c]);
        }
        fputs("], \"term_dv\": {", f);
        int k = 0;
        for (int t = 1; t < SHOAL_TERM_COUNT; t++) {
            const double *d = b->term_dv[t];
            if (d[0] == 0 && d[1] == 0 && d[2] == 0)
                continue;
            fprintf(f, "%s", k++ ? ", " : "");
            json_write_string(f, shoal_term_name((shoal_term)t));
            fputs(": [", f);
            for (int c = 0; c < 3; c++) {
                if (c)
                    fputs(", ", f);
                jnum(f, d[c]);
            }
            fputc(']', f);
        }
        fputs("}}", f);
    }
    fputs("]}", f);
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

/* The model, parameters, dt, t0 and seed: defaults < the manifest < the scene < options. */
static int verify_desc(const opt_values *o, const json_value *man, shoal_sim_desc *d,
                       shoal_scene *scene)
{
    shoal_error e;
    shoal_model m;
    int rc = app_scene_model(o, scene, &m);
    if (rc)
        return rc;
    const char *scene_path = options_get(o, "scene");
    *d = shoal_sim_desc_default();
    if (man) {
        const json_value *mm = json_get(man, "model");
        shoal_model mf;
        if (!mm || mm->type != JSON_STRING || shoal_model_parse(mm->str, &mf, &e))
            return options_fail(o, "%s: the manifest names no valid model",
                                options_get(o, "trajectory"));
        if ((options_given(o, "model") || scene_path) && mf != m)
            return options_fail(o, "%s %s contradicts the trajectory's manifest (model %s)",
                                scene_path ? "the scene's model" : "--model", shoal_model_name(m),
                                shoal_model_name(mf));
        m = mf;
    }
    if (scene_path) {
        *d = scene->desc;
    } else {
        d->model = m;
        shoal_params_default(m, &d->params);
    }
    if (man && !scene_path) {
        const json_value *p = json_get(man, "parameters");
        for (int i = 0; p && p->type == JSON_OBJECT && i < p->count; i++) {
            const json_value *val = &p->items[i];
            if (strcmp(p->keys[i], "spheres") == 0 && val->type == JSON_ARRAY) {
                d->params.sphere_count = 0;
                for (int k = 0; k < val->count && k < SHOAL_MAX_SPHERES; k++) {
                    const json_value *sp = &val->items[k];
                    if (sp->type != JSON_ARRAY || sp->count != 4)
                        continue;
                    for (int c = 0; c < 3; c++)
                        d->params.spheres[k].center[c] = (float)sp->items[c].num;
                    d->params.spheres[k].radius = (float)sp->items[3].num;
                    d->params.sphere_count = (float)(k + 1);
                }
                continue;
            }
            if (val->type != JSON_NUMBER)
                continue;
            char num[64];
            snprintf(num, sizeof num, "%.17g", val->num);
            if (shoal_params_set(m, &d->params, p->keys[i], num, &e))
                return options_fail(o, "%s/manifest.json: %s", options_get(o, "trajectory"),
                                    e.message);
        }
        const json_value *dt = json_get(man, "dt"), *seed = json_get(man, "seed");
        if (dt && dt->type == JSON_NUMBER)
            d->dt_s = dt->num;
        if (seed && seed->type == JSON_NUMBER)
            d->seed = (uint64_t)seed->num;
    }
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
    shoal_error e;
    source src;
    memset(&src, 0, sizeof src);
    if ((rc = parse_layout(options_get(&o, "layout"), &src.lay, &e) ? 2 : 0))
        return app_fail_status(&o, &e);
    const char *ref_name = options_get(&o, "reference");
    shoal_verify_reference ref;
    if (strcmp(ref_name, "f32") == 0)
        ref = SHOAL_VERIFY_F32;
    else if (strcmp(ref_name, "f64") == 0)
        ref = SHOAL_VERIFY_F64;
    else
        return options_fail(&o, "--reference: '%s' (expected f32 or f64)", ref_name);
    long long worst = 8, first = 0, steps = -1, threads = 0;
    if ((options_given(&o, "worst") &&
         (rc = options_int(&o, "worst", 1, SHOAL_VERIFY_MAX_WORST, &worst))) ||
        (options_given(&o, "first") && (rc = options_int(&o, "first", 0, 1000000000LL, &first))) ||
        (options_given(&o, "steps") && (rc = options_int(&o, "steps", 1, 1000000000LL, &steps))) ||
        (options_given(&o, "threads") && (rc = options_int(&o, "threads", 0, 256, &threads))))
        return rc;

    /* the trajectory */
    struct stat sb;
    json_value man;
    memset(&man, 0, sizeof man);
    shoal_status st = SHOAL_OK;
    if (stat(path, &sb) != 0)
        return options_fail(&o, "--trajectory %s: %s", path, strerror(errno));
    if (S_ISDIR(sb.st_mode)) {
        char mpath[4200];
        snprintf(mpath, sizeof mpath, "%s/manifest.json", path);
        struct stat ms;
        if (stat(mpath, &ms) == 0) {
            char jerr[256];
            if (json_load_file(mpath, 0, &man, jerr, sizeof jerr) != JSON_OK)
                return options_fail(&o, "%s", jerr);
            st = source_manifest(&src, path, &man, &e);
        } else {
            st = source_numbered(&src, path, &e);
        }
    } else {
        st = shoal_io_npy_read_array(path, &src.arr, &e);
        if (!st && (src.arr.ndim != 3 || (src.arr.dims[2] != 6 && src.arr.dims[2] != 7) ||
                    src.arr.dtype[1] != 'f' || src.arr.dims[0] < 2))
            st = shoal_error_set(&e, SHOAL_ERR_INPUT,
                                 "%s: expected a trajectory of shape (T, N, 6) or (T, N, 7), T >= "
                                 "2, float32 or float64 (or a directory of states)",
                                 path);
        if (!st)
            src.count = src.arr.dims[0];
    }
    if (st) {
        json_free(&man);
        source_free(&src);
        return app_fail_status(&o, &e);
    }
    if (options_given(&o, "layout") && !src.bin) {
        json_free(&man);
        source_free(&src);
        return options_fail(&o, "--layout is for .bin buffer dumps; %s holds none", path);
    }
    shoal_sim_desc d;
    shoal_scene scene;
    if ((rc = verify_desc(&o, src.manifest ? &man : NULL, &d, &scene))) {
        json_free(&man);
        source_free(&src);
        return rc;
    }
    json_free(&man);
    if ((size_t)first + 1 >= src.count) {
        size_t c = src.count;
        source_free(&src);
        return options_fail(&o, "--first %lld: the trajectory has %zu states", first, c);
    }
    size_t pairs = src.count - 1 - (size_t)first;
    if (steps > 0 && (size_t)steps < pairs)
        pairs = (size_t)steps;
    /* consecutive steps only (a manifest says which) */
    for (size_t k = (size_t)first; src.manifest && k < (size_t)first + pairs; k++)
        if (src.steps[k + 1] - src.steps[k] != 1) {
            long long a = src.steps[k], b = src.steps[k + 1];
            source_free(&src);
            return options_fail(&o,
                                "%s: frames of steps %lld and %lld are %lld steps apart; verify "
                                "compares consecutive steps (write the trajectory with --every 1)",
                                path, a, b, b - a);
        }
    if (src.manifest && !options_given(&o, "t0"))
        d.t0_s = src.times[first];
    else if (first > 0)
        d.t0_s += (double)first * d.dt_s;

    /* ids and targets */
    shoal_npy_array ids_arr, tg;
    memset(&ids_arr, 0, sizeof ids_arr);
    memset(&tg, 0, sizeof tg);
    if (options_given(&o, "ids") &&
        (st = shoal_io_npy_read_array(options_get(&o, "ids"), &ids_arr, &e))) {
        source_free(&src);
        return app_fail_status(&o, &e);
    }
    if (options_given(&o, "targets") &&
        (st = shoal_io_npy_read_array(options_get(&o, "targets"), &tg, &e))) {
        source_free(&src);
        shoal_npy_array_free(&ids_arr);
        return app_fail_status(&o, &e);
    }
    if (tg.data && !((tg.ndim == 2 && tg.dims[1] == 3) ||
                     (tg.ndim == 3 && tg.dims[2] == 3 && tg.dims[0] == src.count))) {
        source_free(&src);
        shoal_npy_array_free(&ids_arr);
        shoal_npy_array_free(&tg);
        return options_fail(&o, "--targets %s: expected (K, 3) or (T, K, 3) with T = %zu states",
                            options_get(&o, "targets"), src.count);
    }

    frame fa, fb;
    memset(&fa, 0, sizeof fa);
    memset(&fb, 0, sizeof fb);
    shoal_verify *v = NULL;
    id_row *scratch = NULL;
    double *ref_ids = NULL;
    FILE *csv = NULL, *js = NULL;
    membuf csv_buf = {NULL, 0}, js_buf = {NULL, 0};
    int have_ids = 0, exit_rc = 0;
    size_t counts[SHOAL_VERDICT_COUNT] = {0};
    long long first_rule = -1;
    shoal_term first_term = SHOAL_TERM_NONE;
    progress pg;
    progress_begin(&pg, "shoal verify", (long long)pairs, options_given(&o, "quiet"));

    st = load_frame(&src, (size_t)first, &fa, &e);
    size_t n = fa.count;
    if (!st && ids_arr.data &&
        !((ids_arr.ndim == 1 && ids_arr.dims[0] == n) ||
          (ids_arr.ndim == 2 && ids_arr.dims[0] == src.count && ids_arr.dims[1] == n)))
        st = shoal_error_set(&e, SHOAL_ERR_INPUT,
                             "--ids %s: expected (%zu,) or (%zu, %zu) ids (the states hold %zu "
                             "rows)",
                             options_get(&o, "ids"), n, src.count, n, n);
    if (!st) {
        d.boid_count = n;
        d.thread_count = (int)threads;
        shoal_verify_desc vd = shoal_verify_desc_default();
        vd.sim = d;
        vd.reference = ref;
        vd.worst_count = (int)worst;
        st = shoal_verify_create(&vd, &v, &e);
    }
    if (!st && scene.mesh_count > 0) {
        shoal_sim_desc one = d;
        one.boid_count = 1;
        shoal_sim *holder;
        if (!(st = shoal_sim_create(&one, &holder, &e))) {
            if (!(st = shoal_scene_add_obstacles(&scene, holder, &e)))
                st = shoal_verify_copy_obstacles(v, holder, &e);
            shoal_sim_destroy(holder);
        }
    }
    if (!st && !(scratch = malloc(n * sizeof *scratch)))
        st = shoal_error_set(&e, SHOAL_ERR_NOMEM, "out of memory for %zu rows", n);
    if (!st && !(ref_ids = malloc(n * sizeof *ref_ids)))
        st = shoal_error_set(&e, SHOAL_ERR_NOMEM, "out of memory for %zu rows", n);
    if (!st && options_get(&o, "csv")) {
        if (!(csv = open_memstream(&csv_buf.data, &csv_buf.len)))
            st = shoal_error_set(&e, SHOAL_ERR_NOMEM, "out of memory for the CSV report");
        else
            csv_header(csv);
    }
    if (!st && options_get(&o, "json")) {
        if (!(js = open_memstream(&js_buf.data, &js_buf.len))) {
            st = shoal_error_set(&e, SHOAL_ERR_NOMEM, "out of memory for the JSON report");
        } else {
            fprintf(js, "{\n  \"shoal\": \"%s\",\n  \"trajectory\": ", SHOAL_VERSION_STRING);
            json_write_string(js, path);
            fputs(",\n  \"model\": ", js);
            json_write_string(js, shoal_model_name(d.model));
            fprintf(js,
                    ",\n  \"count\": %zu,\n  \"dt\": %.17g,\n  \"t0\": %.17g,\n  \"seed\": %llu,"
                    "\n  \"reference\": \"%s\",\n  \"parameters\": ",
                    n, d.dt_s, d.t0_s, (unsigned long long)d.seed, ref_name);
            app_json_params(js, d.model, &d.params);
            fputs(",\n  \"steps\": [", js);
        }
    }
    /* the first state's ids */
    if (!st) {
        const double *ids0 =
            ids_arr.data ? ids_arr.data + (ids_arr.ndim == 2 ? first * n : 0) : fa.ids;
        have_ids = ids0 != NULL;
        if (have_ids)
            st = order_by_id(&fa, ids0, ref_ids, 1, scratch, &e);
    }
    if (!st)
        printf("shoal verify: %s, %zu boids, %zu step%s from state %lld, reference %s "
               "(tolerance: the float32 rounding bound of each boid's step, docs/VERIFY.md)\n",
               shoal_model_name(d.model), n, pairs, pairs == 1 ? "" : "s", first,
               ref == SHOAL_VERIFY_F32 ? "float32 (shoal's step)" : "float64");
    for (size_t k = 0; !st && k < pairs; k++) {
        size_t ka = (size_t)first + k, kb = ka + 1;
        if ((st = load_frame(&src, kb, &fb, &e)))
            break;
        if (fb.count != n) {
            st = shoal_error_set(&e, SHOAL_ERR_INPUT, "%s: %zu rows, the first state has %zu",
                                 fb.name, fb.count, n);
            break;
        }
        const double *idsb =
            ids_arr.data ? ids_arr.data + (ids_arr.ndim == 2 ? kb * n : 0) : fb.ids;
        if (have_ids != (idsb != NULL)) {
            st =
                shoal_error_set(&e, SHOAL_ERR_INPUT, "%s: %s an id column where %s %s", fb.name,
                                idsb ? "has" : "lacks", fa.name, have_ids ? "has one" : "has none");
            break;
        }
        if (have_ids && (st = order_by_id(&fb, idsb, ref_ids, 0, scratch, &e)))
            break;
        if (tg.data) {
            size_t kcount = tg.ndim == 2 ? tg.dims[0] : tg.dims[1];
            const double *xyz = tg.data + (tg.ndim == 3 ? ka * kcount * 3 : 0);
            if ((st = shoal_verify_set_targets(v, xyz, kcount, &e)))
                break;
        }
        shoal_verify_report r;
        if ((st = shoal_verify_step(v, fa.rows, fb.rows, &r, &e))) {
            /* name the states rather than the verifier's own count */
            char msg[sizeof e.message];
            snprintf(msg, sizeof msg, "%s", e.message);
            shoal_error_set(&e, st, "%s -> %s: %s", fa.name, fb.name, msg);
            break;
        }
        long long step_no = src.manifest ? src.steps[ka] : (long long)ka;
        print_step(&r, step_no, have_ids ? ref_ids : NULL, options_given(&o, "quiet"), ref_name);
        counts[r.verdict]++;
        if (r.verdict == SHOAL_VERDICT_RULE && first_rule < 0) {
            first_rule = step_no;
            first_term = r.term;
        }
        if (csv)
            csv_row(csv, &r, step_no);
        if (js)
            json_step(js, &r, step_no, have_ids ? ref_ids : NULL, k == 0);
        frame t = fa;
        fa = fb;
        fb = t;
        progress_update(&pg, (long long)k + 1, 0);
    }
    progress_end(&pg);
    /* the trajectory's verdict: a threshold tie is float32 behaving as float32 does, so the
     * program agrees; drift and a rule say otherwise */
    const char *overall = counts[SHOAL_VERDICT_RULE]    ? "rule differs"
                          : counts[SHOAL_VERDICT_DRIFT] ? "drift"
                                                        : "agrees";
    if (!st) {
        printf("summary: %zu steps: %zu agree, %zu drift, %zu threshold tie, %zu rule differs; "
               "verdict: %s",
               pairs, counts[0], counts[1], counts[2], counts[3], overall);
        if (first_rule >= 0)
            printf(": %s (first at step %lld)",
                   first_term ? shoal_term_name(first_term) : "no single parameter", first_rule);
        printf("\n");
        exit_rc = counts[SHOAL_VERDICT_RULE] ? 1 : 0;
    }
    if (js && !st) {
        fprintf(js,
                "\n  ],\n  \"summary\": {\"steps\": %zu, \"agrees\": %zu, \"drift\": %zu, "
                "\"threshold_tie\": %zu, \"rule_differs\": %zu, \"verdict\": \"%s\", "
                "\"term\": ",
                pairs, counts[0], counts[1], counts[2], counts[3], overall);
        json_write_string(js, first_rule >= 0 ? term_or_none(first_term) : "");
        fputs(", \"first_rule_step\": ", js);
        if (first_rule >= 0)
            fprintf(js, "%lld", first_rule);
        else
            fputs("null", js);
        fputs("}\n}\n", js);
    }
    int csv_failed = csv && fclose(csv) != 0; /* both closed, whatever the first gave */
    int js_failed = js && fclose(js) != 0;
    int mem_failed = csv_failed || js_failed;
    if (!st && mem_failed)
        st = shoal_error_set(&e, SHOAL_ERR_NOMEM, "out of memory for the reports");
    /* the reports only once the report on stdout was written: a lost report writes no file */
    if (!st && app_stdout_check("verify"))
        exit_rc = -2;
    if (!st && exit_rc != -2) {
        app_staged staged[2];
        int nstaged = 0;
        if (csv)
            st = app_stage_file(&staged[nstaged++], options_get(&o, "csv"), write_membuf, &csv_buf,
                                &e);
        if (!st && js)
            st = app_stage_file(&staged[nstaged++], options_get(&o, "json"), write_membuf, &js_buf,
                                &e);
        if (!st)
            st = app_stage_commit_all(staged, nstaged, &e);
        for (int i = 0; i < nstaged; i++)
            app_stage_abort(&staged[i]);
    }
    free(csv_buf.data);
    free(js_buf.data);
    frame_free(&fa);
    frame_free(&fb);
    shoal_verify_destroy(v);
    free(scratch);
    free(ref_ids);
    shoal_npy_array_free(&ids_arr);
    shoal_npy_array_free(&tg);
    source_free(&src);
    if (exit_rc == -2)
        return 2;
    if (st)
        return app_fail_status(&o, &e);
    return exit_rc;
}
