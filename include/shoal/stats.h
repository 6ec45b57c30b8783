/* SPDX-License-Identifier: MIT */
/* shoal: flock statistics, the order parameters people plot for schools (polarisation,
 * milling, speed, nearest-neighbour distance, neighbour count, groups, extent) of one state.
 * One entry point computes them all; `shoal compare`, `shoal diverge` and `shoal sweep` use
 * it. The neighbour queries run on a grid of their own whose cell size is clamped to the
 * data's extent, to a cell budget (about two cells a boid, at most 2^21) and to a fraction of
 * the radius, so the cost stays near O(N) for any density and any radius; counts are 64-bit.
 *
 * Determinism: every result depends only on the state (by row) and the parameters, never on
 * the thread count (integer counts, and floating sums taken in row order by one thread). */
#ifndef SHOAL_STATS_H
#define SHOAL_STATS_H

#include "shoal/base.h"
#include "shoal/world.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Bits of shoal_stats_desc.skip: leave a costly statistic out (it reads NaN, or 0 for
 *  group_count). The rest are cheap (one or two passes over the rows). */
#define SHOAL_STATS_SKIP_NEAREST 1u   /**< mean_nn_distance */
#define SHOAL_STATS_SKIP_NEIGHBORS 2u /**< mean_neighbors */
#define SHOAL_STATS_SKIP_GROUPS 4u    /**< group_count, largest_group_fraction */

/** What to compute. Start from shoal_stats_desc_default(). */
typedef struct shoal_stats_desc {
    /** Radius for the neighbour count and for groups, world units: boids i != j are
     *  neighbours when |p_i - p_j|^2 <= radius^2 (float64, as the models' `d2 <= r*r`).
     *  0 <= radius <= +infinity; NaN or negative is SHOAL_ERR_INPUT. Default 1. */
    double radius;
    /** Worker threads: 0 = the process default (all cores unless the program set it), else
     *  1..1024. The results do not depend on it. Changes no process-wide setting. */
    int thread_count;
    /** SHOAL_STATS_SKIP_* bits; 0 (default) computes everything. */
    unsigned skip;
    /** The world the state lives in (shoal/world.h; zeros, the default: today's world, every
     *  statistic as before). On a periodic axis positions are taken wrapped into the box,
     *  distances are the minimum image (a boid and its neighbour across a seam are
     *  neighbours), the centroid is the circular mean and milling, radius_of_gyration,
     *  extent and the bounding box are about it by minimum-image offsets (docs/STATS.md);
     *  polarisation and mean_speed are unchanged. radius must then be below half of every
     *  periodic size (SHOAL_ERR_INPUT). */
    shoal_world world;
} shoal_stats_desc;

/** The statistics of one state. Only rows whose six values are all finite take part
 *  ("boids" below, M of them); the others are counted in `nonfinite`. Values that are
 *  undefined read NaN (M = 0; nearest distance with M < 2). */
typedef struct shoal_stats {
    size_t count;     /**< rows given (N) */
    size_t nonfinite; /**< rows with a NaN or an infinity, left out of every statistic */
    double radius;    /**< the radius the neighbour count and the groups used */
    /** |sum of v_i / |v_i|| / (boids with |v_i| > 0), in [0, 1]: 1 when every boid heads
     *  the same way. Boids at rest have no heading and are left out; 0 when none moves. */
    double polarisation;
    /** Normalised angular momentum about the centre of mass:
     *  |sum r_i x v_i| / sum |r_i| |v_i|, r_i = p_i - centroid, in [0, 1]: 1 for a school
     *  circling its centre (a mill), near 0 for a polarised or a disordered school. 0 when
     *  the denominator is 0 (every boid at the centroid or at rest). */
    double milling;
    /** Mean of |v_i|, world units per second (fov: per step). */
    double mean_speed;
    /** Mean over boids of the distance to the nearest other boid (0 for a boid that shares
     *  its position with another). NaN when M < 2. */
    double mean_nn_distance;
    /** Mean over boids of the number of other boids within `radius` (d^2 <= radius^2), in
     *  [0, M - 1]: M - 1 when the radius spans the whole school. NaN when M = 0. */
    double mean_neighbors;
    /** Connected components of the graph "i and j are neighbours within `radius`": a lone
     *  boid is a group of its own. 0 when M = 0. */
    uint64_t group_count;
    /** Boids in the largest group / M, in (0, 1]. NaN when M = 0. */
    double largest_group_fraction;
    /** Mean position. */
    double centroid[3];
    /** Axis-aligned bounding box of the positions: its size (max - min per axis), and its
     *  corners. */
    double extent[3];
    double bbox_min[3], bbox_max[3];
    /** sqrt(mean |p_i - centroid|^2): the school's size as one number. */
    double radius_of_gyration;
} shoal_stats;

/** Defaults: radius 1, all threads, everything computed. */
SHOAL_API shoal_stats_desc shoal_stats_desc_default(void);

/** Compute every statistic of a state given as `count` rows of six floats (px py pz vx vy
 *  vz, the (N, 6) array of shoal_io_npy_read). `desc` may be NULL (the defaults). count 0
 *  is allowed (everything NaN or 0). Errors: SHOAL_ERR_INPUT for a NaN or negative radius,
 *  a bad thread count or more than 2^32 - 2 rows; SHOAL_ERR_NOMEM when the work arrays (about
 *  60 bytes a boid) cannot be allocated. `out` is filled on success only.
 *  Thread-safe: calls from several threads at once (a sweep's members) are independent;
 *  the rows are only read. */
SHOAL_API shoal_status shoal_stats_compute(const float *rows, size_t count,
                                           const shoal_stats_desc *desc, shoal_stats *out,
                                           shoal_error *err);

/** The same from a structure of arrays: pos[c][i] and vel[c][i], c = x, y, z (the layout of
 *  shoal_sim). Gives the same values as shoal_stats_compute on the equivalent rows. */
SHOAL_API shoal_status shoal_stats_compute_soa(const float *const pos[3], const float *const vel[3],
                                               size_t count, const shoal_stats_desc *desc,
                                               shoal_stats *out, shoal_error *err);

/** How far two states of the same boids are apart, row i of one against row i of the other
 *  (`shoal compare`, `shoal diverge` and the Python module's shoal.compare). */
typedef struct shoal_state_diff {
    size_t count;     /**< rows compared */
    size_t identical; /**< rows whose six floats are bit-identical */
    /** Per row, of positions (columns 0-2) and of velocities (3-5): the absolute error
     *  |a - b| and the relative error |a - b| / max(|a|, |b|) (0 where both are 0), Euclidean
     *  norms in float64; their maximum and root mean square over the rows. A NaN in a row
     *  makes the maximum NaN. All 0 when count is 0. */
    double pos_max_abs, pos_rms_abs, pos_max_rel, pos_rms_rel;
    double vel_max_abs, vel_rms_abs, vel_max_rel, vel_rms_rel;
} shoal_state_diff;

/** Compare `count` rows of two states ((N, 6) rows, as shoal_stats_compute takes). One pass,
 *  one thread, in row order: deterministic. SHOAL_ERR_INPUT for NULL arrays with count > 0. */
SHOAL_API shoal_status shoal_state_compare(const float *a, const float *b, size_t count,
                                           shoal_state_diff *out, shoal_error *err);

#ifdef __cplusplus
}
#endif

#endif
