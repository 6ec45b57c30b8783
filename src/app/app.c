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

void app_stage_done(const char *group, const char *name, uint64_t t0_ns)
{
    int id = shoal_profile_stage(group, name);
    if (id >= 0)
        shoal_profile_stage_call(id, shoal_profile_now_ns() - t0_ns);
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

int app_scene_model(const opt_values *o, shoal_scene *scene, shoal_model *model)
{
    shoal_error e;
    memset(scene, 0, sizeof *scene);
    *model = SHOAL_MODEL_STEER;
    int given = options_given(o, "model");
    if (given && shoal_model_parse(options_get(o, "model"), model, &e))
        return app_fail_status(o, &e);
    if (!options_given(o, "scene")) /* (run's default is a sentence for --help) */
        return 0;
    const char *path = options_get(o, "scene");
    if (shoal_scene_load(path, scene, &e))
        return app_fail_status(o, &e);
    if (given && *model != scene->desc.model)
        return options_fail(o, "--model %s contradicts the scene file %s (model %s%s)",
                            shoal_model_name(*model), path, shoal_model_name(scene->desc.model),
                            scene->has_model ? ""
                                             : ": it names none, so steer; add model = to "
                                               "its [scene]");
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
    } else if (options_given(o, "model")) {
        d->model = m;
        shoal_params_default(m, &d->params);
        d->boid_count = shoal_model_default_count(m);
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
    if (shoal_params_validate(d->model, &d->params, &e))
        return app_fail_status(o, &e);
    if (scene_out)
        *scene_out = scene;
    return 0;
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
        if (shoal_params_set(d->model, &d->params, name, eq + 1, &e))
            return app_fail_status(o, &e);
    }
    return 0;
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

/* ---- state files: .npy or Unity .bin ------------------------------------------------- */

static int path_is_unity(const char *path, const char *format)
{
    if (format && strcmp(format, "unity") == 0)
        return 1;
    if (format && strcmp(format, "npy") == 0)
        return 0;
    size_t n = path ? strlen(path) : 0;
    return n >= 4 && strcmp(path + n - 4, ".bin") == 0;
}

shoal_status app_state_read(const char *path, const char *format, float **rows, size_t *count,
                            shoal_error *e)
{
    if (format && strcmp(format, "auto") != 0 && strcmp(format, "npy") != 0 &&
        strcmp(format, "unity") != 0)
        return shoal_error_set(e, SHOAL_ERR_INPUT, "--format '%s' (expected auto, npy or unity)",
                               format);
    shoal_status st = path_is_unity(path, format) ? shoal_io_unity_read(path, rows, count, e)
                                                  : shoal_io_npy_read(path, rows, count, e);
    /* docs/CLI.md: a NaN or infinity in a state file is bad input (exit 2), for every
     * command that reads one (step, compare, diverge) */
    if (!st && (st = shoal_state_check_finite(*rows, *count, path, e))) {
        free(*rows);
        *rows = NULL;
        *count = 0;
    }
    return st;
}

shoal_status app_state_write(const char *path, const char *format, const float *rows, size_t count,
                             shoal_error *e)
{
    if (path_is_unity(path, format))
        return shoal_io_unity_write(path, rows, count, e);
    size_t n = strlen(path);
    if (!format && n > 4 && strcmp(path + n - 4, ".vtp") == 0) /* ParaView (write only) */
        return shoal_io_vtp_write(path, rows, count, NAN, e);
    return shoal_io_npy_write(path, rows, count, e);
}

shoal_status app_write_state(const char *path, const void *ctx, shoal_error *e)
{
    const app_state_ctx *c = ctx;
    size_t n = strlen(c->name);
    if (path_is_unity(c->name, NULL))
        return shoal_io_unity_write(path, c->rows, c->count, e);
    if (n > 4 && strcmp(c->name + n - 4, ".vtp") == 0)
        return shoal_io_vtp_write(path, c->rows, c->count, NAN, e);
    return shoal_io_npy_write(path, c->rows, c->count, e);
}

shoal_status app_write_checkpoint(const char *path, const void *ctx, shoal_error *e)
{
    return shoal_io_checkpoint_write(path, (const shoal_sim *)ctx, e);
}

shoal_status app_write_trace(const char *path, const void *ctx, shoal_error *e)
{
    (void)ctx;
    return shoal_profile_trace_write(path, e);
}

/* ---- GPU ---------------------------------------------------------------------------- */

shoal_status app_gpu_add_obstacles(shoal_gpu_sim *g, const shoal_sim_desc *d,
                                   const shoal_scene *scene, shoal_error *e)
{
    if (!scene || scene->mesh_count == 0)
        return SHOAL_OK;
    shoal_sim_desc one = *d;
    one.boid_count = 1;
    shoal_sim *s;
    shoal_status st = shoal_sim_create(&one, &s, e);
    if (st)
        return st;
    if (!(st = shoal_scene_add_obstacles(scene, s, e)))
        st = shoal_gpu_sim_copy_obstacles(g, s, e);
    shoal_sim_destroy(s);
    return st;
}
