/* SPDX-License-Identifier: MIT */
/* The simulation's private state, shared by the files of src/sim only: the boid arrays
 * (double-buffered, in cell order), the grid and its counting-sort scratch, and the step
 * context handed to the force kernels. Not part of the public API and not installed.
 * Outside src/sim it is included by code that measures or mirrors the sim's internals and
 * is built in this tree only: the CUDA backend (src/gpu/gpu_sim.cu, which runs the same
 * grid), tools/bench_sort.c, and the tests of the grid and the scan. The program
 * (src/app) uses include/shoal/ only: what `shoal bench` needs of the grid is public
 * (shoal_sim_sort, shoal_sim_candidate_pairs). */
#ifndef SHOAL_SIM_INTERNAL_H
#define SHOAL_SIM_INTERNAL_H

#include "core/parallel.h"
#include "shoal/sim.h"

#include <stdint.h>

/* Stages of one step, in order (shoal_sim_stage of the public API); the names are the
 * functions perf shows. grid_assign: cell of each boid + per-block histograms; grid_scan:
 * cell totals, their scan, per-block offsets; grid_scatter: stable scatter, row order
 * inside cells, gather; forces_*: neighbour sums, per-boid rules, integration. */
enum {
    STAGE_ASSIGN = SHOAL_SIM_STAGE_ASSIGN,
    STAGE_SCAN = SHOAL_SIM_STAGE_SCAN,
    STAGE_SCATTER = SHOAL_SIM_STAGE_SCATTER,
    STAGE_FORCES = SHOAL_SIM_STAGE_FORCES,
    STAGE_COUNT = SHOAL_SIM_STAGE_COUNT
};
extern const char *const sim_stage_names[STAGE_COUNT];

#define SIM_MAX_THREADS SHOAL_MAX_THREADS
/* The counting sort cuts its work into blocks of consecutive boids (grid.c): at least
 * SIM_BLOCK_MIN boids each, at most SIM_BLOCK_PER_THREAD per thread (so threads share the
 * scatter out, and the blocks' cell ranges overlap little on few threads) and
 * SIM_BLOCK_MAX_COUNT in all. Which blocks there are never changes the sort's result
 * (grid.c), so they may follow the thread count. The histograms hold at most
 * SIM_HIST_WIDTH cell tables (sim_hist_width), packed by the blocks' cell ranges. */
#define SIM_BLOCK_MIN 4096
#define SIM_BLOCK_PER_THREAD 4
#define SIM_BLOCK_MAX_COUNT 64
#define SIM_HIST_WIDTH 16
/* The units of one step's sort (grid.c): a block, or a group of blocks, each with its boids
 * [begin, end), its cells [lo, hi] (lo > hi: none) and `off`, the index in hist of its
 * counter for cell lo. */
typedef struct sort_units {
    int count;
    int64_t begin[SIM_BLOCK_MAX_COUNT], end[SIM_BLOCK_MAX_COUNT];
    int64_t lo[SIM_BLOCK_MAX_COUNT], hi[SIM_BLOCK_MAX_COUNT], off[SIM_BLOCK_MAX_COUNT];
} sort_units;

/* From this many boids the scatter writes whole lines non-temporally by default: below, the
 * sorted state the forces read next fits the caches of a server and should stay there. */
#define SIM_SORT_STAGED_MIN ((size_t)1 << 19)
static inline int sim_block_count(size_t boids, int threads)
{
    int64_t b = (int64_t)(boids / SIM_BLOCK_MIN);
    int64_t cap = (int64_t)threads * SIM_BLOCK_PER_THREAD;
    b = b < cap ? b : cap;
    b = b < SIM_BLOCK_MAX_COUNT ? b : SIM_BLOCK_MAX_COUNT;
    return b < 1 ? 1 : (int)b;
}
static inline int sim_hist_width(size_t boids)
{
    int64_t b = (int64_t)(boids / SIM_BLOCK_MIN);
    b = b < SIM_HIST_WIDTH ? b : SIM_HIST_WIDTH;
    return b < 1 ? 1 : (int)b;
}

/* The uniform grid: cell size >= the largest interaction radius, so every neighbour of a
 * boid lies in its 27 cells. Cells are numbered x + nx*(y + ny*z); a row is a fixed (y, z).
 * In a periodic world (docs/WORLD.md) the cells of a periodic axis tile the world's box
 * exactly (dims = floor(L / cell), each L / dims wide, >= the radius) and wrap: cell 0 and
 * cell dims - 1 are neighbours. In 2D the z axis has one cell. */
typedef struct grid {
    float origin[3];
    float cell_size, inv_cell; /* the cell of the axes that do not wrap */
    float inv[3];              /* per axis: 1 / cell (inv_cell), or dims / L where it wraps */
    int32_t wrap[3];           /* per axis: 1 where the world wraps (its cells wrap) */
    int32_t dims[3];
    int64_t cell_count; /* nx*ny*nz */
    int64_t row_count;  /* ny*nz */
    /* A part of the school (sim/part.h, MPI bricks) holds a sub-box of the whole grid:
     * gdims are the whole grid's dims (a boid's cell is clamped to them, as in one
     * process), off the sub-box's first cell, and dims above the sub-box's size; only the
     * boids in the active cells [act_lo, act_hi) (sub-box coordinates) get forces. One
     * process: gdims = dims, off = 0, active = everything. */
    int32_t gdims[3], off[3];
    int32_t act_lo[3], act_hi[3];
} grid;

/* A part's sort key for a slot that the next sort drops (sim/part.c). */
#define SIM_CELL_NONE UINT32_MAX

/* Per-step constants every kernel reads: the model's parameters prepared once (its own in
 * k[], which its file names; the largest squared radius of its tests), the time's targets
 * and the predators, so the kernels do no per-step setup of their own. One field list for
 * float (model_consts) and for the float64 reference's double twin (model_consts64,
 * src/verify), so the two cannot drift apart. */
#define SIM_MODEL_CONSTS 8 /* a model's own constants: k[0 .. SIM_MODEL_CONSTS - 1] */
#define MODEL_CONSTS_FIELDS(T)                                                                     \
    T k[SIM_MODEL_CONSTS]; /* the model's own (sim/models/NAME.h names them) */                    \
    T reach2;              /* the largest squared radius its candidate tests compare */            \
    T dt;                                                                                          \
    /* a model's counter-based noise is keyed by the run's seed and the step's index (round(t /    \
     * dt): the same at the same simulated time when a run is split), with the boid's row */       \
    uint64_t seed, step;                                                                           \
    int target_count; /* targets drawn this step (rules.h rule_targets; 0: none) */                \
    T targets[SHOAL_MAX_TARGETS][3];                                                               \
    int predator_count; /* predators at the start of the step (the flee term reads these) */       \
    T flee_r, flee_r2;                                                                             \
    T predators[SHOAL_MAX_PREDATORS][3];                                                           \
    /* the world (docs/WORLD.md; sim/world.h WORLD_CONSTS_SET): world_on 0 in today's world,       \
     * where nothing below is read. Per axis: periodic, its period wsize and half whalf (+inf      \
     * where it does not wrap: the minimum image leaves that axis alone), the box [wlo, whi), and  \
     * wall_on, whether the model's own walls and boundary act on it (not on a periodic axis, nor  \
     * on z in 2D) */                                                                              \
    int world_on, world_dims;                                                                      \
    int periodic[3], wall_on[3];                                                                   \
    T wsize[3], whalf[3], wlo[3], whi[3];
typedef struct model_consts {
    MODEL_CONSTS_FIELDS(float)
} model_consts;

/* An obstacle mesh (model space, owned) and where it sits. */
typedef struct obstacle {
    float *pos, *nrm; /* 3 * count each */
    size_t count;
    shoal_transform xf;
} obstacle;

/* The obstacle field (field.c): cell (x, y, z) = vec[3 * (x + dims[0] * (y + dims[1] * z))].
 * vec NULL when there is no obstacle. */
typedef struct field {
    float origin[3];
    float cell, inv_unused;
    int32_t dims[3];
    float hi[3]; /* origin + dims * cell: p < hi is inside */
    float *vec;
    uint64_t builds;
} field;

/* field.c: rebuild `f` from the obstacles (serial, obstacle then vertex order). On failure
 * (too many cells, no memory) `f` is unchanged. */
shoal_status field_build(field *f, const obstacle *obs, size_t obstacle_count, float cell,
                         float margin, shoal_error *err);
void field_free(field *f);
/* field.c: the meshes of `from` (NULL: none) copied into to[0 .. *to_count) and the field
 * into `to_field`: copied when `from` built it with `cell` and `margin`, else built with
 * them; what was there is freed. On failure nothing changes. (shoal_sim_set_obstacles, and
 * the GPU sim's own copy.) */
shoal_status obstacles_take(obstacle *to, size_t *to_count, field *to_field, float cell,
                            float margin, const shoal_obstacles *from, shoal_error *err);
/* The cell vector at p: rule_field_sample in sim/rules.h (both backends sample with it). */

/* What one thread's force kernels found during a step: the first non-finite result (by
 * input row) and the work they did (groups, candidate lane-pairs walked: candidates x W,
 * and the neighbour pairs among them). One cache line per thread. */
typedef struct sim_fault {
    _Alignas(64) uint32_t row;
    int found;
    uint64_t groups, boids, lane_pairs, useful;
} sim_fault;

/* The force kernels' work in the last step, summed over the threads. */
typedef struct sim_work {
    uint64_t groups, lane_pairs, useful, boids;
} sim_work;

struct shoal_sim {
    shoal_sim_desc desc;
    size_t count;
    int isa; /* resolved shoal_isa */

    /* Boid arrays in cell order: cur is read by a step, nxt written; swapped after. */
    float *cur[6], *nxt[6];
    uint32_t *row_cur, *row_nxt; /* input row of each entry */
    uint32_t *cell_of;           /* cell of each entry of cur (assign, or the last forces) */
    /* cell_of already holds the cells of cur: the last step's forces wrote the cell of each
     * new position (every boid active, grid unchanged since). Cleared by anything else that
     * writes cur or changes the grid; grid_assign then computes them. */
    int cells_valid;

    grid g;
    uint32_t *cell_start; /* cell_count + 1 entries: first slot of each cell */
    int block_count;      /* this step's blocks: sim_block_count (set by each step) */
    int64_t block_size;   /* boids a block */
    int hist_width;       /* cell tables in hist: sim_hist_width(N) */
    uint32_t *hist;       /* the units' counters over their cell ranges, then offsets (grid.c) */
    int64_t block_lo[SIM_BLOCK_MAX_COUNT], block_hi[SIM_BLOCK_MAX_COUNT]; /* cells, or 1 > 0 */
    sort_units units; /* this step's units: blocks, or groups of them (grid.c) */
    /* grid_scatter stages nearly sorted blocks per cache line and writes whole lines
     * non-temporally (2; 1, the default: when there are SIM_SORT_STAGED_MIN boids or more,
     * a state larger than the caches) or stores slot by slot (0); tools/bench_sort and
     * test_scan compare them: the bits are the same either way */
    int sort_staged;
    /* the force kernel of AVX2 and AVX-512 (sim.c forces_plan): lane groups of consecutive
     * boids (0, the default), cluster lists where the work items are enough to share out (1:
     * SHOAL_KERNEL=clusters), or always, clusters also cut at random (2: clusters-random,
     * test_determinism's check that they change no bit) */
    int kernel_clusters;
    int64_t scan_partial[SIM_MAX_THREADS + 1];

    parallel_counter ctr_blocks, ctr_units, ctr_scatter, ctr_forces;
    sim_fault fault[SIM_MAX_THREADS];
    sim_work work; /* of the last step's forces */

    model_consts mc;
    uint64_t steps_done;
    int has_state; /* set by set_state/init_state: a step before that is an error */
    /* a part of the school (part.c): capacity of the boid arrays and of cell_start, hist;
     * part_mode: slots whose cell_of is SIM_CELL_NONE are dropped by the sort (the boids
     * that left the part, and the halo of the last step), and count becomes the boids kept */
    size_t part_capacity;
    size_t part_cells, part_hist;
    int part_mode;
    size_t *part_row_at; /* scratch: where each row of owned cells goes when copied out */
    size_t part_row_cap;
    /* a part in a periodic world (part.c part_set_box): per axis whether the whole grid
     * wraps there, and the sub-box's map from whole-grid cells: cell c is local c - off
     * when that lies in [part_plo, part_phi), and cell part_xc (the halo cell across the
     * seam; -1: none) is local part_xl, so that the local cells ascend as the whole grid's
     * and the candidate order is one process's */
    int32_t part_gwrap[3];
    int32_t part_plo[3], part_phi[3], part_xc[3], part_xl[3];
    int part_seam; /* some axis has a cell across the seam (part_xc >= 0) */

    /* obstacle meshes and their field */
    obstacle obstacles[SHOAL_MAX_OBSTACLES];
    size_t obstacle_count;
    field fld;

    /* predators: state at the start of the next step (serial update after the forces) */
    int predator_count;
    float pred_p[SHOAL_MAX_PREDATORS][3], pred_v[SHOAL_MAX_PREDATORS][3];

    /* heading targets the user pinned */
    uint8_t target_pinned[SHOAL_MAX_TARGETS];
    float target_pin[SHOAL_MAX_TARGETS][3];
    int sorted_once;

    /* stage timers (thread 0's view, from barrier to barrier) and per-thread busy time */
    struct shoal_profile *prof;     /* where the stages record: prof_own or one lent */
    struct shoal_profile *prof_own; /* this sim's own profile */
    uint64_t stage_ns[STAGE_COUNT];
    uint64_t stage_calls;
    uint64_t thread_busy_ns[STAGE_COUNT][SIM_MAX_THREADS];
};

/* grid.c: the grid of a school of `count` boids of `model` in world `w` (NULL: today's). */
void grid_setup(grid *g, shoal_model model, const shoal_params *p, const shoal_world *w,
                shoal_neighbors nb, size_t count);
/* A boid's cell along one axis; compiled for the GPU too (gpu_sim.cu k_assign), so both
 * backends place every boid in the same cell. */
#if defined(__CUDACC__)
#define SIM_HOST_DEVICE __host__ __device__
#else
#define SIM_HOST_DEVICE
#endif
static inline SIM_HOST_DEVICE int32_t grid_coord(float v, float origin, float inv, int32_t n)
{
    /* NaN and out-of-range positions clamp in float before the conversion, so no value of
     * v can produce an index outside [0, n). */
    float f = (v - origin) * inv;
    if (!(f >= 0.0f))
        return 0;
    if (f >= (float)(n - 1))
        return n - 1;
    return (int32_t)f;
}
void grid_assign(shoal_sim *s, int thread_index);
void grid_scan(shoal_sim *s, int thread_index, int thread_count);
void grid_scatter(shoal_sim *s, int thread_index, int thread_count);
/* The candidate runs of the cells with x in [x_lo, x_hi] around row (y, z): writes
 * begin/end slot pairs in the canonical order (z-1..z+1 outer, y-1..y+1 inner, x ascending;
 * on a periodic axis the cells after wrapping, each once, in ascending cell order, so the x
 * range may be two runs), returns count (at most GRID_RUNS_MAX). */
#define GRID_RUNS_MAX 18
int grid_runs(const shoal_sim *s, int32_t x_lo, int32_t x_hi, int32_t y, int32_t z,
              uint32_t run_begin[GRID_RUNS_MAX], uint32_t run_end[GRID_RUNS_MAX]);
/* The cells of axis c around cell k (k-1, k, k+1: clipped to the grid, or wrapped and each
 * once where the axis wraps), ascending; returns how many (1 to 3). */
int grid_axis_cells(const grid *g, int c, int32_t k, int32_t out[3]);
/* The cell holding sorted slot `slot` (< count) after a sort: the last cell whose first
 * slot is <= slot and which is not empty (binary search in cell_start). */
static inline uint32_t grid_cell_of_slot(const shoal_sim *s, uint32_t slot)
{
    int64_t lo = 0, hi = s->g.cell_count; /* cell_start[lo] <= slot < cell_start[hi] */
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (s->cell_start[mid] <= slot)
            lo = mid;
        else
            hi = mid;
    }
    return (uint32_t)lo;
}

/* scan.c: exclusive prefix sum inside a parallel region (two levels: per-thread sums,
 * then a scan of those). Every thread of the region calls it with the same arguments.
 * data[0..count) becomes its exclusive scan; returns the total to every thread. */
int64_t scan_exclusive_u32(uint32_t *data, int64_t count, int64_t *partial, int thread_index,
                           int thread_count);
/* Serial reference. */
int64_t scan_exclusive_serial_u32(uint32_t *data, int64_t count);
/* The middle of the parallel scan: every thread of the region gives the sum of its share,
 * gets the sum of the shares of the threads before it, and the total in *total. */
int64_t scan_offset(uint64_t sum, int64_t *partial, int thread_index, int thread_count,
                    int64_t *total);

/* Force kernels, one per ISA (forces_scalar.c, forces_avx2.c, forces_avx512.c): process
 * the groups that start in sorted boid range [b0, b1) (groups: VW boids of one grid row,
 * aligned to the row's start), reading cur (the sorted start-of-step state, with cell_start
 * describing it) and writing nxt at the same slots, and cell_of there: the cell of each new
 * position (the next step's keys). Run by worker threads; writes only the nxt and cell_of
 * entries of those groups and *fault. */
typedef void (*forces_range_fn)(const shoal_sim *s, int64_t b0, int64_t b1, sim_fault *fault);
void forces_range_scalar(const shoal_sim *s, int64_t b0, int64_t b1, sim_fault *f);
void forces_range_avx2(const shoal_sim *s, int64_t b0, int64_t b1, sim_fault *f);
void forces_range_avx512(const shoal_sim *s, int64_t b0, int64_t b1, sim_fault *f);
void forces_range_neon(const shoal_sim *s, int64_t b0, int64_t b1, sim_fault *f);
/* The cluster-list kernels (forces_cluster.h): work items [i0, i1), each a column of the active
 * cells and a slab of 16 layers (sim.c forces_plan counts them); the same outputs as the lane
 * groups' for those items' boids. */
void forces_clusters_avx2(const shoal_sim *s, int64_t i0, int64_t i1, sim_fault *f);
void forces_clusters_avx512(const shoal_sim *s, int64_t i0, int64_t i1, sim_fault *f);
#define SIM_CLUSTER_SLAB 16

/* field.c: rebuild the field from the sim's obstacles and parameters; free them all. */
shoal_status sim_field_rebuild(shoal_sim *s, shoal_error *err);
void sim_obstacles_free(shoal_sim *s);

/* predators.c: reset the predators to their start (params); the serial update of one step
 * from the start-of-step state in cur (after the forces, before the swap). */
void predators_reset(shoal_sim *s);
void predators_step(shoal_sim *s);
/* predators_step in two halves: the target of each predator from the start-of-step boids
 * in cur (the nearest boid, lowest input row on ties, or the centre), then the move toward
 * tgt. A part of the school (MPI) finds the targets with a global reduction instead. */
void predators_targets(const shoal_sim *s, float tgt[][3]);
void predators_advance(shoal_sim *s, const float tgt[][3]);

/* init.c: boid i's initial row (px py pz vx vy vz), a function of (model, params, seed, i)
 * alone; sim_init_rows draws rows [0, count). */
void sim_init_row(shoal_model model, const shoal_params *p, const shoal_world *w, uint64_t seed,
                  size_t i, float row[6]);
void sim_init_rows(shoal_model model, const shoal_params *p, const shoal_world *w, uint64_t seed,
                   size_t count, float *rows);
/* Rows [first, first + count) of the same state (row i's draws depend on (seed, i) only). */
void sim_init_rows_range(shoal_model model, const shoal_params *p, const shoal_world *w,
                         uint64_t seed, size_t first, size_t count, float *rows);
/* The targets of time t_s (rules.h rule_targets, float), target_count of them. */
void sim_targets(const shoal_params *p, int target_count, uint64_t seed, double t_s, float *xyz);

/* Sort the current state into cell order without stepping (tests, neighbour queries). */
void sim_sort_only(shoal_sim *s);
/* sim.c: one step's sort and forces without the predators' move and the final swap: the
 * new state of the active boids is in nxt (cell order, as cur). Returns the lowest input
 * row with a non-finite result, or UINT32_MAX. For sim/part.c. */
uint32_t sim_forces_pass(shoal_sim *s);

/* Test hook: the input rows of the neighbours of input row `row` within `radius`, found
 * through the grid (after at least one sort), in candidate order. Returns how many
 * (at most max). */
size_t sim_grid_neighbors(shoal_sim *s, uint32_t row, float radius, uint32_t *out, size_t max);

#endif
