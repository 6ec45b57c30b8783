/* SPDX-License-Identifier: MIT */
/* Allocation failure, the SQLite way: `shoal_faults` (the shoal program linked with
 * tests/faultalloc.c) fails its Nth allocation when SHOAL_FAIL_ALLOC=N. For each command
 * below, N = 1, 2, ... until a run makes no more allocations, and every run must end in
 * either
 *   - exit 2, stderr naming what could not be allocated ("memory" or "allocat" in it), no
 *     output file and no temporary left (directories a command creates may stay, empty), or
 *   - the exit code of the run without failures and output files byte for byte the same.
 * Anything else (exit 0 with other bytes, exit 1, a crash, a hang) is a wrong answer.
 * One thread, so that allocation N is the same allocation in every run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cli_harness.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* A wrong answer already being fixed elsewhere (shoal_sim_init_state's fallback for a failed
 * allocation, which leaves every boid at the origin; fixed on the fidelity branch by
 * drawing a row at a time with no allocation): printed as KNOWN BUG, not counted. Once the
 * fix is in, the allocation is gone and this never matches. */
#define KNOWN_BUG_IN "shoal_sim_init_state"

/* A shell command line as given (not in the scratch directory): its exit code. */
static int shell(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int shell(const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    if (st == -1)
        fail_msg("could not run: %s", cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The file NAME of the scratch directory (NULL when it cannot be read). */
static char *slurp(const char *name) { return read_all(path(name), NULL); }

/* Run the case with SHOAL_FAIL_ALLOC=n (0: none) in a fresh out/; its exit code, its
 * stderr in *err, and in *snap the list of files under out/ with their hashes. */
static int run_case(const char *args, long n, char **err, char **snap)
{
    shell("cd %s && rm -rf out log.txt && mkdir out", g_dir);
    char env[128] = "";
    if (n > 0)
        snprintf(env, sizeof env, "SHOAL_FAIL_ALLOC=%ld SHOAL_FAIL_ALLOC_LOG=log.txt", n);
    int rc = shell("cd %s && env OMP_WAIT_POLICY=passive %s timeout 120 %s %s > stdout.txt "
                   "2> stderr.txt < /dev/null",
                   g_dir, env, g_exe, args);
    shell("cd %s/out && find . -type f -print0 | sort -z | xargs -0 -r sha256sum > ../snap.txt",
          g_dir);
    *err = slurp("stderr.txt");
    *snap = slurp("snap.txt");
    assert_non_null(*err);
    assert_non_null(*snap);
    return rc;
}

static int names_allocation(const char *msg)
{
    char low[512];
    size_t i = 0;
    for (; msg[i] && i < sizeof low - 1; i++)
        low[i] = (char)tolower((unsigned char)msg[i]);
    low[i] = 0;
    return strstr(low, "memory") || strstr(low, "alloc");
}

static void sweep(const char *args)
{
    char *ref_err, *ref_snap;
    int ref_rc = run_case(args, 0, &ref_err, &ref_snap);
    if (ref_rc != 0 && ref_rc != 1)
        fail_msg("'shoal %s' without failures: exit %d (%s)", args, ref_rc, ref_err);
    if (!ref_snap[0])
        fail_msg("'shoal %s' without failures wrote nothing", args);
    int bad = 0, clean = 0, same = 0;
    long n = 1;
    for (; n < 100000; n++) {
        char *err, *snap;
        int rc = run_case(args, n, &err, &snap);
        char *log = slurp("log.txt");
        int injected = log != NULL;
        free(log);
        const char *why = NULL;
        if (rc == ref_rc && strcmp(snap, ref_snap) == 0) {
            same++;
        } else if (rc == 2 && !snap[0] && names_allocation(err)) {
            clean++;
        } else if (rc == 2 && !snap[0]) {
            why = "exit 2 but the message does not say memory or allocation";
        } else if (rc == 2) {
            why = "exit 2 but output files were left";
        } else if (rc == ref_rc) {
            why = "same exit code, different output";
        } else {
            why = "unexpected exit code";
        }
        if (why) {
            /* where: the failed allocation's call stack, named by addr2line */
            shell("cd %s && grep -o '(+0x[0-9a-f]*)' log.txt | tr -d '()+' | xargs -r addr2line -f "
                  "-i -e %s | grep -v '^[/?]' | grep -v '^__wrap_' | grep -v "
                  "'^fault_now' | head -6 | paste -s -d ' ' > stack.txt 2> /dev/null",
                  g_dir, g_exe);
            char *stack = slurp("stack.txt");
            char *nl = strchr(err, '\n');
            if (nl && nl[1] == 0)
                *nl = 0;
            int known = stack && strstr(stack, KNOWN_BUG_IN);
            if (!known)
                bad++;
            printf("  shoal %s\n    %sallocation %ld failed: %s (exit %d; stderr: %.300s)\n"
                   "    in %s",
                   args, known ? "KNOWN BUG: " : "", n, why, rc, err, stack ? stack : "?\n");
            free(stack);
        }
        free(err);
        free(snap);
        if (!injected)
            break;
    }
    printf("  shoal %s\n    %ld allocations: %d clean errors, %d unchanged outputs, %d wrong\n",
           args, n - 1, clean, same, bad);
    free(ref_err);
    free(ref_snap);
    if (bad)
        fail_msg("'shoal %s': %d of %ld failed allocations gave a wrong answer", args, bad, n - 1);
}

static int setup(void **state)
{
    (void)state;
    if (cli_setup("faults"))
        return -1;
    g_exe = getenv("SHOAL_FAULTS_EXE");
    if (!g_exe)
        g_exe = SHOAL_BUILD_ROOT "/tests/shoal_faults";
    if (shell("cd %s && %s init --count 300 --seed 3 --out in.npy > /dev/null && %s step --in "
              "in.npy --out in2.npy --steps 1 --threads 1 > /dev/null",
              g_dir, g_exe, g_exe) != 0)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return cli_teardown();
}

static void test_init(void **state)
{
    (void)state;
    sweep("init --count 300 --seed 5 --out out/s.npy");
    sweep("init --model fov --count 300 --out out/s.bin");
}

static void test_step(void **state)
{
    (void)state;
    sweep("step --in in.npy --out out/s.npy --steps 2 --threads 1");
    sweep("step --in in.npy --out out/s.npy --steps 1 --threads 1 --neighbors brute");
    sweep("step --scene " SHOAL_SOURCE_ROOT "/assets/scenes/steer_rock_mesh.ini --in in.npy "
          "--out out/s.npy --steps 1 --threads 1");
}

static void test_render(void **state)
{
    (void)state;
    sweep("render --in in.npy --out out/f.png --size 64x48 --threads 1 --mesh " SHOAL_SOURCE_ROOT
          "/assets/fish.obj --lod-mesh " SHOAL_SOURCE_ROOT "/assets/fish_lod1.obj");
}

static void test_compare(void **state)
{
    (void)state;
    sweep("compare in.npy in2.npy --json out/c.json");
}

static void test_run_headless(void **state)
{
    (void)state;
    /* --hud off: the HUD shows timings, so frames with it never repeat */
    sweep("run --headless --count 300 --frames 2 --size 64x48 --threads 1 --hud off --out "
          "out/frames");
}

/* The OpenMP runtime cannot start its threads (64 stacks of 8 MiB under `ulimit -v
 * 200000`): libgomp prints its line and ends the process with exit(1), shoal's code for a
 * non-finite simulation; src/core/parallel.c turns that into exit 2 with a line of its own.
 * Not under AddressSanitizer (it reserves terabytes of address space) nor with clang's
 * libomp (it aborts instead). */
static void test_threads_cannot_start(void **state)
{
    (void)state;
#if defined(__clang__) || defined(__SANITIZE_ADDRESS__)
    printf("  skipped: libgomp and no AddressSanitizer only\n");
    skip();
#else
    shell("cd %s && rm -rf out && mkdir out", g_dir);
    int rc = shell("cd %s && ulimit -v 200000 && OMP_WAIT_POLICY=passive %s step --in in.npy --out "
                   "out/s.npy --threads 64 > stdout.txt 2> stderr.txt",
                   g_dir, g_exe);
    char *err = slurp("stderr.txt");
    assert_non_null(err);
    if (rc == 0) {
        printf("  skipped: 64 threads started under ulimit -v 200000 (no OpenMP?)\n");
        free(err);
        skip();
    }
    if (rc != 2 || !strstr(err, "could not start its worker threads"))
        fail_msg("threads that cannot start: exit %d, expected 2 (%s)", rc, err);
    free(err);
    struct stat st;
    char p[512];
    snprintf(p, sizeof p, "%s/out/s.npy", g_dir);
    assert_int_not_equal(stat(p, &st), 0);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init),         cmocka_unit_test(test_step),
        cmocka_unit_test(test_render),       cmocka_unit_test(test_compare),
        cmocka_unit_test(test_run_headless), cmocka_unit_test(test_threads_cannot_start),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
