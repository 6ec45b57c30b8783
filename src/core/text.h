/* SPDX-License-Identifier: MIT */
/* Text the library and the program write: the UTF-8 test behind message escaping
 * (shoal_error_escape) and the one JSON string writer every JSON output uses (the trace of
 * profile.c here, and json_write_string of src/support for the program). Internal. */
#ifndef SHOAL_CORE_TEXT_H
#define SHOAL_CORE_TEXT_H

#include <stddef.h>
#include <stdio.h>

/* Length of the valid UTF-8 sequence at s (1..4; 1 for ASCII), or 0 if s does not start
 * one. Overlong forms, surrogates and code points past U+10FFFF are not valid (RFC 3629).
 * s must be NUL-terminated (a NUL ends a sequence as an invalid byte would). */
size_t text_utf8_length(const unsigned char *s);

/* Write `s` as a JSON string (RFC 8259): " and \ escaped, control characters below 0x20 as
 * \u00XX, valid UTF-8 as it is, and each byte that is not part of valid UTF-8 as \ufffd
 * (U+FFFD REPLACEMENT CHARACTER), so the output is valid JSON (and valid UTF-8) whatever the
 * bytes of a file name. NULL writes null. Returns 0, or -1 when a write failed. */
int text_json_string(FILE *f, const char *s);

#endif
