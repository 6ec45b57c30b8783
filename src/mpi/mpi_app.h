/* SPDX-License-Identifier: MIT */
/* shoal under MPI (docs/ARCHITECTURE.md, "MPI"): the contract between the program and
 * src/mpi, its one way in. The same binary runs alone or under mpirun; MPI starts only when
 * a launcher started the process (mpi_launched). The program reaches the ranks three ways,
 * one per kind of thing:
 *   - the world: start, stop, this rank, the size, the same command line on every rank;
 *   - a school (mpi_school): the boids spread over the ranks, whatever the command: made
 *     from a desc (init, run), read from a state file (step, render) or a checkpoint
 *     (step --resume), stepped, framed, drawn rank by rank, written (step, init);
 *   - a frame (mpi_frame): each rank draws its own fish, rank 0 gets the image.
 * Besides, mpi_agree and mpi_any make the program's own fallible steps (a directory to
 * create, a frame to write) every rank's. Every school and frame call is collective: all
 * ranks call it and get the same outcome ("rank K: message" of the lowest failing rank);
 * rank 0 speaks for all. Built without MPI (-Dmpi=disabled or no MPI found), mpi_none.c
 * answers: never launched, one rank, and the school and frame calls are never reached.
 * Every function here is called from the main thread only (MPI_THREAD_FUNNELED); the
 * OpenMP threads of a rank never call MPI. */
#ifndef SHOAL_MPI_APP_H
#define SHOAL_MPI_APP_H

#include "shoal/shoal.h"

/* ---- the world -------------------------------------------------------------------------- */

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
/* 1 when MPI is running (started above). */
int mpi_running(void);
/* Collective, under MPI with 2+ ranks: every rank was started with rank 0's arguments
 * (argv[1..argc), compared by a 64-bit hash); a rank that was not fails, agreed (an MPMD
 * launch with other options per rank would otherwise hang or mix two runs). Alone: OK. */
shoal_status mpi_same_args(int argc, char **argv, shoal_error *e);

/* ---- agreement -------------------------------------------------------------------------- */

/* Collective under MPI with 2+ ranks: the lowest failing rank's status and message
 * ("rank K: ...") become every rank's. Alone: st as given. */
shoal_status mpi_agree(shoal_status st, shoal_error *e);
/* Collective: 1 when flag is non-zero on any rank (alone: flag != 0). */
int mpi_any(int flag);
/* Collective: rank 0's n bytes of buf to every rank (what rank 0 alone decided: the name
 * of a directory it made). Alone: nothing. */
void mpi_broadcast(void *buf, size_t n);
/* Collective: the sum and the largest of v over the ranks (alone: v). */
long long mpi_sum(long long v);
long long mpi_max(long long v);
/* Collective: every rank's n bytes at data are rank 0's (compared by a 64-bit hash); a rank
 * whose differ fails with `what`, agreed (inputs that every rank reads for itself). */
shoal_status mpi_same(const void *data, size_t n, const char *what, shoal_error *e);

/* ---- a school over the ranks ------------------------------------------------------------ */

/* Each rank holds some boids of the school (at first rank k rows [N k / R, N (k+1) / R);
 * once stepped the boids of its brick of cells, and while stepping a halo, exactly as
 * `step` does), with their input rows. Its sim (mpi_school_sim) holds what every rank has
 * whole: desc, obstacles, predators, targets, time. */
typedef struct mpi_school mpi_school;

/* The initial state of d (row i from (d->seed, i), as shoal_sim_init_state draws it):
 * each rank draws its own rows. */
shoal_status mpi_school_create(const shoal_sim_desc *d, mpi_school **out, shoal_error *e);
/* The .npy state at `path` with desc d (its boid_count replaced by the file's). Rank 0
 * looks at the file first with one process's checks and messages; a regular file is read
 * by every rank at its rows' offsets (MPI-IO), a FIFO, pipe or device by rank 0 alone and
 * scattered. `.bin` is refused. */
shoal_status mpi_school_read(const shoal_sim_desc *d, const char *path, mpi_school **out,
                             shoal_error *e);
/* The checkpoint at `path` (read by rank 0): its model, parameters, dt, t0, seed, count
 * and state beyond the boids replace d's; d's threads, neighbours and ISA are kept. */
shoal_status mpi_school_resume(const shoal_sim_desc *d, const char *path, mpi_school **out,
                               shoal_error *e);
void mpi_school_destroy(mpi_school *m);

/* This rank's part as a sim: its predators, targets, obstacles and time are the whole
 * school's (replicated on every rank; add obstacles to it, the same on every rank, before
 * the first step); its boids are not. Not collective. */
shoal_sim *mpi_school_sim(mpi_school *m);
/* N, the whole school's count. Not collective. */
size_t mpi_school_count(const mpi_school *m);
/* `steps` steps (0 too: the first call starts the decomposition, checking that every rank
 * has the same desc, obstacles and checkpoint state): the same bits as shoal_sim_step on
 * one process. */
shoal_status mpi_school_step(mpi_school *m, long long steps, shoal_error *e);

/* The boids this rank owns now: their state as six arrays (px py pz vx vy vz, room for
 * mpi_school_local_count each) and their input rows. Not collective. */
size_t mpi_school_local_count(const mpi_school *m);
void mpi_school_local(const mpi_school *m, float *const soa[6], uint32_t *row);
/* The camera that frames the whole school (shoal_render_camera_frame over every boid, on
 * rank 0, which gathers the positions: O(N) there), on every rank. */
shoal_status mpi_school_frame(mpi_school *m, float fish_length, float aspect, shoal_camera *cam,
                              shoal_error *e);

/* Write the state to `out` (.npy, or VTK for a .vtp name; may be NULL) and the checkpoint
 * to `ckpt` (may be NULL): the bytes one process writes, each rank its rows at their
 * offsets, a device or FIFO written in place through rank 0. All or nothing: both are
 * written to temporaries, then renamed, the checkpoint first. mpi_school_write is
 * mpi_school_stage (the temporaries) then mpi_school_commit (the renames), for a command
 * with other outputs to put in place between the two; destroying the school drops what was
 * staged and not committed. */
shoal_status mpi_school_write(mpi_school *m, const char *out, const char *ckpt, shoal_error *e);
shoal_status mpi_school_stage(mpi_school *m, const char *out, const char *ckpt, shoal_error *e);
shoal_status mpi_school_commit(mpi_school *m, shoal_error *e);
/* A trajectory frame (step --out-dir): the state at `path` as one process writes it, VTK
 * for a .vtp name (TimeValue = time) or .npy, in place at once (the frames of a run are
 * written into its directory as the run goes). */
shoal_status mpi_school_write_frame(mpi_school *m, const char *path, double time, shoal_error *e);

/* --stats: count what the numbers need while stepping (call before the first step). */
void mpi_school_want_stats(mpi_school *m);
/* --stats of the steps so far on rank 0's stderr, as `shoal CMD (MPI): ...`: with
 * mpi_school_want_stats first rank 0's stage profile, then the rank grid, halo, migration,
 * imbalance, compute and communication time, file I/O. Collective. */
void mpi_school_print_stats(mpi_school *m, const char *cmd);

/* ---- a frame over the ranks ------------------------------------------------------------- */

/* The composite of each rank's drawing into rank 0's image, with its scratch buffers (kept
 * between frames) and timings. */
typedef struct mpi_frame mpi_frame;
shoal_status mpi_frame_create(mpi_frame **out, shoal_error *e);
void mpi_frame_destroy(mpi_frame *fr);

/* Draw `inst` (this rank's fish, instance ids = their input rows; predators may be drawn by
 * every rank alike) with r, which keeps depth and ids (shoal_render_keep_depth), and make
 * rank 0's framebuffer the image of every rank's fish: per pixel the nearest fragment of
 * any rank, at equal depth the lower id (the renderer's own rule), colour by speed against
 * the whole school's largest visible speed (reduced inside the frame: one pass). Each rank
 * touches only the tiles its fish cover (r is left sparse: shoal_render_sparse), and only
 * what was drawn moves: each rank's drawn pixels, run-length encoded, in a binary swap over
 * the image, then their colours to rank 0. The other ranks' framebuffers hold their own fish
 * in the tiles they drew. The image is the one-process image. */
shoal_status mpi_frame_draw(mpi_frame *fr, shoal_renderer *r, const shoal_render_instances *inst,
                            const shoal_camera *cam, shoal_error *e);

/* The composite's numbers, summed over the frames drawn. */
typedef struct mpi_frame_stats {
    uint64_t frames;
    double total_ms;     /* the whole composite */
    double wait_ms;      /* until every rank had drawn (their imbalance) */
    double encode_ms;    /* finding and encoding the drawn pixels */
    double compare_ms;   /* merging runs, the depth test between ranks */
    double transfer_ms;  /* moving runs and colours */
    uint64_t bytes_sent; /* runs, fragments and colours sent */
    uint64_t pixels_drawn;
} mpi_frame_stats;
/* This rank's numbers; with `all` (collective) the slowest rank's times and the sums of
 * bytes and pixels over the ranks. */
mpi_frame_stats mpi_frame_get_stats(const mpi_frame *fr, int all);

/* ---- traces over the ranks ------------------------------------------------------------- */

/* Collective: a barrier, right before every rank starts its trace, so that their time
 * zeros agree to a barrier's skew. Alone: nothing. */
void mpi_trace_sync(void);
/* Collective: every rank's trace (the Chrome JSON that shoal_profile_trace_write wrote at
 * `local`, this rank's own file) as one trace on rank 0 (*merged, malloc'ed, *len bytes;
 * NULL elsewhere): each rank a process "shoal rank K" (pid K + 1, sorted by K) with its
 * threads as tracks, the dropped spans summed. Agreed. */
shoal_status mpi_trace_merge(const char *local, char **merged, size_t *len, shoal_error *e);

/* Collective: v[0..n) summed over the ranks, in place (integers: exact for any split). */
void mpi_sum_i64(int64_t *v, int n);

#endif
