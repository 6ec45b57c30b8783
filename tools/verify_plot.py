#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Plot `shoal verify --csv` files: per step the worst and median error against shoal's
reference (log scale), the error in units of the float32 rounding bound (1: the bound;
above it only a threshold tie, drift or a rule), and how many boids are beyond the bound,
each step's verdict marked (agrees, threshold tie, drift, rule differs: its term).
Needs numpy and matplotlib (Debian: python3-numpy python3-matplotlib).
usage: verify_plot.py OUT.png RUN.csv [RUN2.csv ...] [--title T]"""
import argparse
import csv
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
    print(f"verify_plot.py: {sys.executable} has no {e.name}: {fix}", file=sys.stderr)
    sys.exit(77)

# errors up to the bound taken at half precision (2^-11 against 10 * 2^-24) are drift
DRIFT_RATIO = 2.0 ** -11 / (10 * 2.0 ** -24)
COLOURS = {"agrees": "tab:green", "threshold tie": "gold", "drift": "tab:orange",
           "rule differs": "tab:red"}


def num(x):
    try:
        return float(x)
    except ValueError:
        return np.nan


def load(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise SystemExit(f"{path}: no steps")
    d = {k: np.array([num(r[k]) for r in rows]) for k in
         ("step", "pos_max", "pos_median", "vel_max", "ratio_max", "ratio_median", "beyond",
          "ties", "count")}
    d["verdict"] = [r["verdict"] for r in rows]
    d["term"] = [r["term"] for r in rows]
    return d


ap = argparse.ArgumentParser(description=__doc__)
ap.add_argument("png")
ap.add_argument("csv", nargs="+")
ap.add_argument("--title", default="shoal verify")
a = ap.parse_args()

fig, axs = plt.subplots(2, 2, figsize=(14, 8.5))
ax = [axs[0][0], axs[0][1], axs[1][0], axs[1][1]]
floor = 1e-12  # zero cannot be drawn on a log axis: an identical step sits at the floor
names = []
for k, path in enumerate(a.csv):
    d = load(path)
    name = os.path.splitext(os.path.basename(path))[0]
    names.append(name)
    step = d["step"]
    ax[0].semilogy(step, np.maximum(d["pos_max"], floor), label=f"{name} position worst")
    ax[0].semilogy(step, np.maximum(d["pos_median"], floor), ":", label=f"{name} median")
    ax[0].semilogy(step, np.maximum(d["vel_max"], floor), "--", label=f"{name} velocity worst")
    r_max = np.where(np.isfinite(d["ratio_max"]), d["ratio_max"], 1e30)
    ax[1].semilogy(step, np.maximum(r_max, floor), label=f"{name} worst")
    ax[1].semilogy(step, np.maximum(d["ratio_median"], floor), ":", label=f"{name} median")
    ax[2].plot(step, d["beyond"] / d["count"], label=f"{name} beyond the bound")
    ax[2].plot(step, d["ties"] / d["count"], "--", label=f"{name} threshold ties")
    # the verdicts: a row per file, the term written where it changes
    last = None
    for s, v, t in zip(step, d["verdict"], d["term"]):
        ax[3].scatter([s], [k], color=COLOURS.get(v, "black"), s=40, zorder=3)
        label = t if v == "rule differs" else None
        if label and label != last:
            ax[3].annotate(label, (s, k), textcoords="offset points", xytext=(4, 6), fontsize=8)
        last = label
ax[1].axhline(1.0, color="black", lw=0.8)
ax[1].axhline(DRIFT_RATIO, color="tab:orange", lw=0.8, ls="--")
ax[1].text(ax[1].get_xlim()[0], 1.3, "float32 bound", fontsize=7)
ax[1].text(ax[1].get_xlim()[0], DRIFT_RATIO * 1.3, "half-precision bound (drift above)",
           fontsize=7, color="tab:orange")
ax[0].set_title("error against the reference (1e-12 = identical)")
ax[1].set_title("error / float32 rounding bound")
ax[2].set_title("fraction of the boids beyond the bound")
ax[3].set_title("verdict per step")
ax[3].set_yticks(range(len(names)))
ax[3].set_yticklabels(names, fontsize=8)
ax[3].set_ylim(-0.7, len(names) - 0.3)
for v, c in COLOURS.items():
    ax[3].scatter([], [], color=c, label=v)
for x in ax:
    x.set_xlabel("step")
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
