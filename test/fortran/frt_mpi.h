! The MPI declarations of a program unit of the tests in frt.mk built for
! two bindings: the mpi module with -DBMPI_TEST_USE_MPI, mpif.h without.
! Included (by cpp) after the unit's other USE statements.
#ifdef BMPI_TEST_USE_MPI
  use mpi
  implicit none
#else
  implicit none
  include 'mpif.h'
#endif
