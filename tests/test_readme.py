#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Run every example command of README.md as it is written there, so that an edited README
is tested: each ```sh block, in order, in one scratch directory (later blocks use the
files of earlier ones), with $B the shoal under test and assets/ and tools/ linked from
the source tree. A block preceded by a comment line "<!-- tests/test_readme.py: not run
(...) -->" is skipped, saying why. Each command must exit 0; its wall time is printed (the
README promises seconds on 2 cores; no time is asserted here: benchmarks measure speed).
Commands that need a program this machine or build lacks (ffmpeg for a video, perf for
tools/profile.sh, matplotlib for tools/sweep_plot.py, the Python package of a build without
it) are skipped, saying so; build-test/ in the scratch directory is this build.
Usage: test_readme.py SOURCE_ROOT SHOAL_EXE"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time


def blocks(readme):
    """The ```sh blocks of the README: (line number, text, reason to skip or None)."""
    lines = open(readme, encoding="utf-8").read().split("\n")
    out, i = [], 0
    while i < len(lines):
        if lines[i].strip() == "```sh":
            skip = None
            for k in (i - 1, i - 2):
                m = re.match(r"<!-- tests/test_readme.py: not run \((.*)\) -->", lines[k].strip()) \
                    if k >= 0 else None
                if m:
                    skip = m.group(1)
            j = i + 1
            while lines[j].strip() != "```":
                j += 1
            out.append((i + 1, "\n".join(lines[i + 1:j]), skip))
            i = j
        i += 1
    return out


def commands(text):
    """Shell commands of a block: continuation lines joined, comments and blanks dropped."""
    cmds, cur = [], ""
    for line in text.split("\n"):
        if cur:
            cur += "\n" + line
        else:
            cur = line
        if line.rstrip().endswith("\\"):
            continue
        if cur.strip() and not cur.strip().startswith("#"):
            cmds.append(cur)
        cur = ""
    return cmds


def have(prog, args):
    try:
        return subprocess.run([prog] + args, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode == 0
    except OSError:
        return False


def main():
    root, exe = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    # a sanitizer build's Python extension needs the sanitizer runtime loaded first, which
    # Debian's python3 is not (test_python is not run there either)
    sanitized = len(sys.argv) > 3 and sys.argv[3] not in ("", "none")
    ffmpeg = have("ffmpeg", ["-version"])
    perf = have("perf", ["stat", "-e", "task-clock", "true"])
    mpl = have("/usr/bin/python3", ["-c", "import matplotlib"])
    work = tempfile.mkdtemp(prefix="shoal-readme-")
    failed = 0
    try:
        for name in ("assets", "tools"):
            os.symlink(os.path.join(root, name), os.path.join(work, name))
        # build-test (the build tools/test.sh makes, which the README names for the Python
        # package) is this build
        build = os.path.dirname(os.path.dirname(os.path.dirname(exe)))
        os.symlink(build, os.path.join(work, "build-test"))
        pymod = os.path.isdir(os.path.join(build, "src", "python", "shoal"))
        # python3 is Debian's (with NumPy and matplotlib), as on the machine the README is for
        env = dict(os.environ, SHOAL_EXE=exe, PATH="/usr/bin:/bin:" + os.environ.get("PATH", ""))
        ran = 0
        for line, text, skip in blocks(os.path.join(root, "README.md")):
            if skip:
                print(f"README.md:{line}: block not run ({skip})")
                continue
            for cmd in commands(text):
                if re.match(r"^B=", cmd):
                    continue  # $B is the shoal under test
                why = None
                if ("--video" in cmd or ".mp4" in cmd) and not ffmpeg:
                    why = "no ffmpeg"
                if "tools/profile.sh" in cmd and not perf:
                    why = "perf cannot sample here"
                if "sweep_plot.py" in cmd and not mpl:
                    why = "no matplotlib"
                if "src/python" in cmd and not pymod:
                    why = "this build has no Python package"
                elif "src/python" in cmd and sanitized:
                    why = "a sanitizer build's Python extension needs its runtime preloaded"
                if why:
                    print(f"SKIP README.md:{line}: {cmd.strip()} ({why})")
                    continue
                t0 = time.monotonic()
                r = subprocess.run(["bash", "-c", 'B="$SHOAL_EXE"; set -e; ' + cmd], cwd=work,
                                   env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   text=True, errors="replace")
                dt = time.monotonic() - t0
                ran += 1
                print(f"README.md:{line}: {dt:6.2f} s  exit {r.returncode}  {cmd.strip()}")
                if r.returncode != 0:
                    failed += 1
                    print("  output (last lines):\n    " +
                          "\n    ".join(r.stdout.strip().split("\n")[-8:]))
        print(f"{ran} commands run, {failed} failed")
        if ran == 0:
            print("no command found in README.md")
            failed += 1
    finally:
        if os.environ.get("SHOAL_TEST_KEEP"):
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
