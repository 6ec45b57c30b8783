/* SPDX-License-Identifier: MIT */
/* Output directories with one owner and all-or-nothing outputs (outdir.h). The lock is
 * flock(2) on DIR/.shoal.lock: the kernel drops it when its holder dies, however it dies, so
 * a lock is never stale; the file is removed by its holder, and a taker checks that the
 * file it locked is still the one at the path (else it locks again), so removing it cannot
 * let two runs in. Owns the files it stages until they are committed or dropped. */
#include "app/outdir.h"
#include "app/app.h"
#include "app/options.h"
#include "app/traj.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the lock ------------------------------------------------------------------------- */

shoal_status app_dir_lock_take(app_dir_lock *l, const char *dir, shoal_error *e)
{
    l->fd = -1;
    l->slot = -1;
    int n = snprintf(l->path, sizeof l->path, "%s/.shoal.lock", dir);
    if (n < 0 || (size_t)n >= sizeof l->path)
        return shoal_error_set(e, SHOAL_ERR_IO, "%s: path too long", dir);
    for (int attempt = 0; attempt < 100; attempt++) {
        int fd = open(l->path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
        if (fd < 0)
            return shoal_error_set(e, SHOAL_ERR_IO, "%s: cannot create its lock file %s: %s", dir,
                                   l->path, strerror(errno));
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            int err = errno;
            char pid[32] = "";
            ssize_t got = read(fd, pid, sizeof pid - 1);
            close(fd);
            if (err != EWOULDBLOCK)
                return shoal_error_set(e, SHOAL_ERR_IO, "%s: cannot lock %s: %s", dir, l->path,
                                       strerror(err));
            pid[got > 0 ? got : 0] = 0;
            long who = strtol(pid, NULL, 10);
            char whos[48] = "";
            if (who > 0)
                snprintf(whos, sizeof whos, " (pid %ld)", who);
            return shoal_error_set(e, SHOAL_ERR_IO,
                                   "%s: another shoal run%s holds it (%s): wait for it to end, "
                                   "or choose another directory",
                                   dir, whos, l->path);
        }
        /* the file locked must still be the one at the path: a holder that was releasing
         * removed it, and a new one may be there now */
        struct stat a, b;
        if (fstat(fd, &a) == 0 && lstat(l->path, &b) == 0 && a.st_dev == b.st_dev &&
            a.st_ino == b.st_ino) {
            char pid[32];
            int len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
            if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)len, 0) != len) {
                /* only a note for the next taker's message: not needed for the lock */
            }
            l->fd = fd;
            l->slot = app_signal_path(l->path, 0);
            return SHOAL_OK;
        }
        close(fd);
    }
    return shoal_error_set(e, SHOAL_ERR_IO, "%s: cannot lock %s: it keeps being replaced", dir,
                           l->path);
}

void app_dir_lock_release(app_dir_lock *l)
{
    if (l->fd < 0)
        return;
    app_signal_path_forget(l->slot);
    l->slot = -1;
    (void)unlink(l->path); /* while still holding it (see the top of the file) */
    close(l->fd);
    l->fd = -1;
}

/* ---- leftovers of killed runs ---------------------------------------------------------- */

/* ".NAME.tmp.XXXXXX" (shoal_io_atomic_open's temporaries) */
static int is_atomic_temp(const char *name)
{
    size_t n = strlen(name);
    if (name[0] != '.' || n < 13 || strncmp(name + n - 11, ".tmp.", 5) != 0)
        return 0;
    for (size_t i = n - 6; i < n; i++)
        if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
              (name[i] >= '0' && name[i] <= '9')))
            return 0;
    return 1;
}

static int is_stage_dir(const char *name)
{
    return strncmp(name, ".shoal-stage.tmp.", 17) == 0 && strlen(name) == 23;
}

int app_dir_clean_temps(const char *dir, const char *prefix)
{
    size_t plen = prefix ? strlen(prefix) : 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int removed = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        char p[4400];
        int stage = is_stage_dir(de->d_name);
        if ((!stage && !is_atomic_temp(de->d_name)) ||
            (prefix && strncmp(de->d_name, prefix, plen) != 0))
            continue;
        if (snprintf(p, sizeof p, "%s/%s", dir, de->d_name) >= (int)sizeof p)
            continue;
        struct stat st;
        if (lstat(p, &st) != 0)
            continue;
        if (stage && S_ISDIR(st.st_mode)) {
            app_remove_dir_now(p);
            removed++;
        } else if (S_ISREG(st.st_mode) && unlink(p) == 0) {
            removed++;
        }
    }
    closedir(d);
    return removed;
}

/* ---- output directories ---------------------------------------------------------------- */

shoal_status app_dir_create(const char *opt, const char *dir, char *created_top, size_t size,
                            shoal_error *e)
{
    char tmp[4096];
    created_top[0] = 0;
    if (!dir || !*dir || strlen(dir) >= sizeof tmp)
        return shoal_error_set(e, SHOAL_ERR_IO, "%s '%s': not a usable directory name", opt,
                               dir ? dir : "");
    snprintf(tmp, sizeof tmp, "%s", dir);
    size_t len = strlen(tmp);
    for (size_t i = 1; i <= len; i++) {
        if (tmp[i] != '/' && tmp[i] != 0)
            continue;
        char c = tmp[i];
        tmp[i] = 0;
        if (mkdir(tmp, 0777) == 0) {
            if (!created_top[0])
                snprintf(created_top, size, "%s", tmp);
        } else if (errno != EEXIST) {
            shoal_error_set(e, SHOAL_ERR_IO, "%s %s: cannot create: %s", opt, tmp, strerror(errno));
            tmp[i] = c;
            app_dir_uncreate(dir, created_top);
            return SHOAL_ERR_IO;
        }
        tmp[i] = c;
    }
    shoal_status st = traj_mkdir(dir, e); /* a directory, writable */
    if (st) {
        shoal_error_set(e, st, "%s %s", opt, e->message);
        app_dir_uncreate(dir, created_top);
    }
    return st;
}

void app_dir_uncreate(const char *dir, char *created_top)
{
    if (!created_top[0])
        return;
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", dir);
    size_t top = strlen(created_top);
    for (;;) {
        if (rmdir(tmp) != 0 || strlen(tmp) <= top)
            break;
        char *slash = strrchr(tmp, '/');
        if (!slash)
            break;
        *slash = 0;
        while (slash > tmp && slash[-1] == '/')
            *--slash = 0;
        if (strlen(tmp) < top)
            break;
    }
    created_top[0] = 0;
}

shoal_status app_outdir_open(app_outdir *d, const char *opt, const char *dir, app_outdir_owns owns,
                             int overwrite, shoal_error *e)
{
    memset(d, 0, sizeof *d);
    d->lock.fd = -1;
    d->stage_slot = -1;
    d->owns = owns;
    d->overwrite = overwrite;
    if (!dir || !*dir || strlen(dir) >= sizeof d->dir - 64)
        return shoal_error_set(e, SHOAL_ERR_IO, "%s '%s': not a usable directory name", opt,
                               dir ? dir : "");
    snprintf(d->dir, sizeof d->dir, "%s", dir);
    shoal_status st = app_dir_create(opt, dir, d->created_top, sizeof d->created_top, e);
    if (st)
        return st;
    if ((st = app_dir_lock_take(&d->lock, dir, e)) != SHOAL_OK) {
        shoal_error_set(e, st, "%s %s", opt, e->message);
        app_dir_uncreate(d->dir, d->created_top);
        return st;
    }
    /* only its staging directories: a single-file output of another command may be writing
     * its own .NAME.tmp.XXXXXX in DIR right now (it takes no lock) */
    app_dir_clean_temps(dir, ".shoal-stage.tmp.");
    if (!overwrite && owns) {
        DIR *dd = opendir(dir);
        struct dirent *de;
        while (dd && (de = readdir(dd)))
            if (owns(de->d_name)) {
                st = shoal_error_set(e, SHOAL_ERR_IO,
                                     "%s %s holds another run's output (%s): choose another "
                                     "directory, or add --overwrite to replace it",
                                     opt, dir, de->d_name);
                break;
            }
        if (dd)
            closedir(dd);
        if (st) {
            app_dir_lock_release(&d->lock);
            app_dir_uncreate(d->dir, d->created_top);
            return st;
        }
    }
    snprintf(d->stage, sizeof d->stage, "%s/.shoal-stage.tmp.XXXXXX", dir);
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGQUIT);
    pthread_sigmask(SIG_BLOCK, &set, &old); /* made and registered with no signal between */
    int ok = mkdtemp(d->stage) != NULL;
    int err = errno;
    if (ok)
        d->stage_slot = app_signal_path(d->stage, 1);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!ok) {
        d->stage[0] = 0;
        app_dir_lock_release(&d->lock);
        app_dir_uncreate(d->dir, d->created_top);
        return shoal_error_set(e, SHOAL_ERR_IO, "%s %s: cannot create a staging directory: %s", opt,
                               dir, strerror(err));
    }
    return SHOAL_OK;
}

shoal_status app_outdir_commit(app_outdir *d, const char *last, shoal_error *e)
{
    char from[8600], to[8600];
    if (d->overwrite && d->owns) {
        /* the old run's files go: its manifest first, so the directory never pairs an old
         * manifest with new files */
        if (last) {
            snprintf(to, sizeof to, "%s/%s", d->dir, last);
            (void)unlink(to);
        }
        DIR *dd = opendir(d->dir);
        struct dirent *de;
        while (dd && (de = readdir(dd)))
            if (d->owns(de->d_name)) {
                snprintf(to, sizeof to, "%s/%s", d->dir, de->d_name);
                if (unlink(to) != 0 && errno != ENOENT) {
                    int err = errno;
                    closedir(dd);
                    return shoal_error_set(e, SHOAL_ERR_IO, "%s: cannot remove the old %s: %s",
                                           d->dir, de->d_name, strerror(err));
                }
            }
        if (dd)
            closedir(dd);
    }
    DIR *sd = opendir(d->stage);
    if (!sd)
        return shoal_error_set(e, SHOAL_ERR_IO, "%s: cannot read: %s", d->stage, strerror(errno));
    struct dirent *de;
    int have_last = 0;
    shoal_status st = SHOAL_OK;
    while ((de = readdir(sd))) {
        if (de->d_name[0] == '.')
            continue;
        if (last && strcmp(de->d_name, last) == 0) {
            have_last = 1;
            continue;
        }
        snprintf(from, sizeof from, "%s/%s", d->stage, de->d_name);
        snprintf(to, sizeof to, "%s/%s", d->dir, de->d_name);
        if (rename(from, to) != 0) {
            st = shoal_error_set(e, SHOAL_ERR_IO, "%s: cannot move into place: %s", to,
                                 strerror(errno));
            break;
        }
    }
    closedir(sd);
    if (!st && have_last) {
        snprintf(from, sizeof from, "%s/%s", d->stage, last);
        snprintf(to, sizeof to, "%s/%s", d->dir, last);
        if (rename(from, to) != 0)
            st = shoal_error_set(e, SHOAL_ERR_IO, "%s: cannot move into place: %s", to,
                                 strerror(errno));
    }
    if (!st) {
        int dfd = open(d->dir, O_RDONLY | O_DIRECTORY);
        if (dfd >= 0) {
            (void)fsync(dfd); /* the renames durable (best effort, as atomic.c) */
            close(dfd);
        }
    }
    return st;
}

void app_outdir_close(app_outdir *d, int failed)
{
    if (d->stage[0]) {
        app_signal_path_forget(d->stage_slot);
        d->stage_slot = -1;
        app_remove_dir_now(d->stage);
        d->stage[0] = 0;
    }
    app_dir_lock_release(&d->lock);
    if (failed)
        app_dir_uncreate(d->dir, d->created_top);
}

/* ---- single files ---------------------------------------------------------------------- */

void app_message_rename(shoal_error *e, const char *from, const char *to)
{
    if (!e || !from[0])
        return;
    char *at = strstr(e->message, from);
    if (!at)
        return;
    char msg[sizeof e->message];
    snprintf(msg, sizeof msg, "%.*s%s%s", (int)(at - e->message), e->message, to,
             at + strlen(from));
    snprintf(e->message, sizeof e->message, "%s", msg);
}

shoal_status app_stage_file(app_staged *s, const char *path, app_write_fn fn, const void *ctx,
                            shoal_error *e)
{
    memset(s, 0, sizeof *s);
    s->af.slot = -1;
    s->path = path;
    s->fn = fn;
    s->ctx = ctx;
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
        s->in_place = 1; /* renaming over /dev/null or a FIFO would replace it */
        return shoal_io_atomic_check(path, e);
    }
    shoal_status r = shoal_io_atomic_open(&s->af, path, e);
    if (r)
        return r;
    if (!s->af.tmp_path[0]) { /* it became a device meanwhile: write it at commit */
        shoal_io_atomic_abort(&s->af);
        s->in_place = 1;
        return SHOAL_OK;
    }
    fclose((FILE *)s->af.file); /* the writer replaces the (empty) temporary, mode kept */
    s->af.file = NULL;
    r = fn(s->af.tmp_path, ctx, e);
    if (r) {
        app_message_rename(e, s->af.tmp_path, path); /* name the output, not its temporary */
        shoal_io_atomic_abort(&s->af);
        return r;
    }
    s->staged = 1;
    return SHOAL_OK;
}

shoal_status app_stage_commit(app_staged *s, shoal_error *e)
{
    if (s->in_place) {
        s->in_place = 0;
        return s->fn(s->path, s->ctx, e);
    }
    if (!s->staged)
        return SHOAL_OK;
    s->staged = 0;
    s->af.file = fopen(s->af.tmp_path, "rb");
    if (!s->af.file) {
        int err = errno;
        shoal_io_atomic_abort(&s->af);
        return shoal_error_set(e, SHOAL_ERR_IO, "%s: cannot write (its temporary is gone: %s)",
                               s->path, strerror(err));
    }
    return shoal_io_atomic_commit(&s->af, e);
}

void app_stage_abort(app_staged *s)
{
    s->staged = 0;
    s->in_place = 0;
    shoal_io_atomic_abort(&s->af);
}

shoal_status app_stage_commit_all(app_staged *s, int n, shoal_error *e)
{
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n; i++)
            if (s[i].in_place == pass) {
                shoal_status st = app_stage_commit(&s[i], e);
                if (st)
                    return st;
            }
    return SHOAL_OK;
}

/* ---- frame names ------------------------------------------------------------------------ */

int app_frame_step(const char *name, const char *prefix, const char *ext, long long *step)
{
    size_t lp = strlen(prefix), le = strlen(ext), n = strlen(name);
    if (n <= lp + le || strncmp(name, prefix, lp) != 0 || strcmp(name + n - le, ext) != 0)
        return 0;
    size_t digits = n - lp - le;
    if (digits < 6 || digits > 18)
        return 0;
    long long v = 0;
    for (size_t i = 0; i < digits; i++) {
        char c = name[lp + i];
        if (c < '0' || c > '9')
            return 0;
        v = v * 10 + (c - '0');
    }
    char again[64];
    snprintf(again, sizeof again, "%06lld", v); /* the one spelling shoal writes */
    if (strlen(again) != digits || strncmp(again, name + lp, digits) != 0)
        return 0;
    *step = v;
    return 1;
}

/* ---- outputs that must not collide ------------------------------------------------------ */

int app_output_not_input(const opt_values *o, const char *const *outputs, const char *input,
                         const char *what)
{
    struct stat st;
    /* a regular file is what a write replaces (a device or FIFO is written in place) */
    if (!input || stat(input, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    for (int i = 0; outputs[i]; i++) {
        const char *a = options_given(o, outputs[i]) ? options_get(o, outputs[i]) : NULL;
        if (a && strcmp(outputs[i], "out") == 0 && strcmp(a, OPTIONS_OUT_NONE) == 0)
            continue; /* --out -: no output */
        if (a && app_same_output(a, input))
            return options_fail(o,
                                "--%s %s is the input %s (%s): the output would replace it; give "
                                "the output another name",
                                outputs[i], a, input, what);
    }
    return 0;
}

int app_output_not_in_input_dir(const opt_values *o, const char *const *outputs, const char *dir,
                                app_outdir_owns owns, const char *what)
{
    if (!dir)
        return 0;
    for (int i = 0; outputs[i]; i++) {
        const char *a = options_given(o, outputs[i]) ? options_get(o, outputs[i]) : NULL;
        if (!a)
            continue;
        const char *slash = strrchr(a, '/');
        const char *base = slash ? slash + 1 : a;
        char parent[4096];
        int w = snprintf(parent, sizeof parent, "%.*s", slash ? (int)(slash - a) + 1 : 1,
                         slash ? a : ".");
        if (w > 0 && (size_t)w < sizeof parent && owns(base) && app_same_output(parent, dir))
            return options_fail(o,
                                "--%s %s is a file of the input directory %s (%s): the output "
                                "would replace it; give the output another name or directory",
                                outputs[i], a, dir, what);
    }
    return 0;
}

int app_outputs_distinct(const opt_values *o, const char *const *names, const char *dir,
                         app_outdir_owns owns)
{
    for (int i = 0; names[i]; i++) {
        const char *a = options_given(o, names[i]) ? options_get(o, names[i]) : NULL;
        if (!a)
            continue;
        for (int j = i + 1; names[j]; j++) {
            const char *b = options_given(o, names[j]) ? options_get(o, names[j]) : NULL;
            if (b && app_same_output(a, b))
                return options_fail(o,
                                    "--%s and --%s name the same file %s: give each output "
                                    "its own file",
                                    names[i], names[j], b);
        }
        if (dir && owns) {
            const char *slash = strrchr(a, '/');
            const char *base = slash ? slash + 1 : a;
            char parent[4096];
            int w = snprintf(parent, sizeof parent, "%.*s", slash ? (int)(slash - a) + 1 : 1,
                             slash ? a : ".");
            if (w > 0 && (size_t)w < sizeof parent && owns(base) && app_same_output(parent, dir))
                return options_fail(o,
                                    "--%s %s is a file of the output directory %s (%s): give it "
                                    "another name or directory",
                                    names[i], a, dir,
                                    options_given(o, "out-dir") ? "--out-dir" : "--out");
        }
    }
    return 0;
}
