/* SPDX-License-Identifier: MIT */
/* Checkpoint files (layout in shoal/io.h): a fixed little-endian header, the parameter
 * struct, the state beyond the boids (shoal_sim_checkpoint) and the rows. The reader checks
 * the size, every count and every value before it hands anything back, so a damaged or
 * hostile file is one error line, never a crash. Owns no state. */
#include "io/rows_layout.h"
#include "core/check.h"
#include "shoal/io.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CKPT_MAGIC "SHOALCKP"
#define CKPT_VERSION 1u
/* the float parameters: shoal_params up to its defaults_of tag (not stored; set on read) */
#define CKPT_PARAM_FLOATS (offsetof(shoal_params, defaults_of) / sizeof(float))
/* magic, version, param floats, model, predator count, boids, seed, steps, dt, t0 */
#define CKPT_HEADER (8 + 4 * 4 + 8 * 5)
#define CKPT_EXTRA                                                                                 \
    (CKPT_PARAM_FLOATS * 4 + (size_t)SHOAL_MAX_PREDATORS * 24 + SHOAL_MAX_TARGETS +                \
     (size_t)SHOAL_MAX_TARGETS * 12)

_Static_assert(offsetof(shoal_params, defaults_of) % sizeof(float) == 0,
               "shoal_params is floats up to its tag");

shoal_status rows_layout_checkpoint(rows_layout *l, const shoal_sim_desc *d,
                                    const shoal_sim_checkpoint *ck, size_t n, const char *name,
                                    shoal_error *err)
{
    memset(l, 0, sizeof *l);
    const size_t head = CKPT_HEADER + CKPT_EXTRA;
    l->bytes = malloc(head);
    if (!l->bytes)
        return shoal_error_set(err, SHOAL_ERR_NOMEM, "%s: out of memory for its header", name);
    uint32_t u32[4] = {CKPT_VERSION, (uint32_t)CKPT_PARAM_FLOATS, (uint32_t)d->model,
                       (uint32_t)ck->predator_count};
    uint64_t u64[3] = {(uint64_t)n, d->seed, ck->steps_done};
    double f64[2] = {d->dt_s, d->t0_s};
    unsigned char *p = l->bytes;
#define CKPT_PUT(src, size)                                                                        \
    do {                                                                                           \
        memcpy(p, (src), (size));                                                                  \
        p += (size);                                                                               \
    } while (0)
    CKPT_PUT(CKPT_MAGIC, 8);
    CKPT_PUT(u32, sizeof u32);
    CKPT_PUT(u64, sizeof u64);
    CKPT_PUT(f64, sizeof f64);
    CKPT_PUT(&d->params, CKPT_PARAM_FLOATS * sizeof(float)); /* the floats, not the tag */
    CKPT_PUT(ck->predator_pos, sizeof ck->predator_pos);
    CKPT_PUT(ck->predator_vel, sizeof ck->predator_vel);
    CKPT_PUT(ck->target_pinned, sizeof ck->target_pinned);
    CKPT_PUT(ck->target_pin, sizeof ck->target_pin);
#undef CKPT_PUT
    l->count = n;
    l->piece_count = 1;
    l->piece[0] = (rows_piece){.offset = 0, .size = (size_t)(p - l->bytes), .at = 0};
    l->section_count = 1;
    l->section[0] = (rows_section){.offset = l->piece[0].size, .kind = ROWS_STATE};
    l->total_bytes = l->piece[0].size + (uint64_t)n * 24;
    return SHOAL_OK;
}

shoal_status shoal_io_checkpoint_write(const char *path, const shoal_sim *sim, shoal_error *err)
{
    CHECK_ARG(path, "path", err);
    CHECK_ARG(sim, "sim", err);
    const shoal_sim_desc *d = shoal_sim_get_desc(sim);
    size_t n = shoal_sim_count(sim);
    shoal_sim_checkpoint ck;
    shoal_sim_get_checkpoint(sim, &ck);
    float *rows = malloc(n * 6 * sizeof(float));
    if (!rows)
        return shoal_error_set(err, SHOAL_ERR_NOMEM, "%s: out of memory for %zu boids", path, n);
    shoal_sim_get_state(sim, rows);
    rows_layout l;
    shoal_status st = rows_layout_checkpoint(&l, d, &ck, n, path, err);
    shoal_atomic_file af;
    if (!st)
        st = shoal_io_atomic_open(&af, path, err);
    if (st) {
        rows_layout_free(&l);
        free(rows);
        return st;
    }
    int bad = rows_layout_write(&l, rows, af.file);
    int e = errno;
    rows_layout_free(&l);
    free(rows);
    if (bad) {
        shoal_io_atomic_abort(&af);
        return shoal_error_set(err, SHOAL_ERR_IO, "%s: write failed: %s", path, strerror(e));
    }
    return shoal_io_atomic_commit(&af, err);
}

/* The state beyond the boids, checked here so that every value a resume would refuse is
 * refused naming the file (shoal_sim_set_checkpoint checks the same for API callers). */
static shoal_status checkpoint_values(const shoal_sim_checkpoint *ck, shoal_error *err)
{
    for (int k = 0; k < ck->predator_count; k++)
        for (int c = 0; c < 3; c++)
            if (!isfinite(ck->predator_pos[k][c]) || !isfinite(ck->predator_vel[k][c]))
                return shoal_error_set(err, SHOAL_ERR_INPUT, "predator %d is not finite", k);
    for (int k = 0; k < SHOAL_MAX_TARGETS; k++)
        for (int c = 0; c < 3; c++)
            if (ck->target_pinned[k] > 1 || !isfinite(ck->target_pin[k][c]))
                return shoal_error_set(err, SHOAL_ERR_INPUT, "heading target %d is not valid", k);
    return SHOAL_OK;
}

static shoal_status bad(shoal_error *err, const char *path, const char *what)
{
    return shoal_error_set(err, SHOAL_ERR_INPUT, "%s: not a shoal checkpoint: %s", path, what);
}

shoal_status shoal_io_checkpoint_read(const char *path, shoal_sim_desc *desc, float **rows_out,
                                      shoal_sim_checkpoint *ck, shoal_error *err)
{
    CHECK_ARG(rows_out, "rows_out", err);
    *rows_out = NULL;
    CHECK_ARG(path, "path", err);
    CHECK_ARG(desc, "desc", err);
    CHECK_ARG(ck, "ck", err);
    FILE *f = fopen(path, "rb");
    if (!f)
        return shoal_error_set(err, SHOAL_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    unsigned char h[CKPT_HEADER];
    if (fread(h, 1, sizeof h, f) != sizeof h || memcmp(h, CKPT_MAGIC, 8) != 0) {
        fclose(f);
        return bad(err, path, "no SHOALCKP header");
    }
    uint32_t u32[4];
    uint64_t u64[3];
    double f64[2];
    memcpy(u32, h + 8, sizeof u32);
    memcpy(u64, h + 24, sizeof u64);
    memcpy(f64, h + 48, sizeof f64);
    shoal_status st = SHOAL_OK;
    if (u32[0] != CKPT_VERSION)
        st = bad(err, path, "unknown version");
    else if (u32[1] != CKPT_PARAM_FLOATS)
        st = shoal_error_set(err, SHOAL_ERR_INPUT,
                             "%s: checkpoint of another shoal version (%u parameter floats, this "
                             "one has %u)",
                             path, (unsigned)u32[1], (unsigned)CKPT_PARAM_FLOATS);
    else if (u32[2] >= SHOAL_MODEL_COUNT)
        st = bad(err, path, "unknown model");
    else if (u32[3] > SHOAL_MAX_PREDATORS)
        st = bad(err, path, "predator count out of range");
    else if (u64[0] == 0 || u64[0] > ((uint64_t)1 << 32))
        st = bad(err, path, "boid count out of range");
    else if (!(f64[0] > 0) || !isfinite(f64[0]) || f64[0] > 1e6 || !isfinite(f64[1]) ||
             fabs(f64[1]) > 1e15)
        st = bad(err, path, "dt or t0 out of range"); /* shoal_sim_create's ranges */
    else if (u64[2] > ((uint64_t)1 << 53))
        st = bad(err, path, "step count out of range"); /* shoal_sim_set_checkpoint's */
    if (st) {
        fclose(f);
        return st;
    }
    size_t n = (size_t)u64[0];
    /* the file must hold exactly the rest */
    long here = ftell(f);
    if (here < 0 || fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return shoal_error_set(err, SHOAL_ERR_IO, "%s: cannot seek: %s", path, strerror(errno));
    }
    long end = ftell(f);
    if (end < 0 || (uint64_t)(end - here) != CKPT_EXTRA + (uint64_t)n * 24 ||
        fseek(f, here, SEEK_SET) != 0) {
        fclose(f);
        return bad(err, path, "its size does not match its boid count");
    }
    shoal_sim_desc d = shoal_sim_desc_default();
    d.model = (shoal_model)u32[2];
    d.boid_count = n;
    d.seed = u64[1];
    d.dt_s = f64[0];
    d.t0_s = f64[1];
    memset(ck, 0, sizeof *ck);
    ck->predator_count = (int32_t)u32[3];
    ck->steps_done = u64[2];
    float *rows = malloc(n * 6 * sizeof(float));
    if (!rows) {
        fclose(f);
        return shoal_error_set(err, SHOAL_ERR_NOMEM, "%s: out of memory for %zu boids", path, n);
    }
    d.params.defaults_of = (int32_t)d.model + 1; /* a whole parameter set of that model */
    int ok = fread(&d.params, CKPT_PARAM_FLOATS * sizeof(float), 1, f) == 1 &&
             fread(ck->predator_pos, sizeof ck->predator_pos, 1, f) == 1 &&
             fread(ck->predator_vel, sizeof ck->predator_vel, 1, f) == 1 &&
             fread(ck->target_pinned, sizeof ck->target_pinned, 1, f) == 1 &&
             fread(ck->target_pin, sizeof ck->target_pin, 1, f) == 1 &&
             fread(rows, sizeof(float) * 6, n, f) == n;
    int rerr = ferror(f);
    fclose(f);
    if (!ok) {
        free(rows);
        return rerr ? shoal_error_set(err, SHOAL_ERR_IO, "%s: read error", path)
                    : bad(err, path, "truncated");
    }
    const float *pf = (const float *)&d.params;
    for (size_t k = 0; k < CKPT_PARAM_FLOATS; k++)
        if (!isfinite(pf[k])) {
            free(rows);
            return bad(err, path, "a parameter is not finite");
        }
    shoal_error pe;
    if ((int32_t)d.params.predator_count != ck->predator_count) {
        free(rows);
        return bad(err, path, "its predator count contradicts its parameters");
    }
    if (shoal_params_validate(d.model, &d.params, &pe) ||
        shoal_state_check_finite(rows, n, path, &pe) || checkpoint_values(ck, &pe)) {
        free(rows);
        return shoal_error_set(err, SHOAL_ERR_INPUT, "%s: bad checkpoint: %s", path, pe.message);
    }
    *desc = d;
    *rows_out = rows;
    return SHOAL_OK;
}
