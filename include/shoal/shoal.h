/* SPDX-License-Identifier: MIT */
/* shoal: the umbrella header. Includes every public module header.
 * shoal runs GPU-class flocking workloads on CPU cores: an OpenMP-parallel boids
 * simulation on a counting-sort grid (sim.h), file formats (io.h), flock statistics
 * (stats.h), the float64 reference (sim64.h), trajectories read back (traj.h) and
 * step-by-step verification of another program (verify.h), the software
 * renderer (render.h), the optional CUDA backend (gpu.h; its functions report
 * SHOAL_ERR_UNSUPPORTED in a build without CUDA), stage timings and traces (profile.h) and
 * the machine and the default thread count (system.h), parameter sweeps (sweep.h); and the
 * run-time ABI check (shoal_abi_check, below). */
#ifndef SHOAL_SHOAL_H
#define SHOAL_SHOAL_H

#include "shoal/base.h"
#include "shoal/io.h"
#include "shoal/sim.h"
#include "shoal/stats.h"
#include "shoal/sim64.h"
#include "shoal/traj.h"
#include "shoal/verify.h"
#include "shoal/render.h"
#include "shoal/gpu.h"
#include "shoal/profile.h"
#include "shoal/system.h"
#include "shoal/sweep.h"
#include "shoal/world.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Every public struct, in a fixed order (a new one is added at the end): the list that
 *  shoal_abi_check compares between the program's headers and the library. */
#define SHOAL_ABI_STRUCTS(X)                                                                       \
    X(shoal_error)                                                                                 \
    X(shoal_sphere)                                                                                \
    X(shoal_params)                                                                                \
    X(shoal_param_info)                                                                            \
    X(shoal_sim_desc)                                                                              \
    X(shoal_boid_view)                                                                             \
    X(shoal_transform)                                                                             \
    X(shoal_field_view)                                                                            \
    X(shoal_sim_checkpoint)                                                                        \
    X(shoal_stage_stats)                                                                           \
    X(shoal_atomic_file)                                                                           \
    X(shoal_scene_mesh)                                                                            \
    X(shoal_scene)                                                                                 \
    X(shoal_mesh)                                                                                  \
    X(shoal_stats_desc)                                                                            \
    X(shoal_stats)                                                                                 \
    X(shoal_camera)                                                                                \
    X(shoal_render_desc)                                                                           \
    X(shoal_render_instances)                                                                      \
    X(shoal_framebuffer)                                                                           \
    X(shoal_render_stats)                                                                          \
    X(shoal_gpu_stats)                                                                             \
    X(shoal_profile_summary)                                                                       \
    X(shoal_state_diff)                                                                            \
    X(shoal_sweep_sample)                                                                          \
    X(shoal_model_info)                                                                            \
    X(shoal_world)                                                                                 \
    X(shoal_io_format)                                                                             \
    X(shoal_verify_run_desc)                                                                       \
    X(shoal_verify_summary)                                                                        \
    X(shoal_noise_result)

/** The library's half of shoal_abi_check: `sizes` are sizeof of each struct of
 *  SHOAL_ABI_STRUCTS as the program's headers have them (`count` entries) and
 *  `version_number` is the headers' SHOAL_VERSION_NUMBER. SHOAL_OK when the library is the
 *  same major and minor version and every size matches; else SHOAL_ERR_UNSUPPORTED naming
 *  both versions or the first struct whose size differs. Thread-safe. */
SHOAL_API shoal_status shoal_abi_check_sizes(int version_number, const size_t *sizes, size_t count,
                                             shoal_error *err);

#define SHOAL_ABI_SIZEOF_(type) sizeof(type),

/** Check, at run time, that the library this program loaded was built from headers with
 *  the same ABI as the ones it was compiled with: same major.minor version and the same
 *  size of every public struct (a desc or a parameter block passed by value or by pointer
 *  would otherwise be read with another layout). Call it once at start-up; the Python
 *  module calls it on import. */
static inline shoal_status shoal_abi_check(shoal_error *err)
{
    static const size_t sizes[] = {SHOAL_ABI_STRUCTS(SHOAL_ABI_SIZEOF_)};
    return shoal_abi_check_sizes(SHOAL_VERSION_NUMBER, sizes, sizeof sizes / sizeof sizes[0], err);
}

#ifdef __cplusplus
}
#endif

#endif
