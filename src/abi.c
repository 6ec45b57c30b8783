/* SPDX-License-Identifier: MIT */
/* The library as a whole: its version and the sizes of its public structs, which
 * shoal_abi_check (shoal.h) compares with the program's headers. Above every module (it
 * includes the umbrella header); owns no state. */
#include "shoal/shoal.h"
#include "core/check.h"

#define ABI_NAME_(type) #type,

static const size_t abi_sizes[] = {SHOAL_ABI_STRUCTS(SHOAL_ABI_SIZEOF_)};
static const char *const abi_names[] = {SHOAL_ABI_STRUCTS(ABI_NAME_)};
#define ABI_COUNT (sizeof abi_sizes / sizeof abi_sizes[0])

const char *shoal_version(void) { return SHOAL_VERSION_STRING; }

int shoal_version_number(void) { return SHOAL_VERSION_NUMBER; }

shoal_status shoal_abi_check_sizes(int version_number, const size_t *sizes, size_t count,
                                   shoal_error *err)
{
    CHECK_ARRAY(sizes, count, "sizes", err);
    int major = version_number / 10000, minor = version_number / 100 % 100;
    if (major != SHOAL_VERSION_MAJOR || minor != SHOAL_VERSION_MINOR)
        return shoal_error_set(err, SHOAL_ERR_UNSUPPORTED,
                               "libshoal %s cannot run a program built against shoal %d.%d.%d "
                               "headers (the minor version changes the ABI): rebuild it against "
                               "the installed headers",
                               SHOAL_VERSION_STRING, major, minor, version_number % 100);
    if (!sizes || count != ABI_COUNT)
        return shoal_error_set(err, SHOAL_ERR_UNSUPPORTED,
                               "libshoal %s: the program's headers list %zu public structs, the "
                               "library %zu: rebuild it against the installed headers",
                               SHOAL_VERSION_STRING, count, (size_t)ABI_COUNT);
    for (size_t i = 0; i < ABI_COUNT; i++)
        if (sizes[i] != abi_sizes[i])
            return shoal_error_set(err, SHOAL_ERR_UNSUPPORTED,
                                   "libshoal %s: struct %s is %zu bytes in the program's headers, "
                                   "%zu in the library: rebuild it against the installed headers",
                                   SHOAL_VERSION_STRING, abi_names[i], sizes[i], abi_sizes[i]);
    return SHOAL_OK;
}
