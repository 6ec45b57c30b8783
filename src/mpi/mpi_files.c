/* SPDX-License-Identifier: MIT */
/* State files and checkpoints under MPI (docs/ARCHITECTURE.md "MPI", files): reading a
 * state or checkpoint into each rank's rows (rank 0 checks the input first; a regular file
 * is read at row offsets with MPI-IO, anything else by rank 0 and scattered), and writing
 * the row layouts of io/rows_layout.h (.npy, .vtp, checkpoints) at row offsets, or
 * streamed through rank 0 into a device or FIFO. Every write's count is checked. */
#include "mpi_internal.h"

#include "io/npy_layout.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the MPI-IO path writes floats as the host's bytes: little-endian hosts only"
#endif

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

/* Write [off, off + bytes) of the file `name` through fh, in pieces MPI's int counts can
 * hold, each piece's written count checked (MPI_Get_count): Open MPI's ompio reports a full
 * disk only by a line on stderr and a short count, with MPI_SUCCESS. What a short piece left
 * is written with pwrite(2), which finishes it (a short count can be transient) or says why
 * it cannot (ENOSPC, EIO, EFBIG ...). 0, or -1 with the reason in why. SHOAL_MPI_FAIL=short:K
 * makes rank K's first piece short and its completion fail with ENOSPC (tests/test_mpi.sh;
 * for machines where a small file system cannot be mounted). */
static int write_at(MPI_File fh, const char *name, MPI_Offset off, const void *buf, size_t bytes,
                    char *why, size_t why_size)
{
    const unsigned char *p = buf;
    while (bytes) {
        int n = bytes > (1u << 30) ? (1 << 30) : (int)bytes, got = 0;
        int inject = n > 1 && comm_fail_here("short");
        MPI_Status stt;
        int rc = MPI_File_write_at(fh, off, p, inject ? n / 2 : n, MPI_BYTE, &stt);
        if (rc != MPI_SUCCESS) {
            comm_message(rc, why, why_size);
            return -1;
        }
        MPI_Get_count(&stt, MPI_BYTE, &got);
        if (got == MPI_UNDEFINED || got < 0)
            got = 0;
        if (got != n) {
            if (inject) {
                snprintf(why, why_size, "%s (injected: SHOAL_MPI_FAIL=short)", strerror(ENOSPC));
                return -1;
            }
            int fd = open(name, O_WRONLY | O_CLOEXEC);
            if (fd < 0) {
                snprintf(why, why_size, "%s", strerror(errno));
                return -1;
            }
            for (size_t left = (size_t)(n - got); left;) {
                ssize_t w = pwrite(fd, p + got, left, (off_t)(off + got));
                if (w <= 0) {
                    snprintf(why, why_size, "%s", w < 0 ? strerror(errno) : "nothing written");
                    close(fd);
                    return -1;
                }
                got += (int)w;
                left -= (size_t)w;
            }
            if (close(fd) != 0) {
                snprintf(why, why_size, "%s", strerror(errno));
                return -1;
            }
        }
        p += n;
        off += n;
        bytes -= (size_t)n;
    }
    return 0;
}

/* .bin (Unity's raw buffer) has no header to say how many rows follow: not under MPI. */
static int state_name_ok(const char *path)
{
    size_t n = strlen(path);
    return !(n >= 4 && strcmp(path + n - 4, ".bin") == 0);
}

static int is_vtp_name(const char *path)
{
    size_t n = strlen(path);
    return n > 4 && strcmp(path + n - 4, ".vtp") == 0;
}

/* Rows travel from rank 0 to the others (and back) in pieces of at most this many. */
#define ROWS_CHUNK ((size_t)1 << 16)

/* Rank 0's rows [first(k), first(k+1)) of `all` (total x 6 floats) to each rank k, into
 * `mine` (n x 6 floats on every rank; rank 0 copies its own). Collective. */
static void scatter_rows(const float *all, size_t total, float *mine, size_t n)
{
    if (mpi_rank() == 0) {
        memcpy(mine, all, n * 6 * sizeof(float));
        for (int r = 1; r < mpi_size(); r++) {
            size_t f = comm_range_first(total, r), rn = comm_range_first(total, r + 1) - f;
            for (size_t i = 0; i < rn; i += ROWS_CHUNK) {
                size_t m = rn - i < ROWS_CHUNK ? rn - i : ROWS_CHUNK;
                MPI_Send(all + 6 * (f + i), (int)(6 * m), MPI_FLOAT, r, 600, MPI_COMM_WORLD);
            }
        }
        return;
    }
    for (size_t i = 0; i < n; i += ROWS_CHUNK) {
        size_t m = n - i < ROWS_CHUNK ? n - i : ROWS_CHUNK;
        MPI_Recv(mine + 6 * i, (int)(6 * m), MPI_FLOAT, 0, 600, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

/* rows (n x 6 floats, rows [first, first + n)) as part_boids with their row ids (malloc'ed,
 * or NULL when out of memory). */
static part_boid *boids_from_rows(const float *rows, size_t first, size_t n)
{
    part_boid *b = malloc(n * sizeof *b + 1);
    for (size_t i = 0; b && i < n; i++) {
        memcpy(b[i].s, rows + 6 * i, sizeof b[i].s);
        b[i].row = (uint32_t)(first + i);
    }
    return b;
}

/* What rank 0 found at an input path, for every rank. */
typedef struct input_info {
    int regular;        /* a regular file: each rank reads its rows at their offsets */
    uint64_t file_size; /* its size on rank 0 */
    npy_layout lay;
} input_info;

/* This rank's rows of a .npy state: rows [first, first + *count) of *total, as part_boids
 * with their row ids. Rank 0 looks at the file first, with the one-process reader's checks
 * and messages (a directory is "read error: Is a directory", /dev/zero a bad magic), so
 * that no rank starts an MPI-IO read that Open MPI would report on every rank. A regular
 * file is then read by every rank at its rows' offsets (MPI-IO; a rank that sees another
 * size there fails); anything else (a FIFO, a pipe, a device) can be read once only: rank 0
 * reads it whole and sends each rank its rows. Collective; the outcome is agreed. */
shoal_status files_read_state(const char *path, part_boid **out, size_t *count, size_t *total,
                              shoal_error *e)
{
    *out = NULL;
    *count = *total = 0;
    shoal_status st = SHOAL_OK;
    input_info in;
    memset(&in, 0, sizeof in);
    float *all = NULL; /* rank 0, not a regular file: the whole state */
    if (!state_name_ok(path)) {
        st = shoal_error_set(e, SHOAL_ERR_INPUT,
                             "%s: under MPI shoal reads .npy state files (not .bin)", path);
    } else if (comm_fail_here("open")) {
        st = shoal_error_set(e, SHOAL_ERR_IO, "%s: cannot open: injected failure (SHOAL_MPI_FAIL)",
                             path);
    } else if (mpi_rank() == 0) {
        struct stat sb;
        in.regular = stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
        if (in.regular) {
            FILE *f = fopen(path, "rb");
            unsigned char head[4096], *hdr = head;
            size_t got = 0;
            if (!f) {
                st = shoal_error_set(e, SHOAL_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
            } else {
                in.file_size = (uint64_t)sb.st_size;
                got = fread(head, 1, sizeof head, f);
                if (ferror(f))
                    st = shoal_error_set(e, SHOAL_ERR_IO, "%s: read error: %s", path,
                                         strerror(errno));
                size_t need = st ? 0 : npy_preamble_size(head, got);
                if (!st && need > got && need <= in.file_size) {
                    hdr = malloc(need);
                    if (!hdr)
                        st = shoal_error_set(e, SHOAL_ERR_NOMEM, "%s: out of memory for its header",
                                             path);
                    else if (fseek(f, 0, SEEK_SET) != 0 || fread(hdr, 1, need, f) != need)
                        st = shoal_error_set(e, SHOAL_ERR_IO, "%s: read error: %s", path,
                                             ferror(f) ? strerror(errno) : "short file");
                    got = need;
                }
                fclose(f); /* read-only: nothing to lose */
            }
            if (!st)
                st = npy_layout_parse(hdr, got, in.file_size, path, &in.lay, e);
            if (hdr != head)
                free(hdr);
        } else {
            /* read once, whole, by the library's reader: its messages are one process's */
            st = shoal_io_npy_read(path, &all, &in.lay.count, e);
            if (!st)
                st = shoal_state_check_finite(all, in.lay.count, path, e);
        }
        if (!st && in.lay.count > (size_t)UINT32_MAX - 64)
            st = shoal_error_set(e, SHOAL_ERR_INPUT, "boid count %zu exceeds the limit %u",
                                 in.lay.count, UINT32_MAX - 64);
    }
    if ((st = comm_agree(st, e))) {
        free(all);
        return st;
    }
    MPI_Bcast(&in, (int)sizeof in, MPI_BYTE, 0, MPI_COMM_WORLD);
    size_t first = comm_range_first(in.lay.count, mpi_rank()),
           last = comm_range_first(in.lay.count, mpi_rank() + 1);
    size_t n = last - first;
    float *rows = malloc(n * 6 * sizeof(float) + 1);
    if (!rows)
        st = shoal_error_set(e, SHOAL_ERR_NOMEM, "%s: out of memory for %zu rows", path, n);
    if ((st = comm_agree(st, e))) {
        free(all);
        free(rows);
        return st;
    }
    if (!in.regular) {
        scatter_rows(all, in.lay.count, rows, n);
    } else {
        MPI_File fh = MPI_FILE_NULL;
        char why[MPI_MAX_ERROR_STRING + 64];
        int rc = MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
        MPI_Offset size = 0;
        if (rc != MPI_SUCCESS) {
            comm_message(rc, why, sizeof why);
            st = shoal_error_set(e, SHOAL_ERR_IO, "%s: cannot open: %s", path, why);
            fh = MPI_FILE_NULL;
        } else if (MPI_File_get_size(fh, &size) != MPI_SUCCESS || (uint64_t)size != in.file_size) {
            st = shoal_error_set(e, SHOAL_ERR_INPUT,
                                 "%s: %lld bytes on this rank, %llu on rank 0: not the same file "
                                 "(every rank must read the same input)",
                                 path, (long long)size, (unsigned long long)in.file_size);
        }
        size_t row_bytes = 6 * in.lay.item_size;
        unsigned char *raw = st ? NULL : malloc(n * row_bytes + 1);
        if (!st && !raw)
            st = shoal_error_set(e, SHOAL_ERR_NOMEM, "%s: out of memory for %zu rows", path, n);
        else if (!st && read_at(fh, (MPI_Offset)(in.lay.data_offset + first * row_bytes), raw,
                                n * row_bytes) != MPI_SUCCESS)
            st = shoal_error_set(e, SHOAL_ERR_IO, "%s: read error in rows %zu..%zu", path, first,
                                 last);
        if (fh != MPI_FILE_NULL)
            MPI_File_close(&fh);
        if (!st) {
            npy_decode(raw, in.lay.item_size, n * 6, rows);
            /* the one-process message, naming the row in the whole file: the lowest
             * failing rank's first bad row is the file's first */
            static const char *const names[6] = {"px", "py", "pz", "vx", "vy", "vz"};
            for (size_t i = 0; i < n * 6 && !st; i++) {
                float v = rows[i];
                if (!isfinite(v))
                    st = shoal_error_set(e, SHOAL_ERR_INPUT, "%s: row %zu column %d (%s) is %s",
                                         path, first + i / 6, (int)(i % 6), names[i % 6],
                                         isnan(v) ? "nan"
                                         : v > 0  ? "inf"
                                                  : "-inf");
            }
        }
        free(raw);
    }
    free(all);
    part_boid *b = NULL;
    if (!st && !(b = boids_from_rows(rows, first, n)))
        st = shoal_error_set(e, SHOAL_ERR_NOMEM, "%s: out of memory for %zu rows", path, n);
    free(rows);
    st = comm_agree(st, e);
    if (st) {
        free(b);
        return st;
    }
    *out = b;
    *count = n;
    *total = in.lay.count;
    return SHOAL_OK;
}

/* This rank's rows of a checkpoint: rank 0 reads it (the library's reader and its checks;
 * O(N) memory there), every rank gets its desc and state beyond the boids, and each rank
 * its rows [first, first + n). d takes the checkpoint's model, parameters, dt, t0, seed and
 * count. Collective. */
shoal_status files_read_checkpoint(const char *path, shoal_sim_desc *d, part_boid **out,
                                   size_t *count, size_t *total, shoal_sim_checkpoint *ck,
                                   shoal_error *e)
{
    *out = NULL;
    *count = *total = 0;
    shoal_sim_desc rd;
    memset(&rd, 0, sizeof rd);
    float *all = NULL;
    shoal_status st = SHOAL_OK;
    if (comm_fail_here("open"))
        st = shoal_error_set(e, SHOAL_ERR_IO, "%s: cannot open: injected failure (SHOAL_MPI_FAIL)",
                             path);
    else if (mpi_rank() == 0)
        st = shoal_io_checkpoint_read(path, &rd, &all, ck, e);
    if (!st && mpi_rank() == 0 && rd.boid_count > (size_t)UINT32_MAX - 64)
        st = shoal_error_set(e, SHOAL_ERR_INPUT, "boid count %zu exceeds the limit %u",
                             rd.boid_count, UINT32_MAX - 64);
    st = comm_agree(st, e);
    if (st) {
        free(all);
        return st;
    }
    MPI_Bcast(&rd, (int)sizeof rd, MPI_BYTE, 0, MPI_COMM_WORLD);
    MPI_Bcast(ck, (int)sizeof *ck, MPI_BYTE, 0, MPI_COMM_WORLD);
    size_t first = comm_range_first(rd.boid_count, mpi_rank()),
           n = comm_range_first(rd.boid_count, mpi_rank() + 1) - first;
    float *rows = malloc(n * 6 * sizeof(float) + 1);
    if (!rows)
        st = shoal_error_set(e, SHOAL_ERR_NOMEM, "%s: out of memory for %zu rows", path, n);
    if ((st = comm_agree(st, e))) {
        free(all);
        free(rows);
        return st;
    }
    scatter_rows(all, rd.boid_count, rows, n);
    part_boid *b = boids_from_rows(rows, first, n);
    if (!b)
        st = shoal_error_set(e, SHOAL_ERR_NOMEM, "%s: out of memory for %zu rows", path, n);
    free(all);
    free(rows);
    st = comm_agree(st, e);
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

/* ---- row files out ---------------------------------------------------------------------- */

void files_out_abort(files_out *o)
{
    if (o->fh != MPI_FILE_NULL)
        MPI_File_close(&o->fh);
    o->fh = MPI_FILE_NULL;
    if (mpi_rank() == 0)
        shoal_io_atomic_abort(&o->af);
    rows_layout_free(&o->lay);
}

/* Collective: open `path` for the layout (taken over: freed by commit or abort) and write
 * the fixed pieces of a regular file. On failure everything is undone (agreed). */
shoal_status files_out_open(files_out *o, const char *path, rows_layout lay, shoal_error *e)
{
    memset(o, 0, sizeof *o);
    o->path = path;
    o->lay = lay;
    o->fh = MPI_FILE_NULL;
    o->af.slot = -1;
    shoal_status st = SHOAL_OK;
    char why[MPI_MAX_ERROR_STRING + 64];
    if (mpi_rank() == 0) {
        st = shoal_io_atomic_open(&o->af, path, e);
        o->in_place = !st && !o->af.tmp_path[0];
        memcpy(o->tmp, o->af.tmp_path, sizeof o->tmp);
    }
    if ((st = comm_agree(st, e))) {
        rows_layout_free(&o->lay);
        return st;
    }
    MPI_Bcast(&o->in_place, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(o->tmp, (int)sizeof o->tmp, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (o->in_place)
        return SHOAL_OK;
    if (comm_fail_here("write")) {
        st = shoal_error_set(e, SHOAL_ERR_IO, "%s: cannot write: injected failure (SHOAL_MPI_FAIL)",
                             path);
    } else {
        int rc = MPI_File_open(MPI_COMM_SELF, o->tmp, MPI_MODE_WRONLY, MPI_INFO_NULL, &o->fh);
        if (rc != MPI_SUCCESS) {
            comm_message(rc, why, sizeof why);
            st = shoal_error_set(e, SHOAL_ERR_IO, "%s: cannot open its temporary %s: %s", path,
                                 o->tmp, why);
            o->fh = MPI_FILE_NULL;
        }
    }
    for (int p = 0; !st && mpi_rank() == 0 && p < o->lay.piece_count; p++) {
        const rows_piece *q = &o->lay.piece[p];
        if (write_at(o->fh, o->tmp, (MPI_Offset)q->offset, o->lay.bytes + q->at, q->size, why,
                     sizeof why))
            st = shoal_error_set(e, SHOAL_ERR_IO, "%s: write failed: %s", path, why);
    }
    if ((st = comm_agree(st, e)))
        files_out_abort(o);
    return st;
}

/* The in-place stream: rank 0 writes the file front to back, its own rows and then each
 * other rank's (received in ROWS_CHUNK pieces) for every section. A write that fails stops
 * the writing but not the receiving, so no rank is left waiting. */
static shoal_status rows_out_stream(files_out *o, const float *rows, size_t first, size_t n,
                                    unsigned char *buf, shoal_error *e)
{
    const rows_layout *l = &o->lay;
    FILE *f = mpi_rank() == 0 ? o->af.file : NULL;
    int bad = 0;
    int p = 0, s = 0;
    while (p < l->piece_count || s < l->section_count) {
        int piece_next = s >= l->section_count ||
                         (p < l->piece_count && l->piece[p].offset <= l->section[s].offset);
        if (piece_next) {
            const rows_piece *q = &l->piece[p++];
            if (f && !bad && fwrite(l->bytes + q->at, 1, q->size, f) != q->size)
                bad = errno ? errno : EIO;
            continue;
        }
        rows_kind k = l->section[s++].kind;
        size_t w = rows_kind_size(k);
        if (mpi_rank() != 0) {
            for (size_t i = 0; i < n; i += ROWS_CHUNK) {
                size_t m = n - i < ROWS_CHUNK ? n - i : ROWS_CHUNK;
                rows_encode(k, rows + 6 * i, first + i, m, buf);
                MPI_Send(buf, (int)(m * w), MPI_BYTE, 0, 700 + s, MPI_COMM_WORLD);
            }
            continue;
        }
        for (int r = 0; r < mpi_size(); r++) {
            size_t rf = comm_range_first(l->count, r), rn = comm_range_first(l->count, r + 1) - rf;
            for (size_t i = 0; i < rn; i += ROWS_CHUNK) {
                size_t m = rn - i < ROWS_CHUNK ? rn - i : ROWS_CHUNK;
                if (r == 0)
                    rows_encode(k, rows + 6 * i, rf + i, m, buf);
                else
                    MPI_Recv(buf, (int)(m * w), MPI_BYTE, r, 700 + s, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
                if (!bad && fwrite(buf, w, m, f) != m)
                    bad = errno ? errno : EIO;
            }
        }
    }
    if (bad)
        return shoal_error_set(e, SHOAL_ERR_IO, "%s: write failed: %s", o->path, strerror(bad));
    return SHOAL_OK;
}

/* Collective: this rank's rows [first, first + n) of the layout's count (rows: n x 6
 * floats, this rank's contiguous range: rank k holds [N k / R, N (k+1) / R)), every
 * section. Regular files are synced and closed on every rank here. On failure the output is
 * aborted (agreed). */
shoal_status files_out_write(files_out *o, const float *rows, size_t first, size_t n,
                             shoal_error *e)
{
    size_t chunk = n < ROWS_CHUNK ? n : ROWS_CHUNK;
    if (o->in_place && mpi_rank() == 0)
        chunk = ROWS_CHUNK;
    unsigned char *buf = malloc(chunk * 24 + 1);
    shoal_status st =
        buf ? SHOAL_OK
            : shoal_error_set(e, SHOAL_ERR_NOMEM, "%s: out of memory for %zu rows", o->path, chunk);
    if ((st = comm_agree(st, e))) {
        free(buf);
        files_out_abort(o);
        return st;
    }
    if (o->in_place) {
        st = rows_out_stream(o, rows, first, n, buf, e);
    } else {
        char why[MPI_MAX_ERROR_STRING + 64];
        for (int s = 0; !st && s < o->lay.section_count; s++) {
            rows_kind k = o->lay.section[s].kind;
            size_t w = rows_kind_size(k);
            for (size_t i = 0; !st && i < n; i += chunk) {
                size_t m = n - i < chunk ? n - i : chunk;
                rows_encode(k, rows + 6 * i, first + i, m, buf);
                MPI_Offset at = (MPI_Offset)(o->lay.section[s].offset + (first + i) * w);
                if (write_at(o->fh, o->tmp, at, buf, m * w, why, sizeof why))
                    st = shoal_error_set(e, SHOAL_ERR_IO, "%s: write failed: %s", o->path, why);
            }
        }
        int rc = MPI_SUCCESS;
        if (!st && (rc = MPI_File_sync(o->fh)) != MPI_SUCCESS) {
            comm_message(rc, why, sizeof why);
            st = shoal_error_set(e, SHOAL_ERR_IO, "%s: write failed (sync): %s", o->path, why);
        }
        rc = MPI_File_close(&o->fh);
        o->fh = MPI_FILE_NULL;
        if (rc != MPI_SUCCESS && !st) {
            comm_message(rc, why, sizeof why);
            st = shoal_error_set(e, SHOAL_ERR_IO, "%s: write failed (close): %s", o->path, why);
        }
    }
    free(buf);
    if ((st = comm_agree(st, e)))
        files_out_abort(o);
    return st;
}

/* Collective: rank 0 puts the written file in place (flush, fsync, rename; a device or
 * FIFO: flush and close). Agreed; the layout is freed either way. */
shoal_status files_out_commit(files_out *o, shoal_error *e)
{
    shoal_status st = mpi_rank() == 0 ? shoal_io_atomic_commit(&o->af, e) : SHOAL_OK;
    rows_layout_free(&o->lay);
    return comm_agree(st, e);
}

/* The layout of a state file named `path`: VTK PolyData for a .vtp name (as
 * app_state_write: no time), else .npy. */
static shoal_status state_layout(const char *path, size_t total, double time, rows_layout *l,
                                 shoal_error *e)
{
    if (!state_name_ok(path))
        return shoal_error_set(e, SHOAL_ERR_INPUT,
                               "%s: under MPI shoal writes .npy and .vtp state files (not .bin)",
                               path);
    return is_vtp_name(path) ? rows_layout_vtp(l, total, time, path, e)
                             : rows_layout_npy(l, total, path, e);
}

/* Collective: open a state output (its layout from its name). Agreed. */
shoal_status files_open_state(files_out *o, const char *path, size_t total, double time,
                              shoal_error *e)
{
    rows_layout l;
    memset(&l, 0, sizeof l);
    shoal_status st = comm_agree(state_layout(path, total, time, &l, e), e);
    if (st) {
        memset(o, 0, sizeof *o);
        o->fh = MPI_FILE_NULL;
        o->af.slot = -1;
        rows_layout_free(&l);
        return st;
    }
    return files_out_open(o, path, l, e);
}

/* Collective: open the checkpoint of the whole school: the part's desc (count = total),
 * its steps, predators and targets (replicated on every rank). Agreed. */
shoal_status files_open_checkpoint(files_out *o, const char *path, const shoal_sim *part,
                                   size_t total, shoal_error *e)
{
    rows_layout l;
    memset(&l, 0, sizeof l);
    shoal_sim_desc d = *shoal_sim_get_desc(part);
    shoal_sim_checkpoint ck;
    shoal_sim_get_checkpoint(part, &ck);
    shoal_status st = comm_agree(rows_layout_checkpoint(&l, &d, &ck, total, path, e), e);
    if (st) {
        memset(o, 0, sizeof *o);
        o->fh = MPI_FILE_NULL;
        o->af.slot = -1;
        rows_layout_free(&l);
        return st;
    }
    return files_out_open(o, path, l, e);
}
