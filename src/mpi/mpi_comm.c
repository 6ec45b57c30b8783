/* SPDX-License-Identifier: MIT */
/* shoal's MPI world (src/mpi, docs/ARCHITECTURE.md "MPI"): starting and stopping MPI, this
 * rank and the world's size, and the collectives every other file of src/mpi and the
 * program agree through: one outcome for every rank (comm_agree), any/max/broadcast, the
 * fingerprints that check every rank runs the same command on the same inputs, the
 * boid's wire type and the test hook. Owns the only process-wide state of src/mpi (MPI's
 * world is the process's); every call from the main thread. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_* */
#include "mpi_internal.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
shoal_status comm_agree(shoal_status st, shoal_error *e)
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
    return comm_agree(st, e);
}

void mpi_broadcast(void *buf, size_t n)
{
    if (g_size > 1)
        MPI_Bcast(buf, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
}

long long mpi_sum(long long v)
{
    long long all = v;
    if (g_size > 1)
        MPI_Allreduce(&v, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return all;
}

void mpi_sum_i64(int64_t *v, int n)
{
    if (g_size > 1 && n > 0)
        MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
}

long long mpi_max(long long v)
{
    long long all = v;
    if (g_size > 1)
        MPI_Allreduce(&v, &all, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    return all;
}

int mpi_any(int flag)
{
    int mine = flag != 0, any = mine;
    if (g_size > 1)
        MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return any;
}

/* ---- the same work on every rank ---------------------------------------------------------- */

/* FNV-1a, 64 bits: a fingerprint to compare between ranks (not a defence against
 * forgery: a misuse check). */
uint64_t comm_hash(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* Collective: rank 0's fingerprint h to every rank; a rank whose own differs fails with
 * "WHAT differ(s) from rank 0's". Agreed. */
shoal_status comm_same_as_rank0(uint64_t h, const char *what, shoal_error *e)
{
    uint64_t h0 = h;
    MPI_Bcast(&h0, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    shoal_status st = h0 == h ? SHOAL_OK : shoal_error_set(e, SHOAL_ERR_INPUT, "%s", what);
    return comm_agree(st, e);
}

shoal_status mpi_same(const void *data, size_t n, const char *what, shoal_error *e)
{
    if (!g_started || g_size < 2)
        return SHOAL_OK;
    return comm_same_as_rank0(comm_hash(COMM_HASH_SEED, data, n), what, e);
}

shoal_status mpi_same_args(int argc, char **argv, shoal_error *e)
{
    if (!g_started || mpi_size() < 2)
        return SHOAL_OK;
    uint64_t h = COMM_HASH_SEED;
    for (int i = 1; i < argc; i++) /* argv[0] may be another path to the same program */
        h = comm_hash(h, argv[i], strlen(argv[i]) + 1);
    return comm_same_as_rank0(h,
                              "started with other arguments than rank 0 (every rank must run the "
                              "same command line)",
                              e);
}

/* A test hook: SHOAL_MPI_FAIL=WHAT:RANK[:NTH] makes rank RANK fail at WHAT ("open":
 * opening the input, "write": opening an output's temporary, "short": a write that the
 * disk cuts short), as a missing or unwritable file or a full disk on that rank's node
 * would; with NTH at the NTH time it gets there (default the first: "write:1:2" fails the
 * second output, after the first was written). */
int comm_fail_here(const char *what)
{
    static int seen[3];
    const char *v = getenv("SHOAL_MPI_FAIL");
    size_t n = strlen(what);
    if (!v || strncmp(v, what, n) != 0 || v[n] != ':')
        return 0;
    char *end;
    long rank = strtol(v + n + 1, &end, 10), nth = *end == ':' ? strtol(end + 1, NULL, 10) : 1;
    int *count = &seen[what[0] == 'o' ? 0 : what[0] == 'w' ? 1 : 2];
    return rank == mpi_rank() && ++*count == nth;
}

void comm_message(int code, char *buf, size_t size)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(code, s, &len) != MPI_SUCCESS)
        snprintf(s, sizeof s, "MPI error %d", code);
    snprintf(buf, size, "%s", s);
}

/* rows [first, first + count) of N over R ranks: rank k holds [N k / R, N (k+1) / R) */
size_t comm_range_first(size_t n, int k)
{
    return (size_t)((unsigned __int128)n * (unsigned)k / (unsigned)mpi_size());
}

MPI_Datatype comm_boid_type(void)
{
    static MPI_Datatype t = MPI_DATATYPE_NULL;
    if (t == MPI_DATATYPE_NULL) {
        MPI_Type_contiguous((int)sizeof(part_boid), MPI_BYTE, &t);
        MPI_Type_commit(&t);
    }
    return t;
}

/* ---- the cores the ranks were given ---------------------------------------------------- */

void comm_check_cores(int threads)
{
    static int checked;
    if (checked || g_size < 2)
        return;
    checked = 1;
    /* the CPUs this rank may run on (mpirun's binding, taskset, a batch system's cgroup) */
    cpu_set_t mine;
    CPU_ZERO(&mine);
    int known = sched_getaffinity(0, sizeof mine, &mine) == 0;
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int nr = 1;
    MPI_Comm_size(node, &nr);
    cpu_set_t *all = malloc((size_t)nr * sizeof *all);
    int ok = known && all != NULL, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, node);
    long long v[2] = {threads, 0}, sum[2] = {0, 0};
    if (all_ok) {
        MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, node);
        cpu_set_t un;
        CPU_ZERO(&un);
        for (int r = 0; r < nr; r++)
            CPU_OR(&un, &un, &all[r]);
        /* this rank's threads beyond its own CPUs, or the node's beyond their union */
        v[1] = threads > CPU_COUNT(&mine);
        MPI_Allreduce(v, sum, 2, MPI_LONG_LONG, MPI_SUM, node);
        int over = sum[0] > CPU_COUNT(&un) || sum[1] > 0, any = 0;
        MPI_Allreduce(&over, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (any && g_rank == 0) {
            if (over)
                fprintf(stderr,
                        "shoal: warning: %d ranks x %d thread%s on %d core%s of this node%s: the "
                        "threads oversubscribe the cores (give each rank its own: "
                        "docs/SCALING.md, \"Running it\")\n",
                        nr, threads, threads == 1 ? "" : "s", CPU_COUNT(&un),
                        CPU_COUNT(&un) == 1 ? "" : "s",
                        sum[1] > 0 ? ", some rank bound to fewer cores than its threads" : "");
            else
                fprintf(stderr, "shoal: warning: on some node the ranks' threads oversubscribe the "
                                "cores they were given (docs/SCALING.md, \"Running it\")\n");
        }
    } else {
        int any = 0, zero = 0;
        MPI_Allreduce(&zero, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    }
    free(all);
    MPI_Comm_free(&node);
}
