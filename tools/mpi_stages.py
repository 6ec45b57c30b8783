#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Where a rank's step goes (issue 42): the per-rank profile that `shoal step --stats` prints
under mpirun against one process stepping the same work (N/R boids, the same threads), stage
by stage, as a Markdown table. The difference is the work MPI adds.

usage: mpi_stages.py MPI_STATS.txt ONE_STATS.txt STEPS [--label TEXT]

MPI_STATS.txt: the stderr of `mpirun -np R shoal step ... --stats` (its "per rank, ms per
step" table); ONE_STATS.txt: the stderr of `shoal step ... --stats` on N/R boids (its
"sim/<stage>" lines, whose totals are divided by STEPS). Prints one row per stage: one
process, the mean and the slowest rank, and slowest - one process; then the step."""
import argparse
import sys

SIM = ["grid_assign", "grid_scan", "grid_scatter", "forces"]


def mpi_table(path):
    """{column: [value per rank]} of the per-rank table."""
    lines = open(path).read().splitlines()
    for i, line in enumerate(lines):
        w = line.split()
        if w[:5] == ["rank"] + SIM:
            head = w
            rows = []
            for row in lines[i + 1:]:
                v = row.split()
                if len(v) != len(head) or not v[0].isdigit():
                    break
                rows.append([float(x) for x in v])
            return {h: [r[k] for r in rows] for k, h in enumerate(head)}
    sys.exit(f"{path}: no per-rank table (shoal step --stats under mpirun)")


def one_process(path, steps):
    """{stage: ms per step} from the sim's profile table."""
    out = {}
    for line in open(path):
        w = line.split()
        if w and w[0].startswith("sim/") and len(w) >= 3:
            out[w[0][4:]] = float(w[2]) / steps
    if not out:
        sys.exit(f"{path}: no sim/<stage> lines (shoal step --stats)")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("mpi")
    ap.add_argument("one")
    ap.add_argument("steps", type=int)
    ap.add_argument("--label", default="")
    a = ap.parse_args()
    t = mpi_table(a.mpi)
    one = one_process(a.one, a.steps)
    ranks = len(t["rank"])
    print(f"{a.label}{' ' if a.label else ''}({ranks} ranks; ms per step)\n")
    print("| stage | one process | ranks: mean | ranks: slowest | slowest - one process |")
    print("| --- | --- | --- | --- | --- |")
    stages = [h for h in t if h not in ("rank", "step", "boids", "halo", "file_io_ms")]
    tot_one = tot_max = 0.0
    for s in stages:
        v = t[s]
        o = one.get(s, 0.0)
        mean, mx = sum(v) / len(v), max(v)
        tot_one += o
        tot_max += mx
        if o == 0.0 and mx < 0.0005:
            continue
        print(f"| {s} | {o:.3f} | {mean:.3f} | {mx:.3f} | {mx - o:+.3f} |")
    step = t["step"]
    print(f"| **step** (loop / steps) | {tot_one:.3f} | {sum(step) / len(step):.3f} | "
          f"{max(step):.3f} | {max(step) - tot_one:+.3f} |")
    print(f"\nboids per rank: {', '.join(str(int(x)) for x in t['boids'])}; "
          f"halo sent per rank and step: {', '.join(str(int(x)) for x in t['halo'])}")


if __name__ == "__main__":
    main()
