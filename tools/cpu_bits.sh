#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The CPU's bits, recorded: sha256 of `shoal step` outputs for every scene of assets/scenes
# and every model (defaults, with predators in both chase modes, with obstacle spheres), each
# with the scalar, AVX2 and AVX-512 kernels (those the CPU has), a few steps each. A change
# that must not move the CPU's results (a refactor of the kernels) gives the same file:
#   tools/cpu_bits.sh build/src/app/shoal before.txt   # before the change
#   tools/cpu_bits.sh build/src/app/shoal after.txt && diff before.txt after.txt
set -eu
SHOAL=$1
OUTF=$2
STEPS=${STEPS:-4}
cd "$(dirname "$0")/.."
W=$(mktemp -d /tmp/shoal-bits.XXXXXX)
trap 'rm -rf "$W"' EXIT
isas="scalar"
grep -qw avx2 /proc/cpuinfo && isas="$isas avx2"
grep -qw avx512f /proc/cpuinfo && isas="$isas avx512"
grep -qw asimd /proc/cpuinfo && isas="$isas neon" # aarch64's Features line
: >"$OUTF"
run() { # label, init args, step args
    local label=$1 ia=$2 sa=$3
    # shellcheck disable=SC2086
    "$SHOAL" init $ia --out "$W/in.npy" >/dev/null
    for isa in $isas; do
        # shellcheck disable=SC2086
        "$SHOAL" step $sa --in "$W/in.npy" --out "$W/out.npy" --steps "$STEPS" --simd $isa \
            --threads 2 >/dev/null
        echo "$(sha256sum <"$W/out.npy" | cut -c1-16) $label $isa" >>"$OUTF"
    done
}
for sc in assets/scenes/*.ini; do
    run "$(basename "$sc")" "--scene $sc" "--scene $sc"
done
for m in $("$SHOAL" params --names); do # every model of the library's table
    run "$m" "--model $m --count 3000" "--model $m"
    p="--set predator_count=3 --set flee_radius=4 --set flee_weight=5 --set predator_start=0,0,6"
    run "$m+pred" "--model $m --count 3000" "--model $m $p"
    run "$m+pred-centre" "--model $m --count 3000" "--model $m $p --set predator_chase=1"
done
wc -l <"$OUTF"
