/* SPDX-License-Identifier: MIT */
/* OpenMP lives here and nowhere else (see parallel.h). Regions are plain
 * `omp parallel`; dynamic chunks use one atomic counter per loop. */
#include "core/parallel.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

static int g_thread_count = 0;

int parallel_cpu_count(void)
{
#ifdef _OPENMP
    return omp_get_num_procs();
#else
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
#endif
}

int parallel_thread_count(void)
{
#ifdef _OPENMP
    return g_thread_count > 0 ? g_thread_count : omp_get_max_threads();
#else
    return 1;
#endif
}

void parallel_set_threads(int thread_count)
{
    g_thread_count = thread_count > 0 ? thread_count : 0;
}

int parallel_resolve_threads(int thread_count)
{
    return thread_count > 0 ? thread_count : parallel_thread_count();
}

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
#endif

void parallel_region_n(parallel_region_fn fn, void *ctx, int thread_count)
{
#ifdef _OPENMP
    int n = parallel_resolve_threads(thread_count);
    if (n <= 1) {
        fn(ctx, 0, 1);
        return;
    }
    if (!atomic_exchange(&g_exit_hooked, 1))
        atexit(parallel_on_exit);
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

void parallel_barrier(void)
{
#ifdef _OPENMP
#pragma omp barrier
#endif
}

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
