/* SPDX-License-Identifier: MIT */
/* The GPU's order names, parsed the same in every build (with the CUDA backend or without:
 * gpu_none.c), so `--gpu-order` is checked before any backend is asked for. */
#include "shoal/gpu.h"

#include <string.h>

shoal_status shoal_gpu_order_parse(const char *name, shoal_gpu_order *order, shoal_error *err)
{
    if (name && strcmp(name, "stable") == 0) {
        *order = SHOAL_GPU_ORDER_STABLE;
        return SHOAL_OK;
    }
    if (name && strcmp(name, "atomic") == 0) {
        *order = SHOAL_GPU_ORDER_ATOMIC;
        return SHOAL_OK;
    }
    return shoal_error_set(err, SHOAL_ERR_INPUT,
                           "unknown GPU order '%s' (expected stable or atomic)", name ? name : "");
}
