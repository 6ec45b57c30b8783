/* SPDX-License-Identifier: MIT */
/* libFuzzer target: scene files (shoal_scene_parse, INI through inih) on arbitrary text.
 * A scene that parses must also validate and must create a simulation; a few boids of it
 * are then stepped twice on one thread, so parameter combinations the range checks let
 * through are run, not just read (a NaN there must come back as SHOAL_ERR_NONFINITE,
 * never a crash or a hang). Rejections must be one line naming the file. */
#include "shoal/io.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64 * 1024)
        return 0; /* scene files are small; long inputs only slow the search */
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    shoal_scene scene;
    shoal_error e;
    memset(&e, 0, sizeof e);
    shoal_status st = shoal_scene_parse(text, "fuzz.ini", &scene, &e);
    free(text);
    if (st != SHOAL_OK) {
        if (st != SHOAL_ERR_INPUT || !strstr(e.message, "fuzz.ini") || strchr(e.message, '\n'))
            abort();
        return 0;
    }
    if (shoal_params_validate(scene.desc.model, &scene.desc.params, &e) != SHOAL_OK)
        abort(); /* parse promised a validated scene */
    shoal_sim_desc d = scene.desc;
    d.boid_count = d.boid_count < 24 ? d.boid_count : 24;
    d.thread_count = 1;
    d.isa = SHOAL_ISA_SCALAR;
    shoal_sim *sim = NULL;
    st = shoal_sim_create(&d, &sim, &e);
    if (st == SHOAL_ERR_NOMEM)
        return 0;
    if (st != SHOAL_OK)
        abort(); /* a scene that parsed is one the simulation accepts */
    if (shoal_sim_draw_state(sim, &e) != SHOAL_OK)
        abort(); /* cannot fail */
    st = shoal_sim_step(sim, 2, &e);
    if (st != SHOAL_OK && st != SHOAL_ERR_NONFINITE)
        abort();
    float rows[24 * 6];
    if (shoal_sim_get_rows(sim, rows, shoal_sim_count(sim), &e) != SHOAL_OK)
        abort(); /* a stopped step keeps the state before it */
    shoal_sim_destroy(sim);
    return 0;
}
