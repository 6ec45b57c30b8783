/* SPDX-License-Identifier: MIT */
/* Unity compute-buffer dumps (seed 003's BoidData: float3 velocity, float3 position; 24
 * bytes a boid, little-endian float32, no header) in and out of shoal's row layout
 * (px py pz vx vy vz). Values are moved as bits, never converted, so a round trip is
 * exact (NaN payloads included). Owns no state. */
#include "shoal/io.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNITY_RECORD 24

static uint32_t load_le32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static void store_le32(unsigned char *b, uint32_t v)
{
    b[0] = (unsigned char)v;
    b[1] = (unsigned char)(v >> 8);
    b[2] = (unsigned char)(v >> 16);
    b[3] = (unsigned char)(v >> 24);
}

shoal_status shoal_io_unity_parse(const void *data, size_t size, const char *name, float **rows_out,
                                  size_t *count_out, shoal_error *err)
{
    *rows_out = NULL;
    *count_out = 0;
    if (size == 0 || size % UNITY_RECORD != 0)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "%s: %zu bytes is not a Unity boid buffer (a positive multiple "
                               "of 24 bytes: float3 velocity, float3 position)",
                               name, size);
    size_t n = size / UNITY_RECORD;
    float *rows = malloc(n * 6 * sizeof(float));
    if (!rows)
        return shoal_error_set(err, SHOAL_ERR_NOMEM, "%s: out of memory for %zu boids", name, n);
    const unsigned char *b = data;
    for (size_t i = 0; i < n; i++, b += UNITY_RECORD) {
        for (int c = 0; c < 6; c++) {
            /* record: v x y z, p x y z; row: p x y z, v x y z */
            uint32_t u = load_le32(b + 4 * c);
            int col = c < 3 ? 3 + c : c - 3;
            memcpy(&rows[i * 6 + (size_t)col], &u, 4);
        }
    }
    *rows_out = rows;
    *count_out = n;
    return SHOAL_OK;
}

shoal_status shoal_io_unity_read(const char *path, float **rows_out, size_t *count_out,
                                 shoal_error *err)
{
    *rows_out = NULL;
    *count_out = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return shoal_error_set(err, SHOAL_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 1 << 16, size = 0;
    unsigned char *data = malloc(cap);
    shoal_status st = SHOAL_OK;
    for (;;) {
        if (!data) {
            st = shoal_error_set(err, SHOAL_ERR_NOMEM, "%s: out of memory reading it", path);
            break;
        }
        size += fread(data + size, 1, cap - size, f);
        if (ferror(f)) {
            st = shoal_error_set(err, SHOAL_ERR_IO, "%s: read error: %s", path, strerror(errno));
            break;
        }
        if (size < cap)
            break;
        unsigned char *grown = cap < SIZE_MAX / 2 ? realloc(data, cap * 2) : NULL;
        if (!grown) {
            free(data);
            data = NULL;
            continue; /* reports NOMEM above */
        }
        data = grown;
        cap *= 2;
    }
    fclose(f);
    if (st == SHOAL_OK)
        st = shoal_io_unity_parse(data, size, path, rows_out, count_out, err);
    free(data);
    return st;
}

shoal_status shoal_io_unity_write(const char *path, const float *rows, size_t count,
                                  shoal_error *err)
{
    if (count == 0)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "%s: no boids to write", path);
    shoal_atomic_file af;
    shoal_status st = shoal_io_atomic_open(&af, path, err);
    if (st)
        return st;
    FILE *f = af.file;
    unsigned char chunk[UNITY_RECORD * 1024];
    int ok = 1;
    for (size_t i = 0; i < count && ok;) {
        size_t n = count - i < 1024 ? count - i : 1024;
        for (size_t k = 0; k < n; k++) {
            const float *r = rows + (i + k) * 6;
            for (int c = 0; c < 6; c++) {
                int col = c < 3 ? 3 + c : c - 3;
                uint32_t u;
                memcpy(&u, &r[col], 4);
                store_le32(chunk + k * UNITY_RECORD + 4 * c, u);
            }
        }
        ok = fwrite(chunk, UNITY_RECORD, n, f) == n;
        i += n;
    }
    if (!ok) {
        int e = errno;
        shoal_io_atomic_abort(&af);
        return shoal_error_set(err, SHOAL_ERR_IO, "%s: write failed: %s", path, strerror(e));
    }
    return shoal_io_atomic_commit(&af, err);
}
