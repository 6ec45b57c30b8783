/* SPDX-License-Identifier: MIT */
/* The SIMD ISA of a kernel (shoal/base.h): which this CPU and build run, names, and what
 * AUTO resolves to. Shared by the simulation's force kernels and the rasterizer, so it
 * lives below both. x86-64 builds compile the AVX2 and AVX-512 kernels of both modules. */
#include "core/cpu.h"
#include "core/check.h"
#include "shoal/base.h"

#include <stdlib.h>
#include <string.h>

int shoal_isa_supported(shoal_isa isa)
{
    switch (isa) {
    case SHOAL_ISA_AUTO:
    case SHOAL_ISA_SCALAR:
        return 1;
    case SHOAL_ISA_AVX2:
#if defined(__x86_64__)
        return cpu_has_avx2();
#else
        return 0;
#endif
    case SHOAL_ISA_AVX512:
#if defined(__x86_64__)
        return cpu_has_avx512();
#else
        return 0;
#endif
    }
    return 0;
}

const char *shoal_isa_name(shoal_isa isa)
{
    switch (isa) {
    case SHOAL_ISA_AUTO:
        return "auto";
    case SHOAL_ISA_SCALAR:
        return "scalar";
    case SHOAL_ISA_AVX2:
        return "avx2";
    case SHOAL_ISA_AVX512:
        return "avx512";
    }
    return "?";
}

shoal_status shoal_isa_parse(const char *name, shoal_isa *isa, shoal_error *err)
{
    CHECK_ARG(name, "name", err);
    CHECK_ARG(isa, "isa", err);
    static const shoal_isa all[] = {SHOAL_ISA_AUTO, SHOAL_ISA_SCALAR, SHOAL_ISA_AVX2,
                                    SHOAL_ISA_AVX512};
    for (size_t i = 0; i < 4; i++)
        if (name && strcmp(name, shoal_isa_name(all[i])) == 0) {
            *isa = all[i];
            return SHOAL_OK;
        }
    return shoal_error_set(err, SHOAL_ERR_INPUT,
                           "unknown SIMD ISA '%s' (expected auto, scalar, avx2 or avx512)",
                           name ? name : "");
}

shoal_status shoal_isa_resolve(shoal_isa requested, shoal_isa *resolved, shoal_error *err)
{
    CHECK_ARG(resolved, "resolved", err);
    shoal_isa isa = requested;
    if (isa == SHOAL_ISA_AUTO) {
        const char *env = getenv("SHOAL_SIMD");
        if (env && *env) {
            shoal_status st = shoal_isa_parse(env, &isa, err);
            if (st)
                return shoal_error_set(err, SHOAL_ERR_INPUT,
                                       "SHOAL_SIMD=%s: expected auto, scalar, avx2 or avx512", env);
        }
    }
    if (isa == SHOAL_ISA_AUTO) {
        isa = shoal_isa_supported(SHOAL_ISA_AVX512) ? SHOAL_ISA_AVX512
              : shoal_isa_supported(SHOAL_ISA_AVX2) ? SHOAL_ISA_AVX2
                                                    : SHOAL_ISA_SCALAR;
    }
    if (!shoal_isa_supported(isa))
        return shoal_error_set(err, SHOAL_ERR_UNSUPPORTED,
                               "SIMD ISA %s is not supported by this CPU or build",
                               shoal_isa_name(isa));
    *resolved = isa;
    return SHOAL_OK;
}
