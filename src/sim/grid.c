/* SPDX-License-Identifier: MIT */
/* The uniform grid and its stable counting sort. Owns the cell geometry, the per-block
 * histograms and the reordering of the boid arrays into cell order; knows nothing of the
 * rules. Order inside a cell is by input row, so the sorted order (and every sum taken
 * over it) is a function of the state alone: not of the thread count, not of the order
 * the previous step left, not of how a run was split over state files. */
#include "sim/models.h"
#include "core/check.h"
#include "sim/sim_internal.h"
#include "sim/world.h"

#include <math.h>
#include <string.h>

const char *const sim_stage_names[STAGE_COUNT] = {"grid_assign", "grid_scan", "grid_scatter",
                                                  "forces"};

const char *shoal_sim_stage_name(shoal_sim_stage stage)
{
    return (unsigned)stage < STAGE_COUNT ? sim_stage_names[stage] : NULL;
}

void grid_setup(grid *g, shoal_model model, const shoal_params *p, const shoal_world *w,
                shoal_neighbors nb, size_t count)
{
    memset(g, 0, sizeof *g);
    if (nb == SHOAL_NEIGHBORS_BRUTE) {
        /* All pairs: one cell holding every boid in row order; its one candidate run is
         * then [0, N) in row order, the O(N^2) reference (in a periodic world the walkers
         * take every pair's minimum image: the brute force of the torus). */
        g->cell_size = INFINITY;
        g->inv_cell = 0.0f;
        g->dims[0] = g->dims[1] = g->dims[2] = 1;
        g->cell_count = 1;
        g->row_count = 1;
        for (int c = 0; c < 3; c++) {
            g->gdims[c] = g->act_hi[c] = 1;
            g->off[c] = g->act_lo[c] = 0;
            /* the one cell wraps on a periodic axis: the walkers take the image there */
            g->wrap[c] = w && shoal_world_axis_periodic(w, c);
        }
        return;
    }
    shoal_world wd = w ? *w : shoal_world_default();
    const int plane = shoal_world_dims(&wd) == 2;
    int wrap[3];
    for (int c = 0; c < 3; c++)
        wrap[c] = shoal_world_axis_periodic(&wd, c);
    float lo[3], hi[3];
    sim_model_of(model)->bounds(p, lo, hi);
    /* Inflate the radius a little so rounding in d^2 <= r^2 or in the cell coordinate can
     * never put a neighbour two cells away. */
    float cell = shoal_params_interaction_radius(model, p) * 1.001f;
    double ext[3];
    for (int c = 0; c < 3; c++) {
        /* Walls are soft: boids overshoot them. Cover 10% more each side plus a cell;
         * boids beyond still work (they clamp to the border cells). */
        double margin = 0.1 * (hi[c] - lo[c]) + cell;
        g->origin[c] = (float)(lo[c] - margin);
        ext[c] = (double)hi[c] - lo[c] + 2 * margin;
    }
    /* A periodic axis: the world's box exactly, in floor(L / cell) cells of L / dims (at
     * least the cell, so at least the radius); positions live in [lo, hi) (wrapped after
     * every step). 2D: one layer of cells in z (every boid has z = 0). */
    world_axes wa;
    world_axes_make(&wd, &wa);
    /* Keep the cell count O(N): large boxes with few boids get bigger cells (still exact,
     * just more candidates). */
    double max_cells = fmax(4.0 * (double)count, 32768.0);
    if (max_cells > 64.0 * 1024 * 1024)
        max_cells = 64.0 * 1024 * 1024;
    double nd[3];
    for (;;) {
        double n = 1;
        for (int c = 0; c < 3; c++) {
            if (wrap[c])
                nd[c] = fmax(1.0, floor((double)wa.size[c] / (double)cell));
            else if (c == 2 && plane)
                nd[c] = 1.0;
            else
                nd[c] = fmax(1.0, ceil(ext[c] / cell));
            n *= nd[c];
        }
        if (n <= max_cells)
            break;
        cell *= 1.25f;
    }
    g->cell_size = cell;
    g->inv_cell = 1.0f / cell;
    for (int c = 0; c < 3; c++) {
        g->dims[c] = (int32_t)nd[c];
        g->inv[c] = g->inv_cell;
        g->wrap[c] = wrap[c];
        if (wrap[c]) {
            g->origin[c] = wa.lo[c];
            g->inv[c] = (float)g->dims[c] / wa.size[c];
        } else if (c == 2 && plane) {
            g->origin[c] = -0.5f * cell; /* z = 0 is inside the one layer */
        }
    }
    g->cell_count = (int64_t)g->dims[0] * g->dims[1] * g->dims[2];
    g->row_count = (int64_t)g->dims[1] * g->dims[2];
    for (int c = 0; c < 3; c++) {
        g->gdims[c] = g->act_hi[c] = g->dims[c];
        g->off[c] = g->act_lo[c] = 0;
    }
}

static inline uint32_t cell_index(const grid *g, float x, float y, float z)
{
    /* the whole grid's cell (clamped to its edges), then its place in this sub-box */
    int32_t cx = grid_coord(x, g->origin[0], g->inv[0], g->gdims[0]) - g->off[0];
    int32_t cy = grid_coord(y, g->origin[1], g->inv[1], g->gdims[1]) - g->off[1];
    int32_t cz = grid_coord(z, g->origin[2], g->inv[2], g->gdims[2]) - g->off[2];
    return (uint32_t)(cx + g->dims[0] * (cy + g->dims[1] * cz));
}

/* The sort's work is cut into blocks of consecutive boids (sim_block_count: from N and the
 * thread count) so that threads can share it out. Which blocks there are never changes the
 * result: the scatter is stable (a cell's boids land in source order whatever block counted
 * them) and grid_scatter ends by putting each cell in input-row order. Each block counts
 * into its own histogram over the cells it touches only, packed one after the other into
 * `hist` (hist_width cell tables): in the steady state a block's boids lie in a narrow
 * range of cells (its own, widened by a z-plane each way by the few boids that changed
 * planes). When the ranges do not fit (a fresh state in row order: every block touches
 * every cell), blocks are taken together in groups, at most hist_width of them, each over
 * the whole range of its members. A "unit" is a block or a group: begin/end boids, lo/hi
 * cells, and `off`, the index in hist of its counter for cell lo (of cell c: hist[off + c -
 * lo]). */

/* Worker threads: the block range [begin, end) of block `blk`. */
static void block_range(const shoal_sim *s, int blk, int64_t *begin, int64_t *end)
{
    *begin = blk * s->block_size;
    *end = *begin + s->block_size;
    if (*end > (int64_t)s->count)
        *end = (int64_t)s->count;
    if (*begin > *end)
        *begin = *end;
}

/* The units of this step from the blocks' cell ranges (see above): every thread of
 * grid_assign computes the same ones (no barrier to wait for one of them). */
static void sort_units_make(const shoal_sim *s, sort_units *u)
{
    const int64_t cells = s->g.cell_count;
    int64_t total = 0;
    for (int k = 0; k < s->block_count; k++)
        if (s->block_lo[k] <= s->block_hi[k])
            total += s->block_hi[k] - s->block_lo[k] + 1;
    int per = 1; /* blocks per unit */
    if (total > (int64_t)s->hist_width * cells)
        per = (s->block_count + s->hist_width - 1) / s->hist_width;
    int64_t base = 0;
    u->count = 0;
    for (int k0 = 0; k0 < s->block_count; k0 += per) {
        int k1 = k0 + per < s->block_count ? k0 + per : s->block_count;
        int64_t lo = INT64_MAX, hi = -1, b, e;
        for (int k = k0; k < k1; k++)
            if (s->block_lo[k] <= s->block_hi[k]) {
                lo = s->block_lo[k] < lo ? s->block_lo[k] : lo;
                hi = s->block_hi[k] > hi ? s->block_hi[k] : hi;
            }
        int n = u->count++;
        block_range(s, k0, &b, &e);
        u->begin[n] = b;
        block_range(s, k1 - 1, &b, &e);
        u->end[n] = e;
        if (hi < 0) { /* no boids: an empty range */
            u->lo[n] = 1;
            u->hi[n] = 0;
            u->off[n] = 0;
            continue;
        }
        u->lo[n] = lo;
        u->hi[n] = hi;
        u->off[n] = base;
        base += hi - lo + 1;
    }
}

/* The cell of each boid of [begin, end) (unless cells_valid), and their range. */
static void block_cells(shoal_sim *s, int64_t begin, int64_t end, int64_t *lo_out, int64_t *hi_out)
{
    const grid *g = &s->g;
    const float *px = s->cur[0], *py = s->cur[1], *pz = s->cur[2];
    uint32_t *cell_of = s->cell_of;
    uint32_t lo = UINT32_MAX, hi = 0;
    if (!s->cells_valid) {
        for (int64_t i = begin; i < end; i++) {
            uint32_t c = cell_index(g, px[i], py[i], pz[i]);
            cell_of[i] = c;
            lo = c < lo ? c : lo;
            hi = c > hi ? c : hi;
        }
    } else if (!s->part_mode) {
        for (int64_t i = begin; i < end; i++) {
            uint32_t c = cell_of[i];
            lo = c < lo ? c : lo;
            hi = c > hi ? c : hi;
        }
    } else { /* a part: slots marked SIM_CELL_NONE are dropped (part.c) */
        for (int64_t i = begin; i < end; i++) {
            uint32_t c = cell_of[i];
            if (c == SIM_CELL_NONE)
                continue;
            lo = c < lo ? c : lo;
            hi = c > hi ? c : hi;
        }
    }
    /* no boids, or every slot dropped: an empty range */
    *lo_out = lo <= hi ? (int64_t)lo : 1;
    *hi_out = lo <= hi ? (int64_t)hi : 0;
}

/* Unit n's histogram over its cell range. */
static void unit_count_cells(shoal_sim *s, const sort_units *u, int n)
{
    if (u->lo[n] > u->hi[n])
        return;
    uint32_t *h = s->hist + u->off[n];
    const uint32_t lo = (uint32_t)u->lo[n], *cell_of = s->cell_of;
    memset(h, 0, (size_t)(u->hi[n] - u->lo[n] + 1) * sizeof *h);
    if (!s->part_mode) {
        for (int64_t i = u->begin[n]; i < u->end[n]; i++)
            h[cell_of[i] - lo]++;
    } else {
        for (int64_t i = u->begin[n]; i < u->end[n]; i++) {
            uint32_t c = cell_of[i];
            if (c != SIM_CELL_NONE)
                h[c - lo]++;
        }
    }
}

/* All threads of the region: the cell of each boid of the blocks they take (unless the
 * last step's forces wrote them: cells_valid) and each block's cell range; then the units
 * and each unit's histogram over its range. One block (a small school): its taker does all
 * of it, no barrier. Writes cell_of, block_lo/hi, the units (thread 0) and the hist entries
 * of the units it takes. */
__attribute__((noinline)) void grid_assign(shoal_sim *s, int thread_index)
{
    int64_t b0, b1;
    if (s->block_count == 1) {
        if (parallel_dynamic_next(&s->ctr_blocks, 1, 1, &b0, &b1)) {
            block_range(s, 0, &b0, &b1);
            block_cells(s, b0, b1, &s->block_lo[0], &s->block_hi[0]);
            sort_units_make(s, &s->units);
            unit_count_cells(s, &s->units, 0);
        }
        return;
    }
    while (parallel_dynamic_next(&s->ctr_blocks, s->block_count, 1, &b0, &b1)) {
        int blk = (int)b0;
        int64_t begin, end;
        block_range(s, blk, &begin, &end);
        block_cells(s, begin, end, &s->block_lo[blk], &s->block_hi[blk]);
    }
    parallel_barrier();
    sort_units units;
    sort_units_make(s, &units);
    if (thread_index == 0) /* read after the stage's barrier (grid_scan, grid_scatter) */
        s->units = units;
    while (parallel_dynamic_next(&s->ctr_units, units.count, 1, &b0, &b1))
        unit_count_cells(s, &units, (int)b0);
}

/* All threads of the region, each over its share [b, e) of the cells: the totals of its
 * cells (pass 1), their offset among all threads' (scan.c), then in one pass cell_start and
 * each (cell, unit) counter turned into that unit's first slot in the cell: cell-major,
 * unit-minor order, a stable sort. The units touching a thread's cells are few in the
 * steady state (their ranges barely overlap), so the per-cell loop over them is short. */
__attribute__((noinline)) void grid_scan(shoal_sim *s, int thread_index, int thread_count)
{
    const int64_t cells = s->g.cell_count;
    int64_t b, e;
    parallel_split(cells, thread_index, thread_count, &b, &e);
    int act[SIM_BLOCK_MAX_COUNT], na = 0;
    for (int u = 0; u < s->units.count; u++)
        if (s->units.lo[u] <= s->units.hi[u] && s->units.lo[u] < e && s->units.hi[u] >= b)
            act[na++] = u;
    uint64_t sum = 0;
    for (int k = 0; k < na; k++) {
        int u = act[k];
        int64_t lo = s->units.lo[u] > b ? s->units.lo[u] : b;
        int64_t hi = s->units.hi[u] + 1 < e ? s->units.hi[u] + 1 : e;
        const uint32_t *h = s->hist + s->units.off[u] + (lo - s->units.lo[u]);
        uint32_t us = 0; /* a unit counts at most N < 2^32 boids */
        for (int64_t c = 0; c < hi - lo; c++)
            us += h[c];
        sum += us;
    }
    int64_t total;
    uint64_t run = (uint64_t)scan_offset(sum, s->scan_partial, thread_index, thread_count, &total);
    /* The cells cut into segments at the units' range ends: inside a segment the same
     * units cover every cell (in the steady state a few: ranges overlap by the z-planes
     * their movers reach). */
    int64_t cut[2 * SIM_BLOCK_MAX_COUNT + 2];
    int nc = 0;
    cut[nc++] = b;
    cut[nc++] = e;
    for (int k = 0; k < na; k++) {
        int64_t lo = s->units.lo[act[k]], hi = s->units.hi[act[k]] + 1;
        if (lo > b && lo < e)
            cut[nc++] = lo;
        if (hi > b && hi < e)
            cut[nc++] = hi;
    }
    for (int i = 1; i < nc; i++) /* insertion sort: a few dozen at most */
        for (int j = i; j > 0 && cut[j - 1] > cut[j]; j--) {
            int64_t t = cut[j];
            cut[j] = cut[j - 1];
            cut[j - 1] = t;
        }
    for (int i = 0; i + 1 < nc; i++) {
        int64_t c0 = cut[i], c1 = cut[i + 1];
        if (c0 == c1)
            continue;
        uint32_t *cover[SIM_BLOCK_MAX_COUNT]; /* in unit order: each unit's counter of c0 */
        int ncov = 0;
        for (int k = 0; k < na; k++) {
            int u = act[k];
            if (s->units.lo[u] <= c0 && s->units.hi[u] >= c0)
                cover[ncov++] = s->hist + s->units.off[u] + (c0 - s->units.lo[u]);
        }
        uint32_t *cs = s->cell_start + c0;
        if (ncov == 1) { /* the steady state's common case: one exclusive scan */
            uint32_t *h = cover[0];
            for (int64_t c = 0; c < c1 - c0; c++) {
                uint32_t v = h[c];
                cs[c] = h[c] = (uint32_t)run;
                run += v;
            }
            continue;
        }
        for (int64_t c = 0; c < c1 - c0; c++) {
            cs[c] = (uint32_t)run;
            for (int k = 0; k < ncov; k++) {
                uint32_t v = cover[k][c];
                cover[k][c] = (uint32_t)run;
                run += v;
            }
        }
    }
    if (thread_index == 0)
        s->cell_start[cells] = (uint32_t)total;
}

/* The scatter's stores. In the steady state (the state arrives in the last step's cell
 * order) a block's destinations are nearly consecutive slots, so they are staged per
 * 64-byte line in a small ring in the worker's cache (sort_ring) and a line all of whose 16
 * slots this block wrote leaves with non-temporal stores: no read for ownership of the
 * destination (28 of the scatter's 88 bytes a boid from memory), and no other thread can
 * own a slot of such a line. A line left part-written (a cell shared with the next block,
 * a boid moving far) is written slot by slot with ordinary stores, so the values and slots
 * are exactly the plain scatter's: the bits never depend on the path. Writing each slot
 * with a non-temporal store of its own (the experiment of issue 28) left the write-combining
 * buffers part-filled and was 17-20x slower. */
#if defined(__SSE2__)
#include <emmintrin.h>
#define GRID_STAGED 1
#else
#define GRID_STAGED 0
#endif

/* 7 streams: the row and the six state floats, as 32-bit words */
enum { SORT_STREAMS = 7, SORT_RING_LINES = 64 };

typedef struct sort_ring {
    _Alignas(64) uint32_t v[SORT_STREAMS][SORT_RING_LINES][16];
    int64_t line[SORT_RING_LINES];  /* the destination line an entry holds, or -1 */
    uint32_t mask[SORT_RING_LINES]; /* its slots written so far */
} sort_ring;

#if GRID_STAGED
/* The written slots of ring entry e, with ordinary stores (a line other blocks share). */
static void ring_put_part(sort_ring *r, int e, uint32_t *const dst[SORT_STREAMS])
{
    size_t base = (size_t)r->line[e] * 16;
    for (uint32_t m = r->mask[e]; m; m &= m - 1) {
        int b = __builtin_ctz(m);
        for (int k = 0; k < SORT_STREAMS; k++)
            dst[k][base + (size_t)b] = r->v[k][e][b];
    }
    r->mask[e] = 0;
    r->line[e] = -1;
}

/* A whole line of every stream, non-temporal (the arrays are 64-byte aligned: alloc_array). */
static void ring_put_line(sort_ring *r, int e, uint32_t *const dst[SORT_STREAMS])
{
    size_t base = (size_t)r->line[e] * 16;
    for (int k = 0; k < SORT_STREAMS; k++) {
        const __m128i *src = (const __m128i *)r->v[k][e];
        __m128i *d = (__m128i *)(dst[k] + base);
        _mm_stream_si128(d, _mm_load_si128(src));
        _mm_stream_si128(d + 1, _mm_load_si128(src + 1));
        _mm_stream_si128(d + 2, _mm_load_si128(src + 2));
        _mm_stream_si128(d + 3, _mm_load_si128(src + 3));
    }
    r->mask[e] = 0;
    r->line[e] = -1;
}

static inline uint32_t f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* One block's stable scatter through the ring: the plain loop's slots and values. */
static void scatter_block_staged(shoal_sim *s, uint32_t *h, uint32_t lo, int64_t begin, int64_t end,
                                 sort_ring *r)
{
    const float *px = s->cur[0], *py = s->cur[1], *pz = s->cur[2];
    const float *vx = s->cur[3], *vy = s->cur[4], *vz = s->cur[5];
    const uint32_t *cell_of = s->cell_of, *row_cur = s->row_cur;
    uint32_t *const dst[SORT_STREAMS] = {s->row_nxt,
                                         (uint32_t *)s->nxt[0],
                                         (uint32_t *)s->nxt[1],
                                         (uint32_t *)s->nxt[2],
                                         (uint32_t *)s->nxt[3],
                                         (uint32_t *)s->nxt[4],
                                         (uint32_t *)s->nxt[5]};
    for (int e = 0; e < SORT_RING_LINES; e++) {
        r->line[e] = -1;
        r->mask[e] = 0;
    }
    const int part = s->part_mode;
    for (int64_t i = begin; i < end; i++) {
        if (part && cell_of[i] == SIM_CELL_NONE)
            continue; /* a slot a part drops */
        uint32_t slot = h[cell_of[i] - lo]++;
        int64_t line = slot >> 4;
        int e = (int)(line & (SORT_RING_LINES - 1)), b = (int)(slot & 15);
        if (r->line[e] != line) {
            if (r->mask[e])
                ring_put_part(r, e, dst);
            r->line[e] = line;
        }
        r->v[0][e][b] = row_cur[i];
        r->v[1][e][b] = f2u(px[i]);
        r->v[2][e][b] = f2u(py[i]);
        r->v[3][e][b] = f2u(pz[i]);
        r->v[4][e][b] = f2u(vx[i]);
        r->v[5][e][b] = f2u(vy[i]);
        r->v[6][e][b] = f2u(vz[i]);
        if ((r->mask[e] |= 1u << b) == 0xffffu)
            ring_put_line(r, e, dst);
    }
    for (int e = 0; e < SORT_RING_LINES; e++)
        if (r->mask[e])
            ring_put_part(r, e, dst);
}
#endif

/* Insertion sort of one cell's entries by input row, moving every array. Cells are short
 * and nearly sorted (boids mostly stay in their cell, and the previous order inside a
 * cell was by row), so most cells need nothing and the rest a few moves. */
static void sort_cell_by_row(shoal_sim *s, uint32_t begin, uint32_t end)
{
    uint32_t *row = s->row_nxt;
    for (uint32_t i = begin + 1; i < end; i++) {
        uint32_t r = row[i];
        if (row[i - 1] <= r)
            continue;
        float v[6];
        for (int k = 0; k < 6; k++)
            v[k] = s->nxt[k][i];
        uint32_t j = i;
        while (j > begin && row[j - 1] > r) {
            row[j] = row[j - 1];
            for (int k = 0; k < 6; k++)
                s->nxt[k][j] = s->nxt[k][j - 1];
            j--;
        }
        row[j] = r;
        for (int k = 0; k < 6; k++)
            s->nxt[k][j] = v[k];
    }
}

/* All threads of the region: stable scatter of each block straight into the nxt arrays
 * (blocks taken dynamically; a block's slots are its own, so the result does not depend on
 * who takes it), then row order inside each cell. The velocities move with the positions:
 * the forces read them right after, from cache (leaving them where they were and reading
 * them through the sort's permutation moved 24 bytes a boid less but cost the forces more:
 * docs/PERFORMANCE.md "Issue 28"). */
__attribute__((noinline)) void grid_scatter(shoal_sim *s, int thread_index, int thread_count)
{
    const int64_t cells = s->g.cell_count;
    int64_t b0, b1;
    const float *px = s->cur[0], *py = s->cur[1], *pz = s->cur[2];
    const float *vx = s->cur[3], *vy = s->cur[4], *vz = s->cur[5];
    float *qx = s->nxt[0], *qy = s->nxt[1], *qz = s->nxt[2];
    float *wx = s->nxt[3], *wy = s->nxt[4], *wz = s->nxt[5];
    const uint32_t *cell_of = s->cell_of, *row_cur = s->row_cur;
    uint32_t *row_nxt = s->row_nxt;
    const int part = s->part_mode;
#if GRID_STAGED
    sort_ring ring; /* 29 KiB of this worker's stack: stays in its L1/L2 */
    int staged_any = 0;
#endif
    while (parallel_dynamic_next(&s->ctr_scatter, s->units.count, 1, &b0, &b1)) {
        int u = (int)b0;
        int64_t begin = s->units.begin[u], end = s->units.end[u];
        if (begin >= end)
            continue;
        uint32_t *h = s->hist + s->units.off[u];
        const uint32_t lo = (uint32_t)s->units.lo[u];
#if GRID_STAGED
        /* nearly sorted: the unit's slots span little more than its boids (the cells of
         * its range hold them and a few movers); else (a fresh state in row order) the
         * plain loop, as the ring would only spill */
        int64_t span = (int64_t)s->cell_start[s->units.hi[u] + 1] - s->cell_start[s->units.lo[u]];
        int staged =
            s->sort_staged == 2 || (s->sort_staged == 1 && s->count >= SIM_SORT_STAGED_MIN);
        if (staged && span <= 2 * (end - begin) + 64) {
            scatter_block_staged(s, h, lo, begin, end, &ring);
            staged_any = 1;
            continue;
        }
#endif
        for (int64_t i = begin; i < end; i++) {
            if (part && cell_of[i] == SIM_CELL_NONE)
                continue; /* a slot a part drops */
            uint32_t slot = h[cell_of[i] - lo]++;
            row_nxt[slot] = row_cur[i];
            qx[slot] = px[i];
            qy[slot] = py[i];
            qz[slot] = pz[i];
            wx[slot] = vx[i];
            wy[slot] = vy[i];
            wz[slot] = vz[i];
        }
    }
#if GRID_STAGED
    if (staged_any)
        _mm_sfence(); /* the non-temporal lines before the barrier publishes them */
#endif
    parallel_barrier();
    int64_t b, e;
    parallel_split(cells, thread_index, thread_count, &b, &e);
    for (int64_t c = b; c < e; c++) {
        uint32_t lo = s->cell_start[c], hi = s->cell_start[c + 1];
        for (uint32_t i = lo + 1; i < hi; i++) {
            if (row_nxt[i - 1] > row_nxt[i]) {
                sort_cell_by_row(s, lo, hi);
                break;
            }
        }
    }
}

int grid_axis_cells(const grid *g, int c, int32_t k, int32_t out[3])
{
    const int32_t n = g->dims[c];
    int m = 0;
    if (!g->wrap[c]) {
        for (int32_t j = k - 1; j <= k + 1; j++)
            if (j >= 0 && j < n)
                out[m++] = j;
        return m;
    }
    if (n <= 3) { /* every cell of the axis, each once */
        for (int32_t j = 0; j < n; j++)
            out[m++] = j;
        return m;
    }
    int32_t a = k - 1 < 0 ? n - 1 : k - 1, b = k + 1 >= n ? 0 : k + 1;
    /* ascending: the wrapped one moves to its place */
    if (k == 0) {
        out[0] = 0, out[1] = 1, out[2] = n - 1;
    } else if (k == n - 1) {
        out[0] = 0, out[1] = n - 2, out[2] = n - 1;
    } else {
        out[0] = a, out[1] = k, out[2] = b;
    }
    return 3;
}

int grid_runs(const shoal_sim *s, int32_t x_lo, int32_t x_hi, int32_t y, int32_t z,
              uint32_t run_begin[GRID_RUNS_MAX], uint32_t run_end[GRID_RUNS_MAX])
{
    const grid *g = &s->g;
    const int32_t nx = g->dims[0];
    /* the x ranges, ascending: [x_lo, x_hi] clipped, or on a periodic axis wrapped (the
     * whole row when it covers it, else up to two ranges) */
    int32_t xa[2], xb[2];
    int xr = 1;
    if (!g->wrap[0]) {
        xa[0] = x_lo < 0 ? 0 : x_lo;
        xb[0] = x_hi > nx - 1 ? nx - 1 : x_hi;
    } else if (x_hi - x_lo + 1 >= nx) {
        xa[0] = 0;
        xb[0] = nx - 1;
    } else if (x_lo < 0) {
        xa[0] = 0, xb[0] = x_hi;
        xa[1] = x_lo + nx, xb[1] = nx - 1;
        xr = 2;
    } else if (x_hi >= nx) {
        xa[0] = 0, xb[0] = x_hi - nx;
        xa[1] = x_lo, xb[1] = nx - 1;
        xr = 2;
    } else {
        xa[0] = x_lo;
        xb[0] = x_hi;
    }
    int32_t zs[3], ys[3];
    int nz = grid_axis_cells(g, 2, z, zs), ny = grid_axis_cells(g, 1, y, ys);
    int n = 0;
    for (int iz = 0; iz < nz; iz++) {
        for (int iy = 0; iy < ny; iy++) {
            int64_t row = (int64_t)nx * (ys[iy] + (int64_t)g->dims[1] * zs[iz]);
            for (int r = 0; r < xr; r++) {
                uint32_t rb = s->cell_start[row + xa[r]], re = s->cell_start[row + xb[r] + 1];
                if (rb < re) {
                    run_begin[n] = rb;
                    run_end[n] = re;
                    n++;
                }
            }
        }
    }
    return n;
}

/* The force kernels' own count of the last step (sim.c sums the threads' counters). */
void shoal_sim_candidate_pairs(const shoal_sim *s, double *lane_pairs, double *useful_pairs)
{
    if (!s) {
        if (lane_pairs)
            *lane_pairs = 0;
        if (useful_pairs)
            *useful_pairs = 0;
        return;
    }
    *lane_pairs = (double)s->work.lane_pairs;
    *useful_pairs = (double)s->work.useful;
}

size_t sim_grid_neighbors(shoal_sim *s, uint32_t row, float radius, uint32_t *out, size_t max)
{
    size_t slot = SIZE_MAX;
    for (size_t i = 0; i < s->count; i++)
        if (s->row_cur[i] == row)
            slot = i;
    if (slot == SIZE_MAX)
        return 0;
    const grid *g = &s->g;
    uint32_t c = grid_cell_of_slot(s, (uint32_t)slot);
    int32_t cx = (int32_t)(c % (uint32_t)g->dims[0]);
    int32_t cy = (int32_t)((c / (uint32_t)g->dims[0]) % (uint32_t)g->dims[1]);
    int32_t cz = (int32_t)(c / ((uint32_t)g->dims[0] * (uint32_t)g->dims[1]));
    uint32_t rb[GRID_RUNS_MAX], re[GRID_RUNS_MAX];
    int n = grid_runs(s, cx - 1, cx + 1, cy, cz, rb, re);
    world_axes wa;
    world_axes_make(&s->desc.world, &wa);
    float r2 = radius * radius;
    size_t k = 0;
    for (int r = 0; r < n; r++) {
        for (uint32_t j = rb[r]; j < re[r]; j++) {
            float d[3];
            for (int a = 0; a < 3; a++) {
                d[a] = s->cur[a][slot] - s->cur[a][j];
                if (wa.periodic[a])
                    d[a] = world_min_image_f(d[a], wa.size[a], wa.half[a]);
            }
            float d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
            if (d2 > 0.0f && d2 <= r2 && k < max)
                out[k++] = s->row_cur[j];
        }
    }
    return k;
}
