/* SPDX-License-Identifier: MIT */
/* shoal: what the library knows about the machine and the process: logical CPUs, the CPU's
 * model name, and the process default thread count that objects with thread_count 0 use.
 * Owns one process-wide value (the default thread count, written only by the program's
 * shoal_system_set_thread_count); everything else is read-only. */
#ifndef SHOAL_SYSTEM_H
#define SHOAL_SYSTEM_H

#include "shoal/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Logical CPUs available to this process (OpenMP's count of processors; without OpenMP the
 *  CPUs online). >= 1. Thread-safe. */
SHOAL_API int shoal_system_cpu_count(void);

/** The CPU's model name from /proc/cpuinfo, or "unknown". Static storage, never NULL;
 *  the first call reads the file (call it once from one thread before sharing it). */
SHOAL_API const char *shoal_system_cpu_model(void);

/** The process default thread count: what a simulation or renderer created with
 *  thread_count 0 runs on, and what the stage profiler's trace sizes its tracks for. The
 *  value set by shoal_system_set_thread_count, else OpenMP's default; 1 in a build without
 *  OpenMP. Results never depend on it (DESIGN.md: one canonical order). */
SHOAL_API int shoal_system_thread_count(void);

/** Set the process default thread count; <= 0 restores OpenMP's default. Call from the
 *  program's main thread before work starts: not thread-safe against running steps or
 *  frames. Objects with their own thread_count > 0 are not affected. No library object
 *  ever writes it (each passes its own count to its regions), and the shoal program does
 *  not set it either: its commands give every object --threads instead. */
SHOAL_API void shoal_system_set_thread_count(int thread_count);

#ifdef __cplusplus
}
#endif

#endif
