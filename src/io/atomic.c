/* SPDX-License-Identifier: MIT */
/* Atomic file output (see shoal/io.h): data goes to a temporary file in the target's own
 * directory (so rename(2) never crosses a file system), is flushed and fsync'ed, and only
 * then renamed over the target. A reader sees the old file or the new one, never a part of
 * one; a failure at any step removes the temporary file and leaves the target as it was.
 * Owns nothing beyond the shoal_atomic_file the caller holds; no global state. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "shoal/io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The base name is cut to this many bytes in the temporary name: ".NAME.tmp.XXXXXX" adds
 * 12 bytes, and a target whose name is near NAME_MAX (255) must still get a temporary. */
#define ATOMIC_BASE_MAX 200

/* umask(2) can only be read by setting it, which races with other threads creating files;
 * Linux (4.7 and later) shows it in /proc/self/status, so look there first. */
static mode_t atomic_umask(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (f) {
        char line[256];
        unsigned int mask;
        while (fgets(line, sizeof line, f)) {
            if (sscanf(line, "Umask: %o", &mask) == 1) {
                fclose(f);
                return (mode_t)(mask & 0777);
            }
        }
        fclose(f);
    }
    mode_t old = umask(022);
    umask(old);
    return old;
}

/* The directory part of `path` for messages and the directory sync: "." when none. */
static void atomic_dirname(const char *path, char *out, size_t out_size)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(out, out_size, ".");
    else if (slash == path)
        snprintf(out, out_size, "/");
    else
        snprintf(out, out_size, "%.*s", (int)(slash - path), path);
}

shoal_status shoal_io_atomic_open(shoal_atomic_file *af, const char *path, shoal_error *err)
{
    af->file = NULL;
    af->tmp_path[0] = '\0';
    af->path[0] = '\0';
    if (!path || !*path)
        return shoal_error_set(err, SHOAL_ERR_IO, "cannot write a file with an empty name");
    size_t path_len = strlen(path);
    if (path_len >= sizeof af->path)
        return shoal_error_set(err, SHOAL_ERR_IO, "%.200s...: path too long (%zu bytes)", path,
                               path_len);
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    int dir_len = slash ? (int)(slash - path) + 1 : 0; /* keeps the slash */
    if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        return shoal_error_set(err, SHOAL_ERR_IO, "%s: not a file name", path);

    int n = snprintf(af->tmp_path, sizeof af->tmp_path, "%.*s.%.*s.tmp.XXXXXX", dir_len, path,
                     ATOMIC_BASE_MAX, base);
    if (n < 0 || (size_t)n >= sizeof af->tmp_path) {
        af->tmp_path[0] = '\0';
        return shoal_error_set(err, SHOAL_ERR_IO, "%.200s...: path too long for a temporary file",
                               path);
    }
    memcpy(af->path, path, path_len + 1);

    char dir[4096];
    int fd = mkstemp(af->tmp_path);
    if (fd < 0) {
        int e = errno;
        af->tmp_path[0] = '\0';
        atomic_dirname(path, dir, sizeof dir);
        return shoal_error_set(err, SHOAL_ERR_IO, "%s: cannot create a temporary file in %s: %s",
                               path, dir, strerror(e));
    }
    /* mkstemp makes the file 0600; give it the mode fopen(path, "w") would have given, so
     * the renamed file is like any other output (readable by tools run as other users). */
    const char *step = "chmod";
    FILE *f = NULL;
    if (fchmod(fd, 0666 & ~atomic_umask()) == 0) {
        step = "fdopen";
        f = fdopen(fd, "wb");
    }
    if (!f) {
        int e = errno;
        close(fd);
        unlink(af->tmp_path);
        af->tmp_path[0] = '\0';
        return shoal_error_set(err, SHOAL_ERR_IO, "%s: cannot open a temporary file (%s): %s", path,
                               step, strerror(e));
    }
    af->file = f;
    return SHOAL_OK;
}

shoal_status shoal_io_atomic_commit(shoal_atomic_file *af, shoal_error *err)
{
    FILE *f = af->file;
    if (!f)
        return shoal_error_set(err, SHOAL_ERR_IO, "%s: no temporary file open to commit",
                               af->path[0] ? af->path : "(unnamed)");
    af->file = NULL;

    /* fsync before rename: otherwise a crash can leave the new name pointing at a file
     * whose blocks were never written (the classic zero-length-file-after-crash). */
    const char *step = NULL;
    int e = 0;
    if (fflush(f) != 0) {
        step = "flush";
        e = errno;
    } else if (fsync(fileno(f)) != 0) {
        step = "fsync";
        e = errno;
    }
    if (fclose(f) != 0 && !step) {
        step = "close";
        e = errno;
    }
    if (!step && rename(af->tmp_path, af->path) != 0) {
        step = "rename";
        e = errno;
    }
    if (step) {
        unlink(af->tmp_path);
        af->tmp_path[0] = '\0';
        return shoal_error_set(err, SHOAL_ERR_IO,
                               "%s: cannot write (%s of the temporary file failed): %s", af->path,
                               step, strerror(e));
    }
    af->tmp_path[0] = '\0';

    /* Make the rename itself durable. Best effort and deliberately not reported: the new
     * file is already in place and complete for every reader, and some file systems refuse
     * fsync on a directory. Reporting a failure now would claim no file was written. */
    char dir[4096];
    atomic_dirname(af->path, dir, sizeof dir);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
    return SHOAL_OK;
}

void shoal_io_atomic_abort(shoal_atomic_file *af)
{
    if (!af)
        return;
    /* The contents are being thrown away: a failed close or unlink has nothing to report
     * to (and a leftover temporary is hidden, and named so it can be recognised). */
    if (af->file) {
        (void)fclose(af->file);
        af->file = NULL;
    }
    if (af->tmp_path[0]) {
        (void)unlink(af->tmp_path);
        af->tmp_path[0] = '\0';
    }
}
