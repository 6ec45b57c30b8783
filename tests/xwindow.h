/* SPDX-License-Identifier: MIT */
/* Header-only helpers for the tests that drive shoal's window under Xvfb (test_app,
 * test_targets): child processes with their output in a file, waiting with a timeout, a
 * private Xvfb display. Include after <cmocka.h>. */
#ifndef SHOAL_TESTS_XWINDOW_H
#define SHOAL_TESTS_XWINDOW_H

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int have_program(const char *name)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v %s > /dev/null 2>&1", name);
    return system(cmd) == 0;
}

static int file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

static void nap_50ms(void)
{
    struct timespec ts = {0, 50000000};
    nanosleep(&ts, NULL);
}

/* Run argv[0] (from PATH) with stdout and stderr into out_path, stdin from /dev/null and,
 * when `display` is given, DISPLAY set. */
static pid_t spawn(char *const argv[], const char *display, const char *out_path)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (display) {
            setenv("DISPLAY", display, 1);
            /* Under AddressSanitizer: SDL dlopen()s the X11/GL client libraries and unloads
             * them at SDL_Quit, so what they keep for the process's life is reported as
             * leaked from "<unknown module>" and cannot be suppressed by name. Memory errors
             * are still caught here; shoal's own leaks are checked by the headless runs. */
            const char *asan = getenv("ASAN_OPTIONS");
            char opts[512];
            snprintf(opts, sizeof opts, "%s%sdetect_leaks=0", asan ? asan : "",
                     asan && *asan ? ":" : "");
            setenv("ASAN_OPTIONS", opts, 1);
        }
        int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0)
            dup2(nul, 0);
        execvp(argv[0], argv);
        _exit(127);
    }
    return pid;
}

/* Wait for `pid` up to `secs`; returns its exit code, or -1 after killing it on timeout. */
static int wait_for(pid_t pid, double secs)
{
    for (int i = 0; i < (int)(secs * 20); i++) {
        int st;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
        nap_50ms();
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

static int wait_file(const char *p, double secs)
{
    for (int i = 0; i < (int)(secs * 20); i++) {
        if (file_exists(p))
            return 1;
        nap_50ms();
    }
    return 0;
}

/* Start Xvfb (1024x768x24) on the first free display from `first` (plus a per-process
 * offset, so parallel tests do not meet), its output in log_path; `display` gets ":N".
 * Fails the test when no display is free or the server does not come up in 15 s. */
static pid_t xvfb_start(int first, const char *log_path, char display[16])
{
    int dn = -1;
    for (int n = first + (int)(getpid() % 50); n < first + 250; n++) {
        char lock[64], sock[64];
        snprintf(lock, sizeof lock, "/tmp/.X%d-lock", n);
        snprintf(sock, sizeof sock, "/tmp/.X11-unix/X%d", n);
        if (!file_exists(lock) && !file_exists(sock)) {
            dn = n;
            break;
        }
    }
    if (dn < 0)
        fail_msg("no free X display number from %d", first);
    char sock[64];
    snprintf(display, 16, ":%d", dn);
    snprintf(sock, sizeof sock, "/tmp/.X11-unix/X%d", dn);
    char *xargv[] = {"Xvfb", display, "-screen", "0", "1024x768x24", "-nolisten", "tcp", NULL};
    pid_t xpid = spawn(xargv, NULL, log_path);
    if (xpid <= 0)
        fail_msg("cannot start Xvfb");
    if (!wait_file(sock, 15)) {
        kill(xpid, SIGTERM);
        waitpid(xpid, NULL, 0);
        fail_msg("Xvfb %s did not start (see %s)", display, log_path);
    }
    return xpid;
}

#endif
