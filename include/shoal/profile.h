/* SPDX-License-Identifier: MIT */
/* shoal: the stage profiler and the trace recorder, process-wide. The simulation and the
 * renderer record the duration of each of their stages (and each thread's busy time in it)
 * into one table; a program can add stages of its own, read summaries (median, max, MAD,
 * load imbalance), print them as a table, and record every stage span of every thread into
 * a Chrome trace file (Perfetto, chrome://tracing). Also the monotonic clock all of it uses.
 *
 * Threads: the tables are process-wide and without locks. Reset, summaries, printing and
 * the trace's open, write and close belong to the program's main thread, between steps and
 * frames, never while a step or frame runs. Statistics are always on (a few words per stage
 * call); tracing costs nothing until shoal_profile_trace_open. Timings never change a
 * result. */
#ifndef SHOAL_PROFILE_H
#define SHOAL_PROFILE_H

#include "shoal/base.h"

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The most stages the profiler tells apart (the library's own and the program's). */
#define SHOAL_PROFILE_MAX_STAGES 32

/** Stage ids the library fills itself: the simulation's stage k (enum shoal_sim_stage,
 *  sim.h) is SHOAL_PROFILE_SIM_BASE + k; the renderer's instance, setup, raster and resolve
 *  stages are SHOAL_PROFILE_RENDER_BASE + 0, 1, 2, 3. Ids from shoal_profile_stage come
 *  after these. */
enum { SHOAL_PROFILE_SIM_BASE = 0, SHOAL_PROFILE_RENDER_BASE = 8 };

/** Now on the monotonic clock (CLOCK_MONOTONIC), in nanoseconds from an unspecified
 *  origin: the clock of every stage time and trace span. Thread-safe. */
SHOAL_API uint64_t shoal_profile_now_ns(void);

/** Forget every recorded duration and busy time (stage names and ids stay). */
SHOAL_API void shoal_profile_reset(void);

/** The id of the stage `name` of `group` ("sim", "render", or the program's own): the
 *  stage of that name if it exists, else a new id; -1 when all SHOAL_PROFILE_MAX_STAGES
 *  are in use. Names are not copied: pass strings that live as long as the process. Not
 *  thread-safe. */
SHOAL_API int shoal_profile_stage(const char *group, const char *name);

/** Record one call of stage `stage` that took `ns` nanoseconds of wall time. An id out of
 *  range (-1) is ignored. Call from one thread at a time. */
SHOAL_API void shoal_profile_stage_call(int stage, uint64_t ns);

/** Summary of one stage since the last reset. Times in milliseconds. */
typedef struct shoal_profile_summary {
    int id; /**< the stage id (see SHOAL_PROFILE_SIM_BASE) */
    const char *group, *name;
    uint64_t calls;
    double total_ms, mean_ms, median_ms, max_ms, min_ms;
    /** median absolute deviation of the kept calls */
    double mad_ms;
    /** busy time (sum over calls) of the least and most loaded thread, and the threads seen */
    double thread_min_ms, thread_max_ms;
    int threads;
    /** calls whose duration is kept (the last 4096): median and MAD are over these */
    uint64_t kept;
} shoal_profile_summary;

/** Fill up to `max` summaries of the stages with calls, in id order; returns how many. */
SHOAL_API int shoal_profile_summaries(shoal_profile_summary *out, int max);

/** Print the table of every stage with calls to `f`: calls, total, mean, median, max,
 *  per-thread min/max busy and the imbalance (max busy / mean busy); with per_thread != 0,
 *  one line per thread too. `title` heads the table (may be NULL). */
SHOAL_API void shoal_profile_print(FILE *f, const char *title, int per_thread);

/** The median of `n` values (0 when n is 0); sorts `v` in place. */
SHOAL_API double shoal_profile_median(double *v, size_t n);
/** The median absolute deviation of `n` values from `median`; `scratch` holds n doubles.
 *  `v` is not changed. */
SHOAL_API double shoal_profile_mad(const double *v, size_t n, double median, double *scratch);

/** Start recording a trace (closing one that is open): `threads` tracks (one per worker
 *  thread; clamped to 1..256), each with room for `spans_per_thread` spans, allocated and
 *  touched here (spans past that are counted as dropped). Time 0 of the trace is now.
 *  SHOAL_ERR_NOMEM when the buffers cannot be allocated (then no trace is open). */
SHOAL_API shoal_status shoal_profile_trace_open(int threads, size_t spans_per_thread,
                                                shoal_error *err);

/** Write the recorded spans to `path` as Chrome trace JSON ({"traceEvents": [...]}, complete
 *  events, microseconds, one track per thread), replacing the file atomically (never half
 *  written). SHOAL_ERR_IO on failure. The recording goes on. */
SHOAL_API shoal_status shoal_profile_trace_write(const char *path, shoal_error *err);

/** Spans recorded so far on all tracks; `dropped` (may be NULL) gets those that found no
 *  room. */
SHOAL_API uint64_t shoal_profile_trace_count(uint64_t *dropped);

/** Stop recording and free the trace's buffers. Harmless when no trace is open. */
SHOAL_API void shoal_profile_trace_close(void);

#ifdef __cplusplus
}
#endif

#endif
