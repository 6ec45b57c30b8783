/* SPDX-License-Identifier: MIT */
/* What a Simulation says of its school beyond the state: the flock statistics, per-boid
 * neighbour counts and group labels (the library's, in the sim's world), the predators, the
 * steps done, the scene's camera; and the observation loop that Simulation.collect and
 * shoal.animate run on (the package's Python builds their tables and frames). Each method
 * claims the simulation as simulation.c's do; the loop claims it for the whole run, so
 * no other call steps or changes the school between two of its records. */
#include "module.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

PyObject *collect_impl;

unsigned long long sim_steps_done(const SimObject *s)
{
    if (s->sim) {
        shoal_sim_checkpoint ck;
        shoal_sim_get_checkpoint(s->sim, &ck);
        return (unsigned long long)ck.steps_done;
    }
    /* the GPU sim's time is t0 + steps * dt in double: the count comes back exactly */
    double k = (shoal_gpu_sim_time(s->gpu) - s->desc.t0_s) / s->desc.dt_s;
    return k > 0 ? (unsigned long long)llround(k) : 0;
}

int sim_stats_desc(const SimObject *s, PyObject *radius, int threads, shoal_stats_desc *sd)
{
    const shoal_sim_desc *d = sim_desc(s);
    *sd = shoal_stats_desc_default();
    sd->thread_count = threads;
    sd->world = d->world;
    sd->radius = shoal_params_interaction_radius(d->model, &d->params);
    if (radius && radius != Py_None && (sd->radius = PyFloat_AsDouble(radius)) == -1.0 &&
        PyErr_Occurred())
        return -1;
    return 0;
}

PyObject *sim_predators_claimed(SimObject *s)
{
    float pos[SHOAL_MAX_PREDATORS * 3], vel[SHOAL_MAX_PREDATORS * 3];
    size_t k = s->gpu ? shoal_gpu_sim_predators(s->gpu, pos, vel, SHOAL_MAX_PREDATORS)
                      : shoal_sim_predators(s->sim, pos, vel, SHOAL_MAX_PREDATORS);
    if (k > SHOAL_MAX_PREDATORS)
        k = SHOAL_MAX_PREDATORS;
    PyArrayObject *a = new_rows(k);
    if (a) {
        float *o = PyArray_DATA(a);
        for (size_t j = 0; j < k; j++) {
            memcpy(o + 6 * j, pos + 3 * j, 3 * sizeof(float));
            memcpy(o + 6 * j + 3, vel + 3 * j, 3 * sizeof(float));
        }
    }
    return (PyObject *)a;
}

/* The state and the statistics desc of radius= and threads=, taken with the sim claimed
 * (radius's __float__ may run Python code); the statistics are then of the copy. */
static PyArrayObject *rows_and_desc(SimObject *s, PyObject *radius, int threads,
                                    shoal_stats_desc *sd)
{
    if (sim_claim(s))
        return NULL;
    PyArrayObject *rows = (PyArrayObject *)sim_rows_claimed(s);
    if (rows && sim_stats_desc(s, radius, threads, sd))
        Py_CLEAR(rows);
    sim_release(s);
    return rows;
}

const char sim_stats_doc[] =
    "stats(radius=None, threads=0)\n--\n\n"
    "The flock statistics of the current state as a dict (polarization, milling, mean_speed, "
    "mean_nn_distance, mean_neighbors, group_count, largest_group_fraction, centroid, extent, "
    "bbox_min, bbox_max, radius_of_gyration, count, nonfinite, radius), in the simulation's "
    "world (a periodic one: minimum-image distances, circular centre). radius (neighbours and "
    "groups) defaults to the model's interaction radius.";
PyObject *sim_stats(SimObject *s, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"radius", "threads", NULL};
    PyObject *radius = Py_None;
    int threads = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|Oi", kwlist, &radius, &threads))
        return NULL;
    shoal_stats_desc sd;
    PyArrayObject *rows = rows_and_desc(s, radius, threads, &sd);
    if (!rows)
        return NULL;
    shoal_stats out;
    shoal_error e;
    shoal_status st = stats_of(PyArray_DATA(rows), (size_t)PyArray_DIM(rows, 0), &sd, &out, &e);
    Py_DECREF(rows);
    if (st)
        return raise_status(&e);
    return stats_dict(&out);
}

static PyObject *sim_per_boid(SimObject *s, PyObject *args, PyObject *kw, int labels)
{
    static char *kwlist[] = {"radius", "threads", NULL};
    PyObject *radius = Py_None;
    int threads = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|Oi", kwlist, &radius, &threads))
        return NULL;
    shoal_stats_desc sd;
    PyArrayObject *rows = rows_and_desc(s, radius, threads, &sd);
    if (!rows)
        return NULL;
    PyObject *out = per_boid_array(PyArray_DATA(rows), (size_t)PyArray_DIM(rows, 0), &sd, labels);
    Py_DECREF(rows);
    return out;
}

const char sim_neighbor_counts_doc[] =
    "neighbor_counts(radius=None, threads=0)\n--\n\n"
    "Per boid, the number of other boids within radius (the model's interaction radius by "
    "default; a periodic world: by the minimum image), as a new (N,) int64 array, row i = "
    "boid i. Its mean is stats()[\"mean_neighbors\"] exactly.";
PyObject *sim_neighbor_counts(SimObject *s, PyObject *args, PyObject *kw)
{
    return sim_per_boid(s, args, kw, 0);
}

const char sim_group_labels_doc[] =
    "group_labels(radius=None, threads=0)\n--\n\n"
    "Per boid, its group (the connected components of \"neighbours within radius\" that "
    "stats() counts in group_count) as a new (N,) int64 array: 0 is the largest group, 1 the "
    "next, groups of one size in the order of their first row. Labels are of this state "
    "alone: a group need not keep its label from one step to the next. "
    "Renderer.frame(group=labels) colours the 8 largest groups apart.";
PyObject *sim_group_labels(SimObject *s, PyObject *args, PyObject *kw)
{
    return sim_per_boid(s, args, kw, 1);
}

PyObject *sim_get_predators(SimObject *s, void *c)
{
    (void)c;
    if (sim_claim(s))
        return NULL;
    PyObject *a = sim_predators_claimed(s);
    sim_release(s);
    return a;
}

PyObject *sim_get_steps_done(SimObject *s, void *c)
{
    (void)c;
    if (sim_check(s))
        return NULL;
    return PyLong_FromUnsignedLongLong(sim_steps_done(s));
}

static PyObject *vec3_obj(const float v[3])
{
    PyObject *x = float32_obj(v[0]), *y = float32_obj(v[1]), *z = float32_obj(v[2]);
    PyObject *t = x && y && z ? PyTuple_Pack(3, x, y, z) : NULL;
    Py_XDECREF(x);
    Py_XDECREF(y);
    Py_XDECREF(z);
    return t;
}

PyObject *sim_get_camera(SimObject *s, void *c)
{
    (void)c;
    if (sim_check(s))
        return NULL;
    const SimCamera *k = &s->camera;
    PyObject *eye = k->has_eye ? vec3_obj(k->eye) : (Py_INCREF(Py_None), Py_None);
    PyObject *target = k->has_eye ? vec3_obj(k->target) : (Py_INCREF(Py_None), Py_None);
    PyObject *fov = float32_obj(k->fov_deg), *len = float32_obj(k->fish_length);
    PyObject *d =
        eye && target && fov && len
            ? Py_BuildValue("{s:O,s:O,s:O,s:O,s:O}", "eye", eye, "target", target, "fov_deg", fov,
                            "fish_length", len, "follow", k->follow ? Py_True : Py_False)
            : NULL;
    Py_XDECREF(eye);
    Py_XDECREF(target);
    Py_XDECREF(fov);
    Py_XDECREF(len);
    return d;
}

/* One record of the loop: fn(step, time, state, predators, stats, labels), the statistics
 * and the labels (of desc sd) when asked for, else None. */
static int observe_one(SimObject *s, PyObject *fn, const shoal_stats_desc *sd, int want_stats,
                       int want_labels)
{
    PyObject *rows = sim_rows_claimed(s), *pred = rows ? sim_predators_claimed(s) : NULL;
    PyObject *st = NULL, *labels = NULL;
    int rc = -1;
    if (!pred)
        goto done;
    const float *r = PyArray_DATA((PyArrayObject *)rows);
    size_t n = (size_t)PyArray_DIM((PyArrayObject *)rows, 0);
    if (want_stats) {
        shoal_stats out;
        shoal_error e;
        if (stats_of(r, n, sd, &out, &e)) {
            raise_status(&e);
            goto done;
        }
        if (!(st = stats_dict(&out)))
            goto done;
    }
    if (want_labels && !(labels = per_boid_array(r, n, sd, 1)))
        goto done;
    double t = s->gpu ? shoal_gpu_sim_time(s->gpu) : shoal_sim_time(s->sim);
    PyObject *res = PyObject_CallFunction(fn, "KdOOOO", sim_steps_done(s), t, rows, pred,
                                          st ? st : Py_None, labels ? labels : Py_None);
    if (res) {
        Py_DECREF(res);
        rc = 0;
    }
done:
    Py_XDECREF(rows);
    Py_XDECREF(pred);
    Py_XDECREF(st);
    Py_XDECREF(labels);
    return rc;
}

const char sim_observe_doc[] =
    "_observe(steps, every, fn, stats=False, labels=False, radius=None, threads=0, skip=0)\n--\n\n"
    "The loop under collect and animate: with the simulation claimed throughout, calls "
    "fn(step, time, state, predators, stats, labels) now and after every `every` steps up to "
    "`steps` (and after the last), stepping in between (Ctrl-C stops it). stats: the "
    "statistics dict of each state (skip: shoal_stats_desc.skip bits), labels: its group "
    "labels, in the simulation's world, else None. An exception from fn ends it.";
PyObject *sim_observe(SimObject *s, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"steps",  "every",   "fn",   "stats", "labels",
                             "radius", "threads", "skip", NULL};
    long long steps, every;
    PyObject *fn, *radius = Py_None;
    int want_stats = 0, want_labels = 0, threads = 0;
    unsigned int skip = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "LLO|ppOiI", kwlist, &steps, &every, &fn,
                                     &want_stats, &want_labels, &radius, &threads, &skip))
        return NULL;
    if (steps < 0 || every < 1) {
        PyErr_SetString(PyExc_ValueError,
                        steps < 0 ? "steps: expected >= 0" : "every: expected >= 1");
        return NULL;
    }
    if (!PyCallable_Check(fn)) {
        PyErr_SetString(PyExc_TypeError, "fn: expected a callable");
        return NULL;
    }
    if (sim_claim(s))
        return NULL;
    shoal_stats_desc sd;
    int rc = sim_stats_desc(s, radius, threads, &sd);
    sd.skip = skip;
    for (long long done = 0; !rc;) {
        if ((rc = observe_one(s, fn, &sd, want_stats, want_labels)))
            break;
        if (done >= steps)
            break;
        long long n = steps - done < every ? steps - done : every;
        rc = sim_step_claimed(s, n);
        done += n;
    }
    sim_release(s);
    if (rc)
        return NULL;
    Py_RETURN_NONE;
}

const char sim_collect_doc[] =
    "collect(steps, every=None, stats=None, reporters=None, radius=None, threads=0, "
    "frame=None)\n--\n\n"
    "Step `steps` times and return a table of the school's statistics at the state now and "
    "after every `every` steps (default steps // 10, at least 1) and the last: a data "
    "collector, as Mesa's DataCollector, that holds the simulation for the whole run. "
    "Columns: step (steps_done), t (simulated time), the statistics named in `stats` "
    "(default the sweep table's: polarization, milling, mean_speed, mean_nn_distance, "
    "group_count, largest_group_fraction, extent_x, extent_y, extent_z; \"all\" for every one; "
    "see shoal.COLLECT_STATS) in the simulation's world with `radius` (default the model's "
    "interaction radius), then one column per reporter: reporters={name: fn} calls fn(state) "
    "with each (N, 6) state. Returns a pandas DataFrame when pandas is importable and frame is "
    "not False (frame=True requires it), else a NumPy structured array. Ctrl-C stops it "
    "(KeyboardInterrupt); the school keeps the steps done.";
PyObject *sim_collect(SimObject *s, PyObject *args, PyObject *kw)
{
    if (!collect_impl) {
        PyErr_SetString(PyExc_RuntimeError, "collect: import the package shoal (it provides it)");
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    PyObject *all = PyTuple_New(n + 1);
    if (!all)
        return NULL;
    Py_INCREF(s);
    PyTuple_SET_ITEM(all, 0, (PyObject *)s);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *a = PyTuple_GET_ITEM(args, i);
        Py_INCREF(a);
        PyTuple_SET_ITEM(all, i + 1, a);
    }
    PyObject *r = PyObject_Call(collect_impl, all, kw);
    Py_DECREF(all);
    return r;
}

static PyObject *mod_set_collect(PyObject *m, PyObject *fn)
{
    (void)m;
    if (!PyCallable_Check(fn)) {
        PyErr_SetString(PyExc_TypeError, "_set_collect: expected a callable");
        return NULL;
    }
    Py_INCREF(fn);
    Py_XSETREF(collect_impl, fn);
    Py_RETURN_NONE;
}

PyMethodDef observe_functions[] = {
    {"_set_collect", (PyCFunction)mod_set_collect, METH_O,
     "The implementation of Simulation.collect (set by the package on import)."},
    {NULL, NULL, 0, NULL},
};
