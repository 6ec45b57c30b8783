/* SPDX-License-Identifier: MIT */
/* `shoal params`: every model's parameters as the library's table has them (name, meaning,
 * unit, default, range; shoal_model_get_info), then the world's (shoal_world_params_list),
 * as text, JSON or the Markdown rows of docs/MODELS.md and docs/WORLD.md (test_cli checks
 * that the document and this command agree), or the model names alone (--names: what
 * scripts iterate instead of typing the list). Numbers are
 * written with the fewest digits that read back as the same float. */
#include "app/app.h"
#include "app/options.h"
#include "support/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const opt_spec params_opts[] = {
    {"model", OPT_VALUE, "M", NULL, "only this model (" APP_MODEL_HELP ")"},
    {"json", OPT_FLAG, NULL, NULL, "JSON: {\"models\": [{name, origin, parameters: [...]}]}"},
    {"markdown", OPT_FLAG, NULL, NULL, "the rows of docs/MODELS.md's parameter tables"},
    {"world", OPT_FLAG, NULL, NULL,
     "only the world's parameters (every model's: dims, periodic, world_size, world_center)"},
    {"names", OPT_FLAG, NULL, NULL,
     "the model names only, one a line in the table's order (scripts iterate it)"},
};

/* The shortest %g of `v` that reads back as the same float ("0.1", not "0.100000001"). */
static const char *num(float v, char *buf, size_t size)
{
    for (int digits = 6; digits <= 9; digits++) {
        snprintf(buf, size, "%.*g", digits, (double)v);
        if (strtof(buf, NULL) == v)
            break;
    }
    return buf;
}

/* "[lo, hi]", with ", integer" for whole-number parameters. */
static const char *range(const shoal_param_info *p, char *buf, size_t size)
{
    char lo[32], hi[32];
    snprintf(buf, size, "[%s, %s]%s", num(p->min, lo, sizeof lo), num(p->max, hi, sizeof hi),
             p->is_integer ? ", integer" : "");
    return buf;
}

static void print_text(const shoal_model_info *mi)
{
    printf("%s: %s (%zu boids by default)\n", mi->name, mi->origin, mi->default_count);
    printf("  %-18s %-10s %-26s %-12s %s\n", "name", "default", "range", "unit", "meaning");
    for (size_t i = 0; i < mi->param_count; i++) {
        const shoal_param_info *p = &mi->params[i];
        char d[32], r[80];
        printf("  %-18s %-10s %-26s %-12s %s\n", p->name, num(p->default_value, d, sizeof d),
               range(p, r, sizeof r), p->unit, p->help);
    }
    printf("  the window's keys edit:");
    for (size_t k = 0; k < mi->live_count; k++)
        printf(" %s", mi->live_params[k]);
    printf("\n");
}

static void print_markdown(const shoal_model_info *mi)
{
    printf("| name | meaning | unit | default | range |\n| --- | --- | --- | --- | --- |\n");
    for (size_t i = 0; i < mi->param_count; i++) {
        const shoal_param_info *p = &mi->params[i];
        char d[32], r[80];
        printf("| `%s` | %s | %s | %s | %s |\n", p->name, p->help, p->unit,
               num(p->default_value, d, sizeof d), range(p, r, sizeof r));
    }
}

static void print_json(const shoal_model_info *mi, int first)
{
    char b[32];
    printf("%s\n    {\"name\": ", first ? "" : ",");
    json_write_string(stdout, mi->name);
    printf(", \"origin\": ");
    json_write_string(stdout, mi->origin);
    printf(", \"default_count\": %zu, \"speed_per_step\": %s,\n     \"window_keys\": [",
           mi->default_count, mi->speed_per_step ? "true" : "false");
    for (size_t k = 0; k < mi->live_count; k++) {
        printf("%s", k ? ", " : "");
        json_write_string(stdout, mi->live_params[k]);
    }
    printf("],\n     \"parameters\": [");
    for (size_t i = 0; i < mi->param_count; i++) {
        const shoal_param_info *p = &mi->params[i];
        printf("%s\n      {\"name\": ", i ? "," : "");
        json_write_string(stdout, p->name);
        printf(", \"meaning\": ");
        json_write_string(stdout, p->help);
        printf(", \"unit\": ");
        json_write_string(stdout, p->unit);
        printf(", \"default\": %s", num(p->default_value, b, sizeof b));
        printf(", \"min\": %s", num(p->min, b, sizeof b));
        printf(", \"max\": %s", num(p->max, b, sizeof b));
        printf(", \"integer\": %s}", p->is_integer ? "true" : "false");
    }
    printf("]}");
}

/* The world's table (shoal_world_params_list): every model runs in a world. */
static void print_world(int json, int md)
{
    size_t n;
    const shoal_param_info *list = shoal_world_params_list(&n);
    shoal_model_info wi = {.name = "world",
                           .origin = "every model's world (docs/WORLD.md; periodic=1 and "
                                     "world_size=Lx,Ly,Lz, world_center=x,y,z set all axes)",
                           .params = list,
                           .param_count = n};
    if (json) {
        char b[32];
        printf("\"world\": [");
        for (size_t i = 0; i < n; i++) {
            const shoal_param_info *p = &list[i];
            printf("%s\n    {\"name\": ", i ? "," : "");
            json_write_string(stdout, p->name);
            printf(", \"meaning\": ");
            json_write_string(stdout, p->help);
            printf(", \"unit\": ");
            json_write_string(stdout, p->unit);
            printf(", \"default\": %s", num(p->default_value, b, sizeof b));
            printf(", \"min\": %s", num(p->min, b, sizeof b));
            printf(", \"max\": %s", num(p->max, b, sizeof b));
            printf(", \"integer\": %s}", p->is_integer ? "true" : "false");
        }
        printf("\n  ]");
    } else if (md) {
        print_markdown(&wi);
    } else {
        printf("%s: %s\n", wi.name, wi.origin);
        printf("  %-18s %-10s %-26s %-12s %s\n", "name", "default", "range", "unit", "meaning");
        for (size_t i = 0; i < n; i++) {
            const shoal_param_info *p = &list[i];
            char d[32], r[80];
            printf("  %-18s %-10s %-26s %-12s %s\n", p->name, num(p->default_value, d, sizeof d),
                   range(p, r, sizeof r), p->unit, p->help);
        }
    }
}

int cmd_params(int argc, char **argv)
{
    opt_values o;
    int rc = options_parse(&o, "params", "[--model M] [--json | --markdown | --names]", params_opts,
                           (int)(sizeof params_opts / sizeof params_opts[0]), 0, argc, argv);
    if (rc)
        return rc == 1 ? 0 : rc;
    int json = options_given(&o, "json"), md = options_given(&o, "markdown");
    int names = options_given(&o, "names");
    if (json + md + names > 1)
        return options_fail(&o, "--json, --markdown and --names: one output format at a time");
    if (options_given(&o, "world")) {
        if (options_given(&o, "model") || names)
            return options_fail(&o, "--world lists the world's parameters, the same for every "
                                    "model: give --model, --names or --world");
        if (json)
            printf("{");
        print_world(json, md);
        if (json)
            printf("}\n");
        return 0;
    }
    int first = 0, last = SHOAL_MODEL_COUNT - 1;
    if (options_given(&o, "model")) {
        shoal_model m;
        shoal_error e;
        if (shoal_model_parse(options_get(&o, "model"), &m, &e))
            return app_fail_status(&o, &e);
        first = last = (int)m;
    }
    if (names) {
        for (int m = first; m <= last; m++)
            printf("%s\n", shoal_model_name((shoal_model)m));
        return 0;
    }
    if (json)
        printf("{\"models\": [");
    for (int m = first; m <= last; m++) {
        const shoal_model_info *mi = shoal_model_get_info((shoal_model)m);
        if (json)
            print_json(mi, m == first);
        else if (md)
            print_markdown(mi);
        else
            print_text(mi);
        if (!json && m < last)
            printf("\n");
    }
    /* every model runs in a world: its table follows (the Markdown has only the models'
     * rows, as docs/MODELS.md does; --world --markdown gives docs/WORLD.md's) */
    if (json) {
        printf("\n], ");
        print_world(1, 0);
        printf("}\n");
    } else if (!md) {
        printf("\n");
        print_world(0, 0);
    }
    return 0;
}
