/* SPDX-License-Identifier: MIT */
/* shoal.Renderer, shoal.render and shoal.write_png: the software renderer on NumPy states,
 * images as (h, w, 3) uint8 arrays. */
#include "module.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- rendering ------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD shoal_renderer *r;
    float fish_length; /* the margin when a frame frames the school */
    int busy;
} RendererObject;

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

/* As a Simulation's (sim_check, sim_claim): refused when not initialised or in use by
 * another call; claimed before any argument is converted. */
static int renderer_check(const RendererObject *r)
{
    if (r->busy) {
        PyErr_SetString(PyExc_RuntimeError,
                        "the renderer is busy: another call uses it (in another thread, or the "
                        "call whose argument ran this code)");
        return -1;
    }
    if (!r->r) {
        PyErr_SetString(PyExc_RuntimeError, "the renderer was not initialised");
        return -1;
    }
    return 0;
}

static int renderer_claim(RendererObject *r)
{
    if (renderer_check(r))
        return -1;
    r->busy = 1;
    return 0;
}

static void renderer_dealloc(RendererObject *r)
{
    shoal_render_destroy(r->r);
    Py_TYPE(r)->tp_free((PyObject *)r);
}

static int renderer_init_claimed(RendererObject *self, PyObject *size, double fish_length,
                                 const char *shade, int lod, int threads, const char *simd,
                                 int occlusion);

static int renderer_init(RendererObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"size",    "fish_length", "shade",     "lod",
                             "threads", "simd",        "occlusion", NULL};
    PyObject *size = Py_None;
    double fish_length = 1.0;
    const char *shade = "lit", *simd = "auto";
    int lod = 1, threads = 0, occlusion = 1;
    if (self->busy) /* (renderer_check's words) */
        return renderer_check(self);
    self->busy = 1; /* the arguments' conversions may run Python code that reaches self */
    int rc = -1;
    if (PyArg_ParseTupleAndKeywords(args, kw, "|Odspisp", kwlist, &size, &fish_length, &shade, &lod,
                                    &threads, &simd, &occlusion))
        rc = renderer_init_claimed(self, size, fish_length, shade, lod, threads, simd, occlusion);
    self->busy = 0;
    return rc;
}

/* A new renderer for the arguments; the old one (a second __init__) is replaced only when
 * the new one was made, so a failed __init__ leaves a working renderer working. */
static int renderer_init_claimed(RendererObject *self, PyObject *size, double fish_length,
                                 const char *shade, int lod, int threads, const char *simd,
                                 int occlusion)
{
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
    d.thread_count = threads;
    shoal_error e;
    if (shoal_isa_parse(simd, &d.isa, &e)) {
        raise_status(&e);
        return -1;
    }
    /* the renderer takes meshes: shoal's own fish (and, lit with LOD, its reduced and coarse
     * forms), read by io from the assets as `shoal render` reads them, lent to create (which
     * copies them) and freed */
    shoal_mesh fish, lod_mesh, coarse;
    memset(&lod_mesh, 0, sizeof lod_mesh);
    memset(&coarse, 0, sizeof coarse);
    shoal_status st = asset_mesh("fish.obj", &fish, &e);
    if (!st && d.shade == SHOAL_SHADE_LIT && d.lod) {
        st = asset_mesh("fish_lod1.obj", &lod_mesh, &e);
        if (!st)
            st = asset_mesh("fish_lod2.obj", &coarse, &e);
        d.lod_mesh = &lod_mesh;
        d.lod_coarse_mesh = &coarse;
    }
    d.mesh = &fish;
    shoal_renderer *made = NULL;
    if (!st)
        st = shoal_render_create(&d, &made, &e);
    shoal_mesh_free(&fish);
    shoal_mesh_free(&lod_mesh);
    shoal_mesh_free(&coarse);
    if (st) {
        raise_status(&e);
        return -1;
    }
    shoal_render_destroy(self->r);
    self->r = made;
    self->fish_length = d.fish_length;
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

static PyObject *render_claimed(RendererObject *self, PyObject *state, PyObject *eye,
                                PyObject *target, PyObject *color, PyObject *group, double fov_deg);

/* Draw `state` and return the image as a new (h, w, 3) uint8 array. */
static PyObject *render_state(RendererObject *self, PyObject *state, PyObject *eye,
                              PyObject *target, PyObject *color, PyObject *group, double fov_deg)
{
    if (renderer_claim(self)) /* before the conversions: NumPy's copy may release the GIL */
        return NULL;
    PyObject *img = render_claimed(self, state, eye, target, color, group, fov_deg);
    self->busy = 0;
    return img;
}

static PyObject *render_claimed(RendererObject *self, PyObject *state, PyObject *eye,
                                PyObject *target, PyObject *color, PyObject *group, double fov_deg)
{
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
    Py_BEGIN_ALLOW_THREADS st = shoal_render_frame_rows(
        self->r, PyArray_DATA(rows), n, groups ? (const uint8_t *)PyArray_DATA(groups) : NULL,
        colors, &cam, &e);
    Py_END_ALLOW_THREADS if (st)
    {
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
    if (renderer_check(self))
        return NULL;
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
    if (renderer_check(self))
        return NULL;
    shoal_framebuffer fb = shoal_render_framebuffer(self->r);
    return Py_BuildValue("(ii)", fb.width, fb.height);
}

static int renderer_set_size(RendererObject *self, PyObject *v, void *c)
{
    (void)c;
    if (!v || v == Py_None) {
        PyErr_SetString(PyExc_TypeError,
                        v ? "size: expected (width, height)" : "size cannot be deleted");
        return -1;
    }
    if (renderer_claim(self)) /* the tuple's items may run Python code */
        return -1;
    int w, h, rc = size_arg(v, &w, &h);
    shoal_error e;
    if (!rc && shoal_render_set_size(self->r, w, h, &e)) {
        raise_status(&e);
        rc = -1;
    }
    self->busy = 0;
    return rc;
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

PyTypeObject RendererType = {
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

PyMethodDef renderer_functions[] = {
    {"render", (PyCFunction)(void (*)(void))mod_render, METH_VARARGS | METH_KEYWORDS, render_doc},
    {"write_png", (PyCFunction)mod_write_png, METH_VARARGS, write_png_doc},
    {NULL, NULL, 0, NULL},
};
