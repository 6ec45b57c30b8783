/* SPDX-License-Identifier: MIT */
/* `shoal render`: a state file (.npy) in, a PNG out, through the software renderer; and
 * `shoal render --bench N --count M`, the speed-target scene of docs/RENDER.md timed over N
 * frames. Owns only the command line: bad input prints one line "shoal render: problem" and
 * exits 2, and no output file is left behind on any error (the PNG writer is atomic). */
#include "app/app.h"
#include "app/cli_specs.h"
#include "app/options.h"
#include "app/outdir.h"
#include "app/overlay.h"
#include "app/traj.h"
#include "shoal/system.h"
#include "shoal/profile.h"
#include "mpi_app.h"
#include "support/scenes.h"
#include "shoal/render.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static const char *render_usage =
    "--in STATE.npy --out FRAME.png [--size WxH] [--eye x,y,z --target x,y,z] [options]\n"
    "       shoal render --in TRAJ_DIR (--out FRAMES_DIR | --video F.mp4) [--follow] [options]\n"
    "       shoal render --bench N [--count M] [--out FRAME.png] [options]";

typedef struct render_opts {
    shoal_render_desc desc;
    shoal_camera cam;
    int have_camera;
    int stats;
    long long bench, count, seed, threads;
} render_opts;

static int parse_opts(const opt_values *o, render_opts *ro)
{
    memset(ro, 0, sizeof *ro);
    ro->desc = shoal_render_desc_default();
    ro->cam = shoal_camera_default();
    shoal_render_desc *d = &ro->desc;
    int rc;
    if ((rc = app_parse_size(o, &d->width, &d->height)))
        return rc;
    double v;
    if ((rc = options_double(o, "fov-deg", 1e-3, 179.9, &v)))
        return rc;
    ro->cam.fov_deg = (float)v;
    if ((rc = options_double(o, "near", 1e-6, 1e30, &v)))
        return rc;
    ro->cam.near = (float)v;
    if ((rc = options_double(o, "far", 1e-6, 1e30, &v)))
        return rc;
    ro->cam.far = (float)v;
    if (!(ro->cam.far > ro->cam.near))
        return options_fail(o, "--far %g must be greater than --near %g", (double)ro->cam.far,
                            (double)ro->cam.near);
    d->fish_length = APP_FISH_LENGTH; /* or the --scene's [camera] fish_length */
    if (options_given(o, "fish-length")) {
        if ((rc = options_double(o, "fish-length", 1e-6, 1e6, &v)))
            return rc;
        d->fish_length = (float)v;
    } else if (options_given(o, "scene")) {
        shoal_scene sc;
        shoal_error se;
        if (shoal_scene_load(options_get(o, "scene"), &sc, &se))
            return app_fail_status(o, &se);
        if (sc.has_fish_length)
            d->fish_length = sc.fish_length;
    }
    const char *shade = options_get(o, "shade");
    if (strcmp(shade, "lit") == 0)
        d->shade = SHOAL_SHADE_LIT;
    else if (strcmp(shade, "id") == 0)
        d->shade = SHOAL_SHADE_ID;
    else
        return options_fail(o, "--shade: '%s' is not lit or id", shade);
    const char *lod = options_get(o, "lod");
    if (strcmp(lod, "on") == 0)
        d->lod = 1;
    else if (strcmp(lod, "off") == 0)
        d->lod = 0;
    else
        return options_fail(o, "--lod: '%s' is not on or off", lod);
    const char *occ = options_get(o, "occlusion");
    if (strcmp(occ, "on") == 0)
        d->occlusion = 1;
    else if (strcmp(occ, "off") == 0)
        d->occlusion = 0;
    else
        return options_fail(o, "--occlusion: '%s' is not on or off", occ);
    if ((rc = options_int(o, "threads", 0, SHOAL_MAX_THREADS, &ro->threads)))
        return rc;
    d->thread_count = (int)ro->threads;
    shoal_error e;
    if (shoal_isa_parse(options_get(o, "simd"), &d->isa, &e))
        return app_fail_status(o, &e);
    int has_eye = options_given(o, "eye"), has_target = options_given(o, "target");
    if (has_eye != has_target)
        return options_fail(o, "give both --eye and --target, or neither to frame the state "
                               "automatically");
    if (has_eye) {
        if ((rc = options_vec3(o, "eye", ro->cam.eye)) ||
            (rc = options_vec3(o, "target", ro->cam.target)))
            return rc;
        if (ro->cam.eye[0] == ro->cam.target[0] && ro->cam.eye[1] == ro->cam.target[1] &&
            ro->cam.eye[2] == ro->cam.target[2])
            return options_fail(o, "--eye and --target are the same point");
        ro->have_camera = 1;
    }
    ro->stats = options_given(o, "stats");
    if (options_given(o, "bench")) {
        if ((rc = options_int(o, "bench", 1, 100000, &ro->bench)))
            return rc;
        if ((rc = options_int(o, "count", 0, 100000000, &ro->count)))
            return rc;
        if ((rc = options_int(o, "seed", 0, INT64_MAX, &ro->seed)))
            return rc;
        if (options_given(o, "in"))
            return options_fail(o, "--bench draws its own scene; it takes no --in");
    } else {
        if (options_given(o, "count") || options_given(o, "seed"))
            return options_fail(o, "--count and --seed are for --bench");
        if (!options_given(o, "in"))
            return options_fail(o, "--in is required (see shoal render --help)");
        if (!options_given(o, "out") && !options_given(o, "video"))
            return options_fail(o, "--out is required (see shoal render --help)");
    }
    return 0;
}

/* The PNG of a render, as outdir.h's staging writes it. */
typedef struct png_ctx {
    const uint32_t *argb;
    int width, height, stride_px;
} png_ctx;

static shoal_status write_png(const char *path, const void *ctx, shoal_error *e)
{
    const png_ctx *c = ctx;
    return shoal_io_png_write(path, c->argb, c->width, c->height, c->stride_px, e);
}

/* Structure-of-arrays copy of (N, 6) rows: the renderer's view wants one array per column. */
typedef struct soa6 {
    float *buf;
    shoal_render_instances inst;
} soa6;

static int soa_from_rows(const float *rows, size_t n, soa6 *s)
{
    s->buf = malloc((n ? n : 1) * 6 * sizeof(float));
    if (!s->buf)
        return 0;
    float *c[6];
    for (int k = 0; k < 6; k++)
        c[k] = s->buf + (size_t)k * n;
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 6; k++)
            c[k][i] = rows[i * 6 + (size_t)k];
    memset(&s->inst, 0, sizeof s->inst);
    s->inst.count = n;
    s->inst.px = c[0];
    s->inst.py = c[1];
    s->inst.pz = c[2];
    s->inst.vx = c[3];
    s->inst.vy = c[4];
    s->inst.vz = c[5];
    return 1;
}

static void print_stats(const shoal_render_stats *s, shoal_framebuffer fb)
{
    printf("render: %s, %d threads, %dx%d\n", s->isa, s->thread_count, fb.width, fb.height);
    printf("  instances  %llu given, %llu visible (%llu full, %llu reduced, %llu coarse, %llu "
           "splat, %llu clipped)\n",
           (unsigned long long)s->instances, (unsigned long long)s->instances_visible,
           (unsigned long long)s->instances_full, (unsigned long long)s->instances_reduced,
           (unsigned long long)s->instances_coarse, (unsigned long long)s->instances_splat,
           (unsigned long long)s->instances_clipped);
    printf("  triangles  %llu submitted, %llu visible, %llu rasterized (tri x tile)\n",
           (unsigned long long)s->triangles_submitted, (unsigned long long)s->triangles_visible,
           (unsigned long long)s->triangles_rasterized);
    printf("  pixels     %llu written\n", (unsigned long long)s->pixels_written);
    printf("  occlusion  %llu (fish, tile) pairs skipped as hidden\n",
           (unsigned long long)s->refs_hidden);
    printf("  ms         instance %.3f  setup %.3f  raster %.3f  resolve %.3f  total %.3f\n",
           s->instance_ms, s->setup_ms, s->raster_ms, s->resolve_ms, s->total_ms);
    printf("  hash       %016llx\n", (unsigned long long)shoal_render_hash(fb));
}

static int run_bench(const opt_values *o, render_opts *ro, shoal_renderer *r, const soa6 *s)
{
    int n = (int)ro->bench;
    double *tot = malloc(sizeof(double) * 6 * (size_t)n);
    if (!tot)
        return options_fail(o, "out of memory");
    double *ins = tot + n, *set = tot + 2 * n, *ras = tot + 3 * n, *res = tot + 4 * n;
    double *cpu = tot + 5 * n;
    shoal_error e;
    for (int i = -2; i < n; i++) { /* two warm-up frames grow every buffer */
        struct timespec c0, c1;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
        shoal_status fst = shoal_render_frame(r, &s->inst, &ro->cam, &e);
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
        if (fst) {
            free(tot);
            return app_fail_status(o, &e);
        }
        if (i < 0)
            continue;
        shoal_render_stats st = shoal_render_get_stats(r);
        tot[i] = st.total_ms;
        cpu[i] = (double)(c1.tv_sec - c0.tv_sec) * 1e3 + (double)(c1.tv_nsec - c0.tv_nsec) * 1e-6;
        ins[i] = st.instance_ms;
        set[i] = st.setup_ms;
        ras[i] = st.raster_ms;
        res[i] = st.resolve_ms;
    }
    shoal_render_stats st = shoal_render_get_stats(r);
    double best = tot[0];
    for (int i = 1; i < n; i++)
        best = tot[i] < best ? tot[i] : best;
    double mt = shoal_profile_median(tot, (size_t)n);
    printf("bench: %lld fish, %dx%d, shade %s, lod %s, fish length %g, %s, %d threads, %d "
           "frames\n",
           ro->count, ro->desc.width, ro->desc.height,
           ro->desc.shade == SHOAL_SHADE_ID ? "id" : "lit", ro->desc.lod ? "on" : "off",
           (double)ro->desc.fish_length, st.isa, st.thread_count, n);
    printf("  median ms  total %.3f  (instance %.3f  setup %.3f  raster %.3f  resolve %.3f)  "
           "min %.3f\n",
           mt, shoal_profile_median(ins, (size_t)n), shoal_profile_median(set, (size_t)n),
           shoal_profile_median(ras, (size_t)n), shoal_profile_median(res, (size_t)n), best);
    printf("  cpu ms     %.3f per frame (all threads; wall time on a busy machine overstates)\n",
           shoal_profile_median(cpu, (size_t)n));
    printf("  triangles  submitted %llu (%.1f M/s)  visible %llu (%.1f M/s)  rasterized %llu\n",
           (unsigned long long)st.triangles_submitted, (double)st.triangles_submitted / (mt * 1e3),
           (unsigned long long)st.triangles_visible, (double)st.triangles_visible / (mt * 1e3),
           (unsigned long long)st.triangles_rasterized);
    printf("  instances  visible %llu (full %llu, reduced %llu, coarse %llu, splat %llu, clipped "
           "%llu)\n",
           (unsigned long long)st.instances_visible, (unsigned long long)st.instances_full,
           (unsigned long long)st.instances_reduced, (unsigned long long)st.instances_coarse,
           (unsigned long long)st.instances_splat, (unsigned long long)st.instances_clipped);
    printf("  hash       %016llx\n",
           (unsigned long long)shoal_render_hash(shoal_render_framebuffer(r)));
    free(tot);
    return 0;
}

/* The frame into px (the overlays' canvas), and the world's box over it. */
static void draw_box(const shoal_camera *cam, shoal_renderer *r, const shoal_world *w, uint32_t *px)
{
    shoal_framebuffer fb = shoal_render_framebuffer(r);
    canvas cv = {px, fb.width, fb.height, fb.width};
    for (int y = 0; y < fb.height; y++)
        memcpy(px + (size_t)y * (size_t)fb.width, fb.argb + (size_t)y * (size_t)fb.stride_px,
               (size_t)fb.width * 4);
    proj p = proj_make_world(cam, fb.width, fb.height, w);
    overlay_world_box(&cv, &p, w, OVERLAY_BOX_RGB, 200);
}

/* --scene: obstacles and heading targets drawn over the frame, as `shoal run` draws them. */
static int draw_scene(const opt_values *o, const shoal_camera *cam, shoal_renderer *r, uint32_t *px,
                      const shoal_world *w)
{
    const char *path = options_get(o, "scene");
    shoal_scene sc;
    shoal_error e;
    if (shoal_scene_load(path, &sc, &e))
        return options_fail(o, "%s", e.message);
    double t = sc.desc.t0_s;
    if (options_given(o, "time")) {
        int rc = options_double(o, "time", -1e15, 1e15, &t);
        if (rc)
            return rc;
    }
    shoal_framebuffer fb = shoal_render_framebuffer(r);
    canvas cv = {px, fb.width, fb.height, fb.width}; /* draw_box copied the frame there */
    proj p = proj_make_world(cam, fb.width, fb.height, w);
    for (int k = 0; k < sc.mesh_count; k++) {
        shoal_mesh m;
        if (shoal_mesh_load(sc.meshes[k].path, &m, &e)) {
            options_fail(o, "%s: [mesh %s]: %s", path, sc.meshes[k].name, e.message);
            return app_exit_code(e.status);
        }
        overlay_mesh(&cv, &p, &m, &sc.meshes[k].transform, OVERLAY_MESH_RGB, 110);
        shoal_mesh_free(&m);
    }
    for (int k = 0; k < (int)sc.desc.params.sphere_count; k++)
        overlay_sphere(&cv, &p, sc.desc.params.spheres[k].center, sc.desc.params.spheres[k].radius,
                       OVERLAY_MESH_RGB, 90);
    shoal_sim_desc d = sc.desc;
    d.boid_count = 1;
    /* the targets only: they do not depend on the world (which the step refuses for now) */
    d.world = shoal_world_default();
    shoal_sim *sim;
    if (shoal_sim_create(&d, &sim, &e))
        return options_fail(o, "%s", e.message);
    float xyz[SHOAL_MAX_TARGETS * 3];
    size_t n = shoal_sim_targets(sim, t, xyz, SHOAL_MAX_TARGETS);
    shoal_sim_destroy(sim);
    for (size_t k = 0; k < n; k++)
        overlay_target(&cv, &p, xyz + 3 * k, 0);
    return 0;
}

/* Under mpirun: this rank's share of the state at `in` (rank 0 checks the file first and
 * reads a FIFO for all) as s (instance ids = the rows, in *ids) and, without a camera, the
 * camera that frames the whole school. 0, or the exit code after printing. */
static int read_share(const opt_values *o, render_opts *ro, const char *in, soa6 *s, uint32_t **ids)
{
    shoal_error e;
    shoal_sim_desc sd = shoal_sim_desc_default();
    mpi_school *m;
    s->buf = NULL;
    *ids = NULL;
    if (mpi_school_read(&sd, in, &m, &e))
        return app_fail_status(o, &e);
    shoal_status st = SHOAL_OK;
    if (!ro->have_camera)
        st = mpi_school_frame(m, ro->desc.fish_length,
                              (float)ro->desc.width / (float)ro->desc.height, &ro->cam, &e);
    size_t n = mpi_school_local_count(m);
    if (!st) {
        s->buf = malloc((n ? n : 1) * 6 * sizeof(float));
        *ids = malloc((n ? n : 1) * sizeof **ids);
        st = mpi_agree(s->buf && *ids
                           ? SHOAL_OK
                           : shoal_error_set(&e, SHOAL_ERR_NOMEM, "out of memory for %zu fish", n),
                       &e);
    }
    if (!st) {
        float *c[6];
        for (int k = 0; k < 6; k++)
            c[k] = s->buf + (size_t)k * n;
        mpi_school_local(m, c, *ids);
        memset(&s->inst, 0, sizeof s->inst);
        s->inst.count = n;
        s->inst.px = c[0];
        s->inst.py = c[1];
        s->inst.pz = c[2];
        s->inst.vx = c[3];
        s->inst.vy = c[4];
        s->inst.vz = c[5];
        s->inst.id = *ids;
    }
    mpi_school_destroy(m);
    if (st) {
        free(s->buf);
        free(*ids);
        return app_fail_status(o, &e);
    }
    ro->have_camera = 1;
    return 0;
}

/* A frame a replay writes into its --out DIR (render_replay.c). */
static int replay_frame(const char *name)
{
    long long step;
    return app_frame_step(name, "frame_", ".png", &step);
}

int cmd_render(int argc, char **argv)
{
    opt_values o;
    int rc = options_parse(&o, "render", render_usage, app_render_specs, app_render_spec_count, 0,
                           argc, argv);
    if (rc)
        return rc == 1 ? 0 : rc;
    render_opts ro;
    if ((rc = parse_opts(&o, &ro)))
        return rc;
    struct stat in_st;
    int replay = !ro.bench && stat(options_get(&o, "in"), &in_st) == 0 && S_ISDIR(in_st.st_mode);
    /* outputs checked before the work (a replay's --out is a directory of frames) */
    if ((rc = options_check_outputs(&o, replay ? (const char *const[]){"video", "trace", NULL}
                                               : (const char *const[]){"out", "trace", NULL})))
        return rc;
    /* Under mpirun with 2+ ranks each rank draws a share of the rows and the images are
     * composited by depth (docs/ARCHITECTURE.md, "MPI"); the rest runs in one process. */
    const int ranks = mpi_running() ? mpi_size() : 1;
    if (ranks > 1 && (replay || ro.bench || options_given(&o, "trace")))
        return options_fail(&o, "under mpirun, render draws one state file: --in DIR (replay), "
                                "--bench and --trace run in one process");
    /* no output over an input: the state, the meshes, a frame of the replayed trajectory;
     * nor over a frame of the replay's --out DIR */
    const char *const outs[] = {"out", "trace", "video", NULL};
    if ((rc = replay ? app_output_not_in_input_dir(&o, outs + 1, options_get(&o, "in"), traj_owns,
                                                   "the trajectory --in")
                     : app_output_not_input(&o, outs, options_get(&o, "in"), "--in")) ||
        (rc = app_output_not_input(&o, outs, options_get(&o, "scene"), "--scene")) ||
        (rc = app_output_not_input(&o, outs, options_get(&o, "mesh"), "--mesh")) ||
        (rc = app_output_not_input(&o, outs, options_get(&o, "lod-mesh"), "--lod-mesh")) ||
        (replay && (rc = app_outputs_distinct(&o, outs + 1, options_get(&o, "out"), replay_frame))))
        return rc;
    if (replay)
        return app_render_replay(&o, &ro.desc, ro.cam, ro.have_camera); /* a trajectory */
    if (options_given(&o, "video") || options_given(&o, "follow") || options_given(&o, "fps") ||
        options_given(&o, "overwrite"))
        return options_fail(&o, "--video, --follow, --fps and --overwrite replay a trajectory: "
                                "--in DIR");
    if (!options_given(&o, "out") && !ro.bench)
        return options_fail(&o, "--out is required (see shoal render --help)");

    shoal_error e;
    float *rows = NULL;
    size_t n = 0;
    const char *in = options_get(&o, "in");
    soa6 s;
    uint32_t *ids = NULL;
    shoal_world world = shoal_world_default();
    if (!ro.bench && (rc = app_render_world(&o, &world)))
        return rc;
    int boxed = world.size[0] > 0 || world.size[1] > 0 || world.size[2] > 0;
    if (app_world_drawn(&world) && !ro.have_camera) {
        /* the world's box frames the picture (2D: a map from above) */
        ro.cam = shoal_render_camera_world(&world, (float)ro.desc.width / (float)ro.desc.height,
                                           ro.desc.fish_length);
        ro.have_camera = 1;
    }
    if (ranks > 1) {
        if ((rc = read_share(&o, &ro, in, &s, &ids)))
            return rc;
    } else {
        if (ro.bench) {
            n = (size_t)ro.count;
            rows = scene_render_bench(n, (uint64_t)ro.seed);
            if (!rows)
                return options_fail(&o, "out of memory for %zu fish", n);
            if (!options_given(&o, "eye")) {
                /* the benchmark's camera unless the user gave one */
                ro.cam = shoal_camera_default();
                ro.have_camera = 1;
            }
            if (!options_given(&o, "fish-length"))
                ro.desc.fish_length = 1.5f;
        } else {
            if (shoal_io_npy_read(in, &rows, &n, &e))
                return app_fail_status(&o, &e);
            if (shoal_state_check_finite(rows, n, in, &e) ||
                shoal_world_check_rows(&world, rows, n, in, &e)) {
                free(rows);
                return app_fail_status(&o, &e);
            }
        }
        if (!soa_from_rows(rows, n, &s)) {
            free(rows);
            return options_fail(&o, "out of memory for %zu fish", n);
        }
        free(rows);
        if (!ro.have_camera)
            shoal_render_camera_frame(s.inst.px, s.inst.py, s.inst.pz, n, ro.desc.fish_length,
                                      (float)ro.desc.width / (float)ro.desc.height, &ro.cam);
    }

    shoal_renderer *r = NULL;
    shoal_status cst = app_render_create(
        &ro.desc, options_given(&o, "mesh") ? options_get(&o, "mesh") : NULL,
        options_given(&o, "lod-mesh") ? options_get(&o, "lod-mesh") : NULL, &r, &e);
    if (!cst)
        cst = shoal_render_set_world(r, &world, &e);
    if (!cst && ranks > 1)
        cst = shoal_render_keep_depth(r, 1, &e);
    if (ranks > 1)
        cst = mpi_agree(cst, &e); /* every rank goes on, or none */
    if (cst) {
        shoal_render_destroy(r);
        free(s.buf);
        free(ids);
        return app_fail_status(&o, &e);
    }
    const char *trace = options_get(&o, "trace");
    if (trace) {
        /* a span per stage per thread and one per frame; preallocated, capped at 64 MiB */
        int tracks = ro.threads > 0 ? (int)ro.threads : shoal_system_thread_count();
        size_t frames = ro.bench ? (size_t)ro.bench + 2 : 1;
        size_t spans = frames * 5 + 16, cap = ((size_t)64 << 20) / 32 / (size_t)tracks;
        if (shoal_profile_trace_start(shoal_render_get_profile(r), tracks,
                                      spans < cap ? spans : cap, &e)) {
            shoal_render_destroy(r);
            free(s.buf);
            return app_fail_status(&o, &e);
        }
    }
    if (ro.bench) {
        rc = run_bench(&o, &ro, r, &s);
    } else {
        /* under MPI every rank draws its share, rank 0 gets the image of all */
        mpi_frame *fr = NULL;
        shoal_status fst = ranks > 1 ? mpi_frame_create(&fr, &e) : SHOAL_OK;
        if (!fst)
            fst = ranks > 1 ? mpi_frame_draw(fr, r, &s.inst, &ro.cam, &e)
                            : shoal_render_frame(r, &s.inst, &ro.cam, &e);
        mpi_frame_stats cs = {0};
        if (!fst && ranks > 1 && ro.stats)
            cs = mpi_frame_get_stats(fr, 1); /* collective */
        mpi_frame_destroy(fr);
        if (fst) {
            rc = app_fail_status(&o, &e);
        } else if (ro.stats) {
            shoal_render_stats st = shoal_render_get_stats(r);
            print_stats(&st, shoal_render_framebuffer(r));
            if (ranks > 1 && mpi_rank() == 0)
                fprintf(stderr,
                        "composite over %d ranks: %.3f ms (slowest rank: wait %.3f, encode %.3f, "
                        "compare %.3f, transfer %.3f); %llu bytes moved, %llu pixels drawn\n",
                        ranks, cs.total_ms, cs.wait_ms, cs.encode_ms, cs.compare_ms, cs.transfer_ms,
                        (unsigned long long)cs.bytes_sent, (unsigned long long)cs.pixels_drawn);
        }
    }
    if (rc == 0 && ro.stats) {
        char title[160];
        shoal_render_stats st = shoal_render_get_stats(r);
        snprintf(title, sizeof title, "shoal render: %dx%d, %s, %d threads", ro.desc.width,
                 ro.desc.height, st.isa, st.thread_count);
        shoal_profile_write_table(shoal_render_get_profile(r), stderr, title, 1);
    }
    const char *out = options_out(&o); /* '-': drawn, not written */
    uint32_t *over = NULL;
    if (rc == 0 && (options_given(&o, "scene") || boxed)) {
        shoal_framebuffer fb = shoal_render_framebuffer(r);
        over = malloc((size_t)fb.width * (size_t)fb.height * 4);
        if (!over)
            rc = options_fail(&o, "out of memory");
        if (over)
            draw_box(&ro.cam, r, &world, over); /* (no box: the frame alone) */
        if (over && options_given(&o, "scene"))
            rc = draw_scene(&o, &ro.cam, r, over, &world);
    }
    if (ranks > 1 && mpi_agree(rc ? SHOAL_ERR_INPUT : SHOAL_OK, &e) && rc == 0) {
        /* another rank failed (its own message is not printed: only rank 0 speaks) */
        rc = app_fail_status(&o, &e);
        rc = rc ? rc : 2;
    }
    if (rc == 0 && ranks == 1 && (out || trace)) {
        /* both outputs staged, then moved in together: a failed render replaces neither */
        shoal_framebuffer fb = shoal_render_framebuffer(r);
        png_ctx pc = {over ? over : fb.argb, fb.width, fb.height, over ? fb.width : fb.stride_px};
        app_staged sg[2];
        memset(sg, 0, sizeof sg);
        int ns = 0;
        shoal_status wst = SHOAL_OK;
        if (app_stdout_check("render")) /* --stats lost: a failed render writes nothing */
            rc = 2, wst = SHOAL_ERR_IO;
        if (!wst && out)
            wst = app_stage_file(&sg[ns++], out, write_png, &pc, &e);
        if (!wst && trace)
            wst =
                app_stage_file(&sg[ns++], trace, app_write_trace, shoal_render_get_profile(r), &e);
        if (!wst)
            wst = app_stage_commit_all(sg, ns, &e);
        for (int i = 0; i < ns; i++)
            app_stage_abort(&sg[i]);
        if (wst && !rc)
            rc = app_fail_status(&o, &e);
        out = NULL;
        shoal_profile_trace_stop(shoal_render_get_profile(r));
        trace = NULL;
    }
    if (rc == 0 && out) {
        shoal_framebuffer fb = shoal_render_framebuffer(r);
        shoal_status wst = SHOAL_OK;
        if (mpi_rank() == 0)
            wst = over ? shoal_io_png_write(out, over, fb.width, fb.height, fb.width, &e)
                       : shoal_io_png_write(out, fb.argb, fb.width, fb.height, fb.stride_px, &e);
        if (ranks > 1)
            wst = mpi_agree(wst, &e);
        if (wst)
            rc = app_fail_status(&o, &e);
    }
    if (trace) {
        /* a failed run writes no output file, the trace included */
        shoal_error te;
        if (rc == 0 && shoal_profile_trace_save(shoal_render_get_profile(r), trace, &te))
            rc = app_fail_status(&o, &te);
        shoal_profile_trace_stop(shoal_render_get_profile(r));
    }
    free(over);
    free(ids);
    shoal_render_destroy(r);
    free(s.buf);
    return rc;
}
