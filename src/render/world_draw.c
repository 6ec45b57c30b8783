/* SPDX-License-Identifier: MIT */
/* The renderer's world (shoal_render_set_world, docs/RENDER.md "Worlds"): a periodic world's
 * fish are drawn wrapped into the period window centred on the camera's target (the box,
 * for a camera aimed at its centre) and, near a seam, on both sides of it as they cross;
 * a 2D world is drawn as a map, the plane seen from above. Owns the renderer's copy of the
 * frame's instances with their images; the passes after it see ordinary instances. */
#include "render/render_internal.h"

#include <math.h>
#include <stdlib.h>

/* The wrap of sim/world.h (world_wrap_f), the same rule: a fish is drawn where the
 * simulation keeps it. */
static float wrap(float x, float lo, float L, float hi)
{
    float y = x < lo ? x + L : (hi <= x ? x - L : x);
    if (!(lo <= y && y < hi)) {
        float r = x - lo;
        float n = (float)floor((double)(r / L));
        y = lo + (r - n * L);
        if (y < lo || hi <= y)
            y = lo;
    }
    return y;
}

/* the 2D plane seen from above: a rotation (det 1), so winding and lighting are kept and
 * the fish's up (+Y in render.h's orientation rule) is the plane's normal +z */
static void turn2d(const float in[3], float out[3])
{
    float x = in[0], y = in[1], z = in[2];
    out[0] = -x;
    out[1] = z;
    out[2] = y;
}

SHOAL_API void shoal_render_world_point(const shoal_world *world, const float in[3], float out[3])
{
    if (world && shoal_world_dims(world) == 2) {
        turn2d(in, out);
    } else {
        out[0] = in[0];
        out[1] = in[1];
        out[2] = in[2];
    }
}

SHOAL_API shoal_camera shoal_render_camera_world(const shoal_world *world, float aspect,
                                                 float margin)
{
    shoal_camera cam = shoal_camera_default();
    double a = aspect > 0 && isfinite(aspect) ? aspect : 1.0;
    double m = margin > 0 && isfinite(margin) ? margin : 0.0;
    double c[3], L[3];
    for (int k = 0; k < 3; k++) {
        c[k] = world ? world->center[k] : 0.0;
        L[k] = world && world->size[k] > 0 ? world->size[k] : 0.0;
    }
    if (world && shoal_world_dims(world) == 2) {
        /* a map: looking down -z at the box's rectangle, which fills the frame along its
         * tighter side (+x right, +y up) */
        double w = L[0] > 0 ? L[0] : 1.0, h = L[1] > 0 ? L[1] : 1.0;
        double oh = fmax(h, w / a) + 2 * m;
        double d = fmax(oh, 1.0) * 2;
        cam.target[0] = (float)c[0];
        cam.target[1] = (float)c[1];
        cam.target[2] = 0.0f;
        cam.eye[0] = (float)c[0];
        cam.eye[1] = (float)c[1];
        cam.eye[2] = (float)d;
        cam.ortho_height = (float)oh;
        cam.near = (float)(d * 0.5);
        cam.far = (float)(d * 1.5);
        return cam;
    }
    /* the box (its corners) in perspective, as shoal_render_camera_frame frames a school */
    float px[8], py[8], pz[8];
    for (int i = 0; i < 8; i++) {
        px[i] = (float)(c[0] + ((i & 1) ? 0.5 : -0.5) * L[0]);
        py[i] = (float)(c[1] + ((i & 2) ? 0.5 : -0.5) * L[1]);
        pz[i] = (float)(c[2] + ((i & 4) ? 0.5 : -0.5) * L[2]);
    }
    shoal_render_camera_frame(px, py, pz, 8, (float)m, (float)a, &cam);
    return cam;
}

SHOAL_API shoal_status shoal_render_set_world(shoal_renderer *r, const shoal_world *world,
                                              shoal_error *err)
{
    render_world *w = render_get_world(r);
    if (!world || (shoal_world_dims(world) == 3 && !shoal_world_any_periodic(world))) {
        w->on = 0;
        return SHOAL_OK;
    }
    shoal_status st = shoal_world_validate(world, 0.0f, err);
    if (st)
        return st;
    w->on = 1;
    w->dims = shoal_world_dims(world);
    for (int k = 0; k < 3; k++) {
        w->periodic[k] = shoal_world_axis_periodic(world, k);
        w->size[k] = world->size[k];
    }
    return SHOAL_OK;
}

void render_world_free(render_world *w)
{
    free(w->col);
    free(w->id);
    free(w->group);
    free(w->scale);
    free(w->color);
    memset(w, 0, sizeof *w);
}

static int world_grow(render_world *w, size_t n)
{
    if (n <= w->cap)
        return 1;
    size_t cap = n + n / 2 + 16;
    float *col = realloc(w->col, cap * 6 * sizeof *col);
    if (col)
        w->col = col;
    uint32_t *id = realloc(w->id, cap * sizeof *id);
    if (id)
        w->id = id;
    uint8_t *group = realloc(w->group, cap);
    if (group)
        w->group = group;
    float *scale = realloc(w->scale, cap * sizeof *scale);
    if (scale)
        w->scale = scale;
    uint32_t *color = realloc(w->color, cap * sizeof *color);
    if (color)
        w->color = color;
    if (!col || !id || !group || !scale || !color)
        return 0;
    w->cap = cap;
    return 1;
}

/* the shifts (in periods) of a fish at x on axis k: 0, and +1 / -1 within margin of a face */
static int shifts(const render_world *w, const float lo[3], const float hi[3], int k, float x,
                  float margin, int out[3])
{
    int n = 0;
    out[n++] = 0;
    if (!w->periodic[k])
        return n;
    if (x - lo[k] < margin)
        out[n++] = 1;
    if (hi[k] - x <= margin)
        out[n++] = -1;
    return n;
}

/* Two passes over the fish: count, then fill (row order, each fish then its images: the
 * order is a function of the input, so the image does not depend on threads). */
shoal_status render_world_expand(render_world *w, const shoal_render_instances *in,
                                 const shoal_camera *cam, float margin, shoal_render_instances *out,
                                 shoal_camera *cam_out, shoal_error *err)
{
    *out = *in;
    *cam_out = *cam;
    if (!w->on)
        return SHOAL_OK;
    /* the period window on each periodic axis: centred on the camera's target, so the box
     * itself for a camera aimed at its centre (shoal_render_camera_world) and the school
     * whole for one that follows it across a seam */
    float lo[3], hi[3];
    for (int k = 0; k < 3; k++) {
        lo[k] = cam->target[k] - 0.5f * w->size[k];
        hi[k] = lo[k] + w->size[k];
    }
    float pos[3];
    size_t total = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1 && !world_grow(w, total))
            return shoal_error_set(err, SHOAL_ERR_NOMEM,
                                   "render: out of memory for %zu fish and their images", total);
        size_t n = 0;
        float *c[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
        if (pass == 1)
            for (int k = 0; k < 6; k++)
                c[k] = w->col + (size_t)k * w->cap;
        for (size_t i = 0; i < in->count; i++) {
            const float p[3] = {in->px[i], in->py[i], in->pz[i]};
            const float v[3] = {in->vx[i], in->vy[i], in->vz[i]};
            float s = in->scale ? in->scale[i] : 1.0f;
            float m = margin * s;
            for (int k = 0; k < 3; k++)
                pos[k] = w->periodic[k] ? wrap(p[k], lo[k], w->size[k], hi[k]) : p[k];
            int sx[3], sy[3], sz[3];
            int nx = shifts(w, lo, hi, 0, pos[0], m, sx), ny = shifts(w, lo, hi, 1, pos[1], m, sy),
                nz = shifts(w, lo, hi, 2, pos[2], m, sz);
            for (int a = 0; a < nx; a++)
                for (int b = 0; b < ny; b++)
                    for (int d = 0; d < nz; d++) {
                        if (pass == 1) {
                            float q[3] = {pos[0] + (float)sx[a] * w->size[0],
                                          pos[1] + (float)sy[b] * w->size[1],
                                          pos[2] + (float)sz[d] * w->size[2]};
                            float qv[3] = {v[0], v[1], v[2]};
                            if (w->dims == 2) {
                                float t[3];
                                turn2d(q, t);
                                memcpy(q, t, sizeof t);
                                turn2d(v, qv);
                            }
                            for (int k = 0; k < 3; k++) {
                                c[k][n] = q[k];
                                c[3 + k][n] = qv[k];
                            }
                            w->id[n] = in->id ? in->id[i] : (uint32_t)i;
                            if (in->group)
                                w->group[n] = in->group[i];
                            w->scale[n] = s;
                            if (in->color)
                                w->color[n] = in->color[i];
                        }
                        n++;
                    }
        }
        total = n;
    }
    float *c[6];
    for (int k = 0; k < 6; k++)
        c[k] = w->col + (size_t)k * w->cap;
    out->count = total;
    out->px = c[0];
    out->py = c[1];
    out->pz = c[2];
    out->vx = c[3];
    out->vy = c[4];
    out->vz = c[5];
    out->id = w->id;
    out->group = in->group ? w->group : NULL;
    out->scale = in->scale ? w->scale : NULL;
    out->color = in->color ? w->color : NULL;
    if (w->dims == 2) {
        turn2d(cam->eye, cam_out->eye);
        turn2d(cam->target, cam_out->target);
    }
    return SHOAL_OK;
}
