/* SPDX-License-Identifier: MIT */
/* shoal: what the library knows about the machine and the process: logical CPUs, the CPU's
 * model name, the process default thread count that objects with thread_count 0 use, and
 * how the library's worker threads wait. Owns two process-wide values (the default thread
 * count and the wait policy, written only by the program's calls below); everything else
 * is read-only. */
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
 *  value set by shoal_system_set_thread_count, else OpenMP's default (OMP_NUM_THREADS, else
 *  the CPUs), at most SHOAL_MAX_THREADS; 1 in a build without OpenMP. Results never depend
 *  on it (DESIGN.md: one canonical order). An OMP_NUM_THREADS above SHOAL_MAX_THREADS makes
 *  objects with thread_count 0 refuse to be created (SHOAL_ERR_INPUT, naming it). */
SHOAL_API int shoal_system_thread_count(void);

/** Set the process default thread count: 1..SHOAL_MAX_THREADS, or <= 0 to restore
 *  OpenMP's default. SHOAL_ERR_INPUT (and the default unchanged) above SHOAL_MAX_THREADS.
 *  Call from the program's main thread before work starts: objects already made with
 *  thread_count 0 take the new value at their next step or frame. Objects with their own
 *  thread_count > 0 are not affected. No library object ever writes it (each passes its own
 *  count to its regions), and the shoal program does not set it either: its commands give
 *  every object --threads instead. (0.2 returned void.) */
SHOAL_API shoal_status shoal_system_set_thread_count(int thread_count);

/** How the library's worker threads wait for each other inside a step, a frame or a
 *  statistics pass. Spinning answers within microseconds but keeps a CPU busy; on CPUs that
 *  other work competes for, a spinning thread burns the time slice that the thread it waits
 *  for needs, and a step takes 5-20 times longer (docs/results/2026-11-28-wait-policy.md). */
typedef enum shoal_wait_policy {
    /** The default: passive while other processes keep at least a quarter of this
     *  process's CPUs busy (sampled at most every 0.2 s, from /proc/stat less this process's
     *  own CPU time), else spin up to 1 ms before sleeping. */
    SHOAL_WAIT_AUTO = 0,
    /** Sleep at once (OpenMP's OMP_WAIT_POLICY=passive): best on a shared machine. */
    SHOAL_WAIT_PASSIVE = 1,
    /** Spin until released: a dedicated benchmark machine. */
    SHOAL_WAIT_ACTIVE = 2,
} shoal_wait_policy;

/** Choose the wait policy for the whole process (SHOAL_ERR_INPUT for another value).
 *  Takes effect at the next parallel region of any object. The environment takes
 *  precedence: when OMP_WAIT_POLICY, GOMP_SPINCOUNT or KMP_BLOCKTIME is set, the library
 *  waits as it says and this setting is kept but not used.
 *  What the library controls: its own barriers inside every region (all of them: a step
 *  has about ten) and, with LLVM's libomp (clang builds), the runtime's waits
 *  (kmp_set_blocktime, per thread). With GNU libgomp (gcc builds) the runtime's own waits
 *  when a region starts and ends follow only the environment, which libgomp reads once
 *  when it is loaded: for a passive libgomp set OMP_WAIT_POLICY=passive before the
 *  process starts (the shoal program does so itself when the machine is busy). Thread-safe. */
SHOAL_API shoal_status shoal_system_set_wait_policy(shoal_wait_policy policy, shoal_error *err);

/** The policy last set by shoal_system_set_wait_policy (SHOAL_WAIT_AUTO by default). */
SHOAL_API shoal_wait_policy shoal_system_wait_policy(void);

/** How the library's threads wait now: SHOAL_WAIT_PASSIVE or SHOAL_WAIT_ACTIVE (auto
 *  resolved as it would be for a region started now), and why in `why` (may be NULL;
 *  `why_size` bytes, cut to fit): "auto: passive now, other work used 1.93 of 2 CPUs",
 *  "OMP_WAIT_POLICY=passive (set in the environment)". Thread-safe. */
SHOAL_API shoal_wait_policy shoal_system_wait_in_effect(char *why, size_t why_size);

/** The OpenMP runtime the library runs on: "llvm" (LLVM's libomp: the wait policy is
 *  applied at run time), "gnu" (GNU libgomp: only the environment at start chooses its
 *  wait) or "none" (a build without OpenMP: one thread). Static storage. */
SHOAL_API const char *shoal_system_openmp_runtime(void);

/** 1 while the calling thread is starting a parallel team for the library, else 0. When
 *  the system refuses threads (ulimit -u, ulimit -v), LLVM's libomp prints its message and
 *  aborts the process, GNU libgomp exits with status 1: a program's SIGABRT handler or exit
 *  hook may ask this to say what happened (the shoal program exits 2 with one line).
 *  Async-signal-safe. */
SHOAL_API int shoal_system_team_starting(void);

#ifdef __cplusplus
}
#endif

#endif
