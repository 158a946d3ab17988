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

! associative, not commutative: decimal concatenation (12 op 3 = 123)
subroutine f_concat(invec, inoutvec, len, datatype)
  implicit none
  integer :: len, datatype
  integer :: invec(len), inoutvec(len)
  integer :: i, shift
  do i = 1, len
    shift = 1
    do while (shift <= inoutvec(i))
      shift = shift * 10
    end do
    inoutvec(i) = invec(i) * shift + inoutvec(i)
  end do
end subroutine f_concat

program f_coll
  use, intrinsic :: iso_fortran_env, only: int8, int16, int64, real32, real64
#include "frt_mpi.h"
  character(len=*), parameter :: prog = 'f_coll'
  external :: f_add, f_concat
  integer :: rank, n, ierr, i, want, op_add, op_cat
  integer :: ibuf(5), x(2), y(2), all_ranks(64)
  logical :: commute, l, lres
  real :: r2(2), r2out(2)
  double precision :: d2(2), d2out(2), dsum
  integer :: i2(2), i2out(2)
  complex :: c, cres
  double complex :: z, zres
  integer(int8) :: b1, b1res
  integer(int16) :: h2, h2res
  integer(int64) :: q8, q8res
  real(real32) :: f4, f4res
  real(real64) :: f8, f8res

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
  want = 0
  do i = 1, n
    want = want * 10 + i
  end do
  x(1) = rank + 1
  y(1) = -1
  call MPI_Reduce(x, y, 1, MPI_INTEGER, op_cat, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) call check(y(1) == want, 'Reduce with a non-commutative Fortran op keeps rank order')
  call MPI_Scan(x, y, 1, MPI_INTEGER, op_cat, MPI_COMM_WORLD, ierr)
  want = 0
  do i = 1, rank + 1
    want = want * 10 + i
  end do
  call check(y(1) == want, 'Scan with a non-commutative Fortran op')
  call MPI_Op_free(op_cat, ierr)

  ! MAXLOC/MINLOC on the pair types; ties go to the lower index
  r2 = [real(rank / 2), real(rank)]
  call MPI_Allreduce(r2, r2out, 1, MPI_2REAL, MPI_MAXLOC, MPI_COMM_WORLD, ierr)
  call check(r2out(1) == real((n - 1) / 2) .and. r2out(2) == real(2 * ((n - 1) / 2)), 'MAXLOC on MPI_2REAL')
  d2 = [dble(n - rank), dble(rank)]
  call MPI_Allreduce(d2, d2out, 1, MPI_2DOUBLE_PRECISION, MPI_MINLOC, MPI_COMM_WORLD, ierr)
  call check(d2out(1) == 1.0d0 .and. d2out(2) == dble(n - 1), 'MINLOC on MPI_2DOUBLE_PRECISION')
  i2 = [mod(rank, 2), rank]
  call MPI_Allreduce(i2, i2out, 1, MPI_2INTEGER, MPI_MAXLOC, MPI_COMM_WORLD, ierr)
  call check(i2out(1) == min(1, n - 1) .and. i2out(2) == min(1, n - 1), 'MAXLOC on MPI_2INTEGER')

  ! LOGICAL
  l = rank == 0
  call MPI_Allreduce(l, lres, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
  call check(lres .eqv. (n == 1), 'MPI_LAND on MPI_LOGICAL')
  call MPI_Allreduce(l, lres, 1, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD, ierr)
  call check(lres, 'MPI_LOR on MPI_LOGICAL')

  ! complex sums
  c = cmplx(real(rank), 1.0)
  call MPI_Allreduce(c, cres, 1, MPI_COMPLEX, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(cres == cmplx(real(n * (n - 1) / 2), real(n)), 'MPI_SUM on MPI_COMPLEX')
  z = dcmplx(dble(rank), -dble(rank))
  call MPI_Allreduce(z, zres, 1, MPI_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(zres == dcmplx(dble(n * (n - 1) / 2), -dble(n * (n - 1) / 2)), 'MPI_SUM on MPI_DOUBLE_COMPLEX')

  ! sized types
  b1 = int(rank + 1, int8)
  call MPI_Allreduce(b1, b1res, 1, MPI_INTEGER1, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(b1res == int(n * (n + 1) / 2, int8), 'MPI_SUM on MPI_INTEGER1')
  h2 = int(1000 * rank, int16)
  call MPI_Allreduce(h2, h2res, 1, MPI_INTEGER2, MPI_MAX, MPI_COMM_WORLD, ierr)
  call check(h2res == int(1000 * (n - 1), int16), 'MPI_MAX on MPI_INTEGER2')
  q8 = 2_int64**40 + rank
  call MPI_Allreduce(q8, q8res, 1, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(q8res == n * 2_int64**40 + n * (n - 1) / 2, 'MPI_SUM on MPI_INTEGER8')
  f4 = 0.5_real32 * rank
  call MPI_Allreduce(f4, f4res, 1, MPI_REAL4, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(f4res == 0.25_real32 * n * (n - 1), 'MPI_SUM on MPI_REAL4')
  f8 = -0.25_real64 * rank
  call MPI_Allreduce(f8, f8res, 1, MPI_REAL8, MPI_MIN, MPI_COMM_WORLD, ierr)
  call check(f8res == -0.25_real64 * (n - 1), 'MPI_MIN on MPI_REAL8')

  call MPI_Finalize(ierr)
  if (rank == 0) print '(a)', 'f_coll: ok'

contains

  include 'frt_check.h'
end program f_coll
