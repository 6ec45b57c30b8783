/* SPDX-License-Identifier: MIT */
/* The renderer's internal data: frame constants, the per-block bins that setup writes and the
 * tile workers read, tile buffers, and the ISA kernel table. Setup ("building the bins") and
 * rast ("consuming them") meet only through the structs here (llvmpipe's scene/rast split).
 *
 * Fixed point: window coordinates are int32 in 1/256 pixel (x_fx8), y down, row 0 on top;
 * pixel (px, py) samples at (256 px + 128, 256 py + 128). Everything that decides coverage
 * is exact integer math; depth is float32 evaluated by one formula (render_depth_at) in every
 * path, so all ISAs and thread counts give the same bits. */
#ifndef SHOAL_RENDER_INTERNAL_H
#define SHOAL_RENDER_INTERNAL_H

#include "shoal/render.h"

#include <stdint.h>
#include <string.h>

#define FX_BITS 8
#define FX_ONE 256
#define FX_HALF 128
#define TILE_SHIFT 6
#define TILE_SIZE 64
/* Tile buffers are TILE_SIZE wide with TILE_PAD_ROWS extra rows: SIMD stamps may read (and
 * write back unchanged) lanes past the tile's right or bottom edge. */
#define TILE_PAD_ROWS 8
#define TILE_BUF_LEN (TILE_SIZE * (TILE_SIZE + TILE_PAD_ROWS))
/* Guard band: vertices may lie up to this many pixels outside the image before the clipper
 * is needed; keeps |x_fx8| < 2^23 so edge deltas fit int32 and products int64. */
#define GUARD_PX 16384.0f
/* Vertex and triangle limits of a mesh (uint16 indices in the bins, clipped output). */
#define MESH_MAX_VERTICES 4096
#define MESH_MAX_TRIANGLES 4096
/* A clipped triangle has at most 3 + 6 planes = 9 vertices. */
#define CLIP_MAX_VERTS 12

/* LOD levels of an instance (instance pass output). */
enum { LOD_CULLED = 0, LOD_SPLAT = 1, LOD_REDUCED = 2, LOD_FULL = 3, LOD_COARSE = 4 };

/* A mesh ready for transform: SoA positions padded (by repeating the last vertex) to a
 * multiple of 16 so SIMD kernels need no tail handling; triangle indices as three int32
 * columns padded with (0, 0, 0), which has zero area and is always dropped; model-space unit
 * face normals (0 in the padding). */
typedef struct render_mesh {
    int vertex_count, vertex_padded, triangle_count, triangle_padded;
    float *x, *y, *z;      /* vertex_padded each */
    int32_t *i0, *i1, *i2; /* triangle_padded each */
    float *nx, *ny, *nz;   /* triangle_padded each */
    float radius;          /* max distance of a vertex from the origin */
} render_mesh;

/* Per-frame constants shared by every stage (read-only during the parallel stages). */
typedef struct frame_consts {
    int width, height, tiles_x, tiles_y;
    float vp[16];           /* projection * view, row-major */
    float view[16];         /* view, row-major */
    float win_sx, win_ox;   /* x_fx8 = rint(x_ndc * win_sx + win_ox) */
    float win_sy, win_oy;   /* y_fx8 = rint(y_ndc * win_sy + win_oy) (y down) */
    float guard_x, guard_y; /* |x_clip| <= guard_x * w_clip keeps x inside the guard band */
    float near, far;
    float tan_half_y, tan_half_x, focal_px; /* focal_px = (height/2) / tan(fov/2) */
    float plane_cos_y, plane_sin_y, plane_cos_x, plane_sin_x;
    /* an orthographic camera (shoal_camera.ortho_height > 0): the view volume's half width
     * and height (world units) and the pixels per world unit; the cull and the LOD use them
     * instead of the perspective planes and the focal length */
    int ortho;
    float ortho_half_x, ortho_half_y, ortho_px;
    float eye[3];
    float fish_length, cull_radius;
    float lod_splat_px, lod_coarse_px, lod_reduced_px;
    int lod, shade_id, occlusion;
    float fog_start, fog_end, fog_max;
    float light_model_unused;
    float max_speed;        /* largest speed of the frame (colour by speed) */
    const uint32_t *bg_row; /* background colour per image row */
} frame_consts;

/* One binned thing. Mesh refs name their kept triangles in the block's arena; splat refs
 * carry their own rect, depth and colour. 24 bytes. A mesh ref's `b` holds the float bits of
 * the smallest vertex z_ndc of its triangles (the tile pass orders refs near to far by it). */
typedef struct rref {
    int16_t px0, py0, px1, py1; /* inclusive pixel rect, inside the image */
    uint32_t id;                /* depth tie-break id */
    uint32_t kind_count;        /* REF_SPLAT bit | triangle count n */
    uint32_t a;                 /* mesh: word offset of its columns in the arena; splat: z bits */
    uint32_t b;                 /* splat: colour; mesh: smallest vertex z bits */
} rref;
#define REF_SPLAT 0x80000000u

/* Kept triangles, one column per field (SIMD lanes = consecutive triangles): window x_fx8 /
 * y_fx8 and z_ndc of the three vertices in positive orientation (area2 > 0 in y-down
 * coordinates, i.e. a front face with its last two vertices swapped), and the final colour.
 * In the arena the ten columns of one ref lie one after the other (10 n words, contiguous:
 * one stream to prefetch, few pages); kernels may read whole vectors past a column's end
 * (TRI_SLACK words of slack after the arena's last ref). */
#define TRI_SLACK 64
#define TRI_FIELDS 10
typedef struct tri_cols {
    int32_t *x0, *y0, *x1, *y1, *x2, *y2;
    float *z0, *z1, *z2;
    uint32_t *col;
} tri_cols;
static inline tri_cols tri_cols_at(uint32_t *base, size_t n)
{
    tri_cols c;
    c.x0 = (int32_t *)base;
    c.y0 = (int32_t *)base + n;
    c.x1 = (int32_t *)base + 2 * n;
    c.y1 = (int32_t *)base + 3 * n;
    c.x2 = (int32_t *)base + 4 * n;
    c.y2 = (int32_t *)base + 5 * n;
    c.z0 = (float *)(base + 6 * n);
    c.z1 = (float *)(base + 7 * n);
    c.z2 = (float *)(base + 8 * n);
    c.col = base + 9 * n;
    return c;
}

/* Colour inputs of one instance's triangles. */
typedef struct shade_inst {
    float a[3], b[3];
    float light_model[3]; /* the light direction in model space */
} shade_inst;
typedef struct tri_shade {
    int id_mode;
    uint32_t id_colour;
    shade_inst sh;
} tri_shade;

/* A setup worker's scratch (one per thread: what it holds lives only while one instance or
 * one run of lanes is set up, so it does not reach the bins). Capacities persist. */
typedef struct setup_scratch {
    uint32_t *stri_mem; /* one instance's kept triangles before they go to the arena */
    tri_cols stris;
    size_t stri_cap;
    int32_t *sx, *sy; /* transform output of the current instance */
    float *sz;
    size_t scratch_cap;
    uint32_t *lane_mem; /* the meshes kernel's scratch: vertices and triangles of the meshes */
    size_t lane_cap;
    uint32_t *order; /* the block's instances by kind (splat, coarse, reduced, exact) */
    size_t order_cap;
} setup_scratch;
void setup_scratch_free(setup_scratch *s);

/* What one block of instances produced. Owned by the block index, never by a thread, so the
 * bins do not depend on the thread count. Capacities persist across frames. Blocks are an
 * array written by different threads at once: each starts on its own cache line. */
typedef struct render_block {
    _Alignas(64) uint32_t *arena; /* the refs' triangle columns */
    size_t arena_words, arena_cap;
    setup_scratch *s; /* the scratch of the thread setting the block up */
    rref *refs;
    size_t ref_count, ref_cap;
    uint32_t *tile_start; /* tile_count + 1 offsets into items */
    rref *items;          /* copies of the refs grouped by tile, in ref order within a tile
                           * (the tile pass then reads its refs in sequence, not scattered) */
    size_t item_cap;
    size_t tile_cap;
    uint64_t tris_submitted, tris_visible, inst_full, inst_reduced, inst_splat, inst_clipped;
    uint64_t inst_coarse;
    int failed; /* allocation failure inside a worker */
} render_block;

/* One tile being drawn by one worker. Buffers are the worker's own (TILE_BUF_LEN each). */
typedef struct tile_ctx {
    float *depth;
    uint32_t *idb;
    uint32_t *col;
    int ox, oy;             /* pixel origin of the tile */
    int cx0, cy0, cx1, cy1; /* inclusive pixel rect of the tile inside the image */
    uint64_t tris_rasterized, pixels_written, refs_hidden;
    int occlusion; /* order near to far and skip hidden refs (frame_consts.occlusion) */
} tile_ctx;

/* The kernels each ISA provides (rast_kernel.h, written once against core/simd.h and
 * instantiated per ISA; the scalar instance is the reference).
 * transform: clip = mvp * (x, y, z, 1) for all vertices of `m`, then window coordinates into
 *   ox/oy/oz (vertex_padded entries written); `bbox` gets min x, min y, max x, max y of
 *   x_fx8/y_fx8 over the vertices. Returns 1 (outputs unusable) when some vertex needs the
 *   clipper: w <= 0, z < -w, or x/y outside the guard band.
 * setup_tris: back-face and sample-gap culls and colours of all triangles of `m` over the
 *   transformed vertices, appended in mesh order to `out` from index `base`; grows `rect`
 *   (px0, py0, px1, py1) by their sample rects; returns how many were kept. Only for instances
 *   whose box is under SETUP_SMALL_FX in both directions (int32 areas are exact).
 * rast_tris: draw the `count` kept triangles of one ref (its columns `c`) into the tile. */
#define SETUP_SMALL_FX (1 << 14)
typedef int (*transform_fn)(const render_mesh *m, const float mvp[16], const frame_consts *fc,
                            int32_t *ox, int32_t *oy, float *oz, int32_t bbox[4]);
typedef uint32_t (*setup_tris_fn)(const render_mesh *m, const int32_t *X, const int32_t *Y,
                                  const float *Z, const tri_shade *ts, const frame_consts *fc,
                                  const tri_cols *out, size_t base, int32_t rect[4]);
typedef void (*rast_tris_fn)(tile_ctx *t, const tri_cols *c, uint32_t count, uint32_t id);
/* What the splat path of setup decides for n <= splat_lanes consecutive instances, lane j =
 * instance i + j: bit j of `done` when the splat path takes the instance (drawn, or nothing
 * to draw), else the caller sends it to the mesh path (a point of the splat needs the
 * clipper); bit j of `ref` when it draws a splat with the rect, depth bits and colour of lane
 * j. Every value is the scalar instance's, bit for bit. */
#define SPLAT_LANES_MAX 16
typedef struct splat_lanes {
    int32_t px0[SPLAT_LANES_MAX], py0[SPLAT_LANES_MAX], px1[SPLAT_LANES_MAX], py1[SPLAT_LANES_MAX];
    uint32_t z[SPLAT_LANES_MAX], colour[SPLAT_LANES_MAX];
    uint32_t done, ref;
} splat_lanes;
typedef void (*splats_fn)(const frame_consts *fc, const shoal_render_instances *inst, size_t i,
                          int n, splat_lanes *out);
/* What the mesh path of setup (setup_instance: instance_matrix, transform, shade_instance,
 * setup_tri_one over the mesh, the ref's rect and depth floor) decides for the instances of
 * `lanes` among n <= lanes consecutive ones, all drawn with one mesh, lane j = instance
 * i + j. Bit j of `fallback`: the per-instance path takes it (a vertex needs the clipper,
 * or its box is too big for int32 areas). Every other lane of `lanes` is done: count[j]
 * triangles kept (0: nothing to draw, e.g. off the image), their sample rect and depth floor;
 * kept triangle t of lane j has field f (tri_cols order: x0 y0 x1 y1 x2 y2 z0 z1 z2 col) at
 * tri[(t * TRI_FIELDS + f) * lanes + j], and keep[t] has bit j; meshes_emit writes them out. Every
 * value is the scalar instance's, bit for bit. */
typedef struct mesh_lanes {
    unsigned fallback;
    int32_t count[SPLAT_LANES_MAX];
    int32_t rect[4][SPLAT_LANES_MAX];
    float floor[SPLAT_LANES_MAX];
    uint32_t *tri;  /* triangle_padded * TRI_FIELDS * lanes words */
    uint32_t *keep; /* triangle_padded words (0 past triangle_count) */
} mesh_lanes;
typedef void (*meshes_fn)(const frame_consts *fc, const shoal_render_instances *inst, size_t i,
                          int n, unsigned lanes, const struct render_mesh *m, mesh_lanes *out,
                          int32_t *vertex_scratch);
/* The done lanes' kept triangles of a meshes call to dst[j] (lane j's ten columns of
 * count[j] words; exact writes, no slack needed). */
typedef void (*meshes_emit_fn)(const mesh_lanes *ml, const struct render_mesh *m, unsigned lanes,
                               uint32_t *const *dst);
typedef struct render_kernels {
    transform_fn transform;
    setup_tris_fn setup_tris;
    rast_tris_fn rast_tris;
    splats_fn splats;
    meshes_fn meshes;
    meshes_emit_fn meshes_emit;
    int lanes; /* VW: instances per splats / meshes call */
    const char *name;
} render_kernels;

/* All are always declared; the x86 ones exist when render_config.h says
 * SHOAL_RENDER_HAVE_X86_SIMD and are used only after cpu_has_avx2/avx512, the NEON one when
 * it says SHOAL_RENDER_HAVE_NEON (aarch64). */
extern const render_kernels render_kernels_scalar;
extern const render_kernels render_kernels_avx2;
extern const render_kernels render_kernels_avx512;
extern const render_kernels render_kernels_neon;

/* ---- shared scalar math: every ISA calls these, so their bits are the reference ----- */

/* x_fx8 of a clip-space point: the same operations the SIMD kernels do, lane by lane. */
static inline int32_t render_round(float v)
{
    return (int32_t)__builtin_lrintf(v); /* round to nearest, ties to even (MXCSR default) */
}

/* Pixel index range of the samples inside [lo, hi] (x_fx8 units): first >= and last <=. */
static inline int32_t render_sample_first(int32_t lo)
{
    return (lo + (FX_ONE - 1 - FX_HALF)) >> FX_BITS;
}
static inline int32_t render_sample_last(int32_t hi) { return (hi - FX_HALF) >> FX_BITS; }

/* Depth plane of a triangle (vertices in x_fx8 units): z(s) = z0 + dzdx (sx - x0) +
 * dzdy (sy - y0), evaluated by render_depth_at. */
typedef struct depth_plane {
    float z0, dzdx, dzdy;
} depth_plane;

static inline depth_plane render_depth_plane(int32_t x0, int32_t y0, float z0, int32_t x1,
                                             int32_t y1, float z1, int32_t x2, int32_t y2, float z2,
                                             int64_t area2)
{
    float e1x = (float)(x1 - x0), e1y = (float)(y1 - y0);
    float e2x = (float)(x2 - x0), e2y = (float)(y2 - y0);
    float dz1 = z1 - z0, dz2 = z2 - z0;
    float area = (float)area2;
    depth_plane p;
    p.z0 = z0;
    p.dzdx = (dz1 * e2y - dz2 * e1y) / area;
    p.dzdy = (dz2 * e1x - dz1 * e2x) / area;
    return p;
}

/* The one depth formula: (z0 + dzdy * dy) + dzdx * dx, with dx, dy the sample's offsets
 * from vertex 0 in x_fx8 units converted to float. SIMD lanes do exactly these operations. */
static inline float render_depth_at(depth_plane p, int32_t dx, int32_t dy)
{
    return (p.z0 + p.dzdy * (float)dy) + p.dzdx * (float)dx;
}

/* Depth test with the tie rule: nearer wins; at equal depth the lower id wins (the tile is
 * cleared to depth 1, id 0, so a fragment at depth 1 never passes, as with GL_LESS). */
static inline int render_depth_pass(float z, uint32_t id, float zb, uint32_t idb)
{
    return z < zb || (z == zb && id < idb);
}

/* ---- stages ---------------------------------------------------------------------------- */

/* camera.c */
shoal_status camera_validate(const shoal_camera *cam, shoal_error *err);
/* Fill the view/projection parts of `fc` for an image of width x height. */
void camera_setup(const shoal_camera *cam, int width, int height, frame_consts *fc);

/* instance.c: model matrix (mvp = vp * T R S) and rotation of instance i. */
void instance_matrix(const frame_consts *fc, float px, float py, float pz, float vx, float vy,
                     float vz, float scale, float mvp[16], float rot[9]);
/* Decide culled/splat/reduced/full for instances [begin, end); writes lod[i]. Returns the
 * largest speed seen (for colour by speed). Run by worker threads on disjoint ranges. */
float instance_classify(const frame_consts *fc, const shoal_render_instances *inst, size_t begin,
                        size_t end, uint8_t *lod);

/* shade.c */
void shade_background(uint32_t *bg_row, int height, int id_mode);
/* Per-instance colour terms: colour(d) = a + b * max(0, d) per channel, d = n . light. */
void shade_instance(const frame_consts *fc, const shoal_render_instances *inst, size_t i,
                    const float rot[9], float win_y_px, shade_inst *out);
/* shade_instance's pieces, for the SIMD splat kernels: the base colour of an instance with an
 * explicit colour or a group (returns 0 when it is coloured by speed), the speed colour stops
 * and the light's ambient and diffuse weights. */
int shade_base_fixed(const shoal_render_instances *inst, size_t i, float base[3]);
extern const float shade_speed_stops[3][3];
/* The unit light direction (world space) every shade_instance uses. */
void shade_light(float L[3]);
extern const float shade_ambient, shade_diffuse;
/* (int)v as the SIMD conversions (cvttps) give it: truncated, and INT32_MIN for NaN and
 * values out of int's range, where C's conversion would be undefined. */
static inline int32_t render_cvtt(float v)
{
    return v > -2147483648.0f && v < 2147483648.0f ? (int32_t)v : INT32_MIN;
}
static inline uint32_t shade_pack(const shade_inst *s, float d)
{
    float k = d > 0.0f ? d : 0.0f;
    uint32_t c = 0xFF000000u;
    for (int ch = 0; ch < 3; ch++) {
        int q = render_cvtt(s->a[ch] + s->b[ch] * k + 0.5f);
        q = q < 0 ? 0 : q > 255 ? 255 : q;
        c |= (uint32_t)q << (16 - 8 * ch);
    }
    return c;
}
static inline uint32_t shade_id_colour(uint32_t id)
{
    return 0xFF000000u | ((id + 1u) & 0xFFFFFFu);
}

/* Back-face cull, sample-gap cull and colour of one triangle (window x_fx8/y_fx8, z_ndc);
 * appends it to `out` at `at` in positive orientation and grows `rect`; returns 1 if kept.
 * Front faces are CCW in GL's y-up window space, i.e. area2 < 0 in our y-down space. The
 * scalar reference of every ISA's setup_tris. */
static inline int setup_tri_one(const frame_consts *fc, const tri_shade *ts, const tri_cols *out,
                                size_t at, int32_t rect[4], int32_t x0, int32_t y0, float z0,
                                int32_t x1, int32_t y1, float z1, int32_t x2, int32_t y2, float z2,
                                float nx, float ny, float nz)
{
    int64_t area2 = (int64_t)(x1 - x0) * (y2 - y0) - (int64_t)(x2 - x0) * (y1 - y0);
    if (area2 >= 0)
        return 0;
    int32_t mnx = x0 < x1 ? x0 : x1, mxx = x0 > x1 ? x0 : x1;
    int32_t mny = y0 < y1 ? y0 : y1, mxy = y0 > y1 ? y0 : y1;
    mnx = x2 < mnx ? x2 : mnx;
    mxx = x2 > mxx ? x2 : mxx;
    mny = y2 < mny ? y2 : mny;
    mxy = y2 > mxy ? y2 : mxy;
    int32_t px0 = render_sample_first(mnx), px1 = render_sample_last(mxx);
    int32_t py0 = render_sample_first(mny), py1 = render_sample_last(mxy);
    px0 = px0 < 0 ? 0 : px0;
    py0 = py0 < 0 ? 0 : py0;
    px1 = px1 > fc->width - 1 ? fc->width - 1 : px1;
    py1 = py1 > fc->height - 1 ? fc->height - 1 : py1;
    if (px0 > px1 || py0 > py1)
        return 0;
    out->x0[at] = x0;
    out->y0[at] = y0;
    out->z0[at] = z0;
    out->x1[at] = x2;
    out->y1[at] = y2;
    out->z1[at] = z2;
    out->x2[at] = x1;
    out->y2[at] = y1;
    out->z2[at] = z1;
    if (ts->id_mode) {
        out->col[at] = ts->id_colour;
    } else {
        const float *l = ts->sh.light_model;
        out->col[at] = shade_pack(&ts->sh, (nx * l[0] + ny * l[1]) + nz * l[2]);
    }
    rect[0] = px0 < rect[0] ? px0 : rect[0];
    rect[1] = py0 < rect[1] ? py0 : rect[1];
    rect[2] = px1 > rect[2] ? px1 : rect[2];
    rect[3] = py1 > rect[3] ? py1 : rect[3];
    return 1;
}

/* depth_floor.c: a depth that no covered sample of the n triangles gets below (the tile pass
 * skips a ref whose floor is deeper than every pixel it could touch); -inf when unsure. */
float render_depth_floor(const tri_cols *s, size_t n);

/* setup.c: transform, cull, clip and bin instances [begin, end) into block `blk`. Run by a
 * worker thread; writes only `blk`. */
/* Raw triangles for the tests: each triangle is its own instance (id ids[t], or t), given
 * either in world space (9 floats, drawn through transform and clipping with the frame's
 * camera) or directly in window x_fx8/y_fx8 (6 ints) with z_ndc (3 floats), skipping the
 * transform. Front faces only (CCW in GL's y-up window space), as for meshes. */
typedef struct render_raw {
    size_t count;
    const float *world;
    const int32_t *win;
    const float *winz;
    const uint32_t *ids;
} render_raw;
shoal_status render_frame_raw(shoal_renderer *r, const render_raw *raw, const shoal_camera *cam,
                              shoal_error *err);

typedef struct setup_ctx {
    const render_raw *raw;
    const frame_consts *fc;
    const shoal_render_instances *inst;
    const uint8_t *lod;
    const render_mesh *mesh_full, *mesh_reduced, *mesh_coarse;
    const render_kernels *k;
    int tile_count;
} setup_ctx;
void setup_block(const setup_ctx *sc, render_block *blk, setup_scratch *scr, size_t begin,
                 size_t end);

/* rast.c: draw one tile from every block's list, in block order, into `t`. `list` is the
 * worker's scratch (grown as needed; failed set when growing fails). */
typedef struct rast_item {
    const render_block *block;
    const rref *ref;
} rast_item;
typedef struct rast_list {
    rast_item *items, *sorted; /* gathered in block order; near to far */
    uint16_t *bucket;          /* each item's depth bucket */
    size_t cap;
    int failed;
} rast_list;
void rast_tile(const render_kernels *k, tile_ctx *t, const render_block *blocks, size_t block_count,
               int tile_index, rast_list *list);
void rast_splat(tile_ctx *t, const rref *r);
/* Exact 64-bit fallback shared by all ISAs, for triangles whose edge values leave int32. */
void rast_tri_int64(tile_ctx *t, int32_t x0, int32_t y0, float z0, int32_t x1, int32_t y1, float z1,
                    int32_t x2, int32_t y2, float z2, uint32_t id, uint32_t colour);

/* mesh.c */
shoal_status mesh_prepare(const shoal_mesh *src, const char *name, render_mesh *out,
                          shoal_error *err);
void mesh_release(render_mesh *m);

/* ---- the world (world_draw.c): a periodic box's seams and the 2D plane -------------------- */

/* What shoal_render_set_world keeps, and the frame's instances as the world makes them: each
 * fish wrapped into the box, plus its images across the seams it is within its bounding
 * radius of (same id, group, scale and colour), and in 2D every position, velocity and the
 * camera turned by (x, y, z) -> (-x, z, y). Buffers grow to the largest frame and are kept. */
typedef struct render_world {
    int on, dims, periodic[3];
    float size[3];
    float *col;   /* 6 x cap: px py pz vx vy vz */
    uint32_t *id; /* cap each: */
    uint8_t *group;
    float *scale;
    uint32_t *color;
    size_t cap;
} render_world;

void render_world_free(render_world *w);
/* the renderer's world (render.c owns the struct) */
render_world *render_get_world(shoal_renderer *r);
/* The instances and camera of this frame in the world (in unchanged and *cam_out = *cam
 * when the world is off). margin: the fish's bounding radius at scale 1. */
shoal_status render_world_expand(render_world *w, const shoal_render_instances *in,
                                 const shoal_camera *cam, float margin, shoal_render_instances *out,
                                 shoal_camera *cam_out, shoal_error *err);

#endif
