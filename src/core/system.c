/* SPDX-License-Identifier: MIT */
/* The public face of core's machine queries (shoal/system.h): logical CPUs and the default
 * thread count live in parallel.c, the CPU model in cpu.c; this file only names them for
 * programs. */
#include "shoal/system.h"

#include "core/cpu.h"
#include "core/parallel.h"

int shoal_system_cpu_count(void) { return parallel_cpu_count(); }
const char *shoal_system_cpu_model(void) { return cpu_model_name(); }
int shoal_system_thread_count(void) { return parallel_thread_count(); }
void shoal_system_set_thread_count(int thread_count) { parallel_set_threads(thread_count); }
