#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Instructions executed by aarch64 builds of shoal, counted under qemu-user with the plugin
# tools/qemu_insn.c: a step of every model and a few frames, per build and ISA. How the
# NEON width was chosen without an ARM machine (docs/ARM.md): builds that differ only in
# SIMD_NEON_WORDS (-Dc_args=-DSIMD_NEON_WORDS=W), the same inputs, one thread.
# Usage: tools/arm_insns.sh LABEL=BUILD/src/app/shoal[:ISA] ...   (ISA default: neon)
#   e.g. tools/arm_insns.sh scalar=build-arm/src/app/shoal:scalar w1=/tmp/w1/src/app/shoal \
#        w2=build-arm/src/app/shoal
# Prints one row per workload: total instructions (millions) per build, and those in the
# functions named *_neon / *_scalar (the kernels; helpers the compiler kept out of line are
# in the total only). N=3000 boids, STEPS=2 (environment).
set -eu
N=${N:-3000}
STEPS=${STEPS:-2}
cd "$(dirname "$0")/.."
W=$(mktemp -d /tmp/shoal-insns.XXXXXX)
trap 'rm -rf "$W"' EXIT
cc -shared -fPIC -O2 -o "$W/qemu_insn.so" tools/qemu_insn.c
first=${1#*=}
first=${first%%:*}
for m in steer average heading classic fov; do
    qemu-aarch64 "$first" init --model "$m" --count "$N" --seed 3 --out "$W/$m.npy" >/dev/null 2>&1
done
count() { # exe isa args...: "total kernel" in millions
    local exe=$1 isa=$2
    shift 2
    qemu-aarch64 -plugin "$W/qemu_insn.so,fn=_$isa" "$exe" "$@" 2>&1 >/dev/null |
        awk '/^insns [0-9]/ { t = $2 } /^insns _/ { k = $3 } END { printf "%.1f %.1f", t / 1e6, k / 1e6 }'
}
printf '%-22s' "workload"
for b in "$@"; do printf ' %20s' "${b%%=*} (total kernel)"; done
echo
row() { # label, shoal arguments (without --simd)
    local label=$1
    shift
    printf '%-22s' "$label"
    for b in $BUILDS; do
        local exe=${b#*=} isa=neon
        case $exe in *:*) isa=${exe##*:} exe=${exe%:*} ;; esac
        printf ' %20s' "$(count "$exe" "$isa" "$@" --simd "$isa")"
    done
    echo
}
BUILDS="$*"
for m in steer average heading classic fov; do
    row "step $m" step --model "$m" --in "$W/$m.npy" --out "$W/o.npy" --steps "$STEPS" \
        --threads 1 --quiet
done
row "render lit 1280x720" render --in "$W/steer.npy" --out "$W/f.png" --size 1280x720 \
    --fish-length 0.6 --threads 1
row "render near (stamps)" render --in "$W/steer.npy" --out "$W/f.png" --size 1280x720 \
    --eye 0,2,9 --target 0,0,0 --fish-length 0.6 --threads 1
row "render id (no LOD)" render --in "$W/fov.npy" --out "$W/f.png" --size 1280x720 \
    --shade id --fish-length 1 --threads 1
