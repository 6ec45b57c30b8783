/* SPDX-License-Identifier: MIT */
/* The public face of core's machine queries (shoal/system.h): logical CPUs and the default
 * thread count live in parallel.c, the CPU model in cpu.c; this file only names them for
 * programs. */
#include "shoal/system.h"

#include "shoal/base.h"

#include "core/cpu.h"
#include "core/parallel.h"

int shoal_system_cpu_count(void) { return parallel_cpu_count(); }
const char *shoal_system_cpu_model(void) { return cpu_model_name(); }
int shoal_system_thread_count(void) { return parallel_thread_count(); }

shoal_status shoal_system_set_thread_count(int thread_count)
{
    return parallel_set_threads(thread_count) ? SHOAL_ERR_INPUT : SHOAL_OK;
}

shoal_status shoal_system_set_wait_policy(shoal_wait_policy policy, shoal_error *err)
{
    switch (policy) {
    case SHOAL_WAIT_AUTO:
        parallel_set_wait_policy(PARALLEL_WAIT_AUTO);
        return SHOAL_OK;
    case SHOAL_WAIT_PASSIVE:
        parallel_set_wait_policy(PARALLEL_WAIT_PASSIVE);
        return SHOAL_OK;
    case SHOAL_WAIT_ACTIVE:
        parallel_set_wait_policy(PARALLEL_WAIT_ACTIVE);
        return SHOAL_OK;
    }
    return shoal_error_set(err, SHOAL_ERR_INPUT,
                           "wait policy %d (expected SHOAL_WAIT_AUTO, _PASSIVE or _ACTIVE)",
                           (int)policy);
}

shoal_wait_policy shoal_system_wait_policy(void)
{
    int p = parallel_wait_policy();
    return p == PARALLEL_WAIT_PASSIVE  ? SHOAL_WAIT_PASSIVE
           : p == PARALLEL_WAIT_ACTIVE ? SHOAL_WAIT_ACTIVE
                                       : SHOAL_WAIT_AUTO;
}

shoal_wait_policy shoal_system_wait_in_effect(char *why, size_t why_size)
{
    return parallel_wait_describe(why, why_size) == PARALLEL_WAIT_PASSIVE ? SHOAL_WAIT_PASSIVE
                                                                          : SHOAL_WAIT_ACTIVE;
}

const char *shoal_system_openmp_runtime(void)
{
#ifdef _OPENMP
    return parallel_wait_runtime_adjustable() ? "llvm" : "gnu";
#else
    return "none";
#endif
}

int shoal_system_team_starting(void) { return parallel_team_starting(); }
