/* SPDX-License-Identifier: MIT */
/* The obstacle field's build (seed 004), written once for two precisions: field.c includes it
 * for float32 (the field the force kernels and the GPU sample), verify/ref64.c for double (the
 * float64 reference's). The includer defines FB_REAL (float or double), FB_FIELD (field or
 * field64), FB_FN(name) (its names) and FB_FABS, and has FB_FN(field_free). The build is serial, in
 * obstacle then vertex order, so the field's bits never depend on threads. */

/* R = Ry * Rx * Rz (Unity's Euler order: z first, then x, then y), row-major. */
static void FB_FN(rotation_matrix)(const float deg[3], FB_REAL m[9])
{
    const double k = 3.14159265358979323846 / 180.0;
    double cx = cos(deg[0] * k), sx = sin(deg[0] * k);
    double cy = cos(deg[1] * k), sy = sin(deg[1] * k);
    double cz = cos(deg[2] * k), sz = sin(deg[2] * k);
    double r[9] = {cy * cz + sy * sx * sz,  -cy * sz + sy * sx * cz, sy * cx, cx * sz, cx * cz, -sx,
                   -sy * cz + cy * sx * sz, sy * sz + cy * sx * cz,  cy * cx};
    for (int i = 0; i < 9; i++)
        m[i] = (FB_REAL)r[i];
}

static void FB_FN(apply)(const FB_REAL m[9], const shoal_transform *xf, const float in[3],
                         int is_normal, FB_REAL out[3])
{
    FB_REAL r[3];
    for (int i = 0; i < 3; i++)
        r[i] = (m[3 * i] * in[0] + m[3 * i + 1] * in[1]) + m[3 * i + 2] * in[2];
    if (is_normal) {
        memcpy(out, r, sizeof r);
        return;
    }
    /* seed 004: rotate, then scale per world axis, then translate (quirk: Unity's TRS
     * scales first; the two agree for a uniform scale) */
    for (int i = 0; i < 3; i++)
        out[i] = r[i] * xf->scale[i] + xf->position[i];
}

static int32_t FB_FN(field_index)(FB_REAL v, FB_REAL origin, FB_REAL cell, int32_t n)
{
    int32_t i = (int32_t)((v - origin) / cell);
    return i < 0 ? 0 : i >= n ? n - 1 : i;
}

shoal_status FB_FN(field_build)(FB_FIELD *f, const obstacle *obs, size_t obstacle_count,
                                FB_REAL cell, FB_REAL margin, shoal_error *err)
{
    if (obstacle_count == 0) {
        uint64_t b = f->builds;
        FB_FN(field_free)(f);
        memset(f, 0, sizeof *f);
        f->builds = b + 1;
        return SHOAL_OK;
    }
    /* bounds: the transformed vertices plus the margin */
    FB_REAL lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t o = 0; o < obstacle_count; o++) {
        FB_REAL m[9];
        FB_FN(rotation_matrix)(obs[o].xf.rotation_deg, m);
        for (size_t v = 0; v < obs[o].count; v++) {
            FB_REAL w[3];
            FB_FN(apply)(m, &obs[o].xf, obs[o].pos + 3 * v, 0, w);
            for (int c = 0; c < 3; c++) {
                lo[c] = w[c] < lo[c] ? w[c] : lo[c];
                hi[c] = w[c] > hi[c] ? w[c] : hi[c];
            }
        }
    }
    FB_FIELD nf;
    memset(&nf, 0, sizeof nf);
    nf.cell = cell;
    double cells = 1.0;
    for (int c = 0; c < 3; c++) {
        nf.origin[c] = lo[c] - margin;
        double n = floor(((double)hi[c] + margin - nf.origin[c]) / cell) + 1.0;
        if (!(n >= 1.0) || n > 65536.0)
            n = 65537.0; /* reported below */
        nf.dims[c] = (int32_t)n;
        cells *= n;
        nf.hi[c] = nf.origin[c] + (FB_REAL)nf.dims[c] * cell;
    }
    if (cells > (double)SHOAL_FIELD_MAX_CELLS)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "obstacle field of %.0f cells is larger than %d: raise field_cell "
                               "(now %g) or shrink the obstacles",
                               cells, SHOAL_FIELD_MAX_CELLS, (double)cell);
    nf.vec = alloc_array_zero((size_t)cells * 3, sizeof(FB_REAL), "obstacle field", err);
    if (!nf.vec)
        return err ? err->status : SHOAL_ERR_NOMEM;
    const int32_t nx = nf.dims[0], ny = nf.dims[1], nz = nf.dims[2];
    for (size_t o = 0; o < obstacle_count; o++) {
        FB_REAL m[9];
        FB_FN(rotation_matrix)(obs[o].xf.rotation_deg, m);
        for (size_t v = 0; v < obs[o].count; v++) {
            FB_REAL w[3], n[3];
            FB_FN(apply)(m, &obs[o].xf, obs[o].pos + 3 * v, 0, w);
            FB_FN(apply)(m, &obs[o].xf, obs[o].nrm + 3 * v, 1, n);
            int32_t idx[3] = {FB_FN(field_index)(w[0], nf.origin[0], cell, nx),
                              FB_FN(field_index)(w[1], nf.origin[1], cell, ny),
                              FB_FN(field_index)(w[2], nf.origin[2], cell, nz)};
            /* the vertex's own cell gets its normal */
            FB_REAL *d = nf.vec + 3 * ((size_t)idx[0] +
                                       (size_t)nx * ((size_t)idx[1] + (size_t)ny * (size_t)idx[2]));
            d[0] += n[0];
            d[1] += n[1];
            d[2] += n[2];
            /* per axis a: the neighbour the normal points into along a (sign of n_a) gets
             * n * |n_a|, when it is inside the grid; n_a == 0 adds nothing */
            for (int a = 0; a < 3; a++) {
                if (n[a] == 0.0f || !(n[a] == n[a]))
                    continue;
                int32_t j[3] = {idx[0], idx[1], idx[2]};
                j[a] += n[a] > 0.0f ? 1 : -1;
                if (j[a] < 0 || j[a] >= nf.dims[a])
                    continue;
                FB_REAL k = FB_FABS(n[a]);
                FB_REAL *q = nf.vec + 3 * ((size_t)j[0] +
                                           (size_t)nx * ((size_t)j[1] + (size_t)ny * (size_t)j[2]));
                q[0] += n[0] * k;
                q[1] += n[1] * k;
                q[2] += n[2] * k;
            }
        }
    }
    nf.builds = f->builds + 1;
    FB_FN(field_free)(f);
    *f = nf;
    return SHOAL_OK;
}
