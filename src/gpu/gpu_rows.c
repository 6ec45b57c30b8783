/* SPDX-License-Identifier: MIT */
/* The GPU state calls with a length (shoal/gpu.h), in both builds: they check the count
 * against the simulation's and hand over to the backend (gpu/gpu_backend.h: gpu_sim.cu, or
 * gpu_none.c's SHOAL_ERR_UNSUPPORTED). Owns no state. */
#include "gpu/gpu_backend.h"
#include "shoal/gpu.h"

shoal_status shoal_gpu_sim_set_rows(shoal_gpu_sim *sim, const float *rows, size_t row_count,
                                    shoal_error *err)
{
    if (!sim)
        return gpu_backend_set_state(sim, rows, err); /* no backend: its own message */
    if (!rows)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "shoal_gpu_sim_set_rows: rows is NULL");
    if (row_count != shoal_gpu_sim_count(sim))
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "state: %zu rows given, the GPU simulation has %zu boids", row_count,
                               shoal_gpu_sim_count(sim));
    if (!rows)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "state: no rows (NULL)");
    return gpu_backend_set_state(sim, rows, err);
}

shoal_status shoal_gpu_sim_get_rows(const shoal_gpu_sim *sim, float *rows, size_t row_count,
                                    shoal_error *err)
{
    if (!sim)
        return gpu_backend_get_state(sim, rows, err);
    if (!rows)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "shoal_gpu_sim_get_rows: rows is NULL");
    if (row_count != shoal_gpu_sim_count(sim))
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "state: room for %zu rows given, the GPU simulation has %zu boids",
                               row_count, shoal_gpu_sim_count(sim));
    if (!rows)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "state: no buffer (NULL)");
    return gpu_backend_get_state(sim, rows, err);
}

/* The 0.1 calls without a length (shoal/gpu.h): exported for programs written against them
 * until 1.0; nothing in the tree calls them but tests/test_compat.c. */
shoal_status shoal_gpu_sim_set_state(shoal_gpu_sim *sim, const float *rows, shoal_error *err)
{
    return gpu_backend_set_state(sim, rows, err);
}

shoal_status shoal_gpu_sim_get_state(const shoal_gpu_sim *sim, float *rows, shoal_error *err)
{
    return gpu_backend_get_state(sim, rows, err);
}
