/* SPDX-License-Identifier: MIT */
/* The SIMD ISA of a kernel (shoal/base.h): which this CPU and build run, names, and what
 * AUTO resolves to. Shared by the simulation's force kernels and the rasterizer, so it
 * lives below both. x86-64 builds compile the AVX2 and AVX-512 kernels of both modules,
 * aarch64 builds the NEON ones; every build the scalar ones. */
#include "core/cpu.h"
#include "core/check.h"
#include "shoal/base.h"

#include <stdlib.h>
#include <string.h>

/* The architecture whose kernels this build has, and their names, for the errors. */
#if defined(__x86_64__)
#define ISA_ARCH "x86-64"
#define ISA_BUILT "scalar, avx2 and avx512"
#elif defined(__aarch64__)
#define ISA_ARCH "aarch64"
#define ISA_BUILT "scalar and neon"
#else
#define ISA_ARCH "this architecture"
#define ISA_BUILT "scalar"
#endif
#define ISA_NAMES "auto, scalar, avx2, avx512 or neon"

/* Whether this build has the ISA's kernels (the CPU may still lack it). */
static int isa_built(shoal_isa isa)
{
    switch (isa) {
    case SHOAL_ISA_AUTO:
    case SHOAL_ISA_SCALAR:
        return 1;
    case SHOAL_ISA_AVX2:
    case SHOAL_ISA_AVX512:
#if defined(__x86_64__)
        return 1;
#else
        return 0;
#endif
    case SHOAL_ISA_NEON:
#if defined(__aarch64__)
        return 1;
#else
        return 0;
#endif
    }
    return 0;
}

int shoal_isa_supported(shoal_isa isa)
{
    if (!isa_built(isa))
        return 0;
    switch (isa) {
    case SHOAL_ISA_AUTO:
    case SHOAL_ISA_SCALAR:
        return 1;
    case SHOAL_ISA_AVX2:
        return cpu_has_avx2();
    case SHOAL_ISA_AVX512:
        return cpu_has_avx512();
    case SHOAL_ISA_NEON:
        return cpu_has_neon();
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
    case SHOAL_ISA_NEON:
        return "neon";
    }
    return "?";
}

shoal_status shoal_isa_parse(const char *name, shoal_isa *isa, shoal_error *err)
{
    CHECK_ARG(name, "name", err);
    CHECK_ARG(isa, "isa", err);
    static const shoal_isa all[] = {SHOAL_ISA_AUTO, SHOAL_ISA_SCALAR, SHOAL_ISA_AVX2,
                                    SHOAL_ISA_AVX512, SHOAL_ISA_NEON};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (name && strcmp(name, shoal_isa_name(all[i])) == 0) {
            *isa = all[i];
            return SHOAL_OK;
        }
    return shoal_error_set(err, SHOAL_ERR_INPUT, "unknown SIMD ISA '%s' (expected " ISA_NAMES ")",
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
                return shoal_error_set(err, SHOAL_ERR_INPUT, "SHOAL_SIMD=%s: expected " ISA_NAMES,
                                       env);
        }
    }
    /* AUTO: the widest this CPU runs (one architecture's ISAs are built, the others never
     * supported) */
    if (isa == SHOAL_ISA_AUTO) {
        isa = shoal_isa_supported(SHOAL_ISA_AVX512) ? SHOAL_ISA_AVX512
              : shoal_isa_supported(SHOAL_ISA_AVX2) ? SHOAL_ISA_AVX2
              : shoal_isa_supported(SHOAL_ISA_NEON) ? SHOAL_ISA_NEON
                                                    : SHOAL_ISA_SCALAR;
    }
    if (!isa_built(isa))
        return shoal_error_set(err, SHOAL_ERR_UNSUPPORTED,
                               "SIMD ISA %s is for %s CPUs: this " ISA_ARCH " build has " ISA_BUILT,
                               shoal_isa_name(isa),
                               isa == SHOAL_ISA_NEON ? "ARM (aarch64)" : "x86-64");
    if (!shoal_isa_supported(isa))
        return shoal_error_set(err, SHOAL_ERR_UNSUPPORTED,
                               "SIMD ISA %s is not supported by this CPU or build",
                               shoal_isa_name(isa));
    *resolved = isa;
    return SHOAL_OK;
}
