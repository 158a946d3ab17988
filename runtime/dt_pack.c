/*
 * The cursor: packing, unpacking and scatter-gather lists over
 * (buf, count, type), in bounded resumable steps.
 *
 * The cursor walks the compiled nodes (dt_node.c) with a stack of frames:
 * frame 0 is the root segment (all count elements), frame k+1 the child
 * instance that frame k's current repetition points at; the deepest frame
 * sits on a leaf segment, leaf_off bytes into its current block. Whole
 * blocks of a leaf segment are copied in a tight loop specialised for the
 * common block sizes; contiguous data is one bmpi_copy (transport/copy.h).
 *
 * Addresses are computed in uintptr_t: with MPI_BOTTOM the buffer is NULL
 * and the displacements are absolute, which pointer arithmetic may not do.
 */
#include <string.h>

#include "runtime/datatype_impl.h"
#include "transport/copy.h"

static inline const struct bmpi_dt_seg *seg_of(const struct bmpi_dt_cursor *c,
                                               const struct bmpi_dt_frame *f)
{
    return f->node ? &f->node->segs[f->seg] : &c->root;
}

static inline uintptr_t rep_addr(const struct bmpi_dt_frame *f, const struct bmpi_dt_seg *s,
                                 size_t rep)
{
    return f->base + (uintptr_t)s->disp + (uintptr_t)((MPI_Aint)rep * s->stride);
}

/* From frame k (seg and rep set) down to the first block below it. */
static void descend(struct bmpi_dt_cursor *c, int k)
{
    for (;;) {
        struct bmpi_dt_frame *f = &c->f[k];
        const struct bmpi_dt_seg *s = seg_of(c, f);
        if (!s->child) {
            c->depth = k + 1;
            return;
        }
        struct bmpi_dt_frame *nf = &c->f[k + 1];
        nf->node = s->child;
        nf->seg = 0;
        nf->rep = 0;
        nf->base = rep_addr(f, s, f->rep);
        k++;
    }
}

/* The deepest frame finished its segment: move to the next block. False at
 * the end of the stream. */
static bool advance(struct bmpi_dt_cursor *c)
{
    int k = c->depth - 1;
    for (;;) {
        struct bmpi_dt_frame *f = &c->f[k];
        if (f->node && f->seg + 1 < f->node->nsegs) {
            f->seg++;
            f->rep = 0;
            descend(c, k);
            return true;
        }
        if (k == 0) {
            c->depth = 0;
            return false;
        }
        f = &c->f[--k];
        if (++f->rep < seg_of(c, f)->count) {
            descend(c, k);
            return true;
        }
    }
}

void bmpi_dt_cursor_seek(struct bmpi_dt_cursor *c, size_t off)
{
    if (off > c->total)
        off = c->total;
    c->pos = off;
    c->leaf_off = 0;
    c->depth = 0;
    if (c->contig || off == c->total)
        return;
    const struct bmpi_dt_seg *s = &c->root;
    int k = 0;
    c->f[0] = (struct bmpi_dt_frame){.node = NULL, .seg = 0, .rep = 0, .base = c->buf};
    for (;;) {
        struct bmpi_dt_frame *f = &c->f[k];
        f->rep = off / s->blen;
        off -= f->rep * s->blen;
        if (!s->child) {
            c->leaf_off = off;
            c->depth = k + 1;
            return;
        }
        const struct bmpi_dt_node *n = s->child;
        struct bmpi_dt_frame *nf = &c->f[k + 1];
        nf->node = n;
        nf->base = rep_addr(f, s, f->rep);
        /* the last segment starting at or before off */
        size_t lo = 0, hi = n->nsegs;
        while (hi - lo > 1) {
            size_t mid = lo + (hi - lo) / 2;
            if (n->segs[mid].before <= off)
                lo = mid;
            else
                hi = mid;
        }
        nf->seg = lo;
        off -= n->segs[lo].before;
        s = &n->segs[lo];
        k++;
    }
}

void bmpi_dt_cursor_init(struct bmpi_dt_cursor *c, void *buf, size_t count,
                         const struct bmpi_datatype *dt)
{
    c->buf = (uintptr_t)buf;
    c->total = count * (size_t)dt->size;
    if (c->total == 0) {
        c->root = (struct bmpi_dt_seg){.count = 1};
        c->contig = true;
    } else {
        bmpi_dt_root_seg(dt, count, &c->root);
        c->contig = !c->root.child && c->root.count == 1;
    }
    bmpi_dt_cursor_seek(c, 0);
}

enum dir { PACK, UNPACK };

/* n blocks of blen bytes, stride apart in the buffer, consecutive in the
 * stream. Constant sizes let the compiler turn memcpy into moves. */
#define BLOCKS(N)                                                                              \
    do {                                                                                       \
        for (size_t i = 0; i < n; i++, buf += stride, stream += (N)) {                        \
            if (d == PACK)                                                                     \
                memcpy(stream, (const void *)buf, (N));                                        \
            else                                                                               \
                memcpy((void *)buf, stream, (N));                                              \
        }                                                                                      \
    } while (0)

static inline __attribute__((always_inline)) void
xfer_blocks(uintptr_t buf, MPI_Aint stride, size_t blen, size_t n, char *stream, enum dir d)
{
    switch (blen) {
    case 1: BLOCKS(1); break;
    case 2: BLOCKS(2); break;
    case 4: BLOCKS(4); break;
    case 8: BLOCKS(8); break;
    case 12: BLOCKS(12); break;
    case 16: BLOCKS(16); break;
    case 24: BLOCKS(24); break;
    case 32: BLOCKS(32); break;
    default: /* bmpi_copy_blocks knows where memcpy is slow (transport/copy.h) */
        if (d == PACK)
            bmpi_copy_blocks(stream, (ptrdiff_t)blen, (const char *)buf, stride, blen, n);
        else
            bmpi_copy_blocks((char *)buf, stride, stream, (ptrdiff_t)blen, blen, n);
        break;
    }
}

static inline __attribute__((always_inline)) void xfer(uintptr_t buf, char *stream, size_t len,
                                                       enum dir d)
{
    if (d == PACK)
        bmpi_copy(stream, (const void *)buf, len);
    else
        bmpi_copy((void *)buf, stream, len);
}

static inline __attribute__((always_inline)) size_t walk(struct bmpi_dt_cursor *c, char *stream,
                                                         size_t max, enum dir d)
{
    size_t n = c->total - c->pos;
    if (n > max)
        n = max;
    if (n == 0)
        return 0;
    if (c->contig) {
        xfer(c->buf + (uintptr_t)c->root.disp + c->pos, stream, n, d);
        c->pos += n;
        return n;
    }
    size_t left = n;
    while (left) {
        struct bmpi_dt_frame *f = &c->f[c->depth - 1];
        if (c->depth >= 2 && f->seg == 0 && f->rep == 0 && c->leaf_off == 0 &&
            f->node->depth == 1 && left >= f->node->size) {
            /* Whole instances of a node of plain blocks (an array of
             * structs): copy them in one loop, without walking frames. */
            struct bmpi_dt_frame *pf = f - 1;
            const struct bmpi_dt_seg *ps = seg_of(c, pf);
            const struct bmpi_dt_node *nd = f->node;
            size_t k = ps->count - pf->rep;
            if (k > left / nd->size)
                k = left / nd->size;
            uintptr_t base = f->base;
            for (size_t i = 0; i < k; i++, base += (uintptr_t)ps->stride)
                for (size_t j = 0; j < nd->nsegs; j++) {
                    const struct bmpi_dt_seg *s = &nd->segs[j];
                    xfer_blocks(base + (uintptr_t)s->disp, s->stride, s->blen, s->count, stream, d);
                    stream += s->count * s->blen;
                }
            left -= k * nd->size;
            pf->rep += k;
            if (pf->rep < ps->count) {
                f->base = rep_addr(pf, ps, pf->rep);
                continue;
            }
            /* the parent's segment is done: leave as if at the last block */
            pf->rep = ps->count - 1;
            f->seg = nd->nsegs - 1;
            if (!advance(c))
                break;
            continue;
        }
        const struct bmpi_dt_seg *s = seg_of(c, f);
        size_t blen = s->blen;
        uintptr_t p = rep_addr(f, s, f->rep);
        if (c->leaf_off || left < blen) {
            size_t k = blen - c->leaf_off;
            if (k > left)
                k = left;
            xfer(p + c->leaf_off, stream, k, d);
            stream += k;
            left -= k;
            c->leaf_off += k;
            if (c->leaf_off < blen)
                break;
            c->leaf_off = 0;
            f->rep++;
        } else {
            size_t k = s->count - f->rep;
            if (k > left / blen)
                k = left / blen;
            xfer_blocks(p, s->stride, blen, k, stream, d);
            stream += k * blen;
            left -= k * blen;
            f->rep += k;
        }
        if (f->rep < s->count)
            continue;
        if (f->node && f->seg + 1 < f->node->nsegs && !f->node->segs[f->seg + 1].child) {
            f->seg++; /* the next block of a block list: no need to walk */
            f->rep = 0;
        } else if (!advance(c)) {
            break;
        }
    }
    c->pos += n - left;
    return n - left;
}

size_t bmpi_dt_pack(struct bmpi_dt_cursor *c, void *dst, size_t max_bytes)
{
    return walk(c, dst, max_bytes, PACK);
}

size_t bmpi_dt_unpack(struct bmpi_dt_cursor *c, const void *src, size_t bytes)
{
    return walk(c, (char *)src, bytes, UNPACK);
}

/* Append [p, p+len) to iov, joining it to the last entry when adjacent. */
static inline bool add_iov(struct iovec *iov, int *n, int max, uintptr_t p, size_t len)
{
    if (*n > 0 && (uintptr_t)iov[*n - 1].iov_base + iov[*n - 1].iov_len == p) {
        iov[*n - 1].iov_len += len;
        return true;
    }
    if (*n == max)
        return false;
    iov[*n].iov_base = (void *)p;
    iov[*n].iov_len = len;
    (*n)++;
    return true;
}

int bmpi_dt_iov(struct bmpi_dt_cursor *c, struct iovec *iov, int max_iov, size_t max_bytes,
                size_t *bytes)
{
    size_t n = c->total - c->pos;
    int niov = 0;
    if (n > max_bytes)
        n = max_bytes;
    *bytes = 0;
    if (n == 0 || max_iov <= 0)
        return 0;
    if (c->contig) {
        add_iov(iov, &niov, max_iov, c->buf + (uintptr_t)c->root.disp + c->pos, n);
        c->pos += n;
        *bytes = n;
        return niov;
    }
    size_t left = n;
    while (left) {
        struct bmpi_dt_frame *f = &c->f[c->depth - 1];
        const struct bmpi_dt_seg *s = seg_of(c, f);
        size_t k = s->blen - c->leaf_off;
        if (k > left)
            k = left;
        if (!add_iov(iov, &niov, max_iov, rep_addr(f, s, f->rep) + c->leaf_off, k))
            break;
        left -= k;
        c->leaf_off += k;
        if (c->leaf_off < s->blen)
            break;
        c->leaf_off = 0;
        if (++f->rep == s->count && !advance(c))
            break;
    }
    c->pos += n - left;
    *bytes = n - left;
    return niov;
}

size_t bmpi_dt_next_run(struct bmpi_dt_cursor *c, size_t max_bytes, size_t max_blocks, struct bmpi_dt_run *r)
{
    size_t left = c->total - c->pos;
    if (left > max_bytes)
        left = max_bytes;
    if (left == 0 || max_blocks == 0)
        return 0;
    if (c->contig) {
        *r = (struct bmpi_dt_run){c->buf + (uintptr_t)c->root.disp + c->pos, left, 1, 0};
        c->pos += left;
        return left;
    }
    struct bmpi_dt_frame *f = &c->f[c->depth - 1];
    const struct bmpi_dt_seg *s = seg_of(c, f);
    uintptr_t p = rep_addr(f, s, f->rep) + c->leaf_off;
    size_t blocks = 1, bytes;
    if (c->leaf_off || left < s->blen) {
        bytes = s->blen - c->leaf_off < left ? s->blen - c->leaf_off : left;
        *r = (struct bmpi_dt_run){p, bytes, 1, 0};
        c->leaf_off += bytes;
        c->pos += bytes;
        if (c->leaf_off < s->blen)
            return bytes;
        c->leaf_off = 0;
    } else {
        blocks = s->count - f->rep;
        if (blocks > left / s->blen)
            blocks = left / s->blen;
        if (blocks > max_blocks)
            blocks = max_blocks;
        bytes = blocks * s->blen;
        *r = (struct bmpi_dt_run){p, s->blen, blocks, s->stride};
        c->pos += bytes;
    }
    f->rep += blocks;
    if (f->rep == s->count)
        advance(c);
    return bytes;
}

void bmpi_dt_copy(const void *src, size_t scount, const struct bmpi_datatype *sdt, void *dst, size_t dcount,
                  const struct bmpi_datatype *ddt, size_t n)
{
    bool sc = bmpi_dt_is_contig(sdt), dc = bmpi_dt_is_contig(ddt);
    uintptr_t s = (uintptr_t)src + (uintptr_t)(sc ? sdt->true_lb : 0);
    uintptr_t d = (uintptr_t)dst + (uintptr_t)(dc ? ddt->true_lb : 0);
    struct bmpi_dt_cursor cs, cd;
    if (sc && dc) {
        memmove((void *)d, (const void *)s, n);
    } else if (dc) {
        bmpi_dt_cursor_init(&cs, (void *)src, scount, sdt);
        bmpi_dt_pack(&cs, (void *)d, n);
    } else if (sc) {
        bmpi_dt_cursor_init(&cd, dst, dcount, ddt);
        bmpi_dt_unpack(&cd, (const void *)s, n);
    } else {
        char stage[4096] __attribute__((aligned(16)));
        bmpi_dt_cursor_init(&cs, (void *)src, scount, sdt);
        bmpi_dt_cursor_init(&cd, dst, dcount, ddt);
        while (n > 0) {
            size_t k = bmpi_dt_pack(&cs, stage, n < sizeof stage ? n : sizeof stage);
            if (k == 0)
                break;
            bmpi_dt_unpack(&cd, stage, k);
            n -= k;
        }
    }
}

void bmpi_dt_pack_all(const void *buf, size_t count, const struct bmpi_datatype *dt, void *dst)
{
    struct bmpi_dt_cursor c;
    bmpi_dt_cursor_init(&c, (void *)buf, count, dt);
    bmpi_dt_pack(&c, dst, c.total);
}

void bmpi_dt_unpack_all(const void *src, void *buf, size_t count, const struct bmpi_datatype *dt)
{
    struct bmpi_dt_cursor c;
    bmpi_dt_cursor_init(&c, buf, count, dt);
    bmpi_dt_unpack(&c, src, c.total);
}
