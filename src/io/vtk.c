/* SPDX-License-Identifier: MIT */
/* VTK XML PolyData (.vtp) output of a state, for ParaView: points, vertex cells, velocity
 * and speed. Binary appended ("raw") arrays, as vtkXMLPolyDataWriter writes by default:
 * values are the float32 bits of the state. The file as a row layout (io/rows_layout.h),
 * which the MPI-IO writer of src/mpi shares; written through the atomic writer so a reader
 * never sees half a file. Owns no state. The .pvd collection is the program's. */
#include "io/rows_layout.h"
#include "core/check.h"
#include "shoal/io.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

shoal_status rows_layout_vtp(rows_layout *l, size_t count, double time, const char *name,
                             shoal_error *err)
{
    memset(l, 0, sizeof *l);
    if (count == 0)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "%s: no boids to write", name);
    const uint64_t n = (uint64_t)count;
    /* appended blocks, in this order: each a UInt64 byte count then the bytes */
    static const rows_kind order[5] = {ROWS_POSITION, ROWS_VELOCITY, ROWS_SPEED, ROWS_INDEX,
                                       ROWS_INDEX1};
    uint64_t at[5], o = 0;
    for (int k = 0; k < 5; k++) {
        at[k] = o;
        o += 8 + n * rows_kind_size(order[k]);
    }
    enum { CAP = 4096 };
    l->bytes = malloc(CAP);
    if (!l->bytes)
        return shoal_error_set(err, SHOAL_ERR_NOMEM, "%s: out of memory for its header", name);
    char *h = (char *)l->bytes;
    int len = snprintf(h, CAP,
                       "<?xml version=\"1.0\"?>\n"
                       "<VTKFile type=\"PolyData\" version=\"1.0\" byte_order=\"LittleEndian\" "
                       "header_type=\"UInt64\">\n  <PolyData>\n");
    if (isfinite(time))
        len += snprintf(h + len, CAP - (size_t)len,
                        "    <FieldData>\n      <DataArray type=\"Float64\" Name=\"TimeValue\" "
                        "NumberOfTuples=\"1\" format=\"ascii\">%.17g</DataArray>\n    "
                        "</FieldData>\n",
                        time);
    len +=
        snprintf(h + len, CAP - (size_t)len,
                 "    <Piece NumberOfPoints=\"%llu\" NumberOfVerts=\"%llu\" NumberOfLines=\"0\" "
                 "NumberOfStrips=\"0\" NumberOfPolys=\"0\">\n"
                 "      <PointData Scalars=\"speed\" Vectors=\"velocity\">\n"
                 "        <DataArray type=\"Float32\" Name=\"velocity\" NumberOfComponents=\"3\" "
                 "format=\"appended\" offset=\"%llu\"/>\n"
                 "        <DataArray type=\"Float32\" Name=\"speed\" format=\"appended\" "
                 "offset=\"%llu\"/>\n"
                 "      </PointData>\n      <Points>\n"
                 "        <DataArray type=\"Float32\" Name=\"Points\" NumberOfComponents=\"3\" "
                 "format=\"appended\" offset=\"%llu\"/>\n"
                 "      </Points>\n      <Verts>\n"
                 "        <DataArray type=\"Int64\" Name=\"connectivity\" format=\"appended\" "
                 "offset=\"%llu\"/>\n"
                 "        <DataArray type=\"Int64\" Name=\"offsets\" format=\"appended\" "
                 "offset=\"%llu\"/>\n"
                 "      </Verts>\n    </Piece>\n  </PolyData>\n"
                 "  <AppendedData encoding=\"raw\">\n   _",
                 (unsigned long long)n, (unsigned long long)n, (unsigned long long)at[1],
                 (unsigned long long)at[2], (unsigned long long)at[0], (unsigned long long)at[3],
                 (unsigned long long)at[4]);
    size_t head = (size_t)len, b = head;
    l->count = count;
    l->piece[l->piece_count++] = (rows_piece){.offset = 0, .size = head, .at = 0};
    for (int k = 0; k < 5; k++) {
        uint64_t bytes = n * rows_kind_size(order[k]);
        memcpy(l->bytes + b, &bytes, 8);
        l->piece[l->piece_count++] = (rows_piece){.offset = head + at[k], .size = 8, .at = b};
        l->section[l->section_count++] =
            (rows_section){.offset = head + at[k] + 8, .kind = order[k]};
        b += 8;
    }
    static const char tail[] = "\n  </AppendedData>\n</VTKFile>\n";
    memcpy(l->bytes + b, tail, sizeof tail - 1);
    l->piece[l->piece_count++] = (rows_piece){.offset = head + o, .size = sizeof tail - 1, .at = b};
    l->total_bytes = head + o + sizeof tail - 1;
    return SHOAL_OK;
}

shoal_status shoal_io_vtp_write(const char *path, const float *rows, size_t count, double time,
                                shoal_error *err)
{
    CHECK_ARG(path, "path", err);
    CHECK_ARRAY(rows, count, "rows", err);
    rows_layout l;
    shoal_status st = rows_layout_vtp(&l, count, time, path, err);
    if (st)
        return st;
    shoal_atomic_file af;
    if ((st = shoal_io_atomic_open(&af, path, err))) {
        rows_layout_free(&l);
        return st;
    }
    int bad = rows_layout_write(&l, rows, af.file);
    int e = errno;
    rows_layout_free(&l);
    if (bad) {
        shoal_io_atomic_abort(&af);
        return shoal_error_set(err, SHOAL_ERR_IO, "%s: write failed: %s", path, strerror(e));
    }
    return shoal_io_atomic_commit(&af, err);
}
