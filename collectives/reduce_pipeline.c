/*
 * Reduce, pipelined binomial (commutative ops only): the vector is cut
 * into segments that flow up a binomial tree one round apart. A rank pulls
 * a child's segment (a single-copy read by the receiver on shared memory)
 * and reduces it while it is still in cache, parents and children work on
 * different segments at the same time, and the temporary memory is a few
 * segments whatever the message size. Every element is reduced once and
 * crosses one edge of the tree: the least total work of any algorithm,
 * which is what counts when ranks share cores.
 */
#include "config.h"

#include "collectives/coll.h"
#include "collectives/coll_impl.h"

/* Small enough that a segment and its partner stay in cache while
 * reduced; 64 KiB to 256 KiB measured alike at 2 and 4 ranks. */
#define SEGMENT_BYTES (128u * 1024u)

void bmpi_coll_binomial_tree(int p, int r, int root, struct bmpi_tree *t)
{
    int rel = (r - root + p) % p;
    t->parent = -1;
    t->nchild = 0;
    for (int mask = 1; mask < p; mask <<= 1) {
        if (rel & mask) {
            t->parent = (rel - mask + root) % p;
            break;
        }
        if (rel + mask < p)
            t->child[t->nchild++] = (rel + mask + root) % p;
    }
}

size_t bmpi_coll_segment_count(MPI_Datatype type, size_t count, size_t bytes)
{
    size_t tsize = bmpi_coll_tsize(type);
    size_t seg = tsize ? bytes / tsize : count;
    return seg ? seg : 1;
}

/* A leaf has nothing to combine: it offers every segment at once and the
 * parent pulls them as it goes, without the leaf being scheduled again. */
static void leaf(struct bmpi_sched *s, const void *mine, size_t count, MPI_Datatype type,
                 size_t seg, int parent)
{
    for (size_t off = 0; off < count; off += seg)
        bmpi_sched_send(s, bmpi_coll_ofs(mine, off, type), count - off < seg ? count - off : seg,
                        type, parent);
    bmpi_sched_fence(s);
}

void bmpi_coll_reduce_pipeline(struct bmpi_sched *s, const void *sbuf, void *rbuf, size_t count,
                               MPI_Datatype type, int root)
{
    struct bmpi_tree t;
    bmpi_coll_binomial_tree(s->comm->size, s->comm->rank, root, &t);
    const void *mine = sbuf == MPI_IN_PLACE ? rbuf : sbuf; /* in place: only at the root */
    size_t seg = bmpi_coll_segment_count(type, count, SEGMENT_BYTES);
    if (t.nchild == 0) {
        leaf(s, mine, count, type, seg, t.parent);
        return;
    }
    /* The first child's segment lands in the accumulator and mine is
     * reduced into it (commutative), unless mine already is the
     * accumulator (in place at the root). Below the root the accumulator
     * alternates between two segments: one is being sent up while the
     * next is filled. */
    bool at_root = t.parent < 0;
    int direct = sbuf == MPI_IN_PLACE ? 0 : 1;
    char *slot[2] = {NULL, NULL}, *tmp[32] = {NULL};
    for (int i = 0; !at_root && i < 2; i++)
        if (!(slot[i] = bmpi_sched_tmpbuf(s, seg, type)))
            return;
    for (int c = direct; c < t.nchild; c++)
        if (!(tmp[c] = bmpi_sched_tmpbuf(s, seg, type)))
            return;
    for (size_t off = 0, k = 0; off < count; off += seg, k++) {
        size_t len = count - off < seg ? count - off : seg;
        char *acc = at_root ? bmpi_coll_ofs(rbuf, off, type) : slot[k % 2];
        for (int c = 0; c < t.nchild; c++)
            bmpi_sched_recv(s, c < direct ? acc : tmp[c], len, type, t.child[c]);
        bmpi_sched_fence(s);
        if (direct)
            bmpi_sched_reduce(s, bmpi_coll_ofs(mine, off, type), acc, len, type);
        for (int c = direct; c < t.nchild; c++)
            bmpi_sched_reduce(s, tmp[c], acc, len, type);
        if (!at_root)
            bmpi_sched_send(s, acc, len, type, t.parent);
    }
    bmpi_sched_fence(s);
}
