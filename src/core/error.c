/* SPDX-License-Identifier: MIT */
/* The error record (see shoal/base.h), and the escaping that keeps every message one line of
 * harmless text whatever file names and values it quotes. */
#include "shoal/base.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if s does not start one. Overlong
 * forms, surrogates and code points past U+10FFFF are not valid (RFC 3629). */
static size_t utf8_length(const unsigned char *s)
{
    unsigned c = s[0];
    size_t n;
    unsigned lo = 0x80, hi = 0xbf; /* range of the second byte */
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

char *shoal_error_escape(char *dst, size_t size, const char *src)
{
    if (!size)
        return dst;
    const unsigned char *s = (const unsigned char *)src;
    size_t o = 0;
    while (*s) {
        size_t n = *s < 0x80 ? 1 : utf8_length(s);
        /* C0 controls, DEL, a byte that is not UTF-8, and U+0080..U+009F (the C1 controls,
         * 0xc2 0x80..0x9f) are what a terminal may act on */
        int escape = n == 0 || (n == 1 && (*s < 0x20 || *s == 0x7f)) ||
                     (n == 2 && *s == 0xc2 && s[1] < 0xa0);
        if (!n)
            n = 1;
        size_t need = escape ? 4 * n : n;
        if (o + need >= size)
            break;
        for (size_t i = 0; i < n; i++) {
            if (escape)
                o += (size_t)snprintf(dst + o, size - o, "\\x%02x", s[i]);
            else
                dst[o++] = (char)s[i];
        }
        s += n;
    }
    dst[o] = 0;
    return dst;
}

shoal_status shoal_error_set(shoal_error *err, shoal_status status, const char *fmt, ...)
{
    if (err) {
        char raw[sizeof err->message];
        va_list ap;
        va_start(ap, fmt);
        err->status = status;
        vsnprintf(raw, sizeof raw, fmt, ap);
        va_end(ap);
        shoal_error_escape(err->message, sizeof err->message, raw);
    }
    return status;
}
