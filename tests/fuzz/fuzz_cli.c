/* SPDX-License-Identifier: MIT */
/* libFuzzer target: command-line parsing (src/app/options.c) with the option tables of
 * `shoal init`, `shoal step` and `shoal render`, followed by the value handling those
 * commands do before touching a file: typed getters, --model, --set name=value through
 * shoal_params_set, shoal_params_validate, --simd, --neighbors, --size WxH.
 *
 * The tables are the program's own (src/app/cli_specs.c, compiled into this target).
 *
 * Input: arguments separated by '\n' or NUL; the first argument picks the command by its
 * first byte (i init, r render, anything else step). Parsing must return 0, 1 (help) or 2
 * (error), and an error must be reported, never a crash. stdout/stderr of the parser are
 * sent to /dev/null (the sanitizers write to fd 2 directly, so their reports survive). */
#include "app/cli_specs.h"
#include "app/options.h"
#include "shoal/shoal.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    FILE *null = fopen("/dev/null", "w");
    if (null) {
        stdout = null;
        stderr = null;
    }
    return 0;
}

/* --model, --set and validation, as app.c's app_sim_desc does without a scene file. */
static int fuzz_desc(const opt_values *o, shoal_sim_desc *d)
{
    shoal_error e;
    *d = shoal_sim_desc_default();
    if (options_given(o, "model")) {
        shoal_model m;
        if (shoal_model_parse(options_get(o, "model"), &m, &e))
            return 2;
        d->model = m;
        shoal_params_default(m, &d->params);
        d->boid_count = shoal_model_default_count(m);
    }
    for (int i = 0; i < o->repeat_count; i++) {
        if (o->repeat_of[i] < 0 || o->repeat_of[i] >= o->spec_count)
            abort();
        if (strcmp(o->specs[o->repeat_of[i]].name, "set") != 0)
            continue;
        const char *kv = o->repeat[i];
        const char *eq = strchr(kv, '=');
        if (!eq || eq == kv)
            return 2;
        char name[128];
        size_t len = (size_t)(eq - kv);
        if (len >= sizeof name)
            return 2;
        memcpy(name, kv, len);
        name[len] = 0;
        if (shoal_params_set(d->model, &d->params, name, eq + 1, &e))
            return 2;
    }
    if (shoal_params_validate(d->model, &d->params, &e))
        return 2;
    (void)shoal_params_interaction_radius(d->model, &d->params);
    return 0;
}

static int fuzz_init(const opt_values *o)
{
    shoal_sim_desc d;
    if (fuzz_desc(o, &d))
        return 2;
    long long count, seed;
    if (options_given(o, "count") && options_int(o, "count", 1, 4000000000LL, &count))
        return 2;
    if (options_given(o, "seed") && options_int(o, "seed", 0, 9223372036854775807LL, &seed))
        return 2;
    return options_get(o, "out") ? 0 : 2;
}

static int fuzz_step(const opt_values *o)
{
    shoal_sim_desc d;
    if (fuzz_desc(o, &d))
        return 2;
    long long steps, threads, seed;
    double dt, t0;
    shoal_error e;
    if (options_int(o, "steps", 0, 1000000000LL, &steps))
        return 2;
    if (options_given(o, "threads") && options_int(o, "threads", 1, 256, &threads))
        return 2;
    if (options_given(o, "seed") && options_int(o, "seed", 0, 9223372036854775807LL, &seed))
        return 2;
    if (options_given(o, "dt") && options_double(o, "dt", 1e-12, 1e6, &dt))
        return 2;
    if (options_given(o, "t0") && options_double(o, "t0", -1e15, 1e15, &t0))
        return 2;
    const char *nb = options_get(o, "neighbors");
    if (!nb || (strcmp(nb, "grid") != 0 && strcmp(nb, "brute") != 0))
        return 2;
    shoal_isa isa;
    if (shoal_isa_parse(options_get(o, "simd"), &isa, &e))
        return 2;
    return 0;
}

/* cmd_render.c's --size check, with the renderer's limit. */
static int fuzz_size(const char *v)
{
    char *end;
    long a = strtol(v, &end, 10);
    if (end == v || (*end != 'x' && *end != 'X'))
        return 2;
    const char *p = end + 1;
    long b = strtol(p, &end, 10);
    if (end == p || *end)
        return 2;
    if (a < 1 || b < 1 || a > 16384 || b > 16384)
        return 2;
    return 0;
}

static int fuzz_render(const opt_values *o)
{
    int rc;
    if ((rc = fuzz_size(options_get(o, "size"))))
        return rc;
    double v;
    float eye[3], target[3];
    long long n;
    if (options_double(o, "fov-deg", 1e-3, 179.9, &v) ||
        options_double(o, "near", 1e-6, 1e30, &v) || options_double(o, "far", 1e-6, 1e30, &v) ||
        options_double(o, "fish-length", 1e-6, 1e6, &v) || options_int(o, "threads", 0, 1024, &n))
        return 2;
    if (options_given(o, "eye") && options_vec3(o, "eye", eye))
        return 2;
    if (options_given(o, "target") && options_vec3(o, "target", target))
        return 2;
    if (options_given(o, "bench") &&
        (options_int(o, "bench", 1, 100000, &n) || options_int(o, "count", 0, 100000000, &n) ||
         options_int(o, "seed", 0, INT64_MAX, &n)))
        return 2;
    shoal_isa isa;
    shoal_error e;
    return shoal_isa_parse(options_get(o, "simd"), &isa, &e) ? 2 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 16 * 1024)
        return 0;
    /* One buffer, each separator turned into the NUL that ends an argument. */
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = 0;
    enum { ARG_MAX = 128 };
    char *argv[ARG_MAX + 1];
    int argc = 0;
    char *start = buf;
    for (size_t i = 0; i <= size && argc < ARG_MAX; i++) {
        if (buf[i] == '\n' || buf[i] == 0) {
            buf[i] = 0;
            argv[argc++] = start;
            start = buf + i + 1;
        }
    }
    argv[argc] = NULL;

    const char *cmd = "step";
    const opt_spec *specs = app_step_specs;
    int nspecs = app_step_spec_count;
    if (argv[0][0] == 'i') {
        cmd = "init";
        specs = app_init_specs;
        nspecs = app_init_spec_count;
    } else if (argv[0][0] == 'r') {
        cmd = "render";
        specs = app_render_specs;
        nspecs = app_render_spec_count;
    }
    opt_values o;
    int rc = options_parse(&o, cmd, "[options]", specs, nspecs, 0, argc, argv);
    if (rc != 0 && rc != 1 && rc != 2)
        abort();
    if (rc == 0) {
        if (o.repeat_count < 0 || o.repeat_count > OPT_REPEAT_MAX || o.positional_count != 0)
            abort();
        if (specs == app_init_specs)
            (void)fuzz_init(&o);
        else if (specs == app_step_specs)
            (void)fuzz_step(&o);
        else
            (void)fuzz_render(&o);
    }
    free(buf);
    return 0;
}
