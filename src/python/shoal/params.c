/* SPDX-License-Identifier: MIT */
/* shoal.Params: the parameters of a running Simulation by name, a mapping onto the
 * model's table (shoal_params_list); and shoal.default_params. */
#include "module.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- parameters: a mapping onto the running model's parameters ---------------------- */

/* The CPU sim's desc is the library's (parameters change); a GPU sim's is the one it was
 * created with (the public GPU API has no desc getter, and its parameters are fixed). */
const shoal_sim_desc *sim_desc(const SimObject *s)
{
    return s->sim ? shoal_sim_get_desc(s->sim) : &s->desc;
}

static float param_value(const shoal_params *p, const shoal_param_info *info)
{
    float v;
    memcpy(&v, (const char *)p + info->offset, sizeof v);
    return v;
}

/* Reading: the sim open and not in use by another call (sim_check). */
static int params_check(ParamsObject *p)
{
    if (sim_check(p->owner))
        return -1;
    if (p->owner->gpu) {
        PyErr_SetString(UnsupportedError,
                        "params: the cuda backend's parameters are fixed at creation (give "
                        "params= to Simulation)");
        return -1;
    }
    return 0;
}

/* Writing: claimed (sim_claim) while the values are converted and set. */
static int params_claim(ParamsObject *p)
{
    if (params_check(p))
        return -1;
    return sim_claim(p->owner);
}

static Py_ssize_t params_len(ParamsObject *p)
{
    if (params_check(p))
        return -1;
    size_t n;
    shoal_params_list(sim_desc(p->owner)->model, &n);
    return (Py_ssize_t)n;
}

static PyObject *params_get(ParamsObject *p, PyObject *key)
{
    if (!PyUnicode_Check(key)) {
        PyErr_SetString(PyExc_TypeError, "parameter names are strings");
        return NULL;
    }
    PyObject *keep;
    const char *name = c_text(key, &keep);
    if (!name)
        return NULL;
    PyObject *out = NULL;
    if (!params_check(p)) {
        const shoal_sim_desc *d = sim_desc(p->owner);
        double v[3];
        size_t k = 0;
        shoal_error e;
        const shoal_param_info *info = shoal_params_find(d->model, name, &k, &e);
        if (!info) /* a mapping's KeyError, with the library's words */
            PyErr_SetString(PyExc_KeyError, e.message);
        else if (shoal_params_get(d->model, &d->params, name, v, 3, &k, &e))
            raise_status(&e);
        else if (k == 3)
            out = Py_BuildValue("(ddd)", v[0], v[1], v[2]);
        else
            out = info->is_integer ? PyLong_FromDouble(v[0]) : PyFloat_FromDouble(v[0]);
    }
    Py_DECREF(keep);
    return out;
}

static int params_set(ParamsObject *p, PyObject *key, PyObject *value)
{
    if (!value) {
        PyErr_SetString(PyExc_TypeError, "parameters cannot be deleted");
        return -1;
    }
    if (params_claim(p)) /* before the value's conversion, which may run Python code */
        return -1;
    const shoal_sim_desc *d = sim_desc(p->owner);
    shoal_params np = d->params;
    shoal_error e;
    int rc = param_set_obj(d->model, &np, key, value);
    if (!rc && shoal_sim_set_params(p->owner->sim, &np, &e)) {
        raise_status(&e);
        rc = -1;
    }
    sim_release(p->owner);
    return rc;
}

static PyObject *params_to_dict(ParamsObject *p, PyObject *unused)
{
    (void)unused;
    if (params_check(p))
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
PyObject *params_update(ParamsObject *p, PyObject *args, PyObject *kw)
{
    PyObject *m = NULL;
    if (!PyArg_ParseTuple(args, "|O", &m) || params_claim(p))
        return NULL;
    const shoal_sim_desc *d = sim_desc(p->owner);
    shoal_params np = d->params;
    shoal_error e;
    int rc = (m && apply_params(d->model, &np, m)) || (kw && apply_params(d->model, &np, kw));
    if (!rc && shoal_sim_set_params(p->owner->sim, &np, &e)) {
        raise_status(&e);
        rc = -1;
    }
    sim_release(p->owner);
    if (rc)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *params_info(ParamsObject *p, PyObject *unused)
{
    (void)unused;
    if (params_check(p))
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

PyTypeObject ParamsType = {
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

PyDoc_STRVAR(default_params_doc,
             "default_params(model)\n--\n\n"
             "{name: {help, min, max, default, integer}}: the model's parameter table.");
static PyObject *mod_default_params(PyObject *m, PyObject *arg)
{
    (void)m;
    shoal_model model = shoal_sim_desc_default().model;
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

PyMethodDef params_functions[] = {
    {"default_params", (PyCFunction)mod_default_params, METH_O, default_params_doc},
    {NULL, NULL, 0, NULL},
};
