#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install the Debian packages shoal needs to build, test and run, if any is missing.
# Usage: tools/deps.sh [build|run|test|profile|all]   (default: all)
#   build: compile shoal; run: build + ffmpeg (tools/run.sh: the headless default writes a
#   video); test: build + what the suite uses; profile: linux-perf (tools/profile.sh).
set -euo pipefail
what=${1:-all}

# libomp-dev: LLVM's OpenMP runtime, which the library runs on also when gcc compiles it (its
# threads' wait is then chosen at run time; docs/LIBRARY.md, Threads)
pkgs=(meson ninja-build gcc pkg-config python3-dev python3-numpy libsdl2-dev libsdl2-ttf-dev fonts-dejavu-core
      libfontconfig-dev libinih-dev libpng-dev libopenmpi-dev openmpi-bin libomp-dev)
if [ "$what" = run ]; then
  pkgs+=(ffmpeg)
fi
if [ "$what" = profile ]; then
  pkgs=(linux-perf)
fi
if [ "$what" = test ] || [ "$what" = all ]; then
  pkgs+=(libcmocka-dev clang clang-format libomp-dev libclang-rt-14-dev python3-numpy python3-pytest
        python3-pandas python3-mesonpy patchelf g++ xvfb xauth xdotool
        ffmpeg python3-matplotlib python3-vtk9 bsdutils gcovr libegl-dev libgles-dev libegl-mesa0
        libgl1-mesa-dri)
fi

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "shoal: installing missing Debian packages: ${missing[*]}" >&2
SUDO=
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
