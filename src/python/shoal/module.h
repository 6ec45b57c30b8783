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
/* A Python number or string as the text shoal_params_set parses. 0, or -1 with an exception. */
int value_text(PyObject *v, char *buf, size_t size);
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
/* A path (str, bytes, os.PathLike) as a new bytes object. 0, or -1 with an exception. */
int path_arg(PyObject *obj, PyObject **bytes);

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

/* simulation.c */
int sim_claim(SimObject *s);
const shoal_sim_desc *sim_desc(const SimObject *s);
/* params.c */
PyObject *params_update(ParamsObject *p, PyObject *args, PyObject *kw);

/* ---- the module's functions, one table per file (module.c adds them) -------------------- */

extern PyMethodDef files_functions[], params_functions[], renderer_functions[], sweep_functions[],
    verify_functions[];

#endif
