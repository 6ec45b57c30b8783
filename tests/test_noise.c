/* SPDX-License-Identifier: MIT */
/* The counter-based noise (core/noise.h, docs/NOISE.md): Philox4x32-10's published answers,
 * golden bits of every distribution, the same bits for every ISA's build, thread count and
 * the GPU (where one is present), the keying (seed, step, row, draw: a boid's draws do not
 * move when rows are reordered), and the statistics of 10^7 draws: chi-square for
 * uniformity, serial correlation and pairs for independence, the moments and the CDF of the
 * normals, the caps' heights and azimuths, the wrapped normal's angles. The seeds are fixed,
 * so the figures are the same on every run; the thresholds are 5 to 6 standard deviations. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/cpu.h"
#include "core/parallel.h"
#include "tests/noise_isa.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !SHOAL_TEST_NOISE_GPU
int noise_gpu_fill(noise_key k, const uint32_t *rows, size_t n, float *out, char *err,
                   size_t err_size)
{
    (void)k, (void)rows, (void)n, (void)out, (void)err, (void)err_size;
    return 1;
}
#endif

#define UNIFORM_DRAWS 10000000 /* 10^7 */

static uint64_t fnv_bytes(const void *p, size_t size)
{
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < size; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* chi-square of `bins` counts against equal expectation total / bins */
static double chi_square(const uint64_t *count, int bins, double total)
{
    double expect = total / bins, x = 0;
    for (int i = 0; i < bins; i++)
        x += ((double)count[i] - expect) * ((double)count[i] - expect) / expect;
    return x;
}

/* fail when a chi-square with `df` degrees of freedom is beyond 6 standard deviations */
static void check_chi(const char *what, double x, int df)
{
    double sd = sqrt(2.0 * df);
    printf("  %-34s chi2 %10.1f  (df %d, z %+.2f)\n", what, x, df, (x - df) / sd);
    if (fabs(x - df) > 6 * sd)
        fail_msg("%s: chi-square %.1f with %d degrees of freedom", what, x, df);
}

/* ---- Philox itself and the golden bits ---------------------------------------------------- */

/* Random123's known-answer vectors for philox4x32_10 (kat_vectors): zeros, ones and pi. */
static void test_philox_kat(void **state)
{
    (void)state;
    noise_bits b = noise_draw(noise_key_make(0, 0), 0, 0);
    uint32_t zero[4] = {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8};
    assert_memory_equal(b.w, zero, sizeof zero);
    b = noise_draw(noise_key_make(~0ull, ~0ull), ~0u, ~0u);
    uint32_t ones[4] = {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd};
    assert_memory_equal(b.w, ones, sizeof ones);
    /* counter (row, draw, step lo, step hi), key (seed lo, seed hi) */
    b = noise_draw(noise_key_make(0x299f31d0a4093822ull, 0x0370734413198a2eull), 0x243f6a88,
                   0x85a308d3);
    uint32_t pi[4] = {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1};
    assert_memory_equal(b.w, pi, sizeof pi);
}

#define GOLD_ROWS 4096
static const uint64_t GOLD_HASH = 0x00dfd7c78bb96bf5ull;

/* Every distribution's bits for 4096 rows, pinned: a change to a transform (or a compiler
 * that contracts, or a libm that leaks in) changes this hash. The GPU must give the same. */
static void test_golden(void **state)
{
    (void)state;
    uint32_t *rows = malloc(GOLD_ROWS * sizeof *rows);
    float *out = malloc(GOLD_ROWS * NOISE_ISA_FLOATS * sizeof *out);
    for (uint32_t i = 0; i < GOLD_ROWS; i++)
        rows[i] = i;
    noise_isa_fill_scalar(noise_key_make(12345, 678), rows, GOLD_ROWS, out);
    uint64_t h = fnv_bytes(out, GOLD_ROWS * NOISE_ISA_FLOATS * sizeof *out);
    printf("  golden hash %016llx\n", (unsigned long long)h);
    assert_true(h == GOLD_HASH);
    free(rows);
    free(out);
}

/* ---- the same bits everywhere ------------------------------------------------------------- */

#define ISA_ROWS 100003 /* not a multiple of any lane count */

static uint32_t *shuffled_rows(size_t n, uint64_t seed)
{
    uint32_t *rows = malloc(n * sizeof *rows);
    for (size_t i = 0; i < n; i++)
        rows[i] = (uint32_t)i;
    uint64_t s = seed;
    for (size_t i = n - 1; i > 0; i--) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        size_t j = (size_t)((s >> 33) % (i + 1));
        uint32_t t = rows[i];
        rows[i] = rows[j];
        rows[j] = t;
    }
    return rows;
}

static void test_isas_same_bits(void **state)
{
    (void)state;
    noise_key k = noise_key_make(0xfeedface12345678ull, 3141);
    uint32_t *rows = shuffled_rows(ISA_ROWS, 1);
    size_t size = (size_t)ISA_ROWS * NOISE_ISA_FLOATS * sizeof(float);
    float *ref = malloc(size), *got = malloc(size);
    noise_isa_fill_scalar(k, rows, ISA_ROWS, ref);
    int checked = 0;
#if defined(__x86_64__)
    if (cpu_has_avx2()) {
        noise_isa_fill_avx2(k, rows, ISA_ROWS, got);
        assert_memory_equal(ref, got, size);
        checked++;
    }
    if (cpu_has_avx512()) {
        noise_isa_fill_avx512(k, rows, ISA_ROWS, got);
        assert_memory_equal(ref, got, size);
        checked++;
    }
#endif
    char err[256] = "";
    int g = noise_gpu_fill(k, rows, ISA_ROWS, got, err, sizeof err);
    if (g < 0)
        fail_msg("the GPU's noise: %s", err);
    if (g == 0) {
        assert_memory_equal(ref, got, size);
        checked++;
    }
    printf("  scalar = %d other build(s)%s\n", checked,
           g == 0 ? " (the GPU among them)" : " (no GPU here)");
    free(ref);
    free(got);
    free(rows);
}

typedef struct fill_job {
    noise_key k;
    const uint32_t *rows;
    float *out;
} fill_job;

/* run by worker threads: writes out's rows [begin, end) only */
static void fill_chunk(void *ctx, int64_t begin, int64_t end, int thread_index)
{
    (void)thread_index;
    fill_job *j = ctx;
    noise_isa_fill_scalar(j->k, j->rows + begin, (size_t)(end - begin),
                          j->out + (size_t)begin * NOISE_ISA_FLOATS);
}

static void test_threads_same_bits(void **state)
{
    (void)state;
    size_t size = (size_t)ISA_ROWS * NOISE_ISA_FLOATS * sizeof(float);
    uint32_t *rows = shuffled_rows(ISA_ROWS, 2);
    float *ref = malloc(size), *got = malloc(size);
    fill_job j = {noise_key_make(99, 1u << 20), rows, ref};
    parallel_for_n(ISA_ROWS, 4096, fill_chunk, &j, 1);
    int threads[] = {2, 3, 16};
    for (int t = 0; t < 3; t++) {
        memset(got, 0, size);
        j.out = got;
        parallel_for_n(ISA_ROWS, 97, fill_chunk, &j, threads[t]);
        assert_memory_equal(ref, got, size);
    }
    free(ref);
    free(got);
    free(rows);
}

/* ---- the keying ---------------------------------------------------------------------------- */

/* A boid's draws follow its row: the rows in any memory order (as the sort leaves them, or
 * an MPI rank holds them) give each row the block of the rows in order. */
static void test_reordered_rows(void **state)
{
    (void)state;
    enum { N = 5000 };
    noise_key k = noise_key_make(7, 11);
    uint32_t *in_order = shuffled_rows(N, 0), *shuffled = shuffled_rows(N, 3);
    for (uint32_t i = 0; i < N; i++)
        in_order[i] = i;
    float *a = malloc(N * NOISE_ISA_FLOATS * sizeof(float));
    float *b = malloc(N * NOISE_ISA_FLOATS * sizeof(float));
    noise_isa_fill_scalar(k, in_order, N, a);
    noise_isa_fill_scalar(k, shuffled, N, b);
    for (size_t i = 0; i < N; i++)
        assert_memory_equal(b + i * NOISE_ISA_FLOATS, a + (size_t)shuffled[i] * NOISE_ISA_FLOATS,
                            NOISE_ISA_FLOATS * sizeof(float));
    free(a);
    free(b);
    free(in_order);
    free(shuffled);
}

/* Each part of the key changes the block, the high halves included; nothing else does. */
static void test_key_parts(void **state)
{
    (void)state;
    uint64_t seed = 0x0123456789abcdefull, step = 0x0000000100000002ull;
    noise_bits base = noise_draw(noise_key_make(seed, step), 5, 9);
    noise_bits again = noise_draw(noise_key_make(seed, step), 5, 9);
    assert_memory_equal(base.w, again.w, sizeof base.w);
    noise_bits other[] = {
        noise_draw(noise_key_make(seed ^ 1, step), 5, 9),
        noise_draw(noise_key_make(seed ^ (1ull << 40), step), 5, 9),
        noise_draw(noise_key_make(seed, step ^ 1), 5, 9),
        noise_draw(noise_key_make(seed, step ^ (1ull << 32)), 5, 9),
        noise_draw(noise_key_make(seed, step), 4, 9),
        noise_draw(noise_key_make(seed, step), 5, 8),
        noise_draw(noise_key_make(seed, step), 9, 5), /* row and draw are not symmetric */
    };
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
        for (int w = 0; w < 4; w++)
            if (other[i].w[w] == base.w[w])
                fail_msg("key variant %zu: word %d unchanged", i, w);
}

/* ---- the transcendentals ------------------------------------------------------------------- */

static void test_logf_accuracy(void **state)
{
    (void)state;
    double worst = 0;
    /* every u = k 2^-24 for k = 1 .. 2^24, the logarithm's whole domain in Box-Muller */
    for (uint32_t k = 1; k <= (1u << 24); k++) {
        float u = (float)k * (1.0f / 16777216.0f);
        double want = log((double)u);
        double err = fabs((double)noise_logf(u) - want) / (fabs(want) + 1e-30);
        if (want != 0 && err > worst)
            worst = err;
        if (want == 0)
            assert_true(noise_logf(u) == 0.0f);
    }
    printf("  noise_logf: worst relative error %.3g on (0, 1]\n", worst);
    assert_true(worst < 4e-7);
    /* beyond (0, 1]: large and tiny normal numbers */
    float xs[] = {1.5f, 2.0f, 1e10f, 3.4e38f, 1.2e-38f, 0.7071067f, 0.7071068f};
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++)
        assert_true(fabs(noise_logf(xs[i]) - log(xs[i])) <= 4e-7 * fabs(log(xs[i])) + 1e-7);
}

static void test_sincos_accuracy(void **state)
{
    (void)state;
    double worst_turn = 0, worst = 0;
    for (uint64_t k = 0; k < (1ull << 32); k += 65521) {
        uint32_t w = (uint32_t)k;
        float s, c;
        noise_sincos_turn(w, &s, &c);
        double a = 2 * M_PI * (double)w / 4294967296.0;
        worst_turn = fmax(worst_turn, fmax(fabs(s - sin(a)), fabs(c - cos(a))));
    }
    for (int i = -2000000; i <= 2000000; i++) {
        float x = (float)i * 4.096e-3f; /* [-8192, 8192] */
        float s, c;
        noise_sincos(x, &s, &c);
        worst = fmax(worst, fmax(fabs(s - sin(x)), fabs(c - cos(x))));
    }
    float s, c;
    noise_sincos(NAN, &s, &c);
    assert_true(isnan(s) && isnan(c));
    printf("  sincos: worst absolute error %.3g (a word's turn), %.3g (|x| <= 8192)\n", worst_turn,
           worst);
    assert_true(worst_turn < 2e-7);
    assert_true(worst < 1.5e-6);
}

/* ---- statistics of 10^7 draws ------------------------------------------------------------- */

/* The 10^7 uniforms in the order a run draws them: step-major, then row, then the block's
 * four words (2.5 million blocks: 10 steps of 250,000 boids). */
static float *uniform_sequence(void)
{
    float *u = malloc(UNIFORM_DRAWS * sizeof *u);
    size_t at = 0;
    for (uint64_t step = 0; step < 10; step++) {
        noise_key k = noise_key_make(20261127, step);
        for (uint32_t row = 0; row < UNIFORM_DRAWS / 40; row++) {
            noise_bits b = noise_draw(k, row, 0);
            for (int w = 0; w < 4; w++)
                u[at++] = noise_u01(b.w[w]);
        }
    }
    assert_true(at == UNIFORM_DRAWS);
    return u;
}

static double lag_correlation(const float *u, size_t n, size_t lag)
{
    double sxy = 0, sx = 0, sy = 0, sxx = 0, syy = 0;
    for (size_t i = 0; i + lag < n; i++) {
        double x = u[i], y = u[i + lag];
        sx += x, sy += y, sxx += x * x, syy += y * y, sxy += x * y;
    }
    double m = (double)(n - lag);
    double cov = sxy / m - (sx / m) * (sy / m);
    return cov / sqrt((sxx / m - (sx / m) * (sx / m)) * (syy / m - (sy / m) * (sy / m)));
}

static void test_uniform_statistics(void **state)
{
    (void)state;
    float *u = uniform_sequence();
    enum { BINS = 1024 };
    uint64_t count[BINS] = {0};
    float lo = 1, hi = 0;
    for (size_t i = 0; i < UNIFORM_DRAWS; i++) {
        count[(int)(u[i] * BINS)]++;
        lo = fminf(lo, u[i]);
        hi = fmaxf(hi, u[i]);
    }
    assert_true(lo >= 0.0f && hi < 1.0f);
    check_chi("uniform, 1024 bins", chi_square(count, BINS, UNIFORM_DRAWS), BINS - 1);
    /* the words of one block, the same word of neighbouring rows, of the next step */
    size_t lags[] = {1, 2, 3, 4, 8, 4 * (UNIFORM_DRAWS / 40)};
    const char *what[] = {"next word", "word + 2", "word + 3", "next row", "row + 2", "next step"};
    double bound = 5 / sqrt((double)UNIFORM_DRAWS);
    for (size_t i = 0; i < sizeof lags / sizeof lags[0]; i++) {
        double r = lag_correlation(u, UNIFORM_DRAWS, lags[i]);
        printf("  serial correlation, %-10s %+.2e (bound %.1e)\n", what[i], r, bound);
        if (fabs(r) > bound)
            fail_msg("serial correlation at lag %zu: %g", lags[i], r);
    }
    /* independence of consecutive draws: (u_i, u_i+1) in 64 x 64 cells, disjoint pairs */
    enum { PB = 64 };
    uint64_t *pairs = calloc(PB * PB, sizeof *pairs);
    for (size_t i = 0; i + 1 < UNIFORM_DRAWS; i += 2)
        pairs[(int)(u[i] * PB) * PB + (int)(u[i + 1] * PB)]++;
    check_chi("pairs, 64 x 64 cells", chi_square(pairs, PB * PB, UNIFORM_DRAWS / 2), PB * PB - 1);
    free(pairs);
    /* the low bits too: the 8 bits below the top 16 of each value, 256 bins */
    uint64_t low[256] = {0};
    for (size_t i = 0; i < UNIFORM_DRAWS; i++)
        low[((uint32_t)(u[i] * 16777216.0f)) & 0xffu]++;
    check_chi("uniform's low 8 bits", chi_square(low, 256, UNIFORM_DRAWS), 255);
    free(u);
}

static void test_sym(void **state)
{
    (void)state;
    /* the extremes, exactly symmetric, and the bound a */
    assert_true(noise_sym(0, 1.0f) == -(1.0f - 1.0f / 8388608.0f));
    assert_true(noise_sym(0xffffffffu, 1.0f) == 1.0f - 1.0f / 8388608.0f);
    for (uint32_t w = 0; w < 100000; w++) {
        uint32_t m = w * 2654435761u;
        float x = noise_sym(m, 3.0f);
        assert_true(x >= -3.0f && x <= 3.0f);
        assert_true(noise_sym(~m, 3.0f) == -x); /* the mirrored word gives -x */
    }
    enum { BINS = 200 };
    uint64_t count[BINS] = {0};
    double sum = 0;
    noise_key k = noise_key_make(5, 5);
    for (uint32_t row = 0; row < 1000000; row++) {
        float x = noise_sym(noise_draw(k, row, 0).w[2], 0.5f);
        sum += x;
        count[(int)((x + 0.5f) * BINS)]++;
    }
    check_chi("sym(0.5), 200 bins", chi_square(count, BINS, 1e6), BINS - 1);
    assert_true(fabs(sum / 1e6) < 5 * 0.5 / sqrt(3e6));
}

static double normal_cdf(double x) { return 0.5 * erfc(-x / M_SQRT2); }

static void test_gauss_statistics(void **state)
{
    (void)state;
    enum { BINS = 100 };
    uint64_t count[BINS] = {0};
    double s1 = 0, s2 = 0, s3 = 0, s4 = 0, cross = 0, maxabs = 0;
    size_t n = 0, beyond3 = 0;
    noise_key k = noise_key_make(424242, 1);
    for (uint32_t row = 0; row < UNIFORM_DRAWS / 4; row++) {
        float g[4];
        noise_gauss4(noise_draw(k, row, 1), g);
        cross += (double)g[0] * g[1] + (double)g[2] * g[3]; /* the pair's two normals */
        for (int i = 0; i < 4; i++) {
            double x = g[i];
            s1 += x, s2 += x * x, s3 += x * x * x, s4 += x * x * x * x;
            maxabs = fmax(maxabs, fabs(x));
            beyond3 += fabs(x) > 3;
            int b = (int)(normal_cdf(x) * BINS);
            count[b < BINS ? b : BINS - 1]++;
            n++;
        }
    }
    double m = s1 / n, var = s2 / n - m * m, skew = s3 / n, kurt = s4 / n;
    double corr = cross / (n / 2);
    double p3 = (double)beyond3 / n;
    printf("  normals: mean %+.2e var %.5f skew %+.2e kurtosis %.4f pair corr %+.2e\n", m, var,
           skew, kurt, corr);
    printf("  normals: P(|z|>3) %.3e (true 2.700e-03), max |z| %.3f (bound 5.77)\n", p3, maxabs);
    double dn = (double)n;
    assert_true(fabs(m) < 5 / sqrt(dn));
    assert_true(fabs(var - 1) < 5 * sqrt(2 / dn));
    assert_true(fabs(skew) < 5 * sqrt(15 / dn));
    assert_true(fabs(kurt - 3) < 5 * sqrt(96 / dn));
    assert_true(fabs(corr) < 5 / sqrt(dn / 2));
    assert_true(fabs(p3 - 2.6998e-3) < 5 * sqrt(2.6998e-3 / dn));
    assert_true(maxabs <= 5.7683);
    check_chi("normals' CDF, 100 bins", chi_square(count, BINS, dn), BINS - 1);
}

static double dot3(const float *a, const float *b)
{
    return (double)a[0] * b[0] + (double)a[1] * b[1] + (double)a[2] * b[2];
}

/* Cap around several headings: inside the cap, unit, cos(theta) uniform on [cos_alpha, 1]
 * (equal area), azimuth uniform; the whole sphere's z uniform on [-1, 1]. */
static void test_cap(void **state)
{
    (void)state;
    float headings[][3] = {{0, 0, 1}, {0, 0, -1}, {0.6f, 0.8f, 0}, {0, -0.6f, 0.8f}};
    float alphas[] = {0.05f, 0.7f, 2.0f, (float)M_PI};
    enum { N = 400000, BINS = 40 };
    noise_key k = noise_key_make(31337, 2);
    for (int hi = 0; hi < 4; hi++) {
        for (int ai = 0; ai < 4; ai++) {
            const float *h = headings[hi];
            float ca = noise_cap_cos(alphas[ai]);
            float e1[3], e2[3];
            noise_basis(h, e1, e2);
            uint64_t height[BINS] = {0}, azim[BINS] = {0};
            for (uint32_t row = 0; row < N; row++) {
                float d[3];
                noise_cap(noise_draw(k, row + (uint32_t)(hi * 4 + ai) * N, 0), h, ca, d);
                double len = sqrt(dot3(d, d));
                if (fabs(len - 1) > 1e-6)
                    fail_msg("cap: |d| = %.9f", len);
                double c = dot3(d, h);
                if (c < (double)ca - 2e-6)
                    fail_msg("cap: cos(theta) %.9f outside cos(alpha) %.9f", c, (double)ca);
                double f = (1 - c) / (1 - (double)ca); /* uniform on [0, 1] */
                int b = (int)(f * BINS);
                height[b < 0 ? 0 : b >= BINS ? BINS - 1 : b]++;
                double phi = atan2(dot3(d, e2), dot3(d, e1)) + M_PI;
                b = (int)(phi / (2 * M_PI) * BINS);
                azim[b >= BINS ? BINS - 1 : b]++;
            }
            char what[64];
            snprintf(what, sizeof what, "cap heights, h%d alpha %.2f", hi, (double)alphas[ai]);
            if (ai > 0 || hi == 0) /* alpha 0.05: cos(theta) has few float values: skip */
                check_chi(what, chi_square(height, BINS, N), BINS - 1);
            snprintf(what, sizeof what, "cap azimuths, h%d alpha %.2f", hi, (double)alphas[ai]);
            check_chi(what, chi_square(azim, BINS, N), BINS - 1);
        }
    }
}

/* Couzin's wrapped normal about h: the angle to h is |sigma z| (sigma |z| < pi here), the
 * azimuth uniform; in the plane, turn2 by sigma z keeps the length. */
static void test_sphere_gauss(void **state)
{
    (void)state;
    enum { N = 1000000, BINS = 50 };
    float h[3] = {0, -0.6f, 0.8f};
    float sigma = 0.3f;
    float e1[3], e2[3];
    noise_basis(h, e1, e2);
    uint64_t angle[BINS] = {0}, azim[BINS] = {0};
    noise_key k = noise_key_make(2002, 3);
    for (uint32_t row = 0; row < N; row++) {
        noise_bits b = noise_draw(k, row, 0);
        float d[3];
        noise_sphere_gauss(b, h, sigma, d);
        double x = dot3(d, e1), y = dot3(d, e2), z = dot3(d, h);
        double len = sqrt(x * x + y * y + z * z);
        if (fabs(len - 1) > 1e-6)
            fail_msg("sphere_gauss: |d| = %.9f", len);
        double theta = atan2(sqrt(x * x + y * y), z) / sigma; /* |z| half-normal */
        int bin = (int)((2 * normal_cdf(theta) - 1) * BINS);
        angle[bin >= BINS ? BINS - 1 : bin]++;
        bin = (int)((atan2(y, x) + M_PI) / (2 * M_PI) * BINS);
        azim[bin >= BINS ? BINS - 1 : bin]++;
    }
    check_chi("wrapped normal's angle / sigma", chi_square(angle, BINS, N), BINS - 1);
    check_chi("wrapped normal's azimuth", chi_square(azim, BINS, N), BINS - 1);
    float t[2], h2[2] = {0.6f, 0.8f};
    noise_turn2(h2, (float)M_PI / 2, t);
    assert_true(fabs(t[0] + 0.8) < 1e-6 && fabs(t[1] - 0.6) < 1e-6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_philox_kat),         cmocka_unit_test(test_golden),
        cmocka_unit_test(test_isas_same_bits),     cmocka_unit_test(test_threads_same_bits),
        cmocka_unit_test(test_reordered_rows),     cmocka_unit_test(test_key_parts),
        cmocka_unit_test(test_logf_accuracy),      cmocka_unit_test(test_sincos_accuracy),
        cmocka_unit_test(test_uniform_statistics), cmocka_unit_test(test_sym),
        cmocka_unit_test(test_gauss_statistics),   cmocka_unit_test(test_cap),
        cmocka_unit_test(test_sphere_gauss),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
