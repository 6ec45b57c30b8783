/* SPDX-License-Identifier: MIT */
/* shoal: the umbrella header. Includes every public module header.
 * shoal runs GPU-class flocking workloads on CPU cores: an OpenMP-parallel boids
 * simulation on a counting-sort grid (sim.h), file formats (io.h), flock statistics
 * (stats.h), the float64 reference (sim64.h) and step-by-step verification of another
 * program (verify.h), the software
 * renderer (render.h), the optional CUDA backend (gpu.h; its functions report
 * SHOAL_ERR_UNSUPPORTED in a build without CUDA), stage timings and traces (profile.h) and
 * the machine and the default thread count (system.h). */
#ifndef SHOAL_SHOAL_H
#define SHOAL_SHOAL_H

#include "shoal/base.h"
#include "shoal/io.h"
#include "shoal/sim.h"
#include "shoal/stats.h"
#include "shoal/sim64.h"
#include "shoal/verify.h"
#include "shoal/render.h"
#include "shoal/gpu.h"
#include "shoal/profile.h"
#include "shoal/system.h"

#endif
