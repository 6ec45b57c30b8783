#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Run the ABMFrameworksComparison "Flocking" workload in other frameworks, beside shoal.

The workload (Flocking/DECLARATION.md of JuliaDynamics/ABMFrameworksComparison; the rules in
docs/SCIENCE.md, "flockers"): 2D periodic, speed 1, separation 1, cohere 0.03, separate 0.015,
match 0.05, 100 steps; the small case 200 birds in 100 x 100 with visual distance 5, the large
case 400 birds in 150 x 150 with visual distance 15, and the large case's density scaled to N
birds: L = 150 sqrt(N / 400), visual distance 15.

Nothing of the other frameworks is part of shoal or built by this script: give it the paths of
copies you built yourself (docs/SCIENCE.md, "Running the frameworks beside shoal", says how we
did). It only runs them and prints one table:

    tools/abm_compare.py --mason-cp MASON.jar:CLASSDIR --mesa-path MESA_SRC \\
        --mesa-model ABM/Flocking/Mesa --cases small,large,10000 --repeats 5 [--json OUT]

  --mason-cp   a class path holding mason.22.jar and the project's Flocking_small,
               Flocking_large, Flocker_* classes compiled against it; the scaled cases need a
               class (--mason-scaled-class, default Flocking_scaled) that extends
               Flocking_large, takes -Dflock.n, -Dflock.size, -Dflock.vision and prints
               "Polarisation: X" after each job.
  --mesa-path  the root of a Mesa source tree (3.2 runs on Debian 12's Python 3.11 with
               Debian's numpy, pandas, scipy and tqdm); --mesa-model the project's
               Flocking/Mesa directory (BoidFlockers).

Timings: each framework times only the steps (MASON's own JobTime runs from the end of
start() to finish(); the Mesa driver times the model's construction apart). A figure is the
median over --repeats runs of the wall time per 100 steps; the CPU time per 100 steps is given
beside it (MASON: the whole JVM's CPU time divided by the runs, so JVM start and JIT
compilation are in it; Mesa: process time of the steps). Runs of fewer than 100 steps
(--steps-at N=S, for the large N) are scaled to 100 and marked "x". The 1-minute load average
is taken before and after each figure: on a loaded machine the wall times are the load's, the
CPU times closer to the framework's own. Polarisation is |mean unit heading| after the run
(median over runs).

shoal's side is added once its `flockers` model exists (issue 39)."""
import argparse
import json
import math
import os
import re
import resource
import statistics
import subprocess
import sys
import time

MESA_DRIVER = r"""
import json, math, sys, time
mesa_path, model_dir, n, size, vision, steps, repeats, seed = sys.argv[1:9]
sys.path.insert(0, mesa_path)
sys.path.insert(0, model_dir)
from Flocking import BoidFlockers
import numpy as np
out = []
for r in range(int(repeats)):
    t0 = time.perf_counter()
    m = BoidFlockers(int(seed) + r, int(n), float(size), float(size), float(vision))
    t1 = time.perf_counter()
    c0 = time.process_time()
    for _ in range(int(steps)):
        m.step()
    c1 = time.process_time()
    t2 = time.perf_counter()
    d = np.array([a.direction for a in m.agents], dtype=float)
    d /= np.linalg.norm(d, axis=1)[:, None]
    out.append({"setup_s": t1 - t0, "wall_s": t2 - t1, "cpu_s": c1 - c0,
                "polarisation": float(np.linalg.norm(d.mean(axis=0)))})
print(json.dumps(out))
"""


def case_geometry(case):
    """(N, L, visual distance) of a case name: small, large or a bird count."""
    if case == "small":
        return 200, 100.0, 5.0
    if case == "large":
        return 400, 150.0, 15.0
    n = int(case)
    if n < 1:
        raise ValueError(f"case {case}: a bird count must be at least 1")
    return n, 150.0 * math.sqrt(n / 400.0), 15.0


def load1():
    return os.getloadavg()[0]


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_mason(args, case, steps, repeats):
    n, size, vision = case_geometry(case)
    if case in ("small", "large"):
        cls, props = ("Flocking_small" if case == "small" else "Flocking_large"), []
    else:
        cls = args.mason_scaled_class
        props = [f"-Dflock.n={n}", f"-Dflock.size={size!r}", f"-Dflock.vision={vision!r}"]
    cmd = [args.java, "-cp", args.mason_cp, *props, cls, "-seed", str(args.seed), "-for",
           str(steps), "-repeat", str(repeats), "-quiet"]
    c0 = children_cpu()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    cpu = children_cpu() - c0
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()[-400:]}")
    walls = [int(x) * 1e-9 for x in re.findall(r"JobTime: (\d+)", p.stdout)]
    pols = [float(x) for x in re.findall(r"Polarisation: ([-0-9.eE]+)", p.stdout)]
    if len(walls) != repeats:
        raise RuntimeError(f"{' '.join(cmd)}: {len(walls)} JobTime lines, wanted {repeats}")
    return {"wall_s": walls, "cpu_s": [cpu / repeats] * repeats, "polarisation": pols,
            "command": " ".join(cmd)}


def run_mesa(args, case, steps, repeats):
    n, size, vision = case_geometry(case)
    cmd = [sys.executable, "-c", MESA_DRIVER, args.mesa_path, args.mesa_model, str(n),
           repr(size), repr(vision), str(steps), str(repeats), str(args.seed)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout,
                       cwd=args.mesa_model)
    if p.returncode != 0:
        raise RuntimeError(f"Mesa {case}: exit {p.returncode}: {p.stderr.strip()[-400:]}")
    runs = json.loads(p.stdout.strip().splitlines()[-1])
    return {"wall_s": [r["wall_s"] for r in runs], "cpu_s": [r["cpu_s"] for r in runs],
            "setup_s": [r["setup_s"] for r in runs],
            "polarisation": [r["polarisation"] for r in runs],
            "command": f"BoidFlockers(seed, {n}, {size!r}, {size!r}, {vision!r}) x {steps} steps"}


def parse_steps_at(items):
    out = {}
    for it in items or []:
        k, _, v = it.partition("=")
        if not v or int(v) < 1:
            raise SystemExit(f"--steps-at {it}: want CASE=STEPS, STEPS >= 1")
        out[k] = int(v)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mason-cp", help="class path: mason.22.jar and the compiled classes")
    ap.add_argument("--mason-scaled-class", default="Flocking_scaled")
    ap.add_argument("--java", default="java")
    ap.add_argument("--mesa-path", help="root of a Mesa source tree (3.2)")
    ap.add_argument("--mesa-model", help="the project's Flocking/Mesa directory")
    ap.add_argument("--cases", default="small,large", help="small, large and bird counts")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--steps-at", action="append", metavar="CASE=STEPS",
                    help="fewer steps for a case (scaled to 100 in the table)")
    ap.add_argument("--repeats-at", action="append", metavar="CASE=RUNS")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--timeout", type=float, default=7200)
    ap.add_argument("--json", help="write every run's figures here")
    args = ap.parse_args()
    if not args.mason_cp and not (args.mesa_path and args.mesa_model):
        ap.error("give --mason-cp and/or --mesa-path with --mesa-model")
    steps_at = parse_steps_at(args.steps_at)
    repeats_at = parse_steps_at(args.repeats_at)
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    for c in cases:
        case_geometry(c)
    runners = []
    if args.mason_cp:
        runners.append(("MASON 22", run_mason))
    if args.mesa_path and args.mesa_model:
        runners.append(("Mesa", run_mesa))

    rows, record = [], []
    hdr = (f"{'framework':<9} {'case':>7} {'N':>7} {'L':>7} {'runs':>4} {'steps':>5} "
           f"{'wall/100 steps (s)':>19} {'cpu/100 (s)':>11} {'polar.':>6} {'load before/after':>17}")
    print(hdr, flush=True)
    for case in cases:
        n, size, vision = case_geometry(case)
        steps = steps_at.get(case, args.steps)
        repeats = repeats_at.get(case, args.repeats)
        for name, fn in runners:
            before = load1()
            try:
                r = fn(args, case, steps, repeats)
            except (RuntimeError, subprocess.TimeoutExpired, OSError) as e:
                print(f"{name:<9} {case:>7}: failed: {e}", flush=True)
                continue
            after = load1()
            scale = 100.0 / steps
            wall = statistics.median(r["wall_s"]) * scale
            cpu = statistics.median(r["cpu_s"]) * scale
            pol = statistics.median(r["polarisation"]) if r["polarisation"] else float("nan")
            mark = "" if steps >= 100 else "x"
            print(f"{name:<9} {case:>7} {n:>7} {size:>7.1f} {repeats:>4} {steps:>5} "
                  f"{wall:>18.3f}{mark:1} {cpu:>11.3f} {pol:>6.3f} {before:>8.1f}/{after:<8.1f}",
                  flush=True)
            record.append({"framework": name, "case": case, "n": n, "size": size,
                           "vision": vision, "steps": steps, "repeats": repeats,
                           "wall_per_100_median_s": wall, "cpu_per_100_median_s": cpu,
                           "polarisation_median": pol, "load_before": before,
                           "load_after": after, "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
                           **r})
    if args.json:
        with open(args.json + ".tmp", "w") as f:
            json.dump(record, f, indent=1)
        os.replace(args.json + ".tmp", args.json)


if __name__ == "__main__":
    main()
