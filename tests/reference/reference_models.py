# SPDX-License-Identifier: MIT
"""Independent float64 references of the three canonical models (issue 39), written from the
papers' equations as docs/SCIENCE.md states them, NOT from any shoal model file: they must stay
independent of the C code they check.

    vicsek_step    Vicsek et al. (1995), 2D and 3D, both position updates
    couzin_step    Couzin et al. (2002), zones, blind volume, turning limit, noise on the sphere
    flockers_step  the ABMFrameworksComparison "Flocking" declaration (synchronous, or in a given
                   sequential order as the frameworks run it)

Every function is brute force O(N^2) in NumPy float64 and takes the state as shoal keeps it:
positions p (N, 3) and velocities v (N, 3) (z = vz = 0 in 2D), and returns the next (p, v)
without touching its inputs. Noise is an input (the draws), never drawn inside, so a test can
feed exactly the numbers a shoal model draws from core/noise.h (noise_ref.py transcribes those
draws bit for bit; the *_draws helpers below make them for a step), or any other numbers.

The world (docs/WORLD.md) is a World: box size and centre per axis, which axes are periodic and
the dimension; distances are minimum images on periodic axes, positions are wrapped into the box
after each step (lo = centre - size/2, period size)."""
from dataclasses import dataclass, field

import numpy as np

import noise_ref


@dataclass
class World:
    """A box (size, center per axis), periodic flags per axis and dims (2: the plane z = 0)."""
    size: tuple = (0.0, 0.0, 0.0)
    center: tuple = (0.0, 0.0, 0.0)
    periodic: tuple = (False, False, False)
    dims: int = 3

    @classmethod
    def torus(cls, size, dims):
        """A periodic box of edge `size` (a number or per axis) with its corner at the origin,
        as the papers place it: [0, L)^dims; in 2D the z axis is neither sized nor periodic."""
        s = np.broadcast_to(np.asarray(size, float), (3,)).copy()
        per = [True, True, dims == 3]
        if dims == 2:
            s[2] = 0.0
        return cls(tuple(s), tuple(s / 2), tuple(per), dims)

    def lo(self):
        return np.asarray(self.center, float) - np.asarray(self.size, float) / 2


def min_image(d, world):
    """Minimum image of differences d (..., 3) on the periodic axes: d - L above L/2, d + L below
    -L/2 (for two points inside the box |d| < L, so one shift is enough)."""
    d = np.array(d, dtype=float)
    for a in range(3):
        if world.periodic[a]:
            L = world.size[a]
            half = L / 2
            x = d[..., a]
            d[..., a] = np.where(x > half, x - L, np.where(x < -half, x + L, x))
    return d


def wrap(p, world):
    """Positions wrapped into [lo, lo + L) on the periodic axes."""
    p = np.array(p, dtype=float)
    lo = world.lo()
    for a in range(3):
        if world.periodic[a]:
            L = world.size[a]
            y = lo[a] + np.mod(p[..., a] - lo[a], L)
            p[..., a] = np.where(y >= lo[a] + L, lo[a], y)
    return p


def pair_offsets(p, world):
    """offsets[i, j] = p_j - p_i as minimum images, (N, N, 3), and squared distances (N, N)."""
    p = np.asarray(p, float)
    d = min_image(p[None, :, :] - p[:, None, :], world)
    return d, np.einsum("ijk,ijk->ij", d, d)


def neighbours(p, radius, world, include_self=True):
    """Boolean (N, N): j is within `radius` of i (d2 <= r^2, minimum image). The brute-force
    answer a grid's neighbour search must give."""
    _, d2 = pair_offsets(p, world)
    m = d2 <= radius * radius
    if not include_self:
        np.fill_diagonal(m, False)
    return m


def unit(x):
    """x / |x| along the last axis; 0 where |x| = 0."""
    x = np.asarray(x, float)
    n = np.linalg.norm(x, axis=-1, keepdims=True)
    return np.divide(x, n, out=np.zeros_like(x), where=n > 0)


def _flat(p, v, world):
    p = np.array(p, dtype=float)
    v = np.array(v, dtype=float)
    if p.ndim != 2 or p.shape[1] != 3 or v.shape != p.shape:
        raise ValueError("p and v must be (N, 3) arrays")
    if world.dims == 2 and (np.any(p[:, 2] != 0) or np.any(v[:, 2] != 0)):
        raise ValueError("a 2D world needs z = vz = 0")
    return p, v


# ---- Vicsek et al. 1995 ---------------------------------------------------------------------


def vicsek_step(p, v, world, *, speed=0.03, radius=1.0, dt=1.0, noise, update="paper"):
    """One step of the Vicsek model.

    Heading of i after the step: the direction of the sum of the unit headings v_j/|v_j| of every
    boid j with |p_j - p_i| <= radius (minimum image; i itself included), then turned by the noise:
      2D: noise is the angle (N,) added to the mean angle (uniform in [-eta/2, eta/2] in the
          paper): heading = R(noise_i) mean;
      3D: noise is (c, s, cp, sp), each (N,): cos and sin of the polar angle from the mean and of
          the azimuth about it (uniform on the cap of half-angle eta/2: noise_ref.cap_parts);
          heading = c m + s (cp e1 + sp e2), (e1, e2) = noise_ref.basis64(m).
    A boid whose neighbours' headings cancel exactly (|sum| = 0) keeps its own heading.
    v' = speed * heading. Position: update="paper" (the paper's eq. 1) p' = p + v dt with the
    velocity at the start of the step; update="standard" (the later convention) p' = p + v' dt.
    Then p' is wrapped into the box."""
    p, v = _flat(p, v, world)
    if update not in ("paper", "standard"):
        raise ValueError("update must be 'paper' or 'standard'")
    h = unit(v)
    adj = neighbours(p, radius, world, include_self=True)
    s = adj.astype(float) @ h
    m = unit(s)
    m = np.where(np.linalg.norm(s, axis=1, keepdims=True) > 0, m, h)
    if world.dims == 2:
        th = np.asarray(noise, float)
        c, sn = np.cos(th), np.sin(th)
        new = np.stack([c * m[:, 0] - sn * m[:, 1], sn * m[:, 0] + c * m[:, 1],
                        np.zeros(len(m))], axis=1)
    else:
        c, sn, cp, sp = (np.asarray(x, float)[:, None] for x in noise)
        e1, e2 = noise_ref.basis64(m)
        new = c * m + sn * (cp * e1 + sp * e2)
    v2 = speed * unit(new)
    p2 = p + (v if update == "paper" else v2) * dt
    return wrap(p2, world), v2


def vicsek_draws(seed, step, n, eta, dims):
    """The noise a shoal vicsek step draws (the contract docs/SCIENCE.md states): draw 0 of each
    row; 2D: the angle noise_sym(w0, eta/2); 3D: the cap parts of noise_cap with
    cos_alpha = noise_cap_cos(eta/2). Float32 values, as the C code has them."""
    b = noise_ref.draw(seed, step, np.arange(n), 0)
    if dims == 2:
        return noise_ref.sym(b[:, 0], np.float32(eta / 2))
    return noise_ref.cap_parts(b, noise_ref.cap_cos(eta / 2))


def vicsek_order(v):
    """v_a = |sum v_i| / (N v): the paper's order parameter (speeds all equal)."""
    v = np.asarray(v, float)
    return float(np.linalg.norm(unit(v).sum(axis=0)) / len(v))


# ---- Couzin et al. 2002 ---------------------------------------------------------------------


def couzin_step(p, v, world, *, repulsion_radius=1.0, orientation_radius=1.0,
                attraction_radius=15.0, perception_deg=270.0, turn_rate_deg=40.0, speed=3.0,
                dt=0.1, noise):
    """One step of the Couzin et al. (2002) model (synchronous: every boid from the state at the
    start of the step).

    For boid i with heading h_i = v_i/|v_i| and each j != i, r_ij = p_j - p_i (minimum image),
    d = |r_ij|, u_ij = r_ij / d:
      - j is undetectable (blind volume) when the angle between h_i and u_ij exceeds
        perception/2 (perception_deg = 360: nothing is blind); this holds in every zone;
      - zone of repulsion d < r_r:            d_r -= u_ij,      n_r += 1
      - zone of orientation r_r <= d < r_o:   d_o += h_j,       n_o += 1
      - zone of attraction  r_o <= d < r_a:   d_a += u_ij,      n_a += 1
    Desired direction: d_r when n_r > 0 (repulsion overrides); else unit(unit(d_o) + unit(d_a))
    when both n_o and n_a > 0, unit(d_o) or unit(d_a) when only one is; h_i when none is, or
    when the result has length 0.
    Noise: the desired direction d is turned by an angle theta about an axis perpendicular to
    it: 3D: noise = (ct, st, cp, sp), each (N,): cos/sin of theta (sigma z, z standard normal:
    noise_ref.sphere_gauss_parts) and of the axis' azimuth; d' = ct d + st (cp e1 + sp e2),
    (e1, e2) = noise_ref.basis64(d). 2D: noise = theta (N,), d' = R(theta) d.
    Turning: when the angle between h_i and d' is at most theta_max = turn_rate * dt, the new
    heading is d'; else h_i turned by theta_max toward d' in their common plane (for d' = -h_i
    exactly: toward e1 of basis64(h_i)). v' = speed * heading, p' = p + v' dt, wrapped."""
    p, v = _flat(p, v, world)
    rr, ro, ra = repulsion_radius, orientation_radius, attraction_radius
    if not (0 <= rr <= ro <= ra):
        raise ValueError("radii must satisfy 0 <= repulsion <= orientation <= attraction")
    h = unit(v)
    n = len(p)
    off, d2 = pair_offsets(p, world)
    d = np.sqrt(d2)
    u = np.divide(off, d[..., None], out=np.zeros_like(off), where=d[..., None] > 0)
    notself = ~np.eye(n, dtype=bool) & (d > 0)
    cos_half = np.cos(np.radians(perception_deg) / 2)
    seen = np.einsum("ik,ijk->ij", h, u) >= cos_half if perception_deg < 360 else np.ones_like(notself)
    seen &= notself
    zr = seen & (d < rr)
    zo = seen & (d >= rr) & (d < ro)
    za = seen & (d >= ro) & (d < ra)
    dr = -np.einsum("ij,ijk->ik", zr.astype(float), u)
    do = zo.astype(float) @ h
    da = np.einsum("ij,ijk->ik", za.astype(float), u)
    nr, no, na = zr.sum(1), zo.sum(1), za.sum(1)
    want = np.where((no > 0)[:, None] & (na > 0)[:, None], unit(unit(do) + unit(da)),
                    np.where((no > 0)[:, None], unit(do), unit(da)))
    want = np.where((nr > 0)[:, None], unit(dr), want)
    none = ((nr + no + na) == 0) | (np.linalg.norm(want, axis=1) == 0)
    want = np.where(none[:, None], h, want)
    if world.dims == 2:
        th = np.asarray(noise, float)
        c, s = np.cos(th), np.sin(th)
        dn = np.stack([c * want[:, 0] - s * want[:, 1], s * want[:, 0] + c * want[:, 1],
                       np.zeros(n)], axis=1)
    else:
        ct, st, cp, sp = (np.asarray(x, float)[:, None] for x in noise)
        e1, e2 = noise_ref.basis64(want)
        dn = unit(ct * want + st * (cp * e1 + sp * e2))
    new = turn_toward(h, dn, np.radians(turn_rate_deg) * dt, world.dims)
    v2 = speed * new
    return wrap(p + v2 * dt, world), v2


def turn_toward(h, d, max_angle, dims=3):
    """Unit headings h turned toward unit d by at most max_angle (radians), in their plane."""
    h, d = unit(h), unit(d)
    cosang = np.clip(np.einsum("ik,ik->i", h, d), -1.0, 1.0)
    ang = np.arccos(cosang)
    w = d - cosang[:, None] * h
    wn = np.linalg.norm(w, axis=1)
    if dims == 2:
        perp = np.stack([-h[:, 1], h[:, 0], np.zeros(len(h))], axis=1)
    else:
        perp, _ = noise_ref.basis64(h)
    w = np.where((wn > 0)[:, None], unit(w), perp)
    turned = np.cos(max_angle) * h + np.sin(max_angle) * w
    return np.where((ang <= max_angle)[:, None], d, unit(turned))


def couzin_draws(seed, step, n, sigma, dims):
    """The noise a shoal couzin step draws (docs/SCIENCE.md's contract): draw 0 of each row;
    3D: noise_sphere_gauss's parts (theta = sigma z, z from w0, w1; azimuth from w2); 2D: the
    angle sigma z with z the first normal of noise_gauss2(w0, w1). Float32 values."""
    b = noise_ref.draw(seed, step, np.arange(n), 0)
    if dims == 2:
        z0, _ = noise_ref.gauss2(b[:, 0], b[:, 1])
        return (np.float32(sigma) * z0).astype(np.float32)
    return noise_ref.sphere_gauss_parts(b, np.float32(sigma))


def couzin_order(p, v, world=None):
    """(p_group, m_group): polarisation |sum h_i| / N and milling |sum u_ic x h_i| / N with u_ic
    the unit vector from the group's centre to i (the centre by circular mean on periodic axes,
    offsets by minimum image)."""
    p = np.asarray(p, float)
    h = unit(v)
    pol = float(np.linalg.norm(h.sum(axis=0)) / len(h))
    if world is None:
        world = World()
    c = np.empty(3)
    lo = world.lo()
    for a in range(3):
        if world.periodic[a]:
            L = world.size[a]
            ang = 2 * np.pi * (p[:, a] - lo[a]) / L
            c[a] = lo[a] + L * np.mod(np.arctan2(np.sin(ang).mean(), np.cos(ang).mean()),
                                      2 * np.pi) / (2 * np.pi)
        else:
            c[a] = p[:, a].mean()
    r = unit(min_image(p - c, world))
    mil = float(np.linalg.norm(np.cross(r, h).sum(axis=0)) / len(h))
    return pol, mil


# ---- the ABMFrameworksComparison "Flocking" declaration --------------------------------------


def flockers_step(p, v, world, *, speed=1.0, separation=1.0, visual_distance=15.0,
                  cohere_factor=0.03, separate_factor=0.015, match_factor=0.05, order=None):
    """One step of the declaration's flocking rule.

    The declaration's bird has a unit direction `vel` and a `speed`; shoal keeps v = speed * vel,
    so vel = v / speed here (the frameworks start from vel uniform in [-1, 1]^2, not unit: the
    first step normalises it, and so does this). For bird i, over its neighbours j != i with
    |p_j - p_i| <= visual_distance (minimum image), with heading = p_j - p_i (minimum image):
        cohere += heading; separate -= heading when |heading| < separation; match += vel_j;
    then with n = max(count, 1):
        vel_i' = unit(vel_i + (cohere * cohere_factor + separate * separate_factor
                               + match * match_factor) / n)
    (the declaration writes unit((vel + cohere/n*cf + separate/n*sf + match/n*mf) / 2): the
    same direction), a vel of length 0 keeps vel_i's direction, and p_i' = p_i + vel_i' * speed.
    order=None: synchronous (every bird from the start-of-step state, shoal's rule). order = a
    permutation of rows: the declaration's sequential activation, each bird seeing the birds
    already moved in this step (what Agents.jl, MASON and Mesa run)."""
    p, v = _flat(p, v, world)
    vel = v / speed
    r2 = visual_distance * visual_distance
    s2 = separation * separation

    def new_vel(i, P, VEL):
        off = min_image(P - P[i], world)
        d2 = np.einsum("jk,jk->j", off, off)
        nb = d2 <= r2
        nb[i] = False
        cnt = int(nb.sum())
        coh = off[nb].sum(axis=0)
        sep = -off[nb & (d2 < s2)].sum(axis=0)
        mat = VEL[nb].sum(axis=0)
        nn = max(cnt, 1)
        w = VEL[i] + (coh * cohere_factor + sep * separate_factor + mat * match_factor) / nn
        nw = np.linalg.norm(w)
        if nw > 0:
            return w / nw
        nv = np.linalg.norm(VEL[i])
        return VEL[i] / nv if nv > 0 else VEL[i]

    if order is None:
        vel2 = np.array([new_vel(i, p, vel) for i in range(len(p))])
        p2 = wrap(p + vel2 * speed, world)
        return p2, vel2 * speed
    P, VEL = p.copy(), vel.copy()
    order = np.asarray(order)
    if sorted(order.tolist()) != list(range(len(p))):
        raise ValueError("order must be a permutation of the rows")
    for i in order:
        VEL[i] = new_vel(i, P, VEL)
        P[i] = wrap(P[i] + VEL[i] * speed, world)
    return P, VEL * speed


def flockers_case(case):
    """(N, L, visual_distance) of the declaration's cases: 'small', 'large', or a bird count N at
    the large case's density (L = 150 sqrt(N / 400), visual distance 15)."""
    if case == "small":
        return 200, 100.0, 5.0
    if case == "large":
        return 400, 150.0, 15.0
    n = int(case)
    return n, 150.0 * np.sqrt(n / 400.0), 15.0


def polarisation(v):
    """|mean unit heading|."""
    return float(np.linalg.norm(unit(v).mean(axis=0)))
