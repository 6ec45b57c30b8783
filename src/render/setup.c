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

/* The mesh levels: 0 the exact fish, 1 the reduced, 2 the coarse. */
enum { SETUP_LEVELS = 3 };
static inline int setup_level(uint8_t lod)
{
    return lod == LOD_FULL ? 0 : lod == LOD_COARSE ? 2 : 1;
}
static inline void setup_count_level(render_block *blk, int level)
{
    if (level == 0)
        blk->inst_full++;
    else if (level == 1)
        blk->inst_reduced++;
    else
        blk->inst_coarse++;
}

/* One instance of the frame: cull, splat, or mesh (transform, clipper or small-fish kernel,
 * the big-fish loop), its ref appended to the block. */
static void setup_instance(const setup_ctx *sc, render_block *blk, size_t i,
                           const render_mesh *const *meshes)
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
    const int level = setup_level(lod);
    const render_mesh *m = meshes[level];
    blk->tris_submitted += (uint64_t)m->triangle_count;
    setup_count_level(blk, level);
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
    free(s->order);
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
    blk->inst_coarse = 0;
    blk->failed = 0;
    const render_mesh *mf = sc->mesh_full, *mr = sc->mesh_reduced ? sc->mesh_reduced : mf;
    const render_mesh *mc = sc->mesh_coarse ? sc->mesh_coarse : mr;
    const render_mesh *const meshes[SETUP_LEVELS] = {mf, mr, mc};
    size_t n = end - begin;
    /* the meshes kernel's scratch: per level its triangles and keep bits, then the vertices */
    const size_t lanes_w = (size_t)sc->k->lanes;
    size_t max_tris = 0, max_verts = 0, lane_off[SETUP_LEVELS][2], lane_words = 0;
    for (int k = 0; k < SETUP_LEVELS; k++) {
        size_t tp = (size_t)meshes[k]->triangle_padded, vp = (size_t)meshes[k]->vertex_padded;
        max_tris = tp > max_tris ? tp : max_tris;
        max_verts = vp > max_verts ? vp : max_verts;
        lane_off[k][0] = lane_words;
        lane_off[k][1] = lane_words + tp * TRI_FIELDS * lanes_w;
        lane_words += tp * TRI_FIELDS * lanes_w + tp;
    }
    lane_words += max_verts * 3 * lanes_w;
    if (!setup_grow((void **)&blk->refs, &blk->ref_cap, n ? n : 1, sizeof(rref)) ||
        !setup_grow((void **)&scr->order, &scr->order_cap, n ? n : 1, sizeof(uint32_t)) ||
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
    /* The block's instances by kind, each kind in instance order (a stable counting sort):
     * splats, then the coarse, reduced and exact fish. Each kind goes through its ISA
     * kernel in runs of `lanes` (every lane of a run does the same work: the splat kernel,
     * or the mesh kernel on one mesh); a lane a kernel does not take (a splat or fish that
     * needs the clipper, a fish too big for int32 areas) goes through setup_instance as it
     * would alone. Refs come out in this order, not in instance order: the image does not
     * depend on the order of fish (the depth test's id tie rule), and this one is a function
     * of the instances alone. */
    enum { KIND_SPLAT, KIND_COARSE, KIND_REDUCED, KIND_FULL, KINDS };
    uint32_t *order = blk->s->order;
    size_t kstart[KINDS + 1] = {0};
    for (size_t i = begin; i < end; i++) {
        uint8_t l = sc->lod[i];
        if (l != LOD_CULLED)
            kstart[(l == LOD_SPLAT ? KIND_SPLAT : 3 - setup_level(l)) + 1]++;
    }
    for (int k = 0; k < KINDS; k++)
        kstart[k + 1] += kstart[k];
    {
        size_t fill[KINDS];
        memcpy(fill, kstart, sizeof fill);
        for (size_t i = begin; i < end; i++) {
            uint8_t l = sc->lod[i];
            if (l != LOD_CULLED)
                order[fill[l == LOD_SPLAT ? KIND_SPLAT : 3 - setup_level(l)]++] = (uint32_t)i;
        }
    }
    const size_t lanes = (size_t)sc->k->lanes;
    const shoal_render_instances *in = sc->inst;
    for (int kind = 0; kind < KINDS && !blk->failed; kind++) {
        const int level = kind == KIND_SPLAT ? -1 : 3 - kind;
        for (size_t o = kstart[kind]; o < kstart[kind + 1] && !blk->failed;) {
            const int w = (int)(kstart[kind + 1] - o < lanes ? kstart[kind + 1] - o : lanes);
            /* the run's instances side by side: lane j = instance order[o + j] */
            _Alignas(64) float c[6][SPLAT_LANES_MAX], csc[SPLAT_LANES_MAX];
            _Alignas(64) uint32_t cid[SPLAT_LANES_MAX], ccol[SPLAT_LANES_MAX];
            uint8_t cgr[SPLAT_LANES_MAX];
            shoal_render_instances run;
            memset(&run, 0, sizeof run);
            run.count = (size_t)w;
            for (int j = 0; j < w; j++) {
                size_t ii = order[o + (size_t)j];
                c[0][j] = in->px[ii];
                c[1][j] = in->py[ii];
                c[2][j] = in->pz[ii];
                c[3][j] = in->vx[ii];
                c[4][j] = in->vy[ii];
                c[5][j] = in->vz[ii];
                cid[j] = in->id ? in->id[ii] : (uint32_t)ii;
                if (in->scale)
                    csc[j] = in->scale[ii];
                if (in->color)
                    ccol[j] = in->color[ii];
                if (in->group)
                    cgr[j] = in->group[ii];
            }
            run.px = c[0], run.py = c[1], run.pz = c[2];
            run.vx = c[3], run.vy = c[4], run.vz = c[5];
            run.id = cid;
            run.scale = in->scale ? csc : NULL;
            run.color = in->color ? ccol : NULL;
            run.group = in->group ? cgr : NULL;
            if (level < 0) {
                splat_lanes sl;
                sc->k->splats(fc, &run, 0, w, &sl);
                for (int j = 0; j < w && !blk->failed; j++) {
                    unsigned bit = 1u << j;
                    if (!(sl.done & bit)) { /* the mesh path clips it (the reduced fish) */
                        setup_instance(sc, blk, order[o + (size_t)j], meshes);
                        continue;
                    }
                    blk->inst_splat++;
                    if (!(sl.ref & bit))
                        continue;
                    rref *r = &blk->refs[blk->ref_count++];
                    r->px0 = (int16_t)sl.px0[j];
                    r->py0 = (int16_t)sl.py0[j];
                    r->px1 = (int16_t)sl.px1[j];
                    r->py1 = (int16_t)sl.py1[j];
                    r->id = cid[j];
                    r->kind_count = REF_SPLAT;
                    r->a = sl.z[j];
                    r->b = sl.colour[j];
                }
            } else {
                const render_mesh *m = meshes[level];
                const unsigned all = w >= 32 ? ~0u : (1u << w) - 1u;
                mesh_lanes ml;
                size_t at[SPLAT_LANES_MAX];
                ml.tri = blk->s->lane_mem + lane_off[level][0];
                ml.keep = blk->s->lane_mem + lane_off[level][1];
                sc->k->meshes(fc, &run, 0, w, all, m, &ml, lane_vs);
                setup_emit_lanes(blk, sc->k, &ml, m, all & ~ml.fallback, at);
                for (int j = 0; j < w && !blk->failed; j++) {
                    if (ml.fallback >> j & 1u) {
                        setup_instance(sc, blk, order[o + (size_t)j], meshes);
                        continue;
                    }
                    blk->tris_submitted += (uint64_t)m->triangle_count;
                    setup_count_level(blk, level);
                    if (ml.count[j] > 0) {
                        int32_t rect[4] = {ml.rect[0][j], ml.rect[1][j], ml.rect[2][j],
                                           ml.rect[3][j]};
                        setup_push_ref(blk, cid[j], rect, (uint32_t)ml.count[j], at[j],
                                       ml.floor[j]);
                    }
                }
            }
            o += (size_t)w;
        }
    }
    if (blk->failed)
        return;
    setup_bin(sc, blk);
}
