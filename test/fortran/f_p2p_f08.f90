! Point-to-point through the mpi_f08 module: the same checks as f_p2p.F90
! with TYPE(MPI_Comm), TYPE(MPI_Request), TYPE(MPI_Status), ierror left
! out, and array sections as buffers. Any number of ranks.
program f_p2p_f08
  use mpi_f08
  implicit none
  character(len=*), parameter :: prog = 'f_p2p_f08'
  integer :: rank, n, ierr, i, left, right, idx, cnt, done
  type(MPI_Comm) :: wild
  type(MPI_Status) :: status, statuses(3)
  type(MPI_Request) :: reqs(3)
  integer :: seen(3), indices(3), ring_out(10), ring_in(10), every(20)
  double precision :: dbuf(8)

  call start()
  left = mod(rank - 1 + n, n)
  right = mod(rank + 1, n)

  ! blocking, wildcards on a communicator nothing else uses: MPI_Probe says
  ! who sent how much, then a receive of exactly that
  call MPI_Comm_dup(MPI_COMM_WORLD, wild)
  if (rank == 0) then
    do i = n - 1, 1, -1
      dbuf = i * 10.0d0
      call MPI_Send(dbuf, i + 1, MPI_DOUBLE_PRECISION, i, i, wild, ierr)
      call check(ierr == MPI_SUCCESS, 'MPI_Send')
    end do
  else
    call MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, wild, status, ierr)
    call check(ierr == MPI_SUCCESS .and. status%MPI_SOURCE == 0 .and. status%MPI_TAG == rank, 'MPI_Probe status')
    call MPI_Get_count(status, MPI_DOUBLE_PRECISION, cnt)
    call check(cnt == rank + 1, 'MPI_Get_count')
    dbuf = -1.0d0
    call MPI_Recv(dbuf, cnt, MPI_DOUBLE_PRECISION, status%MPI_SOURCE, status%MPI_TAG, wild, status)
    call check(all(dbuf(1:cnt) == rank * 10.0d0) .and. all(dbuf(cnt + 1:) == -1.0d0), 'received values')
  end if
  call MPI_Comm_free(wild)
  call check(wild == MPI_COMM_NULL, 'MPI_Comm_free sets MPI_COMM_NULL')

  ! nonblocking ring, statuses of MPI_Waitall
  ring_out = [(rank * 100 + i, i = 1, 10)]
  ring_in = -1
  call MPI_Irecv(ring_in, 10, MPI_INTEGER, left, 3, MPI_COMM_WORLD, reqs(1))
  call MPI_Isend(ring_out, 10, MPI_INTEGER, right, 3, MPI_COMM_WORLD, reqs(2))
  call MPI_Waitall(2, reqs(1:2), statuses(1:2), ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Waitall')
  call check(statuses(1)%MPI_SOURCE == left .and. statuses(1)%MPI_TAG == 3, 'Waitall status')
  call check(all(ring_in == [(left * 100 + i, i = 1, 10)]), 'ring values')
  call check(reqs(1) == MPI_REQUEST_NULL .and. reqs(2) == MPI_REQUEST_NULL, 'requests freed')

  ! MPI_Testsome over three receives. MPICH 4.0.2's mpi_f08 gives 0-based
  ! indices from MPI_Testsome/Testany/Waitany, so their indices are checked
  ! through mpif.h and the mpi module only (f_p2p.F90), the statuses here.
  do i = 1, 3
    call MPI_Irecv(seen(i), 1, MPI_INTEGER, left, 10 + i, MPI_COMM_WORLD, reqs(i))
  end do
  do i = 3, 1, -1
    call MPI_Send(rank * 10 + i, 1, MPI_INTEGER, right, 10 + i, MPI_COMM_WORLD)
  end do
  done = 0
  do while (done < 3)
    call MPI_Testsome(3, reqs, cnt, indices, statuses, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_Testsome')
    do i = 1, cnt
      idx = statuses(i)%MPI_TAG - 10
      call check(idx >= 1 .and. idx <= 3 .and. statuses(i)%MPI_SOURCE == left, 'Testsome status')
      call check(seen(idx) == left * 10 + idx, 'Testsome value')
    end do
    done = done + cnt
  end do
  call MPI_Testsome(3, reqs, cnt, indices, statuses)
  call check(cnt == MPI_UNDEFINED, 'Testsome with no active request')

  ! array sections as buffers: every other element out, into the odd ones
  every = [(rank * 100 + i, i = 1, 20)]
  call MPI_Sendrecv(every(2:20:2), 10, MPI_INTEGER, right, 30, ring_in, 10, MPI_INTEGER, left, 30, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check(ierr == MPI_SUCCESS .and. all(ring_in == [(left * 100 + 2 * i, i = 1, 10)]), 'section sent')
  call MPI_Sendrecv(ring_out, 10, MPI_INTEGER, right, 31, every(1:19:2), 10, MPI_INTEGER, left, 31, &
                    MPI_COMM_WORLD, status, ierr)
  call check(all(every(1:19:2) == [(left * 100 + i, i = 1, 10)]), 'section received')
  call check(all(every(2:20:2) == [(rank * 100 + 2 * i, i = 1, 10)]), 'section received in place')

  ! the sentinels that ignore statuses
  call MPI_Isend(rank, 1, MPI_INTEGER, right, 20, MPI_COMM_WORLD, reqs(1))
  call MPI_Recv(cnt, 1, MPI_INTEGER, left, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  call check(cnt == left, 'MPI_STATUS_IGNORE receive')
  call MPI_Waitall(1, reqs, MPI_STATUSES_IGNORE, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_STATUSES_IGNORE')

  call MPI_Finalize()
  if (rank == 0) print '(a)', 'f_p2p_f08: ok'

contains

  include 'frt_check.h'
end program f_p2p_f08
