#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Plot a `shoal sweep` directory: each statistic against time (one line per parameter
combination: the mean over seeds, the band min..max over seeds), and each statistic at the
last step against each varied parameter (mean over seeds, error bars one standard deviation;
one line per combination of the other varied parameters). Writes DIR/plots/time.png and
DIR/plots/vs_NAME.png, each through a temporary and a rename (never half a PNG).
Needs numpy and matplotlib (Debian: python3-numpy python3-matplotlib); exits 77 without.
usage: sweep_plot.py DIR"""
import csv
import os
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
except ImportError:
    print("sweep_plot.py: needs numpy and matplotlib", file=sys.stderr)
    sys.exit(77)

STATS = ["polarization", "milling", "mean_speed", "mean_nn_distance", "group_count",
         "largest_group_fraction", "extent_x", "extent_y", "extent_z"]


def save(fig, path):
    tmp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.tmp.{os.getpid()}.png")
    try:
        fig.savefig(tmp, dpi=100)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    plt.close(fig)
    print(f"wrote {path}")


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    d = sys.argv[1]
    path = os.path.join(d, "sweep.csv")
    try:
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
    except OSError as e:
        print(f"sweep_plot.py: {path}: {e.strerror}", file=sys.stderr)
        return 2
    if len(rows) < 2:
        print(f"sweep_plot.py: {path}: no rows", file=sys.stderr)
        return 2
    head = rows[0]
    try:
        params = head[head.index("seed") + 1:head.index("step")]
    except ValueError:
        print(f"sweep_plot.py: {path}: not a shoal sweep CSV", file=sys.stderr)
        return 2
    col = {k: i for i, k in enumerate(head)}
    data = np.array([[float(x) for x in r] for r in rows[1:]])
    stats = [s for s in STATS if s in col]
    out = os.path.join(d, "plots")
    os.makedirs(out, exist_ok=True)

    # combination -> rows
    combos = {}
    for r in data:
        combos.setdefault(tuple(r[col[p]] for p in params), []).append(r)
    combos = {k: np.array(v) for k, v in sorted(combos.items())}

    def label(key, names):
        return ", ".join(f"{n}={v:g}" for n, v in zip(names, key)) or "all members"

    ncol = 3
    nrow = (len(stats) + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(5 * ncol, 3.6 * nrow), squeeze=False)
    for ax, s in zip(axes.flat, stats):
        for key, rs in combos.items():
            t = np.unique(rs[:, col["t"]])
            per_t = [rs[rs[:, col["t"]] == x][:, col[s]] for x in t]
            mean = np.array([np.nanmean(v) for v in per_t])
            lo = np.array([np.nanmin(v) for v in per_t])
            hi = np.array([np.nanmax(v) for v in per_t])
            line, = ax.plot(t, mean, label=label(key, params))
            ax.fill_between(t, lo, hi, color=line.get_color(), alpha=0.2)
        ax.set_title(s)
        ax.set_xlabel("t (s)")
        ax.grid(True, alpha=0.3)
    for ax in list(axes.flat)[len(stats):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=6)
    fig.suptitle(f"shoal sweep {d}: mean over seeds, band min..max")
    fig.tight_layout()
    save(fig, os.path.join(out, "time.png"))

    last = data[data[:, col["step"]] == data[:, col["step"]].max()]
    for p in params:
        others = [q for q in params if q != p]
        fig, axes = plt.subplots(nrow, ncol, figsize=(5 * ncol, 3.6 * nrow), squeeze=False)
        groups = {}
        for r in last:
            groups.setdefault(tuple(r[col[q]] for q in others), []).append(r)
        for ax, s in zip(axes.flat, stats):
            for key, rs in sorted(groups.items()):
                rs = np.array(rs)
                xs = np.unique(rs[:, col[p]])
                vals = [rs[rs[:, col[p]] == x][:, col[s]] for x in xs]
                ax.errorbar(xs, [np.nanmean(v) for v in vals], yerr=[np.nanstd(v) for v in vals],
                            marker="o", capsize=3, label=label(key, others))
            ax.set_title(f"{s} at the last step")
            ax.set_xlabel(p)
            ax.grid(True, alpha=0.3)
        for ax in list(axes.flat)[len(stats):]:
            ax.axis("off")
        axes.flat[0].legend(fontsize=6)
        fig.suptitle(f"shoal sweep {d}: mean over seeds, error bars 1 standard deviation")
        fig.tight_layout()
        save(fig, os.path.join(out, f"vs_{p}.png"))
    return 0


sys.exit(main())
