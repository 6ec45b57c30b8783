/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the Wavefront OBJ mesh reader (shoal_mesh_parse) on arbitrary bytes.
 * Beyond "no crash": an accepted mesh has faces, every index is below vertex_count, every
 * coordinate is finite and no triangle repeats a corner; a rejected one is left
 * all zero with a one-line message naming the file. */
#include "shoal/render.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    shoal_mesh mesh;
    shoal_error e;
    memset(&e, 0, sizeof e);
    shoal_status st = shoal_mesh_parse(data, size, "fuzz.obj", &mesh, &e);
    if (st != SHOAL_OK) {
        if (mesh.positions || mesh.indices || mesh.vertex_count || mesh.triangle_count)
            abort();
        if (!strstr(e.message, "fuzz.obj") || strchr(e.message, '\n'))
            abort();
        return 0;
    }
    if (mesh.triangle_count == 0 || mesh.vertex_count == 0)
        abort();
    for (size_t i = 0; i < 3 * mesh.vertex_count; i++)
        if (!isfinite(mesh.positions[i]))
            abort();
    for (size_t t = 0; t < mesh.triangle_count; t++) {
        const uint32_t *ix = mesh.indices + 3 * t;
        if (ix[0] >= mesh.vertex_count || ix[1] >= mesh.vertex_count || ix[2] >= mesh.vertex_count)
            abort();
        if (ix[0] == ix[1] || ix[1] == ix[2] || ix[0] == ix[2])
            abort(); /* two equal corners: zero area, must have been rejected */
    }
    shoal_mesh_free(&mesh);
    if (mesh.positions || mesh.indices)
        abort();
    return 0;
}
