#!/bin/sh
# SPDX-License-Identifier: MIT
# The include roots of one build target (run by meson at setup; docs/ARCHITECTURE.md, "Layers"):
#   tools/layers.sh SOURCE_ROOT BUILD_ROOT TARGET MODULE...
# makes BUILD_ROOT/layers/TARGET/MODULE -> SOURCE_ROOT/src/MODULE and
# BUILD_ROOT/layers/TARGET-gen/MODULE -> BUILD_ROOT/src/MODULE (the module's generated
# headers) for each MODULE, and nothing else: with these two directories as its only
# internal include paths, the target's `#include "module/file.h"` finds the modules it may
# use and fails to compile for any other.
set -eu
src=$1 build=$2 target=$3
shift 3
root=$build/layers/$target
rm -rf "$root" "$root-gen"
mkdir -p "$root" "$root-gen"
for m in "$@"; do
    [ -d "$src/src/$m" ] || { echo "layers.sh: no module src/$m" >&2; exit 1; }
    ln -s "$src/src/$m" "$root/$m"
    ln -s "$build/src/$m" "$root-gen/$m"
done
