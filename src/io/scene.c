/* SPDX-License-Identifier: MIT */
/* Scene files: INI text parsed by inih into a shoal_scene (model, parameters, N, seed,
 * obstacles, camera). Two passes: the first finds the model (its defaults are the base
 * the [params] section edits), the second applies everything in file order.
 *
 * inih is fed through our own line reader (scene_read_line), which sees every line before
 * inih does and keeps what Debian's build of inih cannot: comment lines of any length are
 * consumed whole (inih's 200-byte line buffer would parse a long comment's tail as a key),
 * section names of any length are kept whole (inih cuts them at 49 bytes) and each section
 * header is seen (inih does not report one), indented lines are refused (inih would take
 * them as the continuation of the previous value), and a key line that does not fit inih's
 * buffer is refused with its line number instead of being cut in two. */
#include "shoal/io.h"
#include "core/check.h"

#include <ctype.h>
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
    int mesh_open; /* index of the [mesh] being filled, -1 if none */
    int mesh_has_file;
    const char *dir; /* directory of the scene file ("" for text) */
    /* the line reader: position in the text, line number (from 1), and the current
     * section's whole name (NULL before the first header; malloc'ed) */
    const char *text;
    size_t pos;
    int line, section_line;
    char *section;
} parse_ctx;

/* A scene's name in a message: its last 160 bytes at most, so that a long path (they may be
 * as long as the system allows) leaves room in the 512-byte message for the problem. */
static const char *name_tail(const char *name, const char **ellipsis)
{
    size_t n = strlen(name);
    *ellipsis = n > 160 ? "..." : "";
    return n > 160 ? name + n - 160 : name;
}

static int fail(parse_ctx *c, const char *section, const char *key, const char *fmt,
                const char *detail)
{
    char msg[600];
    snprintf(msg, sizeof msg, fmt, detail);
    const char *dots, *tail = name_tail(c->name, &dots);
    c->status = shoal_error_set(c->err, SHOAL_ERR_INPUT, "scene %s%s: [%.100s] %.100s: %.400s",
                                dots, tail, section, key, msg);
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

/* The open sphere or mesh always belongs to the current section (c->section): both are
 * closed at every section header, before c->section moves on. */
static int close_sphere(parse_ctx *c)
{
    if (c->sphere_open >= 0 && !c->sphere_has_radius) {
        char line[64];
        snprintf(line, sizeof line, "%d", c->section_line);
        return fail(c, c->section, "radius",
                    "missing (every [sphere] needs a radius; the section starts at line %s)", line);
    }
    c->sphere_open = -1;
    return 1;
}

static int close_mesh(parse_ctx *c)
{
    if (c->mesh_open >= 0 && !c->mesh_has_file) {
        char line[64];
        snprintf(line, sizeof line, "%d", c->section_line);
        return fail(c, c->section, "file",
                    "missing (every [mesh] needs a file; the section starts at line %s)", line);
    }
    c->mesh_open = -1;
    return 1;
}

static int is_section(const char *section, const char *kind)
{
    size_t n = strlen(kind);
    return strncmp(section, kind, n) == 0 && (section[n] == 0 || section[n] == ' ');
}

static int open_sphere(parse_ctx *c, const char *key)
{
    shoal_params *p = &c->scene->desc.params;
    if (p->sphere_count >= SHOAL_MAX_SPHERES)
        return fail(c, c->section, key, "more than %s spheres", "64");
    c->sphere_open = (int)p->sphere_count;
    p->sphere_count += 1;
    c->sphere_has_radius = c->sphere_has_center = 0;
    memset(&p->spheres[c->sphere_open], 0, sizeof p->spheres[0]);
    return 1;
}

static int open_mesh(parse_ctx *c, const char *key)
{
    shoal_scene *sc = c->scene;
    if (sc->mesh_count >= SHOAL_SCENE_MAX_MESHES)
        return fail(c, c->section, key, "more than %s obstacle meshes", "16");
    c->mesh_open = sc->mesh_count++;
    c->mesh_has_file = 0;
    shoal_scene_mesh *m = &sc->meshes[c->mesh_open];
    memset(m, 0, sizeof *m);
    m->transform = shoal_transform_identity();
    const char *nm = c->section[4] == ' ' ? c->section + 5 : "";
    snprintf(m->name, sizeof m->name, "%s", nm);
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
    /* a [mesh] header opened one (scene_read_line); a second file in it starts another */
    if (c->mesh_open < 0 || (strcmp(key, "file") == 0 && c->mesh_has_file)) {
        if (!close_mesh(c) || !open_mesh(c, key))
            return 0;
    }
    shoal_scene_mesh *m = &sc->meshes[c->mesh_open];
    shoal_transform *t = &m->transform;
    if (strcmp(key, "file") == 0) {
        if (!*value)
            return fail(c, section, key, "%s", "empty path");
        int n = value[0] == '/' || !c->dir[0]
                    ? snprintf(m->path, sizeof m->path, "%s", value)
                    : snprintf(m->path, sizeof m->path, "%s/%s", c->dir, value);
        if (n < 0 || (size_t)n >= sizeof m->path) {
            char why[160];
            snprintf(why, sizeof why,
                     "path too long (%d bytes joined to the scene's directory; the system "
                     "takes at most %d)",
                     n, (int)sizeof m->path - 1);
            return fail(c, section, key, "%s", why);
        }
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

static int handler(void *user, const char *ini_section, const char *key, const char *value)
{
    parse_ctx *c = user;
    shoal_scene *sc = c->scene;
    (void)ini_section; /* cut at 49 bytes by inih: the reader keeps the whole name */
    const char *section = c->section ? c->section : "";
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
    if (strcmp(section, "world") == 0) {
        /* the world's parameters (shoal/world.h), with short names for the vectors */
        static const char *const alias[][2] = {
            {"size", "world_size"},         {"center", "world_center"},
            {"size_x", "world_size_x"},     {"size_y", "world_size_y"},
            {"size_z", "world_size_z"},     {"center_x", "world_center_x"},
            {"center_y", "world_center_y"}, {"center_z", "world_center_z"}};
        const char *name = key;
        for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
            if (strcmp(key, alias[i][0]) == 0)
                name = alias[i][1];
        if (!shoal_world_has_param(name))
            return fail(c, section, key, "%s",
                        "unknown key (expected dims, periodic, periodic_x, periodic_y, "
                        "periodic_z, size, center, size_x ... center_z)");
        shoal_error e;
        if (shoal_world_set(&sc->desc.world, name, value, &e))
            return fail(c, section, key, "%s", e.message);
        return 1;
    }
    if (strcmp(section, "params") == 0) {
        shoal_error e;
        if (shoal_params_set(sc->desc.model, &sc->desc.params, key, value, &e))
            return fail(c, section, key, "%s", e.message);
        return 1;
    }
    if (is_section(section, "sphere")) {
        /* Each [sphere] (or [sphere NAME]) header opens one obstacle (scene_read_line); a
         * key the current sphere already has starts another. */
        shoal_params *p = &sc->desc.params;
        int is_radius = strcmp(key, "radius") == 0, is_center = strcmp(key, "center") == 0;
        if (c->sphere_open < 0 || (is_radius && c->sphere_has_radius) ||
            (is_center && c->sphere_has_center)) {
            if (!close_sphere(c) || !open_sphere(c, key))
                return 0;
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
    if (is_section(section, "mesh"))
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
        } else if (strcmp(key, "follow") == 0) {
            if (strcmp(value, "on") != 0 && strcmp(value, "off") != 0)
                return fail(c, section, key, "'%s' is not on or off", value);
            sc->follow = strcmp(value, "on") == 0;
        } else {
            return fail(c, section, key, "%s",
                        "unknown key (expected eye, target, fov_deg, fish_length, follow)");
        }
        return 1;
    }
    return fail(c, section, key, "%s",
                "unknown section (expected [scene], [params], [world], [sphere], [mesh], "
                "[predators] or [camera])");
}

static char *line_fail(parse_ctx *c, const char *what)
{
    const char *dots, *tail = name_tail(c->name, &dots);
    c->status = shoal_error_set(c->err, SHOAL_ERR_INPUT, "scene %s%s: line %d: %s", dots, tail,
                                c->line, what);
    return NULL;
}

/* A section header (pass 1): close the sphere or mesh of the section before, open the one
 * this header starts. */
static int section_start(parse_ctx *c, const char *name, size_t len)
{
    if (c->pass == 1 && (!close_sphere(c) || !close_mesh(c)))
        return 0;
    char *copy = malloc(len + 1);
    if (!copy) {
        c->status =
            shoal_error_set(c->err, SHOAL_ERR_NOMEM, "scene %s: line %d: out of memory (%zu bytes)",
                            c->name, c->line, len + 1);
        return 0;
    }
    memcpy(copy, name, len);
    copy[len] = 0;
    free(c->section);
    c->section = copy;
    c->section_line = c->line;
    if (c->pass == 1 && is_section(copy, "sphere"))
        return open_sphere(c, "radius");
    if (c->pass == 1 && is_section(copy, "mesh"))
        return open_mesh(c, "file");
    return 1;
}

/* inih's reader (an fgets): the next line of c->text into `str` (`size` bytes), or NULL at
 * the end or on an error (c->status set; inih then stops). Blank and comment lines of any
 * length are handed over as an empty line; a header as "[s]" (the handler takes the whole
 * name from c->section); a key line as it is, when it fits. inih counts one line per call,
 * so its line numbers stay ours. */
static char *scene_read_line(char *str, int size, void *stream)
{
    parse_ctx *c = stream;
    if (c->status || !c->text[c->pos] || size < 8)
        return NULL;
    const char *s = c->text + c->pos;
    size_t n = strcspn(s, "\n");
    c->pos += n + (s[n] == '\n');
    c->line++;
    if (c->line == 1 && n >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) { /* UTF-8 BOM */
        s += 3;
        n -= 3;
    }
    size_t lead = 0;
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    while (lead < n && isspace((unsigned char)s[lead]))
        lead++;
    if (lead == n || s[lead] == ';' || s[lead] == '#') {
        snprintf(str, (size_t)size, "\n");
        return str;
    }
    if (lead > 0)
        return line_fail(c, "starts with whitespace: an indented line would be read as the "
                            "continuation of the value above, which scene files do not have "
                            "(write one key = value a line, unindented)");
    if (s[0] == '[') {
        const char *close = memchr(s, ']', n);
        if (!close)
            return line_fail(c, "a section header without ']'");
        for (const char *t = close + 1; t < s + n && *t != ';' && *t != '#'; t++)
            if (!isspace((unsigned char)*t))
                return line_fail(c, "text after the section header's ']'");
        if (!section_start(c, s + 1, (size_t)(close - s - 1)))
            return NULL;
        snprintf(str, (size_t)size, "[s]\n");
        return str;
    }
    if (n + 2 > (size_t)size) {
        char what[160];
        snprintf(what, sizeof what,
                 "%zu bytes long: a key = value line has at most %d bytes (the INI "
                 "parser's limit)",
                 n, size - 2);
        return line_fail(c, what);
    }
    memcpy(str, s, n);
    str[n] = '\n';
    str[n + 1] = 0;
    return str;
}

static shoal_status scene_parse_dir(const char *text, const char *name, const char *dir,
                                    shoal_scene *scene, shoal_error *err)
{
    memset(scene, 0, sizeof *scene);
    snprintf(scene->name, sizeof scene->name, "%s", name);
    scene->desc = shoal_sim_desc_default();
    parse_ctx c = {.scene = scene,
                   .name = name,
                   .err = err,
                   .sphere_open = -1,
                   .mesh_open = -1,
                   .dir = dir,
                   .text = text};
    for (c.pass = 0; c.pass < 2; c.pass++) {
        if (c.pass == 1) {
            scene->mesh_count = 0;
            c.mesh_open = -1;
            shoal_params_default(scene->desc.model, &scene->desc.params);
            scene->desc.boid_count = shoal_model_default_count(scene->desc.model);
        }
        c.pos = 0;
        c.line = c.section_line = 0;
        free(c.section);
        c.section = NULL;
        int rc = ini_parse_stream(scene_read_line, &c, handler, &c);
        if (!c.status && rc != 0)
            c.status = shoal_error_set(err, SHOAL_ERR_INPUT,
                                       "scene %s: line %d: not an INI line (expected [section] "
                                       "or key = value)",
                                       name, rc);
        if (!c.status && c.pass == 1)
            (void)(close_sphere(&c) && close_mesh(&c));
        if (c.status) {
            free(c.section);
            return c.status;
        }
    }
    free(c.section);
    shoal_error e;
    if (shoal_params_validate(scene->desc.model, &scene->desc.params, &e) ||
        shoal_world_validate(
            &scene->desc.world,
            shoal_params_interaction_radius(scene->desc.model, &scene->desc.params), &e))
        return shoal_error_set(err, SHOAL_ERR_INPUT, "scene %s: %.400s", name, e.message);
    return SHOAL_OK;
}

shoal_status shoal_scene_parse(const char *text, const char *name, shoal_scene *scene,
                               shoal_error *err)
{
    CHECK_ARG(text, "text", err);
    CHECK_ARG(scene, "scene", err);
    return scene_parse_dir(text, name, "", scene, err);
}

shoal_status shoal_scene_load(const char *path, shoal_scene *scene, shoal_error *err)
{
    CHECK_ARG(path, "path", err);
    CHECK_ARG(scene, "scene", err);
    FILE *f = fopen(path, "rb");
    if (!f) /* a file that cannot be read: SHOAL_ERR_IO, as for every other file */
        return shoal_error_set(err, SHOAL_ERR_IO, "scene %s: cannot open: %s", path,
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
    /* the scene's directory, as long as the path is (a fixed buffer cut long paths short
     * and looked meshes up in a parent directory) */
    char *dir = strdup(path);
    if (!dir) {
        free(buf);
        return shoal_error_set(err, SHOAL_ERR_NOMEM, "scene %s: out of memory", path);
    }
    char *slash = strrchr(dir, '/');
    if (slash)
        *(slash == dir ? slash + 1 : slash) = 0;
    else
        dir[0] = 0;
    shoal_status st = scene_parse_dir(buf, path, dir, scene, err);
    free(dir);
    free(buf);
    return st;
}

/* Load each [mesh] of the scene and hand it to `add` (a sim's or an obstacle field's). */
typedef shoal_status (*scene_add_fn)(void *to, const shoal_mesh *mesh, const shoal_transform *xf,
                                     shoal_error *err);

static shoal_status scene_meshes(const shoal_scene *scene, scene_add_fn add, void *to,
                                 shoal_error *err)
{
    for (int i = 0; i < scene->mesh_count; i++) {
        const shoal_scene_mesh *m = &scene->meshes[i];
        shoal_mesh mesh;
        shoal_error e;
        shoal_status st = shoal_mesh_load(m->path, &mesh, &e);
        if (st == SHOAL_OK && !mesh.normals)
            st = shoal_mesh_compute_normals(&mesh, &e);
        if (st == SHOAL_OK)
            st = add(to, &mesh, &m->transform, &e);
        shoal_mesh_free(&mesh);
        if (st)
            return shoal_error_set(err, st, "%.200s: [mesh %s]: %.400s", scene->name, m->name,
                                   e.message);
    }
    return SHOAL_OK;
}

static shoal_status add_to_sim(void *to, const shoal_mesh *mesh, const shoal_transform *xf,
                               shoal_error *err)
{
    return shoal_sim_add_obstacle(to, mesh->positions, mesh->normals, mesh->vertex_count, xf, NULL,
                                  err);
}

static shoal_status add_to_obstacles(void *to, const shoal_mesh *mesh, const shoal_transform *xf,
                                     shoal_error *err)
{
    return shoal_obstacles_add(to, mesh->positions, mesh->normals, mesh->vertex_count, xf, NULL,
                               err);
}

shoal_status shoal_scene_add_obstacles(const shoal_scene *scene, shoal_sim *sim, shoal_error *err)
{
    CHECK_ARG(scene, "scene", err);
    CHECK_ARG(sim, "sim", err);
    return scene_meshes(scene, add_to_sim, sim, err);
}

shoal_status shoal_scene_make_obstacles(const shoal_scene *scene, shoal_obstacles **out,
                                        shoal_error *err)
{
    CHECK_ARG(out, "out", err);
    *out = NULL;
    CHECK_ARG(scene, "scene", err);
    shoal_obstacles *o;
    shoal_status st = shoal_obstacles_create(&scene->desc.params, &o, err);
    if (!st && (st = scene_meshes(scene, add_to_obstacles, o, err)))
        shoal_obstacles_destroy(o);
    if (!st)
        *out = o;
    return st;
}

double shoal_scene_set_count(shoal_scene *scene, size_t count, int keep_geometry)
{
    if (!scene)
        return 1.0;
    size_t ref = scene->desc.boid_count;
    scene->desc.boid_count = count;
    if (keep_geometry || count == ref || ref == 0 || count == 0)
        return 1.0;
    /* density by volume, or by area in a 2D world */
    double ratio = (double)count / (double)ref;
    double s = shoal_world_dims(&scene->desc.world) == 2 ? sqrt(ratio) : cbrt(ratio);
    shoal_params_scale_geometry(scene->desc.model, &scene->desc.params, s);
    for (int c = 0; c < 3; c++) {
        /* the world's box with the walls (0, no box, stays 0) */
        scene->desc.world.size[c] = (float)((double)scene->desc.world.size[c] * s);
        scene->desc.world.center[c] = (float)((double)scene->desc.world.center[c] * s);
        if (scene->has_eye)
            scene->eye[c] = (float)((double)scene->eye[c] * s);
        if (scene->has_target)
            scene->target[c] = (float)((double)scene->target[c] * s);
    }
    return s;
}
