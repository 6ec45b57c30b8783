/* SPDX-License-Identifier: MIT */
/* Signals of the shoal program: SIGINT, SIGTERM, SIGHUP and SIGQUIT remove the temporary
 * files of outputs being written (shoal_io_atomic_remove_temps), the staging directories
 * and lock files registered here, pass the signal to child processes (a sweep's members)
 * and wait for them, and then kill the process by the same signal (default action), so a
 * shell sees "killed by SIGTERM" as before and no ".NAME.tmp.XXXXXX" is left behind. `shoal run`
 * replaces the SIGINT/SIGTERM handlers with its own graceful stop (finish the frame, close the
 * video) and arms a deadline here: a frame that does not end within a second is cut short by the
 * signal. */
#include "app/app.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t g_deadline_sig;
/* A child process the handler kills first (ffmpeg writing a video temporary). */
static volatile sig_atomic_t g_child;

/* More paths the handler removes: files (a lock file) and staging directories (emptied,
 * one level, then removed). A slot is written only while it is not set, as in atomic.c. */
#define SIG_SLOTS 8
static char g_path[SIG_SLOTS][4400];
static volatile sig_atomic_t g_path_kind[SIG_SLOTS]; /* 0 free, 1 file, 2 directory */

/* Child processes (a sweep's members) the handler passes the signal to and waits for. */
static const volatile pid_t *g_children;
static volatile sig_atomic_t g_child_count;

void app_signal_child(int pid) { g_child = pid > 0 ? pid : 0; }

int app_signal_path(const char *path, int is_dir)
{
    size_t n = strlen(path);
    if (n >= sizeof g_path[0])
        return -1;
    for (int i = 0; i < SIG_SLOTS; i++)
        if (!g_path_kind[i]) {
            memcpy(g_path[i], path, n + 1);
            atomic_signal_fence(memory_order_seq_cst); /* the path before the mark */
            g_path_kind[i] = is_dir ? 2 : 1;
            return i;
        }
    return -1;
}

void app_signal_path_forget(int slot)
{
    if (slot >= 0 && slot < SIG_SLOTS)
        g_path_kind[slot] = 0;
}

void app_signal_children(const volatile pid_t *pids, int count)
{
    g_child_count = 0;
    g_children = pids;
    g_child_count = pids ? count : 0;
}

void app_signal_after_fork(void)
{
    /* the child owns none of its parent's lock files, staging directories or children */
    for (int i = 0; i < SIG_SLOTS; i++)
        g_path_kind[i] = 0;
    g_child = 0;
    app_signal_children(NULL, 0);
}

/* Empty a directory (one level: its files) and remove it, with system calls only
 * (getdents64, unlinkat, rmdir): async-signal-safe, unlike opendir/readdir. */
void app_remove_dir_now(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return;
    char buf[4096] __attribute__((aligned(8)));
    for (int pass = 0; pass < 1000; pass++) {
        long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
        if (n <= 0)
            break;
        for (long off = 0; off < n;) {
            /* struct linux_dirent64: u64 ino, s64 off, u16 reclen, u8 type, char name[] */
            unsigned short reclen;
            memcpy(&reclen, buf + off + 16, sizeof reclen);
            const char *name = buf + off + 19;
            if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0)
                (void)unlinkat(fd, name, 0);
            off += reclen;
        }
    }
    close(fd);
    (void)rmdir(dir);
}

static void forward_to_children(int sig)
{
    int n = (int)g_child_count;
    const volatile pid_t *pids = g_children;
    if (!pids || n <= 0)
        return;
    for (int i = 0; i < n; i++)
        if (pids[i] > 0)
            (void)kill(pids[i], sig);
    /* they remove their own temporaries and die by the signal; wait for them (at most 5 s)
     * so that the parent's death (PR_SET_PDEATHSIG: SIGKILL) cannot cut them short */
    for (int tick = 0; tick < 500; tick++) {
        int left = 0;
        for (int i = 0; i < n; i++) {
            pid_t p = pids[i];
            if (p <= 0)
                continue;
            pid_t w = waitpid(p, NULL, WNOHANG);
            if (w == 0 || (w < 0 && errno == EINTR))
                left++;
        }
        if (!left)
            return;
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
}

void app_die_by_signal(int sig)
{
    /* ffmpeg first: what it writes is thrown away (and it must not outlive us) */
    if (g_child > 0)
        (void)kill((pid_t)g_child, SIGKILL);
    forward_to_children(sig);
    shoal_io_atomic_remove_temps();
    for (int i = 0; i < SIG_SLOTS; i++) {
        if (g_path_kind[i] == 1)
            (void)unlink(g_path[i]);
        else if (g_path_kind[i] == 2)
            app_remove_dir_now(g_path[i]);
    }
    struct sigaction sa;
    sa.sa_handler = SIG_DFL;
    sa.sa_flags = 0;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    _exit(128 + sig); /* not reached: the default action of these signals terminates */
}

static void on_fatal_signal(int sig) { app_die_by_signal(sig); }

static void on_deadline(int sig)
{
    (void)sig;
    app_die_by_signal(g_deadline_sig ? (int)g_deadline_sig : SIGTERM);
}

void app_signal_deadline(int sig)
{
    if (g_deadline_sig) /* a second signal: no more waiting */
        app_die_by_signal(sig);
    g_deadline_sig = sig;
    struct sigaction sa;
    sa.sa_handler = on_deadline;
    sa.sa_flags = 0;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    alarm(1);
}

/* LLVM's libomp aborts the process when the system refuses a team's threads (ulimit -u,
 * ulimit -v), after its own "OMP: Error #34" lines: while the library is starting a team
 * that abort becomes shoal's line and exit 2, as libgomp's exit(1) does (the library's exit
 * hook); any other abort stays an abort. */
static void on_abort(int sig)
{
    if (shoal_system_team_starting()) {
        static const char msg[] = "shoal: the OpenMP runtime could not start its worker threads "
                                  "(its message is above): use fewer threads (--threads) or "
                                  "raise the limits (ulimit -u, ulimit -v)\n";
        (void)!write(2, msg, sizeof msg - 1);
        _exit(2);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

void app_signals_install(void)
{
    struct sigaction ab;
    if (sigaction(SIGABRT, NULL, &ab) == 0 && ab.sa_handler == SIG_DFL) {
        ab.sa_handler = on_abort;
        ab.sa_flags = SA_RESETHAND;
        sigemptyset(&ab.sa_mask);
        sigaction(SIGABRT, &ab, NULL);
    }
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old;
        /* a signal the caller ignores (nohup, a background job's SIGINT) stays ignored */
        if (sigaction(sigs[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL)
            continue;
        struct sigaction sa;
        sa.sa_handler = on_fatal_signal;
        sa.sa_flags = 0;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}
