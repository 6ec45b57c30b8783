/* SPDX-License-Identifier: MIT */
/* shoal: the stage profiler and the trace recorder. A shoal_profile holds the durations of
 * named stages (and each thread's busy time in them) and, once a trace is started, every
 * stage span of every thread for a Chrome trace file (Perfetto, chrome://tracing). Every
 * simulation and renderer owns one and records each step's or frame's stages into it
 * (Box2D's per-world profile), so two objects in two threads never share a table. A
 * program that wants one table for several objects (a sim and the renderer that draws it,
 * plus stages of its own) creates a profile and lends it to them (shoal_sim_set_profile,
 * shoal_render_set_profile). Also the monotonic clock all of it uses, and the median and
 * MAD the summaries use.
 *
 * Threads: a profile has no lock. It is written by the objects recording into it while
 * they step or draw, and by shoal_profile_add_call; objects that share one must not run at
 * the same time. Reading, clearing, printing and the trace's start, save and stop belong
 * to the thread that drives those objects, between steps and frames. Statistics are always
 * on (a few words per stage call); tracing costs nothing until shoal_profile_trace_start.
 * Timings never change a result. */
#ifndef SHOAL_PROFILE_H
#define SHOAL_PROFILE_H

#include "shoal/base.h"

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The most stages one profile tells apart (the library's own and the program's). */
#define SHOAL_PROFILE_MAX_STAGES 32

/** Stage ids the library fills itself: the simulation's stage k (enum shoal_sim_stage,
 *  sim.h) is SHOAL_PROFILE_SIM_BASE + k; the renderer's instance, setup, raster and resolve
 *  stages are SHOAL_PROFILE_RENDER_BASE + 0, 1, 2, 3. Ids from shoal_profile_stage_id come
 *  after these. */
enum { SHOAL_PROFILE_SIM_BASE = 0, SHOAL_PROFILE_RENDER_BASE = 8 };

/** Stage tables and a trace (opaque). */
typedef struct shoal_profile shoal_profile;

/** Now on the monotonic clock (CLOCK_MONOTONIC), in nanoseconds from an unspecified
 *  origin: the clock of every stage time and trace span. Thread-safe. */
SHOAL_API uint64_t shoal_profile_now_ns(void);

/** A new, empty profile (statistics on, no trace), owned by the caller: about 1 MiB of
 *  address space, touched only as stages record. SHOAL_ERR_NOMEM when it cannot be
 *  allocated. */
SHOAL_API shoal_status shoal_profile_create(shoal_profile **profile_out, shoal_error *err);
/** Free a profile from shoal_profile_create (and its trace). NULL is ignored. The objects
 *  it was lent to must have been destroyed or given another one first. */
SHOAL_API void shoal_profile_destroy(shoal_profile *profile);

/** Forget every recorded duration and busy time (stage names and ids stay). */
SHOAL_API void shoal_profile_clear(shoal_profile *profile);

/** The id of the stage `name` of `group` ("sim", "render", or the program's own): the
 *  stage of that name if it exists, else a new id; -1 when all SHOAL_PROFILE_MAX_STAGES
 *  are in use. Names are not copied: pass strings that live as long as the profile. */
SHOAL_API int shoal_profile_stage_id(shoal_profile *profile, const char *group, const char *name);

/** Record one call of stage `stage` that took `ns` nanoseconds of wall time. An id out of
 *  range (-1) is ignored. */
SHOAL_API void shoal_profile_add_call(shoal_profile *profile, int stage, uint64_t ns);

/** Summary of one stage since the last clear. Times in milliseconds. */
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
SHOAL_API int shoal_profile_get_summaries(const shoal_profile *profile, shoal_profile_summary *out,
                                          int max);

/** Print the table of every stage with calls to `f`: calls, total, mean, median, max,
 *  per-thread min/max busy and the imbalance (max busy / mean busy); with per_thread != 0,
 *  one line per thread too. `title` heads the table (may be NULL). */
SHOAL_API void shoal_profile_write_table(const shoal_profile *profile, FILE *f, const char *title,
                                         int per_thread);

/** The median of `n` values (0 when n is 0); sorts `v` in place. Thread-safe. */
SHOAL_API double shoal_profile_median(double *v, size_t n);
/** The median absolute deviation of `n` values from `median`; `scratch` holds n doubles.
 *  `v` is not changed. Thread-safe. */
SHOAL_API double shoal_profile_mad(const double *v, size_t n, double median, double *scratch);

/** Start recording a trace into `profile` (closing one that is open): `threads` tracks
 *  (one per worker thread; clamped to 1..256), each with room for `spans_per_thread`
 *  spans, allocated and touched here (spans past that are counted as dropped). Time 0 of
 *  the trace is now. SHOAL_ERR_NOMEM when the buffers cannot be allocated (then no trace
 *  is open). */
SHOAL_API shoal_status shoal_profile_trace_start(shoal_profile *profile, int threads,
                                                 size_t spans_per_thread, shoal_error *err);

/** Write the recorded spans to `path` as Chrome trace JSON ({"traceEvents": [...]}, complete
 *  events, microseconds, one track per thread), replacing the file atomically (never half
 *  written). SHOAL_ERR_IO on failure. The recording goes on. */
SHOAL_API shoal_status shoal_profile_trace_save(const shoal_profile *profile, const char *path,
                                                shoal_error *err);

/** Spans recorded so far on all tracks; `dropped` (may be NULL) gets those that found no
 *  room. */
SHOAL_API uint64_t shoal_profile_trace_spans(const shoal_profile *profile, uint64_t *dropped);

/** Stop recording and free the trace's buffers. Harmless when no trace is open. */
SHOAL_API void shoal_profile_trace_stop(shoal_profile *profile);

/* ---- earlier names -------------------------------------------------------------------- */
/* Before profiles were objects, one process-wide table took every stage. These names now
 * act on one process-wide profile that only they use: the simulations and renderers record
 * into their own (shoal_sim_get_profile, shoal_render_get_profile), so a program that read
 * the library's stages through these sees only the stages it added itself. Same threads
 * rule as a profile; not for new code. */
SHOAL_DEPRECATED_0_1("shoal_profile_clear")
SHOAL_API void shoal_profile_reset(void);
SHOAL_DEPRECATED_0_1("shoal_profile_stage_id")
SHOAL_API int shoal_profile_stage(const char *group, const char *name);
SHOAL_DEPRECATED_0_1("shoal_profile_add_call")
SHOAL_API void shoal_profile_stage_call(int stage, uint64_t ns);
SHOAL_DEPRECATED_0_1("shoal_profile_get_summaries")
SHOAL_API int shoal_profile_summaries(shoal_profile_summary *out, int max);
SHOAL_DEPRECATED_0_1("shoal_profile_write_table")
SHOAL_API void shoal_profile_print(FILE *f, const char *title, int per_thread);
SHOAL_DEPRECATED_0_1("shoal_profile_trace_start")
SHOAL_API shoal_status shoal_profile_trace_open(int threads, size_t spans_per_thread,
                                                shoal_error *err);
SHOAL_DEPRECATED_0_1("shoal_profile_trace_save")
SHOAL_API shoal_status shoal_profile_trace_write(const char *path, shoal_error *err);
SHOAL_DEPRECATED_0_1("shoal_profile_trace_spans")
SHOAL_API uint64_t shoal_profile_trace_count(uint64_t *dropped);
SHOAL_DEPRECATED_0_1("shoal_profile_trace_stop")
SHOAL_API void shoal_profile_trace_close(void);

#ifdef __cplusplus
}
#endif

#endif
