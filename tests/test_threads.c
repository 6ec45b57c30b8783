/* SPDX-License-Identifier: MIT */
/* The library's threads as a caller meets them (docs/LIBRARY.md, Threads): one bound on
 * every thread count (a desc's, shoal_system_set_thread_count, OMP_NUM_THREADS), a step in
 * a child of fork() after the parent ran teams (issue 44, N4 and N5), and the wait policy
 * (issue 43): the caller's setting, passive waits that do not burn CPU, and the auto policy
 * turning passive while other processes keep the CPUs busy. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "core/parallel.h"
#include "shoal/shoal.h"
#include "support/peak.h"
#include "tests/cli_harness.h"
#include "tests/scenes.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if SHOAL_TEST_OPENMP /* run_child's clock */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}
#endif

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* FNV-1a of the state after `steps` steps of a 2000-boid school on `threads` threads. */
static uint64_t school_hash(int threads, int steps)
{
    shoal_error e;
    shoal_sim_desc d = shoal_sim_desc_for(SHOAL_MODEL_STEER);
    d.boid_count = 2000;
    d.seed = 3;
    d.thread_count = threads;
    shoal_sim *s = NULL;
    float *rows = malloc(d.boid_count * SHOAL_STATE_COLUMNS * sizeof *rows);
    if (!rows || shoal_sim_create(&d, &s, &e) || shoal_sim_draw_state(s, &e) ||
        shoal_sim_step(s, steps, &e) || shoal_sim_get_rows(s, rows, d.boid_count, &e)) {
        fprintf(stderr, "school_hash: %s\n", rows ? e.message : "out of memory");
        shoal_sim_destroy(s);
        free(rows);
        return 0;
    }
    uint64_t h = 1469598103934665603ull;
    const unsigned char *b = (const unsigned char *)rows;
    for (size_t i = 0; i < d.boid_count * SHOAL_STATE_COLUMNS * sizeof *rows; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    shoal_sim_destroy(s);
    free(rows);
    return h;
}

/* ---- N4: one bound ----------------------------------------------------------------------- */

static void test_thread_count_bound(void **state)
{
    (void)state;
    shoal_error e;
    shoal_sim_desc d = shoal_sim_desc_for(SHOAL_MODEL_STEER);
    d.boid_count = 100;
    shoal_sim *s = NULL;
    int bad[] = {-1, SHOAL_MAX_THREADS + 1, 70000, 100000};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        d.thread_count = bad[i];
        assert_int_equal(shoal_sim_create(&d, &s, &e), SHOAL_ERR_INPUT);
        assert_null(s);
        assert_non_null(strstr(e.message, "out of range [0, 1024]"));
    }
    d.thread_count = SHOAL_MAX_THREADS;
    assert_int_equal(shoal_sim_create(&d, &s, &e), SHOAL_OK);
    shoal_sim_destroy(s);

    shoal_render_desc rd = shoal_render_desc_default();
    shoal_mesh fish;
    memset(&fish, 0, sizeof fish);
    assert_int_equal(shoal_mesh_load_asset("fish.obj", &fish, &e), SHOAL_OK);
    rd.mesh = &fish;
    rd.width = 32, rd.height = 24;
    rd.thread_count = 70000; /* shoal.render(threads=70000) segfaulted in libgomp */
    shoal_renderer *r = NULL;
    assert_int_equal(shoal_render_create(&rd, &r, &e), SHOAL_ERR_INPUT);
    assert_null(r);
    assert_non_null(strstr(e.message, "70000"));
    shoal_mesh_free(&fish);

    shoal_stats_desc sd = shoal_stats_desc_default();
    sd.thread_count = SHOAL_MAX_THREADS + 1;
    float row[6] = {0, 0, 0, 1, 0, 0};
    shoal_stats st;
    assert_int_equal(shoal_stats_compute(row, 1, &sd, &st, &e), SHOAL_ERR_INPUT);
}

/* shoal_system_set_thread_count(100000) was accepted, and the next sim with thread count 0
 * segfaulted in its first step. */
static void test_system_thread_count(void **state)
{
    (void)state;
    int before = shoal_system_thread_count();
    assert_int_equal(shoal_system_set_thread_count(100000), SHOAL_ERR_INPUT);
    assert_int_equal(shoal_system_set_thread_count(SHOAL_MAX_THREADS + 1), SHOAL_ERR_INPUT);
    assert_int_equal(shoal_system_thread_count(), before);
    assert_true(shoal_system_thread_count() >= 1 &&
                shoal_system_thread_count() <= SHOAL_MAX_THREADS);
    assert_int_equal(shoal_system_set_thread_count(3), SHOAL_OK);
#if SHOAL_TEST_OPENMP
    assert_int_equal(shoal_system_thread_count(), 3);
#endif
    uint64_t h3 = school_hash(0, 3);
    assert_int_equal(shoal_system_set_thread_count(0), SHOAL_OK);
    assert_int_equal(shoal_system_thread_count(), before);
    assert_true(h3 != 0);
    assert_true(h3 == school_hash(1, 3));
}

/* No shoal command writes the process default thread count: `shoal bench`'s probes run
 * teams of their own (the copy probe set the default and then reset it to OpenMP's, so a
 * program's shoal_system_set_thread_count was lost). */
static void test_probes_keep_default(void **state)
{
    (void)state;
    assert_int_equal(shoal_system_set_thread_count(3), SHOAL_OK);
    int before = shoal_system_thread_count();
    assert_true(peak_copy_gbs(2, 0.0) >= 0.0);
    if (peak_kind_supported(PEAK_AVX2_ADDMUL))
        assert_true(peak_gflops(PEAK_AVX2_ADDMUL, 2, 0.0) >= 0.0);
    assert_int_equal(shoal_system_thread_count(), before);
    assert_int_equal(shoal_system_set_thread_count(0), SHOAL_OK);
}

/* OMP_NUM_THREADS is the default the library reads: above the bound, objects made with
 * thread count 0 are refused with one line naming it (it segfaulted in libgomp). */
static void test_omp_num_threads(void **state)
{
    (void)state;
    assert_int_equal(run("init --count 200 --out in.npy"), 0);
    g_env = "OMP_NUM_THREADS=100000";
    int rc = run("step --in in.npy --out out.npy --steps 1");
    g_env = "";
#if SHOAL_TEST_OPENMP
    if (rc != 2 || !strstr(g_err, "OMP_NUM_THREADS") || !strstr(g_err, "[1, 1024]"))
        fail_msg("OMP_NUM_THREADS=100000 step: exit %d, '%s'", rc, g_err);
    assert_false(exists("out.npy"));
    g_env = "OMP_NUM_THREADS=5000";
    rc = run("render --in in.npy --out f.png --size 32x24");
    g_env = "";
    if (rc != 2 || !strstr(g_err, "OMP_NUM_THREADS"))
        fail_msg("OMP_NUM_THREADS=5000 render: exit %d, '%s'", rc, g_err);
    /* an explicit --threads does not read the default */
    g_env = "OMP_NUM_THREADS=100000";
    rc = run("step --in in.npy --out out.npy --steps 1 --threads 2");
    g_env = "";
    assert_int_equal(rc, 0);
#else
    assert_int_equal(rc, 0); /* no OpenMP: one thread, the variable is not read */
#endif
}

/* ---- N5: fork -------------------------------------------------------------------------- */

#if SHOAL_TEST_OPENMP /* only the OpenMP build forks after teams (the min build: unused) */
/* Runs `child` in a forked child that must exit 0 within `limit_s`; a child that hangs is
 * killed and fails the test (it waited for ever in libgomp). */
static void run_child(int (*child)(int fd), const char *what, int limit_s, uint64_t *got)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        alarm((unsigned)limit_s + 5);
        _exit(child(fds[1]));
    }
    close(fds[1]);
    int status = 0;
    double t0 = now_s();
    pid_t w;
    while ((w = waitpid(pid, &status, WNOHANG)) == 0 && now_s() - t0 < limit_s)
        sleep_ms(20);
    if (w == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        close(fds[0]);
        fail_msg("%s: the forked child did not finish within %d s", what, limit_s);
    }
    uint64_t h = 0;
    ssize_t n = read(fds[0], &h, sizeof h);
    close(fds[0]);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || n != (ssize_t)sizeof h)
        fail_msg("%s: the child ended with status %d", what, status);
    *got = h;
}

static int child_steps(int fd)
{
    uint64_t h = school_hash(2, 5);
    return write(fd, &h, sizeof h) == (ssize_t)sizeof h && h ? 0 : 1;
}

static int child_steps_default(int fd)
{
    uint64_t h = school_hash(0, 5);
    return write(fd, &h, sizeof h) == (ssize_t)sizeof h && h ? 0 : 1;
}
#endif

static void test_fork_after_teams(void **state)
{
    (void)state;
#if SHOAL_TEST_OPENMP
    uint64_t want = school_hash(2, 5); /* the parent's team of two exists now */
    assert_true(want != 0);
    uint64_t got = 0;
    run_child(child_steps, "fork after a step on 2 threads", 60, &got);
    assert_true(got == want);
    run_child(child_steps_default, "fork, default thread count", 60, &got);
    assert_true(got == want);
    /* the parent goes on with its own teams */
    assert_true(school_hash(2, 5) == want);
    /* twice in a row, from a parent that stepped in between */
    run_child(child_steps, "second fork", 60, &got);
    assert_true(got == want);
    assert_int_equal(parallel_fork_serial(), 0);
#else
    skip();
#endif
}

/* ---- issue 43: the wait policy --------------------------------------------------------- */

static int env_sets_wait(void)
{
    return getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT") || getenv("KMP_BLOCKTIME");
}

static void test_wait_policy_api(void **state)
{
    (void)state;
    shoal_error e;
    assert_int_equal(shoal_system_wait_policy(), SHOAL_WAIT_AUTO);
    assert_int_equal(shoal_system_set_wait_policy((shoal_wait_policy)7, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "wait policy 7"));
    assert_int_equal(shoal_system_set_wait_policy(SHOAL_WAIT_PASSIVE, &e), SHOAL_OK);
    assert_int_equal(shoal_system_wait_policy(), SHOAL_WAIT_PASSIVE);
    char why[200];
    shoal_wait_policy w = shoal_system_wait_in_effect(why, sizeof why);
    printf("# runtime %s; passive set: %s\n", shoal_system_openmp_runtime(), why);
    const char *rt = shoal_system_openmp_runtime();
    if (env_sets_wait())
        assert_non_null(strstr(why, "set in the environment"));
    else if (strcmp(rt, "llvm") == 0)
        assert_int_equal(w, SHOAL_WAIT_PASSIVE);
    else if (strcmp(rt, "gnu") == 0) /* libgomp: only the environment, and it says so */
        assert_non_null(strstr(why, "libgomp"));
    assert_int_equal(shoal_system_set_wait_policy(SHOAL_WAIT_ACTIVE, &e), SHOAL_OK);
    w = shoal_system_wait_in_effect(why, sizeof why);
    if (!env_sets_wait() && strcmp(rt, "none") != 0)
        assert_int_equal(w, SHOAL_WAIT_ACTIVE);
    assert_int_equal(shoal_system_wait_in_effect(NULL, 0), w);
    assert_int_equal(shoal_system_set_wait_policy(SHOAL_WAIT_AUTO, &e), SHOAL_OK);
    /* a step under each policy gives the same bits */
    uint64_t h = school_hash(2, 4);
    shoal_system_set_wait_policy(SHOAL_WAIT_PASSIVE, &e);
    assert_true(school_hash(2, 4) == h);
    shoal_system_set_wait_policy(SHOAL_WAIT_AUTO, &e);
}

typedef struct sleeper {
    int ms;
} sleeper;

/* Thread 0 sleeps, the others wait at the barrier for it. */
static void sleep_then_meet(void *ctx, int t, int n)
{
    (void)n;
    if (t == 0)
        sleep_ms(((sleeper *)ctx)->ms);
    parallel_barrier();
}

/* CPU seconds the process spends while two threads meet after thread 0 slept 300 ms. */
static double cpu_of_wait(void)
{
    sleeper c = {300};
    parallel_region_n(sleep_then_meet, &c, 2); /* the team exists */
    double c0 = cpu_s();
    parallel_region_n(sleep_then_meet, &c, 2);
    return cpu_s() - c0;
}

/* Passive threads sleep: a 300 ms wait costs (almost) no CPU time. Where the runtime
 * takes the policy at run time (LLVM's libomp); with libgomp only the environment can. */
static void test_wait_passive_sleeps(void **state)
{
    (void)state;
    if (strcmp(shoal_system_openmp_runtime(), "llvm") != 0 || env_sets_wait()) {
        test_skip_part("wait at run time: runtime %s%s", shoal_system_openmp_runtime(),
                       env_sets_wait() ? ", the environment sets the wait" : "");
        skip();
    }
    shoal_error e;
    shoal_system_set_wait_policy(SHOAL_WAIT_PASSIVE, &e);
    double passive = cpu_of_wait();
    shoal_system_set_wait_policy(SHOAL_WAIT_ACTIVE, &e);
    double active = cpu_of_wait();
    shoal_system_set_wait_policy(SHOAL_WAIT_AUTO, &e);
    printf("# CPU time while one thread waits 300 ms for another: passive %.1f ms, active "
           "%.1f ms\n",
           passive * 1e3, active * 1e3);
    /* spinning costs up to the whole wait (less when the machine preempts the spinner) */
    if (passive > 0.06)
        fail_msg("passive: %.1f ms of CPU during a 300 ms wait", passive * 1e3);
}

/* Busy processes that keep every CPU busy until killed. */
static int spawn_busy(pid_t *pids, int max)
{
    int n = shoal_system_cpu_count() * 2;
    if (n > max)
        n = max;
    for (int i = 0; i < n; i++) {
        pids[i] = fork();
        if (pids[i] == 0) {
            alarm(30);
            volatile unsigned long x = 0;
            for (;;)
                x++;
        }
    }
    return n;
}

/* The auto policy turns passive while other processes keep the CPUs busy. */
static void test_wait_auto_under_load(void **state)
{
    (void)state;
    if (strcmp(shoal_system_openmp_runtime(), "llvm") != 0 || env_sets_wait()) {
        test_skip_part("auto wait: runtime %s%s", shoal_system_openmp_runtime(),
                       env_sets_wait() ? ", the environment sets the wait" : "");
        skip();
    }
    pid_t pids[16];
    int n = spawn_busy(pids, 16);
    char why[200] = "";
    shoal_wait_policy w = SHOAL_WAIT_ACTIVE;
    /* the policy is sampled at most every 0.2 s: a few samples under the load */
    for (int i = 0; i < 4; i++) {
        sleep_ms(250);
        w = shoal_system_wait_in_effect(why, sizeof why);
    }
    for (int i = 0; i < n; i++) {
        kill(pids[i], SIGKILL);
        waitpid(pids[i], NULL, 0);
    }
    printf("# %d busy processes: %s\n", n, why);
    assert_int_equal(w, SHOAL_WAIT_PASSIVE);
    assert_non_null(strstr(why, "auto: passive"));
    /* and a step runs under it, with the same bits */
    assert_true(school_hash(2, 3) == school_hash(1, 3));
}

static int setup(void **state)
{
    (void)state;
    return cli_setup("threads");
}

static int teardown(void **state)
{
    (void)state;
    return cli_teardown();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_thread_count_bound),   cmocka_unit_test(test_system_thread_count),
        cmocka_unit_test(test_omp_num_threads),      cmocka_unit_test(test_fork_after_teams),
        cmocka_unit_test(test_wait_policy_api),      cmocka_unit_test(test_wait_passive_sleeps),
        cmocka_unit_test(test_wait_auto_under_load), cmocka_unit_test(test_probes_keep_default),
    };
    return test_exit(cmocka_run_group_tests(tests, setup, teardown));
}
