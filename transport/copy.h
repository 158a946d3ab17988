/*
 * Bulk copies of contiguous bytes: direct Put and Get into a mapped
 * window, the single copy from or into a peer's heap block, contiguous
 * pack and unpack, messages into and out of the shm ring and the
 * collectives' slots; and the faulting in of the pages such copies go to.
 * Any layer may use it.
 *
 * bmpi_copy() is memcpy in pieces of at most BMPI_COPY_PIECE bytes, as
 * Open MPI's datatype engine copies contiguous data. glibc's memcpy picks
 * its method by the size of the call: on AMD processors it stops using
 * `rep movsb` above the L2 cache's size and runs a vector loop that is
 * slower from there up to its non-temporal threshold, so one call of
 * some MiB loses to the same bytes in 128 KiB calls (docs/performance.md,
 * "Large copies"). Below the piece size this is one memcpy.
 *
 * `rep movsb`, which glibc uses from 2112 bytes (2048 on processors
 * without the fast-string flag) up to about the L2 cache's size, has two
 * more costs on the AMD processors measured. When the destination lies a
 * few bytes after the source modulo 4 KiB, the processor cannot tell the
 * copy from an overlapping one and takes a slow path, over ten times
 * slower; and up to some KiB it is slower than glibc's vector loop at any
 * placement (docs/performance.md, "Copies a few bytes apart in the
 * page"). Such copies go in pieces too small for glibc to use `rep movsb`
 * on (BMPI_COPY_SHORT_PIECE): every copy from BMPI_COPY_MOVSB_MIN to
 * BMPI_COPY_SHORT_MAX bytes, and longer ones so placed.
 */
#ifndef BMPI_TRANSPORT_COPY_H
#define BMPI_TRANSPORT_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

#define BMPI_COPY_PIECE ((size_t)128 << 10)
#define BMPI_COPY_SHORT_PIECE ((size_t)1984)
#define BMPI_COPY_MOVSB_MIN ((size_t)2112) /* glibc's threshold with the fast-string flag */
#define BMPI_COPY_SHORT_MAX ((size_t)16 << 10)
#define BMPI_COPY_ALIAS_SPAN 64
#define BMPI_COPY_ALIAS_PAGE ((uintptr_t)4096) /* what the processor compares addresses modulo */

/* Up to 16 bytes, the size of most direct Puts and Gets, without calling
 * memcpy: two loads of a power of two that may overlap, then two stores. */
static inline void bmpi_copy_small(char *d, const char *s, size_t len)
{
    if (len >= 8) {
        uint64_t head, tail;
        memcpy(&head, s, 8);
        memcpy(&tail, s + len - 8, 8);
        memcpy(d, &head, 8);
        memcpy(d + len - 8, &tail, 8);
    } else if (len >= 4) {
        uint32_t head, tail;
        memcpy(&head, s, 4);
        memcpy(&tail, s + len - 4, 4);
        memcpy(d, &head, 4);
        memcpy(d + len - 4, &tail, 4);
    } else {
        for (size_t i = 0; i < len; i++)
            d[i] = s[i];
    }
}

/* Whether dst lies 1 to 63 bytes after src modulo 4 KiB, where `rep
 * movsb` slows down (measured: 1 to 31; a cache line of margin). */
static inline int bmpi_copy_page_aliased(const char *d, const char *s)
{
    uintptr_t distance = ((uintptr_t)d - (uintptr_t)s) & (BMPI_COPY_ALIAS_PAGE - 1);
    return distance - 1 < BMPI_COPY_ALIAS_SPAN - 1;
}

/* The largest memcpy call a copy of len bytes from s to d is split into. */
static inline size_t bmpi_copy_piece(const char *d, const char *s, size_t len)
{
    if (len <= BMPI_COPY_SHORT_PIECE)
        return len;
    if ((len >= BMPI_COPY_MOVSB_MIN && len <= BMPI_COPY_SHORT_MAX) || bmpi_copy_page_aliased(d, s))
        return BMPI_COPY_SHORT_PIECE;
    return BMPI_COPY_PIECE;
}

static inline void bmpi_copy(void *dst, const void *src, size_t len)
{
    char *d = dst;
    const char *s = src;
    if (len <= 16) {
        bmpi_copy_small(d, s, len);
        return;
    }
    size_t piece = bmpi_copy_piece(d, s, len);
    while (len > piece) {
        memcpy(d, s, piece);
        d += piece;
        s += piece;
        len -= piece;
    }
    memcpy(d, s, len);
}

/* count blocks of len bytes from src, src_stride bytes apart, to dst,
 * dst_stride apart (either stride may be 0 or negative): the blocks of a
 * strided Put or Get at its target. Small blocks are copied inline. */
static inline void bmpi_copy_blocks(char *dst, ptrdiff_t dst_stride, const char *src, ptrdiff_t src_stride,
                                    size_t len, size_t count)
{
    if (len == 8) {
        for (size_t i = 0; i < count; i++, dst += dst_stride, src += src_stride)
            memcpy(dst, src, 8);
    } else if (len <= 16) {
        for (size_t i = 0; i < count; i++, dst += dst_stride, src += src_stride)
            bmpi_copy_small(dst, src, len);
    } else {
        for (size_t i = 0; i < count; i++, dst += dst_stride, src += src_stride)
            bmpi_copy(dst, src, len);
    }
}

/* Fault the whole pages of [addr, addr + len) in now, writable, with one
 * system call instead of a fault per page on first touch. Only a hint: a
 * kernel without MADV_POPULATE_WRITE refuses it, and the pages then fault
 * in as before. */
static inline void bmpi_prefault(void *addr, size_t len)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)addr + page - 1) & ~(page - 1), hi = ((uintptr_t)addr + len) & ~(page - 1);
    if (hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
}

#endif
