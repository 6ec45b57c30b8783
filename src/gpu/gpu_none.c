/* SPDX-License-Identifier: MIT */
/* The CUDA backend's stand-in for builds without CUDA (meson found no nvcc, or
 * -Dcuda=disabled): every entry point says so with SHOAL_ERR_UNSUPPORTED, so a caller
 * (shoal step --backend cuda, test_gpu) fails or skips visibly instead of silently. */
#include "shoal/gpu.h"

#include <string.h>

#define NO_CUDA "this build has no CUDA backend (meson -Dcuda=enabled)"

shoal_status shoal_gpu_available(shoal_error *err)
{
    return shoal_error_set(err, SHOAL_ERR_UNSUPPORTED, NO_CUDA);
}

shoal_status shoal_gpu_sim_create(const shoal_sim_desc *desc, shoal_gpu_order order,
                                  shoal_gpu_sim **sim_out, shoal_error *err)
{
    (void)desc;
    (void)order;
    if (sim_out)
        *sim_out = NULL;
    return shoal_error_set(err, SHOAL_ERR_UNSUPPORTED, NO_CUDA);
}

void shoal_gpu_sim_destroy(shoal_gpu_sim *sim) { (void)sim; }

shoal_status shoal_gpu_sim_set_state(shoal_gpu_sim *sim, const float *rows, shoal_error *err)
{
    (void)sim;
    (void)rows;
    return shoal_error_set(err, SHOAL_ERR_UNSUPPORTED, NO_CUDA);
}

shoal_status shoal_gpu_sim_get_state(const shoal_gpu_sim *sim, float *rows, shoal_error *err)
{
    (void)sim;
    (void)rows;
    return shoal_error_set(err, SHOAL_ERR_UNSUPPORTED, NO_CUDA);
}

shoal_status shoal_gpu_sim_step(shoal_gpu_sim *sim, int step_count, shoal_error *err)
{
    (void)sim;
    (void)step_count;
    return shoal_error_set(err, SHOAL_ERR_UNSUPPORTED, NO_CUDA);
}

double shoal_gpu_sim_time(const shoal_gpu_sim *sim)
{
    (void)sim;
    return 0.0;
}

size_t shoal_gpu_sim_count(const shoal_gpu_sim *sim)
{
    (void)sim;
    return 0;
}

const char *shoal_gpu_sim_device_name(const shoal_gpu_sim *sim)
{
    (void)sim;
    return "none";
}

shoal_gpu_stats shoal_gpu_sim_get_stats(const shoal_gpu_sim *sim)
{
    (void)sim;
    shoal_gpu_stats s;
    memset(&s, 0, sizeof s);
    return s;
}

shoal_status shoal_gpu_sim_set_params(shoal_gpu_sim *sim, const shoal_params *params,
                                      shoal_error *err)
{
    (void)sim;
    (void)params;
    return shoal_error_set(err, SHOAL_ERR_UNSUPPORTED, NO_CUDA);
}

shoal_status shoal_gpu_sim_set_obstacles(shoal_gpu_sim *sim, const shoal_obstacles *obstacles,
                                         shoal_error *err)
{
    (void)sim;
    (void)obstacles;
    return shoal_error_set(err, SHOAL_ERR_UNSUPPORTED, NO_CUDA);
}

shoal_status shoal_gpu_sim_copy_obstacles(shoal_gpu_sim *sim, const shoal_sim *src,
                                          shoal_error *err)
{
    (void)sim;
    (void)src;
    return shoal_error_set(err, SHOAL_ERR_UNSUPPORTED, NO_CUDA);
}

size_t shoal_gpu_sim_predators(const shoal_gpu_sim *sim, float *pos, float *vel, size_t max)
{
    (void)sim;
    (void)pos;
    (void)vel;
    (void)max;
    return 0;
}

/* an earlier name */
shoal_gpu_stats shoal_gpu_sim_stats(const shoal_gpu_sim *sim)
{
    return shoal_gpu_sim_get_stats(sim);
}
