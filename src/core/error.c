/* SPDX-License-Identifier: MIT */
/* The error record (see shoal/base.h), and the escaping that keeps every message one line of
 * harmless text whatever file names and values it quotes. */
#include "shoal/base.h"

#include "core/text.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

char *shoal_error_escape(char *dst, size_t size, const char *src)
{
    if (!size)
        return dst;
    const unsigned char *s = (const unsigned char *)src;
    size_t o = 0;
    while (*s) {
        size_t n = text_utf8_length(s);
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
