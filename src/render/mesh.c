/* SPDX-License-Identifier: MIT */
/* Turns a caller's shoal_mesh into the renderer's own form (a copy: the caller's mesh is read
 * during shoal_render_create only): SoA positions padded for SIMD, uint16
 * triangle indices, unit face normals for flat shading, the bounding radius for the cull.
 * Checks the limits the bins rely on. */
#include "render/render_internal.h"

#include "core/alloc.h"

#include <math.h>
#include <stdlib.h>

void mesh_release(render_mesh *m)
{
    alloc_free(m->x);
    alloc_free(m->i0);
    alloc_free(m->nx);
    memset(m, 0, sizeof *m);
}

shoal_status mesh_prepare(const shoal_mesh *src, const char *name, render_mesh *out,
                          shoal_error *err)
{
    memset(out, 0, sizeof *out);
    if (!src->positions || !src->indices)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "%s: no %s", name,
                               src->positions ? "indices" : "positions");
    if (src->vertex_count < 3 || src->vertex_count > MESH_MAX_VERTICES)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "%s: %zu vertices (the renderer takes 3..%d)",
                               name, src->vertex_count, MESH_MAX_VERTICES);
    if (src->triangle_count < 1 || src->triangle_count > MESH_MAX_TRIANGLES)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "%s: %zu triangles (the renderer takes 1..%d)",
                               name, src->triangle_count, MESH_MAX_TRIANGLES);
    int n = (int)src->vertex_count, np = (n + 15) & ~15, nt = (int)src->triangle_count;
    int ntp = (nt + 15) & ~15;
    out->x = alloc_array((size_t)np * 3, sizeof(float), "mesh positions", err);
    out->i0 = alloc_array_zero((size_t)ntp * 3, sizeof(int32_t), "mesh triangles", err);
    out->nx = alloc_array_zero((size_t)ntp * 3, sizeof(float), "mesh normals", err);
    if (!out->x || !out->i0 || !out->nx) {
        mesh_release(out);
        return SHOAL_ERR_NOMEM;
    }
    out->y = out->x + np;
    out->z = out->x + 2 * np;
    out->i1 = out->i0 + ntp;
    out->i2 = out->i0 + 2 * ntp;
    out->ny = out->nx + ntp;
    out->nz = out->nx + 2 * ntp;
    out->vertex_count = n;
    out->vertex_padded = np;
    out->triangle_count = nt;
    out->triangle_padded = ntp;
    float r2 = 0.0f;
    for (int i = 0; i < np; i++) {
        const float *p = src->positions + 3 * (size_t)(i < n ? i : n - 1);
        if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2])) {
            mesh_release(out);
            return shoal_error_set(err, SHOAL_ERR_INPUT, "%s: vertex %d is not finite", name,
                                   i + 1);
        }
        out->x[i] = p[0];
        out->y[i] = p[1];
        out->z[i] = p[2];
        float d2 = p[0] * p[0] + p[1] * p[1] + p[2] * p[2];
        r2 = d2 > r2 ? d2 : r2;
    }
    out->radius = sqrtf(r2) * 1.001f + 1e-6f;
    for (int t = 0; t < nt; t++) {
        const uint32_t *ix = src->indices + 3 * (size_t)t;
        for (int k = 0; k < 3; k++) {
            if (ix[k] >= (uint32_t)n) {
                mesh_release(out);
                return shoal_error_set(err, SHOAL_ERR_INPUT, "%s: triangle %d uses vertex %u of %d",
                                       name, t + 1, ix[k] + 1, n);
            }
        }
        out->i0[t] = (int32_t)ix[0];
        out->i1[t] = (int32_t)ix[1];
        out->i2[t] = (int32_t)ix[2];
        const float *a = src->positions + 3 * ix[0], *b = src->positions + 3 * ix[1],
                    *c = src->positions + 3 * ix[2];
        double e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
        double e2[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
        double nn[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                        e1[0] * e2[1] - e1[1] * e2[0]};
        double l = sqrt(nn[0] * nn[0] + nn[1] * nn[1] + nn[2] * nn[2]);
        if (!(l > 0.0)) {
            mesh_release(out);
            return shoal_error_set(err, SHOAL_ERR_INPUT, "%s: triangle %d has zero area", name,
                                   t + 1);
        }
        out->nx[t] = (float)(nn[0] / l);
        out->ny[t] = (float)(nn[1] / l);
        out->nz[t] = (float)(nn[2] / l);
    }
    return SHOAL_OK;
}
