/*
 * Reduce on 2 ranks, halves (commutative ops only): in the pipeline one
 * rank copies and reduces everything while the other waits. Here each
 * reduces one half, segment by segment: the root pulls the other's lower
 * half and reduces it into recvbuf, the other pulls the root's upper half,
 * reduces it and offers the result, which the root pulls straight into
 * recvbuf one round later. Per round the root copies two segments and
 * reduces one, the other copies and reduces one: 1.5 units of work per
 * segment pair instead of 2. Other sizes take the pipeline.
 */
#include "config.h"

#include "collectives/coll.h"
#include "collectives/coll_impl.h"

/* As in the pipeline: a segment and its partner stay in cache. */
#define SEGMENT_BYTES (128u * 1024u)

static size_t seg_len(size_t off, size_t end, size_t seg)
{
    return end - off < seg ? end - off : seg;
}

/* Lower half [0, lo) reduced here; the other's results for [lo, count)
 * pulled a round after it pulled the same segment of mine. */
static void at_root(struct bmpi_sched *s, const void *sbuf, char *rbuf, size_t count,
                    MPI_Datatype type, size_t seg, int peer)
{
    size_t lo = count / 2;
    const char *mine = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    char *tmp = NULL;
    if (sbuf == MPI_IN_PLACE && !(tmp = bmpi_sched_tmpbuf(s, seg, type)))
        return;
    for (size_t a = 0, b = lo; a < lo || b < count || b - seg < count; a += seg, b += seg) {
        char *acc = bmpi_coll_ofs(rbuf, a, type);
        if (b < count) /* in place, the other pulls this before its result lands here */
            bmpi_sched_send(s, bmpi_coll_ofs(mine, b, type), seg_len(b, count, seg), type, peer);
        if (a < lo)
            bmpi_sched_recv(s, tmp ? tmp : acc, seg_len(a, lo, seg), type, peer);
        if (b > lo && b - seg < count)
            bmpi_sched_recv(s, bmpi_coll_ofs(rbuf, b - seg, type), seg_len(b - seg, count, seg),
                            type, peer);
        bmpi_sched_fence(s);
        if (a < lo)
            bmpi_sched_reduce(s, tmp ? tmp : bmpi_coll_ofs(mine, a, type), acc,
                              seg_len(a, lo, seg), type);
    }
}

/* Upper half reduced here into two alternating segments, each offered to
 * the root the round after it was filled. Sends and receives are issued in
 * the root's order, so the two messages a round carries each way match. */
static void at_other(struct bmpi_sched *s, const void *sbuf, size_t count, MPI_Datatype type,
                     size_t seg, int peer)
{
    size_t lo = count / 2;
    char *slot[2];
    for (int i = 0; i < 2; i++)
        if (!(slot[i] = bmpi_sched_tmpbuf(s, seg, type)))
            return;
    size_t k = 0;
    for (size_t a = 0, b = lo; a < lo || b < count || b - seg < count; a += seg, b += seg, k++) {
        if (a < lo)
            bmpi_sched_send(s, bmpi_coll_ofs(sbuf, a, type), seg_len(a, lo, seg), type, peer);
        if (b < count)
            bmpi_sched_recv(s, slot[k % 2], seg_len(b, count, seg), type, peer);
        if (b > lo && b - seg < count)
            bmpi_sched_send(s, slot[(k + 1) % 2], seg_len(b - seg, count, seg), type, peer);
        bmpi_sched_fence(s);
        if (b < count)
            bmpi_sched_reduce(s, bmpi_coll_ofs(sbuf, b, type), slot[k % 2],
                              seg_len(b, count, seg), type);
    }
}

void bmpi_coll_reduce_halves(struct bmpi_sched *s, const void *sbuf, void *rbuf, size_t count,
                             MPI_Datatype type, int root)
{
    if (s->comm->size != 2 || count < 2) {
        bmpi_coll_reduce_pipeline(s, sbuf, rbuf, count, type, root);
        return;
    }
    size_t seg = bmpi_coll_segment_count(type, count, SEGMENT_BYTES);
    int peer = 1 - s->comm->rank;
    if (s->comm->rank == root)
        at_root(s, sbuf, rbuf, count, type, seg, peer);
    else
        at_other(s, sbuf, count, type, seg, peer);
}
