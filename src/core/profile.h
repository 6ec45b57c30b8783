/* SPDX-License-Identifier: MIT */
/* The stage profiler and the trace recorder: one `prof` (the public shoal_profile) holds,
 * per named stage, the durations of its last calls (a ring, for median and max) and each
 * thread's busy time; and per thread, a preallocated buffer of spans that becomes a Chrome
 * trace file (Perfetto, chrome://tracing). Every simulation and renderer owns one (or
 * records into one its program lent it: shoal_sim_set_profile), so two objects stepping in
 * two threads never write the same table. It knows no stage by itself: callers name them.
 * It does not time anything on its own either.
 *
 * Cost: every entry point is behind the profile's flags, read once per stage; with a flag
 * off that is one predictable branch. Statistics are on by default (thread 0 writes a few
 * words per stage call); tracing is off until prof_trace_open.
 *
 * Threads: one parallel region at a time records into a profile (the objects that share
 * one never run at the same time; the library never nests regions). prof_stage_call is
 * called by one thread per stage call (thread 0 of the region); prof_stage_busy and
 * prof_trace_span by each thread for its own slot, without locks. */
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
#define PROF_MAX_THREADS SHOAL_MAX_THREADS
/* Durations kept per stage for the median: the last PROF_RING calls (max, total and the
 * call count cover every call). */
#define PROF_RING 4096

/* Stage ids. The simulation and the renderer own fixed ranges, so that worker threads
 * record into their stage without any registration step; other clients register by name. */
enum {
    PROF_SIM_BASE = SHOAL_PROFILE_SIM_BASE,       /* + the sim's stage index (sim_internal.h) */
    PROF_RENDER_BASE = SHOAL_PROFILE_RENDER_BASE, /* instance, setup, raster, resolve */
    PROF_DYNAMIC_BASE = 16                        /* prof_stage() hands these out */
};

typedef struct shoal_profile prof;

/* ---- the object ------------------------------------------------------------------------ */

typedef struct prof_stage_rec {
    uint64_t calls, total_ns, max_ns, min_ns;
    uint64_t ring[PROF_RING];
} prof_stage_rec;

/* One line per thread: the busy time of every stage (no false sharing between threads). */
typedef struct prof_thread_rec {
    _Alignas(64) uint64_t busy_ns[PROF_MAX_STAGES];
    uint32_t seen;
} prof_thread_rec;

typedef struct prof_span {
    uint64_t t0, t1;
    const char *name;
    int64_t seq;
    int numbered; /* name is written "name seq" */
} prof_span;

typedef struct prof_track {
    _Alignas(64) prof_span *spans;
    size_t count, cap;
    uint64_t dropped;
} prof_track;

struct shoal_profile {
    void *alloc_base;                       /* what prof_create allocated (NULL: static) */
    unsigned flags;                         /* PROF_STATS | PROF_TRACE */
    const char *names[PROF_MAX_STAGES][2];  /* group, name (not copied) */
    int dynamic_next;                       /* the next id prof_stage hands out */
    prof_stage_rec stages[PROF_MAX_STAGES]; /* ~1 MiB, zero pages until a stage records */
    prof_thread_rec threads[PROF_MAX_THREADS];
    prof_track *tracks;
    int track_count;
    uint64_t trace_t0;
};

/** A new profile (statistics on, no stage, no trace; zero pages until used), and its
 *  end (its trace too). */
shoal_status prof_create(prof **out, shoal_error *err);
void prof_destroy(prof *p);

static inline int prof_on(const prof *p, unsigned flag)
{
    return __builtin_expect((p->flags & flag) != 0, 1);
}
void prof_set_flags(prof *p, unsigned flags);

/** Name the stage `id` (group "sim", "render", ...), once; later calls are no-ops. Names
 *  are not copied: pass static strings. Call from one thread (thread 0 of a region). */
static inline void prof_stage_define(prof *p, int id, const char *group, const char *name)
{
    if ((unsigned)id < PROF_MAX_STAGES && !p->names[id][1]) {
        p->names[id][0] = group;
        p->names[id][1] = name;
    }
}

/** The id of stage `name` of `group`: a defined stage of that name, else a new dynamic id
 *  (-1 when all are in use). Not thread-safe: call outside regions or from one thread. */
int prof_stage(prof *p, const char *group, const char *name);

/** One call of a stage took `ns` of wall time (thread 0's view, barrier to barrier). */
void prof_stage_call(prof *p, int stage, uint64_t ns);
/** Thread `thread` was busy `ns` in one call of a stage (its own work, without waiting). */
void prof_stage_busy(prof *p, int stage, int thread, uint64_t ns);

/** Forget every duration and busy time (stage names and ids stay). */
void prof_reset(prof *p);

/** Summary of one stage (the public struct, shoal/profile.h). Times in milliseconds. */
typedef shoal_profile_summary prof_summary;

/** Fill up to `max` summaries of the stages that have calls, in id order; returns how
 *  many. */
int prof_summaries(const prof *p, prof_summary *out, int max);
/** Busy ms of `thread` in `stage` (sum over calls). */
double prof_thread_busy_ms(const prof *p, int stage, int thread);

/** Print the table of every stage with calls: calls, total, mean, median, max, per-thread
 *  min/max busy and the imbalance (max busy / mean busy); with per_thread, one line per
 *  thread too. `title` heads the table (may be NULL). */
void prof_print(const prof *p, FILE *f, const char *title, int per_thread);

/** Median and MAD of `n` values (sorted in place); helpers shared with the benchmarks. */
double prof_median(double *v, size_t n);
double prof_mad(const double *v, size_t n, double median, double *scratch);

/* ---- trace ---------------------------------------------------------------------------- */

/** Start recording spans: `threads` tracks, each with room for `spans_per_thread` spans
 *  (preallocated here; spans past that are counted as dropped). Sets PROF_TRACE. Time 0 of
 *  the trace is now. SHOAL_ERR_NOMEM when the buffers cannot be allocated. */
shoal_status prof_trace_open(prof *p, int threads, size_t spans_per_thread, shoal_error *err);

/** Append a span [t0_ns, t1_ns] (timer_now_ns clock) named `name` to the track of
 *  `thread`; seq >= 0 (the step or frame number) becomes its "seq" arg. Called by the
 *  thread that owns the track. `name` must be a static string. */
void prof_trace_span(prof *p, int thread, const char *name, int64_t seq, uint64_t t0_ns,
                     uint64_t t1_ns);
/** The same for an enclosing span: written with the name "name seq" ("step 12"). */
void prof_trace_frame(prof *p, int thread, const char *name, int64_t seq, uint64_t t0_ns,
                      uint64_t t1_ns);

/** The recorded spans as Chrome trace JSON on `f`: {"traceEvents":[...],
 *  "displayTimeUnit":"ms"} with complete ("X") events, ts/dur in microseconds, pid 1,
 *  tid = thread index, and thread_name metadata. The file itself is io's (src/io/trace.c:
 *  prof_trace_write, through the atomic writer), so core writes no files. */
void prof_trace_emit(const prof *p, FILE *f);
/** Write them to `path` (src/io/trace.c; no half-written file). SHOAL_ERR_IO on failure. */
shoal_status prof_trace_write(const prof *p, const char *path, shoal_error *err);

/** Spans recorded and dropped so far (all tracks). */
uint64_t prof_trace_count(const prof *p, uint64_t *dropped);

/** Free the buffers and clear PROF_TRACE. */
void prof_trace_close(prof *p);

/** The process-wide profile of the deprecated shoal_profile_* names without a profile
 *  argument (shoal/profile.h, "earlier names"); nothing else records into it. */
prof *prof_legacy(void);

#endif
