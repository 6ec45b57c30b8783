/* SPDX-License-Identifier: MIT */
/* shoal._shoal: the Python extension module (the package `shoal` re-exports it). A client of
 * the public C API only (shoal/shoal.h): every rule, file format and statistic is the
 * library's, so the module gives the command line's bits. NumPy arrays in and out, always
 * float32 (N, 6) rows in row order (row i = boid i). Library errors become exceptions that
 * carry the library's one-line message. Steps, frames, statistics and sweeps run with the
 * GIL released; an object in use by one thread refuses a second (RuntimeError). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include "shoal/shoal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors ---------------------------------------------------------------------------- */

static PyObject *Error, *InputError, *FileError, *NoMemoryError, *NonFiniteError, *UnsupportedError;

/* Raise the exception for a library status with its message; returns NULL. */
static PyObject *raise_status(const shoal_error *e)
{
    PyObject *type = Error;
    switch (e->status) {
    case SHOAL_ERR_INPUT:
        type = InputError;
        break;
    case SHOAL_ERR_IO:
        type = FileError;
        break;
    case SHOAL_ERR_NOMEM:
        type = NoMemoryError;
        break;
    case SHOAL_ERR_NONFINITE:
        type = NonFiniteError;
        break;
    case SHOAL_ERR_UNSUPPORTED:
        type = UnsupportedError;
        break;
    default:
        break;
    }
    PyErr_SetString(type, e->message);
    return NULL;
}

/* ---- arguments ------------------------------------------------------------------------- */

/* A state from any array-like: shape (N, 6) (N >= 1 unless allow_empty), float32 or
 * float64 (rounded to float32 as a '<f8' .npy file is), finite. Returns a new C-contiguous
 * float32 array, or NULL with TypeError/ValueError (or the library's InputError for a NaN,
 * naming row and column). */
static PyArrayObject *state_arg(PyObject *obj, const char *what, int allow_empty)
{
    PyArrayObject *in = (PyArrayObject *)PyArray_FROMANY(obj, NPY_NOTYPE, 0, 0, 0);
    if (!in)
        return NULL;
    int t = PyArray_TYPE(in);
    if (t != NPY_FLOAT32 && t != NPY_FLOAT64) {
        PyObject *d = PyObject_Str((PyObject *)PyArray_DESCR(in));
        PyErr_Format(PyExc_TypeError,
                     "%s: dtype %s (expected float32, or float64 rounded to float32)", what,
                     d ? PyUnicode_AsUTF8(d) : "?");
        Py_XDECREF(d);
        Py_DECREF(in);
        return NULL;
    }
    if (PyArray_NDIM(in) != 2 || PyArray_DIM(in, 1) != SHOAL_STATE_COLUMNS ||
        (!allow_empty && PyArray_DIM(in, 0) < 1)) {
        PyObject *shape = PyObject_GetAttrString((PyObject *)in, "shape");
        PyObject *s = shape ? PyObject_Str(shape) : NULL;
        Py_XDECREF(shape);
        PyErr_Format(PyExc_ValueError, "%s: shape %s (expected (N, 6): px py pz vx vy vz, N >= 1)",
                     what, s ? PyUnicode_AsUTF8(s) : "?");
        Py_XDECREF(s);
        Py_DECREF(in);
        return NULL;
    }
    PyArrayObject *out = (PyArrayObject *)PyArray_FROMANY(
        (PyObject *)in, NPY_FLOAT32, 2, 2,
        NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | NPY_ARRAY_ENSURECOPY | NPY_ARRAY_FORCECAST);
    Py_DECREF(in);
    if (!out)
        return NULL;
    shoal_error e;
    if (shoal_state_check_finite((const float *)PyArray_DATA(out), (size_t)PyArray_DIM(out, 0),
                                 what, &e)) {
        Py_DECREF(out);
        return (PyArrayObject *)raise_status(&e);
    }
    return out;
}

static PyArrayObject *new_rows(size_t n)
{
    npy_intp dims[2] = {(npy_intp)n, SHOAL_STATE_COLUMNS};
    return (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_FLOAT32);
}

/* A Python number or string as the text shoal_params_set parses: floats by repr (the
 * shortest text that gives the double back, so 2.5 in Python is "2.5" as on the command
 * line), sequences of three as "x,y,z". Writes into buf; 0, or -1 with an exception. */
static int value_text(PyObject *v, char *buf, size_t size)
{
    if (PyUnicode_Check(v)) {
        const char *s = PyUnicode_AsUTF8(v);
        if (!s)
            return -1;
        snprintf(buf, size, "%s", s);
        return 0;
    }
    if (PyNumber_Check(v) && !PySequence_Check(v)) {
        double d = PyFloat_AsDouble(v);
        if (d == -1.0 && PyErr_Occurred())
            return -1;
        char *r = PyOS_double_to_string(d, 'r', 0, 0, NULL);
        if (!r)
            return -1;
        snprintf(buf, size, "%s", r);
        PyMem_Free(r);
        return 0;
    }
    if (PySequence_Check(v) && PySequence_Size(v) == 3) {
        size_t len = 0;
        for (Py_ssize_t i = 0; i < 3; i++) {
            PyObject *x = PySequence_GetItem(v, i);
            if (!x)
                return -1;
            char one[64];
            int rc = value_text(x, one, sizeof one);
            Py_DECREF(x);
            if (rc)
                return -1;
            len +=
                (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%s", i ? "," : "", one);
        }
        return 0;
    }
    PyErr_SetString(PyExc_TypeError, "a parameter value is a number, a string or (x, y, z)");
    return -1;
}

/* params={name: value}: each onto p, in the dict's order, by name (shoal_params_set). */
static int apply_params(shoal_model model, shoal_params *p, PyObject *params)
{
    if (!params || params == Py_None)
        return 0;
    if (!PyDict_Check(params)) {
        PyErr_SetString(PyExc_TypeError, "params: expected a dict {name: value}");
        return -1;
    }
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(params, &pos, &k, &v)) {
        const char *name = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;
        if (!name) {
            PyErr_SetString(PyExc_TypeError, "params: names are strings");
            return -1;
        }
        char text[256];
        if (value_text(v, text, sizeof text))
            return -1;
        shoal_error e;
        if (shoal_params_set(model, p, name, text, &e)) {
            raise_status(&e);
            return -1;
        }
    }
    return 0;
}

static int model_arg(PyObject *obj, shoal_model *m)
{
    if (!obj || obj == Py_None)
        return 0;
    const char *name = PyUnicode_Check(obj) ? PyUnicode_AsUTF8(obj) : NULL;
    if (!name) {
        PyErr_SetString(PyExc_TypeError, "model: a name such as \"steer\"");
        return -1;
    }
    shoal_error e;
    if (shoal_model_parse(name, m, &e)) {
        raise_status(&e);
        return -1;
    }
    return 0;
}

static int vec3_arg(PyObject *obj, const char *what, float out[3])
{
    PyObject *seq = PySequence_Fast(obj, what);
    if (!seq)
        return -1;
    if (PySequence_Fast_GET_SIZE(seq) != 3) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "%s: expected (x, y, z)", what);
        return -1;
    }
    for (int i = 0; i < 3; i++) {
        double d = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq, i));
        if (d == -1.0 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return -1;
        }
        if (!isfinite(d)) {
            Py_DECREF(seq);
            PyErr_Format(PyExc_ValueError, "%s: values must be finite", what);
            return -1;
        }
        out[i] = (float)d;
    }
    Py_DECREF(seq);
    return 0;
}

/* The desc that model=, scene=, count=, keep_geometry=, params= describe, as the command
 * line's init, run and sweep build it: the scene file (or the model's defaults) given the
 * count with its density kept (shoal_scene_set_count), then the parameters by name. */
static int desc_args(PyObject *model_obj, PyObject *scene_obj, Py_ssize_t count, int keep_geometry,
                     PyObject *params, shoal_sim_desc *d, shoal_scene *scene)
{
    shoal_error e;
    shoal_model m = SHOAL_MODEL_STEER;
    if (model_arg(model_obj, &m))
        return -1;
    memset(scene, 0, sizeof *scene);
    if (scene_obj && scene_obj != Py_None) {
        PyObject *bytes = NULL;
        if (!PyUnicode_FSConverter(scene_obj, &bytes))
            return -1;
        shoal_status st = shoal_scene_load(PyBytes_AS_STRING(bytes), scene, &e);
        Py_DECREF(bytes);
        if (st) {
            raise_status(&e);
            return -1;
        }
        if (model_obj && model_obj != Py_None && m != scene->desc.model) {
            PyErr_Format(InputError, "model %s contradicts the scene file (model %s)",
                         shoal_model_name(m), shoal_model_name(scene->desc.model));
            return -1;
        }
    } else {
        scene->desc = shoal_sim_desc_for(m);
    }
    if (count < 0) {
        PyErr_SetString(PyExc_ValueError, "count: expected N >= 1");
        return -1;
    }
    if (count > 0)
        shoal_scene_set_count(scene, (size_t)count, keep_geometry);
    *d = scene->desc;
    if (apply_params(d->model, &d->params, params))
        return -1;
    if (shoal_params_validate(d->model, &d->params, &e)) {
        raise_status(&e);
        return -1;
    }
    return 0;
}

static int path_arg(PyObject *obj, PyObject **bytes)
{
    return PyUnicode_FSConverter(obj, bytes) ? 0 : -1;
}

/* ---- statistics dicts ------------------------------------------------------------------ */

static PyObject *triple(const double v[3]) { return Py_BuildValue("(ddd)", v[0], v[1], v[2]); }

/* The keys of `shoal compare --json`'s statistics, and the rest of shoal_stats. */
static PyObject *stats_dict(const shoal_stats *s)
{
    PyObject *c = triple(s->centroid), *x = triple(s->extent), *lo = triple(s->bbox_min),
             *hi = triple(s->bbox_max);
    PyObject *d = Py_BuildValue(
        "{s:n,s:n,s:d,s:d,s:d,s:d,s:d,s:d,s:K,s:d,s:O,s:O,s:O,s:O,s:d}", "count",
        (Py_ssize_t)s->count, "nonfinite", (Py_ssize_t)s->nonfinite, "radius", s->radius,
        "polarisation", s->polarisation, "milling", s->milling, "mean_speed", s->mean_speed,
        "mean_nn_distance", s->mean_nn_distance, "mean_neighbors", s->mean_neighbors, "group_count",
        (unsigned long long)s->group_count, "largest_group_fraction", s->largest_group_fraction,
        "centroid", c, "extent", x, "bbox_min", lo, "bbox_max", hi, "radius_of_gyration",
        s->radius_of_gyration);
    Py_XDECREF(c);
    Py_XDECREF(x);
    Py_XDECREF(lo);
    Py_XDECREF(hi);
    return d;
}

/* radius: None gives the model's interaction radius (steer's without a model), as
 * `shoal compare` does. */
static int stats_desc_args(PyObject *radius, PyObject *model_obj, int threads, shoal_stats_desc *sd)
{
    *sd = shoal_stats_desc_default();
    sd->thread_count = threads;
    if (radius && radius != Py_None) {
        sd->radius = PyFloat_AsDouble(radius);
        return sd->radius == -1.0 && PyErr_Occurred() ? -1 : 0;
    }
    shoal_model m = SHOAL_MODEL_STEER;
    if (model_arg(model_obj, &m))
        return -1;
    shoal_params p;
    shoal_params_default(m, &p);
    sd->radius = shoal_params_interaction_radius(m, &p);
    return 0;
}

static shoal_status stats_of(const float *rows, size_t n, const shoal_stats_desc *sd,
                             shoal_stats *out, shoal_error *e)
{
    shoal_status st;
    Py_BEGIN_ALLOW_THREADS st = shoal_stats_compute(rows, n, sd, out, e);
    Py_END_ALLOW_THREADS return st;
}

/* ---- the Simulation type --------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD shoal_sim *sim;
    shoal_gpu_sim *gpu;
    shoal_sim_desc desc; /* what the sim was created with (the GPU sim's only record) */
    int busy;            /* a step runs (GIL released): no other call may touch the sim */
} SimObject;

static PyTypeObject SimType;
static PyTypeObject ParamsType;

static int sim_claim(SimObject *s)
{
    if (!s->sim && !s->gpu) {
        PyErr_SetString(PyExc_RuntimeError, "the simulation was closed");
        return -1;
    }
    if (s->busy) {
        PyErr_SetString(PyExc_RuntimeError, "the simulation is busy in another thread");
        return -1;
    }
    return 0;
}

static size_t sim_count(const SimObject *s)
{
    return s->gpu ? shoal_gpu_sim_count(s->gpu) : shoal_sim_count(s->sim);
}

static void sim_dealloc(SimObject *s)
{
    shoal_sim_destroy(s->sim);
    shoal_gpu_sim_destroy(s->gpu);
    Py_TYPE(s)->tp_free((PyObject *)s);
}

/* The obstacle meshes of a scene onto the sim: the CPU sim directly; a GPU sim takes the
 * field the CPU builds (a one-boid CPU sim), so both backends sample the same bits. */
static shoal_status add_obstacles(SimObject *s, const shoal_sim_desc *d, const shoal_scene *scene,
                                  shoal_error *e)
{
    if (!scene || scene->mesh_count == 0)
        return SHOAL_OK;
    if (!s->gpu)
        return shoal_scene_add_obstacles(scene, s->sim, e);
    shoal_sim_desc one = *d;
    one.boid_count = 1;
    shoal_sim *c;
    shoal_status st = shoal_sim_create(&one, &c, e);
    if (st)
        return st;
    if (!(st = shoal_scene_add_obstacles(scene, c, e)))
        st = shoal_gpu_sim_copy_obstacles(s->gpu, c, e);
    shoal_sim_destroy(c);
    return st;
}

/* Create the backend's sim for d and give it `rows` (or draw the state from d.seed). */
static int sim_open(SimObject *s, const shoal_sim_desc *d, const char *backend,
                    const char *gpu_order, const float *rows, const shoal_scene *scene)
{
    shoal_error e;
    shoal_status st;
    s->desc = *d;
    if (strcmp(backend, "cpu") == 0) {
        st = shoal_sim_create(d, &s->sim, &e);
        if (!st)
            st = rows ? shoal_sim_set_rows(s->sim, rows, d->boid_count, &e)
                      : shoal_sim_draw_state(s->sim, &e);
    } else if (strcmp(backend, "cuda") == 0) {
        shoal_gpu_order order;
        st = shoal_gpu_order_parse(gpu_order, &order, &e);
        if (!st)
            st = shoal_gpu_sim_create(d, order, &s->gpu, &e);
        float *drawn = NULL;
        if (!st && !rows) {
            /* the CPU's draw, uploaded: the same start as on the CPU */
            shoal_sim_desc one = *d;
            shoal_sim *c = NULL;
            drawn = malloc(d->boid_count * SHOAL_STATE_COLUMNS * sizeof(float));
            if (!drawn)
                st = shoal_error_set(&e, SHOAL_ERR_NOMEM, "out of memory for %zu boids",
                                     d->boid_count);
            if (!st && !(st = shoal_sim_create(&one, &c, &e)) &&
                !(st = shoal_sim_draw_state(c, &e)))
                st = shoal_sim_get_rows(c, drawn, d->boid_count, &e);
            shoal_sim_destroy(c);
            rows = drawn;
        }
        if (!st)
            st = shoal_gpu_sim_set_rows(s->gpu, rows, d->boid_count, &e);
        free(drawn);
    } else {
        PyErr_Format(PyExc_ValueError, "backend '%s' (expected \"cpu\" or \"cuda\")", backend);
        return -1;
    }
    if (!st)
        st = add_obstacles(s, d, scene, &e);
    if (st) {
        raise_status(&e);
        return -1;
    }
    return 0;
}

static int sim_init(SimObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"model",         "count",     "seed",      "scene", "params",
                             "threads",       "backend",   "dt",        "t0",    "state",
                             "keep_geometry", "gpu_order", "neighbors", "simd",  NULL};
    PyObject *model = Py_None, *scene = Py_None, *params = Py_None, *seed = Py_None, *dt = Py_None,
             *t0 = Py_None, *state = Py_None, *count_obj = Py_None;
    int threads = 0, keep_geometry = 0;
    const char *backend = "cpu", *gpu_order = "stable", *neighbors = "grid", *simd = "auto";
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOOOOisOOOpsss", kwlist, &model, &count_obj, &seed,
                                     &scene, &params, &threads, &backend, &dt, &t0, &state,
                                     &keep_geometry, &gpu_order, &neighbors, &simd))
        return -1;
    if (self->sim || self->gpu) {
        PyErr_SetString(PyExc_RuntimeError, "Simulation.__init__ called twice");
        return -1;
    }
    Py_ssize_t count = 0;
    if (count_obj != Py_None) {
        count = PyNumber_AsSsize_t(count_obj, PyExc_OverflowError);
        if (count == -1 && PyErr_Occurred())
            return -1;
        if (count < 1) {
            PyErr_SetString(PyExc_ValueError, "count: expected N >= 1");
            return -1;
        }
    }
    PyArrayObject *rows = NULL;
    if (state != Py_None) {
        if (count_obj != Py_None) {
            PyErr_SetString(PyExc_ValueError,
                            "give count= or state=, not both (the state's rows are the count)");
            return -1;
        }
        if (!(rows = state_arg(state, "state", 0)))
            return -1;
    }
    shoal_sim_desc d;
    shoal_scene *sc = malloc(sizeof *sc);
    if (!sc) {
        Py_XDECREF(rows);
        PyErr_NoMemory();
        return -1;
    }
    int rc = -1;
    if (desc_args(model, scene, count, keep_geometry, params, &d, sc))
        goto done;
    if (rows)
        d.boid_count = (size_t)PyArray_DIM(rows, 0);
    if (seed != Py_None) {
        unsigned long long v = PyLong_AsUnsignedLongLong(seed);
        if (PyErr_Occurred())
            goto done;
        d.seed = v;
    }
    if (dt != Py_None && (d.dt_s = PyFloat_AsDouble(dt)) == -1.0 && PyErr_Occurred())
        goto done;
    if (t0 != Py_None && (d.t0_s = PyFloat_AsDouble(t0)) == -1.0 && PyErr_Occurred())
        goto done;
    d.thread_count = threads;
    if (strcmp(neighbors, "grid") == 0)
        d.neighbors = SHOAL_NEIGHBORS_GRID;
    else if (strcmp(neighbors, "brute") == 0)
        d.neighbors = SHOAL_NEIGHBORS_BRUTE;
    else {
        PyErr_Format(PyExc_ValueError, "neighbors '%s' (expected \"grid\" or \"brute\")",
                     neighbors);
        goto done;
    }
    shoal_error e;
    if (shoal_isa_parse(simd, &d.isa, &e)) {
        raise_status(&e);
        goto done;
    }
    rc =
        sim_open(self, &d, backend, gpu_order, rows ? (const float *)PyArray_DATA(rows) : NULL, sc);
done:
    free(sc);
    Py_XDECREF(rows);
    return rc;
}

PyDoc_STRVAR(sim_step_doc, "step(n=1)\n--\n\n"
                           "Advance n synchronous steps of dt (n >= 0). The GIL is released while "
                           "the steps run. On a NaN or infinity the state stays the one before "
                           "the failing step and NonFiniteError names the boid and step.");
static PyObject *sim_step(SimObject *s, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"n", NULL};
    long long n = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|L", kwlist, &n))
        return NULL;
    if (sim_claim(s))
        return NULL;
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "step: n must be >= 0");
        return NULL;
    }
    shoal_error e;
    shoal_status st = SHOAL_OK;
    s->busy = 1;
    Py_BEGIN_ALLOW_THREADS for (long long done = 0; !st && done < n;)
    {
        int k = n - done > 1000000 ? 1000000 : (int)(n - done);
        st = s->gpu ? shoal_gpu_sim_step(s->gpu, k, &e) : shoal_sim_step(s->sim, k, &e);
        done += k;
    }
    Py_END_ALLOW_THREADS s->busy = 0;
    if (st)
        return raise_status(&e);
    Py_RETURN_NONE;
}

static PyObject *sim_rows(SimObject *s)
{
    if (sim_claim(s))
        return NULL;
    size_t n = sim_count(s);
    PyArrayObject *a = new_rows(n);
    if (!a)
        return NULL;
    shoal_error e;
    shoal_status st = s->gpu ? shoal_gpu_sim_get_rows(s->gpu, (float *)PyArray_DATA(a), n, &e)
                             : shoal_sim_get_rows(s->sim, (float *)PyArray_DATA(a), n, &e);
    if (st) {
        Py_DECREF(a);
        return raise_status(&e);
    }
    return (PyObject *)a;
}

static PyObject *sim_get_state(SimObject *s, void *c)
{
    (void)c;
    return sim_rows(s);
}

/* columns 0-2 or 3-5 of the state as a new (N, 3) array */
static PyObject *sim_columns(SimObject *s, int first)
{
    PyArrayObject *rows = (PyArrayObject *)sim_rows(s);
    if (!rows)
        return NULL;
    size_t n = (size_t)PyArray_DIM(rows, 0);
    npy_intp dims[2] = {(npy_intp)n, 3};
    PyArrayObject *out = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_FLOAT32);
    if (out) {
        const float *r = PyArray_DATA(rows);
        float *o = PyArray_DATA(out);
        for (size_t i = 0; i < n; i++)
            memcpy(o + 3 * i, r + 6 * i + first, 3 * sizeof(float));
    }
    Py_DECREF(rows);
    return (PyObject *)out;
}

static PyObject *sim_get_positions(SimObject *s, void *c)
{
    (void)c;
    return sim_columns(s, 0);
}

static PyObject *sim_get_velocities(SimObject *s, void *c)
{
    (void)c;
    return sim_columns(s, 3);
}

PyDoc_STRVAR(sim_set_state_doc,
             "set_state(state)\n--\n\n"
             "Replace the state with an (N, 6) array of px py pz vx vy vz rows (N = count; "
             "float32, or float64 rounded to float32; every value finite). Row i is boid i. "
             "The predators restart; the time goes on.");
static PyObject *sim_set_state(SimObject *s, PyObject *arg)
{
    if (sim_claim(s))
        return NULL;
    PyArrayObject *a = state_arg(arg, "state", 0);
    if (!a)
        return NULL;
    shoal_error e;
    size_t n = (size_t)PyArray_DIM(a, 0);
    shoal_status st = s->gpu ? shoal_gpu_sim_set_rows(s->gpu, PyArray_DATA(a), n, &e)
                             : shoal_sim_set_rows(s->sim, PyArray_DATA(a), n, &e);
    Py_DECREF(a);
    if (st)
        return raise_status(&e);
    Py_RETURN_NONE;
}

static const shoal_sim_desc *sim_desc(const SimObject *s);

static PyObject *sim_get_time(SimObject *s, void *c)
{
    (void)c;
    if (!s->sim && !s->gpu)
        return PyFloat_FromDouble(NAN);
    return PyFloat_FromDouble(s->gpu ? shoal_gpu_sim_time(s->gpu) : shoal_sim_time(s->sim));
}

static PyObject *sim_get_count(SimObject *s, void *c)
{
    (void)c;
    if (sim_claim(s))
        return NULL;
    return PyLong_FromSize_t(sim_count(s));
}

static PyObject *sim_get_model(SimObject *s, void *c)
{
    (void)c;
    if (sim_claim(s))
        return NULL;
    return PyUnicode_FromString(shoal_model_name(sim_desc(s)->model));
}

static PyObject *sim_get_seed(SimObject *s, void *c)
{
    (void)c;
    if (sim_claim(s))
        return NULL;
    return PyLong_FromUnsignedLongLong(sim_desc(s)->seed);
}

static PyObject *sim_get_dt(SimObject *s, void *c)
{
    (void)c;
    if (sim_claim(s))
        return NULL;
    return PyFloat_FromDouble(sim_desc(s)->dt_s);
}

static PyObject *sim_get_backend(SimObject *s, void *c)
{
    (void)c;
    return PyUnicode_FromString(s->gpu ? "cuda" : "cpu");
}

static PyObject *sim_get_device(SimObject *s, void *c)
{
    (void)c;
    if (sim_claim(s))
        return NULL;
    if (s->gpu)
        return PyUnicode_FromString(shoal_gpu_sim_device_name(s->gpu));
    return PyUnicode_FromFormat("cpu (%s kernels)", shoal_sim_isa_name(s->sim));
}

PyDoc_STRVAR(sim_stats_doc,
             "stats(radius=None, threads=0)\n--\n\n"
             "The flock statistics of the current state as a dict (polarisation, milling, "
             "mean_speed, mean_nn_distance, mean_neighbors, group_count, "
             "largest_group_fraction, centroid, extent, bbox_min, bbox_max, "
             "radius_of_gyration, count, nonfinite, radius). radius (neighbours and groups) "
             "defaults to the model's interaction radius.");
static PyObject *sim_stats(SimObject *s, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"radius", "threads", NULL};
    PyObject *radius = Py_None;
    int threads = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|Oi", kwlist, &radius, &threads))
        return NULL;
    PyArrayObject *rows = (PyArrayObject *)sim_rows(s);
    if (!rows)
        return NULL;
    shoal_stats_desc sd = shoal_stats_desc_default();
    sd.thread_count = threads;
    const shoal_sim_desc *d = sim_desc(s);
    sd.radius = shoal_params_interaction_radius(d->model, &d->params);
    if (radius != Py_None && (sd.radius = PyFloat_AsDouble(radius)) == -1.0 && PyErr_Occurred()) {
        Py_DECREF(rows);
        return NULL;
    }
    shoal_stats out;
    shoal_error e;
    shoal_status st = stats_of(PyArray_DATA(rows), (size_t)PyArray_DIM(rows, 0), &sd, &out, &e);
    Py_DECREF(rows);
    if (st)
        return raise_status(&e);
    return stats_dict(&out);
}

PyDoc_STRVAR(sim_checkpoint_doc,
             "checkpoint(path)\n--\n\n"
             "Write a checkpoint file (the format of `shoal step --checkpoint`): the boids, the "
             "model, every parameter, dt, t0, the seed, the steps done, predators and pinned "
             "targets. Atomic: never a half-written file. CPU backend only.");
static PyObject *sim_checkpoint(SimObject *s, PyObject *arg)
{
    if (sim_claim(s))
        return NULL;
    if (s->gpu) {
        PyErr_SetString(UnsupportedError, "checkpoint: the cuda backend has none (run on cpu)");
        return NULL;
    }
    PyObject *path;
    if (path_arg(arg, &path))
        return NULL;
    shoal_error e;
    shoal_status st = shoal_io_checkpoint_write(PyBytes_AS_STRING(path), s->sim, &e);
    Py_DECREF(path);
    if (st)
        return raise_status(&e);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(sim_resume_doc,
             "resume(path, threads=0, scene=None)\n--\n\n"
             "A Simulation from a checkpoint file (Simulation.checkpoint, or `shoal step "
             "--checkpoint`): the steps after it give the bits of the uninterrupted run. A "
             "checkpoint holds no obstacle meshes: give the scene file again for those.");
static PyObject *sim_resume(PyObject *cls, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"path", "threads", "scene", NULL};
    PyObject *path_obj, *scene_obj = Py_None, *path;
    int threads = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|iO", kwlist, &path_obj, &threads, &scene_obj))
        return NULL;
    if (path_arg(path_obj, &path))
        return NULL;
    shoal_sim_desc d;
    float *rows = NULL;
    shoal_sim_checkpoint ck;
    shoal_error e;
    shoal_status st = shoal_io_checkpoint_read(PyBytes_AS_STRING(path), &d, &rows, &ck, &e);
    Py_DECREF(path);
    if (st)
        return raise_status(&e);
    d.thread_count = threads;
    shoal_scene *sc = calloc(1, sizeof *sc);
    /* a new object of cls without __init__ (which would draw a default school) */
    SimObject *s = (SimObject *)((PyTypeObject *)cls)->tp_alloc((PyTypeObject *)cls, 0);
    if (!sc || !s) {
        free(rows);
        free(sc);
        Py_XDECREF(s);
        return sc ? NULL : PyErr_NoMemory();
    }
    if (scene_obj != Py_None) {
        PyObject *b;
        if (path_arg(scene_obj, &b))
            goto fail;
        st = shoal_scene_load(PyBytes_AS_STRING(b), sc, &e);
        Py_DECREF(b);
        if (st) {
            raise_status(&e);
            goto fail;
        }
    }
    if (sim_open(s, &d, "cpu", "stable", rows, sc))
        goto fail;
    if (shoal_sim_set_checkpoint(s->sim, &ck, &e)) {
        raise_status(&e);
        goto fail;
    }
    free(rows);
    free(sc);
    return (PyObject *)s;
fail:
    free(rows);
    free(sc);
    Py_DECREF(s);
    return NULL;
}

PyDoc_STRVAR(sim_close_doc, "close()\n--\n\nFree the simulation now (also on garbage collection).");
static PyObject *sim_close(SimObject *s, PyObject *unused)
{
    (void)unused;
    if (s->busy) {
        PyErr_SetString(PyExc_RuntimeError, "the simulation is busy in another thread");
        return NULL;
    }
    shoal_sim_destroy(s->sim);
    shoal_gpu_sim_destroy(s->gpu);
    s->sim = NULL;
    s->gpu = NULL;
    Py_RETURN_NONE;
}

static PyObject *sim_enter(PyObject *s, PyObject *unused)
{
    (void)unused;
    Py_INCREF(s);
    return s;
}

static PyObject *sim_exit(SimObject *s, PyObject *args)
{
    (void)args;
    return sim_close(s, NULL);
}

/* ---- parameters: a mapping onto the running model's parameters ---------------------- */

typedef struct {
    PyObject_HEAD SimObject *owner;
} ParamsObject;

/* The CPU sim's desc is the library's (parameters change); a GPU sim's is the one it was
 * created with (the public GPU API has no desc getter, and its parameters are fixed). */
static const shoal_sim_desc *sim_desc(const SimObject *s)
{
    return s->sim ? shoal_sim_get_desc(s->sim) : &s->desc;
}

static const shoal_param_info *param_find(shoal_model m, const char *name)
{
    size_t n;
    const shoal_param_info *list = shoal_params_list(m, &n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i].name, name) == 0)
            return &list[i];
    return NULL;
}

static float param_value(const shoal_params *p, const shoal_param_info *info)
{
    float v;
    memcpy(&v, (const char *)p + info->offset, sizeof v);
    return v;
}

static int params_claim(ParamsObject *p)
{
    if (sim_claim(p->owner))
        return -1;
    if (p->owner->gpu) {
        PyErr_SetString(UnsupportedError,
                        "params: the cuda backend's parameters are fixed at creation (give "
                        "params= to Simulation)");
        return -1;
    }
    return 0;
}

static Py_ssize_t params_len(ParamsObject *p)
{
    if (params_claim(p))
        return -1;
    size_t n;
    shoal_params_list(sim_desc(p->owner)->model, &n);
    return (Py_ssize_t)n;
}

static PyObject *params_get(ParamsObject *p, PyObject *key)
{
    if (params_claim(p))
        return NULL;
    const char *name = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
    if (!name) {
        PyErr_SetString(PyExc_TypeError, "parameter names are strings");
        return NULL;
    }
    const shoal_sim_desc *d = sim_desc(p->owner);
    const shoal_param_info *info = param_find(d->model, name);
    if (info) {
        float v = param_value(&d->params, info);
        return info->is_integer ? PyLong_FromLong((long)v) : PyFloat_FromDouble((double)v);
    }
    /* a vector by its base name: (x, y, z) */
    char comp[3][96];
    const shoal_param_info *c[3];
    for (int k = 0; k < 3; k++) {
        snprintf(comp[k], sizeof comp[k], "%s_%c", name, "xyz"[k]);
        c[k] = param_find(d->model, comp[k]);
    }
    if (c[0] && c[1] && c[2])
        return Py_BuildValue("(ddd)", (double)param_value(&d->params, c[0]),
                             (double)param_value(&d->params, c[1]),
                             (double)param_value(&d->params, c[2]));
    PyErr_Format(PyExc_KeyError, "%s (model %s has no such parameter)", name,
                 shoal_model_name(d->model));
    return NULL;
}

static int params_set(ParamsObject *p, PyObject *key, PyObject *value)
{
    if (params_claim(p))
        return -1;
    if (!value) {
        PyErr_SetString(PyExc_TypeError, "parameters cannot be deleted");
        return -1;
    }
    const char *name = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
    if (!name) {
        PyErr_SetString(PyExc_TypeError, "parameter names are strings");
        return -1;
    }
    char text[256];
    if (value_text(value, text, sizeof text))
        return -1;
    const shoal_sim_desc *d = sim_desc(p->owner);
    shoal_params np = d->params;
    shoal_error e;
    if (shoal_params_set(d->model, &np, name, text, &e) ||
        shoal_sim_set_params(p->owner->sim, &np, &e)) {
        raise_status(&e);
        return -1;
    }
    return 0;
}

static PyObject *params_to_dict(ParamsObject *p, PyObject *unused)
{
    (void)unused;
    if (params_claim(p))
        return NULL;
    const shoal_sim_desc *d = sim_desc(p->owner);
    size_t n;
    const shoal_param_info *list = shoal_params_list(d->model, &n);
    PyObject *out = PyDict_New();
    for (size_t i = 0; out && i < n; i++) {
        float v = param_value(&d->params, &list[i]);
        PyObject *o = list[i].is_integer ? PyLong_FromLong((long)v) : PyFloat_FromDouble((double)v);
        if (!o || PyDict_SetItemString(out, list[i].name, o)) {
            Py_XDECREF(o);
            Py_CLEAR(out);
            break;
        }
        Py_DECREF(o);
    }
    return out;
}

static PyObject *params_keys(ParamsObject *p, PyObject *unused)
{
    PyObject *d = params_to_dict(p, unused);
    if (!d)
        return NULL;
    PyObject *k = PyDict_Keys(d);
    Py_DECREF(d);
    return k;
}

static PyObject *params_items(ParamsObject *p, PyObject *unused)
{
    PyObject *d = params_to_dict(p, unused);
    if (!d)
        return NULL;
    PyObject *k = PyDict_Items(d);
    Py_DECREF(d);
    return k;
}

static PyObject *params_values(ParamsObject *p, PyObject *unused)
{
    PyObject *d = params_to_dict(p, unused);
    if (!d)
        return NULL;
    PyObject *k = PyDict_Values(d);
    Py_DECREF(d);
    return k;
}

static PyObject *params_iter(ParamsObject *p)
{
    PyObject *k = params_keys(p, NULL);
    if (!k)
        return NULL;
    PyObject *it = PyObject_GetIter(k);
    Py_DECREF(k);
    return it;
}

static int params_contains(ParamsObject *p, PyObject *key)
{
    PyObject *v = params_get(p, key);
    if (v) {
        Py_DECREF(v);
        return 1;
    }
    if (PyErr_ExceptionMatches(PyExc_KeyError)) {
        PyErr_Clear();
        return 0;
    }
    return -1;
}

static PyObject *params_repr(ParamsObject *p)
{
    PyObject *d = params_to_dict(p, NULL);
    if (!d)
        return NULL;
    PyObject *r = PyObject_Repr(d);
    Py_DECREF(d);
    return r;
}

PyDoc_STRVAR(params_update_doc,
             "update(mapping=None, **values)\n--\n\n"
             "Set several parameters at once; they are validated together and take effect at "
             "the next step.");
static PyObject *params_update(ParamsObject *p, PyObject *args, PyObject *kw)
{
    PyObject *m = NULL;
    if (!PyArg_ParseTuple(args, "|O", &m) || params_claim(p))
        return NULL;
    const shoal_sim_desc *d = sim_desc(p->owner);
    shoal_params np = d->params;
    if ((m && apply_params(d->model, &np, m)) || (kw && apply_params(d->model, &np, kw)))
        return NULL;
    shoal_error e;
    if (shoal_sim_set_params(p->owner->sim, &np, &e))
        return raise_status(&e);
    Py_RETURN_NONE;
}

static PyObject *params_info(ParamsObject *p, PyObject *unused)
{
    (void)unused;
    if (params_claim(p))
        return NULL;
    size_t n;
    const shoal_param_info *list = shoal_params_list(sim_desc(p->owner)->model, &n);
    PyObject *out = PyDict_New();
    for (size_t i = 0; out && i < n; i++) {
        PyObject *o =
            Py_BuildValue("{s:s,s:d,s:d,s:d,s:O}", "help", list[i].help, "min", (double)list[i].min,
                          "max", (double)list[i].max, "default", (double)list[i].default_value,
                          "integer", list[i].is_integer ? Py_True : Py_False);
        if (!o || PyDict_SetItemString(out, list[i].name, o)) {
            Py_XDECREF(o);
            Py_CLEAR(out);
        } else {
            Py_DECREF(o);
        }
    }
    return out;
}

static void params_dealloc(ParamsObject *p)
{
    Py_XDECREF(p->owner);
    Py_TYPE(p)->tp_free((PyObject *)p);
}

static PyMappingMethods params_mapping = {
    .mp_length = (lenfunc)params_len,
    .mp_subscript = (binaryfunc)params_get,
    .mp_ass_subscript = (objobjargproc)params_set,
};
static PySequenceMethods params_sequence = {.sq_contains = (objobjproc)params_contains};

static PyMethodDef params_methods[] = {
    {"keys", (PyCFunction)params_keys, METH_NOARGS, "The parameter names of the model."},
    {"items", (PyCFunction)params_items, METH_NOARGS, "(name, value) pairs."},
    {"values", (PyCFunction)params_values, METH_NOARGS, "The values, in the order of keys()."},
    {"to_dict", (PyCFunction)params_to_dict, METH_NOARGS, "A plain dict of every parameter."},
    {"info", (PyCFunction)params_info, METH_NOARGS,
     "{name: {help, min, max, default, integer}}: the model's parameter table."},
    {"update", (PyCFunction)(void (*)(void))params_update, METH_VARARGS | METH_KEYWORDS,
     params_update_doc},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ParamsType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "shoal.Params",
    .tp_basicsize = sizeof(ParamsObject),
    .tp_dealloc = (destructor)params_dealloc,
    .tp_repr = (reprfunc)params_repr,
    .tp_as_mapping = &params_mapping,
    .tp_as_sequence = &params_sequence,
    .tp_iter = (getiterfunc)params_iter,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The parameters of a running Simulation by name: sim.params['sep_weight'] reads, "
              "sim.params['sep_weight'] = 2 sets (validated; takes effect at the next step). "
              "Vector parameters read as (x, y, z) by their base name ('wall_size') and set "
              "from a 3-sequence or per component ('wall_size_x').",
    .tp_methods = params_methods,
};

static PyObject *sim_get_params(SimObject *s, void *c)
{
    (void)c;
    if (sim_claim(s))
        return NULL;
    if (s->gpu) {
        PyErr_SetString(UnsupportedError,
                        "params: the cuda backend's parameters are fixed at creation (give "
                        "params= to Simulation)");
        return NULL;
    }
    ParamsObject *p = PyObject_New(ParamsObject, &ParamsType);
    if (!p)
        return NULL;
    Py_INCREF(s);
    p->owner = s;
    return (PyObject *)p;
}

static int sim_set_params_attr(SimObject *s, PyObject *value, void *c)
{
    (void)c;
    if (!value) {
        PyErr_SetString(PyExc_TypeError, "params cannot be deleted");
        return -1;
    }
    PyObject *p = sim_get_params(s, NULL);
    if (!p)
        return -1;
    PyObject *args = PyTuple_Pack(1, value);
    PyObject *r = args ? params_update((ParamsObject *)p, args, NULL) : NULL;
    Py_XDECREF(args);
    Py_DECREF(p);
    if (!r)
        return -1;
    Py_DECREF(r);
    return 0;
}

static PyObject *sim_repr(SimObject *s)
{
    if (!s->sim && !s->gpu)
        return PyUnicode_FromString("<shoal.Simulation (closed)>");
    char t[64];
    snprintf(t, sizeof t, "%.6f", s->gpu ? shoal_gpu_sim_time(s->gpu) : shoal_sim_time(s->sim));
    return PyUnicode_FromFormat("<shoal.Simulation %s, %zu boids, t = %s s, %s>",
                                shoal_model_name(sim_desc(s)->model), sim_count(s), t,
                                s->gpu ? "cuda" : "cpu");
}

static PyGetSetDef sim_getset[] = {
    {"state", (getter)sim_get_state, NULL,
     "The state as a new (N, 6) float32 array, row i = boid i (px py pz vx vy vz).", NULL},
    {"positions", (getter)sim_get_positions, NULL, "A new (N, 3) float32 array of positions.",
     NULL},
    {"velocities", (getter)sim_get_velocities, NULL, "A new (N, 3) float32 array of velocities.",
     NULL},
    {"params", (getter)sim_get_params, (setter)sim_set_params_attr,
     "The model's parameters by name (a mapping; assign a dict to set several).", NULL},
    {"time", (getter)sim_get_time, NULL,
     "Simulated time of the next step in seconds (t0 + steps done * dt).", NULL},
    {"count", (getter)sim_get_count, NULL, "Number of boids.", NULL},
    {"model", (getter)sim_get_model, NULL, "The model's name.", NULL},
    {"seed", (getter)sim_get_seed, NULL, "The one seed (initial state, heading targets).", NULL},
    {"dt", (getter)sim_get_dt, NULL, "Step length in seconds.", NULL},
    {"backend", (getter)sim_get_backend, NULL, "\"cpu\" or \"cuda\".", NULL},
    {"device", (getter)sim_get_device, NULL, "What runs the steps (kernels or the GPU's name).",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef sim_methods[] = {
    {"step", (PyCFunction)(void (*)(void))sim_step, METH_VARARGS | METH_KEYWORDS, sim_step_doc},
    {"set_state", (PyCFunction)sim_set_state, METH_O, sim_set_state_doc},
    {"stats", (PyCFunction)(void (*)(void))sim_stats, METH_VARARGS | METH_KEYWORDS, sim_stats_doc},
    {"checkpoint", (PyCFunction)sim_checkpoint, METH_O, sim_checkpoint_doc},
    {"resume", (PyCFunction)(void (*)(void))sim_resume, METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     sim_resume_doc},
    {"close", (PyCFunction)sim_close, METH_NOARGS, sim_close_doc},
    {"__enter__", (PyCFunction)sim_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)sim_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

PyDoc_STRVAR(
    sim_doc,
    "Simulation(model=\"steer\", count=None, seed=1, scene=None, params=None, threads=0, "
    "backend=\"cpu\", dt=None, t0=None, state=None, keep_geometry=False, gpu_order=\"stable\", "
    "neighbors=\"grid\", simd=\"auto\")\n--\n\n"
    "A school of boids stepped by one of the five models (docs/MODELS.md).\n\n"
    "model: steer, average, heading, classic or fov (or the scene file's). scene: a scene file "
    "(.ini): model, parameters, count, seed, dt, obstacles. count: boids; the walls and start "
    "region scale by cbrt(count / the scene's count) to keep its density, as `shoal init "
    "--count` does (keep_geometry=True keeps them). seed: the one seed (initial state and "
    "heading targets). params: {name: value} set after that (numbers, \"x,y,z\" or 3-tuples). "
    "state: an (N, 6) array to start from instead of the drawn state (then N is the count, as "
    "`shoal step` takes it). threads: 0 = all cores; results never depend on it. backend: "
    "\"cpu\" or \"cuda\" (same bits with gpu_order=\"stable\").");

static PyTypeObject SimType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "shoal.Simulation",
    .tp_basicsize = sizeof(SimObject),
    .tp_dealloc = (destructor)sim_dealloc,
    .tp_repr = (reprfunc)sim_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = sim_doc,
    .tp_methods = sim_methods,
    .tp_getset = sim_getset,
    .tp_init = (initproc)sim_init,
    .tp_new = PyType_GenericNew,
};

/* ---- module functions: files, statistics, comparison ------------------------------------ */

PyDoc_STRVAR(load_doc, "load(path, format=\"npy\")\n--\n\n"
                       "Read a state file as an (N, 6) float32 array: a NumPy .npy file "
                       "(float32 or float64, shape (N, 6), as `shoal init` writes) or, with "
                       "format=\"unity\", Unity's raw BoidData buffer. A NaN or infinity is "
                       "InputError naming row and column, as the command line refuses it.");
static PyObject *mod_load(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    static char *kwlist[] = {"path", "format", NULL};
    PyObject *path_obj, *path;
    const char *format = "npy";
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|s", kwlist, &path_obj, &format))
        return NULL;
    int unity = strcmp(format, "unity") == 0;
    if (!unity && strcmp(format, "npy") != 0) {
        PyErr_Format(PyExc_ValueError, "format '%s' (expected \"npy\" or \"unity\")", format);
        return NULL;
    }
    if (path_arg(path_obj, &path))
        return NULL;
    const char *p = PyBytes_AS_STRING(path);
    float *rows = NULL;
    size_t n = 0;
    shoal_error e;
    shoal_status st =
        unity ? shoal_io_unity_read(p, &rows, &n, &e) : shoal_io_npy_read(p, &rows, &n, &e);
    if (!st)
        st = shoal_state_check_finite(rows, n, p, &e);
    Py_DECREF(path);
    if (st) {
        free(rows);
        return raise_status(&e);
    }
    PyArrayObject *a = new_rows(n);
    if (a)
        memcpy(PyArray_DATA(a), rows, n * SHOAL_STATE_COLUMNS * sizeof(float));
    free(rows);
    return (PyObject *)a;
}

PyDoc_STRVAR(save_doc, "save(path, state, format=\"npy\")\n--\n\n"
                       "Write an (N, 6) state as a version 1.0 .npy file ('<f4', the file "
                       "`shoal init` and `shoal step` write, bit for bit), or with "
                       "format=\"unity\" as Unity's raw buffer, or \"vtp\" for ParaView. "
                       "Atomic: a temporary file renamed into place.");
static PyObject *mod_save(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    static char *kwlist[] = {"path", "state", "format", NULL};
    PyObject *path_obj, *state, *path;
    const char *format = "npy";
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|s", kwlist, &path_obj, &state, &format))
        return NULL;
    if (strcmp(format, "npy") && strcmp(format, "unity") && strcmp(format, "vtp")) {
        PyErr_Format(PyExc_ValueError, "format '%s' (expected \"npy\", \"unity\" or \"vtp\")",
                     format);
        return NULL;
    }
    PyArrayObject *a = state_arg(state, "state", 0);
    if (!a)
        return NULL;
    if (path_arg(path_obj, &path)) {
        Py_DECREF(a);
        return NULL;
    }
    const char *p = PyBytes_AS_STRING(path);
    size_t n = (size_t)PyArray_DIM(a, 0);
    shoal_error e;
    shoal_status st = format[0] == 'n'   ? shoal_io_npy_write(p, PyArray_DATA(a), n, &e)
                      : format[0] == 'u' ? shoal_io_unity_write(p, PyArray_DATA(a), n, &e)
                                         : shoal_io_vtp_write(p, PyArray_DATA(a), n, NAN, &e);
    Py_DECREF(path);
    Py_DECREF(a);
    if (st)
        return raise_status(&e);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(stats_doc, "stats(state, radius=None, model=None, threads=0)\n--\n\n"
                        "The flock statistics of an (N, 6) state as a dict (the library's "
                        "shoal_stats_compute, what `shoal compare` prints): polarisation, "
                        "milling, mean_speed, mean_nn_distance, mean_neighbors, group_count, "
                        "largest_group_fraction, centroid, extent, bbox_min, bbox_max, "
                        "radius_of_gyration, count, nonfinite, radius. radius defaults to the "
                        "model's interaction radius (steer's when no model is given).");
static PyObject *mod_stats(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    static char *kwlist[] = {"state", "radius", "model", "threads", NULL};
    PyObject *state, *radius = Py_None, *model = Py_None;
    int threads = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OOi", kwlist, &state, &radius, &model, &threads))
        return NULL;
    shoal_stats_desc sd;
    if (stats_desc_args(radius, model, threads, &sd))
        return NULL;
    /* non-finite rows are counted (nonfinite), not refused: no finiteness check here */
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(
        state, NPY_FLOAT32, 2, 2, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | NPY_ARRAY_FORCECAST);
    if (!a)
        return NULL;
    if (PyArray_DIM(a, 1) != SHOAL_STATE_COLUMNS) {
        Py_DECREF(a);
        PyErr_SetString(PyExc_ValueError, "state: expected shape (N, 6)");
        return NULL;
    }
    shoal_stats out;
    shoal_error e;
    shoal_status st = stats_of(PyArray_DATA(a), (size_t)PyArray_DIM(a, 0), &sd, &out, &e);
    Py_DECREF(a);
    if (st)
        return raise_status(&e);
    return stats_dict(&out);
}

static PyObject *diff_part(double max_abs, double rms_abs, double max_rel, double rms_rel)
{
    return Py_BuildValue("{s:d,s:d,s:d,s:d}", "max_abs", max_abs, "rms_abs", rms_abs, "max_rel",
                         max_rel, "rms_rel", rms_rel);
}

PyDoc_STRVAR(compare_doc,
             "compare(a, b, radius=None, model=None, threads=0, stats=True)\n--\n\n"
             "How far two states of the same boids are apart, as `shoal compare --json` says "
             "it: count, identical (rows bit-identical), identical_fraction, position and "
             "velocity errors ({max_abs, rms_abs, max_rel, rms_rel}), radius, and the flock "
             "statistics of both (stats_a, stats_b) unless stats=False.");
static PyObject *mod_compare(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    static char *kwlist[] = {"a", "b", "radius", "model", "threads", "stats", NULL};
    PyObject *ao, *bo, *radius = Py_None, *model = Py_None;
    int threads = 0, with_stats = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|OOip", kwlist, &ao, &bo, &radius, &model,
                                     &threads, &with_stats))
        return NULL;
    shoal_stats_desc sd;
    if (stats_desc_args(radius, model, threads, &sd))
        return NULL;
    PyArrayObject *a = state_arg(ao, "a", 0), *b = a ? state_arg(bo, "b", 0) : NULL;
    if (!a || !b) {
        Py_XDECREF(a);
        return NULL;
    }
    size_t n = (size_t)PyArray_DIM(a, 0);
    if ((size_t)PyArray_DIM(b, 0) != n) {
        PyErr_Format(InputError, "a has %zu boids, b has %zu", n, (size_t)PyArray_DIM(b, 0));
        Py_DECREF(a);
        Py_DECREF(b);
        return NULL;
    }
    shoal_state_diff df;
    shoal_stats sa, sb;
    shoal_error e;
    shoal_status st = shoal_state_compare(PyArray_DATA(a), PyArray_DATA(b), n, &df, &e);
    if (!st && with_stats && !(st = stats_of(PyArray_DATA(a), n, &sd, &sa, &e)))
        st = stats_of(PyArray_DATA(b), n, &sd, &sb, &e);
    Py_DECREF(a);
    Py_DECREF(b);
    if (st)
        return raise_status(&e);
    PyObject *pos = diff_part(df.pos_max_abs, df.pos_rms_abs, df.pos_max_rel, df.pos_rms_rel);
    PyObject *vel = diff_part(df.vel_max_abs, df.vel_rms_abs, df.vel_max_rel, df.vel_rms_rel);
    PyObject *out = Py_BuildValue("{s:n,s:n,s:d,s:O,s:O,s:d}", "count", (Py_ssize_t)df.count,
                                  "identical", (Py_ssize_t)df.identical, "identical_fraction",
                                  n ? (double)df.identical / (double)n : NAN, "position", pos,
                                  "velocity", vel, "radius", sd.radius);
    Py_XDECREF(pos);
    Py_XDECREF(vel);
    if (out && with_stats) {
        PyObject *x = stats_dict(&sa), *y = stats_dict(&sb);
        if (!x || !y || PyDict_SetItemString(out, "stats_a", x) ||
            PyDict_SetItemString(out, "stats_b", y))
            Py_CLEAR(out);
        Py_XDECREF(x);
        Py_XDECREF(y);
    }
    return out;
}

/* ---- rendering ------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD shoal_renderer *r;
    float fish_length; /* the margin when a frame frames the school */
    int busy;
} RendererObject;

static PyTypeObject RendererType;

static int size_arg(PyObject *obj, int *w, int *h)
{
    if (!obj || obj == Py_None)
        return 0;
    if (!PyArg_ParseTuple(obj, "ii", w, h)) {
        PyErr_SetString(PyExc_TypeError, "size: expected (width, height)");
        return -1;
    }
    if (*w < 1 || *h < 1 || *w > SHOAL_RENDER_MAX_SIZE || *h > SHOAL_RENDER_MAX_SIZE) {
        PyErr_Format(PyExc_ValueError, "size: %dx%d is outside 1..%d per side", *w, *h,
                     SHOAL_RENDER_MAX_SIZE);
        return -1;
    }
    return 0;
}

static void renderer_dealloc(RendererObject *r)
{
    shoal_render_destroy(r->r);
    Py_TYPE(r)->tp_free((PyObject *)r);
}

static int renderer_init(RendererObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"size",    "fish_length", "shade",     "lod",
                             "threads", "simd",        "occlusion", NULL};
    PyObject *size = Py_None;
    double fish_length = 1.0;
    const char *shade = "lit", *simd = "auto";
    int lod = 1, threads = 0, occlusion = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|Odspisp", kwlist, &size, &fish_length, &shade,
                                     &lod, &threads, &simd, &occlusion))
        return -1;
    shoal_render_desc d = shoal_render_desc_default();
    if (size_arg(size, &d.width, &d.height))
        return -1;
    d.fish_length = (float)fish_length;
    if (strcmp(shade, "lit") == 0)
        d.shade = SHOAL_SHADE_LIT;
    else if (strcmp(shade, "id") == 0)
        d.shade = SHOAL_SHADE_ID;
    else {
        PyErr_Format(PyExc_ValueError, "shade '%s' (expected \"lit\" or \"id\")", shade);
        return -1;
    }
    d.lod = lod;
    d.occlusion = occlusion;
    self->fish_length = d.fish_length;
    d.thread_count = threads;
    shoal_error e;
    if (shoal_isa_parse(simd, &d.isa, &e)) {
        raise_status(&e);
        return -1;
    }
    shoal_render_destroy(self->r);
    self->r = NULL;
    /* the renderer takes meshes: shoal's own fish (and, lit with LOD, its reduced and coarse
     * forms), read by io from the assets as `shoal render` reads them, lent to create (which
     * copies them) and freed */
    shoal_mesh fish, lod_mesh, coarse;
    memset(&lod_mesh, 0, sizeof lod_mesh);
    memset(&coarse, 0, sizeof coarse);
    shoal_status st = shoal_mesh_load_asset("fish.obj", &fish, &e);
    if (!st && d.shade == SHOAL_SHADE_LIT && d.lod) {
        st = shoal_mesh_load_asset("fish_lod1.obj", &lod_mesh, &e);
        if (!st)
            st = shoal_mesh_load_asset("fish_lod2.obj", &coarse, &e);
        d.lod_mesh = &lod_mesh;
        d.lod_coarse_mesh = &coarse;
    }
    d.mesh = &fish;
    if (!st)
        st = shoal_render_create(&d, &self->r, &e);
    shoal_mesh_free(&fish);
    shoal_mesh_free(&lod_mesh);
    shoal_mesh_free(&coarse);
    if (st) {
        raise_status(&e);
        return -1;
    }
    return 0;
}

/* per-fish colours: (N,) uint32 0xRRGGBB or (N, 3) uint8 RGB, drawn with alpha 255 */
static int color_arg(PyObject *obj, size_t n, uint32_t **out)
{
    *out = NULL;
    if (!obj || obj == Py_None)
        return 0;
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(obj, NPY_NOTYPE, 1, 2, 0);
    if (!a)
        return -1;
    int ok = 0;
    uint32_t *c = malloc((n ? n : 1) * sizeof *c);
    if (!c) {
        Py_DECREF(a);
        PyErr_NoMemory();
        return -1;
    }
    if (PyArray_NDIM(a) == 2 && (size_t)PyArray_DIM(a, 0) == n && PyArray_DIM(a, 1) == 3) {
        PyArrayObject *u = (PyArrayObject *)PyArray_FROMANY(
            (PyObject *)a, NPY_UINT8, 2, 2, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_FORCECAST);
        if (u) {
            const uint8_t *p = PyArray_DATA(u);
            for (size_t i = 0; i < n; i++)
                c[i] = 0xff000000u | (uint32_t)p[3 * i] << 16 | (uint32_t)p[3 * i + 1] << 8 |
                       p[3 * i + 2];
            Py_DECREF(u);
            ok = 1;
        }
    } else if (PyArray_NDIM(a) == 1 && (size_t)PyArray_DIM(a, 0) == n) {
        PyArrayObject *u = (PyArrayObject *)PyArray_FROMANY(
            (PyObject *)a, NPY_UINT32, 1, 1, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_FORCECAST);
        if (u) {
            const uint32_t *p = PyArray_DATA(u);
            for (size_t i = 0; i < n; i++)
                c[i] = 0xff000000u | (p[i] & 0xffffffu);
            Py_DECREF(u);
            ok = 1;
        }
    } else {
        PyErr_Format(PyExc_ValueError,
                     "color: expected (%zu,) 0xRRGGBB integers or (%zu, 3) RGB bytes", n, n);
    }
    Py_DECREF(a);
    if (!ok) {
        free(c);
        return -1;
    }
    *out = c;
    return 0;
}

static int group_arg(PyObject *obj, size_t n, PyArrayObject **out)
{
    *out = NULL;
    if (!obj || obj == Py_None)
        return 0;
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(
        obj, NPY_UINT8, 1, 1, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_FORCECAST);
    if (!a)
        return -1;
    if ((size_t)PyArray_DIM(a, 0) != n) {
        Py_DECREF(a);
        PyErr_Format(PyExc_ValueError, "group: expected %zu entries (one per fish)", n);
        return -1;
    }
    *out = a;
    return 0;
}

/* Draw `state` and return the image as a new (h, w, 3) uint8 array. */
static PyObject *render_state(RendererObject *self, PyObject *state, PyObject *eye,
                              PyObject *target, PyObject *color, PyObject *group, double fov_deg)
{
    if (!self->r) {
        PyErr_SetString(PyExc_RuntimeError, "the renderer was not initialised");
        return NULL;
    }
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "the renderer is busy in another thread");
        return NULL;
    }
    PyArrayObject *rows = state_arg(state, "state", 1);
    if (!rows)
        return NULL;
    size_t n = (size_t)PyArray_DIM(rows, 0);
    shoal_camera cam = shoal_camera_default();
    cam.fov_deg = (float)fov_deg;
    shoal_framebuffer fb0 = shoal_render_framebuffer(self->r);
    int have_eye = eye && eye != Py_None, have_target = target && target != Py_None;
    uint32_t *colors = NULL;
    PyArrayObject *groups = NULL;
    PyObject *img = NULL;
    if (have_eye != have_target) {
        PyErr_SetString(PyExc_ValueError,
                        "give both eye and target, or neither to frame the state");
        goto done;
    }
    if (have_eye) {
        if (vec3_arg(eye, "eye", cam.eye) || vec3_arg(target, "target", cam.target))
            goto done;
    } else {
        /* frame the school, as `shoal render` does without --eye/--target */
        const float *r = PyArray_DATA(rows);
        float *xyz = malloc((n ? n : 1) * 3 * sizeof(float));
        if (!xyz) {
            PyErr_NoMemory();
            goto done;
        }
        for (size_t i = 0; i < n; i++)
            for (int k = 0; k < 3; k++)
                xyz[(size_t)k * n + i] = r[6 * i + (size_t)k];
        shoal_render_camera_frame(xyz, xyz + n, xyz + 2 * n, n, self->fish_length,
                                  (float)fb0.width / (float)fb0.height, &cam);
        free(xyz);
    }
    if (color_arg(color, n, &colors) || group_arg(group, n, &groups))
        goto done;
    shoal_error e;
    shoal_status st;
    self->busy = 1;
    Py_BEGIN_ALLOW_THREADS st = shoal_render_frame_rows(
        self->r, PyArray_DATA(rows), n, groups ? (const uint8_t *)PyArray_DATA(groups) : NULL,
        colors, &cam, &e);
    Py_END_ALLOW_THREADS self->busy = 0;
    if (st) {
        raise_status(&e);
        goto done;
    }
    shoal_framebuffer fb = shoal_render_framebuffer(self->r);
    npy_intp dims[3] = {fb.height, fb.width, 3};
    img = PyArray_SimpleNew(3, dims, NPY_UINT8);
    if (img) {
        uint8_t *o = PyArray_DATA((PyArrayObject *)img);
        for (int y = 0; y < fb.height; y++) {
            const uint32_t *p = fb.argb + (size_t)y * (size_t)fb.stride_px;
            for (int x = 0; x < fb.width; x++, o += 3) {
                o[0] = (uint8_t)(p[x] >> 16);
                o[1] = (uint8_t)(p[x] >> 8);
                o[2] = (uint8_t)p[x];
            }
        }
    }
done:
    free(colors);
    Py_XDECREF(groups);
    Py_DECREF(rows);
    return img;
}

PyDoc_STRVAR(renderer_frame_doc,
             "frame(state, eye=None, target=None, color=None, group=None, fov_deg=60)\n--\n\n"
             "Draw an (N, 6) state and return the image as a new (h, w, 3) uint8 RGB array, "
             "row 0 at the top. eye and target (x, y, z) place the camera (up is +Y); neither "
             "frames the whole school as `shoal render` does. color: per-fish (N,) 0xRRGGBB "
             "or (N, 3) RGB; group: per-fish (N,) integers coloured from an 8-colour palette. "
             "The GIL is released while the frame is drawn.");
static PyObject *renderer_frame(RendererObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"state", "eye", "target", "color", "group", "fov_deg", NULL};
    PyObject *state, *eye = Py_None, *target = Py_None, *color = Py_None, *group = Py_None;
    double fov = 60.0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OOOOd", kwlist, &state, &eye, &target, &color,
                                     &group, &fov))
        return NULL;
    return render_state(self, state, eye, target, color, group, fov);
}

static PyObject *renderer_stats(RendererObject *self, PyObject *unused)
{
    (void)unused;
    shoal_render_stats s = shoal_render_get_stats(self->r);
    shoal_framebuffer fb = shoal_render_framebuffer(self->r);
    return Py_BuildValue("{s:d,s:d,s:d,s:d,s:d,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:s,s:i,s:K}",
                         "instance_ms", s.instance_ms, "setup_ms", s.setup_ms, "raster_ms",
                         s.raster_ms, "resolve_ms", s.resolve_ms, "total_ms", s.total_ms,
                         "instances", (unsigned long long)s.instances, "instances_visible",
                         (unsigned long long)s.instances_visible, "instances_full",
                         (unsigned long long)s.instances_full, "instances_reduced",
                         (unsigned long long)s.instances_reduced, "instances_splat",
                         (unsigned long long)s.instances_splat, "triangles_submitted",
                         (unsigned long long)s.triangles_submitted, "triangles_visible",
                         (unsigned long long)s.triangles_visible, "triangles_rasterized",
                         (unsigned long long)s.triangles_rasterized, "pixels_written",
                         (unsigned long long)s.pixels_written, "isa", s.isa ? s.isa : "", "threads",
                         s.thread_count, "hash", (unsigned long long)shoal_render_hash(fb));
}

static PyObject *renderer_get_size(RendererObject *self, void *c)
{
    (void)c;
    shoal_framebuffer fb = shoal_render_framebuffer(self->r);
    return Py_BuildValue("(ii)", fb.width, fb.height);
}

static int renderer_set_size(RendererObject *self, PyObject *v, void *c)
{
    (void)c;
    int w, h;
    if (!v || size_arg(v, &w, &h))
        return -1;
    shoal_error e;
    if (shoal_render_set_size(self->r, w, h, &e)) {
        raise_status(&e);
        return -1;
    }
    return 0;
}

static PyGetSetDef renderer_getset[] = {
    {"size", (getter)renderer_get_size, (setter)renderer_set_size,
     "(width, height) in pixels; settable.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef renderer_methods[] = {
    {"frame", (PyCFunction)(void (*)(void))renderer_frame, METH_VARARGS | METH_KEYWORDS,
     renderer_frame_doc},
    {"stats", (PyCFunction)renderer_stats, METH_NOARGS,
     "What the last frame did: stage times in ms, instance and triangle counts, the ISA, "
     "threads and the image hash (FNV-1a, as `shoal render --stats` prints)."},
    {NULL, NULL, 0, NULL},
};

PyDoc_STRVAR(renderer_doc,
             "Renderer(size=(1280, 720), fish_length=1.0, shade=\"lit\", lod=True, threads=0, "
             "simd=\"auto\", occlusion=True)\n--\n\n"
             "The software renderer, kept for many frames (its buffers are reused): "
             "frame(state, ...) returns each image. shade=\"lit\" lights and fogs the fish, "
             "coloured by speed (or by group or colour); \"id\" colours fish i with i + 1. "
             "Images do not depend on threads or simd.");

static PyTypeObject RendererType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "shoal.Renderer",
    .tp_basicsize = sizeof(RendererObject),
    .tp_dealloc = (destructor)renderer_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = renderer_doc,
    .tp_methods = renderer_methods,
    .tp_getset = renderer_getset,
    .tp_init = (initproc)renderer_init,
    .tp_new = PyType_GenericNew,
};

PyDoc_STRVAR(render_doc,
             "render(state, size=(1280, 720), eye=None, target=None, color=None, group=None, "
             "fish_length=1.0, fov_deg=60, shade=\"lit\", lod=True, threads=0)\n--\n\n"
             "Draw one (N, 6) state and return an (h, w, 3) uint8 RGB array, the pixels "
             "`shoal render` writes for the same options (no eye/target: the school is "
             "framed as it frames it). For many frames keep a Renderer.");
static PyObject *mod_render(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    static char *kwlist[] = {"state",       "size",    "eye",   "target", "color",   "group",
                             "fish_length", "fov_deg", "shade", "lod",    "threads", NULL};
    PyObject *state, *size = Py_None, *eye = Py_None, *target = Py_None, *color = Py_None,
                     *group = Py_None;
    double fish_length = 1.0, fov = 60.0;
    const char *shade = "lit";
    int lod = 1, threads = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OOOOOddspi", kwlist, &state, &size, &eye, &target,
                                     &color, &group, &fish_length, &fov, &shade, &lod, &threads))
        return NULL;
    PyObject *rkw =
        Py_BuildValue("{s:O,s:d,s:s,s:O,s:i}", "size", size, "fish_length", fish_length, "shade",
                      shade, "lod", lod ? Py_True : Py_False, "threads", threads);
    PyObject *noargs = PyTuple_New(0);
    PyObject *r = rkw && noargs ? PyObject_Call((PyObject *)&RendererType, noargs, rkw) : NULL;
    Py_XDECREF(rkw);
    Py_XDECREF(noargs);
    if (!r)
        return NULL;
    PyObject *img = render_state((RendererObject *)r, state, eye, target, color, group, fov);
    Py_DECREF(r);
    return img;
}

PyDoc_STRVAR(write_png_doc, "write_png(path, image)\n--\n\n"
                            "Write an (h, w, 3) uint8 RGB image as an 8-bit RGB PNG, with the "
                            "writer `shoal render` uses (the same bytes for the same pixels). "
                            "Atomic.");
static PyObject *mod_write_png(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *path_obj, *img_obj, *path;
    if (!PyArg_ParseTuple(args, "OO", &path_obj, &img_obj))
        return NULL;
    PyArrayObject *img =
        (PyArrayObject *)PyArray_FROMANY(img_obj, NPY_UINT8, 3, 3, NPY_ARRAY_C_CONTIGUOUS);
    if (!img)
        return NULL;
    if (PyArray_DIM(img, 2) != 3) {
        Py_DECREF(img);
        PyErr_SetString(PyExc_ValueError, "image: expected shape (h, w, 3) of uint8");
        return NULL;
    }
    int h = (int)PyArray_DIM(img, 0), w = (int)PyArray_DIM(img, 1);
    uint32_t *argb = malloc((size_t)w * (size_t)h * 4 + 4);
    if (!argb) {
        Py_DECREF(img);
        return PyErr_NoMemory();
    }
    const uint8_t *p = PyArray_DATA(img);
    for (size_t i = 0; i < (size_t)w * (size_t)h; i++)
        argb[i] =
            0xff000000u | (uint32_t)p[3 * i] << 16 | (uint32_t)p[3 * i + 1] << 8 | p[3 * i + 2];
    Py_DECREF(img);
    if (path_arg(path_obj, &path)) {
        free(argb);
        return NULL;
    }
    shoal_error e;
    shoal_status st = shoal_io_png_write(PyBytes_AS_STRING(path), argb, w, h, w, &e);
    Py_DECREF(path);
    free(argb);
    if (st)
        return raise_status(&e);
    Py_RETURN_NONE;
}

/* ---- sweeps ---------------------------------------------------------------------------- */

PyDoc_STRVAR(sweep_rows_doc,
             "_sweep_rows(model, scene, count, keep_geometry, params, vary, seeds, steps, "
             "every, dt, radius, threads)\n--\n\n"
             "The sweep's table as (header, rows): the CSV header line and one text row per "
             "sample, exactly the lines of `shoal sweep`'s sweep.csv (shoal.sweep builds the "
             "array or DataFrame from them).");
static PyObject *mod_sweep_rows(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *model, *scene, *params, *vary, *dt, *radius;
    Py_ssize_t count;
    int keep, threads;
    unsigned long long s0, s1;
    long long steps, every;
    if (!PyArg_ParseTuple(args, "OOnpOOKKLLOOi", &model, &scene, &count, &keep, &params, &vary, &s0,
                          &s1, &steps, &every, &dt, &radius, &threads))
        return NULL;
    shoal_sim_desc d;
    shoal_scene *sc = malloc(sizeof *sc);
    if (!sc)
        return PyErr_NoMemory();
    shoal_sweep *sw = NULL;
    PyObject *out = NULL, *rows = NULL;
    shoal_sweep_sample *samples = NULL;
    shoal_error e;
    if (desc_args(model, scene, count, keep, params, &d, sc))
        goto done;
    if (dt != Py_None && (d.dt_s = PyFloat_AsDouble(dt)) == -1.0 && PyErr_Occurred())
        goto done;
    if (shoal_sweep_create(&d, sc, &sw, &e)) {
        raise_status(&e);
        goto done;
    }
    PyObject *it = PyObject_GetIter(vary);
    if (!it)
        goto done;
    PyObject *spec;
    while ((spec = PyIter_Next(it))) {
        const char *s = PyUnicode_AsUTF8(spec);
        shoal_status st = s ? shoal_sweep_vary(sw, s, &e) : SHOAL_ERR_INPUT;
        Py_DECREF(spec);
        if (!s || st) {
            if (s)
                raise_status(&e);
            Py_DECREF(it);
            goto done;
        }
    }
    Py_DECREF(it);
    if (PyErr_Occurred())
        goto done;
    double r = shoal_params_interaction_radius(d.model, &d.params);
    if (radius != Py_None && (r = PyFloat_AsDouble(radius)) == -1.0 && PyErr_Occurred())
        goto done;
    if (shoal_sweep_set_seeds(sw, s0, s1, &e) || shoal_sweep_set_steps(sw, steps, every, &e) ||
        shoal_sweep_set_radius(sw, r, &e) || shoal_sweep_check(sw, &e)) {
        raise_status(&e);
        goto done;
    }
    char header[4096];
    shoal_sweep_format_header(sw, header, sizeof header);
    uint64_t members = shoal_sweep_member_count(sw);
    size_t per = shoal_sweep_sample_count(sw);
    if (members * per > (uint64_t)PY_SSIZE_T_MAX / 2) {
        PyErr_SetString(PyExc_ValueError, "sweep: too many rows");
        goto done;
    }
    samples = malloc(per * sizeof *samples);
    rows = PyList_New(0);
    if (!samples || !rows) {
        PyErr_NoMemory();
        goto done;
    }
    for (uint64_t k = 0; k < members; k++) {
        shoal_status st;
        Py_BEGIN_ALLOW_THREADS st = shoal_sweep_run_member(sw, k, threads, samples, per, &e);
        Py_END_ALLOW_THREADS if (st)
        {
            raise_status(&e);
            /* the member's number before the library's message */
            PyObject *type, *value, *tb;
            PyErr_Fetch(&type, &value, &tb);
            PyErr_Format(type, "member %llu: %s", (unsigned long long)k, e.message);
            Py_XDECREF(type);
            Py_XDECREF(value);
            Py_XDECREF(tb);
            goto done;
        }
        for (size_t i = 0; i < per; i++) {
            char line[4096];
            shoal_sweep_format_sample(sw, &samples[i], line, sizeof line);
            PyObject *l = PyUnicode_FromString(line);
            if (!l || PyList_Append(rows, l)) {
                Py_XDECREF(l);
                goto done;
            }
            Py_DECREF(l);
        }
        if (PyErr_CheckSignals())
            goto done;
    }
    out = Py_BuildValue("(sO)", header, rows);
done:
    Py_XDECREF(rows);
    free(samples);
    shoal_sweep_destroy(sw);
    free(sc);
    return out;
}

/* ---- verify ------------------------------------------------------------------------------ */

/* A finite number, or None (as `shoal verify --json` writes null). */
static PyObject *num_or_none(double x)
{
    if (isfinite(x))
        return PyFloat_FromDouble(x);
    Py_RETURN_NONE;
}

static const char *term_text(shoal_term t)
{
    const char *n = shoal_term_name(t);
    return n ? n : "";
}

/* Build a dict from alternating keys and new references (NULL values fail it). */
static PyObject *dict_of(int n, const char *const *keys, PyObject **vals)
{
    PyObject *d = PyDict_New();
    for (int i = 0; i < n; i++) {
        if (d && (!vals[i] || PyDict_SetItemString(d, keys[i], vals[i])))
            Py_CLEAR(d);
        Py_XDECREF(vals[i]);
    }
    return d;
}

/* One of the worst boids, with the keys of `shoal verify --json` ("id" is the row here;
 * shoal.verify puts the ids in when it was given some). */
static PyObject *verify_boid_dict(const shoal_verify_boid *b)
{
    PyObject *dv = PyDict_New();
    for (int t = 1; dv && t < SHOAL_TERM_COUNT; t++) {
        const double *v = b->term_dv[t];
        if (v[0] == 0 && v[1] == 0 && v[2] == 0)
            continue;
        PyObject *l =
            Py_BuildValue("[NNN]", num_or_none(v[0]), num_or_none(v[1]), num_or_none(v[2]));
        if (!l || PyDict_SetItemString(dv, shoal_term_name((shoal_term)t), l))
            Py_CLEAR(dv);
        Py_XDECREF(l);
    }
    static const char *const keys[] = {
        "row",     "id",    "pos_err",      "pos_tol",  "pos_tie",      "vel_err",    "vel_tol",
        "vel_tie", "ratio", "tie_neighbor", "tie_term", "explained_by", "residual_v", "term_dv"};
    PyObject *tie = b->tie_term != SHOAL_TERM_NONE && b->tie_row >= 0
                        ? PyLong_FromLongLong(b->tie_row)
                        : (Py_INCREF(Py_None), Py_None);
    PyObject *vals[] = {PyLong_FromUnsignedLong(b->row),
                        PyLong_FromUnsignedLong(b->row),
                        num_or_none(b->pos_err),
                        num_or_none(b->pos_tol),
                        num_or_none(b->pos_tie),
                        num_or_none(b->vel_err),
                        num_or_none(b->vel_tol),
                        num_or_none(b->vel_tie),
                        num_or_none(b->ratio),
                        tie,
                        PyUnicode_FromString(term_text(b->tie_term)),
                        PyUnicode_FromString(term_text(b->explained_by)),
                        Py_BuildValue("[NNN]", num_or_none(b->residual[0]),
                                      num_or_none(b->residual[1]), num_or_none(b->residual[2])),
                        dv};
    return dict_of((int)(sizeof keys / sizeof keys[0]), keys, vals);
}

/* One step's report with the keys of `shoal verify --json`'s steps. */
static PyObject *verify_report_dict(const shoal_verify_report *r)
{
    PyObject *worst = PyList_New(r->worst_count);
    for (int w = 0; worst && w < r->worst_count; w++) {
        PyObject *o = verify_boid_dict(&r->worst[w]);
        if (!o) {
            Py_CLEAR(worst);
            break;
        }
        PyList_SET_ITEM(worst, w, o);
    }
    int have = r->param[0] != 0;
    static const char *const keys[] = {
        "step",       "t",         "count",        "pos_max",  "pos_median", "vel_max",
        "vel_median", "ratio_max", "ratio_median", "beyond",   "ties",       "unverifiable",
        "verdict",    "term",      "param",        "contract", "fitted",     "strictness",
        "diagnosed",  "explained", "beyond_after", "detail",   "worst"};
    PyObject *after = r->beyond_after != SIZE_MAX ? PyLong_FromSize_t(r->beyond_after)
                                                  : (Py_INCREF(Py_None), Py_None);
    PyObject *vals[] = {PyLong_FromUnsignedLongLong(r->step),
                        num_or_none(r->t),
                        PyLong_FromSize_t(r->count),
                        num_or_none(r->pos_max),
                        num_or_none(r->pos_median),
                        num_or_none(r->vel_max),
                        num_or_none(r->vel_median),
                        num_or_none(r->ratio_max),
                        num_or_none(r->ratio_median),
                        PyLong_FromSize_t(r->beyond),
                        PyLong_FromSize_t(r->ties),
                        PyLong_FromSize_t(r->unverifiable),
                        PyUnicode_FromString(shoal_verdict_name(r->verdict)),
                        PyUnicode_FromString(term_text(r->term)),
                        PyUnicode_FromString(r->param),
                        num_or_none(have ? r->contract_value : NAN),
                        Py_BuildValue("[NN]", num_or_none(have ? r->fitted_lo : NAN),
                                      num_or_none(have ? r->fitted_hi : NAN)),
                        PyLong_FromLong(r->strictness),
                        PyLong_FromSize_t(r->diagnosed),
                        PyLong_FromSize_t(r->explained),
                        after,
                        PyUnicode_FromString(r->detail),
                        worst};
    return dict_of((int)(sizeof keys / sizeof keys[0]), keys, vals);
}

PyDoc_STRVAR(verify_steps_doc,
             "_verify_steps(states, model, scene, params, dt, t0, seed, reference, worst, "
             "threads, targets)\n--\n\n"
             "shoal.verify's engine: states is a C-contiguous float64 (T, N, 6) array in one "
             "row order; one report dict per pair (k, k+1), as `shoal verify --json`.");
static PyObject *mod_verify_steps(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *states_obj, *model, *scene, *params, *dt, *t0, *seed, *targets_obj;
    const char *reference;
    int worst, threads;
    if (!PyArg_ParseTuple(args, "OOOOOOOsiiO", &states_obj, &model, &scene, &params, &dt, &t0,
                          &seed, &reference, &worst, &threads, &targets_obj))
        return NULL;
    shoal_verify_reference ref;
    if (strcmp(reference, "f32") == 0)
        ref = SHOAL_VERIFY_F32;
    else if (strcmp(reference, "f64") == 0)
        ref = SHOAL_VERIFY_F64;
    else
        return PyErr_Format(InputError, "reference '%s': expected \"f32\" or \"f64\"", reference);
    if (worst < 1 || worst > SHOAL_VERIFY_MAX_WORST)
        return PyErr_Format(InputError, "worst %d: expected 1..%d", worst, SHOAL_VERIFY_MAX_WORST);
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(states_obj, NPY_FLOAT64, 3, 3,
                                                        NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
    if (!a)
        return NULL;
    npy_intp T = PyArray_DIM(a, 0), N = PyArray_DIM(a, 1);
    if (PyArray_DIM(a, 2) != SHOAL_STATE_COLUMNS || T < 2 || N < 1) {
        Py_DECREF(a);
        return PyErr_Format(InputError,
                            "states: shape (%zd, %zd, %zd), expected (T >= 2, N >= 1, 6)",
                            (Py_ssize_t)T, (Py_ssize_t)N, (Py_ssize_t)PyArray_DIM(a, 2));
    }
    PyArrayObject *tg = NULL; /* heading's targets: (K, 3) for every step or (T-1, K, 3) */
    if (targets_obj != Py_None) {
        tg = (PyArrayObject *)PyArray_FROMANY(targets_obj, NPY_FLOAT64, 2, 3,
                                              NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
        if (!tg) {
            Py_DECREF(a);
            return NULL;
        }
        int nd = PyArray_NDIM(tg);
        if (PyArray_DIM(tg, nd - 1) != 3 || (nd == 3 && PyArray_DIM(tg, 0) != T - 1)) {
            Py_DECREF(a);
            Py_DECREF(tg);
            return PyErr_Format(InputError, "targets: expected (K, 3) or (%zd, K, 3)",
                                (Py_ssize_t)(T - 1));
        }
    }
    shoal_scene *sc = malloc(sizeof *sc);
    if (!sc) {
        Py_DECREF(a);
        Py_XDECREF(tg);
        return PyErr_NoMemory();
    }
    shoal_sim_desc d;
    shoal_verify *v = NULL;
    PyObject *out = NULL;
    shoal_error e;
    if (desc_args(model, scene, (Py_ssize_t)N, 1, params, &d, sc))
        goto done;
    if (dt != Py_None) {
        d.dt_s = PyFloat_AsDouble(dt);
        if (PyErr_Occurred())
            goto done;
    }
    if (t0 != Py_None) {
        d.t0_s = PyFloat_AsDouble(t0);
        if (PyErr_Occurred())
            goto done;
    }
    if (seed != Py_None) {
        d.seed = PyLong_AsUnsignedLongLong(seed);
        if (PyErr_Occurred())
            goto done;
    }
    d.boid_count = (size_t)N;
    d.thread_count = threads;
    shoal_verify_desc vd = shoal_verify_desc_default();
    vd.sim = d;
    vd.reference = ref;
    vd.worst_count = worst;
    if (shoal_verify_create(&vd, &v, &e)) {
        raise_status(&e);
        goto done;
    }
    if (sc->mesh_count > 0) {
        shoal_sim_desc one = d;
        one.boid_count = 1;
        shoal_sim *holder = NULL;
        shoal_status st = shoal_sim_create(&one, &holder, &e);
        if (!st && !(st = shoal_scene_add_obstacles(sc, holder, &e)))
            st = shoal_verify_copy_obstacles(v, holder, &e);
        shoal_sim_destroy(holder);
        if (st) {
            raise_status(&e);
            goto done;
        }
    }
    if (!(out = PyList_New(0)))
        goto done;
    const double *rows = (const double *)PyArray_DATA(a);
    shoal_verify_report *r = malloc(sizeof *r);
    if (!r) {
        Py_CLEAR(out);
        PyErr_NoMemory();
        goto done;
    }
    for (npy_intp k = 0; k + 1 < T; k++) {
        shoal_status st = SHOAL_OK;
        if (tg) {
            int nd = PyArray_NDIM(tg);
            size_t kc = (size_t)PyArray_DIM(tg, nd - 2);
            const double *xyz = (const double *)PyArray_DATA(tg) + (nd == 3 ? k * kc * 3 : 0);
            st = shoal_verify_set_targets(v, xyz, kc, &e);
        }
        if (!st) {
            Py_BEGIN_ALLOW_THREADS st = shoal_verify_step(
                v, rows + (size_t)k * (size_t)N * 6, rows + (size_t)(k + 1) * (size_t)N * 6, r, &e);
            Py_END_ALLOW_THREADS
        }
        PyObject *rd = NULL;
        if (st)
            raise_status(&e);
        else
            rd = verify_report_dict(r);
        if (!rd || PyList_Append(out, rd)) {
            Py_XDECREF(rd);
            Py_CLEAR(out);
            break;
        }
        Py_DECREF(rd);
    }
    free(r);
done:
    shoal_verify_destroy(v);
    free(sc);
    Py_DECREF(a);
    Py_XDECREF(tg);
    return out;
}

PyDoc_STRVAR(gpu_available_doc,
             "gpu_available()\n--\n\n"
             "(True, device) when this build has the CUDA backend and a usable NVIDIA GPU; "
             "else (False, the reason).");
static PyObject *mod_gpu_available(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    shoal_error e;
    if (shoal_gpu_available(&e))
        return Py_BuildValue("(Os)", Py_False, e.message);
    return Py_BuildValue("(Os)", Py_True, "cuda");
}

PyDoc_STRVAR(models_doc, "models()\n--\n\nThe names of the five models.");
static PyObject *mod_models(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    PyObject *l = PyList_New(0);
    for (int i = 0; l && i < SHOAL_MODEL_COUNT; i++) {
        PyObject *s = PyUnicode_FromString(shoal_model_name((shoal_model)i));
        if (!s || PyList_Append(l, s))
            Py_CLEAR(l);
        Py_XDECREF(s);
    }
    return l;
}

PyDoc_STRVAR(default_params_doc,
             "default_params(model)\n--\n\n"
             "{name: {help, min, max, default, integer}}: the model's parameter table.");
static PyObject *mod_default_params(PyObject *m, PyObject *arg)
{
    (void)m;
    shoal_model model = SHOAL_MODEL_STEER;
    if (model_arg(arg, &model))
        return NULL;
    size_t n;
    const shoal_param_info *list = shoal_params_list(model, &n);
    PyObject *out = PyDict_New();
    for (size_t i = 0; out && i < n; i++) {
        PyObject *o =
            Py_BuildValue("{s:s,s:d,s:d,s:d,s:O}", "help", list[i].help, "min", (double)list[i].min,
                          "max", (double)list[i].max, "default", (double)list[i].default_value,
                          "integer", list[i].is_integer ? Py_True : Py_False);
        if (!o || PyDict_SetItemString(out, list[i].name, o))
            Py_CLEAR(out);
        Py_XDECREF(o);
    }
    return out;
}

static PyMethodDef module_methods[] = {
    {"load", (PyCFunction)(void (*)(void))mod_load, METH_VARARGS | METH_KEYWORDS, load_doc},
    {"save", (PyCFunction)(void (*)(void))mod_save, METH_VARARGS | METH_KEYWORDS, save_doc},
    {"stats", (PyCFunction)(void (*)(void))mod_stats, METH_VARARGS | METH_KEYWORDS, stats_doc},
    {"compare", (PyCFunction)(void (*)(void))mod_compare, METH_VARARGS | METH_KEYWORDS,
     compare_doc},
    {"render", (PyCFunction)(void (*)(void))mod_render, METH_VARARGS | METH_KEYWORDS, render_doc},
    {"write_png", (PyCFunction)mod_write_png, METH_VARARGS, write_png_doc},
    {"_sweep_rows", (PyCFunction)mod_sweep_rows, METH_VARARGS, sweep_rows_doc},
    {"_verify_steps", (PyCFunction)mod_verify_steps, METH_VARARGS, verify_steps_doc},
    {"gpu_available", (PyCFunction)mod_gpu_available, METH_NOARGS, gpu_available_doc},
    {"models", (PyCFunction)mod_models, METH_NOARGS, models_doc},
    {"default_params", (PyCFunction)mod_default_params, METH_O, default_params_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "shoal._shoal",
    "The C extension under the shoal package (see help(shoal)).",
    -1,
    module_methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

static PyObject *new_error(PyObject *m, const char *name, PyObject *base2, const char *doc)
{
    char full[64];
    snprintf(full, sizeof full, "shoal.%s", name);
    PyObject *bases = base2 ? PyTuple_Pack(2, Error, base2) : NULL;
    PyObject *e = PyErr_NewExceptionWithDoc(full, doc, base2 ? bases : PyExc_Exception, NULL);
    Py_XDECREF(bases);
    if (!e || PyModule_AddObject(m, name, e)) {
        Py_XDECREF(e);
        return NULL;
    }
    Py_INCREF(e);
    return e;
}

PyMODINIT_FUNC PyInit__shoal(void);
PyMODINIT_FUNC PyInit__shoal(void)
{
    import_array();
    shoal_error e;
    /* the library this module loaded must have the ABI of the headers it was built with */
    if (shoal_abi_check(&e)) {
        PyErr_Format(PyExc_ImportError, "shoal: %s", e.message);
        return NULL;
    }
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    if (!(Error = new_error(m, "Error", NULL, "A shoal library error; str() is its message.")) ||
        !(InputError = new_error(m, "InputError", PyExc_ValueError,
                                 "Bad input: a malformed file, an unknown name, a value out of "
                                 "range (the command line's exit 2).")) ||
        !(FileError = new_error(m, "FileError", PyExc_OSError,
                                "A file could not be opened, read or written.")) ||
        !(NoMemoryError =
              new_error(m, "NoMemoryError", PyExc_MemoryError, "An allocation failed.")) ||
        !(NonFiniteError = new_error(m, "NonFiniteError", PyExc_ArithmeticError,
                                     "A step produced a NaN or an infinity (the message names "
                                     "the boid and step).")) ||
        !(UnsupportedError = new_error(m, "UnsupportedError", PyExc_RuntimeError,
                                       "This machine or build lacks what was asked (an ISA, "
                                       "CUDA), or the ABI differs.")))
        goto fail;
    if (PyType_Ready(&SimType) || PyType_Ready(&ParamsType) || PyType_Ready(&RendererType))
        goto fail;
    Py_INCREF(&SimType);
    Py_INCREF(&ParamsType);
    Py_INCREF(&RendererType);
    if (PyModule_AddObject(m, "Simulation", (PyObject *)&SimType) ||
        PyModule_AddObject(m, "Params", (PyObject *)&ParamsType) ||
        PyModule_AddObject(m, "Renderer", (PyObject *)&RendererType) ||
        PyModule_AddStringConstant(m, "__version__", shoal_version()) ||
        PyModule_AddStringConstant(m, "header_version", SHOAL_VERSION_STRING))
        goto fail;
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
