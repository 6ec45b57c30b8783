# SPDX-License-Identifier: MIT
# The outputs that define shoal's bits, small enough to run under an emulator: sourced by
# tools/arm_bits.sh, which runs every line with the reference build (x86-64) and with the
# build under test (aarch64, under qemu-user) and compares the files byte for byte. A line
# is one output (or one run's frames), named by its first word; to cover something new
# (a periodic or 2D world, a new model or scene, a new output), add a line:
#   input NAME "INIT ARGS"            shoal init ARGS: a state (and itself an output: init's bits)
#   step NAME INPUT "STEP ARGS"       shoal step ARGS --in INPUT --steps $BITS_STEPS: the state
#   ckpt NAME INPUT "STEP ARGS"       the same with --checkpoint: the checkpoint file
#   render NAME INPUT "RENDER ARGS"   shoal render ARGS --in INPUT --size 320x200: the PNG
#   run NAME "RUN ARGS"               shoal run --headless ARGS --frames 3: every frame's PNG
#   stats NAME A B                    shoal compare A B --json: the flock statistics of both
#   sweep NAME "SWEEP ARGS"           shoal sweep ARGS: its sweep.csv (statistics per member)
# ISA-dependent lines (step, ckpt, render, run) run with every ISA of each build; INPUT and
# A, B name an input or an earlier step's output. Keep counts and steps small: each line
# costs seconds under qemu (tools/test.sh's budget: docs/ARM.md).

PRED="--set predator_count=3 --set flee_radius=4 --set flee_weight=5 --set predator_start=0,0,6"
R="--set init_pos_radius=5 --set init_vel_radius=2"

# every model's start (fixed radii, so init's defaults may change without moving the set)
input steer "--model steer --count 1200 --seed 5 $R"
input average "--model average --count 1200 --seed 6 $R"
input heading "--model heading --count 1200 --seed 7"
input classic "--model classic --count 800 --seed 8"
input fov "--model fov --count 1200 --seed 9"
input dense "--model steer --count 800 --seed 10 --set init_pos_radius=1.5 --set init_vel_radius=1"
# the scenes with obstacles (spheres, a mesh's vector field), predators and targets, at a
# small count (walls and start region scaled as init --count scales them)
input rock "--scene assets/scenes/steer_rock.ini --count 1000"
input rock_mesh "--scene assets/scenes/steer_rock_mesh.ini --count 1000"
input predator "--scene assets/scenes/steer_predator.ini --count 1000"
input targets "--scene assets/scenes/heading_targets.ini --count 1000"
input fov_rock "--scene assets/scenes/fov_rock.ini --count 1000"
input suimi "--scene assets/scenes/average_suimi.ini --count 1000"

# every model, alone, with predators (flee), and with predators chasing the centre
for m in steer average heading classic fov; do
    step "$m" "$m" "--model $m"
    step "$m+pred" "$m" "--model $m $PRED"
    step "$m+pred-centre" "$m" "--model $m $PRED --set predator_chase=1"
done
step dense dense "--model steer"
step brute steer "--model steer --neighbors brute"
step rock rock "--scene assets/scenes/steer_rock.ini --count 1000"
step rock_mesh rock_mesh "--scene assets/scenes/steer_rock_mesh.ini --count 1000"
step predator predator "--scene assets/scenes/steer_predator.ini --count 1000"
step targets targets "--scene assets/scenes/heading_targets.ini --count 1000"
step fov_rock fov_rock "--scene assets/scenes/fov_rock.ini --count 1000"
step suimi suimi "--scene assets/scenes/average_suimi.ini --count 1000"
# a checkpoint: boids, predators, pinned targets, time and parameters in one file
ckpt targets_ckpt targets "--scene assets/scenes/heading_targets.ini --count 1000"

# the flock statistics (float64, src/sim/stats.c) of a state and of its step, and of a
# sweep's members over time (every sample of every member)
stats steer_stats steer steer+pred
sweep sweep "--model steer --vary sep_weight=1,2 --seeds 1..2 --count 400 --steps 6 --every 3"

# images: lit with and without LOD, near and far (splats), id shading, a mesh wireframe
render lit steer "--fish-length 0.6"
render lit_near steer "--eye 0,2,9 --target 0,0,0 --fish-length 0.6"
render nolod steer "--lod off --fish-length 0.6"
render id fov "--shade id --fish-length 1"
render far heading "--eye 0,0,300 --target 0,0,0 --fish-length 1"
render scene rock_mesh "--scene assets/scenes/steer_rock_mesh.ini --fish-length 0.6"
# the program's frames: simulation and drawing together, predators and targets shown
run run_predator "--scene assets/scenes/steer_predator.ini --count 800 --fish-length 0.6"
run run_targets "--scene assets/scenes/heading_targets.ini --count 800"
