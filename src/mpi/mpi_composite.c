/* SPDX-License-Identifier: MIT */
/* The depth composite of shoal render and run --headless under MPI (docs/ARCHITECTURE.md
 * "MPI", images): every rank drew its own fish with kept depth and instance ids; per pixel
 * the nearest fragment of any rank wins, at equal depth the lower id (the renderer's own
 * rule), so the image is the one-process image whatever the split. */
#include "mpi_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- what a rank drew, run-length encoded ------------------------------------------------ */

/* One drawn pixel: the renderer's kept depth and instance id, and its colour. */
typedef struct cfrag {
    float z;
    uint32_t id;
    uint32_t argb;
} cfrag;

/* A run of drawn pixels: pixel indices [start, start + len) of the image (y * width + x). */
typedef struct crun {
    uint32_t start, len;
} crun;

/* Drawn pixels in index order: runs and their fragments, one per pixel of each run. */
typedef struct rle {
    crun *r;
    size_t nr, cap_r;
    cfrag *f;
    size_t nf, cap_f;
} rle;

struct mpi_frame {
    rle mine, part, got, merged; /* scratch, kept between frames */
    uint32_t *col;               /* colours to gather */
    size_t cap_col;
    mpi_frame_stats st;
};

static int rle_reserve(rle *o, size_t nr, size_t nf)
{
    if (nr > o->cap_r) {
        size_t cap = nr + nr / 2 + 64;
        crun *p = realloc(o->r, cap * sizeof *p);
        if (!p)
            return 0;
        o->r = p;
        o->cap_r = cap;
    }
    if (nf > o->cap_f) {
        size_t cap = nf + nf / 2 + 256;
        cfrag *p = realloc(o->f, cap * sizeof *p);
        if (!p)
            return 0;
        o->f = p;
        o->cap_f = cap;
    }
    return 1;
}

static void rle_free(rle *o)
{
    free(o->r);
    free(o->f);
    memset(o, 0, sizeof *o);
}

/* Append k fragments for pixels [start, start + k) (room reserved by the caller). */
static void rle_push(rle *o, uint32_t start, const cfrag *f, size_t k)
{
    if (!k)
        return;
    if (o->nr && o->r[o->nr - 1].start + o->r[o->nr - 1].len == start)
        o->r[o->nr - 1].len += (uint32_t)k;
    else
        o->r[o->nr++] = (crun){start, (uint32_t)k};
    memcpy(o->f + o->nf, f, k * sizeof *f);
    o->nf += k;
}

/* The drawn pixels of the whole image (depth below 1: the renderer clears it to 1, and
 * nothing at 1 or beyond passes its depth test) into o. 0 when out of memory. */
static int rle_encode(rle *o, const float *z, const uint32_t *ids, const uint32_t *argb, size_t n)
{
    o->nr = o->nf = 0;
    size_t i = 0;
    while (i < n) {
        while (i < n && !(z[i] < 1.0f))
            i++;
        size_t s = i;
        while (i < n && z[i] < 1.0f)
            i++;
        if (i == s)
            break;
        if (!rle_reserve(o, o->nr + 1, o->nf + (i - s)))
            return 0;
        o->r[o->nr++] = (crun){(uint32_t)s, (uint32_t)(i - s)};
        for (size_t k = s; k < i; k++)
            o->f[o->nf++] = (cfrag){z[k], ids[k], argb[k]};
    }
    return 1;
}

/* The drawn pixels of the tiles a sparse renderer drew (drawn: tx x ty tiles of ts pixels;
 * the others hold nothing of this frame), in pixel index order: row by row, the segments of
 * that row's drawn tiles. 0 when out of memory. */
static int rle_encode_tiles(rle *o, const float *z, const uint32_t *ids, const uint32_t *argb,
                            int width, int height, const uint8_t *drawn, int tx, int ty, int ts)
{
    o->nr = o->nf = 0;
    for (int y = 0; y < height; y++) {
        const uint8_t *dr = drawn + (size_t)(y / ts < ty ? y / ts : ty - 1) * (size_t)tx;
        for (int t = 0; t < tx; t++) {
            if (!dr[t])
                continue;
            size_t row = (size_t)y * (size_t)width;
            int x0 = t * ts, x1 = x0 + ts < width ? x0 + ts : width;
            for (int x = x0; x < x1;) {
                while (x < x1 && !(z[row + (size_t)x] < 1.0f))
                    x++;
                int s = x;
                while (x < x1 && z[row + (size_t)x] < 1.0f)
                    x++;
                if (x == s)
                    break;
                if (!rle_reserve(o, o->nr + 1, o->nf + (size_t)(x - s)))
                    return 0;
                uint32_t start = (uint32_t)(row + (size_t)s), len = (uint32_t)(x - s);
                if (o->nr && o->r[o->nr - 1].start + o->r[o->nr - 1].len == start)
                    o->r[o->nr - 1].len += len; /* a run that goes on into the next tile */
                else
                    o->r[o->nr++] = (crun){start, len};
                for (int k = s; k < x; k++)
                    o->f[o->nf++] =
                        (cfrag){z[row + (size_t)k], ids[row + (size_t)k], argb[row + (size_t)k]};
            }
        }
    }
    return 1;
}

/* The pixels of a in [lo, hi) into o. 0 when out of memory. */
static int rle_slice(const rle *a, uint32_t lo, uint32_t hi, rle *o)
{
    o->nr = o->nf = 0;
    /* the first run that ends after lo */
    size_t L = 0, H = a->nr, f0 = 0;
    while (L < H) {
        size_t m = (L + H) / 2;
        if (a->r[m].start + a->r[m].len <= lo)
            L = m + 1;
        else
            H = m;
    }
    /* fragments before run L: runs are dense in f, so count them (prefix by runs) */
    for (size_t k = 0; k < L; k++)
        f0 += a->r[k].len;
    for (size_t k = L; k < a->nr && a->r[k].start < hi; k++) {
        uint32_t s = a->r[k].start, e = s + a->r[k].len;
        uint32_t cs = s > lo ? s : lo, ce = e < hi ? e : hi;
        if (!rle_reserve(o, o->nr + 1, o->nf + (ce - cs)))
            return 0;
        rle_push(o, cs, a->f + f0 + (cs - s), ce - cs);
        f0 += a->r[k].len;
    }
    return 1;
}

/* The renderer's depth rule between two ranks' pixels: nearer wins, at equal depth the
 * lower instance id (ids are global rows: distinct between ranks; equal fragments, such as
 * the predators every rank draws, are the same either way). A total order's minimum:
 * commutative and associative, so the shape of the exchange cannot change a bit. */
static inline cfrag frag_min(cfrag a, cfrag b)
{
    return (b.z < a.z || (b.z == a.z && b.id < a.id)) ? b : a;
}

/* o = a and b merged pixel by pixel (frag_min where both drew). 0 when out of memory. */
static int rle_merge(const rle *a, const rle *b, rle *o)
{
    o->nr = o->nf = 0;
    if (!rle_reserve(o, a->nr + b->nr, a->nf + b->nf))
        return 0;
    size_t ia = 0, ib = 0, fa = 0, fb = 0;
    uint32_t oa = 0, ob = 0; /* offsets into the current runs */
    while (ia < a->nr || ib < b->nr) {
        uint32_t pa = ia < a->nr ? a->r[ia].start + oa : UINT32_MAX;
        uint32_t pb = ib < b->nr ? b->r[ib].start + ob : UINT32_MAX;
        uint32_t ra = ia < a->nr ? a->r[ia].len - oa : 0, rb = ib < b->nr ? b->r[ib].len - ob : 0;
        uint32_t k;
        if (pa < pb) { /* a alone up to b's next pixel or a's run end */
            k = pb - pa < ra ? pb - pa : ra;
            rle_push(o, pa, a->f + fa, k);
            fa += k;
            oa += k;
        } else if (pb < pa) {
            k = pa - pb < rb ? pa - pb : rb;
            rle_push(o, pb, b->f + fb, k);
            fb += k;
            ob += k;
        } else { /* both drew: the nearer, pixel by pixel */
            k = ra < rb ? ra : rb;
            if (o->nr && o->r[o->nr - 1].start + o->r[o->nr - 1].len == pa)
                o->r[o->nr - 1].len += k;
            else
                o->r[o->nr++] = (crun){pa, k};
            for (uint32_t j = 0; j < k; j++)
                o->f[o->nf++] = frag_min(a->f[fa + j], b->f[fb + j]);
            fa += k;
            fb += k;
            oa += k;
            ob += k;
        }
        if (ia < a->nr && oa == a->r[ia].len) {
            ia++;
            oa = 0;
        }
        if (ib < b->nr && ob == b->r[ib].len) {
            ib++;
            ob = 0;
        }
    }
    return 1;
}

/* ---- moving runs between ranks --------------------------------------------------------- */

static MPI_Datatype frag_type(void)
{
    static MPI_Datatype t = MPI_DATATYPE_NULL;
    if (t == MPI_DATATYPE_NULL) {
        MPI_Type_contiguous((int)sizeof(cfrag), MPI_BYTE, &t);
        MPI_Type_commit(&t);
    }
    return t;
}

static MPI_Datatype run_type(void)
{
    static MPI_Datatype t = MPI_DATATYPE_NULL;
    if (t == MPI_DATATYPE_NULL) {
        MPI_Type_contiguous((int)sizeof(crun), MPI_BYTE, &t);
        MPI_Type_commit(&t);
    }
    return t;
}

static double ms_since(uint64_t t0) { return (double)(shoal_profile_now_ns() - t0) * 1e-6; }

/* Send `out` to `peer` and receive its runs into `in` (either peer may be MPI_PROC_NULL for
 * a one-way move). 0 when out of memory (the counts still travel, so the peer does not
 * wait; a rank out of memory receives nothing and the frame's outcome is agreed after). */
static int rle_exchange(mpi_frame *fr, const rle *out, int to, rle *in, int from)
{
    uint64_t t0 = shoal_profile_now_ns();
    uint64_t cnt_out[2] = {out ? out->nr : 0, out ? out->nf : 0}, cnt_in[2] = {0, 0};
    MPI_Sendrecv(cnt_out, 2, MPI_UINT64_T, to, 800, cnt_in, 2, MPI_UINT64_T, from, 800,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int ok = 1;
    if (in) {
        in->nr = in->nf = 0;
        ok = rle_reserve(in, (size_t)cnt_in[0], (size_t)cnt_in[1]);
    }
    /* a receiver out of memory says so, and the sender then sends nothing */
    int my_ok = ok, peer_ok = 1;
    MPI_Sendrecv(&my_ok, 1, MPI_INT, from, 801, &peer_ok, 1, MPI_INT, to, 801, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    int send = to != MPI_PROC_NULL && peer_ok, recv = from != MPI_PROC_NULL && ok;
    MPI_Sendrecv(send ? out->r : NULL, send ? (int)cnt_out[0] : 0, run_type(), to, 802,
                 recv ? in->r : NULL, recv ? (int)cnt_in[0] : 0, run_type(), from, 802,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(send ? out->f : NULL, send ? (int)cnt_out[1] : 0, frag_type(), to, 803,
                 recv ? in->f : NULL, recv ? (int)cnt_in[1] : 0, frag_type(), from, 803,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (recv) {
        in->nr = (size_t)cnt_in[0];
        in->nf = (size_t)cnt_in[1];
    }
    if (send)
        fr->st.bytes_sent += cnt_out[0] * sizeof(crun) + cnt_out[1] * sizeof(cfrag) + 16;
    fr->st.transfer_ms += ms_since(t0);
    return ok;
}

static void rle_swap(rle *a, rle *b)
{
    rle t = *a;
    *a = *b;
    *b = t;
}

/* Binary swap over what was drawn: every rank run-length encodes its drawn pixels (depth
 * below 1); ranks beyond the largest power of two R' below R fold theirs into rank k - R';
 * then log2 R' rounds, in each of which a rank keeps half of its pixel range and trades the
 * other half's runs with its partner, merging what it gets; last, rank 0 takes the colours
 * of every range's runs. Undrawn pixels never travel: rank 0's own image holds the
 * background there, the same on every rank. Rank 0's framebuffer argb becomes the image. */
static shoal_status composite(mpi_frame *fr, uint32_t *argb, const float *depth,
                              const uint32_t *ids, int width, int height, const uint8_t *drawn,
                              int tx, int ty, int ts, shoal_error *e)
{
    size_t n = (size_t)width * (size_t)height;
    const int R = mpi_size(), me = mpi_rank();
    uint64_t t_all = shoal_profile_now_ns();
    /* the wait: until the slowest rank has drawn (load imbalance, timed apart) */
    MPI_Barrier(MPI_COMM_WORLD);
    fr->st.wait_ms += ms_since(t_all);
    uint64_t t0 = shoal_profile_now_ns();
    int ok = n <= UINT32_MAX - 1 && (drawn ? rle_encode_tiles(&fr->mine, depth, ids, argb, width,
                                                              height, drawn, tx, ty, ts)
                                           : rle_encode(&fr->mine, depth, ids, argb, n));
    fr->st.encode_ms += ms_since(t0);
    fr->st.pixels_drawn += fr->mine.nf;
    int P = 1;
    while (P * 2 <= R)
        P *= 2;
    /* fold: rank k >= P gives all it drew to rank k - P */
    if (me >= P) {
        ok &= rle_exchange(fr, &fr->mine, me - P, NULL, MPI_PROC_NULL);
        fr->mine.nr = fr->mine.nf = 0;
    } else if (me + P < R) {
        ok &= rle_exchange(fr, NULL, MPI_PROC_NULL, &fr->got, me + P);
        t0 = shoal_profile_now_ns();
        ok = ok && rle_merge(&fr->mine, &fr->got, &fr->merged);
        if (ok)
            rle_swap(&fr->mine, &fr->merged);
        fr->st.compare_ms += ms_since(t0);
    }
    uint32_t lo = 0, hi = (uint32_t)n;
    if (me < P) {
        for (int bit = P / 2; bit >= 1; bit /= 2) {
            int peer = me ^ bit;
            uint32_t mid = lo + (hi - lo) / 2;
            uint32_t klo = (me & bit) ? mid : lo, khi = (me & bit) ? hi : mid;
            uint32_t slo = (me & bit) ? lo : mid, shi = (me & bit) ? mid : hi;
            t0 = shoal_profile_now_ns();
            ok = ok && rle_slice(&fr->mine, slo, shi, &fr->part);
            if (!ok)
                fr->part.nr = fr->part.nf = 0;
            fr->st.compare_ms += ms_since(t0);
            ok &= rle_exchange(fr, &fr->part, peer, &fr->got, peer);
            t0 = shoal_profile_now_ns();
            ok = ok && rle_slice(&fr->mine, klo, khi, &fr->part) &&
                 rle_merge(&fr->part, &fr->got, &fr->merged);
            if (ok)
                rle_swap(&fr->mine, &fr->merged);
            fr->st.compare_ms += ms_since(t0);
            lo = klo;
            hi = khi;
        }
    }
    /* the colours of every range's runs to rank 0: the counts first, so that rank 0 can make
     * room for the largest (or say it cannot) before anything else moves */
    t0 = shoal_profile_now_ns();
    int keep = me < P && me != 0;
    if (keep && fr->mine.nf > fr->cap_col) {
        uint32_t *c = realloc(fr->col, fr->mine.nf * sizeof *c);
        if (c) {
            fr->col = c;
            fr->cap_col = fr->mine.nf;
        }
    }
    if (keep && fr->mine.nf > fr->cap_col) {
        ok = 0;
        keep = 0;
    }
    uint64_t cnt[2] = {keep ? fr->mine.nr : 0, keep ? fr->mine.nf : 0};
    uint64_t *all = NULL, most[2] = {0, 0};
    if (me == 0 && !(all = malloc(2 * sizeof *all * (size_t)R)))
        ok = 0;
    MPI_Gather(cnt, 2, MPI_UINT64_T, all, all ? 2 : 0, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    int room = 1;
    if (me == 0) {
        for (int q = 1; all && q < R; q++)
            for (int k = 0; k < 2; k++)
                most[k] = all[2 * q + k] > most[k] ? all[2 * q + k] : most[k];
        room = all != NULL && rle_reserve(&fr->got, (size_t)most[0], 0);
        if (room && most[1] > fr->cap_col) {
            uint32_t *c = realloc(fr->col, (size_t)most[1] * sizeof *c);
            if (c) {
                fr->col = c;
                fr->cap_col = (size_t)most[1];
            }
            room = c != NULL;
        }
        ok &= room;
    }
    MPI_Bcast(&room, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (room && keep && (cnt[0] || cnt[1])) {
        for (size_t i = 0; i < fr->mine.nf; i++)
            fr->col[i] = fr->mine.f[i].argb;
        MPI_Send(fr->mine.r, (int)cnt[0], run_type(), 0, 811, MPI_COMM_WORLD);
        MPI_Send(fr->col, (int)cnt[1], MPI_UINT32_T, 0, 812, MPI_COMM_WORLD);
        fr->st.bytes_sent += cnt[0] * sizeof(crun) + cnt[1] * 4 + 16;
    } else if (room && me == 0) {
        for (size_t k = 0, f = 0; k < fr->mine.nr; k++)
            for (uint32_t j = 0; j < fr->mine.r[k].len; j++)
                argb[fr->mine.r[k].start + j] = fr->mine.f[f++].argb;
        for (int q = 1; q < R; q++) {
            if (!all[2 * q + 1] && !all[2 * q])
                continue;
            MPI_Recv(fr->got.r, (int)all[2 * q], run_type(), q, 811, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            MPI_Recv(fr->col, (int)all[2 * q + 1], MPI_UINT32_T, q, 812, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            for (size_t k = 0, f = 0; k < all[2 * q]; k++)
                for (uint32_t j = 0; j < fr->got.r[k].len; j++)
                    argb[fr->got.r[k].start + j] = fr->col[f++];
        }
    }
    free(all);
    fr->st.transfer_ms += ms_since(t0);
    fr->st.frames++;
    fr->st.total_ms += ms_since(t_all);
    shoal_status st =
        ok ? SHOAL_OK
           : shoal_error_set(e, SHOAL_ERR_NOMEM,
                             "out of memory for the compositing buffers (%zu pixels)", n);
    return comm_agree(st, e);
}

shoal_status mpi_frame_create(mpi_frame **out, shoal_error *e)
{
    *out = calloc(1, sizeof **out);
    shoal_status st =
        *out ? SHOAL_OK : shoal_error_set(e, SHOAL_ERR_NOMEM, "out of memory for the composite");
    if ((st = comm_agree(st, e))) {
        free(*out);
        *out = NULL;
    }
    return st;
}

void mpi_frame_destroy(mpi_frame *fr)
{
    if (!fr)
        return;
    rle_free(&fr->mine);
    rle_free(&fr->part);
    rle_free(&fr->got);
    rle_free(&fr->merged);
    free(fr->col);
    free(fr);
}

mpi_frame_stats mpi_frame_get_stats(const mpi_frame *fr, int all)
{
    mpi_frame_stats s = fr->st;
    if (!all)
        return s;
    double t[5] = {s.total_ms, s.wait_ms, s.encode_ms, s.compare_ms, s.transfer_ms}, tm[5];
    MPI_Allreduce(t, tm, 5, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    uint64_t c[2] = {s.bytes_sent, s.pixels_drawn}, cs[2];
    MPI_Allreduce(c, cs, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    s.total_ms = tm[0];
    s.wait_ms = tm[1];
    s.encode_ms = tm[2];
    s.compare_ms = tm[3];
    s.transfer_ms = tm[4];
    s.bytes_sent = cs[0];
    s.pixels_drawn = cs[1];
    return s;
}

/* The speed every rank colours by: the largest of the frame's visible fish over the ranks
 * (shoal_render_set_speed_hook: called once per frame on every rank, also by a rank whose
 * frame failed, with -1). */
static float speed_max(void *ctx, float frame_speed)
{
    (void)ctx;
    float all = frame_speed;
    MPI_Allreduce(&frame_speed, &all, 1, MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD);
    return all;
}

shoal_status mpi_frame_draw(mpi_frame *fr, shoal_renderer *r, const shoal_render_instances *inst,
                            const shoal_camera *cam, shoal_error *e)
{
    /* each rank touches only the tiles its fish cover; rank 0's image keeps the background
     * in the others (the composite writes every drawn pixel over it) */
    shoal_status st = shoal_render_sparse(
        r, mpi_rank() == 0 ? SHOAL_RENDER_SPARSE_BACKGROUND : SHOAL_RENDER_SPARSE_SKIP, e);
    shoal_render_set_speed_hook(r, speed_max, NULL);
    if (!st)
        st = shoal_render_frame(r, inst, cam, e);
    else
        (void)speed_max(NULL, -1.0f); /* (the others' frames wait for it) */
    shoal_render_set_speed_hook(r, NULL, NULL);
    if ((st = comm_agree(st, e)))
        return st;
    const float *z;
    const uint32_t *ids;
    shoal_render_depth(r, &z, &ids);
    shoal_framebuffer fb = shoal_render_framebuffer(r);
    int tx = 0, ty = 0, ts = 0;
    const uint8_t *drawn = shoal_render_drawn_tiles(r, &tx, &ty, &ts);
    /* the framebuffer's rows are contiguous (stride = width) */
    return composite(fr, (uint32_t *)(uintptr_t)fb.argb, z, ids, fb.width, fb.height, drawn, tx, ty,
                     ts, e);
}
