/* SPDX-License-Identifier: MIT */
/* shoal.Simulation: one shoal_sim (or CUDA shoal_gpu_sim) and its state as NumPy rows.
 * Steps run with the GIL released. Every method claims the object before it converts its
 * arguments (which may release the GIL, as NumPy's copies do, or run Python code, as a
 * value's __float__ does) and releases it when done, so a second call (another thread's, or
 * one made from that Python code) is refused with RuntimeError, never interleaved. */
#include "module.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the Simulation type --------------------------------------------------------------- */

int sim_check(const SimObject *s)
{
    if (s->busy) {
        PyErr_SetString(PyExc_RuntimeError,
                        "the simulation is busy: another call uses it (in another thread, or the "
                        "call whose argument ran this code)");
        return -1;
    }
    if (!s->sim && !s->gpu) {
        PyErr_SetString(PyExc_RuntimeError, "the simulation was closed");
        return -1;
    }
    return 0;
}

int sim_claim(SimObject *s)
{
    if (sim_check(s))
        return -1;
    s->busy = 1; /* under the GIL, right after the check: no other call gets in between */
    return 0;
}

void sim_release(SimObject *s) { s->busy = 0; }

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

static int sim_init_claimed(SimObject *self, PyObject *model, PyObject *count_obj, PyObject *seed,
                            PyObject *scene, PyObject *params, int threads, const char *backend,
                            PyObject *dt, PyObject *t0, PyObject *state, int keep_geometry,
                            const char *gpu_order, const char *neighbors, const char *simd);

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
    if (self->busy) /* (sim_check's words) */
        return sim_check(self);
    if (self->sim || self->gpu) {
        PyErr_SetString(PyExc_RuntimeError, "Simulation.__init__ called twice");
        return -1;
    }
    self->busy = 1; /* the arguments' conversions may run Python code that reaches self */
    int rc = sim_init_claimed(self, model, count_obj, seed, scene, params, threads, backend, dt, t0,
                              state, keep_geometry, gpu_order, neighbors, simd);
    self->busy = 0;
    return rc;
}

static int sim_init_claimed(SimObject *self, PyObject *model, PyObject *count_obj, PyObject *seed,
                            PyObject *scene, PyObject *params, int threads, const char *backend,
                            PyObject *dt, PyObject *t0, PyObject *state, int keep_geometry,
                            const char *gpu_order, const char *neighbors, const char *simd)
{
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
        unsigned long long v;
        if (seed_arg(seed, "seed", &v))
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
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "step: n must be >= 0");
        return NULL;
    }
    if (sim_claim(s))
        return NULL;
    shoal_error e;
    shoal_status st = SHOAL_OK;
    /* In chunks that grow while they take under 20 ms, each a call of its own: Ctrl-C (the
     * cancel flag) is seen between two chunks, within a step or two. The bits are those of one
     * call. */
    long long done = 0, chunk = 1;
    int interrupted = 0;
    while (!st && done < n && !interrupted) {
        const volatile int *cancel = cancel_begin();
        Py_BEGIN_ALLOW_THREADS while (!st && done < n && !(cancel && *cancel))
        {
            int k = n - done > chunk ? (int)chunk : (int)(n - done);
            uint64_t t = shoal_profile_now_ns();
            st = s->gpu ? shoal_gpu_sim_step(s->gpu, k, &e) : shoal_sim_step(s->sim, k, &e);
            if (!st)
                done += k;
            if (shoal_profile_now_ns() - t < 20000000u && chunk < 1000000)
                chunk *= 2;
        }
        Py_END_ALLOW_THREADS int c = cancel_end(cancel);
        interrupted = c < 0; /* KeyboardInterrupt (or the handler's exception) is raised */
    }
    sim_release(s);
    if (interrupted)
        return NULL;
    if (st)
        return raise_status(&e);
    Py_RETURN_NONE;
}

/* The state as a new array; the caller has claimed the sim. */
static PyObject *rows_claimed(SimObject *s)
{
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

static PyObject *sim_rows(SimObject *s)
{
    if (sim_claim(s))
        return NULL;
    PyObject *a = rows_claimed(s);
    sim_release(s);
    return a;
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
    if (sim_claim(s)) /* before the conversion, which may release the GIL or run __array__ */
        return NULL;
    PyArrayObject *a = state_arg(arg, "state", 0);
    shoal_error e;
    shoal_status st = SHOAL_OK;
    if (a) {
        size_t n = (size_t)PyArray_DIM(a, 0);
        st = s->gpu ? shoal_gpu_sim_set_rows(s->gpu, PyArray_DATA(a), n, &e)
                    : shoal_sim_set_rows(s->sim, PyArray_DATA(a), n, &e);
        Py_DECREF(a);
    }
    sim_release(s);
    if (!a)
        return NULL;
    if (st)
        return raise_status(&e);
    Py_RETURN_NONE;
}

static PyObject *sim_get_time(SimObject *s, void *c)
{
    (void)c;
    if (!s->sim && !s->gpu && !s->busy)
        return PyFloat_FromDouble(NAN);
    if (sim_check(s))
        return NULL;
    return PyFloat_FromDouble(s->gpu ? shoal_gpu_sim_time(s->gpu) : shoal_sim_time(s->sim));
}

static PyObject *sim_get_count(SimObject *s, void *c)
{
    (void)c;
    if (sim_check(s))
        return NULL;
    return PyLong_FromSize_t(sim_count(s));
}

static PyObject *sim_get_model(SimObject *s, void *c)
{
    (void)c;
    if (sim_check(s))
        return NULL;
    return PyUnicode_FromString(shoal_model_name(sim_desc(s)->model));
}

static PyObject *sim_get_seed(SimObject *s, void *c)
{
    (void)c;
    if (sim_check(s))
        return NULL;
    return PyLong_FromUnsignedLongLong(sim_desc(s)->seed);
}

static PyObject *sim_get_dt(SimObject *s, void *c)
{
    (void)c;
    if (sim_check(s))
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
    if (sim_check(s))
        return NULL;
    if (s->gpu)
        return PyUnicode_FromString(shoal_gpu_sim_device_name(s->gpu));
    return PyUnicode_FromFormat("cpu (%s kernels)", shoal_sim_isa_name(s->sim));
}

PyDoc_STRVAR(sim_stats_doc,
             "stats(radius=None, threads=0)\n--\n\n"
             "The flock statistics of the current state as a dict (polarization, milling, "
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
    if (sim_claim(s))
        return NULL;
    PyArrayObject *rows = (PyArrayObject *)rows_claimed(s);
    shoal_stats_desc sd = shoal_stats_desc_default();
    sd.thread_count = threads;
    const shoal_sim_desc *d = sim_desc(s);
    sd.radius = shoal_params_interaction_radius(d->model, &d->params);
    int bad = !rows || (radius != Py_None && (sd.radius = PyFloat_AsDouble(radius)) == -1.0 &&
                        PyErr_Occurred());
    sim_release(s); /* the statistics are of the copy */
    if (bad) {
        Py_XDECREF(rows);
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
        sim_release(s);
        PyErr_SetString(UnsupportedError, "checkpoint: the cuda backend has none (run on cpu)");
        return NULL;
    }
    PyObject *path;
    if (path_arg(arg, &path)) { /* (a PathLike's __fspath__ runs while the sim is claimed) */
        sim_release(s);
        return NULL;
    }
    shoal_error e;
    shoal_status st = shoal_io_checkpoint_write(PyBytes_AS_STRING(path), s->sim, &e);
    Py_DECREF(path);
    sim_release(s);
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
    if (s->busy)
        return sim_check(s), NULL;
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

static PyObject *sim_get_params(SimObject *s, void *c)
{
    (void)c;
    if (sim_check(s))
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
    if (s->busy) /* what it holds is changing: say what is known */
        return PyUnicode_FromFormat("<shoal.Simulation %s, %s (busy)>",
                                    shoal_model_name(s->desc.model), s->gpu ? "cuda" : "cpu");
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

PyTypeObject SimType = {
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
