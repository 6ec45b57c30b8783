/* SPDX-License-Identifier: MIT */
/* The smallest program on the installed libshoal: create a simulation, step it, draw one
 * frame with the software renderer and write it as a PNG. Build it against an installed
 * shoal with pkg-config alone:
 *
 *     cc hello_shoal.c $(pkg-config --cflags --libs shoal) -o hello_shoal
 *     ./hello_shoal out.png [boid_count] [steps]
 *
 * Every call returns a shoal_status and fills a shoal_error with one line on failure. */
#include <shoal/shoal.h>

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s OUT.png [boid_count] [steps]\n", argv[0]);
        return 2;
    }
    size_t count = argc > 2 ? (size_t)strtoull(argv[2], NULL, 10) : 4096;
    int steps = argc > 3 ? atoi(argv[3]) : 120;
    shoal_error err;
    /* the library loaded must have the ABI of the headers this was compiled with */
    if (shoal_abi_check(&err)) {
        fprintf(stderr, "hello_shoal: %s\n", err.message);
        return 1;
    }

    /* the steer model with its defaults; every desc starts from its model's defaults */
    shoal_sim_desc desc = shoal_sim_desc_for(SHOAL_MODEL_STEER);
    desc.boid_count = count;
    desc.seed = 1; /* the one seed: the initial state (and heading's targets) */
    shoal_sim *sim = NULL;
    if (shoal_sim_create(&desc, &sim, &err)) {
        fprintf(stderr, "hello_shoal: %s\n", err.message);
        return 1;
    }
    if (shoal_sim_draw_state(sim, &err) || shoal_sim_step(sim, steps, &err)) {
        fprintf(stderr, "hello_shoal: %s\n", err.message);
        shoal_sim_destroy(sim);
        return 1;
    }

    /* draw the school: the renderer reads the simulation's arrays in place */
    shoal_render_desc rdesc = shoal_render_desc_default();
    rdesc.width = 640;
    rdesc.height = 360;
    shoal_renderer *renderer = NULL;
    int rc = 1;
    /* the renderer takes meshes: shoal's own fish, read by io, lent to create (which copies) */
    shoal_mesh fish = {0}, fish_lod = {0}, fish_coarse = {0};
    if (shoal_mesh_load_asset("fish.obj", &fish, &err) ||
        shoal_mesh_load_asset("fish_lod1.obj", &fish_lod, &err) ||
        shoal_mesh_load_asset("fish_lod2.obj", &fish_coarse, &err))
        goto fail;
    rdesc.mesh = &fish;
    rdesc.lod_mesh = &fish_lod;
    rdesc.lod_coarse_mesh = &fish_coarse;
    if (shoal_render_create(&rdesc, &renderer, &err))
        goto fail;
    shoal_boid_view v = shoal_sim_view(sim);
    shoal_render_instances inst = {.count = shoal_sim_count(sim),
                                   .px = v.px,
                                   .py = v.py,
                                   .pz = v.pz,
                                   .vx = v.vx,
                                   .vy = v.vy,
                                   .vz = v.vz,
                                   .id = v.row_of};
    shoal_camera cam = shoal_camera_default();
    /* frame the whole school */
    shoal_render_camera_frame(v.px, v.py, v.pz, inst.count, 1.1f, 640.0f / 360.0f, &cam);
    if (shoal_render_frame(renderer, &inst, &cam, &err))
        goto fail;
    shoal_framebuffer fb = shoal_render_framebuffer(renderer);
    if (shoal_io_png_write(argv[1], fb.argb, fb.width, fb.height, fb.stride_px, &err))
        goto fail;
    printf("libshoal %s: %zu boids, %d steps (t = %.3f s, %s kernels): wrote %s (%dx%d)\n",
           shoal_version(), inst.count, steps, shoal_sim_time(sim), shoal_sim_isa_name(sim),
           argv[1], fb.width, fb.height);
    rc = 0;
fail:
    if (rc)
        fprintf(stderr, "hello_shoal: %s\n", err.message);
    shoal_render_destroy(renderer);
    shoal_mesh_free(&fish);
    shoal_mesh_free(&fish_lod);
    shoal_mesh_free(&fish_coarse);
    shoal_sim_destroy(sim);
    return rc;
}
