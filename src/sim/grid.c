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

/* Worker threads: cell of each boid of the blocks they take (unless the last step's
 * forces wrote them: cells_valid), and each block's histogram over the cell range it
 * touches. Writes cell_of, hist rows and block_lo/hi of its blocks only. */
__attribute__((noinline)) void grid_assign(shoal_sim *s, int thread_index)
{
    (void)thread_index;
    const grid *g = &s->g;
    const float *px = s->cur[0], *py = s->cur[1], *pz = s->cur[2];
    const int fresh = !s->cells_valid;
    int64_t b0, b1;
    while (parallel_dynamic_next(&s->ctr_blocks, s->block_count, 1, &b0, &b1)) {
        int64_t blk = b0;
        int64_t begin = blk * s->block_size;
        int64_t end = begin + s->block_size;
        if (end > (int64_t)s->count)
            end = (int64_t)s->count;
        if (begin >= end) {
            s->block_lo[blk] = 1;
            s->block_hi[blk] = 0;
            continue;
        }
        uint32_t lo = UINT32_MAX, hi = 0;
        if (fresh) {
            for (int64_t i = begin; i < end; i++) {
                uint32_t c = cell_index(g, px[i], py[i], pz[i]);
                s->cell_of[i] = c;
                lo = c < lo ? c : lo;
                hi = c > hi ? c : hi;
            }
        } else if (!s->part_mode) {
            for (int64_t i = begin; i < end; i++) {
                uint32_t c = s->cell_of[i];
                lo = c < lo ? c : lo;
                hi = c > hi ? c : hi;
            }
        } else { /* a part: slots marked SIM_CELL_NONE are dropped (part.c) */
            for (int64_t i = begin; i < end; i++) {
                uint32_t c = s->cell_of[i];
                if (c == SIM_CELL_NONE)
                    continue;
                lo = c < lo ? c : lo;
                hi = c > hi ? c : hi;
            }
            if (lo > hi) { /* every slot of the block dropped */
                s->block_lo[blk] = 1;
                s->block_hi[blk] = 0;
                continue;
            }
        }
        s->block_lo[blk] = lo;
        s->block_hi[blk] = hi;
        uint32_t *h = s->hist + blk * s->g.cell_count;
        memset(h + lo, 0, (size_t)(hi - lo + 1) * sizeof *h);
        if (!s->part_mode) {
            for (int64_t i = begin; i < end; i++)
                h[s->cell_of[i]]++;
        } else {
            for (int64_t i = begin; i < end; i++) {
                uint32_t c = s->cell_of[i];
                if (c != SIM_CELL_NONE)
                    h[c]++;
            }
        }
    }
}

/* All threads of the region: per-cell totals over the blocks, their exclusive scan into
 * cell_start, then each (cell, block) counter becomes that block's first slot in the cell
 * (cell-major, block-minor order: a stable sort). */
__attribute__((noinline)) void grid_scan(shoal_sim *s, int thread_index, int thread_count)
{
    const int64_t cells = s->g.cell_count;
    int64_t b, e;
    parallel_split(cells, thread_index, thread_count, &b, &e);
    for (int64_t c = b; c < e; c++)
        s->cell_start[c] = 0;
    for (int blk = 0; blk < s->block_count; blk++) {
        int64_t lo = s->block_lo[blk] > b ? s->block_lo[blk] : b;
        int64_t hi = s->block_hi[blk] + 1 < e ? s->block_hi[blk] + 1 : e;
        const uint32_t *h = s->hist + blk * cells;
        for (int64_t c = lo; c < hi; c++)
            s->cell_start[c] += h[c];
    }
    int64_t total =
        scan_exclusive_u32(s->cell_start, cells, s->scan_partial, thread_index, thread_count);
    if (thread_index == 0)
        s->cell_start[cells] = (uint32_t)total;
    /* Per-block offsets: a cell's first slot, then each block's count in block order.
     * Block by block over the part of its cell range in this thread's cells (in steady
     * state the state arrives nearly sorted, so the ranges barely overlap), with
     * cell_start[c] as the running slot of cell c: afterwards it holds the next cell's
     * first slot, so the thread's cells shift back by one (the first saved before). */
    if (e <= b)
        return;
    uint32_t first = s->cell_start[b];
    for (int blk = 0; blk < s->block_count; blk++) {
        int64_t lo = s->block_lo[blk] > b ? s->block_lo[blk] : b;
        int64_t hi = s->block_hi[blk] + 1 < e ? s->block_hi[blk] + 1 : e;
        uint32_t *h = s->hist + blk * cells;
        for (int64_t c = lo; c < hi; c++) {
            uint32_t v = h[c];
            h[c] = s->cell_start[c];
            s->cell_start[c] += v;
        }
    }
    memmove(s->cell_start + b + 1, s->cell_start + b, (size_t)(e - b - 1) * sizeof(uint32_t));
    s->cell_start[b] = first;
}

/* The scatter's stores. Built with -DGRID_NT they are non-temporal (no read for ownership
 * of the destination lines, 28 of the sort's 96 bytes a boid): an experiment for machines
 * where the sort is bound by memory bandwidth (tools/device.sh PARTS=kernel times both;
 * docs/PERFORMANCE.md "Issue 28"). The bits are the same either way. */
#if defined(__SSE2__) && defined(GRID_NT)
#include <immintrin.h>
#define GRID_STORE(p, v) _mm_stream_si32((int *)(p), (int)(v))
static inline void grid_storef(float *p, float v)
{
    int i;
    memcpy(&i, &v, sizeof i);
    _mm_stream_si32((int *)p, i);
}
#define GRID_STOREF(p, v) grid_storef(p, v)
#define GRID_FENCE() _mm_sfence()
#else
#define GRID_STORE(p, v) (*(p) = (v))
#define GRID_STOREF(p, v) (*(p) = (v))
#define GRID_FENCE() ((void)0)
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
    while (parallel_dynamic_next(&s->ctr_scatter, s->block_count, 1, &b0, &b1)) {
        int64_t blk = b0;
        int64_t begin = blk * s->block_size;
        int64_t end = begin + s->block_size;
        if (end > (int64_t)s->count)
            end = (int64_t)s->count;
        uint32_t *h = s->hist + blk * cells;
        for (int64_t i = begin; i < end; i++) {
            if (part && cell_of[i] == SIM_CELL_NONE)
                continue; /* a slot a part drops */
            uint32_t slot = h[cell_of[i]]++;
            GRID_STORE(row_nxt + slot, row_cur[i]);
            GRID_STOREF(qx + slot, px[i]);
            GRID_STOREF(qy + slot, py[i]);
            GRID_STOREF(qz + slot, pz[i]);
            GRID_STOREF(wx + slot, vx[i]);
            GRID_STOREF(wy + slot, vy[i]);
            GRID_STOREF(wz + slot, vz[i]);
        }
    }
    GRID_FENCE();
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
