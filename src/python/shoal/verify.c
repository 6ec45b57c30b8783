/* SPDX-License-Identifier: MIT */
/* shoal._verify_run: the engine of shoal.verify. The library reads the trajectory
 * (shoal_traj_open for a path, shoal_traj_wrap for an array), matches ids, verifies it pair
 * by pair (shoal_verify_run) and writes each step's report as `shoal verify --json` does
 * (shoal_verify_write_json_step): the program and the package share every refusal, every
 * verdict and the schema. Ctrl-C stops it within a fraction of a second. */
#include "module.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Each step's JSON text, collected while the GIL is released (the callback touches no
 * Python object). */
typedef struct texts {
    char **items;
    size_t count, cap;
    int failed;
} texts;

static char **realloc_items(texts *t)
{
    size_t cap = t->cap ? 2 * t->cap : 64;
    char **n = realloc(t->items, cap * sizeof *n);
    if (n)
        t->cap = cap;
    else
        return NULL;
    return n;
}

static int on_step(void *ctx, const shoal_verify_report *r, int64_t step, const double *ids)
{
    texts *t = ctx;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        t->failed = 1;
        return 1;
    }
    shoal_verify_write_json_step(f, r, step, ids, 0);
    if (fclose(f) != 0) {
        free(buf);
        t->failed = 1;
        return 1;
    }
    if (t->count == t->cap) {
        char **grown = realloc_items(t);
        if (!grown) {
            free(buf);
            t->failed = 1;
            return 1;
        }
        t->items = grown;
    }
    t->items[t->count++] = buf;
    return 0;
}

PyDoc_STRVAR(verify_run_doc,
             "_verify_run(source, layout, ids, model, scene, params, dt, t0, seed, reference, "
             "worst, threads, targets, first, steps)\n--\n\n"
             "shoal.verify's engine: source is a path (str, bytes or os.PathLike) or a "
             "C-contiguous float64 (T, N, 6|7) array; ids a float64 (N,) or (T, N) array or "
             "None; targets a float64 (K, 3) or (T, K, 3) array or None. Returns the JSON text "
             "of each step's report, as `shoal verify --json` writes it.");
static PyObject *mod_verify_run(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *source, *layout_obj, *ids_obj, *model, *scene_obj, *params, *dt, *t0, *seed,
        *targets_obj, *steps_obj;
    const char *reference;
    int worst, threads;
    Py_ssize_t first;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOsiiOnO", &source, &layout_obj, &ids_obj, &model,
                          &scene_obj, &params, &dt, &t0, &seed, &reference, &worst, &threads,
                          &targets_obj, &first, &steps_obj))
        return NULL;
    shoal_verify_run_desc rd = shoal_verify_run_desc_default();
    if (strcmp(reference, "f32") == 0)
        rd.verify.reference = SHOAL_VERIFY_F32;
    else if (strcmp(reference, "f64") == 0)
        rd.verify.reference = SHOAL_VERIFY_F64;
    else
        return PyErr_Format(InputError, "reference '%s': expected \"f32\" or \"f64\"", reference);
    if (worst < 1 || worst > SHOAL_VERIFY_MAX_WORST)
        return PyErr_Format(InputError, "worst %d: expected 1..%d", worst, SHOAL_VERIFY_MAX_WORST);
    if (first < 0)
        return PyErr_Format(InputError, "first %zd: expected a state >= 0", first);
    Py_ssize_t steps = 0;
    if (steps_obj != Py_None) {
        steps = PyNumber_AsSsize_t(steps_obj, PyExc_OverflowError);
        if (steps == -1 && PyErr_Occurred())
            return NULL;
        if (steps < 1)
            return PyErr_Format(InputError, "steps %zd: expected at least 1 pair", steps);
    }
    rd.first = (size_t)first;
    rd.steps = (size_t)steps;

    shoal_traj *t = NULL;
    shoal_scene *sc = calloc(1, sizeof *sc);
    PyArrayObject *arr = NULL, *ids = NULL, *tg = NULL;
    PyObject *path = NULL, *layout = NULL, *out = NULL;
    texts tx = {NULL, 0, 0, 0};
    shoal_error e;
    shoal_status st = SHOAL_OK;
    if (!sc) {
        PyErr_NoMemory();
        goto done;
    }
    /* the trajectory */
    if (PyArray_Check(source)) {
        arr = (PyArrayObject *)PyArray_FROMANY(source, NPY_FLOAT64, 3, 3,
                                               NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
        if (!arr)
            goto done;
        st = shoal_traj_wrap(PyArray_DATA(arr), (size_t)PyArray_DIM(arr, 0),
                             (size_t)PyArray_DIM(arr, 1), (size_t)PyArray_DIM(arr, 2), &t, &e);
    } else {
        const char *lay = NULL;
        if (layout_obj != Py_None) {
            if (!PyUnicode_Check(layout_obj)) {
                PyErr_SetString(PyExc_TypeError, "layout: a text such as \"vp\" or \"8:0:3:7\"");
                goto done;
            }
            if (!(lay = c_text(layout_obj, &layout)))
                goto done;
        }
        if (path_arg(source, &path))
            goto done;
        st = shoal_traj_open(PyBytes_AS_STRING(path), lay, &t, &e);
    }
    if (!st && ids_obj != Py_None) {
        ids = (PyArrayObject *)PyArray_FROMANY(ids_obj, NPY_FLOAT64, 1, 2,
                                               NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
        if (!ids)
            goto done;
        int nd = PyArray_NDIM(ids);
        st = shoal_traj_set_ids(t, PyArray_DATA(ids), nd == 2 ? (size_t)PyArray_DIM(ids, 0) : 1,
                                (size_t)PyArray_DIM(ids, nd - 1), "ids", &e);
    }
    if (!st && targets_obj != Py_None) {
        tg = (PyArrayObject *)PyArray_FROMANY(targets_obj, NPY_FLOAT64, 2, 3,
                                              NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
        if (!tg)
            goto done;
        int nd = PyArray_NDIM(tg);
        if (PyArray_DIM(tg, nd - 1) != 3) {
            PyErr_Format(InputError,
                         "targets: expected (K, 3) or (T, K, 3), not %d dimensions "
                         "ending in %zd",
                         nd, (Py_ssize_t)PyArray_DIM(tg, nd - 1));
            goto done;
        }
        rd.targets = PyArray_DATA(tg);
        rd.target_frames = nd == 3 ? (size_t)PyArray_DIM(tg, 0) : 1;
        rd.target_count = (size_t)PyArray_DIM(tg, nd - 2);
    }
    if (st) {
        raise_status(&e);
        goto done;
    }
    /* the rules: defaults < the manifest < the scene < what was given */
    shoal_model mdl = shoal_sim_desc_default().model;
    if (model_arg(model, &mdl))
        goto done;
    if (scene_obj != Py_None) {
        PyObject *b;
        if (path_arg(scene_obj, &b))
            goto done;
        st = shoal_scene_load(PyBytes_AS_STRING(b), sc, &e);
        Py_DECREF(b);
    }
    shoal_sim_desc *d = &rd.verify.sim;
    if (!st)
        st = shoal_traj_verify_desc(t, scene_obj != Py_None ? sc : NULL, model != Py_None, mdl, d,
                                    &e);
    if (st) {
        raise_status(&e);
        goto done;
    }
    if (apply_params(d->model, &d->params, params))
        goto done;
    if (dt != Py_None && (d->dt_s = PyFloat_AsDouble(dt)) == -1.0 && PyErr_Occurred())
        goto done;
    if (t0 != Py_None && (d->t0_s = PyFloat_AsDouble(t0)) == -1.0 && PyErr_Occurred())
        goto done;
    if (seed != Py_None) {
        unsigned long long v;
        if (seed_arg(seed, "seed", &v))
            goto done;
        d->seed = v;
    }
    if (shoal_params_validate(d->model, &d->params, &e)) {
        raise_status(&e);
        goto done;
    }
    d->thread_count = threads;
    rd.verify.worst_count = worst;
    rd.scene = sc;
    rd.on_step = on_step;
    rd.ctx = &tx;
    const volatile int *cancel = cancel_begin();
    rd.cancel = cancel;
    Py_BEGIN_ALLOW_THREADS st = shoal_verify_run(t, &rd, NULL, &e);
    Py_END_ALLOW_THREADS int interrupted = cancel_end(cancel);
    if (interrupted < 0)
        goto done;
    if (st == SHOAL_ERR_CANCELLED && !tx.failed) {
        PyErr_SetNone(PyExc_KeyboardInterrupt); /* Python's handler raised nothing */
        goto done;
    }
    if (tx.failed) {
        PyErr_NoMemory();
        goto done;
    }
    if (st) {
        raise_status(&e);
        goto done;
    }
    out = PyList_New((Py_ssize_t)tx.count);
    for (size_t i = 0; out && i < tx.count; i++) {
        PyObject *s = PyUnicode_FromString(tx.items[i]);
        if (!s) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, (Py_ssize_t)i, s);
    }
done:
    for (size_t i = 0; i < tx.count; i++)
        free(tx.items[i]);
    free(tx.items);
    shoal_traj_close(t);
    free(sc);
    Py_XDECREF(arr);
    Py_XDECREF(ids);
    Py_XDECREF(tg);
    Py_XDECREF(path);
    Py_XDECREF(layout);
    return out;
}

PyMethodDef verify_functions[] = {
    {"_verify_run", (PyCFunction)mod_verify_run, METH_VARARGS, verify_run_doc},
    {NULL, NULL, 0, NULL},
};
