/* SPDX-License-Identifier: MIT */
/* CPU/GPU parity: every model, N from 1 to a few thousand (and a grid-heavy uniform box),
 * 1000 steps, must give the same bits on shoal_sim and shoal_gpu_sim (stable order). Also
 * the fault report (same boid and step, state left as before it) and the atomic order.
 * Where there is no CUDA build, GPU or driver this prints "SKIP: no CUDA device: <reason>"
 * and exits 77, which meson reports as SKIP: it never passes silently. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "shoal/gpu.h"
#include "shoal/shoal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Initial state of the model (shoal init's), optionally spread out so that a few
 * thousand boids make a grid of many cells rather than one dense ball. */
static float *initial(shoal_sim_desc *d, uint64_t seed)
{
    shoal_sim *s;
    shoal_error e;
    if (shoal_sim_create(d, &s, &e))
        fail_msg("%s", e.message);
    shoal_sim_init_state(s, seed);
    float *rows = malloc(d->boid_count * 6 * sizeof(float));
    shoal_sim_get_state(s, rows);
    shoal_sim_destroy(s);
    return rows;
}

/* Uniform box of side `side` centred at 0, velocities in [-0.1, 0.1]^3 (xorshift). */
static float *uniform_box(size_t n, float side, uint64_t seed)
{
    float *rows = malloc(n * 6 * sizeof(float));
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < n * 6; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        float u = (float)(x >> 40) / 16777216.0f;
        rows[i] = (i % 6) < 3 ? (u - 0.5f) * side : (u - 0.5f) * 0.2f;
    }
    return rows;
}

/* Run `steps` steps of `d` from `rows` on both backends; returns the identical rows. */
static size_t parity(const char *label, shoal_sim_desc *d, const float *rows, int steps)
{
    shoal_error e;
    shoal_sim *cpu;
    shoal_gpu_sim *gpu;
    size_t n = d->boid_count;
    if (shoal_sim_create(d, &cpu, &e) || shoal_sim_set_state(cpu, rows, &e))
        fail_msg("%s: cpu: %s", label, e.message);
    if (shoal_gpu_sim_create(d, SHOAL_GPU_ORDER_STABLE, &gpu, &e) ||
        shoal_gpu_sim_set_state(gpu, rows, &e))
        fail_msg("%s: gpu: %s", label, e.message);
    shoal_status sc = shoal_sim_step(cpu, steps, &e);
    shoal_error eg;
    shoal_status sg = shoal_gpu_sim_step(gpu, steps, &eg);
    if (sc != sg)
        fail_msg("%s: cpu status %d (%s), gpu status %d (%s)", label, sc, sc ? e.message : "", sg,
                 sg ? eg.message : "");
    float *a = malloc(n * 6 * sizeof(float)), *b = malloc(n * 6 * sizeof(float));
    shoal_sim_get_state(cpu, a);
    if (shoal_gpu_sim_get_state(gpu, b, &e))
        fail_msg("%s: %s", label, e.message);
    size_t same = 0, first_diff = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        if (memcmp(a + i * 6, b + i * 6, 6 * sizeof(float)) == 0)
            same++;
        else if (first_diff == SIZE_MAX)
            first_diff = i;
    }
    printf("parity %-28s N=%-7zu steps=%-5d identical %zu/%zu%s\n", label, n, steps, same, n,
           same == n ? "" : "  <-- DIFFERENT");
    if (same != n) {
        const float *x = a + first_diff * 6, *y = b + first_diff * 6;
        printf("  first differing row %zu: cpu %.9g %.9g %.9g %.9g %.9g %.9g\n"
               "                          gpu %.9g %.9g %.9g %.9g %.9g %.9g\n",
               first_diff, x[0], x[1], x[2], x[3], x[4], x[5], y[0], y[1], y[2], y[3], y[4], y[5]);
    }
    fflush(stdout);
    free(a);
    free(b);
    shoal_sim_destroy(cpu);
    shoal_gpu_sim_destroy(gpu);
    return same;
}

/* Returns 1 when every boid matched (failures are counted by the caller, so one run
 * reports every case). */
static int model_case(shoal_model m, size_t n, int steps, float spread)
{
    shoal_sim_desc d = shoal_sim_desc_default();
    d.model = m;
    shoal_params_default(m, &d.params);
    d.boid_count = n;
    d.seed = 11;
    if (spread > 0 && m != SHOAL_MODEL_HEADING && m != SHOAL_MODEL_CLASSIC)
        d.params.init_pos_radius = spread;
    float *rows = initial(&d, 7 + n);
    char label[64];
    snprintf(label, sizeof label, "%s", shoal_model_name(m));
    size_t same = parity(label, &d, rows, steps);
    free(rows);
    return same == n;
}

static void test_models_small(void **state)
{
    (void)state;
    static const size_t sizes[] = {1, 2, 33, 1000};
    int bad = 0;
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
            bad += !model_case((shoal_model)m, sizes[k], 1000, 0);
    assert_int_equal(bad, 0);
}

static void test_models_spread(void **state)
{
    (void)state;
    int bad = 0;
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++)
        bad += !model_case((shoal_model)m, 4000, 1000, 8.0f);
    assert_int_equal(bad, 0);
}

static void test_uniform_box(void **state)
{
    (void)state;
    /* density 0.5 in a box of walls, the benchmark's setting, at a size that fills many
     * grid rows; steer and average */
    const size_t n = 32768;
    float side = cbrtf((float)n / 0.5f);
    for (int m = 0; m < 2; m++) {
        shoal_sim_desc d = shoal_sim_desc_default();
        d.model = (shoal_model)m;
        shoal_params_default(d.model, &d.params);
        d.boid_count = n;
        for (int c = 0; c < 3; c++)
            d.params.wall_size[c] = side;
        float *rows = uniform_box(n, side, 3);
        char label[64];
        snprintf(label, sizeof label, "%s uniform box", shoal_model_name(d.model));
        size_t same = parity(label, &d, rows, 300);
        free(rows);
        assert_int_equal(same, n);
    }
}

static void test_brute_and_spheres(void **state)
{
    (void)state;
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
        shoal_sim_desc d = shoal_sim_desc_default();
        d.model = (shoal_model)m;
        shoal_params_default(d.model, &d.params);
        d.boid_count = 500;
        d.neighbors = SHOAL_NEIGHBORS_BRUTE;
        /* two obstacle spheres (every model has the avoid term) */
        d.params.avoid_force = 2.0f;
        d.params.sphere_count = 2;
        d.params.spheres[0] = (shoal_sphere){{1.0f, 0.5f, 0.0f}, 1.5f};
        d.params.spheres[1] = (shoal_sphere){{-2.0f, 1.0f, 1.0f}, 0.75f};
        float *rows = initial(&d, 99);
        char label[64];
        snprintf(label, sizeof label, "%s brute+spheres", shoal_model_name(d.model));
        size_t same = parity(label, &d, rows, 1000);
        free(rows);
        assert_int_equal(same, d.boid_count);
    }
}

static void test_fault(void **state)
{
    (void)state;
    /* fov: a boid 1e20 from the boundary centre overflows |p - c|^2 to infinity and its
     * boundary force to NaN in the first step. Both backends name the lowest such row and
     * step 1, and leave the state as before that step. */
    shoal_sim_desc d = shoal_sim_desc_default();
    d.model = SHOAL_MODEL_FOV;
    shoal_params_default(d.model, &d.params);
    d.boid_count = 50;
    float *rows = initial(&d, 5);
    rows[31 * 6 + 0] = 1e20f;
    rows[12 * 6 + 1] = -1e20f;
    shoal_error ec, eg;
    shoal_sim *cpu;
    shoal_gpu_sim *gpu;
    assert_int_equal(shoal_sim_create(&d, &cpu, &ec), SHOAL_OK);
    assert_int_equal(shoal_sim_set_state(cpu, rows, &ec), SHOAL_OK);
    assert_int_equal(shoal_gpu_sim_create(&d, SHOAL_GPU_ORDER_STABLE, &gpu, &eg), SHOAL_OK);
    assert_int_equal(shoal_gpu_sim_set_state(gpu, rows, &eg), SHOAL_OK);
    assert_int_equal(shoal_sim_step(cpu, 3, &ec), SHOAL_ERR_NONFINITE);
    assert_int_equal(shoal_gpu_sim_step(gpu, 3, &eg), SHOAL_ERR_NONFINITE);
    printf("cpu: %s\ngpu: %s\n", ec.message, eg.message);
    assert_string_equal(ec.message, eg.message);
    assert_non_null(strstr(eg.message, "boid 12 "));
    float *b = malloc(50 * 6 * sizeof(float));
    assert_int_equal(shoal_gpu_sim_get_state(gpu, b, &eg), SHOAL_OK);
    assert_memory_equal(b, rows, 50 * 6 * sizeof(float));
    free(b);
    free(rows);
    shoal_sim_destroy(cpu);
    shoal_gpu_sim_destroy(gpu);
}

static void test_atomic_order_runs(void **state)
{
    (void)state;
    /* The atomic order is a different summation order: finite results, and (reported, not
     * asserted, since it depends on scheduling) how many boids still match the CPU. */
    shoal_sim_desc d = shoal_sim_desc_default();
    d.boid_count = 4000;
    d.params.init_pos_radius = 8.0f;
    float *rows = initial(&d, 1);
    shoal_error e;
    shoal_gpu_sim *g1, *g2;
    assert_int_equal(shoal_gpu_sim_create(&d, SHOAL_GPU_ORDER_ATOMIC, &g1, &e), SHOAL_OK);
    assert_int_equal(shoal_gpu_sim_create(&d, SHOAL_GPU_ORDER_ATOMIC, &g2, &e), SHOAL_OK);
    assert_int_equal(shoal_gpu_sim_set_state(g1, rows, &e), SHOAL_OK);
    assert_int_equal(shoal_gpu_sim_set_state(g2, rows, &e), SHOAL_OK);
    assert_int_equal(shoal_gpu_sim_step(g1, 300, &e), SHOAL_OK);
    assert_int_equal(shoal_gpu_sim_step(g2, 300, &e), SHOAL_OK);
    float *a = malloc(4000 * 6 * sizeof(float)), *b = malloc(4000 * 6 * sizeof(float));
    assert_int_equal(shoal_gpu_sim_get_state(g1, a, &e), SHOAL_OK);
    assert_int_equal(shoal_gpu_sim_get_state(g2, b, &e), SHOAL_OK);
    assert_int_equal(shoal_state_check_finite(a, 4000, "atomic run", &e), SHOAL_OK);
    size_t same = 0;
    double maxd = 0;
    for (size_t i = 0; i < 4000; i++) {
        same += memcmp(a + i * 6, b + i * 6, 24) == 0;
        for (int c = 0; c < 3; c++)
            maxd = fmax(maxd, fabs((double)a[i * 6 + c] - b[i * 6 + c]));
    }
    printf("atomic order, two runs, 4000 boids, 300 steps: %zu/4000 identical, max position "
           "difference %.6g\n",
           same, maxd);
    free(a);
    free(b);
    free(rows);
    shoal_gpu_sim_destroy(g1);
    shoal_gpu_sim_destroy(g2);
}

/* shoal run --backend cuda (the program, $SHOAL_EXE): headless frames of a GPU run are the
 * CPU run's frames, byte for byte (the same state each frame, drawn by the same renderer;
 * instances are identified by input row, so the view's order does not matter). */
static int files_equal(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int eq = fa && fb;
    while (eq) {
        int ca = fgetc(fa), cb = fgetc(fb);
        if (ca != cb)
            eq = 0;
        if (ca == EOF || cb == EOF)
            break;
    }
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    return eq;
}

static void test_run_backend(void **state)
{
    (void)state;
    const char *exe = getenv("SHOAL_EXE");
    if (!exe) {
        printf("SKIP (test_run_backend): SHOAL_EXE not set\n");
        return;
    }
    char dir[] = "/tmp/shoal-gpu-run-XXXXXX";
    assert_non_null(mkdtemp(dir));
    const char *models[] = {"steer", "heading"};
    for (int m = 0; m < 2; m++) {
        const char *backends[] = {"cpu", "cuda"};
        for (int b = 0; b < 2; b++) {
            char cmd[1024];
            snprintf(cmd, sizeof cmd,
                     "%s run --headless --model %s --count 3000 --frames 30 --size 320x180 "
                     "--threads 2 --backend %s --out %s/%s_%s > %s/%s_%s.txt 2>&1",
                     exe, models[m], backends[b], dir, models[m], backends[b], dir, models[m],
                     backends[b]);
            if (system(cmd) != 0)
                fail_msg("failed: %s", cmd);
        }
        int same = 0;
        for (int f = 0; f < 30; f++) {
            char a[512], c[512];
            snprintf(a, sizeof a, "%s/%s_cpu/frame_%05d.png", dir, models[m], f);
            snprintf(c, sizeof c, "%s/%s_cuda/frame_%05d.png", dir, models[m], f);
            same += files_equal(a, c);
        }
        printf("run --backend cuda, %s: %d/30 frames identical to the CPU run's\n", models[m],
               same);
        assert_int_equal(same, 30);
    }
    /* obstacle meshes and predators are CPU-only: the window refuses them on the GPU */
    char path[512], cmd[1024];
    snprintf(path, sizeof path, "%s/flat.obj", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n", f);
    fclose(f);
    snprintf(path, sizeof path, "%s/flat.ini", dir);
    assert_non_null(f = fopen(path, "w"));
    fputs("[scene]\nmodel = steer\ncount = 500\n[mesh f]\nfile = flat.obj\n", f);
    fclose(f);
    const char *refused[] = {
        "--scene %s/flat.ini --out %s/m",
        "--model steer --count 500 --set predator_count=2 --out %s/p",
    };
    for (int k = 0; k < 2; k++) {
        char extra[600];
        snprintf(extra, sizeof extra, refused[k], dir, dir);
        snprintf(cmd, sizeof cmd,
                 "%s run --headless --frames 2 --size 160x120 --backend cuda %s > %s/r.txt 2>&1",
                 exe, extra, dir);
        int rc = system(cmd);
        assert_true(WIFEXITED(rc));
        assert_int_equal(WEXITSTATUS(rc), 2);
        char msg[600] = "";
        snprintf(path, sizeof path, "%s/r.txt", dir);
        assert_non_null(f = fopen(path, "r"));
        size_t got = fread(msg, 1, sizeof msg - 1, f);
        msg[got] = 0;
        fclose(f);
        printf("run --backend cuda %s: %s", extra, msg);
        assert_non_null(strstr(msg, "CUDA backend"));
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    shoal_error e;
    if (shoal_gpu_available(&e)) {
        printf("SKIP: no CUDA device: %s\n", e.message);
        fflush(stdout);
        return 77; /* meson: skipped */
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_models_small), cmocka_unit_test(test_models_spread),
        cmocka_unit_test(test_uniform_box),  cmocka_unit_test(test_brute_and_spheres),
        cmocka_unit_test(test_fault),        cmocka_unit_test(test_atomic_order_runs),
        cmocka_unit_test(test_run_backend),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
