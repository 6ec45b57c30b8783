# SPDX-License-Identifier: MIT
"""Simulation.collect: a data collector (Mesa's DataCollector for a shoal school), and the
tables that it and shoal.sweep return."""
import operator

import numpy as np

# shoal_stats_desc.skip bits: a statistic leaves out what no column needs
_SKIP_NEAREST, _SKIP_NEIGHBORS, _SKIP_GROUPS = 1, 2, 4
_ALL_SKIPS = _SKIP_NEAREST | _SKIP_NEIGHBORS | _SKIP_GROUPS


def _scalar(key):
    return lambda st: st[key]


def _axis(key, c):
    return lambda st: st[key][c]


# name -> (its value in a Stats dict, integer column, the skip bit it needs cleared)
_STATS = {
    "polarization": (_scalar("polarization"), False, 0),
    "milling": (_scalar("milling"), False, 0),
    "mean_speed": (_scalar("mean_speed"), False, 0),
    "mean_nn_distance": (_scalar("mean_nn_distance"), False, _SKIP_NEAREST),
    "mean_neighbors": (_scalar("mean_neighbors"), False, _SKIP_NEIGHBORS),
    "group_count": (_scalar("group_count"), True, _SKIP_GROUPS),
    "largest_group_fraction": (_scalar("largest_group_fraction"), False, _SKIP_GROUPS),
    "radius_of_gyration": (_scalar("radius_of_gyration"), False, 0),
}
for _key in ("extent", "centroid", "bbox_min", "bbox_max"):
    for _c, _x in enumerate("xyz"):
        _STATS[f"{_key}_{_x}"] = (_axis(_key, _c), False, 0)

#: Every statistic Simulation.collect can tabulate ("polarisation" is read as "polarization").
COLLECT_STATS = tuple(_STATS)
#: collect's columns without stats=: the sweep table's (shoal.sweep, sweep.csv)
DEFAULT_STATS = ("polarization", "milling", "mean_speed", "mean_nn_distance", "group_count",
                 "largest_group_fraction", "extent_x", "extent_y", "extent_z")
# the other spelling of a column, as Stats reads it: a title of the structured array's field
_TITLES = {"polarization": "polarisation"}
_ALIASES = {"polarisation": "polarization"}


def make_table(columns, frame):
    """The table of (name, dtype, values) columns: a pandas DataFrame when pandas is importable
    and frame is not False (frame=True requires pandas), else a NumPy structured array whose
    "polarization" field is also read as "polarisation"."""
    n = len(columns[0][2]) if columns else 0
    dtype = [((_TITLES[name], name) if name in _TITLES else name, dt) for name, dt, _ in columns]
    table = np.empty(n, dtype=dtype)
    for name, _, values in columns:
        table[name] = values
    if frame is False:
        return table
    try:
        import pandas
    except ImportError:
        if frame:
            raise
        return table
    return pandas.DataFrame(table)


def _stat_names(stats):
    if stats is None:
        return list(DEFAULT_STATS)
    if isinstance(stats, str):
        stats = list(COLLECT_STATS) if stats == "all" else [stats]
    names = []
    for s in stats:
        if not isinstance(s, str):
            raise TypeError(f"stats: names of statistics, not {type(s).__name__}")
        s = _ALIASES.get(s, s)
        if s not in _STATS:
            raise ValueError(f"stats: unknown statistic {s!r} (one of {', '.join(COLLECT_STATS)},"
                             " or \"all\")")
        if s not in names:
            names.append(s)
    return names


def _reporter_column(name, values):
    """A reporter's values as one column: bool, int64 or float64 when every value is such a
    number, else Python objects."""
    a = np.asarray(values) if values else np.zeros(0)
    if a.ndim == 1 and a.dtype.kind in "biuf":
        kind = a.dtype.kind
        return name, np.float64 if kind == "f" else np.bool_ if kind == "b" else np.int64, a
    obj = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        obj[i] = v
    return name, object, obj


def collect(sim, steps, every=None, stats=None, reporters=None, radius=None, threads=0,
            frame=None):
    """Simulation.collect (its docstring says what it does)."""
    steps = operator.index(steps)
    if steps < 0:
        raise ValueError("collect: steps must be >= 0")
    every = max(1, steps // 10) if every is None else operator.index(every)
    if every < 1:
        raise ValueError("collect: every must be >= 1")
    names = _stat_names(stats)
    reporters = dict(reporters or {})
    for name, fn in reporters.items():
        if not isinstance(name, str):
            raise TypeError("reporters: names are strings")
        if name in ("step", "t") or name in names or _ALIASES.get(name) in names:
            raise ValueError(f"reporters: {name!r} is already a column")
        if not callable(fn):
            raise TypeError(f"reporters: {name!r} is not callable (fn(state) -> value)")
    skip = _ALL_SKIPS
    for n in names:
        skip &= ~_STATS[n][2]
    rows_step, rows_t = [], []
    values = {n: [] for n in names}
    reported = {n: [] for n in reporters}

    def record(step, t, state, predators, st, labels):
        rows_step.append(step)
        rows_t.append(t)
        for n in names:
            values[n].append(_STATS[n][0](st))
        for n, fn in reporters.items():
            reported[n].append(fn(state))

    sim._observe(steps, every, record, stats=bool(names), radius=radius,
                 threads=operator.index(threads), skip=skip)
    columns = [("step", np.int64, rows_step), ("t", np.float64, rows_t)]
    columns += [(n, np.int64 if _STATS[n][1] else np.float64, values[n]) for n in names]
    columns += [_reporter_column(n, reported[n]) for n in reporters]
    return make_table(columns, frame)
