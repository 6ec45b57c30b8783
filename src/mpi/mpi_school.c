/* SPDX-License-Identifier: MIT */
/* A school stepped over the ranks (docs/ARCHITECTURE.md "MPI"): each rank's boids, the
 * decomposition they step in, the step loop (migration, re-cuts, predators, halo, the
 * library's part step), back to rows, gathering, --stats; and step/init on files. The
 * stepping itself is the library's (sim/part.h): src/mpi only moves boids. */
#include "mpi_internal.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Re-cut when the imbalance (max / mean boids per rank) passes this, and has grown by 5%
 * since the last cut (a school the product of three 1-D cuts cannot balance better would
 * otherwise be re-cut every step). 1.2: a step takes as long as its slowest rank, so 20%
 * idle on the others is where a re-cut (one histogram reduction and one migration, about
 * a step's communication) pays for itself within a few steps. */
#define RECUT_IMBALANCE 1.2
#define RECUT_GROWTH 1.05

typedef struct run_stats {
    uint64_t halo_boids, migrated, recuts, steps;
    uint64_t steps_migrating; /* steps in which some boid changed rank (with --stats) */
    double imbalance_sum, imbalance_max;
    uint64_t ns_comm, ns_compute, ns_composite, ns_loop;
    uint64_t ns_halo_hidden, ns_halo_waited; /* the halo in flight behind the interior, after */
    uint64_t steps_split;                    /* steps whose forces ran in two parts */
} run_stats;

/* What a step depends on besides the boids, as this rank has it: the desc (its threads and
 * ISA change no bit), the obstacle field and the state beyond the boids. */
static uint64_t hash_sim(const shoal_sim *s)
{
    const shoal_sim_desc *d = shoal_sim_get_desc(s);
    uint64_t h = COMM_HASH_SEED;
    h = comm_hash(h, &d->model, sizeof d->model);
    h = comm_hash(h, &d->params, sizeof d->params);
    uint64_t u[3] = {(uint64_t)d->boid_count, d->seed, (uint64_t)d->neighbors};
    double t[2] = {d->dt_s, d->t0_s};
    h = comm_hash(h, u, sizeof u);
    h = comm_hash(h, t, sizeof t);
    shoal_field_view f = shoal_sim_field(s);
    h = comm_hash(h, f.origin, sizeof f.origin);
    h = comm_hash(h, &f.cell_size, sizeof f.cell_size);
    h = comm_hash(h, f.dims, sizeof f.dims);
    if (f.vectors)
        h = comm_hash(h, f.vectors,
                      3 * sizeof(float) * (size_t)f.dims[0] * (size_t)f.dims[1] *
                          (size_t)f.dims[2]);
    shoal_sim_checkpoint ck;
    shoal_sim_get_checkpoint(s, &ck);
    h = comm_hash(h, &ck, sizeof ck);
    return h;
}

#define SCHOOL_DIFFERS                                                                             \
    "the model, parameters, obstacles or checkpoint differ from rank 0's (a scene or mesh "        \
    "file that reads differently here?)"

static void school_print_stats(const char *cmd, const run_stats *rs, const decomp *d, size_t total,
                               long long steps, uint64_t ns_io, const shoal_sim *s)
{
    uint64_t loc[6] = {rs->ns_comm, rs->ns_compute,     rs->ns_composite,
                       rs->ns_loop, rs->ns_halo_hidden, rs->ns_halo_waited},
             mx[6], sum[6];
    MPI_Reduce(loc, mx, 6, MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(loc, sum, 6, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    uint64_t cnt[2] = {rs->halo_boids, rs->migrated}, cs[2];
    MPI_Reduce(cnt, cs, 2, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (mpi_rank() != 0)
        return;
    double k = steps > 0 ? (double)steps : 1.0;
    int threads = part_thread_count(s);
    fprintf(stderr,
            "shoal %s (MPI): %d ranks as %dx%dx%d bricks, %d threads per rank, %zu boids, "
            "%lld steps, %zu bytes per boid on the wire\n",
            cmd, mpi_size(), d->P[0], d->P[1], d->P[2], threads, total, steps, sizeof(part_boid));
    fprintf(stderr,
            "  per step (all ranks): halo %.0f boids sent (%.0f bytes), %.1f boids migrated "
            "(in %llu of %lld steps)\n",
            (double)cs[0] / k, (double)cs[0] * sizeof(part_boid) / k, (double)cs[1] / k,
            (unsigned long long)rs->steps_migrating, steps > 0 ? steps - 1 : 0);
    fprintf(stderr, "  imbalance (max/mean boids per rank): mean %.3f, max %.3f; %llu re-cuts\n",
            rs->steps ? rs->imbalance_sum / (double)rs->steps : 1.0, rs->imbalance_max,
            (unsigned long long)rs->recuts);
    double comm = (double)sum[0], comp = (double)sum[1];
    fprintf(stderr,
            "  time per step: compute %.3f ms (slowest rank), communication %.3f ms (slowest "
            "rank); communication share %.1f%% (mean over ranks); file I/O %.1f ms in all\n",
            (double)mx[1] * 1e-6 / k, (double)mx[0] * 1e-6 / k,
            comm + comp > 0 ? 100.0 * comm / (comm + comp) : 0.0, (double)ns_io * 1e-6);
    fprintf(stderr, "  wall per step: %.3f ms (the slowest rank's loop over the steps / steps)\n",
            (double)mx[3] * 1e-6 / k);
    double rk = (double)mpi_size() * k;
    fprintf(stderr,
            "  halo overlap: %llu of %lld steps with the interior's forces while the halo moved; "
            "per step the halo was in flight %.3f ms behind them and waited for %.3f ms after "
            "(mean over ranks; slowest rank %.3f and %.3f)\n",
            (unsigned long long)rs->steps_split, steps, (double)sum[4] * 1e-6 / rk,
            (double)sum[5] * 1e-6 / rk, (double)mx[4] * 1e-6 / k, (double)mx[5] * 1e-6 / k);
}

/* The rank's part of a school and the decomposition it steps in. Made from this rank's
 * rows (any rows: the first start migrates every boid to the rank owning its cell). */
struct mpi_school {
    shoal_sim_desc d;
    shoal_sim *s; /* the part (sim/part.h): predators, targets and time are replicated */
    boid_buf own, all, tmp;
    boid_buf res, near;    /* a split step: the new state, the boundary layers' boids */
    unsigned char *mask;   /* per owned boid: its halo sides and HALO_NEAR */
    int overlap;           /* split steps (SHOAL_MPI_OVERLAP=0: not) */
    files_out o_ck, o_out; /* staged outputs (mpi_school_stage) */
    int have_ck, have_out;
    size_t total;
    decomp dd;
    int started, preds, stats;
    uint64_t ns_io; /* reading its file, writing its outputs */
    double base;    /* the imbalance after the last cut */
    long long steps_done;
    run_stats rs;
    float tgt[SHOAL_MAX_PREDATORS][3];
};

/* A school of d->boid_count boids from this rank's own boids b (taken over; n of them). */
static shoal_status school_create(const shoal_sim_desc *d, part_boid *b, size_t n, mpi_school **out,
                                  shoal_error *e)
{
    *out = NULL;
    mpi_school *m = calloc(1, sizeof *m);
    shoal_status st =
        m ? SHOAL_OK : shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for the school");
    if (!st) {
        m->d = *d;
        m->total = d->boid_count;
        m->dd.cart = MPI_COMM_NULL;
        m->base = 1.0;
        const char *ov = getenv("SHOAL_MPI_OVERLAP");
        m->overlap = !(ov && strcmp(ov, "0") == 0);
        m->preds = d->params.predator_count > 0;
        m->own.b = b;
        m->own.n = m->own.cap = n;
        b = NULL;
        st = part_create(&m->d, &m->s, e);
    }
    free(b);
    st = comm_agree(st, e);
    if (st) {
        mpi_school_destroy(m);
        return st;
    }
    *out = m;
    return SHOAL_OK;
}

/* The decomposition: the rank grid, the first cut by count and every boid to its brick. */
static shoal_status school_start(mpi_school *m, shoal_error *e)
{
    if (m->started)
        return SHOAL_OK;
    /* every rank read the same scene, meshes and checkpoint (a file that differs between
     * nodes would mix two runs) */
    shoal_status st = comm_same_as_rank0(hash_sim(m->s), SCHOOL_DIFFERS, e);
    if (st)
        return st;
    int32_t gd[3] = {1, 1, 1};
    part_grid_dims(m->s, gd);
    st = comm_agree(decomp_create(&m->dd, gd, e), e);
    uint64_t moved = 0;
    if (!st) {
        decomp_recut(&m->dd, m->s, &m->own);
        st = migrate_boids(&m->dd, m->s, &m->own, &m->tmp, 0, m->total, &moved, e);
        m->base = decomp_imbalance(m->own.n, m->total);
    }
    m->started = !st;
    return st;
}

static int any_neighbour(const decomp *d)
{
    for (int k = 0; k < 27; k++)
        if (d->nbr[k] != MPI_PROC_NULL)
            return 1;
    return 0;
}

/* The lowest non-finite row of any rank: the error of the step (agreed: every rank sees the
 * same minimum). step: the step's number in this call. */
static shoal_status school_bad(mpi_school *m, uint32_t bad, long long step, shoal_error *e)
{
    uint32_t bad_all = UINT32_MAX;
    MPI_Allreduce(&bad, &bad_all, 1, MPI_UINT32_T, MPI_MIN, MPI_COMM_WORLD);
    if (bad_all == UINT32_MAX)
        return SHOAL_OK;
    return shoal_error_set(e, SHOAL_ERR_NONFINITE,
                           "non-finite value in boid %u (input row) at step %llu "
                           "(t = %.6f s); state left as before that step",
                           bad_all, (unsigned long long)step, shoal_sim_time(m->s));
}

/* The forces of every owned boid in one part_step, after the whole halo arrived: one rank,
 * a rank grid of one brick (no halo), or SHOAL_MPI_OVERLAP=0 (for measurements). */
static shoal_status school_forces_whole(mpi_school *m, halo_xfer *hx, long long step,
                                        shoal_error *e)
{
    run_stats *rs = &m->rs;
    halo_end(hx); /* the whole halo first */
    rs->ns_halo_waited += hx->ns_waited;
    uint64_t t1 = shoal_profile_now_ns();
    shoal_status st = part_set_box(m->s, m->dd.lo, m->dd.hi, e);
    if (!st)
        st = part_load(m->s, m->own.b, m->own.n, m->all.b, m->all.n, e);
    if ((st = comm_agree(st, e)))
        return st;
    uint32_t bad = part_step(m->s);
    uint64_t t2 = shoal_profile_now_ns();
    if ((st = school_bad(m, bad, step, e)))
        return st;
    uint64_t t3 = shoal_profile_now_ns();
    if (m->preds && mpi_size() == 1)
        part_predator_targets(m->s, m->tgt);
    size_t got = part_extract(m->s, m->own.b);
    if (got == SIZE_MAX) /* out of memory (the offsets of its rows) */
        st = shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory extracting the boids");
    if ((st = comm_agree(st, e)))
        return st;
    m->own.n = got;
    uint64_t t4 = shoal_profile_now_ns();
    rs->ns_compute += (t2 - t1) + (t4 - t3);
    rs->ns_comm += t3 - t2;
    return SHOAL_OK;
}

/* A brick with neighbours, its halo in flight (hx): first the interior cells, whose 27
 * neighbour cells are all the brick's own (every owned boid loaded, forces on the interior
 * box: cells at least one layer from each face that has a neighbour), polling the halo
 * between chunks; then, the halo arrived, the boundary cells with what they reach (the
 * owned boids within two layers of such a face, HALO_NEAR, and the halo; forces on the
 * whole brick, kept for the boundary cells only). Each boid sums exactly the candidates of
 * one process in its order, so the bits are those of a single part_step. */
static shoal_status school_forces_split(mpi_school *m, halo_xfer *hx, long long step,
                                        shoal_error *e)
{
    run_stats *rs = &m->rs;
    const decomp *d = &m->dd;
    int32_t ilo[3], ihi[3];
    int interior = 1;
    for (int a = 0; a < 3; a++) {
        ilo[a] = d->lo[a] + (d->lo[a] > 0);
        ihi[a] = d->hi[a] - (d->hi[a] < d->gd[a]);
        interior &= ilo[a] < ihi[a];
    }
    uint64_t t1 = shoal_profile_now_ns();
    shoal_status st =
        boid_buf_reserve(&m->res, m->own.n) && boid_buf_reserve(&m->near, m->own.n)
            ? SHOAL_OK
            : shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for %zu boids", m->own.n);
    uint32_t bad = UINT32_MAX;
    size_t na = 0;
    if (!st && interior) {
        st = part_set_box(m->s, ilo, ihi, e);
        if (!st)
            st = part_load(m->s, m->own.b, m->own.n, NULL, 0, e);
    }
    if ((st = comm_agree(st, e))) {
        halo_end(hx); /* the messages are posted: take them before leaving */
        return st;
    }
    if (interior) {
        part_set_poll(m->s, halo_poll, hx);
        bad = part_step(m->s);
        part_set_poll(m->s, NULL, NULL);
        na = part_extract(m->s, m->res.b);
    }
    uint64_t t2 = shoal_profile_now_ns();
    halo_end(hx);
    uint64_t t3 = shoal_profile_now_ns();
    uint64_t arrived = hx->t_arrived < t2 ? hx->t_arrived : t2;
    rs->ns_halo_hidden += arrived > t1 ? arrived - t1 : 0;
    rs->ns_halo_waited += t3 - t2;
    size_t nn = 0;
    for (size_t i = 0; i < m->own.n; i++)
        if (m->mask[i] & HALO_NEAR)
            m->near.b[nn++] = m->own.b[i];
    st = na == SIZE_MAX ? shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory extracting the boids")
                        : SHOAL_OK;
    if (!st)
        st = part_set_box(m->s, d->lo, d->hi, e);
    if (!st)
        st = part_load(m->s, m->near.b, nn, m->all.b, m->all.n, e);
    if ((st = comm_agree(st, e)))
        return st;
    (void)part_step(m->s); /* its second layer's sums lack the interior: not kept */
    static const int32_t none[3] = {0, 0, 0};
    uint32_t bad_b = UINT32_MAX;
    size_t nb = part_extract_outside(m->s, interior ? ilo : none, interior ? ihi : none,
                                     m->res.b + na, &bad_b);
    bad = bad_b < bad ? bad_b : bad;
    if (nb == SIZE_MAX)
        st = shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory extracting the boids");
    else if (na + nb != m->own.n) /* every owned boid is in an interior or a boundary cell */
        st = shoal_error_set(e, SHOAL_ERR_INPUT, "internal: %zu + %zu boids after a step of %zu",
                             na, nb, m->own.n);
    uint64_t t4 = shoal_profile_now_ns();
    if ((st = comm_agree(st, e)))
        return st;
    if ((st = school_bad(m, bad, step, e)))
        return st;
    m->res.n = na + nb;
    boid_buf t = m->own;
    m->own = m->res;
    m->res = t;
    uint64_t t5 = shoal_profile_now_ns();
    rs->ns_compute += (t2 - t1) + (t4 - t3);
    rs->ns_comm += (t3 - t2) + (t5 - t4);
    rs->steps_split++;
    return SHOAL_OK;
}

static shoal_status school_step(mpi_school *m, long long steps, shoal_error *e)
{
    shoal_status st = school_start(m, e);
    run_stats *rs = &m->rs;
    uint64_t moved = 0, t_loop = shoal_profile_now_ns();
    for (long long k = 0; k < steps && !st; k++) {
        uint64_t t0 = shoal_profile_now_ns();
        if (m->steps_done > 0) { /* the last step moved boids across brick faces */
            st = migrate_boids(&m->dd, m->s, &m->own, &m->tmp, 0, m->total, &moved, e);
            if (st)
                break;
            rs->migrated += moved;
            if (m->stats) {
                unsigned long long mv = moved, all_m = 0;
                MPI_Allreduce(&mv, &all_m, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
                rs->steps_migrating += all_m > 0;
            }
        }
        double imb = decomp_imbalance(m->own.n, m->total);
        if (imb > RECUT_IMBALANCE && imb > m->base * RECUT_GROWTH) {
            decomp_recut(&m->dd, m->s, &m->own);
            st = migrate_boids(&m->dd, m->s, &m->own, &m->tmp, 0, m->total, &moved, e);
            if (st)
                break;
            rs->migrated += moved;
            rs->recuts++;
            imb = m->base = decomp_imbalance(m->own.n, m->total);
        }
        rs->imbalance_sum += imb;
        rs->imbalance_max = imb > rs->imbalance_max ? imb : rs->imbalance_max;
        if (m->preds && mpi_size() > 1 && m->d.params.predator_chase >= 1.0f) {
            float centre[3] = {0, 0, 0};
            st = preds_centre(m->s, &m->own, m->total, centre, e);
            if (st)
                break;
            for (int q = 0; q < m->d.params.predator_count; q++)
                memcpy(m->tgt[q], centre, sizeof centre);
        } else if (m->preds && mpi_size() > 1) {
            preds_nearest(m->s, &m->own, m->tgt);
        }
        uint64_t sent = 0;
        halo_xfer hx;
        st = halo_begin(&hx, &m->dd, m->s, &m->own, &m->all, &m->tmp, &m->mask, &sent, e);
        if (st)
            break;
        rs->halo_boids += sent;
        uint64_t t1 = shoal_profile_now_ns();
        rs->ns_comm += t1 - t0;
        /* with neighbours: the interior's forces while the halo moves, then the boundary */
        st = any_neighbour(&m->dd) && m->overlap ? school_forces_split(m, &hx, k + 1, e)
                                                 : school_forces_whole(m, &hx, k + 1, e);
        if (st)
            break;
        part_finish_step(m->s, m->tgt);
        rs->steps++;
        m->steps_done++;
    }
    rs->ns_loop += shoal_profile_now_ns() - t_loop;
    return st;
}

/* Every rank's boids back to rows: rank k gets rows [N k / R, N (k+1) / R) in *rows (n x 6
 * floats, malloc'd; *first, *n set). Collective; the outcome is agreed. */
static shoal_status school_rows(mpi_school *m, float **rows_res, size_t *first_out, size_t *n_out,
                                shoal_error *e)
{
    uint64_t moved = 0;
    float *rows = NULL;
    size_t first = comm_range_first(m->total, mpi_rank()),
           n = comm_range_first(m->total, mpi_rank() + 1) - first;
    /* a school never stepped (init) holds its rows as it was made: rank k those it writes;
     * one that stepped sends every boid to the rank that writes its row */
    shoal_status st = m->started
                          ? migrate_boids(&m->dd, m->s, &m->own, &m->tmp, 1, m->total, &moved, e)
                          : comm_same_as_rank0(hash_sim(m->s), SCHOOL_DIFFERS, e);
    if (!st) {
        rows = malloc(n * 6 * sizeof(float) + 1);
        if (!rows || m->own.n != n)
            st = shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for %zu rows", n);
        for (size_t i = 0; !st && i < m->own.n; i++)
            memcpy(rows + (m->own.b[i].row - first) * 6, m->own.b[i].s, 6 * sizeof(float));
        st = comm_agree(st, e);
    }
    if (st) {
        free(rows);
        rows = NULL;
    }
    *rows_res = rows;
    *first_out = first;
    *n_out = n;
    return st;
}

/* Drop the staged outputs that were not committed (their temporaries removed). */
static void school_abort_outputs(mpi_school *m)
{
    if (m->have_ck)
        files_out_abort(&m->o_ck);
    if (m->have_out)
        files_out_abort(&m->o_out);
    m->have_ck = m->have_out = 0;
}

void mpi_school_destroy(mpi_school *m)
{
    if (!m)
        return;
    school_abort_outputs(m);
    boid_buf_free(&m->own);
    boid_buf_free(&m->all);
    boid_buf_free(&m->tmp);
    boid_buf_free(&m->res);
    boid_buf_free(&m->near);
    free(m->mask);
    decomp_free(&m->dd);
    shoal_sim_destroy(m->s);
    free(m);
}

shoal_status mpi_school_create(const shoal_sim_desc *d, mpi_school **out, shoal_error *e)
{
    *out = NULL;
    size_t total = d->boid_count;
    if (total < 1 || total > (size_t)UINT32_MAX - 64)
        return shoal_error_set(e, SHOAL_ERR_INPUT, "boid count %zu exceeds the limit %u", total,
                               UINT32_MAX - 64);
    size_t first = comm_range_first(total, mpi_rank()),
           n = comm_range_first(total, mpi_rank() + 1) - first;
    float *rows = malloc(n * 6 * sizeof(float) + 1);
    part_boid *b = malloc(n * sizeof *b + 1);
    shoal_status st = rows && b
                          ? SHOAL_OK
                          : shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for %zu boids", n);
    st = comm_agree(st, e);
    if (st) {
        free(rows);
        free(b);
        return st;
    }
    part_init_rows(d, first, n, rows);
    for (size_t i = 0; i < n; i++) {
        memcpy(b[i].s, rows + 6 * i, sizeof b[i].s);
        b[i].row = (uint32_t)(first + i);
    }
    free(rows);
    return school_create(d, b, n, out, e);
}

shoal_sim *mpi_school_sim(mpi_school *m) { return m->s; }

shoal_status mpi_school_step(mpi_school *m, long long steps, shoal_error *e)
{
    return school_step(m, steps, e);
}

size_t mpi_school_local_count(const mpi_school *m) { return m->own.n; }

void mpi_school_local(const mpi_school *m, float *const soa[6], uint32_t *row)
{
    for (size_t i = 0; i < m->own.n; i++) {
        for (int k = 0; k < 6; k++)
            soa[k][i] = m->own.b[i].s[k];
        row[i] = m->own.b[i].row;
    }
}

/* The whole state in row order on rank 0 (rows: N x 6 floats there; NULL elsewhere).
 * Collective; agreed. */
static shoal_status school_gather(mpi_school *m, float *rows, shoal_error *e)
{
    shoal_status st = SHOAL_OK;
    int *cnt = NULL;
    part_boid *all = NULL;
    if (mpi_rank() == 0) {
        cnt = malloc(2 * (size_t)mpi_size() * sizeof(int));
        all = malloc(m->total * sizeof *all + 1);
        if (!cnt || !all)
            st = shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory gathering %zu boids", m->total);
    }
    if (m->own.n > INT_MAX)
        st = shoal_error_set(e, SHOAL_ERR_INPUT, "%zu boids on one rank: too many to gather",
                             m->own.n);
    st = comm_agree(st, e);
    if (!st) {
        int mine = (int)m->own.n;
        MPI_Gather(&mine, 1, MPI_INT, cnt, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (mpi_rank() == 0)
            for (int r = 0, at = 0; r < mpi_size(); r++) {
                cnt[mpi_size() + r] = at;
                at += cnt[r];
            }
        MPI_Gatherv(m->own.b, mine, comm_boid_type(), all, cnt, cnt ? cnt + mpi_size() : NULL,
                    comm_boid_type(), 0, MPI_COMM_WORLD);
        if (mpi_rank() == 0)
            for (size_t i = 0; i < m->total; i++)
                memcpy(rows + 6 * (size_t)all[i].row, all[i].s, 6 * sizeof(float));
    }
    free(cnt);
    free(all);
    return st;
}

size_t mpi_school_count(const mpi_school *m) { return m->total; }

void mpi_school_want_stats(mpi_school *m) { m->stats = 1; }

void mpi_school_print_stats(mpi_school *m, const char *cmd)
{
    if (m->stats && mpi_rank() == 0) {
        char title[160];
        snprintf(title, sizeof title,
                 "shoal %s: %zu boids, %lld steps, %s, %d threads (rank 0 of %d)", cmd, m->total,
                 (long long)m->rs.steps, shoal_sim_isa_name(m->s), part_thread_count(m->s),
                 mpi_size());
        shoal_profile_write_table(shoal_sim_get_profile(m->s), stderr, title, 1);
    }
    school_print_stats(cmd, &m->rs, &m->dd, m->total, (long long)m->rs.steps, m->ns_io, m->s);
}

/* A school from the rows this rank read (b, n of total), d's count replaced by total. */
static shoal_status school_from_file(const shoal_sim_desc *d0, part_boid *b, size_t n, size_t total,
                                     uint64_t t0, mpi_school **out, shoal_error *e)
{
    shoal_sim_desc d = *d0;
    d.boid_count = total;
    shoal_status st = school_create(&d, b, n, out, e);
    if (!st)
        (*out)->ns_io = shoal_profile_now_ns() - t0;
    return st;
}

shoal_status mpi_school_read(const shoal_sim_desc *d, const char *path, mpi_school **out,
                             shoal_error *e)
{
    *out = NULL;
    uint64_t t0 = shoal_profile_now_ns();
    part_boid *b = NULL;
    size_t n = 0, total = 0;
    shoal_status st = files_read_state(path, &b, &n, &total, e);
    return st ? st : school_from_file(d, b, n, total, t0, out, e);
}

shoal_status mpi_school_resume(const shoal_sim_desc *d0, const char *path, mpi_school **out,
                               shoal_error *e)
{
    *out = NULL;
    uint64_t t0 = shoal_profile_now_ns();
    part_boid *b = NULL;
    size_t n = 0, total = 0;
    shoal_sim_desc d = *d0;
    shoal_sim_checkpoint ck;
    shoal_status st = files_read_checkpoint(path, &d, &b, &n, &total, &ck, e);
    if (!st)
        st = school_from_file(&d, b, n, total, t0, out, e);
    if (!st && (st = comm_agree(shoal_sim_set_checkpoint((*out)->s, &ck, e), e))) {
        mpi_school_destroy(*out);
        *out = NULL;
    }
    return st;
}

shoal_status mpi_school_stage(mpi_school *m, const char *out, const char *ckpt, shoal_error *e)
{
    uint64_t t0 = shoal_profile_now_ns();
    /* back to rows: rank k writes rows [N k / R, N (k+1) / R) */
    float *rows = NULL;
    size_t first = 0, n = 0;
    shoal_status st = school_rows(m, &rows, &first, &n, e);
    /* every output to its temporary; mpi_school_commit puts them in place */
    if (!st && ckpt && !(st = files_open_checkpoint(&m->o_ck, ckpt, m->s, m->total, e)) &&
        !(st = files_out_write(&m->o_ck, rows, first, n, e)))
        m->have_ck = 1;
    if (!st && out && !(st = files_open_state(&m->o_out, out, m->total, NAN, e)) &&
        !(st = files_out_write(&m->o_out, rows, first, n, e)))
        m->have_out = 1;
    if (st)
        school_abort_outputs(m);
    free(rows);
    m->ns_io += shoal_profile_now_ns() - t0;
    return st;
}

shoal_status mpi_school_commit(mpi_school *m, shoal_error *e)
{
    /* in one process's order (docs/CLI.md "Outputs"): the checkpoint, then --out */
    shoal_status st = SHOAL_OK;
    if (m->have_ck) {
        st = files_out_commit(&m->o_ck, e);
        m->have_ck = 0;
    }
    if (!st && m->have_out) {
        st = files_out_commit(&m->o_out, e);
        m->have_out = 0;
    }
    school_abort_outputs(m);
    return st;
}

shoal_status mpi_school_write(mpi_school *m, const char *out, const char *ckpt, shoal_error *e)
{
    shoal_status st = mpi_school_stage(m, out, ckpt, e);
    return st ? st : mpi_school_commit(m, e);
}

shoal_status mpi_school_write_frame(mpi_school *m, const char *path, double time, shoal_error *e)
{
    uint64_t t0 = shoal_profile_now_ns();
    float *rows = NULL;
    size_t first = 0, n = 0;
    files_out o;
    shoal_status st = school_rows(m, &rows, &first, &n, e);
    if (!st && !(st = files_open_state(&o, path, m->total, time, e)) &&
        !(st = files_out_write(&o, rows, first, n, e)))
        st = files_out_commit(&o, e);
    free(rows);
    m->ns_io += shoal_profile_now_ns() - t0;
    return st;
}

shoal_status mpi_school_frame(mpi_school *m, float fish_length, float aspect, shoal_camera *cam,
                              shoal_error *e)
{
    /* framed on rank 0 from the whole school (gathered there, 24 bytes a boid: give the
     * scene a camera to avoid it) and sent to every rank */
    size_t n = m->total;
    float *rows = mpi_rank() == 0 ? malloc(n * 6 * sizeof(float) + 1) : NULL, *soa = NULL;
    if (rows)
        soa = malloc(n * 3 * sizeof(float) + 1);
    shoal_status st =
        mpi_rank() != 0 || (rows && soa)
            ? SHOAL_OK
            : shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory framing %zu fish", n);
    if (!(st = comm_agree(st, e)))
        st = school_gather(m, rows, e);
    if (!st && mpi_rank() == 0) {
        for (size_t i = 0; i < n; i++)
            for (int k = 0; k < 3; k++)
                soa[(size_t)k * n + i] = rows[6 * i + (size_t)k];
        shoal_render_camera_frame(soa, soa + n, soa + 2 * n, n, fish_length, aspect, cam);
    }
    free(rows);
    free(soa);
    if (!st)
        MPI_Bcast(cam, (int)sizeof *cam, MPI_BYTE, 0, MPI_COMM_WORLD);
    return st;
}
