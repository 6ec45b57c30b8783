/* SPDX-License-Identifier: MIT */
/* JSON for the library, the program, the tests and the tools (json.c): a small reader into a
 * tree (the library's trajectory manifests, `shoal bench --compare`, and the tests that check
 * the JSON shoal writes) and the string writer every JSON output uses. Owns no state;
 * thread-safe. Internal to libshoal; the program, which may not include core's headers, sees
 * this file as "support/json.h": src/support/meson.build copies it there at setup, so there is
 * one reader and one declaration of it. */
#ifndef SHOAL_CORE_JSON_H
#define SHOAL_CORE_JSON_H

#include <stddef.h>
#include <stdio.h>

typedef enum json_type {
    JSON_NULL,
    JSON_BOOL,
    JSON_NUMBER,
    JSON_STRING,
    JSON_ARRAY,
    JSON_OBJECT
} json_type;

/* A parsed value. Arrays and objects own `count` items (objects also `count` keys);
 * json_free releases a whole tree. A tree may also be built by hand (malloc'ed strings,
 * arrays), as `shoal bench` does for its own results. */
typedef struct json_value {
    json_type type;
    double num;               /* JSON_NUMBER; JSON_BOOL: 1 true, 0 false */
    char *str;                /* JSON_STRING, escapes decoded (\uXXXX becomes '?') */
    struct json_value *items; /* JSON_ARRAY, JSON_OBJECT: the values */
    char **keys;              /* JSON_OBJECT: the keys, decoded as strings are */
    int count;
} json_value;

enum {
    /* RFC 8259 to the letter: only its four whitespace characters, its escapes (\u with
     * four hex digits) and its number grammar (no NaN, Infinity, hex, '+', leading zeros
     * or bare '.'). Without it the reader is lenient where the grammar is: any isspace
     * character, any escaped character, any number strtod reads (what `shoal bench
     * --compare` has always accepted). Both refuse raw control characters in strings,
     * trailing content and nesting deeper than 64. */
    JSON_STRICT = 1,
};

/* Results of json_load_file. */
enum { JSON_OK = 0, JSON_ERR_IO = 1, JSON_ERR_SYNTAX = 2 };

/* Parse `len` bytes as one JSON value (whitespace around it allowed). 0 on success; 1 when
 * the text is not JSON (or memory ran out): then *out is freed and zeroed. */
int json_parse(const char *text, size_t len, unsigned flags, json_value *out);

/* Read and parse a whole file. JSON_OK; JSON_ERR_IO when it cannot be read ("PATH:
 * strerror" or "PATH: out of memory" in err); JSON_ERR_SYNTAX when it is not JSON ("PATH:
 * malformed JSON"). err may be NULL. On failure *out is zeroed. */
int json_load_file(const char *path, unsigned flags, json_value *out, char *err, size_t err_size);

/* The value of `key` in object `obj` (the first if repeated); NULL when `obj` is NULL, not
 * an object, or has no such key. */
const json_value *json_get(const json_value *obj, const char *key);

/* Free a tree (strings, items, keys) and zero *v. */
void json_free(json_value *v);

/* Write `s` as a JSON string: quotes, \" and \\ escaped, control characters as \u00XX,
 * valid UTF-8 as it is, each byte that is not UTF-8 as \ufffd (U+FFFD), so the output is
 * valid JSON whatever the bytes of a file name (docs/CLI.md, "JSON"). NULL writes null.
 * The library's trace writer uses the same function (core/text.h). A failed write shows
 * in ferror(f). */
void json_write_string(FILE *f, const char *s);
/* A JSON number with `digits` significant digits (%.*g); null when not finite (JSON has no
 * NaN or infinity). */
void json_write_number(FILE *f, double v, int digits);

#endif
