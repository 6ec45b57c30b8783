/* SPDX-License-Identifier: MIT */
/* sim/world_kernel.h's wide wrap and minimum image over arrays, VW lanes at a time, compiled
 * once per ISA with its flags (WORLD_ISA = scalar, avx2, avx512) and once in double
 * (real64: verify/real64.h, the float64 reference's words), for test_world to compare with the
 * scalar functions of sim/world.h. */
#if defined(WORLD_ISA_AVX512)
#define SIMD_AVX512
#define WORLD_ISA(name) name##_avx512
#elif defined(WORLD_ISA_AVX2)
#define SIMD_AVX2
#define WORLD_ISA(name) name##_avx2
#elif defined(WORLD_ISA_REAL64)
#define SIMD_REAL_HEADER "verify/real64.h"
#define WORLD_ISA(name) name##_real64
#else
#define WORLD_ISA(name) name##_scalar
#endif
#include "sim/world_kernel.h"
#include "tests/world_isa.h"

void WORLD_ISA(world_isa_wrap)(const world_real *x, size_t n, world_real lo, world_real L,
                               world_real hi, world_real *out)
{
    for (size_t i = 0; i < n; i += VW) {
        int k = n - i < VW ? (int)(n - i) : VW;
        vf_store_n(out + i, world_wrap_v(vf_load_n(x + i, k), lo, L, hi), k);
    }
}

void WORLD_ISA(world_isa_min_image)(const world_real *a, const world_real *b, size_t n,
                                    world_real L, world_real half, world_real *out)
{
    for (size_t i = 0; i < n; i += VW) {
        int k = n - i < VW ? (int)(n - i) : VW;
        vf d = vf_sub(vf_load_n(a + i, k), vf_load_n(b + i, k));
        vf_store_n(out + i, world_min_image_v(d, L, half), k);
    }
}
