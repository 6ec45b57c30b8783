#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build, check and time everything on the GPU device machine in one call (docs/GPU.md).
#   1. the -dev packages the machine lacks (libinih, cmocka, Random123) from .carry/*.deb into
#      /tmp/sysroot (fetch them once, here: tools/device.sh --fetch);
#   2. meson build with -Dcuda=enabled; the whole test suite, test_gpu (CPU/GPU parity)
#      included;
#   3. parity at scale (every model at 131072 boids and 1M; 1000 steps but 100 for the
#      slower models at 1M; the obstacle and predator scenes at 1M, 100 steps) and the atomic order's
#      wander over 1000 steps (CSV + PNG);
#   4. timings: GPU ms/step (stable and atomic order) for N = 16k, 131k, 1M, 4M (steer,
#      uniform box at density 0.5), the CPU at 1M with 1, 2, 4, 8, 16 threads and at every
#      N with all cores.
# Writes $OUT/device_report.txt (everything), CSVs and a PNG; prints the table last.
# usage (on the device): [PARTS="test parity"] [BUILD=dir] tools/device.sh  (from the repo root)
#        (here, once):   tools/device.sh --fetch
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD

if [ "${1:-}" = "--fetch" ]; then
    mkdir -p .carry && cd .carry &&
        apt-get download libinih-dev libinih1 libcmocka-dev libcmocka0 librandom123-dev libomp5-14 libomp-14-dev
    ex=$(git -C "$ROOT" rev-parse --git-path info/exclude)
    case $ex in /*) ;; *) ex=$ROOT/$ex ;; esac
    mkdir -p "$(dirname "$ex")"
    grep -qsx '/.carry/' "$ex" || echo '/.carry/' >>"$ex"
    exit $?
fi

OUT=${OUT:-$ROOT/out/device}
# PARTS picks what runs (each fits one device call): test (peak, the whole suite),
# parity (cpu vs cuda at scale, the wander), scenes (obstacle and predator scenes at 1M:
# parity over 100 steps, GPU ms/step against the plain box at 1M and 4M), time (GPU and CPU ms/step), bench (shoal bench),
# app (shoal run headless, bench_sort), frame (issue 18: 1M step + baseline ratio, LOD
# frames, whole frames of shoal run), mpi (MPI splits, strong and weak scaling:
# docs/SCALING.md;
# CUDA=disabled skips nvcc when only mpi runs), mpirun (run --headless under MPI at 1M:
# identical frames, fps per ranks x threads split, the composite's wait / encode / compare /
# transfer and bytes per frame), mpi42 (issue 42: 4M steer as 1x16, 2x8, 4x4, 16x1 bound to
# cores, 16x1 with SHOAL_MPI_BALANCE=count and the floor of 16 independent processes, each
# split's stages against one process of N/R boids on T cores, 1M frames as 1x16, 2x8, 4x4,
# weak scaling 256k per rank against threads of one process and the floor; per-step
# medians, REPS=5 interleaved runs, CUDA=disabled MPI=enabled: docs/SCALING.md), headless (issue 26:
# run's per-frame output cost on 2 cores with PNG frames, none and the default output;
# init --count 1000000 + one step per model on 2 cores), render (issue 29: render
# --bench setup/raster by threads, the llvmpipe ratio on 2 threads, the LOD image error),
# verify (issue 32: the CUDA backend in atomic and stable order as an outside program, checked
# step by step by shoal verify against both references; test_gpu's test_verify_gpu_orders does
# it at 3000 boids), python (the Python package built with CUDA: tests/python's cuda tests,
# CPU vs CUDA from Python, bit for bit, and docs/PYTHON.md's comparison at 100k; needs python3
# with numpy, pytest and Python.h), kernel (issue 28: peak and copy bandwidth, steer 1M/4M
# stages, lane-pairs per boid of every model), wait (issue 43: the OpenMP runtime and the
# library's wait policy on many idle cores and with a busy loop per core; test_threads and
# test_gpu's set_params parity), worlds (issue 38: periodic and 2D worlds on the GPU:
# test_gpu's test_worlds parity, test_noise's GPU draws, test_periodic's golden bytes),
# worlds_scale (issue 38: every model cpu vs cuda in a torus and a 2D torus at 131072 boids,
# 1000 steps; steer periodic against walled at 1M on the GPU and the CPU), literature (issue
# 39: vicsek, couzin and flockers on their scenes, cpu vs cuda over 1000 steps; vicsek_1995
# and flockers scaled to 131072 and 1M; flockers' ms/step at 10^5 and 10^6 on the GPU and on
# 2 and 16 cores), mpiworlds (issue 38: 1M steer walled, in a torus and a 2D torus as 1x16,
# 2x8, 4x4 bound to cores, medians of REPS=3, bytes of every split against one process's:
# CUDA=disabled MPI=enabled),
# sort (issue 40: the sort inside steps, staged
# against slot-by-slot scatter, 1 to all threads, 1M and 4M; the stage medians of steps),
# plaingrid (issue 40: shoal bench's baseline against the plain-grid yardstick, same run:
# PLAINGRID=path/to/plaingrid.cpp, the project's shared baselines; default: a shared/ copy in
# the working tree), clusters (issue 40: the cluster-list kernel against the lane groups, same
# run: its tests, 1M with the plain grid, 1M and 4M stages, every model's lane-pairs, a profile),
# kernelpick (issue 40, short: steer 1M at density 0.5 on every core, AVX-512, the lane groups and
# the cluster lists alternately, REPS=3 runs of 20 steps each: the forces' and the step's median)
PARTS=${PARTS:-test parity time bench}
NCPU=$(nproc)
SUITE="not run" GPU_TEST="not run"
declare -A G GA C CT
has() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
mkdir -p "$OUT"
REPORT=$OUT/device_report.txt
: >"$REPORT"
BUILD=${BUILD:-/tmp/shoal-build}
W=/tmp/shoal-work
mkdir -p "$W"
log() { echo "$*" | tee -a "$REPORT"; }
T0=$(date +%s)
stamp() { log "--- [$(($(date +%s) - T0)) s] $*"; }

# ---- 1. sysroot for the missing -dev packages ------------------------------------------
SYS=/tmp/sysroot
if ls .carry/*.deb >/dev/null 2>&1; then
    for f in .carry/*.deb; do dpkg -x "$f" "$SYS"; done
    for pc in "$SYS"/usr/lib/x86_64-linux-gnu/pkgconfig/*.pc; do
        sed -i "s|^prefix=/usr|prefix=$SYS/usr|" "$pc"
    done
fi
export PKG_CONFIG_PATH=$SYS/usr/lib/x86_64-linux-gnu/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export CPATH=$SYS/usr/include${CPATH:+:$CPATH}
export LIBRARY_PATH=$SYS/usr/lib/x86_64-linux-gnu${LIBRARY_PATH:+:$LIBRARY_PATH}
export LD_LIBRARY_PATH=$SYS/usr/lib/x86_64-linux-gnu:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=/usr/local/cuda/bin:$PATH

stamp "machine"
{
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
    nvcc --version | tail -2
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) x $(nproc)"
} 2>&1 | tee -a "$REPORT"

# ---- 2. build and test ------------------------------------------------------------------
stamp "build"
if [ ! -f "$BUILD/build.ninja" ]; then
    meson setup "$BUILD" --buildtype=release -Dcuda=${CUDA:-enabled} -Dmpi=${MPI:-auto} -Dsdl=disabled >"$W/setup.log" 2>&1 ||
        { tail -40 "$W/setup.log" | tee -a "$REPORT"; exit 1; }
fi
ninja -C "$BUILD" >"$W/build.log" 2>&1 || { tail -60 "$W/build.log" | tee -a "$REPORT"; exit 1; }
grep -E "warning" "$W/build.log" | head -20 | tee -a "$REPORT"
SHOAL=$BUILD/src/app/shoal
if has test; then
stamp "cpu topology and FP peak (tools/peak: 1 thread and every thread)"
lscpu 2>&1 | grep -E "^(Model name|CPU\(s\)|Thread|Core|Socket|NUMA node\(s\)|CPU max MHz)" | tee -a "$REPORT"
"$BUILD/tools/peak" 0.5 2>&1 | tee -a "$REPORT"

stamp "meson test (the whole suite; test_gpu is the CPU/GPU parity, 1000 steps)"
timeout 420 meson test -C "$BUILD" --no-rebuild --num-processes 4 --print-errorlogs \
    >"$W/meson_test.log" 2>&1
SUITE=$?
grep -E "^ *[0-9]+/[0-9]+ |^(Ok|Fail|Skipped|Timeout):" "$W/meson_test.log" | tee -a "$REPORT"
log "meson test exit status: $SUITE"
# test_gpu's own output (every parity case) from the test log
grep -E "^(parity|  first|    +gpu|cpu:|gpu:|atomic order|SKIP)" \
    "$BUILD/meson-logs/testlog.txt" >"$W/test_gpu.log"
cat "$W/test_gpu.log" >>"$REPORT"
GPU_TEST=$(grep -E "test_gpu +(OK|FAIL|SKIP|TIMEOUT|ERROR)" "$W/meson_test.log" | awk '{print $3}')

fi
# ---- MPI (docs/SCALING.md): before the states, it makes its own -------------------------
if has mpi; then
stamp "MPI: steer, uniform box at density 0.5; ranks x threads on $NCPU cores"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun --version 2>&1 | head -1 | tee -a "$REPORT"
MSTEPS=${MSTEPS:-20}
declare -A MSIDE
MCSV=$OUT/mpi.csv
echo "case,N,ranks,threads,steps,wall_ms_step,compute_ms_step,comm_ms_step,comm_share_pct,halo_bytes_step,migrated_step,imbalance_mean,identical" >"$MCSV"
mpi_case() { # label N ranks threads steps [mpirun placement, default --bind-to none]
    local n=$2 r=$3 t=$4 k=$5 side=${MSIDE[$2]} f="$W/mpi_$1_$2_$3x$4"
    local place=${6:---bind-to none}
    # shellcheck disable=SC2086
    timeout 300 mpirun --oversubscribe $place -np $r -x OMP_WAIT_POLICY=active \
        "$SHOAL" step --in "$W/mbox_$n.npy" --out "$f.npy" --steps $k --threads $t \
        --set wall_size=$side,$side,$side --stats 2>"$f.txt" >/dev/null
    local rc=$? same=no
    [ -f "$W/mref_$n.npy" ] || cp "$f.npy" "$W/mref_$n.npy" 2>/dev/null
    cmp -s "$f.npy" "$W/mref_$n.npy" && same=yes
    { echo "== $1 N=$n $r ranks x $t threads ($place)"; cat "$f.txt"; } >>"$REPORT"
    awk -v c="$1" -v n=$n -v r=$r -v t=$t -v k=$k -v same=$same -v rc=$rc '
        /per step \(all ranks\): halo/ {for (i = 1; i <= NF; i++) if ($i == "boids" && $(i+1) == "sent") halo = $(i+2); gsub(/\(/, "", halo); mig = $(NF-7)}
        /imbalance/ {imb = $(NF-4); gsub(/,/, "", imb)}
        /time per step/ {comp = $5; comm = $10; share = $(NF-9); gsub(/%/, "", share)}
        /wall per step/ {wall = $4}
        END {printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", c, n, r, t, k, wall, comp, comm, share, halo, mig, imb, (rc ? "rc" rc : same)}' \
        "$f.txt" | tee -a "$MCSV"
}
for n in 262144 524288 1048576 2097152 4194304; do
    MSIDE[$n]=$(python3 tools/gen_box.py $n "$W/mbox_$n.npy" --density 0.5)
done
# reference bytes: one process, all cores
for n in 1048576 4194304; do
    "$SHOAL" step --in "$W/mbox_$n.npy" --out "$W/mref_$n.npy" --steps $MSTEPS --threads $NCPU \
        --set wall_size=${MSIDE[$n]},${MSIDE[$n]},${MSIDE[$n]} --stats 2>"$W/mref_$n.txt" >/dev/null
    log "one process, $n boids, $NCPU threads: $(awk -v k=$MSTEPS '$1=="sim" {printf "%.3f", $2 / k}' "$W/mref_$n.txt") ms/step (sim stages)"
done
for n in 1048576 4194304; do
    for rt in 1x16 2x8 4x4 8x2 16x1; do
        mpi_case split $n ${rt%x*} ${rt#*x} $MSTEPS
    done
done
for rt in 1x16 4x4 16x1; do # pinned: each rank's threads on their own cores
    mpi_case pinned 4194304 ${rt%x*} ${rt#*x} $MSTEPS "--map-by slot:PE=${rt#*x} --bind-to core"
done
for r in 1 2 4 8; do mpi_case strong 1048576 $r 1 $MSTEPS; done
for r in 1 2 4 8 16; do mpi_case weak $((262144 * r)) $r 1 $MSTEPS; done
fi

# ---- issue 42: MPI ranks against threads, the issue's table redone (medians) -------------
# The yardstick (2026-11-28): every case is timed by the median of its steps (one process:
# the sum of its stages' medians; under mpirun: rank 0's median step, which ends in the
# step's reduction), so neither side counts the first step's first-touch faults, which one
# process pays inside its loop and the ranks before theirs; the cases run interleaved, rep
# by rep, so that a slow minute of the machine falls on all of them; and the machine's own
# floor is measured: R independent one-process runs of N/R boids at once, one per core (no
# MPI at all), whose slowest is what any static split of the work can reach on these cores.
if has mpi42; then
stamp "issue 42: ranks x threads against one process, bound to cores; medians of ${REPS:-5} interleaved runs"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun --version 2>&1 | head -1 | tee -a "$REPORT"
lscpu 2>/dev/null | grep -E "^(Model name|CPU\(s\)|Thread|Core|Socket|NUMA node|Hypervisor|L3)" | tee -a "$REPORT"
REPS=${REPS:-5} K42=${K42:-20}
C42=$OUT/mpi42.csv
echo "table,case,N,ranks,threads,rep,value,unit,identical" >"$C42"
declare -A S42 V42 M42 SAME42
for n in 262144 524288 1048576 2097152 4194304; do
    S42[$n]=$(python3 tools/gen_box.py $n "$W/b42_$n.npy" --density 0.5)
done
# how each split is bound: every rank its T cores, each thread one of them
bind42() { # ranks threads -> mpirun's placement and binding
    if [ "$2" = 1 ]; then echo "--map-by core --bind-to core"; else echo "--map-by slot:PE=$2 --bind-to core"; fi
}
# the per-step median of one run's --stats: a process's sum of stage medians, or the ranks'
# median step
med42() { # stats file
    if grep -q "median step:" "$1"; then
        awk '/median step:/ {printf "%.3f", $3; exit}' "$1"
    else
        awk '$1 == "sim" {printf "%.3f", $3; exit}' "$1"
    fi
}
# one run of `step` (20 steps of the box of N): leaves the state in $W/o42_$tag.npy and the
# stats in $W/o42_$tag.txt. ranks: 0 = one process on cores 0..t-1; -1 = `ranks` (t
# given as ranks) independent one-thread processes at once, core i each (the floor); else
# mpirun. ENV42: extra environment for mpirun (-x NAME=VALUE ...)
step42() { # tag N ranks threads
    local tag=$1 n=$2 r=$3 t=$4 s=${S42[$2]}
    local args=(step --in "$W/b42_$n.npy" --out "$W/o42_$tag.npy" --steps "$K42" --threads "$t"
        --set "wall_size=$s,$s,$s" --stats)
    if [ "$r" = 0 ]; then
        OMP_PROC_BIND=close OMP_PLACES=cores OMP_WAIT_POLICY=active timeout 300 \
            taskset -c "0-$((t - 1))" "$SHOAL" "${args[@]}" 2>"$W/o42_$tag.txt" >/dev/null
    elif [ "$r" = -1 ]; then
        local i
        for i in $(seq 0 $((t - 1))); do
            OMP_PROC_BIND=close OMP_PLACES=cores OMP_WAIT_POLICY=active timeout 300 taskset -c "$i" \
                "$SHOAL" step --in "$W/b42_$n.npy" --out - --steps "$K42" --threads 1 \
                --set "wall_size=$s,$s,$s" --stats 2>"$W/o42_${tag}_p$i.txt" >/dev/null &
        done
        wait
        for i in $(seq 0 $((t - 1))); do med42 "$W/o42_${tag}_p$i.txt"; echo; done >"$W/o42_$tag.each"
        for i in $(seq 0 $((t - 1))); do mean42 "$W/o42_${tag}_p$i.txt"; echo; done >"$W/o42_$tag.means"
        { echo "independent processes, per-step medians (ms) by core:"; tr '\n' ' ' <"$W/o42_$tag.each"; echo; } >"$W/o42_$tag.txt"
    else
        # shellcheck disable=SC2046,SC2086
        timeout 300 mpirun $(bind42 "$r" "$t") -np "$r" -x OMP_PROC_BIND=close -x OMP_PLACES=cores \
            -x OMP_WAIT_POLICY=active ${ENV42:-} "$SHOAL" "${args[@]}" 2>"$W/o42_$tag.txt" >/dev/null
    fi
}
# the mean per step: the ranks' loop / steps (wall per step), a process's stage totals / steps
mean42() { # stats file
    if grep -q "wall per step:" "$1"; then
        awk '/wall per step:/ {printf "%.3f", $4; exit}' "$1"
    else
        awk -v k="$K42" '$1 == "sim" {printf "%.3f", $2 / k; exit}' "$1"
    fi
}
median42() { sort -g | awk '{v[NR] = $1} END {if (NR) printf "%.3f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
range42() { sort -g | awk 'NR == 1 {a = $1} {b = $1} END {printf "%s-%s", a, b}'; }
# one run of a case: its per-step median (the floor's: the slowest process) into V42[label]
# (a list), its mean per step (wall per step, or total / steps) and bytes into the CSV
run42() { # table label N ranks threads rep [reference state]
    local tb=$1 lab=$2 n=$3 r=$4 t=$5 q=$6 ref=${7:-} v mean same=-
    step42 "${lab}_$q" "$n" "$r" "$t"
    if [ "$r" = -1 ]; then
        v=$(sort -g "$W/o42_${lab}_$q.each" | tail -1)
        mean=$(sort -g "$W/o42_${lab}_$q.means" | tail -1)
    else
        v=$(med42 "$W/o42_${lab}_$q.txt")
        mean=$(mean42 "$W/o42_${lab}_$q.txt")
        if [ -n "$ref" ]; then
            same=yes
            cmp -s "$W/o42_${lab}_$q.npy" "$ref" || same=no
            [ "${SAME42[$lab]:-yes}" = no ] && same=no
            SAME42[$lab]=$same
        fi
    fi
    V42[$lab]="${V42[$lab]:-}$v"$'\n'
    M42[$lab]="${M42[$lab]:-}$mean"$'\n'
    echo "$tb,$lab,$n,$r,$t,$q,$v,ms/step median,$same" >>"$C42"
    echo "$tb,$lab,$n,$r,$t,$q,$mean,ms/step mean,$same" >>"$C42"
    { echo "== $tb $lab N=$n $r x $t, run $q: median $v ms/step (mean $mean)"; cat "$W/o42_${lab}_$q.txt"; } >>"$REPORT"
}
med_of() { printf "%s" "${V42[$1]:-}" | median42; }
mean_of() { printf "%s" "${M42[$1]:-}" | median42; }
rng_of() { printf "%s" "${V42[$1]:-}" | range42; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
# 4M steer: interleaved reps of every case (the reference state: one process's first run)
for q in $(seq 1 "$REPS"); do
    run42 step4m 1x16 4194304 0 16 "$q"
    [ "$q" = 1 ] && cp "$W/o42_1x16_1.npy" "$W/ref42_4m.npy"
    run42 step4m 1r16 4194304 1 16 "$q" "$W/ref42_4m.npy"
    for rt in 2x8 4x4 16x1; do run42 step4m "$rt" 4194304 "${rt%x*}" "${rt#*x}" "$q" "$W/ref42_4m.npy"; done
    ENV42="-x SHOAL_MPI_BALANCE=count" run42 step4m 16x1c 4194304 16 1 "$q" "$W/ref42_4m.npy"
    run42 step4m floor16 262144 -1 16 "$q"
done
base=$(med_of 1x16) mbase=$(mean_of 1x16)
log ""
log "4M steer, density 0.5, $K42 steps: ms per step, median of $REPS interleaved runs of: the median step [their range], and the mean step (the loop / steps: re-cuts and the first step's faults included)"
log "| split | binding | median step | range | / 1x16 | mean step | / 1x16 | same bytes |"
log "| --- | --- | --- | --- | --- | --- | --- | --- |"
row42() { # label split binding
    log "| $2 | $3 | $(med_of "$1") | $(rng_of "$1") | $(ratio "$(med_of "$1")" "$base") | $(mean_of "$1") | $(ratio "$(mean_of "$1")" "$mbase") | ${SAME42[$1]:--} |"
}
row42 1x16 "1 process x 16 threads" "OMP_PROC_BIND=close, OMP_PLACES=cores"
row42 1r16 "1 rank x 16 (mpirun)" "--map-by slot:PE=16 --bind-to core"
for rt in 2x8 4x4 16x1; do row42 "$rt" "$rt" "$(bind42 "${rt%x*}" "${rt#*x}")"; done
row42 16x1c "16x1, SHOAL_MPI_BALANCE=count" "--map-by core --bind-to core"
row42 floor16 "floor: 16 processes x 262144 boids, no MPI" "taskset -c i each"
log "(floor: the slowest of 16 independent one-thread processes at once; the per-core medians of each run are in device_report.txt)"
grep -h "time balance\|re-cuts" "$W/o42_16x1_1.txt" | tee -a "$REPORT"
# where a rank's step goes: its stages against one process stepping the same work (N/R boids
# on T cores, alone on the machine), from the first run of each split
for rt in 2x8 4x4 16x1; do
    r=${rt%x*} t=${rt#*x} n=$((4194304 / ${rt%x*}))
    step42 "brick_$rt" "$n" 0 "$t"
    log ""
    python3 tools/mpi_stages.py "$W/o42_${rt}_1.txt" "$W/o42_brick_$rt.txt" "$K42" \
        --label "4M as $rt against one process of $n boids x $t threads" 2>&1 | tee -a "$REPORT"
done
# frames: run --headless of the 1M scene, 40 frames (fps), interleaved
declare -A F42
for rt in 1x16 2x8 4x4; do
    r=${rt%x*} t=${rt#*x}
    if [ "$r" = 1 ]; then
        launch=(env OMP_PROC_BIND=close OMP_PLACES=cores OMP_WAIT_POLICY=active "$SHOAL")
    else
        # shellcheck disable=SC2046,SC2207
        launch=(timeout 300 mpirun $(bind42 "$r" "$t") -np "$r" -x OMP_PROC_BIND=close
            -x OMP_PLACES=cores -x OMP_WAIT_POLICY=active "$SHOAL")
    fi
    rm -rf "$W/f42_$rt" # 3 frames to PNG: one process's bytes
    "${launch[@]}" run --headless --scene assets/scenes/steer_1m.ini --frames 3 --threads "$t" \
        --steps-per-frame 1 --hud off --out "$W/f42_$rt" >/dev/null 2>&1
    same=yes
    for f in "$W"/f42_1x16/*.png; do cmp -s "$f" "$W/f42_$rt/${f##*/}" || same=no; done
    F42[$rt.same]=$same
done
for q in $(seq 1 "$REPS"); do
    for rt in 1x16 2x8 4x4; do
        r=${rt%x*} t=${rt#*x}
        if [ "$r" = 1 ]; then
            launch=(env OMP_PROC_BIND=close OMP_PLACES=cores OMP_WAIT_POLICY=active "$SHOAL")
        else
            # shellcheck disable=SC2046,SC2207
            launch=(timeout 300 mpirun $(bind42 "$r" "$t") -np "$r" -x OMP_PROC_BIND=close
                -x OMP_PLACES=cores -x OMP_WAIT_POLICY=active "$SHOAL")
        fi
        "${launch[@]}" run --headless --scene assets/scenes/steer_1m.ini --frames 40 --threads "$t" \
            --steps-per-frame 1 --out - --stats >"$W/f42_$rt.$q.txt" 2>&1
        v=$(grep -m1 'headless:' "$W/f42_$rt.$q.txt" | grep -oE '[0-9.]+ fps' | cut -d' ' -f1)
        F42[$rt]="${F42[$rt]:-}$v"$'\n'
        c=$(grep -m1 -E '^ *composite' "$W/f42_$rt.$q.txt" | awk '{print $(NF)}')
        [ -n "$c" ] && F42[$rt.comp]="${F42[$rt.comp]:-}$c"$'\n'
        echo "frames,$rt,1048576,$r,$t,$q,$v,fps,${F42[$rt.same]}" >>"$C42"
        { echo "== frames $rt run $q"; cat "$W/f42_$rt.$q.txt"; } >>"$REPORT"
    done
done
log ""
log "1M frames (run --headless --scene assets/scenes/steer_1m.ini --frames 40; fps, median [range] of $REPS interleaved runs)"
log "| split | fps | range | / 1x16 | frames = 1x16 | composite ms/frame |"
log "| --- | --- | --- | --- | --- | --- |"
fbase=$(printf "%s" "${F42[1x16]}" | median42)
for rt in 1x16 2x8 4x4; do
    m=$(printf "%s" "${F42[$rt]}" | median42)
    comp=$(printf "%s" "${F42[$rt.comp]:-}" | median42)
    log "| $rt | $m | $(printf "%s" "${F42[$rt]}" | range42) | $(ratio "$fbase" "$m") | ${F42[$rt.same]} | ${comp:--} |"
done
# weak scaling: 256k boids per worker, R ranks x 1 thread against one process of R threads
# and against the floor (R independent processes of 256k boids, one per core)
for q in $(seq 1 "$REPS"); do
    for r in 1 2 4 8 16; do
        n=$((262144 * r))
        run42 weak "thr$r" "$n" 0 "$r" "$q"
        [ "$q" = 1 ] && cp "$W/o42_thr${r}_1.npy" "$W/ref42_w$r.npy"
        run42 weak "rk$r" "$n" "$r" 1 "$q" "$W/ref42_w$r.npy"
        [ "$r" = 1 ] || run42 weak "fl$r" 262144 -1 "$r" "$q"
    done
done
log ""
log "weak scaling: 256k boids per worker, $K42 steps (ms per step: median of $REPS interleaved runs of the median step; the mean step in brackets)"
log "| workers | N | R ranks x 1 | 1 process x R threads | ranks / threads | floor: R processes, no MPI | ranks / floor | same bytes |"
log "| --- | --- | --- | --- | --- | --- | --- | --- |"
for r in 1 2 4 8 16; do
    rk=$(med_of "rk$r") th=$(med_of "thr$r") fl=$(med_of "fl$r") flm=$(mean_of "fl$r")
    if [ "$r" = 1 ]; then fl=$th flm=$(mean_of "thr$r"); fi
    log "| $r | $((262144 * r)) | $rk ($(mean_of "rk$r")) | $th ($(mean_of "thr$r")) | $(ratio "$rk" "$th") ($(ratio "$(mean_of "rk$r")" "$(mean_of "thr$r")")) | $fl ($flm) | $(ratio "$rk" "$fl") | ${SAME42[rk$r]} |"
done
log "(CSV: $C42; every run's --stats in device_report.txt)"
fi

# mpiworlds (issue 38): periodic and 2D worlds under MPI. 1M steer at density 0.5: the walled
# box (wall_size = its side), the 3D torus of that side and the 2D torus (a square at 0.5 per
# unit area), each as one process x 16 threads, 2x8 and 4x4 bound to cores (as mpi42 binds),
# 20 steps, the median step of REPS=3 interleaved runs; every split's output against one
# process's in the same world (cmp). CSV $OUT/mpiworlds.csv, the runs' --stats in the report.
if has kernelpick; then
stamp "issue 40: the default kernel against the cluster lists, ${NKP:-1048576} steer boids, $NCPU threads"
SK=$(python3 tools/gen_box.py ${NKP:-1048576} "$W/kp.npy" --density 0.5)
for q in $(seq 1 "${REPS:-3}"); do
    for kern in groups clusters; do
        env $([ $kern = clusters ] && echo SHOAL_KERNEL=clusters) OMP_PROC_BIND=close OMP_PLACES=cores \
            "$SHOAL" step --in "$W/kp.npy" --out "$W/kp_$kern.npy" --steps 20 --set wall_size=$SK,$SK,$SK \
            --stats 2>"$W/kp_${kern}_$q.txt" >/dev/null
        log "kernel $kern run $q: forces median $(awk '$1 == "sim/forces" {print $5}' "$W/kp_${kern}_$q.txt") ms, step $(awk '$1 == "sim" {print $3}' "$W/kp_${kern}_$q.txt") ms; $(grep '^forces (last step)' "$W/kp_${kern}_$q.txt")"
    done
    cmp -s "$W/kp_groups.npy" "$W/kp_clusters.npy" && log "run $q: the same bytes" || log "run $q: DIFFERENT bytes"
done
fi

if has mpiworlds; then
stamp "issue 38: periodic and 2D worlds under MPI, 1M steer: walled, torus, 2D torus as 1x16, 2x8, 4x4"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
RW=${REPS:-3} KW=${KW:-20} NW=${NW:-1048576}
SPW=${SPLITSW:-1x16 2x8 4x4} # the splits R x T, one process first (1xT)
SPW1=${SPW%% *}
CW=$OUT/mpiworlds.csv
echo "world,split,rep,median_ms,mean_ms,identical" >"$CW"
SW3=$(python3 tools/gen_box.py "$NW" "$W/bw3.npy" --density 0.5)
SW2=$(python3 tools/gen_box.py "$NW" "$W/bw2.npy" --density 0.5 --dims 2)
declare -A WIN WSET VW SAMEW
WIN[walled]=$W/bw3.npy WSET[walled]="--set wall_size=$SW3,$SW3,$SW3"
WIN[torus]=$W/bw3.npy WSET[torus]="--set periodic=1 --set world_size=$SW3,$SW3,$SW3"
WIN[torus2d]=$W/bw2.npy WSET[torus2d]="--set dims=2 --set periodic=1 --set world_size=$SW2,$SW2,0"
stepw() { # world split rep
    local w=$1 rt=$2 q=$3 r=${2%x*} t=${2#*x} tag=$1_$2_$3 med mean same=-
    local set
    read -ra set <<<"${WSET[$w]}"
    local args=(step --in "${WIN[$w]}" --out "$W/ow_$tag.npy" --steps "$KW" --threads "$t" "${set[@]}" --stats)
    if [ "$r" = 1 ]; then
        OMP_PROC_BIND=close OMP_PLACES=cores OMP_WAIT_POLICY=active timeout 300 \
            taskset -c "0-$((t - 1))" "$SHOAL" "${args[@]}" 2>"$W/ow_$tag.txt" >/dev/null
        med=$(awk '$1 == "sim" {printf "%.3f", $3; exit}' "$W/ow_$tag.txt")
        mean=$(awk -v k="$KW" '$1 == "sim" {printf "%.3f", $2 / k; exit}' "$W/ow_$tag.txt")
        [ "$q" = 1 ] && cp "$W/ow_$tag.npy" "$W/refw_$w.npy"
    else
        timeout 300 mpirun --map-by slot:PE="$t" --bind-to core -np "$r" -x OMP_PROC_BIND=close \
            -x OMP_PLACES=cores -x OMP_WAIT_POLICY=active "$SHOAL" "${args[@]}" \
            2>"$W/ow_$tag.txt" >/dev/null
        med=$(awk '/median step:/ {printf "%.3f", $3; exit}' "$W/ow_$tag.txt")
        mean=$(awk '/wall per step:/ {printf "%.3f", $4; exit}' "$W/ow_$tag.txt")
        same=yes
        cmp -s "$W/ow_$tag.npy" "$W/refw_$w.npy" || same=no
        [ "${SAMEW[$w$rt]:-yes}" = no ] && same=no
        SAMEW[$w$rt]=$same
    fi
    VW[$w$rt]="${VW[$w$rt]:-}$med"$'\n'
    echo "$w,$rt,$q,$med,$mean,$same" >>"$CW"
    { echo "== $w $rt run $q: median $med ms/step (mean $mean), same bytes: $same"; cat "$W/ow_$tag.txt"; } >>"$REPORT"
}
for q in $(seq 1 "$RW"); do
    for w in walled torus torus2d; do
        for rt in $SPW; do stepw "$w" "$rt" "$q"; done
    done
done
medw() { printf "%s" "${VW[$1]:-}" | sort -g | awk '{v[NR] = $1} END {if (NR) printf "%.3f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
rw() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f", a / b; else printf "-"}'; }
log ""
log "1M steer, density 0.5, $KW steps: the median step (ms) of $RW interleaved runs"
log "| world | split | median step | / walled, same split | / the world's $SPW1 | same bytes as $SPW1 |"
log "| --- | --- | --- | --- | --- | --- |"
for w in walled torus torus2d; do
    for rt in $SPW; do
        log "| $w | $rt | $(medw "$w$rt") | $(rw "$(medw "$w$rt")" "$(medw "walled$rt")") | $(rw "$(medw "$w$rt")" "$(medw "$w$SPW1")") | ${SAMEW[$w$rt]:--} |"
    done
done
grep -h "as [0-9x]* bricks" "$W"/ow_*_1.txt | sort -u | tee -a "$REPORT"
fi

if has mpirun; then
stamp "run --headless under MPI: steer_1m (1M fish, its camera), ranks x threads"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for rt in 1x16 2x8 4x4 8x2 16x1; do
    r=${rt%x*} t=${rt#*x}
    launch=("$SHOAL")
    [ "$r" = 1 ] || launch=(timeout 300 mpirun --oversubscribe --bind-to none -np "$r" -x OMP_WAIT_POLICY=active "$SHOAL")
    # 3 frames to PNG: the same bytes as one process; then 30 frames timed (drawn, not kept)
    "${launch[@]}" run --headless --scene assets/scenes/steer_1m.ini --frames 3 --threads "$t" \
        --steps-per-frame 1 --hud off --out "$W/mrun_$rt" >/dev/null 2>&1
    same=yes
    for f in "$W"/mrun_1x16/*.png; do cmp -s "$f" "$W/mrun_$rt/${f##*/}" || same=no; done
    "${launch[@]}" run --headless --scene assets/scenes/steer_1m.ini --frames 30 --threads "$t" \
        --steps-per-frame 1 --out - --stats >"$W/mrun_$rt.txt" 2>&1
    log "$rt (ranks x threads): rc $? frames identical to 1x16: $same; $(grep -m1 'headless:' "$W/mrun_$rt.txt")"
    grep -E "^  (sim|render|overlays|composite|frame|  (wait|encode|compare|transfer))" "$W/mrun_$rt.txt" | tee -a "$REPORT"
    grep -E "per step|imbalance|time per step" "$W/mrun_$rt.txt" | tee -a "$REPORT"
done
fi

# ---- 3. states -------------------------------------------------------------------------
stamp "states"
declare -A SIDE
for n in 16384 131072 1048576 4194304; do
    SIDE[$n]=$(python3 tools/gen_box.py $n "$W/box_$n.npy" --density 0.5)
done
walls() { local s=${SIDE[$1]}; echo "--set wall_size=$s,$s,$s"; }
# the models of the library's table (shoal params --names; the first is the default)
MODELS=$("$SHOAL" params --names)
DEFAULT_MODEL=$(echo "$MODELS" | head -1)
# The models of the literature have no walls of their own (their table has box_size): the
# uniform box at density 0.5 is a dense gas for their radii (couzin's 17, the flockers' 15:
# thousands of neighbours a boid) and lies outside vicsek's start box, so the loops over the
# box states leave them to PARTS=literature, which runs their own scenes.
boxed() { ! "$SHOAL" params --model "$1" | awk 'NR > 2 {print $1}' | grep -qx box_size_x; }
BOXED=$(for m in $MODELS; do boxed "$m" && echo "$m"; done)
# the model's bounds set to the box, so every model keeps the box state: by the parameters
# its table has (a wall box, a target box, a box's corners, a boundary sphere); a model with
# none of these keeps its own world
bounds() {
    local m=$1 s=${SIDE[$2]} h p
    h=$(python3 -c "print($s/2)")
    p=$("$SHOAL" params --model "$m" | awk 'NR > 2 {print $1}')
    if grep -qx wall_size_x <<<"$p"; then
        echo "--set wall_size=$s,$s,$s"
    elif grep -qx bounds_size_x <<<"$p"; then
        echo "--set bounds_size=$s,$s,$s"
    elif grep -qx box_min_x <<<"$p"; then
        echo "--set box_min=-$h,-$h,-$h --set box_max=$h,$h,$h"
    elif grep -qx boundary_range2 <<<"$p"; then
        echo "--set boundary_range2=$(python3 -c "print(($s/2)**2)")"
    fi
}

# ---- 4. parity at scale and the atomic order's wander ----------------------------------
if has parity; then
stamp "parity at scale (shoal diverge, cpu vs cuda): every model 1000 steps at 131072, $DEFAULT_MODEL 1000 and the others 100 at 1048576"
for m in $BOXED; do
    timeout 150 "$SHOAL" diverge --model $m $(bounds $m 131072) --in "$W/box_131072.npy" --a cpu --b cuda \
        --steps 1000 --every 100 --stats-every 0 --csv "$W/par_$m.csv" 2>&1 | tee -a "$REPORT"
done
for m in $BOXED; do
    k=100
    [ "$m" = "$DEFAULT_MODEL" ] && k=1000
    timeout 150 "$SHOAL" diverge --model $m $(bounds $m 1048576) --in "$W/box_1048576.npy" --a cpu --b cuda \
        --steps $k --every 100 --stats-every 0 --csv "$W/par_1m_$m.csv" 2>&1 | tee -a "$REPORT"
done

stamp "wander: 1000 steps, 16384 boids, steer"
"$SHOAL" diverge $(walls 16384) --in "$W/box_16384.npy" --a cpu --b cuda --steps 1000 \
    --every 10 --stats-every 50 --csv "$OUT/cpu_vs_cuda.csv" 2>&1 | tee -a "$REPORT"
"$SHOAL" diverge $(walls 16384) --in "$W/box_16384.npy" --a cuda --b cuda-atomic --steps 1000 \
    --every 10 --stats-every 50 --csv "$OUT/stable_vs_atomic.csv" 2>&1 | tee -a "$REPORT"
"$SHOAL" diverge $(walls 16384) --in "$W/box_16384.npy" --a cuda-atomic --b cuda-atomic \
    --steps 1000 --every 10 --stats-every 50 --csv "$OUT/atomic_vs_atomic.csv" 2>&1 |
    tee -a "$REPORT"
for f in cpu_vs_cuda stable_vs_atomic atomic_vs_atomic; do
    log "$f: step, identical, pos_max_abs, pos_rms_abs at steps 0 100 200 500 1000:"
    awk -F, 'NR>1 && ($1==0||$1==100||$1==200||$1==500||$1==1000) {print "  " $1, $3, $4, $5}' \
        "$OUT/$f.csv" | tee -a "$REPORT"
done
python3 tools/diverge_plot.py "$OUT/diverge.png" "$OUT/cpu_vs_cuda.csv" \
    "$OUT/stable_vs_atomic.csv" "$OUT/atomic_vs_atomic.csv" \
    --title "steer, 16384 boids, uniform box at density 0.5" 2>&1 | tail -1 | tee -a "$REPORT"

fi
# ---- 4b. obstacle and predator scenes at 1M: parity (100 steps) and GPU time vs plain ----
if has scenes; then
stamp "scenes at 1M: the scene's features (meshes, spheres, predators) in the uniform box"
S1=${SIDE[1048576]}
scene_set() { # scene -> the box's bounds for its model
    case $1 in
    fov*) echo "--set boundary_range2=$(python3 -c "print(($S1/2)**2)")" ;;
    *) echo "--set wall_size=$S1,$S1,$S1" ;;
    esac
}
for sc in steer_rock_mesh steer_predator steer_rock fov_rock; do
    timeout 200 "$SHOAL" diverge --scene assets/scenes/$sc.ini $(scene_set $sc) \
        --in "$W/box_1048576.npy" --a cpu --b cuda --steps 100 --every 100 --stats-every 0 \
        --csv "$W/par_1m_$sc.csv" 2>&1 | tee -a "$REPORT"
    log "parity $sc 1048576 100 steps: $(awk -F, 'NR>1 {l=$0} END {split(l, f, ","); print f[3] " identical at step " f[1]}' "$W/par_1m_$sc.csv")"
done
gpu_scene_ms() { # N scene|plain order -> ms/step
    local a=""
    [ "$2" != plain ] && a="--scene assets/scenes/$2.ini $(scene_set $2)"
    [ "$2" = plain ] && a=$(walls $1)
    "$SHOAL" step --backend cuda --gpu-order $3 --in "$W/box_$1.npy" --out "$W/o.npy" \
        --steps 200 $a --stats 2>"$W/gs.txt" >/dev/null
    awk '$1=="step" && /cuda/ {printf "%.4f", $4}' "$W/gs.txt"
}
for n in 1048576 4194304; do
    log "gpu steer plain N=$n stable: $(gpu_scene_ms $n plain stable) ms/step"
done
for sc in steer_rock_mesh steer_predator steer_rock fov_rock; do
    log "gpu $sc N=1048576 stable: $(gpu_scene_ms 1048576 $sc stable) ms/step"
done
log "gpu fov plain N=1048576 stable: $("$SHOAL" step --backend cuda --model fov --in "$W/box_1048576.npy" --out "$W/o.npy" --steps 200 $(scene_set fov) --stats 2>&1 >/dev/null | awk '$1=="step" && /cuda/ {printf "%.4f", $4}') ms/step"
fi

# ---- 5. timings --------------------------------------------------------------------------
if has time; then
stamp "timings"
gpu_ms() { # N order steps -> ms/step (device time, first step excluded)
    "$SHOAL" step --backend cuda --gpu-order $2 --in "$W/box_$1.npy" --out "$W/o.npy" \
        --steps $3 $(walls $1) --stats 2>"$W/gpu_$1_$2.txt" >/dev/null
    cat "$W/gpu_$1_$2.txt" >>"$REPORT"
    awk '$1=="step" && /cuda/ {printf "%.4f", $4}' "$W/gpu_$1_$2.txt"
}
cpu_ms() { # N threads steps -> "mean median" ms/step
    "$SHOAL" step --in "$W/box_$1.npy" --out "$W/o.npy" --steps $3 --threads $2 $(walls $1) \
        --stats 2>"$W/cpu_$1_$2.txt" >/dev/null
    cat "$W/cpu_$1_$2.txt" >>"$REPORT"
    awk -v k=$3 '$1=="sim" {printf "%.3f %.3f", $2 / k, $3}' "$W/cpu_$1_$2.txt"
}
for n in 16384 131072 1048576 4194304; do
    G[$n]=$(gpu_ms $n stable 200)
    GA[$n]=$(gpu_ms $n atomic 200)
done

for n in 16384 131072 1048576 4194304; do
    k=20
    [ $n -ge 4194304 ] && k=10
    C[$n]=$(cpu_ms $n $NCPU $k)
done
for t in 1 2 4 8 16; do
    CT[$t]=$(cpu_ms 1048576 $t 20)
done

fi
# shoal bench with every core (the issue-3 anchors: steer 16k clumped, 1M uniform)
if has bench; then
stamp "shoal bench (avx512, 1, 2 and $NCPU threads; the program's default wait policy)"
timeout 300 "$SHOAL" bench --filter avx512 --threads 1,2,$NCPU --repeat 5 \
    --json "$OUT/bench_device.json" >"$W/bench.txt" 2>&1
cat "$W/bench.txt" >>"$REPORT"
stamp "the anchors again with OMP_WAIT_POLICY=active (a dedicated machine)"
for c in steer-16k steer-default-16k steer-1m; do
    OMP_WAIT_POLICY=active timeout 100 "$SHOAL" bench --filter "$c/t$NCPU/avx512" \
        --threads $NCPU --repeat 5 --peak-seconds 0 2>&1 | grep -E "^sim/" | tee -a "$REPORT"
done

fi
if has app; then
stamp "shoal run headless (the window's work less present), $NCPU threads; sort benchmark"
for sc in "--model steer" "--scene assets/scenes/steer_100k.ini" "--scene assets/scenes/steer_1m.ini"; do
    timeout 120 "$SHOAL" run --headless --out - --frames 600 --threads $NCPU --stats \
        --steps-per-frame 1 $sc \
        >"$W/app.txt" 2>&1
    grep -E "^shoal run|^  (sim|render|overlays|frame)" "$W/app.txt" | tee -a "$REPORT"
done
timeout 120 "$BUILD/tools/bench_sort" --threads 1,2,$NCPU 2>&1 | tee -a "$REPORT"
fi
# issue 40 (docs/PERFORMANCE.md "Issue 40"): the sort (assign + scan + scatter <= 1 ms at 1M
# on 16 threads): both scatters stepped in turn on one school (bench_sort --steady-only:
# medians of 30 steps, the same bytes checked), then the stage medians of shoal step
if has sort; then
stamp "issue 40: the sort inside steps, staged lines vs slot by slot (bench_sort --steady-only)"
for n in 1048576 4194304; do
    timeout 200 "$BUILD/tools/bench_sort" --count $n --steady-only --steps 30 \
        --threads 1,2,4,8,$NCPU 2>&1 | tee -a "$REPORT"
done
stamp "issue 40: stage medians, 1M (20 steps) and 4M (10 steps), $NCPU and 2 threads"
for n in 1048576 4194304; do
    for t in $NCPU 2; do
        k=20
        [ $n -ge 4194304 ] && k=10
        "$SHOAL" step --in "$W/box_$n.npy" --out "$W/o.npy" --steps $k --threads $t $(walls $n) \
            --stats 2>&1 | grep -E "^shoal step|^sim|^forces" | tee -a "$REPORT"
    done
done
fi
# issue 40: shoal bench's baseline grid against the plain grid (PLAINGRID), same
# run, same machine: the baseline alone and the plain grid alternately (5 pairs, 1M, 30
# neighbours), then shoal bench quoting shoal's step against both
if has plaingrid; then
stamp "issue 40: baseline grid vs the plain grid, 1M, $NCPU and 2 threads"
PG=${PLAINGRID:-}
for c in shared/baselines/plaingrid.cpp; do
    [ -z "$PG" ] && [ -f "$c" ] && PG=$c
done
if [ -z "$PG" ] || ! g++ -O3 -mavx2 -mfma -fopenmp "$PG" -o "$W/plaingrid" 2>"$W/pg.log"; then
    log "plain grid: no plaingrid.cpp (PLAINGRID=...) or it did not build: $(tail -3 "$W/pg.log" 2>/dev/null)"
else
    for t in $NCPU 2; do
        for round in 1 2 3 4 5; do
            log "t=$t round $round: $("$BUILD/tools/baseline_grid" 1000000 $t 5)"
            log "t=$t round $round: plain grid $(OMP_NUM_THREADS=$t "$W/plaingrid" -n 1000000 -s 5 -w 2 | tr ' ' '\n' | grep -E '^(search|use|total)_ms_med' | tr '\n' ' ')"
        done
        timeout 300 "$SHOAL" bench --filter "steer-1m/t$t/avx512" --threads $t --repeat 7 \
            --peak-seconds 0.5 --plain-grid "$W/plaingrid" 2>&1 | grep -E "^# (FP32|copy)|^sim/" |
            tee -a "$REPORT"
    done
fi
fi
# the 1M frame's figures (docs/results/2026-11-24-frame-1m.md): the 1M step with the
# baseline ratio, LOD frames at 2 and all threads, and whole frames of `shoal run` (1M on all cores; 100k
# and the default 16k on 2 threads)
if has frame; then
stamp "issue 18: steer 1M + the baseline grid, avx512, 2 and $NCPU threads"
for t in 2 $NCPU; do
    timeout 120 "$SHOAL" bench --filter "steer-1m/t$t/avx512" --threads $t --repeat 7 \
        --peak-seconds 0.3 2>&1 | grep -E "^sim/" | tee -a "$REPORT"
done
stamp "issue 18: rendering 1280x720 with LOD, 2 and $NCPU threads"
for t in 2 $NCPU; do
    timeout 150 "$SHOAL" bench --filter "-lod/t$t/avx512" --threads $t --repeat 5 \
        --peak-seconds 0 2>&1 | grep -E "^render/" | tee -a "$REPORT"
done
stamp "issue 18: whole frames of shoal run --headless"
# (the 16k steer school: --model steer, assets/scenes/steer.ini; one step a frame as before)
for spec in "$NCPU 90 --scene assets/scenes/steer_1m.ini" "$NCPU 600 --scene assets/scenes/steer_1m.ini" \
    "2 120 --scene assets/scenes/steer_100k.ini" "2 600 --model steer"; do
    set -- $spec
    timeout 150 "$SHOAL" run --headless --out - --steps-per-frame 1 --threads $1 --frames $2 ${3:-} ${4:-} \
        >"$W/frame.txt" 2>&1
    grep -E "^shoal run|^  (sim|render|overlays|frame)|^    render:" "$W/frame.txt" | tee -a "$REPORT"
done
fi
if has headless; then
# first runs (docs/results/2026-11-25-headless-first-runs.md): on 2 cores, the whole frame
# of `shoal run --headless` with PNG frames (written by the writer thread), with none (--out -: the frame
# without output), and the default output (a video where ffmpeg is, else PNG frames); then
# init --count 1000000 + one step, every model
stamp "issue 26: headless output on 2 cores (taskset -c 0,1), 16384 fish, 1280x720"
for o in "--out $W/hl_png --hud off" "--out - --hud off" ""; do
    rm -rf "$W/hl_png" "$W/hl_cwd"
    mkdir -p "$W/hl_cwd"
    (cd "$W/hl_cwd" && timeout 200 taskset -c 0,1 "$SHOAL" run --headless --model steer --frames 300 \
        --steps-per-frame 1 --threads 2 $o) >"$W/hl.txt" 2>&1
    log "run --headless ${o:-(the default output)}: exit $?"
    grep -E "^shoal run|^  (sim|render|overlays|output|frame)|writer thread" "$W/hl.txt" | tee -a "$REPORT"
done
stamp "issue 26: init --count 1000000 + step --count 1000000 --steps 1, 2 cores"
for m in $MODELS; do
    t0=$(date +%s.%N)
    taskset -c 0,1 "$SHOAL" init --model $m --count 1000000 --out "$W/big.npy" 2>/dev/null
    t1=$(date +%s.%N)
    taskset -c 0,1 "$SHOAL" step --model $m --count 1000000 --in "$W/big.npy" --out - \
        --steps 1 --threads 2 2>/dev/null
    t2=$(date +%s.%N)
    log "$m: init $(awk "BEGIN{print $t1 - $t0}") s, step $(awk "BEGIN{print $t2 - $t1}") s"
done
rm -f "$W/big.npy"
fi
# the force kernel (docs/PERFORMANCE.md "Where the time goes"): its lane-pairs and the
# sort's bandwidth: FP peak and copy bandwidth, steer 1M on all cores and on 2 (AVX-512 and AVX2,
# with the baseline grid), 1M and 4M stage medians, every model's lane-pairs per boid
if has kernel; then
stamp "issue 28: FP peak and copy bandwidth (tools/peak)"
"$BUILD/tools/peak" 0.5 2>&1 | tee -a "$REPORT"
stamp "issue 28: steer 1M, $NCPU and 2 threads, avx512 and avx2, with the baseline grid"
for t in $NCPU 2; do
    timeout 200 "$SHOAL" bench --filter "steer-1m/t$t/avx" --threads $t --repeat 7 \
        --peak-seconds 0.5 2>&1 | grep -E "^# (FP32|copy)|^sim/" | tee -a "$REPORT"
done
stamp "issue 28: stage medians, 1M (20 steps) and 4M (10 steps), $NCPU threads, avx512"
for n in 1048576 4194304; do
    k=20
    [ $n -ge 4194304 ] && k=10
    "$SHOAL" step --in "$W/box_$n.npy" --out "$W/o.npy" --steps $k --threads $NCPU $(walls $n) \
        --stats 2>&1 | grep -E "^shoal step|^sim|^forces" | tee -a "$REPORT"
done
stamp "issue 28: the scatter with non-temporal stores (-DGRID_NT) against the default, 1M and 4M, alternating"
if [ ! -f "$BUILD-nt/build.ninja" ]; then
    meson setup "$BUILD-nt" --buildtype=release -Dc_args=-DGRID_NT -Dcuda=disabled -Dmpi=disabled \
        -Dsdl=disabled >"$W/setup-nt.log" 2>&1 || tail -20 "$W/setup-nt.log" | tee -a "$REPORT"
fi
ninja -C "$BUILD-nt" src/app/shoal >"$W/build-nt.log" 2>&1 || tail -20 "$W/build-nt.log" | tee -a "$REPORT"
for n in 1048576 4194304; do
    for round in 1 2; do
        for b in "$SHOAL" "$BUILD-nt/src/app/shoal"; do
            "$b" step --in "$W/box_$n.npy" --out "$W/o.npy" --steps 10 --threads $NCPU $(walls $n) \
                --stats 2>&1 | awk -v b="${b#$BUILD}" -v n=$n '$1 ~ /^sim\/grid/ {s = s " " $1 " " $5} \
                END {print "N=" n " " b ":" s}' | tee -a "$REPORT"
        done
    done
done
stamp "issue 28: every model at its defaults, lane-pairs per boid ($NCPU threads avx512, 2 threads avx2)"
for spec in "$NCPU avx512" "2 avx2"; do
    set -- $spec
    for c in steer-default-16k average-default-4k heading-default-16k classic-default-100 \
        fov-default-4k; do
        timeout 100 "$SHOAL" bench --filter "$c/t$1/$2" --threads $1 --repeat 5 \
            --peak-seconds 0 2>&1 | grep -E "^sim/" | tee -a "$REPORT"
    done
done
fi
# issue 40: the cluster-list kernel (SHOAL_KERNEL=clusters, src/sim/forces_cluster.h) against
# the lane groups (the default), same run, alternating: its tests on this CPU's ISAs, 1M steer
# at density 0.5 with the plain grid (PLAINGRID, as the plaingrid part), 4M stage medians,
# every model's lane-pairs per boid, and where the 1M forces go (perf, software clock)
if has clusters; then
stamp "issue 40: cluster lists, test_determinism on avx512 and avx2 (bits = lane groups)"
for isa in avx512 avx2; do
    "$BUILD/tests/test_determinism" --isa $isa 2>&1 | grep -E "lane-pairs|PASSED|FAILED|ERROR" |
        tee -a "$REPORT"
done
PG=${PLAINGRID:-}
for c in shared/baselines/plaingrid.cpp; do
    [ -z "$PG" ] && [ -f "$c" ] && PG=$c
done
PGARG=()
if [ -n "$PG" ] && g++ -O3 -mavx2 -mfma -fopenmp "$PG" -o "$W/plaingrid" 2>"$W/pg.log"; then
    PGARG=(--plain-grid "$W/plaingrid")
else
    log "plain grid: no plaingrid.cpp (PLAINGRID=...) or it did not build"
fi
stamp "issue 40: steer 1M, $NCPU and 2 threads, avx512 and avx2: groups vs clusters, 2 rounds"
for t in $NCPU 2; do
    for round in 1 2; do
        for k in groups clusters; do
            echo "== SHOAL_KERNEL=$k t=$t round $round" >>"$REPORT"
            SHOAL_KERNEL=$k timeout 300 "$SHOAL" bench --filter "steer-1m/t$t/avx" --threads $t \
                --repeat 7 --peak-seconds 0.5 "${PGARG[@]}" 2>&1 | grep -E "^# (FP32|copy)|^sim/" |
                tee -a "$REPORT"
        done
    done
done
stamp "issue 40: stage medians and lane-pairs, 1M (20 steps) and 4M (10 steps), avx512, groups vs clusters"
for n in 1048576 4194304; do
    for t in $NCPU 2; do
        k=20
        [ $n -ge 4194304 ] && k=10
        for kern in groups clusters groups clusters; do
            echo "== SHOAL_KERNEL=$kern N=$n t=$t" >>"$REPORT"
            SHOAL_KERNEL=$kern "$SHOAL" step --in "$W/box_$n.npy" --out "$W/o_$kern.npy" --steps $k \
                --threads $t --simd avx512 $(walls $n) --stats 2>&1 |
                grep -E "^shoal step|^sim|^forces" | tee -a "$REPORT"
        done
        cmp -s "$W/o_groups.npy" "$W/o_clusters.npy" && log "N=$n t=$t: identical bytes" ||
            log "N=$n t=$t: THE KERNELS' OUTPUTS DIFFER"
        [ -x "$W/plaingrid" ] && log "N=$n t=$t: plain grid $(OMP_NUM_THREADS=$t "$W/plaingrid" \
            -n $n -s 5 -w 2 | tr ' ' '\n' | grep -E '^(nb_per_pt|total_ms_med)' | tr '\n' ' ')"
    done
done
stamp "issue 40: worlds: steer 1M in a periodic box, the literature scenes, $NCPU threads avx512, groups vs clusters"
s1=${SIDE[1048576]}
for spec in "steer-1m-periodic|--in $W/box_1048576.npy --set periodic=1 --set world_size=$s1,$s1,$s1|20" \
    "vicsek|--scene assets/scenes/vicsek.ini|50" "couzin|--scene assets/scenes/couzin.ini|50" \
    "flockers|--scene assets/scenes/flockers.ini|20"; do
    IFS='|' read -r name args k <<<"$spec"
    [ "$name" = "${name#steer}" ] && "$SHOAL" init ${args#--in *.npy } --out "$W/in_$name.npy" \
        >/dev/null 2>&1 && args="$args --in $W/in_$name.npy"
    for kern in groups clusters groups clusters; do
        echo "== SHOAL_KERNEL=$kern $name t=$NCPU" >>"$REPORT"
        # shellcheck disable=SC2086
        SHOAL_KERNEL=$kern "$SHOAL" step $args --out "$W/o_$kern.npy" --steps $k --threads $NCPU \
            --simd avx512 --stats 2>&1 | grep -E "^shoal step|^sim|^forces" | tee -a "$REPORT"
    done
    cmp -s "$W/o_groups.npy" "$W/o_clusters.npy" && log "$name: identical bytes" ||
        log "$name: THE KERNELS' OUTPUTS DIFFER"
done
stamp "issue 40: every model at its defaults, lane-pairs per boid, $NCPU threads avx512, groups vs clusters"
for k in groups clusters; do
    for c in steer-default-16k average-default-4k heading-default-16k classic-default-100 \
        fov-default-4k steer-131k; do
        SHOAL_KERNEL=$k timeout 100 "$SHOAL" bench --filter "$c/t$NCPU/avx512" --threads $NCPU \
            --repeat 5 --peak-seconds 0 2>&1 | grep -E "^sim/" | sed "s/^/$k /" | tee -a "$REPORT"
    done
done
if command -v perf >/dev/null; then
    stamp "issue 40: where the 1M step goes, clusters, $NCPU threads (perf -e cpu-clock)"
    SHOAL_KERNEL=clusters perf record -e cpu-clock -o "$W/clusters.perf" "$SHOAL" step \
        --in "$W/box_1048576.npy" --out "$W/o.npy" --steps 20 --threads $NCPU --simd avx512 \
        $(walls 1048576) >/dev/null 2>&1
    perf report -i "$W/clusters.perf" --no-children --sort symbol 2>/dev/null | grep -v '^#' |
        head -20 | tee -a "$REPORT"
fi
fi
if has render; then
stamp "issue 29: the renderer, 1280x720, avx512: setup / raster ms by threads (100k, 1M with LOD)"
# shoal render --bench prints the median frame and its stages; setup scaling is the thing
# to read (2 -> 16 threads)
for spec in "100000 on" "100000 off" "1000000 on"; do
    set -- $spec
    for t in 1 2 4 8 $NCPU; do
        echo "== render --bench --count $1 --lod $2 --threads $t" >>"$REPORT"
        timeout 200 "$SHOAL" render --bench 7 --count $1 --lod $2 --threads $t --simd avx512 \
            2>&1 | grep -E "median|cpu ms|instances|triangles" | tee -a "$REPORT"
    done
done
stamp "issue 29: against Mesa's llvmpipe, 2 threads each, same run (100k and 1M, LOD on)"
if [ -x "$BUILD/tools/bench_llvmpipe" ]; then
    for n in 100000 1000000; do
        LP_NUM_THREADS=2 timeout 300 "$BUILD/tools/bench_llvmpipe" --count $n --frames 5 \
            --threads 2 2>&1 | tail -5 | tee -a "$REPORT"
    done
else
    log "bench_llvmpipe not built (libegl-dev / libgles-dev missing)"
fi
stamp "issue 29: image error of each level of detail (tools/lod_error, 100k)"
timeout 300 "$BUILD/tools/lod_error" --count 100000 --threads $NCPU --frames 3 \
    --coarse-px 8 --coarse-px 12 --coarse-px 16 2>&1 | tee -a "$REPORT"
fi
# ---- verify (issue 32): the CUDA backend as an outside program ----------------------------
if has verify; then
stamp "verify: cuda atomic and stable order, one step per call, checked by shoal verify"
VD=$W/verify
rm -rf "$VD"
mkdir -p "$VD"
VCSV=$OUT/verify.csv
echo "case,model,N,order,reference,steps,agree,tie,drift,rule,worst_x_tolerance,verdict,seconds" >"$VCSV"
verify_case() { # label model N order [args for init, step and verify ...]; $VSTEPS steps (10)
    local label=$1 model=$2 n=$3 order=$4
    shift 4
    local d="$VD/$label-$order"
    mkdir -p "$d"
    "$SHOAL" init --model "$model" --count "$n" --keep-geometry --seed 7 "$@" \
        --out "$d/s_000.npy" >/dev/null 2>&1 || { log "$label: init failed"; return; }
    for k in $(seq 0 $((${VSTEPS:-10} - 1))); do
        "$SHOAL" step --model "$model" "$@" --in "$d/s_$(printf %03d $k).npy" \
            --out "$d/s_$(printf %03d $((k + 1))).npy" --steps 1 \
            --t0 "$(awk -v k=$k 'BEGIN {printf "%.17g", k / 60}')" \
            --backend cuda --gpu-order "$order" >/dev/null 2>>"$REPORT" ||
            { log "$label $order: cuda step $k failed"; return; }
    done
    for ref in f32 f64; do
        local t0=$(date +%s.%N)
        "$SHOAL" verify --model "$model" "$@" --trajectory "$d" --reference $ref --quiet \
            --csv "$W/v.csv" >"$W/v.txt" 2>&1
        local rc=$? sec
        sec=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
        grep -E "^summary" "$W/v.txt" | sed "s/^/$label $order $ref (exit $rc): /" | tee -a "$REPORT"
        awk -F, -v c="$label" -v m="$model" -v n="$n" -v o="$order" -v r="$ref" -v s="$sec" '
            NR > 1 {steps++; v[$13]++; if ($8 + 0 > w) w = $8 + 0}
            END {verdict = v["rule differs"] ? "rule differs" : v["drift"] ? "drift" : "agrees";
                 printf "%s,%s,%s,%s,%s,%d,%d,%d,%d,%d,%.4g,%s,%s\n", c, m, n, o, r, steps,
                 v["agrees"], v["threshold tie"], v["drift"], v["rule differs"], w, verdict, s}' \
            "$W/v.csv" >>"$VCSV"
    done
}
for order in stable atomic; do
    verify_case steer steer 16384 $order --set init_pos_radius=12
    verify_case average average 4096 $order --set init_pos_radius=6
    verify_case heading heading 16384 $order
    verify_case classic classic 1000 $order
    verify_case fov fov 4096 $order
    verify_case steer_rock_mesh steer 16384 $order --scene assets/scenes/steer_rock_mesh.ini \
        --set init_pos_radius=12
done
VSTEPS=3 verify_case steer_1m steer 1048576 atomic --set init_pos_radius=100
log "verify table ($VCSV): stable order must be bit-identical (worst 0), atomic within the bound (worst < 1)"
column -s, -t <"$VCSV" | tee -a "$REPORT"
fi
if has wait; then
stamp "issue 43: the runtime and the wait policy (test_threads; SHOAL_OMP_DEFAULT unset)"
readelf -d "$SHOAL" | grep -E "NEEDED.*(omp|gomp)" | tee -a "$REPORT"
SHOAL_EXE=$SHOAL timeout 120 "$BUILD/tests/test_threads" 2>&1 | grep -E "^#|OK|FAIL|SKIP" |
    tee -a "$REPORT"
stamp "issue 37 item 7: GPU set_params / set_obstacles parity (test_gpu)"
SHOAL_EXE=$SHOAL timeout 300 "$BUILD/tests/test_gpu" 2>&1 | grep -E "set_params|after a new|OK|FAIL" |
    tee -a "$REPORT"
# median ms/step of shoal bench: auto (nothing set), active, passive; idle, then a busy loop
# per core (the anchors of docs/BENCH.md's "OMP_WAIT_POLICY" section)
for load in idle busy; do
    pids=()
    if [ $load = busy ]; then
        for i in $(seq 1 "$NCPU"); do (while :; do :; done) & pids+=($!); done
        sleep 1
    fi
    for pol in auto active passive; do
        envs=(env OMP_WAIT_POLICY=$pol)
        [ $pol = auto ] && envs=(env -u OMP_WAIT_POLICY)
        for c in steer-16k/t$NCPU steer-16k/t2 steer-1m/t$NCPU; do
            "${envs[@]}" timeout 120 "$SHOAL" bench --filter "$c/avx512" --threads ${c##*/t} \
                --repeat 5 --peak-seconds 0 2>&1 |
                grep -E "^sim/|wait:" | sed "s|^|$load $pol |" | tee -a "$REPORT"
        done
    done
    for p in "${pids[@]}"; do kill "$p"; done
    wait 2>/dev/null
done

fi
if has python; then
stamp "python: the package of this CUDA build; CPU vs CUDA from Python (tests/python -m cuda)"
PY=${PYTHON:-python3}
if ! ls "$BUILD"/src/python/shoal/_shoal*.so >/dev/null 2>&1; then
    log "SKIP python: the build has no Python module (meson found no Python.h or numpy:" \
        "$($PY -c 'import numpy; print(numpy.__version__)' 2>&1 | tail -1))"
elif ! $PY -c "import pytest" 2>/dev/null; then
    log "SKIP python: $PY has no pytest"
else
    # every model, 20000 boids, 100 steps: GPU state == CPU state byte for byte
    PYTHONPATH=$BUILD/src/python SHOAL_EXE=$SHOAL timeout 400 $PY -m pytest -q -s \
        -p no:cacheprovider -m cuda tests/python 2>&1 | tail -12 | tee -a "$REPORT"
    # docs/PYTHON.md's comparison (100k boids, 200 steps; stable and atomic orders) and the
    # time of 200 steps on each backend from Python
    PYTHONPATH=$BUILD/src/python timeout 300 $PY - 2>&1 <<'PYEOF' | tee -a "$REPORT"
import time, shoal
ok, why = shoal.gpu_available()
print("gpu_available:", ok, why)
for n in (100_000, 1_000_000):
    cpu = shoal.Simulation(model="steer", count=n, seed=1)
    gpu = shoal.Simulation(model="steer", count=n, seed=1, backend="cuda")
    t0 = time.perf_counter(); cpu.step(200); t1 = time.perf_counter()
    gpu.step(200); gpu.state; t2 = time.perf_counter()
    c = shoal.compare(cpu.state, gpu.state, stats=False)
    print(f"python {n} boids, 200 steps: cpu {1e3 * (t1 - t0) / 200:.3f} ms/step, "
          f"cuda {1e3 * (t2 - t1) / 200:.3f} ms/step ({gpu.device}), "
          f"{c['identical']} of {c['count']} bit-identical")
w = shoal.Simulation(model="steer", count=100_000, seed=1, backend="cuda", gpu_order="atomic")
w.step(200)
cpu = shoal.Simulation(model="steer", count=100_000, seed=1)
cpu.step(200)
c = shoal.compare(cpu.state, w.state)
print(f"python atomic order, 100000 boids, 200 steps: {c['identical']} identical, "
      f"polarisation cpu {c['stats_a']['polarisation']:.4f} atomic {c['stats_b']['polarisation']:.4f}")
PYEOF
fi
fi
# ---- issue 38: periodic and 2D worlds ----------------------------------------------------
if has worlds; then
stamp "issue 38: periodic and 2D worlds: test_gpu (test_worlds: every model in a torus, x-z periodic, 2D, 2D torus, N 1/2/1200, 1000 steps, and all pairs), test_noise (the GPU's draws), test_periodic (the CPU's golden bytes)"
timeout 420 meson test -C "$BUILD" --no-rebuild --print-errorlogs test_gpu test_noise \
    test_periodic >"$W/worlds_test.log" 2>&1
log "meson test test_gpu test_noise test_periodic: exit $?"
grep -E "^ *[0-9]+/[0-9]+ " "$W/worlds_test.log" | tee -a "$REPORT"
grep -E "^(parity .*(torus|periodic|2D)|  first|    +gpu)" "$BUILD/meson-logs/testlog.txt" \
    >"$W/worlds_parity.log"
cat "$W/worlds_parity.log" >>"$REPORT"
awk '/^parity/ {ok += ($0 !~ /DIFFERENT/); n++} END {print "world parity cases identical: " ok "/" n}' \
    "$W/worlds_parity.log" | tee -a "$REPORT"
fi
if has worlds_scale; then
stamp "issue 38: cpu vs cuda at 131072 boids, 1000 steps: every model in a torus and a 2D torus"
S3=${SIDE[131072]}
S2=$(python3 tools/gen_box.py 131072 "$W/plane_131072.npy" --dims 2)
for m in $BOXED; do
    timeout 150 "$SHOAL" diverge --model $m $(bounds $m 131072) --in "$W/box_131072.npy" \
        --set periodic=1 --set world_size=$S3,$S3,$S3 --a cpu --b cuda --steps 1000 \
        --every 100 --stats-every 0 --csv "$W/wpar_$m.csv" 2>&1 | tee -a "$REPORT"
    log "parity $m torus 131072 1000 steps: $(awk -F, 'NR>1 {l=$0} END {split(l, f, ","); print f[3] " identical at step " f[1]}' "$W/wpar_$m.csv")"
    timeout 150 "$SHOAL" diverge --model $m $(bounds $m 131072) --in "$W/plane_131072.npy" \
        --set dims=2 --set periodic=1 --set world_size=$S2,$S2,0 --a cpu --b cuda --steps 1000 \
        --every 100 --stats-every 0 --csv "$W/wpar2_$m.csv" 2>&1 | tee -a "$REPORT"
    log "parity $m 2D torus 131072 1000 steps: $(awk -F, 'NR>1 {l=$0} END {split(l, f, ","); print f[3] " identical at step " f[1]}' "$W/wpar2_$m.csv")"
done
stamp "issue 38: steer at 1M, periodic against walled (GPU stable order: device ms/step of 200 steps; CPU all cores: mean ms/step of 20)"
S1=${SIDE[1048576]}
P1="--set periodic=1 --set world_size=$S1,$S1,$S1"
for w in walled periodic; do
    a=$(walls 1048576)
    [ $w = periodic ] && a="$a $P1"
    "$SHOAL" step --backend cuda --in "$W/box_1048576.npy" --out "$W/o.npy" --steps 200 $a \
        --stats 2>"$W/wg_$w.txt" >/dev/null
    "$SHOAL" step --in "$W/box_1048576.npy" --out "$W/o.npy" --steps 20 --threads 0 $a \
        --stats 2>"$W/wc_$w.txt" >/dev/null
    log "steer 1M $w: gpu $(awk '$1=="step" && /cuda/ {printf "%.4f", $4}' "$W/wg_$w.txt") ms/step, cpu $(awk '$1=="sim" {printf "%.3f", $2 / 20}' "$W/wc_$w.txt") ms/step"
done
fi
# ---- issue 39: the models of the literature on their scenes -----------------------------
if has literature; then
stamp "issue 39: vicsek, couzin, flockers: cpu vs cuda on their scenes (1000 steps), at scale, flockers' ms/step"
lit_parity() { # scene count steps label [--set ... for another count: the scaled plane]
    local sc=$1 n=$2 k=$3 label=$4
    shift 4
    "$SHOAL" init --scene assets/scenes/$sc.ini --count $n --out "$W/lit.npy" >/dev/null 2>&1
    timeout 200 "$SHOAL" diverge --scene assets/scenes/$sc.ini "$@" --in "$W/lit.npy" \
        --a cpu --b cuda --steps $k --every 100 --stats-every 0 --csv "$W/lpar_$label.csv" 2>&1 |
        tee -a "$REPORT"
    log "parity $label ($sc, $n boids) $k steps: $(awk -F, 'NR>1 {l=$0} END {split(l, f, ","); print f[3] " identical at step " f[1]}' "$W/lpar_$label.csv")"
}
plane() { # side -> the periodic plane [0, side)^2 (init --count scaled the scene's so)
    echo "--set world_size=$1,$1,0 --set world_center=$(python3 -c "print($1 / 2)"),$(python3 -c "print($1 / 2)"),0"
}
for sc in vicsek vicsek_1995 couzin couzin_2002 flockers_small flockers_large; do
    n=$(sed -n 's/^count *= *//p' assets/scenes/$sc.ini | head -1)
    lit_parity $sc "$n" 1000 $sc
done
# shellcheck disable=SC2046
lit_parity vicsek_1995 131072 1000 vicsek_1995_131k $(plane "$(python3 -c "print(31.6 * (131072 / 4000) ** 0.5)")")
# shellcheck disable=SC2046
lit_parity flockers 1000000 100 flockers_1m $(plane "$(python3 -c "print(2371.7 * 10 ** 0.5)")")
for n in 100000 1000000; do
    "$SHOAL" init --scene assets/scenes/flockers.ini --count $n --out "$W/fl.npy" >/dev/null 2>&1
    "$SHOAL" step --scene assets/scenes/flockers.ini --count $n --in "$W/fl.npy" --out "$W/o.npy" \
        --backend cuda --steps 200 --stats 2>"$W/flg.txt" >/dev/null
    for t in 2 16; do
        "$SHOAL" step --scene assets/scenes/flockers.ini --count $n --in "$W/fl.npy" \
            --out "$W/o.npy" --steps 20 --threads $t --stats 2>"$W/flc_$t.txt" >/dev/null
    done
    log "flockers N=$n (the large case's density): gpu $(awk '$1=="step" && /cuda/ {printf "%.4f", $4}' "$W/flg.txt") ms/step, cpu 2 threads $(awk '$1=="sim" {printf "%.3f", $2 / 20}' "$W/flc_2.txt") ms/step, 16 threads $(awk '$1=="sim" {printf "%.3f", $2 / 20}' "$W/flc_16.txt") ms/step"
done
fi
stamp "done"
{
    echo
    echo "== shoal on $(nvidia-smi --query-gpu=name --format=csv,noheader) + $NCPU CPU cores =="
    echo "test_gpu (parity, 1000 steps): $GPU_TEST; meson test (whole suite): exit $SUITE"
    grep -E "^parity" "$W/test_gpu.log" | awk '{ok += ($NF !~ /DIFFERENT/)} END {print "parity cases identical: " ok "/" NR}'
    grep -h "bit-identical at the end" "$REPORT" | head -20
    echo
    echo "ms per step, steer, uniform box at density 0.5 (GPU: device time, median of none:"
    echo "mean of 199 steps after the first; CPU: mean / sum of stage medians)"
    printf "%-10s %14s %14s %22s\n" N "gpu stable" "gpu atomic" "cpu $NCPU thr mean/med"
    for n in 16384 131072 1048576 4194304; do
        printf "%-10s %14s %14s %22s\n" $n "${G[$n]:-}" "${GA[$n]:-}" "${C[$n]:-}"
    done
    echo
    echo "CPU, 1048576 boids, ms per step (mean / sum of stage medians) by threads:"
    for t in 1 2 4 8 16; do printf "  %2d threads: %s\n" $t "${CT[$t]:-}"; done
} | tee -a "$REPORT"
