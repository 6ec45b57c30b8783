/* SPDX-License-Identifier: MIT */
/* Scene files: INI text parsed by inih into a shoal_scene (model, parameters, N, seed,
 * obstacles, camera). Two passes: the first finds the model (its defaults are the base
 * the [params] section edits), the second applies everything in file order. */
#include "shoal/io.h"
#include "shoal/render.h"

#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parse_ctx {
    shoal_scene *scene;
    const char *name;
    shoal_error *err;
    shoal_status status;
    int pass;
    int sphere_open; /* index of the [sphere] being filled, -1 if none */
    int sphere_has_radius, sphere_has_center;
    char sphere_section[64];
    int mesh_open; /* index of the [mesh] being filled, -1 if none */
    int mesh_has_file;
    char mesh_section[64];
    const char *dir; /* directory of the scene file ("" for text) */
} parse_ctx;

static int fail(parse_ctx *c, const char *section, const char *key, const char *fmt,
                const char *detail)
{
    char msg[600];
    snprintf(msg, sizeof msg, fmt, detail);
    c->status = shoal_error_set(c->err, SHOAL_ERR_INPUT, "scene %s: [%s] %s: %.400s", c->name,
                                section, key, msg);
    return 0;
}

static int parse_number(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    while (*end == ' ' || *end == '\t')
        end++;
    if (end == s || *end || errno == ERANGE || !isfinite(v))
        return 0;
    *out = v;
    return 1;
}

static int parse_vec3(const char *s, float out[3])
{
    char buf[256];
    if (strlen(s) >= sizeof buf)
        return 0;
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL;
    int k = 0;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        double v;
        if (k == 3 || !parse_number(tok, &v) || fabs(v) > 1e30)
            return 0;
        out[k++] = (float)v;
    }
    return k == 3;
}

static int close_sphere(parse_ctx *c)
{
    if (c->sphere_open >= 0 && !c->sphere_has_radius)
        return fail(c, "sphere", "radius", "%s", "missing (every [sphere] needs a radius)");
    c->sphere_open = -1;
    return 1;
}

static int close_mesh(parse_ctx *c)
{
    if (c->mesh_open >= 0 && !c->mesh_has_file)
        return fail(c, c->mesh_section, "file", "%s", "missing (every [mesh] needs a file)");
    c->mesh_open = -1;
    return 1;
}

/* A list of 1 or 3 numbers ("s" or "x,y,z"). */
static int parse_scale(const char *s, float out[3])
{
    double v;
    if (!strchr(s, ',')) {
        if (!parse_number(s, &v) || fabs(v) > 1e6)
            return 0;
        out[0] = out[1] = out[2] = (float)v;
        return 1;
    }
    return parse_vec3(s, out);
}

static int mesh_key(parse_ctx *c, const char *section, const char *key, const char *value)
{
    shoal_scene *sc = c->scene;
    if (c->mesh_open < 0 || strncmp(c->mesh_section, section, 63) != 0 ||
        (strcmp(key, "file") == 0 && c->mesh_has_file)) {
        if (!close_mesh(c))
            return 0;
        if (sc->mesh_count >= SHOAL_SCENE_MAX_MESHES)
            return fail(c, section, key, "more than %s obstacle meshes", "16");
        c->mesh_open = sc->mesh_count++;
        c->mesh_has_file = 0;
        snprintf(c->mesh_section, sizeof c->mesh_section, "%s", section);
        shoal_scene_mesh *m = &sc->meshes[c->mesh_open];
        memset(m, 0, sizeof *m);
        m->transform = shoal_transform_identity();
        const char *nm = section[4] == ' ' ? section + 5 : "";
        snprintf(m->name, sizeof m->name, "%s", nm);
    }
    shoal_scene_mesh *m = &sc->meshes[c->mesh_open];
    shoal_transform *t = &m->transform;
    if (strcmp(key, "file") == 0) {
        if (!*value)
            return fail(c, section, key, "%s", "empty path");
        int n = value[0] == '/' || !c->dir[0]
                    ? snprintf(m->path, sizeof m->path, "%s", value)
                    : snprintf(m->path, sizeof m->path, "%s/%s", c->dir, value);
        if (n < 0 || (size_t)n >= sizeof m->path)
            return fail(c, section, key, "'%.200s': path too long", value);
        c->mesh_has_file = 1;
    } else if (strcmp(key, "position") == 0) {
        if (!parse_vec3(value, t->position) || fabs(t->position[0]) > 1e6 ||
            fabs(t->position[1]) > 1e6 || fabs(t->position[2]) > 1e6)
            return fail(c, section, key, "'%s' is not x,y,z (finite, within 1e6)", value);
    } else if (strcmp(key, "rotation") == 0) {
        if (!parse_vec3(value, t->rotation_deg) || fabs(t->rotation_deg[0]) > 1e6 ||
            fabs(t->rotation_deg[1]) > 1e6 || fabs(t->rotation_deg[2]) > 1e6)
            return fail(c, section, key, "'%s' is not rx,ry,rz in degrees (finite)", value);
    } else if (strcmp(key, "scale") == 0) {
        if (!parse_scale(value, t->scale))
            return fail(c, section, key, "'%s' is not s or sx,sy,sz (finite, within 1e6)", value);
    } else {
        return fail(c, section, key, "%s",
                    "unknown key (expected file, position, rotation, scale)");
    }
    return 1;
}

/* [predators]: friendlier names for the predator_* parameters. */
static int predators_key(parse_ctx *c, const char *section, const char *key, const char *value)
{
    static const char *const map[][2] = {
        {"count", "predator_count"}, {"speed", "predator_speed"},    {"turn", "predator_turn"},
        {"chase", "predator_chase"}, {"flee_radius", "flee_radius"}, {"flee_weight", "flee_weight"},
        {"start", "predator_start"}, {"spread", "predator_spread"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        if (strcmp(key, map[i][0]) != 0)
            continue;
        const char *v = value;
        if (strcmp(key, "chase") == 0) {
            if (strcmp(value, "nearest") == 0)
                v = "0";
            else if (strcmp(value, "centre") == 0 || strcmp(value, "center") == 0)
                v = "1";
            else
                return fail(c, section, key, "'%s': expected nearest or centre", value);
        }
        shoal_error e;
        if (shoal_params_set(c->scene->desc.model, &c->scene->desc.params, map[i][1], v, &e))
            return fail(c, section, key, "%s", e.message);
        return 1;
    }
    return fail(c, section, key, "%s",
                "unknown key (expected count, speed, turn, chase, flee_radius, flee_weight, "
                "start, spread)");
}

static int handler(void *user, const char *section, const char *key, const char *value)
{
    parse_ctx *c = user;
    shoal_scene *sc = c->scene;
    if (c->status)
        return 0;
    if (c->pass == 0) {
        if (strcmp(section, "scene") == 0 && strcmp(key, "model") == 0) {
            shoal_error e;
            if (shoal_model_parse(value, &sc->desc.model, &e))
                return fail(c, section, key, "%s", e.message);
            sc->has_model = 1;
        }
        return 1;
    }
    if (strcmp(section, "scene") == 0) {
        double v;
        if (strcmp(key, "model") == 0)
            return 1;
        if (!parse_number(value, &v))
            return fail(c, section, key, "'%s' is not a finite number", value);
        if (strcmp(key, "count") == 0) {
            if (v < 1 || v > 4294967000.0 || v != floor(v))
                return fail(c, section, key, "'%s': expected an integer >= 1", value);
            sc->desc.boid_count = (size_t)v;
            sc->has_count = 1;
        } else if (strcmp(key, "seed") == 0) {
            if (v < 0 || v > 18446744073709549568.0 || v != floor(v))
                return fail(c, section, key, "'%s': expected an integer >= 0", value);
            sc->desc.seed = (uint64_t)v;
            sc->has_seed = 1;
        } else if (strcmp(key, "dt") == 0) {
            if (!(v > 0) || v > 1e6)
                return fail(c, section, key, "'%s': expected a time step > 0", value);
            sc->desc.dt_s = v;
            sc->has_dt = 1;
        } else if (strcmp(key, "t0") == 0) {
            /* the range `shoal step --t0` takes: heading turns t0 / target_period into a
             * 64-bit epoch, which a larger t0 overflows (fuzz_scene found 2.2e87) */
            if (fabs(v) > 1e15)
                return fail(c, section, key, "'%s': expected a time in [-1e15, 1e15] s", value);
            sc->desc.t0_s = v;
            sc->has_t0 = 1;
        } else {
            return fail(c, section, key, "%s", "unknown key (expected model, count, seed, dt, t0)");
        }
        return 1;
    }
    if (strcmp(section, "params") == 0) {
        shoal_error e;
        if (shoal_params_set(sc->desc.model, &sc->desc.params, key, value, &e))
            return fail(c, section, key, "%s", e.message);
        return 1;
    }
    if (strncmp(section, "sphere", 6) == 0 && (section[6] == 0 || section[6] == ' ')) {
        /* Each [sphere] (or [sphere NAME]) section is one obstacle. inih does not report
         * section starts, so a new sphere begins when the section name changes or a key
         * the current sphere already has comes again. */
        shoal_params *p = &sc->desc.params;
        int is_radius = strcmp(key, "radius") == 0, is_center = strcmp(key, "center") == 0;
        if (c->sphere_open < 0 || strncmp(c->sphere_section, section, 63) != 0 ||
            (is_radius && c->sphere_has_radius) || (is_center && c->sphere_has_center)) {
            if (!close_sphere(c))
                return 0;
            if (p->sphere_count >= SHOAL_MAX_SPHERES)
                return fail(c, section, key, "more than %s spheres", "64");
            c->sphere_open = (int)p->sphere_count;
            p->sphere_count += 1;
            c->sphere_has_radius = c->sphere_has_center = 0;
            snprintf(c->sphere_section, sizeof c->sphere_section, "%s", section);
            memset(&p->spheres[c->sphere_open], 0, sizeof p->spheres[0]);
        }
        shoal_sphere *sp = &p->spheres[c->sphere_open];
        if (strcmp(key, "center") == 0) {
            if (!parse_vec3(value, sp->center))
                return fail(c, section, key, "'%s' is not x,y,z", value);
            c->sphere_has_center = 1;
        } else if (strcmp(key, "radius") == 0) {
            double v;
            if (!parse_number(value, &v) || !(v > 0) || v > 1e6)
                return fail(c, section, key, "'%s': expected a radius > 0", value);
            sp->radius = (float)v;
            c->sphere_has_radius = 1;
        } else {
            return fail(c, section, key, "%s", "unknown key (expected center, radius)");
        }
        return 1;
    }
    if (strncmp(section, "mesh", 4) == 0 && (section[4] == 0 || section[4] == ' '))
        return mesh_key(c, section, key, value);
    if (strcmp(section, "predators") == 0)
        return predators_key(c, section, key, value);
    if (strcmp(section, "camera") == 0) {
        double v;
        if (strcmp(key, "eye") == 0) {
            if (!parse_vec3(value, sc->eye))
                return fail(c, section, key, "'%s' is not x,y,z", value);
            sc->has_eye = 1;
        } else if (strcmp(key, "target") == 0) {
            if (!parse_vec3(value, sc->target))
                return fail(c, section, key, "'%s' is not x,y,z", value);
            sc->has_target = 1;
        } else if (strcmp(key, "fov_deg") == 0) {
            if (!parse_number(value, &v) || !(v > 0 && v < 180))
                return fail(c, section, key, "'%s': expected degrees in (0, 180)", value);
            sc->fov_deg = (float)v;
            sc->has_fov = 1;
        } else if (strcmp(key, "fish_length") == 0) {
            if (!parse_number(value, &v) || !(v > 0 && v < 1e6))
                return fail(c, section, key, "'%s': expected a length > 0", value);
            sc->fish_length = (float)v;
            sc->has_fish_length = 1;
        } else {
            return fail(c, section, key, "%s",
                        "unknown key (expected eye, target, fov_deg, fish_length)");
        }
        return 1;
    }
    return fail(c, section, key, "%s",
                "unknown section (expected [scene], [params], [sphere], [mesh], [predators] or "
                "[camera])");
}

static shoal_status scene_parse_dir(const char *text, const char *name, const char *dir,
                                    shoal_scene *scene, shoal_error *err)
{
    memset(scene, 0, sizeof *scene);
    snprintf(scene->name, sizeof scene->name, "%s", name);
    scene->desc = shoal_sim_desc_default();
    parse_ctx c = {
        .scene = scene, .name = name, .err = err, .sphere_open = -1, .mesh_open = -1, .dir = dir};
    for (c.pass = 0; c.pass < 2; c.pass++) {
        if (c.pass == 1) {
            scene->mesh_count = 0;
            c.mesh_open = -1;
            shoal_params_default(scene->desc.model, &scene->desc.params);
            scene->desc.boid_count = shoal_model_default_count(scene->desc.model);
        }
        int rc = ini_parse_string(text, handler, &c);
        if (c.status)
            return c.status;
        if (rc != 0)
            return shoal_error_set(err, SHOAL_ERR_INPUT,
                                   "scene %s: line %d: not an INI line (expected [section] or "
                                   "key = value)",
                                   name, rc);
    }
    if (!close_sphere(&c) || !close_mesh(&c))
        return c.status;
    shoal_error e;
    if (shoal_params_validate(scene->desc.model, &scene->desc.params, &e))
        return shoal_error_set(err, SHOAL_ERR_INPUT, "scene %s: %.400s", name, e.message);
    return SHOAL_OK;
}

shoal_status shoal_scene_parse(const char *text, const char *name, shoal_scene *scene,
                               shoal_error *err)
{
    return scene_parse_dir(text, name, "", scene, err);
}

shoal_status shoal_scene_load(const char *path, shoal_scene *scene, shoal_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "scene %s: cannot open: %s", path,
                               strerror(errno));
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 8192;
            if (cap > (16u << 20)) {
                free(buf);
                fclose(f);
                return shoal_error_set(err, SHOAL_ERR_INPUT, "scene %s: larger than 16 MiB", path);
            }
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return shoal_error_set(err, SHOAL_ERR_NOMEM, "scene %s: out of memory", path);
            }
            buf = nb;
        }
        size_t got = fread(buf + len, 1, 4096, f);
        len += got;
        if (got < 4096)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return shoal_error_set(err, SHOAL_ERR_IO, "scene %s: read error", path);
    }
    buf[len] = 0;
    if (memchr(buf, 0, len)) {
        free(buf);
        return shoal_error_set(err, SHOAL_ERR_INPUT, "scene %s: contains a NUL byte (not text)",
                               path);
    }
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *(slash == dir ? slash + 1 : slash) = 0;
    else
        dir[0] = 0;
    shoal_status st = scene_parse_dir(buf, path, dir, scene, err);
    free(buf);
    return st;
}

shoal_status shoal_scene_add_obstacles(const shoal_scene *scene, shoal_sim *sim, shoal_error *err)
{
    for (int i = 0; i < scene->mesh_count; i++) {
        const shoal_scene_mesh *m = &scene->meshes[i];
        shoal_mesh mesh;
        shoal_error e;
        shoal_status st = shoal_mesh_load(m->path, &mesh, &e);
        if (st == SHOAL_OK && !mesh.normals)
            st = shoal_mesh_compute_normals(&mesh, &e);
        if (st == SHOAL_OK)
            st = shoal_sim_add_obstacle(sim, mesh.positions, mesh.normals, mesh.vertex_count,
                                        &m->transform, NULL, &e);
        shoal_mesh_free(&mesh);
        if (st)
            return shoal_error_set(err, st, "%.200s: [mesh %s]: %.400s", scene->name, m->name,
                                   e.message);
    }
    return SHOAL_OK;
}

double shoal_scene_set_count(shoal_scene *scene, size_t count, int keep_geometry)
{
    size_t ref = scene->desc.boid_count;
    scene->desc.boid_count = count;
    if (keep_geometry || count == ref || ref == 0 || count == 0)
        return 1.0;
    double s = cbrt((double)count / (double)ref);
    shoal_params_scale_geometry(scene->desc.model, &scene->desc.params, s);
    for (int c = 0; c < 3; c++) {
        if (scene->has_eye)
            scene->eye[c] = (float)((double)scene->eye[c] * s);
        if (scene->has_target)
            scene->target[c] = (float)((double)scene->target[c] * s);
    }
    return s;
}
