/*
 * Pieces shared between algorithm files (not the schedule API).
 */
#ifndef BMPI_COLLECTIVES_COLL_IMPL_H
#define BMPI_COLLECTIVES_COLL_IMPL_H

#include "collectives/coll.h"

/* Largest power of two <= p. */
int bmpi_coll_pof2_below(int p);

/* Rabenseifner's first half (allreduce.c): fold to a power of two, then
 * reduce-scatter by recursive halving. src is the input (it may be acc
 * itself); results accumulate in acc, whose other contents are scratch;
 * tmp has room for count elements. Commutative ops only. On return, ranks
 * with newrank != -1 hold the reduced blocks [send_idx, last_idx) of pof2
 * in acc, block i being elements [disps[i], disps[i+1]). */
struct bmpi_rs_state {
    int pof2, rem, newrank;
    int send_idx, last_idx;
    size_t *disps;
};
void bmpi_coll_rs_halving(struct bmpi_sched *s, const char *src, char *acc, char *tmp,
                          size_t count, MPI_Datatype type, struct bmpi_rs_state *st);

#endif
