/* SPDX-License-Identifier: MIT */
/* CPU feature detection through the compiler's cpuid support (which also checks that the
 * OS saves the wide registers). */
#include "core/cpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* SHOAL_CPU_DISABLE=avx2,avx512 makes shoal behave as on a CPU without those features:
 * how the tests check the fallback and the "not supported" errors on any machine. */
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
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            const char *c = strchr(line, ':');
            if (c) {
                c++;
                while (*c == ' ')
                    c++;
                snprintf(name, sizeof name, "%s", c);
                name[strcspn(name, "\n")] = 0;
            }
            break;
        }
    }
    fclose(f);
    return name;
}
