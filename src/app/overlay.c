/* SPDX-License-Identifier: MIT */
/* Overlays over the renderer's image (overlay.h): projection, 2D and 3D lines, markers. */
#include "app/overlay.h"

#include <math.h>
#include <string.h>

static void v3_cross(float o[3], const float a[3], const float b[3])
{
    float x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2],
          z = a[0] * b[1] - a[1] * b[0];
    o[0] = x;
    o[1] = y;
    o[2] = z;
}
static void v3_norm(float v[3])
{
    float l = sqrtf(v3_dot(v, v));
    if (l > 0) {
        v[0] /= l;
        v[1] /= l;
        v[2] /= l;
    }
}

proj proj_make(const shoal_camera *c, int w, int h)
{
    proj p;
    memcpy(p.eye, c->eye, sizeof p.eye);
    v3_sub(p.f, c->target, c->eye);
    v3_norm(p.f);
    float up[3] = {0, 1, 0};
    if (fabsf(p.f[1]) > 0.9999f) {
        up[1] = 0;
        up[2] = 1;
    }
    v3_cross(p.s, p.f, up);
    v3_norm(p.s);
    v3_cross(p.u, p.s, p.f);
    p.k = (float)h * 0.5f / tanf(c->fov_deg * 0.5f * 3.14159265f / 180.0f);
    p.cx = (float)w * 0.5f;
    p.cy = (float)h * 0.5f;
    p.near = c->near;
    p.w = w;
    p.h = h;
    p.ortho = c->ortho_height > 0.0f;
    if (p.ortho)
        p.k = (float)h / c->ortho_height;
    p.turn2d = 0;
    return p;
}

proj proj_make_world(const shoal_camera *c, int w, int h, const shoal_world *world)
{
    if (!world || shoal_world_dims(world) != 2)
        return proj_make(c, w, h);
    shoal_camera t = *c;
    shoal_render_world_point(world, c->eye, t.eye);
    shoal_render_world_point(world, c->target, t.target);
    proj p = proj_make(&t, w, h);
    p.turn2d = 1;
    return p;
}

/* the depth to divide by: the view depth, or 1 for an orthographic camera */
static float proj_w(const proj *p, float z) { return p->ortho ? 1.0f : z; }

void proj_view(const proj *p, const float q[3], float v[3])
{
    float d[3], t[3];
    if (p->turn2d) { /* (x, y, z) -> (-x, z, y), the renderer's 2D turn */
        t[0] = -q[0];
        t[1] = q[2];
        t[2] = q[1];
        q = t;
    }
    v3_sub(d, q, p->eye);
    v[0] = v3_dot(d, p->s);
    v[1] = v3_dot(d, p->u);
    v[2] = v3_dot(d, p->f);
}

int proj_point(const proj *p, const float q[3], float *x, float *y)
{
    float v[3];
    proj_view(p, q, v);
    if (v[2] <= p->near)
        return 0;
    *x = p->cx + v[0] / proj_w(p, v[2]) * p->k;
    *y = p->cy - v[1] / proj_w(p, v[2]) * p->k;
    return 1;
}

/* ---- drawing into the ARGB frame (overlays only; text goes through the window layer) --- */

void blend_px(uint32_t *d, uint32_t rgb, unsigned a)
{
    uint32_t s = *d;
    unsigned dr = (s >> 16) & 255, dg = (s >> 8) & 255, db = s & 255;
    dr += (((rgb >> 16) & 255) - (int)dr) * (int)a / 255;
    dg += (((rgb >> 8) & 255) - (int)dg) * (int)a / 255;
    db += ((rgb & 255) - (int)db) * (int)a / 255;
    *d = 0xFF000000u | (dr << 16) | (dg << 8) | db;
}

void fill_rect(canvas *c, int x, int y, int w, int h, uint32_t rgb, unsigned a)
{
    int x0 = x < 0 ? 0 : x, y0 = y < 0 ? 0 : y;
    int x1 = x + w > c->w ? c->w : x + w, y1 = y + h > c->h ? c->h : y + h;
    for (int yy = y0; yy < y1; yy++) {
        uint32_t *row = c->px + (size_t)yy * (size_t)c->stride;
        for (int xx = x0; xx < x1; xx++)
            blend_px(row + xx, rgb, a);
    }
}

/* Liang-Barsky clip of a 2D segment to the canvas. */
static int clip2d(const canvas *c, float *x0, float *y0, float *x1, float *y1)
{
    float t0 = 0, t1 = 1, dx = *x1 - *x0, dy = *y1 - *y0;
    float pp[4] = {-dx, dx, -dy, dy};
    float qq[4] = {*x0, (float)c->w - 1 - *x0, *y0, (float)c->h - 1 - *y0};
    for (int i = 0; i < 4; i++) {
        if (pp[i] == 0) {
            if (qq[i] < 0)
                return 0;
            continue;
        }
        float t = qq[i] / pp[i];
        if (pp[i] < 0) {
            if (t > t1)
                return 0;
            if (t > t0)
                t0 = t;
        } else {
            if (t < t0)
                return 0;
            if (t < t1)
                t1 = t;
        }
    }
    float ax = *x0 + t0 * dx, ay = *y0 + t0 * dy, bx = *x0 + t1 * dx, by = *y0 + t1 * dy;
    *x0 = ax;
    *y0 = ay;
    *x1 = bx;
    *y1 = by;
    return 1;
}

/* A 1-pixel line, DDA, blended. */
void line2d(canvas *c, float x0, float y0, float x1, float y1, uint32_t rgb, unsigned a)
{
    if (!(isfinite(x0) && isfinite(y0) && isfinite(x1) && isfinite(y1)))
        return;
    if (!clip2d(c, &x0, &y0, &x1, &y1))
        return;
    float dx = x1 - x0, dy = y1 - y0;
    int n = (int)ceilf(fmaxf(fabsf(dx), fabsf(dy)));
    if (n < 1)
        n = 1;
    float sx = dx / (float)n, sy = dy / (float)n, x = x0, y = y0;
    for (int i = 0; i <= n; i++, x += sx, y += sy) {
        int ix = (int)x, iy = (int)y;
        if (ix >= 0 && iy >= 0 && ix < c->w && iy < c->h)
            blend_px(c->px + (size_t)iy * (size_t)c->stride + ix, rgb, a);
    }
}

/* A world-space segment: clipped to the near plane, projected, drawn. */
void line3d(canvas *c, const proj *p, const float a[3], const float b[3], uint32_t rgb,
            unsigned alpha)
{
    float va[3], vb[3];
    proj_view(p, a, va);
    proj_view(p, b, vb);
    float n = p->near * 1.01f;
    if (va[2] < n && vb[2] < n)
        return;
    if (va[2] < n || vb[2] < n) {
        float t = (n - va[2]) / (vb[2] - va[2]);
        float m[3] = {va[0] + (vb[0] - va[0]) * t, va[1] + (vb[1] - va[1]) * t, n};
        if (va[2] < n)
            memcpy(va, m, sizeof m);
        else
            memcpy(vb, m, sizeof m);
    }
    float wa = proj_w(p, va[2]), wb = proj_w(p, vb[2]);
    line2d(c, p->cx + va[0] / wa * p->k, p->cy - va[1] / wa * p->k, p->cx + vb[0] / wb * p->k,
           p->cy - vb[1] / wb * p->k, rgb, alpha);
}

void overlay_world_box(canvas *c, const proj *p, const shoal_world *world, uint32_t rgb,
                       unsigned alpha)
{
    if (!world || !(world->size[0] > 0 || world->size[1] > 0 || world->size[2] > 0))
        return;
    float lo[3], hi[3];
    for (int k = 0; k < 3; k++) {
        lo[k] = world->center[k] - 0.5f * world->size[k];
        hi[k] = lo[k] + world->size[k];
    }
    if (shoal_world_dims(world) == 2)
        lo[2] = hi[2] = 0.0f;
    /* the 12 edges: corners i and i ^ bit differ on one axis */
    for (int i = 0; i < 8; i++)
        for (int bit = 1; bit < 8; bit <<= 1) {
            if (i & bit)
                continue;
            int j = i | bit;
            float a[3] = {(i & 1) ? hi[0] : lo[0], (i & 2) ? hi[1] : lo[1],
                          (i & 4) ? hi[2] : lo[2]};
            float b[3] = {(j & 1) ? hi[0] : lo[0], (j & 2) ? hi[1] : lo[1],
                          (j & 4) ? hi[2] : lo[2]};
            line3d(c, p, a, b, rgb, alpha);
        }
}

void proj_unproject(const proj *p, float x, float y, const float on[3], float out[3])
{
    /* the ray eye + t * dir, dir through the pixel; the plane through `on` with normal f */
    float dir[3];
    float vx = (x - p->cx) / p->k, vy = -(y - p->cy) / p->k;
    for (int c = 0; c < 3; c++)
        dir[c] = p->f[c] + vx * p->s[c] + vy * p->u[c];
    float d[3];
    v3_sub(d, on, p->eye);
    float t = v3_dot(d, p->f) / v3_dot(dir, p->f);
    for (int c = 0; c < 3; c++)
        out[c] = p->eye[c] + dir[c] * t;
}

void overlay_target(canvas *c, const proj *p, const float q[3], int active)
{
    float x, y;
    if (!proj_point(p, q, &x, &y))
        return;
    uint32_t rgb = active ? OVERLAY_TARGET_ACTIVE_RGB : OVERLAY_TARGET_RGB;
    float r = (float)OVERLAY_MARKER_PX;
    for (int o = 0; o < 2; o++) {
        float k = (float)o;
        line2d(c, x - r - k, y, x, y - r - k, rgb, 255);
        line2d(c, x, y - r - k, x + r + k, y, rgb, 255);
        line2d(c, x + r + k, y, x, y + r + k, rgb, 255);
        line2d(c, x, y + r + k, x - r - k, y, rgb, 255);
        line2d(c, x - r * 0.5f, y + k, x + r * 0.5f, y + k, rgb, 255);
        line2d(c, x + k, y - r * 0.5f, x + k, y + r * 0.5f, rgb, 255);
    }
}

void overlay_mesh(canvas *c, const proj *p, const shoal_mesh *m, const shoal_transform *xf,
                  uint32_t rgb, unsigned alpha)
{
    for (size_t t = 0; t < m->triangle_count; t++) {
        float w[3][3];
        for (int k = 0; k < 3; k++)
            shoal_transform_apply(xf, m->positions + 3 * m->indices[3 * t + (size_t)k], 0, w[k]);
        line3d(c, p, w[0], w[1], rgb, alpha);
        line3d(c, p, w[1], w[2], rgb, alpha);
        line3d(c, p, w[2], w[0], rgb, alpha);
    }
}

void overlay_sphere(canvas *c, const proj *p, const float centre[3], float radius, uint32_t rgb,
                    unsigned alpha)
{
    const int n = 48;
    for (int axis = 0; axis < 3; axis++) {
        float prev[3] = {0, 0, 0};
        for (int i = 0; i <= n; i++) {
            float a = 6.2831853f * (float)i / (float)n;
            float u = cosf(a) * radius, v = sinf(a) * radius;
            float q[3] = {centre[0], centre[1], centre[2]};
            q[(axis + 1) % 3] += u;
            q[(axis + 2) % 3] += v;
            if (i)
                line3d(c, p, prev, q, rgb, alpha);
            memcpy(prev, q, sizeof prev);
        }
    }
}
