/* SPDX-License-Identifier: MIT */
/* peak: this machine's FP32 peak, FMA and add+mul, AVX2 and AVX-512, and its copy
 * bandwidth, on 1 thread and on every logical CPU (the kernels are in the support library,
 * src/support/peak.c, which `shoal bench` uses too). Usage: peak [SECONDS per measurement, default
 * 1]. */
#include "shoal/system.h"
#include "support/peak.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 1.0;
    if (!(seconds > 0))
        seconds = 1.0;
    int cores = shoal_system_cpu_count();
    printf("# peak: FP32 GFLOP/s, best of 5 (%s, %d logical CPUs)\n", shoal_system_cpu_model(),
           cores);
    printf("%-14s %8s %12s %14s\n", "kernel", "threads", "GFLOP/s", "GFLOP/s/core");
    for (int kind = 0; kind < PEAK_KIND_COUNT; kind++) {
        if (!peak_kind_supported(kind)) {
            printf("%-14s %8s %12s\n", peak_kind_name(kind), "-", "unsupported");
            continue;
        }
        int counts[2] = {1, cores};
        for (int k = 0; k < (cores > 1 ? 2 : 1); k++) {
            double g = peak_gflops(kind, counts[k], seconds);
            printf("%-14s %8d %12.1f %14.1f\n", peak_kind_name(kind), counts[k], g, g / counts[k]);
        }
    }
    printf("%-14s %8s %12s\n", "copy", "threads", "GB/s (read + write)");
    int counts[2] = {1, cores};
    for (int k = 0; k < (cores > 1 ? 2 : 1); k++)
        printf("%-14s %8d %12.1f\n", "memcpy", counts[k], peak_copy_gbs(counts[k], seconds));
    return 0;
}
