#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# shoal under MPI (issue 17, docs/ARCHITECTURE.md "MPI"): `mpirun -np R shoal step` and
# `shoal init` give the bytes of one process for R = 1..4 (and 5, 6, 8), every model, uniform and clumped
# states, any threads per rank and ISA; a school that crosses rank boundaries every step;
# all boids in one rank's brick; more ranks than cells along an axis (a clear error); a
# rank that cannot open its part of the file (every rank fails, nothing is written).
# Usage: test_mpi.sh SHOAL_EXE MPI_BUILT(0|1) [SANITIZE]   Exit 77 (skip) without MPI or
# mpirun. SANITIZE (meson's b_sanitize) other than "none": a shorter run (R = 2, 4 and 40
# steps where the full run has R = 1..4 and 200 steps; no 5-8 ranks), since every rank
# runs under ASan on 2 cores.
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
LONG=200 ALL_RANKS="1 2 3 4" MANY_RANKS="5 6 8" RUN_RANKS="2 3"
if [ "${3:-none}" != none ]; then
  LONG=40 ALL_RANKS="2 4" MANY_RANKS="" RUN_RANKS="3"
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# one core per rank is not there: no binding, and let ranks share cores politely
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_hwloc_base_binding_policy=none
export OMPI_MCA_mpi_yield_when_idle=1 OMP_WAIT_POLICY=passive
# no cross-memory attach between ranks (containers that restrict ptrace refuse it and the
# shared-memory transport then fails large messages); copies through shared memory instead
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# (ASan builds) MCA components stay loaded, so tests/lsan.supp can name their leaks
export OMPI_MCA_mca_base_component_disable_dlclose=1
# and full stacks, so the leaks Open MPI keeps until exit are seen to be in its libraries
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1
fails=0
fail() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
mpi() { # R then shoal's arguments
  local r=$1
  shift
  timeout 300 mpirun --oversubscribe -np "$r" "$S" "$@"
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
  for r in ${RANKS:-$ALL_RANKS}; do
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

# states: each model's own start (clumped in a ball for steer and average, spread for the
# others), a uniform one over a box of many cells, and two tight clumps
for m in steer average heading classic fov; do
  "$S" init --count 2000 --model "$m" --seed 7 --out "init_$m.npy" 2>/dev/null ||
    fail "init $m"
done
$PY - <<'EOF' || fail "python states"
import numpy as np
rng = np.random.default_rng(17)
for m in ["steer", "average", "heading", "classic", "fov"]:
    a = np.load(f"init_{m}.npy").astype(np.float32)
    lo, hi = a[:, :3].min(0), a[:, :3].max(0)
    span = float(max(hi - lo))
    # steer and average start in a ball a few cells wide: spread them over their walls
    L = {"steer": 6.0, "average": 6.0}.get(m, span / 2)
    u = a.copy()
    u[:, :3] = rng.uniform(-L, L, size=(len(a), 3)).astype(np.float32)
    if m == "classic":
        u[:, :3] += (lo + hi) / 2
    np.save(f"uniform_{m}.npy", u)
    c = a.copy()
    half = len(a) // 2
    c[:half, :3] = (rng.normal(0, 0.05 * L, size=(half, 3)) - 0.5 * L).astype(np.float32)
    c[half:, :3] = (rng.normal(0, 0.05 * L, size=(len(a) - half, 3)) + 0.4 * L).astype(np.float32)
    if m == "classic":
        c[:, :3] += (lo + hi) / 2
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

check_step steer200 steer "$LONG" uniform_steer.npy
check_step fov200 fov "$LONG" uniform_fov.npy
for m in average heading classic; do
  check_step "uniform_$m" "$m" "$LONG" "uniform_$m.npy"
done
for m in steer average heading classic fov; do
  check_step "clumped_$m" "$m" 40 "clumped_$m.npy"
done
# steer and average's own start is a ball of a few cells: all boids in one rank's brick
for m in steer average; do
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
for r in 1 3; do
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
for r in 2 4; do
  $PY - "stream.$r.err" <<'EOF' || fail "stream: $r ranks migrated no boids"
import re, sys
t = open(sys.argv[1]).read()
m = re.search(r"boids migrated \(in ([0-9]+) of ([0-9]+) steps\)", t)
sys.exit(0 if m and m.group(1) == m.group(2) and int(m.group(2)) > 0 else 1)
EOF
done

# re-cuts (imbalance max/mean above 1.2 and grown 5%) move the bricks: still the same bytes
RANKS="2 4" check_step recut steer 150 mclump.npy --stats
for r in 2 4; do
  grep -Eq "; [1-9][0-9]* re-cuts" "recut.$r.err" || fail "recut: $r ranks never re-cut"
done

# init under MPI: each rank draws its own rows, the same bytes as one process
"$S" init --count 3001 --model fov --seed 5 --out init1.npy 2>/dev/null
for r in 2 3; do
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

# options that do not run over ranks: exit 2 on every rank, one message, nothing written
for opt in "--out-dir traj" "--trace t.json"; do
  # shellcheck disable=SC2086
  mpi 2 step --in uniform_fov.npy --out refused.npy --model fov --steps 1 $opt \
    >refused.out 2>refused.err
  rc=$?
  if [ "$rc" = 0 ]; then
    fail "$opt under MPI was accepted"
  elif [ "$(grep -c "^shoal step: --" refused.err)" = 1 ] && [ ! -e refused.npy ] &&
    [ ! -e traj ]; then
    echo "ok: $opt refused under MPI"
  else
    fail "$opt under MPI: $(cat refused.err)"
  fi
done

# render under MPI: each rank draws its share of the rows, the images are composited by
# depth with the renderer's tie rule: the PNG is the one-process PNG, lit (colour by the
# whole school's speed), without LOD, in id mode, and with a scene's overlays
"$S" init --count 6000 --seed 9 --out rstate.npy 2>/dev/null || fail "init for render"
for opts in "" "--lod off" "--shade id" "--scene $SC/steer_rock_mesh.ini"; do
  # shellcheck disable=SC2086
  "$S" render --in rstate.npy --out render1.png --size 200x120 $opts 2>/dev/null ||
    fail "render ($opts): one process failed"
  for r in 2 3; do
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
mpi 2 render --in rstate.npy --out renders.png --size 200x120 --stats 2>render.err >/dev/null
grep -q "composite over 2 ranks" render.err || fail "render --stats: no compositing time"
if mpi 2 render --bench 2 2>render.err >/dev/null ||
  [ "$(grep -c "under mpirun, render draws one state file" render.err)" != 1 ]; then
  fail "render --bench under MPI: $(cat render.err)"
fi

# run --headless under MPI: the school is stepped over the ranks and every frame is
# composited on rank 0: the frames are the one-process frames, for the default scene
# (camera framed from the gathered state), predators chasing the nearest fish and the
# school's centre, an obstacle mesh with its overlay, heading targets in id mode without LOD
# (--hud off: the HUD shows timings and rank 0's own numbers)
for opts in "--count 3000" "--scene $SC/steer_predator.ini --count 3000" \
  "--scene $SC/steer_predator.ini --count 2000 --set predator_chase=1" \
  "--scene $SC/steer_rock_mesh.ini --count 3000 --steps-per-frame 2" \
  "--scene $SC/heading_targets.ini --count 2000 --shade id --lod off"; do
  rm -rf run1 run2 run3
  # shellcheck disable=SC2086
  "$S" run --headless --frames 3 --size 200x120 --hud off --out run1 $opts >/dev/null 2>&1 ||
    fail "run ($opts): one process failed"
  for r in $RUN_RANKS; do
    # shellcheck disable=SC2086
    if ! mpi "$r" run --headless --frames 3 --size 200x120 --hud off --out "run$r" $opts \
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
  [ "$(grep -c "cannot create the directory" run.err)" != 1 ]; then
  fail "run --out into a file under MPI: $(cat run.err)"
fi

# commands that do not run over ranks refuse, once
if mpi 2 bench --help >other.out 2>other.err || [ "$(grep -c "does not run over MPI" other.err)" != 1 ]; then
  fail "other commands under 2 ranks: $(cat other.err)"
fi

if [ "$fails" -ne 0 ]; then
  echo "$fails failure(s)"
  exit 1
fi
echo "all MPI cases pass"
