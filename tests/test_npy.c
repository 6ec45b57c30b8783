/* SPDX-License-Identifier: MIT */
/* State files (src/io/npy.c) and atomic output (src/io/atomic.c): bit-exact round trips,
 * files as NumPy writes them (byte-exact images, versions 1.0/2.0/3.0, plus numpy itself
 * when a python3 on this machine has it), float64 conversion, every malformed case with the
 * word its one-line message must carry, every truncation of a valid file, header mutations,
 * out of memory, non-finite values, and what the atomic writer leaves behind on failure. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* mkdtemp, popen, fork: also when built outside meson */
#endif

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "shoal/io.h"
#include "tests/cli_harness.h"
#include "tests/scenes.h"

#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Address and thread sanitizers reserve terabytes of shadow address space, so the
 * RLIMIT_AS trick of test_out_of_memory cannot work under them. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TEST_SANITIZER_SHADOW 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||                         \
    __has_feature(memory_sanitizer)
#define TEST_SANITIZER_SHADOW 1
#endif
#endif
#ifndef TEST_SANITIZER_SHADOW
#define TEST_SANITIZER_SHADOW 0
#endif

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint64_t g_rng = 0x9e3779b97f4a7c15u;

static uint32_t rng_next(void)
{
    /* splitmix64: any seeded generator will do; this one has no bad low bits */
    uint64_t z = (g_rng += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return (uint32_t)((z ^ (z >> 31)) >> 32);
}

/* Number of entries of g_dir whose name contains `part` (all entries when NULL). */
static int dir_count(const char *dir, const char *part)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (!part || strstr(e->d_name, part))
            n++;
    }
    closedir(d);
    return n;
}

static unsigned char *read_bytes(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long len = ftell(f);
    assert_true(len >= 0);
    rewind(f);
    unsigned char *data = malloc((size_t)len + 1);
    assert_non_null(data);
    assert_int_equal(fread(data, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *size = (size_t)len;
    return data;
}

static void write_all(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, size, f), size);
    assert_int_equal(fclose(f), 0);
}

/* ---- .npy images built by hand ----------------------------------------------------------
 * Captured from numpy 1.24.2 (Debian 12): np.save of the 2x6 float32 array VALUES_2X6, and
 * np.lib.format.write_array(..., version=(2, 0)) of the same as float64. */

static const double VALUES_2X6[12] = {1, 2, 3, 4, 5, 6, -0.5, 0.25, 1e-3, 1e30, -7, 8};

/* 176 bytes */
static const unsigned char numpy_f4_v1[] = {
    0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x01, 0x00, 0x76, 0x00, 0x7b, 0x27, 0x64, 0x65, 0x73, 0x63,
    0x72, 0x27, 0x3a, 0x20, 0x27, 0x3c, 0x66, 0x34, 0x27, 0x2c, 0x20, 0x27, 0x66, 0x6f, 0x72, 0x74,
    0x72, 0x61, 0x6e, 0x5f, 0x6f, 0x72, 0x64, 0x65, 0x72, 0x27, 0x3a, 0x20, 0x46, 0x61, 0x6c, 0x73,
    0x65, 0x2c, 0x20, 0x27, 0x73, 0x68, 0x61, 0x70, 0x65, 0x27, 0x3a, 0x20, 0x28, 0x32, 0x2c, 0x20,
    0x36, 0x29, 0x2c, 0x20, 0x7d, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x0a,
    0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x40, 0x40, 0x00, 0x00, 0x80, 0x40,
    0x00, 0x00, 0xa0, 0x40, 0x00, 0x00, 0xc0, 0x40, 0x00, 0x00, 0x00, 0xbf, 0x00, 0x00, 0x80, 0x3e,
    0x6f, 0x12, 0x83, 0x3a, 0xca, 0xf2, 0x49, 0x71, 0x00, 0x00, 0xe0, 0xc0, 0x00, 0x00, 0x00, 0x41,
};

/* 224 bytes */
static const unsigned char numpy_f8_v2[] = {
    0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x02, 0x00, 0x74, 0x00, 0x00, 0x00, 0x7b, 0x27, 0x64, 0x65,
    0x73, 0x63, 0x72, 0x27, 0x3a, 0x20, 0x27, 0x3c, 0x66, 0x38, 0x27, 0x2c, 0x20, 0x27, 0x66, 0x6f,
    0x72, 0x74, 0x72, 0x61, 0x6e, 0x5f, 0x6f, 0x72, 0x64, 0x65, 0x72, 0x27, 0x3a, 0x20, 0x46, 0x61,
    0x6c, 0x73, 0x65, 0x2c, 0x20, 0x27, 0x73, 0x68, 0x61, 0x70, 0x65, 0x27, 0x3a, 0x20, 0x28, 0x32,
    0x2c, 0x20, 0x36, 0x29, 0x2c, 0x20, 0x7d, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x0a,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf0, 0x3f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x40,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x14, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x18, 0x40,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xe0, 0xbf, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xd0, 0x3f,
    0xfc, 0xa9, 0xf1, 0xd2, 0x4d, 0x62, 0x50, 0x3f, 0xea, 0x8c, 0xa0, 0x39, 0x59, 0x3e, 0x29, 0x46,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1c, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x20, 0x40,
};

typedef struct image {
    unsigned char *data; /* exactly `size` bytes, so ASan sees any read past the end */
    size_t size;
} image;

/* The dict numpy.save writes for a C-order (N, 6) array; NumPy >= 1.23 follows it with
 * 21 - digits(N) spaces so the file can grow along axis 0 without moving the data. */
static void numpy_dict(char *out, size_t size, const char *descr, size_t count, int growth)
{
    int n = snprintf(out, size, "{'descr': '%s', 'fortran_order': False, 'shape': (%zu, 6), }",
                     descr, count);
    if (growth) {
        char digits[32];
        int d = snprintf(digits, sizeof digits, "%zu", count);
        snprintf(out + n, size - (size_t)n, "%*s", 21 - d, "");
    }
}

/* A .npy image: magic, version, header length (u16 for 1.x, u32 otherwise), `header`, and,
 * when `align` > 0, numpy's padding: spaces and a '\n' to a multiple of `align` (NumPy's
 * formula, which adds a whole `align` when the text already ends on a boundary). Then
 * `payload`, or `payload_size` zero bytes when it is NULL. */
static image npy_image(int major, int minor, const char *header, size_t align, const void *payload,
                       size_t payload_size)
{
    size_t prefix = major >= 2 ? 12 : 10;
    size_t text_len = strlen(header);
    size_t header_len = text_len;
    if (align)
        header_len = text_len + 1 + (align - (prefix + text_len + 1) % align);
    image im;
    im.size = prefix + header_len + payload_size;
    im.data = malloc(im.size);
    assert_non_null(im.data);
    memcpy(im.data, "\x93NUMPY", 6);
    im.data[6] = (unsigned char)major;
    im.data[7] = (unsigned char)minor;
    for (size_t i = 0; i < prefix - 8; i++)
        im.data[8 + i] = (unsigned char)(header_len >> (8 * i));
    memcpy(im.data + prefix, header, text_len);
    if (align) {
        memset(im.data + prefix + text_len, ' ', header_len - text_len - 1);
        im.data[prefix + header_len - 1] = '\n';
    }
    if (payload)
        memcpy(im.data + prefix + header_len, payload, payload_size);
    else
        memset(im.data + prefix + header_len, 0, payload_size);
    return im;
}

static image raw_image(const void *bytes, size_t size)
{
    image im = {malloc(size ? size : 1), size};
    assert_non_null(im.data);
    if (size)
        memcpy(im.data, bytes, size);
    return im;
}

/* `n` values as little-endian float32 (rounded from double) or float64 bytes. */
static void *payload_f4(const double *values, size_t n)
{
    unsigned char *p = malloc(n * 4 + 1);
    assert_non_null(p);
    for (size_t i = 0; i < n; i++) {
        uint32_t u = float_bits((float)values[i]);
        for (int b = 0; b < 4; b++)
            p[4 * i + (size_t)b] = (unsigned char)(u >> (8 * b));
    }
    return p;
}

static void *payload_f8(const double *values, size_t n)
{
    unsigned char *p = malloc(n * 8 + 1);
    assert_non_null(p);
    for (size_t i = 0; i < n; i++) {
        uint64_t u;
        memcpy(&u, &values[i], sizeof u);
        for (int b = 0; b < 8; b++)
            p[8 * i + (size_t)b] = (unsigned char)(u >> (8 * b));
    }
    return p;
}

/* Parse `im` and expect success with `count` rows equal (as float) to `values`. */
static void expect_rows(const image *im, size_t count, const double *values)
{
    float *rows = NULL;
    size_t n = 0;
    shoal_error e = {0};
    shoal_status s = shoal_io_npy_parse(im->data, im->size, "good.npy", &rows, &n, &e);
    if (s != SHOAL_OK)
        fail_msg("expected success, got %d: %s", (int)s, e.message);
    assert_int_equal(n, count);
    for (size_t i = 0; i < count * 6; i++) {
        float want = (float)values[i];
        if (float_bits(rows[i]) != float_bits(want))
            fail_msg("value %zu: %08x, expected %08x", i, float_bits(rows[i]), float_bits(want));
    }
    free(rows);
}

static const char *g_case = "";

/* Parse `im` and expect `want` with a one-line message naming the file and containing
 * `w1` and `w2` (either may be NULL); the outputs must be NULL and 0. */
static void expect_status(const image *im, shoal_status want, const char *w1, const char *w2)
{
    float sentinel;
    float *rows = &sentinel;
    size_t n = 12345;
    shoal_error e;
    memset(&e, 0, sizeof e);
    shoal_status s = shoal_io_npy_parse(im->data, im->size, "bad.npy", &rows, &n, &e);
    if (s != want || e.status != want)
        fail_msg("[%s] status %d, expected %d: '%s'", g_case, (int)s, (int)want, e.message);
    if (strncmp(e.message, "bad.npy: ", 9) != 0 || strchr(e.message, '\n') ||
        (w1 && !strstr(e.message, w1)) || (w2 && !strstr(e.message, w2)))
        fail_msg("[%s] message '%s' lacks '%s' / '%s'", g_case, e.message, w1 ? w1 : "",
                 w2 ? w2 : "");
    assert_null(rows);
    assert_int_equal(n, 0);
}

static void expect_input(const image *im, const char *w1, const char *w2)
{
    expect_status(im, SHOAL_ERR_INPUT, w1, w2);
}

/* ---- round trips ------------------------------------------------------------------------- */

static void roundtrip(const float *rows, size_t count, const char *name)
{
    shoal_error e = {0};
    const char *file = path(name);
    if (shoal_io_npy_write(file, rows, count, &e) != SHOAL_OK)
        fail_msg("write: %s", e.message);
    float *back = NULL;
    size_t n = 0;
    if (shoal_io_npy_read(file, &back, &n, &e) != SHOAL_OK)
        fail_msg("read: %s", e.message);
    assert_int_equal(n, count);
    assert_memory_equal(back, rows, count * 6 * sizeof(float)); /* bits, NaN payloads too */
    free(back);
}

static void test_roundtrip_special_values(void **state)
{
    (void)state;
    /* clang-format off */
    float rows[3 * 6] = {
        -0.0f, 0.0f, FLT_TRUE_MIN, -FLT_TRUE_MIN, 1e-40f, FLT_MIN,
        FLT_MAX, -FLT_MAX, INFINITY, -INFINITY, bits_float(0x7fc12345), bits_float(0x7f800001),
        bits_float(0xffc00000), 1.0f, -1.5f, 3.14159265f, 1e30f, -1e-30f,
    };
    /* clang-format on */
    roundtrip(rows, 3, "special.npy");

    /* The file is byte for byte what numpy 1.24 writes for the same array: numpy's growth
     * padding and ours both end the 128-byte preamble, so only the spaces differ in count,
     * and the dict is followed by spaces up to the same '\n'. */
    size_t size;
    unsigned char *data = read_bytes(path("special.npy"), &size);
    assert_int_equal(size, 128 + sizeof rows);
    const char dict[] = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 6), }";
    assert_memory_equal(data, "\x93NUMPY\x01\x00\x76\x00", 10);
    assert_memory_equal(data + 10, dict, sizeof dict - 1);
    for (size_t i = 10 + sizeof dict - 1; i < 127; i++)
        assert_int_equal(data[i], ' ');
    assert_int_equal(data[127], '\n');
    assert_int_equal(data[128 + 8], 0x01); /* row 0 column 2, FLT_TRUE_MIN: 01 00 00 00 */
    assert_int_equal(data[128 + 11], 0x00);
    assert_int_equal(data[128 + 3], 0x80); /* -0.0f little endian: 00 00 00 80 */
    free(data);
}

static void test_roundtrip_large(void **state)
{
    (void)state;
    size_t count = 100000;
    float *rows = malloc(count * 6 * sizeof *rows);
    assert_non_null(rows);
    for (size_t i = 0; i < count * 6; i++)
        rows[i] = bits_float(rng_next()); /* every bit pattern class, NaNs included */
    roundtrip(rows, count, "large.npy");
    struct stat st;
    assert_int_equal(stat(path("large.npy"), &st), 0);
    assert_int_equal((size_t)st.st_size, 128 + count * 24);
    free(rows);

    /* Rows counts whose header length sits at different paddings. */
    size_t counts[] = {1, 9, 10, 99999, 1000000};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        size_t n = counts[k];
        float *r = calloc(n * 6, sizeof *r);
        assert_non_null(r);
        r[n * 6 - 1] = (float)n;
        roundtrip(r, n, "counts.npy");
        free(r);
    }
}

/* ---- what NumPy writes ------------------------------------------------------------------- */

static void test_numpy_images(void **state)
{
    (void)state;
    image f4 = raw_image(numpy_f4_v1, sizeof numpy_f4_v1);
    image f8 = raw_image(numpy_f8_v2, sizeof numpy_f8_v2);
    expect_rows(&f4, 2, VALUES_2X6);
    expect_rows(&f8, 2, VALUES_2X6);

    /* The builder reproduces numpy's bytes exactly, so its other images are faithful too. */
    char dict[256];
    unsigned char *p4 = payload_f4(VALUES_2X6, 12), *p8 = payload_f8(VALUES_2X6, 12);
    numpy_dict(dict, sizeof dict, "<f4", 2, 1);
    image b4 = npy_image(1, 0, dict, 64, p4, 48);
    assert_int_equal(b4.size, f4.size);
    assert_memory_equal(b4.data, f4.data, f4.size);
    numpy_dict(dict, sizeof dict, "<f8", 2, 1);
    image b8 = npy_image(2, 0, dict, 64, p8, 96);
    assert_int_equal(b8.size, f8.size);
    assert_memory_equal(b8.data, f8.data, f8.size);
    free(b4.data);
    free(b8.data);
    free(f4.data);
    free(f8.data);

    /* Every version, both dtypes, with and without the growth padding (NumPy < 1.23), and
     * the 16-byte alignment of NumPy < 1.14. */
    const char *descrs[2] = {"<f4", "<f8"};
    for (int major = 1; major <= 3; major++)
        for (int d = 0; d < 2; d++)
            for (int growth = 0; growth < 2; growth++)
                for (size_t align = 16; align <= 64; align *= 4) {
                    numpy_dict(dict, sizeof dict, descrs[d], 2, growth);
                    image im =
                        npy_image(major, 0, dict, align, d ? (void *)p8 : (void *)p4, d ? 96 : 48);
                    assert_int_equal((im.size - (d ? 96 : 48)) % align, 0);
                    expect_rows(&im, 2, VALUES_2X6);
                    free(im.data);
                }
    free(p4);
    free(p8);
}

/* Headers NumPy does not write but Python reads as the same dict. */
static void test_header_variants(void **state)
{
    (void)state;
    static const char *const headers[] = {
        "{'shape': (2, 6), 'fortran_order': False, 'descr': '<f4'}",
        "{'fortran_order': False, 'shape': (2, 6), 'descr': '<f4', }",
        "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2,6)}",
        "{ 'descr' : '<f4' ,\n\t'fortran_order' : False ,\r\n 'shape' : ( 2 , 6 , ) , }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 6L), }", /* Python 2 */
        "  {'descr':'<f4','fortran_order':False,'shape':(2,6)}  \n\n",
        "{'descr': ('<f4'), 'fortran_order': (False), 'shape': ((2), +6)}",
    };
    unsigned char *p4 = payload_f4(VALUES_2X6, 12);
    for (size_t i = 0; i < sizeof headers / sizeof headers[0]; i++) {
        for (size_t align = 0; align <= 64; align += 64) {
            image im = npy_image(1, 0, headers[i], align, p4, 48);
            expect_rows(&im, 2, VALUES_2X6);
            free(im.data);
        }
    }
    free(p4);
}

static void test_float64_conversion(void **state)
{
    (void)state;
    double values[12] = {0.1,
                         -0.0,
                         1e300,
                         -1e300,
                         1e-320,
                         1.0 / 3.0,
                         3.4028235677973366e38, /* just above FLT_MAX: rounds to inf */
                         3.4028234663852886e38, /* FLT_MAX exactly */
                         16777217.0,            /* 2^24 + 1: a tie, rounds to even */
                         NAN,
                         -INFINITY,
                         1.401298464324817e-45};
    unsigned char *p8 = payload_f8(values, 12);
    char dict[256];
    numpy_dict(dict, sizeof dict, "<f8", 2, 1);
    image im = npy_image(1, 0, dict, 64, p8, 96);
    float *rows = NULL;
    size_t n = 0;
    shoal_error e = {0};
    assert_int_equal(shoal_io_npy_parse(im.data, im.size, "f8.npy", &rows, &n, &e), SHOAL_OK);
    assert_int_equal(n, 2);
    for (int i = 0; i < 12; i++) {
        float want = (float)values[i];
        if (isnan(want))
            assert_true(isnan(rows[i]));
        else
            assert_int_equal(float_bits(rows[i]), float_bits(want));
    }
    assert_int_equal(float_bits(rows[0]), float_bits(0.1f));
    assert_int_equal(float_bits(rows[1]), 0x80000000u);
    assert_true(isinf(rows[2]) && rows[2] > 0);
    assert_true(isinf(rows[3]) && rows[3] < 0);
    assert_int_equal(float_bits(rows[4]), 0);
    assert_true(isinf(rows[6]));
    assert_true(rows[7] == FLT_MAX);
    assert_true(rows[8] == 16777216.0f);
    assert_int_equal(float_bits(rows[11]), 1); /* FLT_TRUE_MIN survives */
    free(rows);
    free(im.data);
    free(p8);
}

/* ---- malformed input --------------------------------------------------------------------- */

typedef struct bad_header {
    const char *label;
    const char *header;
    size_t payload_size;
    const char *w1, *w2;
} bad_header;

static const bad_header BAD_HEADERS[] = {
    /* dtype */
    {"int32", "{'descr': '<i4', 'fortran_order': False, 'shape': (3, 6), }", 72,
     "dtype '<i4', expected float32 '<f4' or float64 '<f8'", NULL},
    {"float16", "{'descr': '<f2', 'fortran_order': False, 'shape': (3, 6), }", 36, "dtype '<f2'",
     NULL},
    {"uint8", "{'descr': '|u1', 'fortran_order': False, 'shape': (3, 6), }", 18, "dtype '|u1'",
     NULL},
    {"complex", "{'descr': '<c8', 'fortran_order': False, 'shape': (3, 6), }", 144, "dtype '<c8'",
     NULL},
    {"native order", "{'descr': '=f4', 'fortran_order': False, 'shape': (3, 6), }", 72,
     "dtype '=f4'", NULL},
    {"long double", "{'descr': '<f16', 'fortran_order': False, 'shape': (3, 6), }", 288,
     "dtype '<f16'", NULL},
    {"big-endian f4", "{'descr': '>f4', 'fortran_order': False, 'shape': (3, 6), }", 72,
     "big-endian dtype '>f4'", "little-endian"},
    {"big-endian f8", "{'descr': '>f8', 'fortran_order': False, 'shape': (3, 6), }", 144,
     "big-endian", "'>f8'"},
    {"structured",
     "{'descr': [('x', '<f4'), ('y', '<f4')], 'fortran_order': False, 'shape': (3,), }", 24,
     "structured", "dtype"},
    {"descr int", "{'descr': 4, 'fortran_order': False, 'shape': (3, 6), }", 72, "dtype 4", NULL},
    /* order */
    {"fortran", "{'descr': '<f4', 'fortran_order': True, 'shape': (3, 6), }", 72,
     "fortran_order is True", "expected False"},
    {"fortran None", "{'descr': '<f4', 'fortran_order': None, 'shape': (3, 6), }", 72,
     "fortran_order is None", NULL},
    {"fortran int", "{'descr': '<f4', 'fortran_order': 0, 'shape': (3, 6), }", 72,
     "fortran_order is 0", NULL},
    /* shape */
    {"3 columns", "{'descr': '<f4', 'fortran_order': False, 'shape': (10, 3), }", 120,
     "shape (10, 3), expected (N, 6)", NULL},
    {"transposed", "{'descr': '<f4', 'fortran_order': False, 'shape': (6, 3), }", 72,
     "shape (6, 3), expected (N, 6)", NULL},
    {"1-d", "{'descr': '<f4', 'fortran_order': False, 'shape': (18,), }", 72,
     "shape (18,), expected (N, 6)", NULL},
    {"3-d", "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 6), }", 72,
     "shape (1, 3, 6), expected (N, 6)", NULL},
    {"scalar", "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 4,
     "shape (), expected (N, 6)", NULL},
    {"9-d", "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1,6), }", 24,
     "shape (1, 1, 1, 1, 1, 1, 1, 1, ...)", NULL},
    {"list", "{'descr': '<f4', 'fortran_order': False, 'shape': [3, 6], }", 72,
     "shape [3, 6] is not a tuple of integers", NULL},
    {"int", "{'descr': '<f4', 'fortran_order': False, 'shape': 18, }", 72,
     "shape 18 is not a tuple", NULL},
    {"parenthesised int", "{'descr': '<f4', 'fortran_order': False, 'shape': (18), }", 72,
     "shape (18) is not a tuple", NULL},
    {"string dim", "{'descr': '<f4', 'fortran_order': False, 'shape': ('3', 6), }", 72,
     "not a tuple of integers", NULL},
    {"negative rows", "{'descr': '<f4', 'fortran_order': False, 'shape': (-3, 6), }", 72,
     "shape (-3, 6), expected (N, 6)", NULL},
    {"negative cols", "{'descr': '<f4', 'fortran_order': False, 'shape': (3, -6), }", 72,
     "shape (3, -6), expected", NULL},
    {"huge cols", "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 18446744073709551622), }",
     72, "expected (N, 6)", NULL},
    {"no rows", "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 6), }", 0,
     "shape (0, 6) has no rows", "N >= 1"},
    {"minus zero rows", "{'descr': '<f4', 'fortran_order': False, 'shape': (-0, 6), }", 0,
     "no rows", NULL},
    /* sizes */
    {"overflow f4", "{'descr': '<f4', 'fortran_order': False, 'shape': (768614336404564651, 6), }",
     72, "too large", "overflows"},
    {"overflow f8",
     "{'descr': '<f8', 'fortran_order': False, 'shape': (18446744073709551615, 6), }", 72,
     "too large", "18446744073709551615"},
    {"beyond 64 bits",
     "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999, 6), }", 72,
     "too large", "99999999999999999999999"},
    {"huge N, small file",
     "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000000, 6), }", 72,
     "truncated data", "needs 24000000000000000 bytes, found 72"},
    {"truncated data", "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 6), }", 48,
     "truncated data", "needs 72 bytes, found 48"},
    {"one byte short", "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 6), }", 143,
     "truncated", "needs 144 bytes, found 143"},
    {"no data", "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 6), }", 0, "truncated",
     "found 0"},
    {"one trailing byte", "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 6), }", 73,
     "oversized", "1 trailing byte after"},
    {"extra row", "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 6), }", 96, "oversized",
     "24 trailing bytes"},
    {"f8 data read as f4", "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 6), }", 144,
     "trailing", NULL},
    /* keys */
    {"missing shape", "{'descr': '<f4', 'fortran_order': False}", 72, "missing key 'shape'", NULL},
    {"missing fortran_order", "{'descr': '<f4', 'shape': (3, 6)}", 72,
     "missing key 'fortran_order'", NULL},
    {"missing descr", "{'fortran_order': False, 'shape': (3, 6)}", 72, "missing key 'descr'", NULL},
    {"missing two", "{'shape': (3, 6)}", 72, "missing keys 'descr' 'fortran_order'", NULL},
    {"empty dict", "{}", 72, "missing keys", NULL},
    {"unknown key", "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 6), 'extra': 1}", 72,
     "unexpected key 'extra'", NULL},
    {"repeated key", "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3, 6)}",
     72, "repeated key 'descr'", NULL},
    {"key case", "{'Descr': '<f4', 'fortran_order': False, 'shape': (3, 6)}", 72,
     "unexpected key 'Descr'", NULL},
    /* syntax */
    {"no comma", "{'descr': '<f4' 'fortran_order': False, 'shape': (3, 6)}", 72, "bad header dict",
     "expected ',' or '}'"},
    {"no colon", "{'descr' '<f4', 'fortran_order': False, 'shape': (3, 6)}", 72, "bad header",
     "expected ':'"},
    {"not a dict", "['descr', '<f4']", 72, "bad header", "expected '{'"},
    {"text after", "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 6), } x", 72,
     "bad header", "text after"},
    {"two dicts", "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 6)}{}", 72, "bad header",
     NULL},
    {"unterminated string", "{'descr': '<f4", 72, "bad header", "string"},
    {"newline in string", "{'descr': '<f\n4', 'fortran_order': False, 'shape': (3, 6)}", 72,
     "bad header", "newline"},
    {"unclosed dict", "{'descr': '<f4', ", 72, "bad header", "unexpected end"},
    {"unclosed tuple", "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 6", 72, "bad header",
     NULL},
    {"float dim", "{'descr': '<f4', 'fortran_order': False, 'shape': (3.0, 6)}", 72, "bad header",
     "not an integer"},
    {"hex dim", "{'descr': '<f4', 'fortran_order': False, 'shape': (0x3, 6)}", 72, "bad header",
     NULL},
    {"lowercase false", "{'descr': '<f4', 'fortran_order': false, 'shape': (3, 6)}", 72,
     "bad header", "unexpected name"},
    {"key not a string", "{1: 2}", 72, "bad header", "not a string"},
    {"lone comma", "{'descr': '<f4', 'fortran_order': False, 'shape': (,)}", 72, "bad header",
     "unexpected character ','"},
    {"empty header", "", 72, "bad header", NULL},
    {"only spaces", "      ", 72, "bad header", NULL},
};

static void test_malformed_headers(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof BAD_HEADERS / sizeof BAD_HEADERS[0]; i++) {
        const bad_header *b = &BAD_HEADERS[i];
        g_case = b->label;
        for (int major = 1; major <= 3; major++) {
            image im = npy_image(major, 0, b->header, 64, NULL, b->payload_size);
            expect_input(&im, b->w1, b->w2);
            free(im.data);
        }
        /* unpadded too: the parser must not lean on the trailing '\n' */
        image im = npy_image(1, 0, b->header, 0, NULL, b->payload_size);
        expect_input(&im, b->w1, b->w2);
        free(im.data);
    }

    /* Nesting a recursive parser could overflow on. */
    char deep[1024] = "{'descr': ";
    for (int i = 0; i < 200; i++)
        strcat(deep, "(");
    strcat(deep, "}");
    g_case = "deep nesting";
    image im = npy_image(1, 0, deep, 64, NULL, 72);
    expect_input(&im, "bad header", "nested too deeply");
    free(im.data);
    /* ... and nesting within the limit is fine syntax (then a wrong dtype). */
    strcpy(deep,
           "{'descr': [[[[[[[[('x', '<f4')]]]]]]]], 'fortran_order': False, 'shape': (3, 6)}");
    im = npy_image(1, 0, deep, 64, NULL, 72);
    expect_input(&im, "structured", NULL);
    free(im.data);

    /* A NUL in the header. */
    g_case = "NUL";
    im = npy_image(1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 6)}", 64, NULL, 72);
    im.data[10 + 16] = '\0'; /* where a key should start */
    expect_input(&im, "bad header", "unexpected byte 0x00");
    free(im.data);
}

typedef struct bad_bytes {
    const char *label;
    const char *bytes;
    size_t size;
    const char *w1, *w2;
} bad_bytes;

static void test_malformed_preamble(void **state)
{
    (void)state;
    static const bad_bytes cases[] = {
        {"empty file", "", 0, "truncated", NULL},
        {"magic prefix", "\x93NUMP", 5, "truncated", NULL},
        {"no version minor", "\x93NUMPY\x01", 7, "truncated", NULL},
        {"half a length", "\x93NUMPY\x01\x00\x76", 9, "truncated", "expected at least 10"},
        {"v2 short length", "\x93NUMPY\x02\x00\x74\x00\x00", 11, "truncated",
         "expected at least 12"},
        {"v1 no header", "\x93NUMPY\x01\x00\x00\x00", 10, "bad header", NULL},
        {"text file", "hello, world\n", 13, "bad magic", "\\x93NUMPY"},
        {"one wrong byte", "\x93NUMPZ\x01\x00\x76\x00", 10, "bad magic", NULL},
        {"lowercase", "\x93numpy\x01\x00\x76\x00", 10, "bad magic", NULL},
        {"zip (npz)", "PK\x03\x04\x14\x00\x00\x00", 8, "bad magic", NULL},
        {"short garbage", "x", 1, "bad magic", NULL},
        {"version 4.0", "\x93NUMPY\x04\x00\x76\x00", 10, "unsupported .npy version 4.0",
         "expected 1.0, 2.0 or 3.0"},
        {"version 1.1", "\x93NUMPY\x01\x01\x76\x00", 10, "version 1.1", NULL},
        {"version 0.0", "\x93NUMPY\x00\x00\x76\x00", 10, "version 0.0", NULL},
        {"version 255.255", "\x93NUMPY\xff\xff", 8, "version 255.255", NULL},
        {"v1 header past end", "\x93NUMPY\x01\x00\x76\x00{'descr'", 18, "truncated header",
         "118 bytes declared, 8 present"},
        {"v2 header past end", "\x93NUMPY\x02\x00\xff\xff\xff\xff{}", 14, "truncated header",
         "4294967295 bytes declared"},
        {"v3 header past end", "\x93NUMPY\x03\x00\x00\x00\x00\x80", 12, "truncated header", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        g_case = cases[i].label;
        image im = raw_image(cases[i].bytes, cases[i].size);
        expect_input(&im, cases[i].w1, cases[i].w2);
        free(im.data);
    }

    /* A valid header with a bad magic or version still fails on the magic or version. */
    image im = raw_image(numpy_f4_v1, sizeof numpy_f4_v1);
    im.data[0] = 0x92;
    g_case = "magic byte 0";
    expect_input(&im, "bad magic", NULL);
    im.data[0] = 0x93;
    im.data[6] = 2; /* a 1.0 file read as 2.0: 4 bytes of length, '{\'' the high two */
    g_case = "1.0 read as 2.0";
    expect_input(&im, "truncated header", NULL);
    free(im.data);

    /* NULL data, and NULL outputs */
    g_case = "NULL data";
    im.data = NULL;
    im.size = 0;
    expect_input(&im, "truncated", NULL);
    shoal_error e = {0};
    size_t n;
    assert_int_equal(shoal_io_npy_parse(numpy_f4_v1, sizeof numpy_f4_v1, "x", NULL, &n, &e),
                     SHOAL_ERR_INPUT);
    /* a NULL error record is allowed everywhere */
    float *rows;
    assert_int_equal(shoal_io_npy_parse("nope", 4, NULL, &rows, &n, NULL), SHOAL_ERR_INPUT);
}

/* Every prefix of a valid file is an error (never a crash, never a read past the end:
 * each prefix is its own exact-size allocation, so ASan sees one). */
static void test_truncated_everywhere(void **state)
{
    (void)state;
    char dict[256];
    unsigned char *p4 = payload_f4(VALUES_2X6, 12), *p8 = payload_f8(VALUES_2X6, 12);
    image images[4];
    images[0] = raw_image(numpy_f4_v1, sizeof numpy_f4_v1);
    images[1] = raw_image(numpy_f8_v2, sizeof numpy_f8_v2);
    numpy_dict(dict, sizeof dict, "<f4", 2, 0);
    images[2] = npy_image(3, 0, dict, 16, p4, 48);
    images[3] = npy_image(1, 0, "{'descr':'<f8','fortran_order':False,'shape':(2,6)}", 0, p8, 96);
    for (int k = 0; k < 4; k++) {
        expect_rows(&images[k], 2, VALUES_2X6);
        for (size_t len = 0; len < images[k].size; len++) {
            char label[64];
            snprintf(label, sizeof label, "image %d cut to %zu bytes", k, len);
            g_case = label;
            image cut = raw_image(images[k].data, len);
            /* a cut inside the header is named as such (so a bounds check one byte too
             * lax, which the gcc suite would not see otherwise, fails here) */
            const unsigned char *b = images[k].data;
            size_t prefix = b[6] == 1 ? 10 : 12;
            size_t hlen = b[6] == 1 ? (size_t)(b[8] | b[9] << 8)
                                    : (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 |
                                          (size_t)b[11] << 24;
            expect_input(&cut, len >= prefix && len < prefix + hlen ? "truncated header" : NULL,
                         NULL);
            free(cut.data);
        }
        free(images[k].data);
    }
    free(p4);
    free(p8);
}

/* Random byte changes in preamble and header: only SHOAL_OK or SHOAL_ERR_INPUT, and the
 * sanitizers watching every access. */
static void test_header_mutations(void **state)
{
    (void)state;
    static const unsigned char interesting[] = {'{',  '}', '(', ')',  '[',  ']', ',', ':',
                                                '\'', '"', ' ', '\n', '0',  '6', '9', '-',
                                                'L',  'T', 0,   0x7f, 0x80, 0xff};
    int ok = 0;
    for (int iter = 0; iter < 30000; iter++) {
        image im = raw_image(numpy_f4_v1, sizeof numpy_f4_v1);
        int changes = 1 + (int)(rng_next() % 4);
        for (int c = 0; c < changes; c++) {
            size_t at = rng_next() % 128;
            uint32_t r = rng_next();
            im.data[at] =
                r & 1 ? interesting[(r >> 1) % sizeof interesting] : (unsigned char)(r >> 8);
        }
        if (iter % 8 == 0) /* sometimes also cut the data */
            im.size -= rng_next() % 49;
        float *rows = NULL;
        size_t n = 0;
        shoal_error e = {0};
        shoal_status s = shoal_io_npy_parse(im.data, im.size, "fuzz.npy", &rows, &n, &e);
        if (s == SHOAL_OK) {
            assert_true(n >= 1);
            assert_non_null(rows);
            ok++;
        } else {
            if (s != SHOAL_ERR_INPUT)
                fail_msg("status %d: %s", (int)s, e.message);
            assert_null(rows);
            assert_null(strchr(e.message, '\n'));
        }
        free(rows);
        free(im.data);
    }
    print_message("header mutations: %d of 30000 still valid\n", ok);
}

/* A valid N whose float32 copy cannot be allocated: SHOAL_ERR_NOMEM, not a crash. The data
 * must really be there (a short file fails as truncated before any allocation), so a child
 * builds a 96 MiB image and then lowers its address-space limit below what the copy needs. */
static int out_of_memory_child(void)
{
    size_t count = (size_t)4 << 20;
    char dict[256];
    numpy_dict(dict, sizeof dict, "<f4", count, 1);
    size_t size = 128 + count * 24;
    unsigned char *data = calloc(size, 1); /* untouched zero pages: no real memory */
    if (!data)
        return 10;
    image head = npy_image(1, 0, dict, 64, NULL, 0);
    if (head.size != 128)
        return 11;
    memcpy(data, head.data, 128);
    free(head.data);

    unsigned long vm_pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f || fscanf(f, "%lu", &vm_pages) != 1)
        return 12;
    fclose(f);
    rlim_t limit = (rlim_t)vm_pages * (rlim_t)sysconf(_SC_PAGESIZE) + ((rlim_t)32 << 20);
    struct rlimit rl = {limit, limit};
    if (setrlimit(RLIMIT_AS, &rl) != 0)
        return 13;

    float *rows = NULL;
    size_t n = 0;
    shoal_error e = {0};
    shoal_status s = shoal_io_npy_parse(data, size, "huge.npy", &rows, &n, &e);
    if (s != SHOAL_ERR_NOMEM || rows || n || !strstr(e.message, "huge.npy: out of memory") ||
        !strstr(e.message, "cannot allocate 100663296 bytes for 4194304 rows")) {
        fprintf(stderr, "status %d: %s\n", (int)s, e.message);
        return 14;
    }
    return 0;
}

static void test_out_of_memory(void **state)
{
    (void)state;
    if (TEST_SANITIZER_SHADOW) {
        print_message("skip: out-of-memory case (RLIMIT_AS does not mix with ASan/TSan)\n");
        return;
    }
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(out_of_memory_child());
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

/* ---- the file reader --------------------------------------------------------------------- */

static void test_read_errors(void **state)
{
    (void)state;
    float sentinel;
    float *rows = &sentinel;
    size_t n = 7;
    shoal_error e = {0};
    const char *missing = path("no-such-file.npy");
    assert_int_equal(shoal_io_npy_read(missing, &rows, &n, &e), SHOAL_ERR_IO);
    assert_non_null(strstr(e.message, missing));
    assert_non_null(strstr(e.message, strerror(ENOENT)));
    assert_null(rows);
    assert_int_equal(n, 0);

    assert_int_equal(shoal_io_npy_read(g_dir, &rows, &n, &e), SHOAL_ERR_IO);
    assert_non_null(strstr(e.message, g_dir));
    assert_non_null(strstr(e.message, strerror(EISDIR)));

    /* A bad file through the reader: the message names the path. */
    const char *text = path("text.npy");
    write_all(text, "a,b,c\n1,2,3\n", 12);
    assert_int_equal(shoal_io_npy_read(text, &rows, &n, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, text));
    assert_non_null(strstr(e.message, "bad magic"));

    const char *empty = path("empty.npy");
    write_all(empty, "", 0);
    assert_int_equal(shoal_io_npy_read(empty, &rows, &n, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "truncated"));

    /* A file NumPy wrote, read from disk, and one with a byte appended. */
    const char *good = path("numpy_f8_v2.npy");
    write_all(good, numpy_f8_v2, sizeof numpy_f8_v2);
    assert_int_equal(shoal_io_npy_read(good, &rows, &n, &e), SHOAL_OK);
    assert_int_equal(n, 2);
    assert_true(rows[9] == 1e30f);
    free(rows);
    unsigned char longer[sizeof numpy_f8_v2 + 1];
    memcpy(longer, numpy_f8_v2, sizeof numpy_f8_v2);
    longer[sizeof numpy_f8_v2] = 0;
    write_all(good, longer, sizeof longer);
    assert_int_equal(shoal_io_npy_read(good, &rows, &n, &e), SHOAL_ERR_INPUT);
    assert_non_null(strstr(e.message, "1 trailing byte after"));
    unlink(text);
    unlink(empty);
    unlink(good);
}

/* ---- finiteness -------------------------------------------------------------------------- */

static void test_check_finite(void **state)
{
    (void)state;
    float rows[4 * 6];
    for (int i = 0; i < 24; i++)
        rows[i] = (float)i - 11.5f;
    rows[5] = FLT_MAX;
    rows[6] = -0.0f;
    rows[7] = FLT_TRUE_MIN;
    shoal_error e = {0};
    assert_int_equal(shoal_state_check_finite(rows, 4, "s.npy", &e), SHOAL_OK);
    assert_int_equal(shoal_state_check_finite(rows, 0, "s.npy", &e), SHOAL_OK);

    rows[2 * 6 + 3] = NAN;
    rows[3 * 6 + 0] = INFINITY; /* later: the first one is reported */
    assert_int_equal(shoal_state_check_finite(rows, 4, "s.npy", &e), SHOAL_ERR_INPUT);
    assert_string_equal(e.message, "s.npy: row 2 column 3 (vx) is nan");
    rows[2 * 6 + 3] = -NAN;
    assert_int_equal(shoal_state_check_finite(rows, 4, "s.npy", &e), SHOAL_ERR_INPUT);
    assert_string_equal(e.message, "s.npy: row 2 column 3 (vx) is nan");
    rows[2 * 6 + 3] = 1.0f;
    assert_int_equal(shoal_state_check_finite(rows, 4, "s.npy", &e), SHOAL_ERR_INPUT);
    assert_string_equal(e.message, "s.npy: row 3 column 0 (px) is inf");
    rows[3 * 6 + 0] = 0.0f;
    rows[3 * 6 + 5] = -INFINITY;
    assert_int_equal(shoal_state_check_finite(rows, 4, "s.npy", &e), SHOAL_ERR_INPUT);
    assert_string_equal(e.message, "s.npy: row 3 column 5 (vz) is -inf");
    /* only the first `count` rows are looked at */
    assert_int_equal(shoal_state_check_finite(rows, 3, "s.npy", &e), SHOAL_OK);
    static const char *const names[6] = {"(px)", "(py)", "(pz)", "(vx)", "(vy)", "(vz)"};
    for (int c = 0; c < 6; c++) {
        float row[6] = {0, 0, 0, 0, 0, 0};
        row[c] = bits_float(0x7fa00001); /* a signalling NaN */
        assert_int_equal(shoal_state_check_finite(row, 1, NULL, &e), SHOAL_ERR_INPUT);
        assert_non_null(strstr(e.message, names[c]));
    }
}

/* ---- atomic output ----------------------------------------------------------------------- */

static const float ROW[6] = {1, 2, 3, 4, 5, 6};

static void test_atomic_missing_directory(void **state)
{
    (void)state;
    int before = dir_count(g_dir, NULL);
    const char *target = path("no-such-dir/out.npy");
    shoal_error e = {0};
    assert_int_equal(shoal_io_npy_write(target, ROW, 1, &e), SHOAL_ERR_IO);
    assert_non_null(strstr(e.message, target));
    assert_non_null(strstr(e.message, strerror(ENOENT)));
    assert_null(strchr(e.message, '\n'));
    struct stat st;
    assert_int_not_equal(stat(path("no-such-dir"), &st), 0);
    assert_int_equal(dir_count(g_dir, NULL), before);

    shoal_atomic_file af;
    assert_int_equal(shoal_io_atomic_open(&af, target, &e), SHOAL_ERR_IO);
    assert_null(af.file);
    shoal_io_atomic_abort(&af); /* harmless after a failed open */
}

static void test_atomic_abort_keeps_previous(void **state)
{
    (void)state;
    const char *target = path("keep.npy");
    shoal_error e = {0};
    assert_int_equal(shoal_io_npy_write(target, ROW, 1, &e), SHOAL_OK);
    size_t size_before, size_after;
    unsigned char *before = read_bytes(target, &size_before);

    shoal_atomic_file af;
    assert_int_equal(shoal_io_atomic_open(&af, target, &e), SHOAL_OK);
    assert_non_null(af.file);
    assert_string_equal(af.path, target);
    /* beside the target, hidden, named after it */
    char prefix[4096];
    snprintf(prefix, sizeof prefix, "%s/.keep.npy.tmp.", g_dir);
    assert_int_equal(strncmp(af.tmp_path, prefix, strlen(prefix)), 0);
    assert_int_equal(strlen(af.tmp_path), strlen(prefix) + 6);
    assert_int_equal(fputs("half-written garbage", af.file) >= 0, 1);
    assert_int_equal(fflush(af.file), 0);
    struct stat st;
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", af.tmp_path);
    assert_int_equal(stat(tmp, &st), 0);
    shoal_io_atomic_abort(&af);
    assert_int_not_equal(stat(tmp, &st), 0);
    assert_null(af.file);
    shoal_io_atomic_abort(&af); /* twice is harmless */

    unsigned char *after = read_bytes(target, &size_after);
    assert_int_equal(size_after, size_before);
    assert_memory_equal(after, before, size_before);
    assert_int_equal(dir_count(g_dir, ".tmp."), 0);
    free(before);
    free(after);

    /* A target that is a directory is refused before anything is written: the directory
     * untouched and no temporary left. */
    const char *dir_target = path("a-directory");
    assert_int_equal(mkdir(dir_target, 0755), 0);
    assert_int_equal(shoal_io_npy_write(dir_target, ROW, 1, &e), SHOAL_ERR_IO);
    assert_non_null(strstr(e.message, dir_target));
    assert_non_null(strstr(e.message, "is a directory"));
    assert_int_equal(stat(dir_target, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(dir_count(g_dir, ".tmp."), 0);
    assert_int_equal(rmdir(dir_target), 0);

    /* Nothing to write: refused before any file exists. */
    const char *none = path("none.npy");
    assert_int_equal(shoal_io_npy_write(none, ROW, 0, &e), SHOAL_ERR_INPUT);
    assert_int_equal(shoal_io_npy_write(none, NULL, 3, &e), SHOAL_ERR_INPUT);
    assert_int_not_equal(stat(none, &st), 0);

    /* Not a file name. */
    assert_int_equal(shoal_io_npy_write(path(""), ROW, 1, &e), SHOAL_ERR_IO);
    assert_non_null(strstr(e.message, "not a file name"));
    assert_int_equal(shoal_io_npy_write("", ROW, 1, &e), SHOAL_ERR_IO);
    assert_int_equal(dir_count(g_dir, ".tmp."), 0);
    unlink(target);
}

static void test_atomic_success_leaves_no_temporary(void **state)
{
    (void)state;
    shoal_error e = {0};
    int before = dir_count(g_dir, NULL);
    const char *target = path("fresh.npy");
    mode_t old_mask = umask(022);
    assert_int_equal(shoal_io_npy_write(target, ROW, 1, &e), SHOAL_OK);
    struct stat st;
    assert_int_equal(stat(target, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0644); /* as fopen would make it, not mkstemp's 0600 */

    /* Overwrite: the new contents, still one file, no temporaries; an existing file keeps
     * its mode whatever the umask, as fopen(path, "w") would leave it. */
    float two[12] = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0, -1, -2};
    umask(077);
    assert_int_equal(shoal_io_npy_write(target, two, 2, &e), SHOAL_OK);
    umask(old_mask);
    assert_int_equal(stat(target, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0644);
    float *rows;
    size_t n;
    assert_int_equal(shoal_io_npy_read(target, &rows, &n, &e), SHOAL_OK);
    assert_int_equal(n, 2);
    assert_memory_equal(rows, two, sizeof two);
    free(rows);
    assert_int_equal(dir_count(g_dir, NULL), before + 1);
    assert_int_equal(dir_count(g_dir, ".tmp."), 0);

    /* The atomic writer on its own. */
    shoal_atomic_file af;
    const char *text = path("hello.txt");
    assert_int_equal(shoal_io_atomic_open(&af, text, &e), SHOAL_OK);
    assert_true(fputs("hello\n", af.file) >= 0);
    assert_int_equal(shoal_io_atomic_commit(&af, &e), SHOAL_OK);
    assert_null(af.file);
    shoal_io_atomic_abort(&af); /* after a commit: nothing to do, the file stays */
    size_t size;
    unsigned char *data = read_bytes(text, &size);
    assert_int_equal(size, 6);
    assert_memory_equal(data, "hello\n", 6);
    free(data);
    assert_int_equal(shoal_io_atomic_commit(&af, &e), SHOAL_ERR_IO); /* nothing open */
    assert_int_equal(dir_count(g_dir, ".tmp."), 0);

    /* A relative path (no directory part) goes to the current directory. */
    char cwd[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(g_dir), 0);
    assert_int_equal(shoal_io_npy_write("relative.npy", ROW, 1, &e), SHOAL_OK);
    assert_int_equal(chdir(cwd), 0);
    assert_int_equal(stat(path("relative.npy"), &st), 0);

    /* A name near NAME_MAX still gets a temporary (its name is shortened). */
    char name[256];
    memset(name, 'a', 250);
    memcpy(name + 250, ".npy", 5);
    assert_int_equal(shoal_io_npy_write(path(name), ROW, 1, &e), SHOAL_OK);
    assert_int_equal(stat(path(name), &st), 0);
    assert_int_equal(dir_count(g_dir, ".tmp."), 0);

    unlink(target);
    unlink(text);
    unlink(path("relative.npy"));
    unlink(path(name));
}

/* ---- NumPy itself, when a python3 here has it ---------------------------------------------- */

static const char *const PYTHONS[] = {"python3", "/usr/bin/python3"};

static int python_has_numpy(const char *python)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s -c 'import numpy' >/dev/null 2>&1", python);
    int rc = system(cmd);
    return rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 0;
}

/* Run a python script; its stdout (at most `size` - 1 bytes) into `out`. Returns the exit
 * status. */
static int python_run(const char *python, const char *script, const char *args, char *out,
                      size_t size)
{
    char *cmd = malloc(16384);
    assert_non_null(cmd);
    snprintf(cmd, 16384, "%s -c '%s' %s", python, script, args);
    FILE *p = popen(cmd, "r");
    free(cmd);
    assert_non_null(p);
    size_t n = 0, got;
    while (n + 1 < size && (got = fread(out + n, 1, size - 1 - n, p)) > 0)
        n += got;
    out[n] = '\0';
    int rc = pclose(p);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static void numpy_reads_ours(const char *python)
{
    size_t count = 257;
    float *rows = malloc(count * 6 * sizeof *rows);
    assert_non_null(rows);
    for (size_t i = 0; i < count * 6; i++)
        rows[i] = bits_float(rng_next());
    rows[0] = -0.0f;
    rows[1] = FLT_TRUE_MIN;
    shoal_error e = {0};
    const char *file = path("for_numpy.npy");
    assert_int_equal(shoal_io_npy_write(file, rows, count, &e), SHOAL_OK);

    const char *script =
        "import sys, numpy as np\n"
        "a = np.load(sys.argv[1])\n"
        "assert a.dtype == np.dtype(\"<f4\"), a.dtype\n"
        "assert a.shape == (int(sys.argv[2]), 6), a.shape\n"
        "assert a.flags[\"C_CONTIGUOUS\"]\n"
        "sys.stdout.write(\" \".join(\"%08x\" % v for v in a.view(\"<u4\").ravel().tolist()))\n";
    char args[4200];
    snprintf(args, sizeof args, "%s %zu", file, count);
    size_t size = count * 6 * 9 + 64;
    char *out = malloc(size);
    assert_non_null(out);
    int rc = python_run(python, script, args, out, size);
    if (rc != 0)
        fail_msg("%s could not load our file (exit %d)", python, rc);
    const char *s = out;
    for (size_t i = 0; i < count * 6; i++) {
        char *end;
        unsigned long v = strtoul(s, &end, 16);
        if (end == s)
            fail_msg("%s: value %zu missing from numpy's output", python, i);
        if ((uint32_t)v != float_bits(rows[i]))
            fail_msg("%s: value %zu is %08lx in numpy, %08x written", python, i, v,
                     float_bits(rows[i]));
        s = end;
    }
    free(out);
    free(rows);
    unlink(file);
}

static void we_read_numpys(const char *python)
{
    const size_t count = 1000;
    const char *script = "import sys, numpy as np\n"
                         "d, n = sys.argv[1], int(sys.argv[2])\n"
                         "a = np.arange(n * 6, dtype=np.float64).reshape(n, 6) * 0.37 - 5.0\n"
                         "np.save(d + \"/np_f4.npy\", a.astype(\"<f4\"))\n"
                         "np.save(d + \"/np_f8.npy\", a)\n"
                         "f = open(d + \"/np_f4_v2.npy\", \"wb\")\n"
                         "np.lib.format.write_array(f, a.astype(\"<f4\"), version=(2, 0))\n"
                         "f.close()\n"
                         "f = open(d + \"/np_f8_v3.npy\", \"wb\")\n"
                         "np.lib.format.write_array(f, a, version=(3, 0))\n"
                         "f.close()\n"
                         "np.save(d + \"/np_fortran.npy\", np.asfortranarray(a.astype(\"<f4\")))\n"
                         "np.save(d + \"/np_i4.npy\", a.astype(\"<i4\"))\n"
                         "np.save(d + \"/np_big.npy\", a.astype(\">f4\"))\n"
                         "np.save(d + \"/np_3col.npy\", a.reshape(-1, 3).astype(\"<f4\"))\n"
                         "np.save(d + \"/np_empty.npy\", np.zeros((0, 6), dtype=\"<f4\"))\n";
    char args[4200], out[256];
    snprintf(args, sizeof args, "%s %zu", g_dir, count);
    int rc = python_run(python, script, args, out, sizeof out);
    if (rc != 0)
        fail_msg("%s could not write its files (exit %d)", python, rc);

    static const char *const good[] = {"np_f4.npy", "np_f8.npy", "np_f4_v2.npy", "np_f8_v3.npy"};
    for (size_t k = 0; k < 4; k++) {
        float *rows;
        size_t n;
        shoal_error e = {0};
        if (shoal_io_npy_read(path(good[k]), &rows, &n, &e) != SHOAL_OK)
            fail_msg("%s: %s", good[k], e.message);
        assert_int_equal(n, count);
        for (size_t i = 0; i < count * 6; i++) {
            float want = (float)((double)i * 0.37 - 5.0);
            if (float_bits(rows[i]) != float_bits(want))
                fail_msg("%s value %zu: %.9g, expected %.9g", good[k], i, (double)rows[i],
                         (double)want);
        }
        free(rows);
        unlink(path(good[k]));
    }
    static const struct {
        const char *name, *word;
    } bad[] = {
        {"np_fortran.npy", "fortran_order is True"},
        {"np_i4.npy", "dtype '<i4'"},
        {"np_big.npy", "big-endian"},
        {"np_3col.npy", "shape (2000, 3), expected (N, 6)"},
        {"np_empty.npy", "no rows"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        float *rows;
        size_t n;
        shoal_error e = {0};
        assert_int_equal(shoal_io_npy_read(path(bad[k].name), &rows, &n, &e), SHOAL_ERR_INPUT);
        if (!strstr(e.message, bad[k].word))
            fail_msg("%s: '%s' lacks '%s'", bad[k].name, e.message, bad[k].word);
        unlink(path(bad[k].name));
    }
}

static void test_numpy_interop(void **state)
{
    (void)state;
    int ran = 0;
    for (size_t k = 0; k < sizeof PYTHONS / sizeof PYTHONS[0]; k++) {
        if (!python_has_numpy(PYTHONS[k])) {
            /* the tests run Debian's /usr/bin/python3, which has numpy (tools/deps.sh):
             * without it this part cannot be checked */
            if (strcmp(PYTHONS[k], "/usr/bin/python3") == 0)
                test_skip_part("%s has no numpy", PYTHONS[k]);
            else
                print_message("note: %s has no numpy\n", PYTHONS[k]);
            continue;
        }
        numpy_reads_ours(PYTHONS[k]);
        we_read_numpys(PYTHONS[k]);
        print_message("numpy via %s: reads our file, we read its files\n", PYTHONS[k]);
        ran++;
    }
    if (!ran)
        test_skip_part("no python3 with numpy (the captured numpy images still ran)");
}

/* ---- harness ----------------------------------------------------------------------------- */

static int group_setup(void **state)
{
    (void)state;
    return cli_setup("npy");
}

static int group_teardown(void **state)
{
    (void)state;
    return cli_teardown();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_special_values),
        cmocka_unit_test(test_roundtrip_large),
        cmocka_unit_test(test_numpy_images),
        cmocka_unit_test(test_header_variants),
        cmocka_unit_test(test_float64_conversion),
        cmocka_unit_test(test_malformed_headers),
        cmocka_unit_test(test_malformed_preamble),
        cmocka_unit_test(test_truncated_everywhere),
        cmocka_unit_test(test_header_mutations),
        cmocka_unit_test(test_out_of_memory),
        cmocka_unit_test(test_read_errors),
        cmocka_unit_test(test_check_finite),
        cmocka_unit_test(test_atomic_missing_directory),
        cmocka_unit_test(test_atomic_abort_keeps_previous),
        cmocka_unit_test(test_atomic_success_leaves_no_temporary),
        cmocka_unit_test(test_numpy_interop),
    };
    return test_exit(cmocka_run_group_tests(tests, group_setup, group_teardown));
}
