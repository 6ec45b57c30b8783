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
    /* a periodic world's box scales with the walls (the names --set takes) */
    const shoal_world *wb = &before->world, *wa = &after->world;
    if (memcmp(wb->size, scaled->world.size, sizeof wb->size) != 0)
        fprintf(stderr, " world_size=%.9g,%.9g,%.9g", (double)wa->size[0], (double)wa->size[1],
                (double)wa->size[2]);
    if (memcmp(wb->center, scaled->world.center, sizeof wb->center) != 0)
        fprintf(stderr, " world_center=%.9g,%.9g,%.9g", (double)wa->center[0],
                (double)wa->center[1], (double)wa->center[2]);
    fputc('\n', stderr);
}

/* The region a model keeps its boids in, from its parameters: a box (lo, hi) or a sphere
 * (centre c, radius r), and the parameters that set it. Found by the parameters' names, not
 * by model (a model is named in its own file only: tools/check_models.py): walls (centre and
 * size), a target box (the same), a box (corners) or a boundary sphere (centre and squared
 * radius); a model with none of them has no region (what = NULL). */
typedef struct world_region {
    int sphere;
    double lo[3], hi[3], c[3], r;
    const char *what, *params;
} world_region;

static int region_param(const shoal_sim_desc *d, const char *name, double *v, size_t want)
{
    size_t got = 0;
    shoal_error e;
    return shoal_params_find(d->model, name, NULL, &e) &&
           shoal_params_get(d->model, &d->params, name, v, 3, &got, &e) == SHOAL_OK && got == want;
}

static world_region world_region_of(const shoal_sim_desc *d)
{
    static const struct {
        const char *a, *b, *what, *params;
        int kind; /* 0: centre and size, 1: corners, 2: centre and squared radius */
    } kinds[] = {
        {"wall_center", "wall_size", "walls", "wall_center, wall_size", 0},
        {"bounds_center", "bounds_size", "target box", "bounds_center, bounds_size", 0},
        {"box_min", "box_max", "box", "box_min, box_max", 1},
        {"boundary_center", "boundary_range2", "boundary sphere",
         "boundary_center, boundary_range2", 2},
    };
    world_region w;
    memset(&w, 0, sizeof w);
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        double a[3], b[3];
        if (!region_param(d, kinds[k].a, a, 3) ||
            !region_param(d, kinds[k].b, b, kinds[k].kind == 2 ? 1 : 3))
            continue;
        w.what = kinds[k].what;
        w.params = kinds[k].params;
        for (int i = 0; i < 3; i++) {
            if (kinds[k].kind == 0) {
                w.lo[i] = a[i] - 0.5 * b[i];
                w.hi[i] = a[i] + 0.5 * b[i];
            } else if (kinds[k].kind == 1) {
                w.lo[i] = a[i];
                w.hi[i] = b[i];
            } else {
                w.c[i] = a[i];
            }
        }
        if (kinds[k].kind == 2) {
            w.sphere = 1;
            w.r = sqrt(b[0]);
        }
        break;
    }
    return w;
}

size_t app_outside_count(const shoal_sim_desc *d, const float *px, const float *py, const float *pz,
                         size_t stride, size_t n)
{
    world_region w = world_region_of(d);
    if (!w.what)
        return 0;
    /* a boid counts when it is past the region by more than an eighth of its size: walls
     * are soft, and a school that turns at them overshoots a little */
    double lo[3], hi[3], r2 = 1.125 * 1.125 * w.r * w.r;
    for (int k = 0; k < 3; k++) {
        double m = (w.hi[k] - w.lo[k]) / 8;
        lo[k] = w.lo[k] - m;
        hi[k] = w.hi[k] + m;
    }
    /* a periodic axis has no walls (docs/WORLD.md): a boid anywhere along it is in the world,
     * and a boundary sphere acts on the other axes only */
    double on[3];
    for (int k = 0; k < 3; k++) {
        on[k] = shoal_world_axis_periodic(&d->world, k) ? 0.0 : 1.0;
        if (on[k] == 0.0) {
            lo[k] = -INFINITY;
            hi[k] = INFINITY;
        }
    }
    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
        double x = px[i * stride], y = py[i * stride], z = pz[i * stride];
        if (w.sphere) {
            double dx = on[0] * (x - w.c[0]), dy = on[1] * (y - w.c[1]), dz = on[2] * (z - w.c[2]);
            out += dx * dx + dy * dy + dz * dz > r2;
        } else {
            out += x < lo[0] || x > hi[0] || y < lo[1] || y > hi[1] || z < lo[2] || z > hi[2];
        }
    }
    return out;
}

void app_fit_note(const char *cmd, const shoal_sim_desc *d, size_t scene_count, int can_count,
                  const char *in, size_t outside, size_t n)
{
    if (n == 0 || outside * 100 < n) /* fewer than 1 in 100: strays, not a misfit */
        return;
    world_region w = world_region_of(d);
    char where[160];
    if (w.sphere)
        snprintf(where, sizeof where, "radius %.4g about %.4g,%.4g,%.4g", w.r, w.c[0], w.c[1],
                 w.c[2]);
    else
        snprintf(where, sizeof where, "%.4g x %.4g x %.4g about %.4g,%.4g,%.4g", w.hi[0] - w.lo[0],
                 w.hi[1] - w.lo[1], w.hi[2] - w.lo[2], 0.5 * (w.lo[0] + w.hi[0]),
                 0.5 * (w.lo[1] + w.hi[1]), 0.5 * (w.lo[2] + w.hi[2]));
    char esc[600];
    shoal_error_escape(esc, sizeof esc, in);
    fprintf(stderr,
            "shoal %s: warning: %zu of the %zu boids of %s are outside the %s they are "
            "stepped in (%s's %s: %s)",
            cmd, outside, n, esc, w.what, shoal_model_name(d->model), w.params, where);
    if (scene_count != n && can_count)
        fprintf(stderr,
                ", made for %zu boids: --count %zu gives the %s `init --count %zu` "
                "gave\n",
                scene_count, n, w.what, n);
    else if (scene_count != n)
        fprintf(stderr, ", made for %zu boids: give the %s `init --count %zu` printed with --set\n",
                scene_count, w.what, n);
    else
        fprintf(stderr, ": give the %s the state was made in with --scene or --set\n", w.what);
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
        int64_t sc = 0, ss = 0;
        app_world_turns(w, k, p[k], n, &sc, &ss);
        c[k] = app_world_turns_mean(w, k, sc, ss, n);
    }
}

void app_world_turns(const shoal_world *w, int k, const float *x, size_t n, int64_t *sc,
                     int64_t *ss)
{
    double L = w->size[k], lo = (double)w->center[k] - 0.5 * L;
    /* cos and sin as integers of 2^-30: 10^8 fish cannot overflow 64 bits, and the sum
     * does not depend on the order */
    for (size_t i = 0; i < n; i++) {
        double a = 6.283185307179586 * (((double)x[i] - lo) / L);
        if (!isfinite(a))
            continue;
        *sc += (int64_t)llround(cos(a) * 1073741824.0);
        *ss += (int64_t)llround(sin(a) * 1073741824.0);
    }
}

float app_world_turns_mean(const shoal_world *w, int k, int64_t sc, int64_t ss, size_t n)
{
    double L = w->size[k], lo = (double)w->center[k] - 0.5 * L;
    double x, y = (double)ss, xx = (double)sc;
    if (hypot(xx, y) <= 1e-9 * 1073741824.0 * (double)(n ? n : 1)) {
        x = lo + 0.5 * L; /* evenly round the axis: no centre, the box's */
    } else {
        double a = atan2(y, xx);
        if (a < 0)
            a += 6.283185307179586;
        x = lo + L * (a / 6.283185307179586);
    }
    return (float)x;
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
