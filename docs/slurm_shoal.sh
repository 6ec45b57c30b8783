#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# shoal on a Slurm cluster (docs/SCALING.md, "Running it"): a 2-node step of a large school
# and an ensemble sweep whose members are spread over the ranks. Submit with
#     sbatch docs/slurm_shoal.sh            (edit the #SBATCH lines for your site)
# Each step below is independent; delete what you do not need. The outputs are the bytes one
# process would write (docs/CLI.md, "Under MPI"), so a result does not depend on the node
# count or on how the job was split.
#SBATCH --job-name=shoal
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1          # one rank per node ...
#SBATCH --cpus-per-task=16           # ... with its cores as OpenMP threads (4x4 per node also works)
#SBATCH --time=00:30:00
#SBATCH --output=shoal-%j.out
set -euo pipefail

SHOAL=${SHOAL:-shoal}            # the program, built with -Dmpi=enabled (Open MPI or MPICH)
WORK=${WORK:-$PWD/shoal-$SLURM_JOB_ID}
mkdir -p "$WORK"

# OpenMP inside each rank: its cpus, threads kept on their cores; spinning is right on
# nodes that run nothing else
export OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK OMP_PROC_BIND=close OMP_PLACES=cores
export OMP_WAIT_POLICY=active
# (as root in a container, Open MPI also needs OMPI_ALLOW_RUN_AS_ROOT=1 and
#  OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; srun does not)
RUN="srun --cpus-per-task=$SLURM_CPUS_PER_TASK --cpu-bind=cores"

# ---- a 2-node step: 8M boids, each rank draws and writes its own rows (MPI-IO) ----------
# init scales the walls to keep the scene's density and says how (--set the same for step)
$RUN "$SHOAL" init --count 8000000 --seed 1 --set init_pos_radius=60 --out "$WORK/s0.npy" \
    2>"$WORK/init.log"
walls=$(grep -o 'wall_size_x=[0-9.]*' "$WORK/init.log" | cut -d= -f2 || true)
set_walls=${walls:+--set wall_size=$walls,$walls,$walls}
# shellcheck disable=SC2086
$RUN "$SHOAL" step --in "$WORK/s0.npy" --out "$WORK/s100.npy" --steps 100 $set_walls \
    --checkpoint "$WORK/s100.ckpt" --stats 2>"$WORK/step.log"
# a trajectory of the same run: a state every 10 steps, MPI-IO at row offsets
# shellcheck disable=SC2086
$RUN "$SHOAL" step --in "$WORK/s0.npy" --out-dir "$WORK/traj" --every 10 --steps 100 \
    $set_walls --format npy --quiet
# resumed on any rank count, the bytes of the uninterrupted run
$RUN "$SHOAL" step --resume "$WORK/s100.ckpt" --out "$WORK/s200.npy" --steps 100

# ---- an ensemble sweep: whole members per rank, one sweep.csv -------------------------
# 4 separation weights x 8 seeds = 32 members over the job's ranks; a killed job is
# finished by the same command with --resume (the members already written are kept)
$RUN "$SHOAL" sweep --vary sep_weight=1,2,3,4 --seeds 1..8 --count 20000 --steps 2000 \
    --every 100 --set init_pos_radius=8 --out "$WORK/sweep" --quiet
python3 tools/sweep_plot.py "$WORK/sweep" || true   # plots, where matplotlib is installed
