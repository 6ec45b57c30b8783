# SPDX-License-Identifier: MIT
"""The references themselves, on cases checked by hand (issue 39): before a reference judges a
shoal model, it must be right. Noise: Random123's known answers and test_noise's golden hash of
every distribution (the transcription gives the C header's bits). Models: limits of the papers
(Vicsek at eta = 0 orders completely; Couzin with only repulsion disperses), small
configurations worked out on paper, the minimum image across the seam, and the declaration's
own pseudo-code for the flockers."""
import math

import numpy as np
import pytest

import noise_ref as nr
import reference_models as R

F = np.float32


# ---- noise ------------------------------------------------------------------------------------


def test_philox_known_answers():
    # Random123's kat_vectors for philox4x32_10 (the same vectors test_noise checks)
    assert nr.draw(0, 0, [0], 0)[0].tolist() == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    ones = nr.draw(2**64 - 1, 2**64 - 1, [0xFFFFFFFF], 0xFFFFFFFF)[0].tolist()
    assert ones == [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]
    pi = nr.draw(0x299F31D0A4093822, 0x0370734413198A2E, [0x243F6A88], 0x85A308D3)[0].tolist()
    assert pi == [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]


def test_golden_hash_of_every_distribution():
    # tests/test_noise.c's GOLD_HASH: FNV-1a over the 14 floats of noise_isa_row for rows
    # 0..4095, key (12345, 678), draw 7. Equal hashes: the transcription gives the header's bits.
    out = nr.isa_rows(12345, 678, np.arange(4096))
    assert out.dtype == np.float32 and out.shape == (4096, 14)
    assert nr.fnv1a64(out.astype("<f4").tobytes()) == 0x00DFD7C78BB96BF5


def test_uniforms_exact():
    assert nr.u01(np.uint32(0)) == 0 and nr.u01(np.uint32(0xFFFFFFFF)) == F(1 - 2**-24)
    assert nr.u01_open0(np.uint32(0)) == F(2**-24) and nr.u01_open0(np.uint32(0xFFFFFFFF)) == 1
    assert nr.sym(np.uint32(0xFFFFFFFF), 1.0) == F(1 - 2**-23)
    assert nr.sym(np.uint32(0), 1.0) == F(-1 + 2**-23)
    k = np.arange(0, 2**23, 997, dtype=np.uint64)
    s = nr.sym((k << np.uint64(9)).astype(np.uint32), 0.7)
    mirror = nr.sym(((2**23 - 1 - k) << np.uint64(9)).astype(np.uint32), 0.7)
    assert np.all(np.abs(s) <= F(0.7)) and np.array_equal(s, -mirror)  # symmetric to the bit


def test_key_parts_change_the_block():
    base = nr.draw(5, 7, [3], 1)[0]
    for seed, step, row, d in [(6, 7, 3, 1), (5 + 2**32, 7, 3, 1), (5, 8, 3, 1), (5, 7 + 2**32, 3, 1),
                               (5, 7, 4, 1), (5, 7, 3, 2)]:
        assert not np.array_equal(nr.draw(seed, step, [row], d)[0], base)


def test_polynomials_accurate():
    x = np.linspace(1e-6, 1, 20001, dtype=F)
    assert np.max(np.abs(nr.logf(x) - np.log(x.astype(float))) / np.abs(np.log(x.astype(float)) + 1e-300)) < 1e-6
    t = np.linspace(-100, 100, 20001, dtype=F)
    s, c = nr.sincos(t)
    assert np.max(np.abs(s - np.sin(t.astype(float)))) < 2e-6
    assert np.max(np.abs(c - np.cos(t.astype(float)))) < 2e-6


def test_cap_and_sphere_draws_in_their_support():
    rng = np.random.default_rng(3)
    h = R.unit(rng.normal(size=(5000, 3))).astype(F)
    b = nr.draw(11, 2, np.arange(5000), 0)
    for alpha in (0.05, 0.7, 2.0, math.pi):
        out = nr.cap(b, h, nr.cap_cos(alpha)).astype(float)
        cosang = np.einsum("ij,ij->i", R.unit(out), h.astype(float))
        assert np.all(cosang >= math.cos(alpha) - 1e-5)
        assert np.all(np.abs(np.linalg.norm(out, axis=1) - 1) < 1e-5)
    g = nr.sphere_gauss(b, h, F(0.0))
    assert np.max(np.abs(g - h)) < 1e-6  # sigma 0: no turn


# ---- world helpers ----------------------------------------------------------------------------


def test_neighbours_brute_force_with_seam():
    rng = np.random.default_rng(5)
    w = R.World.torus(7.0, 3)
    p = rng.random((300, 3)) * 7.0
    p[:10, 0] = 7.0 - 1e-9  # on the seam
    p[10] = p[0] - [6.9, 0, 0]  # 0.1 across the seam from row 0
    got = R.neighbours(p, 1.3, w)
    for i in range(300):  # each pair on its own, by rounding to the nearest image
        d = p - p[i]
        d = d - 7.0 * np.round(d / 7.0)
        assert np.array_equal(got[i], np.einsum("jk,jk->j", d, d) <= 1.3 * 1.3)
    assert got[0, 10] and got[10, 0]


def test_wrap_and_min_image():
    w = R.World(size=(10, 4, 0), center=(0, 0, 0), periodic=(True, True, False), dims=2)
    p = R.wrap(np.array([[5.0, 2.0, 0], [-5.0, -2.0, 0], [17.5, -6.5, 0]]), w)
    assert p.tolist() == [[-5.0, -2.0, 0], [-5.0, -2.0, 0], [-2.5, 1.5, 0]]
    d = R.min_image(np.array([[6.0, -3.0, 9.0]]), w)
    assert d.tolist() == [[-4.0, 1.0, 9.0]]


# ---- Vicsek ----------------------------------------------------------------------------------


def vicsek_start(rng, n, L, speed=0.03, dims=2):
    p = np.zeros((n, 3))
    p[:, :dims] = rng.random((n, dims)) * L
    if dims == 2:
        th = rng.random(n) * 2 * np.pi
        v = np.stack([np.cos(th), np.sin(th), np.zeros(n)], axis=1) * speed
    else:
        v = R.unit(rng.normal(size=(n, 3))) * speed
    return p, v


def test_vicsek_eta0_orders_completely():
    rng = np.random.default_rng(1)
    w = R.World.torus(5.0, 2)
    p, v = vicsek_start(rng, 100, 5.0)  # density 4, the paper's Fig. 2a
    assert R.vicsek_order(v) < 0.5
    for _ in range(300):
        p, v = R.vicsek_step(p, v, w, noise=np.zeros(100))
    assert R.vicsek_order(v) > 1 - 1e-12
    assert np.allclose(np.linalg.norm(v, axis=1), 0.03)


def test_vicsek_max_noise_disorders():
    rng = np.random.default_rng(2)
    n, L, eta = 400, 10.0, 2 * np.pi
    w = R.World.torus(L, 2)
    p, v = vicsek_start(rng, n, L)
    va = []
    for step in range(200):
        p, v = R.vicsek_step(p, v, w, noise=R.vicsek_draws(9, step, n, eta, 2))
        va.append(R.vicsek_order(v))
    # headings independent and uniform: E v_a = sqrt(pi / (4 N)) = 0.044
    assert np.mean(va[50:]) < 0.1


def test_vicsek_hand_cases():
    w = R.World.torus(10.0, 2)
    s = 0.03
    # one boid: its own heading (itself included), turned by the noise angle
    p = np.array([[5.0, 5.0, 0]])
    v = np.array([[s, 0, 0]])
    p2, v2 = R.vicsek_step(p, v, w, noise=np.array([np.pi / 2]))
    assert np.allclose(v2, [[0, s, 0]], atol=1e-15)
    assert np.allclose(p2, [[5.03, 5.0, 0]])  # the paper: moves with v(t)
    p3, _ = R.vicsek_step(p, v, w, noise=np.array([np.pi / 2]), update="standard")
    assert np.allclose(p3, [[5.0, 5.03, 0]])  # the convention: moves with v(t+1)
    # two boids 0.5 apart, headings +x and +y: both take the bisector
    p = np.array([[5.0, 5.0, 0], [5.5, 5.0, 0]])
    v = np.array([[s, 0, 0], [0, s, 0]])
    _, v2 = R.vicsek_step(p, v, w, noise=np.zeros(2))
    assert np.allclose(v2, s / math.sqrt(2) * np.array([[1, 1, 0], [1, 1, 0]]))
    # 1.5 apart: out of range, each keeps its own
    p[1, 0] = 6.5
    _, v2 = R.vicsek_step(p, v, w, noise=np.zeros(2))
    assert np.allclose(v2, v)
    # headings that cancel exactly: each keeps its own
    p[1, 0] = 5.5
    v = np.array([[s, 0, 0], [-s, 0, 0]])
    _, v2 = R.vicsek_step(p, v, w, noise=np.zeros(2))
    assert np.allclose(v2, v)


def test_vicsek_across_the_seam_as_in_the_middle():
    w = R.World.torus(10.0, 2)
    s = 0.03
    v = np.array([[s, 0, 0], [0, s, 0]])
    mid = R.vicsek_step(np.array([[5.0, 5, 0], [5.7, 5, 0]]), v, w, noise=np.array([0.1, -0.2]))
    seam = R.vicsek_step(np.array([[9.65, 5, 0], [0.35, 5, 0]]), v, w, noise=np.array([0.1, -0.2]))
    assert np.allclose(mid[1], seam[1], atol=1e-15)
    assert np.allclose(seam[0][0], [9.68, 5, 0]) and np.allclose(seam[0][1], [0.35, 5.03, 0])


def test_vicsek_noise_within_eta_half():
    rng = np.random.default_rng(4)
    eta = 1.3
    th = R.vicsek_draws(1, 0, 2000, eta, 2)
    assert th.dtype == np.float32 and np.all(np.abs(th) <= eta / 2 + 1e-7)
    w = R.World.torus(40.0, 3)
    p, v = vicsek_start(rng, 2000, 40.0, dims=3)  # sparse: mostly no neighbour
    nz = R.vicsek_draws(1, 0, 2000, eta, 3)
    _, v2 = R.vicsek_step(p, v, w, noise=nz)
    # a boid alone turns its own heading by at most eta / 2
    alone = R.neighbours(p, 1.0, w).sum(axis=1) == 1
    cosang = np.einsum("ij,ij->i", R.unit(v2[alone]), R.unit(v[alone]))
    assert alone.sum() > 1000 and np.all(cosang >= math.cos(eta / 2) - 1e-6)
    assert np.allclose(np.linalg.norm(v2, axis=1), 0.03)


def test_vicsek_3d_eta0_orders():
    rng = np.random.default_rng(6)
    n, L = 200, 4.0
    w = R.World.torus(L, 3)
    p, v = vicsek_start(rng, n, L, dims=3)
    one, zero = np.ones(n), np.zeros(n)
    for _ in range(400):
        p, v = R.vicsek_step(p, v, w, noise=(one, zero, one, zero))
    assert R.vicsek_order(v) > 1 - 1e-9


# ---- Couzin ----------------------------------------------------------------------------------


def no_noise(n):
    return (np.ones(n), np.zeros(n), np.ones(n), np.zeros(n))


def test_couzin_only_repulsion_disperses():
    rng = np.random.default_rng(7)
    w = R.World.torus(200.0, 3)
    n = 20
    p = rng.normal(size=(n, 3)) * 0.3 + 100
    v = R.unit(rng.normal(size=(n, 3))) * 3
    for _ in range(100):
        p, v = R.couzin_step(p, v, w, repulsion_radius=2, orientation_radius=2,
                             attraction_radius=2, noise=no_noise(n))
    _, d2 = R.pair_offsets(p, w)
    np.fill_diagonal(d2, np.inf)
    assert np.sqrt(d2.min()) > 2.0  # no boid within another's repulsion zone
    assert np.allclose(np.linalg.norm(v, axis=1), 3)


def test_couzin_blind_volume():
    w = R.World.torus(100.0, 3)
    # back to back, 3 apart, inside each other's orientation zone, headings at 180 degrees:
    # each is straight behind the other (180 > 270 / 2): neither sees the other
    p = np.array([[50.0, 50, 50], [47.0, 50, 50]])
    v = np.array([[3.0, 0, 0], [-3.0, 0, 0]])
    kw = dict(repulsion_radius=1, orientation_radius=5, attraction_radius=10, noise=no_noise(2))
    _, v2 = R.couzin_step(p, v, w, perception_deg=270, **kw)
    assert np.allclose(v2, v)
    # with a full field of perception they see each other: the turn is the limit, 4 degrees
    _, v3 = R.couzin_step(p, v, w, perception_deg=360, **kw)
    cosang = np.einsum("ij,ij->i", R.unit(v3), R.unit(v))
    assert np.allclose(cosang, math.cos(math.radians(4.0)))
    # at 90 degrees off the heading (inside 135): seen
    p = np.array([[50.0, 50, 50], [50.0, 53, 50]])
    v = np.array([[3.0, 0, 0], [0, 0, 3.0]])
    _, v4 = R.couzin_step(p, v, w, perception_deg=270, **kw)
    assert not np.allclose(v4, v)


def test_couzin_turn_limit_and_orientation():
    w = R.World.torus(100.0, 3)
    p = np.array([[50.0, 50, 50], [50.0, 52, 50]])  # 2 apart: orientation zone (1..5)
    v = np.array([[3.0, 0, 0], [0, 0, 3.0]])
    kw = dict(repulsion_radius=1, orientation_radius=5, attraction_radius=5, noise=no_noise(2))
    _, v2 = R.couzin_step(p, v, w, **kw)
    t = math.radians(40 * 0.1)
    assert np.allclose(v2[0], 3 * np.array([math.cos(t), 0, math.sin(t)]))  # toward +z
    assert np.allclose(v2[1], 3 * np.array([math.sin(t), 0, math.cos(t)]))  # toward +x
    # a large enough turn rate reaches the desired direction in one step
    _, v3 = R.couzin_step(p, v, w, turn_rate_deg=1000, **kw)
    assert np.allclose(v3, v[::-1])


def test_couzin_repulsion_overrides():
    w = R.World.torus(100.0, 3)
    # boid 0 heads +y; boid 1 at 0.5 along +x (repulsion zone), boid 2 at 3 along -x heading -y
    p = np.array([[50.0, 50, 50], [50.5, 50, 50], [47.0, 50, 50]])
    v = np.array([[0, 3.0, 0], [0, 3.0, 0], [0, -3.0, 0]])
    kw = dict(repulsion_radius=1, orientation_radius=5, attraction_radius=10, turn_rate_deg=1e5,
              noise=no_noise(3))
    _, v2 = R.couzin_step(p, v, w, **kw)
    assert np.allclose(v2[0], [-3.0, 0, 0])  # straight away from boid 1, boid 2 ignored


def test_couzin_attraction_and_both_zones():
    w = R.World.torus(100.0, 3)
    kw = dict(repulsion_radius=1, orientation_radius=2, attraction_radius=10, turn_rate_deg=1e5)
    # attraction only: toward the neighbour
    p = np.array([[50.0, 50, 50], [50.0, 56, 50]])
    v = np.array([[3.0, 0, 0], [3.0, 0, 0]])
    _, v2 = R.couzin_step(p, v, w, noise=no_noise(2), **kw)
    assert np.allclose(v2[0], [0, 3.0, 0])
    # orientation (a neighbour heading +z, 1.5 away) and attraction (a neighbour 6 away along +y):
    # the mean of the two unit directions
    p = np.array([[50.0, 50, 50], [51.5, 50, 50], [50.0, 56, 50]])
    v = np.array([[3.0, 0, 0], [0, 0, 3.0], [3.0, 0, 0]])
    _, v3 = R.couzin_step(p, v, w, noise=no_noise(3), **kw)
    assert np.allclose(v3[0], 3 * np.array([0, 1, 1]) / math.sqrt(2))


def test_couzin_noise_turns_by_theta():
    w = R.World.torus(100.0, 3)
    p = np.array([[50.0, 50, 50]])
    v = np.array([[0, 0, 3.0]])
    th = 0.03  # within the turn limit (4 degrees = 0.0698)
    _, v2 = R.couzin_step(p, v, w, noise=(np.array([math.cos(th)]), np.array([math.sin(th)]),
                                          np.array([1.0]), np.array([0.0])))
    assert np.isclose(np.dot(R.unit(v2)[0], [0, 0, 1]), math.cos(th))
    # the draws a shoal step makes: sigma 0.05, angles within the Box-Muller tails
    ct, st, cp, sp = R.couzin_draws(3, 0, 10000, 0.05, 3)
    ang = np.arctan2(st.astype(float), ct.astype(float))
    assert np.all(np.abs(ang) <= 0.05 * 5.78) and 0.045 < np.std(ang) < 0.055


def test_couzin_across_the_seam_as_in_the_middle():
    w = R.World.torus(30.0, 3)
    v = np.array([[3.0, 0, 0], [0, 3.0, 0]])
    nz = R.couzin_draws(5, 0, 2, 0.05, 3)
    kw = dict(repulsion_radius=1, orientation_radius=5, attraction_radius=12, noise=nz)
    mid = R.couzin_step(np.array([[15.0, 15, 15], [18.0, 15, 15]]), v, w, **kw)
    seam = R.couzin_step(np.array([[28.5, 15, 15], [1.5, 15, 15]]), v, w, **kw)
    assert np.allclose(mid[1], seam[1], atol=1e-14)


def test_couzin_order_parameters():
    # a ring turning about its centre: milling 1, polarisation 0
    n = 64
    a = np.arange(n) * 2 * np.pi / n
    p = np.stack([np.cos(a), np.sin(a), np.zeros(n)], axis=1) * 5 + 50
    v = np.stack([-np.sin(a), np.cos(a), np.zeros(n)], axis=1) * 3
    pol, mil = R.couzin_order(p, v)
    assert pol < 1e-12 and abs(mil - 1) < 1e-12
    # the same ring across a periodic seam
    w = R.World.torus(60.0, 3)
    pol2, mil2 = R.couzin_order(R.wrap(p + [10, 0, 0], w), v, w)
    assert pol2 < 1e-12 and abs(mil2 - 1) < 1e-9
    pol3, mil3 = R.couzin_order(p, np.tile([[0, 0, 3.0]], (n, 1)))
    assert abs(pol3 - 1) < 1e-12 and mil3 < 1e-12


def test_couzin_bad_radii():
    w = R.World.torus(30.0, 3)
    with pytest.raises(ValueError):
        R.couzin_step(np.zeros((1, 3)), np.ones((1, 3)), w, repulsion_radius=2,
                      orientation_radius=1, noise=no_noise(1))


# ---- flockers ----------------------------------------------------------------------------------


def declaration_step(p, vel, L, order, *, speed=1.0, sep=1.0, vis=15.0, cf=0.03, sf=0.015, mf=0.05):
    """The declaration's Agents.jl pseudo-code (DECLARATION.md), taken literally, in the given
    activation order, with periodic distances."""
    P, V = p.copy(), vel.copy()

    def image(d):
        return d - L * np.round(d / L)

    for i in order:
        n = 0
        match = np.zeros(2)
        separate = np.zeros(2)
        cohere = np.zeros(2)
        for j in range(len(P)):
            if j == i:
                continue
            heading = image(P[j] - P[i])
            if np.linalg.norm(heading) > vis:
                continue
            n += 1
            cohere = cohere + heading
            if np.linalg.norm(heading) < sep:
                separate = separate - heading
            match = match + V[j]
        n = max(n, 1)
        cohere = cohere / n * cf
        separate = separate / n * sf
        match = match / n * mf
        V[i] = (V[i] + cohere + separate + match) / 2
        V[i] = V[i] / np.linalg.norm(V[i])
        P[i] = np.mod(P[i] + V[i] * speed, L)
    return P, V


def flockers_start(rng, n, L):
    p = np.zeros((n, 3))
    p[:, :2] = rng.random((n, 2)) * L
    v = np.zeros((n, 3))
    v[:, :2] = rng.random((n, 2)) * 2 - 1  # the frameworks' start: uniform in [-1, 1]^2
    return p, v


def test_flockers_sequential_is_the_declaration():
    rng = np.random.default_rng(8)
    n, L = 60, 30.0
    w = R.World.torus(L, 2)
    p, v = flockers_start(rng, n, L)
    for step in range(5):
        order = rng.permutation(n)
        p2, v2 = R.flockers_step(p, v, w, order=order)
        dp, dv = declaration_step(p[:, :2], v[:, :2], L, order)
        assert np.allclose(p2[:, :2], dp, atol=1e-12) and np.allclose(v2[:, :2], dv, atol=1e-14)
        p, v = p2, v2


def test_flockers_synchronous_hand_case():
    w = R.World.torus(150.0, 2)
    # two birds 0.5 apart along x, both heading +y: cohere pulls together, separate pushes apart
    p = np.array([[10.0, 10, 0], [10.5, 10, 0]])
    v = np.array([[0, 1.0, 0], [0, 1.0, 0]])
    p2, v2 = R.flockers_step(p, v, w)
    # bird 0: heading to 1 = (0.5, 0): cohere 0.5*0.03, separate -0.5*0.015, match (0,1)*0.05
    want = np.array([0.5 * 0.03 - 0.5 * 0.015, 1 + 0.05, 0])
    want /= np.linalg.norm(want)
    assert np.allclose(v2[0], want) and np.allclose(p2[0], p[0] + want)
    assert np.allclose(v2[1], want * [-1, 1, 1])
    # synchronous: a single bird does what it does in any order
    q, u = R.flockers_step(p[:1], v[:1], w)
    q2, u2 = R.flockers_step(p[:1], v[:1], w, order=[0])
    assert np.array_equal(q, q2) and np.array_equal(u, u2)
    assert np.allclose(u, v[:1]) and np.allclose(q, p[:1] + v[:1])


def test_flockers_across_the_seam_and_speed():
    w = R.World.torus(100.0, 2)
    v = np.array([[0.3, 0.8, 0], [-0.6, 0.2, 0]])
    mid = R.flockers_step(np.array([[50.0, 50, 0], [53.0, 51, 0]]), v, w, speed=2.0)
    seam = R.flockers_step(np.array([[98.5, 50, 0], [1.5, 51, 0]]), v, w, speed=2.0)
    assert np.allclose(mid[1], seam[1], atol=1e-14)
    assert np.allclose(np.linalg.norm(seam[1], axis=1), 2.0)
    assert np.all((seam[0] >= 0) & (seam[0] < 100))


def test_flockers_cases():
    assert R.flockers_case("small") == (200, 100.0, 5.0)
    assert R.flockers_case("large") == (400, 150.0, 15.0)
    n, L, vis = R.flockers_case(100000)
    assert n == 100000 and abs(L - 150 * math.sqrt(250)) < 1e-9 and vis == 15.0
