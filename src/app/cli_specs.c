/* SPDX-License-Identifier: MIT */
/* The option tables of `shoal init`, `shoal step` and `shoal render` (cli_specs.h): in a file
 * of their own so that the command-line fuzzer (tests/fuzz/fuzz_cli.c) parses the program's
 * own tables, not copies. */
#include "app/cli_specs.h"
#include "app/app.h"

const opt_spec app_init_specs[] = {
    {"model", OPT_VALUE, "M", OPT_MODEL_DEFAULT, APP_MODEL_HELP},
    {"count", OPT_VALUE, "N", "the scene's (model's default)",
     "number of boids; walls and start region are scaled by cbrt(N / the scene's count) to "
     "keep the scene's density (--set wins)"},
    {"keep-geometry", OPT_FLAG, NULL, NULL,
     "with --count: keep the scene's walls and start region as they are (its density changes)"},
    {"seed", OPT_VALUE, "S", "1", "random seed (same seed, same state on every machine)"},
    {"out", OPT_VALUE, "FILE.npy", NULL, "output state file (required; '-': write nothing)"},
    {"scene", OPT_VALUE, "FILE.ini", NULL,
     "scene file: model, parameters, count, seed (without it: the model's scene, as "
     "assets/scenes/MODEL.ini)"},
    {"set", OPT_REPEAT, "NAME=VALUE", NULL, "set a model parameter (init radii, walls)"},
    {"stats", OPT_FLAG, NULL, NULL, "print the time of each stage (draw, write)"},
};
const int app_init_spec_count = (int)(sizeof app_init_specs / sizeof app_init_specs[0]);

const opt_spec app_step_specs[] = {
    {"model", OPT_VALUE, "M", OPT_MODEL_DEFAULT, APP_MODEL_HELP},
    {"in", OPT_VALUE, "A.npy", NULL, "input state file (required)"},
    {"out", OPT_VALUE, "B.npy", NULL,
     "output state file (required unless --out-dir or --checkpoint; '-': write nothing)"},
    {"steps", OPT_VALUE, "K", "1", "number of synchronous steps"},
    {"dt", OPT_VALUE, "DT", "1/60", "time step in seconds"},
    {"t0", OPT_VALUE, "SECONDS", "0", "simulated time at the first step (heading targets)"},
    {"seed", OPT_VALUE, "S", "1", "seed of time-dependent model state (heading targets)"},
    {"threads", OPT_VALUE, "T", "0", "worker threads, 0: all cores (results do not depend on it)"},
    {"neighbors", OPT_VALUE, "grid|brute", "grid", "neighbour search (brute: O(N^2) reference)"},
    {"simd", OPT_VALUE, "ISA", "auto",
     "force kernel: auto, scalar, avx2, avx512, neon (or $SHOAL_SIMD)"},
    {"set", OPT_REPEAT, "NAME=VALUE", NULL, "set a model parameter"},
    {"scene", OPT_VALUE, "FILE.ini", NULL, "scene file: model and parameters"},
    {"stats", OPT_FLAG, NULL, NULL,
     "print per-stage timings to stderr (calls, total, mean, median, max, per thread)"},
    {"trace", OPT_VALUE, "FILE.json", NULL,
     "write a Chrome trace (Perfetto, chrome://tracing): a span per stage per thread per step"},
    {"backend", OPT_VALUE, "cpu|cuda", "cpu", "run on the CPU or on an NVIDIA GPU (same bits)"},
    {"gpu-order", OPT_VALUE, "stable|atomic", "stable", "GPU order in a cell (atomic: seed 001's)"},
    {"out-dir", OPT_VALUE, "DIR", NULL,
     "trajectory: the state at steps 0, E, 2E, ... and K as DIR/state_NNNNNN.npy (or .vtp), "
     "DIR/manifest.json last"},
    {"every", OPT_VALUE, "E", "K (first and last state only)", "--out-dir: steps between states"},
    {"format", OPT_VALUE, "npy|vtk", "npy",
     "--out-dir: NumPy states, or VTK .vtp + trajectory.pvd"},
    {"checkpoint", OPT_VALUE, "F.ckpt", NULL,
     "write a checkpoint at the end: boids, predators, pinned targets, time, every parameter"},
    {"resume", OPT_VALUE, "F.ckpt", NULL,
     "start from a checkpoint instead of --in (it carries model, parameters, dt, t0, seed)"},
    {"overwrite", OPT_FLAG, NULL, NULL,
     "--out-dir: replace the trajectory of another run in DIR (else DIR holding one is "
     "refused)"},
    {"quiet", OPT_FLAG, NULL, NULL, "no progress line (shown only when stderr is a terminal)"},
    {"count", OPT_VALUE, "N", NULL,
     "the state's boid count: the scene's walls and start region scaled for N as `init "
     "--count N` scales them (--set wins); A.npy must have N rows"},
    {"precision", OPT_VALUE, "f32|f64", "f32",
     "f64: the float64 reference (the same rules in double), float64 .npy in and out"},
};
const int app_step_spec_count = (int)(sizeof app_step_specs / sizeof app_step_specs[0]);

const opt_spec app_render_specs[] = {
    {"in", OPT_VALUE, "STATE.npy", NULL, "state to draw: float32/64 (N, 6) px py pz vx vy vz"},
    {"out", OPT_VALUE, "FRAME.png", NULL,
     "PNG to write (optional with --bench; '-': draw, write nothing); --in DIR: a directory"},
    {"size", OPT_VALUE, "WxH", "1280x720", "image size in pixels"},
    {"eye", OPT_VALUE, "x,y,z", NULL, "camera position (with --target; neither: frame the state)"},
    {"target", OPT_VALUE, "x,y,z", NULL, "point the camera looks at (up is +Y)"},
    {"fov-deg", OPT_VALUE, "F", "60", "vertical field of view in degrees, (0, 180)"},
    {"near", OPT_VALUE, "D", "0.1", "near plane distance"},
    {"far", OPT_VALUE, "D", "2000", "far plane distance"},
    {"fish-length", OPT_VALUE, "L", "the --scene's, else 0.6",
     "length of every fish in world units"},
    {"shade", OPT_VALUE, "lit|id", "lit", "lit: lighting, fog, colour by speed; id: colour i+1"},
    {"lod", OPT_VALUE, "on|off", "on", "level of detail in lit mode (splats, reduced mesh)"},
    {"occlusion", OPT_VALUE, "on|off", "on",
     "skip fish hidden behind nearer pixels (the same image; off to compare)"},
    {"threads", OPT_VALUE, "T", "0", "worker threads (0: all cores); images do not depend on it"},
    {"simd", OPT_VALUE, "auto|scalar|avx2|avx512|neon", "auto",
     "rasterizer ISA; all give the same image"},
    {"mesh", OPT_VALUE, "PATH", "assets/fish.obj", "fish mesh (Wavefront OBJ)"},
    {"lod-mesh", OPT_VALUE, "PATH", "assets/fish_lod1.obj",
     "reduced fish mesh for LOD (given: no coarse level, assets/fish_lod2.obj)"},
    {"stats", OPT_FLAG, NULL, NULL,
     "print per-stage times (calls, total, mean, median, max, per thread), counts and the "
     "image hash"},
    {"trace", OPT_VALUE, "FILE.json", NULL,
     "write a Chrome trace (Perfetto, chrome://tracing): a span per stage per thread per frame"},
    {"bench", OPT_VALUE, "N", NULL, "time N frames of the benchmark scene (median ms)"},
    {"count", OPT_VALUE, "N", "10000", "--bench: number of fish"},
    {"seed", OPT_VALUE, "S", "1", "--bench: seed of the fish positions and directions"},
    {"scene", OPT_VALUE, "FILE.ini", NULL,
     "draw the scene's obstacles (mesh wireframes, spheres) and heading targets over the fish, "
     "in its [world]"},
    {"set", OPT_REPEAT, "NAME=VALUE", NULL,
     "a world parameter (periodic=1, world_size=Lx,Ly,Lz, world_center, dims=2; docs/WORLD.md): "
     "the box drawn, fish across the seams, 2D from above"},
    {"time", OPT_VALUE, "SECONDS", "the scene's t0", "--scene: simulated time of the targets"},
    {"video", OPT_VALUE, "FILE.mp4", NULL, "--in DIR: encode the replay with ffmpeg (H.264)"},
    {"follow", OPT_FLAG, NULL, NULL, "--in DIR: the camera follows the school's centre"},
    {"fps", OPT_VALUE, "F", "30", "--video: frames per second"},
    {"quiet", OPT_FLAG, NULL, NULL, "--in DIR: no progress line"},
    {"overwrite", OPT_FLAG, NULL, NULL,
     "--in DIR --out DIR2: replace the frames of another replay in DIR2 (else refused)"},
};
const int app_render_spec_count = (int)(sizeof app_render_specs / sizeof app_render_specs[0]);
