/* SPDX-License-Identifier: MIT */
/* lod_error: the image error of each level of detail (issue 29, docs/RENDER.md). Draws the
 * `shoal render --bench` scene (N fish, seed 1, the benchmark camera, fish length 1.5,
 * 1280x720, lit) with the exact mesh for every fish (LOD off: the reference) and with each
 * level switched on in turn, and compares the frames pixel by pixel:
 *   reduced  fish under R px draw fish_lod1.obj           (against the exact frame)
 *   coarse   fish under C px draw fish_lod2.obj instead  (against the reduced frame)
 *   splat    fish under S px are splats                  (against the coarse frame)
 *   all      the three together                          (against the exact frame)
 * For each: the fish the level took, the pixels that changed (share of the image and of the
 * fish pixels of the reference), the mean absolute difference per channel over the image
 * and over the changed pixels, and the frame's median time. --coarse-px may be given
 * several times (a sweep of C).
 *
 * --eye-z Z moves the camera back (default 75: median fish ~12 px; 300: ~3 px, splats).
 *
 *   lod_error [--count N] [--threads T] [--frames K] [--splat-px S] [--reduced-px R]
 *             [--coarse-px C ...] [--eye-z Z] */
#include "shoal/shoal.h"
#include "support/scenes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct frame {
    uint32_t *px;
    shoal_render_stats st;
    double ms;
} frame;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int draw(const shoal_render_desc *d, const shoal_render_instances *inst,
                const shoal_camera *cam, int frames, frame *out)
{
    shoal_renderer *r;
    shoal_error e;
    if (shoal_render_create(d, &r, &e)) {
        fprintf(stderr, "lod_error: %s\n", e.message);
        return 1;
    }
    double t[64];
    frames = frames < 1 ? 1 : frames > 64 ? 64 : frames;
    for (int f = -1; f < frames; f++) {
        if (shoal_render_frame(r, inst, cam, &e)) {
            fprintf(stderr, "lod_error: %s\n", e.message);
            shoal_render_destroy(r);
            return 1;
        }
        if (f >= 0)
            t[f] = shoal_render_get_stats(r).total_ms;
    }
    qsort(t, (size_t)frames, sizeof *t, cmp_double);
    out->ms = t[frames / 2];
    out->st = shoal_render_get_stats(r);
    shoal_framebuffer fb = shoal_render_framebuffer(r);
    size_t n = (size_t)fb.width * (size_t)fb.height;
    out->px = malloc(n * sizeof *out->px);
    if (out->px)
        memcpy(out->px, fb.argb, n * sizeof *out->px);
    shoal_render_destroy(r);
    return out->px ? 0 : 1;
}

/* pixels differing, and the sum of |difference| over the three channels */
static void compare(const uint32_t *a, const uint32_t *b, size_t n, size_t *changed,
                    double *sum_abs)
{
    *changed = 0;
    *sum_abs = 0;
    for (size_t i = 0; i < n; i++) {
        if (a[i] == b[i])
            continue;
        ++*changed;
        for (int c = 0; c < 3; c++) {
            int x = (int)(a[i] >> (8 * c) & 255), y = (int)(b[i] >> (8 * c) & 255);
            *sum_abs += x > y ? x - y : y - x;
        }
    }
}

static void row(const char *what, const char *against, uint64_t fish, const frame *f,
                const frame *ref, size_t n, size_t fish_px)
{
    size_t ch;
    double s;
    compare(f->px, ref->px, n, &ch, &s);
    printf("| %s | %s | %llu | %.3f%% | %.2f%% | %.4f | %.1f | %.2f |\n", what, against,
           (unsigned long long)fish, 100.0 * (double)ch / (double)n,
           fish_px ? 100.0 * (double)ch / (double)fish_px : 0.0, s / (3.0 * (double)n),
           ch ? s / (3.0 * (double)ch) : 0.0, f->ms);
}

int main(int argc, char **argv)
{
    long count = 100000, threads = 2, frames = 5;
    float splat_px = 4.0f, reduced_px = 26.0f, coarse[16], eye_z = 75.0f;
    int nc = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "lod_error: %s needs a value\n", a);
            return 2;
        }
        i++;
        if (strcmp(a, "--count") == 0)
            count = strtol(v, NULL, 10);
        else if (strcmp(a, "--threads") == 0)
            threads = strtol(v, NULL, 10);
        else if (strcmp(a, "--frames") == 0)
            frames = strtol(v, NULL, 10);
        else if (strcmp(a, "--splat-px") == 0)
            splat_px = strtof(v, NULL);
        else if (strcmp(a, "--reduced-px") == 0)
            reduced_px = strtof(v, NULL);
        else if (strcmp(a, "--eye-z") == 0)
            eye_z = strtof(v, NULL);
        else if (strcmp(a, "--coarse-px") == 0 && nc < 16)
            coarse[nc++] = strtof(v, NULL);
        else {
            fprintf(stderr, "lod_error: unknown option %s\n", a);
            return 2;
        }
    }
    if (count < 1 || threads < 0 || !(splat_px >= 0) || !(reduced_px >= splat_px)) {
        fprintf(stderr, "lod_error: bad count, threads or thresholds\n");
        return 2;
    }
    if (!nc)
        coarse[nc++] = 12.0f;
    size_t n = (size_t)count;
    float *rows = scene_render_bench(n, 1);
    float *soa = malloc(n * 6 * sizeof(float));
    shoal_mesh full, reduced, coarse_mesh;
    shoal_error e;
    memset(&reduced, 0, sizeof reduced);
    memset(&coarse_mesh, 0, sizeof coarse_mesh);
    if (!rows || !soa || shoal_mesh_load_asset("fish.obj", &full, &e) ||
        shoal_mesh_load_asset("fish_lod1.obj", &reduced, &e) ||
        shoal_mesh_load_asset("fish_lod2.obj", &coarse_mesh, &e)) {
        fprintf(stderr, "lod_error: %s\n", rows && soa ? e.message : "out of memory");
        return 1;
    }
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 6; k++)
            soa[(size_t)k * n + i] = rows[6 * i + (size_t)k];
    shoal_render_instances inst = {n,           soa,         soa + n,     soa + 2 * n,
                                   soa + 3 * n, soa + 4 * n, soa + 5 * n, NULL,
                                   NULL,        NULL,        NULL};
    shoal_camera cam = shoal_camera_default(); /* the benchmark's: (0, 0, 75) at the origin */
    cam.eye[2] = eye_z;
    shoal_render_desc d = shoal_render_desc_default();
    d.fish_length = 1.5f;
    d.thread_count = (int)threads;
    d.mesh = &full;
    d.lod_mesh = &reduced;
    d.lod_coarse_mesh = &coarse_mesh;
    const size_t np = (size_t)d.width * (size_t)d.height;
    frame exact, red, bg;
    d.lod = 0;
    shoal_render_instances none = inst;
    none.count = 0;
    if (draw(&d, &inst, &cam, (int)frames, &exact) || draw(&d, &none, &cam, 1, &bg))
        return 1;
    size_t fish_px = 0; /* the pixels where the exact frame is not the background */
    for (size_t i = 0; i < np; i++)
        fish_px += exact.px[i] != bg.px[i];
    free(bg.px);
    d.lod = 1;
    d.lod_splat_px = d.lod_coarse_px = 0.0f;
    d.lod_reduced_px = reduced_px;
    if (draw(&d, &inst, &cam, (int)frames, &red))
        return 1;
    printf("lod_error: %zu fish, %dx%d, eye z %g, %ld threads, %s; reference %.2f ms, %llu fish "
           "drawn over %.1f%% of the image\n",
           n, d.width, d.height, (double)eye_z, threads, exact.st.isa, exact.ms,
           (unsigned long long)exact.st.instances_visible, 100.0 * (double)fish_px / (double)np);
    printf("| level (threshold px) | against | fish | pixels changed (image) | of fish pixels | "
           "mean abs diff, image | mean abs diff, changed | frame ms |\n");
    printf("| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    char what[64];
    snprintf(what, sizeof what, "reduced (< %g)", (double)reduced_px);
    row(what, "exact", red.st.instances_reduced, &red, &exact, np, fish_px);
    for (int c = 0; c < nc; c++) {
        frame co, sp;
        d.lod_splat_px = 0.0f;
        d.lod_coarse_px = coarse[c];
        if (draw(&d, &inst, &cam, (int)frames, &co))
            return 1;
        snprintf(what, sizeof what, "coarse (< %g)", (double)coarse[c]);
        row(what, "reduced", co.st.instances_coarse, &co, &red, np, fish_px);
        d.lod_splat_px = splat_px;
        if (draw(&d, &inst, &cam, (int)frames, &sp))
            return 1;
        snprintf(what, sizeof what, "splat (< %g)", (double)splat_px);
        row(what, "coarse", sp.st.instances_splat, &sp, &co, np, fish_px);
        snprintf(what, sizeof what, "all (%g / %g / %g)", (double)splat_px, (double)coarse[c],
                 (double)reduced_px);
        row(what, "exact", sp.st.instances_visible - sp.st.instances_full, &sp, &exact, np,
            fish_px);
        free(co.px);
        free(sp.px);
    }
    free(exact.px);
    free(red.px);
    shoal_mesh_free(&full);
    shoal_mesh_free(&reduced);
    shoal_mesh_free(&coarse_mesh);
    free(rows);
    free(soa);
    return 0;
}
