/* SPDX-License-Identifier: MIT */
/* The only door to OpenMP. Other modules describe work as ranges and callbacks; this
 * file owns the thread team, its size and its barriers. Nothing here decides how a result
 * is computed, so no result depends on the thread count through this file. */
#ifndef SHOAL_CORE_PARALLEL_H
#define SHOAL_CORE_PARALLEL_H

#include <stdint.h>

/** Threads the next region will use (set by parallel_set_threads, else OpenMP's default). */
int parallel_thread_count(void);
/** 0 restores OpenMP's default. */
void parallel_set_threads(int thread_count);
/** Logical CPUs available to this process. */
int parallel_cpu_count(void);

/** Run fn(ctx, thread_index, thread_count) on every thread of one parallel region. */
typedef void (*parallel_region_fn)(void *ctx, int thread_index, int thread_count);
void parallel_region(parallel_region_fn fn, void *ctx);
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

#endif
