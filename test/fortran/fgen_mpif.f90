! mpif.h in fixed form (compiled with -ffixed-form): the basics of the
! generated bindings at any number of ranks. Prints "ok" when all hold.
      program fgen_mpif
      implicit none
      include 'mpif.h'
      integer ierr, rank, size, next, prev, val, got, cnt, cls
      integer status(MPI_STATUS_SIZE), reqs(2), sum, rlen, nerr
      integer arr(4)
      integer(kind=MPI_ADDRESS_KIND) a1, a3
      logical flag
      character*(MPI_MAX_PROCESSOR_NAME) pname
      character*(MPI_MAX_OBJECT_NAME) cname
      nerr = 0
      call MPI_INITIALIZED(flag, ierr)
      if (flag) call fail('initialized before MPI_Init', nerr)
      call MPI_INIT(ierr)
      call MPI_INITIALIZED(flag, ierr)
      if (.not. flag) call fail('not initialized', nerr)
      call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
      call MPI_COMM_SIZE(MPI_COMM_WORLD, size, ierr)
      next = mod(rank + 1, size)
      prev = mod(rank + size - 1, size)
!     send/recv around the ring, with the status checked
      val = 1000 + rank
      call MPI_SENDRECV(val, 1, MPI_INTEGER, next, 7, got, 1,
     &     MPI_INTEGER, prev, 7, MPI_COMM_WORLD, status, ierr)
      if (got .ne. 1000 + prev) call fail('sendrecv value', nerr)
      if (status(MPI_SOURCE) .ne. prev) call fail('source', nerr)
      if (status(MPI_TAG) .ne. 7) call fail('tag', nerr)
      call MPI_GET_COUNT(status, MPI_INTEGER, cnt, ierr)
      if (cnt .ne. 1) call fail('get_count', nerr)
!     nonblocking, completed with MPI_STATUSES_IGNORE
      call MPI_IRECV(got, 1, MPI_INTEGER, prev, 8, MPI_COMM_WORLD,
     &     reqs(1), ierr)
      call MPI_ISEND(val, 1, MPI_INTEGER, next, 8, MPI_COMM_WORLD,
     &     reqs(2), ierr)
      call MPI_WAITALL(2, reqs, MPI_STATUSES_IGNORE, ierr)
      if (ierr .ne. MPI_SUCCESS) call fail('waitall', nerr)
      if (got .ne. 1000 + prev) call fail('irecv value', nerr)
      if (reqs(1) .ne. MPI_REQUEST_NULL) call fail('request', nerr)
!     MPI_Iprobe's LOGICAL flag: nothing is pending on tag 9
      call MPI_IPROBE(MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, flag,
     &     MPI_STATUS_IGNORE, ierr)
      if (flag) call fail('iprobe found a message', nerr)
      call MPI_SEND(val, 1, MPI_INTEGER, 0, 9, MPI_COMM_SELF, ierr)
      flag = .false.
      do while (.not. flag)
         call MPI_IPROBE(MPI_ANY_SOURCE, 9, MPI_COMM_SELF, flag,
     &        status, ierr)
      end do
      call MPI_RECV(got, 1, MPI_INTEGER, 0, 9, MPI_COMM_SELF,
     &     MPI_STATUS_IGNORE, ierr)
      if (got .ne. val) call fail('self message', nerr)
!     allreduce in place
      sum = rank
      call MPI_ALLREDUCE(MPI_IN_PLACE, sum, 1, MPI_INTEGER, MPI_SUM,
     &     MPI_COMM_WORLD, ierr)
      if (sum .ne. size * (size - 1) / 2) call fail('allreduce', nerr)
!     addresses, and the functions MPI_AINT_DIFF / MPI_AINT_ADD / MPI_WTIME
      call MPI_F_SYNC_REG(arr)
!     MPI_PCONTROL has no IERROR in Fortran
      call MPI_PCONTROL(1)
      call MPI_GET_ADDRESS(arr(1), a1, ierr)
      call MPI_GET_ADDRESS(arr(3), a3, ierr)
      if (MPI_AINT_DIFF(a3, a1) .ne. 8) call fail('aint_diff', nerr)
      if (MPI_AINT_ADD(a1, 8_MPI_ADDRESS_KIND) .ne. a3)
     &     call fail('aint_add', nerr)
      if (MPI_WTIME() .le. 0d0) call fail('wtime', nerr)
!     strings: names trimmed on the way in, blank-padded on the way out
      call MPI_GET_PROCESSOR_NAME(pname, rlen, ierr)
      if (rlen .le. 0 .or. len_trim(pname) .ne. rlen)
     &     call fail('processor name', nerr)
      call MPI_COMM_SET_NAME(MPI_COMM_WORLD, '  fgen world  ', ierr)
      cname = 'x'
      call MPI_COMM_GET_NAME(MPI_COMM_WORLD, cname, rlen, ierr)
      if (cname .ne. 'fgen world' .or. rlen .ne. 10)
     &     call fail('comm name', nerr)
      if (cname(11:) .ne. ' ') call fail('name padding', nerr)
!     a stub answers MPI_ERR_UNSUPPORTED_OPERATION, a bad handle as in C
      call MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_RETURN,
     &     ierr)
      call MPI_COMM_SET_ERRHANDLER(MPI_COMM_SELF, MPI_ERRORS_RETURN,
     &     ierr)
      call MPI_PREADY(0, MPI_REQUEST_NULL, ierr)
      call MPI_ERROR_CLASS(ierr, cls, ierr)
      if (cls .ne. MPI_ERR_UNSUPPORTED_OPERATION)
     &     call fail('stub', nerr)
      call MPI_COMM_SIZE(MPI_COMM_NULL, cnt, ierr)
      call MPI_ERROR_CLASS(ierr, cls, ierr)
      if (cls .ne. MPI_ERR_COMM) call fail('bad comm', nerr)
      call MPI_SEND(val, 1, MPI_DATATYPE_NULL, 0, 1, MPI_COMM_SELF,
     &     ierr)
      call MPI_ERROR_CLASS(ierr, cls, ierr)
      if (cls .ne. MPI_ERR_TYPE) call fail('bad datatype', nerr)
      call MPI_FINALIZE(ierr)
      if (nerr .ne. 0) stop 1
      if (rank .eq. 0) print '(a)', 'ok'
      end

      subroutine fail(what, nerr)
      character*(*) what
      integer nerr
      print '(2a)', 'FAIL: ', what
      nerr = nerr + 1
      end
