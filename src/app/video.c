/* SPDX-License-Identifier: MIT */
/* The one ffmpeg writer of the program (video.h): a child process `ffmpeg` reading raw BGRA
 * frames on a pipe and writing H.264 into an atomic temporary beside the target, its
 * stderr kept (the last lines) for our one-line error, the MP4 checked box by box before
 * the rename (ffmpeg exits 0 after failing to write its trailer on a full disk), and the
 * writer thread that takes PNG files and video frames off the drawing loop. */
#include "app/video.h"
#include "app/app.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- ffmpeg ------------------------------------------------------------------------- */

struct app_video {
    shoal_atomic_file af; /* the temporary ffmpeg writes (by its name), renamed on success */
    pid_t pid;
    int in_fd;  /* ffmpeg's stdin */
    int err_fd; /* ffmpeg's stderr (non-blocking) */
    char err[2048];
    size_t err_len;
    int width, height;
    long long frames;
};

/* Run `argv` with stdin from /dev/null and stdout to /dev/null (stderr too when
 * err_pipe is NULL, else to err_pipe[1]); in_pipe: its stdin; out_fd (>= 0): given to it
 * as fd 3. Returns the pid or -1. */
static pid_t spawn(char *const argv[], const int in_pipe[2], const int err_pipe[2], int out_fd)
{
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    /* the child: only async-signal-safe calls until exec */
    int keep = out_fd >= 0 ? fcntl(out_fd, F_DUPFD, 10) : -1; /* out of the way of 0..3 */
    int null = open("/dev/null", O_RDWR);
    if (in_pipe) {
        dup2(in_pipe[0], 0);
        close(in_pipe[0]);
        close(in_pipe[1]);
    } else if (null >= 0) {
        dup2(null, 0);
    }
    if (null >= 0)
        dup2(null, 1);
    if (err_pipe) {
        dup2(err_pipe[1], 2);
        close(err_pipe[0]);
        close(err_pipe[1]);
    } else if (null >= 0) {
        dup2(null, 2);
    }
    if (null > 2)
        close(null);
    if (keep >= 0) {
        dup2(keep, 3);
        close(keep);
    }
    /* ffmpeg must not outlive us (a SIGKILL of shoal leaves no encoder running) */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    signal(SIGPIPE, SIG_DFL);
    execvp(argv[0], argv);
    _exit(127);
}

static int wait_child(pid_t pid)
{
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return st;
}

int video_ffmpeg_found(void)
{
    char *argv[] = {"ffmpeg", "-version", NULL};
    pid_t pid = spawn(argv, NULL, NULL, -1);
    if (pid < 0)
        return 0;
    int st = wait_child(pid);
    return st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* Keep what ffmpeg said (the last bytes of it): read what is there without waiting, or
 * (wait = 1) until ffmpeg closes its stderr. */
static void drain_stderr(app_video *v, int wait)
{
    if (v->err_fd < 0)
        return;
    if (wait) {
        int fl = fcntl(v->err_fd, F_GETFL);
        if (fl >= 0)
            fcntl(v->err_fd, F_SETFL, fl & ~O_NONBLOCK);
    }
    char buf[1024]; /* < sizeof v->err */
    for (;;) {
        ssize_t n = read(v->err_fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        /* keep the last sizeof err - 1 bytes (a read is shorter than that) */
        size_t keep = sizeof v->err - 1, add = (size_t)n;
        if (v->err_len + add > keep) {
            size_t drop = v->err_len + add - keep;
            memmove(v->err, v->err + drop, v->err_len - drop);
            v->err_len -= drop;
        }
        memcpy(v->err + v->err_len, buf, add);
        v->err_len += add;
        v->err[v->err_len] = 0;
    }
    if (wait) {
        close(v->err_fd);
        v->err_fd = -1;
    }
}

/* ffmpeg's last non-empty line, for our message ("" when it said nothing). */
static const char *last_line(app_video *v, char *out, size_t size)
{
    size_t n = v->err_len;
    while (n > 0 && (v->err[n - 1] == '\n' || v->err[n - 1] == '\r' || v->err[n - 1] == ' '))
        n--;
    size_t b = n;
    while (b > 0 && v->err[b - 1] != '\n' && v->err[b - 1] != '\r')
        b--;
    snprintf(out, size, "%.*s", (int)(n - b), v->err + b);
    return out;
}

long long video_frames(const app_video *v) { return v ? v->frames : 0; }

shoal_status video_open(app_video **out, const char *path, int width, int height, double fps,
                        shoal_error *e)
{
    *out = NULL;
    size_t n = strlen(path);
    if (n < 5 || strcmp(path + n - 4, ".mp4") != 0)
        return shoal_error_set(e, SHOAL_ERR_INPUT, "'%s' must end in .mp4", path);
    if (!video_ffmpeg_found())
        return shoal_error_set(e, SHOAL_ERR_IO, VIDEO_NO_FFMPEG);
    app_video *v = calloc(1, sizeof *v);
    if (!v)
        return shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory");
    v->pid = -1;
    v->in_fd = v->err_fd = -1;
    v->width = width;
    v->height = height;
    shoal_status st = shoal_io_atomic_open(&v->af, path, e);
    if (st) {
        free(v);
        return st;
    }
    if (!v->af.tmp_path[0]) { /* a device or FIFO: an MP4 needs a file ffmpeg can seek */
        shoal_io_atomic_abort(&v->af);
        free(v);
        return shoal_error_set(e, SHOAL_ERR_IO,
                               "%s: not a regular file (an MP4 is written to a file and renamed)",
                               path);
    }
    int in_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
    if (pipe(in_pipe) != 0 || pipe(err_pipe) != 0) {
        int errnum = errno;
        for (int k = 0; k < 2; k++) {
            if (in_pipe[k] >= 0)
                close(in_pipe[k]);
            if (err_pipe[k] >= 0)
                close(err_pipe[k]);
        }
        shoal_io_atomic_abort(&v->af);
        free(v);
        return shoal_error_set(e, SHOAL_ERR_IO, "cannot start ffmpeg: %s", strerror(errnum));
    }
    char size[64], rate[64];
    snprintf(size, sizeof size, "%dx%d", width, height);
    snprintf(rate, sizeof rate, "%.17g", fps);
    /* ffmpeg writes the temporary through its descriptor (fd 3, /proc/self/fd/3), not its
     * name: a signal that removes the temporary at any moment, even before ffmpeg has
     * opened it, leaves nothing behind (ffmpeg then writes to the removed file). Where
     * /proc is not mounted, by name (the signal handler kills ffmpeg first). */
    int by_fd = access("/proc/self/fd", X_OK) == 0;
    char *out_name = by_fd ? "/proc/self/fd/3" : v->af.tmp_path;
    /* ARGB8888 words in little-endian memory are the bytes B G R A: ffmpeg's bgra. H.264
     * in yuv420p needs even sides: pad by one pixel when odd. -y: the temporary exists. */
    char *argv[] = {"ffmpeg",     "-nostdin",    "-hide_banner",
                    "-loglevel",  "error",       "-y",
                    "-f",         "rawvideo",    "-pixel_format",
                    "bgra",       "-video_size", size,
                    "-framerate", rate,          "-i",
                    "-",          "-vf",         "pad=ceil(iw/2)*2:ceil(ih/2)*2",
                    "-c:v",       "libx264",     "-preset",
                    "veryfast",   "-crf",        "20",
                    "-pix_fmt",   "yuv420p",     "-movflags",
                    "+faststart", "-f",          "mp4",
                    out_name,     NULL};
    signal(SIGPIPE, SIG_IGN); /* a dead ffmpeg is an EPIPE from write, not our death */
    v->pid = spawn(argv, in_pipe, err_pipe, by_fd ? fileno((FILE *)v->af.file) : -1);
    int errnum = errno;
    close(in_pipe[0]);
    close(err_pipe[1]);
    v->in_fd = in_pipe[1];
    v->err_fd = err_pipe[0];
    if (v->pid < 0) {
        close(v->in_fd);
        close(v->err_fd);
        shoal_io_atomic_abort(&v->af);
        free(v);
        return shoal_error_set(e, SHOAL_ERR_IO, "cannot start ffmpeg: %s", strerror(errnum));
    }
    fcntl(v->in_fd, F_SETFD, FD_CLOEXEC);
    fcntl(v->err_fd, F_SETFD, FD_CLOEXEC);
    int fl = fcntl(v->err_fd, F_GETFL);
    if (fl >= 0)
        fcntl(v->err_fd, F_SETFL, fl | O_NONBLOCK);
    app_signal_child((int)v->pid);
    *out = v;
    return SHOAL_OK;
}

static int write_all(int fd, const void *buf, size_t n)
{
    const unsigned char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

shoal_status video_write(app_video *v, const uint32_t *argb, int stride_px, shoal_error *e)
{
    int failed = 0;
    if (stride_px == v->width) {
        failed = write_all(v->in_fd, argb, (size_t)v->width * (size_t)v->height * 4) != 0;
    } else {
        for (int y = 0; y < v->height && !failed; y++)
            failed = write_all(v->in_fd, argb + (size_t)y * (size_t)stride_px,
                               (size_t)v->width * 4) != 0;
    }
    drain_stderr(v, 0);
    if (failed) {
        char line[600];
        return shoal_error_set(e, SHOAL_ERR_IO, "%s: ffmpeg stopped reading frames%s%s", v->af.path,
                               v->err_len ? ": " : " (it exited?)",
                               last_line(v, line, sizeof line));
    }
    v->frames++;
    return SHOAL_OK;
}

/* ---- the MP4 check ------------------------------------------------------------------ */

static uint64_t be32(const unsigned char *b)
{
    return ((uint64_t)b[0] << 24) | ((uint64_t)b[1] << 16) | ((uint64_t)b[2] << 8) | b[3];
}

shoal_status video_check_mp4(const char *path, shoal_error *e)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return shoal_error_set(e, SHOAL_ERR_IO, "%s: cannot read it back: %s", path,
                               strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fclose(f);
        return shoal_error_set(e, SHOAL_ERR_IO, "%s: not a regular file", path);
    }
    uint64_t size = (uint64_t)sb.st_size, at = 0;
    int boxes = 0, moov = 0, mdat = 0;
    const char *why = NULL;
    while (!why && at < size) {
        unsigned char h[16];
        if (size - at < 8 || fseeko(f, (off_t)at, SEEK_SET) != 0 || fread(h, 1, 8, f) != 8) {
            why = "a box header is cut short";
            break;
        }
        uint64_t len = be32(h), head = 8;
        if (len == 1) { /* 64-bit size */
            if (size - at < 16 || fread(h + 8, 1, 8, f) != 8) {
                why = "a box header is cut short";
                break;
            }
            len = (be32(h + 8) << 32) | be32(h + 12);
            head = 16;
        } else if (len == 0) { /* to the end of the file */
            len = size - at;
        }
        if (len < head || len > size - at) {
            why = "a box runs past the end of the file";
            break;
        }
        if (boxes == 0 && memcmp(h + 4, "ftyp", 4) != 0)
            why = "it does not start with an ftyp box";
        moov |= memcmp(h + 4, "moov", 4) == 0;
        mdat |= memcmp(h + 4, "mdat", 4) == 0;
        boxes++;
        at += len;
    }
    fclose(f);
    if (!why && size == 0)
        why = "it is empty";
    if (!why && !moov)
        why = "no moov box, ffmpeg did not finish it";
    if (!why && !mdat)
        why = "no mdat box";
    if (why)
        return shoal_error_set(e, SHOAL_ERR_IO, "%s: not a whole MP4: %s", path, why);
    return SHOAL_OK;
}

shoal_status video_close(app_video *v, int keep, shoal_error *e)
{
    if (!v)
        return SHOAL_OK;
    if (!keep)
        kill(v->pid, SIGTERM); /* stop encoding what is thrown away */
    close(v->in_fd);
    drain_stderr(v, 1);
    int st = wait_child(v->pid);
    app_signal_child(0);
    shoal_status rc = SHOAL_OK;
    char line[600];
    last_line(v, line, sizeof line);
    if (keep) {
        if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            char how[64];
            if (st >= 0 && WIFSIGNALED(st))
                snprintf(how, sizeof how, "killed by signal %d", WTERMSIG(st));
            else
                snprintf(how, sizeof how, "exit %d", st >= 0 ? WEXITSTATUS(st) : -1);
            rc = shoal_error_set(e, SHOAL_ERR_IO, "%s not written: ffmpeg failed (%s)%s%s",
                                 v->af.path, how, line[0] ? ": " : "", line);
        } else {
            shoal_error ce;
            if (video_check_mp4(v->af.tmp_path, &ce))
                rc = shoal_error_set(e, SHOAL_ERR_IO,
                                     "%s not written: ffmpeg exited 0 but its file is not a "
                                     "whole MP4 (%s)%s%s",
                                     v->af.path, strstr(ce.message, ": not a whole MP4: ") + 19,
                                     line[0] ? "; ffmpeg said: " : "", line);
        }
        if (!rc)
            rc = shoal_io_atomic_commit(&v->af, e);
    }
    shoal_io_atomic_abort(&v->af); /* after a commit: nothing; else the temporary goes */
    free(v);
    return rc;
}

/* ---- the writer thread -------------------------------------------------------------- */

#define FRAME_SLOTS 2

struct frame_out {
    int width, height, png_fast;
    app_video *video;
    pthread_t thread;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* a ring of FRAME_SLOTS frames: [tail, head) are queued */
    uint32_t *px[FRAME_SLOTS];
    char png[FRAME_SLOTS][4200];
    int has_png[FRAME_SLOTS];
    long long head, tail;
    int closing;
    shoal_status failed;
    shoal_error err;
    double busy_ms;
};

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* The writer thread: writes queued frames in order; after a failure drops the rest. */
static void *frame_out_run(void *arg)
{
    frame_out *o = arg;
    pthread_mutex_lock(&o->mu);
    for (;;) {
        while (o->tail == o->head && !o->closing)
            pthread_cond_wait(&o->cv, &o->mu);
        if (o->tail == o->head)
            break;
        int k = (int)(o->tail % FRAME_SLOTS);
        int failed = o->failed != SHOAL_OK;
        pthread_mutex_unlock(&o->mu);
        shoal_error e;
        shoal_status st = SHOAL_OK;
        double t0 = now_ms();
        if (!failed && o->has_png[k])
            st = (o->png_fast ? shoal_io_png_write_fast : shoal_io_png_write)(
                o->png[k], o->px[k], o->width, o->height, o->width, &e);
        if (!failed && !st && o->video)
            st = video_write(o->video, o->px[k], o->width, &e);
        double t1 = now_ms();
        pthread_mutex_lock(&o->mu);
        o->busy_ms += t1 - t0;
        if (st && !o->failed) {
            o->failed = st;
            o->err = e;
        }
        o->tail++;
        pthread_cond_broadcast(&o->cv);
    }
    pthread_mutex_unlock(&o->mu);
    return NULL;
}

shoal_status frame_out_open(frame_out **out, int width, int height, int png_fast, app_video *video,
                            shoal_error *e)
{
    *out = NULL;
    frame_out *o = calloc(1, sizeof *o);
    if (!o) {
        video_close(video, 0, e);
        return shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for the frame writer");
    }
    o->width = width;
    o->height = height;
    o->png_fast = png_fast;
    for (int k = 0; k < FRAME_SLOTS; k++) {
        o->px[k] = malloc((size_t)width * (size_t)height * 4 + 4);
        if (!o->px[k]) {
            for (int j = 0; j < k; j++)
                free(o->px[j]);
            free(o);
            video_close(video, 0, e);
            return shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for %dx%d frames", width,
                                   height);
        }
    }
    pthread_mutex_init(&o->mu, NULL);
    pthread_cond_init(&o->cv, NULL);
    /* the writer thread must not take the process's signals: the drawing loop handles them */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = pthread_create(&o->thread, NULL, frame_out_run, o);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        for (int k = 0; k < FRAME_SLOTS; k++)
            free(o->px[k]);
        pthread_mutex_destroy(&o->mu);
        pthread_cond_destroy(&o->cv);
        free(o);
        video_close(video, 0, e);
        return shoal_error_set(e, SHOAL_ERR_NOMEM, "cannot start the frame writer thread: %s",
                               strerror(rc));
    }
    o->started = 1;
    o->video = video;
    *out = o;
    return SHOAL_OK;
}

shoal_status frame_out_submit(frame_out *o, const uint32_t *argb, int stride_px,
                              const char *png_path, shoal_error *e)
{
    pthread_mutex_lock(&o->mu);
    while (o->head - o->tail >= FRAME_SLOTS && !o->failed)
        pthread_cond_wait(&o->cv, &o->mu);
    shoal_status st = o->failed;
    if (st) {
        *e = o->err;
        pthread_mutex_unlock(&o->mu);
        return st;
    }
    int k = (int)(o->head % FRAME_SLOTS);
    pthread_mutex_unlock(&o->mu);
    /* slot k is ours until head moves past it */
    for (int y = 0; y < o->height; y++)
        memcpy(o->px[k] + (size_t)y * (size_t)o->width, argb + (size_t)y * (size_t)stride_px,
               (size_t)o->width * 4);
    o->has_png[k] = png_path != NULL;
    if (png_path)
        snprintf(o->png[k], sizeof o->png[k], "%s", png_path);
    pthread_mutex_lock(&o->mu);
    o->head++;
    pthread_cond_broadcast(&o->cv);
    pthread_mutex_unlock(&o->mu);
    return SHOAL_OK;
}

shoal_status frame_out_close(frame_out *o, int keep, double *busy_ms, shoal_error *e)
{
    if (!o)
        return SHOAL_OK;
    pthread_mutex_lock(&o->mu);
    o->closing = 1;
    pthread_cond_broadcast(&o->cv);
    pthread_mutex_unlock(&o->mu);
    if (o->started)
        pthread_join(o->thread, NULL);
    shoal_status st = o->failed;
    if (st)
        *e = o->err;
    shoal_error ve;
    shoal_status vst = video_close(o->video, keep && !st, &ve);
    if (!st && vst) {
        st = vst;
        *e = ve;
    }
    if (busy_ms)
        *busy_ms = o->busy_ms;
    for (int k = 0; k < FRAME_SLOTS; k++)
        free(o->px[k]);
    pthread_mutex_destroy(&o->mu);
    pthread_cond_destroy(&o->cv);
    free(o);
    return st;
}
