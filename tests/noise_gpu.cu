/* SPDX-License-Identifier: MIT */
/* core/noise.h as CUDA device code: the rows of tests/noise_isa.h drawn by one thread each,
 * built with the backend's flags (-fmad=false, IEEE division and square root), so that
 * test_noise can compare the GPU's bits with the CPU's where a GPU is present, and so the
 * header is compile-checked by nvcc in every CUDA build. */
#include <cuda_runtime.h>
#include <stdio.h>

#include "tests/noise_isa.h"

static __global__ void noise_gpu_kernel(noise_key k, const uint32_t *rows, size_t n, float *out)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    noise_isa_row(noise_draw(k, rows[i], 7u), rows[i], out + i * NOISE_ISA_FLOATS);
}

int noise_gpu_fill(noise_key k, const uint32_t *rows, size_t n, float *out, char *err,
                   size_t err_size)
{
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        cudaGetLastError();
        return 1;
    }
    uint32_t *d_rows = NULL;
    float *d_out = NULL;
    cudaError_t e = cudaMalloc((void **)&d_rows, n * sizeof *rows);
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&d_out, n * NOISE_ISA_FLOATS * sizeof(float));
    if (e == cudaSuccess)
        e = cudaMemcpy(d_rows, rows, n * sizeof *rows, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) {
        noise_gpu_kernel<<<(unsigned)((n + 255) / 256), 256>>>(k, d_rows, n, d_out);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess)
        e = cudaMemcpy(out, d_out, n * NOISE_ISA_FLOATS * sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(d_rows);
    cudaFree(d_out);
    if (e != cudaSuccess) {
        snprintf(err, err_size, "%s", cudaGetErrorString(e));
        return -1;
    }
    return 0;
}
