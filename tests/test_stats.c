/* SPDX-License-Identifier: MIT */
/* Flock statistics (shoal/stats.h): hand-computed cases for each statistic, the degenerate
 * states that once never finished or overflowed (all boids at one point, a radius of 1e6 or
 * 1e30, a school 5e-7 long, 300k boids in a unit ball), random states against a NumPy brute
 * force (tests/stats_ref.py), and independence from the thread count. No timing is asserted:
 * a case that does not finish hits meson's timeout. NumPy missing: exit 77 (skip). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "scenes.h"
#include "shoal/shoal.h"
#include "tests/cli_harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

static shoal_stats stats_r(const float *rows, size_t n, double radius, int threads)
{
    shoal_stats_desc d = shoal_stats_desc_default();
    d.radius = radius;
    d.thread_count = threads;
    shoal_stats s;
    shoal_error e;
    if (shoal_stats_compute(rows, n, &d, &s, &e))
        fail_msg("shoal_stats_compute: %s", e.message);
    return s;
}

static void set_row(float *r, float px, float py, float pz, float vx, float vy, float vz)
{
    r[0] = px, r[1] = py, r[2] = pz, r[3] = vx, r[4] = vy, r[5] = vz;
}

#define NEAR(a, b, tol)                                                                            \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        if (!(fabs(a_ - b_) <= (tol) * (1 + fabs(b_))))                                            \
            fail_msg("%s = %.17g, expected %.17g", #a, a_, b_);                                    \
    } while (0)

/* ---- hand-computed ----------------------------------------------------------------------- */

static void test_two_boids(void **state)
{
    (void)state;
    float r[12];
    set_row(r, 0, 0, 0, 1, 0, 0);
    set_row(r + 6, 3, 4, 0, 1, 0, 0);
    shoal_stats s = stats_r(r, 2, 5, 0);
    assert_int_equal(s.count, 2);
    assert_int_equal(s.nonfinite, 0);
    assert_true(s.polarisation == 1);
    assert_true(s.mean_speed == 1);
    assert_true(s.mean_nn_distance == 5);
    assert_true(s.mean_neighbors == 1); /* d <= r: inclusive */
    assert_true(s.group_count == 1);
    assert_true(s.largest_group_fraction == 1);
    assert_true(s.centroid[0] == 1.5 && s.centroid[1] == 2 && s.centroid[2] == 0);
    assert_true(s.extent[0] == 3 && s.extent[1] == 4 && s.extent[2] == 0);
    assert_true(s.bbox_min[1] == 0 && s.bbox_max[1] == 4);
    assert_true(s.radius_of_gyration == 2.5);
    /* r x v: (0, 0, 2) and (0, 0, -2): no rotation */
    assert_true(s.milling == 0);
    s = stats_r(r, 2, 4.999, 0);
    assert_true(s.mean_neighbors == 0);
    assert_true(s.group_count == 2);
    assert_true(s.largest_group_fraction == 0.5);
    assert_true(s.radius == 4.999);
}

static void test_mill_and_polarisation(void **state)
{
    (void)state;
    /* four boids on the unit circle moving counter-clockwise at speed 2: a perfect mill */
    float r[24];
    set_row(r, 1, 0, 0, 0, 2, 0);
    set_row(r + 6, 0, 1, 0, -2, 0, 0);
    set_row(r + 12, -1, 0, 0, 0, -2, 0);
    set_row(r + 18, 0, -1, 0, 2, 0, 0);
    shoal_stats s = stats_r(r, 4, 1, 0);
    assert_true(s.milling == 1);
    assert_true(s.polarisation == 0);
    assert_true(s.mean_speed == 2);
    NEAR(s.mean_nn_distance, sqrt(2), 1e-15);
    assert_true(s.mean_neighbors == 0); /* sqrt(2) > 1 */
    assert_true(s.group_count == 4);
    s = stats_r(r, 4, 1.5, 0);
    assert_true(s.mean_neighbors == 2);
    assert_true(s.group_count == 1);
    assert_true(s.radius_of_gyration == 1);
    /* one boid reversed: |r x v| sum is 2+2+2-2 = 4 of 8 */
    set_row(r + 18, 0, -1, 0, -2, 0, 0);
    s = stats_r(r, 4, 1, 0);
    assert_true(s.milling == 0.5);
    /* a boid at rest has no heading: left out of the polarisation, not of the speed */
    float p[18];
    set_row(p, 0, 0, 0, 3, 0, 0);
    set_row(p + 6, 1, 0, 0, 0, 0.5f, 0);
    set_row(p + 12, 2, 0, 0, 0, 0, 0);
    s = stats_r(p, 3, 1, 0);
    NEAR(s.polarisation, sqrt(2) / 2, 1e-15);
    NEAR(s.mean_speed, 3.5 / 3, 1e-15);
    /* all at rest: 0, not NaN */
    for (int i = 0; i < 3; i++)
        p[i * 6 + 3] = p[i * 6 + 4] = p[i * 6 + 5] = 0;
    s = stats_r(p, 3, 1, 0);
    assert_true(s.polarisation == 0 && s.milling == 0 && s.mean_speed == 0);
}

static void test_groups_chain(void **state)
{
    (void)state;
    /* x = 0 1 2 | 10 11 | 30: at radius 1 three groups, the largest 3 of 6 */
    const float xs[] = {0, 1, 2, 10, 11, 30};
    float r[36];
    for (int i = 0; i < 6; i++)
        set_row(r + i * 6, xs[i], 0, 0, 1, 0, 0);
    shoal_stats s = stats_r(r, 6, 1, 0);
    assert_true(s.group_count == 3);
    assert_true(s.largest_group_fraction == 0.5);
    assert_true(s.mean_neighbors == (1 + 2 + 1 + 1 + 1 + 0) / 6.0);
    assert_true(s.mean_nn_distance == (1 + 1 + 1 + 1 + 1 + 19) / 6.0);
    s = stats_r(r, 6, 0.999, 0);
    assert_true(s.group_count == 6);
    s = stats_r(r, 6, 8, 0);
    assert_true(s.group_count == 2);
    NEAR(s.largest_group_fraction, 5.0 / 6, 1e-15);
    s = stats_r(r, 6, 30, 0); /* the bounding box's diagonal: one group, everyone a neighbour */
    assert_true(s.group_count == 1 && s.mean_neighbors == 5);
}

static void test_nonfinite_and_errors(void **state)
{
    (void)state;
    float r[18];
    set_row(r, 0, 0, 0, 1, 0, 0);
    set_row(r + 6, 2, 0, 0, 1, 0, 0);
    set_row(r + 12, NAN, 0, 0, 1, 0, 0);
    shoal_stats s = stats_r(r, 3, 5, 0);
    assert_int_equal(s.count, 3);
    assert_int_equal(s.nonfinite, 1);
    assert_true(s.mean_neighbors == 1 && s.mean_nn_distance == 2 && s.centroid[0] == 1);
    r[12] = 0;
    r[17] = INFINITY;
    s = stats_r(r, 3, 5, 0);
    assert_int_equal(s.nonfinite, 1);
    /* one boid: no nearest neighbour */
    s = stats_r(r, 1, 5, 0);
    assert_true(isnan(s.mean_nn_distance));
    assert_true(s.mean_neighbors == 0 && s.group_count == 1 && s.largest_group_fraction == 1);
    /* nothing */
    s = stats_r(NULL, 0, 5, 0);
    assert_int_equal(s.count, 0);
    assert_true(isnan(s.polarisation) && isnan(s.mean_neighbors) && s.group_count == 0);
    shoal_stats_desc d = shoal_stats_desc_default();
    assert_true(d.radius == 1 && d.thread_count == 0 && d.skip == 0);
    shoal_error e;
    d.radius = NAN;
    assert_int_equal(shoal_stats_compute(r, 2, &d, &s, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "radius"));
    d.radius = -1;
    assert_int_equal(shoal_stats_compute(r, 2, &d, &s, &e), SHOAL_ERR_INPUT);
    d.radius = INFINITY;
    assert_int_equal(shoal_stats_compute(r, 2, &d, &s, &e), SHOAL_OK);
    assert_true(s.mean_neighbors == 1);
    d.thread_count = -1;
    assert_int_equal(shoal_stats_compute(r, 2, &d, &s, &e), SHOAL_ERR_INPUT);
    /* skip bits */
    d = shoal_stats_desc_default();
    d.skip = SHOAL_STATS_SKIP_NEAREST | SHOAL_STATS_SKIP_NEIGHBORS | SHOAL_STATS_SKIP_GROUPS;
    assert_int_equal(shoal_stats_compute(r, 2, &d, &s, &e), SHOAL_OK);
    assert_true(isnan(s.mean_nn_distance) && isnan(s.mean_neighbors) && s.group_count == 0);
    assert_true(s.mean_speed == 1);
}

static void test_soa_equals_rows(void **state)
{
    (void)state;
    const size_t n = 3000;
    float *rows = scene_clustered(n, 5, 1.0f, 8.0f, 1.0f, 7);
    float *soa = malloc(n * 6 * sizeof *soa);
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < 6; c++)
            soa[(size_t)c * n + i] = rows[i * 6 + (size_t)c];
    const float *pos[3] = {soa, soa + n, soa + 2 * n},
                *vel[3] = {soa + 3 * n, soa + 4 * n, soa + 5 * n};
    shoal_stats_desc d = shoal_stats_desc_default();
    d.radius = 0.7;
    shoal_stats a, b;
    shoal_error e;
    assert_int_equal(shoal_stats_compute(rows, n, &d, &a, &e), 0);
    assert_int_equal(shoal_stats_compute_soa(pos, vel, n, &d, &b, &e), 0);
    assert_memory_equal(&a, &b, sizeof a);
    free(rows);
    free(soa);
}

/* ---- against NumPy ----------------------------------------------------------------------- */

typedef struct ref {
    double v[64];
    char k[64][48];
    int n;
    double radius[8], neighbors[8], groups[8], largest[8];
    int nr;
} ref;

/* Run tests/stats_ref.py with `args`; exit 77 (skip the whole program) when NumPy is missing. */
static void run_ref(const char *args, ref *r)
{
    char cmd[2048];
    memset(r, 0, sizeof *r);
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s/tests/stats_ref.py %s > %s", SHOAL_SOURCE_ROOT,
             args, path("ref.txt"));
    int rc = system(cmd);
    if (WIFEXITED(rc) && (WEXITSTATUS(rc) == 77 || WEXITSTATUS(rc) == 127)) {
        printf("SKIP: /usr/bin/python3 with NumPy not found\n");
        exit(77);
    }
    assert_true(WIFEXITED(rc) && WEXITSTATUS(rc) == 0);
    FILE *f = fopen(path("ref.txt"), "r");
    assert_non_null(f);
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "radius ", 7) == 0) {
            assert_int_equal(sscanf(line,
                                    "radius %lf mean_neighbors %lf group_count %lf "
                                    "largest_group_fraction %lf",
                                    &r->radius[r->nr], &r->neighbors[r->nr], &r->groups[r->nr],
                                    &r->largest[r->nr]),
                             4);
            r->nr++;
        } else if (r->n < 64 && sscanf(line, "%47s %lf", r->k[r->n], &r->v[r->n]) == 2) {
            r->n++;
        }
    }
    fclose(f);
}

static double ref_get(const ref *r, const char *key)
{
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->k[i], key) == 0)
            return r->v[i];
    fail_msg("reference lacks %s", key);
    return NAN;
}

/* Every statistic of `rows` at each radius against the NumPy brute force: counts exactly,
 * sums to a relative 1e-12 (the order of a float64 sum differs). */
static void check_numpy(const char *what, const float *rows, size_t n, const double *radii, int nr)
{
    shoal_error e;
    if (shoal_io_npy_write(path("s.npy"), rows, n, &e))
        fail_msg("%s", e.message);
    char args[1024];
    int k = snprintf(args, sizeof args, "%s", path("s.npy"));
    for (int i = 0; i < nr; i++)
        k += snprintf(args + k, sizeof args - (size_t)k, " %.17g", radii[i]);
    ref r;
    run_ref(args, &r);
    assert_int_equal(r.nr, nr);
    for (int i = 0; i < nr; i++) {
        shoal_stats s = stats_r(rows, n, radii[i], 0);
        const double tol = 1e-12;
        if (s.nonfinite != (size_t)ref_get(&r, "nonfinite"))
            fail_msg("%s: nonfinite %zu", what, s.nonfinite);
        NEAR(s.polarisation, ref_get(&r, "polarisation"), tol);
        NEAR(s.milling, ref_get(&r, "milling"), 1e-10);
        NEAR(s.mean_speed, ref_get(&r, "mean_speed"), tol);
        NEAR(s.radius_of_gyration, ref_get(&r, "radius_of_gyration"), tol);
        NEAR(s.mean_nn_distance, ref_get(&r, "mean_nn_distance"), tol);
        char key[32];
        for (int c = 0; c < 3; c++) {
            snprintf(key, sizeof key, "centroid_%d", c);
            NEAR(s.centroid[c], ref_get(&r, key), tol);
            snprintf(key, sizeof key, "extent_%d", c);
            assert_true(s.extent[c] == ref_get(&r, key));
        }
        if (s.mean_neighbors != r.neighbors[i])
            fail_msg("%s, radius %g: mean neighbours %.17g, NumPy %.17g", what, radii[i],
                     s.mean_neighbors, r.neighbors[i]);
        if ((double)s.group_count != r.groups[i])
            fail_msg("%s, radius %g: %llu groups, NumPy %g", what, radii[i],
                     (unsigned long long)s.group_count, r.groups[i]);
        NEAR(s.largest_group_fraction, r.largest[i], 1e-15);
    }
}

static void test_random_vs_numpy(void **state)
{
    (void)state;
    const double radii[] = {0, 0.05, 0.3, 1, 2.5, 40};
    float *u = scene_uniform(2000, 4.0f, 1.0f, 11);
    check_numpy("uniform", u, 2000, radii, 6);
    float *c = scene_clustered(2000, 6, 0.5f, 10.0f, 1.0f, 12);
    check_numpy("clustered", c, 2000, radii, 6);
    /* a flat school (z = 0) with outliers and duplicated rows */
    for (size_t i = 0; i < 2000; i++)
        u[i * 6 + 2] = 0;
    scene_add_outliers(u, 2000, 13);
    memcpy(u + 100 * 6, u + 200 * 6, 50 * 6 * sizeof(float));
    check_numpy("flat with outliers", u, 2000, radii, 6);
    free(u);
    free(c);
}

/* ---- degenerate states -------------------------------------------------------------------- */

static void test_one_point(void **state)
{
    (void)state;
    const size_t n = 1000;
    float *r = malloc(n * 6 * sizeof *r);
    for (size_t i = 0; i < n; i++)
        set_row(r + i * 6, 3.25f, -1, 7, 1, (float)(i % 3), 0);
    const double radii[] = {0, 1e-30, 1, 1e6, 1e30};
    for (int k = 0; k < 5; k++) {
        shoal_stats s = stats_r(r, n, radii[k], 0);
        assert_true(s.mean_neighbors == 999);
        assert_true(s.mean_nn_distance == 0);
        assert_true(s.group_count == 1 && s.largest_group_fraction == 1);
        assert_true(s.extent[0] == 0 && s.radius_of_gyration == 0);
    }
    /* half of them at a second point: two groups unless the radius reaches across */
    for (size_t i = 0; i < n / 2; i++)
        r[i * 6] = 4.25f;
    shoal_stats s = stats_r(r, n, 0.5, 0);
    assert_true(s.mean_neighbors == 499 && s.group_count == 2);
    s = stats_r(r, n, 0, 0);
    assert_true(s.mean_neighbors == 499 && s.group_count == 2);
    s = stats_r(r, n, 1, 0);
    assert_true(s.mean_neighbors == 999 && s.group_count == 1);
    free(r);
}

static void test_huge_radius(void **state)
{
    (void)state;
    const size_t n = 1000;
    float *r = scene_uniform(n, 50.0f, 1.0f, 21);
    const double radii[] = {1e6, 1e30, INFINITY};
    for (int k = 0; k < 3; k++) {
        shoal_stats s = stats_r(r, n, radii[k], 0);
        assert_true(s.mean_neighbors == 999);
        assert_true(s.group_count == 1);
    }
    /* and the rest against NumPy */
    const double big[] = {1e6, 1e30};
    check_numpy("uniform, huge radii", r, n, big, 2);
    free(r);
}

static void test_thin_line(void **state)
{
    (void)state;
    /* 1,000 boids spread over 5e-7 along x (and a copy far from the origin, where floats are
     * coarser than the spread) */
    const size_t n = 1000;
    float *r = malloc(n * 6 * sizeof *r);
    for (size_t i = 0; i < n; i++)
        set_row(r + i * 6, (float)i * 5e-10f, 0, 0, 1, 0, 0);
    shoal_stats s = stats_r(r, n, 2, 0);
    assert_true(s.mean_neighbors == 999 && s.group_count == 1);
    const double radii[] = {0, 1e-9, 5e-9, 1.2e-7, 2};
    check_numpy("line 5e-7 long", r, n, radii, 5);
    for (size_t i = 0; i < n; i++)
        r[i * 6] = 1.0f + (float)i * 5e-10f;
    check_numpy("line 5e-7 long at x = 1", r, n, radii, 5);
    free(r);
}

/* 300k boids in the unit ball at the steer model's radius 2: every pair is within 2, but the
 * bounding box's diagonal is not, so the grid does the work. */
static void test_dense_ball(void **state)
{
    (void)state;
    /* 70,000 under the sanitizers: still n (n - 1) > 2^32 pairs, the same paths */
    const size_t n = TEST_SAN(300000, 70000);
    float *r = malloc(n * 6 * sizeof *r);
    uint64_t x = 99;
    for (size_t i = 0; i < n;) {
        float p[3];
        for (int c = 0; c < 3; c++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            p[c] = (float)((double)(x >> 11) / 9007199254740992.0 * 2 - 1);
        }
        if ((double)p[0] * p[0] + (double)p[1] * p[1] + (double)p[2] * p[2] > 0.999)
            continue;
        set_row(r + i * 6, p[0], p[1], p[2], p[1], -p[0], 0.5f);
        i++;
    }
    shoal_stats s = stats_r(r, n, 2, 0);
    assert_true(s.mean_neighbors == (double)(n - 1));
    assert_true(s.group_count == 1);
    assert_true(s.mean_nn_distance > 0 && s.mean_nn_distance < 0.05);
    s = stats_r(r, n, 0.1, 0);
    assert_true(s.mean_neighbors > 50 && s.mean_neighbors < 300);
    free(r);
}

/* A 67^3 lattice (300,763 boids, spacing 1/32): neighbour counts known exactly by counting
 * lattice offsets (NumPy, stats_ref.py --lattice). */
static void test_lattice_exact(void **state)
{
    (void)state;
    /* 41^3 under the sanitizers: every pair within 2.5 still n (n - 1) > 2^32 */
    const int nx = TEST_SAN(67, 41), ny = nx, nz = nx;
    const size_t n = (size_t)nx * ny * nz;
    float *r = malloc(n * 6 * sizeof *r);
    size_t i = 0;
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++)
            for (int xx = 0; xx < nx; xx++, i++)
                set_row(r + i * 6, (float)xx / 32, (float)y / 32, (float)z / 32, 1, 0, 0);
    const double radii[] = {0.03125, 0.1, 0.25, 2.5};
    for (int k = 0; k < 4; k++) {
        char args[256];
        snprintf(args, sizeof args, "--lattice %d %d %d 0.03125 %.17g", nx, ny, nz, radii[k]);
        ref rf;
        run_ref(args, &rf);
        shoal_stats s = stats_r(r, n, radii[k], 0);
        if (s.mean_neighbors != ref_get(&rf, "mean_neighbors"))
            fail_msg("lattice, radius %g: %.17g neighbours, NumPy %.17g", radii[k],
                     s.mean_neighbors, ref_get(&rf, "mean_neighbors"));
        assert_true(s.group_count == 1);
        assert_true(s.mean_nn_distance == 0.03125);
    }
    free(r);
}

static void test_threads(void **state)
{
    (void)state;
    const size_t n = 20000;
    float *r = scene_clustered(n, 8, 1.0f, 20.0f, 1.0f, 31);
    const int threads[] = {1, 2, 3, 7};
    shoal_stats s1 = stats_r(r, n, 0.8, 1);
    for (int k = 1; k < 4; k++) {
        shoal_stats s = stats_r(r, n, 0.8, threads[k]);
        assert_memory_equal(&s, &s1, sizeof s);
    }
    free(r);
}

/* Calls from several threads at once (a sweep's members) are independent: each gives what it
 * gives alone, whatever thread count the other asked for. */
typedef struct par_job {
    const float *rows;
    size_t n;
    int threads;
    shoal_stats out[4];
} par_job;

static void *par_run(void *p)
{
    par_job *j = p;
    shoal_stats_desc d = shoal_stats_desc_default();
    d.radius = 0.8;
    d.thread_count = j->threads;
    shoal_error e;
    for (int k = 0; k < 4; k++)
        if (shoal_stats_compute(j->rows, j->n, &d, &j->out[k], &e))
            return NULL;
    return p;
}

static void test_concurrent_calls(void **state)
{
    (void)state;
    const size_t n = 20000;
    float *r = scene_clustered(n, 8, 1.0f, 20.0f, 1.0f, 31);
    shoal_stats alone = stats_r(r, n, 0.8, 1);
    par_job jobs[2] = {{.rows = r, .n = n, .threads = 1}, {.rows = r, .n = n, .threads = 3}};
    pthread_t t[2];
    for (int k = 0; k < 2; k++)
        assert_int_equal(pthread_create(&t[k], NULL, par_run, &jobs[k]), 0);
    for (int k = 0; k < 2; k++) {
        void *ret;
        assert_int_equal(pthread_join(t[k], &ret), 0);
        assert_ptr_equal(ret, &jobs[k]);
        for (int i = 0; i < 4; i++)
            assert_memory_equal(&jobs[k].out[i], &alone, sizeof alone);
    }
    free(r);
}

static int setup(void **state)
{
    (void)state;
    return cli_setup("stats");
}

static int teardown(void **state)
{
    (void)state;
    return cli_teardown();
}

/* ---- periodic worlds ------------------------------------------------------------------------ */

/* A periodic box of 64 (dyadic, so shifts and wraps below are exact) centred at 0. */
static shoal_stats_desc periodic_desc(double radius, int axes)
{
    shoal_stats_desc d = shoal_stats_desc_default();
    d.radius = radius;
    for (int c = 0; c < 3; c++) {
        d.world.periodic[c] = (axes >> c) & 1;
        d.world.size[c] = 64;
    }
    return d;
}

/* A milling school: 600 boids on a 1/64 lattice in a ball of radius ~5 about `centre`,
 * circling it (v = z x r plus a little drift), positions wrapped into [-32, 32). */
static float *periodic_school(const double centre[3], size_t *n_out)
{
    enum { N = 600 };
    float *r = malloc(N * 6 * sizeof *r);
    uint64_t s = 99;
    for (size_t i = 0; i < N; i++) {
        double p[3];
        do {
            for (int c = 0; c < 3; c++) {
                s = s * 6364136223846793005ull + 1442695040888963407ull;
                p[c] = (double)((int64_t)(s >> 40) % 641 - 320) / 64.0; /* [-5, 5], step 1/64 */
            }
        } while (p[0] * p[0] + p[1] * p[1] + p[2] * p[2] > 25);
        float *row = r + i * 6;
        for (int c = 0; c < 3; c++) {
            double x = p[c] + centre[c];
            x = x >= 32 ? x - 64 : x < -32 ? x + 64 : x;
            row[c] = (float)x;
        }
        row[3] = (float)(-p[1] + 0.25);
        row[4] = (float)p[0];
        row[5] = 0.5f;
    }
    *n_out = N;
    return r;
}

static void expect_same_school(const shoal_stats *a, const shoal_stats *b, const double shift[3])
{
    /* exact: the counts and the figures that do not use the centre */
    assert_true(a->polarisation == b->polarisation);
    assert_true(a->mean_speed == b->mean_speed);
    assert_true(a->mean_neighbors == b->mean_neighbors);
    assert_true(a->group_count == b->group_count);
    assert_true(a->largest_group_fraction == b->largest_group_fraction);
    /* the same distances, summed in the grid's slot order (another order here) */
    NEAR(b->mean_nn_distance, a->mean_nn_distance, 1e-12);
    /* about the circular centre: to rounding (the centre's own digits) */
    NEAR(b->milling, a->milling, 1e-9);
    NEAR(b->radius_of_gyration, a->radius_of_gyration, 1e-9);
    for (int c = 0; c < 3; c++) {
        NEAR(b->extent[c], a->extent[c], 1e-9);
        double want = a->centroid[c] + shift[c];
        want = want >= 32 ? want - 64 : want < -32 ? want + 64 : want;
        double d = b->centroid[c] - want;
        d = d > 32 ? d - 64 : d < -32 ? d + 64 : d; /* the seam itself: either side */
        if (!(fabs(d) < 1e-9))
            fail_msg("centroid[%d] %.17g, expected %.17g", c, b->centroid[c], want);
        NEAR(b->bbox_max[c] - b->bbox_min[c], a->extent[c], 1e-9);
    }
}

/* The same school in the middle of the box, across one seam, across an edge and across the
 * corner: the same figures (the acceptance test of issue 38's statistics). */
static void test_periodic_school_across_seam(void **state)
{
    (void)state;
    const double mid[3] = {1.5, -2.25, 0.75};
    size_t n;
    float *a = periodic_school(mid, &n);
    shoal_stats sa = stats_r(a, n, 1.0, 0);
    shoal_stats_desc d = periodic_desc(1.0, 7);
    shoal_stats pa;
    shoal_error e;
    assert_int_equal(shoal_stats_compute(a, n, &d, &pa, &e), SHOAL_OK);
    /* in the middle, far from every seam: the periodic figures are the plain ones */
    assert_true(pa.mean_neighbors == sa.mean_neighbors && pa.group_count == sa.group_count);
    assert_true(pa.mean_nn_distance == sa.mean_nn_distance);
    /* the circular mean of a school 10 wide in a box of 64 is its arithmetic mean to
     * second order in 10/64: close, not equal (and the figures about it likewise) */
    NEAR(pa.milling, sa.milling, 1e-3);
    NEAR(pa.radius_of_gyration, sa.radius_of_gyration, 1e-3);
    for (int c = 0; c < 3; c++)
        assert_true(fabs(pa.centroid[c] - sa.centroid[c]) < 0.02);
    assert_true(pa.milling > 0.5); /* it does mill */
    const double shifts[][3] = {
        {30.5, 0, 0}, {30.5, 34.25, 0}, {30.5, 34.25, 31.25}, {-33.5, 2.25, -0.75}};
    for (size_t k = 0; k < sizeof shifts / sizeof shifts[0]; k++) {
        double at[3];
        for (int c = 0; c < 3; c++)
            at[c] = mid[c] + shifts[k][c];
        float *b = periodic_school(at, &n);
        shoal_stats pb;
        assert_int_equal(shoal_stats_compute(b, n, &d, &pb, &e), SHOAL_OK);
        expect_same_school(&pa, &pb, shifts[k]);
        /* without the world the seam cuts the school apart */
        if (k == 0) {
            shoal_stats raw = stats_r(b, n, 1.0, 0);
            assert_true(raw.extent[0] > 50 && raw.radius_of_gyration > 10);
        }
        free(b);
    }
    free(a);
}

/* Minimum-image brute force against the grid with images: boids on and near the seams,
 * positions outside the box (wrapped first), one periodic axis and three. */
static void test_periodic_brute_force(void **state)
{
    (void)state;
    enum { N = 1500 };
    float *r = malloc(N * 6 * sizeof *r);
    uint64_t s = 5;
    for (int axes = 1; axes <= 7; axes += 6) {
        for (size_t i = 0; i < N; i++) {
            for (int c = 0; c < 6; c++) {
                s = s * 6364136223846793005ull + 1442695040888963407ull;
                double u = (double)(s >> 11) * (1.0 / 9007199254740992.0);
                r[i * 6 + c] = c < 3 ? (float)(u * 64 - 32) : (float)(u - 0.5);
            }
            if (i % 10 == 0)
                r[i * 6] = 32; /* exactly on the seam (wraps to -32) */
            if (i % 10 == 1)
                r[i * 6 + 1] = -32.0f + 0.001f * (float)(i % 7);
            if (i % 10 == 2)
                r[i * 6 + 2] += 64; /* one period out */
        }
        double radius = 2.5;
        shoal_stats_desc d = periodic_desc(radius, axes);
        shoal_stats st;
        shoal_error e;
        assert_int_equal(shoal_stats_compute(r, N, &d, &st, &e), SHOAL_OK);
        for (int t = 1; t <= 3; t += 2) { /* the same bits for any thread count */
            shoal_stats_desc dt = d;
            dt.thread_count = t;
            shoal_stats other;
            assert_int_equal(shoal_stats_compute(r, N, &dt, &other, &e), SHOAL_OK);
            assert_memory_equal(&other, &st, sizeof st);
        }
        /* brute force: wrapped floats, each axis's difference to the nearest image in float64 */
        double *w = malloc(N * 3 * sizeof *w);
        for (size_t i = 0; i < N; i++)
            for (int c = 0; c < 3; c++) {
                double x = r[i * 6 + c];
                if ((axes >> c) & 1)
                    x = x >= 32 ? x - 64 : x < -32 ? x + 64 : x;
                w[i * 3 + c] = x;
            }
        uint64_t pairs = 0, *comp = malloc(N * sizeof *comp);
        double nnsum = 0;
        for (size_t i = 0; i < N; i++)
            comp[i] = i;
        for (size_t i = 0; i < N; i++) {
            double best = INFINITY;
            for (size_t j = 0; j < N; j++) {
                if (j == i)
                    continue;
                double dd[3];
                for (int c = 0; c < 3; c++) {
                    double a = w[i * 3 + c], b = w[j * 3 + c];
                    dd[c] = a - b;
                    if ((axes >> c) & 1) {
                        double up = a - (b + 64), down = a - (b - 64);
                        if (fabs(up) < fabs(dd[c]))
                            dd[c] = up;
                        if (fabs(down) < fabs(dd[c]))
                            dd[c] = down;
                    }
                }
                double d2 = (dd[0] * dd[0] + dd[1] * dd[1]) + dd[2] * dd[2];
                best = d2 < best ? d2 : best;
                if (d2 <= radius * radius) {
                    pairs++;
                    uint64_t a = i, b = j; /* union */
                    while (comp[a] != a)
                        a = comp[a];
                    while (comp[b] != b)
                        b = comp[b];
                    if (a != b)
                        comp[a > b ? a : b] = a < b ? a : b;
                }
            }
            nnsum += sqrt(best);
        }
        uint64_t groups = 0;
        for (size_t i = 0; i < N; i++)
            groups += comp[i] == i;
        NEAR(st.mean_neighbors, (double)pairs / N, 0);
        assert_true(st.group_count == groups);
        NEAR(st.mean_nn_distance, nnsum / N, 1e-12);
        printf("  periodic axes %d: %.4f neighbours, %llu groups, nn %.5f (brute force agrees)\n",
               axes, st.mean_neighbors, (unsigned long long)st.group_count, st.mean_nn_distance);
        free(w);
        free(comp);
    }
    free(r);
}

static void test_periodic_inputs(void **state)
{
    (void)state;
    float r[12] = {0, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0};
    shoal_stats st, plain;
    shoal_error e;
    shoal_stats_desc d = periodic_desc(32, 1); /* radius of half the box */
    assert_int_equal(shoal_stats_compute(r, 2, &d, &st, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "below half the box"));
    d = periodic_desc(1, 1);
    d.world.size[0] = 0;
    assert_int_equal(shoal_stats_compute(r, 2, &d, &st, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "periodic_x needs a size"));
    /* a box that is not periodic changes nothing */
    d = shoal_stats_desc_default();
    d.world.size[0] = d.world.size[1] = d.world.size[2] = 10;
    assert_int_equal(shoal_stats_compute(r, 2, &d, &st, &e), SHOAL_OK);
    plain = stats_r(r, 2, 1, 0);
    assert_memory_equal(&st, &plain, sizeof st);
    /* evenly round a periodic axis: no circular mean, the box's centre */
    float ring[4 * 6] = {-32, 0, 0, 1, 0, 0, -16, 0, 0, 1, 0, 0,
                         0,   0, 0, 1, 0, 0, 16,  0, 0, 1, 0, 0};
    d = periodic_desc(1, 1);
    assert_int_equal(shoal_stats_compute(ring, 4, &d, &st, &e), SHOAL_OK);
    assert_true(st.centroid[0] == 0);
}

/* ---- per boid: neighbour counts and group labels --------------------------------------------- */

/* Brute force over the finite rows (minimum image on the periodic axes of a 64-box, axes a
 * bit mask): per row its count (SHOAL_STATS_NONE for a non-finite row) and its component
 * (the smallest row in it). */
static void per_boid_brute(const float *r, size_t n, double radius, int axes, uint32_t *cnt,
                           uint32_t *comp)
{
    double *w = malloc(n * 3 * sizeof *w);
    int *ok = malloc(n * sizeof *ok);
    for (size_t i = 0; i < n; i++) {
        ok[i] = 1;
        for (int c = 0; c < 6; c++)
            ok[i] &= isfinite(r[i * 6 + c]) != 0;
        for (int c = 0; c < 3; c++) {
            double x = r[i * 6 + c];
            if ((axes >> c) & 1)
                x = x >= 32 ? x - 64 : x < -32 ? x + 64 : x;
            w[i * 3 + c] = x;
        }
        cnt[i] = ok[i] ? 0 : SHOAL_STATS_NONE;
        comp[i] = (uint32_t)i;
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; ok[i] && j < n; j++) {
            if (j == i || !ok[j])
                continue;
            double dd[3];
            for (int c = 0; c < 3; c++) {
                double a = w[i * 3 + c], b = w[j * 3 + c];
                dd[c] = a - b;
                if ((axes >> c) & 1) {
                    double up = a - (b + 64), down = a - (b - 64);
                    dd[c] = fabs(up) < fabs(dd[c]) ? up : dd[c];
                    dd[c] = fabs(down) < fabs(dd[c]) ? down : dd[c];
                }
            }
            if ((dd[0] * dd[0] + dd[1] * dd[1]) + dd[2] * dd[2] <= radius * radius) {
                cnt[i]++;
                uint32_t a = (uint32_t)i, b = (uint32_t)j;
                while (comp[a] != a)
                    a = comp[a];
                while (comp[b] != b)
                    b = comp[b];
                if (a != b)
                    comp[a > b ? a : b] = a < b ? a : b;
            }
        }
    for (size_t i = 0; i < n; i++) {
        uint32_t a = (uint32_t)i;
        while (comp[a] != a)
            a = comp[a];
        comp[i] = a;
    }
    free(w);
    free(ok);
}

/* The per-boid arrays against the brute force and against shoal_stats_compute's figures:
 * counts equal, labels the same partition numbered by size (ties by first row), their mean,
 * group count and largest group the struct's; the same bits for 1 and 3 threads. */
static void check_per_boid(const char *what, const float *rows, size_t n, double radius, int axes)
{
    shoal_stats_desc d = axes ? periodic_desc(radius, axes) : shoal_stats_desc_default();
    d.radius = radius;
    uint32_t *cnt = malloc(n * sizeof *cnt), *lab = malloc(n * sizeof *lab);
    uint32_t *bc = malloc(n * sizeof *bc), *bg = malloc(n * sizeof *bg);
    uint32_t *other = malloc(n * sizeof *other);
    shoal_error e;
    uint64_t groups = 0;
    assert_int_equal(shoal_stats_neighbor_counts(rows, n, &d, cnt, &e), SHOAL_OK);
    assert_int_equal(shoal_stats_group_labels(rows, n, &d, lab, &groups, &e), SHOAL_OK);
    shoal_stats s;
    assert_int_equal(shoal_stats_compute(rows, n, &d, &s, &e), SHOAL_OK);
    per_boid_brute(rows, n, radius, axes, bc, bg);
    size_t m = n - s.nonfinite;
    uint64_t total = 0;
    uint32_t *size = calloc(groups + 1, sizeof *size), *first = malloc((groups + 1) * 4);
    uint32_t *of_comp = malloc(n * sizeof *of_comp);
    for (size_t i = 0; i < n; i++)
        of_comp[i] = SHOAL_STATS_NONE;
    for (size_t i = 0; i < n; i++) {
        if (cnt[i] != bc[i])
            fail_msg("%s, radius %g: row %zu has %u neighbours, brute force %u", what, radius, i,
                     cnt[i], bc[i]);
        if (bc[i] == SHOAL_STATS_NONE) {
            assert_true(lab[i] == SHOAL_STATS_NONE);
            continue;
        }
        total += cnt[i];
        if (lab[i] >= groups)
            fail_msg("%s: row %zu label %u of %llu groups", what, i, lab[i],
                     (unsigned long long)groups);
        /* one label per component and one component per label */
        if (of_comp[bg[i]] == SHOAL_STATS_NONE)
            of_comp[bg[i]] = lab[i];
        if (of_comp[bg[i]] != lab[i])
            fail_msg("%s, radius %g: rows %u and %zu are one group, labels %u and %u", what, radius,
                     bg[i], i, of_comp[bg[i]], lab[i]);
        if (size[lab[i]]++ == 0)
            first[lab[i]] = (uint32_t)i;
        else if (bg[first[lab[i]]] != bg[i])
            fail_msg("%s, radius %g: rows %u and %zu apart, both label %u", what, radius,
                     first[lab[i]], i, lab[i]);
    }
    assert_true(groups == s.group_count);
    for (uint64_t q = 0; q < groups; q++) {
        assert_true(size[q] > 0);
        if (q > 0)
            assert_true(size[q] < size[q - 1] ||
                        (size[q] == size[q - 1] && first[q] > first[q - 1]));
    }
    if (m > 0) {
        NEAR((double)total / (double)m, s.mean_neighbors, 0);
        NEAR((double)size[0] / (double)m, s.largest_group_fraction, 0);
    }
    for (int t = 1; t <= 3; t += 2) {
        d.thread_count = t;
        assert_int_equal(shoal_stats_neighbor_counts(rows, n, &d, other, &e), SHOAL_OK);
        assert_memory_equal(other, cnt, n * sizeof *cnt);
        assert_int_equal(shoal_stats_group_labels(rows, n, &d, other, NULL, &e), SHOAL_OK);
        assert_memory_equal(other, lab, n * sizeof *lab);
    }
    free(cnt);
    free(lab);
    free(bc);
    free(bg);
    free(other);
    free(size);
    free(first);
    free(of_comp);
}

static void test_per_boid(void **state)
{
    (void)state;
    enum { N = 1200 };
    /* clusters in a 64-box (some across its seams), outliers, duplicated rows, NaN rows */
    float *c = scene_clustered(N, 9, 1.5f, 30.0f, 1.0f, 21);
    scene_add_outliers(c, N, 22);
    memcpy(c + 100 * 6, c + 300 * 6, 40 * 6 * sizeof(float));
    for (size_t i = 0; i < N; i++)
        for (int k = 0; k < 3; k++)
            if (!isfinite(c[i * 6 + k]) || fabsf(c[i * 6 + k]) >= 32)
                c[i * 6 + k] = fmodf(isfinite(c[i * 6 + k]) ? c[i * 6 + k] : 0.0f, 32.0f);
    c[7 * 6 + 4] = NAN;
    c[500 * 6] = INFINITY;
    c[5 * 6] = 32; /* on a seam */
    const double radii[] = {0, 0.3, 1, 2.5, 9};
    for (int k = 0; k < 5; k++) {
        check_per_boid("clusters", c, N, radii[k], 0);
        check_per_boid("clusters, periodic x", c, N, radii[k], 1);
        check_per_boid("clusters, periodic xyz", c, N, radii[k], 7);
    }
    check_per_boid("clusters, every boid in reach", c, N, 1e30, 0);
    check_per_boid("one boid", c, 1, 1, 0);
    float one_point[3 * 6] = {1, 2, 3, 1, 0, 0, 1, 2, 3, 0, 1, 0, 1, 2, 3, 0, 0, 1};
    check_per_boid("one point", one_point, 3, 0, 0);

    /* ties by first row; the errors of shoal_stats_compute; NULL arrays; nothing of 0 rows */
    float pairs[4 * 6] = {0,    0, 0, 1, 0, 0, 10,    0, 0, 1, 0, 0,
                          0.5f, 0, 0, 1, 0, 0, 10.5f, 0, 0, 1, 0, 0};
    uint32_t lab[4], cnt[4];
    uint64_t groups;
    shoal_error e;
    shoal_stats_desc d = shoal_stats_desc_default();
    assert_int_equal(shoal_stats_group_labels(pairs, 4, &d, lab, &groups, &e), SHOAL_OK);
    assert_true(groups == 2 && lab[0] == 0 && lab[2] == 0 && lab[1] == 1 && lab[3] == 1);
    d.radius = -1;
    cnt[0] = 77;
    assert_int_equal(shoal_stats_neighbor_counts(pairs, 4, &d, cnt, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "radius"));
    assert_true(cnt[0] == 77); /* written on success only */
    assert_int_equal(shoal_stats_group_labels(pairs, 4, &d, lab, NULL, &e), SHOAL_ERR_INPUT);
    d = periodic_desc(40, 1);
    assert_int_equal(shoal_stats_neighbor_counts(pairs, 4, &d, cnt, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "below half the box"));
    d = shoal_stats_desc_default();
    assert_int_equal(shoal_stats_neighbor_counts(pairs, 4, &d, NULL, &e), SHOAL_ERR_INPUT);
    assert_int_equal(shoal_stats_group_labels(NULL, 4, &d, lab, NULL, &e), SHOAL_ERR_INPUT);
    groups = 5;
    assert_int_equal(shoal_stats_group_labels(NULL, 0, NULL, NULL, &groups, &e), SHOAL_OK);
    assert_true(groups == 0);
    assert_int_equal(shoal_stats_neighbor_counts(NULL, 0, NULL, NULL, &e), SHOAL_OK);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_boids),
        cmocka_unit_test(test_mill_and_polarisation),
        cmocka_unit_test(test_groups_chain),
        cmocka_unit_test(test_nonfinite_and_errors),
        cmocka_unit_test(test_soa_equals_rows),
        cmocka_unit_test(test_random_vs_numpy),
        cmocka_unit_test(test_one_point),
        cmocka_unit_test(test_huge_radius),
        cmocka_unit_test(test_thin_line),
        cmocka_unit_test(test_dense_ball),
        cmocka_unit_test(test_lattice_exact),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_concurrent_calls),
        cmocka_unit_test(test_periodic_school_across_seam),
        cmocka_unit_test(test_periodic_brute_force),
        cmocka_unit_test(test_periodic_inputs),
        cmocka_unit_test(test_per_boid),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
