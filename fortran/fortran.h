/*
 * fortran/fortran.h: what every C file of the Fortran bindings shares.
 *
 * The Fortran bindings (mpif.h, `use mpi`, `use mpi_f08`) live in
 * libbmpifort, a layer above libbmpi that calls only the MPI C API
 * (PMPI_X) and the language hooks of runtime/lang.h. See fortran/README.md.
 *
 * Symbol names are those of MPICH's libmpifort with gfortran's default
 * mangling, so that a program compiled against MPICH's mpif.h or modules
 * links and runs against bmpi unchanged:
 *
 *   mpif.h and `use mpi`   PMPI_X is defined as pmpi_x_; mpi_x_, mpi_x__,
 *                          mpi_x and MPI_X are weak aliases of it, and
 *                          pmpi_x__, pmpi_x and PMPI_X strong ones (so a
 *                          profiling library can interpose the mpi_ names);
 *   `use mpi_f08`          mpi_x_f08_ (routines without a choice buffer) and
 *                          mpi_x_f08ts_ (assumed-type, assumed-rank buffer),
 *                          with _large before the last underscore for the
 *                          large-count (_c) variants.
 *
 * Handles are MPICH-ABI ints, so a Fortran INTEGER handle is the C handle
 * (MPI_Comm_f2c is the identity) and TYPE(MPI_Comm) is a struct of one int.
 */
#ifndef BMPI_FORTRAN_FORTRAN_H
#define BMPI_FORTRAN_FORTRAN_H

#include <mpi.h>

#define BMPI_F_PRAGMA(x) _Pragma(#x)

/*
 * BMPI_F77_NAMES(lower, UPPER) follows the definition of pmpi_<lower>_ and
 * gives it every spelling listed above, e.g.
 *
 *     void pmpi_send_(void *buf, MPI_Fint *count, ..., MPI_Fint *ierr) { ... }
 *     BMPI_F77_NAMES(send, SEND)
 */
#define BMPI_F77_NAMES(lower, UPPER)                                                               \
    BMPI_F_PRAGMA(weak mpi_##lower##_ = pmpi_##lower##_)                                           \
    BMPI_F_PRAGMA(weak mpi_##lower##__ = pmpi_##lower##_)                                          \
    BMPI_F_PRAGMA(weak mpi_##lower = pmpi_##lower##_)                                              \
    BMPI_F_PRAGMA(weak MPI_##UPPER = pmpi_##lower##_)                                              \
    extern __typeof__(pmpi_##lower##_) pmpi_##lower##__ __attribute__((alias("pmpi_" #lower "_"))); \
    extern __typeof__(pmpi_##lower##_) pmpi_##lower __attribute__((alias("pmpi_" #lower "_")));     \
    extern __typeof__(pmpi_##lower##_) PMPI_##UPPER __attribute__((alias("pmpi_" #lower "_")));

/* gfortran's LOGICAL: 0 is .false., 1 is .true.; any non-zero reads as true. */
#define BMPI_F_TRUE 1
#define BMPI_F_FALSE 0
#define BMPI_F_LOGICAL(c) ((c) ? BMPI_F_TRUE : BMPI_F_FALSE)

#endif
