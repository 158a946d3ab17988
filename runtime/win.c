/*
 * Windows: creation in the four flavors, free, hints, group,
 * shared_query, attach/detach (runtime/win.h, docs/rma.md).
 *
 * Creation is collective over a private duplicate of the communicator and
 * takes two exchanges. The first gives every rank each member's size,
 * displacement unit, process id and window handle; from it the ranks of
 * each node lay out, identically, one node region holding every local
 * member's control block (its lock word and atomics lock table) and, for
 * MPI_Win_allocate and MPI_Win_allocate_shared, their memory. The lowest
 * rank of the node creates the region; the second exchange gives its name,
 * each rank's base address and its remote keys for network transports;
 * the others map it, and once all have (an allreduce of the error codes,
 * which is also the last synchronization), the creator removes the name.
 * A node with one member of the window needs no region.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/api.h"
#include "runtime/attr.h"
#include "runtime/comm.h"
#include "runtime/context.h"
#include "runtime/errhandler.h"
#include "runtime/group_api.h"
#include "runtime/handle.h"
#include "runtime/info.h"
#include "runtime/p2p.h"
#include "runtime/progress.h"
#include "runtime/rma_impl.h"
#include "runtime/world.h"
#include "transport/copy.h"

#define REGION_HDR 64
#define PAGE 4096u
#define CTL_STRIDE ((sizeof(struct bmpi_win_ctl) + 63) & ~(size_t)63)
#define DATA_ALIGN 64u
/* Network transports a rank registers its window memory with, at most. */
#define MAX_RKEYS 2

static struct {
    struct bmpi_handle_table table;
    int live;
} windows = {.table = {.type = BMPI_OBJ_WIN}};

struct bmpi_win *bmpi_win_get(MPI_Win handle)
{
    if (handle == MPI_WIN_NULL)
        return NULL;
    return bmpi_handle_get(&windows.table, handle);
}

int bmpi_win_foreach(int (*fn)(struct bmpi_win *w))
{
    int events = 0;
    for (int i = 0; windows.live && i < windows.table.used; i++)
        if (windows.table.objs[i])
            events += fn(windows.table.objs[i]);
    return events;
}

/* ---- hints ------------------------------------------------------------- */

static bool truthy(const char *v) { return v && (!strcmp(v, "true") || !strcmp(v, "1")); }

static void hints_default(struct bmpi_win *w)
{
    snprintf(w->accumulate_ordering, sizeof w->accumulate_ordering, "rar,raw,war,waw");
    snprintf(w->accumulate_ops, sizeof w->accumulate_ops, "same_op_no_op");
    w->net_atomics = bmpi_env_switch("BMPI_RMA_NET_ATOMICS") != 0;
    w->batch_max = bmpi_rma_batch_limit();
    w->pull_min = bmpi_rma_pull_limit();
}

/* Take the hints of info bmpi knows; the others are ignored, as the
 * standard allows. Values that make no sense keep the current one. */
static void hints_apply(struct bmpi_win *w, const struct bmpi_info *info)
{
    const char *v;
    if ((v = bmpi_info_value(info, "no_locks")))
        w->no_locks = truthy(v);
    if ((v = bmpi_info_value(info, "same_size")))
        w->same_size = truthy(v);
    if ((v = bmpi_info_value(info, "same_disp_unit")))
        w->same_disp_unit = truthy(v);
    if ((v = bmpi_info_value(info, "alloc_shared_noncontig")))
        w->alloc_shared_noncontig = truthy(v);
    if ((v = bmpi_info_value(info, "accumulate_ordering")) && strlen(v) < sizeof w->accumulate_ordering)
        snprintf(w->accumulate_ordering, sizeof w->accumulate_ordering, "%s", v);
    if ((v = bmpi_info_value(info, "accumulate_ops")) &&
        (!strcmp(v, "same_op") || !strcmp(v, "same_op_no_op")))
        snprintf(w->accumulate_ops, sizeof w->accumulate_ops, "%s", v);
}

/* ---- the two exchanges ----------------------------------------------------- */

struct card_a {
    uint64_t size;
    int32_t disp_unit, pid;
    int32_t handle, err;
};

/* Remote keys travel in a few bytes: the transports' are 8-24. */
#define RKEY_CARD_MAX 32

struct rkey_card {
    char tl[8]; /* the transport's name ("ofi", "verbs", "shm") */
    uint32_t len;
    uint8_t key[RKEY_CARD_MAX];
};

/* Small enough for the collectives' small slots: region names travel as
 * their suffix, the part after the job's and node's prefix. */
struct card_b {
    uint64_t base;
    int32_t err;
    char region[BMPI_NODE_SUFFIX_MAX];
    struct rkey_card rkey[MAX_RKEYS];
};
_Static_assert(sizeof(struct card_b) <= 256, "the second card stays within a small collective slot");

/* Local members of the window, by rank in the window, and the layout of
 * their node region. */
struct layout {
    int nlocal;
    int *members;     /* ranks in the window, ascending */
    int my_index;     /* mine among them */
    size_t pscw_off;  /* the PSCW cells: n rows of posts, then n rows of completes */
    size_t *data_off; /* by index: offset of the member's memory */
    size_t len;
};

/* Bytes of one row of PSCW cells (n counters), whole cache lines. */
static size_t pscw_row(int n) { return ((size_t)n * sizeof(uint64_t) + 63) & ~(size_t)63; }

static bool same_node(const struct bmpi_win *w, int r)
{
    int world = bmpi_comm_world_rank(w->comm, r);
    return bmpi_world.peers[world].nodeid == bmpi_world.nodeid;
}

static int layout_node(struct bmpi_win *w, const struct card_a *a, bool with_data, struct layout *l)
{
    int n = w->comm->size;
    l->members = malloc((size_t)n * sizeof(int));
    l->data_off = malloc((size_t)n * sizeof(size_t));
    if (!l->members || !l->data_off)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory laying out a window");
    l->nlocal = 0;
    for (int r = 0; r < n; r++)
        if (same_node(w, r)) {
            if (r == w->comm->rank)
                l->my_index = l->nlocal;
            l->members[l->nlocal++] = r;
        }
    size_t off = REGION_HDR + (size_t)l->nlocal * CTL_STRIDE;
    l->pscw_off = off;
    off += 2 * (size_t)l->nlocal * pscw_row(l->nlocal);
    off = (off + PAGE - 1) & ~(size_t)(PAGE - 1);
    bool contiguous = w->flavor == MPI_WIN_FLAVOR_SHARED && !w->alloc_shared_noncontig;
    size_t align = w->flavor == MPI_WIN_FLAVOR_SHARED ? PAGE : DATA_ALIGN;
    for (int i = 0; i < l->nlocal; i++) {
        if (!contiguous)
            off = (off + align - 1) & ~(size_t)(align - 1);
        l->data_off[i] = off;
        if (with_data)
            off += a[l->members[i]].size;
    }
    l->len = off ? off : PAGE;
    return BMPI_OK;
}

static void layout_free(struct layout *l)
{
    free(l->members);
    free(l->data_off);
}

/* Bytes at the start of a node region each member maps in at creation:
 * the control blocks, the PSCW cells and the first of the data. */
#define PREFAULT_MAX (256u << 10)

/* Fault the region's first pages in now, writable, so that the first
 * epoch does not take a page fault in every member for every page it
 * touches (a few microseconds each); creation is collective and slow
 * anyway. A kernel without MADV_POPULATE_WRITE leaves them to fault. */
static void prefault_region(const struct bmpi_win *w, const struct layout *l)
{
    size_t len = l->len < PREFAULT_MAX ? l->len : PREFAULT_MAX;
    bmpi_prefault(w->region.addr, len);
}

static bool needs_region(const struct bmpi_win *w, const struct layout *l)
{
    return l->nlocal > 1 || w->flavor == MPI_WIN_FLAVOR_SHARED;
}

/* My memory, control block and (creator) the node region. */
static int place_memory(struct bmpi_win *w, const struct layout *l, MPI_Aint size, void *user_base)
{
    bool with_data = w->flavor == MPI_WIN_FLAVOR_ALLOCATE || w->flavor == MPI_WIN_FLAVOR_SHARED;
    if (needs_region(w, l) && l->my_index == 0) {
        int err = bmpi_node_region_create("win", l->len, &w->region);
        if (err)
            return err;
        prefault_region(w, l);
        w->ctl = (struct bmpi_win_ctl *)((char *)w->region.addr + REGION_HDR);
        if (with_data)
            w->base = (char *)w->region.addr + l->data_off[0];
    } else if (!needs_region(w, l)) {
        if (!(w->ctl = calloc(1, sizeof *w->ctl)))
            return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for a window's control block");
        w->owns_ctl = true;
        if (with_data) {
            if (posix_memalign(&w->base, DATA_ALIGN, size ? (size_t)size : 1))
                return bmpi_err_set(MPI_ERR_NO_MEM, "cannot allocate %lld bytes for a window",
                                    (long long)size);
            w->owns_base = true;
        }
    }
    if (w->flavor == MPI_WIN_FLAVOR_CREATE)
        w->base = user_base;
    return BMPI_OK;
}

/* The network transports my window memory must be registered with: those
 * that reach some member and move data with get/put. */
static int net_tls(const struct bmpi_win *w, struct bmpi_tl **tls)
{
    int n = 0;
    for (int r = 0; r < w->comm->size; r++) {
        struct bmpi_tl *tl = bmpi_world.peers[bmpi_comm_world_rank(w->comm, r)].tl;
        unsigned need = BMPI_TL_RMA_GET | BMPI_TL_RMA_PUT;
        if (r == w->comm->rank || (tl->caps.flags & need) != need)
            continue;
        bool seen = false;
        for (int i = 0; i < n; i++)
            seen |= tls[i] == tl;
        if (!seen && n < MAX_RKEYS)
            tls[n++] = tl;
    }
    return n;
}

static int register_memory(struct bmpi_win *w, struct card_b *b)
{
    /* A member of an allocated window other than its node's first learns
     * its base only when it maps the region, after this exchange: origins
     * on other nodes reach it by active messages (the target adds its
     * own base), never by an address it could not tell them. */
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC || w->size == 0 || !w->base)
        return BMPI_OK;
    struct bmpi_tl *tls[MAX_RKEYS];
    int n = net_tls(w, tls);
    for (int i = 0; i < n; i++) {
        struct bmpi_win_reg *reg = &w->regs[w->nregs];
        size_t len = RKEY_CARD_MAX;
        if (tls[i]->ops->mem_reg(tls[i], w->base, (size_t)w->size, &reg->memh) != BMPI_OK)
            continue; /* origins reach this rank by active messages instead */
        reg->tl = tls[i];
        w->nregs++;
        if (tls[i]->ops->rkey_pack(tls[i], reg->memh, b->rkey[i].key, &len) != BMPI_OK)
            continue;
        snprintf(b->rkey[i].tl, sizeof b->rkey[i].tl, "%s", tls[i]->caps.name);
        b->rkey[i].len = (uint32_t)len;
    }
    return BMPI_OK;
}

static void deregister_memory(struct bmpi_win *w)
{
    for (int i = 0; i < w->nregs; i++)
        w->regs[i].tl->ops->mem_dereg(w->regs[i].tl, w->regs[i].memh);
    w->nregs = 0;
}

/* ---- targets ------------------------------------------------------------- */

static const struct rkey_card *rkey_for(const struct card_b *b, const struct bmpi_tl *tl)
{
    for (int i = 0; i < MAX_RKEYS; i++)
        if (b->rkey[i].len && !strcmp(b->rkey[i].tl, tl->caps.name))
            return &b->rkey[i];
    return NULL;
}

/* Where target r's memory is mapped here, or NULL. */
static char *direct_map(struct bmpi_win *w, const struct layout *l, int idx, const struct card_a *a,
                        const struct card_b *b, int r)
{
    if (r == w->comm->rank)
        return w->base;
    if (idx < 0 || w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return NULL;
    if (w->flavor != MPI_WIN_FLAVOR_CREATE)
        return (char *)w->region.addr + l->data_off[idx];
    if (a[r].size == 0)
        return NULL;
    return bmpi_node_peer_map(a[r].pid, b[r].base, a[r].size);
}

static void set_target(struct bmpi_win *w, const struct layout *l, const struct card_a *a,
                       const struct card_b *b, int r, int idx)
{
    struct bmpi_win_target *t = &w->t[r];
    t->world = bmpi_comm_world_rank(w->comm, r);
    t->pid = a[r].pid;
    t->handle = a[r].handle;
    t->disp_unit = a[r].disp_unit;
    t->base = b[r].base;
    t->size = w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? UINT64_MAX : a[r].size;
    if (idx >= 0)
        t->ctl = (struct bmpi_win_ctl *)((char *)w->region.addr + REGION_HDR + (size_t)idx * CTL_STRIDE);
    if (r == w->comm->rank)
        t->ctl = w->ctl;
    t->map = direct_map(w, l, idx, a, b, r);
    t->tl = bmpi_world.peers[t->world].tl;
    const struct rkey_card *rk = rkey_for(&b[r], t->tl);
    if (t->map || r == w->comm->rank)
        t->path = BMPI_RMA_DIRECT;
    else if (rk && w->flavor != MPI_WIN_FLAVOR_DYNAMIC) {
        t->path = BMPI_RMA_NET;
        memcpy(t->rkey, rk->key, rk->len);
        t->rkey_len = rk->len;
    } else
        t->path = BMPI_RMA_AM;
}

/* PSCW between members of one region: cell (receiver, sender) counts the
 * posts (completes) sender gave receiver, written by sender only. Each
 * receiver's row starts a cache line of its own: a rank spinning on its
 * row must not pull away the line another pair is signalling in. */
static uint64_t *pscw_cell(const struct bmpi_win *w, const struct layout *l, bool completes, int receiver,
                           int sender)
{
    size_t row = pscw_row(l->nlocal);
    char *rows = (char *)w->region.addr + l->pscw_off + (completes ? (size_t)l->nlocal * row : 0);
    return (uint64_t *)(rows + (size_t)receiver * row) + sender;
}

static void link_pscw_cells(struct bmpi_win *w, const struct layout *l)
{
    int me = l->my_index;
    for (int i = 0; i < l->nlocal; i++) {
        struct bmpi_win_target *t = &w->t[l->members[i]];
        t->posts_in = pscw_cell(w, l, false, me, i);
        t->completes_in = pscw_cell(w, l, true, me, i);
        t->posts_out = pscw_cell(w, l, false, i, me);
        t->completes_out = pscw_cell(w, l, true, i, me);
    }
}

/* A transport's atomics may update my memory: those that reach a member,
 * with atomics the runtime routes accumulates to (rma_amo.c), whatever
 * this rank's BMPI_RMA_NET_ATOMICS says, as an origin's decides. */
static bool transport_atomics_reach_me(const struct bmpi_win *w)
{
    const unsigned amo = BMPI_TL_RMA_AMO | BMPI_TL_RMA_AMO_CPU;
    for (int i = 0; i < w->nregs; i++)
        if ((w->regs[i].tl->caps.flags & amo) == amo)
            return true;
    return false;
}

/* The gate of my memory and who updates the node's window memory
 * (rma_atomic.c): every member with a control block mapped here. */
static int init_guard(struct bmpi_win *w)
{
    __atomic_store_n(&w->ctl->gate, transport_atomics_reach_me(w) ? BMPI_RMA_GATE_NEVER : BMPI_RMA_GATE_OPEN,
                     __ATOMIC_RELEASE);
    int n = 0;
    for (int r = 0; r < w->comm->size; r++)
        n += w->t[r].ctl != NULL;
    if (!(w->updaters.counts = malloc((size_t)n * sizeof *w->updaters.counts)))
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for a window's updaters");
    w->updaters.counts[0] = &w->ctl->updating;
    w->updaters.n = 1;
    w->updaters.threads = bmpi_world.thread_level == MPI_THREAD_MULTIPLE;
    for (int r = 0; r < w->comm->size; r++)
        if (w->t[r].ctl && r != w->comm->rank)
            w->updaters.counts[w->updaters.n++] = &w->t[r].ctl->updating;
    return BMPI_OK;
}

static int build_targets(struct bmpi_win *w, const struct layout *l, const struct card_a *a,
                         const struct card_b *b)
{
    if (!(w->t = calloc((size_t)w->comm->size, sizeof *w->t)))
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for a window's targets");
    if (needs_region(w, l) && l->my_index != 0) {
        int err = bmpi_node_region_attach_suffix(b[l->members[0]].region, &w->region);
        if (err)
            return err;
        prefault_region(w, l);
        w->ctl = (struct bmpi_win_ctl *)((char *)w->region.addr + REGION_HDR + (size_t)l->my_index * CTL_STRIDE);
        if (w->flavor == MPI_WIN_FLAVOR_ALLOCATE || w->flavor == MPI_WIN_FLAVOR_SHARED)
            w->base = (char *)w->region.addr + l->data_off[l->my_index];
    }
    int idx = 0;
    for (int r = 0; r < w->comm->size; r++) {
        bool local = idx < l->nlocal && l->members[idx] == r;
        set_target(w, l, a, b, r, local && needs_region(w, l) ? idx : -1);
        w->t[r].posts_in = &w->t[r].posts_am;
        w->t[r].completes_in = &w->t[r].completes_am;
        idx += local;
    }
    if (needs_region(w, l))
        link_pscw_cells(w, l);
    return init_guard(w);
}

/* ---- creation and free ------------------------------------------------------ */

/* The exchanges of creation go over the user's communicator, whose
 * collectives are set up already; the window's own duplicate gets its
 * first collective at the first fence. */
static int exchange(struct bmpi_comm *over, const void *mine, void *all, size_t len)
{
    return PMPI_Allgather(mine, (int)len, MPI_BYTE, all, (int)len, MPI_BYTE, over->handle);
}

static int agree_error(struct bmpi_comm *over, int err)
{
    int worst = 0;
    int rc = PMPI_Allreduce(&err, &worst, 1, MPI_INT, MPI_MAX, over->handle);
    return rc ? rc : worst;
}

/* Steps 2-4 of creation: exchanges, region, targets. */
static int win_connect(struct bmpi_win *w, struct bmpi_comm *over, MPI_Aint size, void *user_base)
{
    int n = w->comm->size, err;
    struct card_a mine_a = {.size = (uint64_t)size, .disp_unit = w->disp_unit, .pid = getpid(),
                            .handle = w->handle};
    struct card_a *a = malloc((size_t)n * sizeof *a);
    struct card_b *b = malloc((size_t)n * sizeof *b);
    struct card_b *mine_b = calloc(1, sizeof *mine_b);
    struct layout l = {0};
    if (!a || !b || !mine_b) {
        err = bmpi_err_set(MPI_ERR_NO_MEM, "out of memory creating a window");
        goto out; /* the others wait in the exchange: as any failed collective */
    }
    if ((err = exchange(over, &mine_a, a, sizeof *a)))
        goto out;
    bool with_data = w->flavor == MPI_WIN_FLAVOR_ALLOCATE || w->flavor == MPI_WIN_FLAVOR_SHARED;
    int local_err = layout_node(w, a, with_data, &l);
    if (!local_err && w->flavor == MPI_WIN_FLAVOR_SHARED && l.nlocal != n)
        local_err = bmpi_err_set(MPI_ERR_RMA_SHARED,
                                 "the communicator spans %d nodes' processes: memory cannot be shared",
                                 n - l.nlocal + 1);
    if (!local_err)
        local_err = place_memory(w, &l, size, user_base);
    if (!local_err)
        local_err = register_memory(w, mine_b);
    mine_b->base = (uint64_t)(uintptr_t)w->base;
    mine_b->err = local_err;
    const char *suffix = w->region.addr ? bmpi_node_region_suffix(&w->region) : NULL;
    if (suffix)
        snprintf(mine_b->region, sizeof mine_b->region, "%s", suffix);
    else if (w->region.addr && !local_err)
        local_err = bmpi_err_set(MPI_ERR_INTERN, "window region name %s has no short suffix", w->region.name);
    if ((err = exchange(over, mine_b, b, sizeof *b)))
        goto out;
    for (int r = 0; r < n && !local_err; r++)
        if (b[r].err)
            local_err = bmpi_err_set(b[r].err, "rank %d could not set up its part of the window", r);
    if (!local_err)
        local_err = build_targets(w, &l, a, b);
    w->node_fence = l.nlocal == n && (n == 1 || needs_region(w, &l));
    for (int r = 0; r < n && !local_err; r++)
        w->serves_am |= w->t[r].path != BMPI_RMA_DIRECT;
    char why[256];
    snprintf(why, sizeof why, "%s", bmpi_err_reason());
    err = agree_error(over, local_err);
    if (w->region.addr && l.nlocal > 0 && l.my_index == 0)
        bmpi_node_region_unlink(&w->region);
    if (err && local_err)
        bmpi_err_set(local_err, "%s", why);
    else if (err)
        bmpi_err_set(err, "another rank could not create its part of the window");
out:
    layout_free(&l);
    free(a);
    free(b);
    free(mine_b);
    return err;
}

/* BMPI_VERBOSE=2: how this rank's accumulates went, per path (tests
 * check that the transport's atomics carried some). */
static void report_accumulates(const struct bmpi_win *w)
{
    const uint64_t *n = w->acc_count;
    if (bmpi_world.verbose >= 2 && (n[BMPI_ACC_DIRECT] || n[BMPI_ACC_AMO] || n[BMPI_ACC_AM] || n[BMPI_ACC_PULL]))
        fprintf(stderr,
                "bmpi: rank %d: window %s: accumulates: %llu direct, %llu by transport atomics, "
                "%llu by active messages, %llu pulled by the target\n",
                bmpi_world.rank, w->name[0] ? w->name : "(unnamed)", (unsigned long long)n[BMPI_ACC_DIRECT],
                (unsigned long long)n[BMPI_ACC_AMO], (unsigned long long)n[BMPI_ACC_AM],
                (unsigned long long)n[BMPI_ACC_PULL]);
}

/* BMPI_VERBOSE=2: the operations this rank gathered (tests check that
 * messages fill up to their bound and refer to data). */
static void report_batches(const struct bmpi_win *w)
{
    const struct bmpi_win_batches *n = &w->batches;
    if (bmpi_world.verbose >= 2 && n->sent)
        fprintf(stderr,
                "bmpi: rank %d: window %s: gathered: %llu messages, %llu operations, %llu by reference, "
                "largest %zu bytes, most copied %zu bytes\n",
                bmpi_world.rank, w->name[0] ? w->name : "(unnamed)", (unsigned long long)n->sent,
                (unsigned long long)n->ops, (unsigned long long)n->by_ref, n->largest, n->largest_copied);
}

static void win_release(struct bmpi_win *w)
{
    report_accumulates(w);
    report_batches(w);
    deregister_memory(w);
    if (w->region.addr)
        bmpi_node_region_detach(&w->region);
    if (w->owns_base)
        free(w->base);
    if (w->owns_ctl)
        free(w->ctl);
    bmpi_rma_am_forget(w);
    bmpi_rma_pull_forget(w);
    bmpi_rma_forget_group(&w->start_group, &w->start_ranks);
    bmpi_rma_forget_group(&w->post_group, &w->post_ranks);
    for (int r = 0; w->t && w->comm && r < w->comm->size; r++)
        bmpi_rma_batch_free(&w->t[r]);
    free(w->t);
    free(w->updaters.counts);
    free(w->ranges);
    if (w->handle)
        bmpi_handle_release(&windows.table, w->handle);
    if (w->comm)
        bmpi_comm_release(w->comm);
    bmpi_errhandler_release(w->errhandler);
    if (w->handle)
        windows.live--;
    free(w);
}

static int win_new(struct bmpi_comm *parent, int flavor, const struct bmpi_info *info, struct bmpi_win **out)
{
    struct bmpi_win *w = calloc(1, sizeof *w);
    if (!w)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory creating a window");
    w->flavor = flavor;
    w->errhandler = MPI_ERRORS_ARE_FATAL;
    w->direct_type = MPI_DATATYPE_NULL;
    w->direct_acc_type = MPI_DATATYPE_NULL;
    w->direct_acc_op = MPI_OP_NULL;
    hints_default(w);
    if (info)
        hints_apply(w, info);
    uint32_t id;
    int err = bmpi_ctx_new(parent, &id);
    if (!err)
        err = bmpi_comm_build(parent, parent->group, id, &w->comm);
    if (!err) {
        /* internal collectives report to the window's caller, not abort */
        bmpi_errhandler_release(w->comm->errhandler);
        w->comm->errhandler = MPI_ERRORS_RETURN;
        w->handle = bmpi_handle_new(&windows.table, w);
        if (!w->handle)
            err = bmpi_err_set(MPI_ERR_NO_MEM, "out of window handles");
        else
            windows.live++;
    }
    if (err) {
        win_release(w);
        return err;
    }
    *out = w;
    return BMPI_OK;
}

static void set_attr_values(struct bmpi_win *w)
{
    w->attr_base = w->base;
    w->attr_size = w->size;
    w->attr_disp_unit = w->disp_unit;
    w->attr_flavor = w->flavor;
    w->attr_model = MPI_WIN_UNIFIED;
}

struct create_args {
    MPI_Aint size;
    MPI_Aint disp_unit;
    MPI_Info info;
    MPI_Comm comm;
    void *base;      /* MPI_Win_create */
    void *baseptr;   /* allocate flavors: where the address goes */
    MPI_Win *win;
};

static int check_create(int flavor, const struct create_args *a, struct bmpi_comm **c,
                        struct bmpi_info **info, const char *fn)
{
    int err = bmpi_check_intracomm(a->comm, fn, c);
    if (err)
        return err;
    if (!a->win)
        return bmpi_err_comm(a->comm, MPI_ERR_ARG, fn, "win is NULL");
    if (flavor != MPI_WIN_FLAVOR_DYNAMIC) {
        if (a->size < 0)
            return bmpi_err_comm(a->comm, MPI_ERR_SIZE, fn, "negative size %lld", (long long)a->size);
        if (a->disp_unit <= 0 || a->disp_unit > INT32_MAX)
            return bmpi_err_comm(a->comm, MPI_ERR_DISP, fn, "displacement unit %lld is not positive",
                                 (long long)a->disp_unit);
    }
    if (flavor == MPI_WIN_FLAVOR_CREATE && a->size > 0 && !a->base)
        return bmpi_err_comm(a->comm, MPI_ERR_ARG, fn, "base is NULL for a window of %lld bytes",
                             (long long)a->size);
    if ((flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED) && !a->baseptr)
        return bmpi_err_comm(a->comm, MPI_ERR_ARG, fn, "baseptr is NULL");
    *info = NULL;
    if (a->info != MPI_INFO_NULL && !(*info = bmpi_info_lookup(a->info)))
        return bmpi_err_comm(a->comm, MPI_ERR_INFO, fn, "invalid info 0x%x", (unsigned)a->info);
    return MPI_SUCCESS;
}

static int win_create_any(int flavor, const struct create_args *a, const char *fn)
{
    if (!bmpi_initialized())
        return bmpi_err_noobj(MPI_ERR_OTHER, fn, "MPI is not initialized");
    struct bmpi_comm *c;
    struct bmpi_info *info;
    int err = check_create(flavor, a, &c, &info, fn);
    if (err)
        return err;
    struct bmpi_win *w = NULL;
    if ((err = win_new(c, flavor, info, &w)))
        return bmpi_err_comm(a->comm, err, fn, NULL);
    w->size = flavor == MPI_WIN_FLAVOR_DYNAMIC ? 0 : a->size;
    w->disp_unit = flavor == MPI_WIN_FLAVOR_DYNAMIC ? 1 : (int)a->disp_unit;
    if ((err = win_connect(w, c, w->size, a->base))) {
        win_release(w);
        return bmpi_err_comm(a->comm, err, fn, NULL);
    }
    set_attr_values(w);
    if (a->baseptr)
        *(void **)a->baseptr = w->base;
    *a->win = w->handle;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Win_create)
int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    struct create_args a = {size, disp_unit, info, comm, base, NULL, win};
    return win_create_any(MPI_WIN_FLAVOR_CREATE, &a, "MPI_Win_create");
}

BMPI_API(MPI_Win_create_c)
int PMPI_Win_create_c(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                      MPI_Win *win)
{
    struct create_args a = {size, disp_unit, info, comm, base, NULL, win};
    return win_create_any(MPI_WIN_FLAVOR_CREATE, &a, "MPI_Win_create_c");
}

BMPI_API(MPI_Win_allocate)
int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    struct create_args a = {size, disp_unit, info, comm, NULL, baseptr, win};
    return win_create_any(MPI_WIN_FLAVOR_ALLOCATE, &a, "MPI_Win_allocate");
}

BMPI_API(MPI_Win_allocate_c)
int PMPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                        MPI_Win *win)
{
    struct create_args a = {size, disp_unit, info, comm, NULL, baseptr, win};
    return win_create_any(MPI_WIN_FLAVOR_ALLOCATE, &a, "MPI_Win_allocate_c");
}

BMPI_API(MPI_Win_allocate_shared)
int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                             MPI_Win *win)
{
    struct create_args a = {size, disp_unit, info, comm, NULL, baseptr, win};
    return win_create_any(MPI_WIN_FLAVOR_SHARED, &a, "MPI_Win_allocate_shared");
}

BMPI_API(MPI_Win_allocate_shared_c)
int PMPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                               MPI_Win *win)
{
    struct create_args a = {size, disp_unit, info, comm, NULL, baseptr, win};
    return win_create_any(MPI_WIN_FLAVOR_SHARED, &a, "MPI_Win_allocate_shared_c");
}

BMPI_API(MPI_Win_create_dynamic)
int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    struct create_args a = {0, 1, info, comm, NULL, NULL, win};
    return win_create_any(MPI_WIN_FLAVOR_DYNAMIC, &a, "MPI_Win_create_dynamic");
}

int bmpi_win_check_failed(MPI_Win win, const char *fn)
{
    if (!bmpi_initialized())
        return bmpi_err_noobj(MPI_ERR_OTHER, fn, "MPI is not initialized");
    return bmpi_err_win(win, MPI_ERR_WIN, fn, "invalid window 0x%x", (unsigned)win);
}

BMPI_API(MPI_Win_free)
int PMPI_Win_free(MPI_Win *win)
{
    const char *fn = "MPI_Win_free";
    if (!win)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "win is NULL");
    struct bmpi_win *w;
    int err = bmpi_win_check(*win, fn, &w);
    if (err)
        return err;
    if (!bmpi_rma_epoch_closable(w))
        return bmpi_err_win_obj(w, MPI_ERR_RMA_SYNC, fn, "an access or exposure epoch is still open");
    /* before the barrier, as in MPICH: a rank whose delete callback fails
     * keeps its window and can call again, matching the others' barrier */
    if ((err = bmpi_attr_win_delete_all(w)))
        return bmpi_err_win_obj(w, err, fn, NULL);
    /* every rank's operations on my memory are over once all are here */
    bmpi_rma_wait_all_answered(w);
    if ((err = PMPI_Barrier(w->comm->handle)))
        return bmpi_err_win_obj(w, err, fn, NULL);
    win_release(w);
    *win = MPI_WIN_NULL;
    return MPI_SUCCESS;
}

void bmpi_win_finalize(void)
{
    for (int i = 0; i < windows.table.used; i++) {
        struct bmpi_win *w = windows.table.objs[i];
        if (!w)
            continue;
        bmpi_attr_win_force_delete_all(w);
        win_release(w);
    }
    bmpi_handle_table_free(&windows.table);
    windows.live = 0;
}

/* ---- info, group, shared memory --------------------------------------------- */

BMPI_API(MPI_Win_set_info)
int PMPI_Win_set_info(MPI_Win win, MPI_Info info)
{
    const char *fn = "MPI_Win_set_info";
    struct bmpi_win *w;
    int err = bmpi_win_check(win, fn, &w);
    if (err)
        return err;
    struct bmpi_info *inf = bmpi_info_lookup(info);
    if (!inf)
        return bmpi_err_win_obj(w, MPI_ERR_INFO, fn, "invalid info 0x%x", (unsigned)info);
    /* alloc_shared_noncontig and same_size describe the memory laid out at
     * creation: only the ordering and ops hints change afterwards */
    bool noncontig = w->alloc_shared_noncontig, same = w->same_size, unit = w->same_disp_unit;
    hints_apply(w, inf);
    w->alloc_shared_noncontig = noncontig;
    w->same_size = same;
    w->same_disp_unit = unit;
    return MPI_SUCCESS;
}

static int info_put(MPI_Info info, const char *key, const char *value)
{
    return PMPI_Info_set(info, key, value);
}

BMPI_API(MPI_Win_get_info)
int PMPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    const char *fn = "MPI_Win_get_info";
    struct bmpi_win *w;
    int err = bmpi_win_check(win, fn, &w);
    if (err)
        return err;
    if (!info_used)
        return bmpi_err_win_obj(w, MPI_ERR_ARG, fn, "info_used is NULL");
    MPI_Info info;
    if ((err = PMPI_Info_create(&info)))
        return bmpi_err_win_obj(w, err, fn, NULL);
    err = info_put(info, "no_locks", w->no_locks ? "true" : "false");
    err = err ? err : info_put(info, "accumulate_ordering", w->accumulate_ordering);
    err = err ? err : info_put(info, "accumulate_ops", w->accumulate_ops);
    err = err ? err : info_put(info, "same_size", w->same_size ? "true" : "false");
    err = err ? err : info_put(info, "same_disp_unit", w->same_disp_unit ? "true" : "false");
    err = err ? err : info_put(info, "alloc_shared_noncontig", w->alloc_shared_noncontig ? "true" : "false");
    if (err) {
        PMPI_Info_free(&info);
        return bmpi_err_win_obj(w, err, fn, NULL);
    }
    *info_used = info;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Win_get_group)
int PMPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
    const char *fn = "MPI_Win_get_group";
    struct bmpi_win *w;
    int err = bmpi_win_check(win, fn, &w);
    if (err)
        return err;
    if (!group)
        return bmpi_err_win_obj(w, MPI_ERR_ARG, fn, "group is NULL");
    bmpi_group_retain(w->comm->group);
    if ((err = bmpi_group_make_handle(w->comm->group, group)))
        return bmpi_err_win_obj(w, err, fn, NULL);
    return MPI_SUCCESS;
}

/* The lowest rank with memory, for MPI_PROC_NULL. */
static int first_with_memory(const struct bmpi_win *w)
{
    for (int r = 0; r < w->comm->size; r++)
        if (w->t[r].size > 0)
            return r;
    return -1;
}

static int shared_query(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void *baseptr,
                        const char *fn)
{
    struct bmpi_win *w;
    int err = bmpi_win_check(win, fn, &w);
    if (err)
        return err;
    if (!size || !disp_unit || !baseptr)
        return bmpi_err_win_obj(w, MPI_ERR_ARG, fn, "size, disp_unit or baseptr is NULL");
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return bmpi_err_win_obj(w, MPI_ERR_RMA_FLAVOR, fn, "a dynamic window has no shared memory");
    if (rank != MPI_PROC_NULL && (rank < 0 || rank >= w->comm->size))
        return bmpi_err_win_obj(w, MPI_ERR_RANK, fn, "invalid rank %d (window of %d ranks)", rank,
                                w->comm->size);
    int r = rank == MPI_PROC_NULL ? first_with_memory(w) : rank;
    const struct bmpi_win_target *t = r >= 0 ? &w->t[r] : NULL;
    bool shared = t && t->path == BMPI_RMA_DIRECT && t->map;
    *size = shared ? (MPI_Aint)t->size : 0;
    *disp_unit = shared ? t->disp_unit : (t ? t->disp_unit : 1);
    *(void **)baseptr = shared ? t->map : NULL;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Win_shared_query)
int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
    MPI_Aint unit = 0;
    int err = shared_query(win, rank, size, &unit, baseptr, "MPI_Win_shared_query");
    if (!err && disp_unit)
        *disp_unit = (int)unit;
    return err;
}

BMPI_API(MPI_Win_shared_query_c)
int PMPI_Win_shared_query_c(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void *baseptr)
{
    return shared_query(win, rank, size, disp_unit, baseptr, "MPI_Win_shared_query_c");
}

/* ---- dynamic windows ------------------------------------------------------ */

static int check_dynamic(MPI_Win win, const char *fn, struct bmpi_win **w)
{
    int err = bmpi_win_check(win, fn, w);
    if (err)
        return err;
    if ((*w)->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return bmpi_err_win_obj(*w, MPI_ERR_RMA_FLAVOR, fn, "window 0x%x is not dynamic", (unsigned)win);
    return MPI_SUCCESS;
}

BMPI_API(MPI_Win_attach)
int PMPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    const char *fn = "MPI_Win_attach";
    struct bmpi_win *w;
    int err = check_dynamic(win, fn, &w);
    if (err)
        return err;
    if (size < 0)
        return bmpi_err_win_obj(w, MPI_ERR_SIZE, fn, "negative size %lld", (long long)size);
    if (size > 0 && !base)
        return bmpi_err_win_obj(w, MPI_ERR_ARG, fn, "base is NULL for %lld bytes", (long long)size);
    uint64_t lo = (uint64_t)(uintptr_t)base, hi = lo + (uint64_t)size;
    for (int i = 0; i < w->nranges; i++)
        if (lo < w->ranges[i].base + w->ranges[i].size && w->ranges[i].base < hi)
            return bmpi_err_win_obj(w, MPI_ERR_RMA_ATTACH, fn,
                                    "[%p, +%lld) overlaps memory already attached", base, (long long)size);
    if (w->nranges == w->cap_ranges) {
        int cap = w->cap_ranges ? 2 * w->cap_ranges : 8;
        struct bmpi_win_range *v = realloc(w->ranges, (size_t)cap * sizeof *v);
        if (!v)
            return bmpi_err_win_obj(w, MPI_ERR_NO_MEM, fn, "out of memory");
        w->ranges = v;
        w->cap_ranges = cap;
    }
    w->ranges[w->nranges++] = (struct bmpi_win_range){lo, (uint64_t)size};
    return MPI_SUCCESS;
}

BMPI_API(MPI_Win_detach)
int PMPI_Win_detach(MPI_Win win, const void *base)
{
    const char *fn = "MPI_Win_detach";
    struct bmpi_win *w;
    int err = check_dynamic(win, fn, &w);
    if (err)
        return err;
    uint64_t at = (uint64_t)(uintptr_t)base;
    for (int i = 0; i < w->nranges; i++)
        if (w->ranges[i].base == at) {
            w->ranges[i] = w->ranges[--w->nranges];
            return MPI_SUCCESS;
        }
    return bmpi_err_win_obj(w, MPI_ERR_RMA_ATTACH, fn, "%p is not the base of memory attached to window 0x%x",
                            base, (unsigned)win);
}

bool bmpi_win_attached(const struct bmpi_win *w, uint64_t addr, uint64_t len)
{
    for (int i = 0; i < w->nranges; i++)
        if (addr >= w->ranges[i].base && len <= w->ranges[i].size &&
            addr - w->ranges[i].base <= w->ranges[i].size - len)
            return true;
    return false;
}
