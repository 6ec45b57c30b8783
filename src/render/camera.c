/* SPDX-License-Identifier: MIT */
/* The camera: validation, OpenGL's lookAt and perspective matrices (computed in double,
 * stored as float), the viewport and guard-band constants, the frustum planes used by the
 * bounding-sphere cull, and auto-framing of a point set. Owns no state. */
#include "render/render_internal.h"
#include "core/check.h"

#include <math.h>

SHOAL_API shoal_camera shoal_camera_default(void)
{
    shoal_camera c = {{0.0f, 0.0f, 75.0f}, {0.0f, 0.0f, 0.0f}, 60.0f, 0.1f, 2000.0f, 0.0f};
    return c;
}

static int camera_finite3(const float v[3])
{
    return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]);
}

shoal_status camera_validate(const shoal_camera *cam, shoal_error *err)
{
    if (!cam)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "render: no camera");
    if (!camera_finite3(cam->eye))
        return shoal_error_set(err, SHOAL_ERR_INPUT, "camera: eye is not finite");
    if (!camera_finite3(cam->target))
        return shoal_error_set(err, SHOAL_ERR_INPUT, "camera: target is not finite");
    if (cam->eye[0] == cam->target[0] && cam->eye[1] == cam->target[1] &&
        cam->eye[2] == cam->target[2])
        return shoal_error_set(err, SHOAL_ERR_INPUT, "camera: eye and target are the same point");
    if (!(cam->fov_deg > 0.0f && cam->fov_deg < 180.0f))
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "camera: fov_deg %g is outside (0, 180) degrees",
                               (double)cam->fov_deg);
    if (!(cam->near > 0.0f) || !isfinite(cam->near))
        return shoal_error_set(err, SHOAL_ERR_INPUT, "camera: near %g must be > 0",
                               (double)cam->near);
    if (!(cam->far > cam->near) || !isfinite(cam->far))
        return shoal_error_set(err, SHOAL_ERR_INPUT, "camera: far %g must be > near %g",
                               (double)cam->far, (double)cam->near);
    if (!(cam->ortho_height >= 0.0f) || !isfinite(cam->ortho_height))
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "camera: ortho_height %g must be finite and >= 0 (0: perspective)",
                               (double)cam->ortho_height);
    return SHOAL_OK;
}

void camera_setup(const shoal_camera *cam, int width, int height, frame_consts *fc)
{
    double e[3] = {cam->eye[0], cam->eye[1], cam->eye[2]};
    double f[3] = {(double)cam->target[0] - e[0], (double)cam->target[1] - e[1],
                   (double)cam->target[2] - e[2]};
    double fl = sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
    for (int i = 0; i < 3; i++)
        f[i] /= fl;
    double up[3] = {0.0, 1.0, 0.0};
    /* s = f x up; when f is (anti)parallel to +Y use +Z as up */
    double s[3] = {f[1] * up[2] - f[2] * up[1], f[2] * up[0] - f[0] * up[2],
                   f[0] * up[1] - f[1] * up[0]};
    double sl = sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
    if (sl < 1e-9) {
        double up2[3] = {0.0, 0.0, 1.0};
        s[0] = f[1] * up2[2] - f[2] * up2[1];
        s[1] = f[2] * up2[0] - f[0] * up2[2];
        s[2] = f[0] * up2[1] - f[1] * up2[0];
        sl = sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
    }
    for (int i = 0; i < 3; i++)
        s[i] /= sl;
    double u[3] = {s[1] * f[2] - s[2] * f[1], s[2] * f[0] - s[0] * f[2], s[0] * f[1] - s[1] * f[0]};
    double V[16] = {s[0],  s[1],  s[2],  -(s[0] * e[0] + s[1] * e[1] + s[2] * e[2]),
                    u[0],  u[1],  u[2],  -(u[0] * e[0] + u[1] * e[1] + u[2] * e[2]),
                    -f[0], -f[1], -f[2], (f[0] * e[0] + f[1] * e[1] + f[2] * e[2]),
                    0.0,   0.0,   0.0,   1.0};
    double aspect = (double)width / (double)height;
    double half = (double)cam->fov_deg * 3.14159265358979323846 / 360.0;
    double t = tan(half);
    double n = cam->near, fa = cam->far;
    double P[16] = {
        1.0 / (t * aspect),      0, 0, 0,    0, 1.0 / t, 0, 0, 0, 0, (fa + n) / (n - fa),
        2.0 * fa * n / (n - fa), 0, 0, -1.0, 0};
    fc->ortho = cam->ortho_height > 0.0f;
    if (fc->ortho) {
        /* glOrtho(-w/2, w/2, -h/2, h/2, near, far): w_clip = 1 */
        double hh = 0.5 * (double)cam->ortho_height, hw = hh * aspect;
        double Po[16] = {
            1.0 / hw, 0, 0, 0,  0, 1.0 / hh, 0, 0, 0, 0, -2.0 / (fa - n), -(fa + n) / (fa - n),
            0,        0, 0, 1.0};
        memcpy(P, Po, sizeof P);
        fc->ortho_half_x = (float)hw;
        fc->ortho_half_y = (float)hh;
        fc->ortho_px = (float)((double)height / (double)cam->ortho_height);
    }
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++) {
            double acc = 0.0;
            for (int k = 0; k < 4; k++)
                acc += P[r * 4 + k] * V[k * 4 + c];
            fc->vp[r * 4 + c] = (float)acc;
            fc->view[r * 4 + c] = (float)V[r * 4 + c];
        }
    fc->width = width;
    fc->height = height;
    fc->tiles_x = (width + TILE_SIZE - 1) / TILE_SIZE;
    fc->tiles_y = (height + TILE_SIZE - 1) / TILE_SIZE;
    fc->win_sx = (float)width * (FX_ONE / 2);
    fc->win_ox = (float)width * (FX_ONE / 2);
    fc->win_sy = -(float)height * (FX_ONE / 2);
    fc->win_oy = (float)height * (FX_ONE / 2);
    fc->guard_x = (float)(1.0 + 2.0 * GUARD_PX / width);
    fc->guard_y = (float)(1.0 + 2.0 * GUARD_PX / height);
    fc->near = cam->near;
    fc->far = cam->far;
    double tx = t * aspect;
    fc->tan_half_y = (float)t;
    fc->tan_half_x = (float)tx;
    fc->focal_px = (float)(0.5 * height / t);
    fc->plane_cos_y = (float)(1.0 / sqrt(1.0 + t * t));
    fc->plane_sin_y = (float)(t / sqrt(1.0 + t * t));
    fc->plane_cos_x = (float)(1.0 / sqrt(1.0 + tx * tx));
    fc->plane_sin_x = (float)(tx / sqrt(1.0 + tx * tx));
    for (int i = 0; i < 3; i++)
        fc->eye[i] = cam->eye[i];
}

SHOAL_API void shoal_render_camera_frame(const float *px, const float *py, const float *pz,
                                         size_t count, float margin, float aspect,
                                         shoal_camera *cam)
{
    if (!cam)
        return;
    if (!px || !py || !pz)
        count = 0;
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    size_t used = 0;
    for (size_t i = 0; i < count; i++) {
        float p[3] = {px[i], py[i], pz[i]};
        if (!camera_finite3(p))
            continue;
        for (int k = 0; k < 3; k++) {
            lo[k] = p[k] < lo[k] ? p[k] : lo[k];
            hi[k] = p[k] > hi[k] ? p[k] : hi[k];
        }
        used++;
    }
    if (used == 0) {
        float e[3] = {0, 0, 10}, z[3] = {0, 0, 0};
        memcpy(cam->eye, e, sizeof e);
        memcpy(cam->target, z, sizeof z);
        return;
    }
    double c[3], r2 = 0.0;
    for (int k = 0; k < 3; k++) {
        c[k] = 0.5 * (lo[k] + hi[k]);
        double h = 0.5 * (hi[k] - lo[k]);
        r2 += h * h;
    }
    double r = sqrt(r2) + (margin > 0 && isfinite(margin) ? margin : 0.0);
    if (r <= 0.0)
        r = 1.0;
    double fov = (cam->fov_deg > 0.0f && cam->fov_deg < 180.0f ? cam->fov_deg : 60.0) *
                 3.14159265358979323846 / 180.0;
    double a = aspect > 0 && isfinite(aspect) ? aspect : 1.0;
    double half_y = 0.5 * fov, half_x = atan(tan(half_y) * a);
    double half = half_y < half_x ? half_y : half_x;
    double d = r / sin(half) * 1.02;
    /* a little above the centre, looking slightly down: fish read better than edge-on */
    double dir[3] = {0.0, 0.25, 1.0};
    double dl = sqrt(dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]);
    for (int k = 0; k < 3; k++) {
        cam->target[k] = (float)c[k];
        cam->eye[k] = (float)(c[k] + dir[k] / dl * d);
    }
    double need_far = (d + r) * 1.05;
    if (!(cam->far >= need_far))
        cam->far = (float)need_far;
    if (!(cam->near > 0.0f) || cam->near >= cam->far)
        cam->near = 0.1f;
}
