/* SPDX-License-Identifier: MIT */
/* The halo exchange (docs/ARCHITECTURE.md "MPI", halo): every owned boid of a brick's
 * boundary layer to each neighbouring brick whose halo holds its cell, non-blocking with
 * the (up to) 26 neighbours. */
#include "mpi_internal.h"

#include <stdlib.h>
#include <string.h>

/* The halo: every owned boid in a boundary layer of the brick goes to each neighbour whose
 * halo holds its cell; `halo` becomes the boids received. Non-blocking sends and receives
 * with the (up to) 26 neighbours. Collective among neighbours. */
static int goes_to(unsigned m, int k)
{
    for (int a = 0; a < 3; a++) {
        int dk = (a == 0 ? k % 3 : a == 1 ? k / 3 % 3 : k / 9) - 1;
        if (!(dk == 0 || (dk < 0 && (m >> (2 * a) & 1)) || (dk > 0 && (m >> (2 * a) & 2))))
            return 0;
    }
    return 1;
}

shoal_status halo_begin(halo_xfer *x, const decomp *d, const shoal_sim *s, const boid_buf *own,
                        boid_buf *halo, boid_buf *out, unsigned char **mask_out, uint64_t *sent,
                        shoal_error *e)
{
    int *scount = x->scount, *rcount = x->rcount, *sdisp = x->sdisp, *rdisp = x->rdisp;
    memset(x->scount, 0, sizeof x->scount);
    memset(x->rcount, 0, sizeof x->rcount);
    x->nr = 0;
    x->done = 1;
    x->halo = halo;
    x->rn = 0;
    x->t_begin = x->t_arrived = shoal_profile_now_ns();
    x->ns_waited = 0;
    int any_nbr = 0;
    for (int k = 0; k < 27; k++)
        any_nbr |= d->nbr[k] != MPI_PROC_NULL;
    halo->n = 0;
    *sent = 0;
    if (!any_nbr) /* one brick: no halo (every rank agrees: the rank grid is 1x1x1) */
        return SHOAL_OK;
    unsigned char *mask = realloc(*mask_out, own->n + 1);
    shoal_status st = mask ? SHOAL_OK : SHOAL_ERR_NOMEM;
    if (mask)
        *mask_out = mask;
    if (!st) {
        migrate_pass(d, s, own, NULL, mask, 0, 0, NULL);
        for (size_t i = 0; i < own->n; i++) {
            if (!(mask[i] & HALO_SIDES))
                continue;
            for (int k = 0; k < 27; k++)
                if (d->nbr[k] != MPI_PROC_NULL && goes_to(mask[i], k))
                    scount[k]++;
        }
    }
    size_t sn = 0;
    for (int k = 0; k < 27; k++) {
        sdisp[k] = (int)sn;
        sn += (size_t)scount[k];
    }
    if (!st && !boid_buf_reserve(out, sn))
        st = SHOAL_ERR_NOMEM;
    if (!st) {
        int fill[27];
        memcpy(fill, sdisp, sizeof fill);
        for (size_t i = 0; i < own->n; i++) {
            if (!(mask[i] & HALO_SIDES))
                continue;
            for (int k = 0; k < 27; k++)
                if (d->nbr[k] != MPI_PROC_NULL && goes_to(mask[i], k))
                    out->b[fill[k]++] = own->b[i];
        }
    }
    if (comm_agree(st ? shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for the halo") : st, e))
        return e->status;
    MPI_Request *req = x->req;
    int nr = 0;
    /* what the neighbour in direction k sends me, it sends in its direction 26 - k */
    for (int k = 0; k < 27; k++) {
        if (d->nbr[k] == MPI_PROC_NULL)
            continue;
        MPI_Irecv(&rcount[k], 1, MPI_INT, d->nbr[k], 26 - k, d->cart, &req[nr++]);
        MPI_Isend(&scount[k], 1, MPI_INT, d->nbr[k], k, d->cart, &req[nr++]);
    }
    MPI_Waitall(nr, req, MPI_STATUSES_IGNORE);
    size_t rn = 0;
    for (int k = 0; k < 27; k++) {
        rdisp[k] = (int)rn;
        rn += (size_t)rcount[k];
    }
    if (!boid_buf_reserve(halo, rn))
        st = SHOAL_ERR_NOMEM;
    if (comm_agree(st ? shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for the halo") : st, e))
        return e->status;
    /* the boids themselves: posted here, completed by halo_end (halo_poll moves them along
     * meanwhile) */
    nr = 0;
    for (int k = 0; k < 27; k++) {
        if (d->nbr[k] == MPI_PROC_NULL)
            continue;
        if (rcount[k])
            MPI_Irecv(halo->b + rdisp[k], rcount[k], comm_boid_type(), d->nbr[k], 100 + 26 - k,
                      d->cart, &req[nr++]);
        if (scount[k])
            MPI_Isend(out->b + sdisp[k], scount[k], comm_boid_type(), d->nbr[k], 100 + k, d->cart,
                      &req[nr++]);
    }
    x->nr = nr;
    x->rn = rn;
    x->done = nr == 0;
    *sent = sn;
    return SHOAL_OK;
}

void halo_poll(void *p)
{
    halo_xfer *x = p;
    if (x->done)
        return;
    int flag = 0;
    MPI_Testall(x->nr, x->req, &flag, MPI_STATUSES_IGNORE);
    if (flag) {
        x->done = 1;
        x->t_arrived = shoal_profile_now_ns();
    }
}

void halo_end(halo_xfer *x)
{
    uint64_t t0 = shoal_profile_now_ns();
    if (!x->done) {
        MPI_Waitall(x->nr, x->req, MPI_STATUSES_IGNORE);
        x->done = 1;
        x->t_arrived = shoal_profile_now_ns();
    }
    x->ns_waited = shoal_profile_now_ns() - t0;
    x->halo->n = x->rn;
}
