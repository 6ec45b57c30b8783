/* SPDX-License-Identifier: MIT */
/* shoal built without MPI: one process, never launched by an MPI launcher as far as
 * shoal is concerned (mpirun can still start copies, each of which runs alone). */
#include "mpi_app.h"

int mpi_built(void) { return 0; }
int mpi_launched(void) { return 0; }
int mpi_start(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}
void mpi_stop(void) {}
int mpi_rank(void) { return 0; }
int mpi_size(void) { return 1; }
int mpi_running(void) { return 0; }

shoal_status mpi_step_file(const shoal_sim_desc *d, const shoal_scene *scene, const char *in,
                           const char *resume, const char *out, const char *ckpt, long long steps,
                           int stats, shoal_error *e)
{
    (void)d;
    (void)scene;
    (void)in;
    (void)resume;
    (void)out;
    (void)ckpt;
    (void)steps;
    (void)stats;
    return shoal_error_set(e, SHOAL_ERR_UNSUPPORTED, "this shoal was built without MPI");
}

shoal_status mpi_init_file(const shoal_sim_desc *d, const char *out, int stats, shoal_error *e)
{
    (void)d;
    (void)out;
    (void)stats;
    return shoal_error_set(e, SHOAL_ERR_UNSUPPORTED, "this shoal was built without MPI");
}

shoal_status mpi_agree(shoal_status st, shoal_error *e)
{
    (void)e;
    return st;
}

shoal_status mpi_composite(uint32_t *argb, const float *depth, const uint32_t *ids, size_t n,
                           double *ms, shoal_error *e)
{
    (void)argb;
    (void)depth;
    (void)ids;
    (void)n;
    (void)e;
    if (ms)
        *ms = 0;
    return SHOAL_OK; /* one process: its image is the whole image */
}

float mpi_max_float(float v) { return v; }

void mpi_sum_i64(int64_t *v, int n)
{
    (void)v;
    (void)n;
}

/* Without MPI no school runs over ranks: mpi_running() is 0, and the program never gets here. */
shoal_status mpi_school_create(const shoal_sim_desc *d, mpi_school **out, shoal_error *e)
{
    (void)d;
    *out = NULL;
    return shoal_error_set(e, SHOAL_ERR_UNSUPPORTED, "this shoal was built without MPI");
}
void mpi_school_destroy(mpi_school *m) { (void)m; }
shoal_sim *mpi_school_sim(mpi_school *m)
{
    (void)m;
    return NULL;
}
shoal_status mpi_school_step(mpi_school *m, long long steps, shoal_error *e)
{
    (void)m;
    (void)steps;
    return shoal_error_set(e, SHOAL_ERR_UNSUPPORTED, "this shoal was built without MPI");
}
size_t mpi_school_local_count(const mpi_school *m)
{
    (void)m;
    return 0;
}
void mpi_school_local(const mpi_school *m, float *const soa[6], uint32_t *row)
{
    (void)m;
    (void)soa;
    (void)row;
}
shoal_status mpi_school_gather(mpi_school *m, float *rows, shoal_error *e)
{
    (void)m;
    (void)rows;
    return shoal_error_set(e, SHOAL_ERR_UNSUPPORTED, "this shoal was built without MPI");
}
void mpi_school_print_stats(const mpi_school *m) { (void)m; }
void mpi_broadcast(void *buf, size_t n)
{
    (void)buf;
    (void)n;
}
int mpi_any(int flag) { return flag != 0; }
