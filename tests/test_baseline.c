/* SPDX-License-Identifier: MIT */
/* The baseline grid (src/support/baseline_grid.c), the yardstick of `shoal bench`'s ratio
 * (issue 18), against brute force: for every point the number of other points within the
 * radius must be exact and the sum of their positions within rounding, for the AVX2 and the
 * scalar pass, on 1 and 3 threads, with points outside the box (they count in the edge
 * cells), coincident points, and a point exactly on the radius; and after the untimed moves
 * between timed passes (the sort then starts from the last pass's order). A baseline that skipped
 * cells or dropped a tail lane would make every ratio `shoal bench` prints meaningless. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/rng.h"
#include "support/baseline_grid.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(const float *p0, size_t n, float side, float radius, int threads, int avx2,
                  int moves)
{
    uint32_t *count = malloc(n * sizeof *count);
    float *sum = malloc(3 * n * sizeof *sum), *p = malloc(3 * n * sizeof *p);
    assert_non_null(count);
    assert_non_null(sum);
    assert_non_null(p);
    float lo[3] = {-side / 2, -side / 2, -side / 2}, size[3] = {side, side, side};
    assert_int_equal(
        baseline_grid_neighbours(p0, 3, n, lo, size, radius, threads, avx2, moves, count, sum, p),
        0);
    /* the pass's own d^2: with FMA on the AVX2 path, so that a pair on the radius's rounding
     * edge is judged alike */
    int fma = avx2 && baseline_grid_avx2_available();
    float r2 = radius * radius;
    for (size_t i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++) {
            if (moves == 0)
                assert_true(p[3 * i + k] == p0[3 * i + k]);
            else if (fabsf(p0[3 * i + k]) < side / 2) /* it moved and stayed in the box */
                assert_true(p[3 * i + k] != p0[3 * i + k] && fabsf(p[3 * i + k]) <= side / 2);
        }
        uint32_t c = 0;
        double s[3] = {0, 0, 0};
        for (size_t j = 0; j < n; j++) {
            float dx = p[3 * j] - p[3 * i], dy = p[3 * j + 1] - p[3 * i + 1],
                  dz = p[3 * j + 2] - p[3 * i + 2];
            float d2 = fma ? fmaf(dz, dz, fmaf(dy, dy, dx * dx)) : dx * dx + dy * dy + dz * dz;
            if (j != i && d2 <= r2) {
                c++;
                for (int k = 0; k < 3; k++)
                    s[k] += p[3 * j + k];
            }
        }
        if (count[i] != c)
            fail_msg("point %zu: %u neighbours, brute force %u (threads %d, avx2 %d, moves %d)", i,
                     count[i], c, threads, avx2, moves);
        for (int k = 0; k < 3; k++)
            if (fabs(sum[3 * i + k] - s[k]) > 1e-3 * (1.0 + c * side))
                fail_msg("point %zu: sum[%d] %g, brute force %g", i, k, sum[3 * i + k], s[k]);
    }
    free(count);
    free(sum);
    free(p);
}

static void test_baseline_equals_brute(void **state)
{
    (void)state;
    const size_t n = 3000;
    const float side = 12.0f;
    float *p = malloc(n * 3 * sizeof *p);
    assert_non_null(p);
    for (size_t i = 0; i < n; i++) {
        rng r = rng_stream(11, i);
        for (int k = 0; k < 3; k++)
            p[3 * i + k] = rng_range(&r, -side / 2, side / 2);
    }
    /* outside the box on every side, coincident points, a pair exactly 1.25 apart */
    for (int k = 0; k < 3; k++) {
        p[3 * 10 + k] = 40.0f;
        p[3 * 11 + k] = -40.0f;
        p[3 * 12 + k] = p[3 * 13 + k] = 0.5f;
    }
    p[3 * 14] = 1.0f, p[3 * 14 + 1] = 1.0f, p[3 * 14 + 2] = 1.0f;
    p[3 * 15] = 2.25f, p[3 * 15 + 1] = 1.0f, p[3 * 15 + 2] = 1.0f;
    for (int threads = 1; threads <= 3; threads += 2) {
        check(p, n, side, 1.25f, threads, 1, 0);
        check(p, n, side, 1.25f, threads, 0, 0);
    }
    check(p, n, side, 5.0f, 2, 1, 0); /* fewer cells than 3 per axis */
    /* the timed passes' path: points kept in the last pass's cell order, moved between
     * passes (reflected at the walls: 40 moves take the points near a wall through it) */
    check(p, n, side, 1.25f, 3, 1, 40);
    check(p, n, side, 1.25f, 2, 0, 3);
    free(p);
}

static void test_baseline_radius(void **state)
{
    (void)state;
    float r = baseline_grid_radius(0.5, 30.0);
    assert_true(fabs(0.5 * 4.0 / 3.0 * 3.14159265358979323846 * r * r * r - 30.0) < 1e-3);
    baseline_result res;
    float p[6] = {0, 0, 0, 0.5f, 0, 0}, lo[3] = {-1, -1, -1}, size[3] = {2, 2, 2};
    assert_int_equal(baseline_grid_time(p, 3, 2, lo, size, 1.0f, 1, 3, &res), 0);
    assert_true(res.mean_neighbours == 1.0);
    assert_int_equal(baseline_grid_time(p, 3, 2, lo, size, 0.0f, 1, 3, &res), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_baseline_equals_brute),
        cmocka_unit_test(test_baseline_radius),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
