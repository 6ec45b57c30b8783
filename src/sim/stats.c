/* SPDX-License-Identifier: MIT */
/* Flock statistics of one state (shoal/stats.h). Owns a grid of its own (not sim/grid.c's,
 * which is sized for the step's interaction radius): the cell size is clamped to the data's
 * extent, to a cell budget and to a fraction of the radius, so a query walks a bounded
 * number of cells for any density and radius. Counting adds whole cells that lie inside the
 * radius (the sorted cells of one grid row are a prefix sum) and tests single boids only in
 * the cells the sphere cuts. Does not touch the simulation.
 *
 * Exactness: a pair is tested with the float64 formula d2 = (dx*dx + dy*dy) + dz*dz,
 * dx = (double)x_i - (double)x_j, and d2 <= r*r, as a NumPy brute force does. Shortcuts that
 * take or reject a whole box without testing its boids use either the box's own corners (the
 * farthest or nearest corner under the same formula: rounding is monotone, so no boid inside
 * can be farther or nearer) or the nominal cell geometry widened by a pad and a relative
 * margin far larger than the rounding errors, so they give the brute force's answer. */
#include "shoal/stats.h"
#include "core/check.h"

#include "core/parallel.h"
#include "sim/world.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* At most this many cells (about 100 MiB with the per-cell boxes), and two per boid. */
#define STATS_MAX_CELLS (1u << 21)
/* A neighbour count walks at most (2 * STATS_KMAX + 3)^2 grid rows per boid. */
#define STATS_KMAX 16
/* Relative margin on the radius for the cell-level shortcuts (see the file comment). */
#define STATS_MARGIN 1e-9

typedef struct view {
    const float *p[3], *v[3];
    size_t stride;
    /* a periodic world's points (positions wrapped, then their images across the seams):
     * float64 positions pd[c][k], stride 1, instead of p; orig[k] the original (its index
     * among the finite boids) and m0 the originals' count (k < m0: an original) */
    const double *pd[3];
    const uint32_t *orig;
    size_t m0;
} view;

/* The grid: finite boids sorted by cell (stable: row order inside a cell), coordinates as
 * float64 copies of the floats, and each cell's own bounding box. */
typedef struct sgrid {
    double lo[3], h, pad[3];
    int64_t dims[3];
    size_t cells, m;
    uint32_t *start;    /* cells + 1: slots of cell c are start[c] .. start[c+1]-1 */
    double *x[3];       /* m sorted coordinates */
    float *bmin, *bmax; /* 3 per cell */
    /* with images (a periodic world): per slot, its original and whether it is one */
    uint32_t *orig;
    unsigned char *is_orig;
} sgrid;

shoal_stats_desc shoal_stats_desc_default(void)
{
    shoal_stats_desc d;
    memset(&d, 0, sizeof d);
    d.radius = 1.0;
    return d;
}

static double sq(double v) { return v * v; }

/* The pair distance every statistic uses; the order of the sum is part of the contract. */
static double d2_pair(double ax, double ay, double az, double bx, double by, double bz)
{
    double dx = ax - bx, dy = ay - by, dz = az - bz;
    return (dx * dx + dy * dy) + dz * dz;
}

/* floor(f) clamped to [0, hi] (NaN and -inf to 0). */
static int64_t clampi(double f, int64_t hi)
{
    if (!(f > 0))
        return 0;
    if (f >= (double)hi)
        return hi;
    return (int64_t)f;
}

static double grid_cells_for(const double ext[3], double h, int64_t dims[3])
{
    double cells = 1;
    for (int c = 0; c < 3; c++) {
        double d = floor(ext[c] / h) + 1;
        if (!(d < 4e9))
            d = 4e9;
        dims[c] = (int64_t)d;
        cells *= d;
    }
    return cells;
}

/* The smallest cell size >= hmin (about) that keeps the cell count within the budget. */
static double grid_size(const double ext[3], size_t m, double per_boid, double hmin,
                        int64_t dims[3])
{
    double budget = per_boid * (double)m;
    if (budget > STATS_MAX_CELLS)
        budget = STATS_MAX_CELLS;
    if (budget < 1)
        budget = 1;
    double emax = fmax(ext[0], fmax(ext[1], ext[2]));
    double h;
    if (!(emax > 0)) {
        h = hmin > 0 && isfinite(hmin) ? hmin : 1.0;
    } else {
        double logp = 0;
        int k = 0;
        for (int c = 0; c < 3; c++)
            if (ext[c] > 0) {
                logp += log(ext[c]);
                k++;
            }
        h = exp((logp - log(budget)) / k);
        h = fmax(h, emax / budget);
        if (hmin > h)
            h = hmin;
        if (!(h > 0) || !isfinite(h))
            h = emax;
        while (grid_cells_for(ext, h, dims) > budget)
            h *= 1.0625;
    }
    grid_cells_for(ext, h, dims);
    return h;
}

static void grid_free(sgrid *g)
{
    free(g->start);
    for (int c = 0; c < 3; c++)
        free(g->x[c]);
    free(g->bmin);
    free(g->bmax);
    free(g->orig);
    free(g->is_orig);
    memset(g, 0, sizeof *g);
}

static int64_t grid_coord(const sgrid *g, double x, int c)
{
    return clampi((x - g->lo[c]) / g->h, g->dims[c] - 1);
}

/* grid_build's sort for a periodic world's points (view pd, every point k < m, stride 1):
 * the same order (cell, then k), float64 coordinates as given, each cell's float box
 * rounded outward so that it holds its points exactly; slot -> original and whether the
 * slot is an original. Frees cell and fill. */
static int grid_build_images(sgrid *g, const view *vw, size_t m, uint32_t *cell, uint32_t *fill)
{
    g->orig = malloc((m ? m : 1) * sizeof *g->orig);
    g->is_orig = malloc(m ? m : 1);
    if (!g->orig || !g->is_orig) {
        free(cell);
        free(fill);
        grid_free(g);
        return -1;
    }
    for (size_t k = 0; k < m; k++) {
        int64_t cx = grid_coord(g, vw->pd[0][k], 0), cy = grid_coord(g, vw->pd[1][k], 1),
                cz = grid_coord(g, vw->pd[2][k], 2);
        cell[k] = (uint32_t)(cx + g->dims[0] * (cy + g->dims[1] * cz));
        g->start[cell[k] + 1]++;
    }
    for (size_t c = 0; c < g->cells; c++)
        g->start[c + 1] += g->start[c];
    memcpy(fill, g->start, g->cells * sizeof *fill);
    for (size_t k = 0; k < m; k++) {
        size_t s = fill[cell[k]]++;
        g->orig[s] = vw->orig[k];
        g->is_orig[s] = k < vw->m0;
        for (int c = 0; c < 3; c++) {
            double v = vw->pd[c][k];
            g->x[c][s] = v;
            float lo = (float)v, hi = lo;
            if ((double)lo > v)
                lo = nextafterf(lo, -INFINITY);
            if ((double)hi < v)
                hi = nextafterf(hi, INFINITY);
            float *bn = g->bmin + (size_t)cell[k] * 3 + c, *bx = g->bmax + (size_t)cell[k] * 3 + c;
            *bn = lo < *bn ? lo : *bn;
            *bx = hi > *bx ? hi : *bx;
        }
    }
    free(fill);
    free(cell);
    return 0;
}

/* Sort the m finite boids (rows idx[]) into cells of size about hmin or larger. Serial:
 * O(m + cells), small next to the queries. Returns 0, or -1 when out of memory. */
static int grid_build(sgrid *g, const view *vw, const uint32_t *idx, size_t m, const double lo[3],
                      const double ext[3], double per_boid, double hmin)
{
    memset(g, 0, sizeof *g);
    g->m = m;
    g->h = grid_size(ext, m, per_boid, hmin, g->dims);
    g->cells = (size_t)(g->dims[0] * g->dims[1] * g->dims[2]);
    for (int c = 0; c < 3; c++) {
        g->lo[c] = lo[c];
        g->pad[c] = 1e-9 * g->h + 1e-12 * ext[c];
    }
    uint32_t *cell = malloc((m ? m : 1) * sizeof *cell);
    uint32_t *fill = malloc(g->cells * sizeof *fill);
    g->start = calloc(g->cells + 1, sizeof *g->start);
    g->bmin = malloc(g->cells * 3 * sizeof *g->bmin);
    g->bmax = malloc(g->cells * 3 * sizeof *g->bmax);
    for (int c = 0; c < 3; c++)
        g->x[c] = malloc((m ? m : 1) * sizeof *g->x[c]);
    if (!cell || !fill || !g->start || !g->bmin || !g->bmax || !g->x[0] || !g->x[1] || !g->x[2]) {
        free(cell);
        free(fill);
        grid_free(g);
        return -1;
    }
    for (size_t k = 0; k < g->cells * 3; k++) {
        g->bmin[k] = INFINITY;
        g->bmax[k] = -INFINITY;
    }
    if (vw->pd[0]) {
        return grid_build_images(g, vw, m, cell, fill);
    }
    for (size_t k = 0; k < m; k++) {
        size_t i = (size_t)idx[k] * vw->stride;
        int64_t cx = grid_coord(g, vw->p[0][i], 0), cy = grid_coord(g, vw->p[1][i], 1),
                cz = grid_coord(g, vw->p[2][i], 2);
        cell[k] = (uint32_t)(cx + g->dims[0] * (cy + g->dims[1] * cz));
        g->start[cell[k] + 1]++;
    }
    for (size_t c = 0; c < g->cells; c++)
        g->start[c + 1] += g->start[c];
    memcpy(fill, g->start, g->cells * sizeof *fill);
    for (size_t k = 0; k < m; k++) {
        size_t i = (size_t)idx[k] * vw->stride, s = fill[cell[k]]++;
        for (int c = 0; c < 3; c++) {
            float v = vw->p[c][i];
            g->x[c][s] = v;
            float *bn = g->bmin + (size_t)cell[k] * 3 + c, *bx = g->bmax + (size_t)cell[k] * 3 + c;
            *bn = v < *bn ? v : *bn;
            *bx = v > *bx ? v : *bx;
        }
    }
    free(fill);
    free(cell);
    return 0;
}

/* Largest and smallest d2 (under d2_pair) from q to any point of the box [bn, bx]. */
static double box_max_d2(const double q[3], const double bn[3], const double bx[3])
{
    double d[3];
    for (int c = 0; c < 3; c++)
        d[c] = fmax(q[c] - bn[c], bx[c] - q[c]);
    return (d[0] * d[0] + d[1] * d[1]) + d[2] * d[2];
}

static double box_min_d2(const double q[3], const double bn[3], const double bx[3])
{
    double d[3];
    for (int c = 0; c < 3; c++)
        d[c] = q[c] < bn[c] ? bn[c] - q[c] : q[c] > bx[c] ? q[c] - bx[c] : 0.0;
    return (d[0] * d[0] + d[1] * d[1]) + d[2] * d[2];
}

static void cell_box(const sgrid *g, size_t cell, double bn[3], double bx[3])
{
    for (int c = 0; c < 3; c++) {
        bn[c] = g->bmin[cell * 3 + (size_t)c];
        bx[c] = g->bmax[cell * 3 + (size_t)c];
    }
}

/* ---- neighbour count --------------------------------------------------------------------- */

typedef struct count_ctx {
    const sgrid *g;
    double r2, r_lo, r_hi;
    double bb_lo[3], bb_hi[3];
    uint64_t *cnt; /* per slot */
} count_ctx;

/* Largest and smallest d2 between any point of box A and any point of box B. */
static double boxes_max_d2(const double an[3], const double ax[3], const double bn[3],
                           const double bx[3])
{
    double d[3];
    for (int c = 0; c < 3; c++)
        d[c] = fmax(ax[c] - bn[c], bx[c] - an[c]);
    return (d[0] * d[0] + d[1] * d[1]) + d[2] * d[2];
}

static double boxes_min_d2(const double an[3], const double ax[3], const double bn[3],
                           const double bx[3])
{
    double d[3];
    for (int c = 0; c < 3; c++)
        d[c] = bn[c] > ax[c] ? bn[c] - ax[c] : an[c] > bx[c] ? an[c] - bx[c] : 0.0;
    return (d[0] * d[0] + d[1] * d[1]) + d[2] * d[2];
}

/* Cells [x0, x1] of grid row `row` against the boids of cell A (slots a0..a1, box an..ax):
 * returns what every boid of A gains (cells wholly in reach) and adds each boid's own share
 * of the cells the sphere cuts to cnt[]. */
static uint64_t count_cells(const count_ctx *k, uint32_t a0, uint32_t a1, const double an[3],
                            const double ax[3], size_t row, int64_t x0, int64_t x1)
{
    const sgrid *g = k->g;
    const double r2 = k->r2;
    uint64_t all = 0;
    for (int64_t cx = x0; cx <= x1; cx++) {
        size_t c = row + (size_t)cx;
        uint32_t b0 = g->start[c], b1 = g->start[c + 1];
        if (b0 == b1)
            continue;
        double bn[3], bx[3];
        cell_box(g, c, bn, bx);
        if (boxes_min_d2(an, ax, bn, bx) > r2)
            continue;
        if (boxes_max_d2(an, ax, bn, bx) <= r2) {
            all += b1 - b0;
            continue;
        }
        for (uint32_t i = a0; i < a1; i++) {
            const double q[3] = {g->x[0][i], g->x[1][i], g->x[2][i]};
            if (b1 - b0 > 2) {
                if (box_min_d2(q, bn, bx) > r2)
                    continue;
                if (box_max_d2(q, bn, bx) <= r2) {
                    k->cnt[i] += b1 - b0;
                    continue;
                }
            }
            uint64_t n = 0;
            for (uint32_t j = b0; j < b1; j++)
                n += d2_pair(q[0], q[1], q[2], g->x[0][j], g->x[1][j], g->x[2][j]) <= r2;
            k->cnt[i] += n;
        }
    }
    return all;
}

/* Worker threads: the neighbour counts of the boids of cells [b, e), a cell at a time, so
 * the walk over grid rows is shared by the boids of a cell. Writes their cnt[] only. */
static void count_range(void *p, int64_t b, int64_t e, int thread_index)
{
    (void)thread_index;
    const count_ctx *k = p;
    const sgrid *g = k->g;
    const double h = g->h, r2 = k->r2, rh2 = sq(k->r_hi), rl2 = sq(k->r_lo);
    for (int64_t cell = b; cell < e; cell++) {
        uint32_t a0 = g->start[cell], a1 = g->start[cell + 1];
        if (a0 == a1)
            continue;
        double an[3], ax[3], anr[3], axr[3];
        cell_box(g, (size_t)cell, an, ax);
        if (boxes_max_d2(an, ax, k->bb_lo, k->bb_hi) <= r2) { /* the whole school in reach */
            for (uint32_t i = a0; i < a1; i++)
                k->cnt[i] = g->m - 1;
            continue;
        }
        for (uint32_t i = a0; i < a1; i++)
            k->cnt[i] = 0;
        for (int c = 0; c < 3; c++) {
            anr[c] = an[c] - g->lo[c];
            axr[c] = ax[c] - g->lo[c];
        }
        uint64_t all = 0;
        int64_t z0 = clampi((anr[2] - k->r_hi - g->pad[2]) / h, g->dims[2] - 1),
                z1 = clampi((axr[2] + k->r_hi + g->pad[2]) / h, g->dims[2] - 1),
                y0 = clampi((anr[1] - k->r_hi - g->pad[1]) / h, g->dims[1] - 1),
                y1 = clampi((axr[1] + k->r_hi + g->pad[1]) / h, g->dims[1] - 1);
        for (int64_t cz = z0; cz <= z1; cz++) {
            double zl = (double)cz * h - g->pad[2], zh = (double)(cz + 1) * h + g->pad[2];
            double dzn = zl > axr[2] ? zl - axr[2] : anr[2] > zh ? anr[2] - zh : 0.0;
            double dzx = fmax(axr[2] - zl, zh - anr[2]);
            for (int64_t cy = y0; cy <= y1; cy++) {
                double yl = (double)cy * h - g->pad[1], yh = (double)(cy + 1) * h + g->pad[1];
                double dyn = yl > axr[1] ? yl - axr[1] : anr[1] > yh ? anr[1] - yh : 0.0;
                double dyx = fmax(axr[1] - yl, yh - anr[1]);
                double dmin2 = dzn * dzn + dyn * dyn;
                if (dmin2 > rh2)
                    continue;
                double a = sqrt(rh2 - dmin2);
                int64_t x0 = clampi((anr[0] - a - g->pad[0]) / h, g->dims[0] - 1),
                        x1 = clampi((axr[0] + a + g->pad[0]) / h, g->dims[0] - 1);
                size_t row = (size_t)(g->dims[0] * (cy + g->dims[1] * cz));
                /* cells whose padded box is within the shrunken radius of all of A's box */
                double dmax2 = dzx * dzx + dyx * dyx;
                double f0 = 1, f1 = 0;
                if (dmax2 < rl2) {
                    double c = sqrt(rl2 - dmax2);
                    f0 = fmax(ceil((axr[0] - c + g->pad[0]) / h), (double)x0);
                    f1 = fmin(floor((anr[0] + c - g->pad[0]) / h) - 1, (double)x1);
                }
                if (f0 <= f1) {
                    int64_t i0 = (int64_t)f0, i1 = (int64_t)f1;
                    all += g->start[row + (size_t)i1 + 1] - g->start[row + (size_t)i0];
                    all += count_cells(k, a0, a1, an, ax, row, x0, i0 - 1);
                    all += count_cells(k, a0, a1, an, ax, row, i1 + 1, x1);
                } else {
                    all += count_cells(k, a0, a1, an, ax, row, x0, x1);
                }
            }
        }
        for (uint32_t i = a0; i < a1; i++)
            k->cnt[i] += all - 1; /* less the boid itself (d2 = 0 <= r2) */
    }
}

/* ---- nearest neighbour ------------------------------------------------------------------- */

typedef struct nn_ctx {
    const sgrid *g;
    double *nn; /* per slot: the smallest d2 */
} nn_ctx;

static double nn_cell(const sgrid *g, const double q[3], size_t c, int64_t self, double best)
{
    uint32_t s0 = g->start[c], s1 = g->start[c + 1];
    if (s0 == s1)
        return best;
    double bn[3], bx[3];
    cell_box(g, c, bn, bx);
    if (box_min_d2(q, bn, bx) >= best)
        return best;
    for (uint32_t s = s0; s < s1; s++) {
        if (g->orig ? g->orig[s] == g->orig[self] : (int64_t)s == self)
            continue; /* itself, or one of its own images */
        double d2 = d2_pair(q[0], q[1], q[2], g->x[0][s], g->x[1][s], g->x[2][s]);
        if (d2 < best) {
            best = d2;
            if (best == 0)
                break;
        }
    }
    return best;
}

/* Worker threads: nearest other boid of slots [b, e), by rings of cells at Chebyshev
 * distance k around the boid's cell; a boid beyond ring k is at least k*h - 2 pad away.
 * Writes nn[b..e) only. */
static void nn_range(void *p, int64_t b, int64_t e, int thread_index)
{
    (void)thread_index;
    const nn_ctx *k = p;
    const sgrid *g = k->g;
    double padmax = fmax(g->pad[0], fmax(g->pad[1], g->pad[2]));
    int64_t kmax = 0;
    for (int c = 0; c < 3; c++)
        kmax = g->dims[c] > kmax ? g->dims[c] : kmax;
    for (int64_t s = b; s < e; s++) {
        if (g->is_orig && !g->is_orig[s]) {
            k->nn[s] = 0; /* an image: not a boid of its own */
            continue;
        }
        const double q[3] = {g->x[0][s], g->x[1][s], g->x[2][s]};
        int64_t h[3];
        for (int c = 0; c < 3; c++)
            h[c] = grid_coord(g, q[c], c);
        double best = INFINITY;
        for (int64_t r = 0; r <= kmax && best > 0; r++) {
            int64_t z0 = h[2] - r < 0 ? 0 : h[2] - r,
                    z1 = h[2] + r >= g->dims[2] ? g->dims[2] - 1 : h[2] + r;
            int64_t y0 = h[1] - r < 0 ? 0 : h[1] - r,
                    y1 = h[1] + r >= g->dims[1] ? g->dims[1] - 1 : h[1] + r;
            int64_t x0 = h[0] - r < 0 ? 0 : h[0] - r,
                    x1 = h[0] + r >= g->dims[0] ? g->dims[0] - 1 : h[0] + r;
            for (int64_t z = z0; z <= z1; z++)
                for (int64_t y = y0; y <= y1; y++) {
                    size_t row = (size_t)(g->dims[0] * (y + g->dims[1] * z));
                    int shell = z == h[2] - r || z == h[2] + r || y == h[1] - r || y == h[1] + r;
                    if (shell) {
                        for (int64_t x = x0; x <= x1; x++)
                            best = nn_cell(g, q, row + (size_t)x, s, best);
                    } else {
                        if (h[0] - r >= 0)
                            best = nn_cell(g, q, row + (size_t)(h[0] - r), s, best);
                        if (h[0] + r < g->dims[0] && r > 0)
                            best = nn_cell(g, q, row + (size_t)(h[0] + r), s, best);
                    }
                }
            double bound = (double)r * g->h - 2 * padmax;
            if (bound > 0 && best <= bound * bound * (1 - STATS_MARGIN))
                break;
        }
        k->nn[s] = best;
    }
}

/* ---- groups ------------------------------------------------------------------------------ */

static uint32_t uf_find(uint32_t *parent, uint32_t i)
{
    while (parent[i] != i) {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    return i;
}

static void uf_union(uint32_t *parent, uint32_t a, uint32_t b)
{
    a = uf_find(parent, a);
    b = uf_find(parent, b);
    if (a != b) /* the smaller root wins: any rule gives the same components */
        parent[a > b ? a : b] = a < b ? a : b;
}

/* Union-find over the grid's cells: a cell whose own box has a diagonal within the radius is
 * one group; two such cells already joined are not searched; otherwise pairs are tested
 * (boids whose distance to the other cell's box exceeds the radius skipped). Serial. */
static void groups_compute(const sgrid *g, double r, uint32_t *parent, uint64_t *count_out,
                           uint64_t *largest_out)
{
    const double r2 = r * r;
    size_t m = g->m;
    for (size_t s = 0; s < m; s++)
        parent[s] = (uint32_t)s;
    double padmax = fmax(g->pad[0], fmax(g->pad[1], g->pad[2]));
    double reach = (r * (1 + STATS_MARGIN) + 2 * padmax) / g->h;
    int64_t R = 1 + (reach < 4e9 ? (int64_t)reach : (int64_t)4e9);
    unsigned char *whole = calloc(g->cells ? g->cells : 1, 1);
    for (size_t c = 0; c < g->cells; c++) {
        uint32_t s0 = g->start[c], s1 = g->start[c + 1];
        if (s0 == s1)
            continue;
        double bn[3], bx[3];
        cell_box(g, c, bn, bx);
        double dg[3] = {bx[0] - bn[0], bx[1] - bn[1], bx[2] - bn[2]};
        if ((dg[0] * dg[0] + dg[1] * dg[1]) + dg[2] * dg[2] <= r2) {
            for (uint32_t s = s0 + 1; s < s1; s++)
                parent[s] = s0;
            if (whole)
                whole[c] = 1;
        } else {
            for (uint32_t i = s0; i < s1; i++)
                for (uint32_t j = i + 1; j < s1; j++)
                    if (d2_pair(g->x[0][i], g->x[1][i], g->x[2][i], g->x[0][j], g->x[1][j],
                                g->x[2][j]) <= r2)
                        uf_union(parent, i, j);
        }
    }
    for (int64_t cz = 0; cz < g->dims[2]; cz++)
        for (int64_t cy = 0; cy < g->dims[1]; cy++)
            for (int64_t cx = 0; cx < g->dims[0]; cx++) {
                size_t a = (size_t)(cx + g->dims[0] * (cy + g->dims[1] * cz));
                uint32_t a0 = g->start[a], a1 = g->start[a + 1];
                if (a0 == a1)
                    continue;
                double an[3], ax[3];
                cell_box(g, a, an, ax);
                /* the forward half of the neighbourhood: each cell pair once */
                for (int64_t z = cz; z <= cz + R && z < g->dims[2]; z++)
                    for (int64_t y = (z == cz ? cy : cy - R); y <= cy + R && y < g->dims[1]; y++) {
                        if (y < 0)
                            continue;
                        for (int64_t x = (z == cz && y == cy ? cx + 1 : cx - R);
                             x <= cx + R && x < g->dims[0]; x++) {
                            if (x < 0)
                                continue;
                            size_t b = (size_t)(x + g->dims[0] * (y + g->dims[1] * z));
                            uint32_t b0 = g->start[b], b1 = g->start[b + 1];
                            if (b0 == b1)
                                continue;
                            double bn[3], bx[3];
                            cell_box(g, b, bn, bx);
                            double gap[3];
                            for (int c = 0; c < 3; c++)
                                gap[c] = bn[c] > ax[c]   ? bn[c] - ax[c]
                                         : an[c] > bx[c] ? an[c] - bx[c]
                                                         : 0.0;
                            if ((gap[0] * gap[0] + gap[1] * gap[1]) + gap[2] * gap[2] > r2)
                                continue;
                            int both = whole && whole[a] && whole[b];
                            if (both && uf_find(parent, a0) == uf_find(parent, b0))
                                continue;
                            for (uint32_t i = a0; i < a1; i++) {
                                const double q[3] = {g->x[0][i], g->x[1][i], g->x[2][i]};
                                if (box_min_d2(q, bn, bx) > r2)
                                    continue;
                                uint32_t ri = uf_find(parent, i);
                                int joined = 0;
                                for (uint32_t j = b0; j < b1; j++) {
                                    if (d2_pair(q[0], q[1], q[2], g->x[0][j], g->x[1][j],
                                                g->x[2][j]) <= r2 &&
                                        uf_find(parent, j) != ri) {
                                        uf_union(parent, i, j);
                                        ri = uf_find(parent, i);
                                        joined = 1;
                                        if (both)
                                            break;
                                    }
                                }
                                if (both && joined)
                                    break;
                            }
                        }
                    }
            }
    free(whole);
    uint32_t *size = calloc(m ? m : 1, sizeof *size);
    if (size && g->orig) {
        /* a periodic world: each image is its original (size[] lends its first entries as
         * original -> slot, before it counts) */
        for (size_t s = 0; s < m; s++)
            if (g->is_orig[s])
                size[g->orig[s]] = (uint32_t)s;
        for (size_t s = 0; s < m; s++)
            if (!g->is_orig[s])
                uf_union(parent, (uint32_t)s, size[g->orig[s]]);
        memset(size, 0, m * sizeof *size);
    }
    /* sizes, counted at the roots (reusing nothing: a second array of m) */
    uint64_t groups = 0, largest = 0;
    if (size) {
        for (size_t s = 0; s < m; s++)
            if (!g->is_orig || g->is_orig[s])
                size[uf_find(parent, (uint32_t)s)]++;
        for (size_t s = 0; s < m; s++)
            if (size[s]) {
                groups++;
                largest = size[s] > largest ? size[s] : largest;
            }
        free(size);
    } else {
        groups = UINT64_MAX; /* reported as out of memory by the caller */
    }
    *count_out = groups;
    *largest_out = largest;
}

/* ---- periodic worlds ------------------------------------------------------------------------ */

/* A periodic world's points for the neighbour queries: the m finite boids with their
 * positions wrapped into the box (float64 copies of world_wrap_f's floats), then their
 * images: for each periodic axis a boid within `margin` of the low face is copied one
 * period up, one within `margin` of the high face one period down (and the combinations at
 * edges and corners). A pair's distance across a seam is then d2_pair to the image
 * (x_j +- L in float64), and with margin >= the radius every pair within it meets. */
typedef struct images {
    const world_axes *wa;
    size_t m;
    double *w[3]; /* the wrapped originals */
    double *pd[3];
    uint32_t *orig;
    size_t n;
    double lo[3], hi[3], ext[3];
} images;

static void images_free_points(images *im)
{
    for (int c = 0; c < 3; c++) {
        free(im->pd[c]);
        im->pd[c] = NULL;
    }
    free(im->orig);
    im->orig = NULL;
    im->n = 0;
}

/* the shifts of boid k on axis c: 0, and +1 / -1 periods when near the faces */
static int image_shifts(const images *im, size_t k, int c, double margin, int out[3])
{
    int n = 0;
    out[n++] = 0;
    if (!im->wa->periodic[c])
        return n;
    double x = im->w[c][k], lo = im->wa->lo[c], hi = im->wa->hi[c];
    if (x < lo + margin)
        out[n++] = 1;
    if (x >= hi - margin)
        out[n++] = -1;
    return n;
}

/* Build the points for `margin` (0: the originals alone). 0, or -1 when out of memory. */
static int images_build(images *im, double margin)
{
    images_free_points(im);
    size_t n = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            for (int c = 0; c < 3; c++)
                im->pd[c] = malloc((n ? n : 1) * sizeof *im->pd[c]);
            im->orig = malloc((n ? n : 1) * sizeof *im->orig);
            if (!im->pd[0] || !im->pd[1] || !im->pd[2] || !im->orig) {
                images_free_points(im);
                return -1;
            }
            for (int c = 0; c < 3; c++) {
                im->lo[c] = INFINITY;
                im->hi[c] = -INFINITY;
            }
            for (size_t k = 0; k < im->m; k++) { /* the originals first, in order */
                for (int c = 0; c < 3; c++)
                    im->pd[c][k] = im->w[c][k];
                im->orig[k] = (uint32_t)k;
            }
            n = im->m;
        } else {
            n = im->m;
        }
        if (margin > 0) {
            for (size_t k = 0; k < im->m; k++) {
                int sx[3], sy[3], sz[3];
                int nx = image_shifts(im, k, 0, margin, sx),
                    ny = image_shifts(im, k, 1, margin, sy),
                    nz = image_shifts(im, k, 2, margin, sz);
                for (int a = 0; a < nx; a++)
                    for (int b = 0; b < ny; b++)
                        for (int d = 0; d < nz; d++) {
                            if (!sx[a] && !sy[b] && !sz[d])
                                continue;
                            if (pass == 1) {
                                const int sh[3] = {sx[a], sy[b], sz[d]};
                                for (int c = 0; c < 3; c++)
                                    im->pd[c][n] = im->w[c][k] + sh[c] * (double)im->wa->size[c];
                                im->orig[n] = (uint32_t)k;
                            }
                            n++;
                        }
            }
        }
    }
    im->n = n;
    for (size_t k = 0; k < n; k++)
        for (int c = 0; c < 3; c++) {
            im->lo[c] = im->pd[c][k] < im->lo[c] ? im->pd[c][k] : im->lo[c];
            im->hi[c] = im->pd[c][k] > im->hi[c] ? im->pd[c][k] : im->hi[c];
        }
    for (int c = 0; c < 3; c++)
        im->ext[c] = im->hi[c] - im->lo[c];
    return 0;
}

static view images_view(const images *im)
{
    view v;
    memset(&v, 0, sizeof v);
    for (int c = 0; c < 3; c++)
        v.pd[c] = im->pd[c];
    v.orig = im->orig;
    v.m0 = im->m;
    v.stride = 1;
    return v;
}

/* The centre, milling, gyration and extent of a periodic world's school (docs/STATS.md): on
 * a periodic axis the centre is the circular mean of the positions (angle 2 pi (x - lo) / L,
 * the mean of the unit vectors, back to a position in [lo, hi)); every offset from it is the
 * minimum image (x - c, minus L above L/2, plus L below -L/2), so a school across a seam
 * has the figures it has in the middle of the box. The bounding box is the centre plus the
 * smallest and largest offsets: it may reach past the box's faces (the school unwrapped
 * around its centre). A periodic axis whose mean vector vanishes (boids spread evenly round
 * it) has no centre: the box's centre is taken. Non-periodic axes as without a world. Row
 * order, one thread. */
static void stats_periodic_moments(const images *im, const view *vw, const uint32_t *idx,
                                   const double psum[3], shoal_stats *s)
{
    const world_axes *wa = im->wa;
    size_t m = im->m;
    for (int c = 0; c < 3; c++) {
        if (!wa->periodic[c]) {
            s->centroid[c] = psum[c] / (double)m;
            continue;
        }
        double L = wa->size[c], lo = wa->lo[c];
        double sn = 0, cs = 0;
        for (size_t k = 0; k < m; k++) {
            double a = 6.283185307179586 * ((im->w[c][k] - lo) / L);
            sn += sin(a);
            cs += cos(a);
        }
        double cen;
        if (hypot(sn, cs) <= 1e-12 * (double)m) {
            cen = lo + 0.5 * L;
        } else {
            double a = atan2(sn, cs);
            if (a < 0)
                a += 6.283185307179586;
            cen = lo + L * (a / 6.283185307179586);
            if (cen >= wa->hi[c])
                cen = lo;
        }
        s->centroid[c] = cen;
    }
    double g2 = 0, am[3] = {0, 0, 0}, amn = 0;
    double rmin[3] = {INFINITY, INFINITY, INFINITY}, rmax[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t k = 0; k < m; k++) {
        size_t i = (size_t)idx[k] * vw->stride;
        double r[3], v[3];
        for (int c = 0; c < 3; c++) {
            r[c] = im->w[c][k] - s->centroid[c];
            if (wa->periodic[c])
                r[c] = world_min_image_d(r[c], wa->size[c], 0.5 * (double)wa->size[c]);
            v[c] = vw->v[c][i];
            rmin[c] = r[c] < rmin[c] ? r[c] : rmin[c];
            rmax[c] = r[c] > rmax[c] ? r[c] : rmax[c];
        }
        double r2 = (r[0] * r[0] + r[1] * r[1]) + r[2] * r[2];
        double v2 = (v[0] * v[0] + v[1] * v[1]) + v[2] * v[2];
        g2 += r2;
        am[0] += r[1] * v[2] - r[2] * v[1];
        am[1] += r[2] * v[0] - r[0] * v[2];
        am[2] += r[0] * v[1] - r[1] * v[0];
        amn += sqrt(r2) * sqrt(v2);
    }
    for (int c = 0; c < 3; c++) {
        if (!wa->periodic[c])
            continue; /* the raw bounding box, as without a world */
        s->bbox_min[c] = s->centroid[c] + rmin[c];
        s->bbox_max[c] = s->centroid[c] + rmax[c];
        s->extent[c] = rmax[c] - rmin[c];
    }
    s->radius_of_gyration = sqrt(g2 / (double)m);
    s->milling = amn > 0 ? sqrt((am[0] * am[0] + am[1] * am[1]) + am[2] * am[2]) / amn : 0.0;
    if (s->milling > 1)
        s->milling = 1;
}

/* ---- the entry points -------------------------------------------------------------------- */

static int row_finite(const view *vw, size_t i)
{
    size_t k = i * vw->stride;
    for (int c = 0; c < 3; c++)
        if (!isfinite(vw->p[c][k]) || !isfinite(vw->v[c][k]))
            return 0;
    return 1;
}

static shoal_status stats_compute(const view *vw, size_t n, const shoal_stats_desc *desc_in,
                                  shoal_stats *out, shoal_error *err)
{
    shoal_stats_desc desc = desc_in ? *desc_in : shoal_stats_desc_default();
    if (isnan(desc.radius) || desc.radius < 0)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "statistics radius %g (expected a number >= 0)", desc.radius);
    char why[160];
    if (parallel_check_threads(desc.thread_count, why, sizeof why))
        return shoal_error_set(err, SHOAL_ERR_INPUT, "statistics: %s", why);
    if (n > (size_t)UINT32_MAX - 1)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "statistics of %zu boids (at most 4294967294)",
                               n);
    shoal_status wst = shoal_world_validate(&desc.world, 0.0f, err);
    if (wst)
        return wst;
    shoal_stats s;
    memset(&s, 0, sizeof s);
    s.count = n;
    s.radius = desc.radius;
    uint32_t *idx = malloc((n ? n : 1) * sizeof *idx);
    if (!idx)
        return shoal_error_set(err, SHOAL_ERR_NOMEM,
                               "out of memory for the statistics of %zu boids", n);

    /* pass 1, row order: finite rows, bounding box, sums of positions, speeds, headings */
    size_t m = 0, moving = 0;
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    double psum[3] = {0, 0, 0}, hsum[3] = {0, 0, 0}, speed = 0;
    for (size_t i = 0; i < n; i++) {
        if (!row_finite(vw, i)) {
            s.nonfinite++;
            continue;
        }
        idx[m++] = (uint32_t)i;
        size_t k = i * vw->stride;
        double v[3];
        for (int c = 0; c < 3; c++) {
            double x = vw->p[c][k];
            lo[c] = x < lo[c] ? x : lo[c];
            hi[c] = x > hi[c] ? x : hi[c];
            psum[c] += x;
            v[c] = vw->v[c][k];
        }
        double vl = sqrt((v[0] * v[0] + v[1] * v[1]) + v[2] * v[2]);
        speed += vl;
        if (vl > 0) {
            moving++;
            for (int c = 0; c < 3; c++)
                hsum[c] += v[c] / vl;
        }
    }
    if (m == 0) {
        free(idx);
        s.polarisation = s.milling = s.mean_speed = s.mean_nn_distance = s.mean_neighbors =
            s.largest_group_fraction = s.radius_of_gyration = NAN;
        for (int c = 0; c < 3; c++)
            s.centroid[c] = s.extent[c] = s.bbox_min[c] = s.bbox_max[c] = NAN;
        *out = s;
        return SHOAL_OK;
    }
    double ext[3];
    for (int c = 0; c < 3; c++) {
        s.centroid[c] = psum[c] / (double)m;
        s.bbox_min[c] = lo[c];
        s.bbox_max[c] = hi[c];
        ext[c] = hi[c] - lo[c];
        s.extent[c] = ext[c];
    }
    s.mean_speed = speed / (double)m;
    s.polarisation =
        moving ? sqrt((hsum[0] * hsum[0] + hsum[1] * hsum[1]) + hsum[2] * hsum[2]) / (double)moving
               : 0.0;

    /* pass 2, row order: about the centroid */
    double g2 = 0, am[3] = {0, 0, 0}, amn = 0;
    for (size_t k = 0; k < m; k++) {
        size_t i = (size_t)idx[k] * vw->stride;
        double r[3], v[3];
        for (int c = 0; c < 3; c++) {
            r[c] = vw->p[c][i] - s.centroid[c];
            v[c] = vw->v[c][i];
        }
        double r2 = (r[0] * r[0] + r[1] * r[1]) + r[2] * r[2];
        double v2 = (v[0] * v[0] + v[1] * v[1]) + v[2] * v[2];
        g2 += r2;
        am[0] += r[1] * v[2] - r[2] * v[1];
        am[1] += r[2] * v[0] - r[0] * v[2];
        am[2] += r[0] * v[1] - r[1] * v[0];
        amn += sqrt(r2) * sqrt(v2);
    }
    s.radius_of_gyration = sqrt(g2 / (double)m);
    s.milling = amn > 0 ? sqrt((am[0] * am[0] + am[1] * am[1]) + am[2] * am[2]) / amn : 0.0;
    /* |sum r x v| <= sum |r||v| holds exactly; rounding may step over 1 by an ulp */
    if (s.milling > 1)
        s.milling = 1;

    /* a periodic world: centre, milling, gyration and extent by circular means, and the
     * neighbour queries over the boids and their images across the seams */
    world_axes wa;
    world_axes_make(&desc.world, &wa);
    images im;
    memset(&im, 0, sizeof im);
    im.wa = &wa;
    im.m = m;
    double lmax = 0;
    if (wa.any_periodic) {
        for (int c = 0; c < 3; c++) {
            if (!wa.periodic[c])
                continue;
            lmax = fmax(lmax, (double)wa.size[c]);
            if (!(desc.radius < 0.5 * (double)wa.size[c])) {
                free(idx);
                return shoal_error_set(err, SHOAL_ERR_INPUT,
                                       "statistics radius %g: in a periodic world it must be "
                                       "below half the box (world_size_%c %g)",
                                       desc.radius, "xyz"[c], (double)wa.size[c]);
            }
        }
        for (int c = 0; c < 3; c++)
            im.w[c] = malloc(m * sizeof *im.w[c]);
        if (!im.w[0] || !im.w[1] || !im.w[2]) {
            for (int c = 0; c < 3; c++)
                free(im.w[c]);
            free(idx);
            return shoal_error_set(err, SHOAL_ERR_NOMEM,
                                   "out of memory for the statistics of %zu boids", n);
        }
        for (size_t k = 0; k < m; k++) {
            size_t i = (size_t)idx[k] * vw->stride;
            for (int c = 0; c < 3; c++) {
                float x = vw->p[c][i];
                im.w[c][k] = wa.periodic[c] ? world_wrap_f(x, wa.lo[c], wa.size[c], wa.hi[c]) : x;
            }
        }
        stats_periodic_moments(&im, vw, idx, psum, &s);
        for (int c = 0; c < 3; c++)
            ext[c] = s.extent[c];
    }

    const double r = desc.radius, r2 = r * r;
    /* the diagonal of the bounding box under d2_pair: no pair is farther (monotone rounding;
     * in a periodic world the box about the circular centre: the minimum image is nearer) */
    const double diag2 = (ext[0] * ext[0] + ext[1] * ext[1]) + ext[2] * ext[2];
    shoal_status st = SHOAL_OK;
    sgrid g;
    memset(&g, 0, sizeof g);
    view iv;

    /* nearest neighbour: cells of about one boid, whatever the radius */
    s.mean_nn_distance = NAN;
    if (!(desc.skip & SHOAL_STATS_SKIP_NEAREST) && m >= 2) {
        if (!wa.any_periodic) {
            double *nn = malloc(m * sizeof *nn);
            if (!nn || grid_build(&g, vw, idx, m, lo, ext, 2.0, 0) < 0) {
                free(nn);
                st = SHOAL_ERR_NOMEM;
                goto done;
            }
            nn_ctx k = {.g = &g, .nn = nn};
            parallel_for_n((int64_t)m, 256, nn_range, &k, desc.thread_count);
            /* slot order: cell-major, row-minor, a function of the state alone */
            double sum = 0;
            for (size_t j = 0; j < m; j++)
                sum += sqrt(nn[j]);
            s.mean_nn_distance = sum / (double)m;
            free(nn);
            grid_free(&g);
        } else {
            /* the boids inside the box alone bound each nearest distance from above (an
             * image is only nearer); images within the largest such bound find the rest */
            double margin = 0;
            for (int pass = 0; pass < 2; pass++) {
                double *nn = NULL;
                if (images_build(&im, margin) < 0 || !(nn = malloc(im.n * sizeof *nn)) ||
                    (iv = images_view(&im),
                     grid_build(&g, &iv, NULL, im.n, im.lo, im.ext, 2.0, 0)) < 0) {
                    free(nn);
                    st = SHOAL_ERR_NOMEM;
                    goto done;
                }
                nn_ctx k = {.g = &g, .nn = nn};
                parallel_for_n((int64_t)im.n, 256, nn_range, &k, desc.thread_count);
                double sum = 0, worst = 0;
                for (size_t j = 0; j < im.n; j++)
                    if (g.is_orig[j]) {
                        sum += sqrt(nn[j]);
                        worst = fmax(worst, nn[j]);
                    }
                s.mean_nn_distance = sum / (double)m;
                free(nn);
                grid_free(&g);
                margin = sqrt(worst) * (1 + 1e-6) + 1e-7 * lmax;
                if (worst == 0)
                    break;
            }
        }
    }

    /* neighbour count: everyone when the radius spans the bounding box */
    const double margin_r = r * (1 + 1e-6) + 1e-7 * lmax;
    s.mean_neighbors = NAN;
    if (!(desc.skip & SHOAL_STATS_SKIP_NEIGHBORS)) {
        if (diag2 <= r2) {
            s.mean_neighbors = (double)(m - 1);
        } else {
            size_t cells_m = m;
            const view *gv = vw;
            const double *glo = lo, *gext = ext;
            if (wa.any_periodic) {
                if (images_build(&im, margin_r) < 0) {
                    st = SHOAL_ERR_NOMEM;
                    goto done;
                }
                iv = images_view(&im);
                gv = &iv;
                cells_m = im.n;
                glo = im.lo;
                gext = im.ext;
            }
            uint64_t *cnt = malloc(cells_m * sizeof *cnt);
            if (!cnt || grid_build(&g, gv, idx, cells_m, glo, gext, 0.5, r / STATS_KMAX) < 0) {
                free(cnt);
                st = SHOAL_ERR_NOMEM;
                goto done;
            }
            count_ctx k = {.g = &g,
                           .r2 = r2,
                           .r_lo = r * (1 - STATS_MARGIN),
                           .r_hi = r * (1 + STATS_MARGIN),
                           .cnt = cnt};
            memcpy(k.bb_lo, lo, sizeof lo);
            memcpy(k.bb_hi, hi, sizeof hi);
            if (wa.any_periodic)
                for (int c = 0; c < 3; c++) { /* no whole-school shortcut over images */
                    k.bb_lo[c] = -INFINITY;
                    k.bb_hi[c] = INFINITY;
                }
            parallel_for_n((int64_t)g.cells, 16, count_range, &k, desc.thread_count);
            uint64_t total = 0;
            for (size_t j = 0; j < cells_m; j++)
                if (!g.is_orig || g.is_orig[j])
                    total += cnt[j];
            s.mean_neighbors = (double)total / (double)m;
            free(cnt);
            grid_free(&g);
        }
    }

    /* groups: one when the radius spans the bounding box */
    s.largest_group_fraction = NAN;
    if (!(desc.skip & SHOAL_STATS_SKIP_GROUPS)) {
        if (diag2 <= r2) {
            s.group_count = 1;
            s.largest_group_fraction = 1;
        } else {
            size_t cells_m = m;
            const view *gv = vw;
            const double *glo = lo, *gext = ext;
            if (wa.any_periodic) {
                if (images_build(&im, margin_r) < 0) {
                    st = SHOAL_ERR_NOMEM;
                    goto done;
                }
                iv = images_view(&im);
                gv = &iv;
                cells_m = im.n;
                glo = im.lo;
                gext = im.ext;
            }
            /* cells a little under r / sqrt(3) wide: a cell's boids are usually one group */
            uint32_t *parent = malloc(cells_m * sizeof *parent);
            if (!parent || grid_build(&g, gv, idx, cells_m, glo, gext, 2.0, r * 0.57) < 0) {
                free(parent);
                st = SHOAL_ERR_NOMEM;
                goto done;
            }
            uint64_t largest;
            groups_compute(&g, r, parent, &s.group_count, &largest);
            free(parent);
            grid_free(&g);
            if (s.group_count == UINT64_MAX) {
                st = SHOAL_ERR_NOMEM;
                goto done;
            }
            s.largest_group_fraction = (double)largest / (double)m;
        }
    }

done:
    free(idx);
    images_free_points(&im);
    for (int c = 0; c < 3; c++)
        free(im.w[c]);
    if (st)
        return shoal_error_set(err, st, "out of memory for the statistics of %zu boids", n);
    *out = s;
    return SHOAL_OK;
}

shoal_status shoal_stats_compute(const float *rows, size_t count, const shoal_stats_desc *desc,
                                 shoal_stats *out, shoal_error *err)
{
    CHECK_ARRAY(rows, count, "rows", err);
    CHECK_ARG(out, "out", err);
    static const float none[6];
    if (!rows || count == 0) /* no pointer arithmetic on NULL */
        rows = none, count = 0;
    view vw = {.p = {rows, rows + 1, rows + 2}, .v = {rows + 3, rows + 4, rows + 5}, .stride = 6};
    return stats_compute(&vw, count, desc, out, err);
}

shoal_status shoal_stats_compute_soa(const float *const pos[3], const float *const vel[3],
                                     size_t count, const shoal_stats_desc *desc, shoal_stats *out,
                                     shoal_error *err)
{
    CHECK_ARG(out, "out", err);
    if (count > 0) {
        CHECK_ARG(pos, "pos", err);
        CHECK_ARG(vel, "vel", err);
        for (int c = 0; c < 3; c++) {
            CHECK_ARG(pos[c], "pos[c]", err);
            CHECK_ARG(vel[c], "vel[c]", err);
        }
    }
    view vw = {.p = {pos[0], pos[1], pos[2]}, .v = {vel[0], vel[1], vel[2]}, .stride = 1};
    return stats_compute(&vw, count, desc, out, err);
}

/* ---- two states: the errors of `shoal compare` ----------------------------------------- */

/* Per-row error of a 3-vector (columns k..k+2): absolute |a - b| and relative
 * |a - b| / max(|a|, |b|) (0 where both are 0); max (NaN propagates) and rms. */
static void diff_columns(const float *a, const float *b, size_t n, int k, double out[4])
{
    double s_abs = 0, s_rel = 0, max_abs = 0, max_rel = 0;
    for (size_t i = 0; i < n; i++) {
        const float *x = a + i * 6 + k, *y = b + i * 6 + k;
        double d[3] = {(double)x[0] - y[0], (double)x[1] - y[1], (double)x[2] - y[2]};
        double ad = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        double na = sqrt((double)x[0] * x[0] + (double)x[1] * x[1] + (double)x[2] * x[2]);
        double nb = sqrt((double)y[0] * y[0] + (double)y[1] * y[1] + (double)y[2] * y[2]);
        double den = na > nb ? na : nb;
        double rel = ad == 0 ? 0 : ad / (den > 0 ? den : DBL_MIN);
        if (!(ad <= max_abs))
            max_abs = ad;
        if (!(rel <= max_rel))
            max_rel = rel;
        s_abs += ad * ad;
        s_rel += rel * rel;
    }
    out[0] = max_abs;
    out[1] = n ? sqrt(s_abs / (double)n) : 0;
    out[2] = max_rel;
    out[3] = n ? sqrt(s_rel / (double)n) : 0;
}

shoal_status shoal_state_compare(const float *a, const float *b, size_t count,
                                 shoal_state_diff *out, shoal_error *err)
{
    CHECK_ARG(out, "out", err);
    if (count > 0 && (!a || !b))
        return shoal_error_set(err, SHOAL_ERR_INPUT, "compare: no rows (NULL) for %zu boids",
                               count);
    memset(out, 0, sizeof *out);
    out->count = count;
    for (size_t i = 0; i < count; i++)
        if (memcmp(a + i * 6, b + i * 6, 6 * sizeof(float)) == 0)
            out->identical++;
    double p[4], v[4];
    diff_columns(a, b, count, 0, p);
    diff_columns(a, b, count, 3, v);
    out->pos_max_abs = p[0];
    out->pos_rms_abs = p[1];
    out->pos_max_rel = p[2];
    out->pos_rms_rel = p[3];
    out->vel_max_abs = v[0];
    out->vel_rms_abs = v[1];
    out->vel_max_rel = v[2];
    out->vel_rms_rel = v[3];
    return SHOAL_OK;
}
