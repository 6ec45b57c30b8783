#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The bytes of a fixed set of outputs, for changes that must not move them (a refactor of the
# kernels, the sort, the rasterizer, src/mpi): md5 of `shoal step` results (every model and
# obstacle/predator/target scene, scalar/AVX2/AVX-512 as the CPU has them, 1 and 2 threads),
# of `shoal render` images (lit with and without LOD, id shading, each ISA, 1 and 2 threads)
# and of `shoal run --headless` frames. The input states are drawn once into INPUTS (kept
# between calls), so a change of `shoal init`'s defaults does not move the record.
#   tools/bytes_record.sh BUILD/src/app/shoal before.txt [INPUTS]
#   ... change ...
#   tools/bytes_record.sh BUILD/src/app/shoal after.txt [INPUTS] && diff before.txt after.txt
set -eu
SHOAL=$(realpath "$1")
OUTF=$(realpath -m "$2")
INP=$(realpath -m "${3:-/tmp/shoal-bytes-inputs}")
STEPS=${STEPS:-6}
cd "$(dirname "$0")/.."
W=$(mktemp -d /tmp/shoal-bytes.XXXXXX)
trap 'rm -rf "$W"' EXIT
mkdir -p "$INP"
isas="scalar"
grep -qw avx2 /proc/cpuinfo && isas="$isas avx2"
grep -qw avx512f /proc/cpuinfo && isas="$isas avx512"
grep -qw asimd /proc/cpuinfo && isas="$isas neon" # aarch64's Features line
: >"$OUTF"
rec() { echo "$(md5sum <"$1" | cut -c1-16) $2" >>"$OUTF"; }

# Inputs: drawn with explicit start radii so that they do not depend on init's defaults.
input() { # name, init args
    [ -s "$INP/$1.npy" ] || "$SHOAL" init $2 --out "$INP/$1.npy" >/dev/null 2>&1
}
# Every model of the library's table (shoal params --names, in enum order): model k draws
# 3000 boids with seed 5 + k (1500 where its default school is under 1000 boids: classic's
# small box), and a model that starts in a ball of velocities too (init_vel_radius: steer,
# average) starts in a ball of radius 6 with velocities up to 2.
MODELS=$("$SHOAL" params --names)
DEFAULT_MODEL=$(echo "$MODELS" | head -1) # the library's default (the first of the table)
k=0
for m in $MODELS; do
    info=$("$SHOAL" params --model "$m")
    n=$(echo "$info" | sed -n '1s/.*(\([0-9]*\) boids by default).*/\1/p')
    args="--model $m --count $([ "${n:-0}" -lt 1000 ] && echo 1500 || echo 3000) --seed $((5 + k))"
    echo "$info" | grep -q '^  init_vel_radius ' &&
        args="$args --set init_pos_radius=6 --set init_vel_radius=2"
    input "$m" "$args"
    k=$((k + 1))
done
input dense "--model $DEFAULT_MODEL --count 2000 --seed 10 --set init_pos_radius=2 --set init_vel_radius=1"

step() { # label, input, step args
    local label=$1 in=$2 sa=$3
    for isa in $isas; do
        for t in 1 2; do
            # shellcheck disable=SC2086
            "$SHOAL" step $sa --in "$INP/$in.npy" --out "$W/o.npy" --steps "$STEPS" --simd "$isa" \
                --threads "$t" --quiet >/dev/null
            rec "$W/o.npy" "step $label $isa t$t"
        done
    done
}
for m in $MODELS; do
    step "$m" "$m" "--model $m"
    p="--set predator_count=3 --set flee_radius=4 --set flee_weight=5 --set predator_start=0,0,6"
    step "$m+pred" "$m" "--model $m $p"
    step "$m+pred-centre" "$m" "--model $m $p --set predator_chase=1"
done
step dense dense "--model $DEFAULT_MODEL"
step brute "$DEFAULT_MODEL" "--model $DEFAULT_MODEL --neighbors brute"
for sc in steer_rock steer_rock_mesh steer_predator heading_targets fov_rock average_suimi; do
    m=$(sed -n 's/^model *= *//p' "assets/scenes/$sc.ini" | head -1)
    step "$sc" "$m" "--scene assets/scenes/$sc.ini"
done

render() { # label, input, render args
    local label=$1 in=$2 ra=$3
    for isa in $isas; do
        for t in 1 2; do
            # shellcheck disable=SC2086
            "$SHOAL" render --in "$INP/$in.npy" --out "$W/f.png" --simd "$isa" --threads "$t" \
                --size 320x200 $ra >/dev/null
            rec "$W/f.png" "render $label $isa t$t"
        done
    done
}
render lit steer "--fish-length 0.6"
render lit-near steer "--eye 0,2,9 --target 0,0,0 --fish-length 0.6"
render nolod steer "--lod off --fish-length 0.6"
render id fov "--shade id --fish-length 1"
render far heading "--eye 0,0,300 --target 0,0,0 --fish-length 1"
render classic classic "--fish-length 1"

runh() { # label, run args
    rm -rf "$W/fr"
    # shellcheck disable=SC2086
    "$SHOAL" run --headless --frames 4 --out "$W/fr" --size 320x200 --steps-per-frame 1 --hud off \
        --threads 2 $1 >/dev/null 2>&1
    for f in "$W"/fr/*.png; do rec "$f" "run $2 $(basename "$f")"; done
}
runh "--scene assets/scenes/steer.ini --count 3000 --fish-length 0.6" steer
runh "--scene assets/scenes/steer_predator.ini --count 2000 --fish-length 0.6" predator
runh "--scene assets/scenes/steer_rock_mesh.ini --count 2000 --fish-length 0.6" rock
# Under MPI (MPI_RANKS="2 3", built with -Dmpi, mpirun on PATH): the same bytes are the
# contract there too, so a refactor of src/mpi records step (every model, predators, a mesh,
# .vtp, a checkpoint and its resume), init, render and run --headless at each rank count.
if [ -n "${MPI_RANKS:-}" ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
    export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_hwloc_base_binding_policy=none
    export OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
    for r in $MPI_RANKS; do
        M="mpirun --oversubscribe -np $r $SHOAL"
        for m in $MODELS; do
            $M step --model "$m" --in "$INP/$m.npy" --out "$W/o.npy" --steps "$STEPS" --threads 1 \
                --quiet >/dev/null
            rec "$W/o.npy" "mpi$r step $m"
        done
        p="--set predator_count=3 --set flee_radius=4 --set flee_weight=5 --set predator_start=0,0,6"
        # shellcheck disable=SC2086
        $M step --model steer $p --set predator_chase=1 --in "$INP/steer.npy" --out "$W/o.npy" \
            --steps "$STEPS" --threads 1 --checkpoint "$W/c.ckpt" --quiet >/dev/null
        rec "$W/o.npy" "mpi$r step steer+pred-centre"
        rec "$W/c.ckpt" "mpi$r checkpoint"
        $M step --resume "$W/c.ckpt" --out "$W/o.vtp" --steps "$STEPS" --threads 1 --quiet >/dev/null
        rec "$W/o.vtp" "mpi$r resume vtp"
        $M step --scene assets/scenes/steer_rock_mesh.ini --in "$INP/steer.npy" --out "$W/o.npy" \
            --steps "$STEPS" --threads 1 --quiet >/dev/null
        rec "$W/o.npy" "mpi$r step steer_rock_mesh"
        $M init --model fov --count 3001 --seed 5 --out "$W/i.npy" >/dev/null 2>&1
        rec "$W/i.npy" "mpi$r init"
        $M render --in "$INP/steer.npy" --out "$W/f.png" --size 320x200 --fish-length 0.6 >/dev/null
        rec "$W/f.png" "mpi$r render"
        rm -rf "$W/fr"
        $M run --headless --frames 3 --out "$W/fr" --size 320x200 --hud off --threads 1 \
            --scene assets/scenes/steer_predator.ini --count 2000 >/dev/null 2>&1
        for f in "$W"/fr/*.png; do rec "$f" "mpi$r run $(basename "$f")"; done
    done
fi
wc -l <"$OUTF"
