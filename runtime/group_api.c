/*
 * MPI_Group_*: group handles and the set operations. A handle holds a
 * reference on a runtime/group.h object, which communicators share, so
 * MPI_Comm_group costs no copy. Set operations index members by world rank
 * in a scratch array, linear in the world size.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/api.h"
#include "runtime/comm.h"
#include "runtime/group_api.h"
#include "runtime/handle.h"
#include "runtime/p2p.h"
#include "runtime/world.h"

static struct {
    struct bmpi_handle_table table;
    struct bmpi_group empty;
} groups = {
    .table = {.type = BMPI_OBJ_GROUP},
    .empty = {.handle = MPI_GROUP_EMPTY, .refcount = 1, .size = 0, .rank = MPI_UNDEFINED},
};

struct bmpi_group *bmpi_group_lookup(MPI_Group h)
{
    if (h == MPI_GROUP_EMPTY)
        return &groups.empty;
    return bmpi_handle_get(&groups.table, h);
}

int bmpi_group_make_handle(struct bmpi_group *g, MPI_Group *out)
{
    int h = bmpi_handle_new(&groups.table, g);
    if (!h) {
        bmpi_group_release(g);
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of group handles");
    }
    if (g->handle == MPI_GROUP_NULL)
        g->handle = h;
    *out = h;
    return BMPI_OK;
}

int bmpi_group_compare(const struct bmpi_group *a, const struct bmpi_group *b)
{
    if (a->size != b->size)
        return MPI_UNEQUAL;
    if (a->size == 0 || memcmp(a->world_ranks, b->world_ranks, (size_t)a->size * sizeof(int)) == 0)
        return MPI_IDENT;
    /* same members in another order? */
    char *in = calloc((size_t)bmpi_world.nprocs, 1);
    if (!in)
        return MPI_UNEQUAL;
    for (int i = 0; i < a->size; i++)
        in[a->world_ranks[i]] = 1;
    int res = MPI_SIMILAR;
    for (int i = 0; i < b->size; i++)
        if (!in[b->world_ranks[i]])
            res = MPI_UNEQUAL;
    free(in);
    return res;
}

void bmpi_group_finalize(void)
{
    for (int i = 0; i < groups.table.used; i++)
        bmpi_group_release(groups.table.objs[i]);
    bmpi_handle_table_free(&groups.table);
}

/* Report through MPI_COMM_SELF's handler, as for all errors outside a
 * communicator. */
#define GERR(cls, fn, ...) bmpi_err_noobj(cls, fn, __VA_ARGS__)

static int check_group(MPI_Group h, const char *fn, struct bmpi_group **g)
{
    if (!bmpi_initialized())
        return GERR(MPI_ERR_OTHER, fn, "called before MPI_Init or after MPI_Finalize");
    if (!(*g = bmpi_group_lookup(h)))
        return GERR(MPI_ERR_GROUP, fn, "invalid group 0x%x", (unsigned)h);
    return MPI_SUCCESS;
}

/* Make a group of n world ranks and hand it out. */
static int out_group(const int *wr, int n, MPI_Group *newgroup, const char *fn)
{
    if (n == 0) {
        *newgroup = MPI_GROUP_EMPTY;
        return MPI_SUCCESS;
    }
    struct bmpi_group *g = bmpi_group_new(wr, n);
    if (!g)
        return GERR(MPI_ERR_NO_MEM, fn, "out of memory for a group of %d", n);
    int err = bmpi_group_make_handle(g, newgroup);
    return err ? GERR(err, fn, NULL) : MPI_SUCCESS;
}

BMPI_API(MPI_Group_size)
int PMPI_Group_size(MPI_Group group, int *size)
{
    struct bmpi_group *g;
    int err = check_group(group, "MPI_Group_size", &g);
    if (err)
        return err;
    if (!size)
        return GERR(MPI_ERR_ARG, "MPI_Group_size", "size is NULL");
    *size = g->size;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Group_rank)
int PMPI_Group_rank(MPI_Group group, int *rank)
{
    struct bmpi_group *g;
    int err = check_group(group, "MPI_Group_rank", &g);
    if (err)
        return err;
    if (!rank)
        return GERR(MPI_ERR_ARG, "MPI_Group_rank", "rank is NULL");
    *rank = g->rank;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Group_free)
int PMPI_Group_free(MPI_Group *group)
{
    if (!group)
        return GERR(MPI_ERR_ARG, "MPI_Group_free", "group is NULL");
    struct bmpi_group *g;
    int err = check_group(*group, "MPI_Group_free", &g);
    if (err)
        return err;
    /* freeing MPI_GROUP_EMPTY is allowed as a no-op: groups returned by the
     * set operations may be it */
    if (*group != MPI_GROUP_EMPTY) {
        bmpi_handle_release(&groups.table, *group);
        if (g->handle == *group)
            g->handle = MPI_GROUP_NULL;
        bmpi_group_release(g);
    }
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Comm_group)
int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    struct bmpi_comm *c;
    int err = bmpi_check_comm(comm, "MPI_Comm_group", &c);
    if (err)
        return err;
    if (!group)
        return bmpi_err_comm(comm, MPI_ERR_ARG, "MPI_Comm_group", "group is NULL");
    bmpi_group_retain(c->group);
    if ((err = bmpi_group_make_handle(c->group, group)))
        return bmpi_err_comm(comm, err, "MPI_Comm_group", NULL);
    return MPI_SUCCESS;
}

/* ranks[] must be n distinct valid ranks of g; seen is scratch of g->size.
 * More than g->size of them is a bad or repeated rank (MPI_ERR_RANK,
 * naming it, as MPICH). */
static int check_ranks(struct bmpi_group *g, int n, const int ranks[], const char *fn, char *seen)
{
    if (n < 0)
        return GERR(MPI_ERR_ARG, fn, "invalid n %d", n);
    if (n > 0 && !ranks)
        return GERR(MPI_ERR_ARG, fn, "ranks is NULL");
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= g->size)
            return GERR(MPI_ERR_RANK, fn, "rank %d out of range (group size %d)", ranks[i], g->size);
        if (seen[ranks[i]])
            return GERR(MPI_ERR_RANK, fn, "rank %d given twice", ranks[i]);
        seen[ranks[i]] = 1;
    }
    return MPI_SUCCESS;
}

static int incl_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup, int excl, const char *fn)
{
    struct bmpi_group *g;
    int err = check_group(group, fn, &g);
    if (err)
        return err;
    if (!newgroup)
        return GERR(MPI_ERR_ARG, fn, "newgroup is NULL");
    char *seen = calloc((size_t)g->size + 1, 1);
    int *wr = malloc(((size_t)g->size + 1) * sizeof(int));
    if (!seen || !wr) {
        err = GERR(MPI_ERR_NO_MEM, fn, "out of memory");
        goto out;
    }
    if ((err = check_ranks(g, n, ranks, fn, seen)))
        goto out;
    int cnt = 0;
    if (excl) {
        for (int i = 0; i < g->size; i++)
            if (!seen[i])
                wr[cnt++] = g->world_ranks[i];
    } else {
        for (int i = 0; i < n; i++)
            wr[cnt++] = g->world_ranks[ranks[i]];
    }
    err = out_group(wr, cnt, newgroup, fn);
out:
    free(wr);
    free(seen);
    return err;
}

BMPI_API(MPI_Group_incl)
int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    return incl_excl(group, n, ranks, newgroup, 0, "MPI_Group_incl");
}

BMPI_API(MPI_Group_excl)
int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    return incl_excl(group, n, ranks, newgroup, 1, "MPI_Group_excl");
}

/* Expand ranges (first, last, stride) into ranks, checking them. */
static int expand_ranges(struct bmpi_group *g, int n, int ranges[][3], int **out, int *count, const char *fn)
{
    if (n < 0)
        return GERR(MPI_ERR_ARG, fn, "invalid n %d", n);
    if (n > 0 && !ranges)
        return GERR(MPI_ERR_ARG, fn, "ranges is NULL");
    long total = 0;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (stride == 0)
            return GERR(MPI_ERR_ARG, fn, "range %d has stride 0", i);
        if (first < 0 || first >= g->size)
            return GERR(MPI_ERR_RANK, fn, "rank %d out of range (group size %d) in range %d", first, g->size, i);
        if (last < 0 || last >= g->size)
            return GERR(MPI_ERR_RANK, fn, "rank %d out of range (group size %d) in range %d", last, g->size, i);
        if ((stride > 0 && first > last) || (stride < 0 && first < last))
            return GERR(MPI_ERR_ARG, fn, "range %d (%d, %d, %d) is empty: stride goes the wrong way", i, first,
                        last, stride);
        total += (last - first) / stride + 1;
        if (total > g->size)
            return GERR(MPI_ERR_RANK, fn, "the ranges name more ranks than the group has (%d)", g->size);
    }
    int *r = malloc(((size_t)total + 1) * sizeof(int));
    if (!r)
        return GERR(MPI_ERR_NO_MEM, fn, "out of memory");
    int k = 0;
    for (int i = 0; i < n; i++)
        for (int x = ranges[i][0]; ranges[i][2] > 0 ? x <= ranges[i][1] : x >= ranges[i][1]; x += ranges[i][2])
            r[k++] = x;
    *out = r;
    *count = k;
    return MPI_SUCCESS;
}

static int range_incl_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup, int excl,
                           const char *fn)
{
    struct bmpi_group *g;
    int err = check_group(group, fn, &g);
    if (err)
        return err;
    if (!newgroup)
        return GERR(MPI_ERR_ARG, fn, "newgroup is NULL");
    int *ranks = NULL, cnt = 0; /* set on success; gcc -O3 cannot tell */
    if ((err = expand_ranges(g, n, ranges, &ranks, &cnt, fn)))
        return err;
    err = incl_excl(group, cnt, ranks, newgroup, excl, fn);
    free(ranks);
    return err;
}

BMPI_API(MPI_Group_range_incl)
int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return range_incl_excl(group, n, ranges, newgroup, 0, "MPI_Group_range_incl");
}

BMPI_API(MPI_Group_range_excl)
int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return range_incl_excl(group, n, ranges, newgroup, 1, "MPI_Group_range_excl");
}

enum setop { UNION, INTERSECTION, DIFFERENCE };

static int set_op(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup, enum setop op, const char *fn)
{
    struct bmpi_group *a, *b;
    int err;
    if ((err = check_group(group1, fn, &a)) || (err = check_group(group2, fn, &b)))
        return err;
    if (!newgroup)
        return GERR(MPI_ERR_ARG, fn, "newgroup is NULL");
    char *inb = calloc((size_t)bmpi_world.nprocs, 1);
    int *wr = malloc(((size_t)a->size + (size_t)b->size + 1) * sizeof(int));
    if (!inb || !wr) {
        err = GERR(MPI_ERR_NO_MEM, fn, "out of memory");
        goto out;
    }
    for (int i = 0; i < b->size; i++)
        inb[b->world_ranks[i]] = 1;
    int cnt = 0;
    /* the result is ordered as in group1, then (union) group2 */
    for (int i = 0; i < a->size; i++) {
        int in = inb[a->world_ranks[i]];
        if (op == UNION || (op == INTERSECTION) == (in != 0))
            wr[cnt++] = a->world_ranks[i];
    }
    if (op == UNION) {
        memset(inb, 0, (size_t)bmpi_world.nprocs);
        for (int i = 0; i < a->size; i++)
            inb[a->world_ranks[i]] = 1;
        for (int i = 0; i < b->size; i++)
            if (!inb[b->world_ranks[i]])
                wr[cnt++] = b->world_ranks[i];
    }
    err = out_group(wr, cnt, newgroup, fn);
out:
    free(wr);
    free(inb);
    return err;
}

BMPI_API(MPI_Group_union)
int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return set_op(group1, group2, newgroup, UNION, "MPI_Group_union");
}

BMPI_API(MPI_Group_intersection)
int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return set_op(group1, group2, newgroup, INTERSECTION, "MPI_Group_intersection");
}

BMPI_API(MPI_Group_difference)
int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return set_op(group1, group2, newgroup, DIFFERENCE, "MPI_Group_difference");
}

BMPI_API(MPI_Group_translate_ranks)
int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[])
{
    static const char fn[] = "MPI_Group_translate_ranks";
    struct bmpi_group *a, *b;
    int err;
    if ((err = check_group(group1, fn, &a)) || (err = check_group(group2, fn, &b)))
        return err;
    if (n < 0)
        return GERR(MPI_ERR_ARG, fn, "invalid n %d", n);
    if (n > 0 && (!ranks1 || !ranks2))
        return GERR(MPI_ERR_ARG, fn, "ranks1 or ranks2 is NULL");
    for (int i = 0; i < n; i++)
        if (ranks1[i] != MPI_PROC_NULL && (ranks1[i] < 0 || ranks1[i] >= a->size))
            return GERR(MPI_ERR_RANK, fn, "rank %d out of range (group size %d)", ranks1[i], a->size);
    int *pos = malloc((size_t)bmpi_world.nprocs * sizeof(int));
    if (!pos)
        return GERR(MPI_ERR_NO_MEM, fn, "out of memory");
    for (int i = 0; i < bmpi_world.nprocs; i++)
        pos[i] = MPI_UNDEFINED;
    for (int i = 0; i < b->size; i++)
        pos[b->world_ranks[i]] = i;
    for (int i = 0; i < n; i++)
        ranks2[i] = ranks1[i] == MPI_PROC_NULL ? MPI_PROC_NULL : pos[a->world_ranks[ranks1[i]]];
    free(pos);
    return MPI_SUCCESS;
}

BMPI_API(MPI_Group_compare)
int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    struct bmpi_group *a, *b;
    int err;
    if ((err = check_group(group1, "MPI_Group_compare", &a)) ||
        (err = check_group(group2, "MPI_Group_compare", &b)))
        return err;
    if (!result)
        return GERR(MPI_ERR_ARG, "MPI_Group_compare", "result is NULL");
    *result = bmpi_group_compare(a, b);
    return MPI_SUCCESS;
}
