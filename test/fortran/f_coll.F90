! Collectives and reductions through mpif.h, or the mpi module when
! compiled with -DBMPI_TEST_USE_MPI: user reduction ops written in Fortran
! (commutative and not), MAXLOC/MINLOC on MPI_2REAL, MPI_2DOUBLE_PRECISION
! and MPI_2INTEGER, MPI_LOGICAL with LAND/LOR, COMPLEX and DOUBLE COMPLEX
! sums, MPI_INTEGERn/REALn, MPI_IN_PLACE. Any number of ranks.

! x + y on MPI_INTEGER, checking the datatype the library passes
subroutine f_add(invec, inoutvec, len, datatype)
#include "frt_mpi.h"
  integer :: len, datatype
  integer :: invec(len), inoutvec(len)
  integer :: ierr
  if (datatype /= MPI_INTEGER) call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  inoutvec = invec + inoutvec
end subroutine f_add

! associative, not commutative: decimal concatenation
subroutine f_concat(invec, inoutvec, len, datatype)
  implicit none
  integer :: len, datatype
  integer :: invec(len), inoutvec(len)
  inoutvec = concat(invec, inoutvec)
contains
  include 'f_coll_concat.h'
end subroutine f_concat

program f_coll
#include "frt_mpi.h"
  character(len=*), parameter :: prog = 'f_coll'
  external :: f_add, f_concat
  integer :: rank, n, ierr, i, op_add, op_cat
  integer :: ibuf(5), x(2), y(2), all_ranks(64)
  logical :: commute
  double precision :: dsum

  call start()

  ibuf = 0
  if (rank == 0) ibuf = [(i * i, i = 1, 5)]
  call MPI_Bcast(ibuf, 5, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_SUCCESS .and. all(ibuf == [(i * i, i = 1, 5)]), 'MPI_Bcast')
  call MPI_Allgather(rank, 1, MPI_INTEGER, all_ranks, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call check(all(all_ranks(1:n) == [(i, i = 0, n - 1)]), 'MPI_Allgather')
  call MPI_Allreduce(dble(rank), dsum, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(dsum == dble(n * (n - 1) / 2), 'MPI_SUM on DOUBLE PRECISION')

  ! user ops written in Fortran
  call MPI_Op_create(f_add, .true., op_add, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Op_create')
  call MPI_Op_commutative(op_add, commute, ierr)
  call check(commute, 'commutative op')
  x = [rank + 1, 2 * (rank + 1)]
  call MPI_Allreduce(x, y, 2, MPI_INTEGER, op_add, MPI_COMM_WORLD, ierr)
  call check(all(y == [n * (n + 1) / 2, n * (n + 1)]), 'Allreduce with a Fortran op')
  y = x
  call MPI_Allreduce(MPI_IN_PLACE, y, 2, MPI_INTEGER, op_add, MPI_COMM_WORLD, ierr)
  call check(all(y == [n * (n + 1) / 2, n * (n + 1)]), 'MPI_IN_PLACE Allreduce with a Fortran op')
  call MPI_Op_free(op_add, ierr)
  call check(op_add == MPI_OP_NULL, 'MPI_Op_free')

  call MPI_Op_create(f_concat, .false., op_cat, ierr)
  call MPI_Op_commutative(op_cat, commute, ierr)
  call check(.not. commute, 'non-commutative op')
  x(1) = rank + 1
  y(1) = -1
  call MPI_Reduce(x, y, 1, MPI_INTEGER, op_cat, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) call check(y(1) == digits_to(n), 'Reduce with a non-commutative Fortran op keeps rank order')
  call MPI_Scan(x, y, 1, MPI_INTEGER, op_cat, MPI_COMM_WORLD, ierr)
  call check(y(1) == digits_to(rank + 1), 'Scan with a non-commutative Fortran op')
  call MPI_Op_free(op_cat, ierr)

  call predefined_ops()

  call MPI_Finalize(ierr)
  if (rank == 0) print '(a)', 'f_coll: ok'

contains

  include 'frt_check.h'
  include 'f_coll_predef.h'
  include 'f_coll_concat.h'
end program f_coll
