/* SPDX-License-Identifier: MIT */
/* The decomposition (docs/ARCHITECTURE.md "MPI", bricks): the rank grid, the cuts of each
 * axis into bricks of whole cell planes by boid count, re-cuts, the imbalance. */
#include "mpi_internal.h"

#include <stdlib.h>
#include <string.h>

void decomp_free(decomp *d)
{
    for (int a = 0; a < 3; a++)
        free(d->cut[a]);
    free(d->rank_at);
    if (d->cart != MPI_COMM_NULL)
        MPI_Comm_free(&d->cart);
}

/* The rank grid: MPI_Dims_create's factors, the largest along the axis with the most
 * cells. A brick needs a cell along each axis, so more ranks along an axis than its cells
 * is an error (the user asks for fewer ranks). */
shoal_status decomp_create(decomp *d, const int32_t gd[3], shoal_error *e)
{
    memset(d, 0, sizeof *d);
    d->cart = MPI_COMM_NULL;
    int f[3] = {0, 0, 0};
    MPI_Dims_create(mpi_size(), 3, f);
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
    for (int a = 0; a < 3; a++)
        d->gd[a] = gd[a];
    if (d->P[0] > gd[0] || d->P[1] > gd[1] || d->P[2] > gd[2])
        return shoal_error_set(e, SHOAL_ERR_INPUT,
                               "%d ranks make a rank grid of %dx%dx%d bricks but the grid has "
                               "%dx%dx%d cells, and a brick needs at least one cell along each "
                               "axis: run with fewer ranks",
                               mpi_size(), d->P[0], d->P[1], d->P[2], gd[0], gd[1], gd[2]);
    int dims[3] = {d->P[0], d->P[1], d->P[2]}, periods[3] = {0, 0, 0};
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &d->cart);
    MPI_Cart_coords(d->cart, mpi_rank(), 3, d->me);
    d->rank_at = malloc((size_t)mpi_size() * sizeof(int));
    for (int a = 0; a < 3; a++)
        d->cut[a] = malloc(((size_t)d->P[a] + 1) * sizeof(int32_t));
    if (!d->rank_at || !d->cut[0] || !d->cut[1] || !d->cut[2])
        return shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for the rank grid");
    for (int z = 0; z < d->P[2]; z++)
        for (int y = 0; y < d->P[1]; y++)
            for (int x = 0; x < d->P[0]; x++) {
                int c[3] = {x, y, z}, r;
                MPI_Cart_rank(d->cart, c, &r);
                d->rank_at[x + d->P[0] * (y + d->P[1] * z)] = r;
            }
    for (int k = 0; k < 27; k++) {
        int c[3] = {d->me[0] + k % 3 - 1, d->me[1] + k / 3 % 3 - 1, d->me[2] + k / 9 - 1};
        int ok = k != 13;
        for (int a = 0; a < 3; a++)
            ok = ok && c[a] >= 0 && c[a] < d->P[a];
        d->nbr[k] = ok ? d->rank_at[c[0] + d->P[0] * (c[1] + d->P[1] * c[2])] : MPI_PROC_NULL;
    }
    /* until the first cut: even planes */
    for (int a = 0; a < 3; a++)
        for (int k = 0; k <= d->P[a]; k++)
            d->cut[a][k] = (int32_t)((int64_t)gd[a] * k / d->P[a]);
    return SHOAL_OK;
}

static void decomp_brick(decomp *d)
{
    for (int a = 0; a < 3; a++) {
        d->lo[a] = d->cut[a][d->me[a]];
        d->hi[a] = d->cut[a][d->me[a] + 1];
    }
}

/* Cuts along one axis from the boids per cell plane: plane c goes below cut k when at
 * least half of it fits under k/P of the boids; every brick keeps at least one plane. */
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

int decomp_owner(const int32_t *cut, int P, int32_t c)
{
    int lo = 0, hi = P - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (cut[mid] <= c)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* New cuts from the boids per cell plane of the whole school. Collective. */
void decomp_recut(decomp *d, const shoal_sim *s, const boid_buf *own)
{
    int32_t n = d->gd[0] + d->gd[1] + d->gd[2];
    uint64_t *h = calloc((size_t)n * 2, sizeof(uint64_t));
    if (!h)
        return; /* keep the old cuts: still exact, only slower */
    uint64_t *hx = h, *hy = h + d->gd[0], *hz = hy + d->gd[1];
    for (size_t i = 0; i < own->n; i++) {
        int32_t c[3];
        part_cell_of(s, own->b[i].s, c);
        hx[c[0]]++;
        hy[c[1]]++;
        hz[c[2]]++;
    }
    MPI_Allreduce(h, h + n, n, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    hx = h + n;
    hy = hx + d->gd[0];
    hz = hy + d->gd[1];
    cuts_from_hist(hx, d->gd[0], d->P[0], d->cut[0]);
    cuts_from_hist(hy, d->gd[1], d->P[1], d->cut[1]);
    cuts_from_hist(hz, d->gd[2], d->P[2], d->cut[2]);
    free(h);
    decomp_brick(d);
}

double decomp_imbalance(size_t n_own, size_t total)
{
    unsigned long long mine = n_own, most = 0;
    MPI_Allreduce(&mine, &most, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    return (double)most * mpi_size() / (double)total;
}
