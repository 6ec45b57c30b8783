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
#include "sim/rules.h"
#include "sim/sim_internal.h"
#include "sim/world.h"

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
    s->part_mode = 1;
    grid_setup(&s->g, d->model, &d->params, &d->world, d->neighbors, d->boid_count);
    for (int c = 0; c < 3; c++) {
        s->part_gwrap[c] = s->g.wrap[c];
        s->part_plo[c] = 0;
        s->part_phi[c] = s->g.dims[c];
        s->part_xc[c] = -1;
        s->part_xl[c] = 0;
    }
    s->part_seam = 0;
    *out = s;
    return SHOAL_OK;
}

void part_grid_dims(const shoal_sim *s, int32_t dims[3])
{
    for (int c = 0; c < 3; c++)
        dims[c] = s->g.gdims[c];
}

void part_grid_wrap(const shoal_sim *s, int wrap[3])
{
    for (int c = 0; c < 3; c++)
        wrap[c] = s->part_gwrap[c];
}

shoal_status part_place_rows(const shoal_sim *s, part_boid *b, size_t n, const char *name,
                             shoal_error *err)
{
    const shoal_world *w = &s->desc.world;
    if (shoal_world_is_default(w))
        return SHOAL_OK;
    size_t bad = SIZE_MAX;
    if (shoal_world_dims(w) == 2)
        for (size_t i = 0; i < n; i++)
            if ((b[i].s[2] != 0.0f || b[i].s[5] != 0.0f) &&
                (bad == SIZE_MAX || b[i].row < b[bad].row))
                bad = i;
    if (bad != SIZE_MAX) {
        char shown[200];
        const float *r = b[bad].s;
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "%s: row %u has %s = %g in a 2D world (dims=2: every z and vz "
                               "must be 0)",
                               shoal_error_escape(shown, sizeof shown, name ? name : "state"),
                               b[bad].row, r[2] != 0.0f ? "z" : "vz",
                               (double)(r[2] != 0.0f ? r[2] : r[5]));
    }
    world_axes a;
    world_axes_make(w, &a);
    for (int k = 0; k < 3; k++)
        if (a.periodic[k])
            for (size_t i = 0; i < n; i++)
                b[i].s[k] = world_wrap_f(b[i].s[k], a.lo[k], a.size[k], a.hi[k]);
    return SHOAL_OK;
}

float part_predator_d2(const shoal_sim *s, const float p[3], const float q[3])
{
    return rule_predator_d2(&s->mc, p[0], p[1], p[2], q);
}

float part_world_delta(const shoal_sim *s, int a, float d)
{
    return rule_world_delta_s(&s->mc, a, d);
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
        cell[c] = grid_coord(p[c], g->origin[c], g->inv[c], g->gdims[c]);
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

/* The sub-box of the owned cells [lo, hi) of one axis of n cells and a layer around them.
 * An axis that does not wrap: the layer clipped to the grid. A periodic axis (docs/WORLD.md
 * "The grid and the order of the sums"): the layer wraps, and the local cells must ascend
 * as the whole grid's, since the candidates of a boid come in the order of its cells after
 * wrapping, ascending. So the whole axis when the owned cells and their layer cover it (a
 * brick of the axis's whole length, or of all but a cell or two); a brick at cell 0 as
 * cells 0 .. hi, then n - 1 after them (the cell across the seam, the highest); a brick at
 * cell n - 1 as cell 0 (across the seam, the lowest), then lo - 1 .. n - 1; a brick away
 * from the seam as a walled one. The sub-box wraps where it holds the seam, so that its
 * cells' neighbours are the whole grid's and the kernels take the minimum image there. */
static void part_axis(shoal_sim *s, int c, int32_t lo, int32_t hi)
{
    grid *g = &s->g;
    const int32_t n = g->gdims[c], h = hi - lo;
    int32_t off, dims, plo = 0, phi, xc = -1, xl = 0, wrap = 0;
    if (!s->part_gwrap[c]) {
        off = lo > 0 ? lo - 1 : 0;
        dims = (hi < n ? hi + 1 : n) - off;
    } else if (h + 2 >= n) {
        off = 0;
        dims = n;
        wrap = 1;
    } else if (lo == 0) {
        off = 0;
        dims = h + 2;
        xc = n - 1;
        xl = h + 1;
        wrap = 1;
    } else if (hi == n) {
        off = lo - 2;
        dims = h + 2;
        plo = 1;
        xc = 0;
        xl = 0;
        wrap = 1;
    } else {
        off = lo - 1;
        dims = h + 2;
    }
    phi = xc >= 0 && xl > 0 ? dims - 1 : dims;
    g->off[c] = off;
    g->dims[c] = dims;
    g->act_lo[c] = lo - off;
    g->act_hi[c] = hi - off;
    g->wrap[c] = wrap;
    s->part_plo[c] = plo;
    s->part_phi[c] = phi;
    s->part_xc[c] = xc;
    s->part_xl[c] = xl;
}

shoal_status part_set_box(shoal_sim *s, const int32_t lo[3], const int32_t hi[3], shoal_error *err)
{
    grid *g = &s->g;
    s->part_seam = 0;
    for (int c = 0; c < 3; c++) {
        part_axis(s, c, lo[c], hi[c]);
        s->part_seam |= s->part_xc[c] >= 0;
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

/* The sub-box cell of whole-grid cell c, or SIM_CELL_NONE outside the sub-box (part_axis:
 * c - off, or the cell across a periodic seam). */
static inline uint32_t local_cell(const shoal_sim *s, const int32_t c[3])
{
    const grid *g = &s->g;
    int32_t l[3];
    for (int a = 0; a < 3; a++) {
        l[a] = c[a] - g->off[a];
        if (c[a] == s->part_xc[a])
            l[a] = s->part_xl[a];
        else if (l[a] < s->part_plo[a] || l[a] >= s->part_phi[a])
            return SIM_CELL_NONE;
    }
    return (uint32_t)(l[0] + g->dims[0] * (l[1] + g->dims[1] * l[2]));
}

static inline void whole_cell(const grid *g, float x, float y, float z, int32_t c[3])
{
    c[0] = grid_coord(x, g->origin[0], g->inv[0], g->gdims[0]);
    c[1] = grid_coord(y, g->origin[1], g->inv[1], g->gdims[1]);
    c[2] = grid_coord(z, g->origin[2], g->inv[2], g->gdims[2]);
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
            uint32_t l = local_cell(s, cc);
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
    float o[3], inv[3], top[3];
    int32_t off[3], lo[3], hi[3];
    uint32_t dim[3];
    /* the sub-box's map (part_axis): c - off is local in [plo, plo + rng); cell xc is xl */
    int32_t plo[3], xc[3], xl[3];
    uint32_t rng[3];
} classify_grid;

/* Whole-grid cell c of axis a to the sub-box's (part_axis); *in: whether it lies there.
 * `seam` (a constant): the sub-box holds a cell across a periodic seam on some axis. */
static inline int32_t classify_local(const classify_grid *k0, int a, int32_t c, int *in,
                                     const int seam)
{
    int32_t l = c - k0->off[a];
    int ok = (uint32_t)(l - k0->plo[a]) < k0->rng[a];
    if (seam) {
        int x = c == k0->xc[a];
        l = x ? k0->xl[a] : l;
        ok |= x;
    }
    *in &= ok;
    return l;
}

/* n boids at px, py, pz: the sort key of each into k, its whole-grid cell into cx, cy, cz
 * and whether others need it into edge. Branch-free, so that the compiler vectorises it
 * (called with n = CLASSIFY_BATCH, a constant, for every full batch). */
static inline void classify_batch(const classify_grid *k0, const float *px, const float *py,
                                  const float *pz, uint32_t *k, int32_t *cx, int32_t *cy,
                                  int32_t *cz, unsigned char *edge, uint32_t n, const int seam)
{
    for (uint32_t j = 0; j < n; j++) {
        int32_t x = coord_nb(px[j], k0->o[0], k0->inv[0], k0->top[0]);
        int32_t y = coord_nb(py[j], k0->o[1], k0->inv[1], k0->top[1]);
        int32_t z = coord_nb(pz[j], k0->o[2], k0->inv[2], k0->top[2]);
        int in = 1;
        int32_t lx = classify_local(k0, 0, x, &in, seam);
        int32_t ly = classify_local(k0, 1, y, &in, seam);
        int32_t lz = classify_local(k0, 2, z, &in, seam);
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
        k0.inv[a] = g->inv[a];
        k0.top[a] = c->top[a];
        k0.off[a] = g->off[a];
        k0.lo[a] = c->in_lo[a];
        k0.hi[a] = c->in_hi[a];
        k0.dim[a] = (uint32_t)g->dims[a];
        k0.plo[a] = s->part_plo[a];
        k0.rng[a] = (uint32_t)(s->part_phi[a] - s->part_plo[a]);
        k0.xc[a] = s->part_xc[a];
        k0.xl[a] = s->part_xl[a];
    }
    const int seam = s->part_seam;
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
            if (seam && n == CLASSIFY_BATCH)
                classify_batch(&k0, px, py, pz, key + i0, cx, cy, cz, edge, CLASSIFY_BATCH, 1);
            else if (seam)
                classify_batch(&k0, px, py, pz, key + i0, cx, cy, cz, edge, n, 1);
            else if (n == CLASSIFY_BATCH)
                classify_batch(&k0, px, py, pz, key + i0, cx, cy, cz, edge, CLASSIFY_BATCH, 0);
            else
                classify_batch(&k0, px, py, pz, key + i0, cx, cy, cz, edge, n, 0);
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
    /* a face of the owned box needs a layer of it elsewhere unless it is the grid's edge;
     * on a periodic axis every face does (the layer across the seam), unless the box holds
     * the whole axis */
    for (int a = 0; a < 3; a++) {
        int32_t lo = g->off[a] + g->act_lo[a], hi = g->off[a] + g->act_hi[a];
        int whole = lo == 0 && hi == g->gdims[a];
        c.in_lo[a] = lo + (s->part_gwrap[a] ? !whole : lo > 0);
        c.in_hi[a] = hi - (s->part_gwrap[a] ? !whole : hi < g->gdims[a]);
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
