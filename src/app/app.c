/* SPDX-License-Identifier: MIT */
/* The helpers that several subcommands share (declared in app.h): exit codes and error
 * lines, the desc and scene that --model/--scene/--count/--set describe, --set and --size
 * parsing, state files by format, GPU obstacles, the count-scaling note, a stage timer.
 * The commands' own work stays in their cmd_*.c files; none of those calls another's. */
#include "app/app.h"
#include "app/options.h"
#include "shoal/gpu.h"
#include "shoal/profile.h"
#include "shoal/render.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- exit codes, errors, timing ------------------------------------------------------ */

/* The command's own profile: one per process, as a command is one per process; created on
 * first use, on the main thread. NULL when it cannot be allocated (then nothing is timed). */
static shoal_profile *g_profile;

shoal_profile *app_profile(void)
{
    if (!g_profile && shoal_profile_create(&g_profile, NULL))
        g_profile = NULL;
    return g_profile;
}

void app_stage_done(const char *group, const char *name, uint64_t t0_ns)
{
    shoal_profile *p = app_profile();
    int id = p ? shoal_profile_stage_id(p, group, name) : -1;
    if (id >= 0)
        shoal_profile_add_call(p, id, shoal_profile_now_ns() - t0_ns);
}

void app_profile_print(const shoal_profile *p, const char *title, int per_thread)
{
    if (p)
        shoal_profile_write_table(p, stderr, title, per_thread);
    else
        fprintf(stderr, "%s\n(no stage timings: out of memory for the profile)\n", title);
}

int app_exit_code(shoal_status st)
{
    switch (st) {
    case SHOAL_OK:
        return 0;
    case SHOAL_ERR_INPUT:
    case SHOAL_ERR_NOMEM:
    case SHOAL_ERR_UNSUPPORTED:
    case SHOAL_ERR_IO:
        return 2;
    default:
        return 1;
    }
}

int app_fail_status(const opt_values *o, const shoal_error *e)
{
    options_fail(o, "%s", e->message);
    return app_exit_code(e->status);
}

int app_stdout_check(const char *cmd)
{
    errno = 0;
    int bad = fflush(stdout) != 0;
    int e = errno;
    if (!bad && !ferror(stdout))
        return 0;
    options_error(cmd, "cannot write the standard output: %s", strerror(e ? e : EIO));
    return 2;
}

/* ---- scenes, descs, --set and --size ------------------------------------------------ */

/* Print the parameters the count scaling changed (name=value), so that a `step` of the
 * state can be given the same geometry with --set. */
void app_print_scaled(const char *cmd, const app_scaled *sc, const shoal_sim_desc *after)
{
    if (sc->s == 1.0)
        return;
    const shoal_sim_desc *before = &sc->before, *scaled = &sc->scaled;
    fprintf(stderr,
            "shoal %s: %zu boids, the scene's %zu: walls and start region scaled by %.6g to "
            "keep its density (--keep-geometry keeps them):",
            cmd, after->boid_count, before->boid_count, sc->s);
    size_t n;
    const shoal_param_info *list = shoal_params_list(after->model, &n);
    for (size_t i = 0; i < n; i++) {
        float a = *(const float *)((const char *)&before->params + list[i].offset);
        float b = *(const float *)((const char *)&scaled->params + list[i].offset);
        float c = *(const float *)((const char *)&after->params + list[i].offset);
        if (a != b)
            fprintf(stderr, " %s=%.9g", list[i].name, (double)c);
    }
    fputc('\n', stderr);
}

shoal_model app_default_model(void) { return shoal_sim_desc_default().model; }

int app_scene_model(const opt_values *o, shoal_scene *scene, shoal_model *model)
{
    shoal_error e;
    memset(scene, 0, sizeof *scene);
    *model = app_default_model();
    int given = options_given(o, "model");
    if (given && shoal_model_parse(options_get(o, "model"), model, &e))
        return app_fail_status(o, &e);
    if (!options_given(o, "scene")) /* (run's default is a sentence for --help) */
        return 0;
    const char *path = options_get(o, "scene");
    if (shoal_scene_load(path, scene, &e))
        return app_fail_status(o, &e);
    if (given && *model != scene->desc.model)
        return options_fail(o, "--model %s contradicts the scene file %s (model %s%s%s%s)",
                            shoal_model_name(*model), path, shoal_model_name(scene->desc.model),
                            scene->has_model ? "" : ": it names none, so ",
                            scene->has_model ? "" : shoal_model_name(app_default_model()),
                            scene->has_model ? "" : "; add model = to its [scene]");
    *model = scene->desc.model;
    return 0;
}

/* --model, --scene, --set: the sim desc (model, params, count, seed, dt) they describe.
 * count > 0 (init --count) gives the scene that count, its geometry scaled to keep its
 * density unless keep_geometry (shoal_scene_set_count), before --set is applied. */
int app_sim_desc(const opt_values *o, shoal_sim_desc *d, shoal_scene *scene_out, size_t count,
                 int keep_geometry, app_scaled *sc)
{
    shoal_error e;
    *d = shoal_sim_desc_default();
    shoal_scene scene;
    shoal_model m;
    int rc = app_scene_model(o, &scene, &m);
    if (rc)
        return rc;
    if (options_get(o, "scene")) {
        *d = scene.desc;
    } else {
        /* the model's scene (assets/scenes/MODEL.ini holds the same) */
        *d = shoal_sim_desc_for(m);
    }
    if (!options_get(o, "scene"))
        scene.desc = *d;
    if (sc) {
        sc->before = scene.desc;
        sc->s = 1.0;
    }
    if (count > 0) {
        double s = shoal_scene_set_count(&scene, count, keep_geometry);
        *d = scene.desc;
        if (sc)
            sc->s = s;
    }
    if (sc)
        sc->scaled = *d;
    if ((rc = app_set_params(o, d)))
        return rc;
    if (shoal_params_validate(d->model, &d->params, &e) ||
        shoal_world_validate(&d->world, shoal_params_interaction_radius(d->model, &d->params), &e))
        return app_fail_status(o, &e);
    if (scene_out)
        *scene_out = scene;
    return 0;
}

/* The world of the drawing: the --scene's [world], then --set (world names; a model name
 * is the scene's model's parameter, checked and unused). 0, or the exit code. */
int app_render_world(const opt_values *o, shoal_world *w)
{
    shoal_sim_desc d = shoal_sim_desc_default();
    shoal_error e;
    if (options_given(o, "scene")) {
        shoal_scene sc;
        if (shoal_scene_load(options_get(o, "scene"), &sc, &e))
            return app_fail_status(o, &e);
        d = sc.desc;
    }
    int rc = app_set_params(o, &d);
    if (rc)
        return rc;
    if (shoal_world_validate(&d.world, 0.0f, &e))
        return app_fail_status(o, &e);
    *w = d.world;
    return 0;
}

/* 1 when the world changes the drawing (a periodic axis or the plane): then the camera
 * frames the world, not the state */
int app_world_drawn(const shoal_world *w)
{
    return shoal_world_dims(w) == 2 || shoal_world_any_periodic(w);
}

void app_world_centre(const shoal_world *w, const float *const p[3], size_t n, float c[3])
{
    for (int k = 0; k < 3; k++) {
        if (!shoal_world_axis_periodic(w, k)) {
            double s = 0;
            for (size_t i = 0; i < n; i++)
                s += p[k][i];
            c[k] = n ? (float)(s / (double)n) : 0.0f;
            continue;
        }
        double L = w->size[k], lo = (double)w->center[k] - 0.5 * L;
        /* cos and sin as integers of 2^-30: 10^8 fish cannot overflow 64 bits, and the sum
         * does not depend on the order */
        int64_t sc = 0, ss = 0;
        for (size_t i = 0; i < n; i++) {
            double a = 6.283185307179586 * (((double)p[k][i] - lo) / L);
            if (!isfinite(a))
                continue;
            sc += (int64_t)llround(cos(a) * 1073741824.0);
            ss += (int64_t)llround(sin(a) * 1073741824.0);
        }
        double x, y = (double)ss, xx = (double)sc;
        if (hypot(xx, y) <= 1e-9 * 1073741824.0 * (double)(n ? n : 1)) {
            x = lo + 0.5 * L; /* evenly round the axis: no centre, the box's */
        } else {
            double a = atan2(y, xx);
            if (a < 0)
                a += 6.283185307179586;
            x = lo + L * (a / 6.283185307179586);
        }
        c[k] = (float)x;
    }
}

int app_set_params(const opt_values *o, shoal_sim_desc *d)
{
    shoal_error e;
    for (int i = 0; i < o->repeat_count; i++) {
        if (strcmp(o->specs[o->repeat_of[i]].name, "set") != 0)
            continue;
        const char *kv = o->repeat[i];
        const char *eq = strchr(kv, '=');
        if (!eq || eq == kv)
            return options_fail(o, "--set '%s': expected name=value", kv);
        char name[128];
        size_t len = (size_t)(eq - kv);
        if (len >= sizeof name)
            return options_fail(o, "--set '%s': name too long", kv);
        memcpy(name, kv, len);
        name[len] = 0;
        if (shoal_sim_desc_set(d, name, eq + 1, &e)) /* the world's or the model's */
            return app_fail_status(o, &e);
    }
    return 0;
}

shoal_status app_render_create(const shoal_render_desc *desc, const char *mesh_path,
                               const char *lod_path, shoal_renderer **out, shoal_error *e)
{
    *out = NULL;
    shoal_mesh fish, lod, coarse;
    memset(&lod, 0, sizeof lod);
    memset(&coarse, 0, sizeof coarse);
    shoal_status st = mesh_path ? shoal_mesh_load(mesh_path, &fish, e)
                                : shoal_mesh_load_asset("fish.obj", &fish, e);
    int want_lod = desc->shade == SHOAL_SHADE_LIT && desc->lod;
    if (!st && want_lod)
        st = lod_path ? shoal_mesh_load(lod_path, &lod, e)
                      : shoal_mesh_load_asset("fish_lod1.obj", &lod, e);
    if (!st && want_lod && !lod_path) /* a --lod-mesh of one's own: no coarse level */
        st = shoal_mesh_load_asset("fish_lod2.obj", &coarse, e);
    if (!st) {
        shoal_render_desc d = *desc;
        d.mesh = &fish;
        d.lod_mesh = want_lod ? &lod : NULL;
        d.lod_coarse_mesh = coarse.vertex_count ? &coarse : NULL;
        st = shoal_render_create(&d, out, e);
    }
    shoal_mesh_free(&fish);
    shoal_mesh_free(&lod);
    shoal_mesh_free(&coarse);
    return st;
}

int app_parse_size(const opt_values *o, int *w, int *h)
{
    const char *v = options_get(o, "size");
    char *end;
    long a = strtol(v, &end, 10);
    if (end == v || (*end != 'x' && *end != 'X'))
        return options_fail(o, "--size: '%s' is not WxH", v);
    const char *p = end + 1;
    long b = strtol(p, &end, 10);
    if (end == p || *end)
        return options_fail(o, "--size: '%s' is not WxH", v);
    if (a < 1 || b < 1 || a > SHOAL_RENDER_MAX_SIZE || b > SHOAL_RENDER_MAX_SIZE)
        return options_fail(o, "--size: %ldx%ld is outside 1..%d per side", a, b,
                            SHOAL_RENDER_MAX_SIZE);
    *w = (int)a;
    *h = (int)b;
    return 0;
}

/* ---- state files: the library's formats table (shoal_io_format, shoal/io.h) ------------- */

shoal_status app_state_read(const char *path, const char *format, float **rows, size_t *count,
                            shoal_error *e)
{
    return shoal_io_state_read(path, format, rows, count, e);
}

shoal_status app_state_write(const char *path, const char *format, const float *rows, size_t count,
                             shoal_error *e)
{
    return shoal_io_state_write(path, format, rows, count, NAN, e);
}

shoal_status app_write_state(const char *path, const void *ctx, shoal_error *e)
{
    const app_state_ctx *c = ctx;
    /* `path` is the temporary: the format is the final name's */
    return shoal_io_state_write(path, shoal_io_format_of_path(c->name, 0)->name, c->rows, c->count,
                                NAN, e);
}

shoal_status app_write_checkpoint(const char *path, const void *ctx, shoal_error *e)
{
    return shoal_io_checkpoint_write(path, (const shoal_sim *)ctx, e);
}

shoal_status app_write_trace(const char *path, const void *ctx, shoal_error *e)
{
    return shoal_profile_trace_save((const shoal_profile *)ctx, path, e);
}

/* ---- GPU ---------------------------------------------------------------------------- */

shoal_status app_gpu_add_obstacles(shoal_gpu_sim *g, const shoal_scene *scene, shoal_error *e)
{
    if (!scene || scene->mesh_count == 0)
        return SHOAL_OK;
    /* an obstacle field of its own, lent to the GPU sim (no CPU sim to hold the meshes) */
    shoal_obstacles *obs;
    shoal_status st = shoal_scene_make_obstacles(scene, &obs, e);
    if (!st)
        st = shoal_gpu_sim_set_obstacles(g, obs, e);
    shoal_obstacles_destroy(obs);
    return st;
}
