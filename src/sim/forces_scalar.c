/* SPDX-License-Identifier: MIT */
/* The scalar instance of forces_kernel.h (W = 1): the reference every other ISA must
 * match bit for bit, and the kernel used on CPUs without AVX2. */
#define KSUFFIX scalar
#include "sim/forces_kernel.h"
