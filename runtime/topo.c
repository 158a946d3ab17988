/*
 * Process topologies: cartesian, graph and distributed graph communicators
 * and their queries. Reordering is never done (the standard allows that):
 * rank i of the new communicator is rank i of the old one. A topology hangs
 * on comm->topo and goes with the communicator (bmpi_comm_teardown).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/api.h"
#include "runtime/comm.h"
#include "runtime/context.h"
#include "runtime/info.h"
#include "runtime/p2p.h"
#include "runtime/topo.h"
#include "runtime/world.h"

/* --- the object ---------------------------------------------------------- */

void bmpi_topo_free(void *topo)
{
    struct bmpi_topo *t = topo;
    if (!t)
        return;
    free(t->dims);
    free(t->periods);
    free(t->index);
    free(t->edges);
    free(t->sources);
    free(t->srcweights);
    free(t->dests);
    free(t->dstweights);
    free(t);
}

static int *idup(const int *a, int n)
{
    int *p = malloc(((size_t)n + 1) * sizeof(int));
    if (p && n > 0)
        memcpy(p, a, (size_t)n * sizeof(int));
    return p;
}

struct bmpi_topo *bmpi_topo_dup(const struct bmpi_topo *t)
{
    struct bmpi_topo *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    *c = *t;
    c->dims = c->periods = c->index = c->edges = NULL;
    c->sources = c->srcweights = c->dests = c->dstweights = NULL;
    int ok = 1;
    switch (t->kind) {
    case MPI_CART:
        ok = (c->dims = idup(t->dims, t->ndims)) && (c->periods = idup(t->periods, t->ndims));
        break;
    case MPI_GRAPH:
        ok = (c->index = idup(t->index, t->nnodes)) && (c->edges = idup(t->edges, t->nedges));
        break;
    case MPI_DIST_GRAPH:
        ok = (c->sources = idup(t->sources, t->indegree)) && (c->srcweights = idup(t->srcweights, t->indegree)) &&
             (c->dests = idup(t->dests, t->outdegree)) && (c->dstweights = idup(t->dstweights, t->outdegree));
        break;
    }
    if (!ok) {
        bmpi_topo_free(c);
        return NULL;
    }
    return c;
}

static void cart_coords(const struct bmpi_topo *t, int rank, int *coords)
{
    for (int d = t->ndims - 1; d >= 0; d--) {
        coords[d] = rank % t->dims[d];
        rank /= t->dims[d];
    }
}

/* The rank at coords + disp along direction dim, MPI_PROC_NULL off an open edge. */
static int cart_neighbor(const struct bmpi_topo *t, int rank, int dim, int disp)
{
    int coords[64], *c = t->ndims <= 64 ? coords : malloc((size_t)t->ndims * sizeof(int));
    if (!c)
        return MPI_PROC_NULL;
    cart_coords(t, rank, c);
    int x = c[dim] + disp, n = t->dims[dim], r = MPI_PROC_NULL;
    if (t->periods[dim])
        x = ((x % n) + n) % n;
    if (x >= 0 && x < n) {
        c[dim] = x;
        r = 0;
        for (int d = 0; d < t->ndims; d++)
            r = r * t->dims[d] + c[d];
    }
    if (c != coords)
        free(c);
    return r;
}

int bmpi_topo_neighbors(const struct bmpi_topo *t, int rank, int *indeg, int **in, int *outdeg, int **out)
{
    *in = *out = NULL;
    if (!t)
        return bmpi_err_set(MPI_ERR_TOPOLOGY, "the communicator has no topology");
    int ni, no;
    const int *si = NULL, *so = NULL;
    switch (t->kind) {
    case MPI_CART:
        ni = no = 2 * t->ndims;
        break;
    case MPI_GRAPH:
        ni = no = t->index[rank] - (rank ? t->index[rank - 1] : 0);
        si = so = t->edges + (rank ? t->index[rank - 1] : 0);
        break;
    default:
        ni = t->indegree;
        no = t->outdegree;
        si = t->sources;
        so = t->dests;
        break;
    }
    *in = malloc(((size_t)ni + 1) * sizeof(int));
    *out = malloc(((size_t)no + 1) * sizeof(int));
    if (!*in || !*out) {
        free(*in);
        free(*out);
        *in = *out = NULL;
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for the neighbour lists");
    }
    if (t->kind == MPI_CART) {
        for (int d = 0; d < t->ndims; d++) {
            (*in)[2 * d] = (*out)[2 * d] = cart_neighbor(t, rank, d, -1);
            (*in)[2 * d + 1] = (*out)[2 * d + 1] = cart_neighbor(t, rank, d, 1);
        }
    } else {
        if (ni)
            memcpy(*in, si, (size_t)ni * sizeof(int));
        if (no)
            memcpy(*out, so, (size_t)no * sizeof(int));
    }
    *indeg = ni;
    *outdeg = no;
    return BMPI_OK;
}

/* --- helpers for the entry points ---------------------------------------- */

static int check_out(MPI_Comm comm, const char *fn, const void *p, const char *what)
{
    return p ? MPI_SUCCESS : bmpi_err_comm(comm, MPI_ERR_ARG, fn, "%s is NULL", what);
}

/* comm with a topology of the given kind (0: any). */
static int check_topo(MPI_Comm comm, const char *fn, int kind, struct bmpi_comm **c, struct bmpi_topo **t)
{
    int err = bmpi_check_intracomm(comm, fn, c);
    if (err)
        return err;
    *t = (*c)->topo;
    static const char *const names[] = {"", "graph", "cartesian", "distributed graph"};
    if (!*t || (kind && (*t)->kind != kind))
        return bmpi_err_comm(comm, MPI_ERR_TOPOLOGY, fn, "communicator 0x%x has no %s topology", (unsigned)comm,
                             names[kind]);
    return MPI_SUCCESS;
}

/*
 * A communicator of parent's first n ranks (all of them when n == size)
 * carrying topology t, which it takes over (freed on failure and on the
 * processes left out, who get *out == NULL). Collective over parent.
 */
static int topo_comm(struct bmpi_comm *parent, int n, struct bmpi_topo *t, struct bmpi_comm **out)
{
    *out = NULL;
    uint32_t id;
    int err = bmpi_ctx_new(parent, &id);
    if (err) {
        bmpi_topo_free(t);
        return err;
    }
    struct bmpi_group *g = NULL;
    if (parent->rank < n) {
        if (n == parent->size) {
            g = parent->group;
            bmpi_group_retain(g);
        } else if (!(g = bmpi_group_new(parent->group->world_ranks, n))) {
            bmpi_ctx_release(id);
            bmpi_topo_free(t);
            return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory");
        }
    }
    err = bmpi_comm_build(parent, g, id, out);
    bmpi_group_release(g);
    if (err || !*out) {
        bmpi_topo_free(t);
        return err;
    }
    (*out)->topo = t;
    return BMPI_OK;
}

/* --- cartesian -------------------------------------------------------------- */

static int desc(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x < y) - (x > y);
}

/* The prime factors of n > 0 with their multiplicity, descending, in f (an
 * int has at most 30); returns how many. */
static int prime_factors(int n, int f[32])
{
    int k = 0;
    for (int p = 2; (long)p * p <= n; p++)
        for (; n % p == 0; n /= p)
            f[k++] = p;
    if (n > 1)
        f[k++] = n;
    qsort(f, (size_t)k, sizeof(int), desc);
    return k;
}

/* x^k, or some value above cap once it passes cap (no overflow). */
static long long power_capped(int x, int k, int cap)
{
    long long p = 1;
    for (int j = 0; j < k && p <= cap; j++)
        p *= x;
    return p;
}

/* The largest x with x^k <= n (k >= 1). */
static int int_root(int n, int k)
{
    int lo = 1, hi = k == 1 ? n : 46341; /* 46341^2 > INT_MAX */
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (power_capped(mid, k, n) <= n)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

struct dims_search {
    int div[1600]; /* divisors of the product, descending (an int has at most 1344) */
    int ndiv;
    int *cur;
    long spread; /* the smallest found so far */
};

/* The smallest spread (largest minus smallest) of a non-increasing split
 * of rest into k factors, each at most maxd, cur[0 .. depth) chosen
 * already; s->spread starts as that of a split known to exist. Pruned by
 * what a choice must reach: the smallest factor is at most the k-th root
 * of what is left. */
static void least_spread(struct dims_search *s, int rest, int k, int maxd, int depth)
{
    if (k == 0) {
        long spread = (long)s->cur[0] - s->cur[depth - 1];
        if (rest == 1 && spread < s->spread)
            s->spread = spread;
        return;
    }
    for (int i = 0; i < s->ndiv; i++) {
        int d = s->div[i];
        if (d > maxd || rest % d)
            continue;
        /* d is the largest of the k left: d^k must reach rest */
        if (power_capped(d, k, rest) < rest)
            break; /* smaller d cannot either */
        long largest = depth ? s->cur[0] : d;
        long smallest = k > 1 ? int_root(rest / d, k - 1) : d;
        if (largest - (smallest < d ? smallest : d) >= s->spread)
            continue;
        s->cur[depth] = d;
        least_spread(s, rest / d, k - 1, d, depth + 1);
    }
}

/* The first non-decreasing split of rest into k factors, each at least
 * mind, within s->spread of cur[0], trying the larger factors first: of
 * the splits with the least spread, the one whose smallest factors are
 * largest, compared from the smallest up, which is MPICH's choice. */
static bool first_of_spread(struct dims_search *s, int rest, int k, int mind, int depth)
{
    if (k == 1) {
        s->cur[depth] = rest;
        return rest >= mind && (!depth || rest - s->cur[0] <= s->spread);
    }
    for (int i = 0; i < s->ndiv; i++) {
        int d = s->div[i];
        if (d < mind)
            break;
        if (rest % d)
            continue;
        /* d is the smallest of the k left: d^k must not pass rest */
        if (power_capped(d, k, rest) > rest)
            continue;
        /* the largest of the others is at least their (k-1)-th root */
        int root = int_root(rest / d, k - 1);
        if (power_capped(root, k - 1, rest / d) != rest / d)
            root++;
        if (root - (depth ? s->cur[0] : d) > s->spread)
            continue;
        s->cur[depth] = d;
        if (first_of_spread(s, rest / d, k - 1, d, depth + 1))
            return true;
    }
    return false;
}

/* Primes, largest first, each onto the smallest factor so far (Open MPI's
 * way): a balanced split whose spread bounds the search. */
static long greedy_spread(const int *primes, int np, int k, int *f)
{
    for (int i = 0; i < k; i++)
        f[i] = 1;
    for (int p = 0; p < np; p++) {
        int low = 0;
        for (int i = 1; i < k; i++)
            if (f[i] < f[low])
                low = i;
        f[low] *= primes[p];
    }
    qsort(f, (size_t)k, sizeof(int), desc);
    return (long)f[0] - f[k - 1];
}

/* The most balanced split of n into k factors, non-increasing: with no
 * more prime factors than k, the primes themselves and then 1s (as MPICH
 * and Open MPI give); otherwise the split of the least spread, ties broken
 * as MPICH does. */
static int dims_balance(int n, int k, int *out)
{
    int primes[32];
    int np = prime_factors(n, primes);
    if (np <= k) {
        for (int i = 0; i < k; i++)
            out[i] = i < np ? primes[i] : 1;
        return BMPI_OK;
    }
    struct dims_search *s = calloc(1, sizeof *s);
    int *cur = calloc((size_t)k, sizeof(int));
    if (!s || !cur) {
        free(s);
        free(cur);
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory");
    }
    s->cur = cur;
    s->spread = greedy_spread(primes, np, k, out) + 1;
    for (long d = 1; d * d <= n; d++)
        if (n % d == 0) {
            s->div[s->ndiv++] = (int)d;
            if (d * d != n)
                s->div[s->ndiv++] = (int)(n / d);
        }
    qsort(s->div, (size_t)s->ndiv, sizeof(int), desc);
    least_spread(s, n, k, n, 0);
    if (first_of_spread(s, n, k, 1, 0))
        for (int i = 0; i < k; i++)
            out[i] = cur[k - 1 - i];
    free(cur);
    free(s);
    return BMPI_OK;
}

BMPI_API(MPI_Dims_create)
int PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
    static const char fn[] = "MPI_Dims_create";
    if (nnodes <= 0)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "invalid nnodes %d (must be > 0)", nnodes);
    if (ndims < 0)
        return bmpi_err_noobj(MPI_ERR_DIMS, fn, "invalid ndims %d", ndims);
    if (ndims > 0 && !dims)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "dims is NULL");
    long long fixed = 1; /* capped above nnodes: it then divides nothing */
    int nfree = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return bmpi_err_noobj(MPI_ERR_DIMS, fn, "dims[%d] = %d is negative", i, dims[i]);
        if (dims[i] == 0)
            nfree++;
        else if (fixed <= nnodes)
            fixed *= dims[i];
    }
    if (fixed > nnodes || nnodes % fixed != 0)
        return bmpi_err_noobj(MPI_ERR_DIMS, fn,
                              "nnodes %d is not a multiple of the product of the set dims (%s%lld)", nnodes,
                              fixed > nnodes ? "over " : "", fixed > nnodes ? (long long)nnodes : fixed);
    int rest = (int)(nnodes / fixed);
    if (nfree == 0) {
        if (rest != 1)
            return bmpi_err_noobj(MPI_ERR_DIMS, fn, "the dims multiply to %lld, not nnodes %d", fixed, nnodes);
        return MPI_SUCCESS;
    }
    int *v = malloc((size_t)nfree * sizeof(int));
    int err = v ? dims_balance(rest, nfree, v) : bmpi_err_set(MPI_ERR_NO_MEM, "out of memory");
    if (err) {
        free(v);
        return bmpi_err_noobj(err, fn, NULL);
    }
    for (int i = 0, j = 0; i < ndims; i++)
        if (dims[i] == 0)
            dims[i] = v[j++];
    free(v);
    return MPI_SUCCESS;
}

static int check_cart_args(MPI_Comm comm, struct bmpi_comm *c, int ndims, const int dims[], const int periods[],
                           const char *fn, int *prod)
{
    if (ndims < 0)
        return bmpi_err_comm(comm, MPI_ERR_DIMS, fn, "invalid ndims %d", ndims);
    if (ndims > 0 && (!dims || !periods))
        return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "dims or periods is NULL");
    long p = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0)
            return bmpi_err_comm(comm, MPI_ERR_DIMS, fn, "dims[%d] = %d (must be > 0)", i, dims[i]);
        p *= dims[i];
        if (p > c->size)
            return bmpi_err_comm(comm, MPI_ERR_TOPOLOGY, fn,
                                 "the grid has more points than the communicator has processes (%d)", c->size);
    }
    *prod = (int)p;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Cart_create)
int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
                     MPI_Comm *comm_cart)
{
    static const char fn[] = "MPI_Cart_create";
    struct bmpi_comm *c, *nc = NULL;
    int err = bmpi_check_intracomm(comm_old, fn, &c), prod;
    if (err)
        return err;
    if ((err = check_out(comm_old, fn, comm_cart, "comm_cart")) ||
        (err = check_cart_args(comm_old, c, ndims, dims, periods, fn, &prod)))
        return err;
    struct bmpi_topo *t = calloc(1, sizeof(*t));
    if (!t || !(t->dims = idup(dims, ndims)) || !(t->periods = malloc(((size_t)ndims + 1) * sizeof(int)))) {
        bmpi_topo_free(t);
        return bmpi_err_comm(comm_old, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    t->kind = MPI_CART;
    t->ndims = ndims;
    for (int i = 0; i < ndims; i++)
        t->periods[i] = periods[i] != 0;
    if ((err = topo_comm(c, prod, t, &nc)))
        return bmpi_err_comm(comm_old, err, fn, NULL);
    *comm_cart = nc ? nc->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Cartdim_get)
int PMPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    struct bmpi_comm *c;
    struct bmpi_topo *t;
    int err = check_topo(comm, "MPI_Cartdim_get", MPI_CART, &c, &t);
    if (err || (err = check_out(comm, "MPI_Cartdim_get", ndims, "ndims")))
        return err;
    *ndims = t->ndims;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Cart_get)
int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    static const char fn[] = "MPI_Cart_get";
    struct bmpi_comm *c;
    struct bmpi_topo *t;
    int err = check_topo(comm, fn, MPI_CART, &c, &t);
    if (err)
        return err;
    if (maxdims < t->ndims)
        return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "maxdims %d is less than the %d dimensions", maxdims, t->ndims);
    if (t->ndims > 0 && (!dims || !periods || !coords))
        return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "dims, periods or coords is NULL");
    for (int i = 0; i < t->ndims; i++) {
        dims[i] = t->dims[i];
        periods[i] = t->periods[i];
    }
    cart_coords(t, c->rank, coords);
    return MPI_SUCCESS;
}

BMPI_API(MPI_Cart_rank)
int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    static const char fn[] = "MPI_Cart_rank";
    struct bmpi_comm *c;
    struct bmpi_topo *t;
    int err = check_topo(comm, fn, MPI_CART, &c, &t);
    if (err || (err = check_out(comm, fn, rank, "rank")))
        return err;
    if (t->ndims > 0 && !coords)
        return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "coords is NULL");
    int r = 0;
    for (int d = 0; d < t->ndims; d++) {
        int x = coords[d], n = t->dims[d];
        if (t->periods[d])
            x = ((x % n) + n) % n;
        else if (x < 0 || x >= n)
            return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "coords[%d] = %d out of range 0..%d (not periodic)", d,
                                 coords[d], n - 1);
        r = r * n + x;
    }
    *rank = r;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Cart_coords)
int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    static const char fn[] = "MPI_Cart_coords";
    struct bmpi_comm *c;
    struct bmpi_topo *t;
    int err = check_topo(comm, fn, MPI_CART, &c, &t);
    if (err)
        return err;
    if (rank < 0 || rank >= c->size)
        return bmpi_err_comm(comm, MPI_ERR_RANK, fn, "rank %d out of range (communicator size %d)", rank, c->size);
    if (maxdims < t->ndims)
        return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "maxdims %d is less than the %d dimensions", maxdims, t->ndims);
    if (t->ndims > 0 && !coords)
        return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "coords is NULL");
    cart_coords(t, rank, coords);
    return MPI_SUCCESS;
}

BMPI_API(MPI_Cart_shift)
int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    static const char fn[] = "MPI_Cart_shift";
    struct bmpi_comm *c;
    struct bmpi_topo *t;
    int err = check_topo(comm, fn, MPI_CART, &c, &t);
    if (err)
        return err;
    if (direction < 0 || direction >= t->ndims)
        return bmpi_err_comm(comm, MPI_ERR_DIMS, fn, "direction %d out of range (%d dimensions)", direction,
                             t->ndims);
    if (!rank_source || !rank_dest)
        return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "rank_source or rank_dest is NULL");
    *rank_source = cart_neighbor(t, c->rank, direction, -disp);
    *rank_dest = cart_neighbor(t, c->rank, direction, disp);
    return MPI_SUCCESS;
}

BMPI_API(MPI_Cart_sub)
int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Cart_sub";
    struct bmpi_comm *c, *nc = NULL;
    struct bmpi_topo *t;
    int err = check_topo(comm, fn, MPI_CART, &c, &t);
    if (err || (err = check_out(comm, fn, newcomm, "newcomm")))
        return err;
    if (t->ndims > 0 && !remain_dims)
        return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "remain_dims is NULL");
    int *coords = malloc(((size_t)t->ndims + 1) * sizeof(int));
    struct bmpi_topo *nt = calloc(1, sizeof(*nt));
    if (!coords || !nt || !(nt->dims = malloc(((size_t)t->ndims + 1) * sizeof(int))) ||
        !(nt->periods = malloc(((size_t)t->ndims + 1) * sizeof(int)))) {
        free(coords);
        bmpi_topo_free(nt);
        return bmpi_err_comm(comm, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    cart_coords(t, c->rank, coords);
    /* colour: position in the dropped dimensions; key: in the kept ones */
    int color = 0, key = 0;
    nt->kind = MPI_CART;
    for (int d = 0; d < t->ndims; d++) {
        if (remain_dims[d]) {
            key = key * t->dims[d] + coords[d];
            nt->dims[nt->ndims] = t->dims[d];
            nt->periods[nt->ndims++] = t->periods[d];
        } else {
            color = color * t->dims[d] + coords[d];
        }
    }
    free(coords);
    if ((err = bmpi_comm_split_internal(c, color, key, &nc))) {
        bmpi_topo_free(nt);
        return bmpi_err_comm(comm, err, fn, NULL);
    }
    nc->topo = nt;
    *newcomm = nc->handle;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Cart_map)
int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
    static const char fn[] = "MPI_Cart_map";
    struct bmpi_comm *c;
    int err = bmpi_check_intracomm(comm, fn, &c), prod;
    if (err || (err = check_out(comm, fn, newrank, "newrank")) ||
        (err = check_cart_args(comm, c, ndims, dims, periods, fn, &prod)))
        return err;
    *newrank = c->rank < prod ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Topo_test)
int PMPI_Topo_test(MPI_Comm comm, int *status)
{
    struct bmpi_comm *c;
    int err = bmpi_check_intracomm(comm, "MPI_Topo_test", &c);
    if (err || (err = check_out(comm, "MPI_Topo_test", status, "status")))
        return err;
    *status = c->topo ? ((struct bmpi_topo *)c->topo)->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* --- graph ------------------------------------------------------------------ */

static int check_graph_args(MPI_Comm comm, struct bmpi_comm *c, int nnodes, const int index[], const int edges[],
                            const char *fn)
{
    if (nnodes < 0 || nnodes > c->size)
        return bmpi_err_comm(comm, nnodes < 0 ? MPI_ERR_ARG : MPI_ERR_TOPOLOGY, fn,
                             "invalid nnodes %d (communicator size %d)", nnodes, c->size);
    if (nnodes > 0 && !index)
        return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "index is NULL");
    for (int i = 0; i < nnodes; i++)
        if (index[i] < (i ? index[i - 1] : 0))
            return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "index[%d] = %d is less than the one before", i, index[i]);
    int ne = nnodes ? index[nnodes - 1] : 0;
    if (ne > 0 && !edges)
        return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "edges is NULL");
    for (int i = 0; i < ne; i++)
        if (edges[i] < 0 || edges[i] >= nnodes)
            return bmpi_err_comm(comm, MPI_ERR_RANK, fn, "edges[%d] = %d out of range (nnodes %d)", i, edges[i],
                                 nnodes);
    return MPI_SUCCESS;
}

BMPI_API(MPI_Graph_create)
int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int indx[], const int edges[], int reorder,
                      MPI_Comm *comm_graph)
{
    static const char fn[] = "MPI_Graph_create";
    struct bmpi_comm *c, *nc = NULL;
    int err = bmpi_check_intracomm(comm_old, fn, &c);
    if (err || (err = check_out(comm_old, fn, comm_graph, "comm_graph")) ||
        (err = check_graph_args(comm_old, c, nnodes, indx, edges, fn)))
        return err;
    int ne = nnodes ? indx[nnodes - 1] : 0;
    struct bmpi_topo *t = calloc(1, sizeof(*t));
    if (!t || !(t->index = idup(indx, nnodes)) || !(t->edges = idup(edges, ne))) {
        bmpi_topo_free(t);
        return bmpi_err_comm(comm_old, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    t->kind = MPI_GRAPH;
    t->nnodes = nnodes;
    t->nedges = ne;
    if ((err = topo_comm(c, nnodes, t, &nc)))
        return bmpi_err_comm(comm_old, err, fn, NULL);
    *comm_graph = nc ? nc->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Graphdims_get)
int PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    struct bmpi_comm *c;
    struct bmpi_topo *t;
    int err = check_topo(comm, "MPI_Graphdims_get", MPI_GRAPH, &c, &t);
    if (err)
        return err;
    if (!nnodes || !nedges)
        return bmpi_err_comm(comm, MPI_ERR_ARG, "MPI_Graphdims_get", "nnodes or nedges is NULL");
    *nnodes = t->nnodes;
    *nedges = t->nedges;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Graph_get)
int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int indx[], int edges[])
{
    static const char fn[] = "MPI_Graph_get";
    struct bmpi_comm *c;
    struct bmpi_topo *t;
    int err = check_topo(comm, fn, MPI_GRAPH, &c, &t);
    if (err)
        return err;
    if (maxindex < 0 || maxedges < 0)
        return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "negative maxindex %d or maxedges %d", maxindex, maxedges);
    if ((maxindex > 0 && !indx) || (maxedges > 0 && !edges))
        return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "index or edges is NULL");
    for (int i = 0; i < maxindex && i < t->nnodes; i++)
        indx[i] = t->index[i];
    for (int i = 0; i < maxedges && i < t->nedges; i++)
        edges[i] = t->edges[i];
    return MPI_SUCCESS;
}

static int graph_rank(MPI_Comm comm, struct bmpi_topo *t, int rank, const char *fn)
{
    if (rank < 0 || rank >= t->nnodes)
        return bmpi_err_comm(comm, MPI_ERR_RANK, fn, "rank %d out of range (graph of %d nodes)", rank, t->nnodes);
    return MPI_SUCCESS;
}

BMPI_API(MPI_Graph_neighbors_count)
int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    static const char fn[] = "MPI_Graph_neighbors_count";
    struct bmpi_comm *c;
    struct bmpi_topo *t;
    int err = check_topo(comm, fn, MPI_GRAPH, &c, &t);
    if (err || (err = graph_rank(comm, t, rank, fn)) || (err = check_out(comm, fn, nneighbors, "nneighbors")))
        return err;
    *nneighbors = t->index[rank] - (rank ? t->index[rank - 1] : 0);
    return MPI_SUCCESS;
}

BMPI_API(MPI_Graph_neighbors)
int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    static const char fn[] = "MPI_Graph_neighbors";
    struct bmpi_comm *c;
    struct bmpi_topo *t;
    int err = check_topo(comm, fn, MPI_GRAPH, &c, &t);
    if (err || (err = graph_rank(comm, t, rank, fn)))
        return err;
    if (maxneighbors < 0 || (maxneighbors > 0 && !neighbors))
        return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "invalid maxneighbors %d or neighbors NULL", maxneighbors);
    int lo = rank ? t->index[rank - 1] : 0;
    for (int i = lo; i < t->index[rank] && i - lo < maxneighbors; i++)
        neighbors[i - lo] = t->edges[i];
    return MPI_SUCCESS;
}

BMPI_API(MPI_Graph_map)
int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int indx[], const int edges[], int *newrank)
{
    static const char fn[] = "MPI_Graph_map";
    struct bmpi_comm *c;
    int err = bmpi_check_intracomm(comm, fn, &c);
    if (err || (err = check_out(comm, fn, newrank, "newrank")) ||
        (err = check_graph_args(comm, c, nnodes, indx, edges, fn)))
        return err;
    *newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* --- distributed graph ------------------------------------------------------ */

static int is_unweighted(const int *w) { return w == MPI_UNWEIGHTED; }

static int check_degree_list(MPI_Comm comm, struct bmpi_comm *c, int deg, const int *ranks, const int *w,
                             const char *what, const char *fn)
{
    if (deg < 0)
        return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "negative %s degree %d", what, deg);
    if (deg > 0 && !ranks)
        return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "%s list is NULL", what);
    if (deg > 0 && !is_unweighted(w) && (!w || w == MPI_WEIGHTS_EMPTY))
        return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "%s weights missing", what);
    for (int i = 0; i < deg; i++) {
        if (ranks[i] < 0 || ranks[i] >= c->size)
            return bmpi_err_comm(comm, MPI_ERR_RANK, fn, "%s[%d] = %d out of range (communicator size %d)", what, i,
                                 ranks[i], c->size);
        if (!is_unweighted(w) && w[i] < 0)
            return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "%s weight[%d] = %d is negative", what, i, w[i]);
    }
    return MPI_SUCCESS;
}

static int fill_side(int deg, const int *ranks, const int *w, int **r_out, int **w_out)
{
    *r_out = idup(ranks, deg);
    *w_out = malloc(((size_t)deg + 1) * sizeof(int));
    if (!*r_out || !*w_out)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < deg; i++)
        (*w_out)[i] = is_unweighted(w) ? 1 : w[i];
    return BMPI_OK;
}

BMPI_API(MPI_Dist_graph_create_adjacent)
int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                    const int sourceweights[], int outdegree, const int destinations[],
                                    const int destweights[], MPI_Info info, int reorder,
                                    MPI_Comm *comm_dist_graph)
{
    static const char fn[] = "MPI_Dist_graph_create_adjacent";
    struct bmpi_comm *c, *nc = NULL;
    int err = bmpi_check_intracomm(comm_old, fn, &c);
    if (err || (err = check_out(comm_old, fn, comm_dist_graph, "comm_dist_graph")) ||
        (err = check_degree_list(comm_old, c, indegree, sources, sourceweights, "sources", fn)) ||
        (err = check_degree_list(comm_old, c, outdegree, destinations, destweights, "destinations", fn)))
        return err;
    if (info != MPI_INFO_NULL && !bmpi_info_lookup(info))
        return bmpi_err_comm(comm_old, MPI_ERR_INFO, fn, "invalid info 0x%x", (unsigned)info);
    struct bmpi_topo *t = calloc(1, sizeof(*t));
    if (!t || fill_side(indegree, sources, sourceweights, &t->sources, &t->srcweights) ||
        fill_side(outdegree, destinations, destweights, &t->dests, &t->dstweights)) {
        bmpi_topo_free(t);
        return bmpi_err_comm(comm_old, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    t->kind = MPI_DIST_GRAPH;
    t->indegree = indegree;
    t->outdegree = outdegree;
    t->weighted = !is_unweighted(sourceweights) && !is_unweighted(destweights);
    if ((err = topo_comm(c, c->size, t, &nc)))
        return bmpi_err_comm(comm_old, err, fn, NULL);
    *comm_dist_graph = nc->handle;
    return MPI_SUCCESS;
}

/*
 * MPI_Dist_graph_create: any process may name any edge. Every process
 * sorts the edges it was given by the two processes they concern (source:
 * an out edge, destination: an in edge), the per-process counts travel with
 * the context id agreement, then the edges go point to point.
 */
BMPI_API(MPI_Dist_graph_create)
int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                           const int destinations[], const int weights[], MPI_Info info, int reorder,
                           MPI_Comm *comm_dist_graph)
{
    static const char fn[] = "MPI_Dist_graph_create";
    struct bmpi_comm *c, *nc = NULL;
    int err = bmpi_check_intracomm(comm_old, fn, &c);
    if (err || (err = check_out(comm_old, fn, comm_dist_graph, "comm_dist_graph")))
        return err;
    if (n < 0 || (n > 0 && (!sources || !degrees)))
        return bmpi_err_comm(comm_old, MPI_ERR_ARG, fn, "invalid n %d or NULL sources/degrees", n);
    if (info != MPI_INFO_NULL && !bmpi_info_lookup(info))
        return bmpi_err_comm(comm_old, MPI_ERR_INFO, fn, "invalid info 0x%x", (unsigned)info);
    int ne = 0;
    for (int i = 0; i < n; i++) {
        if (sources[i] < 0 || sources[i] >= c->size)
            return bmpi_err_comm(comm_old, MPI_ERR_RANK, fn, "sources[%d] = %d out of range (communicator size %d)",
                                 i, sources[i], c->size);
        if (degrees[i] < 0)
            return bmpi_err_comm(comm_old, MPI_ERR_ARG, fn, "degrees[%d] = %d is negative", i, degrees[i]);
        ne += degrees[i];
    }
    if (ne > 0 && !destinations)
        return bmpi_err_comm(comm_old, MPI_ERR_ARG, fn, "destinations is NULL");
    int weighted = !is_unweighted(weights);
    if (ne > 0 && weighted && (!weights || weights == MPI_WEIGHTS_EMPTY))
        return bmpi_err_comm(comm_old, MPI_ERR_ARG, fn, "weights missing");
    for (int i = 0; i < ne; i++) {
        if (destinations[i] < 0 || destinations[i] >= c->size)
            return bmpi_err_comm(comm_old, MPI_ERR_RANK, fn,
                                 "destinations[%d] = %d out of range (communicator size %d)", i, destinations[i],
                                 c->size);
        if (weighted && weights[i] < 0)
            return bmpi_err_comm(comm_old, MPI_ERR_ARG, fn, "weights[%d] = %d is negative", i, weights[i]);
    }

    int size = c->size, me = c->rank;
    /* per process p: triples (kind 0 = in edge of p, 1 = out edge of p; other end; weight) */
    int *cnt = calloc((size_t)size, sizeof(int)), *nsend = calloc((size_t)size, sizeof(int));
    int *off = calloc((size_t)size + 1, sizeof(int)), *sendb = malloc(((size_t)ne * 6 + 1) * sizeof(int));
    struct block_in {
        int src, n;
        int *e;
    } *in = NULL;
    int nin = 0, total = 0, have_id = 0;
    uint32_t id = 0;
    struct bmpi_request **reqs = malloc(((size_t)size * 2 + 1) * sizeof(*reqs));
    struct bmpi_topo *t = calloc(1, sizeof(*t));
    int nreq = 0;
    if (!cnt || !nsend || !off || !sendb || !reqs || !t) {
        err = bmpi_err_set(MPI_ERR_NO_MEM, "out of memory");
        goto fail;
    }
    for (int i = 0, e = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, e++) {
            cnt[sources[i]]++;
            cnt[destinations[e]]++;
        }
    for (int p = 0; p < size; p++)
        off[p + 1] = off[p] + cnt[p];
    memset(cnt, 0, (size_t)size * sizeof(int));
    for (int i = 0, e = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, e++) {
            int s = sources[i], d = destinations[e], w = weighted ? weights[e] : 1;
            int *o = sendb + 3 * (off[s] + cnt[s]++);
            o[0] = 1, o[1] = d, o[2] = w;
            o = sendb + 3 * (off[d] + cnt[d]++);
            o[0] = 0, o[1] = s, o[2] = w;
        }
    /* one tree round: the new id, and how many processes will send to each
     * (memory and messages linear in the size, not quadratic) */
    for (int p = 0; p < size; p++)
        nsend[p] = p != me && cnt[p] > 0;
    if ((err = bmpi_ctx_agree_sum(c, nsend, size, &id)))
        goto fail;
    have_id = 1;
    int senders = nsend[me];
    if (!(in = calloc((size_t)senders + 1, sizeof(*in)))) {
        err = bmpi_err_set(MPI_ERR_NO_MEM, "out of memory");
        goto fail;
    }
    /* the edges travel on the new communicator's collective context (same
     * ranks as c): no earlier or later call's edges can be taken for these */
    have_id = 0; /* bmpi_comm_build owns it now, also on failure */
    if ((err = bmpi_comm_build(c, c->group, id, &nc)))
        goto fail;
    uint32_t cid = nc->context_id + 1;
    for (int p = 0; p < size && !err; p++) {
        if (p == me || !cnt[p])
            continue;
        if (!(err = bmpi_isend(&cnt[p], 1, MPI_INT, p, BMPI_TAG_DGRAPH, nc, cid, BMPI_SEND_STANDARD, &reqs[nreq])))
            nreq++;
        if (!err && !(err = bmpi_isend(sendb + 3 * off[p], (size_t)cnt[p] * 3, MPI_INT, p, BMPI_TAG_DGRAPH - 1, nc,
                                       cid, BMPI_SEND_STANDARD, &reqs[nreq])))
            nreq++;
    }
    in[nin++] = (struct block_in){me, cnt[me], NULL}; /* my own edges, without a message */
    for (int i = 0; i < senders && !err; i++) {
        MPI_Status st;
        int k;
        if ((err = bmpi_recv(&k, 1, MPI_INT, MPI_ANY_SOURCE, BMPI_TAG_DGRAPH, nc, cid, &st)))
            break;
        in[nin] = (struct block_in){st.MPI_SOURCE, k, malloc(((size_t)k * 3 + 1) * sizeof(int))};
        if (!in[nin].e) {
            err = bmpi_err_set(MPI_ERR_NO_MEM, "out of memory");
            break;
        }
        err = bmpi_recv(in[nin].e, (size_t)k * 3, MPI_INT, st.MPI_SOURCE, BMPI_TAG_DGRAPH - 1, nc, cid,
                        MPI_STATUS_IGNORE);
        total += in[nin++].n;
    }
    for (int i = 0; i < nreq; i++) {
        int e2 = bmpi_request_wait(reqs[i], MPI_STATUS_IGNORE);
        if (!err)
            err = e2;
    }
    nreq = 0;
    if (err)
        goto fail;
    total += cnt[me];
    /* my edges in the order of the processes that named them */
    for (int i = 1; i < nin; i++)
        for (int j = i; j > 0 && in[j - 1].src > in[j].src; j--) {
            struct block_in x = in[j];
            in[j] = in[j - 1];
            in[j - 1] = x;
        }
    for (int b = 0; b < nin; b++) {
        const int *e = in[b].e ? in[b].e : sendb + 3 * off[me];
        for (int i = 0; i < in[b].n; i++) {
            if (e[3 * i])
                t->outdegree++;
            else
                t->indegree++;
        }
    }
    t->sources = malloc(((size_t)t->indegree + 1) * sizeof(int));
    t->srcweights = malloc(((size_t)t->indegree + 1) * sizeof(int));
    t->dests = malloc(((size_t)t->outdegree + 1) * sizeof(int));
    t->dstweights = malloc(((size_t)t->outdegree + 1) * sizeof(int));
    if (!t->sources || !t->srcweights || !t->dests || !t->dstweights) {
        err = bmpi_err_set(MPI_ERR_NO_MEM, "out of memory");
        goto fail;
    }
    for (int b = 0, a = 0, d = 0; b < nin; b++) {
        const int *e = in[b].e ? in[b].e : sendb + 3 * off[me];
        for (int i = 0; i < in[b].n; i++) {
            if (e[3 * i]) {
                t->dests[a] = e[3 * i + 1];
                t->dstweights[a++] = e[3 * i + 2];
            } else {
                t->sources[d] = e[3 * i + 1];
                t->srcweights[d++] = e[3 * i + 2];
            }
        }
    }
    t->kind = MPI_DIST_GRAPH;
    t->weighted = weighted;
    nc->topo = t;
    t = NULL;
    *comm_dist_graph = nc->handle;
    nc = NULL;
fail:
    for (int i = 0; i < nreq; i++)
        bmpi_request_wait(reqs[i], MPI_STATUS_IGNORE);
    if (nc)
        bmpi_comm_release(nc);
    if (have_id)
        bmpi_ctx_release(id);
    for (int i = 0; in && i < nin; i++)
        free(in[i].e);
    free(in);
    bmpi_topo_free(t);
    free(reqs);
    free(sendb);
    free(off);
    free(nsend);
    free(cnt);
    return err ? bmpi_err_comm(comm_old, err, fn, NULL) : MPI_SUCCESS;
}

BMPI_API(MPI_Dist_graph_neighbors_count)
int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
    static const char fn[] = "MPI_Dist_graph_neighbors_count";
    struct bmpi_comm *c;
    struct bmpi_topo *t;
    int err = check_topo(comm, fn, MPI_DIST_GRAPH, &c, &t);
    if (err)
        return err;
    if (!indegree || !outdegree || !weighted)
        return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "indegree, outdegree or weighted is NULL");
    *indegree = t->indegree;
    *outdegree = t->outdegree;
    *weighted = t->weighted;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Dist_graph_neighbors)
int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                              int maxoutdegree, int destinations[], int destweights[])
{
    static const char fn[] = "MPI_Dist_graph_neighbors";
    struct bmpi_comm *c;
    struct bmpi_topo *t;
    int err = check_topo(comm, fn, MPI_DIST_GRAPH, &c, &t);
    if (err)
        return err;
    if (maxindegree < t->indegree || maxoutdegree < t->outdegree)
        return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "maxindegree %d or maxoutdegree %d below the degrees %d, %d",
                             maxindegree, maxoutdegree, t->indegree, t->outdegree);
    if ((t->indegree && !sources) || (t->outdegree && !destinations))
        return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "sources or destinations is NULL");
    for (int i = 0; i < t->indegree; i++) {
        sources[i] = t->sources[i];
        if (t->weighted && sourceweights && !is_unweighted(sourceweights))
            sourceweights[i] = t->srcweights[i];
    }
    for (int i = 0; i < t->outdegree; i++) {
        destinations[i] = t->dests[i];
        if (t->weighted && destweights && !is_unweighted(destweights))
            destweights[i] = t->dstweights[i];
    }
    return MPI_SUCCESS;
}
