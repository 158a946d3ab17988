! Derived datatypes through mpif.h, or the mpi module when compiled with
! -DBMPI_TEST_USE_MPI: a vector (a matrix row), a subarray, a struct built
! with MPI_Get_address and resized to the array stride, and the types of
! MPI_Type_create_f90_real/integer/complex in a ring and a reduction.
! Any number of ranks.
program f_types
  use, intrinsic :: iso_c_binding, only: c_int, c_double
#include "frt_mpi.h"
  character(len=*), parameter :: prog = 'f_types'
  type, bind(C) :: particle
    integer(c_int) :: id
    real(c_double) :: x(3)
  end type particle
  integer, parameter :: dp = selected_real_kind(15, 300), i18 = selected_int_kind(18)
  integer :: rank, n, ierr, i, j, left, right, tsize
  integer :: rowt, subt, partt, structt, tdp, tsp, ti9, ti18, tz
  integer :: m(4, 5), row_in(5), a(6, 6), sub_in(6), blocks(2), types(2)
  integer(kind=MPI_ADDRESS_KIND) :: base, addr_x, addr_next, displs(2), lb, extent
  type(particle) :: p(3), q(3)
  real(dp) :: v, vsum
  integer(i18) :: k, ksum
  complex(dp) :: z, zin

  call start()
  left = mod(rank - 1 + n, n)
  right = mod(rank + 1, n)

  ! row 2 of a 4 x 5 matrix: 5 integers 4 apart
  m = reshape([(rank * 100 + i, i = 1, 20)], [4, 5])
  call MPI_Type_vector(5, 1, 4, MPI_INTEGER, rowt, ierr)
  call MPI_Type_commit(rowt, ierr)
  call MPI_Type_size(rowt, tsize, ierr)
  call check(tsize == 20, 'size of the row type')
  call MPI_Sendrecv(m(2, 1), 1, rowt, right, 1, row_in, 5, MPI_INTEGER, left, 1, MPI_COMM_WORLD, &
                    MPI_STATUS_IGNORE, ierr)
  call check(ierr == MPI_SUCCESS .and. all(row_in == [(left * 100 + 2 + 4 * j, j = 0, 4)]), 'vector sent')
  ! and into row 3
  call MPI_Sendrecv(row_in, 5, MPI_INTEGER, right, 2, m(3, 1), 1, rowt, left, 2, MPI_COMM_WORLD, &
                    MPI_STATUS_IGNORE, ierr)
  call check(all(m(3, :) == [(mod(left - 1 + n, n) * 100 + 2 + 4 * j, j = 0, 4)]), 'vector received')
  call check(all(m(2, :) == [(rank * 100 + 2 + 4 * j, j = 0, 4)]), 'rows around it untouched')
  call MPI_Type_free(rowt, ierr)
  call check(rowt == MPI_DATATYPE_NULL, 'MPI_Type_free')

  ! a(2:3, 3:5) as a subarray (0-based starts)
  a = reshape([(rank * 100 + i, i = 1, 36)], [6, 6])
  call MPI_Type_create_subarray(2, [6, 6], [2, 3], [1, 2], MPI_ORDER_FORTRAN, MPI_INTEGER, subt, ierr)
  call MPI_Type_commit(subt, ierr)
  call MPI_Type_get_extent(subt, lb, extent, ierr)
  call check(lb == 0 .and. extent == 36 * 4, 'subarray extent')
  call MPI_Sendrecv(a, 1, subt, right, 3, sub_in, 6, MPI_INTEGER, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check(all(sub_in == [((left * 100 + 6 * (j - 1) + i, i = 2, 3), j = 3, 5)]), 'subarray')
  call MPI_Type_free(subt, ierr)

  ! a struct of an integer and 3 doubles, resized to the array element
  call MPI_Get_address(p(1)%id, base, ierr)
  call MPI_Get_address(p(1)%x, addr_x, ierr)
  call MPI_Get_address(p(2), addr_next, ierr)
  blocks = [1, 3]
  displs = [0_MPI_ADDRESS_KIND, addr_x - base]
  types = [MPI_INTEGER, MPI_DOUBLE_PRECISION]
  call MPI_Type_create_struct(2, blocks, displs, types, partt, ierr)
  call MPI_Type_create_resized(partt, 0_MPI_ADDRESS_KIND, addr_next - base, structt, ierr)
  call MPI_Type_commit(structt, ierr)
  do i = 1, 3
    p(i)%id = rank * 10 + i
    p(i)%x = [(dble(rank) + 0.5d0 * j * i, j = 1, 3)]
    q(i)%id = -1
    q(i)%x = -1
  end do
  call MPI_Sendrecv(p, 3, structt, right, 4, q, 3, structt, left, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  do i = 1, 3
    call check(q(i)%id == left * 10 + i .and. all(q(i)%x == [(dble(left) + 0.5d0 * j * i, j = 1, 3)]), &
               'struct with MPI_Get_address')
  end do
  call MPI_Type_free(partt, ierr)
  call MPI_Type_free(structt, ierr)

  ! MPI_Type_create_f90_*
  call MPI_Type_create_f90_real(15, 300, tdp, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Type_create_f90_real')
  call MPI_Type_size(tdp, tsize, ierr)
  call check(tsize == 8, 'f90 real(15, 300) is 8 bytes')
  call MPI_Type_create_f90_real(6, MPI_UNDEFINED, tsp, ierr)
  call MPI_Type_size(tsp, tsize, ierr)
  call check(tsize == 4, 'f90 real(6) is 4 bytes')
  call MPI_Type_create_f90_integer(9, ti9, ierr)
  call MPI_Type_size(ti9, tsize, ierr)
  call check(tsize == 4, 'f90 integer(9) is 4 bytes')
  call MPI_Type_create_f90_integer(18, ti18, ierr)
  call MPI_Type_size(ti18, tsize, ierr)
  call check(tsize == 8, 'f90 integer(18) is 8 bytes')
  call MPI_Type_create_f90_complex(15, 300, tz, ierr)
  call MPI_Type_size(tz, tsize, ierr)
  call check(tsize == 16, 'f90 complex(15, 300) is 16 bytes')
  v = 0.5_dp * rank
  call MPI_Allreduce(v, vsum, 1, tdp, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_SUCCESS .and. vsum == 0.25_dp * n * (n - 1), 'MPI_SUM on an f90 real')
  k = 2_i18**40 * rank
  call MPI_Allreduce(k, ksum, 1, ti18, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(ksum == 2_i18**40 * (n * (n - 1) / 2), 'MPI_SUM on an f90 integer')
  z = cmplx(rank, -rank, dp)
  call MPI_Sendrecv(z, 1, tz, right, 5, zin, 1, tz, left, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check(zin == cmplx(left, -left, dp), 'f90 complex sent')

  call MPI_Finalize(ierr)
  if (rank == 0) print '(a)', 'f_types: ok'

contains

  include 'frt_check.h'
end program f_types
