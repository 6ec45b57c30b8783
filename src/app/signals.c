/* SPDX-License-Identifier: MIT */
/* Signals of the shoal program: SIGINT, SIGTERM, SIGHUP and SIGQUIT remove the temporary
 * files of outputs being written (shoal_io_atomic_remove_temps) and then kill the process
 * by the same signal (default action), so a shell sees "killed by SIGTERM" as before and no
 * ".NAME.tmp.XXXXXX" is left behind. `shoal run` replaces the SIGINT/SIGTERM handlers with
 * its own graceful stop (finish the frame, close the video) and arms a deadline here: a
 * frame that does not end within a second is cut short by the signal. */
#include "app/app.h"

#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

static volatile sig_atomic_t g_deadline_sig;
static volatile sig_atomic_t g_child;

void app_signal_child(int pid) { g_child = pid > 0 ? pid : 0; }

void app_die_by_signal(int sig)
{
    /* the child first: ffmpeg writes its output by name, and must not create it again
     * after its temporary is gone */
    if (g_child > 0)
        (void)kill((pid_t)g_child, SIGKILL);
    shoal_io_atomic_remove_temps();
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

void app_signals_install(void)
{
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
