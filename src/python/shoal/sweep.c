/* SPDX-License-Identifier: MIT */
/* shoal._sweep_rows: the engine of shoal.sweep (the library's sweep members, the rows of
 * sweep.csv). */
#include "module.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- sweeps ---------------------------------------------------------------------------- */

PyDoc_STRVAR(sweep_rows_doc,
             "_sweep_rows(model, scene, count, keep_geometry, params, vary, seeds, steps, "
             "every, dt, radius, threads)\n--\n\n"
             "The sweep's table as (header, rows): the CSV header line and one text row per "
             "sample, exactly the lines of `shoal sweep`'s sweep.csv (shoal.sweep builds the "
             "array or DataFrame from them).");
/* A seed: an integer in [0, 2^63 - 1], as --seed and --seeds take it (a float is a TypeError,
 * a number out of range the command line's words). */
int seed_arg(PyObject *obj, const char *what, unsigned long long *out)
{
    PyObject *v = PyNumber_Index(obj);
    if (!v)
        return -1;
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (x == -1 && PyErr_Occurred()) {
        Py_DECREF(v);
        return -1;
    }
    if (overflow || x < 0) {
        PyErr_Format(InputError, "%s: '%S' is out of range [0, 9223372036854775807]", what, v);
        Py_DECREF(v);
        return -1;
    }
    Py_DECREF(v);
    *out = (unsigned long long)x;
    return 0;
}

static PyObject *mod_sweep_rows(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *model, *scene, *params, *vary, *dt, *radius, *s0_obj, *s1_obj;
    Py_ssize_t count;
    int keep, threads;
    unsigned long long s0, s1;
    long long steps, every;
    if (!PyArg_ParseTuple(args, "OOnpOOOOLLOOi", &model, &scene, &count, &keep, &params, &vary,
                          &s0_obj, &s1_obj, &steps, &every, &dt, &radius, &threads) ||
        seed_arg(s0_obj, "seeds", &s0) || seed_arg(s1_obj, "seeds", &s1))
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
        const volatile int *cancel = cancel_begin(); /* Ctrl-C stops a member within a step */
        shoal_sweep_set_cancel(sw, cancel);
        Py_BEGIN_ALLOW_THREADS st = shoal_sweep_run_member(sw, k, threads, samples, per, &e);
        Py_END_ALLOW_THREADS shoal_sweep_set_cancel(sw, NULL);
        int interrupted = cancel_end(cancel);
        if (interrupted < 0 || st == SHOAL_ERR_CANCELLED) {
            if (interrupted >= 0) /* Python's handler raised nothing: the member is unfinished */
                PyErr_SetNone(PyExc_KeyboardInterrupt);
            goto done;
        }
        if (st) {
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

PyMethodDef sweep_functions[] = {
    {"_sweep_rows", (PyCFunction)mod_sweep_rows, METH_VARARGS, sweep_rows_doc},
    {NULL, NULL, 0, NULL},
};
