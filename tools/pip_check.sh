#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Python package through pip and meson-python, offline (docs/PYTHON.md), as a user installs
# it: a fresh venv that sees Debian's numpy, `pip install --no-build-isolation .` from a copy
# of the tree, the copy removed, then the package and the program it brings used from
# elsewhere: import, step, render (the fish meshes) and a shipped scene, `shoal run` (its
# assets). An installed package needs no checkout (issue 44, N7). pip's and meson-python's
# output goes to a log shown only on failure (no progress bars in the test log).
# Usage: tools/pip_check.sh   (from the source root; tools/test.sh runs it)
set -euo pipefail
cd "$(dirname "$0")/.."
py=/usr/bin/python3
"$py" -c "import numpy, mesonpy" 2>/dev/null ||
  { echo "pip_check.sh: $py lacks numpy or mesonpy (python3-numpy, python3-mesonpy: tools/deps.sh)" >&2; exit 1; }
tmp=$(mktemp -d /tmp/shoal-pip-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
git ls-files -z | tar --null -T - -cf - | (mkdir "$tmp/src" && tar -xf - -C "$tmp/src")
"$py" -m venv --system-site-packages "$tmp/venv"
if ! "$tmp/venv/bin/pip" install --no-build-isolation --no-index --progress-bar off \
     "$tmp/src" >"$tmp/pip.log" 2>&1; then
  tail -40 "$tmp/pip.log" >&2
  echo "pip_check.sh: pip install failed (the log's end above)" >&2
  exit 1
fi
rm -rf "$tmp/src"  # the checkout is gone: nothing may be found there
mkdir "$tmp/elsewhere"
cd "$tmp/elsewhere"
env -u SHOAL_ASSETS "$tmp/venv/bin/python" -c "
import shoal
s = shoal.Simulation(count=64)
s.step(2)
img = shoal.render(s.state, size=(64, 48))
assert img.any(), 'a black frame'
sc = shoal.scene_path('school')
assert sc.startswith('$tmp/venv'), sc
t = shoal.Simulation(scene=sc, count=100)
t.step(1)
print('pip install .: shoal', shoal.__version__, 'from', shoal.__file__)
"
env -u SHOAL_ASSETS "$tmp/venv/bin/shoal" run --headless --frames 2 --size 64x48 --out "$tmp/frames" \
  >/dev/null
[ "$(ls "$tmp/frames" | wc -l)" = 2 ] || { echo "pip_check.sh: shoal run wrote no frames" >&2; exit 1; }
echo "pip install .: the package and the program work without the checkout"
