/* SPDX-License-Identifier: MIT */
/* The parallel two-level exclusive scan against the serial one (sizes 0, 1, around the
 * per-thread split, large), for several thread counts; and the stable counting sort it
 * drives: cell order, row order inside cells, a permutation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/parallel.h"
#include "core/rng.h"
#include "sim/sim_internal.h"
#include "tests/scenes.h"

#include <stdlib.h>
#include <string.h>

typedef struct scan_job {
    uint32_t *data;
    int64_t count;
    int64_t partial[SIM_MAX_THREADS + 1];
    int64_t total[SIM_MAX_THREADS];
} scan_job;

static void scan_body(void *p, int t, int n)
{
    scan_job *j = p;
    j->total[t] = scan_exclusive_u32(j->data, j->count, j->partial, t, n);
}

static void check_scan(int64_t count, int threads, uint64_t seed)
{
    uint32_t *a = malloc((size_t)(count + 1) * sizeof *a);
    uint32_t *b = malloc((size_t)(count + 1) * sizeof *b);
    assert_non_null(a);
    assert_non_null(b);
    rng r = rng_stream(seed, (uint64_t)count);
    for (int64_t i = 0; i < count; i++)
        a[i] = b[i] = (uint32_t)(rng_next(&r) % 17);
    int64_t want = scan_exclusive_serial_u32(b, count);
    scan_job job = {.data = a, .count = count};
    parallel_set_threads(threads);
    parallel_region(scan_body, &job);
    int n = parallel_thread_count();
    for (int t = 0; t < n && t < threads; t++)
        assert_int_equal(job.total[t], want);
    assert_memory_equal(a, b, (size_t)count * sizeof *a);
    free(a);
    free(b);
    parallel_set_threads(0);
}

static void test_scan_sizes(void **state)
{
    (void)state;
    const int64_t sizes[] = {0, 1, 2, 3, 4095, 4096, 4097, 65535, 65537, 1000003};
    const int threads[] = {1, 2, 3, 7, 16};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++)
            check_scan(sizes[i], threads[t], 7);
}

static void test_scan_serial_known(void **state)
{
    (void)state;
    uint32_t v[] = {3, 0, 2, 5, 1};
    int64_t total = scan_exclusive_serial_u32(v, 5);
    uint32_t want[] = {0, 3, 3, 5, 10};
    assert_int_equal(total, 11);
    assert_memory_equal(v, want, sizeof want);
}

/* The counting sort: after a sort-only pass the arrays are in cell order, rows ascending
 * inside each cell, cell_start brackets every cell, and rows form a permutation. */
static void check_sorted(shoal_sim *s)
{
    size_t n = s->count;
    char *seen = calloc(n, 1);
    assert_non_null(seen);
    for (size_t i = 0; i < n; i++) {
        assert_true(s->row_cur[i] < n);
        assert_false(seen[s->row_cur[i]]);
        seen[s->row_cur[i]] = 1;
        uint32_t c = grid_cell_of_slot(s, (uint32_t)i);
        if (i > 0) {
            uint32_t cp = grid_cell_of_slot(s, (uint32_t)i - 1);
            assert_true(cp <= c);
            if (cp == c)
                assert_true(s->row_cur[i - 1] < s->row_cur[i]);
        }
        assert_true(s->cell_start[c] <= i && i < s->cell_start[c + 1]);
        /* the cell is the one the position maps to */
        const grid *g = &s->g;
        int32_t cx = grid_coord(s->cur[0][i], g->origin[0], g->inv_cell, g->dims[0]);
        int32_t cy = grid_coord(s->cur[1][i], g->origin[1], g->inv_cell, g->dims[1]);
        int32_t cz = grid_coord(s->cur[2][i], g->origin[2], g->inv_cell, g->dims[2]);
        assert_int_equal(c, (uint32_t)(cx + g->dims[0] * (cy + g->dims[1] * cz)));
    }
    assert_int_equal(s->cell_start[s->g.cell_count], n);
    free(seen);
}

static void test_counting_sort(void **state)
{
    (void)state;
    const size_t counts[] = {1, 2, 4095, 4097, 70000};
    const int threads[] = {1, 2, 3, 7};
    for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
        size_t n = counts[ci];
        float *rows = scene_uniform(n, 20.0f, 1.0f, 11 + ci);
        assert_non_null(rows);
        scene_add_outliers(rows, n, 3);
        uint32_t *ref_rows = NULL;
        for (size_t ti = 0; ti < sizeof threads / sizeof threads[0]; ti++) {
            shoal_sim_desc d = shoal_sim_desc_default();
            d.boid_count = n;
            d.thread_count = threads[ti];
            shoal_sim *s;
            assert_int_equal(shoal_sim_create(&d, &s, NULL), SHOAL_OK);
            assert_int_equal(shoal_sim_set_rows(s, rows, shoal_sim_count(s), NULL), SHOAL_OK);
            sim_sort_only(s);
            check_sorted(s);
            /* sorting an already sorted state (new order in, rows not ascending in
             * memory) must give the same order */
            sim_sort_only(s);
            check_sorted(s);
            if (!ref_rows) {
                ref_rows = malloc(n * sizeof *ref_rows);
                memcpy(ref_rows, s->row_cur, n * sizeof *ref_rows);
            } else {
                assert_memory_equal(ref_rows, s->row_cur, n * sizeof *ref_rows);
            }
            shoal_sim_destroy(s);
        }
        free(ref_rows);
        free(rows);
    }
}

/* The cells the force kernels write for the next step's sort (cells_valid) are the cells
 * grid_assign computes from the positions, lane for lane, for every ISA: boids far outside
 * the grid, on cell faces, duplicates; then a second and third step from those keys. */
static void test_kernel_cells(void **state)
{
    (void)state;
    const shoal_isa *isas = test_isas;
    const size_t n = 5003;
    float *rows = scene_uniform(n, 12.0f, 1.0f, 5);
    assert_non_null(rows);
    scene_add_outliers(rows, n, 4);
    for (size_t ii = 0; ii < TEST_ISA_COUNT; ii++) {
        if (!shoal_isa_supported(isas[ii]))
            continue;
        shoal_sim_desc d = shoal_sim_desc_default();
        d.boid_count = n;
        d.thread_count = 2;
        d.isa = isas[ii];
        shoal_sim *s;
        assert_int_equal(shoal_sim_create(&d, &s, NULL), SHOAL_OK);
        /* boids exactly on cell faces of the grid this sim uses */
        const grid *g = &s->g;
        for (size_t i = 10; i < 60; i++)
            for (int c = 0; c < 3; c++)
                rows[i * 6 + (size_t)c] = g->origin[c] + g->cell_size * (float)(3 + (i % 7));
        assert_int_equal(shoal_sim_set_rows(s, rows, shoal_sim_count(s), NULL), SHOAL_OK);
        assert_false(s->cells_valid);
        for (int step = 0; step < 3; step++) {
            assert_int_equal(shoal_sim_step(s, 1, NULL), SHOAL_OK);
            assert_true(s->cells_valid);
            for (size_t i = 0; i < n; i++) {
                int32_t cx = grid_coord(s->cur[0][i], g->origin[0], g->inv_cell, g->gdims[0]);
                int32_t cy = grid_coord(s->cur[1][i], g->origin[1], g->inv_cell, g->gdims[1]);
                int32_t cz = grid_coord(s->cur[2][i], g->origin[2], g->inv_cell, g->gdims[2]);
                assert_int_equal(s->cell_of[i],
                                 (uint32_t)(cx + g->dims[0] * (cy + g->dims[1] * cz)));
            }
        }
        shoal_sim_destroy(s);
    }
    free(rows);
}

/* What the API sees after a sort without a step, and after a step that failed, is one
 * state in one order: the rows it was given. */
static void test_sort_keeps_state(void **state)
{
    (void)state;
    const size_t n = 4500;
    float *rows = scene_uniform(n, 15.0f, 2.0f, 8);
    float *out = malloc(n * 6 * sizeof(float));
    assert_non_null(rows);
    assert_non_null(out);
    shoal_sim_desc d = shoal_sim_desc_default();
    d.boid_count = n;
    d.thread_count = 2;
    shoal_sim *s;
    assert_int_equal(shoal_sim_create(&d, &s, NULL), SHOAL_OK);
    assert_int_equal(shoal_sim_set_rows(s, rows, shoal_sim_count(s), NULL), SHOAL_OK);
    shoal_sim_sort(s);
    assert_int_equal(shoal_sim_get_rows(s, out, shoal_sim_count(s), NULL), SHOAL_OK);
    assert_memory_equal(out, rows, n * 6 * sizeof(float));
    /* the view is the same state: row_of maps every entry back to its row */
    shoal_boid_view v = shoal_sim_view(s);
    for (size_t i = 0; i < n; i++) {
        const float *r = rows + 6 * (size_t)v.row_of[i];
        assert_true(v.px[i] == r[0] && v.py[i] == r[1] && v.pz[i] == r[2]);
        assert_true(v.vx[i] == r[3] && v.vy[i] == r[4] && v.vz[i] == r[5]);
    }
    assert_int_equal(shoal_sim_step(s, 2, NULL), SHOAL_OK);
    assert_int_equal(shoal_sim_get_rows(s, rows, shoal_sim_count(s), NULL), SHOAL_OK);
    shoal_sim_sort(s);
    assert_int_equal(shoal_sim_get_rows(s, out, shoal_sim_count(s), NULL), SHOAL_OK);
    assert_memory_equal(out, rows, n * 6 * sizeof(float));
    shoal_sim_destroy(s);

    /* classic: two boids 1e-20 apart repel with an infinite force, so the step fails; the
     * state stays as it was before the step */
    d = shoal_sim_desc_default();
    d.model = SHOAL_MODEL_CLASSIC;
    shoal_params_default(d.model, &d.params);
    d.boid_count = 600;
    d.thread_count = 2;
    float *crows = scene_uniform(600, 8.0f, 1.0f, 9);
    assert_non_null(crows);
    for (size_t i = 0; i < 600; i++)
        crows[i * 6 + 1] += 10.0f; /* inside the classic box */
    memcpy(crows + 77 * 6, crows + 300 * 6, 6 * sizeof(float));
    crows[300 * 6 + 0] = 1e-20f;
    crows[77 * 6 + 0] = 2e-20f; /* d^2 = 1e-40 underflows: the repulsion is infinite */
    assert_int_equal(shoal_sim_create(&d, &s, NULL), SHOAL_OK);
    assert_int_equal(shoal_sim_set_rows(s, crows, shoal_sim_count(s), NULL), SHOAL_OK);
    shoal_error e;
    shoal_status st = shoal_sim_step(s, 1, &e);
    assert_int_equal(st, SHOAL_ERR_NONFINITE);
    float *cout = malloc(600 * 6 * sizeof(float));
    assert_non_null(cout);
    assert_int_equal(shoal_sim_get_rows(s, cout, shoal_sim_count(s), NULL), SHOAL_OK);
    assert_memory_equal(cout, crows, 600 * 6 * sizeof(float));
    shoal_sim_destroy(s);
    free(cout);
    free(crows);
    free(out);
    free(rows);
}

/* The sort as a step sees it (the state in the last step's cell order, a few boids moved):
 * with fewer and with more blocks than the histograms hold cell tables (packed by the
 * blocks' ranges), and the scatter staged in cache lines (non-temporal) or slot by slot,
 * the same bytes and a correct sort after every step; a fresh state in row order with
 * every block spanning the grid takes the blocks in groups. */
static void test_steady_sort_paths(void **state)
{
    (void)state;
    const size_t n = 70000; /* 17 blocks: more than the 16 tables of the histograms */
    float *rows = scene_uniform(n, 40.0f, 4.0f, 21);
    assert_non_null(rows);
    scene_add_outliers(rows, n, 5);
    for (int threads = 2; threads <= 7; threads += 5) { /* 8 blocks; 17 (> 16 tables) */
        shoal_sim *s[2];
        for (int v = 0; v < 2; v++) {
            shoal_sim_desc d = shoal_sim_desc_default();
            d.boid_count = n;
            d.thread_count = threads;
            for (int c = 0; c < 3; c++)
                d.params.wall_size[c] = 80.0f;
            assert_int_equal(shoal_sim_create(&d, &s[v], NULL), SHOAL_OK);
            s[v]->sort_staged = 2 * v; /* never, always */
            assert_int_equal(shoal_sim_set_rows(s[v], rows, n, NULL), SHOAL_OK);
            /* row order in: each block spans most of the grid; with a boid at each end of
             * the grid in every block, every block spans all of it: groups */
            float *r2 = malloc(n * 6 * sizeof *r2);
            assert_non_null(r2);
            memcpy(r2, rows, n * 6 * sizeof *r2);
            for (size_t i = 0; i < n; i += 4096)
                for (int c = 0; c < 3; c++) {
                    r2[i * 6 + (size_t)c] = -1e4f;
                    r2[(i + 1) * 6 + (size_t)c] = 1e4f;
                }
            assert_int_equal(shoal_sim_set_rows(s[v], r2, n, NULL), SHOAL_OK);
            sim_sort_only(s[v]);
            assert_int_equal(s[v]->block_count, threads == 7 ? 17 : 8);
            assert_true(s[v]->units.count <= s[v]->hist_width);
            check_sorted(s[v]);
            assert_int_equal(shoal_sim_set_rows(s[v], rows, n, NULL), SHOAL_OK);
            sim_sort_only(s[v]);
            check_sorted(s[v]);
            free(r2);
        }
        for (int step = 0; step < 4; step++) {
            for (int v = 0; v < 2; v++) {
                assert_int_equal(shoal_sim_step(s[v], 1, NULL), SHOAL_OK);
                /* the state as the next step's sort gets it: sort it now, untimed */
                sim_sort_only(s[v]);
                assert_int_equal(s[v]->units.count, s[v]->block_count); /* nearly sorted */
                check_sorted(s[v]);
            }
            for (int k = 0; k < 6; k++)
                assert_memory_equal(s[0]->cur[k], s[1]->cur[k], n * sizeof(float));
            assert_memory_equal(s[0]->row_cur, s[1]->row_cur, n * sizeof(uint32_t));
        }
        shoal_sim_destroy(s[0]);
        shoal_sim_destroy(s[1]);
    }
    free(rows);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scan_serial_known), cmocka_unit_test(test_scan_sizes),
        cmocka_unit_test(test_counting_sort),     cmocka_unit_test(test_kernel_cells),
        cmocka_unit_test(test_sort_keeps_state),  cmocka_unit_test(test_steady_sort_paths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
