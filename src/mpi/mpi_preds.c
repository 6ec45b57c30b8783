/* SPDX-License-Identifier: MIT */
/* The predators' targets over the ranks (docs/ARCHITECTURE.md "MPI", predators): the
 * nearest boid by a (d^2, row) minimum reduction, and the school's centre summed on rank 0
 * in the one-process order. */
#include "mpi_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The nearest boid to each predator over the whole school: (d^2, row) lexicographic
 * minimum, as predators_step's serial scan (d^2 <, ties to the lowest row). */
typedef struct pred_best {
    float d2;
    uint32_t row;
    float p[3];
} pred_best;

static void pred_min(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const pred_best *a = in;
    pred_best *b = inout;
    for (int i = 0; i < *len; i++)
        if (a[i].d2 < b[i].d2 || (a[i].d2 == b[i].d2 && a[i].row < b[i].row))
            b[i] = a[i];
}

void preds_nearest(const shoal_sim *s, float tgt[][3])
{
    float pp[SHOAL_MAX_PREDATORS][3];
    int n = (int)shoal_sim_predators(s, &pp[0][0], NULL, SHOAL_MAX_PREDATORS);
    pred_best best[SHOAL_MAX_PREDATORS], all[SHOAL_MAX_PREDATORS];
    shoal_boid_view v = shoal_sim_view(s); /* the owned boids: part_owned_range's slots */
    size_t rows = part_owned_rows(s);
    for (int k = 0; k < n; k++) {
        best[k].d2 = INFINITY;
        best[k].row = UINT32_MAX;
        best[k].p[0] = best[k].p[1] = best[k].p[2] = 0.0f;
        const float *q = pp[k];
        for (size_t r = 0; r < rows; r++) {
            uint32_t b, e;
            part_owned_range(s, r, &b, &e);
            for (uint32_t i = b; i < e; i++) {
                float x[3] = {v.px[i], v.py[i], v.pz[i]};
                float dx = x[0] - q[0], dy = x[1] - q[1], dz = x[2] - q[2];
                float d2 = (dx * dx + dy * dy) + dz * dz;
                uint32_t row = v.row_of[i];
                if (d2 < best[k].d2 || (d2 == best[k].d2 && row < best[k].row)) {
                    best[k].d2 = d2;
                    best[k].row = row;
                    memcpy(best[k].p, x, sizeof best[k].p);
                }
            }
        }
    }
    MPI_Datatype t;
    MPI_Type_contiguous((int)sizeof(pred_best), MPI_BYTE, &t);
    MPI_Type_commit(&t);
    MPI_Op op;
    MPI_Op_create(pred_min, 1, &op);
    MPI_Allreduce(best, all, n, t, op, MPI_COMM_WORLD);
    MPI_Op_free(&op);
    MPI_Type_free(&t);
    for (int k = 0; k < n; k++)
        memcpy(tgt[k], all[k].p, sizeof tgt[k]);
}

/* Chasing the school's centre: one process sums the start-of-step positions in doubles in
 * its sorted order, (cell, then row), and that rounding depends on the order. The ranks
 * send rank 0 each boid's (cell, row) key and position; rank 0 sorts them into that order,
 * sums them the same way and broadcasts the centre. O(N) on rank 0 per step: exact, but
 * this is where predator_chase = 1 stops scaling (docs/SCALING.md). Collective. */
typedef struct centre_item {
    uint64_t key; /* whole-grid cell index (z, y, x) << 32 | input row */
    float p[3];
    float pad;
} centre_item;

static int centre_cmp(const void *a, const void *b)
{
    uint64_t x = ((const centre_item *)a)->key, y = ((const centre_item *)b)->key;
    return x < y ? -1 : x > y;
}

shoal_status preds_centre(const shoal_sim *s, const boid_buf *own, size_t total, float centre[3],
                          shoal_error *e)
{
    int32_t gd[3];
    part_grid_dims(s, gd);
    centre_item *mine = malloc(own->n * sizeof *mine + 1), *all = NULL;
    int *cnt = mpi_rank() == 0 ? malloc(2 * (size_t)mpi_size() * sizeof(int)) : NULL;
    shoal_status st = SHOAL_OK;
    if (!mine || (mpi_rank() == 0 && !cnt) ||
        (mpi_rank() == 0 && !(all = malloc(total * sizeof *all + 1))))
        st = shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for the predators' centre");
    st = comm_agree(st, e);
    if (!st) {
        for (size_t i = 0; i < own->n; i++) {
            int32_t c[3];
            part_cell_of(s, own->b[i].s, c);
            uint64_t cell = (uint64_t)c[0] +
                            (uint64_t)gd[0] * ((uint64_t)c[1] + (uint64_t)gd[1] * (uint64_t)c[2]);
            mine[i].key = cell << 32 | own->b[i].row;
            memcpy(mine[i].p, own->b[i].s, sizeof mine[i].p);
            mine[i].pad = 0.0f;
        }
        MPI_Datatype t;
        MPI_Type_contiguous((int)sizeof(centre_item), MPI_BYTE, &t);
        MPI_Type_commit(&t);
        int n = (int)own->n;
        MPI_Gather(&n, 1, MPI_INT, cnt, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (mpi_rank() == 0) {
            int at = 0;
            for (int r = 0; r < mpi_size(); r++) {
                cnt[mpi_size() + r] = at;
                at += cnt[r];
            }
        }
        MPI_Gatherv(mine, n, t, all, cnt, cnt ? cnt + mpi_size() : NULL, t, 0, MPI_COMM_WORLD);
        MPI_Type_free(&t);
        if (mpi_rank() == 0) {
            qsort(all, total, sizeof *all, centre_cmp);
            double c[3] = {0, 0, 0};
            for (size_t i = 0; i < total; i++) {
                c[0] += all[i].p[0];
                c[1] += all[i].p[1];
                c[2] += all[i].p[2];
            }
            for (int k = 0; k < 3; k++)
                centre[k] = (float)(c[k] / (double)total);
        }
        MPI_Bcast(centre, 3, MPI_FLOAT, 0, MPI_COMM_WORLD);
    }
    free(mine);
    free(all);
    free(cnt);
    return st;
}
