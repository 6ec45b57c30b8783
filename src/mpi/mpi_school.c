/* SPDX-License-Identifier: MIT */
/* A school stepped over the ranks (docs/ARCHITECTURE.md "MPI"): each rank's boids, the
 * decomposition they step in, the step loop (the one exchange of migrants and halo, re-cuts,
 * predators, the library's part step, the one reduction), back to rows, gathering, --stats
 * (a profile of every rank by stage); and step/init on files. The stepping itself is the
 * library's (sim/part.h), and the boids stay in the rank's part between steps: src/mpi only
 * moves the few that others need. */
#include "mpi_internal.h"

#include "core/profile.h"

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

/* The stages of a step beyond the sim's own (grid_assign, grid_scan, grid_scatter, forces:
 * the names one process shows), recorded into the part's profile (--stats, --trace) and
 * summed per rank. classify: finding the boids that others need and the next sort's keys
 * (part_classify); halo_pack: copying them into the messages; exchange: one message to and
 * from each neighbour (the transfer and the wait for the neighbour's previous step);
 * halo_unpack: the arrivals into the part; reduce: the step's one reduction (the non-finite
 * check, the jump and imbalance flags: the wait for the slowest rank); predators: their
 * targets over the ranks; migrate: whole-school moves (start, re-cut); file_io: reading and
 * writing states. */
enum {
    ST_CLASSIFY,
    ST_PACK,
    ST_EXCHANGE,
    ST_UNPACK,
    ST_REDUCE,
    ST_PREDATORS,
    ST_MIGRATE,
    ST_IO,
    ST_COUNT
};
static const char *const st_names[ST_COUNT] = {"classify", "halo_pack", "exchange", "halo_unpack",
                                               "reduce",   "predators", "migrate",  "file_io"};
#define SIM_STAGES SHOAL_SIM_STAGE_COUNT

typedef struct run_stats {
    uint64_t halo_boids, migrated, recuts, steps;
    uint64_t steps_migrating; /* steps in which some boid changed rank */
    uint64_t steps_far;       /* steps in which some boid jumped past the neighbours */
    double imbalance_sum, imbalance_max;
    uint64_t ns_loop;
    uint64_t ns_stage[ST_COUNT];
    double sim_ms[SIM_STAGES]; /* the sim's stages over the step loops */
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

#define SCHOOL_DIFFERS                                                                             \
    "the model, parameters, obstacles or checkpoint differ from rank 0's (a scene or mesh "        \
    "file that reads differently here?)"

/* The rank's part of a school and the decomposition it steps in. Made from this rank's
 * rows (any rows: the first start migrates every boid to the rank owning its cell). Once
 * started the boids live in the part (s); `own` is then scratch for whole-school moves. */
struct mpi_school {
    shoal_sim_desc d;
    shoal_sim *s; /* the part (sim/part.h): predators, targets and time are replicated */
    boid_buf own, tmp;
    xchg x;                /* the step's exchange */
    int pending;           /* x holds the classification of the current state */
    int far;               /* ... and some rank has a boid for a rank beyond its neighbours */
    double imb;            /* the imbalance of the last step (every rank's) */
    files_out o_ck, o_out; /* staged outputs (mpi_school_stage) */
    int have_ck, have_out;
    size_t total;
    decomp dd;
    int started, preds, stats;
    uint64_t ns_io; /* reading its file, writing its outputs */
    double base;    /* the imbalance after the last cut */
    long long steps_done;
    run_stats rs;
    shoal_profile *prof; /* where the stage ids below are */
    int stage_id[ST_COUNT];
    float tgt[SHOAL_MAX_PREDATORS][3];
};

/* Stage `k` took [t0, t1): into the part's profile (statistics and the trace, on thread 0's
 * track) and this rank's sums. */
static void school_stage(mpi_school *m, int k, uint64_t t0, uint64_t t1)
{
    prof *p = shoal_sim_get_profile(m->s);
    if (p != m->prof) {
        m->prof = p;
        for (int i = 0; i < ST_COUNT; i++)
            m->stage_id[i] = prof_stage(p, "mpi", st_names[i]);
    }
    if (m->started) /* (the first cut, before any step, is not a step's cost) */
        m->rs.ns_stage[k] += t1 - t0;
    if (m->stage_id[k] >= 0 && prof_on(p, PROF_STATS)) {
        prof_stage_define(p, m->stage_id[k], "mpi", st_names[k]);
        prof_stage_call(p, m->stage_id[k], t1 - t0);
    }
    if (prof_on(p, PROF_TRACE))
        prof_trace_span(p, 0, st_names[k], m->steps_done + 1, t0, t1);
}

static void sim_stage_ms(const shoal_sim *s, double ms[SIM_STAGES])
{
    shoal_stage_stats st[SIM_STAGES];
    size_t n = shoal_sim_get_stats(s, st, SIM_STAGES);
    for (size_t k = 0; k < SIM_STAGES; k++)
        ms[k] = k < n ? st[k].total_ms : 0.0;
}

/* --stats: the decomposition's numbers (slowest rank, sums over ranks) and a profile of
 * every rank by stage, ms per step. Collective. */
static void school_print_stats(const char *cmd, mpi_school *m, long long steps)
{
    const run_stats *rs = &m->rs;
    const decomp *d = &m->dd;
    enum { NV = SIM_STAGES + ST_COUNT + 6 };
    double v[NV], *all = NULL;
    for (int k = 0; k < SIM_STAGES; k++)
        v[k] = rs->sim_ms[k];
    for (int k = 0; k < ST_COUNT; k++)
        v[SIM_STAGES + k] = (double)rs->ns_stage[k] * 1e-6;
    v[SIM_STAGES + ST_IO] = (double)m->ns_io * 1e-6;
    v[NV - 6] = (double)rs->ns_loop * 1e-6;
    v[NV - 5] = (double)(m->started ? part_owned_count(m->s) : m->own.n);
    v[NV - 4] = (double)rs->halo_boids;
    v[NV - 3] = (double)rs->migrated;
    v[NV - 2] = rs->imbalance_sum;
    v[NV - 1] = rs->imbalance_max;
    int R = mpi_size();
    if (mpi_rank() == 0)
        all = malloc((size_t)R * NV * sizeof *all);
    MPI_Gather(v, NV, MPI_DOUBLE, all, NV, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (mpi_rank() != 0)
        return;
    if (!all) {
        fprintf(stderr, "shoal %s (MPI): out of memory for the statistics\n", cmd);
        return;
    }
    double k = steps > 0 ? (double)steps : 1.0;
    double halo = 0, migr = 0, comp_max = 0, comm_max = 0, loop_max = 0, comm_sum = 0, comp_sum = 0,
           io_max = 0;
    for (int r = 0; r < R; r++) {
        const double *x = all + (size_t)r * NV;
        double comp = 0, comm = 0;
        for (int q = 0; q < SIM_STAGES; q++)
            comp += x[q];
        for (int q = 0; q < ST_COUNT; q++)
            if (q != ST_IO)
                comm += x[SIM_STAGES + q];
        comp_max = comp > comp_max ? comp : comp_max;
        comm_max = comm > comm_max ? comm : comm_max;
        comp_sum += comp;
        comm_sum += comm;
        loop_max = x[NV - 6] > loop_max ? x[NV - 6] : loop_max;
        io_max = x[SIM_STAGES + ST_IO] > io_max ? x[SIM_STAGES + ST_IO] : io_max;
        halo += x[NV - 4];
        migr += x[NV - 3];
    }
    int threads = part_thread_count(m->s);
    fprintf(stderr,
            "shoal %s (MPI): %d ranks as %dx%dx%d bricks, %d threads per rank, %zu boids, "
            "%lld steps, %zu bytes per boid on the wire\n",
            cmd, R, d->P[0], d->P[1], d->P[2], threads, m->total, steps, sizeof(part_boid));
    fprintf(stderr,
            "  per step (all ranks): halo %.0f boids sent (%.0f bytes), %.1f boids migrated "
            "(in %llu of %lld steps)\n",
            halo / k, halo * sizeof(part_boid) / k, migr / k,
            (unsigned long long)rs->steps_migrating, steps);
    fprintf(stderr,
            "  boids that jumped past the neighbouring bricks (sent all to all) in %llu steps\n",
            (unsigned long long)rs->steps_far);
    fprintf(stderr, "  imbalance (max/mean boids per rank): mean %.3f, max %.3f; %llu re-cuts\n",
            rs->steps ? rs->imbalance_sum / (double)rs->steps : 1.0, rs->imbalance_max,
            (unsigned long long)rs->recuts);
    fprintf(stderr,
            "  time per step: compute %.3f ms (slowest rank), communication %.3f ms (slowest "
            "rank); communication share %.1f%% (mean over ranks); file I/O %.1f ms in all\n",
            comp_max / k, comm_max / k,
            comm_sum + comp_sum > 0 ? 100.0 * comm_sum / (comm_sum + comp_sum) : 0.0, io_max);
    fprintf(stderr, "  wall per step: %.3f ms (the slowest rank's loop over the steps / steps)\n",
            loop_max / k);
    /* the profile of every rank: what one process shows (the sim's stages), then MPI's */
    fprintf(stderr, "  per rank, ms per step (compute: the sim's stages; communication: MPI's):\n");
    fprintf(stderr, "  %4s", "rank");
    for (int q = 0; q < SIM_STAGES; q++)
        fprintf(stderr, " %12s", shoal_sim_stage_name((shoal_sim_stage)q));
    for (int q = 0; q < ST_COUNT; q++)
        if (q != ST_IO)
            fprintf(stderr, " %11s", st_names[q]);
    fprintf(stderr, " %9s %9s %9s %10s\n", "step", "boids", "halo", "file_io_ms");
    for (int r = 0; r < R; r++) {
        const double *x = all + (size_t)r * NV;
        fprintf(stderr, "  %4d", r);
        for (int q = 0; q < SIM_STAGES; q++)
            fprintf(stderr, " %12.3f", x[q] / k);
        for (int q = 0; q < ST_COUNT; q++)
            if (q != ST_IO)
                fprintf(stderr, " %11.3f", x[SIM_STAGES + q] / k);
        fprintf(stderr, " %9.3f %9.0f %9.0f %10.1f\n", x[NV - 6] / k, x[NV - 5], x[NV - 4] / k,
                x[SIM_STAGES + ST_IO]);
    }
    free(all);
}

/* A school of d->boid_count boids from this rank's own boids b (taken over; n of them). */
static shoal_status school_create(const shoal_sim_desc *d, part_boid *b, size_t n, mpi_school **out,
                                  shoal_error *e)
{
    *out = NULL;
    /* (aligned: the exchange's per-thread lists are a cache line each) */
    mpi_school *m = aligned_alloc(_Alignof(mpi_school), sizeof *m);
    if (m)
        memset(m, 0, sizeof *m);
    shoal_status st =
        m ? SHOAL_OK : shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for the school");
    if (!st) {
        m->d = *d;
        m->total = d->boid_count;
        m->dd.cart = MPI_COMM_NULL;
        m->base = m->imb = 1.0;
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

/* The rank's owned boids as one array (m->own): the part's when started (a copy; the part
 * keeps them), else the rows it was made from. Returns NULL when out of memory (this
 * rank's failure: agree it). */
static boid_buf *school_own(mpi_school *m)
{
    if (!m->started)
        return &m->own;
    size_t n = part_owned_count(m->s);
    if (!boid_buf_reserve(&m->own, n))
        return NULL;
    part_owned(m->s, m->own.b);
    m->own.n = n;
    return &m->own;
}

/* Classify the current state for the next exchange (after a load: every boid is owned and
 * a stayer, so none jumps). Agreed. */
static shoal_status school_classify_current(mpi_school *m, shoal_error *e)
{
    int far = 0;
    uint64_t halo, migrated;
    shoal_status st = xchg_classify(&m->x, &m->dd, m->s, 0, &far, &halo, &migrated);
    if (st)
        shoal_error_set(e, st, "out of memory finding the halo");
    else if (far || migrated)
        st = shoal_error_set(e, SHOAL_ERR_INPUT, "internal: a boid outside its brick after a load");
    m->far = 0;
    m->pending = !st;
    return comm_agree(st, e);
}

/* Cut the bricks from the boids per cell plane, send every boid (m->own, or the part's
 * with `from_part`) to the rank owning its cell and load them into the part: the state of a
 * step's start, with no halo yet. Collective; agreed. */
static shoal_status school_cut(mpi_school *m, int from_part, shoal_error *e)
{
    uint64_t t0 = shoal_profile_now_ns(), moved = 0;
    boid_buf *own = from_part ? school_own(m) : &m->own;
    shoal_status st = comm_agree(
        own ? SHOAL_OK : shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for the boids"), e);
    if (st)
        return st;
    decomp_recut(&m->dd, m->s, own);
    st = migrate_boids(&m->dd, m->s, own, &m->tmp, 0, m->total, &moved, e);
    if (!st) {
        m->rs.migrated += m->started ? moved : 0;
        st = part_set_box(m->s, m->dd.lo, m->dd.hi, e);
        if (!st)
            st = part_load(m->s, own->b, own->n, e);
        st = comm_agree(st, e);
    }
    if (!st)
        m->base = m->imb = decomp_imbalance(own->n, m->total);
    m->pending = 0;
    school_stage(m, ST_MIGRATE, t0, shoal_profile_now_ns());
    if (!st && mpi_size() > 1) {
        uint64_t t1 = shoal_profile_now_ns();
        st = school_classify_current(m, e);
        school_stage(m, ST_CLASSIFY, t1, shoal_profile_now_ns());
    }
    return st;
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
    comm_check_cores(part_thread_count(m->s));
    int32_t gd[3] = {1, 1, 1};
    part_grid_dims(m->s, gd);
    st = comm_agree(decomp_create(&m->dd, gd, e), e);
    if (!st)
        st = school_cut(m, 0, e);
    m->started = !st;
    return st;
}

/* The step's one reduction (every rank's maximum of each): the lowest non-finite row (as
 * UINT32_MAX - row), a jump past the neighbours, the owned count (the imbalance), a
 * migrant, a failure. */
enum { RD_BAD, RD_FAR, RD_OWN, RD_MOVED, RD_FAIL, RD_COUNT };

static shoal_status school_step(mpi_school *m, long long steps, shoal_error *e)
{
    shoal_status st = school_start(m, e);
    if (st)
        return st;
    run_stats *rs = &m->rs;
    const int R = mpi_size();
    double sim0[SIM_STAGES], sim1[SIM_STAGES];
    sim_stage_ms(m->s, sim0);
    uint64_t t_loop = shoal_profile_now_ns();
    for (long long k = 0; k < steps && !st; k++) {
        shoal_status lst = SHOAL_OK; /* this rank's failure, agreed by the reduction */
        shoal_error le;
        if (R > 1 && m->imb > RECUT_IMBALANCE && m->imb > m->base * RECUT_GROWTH) {
            if ((st = school_cut(m, 1, e)))
                break;
            rs->recuts++;
        }
        if (R > 1 && !m->pending) {
            uint64_t t0 = shoal_profile_now_ns();
            st = school_classify_current(m, e);
            school_stage(m, ST_CLASSIFY, t0, shoal_profile_now_ns());
            if (st)
                break;
        }
        if (R > 1) {
            /* the boids others need: to each neighbour one message, migrants and halo */
            uint64_t t0 = shoal_profile_now_ns();
            lst = xchg_pack(&m->x, m->s, &le);
            uint64_t t1 = shoal_profile_now_ns();
            school_stage(m, ST_PACK, t0, t1);
            shoal_error xe;
            shoal_status xst = xchg_run(&m->x, m->s, m->far, &xe);
            uint64_t t2 = shoal_profile_now_ns();
            school_stage(m, ST_EXCHANGE, t1, t2);
            if (xst && m->x.agreed) {
                *e = xe;
                st = xst;
                break;
            }
            if (!lst && xst) {
                lst = xst;
                le = xe;
            }
            if (!lst)
                lst = part_append(m->s, m->x.in.b, m->x.in.n, &le);
            school_stage(m, ST_UNPACK, t2, shoal_profile_now_ns());
            m->pending = 0;
        }
        /* one sort of the owned boids and the halo, the forces of the owned cells */
        uint32_t bad = lst ? UINT32_MAX : part_step(m->s);
        if (m->preds) {
            uint64_t t0 = shoal_profile_now_ns();
            if (R == 1) {
                part_predator_targets(m->s, m->tgt);
            } else if (m->d.params.predator_chase >= 1.0f) {
                float centre[3] = {0, 0, 0};
                boid_buf *own = school_own(m);
                shoal_status pst = comm_agree(
                    own ? SHOAL_OK
                        : shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for the boids"),
                    e);
                if (!pst)
                    pst = preds_centre(m->s, own, m->total, centre, e);
                if ((st = pst))
                    break;
                for (int q = 0; q < m->d.params.predator_count; q++)
                    memcpy(m->tgt[q], centre, sizeof centre);
            } else {
                preds_nearest(m->s, m->tgt);
            }
            school_stage(m, ST_PREDATORS, t0, shoal_profile_now_ns());
        }
        uint32_t bad_all = bad;
        if (R > 1) {
            /* the new state's boids that others need, before anyone commits a step that
             * failed somewhere */
            uint64_t t0 = shoal_profile_now_ns();
            int far = 0;
            uint64_t halo = 0, migrated = 0;
            if (!lst && bad == UINT32_MAX &&
                xchg_classify(&m->x, &m->dd, m->s, 1, &far, &halo, &migrated))
                lst = shoal_error_set(&le, SHOAL_ERR_NOMEM, "out of memory finding the halo");
            uint64_t t1 = shoal_profile_now_ns();
            school_stage(m, ST_CLASSIFY, t0, t1);
            uint64_t v[RD_COUNT] = {UINT32_MAX - (uint64_t)bad, (uint64_t)far,
                                    (uint64_t)part_owned_count(m->s), migrated > 0, lst != 0},
                     w[RD_COUNT];
            MPI_Allreduce(v, w, RD_COUNT, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
            school_stage(m, ST_REDUCE, t1, shoal_profile_now_ns());
            if (w[RD_FAIL]) {
                if (lst)
                    *e = le;
                st = comm_agree(lst, e);
                m->pending = 0;
                break;
            }
            bad_all = (uint32_t)(UINT32_MAX - w[RD_BAD]);
            m->far = w[RD_FAR] != 0;
            m->imb = (double)w[RD_OWN] * R / (double)m->total;
            rs->halo_boids += halo;
            rs->migrated += migrated;
            rs->steps_migrating += w[RD_MOVED] != 0;
            rs->steps_far += m->far;
        }
        if (bad_all != UINT32_MAX) {
            m->pending = 0;
            st = shoal_error_set(e, SHOAL_ERR_NONFINITE,
                                 "non-finite value in boid %u (input row) at step %llu "
                                 "(t = %.6f s); state left as before that step",
                                 bad_all, (unsigned long long)k + 1, shoal_sim_time(m->s));
            break;
        }
        part_commit(m->s);
        part_finish_step(m->s, m->tgt);
        m->pending = R > 1;
        rs->imbalance_sum += m->imb;
        rs->imbalance_max = m->imb > rs->imbalance_max ? m->imb : rs->imbalance_max;
        rs->steps++;
        m->steps_done++;
    }
    rs->ns_loop += shoal_profile_now_ns() - t_loop;
    sim_stage_ms(m->s, sim1);
    for (int q = 0; q < SIM_STAGES; q++)
        rs->sim_ms[q] += sim1[q] - sim0[q];
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
    uint64_t t0 = shoal_profile_now_ns();
    boid_buf *own = school_own(m);
    shoal_status st = comm_agree(
        own ? SHOAL_OK : shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for the boids"), e);
    if (!st)
        st = m->started ? migrate_boids(&m->dd, m->s, own, &m->tmp, 1, m->total, &moved, e)
                        : comm_same_as_rank0(hash_sim(m->s), SCHOOL_DIFFERS, e);
    if (m->started)
        school_stage(m, ST_MIGRATE, t0, shoal_profile_now_ns());
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
    boid_buf_free(&m->tmp);
    xchg_free(&m->x);
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

size_t mpi_school_local_count(const mpi_school *m)
{
    return m->started ? part_owned_count(m->s) : m->own.n;
}

void mpi_school_local(const mpi_school *m, float *const soa[6], uint32_t *row)
{
    if (m->started) {
        part_owned_soa(m->s, soa, row);
        return;
    }
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
    boid_buf *own = school_own(m);
    if (!own)
        st = shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for the boids");
    else if (own->n > INT_MAX)
        st = shoal_error_set(e, SHOAL_ERR_INPUT, "%zu boids on one rank: too many to gather",
                             own->n);
    st = comm_agree(st, e);
    if (!st) {
        int mine = (int)own->n;
        MPI_Gather(&mine, 1, MPI_INT, cnt, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (mpi_rank() == 0)
            for (int r = 0, at = 0; r < mpi_size(); r++) {
                cnt[mpi_size() + r] = at;
                at += cnt[r];
            }
        MPI_Gatherv(own->b, mine, comm_boid_type(), all, cnt, cnt ? cnt + mpi_size() : NULL,
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
    school_print_stats(cmd, m, (long long)m->rs.steps);
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
    uint64_t t1 = shoal_profile_now_ns();
    m->ns_io += t1 - t0;
    school_stage(m, ST_IO, t0, t1);
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
    uint64_t t1 = shoal_profile_now_ns();
    m->ns_io += t1 - t0;
    school_stage(m, ST_IO, t0, t1);
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
