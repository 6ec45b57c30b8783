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
#include "tests/cli_harness.h"

#include <dirent.h>
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
/* The default of a model's parameter `name` (NAN when the model has none): the tests pick
 * their settings by what a model's table has, not by its name. */
static float param_default(shoal_model m, const char *name)
{
    size_t n;
    const shoal_param_info *list = shoal_params_list(m, &n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i].name, name) == 0)
            return list[i].default_value;
    return NAN;
}

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

/* Run `steps` steps of `d` (with the obstacle meshes of `sc`, if any) from `rows` on both
 * backends; returns the identical rows (0 when the predators differ). */
static size_t parity_scene(const char *label, shoal_sim_desc *d, const shoal_scene *scn,
                           const float *rows, int steps)
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
    if (scn && scn->mesh_count > 0 &&
        (shoal_scene_add_obstacles(scn, cpu, &e) || shoal_gpu_sim_copy_obstacles(gpu, cpu, &e)))
        fail_msg("%s: obstacles: %s", label, e.message);
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
    /* the predators too (positions and velocities) */
    float pc[SHOAL_MAX_PREDATORS * 6], pg[SHOAL_MAX_PREDATORS * 6];
    memset(pc, 0, sizeof pc);
    memset(pg, 0, sizeof pg);
    size_t npc = shoal_sim_predators(cpu, pc, pc + 3 * SHOAL_MAX_PREDATORS, SHOAL_MAX_PREDATORS);
    size_t npg =
        shoal_gpu_sim_predators(gpu, pg, pg + 3 * SHOAL_MAX_PREDATORS, SHOAL_MAX_PREDATORS);
    int pred_same = npc == npg && memcmp(pc, pg, sizeof pc) == 0;
    printf("parity %-28s N=%-7zu steps=%-5d identical %zu/%zu", label, n, steps, same, n);
    if (npc)
        printf(", predators %zu %s", npc, pred_same ? "identical" : "DIFFERENT");
    printf("%s\n", same == n && pred_same ? "" : "  <-- DIFFERENT");
    if (!pred_same)
        same = 0;
    if (first_diff != SIZE_MAX) {
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

static size_t parity(const char *label, shoal_sim_desc *d, const float *rows, int steps)
{
    return parity_scene(label, d, NULL, rows, steps);
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
    /* a model that starts in a smaller ball (steer's, average's): spread over `spread` */
    if (spread > 0 && param_default(m, "init_pos_radius") < spread)
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

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every scene of assets/scenes (meshes, spheres, predators, heading targets: whatever the
 * directory holds, in name order), at its own parameters and at most 8192 boids, 1000
 * steps. */
static void test_scenes(void **state)
{
    (void)state;
    char dir[1024], *names[256];
    size_t count = 0;
    snprintf(dir, sizeof dir, "%s/assets/scenes", SHOAL_SOURCE_ROOT);
    DIR *d0 = opendir(dir);
    assert_non_null(d0);
    for (struct dirent *de; (de = readdir(d0)) && count < 256;) {
        size_t len = strlen(de->d_name);
        if (len > 4 && strcmp(de->d_name + len - 4, ".ini") == 0)
            names[count++] = strndup(de->d_name, len - 4);
    }
    closedir(d0);
    qsort(names, count, sizeof names[0], cmp_name);
    assert_true(count >= (size_t)SHOAL_MODEL_COUNT); /* a scene per model at least */
    int bad = 0;
    for (size_t k = 0; k < count; k++) {
        char path[1200];
        snprintf(path, sizeof path, "%s/%s.ini", dir, names[k]);
        shoal_scene sc;
        shoal_error e;
        if (shoal_scene_load(path, &sc, &e))
            fail_msg("%s", e.message);
        shoal_sim_desc d = sc.desc;
        if (d.boid_count > 8192)
            d.boid_count = 8192;
        float *rows = initial(&d, d.seed);
        size_t same = parity_scene(names[k], &d, &sc, rows, 1000);
        bad += same != d.boid_count;
        free(rows);
        free(names[k]);
    }
    assert_int_equal(bad, 0);
}

/* Identical rows and predators of a CPU and a GPU sim now. */
static size_t same_now(const char *label, shoal_sim *cpu, shoal_gpu_sim *gpu)
{
    shoal_error e;
    size_t n = shoal_sim_count(cpu), same = 0;
    float *a = malloc(n * 6 * sizeof(float)), *b = malloc(n * 6 * sizeof(float));
    assert_int_equal(shoal_sim_get_rows(cpu, a, n, &e), SHOAL_OK);
    assert_int_equal(shoal_gpu_sim_get_rows(gpu, b, n, &e), SHOAL_OK);
    for (size_t i = 0; i < n; i++)
        same += memcmp(a + i * 6, b + i * 6, 6 * sizeof(float)) == 0;
    float pc[SHOAL_MAX_PREDATORS * 6], pg[SHOAL_MAX_PREDATORS * 6];
    memset(pc, 0, sizeof pc);
    memset(pg, 0, sizeof pg);
    size_t npc = shoal_sim_predators(cpu, pc, pc + 3 * SHOAL_MAX_PREDATORS, SHOAL_MAX_PREDATORS);
    size_t npg =
        shoal_gpu_sim_predators(gpu, pg, pg + 3 * SHOAL_MAX_PREDATORS, SHOAL_MAX_PREDATORS);
    if (npc != npg || memcmp(pc, pg, sizeof pc) != 0)
        same = 0;
    printf("parity %-36s identical %zu/%zu, predators %zu/%zu\n", label, same, n, npc, npg);
    fflush(stdout);
    free(a);
    free(b);
    return same;
}

/* Issue 37 item 7: parameters changed between steps on both backends (shoal_sim_set_params,
 * shoal_gpu_sim_set_params) keep them identical: weights, a larger radius (the grid laid out
 * again, its device tables grown), a smaller one, more predators (restarted), and a new
 * field_cell (the field built again from the meshes an obstacle field lent the GPU sim; the
 * CPU sim holds its own). A field copied from a CPU sim cannot be rebuilt: refused. */
static void test_set_params_and_obstacles(void **state)
{
    (void)state;
    static const char *const scenes[] = {"steer_rock_mesh", "heading", "fov_rock"};
    int bad = 0;
    for (size_t k = 0; k < sizeof scenes / sizeof scenes[0]; k++) {
        char path[1024], label[96];
        snprintf(path, sizeof path, "%s/assets/scenes/%s.ini", SHOAL_SOURCE_ROOT, scenes[k]);
        shoal_scene sc;
        shoal_error e;
        if (shoal_scene_load(path, &sc, &e))
            fail_msg("%s", e.message);
        shoal_sim_desc d = sc.desc;
        if (d.boid_count > 3000)
            d.boid_count = 3000;
        float *rows = initial(&d, d.seed);
        shoal_sim *cpu;
        shoal_gpu_sim *gpu;
        shoal_obstacles *obs;
        assert_int_equal(shoal_sim_create(&d, &cpu, &e), SHOAL_OK);
        assert_int_equal(shoal_sim_set_rows(cpu, rows, d.boid_count, &e), SHOAL_OK);
        assert_int_equal(shoal_scene_add_obstacles(&sc, cpu, &e), SHOAL_OK);
        assert_int_equal(shoal_gpu_sim_create(&d, SHOAL_GPU_ORDER_STABLE, &gpu, &e), SHOAL_OK);
        assert_int_equal(shoal_gpu_sim_set_rows(gpu, rows, d.boid_count, &e), SHOAL_OK);
        assert_int_equal(shoal_scene_make_obstacles(&sc, &obs, &e), SHOAL_OK);
        assert_int_equal(shoal_gpu_sim_set_obstacles(gpu, obs, &e), SHOAL_OK);
        shoal_obstacles_destroy(obs); /* lent: the GPU sim kept its own copy */
        shoal_params p = d.params;
        for (int round = 0; round < 5; round++) {
            assert_int_equal(shoal_sim_step(cpu, 100, &e), SHOAL_OK);
            assert_int_equal(shoal_gpu_sim_step(gpu, 100, &e), SHOAL_OK);
            snprintf(label, sizeof label, "%s set_params round %d", scenes[k], round);
            bad += same_now(label, cpu, gpu) != d.boid_count;
            if (round == 0) { /* every weight a third up */
                size_t np;
                const shoal_param_info *pl = shoal_params_list(d.model, &np);
                for (size_t i = 0; i < np; i++)
                    if (strstr(pl[i].name, "weight")) {
                        float v;
                        memcpy(&v, (char *)&p + pl[i].offset, sizeof v);
                        v = v * 4 / 3 < pl[i].max ? v * 4 / 3 : v;
                        memcpy((char *)&p + pl[i].offset, &v, sizeof v);
                    }
            } else if (round == 1 || round == 2) {
                /* every radius up (the grid laid out again, its tables grown), then down */
                float f = round == 1 ? 1.25f : 0.8f;
                size_t np;
                const shoal_param_info *pl = shoal_params_list(d.model, &np);
                for (size_t i = 0; i < np; i++) {
                    int sq = strstr(pl[i].name, "dist2") != NULL;
                    if (!sq && !strstr(pl[i].name, "radius"))
                        continue;
                    float v;
                    memcpy(&v, (char *)&p + pl[i].offset, sizeof v);
                    v *= sq ? f * f : f;
                    if (v >= pl[i].min && v <= pl[i].max)
                        memcpy((char *)&p + pl[i].offset, &v, sizeof v);
                }
            } else if (round == 3) { /* two more predators, restarted on both */
                p.predator_count += 2;
            } else { /* a finer obstacle field, built again on both */
                p.field_cell *= 0.75f;
            }
            shoal_status sc1 = shoal_sim_set_params(cpu, &p, &e);
            if (sc1)
                fail_msg("%s: cpu set_params: %s", label, e.message);
            if (shoal_gpu_sim_set_params(gpu, &p, &e))
                fail_msg("%s: gpu set_params: %s", label, e.message);
        }
        assert_int_equal(shoal_sim_step(cpu, 100, &e), SHOAL_OK);
        assert_int_equal(shoal_gpu_sim_step(gpu, 100, &e), SHOAL_OK);
        snprintf(label, sizeof label, "%s after a new field_cell", scenes[k]);
        bad += same_now(label, cpu, gpu) != d.boid_count;
        /* a bad value: refused, nothing changed */
        shoal_params q = p;
        q.max_speed = -1;
        assert_int_equal(shoal_gpu_sim_set_params(gpu, &q, &e), SHOAL_ERR_INPUT);
        /* a field taken from a CPU sim has no meshes to build again from */
        assert_int_equal(shoal_gpu_sim_copy_obstacles(gpu, cpu, &e), SHOAL_OK);
        q = p;
        q.field_cell *= 2;
        assert_int_equal(shoal_gpu_sim_set_params(gpu, &q, &e),
                         shoal_sim_obstacle_count(cpu) ? SHOAL_ERR_INPUT : SHOAL_OK);
        shoal_sim_destroy(cpu);
        shoal_gpu_sim_destroy(gpu);
        free(rows);
    }
    assert_int_equal(bad, 0);
}

/* Every model with an obstacle mesh (the rock) and predators, chasing the nearest boid and
 * the school's centre: 2000 boids, 1000 steps. */
static void test_mesh_predators_every_model(void **state)
{
    (void)state;
    int bad = 0;
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
        for (int chase = 0; chase < 2; chase++) {
            char text[2048];
            snprintf(text, sizeof text,
                     "[scene]\nmodel = %s\ncount = 2000\nseed = 5\n"
                     "[params]\navoid_force = 4\nfield_cell = 1\nfield_margin = 1.5\n"
                     "[mesh rock]\nfile = %s/assets/rock.obj\nposition = 1,0,0\n"
                     "rotation = 0,20,10\nscale = 3\n"
                     "[predators]\ncount = 3\nspeed = 6\nturn = 2\nchase = %s\n"
                     "flee_radius = 4\nflee_weight = 6\nstart = 0,0,8\nspread = 4\n",
                     shoal_model_name((shoal_model)m), SHOAL_SOURCE_ROOT,
                     chase ? "centre" : "nearest");
            shoal_scene sc;
            shoal_error e;
            if (shoal_scene_parse(text, "mesh+predators", &sc, &e))
                fail_msg("%s", e.message);
            float *rows = initial(&sc.desc, 21);
            char label[64];
            snprintf(label, sizeof label, "%s mesh+pred %s", shoal_model_name((shoal_model)m),
                     chase ? "centre" : "nearest");
            bad += parity_scene(label, &sc.desc, &sc, rows, 1000) != sc.desc.boid_count;
            free(rows);
        }
    }
    assert_int_equal(bad, 0);
}

static void test_fault(void **state)
{
    (void)state;
    /* fov with boids 1e20 from the boundary centre: |p - c|^2 overflows float, and the rule's
     * far-boid branch (rules.h) takes over for those lanes only. Both backends must give the
     * same status: today both finish finite and bit-identical (the far boids head back);
     * should a fault ever come back, both must name the same lowest row and step, word for
     * word, and leave the state as before that step. */
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
    shoal_status sc = shoal_sim_step(cpu, 3, &ec);
    shoal_status sg = shoal_gpu_sim_step(gpu, 3, &eg);
    assert_int_equal(sc, sg);
    float *a = malloc(50 * 6 * sizeof(float)), *b = malloc(50 * 6 * sizeof(float));
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(shoal_gpu_sim_get_state(gpu, b, &eg), SHOAL_OK);
    if (sc == SHOAL_ERR_NONFINITE) {
        printf("cpu: %s\ngpu: %s\n", ec.message, eg.message);
        assert_string_equal(ec.message, eg.message);
        assert_memory_equal(b, rows, 50 * 6 * sizeof(float));
    } else {
        assert_int_equal(sc, SHOAL_OK);
        shoal_sim_get_state(cpu, a);
        for (int i = 0; i < 50 * 6; i++)
            assert_true(isfinite(a[i]));
        assert_memory_equal(a, b, 50 * 6 * sizeof(float));
        printf("fov far boids: finite and bit-identical on both backends after 3 steps\n");
    }
    free(a);
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

/* shoal verify on the CUDA backend as an outside program (issue 32): every model with an
 * obstacle mesh and predators, stepped one step at a time on the GPU in atomic order (another
 * summation order than the CPU's) and in the stable order; each pair is verified against
 * shoal's float32 step and the float64 reference. The stable order must be bit-identical
 * ("agrees", error 0); the atomic order must agree within the rounding bound (a threshold
 * tie allowed, never drift or a rule). */
static void test_verify_gpu_orders(void **state)
{
    (void)state;
    int bad = 0;
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
        char text[2048];
        snprintf(text, sizeof text,
                 "[scene]\nmodel = %s\ncount = 3000\nseed = 5\n"
                 "[params]\navoid_force = 4\nfield_cell = 1\nfield_margin = 1.5\n"
                 "[mesh rock]\nfile = %s/assets/rock.obj\nposition = 1,0,0\n"
                 "rotation = 0,20,10\nscale = 3\n"
                 "[predators]\ncount = 2\nspeed = 6\nturn = 2\nchase = nearest\n"
                 "flee_radius = 4\nflee_weight = 6\nstart = 0,0,8\nspread = 4\n",
                 shoal_model_name((shoal_model)m), SHOAL_SOURCE_ROOT);
        shoal_scene sc;
        shoal_error e;
        if (shoal_scene_parse(text, "verify", &sc, &e))
            fail_msg("%s", e.message);
        if (param_default((shoal_model)m, "init_pos_radius") < 8.0f) /* steer's, average's */
            sc.desc.params.init_pos_radius = 8.0f;
        size_t n = sc.desc.boid_count;
        float *rows = initial(&sc.desc, 9);
        shoal_sim *holder;
        assert_int_equal(shoal_sim_create(&sc.desc, &holder, &e), SHOAL_OK);
        assert_int_equal(shoal_scene_add_obstacles(&sc, holder, &e), SHOAL_OK);
        for (int order = 0; order < 2; order++) {
            shoal_gpu_sim *g;
            shoal_gpu_order go = order ? SHOAL_GPU_ORDER_ATOMIC : SHOAL_GPU_ORDER_STABLE;
            assert_int_equal(shoal_gpu_sim_create(&sc.desc, go, &g, &e), SHOAL_OK);
            assert_int_equal(shoal_gpu_sim_set_state(g, rows, &e), SHOAL_OK);
            assert_int_equal(shoal_gpu_sim_copy_obstacles(g, holder, &e), SHOAL_OK);
            shoal_verify *v[2];
            for (int r = 0; r < 2; r++) {
                shoal_verify_desc vd = shoal_verify_desc_default();
                vd.sim = sc.desc;
                vd.reference = r ? SHOAL_VERIFY_F64 : SHOAL_VERIFY_F32;
                assert_int_equal(shoal_verify_create(&vd, &v[r], &e), SHOAL_OK);
                assert_int_equal(shoal_verify_copy_obstacles(v[r], holder, &e), SHOAL_OK);
            }
            float *a = malloc(n * 6 * sizeof(float)), *b = malloc(n * 6 * sizeof(float));
            double *da = malloc(n * 6 * sizeof(double)), *db = malloc(n * 6 * sizeof(double));
            memcpy(a, rows, n * 6 * sizeof(float));
            double worst[2] = {0, 0};
            int verdicts[2][SHOAL_VERDICT_COUNT] = {{0}};
            for (int k = 0; k < 6; k++) {
                assert_int_equal(shoal_gpu_sim_step(g, 1, &e), SHOAL_OK);
                assert_int_equal(shoal_gpu_sim_get_state(g, b, &e), SHOAL_OK);
                for (size_t i = 0; i < n * 6; i++) {
                    da[i] = a[i];
                    db[i] = b[i];
                }
                for (int r = 0; r < 2; r++) {
                    shoal_verify_report rep;
                    assert_int_equal(shoal_verify_step(v[r], da, db, &rep, &e), SHOAL_OK);
                    verdicts[r][rep.verdict]++;
                    worst[r] = fmax(worst[r], rep.ratio_max);
                    if (rep.verdict == SHOAL_VERDICT_RULE || rep.verdict == SHOAL_VERDICT_DRIFT ||
                        (order == 0 && r == 0 && rep.pos_max + rep.vel_max != 0)) {
                        printf("  %s %s vs %s step %d: %s %s\n", shoal_model_name((shoal_model)m),
                               order ? "atomic" : "stable", r ? "f64" : "f32", k,
                               shoal_verdict_name(rep.verdict), rep.detail);
                        bad++;
                    }
                }
                memcpy(a, b, n * 6 * sizeof(float));
            }
            printf("verify %s, cuda %s order, 6 steps: f32 %d agree %d tie (worst %.3g of the "
                   "bound), f64 %d agree %d tie (worst %.3g)\n",
                   shoal_model_name((shoal_model)m), order ? "atomic" : "stable",
                   verdicts[0][SHOAL_VERDICT_AGREES], verdicts[0][SHOAL_VERDICT_TIE], worst[0],
                   verdicts[1][SHOAL_VERDICT_AGREES], verdicts[1][SHOAL_VERDICT_TIE], worst[1]);
            for (int r = 0; r < 2; r++)
                shoal_verify_destroy(v[r]);
            shoal_gpu_sim_destroy(g);
            free(a);
            free(b);
            free(da);
            free(db);
        }
        shoal_sim_destroy(holder);
        free(rows);
    }
    assert_int_equal(bad, 0);
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
    assert_int_equal(cli_setup("gpu-run"), 0);
    const char *dir = g_dir;
    /* every model of the table, in the window of each backend */
    for (int m = 0; m < SHOAL_MODEL_COUNT; m++) {
        const char *name = shoal_model_name((shoal_model)m);
        const char *backends[] = {"cpu", "cuda"};
        for (int b = 0; b < 2; b++) {
            char cmd[1024];
            snprintf(cmd, sizeof cmd,
                     "%s run --headless --model %s --count 3000 --frames 30 --size 320x180 "
                     "--threads 2 --hud off --backend %s --out %s/%s_%s > %s/%s_%s.txt 2>&1",
                     exe, name, backends[b], dir, name, backends[b], dir, name, backends[b]);
            if (system(cmd) != 0)
                fail_msg("failed: %s", cmd);
        }
        int same = 0;
        for (int f = 0; f < 30; f++) {
            char a[512], c[512];
            snprintf(a, sizeof a, "%s/%s_cpu/frame_%05d.png", dir, name, f);
            snprintf(c, sizeof c, "%s/%s_cuda/frame_%05d.png", dir, name, f);
            same += files_equal(a, c);
        }
        printf("run --backend cuda, %s: %d/30 frames identical to the CPU run's\n", name, same);
        assert_int_equal(same, 30);
    }
    /* predators and an obstacle mesh: the GPU window draws what the CPU window draws (the
     * predators as red fish with their flee rings, the mesh's wireframe) */
    const char *scenes[] = {"steer_predator", "steer_rock_mesh"};
    for (int k = 0; k < 2; k++) {
        const char *backends[] = {"cpu", "cuda"};
        for (int b = 0; b < 2; b++) {
            char cmd[1024];
            snprintf(cmd, sizeof cmd,
                     "%s run --headless --scene %s/assets/scenes/%s.ini --count 3000 --frames 30 "
                     "--size 320x180 --threads 2 --hud off --backend %s --out %s/%s_%s > "
                     "%s/%s_%s.txt 2>&1",
                     exe, SHOAL_SOURCE_ROOT, scenes[k], backends[b], dir, scenes[k], backends[b],
                     dir, scenes[k], backends[b]);
            if (system(cmd) != 0)
                fail_msg("failed: %s", cmd);
        }
        int same = 0;
        for (int f = 0; f < 30; f++) {
            char a[512], c[512];
            snprintf(a, sizeof a, "%s/%s_cpu/frame_%05d.png", dir, scenes[k], f);
            snprintf(c, sizeof c, "%s/%s_cuda/frame_%05d.png", dir, scenes[k], f);
            same += files_equal(a, c);
        }
        printf("run --backend cuda, %s: %d/30 frames identical to the CPU run's\n", scenes[k],
               same);
        assert_int_equal(same, 30);
    }
    assert_int_equal(cli_teardown(), 0);
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
        cmocka_unit_test(test_models_small),
        cmocka_unit_test(test_models_spread),
        cmocka_unit_test(test_uniform_box),
        cmocka_unit_test(test_brute_and_spheres),
        cmocka_unit_test(test_scenes),
        cmocka_unit_test(test_mesh_predators_every_model),
        cmocka_unit_test(test_fault),
        cmocka_unit_test(test_atomic_order_runs),
        cmocka_unit_test(test_run_backend),
        cmocka_unit_test(test_verify_gpu_orders),
        cmocka_unit_test(test_set_params_and_obstacles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
