/* SPDX-License-Identifier: MIT */
/* The CUDA backend: a shoal_gpu_sim's device memory, its step (assign cells -> scan ->
 * sort -> gather -> forces -> predators) and the state in and out. The rules themselves
 * are src/sim/rules.h, the same source the CPU kernels compile (gpu_models.h adapts them
 * to one thread per boid); the grid geometry, the targets and the obstacle field
 * come from the CPU's own functions (grid_setup, sim_targets, field_build), called
 * on the host, so the GPU cannot drift from them.
 *
 * Data layout: the state lives in input row order (pos[row], vel[row] as float4, w = 0),
 * double-buffered. Each step:
 *   k_assign   row i -> its cell (grid_coord exactly as grid.c), per-cell counts by atomic
 *              increments (integer counts: the same whatever the arrival order);
 *   scan       exclusive sum of the counts: cell_start[c] (CUB; integers, exact);
 *   order      STABLE: CUB's radix sort of (cell, row) pairs, rows entering in row order,
 *              so the sort's stability gives cell-major, row-minor order: the CPU's.
 *              ATOMIC: slot = cell_start[cell] + the value the atomic increment returned
 *              (seed 001): the order inside a cell is whatever order the atomics landed in;
 *   k_gather   sorted copies: spos, svel (float4), the cell and input row of each slot,
 *              and where the model reads it dir_j = v_j / |v_j| (the CPU computes it per candidate;
 * the same function of v_j, so the same bits, computed once); k_forces   one thread per sorted
 * slot: the CPU's candidate order (z-1..z+1 outer, y-1..y+1 inner, the contiguous slot range of
 * x-1..x+1 of that grid row), the model's finish and integration (with the obstacle field, sampled
 * from the CPU-built grid uploaded to device memory, and the flee term), result written to row
 * order; predators  (when there are any) each predator's nearest boid by a block reduction of (d^2,
 * input row) keys and atomicMin (the minimum does not depend on the order), or the school's centre
 * as the CPU sums it (sorted order, double, one thread); then one thread moves the predators by
 * rules.h. Faults: the first non-finite result of a step records its lowest input row (atomicMin)
 * and the step; the forces of later steps in the batch do nothing, so the buffer holding
 * the failing step's input keeps the state from before it, as on the CPU. */

/* core/parallel.h (via sim_internal.h) uses C11's _Alignas; this file is C++. */
#define _Alignas(x) alignas(x)
extern "C" {
#include "shoal/gpu.h"
#include "shoal/io.h"
#include "sim/sim_internal.h"
#include "sim/world.h"
}
#undef _Alignas

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu_models.h"

#define FAULT_NONE 0xffffffffu

/* A step's fault record on the device: lowest non-finite input row, its batch step. */
struct gpu_fault {
    uint32_t row;
    uint32_t step;
};

struct shoal_gpu_sim {
    shoal_sim_desc desc;
    shoal_gpu_order order;
    size_t count;
    grid g;
    gpu_consts k; /* the step constants: every launch takes them by value (gpu_models.h) */
    uint64_t steps_done;
    int has_state; /* set by set_state: a step before it is an error, as on the CPU */
    char device_name[256];
    int end_bit; /* radix sort: bits of the largest cell index */

    /* row order, double-buffered */
    float4 *pos[2], *vel[2];
    int cur;
    /* sort */
    uint32_t *cell_of;  /* cell of row i */
    uint32_t *local_of; /* atomic order: rank of row i in its cell (arrival order) */
    uint32_t *iota;     /* 0..N-1: the values the radix sort carries */
    uint32_t *cell_sorted, *row_sorted;
    uint32_t *cell_count; /* cell_count + 1 counters */
    uint32_t *cell_start; /* cell_count + 1 */
    void *temp;
    size_t temp_bytes;
    /* sorted copies read by the forces */
    float4 *spos, *svel, *sdir;
    gpu_fault *fault;
    /* obstacle field (device copy of a CPU-built field) and predators */
    float *fvec;
    gpu_predators *pred;
    /* the host side of the obstacles: the meshes lent by set_obstacles (to build the field
     * again when field_cell or field_margin change) and the field uploaded; a field copied
     * from a CPU sim (copy_obstacles) comes without meshes */
    obstacle obs[SHOAL_MAX_OBSTACLES];
    size_t obs_count;
    field hfld;
    int field_from_cpu;

    cudaEvent_t ev0, ev1;
    shoal_gpu_stats stats;
};

/* ---- errors ------------------------------------------------------------------------ */

static shoal_status cuda_fail(shoal_error *err, cudaError_t e, const char *what)
{
    shoal_status st = e == cudaErrorMemoryAllocation ? SHOAL_ERR_NOMEM : SHOAL_ERR_UNSUPPORTED;
    return shoal_error_set(err, st, "CUDA: %s: %s (%s)", what, cudaGetErrorString(e),
                           cudaGetErrorName(e));
}

/* Every CUDA call goes through CK: on failure the function returns the error. */
#define CK(call, what)                                                                             \
    do {                                                                                           \
        cudaError_t ck_e = (call);                                                                 \
        if (ck_e != cudaSuccess)                                                                   \
            return cuda_fail(err, ck_e, what);                                                     \
    } while (0)

extern "C" shoal_status shoal_gpu_available(shoal_error *err)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess)
        return shoal_error_set(err, SHOAL_ERR_UNSUPPORTED, "no NVIDIA GPU or driver found: %s",
                               cudaGetErrorString(e));
    if (n < 1)
        return shoal_error_set(err, SHOAL_ERR_UNSUPPORTED,
                               "no NVIDIA GPU or driver found: no CUDA device");
    return SHOAL_OK;
}

/* ---- kernels ----------------------------------------------------------------------- */

/* Thread i = input row i: its cell, and the cell's count (atomics: the counts are exact
 * integers whatever the order; with ATOMIC the returned rank is the seed 001 order). */
template <bool ATOMIC>
__global__ void __launch_bounds__(256)
    k_assign(const __grid_constant__ gpu_consts k_, const float4 *__restrict__ pos, uint32_t n,
             uint32_t *__restrict__ cell_of, uint32_t *__restrict__ local_of,
             uint32_t *__restrict__ counts)
{
    const gpu_consts *K = &k_; /* the parameter bank itself (no copy) */
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float4 p = pos[i];
    /* grid.c's own grid_coord (sim_internal.h, compiled for the device too) */
    int32_t cx = grid_coord(p.x, K->origin[0], K->inv_cell, K->dims[0]);
    int32_t cy = grid_coord(p.y, K->origin[1], K->inv_cell, K->dims[1]);
    int32_t cz = grid_coord(p.z, K->origin[2], K->inv_cell, K->dims[2]);
    uint32_t c = (uint32_t)(cx + K->dims[0] * (cy + K->dims[1] * cz));
    cell_of[i] = c;
    uint32_t r = atomicAdd(&counts[c], 1u);
    if (ATOMIC)
        local_of[i] = r;
}

/* dir_j as the CPU computes it for a candidate (rules.h rule_dir): for the adapters with
 * DIRS. */
static __device__ __forceinline__ float4 cand_dir(float4 v)
{
    float d[3];
    rule_dir(v.x, v.y, v.z, d);
    return make_float4(d[0], d[1], d[2], 0.0f);
}

/* STABLE: thread i = sorted slot i; row_sorted[i] says which row lands there. */
template <bool DIRS>
__global__ void __launch_bounds__(256)
    k_gather(uint32_t n, const uint32_t *__restrict__ row_sorted, const float4 *__restrict__ pos,
             const float4 *__restrict__ vel, float4 *__restrict__ spos, float4 *__restrict__ svel,
             float4 *__restrict__ sdir)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint32_t r = row_sorted[i];
    float4 v = vel[r];
    spos[i] = pos[r];
    svel[i] = v;
    if (DIRS)
        sdir[i] = cand_dir(v);
}

/* ATOMIC: thread i = input row i; its slot is its cell's start plus its arrival rank. */
template <bool DIRS>
__global__ void __launch_bounds__(256)
    k_scatter_atomic(uint32_t n, const uint32_t *__restrict__ cell_of,
                     const uint32_t *__restrict__ local_of, const uint32_t *__restrict__ cell_start,
                     const float4 *__restrict__ pos, const float4 *__restrict__ vel,
                     float4 *__restrict__ spos, float4 *__restrict__ svel,
                     float4 *__restrict__ sdir, uint32_t *__restrict__ cell_sorted,
                     uint32_t *__restrict__ row_sorted)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint32_t c = cell_of[i];
    uint32_t slot = cell_start[c] + local_of[i];
    float4 v = vel[i];
    spos[slot] = pos[i];
    svel[slot] = v;
    if (DIRS)
        sdir[slot] = cand_dir(v);
    cell_sorted[slot] = c;
    row_sorted[slot] = i;
}

static __device__ __forceinline__ vf3 v3_of(float4 a) { return v3_set1(a.x, a.y, a.z); }

/* The force kernel. Lane (thread) i = sorted slot i, one boid; consecutive threads are
 * consecutive boids of one cell, so a warp mostly walks the same candidates (broadcast
 * loads). The candidate order is the scalar CPU kernel's: for zz = z-1..z+1, yy = y-1..y+1
 * (each skipped when outside the grid), the slots of cells max(x-1, 0)..min(x+1, nx-1)
 * of grid row (yy, zz), which are contiguous in sorted order; inside, slot order (in
 * STABLE order: input row order). Must equal forces_kernel.h at W = 1 bit for bit: both
 * run rules.h. */
template <class M>
__global__ void __launch_bounds__(128)
    k_forces(const __grid_constant__ gpu_consts k_, uint32_t n, uint32_t step,
             const float4 *__restrict__ spos, const float4 *__restrict__ svel,
             const float4 *__restrict__ sdir, const uint32_t *__restrict__ cell_sorted,
             const uint32_t *__restrict__ row_sorted, const uint32_t *__restrict__ cell_start,
             float4 *__restrict__ out_pos, float4 *__restrict__ out_vel, gpu_fault *fault,
             const gpu_predators *__restrict__ pred)
{
    const gpu_consts *K = &k_; /* the parameter bank itself (no copy) */
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    /* A fault in an earlier step of this batch: leave that step's input untouched. */
    if (*(volatile uint32_t *)&fault->step < step)
        return;
    const int32_t nx = K->dims[0], ny = K->dims[1], nz = K->dims[2];
    uint32_t c = cell_sorted[i];
    int32_t cx = (int32_t)(c % (uint32_t)nx);
    int32_t cy = (int32_t)((c / (uint32_t)nx) % (uint32_t)ny);
    int32_t cz = (int32_t)(c / ((uint32_t)nx * (uint32_t)ny));
    int32_t x_lo = cx - 1 < 0 ? 0 : cx - 1;
    int32_t x_hi = cx + 1 > nx - 1 ? nx - 1 : cx + 1;
    vf3 p = v3_of(spos[i]), v = v3_of(svel[i]);
    typename M::acc a;
    M::begin(&a, K, p, v);
    const vf reach2 = K->mc.reach2;
    for (int32_t zz = cz - 1; zz <= cz + 1; zz++) {
        if (zz < 0 || zz >= nz)
            continue;
        for (int32_t yy = cy - 1; yy <= cy + 1; yy++) {
            if (yy < 0 || yy >= ny)
                continue;
            uint32_t row0 = (uint32_t)nx * ((uint32_t)yy + (uint32_t)ny * (uint32_t)zz);
            uint32_t rb = cell_start[row0 + (uint32_t)x_lo];
            uint32_t re = cell_start[row0 + (uint32_t)x_hi + 1];
            for (uint32_t j = rb; j < re; j++) {
                float4 pj = __ldg(&spos[j]);
                float4 vj = __ldg(&svel[j]);
                float4 dj = M::DIRS ? __ldg(&sdir[j]) : make_float4(0.f, 0.f, 0.f, 0.f);
                vf3 diff = rule_diff(p, pj.x, pj.y, pj.z);
                vf d2 = v3_dot(diff, diff);
                vm near = M::near(d2, reach2);
                if (!near) /* one lane: a candidate it is not near adds nothing */
                    continue;
                rule_cand c = {pj.x, pj.y, pj.z, vj.x, vj.y, vj.z, {dj.x, dj.y, dj.z}};
                vm late = M::pair(&a, near, p, diff, d2, &c, K);
                if (M::LATE && late) /* the CPU adds these after its chunk, in the same order */
                    M::late(&a, diff, d2, K);
            }
        }
    }
    /* the obstacle field and the flee term (rules.h rule_extras), at the start position */
    uint32_t row = row_sorted[i];
    rule_extras x;
    x.field_on = K->field_on;
    x.flee_on = K->mc.predator_count > 0;
    x.field = x.flee = v3_zero();
    x.rows = &row;
    x.lanes = 1;
    if (x.field_on) {
        float o[3];
        rule_field_sample(&K->fld, p.x, p.y, p.z, o);
        x.field = rule_field_term(&K->prm, v3_set1(o[0], o[1], o[2]));
    }
    if (x.flee_on)
        x.flee = rule_flee_term(&K->prm, &K->mc, pred->p, p);
    M::finish(&a, K, &x, p, v);
    bool ok = isfinite(p.x) && isfinite(p.y) && isfinite(p.z) && isfinite(v.x) && isfinite(v.y) &&
              isfinite(v.z);
    if (!ok) {
        atomicMin(&fault->row, row);
        atomicMin(&fault->step, step);
    }
    out_pos[row] = make_float4(p.x, p.y, p.z, 0.0f);
    out_vel[row] = make_float4(v.x, v.y, v.z, 0.0f);
}

/* ---- predators (rules.h; predators.c is the CPU's twin) --------------------------------- */

/* A warp's minimum of a 64-bit key. */
static __device__ __forceinline__ unsigned long long warp_min_u64(unsigned long long k)
{
    for (int o = 16; o > 0; o >>= 1) {
        unsigned long long other = __shfl_xor_sync(0xffffffffu, k, o);
        k = other < k ? other : k;
    }
    return k;
}

/* Nearest boid of each predator (chase = nearest). Thread i = input row i of the
 * start-of-step state. The key is (bits of d^2) << 32 | row: d^2 is +0 or more (or +inf),
 * so its bits order as the floats do, and the smallest key is the smallest d^2 with ties
 * to the lowest input row, which is the boid predators.c's serial scan picks (it never
 * takes a NaN either). A minimum does not depend on the order it is taken in. */
__global__ void __launch_bounds__(256)
    k_pred_nearest(const __grid_constant__ gpu_consts k_, const float4 *__restrict__ pos,
                   uint32_t n, uint32_t step, const gpu_fault *fault, gpu_predators *pred)
{
    const gpu_consts *K = &k_; /* the parameter bank itself (no copy) */
    __shared__ unsigned long long best[SHOAL_MAX_PREDATORS];
    if (*(volatile const uint32_t *)&fault->step <= step)
        return; /* this step failed (the whole grid sees the same record) */
    const int np = K->mc.predator_count;
    for (int k = threadIdx.x; k < np; k += blockDim.x)
        best[k] = ~0ull;
    __syncthreads();
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 b = i < n ? pos[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int k = 0; k < np; k++) {
        unsigned long long key = ~0ull;
        if (i < n) {
            float d2 = rule_predator_d2(b.x, b.y, b.z, pred->p[k]);
            if (d2 == d2)
                key = ((unsigned long long)__float_as_uint(d2) << 32) | i;
        }
        key = warp_min_u64(key);
        if ((threadIdx.x & 31u) == 0 && key != ~0ull)
            atomicMin(&best[k], key);
    }
    __syncthreads();
    for (int k = threadIdx.x; k < np; k += blockDim.x)
        if (best[k] != ~0ull)
            atomicMin(&pred->key[k], best[k]);
}

/* The school's centre (chase = centre), as predators.c sums it: double sums in the sorted
 * (cell) order, one thread, so the same bits (an O(N) serial pass per step: fine at the
 * sizes a window shows, slow at a million). */
__global__ void k_pred_centre(const float4 *__restrict__ spos, uint32_t n, uint32_t step,
                              const gpu_fault *fault, gpu_predators *pred)
{
    if (*(volatile const uint32_t *)&fault->step <= step)
        return;
    double c0 = 0, c1 = 0, c2 = 0;
    for (uint32_t i = 0; i < n; i++) {
        float4 q = spos[i];
        c0 += q.x;
        c1 += q.y;
        c2 += q.z;
    }
    pred->centre[0] = c0 / (double)n;
    pred->centre[1] = c1 / (double)n;
    pred->centre[2] = c2 / (double)n;
}

/* Move every predator toward its target (one thread, predator order, rules.h), then clear
 * the keys for the next step. */
__global__ void k_pred_move(const __grid_constant__ gpu_consts k_, const float4 *__restrict__ pos,
                            const float4 *__restrict__ spos, uint32_t step, const gpu_fault *fault,
                            gpu_predators *pred, int centre)
{
    const gpu_consts *K = &k_; /* the parameter bank itself (no copy) */
    if (*(volatile const uint32_t *)&fault->step <= step)
        return;
    for (int k = 0; k < K->mc.predator_count; k++) {
        float tgt[3];
        if (centre) {
            for (int c = 0; c < 3; c++)
                tgt[c] = (float)pred->centre[c];
        } else {
            unsigned long long key = pred->key[k];
            /* no candidate (only NaN distances): predators.c falls back to its first
             * sorted boid */
            float4 b = key == ~0ull ? spos[0] : pos[(uint32_t)(key & 0xffffffffull)];
            tgt[0] = b.x;
            tgt[1] = b.y;
            tgt[2] = b.z;
        }
        rule_predator_move(&K->prm, pred->p[k], pred->v[k], tgt, K->pred_turn, K->mc.dt);
        pred->key[k] = ~0ull;
    }
}

/* ---- host side ---------------------------------------------------------------------- */

static unsigned blocks_for(size_t n, unsigned threads)
{
    return (unsigned)((n + threads - 1) / threads);
}

/* The step constants: the CPU's own sim_model_consts (the model's entry, models.c: the
 * same host arithmetic, so the same bits: its constants and largest squared radius), then
 * what only the GPU's walk keeps here (the grid, the predators' turn). The targets are drawn
 * per step (enqueue_step); the predators live in device memory. */
static void fill_consts(shoal_gpu_sim *s)
{
    const shoal_params *p = &s->desc.params;
    gpu_consts *k = &s->k;
    model_consts *mc = &k->mc;
    k->prm = *p;
    for (int c = 0; c < 3; c++) {
        k->origin[c] = s->g.origin[c];
        k->dims[c] = s->g.dims[c];
    }
    k->inv_cell = s->g.inv_cell;
    sim_model_consts(s->desc.model, p, s->desc.dt_s, mc);
    mc->seed = s->desc.seed;
    mc->predator_count = (int)p->predator_count;
    k->pred_turn = rule_predator_turn(p, mc->dt);
}

/* Whether the model's adapter reads each candidate's direction (sdir, filled by the
 * gather): gpu_model_NAME::DIRS, indexed by the enum. */
#define DIRS_ENTRY(id, name) gpu_model_##name::DIRS,
static const bool model_dirs_of[] = {SIM_MODELS(DIRS_ENTRY)};
#undef DIRS_ENTRY
SIM_MODEL_TABLE_CHECK(model_dirs_of);

static bool model_dirs(shoal_model model) { return model_dirs_of[model]; }

extern "C" void shoal_gpu_sim_destroy(shoal_gpu_sim *s)
{
    if (!s)
        return;
    /* Best effort: errors while freeing cannot be reported and leave nothing to undo. */
    for (int b = 0; b < 2; b++) {
        cudaFree(s->pos[b]);
        cudaFree(s->vel[b]);
    }
    cudaFree(s->cell_of);
    cudaFree(s->local_of);
    cudaFree(s->iota);
    cudaFree(s->cell_sorted);
    cudaFree(s->row_sorted);
    cudaFree(s->cell_count);
    cudaFree(s->cell_start);
    cudaFree(s->temp);
    cudaFree(s->spos);
    cudaFree(s->svel);
    cudaFree(s->sdir);
    cudaFree(s->fault);
    cudaFree(s->fvec);
    cudaFree(s->pred);
    /* the host copies of the meshes and field: taking none frees them */
    obstacles_take(s->obs, &s->obs_count, &s->hfld, 1.0f, 0.0f, NULL, NULL);
    if (s->ev0)
        cudaEventDestroy(s->ev0);
    if (s->ev1)
        cudaEventDestroy(s->ev1);
    free(s);
}

__global__ void k_iota(uint32_t *a, uint32_t n)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        a[i] = i;
}

static shoal_status create_impl(shoal_gpu_sim *s, shoal_error *err)
{
    const size_t n = s->count;
    const size_t cells = (size_t)s->g.cell_count;
    int dev = 0;
    CK(cudaGetDevice(&dev), "cudaGetDevice");
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties");
    snprintf(s->device_name, sizeof s->device_name, "%s", prop.name);
    for (int b = 0; b < 2; b++) {
        CK(cudaMalloc(&s->pos[b], n * sizeof(float4)), "allocating positions");
        CK(cudaMalloc(&s->vel[b], n * sizeof(float4)), "allocating velocities");
        CK(cudaMemset(s->pos[b], 0, n * sizeof(float4)), "clearing positions");
        CK(cudaMemset(s->vel[b], 0, n * sizeof(float4)), "clearing velocities");
    }
    CK(cudaMalloc(&s->cell_of, n * sizeof(uint32_t)), "allocating cell keys");
    if (s->order == SHOAL_GPU_ORDER_ATOMIC)
        CK(cudaMalloc(&s->local_of, n * sizeof(uint32_t)), "allocating ranks");
    else
        CK(cudaMalloc(&s->iota, n * sizeof(uint32_t)), "allocating row indices");
    CK(cudaMalloc(&s->cell_sorted, n * sizeof(uint32_t)), "allocating sorted cells");
    CK(cudaMalloc(&s->row_sorted, n * sizeof(uint32_t)), "allocating sorted rows");
    CK(cudaMalloc(&s->cell_count, (cells + 1) * sizeof(uint32_t)), "allocating cell counts");
    CK(cudaMalloc(&s->cell_start, (cells + 1) * sizeof(uint32_t)), "allocating cell table");
    CK(cudaMalloc(&s->spos, n * sizeof(float4)), "allocating sorted positions");
    CK(cudaMalloc(&s->svel, n * sizeof(float4)), "allocating sorted velocities");
    if (model_dirs(s->desc.model))
        CK(cudaMalloc(&s->sdir, n * sizeof(float4)), "allocating directions");
    CK(cudaMalloc(&s->fault, sizeof(gpu_fault)), "allocating the fault record");
    CK(cudaMalloc(&s->pred, sizeof(gpu_predators)), "allocating the predators");

    /* Bits of the largest cell index: the radix sort looks at those only. */
    int bits = 1;
    while (bits < 32 && (((uint64_t)1 << bits) < (uint64_t)cells))
        bits++;
    s->end_bit = bits;
    size_t sort_bytes = 0, scan_bytes = 0;
    CK(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, s->cell_of, s->cell_sorted, s->iota,
                                       s->row_sorted, (int)n, 0, bits),
       "sizing the radix sort");
    CK(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, s->cell_count, s->cell_start,
                                     (int)(cells + 1)),
       "sizing the scan");
    s->temp_bytes = sort_bytes > scan_bytes ? sort_bytes : scan_bytes;
    CK(cudaMalloc(&s->temp, s->temp_bytes), "allocating sort scratch");
    if (s->iota) {
        k_iota<<<blocks_for(n, 256), 256>>>(s->iota, (uint32_t)n);
        CK(cudaGetLastError(), "k_iota");
    }
    CK(cudaEventCreate(&s->ev0), "cudaEventCreate");
    CK(cudaEventCreate(&s->ev1), "cudaEventCreate");
    CK(cudaDeviceSynchronize(), "setting up the simulation");
    return SHOAL_OK;
}

/* validate as sim.c's validate_desc (the fields the GPU uses) */
static shoal_status validate(const shoal_sim_desc *d, shoal_error *err)
{
    if ((unsigned)d->model >= SHOAL_MODEL_COUNT)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "invalid model %d", (int)d->model);
    if (d->boid_count < 1)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "boid count must be at least 1");
    if (d->boid_count > (size_t)INT32_MAX)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "boid count %zu exceeds the GPU limit %d",
                               d->boid_count, INT32_MAX);
    if (!(d->dt_s > 0) || !isfinite(d->dt_s) || d->dt_s > 1e6)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "dt must be finite and > 0 (got %g)", d->dt_s);
    if (!isfinite(d->t0_s))
        return shoal_error_set(err, SHOAL_ERR_INPUT, "t0 must be finite");
    if (d->neighbors != SHOAL_NEIGHBORS_GRID && d->neighbors != SHOAL_NEIGHBORS_BRUTE)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "invalid neighbour method");
    shoal_status st = shoal_params_validate(d->model, &d->params, err);
    return st ? st : world_check_desc(d, "shoal_gpu_sim", err);
}

/* Predators back at their start (predators.c predators_reset, by the same rules.h code). */
static shoal_status reset_predators(shoal_gpu_sim *s, shoal_error *err)
{
    gpu_predators h;
    memset(&h, 0, sizeof h);
    int n = (int)s->desc.params.predator_count;
    for (int k = 0; k < n; k++)
        rule_predator_start(&s->desc.params, k, n, h.p[k]);
    for (int k = 0; k < SHOAL_MAX_PREDATORS; k++)
        h.key[k] = ~0ull;
    CK(cudaMemcpy(s->pred, &h, sizeof h, cudaMemcpyHostToDevice), "uploading the predators");
    return SHOAL_OK;
}

extern "C" shoal_status shoal_gpu_sim_create(const shoal_sim_desc *desc, shoal_gpu_order order,
                                             shoal_gpu_sim **sim_out, shoal_error *err)
{
    *sim_out = NULL;
    shoal_status st = validate(desc, err);
    if (st)
        return st;
    if (order != SHOAL_GPU_ORDER_STABLE && order != SHOAL_GPU_ORDER_ATOMIC)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "invalid GPU order %d", (int)order);
    if ((st = shoal_gpu_available(err)))
        return st;
    shoal_gpu_sim *s = (shoal_gpu_sim *)calloc(1, sizeof *s);
    if (!s)
        return shoal_error_set(err, SHOAL_ERR_NOMEM, "out of memory allocating the GPU simulation");
    s->desc = *desc;
    s->order = order;
    s->count = desc->boid_count;
    /* The CPU's geometry, by the CPU's function. */
    grid_setup(&s->g, desc->model, &desc->params, desc->neighbors, s->count);
    fill_consts(s);
    if ((st = create_impl(s, err)) || (st = reset_predators(s, err))) {
        shoal_gpu_sim_destroy(s);
        return st;
    }
    *sim_out = s;
    return SHOAL_OK;
}

extern "C" shoal_status shoal_gpu_sim_set_state(shoal_gpu_sim *s, const float *rows,
                                                shoal_error *err)
{
    shoal_status st = shoal_state_check_finite(rows, s->count, "state", err);
    if (st)
        return st;
    size_t n = s->count;
    float4 *hp = (float4 *)malloc(n * sizeof(float4) * 2);
    if (!hp)
        return shoal_error_set(err, SHOAL_ERR_NOMEM, "out of memory staging %zu boids", n);
    float4 *hv = hp + n;
    for (size_t i = 0; i < n; i++) {
        const float *r = rows + i * 6;
        hp[i] = make_float4(r[0], r[1], r[2], 0.0f);
        hv[i] = make_float4(r[3], r[4], r[5], 0.0f);
    }
    cudaError_t e = cudaMemcpy(s->pos[s->cur], hp, n * sizeof(float4), cudaMemcpyHostToDevice);
    if (e == cudaSuccess)
        e = cudaMemcpy(s->vel[s->cur], hv, n * sizeof(float4), cudaMemcpyHostToDevice);
    free(hp);
    if (e != cudaSuccess)
        return cuda_fail(err, e, "uploading the state");
    /* a new state restarts the predators, as shoal_sim_set_state does */
    st = reset_predators(s, err);
    if (!st)
        s->has_state = 1;
    return st;
}

extern "C" shoal_status shoal_gpu_sim_get_state(const shoal_gpu_sim *s, float *rows,
                                                shoal_error *err)
{
    size_t n = s->count;
    float4 *hp = (float4 *)malloc(n * sizeof(float4) * 2);
    if (!hp)
        return shoal_error_set(err, SHOAL_ERR_NOMEM, "out of memory staging %zu boids", n);
    float4 *hv = hp + n;
    cudaError_t e = cudaMemcpy(hp, s->pos[s->cur], n * sizeof(float4), cudaMemcpyDeviceToHost);
    if (e == cudaSuccess)
        e = cudaMemcpy(hv, s->vel[s->cur], n * sizeof(float4), cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) {
        free(hp);
        return cuda_fail(err, e, "downloading the state");
    }
    for (size_t i = 0; i < n; i++) {
        float *r = rows + i * 6;
        r[0] = hp[i].x;
        r[1] = hp[i].y;
        r[2] = hp[i].z;
        r[3] = hv[i].x;
        r[4] = hv[i].y;
        r[5] = hv[i].z;
    }
    free(hp);
    return SHOAL_OK;
}

/* The force kernel of each model, indexed by the enum (k_forces<gpu_model_NAME>). */
typedef void (*forces_fn)(const gpu_consts k_, uint32_t n, uint32_t step,
                          const float4 *__restrict__ spos, const float4 *__restrict__ svel,
                          const float4 *__restrict__ sdir, const uint32_t *__restrict__ cell_sorted,
                          const uint32_t *__restrict__ row_sorted,
                          const uint32_t *__restrict__ cell_start, float4 *__restrict__ out_pos,
                          float4 *__restrict__ out_vel, gpu_fault *fault,
                          const gpu_predators *__restrict__ pred);
#define FORCES_ENTRY(id, name) k_forces<gpu_model_##name>,
static const forces_fn forces_of[] = {SIM_MODELS(FORCES_ENTRY)};
#undef FORCES_ENTRY
SIM_MODEL_TABLE_CHECK(forces_of);

/* Launch the force kernel of the model. */
static void launch_forces(shoal_gpu_sim *s, uint32_t step, int dst)
{
    const uint32_t n = (uint32_t)s->count;
    const unsigned T = 128, B = blocks_for(n, T);
    forces_of[s->desc.model]<<<B, T>>>(s->k, n, step, s->spos, s->svel, s->sdir, s->cell_sorted,
                                       s->row_sorted, s->cell_start, s->pos[dst], s->vel[dst],
                                       s->fault, s->pred);
}

/* Enqueue one step: state in pos/vel[src] (row order) -> pos/vel[dst]. */
static shoal_status enqueue_step(shoal_gpu_sim *s, uint32_t step, int src, int dst,
                                 shoal_error *err)
{
    const uint32_t n = (uint32_t)s->count;
    const size_t cells = (size_t)s->g.cell_count;
    const bool targets = s->k.mc.target_count > 0;
    const bool dirs = model_dirs(s->desc.model);
    const bool atomic = s->order == SHOAL_GPU_ORDER_ATOMIC;
    const unsigned T = 256, B = blocks_for(n, T);

    /* this step's index (the key of a model's noise) and its targets where the model draws
     * them (a function of seed and simulated time), by the CPU's own functions. Each launch
     * below copies s->k as it is made, so every step's kernels see that step's. */
    double t = s->desc.t0_s + (double)(s->steps_done + step) * s->desc.dt_s;
    s->k.mc.step = sim_step_index(t, s->desc.dt_s);
    if (targets)
        sim_targets(&s->desc.params, s->k.mc.target_count, s->desc.seed, t, &s->k.mc.targets[0][0]);
    CK(cudaMemsetAsync(s->cell_count, 0, (cells + 1) * sizeof(uint32_t), 0), "clearing counts");
    if (atomic)
        k_assign<true><<<B, T>>>(s->k, s->pos[src], n, s->cell_of, s->local_of, s->cell_count);
    else
        k_assign<false><<<B, T>>>(s->k, s->pos[src], n, s->cell_of, s->local_of, s->cell_count);
    CK(cudaGetLastError(), "k_assign");
    size_t tb = s->temp_bytes;
    CK(cub::DeviceScan::ExclusiveSum(s->temp, tb, s->cell_count, s->cell_start, (int)(cells + 1),
                                     0),
       "scanning cell counts");
    if (atomic) {
        if (dirs)
            k_scatter_atomic<true><<<B, T>>>(n, s->cell_of, s->local_of, s->cell_start, s->pos[src],
                                             s->vel[src], s->spos, s->svel, s->sdir, s->cell_sorted,
                                             s->row_sorted);
        else
            k_scatter_atomic<false><<<B, T>>>(n, s->cell_of, s->local_of, s->cell_start,
                                              s->pos[src], s->vel[src], s->spos, s->svel, s->sdir,
                                              s->cell_sorted, s->row_sorted);
        CK(cudaGetLastError(), "k_scatter_atomic");
    } else {
        tb = s->temp_bytes;
        /* Stable LSD radix sort of the cell keys; the values are the rows 0..N-1 in order,
         * so equal cells keep row order: (cell, row) order, the CPU's sorted order. */
        CK(cub::DeviceRadixSort::SortPairs(s->temp, tb, s->cell_of, s->cell_sorted, s->iota,
                                           s->row_sorted, (int)n, 0, s->end_bit, 0),
           "sorting by cell");
        if (dirs)
            k_gather<true>
                <<<B, T>>>(n, s->row_sorted, s->pos[src], s->vel[src], s->spos, s->svel, s->sdir);
        else
            k_gather<false>
                <<<B, T>>>(n, s->row_sorted, s->pos[src], s->vel[src], s->spos, s->svel, s->sdir);
        CK(cudaGetLastError(), "k_gather");
    }
    launch_forces(s, step, dst);
    CK(cudaGetLastError(), "k_forces");
    /* predators chase the start-of-step school (pos[src], spos), after the forces read
     * their start-of-step positions */
    if (s->desc.params.predator_count > 0) {
        const bool centre = s->desc.params.predator_chase >= 1.0f;
        if (centre)
            k_pred_centre<<<1, 1>>>(s->spos, n, step, s->fault, s->pred);
        else
            k_pred_nearest<<<B, T>>>(s->k, s->pos[src], n, step, s->fault, s->pred);
        CK(cudaGetLastError(), "predators");
        k_pred_move<<<1, 1>>>(s->k, s->pos[src], s->spos, step, s->fault, s->pred, centre ? 1 : 0);
        CK(cudaGetLastError(), "k_pred_move");
    }
    return SHOAL_OK;
}

extern "C" shoal_status shoal_gpu_sim_step(shoal_gpu_sim *s, int step_count, shoal_error *err)
{
    if (!s->has_state)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "step: the GPU simulation has no state yet "
                               "(shoal_gpu_sim_set_rows first)");
    if (step_count < 0)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "step: %d steps (expected >= 0)", step_count);
    if (step_count == 0)
        return SHOAL_OK;
    gpu_fault none = {FAULT_NONE, FAULT_NONE};
    CK(cudaMemcpy(s->fault, &none, sizeof none, cudaMemcpyHostToDevice), "resetting faults");
    CK(cudaEventRecord(s->ev0, 0), "cudaEventRecord");
    const int cur0 = s->cur;
    int cur = cur0;
    for (int k = 0; k < step_count; k++) {
        shoal_status st = enqueue_step(s, (uint32_t)k, cur, cur ^ 1, err);
        if (st)
            return st;
        cur ^= 1;
    }
    CK(cudaEventRecord(s->ev1, 0), "cudaEventRecord");
    gpu_fault f;
    CK(cudaMemcpy(&f, s->fault, sizeof f, cudaMemcpyDeviceToHost), "reading faults");
    CK(cudaDeviceSynchronize(), "running the steps");
    float ms = 0.0f;
    CK(cudaEventElapsedTime(&ms, s->ev0, s->ev1), "cudaEventElapsedTime");
    s->stats.calls++;
    s->stats.total_ms += ms;
    s->stats.last_ms = ms;
    if (f.step != FAULT_NONE) {
        /* Steps 0 .. f.step-1 completed; the input of step f.step is the buffer it read. */
        s->cur = cur0 ^ (int)(f.step & 1u);
        s->steps_done += f.step;
        s->stats.steps += f.step;
        s->stats.last_steps = f.step;
        return shoal_error_set(err, SHOAL_ERR_NONFINITE,
                               "non-finite value in boid %u (input row) at step %llu "
                               "(t = %.6f s); state left as before that step",
                               f.row, (unsigned long long)s->steps_done + 1, shoal_gpu_sim_time(s));
    }
    s->cur = cur;
    s->steps_done += (uint64_t)step_count;
    s->stats.steps += (uint64_t)step_count;
    s->stats.last_steps = (uint64_t)step_count;
    return SHOAL_OK;
}

extern "C" double shoal_gpu_sim_time(const shoal_gpu_sim *s)
{
    return s->desc.t0_s + (double)s->steps_done * s->desc.dt_s;
}

extern "C" size_t shoal_gpu_sim_count(const shoal_gpu_sim *s) { return s->count; }

extern "C" const char *shoal_gpu_sim_device_name(const shoal_gpu_sim *s) { return s->device_name; }

extern "C" shoal_gpu_stats shoal_gpu_sim_get_stats(const shoal_gpu_sim *s) { return s->stats; }
extern "C" shoal_gpu_stats shoal_gpu_sim_stats(const shoal_gpu_sim *s) { return s->stats; }

/* The field `f` (host, a CPU build) to the device, replacing what was there; none when f
 * has no vectors. */
static shoal_status upload_field(shoal_gpu_sim *s, const field *f, shoal_error *err)
{
    cudaFree(s->fvec);
    s->fvec = NULL;
    s->k.field_on = 0;
    memset(&s->k.fld, 0, sizeof s->k.fld);
    if (!f->vec)
        return SHOAL_OK;
    size_t floats = 3 * (size_t)f->dims[0] * (size_t)f->dims[1] * (size_t)f->dims[2];
    CK(cudaMalloc(&s->fvec, floats * sizeof(float)), "allocating the obstacle field");
    CK(cudaMemcpy(s->fvec, f->vec, floats * sizeof(float), cudaMemcpyHostToDevice),
       "uploading the obstacle field");
    s->k.fld = *f;
    s->k.fld.vec = s->fvec;
    s->k.field_on = 1;
    return SHOAL_OK;
}

extern "C" shoal_status shoal_gpu_sim_set_obstacles(shoal_gpu_sim *s, const shoal_obstacles *o,
                                                    shoal_error *err)
{
    if (!s)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "shoal_gpu_sim_set_obstacles: sim is NULL");
    /* the meshes and the host field first (nothing changes if that fails), then the device */
    shoal_status st = obstacles_take(s->obs, &s->obs_count, &s->hfld, s->desc.params.field_cell,
                                     s->desc.params.field_margin, o, err);
    if (st)
        return st;
    s->field_from_cpu = 0;
    return upload_field(s, &s->hfld, err);
}

extern "C" shoal_status shoal_gpu_sim_copy_obstacles(shoal_gpu_sim *s, const shoal_sim *src,
                                                     shoal_error *err)
{
    if (!s || !src)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "shoal_gpu_sim_copy_obstacles: %s is NULL",
                               s ? "src" : "sim");
    /* the CPU sim's field as built: no meshes of our own any more */
    obstacles_take(s->obs, &s->obs_count, &s->hfld, 1.0f, 0.0f, NULL, NULL);
    s->field_from_cpu = src->fld.vec != NULL;
    return upload_field(s, &src->fld, err);
}

/* The grid tables for `g` (more cells than allocated: larger tables, the sort's scratch
 * sized again). */
static shoal_status grid_resize(shoal_gpu_sim *s, const grid *g, shoal_error *err)
{
    const size_t cells = (size_t)g->cell_count;
    int bits = 1;
    while (bits < 32 && (((uint64_t)1 << bits) < (uint64_t)cells))
        bits++;
    const int grow = g->cell_count > s->g.cell_count;
    uint32_t *count = s->cell_count, *start = s->cell_start;
    void *temp = NULL;
    size_t sort_bytes = 0, scan_bytes = 0;
    cudaError_t e = cudaSuccess;
    if (grow) {
        count = start = NULL;
        e = cudaMalloc(&count, (cells + 1) * sizeof(uint32_t));
        if (e == cudaSuccess)
            e = cudaMalloc(&start, (cells + 1) * sizeof(uint32_t));
    }
    if (e == cudaSuccess)
        e = cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, s->cell_of, s->cell_sorted,
                                            s->iota, s->row_sorted, (int)s->count, 0, bits);
    if (e == cudaSuccess)
        e = cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, count, start, (int)(cells + 1));
    size_t tb = sort_bytes > scan_bytes ? sort_bytes : scan_bytes;
    if (e == cudaSuccess && tb > s->temp_bytes)
        e = cudaMalloc(&temp, tb);
    if (e != cudaSuccess) {
        if (grow) {
            cudaFree(count);
            cudaFree(start);
        }
        cudaFree(temp);
        return cuda_fail(err, e, "laying out the grid again");
    }
    if (grow) {
        cudaFree(s->cell_count);
        cudaFree(s->cell_start);
        s->cell_count = count;
        s->cell_start = start;
    }
    if (temp) {
        cudaFree(s->temp);
        s->temp = temp;
        s->temp_bytes = tb;
    }
    s->end_bit = bits;
    s->g = *g;
    return SHOAL_OK;
}

extern "C" shoal_status shoal_gpu_sim_set_params(shoal_gpu_sim *s, const shoal_params *params,
                                                 shoal_error *err)
{
    if (!s || !params)
        return shoal_error_set(err, SHOAL_ERR_INPUT, "shoal_gpu_sim_set_params: %s is NULL",
                               s ? "params" : "sim");
    shoal_status st = shoal_params_validate(s->desc.model, params, err);
    if (st)
        return st;
    const shoal_params *old = &s->desc.params;
    int field_changed =
        params->field_cell != old->field_cell || params->field_margin != old->field_margin;
    if (field_changed && s->field_from_cpu)
        return shoal_error_set(err, SHOAL_ERR_INPUT,
                               "field_cell / field_margin changed, and the obstacle field was "
                               "copied from a CPU simulation (shoal_gpu_sim_copy_obstacles): "
                               "change that one's parameters and copy it again, or lend the "
                               "meshes (shoal_gpu_sim_set_obstacles)");
    /* as shoal_sim_set_params: the field first (a field too large leaves the sim as it was),
     * then the grid when the radius changes (grid neighbours only), then the rest */
    field nf;
    memset(&nf, 0, sizeof nf);
    if (field_changed && s->obs_count &&
        (st =
             field_build(&nf, s->obs, s->obs_count, params->field_cell, params->field_margin, err)))
        return st;
    float r_old = shoal_params_interaction_radius(s->desc.model, old);
    float r_new = shoal_params_interaction_radius(s->desc.model, params);
    if (r_new != r_old && s->desc.neighbors == SHOAL_NEIGHBORS_GRID) {
        grid g;
        grid_setup(&g, s->desc.model, params, s->desc.neighbors, s->count);
        if ((st = grid_resize(s, &g, err))) {
            field_free(&nf);
            return st;
        }
    }
    if (nf.vec || (field_changed && s->obs_count)) {
        nf.builds = s->hfld.builds + 1;
        field_free(&s->hfld);
        s->hfld = nf;
        if ((st = upload_field(s, &s->hfld, err)))
            return st;
    }
    int reset = params->predator_count != old->predator_count;
    s->desc.params = *params;
    fill_consts(s);
    return reset ? reset_predators(s, err) : SHOAL_OK;
}

extern "C" size_t shoal_gpu_sim_predators(const shoal_gpu_sim *s, float *pos, float *vel,
                                          size_t max)
{
    size_t n = (size_t)s->desc.params.predator_count;
    gpu_predators h;
    if (n == 0 || cudaMemcpy(&h, s->pred, sizeof h, cudaMemcpyDeviceToHost) != cudaSuccess)
        return 0;
    for (size_t k = 0; k < n && k < max; k++) {
        if (pos)
            memcpy(pos + 3 * k, h.p[k], 3 * sizeof(float));
        if (vel)
            memcpy(vel + 3 * k, h.v[k], 3 * sizeof(float));
    }
    return n;
}
