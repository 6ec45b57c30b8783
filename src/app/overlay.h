/* SPDX-License-Identifier: MIT */
/* Overlays drawn over the renderer's image by `shoal run` and `shoal render`: the camera's
 * projection (the same look-at and gluPerspective as render.h, so lines land on the fish),
 * blended 2D lines and rectangles, world-space segments clipped to the near plane, and the
 * scene markers: heading targets (yellow diamonds with a cross), obstacle meshes (wireframe
 * through shoal_transform_apply, as the field sees them) and spheres. No SDL here. */
#ifndef SHOAL_APP_OVERLAY_H
#define SHOAL_APP_OVERLAY_H

#include "shoal/render.h"
#include "shoal/sim.h"

#include <stdint.h>

/* Small 3-vector helpers shared by the overlays and shoal run. */
static inline void v3_sub(float o[3], const float a[3], const float b[3])
{
    o[0] = a[0] - b[0];
    o[1] = a[1] - b[1];
    o[2] = a[2] - b[2];
}
static inline float v3_dot(const float a[3], const float b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

typedef struct proj {
    float eye[3], s[3], u[3], f[3];
    float k, cx, cy, near;
    int w, h;
    int ortho;  /* an orthographic camera: k is pixels per world unit, no divide by depth */
    int turn2d; /* a 2D world: points turned as the renderer turns them (shoal_render_world_point)
                 */
} proj;

typedef struct canvas {
    uint32_t *px;
    int w, h, stride;
} canvas;

proj proj_make(const shoal_camera *c, int w, int h);
/* The same in a world (NULL: proj_make): in 2D the camera and every point are turned as the
 * renderer turns them, so overlays land on the fish whatever the camera. */
proj proj_make_world(const shoal_camera *c, int w, int h, const shoal_world *world);
/* View-space coordinates: x right, y up, z = depth along the view direction. */
void proj_view(const proj *p, const float q[3], float v[3]);
/* Pixel position of q; 0 when q is behind the near plane. */
int proj_point(const proj *p, const float q[3], float *x, float *y);
/* A world point on the plane through `on` facing the camera, under pixel (x, y). */
void proj_unproject(const proj *p, float x, float y, const float on[3], float out[3]);

void blend_px(uint32_t *d, uint32_t rgb, unsigned a);
void fill_rect(canvas *c, int x, int y, int w, int h, uint32_t rgb, unsigned a);
void line2d(canvas *c, float x0, float y0, float x1, float y1, uint32_t rgb, unsigned a);
void line3d(canvas *c, const proj *p, const float a[3], const float b[3], uint32_t rgb,
            unsigned alpha);

/* The colour of target markers (opaque, so tests can find it) and of the highlighted one. */
#define OVERLAY_TARGET_RGB 0xFFE020u
#define OVERLAY_TARGET_ACTIVE_RGB 0xFF60F0u
#define OVERLAY_MESH_RGB 0xC8B090u
/* Marker half-size in pixels; a click within OVERLAY_PICK_PX of a marker grabs it. */
#define OVERLAY_MARKER_PX 7
#define OVERLAY_PICK_PX 12

/* A target marker: a diamond with a cross, 2 pixels thick, opaque. */
void overlay_target(canvas *c, const proj *p, const float q[3], int active);
/* An obstacle mesh's edges (each triangle's three), transformed by `xf`. */
void overlay_mesh(canvas *c, const proj *p, const shoal_mesh *m, const shoal_transform *xf,
                  uint32_t rgb, unsigned alpha);
/* The world's box: its 12 edges (3D) or the rectangle at z = 0 (2D), where it has a size;
 * nothing for a world without a box. */
#define OVERLAY_BOX_RGB 0x70D0FFu
void overlay_world_box(canvas *c, const proj *p, const shoal_world *world, uint32_t rgb,
                       unsigned alpha);
/* A sphere as three great circles. */
void overlay_sphere(canvas *c, const proj *p, const float centre[3], float radius, uint32_t rgb,
                    unsigned alpha);

#endif
