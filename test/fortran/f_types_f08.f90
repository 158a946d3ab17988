! Derived datatypes and array sections through the mpi_f08 module: the
! vector, subarray and struct of f_types.F90 with TYPE(MPI_Datatype), then
! non-contiguous sections as buffers (a matrix row, a reversed section, a
! section received into, and nonblocking ones when
! MPI_SUBARRAYS_SUPPORTED). Any number of ranks.
program f_types_f08
  use, intrinsic :: iso_c_binding, only: c_int, c_double
  use mpi_f08
  implicit none
  character(len=*), parameter :: prog = 'f_types_f08'
  type, bind(C) :: particle
    integer(c_int) :: id
    real(c_double) :: x(3)
  end type particle
  integer :: rank, n, ierr, i, j, left, right, tsize
  type(MPI_Datatype) :: rowt, partt, structt, subt
  type(MPI_Request) :: reqs(2)
  integer :: row_in(5), blocks(2), sub_in(6), a(6, 6)
  integer, asynchronous :: m(4, 5), mm(4, 5)
  integer(kind=MPI_ADDRESS_KIND) :: base, addr_x, addr_next, displs(2)
  type(particle) :: p(3), q(3)

  call start()
  left = mod(rank - 1 + n, n)
  right = mod(rank + 1, n)

  m = reshape([(rank * 100 + i, i = 1, 20)], [4, 5])
  call MPI_Type_vector(5, 1, 4, MPI_INTEGER, rowt)
  call MPI_Type_commit(rowt)
  call MPI_Type_size(rowt, tsize)
  call check(tsize == 20, 'size of the row type')
  call MPI_Sendrecv(m, 1, rowt, right, 1, row_in, 5, MPI_INTEGER, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check(ierr == MPI_SUCCESS .and. all(row_in == [(left * 100 + 1 + 4 * j, j = 0, 4)]), 'vector sent')
  call MPI_Type_free(rowt)
  call check(rowt == MPI_DATATYPE_NULL, 'MPI_Type_free')

  a = reshape([(rank * 100 + i, i = 1, 36)], [6, 6])
  call MPI_Type_create_subarray(2, [6, 6], [2, 3], [1, 2], MPI_ORDER_FORTRAN, MPI_INTEGER, subt)
  call MPI_Type_commit(subt)
  call MPI_Sendrecv(a, 1, subt, right, 3, sub_in, 6, MPI_INTEGER, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  call check(all(sub_in == [((left * 100 + 6 * (j - 1) + i, i = 2, 3), j = 3, 5)]), 'subarray')
  call MPI_Type_free(subt)

  call MPI_Get_address(p(1)%id, base)
  call MPI_Get_address(p(1)%x, addr_x)
  call MPI_Get_address(p(2), addr_next)
  blocks = [1, 3]
  displs = [0_MPI_ADDRESS_KIND, MPI_Aint_diff(addr_x, base)]
  call MPI_Type_create_struct(2, blocks, displs, [MPI_INTEGER, MPI_DOUBLE_PRECISION], partt)
  call MPI_Type_create_resized(partt, 0_MPI_ADDRESS_KIND, MPI_Aint_diff(addr_next, base), structt)
  call MPI_Type_commit(structt)
  do i = 1, 3
    p(i)%id = rank * 10 + i
    p(i)%x = [(dble(rank) + 0.5d0 * j * i, j = 1, 3)]
  end do
  q = particle(-1, -1.0d0)
  call MPI_Sendrecv(p, 3, structt, right, 4, q, 3, structt, left, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  do i = 1, 3
    call check(q(i)%id == left * 10 + i .and. all(q(i)%x == [(dble(left) + 0.5d0 * j * i, j = 1, 3)]), &
               'struct with MPI_Get_address')
  end do
  call MPI_Type_free(partt)
  call MPI_Type_free(structt)

  ! sections: row 2 of m (stride 4), then a reversed row. (Not a 2-D
  ! section: MPICH 4.0.2 sends the wrong elements of m(1:3:2, 2:4) to
  ! another process; test/unit/check_cdesc covers those.)
  call MPI_Sendrecv(m(2, :), 5, MPI_INTEGER, right, 5, row_in, 5, MPI_INTEGER, left, 5, MPI_COMM_WORLD, &
                    MPI_STATUS_IGNORE, ierr)
  call check(ierr == MPI_SUCCESS .and. all(row_in == [(left * 100 + 2 + 4 * j, j = 0, 4)]), 'row section sent')
  call MPI_Sendrecv(m(4, 5:1:-1), 5, MPI_INTEGER, right, 7, row_in, 5, MPI_INTEGER, left, 7, MPI_COMM_WORLD, &
                    MPI_STATUS_IGNORE)
  call check(all(row_in == [(left * 100 + 4 + 4 * j, j = 4, 0, -1)]), 'reversed section sent')
  mm = -1
  call MPI_Sendrecv(m(3, :), 5, MPI_INTEGER, right, 8, mm(2, :), 5, MPI_INTEGER, left, 8, MPI_COMM_WORLD, &
                    MPI_STATUS_IGNORE)
  call check(all(mm(2, :) == [(left * 100 + 3 + 4 * j, j = 0, 4)]) .and. all(mm(1, :) == -1) .and. &
             all(mm(3:4, :) == -1), 'section received into')

  if (MPI_SUBARRAYS_SUPPORTED) then
    mm = -1
    call MPI_Irecv(mm(1, :), 5, MPI_INTEGER, left, 9, MPI_COMM_WORLD, reqs(1))
    call MPI_Isend(m(4, :), 5, MPI_INTEGER, right, 9, MPI_COMM_WORLD, reqs(2))
    call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
    if (MPI_ASYNC_PROTECTS_NONBLOCKING) then
      call check(all(mm(1, :) == [(left * 100 + 4 + 4 * j, j = 0, 4)]), 'nonblocking sections')
    else
      call MPI_F_sync_reg(mm)
      call check(all(mm(1, :) == [(left * 100 + 4 + 4 * j, j = 0, 4)]), 'nonblocking sections')
    end if
    call check(all(mm(2:, :) == -1), 'nonblocking section received in place')
  end if

  call MPI_Finalize()
  if (rank == 0) print '(a)', 'f_types_f08: ok'

contains

  include 'frt_check.h'
end program f_types_f08
