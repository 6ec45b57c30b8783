/* SPDX-License-Identifier: MIT */
/* Per-instance work: the model matrix from position and velocity (the orientation contract of
 * render.h), the bounding-sphere frustum cull and the LOD choice. Reads the caller's view,
 * writes only the lod byte of each instance it is given. */
#include "render/render_internal.h"

#include <math.h>

/* mvp = vp * T(p) R(v) S(L), row-major; rot = R (columns X, Y, Z), row-major. Fixed
 * operation order: every ISA's transform starts from these same floats. */
void instance_matrix(const frame_consts *fc, float px, float py, float pz, float vx, float vy,
                     float vz, float scale, float mvp[16], float rot[9])
{
    float X[3] = {1.0f, 0.0f, 0.0f}, Y[3] = {0.0f, 1.0f, 0.0f}, Z[3] = {0.0f, 0.0f, 1.0f};
    float s2 = vx * vx + vy * vy + vz * vz;
    if (s2 > 0.0f && isfinite(s2)) {
        float inv = 1.0f / sqrtf(s2);
        Z[0] = vx * inv;
        Z[1] = vy * inv;
        Z[2] = vz * inv;
        /* X = normalize(cross((0,1,0), Z)) = normalize(Z.z, 0, -Z.x), or (1,0,0) if vertical */
        float x2 = Z[2] * Z[2] + Z[0] * Z[0];
        if (x2 > 0.0f) {
            float xi = 1.0f / sqrtf(x2);
            X[0] = Z[2] * xi;
            X[1] = 0.0f;
            X[2] = -Z[0] * xi;
        }
        /* Y = cross(Z, X) */
        Y[0] = Z[1] * X[2] - Z[2] * X[1];
        Y[1] = Z[2] * X[0] - Z[0] * X[2];
        Y[2] = Z[0] * X[1] - Z[1] * X[0];
    }
    for (int r = 0; r < 3; r++) {
        rot[r * 3 + 0] = X[r];
        rot[r * 3 + 1] = Y[r];
        rot[r * 3 + 2] = Z[r];
    }
    const float L = scale == 1.0f ? fc->fish_length : fc->fish_length * scale;
    const float *vp = fc->vp;
    for (int r = 0; r < 4; r++) {
        const float *m = vp + 4 * r;
        mvp[4 * r + 0] = ((m[0] * X[0] + m[1] * X[1]) + m[2] * X[2]) * L;
        mvp[4 * r + 1] = ((m[0] * Y[0] + m[1] * Y[1]) + m[2] * Y[2]) * L;
        mvp[4 * r + 2] = ((m[0] * Z[0] + m[1] * Z[1]) + m[2] * Z[2]) * L;
        mvp[4 * r + 3] = ((m[0] * px + m[1] * py) + m[2] * pz) + m[3];
    }
}

float instance_classify(const frame_consts *fc, const shoal_render_instances *inst, size_t begin,
                        size_t end, uint8_t *lod)
{
    const float *V = fc->view;
    const float r1 = fc->cull_radius;
    const float cy = fc->plane_cos_y, sy = fc->plane_sin_y;
    const float cx = fc->plane_cos_x, sx = fc->plane_sin_x;
    const float kpx1 = fc->fish_length * fc->focal_px;
    const int use_lod = fc->lod && !fc->shade_id;
    float max_s2 = 0.0f;
    for (size_t i = begin; i < end; i++) {
        float x = inst->px[i], y = inst->py[i], z = inst->pz[i];
        float xe = V[0] * x + V[1] * y + V[2] * z + V[3];
        float ye = V[4] * x + V[5] * y + V[6] * z + V[7];
        float ze = V[8] * x + V[9] * y + V[10] * z + V[11];
        float d = -ze;
        uint8_t l = LOD_FULL;
        float r = r1, kpx = kpx1;
        if (inst->scale) {
            r = r1 * inst->scale[i];
            kpx = kpx1 * inst->scale[i];
        }
        int outside = fc->ortho
                          ? fabsf(ye) - fc->ortho_half_y > r || fabsf(xe) - fc->ortho_half_x > r
                          : ye * cy - d * sy > r || -ye * cy - d * sy > r || xe * cx - d * sx > r ||
                                -xe * cx - d * sx > r;
        if (d + r < fc->near || d - r > fc->far || outside || !(d == d))
            l = LOD_CULLED;
        else if (use_lod && d > r + fc->near) {
            /* projected length: L focal / d, or L (pixels per unit) when orthographic */
            float len_px = fc->ortho ? kpx * fc->ortho_px / fc->focal_px : kpx / d;
            l = len_px < fc->lod_splat_px     ? LOD_SPLAT
                : len_px < fc->lod_coarse_px  ? LOD_COARSE
                : len_px < fc->lod_reduced_px ? LOD_REDUCED
                                              : LOD_FULL;
        }
        lod[i] = l;
        if (l != LOD_CULLED) {
            float s2 =
                inst->vx[i] * inst->vx[i] + inst->vy[i] * inst->vy[i] + inst->vz[i] * inst->vz[i];
            max_s2 = s2 > max_s2 ? s2 : max_s2;
        }
    }
    return max_s2;
}
