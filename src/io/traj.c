/* SPDX-License-Identifier: MIT */
/* Trajectories read back (shoal/traj.h): the frames of a manifest, a numbered directory, a
 * (T, N, 6|7) .npy or memory; each state read as doubles and put in ascending id order when
 * it carries ids. shoal verify and the Python package read through here and nowhere else, so
 * they take and refuse the same inputs with the same words. Writing trajectories is the
 * program's (src/app/traj.c); verifying them is shoal_verify_run's (verify_run.c). */
#include "shoal/traj.h"

#include "core/json.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct layout {
    int words, pos, vel, id; /* id -1: none */
} layout;

typedef struct id_row {
    double id;
    size_t row;
} id_row;

enum { SRC_FILES, SRC_ARRAY, SRC_MEMORY };

struct shoal_traj {
    char path[SHOAL_PATH_MAX];
    int kind;
    /* SRC_FILES: the frames' files; .bin dumps with their layout */
    char **files;
    int bin;
    layout lay;
    /* SRC_ARRAY: the (T, N, w) file, read whole; SRC_MEMORY: borrowed */
    shoal_npy_array arr;
    const double *mem;
    size_t mem_n, mem_w;
    size_t count;   /* frames */
    int64_t *steps; /* per frame */
    double *times;  /* per frame, NAN unknown */
    /* the manifest */
    int manifest;
    shoal_model m_model;
    shoal_params m_params;
    double m_dt, m_t0;
    uint64_t m_seed;
    size_t m_count; /* 0: not given */
    /* ids given apart (shoal_traj_set_ids) */
    double *given;
    size_t given_rows, given_n;
    char given_what[256];
    /* the first state read: its row count, name, and its ids sorted (NULL: none) */
    int have_first;
    size_t n;
    char first_name[SHOAL_PATH_MAX];
    double *ref_ids;
    id_row *scratch;
};

/* ---- names and numbers ----------------------------------------------------------------- */

static int ends_with(const char *s, const char *tail)
{
    size_t a = strlen(s), b = strlen(tail);
    return a >= b && strcmp(s + a - b, tail) == 0;
}

/* The number a file name carries: its last run of digits (frame_000012.npy: 12); 0 when it
 * has none or one too long to be a step. */
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

static shoal_status alloc_frames(shoal_traj *t, size_t n, int files, shoal_error *e)
{
    t->count = n;
    t->steps = calloc(n, sizeof *t->steps);
    t->times = malloc(n * sizeof *t->times);
    if (files)
        t->files = calloc(n, sizeof *t->files);
    if (!t->steps || !t->times || (files && !t->files))
        return shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for %zu frames of %s", n,
                               t->path);
    for (size_t i = 0; i < n; i++) {
        t->steps[i] = (int64_t)i;
        t->times[i] = NAN;
    }
    return SHOAL_OK;
}

/* ---- the sources ------------------------------------------------------------------------- */

/* A directory of numbered .npy or .bin files, in number order. */
static shoal_status open_numbered(shoal_traj *t, const char *dir, shoal_error *e)
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
        /* hidden files are no states: a writer's temporaries (.NAME.tmp.XXXXXX) among them */
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
        if (!(list[n].name = strdup(name))) {
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
    if (!st)
        st = alloc_frames(t, n, 1, e);
    for (size_t i = 0; i < n && !st; i++) {
        t->steps[i] = list[i].n;
        if (!(t->files[i] = join_path(dir, list[i].name)))
            st = shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory listing %s", dir);
    }
    t->bin = bin > 0;
    for (size_t i = 0; i < n; i++)
        free(list[i].name);
    free(list);
    return st;
}

/* An integral JSON number in [lo, hi]. */
static int json_integer(const json_value *v, double lo, double hi)
{
    return v && v->type == JSON_NUMBER && v->num == floor(v->num) && v->num >= lo && v->num <= hi;
}

/* The manifest's parameters onto the model's defaults: every value a number the table
 * takes (the spheres: [x, y, z, r] each), or the manifest is refused. */
static shoal_status manifest_params(shoal_traj *t, const char *mpath, const json_value *p,
                                    shoal_error *e)
{
    shoal_params_default(t->m_model, &t->m_params);
    if (!p)
        return SHOAL_OK;
    if (p->type != JSON_OBJECT)
        return shoal_error_set(e, SHOAL_ERR_INPUT, "%s: parameters: expected an object", mpath);
    for (int i = 0; i < p->count; i++) {
        const json_value *val = &p->items[i];
        const char *key = p->keys[i];
        if (strcmp(key, "spheres") == 0) {
            if (val->type != JSON_ARRAY || val->count > SHOAL_MAX_SPHERES)
                return shoal_error_set(e, SHOAL_ERR_INPUT,
                                       "%s: spheres: expected at most %d [x, y, z, radius]", mpath,
                                       SHOAL_MAX_SPHERES);
            for (int k = 0; k < val->count; k++) {
                const json_value *sp = &val->items[k];
                int ok = sp->type == JSON_ARRAY && sp->count == 4;
                for (int c = 0; ok && c < 4; c++)
                    ok = sp->items[c].type == JSON_NUMBER && isfinite(sp->items[c].num);
                if (!ok || !(sp->items[3].num > 0))
                    return shoal_error_set(e, SHOAL_ERR_INPUT,
                                           "%s: sphere %d: expected [x, y, z, radius] of finite "
                                           "numbers, radius > 0",
                                           mpath, k);
                for (int c = 0; c < 3; c++)
                    t->m_params.spheres[k].center[c] = (float)sp->items[c].num;
                t->m_params.spheres[k].radius = (float)sp->items[3].num;
            }
            t->m_params.sphere_count = (float)val->count;
            continue;
        }
        if (val->type != JSON_NUMBER)
            return shoal_error_set(e, SHOAL_ERR_INPUT, "%s: parameter %s: expected a number", mpath,
                                   key);
        shoal_error pe;
        if (shoal_params_set_value(t->m_model, &t->m_params, key, &val->num, 1, &pe))
            return shoal_error_set(e, pe.status, "%s: %s", mpath, pe.message);
    }
    return SHOAL_OK;
}

/* shoal's trajectory directory: manifest.json names the frames, their steps and times, and
 * the run's model, dt, t0, seed and parameters. Every field is checked. */
static shoal_status open_manifest(shoal_traj *t, const char *dir, const char *mpath, shoal_error *e)
{
    json_value m;
    char jerr[SHOAL_PATH_MAX + 64];
    if (json_load_file(mpath, 0, &m, jerr, sizeof jerr) != JSON_OK)
        return shoal_error_set(e, SHOAL_ERR_INPUT, "%s", jerr);
    shoal_status st = SHOAL_OK;
    const json_value *fmt = json_get(&m, "format"), *frames = json_get(&m, "frames");
    const json_value *model = json_get(&m, "model"), *dt = json_get(&m, "dt"),
                     *t0 = json_get(&m, "t0"), *seed = json_get(&m, "seed"),
                     *count = json_get(&m, "count");
    if (m.type != JSON_OBJECT)
        st =
            shoal_error_set(e, SHOAL_ERR_INPUT, "%s: not a trajectory manifest (an object)", mpath);
    else if (fmt && (fmt->type != JSON_STRING || strcmp(fmt->str, "npy") != 0))
        st = shoal_error_set(e, SHOAL_ERR_INPUT,
                             "%s: format '%s': verify reads .npy trajectories (step --out-dir "
                             "without --format vtk)",
                             mpath, fmt->type == JSON_STRING ? fmt->str : "(not a name)");
    else if (!frames || frames->type != JSON_ARRAY || frames->count < 2)
        st = shoal_error_set(e, SHOAL_ERR_INPUT, "%s: fewer than 2 frames (a trajectory needs 2)",
                             mpath);
    else if (!model || model->type != JSON_STRING ||
             shoal_model_parse(model->str, &t->m_model, NULL))
        st = shoal_error_set(e, SHOAL_ERR_INPUT, "%s: the manifest names no valid model", mpath);
    else if (dt && !(dt->type == JSON_NUMBER && isfinite(dt->num) && dt->num > 0))
        st = shoal_error_set(e, SHOAL_ERR_INPUT, "%s: dt: expected a number of seconds > 0", mpath);
    else if (t0 && !(t0->type == JSON_NUMBER && isfinite(t0->num)))
        st = shoal_error_set(e, SHOAL_ERR_INPUT, "%s: t0: expected a number of seconds", mpath);
    else if (seed && !json_integer(seed, 0, 9223372036854775807.0))
        st = shoal_error_set(e, SHOAL_ERR_INPUT,
                             "%s: seed: expected an integer in [0, 9223372036854775807]", mpath);
    else if (count && !json_integer(count, 1, 1e15))
        st = shoal_error_set(e, SHOAL_ERR_INPUT, "%s: count: expected a whole number >= 1", mpath);
    if (!st)
        st = manifest_params(t, mpath, json_get(&m, "parameters"), e);
    if (!st) {
        shoal_sim_desc def = shoal_sim_desc_default();
        t->m_dt = dt ? dt->num : def.dt_s;
        t->m_t0 = t0 ? t0->num : def.t0_s;
        t->m_seed = seed ? (uint64_t)seed->num : def.seed;
        t->m_count = count ? (size_t)count->num : 0;
        st = alloc_frames(t, (size_t)frames->count, 1, e);
    }
    for (size_t i = 0; !st && i < t->count; i++) {
        const json_value *f = &frames->items[i];
        const json_value *step = json_get(f, "step"), *ft = json_get(f, "t"),
                         *file = json_get(f, "file");
        if (!json_integer(step, -1e15, 1e15) || !ft || ft->type != JSON_NUMBER ||
            !isfinite(ft->num) || !file || file->type != JSON_STRING || !file->str[0] ||
            strchr(file->str, '/'))
            st = shoal_error_set(e, SHOAL_ERR_INPUT,
                                 "%s: frame %zu lacks a whole step, a finite t or a file name "
                                 "(in the directory)",
                                 mpath, i);
        else {
            t->steps[i] = (int64_t)step->num;
            t->times[i] = ft->num;
            if (!(t->files[i] = join_path(dir, file->str)))
                st = shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory reading %s", mpath);
        }
    }
    json_free(&m);
    if (!st)
        t->manifest = 1;
    return st;
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
                               "layout '%s': expected vp, pv or S:P:V[:I] (S words a record, "
                               "6..1024; position at word P, velocity at V, non-overlapping; a "
                               "uint32 id at I)",
                               v);
    *l = (layout){w, p, q, n == 4 ? id : -1};
    return SHOAL_OK;
}

shoal_status shoal_traj_open(const char *path, const char *layout_text, shoal_traj **out,
                             shoal_error *err)
{
    *out = NULL;
    if (!path)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "no trajectory named");
    if (strlen(path) >= SHOAL_PATH_MAX - 32)
        return shoal_error_set(err, SHOAL_ERR_IO, "%.200s...: %s", path, strerror(ENAMETOOLONG));
    shoal_traj *t = calloc(1, sizeof *t);
    if (!t)
        return shoal_error_set(err, SHOAL_ERR_NOMEM, "out of memory for a trajectory");
    snprintf(t->path, sizeof t->path, "%s", path);
    shoal_status st = parse_layout(layout_text ? layout_text : "vp", &t->lay, err);
    struct stat sb;
    if (!st && stat(path, &sb) != 0)
        st = shoal_error_set(err, SHOAL_ERR_IO, "%s: %s", path, strerror(errno));
    if (!st && S_ISDIR(sb.st_mode)) {
        t->kind = SRC_FILES;
        char mpath[SHOAL_PATH_MAX];
        snprintf(mpath, sizeof mpath, "%s/manifest.json", path);
        struct stat ms;
        st = stat(mpath, &ms) == 0 ? open_manifest(t, path, mpath, err)
                                   : open_numbered(t, path, err);
    } else if (!st) {
        t->kind = SRC_ARRAY;
        if (!S_ISREG(sb.st_mode))
            st = shoal_error_set(err, SHOAL_ERR_INPUT,
                                 "%s: not a regular file or directory: a trajectory is a (T, N, "
                                 "6) .npy or a directory of states",
                                 path);
        if (!st)
            st = shoal_io_npy_read_array(path, &t->arr, err);
        if (!st && (t->arr.ndim != 3 || (t->arr.dims[2] != 6 && t->arr.dims[2] != 7) ||
                    t->arr.dtype[1] != 'f' || t->arr.dims[0] < 2 || t->arr.dims[1] < 1))
            st = shoal_error_set(err, SHOAL_ERR_INPUT,
                                 "%s: expected a trajectory of shape (T, N, 6) or (T, N, 7), T >= "
                                 "2, float32 or float64 (or a directory of states)",
                                 path);
        if (!st)
            st = alloc_frames(t, t->arr.dims[0], 0, err);
    }
    if (!st && layout_text && !t->bin)
        st = shoal_error_set(err, SHOAL_ERR_INPUT, "layout is for .bin buffer dumps; %s holds none",
                             path);
    if (st) {
        shoal_traj_close(t);
        return st;
    }
    *out = t;
    return SHOAL_OK;
}

shoal_status shoal_traj_wrap(const double *states, size_t frame_count, size_t boid_count,
                             size_t columns, shoal_traj **out, shoal_error *err)
{
    *out = NULL;
    if (frame_count < 2)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "states: at least two states are needed");
    if (boid_count < 1 || (columns != 6 && columns != 7))
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "states: %zu rows of %zu columns: expected N >= 1 rows of 6 "
                               "(px py pz vx vy vz) or 7 (and an id)",
                               boid_count, columns);
    shoal_traj *t = calloc(1, sizeof *t);
    if (!t)
        return shoal_error_set(err, SHOAL_ERR_NOMEM, "out of memory for a trajectory");
    snprintf(t->path, sizeof t->path, "states");
    t->kind = SRC_MEMORY;
    t->mem = states;
    t->mem_n = boid_count;
    t->mem_w = columns;
    shoal_status st = alloc_frames(t, frame_count, 0, err);
    if (st) {
        shoal_traj_close(t);
        return st;
    }
    *out = t;
    return SHOAL_OK;
}

shoal_status shoal_traj_set_ids(shoal_traj *t, const double *ids, size_t id_rows, size_t count,
                                const char *what, shoal_error *err)
{
    if (!what)
        what = "ids";
    if ((id_rows != 1 && id_rows != t->count) || count < 1)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "%s: %zu rows of %zu ids: expected one row for every state or one "
                               "per state (%zu)",
                               what, id_rows, count, t->count);
    double *c = malloc(id_rows * count * sizeof *c);
    if (!c)
        return shoal_error_set(err, SHOAL_ERR_NOMEM, "out of memory for %s", what);
    memcpy(c, ids, id_rows * count * sizeof *c);
    free(t->given);
    t->given = c;
    t->given_rows = id_rows;
    t->given_n = count;
    snprintf(t->given_what, sizeof t->given_what, "%s", what);
    return SHOAL_OK;
}

void shoal_traj_close(shoal_traj *t)
{
    if (!t)
        return;
    for (size_t i = 0; t->files && i < t->count; i++)
        free(t->files[i]);
    free(t->files);
    free(t->steps);
    free(t->times);
    shoal_npy_array_free(&t->arr);
    free(t->given);
    free(t->ref_ids);
    free(t->scratch);
    free(t);
}

size_t shoal_traj_frame_count(const shoal_traj *t) { return t->count; }
int64_t shoal_traj_step(const shoal_traj *t, size_t k) { return k < t->count ? t->steps[k] : -1; }
int shoal_traj_has_manifest(const shoal_traj *t) { return t->manifest; }
double shoal_traj_time(const shoal_traj *t, size_t k) { return k < t->count ? t->times[k] : NAN; }
const char *shoal_traj_path(const shoal_traj *t) { return t->path; }
const double *shoal_traj_ids(const shoal_traj *t) { return t->ref_ids; }

const char *shoal_traj_frame_name(const shoal_traj *t, size_t k, char *buf, size_t size)
{
    if (t->files && k < t->count)
        snprintf(buf, size, "%s", t->files[k]);
    else
        snprintf(buf, size, "state %zu", k);
    return buf;
}

/* ---- reading a state ----------------------------------------------------------------------- */

/* One record-stride buffer file: rows (double) and, with an id word, ids. */
static shoal_status read_bin(const char *path, const layout *l, double **rows, double **ids,
                             size_t *count, shoal_error *e)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return shoal_error_set(e, SHOAL_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    size_t rec = (size_t)l->words * 4;
    if (fstat(fileno(f), &sb) != 0) {
        int er = errno;
        fclose(f);
        return shoal_error_set(e, SHOAL_ERR_IO, "%s: %s", path, strerror(er));
    }
    size_t size = (size_t)sb.st_size;
    if (size == 0 || size % rec != 0) {
        fclose(f);
        return shoal_error_set(e, SHOAL_ERR_INPUT,
                               "%s: %zu bytes is not a whole number of %zu-byte records (layout)",
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

/* Rows of `w` columns (6, or 7 with the id last) as 6-column rows and ids. */
static shoal_status split_rows(const double *src, size_t n, size_t w, double **rows, double **ids,
                               shoal_error *e)
{
    *rows = malloc(n * 6 * sizeof(double));
    *ids = w == 7 ? malloc(n * sizeof(double)) : NULL;
    if (!*rows || (w == 7 && !*ids)) {
        free(*rows);
        free(*ids);
        *rows = *ids = NULL;
        return shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for a state of %zu rows", n);
    }
    for (size_t i = 0; i < n; i++) {
        memcpy(*rows + i * 6, src + i * w, 6 * sizeof(double));
        if (w == 7)
            (*ids)[i] = src[i * w + 6];
    }
    return SHOAL_OK;
}

/* State k as it is stored: rows, its own ids (or NULL), row count. */
static shoal_status load_raw(const shoal_traj *t, size_t k, const char *name, double **rows,
                             double **ids, size_t *count, shoal_error *e)
{
    *rows = *ids = NULL;
    *count = 0;
    if (t->kind == SRC_MEMORY) {
        *count = t->mem_n;
        return split_rows(t->mem + k * t->mem_n * t->mem_w, t->mem_n, t->mem_w, rows, ids, e);
    }
    if (t->kind == SRC_ARRAY) {
        size_t n = t->arr.dims[1], w = t->arr.dims[2];
        *count = n;
        return split_rows(t->arr.data + k * n * w, n, w, rows, ids, e);
    }
    /* a file: a regular one (a FIFO would block the reader, a directory is no state) */
    struct stat sb;
    if (stat(name, &sb) != 0)
        return shoal_error_set(e, SHOAL_ERR_IO, "%s: %s", name, strerror(errno));
    if (!S_ISREG(sb.st_mode))
        return shoal_error_set(e, SHOAL_ERR_INPUT, "%s: not a regular file", name);
    if (t->bin)
        return read_bin(name, &t->lay, rows, ids, count, e);
    shoal_npy_array a;
    shoal_status st = shoal_io_npy_read_array(name, &a, e);
    if (st)
        return st;
    if (a.ndim != 2 || (a.dims[1] != 6 && a.dims[1] != 7) || a.dtype[1] != 'f' || a.dims[0] < 1) {
        char what[96];
        snprintf(what, sizeof what, "%d dimension%s of %s", a.ndim, a.ndim == 1 ? "" : "s",
                 a.dtype);
        shoal_npy_array_free(&a);
        return shoal_error_set(e, SHOAL_ERR_INPUT,
                               "%s: %s, expected a state: float32 or float64 of shape (N, 6), or "
                               "(N, 7) with an id column",
                               name, what);
    }
    *count = a.dims[0];
    st = split_rows(a.data, a.dims[0], a.dims[1], rows, ids, e);
    shoal_npy_array_free(&a);
    return st;
}

static int cmp_id(const void *a, const void *b)
{
    const id_row *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id ? 1 : 0;
}

/* Reorder rows by ascending id: the first state read fixes the ids, every other must hold the
 * same. */
static shoal_status order_by_id(shoal_traj *t, const char *name, double **rows, const double *ids,
                                int first, shoal_error *e)
{
    size_t n = t->n;
    id_row *s = t->scratch;
    for (size_t i = 0; i < n; i++) {
        if (!(ids[i] == floor(ids[i])) || fabs(ids[i]) > 9007199254740992.0)
            return shoal_error_set(e, SHOAL_ERR_INPUT, "%s: row %zu: id %.17g is not an integer",
                                   name, i, ids[i]);
        s[i].id = ids[i];
        s[i].row = i;
    }
    qsort(s, n, sizeof *s, cmp_id);
    for (size_t i = 1; i < n; i++)
        if (s[i].id == s[i - 1].id)
            return shoal_error_set(e, SHOAL_ERR_INPUT, "%s: rows %zu and %zu share the id %.0f",
                                   name, s[i - 1].row, s[i].row, s[i].id);
    for (size_t i = 0; i < n; i++) {
        if (first)
            t->ref_ids[i] = s[i].id;
        else if (t->ref_ids[i] != s[i].id)
            return shoal_error_set(e, SHOAL_ERR_INPUT,
                                   "%s: the ids differ from the first state's (id %.0f here, "
                                   "%.0f there)",
                                   name, s[i].id, t->ref_ids[i]);
    }
    double *r = malloc(n * 6 * sizeof *r);
    if (!r)
        return shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for a state of %zu rows", n);
    for (size_t i = 0; i < n; i++)
        memcpy(r + i * 6, *rows + s[i].row * 6, 6 * sizeof(double));
    free(*rows);
    *rows = r;
    return SHOAL_OK;
}

shoal_status shoal_traj_read(shoal_traj *t, size_t k, double **rows_out, size_t *count_out,
                             shoal_error *err)
{
    *rows_out = NULL;
    *count_out = 0;
    if (k >= t->count)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "%s: no state %zu (it has %zu)", t->path, k,
                               t->count);
    char name[SHOAL_PATH_MAX];
    shoal_traj_frame_name(t, k, name, sizeof name);
    double *rows = NULL, *own = NULL;
    size_t n = 0;
    shoal_status st = load_raw(t, k, name, &rows, &own, &n, err);
    const double *ids = own;
    if (!st && t->given && own)
        st = shoal_error_set(err, SHOAL_ERR_INPUT,
                             "%s: carries ids of its own (an id column or word) and %s were "
                             "given too: give one",
                             name, t->given_what);
    if (!st && t->given) {
        if (t->given_n != n)
            st = shoal_error_set(err, SHOAL_ERR_INPUT,
                                 "%s: expected (%zu,) or (%zu, %zu) ids (the states hold %zu "
                                 "rows), not %zu",
                                 t->given_what, n, t->count, n, n, t->given_n);
        else
            ids = t->given + (t->given_rows > 1 ? k * n : 0);
    }
    if (!st && t->manifest && t->m_count && n != t->m_count)
        st = shoal_error_set(err, SHOAL_ERR_INPUT, "%s: %zu rows, the manifest says %zu", name, n,
                             t->m_count);
    if (!st && t->have_first && n != t->n)
        st = shoal_error_set(err, SHOAL_ERR_INPUT, "%s: %zu rows, the first state has %zu", name, n,
                             t->n);
    if (!st && t->have_first && (ids != NULL) != (t->ref_ids != NULL))
        st = shoal_error_set(err, SHOAL_ERR_INPUT, "%s: %s an id column where %s %s", name,
                             ids ? "has" : "lacks", t->first_name,
                             t->ref_ids ? "has one" : "has none");
    int first = !t->have_first;
    if (!st && first && ids) {
        t->ref_ids = malloc(n * sizeof *t->ref_ids);
        t->scratch = malloc(n * sizeof *t->scratch);
        if (!t->ref_ids || !t->scratch) {
            free(t->ref_ids);
            free(t->scratch);
            t->ref_ids = NULL;
            t->scratch = NULL;
            st = shoal_error_set(err, SHOAL_ERR_NOMEM, "out of memory for %zu ids", n);
        }
    }
    if (!st && first)
        t->n = n;
    if (!st && ids)
        st = order_by_id(t, name, &rows, ids, first, err);
    if (st && first && t->ref_ids) { /* the first state did not hold: nothing is fixed yet */
        free(t->ref_ids);
        free(t->scratch);
        t->ref_ids = NULL;
        t->scratch = NULL;
    }
    free(own);
    if (st) {
        free(rows);
        return st;
    }
    if (first) {
        t->have_first = 1;
        snprintf(t->first_name, sizeof t->first_name, "%s", name);
    }
    *rows_out = rows;
    *count_out = n;
    return SHOAL_OK;
}

/* ---- the desc to verify it with -------------------------------------------------------- */

shoal_status shoal_traj_verify_desc(const shoal_traj *t, const shoal_scene *scene, int model_given,
                                    shoal_model model, shoal_sim_desc *out, shoal_error *err)
{
    shoal_model m = scene ? scene->desc.model : model_given ? model : shoal_sim_desc_default().model;
    if (scene && model_given && model != scene->desc.model)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "model %s contradicts the scene file (model %s)",
                               shoal_model_name(model), shoal_model_name(scene->desc.model));
    if (t->manifest && (model_given || scene) && m != t->m_model)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "%s %s contradicts the trajectory's manifest (model %s)",
                               scene ? "the scene's model" : "model", shoal_model_name(m),
                               shoal_model_name(t->m_model));
    if (t->manifest)
        m = t->m_model;
    *out = shoal_sim_desc_default();
    if (scene) {
        *out = scene->desc;
    } else {
        out->model = m;
        shoal_params_default(m, &out->params);
    }
    if (t->manifest && !scene) {
        out->params = t->m_params;
        out->dt_s = t->m_dt;
        out->seed = t->m_seed;
    }
    if (t->manifest) /* the time of its first frame: t0 is the time of state 0 */
        out->t0_s = t->times[0];
    return SHOAL_OK;
}
