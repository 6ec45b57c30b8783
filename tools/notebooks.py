#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Execute the reproduction notebooks of examples/ (docs/SCIENCE.md) with Jupyter's nbclient.

    tools/notebooks.py [--full] [--out DIR] [--save DIR] [--threads N] [NOTEBOOK ...]

Without --full each notebook runs its small sizes (minutes); with --full the sizes of the
figures docs/SCIENCE.md shows (hours: SHOAL_NB_FULL=1). Figures go to --out (default
docs/img/science); --save writes the executed notebooks there. The package must be importable
(PYTHONPATH=build/src/python, or installed). Needs Debian's python3-nbclient, python3-nbformat
and python3-ipykernel (tools/deps.sh test). Exit status 1 when a notebook fails, naming it and
the cell."""
import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BOOKS = ["vicsek_1995.ipynb", "couzin_2002.ipynb", "abm_flocking.ipynb"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("notebooks", nargs="*", help="default: " + ", ".join(BOOKS))
    ap.add_argument("--full", action="store_true", help="the figures' sizes (hours)")
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
    os.environ["MPLBACKEND"] = "Agg"
    if args.full:
        os.environ["SHOAL_NB_FULL"] = "1"
    else:
        os.environ.pop("SHOAL_NB_FULL", None)
    failed = 0
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        t0 = time.perf_counter()
        try:
            NotebookClient(nb, timeout=args.timeout, kernel_name="python3",
                           resources={"metadata": {"path": os.path.dirname(os.path.abspath(path))}}
                           ).execute()
            print(f"{os.path.basename(path)}: ok, {time.perf_counter() - t0:.0f} s", flush=True)
        except CellExecutionError as e:
            failed += 1
            print(f"{os.path.basename(path)}: failed: {str(e).strip()[-2000:]}", flush=True)
        if args.save:
            os.makedirs(args.save, exist_ok=True)
            nbformat.write(nb, os.path.join(args.save, os.path.basename(path)))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
