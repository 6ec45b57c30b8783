# SPDX-License-Identifier: MIT
"""shoal: boids on CPU cores (and CUDA), from Python.

The package is the C library libshoal seen through NumPy: every rule, file format and
statistic is the library's own (the extension shoal._shoal calls its public API), so a
Simulation gives the same bits as `shoal init` / `shoal step` for the same inputs, on any
thread count, and shoal.render and shoal.sweep give the bytes of `shoal render` and
`shoal sweep`. States are float32 arrays of shape (N, 6), columns px py pz vx vy vz, row i
= boid i (the engine re-sorts every step; rows always come back in input order).

    import shoal
    sim = shoal.Simulation(count=4096, seed=1)   # the default model
    sim.step(600)                      # the GIL is released while it runs
    print(sim.time, sim.stats()["polarization"])
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
    scene_path,
    save,
    stats,
    write_png,
)
from . import _shoal

import operator
import os as _os


class Stats(dict):
    """Flock statistics: a dict (docs/STATS.md). The package spells the order parameter
    "polarization", as the sweep table and sweep.csv do; "polarisation" (the C field's and
    `shoal compare --json`'s spelling) reads the same value."""

    _ALIASES = {"polarisation": "polarization"}

    def __missing__(self, key):
        alias = self._ALIASES.get(key)
        if alias is not None and dict.__contains__(self, alias):
            return self[alias]
        raise KeyError(key)

    def __contains__(self, key):
        return dict.__contains__(self, key) or dict.__contains__(self, self._ALIASES.get(key))

    def get(self, key, default=None):
        return self[key] if key in self else default


_shoal._set_stats_class(Stats)
# the meshes and scenes installed with the package (shoal/assets): an installed package needs
# no checkout; a build tree's has none and the library finds the source tree's
_shoal._set_assets(_os.path.join(_os.path.dirname(__file__), "assets"))

__all__ = [
    "Error", "FileError", "InputError", "NoMemoryError", "NonFiniteError", "UnsupportedError",
    "Params", "Renderer", "Simulation", "Stats", "compare", "default_params", "gpu_available",
    "load", "models", "render", "save", "scene_path", "stats", "sweep", "verify", "write_png",
    "__version__",
]

# columns of the sweep table that hold whole numbers (the rest are float64)
_INTEGER_COLUMNS = ("member", "seed", "step", "group_count")
# the other spelling of a column, as Stats reads it
_TITLES = {"polarization": "polarisation"}


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
    elif isinstance(seeds, (str, bytes)):
        raise TypeError("seeds: (first, last), a range or one integer")
    else:
        try:
            first = last = operator.index(seeds)
        except TypeError:
            first, last = seeds  # each an integer (a float is a TypeError in _sweep_rows)
    specs = [_vary_spec(k, v) for k, v in (vary or {}).items()]
    header, lines = _shoal._sweep_rows(
        model, scene, 0 if count is None else int(count), bool(keep_geometry), params, specs,
        first, last, int(steps), 0 if every is None else int(every), dt, radius, int(threads))
    names = header.split(",")
    # "polarisation" is a title of the "polarization" field: both spellings index the array
    dtype = [((_TITLES[n], n) if n in _TITLES else n,
              np.int64 if n in _INTEGER_COLUMNS else np.float64) for n in names]
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



def verify(states, model=None, scene=None, params=None, dt=None, t0=None, seed=None,
           reference="f32", ids=None, targets=None, worst=8, threads=0, layout=None, first=0,
           steps=None):
    """Check another program's trajectory against shoal's rules, one step at a time.

    For each consecutive pair (k, k+1) of `states`, one reference step is taken from the
    other program's state k and compared with its state k+1, boid by boid, against the float32
    rounding bound of that step (docs/VERIFY.md). Returns a list of dicts, one per pair, with
    the keys and values of `shoal verify --json`'s steps (the library writes both): "verdict"
    ("agrees", "drift", "threshold tie" or "rule differs"), "term" and "param" (the rule term
    and parameter that explain a rule difference, "fitted" the [low, high] values that would,
    "contract" the parameter's value here), the worst and median errors and error / tolerance,
    "beyond", "ties", "detail" (one line) and "worst" (the worst boids: "row", "id", errors,
    bounds, the tie, the term that explains each, the residual and each term's share of the
    step).

    states: a (T, N, 6) array (float32 or float64), a list of (N, 6) arrays, or a path: what
    `shoal verify --trajectory` reads, through the same reader with the same refusals (shoal's
    trajectory directory with its manifest.json, a directory of numbered .npy states or .bin
    buffer dumps (`layout`: "vp", "pv" or "S:P:V[:I]"), a (T, N, 6) .npy). A 7th column, an id
    word or ids= ((N,) or (T, N)) gives each row's boid id when the rows come in another order
    each step; rows are then compared in ascending id order ("row" in the report) and the
    report names ids. model, scene, params: the rules and parameters (as Simulation; the walls
    are not scaled to N); a manifest's come first, a scene's after. dt, t0, seed: the step, the
    time of the first state and heading's target seed (the manifest's or the scene's, else
    1/60, 0, 1). reference: "f32" (shoal's float32 step) or "f64" (the float64 reference: the
    other program's own float32 drift). targets: heading's targets as the other program had
    them, (K, 3) or (T, K, 3). first, steps: the state to start from and how many pairs (all).
    Ctrl-C stops it within a fraction of a second (KeyboardInterrupt).
    """
    import json

    import numpy as np

    if isinstance(states, (str, bytes)) or hasattr(states, "__fspath__"):
        source = states
    else:
        frames = list(states) if not (isinstance(states, np.ndarray) and states.ndim == 3) \
            else None
        if frames is not None:
            frames = [np.asarray(f) for f in frames]
            if len(frames) < 2:
                raise InputError("states: at least two states are needed")
            for k, f in enumerate(frames):
                if f.ndim != 2 or f.shape[1] not in (6, 7) or f.shape != frames[0].shape:
                    raise InputError(f"state {k}: shape {f.shape}, expected "
                                     f"({frames[0].shape[0]}, 6) or 7 columns, the same for "
                                     "every state")
            stack = np.stack(frames)
        else:
            stack = states
        if stack.dtype.kind != "f" or stack.dtype.itemsize not in (4, 8):
            raise InputError(f"states: dtype {stack.dtype}, expected float32 or float64")
        source = np.ascontiguousarray(stack, dtype=np.float64)
    if ids is not None:
        try:
            ids = np.ascontiguousarray(ids, dtype=np.float64)
        except (TypeError, ValueError) as e:
            raise InputError(f"ids: not numbers ({e})") from None
    if targets is not None:
        targets = np.ascontiguousarray(targets, dtype=np.float64)
    texts = _shoal._verify_run(source, layout, ids, model, scene, params, dt, t0, seed,
                               str(reference), int(worst), int(threads), targets,
                               operator.index(first), steps)
    return [json.loads(t) for t in texts]
