/* SPDX-License-Identifier: MIT */
/* shoal._verify_steps: the engine of shoal.verify (the library's verifier, one report
 * dict per step with the keys of `shoal verify --json`). */
#include "module.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

PyMethodDef verify_functions[] = {
    {"_verify_steps", (PyCFunction)mod_verify_steps, METH_VARARGS, verify_steps_doc},
    {NULL, NULL, 0, NULL},
};
