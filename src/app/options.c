/* SPDX-License-Identifier: MIT */
/* Table-driven command-line parsing for the subcommands (see options.h). */
#include "app/options.h"
#include "app/outdir.h"
#include "shoal/base.h"
#include "shoal/io.h"
#include "shoal/sim.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int options_quiet;

static void error_line(const char *cmd, const char *fmt, va_list ap)
{
    /* file names and values come from the user: one line, no terminal controls */
    char raw[4096], line[4 * sizeof raw];
    vsnprintf(raw, sizeof raw, fmt, ap);
    shoal_error_escape(line, sizeof line, raw);
    fprintf(stderr, "shoal%s%s: %s\n", cmd ? " " : "", cmd ? cmd : "", line);
}

void options_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    error_line(cmd, fmt, ap);
    va_end(ap);
}

int options_fail(const opt_values *o, const char *fmt, ...)
{
    if (options_quiet)
        return 2;
    va_list ap;
    va_start(ap, fmt);
    error_line(o->cmd, fmt, ap);
    va_end(ap);
    return 2;
}

int options_check_outputs(const opt_values *o, const char *const *names)
{
    for (const char *const *n = names; *n; n++) {
        const char *path = options_get(o, *n);
        shoal_error e;
        if (path && strcmp(*names, "out") == 0 && strcmp(path, OPTIONS_OUT_NONE) == 0)
            continue;
        if (path && shoal_io_atomic_check(path, &e))
            return options_fail(o, "--%s: %s", *n, e.message);
        for (const char *const *m = names; m != n; m++) {
            const char *other = options_get(o, *m);
            if (path && other && app_same_output(other, path))
                return options_fail(o,
                                    "--%s and --%s name the same file %s: give each output "
                                    "its own file",
                                    *m, *n, path);
        }
    }
    return 0;
}

const char *options_out(const opt_values *o)
{
    const char *v = options_given(o, "out") ? options_get(o, "out") : NULL;
    return v && strcmp(v, OPTIONS_OUT_NONE) == 0 ? NULL : v;
}

static int find(const opt_values *o, const char *name, size_t len)
{
    for (int i = 0; i < o->spec_count; i++)
        if (strlen(o->specs[i].name) == len && strncmp(o->specs[i].name, name, len) == 0)
            return i;
    return -1;
}

/* The library's default model (shoal_sim_desc_default), as OPT_MODEL_DEFAULT names it. */
static const char *default_model(void) { return shoal_model_name(shoal_sim_desc_default().model); }

void options_expand(const char *in, char *out, size_t size)
{
    size_t n = 0;
    out[0] = 0;
    while (*in && n + 1 < size) {
        const char *ins = NULL;
        char list[256];
        if (strncmp(in, "{models}", 8) == 0) {
            /* "a, b, c" */
            size_t used = 0;
            list[0] = 0;
            for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
                int k = snprintf(list + used, sizeof list - used, "%s%s", m ? ", " : "",
                                 shoal_model_name((shoal_model)m));
                used += k > 0 && (size_t)k < sizeof list - used ? (size_t)k : 0;
            }
            ins = list;
            in += 8;
        } else if (strncmp(in, OPT_MODEL_DEFAULT, strlen(OPT_MODEL_DEFAULT)) == 0) {
            ins = default_model();
            in += strlen(OPT_MODEL_DEFAULT);
        }
        if (ins) {
            int k = snprintf(out + n, size - n, "%s", ins);
            n += k > 0 && (size_t)k < size - n ? (size_t)k : size - n - 1;
            continue;
        }
        out[n++] = *in++;
        out[n] = 0;
    }
}

void options_print_help(const opt_values *o, const char *usage)
{
    printf("usage: shoal %s %s\n\noptions:\n", o->cmd, usage);
    for (int i = 0; i < o->spec_count; i++) {
        const opt_spec *s = &o->specs[i];
        char left[64], help[1024];
        snprintf(left, sizeof left, "--%s%s%s", s->name, s->kind == OPT_FLAG ? "" : " ",
                 s->kind == OPT_FLAG ? "" : (s->metavar ? s->metavar : "VALUE"));
        options_expand(s->help, help, sizeof help);
        printf("  %-26s %s", left, help);
        if (s->def) {
            char def[256];
            options_expand(s->def, def, sizeof def);
            printf(" (default: %s)", def);
        }
        if (s->kind == OPT_REPEAT)
            printf(" (repeatable)");
        printf("\n");
    }
    printf("  %-26s %s\n", "--help", "show this help");
}

int options_parse(opt_values *o, const char *cmd, const char *usage, const opt_spec *specs,
                  int spec_count, int max_positional, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    o->cmd = cmd;
    o->specs = specs;
    o->spec_count = spec_count < OPT_MAX ? spec_count : OPT_MAX;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            options_print_help(o, usage);
            return 1;
        }
        if (strncmp(a, "--", 2) != 0) {
            if (o->positional_count >= max_positional || o->positional_count >= 8)
                return options_fail(o, "unexpected argument '%s' (see shoal %s --help)", a, cmd);
            o->positional[o->positional_count++] = a;
            continue;
        }
        const char *name = a + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        int k = find(o, name, len);
        if (k < 0)
            return options_fail(o, "unknown option '--%.*s' (see shoal %s --help)", (int)len, name,
                                cmd);
        const opt_spec *s = &specs[k];
        const char *val = NULL;
        if (s->kind == OPT_FLAG) {
            if (eq)
                return options_fail(o, "--%s takes no value", s->name);
            val = "1";
        } else if (eq) {
            val = eq + 1;
        } else {
            if (i + 1 >= argc)
                return options_fail(o, "--%s needs a value (%s)", s->name,
                                    s->metavar ? s->metavar : "VALUE");
            val = argv[++i];
        }
        if (s->kind == OPT_REPEAT) {
            if (o->repeat_count >= OPT_REPEAT_MAX)
                return options_fail(o, "too many --%s options", s->name);
            o->repeat[o->repeat_count] = val;
            o->repeat_of[o->repeat_count++] = k;
        } else if (o->given[k] && s->kind == OPT_VALUE) {
            return options_fail(o, "--%s given twice", s->name);
        }
        o->value[k] = val;
        o->given[k] = 1;
    }
    return 0;
}

const char *options_get(const opt_values *o, const char *name)
{
    int k = find(o, name, strlen(name));
    if (k < 0)
        return NULL;
    if (o->given[k])
        return o->value[k];
    const char *def = o->specs[k].def;
    return def && strcmp(def, OPT_MODEL_DEFAULT) == 0 ? default_model() : def;
}

int options_given(const opt_values *o, const char *name)
{
    int k = find(o, name, strlen(name));
    return k >= 0 && o->given[k];
}

int options_int_text(const char *v, long long lo, long long hi, long long *out)
{
    if (!v)
        return 1;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (end == v)
        return 1;
    while (*end == ' ' || *end == '\t') /* blanks after, as a number in a scene file */
        end++;
    if (*end)
        return 1;
    if (errno == ERANGE || x < lo || x > hi)
        return 2;
    *out = x;
    return 0;
}

int options_int(const opt_values *o, const char *name, long long lo, long long hi, long long *out)
{
    const char *v = options_get(o, name);
    if (!v)
        return options_fail(o, "--%s is required", name);
    int bad = options_int_text(v, lo, hi, out);
    if (bad == 1)
        return options_fail(o, "--%s: '%s' is not an integer", name, v);
    if (bad == 2)
        return options_fail(o, "--%s: '%s' is out of range [%lld, %lld]", name, v, lo, hi);
    return 0;
}

int options_double(const opt_values *o, const char *name, double lo, double hi, double *out)
{
    const char *v = options_get(o, name);
    if (!v)
        return options_fail(o, "--%s is required", name);
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (end == v || *end || errno == ERANGE || !isfinite(x))
        return options_fail(o, "--%s: '%s' is not a finite number", name, v);
    if (!(x >= lo && x <= hi))
        return options_fail(o, "--%s: %g is out of range [%g, %g]", name, x, lo, hi);
    *out = x;
    return 0;
}

int options_vec3(const opt_values *o, const char *name, float out[3])
{
    const char *v = options_get(o, name);
    if (!v)
        return options_fail(o, "--%s is required", name);
    double x[3];
    char *end;
    const char *p = v;
    for (int c = 0; c < 3; c++) {
        errno = 0;
        x[c] = strtod(p, &end);
        if (end == p || errno == ERANGE || !isfinite(x[c]) || fabs(x[c]) > 1e30)
            return options_fail(o, "--%s: '%s' is not x,y,z (three finite numbers)", name, v);
        p = end;
        if (c < 2) {
            if (*p != ',')
                return options_fail(o, "--%s: '%s' is not x,y,z", name, v);
            p++;
        }
    }
    if (*p)
        return options_fail(o, "--%s: '%s' is not x,y,z", name, v);
    for (int c = 0; c < 3; c++)
        out[c] = (float)x[c];
    return 0;
}
