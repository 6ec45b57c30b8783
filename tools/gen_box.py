#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write a uniform-box boid state (.npy, float32, shape (N, 6): px py pz vx vy vz) for
benchmarks: positions uniform in a cube of side cbrt(N / density) centred at 0 (pass the
same side to the walls: --set wall_size=S,S,S, or to a periodic world: --set periodic=1
--set world_size=S,S,S), velocities uniform in [-0.1, 0.1]^3. With --dims 2 a square of side
sqrt(N / density) in the plane z = 0 (z = vz = 0: --set dims=2). Prints the side.
usage: gen_box.py N OUT.npy [--density 0.5] [--seed 1] [--dims 3]"""
import argparse

import numpy as np

ap = argparse.ArgumentParser(description=__doc__)
ap.add_argument("count", type=int)
ap.add_argument("out")
ap.add_argument("--density", type=float, default=0.5)
ap.add_argument("--seed", type=int, default=1)
ap.add_argument("--dims", type=int, default=3, choices=(2, 3))
a = ap.parse_args()
side = (a.count / a.density) ** (1.0 / a.dims)
rng = np.random.default_rng(a.seed)
rows = np.empty((a.count, 6), dtype=np.float32)
rows[:, :3] = (rng.random((a.count, 3)) - 0.5) * side
rows[:, 3:] = (rng.random((a.count, 3)) - 0.5) * 0.2
if a.dims == 2:
    rows[:, 2] = 0.0
    rows[:, 5] = 0.0
np.save(a.out, rows)
print(f"{side:.6f}")
