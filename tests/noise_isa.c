/* SPDX-License-Identifier: MIT */
/* One SIMD group at a time, as a wide force kernel will draw its lanes' noise: the group's
 * rows to noise_draw_lanes, each lane's distributions, then wide loads and stores of the
 * lanes (core/simd.h). Compiled three times (NOISE_ISA = scalar, avx2, avx512) with the
 * ISA's flags, so test_noise sees what the compiler makes of core/noise.h under each
 * (-mavx512f allows FMA: a contraction would show here as different bits). */
#if defined(NOISE_ISA_AVX512)
#define SIMD_AVX512
#define NOISE_ISA_FN noise_isa_fill_avx512
#elif defined(NOISE_ISA_AVX2)
#define SIMD_AVX2
#define NOISE_ISA_FN noise_isa_fill_avx2
#else
#define NOISE_ISA_FN noise_isa_fill_scalar
#endif
#include "core/simd.h"
#include "tests/noise_isa.h"

void NOISE_ISA_FN(noise_key k, const uint32_t *rows, size_t n, float *out)
{
    for (size_t base = 0; base < n; base += VW) {
        int lanes = n - base < VW ? (int)(n - base) : VW;
        noise_bits b[VW];
        noise_draw_lanes(k, rows + base, lanes, 7u, b);
        float col[NOISE_ISA_FLOATS][VW];
        for (int i = 0; i < lanes; i++) {
            float v[NOISE_ISA_FLOATS];
            noise_isa_row(b[i], rows[base + (size_t)i], v);
            for (int f = 0; f < NOISE_ISA_FLOATS; f++)
                col[f][i] = v[f];
        }
        /* through the wide registers, lane i = row base + i */
        for (int f = 0; f < NOISE_ISA_FLOATS; f++) {
            vf x = vf_load_n(col[f], lanes);
            float lane_out[VW];
            vf_store_n(lane_out, x, lanes);
            for (int i = 0; i < lanes; i++)
                out[(base + (size_t)i) * NOISE_ISA_FLOATS + (size_t)f] = lane_out[i];
        }
    }
}
