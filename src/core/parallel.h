/* SPDX-License-Identifier: MIT */
/* The only door to OpenMP. Other modules describe work as ranges and callbacks; this
 * file owns the thread team, its size and its barriers. Nothing here decides how a result
 * is computed, so no result depends on the thread count through this file. */
#ifndef SHOAL_CORE_PARALLEL_H
#define SHOAL_CORE_PARALLEL_H

#include "shoal/base.h"

#include <stddef.h>
#include <stdint.h>

/** The most threads any region runs on: every thread count the library takes (a desc's,
 *  the process default, OMP_NUM_THREADS) is within [1, this]. */
#define PARALLEL_MAX_THREADS SHOAL_MAX_THREADS

/** The process default thread count: what parallel_region and parallel_for use (set by
 *  parallel_set_threads, else OpenMP's default), within [1, PARALLEL_MAX_THREADS].
 *  Library objects (shoal_sim, the renderer) do not change it: they pass their own count
 *  to the _n variants, so two objects stepping in two threads of one process do not race
 *  on it. */
int parallel_thread_count(void);
/** The same before the bound: OpenMP's default may be anything OMP_NUM_THREADS says. */
int parallel_thread_count_raw(void);
/** Set the process default; <= 0 restores OpenMP's default. -1 (and no change) above
 *  PARALLEL_MAX_THREADS. Call from the program's main thread before work starts. */
int parallel_set_threads(int thread_count);
/** `thread_count` > 0 as given, else the process default; never above the bound. */
int parallel_resolve_threads(int thread_count);
/** 0 when an object may be made with `thread_count` (0..PARALLEL_MAX_THREADS; 0 only while
 *  the process default is within the bound, which OMP_NUM_THREADS may break); else -1 and
 *  the reason in `why` ("thread count 70000 is out of range [0, 1024] ..."). */
int parallel_check_threads(int thread_count, char *why, size_t why_size);

/** How the threads of a region wait at its barriers (parallel_barrier): the process-wide
 *  policy (shoal_system_set_wait_policy). The environment (OMP_WAIT_POLICY, GOMP_SPINCOUNT,
 *  KMP_BLOCKTIME), when set, takes precedence over it. */
enum {
    PARALLEL_WAIT_AUTO = 0,    /* passive while other work keeps the CPUs busy, else spin <= 1 ms */
    PARALLEL_WAIT_PASSIVE = 1, /* sleep at once */
    PARALLEL_WAIT_ACTIVE = 2,  /* spin until released */
};
void parallel_set_wait_policy(int policy);
int parallel_wait_policy(void);
/** The wait in effect now (PARALLEL_WAIT_PASSIVE or _ACTIVE, auto resolved) and why, in
 *  `buf` ("auto: passive now, other work used 1.93 of 2 CPUs"; may be NULL). */
int parallel_wait_describe(char *buf, size_t size);
/** 1 where the OpenMP runtime's own wait can be set at run time (LLVM's libomp); 0 with GNU
 *  libgomp, which reads OMP_WAIT_POLICY only when it loads, and without OpenMP. */
int parallel_wait_runtime_adjustable(void);
/** 1 while the calling thread starts a team (see shoal_system_team_starting). */
int parallel_team_starting(void);
/** 1 in a child of fork() whose regions run on one thread (see parallel.c). */
int parallel_fork_serial(void);
/** Logical CPUs available to this process. */
int parallel_cpu_count(void);

/** Exit code of the process when the OpenMP runtime cannot start a team's threads (it
 *  ends the process itself; see parallel.c): 2, as for any allocation that fails. */
#define PARALLEL_EXIT_THREADS 2

/** Run fn(ctx, thread_index, thread_count) on every thread of one parallel region. */
typedef void (*parallel_region_fn)(void *ctx, int thread_index, int thread_count);
void parallel_region(parallel_region_fn fn, void *ctx);
/** As parallel_region with `thread_count` threads (<= 0: the process default). */
void parallel_region_n(parallel_region_fn fn, void *ctx, int thread_count);
/** Barrier among the threads of the current region (no-op outside one). */
void parallel_barrier(void);

/** The static share [*begin, *end) of `count` items for thread `thread_index`. */
void parallel_split(int64_t count, int thread_index, int thread_count, int64_t *begin,
                    int64_t *end);

/** Dynamic chunks inside a region: every thread calls parallel_dynamic_next until it
 *  returns 0. Reset the counter (outside the loop, by one thread, then a barrier). */
typedef struct parallel_counter {
    _Alignas(64) int64_t next;
    char pad[56];
} parallel_counter;
int parallel_dynamic_next(parallel_counter *c, int64_t count, int64_t chunk, int64_t *begin,
                          int64_t *end);

/** Parallel loop over [0, count) in chunks: fn(ctx, begin, end, thread_index). Dynamic
 *  schedule; fn must not depend on which thread runs a chunk for its result. */
typedef void (*parallel_for_fn)(void *ctx, int64_t begin, int64_t end, int thread_index);
void parallel_for(int64_t count, int64_t chunk, parallel_for_fn fn, void *ctx);
/** As parallel_for with `thread_count` threads (<= 0: the process default). */
void parallel_for_n(int64_t count, int64_t chunk, parallel_for_fn fn, void *ctx, int thread_count);

#endif
