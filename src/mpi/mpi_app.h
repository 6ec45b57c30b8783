/* SPDX-License-Identifier: MIT */
/* shoal under MPI (docs/ARCHITECTURE.md, "MPI"): the program's one door to src/mpi. The
 * same binary runs alone or under mpirun; MPI starts only when a launcher started the
 * process (mpi_launched). Built without MPI (-Dmpi=disabled or no MPI found), mpi_none.c
 * answers: never launched, one rank. Every function here is called from the main thread
 * only (MPI_THREAD_FUNNELED); the OpenMP threads of a rank never call MPI. */
#ifndef SHOAL_MPI_APP_H
#define SHOAL_MPI_APP_H

#include "shoal/shoal.h"

/* 1 when built with MPI. */
int mpi_built(void);
/* 1 when a launcher (mpirun, srun) started this process: its environment names a rank. */
int mpi_launched(void);
/* MPI_Init_thread(FUNNELED) when launched; 0, or 2 with a message on stderr on failure. */
int mpi_start(int *argc, char ***argv);
/* MPI_Finalize when started. */
void mpi_stop(void);
/* This rank and the world's size (0 and 1 when MPI is not running). */
int mpi_rank(void);
int mpi_size(void);
/* 1 when MPI is running (started above): init and step take the MPI path. */
int mpi_running(void);

/* `shoal step` over the ranks: read `in` (rows at offsets, MPI-IO) or the checkpoint
 * `resume` (every rank reads it whole and keeps its rows; its desc replaces d's model,
 * parameters, dt, t0 and seed), decompose, step, write `out` if not NULL (atomic: renamed
 * by rank 0 after every rank succeeded) and the checkpoint `ckpt` if not NULL (gathered on
 * rank 0, written by the library's writer: the same bytes as one process). d: the desc of
 * the command line (its boid_count is replaced by the file's). scene: its obstacles, or NULL.
 * stats: print the stages and the decomposition's numbers (rank 0, stderr). On failure
 * every rank returns the same status and e holds "rank K: message" of the lowest failing
 * rank; nothing is written. */
shoal_status mpi_step_file(const shoal_sim_desc *d, const shoal_scene *scene, const char *in,
                           const char *resume, const char *out, const char *ckpt, long long steps,
                           int stats, shoal_error *e);

/* A school stepped over the ranks, for `shoal run --headless` under mpirun: each rank
 * holds the boids of its brick (and, while stepping, a halo), exactly as `step` does. All
 * functions but mpi_school_sim, mpi_school_local_count and mpi_school_local are collective
 * and agree on their outcome. */
typedef struct mpi_school mpi_school;
/* The initial state of d (row i from (d->seed, i), as shoal_sim_init_state draws it): each
 * rank draws its own rows. Obstacles go to mpi_school_sim before the first step. */
shoal_status mpi_school_create(const shoal_sim_desc *d, mpi_school **out, shoal_error *e);
void mpi_school_destroy(mpi_school *m);
/* This rank's part as a sim: its predators, targets, obstacles and time are the whole
 * school's (replicated on every rank); its boids are not. */
shoal_sim *mpi_school_sim(mpi_school *m);
/* `steps` steps: the same bits as shoal_sim_step on one process. */
shoal_status mpi_school_step(mpi_school *m, long long steps, shoal_error *e);
/* The boids this rank owns now: their state as six arrays (px py pz vx vy vz, room for
 * mpi_school_local_count each) and their input rows. */
size_t mpi_school_local_count(const mpi_school *m);
void mpi_school_local(const mpi_school *m, float *const soa[6], uint32_t *row);
/* The whole state in row order on rank 0 (rows: N x 6 floats there; NULL elsewhere). */
shoal_status mpi_school_gather(mpi_school *m, float *rows, shoal_error *e);
/* --stats of the steps so far (rank 0 prints to stderr; collective). */
void mpi_school_print_stats(const mpi_school *m);

/* Collective: `n` bytes of rank 0's buf to every rank. */
void mpi_broadcast(void *buf, size_t n);

/* `shoal init` over the ranks: each rank draws its own rows (row i from (seed, i) alone,
 * so the bytes do not depend on the rank count) and writes them at their offsets. */
shoal_status mpi_init_file(const shoal_sim_desc *d, const char *out, int stats, shoal_error *e);

/* Collective under MPI with 2+ ranks: the lowest failing rank's status and message
 * ("rank K: ...") become every rank's. Alone: st as given. */
shoal_status mpi_agree(shoal_status st, shoal_error *e);

/* Collective: 1 when flag is non-zero on any rank (alone: flag != 0). */
int mpi_any(int flag);

/* Collective: the largest v of any rank (alone: v). */
float mpi_max_float(float v);

/* Collective: v[0..n) summed over the ranks, in place (integers: exact for any split). */
void mpi_sum_i64(int64_t *v, int n);

/* `shoal render` over the ranks (collective): every rank drew its own fish into a
 * width x height image with kept depth and ids (shoal_render_keep_depth); rank 0's `argb`
 * becomes the composite: per pixel the nearest fragment of any rank, at equal depth the
 * lower instance id (the renderer's own rule, so the image is the one-process image). The
 * other ranks' argb is left as it was. ms: the time it took (NULL: not wanted). */
shoal_status mpi_composite(uint32_t *argb, const float *depth, const uint32_t *ids, size_t n,
                           double *ms, shoal_error *e);

#endif
