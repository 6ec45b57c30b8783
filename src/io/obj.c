/* SPDX-License-Identifier: MIT */
/* Wavefront OBJ reader for the fish meshes: positions and faces only, strict about what it
 * takes (every problem is an error naming file, line and what is wrong, never a crash or a
 * silently wrong mesh), so that a malformed asset stops the program at start. Owns no state;
 * the renderer validates mesh sizes against its own limits. */
#include "shoal/io.h"
#include "core/check.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct obj_parser {
    const char *name;
    size_t line;
    float *pos;
    size_t pos_count, pos_cap;
    uint32_t *idx;
    size_t tri_count, tri_cap;
    float *vn; /* `vn` statements */
    size_t vn_count, vn_cap;
    float *nsum;     /* per position: sum of its corners' normals (3 floats) */
    size_t nsum_cap; /* in positions */
    uint8_t *nhas;   /* per position: 1 named by a corner with a normal, 2 without */
    int any_normal;
    shoal_error *err;
} obj_parser;

static shoal_status obj_fail(obj_parser *p, const char *fmt, const char *what)
{
    char msg[256];
    snprintf(msg, sizeof msg, fmt, what);
    return shoal_error_set(p->err, SHOAL_ERR_INPUT, "%s:%zu: %s", p->name, p->line, msg);
}

static int obj_grow(void **buf, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 1;
    size_t n = *cap ? *cap * 2 : 64;
    while (n < need)
        n *= 2;
    void *q = realloc(*buf, n * elem);
    if (!q)
        return 0;
    *buf = q;
    *cap = n;
    return 1;
}

/* Next whitespace-separated token of [*s, end); returns its length (0 at end of line). */
static size_t obj_token(const char **s, const char *end, const char **tok)
{
    const char *c = *s;
    while (c < end && (*c == ' ' || *c == '\t' || *c == '\r'))
        c++;
    const char *b = c;
    while (c < end && *c != ' ' && *c != '\t' && *c != '\r')
        c++;
    *tok = b;
    *s = c;
    return (size_t)(c - b);
}

static int obj_word_is(const char *tok, size_t n, const char *word)
{
    return n == strlen(word) && memcmp(tok, word, n) == 0;
}

static shoal_status obj_vertex(obj_parser *p, const char *s, const char *end, int is_normal)
{
    float v[3];
    int k = 0;
    const char *tok;
    size_t n;
    while ((n = obj_token(&s, end, &tok)) > 0) {
        char buf[64];
        if (n >= sizeof buf)
            return obj_fail(p, "vertex coordinate is too long%s", "");
        memcpy(buf, tok, n);
        buf[n] = 0;
        char *stop;
        errno = 0;
        double d = strtod(buf, &stop);
        if (*stop != 0 || stop == buf)
            return obj_fail(p, "vertex coordinate '%s' is not a number", buf);
        if (!isfinite(d) || fabs(d) > 3.0e38)
            return obj_fail(p, "vertex coordinate '%s' is not finite", buf);
        if (k < 3)
            v[k] = (float)d;
        else if (k > 3)
            return obj_fail(p, "a vertex has at most 4 coordinates (x y z [w])%s", "");
        k++;
    }
    if (k < 3)
        return obj_fail(p, "a vertex needs 3 coordinates (x y z)%s", "");
    if (is_normal) {
        if (k != 3)
            return obj_fail(p, "a normal has 3 coordinates (vn x y z)%s", "");
        if (!obj_grow((void **)&p->vn, &p->vn_cap, 3 * (p->vn_count + 1), sizeof(float)))
            return shoal_error_set(p->err, SHOAL_ERR_NOMEM, "%s: out of memory for normals",
                                   p->name);
        double l = sqrt((double)v[0] * v[0] + (double)v[1] * v[1] + (double)v[2] * v[2]);
        for (int c = 0; c < 3 && l > 0; c++)
            v[c] = (float)(v[c] / l);
        memcpy(p->vn + 3 * p->vn_count, v, sizeof v);
        p->vn_count++;
        return SHOAL_OK;
    }
    if (!obj_grow((void **)&p->pos, &p->pos_cap, 3 * (p->pos_count + 1), sizeof(float)))
        return shoal_error_set(p->err, SHOAL_ERR_NOMEM, "%s: out of memory for vertices", p->name);
    memcpy(p->pos + 3 * p->pos_count, v, sizeof v);
    p->pos_count++;
    return SHOAL_OK;
}

/* Resolve a 1-based or negative OBJ index against `count` items; -1 when invalid. */
static long long obj_resolve(long long v, size_t count)
{
    long long r = v > 0 ? v - 1 : v < 0 ? (long long)count + v : -1;
    return r >= 0 && r < (long long)count ? r : -1;
}

/* The normal part of a corner ("c" of a/b/c or a//c), if any: adds vn[c] to the position's
 * sum. Marks the position as named with or without a normal. */
static shoal_status obj_corner_normal(obj_parser *p, uint32_t pos, const char *rest)
{
    /* nsum and nhas have room for every position (obj_corner grew them) */
    const char *slash = rest ? strchr(rest, '/') : NULL;
    if (!slash || !slash[1]) {
        if (p->nhas[pos] == 0)
            p->nhas[pos] = 2;
        return SHOAL_OK;
    }
    long long v = strtoll(slash + 1, NULL, 10);
    long long r = obj_resolve(v, p->vn_count);
    if (r < 0) {
        char m[160];
        snprintf(m, sizeof m, "normal index %lld is out of range (%zu normals so far)", v,
                 p->vn_count);
        return obj_fail(p, "%s", m);
    }
    float *d = p->nsum + 3 * (size_t)pos;
    for (int c = 0; c < 3; c++)
        d[c] += p->vn[3 * (size_t)r + (size_t)c];
    p->nhas[pos] = 1;
    p->any_normal = 1;
    return SHOAL_OK;
}

/* One face corner "a", "a/b", "a//c" or "a/b/c": the position index, resolved to 0-based. */
static shoal_status obj_corner(obj_parser *p, const char *tok, size_t n, uint32_t *out)
{
    char buf[64];
    if (n >= sizeof buf)
        return obj_fail(p, "face index is too long%s", "");
    memcpy(buf, tok, n);
    buf[n] = 0;
    char *slash = strchr(buf, '/');
    char rest_copy[64];
    rest_copy[0] = 0;
    if (slash)
        snprintf(rest_copy, sizeof rest_copy, "%s", slash + 1);
    if (slash) {
        /* the texture and normal parts must be integers (or empty) but are not used */
        const char *rest = slash + 1;
        for (const char *c = rest; *c; c++)
            if (!(*c == '/' || *c == '-' || (*c >= '0' && *c <= '9')))
                return obj_fail(p, "face corner '%s' is not of the form v, v/t, v//n, v/t/n", buf);
        if (strchr(rest, '/') != strrchr(rest, '/'))
            return obj_fail(p, "face corner '%s' has too many '/'", buf);
        *slash = 0;
    }
    char *stop;
    errno = 0;
    long long v = strtoll(buf, &stop, 10);
    if (stop == buf || *stop != 0)
        return obj_fail(p, "face index '%s' is not an integer", buf);
    if (errno == ERANGE)
        return obj_fail(p, "face index '%s' is out of range", buf);
    long long resolved;
    if (v > 0)
        resolved = v - 1;
    else if (v < 0)
        resolved = (long long)p->pos_count + v;
    else
        return obj_fail(p, "face index 0 is invalid (OBJ indices start at 1)%s", "");
    if (resolved < 0 || resolved >= (long long)p->pos_count) {
        char m[160];
        snprintf(m, sizeof m, "face index %s is out of range (%zu vertices so far)", buf,
                 p->pos_count);
        return obj_fail(p, "%s", m);
    }
    *out = (uint32_t)resolved;
    /* per-position normal sums, sized with the positions */
    if (p->nsum_cap < p->pos_cap) {
        size_t old = p->nsum_cap;
        float *ns = realloc(p->nsum, p->pos_cap * 3 * sizeof(float));
        uint8_t *nh = ns ? realloc(p->nhas, p->pos_cap) : NULL;
        if (ns)
            p->nsum = ns;
        if (!ns || !nh)
            return shoal_error_set(p->err, SHOAL_ERR_NOMEM, "%s: out of memory", p->name);
        p->nhas = nh;
        memset(p->nsum + 3 * old, 0, (p->pos_cap - old) * 3 * sizeof(float));
        memset(p->nhas + old, 0, p->pos_cap - old);
        p->nsum_cap = p->pos_cap;
    }
    return obj_corner_normal(p, *out, slash ? rest_copy : NULL);
}

static int obj_zero_area(const float *pos, uint32_t a, uint32_t b, uint32_t c)
{
    const float *A = pos + 3 * a, *B = pos + 3 * b, *C = pos + 3 * c;
    double e1[3] = {(double)B[0] - A[0], (double)B[1] - A[1], (double)B[2] - A[2]};
    double e2[3] = {(double)C[0] - A[0], (double)C[1] - A[1], (double)C[2] - A[2]};
    double x = e1[1] * e2[2] - e1[2] * e2[1];
    double y = e1[2] * e2[0] - e1[0] * e2[2];
    double z = e1[0] * e2[1] - e1[1] * e2[0];
    return x == 0.0 && y == 0.0 && z == 0.0;
}

static shoal_status obj_face(obj_parser *p, const char *s, const char *end)
{
    uint32_t first = 0, prev = 0;
    int k = 0;
    const char *tok;
    size_t n;
    while ((n = obj_token(&s, end, &tok)) > 0) {
        uint32_t v = 0;
        shoal_status st = obj_corner(p, tok, n, &v);
        if (st)
            return st;
        if (k == 0)
            first = v;
        if (k >= 2) {
            if (obj_zero_area(p->pos, first, prev, v)) {
                char m[96];
                snprintf(m, sizeof m, "%d", k - 1);
                return obj_fail(p, "degenerate face: triangle %s has zero area", m);
            }
            if (!obj_grow((void **)&p->idx, &p->tri_cap, 3 * (p->tri_count + 1), sizeof(uint32_t)))
                return shoal_error_set(p->err, SHOAL_ERR_NOMEM, "%s: out of memory for faces",
                                       p->name);
            uint32_t *t = p->idx + 3 * p->tri_count;
            t[0] = first;
            t[1] = prev;
            t[2] = v;
            p->tri_count++;
        }
        prev = v;
        k++;
    }
    if (k < 3)
        return obj_fail(p, "a face needs at least 3 vertices%s", "");
    return SHOAL_OK;
}

SHOAL_API shoal_status shoal_mesh_parse(const void *data, size_t size, const char *name,
                                        shoal_mesh *mesh, shoal_error *err)
{
    CHECK_ARG(mesh, "mesh", err);
    memset(mesh, 0, sizeof *mesh);
    CHECK_ARRAY(data, size, "data", err);
    obj_parser p = {.name = name ? name : "(obj)", .err = err};
    const char *s = data, *end = s + size;
    shoal_status st = SHOAL_OK;
    while (s < end && st == SHOAL_OK) {
        p.line++;
        const char *eol = memchr(s, '\n', (size_t)(end - s));
        if (!eol)
            eol = end;
        const char *c = s;
        s = eol + (eol < end);
        const char *hash = memchr(c, '#', (size_t)(eol - c));
        const char *stop = hash ? hash : eol;
        if (memchr(c, 0, (size_t)(stop - c))) {
            st = obj_fail(&p, "NUL byte in the file%s", "");
            break;
        }
        const char *tok;
        size_t n = obj_token(&c, stop, &tok);
        if (n == 0)
            continue;
        if (obj_word_is(tok, n, "v"))
            st = obj_vertex(&p, c, stop, 0);
        else if (obj_word_is(tok, n, "vn"))
            st = obj_vertex(&p, c, stop, 1);
        else if (obj_word_is(tok, n, "f"))
            st = obj_face(&p, c, stop);
        else if (obj_word_is(tok, n, "vt") || obj_word_is(tok, n, "vp") ||
                 obj_word_is(tok, n, "o") || obj_word_is(tok, n, "g") || obj_word_is(tok, n, "s") ||
                 obj_word_is(tok, n, "usemtl") || obj_word_is(tok, n, "mtllib"))
            continue;
        else {
            char w[40];
            size_t m = n < sizeof w - 1 ? n : sizeof w - 1;
            memcpy(w, tok, m);
            w[m] = 0;
            for (size_t i = 0; i < m; i++)
                if ((unsigned char)w[i] < 32 || (unsigned char)w[i] > 126)
                    w[i] = '?';
            st = obj_fail(&p, "unknown statement '%s'", w);
        }
    }
    if (st == SHOAL_OK && p.tri_count == 0)
        st = shoal_error_set(err, SHOAL_ERR_INPUT, "%s: no faces", p.name);
    float *normals = NULL;
    int missing = 0;
    if (st == SHOAL_OK && p.any_normal) {
        normals = calloc(p.pos_count * 3, sizeof(float));
        if (!normals)
            st = shoal_error_set(err, SHOAL_ERR_NOMEM, "%s: out of memory", p.name);
        for (size_t i = 0; st == SHOAL_OK && i < p.pos_count; i++) {
            if (i >= p.nsum_cap || p.nhas[i] == 0)
                continue;
            if (p.nhas[i] == 2) {
                missing = 1; /* filled from the faces below */
                continue;
            }
            const float *d = p.nsum + 3 * i;
            double l = sqrt((double)d[0] * d[0] + (double)d[1] * d[1] + (double)d[2] * d[2]);
            for (int c = 0; c < 3 && l > 0; c++)
                normals[3 * i + (size_t)c] = (float)(d[c] / l);
        }
    }
    free(p.vn);
    free(p.nsum);
    if (st != SHOAL_OK) {
        free(p.nhas);
        free(normals);
        free(p.pos);
        free(p.idx);
        return st;
    }
    mesh->normals = normals;
    mesh->vertex_count = p.pos_count;
    mesh->triangle_count = p.tri_count;
    mesh->positions = p.pos;
    mesh->indices = p.idx;
    if (missing) {
        /* positions no corner gave a normal: the normal computed from their faces */
        shoal_mesh tmp = *mesh;
        tmp.normals = NULL;
        if (shoal_mesh_compute_normals(&tmp, err)) {
            free(p.nhas);
            shoal_mesh_free(mesh);
            return err ? err->status : SHOAL_ERR_NOMEM;
        }
        for (size_t i = 0; i < p.pos_count; i++)
            if (i < p.nsum_cap && p.nhas[i] == 2)
                memcpy(normals + 3 * i, tmp.normals + 3 * i, 3 * sizeof(float));
        free(tmp.normals);
    }
    free(p.nhas);
    return SHOAL_OK;
}

SHOAL_API shoal_status shoal_mesh_load(const char *path, shoal_mesh *mesh, shoal_error *err)
{
    CHECK_ARG(mesh, "mesh", err);
    memset(mesh, 0, sizeof *mesh);
    CHECK_ARG(path, "path", err);
    FILE *f = fopen(path, "rb");
    if (!f)
        return shoal_error_set(err, SHOAL_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    shoal_status st = SHOAL_OK;
    if (!buf)
        st = shoal_error_set(err, SHOAL_ERR_NOMEM, "%s: out of memory", path);
    while (st == SHOAL_OK) {
        if (len == cap) {
            if (cap >= ((size_t)1 << 30)) {
                st = shoal_error_set(err, SHOAL_ERR_INPUT, "%s: file too large (> 1 GiB)", path);
                break;
            }
            char *q = realloc(buf, cap * 2);
            if (!q) {
                st = shoal_error_set(err, SHOAL_ERR_NOMEM, "%s: out of memory", path);
                break;
            }
            buf = q;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f))
                st = shoal_error_set(err, SHOAL_ERR_IO, "%s: read error", path);
            break;
        }
    }
    fclose(f);
    if (st == SHOAL_OK)
        st = shoal_mesh_parse(buf, len, path, mesh, err);
    free(buf);
    return st;
}

SHOAL_API void shoal_mesh_free(shoal_mesh *mesh)
{
    if (!mesh)
        return;
    free(mesh->positions);
    free(mesh->indices);
    free(mesh->normals);
    memset(mesh, 0, sizeof *mesh);
}

SHOAL_API shoal_status shoal_mesh_compute_normals(shoal_mesh *mesh, shoal_error *err)
{
    CHECK_ARG(mesh, "mesh", err);
    if (mesh->normals || mesh->vertex_count == 0)
        return SHOAL_OK;
    double *acc = calloc(mesh->vertex_count * 3, sizeof(double));
    float *out = calloc(mesh->vertex_count * 3, sizeof(float));
    if (!acc || !out) {
        free(acc);
        free(out);
        return shoal_error_set(err, SHOAL_ERR_NOMEM, "out of memory for vertex normals");
    }
    const float *P = mesh->positions;
    for (size_t t = 0; t < mesh->triangle_count; t++) {
        const uint32_t *ix = mesh->indices + 3 * t;
        const float *A = P + 3 * ix[0], *B = P + 3 * ix[1], *C = P + 3 * ix[2];
        double e1[3] = {(double)B[0] - A[0], (double)B[1] - A[1], (double)B[2] - A[2]};
        double e2[3] = {(double)C[0] - A[0], (double)C[1] - A[1], (double)C[2] - A[2]};
        /* cross(e1, e2): outward for counter-clockwise faces, length = twice the area */
        double n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                       e1[0] * e2[1] - e1[1] * e2[0]};
        for (int k = 0; k < 3; k++)
            for (int c = 0; c < 3; c++)
                acc[3 * (size_t)ix[k] + (size_t)c] += n[c];
    }
    for (size_t i = 0; i < mesh->vertex_count; i++) {
        const double *d = acc + 3 * i;
        double l = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        for (int c = 0; c < 3 && l > 0; c++)
            out[3 * i + (size_t)c] = (float)(d[c] / l);
    }
    free(acc);
    mesh->normals = out;
    return SHOAL_OK;
}
