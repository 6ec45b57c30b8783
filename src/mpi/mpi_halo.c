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

/* The exchange's message tag: each neighbour sends each other one message a step (MPI keeps
 * the order of messages between two ranks). */
#define XCHG_TAG 200

void xchg_free(xchg *x)
{
    for (int t = 0; t < SHOAL_MAX_THREADS; t++) {
        free(x->list[t].e);
        free(x->far[t].e);
    }
    free(x->scount);
    free(x->sdisp);
    free(x->rcount);
    free(x->at);
    free(x->req);
    free(x->msg);
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

/* The bricks of one level's cuts that own cell planes c - 1 .. c + 1: *k0 and the *m
 * after it (k0 .. k0 + m - 1, modulo P where the axis wraps: each brick once). Clipped to
 * the grid, or on a periodic axis wrapped (brick P - 1 and brick 0 meet at the seam).
 * `mine` >= 0: the range of my brick on this level is cut[mine] .. cut[mine + 1] (its slab
 * or column is mine), and plane c inside it needs no search. */
static inline void owners_near(const int32_t *cut, int P, int32_t n, int wrap, int mine, int32_t c,
                               int *k0, int *m)
{
    if (!wrap) {
        int k1;
        if (mine >= 0 && c >= cut[mine] && c < cut[mine + 1]) {
            *k0 = mine - (c == cut[mine] && c > 0);
            k1 = mine + (c == cut[mine + 1] - 1 && c < n - 1);
        } else {
            *k0 = decomp_owner(cut, P, c > 0 ? c - 1 : 0);
            k1 = decomp_owner(cut, P, c < n - 1 ? c + 1 : n - 1);
        }
        *m = k1 - *k0 + 1;
        return;
    }
    /* the owners of c - 1, c and c + 1 step by 0 or 1 brick (modulo P) from one to the next */
    int a = decomp_owner(cut, P, c > 0 ? c - 1 : n - 1), b = decomp_owner(cut, P, c),
        d = decomp_owner(cut, P, c < n - 1 ? c + 1 : 0);
    int s = (b != a) + (d != b) + 1;
    *k0 = a;
    *m = s < P ? s : P;
}

/* part_edge_fn (worker threads; writes thread t's lists and counters only): every rank
 * whose brick or halo holds whole-grid cell c, but this one, gets the boid at slot. Those
 * are the owners of the cells within one of c: the z slabs of planes c - 1 .. c + 1, in
 * each of them the columns of those y planes, in each column the bricks of those x planes
 * (every brick is a box). On a periodic axis c - 1 and c + 1 wrap, as part_set_box's halo
 * does. */
static void xchg_edge(void *p, int t, uint32_t slot, const int32_t c[3])
{
    xchg *x = p;
    const decomp *d = x->d;
    const int me = d->rank;
    int inside = 1;
    for (int a = 0; a < 3; a++)
        inside &= c[a] >= d->lo[a] && c[a] < d->hi[a];
    const int owner = inside ? me : decomp_rank_of(d, c);
    int z0, zn;
    owners_near(decomp_cuts(d, 2, 0, 0), d->P[2], d->gd[2], d->wrap[2], d->me[2], c[2], &z0, &zn);
    for (int iz = 0; iz < zn; iz++) {
        int kz = z0 + iz < d->P[2] ? z0 + iz : z0 + iz - d->P[2];
        int y0, yn;
        owners_near(decomp_cuts(d, 1, kz, 0), d->P[1], d->gd[1], d->wrap[1],
                    kz == d->me[2] ? d->me[1] : -1, c[1], &y0, &yn);
        for (int iy = 0; iy < yn; iy++) {
            int ky = y0 + iy < d->P[1] ? y0 + iy : y0 + iy - d->P[1];
            int x0, xn;
            owners_near(decomp_cuts(d, 0, kz, ky), d->P[0], d->gd[0], d->wrap[0],
                        kz == d->me[2] && ky == d->me[1] ? d->me[0] : -1, c[0], &x0, &xn);
            for (int ix = 0; ix < xn; ix++) {
                int kx = x0 + ix < d->P[0] ? x0 + ix : x0 + ix - d->P[0];
                int r = d->rank_at[kx + d->P[0] * (ky + d->P[1] * kz)];
                if (r == me)
                    continue; /* mine: part_classify keeps it when its cell is in my sub-box */
                if (r == owner)
                    x->list[t].migrated++;
                else
                    x->list[t].halo++;
                int k = d->nbr_of[r];
                if (k >= 0)
                    list_push(&x->list[t], (uint64_t)slot << 16 | (uint64_t)k);
                else
                    list_push(&x->far[t], (uint64_t)slot << 32 | (uint64_t)r);
            }
        }
    }
}

/* Room in the per-neighbour arrays for d->nn neighbours and `threads` threads. */
static int xchg_room(xchg *x, const decomp *d, int threads)
{
    int need = d->nn > 0 ? d->nn : 1;
    if (need <= x->cap && threads <= x->cap_threads)
        return 1;
    free(x->scount);
    free(x->sdisp);
    free(x->rcount);
    free(x->at);
    free(x->req);
    free(x->msg);
    x->scount = malloc((size_t)need * sizeof(int));
    x->sdisp = malloc((size_t)need * sizeof(int));
    x->rcount = malloc((size_t)need * sizeof(int));
    x->at = malloc((size_t)need * (size_t)threads * sizeof(int));
    x->req = malloc((size_t)need * sizeof(MPI_Request));
    x->msg = malloc((size_t)need * sizeof(MPI_Message));
    int ok = x->scount && x->sdisp && x->rcount && x->at && x->req && x->msg;
    x->cap = ok ? need : 0;
    x->cap_threads = ok ? threads : 0;
    return ok;
}

shoal_status xchg_classify(xchg *x, const decomp *d, shoal_sim *s, int next, int *far,
                           uint64_t *halo, uint64_t *migrated)
{
    x->d = d;
    x->threads = part_thread_count(s);
    *far = 0;
    *halo = *migrated = 0;
    if (!xchg_room(x, d, x->threads))
        return SHOAL_ERR_NOMEM;
    for (int t = 0; t < x->threads; t++) {
        x->list[t].n = x->far[t].n = 0;
        x->list[t].oom = x->far[t].oom = 0;
        x->list[t].halo = x->list[t].migrated = 0;
    }
    part_classify(s, next, xchg_edge, x);
    int oom = 0;
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
} pack_ctx;

/* Every thread of the region packs its own list (in list order) at its offsets. */
static void pack_thread(void *p, int t, int nt)
{
    (void)nt;
    pack_ctx *c = p;
    if (t >= c->x->threads)
        return;
    const xchg_list *l = &c->x->list[t];
    int *at = c->x->at + (size_t)t * (size_t)c->x->d->nn;
    for (size_t i = 0; i < l->n; i++) {
        uint32_t slot = (uint32_t)(l->e[i] >> 16);
        int k = (int)(l->e[i] & 0xffff);
        part_gather(c->s, &slot, 1, &c->x->out.b[at[k]++]);
    }
}

shoal_status xchg_pack(xchg *x, const shoal_sim *s, shoal_error *e)
{
    const int nn = x->d->nn;
    int *at = x->at;
    memset(at, 0, (size_t)x->threads * (size_t)nn * sizeof *at);
    for (int t = 0; t < x->threads; t++)
        for (size_t i = 0; i < x->list[t].n; i++)
            at[(size_t)t * (size_t)nn + (x->list[t].e[i] & 0xffff)]++;
    size_t n = 0;
    for (int k = 0; k < nn; k++) {
        x->sdisp[k] = (int)n;
        for (int t = 0; t < x->threads; t++) {
            int c = at[(size_t)t * (size_t)nn + (size_t)k];
            at[(size_t)t * (size_t)nn + (size_t)k] = (int)n;
            n += (size_t)c;
        }
        x->scount[k] = (int)n - x->sdisp[k];
    }
    if (!boid_buf_reserve(&x->out, n)) {
        memset(x->scount, 0, (size_t)nn * sizeof *x->scount);
        return shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for %zu halo boids", n);
    }
    x->out.n = n;
    pack_ctx c = {.x = x, .s = s};
    parallel_region_n(pack_thread, &c, x->threads);
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
    const int nn = d->nn;
    /* one message to every neighbour, empty or not, so that each receiver knows how many
     * to wait for without a round of counts; the receiver learns the size by probing */
    for (int k = 0; k < nn; k++)
        MPI_Isend(x->out.b + x->sdisp[k], x->scount[k], comm_boid_type(), d->nbr[k], XCHG_TAG,
                  d->cart, &x->req[k]);
    size_t rn = 0;
    for (int k = 0; k < nn; k++) {
        MPI_Status stt;
        MPI_Mprobe(d->nbr[k], XCHG_TAG, d->cart, &x->msg[k], &stt);
        MPI_Get_count(&stt, comm_boid_type(), &x->rcount[k]);
        rn += (size_t)x->rcount[k];
    }
    shoal_status st = SHOAL_OK;
    int room = boid_buf_reserve(&x->in, rn);
    if (!room)
        st = shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for %zu arriving boids", rn);
    size_t at = 0;
    for (int k = 0; k < nn; k++) {
        /* without room the message is still taken (truncated to nothing): the failure is
         * agreed after, and no rank is left waiting */
        MPI_Mrecv(room ? x->in.b + at : NULL, room ? x->rcount[k] : 0, comm_boid_type(), &x->msg[k],
                  MPI_STATUS_IGNORE);
        at += room ? (size_t)x->rcount[k] : 0;
    }
    MPI_Waitall(nn, x->req, MPI_STATUSES_IGNORE);
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
