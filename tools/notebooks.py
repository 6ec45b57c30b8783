#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Execute the reproduction notebooks of examples/ (docs/SCIENCE.md) with Jupyter's nbclient.

    tools/notebooks.py [--full] [--out DIR] [--save DIR] [--threads N] [NOTEBOOK ...]

Without --full each notebook runs its small sizes (about 10 s of CPU for the three: the test
command's test_notebooks); with --full the sizes of the figures docs/SCIENCE.md shows
(SHOAL_NB_FULL=1; about 25 minutes on 2 busy cores, docs/results/2026-11-28-reproductions.md). Figures go to --out (default
docs/img/science); --save writes the executed notebooks there. The package must be importable
(PYTHONPATH=build/src/python, or installed). Needs Debian's python3-nbclient, python3-nbformat
and python3-ipykernel (tools/deps.sh test). Exit status 1 when a notebook fails, naming it and
the cell."""
import argparse
import os
import re
import resource
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BOOKS = ["vicsek_1995.ipynb", "couzin_2002.ipynb", "abm_flocking.ipynb"]


def _cpu():
    """CPU seconds of the finished kernels (and what they ran) and of this process."""
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    s = resource.getrusage(resource.RUSAGE_SELF)
    return c.ru_utime + c.ru_stime + s.ru_utime + s.ru_stime


def _failure(nb, err):
    """The failing cell (its number and first lines) and the error, without terminal colours."""
    ansi = re.compile(r"\x1b\[[0-9;]*m")
    where = ""
    for i, cell in enumerate(nb.cells):
        if any(o.get("output_type") == "error" for o in cell.get("outputs", [])):
            head = "\n    ".join(cell.source.splitlines()[:3])
            where = f"code cell {i} (of {len(nb.cells)} cells):\n    {head}\n  "
            break
    tb = ansi.sub("", str(err)).strip().splitlines()
    return f"{where}{getattr(err, 'ename', 'error')}: {getattr(err, 'evalue', '')}\n" + \
        "\n".join("  | " + x for x in tb[-12:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("notebooks", nargs="*", help="default: " + ", ".join(BOOKS))
    ap.add_argument("--full", action="store_true", help="the figures' sizes (tens of minutes)")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "img", "science"))
    ap.add_argument("--save", help="write the executed notebooks to this directory")
    ap.add_argument("--threads", type=int, default=0, help="shoal threads (0: all cores)")
    ap.add_argument("--timeout", type=int, default=24 * 3600, help="seconds per cell")
    args = ap.parse_args()
    try:
        import nbformat
        from nbclient import NotebookClient
        from nbclient.exceptions import CellExecutionError
    except ImportError as e:
        sys.exit(f"notebooks: {e} (install python3-nbclient, python3-nbformat, "
                 "python3-ipykernel: tools/deps.sh test)")
    paths = args.notebooks or [os.path.join(ROOT, "examples", b) for b in BOOKS]
    os.makedirs(args.out, exist_ok=True)
    os.environ["SHOAL_NB_OUT"] = os.path.abspath(args.out)
    os.environ["SHOAL_NB_THREADS"] = str(args.threads)
    os.environ.pop("MPLBACKEND", None)  # the kernel's inline backend: figures in the notebook
    # the kernel runs in the notebook's directory: a relative PYTHONPATH (the README's
    # PYTHONPATH=build/src/python) must name the same package there
    if os.environ.get("PYTHONPATH"):
        os.environ["PYTHONPATH"] = os.pathsep.join(
            os.path.abspath(p) for p in os.environ["PYTHONPATH"].split(os.pathsep) if p)
    # the kernel's debugger warns about frozen modules on every start (noise in the log)
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    if args.full:
        os.environ["SHOAL_NB_FULL"] = "1"
    else:
        os.environ.pop("SHOAL_NB_FULL", None)
    failed = 0
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        t0, c0 = time.perf_counter(), _cpu()
        try:
            NotebookClient(nb, timeout=args.timeout, kernel_name="python3",
                           resources={"metadata": {"path": os.path.dirname(os.path.abspath(path))}}
                           ).execute()
            print(f"{os.path.basename(path)}: ok, {time.perf_counter() - t0:.1f} s wall, "
                  f"{_cpu() - c0:.1f} s CPU (kernel and its children)", flush=True)
        except CellExecutionError as e:
            failed += 1
            print(f"{os.path.basename(path)}: failed: {_failure(nb, e)}", flush=True)
        if args.save:
            os.makedirs(args.save, exist_ok=True)
            nbformat.write(nb, os.path.join(args.save, os.path.basename(path)))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
