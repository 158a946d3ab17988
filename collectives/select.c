/*
 * Algorithm selection, in one place: the default choice of each collective
 * by communicator size, bytes and commutativity, and the BMPI_COLL_<NAME>
 * overrides (docs/collectives.md lists them). Overrides are read once per
 * process; an unknown name is reported once (by rank 0) and ignored.
 *
 * The returned index is the algorithm's position in its names[] row below;
 * each algorithm file numbers its algorithms in the same order. The files
 * still apply their hard constraints after this choice (a non-commutative
 * op always gets an order-keeping algorithm; recursive doubling allgather
 * needs a power-of-two size).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/coll.h"
#include "runtime/world.h"

static const struct {
    const char *env;
    const char *names[4];
    int n;
} table[BMPI_COLL_NCOLLS] = {
    [BMPI_COLL_BARRIER] = {"BMPI_COLL_BARRIER", {"dissemination"}, 1},
    [BMPI_COLL_BCAST] = {"BMPI_COLL_BCAST", {"binomial", "scatter_allgather", "pipeline", "linear"}, 4},
    [BMPI_COLL_REDUCE] = {"BMPI_COLL_REDUCE", {"binomial", "rabenseifner", "pipeline", "halves"}, 4},
    [BMPI_COLL_ALLREDUCE] = {"BMPI_COLL_ALLREDUCE", {"recursive_doubling", "rabenseifner", "ring"}, 3},
    [BMPI_COLL_ALLGATHER] = {"BMPI_COLL_ALLGATHER", {"recursive_doubling", "bruck", "ring", "linear"}, 4},
    [BMPI_COLL_ALLTOALL] = {"BMPI_COLL_ALLTOALL", {"bruck", "pairwise", "linear"}, 3},
    [BMPI_COLL_REDUCE_SCATTER] = {"BMPI_COLL_REDUCE_SCATTER", {"ring", "basic", "recursive_halving"}, 3},
    [BMPI_COLL_GATHER] = {"BMPI_COLL_GATHER", {"linear", "binomial"}, 2},
    [BMPI_COLL_SCATTER] = {"BMPI_COLL_SCATTER", {"linear", "binomial"}, 2},
    [BMPI_COLL_SCAN] = {"BMPI_COLL_SCAN", {"recursive_doubling"}, 1},
};

static struct {
    bool read[BMPI_COLL_NCOLLS];
    int forced[BMPI_COLL_NCOLLS];
} sel;

bool bmpi_coll_overridden(enum bmpi_coll_id id)
{
    const char *v = getenv(table[id].env);
    return v && *v && strcmp(v, "auto") != 0;
}

static int forced(enum bmpi_coll_id id)
{
    if (sel.read[id])
        return sel.forced[id];
    sel.read[id] = true;
    sel.forced[id] = -1;
    if (!bmpi_coll_overridden(id))
        return -1;
    const char *v = getenv(table[id].env);
    for (int i = 0; i < table[id].n; i++)
        if (!strcmp(v, table[id].names[i]))
            return sel.forced[id] = i;
    if (bmpi_world.rank != 0) /* one report per job, not one per rank */
        return -1;
    fprintf(stderr, "bmpi: %s=%s is not an algorithm of this collective; choosing by size. Known:",
            table[id].env, v);
    for (int i = 0; i < table[id].n; i++)
        fprintf(stderr, " %s", table[id].names[i]);
    fprintf(stderr, "\n");
    return -1;
}

static int pof2_below(int p)
{
    int q = 1;
    while (q * 2 <= p)
        q *= 2;
    return q;
}

int bmpi_coll_select(enum bmpi_coll_id id, int p, size_t bytes, size_t count, bool commute)
{
    int f = forced(id);
    if (f >= 0)
        return f;
    bool pof2 = (p & (p - 1)) == 0;
    switch (id) {
    case BMPI_COLL_BCAST: /* binomial | scatter_allgather | pipeline | linear */
        if (bytes < 65536 || p <= 3)
            return 0;
        if (p <= 4)
            return 2;
        /* Measured at 8 ranks on 2 cores, where lock-step pipelines stall
         * on ranks waiting for the CPU. */
        return p <= 8 && bytes < (1u << 20) ? 3 : 1;
    case BMPI_COLL_REDUCE: /* binomial | rabenseifner | pipeline | halves */
        if (!commute || bytes <= 8192 || count < (size_t)pof2_below(p))
            return 0;
        /* Below 4 MiB the halves' lock-step rounds cost more than the
         * second core gains. */
        if (p == 2 && bytes >= (4u << 20))
            return 3;
        return p <= 8 && bytes >= 65536 ? 2 : 1;
    case BMPI_COLL_ALLREDUCE: /* recursive_doubling | rabenseifner | ring */
        if (!commute || bytes <= 2048 || count < (size_t)pof2_below(p))
            return 0;
        return p > 2 && !pof2 && bytes >= (1u << 20) ? 2 : 1;
    case BMPI_COLL_ALLGATHER: /* recursive_doubling | bruck | ring | linear; bytes: all blocks */
        if (bytes < 81920)
            return pof2 ? 0 : 1;
        if (p <= 8 && bytes >= 262144)
            return 3;
        return pof2 && bytes < 524288 ? 0 : 2;
    case BMPI_COLL_ALLTOALL: /* bruck | pairwise | linear; bytes: one block */
        if (bytes <= 256 && p >= 8)
            return 0;
        /* Up to 8 ranks the receivers' pulls need no rounds at any size. */
        return bytes <= 32768 || p <= 8 ? 2 : 1;
    case BMPI_COLL_REDUCE_SCATTER: /* ring | basic | recursive_halving; bytes: all blocks */
        if (!commute)
            return 1;
        return pof2 && bytes < 524288 ? 2 : 0;
    case BMPI_COLL_GATHER:  /* linear | binomial; bytes: all blocks */
    case BMPI_COLL_SCATTER:
        return bytes <= 4096 && p > 4 ? 1 : 0;
    default:
        return 0;
    }
}
