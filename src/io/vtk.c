/* SPDX-License-Identifier: MIT */
/* VTK XML PolyData (.vtp) output of a state, for ParaView: points, vertex cells, velocity
 * and speed. Binary appended ("raw") arrays, as vtkXMLPolyDataWriter writes by default:
 * values are the float32 bits of the state. Owns no state; writes through the atomic
 * writer so a reader never sees half a file. The .pvd collection is the program's. */
#include "shoal/io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* fwrite of `n` items through a small buffer-free path; returns 0 on success. */
static int put(FILE *f, const void *p, size_t size, size_t n)
{
    return fwrite(p, size, n, f) == n ? 0 : -1;
}

shoal_status shoal_io_vtp_write(const char *path, const float *rows, size_t count, double time,
                                shoal_error *err)
{
    if (count == 0)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "%s: no boids to write", path);
    const uint64_t n = (uint64_t)count;
    /* appended blocks: each a UInt64 byte count then the bytes */
    const uint64_t pts = n * 12, vel = n * 12, spd = n * 4, con = n * 8, off = n * 8;
    const uint64_t o_pts = 0, o_vel = o_pts + 8 + pts, o_spd = o_vel + 8 + vel,
                   o_con = o_spd + 8 + spd, o_off = o_con + 8 + con;
    shoal_atomic_file af;
    shoal_status st = shoal_io_atomic_open(&af, path, err);
    if (st)
        return st;
    FILE *f = af.file;
    fprintf(f, "<?xml version=\"1.0\"?>\n"
               "<VTKFile type=\"PolyData\" version=\"1.0\" byte_order=\"LittleEndian\" "
               "header_type=\"UInt64\">\n  <PolyData>\n");
    if (isfinite(time))
        fprintf(f,
                "    <FieldData>\n      <DataArray type=\"Float64\" Name=\"TimeValue\" "
                "NumberOfTuples=\"1\" format=\"ascii\">%.17g</DataArray>\n    </FieldData>\n",
                time);
    fprintf(f,
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
            (unsigned long long)n, (unsigned long long)n, (unsigned long long)o_vel,
            (unsigned long long)o_spd, (unsigned long long)o_pts, (unsigned long long)o_con,
            (unsigned long long)o_off);
    int bad = 0;
    enum { CHUNK = 4096 };
    float buf[CHUNK * 3];
    int64_t ibuf[CHUNK];
    /* points, velocities, speeds: the row's columns 0-2, 3-5, and |v| */
    for (int part = 0; part < 3 && !bad; part++) {
        uint64_t bytes = part == 2 ? spd : pts;
        bad |= put(f, &bytes, 8, 1);
        for (size_t i0 = 0; i0 < count && !bad; i0 += CHUNK) {
            size_t m = count - i0 < CHUNK ? count - i0 : CHUNK;
            for (size_t i = 0; i < m; i++) {
                const float *r = rows + (i0 + i) * 6;
                if (part == 2)
                    buf[i] = sqrtf((r[3] * r[3] + r[4] * r[4]) + r[5] * r[5]);
                else
                    memcpy(buf + 3 * i, r + 3 * part, 3 * sizeof(float));
            }
            bad |= put(f, buf, sizeof(float), part == 2 ? m : 3 * m);
        }
    }
    /* vertex cells: connectivity i, offsets i + 1 */
    for (int part = 0; part < 2 && !bad; part++) {
        uint64_t bytes = part ? off : con;
        bad |= put(f, &bytes, 8, 1);
        for (size_t i0 = 0; i0 < count && !bad; i0 += CHUNK) {
            size_t m = count - i0 < CHUNK ? count - i0 : CHUNK;
            for (size_t i = 0; i < m; i++)
                ibuf[i] = (int64_t)(i0 + i) + part;
            bad |= put(f, ibuf, sizeof(int64_t), m);
        }
    }
    fprintf(f, "\n  </AppendedData>\n</VTKFile>\n");
    if (bad || ferror(f)) {
        shoal_io_atomic_abort(&af);
        return shoal_error_set(err, SHOAL_ERR_IO, "%s: write failed", path);
    }
    return shoal_io_atomic_commit(&af, err);
}
