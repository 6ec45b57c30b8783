/* SPDX-License-Identifier: MIT */
/* The CUDA backend: a shoal_gpu_sim's device memory, its step (assign cells -> scan ->
 * sort -> gather -> forces) and the state in and out. The rules themselves are in
 * gpu_models.h (transcribed from src/sim/forces_kernel.h); the grid geometry and the
 * heading targets come from the CPU's own functions (grid_setup, sim_heading_targets),
 * called here on the host, so the GPU cannot drift from them.
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
 *              and for heading dir_j = v_j / |v_j| (the CPU computes it per candidate; the
 *              same function of v_j, so the same bits, computed once);
 *   k_forces   one thread per sorted slot: the CPU's candidate order (z-1..z+1 outer,
 *              y-1..y+1 inner, the contiguous slot range of x-1..x+1 of that grid row),
 *              the model's finish and integration, result written to row order.
 * Faults: the first non-finite result of a step records its lowest input row (atomicMin)
 * and the step; the forces of later steps in the batch do nothing, so the buffer holding
 * the failing step's input keeps the state from before it, as on the CPU. */

/* core/parallel.h (via sim_internal.h) uses C11's _Alignas; this file is C++. */
#define _Alignas(x) alignas(x)
extern "C" {
#include "shoal/gpu.h"
#include "shoal/io.h"
#include "sim/sim_internal.h"
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
    gpu_consts k; /* host copy of what c_k holds (uploaded when it changes) */
    int k_uploaded;
    uint64_t steps_done;
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

extern "C" shoal_status shoal_gpu_order_parse(const char *name, shoal_gpu_order *order,
                                              shoal_error *err)
{
    if (name && strcmp(name, "stable") == 0) {
        *order = SHOAL_GPU_ORDER_STABLE;
        return SHOAL_OK;
    }
    if (name && strcmp(name, "atomic") == 0) {
        *order = SHOAL_GPU_ORDER_ATOMIC;
        return SHOAL_OK;
    }
    return shoal_error_set(err, SHOAL_ERR_INPUT,
                           "unknown GPU order '%s' (expected stable or atomic)", name ? name : "");
}

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

/* grid.c's grid_coord: clamp in float (NaN -> 0) before forming the index. */
static __device__ __forceinline__ int32_t d_grid_coord(float v, float origin, float inv, int32_t n)
{
    float f = (v - origin) * inv;
    if (!(f >= 0.0f))
        return 0;
    if (f >= (float)(n - 1))
        return n - 1;
    return (int32_t)f;
}

/* Thread i = input row i: its cell, and the cell's count (atomics: the counts are exact
 * integers whatever the order; with ATOMIC the returned rank is the seed 001 order). */
template <bool ATOMIC>
__global__ void __launch_bounds__(256)
    k_assign(const float4 *__restrict__ pos, uint32_t n, uint32_t *__restrict__ cell_of,
             uint32_t *__restrict__ local_of, uint32_t *__restrict__ counts)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float4 p = pos[i];
    int32_t cx = d_grid_coord(p.x, c_k.origin[0], c_k.inv_cell, c_k.dims[0]);
    int32_t cy = d_grid_coord(p.y, c_k.origin[1], c_k.inv_cell, c_k.dims[1]);
    int32_t cz = d_grid_coord(p.z, c_k.origin[2], c_k.inv_cell, c_k.dims[2]);
    uint32_t c = (uint32_t)(cx + c_k.dims[0] * (cy + c_k.dims[1] * cz));
    cell_of[i] = c;
    uint32_t r = atomicAdd(&counts[c], 1u);
    if (ATOMIC)
        local_of[i] = r;
}

/* dir_j as forces_kernel.h group_heading computes it for a candidate. */
static __device__ __forceinline__ float4 heading_dir(float4 v)
{
    float vl = fsqrt((v.x * v.x + v.y * v.y) + v.z * v.z);
    float4 d = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (vl > 0.0f) {
        d.x = fdiv(v.x, vl);
        d.y = fdiv(v.y, vl);
        d.z = fdiv(v.z, vl);
    }
    return d;
}

/* STABLE: thread i = sorted slot i; row_sorted[i] says which row lands there. */
template <bool HEADING>
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
    if (HEADING)
        sdir[i] = heading_dir(v);
}

/* ATOMIC: thread i = input row i; its slot is its cell's start plus its arrival rank. */
template <bool HEADING>
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
    if (HEADING)
        sdir[slot] = heading_dir(v);
    cell_sorted[slot] = c;
    row_sorted[slot] = i;
}

static __device__ __forceinline__ f3 f3_of(float4 a) { return mk3(a.x, a.y, a.z); }

/* The force kernel. Lane (thread) i = sorted slot i, one boid; consecutive threads are
 * consecutive boids of one cell, so a warp mostly walks the same candidates (broadcast
 * loads). The candidate order is the scalar CPU kernel's: for zz = z-1..z+1, yy = y-1..y+1
 * (each skipped when outside the grid), the slots of cells max(x-1, 0)..min(x+1, nx-1)
 * of grid row (yy, zz), which are contiguous in sorted order; inside, slot order (in
 * STABLE order: input row order). Must equal forces_kernel.h at W = 1 bit for bit. */
template <class M, bool HEADING>
__global__ void __launch_bounds__(128)
    k_forces(uint32_t n, uint32_t step, const float4 *__restrict__ spos,
             const float4 *__restrict__ svel, const float4 *__restrict__ sdir,
             const uint32_t *__restrict__ cell_sorted, const uint32_t *__restrict__ row_sorted,
             const uint32_t *__restrict__ cell_start, float4 *__restrict__ out_pos,
             float4 *__restrict__ out_vel, gpu_fault *fault)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    /* A fault in an earlier step of this batch: leave that step's input untouched. */
    if (*(volatile uint32_t *)&fault->step < step)
        return;
    const int32_t nx = c_k.dims[0], ny = c_k.dims[1], nz = c_k.dims[2];
    uint32_t c = cell_sorted[i];
    int32_t cx = (int32_t)(c % (uint32_t)nx);
    int32_t cy = (int32_t)((c / (uint32_t)nx) % (uint32_t)ny);
    int32_t cz = (int32_t)(c / ((uint32_t)nx * (uint32_t)ny));
    int32_t x_lo = cx - 1 < 0 ? 0 : cx - 1;
    int32_t x_hi = cx + 1 > nx - 1 ? nx - 1 : cx + 1;
    f3 p = f3_of(spos[i]), v = f3_of(svel[i]);
    M m;
    m.begin(p, v);
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
                float4 dj = HEADING ? __ldg(&sdir[j]) : make_float4(0.f, 0.f, 0.f, 0.f);
                m.pair(p, f3_of(pj), f3_of(vj), f3_of(dj));
            }
        }
    }
    m.finish(p, v);
    uint32_t row = row_sorted[i];
    bool ok = isfinite(p.x) && isfinite(p.y) && isfinite(p.z) && isfinite(v.x) && isfinite(v.y) &&
              isfinite(v.z);
    if (!ok) {
        atomicMin(&fault->row, row);
        atomicMin(&fault->step, step);
    }
    out_pos[row] = make_float4(p.x, p.y, p.z, 0.0f);
    out_vel[row] = make_float4(v.x, v.y, v.z, 0.0f);
}

/* ---- host side ---------------------------------------------------------------------- */

static unsigned blocks_for(size_t n, unsigned threads)
{
    return (unsigned)((n + threads - 1) / threads);
}

/* model_consts of sim.c's prepare_consts, with the same host arithmetic. */
static void fill_consts(shoal_gpu_sim *s)
{
    const shoal_params *p = &s->desc.params;
    gpu_consts *k = &s->k;
    k->prm = *p;
    for (int c = 0; c < 3; c++) {
        k->origin[c] = s->g.origin[c];
        k->dims[c] = s->g.dims[c];
    }
    k->inv_cell = s->g.inv_cell;
    k->dt = (float)s->desc.dt_s;
    k->sep_r2 = p->sep_radius * p->sep_radius;
    k->ali_r2 = p->ali_radius * p->ali_radius;
    k->coh_r2 = p->coh_radius * p->coh_radius;
    float mx = k->sep_r2 > k->ali_r2 ? k->sep_r2 : k->ali_r2;
    k->max_r2 = k->coh_r2 > mx ? k->coh_r2 : mx;
    k->r = k->r2 = 0.0f;
    if (s->desc.model == SHOAL_MODEL_HEADING) {
        k->r = p->neighbor_radius;
        k->r2 = p->neighbor_radius * p->neighbor_radius;
        k->target_count = (int32_t)p->target_count;
    } else if (s->desc.model == SHOAL_MODEL_CLASSIC) {
        k->r = p->fov;
        k->r2 = p->fov * p->fov;
    }
    k->cos_coh = cosf(p->coh_angle);
    k->cos_sep = cosf(p->sep_angle);
    k->cos_ali = cosf(p->ali_angle);
    float m2 = p->coh_dist2 > p->sep_dist2 ? p->coh_dist2 : p->sep_dist2;
    k->max2 = p->ali_dist2 > m2 ? p->ali_dist2 : m2;
}

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
    if (s->desc.model == SHOAL_MODEL_HEADING)
        CK(cudaMalloc(&s->sdir, n * sizeof(float4)), "allocating directions");
    CK(cudaMalloc(&s->fault, sizeof(gpu_fault)), "allocating the fault record");

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
    if (d->params.predator_count > 0)
        return shoal_error_set(err, SHOAL_ERR_UNSUPPORTED,
                               "the CUDA backend has no predators (predator_count %d): use "
                               "--backend cpu",
                               (int)d->params.predator_count);
    return shoal_params_validate(d->model, &d->params, err);
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
    if ((st = create_impl(s, err))) {
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
    return SHOAL_OK;
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

/* Launch the force kernel of the model. */
static void launch_forces(shoal_gpu_sim *s, uint32_t step, int src, int dst)
{
    const uint32_t n = (uint32_t)s->count;
    const unsigned T = 128, B = blocks_for(n, T);
#define FORCES_ARGS                                                                                \
    n, step, s->spos, s->svel, s->sdir, s->cell_sorted, s->row_sorted, s->cell_start, s->pos[dst], \
        s->vel[dst], s->fault
    (void)src;
    switch (s->desc.model) {
    case SHOAL_MODEL_STEER:
        k_forces<model_steer_average<false>, false><<<B, T>>>(FORCES_ARGS);
        break;
    case SHOAL_MODEL_AVERAGE:
        k_forces<model_steer_average<true>, false><<<B, T>>>(FORCES_ARGS);
        break;
    case SHOAL_MODEL_HEADING:
        k_forces<model_heading, true><<<B, T>>>(FORCES_ARGS);
        break;
    case SHOAL_MODEL_CLASSIC:
        k_forces<model_classic, false><<<B, T>>>(FORCES_ARGS);
        break;
    default:
        k_forces<model_fov, false><<<B, T>>>(FORCES_ARGS);
        break;
    }
#undef FORCES_ARGS
}

/* Enqueue one step: state in pos/vel[src] (row order) -> pos/vel[dst]. */
static shoal_status enqueue_step(shoal_gpu_sim *s, uint32_t step, int src, int dst,
                                 shoal_error *err)
{
    const uint32_t n = (uint32_t)s->count;
    const size_t cells = (size_t)s->g.cell_count;
    const bool heading = s->desc.model == SHOAL_MODEL_HEADING;
    const bool atomic = s->order == SHOAL_GPU_ORDER_ATOMIC;
    const unsigned T = 256, B = blocks_for(n, T);

    /* heading: this step's targets (a function of seed and simulated time), by the CPU's
     * own function; uploaded only when they change (once per target period). */
    if (heading) {
        double t = s->desc.t0_s + (double)(s->steps_done + step) * s->desc.dt_s;
        float xyz[SHOAL_MAX_TARGETS * 3];
        sim_heading_targets(&s->desc.params, s->desc.seed, t, xyz);
        size_t bytes = (size_t)s->k.target_count * 3 * sizeof(float);
        if (!s->k_uploaded || memcmp(xyz, s->k.targets, bytes) != 0) {
            memcpy(s->k.targets, xyz, bytes);
            s->k_uploaded = 0;
        }
    }
    if (!s->k_uploaded) {
        CK(cudaMemcpyToSymbolAsync(c_k, &s->k, sizeof s->k, 0, cudaMemcpyHostToDevice, 0),
           "uploading the step constants");
        s->k_uploaded = 1;
    }
    CK(cudaMemsetAsync(s->cell_count, 0, (cells + 1) * sizeof(uint32_t), 0), "clearing counts");
    if (atomic)
        k_assign<true><<<B, T>>>(s->pos[src], n, s->cell_of, s->local_of, s->cell_count);
    else
        k_assign<false><<<B, T>>>(s->pos[src], n, s->cell_of, s->local_of, s->cell_count);
    CK(cudaGetLastError(), "k_assign");
    size_t tb = s->temp_bytes;
    CK(cub::DeviceScan::ExclusiveSum(s->temp, tb, s->cell_count, s->cell_start, (int)(cells + 1),
                                     0),
       "scanning cell counts");
    if (atomic) {
        if (heading)
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
        if (heading)
            k_gather<true>
                <<<B, T>>>(n, s->row_sorted, s->pos[src], s->vel[src], s->spos, s->svel, s->sdir);
        else
            k_gather<false>
                <<<B, T>>>(n, s->row_sorted, s->pos[src], s->vel[src], s->spos, s->svel, s->sdir);
        CK(cudaGetLastError(), "k_gather");
    }
    launch_forces(s, step, src, dst);
    CK(cudaGetLastError(), "k_forces");
    return SHOAL_OK;
}

extern "C" shoal_status shoal_gpu_sim_step(shoal_gpu_sim *s, int step_count, shoal_error *err)
{
    if (step_count <= 0)
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

extern "C" shoal_gpu_stats shoal_gpu_sim_stats(const shoal_gpu_sim *s) { return s->stats; }
