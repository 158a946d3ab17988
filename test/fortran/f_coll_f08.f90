! Collectives and reductions through the mpi_f08 module: the checks of
! f_coll.F90 with user ops of the MPI_User_function interface (TYPE(C_PTR)
! buffers), TYPE(MPI_Op) and ierror left out. (Array sections are sent in
! f_p2p_f08 and f_types_f08: MPICH 4.0.2 reduces a strided section as if
! it were contiguous.) Any number of ranks.
module f_coll_f08_ops
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  use mpi_f08
  implicit none
contains
  ! x + y on MPI_INTEGER, checking the datatype the library passes
  subroutine f_add(invec, inoutvec, len, datatype)
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: a(:), b(:)
    if (datatype /= MPI_INTEGER) call MPI_Abort(MPI_COMM_WORLD, 2)
    call c_f_pointer(invec, a, [len])
    call c_f_pointer(inoutvec, b, [len])
    b = a + b
  end subroutine f_add

  ! associative, not commutative: decimal concatenation
  subroutine f_concat(invec, inoutvec, len, datatype)
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: a(:), b(:)
    call c_f_pointer(invec, a, [len])
    call c_f_pointer(inoutvec, b, [len])
    b = concat(a, b)
  end subroutine f_concat

  include 'f_coll_concat.h'
end module f_coll_f08_ops

program f_coll_f08
  use mpi_f08
  use f_coll_f08_ops
  implicit none
  character(len=*), parameter :: prog = 'f_coll_f08'
  integer :: rank, n, ierr, i
  type(MPI_Op) :: op_add, op_cat
  integer :: ibuf(5), x(2), y(2)
  logical :: commute

  call start()

  ibuf = 0
  if (rank == 0) ibuf = [(i * i, i = 1, 5)]
  call MPI_Bcast(ibuf, 5, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_SUCCESS .and. all(ibuf == [(i * i, i = 1, 5)]), 'MPI_Bcast')

  call MPI_Op_create(f_add, .true., op_add, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Op_create')
  call MPI_Op_commutative(op_add, commute)
  call check(commute, 'commutative op')
  x = [rank + 1, 2 * (rank + 1)]
  call MPI_Allreduce(x, y, 2, MPI_INTEGER, op_add, MPI_COMM_WORLD)
  call check(all(y == [n * (n + 1) / 2, n * (n + 1)]), 'Allreduce with a Fortran op')
  y = x
  call MPI_Allreduce(MPI_IN_PLACE, y, 2, MPI_INTEGER, op_add, MPI_COMM_WORLD)
  call check(all(y == [n * (n + 1) / 2, n * (n + 1)]), 'MPI_IN_PLACE Allreduce with a Fortran op')
  call MPI_Op_free(op_add)
  call check(op_add == MPI_OP_NULL, 'MPI_Op_free')

  call MPI_Op_create(f_concat, .false., op_cat)
  call MPI_Op_commutative(op_cat, commute)
  call check(.not. commute, 'non-commutative op')
  ! the root last, and MPI_Exscan (f_coll.F90 has root 0 and MPI_Scan)
  x(1) = rank + 1
  y(1) = -1
  call MPI_Reduce(x, y, 1, MPI_INTEGER, op_cat, n - 1, MPI_COMM_WORLD)
  if (rank == n - 1) call check(y(1) == digits_to(n), 'Reduce with a non-commutative Fortran op keeps rank order')
  call MPI_Exscan(x, y, 1, MPI_INTEGER, op_cat, MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_SUCCESS .and. (rank == 0 .or. y(1) == digits_to(rank)), &
             'Exscan with a non-commutative Fortran op')
  call MPI_Op_free(op_cat)

  call predefined_ops()

  call MPI_Finalize()
  if (rank == 0) print '(a)', 'f_coll_f08: ok'

contains

  include 'frt_check.h'
  include 'f_coll_predef.h'
end program f_coll_f08
