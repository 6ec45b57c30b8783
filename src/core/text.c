/* SPDX-License-Identifier: MIT */
/* UTF-8 and JSON strings (text.h). Owns no state. */
#include "core/text.h"

size_t text_utf8_length(const unsigned char *s)
{
    unsigned c = s[0];
    size_t n;
    unsigned lo = 0x80, hi = 0xbf; /* range of the second byte */
    if (c < 0x80)
        return c ? 1 : 0;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        lo = c == 0xe0 ? 0xa0 : 0x80;
        hi = c == 0xed ? 0x9f : 0xbf;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        lo = c == 0xf0 ? 0x90 : 0x80;
        hi = c == 0xf4 ? 0x8f : 0xbf;
    } else
        return 0;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    return n;
}

int text_json_string(FILE *f, const char *s)
{
    if (!s)
        return fputs("null", f) < 0 ? -1 : 0;
    int bad = fputc('"', f) == EOF;
    const unsigned char *p = (const unsigned char *)s;
    while (*p && !bad) {
        size_t n = text_utf8_length(p);
        if (n == 0) { /* not UTF-8: one replacement character per byte */
            bad = fputs("\\ufffd", f) < 0;
            p++;
        } else if (*p == '"' || *p == '\\') {
            bad = fprintf(f, "\\%c", *p) < 0;
            p++;
        } else if (*p < 0x20) {
            bad = fprintf(f, "\\u%04x", *p) < 0;
            p++;
        } else {
            bad = fwrite(p, 1, n, f) != n;
            p += n;
        }
    }
    if (!bad)
        bad = fputc('"', f) == EOF;
    return bad ? -1 : 0;
}
