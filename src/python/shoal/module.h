/* SPDX-License-Identifier: MIT */
/* shoal._shoal's private header: what the extension's files share (CPython's Modules/_sqlite
 * layout). module.c makes the module (its exceptions, types and functions); util.c converts
 * between Python and the library (errors, states, parameters, descs, statistics);
 * simulation.c, params.c and renderer.c are the three types; files.c, sweep.c and verify.c
 * the module functions of their name. Every file is a client of the public C API only
 * (shoal/shoal.h): every rule, file format and statistic is the library's. Not installed. */
#ifndef SHOAL_PY_MODULE_H
#define SHOAL_PY_MODULE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
/* one NumPy C API table for the whole extension: module.c imports it (import_array), the
 * other files use it */
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL shoal_py_ARRAY_API
#ifndef SHOAL_PY_IMPORT_ARRAY
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include "shoal/shoal.h"

/* ---- errors (util.c; made by module.c) ----------------------------------------------- */

extern PyObject *Error, *InputError, *FileError, *NoMemoryError, *NonFiniteError, *UnsupportedError;

/* Raise the exception for a library status with its message; returns NULL. */
PyObject *raise_status(const shoal_error *e);

/* ---- arguments (util.c) ---------------------------------------------------------------- */

/* A state from any array-like: shape (N, 6) (N >= 1 unless allow_empty), float32 or
 * float64 (rounded to float32 as a '<f8' .npy file is), finite. Returns a new C-contiguous
 * float32 array, or NULL with TypeError/ValueError (or the library's InputError for a NaN,
 * naming row and column). */
PyArrayObject *state_arg(PyObject *obj, const char *what, int allow_empty);
/* A new (n, 6) float32 array. */
PyArrayObject *new_rows(size_t n);
/* A str's UTF-8 for the library, a NUL inside spelled \x00 (the library then refuses it
 * in its words); valid while *keep lives. NULL with an exception. */
const char *c_text(PyObject *str, PyObject **keep);
/* One parameter by name (key) from a Python value: text (str, parsed as --set's), a number
 * (by value), a 3-sequence for a vector. 0, or -1 with an exception. */
int param_set_obj(shoal_model model, shoal_params *p, PyObject *key, PyObject *value);
/* params={name: value}: each onto p, in the dict's order, by name. 0, or -1 with an
 * exception. */
int apply_params(shoal_model model, shoal_params *p, PyObject *params);
/* model=: a name (None keeps *m). 0, or -1 with an exception. */
int model_arg(PyObject *obj, shoal_model *m);
/* (x, y, z) of finite numbers. */
int vec3_arg(PyObject *obj, const char *what, float out[3]);
/* The desc that model=, scene=, count=, keep_geometry=, params= describe, as the command
 * line's init, run and sweep build it. */
int desc_args(PyObject *model_obj, PyObject *scene_obj, Py_ssize_t count, int keep_geometry,
              PyObject *params, shoal_sim_desc *d, shoal_scene *scene);
/* A seed: an integer in [0, 2^63 - 1] (sweep.c). 0, or -1 with an exception. */
int seed_arg(PyObject *obj, const char *what, unsigned long long *out);
/* A path (str, bytes, os.PathLike) as a new bytes object. 0, or -1 with an exception. */
int path_arg(PyObject *obj, PyObject **bytes);

/* ---- assets (util.c) -------------------------------------------------------------------- */

/* Where shoal's asset `name` ("fish.obj", "scenes/school.ini") is: the package's assets, then
 * the library's search (shoal_io_asset_path). 1 if found (path in out). */
int asset_find(const char *name, char *out, size_t size);
/* shoal_mesh_load of the asset `name`, found as asset_find finds it. */
shoal_status asset_mesh(const char *name, shoal_mesh *mesh, shoal_error *e);

/* ---- statistics (util.c) ----------------------------------------------------------------- */

PyObject *stats_dict(const shoal_stats *s);
int stats_desc_args(PyObject *radius, PyObject *model_obj, int threads, shoal_stats_desc *sd);
/* shoal_stats_compute with the GIL released */
shoal_status stats_of(const float *rows, size_t n, const shoal_stats_desc *sd, shoal_stats *out,
                      shoal_error *e);

/* ---- the types ------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD shoal_sim *sim;
    shoal_gpu_sim *gpu;
    shoal_sim_desc desc; /* what the sim was created with (the GPU sim's only record) */
    int busy;            /* a step runs (GIL released): no other call may touch the sim */
} SimObject;

typedef struct {
    PyObject_HEAD SimObject *owner;
} ParamsObject;

extern PyTypeObject SimType, ParamsType, RendererType;

/* simulation.c: sim_check refuses (RuntimeError) a closed sim or one another call uses;
 * sim_claim checks and marks it used by this call (under the GIL, so nothing gets in between),
 * sim_release ends that. Every method claims before it converts its arguments: a conversion
 * may release the GIL (NumPy's copies) or run Python code (__float__, __array__, __index__). */
int sim_check(const SimObject *s);
int sim_claim(SimObject *s);
void sim_release(SimObject *s);
const shoal_sim_desc *sim_desc(const SimObject *s);
/* params.c */
PyObject *params_update(ParamsObject *p, PyObject *args, PyObject *kw);

/* ---- Ctrl-C (cancel.c) -------------------------------------------------------------------- */

/* At import, on the main thread. */
void cancel_init(void);
/* Before a long call with the GIL held: on the main thread, a flag that SIGINT raises (and
 * Python's own handler still runs); NULL elsewhere or when another call has it. */
const volatile int *cancel_begin(void);
/* After the call, the GIL held again: Python's handler back; 0 when no SIGINT came, -1 with
 * Python's exception set (KeyboardInterrupt) when one did, 1 when one did and Python's
 * handler raised nothing. */
int cancel_end(const volatile int *flag);

/* ---- the module's functions, one table per file (module.c adds them) -------------------- */

extern PyMethodDef files_functions[], params_functions[], renderer_functions[], sweep_functions[],
    util_functions[], verify_functions[];

#endif
