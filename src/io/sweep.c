/* SPDX-License-Identifier: MIT */
/* Parameter sweeps (shoal/sweep.h): the grid of values, each member's desc, one member's run
 * and the table's rows. The member logic that `shoal sweep` (src/app/cmd_sweep.c: processes,
 * files, resume) and the Python module share. At io's level because a member loads the
 * scene's obstacle meshes. Owns its sweep object only. */
#include "shoal/sweep.h"
#include "core/check.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct vary {
    char name[64];
    int n;
    char (*txt)[32]; /* each value as given to shoal_params_set (%.9g) */
} vary;

struct shoal_sweep {
    shoal_sim_desc base;
    shoal_scene scene;
    vary v[SHOAL_SWEEP_MAX_VARY];
    int nv;
    uint64_t seed_lo, seed_hi;
    uint64_t combos;
    int64_t steps, every;
    double radius;
    /* the scene's meshes as OBJ bytes given by the caller (NULL: read from their files) */
    unsigned char *mesh_data[SHOAL_SCENE_MAX_MESHES];
    size_t mesh_size[SHOAL_SCENE_MAX_MESHES];
    const volatile int *cancel; /* shoal_sweep_set_cancel */
};

void shoal_sweep_set_cancel(shoal_sweep *sw, const volatile int *flag) { sw->cancel = flag; }

shoal_status shoal_sweep_create(const shoal_sim_desc *base, const shoal_scene *scene,
                                shoal_sweep **out, shoal_error *err)
{
    CHECK_ARG(out, "out", err);
    *out = NULL;
    CHECK_ARG(base, "base", err);
    shoal_status st = shoal_params_validate(base->model, &base->params, err);
    if (st)
        return st;
    if (base->boid_count < 1)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "sweep: boid count must be at least 1");
    shoal_sweep *sw = calloc(1, sizeof *sw);
    if (!sw)
        return shoal_error_set(err, SHOAL_ERR_NOMEM, "out of memory for a sweep");
    sw->base = *base;
    if (scene)
        sw->scene = *scene;
    sw->seed_lo = sw->seed_hi = 1;
    sw->combos = 1;
    sw->steps = 600;
    sw->every = 60;
    sw->radius = shoal_params_interaction_radius(base->model, &base->params);
    *out = sw;
    return SHOAL_OK;
}

void shoal_sweep_destroy(shoal_sweep *sw)
{
    if (!sw)
        return;
    for (int i = 0; i < sw->nv; i++)
        free(sw->v[i].txt);
    for (int i = 0; i < SHOAL_SCENE_MAX_MESHES; i++)
        free(sw->mesh_data[i]);
    free(sw);
}

shoal_status shoal_sweep_vary(shoal_sweep *sw, const char *spec, shoal_error *err)
{
    CHECK_ARG(sw, "sw", err);
    CHECK_ARG(spec, "spec", err);
    if (sw->nv == SHOAL_SWEEP_MAX_VARY)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "more than %d varied parameters",
                               SHOAL_SWEEP_MAX_VARY);
    vary *v = &sw->v[sw->nv];
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec || (size_t)(eq - spec) >= sizeof v->name)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "vary '%s': expected NAME=a:b:step or NAME=v1,v2,...", spec);
    char name[sizeof v->name];
    snprintf(name, sizeof name, "%.*s", (int)(eq - spec), spec);
    const char *val = eq + 1;
    double *list = malloc(SHOAL_SWEEP_MAX_VALUES * sizeof *list);
    if (!list)
        return shoal_error_set(err, SHOAL_ERR_NOMEM, "out of memory");
    int n = 0;
    shoal_status st = SHOAL_OK;
    if (strchr(val, ':')) {
        double a, b, step;
        int used = 0;
        if (sscanf(val, "%lf:%lf:%lf%n", &a, &b, &step, &used) != 3 || val[used] || !isfinite(a) ||
            !isfinite(b) || !isfinite(step))
            st = shoal_error_set(err, SHOAL_ERR_INPUT, "vary '%s': expected NAME=a:b:step", spec);
        else if (!(step > 0) || b < a)
            st = shoal_error_set(err, SHOAL_ERR_INPUT,
                                 "vary '%s': empty range (need a <= b and step > 0)", spec);
        else {
            double span = (b - a) / step;
            if (!isfinite(b - a)) /* b - a beyond DBL_MAX: the same count without the overflow */
                span = b / step - a / step;
            if (!(span < SHOAL_SWEEP_MAX_VALUES)) {
                st = shoal_error_set(err, SHOAL_ERR_INPUT, "vary '%s': more than %d values", spec,
                                     SHOAL_SWEEP_MAX_VALUES);
            } else {
                /* a, a + step, ... up to b, b included when it falls on the grid (to 1e-9
                 * steps) */
                int cnt = (int)floor(span + 1e-9) + 1;
                for (int i = 0; i < cnt; i++) {
                    list[n] = a + (double)i * step;
                    if (!isfinite(list[n])) /* i * step overflowed; the value itself is <= b */
                        list[n] = fma((double)i, step, a);
                    n++;
                }
            }
        }
    } else {
        const char *p = val;
        for (;;) {
            char *end;
            double x = strtod(p, &end);
            if (end == p || !isfinite(x) || (*end && *end != ',')) {
                st = shoal_error_set(err, SHOAL_ERR_INPUT,
                                     "vary '%s': '%s' is not a list of numbers", spec, val);
                break;
            }
            if (n >= SHOAL_SWEEP_MAX_VALUES) {
                st = shoal_error_set(err, SHOAL_ERR_INPUT, "vary '%s': more than %d values", spec,
                                     SHOAL_SWEEP_MAX_VALUES);
                break;
            }
            list[n++] = x;
            if (!*end)
                break;
            p = end + 1;
        }
    }
    char(*txt)[32] = st ? NULL : malloc((size_t)n * sizeof *txt);
    if (!st && !txt)
        st = shoal_error_set(err, SHOAL_ERR_NOMEM, "out of memory");
    for (int i = 0; !st && i < n; i++) {
        snprintf(txt[i], sizeof txt[i], "%.9g", list[i]);
        /* every value must be one the model takes: checked now, before anything runs */
        shoal_params p = sw->base.params;
        shoal_error e;
        if (shoal_params_set(sw->base.model, &p, name, txt[i], &e))
            st = shoal_error_set(err, e.status, "vary %s: %s", name, e.message);
    }
    free(list);
    /* (in this order, as `shoal sweep` has always checked: values, then the name, then the
     * size of the grid) */
    for (int j = 0; !st && j < sw->nv; j++)
        if (strcmp(sw->v[j].name, name) == 0)
            st = shoal_error_set(err, SHOAL_ERR_INPUT, "vary %s given twice", name);
    if (!st && sw->combos * (uint64_t)n > (uint64_t)SHOAL_SWEEP_MAX_MEMBERS)
        st = shoal_error_set(err, SHOAL_ERR_INPUT, "more than %lld combinations",
                             SHOAL_SWEEP_MAX_MEMBERS);
    if (st) {
        free(txt);
        return st;
    }
    memcpy(v->name, name, sizeof v->name);
    v->n = n;
    v->txt = txt;
    sw->nv++;
    sw->combos *= (uint64_t)n;
    return SHOAL_OK;
}

shoal_status shoal_sweep_set_seeds(shoal_sweep *sw, uint64_t first, uint64_t last, shoal_error *err)
{
    CHECK_ARG(sw, "sw", err);
    if (last < first)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "seeds %llu..%llu: empty range",
                               (unsigned long long)first, (unsigned long long)last);
    if (last > (uint64_t)INT64_MAX) /* the command line's --seeds range, for every front end */
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "seeds %llu..%llu: out of range [0, 9223372036854775807]",
                               (unsigned long long)first, (unsigned long long)last);
    if (last - first >= (uint64_t)SHOAL_SWEEP_MAX_MEMBERS)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "seeds %llu..%llu: too many seeds",
                               (unsigned long long)first, (unsigned long long)last);
    sw->seed_lo = first;
    sw->seed_hi = last;
    return SHOAL_OK;
}

shoal_status shoal_sweep_set_steps(shoal_sweep *sw, int64_t steps, int64_t every, shoal_error *err)
{
    CHECK_ARG(sw, "sw", err);
    if (steps < 0 || steps > 1000000000LL)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "steps %lld: expected 0..1000000000",
                               (long long)steps);
    if (every < 0 || every > 1000000000LL)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "every %lld: expected 1..1000000000",
                               (long long)every);
    sw->steps = steps;
    sw->every = every ? every : steps >= 10 ? steps / 10 : 1;
    return SHOAL_OK;
}

shoal_status shoal_sweep_set_radius(shoal_sweep *sw, double radius, shoal_error *err)
{
    CHECK_ARG(sw, "sw", err);
    if (!(radius >= 0) || !isfinite(radius))
        return shoal_error_set(err, SHOAL_ERR_INPUT, "radius %g: expected a finite value >= 0",
                               radius);
    sw->radius = radius;
    return SHOAL_OK;
}

static uint64_t seed_count(const shoal_sweep *sw) { return sw->seed_hi - sw->seed_lo + 1; }

uint64_t shoal_sweep_combination_count(const shoal_sweep *sw) { return sw ? sw->combos : 0; }
uint64_t shoal_sweep_member_count(const shoal_sweep *sw)
{
    return sw ? sw->combos * seed_count(sw) : 0;
}
size_t shoal_sweep_vary_count(const shoal_sweep *sw) { return sw ? (size_t)sw->nv : 0; }
int64_t shoal_sweep_steps(const shoal_sweep *sw) { return sw ? sw->steps : 0; }
int64_t shoal_sweep_every(const shoal_sweep *sw) { return sw ? sw->every : 0; }
double shoal_sweep_radius(const shoal_sweep *sw) { return sw ? sw->radius : 0; }
const shoal_sim_desc *shoal_sweep_base(const shoal_sweep *sw) { return sw ? &sw->base : NULL; }

shoal_status shoal_sweep_set_mesh_bytes(shoal_sweep *sw, size_t index, const void *data,
                                        size_t size, shoal_error *err)
{
    CHECK_ARG(sw, "sw", err);
    CHECK_ARRAY(data, size, "data", err);
    if (index >= (size_t)sw->scene.mesh_count)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "mesh %zu: the scene has %d", index,
                               sw->scene.mesh_count);
    unsigned char *copy = malloc(size ? size : 1);
    if (!copy)
        return shoal_error_set(err, SHOAL_ERR_NOMEM, "out of memory for a mesh of %zu bytes", size);
    if (size)
        memcpy(copy, data, size);
    free(sw->mesh_data[index]);
    sw->mesh_data[index] = copy;
    sw->mesh_size[index] = size;
    return SHOAL_OK;
}

int64_t shoal_sweep_sample_step(const shoal_sweep *sw, size_t i)
{
    if (!sw)
        return 0;
    /* steps 0, E, 2E, ... below K, then K */
    if (i + 1 >= shoal_sweep_sample_count(sw))
        return sw->steps;
    return (int64_t)i * sw->every;
}

size_t shoal_sweep_sample_count(const shoal_sweep *sw)
{
    if (!sw)
        return 0;
    /* steps 0, E, 2E, ... below K, then K */
    if (sw->steps == 0)
        return 1;
    return (size_t)((sw->steps + sw->every - 1) / sw->every) + 1;
}

const char *shoal_sweep_vary_name(const shoal_sweep *sw, size_t i)
{
    return sw && i < (size_t)sw->nv ? sw->v[i].name : NULL;
}

size_t shoal_sweep_vary_value_count(const shoal_sweep *sw, size_t i)
{
    return sw && i < (size_t)sw->nv ? (size_t)sw->v[i].n : 0;
}

const char *shoal_sweep_vary_value(const shoal_sweep *sw, size_t i, size_t j)
{
    return sw && i < (size_t)sw->nv && j < (size_t)sw->v[i].n ? sw->v[i].txt[j] : NULL;
}

/* the index of varied parameter i's value in member k (the last varies fastest) */
static int value_index(const shoal_sweep *sw, uint64_t member, size_t i)
{
    uint64_t combo = member / seed_count(sw);
    for (int j = sw->nv - 1; j > (int)i; j--)
        combo /= (uint64_t)sw->v[j].n;
    return (int)(combo % (uint64_t)sw->v[i].n);
}

const char *shoal_sweep_member_value(const shoal_sweep *sw, uint64_t member, size_t i)
{
    if (!sw)
        return NULL;
    if (i >= (size_t)sw->nv || member >= shoal_sweep_member_count(sw))
        return NULL;
    return sw->v[i].txt[value_index(sw, member, i)];
}

shoal_status shoal_sweep_member_desc(const shoal_sweep *sw, uint64_t member, int thread_count,
                                     shoal_sim_desc *d, shoal_error *err)
{
    CHECK_ARG(sw, "sw", err);
    CHECK_ARG(d, "desc", err);
    if (member >= shoal_sweep_member_count(sw))
        return shoal_error_set(err, SHOAL_ERR_INPUT, "member %llu: the sweep has %llu",
                               (unsigned long long)member,
                               (unsigned long long)shoal_sweep_member_count(sw));
    *d = sw->base;
    d->seed = sw->seed_lo + member % seed_count(sw);
    for (int i = 0; i < sw->nv; i++) {
        shoal_status st = shoal_params_set(d->model, &d->params, sw->v[i].name,
                                           sw->v[i].txt[value_index(sw, member, (size_t)i)], err);
        if (st)
            return st;
    }
    d->thread_count = thread_count;
    return shoal_params_validate(d->model, &d->params, err);
}

shoal_status shoal_sweep_check(const shoal_sweep *sw, shoal_error *err)
{
    CHECK_ARG(sw, "sw", err);
    for (uint64_t k = 0; k < sw->combos; k++) {
        shoal_sim_desc d;
        shoal_error e;
        if (shoal_sweep_member_desc(sw, k * seed_count(sw), 0, &d, &e))
            return shoal_error_set(err, e.status, "member %llu: %s",
                                   (unsigned long long)(k * seed_count(sw)), e.message);
    }
    return SHOAL_OK;
}

/* The scene's obstacle meshes onto a member's sim: from the bytes the caller gave
 * (shoal_sweep_set_mesh_bytes; the same parse as from the file, so the same bits) or from
 * the files. */
static shoal_status member_obstacles(const shoal_sweep *sw, shoal_sim *sim, shoal_error *e)
{
    for (int i = 0; i < sw->scene.mesh_count; i++) {
        if (!sw->mesh_data[i])
            continue;
        const shoal_scene_mesh *m = &sw->scene.meshes[i];
        shoal_mesh mesh;
        shoal_error me;
        shoal_status st = shoal_mesh_parse(sw->mesh_data[i], sw->mesh_size[i], m->path, &mesh, &me);
        if (st == SHOAL_OK && !mesh.normals)
            st = shoal_mesh_compute_normals(&mesh, &me);
        if (st == SHOAL_OK)
            st = shoal_sim_add_obstacle(sim, mesh.positions, mesh.normals, mesh.vertex_count,
                                        &m->transform, NULL, &me);
        shoal_mesh_free(&mesh);
        if (st)
            return shoal_error_set(e, st, "%.200s: [mesh %s]: %.400s", sw->scene.name, m->name,
                                   me.message);
    }
    /* the meshes given by no bytes, from their files, in the scene's order */
    int from_files = 0;
    for (int i = 0; i < sw->scene.mesh_count; i++)
        from_files += !sw->mesh_data[i];
    if (from_files == sw->scene.mesh_count)
        return shoal_scene_add_obstacles(&sw->scene, sim, e);
    if (from_files)
        return shoal_error_set(e, SHOAL_ERR_INPUT,
                               "%.200s: give the bytes of every mesh or of none", sw->scene.name);
    return SHOAL_OK;
}

shoal_status shoal_sweep_run_member(const shoal_sweep *sw, uint64_t member, int thread_count,
                                    shoal_sweep_sample *samples, size_t sample_count,
                                    shoal_error *err)
{
    CHECK_ARG(sw, "sw", err);
    CHECK_ARRAY(samples, sample_count, "samples", err);
    if (sample_count != shoal_sweep_sample_count(sw))
        return shoal_error_set(
            err, SHOAL_ERR_INPUT, "member %llu: room for %zu samples, the member has %zu",
            (unsigned long long)member, sample_count, shoal_sweep_sample_count(sw));
    shoal_sim_desc d;
    shoal_status st = shoal_sweep_member_desc(sw, member, thread_count, &d, err);
    if (st)
        return st;
    shoal_sim *sim = NULL;
    float *rows = NULL;
    if ((st = shoal_sim_create(&d, &sim, err)) || (st = shoal_sim_draw_state(sim, err)) ||
        (st = member_obstacles(sw, sim, err)))
        goto done;
    rows = malloc(d.boid_count * SHOAL_STATE_COLUMNS * sizeof(float));
    if (!rows) {
        st = shoal_error_set(err, SHOAL_ERR_NOMEM, "out of memory for %zu boids", d.boid_count);
        goto done;
    }
    shoal_stats_desc sd = shoal_stats_desc_default();
    sd.radius = sw->radius;
    sd.thread_count = thread_count;
    size_t k = 0;
    for (int64_t done = 0;;) {
        if ((st = shoal_sim_get_rows(sim, rows, d.boid_count, err)))
            goto done;
        shoal_sweep_sample *s = &samples[k++];
        memset(s, 0, sizeof *s);
        s->member = member;
        s->seed = d.seed;
        s->step = done;
        s->time_s = shoal_sim_time(sim);
        if ((st = shoal_stats_compute(rows, d.boid_count, &sd, &s->stats, err)))
            goto done;
        if (done >= sw->steps)
            break;
        int64_t next = (done / sw->every + 1) * sw->every;
        int64_t n = (next < sw->steps ? next : sw->steps) - done;
        /* with a cancel flag, one step at a time, so that a raised flag is seen within one */
        for (int64_t chunk = sw->cancel ? 1 : n; n > 0; n -= chunk, done += chunk) {
            if (sw->cancel && *sw->cancel) {
                st =
                    shoal_error_set(err, SHOAL_ERR_CANCELLED, "member %llu: cancelled at step %lld",
                                    (unsigned long long)member, (long long)done);
                goto done;
            }
            if ((st = shoal_sim_step(sim, (int)chunk, err)))
                goto done;
        }
    }
done:
    free(rows);
    shoal_sim_destroy(sim);
    return st;
}

/* snprintf into buf at *len, keeping the total length whatever fits */
static void put(char *buf, size_t size, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(*len < size ? buf + *len : NULL, *len < size ? size - *len : 0, fmt, ap);
    va_end(ap);
    if (n > 0)
        *len += (size_t)n;
}

size_t shoal_sweep_format_header(const shoal_sweep *sw, char *buf, size_t size)
{
    if (!sw || (!buf && size))
        return 0;
    size_t len = 0;
    if (size)
        buf[0] = 0;
    put(buf, size, &len, "member,seed");
    for (int i = 0; i < sw->nv; i++)
        put(buf, size, &len, ",%s", sw->v[i].name);
    put(buf, size, &len,
        ",step,t,polarization,milling,mean_speed,mean_nn_distance,group_count,"
        "largest_group_fraction,extent_x,extent_y,extent_z");
    return len;
}

size_t shoal_sweep_format_sample(const shoal_sweep *sw, const shoal_sweep_sample *s, char *buf,
                                 size_t size)
{
    if (!sw || !s || (!buf && size))
        return 0;
    size_t len = 0;
    if (size)
        buf[0] = 0;
    put(buf, size, &len, "%llu,%llu", (unsigned long long)s->member, (unsigned long long)s->seed);
    for (int i = 0; i < sw->nv; i++) {
        const char *v = shoal_sweep_member_value(sw, s->member, (size_t)i);
        put(buf, size, &len, ",%s", v ? v : "");
    }
    const shoal_stats *t = &s->stats;
    put(buf, size, &len, ",%lld,%.17g,%.17g,%.17g,%.17g,%.17g,%llu,%.17g,%.17g,%.17g,%.17g",
        (long long)s->step, s->time_s, t->polarisation, t->milling, t->mean_speed,
        t->mean_nn_distance, (unsigned long long)t->group_count, t->largest_group_fraction,
        t->extent[0], t->extent[1], t->extent[2]);
    return len;
}
