/* SPDX-License-Identifier: MIT */
/* Tile rasterization ("consuming the bins"): one worker owns a tile, replays every block's
 * list for that tile in block order (refs in instance order within a block) and draws them
 * with the ISA kernel; splats and the exact 64-bit fallback for huge triangles live here
 * because they are the same for every ISA. Writes only the tile buffers it is given. */
#include "render/render_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Exact 64-bit path for triangles whose edge values leave int32 (edges longer than a few
 * hundred pixels). Same coverage rule and depth formula as the kernels. The rect
 * t->cx0..cx1, cy0..cy1 (window pixels) bounds the samples tried. */
void rast_tri_int64(tile_ctx *t, int32_t x0, int32_t y0, float z0, int32_t x1, int32_t y1, float z1,
                    int32_t x2, int32_t y2, float z2, uint32_t id, uint32_t colour)
{
    const int32_t X[3] = {x0, x1, x2}, Y[3] = {y0, y1, y2};
    int64_t area2 = (int64_t)(x1 - x0) * (y2 - y0) - (int64_t)(x2 - x0) * (y1 - y0);
    if (area2 <= 0)
        return;
    int32_t mnx = x0 < x1 ? x0 : x1, mxx = x0 > x1 ? x0 : x1;
    int32_t mny = y0 < y1 ? y0 : y1, mxy = y0 > y1 ? y0 : y1;
    mnx = x2 < mnx ? x2 : mnx;
    mxx = x2 > mxx ? x2 : mxx;
    mny = y2 < mny ? y2 : mny;
    mxy = y2 > mxy ? y2 : mxy;
    int px0 = render_sample_first(mnx), px1 = render_sample_last(mxx);
    int py0 = render_sample_first(mny), py1 = render_sample_last(mxy);
    px0 = px0 < t->cx0 ? t->cx0 : px0;
    py0 = py0 < t->cy0 ? t->cy0 : py0;
    px1 = px1 > t->cx1 ? t->cx1 : px1;
    py1 = py1 > t->cy1 ? t->cy1 : py1;
    if (px0 > px1 || py0 > py1)
        return;
    depth_plane dp = render_depth_plane(x0, y0, z0, x1, y1, z1, x2, y2, z2, area2);
    int64_t e[3], sx[3], sy[3];
    int64_t s0x = (int64_t)px0 * FX_ONE + FX_HALF, s0y = (int64_t)py0 * FX_ONE + FX_HALF;
    for (int k = 0; k < 3; k++) {
        int a = k, b = k == 2 ? 0 : k + 1;
        int64_t dx = (int64_t)X[b] - X[a], dy = (int64_t)Y[b] - Y[a];
        int tl = dy < 0 || (dy == 0 && dx > 0);
        e[k] = dx * (s0y - Y[a]) - dy * (s0x - X[a]) + tl - 1;
        sx[k] = -dy * FX_ONE;
        sy[k] = dx * FX_ONE;
    }
    for (int py = py0; py <= py1; py++) {
        int64_t a0 = e[0], a1 = e[1], a2 = e[2];
        int32_t dy = py * FX_ONE + FX_HALF - y0;
        float *zrow = t->depth + (size_t)(py - t->oy) * TILE_SIZE - t->ox;
        uint32_t *irow = t->idb + (size_t)(py - t->oy) * TILE_SIZE - t->ox;
        uint32_t *crow = t->col + (size_t)(py - t->oy) * TILE_SIZE - t->ox;
        for (int px = px0; px <= px1; px++) {
            if ((a0 | a1 | a2) >= 0) {
                float z = render_depth_at(dp, px * FX_ONE + FX_HALF - x0, dy);
                if (render_depth_pass(z, id, zrow[px], irow[px])) {
                    zrow[px] = z;
                    irow[px] = id;
                    crow[px] = colour;
                    t->pixels_written++;
                }
            }
            a0 += sx[0];
            a1 += sx[1];
            a2 += sx[2];
        }
        e[0] += sy[0];
        e[1] += sy[1];
        e[2] += sy[2];
    }
}

/* A splat: every pixel of its rect (inside the tile) at one depth, depth-tested. */
void rast_splat(tile_ctx *t, const rref *r)
{
    int x0 = r->px0 > t->cx0 ? r->px0 : t->cx0, x1 = r->px1 < t->cx1 ? r->px1 : t->cx1;
    int y0 = r->py0 > t->cy0 ? r->py0 : t->cy0, y1 = r->py1 < t->cy1 ? r->py1 : t->cy1;
    float z;
    memcpy(&z, &r->a, sizeof z);
    for (int y = y0; y <= y1; y++) {
        size_t row = (size_t)(y - t->oy) * TILE_SIZE;
        for (int x = x0; x <= x1; x++) {
            size_t off = row + (size_t)(x - t->ox);
            if (render_depth_pass(z, r->id, t->depth[off], t->idb[off])) {
                t->depth[off] = z;
                t->idb[off] = r->id;
                t->col[off] = r->b;
                t->pixels_written++;
            }
        }
    }
}

/* Prefetch the lines [p, p + bytes). */
static inline void rast_prefetch(const void *p, size_t bytes)
{
    const char *c = (const char *)((uintptr_t)p & ~(uintptr_t)63);
    const char *e = (const char *)p + bytes;
    for (; c < e; c += 64)
        __builtin_prefetch(c, 0, 3);
}

static inline void rast_prefetch_ref(const render_block *B, const rref *r)
{
    if (r->kind_count & REF_SPLAT)
        return;
    rast_prefetch(B->arena + r->a, (size_t)r->kind_count * TRI_FIELDS * sizeof(uint32_t));
}

/* ---- occlusion ----------------------------------------------------------------------------
 * With many fish the screen is covered many times over, and most refs of a tile draw nothing.
 * The tile pass therefore draws its refs near to far (by their smallest vertex depth, in
 * HZ_BUCKETS buckets, stably) and keeps the largest depth of each 8x8 block of the tile: a ref
 * whose every fragment would be deeper than every pixel of the blocks it overlaps is skipped.
 * Both leave the image as it was: the depth test with its id tie rule does not depend on the
 * order of fish (a fish is one ref per tile, its triangles stay in their order), and a skipped
 * ref could not have passed a depth test. "Every fragment deeper" is decided on a floor below
 * the depth any covered sample can get from render_depth_at, rounding included
 * (ref_depth_floor); a fragment equal to the stored depth could still win on its id, so the
 * floor must be strictly deeper. */
#define HZ_BLOCK 8
#define HZ_PER_ROW (TILE_SIZE / HZ_BLOCK)
#define HZ_BUCKETS 256

typedef struct hz_state {
    float max[HZ_PER_ROW * HZ_PER_ROW];
    uint64_t dirty; /* blocks written since their max was taken */
} hz_state;

/* The largest depth of block b over its pixels inside the image (rows past the image's
 * bottom are not cleared and hold another tile's depths). */
static float hz_block_max(const tile_ctx *t, int b)
{
    int x0 = (b % HZ_PER_ROW) * HZ_BLOCK, y0 = (b / HZ_PER_ROW) * HZ_BLOCK;
    int x1 = x0 + HZ_BLOCK - 1 < t->cx1 - t->ox ? x0 + HZ_BLOCK - 1 : t->cx1 - t->ox;
    int y1 = y0 + HZ_BLOCK - 1 < t->cy1 - t->oy ? y0 + HZ_BLOCK - 1 : t->cy1 - t->oy;
#if defined(__SSE2__)
    /* a whole block: 8 rows of two 4-wide maxima (the buffer holds no NaN: a NaN depth
     * passes no test, so the order of the maxima does not matter) */
    if (x1 - x0 == HZ_BLOCK - 1 && y1 - y0 == HZ_BLOCK - 1) {
        const float *p = t->depth + (size_t)y0 * TILE_SIZE + (size_t)x0;
        __m128 m = _mm_max_ps(_mm_load_ps(p), _mm_load_ps(p + 4));
        for (int y = 1; y < HZ_BLOCK; y++)
            m = _mm_max_ps(m, _mm_max_ps(_mm_load_ps(p + (size_t)y * TILE_SIZE),
                                         _mm_load_ps(p + (size_t)y * TILE_SIZE + 4)));
        m = _mm_max_ps(m, _mm_shuffle_ps(m, m, _MM_SHUFFLE(1, 0, 3, 2)));
        m = _mm_max_ps(m, _mm_shuffle_ps(m, m, _MM_SHUFFLE(2, 3, 0, 1)));
        return _mm_cvtss_f32(m);
    }
#endif
    float m = t->depth[(size_t)y0 * TILE_SIZE + (size_t)x0];
    for (int y = y0; y <= y1; y++)
        for (int x = x0; x <= x1; x++) {
            float v = t->depth[(size_t)y * TILE_SIZE + (size_t)x];
            m = v > m ? v : m; /* a NaN pixel passes nothing; m stays NaN if the first is */
        }
    return m;
}

/* The blocks of the tile that rect r overlaps (inside the image); 0 when none. */
static int hz_blocks(const tile_ctx *t, const rref *r, int *bx0, int *by0, int *bx1, int *by1)
{
    int x0 = r->px0 > t->cx0 ? r->px0 : t->cx0, x1 = r->px1 < t->cx1 ? r->px1 : t->cx1;
    int y0 = r->py0 > t->cy0 ? r->py0 : t->cy0, y1 = r->py1 < t->cy1 ? r->py1 : t->cy1;
    if (x0 > x1 || y0 > y1)
        return 0;
    *bx0 = (x0 - t->ox) / HZ_BLOCK;
    *bx1 = (x1 - t->ox) / HZ_BLOCK;
    *by0 = (y0 - t->oy) / HZ_BLOCK;
    *by1 = (y1 - t->oy) / HZ_BLOCK;
    return 1;
}

/* Is every pixel of the blocks r overlaps nearer than `floor`? (Takes the blocks' maxima
 * again where they were written.) */
static int hz_hidden(hz_state *h, const tile_ctx *t, const rref *r, float floor)
{
    int bx0, by0, bx1, by1;
    if (!hz_blocks(t, r, &bx0, &by0, &bx1, &by1))
        return 0;
    for (int by = by0; by <= by1; by++)
        for (int bx = bx0; bx <= bx1; bx++) {
            int b = by * HZ_PER_ROW + bx;
            if (h->dirty >> b & 1) {
                h->max[b] = hz_block_max(t, b);
                h->dirty &= ~(1ull << b);
            }
            if (!(floor > h->max[b]))
                return 0;
        }
    return 1;
}

static void hz_written(hz_state *h, const tile_ctx *t, const rref *r)
{
    int bx0, by0, bx1, by1;
    if (!hz_blocks(t, r, &bx0, &by0, &bx1, &by1))
        return;
    for (int by = by0; by <= by1; by++)
        for (int bx = bx0; bx <= bx1; bx++)
            h->dirty |= 1ull << (by * HZ_PER_ROW + bx);
}

/* A depth the ref writes nothing below: its floor (mesh, setup_depth_floor), its own (splat). */
static inline float ref_zmin(const rref *r)
{
    float z;
    memcpy(&z, (r->kind_count & REF_SPLAT) ? &r->a : &r->b, sizeof z);
    return z;
}

/* Order the gathered items near to far into list->sorted: a stable counting sort on
 * HZ_BUCKETS buckets of the ref's smallest depth over the tile's depth range. */
static const rast_item *rast_order(rast_list *list, size_t n)
{
    float lo = INFINITY, hi = -INFINITY;
    for (size_t j = 0; j < n; j++) {
        float z = ref_zmin(list->items[j].ref);
        lo = z < lo ? z : lo;
        hi = z > hi ? z : hi;
    }
    if (!(hi > lo)) /* one depth, or NaN: keep the block order */
        return list->items;
    uint32_t count[HZ_BUCKETS + 1] = {0};
    float k = (float)HZ_BUCKETS / (hi - lo);
    for (size_t j = 0; j < n; j++) {
        float q = (ref_zmin(list->items[j].ref) - lo) * k;
        int b = q >= 0.0f ? (q < (float)(HZ_BUCKETS - 1) ? (int)q : HZ_BUCKETS - 1) : 0;
        list->bucket[j] = (uint16_t)b;
        count[b + 1]++;
    }
    for (int b = 0; b < HZ_BUCKETS; b++)
        count[b + 1] += count[b];
    for (size_t j = 0; j < n; j++)
        list->sorted[count[list->bucket[j]]++] = list->items[j];
    return list->sorted;
}

/* The bins of a tile are scattered over the blocks' arenas (refs of one tile are spread
 * through the instance order), so the replay is a stream of cache misses unless fetched
 * ahead: the tile's (block, ref) list is gathered first, ordered, then drawn with the ref
 * headers prefetched RAST_AHEAD_REF ahead and their triangles RAST_AHEAD_DATA ahead. */
#define RAST_AHEAD_REF 8
#define RAST_AHEAD_DATA 3

static int rast_list_grow(rast_list *list, size_t need)
{
    if (need <= list->cap)
        return 1;
    size_t cap = list->cap ? list->cap : 1024;
    while (cap < need)
        cap *= 2;
    rast_item *q = realloc(list->items, cap * sizeof *q);
    if (!q)
        return 0;
    list->items = q;
    q = realloc(list->sorted, cap * sizeof *q);
    if (!q)
        return 0;
    list->sorted = q;
    uint16_t *bk = realloc(list->bucket, cap * sizeof *bk);
    if (!bk)
        return 0;
    list->bucket = bk;
    list->cap = cap;
    return 1;
}

void rast_tile(const render_kernels *k, tile_ctx *t, const render_block *blocks, size_t block_count,
               int tile_index, rast_list *list)
{
    size_t n = 0;
    for (size_t b = 0; b < block_count; b++) {
        const render_block *B = &blocks[b];
        uint32_t s = B->tile_start[tile_index], e = B->tile_start[tile_index + 1];
        if (s == e)
            continue;
        if (!rast_list_grow(list, n + (e - s))) {
            list->failed = 1;
            return;
        }
        for (uint32_t j = s; j < e; j++) {
            const rref *r = &B->items[j];
            list->items[n].block = B;
            list->items[n].ref = r;
            n++;
        }
    }
    const rast_item *it = t->occlusion ? rast_order(list, n) : list->items;
    hz_state h;
    for (int b = 0; b < HZ_PER_ROW * HZ_PER_ROW; b++)
        h.max[b] = 1.0f; /* the clear depth */
    h.dirty = 0;
    for (size_t j = 0; j < n && j < RAST_AHEAD_REF; j++)
        __builtin_prefetch(it[j].ref, 0, 3);
    /* Hidden now means hidden later (depths only get nearer), so a ref hidden when its data
     * would be prefetched is not fetched at all. */
    for (size_t j = 0; j < n && j < RAST_AHEAD_DATA; j++)
        rast_prefetch_ref(it[j].block, it[j].ref);
    for (size_t j = 0; j < n; j++) {
        if (j + RAST_AHEAD_REF < n)
            __builtin_prefetch(it[j + RAST_AHEAD_REF].ref, 0, 3);
        if (j + RAST_AHEAD_DATA < n) {
            const rref *q = it[j + RAST_AHEAD_DATA].ref;
            /* a splat has no data to fetch: no occlusion test for it here */
            if (!(q->kind_count & REF_SPLAT) &&
                (!t->occlusion || !hz_hidden(&h, t, q, ref_zmin(q))))
                rast_prefetch_ref(it[j + RAST_AHEAD_DATA].block, q);
        }
        const rref *r = it[j].ref;
        if (t->occlusion && hz_hidden(&h, t, r, ref_zmin(r))) {
            t->refs_hidden++;
            continue;
        }
        if (r->kind_count & REF_SPLAT) {
            rast_splat(t, r);
        } else {
            tri_cols c = tri_cols_at(it[j].block->arena + r->a, r->kind_count);
            k->rast_tris(t, &c, r->kind_count, r->id);
        }
        if (t->occlusion)
            hz_written(&h, t, r);
    }
}
