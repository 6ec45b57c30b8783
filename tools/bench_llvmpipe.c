/* SPDX-License-Identifier: MIT */
/* bench_llvmpipe: shoal's renderer against Mesa's llvmpipe (OpenGL ES 3.0 on the CPU, the
 * software OpenGL a machine without a GPU has) drawing the same fish in the same run
 * (issue 18, docs/PERFORMANCE.md). Both draw the `shoal render --bench` scene (N fish,
 * seed 1, the default camera, fish length 1.5) at WxH into an offscreen colour + depth
 * buffer: GL with one instanced draw per mesh (the fish's world transform built in the
 * vertex shader exactly as shoal builds it, Lambert lighting, colour by speed), fish
 * shorter than shoal's LOD thresholds on screen drawn with the reduced or coarse mesh as shoal
 * draws them, and fish shorter than the splat threshold as a line from head to tail (shoal fills
 * the box of that segment). The CPU-side split and the instance upload are inside GL's timed frame,
 * as shoal's instance pass is inside its. Frames alternate, shoal then GL, after one warm-up each;
 * each side's time is glFinish / shoal_render_frame wall time; medians are printed.
 *
 *   bench_llvmpipe [--count N] [--size WxH] [--frames K] [--threads T] [--lod on|off]
 *                  [--assets DIR] [--check IOU]
 *
 * --check IOU: also read both images back and compare where they have a fish (shoal's
 * kept depth, GL's alpha): exit 1 when the intersection over union of the two
 * coverage masks is below IOU, which shows GL drew the same fish, where shoal did.
 * Exit 77 when no llvmpipe context can be made (no EGL/Mesa). llvmpipe's threads:
 * LP_NUM_THREADS (default: every CPU), as an application would get it. */
#include "shoal/shoal.h"
#include "support/scenes.h"

#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GLES3/gl3.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* The vertex shader builds the fish's frame as shoal's instance_matrix does: Z along the
 * velocity, X = normalize(cross(+Y, Z)) (or +X when vertical), Y = cross(Z, X). */
static const char *const vs_src =
    "#version 300 es\n"
    "layout(location = 0) in vec3 pos;\n"
    "layout(location = 1) in vec3 nrm;\n"
    "layout(location = 2) in vec3 ip;\n"
    "layout(location = 3) in vec3 iv;\n"
    "uniform mat4 vp;\n"
    "uniform float len;\n"
    "uniform float max_speed;\n"
    "flat out vec3 col;\n"
    "void main() {\n"
    "  float s2 = dot(iv, iv);\n"
    "  vec3 Z = vec3(0.0, 0.0, 1.0), X = vec3(1.0, 0.0, 0.0);\n"
    "  if (s2 > 0.0) {\n"
    "    Z = iv * inversesqrt(s2);\n"
    "    float x2 = Z.z * Z.z + Z.x * Z.x;\n"
    "    if (x2 > 0.0) X = vec3(Z.z, 0.0, -Z.x) * inversesqrt(x2);\n"
    "  }\n"
    "  vec3 Y = cross(Z, X);\n"
    "  gl_Position = vp * vec4(ip + (X * pos.x + Y * pos.y + Z * pos.z) * len, 1.0);\n"
    "  vec3 n = X * nrm.x + Y * nrm.y + Z * nrm.z;\n"
    "  float t = clamp(sqrt(s2) / max_speed, 0.0, 1.0);\n"
    "  vec3 base = mix(vec3(0.10, 0.35, 0.85), vec3(0.95, 0.75, 0.20), t);\n"
    "  vec3 L = normalize(vec3(0.3, 1.0, 0.45));\n"
    "  col = base * (0.3 + 0.7 * max(dot(n, L), 0.0));\n"
    "}\n";
static const char *const fs_src = "#version 300 es\n"
                                  "precision mediump float;\n"
                                  "flat in vec3 col;\n"
                                  "out vec4 frag;\n"
                                  "void main() { frag = vec4(col, 1.0); }\n";

typedef struct gl_mesh {
    GLuint vao, vbo, ibo, inst;
    GLsizei index_count;
    GLenum mode; /* GL_TRIANGLES, or GL_LINES for the splat's head-to-tail segment */
} gl_mesh;

static GLuint shader(GLenum type, const char *src)
{
    GLuint s = glCreateShader(type);
    glShaderSource(s, 1, &src, NULL);
    glCompileShader(s);
    GLint ok = 0;
    glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        char log[1024];
        glGetShaderInfoLog(s, sizeof log, NULL, log);
        fprintf(stderr, "bench_llvmpipe: shader: %s\n", log);
        return 0;
    }
    return s;
}

/* Positions and normals interleaved; the instance buffer (px py pz vx vy vz) bound with a
 * divisor of 1. */
static int mesh_upload(const shoal_mesh *m, gl_mesh *g)
{
    float *v = malloc(m->vertex_count * 6 * sizeof(float));
    if (!v)
        return 0;
    for (size_t i = 0; i < m->vertex_count; i++) {
        memcpy(v + 6 * i, m->positions + 3 * i, 3 * sizeof(float));
        memcpy(v + 6 * i + 3, m->normals + 3 * i, 3 * sizeof(float));
    }
    glGenVertexArrays(1, &g->vao);
    glBindVertexArray(g->vao);
    glGenBuffers(1, &g->vbo);
    glBindBuffer(GL_ARRAY_BUFFER, g->vbo);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(m->vertex_count * 6 * sizeof(float)), v,
                 GL_STATIC_DRAW);
    free(v);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 24, (void *)0);
    glEnableVertexAttribArray(1);
    glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, 24, (void *)12);
    glGenBuffers(1, &g->ibo);
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, g->ibo);
    glBufferData(GL_ELEMENT_ARRAY_BUFFER, (GLsizeiptr)(m->triangle_count * 3 * sizeof(uint32_t)),
                 m->indices, GL_STATIC_DRAW);
    g->index_count = (GLsizei)(m->triangle_count * 3);
    g->mode = GL_TRIANGLES;
    glGenBuffers(1, &g->inst);
    glBindBuffer(GL_ARRAY_BUFFER, g->inst);
    glEnableVertexAttribArray(2);
    glVertexAttribPointer(2, 3, GL_FLOAT, GL_FALSE, 24, (void *)0);
    glVertexAttribDivisor(2, 1);
    glEnableVertexAttribArray(3);
    glVertexAttribPointer(3, 3, GL_FLOAT, GL_FALSE, 24, (void *)12);
    glVertexAttribDivisor(3, 1);
    glBindVertexArray(0);
    return glGetError() == GL_NO_ERROR;
}

static void mesh_draw(const gl_mesh *g, const float *rows, size_t n)
{
    if (n == 0)
        return;
    glBindVertexArray(g->vao);
    glBindBuffer(GL_ARRAY_BUFFER, g->inst);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(n * 6 * sizeof(float)), rows, GL_STREAM_DRAW);
    glDrawElementsInstanced(g->mode, g->index_count, GL_UNSIGNED_INT, NULL, (GLsizei)n);
}

/* OpenGL's lookAt and perspective (column-major for glUniformMatrix4fv), the matrices
 * shoal's camera.c builds; and the view row that gives a point's depth. */
static void camera_matrices(const shoal_camera *c, int w, int h, float vp[16], double view_z[4],
                            double *focal_px)
{
    double e[3] = {c->eye[0], c->eye[1], c->eye[2]}, f[3], s[3], u[3];
    for (int i = 0; i < 3; i++)
        f[i] = (double)c->target[i] - e[i];
    double fl = sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
    for (int i = 0; i < 3; i++)
        f[i] /= fl;
    s[0] = -f[2]; /* f x (0, 1, 0) */
    s[1] = 0.0;
    s[2] = f[0];
    double sl = sqrt(s[0] * s[0] + s[2] * s[2]);
    if (sl < 1e-9) { /* looking along Y: +Z as up */
        s[0] = f[1];
        s[1] = -f[0];
        s[2] = 0.0;
        sl = sqrt(s[0] * s[0] + s[1] * s[1]);
    }
    for (int i = 0; i < 3; i++)
        s[i] /= sl;
    u[0] = s[1] * f[2] - s[2] * f[1];
    u[1] = s[2] * f[0] - s[0] * f[2];
    u[2] = s[0] * f[1] - s[1] * f[0];
    double V[16] = {s[0],  s[1],  s[2],  -(s[0] * e[0] + s[1] * e[1] + s[2] * e[2]),
                    u[0],  u[1],  u[2],  -(u[0] * e[0] + u[1] * e[1] + u[2] * e[2]),
                    -f[0], -f[1], -f[2], f[0] * e[0] + f[1] * e[1] + f[2] * e[2],
                    0,     0,     0,     1};
    double t = tan((double)c->fov_deg * 3.14159265358979323846 / 360.0), a = (double)w / h;
    double n = c->near, fa = c->far;
    double P[16] = {1 / (t * a),           0, 0, 0,  0, 1 / t, 0, 0, 0, 0, (fa + n) / (n - fa),
                    2 * fa * n / (n - fa), 0, 0, -1, 0};
    for (int r = 0; r < 4; r++)
        for (int col = 0; col < 4; col++) {
            double acc = 0;
            for (int k = 0; k < 4; k++)
                acc += P[r * 4 + k] * V[k * 4 + col];
            vp[col * 4 + r] = (float)acc;
        }
    for (int k = 0; k < 4; k++)
        view_z[k] = V[8 + k];
    *focal_px = 0.5 * h / t;
}

static shoal_status mesh_read(const char *dir, const char *name, shoal_mesh *m, shoal_error *e)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    shoal_status st = shoal_mesh_load(path, m, e);
    if (!st && !m->normals)
        st = shoal_mesh_compute_normals(m, e);
    return st;
}

static int usage(void)
{
    fprintf(stderr, "usage: bench_llvmpipe [--count N] [--size WxH] [--frames K] [--threads T] "
                    "[--lod on|off] [--assets DIR] [--check IOU]\n");
    return 2;
}

int main(int argc, char **argv)
{
    long count = 100000, frames = 7;
    int w = 1280, h = 720, threads = 0, lod = 1;
    double check = -1;
    const char *assets = SHOAL_SOURCE_ASSETS;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            return usage();
        i++;
        if (strcmp(a, "--count") == 0)
            count = strtol(v, NULL, 10);
        else if (strcmp(a, "--frames") == 0)
            frames = strtol(v, NULL, 10);
        else if (strcmp(a, "--threads") == 0)
            threads = (int)strtol(v, NULL, 10);
        else if (strcmp(a, "--size") == 0 && sscanf(v, "%dx%d", &w, &h) == 2)
            ;
        else if (strcmp(a, "--lod") == 0)
            lod = strcmp(v, "off") != 0;
        else if (strcmp(a, "--assets") == 0)
            assets = v;
        else if (strcmp(a, "--check") == 0)
            check = strtod(v, NULL);
        else
            return usage();
    }
    if (count < 1 || frames < 1 || w < 1 || h < 1 || w > 8192 || h > 8192 || threads < 0)
        return usage();
    size_t n = (size_t)count;

    /* llvmpipe through EGL without a window system (Mesa's surfaceless platform) */
    setenv("LIBGL_ALWAYS_SOFTWARE", "1", 0);
    setenv("GALLIUM_DRIVER", "llvmpipe", 0);
    PFNEGLGETPLATFORMDISPLAYEXTPROC get_display =
        (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
    EGLDisplay dpy = get_display
                         ? get_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL)
                         : EGL_NO_DISPLAY;
    EGLint major = 0, minor = 0;
    if (dpy == EGL_NO_DISPLAY || !eglInitialize(dpy, &major, &minor) ||
        !eglBindAPI(EGL_OPENGL_ES_API)) {
        fprintf(stderr, "SKIP: no EGL surfaceless display (Mesa's libegl-mesa0)\n");
        return 77;
    }
    const EGLint ctx_attr[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 0,
                               EGL_NONE};
    EGLContext ctx = eglCreateContext(dpy, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, ctx_attr);
    if (ctx == EGL_NO_CONTEXT || !eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx)) {
        fprintf(stderr, "SKIP: no OpenGL ES 3.0 context without a surface\n");
        eglTerminate(dpy);
        return 77;
    }
    const char *gl_renderer = (const char *)glGetString(GL_RENDERER);
    if (!gl_renderer || !strstr(gl_renderer, "llvmpipe")) {
        fprintf(stderr, "SKIP: the GL renderer is '%s', not llvmpipe\n",
                gl_renderer ? gl_renderer : "?");
        eglTerminate(dpy);
        return 77;
    }

    int rc = 1;
    shoal_error e;
    shoal_mesh full = {0}, reduced = {0}, coarse = {0};
    float *rows = scene_render_bench(n, 1);
    float *split = malloc(n * 6 * sizeof(float) + 1);
    uint8_t *rgba = malloc((size_t)w * (size_t)h * 4);
    double *t_shoal = malloc((size_t)frames * sizeof(double)),
           *t_gl = malloc((size_t)frames * sizeof(double));
    shoal_renderer *r = NULL;
    float *split3 = NULL;
    if (!rows || !split || !rgba || !t_shoal || !t_gl) {
        fprintf(stderr, "bench_llvmpipe: out of memory\n");
        goto done;
    }
    if (mesh_read(assets, "fish.obj", &full, &e) ||
        mesh_read(assets, "fish_lod1.obj", &reduced, &e) ||
        mesh_read(assets, "fish_lod2.obj", &coarse, &e)) {
        fprintf(stderr, "bench_llvmpipe: %s\n", e.message);
        goto done;
    }

    /* shoal: the `shoal render --bench` frame */
    shoal_render_desc rd = shoal_render_desc_default();
    rd.width = w;
    rd.height = h;
    rd.lod = lod;
    rd.thread_count = threads;
    rd.fish_length = 1.5f;
    rd.mesh = &full; /* the meshes GL draws, lent to shoal's create */
    rd.lod_mesh = &reduced;
    rd.lod_coarse_mesh = &coarse;
    float *soa = malloc(n * 6 * sizeof(float) + 1);
    if (!soa || shoal_render_create(&rd, &r, &e) ||
        (check >= 0 && shoal_render_keep_depth(r, 1, &e))) {
        fprintf(stderr, "bench_llvmpipe: %s\n", soa ? e.message : "out of memory");
        free(soa);
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 6; k++)
            soa[(size_t)k * n + i] = rows[6 * i + (size_t)k];
    shoal_render_instances inst;
    memset(&inst, 0, sizeof inst);
    inst.count = n;
    inst.px = soa;
    inst.py = soa + n;
    inst.pz = soa + 2 * n;
    inst.vx = soa + 3 * n;
    inst.vy = soa + 4 * n;
    inst.vz = soa + 5 * n;
    shoal_camera cam = shoal_camera_default();

    /* GL: the same camera, an RGBA8 + depth framebuffer object */
    GLuint prog = glCreateProgram(), vs = shader(GL_VERTEX_SHADER, vs_src),
           fs = shader(GL_FRAGMENT_SHADER, fs_src);
    if (!vs || !fs) {
        free(soa);
        goto done;
    }
    glAttachShader(prog, vs);
    glAttachShader(prog, fs);
    glLinkProgram(prog);
    glUseProgram(prog);
    GLuint fbo, rb[2];
    glGenFramebuffers(1, &fbo);
    glBindFramebuffer(GL_FRAMEBUFFER, fbo);
    glGenRenderbuffers(2, rb);
    glBindRenderbuffer(GL_RENDERBUFFER, rb[0]);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, w, h);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, rb[0]);
    glBindRenderbuffer(GL_RENDERBUFFER, rb[1]);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_DEPTH_COMPONENT24, w, h);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, rb[1]);
    gl_mesh gm_full, gm_reduced, gm_coarse, gm_splat;
    /* the splat: shoal's head (0, 0, 0.45) to tail (0, 0, -0.45), lit from the side */
    float seg_pos[6] = {0, 0, 0.45f, 0, 0, -0.45f}, seg_nrm[6] = {1, 0, 0, 1, 0, 0};
    uint32_t seg_idx[2] = {0, 1};
    shoal_mesh seg = {2, 0, seg_pos, seg_idx, seg_nrm};
    int seg_ok = mesh_upload(&seg, &gm_splat);
    gm_splat.index_count = 2;
    gm_splat.mode = GL_LINES;
    if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE || !seg_ok ||
        !mesh_upload(&full, &gm_full) || !mesh_upload(&reduced, &gm_reduced) ||
        !mesh_upload(&coarse, &gm_coarse)) {
        fprintf(stderr, "bench_llvmpipe: GL setup failed (0x%x)\n", glGetError());
        free(soa);
        goto done;
    }
    float vp[16];
    double vz[4], focal;
    camera_matrices(&cam, w, h, vp, vz, &focal);
    glUniformMatrix4fv(glGetUniformLocation(prog, "vp"), 1, GL_FALSE, vp);
    glUniform1f(glGetUniformLocation(prog, "len"), rd.fish_length);
    glUniform1f(glGetUniformLocation(prog, "max_speed"), 1.5f);
    glViewport(0, 0, w, h);
    glEnable(GL_DEPTH_TEST);
    glDepthFunc(GL_LESS);
    glEnable(GL_CULL_FACE);
    glClearColor(0.0f, 0.0f, 0.0f, 0.0f);

    size_t n_full = 0, n_reduced = 0, n_coarse = 0, n_splat = 0;
    split3 = malloc(n * 12 * sizeof(float) + 1); /* splats, then the coarse fish from n on */
    if (!split3) {
        fprintf(stderr, "bench_llvmpipe: out of memory\n");
        free(soa);
        goto done;
    }
    for (long f = -1; f < frames; f++) {
        double t0 = now_ms();
        if (shoal_render_frame(r, &inst, &cam, &e)) {
            fprintf(stderr, "bench_llvmpipe: %s\n", e.message);
            free(soa);
            goto done;
        }
        double t1 = now_ms();
        glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
        /* shoal's LOD rule on the fish's length on screen: the reduced mesh under
         * lod_reduced_px, the coarse one under lod_coarse_px, the head-to-tail segment under
         * lod_splat_px */
        n_full = n_reduced = n_coarse = n_splat = 0;
        double kpx = (double)rd.fish_length * focal;
        for (size_t i = 0; i < n; i++) {
            const float *p = rows + 6 * i;
            double d = -(vz[0] * p[0] + vz[1] * p[1] + vz[2] * p[2] + vz[3]);
            double len_px = d > 0 ? kpx / d : INFINITY;
            float *dst = !lod || len_px >= (double)rd.lod_reduced_px ? split + 6 * n_full++
                         : len_px >= (double)rd.lod_coarse_px ? split + 6 * (n - 1 - n_reduced++)
                         : len_px >= (double)rd.lod_splat_px  ? split3 + 6 * (n + n_coarse++)
                                                              : split3 + 6 * n_splat++;
            memcpy(dst, p, 6 * sizeof(float));
        }
        mesh_draw(&gm_full, split, n_full);
        mesh_draw(&gm_reduced, split + 6 * (n - n_reduced), n_reduced);
        mesh_draw(&gm_coarse, split3 + 6 * n, n_coarse);
        mesh_draw(&gm_splat, split3, n_splat);
        glFinish();
        double t2 = now_ms();
        if (f >= 0) {
            t_shoal[f] = t1 - t0;
            t_gl[f] = t2 - t1;
        }
    }
    if (glGetError() != GL_NO_ERROR) {
        fprintf(stderr, "bench_llvmpipe: a GL call failed\n");
        free(soa);
        goto done;
    }
    shoal_render_stats st = shoal_render_get_stats(r);
    double ms_shoal = shoal_profile_median(t_shoal, (size_t)frames),
           ms_gl = shoal_profile_median(t_gl, (size_t)frames);
    printf("bench_llvmpipe: %zu fish, %dx%d, LOD %s, %ld frames each (after one warm-up), "
           "alternating\n",
           n, w, h, lod ? "on" : "off", frames);
    printf("  shoal     %9.2f ms  (%s, %d threads; %llu full, %llu reduced, %llu coarse, %llu "
           "splat)\n",
           ms_shoal, st.isa, st.thread_count, (unsigned long long)st.instances_full,
           (unsigned long long)st.instances_reduced, (unsigned long long)st.instances_coarse,
           (unsigned long long)st.instances_splat);
    printf("  llvmpipe  %9.2f ms  (%s; %zu full, %zu reduced, %zu coarse, %zu lines)\n", ms_gl,
           gl_renderer, n_full, n_reduced, n_coarse, n_splat);
    printf("  ratio     %9.2f x  (llvmpipe / shoal)\n", ms_gl / ms_shoal);
    printf("{\"count\": %zu, \"width\": %d, \"height\": %d, \"lod\": %d, \"shoal_ms\": %.3f, "
           "\"llvmpipe_ms\": %.3f, \"ratio\": %.3f}\n",
           n, w, h, lod, ms_shoal, ms_gl, ms_gl / ms_shoal);
    rc = 0;
    if (check >= 0) {
        /* coverage: shoal's kept depth (no fish: 1) against GL's alpha (rows bottom-up) */
        const float *z;
        const uint32_t *ids;
        shoal_render_depth(r, &z, &ids);
        glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, rgba);
        size_t both = 0, either = 0;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                int a = z[(size_t)y * (size_t)w + (size_t)x] < 1.0f;
                int b = rgba[((size_t)(h - 1 - y) * (size_t)w + (size_t)x) * 4 + 3] != 0;
                both += a && b;
                either += a || b;
            }
        double iou = either ? (double)both / (double)either : 1.0;
        printf("  coverage  %zu pixels in both, %zu in either: IoU %.4f (need >= %.4f)\n", both,
               either, iou, check);
        if (!(iou >= check) || either == 0) {
            fprintf(stderr, "bench_llvmpipe: GL and shoal drew different fish (IoU %.4f)\n", iou);
            rc = 1;
        }
    }
    free(soa);
done:
    free(split3);
    shoal_render_destroy(r);
    shoal_mesh_free(&full);
    shoal_mesh_free(&reduced);
    shoal_mesh_free(&coarse);
    free(rows);
    free(split);
    free(rgba);
    free(t_shoal);
    free(t_gl);
    eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    eglDestroyContext(dpy, ctx);
    eglTerminate(dpy);
    return rc;
}
