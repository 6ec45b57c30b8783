/* SPDX-License-Identifier: MIT */
/* Exclusive prefix sums for the counting sort. The parallel version is a two-level scan
 * run inside an existing parallel region: each thread sums its static share, one thread
 * scans the per-thread sums, then each thread scans its share from its offset. Integer
 * addition is exact, so the result never depends on the thread count. */
#include "sim/sim_internal.h"

int64_t scan_exclusive_serial_u32(uint32_t *data, int64_t count)
{
    uint64_t run = 0;
    for (int64_t i = 0; i < count; i++) {
        uint32_t v = data[i];
        data[i] = (uint32_t)run;
        run += v;
    }
    return (int64_t)run;
}

int64_t scan_offset(uint64_t sum, int64_t *partial, int thread_index, int thread_count,
                    int64_t *total)
{
    partial[thread_index] = (int64_t)sum;
    parallel_barrier();
    if (thread_index == 0) {
        int64_t run = 0;
        for (int t = 0; t < thread_count; t++) {
            int64_t v = partial[t];
            partial[t] = run;
            run += v;
        }
        partial[thread_count] = run;
    }
    parallel_barrier();
    int64_t off = partial[thread_index];
    *total = partial[thread_count];
    /* Callers may reuse `partial` right after: nobody may still be reading it. */
    parallel_barrier();
    return off;
}

int64_t scan_exclusive_u32(uint32_t *data, int64_t count, int64_t *partial, int thread_index,
                           int thread_count)
{
    int64_t b, e;
    parallel_split(count, thread_index, thread_count, &b, &e);
    uint64_t sum = 0;
    for (int64_t i = b; i < e; i++)
        sum += data[i];
    int64_t total;
    uint64_t run = (uint64_t)scan_offset(sum, partial, thread_index, thread_count, &total);
    for (int64_t i = b; i < e; i++) {
        uint32_t v = data[i];
        data[i] = (uint32_t)run;
        run += v;
    }
    return total;
}
