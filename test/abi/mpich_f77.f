! A fixed-form program with mpif.h, compiled and linked with MPICH's
! mpifort (test/abi/mpich_fort.sh), that runs on bmpi through
! libmpichfort.so.12. Rank 0 prints the library's version line, every
! rank "ok: rank R of N".
      program mpichf77
      implicit none
      include 'mpif.h'
      integer ierr, rank, nranks, right, left, n, total
      integer inbuf(2), outbuf(2), st(MPI_STATUS_SIZE)
      character*(MPI_MAX_LIBRARY_VERSION_STRING) version
      call MPI_INIT(ierr)
      call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
      call MPI_COMM_SIZE(MPI_COMM_WORLD, nranks, ierr)
      call MPI_GET_LIBRARY_VERSION(version, n, ierr)
      if (rank .eq. 0) write (*, '(A,A)') 'library: ',
     &    version(1:index(version(1:n) // char(10), char(10)) - 1)
      right = mod(rank + 1, nranks)
      left = mod(rank + nranks - 1, nranks)
      outbuf(1) = rank
      outbuf(2) = 7 * rank
      call MPI_SENDRECV(outbuf, 2, MPI_INTEGER, right, 5, inbuf, 2,
     &    MPI_INTEGER, left, 5, MPI_COMM_WORLD, st, ierr)
      call MPI_GET_COUNT(st, MPI_INTEGER, n, ierr)
      if (inbuf(2) .ne. 7 * left .or. st(MPI_SOURCE) .ne. left .or.
     &    st(MPI_TAG) .ne. 5 .or. n .ne. 2) then
        write (*, *) 'FAIL: sendrecv', inbuf, st(MPI_SOURCE), n
        call MPI_ABORT(MPI_COMM_WORLD, 1, ierr)
      end if
      call MPI_ALLREDUCE(rank, total, 1, MPI_INTEGER, MPI_SUM,
     &    MPI_COMM_WORLD, ierr)
      if (total .ne. nranks * (nranks - 1) / 2) then
        write (*, *) 'FAIL: allreduce', total
        call MPI_ABORT(MPI_COMM_WORLD, 1, ierr)
      end if
      write (*, '(A,I0,A,I0)') 'ok: rank ', rank, ' of ', nranks
      call MPI_FINALIZE(ierr)
      end
