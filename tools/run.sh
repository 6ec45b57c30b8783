#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job: install what is missing, build shoal (release), and run it. With a display
# `shoal` opens a window on the default scene; with none it runs headless and writes frames
# and a state file under out/. Extra arguments go to shoal.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh build
if [ ! -f build-release/build.ninja ]; then
  meson setup build-release --buildtype=release -Dtests=false
fi
ninja -C build-release >/dev/null
exe=build-release/src/app/shoal
if [ $# -gt 0 ]; then
  exec "$exe" "$@"
fi
mkdir -p out
if "$exe" --help | grep -q '^  run '; then
  exec "$exe"
fi
# Until the interactive program exists: simulate the default scene for 10 s of simulated
# time and show the timings.
"$exe" init --scene assets/scenes/steer.ini --out out/start.npy
"$exe" step --scene assets/scenes/steer.ini --in out/start.npy --out out/end.npy --steps 600 --stats
echo "wrote out/start.npy and out/end.npy (16384 boids, 600 steps)"
