/*
 * Intercommunicators: point-to-point between two disjoint groups, and the
 * calls that make and unmake them (MPI_Intercomm_create,
 * MPI_Intercomm_merge, dup, split, free, the remote-group queries).
 *
 * An intercommunicator keeps its local group in group/rank/size (what
 * MPI_Comm_rank and MPI_Comm_size report), the remote group that the ranks
 * of point-to-point calls name (bmpi_comm_world_rank maps through it), one
 * context id pair free on every process of both groups, and a hidden
 * intracommunicator over the local group for the agreements that dup and
 * merge need. A message's envelope carries the sender's rank in its own
 * group, which is the rank the receiver's remote group knows it by, so the
 * point-to-point layer needs nothing else.
 *
 * A context id for both groups: each group ANDs its members' free-pair
 * bitmaps (an allreduce over the local intracommunicator), the two leaders
 * swap their group's bitmap over a bridge (the peer communicator for
 * MPI_Intercomm_create, the intercommunicator itself afterwards), each
 * leader broadcasts the other group's bitmap to its group, and every
 * process reserves the lowest pair free in both. Each process takes part in
 * one creation at a time, so the bitmaps stay true until the reservation.
 *
 * MPI_Comm_split of an intercommunicator (and so create and split_type)
 * runs the same agreement with every member's colour and key in the lists
 * the leaders swap. Collectives on intercommunicators are in
 * collectives/inter.c. The calls MPI defines on intracommunicators only
 * (topologies, neighbourhood collectives, MPI_Comm_create_group) refuse
 * them with MPI_ERR_COMM through bmpi_check_intracomm.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "collectives/coll.h"
#include "runtime/api.h"
#include "runtime/context.h"
#include "runtime/group_api.h"
#include "runtime/p2p.h"
#include "runtime/tl_select.h"
#include "runtime/world.h"

/* Leader exchanges on an intercommunicator's collective context. */
#define TAG_INTER_HEADER (-104)
#define TAG_INTER_RANKS (-105)

int bmpi_check_intracomm(MPI_Comm comm, const char *fn, struct bmpi_comm **c)
{
    int err = bmpi_check_comm(comm, fn, c);
    if (err)
        return err;
    if ((*c)->remote_group)
        return bmpi_err_comm(comm, MPI_ERR_COMM, fn,
                             "communicator 0x%x is an intercommunicator; MPI defines this call "
                             "on intracommunicators only",
                             (unsigned)comm);
    return MPI_SUCCESS;
}

/* Where the two leaders talk: their communicator, the other leader's rank
 * in it, and the tags and context for the two messages of a swap. */
struct bridge {
    struct bmpi_comm *comm;
    int peer;
    int header_tag, ranks_tag;
    uint32_t cid;
};

/* What one group tells the other: its free pairs, an int (high for merge),
 * and its members' world ranks (for MPI_Intercomm_create). */
struct side {
    uint64_t mask[BMPI_CTX_WORDS];
    int flag;
    int nranks;
};

/* Send ours and receive theirs at once, so that neither leader waits for
 * the other to receive first. */
static int swap(const struct bridge *b, const void *out, size_t out_bytes, void *in,
                size_t in_bytes, int tag)
{
    struct bmpi_request *rreq, *sreq;
    int err = bmpi_irecv(in, in_bytes, MPI_BYTE, b->peer, tag, b->comm, b->cid, &rreq);
    if (err)
        return err;
    err = bmpi_isend(out, out_bytes, MPI_BYTE, b->peer, tag, b->comm, b->cid, BMPI_SEND_STANDARD,
                     &sreq);
    int rerr = bmpi_request_wait(rreq, MPI_STATUS_IGNORE);
    if (!err)
        err = bmpi_request_wait(sreq, MPI_STATUS_IGNORE);
    return err ? err : rerr;
}

/* Run a blocking collective built on the stack from inside the runtime
 * (err: how building it went). */
static int run_built(struct bmpi_sched *s, int err)
{
    if (err) {
        bmpi_sched_destroy(s);
        return err;
    }
    return bmpi_sched_run(s);
}

static int local_allreduce_band(struct bmpi_comm *local, uint64_t *mask)
{
    struct bmpi_sched s;
    bmpi_sched_init(&s, local);
    bmpi_sched_set_op(&s, bmpi_op_get(MPI_BAND));
    return run_built(&s, bmpi_coll_allreduce(&s, MPI_IN_PLACE, mask, BMPI_CTX_WORDS, MPI_UINT64_T));
}

static int local_bcast(struct bmpi_comm *local, void *buf, size_t bytes, int root)
{
    struct bmpi_sched s;
    bmpi_sched_init(&s, local);
    return run_built(&s, bmpi_coll_bcast(&s, buf, bytes, MPI_BYTE, root));
}

/*
 * The agreement of the two groups. Collective over local (an
 * intracommunicator); the leader (local rank leader) talks over the
 * bridge. ours->flag and ranks[0 .. ours->nranks) go to the other group;
 * *theirs and *their_ranks (malloc'ed, may be NULL when empty) come back on
 * every process, with the context id reserved in *id.
 */
static int agree_across(struct bmpi_comm *local, int leader, const struct bridge *b,
                        struct side *ours, const int *ranks, struct side *theirs,
                        int **their_ranks, uint32_t *id)
{
    *their_ranks = NULL;
    bmpi_ctx_free_mask(ours->mask);
    int err = local_allreduce_band(local, ours->mask);
    if (!err && local->rank == leader)
        err = swap(b, ours, sizeof(*ours), theirs, sizeof(*theirs), b->header_tag);
    /* a failed leader still broadcasts, so no member waits forever: the
     * error travels as nranks < 0 */
    if (err && local->rank == leader)
        theirs->nranks = -1;
    int berr = local_bcast(local, theirs, sizeof(*theirs), leader);
    if (!err && (berr || theirs->nranks < 0))
        err = berr ? berr : bmpi_err_set(MPI_ERR_INTERN, "the leader could not reach the other group");
    if (err)
        return err;
    size_t bytes = (size_t)theirs->nranks * sizeof(int);
    if (bytes && !(*their_ranks = malloc(bytes)))
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for the remote group");
    if (bytes || ours->nranks) {
        /* both sides send, even an empty list, so the swap pairs up */
        if (local->rank == leader)
            err = swap(b, ranks, (size_t)ours->nranks * sizeof(int), *their_ranks, bytes,
                       b->ranks_tag);
        if (bytes && !err)
            err = local_bcast(local, *their_ranks, bytes, leader);
    }
    for (int w = 0; !err && w < BMPI_CTX_WORDS; w++)
        ours->mask[w] &= theirs->mask[w];
    if (!err)
        err = bmpi_ctx_reserve_lowest(ours->mask, id);
    if (err) {
        free(*their_ranks);
        *their_ranks = NULL;
    }
    return err;
}

/* The intercommunicator over hidden's group (its local group and hidden
 * local communicator, which it takes over) and the remote group given by
 * world ranks, with context id `id`, parent's error handler. */
static int make_inter(struct bmpi_comm *parent, struct bmpi_comm *hidden, const int *remote_ranks,
                      int nremote, uint32_t id, struct bmpi_comm **out)
{
    struct bmpi_group *rg = bmpi_group_new(remote_ranks, nremote);
    struct bmpi_comm *c = NULL;
    int err = rg ? BMPI_OK : bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for the remote group");
    if (err)
        bmpi_ctx_release(id);
    else
        err = bmpi_comm_build(parent, hidden->group, id, &c);
    if (err) {
        bmpi_group_release(rg);
        bmpi_comm_release(hidden);
        return err;
    }
    c->remote_group = rg;
    c->local_comm = hidden;
    *out = c;
    return BMPI_OK;
}

/* The same with the hidden local intracommunicator over local's group,
 * with context id local_id. */
static int build_inter_ids(struct bmpi_comm *parent, struct bmpi_comm *local, const int *remote_ranks,
                           int nremote, uint32_t id, uint32_t local_id, struct bmpi_comm **out)
{
    struct bmpi_comm *hidden = NULL;
    int err = bmpi_comm_build(local, local->group, local_id, &hidden);
    if (err) {
        bmpi_ctx_release(id);
        return err;
    }
    return make_inter(parent, hidden, remote_ranks, nremote, id, out);
}

/* The intercommunicator over local's group and the remote group given by
 * world ranks, with context id `id`; the hidden local intracommunicator is
 * a dup of local. */
static int build_inter(struct bmpi_comm *parent, struct bmpi_comm *local, const int *remote_ranks, int nremote,
                       uint32_t id, struct bmpi_comm **out)
{
    uint32_t local_id;
    int err = bmpi_ctx_new(local, &local_id);
    if (err) {
        bmpi_ctx_release(id);
        return err;
    }
    return build_inter_ids(parent, local, remote_ranks, nremote, id, local_id, out);
}

int bmpi_intercomm_build(struct bmpi_comm *local, const int *remote, int nremote, uint32_t id,
                         struct bmpi_comm **out)
{
    return build_inter(local, local, remote, nremote, id, out);
}

static bool in_group(const struct bmpi_group *g, int world_rank)
{
    for (int i = 0; i < g->size; i++)
        if (g->world_ranks[i] == world_rank)
            return true;
    return false;
}

static int check_create_args(struct bmpi_comm *local, int local_leader, MPI_Comm peer_comm,
                             int remote_leader, struct bmpi_comm **peer, const char *fn)
{
    MPI_Comm lh = local->handle;
    if (local_leader < 0 || local_leader >= local->size)
        return bmpi_err_comm(lh, MPI_ERR_RANK, fn, "invalid local_leader %d (local size %d)",
                             local_leader, local->size);
    if (local->rank != local_leader)
        return MPI_SUCCESS; /* peer_comm and remote_leader matter at the leader only */
    int err = bmpi_check_comm(peer_comm, fn, peer);
    if (err)
        return err;
    if (remote_leader < 0 || remote_leader >= bmpi_comm_peer_size(*peer))
        return bmpi_err_comm(lh, MPI_ERR_RANK, fn, "invalid remote_leader %d (peer_comm size %d)",
                             remote_leader, bmpi_comm_peer_size(*peer));
    if (in_group(local->group, bmpi_comm_world_rank(*peer, remote_leader)))
        return bmpi_err_comm(lh, MPI_ERR_RANK, fn,
                             "remote_leader %d is a member of the local group: the two groups "
                             "must be disjoint", remote_leader);
    return MPI_SUCCESS;
}

/* The leaders swap their groups' members as (job, rank) names, not peer
 * indices: the groups may hold processes of other jobs (docs/dynamic.md),
 * which every process knows by an index of its own. */
#define NAME_INTS 3

static void proc_name(int index, int *out)
{
    const struct bmpi_peer *p = &bmpi_world.peers[index];
    out[0] = (int)(uint32_t)p->job;
    out[1] = (int)(uint32_t)(p->job >> 32);
    out[2] = p->job_rank;
}

/* names (NAME_INTS ints each) become peer indices in names[0 .. n). */
static int names_to_indices(int *names, int n)
{
    for (int i = 0; i < n; i++) {
        const int *nm = names + NAME_INTS * i;
        uint64_t job = (uint64_t)(uint32_t)nm[0] | (uint64_t)(uint32_t)nm[1] << 32;
        int index = bmpi_proc_index(job, nm[2]);
        if (index < 0)
            return bmpi_err_set(MPI_ERR_OTHER,
                                "member %d of the remote group (rank %d of job %016llx) is a process this one "
                                "was never connected to",
                                i, nm[2], (unsigned long long)job);
        names[i] = index;
    }
    return BMPI_OK;
}

BMPI_API(MPI_Intercomm_create)
int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                          int remote_leader, int tag, MPI_Comm *newintercomm)
{
    const char *fn = "MPI_Intercomm_create";
    struct bmpi_comm *local, *peer = NULL;
    int err = bmpi_check_intracomm(local_comm, fn, &local);
    if (err)
        return err;
    if (!newintercomm)
        return bmpi_err_comm(local_comm, MPI_ERR_ARG, fn, "newintercomm is NULL");
    if (tag < 0)
        return bmpi_err_comm(local_comm, MPI_ERR_TAG, fn, "invalid tag %d", tag);
    if ((err = check_create_args(local, local_leader, peer_comm, remote_leader, &peer, fn)))
        return err;
    struct bridge b = {peer, remote_leader, tag, tag, peer ? peer->context_id : 0};
    struct side ours = {.nranks = NAME_INTS * local->size}, theirs;
    int *names = malloc((size_t)ours.nranks * sizeof(int) + 1), *their_names = NULL;
    if (!names)
        return bmpi_err_comm(local_comm, MPI_ERR_NO_MEM, fn, "out of memory");
    for (int i = 0; i < local->size; i++)
        proc_name(local->group->world_ranks[i], names + NAME_INTS * i);
    uint32_t id;
    err = agree_across(local, local_leader, &b, &ours, names, &theirs, &their_names, &id);
    free(names);
    if (err)
        return bmpi_err_comm(local_comm, err, fn, NULL);
    int nremote = theirs.nranks / NAME_INTS;
    struct bmpi_comm *c;
    err = names_to_indices(their_names, nremote);
    if (err)
        bmpi_ctx_release(id);
    else
        err = build_inter(local, local, their_names, nremote, id, &c);
    free(their_names);
    if (err)
        return bmpi_err_comm(local_comm, err, fn, NULL);
    *newintercomm = c->handle;
    return MPI_SUCCESS;
}

/* The bridge of an existing intercommunicator: leaders are rank 0 of each
 * group, talking on its collective context. */
static struct bridge own_bridge(struct bmpi_comm *inter)
{
    return (struct bridge){inter, 0, TAG_INTER_HEADER, TAG_INTER_RANKS, inter->context_id + 1};
}

int bmpi_intercomm_dup(struct bmpi_comm *inter, struct bmpi_comm **out)
{
    struct bridge b = own_bridge(inter);
    struct side ours = {0}, theirs;
    int *none;
    uint32_t id;
    int err = agree_across(inter->local_comm, 0, &b, &ours, NULL, &theirs, &none, &id);
    if (err)
        return err;
    return build_inter(inter, inter->local_comm, inter->remote_group->world_ranks, inter->remote_group->size, id,
                       out);
}

int bmpi_intercomm_dup_ids(struct bmpi_comm *inter, const uint32_t ids[2], struct bmpi_comm **out)
{
    return build_inter_ids(inter, inter->local_comm, inter->remote_group->world_ranks, inter->remote_group->size,
                           ids[0], ids[1], out);
}

/* My side of a split once both groups know every member's colour and key
 * (their_vals: the other group's, by remote rank): the hidden local
 * communicator is a split of the old one, joined only where the colour has
 * members on the other side too. */
static int split_sides(struct bmpi_comm *inter, int color, int key, const int *their_vals, uint32_t id,
                       struct bmpi_comm **out)
{
    const struct bmpi_group *rg = inter->remote_group;
    int *remote = malloc((size_t)rg->size * sizeof(int));
    int cnt = !remote ? -1 : color == MPI_UNDEFINED ? 0 : bmpi_split_members(their_vals, rg->size, color, remote);
    struct bmpi_comm *hidden = NULL;
    /* collective over the whole local group, even on failure here */
    int err = bmpi_comm_split_internal(inter->local_comm, cnt > 0 ? color : MPI_UNDEFINED, key, &hidden);
    if (!err && cnt < 0)
        err = bmpi_err_set(MPI_ERR_NO_MEM, "out of memory splitting an intercommunicator");
    if (err || !hidden) {
        if (hidden)
            bmpi_comm_release(hidden);
        bmpi_ctx_release(id);
        free(remote);
        return err;
    }
    for (int i = 0; i < cnt; i++)
        remote[i] = rg->world_ranks[remote[i]];
    err = make_inter(inter, hidden, remote, cnt, id, out);
    free(remote);
    return err;
}

/* Both groups learn every member's colour and key: gathered in each group,
 * swapped by the leaders along with the free pairs; one context id free on
 * every process of both groups serves all colours, whose groups are
 * disjoint. */
int bmpi_intercomm_split(struct bmpi_comm *inter, int color, int key, struct bmpi_comm **out)
{
    struct bmpi_comm *local = inter->local_comm;
    int n = local->size;
    *out = NULL;
    int *vals = malloc((size_t)n * 2 * sizeof(int));
    if (!vals)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory splitting an intercommunicator");
    vals[2 * local->rank] = color;
    vals[2 * local->rank + 1] = key;
    uint32_t none_id, id;
    int err = bmpi_ctx_agree(local, NULL, n, local->rank, BMPI_TAG_CTX_UP, BMPI_TAG_CTX_DOWN, vals, 2, 0,
                             &none_id);
    struct bridge b = own_bridge(inter);
    struct side ours = {.nranks = 2 * n}, theirs;
    int *their_vals = NULL;
    if (!err)
        err = agree_across(local, 0, &b, &ours, vals, &theirs, &their_vals, &id);
    free(vals);
    if (!err)
        err = split_sides(inter, color, key, their_vals, id, out);
    free(their_vals);
    return err;
}

BMPI_API(MPI_Intercomm_merge)
int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    const char *fn = "MPI_Intercomm_merge";
    struct bmpi_comm *c;
    int err = bmpi_check_comm(intercomm, fn, &c);
    if (err)
        return err;
    if (!c->remote_group)
        return bmpi_err_comm(intercomm, MPI_ERR_COMM, fn,
                             "communicator 0x%x is not an intercommunicator", (unsigned)intercomm);
    if (!newintracomm)
        return bmpi_err_comm(intercomm, MPI_ERR_ARG, fn, "newintracomm is NULL");
    struct bridge b = own_bridge(c);
    struct side ours = {.flag = high != 0}, theirs;
    int *none;
    uint32_t id;
    if ((err = agree_across(c->local_comm, 0, &b, &ours, NULL, &theirs, &none, &id)))
        return bmpi_err_comm(intercomm, err, fn, NULL);
    /* The group with high false comes first; when both say the same, the
     * group whose leader comes first (job, then rank: the groups may be
     * of two jobs, which know each other by different indices). */
    const struct bmpi_group *lg = c->group, *rg = c->remote_group;
    bool local_first = ours.flag != theirs.flag ? !ours.flag
                                                : bmpi_proc_before(lg->world_ranks[0], rg->world_ranks[0]);
    const struct bmpi_group *first = local_first ? lg : rg, *second = local_first ? rg : lg;
    int n = lg->size + rg->size;
    int *ranks = malloc((size_t)n * sizeof(int));
    struct bmpi_group *g = NULL;
    if (ranks) {
        memcpy(ranks, first->world_ranks, (size_t)first->size * sizeof(int));
        memcpy(ranks + first->size, second->world_ranks, (size_t)second->size * sizeof(int));
        g = bmpi_group_new(ranks, n);
        free(ranks);
    }
    if (!g) {
        bmpi_ctx_release(id);
        return bmpi_err_comm(intercomm, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    struct bmpi_comm *merged;
    err = bmpi_comm_build(c, g, id, &merged);
    bmpi_group_release(g);
    if (err)
        return bmpi_err_comm(intercomm, err, fn, NULL);
    *newintracomm = merged->handle;
    return MPI_SUCCESS;
}

static int check_inter(MPI_Comm comm, const char *fn, struct bmpi_comm **c)
{
    int err = bmpi_check_comm(comm, fn, c);
    if (err)
        return err;
    if (!(*c)->remote_group)
        return bmpi_err_comm(comm, MPI_ERR_COMM, fn,
                             "communicator 0x%x is not an intercommunicator", (unsigned)comm);
    return MPI_SUCCESS;
}

BMPI_API(MPI_Comm_remote_size)
int PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    struct bmpi_comm *c;
    int err = check_inter(comm, "MPI_Comm_remote_size", &c);
    if (err)
        return err;
    if (!size)
        return bmpi_err_comm(comm, MPI_ERR_ARG, "MPI_Comm_remote_size", "size is NULL");
    *size = c->remote_group->size;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Comm_remote_group)
int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    struct bmpi_comm *c;
    int err = check_inter(comm, "MPI_Comm_remote_group", &c);
    if (err)
        return err;
    if (!group)
        return bmpi_err_comm(comm, MPI_ERR_ARG, "MPI_Comm_remote_group", "group is NULL");
    bmpi_group_retain(c->remote_group);
    if ((err = bmpi_group_make_handle(c->remote_group, group)))
        return bmpi_err_comm(comm, err, "MPI_Comm_remote_group", NULL);
    return MPI_SUCCESS;
}
