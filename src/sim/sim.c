/* SPDX-License-Identifier: MIT */
/* The step order: grid_assign -> grid_scan -> grid_scatter -> forces, in one parallel
 * region per step. Owns the simulation object's life cycle and the state in and out;
 * the grid (grid.c), the rules (forces_kernel.h) and the parameters (models.c) are
 * elsewhere. */
#include "core/alloc.h"
#include "core/check.h"
#include "core/cpu.h"
#include "core/profile.h"
#include "core/timer.h"
#include "sim/models.h"
#include "sim/sim_config.h"
#include "sim/sim_internal.h"
#include "sim/world.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

shoal_sim_desc shoal_sim_desc_default(void)
{
    shoal_sim_desc d;
    memset(&d, 0, sizeof d);
    d.model = SIM_MODEL_DEFAULT;
    shoal_params_default(d.model, &d.params);
    d.boid_count = shoal_model_default_count(d.model);
    d.dt_s = 1.0 / 60.0;
    d.t0_s = 0.0;
    d.seed = 1;
    d.thread_count = 0;
    d.neighbors = SHOAL_NEIGHBORS_GRID;
    d.isa = SHOAL_ISA_AUTO;
    d.world = shoal_world_default();
    return d;
}

shoal_sim_desc shoal_sim_desc_for(shoal_model model)
{
    shoal_sim_desc d = shoal_sim_desc_default();
    d.model = model;
    if ((unsigned)model < SHOAL_MODEL_COUNT) {
        shoal_params_default(model, &d.params);
        d.boid_count = shoal_model_default_count(model);
        const sim_model *m = sim_model_of(model);
        if (m->school)
            m->school(&d.params);
    }
    return d;
}

static forces_range_fn forces_for_isa(int isa)
{
#if SHOAL_SIM_HAVE_X86_SIMD
    if (isa == SHOAL_ISA_AVX512)
        return forces_range_avx512;
    if (isa == SHOAL_ISA_AVX2)
        return forces_range_avx2;
#endif
#if SHOAL_SIM_HAVE_NEON
    if (isa == SHOAL_ISA_NEON)
        return forces_range_neon;
#endif
    (void)isa;
    return forces_range_scalar;
}

const char *shoal_sim_isa_name(const shoal_sim *sim)
{
    if (!sim)
        return "none";
    return shoal_isa_name((shoal_isa)sim->isa);
}

/* ---- life cycle ------------------------------------------------------------------- */

static shoal_status validate_desc(const shoal_sim_desc *d, shoal_error *err)
{
    if ((unsigned)d->model >= SHOAL_MODEL_COUNT)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "invalid model %d", (int)d->model);
    if (d->boid_count < 1)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "boid count must be at least 1");
    if (d->boid_count > (size_t)UINT32_MAX - 64)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "boid count %zu exceeds the limit %u",
                               d->boid_count, UINT32_MAX - 64);
    if (!(d->dt_s > 0) || !isfinite(d->dt_s) || d->dt_s > 1e6)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "dt must be finite and > 0 (got %g)", d->dt_s);
    if (!isfinite(d->t0_s) || fabs(d->t0_s) > 1e15)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "t0 %g: expected a finite time in [-1e15, 1e15] s", d->t0_s);
    char why[160];
    if (parallel_check_threads(d->thread_count, why, sizeof why))
        return shoal_error_set(err, SHOAL_ERR_INPUT, "%s", why);
    if (d->neighbors != SHOAL_NEIGHBORS_GRID && d->neighbors != SHOAL_NEIGHBORS_BRUTE)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "invalid neighbour method");
    shoal_status st = shoal_params_validate(d->model, &d->params, err);
    return st ? st : world_check_desc(d, "shoal_sim", err);
}

void shoal_sim_destroy(shoal_sim *s)
{
    if (!s)
        return;
    for (int k = 0; k < 6; k++) {
        alloc_free(s->cur[k]);
        alloc_free(s->nxt[k]);
    }
    alloc_free(s->row_cur);
    alloc_free(s->row_nxt);
    alloc_free(s->cell_of);
    alloc_free(s->cell_start);
    alloc_free(s->hist);
    alloc_free(s->part_row_at);
    sim_obstacles_free(s);
    prof_destroy(s->prof_own);
    alloc_free(s);
}

/* Every array is written once here, each thread its static share, so the first step does
 * not pay the page faults (tens of thousands at 1M boids: the first step's sort cost 4x
 * the next ones) and the pages of a
 * thread's share are first touched by that thread. The values: the state zero, row ids
 * the identity, the sort's buffers zero (overwritten by every step before they are read). */
static void first_touch(void *ctx, int t, int nt)
{
    shoal_sim *s = ctx;
    int64_t b, e;
    parallel_split((int64_t)s->count, t, nt, &b, &e);
    size_t len = (size_t)(e - b);
    for (int k = 0; k < 6; k++) {
        memset(s->cur[k] + b, 0, len * sizeof(float));
        memset(s->nxt[k] + b, 0, len * sizeof(float));
    }
    for (int64_t i = b; i < e; i++)
        s->row_cur[i] = (uint32_t)i;
    memset(s->row_nxt + b, 0, len * sizeof(uint32_t));
    memset(s->cell_of + b, 0, len * sizeof(uint32_t));
    int64_t hn = (int64_t)s->g.cell_count * s->hist_width;
    parallel_split(hn, t, nt, &b, &e);
    memset(s->hist + b, 0, (size_t)(e - b) * sizeof(uint32_t));
    parallel_split((int64_t)s->g.cell_count + 1, t, nt, &b, &e);
    memset(s->cell_start + b, 0, (size_t)(e - b) * sizeof(uint32_t));
}

shoal_status shoal_sim_create(const shoal_sim_desc *desc, shoal_sim **sim_out, shoal_error *err)
{
    CHECK_ARG(sim_out, "sim_out", err);
    *sim_out = NULL;
    CHECK_ARG(desc, "desc", err);
    shoal_status st = validate_desc(desc, err);
    if (st)
        return st;
    shoal_isa isa;
    st = shoal_isa_resolve(desc->isa, &isa, err);
    if (st)
        return st;
    /* 64-byte aligned (the per-thread fault lines and the counters are), which calloc
     * does not promise */
    shoal_sim *s = alloc_array_zero(1, sizeof *s, "the simulation", err);
    if (!s)
        return SHOAL_ERR_NOMEM;
    s->desc = *desc;
    s->count = desc->boid_count;
    s->isa = (int)isa;
    s->sort_staged = 1;
    /* the force kernel of AVX2 and AVX-512 (the same bits either way): lane groups unless
     * SHOAL_KERNEL=clusters (cluster lists, issue 40: docs/KERNEL_DESIGN.md) or
     * clusters-random (cluster lists cut at random places, whatever the school's size: a test
     * of the kernel). Lane groups stay the default until the device's figures say which is
     * faster where (docs/KERNEL_DESIGN.md, "Status"). */
    const char *kernel = getenv("SHOAL_KERNEL");
    s->kernel_clusters = !kernel                                  ? 0
                         : strcmp(kernel, "clusters") == 0        ? 1
                         : strcmp(kernel, "clusters-random") == 0 ? 2
                                                                  : 0;
    if ((st = prof_create(&s->prof_own, err))) {
        alloc_free(s);
        return st;
    }
    s->prof = s->prof_own;
    grid_setup(&s->g, desc->model, &desc->params, &desc->world, desc->neighbors, s->count);

    /* The sort's histograms (its blocks follow each step's thread count: run_region) */
    s->hist_width = sim_hist_width(s->count);

    size_t cnt = s->count;
    int ok = 1;
    for (int k = 0; k < 6 && ok; k++) {
        /* one slot more: the guard the cluster lists pad with (step_body) */
        ok = ok && (s->cur[k] = alloc_array(cnt + 1, sizeof(float), "boid state", err));
        ok = ok && (s->nxt[k] = alloc_array(cnt + 1, sizeof(float), "boid state", err));
    }
    ok = ok && (s->row_cur = alloc_array(cnt, sizeof(uint32_t), "boid rows", err));
    ok = ok && (s->row_nxt = alloc_array(cnt, sizeof(uint32_t), "boid rows", err));
    ok = ok && (s->cell_of = alloc_array(cnt, sizeof(uint32_t), "cell keys", err));
    ok = ok && (s->cell_start = alloc_array((size_t)s->g.cell_count + 1, sizeof(uint32_t),
                                            "grid cell table", err));
    ok = ok && (s->hist = alloc_array((size_t)s->g.cell_count * (size_t)s->hist_width,
                                      sizeof(uint32_t), "sort histograms", err));
    if (!ok) {
        shoal_sim_destroy(s);
        return err ? err->status : SHOAL_ERR_NOMEM;
    }
    parallel_region_n(first_touch, s, s->desc.thread_count);
    predators_reset(s);
    *sim_out = s;
    return SHOAL_OK;
}

size_t shoal_sim_count(const shoal_sim *s)
{
    if (!s)
        return 0;
    return s->count;
}

const shoal_sim_desc *shoal_sim_get_desc(const shoal_sim *s)
{
    if (!s)
        return NULL;
    return &s->desc;
}

double shoal_sim_time(const shoal_sim *s)
{
    if (!s)
        return 0;
    return s->desc.t0_s + (double)s->steps_done * s->desc.dt_s;
}

shoal_status shoal_sim_set_params(shoal_sim *s, const shoal_params *params, shoal_error *err)
{
    CHECK_ARG(s, "sim", err);
    CHECK_ARG(params, "params", err);
    shoal_status st = shoal_params_validate(s->desc.model, params, err);
    if (!st) /* a periodic box must stay at least twice the (new) interaction radius */
        st = shoal_world_validate(&s->desc.world,
                                  shoal_params_interaction_radius(s->desc.model, params), err);
    if (st)
        return st;
    /* The grid was sized for the old radius: a larger radius needs larger cells. */
    float r_old = shoal_params_interaction_radius(s->desc.model, &s->desc.params);
    float r_new = shoal_params_interaction_radius(s->desc.model, params);
    shoal_sim_desc d = s->desc;
    d.params = *params;
    /* the field depends on its cell size and margin: rebuild it first, so that a field
     * too large leaves the sim as it was */
    if (s->obstacle_count && (params->field_cell != s->desc.params.field_cell ||
                              params->field_margin != s->desc.params.field_margin)) {
        st = field_build(&s->fld, s->obstacles, s->obstacle_count, params->field_cell,
                         params->field_margin, err);
        if (st)
            return st;
    }
    int reset_predators = params->predator_count != s->desc.params.predator_count;
    if (r_new != r_old && s->desc.neighbors == SHOAL_NEIGHBORS_GRID) {
        grid g;
        grid_setup(&g, d.model, params, &d.world, d.neighbors, s->count);
        if (g.cell_count > s->g.cell_count) {
            uint32_t *cs =
                alloc_array((size_t)g.cell_count + 1, sizeof(uint32_t), "grid cell table", err);
            uint32_t *h = alloc_array((size_t)g.cell_count * (size_t)s->hist_width,
                                      sizeof(uint32_t), "sort histograms", err);
            if (!cs || !h) {
                alloc_free(cs);
                alloc_free(h);
                return err ? err->status : SHOAL_ERR_NOMEM;
            }
            alloc_free(s->cell_start);
            alloc_free(s->hist);
            s->cell_start = cs;
            s->hist = h;
        }
        s->g = g;
        s->cells_valid = 0;
    }
    s->desc = d;
    if (reset_predators)
        predators_reset(s);
    return SHOAL_OK;
}

/* The state calls' work, shared by the current names and the 0.1 ones below. */
static shoal_status load_rows(shoal_sim *s, const float *rows, shoal_error *err)
{
    shoal_status st = shoal_state_check_finite(rows, s->count, "state", err);
    if (!st) /* 2D: z and vz exactly 0 (nothing changes otherwise) */
        st = shoal_world_check_rows(&s->desc.world, rows, s->count, "state", err);
    if (st)
        return st;
    for (size_t i = 0; i < s->count; i++) {
        for (int k = 0; k < 6; k++)
            s->cur[k][i] = rows[i * 6 + (size_t)k];
        s->row_cur[i] = (uint32_t)i;
    }
    /* positions outside a periodic box come in wrapped (world_wrap_f) */
    world_axes wa;
    world_axes_make(&s->desc.world, &wa);
    for (int k = 0; k < 3; k++)
        if (wa.periodic[k])
            for (size_t i = 0; i < s->count; i++)
                s->cur[k][i] = world_wrap_f(s->cur[k][i], wa.lo[k], wa.size[k], wa.hi[k]);
    s->cells_valid = 0;
    predators_reset(s);
    s->has_state = 1;
    return SHOAL_OK;
}

static void draw_rows(shoal_sim *s, uint64_t seed)
{
    /* A row at a time straight into the arrays: boid i's draws depend on (seed, i) alone, so
     * this needs no scratch buffer and cannot fail (an earlier version allocated N rows and,
     * when that failed, left the state zeroed). */
    for (size_t i = 0; i < s->count; i++) {
        float row[6];
        sim_init_row(s->desc.model, &s->desc.params, &s->desc.world, seed, i, row);
        for (int k = 0; k < 6; k++)
            s->cur[k][i] = row[k];
        s->row_cur[i] = (uint32_t)i;
    }
    s->cells_valid = 0;
    predators_reset(s);
    s->has_state = 1;
}

static void copy_rows(const shoal_sim *s, float *rows)
{
    for (size_t i = 0; i < s->count; i++) {
        size_t r = s->row_cur[i];
        for (int k = 0; k < 6; k++)
            rows[r * 6 + (size_t)k] = s->cur[k][i];
    }
}

shoal_status shoal_sim_set_rows(shoal_sim *s, const float *rows, size_t row_count, shoal_error *err)
{
    CHECK_ARG(s, "sim", err);
    CHECK_ARG(rows, "rows", err);
    if (row_count != s->count)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "state: %zu rows given, the simulation has %zu boids", row_count,
                               s->count);
    if (!rows)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "state: no rows (NULL)");
    return load_rows(s, rows, err);
}

shoal_status shoal_sim_get_rows(const shoal_sim *s, float *rows, size_t row_count, shoal_error *err)
{
    CHECK_ARG(s, "sim", err);
    CHECK_ARG(rows, "rows", err);
    if (row_count != s->count)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "state: room for %zu rows given, the simulation has %zu boids",
                               row_count, s->count);
    if (!rows)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "state: no buffer (NULL)");
    if (!s->has_state)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "state: the simulation has none yet (shoal_sim_set_rows or "
                               "shoal_sim_draw_state first)");
    copy_rows(s, rows);
    return SHOAL_OK;
}

int shoal_sim_has_state(const shoal_sim *s)
{
    if (!s)
        return 0;
    return s->has_state;
}

shoal_status shoal_sim_draw_state(shoal_sim *s, shoal_error *err)
{
    CHECK_ARG(s, "sim", err);
    draw_rows(s, s->desc.seed);
    return SHOAL_OK;
}

/* The 0.1 state calls (shoal/sim.h): exported for programs written against them until 1.0;
 * nothing in the tree calls them but tests/test_compat.c. */
shoal_status shoal_sim_set_state(shoal_sim *s, const float *rows, shoal_error *err)
{
    CHECK_ARG(s, "sim", err);
    CHECK_ARG(rows, "rows", err);
    return load_rows(s, rows, err);
}

shoal_status shoal_sim_init_state(shoal_sim *s, uint64_t seed)
{
    if (!s)
        return SHOAL_ERR_INPUT;
    draw_rows(s, seed);
    return SHOAL_OK;
}

void shoal_sim_get_state(const shoal_sim *s, float *rows)
{
    if (!s || !rows)
        return;
    copy_rows(s, rows);
}

shoal_boid_view shoal_sim_view(const shoal_sim *s)
{
    if (!s) {
        shoal_boid_view none;
        memset(&none, 0, sizeof none);
        return none;
    }
    shoal_boid_view v = {s->count,  s->cur[0], s->cur[1], s->cur[2],
                         s->cur[3], s->cur[4], s->cur[5], s->row_cur};
    return v;
}

void shoal_sim_grid_info(const shoal_sim *s, float origin[3], float *cell_size, int32_t dims[3])
{
    if (!s || !origin || !cell_size || !dims)
        return;
    for (int c = 0; c < 3; c++) {
        origin[c] = s->g.origin[c];
        dims[c] = s->g.dims[c];
    }
    *cell_size = s->g.cell_size;
}

size_t shoal_sim_targets(const shoal_sim *s, double t_s, float *xyz, size_t max)
{
    if (!s || (!xyz && max > 0))
        return 0;
    int count = sim_model_target_count(s->desc.model, &s->desc.params);
    if (count == 0)
        return 0;
    float tmp[SHOAL_MAX_TARGETS * 3];
    sim_targets(&s->desc.params, count, s->desc.seed, t_s, tmp);
    size_t n = (size_t)count;
    for (size_t k = 0; k < n; k++)
        if (s->target_pinned[k])
            memcpy(tmp + 3 * k, s->target_pin[k], 3 * sizeof(float));
    if (n > max)
        n = max;
    memcpy(xyz, tmp, n * 3 * sizeof(float));
    return n;
}

shoal_status shoal_sim_set_target(shoal_sim *s, size_t index, const float xyz[3], shoal_error *err)
{
    CHECK_ARG(s, "sim", err);
    CHECK_ARG(xyz, "xyz", err);
    int count = sim_model_target_count(s->desc.model, &s->desc.params);
    if (count == 0)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "targets: model %s has none",
                               shoal_model_name(s->desc.model));
    if (index >= (size_t)count)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "target %zu: there are %d", index, count);
    if (!isfinite(xyz[0]) || !isfinite(xyz[1]) || !isfinite(xyz[2]))
        return shoal_error_set(err, SHOAL_ERR_INPUT, "target %zu: position is not finite", index);
    s->target_pinned[index] = 1;
    memcpy(s->target_pin[index], xyz, 3 * sizeof(float));
    return SHOAL_OK;
}

void shoal_sim_clear_targets(shoal_sim *s)
{
    if (!s)
        return;
    memset(s->target_pinned, 0, sizeof s->target_pinned);
}

/* ---- the step --------------------------------------------------------------------- */

/* The step's constants: those of the parameters (the model's own through its entry,
 * sim/models/NAME.h), then the targets of this time where the model draws them (with the
 * user's pins) and the predators where they start the step. */
static void prepare_consts(shoal_sim *s)
{
    const shoal_params *p = &s->desc.params;
    model_consts *mc = &s->mc;
    sim_model_consts(s->desc.model, p, s->desc.dt_s, mc);
    mc->seed = s->desc.seed;
    mc->step = sim_step_index(shoal_sim_time(s), s->desc.dt_s);
    WORLD_CONSTS_SET(mc, &s->desc.world);
    if (mc->target_count > 0) {
        sim_targets(p, mc->target_count, s->desc.seed, shoal_sim_time(s), &mc->targets[0][0]);
        for (int k = 0; k < mc->target_count; k++)
            if (s->target_pinned[k])
                memcpy(mc->targets[k], s->target_pin[k], sizeof mc->targets[k]);
    }
    mc->predator_count = s->predator_count;
    memcpy(mc->predators, s->pred_p, (size_t)s->predator_count * sizeof mc->predators[0]);
}

typedef struct step_ctx {
    shoal_sim *s;
    forces_range_fn forces;
    int64_t forces_items;       /* what the forces stage shares out: boids, or cluster work items */
    int64_t forces_chunk;       /* items per dynamic chunk of the forces stage */
    int forces_items_are_boids; /* the lane groups' items (not the cluster lists' cells) */
    int sort_only;
} step_ctx;

/* The forces stage's kernel and work. With kernel_clusters (SHOAL_KERNEL=clusters), AVX2 and
 * AVX-512 walk cluster lists (forces_cluster.h: items of a column of cells and
 * SIM_CLUSTER_SLAB layers) on the grid, in every world (the minimum image where a vector's
 * cells touch a periodic seam, as the lane groups take it), when the items are enough to share
 * out; else, and on the other ISAs, lane groups of consecutive boids (forces_kernel.h). Either
 * gives the same bits. About 16 chunks per thread so a crowded
 * part of the school is shared out; the chunking does not change any result. */
static void forces_plan(const shoal_sim *s, int nthreads, step_ctx *c)
{
    c->forces = forces_for_isa(s->isa);
    c->forces_items = (int64_t)s->count;
    c->forces_items_are_boids = 1;
    int64_t chunk = (int64_t)s->count / ((int64_t)nthreads * 16);
    c->forces_chunk = chunk < 64 ? 64 : chunk > 4096 ? 4096 : chunk;
#if SHOAL_SIM_HAVE_X86_SIMD
    const grid *g = &s->g;
    int64_t cx = g->act_hi[0] - g->act_lo[0], cy = g->act_hi[1] - g->act_lo[1],
            cz = g->act_hi[2] - g->act_lo[2];
    int64_t items = cx * cy * ((cz + SIM_CLUSTER_SLAB - 1) / SIM_CLUSTER_SLAB);
    int wide = s->isa == SHOAL_ISA_AVX2 || s->isa == SHOAL_ISA_AVX512;
    int enough = s->kernel_clusters == 2 || items >= (int64_t)nthreads * 16;
    if (!s->kernel_clusters || !wide || !enough || items <= 0 ||
        s->desc.neighbors != SHOAL_NEIGHBORS_GRID)
        return;
    c->forces = s->isa == SHOAL_ISA_AVX512 ? forces_clusters_avx512 : forces_clusters_avx2;
    c->forces_items = items;
    c->forces_items_are_boids = 0;
    chunk = items / ((int64_t)nthreads * 16);
    c->forces_chunk = chunk < 1 ? 1 : chunk;
#endif
}

/* Record a stage: per-thread busy time, and thread 0's wall time up to the barrier. With
 * the profiler on (core/profile.h) also thread 0's per-call wall time (median, max) and
 * every thread's busy span in the trace; off, one predictable branch each. */
static inline void stage_end(shoal_sim *s, int stage, int t, uint64_t *t_prev)
{
    uint64_t now = timer_now_ns();
    s->thread_busy_ns[stage][t] += now - *t_prev;
    prof *pf = s->prof;
    if (prof_on(pf, PROF_STATS))
        prof_stage_busy(pf, PROF_SIM_BASE + stage, t, now - *t_prev);
    if (prof_on(pf, PROF_TRACE))
        prof_trace_span(pf, t, sim_stage_names[stage], (int64_t)s->steps_done + 1, *t_prev, now);
    parallel_barrier();
    if (t == 0) {
        uint64_t after = timer_now_ns();
        s->stage_ns[stage] += after - *t_prev;
        if (prof_on(pf, PROF_STATS)) {
            prof_stage_define(pf, PROF_SIM_BASE + stage, "sim", sim_stage_names[stage]);
            prof_stage_call(pf, PROF_SIM_BASE + stage, after - *t_prev);
        }
        *t_prev = after;
    } else {
        *t_prev = timer_now_ns();
    }
}

/* Every thread of the step's region runs this. */
static void step_body(void *p, int t, int nthreads)
{
    step_ctx *c = p;
    shoal_sim *s = c->s;
    uint64_t t_prev = timer_now_ns();
    const uint64_t t_step = t_prev; /* the enclosing "step N" span of this thread's track */
    grid_assign(s, t);
    stage_end(s, STAGE_ASSIGN, t, &t_prev);
    grid_scan(s, t, nthreads);
    stage_end(s, STAGE_SCAN, t, &t_prev);
    grid_scatter(s, t, nthreads);
    stage_end(s, STAGE_SCATTER, t, &t_prev);
    /* The sorted copy becomes the state the forces read; the old arrays take the output. */
    if (t == 0) {
        for (int k = 0; k < 6; k++) {
            float *tmp = s->cur[k];
            s->cur[k] = s->nxt[k];
            s->nxt[k] = tmp;
        }
        uint32_t *tr = s->row_cur;
        s->row_cur = s->row_nxt;
        s->row_nxt = tr;
        /* a part: the sort dropped the slots marked SIM_CELL_NONE (part.c) */
        if (s->part_mode) {
            s->count = s->cell_start[s->g.cell_count];
            /* the lane groups share out boids: those that are left (forces_plan counted them
             * before the sort; a range past the last would walk rows past the grid's end) */
            if (c->forces_items_are_boids && c->forces_items > (int64_t)s->count)
                c->forces_items = (int64_t)s->count;
        }
        /* the guard after the last boid: a candidate at infinity, which no radius test takes
         * (the cluster lists pad an ended list with it: forces_cluster.h) */
        for (int k = 0; k < 6; k++)
            s->cur[k][s->count] = k < 3 ? INFINITY : 0.0f;
    }
    parallel_barrier();
    if (c->sort_only) {
        if (prof_on(s->prof, PROF_TRACE))
            prof_trace_frame(s->prof, t, "sort", (int64_t)s->steps_done + 1, t_step,
                             timer_now_ns());
        return;
    }
    t_prev = timer_now_ns(); /* the swap and its barrier belong to no stage */
    int64_t b0, b1;
    sim_fault *f = &s->fault[t];
    while (parallel_dynamic_next(&s->ctr_forces, c->forces_items, c->forces_chunk, &b0, &b1))
        c->forces(s, b0, b1, f);
    stage_end(s, STAGE_FORCES, t, &t_prev);
    if (prof_on(s->prof, PROF_TRACE))
        prof_trace_frame(s->prof, t, "step", (int64_t)s->steps_done + 1, t_step, t_prev);
}

/* The parallel region of a step: sort (and forces unless sort_only). Returns the lowest
 * input row whose new state is not finite, or UINT32_MAX. */
static uint32_t run_region(shoal_sim *s, int sort_only)
{
    step_ctx c = {.s = s, .sort_only = sort_only};
    prepare_consts(s);
    s->ctr_blocks.next = 0;
    s->ctr_units.next = 0;
    s->ctr_scatter.next = 0;
    s->ctr_forces.next = 0;
    /* This simulation's own thread count, passed to its region: the process default is
     * read, never written, so simulations in two threads of one program do not race. */
    int nthreads = parallel_resolve_threads(s->desc.thread_count);
    if (nthreads > SIM_MAX_THREADS)
        nthreads = SIM_MAX_THREADS;
    /* the sort's blocks for this many threads (they never change its result: grid.c) */
    s->block_count = sim_block_count(s->count, nthreads);
    s->block_size = ((int64_t)s->count + s->block_count - 1) / s->block_count;
    for (int t = 0; t < nthreads; t++) {
        s->fault[t].found = 0;
        s->fault[t].groups = s->fault[t].boids = s->fault[t].lane_pairs = s->fault[t].useful = 0;
    }
    forces_plan(s, nthreads, &c);
    parallel_region_n(step_body, &c, nthreads);
    s->stage_calls++;
    uint32_t bad_row = UINT32_MAX;
    if (sort_only)
        return bad_row;
    sim_work w = {0, 0, 0, 0};
    for (int t = 0; t < nthreads; t++) {
        if (s->fault[t].found && s->fault[t].row < bad_row)
            bad_row = s->fault[t].row;
        w.groups += s->fault[t].groups;
        w.boids += s->fault[t].boids;
        w.lane_pairs += s->fault[t].lane_pairs;
        w.useful += s->fault[t].useful;
    }
    s->work = w;
    return bad_row;
}

uint32_t sim_forces_pass(shoal_sim *s) { return run_region(s, 0); }

static shoal_status run_step(shoal_sim *s, int sort_only, shoal_error *err)
{
    uint32_t bad_row = run_region(s, sort_only);
    /* cell_of: the cells of the new positions, when every boid got forces */
    const grid *g = &s->g;
    s->cells_valid = !sort_only && bad_row == UINT32_MAX;
    for (int c = 0; c < 3; c++)
        s->cells_valid &= g->act_lo[c] == 0 && g->act_hi[c] == g->dims[c];
    if (sort_only)
        return SHOAL_OK;
    if (bad_row != UINT32_MAX) {
        /* cur still holds the state from before the step (sorted; row_cur matches). */
        return shoal_error_set(err, SHOAL_ERR_NONFINITE,
                               "non-finite value in boid %u (input row) at step %llu "
                               "(t = %.6f s); state left as before that step",
                               bad_row, (unsigned long long)s->steps_done + 1, shoal_sim_time(s));
    }
    /* predators chase the start-of-step school (cur), one serial pass */
    predators_step(s);
    /* forces wrote the new state into nxt, in the same order as cur. */
    for (int k = 0; k < 6; k++) {
        float *tmp = s->cur[k];
        s->cur[k] = s->nxt[k];
        s->nxt[k] = tmp;
    }
    s->steps_done++;
    return SHOAL_OK;
}

shoal_status shoal_sim_step(shoal_sim *s, int step_count, shoal_error *err)
{
    CHECK_ARG(s, "sim", err);
    if (!s->has_state)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "step: the simulation has no state yet (shoal_sim_set_rows or "
                               "shoal_sim_draw_state first)");
    if (step_count < 0)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "step: %d steps (expected >= 0)", step_count);
    for (int k = 0; k < step_count; k++) {
        shoal_status st = run_step(s, 0, err);
        if (st)
            return st;
    }
    return SHOAL_OK;
}

/* Sort the current state into cell order without stepping (tests, neighbour queries). */
void sim_sort_only(shoal_sim *s) { run_step(s, 1, NULL); }
void shoal_sim_sort(shoal_sim *s)
{
    if (!s)
        return;
    sim_sort_only(s);
}

size_t shoal_sim_get_stats(const shoal_sim *s, shoal_stage_stats *out, size_t max)
{
    if (!s || (!out && max > 0))
        return 0;
    /* the threads this sim's steps ran on (not whatever the process default is now); the
     * median and max per call are in the stage profiler (core/profile.h, --stats) */
    int threads = s->desc.thread_count > 0 ? s->desc.thread_count : parallel_thread_count();
    if (threads > SIM_MAX_THREADS)
        threads = SIM_MAX_THREADS;
    size_t n = 0;
    for (int k = 0; k < STAGE_COUNT && n < max; k++, n++) {
        out[n].name = sim_stage_names[k];
        out[n].calls = s->stage_calls;
        out[n].total_ms = (double)s->stage_ns[k] * 1e-6;
        uint64_t lo = UINT64_MAX, hi = 0;
        for (int t = 0; t < threads; t++) {
            uint64_t b = s->thread_busy_ns[k][t];
            lo = b < lo ? b : lo;
            hi = b > hi ? b : hi;
        }
        out[n].thread_min_ms = (double)lo * 1e-6;
        out[n].thread_max_ms = (double)hi * 1e-6;
    }
    return STAGE_COUNT;
}

shoal_profile *shoal_sim_get_profile(const shoal_sim *s)
{
    if (!s)
        return NULL;
    return s->prof;
}

void shoal_sim_set_profile(shoal_sim *s, shoal_profile *profile)
{
    if (!s)
        return;
    s->prof = profile ? profile : s->prof_own;
}

/* A state's rows must be finite before a step reads them (shoal_sim_set_rows, the
 * readers in io). */
shoal_status shoal_state_check_finite(const float *rows, size_t count, const char *what,
                                      shoal_error *err)
{
    CHECK_ARRAY(rows, count, "rows", err);
    static const char *const column_names[SHOAL_STATE_COLUMNS] = {"px", "py", "pz",
                                                                  "vx", "vy", "vz"};
    if (!what)
        what = "state";
    for (size_t r = 0; r < count; r++) {
        for (int c = 0; c < SHOAL_STATE_COLUMNS; c++) {
            float v = rows[r * SHOAL_STATE_COLUMNS + (size_t)c];
            if (isfinite(v))
                continue;
            /* Not printf's "-nan": the sign of a NaN means nothing to the reader. */
            const char *kind = isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
            return shoal_error_set(err, SHOAL_ERR_INPUT, "%s: row %zu column %d (%s) is %s", what,
                                   r, c, column_names[c], kind);
        }
    }
    return SHOAL_OK;
}

/* an earlier name */
size_t shoal_sim_stats(const shoal_sim *s, shoal_stage_stats *out, size_t max)
{
    return shoal_sim_get_stats(s, out, max);
}
