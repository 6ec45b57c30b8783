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
    "models", "render", "save", "stats", "sweep", "verify", "write_png", "__version__",
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



def _load_trajectory(path):
    """A trajectory on disk as a list of arrays: a (T, N, 6|7) .npy, or a directory of
    per-step .npy states taken in the order of the number in their names (shoal's
    state_NNNNNN.npy, or any numbered files)."""
    import os
    import re

    import numpy as np

    path = os.fspath(path)
    try:
        return _load_trajectory_files(path, os, re, np)
    except InputError:
        raise
    except OSError as e:  # the package's own file error, as load() raises
        raise FileError(f"{path}: {e.strerror or e}") from e
    except ValueError as e:  # not a .npy NumPy can read (or one that needs pickles)
        raise InputError(f"{path}: {e}") from e


def _load_trajectory_files(path, os, re, np):
    if os.path.isdir(path):
        names = [n for n in os.listdir(path) if n.endswith(".npy") and re.search(r"\d", n)]
        if len(names) < 2:
            raise InputError(f"{path}: fewer than two numbered .npy states")
        names.sort(key=lambda n: (int(re.findall(r"\d+", n)[-1]), n))
        return [np.load(os.path.join(path, n)) for n in names]
    a = np.load(path)
    if a.ndim != 3:
        raise InputError(f"{path}: shape {a.shape}, expected (T, N, 6) or (T, N, 7)")
    return list(a)


def verify(states, model=None, scene=None, params=None, dt=None, t0=None, seed=None,
           reference="f32", ids=None, targets=None, worst=8, threads=0):
    """Check another program's trajectory against shoal's rules, one step at a time.

    For each consecutive pair (k, k+1) of `states`, one reference step is taken from the
    other program's state k and compared with its state k+1, boid by boid, against the float32
    rounding bound of that step (docs/VERIFY.md). Returns a list of dicts, one per pair, with
    the keys and values of `shoal verify --json`'s steps: "verdict" ("agrees", "drift",
    "threshold tie" or "rule differs"), "term" and "param" (the rule term and parameter that
    explain a rule difference, "fitted" the [low, high] values that would, "contract" the
    parameter's value here), the worst and median errors and error / tolerance, "beyond",
    "ties", "detail" (one line) and "worst" (the worst boids: "row", "id", errors, bounds, the
    tie, the term that explains each, the residual and each term's share of the step).

    states: a (T, N, 6) array (float32 or float64), a list of (N, 6) arrays, or a path (a
    (T, N, 6) .npy or a directory of numbered .npy states). A 7th column, or ids= ((N,) or
    (T, N)), gives each row's boid id when the rows come in another order each step.
    model, scene, params: the rules and parameters (as Simulation; the walls are not scaled to
    N). dt, t0, seed: the step, the time of the first state and heading's target seed (the
    scene's, else 1/60, 0, 1). reference: "f32" (shoal's float32 step) or "f64" (the float64
    reference: the other program's own float32 drift). targets: heading's targets as the other
    program had them, (K, 3) or (T-1, K, 3). The CLI's `shoal verify` reads Unity buffer dumps
    and shoal's trajectory directories with their manifest too.
    """
    import numpy as np

    if isinstance(states, (str, bytes)) or hasattr(states, "__fspath__"):
        states = _load_trajectory(states)
    frames = [np.asarray(s) for s in states]
    if len(frames) < 2:
        raise InputError("states: at least two states are needed")
    width = frames[0].shape[-1] if frames[0].ndim == 2 else None
    for k, f in enumerate(frames):
        if f.ndim != 2 or f.shape[1] not in (6, 7) or f.shape != frames[0].shape:
            raise InputError(f"state {k}: shape {f.shape}, expected ({frames[0].shape[0]}, 6) "
                             "or 7 columns, the same for every state")
        if f.dtype.kind != "f":
            raise InputError(f"state {k}: dtype {f.dtype}, expected float32 or float64")
    n = frames[0].shape[0]
    if width == 7 and ids is not None:
        raise InputError("ids: the states have an id column already")
    if width == 7:
        ids = np.stack([f[:, 6] for f in frames])
        frames = [f[:, :6] for f in frames]
    stack = np.stack([np.asarray(f, dtype=np.float64) for f in frames])
    if ids is not None:
        ids = np.asarray(ids)
        if ids.shape == (n,):
            ids = np.broadcast_to(ids, (len(frames), n))
        if ids.shape != (len(frames), n):
            raise InputError(f"ids: shape {ids.shape}, expected ({n},) or ({len(frames)}, {n})")
        first = ids[0]
        s0 = np.argsort(first, kind="stable")
        if np.any(first[s0][1:] == first[s0][:-1]):
            raise InputError("ids: the first state's ids repeat")
        # every state in the first state's row order: row r holds the boid of id first[r]
        for k in range(1, len(frames)):
            sk = np.argsort(ids[k], kind="stable")
            if not np.array_equal(ids[k][sk], first[s0]):
                raise InputError(f"ids: state {k} holds other ids than state 0")
            reordered = np.empty_like(stack[k])
            reordered[s0] = stack[k][sk]
            stack[k] = reordered
    reports = _shoal._verify_steps(np.ascontiguousarray(stack), model, scene, params, dt, t0,
                                   seed, str(reference), int(worst), int(threads), targets)
    if ids is not None:  # name the boids by their ids, as the program does
        for r in reports:
            for b in r["worst"]:
                b["id"] = ids[0][b["row"]].item()
                if b["tie_neighbor"] is not None:
                    b["tie_neighbor"] = ids[0][b["tie_neighbor"]].item()
    return reports
