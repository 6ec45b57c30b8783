/* SPDX-License-Identifier: MIT */
/* The one harness of the tests that need a scratch directory or drive the shoal program
 * from outside (test_app, test_cli, test_compare, test_faults, test_gpu, test_inputs,
 * test_npy, test_outputs, test_predators, test_profile, test_robust, test_stats,
 * test_targets, test_traj): a scratch directory per test program, the program's path,
 * running it with its output captured, paths and small file helpers. Include it after cmocka.h;
 * call cli_setup / cli_teardown from the group's setup and teardown.
 *
 * run("ARGS ...") runs `shoal ARGS` (a shell fragment: quotes, redirections and pipes work)
 * in the scratch directory with standard input from /dev/null; stdout goes to stdout.txt
 * and into g_out, stderr to stderr.txt and into g_err (with g_merge_output set, both go to
 * out.txt and g_out, as a terminal shows them). Lines a sanitizer adds ("==PID==...") and
 * those of gcov's counters in the coverage build ("libgcov profiling error:...", seen when a
 * test's file-size limit stops them being written at exit) are dropped from g_err: they are
 * not the program's message. The exit code is the shell's:
 * 128 + N for a program killed by signal N. run_with(PREFIX, ...) first runs the shell
 * commands PREFIX in the same subshell (ulimit, say); g_env is put before the program
 * (environment assignments). sh("...") runs any shell command there with $S = shoal. In a
 * cross build's `meson test`, g_exe is the program behind its exe_wrapper (qemu). */
#ifndef SHOAL_TESTS_CLI_HARNESS_H
#define SHOAL_TESTS_CLI_HARNESS_H

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char g_dir[256];
static const char *g_exe;
static char g_err[16384];
static char g_out[65536];
static const char *g_env = "";
static int g_merge_output;

static inline void cli_read_into(const char *file, char *buf, size_t size)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", g_dir, file);
    FILE *f = fopen(p, "r");
    buf[0] = 0;
    if (f) {
        size_t n = fread(buf, 1, size - 1, f);
        buf[n] = 0;
        fclose(f);
    }
}

/* Run the shell fragment `body` in the scratch directory; the exit code it left. */
static inline int cli_shell(const char *body)
{
    size_t size = strlen(body) + 1024;
    char *cmd = malloc(size);
    if (!cmd)
        fail_msg("out of memory");
    snprintf(cmd, size, "cd %s && (%s) %s < /dev/null; echo $? > rc.txt", g_dir, body,
             g_merge_output ? "> out.txt 2>&1" : "> stdout.txt 2> stderr.txt");
    if (system(cmd) != 0)
        fail_msg("could not run: %s", cmd);
    if (g_merge_output) {
        cli_read_into("out.txt", g_out, sizeof g_out);
        g_err[0] = 0;
    } else {
        cli_read_into("stdout.txt", g_out, sizeof g_out);
        cli_read_into("stderr.txt", g_err, sizeof g_err);
    }
    for (char *l = g_err; *l;) {
        char *nl = strchr(l, '\n');
        size_t len = nl ? (size_t)(nl - l) + 1 : strlen(l);
        if ((l[0] == '=' && l[1] == '=') || !strncmp(l, "libgcov profiling error:", 24))
            memmove(l, l + len, strlen(l + len) + 1);
        else
            l += len;
    }
    char rc_text[32];
    cli_read_into("rc.txt", rc_text, sizeof rc_text);
    int rc = -1;
    if (sscanf(rc_text, "%d", &rc) != 1)
        fail_msg("no exit code for: %s", cmd);
    free(cmd);
    return rc;
}

static inline int cli_run_v(const char *prefix, const char *fmt, va_list ap)
{
    char args[16384], body[20480];
    vsnprintf(args, sizeof args, fmt, ap);
    snprintf(body, sizeof body, "%s%s%s %s %s", prefix, *prefix ? "; " : "", g_env, g_exe, args);
    return cli_shell(body);
}

static inline int run_with(const char *prefix, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = cli_run_v(prefix, fmt, ap);
    va_end(ap);
    return rc;
}

#define run(...) run_with("", __VA_ARGS__)

static inline int sh(const char *fmt, ...)
{
    char cmd[16384], body[17000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    snprintf(body, sizeof body, "S='%s' && %s", g_exe, cmd);
    return cli_shell(body);
}

/* NAME in the scratch directory (eight buffers in turn: a few may be used at once). */
static inline char *path(const char *name)
{
    static char buf[8][512];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", g_dir, name);
    return buf[k];
}

/* Something is at NAME: a file, a directory, or a symbolic link (even a dangling one). */
static inline int exists(const char *name)
{
    struct stat st;
    return lstat(path(name), &st) == 0;
}

/* The whole file at path P (malloc'ed, NUL-terminated; NULL if it cannot be read). */
static inline char *read_all(const char *p, size_t *len)
{
    FILE *f = fopen(p, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *b = malloc(cap + 1);
    for (size_t got; b && (got = fread(b + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) {
            char *nb = realloc(b, 2 * cap + 1);
            if (!nb) {
                free(b);
                b = NULL;
                break;
            }
            b = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (b) {
        b[n] = 0;
        if (len)
            *len = n;
    }
    return b;
}

static inline void write_text(const char *name, const char *text)
{
    FILE *f = fopen(path(name), "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    fclose(f);
}

/* A scratch directory /tmp/shoal-NAME-XXXXXX and the program (SHOAL_EXE, else the build's). */
static inline int cli_setup(const char *name)
{
    /* The programs the tests signal start as from a terminal: a suite started under nohup or
     * as a background job of a script inherits SIGHUP / SIGINT ignored, and an ignored signal
     * stays ignored across exec (no shell can undo it), so shoal would rightly not die by it */
    const int sigs[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        signal(sigs[i], SIG_DFL);
    g_exe = getenv("SHOAL_EXE");
    if (!g_exe)
        g_exe = SHOAL_BUILD_ROOT "/src/app/shoal";
    /* A cross build's `meson test` runs the tests under the cross file's exe_wrapper
     * (qemu-aarch64: tools/cross/) and says so in MESON_EXE_WRAPPER; the shell needs it for
     * the program too (tests that exec the program directly do not run there) */
    const char *wrap = getenv("MESON_EXE_WRAPPER");
    static char wrapped[1024];
    if (wrap && *wrap &&
        snprintf(wrapped, sizeof wrapped, "%s %s", wrap, g_exe) < (int)sizeof wrapped)
        g_exe = wrapped;
    snprintf(g_dir, sizeof g_dir, "/tmp/shoal-%s-XXXXXX", name);
    return mkdtemp(g_dir) ? 0 : -1;
}

/* Remove the scratch directory (kept, and named, with SHOAL_TEST_KEEP set). */
static inline int cli_teardown(void)
{
    if (getenv("SHOAL_TEST_KEEP")) {
        printf("kept %s\n", g_dir);
        return 0;
    }
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

#endif
