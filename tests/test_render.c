/* SPDX-License-Identifier: MIT */
/* The renderer as a whole on fish scenes: identical images for every ISA and thread count and
 * for any instance order (with ids), the id mode against the plain reference rasterizer
 * (mesh transformed by the test itself), the golden image hash, PNG output, auto-framing and
 * input validation. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/parallel.h"
#include "core/rng.h"
#include "render/render_internal.h"
#include "shoal/io.h"
#include "tests/scenes.h"

#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FISH SHOAL_SOURCE_ROOT "/assets/fish.obj"
#define FISH_LOD SHOAL_SOURCE_ROOT "/assets/fish_lod1.obj"

static const shoal_isa isas[] = {SHOAL_ISA_SCALAR, SHOAL_ISA_AVX2, SHOAL_ISA_AVX512};

/* The scene of the speed targets, scaled down: fish uniform in a box, random directions, a
 * few with zero or vertical velocity; columns are separate arrays (the renderer's view). */
typedef struct scene {
    size_t n;
    float *p[6];
    uint32_t *id;
    shoal_render_instances inst;
} scene;

static scene scene_make(size_t n, uint64_t seed, float half_x, float half_y, float half_z)
{
    scene s;
    s.n = n;
    for (int k = 0; k < 6; k++)
        s.p[k] = malloc(sizeof(float) * (n ? n : 1));
    s.id = NULL;
    for (size_t i = 0; i < n; i++) {
        rng r = rng_stream(seed, i);
        s.p[0][i] = rng_range(&r, -half_x, half_x);
        s.p[1][i] = rng_range(&r, -half_y, half_y);
        s.p[2][i] = rng_range(&r, -half_z, half_z);
        float d[3];
        rng_direction(&r, d);
        float v = rng_range(&r, 0.5f, 1.5f);
        if (i % 97 == 0)
            v = 0.0f; /* identity orientation */
        if (i % 89 == 0)
            d[0] = 0, d[1] = 1, d[2] = 0; /* vertical */
        for (int k = 0; k < 3; k++)
            s.p[3 + k][i] = d[k] * v;
    }
    memset(&s.inst, 0, sizeof s.inst);
    s.inst.count = n;
    s.inst.px = s.p[0], s.inst.py = s.p[1], s.inst.pz = s.p[2];
    s.inst.vx = s.p[3], s.inst.vy = s.p[4], s.inst.vz = s.p[5];
    return s;
}

static void scene_free(scene *s)
{
    for (int k = 0; k < 6; k++)
        free(s->p[k]);
    free(s->id);
}

/* A renderer of the test meshes; occlusion as `occlusion` (the default is on). */
static shoal_renderer *make_occ(int w, int h, shoal_shade shade, int lod, shoal_isa isa, float len,
                                int occlusion)
{
    if (!shoal_isa_supported(isa))
        return NULL;
    shoal_render_desc d = shoal_render_desc_default();
    d.width = w, d.height = h, d.shade = shade, d.lod = lod, d.isa = isa, d.fish_length = len;
    d.occlusion = occlusion;
    d.mesh_path = FISH;
    d.lod_mesh_path = FISH_LOD;
    shoal_renderer *r;
    shoal_error e;
    if (shoal_renderer_create(&d, &r, &e))
        fail_msg("create: %s", e.message);
    return r;
}

static shoal_renderer *make(int w, int h, shoal_shade shade, int lod, shoal_isa isa, float len)
{
    return make_occ(w, h, shade, lod, isa, len, 1);
}

static uint64_t draw(shoal_renderer *r, const shoal_render_instances *inst, const shoal_camera *c)
{
    shoal_error e;
    if (shoal_render_frame(r, inst, c, &e))
        fail_msg("frame: %s", e.message);
    return shoal_render_hash(shoal_render_framebuffer(r));
}

/* Cameras: the benchmark view, one inside the school (near clipping, huge triangles), one
 * looking straight down (the up-vector special case). */
static shoal_camera camera_n(int k)
{
    shoal_camera c = shoal_camera_default();
    if (k == 1) {
        float e[3] = {2, 1, 6}, t[3] = {0, 0, -10};
        memcpy(c.eye, e, sizeof e), memcpy(c.target, t, sizeof t);
        c.fov_deg = 80;
    } else if (k == 2) {
        float e[3] = {0, 60, 0}, t[3] = {0, 0, 0};
        memcpy(c.eye, e, sizeof e), memcpy(c.target, t, sizeof t);
    }
    return c;
}

static void test_isa_and_threads_identical(void **state)
{
    (void)state;
    scene s = scene_make(3000, 7, 30, 17, 30);
    /* fish around camera 1's eye (2, 1, 6): cut by the near plane, huge on screen */
    static const float near_fish[4][3] = {
        {2, 1, 5.8f}, {2.3f, 0.8f, 5.5f}, {1.8f, 1, 6}, {2, 1.2f, 6.3f}};
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 3; k++)
            s.p[k][i] = near_fish[i][k];
    static const int threads[] = {1, 2, 3, 7};
    for (int mode = 0; mode < 3; mode++) {
        shoal_shade shade = mode == 0 ? SHOAL_SHADE_ID : SHOAL_SHADE_LIT;
        int lod = mode == 2;
        for (int cam_k = 0; cam_k < 3; cam_k++) {
            shoal_camera cam = camera_n(cam_k);
            uint64_t ref = 0;
            int have = 0;
            for (size_t k = 0; k < 3; k++) {
                shoal_renderer *r = make(331, 187, shade, lod, isas[k], 1.5f);
                if (!r) {
                    test_skip_part("%s: not supported by this CPU", shoal_isa_name(isas[k]));
                    continue;
                }
                for (size_t t = 0; t < 4; t++) {
                    parallel_set_threads(threads[t]);
                    uint64_t h = draw(r, &s.inst, &cam);
                    if (!have) {
                        ref = h, have = 1;
                    } else if (h != ref) {
                        fail_msg("mode %d camera %d: %s with %d threads gives %016llx, "
                                 "expected %016llx",
                                 mode, cam_k, shoal_render_isa_name(r), threads[t],
                                 (unsigned long long)h, (unsigned long long)ref);
                    }
                }
                shoal_render_stats st = shoal_render_get_stats(r);
                assert_true(st.triangles_visible > 0);
                if (cam_k == 1)
                    assert_true(st.instances_clipped > 0);
                if (lod && cam_k == 0)
                    assert_true(st.instances_reduced + st.instances_splat > 0);
                shoal_renderer_destroy(r);
            }
        }
    }
    parallel_set_threads(0);
    scene_free(&s);
}

/* The caller's order does not matter when ids name the rows (the sim's sorted view). */
static void test_order_independent(void **state)
{
    (void)state;
    scene s = scene_make(2000, 11, 20, 11, 20);
    /* many exact depth ties: pairs of fish at the same place */
    for (size_t i = 1; i < s.n; i += 10)
        for (int k = 0; k < 6; k++)
            s.p[k][i] = s.p[k][i - 1];
    scene t = scene_make(s.n, 11, 20, 11, 20);
    t.id = malloc(sizeof(uint32_t) * s.n);
    for (size_t i = 0; i < s.n; i++) {
        size_t j = (i * 7919) % s.n; /* a permutation: 7919 is prime, n = 2000 */
        for (int k = 0; k < 6; k++)
            t.p[k][i] = s.p[k][j];
        t.id[i] = (uint32_t)j;
    }
    t.inst.id = t.id;
    for (int mode = 0; mode < 2; mode++) {
        shoal_renderer *r =
            make(256, 160, mode ? SHOAL_SHADE_LIT : SHOAL_SHADE_ID, 1, SHOAL_ISA_AUTO, 1.5f);
        shoal_camera cam = shoal_camera_default();
        cam.eye[2] = 40;
        uint64_t a = draw(r, &s.inst, &cam);
        uint64_t b = draw(r, &t.inst, &cam);
        assert_int_equal(a, b);
        shoal_renderer_destroy(r);
    }
    scene_free(&s);
    scene_free(&t);
}

/* Occlusion (the tile pass draws near to far and skips hidden fish) leaves the image as it
 * was: a school dense enough that most fish are hidden, every mode, ISA and some thread
 * counts, with and without it; and it does skip fish. */
static void test_occlusion_exact(void **state)
{
    (void)state;
    scene s = scene_make(40000, 23, 20, 11, 20);
    static const int threads[] = {1, 3};
    for (int mode = 0; mode < 3; mode++) {
        shoal_shade shade = mode == 0 ? SHOAL_SHADE_ID : SHOAL_SHADE_LIT;
        for (int cam_k = 0; cam_k < 2; cam_k++) {
            shoal_camera cam = camera_n(cam_k);
            if (cam_k == 0)
                cam.eye[2] = 45;
            for (size_t k = 0; k < 3; k++) {
                if (!shoal_isa_supported(isas[k])) {
                    test_skip_part("%s: not supported by this CPU", shoal_isa_name(isas[k]));
                    continue;
                }
                uint64_t h[2];
                uint64_t hidden[2];
                for (int occ = 0; occ < 2; occ++) {
                    shoal_renderer *r = make_occ(320, 200, shade, mode == 2, isas[k], 1.5f, occ);
                    for (size_t t = 0; t < 2; t++) {
                        parallel_set_threads(threads[t]);
                        uint64_t v = draw(r, &s.inst, &cam);
                        if (t == 0)
                            h[occ] = v;
                        else
                            assert_int_equal(v, h[occ]);
                    }
                    hidden[occ] = shoal_render_get_stats(r).refs_hidden;
                    shoal_renderer_destroy(r);
                }
                if (h[0] != h[1])
                    fail_msg("mode %d camera %d %s: occlusion on %016llx, off %016llx", mode, cam_k,
                             shoal_isa_name(isas[k]), (unsigned long long)h[1],
                             (unsigned long long)h[0]);
                assert_int_equal(hidden[0], 0);
                if (cam_k == 0 && k == 0)
                    printf("# mode %d: %llu (fish, tile) pairs skipped as hidden\n", mode,
                           (unsigned long long)hidden[1]);
                if (cam_k == 0)
                    assert_true(hidden[1] > 10000);
            }
        }
    }
    parallel_set_threads(0);
    scene_free(&s);
}

/* ---- id mode against the reference (same transform, plain rasterizer) ----------------- */

static void ref_tri(uint32_t *img, float *zb, uint32_t *idb, int W, int H, const int32_t *X,
                    const int32_t *Y, const float *Zv, uint32_t id)
{
    int64_t x[3] = {X[0], X[1], X[2]}, y[3] = {Y[0], Y[1], Y[2]};
    float z[3] = {Zv[0], Zv[1], Zv[2]};
    int64_t area2 = (x[1] - x[0]) * (y[2] - y[0]) - (x[2] - x[0]) * (y[1] - y[0]);
    if (area2 >= 0)
        return;
    int64_t t;
    float tz;
    t = x[1], x[1] = x[2], x[2] = t;
    t = y[1], y[1] = y[2], y[2] = t;
    tz = z[1], z[1] = z[2], z[2] = tz;
    depth_plane dp =
        render_depth_plane((int32_t)x[0], (int32_t)y[0], z[0], (int32_t)x[1], (int32_t)y[1], z[1],
                           (int32_t)x[2], (int32_t)y[2], z[2], -area2);
    for (int py = 0; py < H; py++)
        for (int px = 0; px < W; px++) {
            int64_t sx = 256 * px + 128, sy = 256 * py + 128;
            int in = 1;
            for (int k = 0; k < 3; k++) {
                int a = k, b = (k + 1) % 3;
                int64_t dx = x[b] - x[a], dy = y[b] - y[a];
                int64_t e = dx * (sy - y[a]) - dy * (sx - x[a]);
                in &= e > 0 || (e == 0 && (dy < 0 || (dy == 0 && dx > 0)));
            }
            if (!in)
                continue;
            float zz = render_depth_at(dp, (int32_t)(sx - x[0]), (int32_t)(sy - y[0]));
            size_t o = (size_t)py * W + px;
            if (zz < zb[o] || (zz == zb[o] && id < idb[o]))
                zb[o] = zz, idb[o] = id, img[o] = shade_id_colour(id);
        }
}

static void test_id_mode_matches_reference(void **state)
{
    (void)state;
    const int W = 120, H = 90;
    scene s = scene_make(60, 5, 6, 4, 6);
    shoal_camera cam = shoal_camera_default();
    cam.eye[2] = 16;
    shoal_mesh mesh;
    shoal_error e;
    assert_int_equal(shoal_mesh_load(FISH, &mesh, &e), SHOAL_OK);
    frame_consts fc;
    memset(&fc, 0, sizeof fc);
    camera_setup(&cam, W, H, &fc);
    fc.fish_length = 1.5f;
    uint32_t *img = malloc(4 * W * H), *idb = calloc((size_t)W * H, 4);
    float *zb = malloc(4 * W * H);
    for (int i = 0; i < W * H; i++)
        img[i] = 0xFF000000u, zb[i] = 1.0f;
    int32_t *X = malloc(4 * mesh.vertex_count), *Y = malloc(4 * mesh.vertex_count);
    float *Z = malloc(4 * mesh.vertex_count);
    for (size_t i = 0; i < s.n; i++) {
        float mvp[16], rot[9];
        instance_matrix(&fc, s.p[0][i], s.p[1][i], s.p[2][i], s.p[3][i], s.p[4][i], s.p[5][i], 1.0f,
                        mvp, rot);
        int clip = 0;
        for (size_t v = 0; v < mesh.vertex_count; v++) {
            const float *p = mesh.positions + 3 * v;
            float cx = ((mvp[0] * p[0] + mvp[1] * p[1]) + mvp[2] * p[2]) + mvp[3];
            float cy = ((mvp[4] * p[0] + mvp[5] * p[1]) + mvp[6] * p[2]) + mvp[7];
            float cz = ((mvp[8] * p[0] + mvp[9] * p[1]) + mvp[10] * p[2]) + mvp[11];
            float cw = ((mvp[12] * p[0] + mvp[13] * p[1]) + mvp[14] * p[2]) + mvp[15];
            clip |= !(cw > 0 && cz + cw >= 0);
            float rw = 1.0f / cw;
            X[v] = render_round(cx * rw * fc.win_sx + fc.win_ox);
            Y[v] = render_round(cy * rw * fc.win_sy + fc.win_oy);
            Z[v] = cz * rw;
        }
        assert_false(clip); /* this scene needs no clipper */
        for (size_t t = 0; t < mesh.triangle_count; t++) {
            const uint32_t *ix = mesh.indices + 3 * t;
            int32_t tx[3] = {X[ix[0]], X[ix[1]], X[ix[2]]}, ty[3] = {Y[ix[0]], Y[ix[1]], Y[ix[2]]};
            float tz[3] = {Z[ix[0]], Z[ix[1]], Z[ix[2]]};
            ref_tri(img, zb, idb, W, H, tx, ty, tz, (uint32_t)i);
        }
    }
    int fish_pixels = 0;
    for (int i = 0; i < W * H; i++)
        fish_pixels += img[i] != 0xFF000000u;
    assert_true(fish_pixels > W * H / 20);
    for (size_t k = 0; k < 3; k++) {
        shoal_renderer *r = make(W, H, SHOAL_SHADE_ID, 0, isas[k], 1.5f);
        if (!r) {
            test_skip_part("%s: not supported by this CPU", shoal_isa_name(isas[k]));
            continue;
        }
        draw(r, &s.inst, &cam);
        shoal_framebuffer fb = shoal_render_framebuffer(r);
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                if (fb.argb[(size_t)y * fb.stride_px + x] != img[y * W + x])
                    fail_msg("%s: pixel (%d, %d) %08x, reference %08x", shoal_render_isa_name(r), x,
                             y, fb.argb[(size_t)y * fb.stride_px + x], img[y * W + x]);
        shoal_renderer_destroy(r);
    }
    free(img), free(idb), free(zb), free(X), free(Y), free(Z);
    shoal_mesh_free(&mesh);
    scene_free(&s);
}

/* Golden image: 1500 fish of scene_make(1500, 2024, 40, 22, 40), lit, LOD on, 320x180, the
 * default camera, fish length 1.5, assets/fish.obj and fish_lod1.obj. The hash changes when
 * the meshes, the shading, the fill rule or the depth formula change; if that was intended,
 * run this test with SHOAL_PRINT_GOLDEN=1, check the image it writes
 * (build dir: golden_render.png) and paste the printed hashes here. */
#define GOLDEN_LIT 0x9be018eb549ffb9full
#define GOLDEN_ID 0x6094d5008cac0b2dull
static void test_golden(void **state)
{
    (void)state;
    scene s = scene_make(1500, 2024, 40, 22, 40);
    shoal_camera cam = shoal_camera_default();
    uint64_t h[2];
    /* every ISA this CPU has (AUTO last, for the printed values): each must give the
     * golden bits, so a bug in one ISA's path alone fails here too */
    static const shoal_isa all[] = {SHOAL_ISA_SCALAR, SHOAL_ISA_AVX2, SHOAL_ISA_AVX512,
                                    SHOAL_ISA_AUTO};
    for (size_t k = 0; k + 1 < sizeof all / sizeof all[0]; k++) {
        if (!shoal_isa_supported(all[k])) {
            test_skip_part("golden image, %s: not supported by this CPU", shoal_isa_name(all[k]));
            continue;
        }
        for (int mode = 0; mode < 2; mode++) {
            shoal_renderer *r =
                make(320, 180, mode ? SHOAL_SHADE_ID : SHOAL_SHADE_LIT, 1, all[k], 1.5f);
            uint64_t hk = draw(r, &s.inst, &cam);
            shoal_renderer_destroy(r);
            if (hk != (mode ? GOLDEN_ID : GOLDEN_LIT))
                fail_msg("golden image (%s), %s: hash %016llx", mode ? "id" : "lit",
                         shoal_isa_name(all[k]), (unsigned long long)hk);
        }
    }
    for (int mode = 0; mode < 2; mode++) {
        shoal_renderer *r =
            make(320, 180, mode ? SHOAL_SHADE_ID : SHOAL_SHADE_LIT, 1, SHOAL_ISA_AUTO, 1.5f);
        h[mode] = draw(r, &s.inst, &cam);
        if (getenv("SHOAL_PRINT_GOLDEN")) {
            shoal_framebuffer fb = shoal_render_framebuffer(r);
            shoal_error e;
            shoal_io_png_write(mode ? "golden_id.png" : "golden_render.png", fb.argb, fb.width,
                               fb.height, fb.stride_px, &e);
            printf("#define GOLDEN_%s 0x%016llxull\n", mode ? "ID" : "LIT",
                   (unsigned long long)h[mode]);
        }
        shoal_renderer_destroy(r);
    }
    assert_int_equal(h[0], GOLDEN_LIT);
    assert_int_equal(h[1], GOLDEN_ID);
    scene_free(&s);
}

static void test_png_roundtrip(void **state)
{
    (void)state;
    scene s = scene_make(300, 3, 20, 11, 20);
    shoal_renderer *r = make(97, 61, SHOAL_SHADE_LIT, 1, SHOAL_ISA_AUTO, 2.0f);
    shoal_camera cam = shoal_camera_default();
    cam.eye[2] = 40;
    draw(r, &s.inst, &cam);
    shoal_framebuffer fb = shoal_render_framebuffer(r);
    char path[256];
    snprintf(path, sizeof path, "%s/test_render_%d.png", SHOAL_BUILD_ROOT, (int)getpid());
    shoal_error e;
    assert_int_equal(shoal_io_png_write(path, fb.argb, fb.width, fb.height, fb.stride_px, &e),
                     SHOAL_OK);
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    assert_true(png_image_begin_read_from_file(&img, path));
    assert_int_equal(img.width, 97);
    assert_int_equal(img.height, 61);
    img.format = PNG_FORMAT_RGB;
    unsigned char *buf = malloc(PNG_IMAGE_SIZE(img));
    assert_true(png_image_finish_read(&img, NULL, buf, 0, NULL));
    for (int i = 0; i < 97 * 61; i++) {
        uint32_t c = fb.argb[(size_t)(i / 97) * fb.stride_px + i % 97];
        assert_int_equal(buf[3 * i], (c >> 16) & 255);
        assert_int_equal(buf[3 * i + 1], (c >> 8) & 255);
        assert_int_equal(buf[3 * i + 2], c & 255);
    }
    free(buf);
    unlink(path);
    /* a directory that does not exist: an error and no file */
    assert_int_not_equal(shoal_io_png_write("/nonexistent/dir/x.png", fb.argb, fb.width, fb.height,
                                            fb.stride_px, &e),
                         SHOAL_OK);
    assert_int_not_equal(access("/nonexistent/dir/x.png", F_OK), 0);
    shoal_renderer_destroy(r);
    scene_free(&s);
}

static void test_camera_frame(void **state)
{
    (void)state;
    scene s = scene_make(500, 9, 100, 5, 30);
    for (size_t i = 0; i < s.n; i++)
        s.p[0][i] += 1000.0f; /* far from the origin */
    shoal_camera cam = shoal_camera_default();
    shoal_render_camera_frame(s.inst.px, s.inst.py, s.inst.pz, s.n, 1.0f, 16.0f / 9.0f, &cam);
    frame_consts fc;
    camera_setup(&cam, 160, 90, &fc);
    for (size_t i = 0; i < s.n; i++) {
        const float *m = fc.vp;
        float x = s.p[0][i], y = s.p[1][i], z = s.p[2][i];
        float cx = m[0] * x + m[1] * y + m[2] * z + m[3],
              cy = m[4] * x + m[5] * y + m[6] * z + m[7];
        float cz = m[8] * x + m[9] * y + m[10] * z + m[11],
              cw = m[12] * x + m[13] * y + m[14] * z + m[15];
        assert_true(cw > 0);
        assert_true(fabsf(cx / cw) <= 1.0f && fabsf(cy / cw) <= 1.0f && cz / cw < 1.0f);
    }
    scene_free(&s);
}

static void test_errors(void **state)
{
    (void)state;
    shoal_render_desc d = shoal_render_desc_default();
    d.mesh_path = FISH;
    d.lod_mesh_path = FISH_LOD;
    shoal_renderer *r;
    shoal_error e;
    d.width = 0;
    assert_int_equal(shoal_renderer_create(&d, &r, &e), SHOAL_ERR_INPUT);
    d.width = 64;
    d.fish_length = -1;
    assert_int_equal(shoal_renderer_create(&d, &r, &e), SHOAL_ERR_INPUT);
    d.fish_length = 1;
    d.mesh_path = "/nonexistent.obj";
    assert_int_not_equal(shoal_renderer_create(&d, &r, &e), SHOAL_OK);
    d.mesh_path = FISH;
    assert_int_equal(shoal_renderer_create(&d, &r, &e), SHOAL_OK);
    shoal_camera c = shoal_camera_default();
    c.fov_deg = 180;
    assert_int_equal(shoal_render_frame(r, NULL, &c, &e), SHOAL_ERR_INPUT);
    c = shoal_camera_default();
    memcpy(c.target, c.eye, sizeof c.eye);
    assert_int_equal(shoal_render_frame(r, NULL, &c, &e), SHOAL_ERR_INPUT);
    c = shoal_camera_default();
    c.far = c.near;
    assert_int_equal(shoal_render_frame(r, NULL, &c, &e), SHOAL_ERR_INPUT);
    shoal_render_instances bad = {5, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    c = shoal_camera_default();
    assert_int_equal(shoal_render_frame(r, &bad, &c, &e), SHOAL_ERR_INPUT);
    /* an empty frame is the background */
    assert_int_equal(
        shoal_render_frame(r, NULL, &(shoal_camera){{0, 0, 5}, {0, 0, 0}, 60, 0.1f, 100}, &e),
        SHOAL_OK);
    assert_int_equal(shoal_render_set_size(r, 33, 17, &e), SHOAL_OK);
    assert_int_equal(shoal_render_framebuffer(r).width, 33);
    assert_int_equal(shoal_render_set_size(r, 100000, 17, &e), SHOAL_ERR_INPUT);
    shoal_renderer_destroy(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_isa_and_threads_identical),
        cmocka_unit_test(test_order_independent),
        cmocka_unit_test(test_occlusion_exact),
        cmocka_unit_test(test_id_mode_matches_reference),
        cmocka_unit_test(test_golden),
        cmocka_unit_test(test_png_roundtrip),
        cmocka_unit_test(test_camera_frame),
        cmocka_unit_test(test_errors),
    };
    return test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
