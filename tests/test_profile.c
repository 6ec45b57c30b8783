/* SPDX-License-Identifier: MIT */
/* The stage profiler and the trace recorder (core/profile.h), and the commands built on
 * them: statistics on synthetic timings (median, max, per-thread busy), the enable switch,
 * Chrome trace files that parse and whose spans nest (every stage span inside its step span
 * on its thread's track, a track per thread), `shoal step --stats/--trace`, and
 * `shoal bench --tiny --json` / `--compare`. No timing is asserted: the machine is shared. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/cli_harness.h"

#include "core/profile.h"
#include "shoal/shoal.h"
#include "support/json.h"
#include "tests/scenes.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char *slurp(const char *file, size_t *len)
{
    FILE *f = fopen(file, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = 0;
        *len = (size_t)n;
    }
    return buf;
}

/* A whole file as one JSON value, by the strict RFC 8259 reader (support/json.h): no NaN,
 * no hex, no stray escapes or trailing garbage. 0 on success. */
static int jload(const char *file, json_value *v)
{
    return json_load_file(file, JSON_STRICT, v, NULL, 0) != JSON_OK;
}

/* python3's json module as a second opinion, when it is there (visible skip otherwise). */
static void python_json_check(const char *file)
{
    if (system("command -v python3 > /dev/null 2>&1") != 0) {
        printf("# skip python3 json check: python3 not found\n");
        return;
    }
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "python3 -c 'import json,sys; json.load(open(sys.argv[1]))' %s",
             file);
    assert_int_equal(system(cmd), 0);
}

/* ---- the trace checks ----------------------------------------------------------------- */

typedef struct span {
    char name[64];
    double ts, dur;
    int tid;
    long seq;
} span;

/* Every "X" span of a Chrome trace; checks the envelope and the metadata of each track. */
static span *trace_spans(const char *file, int *count, int *tracks)
{
    json_value root;
    if (jload(file, &root))
        fail_msg("%s is not valid JSON", file);
    python_json_check(file);
    const json_value *ev = json_get(&root, "traceEvents");
    assert_non_null(ev);
    assert_int_equal(ev->type, JSON_ARRAY);
    const json_value *unit = json_get(&root, "displayTimeUnit");
    assert_non_null(unit);
    assert_string_equal(unit->str, "ms");
    span *s = calloc((size_t)ev->count + 1, sizeof *s);
    int n = 0, named[64] = {0};
    for (int i = 0; i < ev->count; i++) {
        const json_value *e = &ev->items[i];
        const json_value *ph = json_get(e, "ph"), *name = json_get(e, "name"),
                         *tid = json_get(e, "tid"), *pid = json_get(e, "pid");
        assert_non_null(ph);
        assert_non_null(name);
        assert_non_null(tid);
        assert_non_null(pid);
        assert_int_equal(pid->num, 1);
        if (strcmp(ph->str, "M") == 0) {
            if (strcmp(name->str, "thread_name") == 0 && tid->num >= 0 && tid->num < 64)
                named[(int)tid->num] = 1;
            continue;
        }
        assert_string_equal(ph->str, "X");
        const json_value *ts = json_get(e, "ts"), *dur = json_get(e, "dur");
        assert_non_null(ts);
        assert_non_null(dur);
        assert_true(dur->num >= 0);
        snprintf(s[n].name, sizeof s[n].name, "%s", name->str);
        s[n].ts = ts->num;
        s[n].dur = dur->num;
        s[n].tid = (int)tid->num;
        const json_value *args = json_get(e, "args"), *seq = json_get(args, "seq");
        s[n].seq = seq ? (long)seq->num : -1;
        n++;
    }
    *tracks = 0;
    for (int t = 0; t < 64; t++)
        if (named[t])
            *tracks = t + 1;
    /* every span's track has a thread_name */
    for (int i = 0; i < n; i++)
        assert_true(s[i].tid >= 0 && s[i].tid < 64 && named[s[i].tid]);
    json_free(&root);
    *count = n;
    return s;
}

/* Every span of `stage_names` lies inside the span "<frame> seq" of the same track; every
 * frame span of every track holds exactly one span of each stage. */
static void check_nesting(const span *s, int n, const char *frame, const char *const *stages,
                          int stage_count, int tracks, int frames)
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%s ", frame);
    int frame_spans = 0;
    for (int i = 0; i < n; i++) {
        if (strncmp(s[i].name, prefix, strlen(prefix)) != 0)
            continue;
        frame_spans++;
        long seq = atol(s[i].name + strlen(prefix));
        assert_int_equal(seq, s[i].seq);
        int found[16] = {0};
        for (int j = 0; j < n; j++) {
            if (s[j].tid != s[i].tid || s[j].seq != seq || j == i)
                continue;
            for (int k = 0; k < stage_count; k++)
                if (strcmp(s[j].name, stages[k]) == 0) {
                    found[k]++;
                    /* inside, to the microsecond decimals written */
                    if (!(s[j].ts >= s[i].ts - 1e-9 &&
                          s[j].ts + s[j].dur <= s[i].ts + s[i].dur + 1e-3))
                        fail_msg("%s (tid %d, %s %ld) [%f, %f] is not inside [%f, %f]", s[j].name,
                                 s[j].tid, frame, seq, s[j].ts, s[j].ts + s[j].dur, s[i].ts,
                                 s[i].ts + s[i].dur);
                }
        }
        for (int k = 0; k < stage_count; k++)
            if (found[k] != 1)
                fail_msg("%s %ld on tid %d has %d spans of %s", frame, seq, s[i].tid, found[k],
                         stages[k]);
    }
    assert_int_equal(frame_spans, frames * tracks);
    /* and no stage span outside any frame */
    int stage_spans = 0;
    for (int j = 0; j < n; j++)
        for (int k = 0; k < stage_count; k++)
            stage_spans += strcmp(s[j].name, stages[k]) == 0;
    assert_int_equal(stage_spans, frames * tracks * stage_count);
}

static const char *const sim_stages[] = {"grid_assign", "grid_scan", "grid_scatter", "forces"};

/* ---- tests ------------------------------------------------------------------------------ */

static int setup(void **state)
{
    (void)state;
    g_merge_output = 1; /* g_out holds stdout and stderr, as a terminal shows them */
    return cli_setup("profile");
}

static int teardown(void **state)
{
    (void)state;
    return cli_teardown();
}

static const prof_summary *find_summary(const prof_summary *s, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s[i].name, name) == 0)
            return &s[i];
    return NULL;
}

static void test_stats_synthetic(void **state)
{
    (void)state;
    prof *p;
    assert_int_equal(prof_create(&p, NULL), SHOAL_OK);
    int a = prof_stage(p, "test", "a"), b = prof_stage(p, "test", "b");
    assert_true(a >= PROF_DYNAMIC_BASE);
    assert_int_equal(prof_stage(p, "test", "a"), a); /* same name, same id */
    assert_int_not_equal(a, b);
    /* a: 5, 1, 3, 2, 4 ms -> median 3, max 5, min 1, mean 3, MAD 1 */
    const uint64_t ms = 1000000;
    uint64_t calls[] = {5 * ms, 1 * ms, 3 * ms, 2 * ms, 4 * ms};
    for (int i = 0; i < 5; i++)
        prof_stage_call(p, a, calls[i]);
    /* b: an even count: 1, 2, 10, 20 -> median 6 */
    uint64_t callsb[] = {10 * ms, 1 * ms, 20 * ms, 2 * ms};
    for (int i = 0; i < 4; i++)
        prof_stage_call(p, b, callsb[i]);
    /* busy: thread 0 does 10 ms of a, thread 1 6 ms, thread 2 8 ms */
    prof_stage_busy(p, a, 0, 10 * ms);
    prof_stage_busy(p, a, 1, 4 * ms);
    prof_stage_busy(p, a, 1, 2 * ms);
    prof_stage_busy(p, a, 2, 8 * ms);
    prof_summary s[PROF_MAX_STAGES];
    int n = prof_summaries(p, s, PROF_MAX_STAGES);
    const prof_summary *sa = find_summary(s, n, "a"), *sb = find_summary(s, n, "b");
    assert_non_null(sa);
    assert_non_null(sb);
    assert_string_equal(sa->group, "test");
    assert_int_equal(sa->calls, 5);
    assert_float_equal(sa->total_ms, 15.0, 1e-9);
    assert_float_equal(sa->mean_ms, 3.0, 1e-9);
    assert_float_equal(sa->median_ms, 3.0, 1e-9);
    assert_float_equal(sa->max_ms, 5.0, 1e-9);
    assert_float_equal(sa->min_ms, 1.0, 1e-9);
    assert_float_equal(sa->mad_ms, 1.0, 1e-9);
    assert_int_equal(sa->threads, 3);
    assert_float_equal(sa->thread_min_ms, 6.0, 1e-9);
    assert_float_equal(sa->thread_max_ms, 10.0, 1e-9);
    assert_float_equal(sb->median_ms, 6.0, 1e-9);
    assert_float_equal(sb->max_ms, 20.0, 1e-9);

    /* past the ring: count, total and max cover every call; the median the last PROF_RING */
    prof_reset(p);
    for (int i = 0; i < PROF_RING + 100; i++)
        prof_stage_call(p, a, i < 100 ? 1000 * ms : 2 * ms);
    n = prof_summaries(p, s, PROF_MAX_STAGES);
    sa = find_summary(s, n, "a");
    assert_non_null(sa);
    assert_int_equal(sa->calls, PROF_RING + 100);
    assert_int_equal(sa->kept, PROF_RING);
    assert_float_equal(sa->max_ms, 1000.0, 1e-9);
    assert_float_equal(sa->median_ms, 2.0, 1e-9);
    assert_null(find_summary(s, n, "b")); /* no calls since the reset */

    /* the printer shows median and max columns */
    FILE *f = fopen(path("print.txt"), "w+");
    prof_print(p, f, "title", 1);
    rewind(f);
    char buf[4096];
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    buf[len] = 0;
    fclose(f);
    assert_non_null(strstr(buf, "median ms"));
    assert_non_null(strstr(buf, "max ms"));
    assert_non_null(strstr(buf, "test/a"));
    prof_destroy(p);
}

/* Off, nothing is recorded; on again, a step records every sim stage once per step. */
static void test_enable_switch(void **state)
{
    (void)state;
    shoal_sim_desc d = shoal_sim_desc_default();
    d.boid_count = 2000;
    d.thread_count = 2;
    shoal_sim *sim;
    shoal_error e;
    d.seed = 3;
    assert_int_equal(shoal_sim_create(&d, &sim, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_draw_state(sim, &e), SHOAL_OK);
    prof *p = shoal_sim_get_profile(sim);
    prof_set_flags(p, 0);
    assert_int_equal(shoal_sim_step(sim, 3, &e), SHOAL_OK);
    prof_summary s[PROF_MAX_STAGES];
    assert_int_equal(prof_summaries(p, s, PROF_MAX_STAGES), 0);
    prof_set_flags(p, PROF_STATS);
    assert_int_equal(shoal_sim_step(sim, 4, &e), SHOAL_OK);
    int n = prof_summaries(p, s, PROF_MAX_STAGES);
    assert_int_equal(n, 4);
    for (int k = 0; k < 4; k++) {
        const prof_summary *x = find_summary(s, n, sim_stages[k]);
        assert_non_null(x);
        assert_string_equal(x->group, "sim");
        assert_int_equal(x->calls, 4);
        assert_true(x->max_ms >= x->median_ms && x->median_ms >= x->min_ms);
        assert_true(x->threads >= 1);
    }
    /* the public per-sim stats still count every step */
    shoal_stage_stats st[8];
    assert_int_equal(shoal_sim_get_stats(sim, st, 8), 4);
    assert_int_equal(st[0].calls, 7);
    shoal_sim_destroy(sim);
}

/* Every simulation and renderer records into a profile of its own: steps of one sim are
 * not counted in another's (nor in the 0.1 names' process-wide one: tests/test_compat.c). A profile
 * lent to a sim and a renderer takes both (one table for a program that drives them in
 * one thread), and unsetting it goes back to the object's own. */
static void test_profile_per_object(void **state)
{
    (void)state;
    shoal_sim_desc d = shoal_sim_desc_default();
    d.boid_count = 1500;
    d.thread_count = 1;
    shoal_sim *a, *b;
    shoal_error e;
    assert_int_equal(shoal_sim_create(&d, &a, &e), SHOAL_OK);
    d.seed = 2;
    assert_int_equal(shoal_sim_create(&d, &b, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_draw_state(a, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_draw_state(b, &e), SHOAL_OK);
    shoal_profile *pa = shoal_sim_get_profile(a), *pb = shoal_sim_get_profile(b);
    assert_non_null(pa);
    assert_non_null(pb);
    assert_ptr_not_equal(pa, pb);
    assert_int_equal(shoal_sim_step(a, 3, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_step(b, 5, &e), SHOAL_OK);
    shoal_profile_summary s[SHOAL_PROFILE_MAX_STAGES];
    int n = shoal_profile_get_summaries(pa, s, SHOAL_PROFILE_MAX_STAGES);
    assert_int_equal(n, 4);
    for (int k = 0; k < n; k++)
        assert_int_equal(s[k].calls, 3);
    n = shoal_profile_get_summaries(pb, s, SHOAL_PROFILE_MAX_STAGES);
    assert_int_equal(n, 4);
    for (int k = 0; k < n; k++)
        assert_int_equal(s[k].calls, 5);

    /* one lent profile for a sim, a renderer and a stage of the program's own */
    shoal_profile *mine;
    assert_int_equal(shoal_profile_create(&mine, &e), SHOAL_OK);
    shoal_render_desc rd = shoal_render_desc_default();
    rd.width = 96, rd.height = 64, rd.thread_count = 1;
    shoal_mesh fish;
    assert_int_equal(shoal_mesh_load_asset("fish.obj", &fish, &e), SHOAL_OK);
    rd.mesh = &fish;
    shoal_renderer *r;
    assert_int_equal(shoal_render_create(&rd, &r, &e), SHOAL_OK);
    shoal_mesh_free(&fish); /* create copied it */
    assert_ptr_not_equal(shoal_render_get_profile(r), mine);
    shoal_sim_set_profile(a, mine);
    shoal_render_set_profile(r, mine);
    assert_ptr_equal(shoal_sim_get_profile(a), mine);
    assert_ptr_equal(shoal_render_get_profile(r), mine);
    assert_int_equal(shoal_sim_step(a, 2, &e), SHOAL_OK);
    shoal_boid_view v = shoal_sim_view(a);
    shoal_render_instances inst = {
        .count = v.count, .px = v.px, .py = v.py, .pz = v.pz, .vx = v.vx, .vy = v.vy, .vz = v.vz};
    shoal_camera cam = shoal_camera_default();
    assert_int_equal(shoal_render_frame(r, &inst, &cam, &e), SHOAL_OK);
    int own = shoal_profile_stage_id(mine, "app", "write");
    assert_true(own >= 16);
    assert_int_equal(shoal_profile_stage_id(mine, "app", "write"), own);
    shoal_profile_add_call(mine, own, 1000);
    n = shoal_profile_get_summaries(mine, s, SHOAL_PROFILE_MAX_STAGES);
    assert_int_equal(n, 4 + 4 + 1);
    int groups[3] = {0, 0, 0};
    for (int k = 0; k < n; k++) {
        groups[strcmp(s[k].group, "sim") == 0 ? 0 : strcmp(s[k].group, "render") == 0 ? 1 : 2]++;
        assert_int_equal(s[k].calls, strcmp(s[k].group, "sim") == 0 ? 2 : 1);
    }
    assert_int_equal(groups[0], 4);
    assert_int_equal(groups[1], 4);
    assert_int_equal(groups[2], 1);
    /* the sim's own profile kept its 3 earlier steps and took none of these */
    n = shoal_profile_get_summaries(pa, s, SHOAL_PROFILE_MAX_STAGES);
    assert_int_equal(s[0].calls, 3);
    /* unset: back to its own */
    shoal_sim_set_profile(a, NULL);
    shoal_render_set_profile(r, NULL);
    assert_ptr_equal(shoal_sim_get_profile(a), pa);
    assert_int_equal(shoal_sim_step(a, 1, &e), SHOAL_OK);
    n = shoal_profile_get_summaries(pa, s, SHOAL_PROFILE_MAX_STAGES);
    assert_int_equal(s[0].calls, 4);
    shoal_profile_clear(mine);
    assert_int_equal(shoal_profile_get_summaries(mine, s, SHOAL_PROFILE_MAX_STAGES), 0);
    shoal_render_destroy(r);
    shoal_sim_destroy(a);
    shoal_sim_destroy(b);
    shoal_profile_destroy(mine);
    shoal_profile_destroy(NULL);
}

/* In process: a trace of 5 steps on 2 threads, written, parsed, nested. */
static void test_trace_library(void **state)
{
    if (!SHOAL_TEST_OPENMP) {
        printf("SKIP: per-thread stages need OpenMP (-Dopenmp=disabled)\n");
        skip();
    }
    (void)state;
    shoal_sim_desc d = shoal_sim_desc_default();
    d.boid_count = 3000;
    d.thread_count = 2;
    shoal_sim *sim;
    shoal_error e;
    d.seed = 9;
    assert_int_equal(shoal_sim_create(&d, &sim, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_draw_state(sim, &e), SHOAL_OK);
    prof *p = shoal_sim_get_profile(sim);
    assert_int_equal(prof_trace_open(p, 2, 64, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_step(sim, 5, &e), SHOAL_OK);
    uint64_t dropped;
    assert_int_equal(prof_trace_count(p, &dropped), 2 * 5 * 5);
    assert_int_equal(dropped, 0);
    assert_int_equal(prof_trace_write(p, path("lib.json"), &e), SHOAL_OK);
    /* a full buffer drops spans and says so, and the file still parses */
    assert_int_equal(prof_trace_open(p, 2, 7, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_step(sim, 3, &e), SHOAL_OK);
    prof_trace_count(p, &dropped);
    assert_int_equal(dropped, 2 * (15 - 7));
    assert_int_equal(prof_trace_write(p, path("dropped.json"), &e), SHOAL_OK);
    prof_trace_close(p);
    assert_false(prof_on(p, PROF_TRACE));
    shoal_sim_destroy(sim);

    int n, tracks;
    span *s = trace_spans(path("lib.json"), &n, &tracks);
    assert_int_equal(tracks, 2);
    assert_int_equal(n, 50);
    check_nesting(s, n, "step", sim_stages, 4, 2, 5);
    free(s);
    s = trace_spans(path("dropped.json"), &n, &tracks);
    assert_int_equal(n, 14);
    free(s);
    /* an unwritable path: an error, and no file */
    prof *q;
    assert_int_equal(prof_create(&q, &e), SHOAL_OK);
    assert_int_not_equal(prof_trace_write(q, "/nonexistent-dir/t.json", &e), SHOAL_OK);
    prof_destroy(q);
}

static void test_step_stats_and_trace(void **state)
{
    if (!SHOAL_TEST_OPENMP) {
        printf("SKIP: per-thread stages need OpenMP (-Dopenmp=disabled)\n");
        skip();
    }
    (void)state;
    assert_int_equal(run("init --count 4000 --seed 2 --out a.npy"), 0);
    assert_int_equal(run("step --in a.npy --out b.npy --steps 6 --threads 2 --stats "
                         "--trace t.json"),
                     0);
    const char *cols[] = {"calls",      "total ms",          "mean ms",    "median ms",
                          "max ms",     "thr min ms",        "thr max ms", "sim/grid_assign",
                          "sim/forces", "busy ms per thread"};
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
        if (!strstr(g_out, cols[i]))
            fail_msg("step --stats lacks '%s':\n%s", cols[i], g_out);
    int n, tracks;
    span *s = trace_spans(path("t.json"), &n, &tracks);
    assert_int_equal(tracks, 2);
    check_nesting(s, n, "step", sim_stages, 4, 2, 6);
    free(s);
    /* the trace does not change the result */
    assert_int_equal(run("step --in a.npy --out c.npy --steps 6 --threads 1"), 0);
    size_t lb, lc;
    char *b = slurp(path("b.npy"), &lb), *c = slurp(path("c.npy"), &lc);
    assert_non_null(b);
    assert_non_null(c);
    assert_int_equal(lb, lc);
    assert_memory_equal(b, c, lb);
    free(b);
    free(c);
    /* an unwritable trace: exit 2, one line, no state file */
    assert_int_equal(run("step --in a.npy --out d.npy --steps 1 --trace /nonexistent-dir/t.json"),
                     2);
    assert_non_null(strstr(g_out, "nonexistent-dir"));
    struct stat st;
    assert_int_not_equal(stat(path("d.npy"), &st), 0);
}

/* shoal render --stats --trace: the render stages in the stage table, and a trace whose
 * every frame span holds its track's stage spans (each stage at most once per track and
 * frame: a thread may get no work in a stage), every stage present in every frame. */
static void test_render_stats_and_trace(void **state)
{
    if (!SHOAL_TEST_OPENMP) {
        printf("SKIP: per-thread stages need OpenMP (-Dopenmp=disabled)\n");
        skip();
    }
    (void)state;
    if (run("render --bench 3 --count 20000 --size 320x200 --threads 2 --stats --trace "
            "r.json") != 0) {
        if (strstr(g_out, "unknown option"))
            skip(); /* a build without the renderer */
        fail_msg("render --trace failed: %s", g_out);
    }
    const char *cols[] = {"render/instance", "render/setup", "render/raster", "render/resolve",
                          "busy ms per thread"};
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
        if (!strstr(g_out, cols[i]))
            fail_msg("render --stats lacks '%s':\n%s", cols[i], g_out);
    static const char *const stages[] = {"instance", "setup", "raster", "resolve"};
    int n, tracks;
    span *s = trace_spans(path("r.json"), &n, &tracks);
    assert_int_equal(tracks, 2);
    int frames = 0;
    for (int i = 0; i < n; i++) {
        if (strncmp(s[i].name, "frame ", 6) != 0)
            continue;
        frames++;
        int found[4] = {0};
        for (int j = 0; j < n; j++)
            for (int k = 0; k < 4; k++)
                if (j != i && s[j].tid == s[i].tid && s[j].seq == s[i].seq &&
                    strcmp(s[j].name, stages[k]) == 0) {
                    found[k]++;
                    if (!(s[j].ts >= s[i].ts - 1e-9 &&
                          s[j].ts + s[j].dur <= s[i].ts + s[i].dur + 1e-3))
                        fail_msg("%s of frame %ld is outside it", stages[k], (long)s[i].seq);
                }
        for (int k = 0; k < 4; k++)
            assert_true(found[k] <= 1);
    }
    assert_int_equal(frames, 5 * 2); /* 2 warm-up + 3 timed frames, 2 tracks */
    free(s);
    /* shoal run --trace: the program's steps and frames, both tracks */
    assert_int_equal(run("run --headless --frames 12 --size 320x180 --count 3000 --threads 2 "
                         "--out frames --trace run.json"),
                     0);
    s = trace_spans(path("run.json"), &n, &tracks);
    assert_int_equal(tracks, 2);
    int fr = 0, st = 0, fo = 0, ra = 0;
    for (int i = 0; i < n; i++) {
        fr += strncmp(s[i].name, "frame ", 6) == 0;
        st += strncmp(s[i].name, "step ", 5) == 0;
        fo += strcmp(s[i].name, "forces") == 0;
        ra += strcmp(s[i].name, "raster") == 0;
    }
    assert_int_equal(fr, 12 * 2);
    assert_true(st >= 2 && fo >= 2 && ra >= 12);
    for (int k = 0; k < 4; k++)
        for (long f = 1; f <= 5; f++) {
            int any = 0;
            for (int j = 0; j < n; j++)
                any += s[j].seq == f && strcmp(s[j].name, stages[k]) == 0;
            if (!any)
                fail_msg("frame %ld has no %s span", f, stages[k]);
        }
    free(s);
}

/* --stats on the other subcommands: init and compare time their own stages, diverge
 * prints its CPU runs' step stages. */
static void test_stats_everywhere(void **state)
{
    if (!SHOAL_TEST_OPENMP) {
        printf("SKIP: per-thread stages need OpenMP (-Dopenmp=disabled)\n");
        skip();
    }
    (void)state;
    assert_int_equal(run("init --count 3000 --seed 4 --out s.npy --stats"), 0);
    assert_non_null(strstr(g_out, "init/draw"));
    assert_non_null(strstr(g_out, "init/write"));
    assert_int_equal(run("step --in s.npy --out s2.npy --steps 2"), 0);
    assert_int_equal(run("compare s.npy s2.npy --json c.json --stats"), 0);
    assert_non_null(strstr(g_out, "compare/read"));
    assert_non_null(strstr(g_out, "compare/compare"));
    assert_non_null(strstr(g_out, "compare/write"));
    assert_int_equal(run("diverge --in s.npy --a cpu --b cpu --steps 3 --csv d.csv --stats"), 0);
    assert_non_null(strstr(g_out, "sim/forces"));
    assert_non_null(strstr(g_out, "busy ms per thread"));
}

static const char *const machine_keys[] = {"cpu_model", "cores",    "isa",
                                           "omp",       "compiler", "build_type"};
static const char *const result_keys[] = {"name",      "model",  "n",      "threads", "isa",
                                          "median_ms", "min_ms", "max_ms", "mad_ms",  "repeats"};

/* The bench JSON's "omp" block: the value of `key` (NULL when null). */
static char *omp_value(const json_value *root, const char *key, char *buf, size_t cap)
{
    const json_value *v = json_get(json_get(json_get(root, "machine"), "omp"), key);
    if (!v)
        fail_msg("the bench JSON's machine.omp lacks %s", key);
    if (v->type != JSON_STRING)
        return NULL;
    snprintf(buf, cap, "%s", v->str);
    return buf;
}

/* Run bench --tiny with OMP_WAIT_POLICY / GOMP_SPINCOUNT as given (NULL: unset) and check
 * what the process saw. A policy the user sets is kept and shoal chooses nothing. With
 * neither set: on GNU libgomp the program chooses at start (SHOAL_OMP_DEFAULT) by its rule,
 * passive when the other runnable threads it counted are at least half the CPUs, else
 * libgomp's default; on LLVM's libomp the program chooses nothing and the library's auto
 * policy decides at run time (machine.omp.wait). */
static void check_wait_policy(const char *policy, const char *spin)
{
    if (policy)
        setenv("OMP_WAIT_POLICY", policy, 1);
    else
        unsetenv("OMP_WAIT_POLICY");
    if (spin)
        setenv("GOMP_SPINCOUNT", spin, 1);
    else
        unsetenv("GOMP_SPINCOUNT");
    unsetenv("SHOAL_OMP_DEFAULT");
    assert_int_equal(run("bench --tiny --peak-seconds 0 --json w.json"), 0);
    json_value root;
    if (jload(path("w.json"), &root))
        fail_msg("bench --json wrote invalid JSON");
    char wb[128], sb[128], db[160], rb[16], tb[256];
    const char *wp = omp_value(&root, "OMP_WAIT_POLICY", wb, sizeof wb),
               *sc = omp_value(&root, "GOMP_SPINCOUNT", sb, sizeof sb),
               *sd = omp_value(&root, "shoal_default", db, sizeof db),
               *rt = omp_value(&root, "runtime", rb, sizeof rb),
               *wt = omp_value(&root, "wait", tb, sizeof tb);
    assert_non_null(rt);
    assert_non_null(wt);
    printf("# runtime %s, wait: %s\n", rt, wt);
    if (strcmp(rt, "none") == 0) {
        /* a build without OpenMP: one thread, nothing waits, the program chooses nothing,
         * whatever the environment says */
        if (sd)
            fail_msg("without OpenMP the program chose a wait (%s)", sd);
        if (strncmp(wt, "no OpenMP", 9) != 0)
            fail_msg("wait '%s' without OpenMP", wt);
    } else if (policy || spin) {
        if ((policy && (!wp || strcmp(wp, policy) != 0)) || (!policy && wp))
            fail_msg("OMP_WAIT_POLICY %s in the JSON, %s set", wp ? wp : "null",
                     policy ? policy : "none");
        if ((spin && (!sc || strcmp(sc, spin) != 0)) || (!spin && sc))
            fail_msg("GOMP_SPINCOUNT %s in the JSON, %s set", sc ? sc : "null",
                     spin ? spin : "none");
        if (sd)
            fail_msg("shoal chose a wait policy (%s) over the user's", sd);
        /* the library names the variable that decided (GOMP_SPINCOUNT wins, as in libgomp) */
        char want[96];
        snprintf(want, sizeof want, "%s=%s", spin ? "GOMP_SPINCOUNT" : "OMP_WAIT_POLICY",
                 spin ? spin : policy);
        if (strncmp(wt, want, strlen(want)) != 0)
            fail_msg("wait '%s' does not start with '%s'", wt, want);
    } else if (strcmp(rt, "llvm") == 0) {
        if (sd || wp)
            fail_msg("on LLVM libomp the program chose a wait (%s, OMP_WAIT_POLICY %s)",
                     sd ? sd : "-", wp ? wp : "-");
        if (strncmp(wt, "auto: ", 6) != 0)
            fail_msg("wait '%s' is not the library's auto policy", wt);
    } else {
        assert_string_equal(rt, "gnu");
        assert_non_null(sd);
        char kind[16];
        double load;
        int cpus;
        if (sscanf(sd, "%15[^:]: %lf other runnable threads on %d CPUs", kind, &load, &cpus) != 3)
            fail_msg("shoal_default '%s' is not 'KIND: R other runnable threads on N CPUs'", sd);
        printf("# shoal's default: %s\n", sd);
        assert_int_equal(cpus, (int)json_get(json_get(&root, "machine"), "cores")->num);
        int passive = load >= 0.5 * cpus;
        assert_string_equal(kind, passive ? "passive" : "libgomp");
        if (passive)
            assert_true(wp && strcmp(wp, "passive") == 0);
        else
            assert_null(wp);
        assert_null(sc);
    }
    json_free(&root);
}

static void test_wait_policy(void **state)
{
    (void)state;
    char keep_p[64] = "", keep_s[64] = "";
    const char *p = getenv("OMP_WAIT_POLICY"), *s = getenv("GOMP_SPINCOUNT");
    if (p)
        snprintf(keep_p, sizeof keep_p, "%s", p);
    if (s)
        snprintf(keep_s, sizeof keep_s, "%s", s);
    check_wait_policy(NULL, NULL);
    check_wait_policy("active", NULL);
    check_wait_policy("passive", NULL);
    check_wait_policy(NULL, "1000");
    if (p)
        setenv("OMP_WAIT_POLICY", keep_p, 1);
    else
        unsetenv("OMP_WAIT_POLICY");
    if (s)
        setenv("GOMP_SPINCOUNT", keep_s, 1);
    else
        unsetenv("GOMP_SPINCOUNT");
}

static void test_bench_json_and_compare(void **state)
{
    (void)state;
    assert_int_equal(run("bench --tiny --json b.json"), 0);
    json_value root;
    if (jload(path("b.json"), &root))
        fail_msg("bench --json wrote invalid JSON");
    python_json_check(path("b.json"));
    const json_value *m = json_get(&root, "machine"), *res = json_get(&root, "results");
    assert_non_null(json_get(&root, "schema"));
    assert_non_null(m);
    for (size_t i = 0; i < sizeof machine_keys / sizeof machine_keys[0]; i++)
        if (!json_get(m, machine_keys[i]))
            fail_msg("machine lacks %s", machine_keys[i]);
    const json_value *omp = json_get(m, "omp");
    assert_non_null(json_get(omp, "OMP_WAIT_POLICY"));
    assert_non_null(json_get(omp, "OMP_PROC_BIND"));
    assert_non_null(json_get(omp, "OMP_NUM_THREADS"));
    assert_int_equal(json_get(m, "isa")->type, JSON_ARRAY);
    assert_non_null(res);
    assert_true(res->count >= 1);
    int sims = 0;
    for (int i = 0; i < res->count; i++) {
        const json_value *r = &res->items[i];
        const json_value *ok = json_get(r, "ok");
        assert_non_null(ok);
        assert_true(ok->num == 1);
        for (size_t k = 0; k < sizeof result_keys / sizeof result_keys[0]; k++)
            if (!json_get(r, result_keys[k]))
                fail_msg("result %d lacks %s", i, result_keys[k]);
        const json_value *kind = json_get(r, "kind");
        if (strcmp(kind->str, "sim") == 0) {
            sims++;
            const json_value *pps = json_get(r, "pairs_per_s");
            assert_non_null(pps);
            assert_true(pps->num > 0);
            assert_non_null(json_get(r, "gflops"));
            /* the uniform tiny scene carries the baseline grid's time and the ratio */
            const json_value *bl = json_get(r, "baseline");
            if (!bl)
                fail_msg("sim result %d lacks the baseline", i);
            assert_true(json_get(bl, "median_ms")->num > 0);
            assert_true(json_get(bl, "ratio")->num > 0);
            assert_true(json_get(bl, "mean_neighbours")->num > 1);
        }
        double med = json_get(r, "median_ms")->num, mn = json_get(r, "min_ms")->num,
               mx = json_get(r, "max_ms")->num;
        assert_true(mn <= med && med <= mx && mn > 0);
    }
    assert_true(sims >= 1);
    json_free(&root);

    /* compare a file with itself: nothing regresses */
    assert_int_equal(run("bench --compare b.json --current b.json"), 0);
    if (!strstr(g_out, " 0 regressions"))
        fail_msg("self-compare:\n%s", g_out);
    /* a baseline far faster: every case regresses. The noise allowance is 3 x the MADs,
     * which a loaded machine makes as large as the medians, so both files get MAD 0. */
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "cd %s && sed -E -e 's/\"median_ms\": ([0-9.e+-]+)/\"median_ms\": 0.5e-3/' "
             "-e 's/\"mad_ms\": ([0-9.e+-]+)/\"mad_ms\": 0/' b.json > fast.json && "
             "sed -E 's/\"mad_ms\": ([0-9.e+-]+)/\"mad_ms\": 0/' b.json > quiet.json",
             g_dir);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(run("bench --compare fast.json --current quiet.json"), 0);
    assert_non_null(strstr(g_out, "REGRESSION"));
    /* not a bench file: exit 2 */
    assert_int_equal(run("bench --compare out.txt --current b.json"), 2);
    /* bad options */
    assert_int_equal(run("bench --filter no-such-case"), 2);
    assert_int_equal(run("bench --repeat 0"), 2);
    assert_int_equal(run("bench --list --quick"), 0);
    assert_non_null(strstr(g_out, "sim/steer-16k/"));
}

/* --plain-grid PROGRAM: bench runs the outside yardstick on the uniform case with the case's
 * N, repeats and threads (OMP_NUM_THREADS), reads its total_ms_med= and quotes shoal's step
 * and the baseline against it; a program that prints no time is named in the case's line and
 * its JSON, a path that is no program is refused before anything runs. */
static void test_bench_plain_grid(void **state)
{
    (void)state;
    FILE *f = fopen(path("pg.sh"), "w");
    assert_non_null(f);
    fprintf(f, "#!/bin/sh\nprintf '%%s\\n' \"$*\" > pg_args.txt\necho \"$OMP_NUM_THREADS\" > "
               "pg_threads.txt\n"
               "echo \"engine=grid threads=1 nb_per_pt=29.50 total_ms_med=2.50 pairs=1\"\n");
    fclose(f);
    f = fopen(path("pg_bad.sh"), "w");
    assert_non_null(f);
    fprintf(f, "#!/bin/sh\necho \"engine=grid\"\n");
    fclose(f);
    assert_int_equal(chmod(path("pg.sh"), 0755), 0);
    assert_int_equal(chmod(path("pg_bad.sh"), 0755), 0);
    assert_int_equal(run("bench --tiny --filter sim/ --plain-grid ./pg.sh --json pg.json"), 0);
    assert_non_null(strstr(g_out, "plain grid 2.500 ms"));
    json_value root;
    if (jload(path("pg.json"), &root))
        fail_msg("bench --json wrote invalid JSON");
    const json_value *res = json_get(&root, "results");
    assert_int_equal(res->count, 1);
    char args[256] = "", threads[32] = "", want[32];
    cli_read_into("pg_args.txt", args, sizeof args);
    cli_read_into("pg_threads.txt", threads, sizeof threads);
    snprintf(want, sizeof want, "%d\n", (int)json_get(&res->items[0], "threads")->num);
    if (strcmp(args, "-n 4096 -s 3 -w 2\n") != 0 || strcmp(threads, want) != 0)
        fail_msg("plain grid run with '%s', OMP_NUM_THREADS '%s'", args, threads);
    const json_value *pg = json_get(&res->items[0], "plain_grid");
    assert_non_null(pg);
    double med = json_get(&res->items[0], "median_ms")->num;
    double bl = json_get(json_get(&res->items[0], "baseline"), "median_ms")->num;
    assert_true(json_get(pg, "median_ms")->num == 2.5);
    assert_true(json_get(pg, "mean_neighbours")->num == 29.5);
    assert_true(fabs(json_get(pg, "ratio")->num - med / 2.5) < 1e-5 * (med / 2.5));
    assert_true(fabs(json_get(pg, "baseline_ratio")->num - bl / 2.5) < 1e-5 * (bl / 2.5));
    json_free(&root);
    /* no time printed: said, the case itself still reported */
    assert_int_equal(run("bench --tiny --filter sim/ --plain-grid ./pg_bad.sh --json pgb.json"), 0);
    assert_non_null(strstr(g_out, "plain grid: ./pg_bad.sh printed no total_ms_med=MS"));
    if (jload(path("pgb.json"), &root))
        fail_msg("bench --json wrote invalid JSON");
    pg = json_get(&json_get(&root, "results")->items[0], "plain_grid");
    assert_non_null(pg);
    assert_non_null(json_get(pg, "error"));
    json_free(&root);
    assert_int_equal(run("bench --tiny --plain-grid ./no-such-program"), 2);
    assert_non_null(strstr(g_out, "--plain-grid: ./no-such-program is not an executable program"));
}

/* Issue 44, N10: a span count whose buffer size wraps (461168601842738791 x 40 bytes is
 * 16 bytes modulo 2^64) was accepted with a 16-byte buffer, and the next step wrote 250
 * spans into it; N11: the tracks (64-byte aligned lines) came from calloc, which UBSan
 * reported on every span. Both through the public calls on a sim's own profile. */
static void test_trace_sizes_and_alignment(void **state)
{
    (void)state;
    shoal_error e;
    shoal_sim_desc d = shoal_sim_desc_for(SHOAL_MODEL_STEER);
    d.boid_count = 300;
    d.thread_count = 2;
    shoal_sim *s = NULL;
    assert_int_equal(shoal_sim_create(&d, &s, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_draw_state(s, &e), SHOAL_OK);
    shoal_profile *p = shoal_sim_get_profile(s);
    assert_int_equal((uintptr_t)p % 64, 0);
    assert_int_equal(shoal_profile_trace_start(p, 1, (size_t)461168601842738791ull, &e),
                     SHOAL_ERR_NOMEM);
    assert_non_null(strstr(e.message, "overflow"));
    assert_int_equal(shoal_profile_trace_start(p, 100000, SIZE_MAX / 2, &e), SHOAL_ERR_NOMEM);
    assert_int_equal(shoal_profile_trace_spans(p, NULL), 0);
    assert_int_equal(shoal_sim_step(s, 50, &e), SHOAL_OK); /* no trace: nothing recorded */
    assert_int_equal(shoal_profile_trace_start(p, 2, 100, &e), SHOAL_OK);
    const prof *pr = p;
    assert_non_null(pr->tracks);
    for (int t = 0; t < pr->track_count; t++)
        assert_int_equal((uintptr_t)&pr->tracks[t] % 64, 0);
    assert_int_equal(shoal_sim_step(s, 50, &e), SHOAL_OK);
    uint64_t dropped = 0;
    assert_true(shoal_profile_trace_spans(p, &dropped) > 0);
    assert_true(dropped > 0); /* 100 spans a thread, 50 steps of 5+ spans: the rest counted */
    shoal_profile_trace_stop(p);
    shoal_sim_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stats_synthetic),
        cmocka_unit_test(test_enable_switch),
        cmocka_unit_test(test_profile_per_object),
        cmocka_unit_test(test_trace_library),
        cmocka_unit_test(test_step_stats_and_trace),
        cmocka_unit_test(test_bench_json_and_compare),
        cmocka_unit_test(test_bench_plain_grid),
        cmocka_unit_test(test_wait_policy),
        cmocka_unit_test(test_render_stats_and_trace),
        cmocka_unit_test(test_stats_everywhere),
        cmocka_unit_test(test_trace_sizes_and_alignment),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
