/* SPDX-License-Identifier: MIT */
/* Inside src/mpi: what its files share (docs/ARCHITECTURE.md "MPI"). The program sees only
 * mpi_app.h; the library only through its part of a school (sim/part.h) and the row
 * layouts of its files (io/rows_layout.h). One file per job:
 *   mpi_comm.c       the world, agreement and collectives, fingerprints, the test hook
 *   mpi_composite.c  the depth composite of frames
 *   mpi_files.c      states and checkpoints in (rank 0 checks, MPI-IO rows) and out
 *   mpi_decomp.c     the rank grid, cuts and re-cuts, imbalance
 *   mpi_migrate.c    boid buffers, migration of a whole school (start, re-cut, rows)
 *   mpi_halo.c       the step's one exchange (halo and migrants)
 *   mpi_preds.c      the predators' targets over the ranks
 *   mpi_school.c     the school object: the step loop, back to rows, gather, stats
 *   mpi_trace.c      the ranks' traces as one
 * Every call from the main thread, outside OpenMP regions (MPI_THREAD_FUNNELED). */
#ifndef SHOAL_MPI_INTERNAL_H
#define SHOAL_MPI_INTERNAL_H

#include "mpi_app.h"

#include "io/rows_layout.h"
#include "sim/part.h"

#include <mpi.h>
#include <stdint.h>

/* ---- mpi_comm.c ------------------------------------------------------------------------ */

/* Collective (MPI running). The lowest failing rank's status and message ("rank K: ...")
 * become every rank's; SHOAL_OK when no rank failed. Call it once per failure: a message it
 * made would get a second prefix. */
shoal_status comm_agree(shoal_status st, shoal_error *e);

/* FNV-1a 64 of n bytes, continuing from h (start from COMM_HASH_SEED): a fingerprint to
 * compare between ranks (a misuse check, not a defence against forgery). */
#define COMM_HASH_SEED 0xcbf29ce484222325ull
uint64_t comm_hash(uint64_t h, const void *data, size_t n);
/* Collective: rank 0's fingerprint h to every rank; a rank whose own differs fails with
 * `what` as its message. Agreed. */
shoal_status comm_same_as_rank0(uint64_t h, const char *what, shoal_error *e);

/* The test hook SHOAL_MPI_FAIL=WHAT:RANK[:NTH]: 1 when this rank is to fail at WHAT now
 * ("open", "write", "short"; see mpi_comm.c). */
int comm_fail_here(const char *what);
/* MPI's text for an error code. */
void comm_message(int code, char *buf, size_t size);
/* The first of rows [N k / R, N (k+1) / R) that rank k holds in files (k = R: N). */
size_t comm_range_first(size_t n, int k);
/* Collective, once per process: one line on rank 0's stderr when the ranks of some node run
 * more threads (`threads` per rank) than the CPUs they were given (their affinity masks:
 * mpirun's binding, taskset, a cgroup), or a rank more than its own. */
void comm_check_cores(int threads);
/* part_boid as an MPI datatype (28 bytes), made on first use. */
MPI_Datatype comm_boid_type(void);

/* ---- mpi_migrate.c: boid buffers ------------------------------------------------------- */

typedef struct boid_buf {
    part_boid *b;
    size_t n, cap;
} boid_buf;
/* Room for n boids (the contents kept); 0 when out of memory. */
int boid_buf_reserve(boid_buf *b, size_t n);
void boid_buf_free(boid_buf *b);

/* ---- mpi_decomp.c ----------------------------------------------------------------------- */

typedef struct decomp {
    MPI_Comm cart;
    int P[3], me[3];
    int32_t gd[3];
    int32_t *cut[3]; /* P[a] + 1 cell planes: rank coordinate k owns [cut[k], cut[k+1]) */
    int32_t lo[3], hi[3];
    int nbr[27];  /* rank in direction (dx, dy, dz): index (dx+1) + 3 (dy+1) + 9 (dz+1) */
    int *rank_at; /* rank of the brick at coordinates (x, y, z), x fastest */
} decomp;

/* The rank grid for a grid of gd cells, cut evenly until the first decomp_recut. More
 * ranks along an axis than its cells: SHOAL_ERR_INPUT ("run with fewer ranks"). Not
 * agreed (every rank gets the same answer). */
shoal_status decomp_create(decomp *d, const int32_t gd[3], shoal_error *e);
void decomp_free(decomp *d);
/* The rank coordinate along one axis that owns cell plane c. */
int decomp_owner(const int32_t *cut, int P, int32_t c);
/* New cuts from the boids per cell plane of the whole school. Collective. */
void decomp_recut(decomp *d, const shoal_sim *s, const boid_buf *own);
/* Max / mean boids per rank. Collective. */
double decomp_imbalance(size_t n_own, size_t total);

/* ---- mpi_migrate.c ---------------------------------------------------------------------- */

/* Every boid of `own` to the rank that owns its cell (or, with by_row, the rank that
 * writes its row); *sent_away: how many this rank sent. Collective; agreed. */
shoal_status migrate_boids(const decomp *d, const shoal_sim *s, boid_buf *own, boid_buf *tmp,
                           int by_row, size_t total, uint64_t *sent_away, shoal_error *e);

/* ---- mpi_halo.c: the step's one exchange ------------------------------------------------ */

/* One thread's finds: entries (slot << 8 | direction) of the boids for the neighbours, or in
 * `far` (slot << 32 | rank) for ranks beyond them; how many sends were halo and migrants. */
typedef struct xchg_list {
    _Alignas(64) uint64_t *e; /* (a cache line per thread: written by one thread each) */
    size_t n, cap;
    int oom;
    uint64_t halo, migrated;
} xchg_list;

typedef struct xchg {
    const decomp *d;
    int threads;
    xchg_list list[SHOAL_MAX_THREADS], far[SHOAL_MAX_THREADS];
    int scount[27], sdisp[27];
    boid_buf out, in, far_out;
    int *far_cnt; /* 5 R ints: the fallback's counts and offsets */
    int agreed;   /* xchg_run's failure was agreed (the fallback's) */
} xchg;

void xchg_free(xchg *x);
/* Classify s's current state (next = 0) or the new state of its last part_step (next = 1)
 * for the decomposition d: the sort keys of the next step and the boids other ranks need.
 * *far: some boid goes beyond the neighbours (then every rank must call xchg_run with
 * any_far); *halo, *migrated: the sends of each kind. SHOAL_ERR_NOMEM when a list could not
 * grow (this rank's alone: agree it). No MPI. */
shoal_status xchg_classify(xchg *x, const decomp *d, shoal_sim *s, int next, int *far,
                           uint64_t *halo, uint64_t *migrated);
/* The classified boids into the send buffer, by neighbour (after part_commit when the new
 * state was classified). This rank's failure only. No MPI. */
shoal_status xchg_pack(xchg *x, const shoal_sim *s, shoal_error *e);
/* The exchange: one message to and from every neighbour (sizes by probing), and with
 * any_far (the same on every rank) the fallback all-to-all; x->in becomes the boids that
 * arrived. Collective among neighbours (all ranks with any_far). A failure is this rank's
 * alone unless x->agreed. */
shoal_status xchg_run(xchg *x, const shoal_sim *s, int any_far, shoal_error *e);

/* ---- mpi_preds.c ------------------------------------------------------------------------ */

/* Each predator's target: the nearest boid of the whole school (d^2, then the lower row).
 * Collective. */
void preds_nearest(const shoal_sim *s, float tgt[][3]);
/* The school's centre summed in the one-process order (on rank 0; O(N) there). Collective;
 * agreed. */
shoal_status preds_centre(const shoal_sim *s, const boid_buf *own, size_t total, float centre[3],
                          shoal_error *e);

/* ---- mpi_files.c ------------------------------------------------------------------------ */

/* This rank's rows [first, first + *count) of a .npy state of *total rows, as part_boids
 * with their row ids. Collective; agreed. */
shoal_status files_read_state(const char *path, part_boid **out, size_t *count, size_t *total,
                              shoal_error *e);
/* This rank's rows of a checkpoint; d takes its model, parameters, dt, t0, seed and count,
 * ck its state beyond the boids. Collective; agreed. */
shoal_status files_read_checkpoint(const char *path, shoal_sim_desc *d, part_boid **out,
                                   size_t *count, size_t *total, shoal_sim_checkpoint *ck,
                                   shoal_error *e);

/* An output written by rows (a state, VTK PolyData or a checkpoint: io/rows_layout.h), the
 * bytes of one process's writer. Rank 0 opens it as one process does
 * (shoal_io_atomic_open): a regular file gets a temporary in its directory, which every
 * rank opens and writes its rows of every section into at their offsets (MPI-IO), rank 0
 * the fixed pieces; a device or FIFO is written in place, rank 0 alone, in file order, with
 * the other ranks' rows sent to it in turn. Nothing replaces the target before
 * files_out_commit, so a command can write all its outputs first and commit them when every
 * one succeeded (docs/CLI.md "Outputs"). */
typedef struct files_out {
    const char *path;
    rows_layout lay;
    shoal_atomic_file af; /* rank 0 */
    int in_place;         /* a device or FIFO */
    char tmp[sizeof((shoal_atomic_file *)0)->tmp_path];
    MPI_File fh;
} files_out;

/* Collective: open `path` for the layout (taken over: freed by commit or abort) and write
 * the fixed pieces of a regular file. On failure everything is undone. Agreed. */
shoal_status files_out_open(files_out *o, const char *path, rows_layout lay, shoal_error *e);
/* Collective: open a state output, its layout from its name (.vtp: VTK, with TimeValue =
 * time unless NaN; .bin refused; else .npy). Agreed. */
shoal_status files_open_state(files_out *o, const char *path, size_t total, double time,
                              shoal_error *e);
/* Collective: open the checkpoint of the whole school (total rows) whose part is `part`
 * (its desc, steps, predators and targets are the school's). Agreed. */
shoal_status files_open_checkpoint(files_out *o, const char *path, const shoal_sim *part,
                                   size_t total, shoal_error *e);
/* Collective: this rank's rows [first, first + n) (rank k holds [N k / R, N (k+1) / R)) into
 * every section. On failure the output is aborted. Agreed. */
shoal_status files_out_write(files_out *o, const float *rows, size_t first, size_t n,
                             shoal_error *e);
/* Collective: put the written file in place (rename; in place: flush and close). Agreed. */
shoal_status files_out_commit(files_out *o, shoal_error *e);
/* Undo an open output (remove its temporary). */
void files_out_abort(files_out *o);

#endif
