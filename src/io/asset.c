/* SPDX-License-Identifier: MIT */
/* Where shoal's own files are found (the fish meshes, the model scenes) and the loader of an
 * asset mesh by name. io owns the search so that no other part of the library takes paths it
 * did not get from its caller; the renderer takes meshes (shoal_render_desc.mesh). Owns no
 * state. */
#include "io/io_config.h"
#include "core/check.h"
#include "shoal/io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int asset_try(const char *dir, const char *name, char *out, size_t size)
{
    if (!dir || !*dir)
        return 0;
    int n = snprintf(out, size, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= size)
        return 0;
    return access(out, R_OK) == 0;
}

SHOAL_API int shoal_io_asset_path(const char *name, char *out, size_t size)
{
    if (!name || !out || !size)
        return 0;
    if (asset_try(getenv("SHOAL_ASSETS"), name, out, size) || asset_try("assets", name, out, size))
        return 1;
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            /* ../shoal: a wheel's data (pip puts meson's datadir/shoal at the environment's
             * root, beside bin/) */
            static const char *rel[] = {"../share/shoal", "../shoal", "../assets", "../../assets",
                                        "../../../assets"};
            for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
                char dir[4200];
                snprintf(dir, sizeof dir, "%s/%s", exe, rel[i]);
                if (asset_try(dir, name, out, size))
                    return 1;
            }
        }
    }
    if (asset_try(SHOAL_IO_INSTALLED_ASSETS, name, out, size) ||
        asset_try(SHOAL_IO_SOURCE_ASSETS, name, out, size))
        return 1;
    snprintf(out, size, "%s", name);
    return 0;
}

SHOAL_API shoal_status shoal_mesh_load_asset(const char *name, shoal_mesh *mesh, shoal_error *err)
{
    CHECK_ARG(mesh, "mesh", err);
    CHECK_ARG(name, "name", err);
    memset(mesh, 0, sizeof *mesh);
    char path[4096];
    if (!shoal_io_asset_path(name, path, sizeof path))
        return shoal_error_set(err, SHOAL_ERR_IO,
                               "%s: not found (looked in $SHOAL_ASSETS, ./assets, beside the "
                               "executable and in %s)",
                               name, SHOAL_IO_SOURCE_ASSETS);
    return shoal_mesh_load(path, mesh, err);
}
