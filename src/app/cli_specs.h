/* SPDX-License-Identifier: MIT */
/* The option tables of init, step and render (cli_specs.c), read by their commands and by
 * the command-line fuzzer. */
#ifndef SHOAL_APP_CLI_SPECS_H
#define SHOAL_APP_CLI_SPECS_H

#include "app/options.h"

extern const opt_spec app_init_specs[];
extern const int app_init_spec_count;
extern const opt_spec app_step_specs[];
extern const int app_step_spec_count;
extern const opt_spec app_render_specs[];
extern const int app_render_spec_count;

#endif
