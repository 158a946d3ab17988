/*
 * Creating, comparing, naming and freeing communicators: MPI_Comm_dup,
 * split, split_type, create, create_group, free and friends. Every
 * creation agrees on a context id with runtime/context.c; those of
 * intercommunicators are in runtime/intercomm.c.
 */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/api.h"
#include "runtime/attr.h"
#include "runtime/comm.h"
#include "runtime/context.h"
#include "runtime/errhandler.h"
#include "runtime/group_api.h"
#include "runtime/info.h"
#include "runtime/p2p.h"
#include "runtime/progress.h"
#include "runtime/request.h"
#include "runtime/topo.h"
#include "runtime/world.h"

int bmpi_comm_build(struct bmpi_comm *parent, struct bmpi_group *g, uint32_t id, struct bmpi_comm **out)
{
    *out = NULL;
    if (!g) {
        bmpi_ctx_release(id);
        return BMPI_OK;
    }
    struct bmpi_comm *c;
    int err = bmpi_comm_create_from_group(g, id, &c);
    if (err) {
        bmpi_ctx_release(id);
        return err;
    }
    bmpi_errhandler_retain(parent->errhandler);
    bmpi_errhandler_release(c->errhandler);
    c->errhandler = parent->errhandler;
    *out = c;
    return BMPI_OK;
}

void bmpi_comm_teardown(struct bmpi_comm *c)
{
    /* delete callbacks may use the communicator; a reference they take and
     * drop must not free it under us */
    c->refcount++;
    bmpi_attr_comm_delete_all(c);
    c->refcount--;
    bmpi_topo_free(c->topo);
    c->topo = NULL;
    bmpi_info_destroy(c->info);
    c->info = NULL;
    if (c->handle != MPI_COMM_WORLD && c->handle != MPI_COMM_SELF)
        bmpi_ctx_release(c->context_id);
}

struct member {
    int key, rank;
};

static int by_key(const void *a, const void *b)
{
    const struct member *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

int bmpi_split_members(const int *vals, int n, int color, int *ranks)
{
    struct member *m = malloc((size_t)(n ? n : 1) * sizeof(*m));
    if (!m) {
        bmpi_err_set(MPI_ERR_NO_MEM, "out of memory splitting a communicator of %d", n);
        return -1;
    }
    int cnt = 0;
    for (int r = 0; r < n; r++)
        if (vals[2 * r] == color)
            m[cnt++] = (struct member){vals[2 * r + 1], r};
    qsort(m, (size_t)cnt, sizeof(*m), by_key);
    for (int i = 0; i < cnt; i++)
        ranks[i] = m[i].rank;
    free(m);
    return cnt;
}

int bmpi_comm_split_internal(struct bmpi_comm *parent, int color, int key, struct bmpi_comm **out)
{
    int n = parent->size;
    *out = NULL;
    int *vals = malloc((size_t)n * 2 * sizeof(int));
    int *wr = malloc((size_t)n * sizeof(int));
    int err = BMPI_OK;
    if (!vals || !wr) {
        err = bmpi_err_set(MPI_ERR_NO_MEM, "out of memory splitting a communicator of %d", n);
        goto out;
    }
    vals[2 * parent->rank] = color;
    vals[2 * parent->rank + 1] = key;
    uint32_t id;
    if ((err = bmpi_ctx_agree(parent, NULL, n, parent->rank, BMPI_TAG_CTX_UP, BMPI_TAG_CTX_DOWN, vals, 2, 1,
                              &id)))
        goto out;
    struct bmpi_group *g = NULL;
    if (color != MPI_UNDEFINED) {
        int cnt = bmpi_split_members(vals, n, color, wr);
        for (int i = 0; i < cnt; i++)
            wr[i] = bmpi_comm_world_rank(parent, wr[i]);
        if (cnt < 0 || !(g = bmpi_group_new(wr, cnt))) {
            bmpi_ctx_release(id);
            err = bmpi_err_set(MPI_ERR_NO_MEM, "out of memory splitting a communicator");
            goto out;
        }
    }
    err = bmpi_comm_build(parent, g, id, out);
    bmpi_group_release(g);
out:
    free(wr);
    free(vals);
    return err;
}

static int check_newcomm(MPI_Comm comm, const char *fn, MPI_Comm *newcomm)
{
    return newcomm ? MPI_SUCCESS : bmpi_err_comm(comm, MPI_ERR_ARG, fn, "newcomm is NULL");
}

static int dup_intra(struct bmpi_comm *parent, struct bmpi_comm **out)
{
    uint32_t id;
    int err = bmpi_ctx_new(parent, &id);
    return err ? err : bmpi_comm_build(parent, parent->group, id, out);
}

/* What a dup takes from parent besides its groups: the topology, the
 * given hints (info_src) or parent's, the attributes through their copy
 * callbacks. c is freed on failure. */
static int dup_extras(struct bmpi_comm *parent, struct bmpi_comm *c, const struct bmpi_info *info_src,
                      int use_info)
{
    int err = BMPI_OK;
    const struct bmpi_info *src = use_info ? info_src : parent->info;
    if (parent->topo && !(c->topo = bmpi_topo_dup(parent->topo)))
        err = bmpi_err_set(MPI_ERR_NO_MEM, "out of memory copying a topology");
    else if (src && !(c->info = bmpi_info_clone(src)))
        err = bmpi_err_set(MPI_ERR_NO_MEM, "out of memory copying info hints");
    else
        err = bmpi_attr_comm_copy(parent, c);
    if (err)
        bmpi_comm_release(c);
    return err;
}

/* A copy of parent: same group, fresh context id, attributes copied by
 * their callbacks, topology kept, and the given hints (info_src). */
static int comm_dup(struct bmpi_comm *parent, const struct bmpi_info *info_src, int use_info,
                    struct bmpi_comm **out)
{
    struct bmpi_comm *c;
    int err = parent->remote_group ? bmpi_intercomm_dup(parent, &c) : dup_intra(parent, &c);
    if (!err && !(err = dup_extras(parent, c, info_src, use_info)))
        *out = c;
    return err;
}

static int dup_entry(MPI_Comm comm, MPI_Info info, int use_info, MPI_Comm *newcomm, const char *fn)
{
    struct bmpi_comm *c, *nc = NULL;
    int err = bmpi_check_comm(comm, fn, &c);
    if (err)
        return err;
    if ((err = check_newcomm(comm, fn, newcomm)))
        return err;
    struct bmpi_info *inf = NULL;
    if (use_info && info != MPI_INFO_NULL && !(inf = bmpi_info_lookup(info)))
        return bmpi_err_comm(comm, MPI_ERR_INFO, fn, "invalid info 0x%x", (unsigned)info);
    if ((err = comm_dup(c, inf, use_info, &nc)))
        return bmpi_err_comm(comm, err, fn, NULL);
    *newcomm = nc->handle;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Comm_dup)
int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    return dup_entry(comm, MPI_INFO_NULL, 0, newcomm, "MPI_Comm_dup");
}

BMPI_API(MPI_Comm_dup_with_info)
int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    return dup_entry(comm, info, 1, newcomm, "MPI_Comm_dup_with_info");
}

/* An MPI_Comm_idup in flight, finished by idup_done once the context ids
 * are agreed. The request holds the parent. */
struct idup {
    struct bmpi_request *req;
    struct bmpi_info *info; /* idup_with_info's hints, copied at the call */
    int use_info;
    MPI_Comm *newcomm;
};

static void idup_done(void *arg, int err, const uint32_t *ids)
{
    struct idup *d = arg;
    struct bmpi_comm *parent = d->req->comm, *c = NULL;
    if (!err)
        err = parent->remote_group ? bmpi_intercomm_dup_ids(parent, ids, &c)
                                   : bmpi_comm_build(parent, parent->group, ids[0], &c);
    if (!err && (err = dup_extras(parent, c, d->info, d->use_info)))
        c = NULL;
    *d->newcomm = c ? c->handle : MPI_COMM_NULL;
    d->req->status.MPI_ERROR = err;
    bmpi_request_complete(d->req);
    bmpi_info_destroy(d->info);
    free(d);
}

/*
 * The nonblocking dups. An id agreed ahead for parent (see context.c)
 * completes the request at once; otherwise the agreement runs in the
 * background (bmpi_ctx_agree_nb), so a process may wait for another in
 * anything (a receive, another creation) while its idup is in flight.
 */
static int idup_entry(MPI_Comm comm, MPI_Info info, int use_info, MPI_Comm *newcomm, MPI_Request *request,
                      const char *fn)
{
    struct bmpi_comm *c;
    int err = bmpi_check_comm(comm, fn, &c);
    if (err || (err = check_newcomm(comm, fn, newcomm)))
        return err;
    if (!request)
        return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "request is NULL");
    struct bmpi_info *inf = NULL;
    if (use_info && info != MPI_INFO_NULL && !(inf = bmpi_info_lookup(info)))
        return bmpi_err_comm(comm, MPI_ERR_INFO, fn, "invalid info 0x%x", (unsigned)info);
    struct idup *d = calloc(1, sizeof(*d));
    struct bmpi_request *req = d ? bmpi_request_new(BMPI_REQ_COLL) : NULL;
    if (!req || bmpi_request_handle(req) == MPI_REQUEST_NULL || (inf && !(d->info = bmpi_info_clone(inf)))) {
        if (req)
            bmpi_request_free(req);
        free(d);
        return bmpi_err_comm(comm, MPI_ERR_NO_MEM, fn, "out of memory for the request");
    }
    req->comm = c;
    c->refcount++; /* released with the request */
    *d = (struct idup){req, d->info, use_info, newcomm};
    *request = req->handle;
    uint32_t id;
    if (!c->remote_group && bmpi_ctx_take_cached(c, &id)) {
        idup_done(d, BMPI_OK, &id);
        return MPI_SUCCESS;
    }
    if ((err = bmpi_ctx_agree_nb(c, idup_done, d))) {
        bmpi_request_free(req);
        bmpi_info_destroy(d->info);
        free(d);
        *request = MPI_REQUEST_NULL;
        return bmpi_err_comm(comm, err, fn, NULL);
    }
    return MPI_SUCCESS;
}

BMPI_API(MPI_Comm_idup)
int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    return idup_entry(comm, MPI_INFO_NULL, 0, newcomm, request, "MPI_Comm_idup");
}

BMPI_API(MPI_Comm_idup_with_info)
int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request)
{
    return idup_entry(comm, info, 1, newcomm, request, "MPI_Comm_idup_with_info");
}

/* A split of an intra- or an intercommunicator. */
static int split_any(struct bmpi_comm *c, int color, int key, struct bmpi_comm **out)
{
    return c->remote_group ? bmpi_intercomm_split(c, color, key, out) : bmpi_comm_split_internal(c, color, key, out);
}

BMPI_API(MPI_Comm_split)
int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    struct bmpi_comm *c, *nc = NULL;
    int err = bmpi_check_comm(comm, "MPI_Comm_split", &c);
    if (err)
        return err;
    if ((err = check_newcomm(comm, "MPI_Comm_split", newcomm)))
        return err;
    if (color < 0 && color != MPI_UNDEFINED)
        return bmpi_err_comm(comm, MPI_ERR_ARG, "MPI_Comm_split",
                             "invalid color %d (must be >= 0 or MPI_UNDEFINED)", color);
    if ((err = split_any(c, color, key, &nc)))
        return bmpi_err_comm(comm, err, "MPI_Comm_split", NULL);
    *newcomm = nc ? nc->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

/* The colour of the processes that share memory with this one: this
 * node's, within this job (processes of other jobs on the same node share
 * no memory with it, docs/dynamic.md). */
static int shared_color(void)
{
    uint64_t h = bmpi_world.job_id ^ (bmpi_world.nodeid * UINT64_C(0x9e3779b97f4a7c15));
    return (int)((h ^ (h >> 32)) & INT_MAX);
}

/*
 * MPI_Comm_split_type. SHARED splits by PMIx node id (processes that can
 * share memory). The hardware-guided kinds know one level, the node:
 * HW_GUIDED and RESOURCE_GUIDED split as SHARED when the info asks for
 * mpi_hw_resource_type=mpi_shared_memory and give MPI_COMM_NULL for any
 * other resource type; HW_UNGUIDED gives the node communicator when it is
 * a strict subset of comm, MPI_COMM_NULL when comm already lies on one node.
 */
BMPI_API(MPI_Comm_split_type)
int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_split_type";
    struct bmpi_comm *c, *nc = NULL;
    int err = bmpi_check_comm(comm, fn, &c);
    if (err)
        return err;
    if ((err = check_newcomm(comm, fn, newcomm)))
        return err;
    struct bmpi_info *inf = NULL;
    if (info != MPI_INFO_NULL && !(inf = bmpi_info_lookup(info)))
        return bmpi_err_comm(comm, MPI_ERR_INFO, fn, "invalid info 0x%x", (unsigned)info);
    int color;
    switch (split_type) {
    case MPI_UNDEFINED:
        color = MPI_UNDEFINED;
        break;
    case MPI_COMM_TYPE_SHARED:
    case MPI_COMM_TYPE_HW_UNGUIDED:
        color = shared_color();
        break;
    case MPI_COMM_TYPE_HW_GUIDED:
    case MPI_COMM_TYPE_RESOURCE_GUIDED: {
        const char *v = inf ? bmpi_info_value(inf, "mpi_hw_resource_type") : NULL;
        color = v && strcmp(v, "mpi_shared_memory") == 0 ? shared_color() : MPI_UNDEFINED;
        break;
    }
    default:
        return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "invalid split_type %d", split_type);
    }
    if ((err = split_any(c, color, key, &nc)))
        return bmpi_err_comm(comm, err, fn, NULL);
    if (nc && split_type == MPI_COMM_TYPE_HW_UNGUIDED && nc->size == c->size &&
        bmpi_comm_peer_size(nc) == bmpi_comm_peer_size(c)) {
        /* every member (of both groups) sees the same sizes, so all give up together */
        bmpi_comm_release(nc);
        nc = NULL;
    }
    *newcomm = nc ? nc->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

/* Is every member of g in c's (local) group? (MPI_Comm_create's group
 * must be a subset) */
static int check_subgroup(MPI_Comm comm, struct bmpi_comm *c, struct bmpi_group *g, const char *fn,
                          int *parent_ranks)
{
    int *pos = malloc((size_t)bmpi_world.nprocs * sizeof(int));
    if (!pos)
        return bmpi_err_comm(comm, MPI_ERR_NO_MEM, fn, "out of memory");
    for (int i = 0; i < bmpi_world.nprocs; i++)
        pos[i] = -1;
    for (int r = 0; r < c->size; r++)
        pos[c->group->world_ranks[r]] = r; /* the local group of an intercommunicator */
    for (int i = 0; i < g->size; i++) {
        int p = pos[g->world_ranks[i]];
        if (p < 0) {
            free(pos);
            return bmpi_err_comm(comm, MPI_ERR_GROUP, fn,
                                 "group member %d (world rank %d) is not in the communicator", i,
                                 g->world_ranks[i]);
        }
        if (parent_ranks)
            parent_ranks[i] = p;
    }
    free(pos);
    return MPI_SUCCESS;
}

BMPI_API(MPI_Comm_create)
int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_create";
    struct bmpi_comm *c, *nc = NULL;
    int err = bmpi_check_comm(comm, fn, &c);
    if (err)
        return err;
    if ((err = check_newcomm(comm, fn, newcomm)))
        return err;
    struct bmpi_group *g = bmpi_group_lookup(group);
    if (!g)
        return bmpi_err_comm(comm, MPI_ERR_GROUP, fn, "invalid group 0x%x", (unsigned)group);
    if ((err = check_subgroup(comm, c, g, fn, NULL)))
        return err;
    if (c->remote_group) {
        /* each group names its part; a split in group order gives both */
        int in = g->rank != MPI_UNDEFINED;
        if ((err = bmpi_intercomm_split(c, in ? 0 : MPI_UNDEFINED, in ? g->rank : 0, &nc)))
            return bmpi_err_comm(comm, err, fn, NULL);
        *newcomm = nc ? nc->handle : MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    uint32_t id;
    if ((err = bmpi_ctx_new(c, &id)))
        return bmpi_err_comm(comm, err, fn, NULL);
    if ((err = bmpi_comm_build(c, g->rank == MPI_UNDEFINED ? NULL : g, id, &nc)))
        return bmpi_err_comm(comm, err, fn, NULL);
    *newcomm = nc ? nc->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

/* Collective over the members of group only; tag keeps concurrent
 * creations on the same comm apart. */
BMPI_API(MPI_Comm_create_group)
int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_create_group";
    struct bmpi_comm *c, *nc = NULL;
    int err = bmpi_check_comm(comm, fn, &c);
    if (err)
        return err;
    if (c->remote_group)
        return bmpi_err_comm(comm, MPI_ERR_COMM, fn,
                             "communicator 0x%x is an intercommunicator; MPI 4.1 defines this call on "
                             "intracommunicators only", (unsigned)comm);
    if ((err = check_newcomm(comm, fn, newcomm)))
        return err;
    struct bmpi_group *g = bmpi_group_lookup(group);
    if (!g)
        return bmpi_err_comm(comm, MPI_ERR_GROUP, fn, "invalid group 0x%x", (unsigned)group);
    if (tag < 0)
        return bmpi_err_comm(comm, MPI_ERR_TAG, fn, "invalid tag %d", tag);
    if (g->rank == MPI_UNDEFINED) {
        if (g->size == 0) {
            *newcomm = MPI_COMM_NULL;
            return MPI_SUCCESS;
        }
        return bmpi_err_comm(comm, MPI_ERR_GROUP, fn, "the calling process is not a member of the group");
    }
    int *pr = malloc((size_t)g->size * sizeof(int));
    if (!pr)
        return bmpi_err_comm(comm, MPI_ERR_NO_MEM, fn, "out of memory");
    if ((err = check_subgroup(comm, c, g, fn, pr))) {
        free(pr);
        return err;
    }
    int up = BMPI_TAG_CGROUP_BASE - 2 * (tag % (1 << 29));
    uint32_t id;
    err = bmpi_ctx_agree(c, pr, g->size, g->rank, up, up - 1, NULL, 0, 1, &id);
    free(pr);
    if (err || (err = bmpi_comm_build(c, g, id, &nc)))
        return bmpi_err_comm(comm, err, fn, NULL);
    *newcomm = nc->handle;
    return MPI_SUCCESS;
}

/*
 * MPI 4.0's creation from a group alone, collective over the group. bmpi
 * has no sessions yet, so the group comes from a communicator of the World
 * model and the members agree over MPI_COMM_WORLD's collective context,
 * with tags hashed from stringtag so that creations with different tags
 * may overlap (two tags hashing alike and running at once would be
 * serialised wrongly: 1 in 2^28).
 */
BMPI_API(MPI_Comm_create_from_group)
int PMPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info, MPI_Errhandler errhandler,
                                MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_create_from_group";
    if (!bmpi_initialized())
        return bmpi_err_noobj(MPI_ERR_OTHER, fn,
                              "bmpi supports this only in the World model, after MPI_Init (no sessions yet)");
    struct bmpi_group *g = bmpi_group_lookup(group);
    if (!g)
        return bmpi_err_noobj(MPI_ERR_GROUP, fn, "invalid group 0x%x", (unsigned)group);
    if (!stringtag || !newcomm)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "stringtag or newcomm is NULL");
    if (info != MPI_INFO_NULL && !bmpi_info_lookup(info))
        return bmpi_err_noobj(MPI_ERR_INFO, fn, "invalid info 0x%x", (unsigned)info);
    if (!bmpi_errhandler_valid(errhandler) ||
        (bmpi_errhandler_get(errhandler) && bmpi_errhandler_get(errhandler)->kind != BMPI_ERRH_COMM))
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "invalid communicator errhandler 0x%x", (unsigned)errhandler);
    if (g->rank == MPI_UNDEFINED)
        return bmpi_err_noobj(MPI_ERR_GROUP, fn, "the calling process is not a member of the group");
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const char *p = stringtag; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    int up = -(1 << 30) - 2000 - 2 * (int)(h % (1u << 28));
    struct bmpi_comm *world = bmpi_comm_get(MPI_COMM_WORLD), *nc = NULL;
    uint32_t id;
    /* the group's world ranks are world's ranks */
    int err = bmpi_ctx_agree(world, g->world_ranks, g->size, g->rank, up, up - 1, NULL, 0, 1, &id);
    if (err || (err = bmpi_comm_build(world, g, id, &nc)))
        return bmpi_err_noobj(err, fn, NULL);
    bmpi_errhandler_retain(errhandler);
    bmpi_errhandler_release(nc->errhandler);
    nc->errhandler = errhandler;
    struct bmpi_info *inf = info != MPI_INFO_NULL ? bmpi_info_lookup(info) : NULL;
    if (inf && !(nc->info = bmpi_info_clone(inf))) {
        bmpi_comm_release(nc);
        return bmpi_err_noobj(MPI_ERR_NO_MEM, fn, "out of memory copying info hints");
    }
    *newcomm = nc->handle;
    return MPI_SUCCESS;
}

static int free_comm(MPI_Comm *comm, const char *fn)
{
    if (!comm)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "comm is NULL");
    struct bmpi_comm *c;
    int err = bmpi_check_comm(*comm, fn, &c);
    if (err)
        return err;
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        return bmpi_err_comm(*comm, MPI_ERR_COMM, fn, "cannot free %s",
                             *comm == MPI_COMM_WORLD ? "MPI_COMM_WORLD" : "MPI_COMM_SELF");
    /* now, not at the last reference: a failing delete callback is this
     * call's error, and the communicator then stays */
    if ((err = bmpi_attr_comm_free(c)))
        return bmpi_err_comm(*comm, err, fn, NULL);
    bmpi_comm_release(c);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Comm_free)
int PMPI_Comm_free(MPI_Comm *comm)
{
    return free_comm(comm, "MPI_Comm_free");
}

/* MPI 4.1 11.10.4: the program has completed and matched all its
 * communication on comm; what may still be under way is bmpi's own, sends
 * whose requests were freed or that finish a collective: disconnect waits
 * for them (on the hidden local communicator of an intercommunicator
 * too), so that nothing is left to the other side once it returns, then
 * frees the communicator. */
BMPI_API(MPI_Comm_disconnect)
int PMPI_Comm_disconnect(MPI_Comm *comm)
{
    const char *fn = "MPI_Comm_disconnect";
    struct bmpi_comm *c;
    if (!comm)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "comm is NULL");
    int err = bmpi_check_comm(*comm, fn, &c);
    if (err)
        return err;
    unsigned idle = 0;
    while (c->sends_open || (c->local_comm && c->local_comm->sends_open))
        if (!bmpi_progress())
            bmpi_progress_idle(&idle);
    return free_comm(comm, fn);
}

BMPI_API(MPI_Comm_compare)
int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    struct bmpi_comm *a, *b;
    int err;
    if ((err = bmpi_check_comm(comm1, "MPI_Comm_compare", &a)) ||
        (err = bmpi_check_comm(comm2, "MPI_Comm_compare", &b)))
        return err;
    if (!result)
        return bmpi_err_comm(comm1, MPI_ERR_ARG, "MPI_Comm_compare", "result is NULL");
    if (a == b) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    if (!a->remote_group != !b->remote_group) {
        *result = MPI_UNEQUAL; /* an intra- and an intercommunicator */
        return MPI_SUCCESS;
    }
    int g = bmpi_group_compare(a->group, b->group);
    /* intercommunicators: the weaker of the two groups' results */
    int rg = a->remote_group ? bmpi_group_compare(a->remote_group, b->remote_group) : MPI_IDENT;
    if (rg > g)
        g = rg;
    *result = g == MPI_IDENT ? MPI_CONGRUENT : g;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Comm_test_inter)
int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    struct bmpi_comm *c;
    int err = bmpi_check_comm(comm, "MPI_Comm_test_inter", &c);
    if (err)
        return err;
    if (!flag)
        return bmpi_err_comm(comm, MPI_ERR_ARG, "MPI_Comm_test_inter", "flag is NULL");
    *flag = c->remote_group != NULL;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Comm_set_name)
int PMPI_Comm_set_name(MPI_Comm comm, const char *comm_name)
{
    struct bmpi_comm *c;
    int err = bmpi_check_comm(comm, "MPI_Comm_set_name", &c);
    if (err)
        return err;
    if (!comm_name)
        return bmpi_err_comm(comm, MPI_ERR_ARG, "MPI_Comm_set_name", "comm_name is NULL");
    /* longer names are truncated to MPI_MAX_OBJECT_NAME - 1 characters */
    size_t n = strnlen(comm_name, MPI_MAX_OBJECT_NAME - 1);
    memcpy(c->name, comm_name, n);
    c->name[n] = '\0';
    return MPI_SUCCESS;
}

BMPI_API(MPI_Comm_get_name)
int PMPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen)
{
    /* MPI_COMM_NULL has a name too, as in MPICH */
    struct bmpi_comm *c = NULL;
    int err = comm == MPI_COMM_NULL ? MPI_SUCCESS : bmpi_check_comm(comm, "MPI_Comm_get_name", &c);
    if (err)
        return err;
    if (!comm_name || !resultlen)
        return bmpi_err_comm(comm, MPI_ERR_ARG, "MPI_Comm_get_name", "comm_name or resultlen is NULL");
    const char *name = c ? c->name : "MPI_COMM_NULL";
    size_t n = strlen(name);
    memcpy(comm_name, name, n + 1);
    *resultlen = (int)n;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Comm_set_info)
int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    struct bmpi_comm *c;
    int err = bmpi_check_comm(comm, "MPI_Comm_set_info", &c);
    if (err)
        return err;
    struct bmpi_info *inf = bmpi_info_lookup(info);
    if (!inf)
        return bmpi_err_comm(comm, MPI_ERR_INFO, "MPI_Comm_set_info", "invalid info 0x%x", (unsigned)info);
    struct bmpi_info *copy = bmpi_info_clone(inf);
    if (!copy)
        return bmpi_err_comm(comm, MPI_ERR_NO_MEM, "MPI_Comm_set_info", "out of memory");
    bmpi_info_destroy(c->info);
    c->info = copy;
    return MPI_SUCCESS;
}

/* The hints set on comm (bmpi acts on none yet, it keeps them all). */
BMPI_API(MPI_Comm_get_info)
int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    struct bmpi_comm *c;
    int err = bmpi_check_comm(comm, "MPI_Comm_get_info", &c);
    if (err)
        return err;
    if (!info_used)
        return bmpi_err_comm(comm, MPI_ERR_ARG, "MPI_Comm_get_info", "info_used is NULL");
    struct bmpi_info *copy = bmpi_info_clone(c->info);
    if (!copy || (err = bmpi_info_make_handle(copy, info_used)))
        return bmpi_err_comm(comm, MPI_ERR_NO_MEM, "MPI_Comm_get_info", "out of memory");
    return MPI_SUCCESS;
}
