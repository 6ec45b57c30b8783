/* SPDX-License-Identifier: MIT */
/* Trace files: a profile's spans (core/profile.c formats them) written through the atomic
 * writer, so a failed or interrupted run leaves no half-written trace. */
#include "core/profile.h"
#include "core/check.h"
#include "shoal/io.h"
#include "shoal/profile.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

shoal_status prof_trace_write(const prof *p, const char *path, shoal_error *err)
{
    shoal_atomic_file af;
    shoal_status st = shoal_io_atomic_open(&af, path, err);
    if (st)
        return st;
    prof_trace_emit(p, af.file);
    if (ferror(af.file)) {
        shoal_io_atomic_abort(&af);
        return shoal_error_set(err, SHOAL_ERR_IO, "%s: write failed: %s", path, strerror(errno));
    }
    return shoal_io_atomic_commit(&af, err);
}

shoal_status shoal_profile_trace_save(const shoal_profile *profile, const char *path,
                                      shoal_error *err)
{
    CHECK_ARG(profile, "profile", err);
    CHECK_ARG(path, "path", err);
    return prof_trace_write(profile, path, err);
}

/* the earlier name, on the earlier names' profile */
shoal_status shoal_profile_trace_write(const char *path, shoal_error *err)
{
    return prof_trace_write(prof_legacy(), path, err);
}
