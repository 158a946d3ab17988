! The helpers of the test programs of frt.mk, included in the CONTAINS
! part of a program with its name in the character parameter prog and the
! integers rank and n.

  ! MPI_Init; rank and n in MPI_COMM_WORLD; errors returned, as C's tests do
  subroutine start()
    integer :: e
    call MPI_Init(e)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, e)
    call MPI_Comm_size(MPI_COMM_WORLD, n, e)
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, e)
    call MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN, e)
  end subroutine start

  ! the test fails on this rank, and the job with it, if cond is false
  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    integer :: e
    if (.not. cond) then
      print '(3a,i0,2a)', 'FAIL ', prog, ': rank ', rank, ': ', what
      call MPI_Abort(MPI_COMM_WORLD, 1, e)
    end if
  end subroutine check
