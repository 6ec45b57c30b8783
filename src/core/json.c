/* SPDX-License-Identifier: MIT */
/* The JSON reader and string writer of json.h. A recursive descent over a buffer; values
 * are malloc'ed as they are read, so a failure frees what was built. The lenient mode is
 * the reader `shoal bench --compare` always had (so it accepts the files it accepted); the
 * strict mode is the RFC 8259 grammar the tests hold shoal's own output to. */
#include "core/json.h"
#include "core/text.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct jparser {
    const char *p, *end;
    int depth;
    unsigned flags;
} jparser;

static int strict(const jparser *q) { return (q->flags & JSON_STRICT) != 0; }

static int is_ws(const jparser *q, char c)
{
    if (strict(q))
        return c == ' ' || c == '\t' || c == '\n' || c == '\r';
    return isspace((unsigned char)c) != 0;
}

static void jskip(jparser *q)
{
    while (q->p < q->end && is_ws(q, *q->p))
        q->p++;
}

static int jparse(jparser *q, json_value *v);

static int is_hex4(const char *p)
{
    for (int i = 0; i < 4; i++)
        if (!isxdigit((unsigned char)p[i]))
            return 0;
    return 1;
}

static char *jstring(jparser *q)
{
    if (q->p >= q->end || *q->p != '"')
        return NULL;
    q->p++;
    size_t cap = 32, n = 0;
    char *s = malloc(cap);
    while (s && q->p < q->end && *q->p != '"') {
        char ch = *q->p++;
        if (ch == '\\') {
            if (q->p >= q->end)
                break;
            char x = *q->p++;
            if (strict(q) && !strchr("\"\\/bfnrtu", x))
                break;
            ch = x == 'n'   ? '\n'
                 : x == 't' ? '\t'
                 : x == 'r' ? '\r'
                 : x == 'b' ? '\b'
                 : x == 'f' ? '\f'
                            : x;
            if (x == 'u') { /* keep it simple: \uXXXX becomes '?' */
                if (q->end - q->p < 4 || (strict(q) && !is_hex4(q->p)))
                    break;
                q->p += 4;
                ch = '?';
            }
        } else if ((unsigned char)ch < 0x20) {
            break;
        }
        if (n + 2 > cap) {
            char *t = realloc(s, cap *= 2);
            if (!t)
                break;
            s = t;
        }
        s[n++] = ch;
    }
    if (!s || q->p >= q->end || *q->p != '"') {
        free(s);
        return NULL;
    }
    q->p++;
    s[n] = 0;
    return s;
}

void json_free(json_value *v)
{
    if (v->type == JSON_STRING)
        free(v->str);
    if (v->type == JSON_ARRAY || v->type == JSON_OBJECT) {
        for (int i = 0; i < v->count; i++) {
            json_free(&v->items[i]);
            if (v->keys)
                free(v->keys[i]);
        }
        free(v->items);
        free(v->keys);
    }
    memset(v, 0, sizeof *v);
}

static int jparse_list(jparser *q, json_value *v, int obj)
{
    char close = obj ? '}' : ']';
    q->p++;
    int cap = 0;
    v->type = obj ? JSON_OBJECT : JSON_ARRAY;
    jskip(q);
    if (q->p < q->end && *q->p == close) {
        q->p++;
        return 0;
    }
    for (;;) {
        if (v->count == cap) {
            cap = cap ? cap * 2 : 8;
            json_value *it = realloc(v->items, (size_t)cap * sizeof *it);
            if (!it)
                return 1;
            v->items = it;
            if (obj) {
                char **k = realloc(v->keys, (size_t)cap * sizeof *k);
                if (!k)
                    return 1;
                v->keys = k;
            }
        }
        jskip(q);
        if (obj) {
            char *key = jstring(q);
            if (!key)
                return 1;
            v->keys[v->count] = key;
            jskip(q);
            if (q->p >= q->end || *q->p != ':') {
                v->items[v->count++].type = JSON_NULL;
                return 1;
            }
            q->p++;
        }
        memset(&v->items[v->count], 0, sizeof(json_value));
        int bad = jparse(q, &v->items[v->count]);
        v->count++;
        if (bad)
            return 1;
        jskip(q);
        if (q->p < q->end && *q->p == ',') {
            q->p++;
            continue;
        }
        if (q->p < q->end && *q->p == close) {
            q->p++;
            return 0;
        }
        return 1;
    }
}

/* The end of an RFC 8259 number at p: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, or
 * NULL when none starts there. */
static const char *number_end(const char *p, const char *end)
{
#define DIGIT(x) ((x) < end && *(x) >= '0' && *(x) <= '9')
    if (p < end && *p == '-')
        p++;
    if (!DIGIT(p))
        return NULL;
    if (*p == '0')
        p++;
    else
        while (DIGIT(p))
            p++;
    if (p < end && *p == '.') {
        p++;
        if (!DIGIT(p))
            return NULL;
        while (DIGIT(p))
            p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        if (!DIGIT(p))
            return NULL;
        while (DIGIT(p))
            p++;
    }
    return p;
#undef DIGIT
}

static int jparse(jparser *q, json_value *v)
{
    memset(v, 0, sizeof *v);
    jskip(q);
    if (q->p >= q->end || ++q->depth > 64)
        return 1;
    int bad = 0;
    char ch = *q->p;
    if (ch == '{' || ch == '[') {
        bad = jparse_list(q, v, ch == '{');
    } else if (ch == '"') {
        v->type = JSON_STRING;
        v->str = jstring(q);
        bad = v->str == NULL;
    } else if (q->end - q->p >= 4 && strncmp(q->p, "null", 4) == 0) {
        q->p += 4;
    } else if (q->end - q->p >= 4 && strncmp(q->p, "true", 4) == 0) {
        v->type = JSON_BOOL, v->num = 1, q->p += 4;
    } else if (q->end - q->p >= 5 && strncmp(q->p, "false", 5) == 0) {
        v->type = JSON_BOOL, q->p += 5;
    } else if (strict(q)) {
        /* the grammar decides where the number ends; strtod converts exactly that span */
        const char *e = number_end(q->p, q->end);
        char tmp[64];
        size_t n = e ? (size_t)(e - q->p) : 0;
        v->type = JSON_NUMBER;
        bad = n == 0 || n >= sizeof tmp;
        if (!bad) {
            memcpy(tmp, q->p, n);
            tmp[n] = 0;
            v->num = strtod(tmp, NULL);
            q->p = e;
        }
    } else {
        char *e;
        v->type = JSON_NUMBER;
        v->num = strtod(q->p, &e);
        bad = e == q->p;
        q->p = e;
    }
    q->depth--;
    return bad;
}

int json_parse(const char *text, size_t len, unsigned flags, json_value *out)
{
    jparser q = {text, text + len, 0, flags};
    int bad = jparse(&q, out);
    jskip(&q);
    if (bad || q.p != q.end) {
        json_free(out);
        return 1;
    }
    return 0;
}

const json_value *json_get(const json_value *o, const char *key)
{
    if (!o || o->type != JSON_OBJECT)
        return NULL;
    for (int i = 0; i < o->count; i++)
        if (strcmp(o->keys[i], key) == 0)
            return &o->items[i];
    return NULL;
}

int json_load_file(const char *path, unsigned flags, json_value *out, char *err, size_t err_size)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (err)
            snprintf(err, err_size, "%s: %s", path, strerror(errno));
        return JSON_ERR_IO;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *t = realloc(buf, cap *= 2);
            if (!t)
                free(buf);
            buf = t;
        }
    }
    fclose(f);
    if (!buf) {
        if (err)
            snprintf(err, err_size, "%s: out of memory", path);
        return JSON_ERR_IO;
    }
    int bad = json_parse(buf, n, flags, out);
    free(buf);
    if (bad) {
        if (err)
            snprintf(err, err_size, "%s: malformed JSON", path);
        return JSON_ERR_SYNTAX;
    }
    return JSON_OK;
}

void json_write_number(FILE *f, double v, int digits)
{
    if (isfinite(v))
        fprintf(f, "%.*g", digits, v);
    else
        fputs("null", f);
}

void json_write_string(FILE *f, const char *s) { (void)text_json_string(f, s); }
