/* SPDX-License-Identifier: MIT */
/* The renderer object and the order of a frame: instance pass (cull, LOD) -> setup pass over
 * blocks of instances (transform, clip, triangle setup, per-block bins) -> tile pass (one
 * owner per tile replays the bins in block order, rasterizes, shades, writes its pixels to
 * the framebuffer). Owns the framebuffer, the bins and the per-thread tile buffers; threads
 * come only from core/parallel. */
#include "render/render_internal.h"
#include "core/check.h"
#include "render/render_config.h"

#include "core/alloc.h"
#include "core/cpu.h"
#include "core/parallel.h"
#include "core/profile.h"
#include "core/timer.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Per-thread tile buffers and counters, padded to their own cache lines. */
typedef struct render_worker {
    float *depth;
    uint32_t *idb, *col;
    rast_list list;
    setup_scratch scratch;
    uint64_t tris_rasterized, pixels_written, refs_hidden, resolve_ns;
    /* per stage (RS_*): this thread's busy time in the frame and its first and last moment
     * of work (the profiler's busy time and trace span) */
    uint64_t busy_ns[4], first_ns[4], last_ns[4];
    float max_s2;
    char pad[64];
} render_worker;

struct shoal_renderer {
    shoal_render_desc desc;
    render_mesh mesh_full, mesh_reduced, mesh_coarse;
    int have_reduced, have_coarse;
    uint64_t frames; /* frames drawn: the trace's frame numbers */
    const render_kernels *k;
    int width, height;
    uint32_t *fb;
    float speed_scale; /* > 0: colour by speed against this, not the frame's largest */
    /* shoal_render_set_speed_hook: the speed the frame colours by, from the frame's own */
    float (*speed_hook)(void *ctx, float frame_speed);
    void *speed_ctx;
    int sparse;       /* shoal_render_sparse: 0, or how tiles without triangles are left */
    uint8_t *drawn;   /* per tile of the last frame: it had triangles (sparse) */
    size_t drawn_cap; /* tiles the buffer has room for */
    int tiles_x, tiles_y;
    float *zfb;     /* with shoal_render_keep_depth: each pixel's depth (1: not drawn) */
    uint32_t *idfb; /* and the instance id that won it (0 where not drawn) */
    uint32_t *bg_row;
    uint8_t *lod;
    size_t lod_cap;
    render_block *blocks;
    size_t block_cap, block_count, block_size;
    uint64_t *tile_order; /* the tile pass's order: refs (high 32 bits, inverted), tile index */
    size_t tile_order_cap;
    render_worker *workers;
    int worker_count;
    shoal_render_stats stats;
    float *rows_soa; /* shoal_render_frame_rows: the columns of the rows (6 x rows_cap) */
    size_t rows_cap;
    prof *prof;         /* where the stages record: prof_own or one lent */
    prof *prof_own;     /* this renderer's own profile */
    render_world world; /* shoal_render_set_world (world_draw.c) */
};

render_world *render_get_world(shoal_renderer *r) { return &r->world; }

SHOAL_API shoal_render_desc shoal_render_desc_default(void)
{
    shoal_render_desc d;
    memset(&d, 0, sizeof d);
    d.width = 1280;
    d.height = 720;
    d.shade = SHOAL_SHADE_LIT;
    d.lod = 1;
    d.occlusion = 1;
    d.fish_length = SHOAL_FISH_LENGTH;
    d.isa = SHOAL_ISA_AUTO;
    d.thread_count = 0;
    d.mesh = NULL;
    d.lod_mesh = NULL;
    d.lod_splat_px = 4.0f;
    d.lod_reduced_px = 26.0f;
    d.lod_coarse_px = 12.0f;
    d.fog_start = 0.0f;
    d.fog_end = 0.0f;
    d.fog_max = 0.85f;
    return d;
}

/* ---- create / destroy ------------------------------------------------------------------- */

static shoal_status render_alloc_size(shoal_renderer *r, int width, int height, shoal_error *err)
{
    uint32_t *fb =
        alloc_array((size_t)width * (size_t)height, sizeof(uint32_t), "framebuffer", err);
    uint32_t *bg = alloc_array((size_t)height, sizeof(uint32_t), "background rows", err);
    if (!fb || !bg) {
        alloc_free(fb);
        alloc_free(bg);
        return SHOAL_ERR_NOMEM;
    }
    if (r->zfb) {
        /* the kept depth follows the size; on failure both stay as they were */
        float *z = alloc_array((size_t)width * (size_t)height, sizeof(float), "depth", err);
        uint32_t *id = alloc_array((size_t)width * (size_t)height, sizeof(uint32_t), "ids", err);
        if (!z || !id) {
            alloc_free(z);
            alloc_free(id);
            alloc_free(fb);
            alloc_free(bg);
            return SHOAL_ERR_NOMEM;
        }
        alloc_free(r->zfb);
        alloc_free(r->idfb);
        r->zfb = z;
        r->idfb = id;
        for (size_t i = 0; i < (size_t)width * (size_t)height; i++) {
            z[i] = 1.0f;
            id[i] = 0;
        }
    }
    alloc_free(r->fb);
    alloc_free(r->bg_row);
    r->fb = fb;
    r->bg_row = bg;
    r->width = width;
    r->height = height;
    shade_background(r->bg_row, height, r->desc.shade == SHOAL_SHADE_ID);
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++)
            r->fb[(size_t)y * width + x] = r->bg_row[y];
    return SHOAL_OK;
}

static shoal_status render_check_size(int width, int height, shoal_error *err)
{
    if (width < 1 || height < 1 || width > SHOAL_RENDER_MAX_SIZE || height > SHOAL_RENDER_MAX_SIZE)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "render: image size %dx%d is outside 1..%d per side", width, height,
                               SHOAL_RENDER_MAX_SIZE);
    return SHOAL_OK;
}

SHOAL_API shoal_status shoal_render_create(const shoal_render_desc *desc, shoal_renderer **out,
                                           shoal_error *err)
{
    CHECK_ARG(out, "out", err);
    *out = NULL;
    CHECK_ARG(desc, "desc", err);
    shoal_status st = render_check_size(desc->width, desc->height, err);
    if (st)
        return st;
    if (desc->shade != SHOAL_SHADE_LIT && desc->shade != SHOAL_SHADE_ID)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "render: unknown shade mode %d",
                               (int)desc->shade);
    if (!(desc->fish_length > 0.0f) || !isfinite(desc->fish_length))
        return shoal_error_set(err, SHOAL_ERR_INPUT, "render: fish length %g must be > 0",
                               (double)desc->fish_length);
    if (!desc->mesh)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "render: no fish mesh (shoal_render_desc.mesh is NULL; "
                               "shoal_mesh_load_asset(\"fish.obj\") loads shoal's own)");
    char why[160];
    if (parallel_check_threads(desc->thread_count, why, sizeof why))
        return shoal_error_set(err, SHOAL_ERR_INPUT, "render: %s", why);
    if (!(desc->lod_splat_px >= 0.0f) || !(desc->lod_reduced_px >= desc->lod_splat_px) ||
        !isfinite(desc->lod_reduced_px))
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "render: LOD thresholds need 0 <= splat (%g) <= reduced (%g)",
                               (double)desc->lod_splat_px, (double)desc->lod_reduced_px);
    /* the coarse threshold counts only with a coarse mesh (a desc of 0.1 sets none) */
    if (desc->lod_coarse_mesh && (!(desc->lod_coarse_px >= desc->lod_splat_px) ||
                                  !(desc->lod_reduced_px >= desc->lod_coarse_px)))
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "render: LOD thresholds need splat (%g) <= coarse (%g) <= "
                               "reduced (%g)",
                               (double)desc->lod_splat_px, (double)desc->lod_coarse_px,
                               (double)desc->lod_reduced_px);
    if (!(desc->fog_max >= 0.0f && desc->fog_max <= 1.0f) || !isfinite(desc->fog_start) ||
        !isfinite(desc->fog_end))
        return shoal_error_set(err, SHOAL_ERR_INPUT, "render: fog_max %g outside [0, 1]",
                               (double)desc->fog_max);
    shoal_isa isa;
    st = shoal_isa_resolve(desc->isa, &isa, err);
    if (st)
        return st;
    const render_kernels *k = &render_kernels_scalar;
#if SHOAL_RENDER_HAVE_X86_SIMD
    if (isa == SHOAL_ISA_AVX512) {
        if (!cpu_has_avx512())
            return shoal_error_set(err, SHOAL_ERR_UNSUPPORTED, "render: this CPU lacks AVX-512");
        k = &render_kernels_avx512;
    } else if (isa == SHOAL_ISA_AVX2) {
        if (!cpu_has_avx2())
            return shoal_error_set(err, SHOAL_ERR_UNSUPPORTED, "render: this CPU lacks AVX2");
        k = &render_kernels_avx2;
    }
#else
    if (isa == SHOAL_ISA_AVX512 || isa == SHOAL_ISA_AVX2)
        return shoal_error_set(err, SHOAL_ERR_UNSUPPORTED,
                               "render: built without x86 SIMD kernels");
#endif
#if SHOAL_RENDER_HAVE_NEON
    if (isa == SHOAL_ISA_NEON) {
        if (!cpu_has_neon())
            return shoal_error_set(err, SHOAL_ERR_UNSUPPORTED, "render: NEON is disabled");
        k = &render_kernels_neon;
    }
#else
    if (isa == SHOAL_ISA_NEON)
        return shoal_error_set(err, SHOAL_ERR_UNSUPPORTED, "render: built without NEON kernels");
#endif
    shoal_renderer *r = calloc(1, sizeof *r);
    if (!r)
        return shoal_error_set(err, SHOAL_ERR_NOMEM, "render: out of memory");
    r->desc = *desc;
    r->desc.mesh = NULL; /* borrowed for this call only: the renderer keeps its own form */
    r->desc.lod_mesh = NULL;
    r->desc.lod_coarse_mesh = NULL;
    r->k = k;
    st = prof_create(&r->prof_own, err);
    r->prof = r->prof_own;
    if (!st)
        st = mesh_prepare(desc->mesh, "render: fish mesh", &r->mesh_full, err);
    if (!st && desc->lod_mesh && desc->shade == SHOAL_SHADE_LIT && desc->lod) {
        st = mesh_prepare(desc->lod_mesh, "render: LOD mesh", &r->mesh_reduced, err);
        r->have_reduced = st == SHOAL_OK;
    }
    if (!st && desc->lod_coarse_mesh && desc->shade == SHOAL_SHADE_LIT && desc->lod) {
        st = mesh_prepare(desc->lod_coarse_mesh, "render: coarse LOD mesh", &r->mesh_coarse, err);
        r->have_coarse = st == SHOAL_OK;
    }
    if (!st)
        st = render_alloc_size(r, desc->width, desc->height, err);
    if (st) {
        shoal_render_destroy(r);
        return st;
    }
    r->stats.isa = k->name;
    *out = r;
    return SHOAL_OK;
}

static void render_free_blocks(shoal_renderer *r)
{
    for (size_t b = 0; b < r->block_cap; b++) {
        render_block *B = &r->blocks[b];
        free(B->arena);
        free(B->refs);
        free(B->tile_start);
        free(B->items);
    }
    alloc_free(r->blocks);
    free(r->tile_order);
    r->blocks = NULL;
    r->block_cap = 0;
}

SHOAL_API void shoal_render_destroy(shoal_renderer *r)
{
    if (!r)
        return;
    mesh_release(&r->mesh_full);
    mesh_release(&r->mesh_reduced);
    mesh_release(&r->mesh_coarse);
    prof_destroy(r->prof_own);
    alloc_free(r->fb);
    alloc_free(r->zfb);
    alloc_free(r->idfb);
    free(r->drawn);
    alloc_free(r->bg_row);
    free(r->lod);
    render_world_free(&r->world);
    render_free_blocks(r);
    for (int i = 0; i < r->worker_count; i++) {
        alloc_free(r->workers[i].depth);
        alloc_free(r->workers[i].idb);
        alloc_free(r->workers[i].col);
        free(r->workers[i].list.items);
        free(r->workers[i].list.sorted);
        free(r->workers[i].list.bucket);
        setup_scratch_free(&r->workers[i].scratch);
    }
    alloc_free(r->workers);
    free(r->rows_soa);
    free(r);
}

SHOAL_API shoal_status shoal_render_set_size(shoal_renderer *r, int width, int height,
                                             shoal_error *err)
{
    CHECK_ARG(r, "r", err);
    shoal_status st = render_check_size(width, height, err);
    if (st)
        return st;
    if (width == r->width && height == r->height)
        return SHOAL_OK;
    return render_alloc_size(r, width, height, err);
}

SHOAL_API void shoal_render_set_speed_scale(shoal_renderer *r, float max_speed)
{
    if (!r)
        return;
    r->speed_scale = max_speed > 0.0f && max_speed == max_speed ? max_speed : 0.0f;
}

SHOAL_API void shoal_render_set_speed_hook(shoal_renderer *r,
                                           float (*hook)(void *ctx, float frame_speed), void *ctx)
{
    r->speed_hook = hook;
    r->speed_ctx = ctx;
}

SHOAL_API shoal_status shoal_render_sparse(shoal_renderer *r, int mode, shoal_error *err)
{
    if (mode < 0 || mode > SHOAL_RENDER_SPARSE_SKIP)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "render: sparse mode %d (0, 1 or 2)", mode);
    r->sparse = mode;
    return SHOAL_OK;
}

SHOAL_API const uint8_t *shoal_render_drawn_tiles(const shoal_renderer *r, int *tiles_x,
                                                  int *tiles_y, int *tile_size)
{
    *tiles_x = r->sparse ? r->tiles_x : 0;
    *tiles_y = r->sparse ? r->tiles_y : 0;
    *tile_size = TILE_SIZE;
    return r->sparse && r->frames ? r->drawn : NULL;
}

SHOAL_API shoal_status shoal_render_keep_depth(shoal_renderer *r, int on, shoal_error *err)
{
    CHECK_ARG(r, "r", err);
    if (!on) {
        alloc_free(r->zfb);
        alloc_free(r->idfb);
        r->zfb = NULL;
        r->idfb = NULL;
        return SHOAL_OK;
    }
    if (r->zfb)
        return SHOAL_OK;
    size_t n = (size_t)r->width * (size_t)r->height;
    float *z = alloc_array(n, sizeof(float), "depth", err);
    uint32_t *id = alloc_array(n, sizeof(uint32_t), "ids", err);
    if (!z || !id) {
        alloc_free(z);
        alloc_free(id);
        return SHOAL_ERR_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        z[i] = 1.0f;
        id[i] = 0;
    }
    r->zfb = z;
    r->idfb = id;
    return SHOAL_OK;
}

SHOAL_API int shoal_render_depth(const shoal_renderer *r, const float **depth, const uint32_t **ids)
{
    if (!depth || !ids)
        return 0;
    if (!r) {
        *depth = NULL;
        *ids = NULL;
        return 0;
    }
    *depth = r->zfb;
    *ids = r->idfb;
    return r->zfb != NULL;
}

SHOAL_API shoal_framebuffer shoal_render_framebuffer(const shoal_renderer *r)
{
    if (!r) {
        shoal_framebuffer none = {0, 0, 0, NULL};
        return none;
    }
    shoal_framebuffer fb = {r->width, r->height, r->width, r->fb};
    return fb;
}

SHOAL_API shoal_render_stats shoal_render_get_stats(const shoal_renderer *r)
{
    if (!r) {
        shoal_render_stats none;
        memset(&none, 0, sizeof none);
        return none;
    }
    return r->stats;
}

SHOAL_API const char *shoal_render_isa_name(const shoal_renderer *r)
{
    if (!r)
        return "none";
    return r->k->name;
}

SHOAL_API uint64_t shoal_render_hash(shoal_framebuffer fb)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (int y = 0; y < fb.height; y++) {
        const uint32_t *row = fb.argb + (size_t)y * (size_t)fb.stride_px;
        for (int x = 0; x < fb.width; x++) {
            uint32_t v = row[x];
            for (int b = 0; b < 4; b++) {
                h ^= (v >> (8 * b)) & 255u;
                h *= 0x100000001b3ull;
            }
        }
    }
    return h;
}

/* ---- the frame ---------------------------------------------------------------------------- */

static shoal_status render_grow_workers(shoal_renderer *r, int count, shoal_error *err)
{
    if (count <= r->worker_count)
        return SHOAL_OK;
    render_worker *w = alloc_array_zero((size_t)count, sizeof *w, "render workers", err);
    if (!w)
        return SHOAL_ERR_NOMEM;
    if (r->workers)
        memcpy(w, r->workers, (size_t)r->worker_count * sizeof *w);
    for (int i = r->worker_count; i < count; i++) {
        w[i].depth = alloc_array_zero(TILE_BUF_LEN, sizeof(float), "tile depth", err);
        w[i].idb = alloc_array_zero(TILE_BUF_LEN, sizeof(uint32_t), "tile ids", err);
        w[i].col = alloc_array_zero(TILE_BUF_LEN, sizeof(uint32_t), "tile colours", err);
        if (!w[i].depth || !w[i].idb || !w[i].col) {
            for (int j = r->worker_count; j <= i; j++) {
                alloc_free(w[j].depth);
                alloc_free(w[j].idb);
                alloc_free(w[j].col);
            }
            alloc_free(w);
            return SHOAL_ERR_NOMEM;
        }
    }
    alloc_free(r->workers);
    r->workers = w;
    r->worker_count = count;
    return SHOAL_OK;
}

/* Blocks are fixed by N alone (never by the thread count): at most 256 of at least 256.
 * 256 (was 64) so that 16 threads claiming them dynamically end together: the last block
 * to start is then at most 1/256 of the work, not 1/64 (a quarter of a 16th). */
static size_t render_block_size(size_t n)
{
    size_t bs = (n + 255) / 256;
    return bs < 256 ? 256 : bs;
}

/* The renderer's stages in the stage profiler (core/profile.h: PROF_RENDER_BASE + RS_*). */
enum { RS_INSTANCE, RS_SETUP, RS_RASTER, RS_RESOLVE };
static const char *const render_stage_names[4] = {"instance", "setup", "raster", "resolve"};

static inline void worker_work(render_worker *w, int stage, uint64_t t0, uint64_t t1)
{
    w->busy_ns[stage] += t1 - t0;
    if (!w->first_ns[stage])
        w->first_ns[stage] = t0;
    w->last_ns[stage] = t1;
}

/* After a stage's region: its wall time as one call, each thread's busy time, and in a
 * trace one span per thread from its first to its last moment of work. Main thread only. */
static void render_stage_record(const shoal_renderer *r, int stage, uint64_t ns, int64_t frame);

typedef struct frame_job {
    shoal_renderer *r;
    const frame_consts *fc;
    const shoal_render_instances *inst;
    setup_ctx sc;
    parallel_counter counter;
    const uint64_t *tile_order; /* low 32 bits: the tile the n-th claim draws */
} frame_job;

static void render_instance_chunk(void *ctx, int64_t begin, int64_t end, int thread_index)
{
    frame_job *j = ctx;
    uint64_t t0 = timer_now_ns();
    float m = instance_classify(j->fc, j->inst, (size_t)begin, (size_t)end, j->r->lod);
    render_worker *w = &j->r->workers[thread_index];
    w->max_s2 = m > w->max_s2 ? m : w->max_s2;
    worker_work(w, RS_INSTANCE, t0, timer_now_ns());
}

static void render_setup_chunk(void *ctx, int64_t begin, int64_t end, int thread_index)
{
    frame_job *j = ctx;
    shoal_renderer *r = j->r;
    uint64_t t0 = timer_now_ns();
    for (int64_t b = begin; b < end; b++) {
        size_t lo = (size_t)b * r->block_size;
        size_t hi = lo + r->block_size;
        hi = hi > j->inst->count ? j->inst->count : hi;
        setup_block(&j->sc, &r->blocks[b], &r->workers[thread_index].scratch, lo, hi);
    }
    worker_work(&r->workers[thread_index], RS_SETUP, t0, timer_now_ns());
}

/* Tile buffers are 64-byte aligned and rows are 64 wide: 4-wide SSE2 (baseline x86-64) with
 * a scalar tail for the image's right edge. */
static void render_fill_depth(float *d, size_t n)
{
#if defined(__SSE2__)
    const __m128 one = _mm_set1_ps(1.0f);
    for (size_t i = 0; i < n; i += 4)
        _mm_store_ps(d + i, one);
#else
    for (size_t i = 0; i < n; i++)
        d[i] = 1.0f;
#endif
}

/* A pixel was drawn iff its depth is below 1: then its colour, else the background. */
static void render_resolve_row(uint32_t *restrict dst, const float *restrict z,
                               const uint32_t *restrict col, uint32_t bg, int n)
{
    int x = 0;
#if defined(__SSE2__)
    const __m128 one = _mm_set1_ps(1.0f);
    const __m128i vbg = _mm_set1_epi32((int)bg);
    for (; x + 4 <= n; x += 4) {
        __m128i m = _mm_castps_si128(_mm_cmplt_ps(_mm_load_ps(z + x), one));
        __m128i c = _mm_load_si128((const __m128i *)(const void *)(col + x));
        __m128i v = _mm_or_si128(_mm_and_si128(m, c), _mm_andnot_si128(m, vbg));
        _mm_storeu_si128((__m128i *)(void *)(dst + x), v);
    }
#endif
    for (; x < n; x++)
        dst[x] = z[x] < 1.0f ? col[x] : bg;
}

/* Tile worker: clear, replay the bins, copy to the framebuffer. Writes only its own tile
 * buffers and its tile's rect of the framebuffer. */
static int render_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void render_tile_region(void *ctx, int thread_index, int thread_count)
{
    (void)thread_count;
    frame_job *j = ctx;
    shoal_renderer *r = j->r;
    const frame_consts *fc = j->fc;
    render_worker *w = &r->workers[thread_index];
    const int tile_count = fc->tiles_x * fc->tiles_y;
    uint64_t t_enter = timer_now_ns();
    int64_t b, e;
    while (parallel_dynamic_next(&j->counter, tile_count, 1, &b, &e)) {
        int ti = (int)(uint32_t)j->tile_order[b];
        if (r->sparse && (j->tile_order[b] >> 32) == 0xFFFFFFFFu) {
            /* no triangle touches it: left as it was, or the background alone */
            if (r->sparse == SHOAL_RENDER_SPARSE_BACKGROUND) {
                int ox = (ti % fc->tiles_x) * TILE_SIZE, oy = (ti / fc->tiles_x) * TILE_SIZE;
                int x1 = ox + TILE_SIZE < fc->width ? ox + TILE_SIZE : fc->width;
                int y1 = oy + TILE_SIZE < fc->height ? oy + TILE_SIZE : fc->height;
                for (int y = oy; y < y1; y++)
                    for (int x = ox; x < x1; x++)
                        r->fb[(size_t)y * fc->width + x] = fc->bg_row[y];
            }
            continue;
        }
        tile_ctx t;
        t.depth = w->depth;
        t.idb = w->idb;
        t.col = w->col;
        t.ox = (ti % fc->tiles_x) * TILE_SIZE;
        t.oy = (ti / fc->tiles_x) * TILE_SIZE;
        t.cx0 = t.ox;
        t.cy0 = t.oy;
        t.cx1 = t.ox + TILE_SIZE - 1 < fc->width - 1 ? t.ox + TILE_SIZE - 1 : fc->width - 1;
        t.cy1 = t.oy + TILE_SIZE - 1 < fc->height - 1 ? t.oy + TILE_SIZE - 1 : fc->height - 1;
        t.tris_rasterized = t.pixels_written = t.refs_hidden = 0;
        t.occlusion = fc->occlusion;
        /* Clear depth to 1 and ids to 0 on the rows inside the image. Colours are not
         * cleared: a pixel was written iff its depth is below 1 (nothing at depth >= 1 can
         * pass), so the resolve picks the background for the others. */
        int rows = t.cy1 - t.oy + 1;
        render_fill_depth(t.depth, (size_t)rows * TILE_SIZE);
        memset(t.idb, 0, (size_t)rows * TILE_SIZE * sizeof(uint32_t));
        rast_tile(r->k, &t, r->blocks, r->block_count, ti, &w->list);
        uint64_t t0 = timer_now_ns();
        int wpx = t.cx1 - t.cx0 + 1;
        for (int y = t.cy0; y <= t.cy1; y++) {
            const float *zr = t.depth + (size_t)(y - t.oy) * TILE_SIZE;
            const uint32_t *cr = t.col + (size_t)(y - t.oy) * TILE_SIZE;
            uint32_t *dst = r->fb + (size_t)y * fc->width + t.cx0;
            render_resolve_row(dst, zr, cr, fc->bg_row[y], wpx);
            if (r->zfb) {
                size_t o = (size_t)y * (size_t)fc->width + (size_t)t.cx0;
                memcpy(r->zfb + o, zr, (size_t)wpx * sizeof(float));
                memcpy(r->idfb + o, t.idb + (size_t)(y - t.oy) * TILE_SIZE,
                       (size_t)wpx * sizeof(uint32_t));
            }
        }
        uint64_t t1 = timer_now_ns();
        w->resolve_ns += t1 - t0;
        w->busy_ns[RS_RESOLVE] += t1 - t0;
        if (!w->first_ns[RS_RESOLVE])
            w->first_ns[RS_RESOLVE] = t0;
        w->last_ns[RS_RESOLVE] = t1;
        w->tris_rasterized += t.tris_rasterized;
        w->pixels_written += t.pixels_written;
        w->refs_hidden += t.refs_hidden;
    }
    /* raster: the whole loop less the resolves */
    uint64_t t_exit = timer_now_ns();
    w->busy_ns[RS_RASTER] += (t_exit - t_enter) - w->busy_ns[RS_RESOLVE];
    w->first_ns[RS_RASTER] = t_enter;
    w->last_ns[RS_RASTER] = t_exit;
}

static void render_stage_record(const shoal_renderer *r, int stage, uint64_t ns, int64_t frame)
{
    int id = PROF_RENDER_BASE + stage;
    prof *pf = r->prof;
    if (prof_on(pf, PROF_STATS)) {
        prof_stage_define(pf, id, "render", render_stage_names[stage]);
        prof_stage_call(pf, id, ns);
    }
    for (int i = 0; i < r->worker_count; i++) {
        const render_worker *w = &r->workers[i];
        if (!w->first_ns[stage])
            continue;
        if (prof_on(pf, PROF_STATS))
            prof_stage_busy(pf, id, i, w->busy_ns[stage]);
        if (prof_on(pf, PROF_TRACE))
            prof_trace_span(pf, i, render_stage_names[stage], frame, w->first_ns[stage],
                            w->last_ns[stage]);
    }
}

static int render_views_ok(const shoal_render_instances *inst)
{
    return inst->count == 0 ||
           (inst->px && inst->py && inst->pz && inst->vx && inst->vy && inst->vz);
}

static shoal_status render_frame_any(shoal_renderer *r, const shoal_render_instances *inst,
                                     const render_raw *raw, const shoal_camera *cam,
                                     shoal_error *err);

SHOAL_API shoal_status shoal_render_frame(shoal_renderer *r, const shoal_render_instances *inst,
                                          const shoal_camera *cam, shoal_error *err)
{
    CHECK_ARG(r, "r", err);
    CHECK_ARG(cam, "cam", err);
    return render_frame_any(r, inst, NULL, cam, err);
}

shoal_status render_frame_raw(shoal_renderer *r, const render_raw *raw, const shoal_camera *cam,
                              shoal_error *err)
{
    if (!raw || (raw->count && !raw->world && !(raw->win && raw->winz)))
        return shoal_error_set(err, SHOAL_ERR_INPUT, "render: raw triangles without data");
    shoal_render_instances inst;
    memset(&inst, 0, sizeof inst);
    inst.count = raw->count;
    return render_frame_any(r, &inst, raw, cam, err);
}

static shoal_status render_frame_body(shoal_renderer *r, const shoal_render_instances *inst,
                                      const render_raw *raw, const shoal_camera *cam,
                                      shoal_error *err, int *hooked);

/* A frame; the speed hook is called once whatever happens (a frame that fails before it
 * passes -1), so that a hook that reduces over the renderers of several processes never
 * leaves the others waiting. */
static shoal_status render_frame_any(shoal_renderer *r, const shoal_render_instances *inst,
                                     const render_raw *raw, const shoal_camera *cam,
                                     shoal_error *err)
{
    int hooked = 0;
    shoal_status st = render_frame_body(r, inst, raw, cam, err, &hooked);
    if (!hooked && r->speed_hook)
        (void)r->speed_hook(r->speed_ctx, -1.0f);
    return st;
}

static shoal_status render_frame_body(shoal_renderer *r, const shoal_render_instances *inst,
                                      const render_raw *raw, const shoal_camera *cam,
                                      shoal_error *err, int *hooked)
{
    uint64_t t_begin = timer_now_ns();
    shoal_status st = camera_validate(cam, err);
    if (st)
        return st;
    static const shoal_render_instances none = {0};
    if (!inst)
        inst = &none;
    if (!raw && !render_views_ok(inst))
        return shoal_error_set(err, SHOAL_ERR_INPUT, "render: instance view has NULL arrays");
    if (inst->count > (size_t)UINT32_MAX)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "render: %zu instances (at most %u)",
                               inst->count, UINT32_MAX);

    /* This renderer's own count, passed to each region (the process default is only read). */
    int threads = parallel_resolve_threads(r->desc.thread_count);
    st = render_grow_workers(r, threads, err);
    if (st)
        goto done;
    for (int i = 0; i < r->worker_count; i++) {
        r->workers[i].tris_rasterized = r->workers[i].pixels_written = 0;
        r->workers[i].refs_hidden = 0;
        r->workers[i].resolve_ns = 0;
        memset(r->workers[i].busy_ns, 0, sizeof r->workers[i].busy_ns);
        memset(r->workers[i].first_ns, 0, sizeof r->workers[i].first_ns);
        memset(r->workers[i].last_ns, 0, sizeof r->workers[i].last_ns);
        r->workers[i].max_s2 = 0.0f;
        r->workers[i].list.failed = 0;
    }

    const render_mesh *mr = r->have_reduced ? &r->mesh_reduced : &r->mesh_full;
    const render_mesh *mc = r->have_coarse ? &r->mesh_coarse : mr;
    float rad = r->mesh_full.radius > mr->radius ? r->mesh_full.radius : mr->radius;
    rad = mc->radius > rad ? mc->radius : rad;
    /* a world (shoal_render_set_world): the fish wrapped, their images at the seams, the
     * plane turned to be seen from above; otherwise the caller's instances as they are */
    shoal_render_instances winst;
    shoal_camera wcam;
    if (!raw) {
        st = render_world_expand(&r->world, inst, cam, rad * r->desc.fish_length * 1.01f, &winst,
                                 &wcam, err);
        if (st)
            goto done;
        inst = &winst;
        cam = &wcam;
    }

    frame_consts fc;
    memset(&fc, 0, sizeof fc);
    camera_setup(cam, r->width, r->height, &fc);
    fc.fish_length = r->desc.fish_length;
    fc.cull_radius = rad * r->desc.fish_length * 1.01f;
    fc.lod = r->desc.lod != 0; /* without a LOD mesh the reduced level draws the fish's */
    fc.occlusion = r->desc.occlusion != 0;
    fc.shade_id = r->desc.shade == SHOAL_SHADE_ID;
    fc.lod_splat_px = r->desc.lod_splat_px;
    fc.lod_reduced_px = r->desc.lod_reduced_px;
    /* no coarse mesh: no coarse level (the reduced fish down to the splats) */
    fc.lod_coarse_px = r->have_coarse ? r->desc.lod_coarse_px : r->desc.lod_splat_px;
    fc.bg_row = r->bg_row;
    {
        float dx = cam->target[0] - cam->eye[0], dy = cam->target[1] - cam->eye[1],
              dz = cam->target[2] - cam->eye[2];
        float d = sqrtf(dx * dx + dy * dy + dz * dz);
        fc.fog_start = r->desc.fog_start;
        fc.fog_end = r->desc.fog_end;
        if (!(fc.fog_start > 0.0f) || !(fc.fog_end > fc.fog_start)) {
            /* orthographic (a map of the world, the fish near the target's plane): no fog
             * before the target's distance */
            fc.fog_start = fc.ortho ? d : 0.5f * d;
            fc.fog_end = 3.0f * d;
        }
        fc.fog_max = r->desc.fog_max;
    }

    /* instance pass */
    uint64_t t0 = timer_now_ns();
    if (inst->count > r->lod_cap) {
        uint8_t *l = realloc(r->lod, inst->count);
        if (!l) {
            st = shoal_error_set(err, SHOAL_ERR_NOMEM, "render: out of memory for %zu instances",
                                 inst->count);
            goto done;
        }
        r->lod = l;
        r->lod_cap = inst->count;
    }
    frame_job job;
    memset(&job, 0, sizeof job);
    job.r = r;
    job.fc = &fc;
    job.inst = inst;
    if (!raw)
        parallel_for_n((int64_t)inst->count, 4096, render_instance_chunk, &job, threads);
    float max_s2 = 0.0f;
    for (int i = 0; i < r->worker_count; i++)
        max_s2 = r->workers[i].max_s2 > max_s2 ? r->workers[i].max_s2 : max_s2;
    fc.max_speed = sqrtf(max_s2);
    float frame_speed = fc.max_speed;
    if (r->speed_hook) {
        *hooked = 1;
        float v = r->speed_hook(r->speed_ctx, frame_speed);
        fc.max_speed = v > 0.0f && v == v ? v : fc.max_speed;
    }
    if (r->speed_scale > 0.0f)
        fc.max_speed = r->speed_scale;
    uint64_t t1 = timer_now_ns();

    /* setup pass */
    r->block_size = render_block_size(inst->count);
    r->block_count = inst->count ? (inst->count + r->block_size - 1) / r->block_size : 0;
    if (r->block_count > r->block_cap) {
        /* 64-byte aligned: each block's fields on lines of its own (render_block) */
        render_block *nb = alloc_array_zero(r->block_count, sizeof *nb, "render bins", err);
        if (!nb) {
            st = SHOAL_ERR_NOMEM;
            goto done;
        }
        if (r->blocks)
            memcpy(nb, r->blocks, r->block_cap * sizeof *nb);
        alloc_free(r->blocks);
        r->blocks = nb;
        r->block_cap = r->block_count;
    }
    job.sc.raw = raw;
    job.sc.fc = &fc;
    job.sc.inst = inst;
    job.sc.lod = r->lod;
    job.sc.mesh_full = &r->mesh_full;
    job.sc.mesh_reduced = mr;
    job.sc.mesh_coarse = mc;
    job.sc.k = r->k;
    job.sc.tile_count = fc.tiles_x * fc.tiles_y;
    parallel_for_n((int64_t)r->block_count, 1, render_setup_chunk, &job, threads);
    shoal_render_stats s;
    memset(&s, 0, sizeof s);
    for (size_t b = 0; b < r->block_count; b++) {
        const render_block *B = &r->blocks[b];
        if (B->failed) {
            st = shoal_error_set(err, SHOAL_ERR_NOMEM,
                                 "render: out of memory for the bins of "
                                 "block %zu",
                                 b);
            goto done;
        }
        s.triangles_submitted += B->tris_submitted;
        s.triangles_visible += B->tris_visible;
        s.instances_full += B->inst_full;
        s.instances_reduced += B->inst_reduced;
        s.instances_splat += B->inst_splat;
        s.instances_coarse += B->inst_coarse;
        s.instances_clipped += B->inst_clipped;
    }
    uint64_t t2 = timer_now_ns();

    /* tile pass: the tiles with the most refs are claimed first, so that a school that
     * fills a few tiles does not leave one thread drawing the last busy tile alone (each tile
     * is drawn by one thread whatever the order: the image does not depend on it) */
    const size_t tiles = (size_t)fc.tiles_x * (size_t)fc.tiles_y;
    if (tiles > r->tile_order_cap) {
        uint64_t *o = realloc(r->tile_order, tiles * sizeof *o);
        if (!o) {
            st = shoal_error_set(err, SHOAL_ERR_NOMEM, "render: out of memory for the tile order");
            goto done;
        }
        r->tile_order = o;
        r->tile_order_cap = tiles;
    }
    for (size_t t = 0; t < tiles; t++) {
        uint64_t refs = 0;
        for (size_t b = 0; b < r->block_count; b++)
            refs += r->blocks[b].tile_start[t + 1] - r->blocks[b].tile_start[t];
        refs = refs > 0xFFFFFFFFu ? 0xFFFFFFFFu : refs;
        r->tile_order[t] = ((uint64_t)(0xFFFFFFFFu - refs) << 32) | t;
    }
    if (r->sparse) { /* which tiles this frame draws (the others: render_tile_region) */
        if (tiles > r->drawn_cap) {
            uint8_t *d = realloc(r->drawn, tiles);
            if (!d) {
                st = shoal_error_set(err, SHOAL_ERR_NOMEM, "render: out of memory for the tiles");
                goto done;
            }
            r->drawn = d;
            r->drawn_cap = tiles;
        }
        for (size_t t = 0; t < tiles; t++)
            r->drawn[t] = (r->tile_order[t] >> 32) != 0xFFFFFFFFu;
        r->tiles_x = fc.tiles_x;
        r->tiles_y = fc.tiles_y;
    }
    qsort(r->tile_order, tiles, sizeof *r->tile_order, render_cmp_u64);
    job.tile_order = r->tile_order;
    job.counter.next = 0;
    parallel_region_n(render_tile_region, &job, threads);
    uint64_t t3 = timer_now_ns();

    uint64_t resolve_ns = 0;
    for (int i = 0; i < r->worker_count; i++)
        if (r->workers[i].list.failed) {
            st = shoal_error_set(err, SHOAL_ERR_NOMEM, "render: out of memory for tile lists");
            goto done;
        }
    for (int i = 0; i < r->worker_count; i++) {
        s.triangles_rasterized += r->workers[i].tris_rasterized;
        s.pixels_written += r->workers[i].pixels_written;
        s.refs_hidden += r->workers[i].refs_hidden;
        resolve_ns += r->workers[i].resolve_ns;
    }
    s.instances = inst->count;
    s.instances_visible =
        s.instances_full + s.instances_reduced + s.instances_coarse + s.instances_splat;
    s.instance_ms = (double)(t1 - t0) * 1e-6;
    s.setup_ms = (double)(t2 - t1) * 1e-6;
    s.resolve_ms = (double)resolve_ns * 1e-6 / (threads > 0 ? threads : 1);
    s.raster_ms = (double)(t3 - t2) * 1e-6 - s.resolve_ms;
    int64_t frame = (int64_t)++r->frames;
    render_stage_record(r, RS_INSTANCE, t1 - t0, frame);
    render_stage_record(r, RS_SETUP, t2 - t1, frame);
    render_stage_record(r, RS_RASTER, (t3 - t2) - (uint64_t)(s.resolve_ms * 1e6), frame);
    render_stage_record(r, RS_RESOLVE, (uint64_t)(s.resolve_ms * 1e6), frame);
    if (prof_on(r->prof, PROF_TRACE)) {
        uint64_t t_end = timer_now_ns();
        for (int i = 0; i < r->worker_count && i < threads; i++)
            prof_trace_frame(r->prof, i, "frame", frame, t_begin, t_end);
    }
    s.total_ms = (double)(timer_now_ns() - t_begin) * 1e-6;
    s.isa = r->k->name;
    s.speed_scale = frame_speed;
    s.thread_count = threads;
    r->stats = s;
done:
    return st;
}

SHOAL_API shoal_profile *shoal_render_get_profile(const shoal_renderer *r)
{
    if (!r)
        return NULL;
    return r->prof;
}

SHOAL_API void shoal_render_set_profile(shoal_renderer *r, shoal_profile *profile)
{
    if (!r)
        return;
    r->prof = profile ? profile : r->prof_own;
}

/* ---- earlier names ------------------------------------------------------------------ */

/* The create of 0.1 found its meshes itself: without desc->mesh it loads shoal's fish.obj (and
 * fish_lod1.obj for LOD) through io, as it did, then creates from them. */
SHOAL_API shoal_status shoal_renderer_create(const shoal_render_desc *desc, shoal_renderer **out,
                                             shoal_error *err)
{
    CHECK_ARG(out, "out", err);
    *out = NULL;
    CHECK_ARG(desc, "desc", err);
    if (desc->mesh)
        return shoal_render_create(desc, out, err);
    *out = NULL;
    shoal_render_desc d = *desc;
    shoal_mesh full, reduced;
    memset(&reduced, 0, sizeof reduced);
    shoal_status st = shoal_mesh_load_asset("fish.obj", &full, err);
    if (!st && d.shade == SHOAL_SHADE_LIT && d.lod && !d.lod_mesh)
        st = shoal_mesh_load_asset("fish_lod1.obj", &reduced, err);
    if (!st) {
        d.mesh = &full;
        d.lod_mesh = d.lod_mesh ? d.lod_mesh : reduced.vertex_count ? &reduced : NULL;
        st = shoal_render_create(&d, out, err);
    }
    shoal_mesh_free(&full);
    shoal_mesh_free(&reduced);
    return st;
}

SHOAL_API int shoal_render_asset_path(const char *name, char *out, size_t size)
{
    return shoal_io_asset_path(name, out, size);
}

SHOAL_API void shoal_renderer_destroy(shoal_renderer *r) { shoal_render_destroy(r); }

/* Rows in row order (the layout of state files and shoal_sim_get_rows): split into the
 * columns shoal_render_frame reads, instance i = row i, so the image is the one of the
 * same rows given as columns. */
SHOAL_API shoal_status shoal_render_frame_rows(shoal_renderer *r, const float *rows,
                                               size_t row_count, const uint8_t *group,
                                               const uint32_t *color, const shoal_camera *cam,
                                               shoal_error *err)
{
    CHECK_ARG(r, "r", err);
    CHECK_ARG(cam, "cam", err);
    if (row_count > 0 && !rows)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "render: no rows (NULL) for %zu fish",
                               row_count);
    if (row_count > (size_t)UINT32_MAX)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "render: %zu rows (at most %u)", row_count,
                               UINT32_MAX);
    shoal_status st = shoal_state_check_finite(rows, row_count, "render", err);
    if (st)
        return st;
    if (row_count > r->rows_cap) {
        float *b = realloc(r->rows_soa, row_count * 6 * sizeof(float));
        if (!b)
            return shoal_error_set(err, SHOAL_ERR_NOMEM, "render: out of memory for %zu fish",
                                   row_count);
        r->rows_soa = b;
        r->rows_cap = row_count;
    }
    float *c[6];
    for (int k = 0; k < 6; k++)
        c[k] = r->rows_soa + (size_t)k * r->rows_cap;
    for (size_t i = 0; i < row_count; i++)
        for (int k = 0; k < 6; k++)
            c[k][i] = rows[i * 6 + (size_t)k];
    shoal_render_instances inst;
    memset(&inst, 0, sizeof inst);
    inst.count = row_count;
    inst.px = c[0];
    inst.py = c[1];
    inst.pz = c[2];
    inst.vx = c[3];
    inst.vy = c[4];
    inst.vz = c[5];
    inst.group = group;
    inst.color = color;
    return shoal_render_frame(r, &inst, cam, err);
}
