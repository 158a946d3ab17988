/*
 * Algorithm overrides: BMPI_COLL_<NAME>=<algorithm> forces one algorithm of
 * a collective (docs/collectives.md lists them). Read once per process;
 * an unknown name is reported once on stderr and ignored. The default
 * choice by size lives beside each algorithm family.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/coll.h"

static const char *const env_names[BMPI_COLL_NCOLLS] = {
    "BMPI_COLL_BARRIER",   "BMPI_COLL_BCAST",          "BMPI_COLL_REDUCE",
    "BMPI_COLL_ALLREDUCE", "BMPI_COLL_ALLGATHER",      "BMPI_COLL_ALLTOALL",
    "BMPI_COLL_REDUCE_SCATTER", "BMPI_COLL_GATHER",    "BMPI_COLL_SCATTER",
    "BMPI_COLL_SCAN",
};

static struct {
    bool read[BMPI_COLL_NCOLLS];
    int forced[BMPI_COLL_NCOLLS];
} sel;

int bmpi_coll_forced(enum bmpi_coll_id id, const char *const names[], int nnames)
{
    if (sel.read[id])
        return sel.forced[id];
    sel.read[id] = true;
    sel.forced[id] = -1;
    const char *v = getenv(env_names[id]);
    if (!v || !*v || !strcmp(v, "auto"))
        return -1;
    for (int i = 0; i < nnames; i++)
        if (!strcmp(v, names[i]))
            return sel.forced[id] = i;
    fprintf(stderr, "bmpi: %s=%s is not an algorithm of this collective; choosing by size. Known:",
            env_names[id], v);
    for (int i = 0; i < nnames; i++)
        fprintf(stderr, " %s", names[i]);
    fprintf(stderr, "\n");
    return -1;
}
