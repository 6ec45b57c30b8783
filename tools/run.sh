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
# `shoal` alone is `shoal run`: a window on the default scene, or with no display 120
# headless frames in out/frames/ and the timings (docs/APP.md).
exec "$exe"
