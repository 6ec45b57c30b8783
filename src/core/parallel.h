/* SPDX-License-Identifier: MIT */
/* The only door to OpenMP. Other modules describe work as ranges and callbacks; this
 * file owns the thread team, its size and its barriers. Nothing here decides how a result
 * is computed, so no result depends on the thread count through this file. */
#ifndef SHOAL_CORE_PARALLEL_H
#define SHOAL_CORE_PARALLEL_H

#include <stdint.h>

/** The process default thread count: what parallel_region and parallel_for use (set by
 *  parallel_set_threads, else OpenMP's default). Library objects (shoal_sim, the renderer)
 *  do not change it: they pass their own count to the _n variants, so two objects stepping
 *  in two threads of one process do not race on it. */
int parallel_thread_count(void);
/** Set the process default; 0 restores OpenMP's default. Call from the program's main
 *  thread before work starts (not thread-safe against running regions). */
void parallel_set_threads(int thread_count);
/** `thread_count` > 0 as given, else the process default. */
int parallel_resolve_threads(int thread_count);
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
