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
except ImportError as e:  # one line: which interpreter, what it lacks, what to run instead
    fix = ("install python3-numpy and python3-matplotlib (tools/deps.sh)"
           if sys.executable == "/usr/bin/python3" else
           "run it with Debian's /usr/bin/python3 (python3-numpy, python3-matplotlib)")
    print(f"sweep_plot.py: {sys.executable} has no {e.name}: {fix}", file=sys.stderr)
    sys.exit(77)

STATS = ["polarization", "milling", "mean_speed", "mean_nn_distance", "group_count",
         "largest_group_fraction", "extent_x", "extent_y", "extent_z"]


def _is_number(x):
    try:
        float(x)
        return True
    except ValueError:
        return False


def _finite(xs, ys):
    """The points whose value is a number (all-NaN series are not drawn: a statistic of a
    one-boid member is NaN by definition, STATS.md)."""
    keep = np.isfinite(ys)
    return np.asarray(xs)[keep], np.asarray(ys)[keep], keep


def _legend(ax):
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=6)


def _note_empty(ax):
    if not ax.get_legend_handles_labels()[0]:
        ax.text(0.5, 0.5, "no finite values (NaN in every member)", transform=ax.transAxes,
                ha="center", va="center", color="0.4")


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
        with open(path, newline="", encoding="utf-8", errors="replace") as f:
            rows = list(csv.reader(f))
    except OSError as e:
        print(f"sweep_plot.py: {path}: {e.strerror}", file=sys.stderr)
        return 2
    except csv.Error as e:
        print(f"sweep_plot.py: {path}: not a CSV file ({e})", file=sys.stderr)
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
    missing = [c for c in ["member", "step", "t"] if c not in col]
    if missing:
        print(f"sweep_plot.py: {path}: not a shoal sweep CSV (no column {missing[0]})",
              file=sys.stderr)
        return 2
    # every row whole: the header's column count, every field a number (nan allowed: a
    # statistic of one boid is NaN by definition), else one line naming the row
    values = []
    for i, r in enumerate(rows[1:], start=2):
        if len(r) != len(head):
            print(f"sweep_plot.py: {path}: line {i}: {len(r)} columns, the header has "
                  f"{len(head)} (a damaged or unfinished sweep.csv)", file=sys.stderr)
            return 2
        try:
            values.append([float(x) for x in r])
        except ValueError:
            bad = next(x for x in r if not _is_number(x))
            print(f"sweep_plot.py: {path}: line {i}: {bad!r} is not a number", file=sys.stderr)
            return 2
    data = np.array(values)
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
            mean = np.array([np.nanmean(v) if np.isfinite(v).any() else np.nan for v in per_t])
            lo = np.array([np.nanmin(v) if np.isfinite(v).any() else np.nan for v in per_t])
            hi = np.array([np.nanmax(v) if np.isfinite(v).any() else np.nan for v in per_t])
            tt, mm, keep = _finite(t, mean)
            if not len(tt):
                continue
            line, = ax.plot(tt, mm, label=label(key, params))
            ax.fill_between(tt, lo[keep], hi[keep], color=line.get_color(), alpha=0.2)
        _note_empty(ax)
        ax.set_title(s)
        ax.set_xlabel("t (s)")
        ax.grid(True, alpha=0.3)
    for ax in list(axes.flat)[len(stats):]:
        ax.axis("off")
    _legend(axes.flat[0])
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
                mean = np.array([np.nanmean(v) if np.isfinite(v).any() else np.nan for v in vals])
                std = np.array([np.nanstd(v) if np.isfinite(v).any() else np.nan for v in vals])
                xx, mm, keep = _finite(xs, mean)
                if not len(xx):
                    continue
                ax.errorbar(xx, mm, yerr=std[keep], marker="o", capsize=3,
                            label=label(key, others))
            _note_empty(ax)
            ax.set_title(f"{s} at the last step")
            ax.set_xlabel(p)
            ax.grid(True, alpha=0.3)
        for ax in list(axes.flat)[len(stats):]:
            ax.axis("off")
        _legend(axes.flat[0])
        fig.suptitle(f"shoal sweep {d}: mean over seeds, error bars 1 standard deviation")
        fig.tight_layout()
        save(fig, os.path.join(out, f"vs_{p}.png"))
    return 0


sys.exit(main())
