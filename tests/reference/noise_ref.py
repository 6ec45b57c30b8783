# SPDX-License-Identifier: MIT
"""shoal's noise in NumPy: a transcription of the draw functions of src/core/noise.h (docs/NOISE.md),
vectorised over boids, giving the same float32 bits as the C header.

It exists so that a test can feed the float64 references (reference_models.py) exactly the
draws a shoal model makes: the C code draws block `draw` of row `row` at step `step` under
`seed`; `draw(seed, step, rows, d)` here gives the same four words, and the distributions
below turn them into the same float32 values (each a float32 ndarray). The transcription is
checked against Random123's published known answers and against test_noise's golden hash of
every distribution (test_reference.py), so it cannot drift from the header unnoticed.

Exactness: every float operation is done on float32 arrays with float32 constants, one IEEE
operation at a time in the header's order (NumPy does not contract a*b+c into an FMA), so each
value is the header's bit for bit. Integer work is done in uint32/uint64 with explicit masks.
"""
import numpy as np

F = np.float32
U32 = np.uint32
_MASK32 = np.uint64(0xFFFFFFFF)

# Philox4x32's multipliers and Weyl key increments (Salmon et al., SC'11; Random123's philox.h)
_M0 = np.uint64(0xD2511F53)
_M1 = np.uint64(0xCD9E8D57)
_W0 = np.uint64(0x9E3779B9)
_W1 = np.uint64(0xBB67AE85)


def _u32(x):
    return np.asarray(x, dtype=np.uint64) & _MASK32


def philox4x32_10(c0, c1, c2, c3, k0, k1):
    """Philox4x32 with 10 rounds on counter (c0..c3) and key (k0, k1), broadcast over arrays.
    Returns four uint32 arrays."""
    c0, c1, c2, c3 = (_u32(v) for v in (c0, c1, c2, c3))
    k0, k1 = _u32(k0), _u32(k1)
    c0, c1, c2, c3, k0, k1 = np.broadcast_arrays(c0, c1, c2, c3, k0, k1)
    c0, c1, c2, c3, k0, k1 = (np.array(v, dtype=np.uint64) for v in (c0, c1, c2, c3, k0, k1))
    for r in range(10):
        if r:
            k0 = (k0 + _W0) & _MASK32
            k1 = (k1 + _W1) & _MASK32
        p0 = _M0 * c0  # < 2^64: exact in uint64
        p1 = _M1 * c2
        hi0, lo0 = p0 >> np.uint64(32), p0 & _MASK32
        hi1, lo1 = p1 >> np.uint64(32), p1 & _MASK32
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
    return tuple(v.astype(U32) for v in (c0, c1, c2, c3))


def draw(seed, step, rows, d):
    """The block of draw `d` for each row of `rows` at `step` under `seed` (noise_draw with
    noise_key_make(seed, step)): a (len(rows), 4) uint32 array, column k = word w[k]."""
    seed, step = int(seed), int(step)
    rows = np.asarray(rows, dtype=np.uint64)
    w = philox4x32_10(rows, d, step & 0xFFFFFFFF, step >> 32, seed & 0xFFFFFFFF, seed >> 32)
    return np.stack(w, axis=-1)


# ---- uniforms ----


def u01(w):
    """noise_u01: (w >> 8) * 2^-24, in [0, 1)."""
    return (np.asarray(w, U32) >> U32(8)).astype(F) * F(1.0 / 16777216.0)


def u01_open0(w):
    """noise_u01_open0: ((w >> 8) + 1) * 2^-24, in (0, 1]."""
    return ((np.asarray(w, U32) >> U32(8)) + U32(1)).astype(F) * F(1.0 / 16777216.0)


def sym(w, a):
    """noise_sym: (2k + 1 - 2^23) 2^-23 a, k = the top 23 bits; uniform on [-a, a]."""
    k = (((np.asarray(w, U32) >> U32(9)) << U32(1)).astype(np.int64) + 1 - 8388608)
    return (k.astype(F) * F(1.0 / 8388608.0)) * F(a)


# ---- the fixed transcendentals ----


def logf(x):
    """noise_logf: ln x by Cephes logf's polynomial, float32 operations in the header's order."""
    x = np.asarray(x, F)
    u = x.view(U32)
    e = ((u >> U32(23)) & U32(0xFF)).astype(np.int32) - 126
    m = ((u & U32(0x807FFFFF)) | U32(0x3F000000)).view(F)
    small = m < F(0.707106781186547524)
    e = np.where(small, e - 1, e)
    m = np.where(small, (m + m) - F(1.0), m - F(1.0)).astype(F)
    z = m * m
    y = F(7.0376836292e-2)
    for c in (-1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
              -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1):
        y = y * m + F(c)
    y = (y * m) * z
    fe = e.astype(F)
    y = y + F(-2.12194440e-4) * fe
    y = y + F(-0.5) * z
    r = m + y
    return (r + F(0.693359375) * fe).astype(F)


def _sincos_small(t):
    t = np.asarray(t, F)
    z = t * t
    ps = F(-1.9515295891e-4)
    ps = ps * z + F(8.3321608736e-3)
    ps = ps * z - F(1.6666654611e-1)
    s = ((ps * z) * t) + t
    pc = F(2.443315711809948e-5)
    pc = pc * z - F(1.388731625493765e-3)
    pc = pc * z + F(4.166664568298827e-2)
    c = (((pc * z) * z) - F(0.5) * z) + F(1.0)
    return s.astype(F), c.astype(F)


def _quadrant(s0, c0, q):
    q = np.asarray(q, U32) & U32(3)
    s = np.select([q == 0, q == 1, q == 2], [s0, c0, -s0], -c0).astype(F)
    c = np.select([q == 0, q == 1, q == 2], [c0, -s0, -c0], s0).astype(F)
    return s, c


def sincos_turn(w):
    """noise_sincos_turn: (sin, cos) of 2 pi w / 2^32, the reduction exact in integers."""
    v = (np.asarray(w, U32).astype(np.uint64) + 0x20000000) & _MASK32
    q = (v >> np.uint64(30)).astype(U32)
    r = (v & np.uint64(0x3FFFFFFF)).astype(np.int64) - 0x20000000
    t = r.astype(F) * F(1.46291807926715968e-9)
    return _quadrant(*_sincos_small(t), q)


def sincos(x):
    """noise_sincos: (sin, cos) of a float32 angle |x| <= 8192 (Cody-Waite reduction)."""
    x = np.asarray(x, F)
    qf = x * F(0.636619772367581343)
    with np.errstate(invalid="ignore"):
        ok = (qf > F(-8192.0)) & (qf < F(8192.0))
    qf = np.where(ok, qf, F(0.0)).astype(F)
    pos = np.trunc(qf + F(0.5)).astype(F)
    neg = -np.trunc(F(0.5) - qf).astype(F)
    qf = np.where(qf >= F(0.0), pos, neg).astype(F)
    q = qf.astype(np.int32)
    t = x - qf * F(1.5703125)
    t = t - qf * F(4.837512969970703125e-4)
    t = t - qf * F(7.54978995489188216e-8)
    return _quadrant(*_sincos_small(t), q.view(U32))


# ---- distributions ----


def gauss2(w0, w1):
    """noise_gauss2: two standard normals by Box-Muller (r cos, r sin)."""
    u = u01_open0(w0)
    r = np.sqrt(F(-2.0) * logf(u)).astype(F)
    s, c = sincos_turn(w1)
    return (r * c).astype(F), (r * s).astype(F)


def gauss4(b):
    """noise_gauss4: four normals from one block b (..., 4): (w0, w1) then (w2, w3)."""
    b = np.asarray(b, U32)
    g0, g1 = gauss2(b[..., 0], b[..., 1])
    g2, g3 = gauss2(b[..., 2], b[..., 3])
    return np.stack([g0, g1, g2, g3], axis=-1)


def basis(n):
    """noise_basis: Duff et al.'s orthonormal pair (e1, e2) perpendicular to the unit n (..., 3),
    in float32 as the header computes it; basis64 below is the same formula in float64."""
    n = np.asarray(n, F)
    x, y, z = n[..., 0], n[..., 1], n[..., 2]
    sign = np.copysign(F(1.0), z).astype(F)
    a = (F(-1.0) / (sign + z)).astype(F)
    b = ((x * y) * a).astype(F)
    e1 = np.stack([F(1.0) + ((sign * x) * x) * a, sign * b, -sign * x], axis=-1).astype(F)
    e2 = np.stack([b, sign + (y * y) * a, -y], axis=-1).astype(F)
    return e1, e2


def basis64(n):
    """The same frame as basis(), in float64 (for the float64 references)."""
    n = np.asarray(n, np.float64)
    x, y, z = n[..., 0], n[..., 1], n[..., 2]
    sign = np.copysign(1.0, z)
    a = -1.0 / (sign + z)
    b = x * y * a
    e1 = np.stack([1.0 + sign * x * x * a, sign * b, -sign * x], axis=-1)
    e2 = np.stack([b, sign + y * y * a, -y], axis=-1)
    return e1, e2


def _tilt(h, c, s, cp, sp):
    h = np.asarray(h, F)
    e1, e2 = basis(h)
    c, s, cp, sp = (np.asarray(v, F)[..., None] for v in (c, s, cp, sp))
    return (c * h + s * (cp * e1 + sp * e2)).astype(F)


def cap_cos(alpha):
    """noise_cap_cos: cos(alpha) in double, rounded to float32 (computed once on the host)."""
    return F(np.cos(np.float64(alpha)))


def cap(b, h, cos_alpha):
    """noise_cap: a unit vector uniform on the cap within angle alpha of the unit h; b (..., 4)
    uint32 words (w0: height, w1: azimuth), h (..., 3), cos_alpha a float32."""
    b = np.asarray(b, U32)
    one_minus = F(1.0) - F(cos_alpha)
    d = u01(b[..., 0]) * one_minus
    c = F(1.0) - d
    s = np.sqrt(d * (F(2.0) - d)).astype(F)
    sp, cp = sincos_turn(b[..., 1])
    return _tilt(h, c, s, cp, sp)


def cap_parts(b, cos_alpha):
    """The cap draw's own numbers (float32): (c, s, cp, sp) = cos and sin of the polar angle,
    cos and sin of the azimuth; out = c h + s (cp e1 + sp e2) with (e1, e2) = basis(h)."""
    b = np.asarray(b, U32)
    d = u01(b[..., 0]) * (F(1.0) - F(cos_alpha))
    s = np.sqrt(d * (F(2.0) - d)).astype(F)
    sp, cp = sincos_turn(b[..., 1])
    return F(1.0) - d, s, cp, sp


def sphere_gauss(b, h, sigma):
    """noise_sphere_gauss: h turned by the wrapped-normal angle sigma z (z from w0, w1) about an
    axis at the azimuth of w2."""
    b = np.asarray(b, U32)
    ct, st, cp, sp = sphere_gauss_parts(b, sigma)
    return _tilt(h, ct, st, cp, sp)


def sphere_gauss_parts(b, sigma):
    """(cos theta, sin theta, cos phi, sin phi) of noise_sphere_gauss, float32."""
    b = np.asarray(b, U32)
    z0, _ = gauss2(b[..., 0], b[..., 1])
    st, ct = sincos(F(sigma) * z0)
    sp, cp = sincos_turn(b[..., 2])
    return ct, st, cp, sp


def turn2(h, theta):
    """noise_turn2: the plane's rotation R(theta) h, h (..., 2), theta float32."""
    h = np.asarray(h, F)
    s, c = sincos(theta)
    return np.stack([c * h[..., 0] - s * h[..., 1], s * h[..., 0] + c * h[..., 1]], axis=-1).astype(F)


# ---- test_noise's golden rows (tests/noise_isa.h: noise_isa_row) ----


def isa_rows(seed, step, rows, d=7):
    """The 14 floats per row that test_noise hashes: u01, sym(2.5), 4 normals, cap (alpha with
    cos 0.5), sphere_gauss (sigma 0.3), turn2 by sym(w3, 0.7); heading (0.6, -0.8, 0) for odd
    rows and (0.6, 0, 0.8) for even ones."""
    rows = np.asarray(rows, dtype=np.uint64)
    b = draw(seed, step, rows, d)
    odd = (rows & np.uint64(1)).astype(bool)
    h = np.stack([np.full(len(rows), 0.6, F), np.where(odd, F(-0.8), F(0.0)),
                  np.where(odd, F(0.0), F(0.8))], axis=-1).astype(F)
    g = gauss4(b)
    c = cap(b, h, F(0.5))
    s = sphere_gauss(b, h, F(0.3))
    t = turn2(h[:, :2], sym(b[:, 3], 0.7))
    out = np.concatenate([u01(b[:, 0])[:, None], sym(b[:, 1], 2.5)[:, None], g, c, s, t], axis=1)
    return out.astype(F)


def fnv1a64(data):
    """FNV-1a over bytes (test_noise's fnv_bytes)."""
    h = 1469598103934665603
    for byte in bytes(data):
        h = ((h ^ byte) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h
