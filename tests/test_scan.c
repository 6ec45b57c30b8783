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
        if (i > 0) {
            assert_true(s->cell_sorted[i - 1] <= s->cell_sorted[i]);
            if (s->cell_sorted[i - 1] == s->cell_sorted[i])
                assert_true(s->row_cur[i - 1] < s->row_cur[i]);
        }
        uint32_t c = s->cell_sorted[i];
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
            assert_int_equal(shoal_sim_set_state(s, rows, NULL), SHOAL_OK);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scan_serial_known),
        cmocka_unit_test(test_scan_sizes),
        cmocka_unit_test(test_counting_sort),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
