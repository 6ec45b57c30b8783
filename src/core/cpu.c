/* SPDX-License-Identifier: MIT */
/* CPU feature detection: on x86-64 through the compiler's cpuid support (which also checks
 * that the OS saves the wide registers); on aarch64 NEON is part of the architecture. */
#include "core/cpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* SHOAL_CPU_DISABLE=avx2,avx512 (neon on ARM) makes shoal behave as on a CPU without those
 * features: how the tests check the fallback and the "not supported" errors on any machine. */
static int disabled(const char *feature)
{
    const char *env = getenv("SHOAL_CPU_DISABLE");
    if (!env)
        return 0;
    size_t n = strlen(feature);
    for (const char *p = env; (p = strstr(p, feature)) != NULL; p += n) {
        int start = p == env || p[-1] == ',';
        int end = p[n] == 0 || p[n] == ',';
        if (start && end)
            return 1;
    }
    return 0;
}

int cpu_has_avx2(void)
{
    if (disabled("avx2"))
        return 0;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
#else
    return 0;
#endif
}

int cpu_has_avx512(void)
{
    if (disabled("avx512"))
        return 0;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
#else
    return 0;
#endif
}

int cpu_has_neon(void)
{
    if (disabled("neon"))
        return 0;
#if defined(__aarch64__)
    /* Advanced SIMD is mandatory in ARMv8-A and the AArch64 Linux ABI: every core has it */
    return 1;
#else
    return 0;
#endif
}

/* aarch64 Linux's /proc/cpuinfo has no model name, only the MIDR fields: the cores people
 * run servers and laptops on by name, the others as "implementer 0x.. part 0x..". */
static void arm_core_name(char *name, size_t size, unsigned impl, unsigned part)
{
    static const struct {
        unsigned impl, part;
        const char *name;
    } cores[] = {
        {0x41, 0xd08, "Arm Cortex-A72"},  {0x41, 0xd0b, "Arm Cortex-A76"},
        {0x41, 0xd0c, "Arm Neoverse N1"}, {0x41, 0xd40, "Arm Neoverse V1"},
        {0x41, 0xd49, "Arm Neoverse N2"}, {0x41, 0xd4f, "Arm Neoverse V2"},
        {0x41, 0xd8e, "Arm Neoverse N3"}, {0x41, 0xd84, "Arm Neoverse V3"},
        {0xc0, 0xac3, "Ampere-1"},        {0xc0, 0xac4, "Ampere-1a"},
        {0x61, 0x000, "Apple"},
    };
    for (size_t i = 0; i < sizeof cores / sizeof cores[0]; i++)
        if (cores[i].impl == impl && (cores[i].part == part || impl == 0x61)) {
            snprintf(name, size, "%s", cores[i].name);
            return;
        }
    snprintf(name, size, "aarch64 implementer 0x%02x part 0x%03x", impl, part);
}

const char *cpu_model_name(void)
{
    static char name[128];
    if (name[0])
        return name;
    snprintf(name, sizeof name, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return name;
    char line[512];
    unsigned impl = 0, part = 0;
    int have_impl = 0, have_part = 0;
    while (fgets(line, sizeof line, f)) {
        const char *c = strchr(line, ':');
        if (!c)
            continue;
        if (strncmp(line, "model name", 10) == 0) {
            c++;
            while (*c == ' ')
                c++;
            snprintf(name, sizeof name, "%s", c);
            name[strcspn(name, "\n")] = 0;
            have_impl = have_part = 0;
            break;
        }
        if (!have_impl && strncmp(line, "CPU implementer", 15) == 0)
            have_impl = sscanf(c + 1, "%x", &impl) == 1;
        else if (!have_part && strncmp(line, "CPU part", 8) == 0)
            have_part = sscanf(c + 1, "%x", &part) == 1;
    }
    fclose(f);
    if (have_impl && have_part)
        arm_core_name(name, sizeof name, impl, part);
    return name;
}
