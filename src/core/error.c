/* SPDX-License-Identifier: MIT */
/* The error record (see shoal/base.h). */
#include "shoal/base.h"

#include <stdarg.h>
#include <stdio.h>

shoal_status shoal_error_set(shoal_error *err, shoal_status status, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->status = status;
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return status;
}
