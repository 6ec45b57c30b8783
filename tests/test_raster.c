/* SPDX-License-Identifier: MIT */
/* The rasterizer against a plain reference: every pixel of a triangle's box tested with exact
 * 64-bit edge functions and the top-left rule, depth by the shared plane formula, the
 * (depth, id) test. The tiled SIMD renderer must match it pixel for pixel (id mode) for every
 * ISA and thread count; shared edges are covered exactly once; near-plane clipping matches a
 * ray-cast reference away from edges; tiny and huge triangles. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/parallel.h"
#include "render/render_internal.h"
#include "tests/scenes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const shoal_isa *const isas = test_isas;
static const int thread_counts[] = {1, 2, 3, 7};

static uint64_t rng_state = 0x1234567ull;
static uint32_t rnd(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33);
}
static int rnd_range(int lo, int hi) { return lo + (int)(rnd() % (uint32_t)(hi - lo + 1)); }

static shoal_renderer *make(int w, int h, shoal_isa isa)
{
    shoal_render_desc d = shoal_render_desc_default();
    d.width = w;
    d.height = h;
    d.shade = SHOAL_SHADE_ID;
    d.isa = isa;
    shoal_renderer *r = NULL;
    shoal_error e;
    if (!shoal_isa_supported(isa))
        return NULL;
    /* raw triangles only: the mesh is not drawn, any valid one will do */
    static float pos[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    static uint32_t idx[3] = {0, 1, 2};
    shoal_mesh tri = {3, 1, pos, idx, NULL};
    d.mesh = &tri;
    if (shoal_render_create(&d, &r, &e) != SHOAL_OK)
        fail_msg("create: %s", e.message);
    return r;
}

/* ---- the reference ------------------------------------------------------------------------ */

/* The reference keeps, per pixel, the two best fragments by (depth, id), depth in double
 * from the contract (docs/RENDER.md: z interpolated linearly in window space, `less` against
 * a buffer cleared to 1, ties to the lower id), not from the renderer's depth code. The
 * renderer's float32 plane may order two fragments differently only when their depths are
 * within its rounding (`tol`, below): such a pixel accepts either, and is counted. */
typedef struct ref_frag {
    double z, tol;
    uint32_t id;
    int bg; /* the cleared buffer */
} ref_frag;

typedef struct ref_img {
    int w, h;
    ref_frag *best, *second;
    uint32_t *argb;
    long ambiguous;
} ref_img;

static ref_img ref_new(int w, int h)
{
    ref_img r = {w,
                 h,
                 malloc(sizeof(ref_frag) * w * h),
                 malloc(sizeof(ref_frag) * w * h),
                 malloc((size_t)w * h * 4),
                 0};
    for (int i = 0; i < w * h; i++) {
        r.best[i] = (ref_frag){1.0, 0.0, 0, 1};
        r.second[i] = (ref_frag){INFINITY, 0.0, 0, 0};
        r.argb[i] = 0xFF000000u;
    }
    return r;
}
static void ref_free(ref_img *r)
{
    free(r->best);
    free(r->second);
    free(r->argb);
}

/* a before b: nearer first; at equal depth the lower id; the cleared buffer (depth 1) beats
 * every fragment at depth >= 1 */
static int frag_before(const ref_frag *a, const ref_frag *b)
{
    if (a->bg)
        return !(b->z < 1.0);
    if (b->bg)
        return a->z < 1.0;
    return a->z < b->z || (a->z == b->z && a->id < b->id);
}

static void ref_add(ref_img *img, size_t o, ref_frag f)
{
    if (frag_before(&f, &img->best[o])) {
        img->second[o] = img->best[o];
        img->best[o] = f;
    } else if (frag_before(&f, &img->second[o])) {
        img->second[o] = f;
    }
}

/* The expected colour of pixel o, and whether the second fragment is acceptable too. */
static uint32_t ref_colour(const ref_frag *f)
{
    return f->bg ? 0xFF000000u : shade_id_colour(f->id);
}
static int ref_is_ambiguous(const ref_img *img, size_t o)
{
    const ref_frag *a = &img->best[o], *b = &img->second[o];
    if (!isfinite(b->z) && !b->bg)
        return 0;
    double gap = fabs(b->z - a->z);
    return gap != 0.0 && gap <= a->tol + b->tol;
}

/* One triangle, window x_fx8/y_fx8 (y down), drawn only if front-facing (area2 < 0). */
static void ref_tri(ref_img *img, const int32_t *v, const float *z, uint32_t id)
{
    int64_t X[3] = {v[0], v[2], v[4]}, Y[3] = {v[1], v[3], v[5]};
    double Z[3] = {z[0], z[1], z[2]};
    int64_t area2 = (X[1] - X[0]) * (Y[2] - Y[0]) - (X[2] - X[0]) * (Y[1] - Y[0]);
    if (area2 >= 0)
        return;
    /* make it positive: swap vertices 1 and 2 */
    int64_t tx = X[1], ty = Y[1];
    double tz = Z[1];
    X[1] = X[2], Y[1] = Y[2], Z[1] = Z[2];
    X[2] = tx, Y[2] = ty, Z[2] = tz;
    area2 = -area2;
    int64_t mnx = X[0], mxx = X[0], mny = Y[0], mxy = Y[0];
    for (int k = 1; k < 3; k++) {
        mnx = X[k] < mnx ? X[k] : mnx;
        mxx = X[k] > mxx ? X[k] : mxx;
        mny = Y[k] < mny ? Y[k] : mny;
        mxy = Y[k] > mxy ? Y[k] : mxy;
    }
    int x0 = (int)floor((mnx - 128) / 256.0) - 1, x1 = (int)ceil((mxx - 128) / 256.0) + 1;
    int y0 = (int)floor((mny - 128) / 256.0) - 1, y1 = (int)ceil((mxy - 128) / 256.0) + 1;
    x0 = x0 < 0 ? 0 : x0;
    y0 = y0 < 0 ? 0 : y0;
    x1 = x1 >= img->w ? img->w - 1 : x1;
    y1 = y1 >= img->h ? img->h - 1 : y1;
    for (int py = y0; py <= y1; py++)
        for (int px = x0; px <= x1; px++) {
            int64_t sx = 256 * (int64_t)px + 128, sy = 256 * (int64_t)py + 128;
            int inside = 1;
            int64_t w[3];
            for (int k = 0; k < 3; k++) {
                int a = k, b = (k + 1) % 3;
                int64_t dx = X[b] - X[a], dy = Y[b] - Y[a];
                int64_t e = dx * (sy - Y[a]) - dy * (sx - X[a]);
                w[(k + 2) % 3] = e; /* the edge opposite vertex (k + 2) % 3 */
                /* top edge: horizontal with the inside below; left edge: going up (y down) */
                int top_left = (dy == 0 && dx > 0) || dy < 0;
                if (!(e > 0 || (e == 0 && top_left)))
                    inside = 0;
            }
            if (!inside)
                continue;
            /* linear interpolation in window space: barycentric weights are the edge
             * functions over twice the area (exact integers, then double) */
            double zz =
                (Z[0] * (double)w[0] + Z[1] * (double)w[1] + Z[2] * (double)w[2]) / (double)area2;
            /* the renderer's float plane (docs/RENDER.md: linear in window space), z0 +
             * dzdy dy + dzdx dx with the gradients from two edge vectors, rounds each
             * operation: its error is bounded by a few ulps of the terms' sizes */
            double e1x = (double)(X[1] - X[0]), e1y = (double)(Y[1] - Y[0]);
            double e2x = (double)(X[2] - X[0]), e2y = (double)(Y[2] - Y[0]);
            double dz1 = Z[1] - Z[0], dz2 = Z[2] - Z[0], ar = (double)area2;
            double dzdx = (dz1 * e2y - dz2 * e1y) / ar, dzdy = (dz2 * e1x - dz1 * e2x) / ar;
            double ddx = fabs((double)(sx - X[0])), ddy = fabs((double)(sy - Y[0]));
            double mag = fabs(Z[0]) + fabs(dzdy) * ddy + fabs(dzdx) * ddx +
                         (fabs(dz1 * e2y) + fabs(dz2 * e1y)) / ar * ddx +
                         (fabs(dz2 * e1x) + fabs(dz1 * e2x)) / ar * ddy;
            ref_add(img, (size_t)py * img->w + px, (ref_frag){zz, 16 * 0x1p-24 * mag, id, 0});
        }
}

static void ref_finish(ref_img *img)
{
    for (int i = 0; i < img->w * img->h; i++)
        img->argb[i] = ref_colour(&img->best[i]);
}

static void compare(shoal_renderer *r, ref_img *ref, const char *what)
{
    shoal_framebuffer fb = shoal_render_framebuffer(r);
    /* every pixel of the reference is checked: same size, and not an empty image */
    assert_int_equal(fb.width, ref->w);
    assert_int_equal(fb.height, ref->h);
    assert_true(fb.width > 0 && fb.height > 0 && fb.argb != NULL);
    long checked = 0, ambiguous = 0;
    for (int y = 0; y < fb.height; y++)
        for (int x = 0; x < fb.width; x++) {
            size_t o = (size_t)y * ref->w + x;
            uint32_t got = fb.argb[(size_t)y * fb.stride_px + x];
            uint32_t want = ref_colour(&ref->best[o]);
            int amb = ref_is_ambiguous(ref, o);
            ambiguous += amb;
            if (got != want && !(amb && got == ref_colour(&ref->second[o])))
                fail_msg("%s (%s): pixel (%d, %d) is %08x, reference %08x (depth %.9g, next "
                         "%.9g)",
                         what, shoal_render_isa_name(r), x, y, got, want, ref->best[o].z,
                         ref->second[o].z);
            checked++;
        }
    assert_int_equal(checked, (long)ref->w * ref->h);
    /* the reference decides nearly every pixel by itself */
    if (ambiguous * 100 > checked)
        fail_msg("%s: %ld of %ld pixels within rounding of a depth tie", what, ambiguous, checked);
    ref->ambiguous = ambiguous;
}

static void draw_win(shoal_renderer *r, const int32_t *win, const float *winz, size_t n,
                     const uint32_t *ids)
{
    render_raw raw = {n, NULL, win, winz, ids};
    shoal_camera cam = shoal_camera_default();
    shoal_error e;
    if (render_frame_raw(r, &raw, &cam, &e) != SHOAL_OK)
        fail_msg("render_frame_raw: %s", e.message);
}

/* ---- tests ---------------------------------------------------------------------------------- */

/* Random triangles of every size (sub-pixel to larger than the image, vertices in the guard
 * band), random depths with many exact ties, in random order of ids. */
static void test_reference_random(void **state)
{
    (void)state;
    const int W = 203, H = 141;
    enum { N = 1500 };
    int32_t *win = malloc(sizeof(int32_t) * 6 * N);
    float *winz = malloc(sizeof(float) * 3 * N);
    uint32_t *ids = malloc(sizeof(uint32_t) * N);
    for (int i = 0; i < N; i++) {
        int kind = i % 5;
        int span = kind == 0   ? 200
                   : kind == 1 ? 1500
                   : kind == 2 ? 8000
                   : kind == 3 ? 80000
                               : 900000;
        int cx = rnd_range(-40 * 256, (W + 40) * 256), cy = rnd_range(-40 * 256, (H + 40) * 256);
        for (int k = 0; k < 3; k++) {
            win[6 * i + 2 * k] = cx + rnd_range(-span, span);
            win[6 * i + 2 * k + 1] = cy + rnd_range(-span, span);
            /* snap some vertices to pixel centres so edges run through sample points */
            if (rnd() % 3 == 0) {
                win[6 * i + 2 * k] = (win[6 * i + 2 * k] & ~255) | 128;
                win[6 * i + 2 * k + 1] = (win[6 * i + 2 * k + 1] & ~255) | 128;
            }
            winz[3 * i + k] = (rnd() % 4 == 0) ? 0.5f : (float)(rnd() % 2000) / 1000.0f - 1.0f;
        }
        ids[i] = (uint32_t)(rnd() % 5000);
    }
    ref_img ref = ref_new(W, H);
    for (int i = 0; i < N; i++)
        ref_tri(&ref, win + 6 * i, winz + 3 * i, ids[i]);
    ref_finish(&ref);
    int drawn = 0;
    for (size_t k = 0; k < TEST_ISA_COUNT; k++) {
        if (test_isa_skip(isas[k]))
            continue;
        shoal_renderer *r = make(W, H, isas[k]);
        if (!r) {
            test_skip_part("%s: not supported by this CPU", shoal_isa_name(isas[k]));
            continue;
        }
        for (size_t t = 0; t < 4; t++) {
            parallel_set_threads(thread_counts[t]);
            draw_win(r, win, winz, N, ids);
            char what[64];
            snprintf(what, sizeof what, "random triangles, %d threads", thread_counts[t]);
            compare(r, &ref, what);
            drawn++;
        }
        shoal_render_destroy(r);
    }
    parallel_set_threads(0);
    assert_true(drawn >= 4);
    /* the reference is not trivially empty */
    int covered = 0;
    for (int i = 0; i < W * H; i++)
        covered += ref.argb[i] != 0xFF000000u;
    assert_true(covered > W * H / 2);
    ref_free(&ref);
    free(win);
    free(winz);
    free(ids);
}

/* Two triangles sharing an edge (a, b) with the other vertices on opposite sides: no pixel
 * is covered twice, pixel centres strictly inside either are covered, and centres exactly on
 * the open shared edge are covered exactly once. Many random edges, many through centres. */
static int64_t edge_fn(const int32_t *a, const int32_t *b, int64_t sx, int64_t sy)
{
    return ((int64_t)b[0] - a[0]) * (sy - a[1]) - ((int64_t)b[1] - a[1]) * (sx - a[0]);
}

static void test_shared_edges(void **state)
{
    (void)state;
    const int W = 96, H = 80;
    int on_edge_checked = 0;
    for (size_t k = 0; k < TEST_ISA_COUNT; k++) {
        if (test_isa_skip(isas[k]))
            continue;
        shoal_renderer *r = make(W, H, isas[k]);
        if (!r) {
            test_skip_part("%s: not supported by this CPU", shoal_isa_name(isas[k]));
            continue;
        }
        uint8_t *m1 = malloc((size_t)W * H), *m2 = malloc((size_t)W * H);
        for (int pair = 0; pair < 300; pair++) {
            int32_t a[2], b[2], c[2], d[2];
            int snap = pair % 2;
            for (;;) {
                int32_t *p[4] = {a, b, c, d};
                for (int q = 0; q < 4; q++) {
                    p[q][0] = rnd_range(-8 * 256, (W + 8) * 256);
                    p[q][1] = rnd_range(-8 * 256, (H + 8) * 256);
                    if (snap && q < 2) { /* edge through pixel centres */
                        p[q][0] = (p[q][0] & ~255) | 128;
                        p[q][1] = (p[q][1] & ~255) | 128;
                    }
                }
                if (pair % 5 == 0) /* axis-aligned shared edges exercise the top rule */
                    b[1] = a[1];
                if (pair % 5 == 1)
                    b[0] = a[0];
                int64_t ec = edge_fn(a, b, c[0], c[1]), ed = edge_fn(a, b, d[0], d[1]);
                if ((ec > 0 && ed < 0) || (ec < 0 && ed > 0))
                    break;
            }
            /* T1 = (a, b, c), T2 = (b, a, d): the edge in opposite directions, both front */
            int32_t t1[6] = {a[0], a[1], b[0], b[1], c[0], c[1]};
            int32_t t2[6] = {b[0], b[1], a[0], a[1], d[0], d[1]};
            int64_t area = ((int64_t)t1[2] - t1[0]) * (t1[5] - t1[1]) -
                           ((int64_t)t1[4] - t1[0]) * (t1[3] - t1[1]);
            if (area > 0) { /* back-facing: reverse both */
                int32_t s1[6] = {b[0], b[1], a[0], a[1], c[0], c[1]};
                int32_t s2[6] = {a[0], a[1], b[0], b[1], d[0], d[1]};
                memcpy(t1, s1, sizeof s1);
                memcpy(t2, s2, sizeof s2);
            }
            float z[3] = {0.25f, -0.5f, 0.75f};
            uint32_t id = 7;
            draw_win(r, t1, z, 1, &id);
            shoal_framebuffer fb = shoal_render_framebuffer(r);
            for (int i = 0; i < W * H; i++)
                m1[i] = fb.argb[(size_t)(i / W) * fb.stride_px + i % W] != 0xFF000000u;
            draw_win(r, t2, z, 1, &id);
            fb = shoal_render_framebuffer(r);
            for (int i = 0; i < W * H; i++)
                m2[i] = fb.argb[(size_t)(i / W) * fb.stride_px + i % W] != 0xFF000000u;
            for (int py = 0; py < H; py++)
                for (int px = 0; px < W; px++) {
                    int i = py * W + px;
                    int64_t sx = 256 * px + 128, sy = 256 * py + 128;
                    if (m1[i] && m2[i])
                        fail_msg("pair %d (%s): pixel (%d, %d) covered twice", pair,
                                 shoal_render_isa_name(r), px, py);
                    /* orientation-free strict insideness of each triangle */
                    int64_t e1[3], e2[3];
                    for (int q = 0; q < 3; q++) {
                        e1[q] = edge_fn(t1 + 2 * q, t1 + 2 * ((q + 1) % 3), sx, sy);
                        e2[q] = edge_fn(t2 + 2 * q, t2 + 2 * ((q + 1) % 3), sx, sy);
                    }
                    int s1 = (e1[0] < 0 && e1[1] < 0 && e1[2] < 0) ||
                             (e1[0] > 0 && e1[1] > 0 && e1[2] > 0);
                    int s2 = (e2[0] < 0 && e2[1] < 0 && e2[2] < 0) ||
                             (e2[0] > 0 && e2[1] > 0 && e2[2] > 0);
                    if (s1 && !m1[i])
                        fail_msg("pair %d: (%d, %d) strictly inside T1 but not drawn", pair, px,
                                 py);
                    if (s2 && !m2[i])
                        fail_msg("pair %d: (%d, %d) strictly inside T2 but not drawn", pair, px,
                                 py);
                    /* on the open shared edge: edge 0 of both is (a, b) */
                    int on1 = e1[0] == 0 && ((e1[1] < 0 && e1[2] < 0) || (e1[1] > 0 && e1[2] > 0));
                    int on2 = e2[0] == 0 && ((e2[1] < 0 && e2[2] < 0) || (e2[1] > 0 && e2[2] > 0));
                    if (on1 && on2) {
                        on_edge_checked++;
                        if (m1[i] + m2[i] != 1)
                            fail_msg("pair %d (%s): (%d, %d) on the shared edge covered %d times",
                                     pair, shoal_render_isa_name(r), px, py, m1[i] + m2[i]);
                    }
                }
        }
        free(m1);
        free(m2);
        shoal_render_destroy(r);
    }
    printf("shared-edge samples checked: %d\n", on_edge_checked);
    assert_true(on_edge_checked > 100);
}

/* Tiny: sub-pixel triangles around and exactly on sample points; huge: vertices at the guard
 * band, the 64-bit edge path. Both against the reference. */
static void test_tiny_and_huge(void **state)
{
    (void)state;
    const int W = 130, H = 70;
    enum { N = 400 };
    int32_t win[6 * N];
    float winz[3 * N];
    uint32_t ids[N];
    for (int i = 0; i < N; i++) {
        int huge = i % 8 == 0;
        int cx = rnd_range(0, W * 256), cy = rnd_range(0, H * 256);
        if (i % 3 == 0) {
            cx = (cx & ~255) | 128;
            cy = (cy & ~255) | 128;
        }
        for (int k = 0; k < 3; k++) {
            int s = huge ? 16000 * 256 : rnd_range(1, 300);
            win[6 * i + 2 * k] = cx + rnd_range(-s, s);
            win[6 * i + 2 * k + 1] = cy + rnd_range(-s, s);
            winz[3 * i + k] = huge ? 0.9f + 0.01f * (float)k : (float)(rnd() % 100) / 100.0f;
        }
        if (i % 7 == 0) { /* a triangle with a vertex exactly on a centre and one unit away */
            win[6 * i] = cx, win[6 * i + 1] = cy;
            win[6 * i + 2] = cx + 1, win[6 * i + 3] = cy;
            win[6 * i + 4] = cx, win[6 * i + 5] = cy - 1;
        }
        ids[i] = (uint32_t)i;
    }
    ref_img ref = ref_new(W, H);
    for (int i = 0; i < N; i++)
        ref_tri(&ref, win + 6 * i, winz + 3 * i, ids[i]);
    ref_finish(&ref);
    for (size_t k = 0; k < TEST_ISA_COUNT; k++) {
        if (test_isa_skip(isas[k]))
            continue;
        shoal_renderer *r = make(W, H, isas[k]);
        if (!r) {
            test_skip_part("%s: not supported by this CPU", shoal_isa_name(isas[k]));
            continue;
        }
        draw_win(r, win, winz, N, ids);
        compare(r, &ref, "tiny and huge");
        /* a single full-screen triangle far into the guard band covers every pixel */
        int32_t big[6] = {-16000 * 256, -16000 * 256, -16000 * 256,
                          40000 * 256,  40000 * 256,  -16000 * 256};
        float bz[3] = {0, 0, 0};
        uint32_t one = 41;
        draw_win(r, big, bz, 1, &one);
        shoal_framebuffer fb = shoal_render_framebuffer(r);
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                assert_int_equal(fb.argb[(size_t)y * fb.stride_px + x], shade_id_colour(41));
        shoal_render_destroy(r);
    }
    ref_free(&ref);
}

/* ---- near-plane clipping ---------------------------------------------------------------- */

/* Ray-cast reference: does the ray from the eye through pixel (px, py) hit triangle v (world)
 * at a distance beyond the near plane, with margin `m` (in barycentric units) inside? Returns
 * 1 inside, 0 outside, -1 too close to an edge to say. */
static int ray_hit(const shoal_camera *cam, int W, int H, int px, int py, const float *v, double m)
{
    double f[3], s[3], u[3];
    for (int k = 0; k < 3; k++)
        f[k] = cam->target[k] - cam->eye[k];
    double fl = sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
    for (int k = 0; k < 3; k++)
        f[k] /= fl;
    s[0] = -f[2], s[1] = 0, s[2] = f[0]; /* f x (0,1,0) */
    double sl = sqrt(s[0] * s[0] + s[2] * s[2]);
    s[0] /= sl, s[2] /= sl;
    u[0] = s[1] * f[2] - s[2] * f[1], u[1] = s[2] * f[0] - s[0] * f[2],
    u[2] = s[0] * f[1] - s[1] * f[0];
    double t = tan(cam->fov_deg * M_PI / 360.0), aspect = (double)W / H;
    double nx = ((px + 0.5) / W * 2 - 1) * t * aspect, ny = (1 - (py + 0.5) / H * 2) * t;
    double d[3];
    for (int k = 0; k < 3; k++)
        d[k] = f[k] + nx * s[k] + ny * u[k];
    /* Moller-Trumbore */
    double e1[3], e2[3], p[3], q[3], o[3];
    for (int k = 0; k < 3; k++) {
        e1[k] = v[3 + k] - v[k];
        e2[k] = v[6 + k] - v[k];
        o[k] = cam->eye[k] - v[k];
    }
    p[0] = d[1] * e2[2] - d[2] * e2[1], p[1] = d[2] * e2[0] - d[0] * e2[2],
    p[2] = d[0] * e2[1] - d[1] * e2[0];
    double det = e1[0] * p[0] + e1[1] * p[1] + e1[2] * p[2];
    if (fabs(det) < 1e-12)
        return 0;
    double bu = (o[0] * p[0] + o[1] * p[1] + o[2] * p[2]) / det;
    q[0] = o[1] * e1[2] - o[2] * e1[1], q[1] = o[2] * e1[0] - o[0] * e1[2],
    q[2] = o[0] * e1[1] - o[1] * e1[0];
    double bv = (d[0] * q[0] + d[1] * q[1] + d[2] * q[2]) / det;
    double tt = (e2[0] * q[0] + e2[1] * q[1] + e2[2] * q[2]) / det; /* along d (unit depth) */
    double bw = 1 - bu - bv;
    double near_margin = cam->near * 1.01;
    if (bu > m && bv > m && bw > m && tt > near_margin)
        return 1;
    if (bu < -m || bv < -m || bw < -m || tt < cam->near * 0.99)
        return 0;
    return -1;
}

static void test_near_clipping(void **state)
{
    (void)state;
    const int W = 160, H = 120;
    shoal_camera cam = {{0, 0, 0}, {0, -0.3f, -1}, 70.0f, 0.1f, 2000.0f, 0.0f};
    /* triangles crossing the near plane, partly behind the eye, and one wholly behind */
    float tris[][9] = {
        {-5, -1, 5, 5, -1, 5, 0, -1, -20},       /* floor piece running under the camera */
        {-3, -2, -4, 3, -2, -4, 0, 3, 2},        /* leaning wall through the near plane */
        {-1, -1, 0.05f, 1, -1, 0.05f, 0, 1, -3}, /* vertex just behind the near plane */
        {-2, -2, 3, 2, -2, 3, 0, 2, 3},          /* entirely behind the eye */
        {0.5f, -0.5f, -0.2f, -0.5f, -0.5f, -0.2f, 0, 0.5f, -0.05f}, /* close, very large */
    };
    int nt = (int)(sizeof tris / sizeof tris[0]);
    uint32_t *images[TEST_ISA_COUNT] = {NULL};
    for (size_t k = 0; k < TEST_ISA_COUNT; k++) {
        if (k > 0 && test_isa_skip(isas[k])) /* scalar: the reference of the others */
            continue;
        shoal_renderer *r = make(W, H, isas[k]);
        if (!r) {
            test_skip_part("%s: not supported by this CPU", shoal_isa_name(isas[k]));
            continue;
        }
        images[k] = malloc(sizeof(uint32_t) * W * H * (size_t)nt);
        for (int i = 0; i < nt; i++) {
            for (int flip = 0; flip < 2; flip++) {
                float v[9];
                memcpy(v, tris[i], sizeof v);
                if (flip) { /* the other winding: one of the two is the front face */
                    for (int c = 0; c < 3; c++) {
                        float tmp = v[3 + c];
                        v[3 + c] = v[6 + c];
                        v[6 + c] = tmp;
                    }
                }
                render_raw raw = {1, v, NULL, NULL, NULL};
                shoal_error e;
                if (render_frame_raw(r, &raw, &cam, &e))
                    fail_msg("%s", e.message);
                shoal_framebuffer fb = shoal_render_framebuffer(r);
                int drawn = 0, checked = 0;
                for (int y = 0; y < H; y++)
                    for (int x = 0; x < W; x++) {
                        int got = fb.argb[(size_t)y * fb.stride_px + x] != 0xFF000000u;
                        drawn += got;
                        if (!flip)
                            images[k][(size_t)i * W * H + (size_t)y * W + x] =
                                fb.argb[(size_t)y * fb.stride_px + x];
                        int want = ray_hit(&cam, W, H, x, y, v, 0.02);
                        if (want < 0)
                            continue;
                        checked++;
                        /* back faces are culled: a pixel may be empty where the ray hits */
                        if (got && !want)
                            fail_msg("clip case %d/%d (%s): (%d, %d) drawn outside the triangle", i,
                                     flip, shoal_render_isa_name(r), x, y);
                    }
                (void)checked;
                if (i == 3)
                    assert_int_equal(drawn, 0);
            }
        }
        /* front faces: every clearly inside pixel is drawn for the winding that faces us */
        for (int i = 0; i < nt; i++) {
            int inside = 0, drawn = 0;
            for (int y = 0; y < H; y++)
                for (int x = 0; x < W; x++)
                    if (ray_hit(&cam, W, H, x, y, tris[i], 0.02) == 1) {
                        inside++;
                        drawn += images[k][(size_t)i * W * H + (size_t)y * W + x] != 0xFF000000u;
                    }
            /* either this winding faces the eye (all drawn) or it is culled (none) */
            if (!(drawn == 0 || drawn == inside))
                fail_msg("clip case %d (%s): %d of %d inside pixels drawn", i,
                         shoal_render_isa_name(r), drawn, inside);
            if (i != 3)
                assert_true(inside > 0);
        }
        shoal_render_destroy(r);
    }
    for (size_t k = 1; k < TEST_ISA_COUNT; k++)
        if (images[0] && images[k])
            assert_memory_equal(images[0], images[k], sizeof(uint32_t) * W * H * (size_t)nt);
    for (size_t k = 0; k < TEST_ISA_COUNT; k++)
        free(images[k]);
}

/* A floor running from behind the eye to the far distance: two triangles sharing the
 * diagonal, both clipped by the near plane; below the horizon every pixel is covered exactly
 * once, above it none. */
static void test_clipped_floor(void **state)
{
    (void)state;
    const int W = 128, H = 96;
    shoal_camera cam = {{0, 1, 0}, {0, 0.6f, -1}, 60.0f, 0.1f, 2000.0f, 0.0f};
    float q[4][3] = {{-500, 0, 500}, {500, 0, 500}, {500, 0, -500}, {-500, 0, -500}};
    float t1[9], t2[9];
    /* CCW seen from above (+Y): (0, 1, 2) and (0, 2, 3) */
    memcpy(t1, q[0], 12), memcpy(t1 + 3, q[1], 12), memcpy(t1 + 6, q[2], 12);
    memcpy(t2, q[0], 12), memcpy(t2 + 3, q[2], 12), memcpy(t2 + 6, q[3], 12);
    for (size_t k = 0; k < TEST_ISA_COUNT; k++) {
        if (test_isa_skip(isas[k]))
            continue;
        shoal_renderer *r = make(W, H, isas[k]);
        if (!r)
            continue;
        uint8_t *c = calloc((size_t)W * H, 1);
        const float *ts[2] = {t1, t2};
        for (int j = 0; j < 2; j++) {
            render_raw raw = {1, ts[j], NULL, NULL, NULL};
            shoal_error e;
            assert_int_equal(render_frame_raw(r, &raw, &cam, &e), SHOAL_OK);
            shoal_framebuffer fb = shoal_render_framebuffer(r);
            for (int i = 0; i < W * H; i++)
                c[i] += fb.argb[(size_t)(i / W) * fb.stride_px + i % W] != 0xFF000000u;
        }
        /* horizon row: the view ray through it is horizontal */
        double pitch = atan2(0.4, 1.0), t = tan(30.0 * M_PI / 180.0);
        double horizon = (1.0 - tan(pitch) / t) * 0.5 * H; /* rows grow downwards */
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                int n = c[y * W + x];
                if (n > 1)
                    fail_msg("floor (%s): (%d, %d) covered %d times", shoal_render_isa_name(r), x,
                             y, n);
                if (y > horizon + 6 && n != 1)
                    fail_msg("floor (%s): (%d, %d) below the horizon not covered",
                             shoal_render_isa_name(r), x, y);
                if (y < horizon - 2 && n != 0)
                    fail_msg("floor (%s): (%d, %d) above the horizon covered",
                             shoal_render_isa_name(r), x, y);
            }
        free(c);
        shoal_render_destroy(r);
    }
}

/* Axis-aligned edges exactly through rows and columns of sample centres, for each size
 * class the rasterizer treats apart (micro triangles, the 32-bit general path, the 64-bit
 * path of guard-band triangles): the top-left rule decides every sample on them, so a wrong
 * rule for horizontal (top) or vertical (left) edges changes pixels the reference shows. */
static void test_axis_edges(void **state)
{
    (void)state;
    const int W = 64, H = 48;
    static const int32_t sizes[3] = {2 * 256, 20 * 256, 6000 * 256};
    int drawn = 0;
    for (size_t k = 0; k < TEST_ISA_COUNT; k++) {
        if (test_isa_skip(isas[k]))
            continue;
        shoal_renderer *r = make(W, H, isas[k]);
        if (!r) {
            test_skip_part("%s: not supported by this CPU", shoal_isa_name(isas[k]));
            continue;
        }
        for (int sz = 0; sz < 3; sz++)
            for (int shape = 0; shape < 8; shape++) {
                /* corner at a sample centre; legs along +-x and +-y; both windings */
                int32_t cx = 30 * 256 + 128, cy = 22 * 256 + 128, L = sizes[sz];
                int32_t sxs = (shape & 1) ? -1 : 1, sys = (shape & 2) ? -1 : 1;
                int32_t v[6] = {cx, cy, cx + sxs * L, cy, cx, cy + sys * L};
                if (shape & 4) { /* the other winding */
                    int32_t t0 = v[2], t1 = v[3];
                    v[2] = v[4], v[3] = v[5], v[4] = t0, v[5] = t1;
                }
                float z[3] = {0.25f, 0.25f, 0.25f};
                uint32_t id = (uint32_t)(7 + shape);
                ref_img ref = ref_new(W, H);
                ref_tri(&ref, v, z, id);
                ref_finish(&ref);
                draw_win(r, v, z, 1, &id);
                char what[64];
                snprintf(what, sizeof what, "axis edges, size %d, shape %d", sz, shape);
                compare(r, &ref, what);
                ref_free(&ref);
                drawn++;
            }
        shoal_render_destroy(r);
    }
    assert_true(drawn >= 24);
}

int main(int argc, char **argv)
{
    struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_random), cmocka_unit_test(test_shared_edges),
        cmocka_unit_test(test_tiny_and_huge),    cmocka_unit_test(test_near_clipping),
        cmocka_unit_test(test_clipped_floor),    cmocka_unit_test(test_axis_edges),
    };
    /* every test here is an ISA part: one meson case per ISA (tests/scenes.h) */
    static const char *const isa_tests[] = {"test_reference_random",
                                            "test_shared_edges",
                                            "test_tiny_and_huge",
                                            "test_near_clipping",
                                            "test_clipped_floor",
                                            "test_axis_edges",
                                            NULL};
    size_t n = test_isa_args(argc, argv, tests, sizeof tests / sizeof tests[0], isa_tests);
    return test_exit(_cmocka_run_group_tests("test_raster", tests, n, NULL, NULL));
}
