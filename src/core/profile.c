/* SPDX-License-Identifier: MIT */
/* The stage profiler and the trace recorder (see profile.h). A profile's stage tables are
 * arrays inside it (allocated zeroed: untouched pages cost nothing); trace buffers are
 * allocated once by prof_trace_open and appended to by their own thread only, so the hot
 * path takes no lock and shares no cache line between threads. Nothing here is
 * process-wide but the profile of the earlier names at the end of the file. */
#include "core/profile.h"
#include "core/check.h"

#include "core/text.h"
#include "core/alloc.h"
#include "core/timer.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

shoal_status prof_create(prof **out, shoal_error *err)
{
    /* calloc of a large block is fresh zero pages: only the stages that record (and the
     * threads that work in them) are ever touched. The struct holds 64-byte aligned
     * per-thread lines, and calloc promises 16: the profile starts at the first 64-byte
     * boundary of a block 64 bytes larger. */
    void *base = calloc(1, sizeof(prof) + 64);
    prof *p = base ? (prof *)(((uintptr_t)base + 63) & ~(uintptr_t)63) : NULL;
    *out = p;
    if (!p)
        return shoal_error_set(err, SHOAL_ERR_NOMEM, "out of memory for a profile (%zu bytes)",
                               sizeof *p);
    p->alloc_base = base;
    p->flags = PROF_STATS;
    p->dynamic_next = PROF_DYNAMIC_BASE;
    return SHOAL_OK;
}

void prof_destroy(prof *p)
{
    if (!p)
        return;
    prof_trace_close(p);
    free(p->alloc_base);
}

void prof_set_flags(prof *p, unsigned flags) { p->flags = flags; }

/* ---- stage table ---------------------------------------------------------------------- */

int prof_stage(prof *p, const char *group, const char *name)
{
    for (int i = 0; i < PROF_MAX_STAGES; i++)
        if (p->names[i][1] && strcmp(p->names[i][0], group) == 0 &&
            strcmp(p->names[i][1], name) == 0)
            return i;
    if (p->dynamic_next >= PROF_MAX_STAGES)
        return -1;
    prof_stage_define(p, p->dynamic_next, group, name);
    return p->dynamic_next++;
}

void prof_stage_call(prof *p, int stage, uint64_t ns)
{
    if ((unsigned)stage >= PROF_MAX_STAGES)
        return;
    prof_stage_rec *r = &p->stages[stage];
    if (r->calls == 0)
        r->min_ns = UINT64_MAX;
    r->ring[r->calls % PROF_RING] = ns;
    r->calls++;
    r->total_ns += ns;
    if (ns > r->max_ns)
        r->max_ns = ns;
    if (ns < r->min_ns)
        r->min_ns = ns;
}

void prof_stage_busy(prof *p, int stage, int thread, uint64_t ns)
{
    if ((unsigned)stage >= PROF_MAX_STAGES || (unsigned)thread >= PROF_MAX_THREADS)
        return;
    p->threads[thread].busy_ns[stage] += ns;
    p->threads[thread].seen = 1;
}

void prof_reset(prof *p)
{
    for (int i = 0; i < PROF_MAX_STAGES; i++) {
        prof_stage_rec *r = &p->stages[i];
        if (r->calls || r->total_ns || r->max_ns) {
            r->calls = r->total_ns = r->max_ns = 0;
            r->min_ns = UINT64_MAX;
        }
    }
    for (int t = 0; t < PROF_MAX_THREADS; t++)
        if (p->threads[t].seen)
            memset(&p->threads[t], 0, sizeof p->threads[t]);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double prof_median(double *v, size_t n)
{
    if (n == 0)
        return 0.0;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double prof_mad(const double *v, size_t n, double median, double *scratch)
{
    for (size_t i = 0; i < n; i++)
        scratch[i] = v[i] > median ? v[i] - median : median - v[i];
    return prof_median(scratch, n);
}

double prof_thread_busy_ms(const prof *p, int stage, int thread)
{
    if ((unsigned)stage >= PROF_MAX_STAGES || (unsigned)thread >= PROF_MAX_THREADS)
        return 0.0;
    return (double)p->threads[thread].busy_ns[stage] * 1e-6;
}

/* Threads that recorded any busy time (the highest index seen + 1). */
static int threads_seen(const prof *p)
{
    int n = 0;
    for (int t = 0; t < PROF_MAX_THREADS; t++)
        if (p->threads[t].seen)
            n = t + 1;
    return n;
}

int prof_summaries(const prof *p, prof_summary *out, int max)
{
    /* the kept durations and the MAD's scratch: the caller's stack, so that two profiles
     * summarised in two threads share nothing (64 KiB) */
    double v[PROF_RING], scratch[PROF_RING];
    int threads = threads_seen(p);
    int n = 0;
    for (int i = 0; i < PROF_MAX_STAGES && n < max; i++) {
        const prof_stage_rec *r = &p->stages[i];
        if (r->calls == 0)
            continue;
        prof_summary *s = &out[n++];
        memset(s, 0, sizeof *s);
        s->id = i;
        s->group = p->names[i][1] ? p->names[i][0] : "?";
        s->name = p->names[i][1] ? p->names[i][1] : "?";
        s->calls = r->calls;
        s->total_ms = (double)r->total_ns * 1e-6;
        s->mean_ms = s->total_ms / (double)r->calls;
        s->max_ms = (double)r->max_ns * 1e-6;
        s->min_ms = (double)r->min_ns * 1e-6;
        s->kept = r->calls < PROF_RING ? r->calls : PROF_RING;
        for (uint64_t k = 0; k < s->kept; k++)
            v[k] = (double)r->ring[k] * 1e-6;
        s->median_ms = prof_median(v, (size_t)s->kept);
        s->mad_ms = prof_mad(v, (size_t)s->kept, s->median_ms, scratch);
        double lo = 0, hi = 0;
        int seen = 0;
        for (int t = 0; t < threads; t++) {
            if (!p->threads[t].seen)
                continue;
            double b = (double)p->threads[t].busy_ns[i] * 1e-6;
            lo = seen ? (b < lo ? b : lo) : b;
            hi = seen ? (b > hi ? b : hi) : b;
            seen++;
        }
        s->thread_min_ms = lo;
        s->thread_max_ms = hi;
        s->threads = seen;
    }
    return n;
}

void prof_print(const prof *p, FILE *f, const char *title, int per_thread)
{
    prof_summary s[PROF_MAX_STAGES];
    int n = prof_summaries(p, s, PROF_MAX_STAGES);
    if (title)
        fprintf(f, "%s\n", title);
    if (n == 0) {
        fprintf(f, "(no stage timings recorded%s)\n",
                prof_on(p, PROF_STATS) ? "" : ": profiler disabled");
        return;
    }
    fprintf(f, "%-20s %8s %11s %9s %9s %9s %11s %11s %6s\n", "stage", "calls", "total ms",
            "mean ms", "median ms", "max ms", "thr min ms", "thr max ms", "imbal");
    const char *group = NULL;
    double group_total = 0, group_median = 0;
    const int threads = threads_seen(p);
    for (int i = 0; i <= n; i++) {
        if (group && (i == n || strcmp(s[i].group, group) != 0)) {
            fprintf(f, "%-20s %8s %11.3f %9s %9.4f   (sum of the stages of %s: total, medians)\n",
                    group, "", group_total, "", group_median, group);
            group_total = group_median = 0;
        }
        if (i == n)
            break;
        group = s[i].group;
        char name[64];
        snprintf(name, sizeof name, "%s/%s", s[i].group, s[i].name);
        /* imbalance: the most loaded thread against the mean thread */
        double mean_busy = 0;
        for (int t = 0; t < threads; t++)
            mean_busy += prof_thread_busy_ms(p, s[i].id, t);
        mean_busy = s[i].threads ? mean_busy / s[i].threads : 0;
        fprintf(f, "%-20s %8llu %11.3f %9.4f %9.4f %9.4f %11.3f %11.3f %6.2f\n", name,
                (unsigned long long)s[i].calls, s[i].total_ms, s[i].mean_ms, s[i].median_ms,
                s[i].max_ms, s[i].thread_min_ms, s[i].thread_max_ms,
                mean_busy > 0 ? s[i].thread_max_ms / mean_busy : 1.0);
        group_total += s[i].total_ms;
        group_median += s[i].median_ms;
    }
    if (per_thread && threads > 1) {
        fprintf(f, "busy ms per thread:\n%-20s", "stage");
        for (int t = 0; t < threads && t < 16; t++)
            fprintf(f, " %9s%-2d", "t", t);
        fprintf(f, "\n");
        for (int i = 0; i < n; i++) {
            char name[64];
            snprintf(name, sizeof name, "%s/%s", s[i].group, s[i].name);
            fprintf(f, "%-20s", name);
            int id = s[i].id;
            for (int t = 0; t < threads && t < 16; t++)
                fprintf(f, " %11.3f", prof_thread_busy_ms(p, id, t));
            fprintf(f, "\n");
        }
    }
}

/* ---- trace ---------------------------------------------------------------------------- */

shoal_status prof_trace_open(prof *p, int threads, size_t spans_per_thread, shoal_error *err)
{
    prof_trace_close(p);
    if (threads < 1)
        threads = 1;
    if (threads > PROF_MAX_THREADS)
        threads = PROF_MAX_THREADS;
    /* each thread's buffer in one allocation: the size must not wrap (a huge count would
     * give a small buffer with a huge capacity) */
    if (spans_per_thread > SIZE_MAX / sizeof(prof_span) / (size_t)threads)
        return shoal_error_set(err, SHOAL_ERR_NOMEM,
                               "cannot allocate the trace buffers: %d x %zu spans of %zu bytes "
                               "overflow",
                               threads, spans_per_thread, sizeof(prof_span));
    /* the tracks are 64-byte aligned (a line per thread: no false sharing), which calloc
     * does not promise */
    p->tracks = alloc_array_zero((size_t)threads, sizeof *p->tracks, "the trace tracks", err);
    if (!p->tracks)
        return err ? err->status : SHOAL_ERR_NOMEM;
    p->track_count = threads;
    for (int t = 0; t < threads; t++) {
        p->tracks[t].spans = malloc(spans_per_thread * sizeof(prof_span));
        if (!p->tracks[t].spans && spans_per_thread) {
            prof_trace_close(p);
            return shoal_error_set(err, SHOAL_ERR_NOMEM,
                                   "out of memory for the trace buffers (%d x %zu spans)", threads,
                                   spans_per_thread);
        }
        p->tracks[t].cap = spans_per_thread;
        /* touch the pages now so the first spans do not fault inside a timed stage */
        if (spans_per_thread)
            memset(p->tracks[t].spans, 0, spans_per_thread * sizeof(prof_span));
    }
    p->trace_t0 = timer_now_ns();
    p->flags |= PROF_TRACE;
    return SHOAL_OK;
}

static void trace_append(prof *p, int thread, const char *name, int64_t seq, int numbered,
                         uint64_t t0_ns, uint64_t t1_ns)
{
    if ((unsigned)thread >= (unsigned)p->track_count)
        return;
    prof_track *tr = &p->tracks[thread];
    if (tr->count >= tr->cap) {
        tr->dropped++;
        return;
    }
    prof_span *s = &tr->spans[tr->count++];
    s->t0 = t0_ns;
    s->t1 = t1_ns;
    s->name = name;
    s->seq = seq;
    s->numbered = numbered;
}

void prof_trace_span(prof *p, int thread, const char *name, int64_t seq, uint64_t t0_ns,
                     uint64_t t1_ns)
{
    trace_append(p, thread, name, seq, 0, t0_ns, t1_ns);
}

void prof_trace_frame(prof *p, int thread, const char *name, int64_t seq, uint64_t t0_ns,
                      uint64_t t1_ns)
{
    trace_append(p, thread, name, seq, 1, t0_ns, t1_ns);
}

uint64_t prof_trace_count(const prof *p, uint64_t *dropped)
{
    uint64_t n = 0, d = 0;
    for (int t = 0; t < p->track_count; t++) {
        n += p->tracks[t].count;
        d += p->tracks[t].dropped;
    }
    if (dropped)
        *dropped = d;
    return n;
}

void prof_trace_close(prof *p)
{
    for (int t = 0; t < p->track_count; t++)
        free(p->tracks[t].spans);
    alloc_free(p->tracks);
    p->tracks = NULL;
    p->track_count = 0;
    p->flags &= ~(unsigned)PROF_TRACE;
}

/* Microseconds with three decimals, exactly (integer ns split, no float rounding). */
static void put_us(FILE *f, int64_t ns)
{
    if (ns < 0) {
        fputc('-', f);
        ns = -ns;
    }
    fprintf(f, "%lld.%03lld", (long long)(ns / 1000), (long long)(ns % 1000));
}

void prof_trace_emit(const prof *p, FILE *f)
{
    fprintf(f, "{\"traceEvents\":[\n");
    fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,"
               "\"args\":{\"name\":\"shoal\"}}");
    for (int t = 0; t < p->track_count; t++) {
        fprintf(f,
                ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,"
                "\"args\":{\"name\":\"%s %d\"}}",
                t, t == 0 ? "main/worker" : "worker", t);
        fprintf(f,
                ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,"
                "\"args\":{\"sort_index\":%d}}",
                t, t);
    }
    for (int t = 0; t < p->track_count; t++) {
        const prof_track *tr = &p->tracks[t];
        for (size_t i = 0; i < tr->count; i++) {
            const prof_span *s = &tr->spans[i];
            char name[96];
            if (s->numbered && s->seq >= 0)
                snprintf(name, sizeof name, "%s %lld", s->name, (long long)s->seq);
            else
                snprintf(name, sizeof name, "%s", s->name);
            fprintf(f, ",\n{\"name\":");
            text_json_string(f, name); /* the one JSON string writer (core/text.h) */
            fprintf(f, ",\"ph\":\"X\",\"ts\":");
            put_us(f, (int64_t)(s->t0 - p->trace_t0));
            fprintf(f, ",\"dur\":");
            put_us(f, (int64_t)(s->t1 - s->t0));
            fprintf(f, ",\"pid\":1,\"tid\":%d", t);
            if (s->seq >= 0)
                fprintf(f, ",\"args\":{\"seq\":%lld}", (long long)s->seq);
            fputc('}', f);
        }
    }
    uint64_t dropped;
    prof_trace_count(p, &dropped);
    fprintf(f, "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{\"dropped_spans\":%llu}}\n",
            (unsigned long long)dropped);
}

/* ---- the public API (shoal/profile.h): the functions above under their public names -- */

uint64_t shoal_profile_now_ns(void) { return timer_now_ns(); }
shoal_status shoal_profile_create(shoal_profile **profile_out, shoal_error *err)
{
    CHECK_ARG(profile_out, "profile_out", err);
    return prof_create(profile_out, err);
}
void shoal_profile_destroy(shoal_profile *p) { prof_destroy(p); }
void shoal_profile_clear(shoal_profile *p)
{
    if (!p)
        return;
    prof_reset(p);
}
int shoal_profile_stage_id(shoal_profile *p, const char *group, const char *name)
{
    if (!p || !group || !name)
        return -1;
    return prof_stage(p, group, name);
}
void shoal_profile_add_call(shoal_profile *p, int stage, uint64_t ns)
{
    if (!p)
        return;
    prof_stage_call(p, stage, ns);
}
int shoal_profile_get_summaries(const shoal_profile *p, shoal_profile_summary *out, int max)
{
    if (!p || !out)
        return 0;
    return prof_summaries(p, out, max);
}
void shoal_profile_write_table(const shoal_profile *p, FILE *f, const char *title, int per_thread)
{
    if (!p || !f)
        return;
    prof_print(p, f, title, per_thread);
}
double shoal_profile_median(double *v, size_t n) { return prof_median(v, n); }
double shoal_profile_mad(const double *v, size_t n, double median, double *scratch)
{
    return prof_mad(v, n, median, scratch);
}
shoal_status shoal_profile_trace_start(shoal_profile *p, int threads, size_t spans_per_thread,
                                       shoal_error *err)
{
    CHECK_ARG(p, "profile", err);
    return prof_trace_open(p, threads, spans_per_thread, err);
}
uint64_t shoal_profile_trace_spans(const shoal_profile *p, uint64_t *dropped)
{
    if (!p) {
        if (dropped)
            *dropped = 0;
        return 0;
    }
    return prof_trace_count(p, dropped);
}
void shoal_profile_trace_stop(shoal_profile *p)
{
    if (!p)
        return;
    prof_trace_close(p);
}
/* shoal_profile_trace_save is io's (src/io/trace.c): it writes a file. */

/* ---- earlier names: one process-wide profile that only they use (shoal/profile.h) ----- */

static prof g_legacy = {.flags = PROF_STATS, .dynamic_next = PROF_DYNAMIC_BASE};

prof *prof_legacy(void) { return &g_legacy; }

void shoal_profile_reset(void) { prof_reset(&g_legacy); }
int shoal_profile_stage(const char *group, const char *name)
{
    return prof_stage(&g_legacy, group, name);
}
void shoal_profile_stage_call(int stage, uint64_t ns) { prof_stage_call(&g_legacy, stage, ns); }
int shoal_profile_summaries(shoal_profile_summary *out, int max)
{
    return prof_summaries(&g_legacy, out, max);
}
void shoal_profile_print(FILE *f, const char *title, int per_thread)
{
    prof_print(&g_legacy, f, title, per_thread);
}
shoal_status shoal_profile_trace_open(int threads, size_t spans_per_thread, shoal_error *err)
{
    return prof_trace_open(&g_legacy, threads, spans_per_thread, err);
}
uint64_t shoal_profile_trace_count(uint64_t *dropped)
{
    return prof_trace_count(&g_legacy, dropped);
}
void shoal_profile_trace_close(void) { prof_trace_close(&g_legacy); }
