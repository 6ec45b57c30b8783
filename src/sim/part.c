/* SPDX-License-Identifier: MIT */
/* A part of a school (part.h): a sim whose grid is a sub-box of the whole school's grid,
 * whose boid arrays grow with what it is given, and whose forces run on its own cells
 * only. The canonical order needs nothing more: a boid's cell is the whole grid's clamped
 * cell, cells are numbered in the same (z, y, x) order inside the sub-box, and the stable
 * sort puts the input rows in order inside each cell, whatever order the boids arrived in.
 * The boids stay here between steps; a slot whose key is SIM_CELL_NONE (a boid that left,
 * the last step's halo) is dropped by the next sort (grid.c, part_mode). */
#include "sim/part.h"

#include "core/alloc.h"
#include "core/parallel.h"
#include "sim/sim_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

shoal_status part_create(const shoal_sim_desc *d, shoal_sim **out, shoal_error *err)
{
    if (!shoal_world_is_default(&d->world))
        return shoal_error_set(err, SHOAL_ERR_UNSUPPORTED,
                               "MPI: periodic and 2D worlds are not split over ranks yet (run them "
                               "in one process: every thread count and ISA gives the same bytes)");
    shoal_sim_desc one = *d;
    one.boid_count = 1;
    shoal_sim *s;
    shoal_status st = shoal_sim_create(&one, &s, err);
    if (st)
        return st;
    s->desc.boid_count = d->boid_count;
    s->count = 0;
    s->part_capacity = 1;
    s->part_cells = (size_t)s->g.cell_count;
    s->part_hist = (size_t)s->g.cell_count * (size_t)s->hist_width;
    s->part_mode = 1;
    grid_setup(&s->g, d->model, &d->params, &d->world, d->neighbors, d->boid_count);
    *out = s;
    return SHOAL_OK;
}

void part_grid_dims(const shoal_sim *s, int32_t dims[3])
{
    for (int c = 0; c < 3; c++)
        dims[c] = s->g.gdims[c];
}

static int part_threads(const shoal_sim *s)
{
    int t = parallel_resolve_threads(s->desc.thread_count);
    return t > SIM_MAX_THREADS ? SIM_MAX_THREADS : t;
}

int part_thread_count(const shoal_sim *s) { return part_threads(s); }

void part_cell_of(const shoal_sim *s, const float p[3], int32_t cell[3])
{
    const grid *g = &s->g;
    for (int c = 0; c < 3; c++)
        cell[c] = grid_coord(p[c], g->origin[c], g->inv_cell, g->gdims[c]);
}

static shoal_status ensure_tables(shoal_sim *s, shoal_error *err)
{
    size_t cells = (size_t)s->g.cell_count;
    size_t hist = cells * (size_t)s->hist_width;
    if (cells + 1 > s->part_cells + 1 || s->cell_start == NULL) {
        uint32_t *cs = alloc_array(cells + 1, sizeof(uint32_t), "grid cell table", err);
        if (!cs)
            return err ? err->status : SHOAL_ERR_NOMEM;
        alloc_free(s->cell_start);
        s->cell_start = cs;
        s->part_cells = cells;
    }
    if (hist > s->part_hist) {
        uint32_t *h = alloc_array(hist, sizeof(uint32_t), "sort histograms", err);
        if (!h)
            return err ? err->status : SHOAL_ERR_NOMEM;
        alloc_free(s->hist);
        s->hist = h;
        s->part_hist = hist;
    }
    return SHOAL_OK;
}

shoal_status part_set_box(shoal_sim *s, const int32_t lo[3], const int32_t hi[3], shoal_error *err)
{
    grid *g = &s->g;
    for (int c = 0; c < 3; c++) {
        int32_t a = lo[c] > 0 ? lo[c] - 1 : 0;
        int32_t b = hi[c] < g->gdims[c] ? hi[c] + 1 : g->gdims[c];
        g->off[c] = a;
        g->dims[c] = b - a;
        g->act_lo[c] = lo[c] - a;
        g->act_hi[c] = hi[c] - a;
    }
    g->cell_count = (int64_t)g->dims[0] * g->dims[1] * g->dims[2];
    g->row_count = (int64_t)g->dims[1] * g->dims[2];
    s->cells_valid = 0;
    s->count = 0;
    size_t rows = (size_t)(hi[1] - lo[1]) * (size_t)(hi[2] - lo[2]);
    if (rows > s->part_row_cap) { /* the output offset of each row of owned cells */
        size_t *at = alloc_array(rows, sizeof *at, "part rows", err);
        if (!at)
            return err ? err->status : SHOAL_ERR_NOMEM;
        alloc_free(s->part_row_at);
        s->part_row_at = at;
        s->part_row_cap = rows;
    }
    return ensure_tables(s, err);
}

static void *grow(void *old, size_t used, size_t cap, size_t size, const char *what,
                  shoal_error *err)
{
    void *p = alloc_array(cap, size, what, err);
    if (p && old)
        memcpy(p, old, used * size);
    if (p)
        alloc_free(old);
    return p;
}

/* Room for n boids in every array and a guard slot after them (sim.c step_body), the first
 * `keep` slots of the current state (state, rows and sort keys) kept. */
static shoal_status reserve(shoal_sim *s, size_t n, size_t keep, shoal_error *err)
{
    if (n < s->part_capacity)
        return SHOAL_OK;
    size_t cap = n + n / 2 + 64;
    for (int k = 0; k < 6; k++) {
        float *c = grow(s->cur[k], keep, cap, sizeof(float), "boid state", err);
        if (!c)
            return err ? err->status : SHOAL_ERR_NOMEM;
        s->cur[k] = c;
        float *x = grow(s->nxt[k], 0, cap, sizeof(float), "boid state", err);
        if (!x)
            return err ? err->status : SHOAL_ERR_NOMEM;
        s->nxt[k] = x;
    }
    uint32_t **u[3] = {&s->row_cur, &s->cell_of, &s->row_nxt};
    for (int k = 0; k < 3; k++) {
        uint32_t *x = grow(*u[k], k < 2 ? keep : 0, cap, sizeof(uint32_t), "boid rows", err);
        if (!x)
            return err ? err->status : SHOAL_ERR_NOMEM;
        *u[k] = x;
    }
    s->part_capacity = cap;
    return SHOAL_OK;
}

/* The sort's histograms for the slots held now, as shoal_sim_create sizes them (each step
 * makes its blocks from the slots and the threads: they never change a result), and tables
 * to match. */
static shoal_status reblock(shoal_sim *s, shoal_error *err)
{
    s->hist_width = sim_hist_width(s->count);
    return ensure_tables(s, err);
}

typedef struct load_ctx {
    shoal_sim *s;
    const part_boid *b;
    size_t at;
    int bad[SIM_MAX_THREADS]; /* per thread: a boid outside the sub-box (append) */
    uint32_t bad_row[SIM_MAX_THREADS];
} load_ctx;

/* The sub-box cell of whole-grid cell c, or SIM_CELL_NONE outside the sub-box. */
static inline uint32_t local_cell(const grid *g, const int32_t c[3])
{
    int32_t l[3];
    for (int a = 0; a < 3; a++) {
        l[a] = c[a] - g->off[a];
        if (l[a] < 0 || l[a] >= g->dims[a])
            return SIM_CELL_NONE;
    }
    return (uint32_t)(l[0] + g->dims[0] * (l[1] + g->dims[1] * l[2]));
}

static inline void whole_cell(const grid *g, float x, float y, float z, int32_t c[3])
{
    c[0] = grid_coord(x, g->origin[0], g->inv_cell, g->gdims[0]);
    c[1] = grid_coord(y, g->origin[1], g->inv_cell, g->gdims[1]);
    c[2] = grid_coord(z, g->origin[2], g->inv_cell, g->gdims[2]);
}

/* Worker threads: boids [b0, b1) of c->b into slots at + i (and, appending, their keys). */
static void load_range(void *p, int64_t b0, int64_t b1, int t)
{
    load_ctx *c = p;
    shoal_sim *s = c->s;
    for (int64_t i = b0; i < b1; i++) {
        size_t j = c->at + (size_t)i;
        const part_boid *b = &c->b[i];
        for (int k = 0; k < 6; k++)
            s->cur[k][j] = b->s[k];
        s->row_cur[j] = b->row;
        if (s->cells_valid) { /* appending: the key of the next sort */
            int32_t cc[3];
            whole_cell(&s->g, b->s[0], b->s[1], b->s[2], cc);
            uint32_t l = local_cell(&s->g, cc);
            s->cell_of[j] = l;
            if (l == SIM_CELL_NONE && (!c->bad[t] || b->row < c->bad_row[t])) {
                c->bad[t] = 1;
                c->bad_row[t] = b->row;
            }
        }
    }
}

shoal_status part_load(shoal_sim *s, const part_boid *b, size_t n, shoal_error *err)
{
    shoal_status st = reserve(s, n, 0, err);
    if (st)
        return st;
    s->count = 0;
    load_ctx c = {.s = s, .b = b, .at = 0};
    s->cells_valid = 0; /* the sort computes the keys */
    parallel_for_n((int64_t)n, 4096, load_range, &c, part_threads(s));
    s->count = n;
    if ((st = reblock(s, err)))
        return st;
    sim_sort_only(s);
    return SHOAL_OK;
}

shoal_status part_append(shoal_sim *s, const part_boid *b, size_t n, shoal_error *err)
{
    if (!s->cells_valid) /* the keys of the slots held come from part_classify */
        return shoal_error_set(err, SHOAL_ERR_INPUT, "internal: boids appended before a classify");
    size_t at = s->count;
    shoal_status st = reserve(s, at + n, at, err);
    if (st)
        return st;
    int threads = part_threads(s);
    load_ctx c = {.s = s, .b = b, .at = at};
    parallel_for_n((int64_t)n, 4096, load_range, &c, threads);
    for (int t = 0; t < threads; t++)
        if (c.bad[t])
            return shoal_error_set(err, SHOAL_ERR_INPUT,
                                   "internal: boid %u arrived outside this part's cells",
                                   c.bad_row[t]);
    s->count = at + n;
    return reblock(s, err);
}

uint32_t part_step(shoal_sim *s)
{
    uint32_t bad = sim_forces_pass(s);
    /* the forces wrote the cell of every new position (sim.c cells_valid): the next step's
     * keys when every cell of the sub-box is owned (one part); else part_classify */
    const grid *g = &s->g;
    s->cells_valid = bad == UINT32_MAX;
    for (int c = 0; c < 3; c++)
        s->cells_valid &= g->act_lo[c] == 0 && g->act_hi[c] == g->dims[c];
    return bad;
}

void part_commit(shoal_sim *s)
{
    for (int k = 0; k < 6; k++) {
        float *t = s->cur[k];
        s->cur[k] = s->nxt[k];
        s->nxt[k] = t;
    }
}

typedef struct classify_ctx {
    shoal_sim *s;
    const float *p[3];
    part_edge_fn edge;
    void *ctx;
    int32_t in_lo[3], in_hi[3]; /* whole-grid cells that no other part needs */
    float top[3];               /* the last cell of each axis */
} classify_ctx;

#define CLASSIFY_BATCH 64

/* grid_coord without a branch: NaN and below the grid to 0, beyond it to the last cell
 * (top = n - 1, exact as a float), else the truncation: the same cell for every v. */
static inline int32_t coord_nb(float v, float origin, float inv, float top)
{
    float f = (v - origin) * inv;
    f = f >= 0.0f ? f : 0.0f;
    f = f < top ? f : top;
    return (int32_t)f;
}

/* The grid in locals for the batches (their stores cannot alias it). */
typedef struct classify_grid {
    float o[3], inv, top[3];
    int32_t off[3], lo[3], hi[3];
    uint32_t dim[3];
} classify_grid;

/* n boids at px, py, pz: the sort key of each into k, its whole-grid cell into cx, cy, cz
 * and whether others need it into edge. Branch-free, so that the compiler vectorises it
 * (called with n = CLASSIFY_BATCH, a constant, for every full batch). */
static inline void classify_batch(const classify_grid *k0, const float *px, const float *py,
                                  const float *pz, uint32_t *k, int32_t *cx, int32_t *cy,
                                  int32_t *cz, unsigned char *edge, uint32_t n)
{
    for (uint32_t j = 0; j < n; j++) {
        int32_t x = coord_nb(px[j], k0->o[0], k0->inv, k0->top[0]);
        int32_t y = coord_nb(py[j], k0->o[1], k0->inv, k0->top[1]);
        int32_t z = coord_nb(pz[j], k0->o[2], k0->inv, k0->top[2]);
        int32_t lx = x - k0->off[0], ly = y - k0->off[1], lz = z - k0->off[2];
        int in =
            ((uint32_t)lx < k0->dim[0]) & ((uint32_t)ly < k0->dim[1]) & ((uint32_t)lz < k0->dim[2]);
        k[j] = in ? (uint32_t)lx + k0->dim[0] * ((uint32_t)ly + k0->dim[1] * (uint32_t)lz)
                  : SIM_CELL_NONE;
        cx[j] = x;
        cy[j] = y;
        cz[j] = z;
        edge[j] = (unsigned char)((x < k0->lo[0]) | (x >= k0->hi[0]) | (y < k0->lo[1]) |
                                  (y >= k0->hi[1]) | (z < k0->lo[2]) | (z >= k0->hi[2]));
    }
}

/* Worker threads: rows [r0, r1) of the sub-box (r = y + ny z): the sort key of each slot,
 * and edge() for the owned boids others may need. Writes cell_of of those rows' slots. */
static void classify_rows(void *p, int64_t r0, int64_t r1, int t)
{
    classify_ctx *c = p;
    shoal_sim *s = c->s;
    const grid *g = &s->g;
    const int64_t nx = g->dims[0], ny = g->dims[1];
    const uint32_t *cs = s->cell_start;
    uint32_t *key = s->cell_of;
    classify_grid k0;
    for (int a = 0; a < 3; a++) {
        k0.o[a] = g->origin[a];
        k0.top[a] = c->top[a];
        k0.off[a] = g->off[a];
        k0.lo[a] = c->in_lo[a];
        k0.hi[a] = c->in_hi[a];
        k0.dim[a] = (uint32_t)g->dims[a];
    }
    k0.inv = g->inv_cell;
    for (int64_t r = r0; r < r1; r++) {
        int32_t y = (int32_t)(r % ny), z = (int32_t)(r / ny);
        uint32_t rb = cs[r * nx], re = cs[r * nx + nx];
        if (y < g->act_lo[1] || y >= g->act_hi[1] || z < g->act_lo[2] || z >= g->act_hi[2]) {
            for (uint32_t i = rb; i < re; i++) /* the last step's halo */
                key[i] = SIM_CELL_NONE;
            continue;
        }
        uint32_t ob = cs[r * nx + g->act_lo[0]], oe = cs[r * nx + g->act_hi[0]];
        for (uint32_t i = rb; i < ob; i++)
            key[i] = SIM_CELL_NONE;
        for (uint32_t i = oe; i < re; i++)
            key[i] = SIM_CELL_NONE;
        /* in batches: the keys without a branch (vectorised), then the few edge boids */
        for (uint32_t i0 = ob; i0 < oe; i0 += CLASSIFY_BATCH) {
            uint32_t n = oe - i0 < CLASSIFY_BATCH ? oe - i0 : CLASSIFY_BATCH;
            unsigned char edge[CLASSIFY_BATCH];
            int32_t cx[CLASSIFY_BATCH], cy[CLASSIFY_BATCH], cz[CLASSIFY_BATCH];
            const float *px = c->p[0] + i0, *py = c->p[1] + i0, *pz = c->p[2] + i0;
            if (n == CLASSIFY_BATCH)
                classify_batch(&k0, px, py, pz, key + i0, cx, cy, cz, edge, CLASSIFY_BATCH);
            else
                classify_batch(&k0, px, py, pz, key + i0, cx, cy, cz, edge, n);
            for (uint32_t j = 0; j < n; j++)
                if (edge[j]) {
                    int32_t cc[3] = {cx[j], cy[j], cz[j]};
                    c->edge(c->ctx, t, i0 + j, cc);
                }
        }
    }
}

void part_classify(shoal_sim *s, int next, part_edge_fn edge, void *ctx)
{
    const grid *g = &s->g;
    classify_ctx c = {.s = s, .edge = edge, .ctx = ctx};
    for (int k = 0; k < 3; k++)
        c.p[k] = next ? s->nxt[k] : s->cur[k];
    /* a face of the owned box needs a layer of it elsewhere unless it is the grid's edge
     * (a periodic world would count that face too) */
    for (int a = 0; a < 3; a++) {
        int32_t lo = g->off[a] + g->act_lo[a], hi = g->off[a] + g->act_hi[a];
        c.in_lo[a] = lo + (lo > 0);
        c.in_hi[a] = hi - (hi < g->gdims[a]);
        c.top[a] = (float)(g->gdims[a] - 1);
    }
    int threads = part_threads(s);
    int64_t rows = g->row_count, chunk = rows / ((int64_t)threads * 8);
    parallel_for_n(rows, chunk < 1 ? 1 : chunk, classify_rows, &c, threads);
    s->cells_valid = 1;
}

void part_gather(const shoal_sim *s, const uint32_t *slots, size_t n, part_boid *out)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t j = slots[i];
        for (int k = 0; k < 6; k++)
            out[i].s[k] = s->cur[k][j];
        out[i].row = s->row_cur[j];
    }
}

/* ---- the owned boids of the current state ------------------------------------------------ */

size_t part_owned_rows(const shoal_sim *s)
{
    const grid *g = &s->g;
    return s->count == 0
               ? 0
               : (size_t)(g->act_hi[1] - g->act_lo[1]) * (size_t)(g->act_hi[2] - g->act_lo[2]);
}

void part_owned_range(const shoal_sim *s, size_t r, uint32_t *begin, uint32_t *end)
{
    const grid *g = &s->g;
    const int64_t nx = g->dims[0], ny = g->dims[1], ry = g->act_hi[1] - g->act_lo[1];
    int64_t y = g->act_lo[1] + (int64_t)r % ry, z = g->act_lo[2] + (int64_t)r / ry;
    int64_t row = (y + ny * z) * nx;
    *begin = s->cell_start[row + g->act_lo[0]];
    *end = s->cell_start[row + g->act_hi[0]];
}

size_t part_owned_count(const shoal_sim *s)
{
    size_t n = 0, rows = part_owned_rows(s);
    for (size_t r = 0; r < rows; r++) {
        uint32_t b, e;
        part_owned_range(s, r, &b, &e);
        n += e - b;
    }
    return n;
}

typedef struct owned_ctx {
    const shoal_sim *s;
    part_boid *aos;
    float *const *soa;
    uint32_t *row;
} owned_ctx;

/* Worker threads: the owned boids of rows [r0, r1) into their places. */
static void owned_rows(void *p, int64_t r0, int64_t r1, int t)
{
    (void)t;
    owned_ctx *c = p;
    const shoal_sim *s = c->s;
    for (int64_t r = r0; r < r1; r++) {
        uint32_t b, e;
        part_owned_range(s, (size_t)r, &b, &e);
        size_t k = s->part_row_at[r];
        for (uint32_t i = b; i < e; i++, k++) {
            if (c->aos) {
                for (int q = 0; q < 6; q++)
                    c->aos[k].s[q] = s->cur[q][i];
                c->aos[k].row = s->row_cur[i];
            } else {
                for (int q = 0; q < 6; q++)
                    c->soa[q][k] = s->cur[q][i];
                c->row[k] = s->row_cur[i];
            }
        }
    }
}

static void owned_copy(const shoal_sim *s, part_boid *aos, float *const *soa, uint32_t *row)
{
    size_t rows = part_owned_rows(s), k = 0;
    for (size_t r = 0; r < rows; r++) { /* (part_row_at: room for every row, part_set_box) */
        uint32_t b, e;
        part_owned_range(s, r, &b, &e);
        s->part_row_at[r] = k;
        k += e - b;
    }
    owned_ctx c = {.s = s, .aos = aos, .soa = soa, .row = row};
    parallel_for_n((int64_t)rows, 16, owned_rows, &c, part_threads(s));
}

void part_owned(const shoal_sim *s, part_boid *out) { owned_copy(s, out, NULL, NULL); }

void part_owned_soa(const shoal_sim *s, float *const soa[6], uint32_t *row)
{
    owned_copy(s, NULL, soa, row);
}

void part_finish_step(shoal_sim *s, const float tgt[][3])
{
    if (s->predator_count > 0)
        predators_advance(s, tgt);
    s->steps_done++;
}

void part_predator_targets(const shoal_sim *s, float tgt[][3]) { predators_targets(s, tgt); }

void part_init_rows(const shoal_sim_desc *d, size_t first, size_t count, float *rows)
{
    sim_init_rows_range(d->model, &d->params, &d->world, d->seed, first, count, rows);
}
