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
#define FISH_COARSE SHOAL_SOURCE_ROOT "/assets/fish_lod2.obj"

static const shoal_isa *const isas = test_isas;

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

/* The test meshes, loaded once (io), lent to every renderer. */
static shoal_mesh g_fish, g_fish_lod, g_fish_coarse;
static void use_test_meshes(shoal_render_desc *d)
{
    shoal_error e;
    if (!g_fish.vertex_count && shoal_mesh_load(FISH, &g_fish, &e))
        fail_msg("%s", e.message);
    if (!g_fish_lod.vertex_count && shoal_mesh_load(FISH_LOD, &g_fish_lod, &e))
        fail_msg("%s", e.message);
    if (!g_fish_coarse.vertex_count && shoal_mesh_load(FISH_COARSE, &g_fish_coarse, &e))
        fail_msg("%s", e.message);
    d->mesh = &g_fish;
    d->lod_mesh = &g_fish_lod;
}

/* A renderer of desc d with the test meshes. */
static shoal_renderer *make_desc(shoal_render_desc *d)
{
    use_test_meshes(d);
    shoal_renderer *r;
    shoal_error e;
    if (shoal_render_create(d, &r, &e))
        fail_msg("create: %s", e.message);
    return r;
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
    return make_desc(&d);
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
            for (size_t k = 0; k < TEST_ISA_COUNT; k++) {
                if (k > 0 && test_isa_skip(isas[k])) /* scalar: the reference of the others */
                    continue;
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
                shoal_render_destroy(r);
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
        shoal_render_destroy(r);
    }
    scene_free(&s);
    scene_free(&t);
}

/* The hook of test_sparse_parts: the largest speed it was given (a stand-in for the ranks'
 * reduction), counting its calls. */
typedef struct speed_probe {
    float give;
    int calls;
    float seen;
} speed_probe;
static float speed_probe_hook(void *ctx, float frame_speed)
{
    speed_probe *p = ctx;
    p->calls++;
    p->seen = frame_speed;
    return p->give > frame_speed ? p->give : frame_speed;
}

/* A school drawn in two parts (MPI's frames): sparse renderers touch only the tiles their
 * fish cover (the rest keeps stale bytes, or with the background mode the background), their
 * drawn tiles hold exactly the depth, ids and colours of those tiles in a full frame of the
 * same part, and a part whose fish are slower colours by the speed its hook returns in one
 * pass, as shoal_render_set_speed_scale would. */
static void test_sparse_parts(void **state)
{
    (void)state;
    scene s = scene_make(600, 23, 30, 6, 8);
    /* the part: the fish on the left, half the speed */
    size_t n = 0;
    for (size_t i = 0; i < s.n; i++)
        if (s.p[0][i] < -12.0f) {
            for (int k = 0; k < 6; k++)
                s.p[k][n] = s.p[k][i] * (k >= 3 ? 0.5f : 1.0f);
            n++;
        }
    s.inst.count = n;
    shoal_camera cam = shoal_camera_default();
    cam.eye[2] = 45;
    shoal_error e;
    for (int mode = SHOAL_RENDER_SPARSE_BACKGROUND; mode <= SHOAL_RENDER_SPARSE_SKIP; mode++) {
        shoal_renderer *full = make(320, 200, SHOAL_SHADE_LIT, 1, SHOAL_ISA_AUTO, 1.5f);
        shoal_renderer *part = make(320, 200, SHOAL_SHADE_LIT, 1, SHOAL_ISA_AUTO, 1.5f);
        assert_int_equal(shoal_render_keep_depth(full, 1, &e), SHOAL_OK);
        assert_int_equal(shoal_render_keep_depth(part, 1, &e), SHOAL_OK);
        assert_int_equal(shoal_render_sparse(part, 3, &e), SHOAL_ERR_INPUT);
        assert_int_equal(shoal_render_sparse(part, mode, &e), SHOAL_OK);
        int tx, ty, ts;
        assert_null(shoal_render_drawn_tiles(part, &tx, &ty, &ts));
        /* stale bytes everywhere first: a frame of the whole school */
        s.inst.count = s.n;
        draw(part, &s.inst, &cam);
        s.inst.count = n;
        shoal_render_set_speed_scale(full, 3.0f);
        draw(full, &s.inst, &cam);
        speed_probe pr = {3.0f, 0, 0.0f};
        shoal_render_set_speed_hook(part, speed_probe_hook, &pr);
        draw(part, &s.inst, &cam);
        assert_int_equal(pr.calls, 1);
        assert_true(pr.seen > 0.0f && pr.seen < 3.0f);
        const uint8_t *drawn = shoal_render_drawn_tiles(part, &tx, &ty, &ts);
        assert_non_null(drawn);
        assert_int_equal(tx, (320 + ts - 1) / ts);
        assert_int_equal(ty, (200 + ts - 1) / ts);
        const float *zf, *zp;
        const uint32_t *idf, *idp;
        shoal_render_depth(full, &zf, &idf);
        shoal_render_depth(part, &zp, &idp);
        const uint32_t *cf = shoal_render_framebuffer(full).argb;
        const uint32_t *cp = shoal_render_framebuffer(part).argb;
        int drawn_tiles = 0, skipped = 0;
        for (int t = 0; t < tx * ty; t++) {
            drawn_tiles += drawn[t] != 0;
            int x0 = t % tx * ts, y0 = t / tx * ts;
            for (int y = y0; y < y0 + ts && y < 200; y++)
                for (int x = x0; x < x0 + ts && x < 320; x++) {
                    size_t i = (size_t)y * 320 + (size_t)x;
                    if (drawn[t]) {
                        assert_true(zp[i] == zf[i] && idp[i] == idf[i] && cp[i] == cf[i]);
                    } else {
                        assert_true(zf[i] == 1.0f); /* nothing of the part there */
                        skipped += cp[i] != cf[i];  /* stale bytes of the first frame */
                        if (mode == SHOAL_RENDER_SPARSE_BACKGROUND)
                            assert_int_equal(cp[i], cf[i]); /* the background */
                    }
                }
        }
        assert_true(drawn_tiles > 0 && drawn_tiles < tx * ty / 2);
        if (mode == SHOAL_RENDER_SPARSE_SKIP)
            assert_true(skipped > 0);
        /* a frame that fails still calls the hook once (-1): the others wait for it */
        shoal_camera bad = cam;
        bad.fov_deg = -1.0f;
        assert_int_not_equal(shoal_render_frame(part, &s.inst, &bad, &e), SHOAL_OK);
        assert_int_equal(pr.calls, 2);
        assert_true(pr.seen == -1.0f);
        shoal_render_destroy(full);
        shoal_render_destroy(part);
    }
    scene_free(&s);
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
            for (size_t k = 0; k < TEST_ISA_COUNT; k++) {
                if (test_isa_skip(isas[k]))
                    continue;
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
                    shoal_render_destroy(r);
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

/* ---- id mode against an independent reference ------------------------------------------ */

/* The reference follows docs/RENDER.md's contract in double precision, sharing no code with
 * the renderer: gluLookAt / gluPerspective, the orientation basis from the velocity, the
 * model matrix T(p) [X Y Z] S(fish_length), the viewport, vertices snapped to 1/256 px, edge
 * functions with the top-left rule, z_clip / w_clip interpolated linearly in window space,
 * `less` against 1 and ties to the lower id. The renderer computes the same in float32, so
 * a snapped vertex may differ by a unit of 1/256 px and a depth by its rounding: a pixel
 * whose sample lies within that of an edge of a fish that could show there, or whose two
 * nearest fish are within depth rounding, accepts either answer; such pixels are counted
 * and must stay few. Every other pixel must match exactly. */
typedef struct rfrag {
    double z, tol;
    uint32_t id;
    int set;
} rfrag;

typedef struct rpix {
    rfrag best, second;    /* certain coverage, the two nearest by (z, id) */
    rfrag maybe;           /* nearest fragment whose coverage rounding could change */
    uint32_t maybe_ids[8]; /* the fish of every such fragment (the first 8) */
    int maybe_count;
} rpix;

static int rfrag_before(const rfrag *a, const rfrag *b)
{
    if (!b->set)
        return 1;
    return a->z < b->z || (a->z == b->z && a->id < b->id);
}

static void rpix_add(rpix *px, rfrag f, int certain)
{
    if (!(f.z < 1.0 + f.tol))
        return; /* fails `less` against the cleared 1 */
    if (!certain || !(f.z < 1.0 - f.tol)) {
        if (rfrag_before(&f, &px->maybe))
            px->maybe = f;
        int known = 0;
        for (int k = 0; k < px->maybe_count && k < 8; k++)
            known |= px->maybe_ids[k] == f.id;
        if (!known && px->maybe_count < 8)
            px->maybe_ids[px->maybe_count] = f.id;
        px->maybe_count += !known;
        return;
    }
    if (rfrag_before(&f, &px->best)) {
        px->second = px->best;
        px->best = f;
    } else if (rfrag_before(&f, &px->second)) {
        px->second = f;
    }
}

static void mat4_mul(const double *a, const double *b, double *out)
{
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++) {
            double acc = 0;
            for (int k = 0; k < 4; k++)
                acc += a[4 * r + k] * b[4 * k + c];
            out[4 * r + c] = acc;
        }
}

/* gluPerspective * gluLookAt, row-major, in double */
static void ref_view_proj(const shoal_camera *cam, int W, int H, double vp[16])
{
    double e[3] = {cam->eye[0], cam->eye[1], cam->eye[2]};
    double f[3] = {cam->target[0] - e[0], cam->target[1] - e[1], cam->target[2] - e[2]};
    double fl = sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
    for (int i = 0; i < 3; i++)
        f[i] /= fl;
    double up[3] = {0, 1, 0};
    double s[3] = {f[1] * up[2] - f[2] * up[1], f[2] * up[0] - f[0] * up[2],
                   f[0] * up[1] - f[1] * up[0]};
    double sl = sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
    if (sl < 1e-6) { /* looking along Y: +Z is up */
        up[1] = 0, up[2] = 1;
        s[0] = f[1] * up[2] - f[2] * up[1];
        s[1] = f[2] * up[0] - f[0] * up[2];
        s[2] = f[0] * up[1] - f[1] * up[0];
        sl = sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
    }
    for (int i = 0; i < 3; i++)
        s[i] /= sl;
    double u[3] = {s[1] * f[2] - s[2] * f[1], s[2] * f[0] - s[0] * f[2], s[0] * f[1] - s[1] * f[0]};
    double V[16] = {s[0],  s[1],  s[2],  -(s[0] * e[0] + s[1] * e[1] + s[2] * e[2]),
                    u[0],  u[1],  u[2],  -(u[0] * e[0] + u[1] * e[1] + u[2] * e[2]),
                    -f[0], -f[1], -f[2], f[0] * e[0] + f[1] * e[1] + f[2] * e[2],
                    0,     0,     0,     1};
    double t = tan(cam->fov_deg * M_PI / 360.0), aspect = (double)W / H;
    double n = cam->near, fa = cam->far;
    double P[16] = {1 / (t * aspect),      0, 0, 0,  0, 1 / t, 0, 0, 0, 0, (fa + n) / (n - fa),
                    2 * fa * n / (n - fa), 0, 0, -1, 0};
    mat4_mul(P, V, vp);
}

static void ref_render_id(const scene *sc, const shoal_mesh *mesh, const shoal_camera *cam,
                          float fish_length, int W, int H, rpix *pix)
{
    memset(pix, 0, sizeof(rpix) * (size_t)W * H);
    double vp[16];
    ref_view_proj(cam, W, H, vp);
    size_t nv = mesh->vertex_count;
    double *X = malloc(sizeof(double) * nv), *Y = malloc(sizeof(double) * nv);
    double *Z = malloc(sizeof(double) * nv);
    int64_t *XF = malloc(sizeof(int64_t) * nv), *YF = malloc(sizeof(int64_t) * nv);
    int *edge_count = malloc(sizeof(int) * nv * nv);
    for (size_t i = 0; i < sc->n; i++) {
        double v[3] = {sc->p[3][i], sc->p[4][i], sc->p[5][i]};
        double bx[3] = {1, 0, 0}, by[3] = {0, 1, 0}, bz[3] = {0, 0, 1};
        double vl = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        if (vl > 0) {
            for (int k = 0; k < 3; k++)
                bz[k] = v[k] / vl;
            double xl = sqrt(bz[2] * bz[2] + bz[0] * bz[0]);
            if (xl > 0) { /* normalize(cross((0,1,0), Z)) */
                bx[0] = bz[2] / xl, bx[1] = 0, bx[2] = -bz[0] / xl;
            }
            by[0] = bz[1] * bx[2] - bz[2] * bx[1]; /* cross(Z, X) */
            by[1] = bz[2] * bx[0] - bz[0] * bx[2];
            by[2] = bz[0] * bx[1] - bz[1] * bx[0];
        }
        double M[16] = {bx[0] * fish_length,
                        by[0] * fish_length,
                        bz[0] * fish_length,
                        sc->p[0][i],
                        bx[1] * fish_length,
                        by[1] * fish_length,
                        bz[1] * fish_length,
                        sc->p[1][i],
                        bx[2] * fish_length,
                        by[2] * fish_length,
                        bz[2] * fish_length,
                        sc->p[2][i],
                        0,
                        0,
                        0,
                        1};
        double mvp[16];
        mat4_mul(vp, M, mvp);
        for (size_t k = 0; k < nv; k++) {
            const float *q = mesh->positions + 3 * k;
            double c[4];
            for (int r = 0; r < 4; r++)
                c[r] = mvp[4 * r] * q[0] + mvp[4 * r + 1] * q[1] + mvp[4 * r + 2] * q[2] +
                       mvp[4 * r + 3];
            assert_true(c[3] > 0 && c[2] + c[3] >= 0);    /* this scene needs no clipper */
            X[k] = (c[0] / c[3] * W / 2 + W / 2.0) * 256; /* window, 1/256 px, y down */
            Y[k] = (H / 2.0 - c[1] / c[3] * H / 2) * 256;
            Z[k] = c[2] / c[3];
            XF[k] = (int64_t)nearbyint(X[k]);
            YF[k] = (int64_t)nearbyint(Y[k]);
        }
        /* Edges shared by two surely front-facing triangles of this fish: a sample near
         * one is covered by one of the two whatever the snapping (the fill rule is
         * watertight), so only the other edges (the silhouette) leave coverage in doubt. */
        memset(edge_count, 0, sizeof(int) * nv * nv);
        for (size_t t = 0; t < mesh->triangle_count; t++) {
            const uint32_t *ix = mesh->indices + 3 * t;
            int64_t a2 = (XF[ix[1]] - XF[ix[0]]) * (YF[ix[2]] - YF[ix[0]]) -
                         (XF[ix[2]] - XF[ix[0]]) * (YF[ix[1]] - YF[ix[0]]);
            double sp =
                fabs((double)(XF[ix[1]] - XF[ix[0]])) + fabs((double)(XF[ix[2]] - XF[ix[0]])) +
                fabs((double)(YF[ix[1]] - YF[ix[0]])) + fabs((double)(YF[ix[2]] - YF[ix[0]]));
            if (a2 < 0 && (double)llabs(a2) > 4 * sp + 8)
                for (int k = 0; k < 3; k++) {
                    uint32_t u = ix[k], w2 = ix[(k + 1) % 3];
                    edge_count[(u < w2 ? u : w2) * nv + (u < w2 ? w2 : u)]++;
                }
        }
        for (size_t t = 0; t < mesh->triangle_count; t++) {
            const uint32_t *ix = mesh->indices + 3 * t;
            int64_t x[3] = {XF[ix[0]], XF[ix[1]], XF[ix[2]]},
                    y[3] = {YF[ix[0]], YF[ix[1]], YF[ix[2]]};
            uint32_t vi[3] = {ix[0], ix[1], ix[2]};
            double z[3] = {Z[ix[0]], Z[ix[1]], Z[ix[2]]};
            int64_t area2 = (x[1] - x[0]) * (y[2] - y[0]) - (x[2] - x[0]) * (y[1] - y[0]);
            /* front faces are CCW in y-up window space: negative area in y-down */
            double span = fabs((double)(x[1] - x[0])) + fabs((double)(x[2] - x[0])) +
                          fabs((double)(y[1] - y[0])) + fabs((double)(y[2] - y[0]));
            /* a vertex may be snapped one unit apart: an area within that of 0 is in doubt */
            int facing_sure = (double)llabs(area2) > 4 * span + 8;
            if (area2 >= 0 && facing_sure)
                continue;
            {
                uint32_t tv = vi[1];
                vi[1] = vi[2], vi[2] = tv;
            }
            if (area2 > 0) { /* in doubt and back-facing here: flip, count as maybe */
                int64_t tt = x[1];
                x[1] = x[2], x[2] = tt;
                tt = y[1], y[1] = y[2], y[2] = tt;
                double tz = z[1];
                z[1] = z[2], z[2] = tz;
                area2 = -area2;
            } else {
                int64_t tt = x[1];
                x[1] = x[2], x[2] = tt;
                tt = y[1], y[1] = y[2], y[2] = tt;
                double tz = z[1];
                z[1] = z[2], z[2] = tz;
                area2 = -area2;
            }
            if (area2 == 0) {
                /* zero area here, perhaps not in float: every sample near it is in doubt */
                area2 = 1;
                facing_sure = 0;
            }
            int64_t mnx = x[0], mxx = x[0], mny = y[0], mxy = y[0];
            for (int k = 1; k < 3; k++) {
                mnx = x[k] < mnx ? x[k] : mnx, mxx = x[k] > mxx ? x[k] : mxx;
                mny = y[k] < mny ? y[k] : mny, mxy = y[k] > mxy ? y[k] : mxy;
            }
            int px0 = (int)((mnx - 128 - 8) >> 8), px1 = (int)((mxx - 128 + 8 + 255) >> 8);
            int py0 = (int)((mny - 128 - 8) >> 8), py1 = (int)((mxy - 128 + 8 + 255) >> 8);
            px0 = px0 < 0 ? 0 : px0, py0 = py0 < 0 ? 0 : py0;
            px1 = px1 >= W ? W - 1 : px1, py1 = py1 >= H ? H - 1 : py1;
            double len[3];
            int interior[3];
            for (int k = 0; k < 3; k++) {
                int b2 = (k + 1) % 3;
                len[k] = hypot((double)(x[b2] - x[k]), (double)(y[b2] - y[k]));
                uint32_t u = vi[k], w2 = vi[b2];
                interior[k] =
                    facing_sure && edge_count[(u < w2 ? u : w2) * nv + (u < w2 ? w2 : u)] == 2;
            }
            double dz1 = z[1] - z[0], dz2 = z[2] - z[0];
            double e1x = (double)(x[1] - x[0]), e1y = (double)(y[1] - y[0]);
            double e2x = (double)(x[2] - x[0]), e2y = (double)(y[2] - y[0]);
            double gx = (dz1 * e2y - dz2 * e1y) / (double)area2;
            double gy = (dz2 * e1x - dz1 * e2x) / (double)area2;
            for (int py = py0; py <= py1; py++)
                for (int px = px0; px <= px1; px++) {
                    int64_t sx = 256 * (int64_t)px + 128, sy = 256 * (int64_t)py + 128;
                    int in = 1, near_edge = 0;
                    int64_t w[3];
                    for (int k = 0; k < 3; k++) {
                        int b2 = (k + 1) % 3;
                        int64_t dx = x[b2] - x[k], dy = y[b2] - y[k];
                        int64_t e = dx * (sy - y[k]) - dy * (sx - x[k]);
                        w[(k + 2) % 3] = e;
                        in &= e > 0 || (e == 0 && (dy < 0 || (dy == 0 && dx > 0)));
                        /* within 2/256 px of the edge: snapping could move it across */
                        if (fabs((double)e) <= 2.5 * len[k] + 1 && !interior[k])
                            near_edge = 1;
                    }
                    if (!in && !near_edge)
                        continue;
                    double zz = (z[0] * (double)w[0] + z[1] * (double)w[1] + z[2] * (double)w[2]) /
                                (double)area2;
                    /* float32 rounding of the plane, plus a vertex moved by 1/256 px */
                    double tol =
                        16 * 0x1p-24 * (fabs(z[0]) + (fabs(gx) + fabs(gy)) * (double)(span + 512)) +
                        (fabs(gx) + fabs(gy)) * 2 + 1e-7;
                    rpix_add(&pix[(size_t)py * W + px], (rfrag){zz, tol, (uint32_t)i, 1},
                             in && !near_edge && facing_sure);
                }
        }
    }
    free(X), free(Y), free(Z), free(XF), free(YF), free(edge_count);
}

static uint32_t rcolour(const rfrag *f)
{
    return f->set ? ((f->id + 1) & 0xFFFFFFu) | 0xFF000000u : 0xFF000000u;
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
    rpix *pix = malloc(sizeof(rpix) * W * H);
    ref_render_id(&s, &mesh, &cam, 1.5f, W, H, pix);
    int fish_pixels = 0;
    int maybe_pixels = 0;
    for (int i = 0; i < W * H; i++) {
        fish_pixels += pix[i].best.set || pix[i].maybe.set;
        maybe_pixels += pix[i].maybe.set;
    }
    printf("reference: %d fish pixels, %d near an edge\n", fish_pixels, maybe_pixels);
    assert_true(fish_pixels > W * H / 20);
    for (size_t k = 0; k < TEST_ISA_COUNT; k++) {
        if (test_isa_skip(isas[k]))
            continue;
        shoal_renderer *r = make(W, H, SHOAL_SHADE_ID, 0, isas[k], 1.5f);
        if (!r) {
            test_skip_part("%s: not supported by this CPU", shoal_isa_name(isas[k]));
            continue;
        }
        draw(r, &s.inst, &cam);
        shoal_framebuffer fb = shoal_render_framebuffer(r);
        long checked = 0, doubtful = 0;
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                const rpix *q = &pix[(size_t)y * W + x];
                uint32_t got = fb.argb[(size_t)y * fb.stride_px + x], want = rcolour(&q->best);
                /* could another fragment win here: one of uncertain coverage at least as
                 * near, or a second within depth rounding? */
                int doubt = 0;
                double bz = q->best.set ? q->best.z : 1.0, bt = q->best.set ? q->best.tol : 0;
                if (q->maybe.set && q->maybe.id != q->best.id &&
                    q->maybe.z <= bz + bt + q->maybe.tol)
                    doubt = 1;
                if (q->second.set && q->second.id != q->best.id &&
                    q->second.z - bz <= bt + q->second.tol)
                    doubt = 1;
                checked++;
                if (doubt) {
                    doubtful++;
                    int ok = got == want || got == rcolour(&q->second) || got == 0xFF000000u;
                    for (int m = 0; m < q->maybe_count && m < 8; m++)
                        ok |= got == (((q->maybe_ids[m] + 1) & 0xFFFFFFu) | 0xFF000000u);
                    if (ok || q->maybe_count > 8)
                        continue;
                }
                if (got != want)
                    fail_msg("%s: pixel (%d, %d) %08x, reference %08x%s", shoal_render_isa_name(r),
                             x, y, got, want, doubt ? " (or its other candidates)" : "");
            }
        assert_int_equal(checked, (long)W * H);
        printf("id mode (%s): %ld pixels checked, %ld within rounding of an edge or a depth tie\n",
               shoal_render_isa_name(r), checked, doubtful);
        /* the reference decides most fish pixels by itself */
        assert_true(doubtful * 4 < fish_pixels);
        shoal_render_destroy(r);
    }
    free(pix);
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
    /* every ISA this CPU has (AUTO after, for the printed values): each must give the
     * golden bits, so a bug in one ISA's path alone fails here too */
    const shoal_isa *all = test_isas;
    for (size_t k = 0; k < TEST_ISA_COUNT; k++) {
        if (test_isa_skip(all[k]))
            continue;
        for (int mode = 0; mode < 2; mode++) {
            shoal_renderer *r =
                make(320, 180, mode ? SHOAL_SHADE_ID : SHOAL_SHADE_LIT, 1, all[k], 1.5f);
            uint64_t hk = draw(r, &s.inst, &cam);
            shoal_render_destroy(r);
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
        shoal_render_destroy(r);
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
    shoal_render_destroy(r);
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
    use_test_meshes(&d);
    shoal_renderer *r;
    shoal_error e;
    d.width = 0;
    assert_int_equal(shoal_render_create(&d, &r, &e), SHOAL_ERR_INPUT);
    d.width = 64;
    d.fish_length = -1;
    assert_int_equal(shoal_render_create(&d, &r, &e), SHOAL_ERR_INPUT);
    d.fish_length = 1;
    /* meshes: none, an index out of range, no positions, a zero-area triangle, too few
     * vertices; each refused with a message naming the mesh */
    d.mesh = NULL;
    assert_int_equal(shoal_render_create(&d, &r, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "no fish mesh"));
    float pos[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
    uint32_t idx[3] = {0, 1, 4};
    shoal_mesh badm = {4, 1, pos, idx, NULL};
    d.mesh = &badm;
    assert_int_equal(shoal_render_create(&d, &r, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "render: fish mesh: triangle 1 uses vertex 5 of 4"));
    badm.positions = NULL;
    assert_int_equal(shoal_render_create(&d, &r, &e), SHOAL_ERR_INPUT);
    badm.positions = pos;
    idx[2] = 1;
    assert_int_equal(shoal_render_create(&d, &r, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "zero area"));
    badm.vertex_count = 2;
    assert_int_equal(shoal_render_create(&d, &r, &e), SHOAL_ERR_INPUT);
    d.mesh = &g_fish;
    d.lod_mesh = &badm;
    assert_int_equal(shoal_render_create(&d, &r, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "render: LOD mesh"));
    d.lod_mesh = &g_fish_lod;
    d.lod_coarse_mesh = &g_fish_coarse;
    d.lod_coarse_px = d.lod_splat_px - 1.0f; /* below the splats */
    assert_int_equal(shoal_render_create(&d, &r, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "coarse"));
    d.lod_coarse_px = d.lod_reduced_px + 1.0f; /* above the reduced */
    assert_int_equal(shoal_render_create(&d, &r, &e), SHOAL_ERR_INPUT);
    d.lod_coarse_px = 12.0f;
    d.lod_coarse_mesh = &badm;
    assert_int_equal(shoal_render_create(&d, &r, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "render: coarse LOD mesh"));
    d.lod_coarse_mesh = &g_fish_coarse;
    assert_int_equal(shoal_render_create(&d, &r, &e), SHOAL_OK);
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
        shoal_render_frame(r, NULL, &(shoal_camera){{0, 0, 5}, {0, 0, 0}, 60, 0.1f, 100, 0}, &e),
        SHOAL_OK);
    assert_int_equal(shoal_render_set_size(r, 33, 17, &e), SHOAL_OK);
    assert_int_equal(shoal_render_framebuffer(r).width, 33);
    assert_int_equal(shoal_render_set_size(r, 100000, 17, &e), SHOAL_ERR_INPUT);
    shoal_render_destroy(r);
}

/* The desc borrows its meshes for create only: a renderer made from copies that are then
 * overwritten and freed draws what one made from the loaded meshes draws. */
static void test_mesh_borrowed_by_create(void **state)
{
    (void)state;
    shoal_render_desc d = shoal_render_desc_default();
    d.width = 200, d.height = 120, d.fish_length = 1.5f;
    shoal_renderer *ref = make_desc(&d);
    shoal_mesh copy[2];
    const shoal_mesh *src[2] = {&g_fish, &g_fish_lod};
    for (int k = 0; k < 2; k++) {
        copy[k] = *src[k];
        copy[k].normals = NULL;
        copy[k].positions = malloc(3 * src[k]->vertex_count * sizeof(float));
        copy[k].indices = malloc(3 * src[k]->triangle_count * sizeof(uint32_t));
        assert_non_null(copy[k].positions);
        assert_non_null(copy[k].indices);
        memcpy(copy[k].positions, src[k]->positions, 3 * src[k]->vertex_count * sizeof(float));
        memcpy(copy[k].indices, src[k]->indices, 3 * src[k]->triangle_count * sizeof(uint32_t));
    }
    d.mesh = &copy[0];
    d.lod_mesh = &copy[1];
    shoal_renderer *r;
    shoal_error e;
    assert_int_equal(shoal_render_create(&d, &r, &e), SHOAL_OK);
    for (int k = 0; k < 2; k++) {
        memset(copy[k].positions, 0xFF, 3 * copy[k].vertex_count * sizeof(float)); /* NaNs */
        memset(copy[k].indices, 0xFF, 3 * copy[k].triangle_count * sizeof(uint32_t));
        free(copy[k].positions);
        free(copy[k].indices);
    }
    scene s = scene_make(3000, 5, 30, 17, 30);
    shoal_camera cam = camera_n(1); /* inside the school: near fish exact, far ones reduced */
    uint64_t want = draw(ref, &s.inst, &cam);
    assert_int_equal(draw(r, &s.inst, &cam), want);
    shoal_render_stats st = shoal_render_get_stats(r);
    assert_true(st.instances_full > 0 && st.instances_reduced > 0);
    shoal_render_destroy(r);
    shoal_render_destroy(ref);
    scene_free(&s);
}

/* A fish small enough to be a splat (LOD) at each edge of the image: it must show in the
 * border column or row it sits on (the splat's box is clamped to the image, not cut). */
static void test_splats_at_borders(void **state)
{
    (void)state;
    const int W = 64, H = 48;
    const double t = tan(30.0 * M_PI / 180.0), dist = 75.0;
    /* pixel centres 0.4 px inside each border: left, right, top, bottom */
    const double px[4][2] = {{0.4, 24}, {W - 0.4, 24}, {32, 0.4}, {32, H - 0.4}};
    for (size_t k = 0; k < TEST_ISA_COUNT; k++) {
        if (test_isa_skip(isas[k]))
            continue;
        shoal_renderer *r = make(W, H, SHOAL_SHADE_LIT, 1, isas[k], 1.5f);
        if (!r) {
            test_skip_part("%s: not supported by this CPU", shoal_isa_name(isas[k]));
            continue;
        }
        shoal_camera cam = shoal_camera_default(); /* eye (0, 0, 75), fov 60 */
        uint32_t *empty = malloc(sizeof(uint32_t) * W * H);
        shoal_render_instances none;
        memset(&none, 0, sizeof none);
        draw(r, &none, &cam);
        shoal_framebuffer fb = shoal_render_framebuffer(r);
        for (int y = 0; y < H; y++)
            memcpy(empty + y * W, fb.argb + (size_t)y * fb.stride_px, sizeof(uint32_t) * W);
        for (int b = 0; b < 4; b++) {
            float p[6] = {(float)((px[b][0] * 2 / W - 1) * dist * t * W / H),
                          (float)((1 - px[b][1] * 2 / H) * dist * t),
                          0,
                          0,
                          0,
                          1};
            shoal_render_instances one;
            memset(&one, 0, sizeof one);
            one.count = 1;
            one.px = p, one.py = p + 1, one.pz = p + 2;
            one.vx = p + 3, one.vy = p + 4, one.vz = p + 5;
            draw(r, &one, &cam);
            fb = shoal_render_framebuffer(r);
            int bx = (int)px[b][0], by = (int)px[b][1], changed = 0;
            for (int y = 0; y < H; y++)
                for (int x = 0; x < W; x++)
                    if ((b < 2 ? x == bx : y == by) &&
                        fb.argb[(size_t)y * fb.stride_px + x] != empty[y * W + x])
                        changed++;
            if (!changed)
                fail_msg("%s: a splat at border %d does not show in its border line",
                         shoal_isa_name(isas[k]), b);
        }
        free(empty);
        shoal_render_destroy(r);
    }
}

/* Splats through each ISA's splat kernel (16 or 8 instances at a time) against the scalar
 * per-instance path: every fish a splat, with and without per-instance scale, colour (alpha 0
 * included) and group, ids in another order, and the awkward velocities and depths: zero,
 * vertical, -0 components, a speed whose square overflows, fish beyond the far plane, a count
 * that leaves a tail shorter than a kernel's lanes. */
/* The mesh path in lanes (16 / 8 instances per call, the scalar path the reference): every
 * ISA and 1 and 3 threads draw the same bits, with and without scale, colour, group and ids,
 * zero, vertical and overflowing velocities, in lit mode with the exact and the reduced
 * mesh mixed in the lanes, in id mode, and from inside the school (lanes the clipper takes). */
static void test_meshes_isa_identical(void **state)
{
    (void)state;
    const size_t n = 3001;
    scene s = scene_make(n, 12, 30, 17, 30);
    float *scale = malloc(sizeof(float) * n);
    uint32_t *colour = malloc(sizeof(uint32_t) * n);
    uint8_t *group = malloc(n);
    s.id = malloc(sizeof(uint32_t) * n);
    for (size_t i = 0; i < n; i++) {
        scale[i] = i % 3 == 0 ? 1.0f : 0.5f + (float)(i % 7) * 0.3f;
        colour[i] = i % 5 == 0 ? 0x00123456u : 0xFF000000u | (uint32_t)((i * 2654435761u) >> 8);
        group[i] = (uint8_t)(i % 11);
        s.id[i] = (uint32_t)((i * 7919u) % n);
        if (i % 83 == 0)
            s.p[3][i] = -0.0f, s.p[4][i] = -1.0f, s.p[5][i] = -0.0f;
        if (i % 101 == 0)
            s.p[3][i] = 1e20f, s.p[4][i] = -3e19f, s.p[5][i] = 0.0f;
    }
    for (int mode = 0; mode < 4; mode++) {
        /* 0, 1: lit with LOD (the exact and reduced mesh), benchmark view and inside the
         * school; 2: id mode; 3: lit, LOD off */
        shoal_camera cam = camera_n(mode == 1 ? 1 : 0);
        if (mode != 1)
            cam.eye[2] = 45.0f; /* fish 15 to 75 away: 6 to 28 px long */
        for (int variant = 0; variant < 4; variant++) {
            s.inst.scale = variant & 1 ? scale : NULL;
            s.inst.color = variant & 1 ? colour : NULL;
            s.inst.group = variant & 2 ? group : NULL;
            s.inst.id = variant & 2 ? s.id : NULL;
            uint64_t ref = 0;
            int have = 0;
            for (size_t k = 0; k < TEST_ISA_COUNT; k++) {
                if (k > 0 && test_isa_skip(isas[k])) /* scalar: the reference of the others */
                    continue;
                shoal_render_desc d = shoal_render_desc_default();
                d.width = 400, d.height = 240, d.isa = isas[k], d.fish_length = 2.0f;
                d.shade = mode == 2 ? SHOAL_SHADE_ID : SHOAL_SHADE_LIT;
                d.lod = mode != 3;
                d.lod_splat_px = 2.0f;
                d.lod_coarse_px = 8.0f;
                d.lod_reduced_px = 12.0f;
                shoal_renderer *r = make_desc(&d);
                if (mode < 2) { /* the coarse level too: four meshes' lanes in one run */
                    shoal_render_destroy(r);
                    shoal_error e;
                    d.lod_coarse_mesh = &g_fish_coarse;
                    assert_int_equal(shoal_render_create(&d, &r, &e), SHOAL_OK);
                }
                for (int t = 1; t <= 3; t += 2) {
                    parallel_set_threads(t);
                    uint64_t h = draw(r, &s.inst, &cam);
                    shoal_render_stats st = shoal_render_get_stats(r);
                    assert_true(st.instances_full + st.instances_reduced > 1000);
                    if (mode == 0 && (st.instances_full < 50 || st.instances_reduced < 300 ||
                                      st.instances_coarse < 300))
                        fail_msg("full %llu reduced %llu coarse %llu splat %llu",
                                 (unsigned long long)st.instances_full,
                                 (unsigned long long)st.instances_reduced,
                                 (unsigned long long)st.instances_coarse,
                                 (unsigned long long)st.instances_splat);
                    if (!have) {
                        ref = h, have = 1;
                    } else if (h != ref) {
                        fail_msg("mode %d variant %d: %s with %d threads gives %016llx, the "
                                 "scalar path %016llx",
                                 mode, variant, shoal_render_isa_name(r), t, (unsigned long long)h,
                                 (unsigned long long)ref);
                    }
                }
                shoal_render_destroy(r);
            }
        }
    }
    parallel_set_threads(0);
    free(scale);
    free(colour);
    free(group);
    scene_free(&s);
}

static void test_splats_isa_identical(void **state)
{
    (void)state;
    const size_t n = 5003;
    scene s = scene_make(n, 11, 60, 34, 60);
    float *scale = malloc(sizeof(float) * n);
    uint32_t *colour = malloc(sizeof(uint32_t) * n);
    uint8_t *group = malloc(n);
    s.id = malloc(sizeof(uint32_t) * n);
    for (size_t i = 0; i < n; i++) {
        scale[i] = i % 3 == 0 ? 1.0f : 0.5f + (float)(i % 7) * 0.3f;
        colour[i] = i % 5 == 0 ? 0x00123456u : 0xFF000000u | (uint32_t)((i * 2654435761u) >> 8);
        group[i] = (uint8_t)(i % 11);
        s.id[i] =
            (uint32_t)((i * 7919u) % n); /* a permutation: 7919 is prime, n is not a multiple */
        if (i % 83 == 0)
            s.p[3][i] = -0.0f, s.p[4][i] = -1.0f, s.p[5][i] = -0.0f;
        if (i % 101 == 0)
            s.p[3][i] = 1e20f, s.p[4][i] = -3e19f, s.p[5][i] = 0.0f;
        if (i % 103 == 0)
            s.p[3][i] = 1e-3f, s.p[4][i] = 0.0f, s.p[5][i] = -0.0f;
        if (i % 53 == 0)
            s.p[2][i] = -1924.5f - (float)(i % 4); /* around the far plane (eye z 75, far 2000) */
    }
    for (int variant = 0; variant < 4; variant++) {
        s.inst.scale = variant & 1 ? scale : NULL;
        s.inst.color = variant & 1 ? colour : NULL;
        s.inst.group = variant & 2 ? group : NULL;
        s.inst.id = variant & 2 ? s.id : NULL;
        shoal_camera cam = shoal_camera_default();
        uint64_t ref = 0;
        int have = 0;
        for (size_t k = 0; k < TEST_ISA_COUNT; k++) {
            if (k > 0 && test_isa_skip(isas[k])) /* scalar: the reference of the others */
                continue;
            shoal_render_desc d = shoal_render_desc_default();
            d.width = 320, d.height = 181, d.isa = isas[k], d.fish_length = 1.5f;
            d.lod_splat_px = d.lod_reduced_px = 1000.0f; /* every fish beyond the near plane */
            shoal_renderer *r = make_desc(&d);
            for (int t = 1; t <= 3; t += 2) {
                parallel_set_threads(t);
                uint64_t h = draw(r, &s.inst, &cam);
                shoal_render_stats st = shoal_render_get_stats(r);
                /* the kernels' path, not the mesh path, drew this frame */
                assert_true(st.instances_splat > 1000);
                assert_true(st.instances_full + st.instances_reduced < st.instances_splat / 10);
                if (!have) {
                    ref = h, have = 1;
                } else if (h != ref) {
                    fail_msg(
                        "variant %d: %s with %d threads gives %016llx, the scalar path %016llx",
                        variant, shoal_render_isa_name(r), t, (unsigned long long)h,
                        (unsigned long long)ref);
                }
            }
            shoal_render_destroy(r);
        }
    }
    parallel_set_threads(0);
    free(scale);
    free(colour);
    free(group);
    scene_free(&s);
}

/* ---- worlds (shoal_render_set_world) ------------------------------------------------------ */

/* id-shaded pixels of instance id (colour id + 1) */
static size_t id_pixels(shoal_renderer *r, uint32_t id, int *xmin, int *xmax)
{
    shoal_framebuffer fb = shoal_render_framebuffer(r);
    size_t n = 0;
    *xmin = fb.width, *xmax = -1;
    for (int y = 0; y < fb.height; y++)
        for (int x = 0; x < fb.width; x++)
            if ((fb.argb[(size_t)y * (size_t)fb.stride_px + (size_t)x] & 0xFFFFFFu) == id + 1) {
                n++;
                *xmin = x < *xmin ? x : *xmin;
                *xmax = x > *xmax ? x : *xmax;
            }
    return n;
}

/* A periodic world draws what its wrapped fish and their images, given by hand, draw; a fish
 * across a seam shows on both sides; 2D is the turned scene; orthographic keeps sizes;
 * threads and ISAs give the same image. */
static void test_worlds(void **state)
{
    (void)state;
    shoal_error e;
    /* 2D box 40 x 30 centred at 0; fish 0 across the x seam (its centre just inside x = 20),
     * fish 1 in the middle heading +y, fish 2 one period outside the box (wraps to 5) */
    float px[3] = {19.8f, 0, 45}, py[3] = {2, -3, 1}, pz[3] = {0, 0, 0};
    float vx[3] = {1, 0, -1}, vy[3] = {0, 1, 0}, vz[3] = {0, 0, 0};
    shoal_render_instances in = {3, px, py, pz, vx, vy, vz, NULL, NULL, NULL, NULL};
    shoal_world w = shoal_world_default();
    w.dims = 2;
    w.periodic[0] = w.periodic[1] = 1;
    w.size[0] = 40, w.size[1] = 30;
    shoal_camera cam = shoal_render_camera_world(&w, 4.0f / 3.0f, 1.0f);
    assert_true(cam.ortho_height > 30.0f && cam.eye[2] > 0 && cam.target[2] == 0);
    shoal_renderer *r = make(400, 300, SHOAL_SHADE_ID, 0, SHOAL_ISA_SCALAR, 2.0f);
    assert_int_equal(shoal_render_set_world(r, &w, &e), SHOAL_OK);
    uint64_t h_world = draw(r, &in, &cam);
    int x0, x1;
    assert_true(id_pixels(r, 0, &x0, &x1) > 0);
    if (!(x0 < 20 && x1 > 380))
        fail_msg("the fish across the seam spans x %d..%d: not on both sides", x0, x1);
    size_t along_x = id_pixels(r, 2, &x0, &x1), along_y = id_pixels(r, 1, &x0, &x1);
    assert_true(along_x > 0);
    /* seen from above, a fish heading +y covers what one heading -x covers (a quarter turn) */
    if (!(fabs((double)along_x - (double)along_y) <= 0.1 * (double)along_x))
        fail_msg("fish heading x covers %zu pixels, heading y %zu: not one view", along_x, along_y);
    /* the same frame by hand: no world, the turned fish (wrapped, fish 0 also one period
     * down), the turned camera */
    float hx[4], hy[4], hz[4], hvx[4], hvy[4], hvz[4];
    uint32_t hid[4] = {0, 0, 1, 2};
    float wx[4] = {19.8f, 19.8f - 40, 0, 5}, wy[4] = {2, 2, -3, 1};
    float wv[4][3] = {{1, 0, 0}, {1, 0, 0}, {0, 1, 0}, {-1, 0, 0}};
    for (int i = 0; i < 4; i++) {
        float p[3] = {wx[i], wy[i], 0}, q[3];
        shoal_render_world_point(&w, p, q);
        hx[i] = q[0], hy[i] = q[1], hz[i] = q[2];
        shoal_render_world_point(&w, wv[i], q);
        hvx[i] = q[0], hvy[i] = q[1], hvz[i] = q[2];
    }
    shoal_render_instances hand = {4, hx, hy, hz, hvx, hvy, hvz, hid, NULL, NULL, NULL};
    shoal_camera hc = cam;
    shoal_render_world_point(&w, cam.eye, hc.eye);
    shoal_render_world_point(&w, cam.target, hc.target);
    shoal_renderer *plain = make(400, 300, SHOAL_SHADE_ID, 0, SHOAL_ISA_SCALAR, 2.0f);
    assert_true(draw(plain, &hand, &hc) == h_world);
    /* lit, threads and the best ISA: the same image */
    shoal_render_desc d = shoal_render_desc_default();
    d.width = 400, d.height = 300, d.fish_length = 2.0f, d.thread_count = 1;
    d.isa = SHOAL_ISA_SCALAR;
    shoal_renderer *a = make_desc(&d);
    d.thread_count = 3;
    d.isa = SHOAL_ISA_AUTO;
    shoal_renderer *b = make_desc(&d);
    assert_int_equal(shoal_render_set_world(a, &w, &e), SHOAL_OK);
    assert_int_equal(shoal_render_set_world(b, &w, &e), SHOAL_OK);
    assert_true(draw(a, &in, &cam) == draw(b, &in, &cam));
    /* orthographic: a fish twice as far covers the same pixels (perspective: a quarter) */
    float fz[1] = {0}, fx[1] = {0}, fy[1] = {0}, fvx[1] = {1}, fvy[1] = {0}, fvz[1] = {0};
    shoal_render_instances one = {1, fx, fy, fz, fvx, fvy, fvz, NULL, NULL, NULL, NULL};
    shoal_camera oc = shoal_camera_default();
    oc.eye[2] = 20, oc.ortho_height = 10;
    draw(plain, &one, &oc);
    size_t near_px = id_pixels(plain, 0, &x0, &x1);
    oc.eye[2] = 40;
    draw(plain, &one, &oc);
    size_t far_px = id_pixels(plain, 0, &x0, &x1);
    assert_true(near_px > 100 && near_px == far_px);
    oc.ortho_height = -1;
    assert_int_equal(shoal_render_frame(plain, &one, &oc, &e), SHOAL_ERR_INPUT);
    /* a 3D periodic box: the fish across the z seam shows at both faces */
    shoal_world w3 = shoal_world_default();
    w3.periodic[2] = 1;
    w3.size[0] = w3.size[1] = w3.size[2] = 20;
    assert_int_equal(shoal_render_set_world(plain, &w3, &e), SHOAL_OK);
    float zx[1] = {0}, zy[1] = {0}, zz[1] = {9.9f}, zvx[1] = {0}, zvy[1] = {0}, zvz[1] = {1};
    shoal_render_instances seam = {1, zx, zy, zz, zvx, zvy, zvz, NULL, NULL, NULL, NULL};
    shoal_camera side = shoal_camera_default();
    side.eye[0] = 60, side.eye[2] = 0;
    draw(plain, &seam, &side);
    assert_true(shoal_render_get_stats(plain).instances == 2); /* the fish and its image */
    /* NULL (or today's world) draws as before */
    assert_int_equal(shoal_render_set_world(plain, NULL, &e), SHOAL_OK);
    draw(plain, &seam, &side);
    assert_true(shoal_render_get_stats(plain).instances == 1);
    w3.size[2] = 0;
    assert_int_equal(shoal_render_set_world(plain, &w3, &e), SHOAL_ERR_INPUT);
    shoal_render_destroy(r);
    shoal_render_destroy(plain);
    shoal_render_destroy(a);
    shoal_render_destroy(b);
}

int main(int argc, char **argv)
{
    struct CMUnitTest tests[] = {
        cmocka_unit_test(test_isa_and_threads_identical),
        cmocka_unit_test(test_order_independent),
        cmocka_unit_test(test_sparse_parts),
        cmocka_unit_test(test_occlusion_exact),
        cmocka_unit_test(test_id_mode_matches_reference),
        cmocka_unit_test(test_golden),
        cmocka_unit_test(test_splats_at_borders),
        cmocka_unit_test(test_splats_isa_identical),
        cmocka_unit_test(test_meshes_isa_identical),
        cmocka_unit_test(test_png_roundtrip),
        cmocka_unit_test(test_camera_frame),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_mesh_borrowed_by_create),
        cmocka_unit_test(test_worlds),
    };
    /* the ISA parts: one meson case per ISA (tests/scenes.h) */
    static const char *const isa_tests[] = {
        "test_isa_and_threads_identical", "test_order_independent",         "test_occlusion_exact",
        "test_meshes_isa_identical",      "test_id_mode_matches_reference", "test_golden",
        "test_splats_at_borders",         "test_splats_isa_identical",      NULL};
    size_t n = test_isa_args(argc, argv, tests, sizeof tests / sizeof tests[0], isa_tests);
    int rc = _cmocka_run_group_tests("test_render", tests, n, NULL, NULL);
    shoal_mesh_free(&g_fish);
    shoal_mesh_free(&g_fish_lod);
    shoal_mesh_free(&g_fish_coarse);
    return test_exit(rc);
}
