/*
 * Broadcast, pipelined binomial: the message is cut into segments that
 * flow down a binomial tree one round apart, a rank forwarding segment k
 * while it pulls segment k+1. Every byte crosses each tree edge once, so
 * p ranks move (p-1)n bytes in all, half of what scatter+allgather moves;
 * when ranks share cores that total, not the depth of the tree, sets the
 * time. The root offers all its segments at once: on shared memory the
 * children pull them (single copy, by the receiver) without the root
 * being scheduled again.
 */
#include "config.h"

#include "collectives/coll.h"
#include "collectives/coll_impl.h"

/* Big enough that a round's fixed cost (a rendezvous per child) is small
 * next to its copy, small enough to keep the tree's levels overlapping:
 * at 4 ranks on 2 cores 256 KiB beat 64 KiB and 1 MiB at every size. */
#define SEGMENT_BYTES (256u * 1024u)

void bmpi_coll_bcast_pipeline(struct bmpi_sched *s, void *buf, size_t count, MPI_Datatype type,
                              int root)
{
    struct bmpi_tree t;
    bmpi_coll_binomial_tree(s->comm->size, s->comm->rank, root, &t);
    size_t seg = bmpi_coll_segment_count(type, count, SEGMENT_BYTES);
    if (t.parent < 0) {
        for (size_t off = 0; off < count; off += seg)
            for (int c = t.nchild - 1; c >= 0; c--) /* biggest subtree first */
                bmpi_sched_send(s, bmpi_coll_ofs(buf, off, type),
                                count - off < seg ? count - off : seg, type, t.child[c]);
        bmpi_sched_fence(s);
        return;
    }
    if (t.nchild == 0) { /* a leaf forwards nothing: it pulls everything as it comes */
        for (size_t off = 0; off < count; off += seg)
            bmpi_sched_recv(s, bmpi_coll_ofs(buf, off, type), count - off < seg ? count - off : seg,
                            type, t.parent);
        bmpi_sched_fence(s);
        return;
    }
    size_t len = count < seg ? count : seg;
    bmpi_sched_recv(s, buf, len, type, t.parent);
    bmpi_sched_fence(s);
    for (size_t off = 0; off < count; off += seg) {
        len = count - off < seg ? count - off : seg;
        for (int c = t.nchild - 1; c >= 0; c--)
            bmpi_sched_send(s, bmpi_coll_ofs(buf, off, type), len, type, t.child[c]);
        size_t next = off + seg;
        if (next < count)
            bmpi_sched_recv(s, bmpi_coll_ofs(buf, next, type),
                            count - next < seg ? count - next : seg, type, t.parent);
        bmpi_sched_fence(s);
    }
}
