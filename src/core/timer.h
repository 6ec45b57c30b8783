/* SPDX-License-Identifier: MIT */
/* Monotonic clock for stage timers and benchmarks. */
#ifndef SHOAL_CORE_TIMER_H
#define SHOAL_CORE_TIMER_H

#include <stdint.h>
#include <time.h>

static inline uint64_t timer_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
