/* SPDX-License-Identifier: MIT */
/* Unity compute-buffer dumps (BoidData of seed 003, UnityGraphicsProgramming: float3 velocity,
 * float3 position; 24 bytes a boid, little-endian float32, no header) in and out of shoal's row
 * layout (px py pz vx vy vz). Values are moved as bits, never converted, so a round trip is exact
 * (NaN payloads included). Owns no state. */
#include "shoal/io.h"
#include "core/check.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

static shoal_status unity_size_check(size_t size, const char *name, shoal_error *err)
{
    if (size == 0 || size % UNITY_RECORD != 0)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "%s: %zu bytes is not a Unity boid buffer (a positive multiple "
                               "of 24 bytes: float3 velocity, float3 position)",
                               name, size);
    return SHOAL_OK;
}

shoal_status shoal_io_unity_parse(const void *data, size_t size, const char *name, float **rows_out,
                                  size_t *count_out, shoal_error *err)
{
    CHECK_ARG(rows_out, "rows_out", err);
    CHECK_ARG(count_out, "count_out", err);
    *rows_out = NULL;
    *count_out = 0;
    CHECK_ARRAY(data, size, "data", err);
    shoal_status size_st = unity_size_check(size, name, err);
    if (size_st)
        return size_st;
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
    CHECK_ARG(rows_out, "rows_out", err);
    CHECK_ARG(count_out, "count_out", err);
    CHECK_ARG(path, "path", err);
    *rows_out = NULL;
    *count_out = 0;
    /* The buffer has no header: its size is the boid count, and only the file system can
     * say it before reading. A FIFO or a device (/dev/zero never ends) is refused rather
     * than read until memory runs out; the size is checked before anything is read. The
     * open does not block (a FIFO without a writer waited in open for ever). */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return shoal_error_set(err, SHOAL_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "%s: not a regular file: a Unity buffer has no header, so its "
                               "size must come from the file system (copy it to a file first)",
                               path);
    }
    FILE *f = NULL;
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0 || !(f = fdopen(fd, "rb"))) {
        int why = errno;
        close(fd);
        return shoal_error_set(err, SHOAL_ERR_IO, "%s: cannot open: %s", path, strerror(why));
    }
    size_t size = (uintmax_t)st.st_size > SIZE_MAX ? SIZE_MAX : (size_t)st.st_size;
    shoal_status res = unity_size_check(size, path, err);
    unsigned char *data = res ? NULL : malloc(size);
    if (!res && !data)
        res =
            shoal_error_set(err, SHOAL_ERR_NOMEM,
                            "%s: out of memory: cannot allocate %zu bytes to read it", path, size);
    if (!res) {
        size_t got = fread(data, 1, size, f);
        if (ferror(f))
            res = shoal_error_set(err, SHOAL_ERR_IO, "%s: read error: %s", path, strerror(errno));
        else if (got != size || fgetc(f) != EOF)
            res = shoal_error_set(err, SHOAL_ERR_IO, "%s: changed size while being read", path);
    }
    fclose(f);
    if (!res)
        res = shoal_io_unity_parse(data, size, path, rows_out, count_out, err);
    free(data);
    return res;
}

shoal_status shoal_io_unity_write(const char *path, const float *rows, size_t count,
                                  shoal_error *err)
{
    CHECK_ARG(path, "path", err);
    CHECK_ARRAY(rows, count, "rows", err);
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
