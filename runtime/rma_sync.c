/*
 * Synchronization of one-sided communication: fence, post/start/
 * complete/wait/test, lock/unlock, lock_all/unlock_all, flush and sync
 * (runtime/win.h, docs/rma.md).
 *
 * Completion: an operation on a DIRECT target is complete when its call
 * returns; every other one is counted when issued and when answered (an
 * active message's ACK or RESP, a transport's done), so completing the
 * operations to a target is waiting for the two counts to meet, then a
 * transport flush where put's done means only local completion.
 *
 * Locks live in the target's control block: an origin on the target's
 * node takes it with atomics on the mapping, with no help from the
 * target; an origin elsewhere asks the target, whose progress takes it on
 * its behalf and answers GRANT (rma_am.c). PSCW posts and completes are
 * active messages counted per peer, so an early post for the next epoch
 * is kept, never confused with this one.
 */
#include "config.h"

#include <stdlib.h>

#include "runtime/api.h"
#include "runtime/comm.h"
#include "runtime/group.h"
#include "runtime/group_api.h"
#include "runtime/progress.h"
#include "runtime/rma_impl.h"
#include "runtime/rma_proto.h"
#include "runtime/world.h"
#include "transport/shm/cacheline.h"

/* ---- epochs -------------------------------------------------------------------- */

bool bmpi_rma_started(const struct bmpi_win *w, int target)
{
    for (int i = 0; i < w->start_group->size; i++)
        if (w->start_ranks[i] == target)
            return true;
    return false;
}

/* A fence that opened an epoch in which nothing happened yet may be
 * followed by any other synchronization, as in MPICH and Open MPI. */
static bool access_free(const struct bmpi_win *w)
{
    return w->access == BMPI_EPOCH_NONE || (w->access == BMPI_EPOCH_FENCE && w->epoch_ops == 0);
}

bool bmpi_rma_epoch_closable(const struct bmpi_win *w) { return access_free(w) && !w->post_open; }

/* ---- waiting ---------------------------------------------------------------------- */

/* Polls of a shared-memory word between two passes of the progress
 * engine: another rank's store is seen as soon as its line arrives, not
 * after a pass over every transport; progress still runs, so active
 * messages are served while a rank waits. */
#define POLLS_PER_PROGRESS 16

/* Run the progress engine until cond holds (re-evaluated after each
 * pass), napping while nothing moves. */
#define PROGRESS_UNTIL(cond)                                                                       \
    do {                                                                                           \
        unsigned idle_ = 0;                                                                        \
        while (!(cond))                                                                            \
            if (!bmpi_progress())                                                                  \
                bmpi_progress_idle(&idle_);                                                        \
    } while (0)

/* Wait until the word at *at is above floor. */
static void wait_above(volatile uint64_t *at, uint64_t floor)
{
    unsigned idle = 0;
    for (;;) {
        for (int i = 0; i < POLLS_PER_PROGRESS; i++) {
            if (__atomic_load_n(at, __ATOMIC_ACQUIRE) > floor)
                return;
            bmpi_cpu_relax();
        }
        if (!bmpi_progress())
            bmpi_progress_idle(&idle);
    }
}

/* ---- completion ------------------------------------------------------------------- */

void bmpi_rma_answered(struct bmpi_win *w, int target, int status)
{
    w->t[target].acked++;
    w->ops_pending--;
    if (status && !w->op_error)
        w->op_error = status;
}

static void flushed(void *ctx, int status)
{
    int *state = ctx;
    *state = status ? status : -1;
}

void bmpi_rma_wait_answered(struct bmpi_win *w, int target)
{
    struct bmpi_win_target *t = &w->t[target];
    if (t->batch)
        bmpi_rma_batch_send(w, target); /* an error counts them answered */
    PROGRESS_UNTIL(t->acked == t->issued);
}

void bmpi_rma_wait_all_answered(struct bmpi_win *w) { PROGRESS_UNTIL(w->ops_pending == 0); }

/* The operations to target whose answers nothing else stands in for:
 * all but the ordered ones (win.h, ordered_issued), the gathered ones
 * among them, which stay gathered. */
static void wait_unordered_answered(struct bmpi_win *w, int target)
{
    struct bmpi_win_target *t = &w->t[target];
    PROGRESS_UNTIL(t->issued - t->acked == t->ordered_issued - t->ordered_acked);
}

/* The data of the Gets gathered for target: they count as ordered, so a
 * fence's count or a PSCW complete sent after them reaches target after
 * it read them; only then is their data waited for. */
static void wait_gets_answered(struct bmpi_win *w, int target)
{
    PROGRESS_UNTIL(bmpi_rma_batch_gets_unanswered(&w->t[target]) == 0);
}

/* Puts of a transport whose completions are local only: its flush. */
static int flush_transport(struct bmpi_win *w, int target)
{
    struct bmpi_win_target *t = &w->t[target];
    if (t->net_unflushed) {
        int state = 0;
        int err = t->tl->ops->flush(t->tl, t->world, flushed, &state);
        if (!err)
            PROGRESS_UNTIL(state);
        t->net_unflushed = false;
        if (err || state > 0)
            return err ? err : state;
    }
    return BMPI_OK;
}

/* Every operation to target complete at the target. */
static int complete_target(struct bmpi_win *w, int target)
{
    bmpi_rma_wait_answered(w, target);
    return flush_transport(w, target);
}

/* Every operation to target complete here and at the target, except PUT
 * and ACC active messages still on their way: applied there before any
 * active message this rank sends target next (the transport delivers in
 * order per peer), so that message can tell target the epoch is over. */
static int complete_before_message(struct bmpi_win *w, int target)
{
    int err = bmpi_rma_batch_end_epoch(w, target, false);
    wait_unordered_answered(w, target);
    int flushed_err = flush_transport(w, target);
    return err ? err : flushed_err;
}

static int complete_all(struct bmpi_win *w)
{
    int err = BMPI_OK;
    if (w->ops_pending == 0) {
        for (int r = 0; r < w->comm->size && !err; r++)
            if (w->t[r].net_unflushed)
                err = complete_target(w, r);
        return err;
    }
    for (int r = 0; r < w->comm->size && !err; r++)
        err = complete_target(w, r);
    return err;
}

/* An error an answer brought is reported by the next call that completes. */
static int take_op_error(struct bmpi_win *w, const char *fn)
{
    int err = w->op_error;
    if (!err)
        return MPI_SUCCESS;
    w->op_error = 0;
    return bmpi_err_win_obj(w, err, fn, "an earlier operation failed at its target");
}

/* ---- fence ------------------------------------------------------------------------ */

/* The barrier of a window whose members all share one node: each rank
 * counts its fences in its control block and waits until every member's
 * count has caught up; no collective needs setting up, and the wait
 * keeps serving active messages. A rank cannot run two fences ahead of
 * another, so "caught up" is never confused between fences. */
static void node_fence_barrier(struct bmpi_win *w)
{
    uint64_t n = ++w->fences;
    __atomic_store_n(&w->ctl->fences, n, __ATOMIC_RELEASE);
    for (int r = 0; r < w->comm->size; r++)
        wait_above(&w->t[r].ctl->fences, n - 1);
}

/* The fence of a window across nodes: every rank completes its
 * operations but the ordered ones (PUT and ACC active messages, gathered
 * GETs, win.h), tells each target how
 * many of those it sent it since the last fence (a reduce-scatter, which
 * is the fence's barrier too), and waits until it has applied as many as
 * it is told: one collective, not a wait for answers and then a barrier,
 * as Open MPI's osc/pt2pt does it. */
static int counted_fence(struct bmpi_win *w)
{
    int n = w->comm->size, err = BMPI_OK;
    uint64_t *sent = malloc((size_t)n * sizeof *sent), incoming = 0;
    if (!sent)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory");
    for (int r = 0; r < n && !err; r++) {
        struct bmpi_win_target *t = &w->t[r];
        err = complete_before_message(w, r);
        sent[r] = t->ordered_issued - t->ordered_fenced;
        t->ordered_fenced = t->ordered_issued;
    }
    if (!err)
        err = PMPI_Reduce_scatter_block(sent, &incoming, 1, MPI_UINT64_T, MPI_SUM, w->comm->handle);
    free(sent);
    if (err)
        return err;
    /* What was announced left its origins before they entered this fence;
     * what they send after it, before this rank's next fence, counts in
     * the other parity. */
    int parity = (int)(w->fences++ & 1);
    w->ordered_expected[parity] += incoming;
    PROGRESS_UNTIL(w->ordered_applied[parity] >= w->ordered_expected[parity]);
    for (int r = 0; r < n; r++)
        wait_gets_answered(w, r);
    return BMPI_OK;
}

#define FENCE_ASSERTS (MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED)

BMPI_API(MPI_Win_fence)
int PMPI_Win_fence(int assert, MPI_Win win)
{
    const char *fn = "MPI_Win_fence";
    struct bmpi_win *w;
    int err = bmpi_win_check(win, fn, &w);
    if (err)
        return err;
    if (assert & ~FENCE_ASSERTS)
        return bmpi_err_win_obj(w, MPI_ERR_ASSERT, fn, "invalid assertion 0x%x", (unsigned)assert);
    if ((w->access != BMPI_EPOCH_NONE && w->access != BMPI_EPOCH_FENCE) || w->post_open)
        return bmpi_err_win_obj(w, MPI_ERR_RMA_SYNC, fn, "a PSCW or passive target epoch is open");
    /* the barrier ends every rank's accesses of the epoch, remote and local */
    if (w->node_fence) {
        if ((err = complete_all(w)))
            return bmpi_err_win_obj(w, err, fn, NULL);
        node_fence_barrier(w);
    } else if ((err = counted_fence(w))) {
        return bmpi_err_win_obj(w, err, fn, NULL);
    }
    w->access = assert & MPI_MODE_NOSUCCEED ? BMPI_EPOCH_NONE : BMPI_EPOCH_FENCE;
    w->epoch_ops = 0;
    return take_op_error(w, fn);
}

/* ---- PSCW ----------------------------------------------------------------------- */

/* The ranks in the window of group's members, into *g and *ranks. The
 * translation stays there for the next epoch: a program that posts to (or
 * starts with) the same group every time translates it once. */
static int group_ranks(struct bmpi_win *w, MPI_Group group, const char *fn, struct bmpi_group **g, int **ranks)
{
    struct bmpi_group *ng = bmpi_group_lookup(group);
    if (!ng)
        return bmpi_err_win_obj(w, MPI_ERR_GROUP, fn, "invalid group 0x%x", (unsigned)group);
    if (ng == *g)
        return MPI_SUCCESS;
    int *nr = malloc(((size_t)ng->size + 1) * sizeof(int));
    if (!nr)
        return bmpi_err_win_obj(w, MPI_ERR_NO_MEM, fn, "out of memory");
    const struct bmpi_group *wg = w->comm->group;
    for (int i = 0; i < ng->size; i++) {
        nr[i] = -1;
        for (int r = 0; r < wg->size && nr[i] < 0; r++)
            if (wg->world_ranks[r] == ng->world_ranks[i])
                nr[i] = r;
        if (nr[i] < 0) {
            free(nr);
            return bmpi_err_win_obj(w, MPI_ERR_GROUP, fn, "member %d of group 0x%x is not in the window", i,
                                    (unsigned)group);
        }
    }
    bmpi_rma_forget_group(g, ranks);
    bmpi_group_retain(ng);
    *g = ng;
    *ranks = nr;
    return MPI_SUCCESS;
}

void bmpi_rma_forget_group(struct bmpi_group **g, int **ranks)
{
    if (*g)
        bmpi_group_release(*g);
    free(*ranks);
    *g = NULL;
    *ranks = NULL;
}

/* Tell rank r: a post or complete, counted on its side per sender, in
 * its cell of the node region or by an active message. */
static int signal_rank(struct bmpi_win *w, int r, uint8_t am_id)
{
    struct bmpi_win_target *t = &w->t[r];
    bool post = am_id == BMPI_AM_RMA_POST;
    uint64_t *cell = post ? t->posts_out : t->completes_out;
    uint64_t n = post ? ++t->posts_sent : ++t->completes_sent;
    if (cell) {
        __atomic_store_n(cell, n, __ATOMIC_RELEASE);
        return BMPI_OK;
    }
    if (r != w->comm->rank)
        return bmpi_rma_am_ctl(w, r, am_id, 0);
    (*(post ? &t->posts_am : &t->completes_am))++;
    return BMPI_OK;
}

/* A complete to rank r: in the message that carries the operations
 * gathered for r, if any, else as signal_rank sends it. */
static int signal_complete(struct bmpi_win *w, int r)
{
    struct bmpi_win_target *t = &w->t[r];
    if (t->completes_out || r == w->comm->rank || !bmpi_rma_batch_pending(t))
        return signal_rank(w, r, BMPI_AM_RMA_COMPLETE);
    t->completes_sent++;
    return bmpi_rma_batch_end_epoch(w, r, true);
}

BMPI_API(MPI_Win_post)
int PMPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    const char *fn = "MPI_Win_post";
    struct bmpi_win *w;
    int err = bmpi_win_check(win, fn, &w);
    if (err)
        return err;
    if (assert & ~(MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT))
        return bmpi_err_win_obj(w, MPI_ERR_ASSERT, fn, "invalid assertion 0x%x", (unsigned)assert);
    if (w->post_open)
        return bmpi_err_win_obj(w, MPI_ERR_RMA_SYNC, fn, "an exposure epoch is already open");
    if ((err = group_ranks(w, group, fn, &w->post_group, &w->post_ranks)))
        return err;
    w->post_open = true;
    /* this rank's accesses to its window come before any origin's */
    __atomic_thread_fence(__ATOMIC_RELEASE);
    for (int i = 0; i < w->post_group->size && !(assert & MPI_MODE_NOCHECK) && !err; i++)
        err = signal_rank(w, w->post_ranks[i], BMPI_AM_RMA_POST);
    return err ? bmpi_err_win_obj(w, err, fn, NULL) : MPI_SUCCESS;
}

static void wait_count(volatile uint64_t *seen, uint64_t *used)
{
    wait_above(seen, *used);
    (*used)++;
}

BMPI_API(MPI_Win_start)
int PMPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    const char *fn = "MPI_Win_start";
    struct bmpi_win *w;
    int err = bmpi_win_check(win, fn, &w);
    if (err)
        return err;
    if (assert & ~MPI_MODE_NOCHECK)
        return bmpi_err_win_obj(w, MPI_ERR_ASSERT, fn, "invalid assertion 0x%x", (unsigned)assert);
    if (!access_free(w))
        return bmpi_err_win_obj(w, MPI_ERR_RMA_SYNC, fn, "an access epoch is already open");
    if ((err = group_ranks(w, group, fn, &w->start_group, &w->start_ranks)))
        return err;
    for (int i = 0; i < w->start_group->size && !(assert & MPI_MODE_NOCHECK); i++) {
        struct bmpi_win_target *t = &w->t[w->start_ranks[i]];
        wait_count(t->posts_in, &t->posts_used);
    }
    w->access = BMPI_EPOCH_PSCW;
    w->epoch_ops = 0;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Win_complete)
int PMPI_Win_complete(MPI_Win win)
{
    const char *fn = "MPI_Win_complete";
    struct bmpi_win *w;
    int err = bmpi_win_check(win, fn, &w);
    if (err)
        return err;
    if (w->access != BMPI_EPOCH_PSCW)
        return bmpi_err_win_obj(w, MPI_ERR_RMA_SYNC, fn, "no access epoch was started with MPI_Win_start");
    /* a complete sent by active message follows the epoch's operations:
     * it need not wait for their answers */
    for (int i = 0; i < w->start_group->size && !err; i++) {
        int r = w->start_ranks[i];
        if (w->t[r].completes_out) {
            err = complete_target(w, r);
        } else {
            wait_unordered_answered(w, r);
            err = flush_transport(w, r);
        }
    }
    for (int i = 0; i < w->start_group->size && !err; i++)
        err = signal_complete(w, w->start_ranks[i]);
    for (int i = 0; i < w->start_group->size && !err; i++)
        wait_gets_answered(w, w->start_ranks[i]);
    w->access = BMPI_EPOCH_NONE;
    if (err)
        return bmpi_err_win_obj(w, err, fn, NULL);
    return take_op_error(w, fn);
}

/* Whether every origin of the exposure epoch has completed; with consume,
 * take their completes. */
static bool all_completed(struct bmpi_win *w, bool consume)
{
    for (int i = 0; i < w->post_group->size; i++) {
        struct bmpi_win_target *t = &w->t[w->post_ranks[i]];
        if (__atomic_load_n(t->completes_in, __ATOMIC_ACQUIRE) == t->completes_used)
            return false;
    }
    for (int i = 0; i < w->post_group->size && consume; i++)
        w->t[w->post_ranks[i]].completes_used++;
    return true;
}

static int end_exposure(struct bmpi_win *w, bool block, int *flag, const char *fn)
{
    if (!w->post_open)
        return bmpi_err_win_obj(w, MPI_ERR_RMA_SYNC, fn, "no exposure epoch was opened with MPI_Win_post");
    if (block) {
        for (int i = 0; i < w->post_group->size; i++) {
            struct bmpi_win_target *t = &w->t[w->post_ranks[i]];
            wait_above(t->completes_in, t->completes_used);
        }
    } else if (!all_completed(w, false)) {
        bmpi_progress_poll();
        if (!all_completed(w, false)) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    }
    all_completed(w, true);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    w->post_open = false;
    if (flag)
        *flag = 1;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Win_wait)
int PMPI_Win_wait(MPI_Win win)
{
    const char *fn = "MPI_Win_wait";
    struct bmpi_win *w;
    int err = bmpi_win_check(win, fn, &w);
    return err ? err : end_exposure(w, true, NULL, fn);
}

BMPI_API(MPI_Win_test)
int PMPI_Win_test(MPI_Win win, int *flag)
{
    const char *fn = "MPI_Win_test";
    struct bmpi_win *w;
    int err = bmpi_win_check(win, fn, &w);
    if (err)
        return err;
    if (!flag)
        return bmpi_err_win_obj(w, MPI_ERR_ARG, fn, "flag is NULL");
    return end_exposure(w, false, flag, fn);
}

/* ---- passive target --------------------------------------------------------------- */

static void wait_granted(struct bmpi_win_target *t)
{
    PROGRESS_UNTIL(t->lock_granted);
    t->lock_granted = false;
}

/* Ask for target's lock; with a control block mapped here, take it. */
static int lock_ask(struct bmpi_win *w, int target, int lock_type, bool *asked)
{
    struct bmpi_win_target *t = &w->t[target];
    *asked = false;
    if (t->ctl) {
        PROGRESS_UNTIL(bmpi_rma_lock_try(t->ctl, lock_type));
        return BMPI_OK;
    }
    *asked = true;
    return bmpi_rma_am_ctl(w, target, BMPI_AM_RMA_LOCK, lock_type);
}

static int lock_release(struct bmpi_win *w, int target)
{
    struct bmpi_win_target *t = &w->t[target];
    int type = t->lock_held;
    t->lock_held = 0;
    if (t->lock_nocheck)
        return BMPI_OK;
    if (t->ctl) {
        bmpi_rma_lock_release(t->ctl, type);
        return BMPI_OK;
    }
    return bmpi_rma_am_ctl(w, target, BMPI_AM_RMA_UNLOCK, type);
}

static int check_lock_target(struct bmpi_win *w, int rank, const char *fn)
{
    if (rank < 0 || rank >= w->comm->size)
        return bmpi_err_win_obj(w, MPI_ERR_RANK, fn, "invalid rank %d (window of %d ranks)", rank, w->comm->size);
    return MPI_SUCCESS;
}

BMPI_API(MPI_Win_lock)
int PMPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    const char *fn = "MPI_Win_lock";
    struct bmpi_win *w;
    int err = bmpi_win_check(win, fn, &w);
    if (err || (err = check_lock_target(w, rank, fn)))
        return err;
    if (lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE)
        return bmpi_err_win_obj(w, MPI_ERR_LOCKTYPE, fn, "invalid lock type %d", lock_type);
    if (assert & ~MPI_MODE_NOCHECK)
        return bmpi_err_win_obj(w, MPI_ERR_ASSERT, fn, "invalid assertion 0x%x", (unsigned)assert);
    if (w->no_locks)
        return bmpi_err_win_obj(w, MPI_ERR_RMA_SYNC, fn, "the window was created with the hint no_locks");
    if (!access_free(w) && w->access != BMPI_EPOCH_LOCK)
        return bmpi_err_win_obj(w, MPI_ERR_RMA_SYNC, fn, "a fence, PSCW or lock_all epoch is open");
    struct bmpi_win_target *t = &w->t[rank];
    if (t->lock_held)
        return bmpi_err_win_obj(w, MPI_ERR_RMA_SYNC, fn, "rank %d is already locked", rank);
    t->lock_nocheck = assert & MPI_MODE_NOCHECK;
    if (!t->lock_nocheck) {
        bool asked;
        if ((err = lock_ask(w, rank, lock_type, &asked)))
            return bmpi_err_win_obj(w, err, fn, NULL);
        if (asked)
            wait_granted(t);
    }
    t->lock_held = lock_type;
    w->locks_held++;
    w->access = BMPI_EPOCH_LOCK;
    w->epoch_ops = 0;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Win_unlock)
int PMPI_Win_unlock(int rank, MPI_Win win)
{
    const char *fn = "MPI_Win_unlock";
    struct bmpi_win *w;
    int err = bmpi_win_check(win, fn, &w);
    if (err || (err = check_lock_target(w, rank, fn)))
        return err;
    if (w->access != BMPI_EPOCH_LOCK || !w->t[rank].lock_held)
        return bmpi_err_win_obj(w, MPI_ERR_RMA_SYNC, fn, "rank %d is not locked by MPI_Win_lock", rank);
    err = complete_target(w, rank);
    int rel = lock_release(w, rank);
    if (--w->locks_held == 0)
        w->access = BMPI_EPOCH_NONE;
    if (err || rel)
        return bmpi_err_win_obj(w, err ? err : rel, fn, NULL);
    return take_op_error(w, fn);
}

BMPI_API(MPI_Win_lock_all)
int PMPI_Win_lock_all(int assert, MPI_Win win)
{
    const char *fn = "MPI_Win_lock_all";
    struct bmpi_win *w;
    int err = bmpi_win_check(win, fn, &w);
    if (err)
        return err;
    if (assert & ~MPI_MODE_NOCHECK)
        return bmpi_err_win_obj(w, MPI_ERR_ASSERT, fn, "invalid assertion 0x%x", (unsigned)assert);
    if (w->no_locks)
        return bmpi_err_win_obj(w, MPI_ERR_RMA_SYNC, fn, "the window was created with the hint no_locks");
    if (!access_free(w))
        return bmpi_err_win_obj(w, MPI_ERR_RMA_SYNC, fn, "an access epoch is already open");
    bool nocheck = assert & MPI_MODE_NOCHECK;
    /* ask every target first, then wait: the grants come in parallel */
    for (int r = 0; r < w->comm->size && !err; r++) {
        struct bmpi_win_target *t = &w->t[r];
        t->lock_nocheck = nocheck;
        t->lock_asked = false;
        if (!nocheck) {
            bool asked;
            err = lock_ask(w, r, MPI_LOCK_SHARED, &asked);
            t->lock_asked = asked;
        }
    }
    for (int r = 0; r < w->comm->size && !err; r++) {
        if (w->t[r].lock_asked)
            wait_granted(&w->t[r]);
        w->t[r].lock_held = MPI_LOCK_SHARED;
    }
    if (err)
        return bmpi_err_win_obj(w, err, fn, NULL);
    w->access = BMPI_EPOCH_LOCK_ALL;
    w->epoch_ops = 0;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Win_unlock_all)
int PMPI_Win_unlock_all(MPI_Win win)
{
    const char *fn = "MPI_Win_unlock_all";
    struct bmpi_win *w;
    int err = bmpi_win_check(win, fn, &w);
    if (err)
        return err;
    if (w->access != BMPI_EPOCH_LOCK_ALL)
        return bmpi_err_win_obj(w, MPI_ERR_RMA_SYNC, fn, "no epoch was opened with MPI_Win_lock_all");
    err = complete_all(w);
    for (int r = 0; r < w->comm->size; r++) {
        int rel = lock_release(w, r);
        err = err ? err : rel;
    }
    w->access = BMPI_EPOCH_NONE;
    if (err)
        return bmpi_err_win_obj(w, err, fn, NULL);
    return take_op_error(w, fn);
}

/* flush, flush_local: bmpi's operations are complete at the target when
 * they are complete here, so both wait for the same thing. */
static int flush_one(MPI_Win win, int rank, const char *fn)
{
    struct bmpi_win *w;
    int err = bmpi_win_check(win, fn, &w);
    if (err || (err = check_lock_target(w, rank, fn)))
        return err;
    if (!((w->access == BMPI_EPOCH_LOCK && w->t[rank].lock_held) || w->access == BMPI_EPOCH_LOCK_ALL))
        return bmpi_err_win_obj(w, MPI_ERR_RMA_SYNC, fn, "no passive target epoch is open to rank %d", rank);
    if ((err = complete_target(w, rank)))
        return bmpi_err_win_obj(w, err, fn, NULL);
    /* stores to mapped targets ordered before anything after the flush */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    /* a rank that only touches mapped memory still serves the others'
     * active messages: a spin of CAS + flush on its own word must not
     * starve a remote origin that holds the lock it spins for */
    if (w->serves_am)
        bmpi_progress_poll();
    return take_op_error(w, fn);
}

static int flush_every(MPI_Win win, const char *fn)
{
    struct bmpi_win *w;
    int err = bmpi_win_check(win, fn, &w);
    if (err)
        return err;
    if (w->access != BMPI_EPOCH_LOCK && w->access != BMPI_EPOCH_LOCK_ALL)
        return bmpi_err_win_obj(w, MPI_ERR_RMA_SYNC, fn, "no passive target epoch is open");
    if ((err = complete_all(w)))
        return bmpi_err_win_obj(w, err, fn, NULL);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return take_op_error(w, fn);
}

BMPI_API(MPI_Win_flush)
int PMPI_Win_flush(int rank, MPI_Win win) { return flush_one(win, rank, "MPI_Win_flush"); }

BMPI_API(MPI_Win_flush_local)
int PMPI_Win_flush_local(int rank, MPI_Win win) { return flush_one(win, rank, "MPI_Win_flush_local"); }

BMPI_API(MPI_Win_flush_all)
int PMPI_Win_flush_all(MPI_Win win) { return flush_every(win, "MPI_Win_flush_all"); }

BMPI_API(MPI_Win_flush_local_all)
int PMPI_Win_flush_local_all(MPI_Win win) { return flush_every(win, "MPI_Win_flush_local_all"); }

/* The unified model has one copy of the window: sync orders this
 * process's loads and stores against the other processes' (a full
 * barrier), and moves messages meanwhile. */
BMPI_API(MPI_Win_sync)
int PMPI_Win_sync(MPI_Win win)
{
    struct bmpi_win *w;
    int err = bmpi_win_check(win, "MPI_Win_sync", &w);
    if (err)
        return err;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    bmpi_progress_poll();
    return MPI_SUCCESS;
}
