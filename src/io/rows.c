/* SPDX-License-Identifier: MIT */
/* Row files as layouts (io/rows_layout.h): the encodings of a section and the front-to-back
 * writer the library's writers use. The layouts themselves live with their formats (npy.c,
 * vtk.c, checkpoint.c). Owns no state. */
#include "io/rows_layout.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "row files are written as the host's bytes: little-endian hosts only"
#endif

size_t rows_kind_size(rows_kind k)
{
    switch (k) {
    case ROWS_STATE:
        return 24;
    case ROWS_POSITION:
    case ROWS_VELOCITY:
        return 12;
    case ROWS_SPEED:
        return 4;
    case ROWS_INDEX:
    case ROWS_INDEX1:
        return 8;
    }
    return 0;
}

void rows_encode(rows_kind k, const float *rows, size_t first, size_t n, void *dst)
{
    unsigned char *o = dst;
    switch (k) {
    case ROWS_STATE:
        memcpy(o, rows, n * 24);
        break;
    case ROWS_POSITION:
    case ROWS_VELOCITY:
        for (size_t i = 0; i < n; i++)
            memcpy(o + 12 * i, rows + 6 * i + (k == ROWS_VELOCITY ? 3 : 0), 12);
        break;
    case ROWS_SPEED:
        for (size_t i = 0; i < n; i++) {
            const float *r = rows + 6 * i;
            float s = sqrtf((r[3] * r[3] + r[4] * r[4]) + r[5] * r[5]);
            memcpy(o + 4 * i, &s, 4);
        }
        break;
    case ROWS_INDEX:
    case ROWS_INDEX1:
        for (size_t i = 0; i < n; i++) {
            int64_t v = (int64_t)(first + i) + (k == ROWS_INDEX1);
            memcpy(o + 8 * i, &v, 8);
        }
        break;
    }
}

void rows_layout_free(rows_layout *l)
{
    free(l->bytes);
    l->bytes = NULL;
}

int rows_layout_write(const rows_layout *l, const float *rows, FILE *f)
{
    enum { CHUNK = 2730 }; /* rows per encoded block: 64 KiB of the widest kind */
    unsigned char buf[CHUNK * 24];
    /* pieces and sections in file order: both lists are sorted by offset, and a section
     * runs until the next piece */
    int p = 0, s = 0;
    while (p < l->piece_count || s < l->section_count) {
        int piece_next = s >= l->section_count ||
                         (p < l->piece_count && l->piece[p].offset <= l->section[s].offset);
        if (piece_next) {
            const rows_piece *q = &l->piece[p++];
            if (fwrite(l->bytes + q->at, 1, q->size, f) != q->size)
                return -1;
            continue;
        }
        rows_kind k = l->section[s++].kind;
        size_t w = rows_kind_size(k);
        for (size_t i0 = 0; i0 < l->count; i0 += CHUNK) {
            size_t m = l->count - i0 < CHUNK ? l->count - i0 : CHUNK;
            rows_encode(k, rows + 6 * i0, i0, m, buf);
            if (fwrite(buf, w, m, f) != m)
                return -1;
        }
    }
    return 0;
}
