/* SPDX-License-Identifier: MIT */
/* shoal: the software renderer. Draws every boid as an instanced low-poly fish with a
 * tile-based fixed-point rasterizer (OpenMP threads, AVX2/AVX-512 with a scalar twin) into an
 * ARGB8888 framebuffer. It reads a caller-owned view of positions and velocities and knows
 * nothing else of the simulation, and takes its fish as meshes (shoal_mesh, plain data); it
 * reads no file. Reading meshes (Wavefront OBJ) and writing PNG are io's (shoal/io.h,
 * included here). The conventions below are a contract that other
 * tools compare against (docs/RENDER.md has the long form).
 *
 * Conventions:
 *  - World right-handed, +Y up. The camera looks from `eye` at `target` with up +Y; OpenGL's
 *    perspective projection (gluPerspective) with vertical field of view fov_deg, near, far.
 *  - Image row 0 is the top. Pixel (x, y) has its centre at (x + 0.5, y + 0.5); vertices are
 *    snapped to 1/256 pixel (round to nearest); a pixel is covered when its centre is inside
 *    the triangle, with the top-left rule of the y-down image for centres on an edge. This is
 *    what OpenGL (Mesa) produces once its bottom-up readback is flipped.
 *  - Front faces are counter-clockwise in OpenGL's y-up window coordinates; back faces are
 *    culled. Triangles are clipped against the near plane (z_clip >= -w_clip), not rejected.
 *  - Depth: z_clip / w_clip interpolated linearly in window space, float32, test `less`
 *    against a buffer cleared to 1.0 (so beyond-far fragments are dropped, as GL clips them);
 *    between different instances an equal depth goes to the lower instance id; within one
 *    instance the earlier triangle of the mesh wins. Images do not depend on the order in
 *    which instances are given, on the thread count or on the ISA.
 *  - Instance i is drawn with the model matrix T(p_i) R(v_i) S(fish_length): Z axis =
 *    normalize(v), X axis = normalize(cross((0,1,0), Z)), or (1,0,0) when v is vertical,
 *    Y axis = cross(Z, X); zero velocity gives the identity orientation. */
#ifndef SHOAL_RENDER_H
#define SHOAL_RENDER_H

#include "shoal/base.h"
#include "shoal/profile.h"
#include "shoal/world.h"
#include "shoal/io.h" /* the fish meshes (shoal_mesh) and PNG frames: io reads and writes them */

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------
 * Renderer (src/render/)
 * ------------------------------------------------------------------------------------- */

/** Largest image side in pixels (keeps fixed-point window coordinates inside int32 with a
 *  guard band of 16384 pixels around the image). */
#define SHOAL_RENDER_MAX_SIZE 8192

/** How fish pixels are coloured. */
typedef enum shoal_shade {
    /** Flat Lambert + ambient with a fixed light from above, per-instance colour (by speed,
     *  or by group when the caller gives groups), depth fog toward an underwater gradient
     *  that is also the background. */
    SHOAL_SHADE_LIT = 0,
    /** Every pixel of instance i is the 24-bit colour id(i) + 1 (R = (id+1) >> 16 & 255,
     *  G = (id+1) >> 8 & 255, B = (id+1) & 255), alpha 255; background 0 (alpha 255). No
     *  lighting, fog or LOD: the exact mesh is always drawn. Coverage and depth order are
     *  those of OpenGL on the same inputs. Ids above 0xFFFFFE wrap (24 bits). */
    SHOAL_SHADE_ID = 1,
} shoal_shade;

/** A camera. Units are world units; the up vector is +Y. When the view direction is
 *  (anti)parallel to +Y, +Z is used as up instead. Perspective (gluPerspective) unless
 *  ortho_height > 0: then orthographic (glOrtho), the image's height spanning ortho_height
 *  world units at every distance and its width ortho_height * width / height, centred on the
 *  view axis; fov_deg is then not used (but must still be valid). */
typedef struct shoal_camera {
    float eye[3];
    float target[3];    /**< must differ from eye */
    float fov_deg;      /**< vertical field of view, in (0, 180) degrees */
    float near;         /**< near plane distance, > 0 (default 0.1) */
    float far;          /**< far plane distance, > near (default 2000) */
    float ortho_height; /**< > 0: orthographic, this many world units high; 0 (default):
                             perspective. Finite, >= 0. */
} shoal_camera;

/** eye (0, 0, 75), target (0, 0, 0), fov 60 degrees, near 0.1, far 2000, perspective. */
SHOAL_API shoal_camera shoal_camera_default(void);

/** Everything needed to create a renderer. Start from shoal_render_desc_default(). */
/** The default fish length in world units, of the renderer and of every command and scene
 *  that gives none: the steer scenes' 0.6 (a fish a little over half the separation radius
 *  of the seeds' defaults long). */
#define SHOAL_FISH_LENGTH 0.6f

typedef struct shoal_render_desc {
    int width, height; /**< image size in pixels, 1..SHOAL_RENDER_MAX_SIZE (1280x720) */
    shoal_shade shade; /**< SHOAL_SHADE_LIT */
    int lod;           /**< 1: level of detail in lit mode (ignored in id mode) (1) */
    float fish_length; /**< world length of every fish, > 0 (SHOAL_FISH_LENGTH) */
    shoal_isa isa;     /**< rasterizer ISA; AUTO resolves as shoal_isa_resolve. All
                            ISAs give identical images. (AUTO) */
    int thread_count;  /**< > 0: threads for this renderer's parallel regions; 0: the
                            process default (parallel_set_threads / OpenMP) (0) */
    /** The fish: a triangle mesh in model units, facing +Z, +Y up, about 1 long, CCW front
     *  faces (shoal_mesh_load reads one from OBJ; shoal_mesh_load_asset("fish.obj") shoal's
     *  own). Required (NULL is SHOAL_ERR_INPUT), 3..4096 vertices, 1..4096 triangles, finite,
     *  no zero-area triangle. Borrowed by shoal_render_create only: the renderer keeps its own
     *  copy, so the caller may free or change the mesh once create returns. (NULL) */
    const shoal_mesh *mesh;
    /** The reduced fish LOD draws between lod_coarse_px and lod_reduced_px (shoal's is
     *  "fish_lod1.obj"), same rules and lifetime as `mesh`; NULL: `mesh` there. (NULL) */
    const shoal_mesh *lod_mesh;
    /** The coarse fish LOD draws between lod_splat_px and lod_coarse_px, a handful of
     *  triangles (shoal's is "fish_lod2.obj"), same rules and lifetime as `mesh`; NULL: no
     *  coarse level (the reduced fish down to lod_splat_px, as before 0.2). (NULL) */
    const shoal_mesh *lod_coarse_mesh;
    /** LOD thresholds on the fish's projected length in pixels (length * focal / distance):
     *  below lod_splat_px a fish is a depth-tested splat of a few pixels, below lod_coarse_px
     *  the coarse mesh (when there is one), below lod_reduced_px the reduced mesh, else the
     *  exact mesh; 0 <= splat <= reduced, and splat <= coarse <= reduced when there is a
     *  coarse mesh (else lod_coarse_px is not read). docs/RENDER.md has the image error of
     *  each level. (4, 12, 26) */
    float lod_splat_px, lod_reduced_px;
    float lod_coarse_px;
    /** Fog in lit mode: linear in the distance from the eye, from fog_start to fog_end
     *  (world units), at most fog_max (0..1). fog_start <= 0 or fog_end <= fog_start:
     *  automatic, 0.5x and 3x the eye-target distance. (0, 0, 0.85) */
    float fog_start, fog_end, fog_max;
    /** 1: the tile pass draws each tile's fish near to far and skips those hidden behind
     *  nearer pixels. The image is the same either way (the depth test's tie rule does not
     *  depend on the order); 0 draws every fish, for comparison. (1) */
    int occlusion;
} shoal_render_desc;

/** Defaults as listed per field. */
SHOAL_API shoal_render_desc shoal_render_desc_default(void);

/** The instances of one frame: a read-only view, borrowed for the duration of
 *  shoal_render_frame only. Positions and velocities must be finite. */
typedef struct shoal_render_instances {
    size_t count;              /**< number of instances (0 draws the background) */
    const float *px, *py, *pz; /**< positions, world units */
    const float *vx, *vy, *vz; /**< velocities: orientation, and colour by speed */
    /** Optional: the instance id of entry i (id colour, depth tie-break); NULL means i.
     *  Give the input row when the entries are in another order (shoal_boid_view.row_of):
     *  the image is then the same as for the rows in row order. Ids should be distinct. */
    const uint32_t *id;
    /** Optional: colour group of entry i (lit mode: palette[group % 8] instead of the
     *  colour by speed). NULL: colour by speed. */
    const uint8_t *group;
    /** Optional: length of entry i as a multiple of fish_length (> 0, finite). NULL: 1. */
    const float *scale;
    /** Optional: lit mode base colour of entry i, 0xAARRGGBB; an entry with alpha 0 keeps the
     *  colour by group or speed. NULL: none. (Predators are drawn red this way.) */
    const uint32_t *color;
} shoal_render_instances;

/** The frame a renderer drew: `width` x `height` ARGB8888 pixels (0xAARRGGBB, alpha 255),
 *  row 0 at the top, `stride_px` pixels between rows. Owned by the renderer; valid until the
 *  next frame, set_size or destroy. */
typedef struct shoal_framebuffer {
    int width, height, stride_px;
    const uint32_t *argb;
} shoal_framebuffer;

/** What the last frame did. Times are wall-clock milliseconds of each stage (stages run one
 *  after the other, each with all threads). Triangle counts: `submitted` = triangles of the
 *  meshes of the instances that survived the bounding-sphere cull (what a GPU would be fed);
 *  `visible` = front-facing triangles after clipping that may cover a pixel centre (survived
 *  back-face, zero-area and sample-gap culls); `rasterized` = (triangle, tile) pairs the tile
 *  workers scanned. resolve_ms is the part of raster's wall time spent writing tiles to the
 *  framebuffer (summed over threads, divided by the thread count). */
typedef struct shoal_render_stats {
    double instance_ms;         /**< cull by bounding sphere, LOD choice */
    double setup_ms;            /**< model matrices, vertex transform, clipping, back-face cull,
                                     triangle setup and colours, splats, binning */
    double raster_ms;           /**< tile rasterization: edge functions, depth, shading */
    double resolve_ms;          /**< tile buffers to the framebuffer */
    double total_ms;            /**< whole shoal_render_frame call */
    uint64_t instances;         /**< instances given */
    uint64_t instances_visible; /**< after the frustum cull */
    uint64_t instances_full, instances_reduced, instances_splat; /**< LOD choice */
    uint64_t instances_coarse;                                   /**< LOD choice */
    uint64_t instances_clipped; /**< drawn through the near/guard-band clipper */
    uint64_t triangles_submitted, triangles_visible, triangles_rasterized;
    uint64_t pixels_written; /**< fragments that passed the depth test */
    uint64_t refs_hidden;    /**< (fish, tile) pairs skipped as hidden (occlusion) */
    float speed_scale;       /**< largest speed of the frame's visible fish (colour by speed) */
    const char *isa;         /**< "scalar", "avx2" or "avx512" */
    int thread_count;
} shoal_render_stats;

typedef struct shoal_renderer shoal_renderer;

/** Create a renderer: validates the desc, copies the meshes into its own form, allocates the
 *  framebuffer and tile buffers. Reads no file. SHOAL_ERR_INPUT for a bad desc or mesh (the
 *  message names it), SHOAL_ERR_UNSUPPORTED when the ISA asked for is not available,
 *  SHOAL_ERR_NOMEM. */
SHOAL_API shoal_status shoal_render_create(const shoal_render_desc *desc, shoal_renderer **out,
                                           shoal_error *err);
SHOAL_API void shoal_render_destroy(shoal_renderer *r);

/** Draw one frame. Validates the camera (SHOAL_ERR_INPUT naming the field) and the view
 *  (NULL arrays with count > 0). Runs its own OpenMP team (see thread_count); not
 *  thread-safe on one renderer. Buffers grow to the largest frame seen and are reused: no
 *  allocation once warm (SHOAL_ERR_NOMEM if growing fails). Deterministic: the same inputs
 *  give the same pixels for every thread count and ISA. */
SHOAL_API shoal_status shoal_render_frame(shoal_renderer *r, const shoal_render_instances *inst,
                                          const shoal_camera *cam, shoal_error *err);

/** Draw the frames in a world (shoal/world.h; docs/RENDER.md "Worlds"), from the next frame
 *  on; NULL or today's world (3D, nothing periodic): none, every pixel as before. On each
 *  periodic axis a fish is drawn wrapped (the simulation's wrap) into the period window
 *  centred on the camera's target (target +- size/2: the box itself for a camera aimed at
 *  its centre, as shoal_render_camera_world makes it; around the school for a camera that
 *  follows it) and, within its bounding radius of the window's faces, also one period
 *  across (same id, colour and size), so a fish crossing a seam shows on both sides as it
 *  crosses; the stats count those images as instances. In 2D (dims 2) the plane is drawn seen from
 * above: every position, velocity and the camera are turned by (x, y, z) -> (-x, z, y) before
 * drawing (a rotation: the plane's normal +z becomes the orientation rule's up, so each fish shows
 * its back, lit from above; a camera looking down -z shows +x right and +y up, as
 *  shoal_render_camera_world makes it). SHOAL_ERR_INPUT for an invalid world. */
SHOAL_API shoal_status shoal_render_set_world(shoal_renderer *r, const shoal_world *world,
                                              shoal_error *err);
/** Where the renderer draws world point `in` (for overlays drawn with the same camera): the
 *  2D turn of shoal_render_set_world, else the point itself. */
SHOAL_API void shoal_render_world_point(const shoal_world *world, const float in[3], float out[3]);
/** A camera for the world's box (size 0 on an axis: 1 unit there) for an image of aspect
 *  width / height, `margin` world units around it: in 2D orthographic from above, the box's
 *  rectangle filling the frame along its tighter side; in 3D perspective, the box's corners
 *  framed as shoal_render_camera_frame frames a school. */
SHOAL_API shoal_camera shoal_render_camera_world(const shoal_world *world, float aspect,
                                                 float margin);

/** Draw one frame of a state given as rows in row order: `row_count` rows of
 *  SHOAL_STATE_COLUMNS floats (px py pz vx vy vz), the layout of state files and of
 *  shoal_sim_get_rows. Instance i is row i (its id). `group` and `color` are optional
 *  per-row arrays as in shoal_render_instances (NULL: colour by speed). The same pixels as
 *  shoal_render_frame on the same values given as columns. Values must be finite
 *  (SHOAL_ERR_INPUT naming row and column). The renderer keeps the columns in a buffer of
 *  its own, grown to the largest count seen. */
SHOAL_API shoal_status shoal_render_frame_rows(shoal_renderer *r, const float *rows,
                                               size_t row_count, const uint8_t *group,
                                               const uint32_t *color, const shoal_camera *cam,
                                               shoal_error *err);

/** Colour by speed against `max_speed` (> 0) instead of the frame's largest visible speed
 *  (stats.speed_scale); 0 goes back to the frame's. For images drawn in parts that must
 *  colour alike (shoal render under MPI). */
SHOAL_API void shoal_render_set_speed_scale(shoal_renderer *r, float max_speed);

/** Keep each pixel's depth and winning instance id with the frame (on = 1), for depth
 *  compositing of images drawn from parts of a school (shoal under MPI: each rank draws its
 *  fish, the nearest fragment wins, at equal depth the lower id, as inside one renderer).
 *  Off by default (it costs two more full-frame writes). SHOAL_ERR_NOMEM if the buffers
 *  cannot be allocated (then nothing changes). */
SHOAL_API shoal_status shoal_render_keep_depth(shoal_renderer *r, int on, shoal_error *err);

/** Frames drawn in parts (shoal under MPI: each rank draws its own fish, then the parts are
 *  composited by depth): `hook(ctx, frame_speed)` is called once per frame, after the
 *  instance pass found the largest speed of the frame's visible fish (frame_speed; -1 when
 *  the frame failed before that), from the thread that called shoal_render_frame, and
 *  returns the speed to colour by (> 0; otherwise the frame's own): the largest over every
 *  part, so that all parts colour alike in one pass. NULL removes it. */
SHOAL_API void shoal_render_set_speed_hook(shoal_renderer *r,
                                           float (*hook)(void *ctx, float frame_speed), void *ctx);

/** shoal_render_sparse's modes: every tile drawn (the default); tiles that no triangle
 *  touches get the background in the framebuffer only (their depth and ids are not written:
 *  shoal_render_drawn_tiles says which are valid); such tiles are skipped altogether (the
 *  framebuffer too keeps what it held there). */
enum {
    SHOAL_RENDER_SPARSE_OFF = 0,
    SHOAL_RENDER_SPARSE_BACKGROUND = 1,
    SHOAL_RENDER_SPARSE_SKIP = 2
};

/** How the next frames treat the tiles that no triangle touches (SHOAL_RENDER_SPARSE_*): a
 *  part of a scene drawn for a composite touches only the tiles its fish cover, so a renderer
 *  that draws one part need not clear, resolve or copy the rest of the image (IceT's idea).
 *  SHOAL_ERR_INPUT for another value. */
SHOAL_API shoal_status shoal_render_sparse(shoal_renderer *r, int mode, shoal_error *err);

/** With a sparse mode on: per tile of the last frame (tiles_x x tiles_y, row-major, tiles of
 *  tile_size x tile_size pixels, the last row and column cut at the image's edge), non-zero
 *  where triangles were drawn (the framebuffer, depth and ids there are the frame's). NULL
 *  before such a frame. Valid until the next frame. */
SHOAL_API const uint8_t *shoal_render_drawn_tiles(const shoal_renderer *r, int *tiles_x,
                                                  int *tiles_y, int *tile_size);

/** With keep_depth on: the last frame's depth (window z in [0, 1); 1 where nothing was
 *  drawn) and instance ids (0 where nothing was drawn), width x height, rows of `width`.
 *  Returns 1, or 0 (pointers NULL) when keep_depth is off. Valid as the framebuffer is. */
SHOAL_API int shoal_render_depth(const shoal_renderer *r, const float **depth,
                                 const uint32_t **ids);

/** The last frame (background before the first). */
SHOAL_API shoal_framebuffer shoal_render_framebuffer(const shoal_renderer *r);

/** Statistics of the last frame. */
SHOAL_API shoal_render_stats shoal_render_get_stats(const shoal_renderer *r);

/** The profile the renderer's frames record their stages into (shoal/profile.h): its own,
 *  created with it, unless one was lent with shoal_render_set_profile. */
SHOAL_API shoal_profile *shoal_render_get_profile(const shoal_renderer *r);
/** Record the stages into `profile` from the next frame on (NULL: back to the renderer's
 *  own). The caller keeps ownership; the profile must outlive the renderer or be unset
 *  first, and objects sharing a profile must not run at the same time. */
SHOAL_API void shoal_render_set_profile(shoal_renderer *r, shoal_profile *profile);

/** Resize the image (1..SHOAL_RENDER_MAX_SIZE); reallocates the framebuffer. */
SHOAL_API shoal_status shoal_render_set_size(shoal_renderer *r, int width, int height,
                                             shoal_error *err);

/** The ISA the renderer resolved to ("scalar", "avx2", "avx512"). */
SHOAL_API const char *shoal_render_isa_name(const shoal_renderer *r);

/** Frame a set of points: target = centre of their bounding box, eye on the +Z side of it
 *  (slightly above) far enough that the bounding sphere, grown by `margin` world units (use
 *  the fish length), fits the vertical and horizontal field of view of an image of aspect
 *  width/height. `cam->fov_deg`, near and far are read (far is raised to see the whole
 *  sphere); eye and target are written. Non-finite points are skipped; with none left the
 *  camera looks at the origin from (0, 0, 10). Deterministic, thread-safe. */
SHOAL_API void shoal_render_camera_frame(const float *px, const float *py, const float *pz,
                                         size_t count, float margin, float aspect,
                                         shoal_camera *cam);

/** FNV-1a 64 of the framebuffer's pixels (row by row, little-endian ARGB words): the golden
 *  image hash used by the tests and by `shoal render --stats`. */
SHOAL_API uint64_t shoal_render_hash(shoal_framebuffer fb);

/* Earlier names (before shoal_<module>_<verb> throughout). shoal_renderer_create is the create
 * of 0.1: without desc->mesh it loads shoal's fish.obj (and fish_lod1.obj for LOD) with
 * shoal_mesh_load_asset, as the renderer once did itself. */
SHOAL_DEPRECATED("shoal_render_create")
SHOAL_API shoal_status shoal_renderer_create(const shoal_render_desc *desc, shoal_renderer **out,
                                             shoal_error *err);
SHOAL_DEPRECATED("shoal_io_asset_path")
SHOAL_API int shoal_render_asset_path(const char *name, char *out, size_t size);
SHOAL_DEPRECATED("shoal_render_destroy") SHOAL_API void shoal_renderer_destroy(shoal_renderer *r);

#ifdef __cplusplus
}
#endif

#endif
