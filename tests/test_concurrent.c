/* SPDX-License-Identifier: MIT */
/* Library objects are independent: two simulations (and two renderers) driven from two
 * threads of one process at the same time give the same bits as each alone, and so do two
 * GPU simulations stepped in turn or from two threads (where CUDA exists). Each object
 * carries its own thread count (shoal_sim_desc.thread_count, shoal_render_desc.thread_count),
 * its own stage profile and trace (shoal_sim_get_profile) and, on the GPU, its own step
 * constants; none of them may write a process-wide setting or table another object reads.
 * tools/test.sh runs this file under ThreadSanitizer too, which reports any such write. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "shoal/gpu.h"
#include "shoal/shoal.h"
#include "tests/scenes.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct job {
    shoal_model model;
    int sim_threads, render_threads;
    int rounds;
    const float *rows;
    size_t count;
    uint64_t sim_hash, image_hash; /* out */
    char error[600];               /* out: empty on success */
} job;

/* Steps a simulation and draws it, `rounds` times; hashes the final state and image. */
static void *job_run(void *p)
{
    job *j = p;
    shoal_error e;
    shoal_sim_desc d = shoal_sim_desc_default();
    d.model = j->model;
    shoal_params_default(j->model, &d.params);
    d.boid_count = j->count;
    d.thread_count = j->sim_threads;
    d.seed = 7;
    shoal_sim *s = NULL;
    shoal_renderer *r = NULL;
    shoal_mesh fish, fish_lod;
    memset(&fish, 0, sizeof fish);
    memset(&fish_lod, 0, sizeof fish_lod);
    float *out = malloc(j->count * 6 * sizeof *out);
    if (!out) {
        snprintf(j->error, sizeof j->error, "out of memory");
        return NULL;
    }
    if (shoal_sim_create(&d, &s, &e) || shoal_sim_set_rows(s, j->rows, j->count, &e))
        goto fail;
    shoal_render_desc rd = shoal_render_desc_default();
    rd.width = 160, rd.height = 96, rd.thread_count = j->render_threads;
    /* each thread loads the meshes itself (io's loader is thread-safe) */
    if (shoal_mesh_load_asset("fish.obj", &fish, &e) ||
        shoal_mesh_load_asset("fish_lod1.obj", &fish_lod, &e))
        goto fail;
    rd.mesh = &fish;
    rd.lod_mesh = &fish_lod;
    if (shoal_render_create(&rd, &r, &e))
        goto fail;
    shoal_camera cam = shoal_camera_default();
    cam.eye[2] = 20.0f;
    for (int k = 0; k < j->rounds; k++) {
        if (shoal_sim_step(s, 5, &e) || shoal_sim_get_rows(s, out, j->count, &e))
            goto fail;
        shoal_render_instances inst = {.count = j->count,
                                       .px = out,
                                       .py = out + 1,
                                       .pz = out + 2,
                                       .vx = out + 3,
                                       .vy = out + 4,
                                       .vz = out + 5};
        /* rows are interleaved: give the renderer planar copies */
        float *planar = malloc(j->count * 6 * sizeof *planar);
        if (!planar) {
            snprintf(j->error, sizeof j->error, "out of memory");
            goto done;
        }
        for (size_t i = 0; i < j->count; i++)
            for (int c = 0; c < 6; c++)
                planar[(size_t)c * j->count + i] = out[i * 6 + (size_t)c];
        inst.px = planar, inst.py = planar + j->count, inst.pz = planar + 2 * j->count;
        inst.vx = planar + 3 * j->count, inst.vy = planar + 4 * j->count;
        inst.vz = planar + 5 * j->count;
        shoal_status st = shoal_render_frame(r, &inst, &cam, &e);
        free(planar);
        if (st)
            goto fail;
    }
    j->sim_hash = state_hash(out, j->count);
    j->image_hash = shoal_render_hash(shoal_render_framebuffer(r));
    goto done;
fail:
    snprintf(j->error, sizeof j->error, "%s", e.message);
done:
    shoal_render_destroy(r);
    shoal_mesh_free(&fish);
    shoal_mesh_free(&fish_lod);
    shoal_sim_destroy(s);
    free(out);
    return NULL;
}

static void test_two_objects_in_two_threads(void **state)
{
    (void)state;
    const size_t n = 3000;
    float *rows = scene_uniform(n, 6.0f, 1.0f, 11);
    assert_non_null(rows);
    /* Different thread counts, so an object that ran with the other's count (a shared
     * setting overwritten mid-step) sizes its per-thread arrays for one team and runs
     * another: ASan and the hashes catch it. */
    job a = {.model = SHOAL_MODEL_STEER,
             .sim_threads = 1,
             .render_threads = 3,
             .rounds = 12,
             .rows = rows,
             .count = n};
    job b = {.model = SHOAL_MODEL_AVERAGE,
             .sim_threads = 4,
             .render_threads = 1,
             .rounds = 12,
             .rows = rows,
             .count = n};
    job_run(&a);
    job_run(&b);
    assert_string_equal(a.error, "");
    assert_string_equal(b.error, "");
    for (int trial = 0; trial < 4; trial++) {
        job a2 = a, b2 = b;
        a2.sim_hash = a2.image_hash = b2.sim_hash = b2.image_hash = 0;
        pthread_t ta, tb;
        assert_int_equal(pthread_create(&ta, NULL, job_run, &a2), 0);
        assert_int_equal(pthread_create(&tb, NULL, job_run, &b2), 0);
        pthread_join(ta, NULL);
        pthread_join(tb, NULL);
        assert_string_equal(a2.error, "");
        assert_string_equal(b2.error, "");
        if (a2.sim_hash != a.sim_hash || b2.sim_hash != b.sim_hash)
            fail_msg("trial %d: concurrent state hashes %016llx %016llx != alone %016llx %016llx",
                     trial, (unsigned long long)a2.sim_hash, (unsigned long long)b2.sim_hash,
                     (unsigned long long)a.sim_hash, (unsigned long long)b.sim_hash);
        if (a2.image_hash != a.image_hash || b2.image_hash != b.image_hash)
            fail_msg("trial %d: concurrent image hashes differ from alone", trial);
    }
    free(rows);
}

/* Two GPU simulations of different models with different constants (heading's targets
 * change every period, fov's angles and sphere are its own), stepped one step each in turn
 * and then from two threads: each must keep the bits of the CPU run of its own desc (the
 * stable order equals the CPU bit for bit, test_gpu). A constant block shared by the
 * process, uploaded by whichever object stepped last, fails this. */
typedef struct gpu_job {
    shoal_sim_desc d;
    const float *rows;
    shoal_gpu_sim *g;
    int steps;
    char error[600];
} gpu_job;

static void *gpu_job_run(void *p)
{
    gpu_job *j = p;
    shoal_error e;
    for (int k = 0; k < j->steps; k++)
        if (shoal_gpu_sim_step(j->g, 1, &e)) {
            snprintf(j->error, sizeof j->error, "%s", e.message);
            break;
        }
    return NULL;
}

static uint64_t cpu_hash(const shoal_sim_desc *d, const float *rows, int steps)
{
    shoal_sim *s;
    shoal_error e;
    if (shoal_sim_create(d, &s, &e) || shoal_sim_set_rows(s, rows, d->boid_count, &e) ||
        shoal_sim_step(s, steps, &e))
        fail_msg("cpu: %s", e.message);
    float *out = malloc(d->boid_count * 6 * sizeof *out);
    assert_non_null(out);
    if (shoal_sim_get_rows(s, out, d->boid_count, &e))
        fail_msg("cpu: %s", e.message);
    uint64_t h = state_hash(out, d->boid_count);
    free(out);
    shoal_sim_destroy(s);
    return h;
}

static uint64_t gpu_hash(shoal_gpu_sim *g, size_t n)
{
    shoal_error e;
    float *out = malloc(n * 6 * sizeof *out);
    assert_non_null(out);
    if (shoal_gpu_sim_get_rows(g, out, n, &e))
        fail_msg("gpu: %s", e.message);
    uint64_t h = state_hash(out, n);
    free(out);
    return h;
}

static void test_two_gpu_sims(void **state)
{
    (void)state;
    shoal_error e;
    if (shoal_gpu_available(&e)) {
        printf("SKIP: no CUDA device: %s\n", e.message);
        skip();
    }
    const size_t n = 2000;
    float *rows = scene_uniform(n, 10.0f, 1.0f, 5);
    assert_non_null(rows);
    gpu_job jobs[2];
    memset(jobs, 0, sizeof jobs);
    const shoal_model models[2] = {SHOAL_MODEL_HEADING, SHOAL_MODEL_FOV};
    for (int i = 0; i < 2; i++) {
        shoal_sim_desc *d = &jobs[i].d;
        *d = shoal_sim_desc_default();
        d->model = models[i];
        shoal_params_default(d->model, &d->params);
        d->boid_count = n;
        d->seed = 3 + (uint64_t)i;
        d->thread_count = 1;
        if (models[i] == SHOAL_MODEL_HEADING)
            d->params.target_period = 0.05f; /* new targets every 3 steps */
        jobs[i].rows = rows;
    }
    const int steps = 24;
    uint64_t want[2];
    for (int i = 0; i < 2; i++)
        want[i] = cpu_hash(&jobs[i].d, rows, steps);
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 2; i++) {
            if (shoal_gpu_sim_create(&jobs[i].d, SHOAL_GPU_ORDER_STABLE, &jobs[i].g, &e) ||
                shoal_gpu_sim_set_rows(jobs[i].g, rows, n, &e))
                fail_msg("gpu: %s", e.message);
            jobs[i].steps = steps;
        }
        if (round == 0) {
            /* in turn, one step each: every step follows one of the other object's */
            for (int k = 0; k < steps; k++)
                for (int i = 0; i < 2; i++)
                    if (shoal_gpu_sim_step(jobs[i].g, 1, &e))
                        fail_msg("gpu: %s", e.message);
        } else {
            pthread_t t[2];
            for (int i = 0; i < 2; i++)
                assert_int_equal(pthread_create(&t[i], NULL, gpu_job_run, &jobs[i]), 0);
            for (int i = 0; i < 2; i++)
                pthread_join(t[i], NULL);
        }
        for (int i = 0; i < 2; i++) {
            assert_string_equal(jobs[i].error, "");
            uint64_t got = gpu_hash(jobs[i].g, n);
            if (got != want[i])
                fail_msg("%s, %s: GPU state %016llx != CPU %016llx",
                         round ? "two threads" : "in turn", shoal_model_name(models[i]),
                         (unsigned long long)got, (unsigned long long)want[i]);
            shoal_gpu_sim_destroy(jobs[i].g);
        }
    }
    free(rows);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_objects_in_two_threads),
        cmocka_unit_test(test_two_gpu_sims),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
