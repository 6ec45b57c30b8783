/* SPDX-License-Identifier: MIT */
/* The float64 reference's grid: a uniform grid over double positions, cell at least the
 * interaction radius, boids in cell-major, input-row-minor order (a stable counting sort), and
 * a boid's candidate runs in the canonical order (z outer, y inner, the x run of 3 cells).
 * A function of the state alone. Owns the memory of its ref_grid. */
#include "core/alloc.h"
#include "verify/ref_internal.h"

#include <math.h>
#include <string.h>

/* ---- the grid ------------------------------------------------------------------------- */

void ref_grid_free(ref_grid *g)
{
    alloc_free(g->cell_start);
    alloc_free(g->row_of);
    alloc_free(g->slot_of);
    for (int k = 0; k < 6; k++)
        alloc_free(g->x[k]);
    memset(g, 0, sizeof *g);
}

static int32_t ref_cell_coord(const ref_grid *g, double x, int c)
{
    double f = floor((x - g->origin[c]) / g->cell);
    if (!(f >= 0))
        return 0;
    if (f >= (double)(g->dims[c] - 1))
        return g->dims[c] - 1;
    return (int32_t)f;
}

static size_t ref_cell_index(const ref_grid *g, int32_t x, int32_t y, int32_t z)
{
    return (size_t)x + (size_t)g->dims[0] * ((size_t)y + (size_t)g->dims[1] * (size_t)z);
}

shoal_status ref_grid_build(ref_grid *g, const double *rows, size_t n, double radius, int brute,
                            shoal_error *err)
{
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) {
            double x = rows[i * 6 + (size_t)c];
            lo[c] = x < lo[c] ? x : lo[c];
            hi[c] = x > hi[c] ? x : hi[c];
        }
    /* a little over the radius, so that the rounding of the cell coordinates can never put
     * two boids within the radius two cells apart */
    double cell = radius * (1.0 + 1e-9);
    int one = brute || !(cell > 0) || !isfinite(cell);
    double limit = 8.0 * (double)n + 64.0, cells = 1;
    int32_t dims[3] = {1, 1, 1};
    for (int pass = 0; !one && pass < 2100; pass++) {
        cells = 1;
        for (int c = 0; c < 3; c++) {
            double d = floor((hi[c] - lo[c]) / cell) + 1.0;
            dims[c] = d < 2e9 ? (int32_t)d : 2000000000;
            cells *= d;
        }
        if (cells <= limit)
            break;
        cell *= 2.0; /* a school spread thin: bigger cells (still >= the radius) */
    }
    if (one || !(cells <= limit)) {
        dims[0] = dims[1] = dims[2] = 1;
        cell = INFINITY;
    }
    size_t cell_count = (size_t)dims[0] * (size_t)dims[1] * (size_t)dims[2];
    if (cell_count + 1 > g->cap_cells) {
        alloc_free(g->cell_start);
        g->cap_cells = 0;
        if (!(g->cell_start = alloc_array(cell_count + 1, sizeof(uint32_t), "reference grid", err)))
            return err ? err->status : SHOAL_ERR_NOMEM;
        g->cap_cells = cell_count + 1;
    }
    if (n > g->cap_count) {
        alloc_free(g->row_of);
        alloc_free(g->slot_of);
        for (int k = 0; k < 6; k++) {
            alloc_free(g->x[k]);
            g->x[k] = NULL;
        }
        g->cap_count = 0;
        int ok = (g->row_of = alloc_array(n, sizeof(uint32_t), "reference grid", err)) != NULL;
        ok = ok && (g->slot_of = alloc_array(n, sizeof(uint32_t), "reference grid", err));
        for (int k = 0; k < 6 && ok; k++)
            ok = (g->x[k] = alloc_array(n, sizeof(double), "reference grid", err)) != NULL;
        if (!ok)
            return err ? err->status : SHOAL_ERR_NOMEM;
        g->cap_count = n;
    }
    for (int c = 0; c < 3; c++) {
        g->origin[c] = isfinite(lo[c]) ? lo[c] : 0.0;
        g->dims[c] = dims[c];
    }
    g->cell = cell;
    g->cell_count = cell_count;
    g->count = n;
    /* counting sort, stable: cell-major, input-row-minor */
    memset(g->cell_start, 0, (cell_count + 1) * sizeof(uint32_t));
    for (size_t i = 0; i < n; i++) {
        const double *r = rows + i * 6;
        size_t ci = cell_count == 1
                        ? 0
                        : ref_cell_index(g, ref_cell_coord(g, r[0], 0), ref_cell_coord(g, r[1], 1),
                                         ref_cell_coord(g, r[2], 2));
        g->slot_of[i] = (uint32_t)ci; /* the cell, for now */
        g->cell_start[ci + 1]++;
    }
    for (size_t c = 0; c < cell_count; c++)
        g->cell_start[c + 1] += g->cell_start[c];
    for (size_t i = 0; i < n; i++) {
        uint32_t ci = g->slot_of[i];
        uint32_t slot = g->cell_start[ci]++;
        g->slot_of[i] = slot;
        g->row_of[slot] = (uint32_t)i;
        for (int k = 0; k < 6; k++)
            g->x[k][slot] = rows[i * 6 + (size_t)k];
    }
    /* cell_start was advanced to each cell's end: shift back */
    for (size_t c = cell_count; c > 0; c--)
        g->cell_start[c] = g->cell_start[c - 1];
    g->cell_start[0] = 0;
    return SHOAL_OK;
}

int ref_grid_runs(const ref_grid *g, const double p[3], uint32_t rb[9], uint32_t re[9])
{
    if (g->cell_count == 1) {
        rb[0] = 0;
        re[0] = (uint32_t)g->count;
        return 1;
    }
    int32_t cx = ref_cell_coord(g, p[0], 0), cy = ref_cell_coord(g, p[1], 1),
            cz = ref_cell_coord(g, p[2], 2);
    int32_t x0 = cx > 0 ? cx - 1 : 0, x1 = cx + 1 < g->dims[0] ? cx + 1 : g->dims[0] - 1;
    int runs = 0;
    for (int32_t z = cz - 1; z <= cz + 1; z++) {
        if (z < 0 || z >= g->dims[2])
            continue;
        for (int32_t y = cy - 1; y <= cy + 1; y++) {
            if (y < 0 || y >= g->dims[1])
                continue;
            uint32_t b = g->cell_start[ref_cell_index(g, x0, y, z)];
            uint32_t e = g->cell_start[ref_cell_index(g, x1, y, z) + 1];
            if (e > b) {
                rb[runs] = b;
                re[runs] = e;
                runs++;
            }
        }
    }
    return runs;
}
