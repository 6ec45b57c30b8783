/* SPDX-License-Identifier: MIT */
/* Setup ("building the bins"): for one block of instances, the vertex transform (ISA kernel),
 * the near-plane and guard-band clipper for the rare instances that need it, back-face and
 * sample-gap culls, flat colours, splats, and the block's per-tile lists. A fish is binned
 * once per tile its box touches (most fit one tile) with the list of its surviving triangles;
 * the tile workers set up edges themselves, in L1. Runs on worker threads; writes only the
 * block it is given, so the bins depend on the block split (fixed by N), never on threads. */
#include "render/render_internal.h"

#include <math.h>
#include <stdlib.h>

static int setup_grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 1;
    size_t n = *cap ? *cap : 1024;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * elem);
    if (!q)
        return 0;
    *p = q;
    *cap = n;
    return 1;
}

/* One instance's kept triangles are built in a scratch of ten columns (cap + TRI_SLACK
 * words each: SIMD appends store whole vectors), then copied to the arena as one run. */
static int setup_grow_stris(render_block *b, size_t need)
{
    if (need <= b->s->stri_cap)
        return 1;
    size_t stride = need + TRI_SLACK;
    free(b->s->stri_mem);
    b->s->stri_mem = calloc(TRI_FIELDS * stride, sizeof(uint32_t));
    if (!b->s->stri_mem) {
        b->s->stri_cap = 0;
        return 0;
    }
    b->s->stris = tri_cols_at(b->s->stri_mem, stride);
    b->s->stri_cap = need;
    return 1;
}

static int setup_grow_arena(render_block *b, size_t need_words)
{
    if (need_words + TRI_SLACK <= b->arena_cap)
        return 1;
    size_t n = b->arena_cap ? b->arena_cap : 4096;
    while (n < need_words + TRI_SLACK)
        n *= 2;
    uint32_t *q = realloc(b->arena, n * sizeof(uint32_t));
    if (!q)
        return 0;
    memset(q + b->arena_cap, 0, (n - b->arena_cap) * sizeof(uint32_t));
    b->arena = q;
    b->arena_cap = n;
    return 1;
}

/* Scratch for one instance's transformed vertices (vertex_padded of the larger mesh). */
static int setup_grow_scratch(render_block *b, size_t need)
{
    if (need <= b->s->scratch_cap)
        return 1;
    free(b->s->sx);
    b->s->sx = malloc(need * 3 * sizeof(int32_t));
    if (!b->s->sx) {
        b->s->scratch_cap = 0;
        return 0;
    }
    b->s->sy = b->s->sx + need;
    b->s->sz = (float *)(b->s->sx + 2 * need);
    b->s->scratch_cap = need;
    return 1;
}

/* The meshes kernel's scratch, 64-byte aligned (whole vectors are stored in it). */
static int setup_grow_lanes(render_block *b, size_t words)
{
    if (words <= b->s->lane_cap)
        return 1;
    free(b->s->lane_mem);
    size_t bytes = (words * sizeof(uint32_t) + 63) / 64 * 64;
    b->s->lane_mem = aligned_alloc(64, bytes);
    if (!b->s->lane_mem) {
        b->s->lane_cap = 0;
        return 0;
    }
    /* defined contents: emit transposes whole blocks, culled triangles' rows included */
    memset(b->s->lane_mem, 0, bytes);
    b->s->lane_cap = words;
    return 1;
}

typedef struct setup_inst {
    uint32_t id;
    tri_shade ts;
    int32_t rect[4]; /* union of the sample rects of the kept triangles */
    uint32_t kept;
} setup_inst;

/* The ref of one fish's n triangles, already in the arena at word `at`. */
static void setup_push_ref(render_block *blk, uint32_t id, const int32_t rect[4], uint32_t n,
                           size_t at, float floor)
{
    rref *r = &blk->refs[blk->ref_count++];
    r->px0 = (int16_t)rect[0];
    r->py0 = (int16_t)rect[1];
    r->px1 = (int16_t)rect[2];
    r->py1 = (int16_t)rect[3];
    r->id = id;
    r->kind_count = n;
    r->a = (uint32_t)at;
    memcpy(&r->b, &floor, sizeof floor);
    blk->tris_visible += n;
}

static void setup_emit_ref(render_block *blk, setup_inst *si)
{
    size_t n = si->kept;
    if (n == 0)
        return;
    if (!setup_grow_arena(blk, blk->arena_words + TRI_FIELDS * n)) {
        blk->failed = 1;
        return;
    }
    uint32_t *dst = blk->arena + blk->arena_words;
    const tri_cols *s = &blk->s->stris;
    memcpy(dst, s->x0, n * 4);
    memcpy(dst + n, s->y0, n * 4);
    memcpy(dst + 2 * n, s->x1, n * 4);
    memcpy(dst + 3 * n, s->y1, n * 4);
    memcpy(dst + 4 * n, s->x2, n * 4);
    memcpy(dst + 5 * n, s->y2, n * 4);
    memcpy(dst + 6 * n, s->z0, n * 4);
    memcpy(dst + 7 * n, s->z1, n * 4);
    memcpy(dst + 8 * n, s->z2, n * 4);
    memcpy(dst + 9 * n, s->col, n * 4);
    setup_push_ref(blk, si->id, si->rect, si->kept, blk->arena_words, render_depth_floor(s, n));
    blk->arena_words += TRI_FIELDS * n;
}

/* The done lanes of a meshes kernel call (lanes, all but its fallback): room in the arena for
 * their triangles, written by the kernel's emit, and the offset of each. The refs follow in
 * instance order (setup_push_ref). */
static void setup_emit_lanes(render_block *blk, const render_kernels *k, const mesh_lanes *ml,
                             const render_mesh *m, unsigned lanes, size_t *at)
{
    uint32_t *dst[SPLAT_LANES_MAX];
    size_t words = 0;
    unsigned with = 0;
    for (int j = 0; j < k->lanes; j++) {
        at[j] = 0;
        if ((lanes >> j & 1u) && ml->count[j] > 0) {
            at[j] = blk->arena_words + words;
            words += TRI_FIELDS * (size_t)ml->count[j];
            with |= 1u << j;
        }
    }
    if (!with)
        return;
    if (!setup_grow_arena(blk, blk->arena_words + words)) {
        blk->failed = 1;
        return;
    }
    for (int j = 0; j < k->lanes; j++)
        dst[j] = blk->arena + at[j];
    k->meshes_emit(ml, m, with, dst);
    blk->arena_words += words;
}

/* ---- clipping ----------------------------------------------------------------------------- */

typedef struct cvert {
    float x, y, z, w;
} cvert;

/* Signed distance to clip plane p (inside >= 0). Planes: near z >= -w, far z <= w, then the
 * guard band |x| <= gx w, |y| <= gy w. */
static inline float clip_dist(const frame_consts *fc, int p, cvert v)
{
    switch (p) {
    case 0:
        return v.z + v.w;
    case 1:
        return v.w - v.z;
    case 2:
        return fc->guard_x * v.w - v.x;
    case 3:
        return fc->guard_x * v.w + v.x;
    case 4:
        return fc->guard_y * v.w - v.y;
    default:
        return fc->guard_y * v.w + v.y;
    }
}

/* Sutherland-Hodgman against one plane. The intersection is always computed from the inside
 * vertex toward the outside one, so the two triangles sharing an edge get the same point. */
static int clip_polygon(const frame_consts *fc, int p, const cvert *in, int n, cvert *out)
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        cvert a = in[i], b = in[(i + 1) % n];
        float da = clip_dist(fc, p, a), db = clip_dist(fc, p, b);
        int ia = da >= 0.0f, ib = db >= 0.0f;
        if (ia)
            out[m++] = a;
        if (ia != ib) {
            cvert s = ia ? a : b, o = ia ? b : a;
            float ds = ia ? da : db, dd = ia ? db : da;
            float t = ds / (ds - dd);
            cvert r = {s.x + t * (o.x - s.x), s.y + t * (o.y - s.y), s.z + t * (o.z - s.z),
                       s.w + t * (o.w - s.w)};
            out[m++] = r;
        }
    }
    return m;
}

static inline cvert clip_vertex(const float *mvp, float x, float y, float z)
{
    cvert c;
    c.x = ((mvp[0] * x + mvp[1] * y) + mvp[2] * z) + mvp[3];
    c.y = ((mvp[4] * x + mvp[5] * y) + mvp[6] * z) + mvp[7];
    c.z = ((mvp[8] * x + mvp[9] * y) + mvp[10] * z) + mvp[11];
    c.w = ((mvp[12] * x + mvp[13] * y) + mvp[14] * z) + mvp[15];
    return c;
}

/* Draws an instance some of whose vertices need clipping: each triangle is clipped on its
 * own (planes only where a vertex is outside), its polygon projected and fanned. The fan
 * keeps the triangle's orientation, so the back-face test after projection is the test on
 * the clipped triangle, as in GL. */
static void setup_clipped(const frame_consts *fc, render_block *blk, setup_inst *si,
                          const render_mesh *m, const float *mvp)
{
    for (int t = 0; t < m->triangle_count; t++) {
        cvert poly[2][CLIP_MAX_VERTS];
        int n = 3, cur = 0;
        int vi3[3] = {m->i0[t], m->i1[t], m->i2[t]};
        for (int k = 0; k < 3; k++)
            poly[0][k] = clip_vertex(mvp, m->x[vi3[k]], m->y[vi3[k]], m->z[vi3[k]]);
        for (int p = 0; p < 6 && n >= 3; p++) {
            int outside = 0;
            for (int k = 0; k < n; k++)
                outside |= !(clip_dist(fc, p, poly[cur][k]) >= 0.0f);
            if (!outside)
                continue;
            n = clip_polygon(fc, p, poly[cur], n, poly[cur ^ 1]);
            cur ^= 1;
        }
        if (n < 3)
            continue;
        int32_t X[CLIP_MAX_VERTS], Y[CLIP_MAX_VERTS];
        float Z[CLIP_MAX_VERTS];
        int ok = 1;
        for (int k = 0; k < n; k++) {
            cvert c = poly[cur][k];
            if (!(c.w > 0.0f) || !isfinite(c.x) || !isfinite(c.y) || !isfinite(c.z)) {
                ok = 0;
                break;
            }
            float rw = 1.0f / c.w;
            X[k] = render_round(c.x * rw * fc->win_sx + fc->win_ox);
            Y[k] = render_round(c.y * rw * fc->win_sy + fc->win_oy);
            Z[k] = c.z * rw;
        }
        if (!ok)
            continue;
        for (int k = 1; k + 1 < n; k++)
            si->kept += (uint32_t)setup_tri_one(fc, &si->ts, &blk->s->stris, si->kept, si->rect,
                                                X[0], Y[0], Z[0], X[k], Y[k], Z[k], X[k + 1],
                                                Y[k + 1], Z[k + 1], m->nx[t], m->ny[t], m->nz[t]);
    }
    setup_emit_ref(blk, si);
}

/* ---- the block ---------------------------------------------------------------------------- */

static void setup_bin(const setup_ctx *sc, render_block *blk)
{
    const frame_consts *fc = sc->fc;
    const int T = sc->tile_count;
    if (!setup_grow((void **)&blk->tile_start, &blk->tile_cap, (size_t)T + 1, sizeof(uint32_t))) {
        blk->failed = 1;
        return;
    }
    uint32_t *start = blk->tile_start;
    memset(start, 0, ((size_t)T + 1) * sizeof *start);
    /* count at [tile + 1], prefix sum, then fill moving each tile's start forward and shift
     * back: a stable counting sort, refs stay in instance order within a tile */
    for (size_t i = 0; i < blk->ref_count; i++) {
        const rref *r = &blk->refs[i];
        int tx0 = r->px0 >> TILE_SHIFT, tx1 = r->px1 >> TILE_SHIFT;
        int ty0 = r->py0 >> TILE_SHIFT, ty1 = r->py1 >> TILE_SHIFT;
        for (int ty = ty0; ty <= ty1; ty++)
            for (int tx = tx0; tx <= tx1; tx++)
                start[ty * fc->tiles_x + tx + 1]++;
    }
    for (int t = 0; t < T; t++)
        start[t + 1] += start[t];
    size_t total = start[T];
    if (!setup_grow((void **)&blk->items, &blk->item_cap, total ? total : 1, sizeof(rref))) {
        blk->failed = 1;
        return;
    }
    for (size_t i = 0; i < blk->ref_count; i++) {
        const rref *r = &blk->refs[i];
        int tx0 = r->px0 >> TILE_SHIFT, tx1 = r->px1 >> TILE_SHIFT;
        int ty0 = r->py0 >> TILE_SHIFT, ty1 = r->py1 >> TILE_SHIFT;
        for (int ty = ty0; ty <= ty1; ty++)
            for (int tx = tx0; tx <= tx1; tx++)
                blk->items[start[ty * fc->tiles_x + tx]++] = *r;
    }
    for (int t = T; t > 0; t--)
        start[t] = start[t - 1];
    start[0] = 0;
}

/* The tests' raw triangles: one triangle per instance, same culls, clipper, bins. */
static void setup_raw(const setup_ctx *sc, render_block *blk, size_t i)
{
    const frame_consts *fc = sc->fc;
    const render_raw *raw = sc->raw;
    setup_inst si;
    si.id = raw->ids ? raw->ids[i] : (uint32_t)i;
    si.ts.id_mode = 1;
    si.ts.id_colour = shade_id_colour(si.id);
    si.rect[0] = si.rect[1] = INT32_MAX;
    si.rect[2] = si.rect[3] = INT32_MIN;
    si.kept = 0;
    blk->tris_submitted++;
    if (raw->win) {
        const int32_t *w = raw->win + 6 * i;
        const float *z = raw->winz + 3 * i;
        si.kept = (uint32_t)setup_tri_one(fc, &si.ts, &blk->s->stris, 0, si.rect, w[0], w[1], z[0],
                                          w[2], w[3], z[1], w[4], w[5], z[2], 0.0f, 0.0f, 0.0f);
        setup_emit_ref(blk, &si);
        return;
    }
    /* a one-triangle mesh in world space; the model matrix is the identity */
    float px[16], py[16], pz[16], nn[16] = {0};
    int32_t i0[16] = {0}, i1[16] = {0}, i2[16] = {0};
    const float *v = raw->world + 9 * i;
    for (int k = 0; k < 16; k++) {
        int j = k < 3 ? k : 2;
        px[k] = v[3 * j];
        py[k] = v[3 * j + 1];
        pz[k] = v[3 * j + 2];
    }
    i1[0] = 1;
    i2[0] = 2;
    render_mesh m = {3, 16, 1, 16, px, py, pz, i0, i1, i2, nn, nn, nn, 0.0f};
    int32_t bbox[4];
    blk->inst_full++;
    if (sc->k->transform(&m, fc->vp, fc, blk->s->sx, blk->s->sy, blk->s->sz, bbox)) {
        blk->inst_clipped++;
        setup_clipped(fc, blk, &si, &m, fc->vp);
        return;
    }
    si.kept = (uint32_t)setup_tri_one(fc, &si.ts, &blk->s->stris, 0, si.rect, blk->s->sx[0],
                                      blk->s->sy[0], blk->s->sz[0], blk->s->sx[1], blk->s->sy[1],
                                      blk->s->sz[1], blk->s->sx[2], blk->s->sy[2], blk->s->sz[2],
                                      0.0f, 0.0f, 0.0f);
    setup_emit_ref(blk, &si);
}

/* One instance of the frame: cull, splat, or mesh (transform, clipper or small-fish kernel,
 * the big-fish loop), its ref appended to the block. */
static void setup_instance(const setup_ctx *sc, render_block *blk, size_t i, const render_mesh *mf,
                           const render_mesh *mr)
{
    const frame_consts *fc = sc->fc;
    const shoal_render_instances *inst = sc->inst;
    uint8_t lod = sc->lod[i];
    if (lod == LOD_CULLED)
        return;
    setup_inst si;
    si.id = inst->id ? inst->id[i] : (uint32_t)i;
    si.ts.id_mode = fc->shade_id;
    si.ts.id_colour = shade_id_colour(si.id);
    si.rect[0] = si.rect[1] = INT32_MAX;
    si.rect[2] = si.rect[3] = INT32_MIN;
    si.kept = 0;
    float mvp[16], rot[9];
    instance_matrix(fc, inst->px[i], inst->py[i], inst->pz[i], inst->vx[i], inst->vy[i],
                    inst->vz[i], inst->scale ? inst->scale[i] : 1.0f, mvp, rot);
    /* a splat the splat kernel left to the mesh path: a point of it needs the clipper */
    if (lod == LOD_SPLAT)
        lod = LOD_REDUCED;
    const render_mesh *m = lod == LOD_REDUCED ? mr : mf;
    blk->tris_submitted += (uint64_t)m->triangle_count;
    if (lod == LOD_REDUCED)
        blk->inst_reduced++;
    else
        blk->inst_full++;
    int32_t *X = blk->s->sx, *Y = blk->s->sy;
    float *Z = blk->s->sz;
    int32_t bbox[4];
    int need_clip = sc->k->transform(m, mvp, fc, X, Y, Z, bbox);
    if (!fc->shade_id) {
        float row;
        if (need_clip) {
            cvert c = clip_vertex(mvp, 0.0f, 0.0f, 0.0f);
            row = c.w > 0.0f ? (c.y / c.w * fc->win_sy + fc->win_oy) / FX_ONE : 0.0f;
        } else {
            row = (float)((bbox[1] >> 1) + (bbox[3] >> 1)) / FX_ONE;
        }
        shade_instance(fc, inst, i, rot, row, &si.ts.sh);
    }
    if (need_clip) {
        blk->inst_clipped++;
        setup_clipped(fc, blk, &si, m, mvp);
        return;
    }
    /* whole fish off the image's samples */
    if (render_sample_first(bbox[0]) >= fc->width || render_sample_last(bbox[2]) < 0 ||
        render_sample_first(bbox[1]) >= fc->height || render_sample_last(bbox[3]) < 0)
        return;
    if ((int64_t)bbox[2] - bbox[0] < SETUP_SMALL_FX &&
        (int64_t)bbox[3] - bbox[1] < SETUP_SMALL_FX) {
        si.kept = sc->k->setup_tris(m, X, Y, Z, &si.ts, fc, &blk->s->stris, 0, si.rect);
    } else {
        for (int t = 0; t < m->triangle_count; t++) {
            int i0 = m->i0[t], i1 = m->i1[t], i2 = m->i2[t];
            si.kept += (uint32_t)setup_tri_one(fc, &si.ts, &blk->s->stris, si.kept, si.rect, X[i0],
                                               Y[i0], Z[i0], X[i1], Y[i1], Z[i1], X[i2], Y[i2],
                                               Z[i2], m->nx[t], m->ny[t], m->nz[t]);
        }
    }
    setup_emit_ref(blk, &si);
}

void setup_scratch_free(setup_scratch *s)
{
    free(s->stri_mem);
    free(s->sx);
    free(s->lane_mem);
    memset(s, 0, sizeof *s);
}

void setup_block(const setup_ctx *sc, render_block *blk, setup_scratch *scr, size_t begin,
                 size_t end)
{
    const frame_consts *fc = sc->fc;
    blk->s = scr;
    blk->arena_words = blk->ref_count = 0;
    blk->tris_submitted = blk->tris_visible = 0;
    blk->inst_full = blk->inst_reduced = blk->inst_splat = blk->inst_clipped = 0;
    blk->failed = 0;
    const render_mesh *mf = sc->mesh_full, *mr = sc->mesh_reduced ? sc->mesh_reduced : mf;
    size_t n = end - begin;
    const size_t max_tris =
        (size_t)(mf->triangle_padded > mr->triangle_padded ? mf->triangle_padded
                                                           : mr->triangle_padded);
    const size_t max_verts =
        (size_t)(mf->vertex_padded > mr->vertex_padded ? mf->vertex_padded : mr->vertex_padded);
    /* the meshes kernel's scratch: triangles of both meshes, their keep bits, the vertices */
    const size_t lanes_w = (size_t)sc->k->lanes;
    const size_t lane_tri_words[2] = {(size_t)mf->triangle_padded * TRI_FIELDS * lanes_w,
                                      (size_t)mr->triangle_padded * TRI_FIELDS * lanes_w};
    const size_t lane_words = lane_tri_words[0] + lane_tri_words[1] + (size_t)mf->triangle_padded +
                              (size_t)mr->triangle_padded + max_verts * 3 * lanes_w;
    if (!setup_grow((void **)&blk->refs, &blk->ref_cap, n ? n : 1, sizeof(rref)) ||
        !setup_grow_scratch(blk, max_verts) ||
        !setup_grow_stris(blk, max_tris * (CLIP_MAX_VERTS - 2) + 64) ||
        !setup_grow_lanes(blk, lane_words)) {
        blk->failed = 1;
        return;
    }
    int32_t *lane_vs = (int32_t *)(blk->s->lane_mem + lane_words - max_verts * 3 * lanes_w);
    if (sc->raw) {
        for (size_t i = begin; i < end && !blk->failed; i++)
            setup_raw(sc, blk, i);
        setup_bin(sc, blk);
        return;
    }
    /* Runs of up to `lanes` instances, lane j = instance i + j: the splats through the ISA's
     * splat kernel, the meshes through its mesh kernel (one call per mesh in the run); a lane
     * neither takes (a splat or mesh that needs the clipper, a fish too big for int32 areas)
     * goes through setup_instance as it would alone. Refs are emitted in instance order. */
    const size_t lanes = (size_t)sc->k->lanes;
    const int min_lanes = lanes >= 8 ? (int)lanes / 4 : 1;
    const render_mesh *meshes[2] = {mf, mr};
    for (size_t i = begin; i < end && !blk->failed;) {
        const int w = (int)(end - i < lanes ? end - i : lanes);
        unsigned splat_bits = 0, mesh_bits[2] = {0, 0};
        for (int j = 0; j < w; j++) {
            uint8_t l = sc->lod[i + (size_t)j];
            if (l == LOD_SPLAT)
                splat_bits |= 1u << j;
            else if (l != LOD_CULLED)
                mesh_bits[l == LOD_FULL ? 0 : 1] |= 1u << j;
        }
        splat_lanes sl;
        sl.done = sl.ref = 0;
        if (splat_bits) {
            sc->k->splats(fc, sc->inst, i, w, &sl);
            sl.done &= splat_bits;
            /* a splat the mesh path must take draws the reduced fish (setup_instance) */
        }
        mesh_lanes ml[2];
        size_t lane_at[2][SPLAT_LANES_MAX];
        for (int k = 0; k < 2; k++) {
            ml[k].fallback = 0;
            /* the kernel's cost is the same for one lane as for all: a mesh that few lanes of
             * the run draw (the exact fish among far ones) goes through setup_instance */
            if (__builtin_popcount(mesh_bits[k]) < min_lanes)
                mesh_bits[k] = 0;
            if (!mesh_bits[k])
                continue;
            ml[k].tri = blk->s->lane_mem + (k ? lane_tri_words[0] : 0);
            ml[k].keep = blk->s->lane_mem + lane_tri_words[0] + lane_tri_words[1] +
                         (k ? (size_t)meshes[0]->triangle_padded : 0);
            sc->k->meshes(fc, sc->inst, i, w, mesh_bits[k], meshes[k], &ml[k], lane_vs);
            setup_emit_lanes(blk, sc->k, &ml[k], meshes[k], mesh_bits[k] & ~ml[k].fallback,
                             lane_at[k]);
        }
        if (blk->failed)
            break;
        for (int j = 0; j < w && !blk->failed; j++) {
            size_t ii = i + (size_t)j;
            uint32_t id = sc->inst->id ? sc->inst->id[ii] : (uint32_t)ii;
            unsigned bit = 1u << j;
            if (sl.done & bit) {
                blk->inst_splat++;
                if (!(sl.ref & bit))
                    continue;
                rref *r = &blk->refs[blk->ref_count++];
                r->px0 = (int16_t)sl.px0[j];
                r->py0 = (int16_t)sl.py0[j];
                r->px1 = (int16_t)sl.px1[j];
                r->py1 = (int16_t)sl.py1[j];
                r->id = id;
                r->kind_count = REF_SPLAT;
                r->a = sl.z[j];
                r->b = sl.colour[j];
                continue;
            }
            int k = (mesh_bits[0] & bit) ? 0 : (mesh_bits[1] & bit) ? 1 : -1;
            if (k < 0 || (ml[k].fallback & bit)) {
                if (sc->lod[ii] != LOD_CULLED)
                    setup_instance(sc, blk, ii, mf, mr);
                continue;
            }
            blk->tris_submitted += (uint64_t)meshes[k]->triangle_count;
            if (k == 0)
                blk->inst_full++;
            else
                blk->inst_reduced++;
            if (ml[k].count[j] > 0) {
                int32_t rect[4] = {ml[k].rect[0][j], ml[k].rect[1][j], ml[k].rect[2][j],
                                   ml[k].rect[3][j]};
                setup_push_ref(blk, id, rect, (uint32_t)ml[k].count[j], lane_at[k][j],
                               ml[k].floor[j]);
            }
        }
        i += (size_t)w;
    }
    if (blk->failed)
        return;
    setup_bin(sc, blk);
}
