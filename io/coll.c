/*
 * Collective data access (io/file.h, docs/io.md): the _all, _at_all,
 * their nonblocking (iread_all ...) and split (_begin/_end) forms, all
 * served by one nonblocking engine, a state machine on struct bmpi_io_op
 * that the progress engine advances (pending.c).
 *
 * The engine is ROMIO's two-phase collective buffering:
 *
 *   ranges  every rank states the file bytes [lo, hi) its access touches
 *           (one MPI_Iallgather, posted at the start, so that operations
 *           overlapping in time post their collectives in program order);
 *   choice  when the ranges do not interleave and the hint does not force
 *           collective buffering (romio_cb_write / romio_cb_read), or when
 *           it disables it, each rank does its own part independently, in
 *           bounded steps: large contiguous blocks go fastest that way;
 *   plan    otherwise the aggregate range [min lo, max hi) is cut into one
 *           contiguous file domain per aggregator (cb_nodes of them, one
 *           per node by default; boundaries on striping_unit multiples);
 *   lists   each rank sends each aggregator the list of its file runs in
 *           that aggregator's domain (a count, then the runs);
 *   rounds  each round covers at most cb_buffer_size bytes of every
 *           domain: for a write, ranks send the pieces that fall in the
 *           round's windows to the aggregators (from their buffer in
 *           place when it is contiguous, else packed), which write each
 *           window's span with one pwrite (reading it first when the
 *           pieces leave holes); a read is the mirror image;
 *   errors  each aggregator sends its error class to every rank, and a
 *           rank takes the first error of an aggregator that held its data,
 *           so a failed write is reported where the data came from and no
 *           rank waits for a message that never comes.
 *
 * After the range exchange everything goes by point-to-point messages on
 * the file's private communicator, tagged per operation (COLL_TAG_BASE +
 * the file's count of collective operations), so several nonblocking
 * collectives of one file can be in flight at once. advance() never
 * blocks: it tests the outstanding messages and, when they are done, does
 * the next step (one round's I/O at most).
 *
 * The node map (which ranks share a node), needed to place the
 * aggregators, is computed on the first collective access of a file with
 * MPI_Comm_split_type, a blocking collective, and kept in struct
 * bmpi_io_coll until MPI_File_close.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include "io/file.h"
#include "runtime/api.h"
#include "runtime/comm.h"
#include "runtime/p2p.h"
#include "transport/copy.h"

/* Tags of the protocol on f->comm: one per collective operation of the
 * file, wrapping after COLL_TAG_SPAN operations (far more than can be in
 * flight at once). */
#define COLL_TAG_BASE 0x10000000
#define COLL_TAG_SPAN 0x01000000

/* Bytes one step of the independent path moves. */
#define COLL_INDEP_STEP (4u << 20)
/* A window whose pieces tile it is written with pwritev from where the
 * pieces are when they average at least this many bytes; below, copying
 * them into one buffer for one pwrite is cheaper (docs/io.md). */
#define COLL_GATHER_MIN 4096u

/* The large buffers of one operation: what a rank sends (xbuf), what an
 * aggregator receives (abuf) and the window's file bytes (cbuf). */
struct coll_buffers {
    char *xbuf, *abuf, *cbuf;
    size_t xcap, acap, ccap;
};

/* What a file keeps for its collective accesses. */
struct bmpi_io_coll {
    int *aggr_order; /* every rank, in the order aggregators are taken:
                      * the first rank of each node, then the second ... */
    int nnodes;
    unsigned seq; /* collective operations started on the file */
    /* the buffers of the last operation, for the next one: buffers of
     * cb_buffer_size come from the shared heap, whose pages a free gives
     * back to the system, and faulting them in again costs as much as
     * copying into them */
    struct coll_buffers spare;
};

static void buffers_free(struct coll_buffers *b)
{
    free(b->xbuf);
    free(b->abuf);
    free(b->cbuf);
    *b = (struct coll_buffers){0};
}

/* Keep the larger of two buffers in *keep, free the other. */
static void keep_larger(char **keep, size_t *keep_cap, char *other, size_t other_cap)
{
    if (other_cap > *keep_cap) {
        free(*keep);
        *keep = other;
        *keep_cap = other_cap;
    } else {
        free(other);
    }
}

/* Keep the larger of each of b's buffers and keep's in keep; b is empty
 * afterwards. */
static void buffers_keep(struct coll_buffers *keep, struct coll_buffers *b)
{
    keep_larger(&keep->xbuf, &keep->xcap, b->xbuf, b->xcap);
    keep_larger(&keep->abuf, &keep->acap, b->abuf, b->acap);
    keep_larger(&keep->cbuf, &keep->ccap, b->cbuf, b->ccap);
    *b = (struct coll_buffers){0};
}

/* The round buffers of the files closed so far, for the next file's
 * collective accesses: a program that writes each checkpoint to a new
 * file would otherwise allocate them, and fault every page in, for every
 * file (docs/io.md). Process state of this module, freed by
 * bmpi_io_coll_finalize: at most three buffers of about cb_buffer_size,
 * two of them on aggregators only. */
static struct coll_buffers closed_files_spare;

void bmpi_io_coll_finalize(void)
{
    buffers_free(&closed_files_spare);
}

enum split_kind { SPLIT_READ_ALL, SPLIT_WRITE_ALL, SPLIT_READ_AT_ALL, SPLIT_WRITE_AT_ALL };

/* A split collective between _begin and _end. */
struct bmpi_io_split {
    struct bmpi_request *req;
    const void *buf;
    enum split_kind kind;
};

enum coll_state { ST_RANGES, ST_INDEP, ST_COUNTS, ST_LISTS, ST_ROUND, ST_ERRORS };

/* A file run [off, off + len). On the rank that owns the data, mem is its
 * position in the rank's packed stream; in an aggregator's round, its
 * position in the round's receive (write) or send (read) buffer. */
struct coll_piece {
    MPI_Offset off;
    size_t len;
    size_t mem;
};

struct coll_pieces {
    struct coll_piece *v;
    size_t n, cap;
};

/* A piece of an aggregator's window in file order, and where its bytes
 * wait for the write: another rank's in abuf, the aggregator's own already
 * in place in the window (cbuf). */
struct coll_slot {
    MPI_Offset off;
    size_t len;
    const char *src;
};

/* A k-way merge of the ranks' sorted piece lists: a min-heap of ranks by
 * the offset of their next piece. */
struct coll_merge {
    int *heap;
    size_t *next; /* per rank: its next piece in ap */
};

/* Where a walk over a sorted run list stands. */
struct run_cursor {
    size_t idx;
    size_t used; /* bytes of runs[idx] already taken */
};

struct coll_op {
    struct bmpi_io_op op;
    struct bmpi_io_access a;    /* as the entry point gave it; type retained */
    struct bmpi_io_access w;    /* the data exchanged: a itself, or a's file representation in conv */
    void *conv;                 /* non-native representation: packed file-format data */
    MPI_Offset offset;          /* etypes of the view */
    MPI_Offset start;           /* offset in bytes of the view's stream */
    int tag;
    enum coll_state state;
    int err;                    /* this rank's error class */
    char reason[256];           /* why, as recorded when it happened */
    size_t done;                /* bytes of this rank's data moved */

    MPI_Request *reqs;
    int nreqs, reqcap;

    MPI_Offset range[2];        /* this rank's [lo, hi) */
    MPI_Offset *ranges;         /* everybody's */

    size_t indep_elems;         /* independent path: elements of w done */

    /* the plan, alike on every rank */
    int naggr, my_aggr;         /* my_aggr: index in aggr, or -1 */
    const int *aggr;            /* ranks of the aggregators */
    MPI_Offset *fd;             /* domain k is [fd[k], fd[k + 1]) */
    size_t cb;
    long nrounds, round;

    /* this rank's data: runs grouped by aggregator, sorted */
    struct coll_pieces mine;
    size_t *mine_at;            /* group k is mine.v[mine_at[k] .. mine_at[k + 1]) */
    int64_t *mine_count;        /* runs per group, as sent */
    struct run_cursor *mcur;
    struct coll_pieces xp;      /* this round's pieces, grouped by aggregator */
    size_t *xat;                /* aggregator k's are xp[xat[k], xat[k + 1]) */
    size_t *xsize;              /* bytes per aggregator this round */
    char **xmem;                /* per aggregator: its pieces in my memory, in
                                 * place, or NULL: packed in xbuf (never mine) */
    char *mem_base;             /* contiguous memory: where the stream starts */
    char *xbuf;
    size_t xcap;
    bool *touched;              /* aggregators that held some of my data */
    int *aerr;                  /* their error classes, at the end */
    struct bmpi_dt_cursor mem;

    /* aggregator: the runs of every rank in my domain */
    int64_t *ocount;
    struct coll_piece **others; /* mine: my own list, in op->mine */
    struct run_cursor *ocur;
    struct coll_pieces ap;      /* this round's pieces, grouped by rank */
    size_t *aat;                /* rank i's are ap[aat[i], aat[i + 1]); mine are not in abuf */
    size_t *asize;
    char *abuf;
    size_t acap;
    char *cbuf;                 /* the window's file bytes */
    size_t ccap;
    MPI_Offset span_lo, span_hi; /* what this round's pieces touch */
    struct coll_pieces runs;    /* write: what the pieces cover, merged */
    struct coll_slot *slots;    /* write: the pieces in file order */
    size_t slotcap;
    struct coll_merge merge;
    bool gather;                /* write: pwritev from the slots, no copy into cbuf */
    struct iovec *iov;
    size_t iovcap;
    bool rmw;                   /* write: the span is read to fill holes */
    int errs_out;               /* the error class sent to every rank */
};

/* --- small helpers ------------------------------------------------------ */

static int set_err(struct coll_op *op, int err)
{
    if (!op->err && err) {
        op->err = err;
        snprintf(op->reason, sizeof(op->reason), "%s", bmpi_err_reason());
    }
    return err;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 16;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * elem);
    if (!q)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for %zu bytes of collective I/O state", n * elem);
    *p = q;
    *cap = n;
    return 0;
}

/* A round buffer of at least need bytes whose old contents do not matter
 * (doubling, as grow), its first need bytes faulted in with one call (a
 * kernel without MADV_POPULATE_WRITE leaves them to fault): every page is
 * written in the round that needs it, and a fault per page costs more
 * than the copy into it. Buffers this large go back to the system at free
 * (glibc's mmap threshold, and the shared heap that mirrors it), so each
 * new file's first rounds would fault them in again. */
static int buffer_grow(char **p, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 4096;
    while (n < need)
        n *= 2;
    free(*p);
    *cap = 0;
    if (!(*p = malloc(n)))
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for %zu bytes of collective I/O buffer", n);
    *cap = n;
    bmpi_prefault(*p, need);
    return 0;
}

static int pieces_push(struct coll_pieces *p, MPI_Offset off, size_t len, size_t mem)
{
    int err = grow((void **)&p->v, &p->cap, p->n + 1, sizeof(*p->v));
    if (err)
        return err;
    p->v[p->n++] = (struct coll_piece){off, len, mem};
    return 0;
}

static MPI_Request *new_req(struct coll_op *op)
{
    size_t cap = (size_t)op->reqcap;
    if (grow((void **)&op->reqs, &cap, (size_t)op->nreqs + 1, sizeof(*op->reqs)))
        return NULL;
    op->reqcap = (int)cap;
    return &op->reqs[op->nreqs++];
}

/* The round's pieces between an aggregator and the other ranks are
 * copied by the other ranks where the transport can (runtime/p2p.h,
 * bmpi_irecv_copied_by): the copies run on their cores, and the aggregator
 * never maps their buffers, only they its round buffer, which it reuses. */
enum post_kind {
    POST_SEND,
    POST_RECV,
    POST_RECV_SENDER_WRITES, /* an aggregator's write-round receive */
    POST_RECV_RECEIVER_READS, /* a read round's pieces from an aggregator */
};

static int start_message(struct coll_op *op, enum post_kind kind, void *buf, size_t bytes, int peer,
                         MPI_Request *r)
{
    MPI_Comm comm = op->op.file->comm;
    if (kind == POST_SEND)
        return PMPI_Isend_c(buf, (MPI_Count)bytes, MPI_BYTE, peer, op->tag, comm, r);
    if (kind == POST_RECV)
        return PMPI_Irecv_c(buf, (MPI_Count)bytes, MPI_BYTE, peer, op->tag, comm, r);
    struct bmpi_comm *c = bmpi_comm_get(comm);
    struct bmpi_request *req;
    enum bmpi_recv_copy who = kind == POST_RECV_SENDER_WRITES ? BMPI_RECV_COPY_SENDER : BMPI_RECV_COPY_RECEIVER;
    if (!c || bmpi_irecv_copied_by(buf, bytes, MPI_BYTE, peer, op->tag, c, c->context_id, who, &req))
        return MPI_ERR_OTHER;
    *r = bmpi_request_handle(req);
    return MPI_SUCCESS;
}

/* Point-to-point on the file's communicator; a failure to post is this
 * rank's error (the peer then waits: that is a broken transport). */
static void post(struct coll_op *op, enum post_kind kind, void *buf, size_t bytes, int peer)
{
    MPI_Request *r = new_req(op);
    if (!r) {
        set_err(op, MPI_ERR_NO_MEM);
        return;
    }
    if (start_message(op, kind, buf, bytes, peer, r) != MPI_SUCCESS) {
        op->nreqs--;
        set_err(op, bmpi_err_set(MPI_ERR_OTHER, "collective I/O on %s: posting a message to rank %d failed",
                                 op->op.file->path, peer));
    }
}

static bool reqs_done(struct coll_op *op)
{
    if (!op->nreqs)
        return true;
    int flag = 0;
    int rc = PMPI_Testall(op->nreqs, op->reqs, &flag, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) {
        set_err(op, bmpi_err_set(MPI_ERR_OTHER, "collective I/O on %s: a message failed", op->op.file->path));
        flag = 1;
    }
    if (flag)
        op->nreqs = 0;
    return flag != 0;
}

/* --- the per-file state and the node map ----------------------------------- */

/* Ranks in aggregator order: node leaders in rank order, then the second
 * rank of each node, and so on, so that k aggregators spread over nodes. */
static int aggr_order(const int *leader, int size, int *order, int *nnodes)
{
    int *pos = malloc((size_t)size * sizeof(int));      /* a rank's index within its node */
    int *seen = calloc((size_t)size, sizeof(int));      /* ranks of a node so far, by leader */
    if (!pos || !seen) {
        free(pos);
        free(seen);
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for the node map");
    }
    int n = 0, maxpos = 0;
    *nnodes = 0;
    for (int r = 0; r < size; r++) {
        pos[r] = seen[leader[r]]++;
        maxpos = pos[r] > maxpos ? pos[r] : maxpos;
        *nnodes += leader[r] == r;
    }
    for (int j = 0; j <= maxpos; j++)
        for (int r = 0; r < size; r++)
            if (pos[r] == j)
                order[n++] = r;
    free(pos);
    free(seen);
    return 0;
}

/* Each rank's node leader, its node's lowest rank: from the job's node map
 * when every rank is of this job, which costs no message (so that a first
 * MPI_File_iwrite_all does not block); otherwise, when the caller is a
 * collective call (may_block), agreed with MPI_Comm_split_type. */
static int node_leaders(struct bmpi_file *f, bool may_block, int *leader)
{
    struct bmpi_comm *c = bmpi_comm_get(f->comm);
    if (c && bmpi_comm_node_leaders(c, leader))
        return MPI_SUCCESS;
    if (!may_block)
        return MPI_ERR_PENDING;
    MPI_Comm node = MPI_COMM_NULL;
    int me = f->rank;
    int rc = PMPI_Comm_split_type(f->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Bcast(&me, 1, MPI_INT, 0, node);
    if (node != MPI_COMM_NULL)
        PMPI_Comm_free(&node);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Allgather(&me, 1, MPI_INT, leader, 1, MPI_INT, f->comm);
    return rc;
}

static int coll_file_state(struct bmpi_file *f, bool may_block, struct bmpi_io_coll **out)
{
    if (f->coll) {
        *out = f->coll;
        return 0;
    }
    struct bmpi_io_coll *c = calloc(1, sizeof(*c));
    int *leader = malloc((size_t)f->size * sizeof(int));
    if (c)
        c->aggr_order = malloc((size_t)f->size * sizeof(int));
    if (!c || !leader || !c->aggr_order) {
        free(leader);
        if (c)
            free(c->aggr_order);
        free(c);
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for the node map of %s", f->path);
    }
    int rc = node_leaders(f, may_block, leader);
    int err = rc == MPI_SUCCESS ? aggr_order(leader, f->size, c->aggr_order, &c->nnodes)
              : rc == MPI_ERR_PENDING ? rc
                                      : bmpi_err_set(MPI_ERR_OTHER, "the node map of %s could not be built", f->path);
    free(leader);
    if (err) {
        free(c->aggr_order);
        free(c);
        return err;
    }
    buffers_keep(&c->spare, &closed_files_spare);
    f->coll = c;
    *out = c;
    return 0;
}

static int aggregators(const struct bmpi_file *f)
{
    int naggr = f->hints.cb_nodes > 0 ? f->hints.cb_nodes : f->coll->nnodes;
    return naggr < f->size ? naggr : f->size;
}

int bmpi_io_coll_aggregators(struct bmpi_file *f)
{
    struct bmpi_io_coll *c;
    return coll_file_state(f, false, &c) ? 0 : aggregators(f);
}

void bmpi_io_coll_close(struct bmpi_file *f)
{
    if (f->split) {
        /* closing with a split collective open is erroneous: let its
         * request go when the operation ends */
        if (f->split->req->complete)
            bmpi_request_free(f->split->req);
        else
            f->split->req->user_freed = true;
        free(f->split);
        f->split = NULL;
    }
    if (f->coll) {
        buffers_keep(&closed_files_spare, &f->coll->spare);
        free(f->coll->aggr_order);
        free(f->coll);
        f->coll = NULL;
    }
}

/* --- finishing --------------------------------------------------------------- */

static void coll_finish(struct coll_op *op)
{
    bool two_phase = op->state != ST_RANGES && op->state != ST_INDEP;
    if (two_phase && op->a.dir == BMPI_IO_WRITE)
        op->done = op->a.bytes;
    if (!op->err && op->a.dir == BMPI_IO_READ && op->conv &&
        set_err(op, bmpi_datarep_from_file(op->op.file->view.rep, &op->a, op->conv, op->done)))
        op->done = 0;
    if (op->err)
        bmpi_err_set(op->err, "%s", op->reason);
    bmpi_io_op_finish(&op->op, op->err, &op->a, op->err && op->a.dir == BMPI_IO_WRITE ? 0 : op->done);
}

static void coll_destroy(struct bmpi_io_op *o)
{
    struct coll_op *op = (struct coll_op *)o;
    if (op->others)
        for (int i = 0; i < o->file->size; i++)
            if (i != o->file->rank) /* mine point into op->mine */
                free(op->others[i]);
    free(op->others);
    free(op->ocount);
    free(op->ocur);
    free(op->ap.v);
    free(op->runs.v);
    free(op->slots);
    free(op->iov);
    free(op->merge.heap);
    free(op->merge.next);
    free(op->aat);
    free(op->asize);
    struct coll_buffers mine = {.xbuf = op->xbuf, .abuf = op->abuf, .cbuf = op->cbuf,
                                .xcap = op->xcap, .acap = op->acap, .ccap = op->ccap};
    struct bmpi_io_coll *c = o->file->coll;
    if (c)
        buffers_keep(&c->spare, &mine);
    else
        buffers_free(&mine);
    free(op->mine.v);
    free(op->mine_at);
    free(op->mine_count);
    free(op->mcur);
    free(op->xp.v);
    free(op->xat);
    free(op->xsize);
    free(op->xmem);
    free(op->touched);
    free(op->aerr);
    free(op->fd);
    free(op->ranges);
    free(op->reqs);
    free(op->conv);
    bmpi_dt_release(op->a.dt);
    free(op);
}

/* --- the independent path ------------------------------------------------------ */

static size_t gcd(size_t a, size_t b)
{
    while (b) {
        size_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* One bounded step: the next elements of the access, independently
 * (bmpi_io_independent converts a non-native representation itself).
 * Returns true when the access is over. */
static bool indep_step(struct coll_op *op)
{
    struct bmpi_file *f = op->op.file;
    size_t size = bmpi_io_access_element(&op->a);
    /* a step starts on an etype: whole multiples of unit elements */
    size_t unit = f->view.esize / gcd(size, f->view.esize);
    size_t n = COLL_INDEP_STEP / size / unit * unit;
    if (n < unit)
        n = unit;
    if (n > op->a.count - op->indep_elems)
        n = op->a.count - op->indep_elems;
    struct bmpi_io_access sub = op->a;
    sub.buf = (char *)op->a.buf + (MPI_Aint)op->indep_elems * bmpi_dt_extent(op->a.dt);
    sub.count = n;
    sub.bytes = n * size;
    size_t moved = 0;
    MPI_Offset at = op->offset + (MPI_Offset)(op->indep_elems * size / f->view.esize);
    int err = bmpi_io_independent(f, &sub, at, &moved);
    op->done += moved;
    op->indep_elems += n;
    if (set_err(op, err))
        return true;
    return op->indep_elems == op->a.count || moved < sub.bytes; /* a short read: end of file */
}

/* --- the plan ------------------------------------------------------------------------ */

static int cmp_range(const void *x, const void *y)
{
    const MPI_Offset *a = x, *b = y;
    return a[0] < b[0] ? -1 : a[0] > b[0];
}

/* Whether the non-empty ranges of the ranks overlap in file order; also
 * the aggregate range. Returns false when every range is empty. */
static bool ranges_scan(struct coll_op *op, bool *interleaved, MPI_Offset *lo, MPI_Offset *hi)
{
    int size = op->op.file->size, n = 0;
    MPI_Offset *r = op->ranges;
    for (int i = 0; i < size; i++)
        if (r[2 * i] < r[2 * i + 1]) {
            r[2 * n] = r[2 * i];
            r[2 * n + 1] = r[2 * i + 1];
            n++;
        }
    if (!n)
        return false;
    qsort(r, (size_t)n, 2 * sizeof(MPI_Offset), cmp_range);
    *interleaved = false;
    *lo = r[0];
    *hi = r[1];
    for (int i = 1; i < n; i++) {
        if (r[2 * i] < *hi)
            *interleaved = true;
        if (r[2 * i + 1] > *hi)
            *hi = r[2 * i + 1];
    }
    return true;
}

static int plan(struct coll_op *op, MPI_Offset lo, MPI_Offset hi)
{
    struct bmpi_file *f = op->op.file;
    int naggr = aggregators(f);
    op->naggr = naggr;
    op->aggr = f->coll->aggr_order;
    op->my_aggr = -1;
    for (int k = 0; k < naggr; k++)
        if (op->aggr[k] == f->rank)
            op->my_aggr = k;
    op->fd = malloc((size_t)(naggr + 1) * sizeof(MPI_Offset));
    if (!op->fd)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for the file domains of %s", f->path);
    MPI_Offset each = (hi - lo + naggr - 1) / naggr;
    MPI_Offset su = (MPI_Offset)f->hints.striping_unit;
    op->fd[0] = lo;
    for (int k = 1; k < naggr; k++) {
        MPI_Offset b = lo + k * each;
        if (su > 0)
            b = (b + su - 1) / su * su;
        if (b < op->fd[k - 1])
            b = op->fd[k - 1];
        op->fd[k] = b < hi ? b : hi;
    }
    op->fd[naggr] = hi;
    op->cb = f->hints.cb_buffer_size; /* file.c's default when no hint gives it */
    op->nrounds = 0;
    for (int k = 0; k < naggr; k++) {
        long r = (long)((op->fd[k + 1] - op->fd[k] + (MPI_Offset)op->cb - 1) / (MPI_Offset)op->cb);
        if (r > op->nrounds)
            op->nrounds = r;
    }
    return 0;
}

static int cmp_piece(const void *x, const void *y)
{
    const struct coll_piece *a = x, *b = y;
    return a->off < b->off ? -1 : a->off > b->off;
}

/* The per-aggregator and, on an aggregator, per-rank bookkeeping. */
static int alloc_state(struct coll_op *op)
{
    size_t naggr = (size_t)op->naggr, size = (size_t)op->op.file->size;
    op->mine_at = calloc(naggr + 1, sizeof(size_t));
    op->mine_count = calloc(naggr, sizeof(int64_t));
    op->mcur = calloc(naggr, sizeof(struct run_cursor));
    op->xat = calloc(naggr + 1, sizeof(size_t));
    op->xsize = calloc(naggr, sizeof(size_t));
    op->xmem = calloc(naggr, sizeof(char *));
    op->touched = calloc(naggr, sizeof(bool));
    op->aerr = calloc(naggr, sizeof(int));
    bool ok = op->mine_at && op->mine_count && op->mcur && op->xat && op->xsize && op->xmem && op->touched && op->aerr;
    if (ok && op->my_aggr >= 0) {
        op->ocount = calloc(size, sizeof(int64_t));
        op->others = calloc(size, sizeof(*op->others));
        op->ocur = calloc(size, sizeof(*op->ocur));
        op->asize = calloc(size, sizeof(size_t));
        op->aat = calloc(size + 1, sizeof(size_t));
        op->merge.heap = calloc(size, sizeof(int));
        op->merge.next = calloc(size, sizeof(size_t));
        ok = op->ocount && op->others && op->ocur && op->asize && op->aat && op->merge.heap && op->merge.next;
    }
    return ok ? 0 : bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for collective I/O on %s", op->op.file->path);
}

/* The domain of file offset off, searched upward from *k (offsets come
 * in increasing order). */
static int domain_of(const struct coll_op *op, MPI_Offset off, int *k)
{
    while (*k < op->naggr - 1 && off >= op->fd[*k + 1])
        (*k)++;
    return *k;
}

/* Whether [off, off + len) reaches past the end of domain d (the last
 * domain has none). */
static bool past_domain(const struct coll_op *op, int d, MPI_Offset off, size_t len)
{
    return d < op->naggr - 1 && off + (MPI_Offset)len > op->fd[d + 1];
}

/* Whether one of my sorted runs reaches past the end of its domain. With
 * one aggregator, or boundaries between runs, none does, and the runs
 * stay where they are: a fresh copy of a list of a million runs costs
 * more than the rest of the plan where first touches of memory are slow
 * (a virtual machine's). */
static bool crosses_domains(const struct coll_op *op)
{
    int k = 0;
    for (size_t i = 0; i < op->mine.n; i++) {
        const struct coll_piece *p = &op->mine.v[i];
        if (past_domain(op, domain_of(op, p->off, &k), p->off, p->len))
            return true;
    }
    return false;
}

/* Split my sorted runs at the domain boundaries: one more piece per
 * boundary crossed. */
static int split_at_domains(struct coll_op *op)
{
    struct coll_pieces split = {0};
    int k = 0, err;
    for (size_t i = 0; i < op->mine.n; i++) {
        struct coll_piece p = op->mine.v[i];
        while (p.len) {
            int d = domain_of(op, p.off, &k);
            size_t len = past_domain(op, d, p.off, p.len) ? (size_t)(op->fd[d + 1] - p.off) : p.len;
            if ((err = pieces_push(&split, p.off, len, p.mem))) {
                free(split.v);
                return err;
            }
            p.off += (MPI_Offset)len;
            p.mem += len;
            p.len -= len;
        }
    }
    free(op->mine.v);
    op->mine = split;
    return 0;
}

/* This rank's file runs, split at the domain boundaries and grouped by
 * aggregator; for a read, the bytes before the end of file too. */
static int build_mine(struct coll_op *op)
{
    struct bmpi_file *f = op->op.file;
    struct bmpi_io_map m;
    struct bmpi_io_run runs[64];
    size_t mem = 0;
    int n, err;
    bool sorted = true;
    bmpi_io_map_init(&m, &f->view, op->start, op->w.bytes);
    while ((n = bmpi_io_map_next(&m, runs, 64)) > 0)
        for (int i = 0; i < n; i++) {
            if (op->mine.n && runs[i].off < op->mine.v[op->mine.n - 1].off)
                sorted = false;
            if ((err = pieces_push(&op->mine, runs[i].off, runs[i].len, mem)))
                return err;
            mem += runs[i].len;
        }
    /* filetypes are monotone (MPI 4.1 14.3), so this is for safety only */
    if (!sorted)
        qsort(op->mine.v, op->mine.n, sizeof(struct coll_piece), cmp_piece);

    if (op->a.dir == BMPI_IO_READ) {
        struct stat st;
        MPI_Offset eof = fstat(f->fd, &st) == 0 ? (MPI_Offset)st.st_size : 0;
        for (size_t i = 0; i < op->mine.n; i++)
            if (op->mine.v[i].off < eof)
                op->done += eof - op->mine.v[i].off >= (MPI_Offset)op->mine.v[i].len
                                ? op->mine.v[i].len
                                : (size_t)(eof - op->mine.v[i].off);
    }

    if (crosses_domains(op) && (err = split_at_domains(op)))
        return err;
    int k = 0;
    for (size_t i = 0; i < op->mine.n; i++)
        op->mine_count[domain_of(op, op->mine.v[i].off, &k)]++;
    for (k = 0; k < op->naggr; k++)
        op->mine_at[k + 1] = op->mine_at[k] + (size_t)op->mine_count[k];
    return 0;
}

/* --- rounds ---------------------------------------------------------------------------- */

static void window(const struct coll_op *op, int k, MPI_Offset *lo, MPI_Offset *hi)
{
    MPI_Offset cb = (MPI_Offset)op->cb;
    *lo = op->fd[k] + op->round * cb;
    *hi = *lo + cb < op->fd[k + 1] ? *lo + cb : op->fd[k + 1];
    if (*lo > *hi)
        *lo = *hi;
}

/* The parts of the sorted runs[c..n) that lie before hi, appended to out
 * (mem advanced within a run; with at != NULL, mem is *at, counted on);
 * returns their bytes. Earlier windows took everything before lo. */
static int take(const struct coll_piece *runs, size_t n, struct run_cursor *c, MPI_Offset hi,
                struct coll_pieces *out, size_t *at, size_t *bytes)
{
    *bytes = 0;
    for (; c->idx < n; c->idx++, c->used = 0) {
        const struct coll_piece *r = &runs[c->idx];
        MPI_Offset off = r->off + (MPI_Offset)c->used;
        if (off >= hi)
            return 0;
        size_t len = r->len - c->used;
        if (off + (MPI_Offset)len > hi)
            len = (size_t)(hi - off);
        int err = pieces_push(out, off, len, at ? *at : r->mem + c->used);
        if (err)
            return err;
        if (at)
            *at += len;
        *bytes += len;
        c->used += len;
        if (c->used < r->len)
            return 0;
    }
    return 0;
}

/* The bytes of the stream at [pos, pos + len) of my data to or from p. */
static void mem_move(struct coll_op *op, size_t pos, char *p, size_t len)
{
    if (op->mem.pos != pos)
        bmpi_dt_cursor_seek(&op->mem, pos);
    if (op->a.dir == BMPI_IO_WRITE)
        bmpi_dt_pack(&op->mem, p, len);
    else
        bmpi_dt_unpack(&op->mem, p, len);
}

/* Where my pieces xp[first, last) lie in my memory when it is contiguous
 * and they are one stretch of it, else NULL. They are: the runs of one
 * aggregator's window come in stream order with nothing of another window
 * between them, so a contiguous buffer needs no packing. */
static char *mem_stretch(const struct coll_op *op, size_t first, size_t last)
{
    if (!op->mem_base || first == last)
        return NULL;
    for (size_t i = first + 1; i < last; i++)
        if (op->xp.v[i].mem != op->xp.v[i - 1].mem + op->xp.v[i - 1].len)
            return NULL;
    return op->mem_base + op->xp.v[first].mem;
}

/* Aggregator k's pieces of this round between my memory and p. */
static void pieces_move(struct coll_op *op, int k, char *p)
{
    for (size_t i = op->xat[k]; i < op->xat[k + 1]; i++) {
        mem_move(op, op->xp.v[i].mem, p, op->xp.v[i].len);
        p += op->xp.v[i].len;
    }
}

/* My side of a round: the pieces in each aggregator's window sent from
 * my memory in place or packed (write), or received (read). The pieces
 * in my own window travel between my memory and the window's bytes
 * directly (round_complete). */
static int round_post_mine(struct coll_op *op)
{
    size_t total = 0, bytes;
    int err;
    op->xp.n = 0;
    for (int k = 0; k < op->naggr; k++) {
        MPI_Offset lo, hi;
        window(op, k, &lo, &hi);
        size_t first = op->mine_at[k];
        op->xat[k] = op->xp.n;
        if ((err = take(op->mine.v + first, op->mine_at[k + 1] - first, &op->mcur[k], hi, &op->xp, NULL, &bytes)))
            return err;
        op->xat[k + 1] = op->xp.n;
        op->xsize[k] = bytes;
        op->touched[k] |= bytes != 0;
        op->xmem[k] = k == op->my_aggr ? NULL : mem_stretch(op, op->xat[k], op->xat[k + 1]);
        if (k != op->my_aggr && !op->xmem[k])
            total += bytes;
    }
    if ((err = buffer_grow(&op->xbuf, &op->xcap, total)))
        return err;
    char *p = op->xbuf;
    for (int k = 0; k < op->naggr; k++) {
        if (!op->xsize[k] || k == op->my_aggr)
            continue;
        char *buf = op->xmem[k];
        if (!buf) {
            buf = p;
            p += op->xsize[k];
            if (op->a.dir == BMPI_IO_WRITE)
                pieces_move(op, k, buf);
        }
        post(op, op->a.dir == BMPI_IO_WRITE ? POST_SEND : POST_RECV_RECEIVER_READS, buf, op->xsize[k], op->aggr[k]);
    }
    return 0;
}

/* My own pieces of this round between my memory and the window's bytes. */
static void self_move(struct coll_op *op)
{
    if (op->my_aggr < 0)
        return;
    for (size_t i = op->xat[op->my_aggr]; i < op->xat[op->my_aggr + 1]; i++) {
        const struct coll_piece *p = &op->xp.v[i];
        mem_move(op, p->mem, op->cbuf + (p->off - op->span_lo), p->len);
    }
}

/* --- the aggregator's pieces in file order ----------------------------- */

static MPI_Offset merge_key(const struct coll_op *op, int rank)
{
    return op->ap.v[op->merge.next[rank]].off;
}

static void heap_down(struct coll_op *op, size_t n, size_t i)
{
    int *h = op->merge.heap;
    for (;;) {
        size_t m = i, l = 2 * i + 1, r = l + 1;
        if (l < n && merge_key(op, h[l]) < merge_key(op, h[m]))
            m = l;
        if (r < n && merge_key(op, h[r]) < merge_key(op, h[m]))
            m = r;
        if (m == i)
            return;
        int t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static struct coll_slot slot_of(const struct coll_op *op, size_t i, bool mine)
{
    const struct coll_piece *p = &op->ap.v[i];
    const char *src = mine ? op->cbuf + (p->off - op->span_lo) : op->abuf + p->mem;
    return (struct coll_slot){p->off, p->len, src};
}

/* This round's pieces in file order, in op->slots: each rank's are sorted
 * already (filetypes are monotone), so a merge of the ranks' lists. */
static int order_pieces(struct coll_op *op)
{
    struct bmpi_file *f = op->op.file;
    size_t n = 0, at = 0;
    int err = grow((void **)&op->slots, &op->slotcap, op->ap.n, sizeof(*op->slots));
    if (err)
        return err;
    for (int i = 0; i < f->size; i++) {
        op->merge.next[i] = op->aat[i];
        if (op->aat[i] < op->aat[i + 1])
            op->merge.heap[n++] = i;
    }
    for (size_t i = n; i-- > 0;)
        heap_down(op, n, i);
    while (n) {
        int r = op->merge.heap[0];
        op->slots[at++] = slot_of(op, op->merge.next[r], r == f->rank);
        if (++op->merge.next[r] == op->aat[r + 1])
            op->merge.heap[0] = op->merge.heap[--n];
        heap_down(op, n, 0);
    }
    return 0;
}

/* The contiguous runs that the slots cover, in op->runs: one run when they
 * leave no hole in [span_lo, span_hi). Returns whether they tile the span
 * exactly: no hole and no byte written twice. */
static bool merge_runs(struct coll_op *op)
{
    struct coll_pieces *r = &op->runs;
    bool tiled = true;
    r->n = 0;
    for (size_t i = 0; i < op->ap.n; i++) {
        const struct coll_slot *s = &op->slots[i];
        struct coll_piece *last = r->n ? &r->v[r->n - 1] : NULL;
        MPI_Offset last_end = last ? last->off + (MPI_Offset)last->len : 0;
        if (last && s->off <= last_end) {
            tiled &= s->off == last_end;
            MPI_Offset end = s->off + (MPI_Offset)s->len;
            if (end > last_end)
                last->len = (size_t)(end - last->off);
        } else {
            tiled &= !last;
            r->v[r->n++] = (struct coll_piece){s->off, s->len, 0};
        }
    }
    return tiled;
}

/* How the window is written: from the slots with one pwritev when they
 * tile the span in pieces large enough that the kernel's walk over them
 * costs less than a copy into cbuf; otherwise from cbuf. */
static int plan_write(struct coll_op *op)
{
    int err = grow((void **)&op->runs.v, &op->runs.cap, op->ap.n, sizeof(*op->runs.v));
    if (err || (err = order_pieces(op)))
        return err;
    bool tiled = merge_runs(op);
    size_t span = (size_t)(op->span_hi - op->span_lo);
    op->gather = tiled && span / op->ap.n >= COLL_GATHER_MIN;
    return 0;
}

/* Read the window's span into cbuf, zeros past the end of file. */
static int read_span(struct coll_op *op)
{
    size_t len = (size_t)(op->span_hi - op->span_lo), got = 0;
    int err = bmpi_io_pread(op->op.file, op->cbuf, len, op->span_lo, &got);
    if (err)
        got = 0;
    memset(op->cbuf + got, 0, len - got);
    return err;
}

/* This round's pieces of every rank in my window, in ap: where each
 * other rank's lie in abuf, and the span they touch. */
static int round_take(struct coll_op *op)
{
    struct bmpi_file *f = op->op.file;
    MPI_Offset lo, hi;
    size_t total = 0, self_at = 0, bytes;
    int err;
    window(op, op->my_aggr, &lo, &hi);
    op->ap.n = 0;
    for (int i = 0; i < f->size; i++) {
        bool self = i == f->rank;
        op->aat[i] = op->ap.n;
        if ((err = take(op->others[i], (size_t)op->ocount[i], &op->ocur[i], hi, &op->ap, self ? &self_at : &total,
                        &bytes)))
            return err;
        op->asize[i] = self ? 0 : bytes;
    }
    op->aat[f->size] = op->ap.n;
    op->span_lo = hi;
    op->span_hi = lo;
    for (size_t i = 0; i < op->ap.n; i++) {
        struct coll_piece *p = &op->ap.v[i];
        op->span_lo = p->off < op->span_lo ? p->off : op->span_lo;
        if (p->off + (MPI_Offset)p->len > op->span_hi)
            op->span_hi = p->off + (MPI_Offset)p->len;
    }
    if (!op->ap.n)
        return 0;
    return (err = buffer_grow(&op->abuf, &op->acap, total))
               ? err
               : buffer_grow(&op->cbuf, &op->ccap, (size_t)(op->span_hi - op->span_lo));
}

static bool ap_is_self(const struct coll_op *op, size_t i)
{
    int me = op->op.file->rank;
    return i >= op->aat[me] && i < op->aat[me + 1];
}

/* The messages with every other rank that has pieces in my window. */
static void exchange_others(struct coll_op *op)
{
    struct bmpi_file *f = op->op.file;
    size_t at = 0;
    enum post_kind kind = op->a.dir == BMPI_IO_READ ? POST_SEND : POST_RECV_SENDER_WRITES;
    for (int i = 0; i < f->size; at += op->asize[i], i++)
        if (op->asize[i])
            post(op, kind, op->abuf + at, op->asize[i], i);
}

/* The aggregator's side of a round: for a write, post the receives (the
 * span is read and written when they are done, round_complete); for a
 * read, read the span and send each other rank its pieces. */
static int round_post_aggr(struct coll_op *op)
{
    int err;
    if ((err = round_take(op)) || !op->ap.n)
        return err;
    if (op->a.dir == BMPI_IO_WRITE) {
        if ((err = plan_write(op)))
            return err;
        /* read-modify-write over holes; a file we cannot read gets one
         * write per run */
        op->rmw = op->runs.n > 1 && op->op.file->readable;
        exchange_others(op);
        return 0;
    }
    if (!op->err)
        set_err(op, read_span(op));
    else
        memset(op->cbuf, 0, (size_t)(op->span_hi - op->span_lo));
    for (size_t i = 0; i < op->ap.n; i++) {
        struct coll_piece *p = &op->ap.v[i];
        if (!ap_is_self(op, i))
            memcpy(op->abuf + p->mem, op->cbuf + (p->off - op->span_lo), p->len);
    }
    exchange_others(op);
    return 0;
}

/* The window's bytes through cbuf: other ranks' pieces copied in, then
 * the span (read-modify-write, or no hole) or each run. */
static void write_window(struct coll_op *op)
{
    struct bmpi_file *f = op->op.file;
    for (size_t i = 0; i < op->ap.n; i++) {
        struct coll_piece *p = &op->ap.v[i];
        if (!ap_is_self(op, i))
            memcpy(op->cbuf + (p->off - op->span_lo), op->abuf + p->mem, p->len);
    }
    if (op->rmw || op->runs.n == 1) {
        set_err(op, bmpi_io_pwrite(f, op->cbuf, (size_t)(op->span_hi - op->span_lo), op->span_lo));
        return;
    }
    for (size_t i = 0; i < op->runs.n && !op->err; i++) {
        const struct coll_piece *r = &op->runs.v[i];
        set_err(op, bmpi_io_pwrite(f, op->cbuf + (r->off - op->span_lo), r->len, r->off));
    }
}

/* The span written from the slots where they are (plan_write). */
static int write_slots(struct coll_op *op)
{
    int err = grow((void **)&op->iov, &op->iovcap, op->ap.n, sizeof(*op->iov));
    if (err)
        return err;
    for (size_t i = 0; i < op->ap.n; i++)
        op->iov[i] = (struct iovec){(void *)op->slots[i].src, op->slots[i].len};
    return bmpi_io_pwritev(op->op.file, op->iov, op->ap.n, op->span_lo);
}

/* The aggregator writes its window, in one step from the lock to the
 * unlock. The lock (atomic mode, and any read-modify-write) keeps another
 * process's bytes in the holes, as ROMIO locks there too; doing the read,
 * the merge and the write in one progress step keeps those of another
 * operation of this process in flight on the same bytes, which a lock
 * held by the same process cannot exclude. */
static void aggr_write(struct coll_op *op)
{
    struct bmpi_file *f = op->op.file;
    MPI_Offset len = op->span_hi - op->span_lo;
    bool lock = f->atomic || op->rmw;
    if (lock && set_err(op, bmpi_io_lock(f, op->span_lo, len, BMPI_IO_WRITE)))
        return;
    if (!op->rmw || !set_err(op, read_span(op))) {
        self_move(op);
        if (op->gather)
            set_err(op, write_slots(op));
        else
            write_window(op);
    }
    if (lock)
        bmpi_io_unlock(f, op->span_lo, len);
}

/* The round's messages are done: the aggregator writes its window, the
 * ranks unpack what they read. After an error the rounds go on only to
 * keep the messages flowing: nothing more is written or unpacked. */
static void round_complete(struct coll_op *op)
{
    if (op->err)
        return;
    if (op->a.dir == BMPI_IO_READ) {
        char *p = op->xbuf;
        for (int k = 0; k < op->naggr; k++)
            if (op->xsize[k] && k != op->my_aggr && !op->xmem[k]) {
                pieces_move(op, k, p);
                p += op->xsize[k];
            }
        self_move(op);
        return;
    }
    if (op->my_aggr >= 0 && op->ap.n)
        aggr_write(op);
}

static void round_post(struct coll_op *op)
{
    set_err(op, round_post_mine(op));
    if (op->my_aggr >= 0)
        set_err(op, round_post_aggr(op));
}

/* --- the states ------------------------------------------------------------------------- */

/* Each rank's count of runs to each aggregator; an aggregator's own are
 * no message. */
static void lists_post_counts(struct coll_op *op)
{
    struct bmpi_file *f = op->op.file;
    for (int k = 0; k < op->naggr; k++)
        if (k != op->my_aggr)
            post(op, POST_SEND, &op->mine_count[k], sizeof(int64_t), op->aggr[k]);
    if (op->my_aggr < 0)
        return;
    for (int i = 0; i < f->size; i++)
        if (i != f->rank)
            post(op, POST_RECV, &op->ocount[i], sizeof(int64_t), i);
    op->ocount[f->rank] = op->mine_count[op->my_aggr];
}

/* The runs themselves; an aggregator reads its own where they are. */
static void lists_post_runs(struct coll_op *op)
{
    struct bmpi_file *f = op->op.file;
    for (int k = 0; k < op->naggr; k++)
        if (op->mine_count[k] && k != op->my_aggr)
            post(op, POST_SEND, op->mine.v + op->mine_at[k],
                 (size_t)op->mine_count[k] * sizeof(struct coll_piece), op->aggr[k]);
    if (op->my_aggr < 0)
        return;
    op->others[f->rank] = op->mine.v + op->mine_at[op->my_aggr];
    for (int i = 0; i < f->size; i++) {
        if (!op->ocount[i] || i == f->rank)
            continue;
        size_t bytes = (size_t)op->ocount[i] * sizeof(struct coll_piece);
        if (!(op->others[i] = malloc(bytes))) {
            set_err(op, bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for %zu bytes of run lists", bytes));
            op->ocount[i] = 0;
            continue;
        }
        post(op, POST_RECV, op->others[i], bytes, i);
    }
}

static void errors_post(struct coll_op *op)
{
    struct bmpi_file *f = op->op.file;
    op->errs_out = op->err;
    if (op->my_aggr >= 0)
        for (int i = 0; i < f->size; i++)
            post(op, POST_SEND, &op->errs_out, sizeof(int), i);
    for (int k = 0; k < op->naggr; k++)
        post(op, POST_RECV, &op->aerr[k], sizeof(int), op->aggr[k]);
}

static void errors_complete(struct coll_op *op)
{
    for (int k = 0; k < op->naggr && !op->err; k++)
        if (op->touched[k] && op->aerr[k] && op->aggr[k] != op->op.file->rank)
            set_err(op, bmpi_err_set(op->aerr[k], "collective %s of %s failed on aggregator rank %d (%s)",
                                     op->a.dir == BMPI_IO_WRITE ? "write" : "read", op->op.file->path,
                                     op->aggr[k], bmpi_err_class_string(op->aerr[k])));
}

static int coll_data(struct coll_op *op);

/* The ranges are known: finish, go independent, or plan two-phase. */
static bool ranges_complete(struct coll_op *op)
{
    struct bmpi_file *f = op->op.file;
    MPI_Offset lo, hi;
    bool interleaved;
    if (!ranges_scan(op, &interleaved, &lo, &hi))
        return false; /* nobody has data */
    enum bmpi_io_toggle cb = op->a.dir == BMPI_IO_WRITE ? f->hints.cb_write : f->hints.cb_read;
    if (cb == BMPI_IO_DISABLE || (cb != BMPI_IO_ENABLE && !interleaved)) {
        op->state = ST_INDEP;
        return op->a.bytes != 0;
    }
    int err = plan(op, lo, hi);
    if (!err)
        err = alloc_state(op);
    if (err) {
        /* without its bookkeeping this rank cannot take part and the
         * others wait for it: only memory so short that little else works */
        set_err(op, err);
        return false;
    }
    if (set_err(op, coll_data(op)) || set_err(op, build_mine(op))) {
        /* take part with no data, so that nobody waits for this rank */
        op->mine.n = 0;
        memset(op->mine_count, 0, (size_t)op->naggr * sizeof(int64_t));
        memset(op->mine_at, 0, ((size_t)op->naggr + 1) * sizeof(size_t));
    }
    bmpi_dt_cursor_init(&op->mem, op->w.buf, op->w.count, op->w.dt);
    if (bmpi_dt_is_contig(op->w.dt))
        op->mem_base = (char *)op->w.buf + bmpi_dt_true_lb(op->w.dt);
    op->state = ST_COUNTS;
    lists_post_counts(op);
    return true;
}

/* The state's messages are complete: do its work and post the next.
 * Returns false when the operation is over. */
static bool step(struct coll_op *op)
{
    switch (op->state) {
    case ST_RANGES:
        return ranges_complete(op);
    case ST_INDEP:
        return !indep_step(op);
    case ST_COUNTS:
        op->state = ST_LISTS;
        lists_post_runs(op);
        return true;
    case ST_LISTS:
        op->state = ST_ROUND;
        op->round = 0;
        round_post(op);
        return true;
    case ST_ROUND:
        round_complete(op);
        if (++op->round < op->nrounds)
            round_post(op);
        else {
            op->state = ST_ERRORS;
            errors_post(op);
        }
        return true;
    case ST_ERRORS:
        errors_complete(op);
        return false;
    }
    return false;
}

static int coll_advance(struct bmpi_io_op *o)
{
    struct coll_op *op = (struct coll_op *)o;
    int events = 0;
    while (reqs_done(op)) {
        events++;
        if (!step(op)) {
            coll_finish(op);
            break;
        }
        if (op->state == ST_INDEP)
            break; /* one bounded step of I/O per pass */
    }
    return events;
}

/* --- starting ------------------------------------------------------------------------------ */

/* The data as it travels between ranks and aggregators: a's own buffer,
 * or for a non-native representation its file representation in a packed
 * buffer (converted now for a write, at the end for a read). */
static int coll_data(struct coll_op *op)
{
    const struct bmpi_datarep *rep = op->op.file->view.rep;
    op->w = op->a;
    if (bmpi_datarep_is_native(rep) || !op->a.bytes)
        return 0;
    int err;
    if (op->a.dir == BMPI_IO_WRITE) {
        if ((err = bmpi_datarep_to_file(rep, &op->a, &op->conv)))
            return err;
    } else if (!(op->conv = malloc(op->a.bytes)))
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for %zu bytes of conversion buffer", op->a.bytes);
    op->w.buf = op->conv;
    op->w.count = op->a.bytes;
    op->w.type = MPI_BYTE;
    op->w.dt = bmpi_dt_get(MPI_BYTE);
    return 0;
}

int bmpi_io_coll_start(struct bmpi_file *f, const struct bmpi_io_access *a, MPI_Offset offset,
                       struct bmpi_request **req)
{
    struct bmpi_io_coll *c = NULL;
    int err = coll_file_state(f, true, &c);
    if (err)
        return err;
    struct coll_op *op = calloc(1, sizeof(*op));
    if (!op)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for a collective access of %s", f->path);
    op->op.file = f;
    op->op.advance = coll_advance;
    op->op.destroy = coll_destroy;
    op->a = *a;
    bmpi_dt_retain(op->a.dt);
    op->offset = offset;
    op->start = offset * (MPI_Offset)f->view.esize;
    op->tag = COLL_TAG_BASE + (int)(c->seq++ % COLL_TAG_SPAN);
    op->xbuf = c->spare.xbuf, op->xcap = c->spare.xcap;
    op->abuf = c->spare.abuf, op->acap = c->spare.acap;
    op->cbuf = c->spare.cbuf, op->ccap = c->spare.ccap;
    c->spare = (struct coll_buffers){0};
    op->state = ST_RANGES;
    if (!(op->ranges = malloc(2 * (size_t)f->size * sizeof(MPI_Offset))) || !bmpi_io_request_new(&op->op)) {
        err = bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for a collective access of %s", f->path);
        coll_destroy(&op->op);
        return err;
    }
    bmpi_io_map_bounds(&f->view, op->start, op->a.bytes, &op->range[0], &op->range[1]);
    MPI_Request *r = new_req(op);
    if (!r || PMPI_Iallgather(op->range, 2, MPI_OFFSET, op->ranges, 2, MPI_OFFSET, f->comm, r) != MPI_SUCCESS) {
        bmpi_request_free(op->op.req);
        coll_destroy(&op->op);
        return bmpi_err_set(MPI_ERR_OTHER, "collective access of %s: the range exchange could not start", f->path);
    }
    *req = op->op.req;
    bmpi_io_op_start(&op->op);
    return 0;
}

/* --- entry points ------------------------------------------------------------------------------ */

/* Validate, advance the individual file pointer (offset NULL), start. */
static int coll_begin(MPI_File fh, const char *fn, enum bmpi_io_dir dir, const MPI_Offset *offset, const void *buf,
                      MPI_Count count, MPI_Datatype datatype, struct bmpi_file **fp, struct bmpi_request **req)
{
    struct bmpi_file *f;
    struct bmpi_io_access a;
    int err = bmpi_file_check(fh, fn, &f);
    if (err)
        return err;
    *fp = f;
    if ((err = bmpi_io_access_check(f, fn, dir, offset, buf, count, datatype, &a)))
        return err;
    if (!offset && (f->amode & MPI_MODE_SEQUENTIAL))
        return bmpi_err_file_obj(f, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                                 "individual file pointers are not available on a file opened with "
                                 "MPI_MODE_SEQUENTIAL (amode 0x%x)",
                                 (unsigned)f->amode);
    MPI_Offset at = offset ? *offset : f->pos;
    if ((err = bmpi_io_coll_start(f, &a, at, req)))
        return bmpi_err_file_obj(f, err, fn, NULL);
    if (!offset)
        f->pos += (MPI_Offset)(a.bytes / f->view.esize);
    return MPI_SUCCESS;
}

static int coll_blocking(MPI_File fh, const char *fn, enum bmpi_io_dir dir, const MPI_Offset *offset,
                         const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    struct bmpi_file *f = NULL;
    struct bmpi_request *req;
    if (!status) {
        int err = bmpi_file_check(fh, fn, &f);
        return err ? err : bmpi_err_file_obj(f, MPI_ERR_ARG, fn, "status is NULL");
    }
    int err = coll_begin(fh, fn, dir, offset, buf, count, datatype, &f, &req);
    if (err)
        return err;
    MPI_Status st;
    if ((err = bmpi_request_wait(req, &st)))
        return bmpi_err_file_obj(f, err, fn, NULL);
    bmpi_status_out(status, &st);
    return MPI_SUCCESS;
}

static int coll_nonblocking(MPI_File fh, const char *fn, enum bmpi_io_dir dir, const MPI_Offset *offset,
                            const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request)
{
    struct bmpi_file *f = NULL;
    struct bmpi_request *req;
    if (!request) {
        int err = bmpi_file_check(fh, fn, &f);
        return err ? err : bmpi_err_file_obj(f, MPI_ERR_ARG, fn, "request is NULL");
    }
    int err = coll_begin(fh, fn, dir, offset, buf, count, datatype, &f, &req);
    if (err)
        return err;
    *request = bmpi_request_handle(req);
    return MPI_SUCCESS;
}

static const char *const split_begin_name[] = {
    [SPLIT_READ_ALL] = "MPI_File_read_all_begin",
    [SPLIT_WRITE_ALL] = "MPI_File_write_all_begin",
    [SPLIT_READ_AT_ALL] = "MPI_File_read_at_all_begin",
    [SPLIT_WRITE_AT_ALL] = "MPI_File_write_at_all_begin",
};

static int split_begin(MPI_File fh, const char *fn, enum split_kind kind, const MPI_Offset *offset,
                       const void *buf, MPI_Count count, MPI_Datatype datatype)
{
    struct bmpi_file *f;
    int err = bmpi_file_check(fh, fn, &f);
    if (err)
        return err;
    if (f->split)
        return bmpi_err_file_obj(f, MPI_ERR_OTHER, fn, "a split collective (%s) is already active on this file",
                                 split_begin_name[f->split->kind]);
    if (bmpi_io_shared_split_active(f))
        return bmpi_err_file_obj(f, MPI_ERR_OTHER, fn, "an ordered split collective is already active on this file");
    struct bmpi_io_split *s = malloc(sizeof(*s));
    if (!s)
        return bmpi_err_file_obj(f, MPI_ERR_NO_MEM, fn, "out of memory for the split collective");
    enum bmpi_io_dir dir = kind == SPLIT_READ_ALL || kind == SPLIT_READ_AT_ALL ? BMPI_IO_READ : BMPI_IO_WRITE;
    if ((err = coll_begin(fh, fn, dir, offset, buf, count, datatype, &f, &s->req))) {
        free(s);
        return err;
    }
    s->buf = buf;
    s->kind = kind;
    f->split = s;
    return MPI_SUCCESS;
}

static int split_end(MPI_File fh, const char *fn, enum split_kind kind, const void *buf, MPI_Status *status)
{
    struct bmpi_file *f;
    int err = bmpi_file_check(fh, fn, &f);
    if (err)
        return err;
    if (!status)
        return bmpi_err_file_obj(f, MPI_ERR_ARG, fn, "status is NULL");
    struct bmpi_io_split *s = f->split;
    if (!s)
        return bmpi_err_file_obj(f, MPI_ERR_OTHER, fn, "no %s is active on this file", split_begin_name[kind]);
    if (s->kind != kind)
        return bmpi_err_file_obj(f, MPI_ERR_OTHER, fn, "the active split collective is %s, not %s",
                                 split_begin_name[s->kind], split_begin_name[kind]);
    if (buf != s->buf)
        return bmpi_err_file_obj(f, MPI_ERR_BUFFER, fn, "buf %p is not the buffer %p given to %s", buf, s->buf,
                                 split_begin_name[kind]);
    f->split = NULL;
    MPI_Status st;
    err = bmpi_request_wait(s->req, &st);
    free(s);
    if (err)
        return bmpi_err_file_obj(f, err, fn, NULL);
    bmpi_status_out(status, &st);
    return MPI_SUCCESS;
}

/* blocking */

BMPI_API(MPI_File_read_all)
int PMPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return coll_blocking(fh, "MPI_File_read_all", BMPI_IO_READ, NULL, buf, count, datatype, status);
}

BMPI_API(MPI_File_read_all_c)
int PMPI_File_read_all_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    return coll_blocking(fh, "MPI_File_read_all_c", BMPI_IO_READ, NULL, buf, count, datatype, status);
}

BMPI_API(MPI_File_write_all)
int PMPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return coll_blocking(fh, "MPI_File_write_all", BMPI_IO_WRITE, NULL, buf, count, datatype, status);
}

BMPI_API(MPI_File_write_all_c)
int PMPI_File_write_all_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    return coll_blocking(fh, "MPI_File_write_all_c", BMPI_IO_WRITE, NULL, buf, count, datatype, status);
}

BMPI_API(MPI_File_read_at_all)
int PMPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                          MPI_Status *status)
{
    return coll_blocking(fh, "MPI_File_read_at_all", BMPI_IO_READ, &offset, buf, count, datatype, status);
}

BMPI_API(MPI_File_read_at_all_c)
int PMPI_File_read_at_all_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype,
                            MPI_Status *status)
{
    return coll_blocking(fh, "MPI_File_read_at_all_c", BMPI_IO_READ, &offset, buf, count, datatype, status);
}

BMPI_API(MPI_File_write_at_all)
int PMPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
                           MPI_Status *status)
{
    return coll_blocking(fh, "MPI_File_write_at_all", BMPI_IO_WRITE, &offset, buf, count, datatype, status);
}

BMPI_API(MPI_File_write_at_all_c)
int PMPI_File_write_at_all_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                             MPI_Datatype datatype, MPI_Status *status)
{
    return coll_blocking(fh, "MPI_File_write_at_all_c", BMPI_IO_WRITE, &offset, buf, count, datatype, status);
}

/* nonblocking */

BMPI_API(MPI_File_iread_all)
int PMPI_File_iread_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    return coll_nonblocking(fh, "MPI_File_iread_all", BMPI_IO_READ, NULL, buf, count, datatype, request);
}

BMPI_API(MPI_File_iread_all_c)
int PMPI_File_iread_all_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request)
{
    return coll_nonblocking(fh, "MPI_File_iread_all_c", BMPI_IO_READ, NULL, buf, count, datatype, request);
}

BMPI_API(MPI_File_iwrite_all)
int PMPI_File_iwrite_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    return coll_nonblocking(fh, "MPI_File_iwrite_all", BMPI_IO_WRITE, NULL, buf, count, datatype, request);
}

BMPI_API(MPI_File_iwrite_all_c)
int PMPI_File_iwrite_all_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                           MPI_Request *request)
{
    return coll_nonblocking(fh, "MPI_File_iwrite_all_c", BMPI_IO_WRITE, NULL, buf, count, datatype, request);
}

BMPI_API(MPI_File_iread_at_all)
int PMPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                           MPI_Request *request)
{
    return coll_nonblocking(fh, "MPI_File_iread_at_all", BMPI_IO_READ, &offset, buf, count, datatype, request);
}

BMPI_API(MPI_File_iread_at_all_c)
int PMPI_File_iread_at_all_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype,
                             MPI_Request *request)
{
    return coll_nonblocking(fh, "MPI_File_iread_at_all_c", BMPI_IO_READ, &offset, buf, count, datatype, request);
}

BMPI_API(MPI_File_iwrite_at_all)
int PMPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
                            MPI_Request *request)
{
    return coll_nonblocking(fh, "MPI_File_iwrite_at_all", BMPI_IO_WRITE, &offset, buf, count, datatype, request);
}

BMPI_API(MPI_File_iwrite_at_all_c)
int PMPI_File_iwrite_at_all_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                              MPI_Datatype datatype, MPI_Request *request)
{
    return coll_nonblocking(fh, "MPI_File_iwrite_at_all_c", BMPI_IO_WRITE, &offset, buf, count, datatype,
                            request);
}

/* split */

BMPI_API(MPI_File_read_all_begin)
int PMPI_File_read_all_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype)
{
    return split_begin(fh, "MPI_File_read_all_begin", SPLIT_READ_ALL, NULL, buf, count, datatype);
}

BMPI_API(MPI_File_read_all_begin_c)
int PMPI_File_read_all_begin_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype)
{
    return split_begin(fh, "MPI_File_read_all_begin_c", SPLIT_READ_ALL, NULL, buf, count, datatype);
}

BMPI_API(MPI_File_read_all_end)
int PMPI_File_read_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
    return split_end(fh, "MPI_File_read_all_end", SPLIT_READ_ALL, buf, status);
}

BMPI_API(MPI_File_write_all_begin)
int PMPI_File_write_all_begin(MPI_File fh, const void *buf, int count, MPI_Datatype datatype)
{
    return split_begin(fh, "MPI_File_write_all_begin", SPLIT_WRITE_ALL, NULL, buf, count, datatype);
}

BMPI_API(MPI_File_write_all_begin_c)
int PMPI_File_write_all_begin_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype)
{
    return split_begin(fh, "MPI_File_write_all_begin_c", SPLIT_WRITE_ALL, NULL, buf, count, datatype);
}

BMPI_API(MPI_File_write_all_end)
int PMPI_File_write_all_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    return split_end(fh, "MPI_File_write_all_end", SPLIT_WRITE_ALL, buf, status);
}

BMPI_API(MPI_File_read_at_all_begin)
int PMPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype)
{
    return split_begin(fh, "MPI_File_read_at_all_begin", SPLIT_READ_AT_ALL, &offset, buf, count, datatype);
}

BMPI_API(MPI_File_read_at_all_begin_c)
int PMPI_File_read_at_all_begin_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                                  MPI_Datatype datatype)
{
    return split_begin(fh, "MPI_File_read_at_all_begin_c", SPLIT_READ_AT_ALL, &offset, buf, count, datatype);
}

BMPI_API(MPI_File_read_at_all_end)
int PMPI_File_read_at_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
    return split_end(fh, "MPI_File_read_at_all_end", SPLIT_READ_AT_ALL, buf, status);
}

BMPI_API(MPI_File_write_at_all_begin)
int PMPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                                 MPI_Datatype datatype)
{
    return split_begin(fh, "MPI_File_write_at_all_begin", SPLIT_WRITE_AT_ALL, &offset, buf, count, datatype);
}

BMPI_API(MPI_File_write_at_all_begin_c)
int PMPI_File_write_at_all_begin_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                                   MPI_Datatype datatype)
{
    return split_begin(fh, "MPI_File_write_at_all_begin_c", SPLIT_WRITE_AT_ALL, &offset, buf, count, datatype);
}

BMPI_API(MPI_File_write_at_all_end)
int PMPI_File_write_at_all_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    return split_end(fh, "MPI_File_write_at_all_end", SPLIT_WRITE_AT_ALL, buf, status);
}
