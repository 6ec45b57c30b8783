/* SPDX-License-Identifier: MIT */
/* Noise keyed by meaning: Philox4x32-10 (Random123) on the counter (boid row, draw, step) and
 * the key seed, so a draw is a pure function of (seed, step, row, draw) and gives the same
 * bits on every thread count, ISA, the GPU, any MPI split and the float64 reference
 * (docs/NOISE.md). Owns no state. Compiles as C (CPU kernels, the reference) and as CUDA
 * device code (every function is __host__ __device__ under nvcc, built with -fmad=false).
 *
 * Exactness: every distribution is computed from the 32-bit words with IEEE single-precision
 * +, -, *, /, sqrt and exact operations (integer bit work, conversions of integers that fit
 * 24 bits, copysign) in a fixed order, with no libm call but sqrtf (correctly rounded
 * everywhere): log, sin and cos are fixed polynomials (Cephes' single-precision
 * coefficients), so their bits do not depend on a platform's libm or on the GPU's
 * intrinsics. Compile with -ffp-contract=off (the project does; nvcc: -fmad=false). The
 * float64 reference takes these float values as they are (each converts to double exactly). */
#ifndef SHOAL_CORE_NOISE_H
#define SHOAL_CORE_NOISE_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include <Random123/philox.h>

#if defined(__CUDACC__)
#define NOISE_FN static __host__ __device__ __forceinline__
#else
#define NOISE_FN static inline
#endif
/* IEEE square root and division whatever the compiler's flags (on the device the
 * round-to-nearest intrinsics, as core/simd.h's scalar branch) */
#if defined(__CUDA_ARCH__)
#define NOISE_SQRT(a) __fsqrt_rn(a)
#define NOISE_DIV(a, b) __fdiv_rn(a, b)
#else
#define NOISE_SQRT(a) sqrtf(a)
#define NOISE_DIV(a, b) ((a) / (b))
#endif

/** The key of one step's draws: the seed (Philox's 64-bit key) and the step (the high half
 *  of the counter). Make one per step (noise_key_make) and pass it by value. */
typedef struct noise_key {
    uint32_t seed_lo, seed_hi; /* Philox key words k0, k1 */
    uint32_t step_lo, step_hi; /* counter words c2, c3 */
} noise_key;

/** 128 random bits: the Philox block of one draw. */
typedef struct noise_bits {
    uint32_t w[4];
} noise_bits;

/** The key of step `step` (the sim's steps done before this one, from 0) under `seed`. */
NOISE_FN noise_key noise_key_make(uint64_t seed, uint64_t step)
{
    noise_key k;
    k.seed_lo = (uint32_t)seed;
    k.seed_hi = (uint32_t)(seed >> 32);
    k.step_lo = (uint32_t)step;
    k.step_hi = (uint32_t)(step >> 32);
    return k;
}

/** The block of draw `draw` of the boid of input row `row`: Philox4x32-10 with counter
 *  (row, draw, step_lo, step_hi) and key (seed_lo, seed_hi). A boid's draws depend on its
 *  row, never on where it sits in memory, which thread or lane computes it or which rank
 *  owns it. A rule that needs several blocks in one step uses draw 0, 1, 2, ... (each its
 *  own 128 bits); draws 0x80000000 and up are kept for the world (none used yet). */
NOISE_FN noise_bits noise_draw(noise_key k, uint32_t row, uint32_t draw)
{
    philox4x32_ctr_t c = {{row, draw, k.step_lo, k.step_hi}};
    philox4x32_key_t key = {{k.seed_lo, k.seed_hi}};
    philox4x32_ctr_t r = philox4x32_R(10, c, key);
    noise_bits b;
    b.w[0] = r.v[0];
    b.w[1] = r.v[1];
    b.w[2] = r.v[2];
    b.w[3] = r.v[3];
    return b;
}

/** Uniform in [0, 1): the top 24 bits of w times 2^-24 (exact: every value k 2^-24). */
NOISE_FN float noise_u01(uint32_t w) { return (float)(w >> 8) * (1.0f / 16777216.0f); }

/** Uniform in (0, 1]: (top 24 bits + 1) 2^-24, exact; never 0 (the logarithm's argument). */
NOISE_FN float noise_u01_open0(uint32_t w) { return (float)((w >> 8) + 1u) * (1.0f / 16777216.0f); }

/** Uniform on [-a, a], symmetric to the bit: (2k + 1 - 2^23) 2^-23 a for the top 23 bits k,
 *  so x and -x are equally likely and the mean is exactly 0 (the odd integer has at most
 *  24 bits: exact; the product with a is the one rounding). */
NOISE_FN float noise_sym(uint32_t w, float a)
{
    int32_t k = (int32_t)((w >> 9) << 1) + 1 - 8388608;
    return (float)k * (1.0f / 8388608.0f) * a;
}

/* ---- the fixed transcendentals (plain float operations in a fixed order) ---- */

NOISE_FN uint32_t noise_float_bits(float x)
{
#if defined(__CUDA_ARCH__)
    return __float_as_uint(x);
#else
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
#endif
}

NOISE_FN float noise_bits_float(uint32_t u)
{
#if defined(__CUDA_ARCH__)
    return __uint_as_float(u);
#else
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
#endif
}

/** ln x for a finite x > 0 (normal): x = m 2^e by bit work (exact), m in [sqrt(1/2),
 *  sqrt(2)), then Cephes logf's polynomial in m - 1 (relative error about 1e-7). Its bits
 *  are the same on every machine that rounds IEEE single to nearest. */
NOISE_FN float noise_logf(float x)
{
    uint32_t u = noise_float_bits(x);
    int32_t e = (int32_t)((u >> 23) & 0xffu) - 126; /* x = m 2^e, m in [0.5, 1) */
    float m = noise_bits_float((u & 0x807fffffu) | 0x3f000000u);
    if (m < 0.707106781186547524f) {
        e -= 1;
        m = m + m - 1.0f;
    } else {
        m = m - 1.0f;
    }
    float z = m * m;
    float y = 7.0376836292e-2f;
    y = y * m - 1.1514610310e-1f;
    y = y * m + 1.1676998740e-1f;
    y = y * m - 1.2420140846e-1f;
    y = y * m + 1.4249322787e-1f;
    y = y * m - 1.6668057665e-1f;
    y = y * m + 2.0000714765e-1f;
    y = y * m - 2.4999993993e-1f;
    y = y * m + 3.3333331174e-1f;
    y = y * m * z;
    float fe = (float)e;
    y = y + -2.12194440e-4f * fe;
    y = y + -0.5f * z;
    float r = m + y;
    return r + 0.693359375f * fe;
}

/* sin and cos of |t| <= pi/4 (Cephes sinf/cosf polynomials, about 1 ulp). */
NOISE_FN void noise_sincos_small(float t, float *s, float *c)
{
    float z = t * t;
    float ps = -1.9515295891e-4f;
    ps = ps * z + 8.3321608736e-3f;
    ps = ps * z - 1.6666654611e-1f;
    *s = ps * z * t + t;
    float pc = 2.443315711809948e-5f;
    pc = pc * z - 1.388731625493765e-3f;
    pc = pc * z + 4.166664568298827e-2f;
    *c = pc * z * z - 0.5f * z + 1.0f;
}

/* (cos, sin) of t + q pi/2: the quadrant turns the pair exactly (swaps and signs). */
NOISE_FN void noise_quadrant(float s0, float c0, uint32_t q, float *s, float *c)
{
    switch (q & 3u) {
    case 0:
        *s = s0;
        *c = c0;
        break;
    case 1:
        *s = c0;
        *c = -s0;
        break;
    case 2:
        *s = -s0;
        *c = -c0;
        break;
    default:
        *s = -c0;
        *c = s0;
        break;
    }
}

/** sin and cos of the angle 2 pi w / 2^32 (a uniform angle from one word). The reduction is
 *  exact, in integers: w + 2^29 = q 2^30 + r gives the quadrant q and the offset
 *  t = (r - 2^29) pi / 2^31 in [-pi/4, pi/4) (its one rounding: the 30-bit integer to float,
 *  then one product). */
NOISE_FN void noise_sincos_turn(uint32_t w, float *s, float *c)
{
    uint32_t v = w + 0x20000000u;
    uint32_t q = v >> 30;
    int32_t r = (int32_t)(v & 0x3fffffffu) - 0x20000000;
    float t = (float)r * 1.46291807926715968e-9f; /* pi / 2^31 */
    float s0, c0;
    noise_sincos_small(t, &s0, &c0);
    noise_quadrant(s0, c0, q, s, c);
}

/** sin and cos of a float angle x, |x| <= 8192 (beyond, the reduction loses the angle;
 *  NaN gives NaN): q = round(x 2/pi) (exact integer), t = x - q pi/2 with pi/2 in three
 *  parts (Cody and Waite; Cephes' DP1..DP3 doubled, each product exact for |q| < 2^13),
 *  then the polynomials and the quadrant. */
NOISE_FN void noise_sincos(float x, float *s, float *c)
{
    float qf = x * 0.636619772367581343f;
    if (!(qf > -8192.0f && qf < 8192.0f))
        qf = 0.0f; /* NaN, or beyond the range: no reduction (and no undefined conversion) */
    qf = qf >= 0.0f ? (float)(int32_t)(qf + 0.5f) : -(float)(int32_t)(0.5f - qf);
    int32_t q = (int32_t)qf;
    float t = x - qf * 1.5703125f;
    t = t - qf * 4.837512969970703125e-4f;
    t = t - qf * 7.54978995489188216e-8f;
    float s0, c0;
    noise_sincos_small(t, &s0, &c0);
    noise_quadrant(s0, c0, (uint32_t)q, s, c);
}

/* ---- distributions ---- */

/** Two independent standard normals from two words, by Box and Muller:
 *  r = sqrt(-2 ln u), u = noise_u01_open0(w0) in (0, 1]; angle 2 pi w1 / 2^32; out r cos,
 *  r sin. Box-Muller rather than an inverse CDF or the polar method: it needs one
 *  logarithm per pair and no rejection (a fixed count of words per draw, so SIMD lanes and
 *  GPU threads stay in step), and its angle comes from the word's bits with an exact
 *  reduction. Tails: |z| <= sqrt(2 ln 2^24) = 5.77 (P(|z| > 5.77) = 8e-9 for a true normal). */
NOISE_FN void noise_gauss2(uint32_t w0, uint32_t w1, float out[2])
{
    float u = noise_u01_open0(w0);
    float r = NOISE_SQRT(-2.0f * noise_logf(u));
    float s, c;
    noise_sincos_turn(w1, &s, &c);
    out[0] = r * c;
    out[1] = r * s;
}

/** Four standard normals from one draw's block: (w0, w1) and (w2, w3) by noise_gauss2. */
NOISE_FN void noise_gauss4(noise_bits b, float out[4])
{
    noise_gauss2(b.w[0], b.w[1], out);
    noise_gauss2(b.w[2], b.w[3], out + 2);
}

/** An orthonormal pair (e1, e2) perpendicular to the unit vector n (Duff et al. 2017,
 *  "Building an orthonormal basis, revisited": no branch on a threshold, exact sign). */
NOISE_FN void noise_basis(const float n[3], float e1[3], float e2[3])
{
    float sign = copysignf(1.0f, n[2]);
    float a = NOISE_DIV(-1.0f, sign + n[2]);
    float b = n[0] * n[1] * a;
    e1[0] = 1.0f + sign * n[0] * n[0] * a;
    e1[1] = sign * b;
    e1[2] = -sign * n[0];
    e2[0] = b;
    e2[1] = sign + n[1] * n[1] * a;
    e2[2] = -n[1];
}

/* c h + s (cos(phi) e1 + sin(phi) e2) */
NOISE_FN void noise_tilt(const float h[3], float c, float s, float cp, float sp, float out[3])
{
    float e1[3], e2[3];
    noise_basis(h, e1, e2);
    for (int i = 0; i < 3; i++)
        out[i] = c * h[i] + s * (cp * e1[i] + sp * e2[i]);
}

/** A direction uniform on the spherical cap of unit vectors within angle alpha of the unit
 *  vector h (Vicsek's 3D noise: alpha = eta/2), given cos_alpha = cos(alpha) (compute it
 *  once per run on the host, noise_cap_cos, and pass the float in the step's constants:
 *  then every backend uses the same bits). Words: w0 picks cos(theta) uniform in
 *  [cos_alpha, 1] (Archimedes: uniform height is uniform area), w1 the azimuth.
 *  cos_alpha = -1: the whole sphere. The result is unit up to rounding. */
NOISE_FN void noise_cap(noise_bits b, const float h[3], float cos_alpha, float out[3])
{
    float one_minus = 1.0f - cos_alpha;      /* in [0, 2] */
    float d = noise_u01(b.w[0]) * one_minus; /* 1 - cos(theta), in [0, 1 - cos_alpha) */
    float c = 1.0f - d;
    float s = NOISE_SQRT(d * (2.0f - d)); /* sin(theta), accurate near theta = 0 */
    float sp, cp;
    noise_sincos_turn(b.w[1], &sp, &cp);
    noise_tilt(h, c, s, cp, sp, out);
}

/** cos(alpha) for noise_cap, on the host (libm's double cos, rounded to float): the one
 *  place a library function is used, so it is called once and its float passed to every
 *  backend, never evaluated per boid on the device. */
static inline float noise_cap_cos(double alpha) { return (float)cos(alpha); }

/** h turned by a wrapped-normal angle (Couzin et al. 2002's noise on the sphere): the
 *  angle theta = sigma z for a standard normal z (from w0, w1), about an axis uniform on the
 *  circle perpendicular to h (azimuth from w2): out = cos(theta) h + sin(theta) (cos(phi)
 *  e1 + sin(phi) e2). sin and cos are periodic, so the angle wraps onto the circle as the
 *  wrapped normal does. sigma in [0, 1000] (radians). */
NOISE_FN void noise_sphere_gauss(noise_bits b, const float h[3], float sigma, float out[3])
{
    float z[2];
    noise_gauss2(b.w[0], b.w[1], z);
    float st, ct, sp, cp;
    noise_sincos(sigma * z[0], &st, &ct);
    noise_sincos_turn(b.w[2], &sp, &cp);
    noise_tilt(h, ct, st, cp, sp, out);
}

/** The plane's version (2D worlds): (hx, hy) turned by the angle theta: out = R(theta) h. */
NOISE_FN void noise_turn2(const float h[2], float theta, float out[2])
{
    float s, c;
    noise_sincos(theta, &s, &c);
    out[0] = c * h[0] - s * h[1];
    out[1] = s * h[0] + c * h[1];
}

/* ---- the lanes of a SIMD group ---- */

/** Draw `draw` of n boids at once (out[i] = the block of rows[i]): the call a wide kernel
 *  makes for its lanes (rows = the group's input rows; then vf_load_n what it derived).
 *  Each lane is the scalar function of its row, so every ISA's lanes equal the scalar
 *  kernel's bits by construction; Philox is a few dozen integer operations per boid and
 *  step, small beside one neighbour walk, so no wide Philox is written. */
NOISE_FN void noise_draw_lanes(noise_key k, const uint32_t *rows, int n, uint32_t draw,
                               noise_bits *out)
{
    for (int i = 0; i < n; i++)
        out[i] = noise_draw(k, rows[i], draw);
}

#endif
