/* SPDX-License-Identifier: MIT */
/* The row macros of the models' parameter tables (sim/models/NAME.h, its SIM_MODEL_TABLE
 * section, compiled in models.c only). A model writes its table once as a macro of rows,
 * NAME_ROWS(P, PI, P3), each row P(name, field, unit, lo, hi, default, meaning, hypothesis)
 * (PI: an integer-valued one; P3: a vector, three rows NAME_x/_y/_z), and expands it twice:
 * with ROW_INFO* into the shoal_param_info list the public API shows (`shoal params`,
 * docs/MODELS.md) and with ROW_HYP* into the sim_hyp column shoal verify reads (sim/models.h:
 * the hypothesis kinds; src/verify builds its families from them). OBSTACLE_ROWS are the rows
 * every model has (obstacles and predators, MODELS.md "Predators"). */
#ifndef SHOAL_SIM_MODELS_TABLE_H
#define SHOAL_SIM_MODELS_TABLE_H

#include <stddef.h>

#define OFF(field) offsetof(shoal_params, field)
#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))
#define BIG 1e6f

#define ROW_INFO(name, field, unit, lo, hi, def, help, hyp)                                        \
    {                                                                                              \
        name, help, OFF(field), lo, hi, def, 0, unit                                               \
    }
#define ROW_INFO_I(name, field, unit, lo, hi, def, help, hyp)                                      \
    {                                                                                              \
        name, help, OFF(field), lo, hi, def, 1, unit                                               \
    }
#define ROW_INFO_3(name, field, unit, lo, hi, d0, d1, d2, help, hyp)                               \
    {name "_x", help " (x)", OFF(field[0]), lo, hi, d0, 0, unit},                                  \
        {name "_y", help " (y)", OFF(field[1]), lo, hi, d1, 0, unit},                              \
    {                                                                                              \
        name "_z", help " (z)", OFF(field[2]), lo, hi, d2, 0, unit                                 \
    }
#define ROW_HYP(name, field, unit, lo, hi, def, help, hyp) hyp
#define ROW_HYP_I(name, field, unit, lo, hi, def, help, hyp) hyp
#define ROW_HYP_3(name, field, unit, lo, hi, d0, d1, d2, help, hyp) hyp, hyp, hyp

/* The hypothesis column (sim_hyp): the term (SHOAL_TERM_ without its prefix) and the kind. */
#define H_NONE                                                                                     \
    {                                                                                              \
        SHOAL_TERM_NONE, SIM_HYP_NONE, -1, -1, 0                                                   \
    }
#define H_WEIGHT(term)                                                                             \
    {                                                                                              \
        SHOAL_TERM_##term, SIM_HYP_WEIGHT, -1, -1, 0                                               \
    }
#define H_FACTOR(term)                                                                             \
    {                                                                                              \
        SHOAL_TERM_##term, SIM_HYP_FACTOR, -1, -1, 0                                               \
    }
/* k2: the constant of its square, k1: of itself (-1: the rules use only the square) */
#define H_RADIUS(term, k2, k1, strict)                                                             \
    {                                                                                              \
        SHOAL_TERM_##term, SIM_HYP_RADIUS, k2, k1, strict                                          \
    }
#define H_DIST2(term, strict)                                                                      \
    {                                                                                              \
        SHOAL_TERM_##term, SIM_HYP_DIST2, -1, -1, strict                                           \
    }
/* k: the constant of its cosine */
#define H_COS(term, k, strict)                                                                     \
    {                                                                                              \
        SHOAL_TERM_##term, SIM_HYP_COS, k, -1, strict                                              \
    }
/* sign: the term is off at sign * 1e300 (a box corner pushed out of reach) */
#define H_OFF(term, sign)                                                                          \
    {                                                                                              \
        SHOAL_TERM_##term, SIM_HYP_OFF, sign, -1, 0                                                \
    }

/* the flee radius: a threshold on the predators' squared distances (strict, d^2 < R^2) */
#define H_FLEE                                                                                     \
    {                                                                                              \
        SHOAL_TERM_PREDATORS, SIM_HYP_FLEE, -1, -1, 1                                              \
    }

/* Every model has these too: obstacles (spheres in scene files, the field of obstacle
 * meshes) and predators (MODELS.md "Predators"). */
#define OBSTACLE_ROWS(P, PI, P3)                                                                   \
    P("avoid_force", avoid_force, "-", 0, BIG, 0, "weight of the obstacle avoidance force",        \
      H_WEIGHT(OBSTACLES)),                                                                        \
        PI("sphere_count", sphere_count, "count", 0, SHOAL_MAX_SPHERES, 0,                         \
           "number of obstacle spheres (set in a scene file)", H_NONE),                            \
        P("field_cell", field_cell, "units", 1e-3f, BIG, 1, "obstacle field: cell size", H_NONE),  \
        P("field_margin", field_margin, "units", 0, BIG, 1,                                        \
          "obstacle field: margin around the meshes", H_NONE),                                     \
        PI("predator_count", predator_count, "count", 0, SHOAL_MAX_PREDATORS, 0,                   \
           "number of predators", H_NONE),                                                         \
        P("predator_speed", predator_speed, "units/s", 0, BIG, 8, "predator speed, units/s",       \
          H_NONE),                                                                                 \
        P("predator_turn", predator_turn, "1/s", 0, BIG, 2,                                        \
          "predator turn rate: lerp factor per s", H_NONE),                                        \
        PI("predator_chase", predator_chase, "-", 0, 1, 0,                                         \
           "predators chase: 0 nearest boid, 1 centre", H_NONE),                                   \
        P("flee_radius", flee_radius, "units", 1e-4f, BIG, 6,                                      \
          "boids flee predators closer than this", H_FLEE),                                        \
        P("flee_weight", flee_weight, "-", 0, BIG, 10, "weight of the flee force",                 \
          H_WEIGHT(PREDATORS)),                                                                    \
        P3("predator_start", predator_start, "units", -BIG, BIG, 0, 0, 30, "predators' start",     \
           H_NONE),                                                                                \
        P("predator_spread", predator_spread, "units", 0, BIG, 2,                                  \
          "predators' spacing along x at start", H_NONE)

#endif
