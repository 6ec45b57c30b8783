/* SPDX-License-Identifier: MIT */
/* OpenMP lives here and nowhere else (see parallel.h). Regions are plain `omp parallel`;
 * dynamic chunks use one atomic counter per loop. This file also decides how the runtime's
 * threads wait (the wait policy: at run time where the runtime allows it, LLVM's libomp),
 * keeps every thread count within PARALLEL_MAX_THREADS and makes the runtime usable in a
 * child of fork(). */
#include "core/parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
/* LLVM's libomp (clang's OpenMP) sets its wait at run time, per thread: kmp_set_blocktime
 * (milliseconds a worker spins before it sleeps). GNU libgomp has no such call (its spin
 * count is read from OMP_WAIT_POLICY / GOMP_SPINCOUNT when it loads): there these are
 * NULL. */
extern void kmp_set_blocktime(int msec) __attribute__((weak));
extern int kmp_get_blocktime(void) __attribute__((weak));
#endif

#include "core/timer.h"

static atomic_int g_thread_count;

int parallel_cpu_count(void)
{
#ifdef _OPENMP
    return omp_get_num_procs();
#else
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
#endif
}

int parallel_thread_count_raw(void)
{
#ifdef _OPENMP
    int n = atomic_load_explicit(&g_thread_count, memory_order_relaxed);
    return n > 0 ? n : omp_get_max_threads();
#else
    return 1;
#endif
}

int parallel_thread_count(void)
{
    int n = parallel_thread_count_raw();
    return n < 1 ? 1 : n > PARALLEL_MAX_THREADS ? PARALLEL_MAX_THREADS : n;
}

int parallel_set_threads(int thread_count)
{
    if (thread_count > PARALLEL_MAX_THREADS)
        return -1;
    atomic_store_explicit(&g_thread_count, thread_count > 0 ? thread_count : 0,
                          memory_order_relaxed);
    return 0;
}

int parallel_resolve_threads(int thread_count)
{
    int n = thread_count > 0 ? thread_count : parallel_thread_count();
    return n > PARALLEL_MAX_THREADS ? PARALLEL_MAX_THREADS : n;
}

int parallel_check_threads(int thread_count, char *why, size_t why_size)
{
    if (thread_count < 0 || thread_count > PARALLEL_MAX_THREADS) {
        snprintf(why, why_size, "thread count %d is out of range [0, %d] (0: the default)",
                 thread_count, PARALLEL_MAX_THREADS);
        return -1;
    }
    if (thread_count == 0) {
        int d = parallel_thread_count_raw();
        if (d > PARALLEL_MAX_THREADS) {
            snprintf(why, why_size,
                     "the default thread count %d (OMP_NUM_THREADS) is out of range [1, %d]", d,
                     PARALLEL_MAX_THREADS);
            return -1;
        }
    }
    return 0;
}

/* ---- waiting ---------------------------------------------------------------------------- */

/* How the threads of a region wait, resolved for that region. */
typedef struct wait_plan {
    int passive;
} wait_plan;

/* Auto samples the machine at most this often. */
#define WAIT_SAMPLE_NS 200000000u

static pthread_once_t g_env_once = PTHREAD_ONCE_INIT;
static int g_env_set;            /* OMP_WAIT_POLICY / GOMP_SPINCOUNT / KMP_BLOCKTIME given */
static wait_plan g_env_plan;     /* what they ask for */
static char g_env_why[96];       /* "OMP_WAIT_POLICY=passive" */
static atomic_int g_wait_policy; /* the caller's choice: PARALLEL_WAIT_* */

/* Whether the runtime's wait can be set at run time: LLVM's libomp (kmp_set_blocktime). */
static int runtime_adjustable(void)
{
#ifdef _OPENMP
    return kmp_set_blocktime && kmp_get_blocktime;
#else
    return 0;
#endif
}

static void env_read(void)
{
    static const char *const names[] = {"GOMP_SPINCOUNT", "OMP_WAIT_POLICY", "KMP_BLOCKTIME"};
    for (int i = 0; i < 3 && !g_env_set; i++) {
        const char *v = getenv(names[i]);
        if (!v || !*v)
            continue;
        g_env_set = 1;
        snprintf(g_env_why, sizeof g_env_why, "%s=%.40s", names[i], v);
        /* the runtimes' own readings: libgomp's GOMP_SPINCOUNT (spins; it wins over the
         * policy), OMP_WAIT_POLICY, libomp's KMP_BLOCKTIME (milliseconds) */
        char *end;
        long long n = strtoll(v, &end, 10);
        if (i == 1)
            g_env_plan.passive = strncasecmp(v, "passive", 7) == 0;
        else
            g_env_plan.passive = end != v && *end == 0 && n == 0;
    }
}

/* The auto policy's view of the machine: the CPU time other processes used over the last
 * sample interval, in CPUs (the machine's busy time in /proc/stat less this process's own
 * CPU time, so that this process's spinning threads do not count as competition). Passive
 * when that is at least a quarter of this process's CPUs. */
static pthread_mutex_t g_sample_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint_least64_t g_sample_at_ns; /* when the last sample was taken */
static atomic_int g_auto_passive;
static atomic_int g_others_milli; /* the last estimate, CPUs x 1000 (-1: none yet) */
static uint64_t g_prev_busy_ticks, g_prev_self_ns, g_prev_wall_ns;

/* The machine's busy CPU time (all CPUs, clock ticks) from the first line of /proc/stat;
 * 0 when it cannot be read. */
static uint64_t machine_busy_ticks(void)
{
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return 0;
    unsigned long long v[8] = {0};
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                   &v[4], &v[5], &v[6], &v[7]);
    fclose(f);
    if (n < 4)
        return 0;
    /* user nice system idle iowait irq softirq steal: all but idle and iowait */
    return (uint64_t)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]);
}

static uint64_t self_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Other runnable threads now, from /proc/loadavg (R/T less this one): the first estimate,
 * before there is an interval to measure. -1 when unreadable. */
static double others_runnable_now(void)
{
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f)
        return -1;
    int running = 0;
    int ok = fscanf(f, "%*f %*f %*f %d/", &running) == 1;
    fclose(f);
    if (!ok)
        return -1;
    return running > 1 ? running - 1 : 0;
}

static void auto_sample(uint64_t now)
{
    if (pthread_mutex_trylock(&g_sample_lock) != 0)
        return; /* another thread is sampling: use its answer */
    uint64_t last = atomic_load_explicit(&g_sample_at_ns, memory_order_relaxed);
    if (last && now - last < WAIT_SAMPLE_NS) {
        pthread_mutex_unlock(&g_sample_lock);
        return;
    }
    long hz = sysconf(_SC_CLK_TCK);
    uint64_t busy = machine_busy_ticks(), self = self_cpu_ns();
    double others = -1;
    if (g_prev_wall_ns && busy && hz > 0 && now > g_prev_wall_ns) {
        double wall = (double)(now - g_prev_wall_ns);
        double busy_ns = (double)(busy - g_prev_busy_ticks) * (1e9 / (double)hz);
        others = (busy_ns - (double)(self - g_prev_self_ns)) / wall;
        if (others < 0)
            others = 0;
    } else if (!g_prev_wall_ns) {
        others = others_runnable_now();
    }
    g_prev_busy_ticks = busy;
    g_prev_self_ns = self;
    g_prev_wall_ns = now;
    if (others >= 0) {
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        if (online > 0 && others > (double)online)
            others = (double)online; /* runnable threads (the first estimate) beyond the CPUs */
        atomic_store_explicit(&g_others_milli, (int)(others * 1000 + 0.5), memory_order_relaxed);
        atomic_store_explicit(&g_auto_passive, others >= 0.25 * parallel_cpu_count(),
                              memory_order_relaxed);
    }
    atomic_store_explicit(&g_sample_at_ns, now ? now : 1, memory_order_release);
    pthread_mutex_unlock(&g_sample_lock);
}

void parallel_set_wait_policy(int policy)
{
    atomic_store_explicit(&g_wait_policy, policy, memory_order_relaxed);
}

int parallel_wait_policy(void)
{
    return atomic_load_explicit(&g_wait_policy, memory_order_relaxed);
}

static wait_plan plan_now(void)
{
    pthread_once(&g_env_once, env_read);
    if (g_env_set)
        return g_env_plan;
    wait_plan p = {0};
    switch (parallel_wait_policy()) {
    case PARALLEL_WAIT_PASSIVE:
        p.passive = 1;
        return p;
    case PARALLEL_WAIT_ACTIVE:
        return p;
    case PARALLEL_WAIT_AUTO:
        break;
    }
    uint64_t now = timer_now_ns();
    uint64_t last = atomic_load_explicit(&g_sample_at_ns, memory_order_acquire);
    if (!last || now - last >= WAIT_SAMPLE_NS)
        auto_sample(now);
    p.passive = atomic_load_explicit(&g_auto_passive, memory_order_relaxed);
    return p;
}

int parallel_wait_describe(char *buf, size_t size)
{
    wait_plan p = plan_now();
    int adjustable = runtime_adjustable();
    int policy = parallel_wait_policy();
    char tmp[8];
    if (!buf || !size) {
        buf = tmp;
        size = sizeof tmp;
    }
#ifndef _OPENMP
    snprintf(buf, size, "no OpenMP in this build: one thread, nothing waits");
    return PARALLEL_WAIT_PASSIVE;
#endif
    if (g_env_set) {
        snprintf(buf, size, "%s (set in the environment)", g_env_why);
        return p.passive ? PARALLEL_WAIT_PASSIVE : PARALLEL_WAIT_ACTIVE;
    }
    if (!adjustable) {
        snprintf(buf, size,
                 "GNU libgomp's default, spin then sleep (it reads OMP_WAIT_POLICY only when "
                 "it loads; %s is not applied)",
                 policy == PARALLEL_WAIT_PASSIVE  ? "passive"
                 : policy == PARALLEL_WAIT_ACTIVE ? "active"
                                                  : "auto");
        return PARALLEL_WAIT_ACTIVE;
    }
    if (policy == PARALLEL_WAIT_PASSIVE)
        snprintf(buf, size, "passive (set by the program)");
    else if (policy == PARALLEL_WAIT_ACTIVE)
        snprintf(buf, size, "active (set by the program)");
    else
        snprintf(buf, size, "auto: %s now, other work keeps %.2f of %d CPUs busy",
                 p.passive ? "passive" : "active",
                 atomic_load_explicit(&g_others_milli, memory_order_relaxed) / 1000.0,
                 parallel_cpu_count());
    return p.passive ? PARALLEL_WAIT_PASSIVE : PARALLEL_WAIT_ACTIVE;
}

int parallel_wait_runtime_adjustable(void) { return runtime_adjustable(); }

void parallel_barrier(void)
{
#ifdef _OPENMP
#pragma omp barrier
#endif
}

/* ---- fork ------------------------------------------------------------------------------- */

/* libgomp keeps a pool of worker threads per thread that started a region; a child of
 * fork() has none of those threads, and its first region waits for them for ever. So
 * before a fork the forking thread's pool is released (omp_pause_resource_all: the
 * workers exit and are joined; the next region in either process starts new ones). If
 * that cannot be done (fork from inside a region), the child runs its regions on one
 * thread: slower, the same results. libomp handles fork itself. */
static pthread_once_t g_fork_once = PTHREAD_ONCE_INIT;
static atomic_int g_fork_paused; /* the prepare handler released the pool */
static int g_child_serial;       /* set in a child whose runtime cannot start a team */

#ifdef _OPENMP
static void fork_prepare(void)
{
    int ok = runtime_adjustable() /* libomp: its own fork handlers start it afresh */
             || (omp_get_level() == 0 && omp_pause_resource_all(omp_pause_soft) == 0);
    atomic_store(&g_fork_paused, ok);
}
static void fork_child(void)
{
    if (!atomic_load(&g_fork_paused))
        g_child_serial = 1;
}
static void fork_register(void) { pthread_atfork(fork_prepare, NULL, fork_child); }
#else
static void fork_register(void) {}
#endif

int parallel_fork_serial(void) { return g_child_serial; }

/* ---- regions ---------------------------------------------------------------------------- */

void parallel_region(parallel_region_fn fn, void *ctx) { parallel_region_n(fn, ctx, 0); }

#ifdef _OPENMP
/* libgomp ends the process with exit(1) when it cannot start a team's threads ("libgomp:
 * Thread creation failed: Resource temporarily unavailable": RLIMIT_NPROC, or no address
 * space left for the thread stacks under `ulimit -v`) or allocate for it; 1 is shoal's exit
 * code for a non-finite simulation. While a thread starts a team its flag is set (cleared
 * by the team's thread 0 as it enters the region); an exit handler that finds the exiting
 * thread's flag set prints shoal's line and exits with PARALLEL_EXIT_THREADS instead. */
static _Thread_local volatile int t_team_starting;
static atomic_int g_exit_hooked;

int parallel_team_starting(void) { return t_team_starting; }

static void parallel_on_exit(void)
{
    if (!t_team_starting)
        return;
    static const char msg[] = "shoal: the OpenMP runtime could not start its worker threads "
                              "(its message is above): use fewer threads (--threads) or raise "
                              "the limits (ulimit -u, ulimit -v)\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(PARALLEL_EXIT_THREADS);
}

/* libomp: the calling thread's teams sleep at once when the plan is passive, else keep
 * the runtime's own block time (read before the first change). Per thread, as libomp's
 * setting is. Not touched when the environment set the runtime's wait. */
static _Thread_local int t_blocktime_default = -1, t_blocktime_passive;

static void runtime_wait_apply(const wait_plan *p)
{
    if (!kmp_set_blocktime || !kmp_get_blocktime || g_env_set)
        return;
    if (t_blocktime_default < 0)
        t_blocktime_default = kmp_get_blocktime();
    if (p->passive != t_blocktime_passive) {
        kmp_set_blocktime(p->passive ? 0 : t_blocktime_default);
        t_blocktime_passive = p->passive;
    }
}
#endif

void parallel_region_n(parallel_region_fn fn, void *ctx, int thread_count)
{
    pthread_once(&g_fork_once, fork_register);
#ifdef _OPENMP
    int n = parallel_resolve_threads(thread_count);
    if (n <= 1 || g_child_serial) {
        fn(ctx, 0, 1);
        return;
    }
    if (!atomic_exchange(&g_exit_hooked, 1))
        atexit(parallel_on_exit);
    wait_plan plan = plan_now();
    runtime_wait_apply(&plan);
    t_team_starting = 1;
#pragma omp parallel num_threads(n)
    {
        if (omp_get_thread_num() == 0)
            t_team_starting = 0;
        fn(ctx, omp_get_thread_num(), omp_get_num_threads());
    }
    t_team_starting = 0;
#else
    (void)thread_count;
    fn(ctx, 0, 1);
#endif
}

#ifndef _OPENMP
int parallel_team_starting(void) { return 0; }
#endif

void parallel_split(int64_t count, int thread_index, int thread_count, int64_t *begin, int64_t *end)
{
    int64_t base = count / thread_count, extra = count % thread_count;
    int64_t t = thread_index;
    *begin = t * base + (t < extra ? t : extra);
    *end = *begin + base + (t < extra ? 1 : 0);
}

int parallel_dynamic_next(parallel_counter *c, int64_t count, int64_t chunk, int64_t *begin,
                          int64_t *end)
{
    int64_t b = atomic_fetch_add_explicit((_Atomic int64_t *)&c->next, chunk, memory_order_relaxed);
    if (b >= count)
        return 0;
    *begin = b;
    *end = b + chunk < count ? b + chunk : count;
    return 1;
}

typedef struct for_ctx {
    parallel_counter counter;
    int64_t count, chunk;
    parallel_for_fn fn;
    void *ctx;
} for_ctx;

static void for_body(void *p, int thread_index, int thread_count)
{
    (void)thread_count;
    for_ctx *f = p;
    int64_t b, e;
    while (parallel_dynamic_next(&f->counter, f->count, f->chunk, &b, &e))
        f->fn(f->ctx, b, e, thread_index);
}

void parallel_for(int64_t count, int64_t chunk, parallel_for_fn fn, void *ctx)
{
    parallel_for_n(count, chunk, fn, ctx, 0);
}

void parallel_for_n(int64_t count, int64_t chunk, parallel_for_fn fn, void *ctx, int thread_count)
{
    if (count <= 0)
        return;
    if (chunk < 1)
        chunk = 1;
    for_ctx f = {.count = count, .chunk = chunk, .fn = fn, .ctx = ctx};
    f.counter.next = 0;
    if (count <= chunk) {
        fn(ctx, 0, count, 0);
        return;
    }
    parallel_region_n(for_body, &f, thread_count);
}
