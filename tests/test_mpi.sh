#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# shoal under MPI (issue 17, docs/ARCHITECTURE.md "MPI"): `mpirun -np R shoal step` and
# `shoal init` give the bytes of one process for R = 1..4 (and 5, 6, 8), every model, uniform and clumped
# states, any threads per rank and ISA; a school that crosses rank boundaries every step;
# all boids in one rank's brick; more ranks than cells along an axis (a clear error); a
# rank that cannot open its part of the file (every rank fails, nothing is written).
# Usage: test_mpi.sh SHOAL_EXE MPI_BUILT(0|1) [SANITIZE]   Exit 77 (skip) without MPI or
# mpirun. SANITIZE (meson's b_sanitize) other than "none": a shorter run (20 steps where the
# full run has 200, 10 for the clumped states' 40; each case at one of its rank counts, the
# first above 1: R = 2 where the full run has 1..4; no 5 or 8 ranks), since every rank runs
# under ASan on 2 cores: the sanitizers look for bad accesses and leaks in the code every
# split runs (the halo, the migration, the files); the byte identity of every split is the
# gcc suite's.
# Kept small for a 2-core machine: N = 1500-3000; 200 steps for every model's uniform state
# at R = 1..4, 40 for the clumped ones and 20-40 for the rest.
set -uo pipefail
S=$(realpath "$1")
if [ "${2:-0}" != 1 ]; then
  echo "SKIP: shoal built without MPI (-Dmpi)"
  exit 77
fi
if ! command -v mpirun >/dev/null 2>&1; then
  echo "SKIP: no mpirun"
  exit 77
fi
# the states are made with NumPy: Debian's python3-numpy (tools/deps.sh), else a python3
# on PATH that has it (the GPU device's)
PY=
for p in /usr/bin/python3 python3; do
  if "$p" -c "import numpy" 2>/dev/null; then
    PY=$p
    break
  fi
done
if [ -z "$PY" ]; then
  echo "SKIP: no python3 with numpy to make the states"
  exit 77
fi
LONG=200 CLUMP=40 ALL_RANKS="1 2 3 4" MANY_RANKS="5 6 8" RUN_RANKS="2 3" SAN=0
if [ "${3:-none}" != none ]; then
  LONG=20 CLUMP=10 ALL_RANKS="2" MANY_RANKS="" RUN_RANKS="3" SAN=1
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# one core per rank is not there: no binding, and let ranks share cores politely
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_hwloc_base_binding_policy=none
export OMPI_MCA_mpi_yield_when_idle=1 OMP_WAIT_POLICY=passive
# no cross-memory attach between ranks (containers that restrict ptrace refuse it and the
# shared-memory transport then fails large messages); copies through shared memory instead
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# one node, so shared memory and the ob1 layer alone: Open MPI 4.1 otherwise probes UCX
# (pml, osc) and the network BTLs at every MPI_Init, 0.2 s of each launch's 0.4 (0.28 s of
# 0.52 at 4 ranks) on the 2-core dev VM, and this test launches mpirun about 220 times. The
# transport does not touch what is tested (shoal's bytes, files and messages).
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OMPI_MCA_osc=^ucx
# (ASan builds) MCA components stay loaded, so tests/lsan.supp can name their leaks
export OMPI_MCA_mca_base_component_disable_dlclose=1
# Leak checking under mpirun needs full stacks (fast_unwind_on_malloc=0: the leaks Open MPI
# keeps until exit are then seen to be in its libraries), and a slow unwind on every malloc
# of every rank made this test most of the sanitizer suite's time (about 30 of its 60 minutes
# on a loaded 2-core machine). So the first launch of each command through mpi() (step,
# init, render, run, sweep, ...) is leak-checked with full stacks, every later launch runs
# with ASan and UBSan but without the leak check: each command's code under MPI is still
# leak-checked once, its memory errors every time.
LEAK_ON="detect_leaks=1:fast_unwind_on_malloc=0"
SAN_BASE=${ASAN_OPTIONS:-}
export ASAN_OPTIONS="${SAN_BASE:+$SAN_BASE:}detect_leaks=0"
declare -A LEAK_CHECKED
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1
fails=0
fail() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
mpi() { # R then shoal's arguments
  local r=$1 opts=$ASAN_OPTIONS
  shift
  if [ -z "${LEAK_CHECKED[$1]:-}" ]; then # this command's first launch: leak-checked
    LEAK_CHECKED[$1]=1
    opts="${SAN_BASE:+$SAN_BASE:}$LEAK_ON"
  fi
  ASAN_OPTIONS=$opts timeout 300 mpirun --oversubscribe -np "$r" "$S" "$@"
}

# rk R...: the rank counts a case runs at; under the sanitizers one: the first above 1 (every
# count of a case is checked by the gcc suite, so any one of them holds the case's checks; the
# smallest costs the fewest sanitized processes)
rk() {
  if [ $SAN = 0 ]; then
    echo "$@"
    return
  fi
  local r
  for r in "$@"; do
    [ "$r" -gt 1 ] && break
  done
  echo "$r"
}
# one process's bytes, then R = 1..4 ranks
check_step() { # name model steps state [extra shoal args...]
  local name=$1 model=$2 steps=$3 state=$4
  shift 4
  "$S" step --in "$state" --out "$name.ref.npy" --model "$model" --steps "$steps" "$@" ||
    {
      fail "$name: one process failed"
      return
    }
  # shellcheck disable=SC2086
  for r in $(rk ${RANKS:-$ALL_RANKS}); do
    if ! mpi "$r" step --in "$state" --out "$name.$r.npy" --model "$model" --steps "$steps" \
      "$@" 2>"$name.$r.err"; then
      fail "$name: $r ranks failed; the end of their messages:"
      tail -15 "$name.$r.err"
    elif ! cmp -s "$name.ref.npy" "$name.$r.npy"; then
      fail "$name: $r ranks differ from one process"
    else
      echo "ok: $name, $r ranks"
    fi
  done
}

# states: each model's own start (clumped in a ball for some, steer and average, spread for
# the others), a uniform one over a box of many cells, and two tight clumps. The models are
# the library's table (shoal params --names), not a list typed here.
MODELS=$("$S" params --names)
BALL_MODELS= # the models that start in a ball of positions and velocities (steer, average)
for m in $MODELS; do
  "$S" init --count 2000 --model "$m" --seed 7 --out "init_$m.npy" 2>/dev/null ||
    fail "init $m"
  "$S" params --model "$m" | grep -q '^  init_vel_radius ' && BALL_MODELS="$BALL_MODELS $m"
done
BALL_MODELS="$BALL_MODELS" $PY - $MODELS <<'EOF' || fail "python states"
import os
import sys
import numpy as np
rng = np.random.default_rng(17)
ball = os.environ["BALL_MODELS"].split()
for m in sys.argv[1:]:
    a = np.load(f"init_{m}.npy").astype(np.float32)
    lo, hi = a[:, :3].min(0), a[:, :3].max(0)
    span = float(max(hi - lo))
    # a start in a ball a few cells wide (steer's, average's): spread over +-6 of its walls
    L = 6.0 if m in ball else span / 2
    centre = (lo + hi) / 2 if np.abs((lo + hi) / 2).max() > 0.25 * L else 0  # classic's box
    u = a.copy()
    u[:, :3] = rng.uniform(-L, L, size=(len(a), 3)).astype(np.float32)
    u[:, :3] += centre
    np.save(f"uniform_{m}.npy", u)
    c = a.copy()
    half = len(a) // 2
    c[:half, :3] = (rng.normal(0, 0.05 * L, size=(half, 3)) - 0.5 * L).astype(np.float32)
    c[half:, :3] = (rng.normal(0, 0.05 * L, size=(len(a) - half, 3)) + 0.4 * L).astype(np.float32)
    c[:, :3] += centre
    np.save(f"clumped_{m}.npy", c)
# a stream: every boid moves along z fast enough to change cell (and brick) every step
s = np.zeros((1500, 6), np.float32)
s[:, :3] = rng.uniform(-8, 8, size=(1500, 3))
s[:, 5] = 40.0
s[:, 3:5] = rng.normal(0, 0.5, size=(1500, 2))
np.save("stream.npy", s)
# a clump swimming through a uniform school: the imbalance grows until the bricks are re-cut
m = np.zeros((3000, 6), np.float32)
m[:1500, :3] = rng.normal(0, 0.8, size=(1500, 3))
m[:1500, 2] -= 6
m[:1500, 5] = 4.0
m[1500:, :3] = rng.uniform(-8, 8, size=(1500, 3))
np.save("mclump.npy", m)
EOF

for m in $MODELS; do
  check_step "uniform_$m" "$m" "$LONG" "uniform_$m.npy"
done
for m in $MODELS; do
  check_step "clumped_$m" "$m" "$CLUMP" "clumped_$m.npy"
done
# a model whose own start is a ball of a few cells (steer's, average's): all boids in one
# rank's brick
for m in $BALL_MODELS; do
  check_step "oneBrick_$m" "$m" 20 "init_$m.npy"
done
# up to 8 ranks (rank grids 1x1x5, 1x2x3, 2x2x2)
[ -n "$MANY_RANKS" ] && RANKS="$MANY_RANKS" check_step ranks8 fov 40 uniform_fov.npy --threads 1
# threads per rank and ISA do not matter either
RANKS="3" check_step threads2 heading 20 uniform_heading.npy --threads 2
RANKS="2 3" check_step scalar fov 20 uniform_fov.npy --simd scalar
RANKS="4" check_step avx2 classic 20 uniform_classic.npy --simd avx2 --threads 1

# obstacles (every rank builds the field) and predators (replicated; the nearest boid by a
# global (d^2, row) minimum, the centre by rank 0 summing in the one-process order), placed
# where they meet the school within the steps
SC=$(dirname "$0")/../assets/scenes
sed 's/start = 0,0,28/start = 0,0,4/' "$SC/steer_predator.ini" >near.ini
sed 's/chase = nearest/chase = centre/' near.ini >centre.ini
"$S" init --scene near.ini --count 3000 --out pred.npy 2>/dev/null || fail "init pred"
"$S" init --scene "$SC/steer_rock_mesh.ini" --count 3000 --out rock.npy 2>/dev/null ||
  fail "init rock"
RANKS="2 3 4" check_step pred_nearest steer 40 pred.npy --scene near.ini
RANKS="2 3 4" check_step pred_centre steer 40 pred.npy --scene centre.ini
cmp -s pred_nearest.ref.npy pred_centre.ref.npy && fail "predators: centre = nearest (no test)"
RANKS="2 4" check_step rock steer 40 rock.npy --scene "$SC/steer_rock_mesh.ini"

# checkpoints: written with R ranks they are the one-process file, and resumed with R'
# ranks they continue to the one-process bytes
"$S" step --scene near.ini --in pred.npy --out k.ref.npy --checkpoint k.ref.ckpt --steps 20 &&
  "$S" step --scene near.ini --resume k.ref.ckpt --out r.ref.npy --steps 20 ||
  fail "checkpoint: one process"
for r in 1 3; do # both: the resumes below read each
  mpi "$r" step --scene near.ini --in pred.npy --out "k.$r.npy" --checkpoint "k.$r.ckpt" \
    --steps 20 && cmp -s k.ref.ckpt "k.$r.ckpt" && echo "ok: checkpoint written by $r ranks" ||
    fail "checkpoint written by $r ranks"
done
for rr in "1 2" "3 4" "3 1"; do
  set -- $rr
  mpi "$2" step --scene near.ini --resume "k.$1.ckpt" --out "r.$1.$2.npy" --steps 20 &&
    cmp -s r.ref.npy "r.$1.$2.npy" && echo "ok: written by $1 ranks, resumed by $2" ||
    fail "checkpoint written by $1 ranks, resumed by $2"
done

# the stream crosses brick boundaries every step: the same bytes, and boids migrate
RANKS="2 4" check_step stream steer 20 stream.npy --stats
for r in $(rk 2 4); do
  $PY - "stream.$r.err" <<'EOF' || fail "stream: $r ranks migrated no boids"
import re, sys
t = open(sys.argv[1]).read()
m = re.search(r"boids migrated \(in ([0-9]+) of ([0-9]+) steps\)", t)
sys.exit(0 if m and m.group(1) == m.group(2) and int(m.group(2)) > 0 else 1)
EOF
done

# --stats under mpirun profiles every rank by stage (issue 42): the sim's stages as one
# process names them, then the exchange's, a line per rank, and the halo the stream sent
for r in $(rk 2 4); do
  $PY - "stream.$r.err" "$r" <<'EOF' || fail "stream: $r ranks: no profile of every rank: $(grep -A6 'per rank' "stream.$r.err")"
import re, sys
t = open(sys.argv[1]).read().splitlines()
r = int(sys.argv[2])
h = [i for i, l in enumerate(t) if l.split()[:5] == ["rank", "grid_assign", "grid_scan", "grid_scatter", "forces"]]
assert h, "no header"
head = t[h[0]].split()
for s in ["classify", "halo_pack", "exchange", "halo_unpack", "reduce", "step", "boids", "halo"]:
    assert s in head, s
rows = [l.split() for l in t[h[0] + 1:h[0] + 1 + r]]
assert [int(x[0]) for x in rows] == list(range(r)), rows
boids = head.index("boids")
assert sum(int(float(x[boids])) for x in rows) == 1500, rows
assert all(float(x[head.index("halo")]) > 0 for x in rows), rows
EOF
done
# bricks one to three cells thick (6 ranks over the stream's 8 cells), and boids so fast
# that they jump past the neighbouring brick in one step (the fallback all-to-all): the
# same bytes, and the jumps were there
RANKS="6" check_step thin steer 20 stream.npy --threads 1
$PY - <<'EOF' || fail "python jump state"
import numpy as np
s = np.load("stream.npy")
s[:, 5] = 600.0
np.save("jump.npy", s)
EOF
RANKS="3 6" check_step jump steer 10 jump.npy --set max_speed=1000 --stats
for r in $(rk 3 6); do
  grep -Eq "neighbouring bricks \(sent all to all\) in [1-9][0-9]* steps" "jump.$r.err" ||
    fail "jump: $r ranks: no jump past the neighbours: $(grep jumped "jump.$r.err")"
done

# ---- issue 38: periodic and 2D worlds under mpirun ------------------------------------------
# The bricks wrap across the seam (a brick at cell 0 has neighbours at the far end), a part's
# halo across the seam keeps its cells ascending as the whole grid's (the canonical candidate
# order), migrants wrap into the box: the bytes of one process for 1..4 ranks. States: a 3D
# torus of side 20 with boids exactly on the seam (x = -10, the box's lo; x = +10, its hi,
# which wraps to lo; one just below hi) and a school straddling the x seam (a brick boundary
# whenever x is cut); a long x-periodic box (x cut into 2 and 3 bricks); a 2D torus; the
# stream (every boid crosses a cell, and the z seam, every step).
$PY - <<'EOF2' || fail "python world states"
import numpy as np
rng = np.random.default_rng(38)
n = 1500
s = np.zeros((n, 6), np.float32)
s[:, :3] = rng.uniform(-10, 10, size=(n, 3))
s[:, 3:] = rng.normal(0, 1, size=(n, 3))
s[:, 3] += 3.0
half = n // 3  # a school across the x seam, moving across it
s[:half, 0] = np.where(np.arange(half) % 2 == 0, 10 - rng.uniform(0, 2.5, half), -10 + rng.uniform(0, 2.5, half))
s[0, :3] = [-10, -10, -10]
s[1, :3] = [10, 0, 0]
s[2, :3] = [np.nextafter(np.float32(10), np.float32(0)), 9.99, -10]
np.save("torus.npy", s)
x = s.copy()
x[:, 0] = s[:, 0] * 4  # 80 long in x: x is cut
np.save("xlong.npy", x)
p = s.copy()
p[:, 0] *= 2
p[:, 1] *= 1.5
p[:, 2] = 0
p[:, 5] = 0
np.save("plane.npy", p)
b = p.copy()
b[1234, 2] = 0.5
b[1400, 5] = 1.0
np.save("offplane.npy", b)
EOF2
T3="--set periodic=1 --set world_size=20,20,20"
RANKS="$ALL_RANKS" check_step torus steer 40 torus.npy $T3 --stats
RANKS="3" check_step torus_classic classic 30 torus.npy $T3 --threads 1
RANKS="2 3" check_step xper steer 40 xlong.npy --set periodic=1,0,0 --set world_size=80,0,0 --stats
RANKS="3 4" check_step plane steer 40 plane.npy --set dims=2 --set periodic=1 \
  --set world_size=40,30,0 --stats
RANKS="2" check_step plane_walled fov 20 plane.npy --set dims=2
RANKS="2 4" check_step seam_stream steer 20 stream.npy --set periodic=1 --set world_size=16,16,16 \
  --set max_speed=100 --stats
RANKS="3" check_step torus_pred steer 30 torus.npy $T3 --set predator_count=3
RANKS="3" check_step torus_pred_centre steer 30 torus.npy $T3 --set predator_count=3 \
  --set predator_chase=1
[ -n "$MANY_RANKS" ] && RANKS="8" check_step torus8 steer 20 torus.npy $T3 --threads 1
# the splits were the ones meant: z and y seams in the torus, x cut in the long box, x and y
# in the plane (z never); boids changed rank in every step; the stream crossed the seam
for want in "torus.2 1x1x2" "torus.4 1x2x2" "xper.2 2x1x1" "xper.3 3x1x1" "plane.3 3x1x1" \
  "plane.4 2x2x1"; do
  set -- $want
  [ -e "$1.err" ] || continue
  grep -q "as $2 bricks" "$1.err" || fail "$1: not $2 bricks: $(grep -o 'as [0-9x]* bricks' "$1.err")"
done
for f in torus xper plane seam_stream; do
  for r in $(rk 2 3 4); do
    [ -e "$f.$r.err" ] || continue
    every="[0-9]+"
    [ $f = seam_stream ] && every="\1"
    grep -Eq "boids migrated \(in ([1-9][0-9]*) of $every steps\)" "$f.$r.err" ||
      fail "$f: $r ranks: no boid changed rank (every step: the stream): $(grep migrated "$f.$r.err")"
  done
done
"$S" step --in stream.npy --out seam1.npy --steps 1 --set periodic=1 --set world_size=16,16,16 \
  --set max_speed=100 2>/dev/null
$PY - <<'EOF2' || fail "seam_stream: no boid crossed the z seam in a step"
import numpy as np
a, b = np.load("stream.npy"), np.load("seam1.npy")
assert ((b[:, 2] - a[:, 2]) < -8).sum() > 20
EOF2
$PY - <<'EOF2' || fail "torus: the boids on the seam are not in the box"
import numpy as np
o = np.load("torus.ref.npy")
assert ((o[:, :3] >= -10) & (o[:, :3] < 10)).all()
EOF2
# the scenes of the literature's models in their worlds (vicsek: a 3D torus and Vicsek's
# noise; flockers_small: flockers.ini's 2D torus with 200 boids; couzin: Gaussian noise) at
# 1..4 ranks: the noise is keyed by (seed, step, row), so any split draws the same bits
for sc in vicsek flockers_small couzin; do
  "$S" init --scene "$SC/$sc.ini" --out "scene_$sc.npy" 2>/dev/null || fail "init $sc"
  RANKS="$ALL_RANKS" check_step "scene_$sc" "${sc%_small}" 10 "scene_$sc.npy" --scene "$SC/$sc.ini"
done
# a 2D state out of the plane: the lowest bad row named (by the rank that holds it), exit 2,
# nothing written; render the same
for cmd in step render; do
  out=off.npy
  [ $cmd = render ] && out=off.png
  if mpi 3 $cmd --in offplane.npy --out "$out" --set dims=2 --set periodic=1 \
    --set world_size=40,30,0 >off.out 2>off.err || [ -e "$out" ] ||
    ! grep -q "offplane.npy: row 1234 has z = 0.5 in a 2D world" off.err; then
    fail "$cmd: a 2D state out of its plane under mpirun: $(grep -v '^--\|^ \|^$' off.err | head -3)"
  else
    echo "ok: $cmd refuses a 2D state out of its plane under mpirun"
  fi
done
# frames: a 2D torus framed from above, vicsek's torus followed by its circular mean, and a
# 2D plane rendered from a state: one process's images
export SHOAL_HUD_TIMES=0
for opts in "3 --scene $SC/flockers_small.ini" "2 --scene $SC/vicsek.ini --count 1500 --follow"; do
  r=${opts%% *} opts=${opts#* }
  rm -rf wrun1 wrun2 wrun3
  # shellcheck disable=SC2086
  "$S" run --headless --frames 3 --size 200x120 --threads 1 --out wrun1 $opts >/dev/null 2>&1 ||
    fail "run ($opts): one process failed"
  # shellcheck disable=SC2086
  mpi "$r" run --headless --frames 3 --size 200x120 --threads 1 --out "wrun$r" $opts \
    >/dev/null 2>run.err || fail "run ($opts): $r ranks failed: $(tail -3 run.err)"
  same=1
  for f in wrun1/*.png; do cmp -s "$f" "wrun$r/${f#wrun1/}" || same=0; done
  [ -e wrun1/frame_00002.png ] && [ "$same" = 1 ] && echo "ok: run --headless ($opts), $r ranks" ||
    fail "run ($opts): $r ranks' frames differ from one process"
done
unset SHOAL_HUD_TIMES
"$S" render --in plane.npy --out wr1.png --size 200x120 --set dims=2 --set periodic=1 \
  --set world_size=40,30,0 2>/dev/null || fail "render plane: one process"
mpi 3 render --in plane.npy --out wr3.png --size 200x120 --set dims=2 --set periodic=1 \
  --set world_size=40,30,0 2>/dev/null && cmp -s wr1.png wr3.png && echo "ok: render a 2D torus, 3 ranks" ||
  fail "render a 2D torus, 3 ranks"

# ranks whose threads oversubscribe the cores they were given (here both ranks on one CPU):
# one line on rank 0, the bytes unchanged; on a core each, no line
if command -v taskset >/dev/null 2>&1 && [ "$(nproc)" -ge 2 ]; then
  taskset -c 0 mpirun --oversubscribe -np 2 "$S" step --in uniform_fov.npy --out ov.npy \
    --model fov --steps 2 --threads 1 2>ov.err >/dev/null
  [ "$(grep -c "warning: 2 ranks x 1 thread on 1 core of this node: the threads oversubscribe" ov.err)" = 1 ] ||
    fail "oversubscribed cores: not one warning: $(cat ov.err)"
  taskset -c 0,1 mpirun --oversubscribe -np 2 "$S" step --in uniform_fov.npy --out ov2.npy \
    --model fov --steps 2 --threads 1 2>ov2.err >/dev/null && cmp -s ov.npy ov2.npy ||
    fail "oversubscribed cores: other bytes"
  ! grep -q "oversubscribe" ov2.err || fail "a core per rank: a warning: $(cat ov2.err)"
fi

# OpenMP binding its threads (OMP_PROC_BIND, OMP_PLACES) puts the initial thread on the first
# place: the check counts the places, not that one CPU. Two ranks on the same two CPUs, each
# binding: their threads meet on the same core (one line); each rank a place of its own: none
if command -v taskset >/dev/null 2>&1 && [ "$(nproc)" -ge 2 ]; then
  taskset -c 0,1 mpirun --oversubscribe -np 2 -x OMP_PROC_BIND=close -x OMP_PLACES=cores "$S" \
    step --in uniform_fov.npy --out ovb.npy --model fov --steps 2 --threads 1 2>ovb.err >/dev/null
  [ "$(grep -c "ranks sharing cores while OpenMP binds their threads" ovb.err)" = 1 ] ||
    fail "ranks binding threads on shared cores: not one warning: $(cat ovb.err)"
  taskset -c 0,1 mpirun --oversubscribe -np 1 env OMP_PROC_BIND=close "OMP_PLACES={0}" "$S" \
    step --in uniform_fov.npy --out ovp.npy --model fov --steps 2 --threads 1 : \
    -np 1 env OMP_PROC_BIND=close "OMP_PLACES={1}" "$S" \
    step --in uniform_fov.npy --out ovp.npy --model fov --steps 2 --threads 1 2>ovp.err >/dev/null &&
    cmp -s ov.npy ovp.npy || fail "a place per rank: other bytes: $(cat ovp.err)"
  ! grep -q "oversubscribe" ovp.err || fail "a place per rank: a warning: $(cat ovp.err)"
fi

# the time balance (docs/SCALING.md, "Balance"): a rank reported 3 times slower (the test hook
# SHOAL_MPI_COST=RANK:FACTOR) gets a smaller brick, cut hierarchically by the ranks' time:
# the same bytes, re-cuts for time, and rank 1 holds fewer boids than the mean; with
# SHOAL_MPI_BALANCE=count none for time
"$S" step --in uniform_steer.npy --out bal.ref.npy --model steer --steps 40 2>/dev/null
for r in $(rk 3 4); do
  if ! SHOAL_MPI_COST=1:3 mpi "$r" step --in uniform_steer.npy --out "bal.$r.npy" --model steer \
    --steps 40 --stats 2>"bal.$r.err" || ! cmp -s bal.ref.npy "bal.$r.npy"; then
    fail "time balance: $r ranks failed or differ: $(tail -5 "bal.$r.err")"
    continue
  fi
  grep -Eq "re-cuts \([1-9][0-9]* for the ranks' time\)" "bal.$r.err" ||
    fail "time balance: $r ranks: no re-cut for time: $(grep re-cuts "bal.$r.err")"
  $PY - "bal.$r.err" <<'EOF' || fail "time balance: $r ranks: the slow rank's brick"
import sys
lines = open(sys.argv[1]).read().splitlines()
i = next(k for k, l in enumerate(lines) if l.split()[:1] == ["rank"])
head = lines[i].split()
rows = [l.split() for l in lines[i + 1:] if len(l.split()) == len(head) and l.split()[0].isdigit()]
b = [float(x[head.index("boids")]) for x in rows]
assert b[1] < sum(b) / len(b), b
EOF
  echo "ok: time balance, $r ranks"
done
SHOAL_MPI_BALANCE=count SHOAL_MPI_COST=1:3 mpi 3 step --in uniform_steer.npy --out bal.c.npy \
  --model steer --steps 40 --stats 2>bal.c.err && cmp -s bal.ref.npy bal.c.npy &&
  grep -q "(0 for the ranks' time)" bal.c.err && grep -q "time balance: off" bal.c.err &&
  echo "ok: SHOAL_MPI_BALANCE=count" || fail "SHOAL_MPI_BALANCE=count: $(grep -E "re-cuts|balance" bal.c.err)"

# re-cuts (imbalance max/mean above 1.2 and grown 5%) move the bricks: still the same bytes
RANKS="2 4" check_step recut steer 150 mclump.npy --stats
for r in $(rk 2 4); do
  grep -Eq "; [1-9][0-9]* re-cuts" "recut.$r.err" || fail "recut: $r ranks never re-cut"
done

# init under MPI: each rank draws its own rows, the same bytes as one process
"$S" init --count 3001 --model fov --seed 5 --out init1.npy 2>/dev/null
for r in $(rk 2 3); do
  mpi "$r" init --count 3001 --model fov --seed 5 --out "init$r.npy" 2>/dev/null &&
    cmp -s init1.npy "init$r.npy" && echo "ok: init, $r ranks" || fail "init: $r ranks"
done

# more ranks than cells along an axis: a clear error, on every rank, nothing written
if mpi 2 step --in uniform_fov.npy --out brute.npy --model fov --steps 1 --neighbors brute \
  2>brute.err; then
  fail "brute neighbours (one cell) with 2 ranks should be refused"
elif ! grep -q "run with fewer ranks" brute.err || [ -e brute.npy ]; then
  fail "brute: message or output: $(cat brute.err)"
else
  echo "ok: more ranks than cells is refused"
fi

# one rank cannot open its part of the input, or its part of the output: every rank exits
# non-zero, one message names the rank, and nothing is written
for what in open write; do
  rm -f rc.* ./*.tmp* 2>/dev/null
  before=$fails
  SHOAL_MPI_FAIL=$what:2 timeout 120 mpirun --oversubscribe -np 3 sh -c \
    "\"$S\" step --in uniform_fov.npy --out failed.npy --model fov --steps 2; \
     echo \$? > rc.\$OMPI_COMM_WORLD_RANK" 2>"fail_$what.err"
  for k in 0 1 2; do
    [ "$(cat "rc.$k" 2>/dev/null)" = 2 ] || fail "fail $what: rank $k exit $(cat "rc.$k" 2>/dev/null)"
  done
  [ "$(grep -c "rank 2:" "fail_$what.err")" = 1 ] ||
    fail "fail $what: one message naming rank 2 expected: $(cat "fail_$what.err")"
  if ls | grep -q "failed"; then
    fail "fail $what: something was written: $(ls)"
  fi
  [ "$fails" = "$before" ] && echo "ok: a failure to $what on rank 2"
done

# trajectories (issue 30): --out-dir with --every, .npy and VTK, from a state and from a
# checkpoint: every frame, the manifest and the .pvd are one process's bytes (rank 0 makes
# the directory and writes the manifest; every rank writes its rows of each frame)
for fmt in npy vtk; do
  rm -rf traj1 && "$S" step --in uniform_fov.npy --model fov --out-dir traj1 --every 3 --steps 10 \
    --format "$fmt" --quiet || fail "trajectory $fmt: one process"
  for r in $(rk 2 3); do
    rm -rf "traj$r"
    if ! mpi "$r" step --in uniform_fov.npy --model fov --out-dir "traj$r" --every 3 --steps 10 \
      --format "$fmt" 2>traj.err; then
      fail "trajectory $fmt, $r ranks: $(tail -3 traj.err)"
    elif ! diff -r traj1 "traj$r" >/dev/null; then
      fail "trajectory $fmt, $r ranks: other files or bytes: $(diff -rq traj1 "traj$r" | head -3)"
    else
      echo "ok: trajectory ($fmt), $r ranks"
    fi
  done
done
rm -rf trajr1 trajr3
"$S" step --scene near.ini --resume k.ref.ckpt --out-dir trajr1 --every 5 --steps 10 --quiet &&
  mpi 3 step --scene near.ini --resume k.ref.ckpt --out-dir trajr3 --every 5 --steps 10 &&
  diff -r trajr1 trajr3 >/dev/null && echo "ok: trajectory from a checkpoint, 3 ranks" ||
  fail "trajectory from a checkpoint, 3 ranks"

# --trace under mpirun (issue 30): one Chrome trace, each rank a process "shoal rank K"
# with a track per thread and spans on every one, the exchange's stages among them; the
# state is still one process's; a step that fails writes no trace
for r in $(rk 2 3); do
  rm -f "tr$r.json"
  mpi "$r" step --in uniform_fov.npy --out "tr$r.npy" --model fov --steps 3 --threads 2 \
    --trace "tr$r.json" 2>tr.err || fail "--trace, $r ranks: $(tail -3 tr.err)"
  cmp -s "tr$r.npy" "$("$S" step --in uniform_fov.npy --out tr1.npy --model fov --steps 3 \
    2>/dev/null && echo tr1.npy)" || fail "--trace, $r ranks: other bytes"
  $PY - "tr$r.json" "$r" <<'EOF2' && echo "ok: --trace, $r ranks" || fail "--trace, $r ranks: not one trace with a process per rank"
import json, sys
t = json.load(open(sys.argv[1]))
r = int(sys.argv[2])
ev = t["traceEvents"]
names = sorted(e["args"]["name"] for e in ev if e["name"] == "process_name")
tracks = {(e["pid"], e["tid"]) for e in ev if e["ph"] == "X"}
ok = names == ["shoal rank %d" % k for k in range(r)] and tracks == {(k + 1, t) for k in range(r) for t in (0, 1)}
# every step of every rank has the exchange's stages beside the sim's (issue 42)
for k in range(r):
    for s in ["forces", "classify", "halo_pack", "exchange", "halo_unpack", "reduce"]:
        n = sum(1 for e in ev if e["ph"] == "X" and e["pid"] == k + 1 and e["name"].split()[0] == s)
        ok = ok and n >= 3
sys.exit(0 if ok and t["otherData"]["ranks"] == r else 1)
EOF2
done
rm -f trf.json
SHOAL_MPI_FAIL=short:1 mpi 2 step --in uniform_fov.npy --out trf.npy --model fov --steps 1 \
  --trace trf.json >/dev/null 2>&1 && fail "--trace with a failed write: exit 0"
[ ! -e trf.json ] || fail "--trace: a failed step wrote its trace"

# render under MPI: each rank draws its share of the rows, the images are composited by
# depth with the renderer's tie rule: the PNG is the one-process PNG, lit (colour by the
# whole school's speed), without LOD, in id mode, and with a scene's overlays
"$S" init --count 6000 --seed 9 --out rstate.npy 2>/dev/null || fail "init for render"
for opts in "" "--lod off" "--shade id" "--scene $SC/steer_rock_mesh.ini"; do
  # shellcheck disable=SC2086
  "$S" render --in rstate.npy --out render1.png --size 200x120 $opts 2>/dev/null ||
    fail "render ($opts): one process failed"
  for r in $(rk 2 3); do
    # shellcheck disable=SC2086
    if ! mpi "$r" render --in rstate.npy --out "render$r.png" --size 200x120 $opts 2>render.err; then
      fail "render ($opts): $r ranks failed: $(tail -3 render.err)"
    elif ! cmp -s render1.png "render$r.png"; then
      fail "render ($opts): $r ranks differ from one process"
    else
      echo "ok: render ($opts), $r ranks"
    fi
  done
done
# the composite moves only what was drawn (runs of drawn pixels in a binary swap): at 4
# ranks (a power of two), 5 and 6 (the extra ranks fold into the first ones first), and
# with a rank that draws nothing at all (rank 1 of 2 holds rows N/2..N, moved behind the
# camera), the image is still one process's
"$S" render --in rstate.npy --out rplain1.png --size 200x120 2>/dev/null || fail "render: one process"
for r in $(rk 4 5 6); do
  mpi "$r" render --in rstate.npy --out "rplain$r.png" --size 200x120 2>render.err &&
    cmp -s rplain1.png "rplain$r.png" && echo "ok: render, $r ranks" ||
    fail "render: $r ranks differ from one process: $(tail -3 render.err)"
done
$PY - <<'EOF2' || fail "python: behind"
import numpy as np
a = np.load("rstate.npy")
a[len(a) // 2:, 2] += 1000.0  # far behind the camera that frames the first half
np.save("behind.npy", a)
EOF2
"$S" render --in behind.npy --out behind1.png --size 200x120 --eye 0,0,40 --target 0,0,0 \
  2>/dev/null || fail "render behind: one process"
mpi 2 render --in behind.npy --out behind2.png --size 200x120 --eye 0,0,40 --target 0,0,0 \
  --stats 2>behind.err >/dev/null && cmp -s behind1.png behind2.png ||
  fail "render with a rank that draws nothing: $(tail -3 behind.err)"
mpi 2 render --in rstate.npy --out renders.png --size 200x120 --stats 2>render.err >/dev/null
grep -q "composite over 2 ranks" render.err || fail "render --stats: no compositing time"
# the numbers are there: wait, encode, compare, transfer, and fewer bytes than whole frames
# (200 x 120 pixels x 12 bytes each way)
$PY - render.err <<'EOF2' || fail "render --stats: composite numbers: $(grep composite render.err)"
import re, sys
t = open(sys.argv[1]).read()
m = re.search(r"wait ([0-9.]+), encode ([0-9.]+), compare ([0-9.]+), transfer ([0-9.]+)\); ([0-9]+) bytes moved, ([0-9]+) pixels drawn", t)
sys.exit(0 if m and 0 < int(m.group(5)) < 200 * 120 * 12 and int(m.group(6)) > 0 else 1)
EOF2
if mpi 2 render --bench 2 2>render.err >/dev/null ||
  [ "$(grep -c "under mpirun, render draws one state file" render.err)" != 1 ]; then
  fail "render --bench under MPI: $(cat render.err)"
fi

# run --headless under MPI: the school is stepped over the ranks and every frame is
# composited on rank 0: the frames are the one-process frames, HUD included, for the default
# scene (camera framed from the gathered state), predators chasing the nearest fish and the
# school's centre, an obstacle mesh with its overlay, heading targets in id mode without LOD.
# The HUD shows the whole school's figures (N, the drawn counts of the wide HUD, last case);
# its measured times differ between any two runs, so SHOAL_HUD_TIMES=0 (a test hook) prints
# them as 0 here.
export SHOAL_HUD_TIMES=0
for opts in "--count 3000" "--scene $SC/steer_predator.ini --count 3000" \
  "--scene $SC/steer_predator.ini --count 2000 --set predator_chase=1" \
  "--scene $SC/steer_rock_mesh.ini --count 3000 --steps-per-frame 2" \
  "--scene $SC/heading_targets.ini --count 2000 --shade id --lod off" \
  "--count 3000 --size 1000x160"; do
  rm -rf run1 run2 run3 run1h
  size="--size 200x120"
  case $opts in *--size*) size= ;; esac
  # shellcheck disable=SC2086
  "$S" run --headless --frames 3 $size --threads 1 --out run1 $opts >/dev/null 2>&1 ||
    fail "run ($opts): one process failed"
  # shellcheck disable=SC2086
  "$S" run --headless --frames 3 $size --threads 1 --out run1h --hud off $opts >/dev/null 2>&1
  if cmp -s run1/frame_00002.png run1h/frame_00002.png; then
    echo "note: run ($opts): no HUD drawn (no font?): the frames are compared without it"
  fi
  for r in $RUN_RANKS; do
    # shellcheck disable=SC2086
    if ! mpi "$r" run --headless --frames 3 $size --threads 1 --out "run$r" $opts \
      >run.out 2>run.err; then
      fail "run ($opts): $r ranks failed: $(tail -3 run.err)"
    elif [ "$(ls "run$r" | wc -l)" != 3 ]; then
      fail "run ($opts): $r ranks wrote $(ls "run$r" | wc -l) frames, not 3"
    else
      same=1
      for f in run1/*.png; do cmp -s "$f" "run$r/${f#run1/}" || same=0; done
      if [ "$same" = 1 ]; then echo "ok: run --headless ($opts), $r ranks"; else
        fail "run ($opts): $r ranks' frames differ from one process"; fi
    fi
  done
done
unset SHOAL_HUD_TIMES
rm -rf runs
mpi 2 run --headless --frames 2 --size 200x120 --count 2000 --out - --stats >run.out 2>run.err ||
  fail "run --stats under MPI: $(tail -3 run.err)"
grep -q "composite (MPI, depth)" run.out || fail "run --stats: no compositing time"
grep -q "shoal run (MPI): 2 ranks" run.err || fail "run --stats: no decomposition numbers"
[ "$(grep -c "headless: 2 frames" run.out)" = 1 ] || fail "run under MPI: not one summary"
# what needs the whole school in one process is refused: exit 2, one message, no frames
for opt in "" "--trails" "--trace t.json"; do
  hl="--headless --out runs"
  [ -z "$opt" ] && hl=""
  # shellcheck disable=SC2086
  if mpi 2 run $hl --frames 2 --count 1000 $opt >run.out 2>run.err ||
    [ "$(grep -c "under mpirun, run" run.err)" != 1 ] || [ -e runs ] || [ -e t.json ]; then
    fail "run ${opt:-without --headless} under MPI: $(cat run.err)"
  else
    echo "ok: run ${opt:-without --headless} refused under MPI"
  fi
done
# a frame that cannot be written stops every rank, and the frames before it are removed
mkdir -p notadir && touch notadir/f
if mpi 3 run --headless --frames 2 --count 1000 --out notadir/f/x >run.out 2>run.err ||
  [ "$(grep -c "notadir/f/x: cannot create" run.err)" != 1 ]; then
  fail "run --out into a file under MPI: $(cat run.err)"
fi

# A uniform box of 60,000 boids at 2 ranks x 2 threads: many boids leave each part every
# step, so the sort drops their slots and the forces must share out only the boids left (the
# lane groups once walked ranges past the last one, reading past the grid's cell table: seen
# at 1M on the device as a crash of one rank in ten runs, every run under ASan here).
SBIG=$("$PY" "$(dirname "$0")/../tools/gen_box.py" 60000 big60.npy --density 0.5) || fail "gen_box"
"$S" step --in big60.npy --out big60.ref.npy --steps 6 --threads 2 \
  --set wall_size="$SBIG,$SBIG,$SBIG" 2>/dev/null || fail "60k box: one process"
if ! mpi 2 step --in big60.npy --out big60.2.npy --steps 6 --threads 2 \
  --set wall_size="$SBIG,$SBIG,$SBIG" 2>big60.err; then
  fail "60k box, 2 ranks x 2 threads failed: $(tail -5 big60.err)"
elif ! cmp -s big60.ref.npy big60.2.npy; then
  fail "60k box, 2 ranks x 2 threads differ from one process"
else
  echo "ok: 60k box, boids leaving every part, 2 ranks x 2 threads"
fi

# ---- issue 33: files, messages and launches under mpirun ----------------------------------
"$S" init --count 2000 --seed 3 --out in33.npy 2>/dev/null || fail "init in33"
"$S" step --in in33.npy --out ref33.npy --steps 3 || fail "step ref33"
"$S" step --in in33.npy --out ref33.vtp --steps 3 || fail "step ref33.vtp"
"$S" step --in in33.npy --checkpoint ref33.ckpt --steps 3 || fail "step ref33.ckpt"
nofbtl() { # stderr file: Open MPI's per-rank I/O lines must not be there
  ! grep -q "mca_fbtl\|mca_io" "$1"
}
# F8: a FIFO (or pipe) as --in is read once, by rank 0, and scattered: no hang, same bytes
for r in $(rk 3 4); do
  rm -f fifo.npy o8.npy && mkfifo fifo.npy && (timeout 90 sh -c "cat in33.npy >fifo.npy" &)
  if ! timeout 60 mpirun --oversubscribe -np "$r" "$S" step --in fifo.npy --out o8.npy --steps 3 \
    2>f8.err || ! cmp -s ref33.npy o8.npy || ! nofbtl f8.err; then
    fail "F8: a FIFO as --in at $r ranks: $(tail -3 f8.err)"
  else
    echo "ok: a FIFO as --in, $r ranks"
  fi
done
rm -f fifo.npy && mkfifo fifo.npy && (timeout 90 sh -c "cat in33.npy >fifo.npy" &)
"$S" render --in in33.npy --out r33.png --size 160x100 2>/dev/null || fail "F8: render one process"
if ! timeout 60 mpirun --oversubscribe -np 3 "$S" render --in fifo.npy --out r33m.png \
  --size 160x100 2>f8.err || ! cmp -s r33.png r33m.png; then
  fail "F8: render with a FIFO as --in: $(tail -3 f8.err)"
fi
# F9: --out /dev/null, --out FIFO and --checkpoint FIFO are written in place (rank 0 streams
# every rank's rows in file order): the bytes of one process
mpi 3 step --in in33.npy --out /dev/null --steps 3 2>f9.err || fail "F9: --out /dev/null: $(cat f9.err)"
for what in out checkpoint; do
  ref=ref33.npy
  [ "$what" = checkpoint ] && ref=ref33.ckpt
  rm -f fifo.out got.bin && mkfifo fifo.out
  timeout 120 cat fifo.out >got.bin &
  reader=$!
  if ! mpi 3 step --in in33.npy --"$what" fifo.out --steps 3 2>f9.err; then
    fail "F9: --$what FIFO: $(tail -5 f9.err)"
    timeout 5 sh -c ': >fifo.out' # (the reader may wait for a writer that never came)
  fi
  wait $reader
  cmp -s "$ref" got.bin && echo "ok: --$what into a FIFO, 3 ranks" || fail "F9: --$what FIFO: other bytes"
done
# F10: --out X.vtp is VTK PolyData, the bytes of one process (step and init)
for r in $(rk 2 3); do
  mpi "$r" step --in in33.npy --out "m$r.vtp" --steps 3 2>/dev/null && cmp -s ref33.vtp "m$r.vtp" ||
    fail "F10: step --out .vtp, $r ranks"
  "$S" init --count 777 --seed 4 --out i1.vtp 2>/dev/null
  mpi "$r" init --count 777 --seed 4 --out "i$r.vtp" 2>/dev/null && cmp -s i1.vtp "i$r.vtp" ||
    fail "F10: init --out .vtp, $r ranks"
done
# F11: ranks started with other options, or reading other files at one path: one line, exit 2
mpmd() { # rank 0's args ::: rank 1's args (each after `step`)
  local a=() b=() side=a
  for x in "$@"; do
    if [ "$x" = ":::" ]; then side=b; elif [ $side = a ]; then a+=("$x"); else b+=("$x"); fi
  done
  timeout 60 mpirun --oversubscribe -np 1 "$S" step "${a[@]}" : -np 1 "$S" step "${b[@]}"
}
for pair in "--steps 5 ::: --steps 6" "--steps 5 ::: --steps 5 --checkpoint c11.ckpt" \
  "--steps 5 --set sep_weight=3 ::: --steps 5 --set sep_weight=9" \
  "--model steer ::: --model classic"; do
  # shellcheck disable=SC2086
  mpmd --in in33.npy --out o11.npy ${pair%%:::*} ::: --in in33.npy --out o11.npy ${pair##*:::} \
    2>f11.err
  rc=$?
  if [ "$rc" != 2 ] || [ "$(grep -c "rank 1: started with other arguments" f11.err)" != 1 ] ||
    [ -e o11.npy ] || [ -e c11.ckpt ]; then
    fail "F11: ranks with '$pair': exit $rc, $(cat f11.err)"
  else
    echo "ok: ranks started with '$pair' refused"
  fi
done
mkdir -p w0 w1
cp in33.npy w0/a.npy && cp in33.npy w1/a.npy
printf '[params]\nsep_weight = 3\n' >w0/s.ini && printf '[params]\nsep_weight = 4\n' >w1/s.ini
timeout 60 mpirun --oversubscribe -np 1 -wdir w0 "$S" step --in a.npy --out o.npy --scene s.ini : \
  -np 1 -wdir w1 "$S" step --in a.npy --out o.npy --scene s.ini 2>f11.err
rc=$?
[ "$rc" = 2 ] && [ "$(grep -c "rank 1: the model, parameters, obstacles or checkpoint differ" f11.err)" = 1 ] &&
  [ ! -e w0/o.npy ] || fail "F11: a scene that differs between ranks: exit $rc, $(cat f11.err)"
"$S" init --count 2001 --out w1/a.npy 2>/dev/null
timeout 60 mpirun --oversubscribe -np 1 -wdir w0 "$S" step --in a.npy --out o.npy : \
  -np 1 -wdir w1 "$S" step --in a.npy --out o.npy 2>f11.err
rc=$?
[ "$rc" = 2 ] && [ "$(grep -c "rank 1: a.npy: .* not the same file" f11.err)" = 1 ] &&
  [ ! -e w0/o.npy ] || fail "F11: an input that differs between ranks: exit $rc, $(cat f11.err)"
# F18: read errors keep their reason, checked on rank 0 first: no Open MPI lines per rank
mkdir -p adir.npy
for c in "adir.npy:read error: Is a directory" "/dev/zero:not a .npy file: bad magic" \
  "missing.npy:cannot open: No such file or directory"; do
  mpi 3 step --in "${c%%:*}" --out o18.npy 2>f18.err
  rc=$?
  if [ "$rc" != 2 ] || [ "$(grep -c "^shoal step: rank 0: ${c%%:*}: ${c#*:}" f18.err)" != 1 ] ||
    ! nofbtl f18.err || [ -e o18.npy ]; then
    fail "F18: --in ${c%%:*}: exit $rc, $(cat f18.err)"
  else
    echo "ok: --in ${c%%:*} under MPI: one line with the reason"
  fi
done
# F19: help once, unknown commands named so, init's scaling line
[ "$(mpi 2 step --help 2>&1 | grep -c "^usage: shoal step")" = 1 ] || fail "F19: step --help not once"
[ "$(mpi 2 --help 2>&1 | grep -c "^usage: shoal COMMAND")" = 1 ] || fail "F19: --help not once"
mpi 2 nonsense >f19.out 2>&1
[ "$(grep -c "unknown command 'nonsense'" f19.out)" = 1 ] || fail "F19: nonsense: $(cat f19.out)"
mpi 2 init --count 100 --out i19.npy 2>f19.err
[ "$(grep -c "walls and start region scaled" f19.err)" = 1 ] || fail "F19: init's scaling line: $(cat f19.err)"
# F1, F21: a write the disk cuts short (SHOAL_MPI_FAIL=short: injected; then, where a small
# tmpfs can be mounted, a real full disk) fails the command (exit 2, the reason), keeps the
# old file and leaves no temporary; the outputs of a step are all written or none replaced;
# --out X --checkpoint X is refused
disk_case() { # dir label [env] -- shoal args
  local dir=$1 label=$2 env=$3
  shift 4
  echo OLD >"$dir/o.npy" && echo OLD >"$dir/c.ckpt"
  # shellcheck disable=SC2086
  env $env timeout 120 mpirun --oversubscribe -np 3 "$S" "$@" 2>"f1.err"
  rc=$?
  if [ "$rc" != 2 ] || [ "$(grep -c "^shoal [a-z]*: rank [0-9]: $dir/[a-z.]*: write failed: No space left on device" f1.err)" != 1 ] ||
    [ "$(cat "$dir/o.npy")" != OLD ] || [ "$(cat "$dir/c.ckpt")" != OLD ] ||
    [ -n "$(find "$dir" -name '.*tmp*')" ]; then
    fail "F1/F21 $label: exit $rc, $(ls -la "$dir"), $(cat f1.err)"
  else
    echo "ok: $label: exit 2, old files kept, no temporary"
  fi
}
mkdir -p d1
disk_case d1 "step, short write (injected)" SHOAL_MPI_FAIL=short:1 -- step --in in33.npy --out d1/o.npy --steps 2
disk_case d1 "init, short write (injected)" SHOAL_MPI_FAIL=short:2 -- init --count 2000 --out d1/o.npy
disk_case d1 "step, the second output cut short (injected)" SHOAL_MPI_FAIL=short:1:2 -- step --in in33.npy --checkpoint d1/c.ckpt --out d1/o.npy --steps 2
SHOAL_MPI_FAIL=write:2:2 mpi 3 step --in in33.npy --checkpoint d1/c2.ckpt --out d1/o2.npy --steps 2 2>/dev/null
[ $? = 2 ] && [ ! -e d1/c2.ckpt ] && [ ! -e d1/o2.npy ] || fail "F21: a failed --out left the checkpoint"
mkdir -p tiny
if mount -t tmpfs -o size=256k tmpfs tiny 2>/dev/null; then
  trap 'umount "$W/tiny" 2>/dev/null; rm -rf "$W"' EXIT
  fill() { # leave about $1 bytes free
    rm -f tiny/filler && sync
    head -c $(($(df --output=avail -B1 tiny | tail -1) - $1)) /dev/zero >tiny/filler
  }
  fill 20000 && disk_case tiny "step onto a full disk" "" -- step --in in33.npy --out tiny/o.npy --steps 2
  fill 20000 && disk_case tiny "init onto a full disk" "" -- init --count 2000 --out tiny/o.npy
  fill 60000 && disk_case tiny "step, room for one output" "" -- step --in in33.npy --checkpoint tiny/c.ckpt --out tiny/o.npy --steps 2
  umount tiny
else
  echo "(no tmpfs could be mounted here: the full-disk cases ran injected only)"
fi
for r in $(rk 1 2); do
  mpi $r step --in in33.npy --out same.npy --checkpoint same.npy --steps 2 2>f21.err
  rc=$?
  [ "$rc" = 2 ] && [ ! -e same.npy ] && [ "$(grep -c "name the same file" f21.err)" = 1 ] ||
    fail "F21: --out X --checkpoint X, $r ranks: exit $rc, $(cat f21.err)"
done

# sweep under mpirun (issue 30): member k runs on rank k mod R, rank 0 owns DIR and
# assembles sweep.csv: the bytes of a one-process sweep; a job killed half way (SIGTERM to
# mpirun) is finished by --resume on another rank count with the same bytes; --jobs is
# refused under mpirun; a scene that differs between ranks is refused before any member
# (under the sanitizers 500 boids and a fifth of the steps: the sweeps were 100 s of this test's
# 260 there; a member still takes about a second, so the kill still comes half way)
SWN=1500 SWS=200 SWK=1000 SWE=50
[ $SAN = 1 ] && SWN=500 SWS=40 SWK=200 SWE=10
SWB="--vary sep_weight=1,2,3,4 --seeds 1..3 --count $SWN --every $SWE --set init_pos_radius=5 --quiet"
SWA="$SWB --steps $SWS"
# shellcheck disable=SC2086
"$S" sweep $SWA --out sw1 --jobs 2 >/dev/null || fail "sweep: one process"
for r in $(rk 2 3); do
  # shellcheck disable=SC2086
  mpi "$r" sweep $SWA --out "sw$r" --threads 1 >sw.out 2>sw.err &&
    cmp -s sw1/sweep.csv "sw$r/sweep.csv" && [ "$(grep -c "12 members" sw.out)" = 1 ] &&
    echo "ok: sweep, $r ranks" || fail "sweep, $r ranks: $(tail -3 sw.err)"
done
# shellcheck disable=SC2086
timeout 300 mpirun --oversubscribe -np 3 "$S" sweep $SWB --steps $SWK --out swk --threads 1 \
  >/dev/null 2>&1 &
mp=$!
for _ in $(seq 1 1200); do
  [ "$(ls swk/members 2>/dev/null | grep -c '^member_')" -ge 1 ] && break
  sleep 0.05
done
kill -TERM $mp 2>/dev/null
wait $mp
# shellcheck disable=SC2086
"$S" sweep $SWB --steps $SWK --out swk1 --jobs 2 >/dev/null || fail "sweep $SWK: one process"
left=$(ls swk/members | grep -c '^member_')
# shellcheck disable=SC2086
if ! mpi 2 sweep $SWB --steps $SWK --out swk --resume --threads 1 >/dev/null 2>sw.err ||
  ! cmp -s swk1/sweep.csv swk/sweep.csv; then
  fail "sweep killed with $left members and resumed on 2 ranks: $(tail -3 sw.err)"
else
  echo "ok: sweep killed with $left of 12 members, resumed on 2 ranks"
fi
[ -z "$(ls -a swk/members | grep tmp)" ] || fail "sweep killed: temporaries left: $(ls -a swk/members)"
# shellcheck disable=SC2086
mpi 2 sweep $SWA --out swj --jobs 2 >/dev/null 2>sw.err
[ $? = 2 ] && [ "$(grep -c "under mpirun each rank runs one member" sw.err)" = 1 ] && [ ! -e swj ] ||
  fail "sweep --jobs 2 under mpirun: $(cat sw.err)"
printf '[params]\nsep_weight = 3\n' >w0/sw.ini && printf '[params]\nsep_weight = 4\n' >w1/sw.ini
timeout 60 mpirun --oversubscribe -np 1 -wdir w0 "$S" sweep --scene sw.ini --vary ali_weight=1,2 \
  --count 100 --steps 5 --out swd : -np 1 -wdir w1 "$S" sweep --scene sw.ini \
  --vary ali_weight=1,2 --count 100 --steps 5 --out swd >/dev/null 2>sw.err
rc=$?
[ "$rc" = 2 ] && [ "$(grep -c "rank 1: the sweep's options or scene files differ" sw.err)" = 1 ] &&
  [ ! -e w0/swd ] || fail "sweep with a scene that differs between ranks: exit $rc, $(cat sw.err)"

# commands that do not run over ranks refuse, once
if mpi 2 bench --help >other.out 2>other.err || [ "$(grep -c "does not run over MPI" other.err)" != 1 ]; then
  fail "other commands under 2 ranks: $(cat other.err)"
fi

if [ "$fails" -ne 0 ]; then
  echo "$fails failure(s)"
  exit 1
fi
echo "all MPI cases pass"
