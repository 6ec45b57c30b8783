/* SPDX-License-Identifier: MIT */
/* SHA-256 (FIPS 180-4) of a byte buffer, as hex: the content hashes of the inputs a sweep
 * reuses on --resume (its scene file and the meshes the scene names). Owns no state. */
#ifndef SHOAL_SUPPORT_DIGEST_H
#define SHOAL_SUPPORT_DIGEST_H

#include <stddef.h>

/* 64 lowercase hex digits and a NUL into hex[65]: what `sha256sum` prints for those bytes. */
void sha256_hex(const void *data, size_t size, char hex[65]);

#endif
