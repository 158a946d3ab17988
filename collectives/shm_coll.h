/*
 * The node-level shared-memory path of the blocking collectives (see
 * docs/collectives.md, "Shared-memory path"). When every rank of a
 * communicator is on this node and the message fits a slot, MPI_Barrier,
 * Bcast, Reduce, Allreduce, Allgather and Alltoall move their data through
 * a region shared by the communicator's ranks instead of point-to-point,
 * or, for big blocks, copy it straight from the other ranks' buffers
 * (CMA) after finding in the region where it is.
 *
 * Each function either runs the whole collective and returns BMPI_OK or an
 * MPI error class, or returns BMPI_SHMCOLL_DECLINED at once, having done
 * nothing, and the caller runs the point-to-point schedule. The decision
 * depends only on values every rank shares (communicator, bytes, op, type
 * shape, environment), so all ranks take the same path.
 *
 * Nonblocking collectives never come here; they keep using the schedules.
 */
#ifndef BMPI_COLLECTIVES_SHM_COLL_H
#define BMPI_COLLECTIVES_SHM_COLL_H

#include <stddef.h>
#include <mpi.h>

#include "runtime/comm.h"
#include "runtime/datatype.h"
#include "runtime/op.h"

#define BMPI_SHMCOLL_DECLINED (-1)

int bmpi_shmcoll_barrier(struct bmpi_comm *c);
/* Bcast and the reductions take the datatype their caller has checked. */
int bmpi_shmcoll_bcast(struct bmpi_comm *c, void *buf, size_t count,
                       const struct bmpi_datatype *dt, int root);
int bmpi_shmcoll_reduce(struct bmpi_comm *c, const void *sbuf, void *rbuf, size_t count,
                        const struct bmpi_datatype *dt, struct bmpi_op *op, int root);
int bmpi_shmcoll_allreduce(struct bmpi_comm *c, const void *sbuf, void *rbuf, size_t count,
                           const struct bmpi_datatype *dt, struct bmpi_op *op);
int bmpi_shmcoll_allgather(struct bmpi_comm *c, const void *sbuf, size_t scount,
                           MPI_Datatype stype, void *rbuf, size_t rcount, MPI_Datatype rtype);
int bmpi_shmcoll_alltoall(struct bmpi_comm *c, const void *sbuf, size_t scount, MPI_Datatype stype,
                          void *rbuf, size_t rcount, MPI_Datatype rtype);

/* Unmap the communicator's region, if it has one (from comm_free). */
void bmpi_shmcoll_free(struct bmpi_comm *c);

#endif
