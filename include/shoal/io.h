/* SPDX-License-Identifier: MIT */
/* shoal: file formats. State files are NumPy .npy (float32, C order, shape (N, 6), columns
 * px py pz vx vy vz); also checkpoints, Unity buffers, VTK, meshes (Wavefront OBJ) and PNG
 * images. Every writer goes through a temporary file in the target's directory and a
 * rename, so a reader never sees a half-written file. */
#ifndef SHOAL_IO_H
#define SHOAL_IO_H

#include "shoal/base.h"
#include "shoal/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Read a state file. Accepts dtype '<f4' or '<f8' (converted to float32), C order,
 *  shape (N, 6) with N >= 1. On success `*rows_out` is a malloc'ed array of N*6 floats
 *  (row-major; the caller frees it) and `*count_out` is N. Any other dtype, order, shape,
 *  a truncated or oversized file: SHOAL_ERR_INPUT with a message naming the file and the
 *  problem; SHOAL_ERR_IO when the file cannot be opened or read; SHOAL_ERR_NOMEM when
 *  the rows cannot be allocated. On failure `*rows_out` is NULL and `*count_out` 0.
 *  float64 values are rounded to float32 (out of range becomes an infinity). Values are
 *  not checked for finiteness here (see shoal_state_check_finite, shoal/sim.h).
 *  Thread-safe (no shared state). */
SHOAL_API shoal_status shoal_io_npy_read(const char *path, float **rows_out, size_t *count_out,
                                         shoal_error *err);

/** Parse an in-memory .npy image, as shoal_io_npy_read does with a file's bytes. `name`
 *  is used in messages. Used by the file reader and by the fuzz targets. */
SHOAL_API shoal_status shoal_io_npy_parse(const void *data, size_t size, const char *name,
                                          float **rows_out, size_t *count_out, shoal_error *err);

/** Write `count` rows of 6 float32 as a version 1.0 .npy file ('<f4', C order, shape
 *  (count, 6)), bit for bit (NaN payloads too). Written to a temporary file beside `path`
 *  and renamed into place: on any failure no file at `path` is created or changed.
 *  count == 0 is SHOAL_ERR_INPUT (the reader refuses N == 0); I/O failures SHOAL_ERR_IO. */
SHOAL_API shoal_status shoal_io_npy_write(const char *path, const float *rows, size_t count,
                                          shoal_error *err);

/** A .npy array of any shape of 1 to 3 dimensions and a numeric dtype ('<f4', '<f8', '<i4',
 *  '<i8', '<u4', '<u8', C order), its values as doubles (exact for float32 and float64; integers
 *  beyond 2^53 round). For trajectories (T, N, 6) and row ids (shoal verify). */
typedef struct shoal_npy_array {
    int ndim;
    size_t dims[3];
    double *data;   /**< dims[0] * ... values, row-major; malloc'ed (shoal_npy_array_free) */
    int is_float32; /**< the file held float32 values */
    char dtype[8];
} shoal_npy_array;

/** Read such an array: SHOAL_ERR_INPUT naming the file and what is wrong (dtype, order, shape,
 *  a size that disagrees with the header), SHOAL_ERR_IO when it cannot be read. */
SHOAL_API shoal_status shoal_io_npy_read_array(const char *path, shoal_npy_array *out,
                                               shoal_error *err);
/** The same from an in-memory image (`name` in messages; the fuzz target's entry). */
SHOAL_API shoal_status shoal_io_npy_parse_array(const void *data, size_t size, const char *name,
                                                shoal_npy_array *out, shoal_error *err);
SHOAL_API void shoal_npy_array_free(shoal_npy_array *a);

/** The state file formats, one table for every front end (the program's --format options
 *  and step --out-dir, the Python package's load and save): "npy" (.npy, read and written,
 *  trajectories), "unity" (.bin, Unity's raw buffer, read and written), "vtk" (.vtp, ParaView,
 *  written only, trajectories with a ParaView collection). Static; thread-safe. */
typedef struct shoal_io_format {
    const char *name; /**< "npy", "unity", "vtk": --format */
    const char *ext;  /**< the extension that picks it when no format is named (".npy") */
    int readable;     /**< shoal_io_state_read reads it */
    int trajectory;   /**< a trajectory (step --out-dir) is written in it */
    int collection;   /**< ... with a ParaView collection (trajectory.pvd) */
} shoal_io_format;

/** The index-th format of the table (the first is the default), NULL past the last. */
SHOAL_API const shoal_io_format *shoal_io_format_at(size_t index);
/** The format called `name` (with trajectory != 0: only one a trajectory is written in), or
 *  NULL. */
SHOAL_API const shoal_io_format *shoal_io_format_find(const char *name, int trajectory);
/** The format a path's extension picks among those that can be read (reading != 0) or
 *  written; the first (npy) when none does. */
SHOAL_API const shoal_io_format *shoal_io_format_of_path(const char *path, int reading);
/** The names of the formats that can be read (readable) or written in a trajectory, after
 *  `first` when not NULL, as "a, b or c", into buf (cut to `size`). Returns the length. */
SHOAL_API size_t shoal_io_format_names(char *buf, size_t size, int readable, int trajectory,
                                       const char *first);
/** Read a state file in `format` ("auto" or NULL: by the extension, .bin is Unity's raw
 *  buffer, else .npy): *rows malloc'ed N x 6 (caller frees), *count N. A NaN or infinity is
 *  SHOAL_ERR_INPUT naming row and column (shoal_state_check_finite); an unknown or unreadable
 *  format SHOAL_ERR_INPUT naming the readable ones; otherwise as the format's reader. */
SHOAL_API shoal_status shoal_io_state_read(const char *path, const char *format, float **rows,
                                           size_t *count, shoal_error *err);
/** Write a state in `format` (NULL or "auto": by the extension, else npy), atomically. `t_s`
 *  is the state's time (vtk writes it; NAN: unknown). */
SHOAL_API shoal_status shoal_io_state_write(const char *path, const char *format, const float *rows,
                                            size_t count, double t_s, shoal_error *err);

/** Write `count` rows of 6 float64 as a version 1.0 .npy file ('<f8', C order, shape
 *  (count, 6)), bit for bit, through the atomic writer (as shoal_io_npy_write). */
SHOAL_API shoal_status shoal_io_npy_write_f64(const char *path, const double *rows, size_t count,
                                              shoal_error *err);

/** Atomic output. shoal_io_atomic_open opens `path` for writing ("wb") in one of three ways,
 *  by what is there (symbolic links followed to their final target):
 *  - nothing, or a regular file: a temporary file in the target's directory, which
 *    shoal_io_atomic_commit flushes, fsyncs, closes and renames onto the target (a reader
 *    sees the old file or the new one; a symlink stays a link and its target is replaced).
 *    A new file gets mode 0666 less the umask, as fopen would give it; an existing one keeps
 *    its mode (and owner, where the process may set it). An existing file the process may
 *    not write (access(2) W_OK, as fopen would find) is refused.
 *  - a device, FIFO or socket: opened in place (a FIFO waits for its reader) and written
 *    directly; commit flushes and closes. On failure what was written stays written.
 *  - a directory: refused.
 *  shoal_io_atomic_abort closes and removes the temporary. The temporary name
 *  (".NAME.tmp.XXXXXX", from mkstemp) is in `tmp_path` (empty when writing in place) and is
 *  registered until commit or abort, so that shoal_io_atomic_remove_temps (for a signal
 *  handler) can remove it. Every failure is SHOAL_ERR_IO naming `path` and the system's
 *  reason, and leaves no temporary behind. abort is safe after a failed open, after commit
 *  (either outcome) and twice. */
typedef struct shoal_atomic_file {
    void *file; /* FILE * */
    char tmp_path[4096];
    char path[4096];   /**< as given, for messages */
    char target[4096]; /**< where the data lands: `path` with symlinks resolved */
    int slot;          /**< registration of tmp_path for signal handlers (-1: none) */
} shoal_atomic_file;

SHOAL_API shoal_status shoal_io_atomic_open(shoal_atomic_file *af, const char *path,
                                            shoal_error *err);
SHOAL_API shoal_status shoal_io_atomic_commit(shoal_atomic_file *af, shoal_error *err);
SHOAL_API void shoal_io_atomic_abort(shoal_atomic_file *af);

/** Check, without writing anything, that shoal_io_atomic_open(path) would succeed: the same
 *  refusals (directory, missing directory, not writable) with the same messages. For a new or
 *  regular file a temporary file is created in the target's directory and removed again; a
 *  device or FIFO is only checked with access(2). Lets a command refuse a bad output before
 *  it does any work or writes any other output. */
SHOAL_API shoal_status shoal_io_atomic_check(const char *path, shoal_error *err);

/** Remove every temporary file of an atomic output still open in this process (in any
 *  thread). Async-signal-safe (unlink(2) only): for a SIGINT/SIGTERM handler that then dies
 *  by the signal, so that an interrupted write leaves no ".NAME.tmp.XXXXXX" behind. */
SHOAL_API void shoal_io_atomic_remove_temps(void);

/** A scene file (INI, parsed with inih):
 *
 *     [scene]            model = steer|average|heading|classic|fov, count = N, seed = S,
 *                        dt = seconds, t0 = seconds
 *     [params]           any parameter of the model by name (shoal_params_list), vectors as
 *                        x,y,z
 *     [sphere]           an obstacle sphere: center = x,y,z, radius = r (repeatable)
 *     [mesh NAME]        an obstacle mesh for the field of seed 004: file = path.obj
 *                        (relative to the scene file's directory), position = x,y,z,
 *                        rotation = rx,ry,rz (degrees), scale = s or sx,sy,sz (repeatable)
 *     [predators]        count, speed, turn, chase = nearest|centre, flee_radius,
 *                        flee_weight, start = x,y,z, spread (the predator_* parameters)
 *     [camera]           eye = x,y,z, target = x,y,z, fov_deg = F, fish_length = L,
 *                        follow = on|off (shoal run: the camera follows the school)
 *
 *  Unknown sections, keys, models and parameters, and out-of-range values are
 *  SHOAL_ERR_INPUT naming the file, the section and the key. Comment (; or #) and blank
 *  lines may be of any length, as may section names (compared whole); an indented line
 *  (which INI parsers read as a continuation of the value above) and a key = value line of
 *  200 bytes or more are SHOAL_ERR_INPUT naming the line. Every [sphere] needs a radius and
 *  every [mesh] a file. */
/** An obstacle mesh of a scene: its OBJ file (already joined to the scene's directory) and
 *  where it sits. Loaded by shoal_scene_add_obstacles. `path` holds any path the system can
 *  open: SHOAL_PATH_MAX is Linux's PATH_MAX, the longest path open(2) takes (a longer one
 *  fails with ENAMETOOLONG), so a longer joined path is refused as the system would refuse
 *  it. `name` (the NAME of [mesh NAME]) is for messages only and may be cut. */
#define SHOAL_SCENE_MAX_MESHES SHOAL_MAX_OBSTACLES
#define SHOAL_PATH_MAX 4096
typedef struct shoal_scene_mesh {
    char name[64];
    char path[SHOAL_PATH_MAX];
    shoal_transform transform;
} shoal_scene_mesh;

typedef struct shoal_scene {
    shoal_sim_desc desc; /**< model, params, boid_count, seed, dt_s, t0_s */
    int mesh_count;
    shoal_scene_mesh meshes[SHOAL_SCENE_MAX_MESHES];
    int has_model, has_count, has_seed, has_dt, has_t0;
    int has_eye, has_target, has_fov, has_fish_length;
    float eye[3], target[3], fov_deg, fish_length;
    char name[256]; /**< the file (or name) it was parsed from, for messages */
    int follow;     /**< [camera] follow = on (0 when off or not given) */
} shoal_scene;

/** Load a scene file. `scene` starts from the defaults of the model it names (steer if
 *  none). A file that cannot be opened is SHOAL_ERR_IO (as every other input file); what is
 *  wrong inside it SHOAL_ERR_INPUT. */
SHOAL_API shoal_status shoal_scene_load(const char *path, shoal_scene *scene, shoal_error *err);
/** Parse scene text (NUL-terminated); `name` is used in messages. For fuzzing and tests. */
SHOAL_API shoal_status shoal_scene_parse(const char *text, const char *name, shoal_scene *scene,
                                         shoal_error *err);

/** Give a scene another boid count, keeping its density: the scene's own count
 *  (scene->desc.boid_count on entry: the file's `count`, or the model's default count when
 *  the file gives none) is the reference, and with s = cbrt(count / reference) the walls
 *  and the start region (shoal_params_scale_geometry) and the camera's eye and target are
 *  scaled by s about the origin, so that N boids fill the scene as its own count did
 *  (`shoal init`, `shoal run` and sweeps all go through here). Fish length, radii, speeds,
 *  obstacles and predators keep their values: a bigger school in a bigger tank, same fish,
 *  same rocks. With keep_geometry, or count equal to the reference, only the count changes
 *  (bit for bit the scene as loaded). Apply explicit parameter values (--set) after this
 *  call so that they win over the scaling. count >= 1. Returns s (1 when nothing was
 *  scaled). Thread-safe (touches only *scene). */
SHOAL_API double shoal_scene_set_count(shoal_scene *scene, size_t count, int keep_geometry);

/** Load the scene's obstacle meshes (OBJ; vertex normals from `vn`, or computed from the
 *  faces when the file has none) and add them to `sim` (shoal_sim_add_obstacle). Errors name
 *  the scene, the [mesh] section and the file: SHOAL_ERR_IO when it cannot be read,
 *  SHOAL_ERR_INPUT for a bad OBJ or a field too large. */
SHOAL_API shoal_status shoal_scene_add_obstacles(const shoal_scene *scene, shoal_sim *sim,
                                                 shoal_error *err);
/** The scene's obstacle meshes as an obstacle field of their own (shoal/sim.h,
 *  shoal_obstacles: built with the scene's field_cell and field_margin), loaded as
 *  shoal_scene_add_obstacles loads them, to lend to any simulation, CPU or GPU. An empty
 *  field when the scene has no [mesh]. `*out` is the caller's (shoal_obstacles_destroy);
 *  NULL on failure. */
SHOAL_API shoal_status shoal_scene_make_obstacles(const shoal_scene *scene, shoal_obstacles **out,
                                                  shoal_error *err);

/** Raw GPU buffers as Unity's compute shaders lay them out (BoidData of seed 003,
 * UnityGraphicsProgramming's Boids): `struct { float3 velocity; float3 position; }`, 24 bytes per
 * boid, little-endian float32, no header: velocity x y z then position x y z. A Unity user can dump
 * a ComputeBuffer (GetData into a byte array, File.WriteAllBytes) and compare it with a shoal
 * state. Rows in and out are shoal's (px py pz vx vy vz).
 *
 *  shoal_io_unity_read: a size that is 0 or not a multiple of 24 is SHOAL_ERR_INPUT naming
 *  the file; SHOAL_ERR_IO when it cannot be read; rows are malloc'ed (caller frees).
 *  shoal_io_unity_parse: the same from memory (`name` in messages).
 *  shoal_io_unity_write: through shoal_io_atomic_open/commit (no partial file on failure);
 *  bit for bit (NaN payloads too). count == 0 is SHOAL_ERR_INPUT. Thread-safe. */
SHOAL_API shoal_status shoal_io_unity_read(const char *path, float **rows_out, size_t *count_out,
                                           shoal_error *err);
SHOAL_API shoal_status shoal_io_unity_parse(const void *data, size_t size, const char *name,
                                            float **rows_out, size_t *count_out, shoal_error *err);
SHOAL_API shoal_status shoal_io_unity_write(const char *path, const float *rows, size_t count,
                                            shoal_error *err);

/** Checkpoint files: everything a step depends on but the obstacle meshes (those come from
 *  the scene file again): the boids, the model, every parameter, dt, t0, the seed, the steps
 *  done and shoal_sim_checkpoint (predators, pinned targets). Binary, little-endian:
 *  "SHOALCKP", u32 version (1), u32 parameter floats (sizeof(shoal_params) / 4), u32 model,
 *  i32 predator count, u64 boid count, u64 seed, u64 steps done, f64 dt_s, f64 t0_s, then the
 *  shoal_params floats, predator positions and velocities (64 x 3 float32 each), pinned flags
 *  (256 bytes), pinned positions (256 x 3 float32) and the N x 6 float32 rows (as in .npy).
 *  A checkpoint is tied to the shoal_params layout of the version that wrote it.
 *
 *  shoal_io_checkpoint_write: atomic (shoal_io_atomic_open/commit). shoal_io_checkpoint_read:
 *  fills `desc` (model, params, boid_count, dt_s, t0_s, seed; the rest defaults), `*rows_out`
 *  (malloc'ed N x 6, caller frees) and `ck`. A short, long or malformed file, values out of
 *  range or not finite: SHOAL_ERR_INPUT naming the file; unreadable: SHOAL_ERR_IO. */
SHOAL_API shoal_status shoal_io_checkpoint_write(const char *path, const shoal_sim *sim,
                                                 shoal_error *err);
SHOAL_API shoal_status shoal_io_checkpoint_read(const char *path, shoal_sim_desc *desc,
                                                float **rows_out, shoal_sim_checkpoint *ck,
                                                shoal_error *err);

/** VTK XML PolyData (.vtp, ParaView): `count` boids of (N, 6) rows as points (float32 xyz,
 *  row order), one vertex cell per point (Verts, so ParaView shows them), point data
 *  "velocity" (float32 x 3) and "speed" (float32 sqrt((vx*vx + vy*vy) + vz*vz)). The arrays
 *  are raw binary appended data (little-endian, UInt64 size headers): exact, compact and
 *  fast, as VTK's own writer does by default. `time` (NaN: none) is written as the field
 *  "TimeValue". Atomic; count == 0 is SHOAL_ERR_INPUT. */
SHOAL_API shoal_status shoal_io_vtp_write(const char *path, const float *rows, size_t count,
                                          double time, shoal_error *err);

/* ---------------------------------------------------------------------------------------
 * Meshes (src/io/obj.c)
 * ------------------------------------------------------------------------------------- */

/** A triangle mesh: `vertex_count` positions (xyz floats, model units) and `triangle_count`
 *  triangles (3 vertex indices each, 0-based, counter-clockwise seen from the front). Plain
 *  data: io's loaders fill one (release it with shoal_mesh_free), and a caller may point one
 *  at arrays of its own (then it frees them itself). Consumers borrow it: the renderer
 *  (shoal_render_desc.mesh) and the obstacle field copy what they need when they take it. */
typedef struct shoal_mesh {
    size_t vertex_count;
    size_t triangle_count;
    float *positions;  /**< 3 * vertex_count floats */
    uint32_t *indices; /**< 3 * triangle_count indices, each < vertex_count */
    /** Unit vertex normals, 3 * vertex_count floats, or NULL when the file has no `vn`: the
     *  normal of position i is the normalised sum of the `vn` of every face corner that
     *  names i (one smooth normal per position; `vn` are normalised when read). Used by
     *  obstacle fields, not the renderer. */
    float *normals;
} shoal_mesh;

/** Read a Wavefront OBJ file. Understands `v x y z [w]` (w ignored), `f` with the forms
 *  `a`, `a/b`, `a//c`, `a/b/c`, 1-based and negative (relative) indices, polygons of more
 *  than 3 vertices (assumed convex; fanned from their first vertex), `vn x y z` normals
 *  (see shoal_mesh.normals; a position that no corner gives a normal, in a file that has
 *  some, gets the one computed from its faces; a normal index out of range is an error);
 *  skips `vt`, `vp`,
 *  `o`, `g`, `s`, `usemtl`, `mtllib`, comments and blank lines. Rejects with SHOAL_ERR_INPUT,
 *  naming the file, line and problem: an unknown statement, a non-numeric, NaN or infinite
 *  coordinate, an index of 0 or out of range, a face of fewer than 3 vertices, a triangle of
 *  zero area, a file with no faces. SHOAL_ERR_IO when the file cannot be read. On failure
 *  `*mesh` is left empty (all zero). Thread-safe. */
SHOAL_API shoal_status shoal_mesh_load(const char *path, shoal_mesh *mesh, shoal_error *err);

/** Parse an OBJ image held in memory (`size` bytes, need not be NUL-terminated), as
 *  shoal_mesh_load does with a file's bytes; `name` is used in messages. For fuzzing. */
SHOAL_API shoal_status shoal_mesh_parse(const void *data, size_t size, const char *name,
                                        shoal_mesh *mesh, shoal_error *err);

/** Where shoal's own files (the fish meshes, the model scenes "scenes/MODEL.ini") are:
 *  writes `dir/name` to `out` (`size` bytes) for the first directory that has the file, in
 *  this order: $SHOAL_ASSETS, ./assets, the executable's ../share/shoal, ../shoal (where pip
 *  puts a wheel's data), ../assets, ../../assets, ../../../assets, the installed
 *  datadir/shoal, the source tree's assets/
 *  (both compiled in). Returns 1 if found, 0 if not (then `out` holds `name`). Thread-safe. */
SHOAL_API int shoal_io_asset_path(const char *name, char *out, size_t size);

/** shoal_mesh_load of the asset `name` found by shoal_io_asset_path ("fish.obj": the fish
 *  the renderer draws by default, "fish_lod1.obj": its reduced form for LOD). SHOAL_ERR_IO
 *  naming the places looked in when it is nowhere; otherwise as shoal_mesh_load. */
SHOAL_API shoal_status shoal_mesh_load_asset(const char *name, shoal_mesh *mesh, shoal_error *err);

/** Free what a load or parse allocated and zero the struct. NULL or an empty mesh is fine. */
SHOAL_API void shoal_mesh_free(shoal_mesh *mesh);

/** Give a mesh without `vn` vertex normals: each position's normal is the normalised sum of
 *  the (area-weighted) normals of the triangles that use it, in triangle order; an unused
 *  position gets 0. Does nothing when the mesh has normals. SHOAL_ERR_NOMEM on failure. */
SHOAL_API shoal_status shoal_mesh_compute_normals(shoal_mesh *mesh, shoal_error *err);

/* ---------------------------------------------------------------------------------------
 * PNG (src/io/png.c)
 * ------------------------------------------------------------------------------------- */

/** Write `width` x `height` pixels of ARGB8888 (0xAARRGGBB, row 0 at the top, `stride_px`
 *  pixels between rows) as an 8-bit RGB PNG (alpha is dropped). Written through
 *  shoal_io_atomic_open/commit: on any failure no file at `path` is created or changed.
 *  SHOAL_ERR_IO names the file. Thread-safe. */
SHOAL_API shoal_status shoal_io_png_write(const char *path, const uint32_t *argb, int width,
                                          int height, int stride_px, shoal_error *err);
/** shoal_io_png_write for frame sequences (shoal run --out, shoal render --in DIR --out):
 *  the same pixels, encoded without libpng's per-row filter search (filter None, zlib level
 *  3), which on shoal's frames (a vertical gradient, fish) is 2.5x faster and also smaller.
 *  The file's bytes differ from shoal_io_png_write's; everything else is the same. */
SHOAL_API shoal_status shoal_io_png_write_fast(const char *path, const uint32_t *argb, int width,
                                               int height, int stride_px, shoal_error *err);

#ifdef __cplusplus
}
#endif

#endif
