! More than 2**31 elements of a 1-byte type through mpi_f08's large-count
! specifics (the INTEGER(KIND=MPI_COUNT_KIND) counts that select the MPI_X_c
! routines): MPI_Send/MPI_Recv with MPI_Get_count into a count kind, MPI_Bcast,
! and one element of a type built by MPI_Type_contiguous with a large count
! (its MPI_Type_size checked). Every byte is checked. At 2 ranks only (other
! sizes: a note, success), about 2 GiB per rank; if the memory is not there,
! a note and success, as test/mpi/large_count.c does.
program f08_large
    use mpi_f08
    implicit none
    integer(kind=MPI_COUNT_KIND), parameter :: n = 2147483647_MPI_COUNT_KIND + 4099
    integer(kind=1), allocatable :: buf(:)
    integer(kind=MPI_COUNT_KIND) :: got, tsize
    type(MPI_Status) :: status
    type(MPI_Datatype) :: big
    integer :: rank, nranks, peer, st

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nranks)
    if (nranks /= 2) then
        if (rank == 0) print '(a)', 'f08_large: needs 2 ranks; nothing to do'
        call MPI_Finalize()
        stop
    end if
    allocate(buf(n), stat=st)
    if (st /= 0) then
        print '(a)', 'f08_large: not enough memory for the buffer; nothing to do'
        call MPI_Abort(MPI_COMM_WORLD, 0)
    end if
    peer = 1 - rank

    ! p2p: rank 0 -> 1, with the received count as a count kind.
    if (rank == 0) then
        call fill(1)
        call MPI_Send(buf, n, MPI_INTEGER1, peer, 1, MPI_COMM_WORLD)
    else
        buf = 0
        call MPI_Recv(buf, n, MPI_INTEGER1, peer, 1, MPI_COMM_WORLD, status)
        call MPI_Get_count(status, MPI_INTEGER1, got)
        if (got /= n) call fail('MPI_Get_count after MPI_Recv', got)
        call verify(1, 'MPI_Send to rank 1')
    end if

    ! A collective: rank 1 broadcasts another pattern.
    if (rank == 1) call fill(2)
    if (rank == 0) buf = 0
    call MPI_Bcast(buf, n, MPI_INTEGER1, 1, MPI_COMM_WORLD)
    call verify(2, 'MPI_Bcast from rank 1')

    ! A derived type of more than 2**31 bytes, one element of it sent back.
    call MPI_Type_contiguous(n, MPI_INTEGER1, big)
    call MPI_Type_commit(big)
    call MPI_Type_size(big, tsize)
    if (tsize /= n) call fail('MPI_Type_size of the large type', tsize)
    if (rank == 1) then
        call fill(3)
        call MPI_Send(buf, 1, big, peer, 3, MPI_COMM_WORLD)
    else
        buf = 0
        call MPI_Recv(buf, 1, big, peer, 3, MPI_COMM_WORLD, status)
        call MPI_Get_count(status, MPI_INTEGER1, got)
        if (got /= n) call fail('MPI_Get_count of the large type in bytes', got)
        call verify(3, 'one element of the large type to rank 0')
    end if
    call MPI_Type_free(big)

    deallocate(buf)
    call MPI_Finalize()

contains

    ! Byte i of pattern seed: varies along the whole buffer, not a period of 2**k.
    pure integer(kind=1) function pat(seed, i)
        integer, intent(in) :: seed
        integer(kind=MPI_COUNT_KIND), intent(in) :: i
        pat = int(mod(i * 7 + seed * 13, 251_MPI_COUNT_KIND) - 125, kind=1)
    end function pat

    subroutine fill(seed)
        integer, intent(in) :: seed
        integer(kind=MPI_COUNT_KIND) :: i
        do i = 1, n
            buf(i) = pat(seed, i)
        end do
    end subroutine fill

    subroutine verify(seed, what)
        integer, intent(in) :: seed
        character(len=*), intent(in) :: what
        integer(kind=MPI_COUNT_KIND) :: i
        do i = 1, n
            if (buf(i) /= pat(seed, i)) call fail(what // ': byte differs at', i)
        end do
    end subroutine verify

    subroutine fail(what, value)
        character(len=*), intent(in) :: what
        integer(kind=MPI_COUNT_KIND), intent(in) :: value
        print '(a, a, a, i0)', 'f08_large: FAIL: ', what, ' ', value
        call MPI_Abort(MPI_COMM_WORLD, 1)
    end subroutine fail
end program f08_large
