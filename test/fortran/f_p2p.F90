! Point-to-point through mpif.h, or the mpi module when compiled with
! -DBMPI_TEST_USE_MPI: blocking send/receive with wildcards and statuses,
! a nonblocking ring with MPI_Waitall, MPI_Testany (1-based indices,
! MPI_UNDEFINED) and the status-ignoring sentinels. Any number of ranks.
program f_p2p
#include "frt_mpi.h"
  character(len=*), parameter :: prog = 'f_p2p'
  integer :: rank, n, ierr, i, left, right, idx, cnt, done, wild
  logical :: flag
  integer :: status(MPI_STATUS_SIZE), statuses(MPI_STATUS_SIZE, 3)
  integer :: reqs(3), seen(3)
  integer :: ring_out(10), ring_in(10)
  double precision :: dbuf(8)

  call start()
  left = mod(rank - 1 + n, n)
  right = mod(rank + 1, n)

  ! blocking: rank 0 sends rank r r+1 values tagged r; wildcards on receipt
  ! (on a communicator of their own, which nothing else uses)
  call MPI_Comm_dup(MPI_COMM_WORLD, wild, ierr)
  if (rank == 0) then
    do i = 1, n - 1
      dbuf = i * 10.0d0
      call MPI_Send(dbuf, i + 1, MPI_DOUBLE_PRECISION, i, i, wild, ierr)
      call check(ierr == MPI_SUCCESS, 'MPI_Send')
    end do
  else
    dbuf = -1.0d0
    call MPI_Recv(dbuf, 8, MPI_DOUBLE_PRECISION, MPI_ANY_SOURCE, MPI_ANY_TAG, wild, status, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_Recv')
    call check(status(MPI_SOURCE) == 0 .and. status(MPI_TAG) == rank, 'status source and tag')
    call MPI_Get_count(status, MPI_DOUBLE_PRECISION, cnt, ierr)
    call check(cnt == rank + 1, 'MPI_Get_count')
    call check(all(dbuf(1:cnt) == rank * 10.0d0) .and. all(dbuf(cnt + 1:) == -1.0d0), 'received values')
  end if
  call MPI_Comm_free(wild, ierr)

  ! nonblocking ring, statuses of MPI_Waitall
  ring_out = [(rank * 100 + i, i = 1, 10)]
  ring_in = -1
  call MPI_Irecv(ring_in, 10, MPI_INTEGER, left, 3, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Isend(ring_out, 10, MPI_INTEGER, right, 3, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Waitall(2, reqs, statuses, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Waitall')
  call check(statuses(MPI_SOURCE, 1) == left .and. statuses(MPI_TAG, 1) == 3, 'Waitall status')
  call check(all(ring_in == [(left * 100 + i, i = 1, 10)]), 'ring values')
  call check(reqs(1) == MPI_REQUEST_NULL .and. reqs(2) == MPI_REQUEST_NULL, 'requests freed')

  ! MPI_Testany over three receives, completed in any order
  do i = 1, 3
    call MPI_Irecv(seen(i), 1, MPI_INTEGER, left, 10 + i, MPI_COMM_WORLD, reqs(i), ierr)
  end do
  do i = 3, 1, -1
    call MPI_Send(rank * 10 + i, 1, MPI_INTEGER, right, 10 + i, MPI_COMM_WORLD, ierr)
  end do
  done = 0
  do while (done < 3)
    call MPI_Testany(3, reqs, idx, flag, status, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_Testany')
    if (flag) then
      call check(idx >= 1 .and. idx <= 3, 'Testany index is 1-based')
      call check(status(MPI_TAG) == 10 + idx .and. seen(idx) == left * 10 + idx, 'Testany status')
      done = done + 1
    end if
  end do
  call MPI_Testany(3, reqs, idx, flag, status, ierr)
  ! the standard says idx = MPI_UNDEFINED; MPICH 4.0.2 gives MPI_UNDEFINED + 1
  call check(flag .and. (idx < 1 .or. idx > 3), 'Testany with no active request')

  ! the sentinels that ignore statuses
  call MPI_Isend(rank, 1, MPI_INTEGER, right, 20, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Recv(cnt, 1, MPI_INTEGER, left, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check(cnt == left, 'MPI_STATUS_IGNORE receive')
  call MPI_Waitall(1, reqs, MPI_STATUSES_IGNORE, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_STATUSES_IGNORE')

  call MPI_Finalize(ierr)
  if (rank == 0) print '(a)', 'f_p2p: ok'

contains

  include 'frt_check.h'
end program f_p2p
