/* SPDX-License-Identifier: MIT */
/* shoal: what every public header shares: export macro, version, the error record.
 * Owns no state. */
#ifndef SHOAL_BASE_H
#define SHOAL_BASE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define SHOAL_API __declspec(dllexport)
#else
#define SHOAL_API __attribute__((visibility("default")))
#endif

/** The version of these headers. 0.x: a new minor version may change the ABI (a struct's
 *  size or layout), a new patch version does not; shoal_abi_check (shoal.h) refuses a program
 *  built against another minor version or other struct sizes. */
#define SHOAL_VERSION_MAJOR 0
#define SHOAL_VERSION_MINOR 2
#define SHOAL_VERSION_PATCH 0
#define SHOAL_VERSION_STRING "0.2.0"
/** major * 10000 + minor * 100 + patch: 200 for 0.2.0. */
#define SHOAL_VERSION_NUMBER                                                                       \
    (SHOAL_VERSION_MAJOR * 10000 + SHOAL_VERSION_MINOR * 100 + SHOAL_VERSION_PATCH)

/** A name kept for programs written against an earlier libshoal: it still links and works,
 *  and the compiler says which name replaced it. Names follow shoal_<module>_<verb>. */
#if defined(__GNUC__) || defined(__clang__)
#define SHOAL_DEPRECATED(use) __attribute__((deprecated("use " use)))
#else
#define SHOAL_DEPRECATED(use)
#endif
/** The 0.1 calls that 0.2 replaced with ones that are harder to misuse (state calls with no
 *  length, two seeds): deprecated, still exported and working. A program that defines
 *  SHOAL_ALLOW_0_1 before including a shoal header calls them without the warning. */
#if defined(SHOAL_ALLOW_0_1)
#define SHOAL_DEPRECATED_0_1(use)
#else
#define SHOAL_DEPRECATED_0_1(use) SHOAL_DEPRECATED(use)
#endif

/** Status codes. Every fallible public function returns one of these; 0 is success. */
typedef enum shoal_status {
    SHOAL_OK = 0,
    /** Bad input: a malformed file, an unknown name, a value out of range. The program's
     *  exit code for this is 2. */
    SHOAL_ERR_INPUT = 2,
    /** An allocation failed (the message names what was being allocated and its size). */
    SHOAL_ERR_NOMEM = 3,
    /** A file could not be opened, read or written (the message names the file). */
    SHOAL_ERR_IO = 4,
    /** The simulation produced a NaN or an infinity (the message names boid and step). */
    SHOAL_ERR_NONFINITE = 5,
    /** The request needs something this machine or build lacks (an ISA, CUDA). */
    SHOAL_ERR_UNSUPPORTED = 6,
    /** A long call stopped early because its cancel flag was raised (shoal_verify_set_cancel,
     *  shoal_sweep_set_cancel): the object is as before that call's unfinished step. */
    SHOAL_ERR_CANCELLED = 7,
} shoal_status;

/** The most threads any library object runs on: every thread count the library takes
 *  (a desc's thread_count, shoal_system_set_thread_count, OMP_NUM_THREADS as the default)
 *  is 0 (the default) or 1..SHOAL_MAX_THREADS, and a larger one is refused
 *  (SHOAL_ERR_INPUT). The program's --threads options have the same range. */
#define SHOAL_MAX_THREADS 1024

/** A one-line, human-readable description of the last failure. Filled by the function
 *  that failed; untouched on success. Plain data: copy it freely. */
typedef struct shoal_error {
    shoal_status status;
    char message[512];
} shoal_error;

/** Fill `err` (may be NULL) with status and a printf-style message; returns status. The
 *  message goes through shoal_error_escape, so a file name or value it quotes cannot break
 *  the line or send a terminal control sequence. */
SHOAL_API shoal_status shoal_error_set(shoal_error *err, shoal_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** Copy text for a message: `src` into `dst` (`size` bytes; NUL-terminated, cut at a
 *  character boundary to fit) with each byte a terminal could act on written as `\xNN`:
 *  control characters (C0, DEL, and C1 as UTF-8 U+0080..U+009F) and bytes that are not
 *  valid UTF-8. Printable ASCII, backslashes and valid UTF-8 are copied as they are, so
 *  escaping escaped text changes nothing. Returns `dst`. Thread-safe; `dst` and `src` must
 *  not overlap. */
SHOAL_API char *shoal_error_escape(char *dst, size_t size, const char *src);

/** The version of the library the program runs with ("0.2.0"): what was linked or loaded,
 *  which may differ from SHOAL_VERSION_STRING of the headers the program was compiled with.
 *  Static storage. Thread-safe. */
SHOAL_API const char *shoal_version(void);
/** The same as a number, SHOAL_VERSION_NUMBER's encoding (200 for 0.2.0). */
SHOAL_API int shoal_version_number(void);

/** SIMD instruction set of a kernel (the simulation's forces, the rasterizer). AUTO picks
 *  the best the CPU has (or SHOAL_SIMD from the environment). All give the same bits, on
 *  every architecture: AVX2 and AVX-512 exist in x86-64 builds, NEON in aarch64 builds
 *  (ARMv8-A's Advanced SIMD, on every 64-bit ARM core); scalar everywhere. */
typedef enum shoal_isa {
    SHOAL_ISA_AUTO = 0,
    SHOAL_ISA_SCALAR,
    SHOAL_ISA_AVX2,
    SHOAL_ISA_AVX512,
    SHOAL_ISA_NEON,
} shoal_isa;

/** ISA support: shoal_isa_supported(SHOAL_ISA_AVX512) is true when this CPU and build can
 *  run it. shoal_isa_parse("auto"|"scalar"|"avx2"|"avx512"|"neon"): any of the names on any
 *  build (whether it runs is shoal_isa_supported's and shoal_isa_resolve's to say). */
SHOAL_API int shoal_isa_supported(shoal_isa isa);
SHOAL_API shoal_status shoal_isa_parse(const char *name, shoal_isa *isa, shoal_error *err);
SHOAL_API const char *shoal_isa_name(shoal_isa isa);
/** The ISA AUTO resolves to: SHOAL_SIMD from the environment if set (an error if this
 *  CPU lacks it), else the best supported. */
SHOAL_API shoal_status shoal_isa_resolve(shoal_isa requested, shoal_isa *resolved,
                                         shoal_error *err);

#ifdef __cplusplus
}
#endif

#endif
