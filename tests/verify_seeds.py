#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Outside programs for `shoal verify` (tests/test_verify_seeds.sh): an independent float32
NumPy transcription of each seed's rules, written from the models' contract (docs/MODELS.md, the
project's copy of it) and the seeds' own shaders and scripts, never from shoal's source, and the same transcriptions
with one planted rule error each.

Each transcription sums its neighbours with NumPy's reductions (another order than shoal's
candidate order) and follows its seed's own formulas where they differ from shoal's in
rounding only: distances compared as sqrt(d2) <= r (seed 003, 000, 002), normalize(diff) / d
(seed 003), acos of the view angle (seed 004), the neighbour test on the index (seed 001, 004).

Every trajectory starts from a lattice with holes, so that neighbours sit exactly on the radii
at step 0 (the strict vs non-strict threshold shows only there); later states are the
transcription's own steps. Trajectories are written in the layouts verify reads: Unity BoidData
dumps, (T, N, 7) arrays with ids and shuffled rows, numbered .npy files with an ids file, a
(T, N, 6) array, and seed 004's Particle records.

usage: verify_seeds.py OUTDIR   (writes OUTDIR/cases.tsv: name, expected verdict, verify args)
"""
import os
import sys

import numpy as np

F = np.float32
STEPS = 3                 # pairs per trajectory
DT = F(1.0 / 60.0)


def dot(a, b):
    return (a[..., 0] * b[..., 0] + a[..., 1] * b[..., 1]) + a[..., 2] * b[..., 2]


def length(a):
    return np.sqrt(dot(a, a))


def safe_div(a, b):
    with np.errstate(divide="ignore", invalid="ignore"):
        return a / b


def normalize(a):
    n = length(a)
    return np.where((n > 0)[..., None], safe_div(a, n[..., None]), F(0)).astype(F)


def limit(a, m):
    n = length(a)
    return np.where(((n > m) & (n > 0))[..., None], a * safe_div(F(m), n)[..., None], a).astype(F)


def masked_sum(mask, values):
    """sum over j of values[i, j] where mask[i, j] (NumPy's own reduction order)"""
    return np.where(mask[..., None], values, F(0)).sum(axis=1, dtype=F)


def mean_or_zero(total, count):
    c = count.astype(F)
    return np.where((count > 0)[..., None], safe_div(total, c[:, None]), F(0)).astype(F)


def lattice(rng, n_side, spacing, keep, offset=(0.0, 0.0, 0.0)):
    k = np.arange(n_side, dtype=np.float64) - (n_side - 1) / 2.0
    g = np.stack(np.meshgrid(k, k, k, indexing="ij"), axis=-1).reshape(-1, 3)
    g = g[rng.random(len(g)) < keep]
    return (g * spacing + np.array(offset)).astype(F)


def random_dirs(rng, n):
    v = rng.normal(size=(n, 3))
    return (v / np.linalg.norm(v, axis=1)[:, None]).astype(F)


# ---- seed 003 (steer): Boids.compute, ForceCS + IntegrateCS -----------------------------
STEER = dict(sep_radius=1.0, ali_radius=2.0, coh_radius=2.0, sep_weight=3.0, ali_weight=1.0,
             coh_weight=1.0, max_speed=5.0, max_steer=0.5, wall_weight=10.0, wall_size=5.0)


def steer_step(P, V, q, plant):
    sep_r = F(q["sep_radius"] * (1.25 if plant == "radius" else 1.0))
    ali_w = F(q["ali_weight"] * (1.6 if plant == "weight" else 1.0))
    D = P[:, None, :] - P[None, :, :]          # diff = P_position - N_position
    dist = np.sqrt(dot(D, D))
    near_sep = dist < sep_r if plant in ("strict", "strict-on") else dist <= sep_r
    ms = (dist > 0) & near_sep
    ma = (dist > 0) & (dist <= F(q["ali_radius"]))
    mc = (dist > 0) & (dist <= F(q["coh_radius"]))
    repulse = safe_div(normalize(D), dist[..., None])
    sep_sum = masked_sum(ms, repulse)
    ali_sum = masked_sum(ma, np.broadcast_to(V[None, :, :], D.shape))
    coh_sum = masked_sum(mc, np.broadcast_to(P[None, :, :], D.shape))
    ms_n, ma_n, mc_n = ms.sum(1), ma.sum(1), mc.sum(1)
    max_speed, max_steer = F(q["max_speed"]), F(q["max_steer"])

    def steer_to(x, n, unit=True):
        s = limit((normalize(x) if unit else x) * max_speed - V, max_steer)
        return np.where((n > 0)[:, None], s, F(0)).astype(F)

    sep = steer_to(mean_or_zero(sep_sum, ms_n), ms_n)
    # "unnormalised": the mean velocity steered to without normalising it (issue 43)
    ali = steer_to(mean_or_zero(ali_sum, ma_n), ma_n, plant != "unnormalised")
    coh = steer_to(mean_or_zero(coh_sum, mc_n) - P, mc_n)
    force = ali * ali_w + coh * F(q["coh_weight"]) + sep * F(q["sep_weight"])
    if plant != "wall":
        half = F(q["wall_size"]) * F(0.5)
        wall = np.where(P < -half, F(1), F(0)) + np.where(P > half, F(-1), F(0))
        force = force + wall.astype(F) * F(q["wall_weight"])
    V2 = limit(V + force * DT, max_speed)
    return P + V2 * DT, V2


# ---- seed 000 (average): ForceCS + IntegrateCS of the fish-school post --------------------
AVERAGE = dict(sep_radius=1.75, ali_radius=3.5, coh_radius=3.5, sep_weight=16.0, ali_weight=12.0,
               coh_weight=6.0, max_speed=3.5, max_steer=1.5, wall_weight=10.0, wall_size=6.0)


def average_step(P, V, q, plant):
    coh_r = F(3.0 if plant == "radius" else q["coh_radius"])
    sep_w = F(12.0 if plant == "weight" else q["sep_weight"])
    D = P[:, None, :] - P[None, :, :]          # diffPosition = in - target
    dist = np.sqrt(dot(D, D))
    pos = dist > 0
    sep_r = F(q["sep_radius"])
    ms = pos & ((dist < sep_r) if plant == "strict" else (dist <= sep_r))
    ma = pos & (dist <= F(q["ali_radius"]))
    mc = pos & (dist <= coh_r)
    sep = mean_or_zero(masked_sum(ms, D), ms.sum(1))
    ali = mean_or_zero(masked_sum(ma, np.broadcast_to(V[None, :, :], D.shape)), ma.sum(1))
    coh_mean = mean_or_zero(masked_sum(mc, np.broadcast_to(P[None, :, :], D.shape)), mc.sum(1))
    force = np.zeros_like(P)
    force = force + np.where((ms.sum(1) > 0)[:, None], sep * sep_w, F(0))
    force = force + np.where((ma.sum(1) > 0)[:, None], ali * F(q["ali_weight"]), F(0))
    force = force + np.where((mc.sum(1) > 0)[:, None], (coh_mean - P) * F(q["coh_weight"]), F(0))
    force = limit(force.astype(F), F(q["max_steer"]))
    if plant != "wall":
        half = F(q["wall_size"]) * F(0.5)
        wall = np.where(P < -half, F(1), F(0)) + np.where(P > half, F(-1), F(0))
        force = force + wall.astype(F) * F(q["wall_weight"])
    V2 = limit(V + force * DT, F(q["max_speed"]))
    return P + V2 * DT, V2


# ---- seed 001 (heading): UpdateMoving, one radius, strict d < R -------------------------
HEADING = dict(neighbor_radius=2.0, sep_weight=1.0, ali_weight=1.0, coh_weight=1.0,
               target_weight=1.0, rotate_speed=3.0, move_speed=4.0)


def heading_step(P, V, q, plant, targets):
    R = F(2.4 if plant == "radius" else q["neighbor_radius"])
    coh_w = F(0.5 if plant == "weight" else q["coh_weight"])
    tgt_w = F(0.0 if plant == "targets" else q["target_weight"])
    n = len(P)
    direction = normalize(V)                   # the rotation buffer holds dir = v / |v|
    Dv = P[None, :, :] - P[:, None, :]         # distanceVector = other - pos
    dist = length(Dv)
    other = ~np.eye(n, dtype=bool)             # if (i == id.x) continue
    m = other & ((dist <= R) if plant == "strict" else (dist < R))
    push = -normalize(Dv) * safe_div(R - dist, R)[..., None]
    sep = masked_sum(m, push)
    ali = masked_sum(m, np.broadcast_to(direction[None, :, :], Dv.shape))
    coh = masked_sum(m, np.broadcast_to(P[None, :, :], Dv.shape))
    avg = (F(1) / np.maximum(m.sum(1), 1).astype(F))[:, None]
    sep = sep * (avg * F(q["sep_weight"]))
    ali = ali * (avg * F(q["ali_weight"]))
    coh = (coh * avg - P) * coh_w
    td = targets[None, :, :] - P[:, None, :]
    nearest = np.argmin(dot(td, td), axis=1)   # the first of equals
    force = (targets[nearest] - P) * tgt_w
    force = normalize(force + sep + ali + coh)
    s = F(q["rotate_speed"]) * DT
    new_dir = normalize(direction + (force - direction) * s)
    new_dir[:, 1] = np.clip(new_dir[:, 1], F(-0.5), F(0.5))
    new_dir = normalize(new_dir)
    speed = F(q["move_speed"])
    return P + new_dir * speed * DT, new_dir * speed


# ---- seed 002 (classic): the Unity CPU Boids, virtual wall boids ---------------------------
CLASSIC = dict(fov=5.0, min_speed=2.0, max_speed=5.0, w1=5.0, w2=2.0, w3=1.0,
               box_min=(-5.0, 0.0, -5.0), box_max=(5.0, 10.0, 5.0))


def classic_step(P, V, q, plant):
    fov = F(4.0 if plant == "radius" else q["fov"])
    w1, w2, w3 = F(q["w1"]), F(3.0 if plant == "weight" else q["w2"]), F(q["w3"])
    n = len(P)
    lo, hi = np.array(q["box_min"], dtype=F), np.array(q["box_max"], dtype=F)
    r1 = np.zeros_like(P)
    n1 = np.zeros(n, dtype=np.int64)
    if plant != "wall":
        # Up, Down, Left, Right, Forward, Back: (inward normal, signed distance inside)
        planes = [((0, -1, 0), hi[1] - P[:, 1]), ((0, 1, 0), P[:, 1] - lo[1]),
                  ((1, 0, 0), P[:, 0] - lo[0]), ((-1, 0, 0), hi[0] - P[:, 0]),
                  ((0, 0, -1), hi[2] - P[:, 2]), ((0, 0, 1), P[:, 2] - lo[2])]
        for normal, d in planes:
            nv = np.array(normal, dtype=F)
            virtual = P - d[:, None] * nv            # the virtual boid on the wall
            diff = virtual - P
            mag = length(diff)
            on = (d <= fov) & (mag > 0)
            term = -normalize(diff) * F(10.0) / (mag * mag)[:, None]
            r1 = r1 + np.where(on[:, None], term, F(0))
            n1 = n1 + on
    diff = P[None, :, :] - P[:, None, :]             # other - me
    mag = length(diff)
    other = ~np.eye(n, dtype=bool)
    m = other & ((mag < fov) if plant == "strict" else (mag <= fov))
    term = -normalize(diff) * safe_div(F(10.0), mag * mag)[..., None]
    r1 = (r1 + masked_sum(m, term)).astype(F)
    n1 = n1 + m.sum(1)
    rule1 = mean_or_zero(r1, n1)
    cnt = m.sum(1)
    rule2 = np.where((cnt > 0)[:, None],
                     mean_or_zero(masked_sum(m, np.broadcast_to(V[None], diff.shape)), cnt) - V,
                     F(0))
    rule3 = np.where((cnt > 0)[:, None],
                     mean_or_zero(masked_sum(m, np.broadcast_to(P[None], diff.shape)), cnt) - P,
                     F(0))
    acc = ((w1 * rule1 + w2 * rule2 + w3 * rule3) / ((w1 + w2) + w3)).astype(F)
    P2 = P + V * DT + F(0.5) * acc * DT * DT
    V2 = V + acc * DT
    speed = length(V2)
    clamped = np.clip(speed, F(q["min_speed"]), F(q["max_speed"]))
    V2 = (safe_div(V2, speed[:, None]) * clamped[:, None]).astype(F)
    return P2.astype(F), V2


# ---- seed 004 (fov): UpdateBoids of the vector-field avoidance post ------------------------
FOV = dict(coh_dist2=9.0, sep_dist2=1.0, ali_dist2=4.0, coh_angle=2.0, sep_angle=3.14159265,
           ali_angle=1.5, coh_force=0.5, sep_force=1.5, ali_force=1.0, max_force=1.0,
           min_speed=0.05, max_speed=0.15, boundary_force=1.0, boundary_range2=36.0)


def fov_step(P, V, q, plant):
    coh_d2 = F(6.25 if plant == "radius" else q["coh_dist2"])
    ali_f = F(1.4 if plant == "weight" else q["ali_force"])
    n = len(P)
    vec = P[None, :, :] - P[:, None, :]              # posY - posX
    sq = dot(vec, vec)
    with np.errstate(invalid="ignore"):
        cosang = dot(normalize(V)[:, None, :], normalize(vec))
        angle = np.arccos(np.clip(cosang, F(-1), F(1))).astype(F)
    other = ~np.eye(n, dtype=bool)
    mc = other & (sq < coh_d2) & (angle < F(q["coh_angle"]))
    msp = other & (sq < F(q["sep_dist2"])) & (angle < F(q["sep_angle"]))
    ali_d2 = F(q["ali_dist2"])
    ma = other & ((sq <= ali_d2) if plant == "strict" else (sq < ali_d2)) & \
        (angle < F(q["ali_angle"]))
    coh = np.where((mc.sum(1) > 0)[:, None],
                   (mean_or_zero(masked_sum(mc, np.broadcast_to(P[None], vec.shape)), mc.sum(1))
                    - P) * F(q["coh_force"]), F(0))
    sep = masked_sum(msp, safe_div(normalize(-vec), np.sqrt(sq)[..., None])) * F(q["sep_force"])
    ali = np.where((ma.sum(1) > 0)[:, None],
                   (mean_or_zero(masked_sum(ma, np.broadcast_to(V[None], vec.shape)), ma.sum(1))
                    - V) * ali_f, F(0))
    boundary = np.zeros_like(P)
    if plant != "wall":
        c = -P                                        # centre 0
        d2c = dot(c, c)
        out = d2c > F(q["boundary_range2"])
        b = -F(q["boundary_force"]) * P * safe_div(d2c - F(q["boundary_range2"]), d2c)[:, None]
        boundary = np.where(out[:, None], b, F(0))
    mf = F(q["max_force"])
    V2 = V + (limit(coh.astype(F), mf) + limit(sep, mf) + limit(ali.astype(F), mf) +
              boundary.astype(F)) * DT
    speed = length(V2)
    V2 = np.where((speed < F(q["min_speed"]))[:, None], F(q["min_speed"]) * normalize(V2),
                  np.where((speed > F(q["max_speed"]))[:, None], F(q["max_speed"]) * normalize(V2),
                           V2)).astype(F)
    return P + V2, V2


# ---- trajectories ------------------------------------------------------------------------

def run(step, P, V, *extra):
    states = [(P, V)]
    for _ in range(STEPS):
        P, V = step(P, V, *extra)
        assert P.dtype == F and V.dtype == F
        states.append((P, V))
    return states


def rows(P, V):
    return np.concatenate([P, V], axis=1).astype(F)


def write_unity(dirname, states, words=6, pos=3, vel=0):
    """Records of `words` float32 (the rest zero), position and velocity at those words."""
    os.makedirs(dirname, exist_ok=True)
    for k, (P, V) in enumerate(states):
        rec = np.zeros((len(P), words), dtype="<f4")
        rec[:, pos:pos + 3] = P
        rec[:, vel:vel + 3] = V
        rec.tofile(os.path.join(dirname, "frame_%04d.bin" % k))


def main():
    np.seterr(all="ignore")  # 0/0 and inf*0 of masked-out pairs: np.where drops them
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    cases = []
    variants = ["clean", "radius", "weight", "strict", "wall"]

    # steer (seed 003): Unity BoidData dumps (velocity, position), rows in buffer order
    rng = np.random.default_rng(3)
    P0 = lattice(rng, 13, 0.5, 0.25)   # neighbours inside sep_radius 1 and exactly on it
    V0 = (rng.uniform(-1.5, 1.5, size=P0.shape)).astype(F)
    expect = {"clean": "agrees", "radius": "rule differs: separation",
              "weight": "rule differs: alignment", "strict": "rule differs: separation",
              "wall": "rule differs: walls"}
    for v in variants:
        d = os.path.join(out, "steer", v)
        write_unity(d, run(steer_step, P0, V0, STEER, v))
        cases.append(("steer-" + v, expect[v],
                      ["--model", "steer", "--trajectory", d, "--set", "wall_size=5,5,5"]))
    # issue 43: the mean velocity not normalised (no single parameter: the closest term is
    # alignment, not the speed limit that rescales every term), and a strict separation test
    # on a lattice of spacing sep_radius, whose every separation neighbour sits on the radius
    # (leaving them out is leaving the term out: the radius test is named)
    d = os.path.join(out, "steer", "unnormalised")
    write_unity(d, run(steer_step, P0, V0, STEER, "unnormalised"))
    cases.append(("steer-unnormalised", "rule differs: no single parameter",
                  ["--model", "steer", "--trajectory", d, "--set", "wall_size=5,5,5"]))
    rng1 = np.random.default_rng(5)
    P1 = lattice(rng1, 9, 1.0, 0.5)
    V1 = rng1.uniform(-1.5, 1.5, size=P1.shape).astype(F)
    d = os.path.join(out, "steer", "strict-on")
    write_unity(d, run(steer_step, P1, V1, STEER, "strict-on"))
    cases.append(("steer-strict-on", "rule differs: separation",
                  ["--model", "steer", "--trajectory", d, "--set", "wall_size=5,5,5"]))

    # average (seed 000): one (T, N, 7) array, a shuffled row order per state, ids in column 7
    rng = np.random.default_rng(0)
    P0 = lattice(rng, 9, 0.875, 0.4)   # neighbours inside sep_radius 1.75 and exactly on it
    V0 = rng.uniform(-1.0, 1.0, size=P0.shape).astype(F)
    expect = {"clean": "agrees", "radius": "rule differs: cohesion",
              "weight": "rule differs: separation", "strict": "rule differs: separation",
              "wall": "rule differs: walls"}
    for v in variants:
        states = run(average_step, P0, V0, AVERAGE, v)
        n = len(P0)
        arr = np.zeros((len(states), n, 7), dtype="<f4")
        for k, (P, V) in enumerate(states):
            perm = rng.permutation(n)
            arr[k, :, :6] = rows(P, V)[perm]
            arr[k, :, 6] = perm + 1000
        path = os.path.join(out, "average-%s.npy" % v)
        np.save(path, arr)
        cases.append(("average-" + v, expect[v],
                      ["--model", "average", "--trajectory", path, "--set", "wall_size=6,6,6"]))

    # heading (seed 001): numbered (N, 6) files, shuffled rows, an ids file, its own targets
    rng = np.random.default_rng(1)
    P0 = lattice(rng, 8, 1.0, 0.6)
    V0 = (random_dirs(rng, len(P0)) * F(4.0)).astype(F)
    targets = rng.uniform(-10, 10, size=(4, 3)).astype(F)
    tpath = os.path.join(out, "heading-targets.npy")
    np.save(tpath, targets.astype("<f4"))
    variants_h = ["clean", "radius", "weight", "strict", "targets"]
    expect = {"clean": "agrees", "radius": "rule differs: neighbours",
              "weight": "rule differs: cohesion", "strict": "rule differs: neighbours",
              "targets": "rule differs: targets"}
    for v in variants_h:
        d = os.path.join(out, "heading", v)
        os.makedirs(d, exist_ok=True)
        states = run(heading_step, P0, V0, HEADING, v, targets)
        n = len(P0)
        ids = np.zeros((len(states), n), dtype="<i8")
        for k, (P, V) in enumerate(states):
            perm = rng.permutation(n)
            np.save(os.path.join(d, "state_%03d.npy" % k), rows(P, V)[perm].astype("<f4"))
            ids[k] = perm
        ipath = os.path.join(out, "heading-%s-ids.npy" % v)
        np.save(ipath, ids)
        cases.append(("heading-" + v, expect[v],
                      ["--model", "heading", "--trajectory", d, "--ids", ipath, "--targets", tpath,
                       "--set", "target_count=4"]))

    # classic (seed 002): one (T, N, 6) array; the lattice is off the walls' fov by half a cell
    rng = np.random.default_rng(2)
    P0 = lattice(rng, 10, 1.0, 0.3, offset=(0.0, 5.0, 0.0))
    V0 = (random_dirs(rng, len(P0)) * F(2.0)).astype(F)
    expect = {"clean": "agrees", "radius": "rule differs: neighbours",
              "weight": "rule differs: alignment", "strict": "rule differs: neighbours",
              "wall": "rule differs: walls"}
    for v in variants:
        states = run(classic_step, P0, V0, CLASSIC, v)
        arr = np.stack([rows(P, V) for P, V in states]).astype("<f4")
        path = os.path.join(out, "classic-%s.npy" % v)
        np.save(path, arr)
        cases.append(("classic-" + v, expect[v],
                      ["--model", "classic", "--trajectory", path, "--set", "box_min=-5,0,-5",
                       "--set", "box_max=5,10,5"]))

    # fov (seed 004): Particle records (float3 position, float4 colour, float scale, float3
    # velocity: 11 words), rows in buffer order
    rng = np.random.default_rng(4)
    P0 = lattice(rng, 11, 1.0, 0.3)
    V0 = (random_dirs(rng, len(P0)) * F(0.1)).astype(F)
    expect = {"clean": "agrees", "radius": "rule differs: cohesion",
              "weight": "rule differs: alignment", "strict": "rule differs: alignment",
              "wall": "rule differs: walls"}
    for v in variants:
        d = os.path.join(out, "fov", v)
        write_unity(d, run(fov_step, P0, V0, FOV, v), words=11, pos=0, vel=8)
        cases.append(("fov-" + v, expect[v],
                      ["--model", "fov", "--trajectory", d, "--layout", "11:0:8",
                       "--set", "boundary_range2=36"]))

    with open(os.path.join(out, "cases.tsv"), "w") as f:
        for name, exp, args in cases:
            f.write("\t".join([name, exp] + args) + "\n")


if __name__ == "__main__":
    main()
