/* SPDX-License-Identifier: MIT */
/* shoal built without MPI: one process, never launched by an MPI launcher as far as
 * shoal is concerned (mpirun can still start copies, each of which runs alone). The
 * program reaches the school and frame calls only with 2+ ranks, so never here: they
 * refuse. */
#include "mpi_app.h"

#include <stddef.h>

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
shoal_status mpi_same_args(int argc, char **argv, shoal_error *e)
{
    (void)argc;
    (void)argv;
    (void)e;
    return SHOAL_OK;
}

shoal_status mpi_agree(shoal_status st, shoal_error *e)
{
    (void)e;
    return st;
}
int mpi_any(int flag) { return flag != 0; }
void mpi_broadcast(void *buf, size_t n)
{
    (void)buf;
    (void)n;
}
long long mpi_sum(long long v) { return v; }
long long mpi_max(long long v) { return v; }
shoal_status mpi_same(const void *data, size_t n, const char *what, shoal_error *e)
{
    (void)data;
    (void)n;
    (void)what;
    (void)e;
    return SHOAL_OK;
}

static shoal_status none(shoal_error *e)
{
    return shoal_error_set(e, SHOAL_ERR_UNSUPPORTED, "this shoal was built without MPI");
}

void mpi_sum_i64(int64_t *v, int n)
{
    (void)v;
    (void)n;
}

void mpi_max_f64(double *v, int n)
{
    (void)v;
    (void)n;
}

shoal_status mpi_school_create(const shoal_sim_desc *d, mpi_school **out, shoal_error *e)
{
    (void)d;
    *out = NULL;
    return none(e);
}
shoal_status mpi_school_read(const shoal_sim_desc *d, const char *path, mpi_school **out,
                             shoal_error *e)
{
    (void)d;
    (void)path;
    *out = NULL;
    return none(e);
}
shoal_status mpi_school_resume(const shoal_sim_desc *d, const char *path, mpi_school **out,
                               shoal_error *e)
{
    (void)d;
    (void)path;
    *out = NULL;
    return none(e);
}
void mpi_school_destroy(mpi_school *m) { (void)m; }
shoal_sim *mpi_school_sim(mpi_school *m)
{
    (void)m;
    return NULL;
}
size_t mpi_school_count(const mpi_school *m)
{
    (void)m;
    return 0;
}
shoal_status mpi_school_step(mpi_school *m, long long steps, shoal_error *e)
{
    (void)m;
    (void)steps;
    return none(e);
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
shoal_status mpi_school_frame(mpi_school *m, float fish_length, float aspect, shoal_camera *cam,
                              shoal_error *e)
{
    (void)m;
    (void)fish_length;
    (void)aspect;
    (void)cam;
    return none(e);
}
shoal_status mpi_school_write(mpi_school *m, const char *out, const char *ckpt, shoal_error *e)
{
    (void)m;
    (void)out;
    (void)ckpt;
    return none(e);
}
shoal_status mpi_school_stage(mpi_school *m, const char *out, const char *ckpt, shoal_error *e)
{
    return mpi_school_write(m, out, ckpt, e);
}
shoal_status mpi_school_commit(mpi_school *m, shoal_error *e)
{
    (void)m;
    return none(e);
}
shoal_status mpi_school_write_frame(mpi_school *m, const char *path, double time, shoal_error *e)
{
    (void)m;
    (void)path;
    (void)time;
    return none(e);
}
void mpi_school_want_stats(mpi_school *m) { (void)m; }
void mpi_school_print_stats(mpi_school *m, const char *cmd)
{
    (void)m;
    (void)cmd;
}

shoal_status mpi_frame_create(mpi_frame **out, shoal_error *e)
{
    *out = NULL;
    return none(e);
}
void mpi_frame_destroy(mpi_frame *fr) { (void)fr; }
shoal_status mpi_frame_draw(mpi_frame *fr, shoal_renderer *r, const shoal_render_instances *inst,
                            const shoal_camera *cam, shoal_error *e)
{
    (void)fr;
    (void)r;
    (void)inst;
    (void)cam;
    return none(e);
}
mpi_frame_stats mpi_frame_get_stats(const mpi_frame *fr, int all)
{
    (void)fr;
    (void)all;
    mpi_frame_stats s = {0};
    return s;
}

void mpi_trace_sync(void) {}
shoal_status mpi_trace_merge(const char *local, char **merged, size_t *len, shoal_error *e)
{
    (void)local;
    *merged = NULL;
    *len = 0;
    return none(e);
}
