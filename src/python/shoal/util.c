/* SPDX-License-Identifier: MIT */
/* Conversions between Python and the library: exceptions from library errors, states
 * (NumPy arrays in, float32 (N, 6) rows), parameters by name, the desc of model=/scene=/count=
 * /params=, paths, and the statistics dicts. */
#include "module.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- errors ---------------------------------------------------------------------------- */

PyObject *Error, *InputError, *FileError, *NoMemoryError, *NonFiniteError, *UnsupportedError;

/* Raise the exception for a library status with its message; returns NULL. */
PyObject *raise_status(const shoal_error *e)
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
PyArrayObject *state_arg(PyObject *obj, const char *what, int allow_empty)
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

PyArrayObject *new_rows(size_t n)
{
    npy_intp dims[2] = {(npy_intp)n, SHOAL_STATE_COLUMNS};
    return (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_FLOAT32);
}

/* The UTF-8 of a str for the library, which reads C strings: a NUL inside would end it
 * early ('sep_weight\0anything' would set sep_weight), so each NUL is spelled out as the four
 * characters \x00 and the library refuses the name or value it then sees, in its own words.
 * Returns the text, valid while *keep lives (a new reference the caller releases), or NULL
 * with an exception. */
const char *c_text(PyObject *str, PyObject **keep)
{
    *keep = NULL;
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(str, &n);
    if (!s)
        return NULL;
    if ((Py_ssize_t)strlen(s) == n) {
        Py_INCREF(str);
        *keep = str;
        return s;
    }
    PyObject *b = PyBytes_FromStringAndSize(NULL, 4 * n + 1);
    if (!b)
        return NULL;
    char *o = PyBytes_AS_STRING(b);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (s[i])
            *o++ = s[i];
        else {
            memcpy(o, "\\x00", 4);
            o += 4;
        }
    }
    *o = 0;
    *keep = b;
    return PyBytes_AS_STRING(b);
}

/* One value onto parameter `name`: a str is text the library parses (as --set's), a number
 * is set by value, a 3-sequence sets a vector's x, y and z (each a number or a text). */
static int set_one_obj(shoal_model model, shoal_params *p, const char *name, PyObject *v)
{
    shoal_error e;
    if (PyUnicode_Check(v)) {
        PyObject *keep;
        const char *text = c_text(v, &keep);
        if (!text)
            return -1;
        shoal_status st = shoal_params_set(model, p, name, text, &e);
        Py_DECREF(keep);
        return st ? (raise_status(&e), -1) : 0;
    }
    if (PyNumber_Check(v) && !PySequence_Check(v)) {
        double d = PyFloat_AsDouble(v);
        if (d == -1.0 && PyErr_Occurred())
            return -1;
        return shoal_params_set_value(model, p, name, &d, 1, &e) ? (raise_status(&e), -1) : 0;
    }
    if (PySequence_Check(v) && !PyBytes_Check(v) && !PyByteArray_Check(v)) {
        PyObject *seq = PySequence_Tuple(v);
        if (!seq)
            return -1;
        Py_ssize_t n = PyTuple_GET_SIZE(seq);
        size_t k = 0;
        const shoal_param_info *info = shoal_params_find(model, name, &k, &e);
        int rc = 0;
        if (!info) {
            raise_status(&e);
            rc = -1;
        } else if ((size_t)n != k) { /* shoal_params_set_value's words */
            shoal_error_set(&e, SHOAL_ERR_INPUT, "parameter %s of model %s: takes %s, not %zd",
                            name, shoal_model_name(model),
                            k == 3 ? "3 values (x, y, z)" : "one value", n);
            raise_status(&e);
            rc = -1;
        } else {
            shoal_params tmp = *p; /* all or none */
            for (size_t c = 0; c < k && !rc; c++) {
                PyObject *x = PyTuple_GET_ITEM(seq, c);
                if (PyUnicode_Check(x) || (PyNumber_Check(x) && !PySequence_Check(x)))
                    rc = set_one_obj(model, &tmp, info[c].name, x);
                else {
                    PyErr_Format(PyExc_TypeError,
                                 "parameter %s: each of x, y, z is a number or a string", name);
                    rc = -1;
                }
            }
            if (!rc)
                *p = tmp;
        }
        Py_DECREF(seq);
        return rc;
    }
    PyErr_SetString(PyExc_TypeError, "a parameter value is a number, a string or (x, y, z)");
    return -1;
}

int param_set_obj(shoal_model model, shoal_params *p, PyObject *key, PyObject *value)
{
    if (!PyUnicode_Check(key)) {
        PyErr_SetString(PyExc_TypeError, "parameter names are strings");
        return -1;
    }
    PyObject *keep;
    const char *name = c_text(key, &keep);
    if (!name)
        return -1;
    int rc = set_one_obj(model, p, name, value);
    Py_DECREF(keep);
    return rc;
}

/* params={name: value}: each onto p, in the dict's order, by name. The items are taken
 * first: a value's conversion may run Python code that changes the dict. */
int apply_params(shoal_model model, shoal_params *p, PyObject *params)
{
    if (!params || params == Py_None)
        return 0;
    if (!PyDict_Check(params)) {
        PyErr_SetString(PyExc_TypeError, "params: expected a dict {name: value}");
        return -1;
    }
    PyObject *items = PyDict_Items(params);
    if (!items)
        return -1;
    int rc = 0;
    for (Py_ssize_t i = 0; !rc && i < PyList_GET_SIZE(items); i++) {
        PyObject *kv = PyList_GET_ITEM(items, i);
        rc = param_set_obj(model, p, PyTuple_GET_ITEM(kv, 0), PyTuple_GET_ITEM(kv, 1));
    }
    Py_DECREF(items);
    return rc;
}

int model_arg(PyObject *obj, shoal_model *m)
{
    if (!obj || obj == Py_None)
        return 0;
    if (!PyUnicode_Check(obj)) {
        PyErr_SetString(PyExc_TypeError, "model: a model name (shoal.models() lists them)");
        return -1;
    }
    PyObject *keep;
    const char *name = c_text(obj, &keep);
    if (!name)
        return -1;
    shoal_error e;
    shoal_status st = shoal_model_parse(name, m, &e);
    Py_DECREF(keep);
    return st ? (raise_status(&e), -1) : 0;
}

int vec3_arg(PyObject *obj, const char *what, float out[3])
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
int desc_args(PyObject *model_obj, PyObject *scene_obj, Py_ssize_t count, int keep_geometry,
              PyObject *params, shoal_sim_desc *d, shoal_scene *scene)
{
    shoal_error e;
    shoal_model m = shoal_sim_desc_default().model;
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

int path_arg(PyObject *obj, PyObject **bytes) { return PyUnicode_FSConverter(obj, bytes) ? 0 : -1; }

/* ---- statistics dicts ------------------------------------------------------------------ */

static PyObject *triple(const double v[3]) { return Py_BuildValue("(ddd)", v[0], v[1], v[2]); }

/* shoal.Stats (__init__.py registers it): a dict that reads "polarisation" as "polarization". */
static PyObject *stats_class;

static PyObject *mod_set_stats_class(PyObject *m, PyObject *cls)
{
    (void)m;
    Py_INCREF(cls);
    Py_XSETREF(stats_class, cls);
    Py_RETURN_NONE;
}

/* The package's own assets (shoal/assets, installed with it; the package sets it on import):
 * looked in first, then where the library looks (shoal_io_asset_path: $SHOAL_ASSETS, the
 * installed share/shoal, the source tree of a build). */
static char assets_dir[SHOAL_PATH_MAX];

static PyObject *mod_set_assets(PyObject *m, PyObject *dir)
{
    (void)m;
    PyObject *b;
    if (path_arg(dir, &b))
        return NULL;
    snprintf(assets_dir, sizeof assets_dir, "%s", PyBytes_AS_STRING(b));
    Py_DECREF(b);
    Py_RETURN_NONE;
}

int asset_find(const char *name, char *out, size_t size)
{
    if (assets_dir[0]) {
        int n = snprintf(out, size, "%s/%s", assets_dir, name);
        if (n > 0 && (size_t)n < size && access(out, R_OK) == 0)
            return 1;
    }
    return shoal_io_asset_path(name, out, size);
}

shoal_status asset_mesh(const char *name, shoal_mesh *mesh, shoal_error *e)
{
    char path[SHOAL_PATH_MAX];
    if (assets_dir[0] && asset_find(name, path, sizeof path))
        return shoal_mesh_load(path, mesh, e);
    return shoal_mesh_load_asset(name, mesh, e);
}

PyDoc_STRVAR(scene_path_doc,
             "scene_path(name)\n--\n\n"
             "The path of one of shoal's scenes: \"school\" (the default school, what `shoal run` "
             "starts) or a model's (its name, as shoal.models() lists them; also \"school.ini\"), found in the "
             "installed package, as `shoal run --model` finds them. For Simulation(scene=...). "
             "FileError when there is none of that name.");
static PyObject *mod_scene_path(PyObject *m, PyObject *arg)
{
    (void)m;
    if (!PyUnicode_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "scene_path: a name such as \"school\"");
        return NULL;
    }
    PyObject *keep;
    const char *name = c_text(arg, &keep);
    if (!name)
        return NULL;
    size_t n = strlen(name);
    char rel[512], path[SHOAL_PATH_MAX];
    int ok = n > 0 && n < 200 && !strchr(name, '/');
    if (ok) {
        snprintf(rel, sizeof rel, "scenes/%s%s", name,
                 n > 4 && strcmp(name + n - 4, ".ini") == 0 ? "" : ".ini");
        ok = asset_find(rel, path, sizeof path);
    }
    PyObject *out = NULL;
    if (ok)
        out = PyUnicode_DecodeFSDefault(path);
    else
        PyErr_Format(FileError,
                     "scene '%s': not found (shoal's scenes: school and one per model; looked in "
                     "the package, $SHOAL_ASSETS, ./assets and the installed share/shoal)",
                     name);
    Py_DECREF(keep);
    return out;
}

PyMethodDef util_functions[] = {
    {"_set_stats_class", (PyCFunction)mod_set_stats_class, METH_O,
     "The class of the statistics dicts (shoal.Stats; set by the package on import)."},
    {"_set_assets", (PyCFunction)mod_set_assets, METH_O,
     "The package's assets directory, looked in first (set by the package on import)."},
    {"scene_path", (PyCFunction)mod_scene_path, METH_O, scene_path_doc},
    {NULL, NULL, 0, NULL},
};

/* The statistics of shoal_stats as a shoal.Stats dict: the keys of `shoal compare --json`'s
 * statistics, polarisation spelt "polarization" as the sweep table spells it (the other
 * spelling read too). */
PyObject *stats_dict(const shoal_stats *s)
{
    PyObject *c = triple(s->centroid), *x = triple(s->extent), *lo = triple(s->bbox_min),
             *hi = triple(s->bbox_max);
    PyObject *d = Py_BuildValue(
        "{s:n,s:n,s:d,s:d,s:d,s:d,s:d,s:d,s:K,s:d,s:O,s:O,s:O,s:O,s:d}", "count",
        (Py_ssize_t)s->count, "nonfinite", (Py_ssize_t)s->nonfinite, "radius", s->radius,
        "polarization", s->polarisation, "milling", s->milling, "mean_speed", s->mean_speed,
        "mean_nn_distance", s->mean_nn_distance, "mean_neighbors", s->mean_neighbors, "group_count",
        (unsigned long long)s->group_count, "largest_group_fraction", s->largest_group_fraction,
        "centroid", c, "extent", x, "bbox_min", lo, "bbox_max", hi, "radius_of_gyration",
        s->radius_of_gyration);
    Py_XDECREF(c);
    Py_XDECREF(x);
    Py_XDECREF(lo);
    Py_XDECREF(hi);
    if (d && stats_class) {
        PyObject *o = PyObject_CallOneArg(stats_class, d);
        Py_DECREF(d);
        d = o;
    }
    return d;
}

/* radius: None gives the model's interaction radius (steer's without a model), as
 * `shoal compare` does. */
int stats_desc_args(PyObject *radius, PyObject *model_obj, int threads, shoal_stats_desc *sd)
{
    *sd = shoal_stats_desc_default();
    sd->thread_count = threads;
    if (radius && radius != Py_None) {
        sd->radius = PyFloat_AsDouble(radius);
        return sd->radius == -1.0 && PyErr_Occurred() ? -1 : 0;
    }
    shoal_model m = shoal_sim_desc_default().model;
    if (model_arg(model_obj, &m))
        return -1;
    shoal_params p;
    shoal_params_default(m, &p);
    sd->radius = shoal_params_interaction_radius(m, &p);
    return 0;
}

shoal_status stats_of(const float *rows, size_t n, const shoal_stats_desc *sd, shoal_stats *out,
                      shoal_error *e)
{
    shoal_status st;
    Py_BEGIN_ALLOW_THREADS st = shoal_stats_compute(rows, n, sd, out, e);
    Py_END_ALLOW_THREADS return st;
}
