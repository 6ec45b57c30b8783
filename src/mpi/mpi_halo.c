/* SPDX-License-Identifier: MIT */
/* The step's one exchange (docs/ARCHITECTURE.md "MPI", halo and migration): from the
 * classification of a rank's boids (part_classify), each boid that another rank needs goes
 * to every rank whose brick or halo holds its cell, in one message per neighbour that
 * carries migrants and halo together; a boid that jumped past the neighbours (rare: a brick
 * thinner than a step's move) goes through a fallback all-to-all that every rank joins
 * when any rank has one. The receiver does not tell the two kinds apart: the cell of a
 * boid says whether it is owned or halo there. */
#include "mpi_internal.h"

#include "core/parallel.h"

#include <stdlib.h>
#include <string.h>

/* Message tags: the neighbour in direction k sends in its direction 26 - k. */
#define XCHG_TAG 200

void xchg_free(xchg *x)
{
    for (int t = 0; t < SHOAL_MAX_THREADS; t++) {
        free(x->list[t].e);
        free(x->far[t].e);
    }
    boid_buf_free(&x->out);
    boid_buf_free(&x->in);
    boid_buf_free(&x->far_out);
    free(x->far_cnt);
    memset(x, 0, sizeof *x);
}

/* Append e to a thread's list (worker threads: each its own). */
static void list_push(xchg_list *l, uint64_t e)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 1024;
        uint64_t *p = realloc(l->e, cap * sizeof *p);
        if (!p) {
            l->oom = 1;
            return;
        }
        l->e = p;
        l->cap = cap;
    }
    l->e[l->n++] = e;
}

/* The rank coordinate along one axis that owns cell plane c: mine when it is in my brick
 * (the common case), else a search of the cuts. */
static inline int owner_on(const decomp *d, int a, int32_t c)
{
    if (c >= d->lo[a] && c < d->hi[a])
        return d->me[a];
    return decomp_owner(d->cut[a], d->P[a], c);
}

/* part_edge_fn (worker threads; writes thread t's lists and counters only): every rank
 * whose brick or halo holds whole-grid cell c, but this one, gets the boid at slot. Those
 * are the owners of the cells within one of c: per axis the owners of c - 1 .. c + 1 (a
 * brick is a product of ranges of planes). A periodic world would wrap c - 1 and c + 1 here
 * and in part_set_box's halo, nothing else. */
static void xchg_edge(void *p, int t, uint32_t slot, const int32_t c[3])
{
    xchg *x = p;
    const decomp *d = x->d;
    int k0[3], k1[3], own[3];
    for (int a = 0; a < 3; a++) {
        if (c[a] >= d->lo[a] && c[a] < d->hi[a]) { /* in my brick along a: the neighbours */
            own[a] = d->me[a];
            k0[a] = own[a] - (c[a] == d->lo[a] && d->lo[a] > 0);
            k1[a] = own[a] + (c[a] == d->hi[a] - 1 && d->hi[a] < d->gd[a]);
            continue;
        }
        k0[a] = owner_on(d, a, c[a] > 0 ? c[a] - 1 : 0);
        k1[a] = owner_on(d, a, c[a] < d->gd[a] - 1 ? c[a] + 1 : d->gd[a] - 1);
        own[a] = owner_on(d, a, c[a]);
    }
    for (int qz = k0[2]; qz <= k1[2]; qz++)
        for (int qy = k0[1]; qy <= k1[1]; qy++)
            for (int qx = k0[0]; qx <= k1[0]; qx++) {
                int dq[3] = {qx - d->me[0], qy - d->me[1], qz - d->me[2]};
                if (!dq[0] && !dq[1] && !dq[2])
                    continue; /* mine: part_classify keeps it when its cell is in my sub-box */
                if (qx == own[0] && qy == own[1] && qz == own[2])
                    x->list[t].migrated++;
                else
                    x->list[t].halo++;
                if (dq[0] >= -1 && dq[0] <= 1 && dq[1] >= -1 && dq[1] <= 1 && dq[2] >= -1 &&
                    dq[2] <= 1) {
                    int k = (dq[0] + 1) + 3 * (dq[1] + 1) + 9 * (dq[2] + 1);
                    list_push(&x->list[t], (uint64_t)slot << 8 | (uint64_t)k);
                } else {
                    int r = d->rank_at[qx + d->P[0] * (qy + d->P[1] * qz)];
                    list_push(&x->far[t], (uint64_t)slot << 32 | (uint64_t)r);
                }
            }
}

shoal_status xchg_classify(xchg *x, const decomp *d, shoal_sim *s, int next, int *far,
                           uint64_t *halo, uint64_t *migrated)
{
    x->d = d;
    x->threads = part_thread_count(s);
    for (int t = 0; t < x->threads; t++) {
        x->list[t].n = x->far[t].n = 0;
        x->list[t].oom = x->far[t].oom = 0;
        x->list[t].halo = x->list[t].migrated = 0;
    }
    part_classify(s, next, xchg_edge, x);
    int oom = 0;
    *far = 0;
    *halo = *migrated = 0;
    for (int t = 0; t < x->threads; t++) {
        oom |= x->list[t].oom | x->far[t].oom;
        *far |= x->far[t].n > 0;
        *halo += x->list[t].halo;
        *migrated += x->list[t].migrated;
    }
    return oom ? SHOAL_ERR_NOMEM : SHOAL_OK;
}

typedef struct pack_ctx {
    xchg *x;
    const shoal_sim *s;
    int (*at)[27]; /* per thread, per direction: where its next boid goes */
} pack_ctx;

/* Every thread of the region packs its own list (in list order) at its offsets. */
static void pack_thread(void *p, int t, int nt)
{
    (void)nt;
    pack_ctx *c = p;
    if (t >= c->x->threads)
        return;
    const xchg_list *l = &c->x->list[t];
    for (size_t i = 0; i < l->n; i++) {
        uint32_t slot = (uint32_t)(l->e[i] >> 8);
        int k = (int)(l->e[i] & 0xff);
        part_gather(c->s, &slot, 1, &c->x->out.b[c->at[t][k]++]);
    }
}

shoal_status xchg_pack(xchg *x, const shoal_sim *s, shoal_error *e)
{
    int(*at)[27] = calloc((size_t)x->threads, sizeof *at);
    if (!at)
        return shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for the halo");
    for (int t = 0; t < x->threads; t++)
        for (size_t i = 0; i < x->list[t].n; i++)
            at[t][x->list[t].e[i] & 0xff]++;
    size_t n = 0;
    for (int k = 0; k < 27; k++) {
        x->sdisp[k] = (int)n;
        for (int t = 0; t < x->threads; t++) {
            int c = at[t][k];
            at[t][k] = (int)n;
            n += (size_t)c;
        }
        x->scount[k] = (int)n - x->sdisp[k];
    }
    if (!boid_buf_reserve(&x->out, n)) {
        free(at);
        memset(x->scount, 0, sizeof x->scount);
        return shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for %zu halo boids", n);
    }
    x->out.n = n;
    pack_ctx c = {.x = x, .s = s, .at = at};
    parallel_region_n(pack_thread, &c, x->threads);
    free(at);
    return SHOAL_OK;
}

/* The far boids by rank (every rank, when any has one): counts all to all, then the boids.
 * Appended to x->in. */
static shoal_status xchg_far(xchg *x, const shoal_sim *s, shoal_error *e)
{
    int R = mpi_size();
    shoal_status st = SHOAL_OK;
    if (!x->far_cnt && !(x->far_cnt = calloc((size_t)R * 5, sizeof(int))))
        st = shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for far boids");
    size_t n = 0;
    for (int t = 0; t < x->threads; t++)
        n += x->far[t].n;
    if (!st && !boid_buf_reserve(&x->far_out, n))
        st = shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for %zu far boids", n);
    if ((st = comm_agree(st, e)))
        return st;
    int *sc = x->far_cnt, *sd = sc + R, *rc = sc + 2 * R, *rd = sc + 3 * R, *fill = sc + 4 * R;
    memset(sc, 0, (size_t)R * sizeof(int));
    for (int t = 0; t < x->threads; t++)
        for (size_t i = 0; i < x->far[t].n; i++)
            sc[x->far[t].e[i] & 0xffffffffu]++;
    for (int r = 0, at = 0; r < R; r++) {
        sd[r] = fill[r] = at;
        at += sc[r];
    }
    for (int t = 0; t < x->threads; t++)
        for (size_t i = 0; i < x->far[t].n; i++) {
            uint32_t slot = (uint32_t)(x->far[t].e[i] >> 32);
            part_gather(s, &slot, 1, &x->far_out.b[fill[x->far[t].e[i] & 0xffffffffu]++]);
        }
    MPI_Alltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, MPI_COMM_WORLD);
    size_t rn = 0;
    for (int r = 0; r < R; r++) {
        rd[r] = (int)rn;
        rn += (size_t)rc[r];
    }
    size_t at = x->in.n;
    if (!boid_buf_reserve(&x->in, at + rn))
        st = shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for %zu far boids", rn);
    if ((st = comm_agree(st, e)))
        return st;
    MPI_Alltoallv(x->far_out.b, sc, sd, comm_boid_type(), x->in.b + at, rc, rd, comm_boid_type(),
                  MPI_COMM_WORLD);
    x->in.n = at + rn;
    return SHOAL_OK;
}

shoal_status xchg_run(xchg *x, const shoal_sim *s, int any_far, shoal_error *e)
{
    const decomp *d = x->d;
    MPI_Request req[27];
    MPI_Message msg[27];
    int nr = 0, rcount[27];
    /* one message to every neighbour, empty or not, so that each receiver knows how many
     * to wait for without a round of counts; the receiver learns the size by probing */
    for (int k = 0; k < 27; k++)
        if (d->nbr[k] != MPI_PROC_NULL)
            MPI_Isend(x->out.b + x->sdisp[k], x->scount[k], comm_boid_type(), d->nbr[k],
                      XCHG_TAG + k, d->cart, &req[nr++]);
    size_t rn = 0;
    for (int k = 0; k < 27; k++) {
        rcount[k] = 0;
        if (d->nbr[k] == MPI_PROC_NULL)
            continue;
        MPI_Status stt;
        MPI_Mprobe(d->nbr[k], XCHG_TAG + 26 - k, d->cart, &msg[k], &stt);
        MPI_Get_count(&stt, comm_boid_type(), &rcount[k]);
        rn += (size_t)rcount[k];
    }
    shoal_status st = SHOAL_OK;
    int room = boid_buf_reserve(&x->in, rn);
    if (!room)
        st = shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for %zu arriving boids", rn);
    size_t at = 0;
    for (int k = 0; k < 27; k++) {
        if (d->nbr[k] == MPI_PROC_NULL)
            continue;
        /* without room the message is still taken (truncated to nothing): the failure is
         * agreed after, and no rank is left waiting */
        MPI_Mrecv(room ? x->in.b + at : NULL, room ? rcount[k] : 0, comm_boid_type(), &msg[k],
                  MPI_STATUS_IGNORE);
        at += room ? (size_t)rcount[k] : 0;
    }
    MPI_Waitall(nr, req, MPI_STATUSES_IGNORE);
    x->in.n = at;
    /* a failure so far is this rank's alone (the step's reduction makes it every rank's);
     * the fallback agrees its own (x->agreed) */
    x->agreed = 0;
    if (any_far) {
        shoal_error fe;
        shoal_status fst = xchg_far(x, s, &fe);
        if (fst) {
            x->agreed = 1;
            *e = fe;
            return fst;
        }
    }
    return st;
}
