/*
 * One-sided communication: the window object and what the RMA files share
 * (docs/rma.md).
 *
 *   win.c        creation (four flavors), free, info, group,
 *                shared_query, attach/detach
 *   win_obj.c    names and error handlers (attributes: attr.c)
 *   rma.c        Put, Get, Accumulate, Get_accumulate, Fetch_and_op,
 *                Compare_and_swap and their request forms: argument checks,
 *                then one path per target (below)
 *   rma_sync.c   fence, post/start/complete/wait/test, lock/unlock,
 *                lock_all/unlock_all, flush*, sync: epochs and completion
 *   rma_am.c     the active-message protocol: what a target does for an
 *                origin that cannot reach its memory itself
 *   rma_amo.c    accumulates by the transport's atomics, and the order of
 *                a target's accumulates across paths
 *   rma_atomic.c element-wise atomic apply (CPU atomics, or a striped lock
 *                table for elements the CPU cannot update in one step)
 *
 * Each target of a window is reached by one path, chosen at creation:
 *   DIRECT  its memory is mapped here (this process, a region of the node,
 *           or the target's shared heap): loads, stores and CPU atomics,
 *           no help from the target's CPU;
 *   COPY    a process of this node whose memory is not mapped: put/get
 *           by single copy (CMA), accumulates as active messages;
 *   NET     a transport with get/put into registered memory: put/get by
 *           the transport, accumulates by the transport's atomics where
 *           they are applied by the target's CPU (rma_amo.c), else as
 *           active messages;
 *   AM      everything as active messages, applied by the target.
 * Every accumulate-family update is applied with CPU atomics on the
 * element: rma_atomic.c's, by the origin on DIRECT targets and by the
 * target itself for active messages, or the transport's own, applied by
 * the target's CPU too; so they are atomic with respect to each other
 * whatever path each origin takes.
 */
#ifndef BMPI_RUNTIME_WIN_H
#define BMPI_RUNTIME_WIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <mpi.h>

#include "runtime/error.h"
#include "runtime/op.h"
#include "runtime/world.h"
#include "transport/shm/node.h"
#include "transport/transport.h"

struct bmpi_comm;
struct bmpi_group;
struct bmpi_request;

enum bmpi_rma_path { BMPI_RMA_DIRECT, BMPI_RMA_COPY, BMPI_RMA_NET, BMPI_RMA_AM };

/* How an accumulate-family operation reached its target (rma_amo.c). */
enum bmpi_rma_acc_via { BMPI_ACC_NONE, BMPI_ACC_DIRECT, BMPI_ACC_AMO, BMPI_ACC_AM, BMPI_ACC_PULL, BMPI_ACC_NVIA };

/* Locks a target grants: the state word of its control block. */
#define BMPI_WIN_LOCK_EXCL (1ull << 63)
/* Stripes of the lock table that element-wise atomics take for elements
 * wider than the CPU's atomics (rma_atomic.c). */
#define BMPI_RMA_LOCK_STRIPES 64

/* Per window and rank, in shared memory where the window has a node
 * region (else in this process's memory): what origins change without
 * the owner's help. */
struct bmpi_win_ctl {
    uint64_t lock; /* readers, or BMPI_WIN_LOCK_EXCL */
    uint8_t pad0[56];
    uint64_t fences; /* fences this rank has entered (windows on one node) */
    uint8_t pad1[56];
    uint32_t stripes[BMPI_RMA_LOCK_STRIPES];
    /* Wide updates of this rank's memory (rma_atomic.c): BMPI_RMA_GATE_*,
     * read by every element update, so on a line of its own. */
    uint32_t gate;
    uint8_t pad2[60];
    /* Element updates this process is applying, to any member's memory
     * (rma_atomic.c): written by this process only. */
    uint64_t updating;
    uint8_t pad3[56];
};

/* The gate: OPEN, HELD by a wide update, or NEVER when the rank's memory
 * may be updated by a transport's atomics, which know no gate. */
#define BMPI_RMA_GATE_OPEN 0u
#define BMPI_RMA_GATE_HELD 1u
#define BMPI_RMA_GATE_NEVER 2u

/* Who applies updates to window memory on this node: every local member
 * that maps it (their control blocks' `updating`), this process first. */
struct bmpi_win_updaters {
    uint64_t **counts;
    int n;
    bool threads; /* this process's count may be changed by several threads at once */
};

/* What an origin knows of one target. */
struct bmpi_win_target {
    enum bmpi_rma_path path;
    int world;              /* peer index */
    int pid;                /* local processes, else 0 */
    uint64_t base;          /* its base address (0 for dynamic windows) */
    uint64_t size;          /* bytes (UINT64_MAX for dynamic windows) */
    int disp_unit;
    MPI_Win handle;         /* the window's handle in the target process */
    char *map;              /* DIRECT: where base is mapped here */
    struct bmpi_win_ctl *ctl; /* its control block mapped here, or NULL */
    struct bmpi_tl *tl;     /* NET */
    uint8_t rkey[BMPI_TL_RKEY_MAX];
    size_t rkey_len;

    /* this origin's state towards it */
    int lock_held;          /* 0, MPI_LOCK_SHARED or MPI_LOCK_EXCLUSIVE */
    bool lock_nocheck;      /* held under MPI_MODE_NOCHECK: nothing to release */
    bool lock_asked;        /* lock_all: a request went out, the grant is awaited */
    volatile bool lock_granted; /* an AM lock request was answered */
    uint64_t issued;        /* operations issued as active messages or NET */
    volatile uint64_t acked; /* ... and answered */
    /* The part of them that went as PUT or ACC active messages (gathered
     * or not) or as gathered GETs: applied (read) at the target before any
     * later active message of this origin is delivered, so a signal sent
     * by active message may overtake their answers (rma_sync.c; a GET's
     * data is still waited for). */
    uint64_t ordered_issued;
    volatile uint64_t ordered_acked;
    uint64_t ordered_fenced; /* ordered_issued at the last fence */
    bool net_unflushed;     /* NET puts since the last transport flush (no REMOTE_DONE) */
    enum bmpi_rma_acc_via acc_via; /* how the last accumulate went (ordering, rma_amo.c) */
    struct bmpi_rma_batch *batch; /* small operations gathered for one message (rma_batch.c) */
    uint32_t batch_unanswered; /* ... sent in batches that asked for no answer, not yet counted */
    /* PSCW: the posts and completes it sent this rank are counted in
     * *posts_in and *completes_in (a cell of the node region the target
     * writes, or posts_am/completes_am below, counted as active messages
     * arrive); starts and waits take them one by one. This rank signals
     * the target in *posts_out and *completes_out (NULL: by active
     * message). */
    volatile uint64_t *posts_in, *completes_in;
    uint64_t posts_used, completes_used;
    uint64_t *posts_out, *completes_out;
    uint64_t posts_sent, completes_sent;
    uint64_t posts_am, completes_am;
};

/* A range attached to a dynamic window. */
struct bmpi_win_range {
    uint64_t base, size;
};

/* A predefined op and element type checked valid together
 * (bmpi_rma_atomic_check), resolved once for the updates that apply them
 * (runtime/rma_atomic.h). */
struct bmpi_rma_elem {
    const struct bmpi_op *op;
    MPI_Datatype basic;
    const struct bmpi_datatype *dt;
    bmpi_op_kernel_fn reduce; /* contiguous elements, or NULL: bmpi_op_apply() */
};

/* Access and exposure epochs. */
enum bmpi_win_epoch { BMPI_EPOCH_NONE, BMPI_EPOCH_FENCE, BMPI_EPOCH_PSCW, BMPI_EPOCH_LOCK, BMPI_EPOCH_LOCK_ALL };

struct bmpi_win {
    MPI_Win handle;
    struct bmpi_comm *comm; /* a private duplicate of the creating communicator */
    int flavor;             /* MPI_WIN_FLAVOR_* */
    void *base;
    MPI_Aint size;
    int disp_unit;
    MPI_Errhandler errhandler;
    char name[MPI_MAX_OBJECT_NAME];
    void *attrs;            /* owned by runtime/attr.c */
    /* the values MPI_Win_get_attr points to */
    void *attr_base;
    MPI_Aint attr_size;
    int attr_disp_unit, attr_flavor, attr_model;

    /* hints (MPI_Win_set_info / get_info) */
    bool no_locks, same_size, same_disp_unit, alloc_shared_noncontig;
    char accumulate_ordering[64]; /* "rar,raw,war,waw" by default, or "none" */
    char accumulate_ops[32];      /* "same_op_no_op" or "same_op" */
    bool net_atomics;             /* the transport's atomics may carry accumulates (BMPI_RMA_NET_ATOMICS) */
    size_t batch_max;             /* largest Put gathered (BMPI_RMA_BATCH, rma_batch.c) */
    size_t pull_min;              /* smallest Accumulate the target pulls (BMPI_RMA_ACC_PULL, rma_pull.c) */

    struct bmpi_win_target *t; /* by rank in comm */
    struct bmpi_win_updaters updaters; /* of this node's window memory */
    struct bmpi_win_ctl *ctl;  /* mine */
    struct bmpi_node_region region; /* control blocks (and data of allocated windows) of this node */
    bool owns_base;            /* base was malloc'ed for MPI_Win_allocate */
    bool owns_ctl;             /* ctl was malloc'ed: no other member on this node */
    struct bmpi_win_reg {      /* base registered with the transports of NET origins */
        struct bmpi_tl *tl;
        void *memh;
    } regs[2];
    int nregs;

    /* dynamic windows */
    struct bmpi_win_range *ranges;
    int nranges, cap_ranges;

    /* epochs (rma_sync.c) */
    bool node_fence;           /* every member maps every control block: fence by their counters */
    bool serves_am;            /* some member reaches this rank by active messages */
    uint64_t fences;           /* fences entered, as in my control block */
    enum bmpi_win_epoch access;
    uint64_t epoch_ops;        /* operations since the access epoch opened */
    /* the last predefined datatype a direct Put or Get copied, and its
     * size: predefined handles never change meaning, so the next call of
     * that type skips the datatype lookup (rma.c) */
    MPI_Datatype direct_type;
    size_t direct_type_size;
    /* the last predefined datatype and predefined op a direct accumulate
     * applied, checked valid together, and what they resolve to (rma.c) */
    MPI_Datatype direct_acc_type;
    MPI_Op direct_acc_op;
    struct bmpi_rma_elem direct_acc;
    /* PSCW: the groups of the last start and post, and their members'
     * ranks in the window (kept for the next epoch) */
    struct bmpi_group *start_group, *post_group;
    int *start_ranks, *post_ranks;
    bool post_open;            /* an exposure epoch (MPI_Win_post) is open */
    int locks_held;            /* targets locked by MPI_Win_lock */

    /* completion */
    uint64_t ops_pending;      /* operations issued and not answered, all targets */
    /* PUT and ACC active messages of every origin applied here, and how
     * many the fences so far announced (windows across nodes), by the
     * parity of the fences their origin had entered when it sent them:
     * an origin is never more than one fence ahead (rma_sync.c) */
    volatile uint64_t ordered_applied[2];
    uint64_t ordered_expected[2];
    int op_error;              /* first error an answer reported, for the next sync call */
    uint64_t acc_count[BMPI_ACC_NVIA]; /* accumulates issued, by path (BMPI_VERBOSE=2 at free) */
    struct bmpi_win_batches {          /* gathered messages sent (rma_batch.c; BMPI_VERBOSE=2 at free) */
        uint64_t sent, ops, by_ref;    /* messages, operations in them, ... whose data was referred to */
        size_t largest, largest_copied; /* bytes of the largest, of the most copied into one */
    } batches;

    /* accumulates other nodes' origins asked me to pull, in arrival order (rma_pull.c) */
    struct bmpi_rma_pulled *pulls, *pulls_tail;
    int pulls_running;            /* ... whose gets run */
    struct bmpi_rma_stage *pull_spares; /* staging buffers kept for the next */
    /* passive target lock requests from other nodes waiting for my lock (rma_am.c) */
    struct bmpi_rma_lock_wait *lock_waiters;
};

/* The window behind a handle, NULL for MPI_WIN_NULL, freed or garbage. */
struct bmpi_win *bmpi_win_get(MPI_Win handle);
/* Reports why bmpi_win_check() refused win. */
int bmpi_win_check_failed(MPI_Win win, const char *fn);
/* bmpi_win_get() for an entry point: MPI initialized and a valid window,
 * or the error reported (MPI_ERR_WIN through MPI_COMM_SELF's handler).
 * Inline: every one-sided call starts here. */
static inline int bmpi_win_check(MPI_Win win, const char *fn, struct bmpi_win **w)
{
    if (bmpi_initialized() && (*w = bmpi_win_get(win)))
        return MPI_SUCCESS;
    return bmpi_win_check_failed(win, fn);
}

/* Report an error on a window through its error handler. */
int bmpi_err_win_obj(struct bmpi_win *w, int errclass, const char *fn, const char *fmt, ...)
    BMPI_PRINTF(4, 5);

/* MPI_Finalize: free the windows the program left (no communication). */
void bmpi_win_finalize(void);

/* rma_am.c: the target side of active messages, and its progress. */
struct bmpi_tl;
void bmpi_rma_deliver(int peer, uint8_t am_id, const void *hdr, size_t hdr_len, const void *payload,
                      size_t len);
int bmpi_rma_progress(void);

#endif
