/* SPDX-License-Identifier: MIT */
/* shoal: the CUDA backend. A shoal_gpu_sim runs the same five models as shoal_sim on an
 * NVIDIA GPU with the same rules (src/sim/rules.h, compiled by both backends), obstacle
 * spheres and meshes, predators and heading targets included, in the same order: a stable sort by
 * cell (order inside a cell by input row), one thread per boid walking the same candidate list, no
 * FMA contraction, IEEE division and square root. Built only when meson finds CUDA; otherwise every
 * function here returns SHOAL_ERR_UNSUPPORTED ("this build has no CUDA backend").
 *
 * Determinism: with SHOAL_GPU_ORDER_STABLE the state after K steps is a function of the
 * input state, the parameters, dt, t0 and the seed, and equals shoal_sim's bit for bit
 * (docs/GPU.md records the parity runs). SHOAL_GPU_ORDER_ATOMIC orders each cell by
 * atomic increments (the method of seed 001, the compute-shader grid article): sums are then taken
 * in an order that changes from run to run, and so do the results after a few steps. */
#ifndef SHOAL_GPU_H
#define SHOAL_GPU_H

#include "shoal/base.h"
#include "shoal/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Order of the boids inside a grid cell on the GPU. */
typedef enum shoal_gpu_order {
    SHOAL_GPU_ORDER_STABLE = 0, /**< by input row, as the CPU: bit-identical results */
    SHOAL_GPU_ORDER_ATOMIC = 1, /**< atomicAdd arrival (seed 001's): results wander */
} shoal_gpu_order;

/** Parse "stable" or "atomic". SHOAL_ERR_INPUT naming both otherwise. */
SHOAL_API shoal_status shoal_gpu_order_parse(const char *name, shoal_gpu_order *order,
                                             shoal_error *err);

/** SHOAL_OK when this build has the CUDA backend and a usable NVIDIA GPU and driver.
 *  Otherwise SHOAL_ERR_UNSUPPORTED with "no NVIDIA GPU or driver found: <CUDA's reason>"
 *  (or "this build has no CUDA backend (meson -Dcuda=enabled)"). Cheap after the first
 *  call (which initialises the CUDA runtime). */
SHOAL_API shoal_status shoal_gpu_available(shoal_error *err);

typedef struct shoal_gpu_sim shoal_gpu_sim;

/** Create a GPU simulation for `desc` (validated as shoal_sim_create does; thread_count
 *  and isa are ignored). Allocates all device memory it will use; boids zeroed. Uses the
 *  current CUDA device of the calling thread. */
SHOAL_API shoal_status shoal_gpu_sim_create(const shoal_sim_desc *desc, shoal_gpu_order order,
                                            shoal_gpu_sim **sim_out, shoal_error *err);
SHOAL_API void shoal_gpu_sim_destroy(shoal_gpu_sim *sim);

/** Load the state: `row_count` rows of (px py pz vx vy vz), row_count equal to
 *  shoal_gpu_sim_count (else SHOAL_ERR_INPUT, nothing read), every value finite. Row i stays
 *  boid i. A step before the first state is SHOAL_ERR_INPUT, as on the CPU. */
SHOAL_API shoal_status shoal_gpu_sim_set_rows(shoal_gpu_sim *sim, const float *rows,
                                              size_t row_count, shoal_error *err);
/** Copy the state out as `row_count` rows in input row order (row_count must equal
 *  shoal_gpu_sim_count). Waits for the device. */
SHOAL_API shoal_status shoal_gpu_sim_get_rows(const shoal_gpu_sim *sim, float *rows,
                                              size_t row_count, shoal_error *err);
/** The 0.1 calls without a length (shoal_gpu_sim_count rows): use the two above. */
SHOAL_DEPRECATED_0_1("shoal_gpu_sim_set_rows")
SHOAL_API shoal_status shoal_gpu_sim_set_state(shoal_gpu_sim *sim, const float *rows,
                                               shoal_error *err);
SHOAL_DEPRECATED_0_1("shoal_gpu_sim_get_rows")
SHOAL_API shoal_status shoal_gpu_sim_get_state(const shoal_gpu_sim *sim, float *rows,
                                               shoal_error *err);

/** Advance `step_count` (>= 0) synchronous steps. Launches them all, then waits once. On a NaN
 *  or infinity the state is the one before the failing step and SHOAL_ERR_NONFINITE names
 *  the boid (lowest input row) and the step, as shoal_sim_step does. CUDA failures:
 *  SHOAL_ERR_UNSUPPORTED (or SHOAL_ERR_NOMEM) with CUDA's message. */
SHOAL_API shoal_status shoal_gpu_sim_step(shoal_gpu_sim *sim, int step_count, shoal_error *err);

/** Change the parameters between steps, as shoal_sim_set_params does on the CPU and with the
 *  same effects, so a GPU sim and a CPU sim given the same parameters stay bit-identical:
 *  validated for the sim's model (SHOAL_ERR_INPUT, nothing changed); the grid is laid out
 *  again when the interaction radius changes (device tables grown when they must); a new
 *  predator_count restarts the predators; a new field_cell or field_margin rebuilds the
 *  obstacle field from the meshes lent by shoal_gpu_sim_set_obstacles (a field copied from a
 *  CPU sim by shoal_gpu_sim_copy_obstacles has no meshes to rebuild from: SHOAL_ERR_INPUT,
 *  copy it again after changing the CPU sim). The state and the steps done stay. */
SHOAL_API shoal_status shoal_gpu_sim_set_params(shoal_gpu_sim *sim, const shoal_params *params,
                                                shoal_error *err);

/** Lend an obstacle field (shoal/sim.h, shoal_obstacles): its meshes are copied to the host
 *  side of the GPU sim and its field (the CPU's build, copied or built again with this sim's
 *  field_cell and field_margin, as shoal_sim_set_obstacles does) to the device, sampled by
 *  every model as on the CPU. NULL or an empty object removes the field. Lend it again after
 *  moving an obstacle. */
SHOAL_API shoal_status shoal_gpu_sim_set_obstacles(shoal_gpu_sim *sim,
                                                   const shoal_obstacles *obstacles,
                                                   shoal_error *err);

/** Take the obstacle field of a CPU simulation (its own build, so the same bits) to the
 *  device. `src` is not kept; call again after moving an obstacle. No obstacles in `src`:
 *  the field is removed. A program with no CPU simulation of its own lends a
 *  shoal_obstacles instead (shoal_gpu_sim_set_obstacles) rather than making one to hold
 *  the meshes. */
SHOAL_API shoal_status shoal_gpu_sim_copy_obstacles(shoal_gpu_sim *sim, const shoal_sim *src,
                                                    shoal_error *err);

/** The predators now (positions and velocities, 3 floats each, up to `max`), as
 *  shoal_sim_predators; returns predator_count (0 when the device cannot be read). They
 *  start at their start positions on create and on every set_state, as on the CPU. */
SHOAL_API size_t shoal_gpu_sim_predators(const shoal_gpu_sim *sim, float *pos, float *vel,
                                         size_t max);

/** Simulated time of the next step (t0 + steps done * dt). */
SHOAL_API double shoal_gpu_sim_time(const shoal_gpu_sim *sim);
SHOAL_API size_t shoal_gpu_sim_count(const shoal_gpu_sim *sim);
/** The device's name ("NVIDIA H100 80GB HBM3"). */
SHOAL_API const char *shoal_gpu_sim_device_name(const shoal_gpu_sim *sim);

/** Device time of the steps so far (CUDA events around each shoal_gpu_sim_step call,
 *  state transfers excluded): calls, steps and total milliseconds, and the milliseconds
 *  of the last call. */
typedef struct shoal_gpu_stats {
    uint64_t calls, steps;
    double total_ms, last_ms;
    uint64_t last_steps;
} shoal_gpu_stats;
SHOAL_API shoal_gpu_stats shoal_gpu_sim_get_stats(const shoal_gpu_sim *sim);

/* Earlier name (before shoal_<module>_<verb> throughout). */
SHOAL_DEPRECATED("shoal_gpu_sim_get_stats")
SHOAL_API shoal_gpu_stats shoal_gpu_sim_stats(const shoal_gpu_sim *sim);

#ifdef __cplusplus
}
#endif

#endif
