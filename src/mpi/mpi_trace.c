/* SPDX-License-Identifier: MIT */
/* Traces under MPI (docs/CLI.md, step --trace): every rank records its own Chrome trace (one
 * track per thread, as one process does) and rank 0 makes them one file, each rank a
 * process ("shoal rank K", pid K + 1) with its threads as tracks, sorted by rank. The ranks
 * start their traces after a common barrier, so their clocks' zeros agree to a barrier's
 * skew. Rank 0 holds every rank's trace in memory for the merge. */
#include "mpi_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mpi_trace_sync(void)
{
    if (mpi_running() && mpi_size() > 1)
        MPI_Barrier(MPI_COMM_WORLD);
}

/* A whole file into memory; NULL (errno set) when it cannot be read. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap + 1);
    while (b) {
        size_t got = fread(b + n, 1, cap - n, f);
        n += got;
        if (n < cap)
            break;
        char *nb = cap < ((size_t)1 << 40) ? realloc(b, cap * 2 + 1) : NULL;
        if (!nb) {
            free(b);
            b = NULL;
            errno = ENOMEM;
            break;
        }
        b = nb;
        cap *= 2;
    }
    int bad = !b || ferror(f);
    fclose(f);
    if (bad) {
        free(b);
        return NULL;
    }
    b[n] = '\0';
    *len = n;
    return b;
}

/* Append rank k's events (one trace file's text t) to out: its lines between the opening
 * '{"traceEvents":[' and the closing '],...', with pid 1 made k + 1 and its process named
 * "shoal rank k"; adds its dropped spans to *dropped. 0, or -1 when t is not a trace as
 * shoal writes it, or on a write error. */
static int merge_one(FILE *out, const char *t, int k, int *first, unsigned long long *dropped)
{
    static const char head[] = "{\"traceEvents\":[\n", tail[] = "\n],\"displayTimeUnit\"";
    const char *end = strstr(t, tail);
    if (strncmp(t, head, sizeof head - 1) != 0 || !end)
        return -1;
    const char *d = strstr(end, "\"dropped_spans\":");
    if (d)
        *dropped += strtoull(d + 16, NULL, 10);
    char pid[32];
    snprintf(pid, sizeof pid, "\"pid\":%d,", k + 1);
    fprintf(out,
            "%s{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
            "\"args\":{\"sort_index\":%d}}",
            *first ? "" : ",\n", k + 1, k);
    *first = 0;
    for (const char *p = t + sizeof head - 1; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        size_t n = (size_t)(e - p);
        if (n && p[n - 1] == ',')
            n--; /* the separator: written again below */
        /* the one raw "pid":1, of the line (a string's quotes would be escaped) */
        const char *at = NULL;
        for (const char *s = p; s + 8 <= p + n; s++)
            if (memcmp(s, "\"pid\":1,", 8) == 0) {
                at = s;
                break;
            }
        if (!at)
            return -1;
        fputs(",\n", out);
        static const char pname[] = "\"args\":{\"name\":\"shoal\"}";
        static const char pmeta[] = "{\"name\":\"process_name\"";
        const char *pn =
            n > sizeof pmeta && memcmp(p, pmeta, sizeof pmeta - 1) == 0 ? strstr(p, pname) : NULL;
        if (pn && pn < p + n) {
            fwrite(p, 1, (size_t)(at - p), out);
            fputs(pid, out);
            fwrite(at + 8, 1, (size_t)(pn - (at + 8)), out);
            fprintf(out, "\"args\":{\"name\":\"shoal rank %d\"}", k);
            fwrite(pn + sizeof pname - 1, 1, (size_t)(p + n - (pn + sizeof pname - 1)), out);
        } else {
            fwrite(p, 1, (size_t)(at - p), out);
            fputs(pid, out);
            fwrite(at + 8, 1, (size_t)(p + n - (at + 8)), out);
        }
        p = nl ? nl + 1 : end;
    }
    return ferror(out) ? -1 : 0;
}

shoal_status mpi_trace_merge(const char *local, char **merged, size_t *merged_len, shoal_error *e)
{
    *merged = NULL;
    *merged_len = 0;
    const int R = mpi_size(), me = mpi_rank();
    size_t len = 0;
    char *mine = slurp(local, &len);
    shoal_status st =
        mine ? SHOAL_OK
             : shoal_error_set(e, SHOAL_ERR_IO, "%s: cannot read this rank's trace: %s", local,
                               strerror(errno));
    if ((st = comm_agree(st, e))) {
        free(mine);
        return st;
    }
    /* rank 0 takes them one rank at a time: its memory holds the merge and one more */
    char *buf = NULL;
    FILE *out = me == 0 ? open_memstream(&buf, merged_len) : NULL;
    int bad = me == 0 && !out;
    unsigned long long dropped = 0;
    int first = 1;
    if (out) {
        fputs("{\"traceEvents\":[\n", out);
        if (merge_one(out, mine, 0, &first, &dropped))
            bad = 1;
    }
    for (int k = 1; k < R; k++) {
        uint64_t n = len;
        if (me == k) {
            MPI_Send(&n, 1, MPI_UINT64_T, 0, 900, MPI_COMM_WORLD);
            for (uint64_t at = 0; at < n; at += (1u << 30)) {
                int m = n - at > (1u << 30) ? (1 << 30) : (int)(n - at);
                MPI_Send(mine + at, m, MPI_CHAR, 0, 901, MPI_COMM_WORLD);
            }
        } else if (me == 0) {
            MPI_Recv(&n, 1, MPI_UINT64_T, k, 900, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            char *t = malloc(n + 1);
            for (uint64_t at = 0; at < n; at += (1u << 30)) {
                int m = n - at > (1u << 30) ? (1 << 30) : (int)(n - at);
                if (t)
                    MPI_Recv(t + at, m, MPI_CHAR, k, 901, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                else /* out of memory: take the message and drop it */
                    MPI_Recv(NULL, 0, MPI_CHAR, k, 901, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            if (t) {
                t[n] = '\0';
                if (out && merge_one(out, t, k, &first, &dropped))
                    bad = 1;
            } else {
                bad = 1;
            }
            free(t);
        }
    }
    free(mine);
    if (me == 0 && out) {
        fprintf(out,
                "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{\"dropped_spans\":%llu,"
                "\"ranks\":%d}}\n",
                dropped, R);
        if (fclose(out) != 0)
            bad = 1;
        out = NULL;
    }
    st = bad ? shoal_error_set(e, SHOAL_ERR_NOMEM,
                               "the ranks' traces could not be merged "
                               "(out of memory, or not shoal's traces)")
             : SHOAL_OK;
    if ((st = comm_agree(st, e))) {
        free(buf);
        *merged_len = 0;
        return st;
    }
    *merged = buf;
    return SHOAL_OK;
}
