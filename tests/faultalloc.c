/* SPDX-License-Identifier: MIT */
/* Allocation-failure injection for the test build `shoal_faults` (tests/meson.build): the
 * same program as `shoal`, linked with -Wl,--wrap for malloc, calloc, realloc,
 * posix_memalign, aligned_alloc, strdup and strndup, so every allocation made by shoal's
 * own code (src/, libshoal) comes through here; those made inside libc (fopen, popen),
 * libpng, inih and the OpenMP runtime do not. The release `shoal` has none of this.
 *
 * SHOAL_FAIL_ALLOC=N makes the Nth allocation (counted from 1 over all threads, in call
 * order) fail as the system's would (NULL, errno ENOMEM); "N+" fails the Nth and every
 * later one. SHOAL_FAIL_ALLOC_LOG=FILE: when a failure is injected, "failed allocation N"
 * and the call stack are appended to FILE, so a test knows when N has passed the run's last
 * allocation (the SQLite way: N = 1, 2, ... until a run makes no more). */
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *__real_malloc(size_t size);
void *__real_calloc(size_t count, size_t size);
void *__real_realloc(void *p, size_t size);
int __real_posix_memalign(void **p, size_t align, size_t size);
void *__real_aligned_alloc(size_t align, size_t size);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);

void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t count, size_t size);
void *__wrap_realloc(void *p, size_t size);
int __wrap_posix_memalign(void **p, size_t align, size_t size);
void *__wrap_aligned_alloc(size_t align, size_t size);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

static long g_fail_at = -1;
static int g_fail_after;
static const char *g_log;
static atomic_long g_count;

__attribute__((constructor)) static void fault_init(void)
{
    const char *v = getenv("SHOAL_FAIL_ALLOC");
    if (v && *v) {
        char *end;
        long n = strtol(v, &end, 10);
        if (n > 0) {
            g_fail_at = n;
            g_fail_after = *end == '+';
        }
    }
    g_log = getenv("SHOAL_FAIL_ALLOC_LOG");
}

/* Set once the program is past main: what allocates then (the coverage runtime's dump at
 * exit, in a -Db_coverage build) is not shoal's code, and failing it would crash inside
 * that runtime instead of testing shoal. Priority 101 runs before gcov's own destructor (100);
 * shoal's atexit handlers have run by then. */
static atomic_int g_exiting;
__attribute__((destructor(101))) static void fault_fini(void) { atomic_store(&g_exiting, 1); }

static int fault_now(void)
{
    if (atomic_load(&g_exiting))
        return 0;
    long n = atomic_fetch_add(&g_count, 1) + 1;
    if (g_fail_at < 0 || n < g_fail_at || (n > g_fail_at && !g_fail_after))
        return 0;
    if (g_log && n == g_fail_at) {
        int fd = open(g_log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd >= 0) {
            char line[64];
            int len = snprintf(line, sizeof line, "failed allocation %ld\n", n);
            (void)!write(fd, line, (size_t)len);
            void *frames[32]; /* where: for the test's report (addr2line, gdb) */
            backtrace_symbols_fd(frames, backtrace(frames, 32), fd);
            close(fd);
        }
    }
    errno = ENOMEM;
    return 1;
}

void *__wrap_malloc(size_t size) { return fault_now() ? NULL : __real_malloc(size); }
void *__wrap_calloc(size_t count, size_t size)
{
    return fault_now() ? NULL : __real_calloc(count, size);
}
void *__wrap_realloc(void *p, size_t size) { return fault_now() ? NULL : __real_realloc(p, size); }
int __wrap_posix_memalign(void **p, size_t align, size_t size)
{
    return fault_now() ? ENOMEM : __real_posix_memalign(p, align, size);
}
void *__wrap_aligned_alloc(size_t align, size_t size)
{
    return fault_now() ? NULL : __real_aligned_alloc(align, size);
}
char *__wrap_strdup(const char *s) { return fault_now() ? NULL : __real_strdup(s); }
char *__wrap_strndup(const char *s, size_t n) { return fault_now() ? NULL : __real_strndup(s, n); }
