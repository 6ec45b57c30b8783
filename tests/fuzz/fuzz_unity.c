/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the Unity compute-buffer reader (shoal_io_unity_parse: 24-byte records
 * of float3 velocity, float3 position). Beyond "no crash": an accepted buffer gives
 * size / 24 rows whose bits are the input's (moved, never converted), and a rejected one
 * leaves nothing allocated with a one-line message naming the file. */
#include "shoal/io.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    float *rows = (float *)1;
    size_t count = 99;
    shoal_error e;
    memset(&e, 0, sizeof e);
    shoal_status st = shoal_io_unity_parse(data, size, "fuzz.bin", &rows, &count, &e);
    if (st != SHOAL_OK) {
        if (rows != NULL || count != 0)
            abort();
        if (!strstr(e.message, "fuzz.bin") || strchr(e.message, '\n'))
            abort();
        return 0;
    }
    if (!rows || count == 0 || count * 24 != size)
        abort();
    for (size_t i = 0; i < count; i++) {
        /* record: v xyz then p xyz; row: p xyz then v xyz */
        if (memcmp(rows + 6 * i, data + 24 * i + 12, 12) != 0 ||
            memcmp(rows + 6 * i + 3, data + 24 * i, 12) != 0)
            abort();
    }
    free(rows);
    return 0;
}
