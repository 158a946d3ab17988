/*
 * Algorithm selection, in one place: the default choice of each collective
 * by communicator size, bytes and commutativity, and the BMPI_COLL_<NAME>
 * overrides (docs/collectives.md lists them). Overrides are read once per
 * process; MPI_Init has refused an unknown name (transport/env.c).
 *
 * The returned index is the algorithm's position in its row of names in
 * transport/env.c; each algorithm file numbers its algorithms in the same
 * order. The files
 * still apply their hard constraints after this choice (a non-commutative
 * op always gets an order-keeping algorithm; recursive doubling allgather
 * needs a power-of-two size).
 */
#include "config.h"


#include "collectives/coll.h"
#include "runtime/world.h"

/* The names are transport/env.c's, which checks them at MPI_Init: the
 * index there is the algorithm's number here. */
static const char *const env_name[BMPI_COLL_NCOLLS] = {
    [BMPI_COLL_BARRIER] = "BMPI_COLL_BARRIER",
    [BMPI_COLL_BCAST] = "BMPI_COLL_BCAST",
    [BMPI_COLL_REDUCE] = "BMPI_COLL_REDUCE",
    [BMPI_COLL_ALLREDUCE] = "BMPI_COLL_ALLREDUCE",
    [BMPI_COLL_ALLGATHER] = "BMPI_COLL_ALLGATHER",
    [BMPI_COLL_ALLTOALL] = "BMPI_COLL_ALLTOALL",
    [BMPI_COLL_REDUCE_SCATTER] = "BMPI_COLL_REDUCE_SCATTER",
    [BMPI_COLL_GATHER] = "BMPI_COLL_GATHER",
    [BMPI_COLL_SCATTER] = "BMPI_COLL_SCATTER",
    [BMPI_COLL_SCAN] = "BMPI_COLL_SCAN",
};

static struct {
    bool read[BMPI_COLL_NCOLLS];
    int forced[BMPI_COLL_NCOLLS];
} sel;

/* Read once per process: selection runs on every call. */
static int forced(enum bmpi_coll_id id)
{
    if (!sel.read[id]) {
        sel.read[id] = true;
        sel.forced[id] = bmpi_env_enum(env_name[id]);
    }
    return sel.forced[id];
}

bool bmpi_coll_overridden(enum bmpi_coll_id id) { return forced(id) >= 0; }

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
