/* SPDX-License-Identifier: MIT */
/* The depth composite of shoal render and run --headless under MPI (docs/ARCHITECTURE.md
 * "MPI", images): every rank drew its own fish with kept depth and instance ids; per pixel
 * the nearest fragment of any rank wins, at equal depth the lower id (the renderer's own
 * rule), so the image is the one-process image whatever the split. */
#include "mpi_internal.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
static shoal_status composite(uint32_t *argb, const float *depth, const uint32_t *ids, size_t n,
                              double *ms, shoal_error *e)
{
    uint64_t t0 = shoal_profile_now_ns();
    size_t R = (size_t)mpi_size(), m = (n + R - 1) / R; /* pixels per rank's block, padded */
    px_frag *f = m <= INT_MAX ? malloc(m * R * sizeof *f + 1) : NULL;
    px_frag *mine = malloc(m * sizeof *mine + 1);
    uint32_t *cm = malloc(m * sizeof *cm + 1),
             *call = mpi_rank() == 0 ? malloc(m * R * 4 + 1) : NULL;
    shoal_status st =
        f && mine && cm && (mpi_rank() != 0 || call)
            ? SHOAL_OK
            : shoal_error_set(e, SHOAL_ERR_NOMEM,
                              "out of memory for the compositing buffer (%zu pixels)", n);
    st = comm_agree(st, e);
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
        if (mpi_rank() == 0)
            memcpy(argb, call, n * sizeof *argb);
    }
    free(f);
    free(mine);
    free(cm);
    free(call);
    if (ms)
        *ms = (double)(shoal_profile_now_ns() - t0) * 1e-6;
    return st;
}

shoal_status mpi_render_frame(shoal_renderer *r, const shoal_render_instances *inst,
                              const shoal_camera *cam, double *composite_ms, shoal_error *e)
{
    if (composite_ms)
        *composite_ms = 0;
    shoal_status st = comm_agree(shoal_render_frame(r, inst, cam, e), e);
    if (st)
        return st;
    /* colour by speed scales by the school's largest visible speed: a rank whose own fish
     * were slower draws again against it */
    float mine = shoal_render_get_stats(r).speed_scale, all = mine;
    MPI_Allreduce(&mine, &all, 1, MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD);
    if (all != mine) {
        shoal_render_set_speed_scale(r, all);
        st = shoal_render_frame(r, inst, cam, e);
        shoal_render_set_speed_scale(r, 0);
        if ((st = comm_agree(st, e)))
            return st;
    } else if ((st = comm_agree(SHOAL_OK, e))) {
        return st;
    }
    const float *z;
    const uint32_t *ids;
    shoal_render_depth(r, &z, &ids);
    shoal_framebuffer fb = shoal_render_framebuffer(r);
    /* the framebuffer's rows are contiguous (stride = width) */
    return composite((uint32_t *)(uintptr_t)fb.argb, z, ids, (size_t)fb.width * (size_t)fb.height,
                     composite_ms, e);
}
