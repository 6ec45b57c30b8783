#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job: install what is missing, build shoal (release: -O3 with -g and frame
# pointers), and run it. With a display `shoal` opens a window on the default scene
# (assets/scenes/school.ini); with none it runs headless and writes 10 s of simulated time
# to out/shoal.mp4 (PNG frames in out/frames without ffmpeg). Extra arguments go to shoal.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh run
if [ ! -f build-release/build.ninja ]; then
  meson setup build-release --buildtype=release -Dtests=false
fi
ninja -C build-release >/dev/null
exe=build-release/src/app/shoal
if [ $# -gt 0 ]; then
  exec "$exe" "$@"
fi
# `shoal` alone is `shoal run`: a window on the default scene, or with no display a video
# of it in out/shoal.mp4 and the timings (docs/APP.md).
exec "$exe"
