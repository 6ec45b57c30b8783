#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Plot `shoal diverge` CSV files: the position error between the two runs per step (log
scale), and the flock statistics of both runs (polarisation, nearest-neighbour distance),
which stay alike while the per-boid error grows when two runs are the same kind of school.
Needs numpy and matplotlib (Debian: python3-numpy python3-matplotlib).
usage: diverge_plot.py OUT.png RUN.csv [RUN2.csv ...] [--title T]"""
import argparse
import os
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
except ImportError as e:  # one line: which interpreter, what it lacks, what to run instead
    fix = ("install python3-numpy and python3-matplotlib (tools/deps.sh)"
           if sys.executable == "/usr/bin/python3" else
           "run it with Debian's /usr/bin/python3 (python3-numpy, python3-matplotlib)")
    print(f"diverge_plot.py: {sys.executable} has no {e.name}: {fix}", file=sys.stderr)
    sys.exit(77)


def load(path):
    with open(path) as f:
        head = f.readline().strip().split(",")
    data = np.genfromtxt(path, delimiter=",", skip_header=1, missing_values="",
                         filling_values=np.nan)
    data = np.atleast_2d(data)
    return {k: data[:, i] for i, k in enumerate(head)}


ap = argparse.ArgumentParser(description=__doc__)
ap.add_argument("png")
ap.add_argument("csv", nargs="+")
ap.add_argument("--title", default="shoal diverge")
a = ap.parse_args()

fig, ax = plt.subplots(1, 3, figsize=(16, 4.5))
for path in a.csv:
    d = load(path)
    name = os.path.splitext(os.path.basename(path))[0]
    step = d["step"]
    # zero error cannot be drawn on a log axis: mark it at the floor
    floor = 1e-12
    ax[0].semilogy(step, np.maximum(d["pos_rms_abs"], floor), label=f"{name} rms")
    ax[0].semilogy(step, np.maximum(d["pos_max_abs"], floor), "--", label=f"{name} max")
    s = ~np.isnan(d["a_polarisation"])
    ax[1].plot(step[s], d["a_polarisation"][s], label=f"{name} A")
    ax[1].plot(step[s], d["b_polarisation"][s], "--", label=f"{name} B")
    ax[2].plot(step[s], d["a_nn"][s], label=f"{name} A")
    ax[2].plot(step[s], d["b_nn"][s], "--", label=f"{name} B")
ax[0].set_title("position error between runs (1e-12 = identical)")
ax[0].set_xlabel("step")
ax[1].set_title("polarisation |mean(v/|v|)|")
ax[1].set_xlabel("step")
ax[2].set_title("mean nearest-neighbour distance")
ax[2].set_xlabel("step")
for x in ax:
    x.grid(True, alpha=0.3)
    x.legend(fontsize=7)
fig.suptitle(a.title)
fig.tight_layout()
# a temporary beside the target, then a rename: never a half-written PNG
tmp = f"{a.png}.tmp.{os.getpid()}.png"
try:
    fig.savefig(tmp, dpi=110)
    os.replace(tmp, a.png)
finally:
    if os.path.exists(tmp):
        os.remove(tmp)
print(f"wrote {a.png}")
