#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install the Debian packages shoal needs to build, test and run, if any is missing.
# Usage: tools/deps.sh [build|run|test|arm|profile|all]   (default: all)
#   build: compile shoal; run: build + ffmpeg (tools/run.sh: the headless default writes a
#   video); test: build + what the suite uses (the ARM cross build included); arm: the
#   aarch64 cross build and qemu-user alone (tools/arm_check.sh, docs/ARM.md); profile:
#   linux-perf (tools/profile.sh).
set -euo pipefail
what=${1:-all}

# libomp-dev: LLVM's OpenMP runtime, which the library runs on also when gcc compiles it (its
# threads' wait is then chosen at run time; docs/LIBRARY.md, Threads)
pkgs=(meson ninja-build gcc pkg-config python3-dev python3-numpy libsdl2-dev libsdl2-ttf-dev fonts-dejavu-core
      libfontconfig-dev libinih-dev libpng-dev libopenmpi-dev openmpi-bin librandom123-dev libomp-dev)
if [ "$what" = run ]; then
  pkgs+=(ffmpeg)
fi
if [ "$what" = profile ]; then
  pkgs=(linux-perf)
fi
# The aarch64 cross build (docs/ARM.md): Debian's cross compiler and qemu-user, and the arm64
# libraries the library and the test suite link (libpng, inih, cmocka) and qemu runs them
# with (libc6, libgomp1) from Debian's multiarch (dpkg --add-architecture arm64). Only on
# x86-64 hosts: an aarch64 host builds and tests natively.
arm=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross libgomp1-arm64-cross qemu-user
     libpng-dev:arm64 libinih-dev:arm64 libcmocka-dev:arm64 libgomp1:arm64)
if [ "$(uname -m)" = x86_64 ]; then
  if [ "$what" = arm ]; then
    pkgs=("${arm[@]}")
  elif [ "$what" = test ] || [ "$what" = all ]; then
    pkgs+=("${arm[@]}")
  fi
elif [ "$what" = arm ]; then
  echo "tools/deps.sh arm: the cross build is for x86-64 hosts; on $(uname -m) build natively" >&2
  exit 1
fi
if [ "$what" = test ] || [ "$what" = all ]; then
  pkgs+=(libcmocka-dev clang clang-format libomp-dev libclang-rt-14-dev python3-numpy python3-pytest
        python3-pandas python3-mesonpy patchelf g++ xvfb xauth xdotool
        ffmpeg python3-matplotlib python3-vtk9 bsdutils gcovr libegl-dev libgles-dev libegl-mesa0
        libgl1-mesa-dri python3-nbformat python3-nbclient python3-ipykernel jupyter-nbconvert)
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
# an arm64 package needs Debian's multiarch to know the architecture first
if printf '%s\n' "${missing[@]}" | grep -q ':arm64$' &&
   ! dpkg --print-foreign-architectures | grep -qx arm64; then
  $SUDO dpkg --add-architecture arm64
fi
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
