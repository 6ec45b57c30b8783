/* SPDX-License-Identifier: MIT */
/* Periodic and 2D worlds stepped (issue 38, docs/WORLD.md):
 * - the grid against brute force with minimum-image distances: the same neighbour sets for
 *   every boid (boids on the seam and across it, boxes that are not multiples of the cell,
 *   boxes of one, two and three cells per axis, N = 1, every boid in one cell, 2D), and for
 *   every model the walkers' own count of neighbour pairs equal to the all-pairs walk's and
 *   one step within rounding of it;
 * - two boids 1 unit apart across the seam get the velocity change of the same pair in the
 *   middle of the box, to the bit, on every axis and for every model;
 * - 2D: z and vz are exactly +0 after 10,000 steps of every model, with the terms that could
 *   leave the plane switched on (a predator, an obstacle sphere and a boundary centre off the
 *   plane, heading's targets);
 * - identical bytes for 1, 2 and 16 threads and every ISA (this case's: `--isa`), periodic,
 *   partly periodic and 2D, with predators; golden hashes pin the bytes (the GPU's parity
 *   check and other compilers compare against the same);
 * - positions stay in the box; a state given outside it is wrapped in;
 * - checkpoints carry the world, and a resumed run equals one run;
 * - bad input: a periodic box smaller than twice the radius or of size 0, dims not 2 or 3, a
 *   2D state with z or vz not 0: a clear error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "shoal/shoal.h"
#include "sim/sim_internal.h"
#include "tests/cli_harness.h"
#include "tests/scenes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a desc of `model` at its defaults, n boids, in a world */
static shoal_sim_desc world_desc(shoal_model model, size_t n, int dims, const int periodic[3],
                                 const float size[3], const float center[3])
{
    shoal_sim_desc d = shoal_sim_desc_default();
    d.model = model;
    shoal_params_default(model, &d.params);
    d.boid_count = n;
    d.seed = 7;
    d.thread_count = 1;
    d.isa = SHOAL_ISA_SCALAR;
    d.world.dims = dims;
    for (int c = 0; c < 3; c++) {
        d.world.periodic[c] = periodic[c];
        d.world.size[c] = size[c];
        d.world.center[c] = center ? center[c] : 0.0f;
    }
    return d;
}

/* n boids uniform in the box (its lo, its size; z = 0 in 2D), velocities up to vmax */
static float *rows_in_box(size_t n, const float lo[3], const float size[3], int dims, float vmax,
                          uint64_t seed)
{
    float *rows = malloc(n * 6 * sizeof(float));
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
    for (size_t i = 0; i < n * 6; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        float u = (float)(x >> 40) * 0x1p-24f;
        size_t c = i % 6;
        rows[i] = c < 3 ? lo[c] + u * size[c] : (2.0f * u - 1.0f) * vmax;
        if (dims == 2 && (c == 2 || c == 5))
            rows[i] = 0.0f;
    }
    return rows;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The minimum image of a - b on every periodic axis of d's world (sim/world.h's rule). */
static float d2_world(const shoal_sim_desc *d, const float *a, const float *b)
{
    float e[3];
    for (int c = 0; c < 3; c++) {
        e[c] = a[c] - b[c];
        if (shoal_world_axis_periodic(&d->world, c)) {
            float L = d->world.size[c], h = 0.5f * L;
            e[c] = e[c] > h ? e[c] - L : (e[c] < -h ? e[c] + L : e[c]);
        }
    }
    return e[0] * e[0] + e[1] * e[1] + e[2] * e[2];
}

/* every boid's grid neighbours (sim_grid_neighbors) equal brute force's with minimum-image
 * distances; returns the number of neighbour pairs */
static size_t check_sets(const shoal_sim_desc *d, const float *rows)
{
    size_t n = d->boid_count;
    shoal_sim *s;
    shoal_error e;
    if (shoal_sim_create(d, &s, &e))
        fail_msg("%s", e.message);
    assert_int_equal(shoal_sim_set_rows(s, rows, shoal_sim_count(s), NULL), SHOAL_OK);
    float *in = malloc(n * 6 * sizeof(float)); /* as the sim holds them: wrapped */
    assert_int_equal(shoal_sim_get_rows(s, in, shoal_sim_count(s), NULL), SHOAL_OK);
    sim_sort_only(s);
    float radius = shoal_params_interaction_radius(d->model, &d->params);
    float r2 = radius * radius;
    uint32_t *got = malloc(n * sizeof *got), *want = malloc(n * sizeof *want);
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = sim_grid_neighbors(s, (uint32_t)i, radius, got, n);
        size_t m = 0;
        for (size_t j = 0; j < n; j++) {
            float q = d2_world(d, in + i * 6, in + j * 6);
            if (q > 0.0f && q <= r2)
                want[m++] = (uint32_t)j;
        }
        qsort(got, k, sizeof *got, cmp_u32);
        if (k != m || memcmp(got, want, k * sizeof *got) != 0)
            fail_msg("%s, box %g x %g x %g (periodic %d%d%d, dims %d), boid %zu at (%g, %g, %g): "
                     "grid found %zu neighbours, brute force %zu",
                     shoal_model_name(d->model), (double)d->world.size[0], (double)d->world.size[1],
                     (double)d->world.size[2], d->world.periodic[0], d->world.periodic[1],
                     d->world.periodic[2], shoal_world_dims(&d->world), i, (double)in[i * 6],
                     (double)in[i * 6 + 1], (double)in[i * 6 + 2], k, m);
        total += m;
    }
    free(got);
    free(want);
    free(in);
    shoal_sim_destroy(s);
    return total;
}

/* one step of d from rows (grid or all pairs): the state after it and the walkers' count of
 * neighbour pairs (shoal_sim_candidate_pairs' useful pairs) */
static double step_once(shoal_sim_desc d, shoal_neighbors nb, shoal_isa isa, int threads,
                        const float *rows, float *out)
{
    d.neighbors = nb;
    d.isa = isa;
    d.thread_count = threads;
    shoal_sim *s;
    shoal_error e;
    if (shoal_sim_create(&d, &s, &e))
        fail_msg("%s", e.message);
    assert_int_equal(shoal_sim_set_rows(s, rows, shoal_sim_count(s), NULL), SHOAL_OK);
    if (shoal_sim_step(s, 1, &e))
        fail_msg("%s", e.message);
    assert_int_equal(shoal_sim_get_rows(s, out, shoal_sim_count(s), NULL), SHOAL_OK);
    double lanes, useful;
    shoal_sim_candidate_pairs(s, &lanes, &useful);
    shoal_sim_destroy(s);
    return useful;
}

/* the walkers (every ISA of this case) against the all-pairs walk: the same neighbour pairs
 * counted, the same step to 1e-5 relative (another summation order), positions compared by
 * the minimum image */
static void check_walkers(const shoal_sim_desc *d, const float *rows)
{
    size_t n = d->boid_count;
    float *a = malloc(n * 6 * sizeof(float)), *b = malloc(n * 6 * sizeof(float));
    double ub = step_once(*d, SHOAL_NEIGHBORS_BRUTE, SHOAL_ISA_SCALAR, 1, rows, b);
    for (size_t k = 0; k < TEST_ISA_COUNT; k++) {
        if (test_isa_skip(test_isas[k]))
            continue;
        double ug = step_once(*d, SHOAL_NEIGHBORS_GRID, test_isas[k], 2, rows, a);
        if (ug != ub)
            fail_msg("%s (%s): the grid's walk counted %.0f neighbour pairs, all pairs %.0f",
                     shoal_model_name(d->model), shoal_isa_name(test_isas[k]), ug, ub);
        for (size_t i = 0; i < n; i++) {
            float dp = sqrtf(d2_world(d, a + i * 6, b + i * 6));
            float scale = 1.0f;
            for (int c = 0; c < 3; c++)
                scale = fmaxf(scale, fabsf(b[i * 6 + c]));
            float vs = 1.0f, dv = 0.0f;
            for (int c = 3; c < 6; c++) {
                vs = fmaxf(vs, fabsf(b[i * 6 + c]));
                dv = fmaxf(dv, fabsf(a[i * 6 + c] - b[i * 6 + c]));
            }
            if (!(dp <= 1e-5f * scale) || !(dv <= 1e-5f * vs))
                fail_msg("%s (%s): boid %zu differs from the all-pairs step by %g (position), "
                         "%g (velocity)",
                         shoal_model_name(d->model), shoal_isa_name(test_isas[k]), i, (double)dp,
                         (double)dv);
        }
    }
    free(a);
    free(b);
}

/* ---- the grid against brute force ------------------------------------------------------- */

static void test_neighbours_minimum_image(void **state)
{
    (void)state;
    const int all[3] = {1, 1, 1}, xz[3] = {1, 0, 1};
    /* steer's largest radius is 2 (cells of at least 2.002): boxes of 23.7 (11 cells of
     * 2.15), 4.1 and 4.05 (2 cells), 4.002 and 6.3 (1 and 3 cells), a long thin one */
    const float boxes[][3] = {
        {23.7f, 23.7f, 23.7f}, {23.7f, 4.1f, 6.3f}, {4.002f, 9.9f, 4.05f}, {61.3f, 5.0f, 7.7f}};
    size_t pairs = 0;
    for (size_t b = 0; b < sizeof boxes / sizeof boxes[0]; b++) {
        for (int dims = 3; dims >= 2; dims--) {
            for (int k = 0; k < 2; k++) {
                const int *per = k == 0 ? all : xz;
                float size[3] = {boxes[b][0], boxes[b][1], boxes[b][2]};
                float center[3] = {1.25f, -3.0f, 0.5f};
                size_t n = 1500;
                shoal_sim_desc d = world_desc(SHOAL_MODEL_STEER, n, dims, per, size, center);
                float lo[3] = {center[0] - 0.5f * size[0], center[1] - 0.5f * size[1],
                               center[2] - 0.5f * size[2]};
                float *rows = rows_in_box(n, lo, size, dims, 1.0f, 11 + b * 4 + (size_t)k);
                /* boids on the seam (lo exactly, and the float below hi), across it (a
                 * period out on either side), and just outside the box */
                for (size_t i = 0; i < 60; i++) {
                    int c = (int)(i % (dims == 2 ? 2 : 3));
                    float *r = rows + i * 6;
                    float hi = lo[c] + size[c];
                    switch (i / 3 % 5) {
                    case 0:
                        r[c] = lo[c];
                        break;
                    case 1:
                        r[c] = nextafterf(hi, -INFINITY);
                        break;
                    case 2:
                        r[c] = lo[c] + 0.3f * (float)(i % 7) / 7.0f;
                        break;
                    case 3:
                        r[c] = hi - 0.3f * (float)(i % 7) / 7.0f - 0.01f;
                        break;
                    default:
                        r[c] += per[c] ? size[c] : 0.0f;
                        break;
                    }
                }
                pairs += check_sets(&d, rows);
                free(rows);
            }
        }
    }
    assert_true(pairs > 10000); /* real neighbourhoods, not empty ones */
    /* N = 1, and every boid in one cell */
    {
        float size[3] = {10, 10, 10};
        shoal_sim_desc d = world_desc(SHOAL_MODEL_STEER, 1, 3, all, size, NULL);
        float one[6] = {4.999f, -5.0f, 0, 0.1f, 0, 0};
        assert_int_equal(check_sets(&d, one), 0);
        float out[6];
        step_once(d, SHOAL_NEIGHBORS_GRID, SHOAL_ISA_SCALAR, 1, one, out);
        assert_true(out[0] >= -5.0f && out[0] < 5.0f);
        d = world_desc(SHOAL_MODEL_STEER, 400, 3, all, size, NULL);
        float lo[3] = {4.2f, 4.2f, -5.0f}, sz[3] = {0.75f, 0.75f, 0.75f};
        float *rows = rows_in_box(400, lo, sz, 3, 0.5f, 3);
        assert_int_equal(check_sets(&d, rows), 400 * 399);
        free(rows);
    }
}

static void test_walkers_minimum_image(void **state)
{
    (void)state;
    const int all[3] = {1, 1, 1}, xy[3] = {1, 1, 0};
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
        for (int k = 0; k < 3; k++) {
            shoal_params p;
            shoal_params_default((shoal_model)m, &p);
            float r = shoal_params_interaction_radius((shoal_model)m, &p);
            /* about 9.3 cells a side (a box that is not a multiple of the cell) */
            float L = 9.3f * r;
            float size[3] = {L, 0.8f * L, 1.1f * L};
            int dims = k == 2 ? 2 : 3;
            const int *per = k == 1 ? xy : all;
            /* 800 under the sanitizers: still about one boid a cell, seams crossed */
            size_t n = TEST_SAN(2000, 800);
            shoal_sim_desc d = world_desc((shoal_model)m, n, dims, per, size, NULL);
            float lo[3] = {-0.5f * size[0], -0.5f * size[1], -0.5f * size[2]};
            float *rows = rows_in_box(n, lo, size, dims, 0.5f, 40 + (uint64_t)m * 3 + (uint64_t)k);
            check_walkers(&d, rows);
            free(rows);
        }
    }
}

/* ---- across the seam, to the bit --------------------------------------------------------- */

static void pair_step(shoal_model m, int axis, const float a[3], const float b[3], float va[3],
                      float vb[3])
{
    const int all[3] = {1, 1, 1};
    const float size[3] = {64, 64, 64}, center[3] = {32, 32, 32};
    shoal_sim_desc d = world_desc(m, 2, 3, all, size, center);
    d.params.target_weight = 0; /* heading: no pull to the (absolute) targets */
    (void)axis;
    float rows[12] = {a[0], a[1], a[2], 0.25f,   -0.125f, 0.5f,
                      b[0], b[1], b[2], -0.375f, 0.5f,    0.0625f};
    if (m == SHOAL_MODEL_FOV) { /* seen in every cone: they head at each other */
        rows[3] = 0.5f, rows[4] = 0.0f, rows[5] = 0.0f;
        rows[9] = -0.5f, rows[10] = 0.0f, rows[11] = 0.0f;
        for (int c = 0; c < 3; c++) {
            rows[3 + c] = c == axis ? 0.0625f : 0.0f;
            rows[9 + c] = c == axis ? -0.0625f : 0.0f;
        }
    }
    float out[12];
    step_once(d, SHOAL_NEIGHBORS_GRID, SHOAL_ISA_SCALAR, 1, rows, out);
    for (int c = 0; c < 3; c++) {
        va[c] = out[3 + c];
        vb[c] = out[9 + c];
    }
}

static void test_seam_pair_bits(void **state)
{
    (void)state;
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
        shoal_params p;
        shoal_params_default((shoal_model)m, &p);
        for (int axis = 0; axis < 3; axis++) {
            /* 1 unit apart: b - a = +1 along the axis, in the middle and across the seam
             * (a just below 64, b just above 0: its image at 64.5) */
            float a_mid[3] = {32, 32, 32}, b_mid[3] = {32, 32, 32};
            float a_seam[3] = {32, 32, 32}, b_seam[3] = {32, 32, 32};
            a_mid[axis] = 31.5f, b_mid[axis] = 32.5f;
            a_seam[axis] = 63.5f, b_seam[axis] = 0.5f;
            float va0[3], vb0[3], va1[3], vb1[3];
            pair_step((shoal_model)m, axis, a_mid, b_mid, va0, vb0);
            pair_step((shoal_model)m, axis, a_seam, b_seam, va1, vb1);
            if (memcmp(va0, va1, sizeof va0) || memcmp(vb0, vb1, sizeof vb0))
                fail_msg("%s, axis %d: across the seam v = (%.9g %.9g %.9g), (%.9g %.9g %.9g); "
                         "mid-box (%.9g %.9g %.9g), (%.9g %.9g %.9g)",
                         shoal_model_name((shoal_model)m), axis, (double)va1[0], (double)va1[1],
                         (double)va1[2], (double)vb1[0], (double)vb1[1], (double)vb1[2],
                         (double)va0[0], (double)va0[1], (double)va0[2], (double)vb0[0],
                         (double)vb0[1], (double)vb0[2]);
            /* and they did see each other: the pair apart (3 box widths) moves otherwise */
            float a_far[3] = {32, 32, 32}, b_far[3] = {32, 32, 32}, vf0[3], vf1[3];
            a_far[axis] = 8.0f, b_far[axis] = 40.0f;
            pair_step((shoal_model)m, axis, a_far, b_far, vf0, vf1);
            assert_true(memcmp(va0, vf0, sizeof va0) != 0 || memcmp(vb0, vf1, sizeof vb0) != 0);
        }
    }
}

/* ---- 2D: the plane stays the plane --------------------------------------------------------- */

static void test_plane_10000_steps(void **state)
{
    (void)state;
    const int none[3] = {0, 0, 0}, all[3] = {1, 1, 0};
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
        for (int k = 0; k < 2; k++) {
            shoal_params p;
            shoal_params_default((shoal_model)m, &p);
            float r = shoal_params_interaction_radius((shoal_model)m, &p);
            float size[3] = {12.0f * r, 10.0f * r, 0};
            size_t n = 48;
            shoal_sim_desc d = world_desc((shoal_model)m, n, 2, k ? all : none, size, NULL);
            /* the terms that could leave the plane: off-plane obstacle sphere, predator,
             * boundary centre and box; heading's targets are drawn in 3D */
            d.params.sphere_count = 1;
            d.params.spheres[0].center[0] = 1.0f;
            d.params.spheres[0].center[1] = 0.5f;
            d.params.spheres[0].center[2] = 0.75f * r;
            d.params.spheres[0].radius = 0.5f * r;
            d.params.predator_count = 1;
            d.params.predator_start[0] = 2.0f * r;
            d.params.predator_start[2] = 3.0f;
            d.params.flee_radius = 2.0f * r;
            d.params.flee_weight = 2.0f;
            d.params.boundary_center[2] = 3.0f;
            if (m == SHOAL_MODEL_CLASSIC) {
                d.params.box_min[2] = 2.0f; /* the z walls sit off the plane */
                d.params.box_max[2] = 12.0f;
            }
            shoal_sim *s;
            shoal_error e;
            if (shoal_sim_create(&d, &s, &e))
                fail_msg("%s", e.message);
            assert_int_equal(shoal_sim_draw_state(s, NULL), SHOAL_OK);
            float *rows = malloc(n * 6 * sizeof(float));
            assert_int_equal(shoal_sim_get_rows(s, rows, shoal_sim_count(s), NULL), SHOAL_OK);
            for (size_t i = 0; i < n; i++)
                assert_true(rows[i * 6 + 2] == 0.0f && rows[i * 6 + 5] == 0.0f);
            for (int step = 0; step < TEST_LONG(10000, TEST_SAN(1000, 500)); step += 500) {
                if (shoal_sim_step(s, 500, &e))
                    fail_msg("%s: %s", shoal_model_name((shoal_model)m), e.message);
                assert_int_equal(shoal_sim_get_rows(s, rows, shoal_sim_count(s), NULL), SHOAL_OK);
                for (size_t i = 0; i < n; i++) {
                    const float *q = rows + i * 6;
                    uint32_t zb, vzb;
                    memcpy(&zb, q + 2, 4);
                    memcpy(&vzb, q + 5, 4);
                    if (zb != 0 || vzb != 0)
                        fail_msg("%s (%s): boid %zu after %d steps has z = %g, vz = %g",
                                 shoal_model_name((shoal_model)m), k ? "periodic" : "walled", i,
                                 step + 500, (double)q[2], (double)q[5]);
                }
                float pp[3], pv[3];
                assert_int_equal(shoal_sim_predators(s, pp, pv, 1), 1);
                assert_true(pp[2] == 0.0f && pv[2] == 0.0f);
            }
            /* it moved in the plane */
            float speed = 0;
            for (size_t i = 0; i < n; i++)
                speed += fabsf(rows[i * 6 + 3]) + fabsf(rows[i * 6 + 4]);
            assert_true(speed > 0);
            free(rows);
            shoal_sim_destroy(s);
        }
    }
}

/* ---- threads, ISAs and golden bytes -------------------------------------------------------- */

static uint64_t run_world(const shoal_sim_desc *base, shoal_isa isa, int threads, int steps,
                          float *out)
{
    shoal_sim_desc d = *base;
    d.isa = isa;
    d.thread_count = threads;
    shoal_sim *s;
    shoal_error e;
    if (shoal_sim_create(&d, &s, &e))
        fail_msg("%s", e.message);
    {
        /* the initial rows of seed 21 (the golden bytes' start), while the run keeps its own
         * seed for what else it draws (heading's targets): a sim of seed 21 draws them */
        shoal_sim_desc d21 = d;
        d21.seed = 21;
        shoal_sim *s21;
        if (shoal_sim_create(&d21, &s21, &e))
            fail_msg("%s", e.message);
        assert_int_equal(shoal_sim_draw_state(s21, NULL), SHOAL_OK);
        assert_int_equal(shoal_sim_get_rows(s21, out, d.boid_count, NULL), SHOAL_OK);
        shoal_sim_destroy(s21);
        assert_int_equal(shoal_sim_set_rows(s, out, d.boid_count, NULL), SHOAL_OK);
    }
    if (shoal_sim_step(s, steps, &e))
        fail_msg("%s", e.message);
    assert_int_equal(shoal_sim_get_rows(s, out, shoal_sim_count(s), NULL), SHOAL_OK);
    float pp[3 * 2];
    size_t np = shoal_sim_predators(s, pp, NULL, 2);
    shoal_sim_destroy(s);
    uint64_t h = state_hash(out, d.boid_count);
    for (size_t k = 0; k < np * 3; k++) { /* the predators' positions join the hash */
        uint32_t b;
        memcpy(&b, &pp[k], 4);
        h = (h ^ b) * 0x100000001b3ull;
    }
    return h;
}

/* The worlds of the byte checks: all periodic (a box that is not a multiple of the cell,
 * off-centre), x and z periodic with y walls, the plane, the periodic plane. */
static shoal_sim_desc golden_desc(shoal_model m, int w)
{
    static const int per[4][3] = {{1, 1, 1}, {1, 0, 1}, {0, 0, 0}, {1, 1, 0}};
    static const int dims[4] = {3, 3, 2, 2};
    shoal_params p;
    shoal_params_default(m, &p);
    float r = shoal_params_interaction_radius(m, &p);
    float size[3] = {7.3f * r, 6.1f * r, 5.2f * r}, center[3] = {0.5f * r, -0.25f * r, 0.0f};
    shoal_sim_desc d = world_desc(m, 1200, dims[w], per[w], size, center);
    d.params.predator_count = 2;
    d.params.flee_radius = 1.5f * r;
    d.params.flee_weight = 3.0f;
    d.params.predator_chase = w == 1 ? 1.0f : 0.0f; /* the torus's centre chase too */
    return d;
}

static void test_threads_isas_golden(void **state)
{
    (void)state;
    static const uint64_t want[SHOAL_MODEL_COUNT][4] = {
        [SHOAL_MODEL_STEER] = {0xaa9af6afb16041a5ull, 0x0710db99511c0b09ull, 0xfe11f69da2399997ull,
                               0xecd7b888d509d7e1ull},
        [SHOAL_MODEL_AVERAGE] = {0x49f275a800299f20ull, 0x332fe7de5452c15aull,
                                 0x4b20bfad3224016full, 0xec5c1f04955fde6cull},
        [SHOAL_MODEL_HEADING] = {0x6b00c9cb4238e017ull, 0xffd6052d8b15af6bull,
                                 0x51e329d827478077ull, 0x1361d1e5f3e36c96ull},
        [SHOAL_MODEL_CLASSIC] = {0x65b12f443c2521edull, 0xd11d423e49338b04ull,
                                 0x5e6d72be48a72133ull, 0xf568f64b65659733ull},
        [SHOAL_MODEL_FOV] = {0x0ff36e60f268c259ull, 0x65ec375c0e6cc4e4ull, 0x5e8643bc78e0f1c5ull,
                             0x097281f28bfec93bull},
        [SHOAL_MODEL_VICSEK] = {0x7e8863caefcc4d8full, 0x116c7c88e24bd7dfull, 0x8f5eab22aa5763dfull,
                                0x70fb89d0aec63645ull},
        [SHOAL_MODEL_COUZIN] = {0xadd18482010bc7d8ull, 0x42d5361e989a05a1ull, 0x6b376ec947cb2e8dull,
                                0x4dbdd5d4ec24349eull},
        [SHOAL_MODEL_FLOCKERS] = {0x005418f46a7e07f3ull, 0x7400a0eb7562c39eull,
                                  0x165eb223186c30a4ull, 0x3e1be5d424c692daull},
    };
    const int threads[] = {1, 2, 16}; /* 16 not under sanitizers */
    int bad = 0;
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
        for (int w = 0; w < 4; w++) {
            shoal_sim_desc d = golden_desc((shoal_model)m, w);
            size_t n = d.boid_count;
            float *ref = malloc(n * 6 * sizeof(float)), *out = malloc(n * 6 * sizeof(float));
            uint64_t h0 = run_world(&d, SHOAL_ISA_SCALAR, 1, 12, ref);
            if (test_isa_wanted(SHOAL_ISA_SCALAR) && h0 != want[m][w]) {
                printf("golden %s world %d: 0x%016llxull, want 0x%016llxull\n",
                       shoal_model_name((shoal_model)m), w, (unsigned long long)h0,
                       (unsigned long long)want[m][w]);
                bad++;
            }
            for (size_t k = 0; k < TEST_ISA_COUNT; k++) {
                if (test_isa_skip(test_isas[k]))
                    continue;
                /* under the sanitizers 2 threads only: 1 runs the same kernel, unsplit */
                for (size_t t = SHOAL_TEST_SANITIZED; t < TEST_LONG(3u, 2u); t++) {
                    uint64_t h = run_world(&d, test_isas[k], threads[t], 12, out);
                    if (h != h0)
                        fail_msg("%s world %d, %s, %d threads: %016llx, scalar 1 thread %016llx",
                                 shoal_model_name((shoal_model)m), w, shoal_isa_name(test_isas[k]),
                                 threads[t], (unsigned long long)h, (unsigned long long)h0);
                }
            }
            /* in the box on every periodic axis, in the plane in 2D */
            for (size_t i = 0; i < n; i++)
                for (int c = 0; c < 3; c++) {
                    float x = ref[i * 6 + c];
                    if (shoal_world_axis_periodic(&d.world, c)) {
                        float lo = d.world.center[c] - 0.5f * d.world.size[c];
                        assert_true(x >= lo && x < lo + d.world.size[c]);
                    }
                    if (c == 2 && shoal_world_dims(&d.world) == 2)
                        assert_true(x == 0.0f && ref[i * 6 + 5] == 0.0f);
                }
            free(ref);
            free(out);
        }
    }
    assert_int_equal(bad, 0);
}

/* The cluster-list kernel (SHOAL_KERNEL=clusters, AVX2 and AVX-512: issue 40) in every world
 * of the golden checks, every model: the minimum image where a vector's cells touch a seam,
 * the wrapped cells in ascending order, the plane: the scalar kernel's bits, with the
 * clusters as the kernel forms them and cut at random places; and it runs there (its own
 * lane-pair count, the same useful pairs). */
static void test_cluster_lists_worlds(void **state)
{
    (void)state;
    const char *modes[] = {"clusters-random", "clusters"};
    const int threads[] = {1, 2};
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
        for (int w = 0; w < 4; w++) {
            shoal_sim_desc d = golden_desc((shoal_model)m, w);
            size_t n = d.boid_count;
            float *ref = malloc(n * 6 * sizeof(float)), *out = malloc(n * 6 * sizeof(float));
            uint64_t h0 = run_world(&d, SHOAL_ISA_SCALAR, 1, 12, ref);
            for (int k = 0; k < 2; k++) {
                setenv("SHOAL_KERNEL", modes[k], 1);
                for (size_t i = 0; i < TEST_ISA_COUNT; i++) {
                    shoal_isa isa = test_isas[i];
                    if (test_isa_skip(isa) || (isa != SHOAL_ISA_AVX2 && isa != SHOAL_ISA_AVX512))
                        continue;
                    /* under the sanitizers 2 threads only (the same kernel, split) */
                    for (size_t t = SHOAL_TEST_SANITIZED; t < sizeof threads / sizeof threads[0];
                         t++) {
                        uint64_t h = run_world(&d, isa, threads[t], 12, out);
                        if (h != h0)
                            fail_msg("%s %s world %d, %s, %d threads: %016llx, scalar %016llx",
                                     modes[k], shoal_model_name((shoal_model)m), w,
                                     shoal_isa_name(isa), threads[t], (unsigned long long)h,
                                     (unsigned long long)h0);
                    }
                }
                unsetenv("SHOAL_KERNEL");
            }
            free(ref);
            free(out);
        }
    }
    if (test_isa_skip(SHOAL_ISA_AVX2))
        return;
    for (int w = 0; w < 4; w++) { /* it runs: another lane-pair count, the same useful pairs */
        shoal_sim_desc d = golden_desc(SHOAL_MODEL_STEER, w);
        float *rows = malloc(d.boid_count * 6 * sizeof(float));
        run_world(&d, SHOAL_ISA_SCALAR, 1, 1, rows);
        double lp[2], useful[2];
        for (int k = 0; k < 2; k++) {
            if (k)
                setenv("SHOAL_KERNEL", "clusters-random", 1);
            shoal_sim_desc e = d;
            e.isa = SHOAL_ISA_AVX2;
            shoal_sim *s;
            shoal_error err;
            if (shoal_sim_create(&e, &s, &err))
                fail_msg("%s", err.message);
            assert_int_equal(shoal_sim_set_rows(s, rows, e.boid_count, NULL), SHOAL_OK);
            assert_int_equal(shoal_sim_step(s, 1, &err), SHOAL_OK);
            shoal_sim_candidate_pairs(s, &lp[k], &useful[k]);
            shoal_sim_destroy(s);
            unsetenv("SHOAL_KERNEL");
        }
        if (lp[0] == lp[1] || useful[0] != useful[1])
            fail_msg("world %d: clusters %.0f lane-pairs (%.0f useful), lane groups %.0f (%.0f)", w,
                     lp[1], useful[1], lp[0], useful[0]);
        free(rows);
    }
}

/* ---- states in, checkpoints ----------------------------------------------------------------- */

static void test_state_wrapped_in(void **state)
{
    (void)state;
    const int all[3] = {1, 1, 1};
    const float size[3] = {20, 20, 20};
    shoal_sim_desc d = world_desc(SHOAL_MODEL_STEER, 3, 3, all, size, NULL);
    float rows[18] = {10.0f, -10.0f, 30.5f, 0,    0,    0,     -10.0f, 9.5f, -47.0f,
                      0,     0,      0,     1e6f, 3.0f, -1e6f, 0,      0,    0};
    shoal_sim *s;
    assert_int_equal(shoal_sim_create(&d, &s, NULL), SHOAL_OK);
    assert_int_equal(shoal_sim_set_rows(s, rows, shoal_sim_count(s), NULL), SHOAL_OK);
    float got[18];
    assert_int_equal(shoal_sim_get_rows(s, got, shoal_sim_count(s), NULL), SHOAL_OK);
    const float want[9] = {-10.0f, -10.0f, -9.5f, -10.0f, 9.5f, -7.0f, 0.0f, 3.0f, 0.0f};
    for (int i = 0; i < 3; i++)
        for (int c = 0; c < 3; c++)
            assert_true(got[i * 6 + c] == want[i * 3 + c]);
    shoal_sim_destroy(s);
}

static void test_checkpoint_world(void **state)
{
    (void)state;
    const char *ckpt = path("w.ckpt");
    shoal_sim_desc d = golden_desc(SHOAL_MODEL_HEADING, 3);
    size_t n = d.boid_count;
    shoal_sim *a, *b;
    shoal_error e;
    assert_int_equal(shoal_sim_create(&d, &a, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_draw_state(a, NULL), SHOAL_OK);
    assert_int_equal(shoal_sim_step(a, 5, &e), SHOAL_OK);
    assert_int_equal(shoal_io_checkpoint_write(ckpt, a, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_step(a, 7, &e), SHOAL_OK);
    shoal_sim_desc rd;
    float *rows;
    shoal_sim_checkpoint ck;
    if (shoal_io_checkpoint_read(ckpt, &rd, &rows, &ck, &e))
        fail_msg("%s", e.message);
    assert_memory_equal(&rd.world, &d.world, sizeof d.world);
    rd.thread_count = 2;
    assert_int_equal(shoal_sim_create(&rd, &b, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_set_rows(b, rows, shoal_sim_count(b), &e), SHOAL_OK);
    assert_int_equal(shoal_sim_set_checkpoint(b, &ck, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_step(b, 7, &e), SHOAL_OK);
    float *x = malloc(n * 6 * sizeof(float)), *y = malloc(n * 6 * sizeof(float));
    assert_int_equal(shoal_sim_get_rows(a, x, shoal_sim_count(a), NULL), SHOAL_OK);
    assert_int_equal(shoal_sim_get_rows(b, y, shoal_sim_count(b), NULL), SHOAL_OK);
    assert_memory_equal(x, y, n * 6 * sizeof(float));
    free(x);
    free(y);
    free(rows);
    shoal_sim_destroy(b);
    /* today's world writes version 1, as before worlds existed */
    shoal_sim_destroy(a);
    d = shoal_sim_desc_for(SHOAL_MODEL_STEER);
    d.boid_count = 10;
    assert_int_equal(shoal_sim_create(&d, &a, &e), SHOAL_OK);
    assert_int_equal(shoal_sim_draw_state(a, NULL), SHOAL_OK);
    assert_int_equal(shoal_io_checkpoint_write(ckpt, a, &e), SHOAL_OK);
    FILE *f = fopen(ckpt, "rb");
    unsigned char h[12];
    assert_int_equal(fread(h, 1, 12, f), 12);
    fclose(f);
    assert_int_equal(h[8], 1);
    shoal_sim_destroy(a);
}

/* ---- bad input ----------------------------------------------------------------------------- */

static void test_bad_worlds(void **state)
{
    (void)state;
    const int all[3] = {1, 1, 1}, none[3] = {0, 0, 0};
    const float size[3] = {3.0f, 20, 20}; /* steer's radius is 2: 3 < 4 */
    shoal_sim_desc d = world_desc(SHOAL_MODEL_STEER, 8, 3, all, size, NULL);
    shoal_sim *s = NULL;
    shoal_sim64 *s64 = NULL;
    shoal_error e;
    assert_int_equal(shoal_sim_create(&d, &s, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "smaller than twice the interaction radius"));
    assert_int_equal(shoal_sim64_create(&d, &s64, &e), SHOAL_ERR_INPUT);
    d.world.size[0] = 0;
    assert_int_equal(shoal_sim_create(&d, &s, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "periodic_x needs a size"));
    d.world.size[0] = 20;
    d.world.dims = 4;
    assert_int_equal(shoal_sim_create(&d, &s, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "dims"));
    /* a radius grown past half the box by set_params: refused, the sim as it was */
    d.world.dims = 3;
    assert_int_equal(shoal_sim_create(&d, &s, &e), SHOAL_OK);
    shoal_params p = d.params;
    p.coh_radius = 11;
    assert_int_equal(shoal_sim_set_params(s, &p, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "smaller than twice the interaction radius 11"));
    assert_true(shoal_sim_get_desc(s)->params.coh_radius == d.params.coh_radius);
    shoal_sim_destroy(s);
    /* a 2D state off the plane: the row named, the sim's state as it was */
    d = world_desc(SHOAL_MODEL_STEER, 4, 2, none, size, NULL);
    assert_int_equal(shoal_sim_create(&d, &s, &e), SHOAL_OK);
    float rows[24] = {0};
    rows[2 * 6 + 5] = 0.25f;
    assert_int_equal(shoal_sim_set_rows(s, rows, 4, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "row 2 has vz = 0.25 in a 2D world"));
    assert_int_equal(shoal_sim_has_state(s), 0);
    shoal_sim_destroy(s);
    assert_int_equal(shoal_sim64_create(&d, &s64, &e), SHOAL_OK);
    assert_int_equal(shoal_sim64_set_state_f32(s64, rows, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "row 2 has vz"));
    shoal_sim64_destroy(s64);
}

static int group_setup(void **state)
{
    (void)state;
    return cli_setup("periodic");
}

static int group_teardown(void **state)
{
    (void)state;
    return cli_teardown();
}

int main(int argc, char **argv)
{
    struct CMUnitTest tests[] = {
        cmocka_unit_test(test_neighbours_minimum_image),
        cmocka_unit_test(test_walkers_minimum_image),
        cmocka_unit_test(test_seam_pair_bits),
        cmocka_unit_test(test_plane_10000_steps),
        cmocka_unit_test(test_threads_isas_golden),
        cmocka_unit_test(test_cluster_lists_worlds),
        cmocka_unit_test(test_state_wrapped_in),
        cmocka_unit_test(test_checkpoint_world),
        cmocka_unit_test(test_bad_worlds),
    };
    static const char *const isa_tests[] = {"test_walkers_minimum_image",
                                            "test_threads_isas_golden", NULL};
    size_t n = test_isa_args(argc, argv, tests, sizeof tests / sizeof tests[0], isa_tests);
    return test_exit(
        _cmocka_run_group_tests("test_periodic", tests, n, group_setup, group_teardown));
}
