#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Vicsek et al. (1995)'s critical exponent beta from longer runs than the Fig. 2a notebook's.

v_a = |sum of velocities| / (N v) is sampled every EVERY steps after BURN steps, for each noise
eta of a grid around the transition and each seed (the paper's start: uniform positions in the
periodic square, uniform headings; the seed also keys shoal's noise, so a run repeats to the
bit). Per eta: the seeds' mean and spread of v_a and the susceptibility N var(v_a). Then beta,
the slope of log v_a against log((eta_c - eta) / eta_c), two ways:
  peak: eta_c where the susceptibility peaks, the fit over 0 < (eta_c - eta) / eta_c <= WINDOW
        (the notebook's method; eta_c one grid step either side in brackets);
  and the same fit for every eta_c of the grid from the peak on: where the data leave eta_c
        loose (a transition smeared by the finite size), this shows how far beta moves with it.
Usage: PYTHONPATH=build-release/src/python tools/vicsek_beta.py [--sizes 4000:31.6] \\
         [--etas 1.5:3.5:0.1] [--seeds 4] [--steps 12000] [--burn 4000] [--jobs 2] [--csv F]
       tools/vicsek_beta.py --small   (a few seconds: what the test suite runs)
docs/SCIENCE.md quotes the full run (docs/results/2026-11-28-vicsek-beta.md)."""

import argparse
import multiprocessing
import os
import sys
import time

try:
    import numpy as np
except ImportError:
    sys.exit("tools/vicsek_beta.py: NumPy is missing (Debian's python3-numpy; run /usr/bin/python3)")
try:
    import shoal
except ImportError:
    sys.exit("tools/vicsek_beta.py: the shoal package is not importable "
             "(PYTHONPATH=build-release/src/python, or install it: docs/PYTHON.md)")

SPEED, RADIUS = 0.03, 1.0


def run_one(job):
    """(n, L, eta, seed, steps, burn, every, threads) -> (n, L, eta, seed, mean v_a, var v_a)"""
    n, L, eta, seed, steps, burn, every, threads = job
    rng = np.random.default_rng(seed)
    theta = rng.uniform(0, 2 * np.pi, n)
    state = np.zeros((n, 6), np.float32)
    state[:, :2] = rng.uniform(0, L, (n, 2))
    state[:, 3], state[:, 4] = SPEED * np.cos(theta), SPEED * np.sin(theta)
    sim = shoal.Simulation(model="vicsek", state=state, seed=seed, threads=threads, dt=1.0,
                           params={"noise": eta, "speed": SPEED, "radius": RADIUS, "dims": 2,
                                   "periodic": 1, "world_size": (L, L, 0),
                                   "world_center": (L / 2, L / 2, 0)})
    sim.step(burn)
    samples = []
    for _ in range((steps - burn) // every):
        sim.step(every)
        v = sim.velocities[:, :2].astype(np.float64)
        samples.append(np.linalg.norm(v.sum(axis=0)) / (n * SPEED))
    return n, L, eta, seed, float(np.mean(samples)), float(np.var(samples))


def fit(eta, m, eta_c, n, window):
    """beta, points, log-log rms residual of the fit below eta_c (NaN with fewer than 3)"""
    d = (eta_c - eta) / eta_c
    sel = (d > 0) & (d <= window) & (m > 2 * np.sqrt(np.pi / (4 * n)))
    if sel.sum() < 3:
        return float("nan"), int(sel.sum()), float("nan")
    x, y = np.log(d[sel]), np.log(m[sel])
    k, c = np.polyfit(x, y, 1)
    return float(k), int(sel.sum()), float(np.sqrt(np.mean((y - (k * x + c)) ** 2)))


def grid(text):
    a, b, s = (float(t) for t in text.split(":"))
    return [round(v, 6) for v in np.arange(a, b + s / 2, s)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="4000:31.6", help="N:L,... (density 4: 4000:31.6)")
    ap.add_argument("--etas", default="1.5:3.5:0.1", help="first:last:step")
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--steps", type=int, default=12000)
    ap.add_argument("--burn", type=int, default=4000)
    ap.add_argument("--every", type=int, default=50)
    ap.add_argument("--window", type=float, default=0.5)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--csv", help="write every run's row here")
    ap.add_argument("--small", action="store_true", help="a few seconds (the test suite's)")
    ap.add_argument("--from-csv", help="analyse the rows of an earlier --csv instead of running")
    a = ap.parse_args()
    if a.small:
        a.sizes, a.etas, a.seeds, a.steps, a.burn, a.every = "100:5", "0.5:5:0.5", 2, 400, 200, 20
    sizes = [(int(s.split(":")[0]), float(s.split(":")[1])) for s in a.sizes.split(",")]
    etas = grid(a.etas)
    if a.seeds < 1 or a.burn < 0 or a.every < 1 or a.steps - a.burn < 2 * a.every or len(etas) < 3:
        sys.exit("tools/vicsek_beta.py: need seeds >= 1, 3 or more etas and steps - burn >= 2 x every")
    jobs = [(n, L, e, s, a.steps, a.burn, a.every, 1) for n, L in sizes for e in etas
            for s in range(1, a.seeds + 1)]
    t0 = time.perf_counter()
    if a.from_csv:
        d = np.genfromtxt(a.from_csv, delimiter=",", names=True, ndmin=1)
        rows = [(int(r["n"]), float(r["L"]), float(r["eta"]), int(r["seed"]), float(r["va_mean"]),
                 float(r["va_var"])) for r in d]
        sizes = sorted({(r[0], r[1]) for r in rows})
        etas = sorted({r[2] for r in rows})
        a.seeds = len({r[3] for r in rows})
    elif a.jobs > 1:
        with multiprocessing.Pool(a.jobs) as pool:
            rows = pool.map(run_one, jobs)
    else:
        rows = [run_one(j) for j in jobs]
    if a.from_csv:
        print(f"{len(rows)} runs ({a.seeds} seeds x {len(etas)} etas x {len(sizes)} sizes) "
              f"from {a.from_csv}")
    else:
        print(f"{len(rows)} runs ({a.seeds} seeds x {len(etas)} etas x {len(sizes)} sizes), "
              f"{a.steps} steps each, v_a averaged after {a.burn} every {a.every}: "
              f"{time.perf_counter() - t0:.0f} s on {a.jobs} processes")
    if a.csv and not a.from_csv:
        with open(a.csv + ".tmp", "w") as f:
            f.write("n,L,eta,seed,va_mean,va_var\n")
            for r in rows:
                f.write("%d,%g,%g,%d,%.6f,%.6g\n" % r)
        os.replace(a.csv + ".tmp", a.csv)
    problems = []
    for n, L in sizes:
        m = np.array([np.mean([r[4] for r in rows if r[:3] == (n, L, e)]) for e in etas])
        sd = np.array([np.std([r[4] for r in rows if r[:3] == (n, L, e)]) for e in etas])
        chi = np.array([n * np.mean([r[5] for r in rows if r[:3] == (n, L, e)]) for e in etas])
        eta = np.array(etas)
        print(f"N = {n}, L = {L:g}:")
        print("  eta  " + " ".join(f"{e:6.2f}" for e in eta))
        print("  v_a  " + " ".join(f"{v:6.3f}" for v in m))
        print("  sd   " + " ".join(f"{v:6.3f}" for v in sd))
        print("  chi  " + " ".join(f"{v:6.2f}" for v in chi))
        k = int(np.argmax(chi))
        step = float(eta[1] - eta[0])
        peak = [fit(eta, m, eta[k] + dx, n, a.window) for dx in (-step, 0.0, step)]
        print(f"  peak: eta_c = {eta[k]:.2f} (N var v_a = {chi[k]:.2f}); beta = {peak[1][0]:.3f} "
              f"over {peak[1][1]} points (eta_c -/+ {step:g}: {peak[0][0]:.3f}, {peak[2][0]:.3f})")
        # beta against where eta_c is placed: from the susceptibility's peak to the grid's end
        # (when the data do not fix eta_c, neither do they fix beta: this shows by how much)
        table = []
        for c in eta[k:]:
            f = fit(eta, m, c, n, a.window)
            if not np.isnan(f[0]):
                table.append((float(c), f[0], f[1]))
        print("  beta against eta_c: " + ", ".join(f"{c:.2f}: {b:.3f} ({p})" for c, b, p in table))
        b = peak[1][0]
        # what holds at any size (the --small run checks it: the test suite's): ordered at the
        # smallest noise, near the disordered floor at the largest, a finite exponent
        if not (m[0] > 0.9 and m[-1] < 0.5 and 0 < b < 2):
            problems.append(f"N = {n}: v_a {m[0]:.3f} at eta {eta[0]:g}, {m[-1]:.3f} at "
                            f"{eta[-1]:g}, beta {b:.3f} (expected > 0.9, < 0.5, in (0, 2))")
    if a.small and problems:
        sys.exit("tools/vicsek_beta.py: " + "; ".join(problems))


if __name__ == "__main__":
    main()
