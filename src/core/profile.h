/* SPDX-License-Identifier: MIT */
/* The stage profiler shared by the simulation and the renderer, and the trace recorder.
 * Owns two process-wide tables: per named stage, the durations of its last calls (a ring,
 * for median and max) and each thread's busy time; and per thread, a preallocated buffer
 * of spans that becomes a Chrome trace file (Perfetto, chrome://tracing). It knows no
 * stage by itself: callers register names. It does not time anything on its own either.
 *
 * Cost: every entry point is behind `prof_flags`, read once per stage; with the flag off
 * that is one predictable branch. Statistics are on by default (thread 0 writes a few
 * words per stage call); tracing is off until prof_trace_open.
 *
 * Threads: one parallel region at a time records (the library never nests regions).
 * prof_stage_call is called by one thread per stage call (thread 0 of the region);
 * prof_stage_busy and prof_trace_span by each thread for its own slot, without locks. */
#ifndef SHOAL_CORE_PROFILE_H
#define SHOAL_CORE_PROFILE_H

#include "shoal/base.h"
#include "shoal/profile.h"

#include <stdint.h>
#include <stdio.h>

enum {
    PROF_STATS = 1, /* per-call durations and per-thread busy time */
    PROF_TRACE = 2, /* spans into the trace buffers (set by prof_trace_open) */
};

#define PROF_MAX_STAGES SHOAL_PROFILE_MAX_STAGES
#define PROF_MAX_THREADS 256
/* Durations kept per stage for the median: the last PROF_RING calls (max, total and the
 * call count cover every call). */
#define PROF_RING 4096

/** The enable switch (PROF_STATS | PROF_TRACE bits); PROF_STATS by default. */
extern unsigned prof_flags;

static inline int prof_on(unsigned flag) { return __builtin_expect((prof_flags & flag) != 0, 1); }
void prof_set_flags(unsigned flags);

/* Stage ids. The simulation and the renderer own fixed ranges, so that worker threads
 * record into their stage without any registration step; other clients register by name. */
enum {
    PROF_SIM_BASE = SHOAL_PROFILE_SIM_BASE,       /* + the sim's stage index (sim_internal.h) */
    PROF_RENDER_BASE = SHOAL_PROFILE_RENDER_BASE, /* instance, setup, raster, resolve */
    PROF_DYNAMIC_BASE = 16                        /* prof_stage() hands these out */
};

/** Name the stage `id` (group "sim", "render", ...), once; later calls are no-ops. Names
 *  are not copied: pass static strings. Call from one thread (thread 0 of a region). */
static inline void prof_stage_define(int id, const char *group, const char *name);

/** The id of stage `name` of `group`: a defined stage of that name, else a new dynamic id
 *  (-1 when all are in use). Not thread-safe: call outside regions or from one thread. */
int prof_stage(const char *group, const char *name);

/** One call of a stage took `ns` of wall time (thread 0's view, barrier to barrier). */
void prof_stage_call(int stage, uint64_t ns);
/** Thread `thread` was busy `ns` in one call of a stage (its own work, without waiting). */
void prof_stage_busy(int stage, int thread, uint64_t ns);

/** Forget every duration and busy time (stage names and ids stay). */
void prof_reset(void);

/** Summary of one stage (the public struct, shoal/profile.h). Times in milliseconds. */
typedef shoal_profile_summary prof_summary;

/** Fill up to `max` summaries of the stages that have calls, in registration order;
 *  returns how many. */
int prof_summaries(prof_summary *out, int max);
/** Busy ms of `thread` in `stage` (sum over calls). */
double prof_thread_busy_ms(int stage, int thread);

/** Print the table of every stage with calls: calls, total, mean, median, max, per-thread
 *  min/max busy and the imbalance (max busy / mean busy); with per_thread, one line per
 *  thread too. `title` heads the table (may be NULL). */
void prof_print(FILE *f, const char *title, int per_thread);

/** Median and MAD of `n` values (sorted in place); helpers shared with the benchmarks. */
double prof_median(double *v, size_t n);
double prof_mad(const double *v, size_t n, double median, double *scratch);

/* Internal: the names of the stages (read by prof_stage_define). */
extern const char *prof_stage_names_[PROF_MAX_STAGES][2];
void prof_stage_define_slow(int id, const char *group, const char *name);
static inline void prof_stage_define(int id, const char *group, const char *name)
{
    if ((unsigned)id < PROF_MAX_STAGES && !prof_stage_names_[id][1])
        prof_stage_define_slow(id, group, name);
}

/* ---- trace ---------------------------------------------------------------------------- */

/** Start recording spans: `threads` tracks, each with room for `spans_per_thread` spans
 *  (preallocated here; spans past that are counted as dropped). Sets PROF_TRACE. Time 0 of
 *  the trace is now. SHOAL_ERR_NOMEM when the buffers cannot be allocated. */
shoal_status prof_trace_open(int threads, size_t spans_per_thread, shoal_error *err);

/** Append a span [t0_ns, t1_ns] (timer_now_ns clock) named `name` to the track of
 *  `thread`; seq >= 0 (the step or frame number) becomes its "seq" arg. Called by the
 *  thread that owns the track. `name` must be a static string. */
void prof_trace_span(int thread, const char *name, int64_t seq, uint64_t t0_ns, uint64_t t1_ns);
/** The same for an enclosing span: written with the name "name seq" ("step 12"). */
void prof_trace_frame(int thread, const char *name, int64_t seq, uint64_t t0_ns, uint64_t t1_ns);

/** The recorded spans as Chrome trace JSON on `f`: {"traceEvents":[...],
 *  "displayTimeUnit":"ms"} with complete ("X") events, ts/dur in microseconds, pid 1,
 *  tid = thread index, and thread_name metadata. The file itself is io's (src/io/trace.c:
 *  prof_trace_write, through the atomic writer), so core writes no files. */
void prof_trace_emit(FILE *f);
/** Write them to `path` (src/io/trace.c; no half-written file). SHOAL_ERR_IO on failure. */
shoal_status prof_trace_write(const char *path, shoal_error *err);

/** Spans recorded and dropped so far (all tracks). */
uint64_t prof_trace_count(uint64_t *dropped);

/** Free the buffers and clear PROF_TRACE. */
void prof_trace_close(void);

#endif
