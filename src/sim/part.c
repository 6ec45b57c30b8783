/* SPDX-License-Identifier: MIT */
/* A part of a school (part.h): a sim whose grid is a sub-box of the whole school's grid,
 * whose boid arrays grow with what it is given, and whose forces run on its own cells
 * only. The canonical order needs nothing more: a boid's cell is the whole grid's clamped
 * cell, cells are numbered in the same (z, y, x) order inside the sub-box, and the stable
 * sort puts the input rows in order inside each cell. */
#include "sim/part.h"

#include "core/alloc.h"
#include "core/parallel.h"
#include "sim/sim_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

shoal_status part_create(const shoal_sim_desc *d, shoal_sim **out, shoal_error *err)
{
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
    grid_setup(&s->g, d->model, &d->params, d->neighbors, d->boid_count);
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

typedef struct load_ctx {
    shoal_sim *s;
    const part_boid *b;
    size_t at;
    part_boid *out;
} load_ctx;

static void load_range(void *p, int64_t b0, int64_t b1, int t)
{
    (void)t;
    load_ctx *c = p;
    for (int64_t i = b0; i < b1; i++) {
        size_t j = c->at + (size_t)i;
        for (int k = 0; k < 6; k++)
            c->s->cur[k][j] = c->b[i].s[k];
        c->s->row_cur[j] = c->b[i].row;
    }
}

shoal_status part_load(shoal_sim *s, const part_boid *b, size_t n, const part_boid *halo,
                       size_t halo_n, shoal_error *err)
{
    size_t total = n + halo_n;
    if (total > s->part_capacity) {
        size_t cap = total + total / 2 + 64;
        for (int k = 0; k < 6; k++) {
            float *c = grow(s->cur[k], 0, cap, sizeof(float), "boid state", err);
            if (!c)
                return err ? err->status : SHOAL_ERR_NOMEM;
            s->cur[k] = c;
            float *x = grow(s->nxt[k], 0, cap, sizeof(float), "boid state", err);
            if (!x)
                return err ? err->status : SHOAL_ERR_NOMEM;
            s->nxt[k] = x;
        }
        uint32_t **u[3] = {&s->row_cur, &s->row_nxt, &s->cell_of};
        for (int k = 0; k < 3; k++) {
            uint32_t *x = grow(*u[k], 0, cap, sizeof(uint32_t), "boid rows", err);
            if (!x)
                return err ? err->status : SHOAL_ERR_NOMEM;
            *u[k] = x;
        }
        s->part_capacity = cap;
    }
    int threads = part_threads(s);
    load_ctx c = {.s = s, .b = b, .at = 0};
    parallel_for_n((int64_t)n, 4096, load_range, &c, threads);
    c.b = halo;
    c.at = n;
    parallel_for_n((int64_t)halo_n, 4096, load_range, &c, threads);
    s->count = total;
    s->cells_valid = 0;
    /* the sort's histograms, as shoal_sim_create sizes them (each step makes its blocks) */
    s->hist_width = sim_hist_width(total);
    return ensure_tables(s, err);
}

uint32_t part_step(shoal_sim *s) { return sim_forces_pass(s); }

typedef struct extract_ctx {
    const shoal_sim *s;
    part_boid *out;
    const size_t *row_at; /* output slot of each active (y, z) row's first boid */
    int32_t rows_y;       /* active rows along y */
} extract_ctx;

static void extract_rows(void *p, int64_t r0, int64_t r1, int t)
{
    (void)t;
    extract_ctx *c = p;
    const shoal_sim *s = c->s;
    const grid *g = &s->g;
    const uint32_t nx = (uint32_t)g->dims[0], ny = (uint32_t)g->dims[1];
    for (int64_t r = r0; r < r1; r++) {
        uint32_t y = (uint32_t)(g->act_lo[1] + (int32_t)(r % c->rows_y));
        uint32_t z = (uint32_t)(g->act_lo[2] + (int32_t)(r / c->rows_y));
        uint32_t row = y + ny * z;
        uint32_t b = s->cell_start[row * nx + (uint32_t)g->act_lo[0]];
        uint32_t e = s->cell_start[row * nx + (uint32_t)g->act_hi[0]];
        size_t k = c->row_at[r];
        for (uint32_t i = b; i < e; i++, k++) {
            for (int q = 0; q < 6; q++)
                c->out[k].s[q] = s->nxt[q][i];
            c->out[k].row = s->row_cur[i];
        }
    }
}

size_t part_extract(const shoal_sim *s, part_boid *out)
{
    /* after sim_forces_pass, cur holds the sorted start-of-step state, nxt the new one at
     * the same slots (written for the active cells only); rows of cells in (z, y) order */
    const grid *g = &s->g;
    const uint32_t nx = (uint32_t)g->dims[0], ny = (uint32_t)g->dims[1];
    int32_t ry = g->act_hi[1] - g->act_lo[1], rz = g->act_hi[2] - g->act_lo[2];
    int64_t rows = (int64_t)ry * rz;
    size_t *row_at = malloc(((size_t)rows + 1) * sizeof *row_at);
    size_t k = 0;
    for (int64_t r = 0; r < rows; r++) {
        uint32_t y = (uint32_t)(g->act_lo[1] + (int32_t)(r % ry));
        uint32_t z = (uint32_t)(g->act_lo[2] + (int32_t)(r / ry));
        uint32_t row = y + ny * z;
        uint32_t b = s->cell_start[row * nx + (uint32_t)g->act_lo[0]];
        uint32_t e = s->cell_start[row * nx + (uint32_t)g->act_hi[0]];
        if (row_at)
            row_at[r] = k;
        k += e - b;
    }
    if (!row_at)
        return SIZE_MAX;
    extract_ctx c = {.s = s, .out = out, .row_at = row_at, .rows_y = ry};
    parallel_for_n(rows, 1, extract_rows, &c, part_threads(s));
    free(row_at);
    return k;
}

typedef struct outside_ctx {
    const shoal_sim *s;
    part_boid *out;
    const size_t *row_at; /* output slot of each active (y, z) row's first boid */
    uint32_t *row_bad;    /* lowest non-finite input row of each active row */
    int32_t rows_y;
    int32_t skip_lo[3], skip_hi[3]; /* sub-box coordinates */
} outside_ctx;

/* The x segments of active row (y, z) outside the skip box: up to two [x0, x1) pairs. */
static int outside_segments(const outside_ctx *c, int32_t y, int32_t z, int32_t seg[4])
{
    const grid *g = &c->s->g;
    int inside = y >= c->skip_lo[1] && y < c->skip_hi[1] && z >= c->skip_lo[2] &&
                 z < c->skip_hi[2] && c->skip_lo[0] < c->skip_hi[0];
    if (!inside) {
        seg[0] = g->act_lo[0];
        seg[1] = g->act_hi[0];
        return 1;
    }
    int k = 0;
    int32_t a = c->skip_lo[0] > g->act_lo[0] ? c->skip_lo[0] : g->act_lo[0];
    int32_t b = c->skip_hi[0] < g->act_hi[0] ? c->skip_hi[0] : g->act_hi[0];
    if (a > g->act_lo[0]) {
        seg[2 * k] = g->act_lo[0];
        seg[2 * k + 1] = a;
        k++;
    }
    if (b < g->act_hi[0]) {
        seg[2 * k] = b > g->act_lo[0] ? b : g->act_lo[0];
        seg[2 * k + 1] = g->act_hi[0];
        k++;
    }
    return k;
}

static void outside_rows(void *p, int64_t r0, int64_t r1, int t)
{
    (void)t;
    outside_ctx *c = p;
    const shoal_sim *s = c->s;
    const grid *g = &s->g;
    const uint32_t nx = (uint32_t)g->dims[0], ny = (uint32_t)g->dims[1];
    for (int64_t r = r0; r < r1; r++) {
        int32_t y = g->act_lo[1] + (int32_t)(r % c->rows_y);
        int32_t z = g->act_lo[2] + (int32_t)(r / c->rows_y);
        uint32_t row = (uint32_t)y + ny * (uint32_t)z, bad = UINT32_MAX;
        int32_t seg[4];
        int nseg = outside_segments(c, y, z, seg);
        size_t k = c->row_at[r];
        for (int q = 0; q < nseg; q++) {
            uint32_t b = s->cell_start[row * nx + (uint32_t)seg[2 * q]];
            uint32_t e = s->cell_start[row * nx + (uint32_t)seg[2 * q + 1]];
            for (uint32_t i = b; i < e; i++, k++) {
                int finite = 1;
                for (int w = 0; w < 6; w++) {
                    float v = s->nxt[w][i];
                    c->out[k].s[w] = v;
                    finite &= isfinite(v) != 0;
                }
                c->out[k].row = s->row_cur[i];
                if (!finite && s->row_cur[i] < bad)
                    bad = s->row_cur[i];
            }
        }
        c->row_bad[r] = bad;
    }
}

size_t part_extract_outside(const shoal_sim *s, const int32_t skip_lo[3], const int32_t skip_hi[3],
                            part_boid *out, uint32_t *bad)
{
    const grid *g = &s->g;
    const uint32_t nx = (uint32_t)g->dims[0], ny = (uint32_t)g->dims[1];
    outside_ctx c = {.s = s, .out = out};
    for (int a = 0; a < 3; a++) {
        c.skip_lo[a] = skip_lo[a] - g->off[a];
        c.skip_hi[a] = skip_hi[a] - g->off[a];
    }
    int32_t ry = g->act_hi[1] - g->act_lo[1], rz = g->act_hi[2] - g->act_lo[2];
    int64_t rows = (int64_t)ry * rz;
    size_t *row_at = malloc(((size_t)rows + 1) * sizeof *row_at);
    uint32_t *row_bad = malloc(((size_t)rows + 1) * sizeof *row_bad);
    *bad = UINT32_MAX;
    if (!row_at || !row_bad) {
        free(row_at);
        free(row_bad);
        return SIZE_MAX;
    }
    c.row_at = row_at;
    c.row_bad = row_bad;
    c.rows_y = ry;
    size_t k = 0;
    for (int64_t r = 0; r < rows; r++) {
        int32_t y = g->act_lo[1] + (int32_t)(r % ry), z = g->act_lo[2] + (int32_t)(r / ry);
        uint32_t row = (uint32_t)y + ny * (uint32_t)z;
        int32_t seg[4];
        int nseg = outside_segments(&c, y, z, seg);
        row_at[r] = k;
        for (int q = 0; q < nseg; q++)
            k += s->cell_start[row * nx + (uint32_t)seg[2 * q + 1]] -
                 s->cell_start[row * nx + (uint32_t)seg[2 * q]];
    }
    parallel_for_n(rows, 1, outside_rows, &c, part_threads(s));
    for (int64_t r = 0; r < rows; r++)
        *bad = row_bad[r] < *bad ? row_bad[r] : *bad;
    free(row_at);
    free(row_bad);
    return k;
}

void part_set_poll(shoal_sim *s, void (*poll)(void *ctx), void *ctx)
{
    s->part_poll = poll;
    s->part_poll_ctx = ctx;
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
    sim_init_rows_range(d->model, &d->params, d->seed, first, count, rows);
}
