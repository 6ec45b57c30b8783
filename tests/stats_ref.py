#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Reference flock statistics for test_stats: brute force O(N^2) in NumPy, written from the
definitions in include/shoal/stats.h (not from src/sim/stats.c).

    stats_ref.py STATE.npy R [R ...]        one line "key value" per statistic and radius
    stats_ref.py --lattice NX NY NZ S R     mean neighbour count of the lattice i*S (exact,
                                            by counting lattice offsets, for large N)

Pairs: d2 = (dx*dx + dy*dy) + dz*dz in float64 of the float32 coordinates, neighbours when
d2 <= r*r. Exit 77 (a meson skip) when NumPy is missing."""
import sys

try:
    import numpy as np
except ImportError:
    sys.exit(77)


def pair_d2(p, i0, i1):
    """d2 of rows i0..i1 against all rows, float64, the library's order of operations."""
    q = p[i0:i1]
    dx = q[:, 0:1] - p[None, :, 0]
    dy = q[:, 1:2] - p[None, :, 1]
    dz = q[:, 2:3] - p[None, :, 2]
    return (dx * dx + dy * dy) + dz * dz


def groups(adj):
    """Connected components of the adjacency matrix, by breadth-first search."""
    n = len(adj)
    seen = np.zeros(n, dtype=bool)
    sizes = []
    for s in range(n):
        if seen[s]:
            continue
        seen[s] = True
        front, size = np.array([s]), 1
        while len(front):
            nb = adj[front].any(axis=0) & ~seen
            seen |= nb
            front = np.nonzero(nb)[0]
            size += len(front)
        sizes.append(size)
    return len(sizes), max(sizes) / n


def stats(rows, radii):
    rows = rows.astype(np.float64)
    fin = np.all(np.isfinite(rows), axis=1)
    out = {"count": len(rows), "nonfinite": int(np.count_nonzero(~fin))}
    rows = rows[fin]
    p, v = rows[:, :3], rows[:, 3:]
    n = len(p)
    c = p.mean(axis=0)
    out["centroid"] = c
    out["extent"] = p.max(axis=0) - p.min(axis=0)
    r = p - c
    out["radius_of_gyration"] = np.sqrt(np.mean(np.sum(r * r, axis=1)))
    speed = np.sqrt(np.sum(v * v, axis=1))
    out["mean_speed"] = speed.mean()
    mv = speed > 0
    out["polarisation"] = (np.linalg.norm((v[mv] / speed[mv, None]).sum(axis=0)) / mv.sum()
                           if mv.any() else 0.0)
    den = np.sum(np.sqrt(np.sum(r * r, axis=1)) * speed)
    out["milling"] = np.linalg.norm(np.cross(r, v).sum(axis=0)) / den if den > 0 else 0.0
    nn = np.empty(n)
    for i0 in range(0, n, 512):
        d2 = pair_d2(p, i0, min(n, i0 + 512))
        d2[np.arange(d2.shape[0]), np.arange(i0, i0 + d2.shape[0])] = np.inf
        nn[i0:i0 + d2.shape[0]] = d2.min(axis=1)
    out["mean_nn_distance"] = np.sqrt(nn).mean() if n >= 2 else float("nan")
    lines = []
    d2 = pair_d2(p, 0, n)  # test states are small: all pairs at once
    for rad in radii:
        adj = d2 <= rad * rad
        cnt = int(np.count_nonzero(adj)) - n
        g, big = groups(adj)
        lines.append((rad, cnt / n, g, big))
    return out, lines


def lattice(nx, ny, nz, s, rad):
    """Points i*s on an nx x ny x nz lattice: each offset (a, b, c) within the radius joins
    (nx-|a|)(ny-|b|)(nz-|c|) ordered pairs."""
    k = int(rad / s) + 1
    a = np.arange(-k, k + 1, dtype=np.float64) * np.float64(np.float32(s))
    total = 0
    for i in range(-k, k + 1):
        for j in range(-k, k + 1):
            dx, dy = a[i + k], a[j + k]
            d2 = (dx * dx + dy * dy) + a * a
            m = (d2 <= rad * rad) & (np.abs(np.arange(-k, k + 1)) < nz)
            if abs(i) >= nx or abs(j) >= ny:
                continue
            cs = np.arange(-k, k + 1)[m]
            total += int(((nx - abs(i)) * (ny - abs(j)) * (nz - np.abs(cs))).sum())
    n = nx * ny * nz
    return (total - n) / n


def main():
    if sys.argv[1] == "--lattice":
        nx, ny, nz = (int(x) for x in sys.argv[2:5])
        print("mean_neighbors %.17g" % lattice(nx, ny, nz, float(sys.argv[5]), float(sys.argv[6])))
        return
    rows = np.load(sys.argv[1])
    out, lines = stats(rows, [float(x) for x in sys.argv[2:]])
    for k, val in out.items():
        if np.ndim(val):
            for i, x in enumerate(val):
                print("%s_%d %.17g" % (k, i, x))
        else:
            print("%s %.17g" % (k, val))
    for rad, cnt, g, big in lines:
        print("radius %.17g mean_neighbors %.17g group_count %d largest_group_fraction %.17g" %
              (rad, cnt, g, big))


if __name__ == "__main__":
    main()
