/* SPDX-License-Identifier: MIT */
/* Atomic file output (see shoal/io.h): data goes to a temporary file in the target's own
 * directory (so rename(2) never crosses a file system), is flushed and fsync'ed, and only
 * then renamed over the target. A reader sees the old file or the new one, never a part of
 * one; a failure at any step removes the temporary file and leaves the target as it was.
 * What is at the path decides how: symlinks are followed (the link stays, its target is
 * replaced), devices and FIFOs are written in place (renaming over /dev/null would replace
 * it), directories are refused. The only global state is the table of open temporaries
 * that shoal_io_atomic_remove_temps reads from a signal handler. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "shoal/io.h"
#include "core/check.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The base name is cut to this many bytes in the temporary name: ".NAME.tmp.XXXXXX" adds
 * 12 bytes, and a target whose name is near NAME_MAX (255) must still get a temporary. */
#define ATOMIC_BASE_MAX 200

/* ---- temporaries a signal handler may remove ------------------------------------------ */

/* A slot is free (0), being filled or emptied by its owner (1), or holds a live temporary
 * path (2). Only the owner writes a slot's path, and only while the slot is not 2, so the
 * handler never reads a path being written. Lock-free atomics are async-signal-safe. A
 * process with more than ATOMIC_SLOTS outputs open at once leaves the rest unregistered
 * (their temporaries survive a signal, as every temporary did before). */
#define ATOMIC_SLOTS 16
static char g_slot_path[ATOMIC_SLOTS][4096];
static atomic_int g_slot_state[ATOMIC_SLOTS];

static int atomic_register(const char *tmp_path)
{
    for (int i = 0; i < ATOMIC_SLOTS; i++) {
        int expect = 0;
        if (atomic_compare_exchange_strong(&g_slot_state[i], &expect, 1)) {
            snprintf(g_slot_path[i], sizeof g_slot_path[i], "%s", tmp_path);
            atomic_store(&g_slot_state[i], 2);
            return i;
        }
    }
    return -1;
}

static void atomic_unregister(int *slot)
{
    if (*slot >= 0 && *slot < ATOMIC_SLOTS)
        atomic_store(&g_slot_state[*slot], 0);
    *slot = -1;
}

/* mkstemp(3) for a template ending in "XXXXXX", but the name is registered for the signal
 * handler BEFORE the file exists: blocking signals in this thread is not enough when other
 * threads (an OpenMP team) exist, since the kernel then hands a process signal to one of
 * them, which could run the handler between mkstemp's creation and the registration and
 * leave the temporary behind. The handler unlinking a name not created yet is harmless. */
static int atomic_create_temp(shoal_atomic_file *af, int probe, int *err_out)
{
    static const char digits[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    static atomic_uint counter;
    size_t len = strlen(af->tmp_path);
    char *x = af->tmp_path + len - 6;
    for (int attempt = 0; attempt < 100; attempt++) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t v = ((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_nsec ^
                     ((uint64_t)ts.tv_sec << 20) ^
                     ((uint64_t)atomic_fetch_add(&counter, 1) * 0x9E3779B97F4A7C15ull);
        v ^= v >> 31;
        v *= 0xBF58476D1CE4E5B9ull;
        v ^= v >> 29;
        for (int k = 0; k < 6; k++) {
            x[k] = digits[v % 62];
            v /= 62;
        }
        if (!probe)
            af->slot = atomic_register(af->tmp_path);
        int fd = open(af->tmp_path, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd >= 0)
            return fd;
        *err_out = errno;
        if (!probe)
            atomic_unregister(&af->slot);
        if (errno != EEXIST)
            return -1;
    }
    return -1;
}

void shoal_io_atomic_remove_temps(void)
{
    for (int i = 0; i < ATOMIC_SLOTS; i++)
        if (atomic_load(&g_slot_state[i]) == 2)
            (void)unlink(g_slot_path[i]);
}

/* ---- helpers -------------------------------------------------------------------------- */

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

/* What is at `path`, following symbolic links by hand (readlink, relative targets taken
 * from the link's directory) so that a dangling link still names the file it would create.
 * Fills `target` with the final path and *exists / *st with what is there. */
static shoal_status atomic_resolve(const char *path, char *target, size_t target_size, int *exists,
                                   struct stat *st, shoal_error *err)
{
    snprintf(target, target_size, "%s", path);
    for (int depth = 0; depth < 40; depth++) {
        if (lstat(target, st) != 0) {
            if (errno == ENOENT) {
                *exists = 0;
                return SHOAL_OK;
            }
            return shoal_error_set(err, SHOAL_ERR_IO, "%s: cannot write: %s", path,
                                   strerror(errno));
        }
        if (!S_ISLNK(st->st_mode)) {
            *exists = 1;
            return SHOAL_OK;
        }
        char link[4096];
        ssize_t n = readlink(target, link, sizeof link - 1);
        if (n < 0)
            return shoal_error_set(err, SHOAL_ERR_IO, "%s: cannot read the symbolic link: %s", path,
                                   strerror(errno));
        link[n] = '\0';
        char next[4096];
        const char *slash = strrchr(target, '/');
        int w;
        if (link[0] == '/' || !slash)
            w = snprintf(next, sizeof next, "%s", link);
        else
            w = snprintf(next, sizeof next, "%.*s/%s", (int)(slash - target), target, link);
        if (w < 0 || (size_t)w >= sizeof next || (size_t)w >= target_size)
            return shoal_error_set(err, SHOAL_ERR_IO, "%s: symbolic link target too long", path);
        memcpy(target, next, (size_t)w + 1);
    }
    return shoal_error_set(err, SHOAL_ERR_IO, "%s: cannot write: %s", path, strerror(ELOOP));
}

/* The signals an application's handler removes temporaries on: blocked while a temporary
 * exists but is not yet registered, so that a signal cannot fall between the two. */
static void atomic_block_signals(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGQUIT);
    sigaddset(&set, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &set, old);
}

/* ---- open / commit / abort ------------------------------------------------------------ */

/* The open of shoal_io_atomic_open, or with `probe` the check of shoal_io_atomic_check:
 * every refusal of the open, nothing left behind, nothing opened that could block. */
static shoal_status atomic_open(shoal_atomic_file *af, const char *path, int probe,
                                shoal_error *err)
{
    af->file = NULL;
    af->tmp_path[0] = '\0';
    af->path[0] = '\0';
    af->target[0] = '\0';
    af->slot = -1;
    if (!path || !*path)
        return shoal_error_set(err, SHOAL_ERR_IO, "cannot write a file with an empty name");
    size_t path_len = strlen(path);
    if (path_len >= sizeof af->path)
        return shoal_error_set(err, SHOAL_ERR_IO, "%.200s...: path too long (%zu bytes)", path,
                               path_len);
    memcpy(af->path, path, path_len + 1);
    const char *given_base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    if (!*given_base || strcmp(given_base, ".") == 0 || strcmp(given_base, "..") == 0)
        return shoal_error_set(err, SHOAL_ERR_IO, "%s: not a file name", path);

    struct stat st;
    int exists = 0;
    if (atomic_resolve(path, af->target, sizeof af->target, &exists, &st, err))
        return err ? err->status : SHOAL_ERR_IO;
    const char *target = af->target;
    if (exists && S_ISDIR(st.st_mode))
        return shoal_error_set(err, SHOAL_ERR_IO, "%s: is a directory", path);
    if (exists && !S_ISREG(st.st_mode)) {
        /* A device, FIFO or socket: what a shell's `>` does, in place. Renaming over it
         * would replace /dev/null with a regular file (as root) or a FIFO with a file. */
        if (probe) {
            if (access(target, W_OK) != 0)
                return shoal_error_set(err, SHOAL_ERR_IO, "%s: cannot write: %s", path,
                                       strerror(errno));
            return SHOAL_OK;
        }
        int fd = open(target, O_WRONLY | O_NOCTTY | O_CLOEXEC);
        FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
        if (!f) {
            int e = errno;
            if (fd >= 0)
                close(fd);
            return shoal_error_set(err, SHOAL_ERR_IO, "%s: cannot write: %s", path, strerror(e));
        }
        af->file = f;
        return SHOAL_OK;
    }
    /* A regular file the user may not write is refused as fopen(path, "w") would refuse it
     * (root may), though rename(2) needs only the directory's permission. */
    if (exists && access(target, W_OK) != 0)
        return shoal_error_set(err, SHOAL_ERR_IO, "%s: cannot write the existing file: %s", path,
                               strerror(errno));

    const char *slash = strrchr(target, '/');
    const char *base = slash ? slash + 1 : target;
    int dir_len = slash ? (int)(slash - target) + 1 : 0; /* keeps the slash */
    if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        return shoal_error_set(err, SHOAL_ERR_IO, "%s: not a file name", path);

    int n = snprintf(af->tmp_path, sizeof af->tmp_path, "%.*s.%.*s.tmp.XXXXXX", dir_len, target,
                     ATOMIC_BASE_MAX, base);
    if (n < 0 || (size_t)n >= sizeof af->tmp_path) {
        af->tmp_path[0] = '\0';
        return shoal_error_set(err, SHOAL_ERR_IO, "%.200s...: path too long for a temporary file",
                               path);
    }

    char dir[4096];
    sigset_t old_mask;
    atomic_block_signals(&old_mask);
    int mk_errno = 0;
    int fd = atomic_create_temp(af, probe, &mk_errno);
    if (fd >= 0 && probe) {
        close(fd);
        unlink(af->tmp_path);
    }
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    if (fd < 0) {
        af->tmp_path[0] = '\0';
        atomic_dirname(target, dir, sizeof dir);
        return shoal_error_set(err, SHOAL_ERR_IO, "%s: cannot create a temporary file in %s: %s",
                               path, dir, strerror(mk_errno));
    }
    if (probe) {
        af->tmp_path[0] = '\0';
        return SHOAL_OK;
    }
    /* mkstemp makes the file 0600; give it the mode fopen(path, "w") would have given (a
     * new file: 0666 less the umask; an existing one keeps its mode and, where allowed,
     * its owner), so the renamed file is like any other output. */
    const char *step = "chmod";
    FILE *f = NULL;
    mode_t mode = exists ? (st.st_mode & 07777) : (0666 & ~atomic_umask());
    if (exists && (st.st_uid != geteuid() || st.st_gid != getegid()))
        (void)fchown(fd, st.st_uid, st.st_gid); /* best effort: only root may give files away */
    if (fchmod(fd, mode) == 0) {
        step = "fdopen";
        f = fdopen(fd, "wb");
    }
    if (!f) {
        int e = errno;
        close(fd);
        unlink(af->tmp_path);
        atomic_unregister(&af->slot);
        af->tmp_path[0] = '\0';
        return shoal_error_set(err, SHOAL_ERR_IO, "%s: cannot open a temporary file (%s): %s", path,
                               step, strerror(e));
    }
    af->file = f;
    return SHOAL_OK;
}

shoal_status shoal_io_atomic_open(shoal_atomic_file *af, const char *path, shoal_error *err)
{
    CHECK_ARG(af, "af", err);
    CHECK_ARG(path, "path", err);
    return atomic_open(af, path, 0, err);
}

shoal_status shoal_io_atomic_check(const char *path, shoal_error *err)
{
    CHECK_ARG(path, "path", err);
    shoal_atomic_file af;
    return atomic_open(&af, path, 1, err);
}

shoal_status shoal_io_atomic_commit(shoal_atomic_file *af, shoal_error *err)
{
    CHECK_ARG(af, "af", err);
    FILE *f = af->file;
    if (!f)
        return shoal_error_set(err, SHOAL_ERR_IO, "%s: no temporary file open to commit",
                               af->path[0] ? af->path : "(unnamed)");
    af->file = NULL;

    if (!af->tmp_path[0]) {
        /* written in place (a device or FIFO): nothing to sync or rename. A write that
         * failed earlier (the stream's error flag) fails the commit even when the flush of
         * what is left succeeds: every byte must have been written. */
        int had_error = ferror(f) != 0;
        errno = 0;
        int bad = fflush(f) != 0 || had_error;
        int e = errno ? errno : EIO;
        if (fclose(f) != 0 && !bad) {
            bad = 1;
            e = errno;
        }
        if (bad)
            return shoal_error_set(err, SHOAL_ERR_IO, "%s: cannot write: %s", af->path,
                                   strerror(e));
        return SHOAL_OK;
    }

    /* fsync before rename: otherwise a crash can leave the new name pointing at a file
     * whose blocks were never written (the classic zero-length-file-after-crash). */
    const char *step = NULL;
    int e = 0;
    if (ferror(f)) {
        /* a write failed earlier (a short fprintf or fwrite the writer did not check): the
         * file would miss bytes even if the flush of the rest succeeds */
        step = "write";
        errno = 0;
        e = fflush(f) != 0 && errno ? errno : EIO;
    } else if (fflush(f) != 0) {
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
    if (!step && rename(af->tmp_path, af->target) != 0) {
        step = "rename";
        e = errno;
    }
    if (step) {
        unlink(af->tmp_path);
        atomic_unregister(&af->slot);
        af->tmp_path[0] = '\0';
        return shoal_error_set(err, SHOAL_ERR_IO,
                               "%s: cannot write (%s of the temporary file failed): %s", af->path,
                               step, strerror(e));
    }
    atomic_unregister(&af->slot);
    af->tmp_path[0] = '\0';

    /* Make the rename itself durable. Best effort and deliberately not reported: the new
     * file is already in place and complete for every reader, and some file systems refuse
     * fsync on a directory. Reporting a failure now would claim no file was written. */
    char dir[4096];
    atomic_dirname(af->target, dir, sizeof dir);
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
        atomic_unregister(&af->slot);
        af->tmp_path[0] = '\0';
    }
}
