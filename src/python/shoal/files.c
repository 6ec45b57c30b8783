/* SPDX-License-Identifier: MIT */
/* shoal.load, shoal.save (state files through the library's readers and writers),
 * shoal.stats and shoal.compare (the library's statistics and state comparison). */
#include "module.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- module functions: files, statistics, comparison ------------------------------------ */

PyDoc_STRVAR(load_doc, "load(path, format=\"auto\")\n--\n\n"
                       "Read a state file as an (N, 6) float32 array, through the library's "
                       "formats table as `shoal step --in` reads it: \"npy\" (float32 or float64, "
                       "shape (N, 6), as `shoal init` writes), \"unity\" (Unity's raw BoidData "
                       "buffer), or \"auto\": by the extension (.bin is Unity's). A NaN or "
                       "infinity is InputError naming row and column, as the command line "
                       "refuses it.");
static PyObject *mod_load(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    static char *kwlist[] = {"path", "format", NULL};
    PyObject *path_obj, *path;
    const char *format = "auto";
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|s", kwlist, &path_obj, &format))
        return NULL;
    if (path_arg(path_obj, &path))
        return NULL;
    float *rows = NULL;
    size_t n = 0;
    shoal_error e;
    shoal_status st = shoal_io_state_read(PyBytes_AS_STRING(path), format, &rows, &n, &e);
    Py_DECREF(path);
    if (st)
        return raise_status(&e);
    PyArrayObject *a = new_rows(n);
    if (a)
        memcpy(PyArray_DATA(a), rows, n * SHOAL_STATE_COLUMNS * sizeof(float));
    free(rows);
    return (PyObject *)a;
}

PyDoc_STRVAR(save_doc, "save(path, state, format=\"auto\")\n--\n\n"
                       "Write an (N, 6) state through the library's formats table, as `shoal "
                       "init --out` and `shoal step --out` do: \"npy\" (version 1.0, '<f4', the "
                       "program's bytes), \"unity\" (Unity's raw buffer), \"vtk\" (a ParaView "
                       ".vtp; \"vtp\" is taken too), or \"auto\": by the extension (.bin, .vtp, "
                       "else .npy). Atomic: a temporary file renamed into place.");
static PyObject *mod_save(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    static char *kwlist[] = {"path", "state", "format", NULL};
    PyObject *path_obj, *state, *path;
    const char *format = "auto";
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|s", kwlist, &path_obj, &state, &format))
        return NULL;
    if (strcmp(format, "vtp") == 0) /* the package's name for it before the table's */
        format = "vtk";
    PyArrayObject *a = state_arg(state, "state", 0);
    if (!a)
        return NULL;
    if (path_arg(path_obj, &path)) {
        Py_DECREF(a);
        return NULL;
    }
    shoal_error e;
    shoal_status st = shoal_io_state_write(PyBytes_AS_STRING(path), format, PyArray_DATA(a),
                                           (size_t)PyArray_DIM(a, 0), NAN, &e);
    Py_DECREF(path);
    Py_DECREF(a);
    if (st)
        return raise_status(&e);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(stats_doc, "stats(state, radius=None, model=None, threads=0)\n--\n\n"
                        "The flock statistics of an (N, 6) state as a dict (the library's "
                        "shoal_stats_compute, what `shoal compare` prints): polarization, "
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

PyMethodDef files_functions[] = {
    {"load", (PyCFunction)(void (*)(void))mod_load, METH_VARARGS | METH_KEYWORDS, load_doc},
    {"save", (PyCFunction)(void (*)(void))mod_save, METH_VARARGS | METH_KEYWORDS, save_doc},
    {"stats", (PyCFunction)(void (*)(void))mod_stats, METH_VARARGS | METH_KEYWORDS, stats_doc},
    {"compare", (PyCFunction)(void (*)(void))mod_compare, METH_VARARGS | METH_KEYWORDS,
     compare_doc},
    {NULL, NULL, 0, NULL},
};
