/* SPDX-License-Identifier: MIT */
/* The noise of a SIMD group as a wide kernel draws it (tests/noise_isa.c, compiled once per
 * ISA with that ISA's flags): NOISE_ISA_FLOATS floats per row. */
#ifndef SHOAL_TESTS_NOISE_ISA_H
#define SHOAL_TESTS_NOISE_ISA_H

#include <stddef.h>
#include <stdint.h>

#include "core/noise.h"

/* per row: u01, sym(2.5), 4 normals, cap (3), sphere_gauss (3), turn2 (2) */
#define NOISE_ISA_FLOATS 14

/* The floats of one row from its block (shared by the CPU's ISAs and tests/noise_gpu.cu). */
NOISE_FN void noise_isa_row(noise_bits b, uint32_t row, float v[NOISE_ISA_FLOATS])
{
    float g[4], c[3], s[3], t[2];
    /* a unit heading per row (exactly unit: 0.6, 0.8 and 0) */
    float h[3] = {0.6f, (row & 1u) ? -0.8f : 0.0f, (row & 1u) ? 0.0f : 0.8f};
    noise_gauss4(b, g);
    noise_cap(b, h, 0.5f, c);
    noise_sphere_gauss(b, h, 0.3f, s);
    noise_turn2(h, noise_sym(b.w[3], 0.7f), t);
    v[0] = noise_u01(b.w[0]);
    v[1] = noise_sym(b.w[1], 2.5f);
    for (int i = 0; i < 4; i++)
        v[2 + i] = g[i];
    for (int i = 0; i < 3; i++) {
        v[6 + i] = c[i];
        v[9 + i] = s[i];
    }
    v[12] = t[0];
    v[13] = t[1];
}

#ifdef __cplusplus
extern "C" {
#endif

/* Fill out[row * NOISE_ISA_FLOATS ...] for rows[0..n) with draw 7 of key k. */
void noise_isa_fill_scalar(noise_key k, const uint32_t *rows, size_t n, float *out);
void noise_isa_fill_avx2(noise_key k, const uint32_t *rows, size_t n, float *out);
void noise_isa_fill_avx512(noise_key k, const uint32_t *rows, size_t n, float *out);
/* The same on the GPU (tests/noise_gpu.cu, built with CUDA): 0 done, 1 no device, -1 a CUDA
 * error (message in err). */
int noise_gpu_fill(noise_key k, const uint32_t *rows, size_t n, float *out, char *err,
                   size_t err_size);

#ifdef __cplusplus
}
#endif

#endif
