! A fixed-form program with mpif.h, compiled and linked with MPICH's
! mpifort (test/abi/mpich_fort.sh), that runs on bmpi through
! libmpichfort.so.12, and the MPI-1 datatype routines MPI 3.0 removed,
! which give what MPICH 4.0.2 gives, MPI_LB in MPI_TYPE_STRUCT included.
! Rank 0 prints the library's version line, every rank "ok: rank R of N".
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
      call check(inbuf(2) .eq. 7 * left .and. st(MPI_SOURCE) .eq. left
     &    .and. st(MPI_TAG) .eq. 5 .and. n .eq. 2, 'sendrecv')
      call MPI_ALLREDUCE(rank, total, 1, MPI_INTEGER, MPI_SUM,
     &    MPI_COMM_WORLD, ierr)
      call check(total .eq. nranks * (nranks - 1) / 2, 'allreduce')
      call removed
      write (*, '(A,I0,A,I0)') 'ok: rank ', rank, ' of ', nranks
      call MPI_FINALIZE(ierr)
      end

      subroutine removed
      implicit none
      include 'mpif.h'
      integer ierr, ext, lb, ub, newt, isz
      integer blk(2), disp(2), types(2)
      call MPI_TYPE_EXTENT(MPI_DOUBLE_PRECISION, ext, ierr)
      call MPI_TYPE_LB(MPI_DOUBLE_PRECISION, lb, ierr)
      call MPI_TYPE_UB(MPI_DOUBLE_PRECISION, ub, ierr)
      call check(ext .eq. 8 .and. lb .eq. 0 .and. ub .eq. 8, 'bounds')
      blk(1) = 1
      blk(2) = 1
      disp(1) = -8
      disp(2) = 0
      types(1) = MPI_LB
      types(2) = MPI_INTEGER
      call MPI_TYPE_STRUCT(2, blk, disp, types, newt, ierr)
      call MPI_TYPE_EXTENT(newt, ext, ierr)
      call MPI_TYPE_LB(newt, lb, ierr)
      call MPI_TYPE_SIZE(newt, isz, ierr)
      call check(ext .eq. 12 .and. lb .eq. -8 .and. isz .eq. 4,
     &    'struct with MPI_LB')
      call MPI_TYPE_FREE(newt, ierr)
      call MPI_TYPE_HVECTOR(2, 1, 16, MPI_INTEGER, newt, ierr)
      call MPI_TYPE_EXTENT(newt, ext, ierr)
      call check(ext .eq. 20, 'hvector')
      call MPI_TYPE_FREE(newt, ierr)
      call MPI_TYPE_HINDEXED(2, blk, disp, MPI_INTEGER, newt, ierr)
      call MPI_TYPE_EXTENT(newt, ext, ierr)
      call MPI_TYPE_LB(newt, lb, ierr)
      call check(ext .eq. 12 .and. lb .eq. -8 .and. ierr .eq. 0,
     &    'hindexed')
      call MPI_TYPE_FREE(newt, ierr)
      end

      subroutine check(ok, what)
      implicit none
      include 'mpif.h'
      logical ok
      character*(*) what
      integer ierr
      if (.not. ok) then
        write (*, *) 'FAIL: ', what
        call MPI_ABORT(MPI_COMM_WORLD, 1, ierr)
      end if
      end
