/* SPDX-License-Identifier: MIT */
/* Tile rasterization ("consuming the bins"): one worker owns a tile, replays every block's
 * list for that tile in block order (refs in instance order within a block) and draws them
 * with the ISA kernel; splats and the exact 64-bit fallback for huge triangles live here
 * because they are the same for every ISA. Writes only the tile buffers it is given. */
#include "render/render_internal.h"

#include <stdlib.h>

/* Exact 64-bit path for triangles whose edge values leave int32 (edges longer than a few
 * hundred pixels). Same coverage rule and depth formula as the kernels. The rect
 * t->cx0..cx1, cy0..cy1 (window pixels) bounds the samples tried. */
void rast_tri_int64(tile_ctx *t, int32_t x0, int32_t y0, float z0, int32_t x1, int32_t y1,
                    float z1, int32_t x2, int32_t y2, float z2, uint32_t id, uint32_t colour)
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

/* The bins of a tile are scattered over the blocks' arenas (refs of one tile are spread
 * through the instance order), so the replay is a stream of cache misses unless fetched
 * ahead: the tile's (block, ref) list is gathered first, then drawn with the ref headers
 * prefetched RAST_AHEAD_REF ahead and their triangles and vertices RAST_AHEAD_DATA ahead. */
#define RAST_AHEAD_REF 8
#define RAST_AHEAD_DATA 3

void rast_tile(const render_kernels *k, tile_ctx *t, const render_block *blocks,
               size_t block_count, int tile_index, rast_list *list)
{
    size_t n = 0;
    for (size_t b = 0; b < block_count; b++) {
        const render_block *B = &blocks[b];
        uint32_t s = B->tile_start[tile_index], e = B->tile_start[tile_index + 1];
        if (s == e)
            continue;
        if (n + (e - s) > list->cap) {
            size_t cap = list->cap ? list->cap : 1024;
            while (cap < n + (e - s))
                cap *= 2;
            rast_item *q = realloc(list->items, cap * sizeof *q);
            if (!q) {
                list->failed = 1;
                return;
            }
            list->items = q;
            list->cap = cap;
        }
        for (uint32_t j = s; j < e; j++) {
            const rref *r = &B->refs[B->items[j]];
            list->items[n].block = B;
            list->items[n].ref = r;
            n++;
        }
    }
    rast_item *it = list->items;
    for (size_t j = 0; j < n && j < RAST_AHEAD_REF; j++)
        __builtin_prefetch(it[j].ref, 0, 3);
    for (size_t j = 0; j < n && j < RAST_AHEAD_DATA; j++)
        rast_prefetch_ref(it[j].block, it[j].ref);
    for (size_t j = 0; j < n; j++) {
        if (j + RAST_AHEAD_REF < n)
            __builtin_prefetch(it[j + RAST_AHEAD_REF].ref, 0, 3);
        if (j + RAST_AHEAD_DATA < n)
            rast_prefetch_ref(it[j + RAST_AHEAD_DATA].block, it[j + RAST_AHEAD_DATA].ref);
        const render_block *B = it[j].block;
        const rref *r = it[j].ref;
        if (r->kind_count & REF_SPLAT) {
            rast_splat(t, r);
            continue;
        }
        tri_cols c = tri_cols_at(B->arena + r->a, r->kind_count);
        k->rast_tris(t, &c, r->kind_count, r->id);
    }
}
