/* SPDX-License-Identifier: MIT */
/* shoal over MPI ranks (docs/ARCHITECTURE.md, "MPI"): the rank grid and the bricks of
 * cells each rank owns, the migration of boids between bricks, the halo exchange, the
 * predators' global reduction, and `step`/`init` on state files read and written at row
 * offsets with MPI-IO. The stepping itself is the library's (sim/part.h): this file only
 * moves boids. All MPI calls are made by the main thread, outside OpenMP regions. */
#include "mpi_app.h"

#include "core/parallel.h"
#include "core/profile.h"
#include "core/timer.h"
#include "io/npy_layout.h"
#include "sim/part.h"

#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the MPI-IO path writes floats as the host's bytes: little-endian hosts only"
#endif

/* Re-cut when the imbalance (max / mean boids per rank) passes this, and has grown by 5%
 * since the last cut (a school the product of three 1-D cuts cannot balance better would
 * otherwise be re-cut every step). 1.2: a step takes as long as its slowest rank, so 20%
 * idle on the others is where a re-cut (one histogram reduction and one migration, about
 * a step's communication) pays for itself within a few steps. */
#define RECUT_IMBALANCE 1.2
#define RECUT_GROWTH 1.05

static int g_started, g_rank, g_size = 1;

int mpi_built(void) { return 1; }

int mpi_launched(void)
{
    /* Open MPI's mpirun, then MPICH/Hydra and PMIx launchers (srun) */
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK");
}

int mpi_start(int *argc, char ***argv)
{
    if (!mpi_launched())
        return 0;
    int provided = 0;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "shoal: MPI_Init_thread failed\n");
        return 2;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    g_started = 1;
    return 0;
}

void mpi_stop(void)
{
    if (g_started)
        MPI_Finalize();
    g_started = 0;
}

int mpi_rank(void) { return g_rank; }
int mpi_size(void) { return g_size; }
int mpi_running(void) { return g_started; }

/* ---- agreement: one outcome for every rank --------------------------------------------- */

/* Collective. The lowest failing rank's status and message ("rank K: ...") become every
 * rank's; SHOAL_OK when no rank failed. */
static shoal_status agree(shoal_status st, shoal_error *e)
{
    int mine = st ? g_rank : g_size, first = g_size;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first == g_size)
        return SHOAL_OK;
    struct {
        int status;
        char msg[sizeof e->message];
    } buf;
    memset(&buf, 0, sizeof buf);
    if (g_rank == first) {
        buf.status = (int)st;
        int k = snprintf(buf.msg, sizeof buf.msg, "rank %d: ", g_rank);
        size_t used = k > 0 ? (size_t)k : 0;
        size_t room = sizeof buf.msg - used - 1;
        size_t len = strnlen(e->message, room);
        memcpy(buf.msg + used, e->message, len);
        buf.msg[used + len] = '\0';
    }
    MPI_Bcast(&buf, (int)sizeof buf, MPI_BYTE, first, MPI_COMM_WORLD);
    e->status = (shoal_status)buf.status;
    memcpy(e->message, buf.msg, sizeof e->message);
    e->message[sizeof e->message - 1] = '\0';
    return e->status;
}

shoal_status mpi_agree(shoal_status st, shoal_error *e)
{
    if (!g_started || g_size < 2)
        return st;
    return agree(st, e);
}

void mpi_broadcast(void *buf, size_t n)
{
    if (g_size > 1)
        MPI_Bcast(buf, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
}

int mpi_any(int flag)
{
    int mine = flag != 0, any = mine;
    if (g_size > 1)
        MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return any;
}

float mpi_max_float(float v)
{
    if (!g_started || g_size < 2)
        return v;
    float all = v;
    MPI_Allreduce(&v, &all, 1, MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD);
    return all;
}

void mpi_sum_i64(int64_t *v, int n)
{
    if (!g_started || g_size < 2 || n <= 0)
        return;
    MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
}

/* ---- depth compositing (shoal render under MPI) ------------------------------------------ */

typedef struct px_frag {
    float z;
    uint32_t id;
    uint32_t argb;
} px_frag;

/* The renderer's depth rule between two ranks' pixels: nearer wins, at equal depth the
 * lower instance id (ids are global rows: distinct between ranks). Commutative and
 * associative (a total order's minimum), so the reduction's shape cannot change a bit. */
static void frag_min(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    const px_frag *a = in;
    px_frag *b = inout;
    for (int i = 0; i < *len; i++)
        if (a[i].z < b[i].z || (a[i].z == b[i].z && a[i].id < b[i].id))
            b[i] = a[i];
}

/* Reduce-scatter then gather (the binary-swap pattern: each rank ends with the composite of
 * one R-th of the pixels, after moving about one image's fragments in all, instead of a
 * reduction tree that moves log R images into rank 0), then rank 0 gathers the colours. */
shoal_status mpi_composite(uint32_t *argb, const float *depth, const uint32_t *ids, size_t n,
                           double *ms, shoal_error *e)
{
    uint64_t t0 = timer_now_ns();
    size_t R = (size_t)g_size, m = (n + R - 1) / R; /* pixels per rank's block, padded */
    px_frag *f = m <= INT_MAX ? malloc(m * R * sizeof *f + 1) : NULL;
    px_frag *mine = malloc(m * sizeof *mine + 1);
    uint32_t *cm = malloc(m * sizeof *cm + 1), *call = g_rank == 0 ? malloc(m * R * 4 + 1) : NULL;
    shoal_status st =
        f && mine && cm && (g_rank != 0 || call)
            ? SHOAL_OK
            : shoal_error_set(e, SHOAL_ERR_NOMEM,
                              "out of memory for the compositing buffer (%zu pixels)", n);
    st = agree(st, e);
    if (!st) {
        for (size_t i = 0; i < n; i++) {
            f[i].z = depth[i];
            f[i].id = ids[i];
            f[i].argb = argb[i];
        }
        for (size_t i = n; i < m * R; i++) { /* padding: never nearer than anything */
            f[i].z = INFINITY;
            f[i].id = UINT32_MAX;
            f[i].argb = 0;
        }
        MPI_Datatype t;
        MPI_Type_contiguous(3, MPI_UINT32_T, &t);
        MPI_Type_commit(&t);
        MPI_Op op;
        MPI_Op_create(frag_min, 1, &op);
        MPI_Reduce_scatter_block(f, mine, (int)m, t, op, MPI_COMM_WORLD);
        MPI_Op_free(&op);
        MPI_Type_free(&t);
        for (size_t i = 0; i < m; i++)
            cm[i] = mine[i].argb;
        MPI_Gather(cm, (int)m, MPI_UINT32_T, call, (int)m, MPI_UINT32_T, 0, MPI_COMM_WORLD);
        if (g_rank == 0)
            memcpy(argb, call, n * sizeof *argb);
    }
    free(f);
    free(mine);
    free(cm);
    free(call);
    if (ms)
        *ms = (double)(timer_now_ns() - t0) * 1e-6;
    return st;
}

/* A test hook: SHOAL_MPI_FAIL=WHAT:RANK makes rank RANK fail at WHAT ("open": opening the
 * input, "write": opening the output's temporary), as a missing or unwritable file on that
 * rank's node would. */
static int fail_here(const char *what)
{
    const char *v = getenv("SHOAL_MPI_FAIL");
    size_t n = strlen(what);
    if (!v || strncmp(v, what, n) != 0 || v[n] != ':')
        return 0;
    return atoi(v + n + 1) == g_rank;
}

static void mpi_message(int code, char *buf, size_t size)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(code, s, &len) != MPI_SUCCESS)
        snprintf(s, sizeof s, "MPI error %d", code);
    snprintf(buf, size, "%s", s);
}

/* rows [first, first + count) of N over R ranks: rank k holds [N k / R, N (k+1) / R) */
static size_t range_first(size_t n, int k)
{
    return (size_t)((unsigned __int128)n * (unsigned)k / (unsigned)g_size);
}

/* ---- files ------------------------------------------------------------------------------ */

static MPI_Datatype g_boid_type = MPI_DATATYPE_NULL;

static void boid_type_init(void)
{
    if (g_boid_type != MPI_DATATYPE_NULL)
        return;
    MPI_Type_contiguous((int)sizeof(part_boid), MPI_BYTE, &g_boid_type);
    MPI_Type_commit(&g_boid_type);
}

/* Read [off, off + bytes) of fh in pieces MPI's int counts can hold. */
static int read_at(MPI_File fh, MPI_Offset off, void *buf, size_t bytes)
{
    unsigned char *p = buf;
    while (bytes) {
        int n = bytes > (1u << 30) ? (1 << 30) : (int)bytes;
        MPI_Status stt;
        int rc = MPI_File_read_at(fh, off, p, n, MPI_BYTE, &stt);
        if (rc != MPI_SUCCESS)
            return rc;
        int got = 0;
        MPI_Get_count(&stt, MPI_BYTE, &got);
        if (got != n)
            return MPI_ERR_TRUNCATE;
        p += n;
        off += n;
        bytes -= (size_t)n;
    }
    return MPI_SUCCESS;
}

static int write_at(MPI_File fh, MPI_Offset off, const void *buf, size_t bytes)
{
    const unsigned char *p = buf;
    while (bytes) {
        int n = bytes > (1u << 30) ? (1 << 30) : (int)bytes;
        MPI_Status stt;
        int rc = MPI_File_write_at(fh, off, p, n, MPI_BYTE, &stt);
        if (rc != MPI_SUCCESS)
            return rc;
        p += n;
        off += n;
        bytes -= (size_t)n;
    }
    return MPI_SUCCESS;
}

static int is_npy_name(const char *path)
{
    size_t n = strlen(path);
    return !(n >= 4 && strcmp(path + n - 4, ".bin") == 0);
}

/* This rank's rows of a .npy state: rows [first, first + *count) of *total, as part_boids
 * with their row ids. Collective; the outcome is agreed. */
static shoal_status read_part(const char *path, part_boid **out, size_t *count, size_t *total,
                              shoal_error *e)
{
    *out = NULL;
    *count = *total = 0;
    shoal_status st = SHOAL_OK;
    MPI_File fh = MPI_FILE_NULL;
    npy_layout lay = {0, 0, 0};
    char why[MPI_MAX_ERROR_STRING + 64];
    if (!is_npy_name(path)) {
        st = shoal_error_set(e, SHOAL_ERR_INPUT,
                             "%s: under MPI shoal reads and writes .npy state files only", path);
    } else if (fail_here("open")) {
        st = shoal_error_set(e, SHOAL_ERR_IO, "%s: cannot open: injected failure (SHOAL_MPI_FAIL)",
                             path);
    } else {
        int rc = MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
        if (rc != MPI_SUCCESS) {
            mpi_message(rc, why, sizeof why);
            st = shoal_error_set(e, SHOAL_ERR_IO, "%s: cannot open: %s", path, why);
            fh = MPI_FILE_NULL;
        }
    }
    if (!st) {
        MPI_Offset size = 0;
        MPI_File_get_size(fh, &size);
        unsigned char head[4096];
        size_t got = size < (MPI_Offset)sizeof head ? (size_t)size : sizeof head;
        unsigned char *hdr = head;
        if (read_at(fh, 0, head, got) != MPI_SUCCESS)
            st = shoal_error_set(e, SHOAL_ERR_IO, "%s: read error", path);
        size_t need = st ? 0 : npy_preamble_size(head, got);
        if (!st && need > got && (MPI_Offset)need <= size) {
            hdr = malloc(need);
            if (!hdr)
                st = shoal_error_set(e, SHOAL_ERR_NOMEM, "%s: out of memory for its header", path);
            else if (read_at(fh, 0, hdr, need) != MPI_SUCCESS)
                st = shoal_error_set(e, SHOAL_ERR_IO, "%s: read error", path);
            got = need;
        }
        if (!st)
            st = npy_layout_parse(hdr, got, (uint64_t)size, path, &lay, e);
        if (hdr != head)
            free(hdr);
        if (!st && lay.count > (size_t)UINT32_MAX - 64)
            st = shoal_error_set(e, SHOAL_ERR_INPUT, "boid count %zu exceeds the limit %u",
                                 lay.count, UINT32_MAX - 64);
    }
    st = agree(st, e);
    if (st) {
        if (fh != MPI_FILE_NULL)
            MPI_File_close(&fh);
        return st;
    }
    size_t first = range_first(lay.count, g_rank), last = range_first(lay.count, g_rank + 1);
    size_t n = last - first, row_bytes = 6 * lay.item_size;
    unsigned char *raw = malloc(n * row_bytes + 1);
    float *rows = malloc(n * 6 * sizeof(float) + 1);
    part_boid *b = malloc(n * sizeof *b + 1);
    if (!raw || !rows || !b)
        st = shoal_error_set(e, SHOAL_ERR_NOMEM, "%s: out of memory for %zu rows", path, n);
    else if (read_at(fh, (MPI_Offset)(lay.data_offset + first * row_bytes), raw, n * row_bytes) !=
             MPI_SUCCESS)
        st = shoal_error_set(e, SHOAL_ERR_IO, "%s: read error in rows %zu..%zu", path, first, last);
    MPI_File_close(&fh);
    if (!st) {
        npy_decode(raw, lay.item_size, n * 6, rows);
        static const char *const names[6] = {"px", "py", "pz", "vx", "vy", "vz"};
        for (size_t i = 0; i < n && !st; i++) {
            for (int c = 0; c < 6; c++) {
                float v = rows[i * 6 + (size_t)c];
                if (!isfinite(v)) {
                    st = shoal_error_set(e, SHOAL_ERR_INPUT, "%s: row %zu column %d (%s) is %s",
                                         path, first + i, c, names[c],
                                         isnan(v) ? "nan"
                                         : v > 0  ? "inf"
                                                  : "-inf");
                    break;
                }
                b[i].s[c] = v;
            }
            b[i].row = (uint32_t)(first + i);
        }
    }
    free(raw);
    free(rows);
    st = agree(st, e);
    if (st) {
        free(b);
        return st;
    }
    *out = b;
    *count = n;
    *total = lay.count;
    return SHOAL_OK;
}

/* This rank's rows of a checkpoint: every rank reads the whole file (the library's reader
 * and its checks; O(N) memory per rank for the moment) and keeps rows [first, first + n).
 * d takes the checkpoint's model, parameters, dt, t0, seed and count. Collective. */
static shoal_status read_ckpt_part(const char *path, shoal_sim_desc *d, part_boid **out,
                                   size_t *count, size_t *total, shoal_sim_checkpoint *ck,
                                   shoal_error *e)
{
    *out = NULL;
    *count = *total = 0;
    shoal_sim_desc rd;
    float *rows = NULL;
    shoal_status st =
        fail_here("open")
            ? shoal_error_set(e, SHOAL_ERR_IO, "%s: cannot open: injected failure (SHOAL_MPI_FAIL)",
                              path)
            : shoal_io_checkpoint_read(path, &rd, &rows, ck, e);
    if (!st && rd.boid_count > (size_t)UINT32_MAX - 64)
        st = shoal_error_set(e, SHOAL_ERR_INPUT, "boid count %zu exceeds the limit %u",
                             rd.boid_count, UINT32_MAX - 64);
    st = agree(st, e);
    if (st) {
        free(rows);
        return st;
    }
    size_t first = range_first(rd.boid_count, g_rank),
           n = range_first(rd.boid_count, g_rank + 1) - first;
    part_boid *b = malloc(n * sizeof *b + 1);
    if (!b)
        st = shoal_error_set(e, SHOAL_ERR_NOMEM, "%s: out of memory for %zu rows", path, n);
    for (size_t i = 0; b && i < n; i++) {
        memcpy(b[i].s, rows + (first + i) * 6, sizeof b[i].s);
        b[i].row = (uint32_t)(first + i);
    }
    free(rows);
    st = agree(st, e);
    if (st) {
        free(b);
        return st;
    }
    rd.thread_count = d->thread_count;
    rd.neighbors = d->neighbors;
    rd.isa = d->isa;
    *d = rd;
    *out = b;
    *count = n;
    *total = rd.boid_count;
    return SHOAL_OK;
}

/* The checkpoint of the whole school: rank k holds rows [first, first + n) in order; rank 0
 * gathers them, builds a sim of the whole school with the part's steps, predators and
 * targets, and writes it with the library's writer (atomic), so the file is the one one
 * process writes. O(N) memory on rank 0. Collective; the outcome is agreed. */
static shoal_status write_ckpt(const char *path, const shoal_sim_desc *d, const shoal_sim *part,
                               const float *rows, size_t n, size_t total, shoal_error *e)
{
    shoal_status st = SHOAL_OK;
    float *all = NULL;
    int *cnt = NULL;
    if (g_rank == 0) {
        all = malloc(total * 6 * sizeof(float) + 1);
        cnt = malloc(2 * (size_t)g_size * sizeof(int));
        if (!all || !cnt)
            st = shoal_error_set(e, SHOAL_ERR_NOMEM, "%s: out of memory for %zu rows", path, total);
    }
    st = agree(st, e);
    if (!st) {
        MPI_Datatype row_t;
        MPI_Type_contiguous(6, MPI_FLOAT, &row_t);
        MPI_Type_commit(&row_t);
        int mine = (int)n;
        MPI_Gather(&mine, 1, MPI_INT, cnt, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (g_rank == 0)
            for (int r = 0, at = 0; r < g_size; r++) {
                cnt[g_size + r] = at;
                at += cnt[r];
            }
        MPI_Gatherv(rows, mine, row_t, all, cnt, cnt ? cnt + g_size : NULL, row_t, 0,
                    MPI_COMM_WORLD);
        MPI_Type_free(&row_t);
        if (g_rank == 0) {
            shoal_sim_desc fd = *d;
            fd.boid_count = total;
            shoal_sim *full = NULL;
            shoal_sim_checkpoint ck;
            shoal_sim_get_checkpoint(part, &ck);
            st = shoal_sim_create(&fd, &full, e);
            if (!st)
                st = shoal_sim_set_state(full, all, e);
            if (!st)
                st = shoal_sim_set_checkpoint(full, &ck, e);
            if (!st)
                st = fail_here("write") ? shoal_error_set(e, SHOAL_ERR_IO,
                                                          "%s: cannot write: injected failure "
                                                          "(SHOAL_MPI_FAIL)",
                                                          path)
                                        : shoal_io_checkpoint_write(path, full, e);
            shoal_sim_destroy(full);
        }
    }
    free(all);
    free(cnt);
    return agree(st, e);
}

/* Write rows [first, first + n) of a state of `total` rows (rows: n x 6 floats, this rank's
 * contiguous range) to `path`: rank 0 creates the temporary and its preamble, every rank
 * writes its rows at their offset, rank 0 renames it after every rank succeeded (or
 * removes it). Collective; the outcome is agreed. */
static shoal_status write_rows(const char *path, const float *rows, size_t first, size_t n,
                               size_t total, shoal_error *e)
{
    shoal_status st = SHOAL_OK;
    shoal_atomic_file af;
    memset(&af, 0, sizeof af);
    unsigned char pre[192];
    size_t pre_len = npy_preamble_write(pre, total);
    if (!is_npy_name(path))
        st = shoal_error_set(e, SHOAL_ERR_INPUT,
                             "%s: under MPI shoal reads and writes .npy state files only", path);
    if (g_rank == 0 && !st) {
        st = shoal_io_atomic_open(&af, path, e);
        if (!st &&
            (fwrite(pre, 1, pre_len, (FILE *)af.file) != pre_len || fflush((FILE *)af.file) != 0)) {
            shoal_io_atomic_abort(&af);
            st = shoal_error_set(e, SHOAL_ERR_IO, "%s: write failed", path);
        }
    }
    st = agree(st, e);
    if (st)
        return st;
    char tmp[sizeof af.tmp_path];
    memcpy(tmp, af.tmp_path, sizeof tmp);
    MPI_Bcast(tmp, (int)sizeof tmp, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_File fh = MPI_FILE_NULL;
    char why[MPI_MAX_ERROR_STRING];
    if (fail_here("write")) {
        st = shoal_error_set(e, SHOAL_ERR_IO, "%s: cannot write: injected failure (SHOAL_MPI_FAIL)",
                             path);
    } else {
        int rc = MPI_File_open(MPI_COMM_SELF, tmp, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
        if (rc != MPI_SUCCESS) {
            mpi_message(rc, why, sizeof why);
            st = shoal_error_set(e, SHOAL_ERR_IO, "%s: cannot open its temporary %s: %s", path, tmp,
                                 why);
            fh = MPI_FILE_NULL;
        }
    }
    if (!st) {
        unsigned char *raw = malloc(n * 24 + 1);
        if (!raw) {
            st = shoal_error_set(e, SHOAL_ERR_NOMEM, "%s: out of memory for %zu rows", path, n);
        } else {
            npy_encode(rows, n * 6, raw);
            int rc = write_at(fh, (MPI_Offset)(pre_len + first * 24), raw, n * 24);
            if (rc != MPI_SUCCESS) {
                mpi_message(rc, why, sizeof why);
                st = shoal_error_set(e, SHOAL_ERR_IO, "%s: write failed: %s", path, why);
            }
            free(raw);
        }
    }
    if (fh != MPI_FILE_NULL) {
        int rc = MPI_File_close(&fh);
        if (rc != MPI_SUCCESS && !st) {
            mpi_message(rc, why, sizeof why);
            st = shoal_error_set(e, SHOAL_ERR_IO, "%s: write failed (close): %s", path, why);
        }
    }
    st = agree(st, e);
    if (st) {
        if (g_rank == 0)
            shoal_io_atomic_abort(&af);
        return st;
    }
    if (g_rank == 0)
        st = shoal_io_atomic_commit(&af, e);
    return agree(st, e);
}

/* ---- the decomposition --------------------------------------------------------------- */

typedef struct dec {
    MPI_Comm cart;
    int P[3], me[3];
    int32_t gd[3];
    int32_t *cut[3]; /* P[a] + 1 cell planes: rank coordinate k owns [cut[k], cut[k+1]) */
    int32_t lo[3], hi[3];
    int nbr[27];  /* rank in direction (dx, dy, dz): index (dx+1) + 3 (dy+1) + 9 (dz+1) */
    int *rank_at; /* rank of the brick at coordinates (x, y, z), x fastest */
} dec;

static void dec_free(dec *d)
{
    for (int a = 0; a < 3; a++)
        free(d->cut[a]);
    free(d->rank_at);
    if (d->cart != MPI_COMM_NULL)
        MPI_Comm_free(&d->cart);
}

/* The rank grid: MPI_Dims_create's factors, the largest along the axis with the most
 * cells. A brick needs a cell along each axis, so more ranks along an axis than its cells
 * is an error (the user asks for fewer ranks). */
static shoal_status dec_create(dec *d, const int32_t gd[3], shoal_error *e)
{
    memset(d, 0, sizeof *d);
    d->cart = MPI_COMM_NULL;
    int f[3] = {0, 0, 0};
    MPI_Dims_create(g_size, 3, f);
    int order[3] = {2, 1, 0}; /* axes by cell count, most first (ties: z, y, x) */
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (gd[order[j]] > gd[order[i]]) {
                int t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
    for (int i = 0; i < 3; i++)
        d->P[order[i]] = f[i];
    for (int a = 0; a < 3; a++)
        d->gd[a] = gd[a];
    if (d->P[0] > gd[0] || d->P[1] > gd[1] || d->P[2] > gd[2])
        return shoal_error_set(e, SHOAL_ERR_INPUT,
                               "%d ranks make a rank grid of %dx%dx%d bricks but the grid has "
                               "%dx%dx%d cells, and a brick needs at least one cell along each "
                               "axis: run with fewer ranks",
                               g_size, d->P[0], d->P[1], d->P[2], gd[0], gd[1], gd[2]);
    int dims[3] = {d->P[0], d->P[1], d->P[2]}, periods[3] = {0, 0, 0};
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &d->cart);
    MPI_Cart_coords(d->cart, g_rank, 3, d->me);
    d->rank_at = malloc((size_t)g_size * sizeof(int));
    for (int a = 0; a < 3; a++)
        d->cut[a] = malloc(((size_t)d->P[a] + 1) * sizeof(int32_t));
    if (!d->rank_at || !d->cut[0] || !d->cut[1] || !d->cut[2])
        return shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for the rank grid");
    for (int z = 0; z < d->P[2]; z++)
        for (int y = 0; y < d->P[1]; y++)
            for (int x = 0; x < d->P[0]; x++) {
                int c[3] = {x, y, z}, r;
                MPI_Cart_rank(d->cart, c, &r);
                d->rank_at[x + d->P[0] * (y + d->P[1] * z)] = r;
            }
    for (int k = 0; k < 27; k++) {
        int c[3] = {d->me[0] + k % 3 - 1, d->me[1] + k / 3 % 3 - 1, d->me[2] + k / 9 - 1};
        int ok = k != 13;
        for (int a = 0; a < 3; a++)
            ok = ok && c[a] >= 0 && c[a] < d->P[a];
        d->nbr[k] = ok ? d->rank_at[c[0] + d->P[0] * (c[1] + d->P[1] * c[2])] : MPI_PROC_NULL;
    }
    /* until the first cut: even planes */
    for (int a = 0; a < 3; a++)
        for (int k = 0; k <= d->P[a]; k++)
            d->cut[a][k] = (int32_t)((int64_t)gd[a] * k / d->P[a]);
    return SHOAL_OK;
}

static void dec_brick(dec *d)
{
    for (int a = 0; a < 3; a++) {
        d->lo[a] = d->cut[a][d->me[a]];
        d->hi[a] = d->cut[a][d->me[a] + 1];
    }
}

/* Cuts along one axis from the boids per cell plane: plane c goes below cut k when at
 * least half of it fits under k/P of the boids; every brick keeps at least one plane. */
static void cuts_from_hist(const uint64_t *h, int32_t n, int P, int32_t *cut)
{
    uint64_t total = 0;
    for (int32_t c = 0; c < n; c++)
        total += h[c];
    cut[0] = 0;
    cut[P] = n;
    uint64_t run = 0;
    int32_t c = 0;
    for (int k = 1; k < P; k++) {
        double want = (double)total * k / P;
        while (c < n && (double)run + 0.5 * (double)h[c] < want) {
            run += h[c];
            c++;
        }
        int32_t v = c;
        if (v < cut[k - 1] + 1)
            v = cut[k - 1] + 1;
        if (v > n - (P - k))
            v = n - (P - k);
        cut[k] = v;
        while (c < v) {
            run += h[c];
            c++;
        }
        while (c > v) { /* clamped down: give the planes back */
            c--;
            run -= h[c];
        }
    }
}

static int owner_coord(const int32_t *cut, int P, int32_t c)
{
    int lo = 0, hi = P - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (cut[mid] <= c)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

typedef struct run_stats {
    uint64_t halo_boids, migrated, recuts, steps;
    uint64_t steps_migrating; /* steps in which some boid changed rank (with --stats) */
    double imbalance_sum, imbalance_max;
    uint64_t ns_comm, ns_compute, ns_composite, ns_loop;
} run_stats;

typedef struct buf {
    part_boid *b;
    size_t n, cap;
} buf;

static int buf_reserve(buf *b, size_t n)
{
    if (n <= b->cap)
        return 1;
    size_t cap = n + n / 2 + 64;
    part_boid *p = realloc(b->b, cap * sizeof *p);
    if (!p)
        return 0;
    b->b = p;
    b->cap = cap;
    return 1;
}

/* Per boid: the rank it goes to (by cell, or with by_row by the rows each rank writes:
 * [N k / R, N (k+1) / R) to rank k) and its halo sides in the brick it is in (2 bits per
 * axis: bit 0 the low layer, bit 1 the high one). One pass over the boids on the rank's
 * threads; no MPI inside. */
typedef struct cell_pass {
    const dec *d;
    const shoal_sim *s;
    const part_boid *b;
    int *dest;           /* or NULL */
    unsigned char *mask; /* or NULL */
    int by_row;
    size_t total;
    size_t *leavers; /* or NULL: the indices whose dest is another rank, in any order */
    size_t nleave;   /* how many (atomic) */
} cell_pass;

static void cell_pass_range(void *p, int64_t b0, int64_t b1, int t)
{
    (void)t;
    cell_pass *c = p;
    const dec *d = c->d;
    for (int64_t i = b0; i < b1; i++) {
        if (c->dest && c->by_row) {
            int lo = 0, hi = g_size - 1;
            size_t row = c->b[i].row;
            while (lo < hi) {
                int mid = (lo + hi + 1) / 2;
                if (range_first(c->total, mid) <= row)
                    lo = mid;
                else
                    hi = mid - 1;
            }
            c->dest[i] = lo;
            continue;
        }
        int32_t cc[3];
        part_cell_of(c->s, c->b[i].s, cc);
        if (c->dest) {
            int k[3];
            for (int a = 0; a < 3; a++)
                k[a] = owner_coord(d->cut[a], d->P[a], cc[a]);
            int r = d->rank_at[k[0] + d->P[0] * (k[1] + d->P[1] * k[2])];
            c->dest[i] = r;
            if (c->leavers && r != g_rank)
                c->leavers[__atomic_fetch_add(&c->nleave, 1, __ATOMIC_RELAXED)] = (size_t)i;
        }
        if (c->mask) {
            unsigned m = 0;
            for (int a = 0; a < 3; a++) {
                if (cc[a] == d->lo[a])
                    m |= 1u << (2 * a);
                if (cc[a] == d->hi[a] - 1)
                    m |= 2u << (2 * a);
            }
            c->mask[i] = (unsigned char)m;
        }
    }
}

static size_t cell_pass_run(const dec *d, const shoal_sim *s, const buf *own, int *dest,
                            unsigned char *mask, int by_row, size_t total, size_t *leavers)
{
    cell_pass c = {.d = d,
                   .s = s,
                   .b = own->b,
                   .dest = dest,
                   .mask = mask,
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
static shoal_status migrate(const dec *d, const shoal_sim *s, buf *own, buf *tmp, int by_row,
                            size_t total, uint64_t *sent_away, shoal_error *e)
{
    int R = g_size;
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
        nleave = cell_pass_run(d, s, own, dest, NULL, by_row, total, leave);
        if (by_row) {
            for (size_t i = 0; i < own->n; i++)
                scount[dest[i]]++;
        } else {
            qsort(leave, nleave, sizeof *leave, size_cmp); /* the threads found them in any order */
            for (size_t k = 0; k < nleave; k++)
                scount[dest[leave[k]]]++;
        }
        scount[g_rank] = 0; /* stayers do not travel */
    }
    size_t sn = 0;
    for (int r = 0; !st && r < R; r++)
        sn += (size_t)scount[r];
    if (!st && !buf_reserve(tmp, sn))
        st = shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory migrating %zu boids", sn);
    st = agree(st, e);
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
            if (dest[i] == g_rank) {
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
    if (!buf_reserve(own, stay + rn))
        st = shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory migrating boids");
    if (agree(st, e)) {
        free(scount);
        return e->status;
    }
    MPI_Alltoallv(tmp->b, scount, sdisp, g_boid_type, own->b + stay, rcount, rdisp, g_boid_type,
                  MPI_COMM_WORLD);
    own->n = stay + rn;
    free(scount);
    return SHOAL_OK;
}

/* New cuts from the boids per cell plane of the whole school. Collective. */
static void recut(dec *d, const shoal_sim *s, const buf *own)
{
    int32_t n = d->gd[0] + d->gd[1] + d->gd[2];
    uint64_t *h = calloc((size_t)n * 2, sizeof(uint64_t));
    if (!h)
        return; /* keep the old cuts: still exact, only slower */
    uint64_t *hx = h, *hy = h + d->gd[0], *hz = hy + d->gd[1];
    for (size_t i = 0; i < own->n; i++) {
        int32_t c[3];
        part_cell_of(s, own->b[i].s, c);
        hx[c[0]]++;
        hy[c[1]]++;
        hz[c[2]]++;
    }
    MPI_Allreduce(h, h + n, n, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    hx = h + n;
    hy = hx + d->gd[0];
    hz = hy + d->gd[1];
    cuts_from_hist(hx, d->gd[0], d->P[0], d->cut[0]);
    cuts_from_hist(hy, d->gd[1], d->P[1], d->cut[1]);
    cuts_from_hist(hz, d->gd[2], d->P[2], d->cut[2]);
    free(h);
    dec_brick(d);
}

static double imbalance(size_t n_own, size_t total)
{
    unsigned long long mine = n_own, most = 0;
    MPI_Allreduce(&mine, &most, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    return (double)most * g_size / (double)total;
}

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

static shoal_status halo_exchange(const dec *d, const shoal_sim *s, const buf *own, buf *halo,
                                  buf *out, uint64_t *sent, shoal_error *e)
{
    int scount[27] = {0}, rcount[27] = {0}, sdisp[27], rdisp[27];
    int any_nbr = 0;
    for (int k = 0; k < 27; k++)
        any_nbr |= d->nbr[k] != MPI_PROC_NULL;
    halo->n = 0;
    *sent = 0;
    if (!any_nbr) /* one brick: no halo (every rank agrees: the rank grid is 1x1x1) */
        return SHOAL_OK;
    unsigned char *mask = malloc(own->n + 1);
    shoal_status st = mask ? SHOAL_OK : SHOAL_ERR_NOMEM;
    if (!st) {
        cell_pass_run(d, s, own, NULL, mask, 0, 0, NULL);
        for (size_t i = 0; i < own->n; i++) {
            if (!mask[i])
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
    if (!st && !buf_reserve(out, sn))
        st = SHOAL_ERR_NOMEM;
    if (!st) {
        int fill[27];
        memcpy(fill, sdisp, sizeof fill);
        for (size_t i = 0; i < own->n; i++) {
            if (!mask[i])
                continue;
            for (int k = 0; k < 27; k++)
                if (d->nbr[k] != MPI_PROC_NULL && goes_to(mask[i], k))
                    out->b[fill[k]++] = own->b[i];
        }
    }
    free(mask);
    if (agree(st ? shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for the halo") : st, e))
        return e->status;
    MPI_Request req[54];
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
    if (!buf_reserve(halo, rn))
        st = SHOAL_ERR_NOMEM;
    if (agree(st ? shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for the halo") : st, e))
        return e->status;
    nr = 0;
    for (int k = 0; k < 27; k++) {
        if (d->nbr[k] == MPI_PROC_NULL)
            continue;
        if (rcount[k])
            MPI_Irecv(halo->b + rdisp[k], rcount[k], g_boid_type, d->nbr[k], 100 + 26 - k, d->cart,
                      &req[nr++]);
        if (scount[k])
            MPI_Isend(out->b + sdisp[k], scount[k], g_boid_type, d->nbr[k], 100 + k, d->cart,
                      &req[nr++]);
    }
    MPI_Waitall(nr, req, MPI_STATUSES_IGNORE);
    halo->n = rn;
    *sent = sn;
    return SHOAL_OK;
}

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

static void predator_targets(const shoal_sim *s, const buf *own, float tgt[][3])
{
    float pp[SHOAL_MAX_PREDATORS][3];
    int n = (int)shoal_sim_predators(s, &pp[0][0], NULL, SHOAL_MAX_PREDATORS);
    pred_best best[SHOAL_MAX_PREDATORS], all[SHOAL_MAX_PREDATORS];
    for (int k = 0; k < n; k++) {
        best[k].d2 = INFINITY;
        best[k].row = UINT32_MAX;
        best[k].p[0] = best[k].p[1] = best[k].p[2] = 0.0f;
        const float *q = pp[k];
        for (size_t i = 0; i < own->n; i++) {
            const float *x = own->b[i].s;
            float dx = x[0] - q[0], dy = x[1] - q[1], dz = x[2] - q[2];
            float d2 = (dx * dx + dy * dy) + dz * dz;
            uint32_t row = own->b[i].row;
            if (d2 < best[k].d2 || (d2 == best[k].d2 && row < best[k].row)) {
                best[k].d2 = d2;
                best[k].row = row;
                memcpy(best[k].p, x, sizeof best[k].p);
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

static shoal_status predator_centre(const shoal_sim *s, const buf *own, size_t total,
                                    float centre[3], shoal_error *e)
{
    int32_t gd[3];
    part_grid_dims(s, gd);
    centre_item *mine = malloc(own->n * sizeof *mine + 1), *all = NULL;
    int *cnt = g_rank == 0 ? malloc(2 * (size_t)g_size * sizeof(int)) : NULL;
    shoal_status st = SHOAL_OK;
    if (!mine || (g_rank == 0 && !cnt) || (g_rank == 0 && !(all = malloc(total * sizeof *all + 1))))
        st = shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for the predators' centre");
    st = agree(st, e);
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
        if (g_rank == 0) {
            int at = 0;
            for (int r = 0; r < g_size; r++) {
                cnt[g_size + r] = at;
                at += cnt[r];
            }
        }
        MPI_Gatherv(mine, n, t, all, cnt, cnt ? cnt + g_size : NULL, t, 0, MPI_COMM_WORLD);
        MPI_Type_free(&t);
        if (g_rank == 0) {
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

static void print_stats(const char *cmd, const run_stats *rs, const dec *d, size_t total,
                        long long steps, uint64_t ns_io, const shoal_sim *s)
{
    uint64_t loc[4] = {rs->ns_comm, rs->ns_compute, rs->ns_composite, rs->ns_loop}, mx[4], sum[4];
    MPI_Reduce(loc, mx, 4, MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(loc, sum, 4, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    uint64_t cnt[2] = {rs->halo_boids, rs->migrated}, cs[2];
    MPI_Reduce(cnt, cs, 2, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (g_rank != 0)
        return;
    double k = steps > 0 ? (double)steps : 1.0;
    int threads = part_thread_count(s);
    fprintf(stderr,
            "shoal %s (MPI): %d ranks as %dx%dx%d bricks, %d threads per rank, %zu boids, "
            "%lld steps, %zu bytes per boid on the wire\n",
            cmd, g_size, d->P[0], d->P[1], d->P[2], threads, total, steps, sizeof(part_boid));
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
}

/* ---- the commands ---------------------------------------------------------------------- */

static void buf_free(buf *b)
{
    free(b->b);
    b->b = NULL;
    b->n = b->cap = 0;
}

/* ---- a school over the ranks ------------------------------------------------------------ */

/* The rank's part of a school and the decomposition it steps in. Made from this rank's
 * rows (any rows: the first start migrates every boid to the rank owning its cell). */
struct mpi_school {
    shoal_sim_desc d;
    shoal_sim *s; /* the part (sim/part.h): predators, targets and time are replicated */
    buf own, all, tmp;
    size_t total;
    dec dd;
    int started, preds, stats;
    double base; /* the imbalance after the last cut */
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
        m->preds = d->params.predator_count > 0;
        m->own.b = b;
        m->own.n = m->own.cap = n;
        b = NULL;
        st = part_create(&m->d, &m->s, e);
    }
    free(b);
    st = agree(st, e);
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
    int32_t gd[3] = {1, 1, 1};
    part_grid_dims(m->s, gd);
    shoal_status st = agree(dec_create(&m->dd, gd, e), e);
    uint64_t moved = 0;
    if (!st) {
        recut(&m->dd, m->s, &m->own);
        st = migrate(&m->dd, m->s, &m->own, &m->tmp, 0, m->total, &moved, e);
        m->base = imbalance(m->own.n, m->total);
    }
    m->started = !st;
    return st;
}

static shoal_status school_step(mpi_school *m, long long steps, shoal_error *e)
{
    shoal_status st = school_start(m, e);
    run_stats *rs = &m->rs;
    uint64_t moved = 0, t_loop = timer_now_ns();
    for (long long k = 0; k < steps && !st; k++) {
        uint64_t t0 = timer_now_ns();
        if (m->steps_done > 0) { /* the last step moved boids across brick faces */
            st = migrate(&m->dd, m->s, &m->own, &m->tmp, 0, m->total, &moved, e);
            if (st)
                break;
            rs->migrated += moved;
            if (m->stats) {
                unsigned long long mv = moved, all_m = 0;
                MPI_Allreduce(&mv, &all_m, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
                rs->steps_migrating += all_m > 0;
            }
        }
        double imb = imbalance(m->own.n, m->total);
        if (imb > RECUT_IMBALANCE && imb > m->base * RECUT_GROWTH) {
            recut(&m->dd, m->s, &m->own);
            st = migrate(&m->dd, m->s, &m->own, &m->tmp, 0, m->total, &moved, e);
            if (st)
                break;
            rs->migrated += moved;
            rs->recuts++;
            imb = m->base = imbalance(m->own.n, m->total);
        }
        rs->imbalance_sum += imb;
        rs->imbalance_max = imb > rs->imbalance_max ? imb : rs->imbalance_max;
        if (m->preds && g_size > 1 && m->d.params.predator_chase >= 1.0f) {
            float centre[3] = {0, 0, 0};
            st = predator_centre(m->s, &m->own, m->total, centre, e);
            if (st)
                break;
            for (int q = 0; q < m->d.params.predator_count; q++)
                memcpy(m->tgt[q], centre, sizeof centre);
        } else if (m->preds && g_size > 1) {
            predator_targets(m->s, &m->own, m->tgt);
        }
        uint64_t sent = 0;
        st = halo_exchange(&m->dd, m->s, &m->own, &m->all, &m->tmp, &sent, e);
        if (st)
            break;
        rs->halo_boids += sent;
        uint64_t t1 = timer_now_ns();
        rs->ns_comm += t1 - t0;
        st = part_set_box(m->s, m->dd.lo, m->dd.hi, e);
        if (!st)
            st = part_load(m->s, m->own.b, m->own.n, m->all.b, m->all.n, e);
        st = agree(st, e);
        if (st)
            break;
        uint32_t bad = part_step(m->s), bad_all = UINT32_MAX;
        uint64_t t2 = timer_now_ns();
        MPI_Allreduce(&bad, &bad_all, 1, MPI_UINT32_T, MPI_MIN, MPI_COMM_WORLD);
        if (bad_all != UINT32_MAX) {
            st = shoal_error_set(e, SHOAL_ERR_NONFINITE,
                                 "non-finite value in boid %u (input row) at step %llu "
                                 "(t = %.6f s); state left as before that step",
                                 bad_all, (unsigned long long)k + 1, shoal_sim_time(m->s));
            break;
        }
        uint64_t t3 = timer_now_ns();
        if (m->preds && g_size == 1)
            part_predator_targets(m->s, m->tgt);
        size_t got = part_extract(m->s, m->own.b);
        if (got == SIZE_MAX) /* out of memory (the offsets of its rows) */
            st = shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory extracting the boids");
        st = agree(st, e);
        if (st)
            break;
        m->own.n = got;
        part_finish_step(m->s, m->tgt);
        uint64_t t4 = timer_now_ns();
        rs->ns_compute += (t2 - t1) + (t4 - t3);
        rs->ns_comm += t3 - t2;
        rs->steps++;
        m->steps_done++;
    }
    rs->ns_loop += timer_now_ns() - t_loop;
    return st;
}

/* Every rank's boids back to rows: rank k gets rows [N k / R, N (k+1) / R) in *rows (n x 6
 * floats, malloc'd; *first, *n set). Collective; the outcome is agreed. */
static shoal_status school_rows(mpi_school *m, float **rows_out, size_t *first_out, size_t *n_out,
                                shoal_error *e)
{
    uint64_t moved = 0;
    float *rows = NULL;
    size_t first = range_first(m->total, g_rank), n = range_first(m->total, g_rank + 1) - first;
    shoal_status st = school_start(m, e);
    if (!st)
        st = migrate(&m->dd, m->s, &m->own, &m->tmp, 1, m->total, &moved, e);
    if (!st) {
        rows = malloc(n * 6 * sizeof(float) + 1);
        if (!rows || m->own.n != n)
            st = shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for %zu rows", n);
        for (size_t i = 0; !st && i < m->own.n; i++)
            memcpy(rows + (m->own.b[i].row - first) * 6, m->own.b[i].s, 6 * sizeof(float));
        st = agree(st, e);
    }
    if (st) {
        free(rows);
        rows = NULL;
    }
    *rows_out = rows;
    *first_out = first;
    *n_out = n;
    return st;
}

void mpi_school_destroy(mpi_school *m)
{
    if (!m)
        return;
    buf_free(&m->own);
    buf_free(&m->all);
    buf_free(&m->tmp);
    dec_free(&m->dd);
    shoal_sim_destroy(m->s);
    free(m);
}

shoal_status mpi_school_create(const shoal_sim_desc *d, mpi_school **out, shoal_error *e)
{
    boid_type_init();
    *out = NULL;
    size_t total = d->boid_count;
    if (total < 1 || total > (size_t)UINT32_MAX - 64)
        return shoal_error_set(e, SHOAL_ERR_INPUT, "boid count %zu exceeds the limit %u", total,
                               UINT32_MAX - 64);
    size_t first = range_first(total, g_rank), n = range_first(total, g_rank + 1) - first;
    float *rows = malloc(n * 6 * sizeof(float) + 1);
    part_boid *b = malloc(n * sizeof *b + 1);
    shoal_status st = rows && b
                          ? SHOAL_OK
                          : shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for %zu boids", n);
    st = agree(st, e);
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

shoal_status mpi_school_gather(mpi_school *m, float *rows, shoal_error *e)
{
    shoal_status st = SHOAL_OK;
    int *cnt = NULL;
    part_boid *all = NULL;
    if (g_rank == 0) {
        cnt = malloc(2 * (size_t)g_size * sizeof(int));
        all = malloc(m->total * sizeof *all + 1);
        if (!cnt || !all)
            st = shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory gathering %zu boids", m->total);
    }
    if (m->own.n > INT_MAX)
        st = shoal_error_set(e, SHOAL_ERR_INPUT, "%zu boids on one rank: too many to gather",
                             m->own.n);
    st = agree(st, e);
    if (!st) {
        int mine = (int)m->own.n;
        MPI_Gather(&mine, 1, MPI_INT, cnt, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (g_rank == 0)
            for (int r = 0, at = 0; r < g_size; r++) {
                cnt[g_size + r] = at;
                at += cnt[r];
            }
        MPI_Gatherv(m->own.b, mine, g_boid_type, all, cnt, cnt ? cnt + g_size : NULL, g_boid_type,
                    0, MPI_COMM_WORLD);
        if (g_rank == 0)
            for (size_t i = 0; i < m->total; i++)
                memcpy(rows + 6 * (size_t)all[i].row, all[i].s, 6 * sizeof(float));
    }
    free(cnt);
    free(all);
    return st;
}

void mpi_school_print_stats(const mpi_school *m)
{
    print_stats("run", &m->rs, &m->dd, m->total, m->rs.steps, 0, m->s);
}

shoal_status mpi_step_file(const shoal_sim_desc *d0, const shoal_scene *scene, const char *in,
                           const char *resume, const char *out, const char *ckpt, long long steps,
                           int stats, shoal_error *e)
{
    boid_type_init();
    uint64_t t_io = timer_now_ns();
    part_boid *b = NULL;
    size_t n_own = 0, total = 0;
    shoal_sim_desc d = *d0;
    shoal_sim_checkpoint ck;
    shoal_status st = resume ? read_ckpt_part(resume, &d, &b, &n_own, &total, &ck, e)
                             : read_part(in, &b, &n_own, &total, e);
    if (st)
        return st;
    t_io = timer_now_ns() - t_io;
    d.boid_count = total;
    mpi_school *m = NULL;
    if ((st = school_create(&d, b, n_own, &m, e)))
        return st;
    m->stats = stats;
    if (resume)
        st = shoal_sim_set_checkpoint(m->s, &ck, e);
    if (!st && scene)
        st = shoal_scene_add_obstacles(scene, m->s, e);
    st = agree(st, e);
    if (!st)
        st = school_start(m, e);
    prof_reset(shoal_sim_get_profile(m->s));
    if (!st)
        st = school_step(m, steps, e);
    if (!st && stats && g_rank == 0) {
        char title[160];
        snprintf(title, sizeof title,
                 "shoal step: %zu boids, %lld steps, %s, %d threads (rank 0 of %d)", total, steps,
                 shoal_sim_isa_name(m->s), part_thread_count(m->s), g_size);
        prof_print(shoal_sim_get_profile(m->s), stderr, title, 1);
    }
    if (!st && stats)
        print_stats("step", &m->rs, &m->dd, total, steps, t_io, m->s);
    /* back to rows: rank k writes rows [N k / R, N (k+1) / R) */
    float *rows = NULL;
    size_t first = 0, n = 0;
    if (!st)
        st = school_rows(m, &rows, &first, &n, e);
    if (!st && out)
        st = write_rows(out, rows, first, n, total, e);
    if (!st && ckpt)
        st = write_ckpt(ckpt, &d, m->s, rows, n, total, e);
    free(rows);
    mpi_school_destroy(m);
    return st;
}

shoal_status mpi_init_file(const shoal_sim_desc *d, const char *out, int stats, shoal_error *e)
{
    size_t total = d->boid_count;
    if (total < 1 || total > (size_t)UINT32_MAX - 64)
        return shoal_error_set(e, SHOAL_ERR_INPUT, "boid count %zu exceeds the limit %u", total,
                               UINT32_MAX - 64);
    uint64_t t0 = timer_now_ns();
    size_t first = range_first(total, g_rank), n = range_first(total, g_rank + 1) - first;
    float *rows = malloc(n * 6 * sizeof(float) + 1);
    shoal_status st =
        rows ? SHOAL_OK : shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for %zu boids", n);
    st = agree(st, e);
    if (!st)
        part_init_rows(d, first, n, rows);
    uint64_t t1 = timer_now_ns();
    if (!st)
        st = write_rows(out, rows, first, n, total, e);
    free(rows);
    if (!st && stats && g_rank == 0)
        fprintf(stderr, "shoal init (MPI): %zu boids over %d ranks: draw %.1f ms, write %.1f ms\n",
                total, g_size, (double)(t1 - t0) * 1e-6, (double)(timer_now_ns() - t1) * 1e-6);
    return st;
}
