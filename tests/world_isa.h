/* SPDX-License-Identifier: MIT */
/* The wide world functions of tests/world_isa.c, one set per ISA (float) and real64. */
#ifndef SHOAL_TESTS_WORLD_ISA_H
#define SHOAL_TESTS_WORLD_ISA_H

#include <stddef.h>

#define WORLD_ISA_DECL(suffix, real)                                                               \
    void world_isa_wrap_##suffix(const real *x, size_t n, real lo, real L, real hi, real *out);    \
    void world_isa_min_image_##suffix(const real *a, const real *b, size_t n, real L, real half,   \
                                      real *out);
WORLD_ISA_DECL(scalar, float)
WORLD_ISA_DECL(avx2, float)
WORLD_ISA_DECL(avx512, float)
WORLD_ISA_DECL(real64, double)

#endif
