/* SPDX-License-Identifier: MIT */
/* The decomposition (docs/ARCHITECTURE.md "MPI", bricks): the rank grid, the hierarchical
 * cuts into bricks of whole cell planes (by boid count, or by the ranks' time), re-cuts,
 * the neighbours, the imbalance. */
#include "mpi_internal.h"

#include <stdlib.h>
#include <string.h>

void decomp_free(decomp *d)
{
    for (int a = 0; a < 3; a++)
        free(d->cut[a]);
    free(d->rank_at);
    free(d->nbr);
    free(d->nbr_of);
    if (d->cart != MPI_COMM_NULL)
        MPI_Comm_free(&d->cart);
}

size_t decomp_cut_count(const decomp *d, int a)
{
    size_t n = (size_t)d->P[a] + 1;
    for (int b = a + 1; b < 3; b++)
        n *= (size_t)d->P[b];
    return n;
}

/* Even cuts of n planes into P ranges. */
static void cuts_even(int32_t *cut, int32_t n, int P)
{
    for (int k = 0; k <= P; k++)
        cut[k] = (int32_t)((int64_t)n * k / P);
}

/* The brick of the rank at coordinates k: lo and hi per axis. */
static void brick_of(const decomp *d, const int k[3], int32_t lo[3], int32_t hi[3])
{
    const int32_t *cz = decomp_cuts(d, 2, 0, 0), *cy = decomp_cuts(d, 1, k[2], 0),
                  *cx = decomp_cuts(d, 0, k[2], k[1]);
    lo[2] = cz[k[2]];
    hi[2] = cz[k[2] + 1];
    lo[1] = cy[k[1]];
    hi[1] = cy[k[1] + 1];
    lo[0] = cx[k[0]];
    hi[0] = cx[k[0] + 1];
}

/* My brick and my neighbours (the bricks within DECOMP_REACH cells of mine along every
 * axis: a symmetric relation, so each rank waits for a message from exactly the ranks that
 * send it one). */
static void decomp_place(decomp *d)
{
    brick_of(d, d->me, d->lo, d->hi);
    d->nn = 0;
    int R = mpi_size();
    for (int r = 0; r < R; r++)
        d->nbr_of[r] = -1;
    for (int z = 0; z < d->P[2]; z++)
        for (int y = 0; y < d->P[1]; y++)
            for (int x = 0; x < d->P[0]; x++) {
                int k[3] = {x, y, z}, near = 1;
                int32_t lo[3], hi[3];
                brick_of(d, k, lo, hi);
                for (int a = 0; a < 3; a++) {
                    /* on a periodic axis also its images a period away (symmetric) */
                    int any = 0;
                    for (int sh = d->wrap[a] ? -1 : 0; sh <= (d->wrap[a] ? 1 : 0); sh++) {
                        int32_t l = lo[a] + sh * d->gd[a], h = hi[a] + sh * d->gd[a];
                        any |= l < d->hi[a] + DECOMP_REACH && h + DECOMP_REACH > d->lo[a];
                    }
                    near &= any;
                }
                int r = d->rank_at[x + d->P[0] * (y + d->P[1] * z)];
                if (near && r != mpi_rank())
                    d->nbr_of[r] = 1;
            }
    for (int r = 0; r < R; r++)
        if (d->nbr_of[r] > 0) {
            d->nbr_of[r] = d->nn;
            d->nbr[d->nn++] = r;
        }
}

/* The rank grid: MPI_Dims_create's factors, the largest along the axis with the most
 * cells. A brick needs a cell along each axis, so more ranks along an axis than its cells
 * is an error (the user asks for fewer ranks). */
shoal_status decomp_create(decomp *d, const int32_t gd[3], const int wrap[3], shoal_error *e)
{
    memset(d, 0, sizeof *d);
    d->cart = MPI_COMM_NULL;
    /* the axes of more than one cell share the ranks (2D: x and y) */
    int f[3] = {1, 1, 1}, split = (gd[0] > 1) + (gd[1] > 1) + (gd[2] > 1);
    if (split > 0) {
        f[0] = f[1] = f[2] = 0;
        MPI_Dims_create(mpi_size(), split, f);
        for (int i = split; i < 3; i++)
            f[i] = 1;
    } else {
        f[0] = mpi_size();
    }
    int order[3] = {2, 1, 0}; /* axes by cell count, most first (ties: z, y, x) */
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (gd[order[j]] > gd[order[i]]) {
                int t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
    for (int i = 0; i < 3; i++)
        d->P[order[i]] = f[i];
    for (int a = 0; a < 3; a++) {
        d->gd[a] = gd[a];
        d->wrap[a] = wrap[a] != 0;
    }
    if (d->P[0] > gd[0] || d->P[1] > gd[1] || d->P[2] > gd[2])
        return shoal_error_set(e, SHOAL_ERR_INPUT,
                               "%d ranks make a rank grid of %dx%dx%d bricks but the grid has "
                               "%dx%dx%d cells, and a brick needs at least one cell along each "
                               "axis: run with fewer ranks",
                               mpi_size(), d->P[0], d->P[1], d->P[2], gd[0], gd[1], gd[2]);
    int dims[3] = {d->P[0], d->P[1], d->P[2]}, periods[3] = {0, 0, 0};
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &d->cart);
    MPI_Cart_coords(d->cart, mpi_rank(), 3, d->me);
    d->rank = mpi_rank();
    size_t R = (size_t)mpi_size();
    d->rank_at = malloc(R * sizeof(int));
    d->nbr = malloc(R * sizeof(int));
    d->nbr_of = malloc(R * sizeof(int));
    for (int a = 0; a < 3; a++)
        d->cut[a] = malloc(decomp_cut_count(d, a) * sizeof(int32_t));
    if (!d->rank_at || !d->nbr || !d->nbr_of || !d->cut[0] || !d->cut[1] || !d->cut[2])
        return shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for the rank grid");
    for (int z = 0; z < d->P[2]; z++)
        for (int y = 0; y < d->P[1]; y++)
            for (int x = 0; x < d->P[0]; x++) {
                int c[3] = {x, y, z}, r;
                MPI_Cart_rank(d->cart, c, &r);
                d->rank_at[x + d->P[0] * (y + d->P[1] * z)] = r;
            }
    /* until the first cut: even planes */
    for (size_t i = 0; i < decomp_cut_count(d, 2) / ((size_t)d->P[2] + 1); i++)
        cuts_even(d->cut[2] + i * ((size_t)d->P[2] + 1), gd[2], d->P[2]);
    for (size_t i = 0; i < decomp_cut_count(d, 1) / ((size_t)d->P[1] + 1); i++)
        cuts_even(d->cut[1] + i * ((size_t)d->P[1] + 1), gd[1], d->P[1]);
    for (size_t i = 0; i < decomp_cut_count(d, 0) / ((size_t)d->P[0] + 1); i++)
        cuts_even(d->cut[0] + i * ((size_t)d->P[0] + 1), gd[0], d->P[0]);
    decomp_place(d);
    return SHOAL_OK;
}

/* Cuts along one axis from the weight per cell plane: plane c goes below cut k when at
 * least half of it fits under k/P of the weight; every range keeps at least one plane. */
static void cuts_from_hist(const uint64_t *h, int32_t n, int P, int32_t *cut)
{
    uint64_t total = 0;
    for (int32_t c = 0; c < n; c++)
        total += h[c];
    cut[0] = 0;
    cut[P] = n;
    uint64_t run = 0;
    int32_t c = 0;
    for (int k = 1; k < P; k++) {
        double want = (double)total * k / P;
        while (c < n && (double)run + 0.5 * (double)h[c] < want) {
            run += h[c];
            c++;
        }
        int32_t v = c;
        if (v < cut[k - 1] + 1)
            v = cut[k - 1] + 1;
        if (v > n - (P - k))
            v = n - (P - k);
        cut[k] = v;
        while (c < v) {
            run += h[c];
            c++;
        }
        while (c > v) { /* clamped down: give the planes back */
            c--;
            run -= h[c];
        }
    }
}

int decomp_rank_of(const decomp *d, const int32_t c[3])
{
    int kz = decomp_owner(decomp_cuts(d, 2, 0, 0), d->P[2], c[2]);
    int ky = decomp_owner(decomp_cuts(d, 1, kz, 0), d->P[1], c[1]);
    int kx = decomp_owner(decomp_cuts(d, 0, kz, ky), d->P[0], c[0]);
    return d->rank_at[kx + d->P[0] * (ky + d->P[1] * kz)];
}

int decomp_recut(decomp *d, const shoal_sim *s, const boid_buf *own, uint64_t w)
{
    const int P0 = d->P[0], P1 = d->P[1], P2 = d->P[2];
    /* the three levels' histograms: z planes; y planes per slab; x planes per column */
    size_t nz = (size_t)d->gd[2], ny = (size_t)P2 * (size_t)d->gd[1],
           nx = (size_t)P2 * (size_t)P1 * (size_t)d->gd[0];
    size_t nh = nz > ny ? nz : ny;
    nh = nh > nx ? nh : nx;
    uint64_t *h = malloc(2 * nh * sizeof *h);
    int32_t *cell = malloc(3 * own->n * sizeof *cell + 1);
    int32_t *cut[3];
    for (int a = 0; a < 3; a++)
        cut[a] = malloc(decomp_cut_count(d, a) * sizeof(int32_t));
    int ok = h && cell && cut[0] && cut[1] && cut[2], all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) { /* keep the old cuts: still exact, only slower */
        free(h);
        free(cell);
        for (int a = 0; a < 3; a++)
            free(cut[a]);
        return 0;
    }
    for (size_t i = 0; i < own->n; i++)
        part_cell_of(s, own->b[i].s, cell + 3 * i);
    /* z: one histogram over the school */
    memset(h, 0, nz * sizeof *h);
    for (size_t i = 0; i < own->n; i++)
        h[cell[3 * i + 2]] += w;
    MPI_Allreduce(h, h + nh, (int)nz, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    cuts_from_hist(h + nh, d->gd[2], P2, cut[2]);
    /* y: a histogram per new slab */
    memset(h, 0, ny * sizeof *h);
    for (size_t i = 0; i < own->n; i++) {
        int kz = decomp_owner(cut[2], P2, cell[3 * i + 2]);
        h[(size_t)kz * (size_t)d->gd[1] + (size_t)cell[3 * i + 1]] += w;
    }
    MPI_Allreduce(h, h + nh, (int)ny, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    for (int kz = 0; kz < P2; kz++)
        cuts_from_hist(h + nh + (size_t)kz * (size_t)d->gd[1], d->gd[1], P1,
                       cut[1] + (size_t)kz * (size_t)(P1 + 1));
    /* x: a histogram per new column */
    memset(h, 0, nx * sizeof *h);
    for (size_t i = 0; i < own->n; i++) {
        int kz = decomp_owner(cut[2], P2, cell[3 * i + 2]);
        int ky = decomp_owner(cut[1] + (size_t)kz * (size_t)(P1 + 1), P1, cell[3 * i + 1]);
        h[((size_t)kz * (size_t)P1 + (size_t)ky) * (size_t)d->gd[0] + (size_t)cell[3 * i]] += w;
    }
    MPI_Allreduce(h, h + nh, (int)nx, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    for (size_t col = 0; col < (size_t)P2 * (size_t)P1; col++)
        cuts_from_hist(h + nh + col * (size_t)d->gd[0], d->gd[0], P0,
                       cut[0] + col * (size_t)(P0 + 1));
    for (int a = 0; a < 3; a++) {
        free(d->cut[a]);
        d->cut[a] = cut[a];
    }
    free(h);
    free(cell);
    decomp_place(d);
    return 1;
}

double decomp_imbalance(size_t n_own, size_t total)
{
    unsigned long long mine = n_own, most = 0;
    MPI_Allreduce(&mine, &most, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    return (double)most * mpi_size() / (double)total;
}
