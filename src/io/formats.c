/* SPDX-License-Identifier: MIT */
/* The state file formats, one table for every front end (docs/ARCHITECTURE.md, "A state
 * file format"): each format's name, the extension that picks it, its reader and writer, and
 * whether a trajectory is written in it. The program's --format options, step --out-dir and
 * the Python package's load and save all read it, so they accept and refuse the same names
 * with the same words. The readers and writers themselves are npy.c's, unity.c's, vtk.c's. */
#include "shoal/io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct format_entry {
    shoal_io_format info;
    shoal_status (*read)(const char *path, float **rows, size_t *count, shoal_error *e);
    shoal_status (*write)(const char *path, const float *rows, size_t count, double t_s,
                          shoal_error *e);
} format_entry;

static shoal_status npy_write(const char *path, const float *rows, size_t count, double t_s,
                              shoal_error *e)
{
    (void)t_s;
    return shoal_io_npy_write(path, rows, count, e);
}

static shoal_status unity_write(const char *path, const float *rows, size_t count, double t_s,
                                shoal_error *e)
{
    (void)t_s;
    return shoal_io_unity_write(path, rows, count, e);
}

/* The first is the default (a path whose extension names no format). */
static const format_entry formats[] = {
    {{"npy", ".npy", 1, 1, 0}, shoal_io_npy_read, npy_write},
    {{"unity", ".bin", 1, 0, 0}, shoal_io_unity_read, unity_write},
    {{"vtk", ".vtp", 0, 1, 1}, NULL, shoal_io_vtp_write},
};
#define FORMAT_COUNT (sizeof formats / sizeof formats[0])

static const format_entry *entry_of(const shoal_io_format *f)
{
    return f ? (const format_entry *)(const void *)f : NULL; /* info is the first member */
}

const shoal_io_format *shoal_io_format_at(size_t index)
{
    return index < FORMAT_COUNT ? &formats[index].info : NULL;
}

const shoal_io_format *shoal_io_format_find(const char *name, int trajectory)
{
    for (size_t i = 0; name && i < FORMAT_COUNT; i++)
        if (strcmp(formats[i].info.name, name) == 0 && (!trajectory || formats[i].info.trajectory))
            return &formats[i].info;
    return NULL;
}

const shoal_io_format *shoal_io_format_of_path(const char *path, int reading)
{
    size_t n = path ? strlen(path) : 0;
    for (size_t i = 0; i < FORMAT_COUNT; i++) {
        size_t k = strlen(formats[i].info.ext);
        if ((!reading || formats[i].info.readable) && n >= k &&
            strcmp(path + n - k, formats[i].info.ext) == 0)
            return &formats[i].info;
    }
    return &formats[0].info;
}

size_t shoal_io_format_names(char *buf, size_t size, int readable, int trajectory,
                             const char *first)
{
    const char *names[FORMAT_COUNT + 1];
    size_t n = 0, used = 0;
    if (first)
        names[n++] = first;
    for (size_t i = 0; i < FORMAT_COUNT; i++)
        if ((!readable || formats[i].info.readable) && (!trajectory || formats[i].info.trajectory))
            names[n++] = formats[i].info.name;
    if (size)
        buf[0] = 0;
    for (size_t i = 0; i < n && size; i++) {
        const char *sep = i == 0 ? "" : i + 1 == n ? " or " : ", ";
        int k = snprintf(buf + used, size - used, "%s%s", sep, names[i]);
        if (k < 0 || (size_t)k >= size - used)
            break;
        used += (size_t)k;
    }
    return used;
}

shoal_status shoal_io_state_read(const char *path, const char *format, float **rows, size_t *count,
                                 shoal_error *err)
{
    *rows = NULL;
    *count = 0;
    const shoal_io_format *f = format && strcmp(format, "auto") != 0
                                   ? shoal_io_format_find(format, 0)
                                   : shoal_io_format_of_path(path, 1);
    if (!f || !f->readable) {
        char names[128];
        shoal_io_format_names(names, sizeof names, 1, 0, "auto");
        return shoal_error_set(err, SHOAL_ERR_INPUT, "format '%s' (expected %s)", format, names);
    }
    shoal_status st = entry_of(f)->read(path, rows, count, err);
    /* a NaN or infinity in a state file is bad input (docs/CLI.md), for every reader */
    if (!st && (st = shoal_state_check_finite(*rows, *count, path, err))) {
        free(*rows);
        *rows = NULL;
        *count = 0;
    }
    return st;
}

shoal_status shoal_io_state_write(const char *path, const char *format, const float *rows,
                                  size_t count, double t_s, shoal_error *err)
{
    const shoal_io_format *f = format && strcmp(format, "auto") != 0
                                   ? shoal_io_format_find(format, 0)
                                   : shoal_io_format_of_path(path, 0);
    if (!f) {
        char names[128];
        shoal_io_format_names(names, sizeof names, 0, 0, "auto");
        return shoal_error_set(err, SHOAL_ERR_INPUT, "format '%s' (expected %s)", format, names);
    }
    return entry_of(f)->write(path, rows, count, t_s, err);
}
