/* SPDX-License-Identifier: MIT */
/* shoal: the world every model runs in (docs/WORLD.md): three dimensions or the plane z = 0,
 * and per axis a periodic box (a torus) or the model's own walls. The world is not the
 * model: a model's walls and boundary forces are its parameters (shoal_params); the world's
 * box, its periodic axes and its dimension are here, in shoal_sim_desc.world, the same for
 * every model. A zeroed shoal_world is today's world (3D, no periodic axis). */
#ifndef SHOAL_WORLD_H
#define SHOAL_WORLD_H

#include "shoal/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The world. Start from shoal_world_default() (or zeros: the same world); set fields by
 *  name with shoal_world_set or shoal_sim_desc_set (`--set`, scene files' [world]). */
typedef struct shoal_world {
    /** 3 (or 0, the same): three dimensions. 2: the plane z = 0; z and vz are exactly 0 in
     *  every state (shoal_world_check_rows) and the z axis's fields below are not read. */
    int32_t dims;
    /** Per axis x, y, z: 1 wraps (positions live in [center - size/2, center + size/2),
     *  distances are the minimum image, the model's walls are off on that axis); 0 the
     *  model's own boundary. (0, 0, 0) */
    int32_t periodic[3];
    /** The box's edges Lx, Ly, Lz in world units: > 0 on a periodic axis (the period, at
     *  least twice the model's interaction radius), 0 or more elsewhere (0: no box on that
     *  axis; a box that is not periodic is only drawn). (0, 0, 0) */
    float size[3];
    /** The box's centre, world units, finite. (0, 0, 0) */
    float center[3];
} shoal_world;

/** Today's world: dims 3, nothing periodic, no box. */
SHOAL_API shoal_world shoal_world_default(void);
/** 1 when `w` is today's world (3D, no periodic axis; the box may be set, for drawing):
 *  then every byte of a run is as it was before worlds existed. */
SHOAL_API int shoal_world_is_default(const shoal_world *w);
/** 2 or 3 (a dims of 0 counts as 3). */
SHOAL_API int shoal_world_dims(const shoal_world *w);
/** 1 when axis (0 x, 1 y, 2 z) wraps: its periodic flag, and never z in 2D. */
SHOAL_API int shoal_world_axis_periodic(const shoal_world *w, int axis);
/** 1 when any axis wraps (shoal_world_axis_periodic). */
SHOAL_API int shoal_world_any_periodic(const shoal_world *w);

/** 1 when `name` is a world parameter shoal_world_set takes: dims, periodic (every axis: one
 *  value, or x,y,z), periodic_x/_y/_z, world_size (Lx,Ly,Lz), world_size_x/_y/_z,
 *  world_center (x,y,z), world_center_x/_y/_z. */
SHOAL_API int shoal_world_has_param(const char *name);
/** Set one world parameter from text (the names of shoal_world_has_param). Values are
 *  checked one by one (dims 2 or 3, periodic 0 or 1, sizes finite and >= 0, centres finite,
 *  within 1e9); across fields by shoal_world_validate. SHOAL_ERR_INPUT naming the parameter
 *  and the value; on failure `w` is unchanged. */
SHOAL_API shoal_status shoal_world_set(shoal_world *w, const char *name, const char *value,
                                       shoal_error *err);
/** Check a world for a model whose largest interaction radius is `interaction_radius`
 *  (shoal_params_interaction_radius): dims 0, 2 or 3; flags 0 or 1; sizes and centre finite;
 *  a periodic axis with a size > 0 and at least twice the radius (so a neighbour within the
 *  radius has one nearest image). SHOAL_ERR_INPUT with a message naming the field. */
SHOAL_API shoal_status shoal_world_validate(const shoal_world *w, float interaction_radius,
                                            shoal_error *err);
/** Check `row_count` rows (px py pz vx vy vz) against the world: in 2D, z and vz must be
 *  exactly 0 (SHOAL_ERR_INPUT naming the first row that is not, from `name`, e.g. a file).
 *  3D worlds: nothing to check. Positions outside a periodic box are not an error (the
 *  simulation wraps them in). */
SHOAL_API shoal_status shoal_world_check_rows(const shoal_world *w, const float *rows,
                                              size_t row_count, const char *name, shoal_error *err);

#ifdef __cplusplus
}
#endif

#endif
