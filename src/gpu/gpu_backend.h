/* SPDX-License-Identifier: MIT */
/* The backend's state transfer, defined by gpu_sim.cu (CUDA) or gpu_none.c (no CUDA:
 * SHOAL_ERR_UNSUPPORTED): shoal_gpu_sim_count rows with no length check. gpu_rows.c wraps
 * them as shoal_gpu_sim_set_rows / shoal_gpu_sim_get_rows (and the 0.1 names). */
#ifndef SHOAL_GPU_BACKEND_H
#define SHOAL_GPU_BACKEND_H

#include "shoal/gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

shoal_status gpu_backend_set_state(shoal_gpu_sim *sim, const float *rows, shoal_error *err);
shoal_status gpu_backend_get_state(const shoal_gpu_sim *sim, float *rows, shoal_error *err);

#ifdef __cplusplus
}
#endif

#endif
