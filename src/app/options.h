/* SPDX-License-Identifier: MIT */
/* The subcommands' command-line parser: a table of options per subcommand, "--name value"
 * and "--name=value", repeatable options, --help generated from the table (with defaults).
 * Errors print one line "shoal CMD: problem" and make the command exit with 2. */
#ifndef SHOAL_APP_OPTIONS_H
#define SHOAL_APP_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

typedef enum opt_kind {
    OPT_VALUE,  /* takes a value */
    OPT_FLAG,   /* no value */
    OPT_REPEAT, /* takes a value, may repeat (collected in order) */
} opt_kind;

typedef struct opt_spec {
    const char *name; /* without the leading -- */
    opt_kind kind;
    const char *metavar;
    const char *def; /* default shown in --help (NULL: none / required) */
    const char *help;
} opt_spec;

/* In a help text or a default, "{models}" stands for every model of the library's table (in
 * enum order, "a, b, c") and OPT_MODEL_DEFAULT for the library's default model: the program
 * names no model itself, so a model added to the table is in every command's help. A default
 * that is exactly OPT_MODEL_DEFAULT is also the value options_get returns. */
#define OPT_MODEL_DEFAULT "{model}"
/* `in` with the placeholders replaced, into out (truncated to size). */
void options_expand(const char *in, char *out, size_t size);

#define OPT_MAX 48
#define OPT_REPEAT_MAX 256

typedef struct opt_values {
    const char *cmd;
    const opt_spec *specs;
    int spec_count;
    const char *value[OPT_MAX];
    int given[OPT_MAX];
    const char *repeat[OPT_REPEAT_MAX];
    int repeat_of[OPT_REPEAT_MAX];
    int repeat_count;
    const char *positional[8];
    int positional_count;
} opt_values;

/* Parse argv[1..argc) (argv[0] is the subcommand). Returns 0 to go on, 1 after printing
 * --help (exit 0), 2 after printing an error. `max_positional` extra arguments allowed. */
int options_parse(opt_values *o, const char *cmd, const char *usage, const opt_spec *specs,
                  int spec_count, int max_positional, int argc, char **argv);
void options_print_help(const opt_values *o, const char *usage);

/* Value of an option, or its default (NULL if neither). */
const char *options_get(const opt_values *o, const char *name);
int options_given(const opt_values *o, const char *name);

/* Typed getters: on a bad value print "shoal CMD: --name: problem" and return 2. */
int options_int(const opt_values *o, const char *name, long long lo, long long hi, long long *out);
/* The integer parser of options_int, for a value that is part of an option (sweep's
 * --seeds S1..S2): decimal as strtoll reads it (blanks before, a sign), blanks after; 0 and
 * *out set; 1 not an integer; 2 out of [lo, hi] (also too large for 64 bits). */
int options_int_text(const char *v, long long lo, long long hi, long long *out);
int options_double(const opt_values *o, const char *name, double lo, double hi, double *out);
int options_vec3(const opt_values *o, const char *name, float out[3]);

/* Outputs are checked before any work (docs/ROBUSTNESS.md): for each option of the
 * NULL-terminated list that has a value, shoal_io_atomic_check(value). The first that
 * cannot be written prints "shoal CMD: --name: problem" and returns 2; two that name the
 * same file (app_same_output: after links, "x" and "./x" are one) print "--a and --b name
 * the same file F: give each output its own file" and return 2 (one would replace the
 * other), as app_outputs_distinct does; else 0. */
int options_check_outputs(const opt_values *o, const char *const *names);

/* `--out -` means "write nothing" in every command that has --out (docs/CLI.md): the work
 * is done (for timing, --stats, validation) and no output is made. options_out returns
 * the --out value, or NULL when it is "-" or not given; options_check_outputs skips it.
 * (A file named "-" is ./-.) */
#define OPTIONS_OUT_NONE "-"
const char *options_out(const opt_values *o);

/* Print "shoal CMD: message" and return 2. The message goes through shoal_error_escape
 * (control characters in the file names and values it quotes become \xNN). */
int options_fail(const opt_values *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Set on MPI ranks other than 0: options_fail prints nothing there (one message per run). */
extern int options_quiet;
/* The same line for a command without an option table ("shoal: ..." when cmd is NULL). */
void options_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
