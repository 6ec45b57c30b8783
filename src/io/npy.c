/* SPDX-License-Identifier: MIT */
/* State files in NumPy's .npy format (versions 1.0, 2.0 and 3.0). The reader accepts only
 * '<f4' or '<f8', C order, shape (N, 6) with N >= 1, and says in one line what else it
 * found; the header dict is parsed as the Python literal it is, not matched as a string.
 * The writer makes version 1.0 '<f4' files through the atomic writer (atomic.c). Values
 * move as little-endian bytes assembled by hand, so neither side depends on host order. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "io/npy_layout.h"
#include "core/check.h"
#include "io/rows_layout.h"
#include "shoal/io.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Values are copied as IEEE-754 bit patterns through uint32_t/uint64_t, which is only
 * right when float and double are binary32 and binary64. Byte order needs no assumption:
 * npy_load32/64 and npy_store32 build little-endian values byte by byte (compilers turn
 * that into a plain load on x86-64). */
_Static_assert(sizeof(float) == 4 && FLT_RADIX == 2 && FLT_MANT_DIG == 24 && FLT_MAX_EXP == 128,
               "float must be IEEE-754 binary32");
_Static_assert(sizeof(double) == 8 && DBL_MANT_DIG == 53 && DBL_MAX_EXP == 1024,
               "double must be IEEE-754 binary64");

#define NPY_EXPECTED_DTYPE "expected float32 '<f4' or float64 '<f8'"
#define NPY_KEYS "'descr', 'fortran_order' and 'shape'"
/* Nesting a hostile header may use before we give up (the parser recurses). */
#define NPY_DEPTH_MAX 16
/* Tuple elements remembered for messages; longer tuples are counted, not stored. */
#define NPY_DIMS_MAX 8
/* The longest header read. NumPy writes 128 bytes for any (N, 6) state and its own reader
 * refuses more than 10000 by default; the bound keeps a stream (a FIFO) that claims a 4 GiB
 * version 2.0 header from being read that far. */
#define NPY_HEADER_MAX (1 << 20)

static const unsigned char npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

static uint32_t npy_load32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static uint64_t npy_load64(const unsigned char *b)
{
    return (uint64_t)npy_load32(b) | (uint64_t)npy_load32(b + 4) << 32;
}

static void npy_store32(unsigned char *b, uint32_t v)
{
    b[0] = (unsigned char)v;
    b[1] = (unsigned char)(v >> 8);
    b[2] = (unsigned char)(v >> 16);
    b[3] = (unsigned char)(v >> 24);
}

/* ---- the header: a Python dict literal --------------------------------------------------
 * The subset NumPy writes and literal_eval reads back: strings, integers (with Python 2's
 * 'L' suffix, which old files carry), True/False/None, tuples, lists and dicts, any
 * whitespace, trailing commas. "(x)" is x, not a tuple, as in Python. */

typedef enum hdr_kind {
    HDR_STRING,
    HDR_INT,
    HDR_BOOL,
    HDR_NONE,
    HDR_TUPLE,
    HDR_LIST,
    HDR_DICT
} hdr_kind;

typedef struct hdr_int {
    uint64_t magnitude;
    int negative; /* only when magnitude != 0: Python's -0 is 0 */
    int too_big;  /* more than 64 bits */
    size_t start, end;
} hdr_int;

typedef struct hdr_value {
    hdr_kind kind;
    size_t start, end;          /* source span; for a string, its contents */
    int boolean;                /* HDR_BOOL */
    hdr_int number;             /* HDR_INT */
    size_t count;               /* HDR_TUPLE, HDR_LIST: number of elements */
    int ints_only;              /* HDR_TUPLE: every element an integer */
    hdr_int dims[NPY_DIMS_MAX]; /* HDR_TUPLE: the first elements, when integers */
} hdr_value;

typedef struct hdr_parser {
    const char *text; /* the header bytes, not NUL-terminated */
    size_t len, pos;
    char error[160]; /* the first syntax error */
    /* the top-level dict */
    hdr_value descr, fortran_order, shape;
    int has_descr, has_fortran_order, has_shape;
    int bad_key; /* 0, or 1 for an unknown key, 2 for a repeated one (the first such) */
    size_t bad_key_start, bad_key_end;
} hdr_parser;

static int hdr_fail(hdr_parser *p, const char *what)
{
    snprintf(p->error, sizeof p->error, "%s at byte %zu of the header", what, p->pos);
    return 0;
}

static int hdr_peek(const hdr_parser *p)
{
    return p->pos < p->len ? (unsigned char)p->text[p->pos] : -1;
}

static void hdr_skip_space(hdr_parser *p)
{
    for (int c;
         (c = hdr_peek(p)) == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';)
        p->pos++;
}

static int hdr_is_digit(int c) { return c >= '0' && c <= '9'; }

static int hdr_is_name(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || hdr_is_digit(c);
}

static int hdr_value_parse(hdr_parser *p, hdr_value *v, int depth);

static int hdr_string(hdr_parser *p, hdr_value *v)
{
    int quote = hdr_peek(p);
    p->pos++;
    v->kind = HDR_STRING;
    v->start = p->pos;
    for (;;) {
        int c = hdr_peek(p);
        if (c < 0)
            return hdr_fail(p, "unterminated string");
        if (c == quote)
            break;
        if (c == '\n')
            return hdr_fail(p, "newline inside a string");
        /* An escape only has to be stepped over: no key or dtype we accept contains one. */
        p->pos += c == '\\' ? 2 : 1;
    }
    v->end = p->pos++;
    return 1;
}

static int hdr_integer(hdr_parser *p, hdr_value *v)
{
    hdr_int *n = &v->number;
    v->kind = HDR_INT;
    n->start = p->pos;
    int c = hdr_peek(p);
    int negative = c == '-';
    if (c == '-' || c == '+') {
        p->pos++;
        hdr_skip_space(p);
    }
    if (!hdr_is_digit(hdr_peek(p)))
        return hdr_fail(p, "expected a digit");
    while (hdr_is_digit(c = hdr_peek(p))) {
        unsigned d = (unsigned)(c - '0');
        if (n->magnitude > (UINT64_MAX - d) / 10)
            n->too_big = 1;
        else
            n->magnitude = n->magnitude * 10 + d;
        p->pos++;
    }
    if (hdr_peek(p) == 'L' || hdr_peek(p) == 'l')
        p->pos++; /* Python 2 long, as numpy under Python 2 wrote shapes on some systems */
    if (hdr_is_name(hdr_peek(p)) || hdr_peek(p) == '.')
        return hdr_fail(p, "not an integer");
    n->negative = negative && (n->magnitude != 0 || n->too_big);
    n->end = p->pos;
    return 1;
}

static int hdr_name(hdr_parser *p, hdr_value *v)
{
    size_t start = p->pos;
    while (hdr_is_name(hdr_peek(p)))
        p->pos++;
    size_t len = p->pos - start;
    const char *s = p->text + start;
    if (len == 4 && memcmp(s, "True", 4) == 0) {
        v->kind = HDR_BOOL;
        v->boolean = 1;
    } else if (len == 5 && memcmp(s, "False", 5) == 0) {
        v->kind = HDR_BOOL;
        v->boolean = 0;
    } else if (len == 4 && memcmp(s, "None", 4) == 0) {
        v->kind = HDR_NONE;
    } else {
        p->pos = start;
        return hdr_fail(p, "unexpected name (only True, False and None are literals)");
    }
    return 1;
}

/* Tuples and lists; a parenthesised single element without a comma is the element. */
static int hdr_sequence(hdr_parser *p, hdr_value *v, int depth)
{
    int open = hdr_peek(p);
    int close = open == '(' ? ')' : ']';
    p->pos++;
    v->kind = open == '(' ? HDR_TUPLE : HDR_LIST;
    v->ints_only = 1;
    int trailing_comma = 0;
    hdr_value item;
    for (;;) {
        hdr_skip_space(p);
        if (hdr_peek(p) == close) {
            p->pos++;
            break;
        }
        if (!hdr_value_parse(p, &item, depth + 1))
            return 0;
        if (item.kind != HDR_INT)
            v->ints_only = 0;
        else if (v->count < NPY_DIMS_MAX)
            v->dims[v->count] = item.number;
        v->count++;
        trailing_comma = 0;
        hdr_skip_space(p);
        if (hdr_peek(p) == ',') {
            p->pos++;
            trailing_comma = 1;
        } else if (hdr_peek(p) != close) {
            return hdr_fail(p, close == ')' ? "expected ',' or ')'" : "expected ',' or ']'");
        }
    }
    if (open == '(' && v->count == 1 && !trailing_comma) {
        /* A string keeps its own span (its contents); anything else shows its parentheses
         * in messages, so "(18)" reads as the non-tuple it is. */
        size_t start = v->start;
        *v = item;
        if (v->kind != HDR_STRING)
            v->start = start;
    }
    return 1;
}

static int hdr_key_is(const hdr_parser *p, const hdr_value *key, const char *name)
{
    size_t len = strlen(name);
    return key->end - key->start == len && memcmp(p->text + key->start, name, len) == 0;
}

/* Record a top-level entry; the first unknown or repeated key is kept for the message
 * (reported only once the whole header has parsed, so syntax errors come first). */
static void hdr_top_entry(hdr_parser *p, const hdr_value *key, const hdr_value *value)
{
    hdr_value *slot = NULL;
    int *has = NULL;
    if (hdr_key_is(p, key, "descr")) {
        slot = &p->descr;
        has = &p->has_descr;
    } else if (hdr_key_is(p, key, "fortran_order")) {
        slot = &p->fortran_order;
        has = &p->has_fortran_order;
    } else if (hdr_key_is(p, key, "shape")) {
        slot = &p->shape;
        has = &p->has_shape;
    }
    if (!slot || *has) {
        if (!p->bad_key) {
            p->bad_key = slot ? 2 : 1;
            p->bad_key_start = key->start;
            p->bad_key_end = key->end;
        }
        return;
    }
    *slot = *value;
    *has = 1;
}

static int hdr_dict(hdr_parser *p, hdr_value *v, int depth)
{
    p->pos++;
    v->kind = HDR_DICT;
    hdr_value key, value;
    for (;;) {
        hdr_skip_space(p);
        if (hdr_peek(p) == '}') {
            p->pos++;
            return 1;
        }
        if (!hdr_value_parse(p, &key, depth + 1))
            return 0;
        if (depth == 0 && key.kind != HDR_STRING)
            return hdr_fail(p, "a key that is not a string");
        hdr_skip_space(p);
        if (hdr_peek(p) != ':')
            return hdr_fail(p, "expected ':'");
        p->pos++;
        if (!hdr_value_parse(p, &value, depth + 1))
            return 0;
        if (depth == 0)
            hdr_top_entry(p, &key, &value);
        hdr_skip_space(p);
        if (hdr_peek(p) == ',')
            p->pos++;
        else if (hdr_peek(p) != '}')
            return hdr_fail(p, "expected ',' or '}'");
    }
}

static int hdr_value_parse(hdr_parser *p, hdr_value *v, int depth)
{
    memset(v, 0, sizeof *v);
    hdr_skip_space(p);
    if (depth > NPY_DEPTH_MAX)
        return hdr_fail(p, "nested too deeply");
    v->start = p->pos;
    int c = hdr_peek(p);
    int ok;
    if (c < 0)
        return hdr_fail(p, "unexpected end");
    else if (c == '\'' || c == '"')
        ok = hdr_string(p, v);
    else if (c == '-' || c == '+' || hdr_is_digit(c))
        ok = hdr_integer(p, v);
    else if (hdr_is_name(c))
        ok = hdr_name(p, v);
    else if (c == '(' || c == '[')
        ok = hdr_sequence(p, v, depth);
    else if (c == '{')
        ok = hdr_dict(p, v, depth);
    else {
        char what[32];
        if (c > 0x20 && c < 0x7f)
            snprintf(what, sizeof what, "unexpected character '%c'", c);
        else
            snprintf(what, sizeof what, "unexpected byte 0x%02x", (unsigned)c);
        return hdr_fail(p, what);
    }
    if (v->kind != HDR_STRING) /* a string's span is its contents, set by hdr_string */
        v->end = p->pos;
    return ok;
}

/* The whole header: one dict and nothing after it but whitespace (NumPy's padding). */
static int hdr_parse(hdr_parser *p)
{
    hdr_value top;
    hdr_skip_space(p);
    if (hdr_peek(p) != '{')
        return hdr_fail(p, "expected '{'");
    if (!hdr_value_parse(p, &top, 0))
        return 0;
    hdr_skip_space(p);
    if (p->pos != p->len)
        return hdr_fail(p, "text after the dict");
    return 1;
}

/* Header text for a message: printable ASCII kept, anything else '?', cut at 40 bytes. */
static const char *hdr_excerpt(const hdr_parser *p, size_t start, size_t end, char *buf,
                               size_t size)
{
    size_t n = 0;
    for (size_t i = start; i < end && n + 4 < size; i++) {
        if (n == 40) {
            memcpy(buf + n, "...", 3);
            n += 3;
            break;
        }
        unsigned char c = (unsigned char)p->text[i];
        buf[n++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    buf[n] = '\0';
    return buf;
}

/* A shape tuple written back as Python would print it: "(10, 3)", "(7,)", "()". */
static const char *hdr_shape_text(const hdr_parser *p, const hdr_value *v, char *buf, size_t size)
{
    if (v->kind != HDR_TUPLE || !v->ints_only)
        return hdr_excerpt(p, v->start, v->end, buf, size);
    size_t n = 0;
    buf[n++] = '(';
    for (size_t i = 0; i < v->count && i < NPY_DIMS_MAX && n < size; i++) {
        const hdr_int *d = &v->dims[i];
        char excerpt[64];
        int w;
        if (d->too_big)
            w = snprintf(buf + n, size - n, "%s%s", i ? ", " : "",
                         hdr_excerpt(p, d->start, d->end, excerpt, sizeof excerpt));
        else
            w = snprintf(buf + n, size - n, "%s%s%" PRIu64, i ? ", " : "", d->negative ? "-" : "",
                         d->magnitude);
        n += w > 0 ? (size_t)w : 0;
    }
    if (n < size)
        snprintf(buf + n, size - n, "%s)",
                 v->count > NPY_DIMS_MAX ? ", ..."
                 : v->count == 1         ? ","
                                         : "");
    else
        buf[size - 1] = '\0';
    return buf;
}

/* ---- reading ------------------------------------------------------------------------- */

/* What the preamble and header say: where the data starts and how much there must be. */
typedef struct npy_info {
    size_t count, item_size, data_offset, data_bytes;
    const char *dtype;
} npy_info;

/* Everything before the data: magic, version, header dict, dtype, order, shape. Needs only
 * the first data_offset bytes (`size` may stop there), so a reader can check a file's
 * header before reading, or allocating for, its data. */
/* The preamble and the header dict (its syntax and keys), shared by the state reader and the
 * array reader: fills *p, the preamble's size and the header's length. */
static shoal_status npy_dict(const unsigned char *bytes, size_t size, const char *name,
                             hdr_parser *p_out, size_t *prefix_out, size_t *header_len_out,
                             shoal_error *err)
{
    size_t magic_len = size < sizeof npy_magic ? size : sizeof npy_magic;
    if (memcmp(bytes ? bytes : npy_magic, npy_magic, magic_len) != 0)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "%s: not a .npy file: bad magic (expected \\x93NUMPY)", name);
    if (size < 8)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "%s: truncated .npy preamble: %zu bytes, expected at least 10", name,
                               size);
    unsigned major = bytes[6], minor = bytes[7];
    if (major < 1 || major > 3 || minor != 0)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "%s: unsupported .npy version %u.%u, expected 1.0, 2.0 or 3.0", name,
                               major, minor);
    /* 1.0 has a 16-bit header length; 2.0 widened it to 32 bits; 3.0 only changed the
     * header's encoding from latin-1 to UTF-8, which the ASCII we accept is in both. */
    size_t prefix = major == 1 ? 10 : 12;
    if (size < prefix)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "%s: truncated .npy preamble: %zu bytes, expected at least %zu",
                               name, size, prefix);
    size_t header_len = major == 1 ? (size_t)(bytes[8] | bytes[9] << 8) : npy_load32(bytes + 8);
    if (header_len > size - prefix)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "%s: truncated header: %zu bytes declared, %zu present", name,
                               header_len, size - prefix);
    if (header_len > NPY_HEADER_MAX)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "%s: header of %zu bytes, more than the %d read (a state's "
                               "header is under 200 bytes; NumPy reads at most 10000)",
                               name, header_len, NPY_HEADER_MAX);

    hdr_parser *pp = p_out;
    memset(pp, 0, sizeof *pp);
    pp->text = (const char *)bytes + prefix;
    pp->len = header_len;
    if (!hdr_parse(pp))
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "%s: bad header dict: %s (expected a dict of " NPY_KEYS ")", name,
                               pp->error);
    char found[128];
    if (pp->bad_key)
        return shoal_error_set(
            err, SHOAL_ERR_INPUT, "%s: header has %s key '%s', expected " NPY_KEYS, name,
            pp->bad_key == 1 ? "unexpected" : "a repeated",
            hdr_excerpt(pp, pp->bad_key_start, pp->bad_key_end, found, sizeof found));
    if (!pp->has_descr || !pp->has_fortran_order || !pp->has_shape)
        return shoal_error_set(
            err, SHOAL_ERR_INPUT, "%s: header is missing key%s%s%s%s, expected " NPY_KEYS, name,
            pp->has_descr + pp->has_fortran_order + pp->has_shape < 2 ? "s" : "",
            pp->has_descr ? "" : " 'descr'", pp->has_fortran_order ? "" : " 'fortran_order'",
            pp->has_shape ? "" : " 'shape'");
    *prefix_out = prefix;
    *header_len_out = header_len;
    return SHOAL_OK;
}

static shoal_status npy_header(const unsigned char *bytes, size_t size, const char *name,
                               npy_info *info, shoal_error *err)
{
    hdr_parser p;
    size_t prefix = 0, header_len = 0;
    shoal_status st = npy_dict(bytes, size, name, &p, &prefix, &header_len, err);
    if (st)
        return st;
    char found[128];

    /* dtype */
    const hdr_value *descr = &p.descr;
    size_t item_size = 0;
    const char *dtype = NULL;
    if (descr->kind != HDR_STRING)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "%s: structured or non-string dtype %s, " NPY_EXPECTED_DTYPE, name,
                               hdr_excerpt(&p, descr->start, descr->end, found, sizeof found));
    hdr_excerpt(&p, descr->start, descr->end, found, sizeof found);
    if (strcmp(found, "<f4") == 0) {
        item_size = 4;
        dtype = "<f4";
    } else if (strcmp(found, "<f8") == 0) {
        item_size = 8;
        dtype = "<f8";
    } else if (strcmp(found, ">f4") == 0 || strcmp(found, ">f8") == 0) {
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "%s: big-endian dtype '%s', expected little-endian float32 '<f4' "
                               "or float64 '<f8'",
                               name, found);
    } else {
        return shoal_error_set(err, SHOAL_ERR_INPUT, "%s: dtype '%s', " NPY_EXPECTED_DTYPE, name,
                               found);
    }

    /* order */
    if (p.fortran_order.kind != HDR_BOOL)
        return shoal_error_set(
            err, SHOAL_ERR_INPUT, "%s: fortran_order is %s, expected False", name,
            hdr_excerpt(&p, p.fortran_order.start, p.fortran_order.end, found, sizeof found));
    if (p.fortran_order.boolean)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "%s: fortran_order is True (column-major), expected False (C order)",
                               name);

    /* shape */
    const hdr_value *shape = &p.shape;
    hdr_shape_text(&p, shape, found, sizeof found);
    if (shape->kind != HDR_TUPLE || !shape->ints_only)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "%s: shape %s is not a tuple of integers, expected (N, 6)", name,
                               found);
    const hdr_int *rows_dim = &shape->dims[0], *cols_dim = &shape->dims[1];
    if (shape->count != 2 || cols_dim->too_big || cols_dim->negative ||
        cols_dim->magnitude != SHOAL_STATE_COLUMNS || rows_dim->negative)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "%s: shape %s, expected (N, 6)", name, found);
    if (rows_dim->magnitude == 0 && !rows_dim->too_big)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "%s: shape %s has no rows, expected (N, 6) with N >= 1", name,
                               found);
    size_t row_bytes = SHOAL_STATE_COLUMNS * item_size;
    if (rows_dim->too_big || rows_dim->magnitude > SIZE_MAX / row_bytes)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "%s: shape %s is too large: N*6*%zu bytes overflows size_t", name,
                               found, item_size);

    /* data: exactly N rows. Checked before allocating, so a small file that declares a huge
     * N fails here cheaply instead of asking for terabytes. */
    info->count = (size_t)rows_dim->magnitude;
    info->item_size = item_size;
    info->data_bytes = info->count * row_bytes;
    info->data_offset = prefix + header_len;
    info->dtype = dtype;
    return SHOAL_OK;
}

/* `present` data bytes where the header asks for info->data_bytes. */
static shoal_status npy_size_check(const npy_info *info, size_t present, const char *name,
                                   shoal_error *err)
{
    if (present < info->data_bytes)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "%s: truncated data: shape (%zu, 6) of '%s' needs %zu bytes, "
                               "found %zu",
                               name, info->count, info->dtype, info->data_bytes, present);
    if (present > info->data_bytes)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "%s: oversized: %zu trailing byte%s after the %zu data bytes of "
                               "shape (%zu, 6) '%s'",
                               name, present - info->data_bytes,
                               present - info->data_bytes == 1 ? "" : "s", info->data_bytes,
                               info->count, info->dtype);
    return SHOAL_OK;
}

shoal_status shoal_io_npy_parse(const void *data, size_t size, const char *name, float **rows_out,
                                size_t *count_out, shoal_error *err)
{
    if (rows_out)
        *rows_out = NULL;
    if (count_out)
        *count_out = 0;
    CHECK_ARRAY(data, size, "data", err);
    const unsigned char *bytes = data;
    if (!name)
        name = "(memory)";
    if (!rows_out || !count_out)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "%s: no place for the rows", name);
    *rows_out = NULL;
    *count_out = 0;
    if (!bytes)
        size = 0;
    npy_info info;
    shoal_status st = npy_header(bytes, size, name, &info, err);
    if (!st)
        st = npy_size_check(&info, size - info.data_offset, name, err);
    if (st)
        return st;
    size_t count = info.count, item_size = info.item_size, data_offset = info.data_offset;

    size_t value_count = count * SHOAL_STATE_COLUMNS;
    float *rows = malloc(value_count * sizeof *rows);
    if (!rows)
        return shoal_error_set(err, SHOAL_ERR_NOMEM,
                               "%s: out of memory: cannot allocate %zu bytes for %zu rows", name,
                               value_count * sizeof *rows, count);
    const unsigned char *src = bytes + data_offset;
    if (item_size == 4) {
        for (size_t i = 0; i < value_count; i++) {
            uint32_t bits = npy_load32(src + 4 * i);
            memcpy(&rows[i], &bits, sizeof bits);
        }
    } else {
        for (size_t i = 0; i < value_count; i++) {
            uint64_t bits = npy_load64(src + 8 * i);
            double d;
            memcpy(&d, &bits, sizeof d);
            rows[i] = (float)d; /* round to nearest; out of range becomes +-inf (Annex F) */
        }
    }
    *rows_out = rows;
    *count_out = count;
    return SHOAL_OK;
}

/* Read from `f` until *len == want or the end: the buffer grows by doubling up to `want`,
 * so a source that ends early (a FIFO, a short file) costs at most twice what it sent. */
static shoal_status npy_fill(FILE *f, const char *path, unsigned char **data, size_t *cap,
                             size_t *len, size_t want, shoal_error *err)
{
    while (*len < want) {
        if (*len == *cap) {
            size_t grown = *cap < 65536 ? 65536 : *cap > SIZE_MAX / 2 ? SIZE_MAX : *cap * 2;
            if (grown > want)
                grown = want;
            unsigned char *nd = realloc(*data, grown);
            if (!nd)
                return shoal_error_set(err, SHOAL_ERR_NOMEM,
                                       "%s: out of memory: cannot allocate %zu bytes to read it",
                                       path, grown);
            *data = nd;
            *cap = grown;
        }
        size_t got = fread(*data + *len, 1, *cap - *len, f);
        *len += got;
        if (got == 0) {
            if (ferror(f))
                return shoal_error_set(err, SHOAL_ERR_IO, "%s: read error: %s", path,
                                       strerror(errno));
            break; /* EOF */
        }
    }
    return SHOAL_OK;
}

shoal_status shoal_io_npy_read(const char *path, float **rows_out, size_t *count_out,
                               shoal_error *err)
{
    if (rows_out)
        *rows_out = NULL;
    if (count_out)
        *count_out = 0;
    if (!path)
        return shoal_error_set(err, SHOAL_ERR_IO, "cannot read a file with no name");
    FILE *f = fopen(path, "rb");
    if (!f)
        return shoal_error_set(err, SHOAL_ERR_IO, "%s: cannot open: %s", path, strerror(errno));

    /* The preamble and header first, then exactly the data they announce (one byte more,
     * to see trailing bytes): /dev/zero fails at the magic, a FIFO at a bad header, and a
     * regular file whose size disagrees with the header is refused without reading its
     * data. (Reading to EOF first read 4 GiB of /dev/zero before running out of memory.) */
    struct stat st;
    int regular = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 0;
    unsigned char *data = NULL;
    size_t cap = 0, len = 0;
    npy_info info;
    shoal_status status = npy_fill(f, path, &data, &cap, &len, 12, err);
    if (!status && len >= 10 && memcmp(data, npy_magic, sizeof npy_magic) == 0 && data[6] >= 1 &&
        data[6] <= 3) {
        size_t prefix = data[6] == 1 ? 10 : 12;
        size_t header_len = len < prefix   ? 0
                            : prefix == 10 ? (size_t)(data[8] | data[9] << 8)
                                           : npy_load32(data + 8);
        if (header_len <= NPY_HEADER_MAX)
            status = npy_fill(f, path, &data, &cap, &len, prefix + header_len, err);
    }
    if (!status)
        status = npy_header(data, len, path, &info, err);
    if (!status && regular && (uintmax_t)st.st_size != info.data_offset + info.data_bytes)
        status = npy_size_check(&info,
                                (uintmax_t)st.st_size > info.data_offset
                                    ? (size_t)((uintmax_t)st.st_size - info.data_offset)
                                    : 0,
                                path, err);
    size_t total = 0;
    if (!status) {
        total = info.data_offset + info.data_bytes;
        status = npy_fill(f, path, &data, &cap, &len, total < SIZE_MAX ? total + 1 : total, err);
    }
    fclose(f); /* read-only: a close error cannot lose data */
    if (!status && len > total)
        status = shoal_error_set(err, SHOAL_ERR_INPUT,
                                 "%s: oversized: trailing bytes after the %zu data bytes of "
                                 "shape (%zu, 6) '%s'",
                                 path, info.data_bytes, info.count, info.dtype);
    if (!status)
        status = shoal_io_npy_parse(data, len, path, rows_out, count_out, err);
    free(data);
    return status;
}

/* ---- writing ------------------------------------------------------------------------- */

shoal_status shoal_io_npy_write(const char *path, const float *rows, size_t count, shoal_error *err)
{
    CHECK_ARG(path, "path", err);
    CHECK_ARRAY(rows, count, "rows", err);
    if (!path)
        return shoal_error_set(err, SHOAL_ERR_IO, "cannot write a file with no name");
    /* The reader refuses N == 0 (a state has boids), so refuse to write what we could not
     * read back. */
    if (!rows || count == 0)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "%s: no rows to write (a state file holds N >= 1 rows)", path);
    if (count > SIZE_MAX / (SHOAL_STATE_COLUMNS * sizeof(float)))
        return shoal_error_set(err, SHOAL_ERR_INPUT, "%s: %zu rows is too many", path, count);

    /* NumPy's layout: magic, version, u16 header length, the dict, spaces, '\n', with the
     * whole preamble a multiple of 64 bytes so that the data is aligned for mmap readers. */
    unsigned char preamble[192];
    size_t total = npy_preamble_write(preamble, count);

    shoal_atomic_file af;
    shoal_status status = shoal_io_atomic_open(&af, path, err);
    if (status != SHOAL_OK)
        return status;
    FILE *f = af.file;
    int ok = fwrite(preamble, 1, total, f) == total;

    /* Encode a chunk at a time: bounded memory, and still one fwrite per 64 KiB. */
    unsigned char chunk[64 * 1024];
    size_t value_count = count * SHOAL_STATE_COLUMNS;
    for (size_t i = 0; ok && i < value_count;) {
        size_t n = value_count - i;
        if (n > sizeof chunk / 4)
            n = sizeof chunk / 4;
        for (size_t k = 0; k < n; k++) {
            uint32_t bits;
            memcpy(&bits, &rows[i + k], sizeof bits);
            npy_store32(chunk + 4 * k, bits);
        }
        ok = fwrite(chunk, 4, n, f) == n;
        i += n;
    }
    if (!ok) {
        int e = errno;
        shoal_io_atomic_abort(&af);
        return shoal_error_set(err, SHOAL_ERR_IO, "%s: write failed: %s", path, strerror(e));
    }
    return shoal_io_atomic_commit(&af, err);
}

/* ---- any array, as doubles (shoal verify's trajectories and ids) -------------------------- */

/* dtype of an array: size and how to decode a value */
typedef enum npy_kind { NPY_F, NPY_I, NPY_U } npy_kind;

/* The header of an array file: dtype, order and shape into *out (ndim, dims, dtype), how
 * to decode a value, where the data starts and how many values it holds. */
static shoal_status npy_array_header(const unsigned char *data, size_t len, const char *name,
                                     shoal_npy_array *out, npy_kind *kind, size_t *item,
                                     size_t *offset, size_t *values, shoal_error *err)
{
    hdr_parser p;
    size_t prefix = 0, header_len = 0;
    shoal_status st = npy_dict(data, len, name, &p, &prefix, &header_len, err);
    if (st)
        return st;
    char found[128];
    *item = 0;
    if (p.descr.kind != HDR_STRING)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "%s: structured or non-string dtype", name);
    hdr_excerpt(&p, p.descr.start, p.descr.end, found, sizeof found);
    static const struct {
        const char *name;
        npy_kind kind;
        size_t size;
    } types[] = {{"<f4", NPY_F, 4}, {"<f8", NPY_F, 8}, {"<i4", NPY_I, 4},
                 {"<i8", NPY_I, 8}, {"<u4", NPY_U, 4}, {"<u8", NPY_U, 8}};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strcmp(found, types[i].name) == 0) {
            *kind = types[i].kind;
            *item = types[i].size;
            snprintf(out->dtype, sizeof out->dtype, "%s", types[i].name);
        }
    if (!*item)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "%s: dtype '%s', expected little-endian float32 '<f4', float64 "
                               "'<f8' or integers '<i4' '<i8' '<u4' '<u8'",
                               name, found);
    if (p.fortran_order.kind != HDR_BOOL || p.fortran_order.boolean)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "%s: expected C order (fortran_order False)",
                               name);
    const hdr_value *shape = &p.shape;
    hdr_shape_text(&p, shape, found, sizeof found);
    if (shape->kind != HDR_TUPLE || !shape->ints_only || shape->count < 1 || shape->count > 3)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "%s: shape %s, expected 1 to 3 dimensions",
                               name, found);
    *values = 1;
    for (size_t d = 0; d < shape->count; d++) {
        const hdr_int *di = &shape->dims[d];
        if (di->negative || di->too_big || di->magnitude == 0 ||
            di->magnitude > SIZE_MAX / 16 / *values)
            return shoal_error_set(err, SHOAL_ERR_INPUT, "%s: shape %s: empty or too large", name,
                                   found);
        out->dims[d] = (size_t)di->magnitude;
        *values *= out->dims[d];
    }
    out->ndim = (int)shape->count;
    *offset = prefix + header_len;
    return SHOAL_OK;
}

shoal_status shoal_io_npy_parse_array(const void *bytes, size_t size, const char *name,
                                      shoal_npy_array *out, shoal_error *err)
{
    CHECK_ARG(out, "out", err);
    CHECK_ARRAY(bytes, size, "data", err);
    memset(out, 0, sizeof *out);
    if (!name)
        name = "(memory)";
    const unsigned char *data = bytes;
    if (!data)
        size = 0;
    npy_kind kind = NPY_F;
    size_t item = 0, offset = 0, values = 0;
    shoal_status st = npy_array_header(data, size, name, out, &kind, &item, &offset, &values, err);
    if (!st && size - offset != values * item)
        st = shoal_error_set(err, SHOAL_ERR_INPUT,
                             size - offset < values * item
                                 ? "%s: truncated data: %zu bytes, expected %zu"
                                 : "%s: oversized: %zu bytes, expected %zu",
                             name, size - offset, values * item);
    if (!st && !(out->data = malloc(values * sizeof(double))))
        st =
            shoal_error_set(err, SHOAL_ERR_NOMEM, "%s: out of memory for %zu values", name, values);
    if (st) {
        memset(out, 0, sizeof *out);
        return st;
    }
    const unsigned char *src = data + offset;
    for (size_t i = 0; i < values; i++) {
        const unsigned char *b = src + i * item;
        uint64_t u = item == 4 ? npy_load32(b) : npy_load64(b);
        double x;
        if (kind == NPY_F && item == 4) {
            uint32_t u32 = (uint32_t)u;
            float fv;
            memcpy(&fv, &u32, sizeof fv);
            x = fv;
        } else if (kind == NPY_F) {
            memcpy(&x, &u, sizeof x);
        } else if (kind == NPY_I) {
            x = item == 4 ? (double)(int32_t)(uint32_t)u : (double)(int64_t)u;
        } else {
            x = (double)u;
        }
        out->data[i] = x;
    }
    out->is_float32 = kind == NPY_F && item == 4;
    return SHOAL_OK;
}

shoal_status shoal_io_npy_read_array(const char *path, shoal_npy_array *out, shoal_error *err)
{
    CHECK_ARG(out, "out", err);
    memset(out, 0, sizeof *out);
    if (!path)
        return shoal_error_set(err, SHOAL_ERR_IO, "cannot read a file with no name");
    FILE *f = fopen(path, "rb");
    if (!f)
        return shoal_error_set(err, SHOAL_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    /* the preamble and header first, then exactly the data they announce (and one byte more,
     * to see trailing bytes): a FIFO or /dev/zero is not read past what the header says */
    unsigned char *data = NULL;
    size_t cap = 0, len = 0;
    shoal_status st = npy_fill(f, path, &data, &cap, &len, 12, err);
    if (!st && len >= 10 && memcmp(data, npy_magic, sizeof npy_magic) == 0 && data[6] >= 1 &&
        data[6] <= 3) {
        size_t pre = data[6] == 1 ? 10 : 12;
        size_t hl = len < pre   ? 0
                    : pre == 10 ? (size_t)(data[8] | data[9] << 8)
                                : npy_load32(data + 8);
        if (hl <= NPY_HEADER_MAX)
            st = npy_fill(f, path, &data, &cap, &len, pre + hl, err);
    }
    npy_kind kind;
    size_t item = 0, offset = 0, values = 0;
    shoal_npy_array head;
    memset(&head, 0, sizeof head);
    if (!st)
        st = npy_array_header(data, len, path, &head, &kind, &item, &offset, &values, err);
    if (!st)
        st = npy_fill(f, path, &data, &cap, &len, offset + values * item + 1, err);
    fclose(f);
    if (!st)
        st = shoal_io_npy_parse_array(data, len, path, out, err);
    free(data);
    return st;
}

void shoal_npy_array_free(shoal_npy_array *a)
{
    if (!a)
        return;
    free(a->data);
    memset(a, 0, sizeof *a);
}

shoal_status shoal_io_npy_write_f64(const char *path, const double *rows, size_t count,
                                    shoal_error *err)
{
    CHECK_ARG(path, "path", err);
    CHECK_ARRAY(rows, count, "rows", err);
    if (!path)
        return shoal_error_set(err, SHOAL_ERR_IO, "cannot write a file with no name");
    if (!rows || count == 0)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "%s: no rows to write (a state file holds N >= 1 rows)", path);
    if (count > SIZE_MAX / (SHOAL_STATE_COLUMNS * sizeof(double)))
        return shoal_error_set(err, SHOAL_ERR_INPUT, "%s: %zu rows is too many", path, count);
    unsigned char preamble[192];
    char *dict = (char *)preamble + 10;
    int dict_len = snprintf(dict, 192 - 10,
                            "{'descr': '<f8', 'fortran_order': False, 'shape': (%zu, 6), }", count);
    size_t unpadded = 10 + (size_t)dict_len + 1;
    size_t total = (unpadded + 63) / 64 * 64;
    memcpy(preamble, npy_magic, sizeof npy_magic);
    preamble[6] = 1;
    preamble[7] = 0;
    preamble[8] = (unsigned char)((total - 10) & 0xff);
    preamble[9] = (unsigned char)((total - 10) >> 8);
    memset(preamble + 10 + dict_len, ' ', total - unpadded);
    preamble[total - 1] = '\n';
    shoal_atomic_file af;
    shoal_status status = shoal_io_atomic_open(&af, path, err);
    if (status != SHOAL_OK)
        return status;
    FILE *f = af.file;
    int ok = fwrite(preamble, 1, total, f) == total;
    unsigned char chunk[64 * 1024];
    size_t value_count = count * SHOAL_STATE_COLUMNS;
    for (size_t i = 0; ok && i < value_count;) {
        size_t n = value_count - i;
        if (n > sizeof chunk / 8)
            n = sizeof chunk / 8;
        for (size_t k = 0; k < n; k++) {
            uint64_t bits;
            memcpy(&bits, &rows[i + k], sizeof bits);
            npy_store32(chunk + 8 * k, (uint32_t)bits);
            npy_store32(chunk + 8 * k + 4, (uint32_t)(bits >> 32));
        }
        ok = fwrite(chunk, 8, n, f) == n;
        i += n;
    }
    if (!ok) {
        int e = errno;
        shoal_io_atomic_abort(&af);
        return shoal_error_set(err, SHOAL_ERR_IO, "%s: write failed: %s", path, strerror(e));
    }
    return shoal_io_atomic_commit(&af, err);
}

/* ---- row ranges (io/npy_layout.h: the MPI-IO reader and writer) ---------------------- */

size_t npy_preamble_size(const void *data, size_t size)
{
    const unsigned char *b = data;
    if (!b || size < 12 || memcmp(b, npy_magic, sizeof npy_magic) != 0)
        return 0;
    if (b[6] == 1)
        return 10 + (size_t)(b[8] | b[9] << 8);
    return 12 + (size_t)npy_load32(b + 8);
}

shoal_status npy_layout_parse(const void *data, size_t size, uint64_t file_size, const char *name,
                              npy_layout *out, shoal_error *err)
{
    npy_info info;
    shoal_status st = npy_header(data, data ? size : 0, name, &info, err);
    if (!st)
        st = npy_size_check(
            &info, file_size > info.data_offset ? (size_t)(file_size - info.data_offset) : 0, name,
            err);
    if (st)
        return st;
    out->count = info.count;
    out->item_size = info.item_size;
    out->data_offset = info.data_offset;
    return SHOAL_OK;
}

void npy_decode(const void *src_bytes, size_t item_size, size_t value_count, float *rows)
{
    const unsigned char *src = src_bytes;
    if (item_size == 4) {
        for (size_t i = 0; i < value_count; i++) {
            uint32_t bits = npy_load32(src + 4 * i);
            memcpy(&rows[i], &bits, sizeof bits);
        }
    } else {
        for (size_t i = 0; i < value_count; i++) {
            uint64_t bits = npy_load64(src + 8 * i);
            double d;
            memcpy(&d, &bits, sizeof d);
            rows[i] = (float)d;
        }
    }
}

void npy_encode(const float *rows, size_t value_count, void *dst)
{
    unsigned char *b = dst;
    for (size_t k = 0; k < value_count; k++) {
        uint32_t bits;
        memcpy(&bits, &rows[k], sizeof bits);
        npy_store32(b + 4 * k, bits);
    }
}

size_t npy_preamble_write(unsigned char preamble[192], size_t count)
{
    char *dict = (char *)preamble + 10;
    int dict_len = snprintf(dict, 192 - 10,
                            "{'descr': '<f4', 'fortran_order': False, 'shape': (%zu, 6), }", count);
    size_t unpadded = 10 + (size_t)dict_len + 1;
    size_t total = (unpadded + 63) / 64 * 64;
    memcpy(preamble, npy_magic, sizeof npy_magic);
    preamble[6] = 1;
    preamble[7] = 0;
    preamble[8] = (unsigned char)((total - 10) & 0xff);
    preamble[9] = (unsigned char)((total - 10) >> 8);
    memset(preamble + 10 + dict_len, ' ', total - unpadded);
    preamble[total - 1] = '\n';
    return total;
}

shoal_status rows_layout_npy(rows_layout *l, size_t count, const char *name, shoal_error *err)
{
    memset(l, 0, sizeof *l);
    if (count == 0)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "%s: no rows to write (a state file holds N >= 1 rows)", name);
    l->bytes = malloc(192);
    if (!l->bytes)
        return shoal_error_set(err, SHOAL_ERR_NOMEM, "%s: out of memory for its header", name);
    size_t pre = npy_preamble_write(l->bytes, count);
    l->count = count;
    l->piece_count = 1;
    l->piece[0] = (rows_piece){.offset = 0, .size = pre, .at = 0};
    l->section_count = 1;
    l->section[0] = (rows_section){.offset = pre, .kind = ROWS_STATE};
    l->total_bytes = (uint64_t)pre + (uint64_t)count * 24;
    return SHOAL_OK;
}
