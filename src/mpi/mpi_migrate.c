/* SPDX-License-Identifier: MIT */
/* Boids between bricks as a whole (docs/ARCHITECTURE.md "MPI", migration): when the school
 * starts, is re-cut or goes back to rows, every boid to the rank that owns its cell (or
 * writes its row), an all-to-all of the leavers; and the boid buffers. A step's few
 * migrants travel with its halo instead (mpi_halo.c). */
#include "mpi_internal.h"

#include "core/parallel.h"

#include <stdlib.h>
#include <string.h>

int boid_buf_reserve(boid_buf *b, size_t n)
{
    if (n <= b->cap && b->b) /* (an empty buffer gets room too: b->b + 0 is then valid) */
        return 1;
    size_t cap = n + n / 2 + 64;
    part_boid *p = realloc(b->b, cap * sizeof *p);
    if (!p)
        return 0;
    b->b = p;
    b->cap = cap;
    return 1;
}

void boid_buf_free(boid_buf *b)
{
    free(b->b);
    b->b = NULL;
    b->n = b->cap = 0;
}

/* Per boid: the rank it goes to (by cell, or with by_row by the rows each rank writes:
 * [N k / R, N (k+1) / R) to rank k). One pass over the boids on the rank's threads; no MPI
 * inside. */
typedef struct cell_pass {
    const decomp *d;
    const shoal_sim *s;
    const part_boid *b;
    int *dest;
    int by_row;
    size_t total;
    size_t *leavers; /* or NULL: the indices whose dest is another rank, in any order */
    size_t nleave;   /* how many (atomic) */
} cell_pass;

static void cell_pass_range(void *p, int64_t b0, int64_t b1, int t)
{
    (void)t;
    cell_pass *c = p;
    const decomp *d = c->d;
    for (int64_t i = b0; i < b1; i++) {
        if (c->by_row) {
            int lo = 0, hi = mpi_size() - 1;
            size_t row = c->b[i].row;
            while (lo < hi) {
                int mid = (lo + hi + 1) / 2;
                if (comm_range_first(c->total, mid) <= row)
                    lo = mid;
                else
                    hi = mid - 1;
            }
            c->dest[i] = lo;
            continue;
        }
        int32_t cc[3];
        part_cell_of(c->s, c->b[i].s, cc);
        int k[3];
        for (int a = 0; a < 3; a++)
            k[a] = decomp_owner(d->cut[a], d->P[a], cc[a]);
        int r = d->rank_at[k[0] + d->P[0] * (k[1] + d->P[1] * k[2])];
        c->dest[i] = r;
        if (c->leavers && r != mpi_rank())
            c->leavers[__atomic_fetch_add(&c->nleave, 1, __ATOMIC_RELAXED)] = (size_t)i;
    }
}

static size_t migrate_pass(const decomp *d, const shoal_sim *s, const boid_buf *own, int *dest,
                           int by_row, size_t total, size_t *leavers)
{
    cell_pass c = {.d = d,
                   .s = s,
                   .b = own->b,
                   .dest = dest,
                   .by_row = by_row,
                   .total = total,
                   .leavers = leavers,
                   .nleave = 0};
    parallel_for_n((int64_t)own->n, 8192, cell_pass_range, &c, part_thread_count(s));
    return c.nleave;
}

static int size_cmp(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* Every boid of `own` to the rank that owns its cell (or, with by_row, the rank that
 * writes its row). Boids that stay keep their place (compacted); only leavers travel, and
 * arrivals are appended. `own` becomes this rank's boids. Returns the boids this rank sent
 * away. Collective. */
shoal_status migrate_boids(const decomp *d, const shoal_sim *s, boid_buf *own, boid_buf *tmp,
                           int by_row, size_t total, uint64_t *sent_away, shoal_error *e)
{
    int R = mpi_size();
    *sent_away = 0;
    if (R == 1) /* one brick, one writer: everything stays */
        return SHOAL_OK;
    int *scount = calloc((size_t)R * 5, sizeof(int));
    int *dest = malloc(own->n * sizeof(int) + 1);
    /* by cell only the few boids that crossed a brick face leave: their indices; by row
     * nearly all do, and one pass over them all is the simpler thing */
    size_t *leave = by_row ? NULL : malloc(own->n * sizeof(size_t) + 1);
    size_t nleave = 0;
    shoal_status st = SHOAL_OK;
    if (!scount || !dest || (!by_row && !leave))
        st = shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory migrating %zu boids", own->n);
    if (!st) {
        nleave = migrate_pass(d, s, own, dest, by_row, total, leave);
        if (by_row) {
            for (size_t i = 0; i < own->n; i++)
                scount[dest[i]]++;
        } else {
            qsort(leave, nleave, sizeof *leave, size_cmp); /* the threads found them in any order */
            for (size_t k = 0; k < nleave; k++)
                scount[dest[leave[k]]]++;
        }
        scount[mpi_rank()] = 0; /* stayers do not travel */
    }
    size_t sn = 0;
    for (int r = 0; !st && r < R; r++)
        sn += (size_t)scount[r];
    if (!st && !boid_buf_reserve(tmp, sn))
        st = shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory migrating %zu boids", sn);
    st = comm_agree(st, e);
    if (st) {
        free(scount);
        free(dest);
        free(leave);
        return st;
    }
    int *sdisp = scount + R, *rcount = scount + 2 * R, *rdisp = scount + 3 * R;
    /* pack the leavers by destination (each destination's in their order) */
    int *fill = scount + 4 * R;
    size_t at = 0;
    for (int r = 0; r < R; r++) {
        sdisp[r] = (int)at;
        fill[r] = (int)at;
        at += (size_t)scount[r];
    }
    size_t stay = 0;
    if (by_row) { /* compact the stayers in place */
        for (size_t i = 0; i < own->n; i++) {
            if (dest[i] == mpi_rank()) {
                if (stay != i)
                    own->b[stay] = own->b[i];
                stay++;
            } else {
                tmp->b[fill[dest[i]]++] = own->b[i];
            }
        }
    } else {
        /* leavers out; each hole (highest first) takes the last boid, itself a stayer by then
         * (the order inside a rank changes no result: the sort orders every cell by row) */
        for (size_t k = 0; k < nleave; k++)
            tmp->b[fill[dest[leave[k]]]++] = own->b[leave[k]];
        stay = own->n;
        for (size_t k = nleave; k-- > 0;) {
            stay--;
            if (leave[k] != stay)
                own->b[leave[k]] = own->b[stay];
        }
    }
    free(dest);
    free(leave);
    MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, MPI_COMM_WORLD);
    size_t rn = 0;
    for (int r = 0; r < R; r++) {
        rdisp[r] = (int)rn;
        rn += (size_t)rcount[r];
    }
    *sent_away = sn;
    if (!boid_buf_reserve(own, stay + rn))
        st = shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory migrating boids");
    if (comm_agree(st, e)) {
        free(scount);
        return e->status;
    }
    MPI_Alltoallv(tmp->b, scount, sdisp, comm_boid_type(), own->b + stay, rcount, rdisp,
                  comm_boid_type(), MPI_COMM_WORLD);
    own->n = stay + rn;
    free(scount);
    return SHOAL_OK;
}
