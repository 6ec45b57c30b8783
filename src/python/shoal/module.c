/* SPDX-License-Identifier: MIT */
/* shoal._shoal: the Python extension module (the package `shoal` re-exports it): its
 * exceptions, types and functions. A client of the public C API only (shoal/shoal.h), so the
 * module gives the command line's bits. The files of the extension share module.h. */
#define SHOAL_PY_IMPORT_ARRAY
#include "module.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

static PyMethodDef module_methods[] = {
    {"gpu_available", (PyCFunction)mod_gpu_available, METH_NOARGS, gpu_available_doc},
    {"models", (PyCFunction)mod_models, METH_NOARGS, models_doc},
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
    cancel_init();
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
    PyMethodDef *tables[] = {files_functions, params_functions, renderer_functions,
                             sweep_functions, util_functions,   verify_functions};
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
        if (PyModule_AddFunctions(m, tables[i]))
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
