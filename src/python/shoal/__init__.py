# SPDX-License-Identifier: MIT
"""shoal: boids on CPU cores (and CUDA), from Python.

The package is the C library libshoal seen through NumPy: every rule, file format and
statistic is the library's own (the extension shoal._shoal calls its public API), so a
Simulation gives the same bits as `shoal init` / `shoal step` for the same inputs, on any
thread count, and shoal.render and shoal.sweep give the bytes of `shoal render` and
`shoal sweep`. States are float32 arrays of shape (N, 6), columns px py pz vx vy vz, row i
= boid i (the engine re-sorts every step; rows always come back in input order).

    import shoal
    sim = shoal.Simulation(model="steer", count=4096, seed=1)
    sim.step(600)                      # the GIL is released while it runs
    print(sim.time, sim.stats()["polarisation"])
    img = shoal.render(sim.state, size=(640, 360))   # (360, 640, 3) uint8

Errors are exceptions carrying the library's one-line message: InputError (a ValueError),
FileError (an OSError), NonFiniteError, UnsupportedError, NoMemoryError, all shoal.Error.
See docs/PYTHON.md for a tutorial.
"""

from ._shoal import (  # noqa: F401
    Error,
    FileError,
    InputError,
    NoMemoryError,
    NonFiniteError,
    Params,
    Renderer,
    Simulation,
    UnsupportedError,
    __version__,
    compare,
    default_params,
    gpu_available,
    header_version,
    load,
    models,
    render,
    save,
    stats,
    write_png,
)
from . import _shoal

__all__ = [
    "Error", "FileError", "InputError", "NoMemoryError", "NonFiniteError", "UnsupportedError",
    "Params", "Renderer", "Simulation", "compare", "default_params", "gpu_available", "load",
    "models", "render", "save", "stats", "sweep", "write_png", "__version__",
]

# columns of the sweep table that hold whole numbers (the rest are float64)
_INTEGER_COLUMNS = ("member", "seed", "step", "group_count")


def _vary_spec(name, values):
    """One --vary spec, "NAME=a:b:step" or "NAME=v1,v2,...", from a string or numbers."""
    if isinstance(values, str):
        return f"{name}={values}"
    try:
        items = list(values)
    except TypeError:
        items = [values]
    if not items:
        raise ValueError(f"vary {name}: no values")
    return f"{name}=" + ",".join(repr(float(v)) if not isinstance(v, str) else v for v in items)


def sweep(model=None, vary=None, seeds=(1, 1), steps=600, every=None, count=None, scene=None,
          params=None, keep_geometry=False, dt=None, radius=None, threads=0, frame=None):
    """Run an ensemble and return its table: the rows of `shoal sweep`'s sweep.csv.

    Every combination of the varied values times every seed is one member: the model's
    initial state from that seed, `steps` steps, and the flock statistics at steps 0, every,
    2 * every, ... and steps. Members run one after the other in this process, each on
    `threads` threads (0: all cores); the numbers do not depend on it.

    vary: {name: "a:b:step" | [v1, v2, ...]} (the last name changes fastest). seeds: (first,
    last) inclusive, or a range. every: default steps // 10 (at least 1). count: boids per
    member (the scene's walls scale to keep its density, as with --count, unless
    keep_geometry). radius: of the group and neighbour statistics (default the model's
    interaction radius).

    Returns a pandas DataFrame when pandas is importable and frame is not False (frame=True
    requires it), else a NumPy structured array. Columns: member, seed, each varied name,
    step, t, polarization, milling, mean_speed, mean_nn_distance, group_count,
    largest_group_fraction, extent_x, extent_y, extent_z; member, seed, step and group_count
    are integers. Every number equals the CSV's, which prints doubles exactly (%.17g).
    """
    import numpy as np

    if isinstance(seeds, range):
        if len(seeds) == 0 or seeds.step != 1:
            raise ValueError("seeds: a non-empty range with step 1, or (first, last)")
        first, last = seeds.start, seeds.stop - 1
    elif isinstance(seeds, int):
        first = last = seeds
    else:
        first, last = seeds
    specs = [_vary_spec(k, v) for k, v in (vary or {}).items()]
    header, lines = _shoal._sweep_rows(
        model, scene, 0 if count is None else int(count), bool(keep_geometry), params, specs,
        int(first), int(last), int(steps), 0 if every is None else int(every), dt, radius,
        int(threads))
    names = header.split(",")
    dtype = [(n, np.int64 if n in _INTEGER_COLUMNS else np.float64) for n in names]
    table = np.array([tuple(int(x) if n in _INTEGER_COLUMNS else float(x)
                            for n, x in zip(names, line.split(",")))
                      for line in lines], dtype=dtype)
    if frame is False:
        return table
    try:
        import pandas
    except ImportError:
        if frame:
            raise
        return table
    return pandas.DataFrame(table)

