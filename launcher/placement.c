/* Placement as Open MPI's mpirun does it (docs/launcher.md "Hosts and
 * placement"): first how many ranks each node gets, then which ranks:
 * --map-by slot numbers them consecutively node after node, --map-by node
 * deals them round robin over the nodes that still take one. */
#include "config.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "launcher/placement.h"

static int fail(struct bmpi_placement *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->error, sizeof(p->error), fmt, ap);
    va_end(ap);
    return -1;
}

/* Ranks a node takes before oversubscribing: its slots, or -N. */
static int cap(const struct bmpi_host *h, const struct bmpi_place_request *req)
{
    return req->npernode > 0 ? req->npernode : h->slots;
}

/* Ranks a node takes at most with --oversubscribe. */
static int hard_cap(const struct bmpi_host *h)
{
    return h->max_slots > 0 ? h->max_slots : INT_MAX;
}

/* Deal ranks one a node, round robin, while a node takes one more; what is
 * left over. */
static long deal(const struct bmpi_hostlist *hl, int *count, long left, const struct bmpi_place_request *req,
                 bool beyond_slots)
{
    for (bool dealt = true; left > 0 && dealt;) {
        dealt = false;
        for (int i = 0; i < hl->n && left > 0; i++)
            if (count[i] < (beyond_slots ? hard_cap(&hl->hosts[i]) : cap(&hl->hosts[i], req))) {
                count[i]++;
                left--;
                dealt = true;
            }
    }
    return left;
}

/* -N asks for a fixed number a node: more than the slots of a node that
 * gets them is oversubscribing it, as Open MPI counts it. */
static int check_npernode(const struct bmpi_hostlist *hl, const struct bmpi_place_request *req,
                          const int *count, struct bmpi_placement *p)
{
    for (int i = 0; i < hl->n; i++) {
        const struct bmpi_host *h = &hl->hosts[i];
        if (!req->oversubscribe && count[i] > h->slots)
            return fail(p, "-N %d places %d ranks on host '%s', more than its %d slots; give more slots or "
                           "--oversubscribe",
                        req->npernode, count[i], h->name, h->slots);
        if (count[i] > hard_cap(h))
            return fail(p, "-N %d places %d ranks on host '%s', more than its max_slots=%d", req->npernode,
                        count[i], h->name, h->max_slots);
    }
    return 0;
}

static int count_per_node(const struct bmpi_hostlist *hl, const struct bmpi_place_request *req, int n,
                          int *count, struct bmpi_placement *p)
{
    long left = n, total = 0;
    for (int i = 0; i < hl->n; i++) {
        total += cap(&hl->hosts[i], req);
        if (req->map_by == BMPI_MAP_SLOT) {
            count[i] = cap(&hl->hosts[i], req) < left ? cap(&hl->hosts[i], req) : (int)left;
            left -= count[i];
        }
    }
    left = deal(hl, count, left, req, false);
    if (left == 0)
        return req->npernode > 0 ? check_npernode(hl, req, count, p) : 0;
    if (req->npernode > 0)
        return fail(p, "%d ranks asked for, but -N %d on %d host(s) places %ld; give -n %ld or less, or more hosts",
                    n, req->npernode, hl->n, total, total);
    if (!req->oversubscribe)
        return fail(p, "%d ranks asked for, but the %d host(s) have %ld slots; give -n %ld or less, more slots, "
                       "or --oversubscribe",
                    n, hl->n, total, total);
    if (deal(hl, count, left, req, true) == 0)
        return 0;
    long most = 0;
    for (int i = 0; i < hl->n; i++)
        most += hard_cap(&hl->hosts[i]);
    return fail(p, "%d ranks asked for, but the %d host(s) take at most %ld (max_slots), even with --oversubscribe",
                n, hl->n, most);
}

/* --map-by slot: consecutive ranks a node; --map-by node: round robin over
 * the nodes with ranks still to get. Then each node's rank list, ascending,
 * and each rank's place in it. */
static void number_ranks(struct bmpi_placement *p, enum bmpi_map_by map_by, int *fill)
{
    int rank = 0;
    if (map_by == BMPI_MAP_SLOT) {
        for (int i = 0; i < p->nnodes; i++)
            for (int k = 0; k < p->node_nranks[i]; k++)
                p->node[rank++] = i;
    } else {
        for (int round = 0; rank < p->nranks; round++)
            for (int i = 0; i < p->nnodes; i++)
                if (round < p->node_nranks[i])
                    p->node[rank++] = i;
    }
    for (int r = 0; r < p->nranks; r++) {
        int i = p->node[r];
        p->local_rank[r] = fill[i];
        p->node_ranks[i][fill[i]++] = r;
    }
}

static int allocate(struct bmpi_placement *p, int nranks, int nnodes)
{
    p->nranks = nranks;
    p->nnodes = nnodes;
    p->node = calloc((size_t)nranks, sizeof(int));
    p->local_rank = calloc((size_t)nranks, sizeof(int));
    p->node_nranks = calloc((size_t)nnodes, sizeof(int));
    p->node_ranks = calloc((size_t)nnodes, sizeof(int *));
    if (p->node_ranks != NULL)
        p->node_ranks[0] = calloc((size_t)nranks, sizeof(int)); /* one block for all nodes */
    if (p->node == NULL || p->local_rank == NULL || p->node_nranks == NULL || p->node_ranks == NULL ||
        p->node_ranks[0] == NULL)
        return fail(p, "out of memory placing %d ranks on %d host(s)", nranks, nnodes);
    return 0;
}

/* How many ranks the job gets: -n, else -N per node, else every slot. */
static int job_size(const struct bmpi_hostlist *hl, const struct bmpi_place_request *req)
{
    if (req->nprocs > 0)
        return req->nprocs;
    if (req->npernode > 0)
        return req->npernode * (hl->n > 0 ? hl->n : 1);
    return hl->n > 0 ? bmpi_hostlist_total_slots(hl) : 1;
}

int bmpi_place(const struct bmpi_hostlist *hosts, const struct bmpi_place_request *req, struct bmpi_placement *p)
{
    static const struct bmpi_hostlist none = {0};
    const struct bmpi_hostlist *hl = hosts != NULL ? hosts : &none;
    *p = (struct bmpi_placement){0};
    int n = job_size(hl, req);
    if (allocate(p, n, hl->n > 0 ? hl->n : 1) != 0)
        return -1;
    int *fill = calloc((size_t)p->nnodes, sizeof(int));
    if (fill == NULL)
        return fail(p, "out of memory placing %d ranks on %d host(s)", n, p->nnodes);
    int rc = 0;
    if (hl->n == 0)
        p->node_nranks[0] = n; /* this host, as many as asked for */
    else
        rc = count_per_node(hl, req, n, p->node_nranks, p);
    if (rc == 0) {
        for (int i = 1; i < p->nnodes; i++)
            p->node_ranks[i] = p->node_ranks[i - 1] + p->node_nranks[i - 1];
        number_ranks(p, req->map_by, fill);
    }
    free(fill);
    return rc;
}

void bmpi_placement_free(struct bmpi_placement *p)
{
    if (p->node_ranks != NULL)
        free(p->node_ranks[0]);
    free(p->node_ranks);
    free(p->node_nranks);
    free(p->local_rank);
    free(p->node);
    *p = (struct bmpi_placement){0};
}
