/*
 * The RMA-specific helpers of the one-sided tests (test/rma/README); the
 * checks (CHECK, MPICHK, EXPECT_CLASS), tu_init and tu_finish come from
 * test/mpi/testutil.h. Plain MPI only, so that every program also builds
 * and runs with MPICH and Open MPI (test/rma/validate-with-mpich.sh).
 *
 * Every program sets MPI_ERRORS_RETURN on MPI_COMM_WORLD, MPI_COMM_SELF
 * (tu_init) and on each window it makes (rt_win_errors_return), and checks
 * every return code with MPICHK: a failure prints the call, the line, the
 * error class and string instead of dying inside the library.
 */
#ifndef BMPI_TEST_RMA_UTIL_H
#define BMPI_TEST_RMA_UTIL_H

#include "../mpi/testutil.h"

/* 1 when every rank of comm is on this node (MPI_Win_allocate_shared
 * over comm is allowed). */
static inline int rt_one_node(MPI_Comm comm)
{
    MPI_Comm node;
    int n, size;
    MPICHK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPICHK(MPI_Comm_size(node, &n));
    MPICHK(MPI_Comm_size(comm, &size));
    MPICHK(MPI_Comm_free(&node));
    int all = n == size, every = 0;
    MPICHK(MPI_Allreduce(&all, &every, 1, MPI_INT, MPI_LAND, comm));
    return every;
}

static inline void rt_win_errors_return(MPI_Win win)
{
    MPICHK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
}

#endif
