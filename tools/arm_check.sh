#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The ARM part of the test command (docs/ARM.md), on an x86-64 host: the aarch64 cross build
# (tools/cross/aarch64-linux-gnu.ini: library, program and test suite, -Werror), its checks
# that nothing contracts into FMLA (test_no_fma), the NEON kernels' own test cases under
# qemu-user, then tools/arm_bits.sh: every output of tools/bits_set.sh from the x86 build
# and from the aarch64 build under qemu, byte for byte. The cross build directory is kept
# between runs (incremental).
# Usage: tools/arm_check.sh X86_SHOAL [BUILD_DIR]   (default BUILD_DIR: build-arm)
set -euo pipefail
cd "$(dirname "$0")/.."
ref=$(realpath "$1")
dir=${2:-build-arm}
start=$(date +%s)
tools/deps.sh arm
opts=(-Dsdl=disabled -Dmpi=disabled -Dpython=disabled -Dcuda=disabled -Dwerror=true
      --buildtype=debugoptimized)
log=$(mktemp /tmp/shoal-armbuild.XXXXXX)
trap 'rm -f "$log"' EXIT
if [ ! -f "$dir/build.ninja" ] &&
   ! meson setup "$dir" --cross-file tools/cross/aarch64-linux-gnu.ini "${opts[@]}" >"$log" 2>&1; then
  cat "$log" >&2
  exit 1
fi
if ! ninja -C "$dir" >"$log" 2>&1; then
  grep -Ev '^\[[0-9]+/[0-9]+\] ' "$log" >&2
  echo "arm_check: the aarch64 build failed" >&2
  exit 1
fi
built=$(date +%s)
# Cases that drive the program through the shell run under qemu (tests/cli_harness.h adds
# the exe_wrapper); test_no_fma disassembles the library with the cross objdump.
meson test -C "$dir" --no-rebuild --print-errorlogs --num-processes "$(nproc)" \
  --timeout-multiplier 4 test_no_fma test_cli_neon test_raster_neon
tested=$(date +%s)
tools/arm_bits.sh "$ref" "$dir/src/app/shoal"
echo "arm_check: cross build $((built - start)) s, tests under qemu $((tested - built)) s," \
  "bits $(($(date +%s) - tested)) s"
