/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the .npy state reader (shoal_io_npy_parse) on arbitrary bytes, then
 * the finiteness check on whatever it accepted; and the array reader (shoal_io_npy_parse_array).
 * Invariants checked beyond "no crash": an accepted file has N >= 1 rows and exactly the bytes its
 * shape needs; a rejected one leaves *rows NULL, count 0 and a one-line message naming the file. */
#include "shoal/io.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_array(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_array(data, size);
    float *rows = (float *)1;
    size_t count = 99;
    shoal_error e;
    memset(&e, 0, sizeof e);
    shoal_status st = shoal_io_npy_parse(data, size, "fuzz.npy", &rows, &count, &e);
    if (st != SHOAL_OK) {
        if (rows != NULL || count != 0)
            abort(); /* the contract: nothing handed out on failure */
        if (st != SHOAL_ERR_INPUT && st != SHOAL_ERR_NOMEM)
            abort();
        if (!strstr(e.message, "fuzz.npy") || strchr(e.message, '\n'))
            abort(); /* one line naming the file */
        return 0;
    }
    if (!rows || count == 0 || count * 6 * 4 > size)
        abort();
    /* Touch every value (ASan sees an allocation shorter than claimed). */
    (void)shoal_state_check_finite(rows, count, "fuzz.npy", &e);
    free(rows);
    return 0;
}

/* The array reader of shoal verify's trajectories and ids (any shape of 1 to 3 dimensions,
 * float or integer dtypes): an accepted array holds as many values as its shape and every
 * one is readable; a rejected one hands out nothing and says so in one line. */
static void fuzz_array(const uint8_t *data, size_t size)
{
    shoal_npy_array a;
    shoal_error e;
    memset(&e, 0, sizeof e);
    shoal_status st = shoal_io_npy_parse_array(data, size, "fuzz.npy", &a, &e);
    if (st != SHOAL_OK) {
        if (a.data != NULL || a.ndim != 0)
            abort();
        if (!strstr(e.message, "fuzz.npy") || strchr(e.message, '\n'))
            abort();
        return;
    }
    size_t values = 1;
    for (int d = 0; d < a.ndim; d++)
        values *= a.dims[d];
    if (a.ndim < 1 || a.ndim > 3 || !a.data || values == 0 || values > size)
        abort();
    double sum = 0;
    for (size_t i = 0; i < values; i++)
        sum += a.data[i] == a.data[i];
    if (sum > (double)values)
        abort();
    shoal_npy_array_free(&a);
}
