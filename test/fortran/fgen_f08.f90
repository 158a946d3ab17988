! `use mpi_f08`: the basics of fgen_mpi.f90 with TYPE(MPI_Comm) and friends,
! optional ierror, assumed-rank buffers (a scalar, arrays of rank 1 and 2,
! a non-contiguous section) and the == / /= operators on handles.
program fgen_f08
    use mpi_f08
    use, intrinsic :: iso_c_binding, only: c_ptr, c_associated, c_f_pointer
    implicit none
    integer :: ierr, rank, nranks, next, prev, cnt, cls, rlen, nerr, i
    type(MPI_Status) :: status
    type(MPI_Request) :: reqs(2)
    type(MPI_Comm) :: dup
    integer :: val, got, grid(4, 3), col(4)
    double precision :: sum(2)
    logical :: flag
    integer(kind=MPI_ADDRESS_KIND) :: a1, a3
    character, target :: bbuf(1000)
    type(c_ptr) :: cp
    character, pointer :: detached(:)
    integer, pointer :: mem(:)
    integer :: bsize
    integer, allocatable :: rows(:, :), counts(:), displs(:)
    integer(kind=MPI_ADDRESS_KIND) :: a_row, a_elem
    type(MPI_Request) :: req
    character(len=MPI_MAX_PROCESSOR_NAME) :: pname
    character(len=MPI_MAX_OBJECT_NAME) :: cname

    nerr = 0
    call MPI_Init()
    call MPI_Initialized(flag)
    if (.not. flag) call fail('not initialized')
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
    if (ierr /= MPI_SUCCESS) call fail('ierror')
    next = mod(rank + 1, nranks)
    prev = mod(rank + nranks - 1, nranks)

    val = 1000 + rank
    call MPI_Sendrecv(val, 1, MPI_INTEGER, next, 7, got, 1, MPI_INTEGER, prev, 7, &
                      MPI_COMM_WORLD, status)
    if (got /= 1000 + prev) call fail('sendrecv value')
    if (status%MPI_SOURCE /= prev .or. status%MPI_TAG /= 7) call fail('status')
    call MPI_Get_count(status, MPI_INTEGER, cnt)
    if (cnt /= 1) call fail('get_count')

    ! a row of a 2-D array: a non-contiguous section sent as one
    grid = reshape([(i + 100 * rank, i = 1, 12)], [4, 3])
    col = -1
    call MPI_Irecv(col(1:3), 3, MPI_INTEGER, prev, 8, MPI_COMM_WORLD, reqs(1))
    call MPI_Isend(grid(2, :), 3, MPI_INTEGER, next, 8, MPI_COMM_WORLD, reqs(2))
    call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
    call MPI_F_sync_reg(col)
    call MPI_Pcontrol(0)
    if (any(col(1:3) /= [2, 6, 10] + 100 * prev) .or. col(4) /= -1) call fail('section')
    if (reqs(1) /= MPI_REQUEST_NULL) call fail('request not freed')

    call MPI_Iprobe(MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, flag, MPI_STATUS_IGNORE)
    if (flag) call fail('iprobe found a message')

    sum = [dble(rank), 1d0]
    call MPI_Allreduce(MPI_IN_PLACE, sum, 2, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
    if (sum(1) /= nranks * (nranks - 1) / 2 .or. sum(2) /= nranks) call fail('allreduce')

    call MPI_Get_address(grid(1, 1), a1)
    call MPI_Get_address(grid(3, 1), a3)
    if (MPI_Aint_diff(a3, a1) /= 8 .or. MPI_Aint_add(a1, 8_MPI_ADDRESS_KIND) /= a3) &
        call fail('aint_diff/add')
    if (MPI_Wtime() <= 0d0 .or. MPI_Wtick() <= 0d0) call fail('wtime')

    ! addresses as TYPE(C_PTR)
    ! (read through the address: the compiler may assume that no pointer to
    ! bbuf survives the call it was passed to, and fold a comparison)
    bbuf(1) = 'Z'
    call MPI_Buffer_attach(bbuf, size(bbuf))
    call MPI_Buffer_detach(cp, bsize)
    if (.not. c_associated(cp) .or. bsize /= size(bbuf)) call fail('buffer_detach')
    call c_f_pointer(cp, detached, [1])
    if (detached(1) /= 'Z') call fail('buffer_detach address')
    call MPI_Alloc_mem(40_MPI_ADDRESS_KIND, MPI_INFO_NULL, cp)
    call c_f_pointer(cp, mem, [10])
    mem = 7
    call MPI_Free_mem(mem)

    ! sections where the call needs a contiguous buffer: copied for the
    ! blocking calls, their address taken by MPI_Get_address
    grid(2, :) = [1, 2, 3] * (rank + 1)
    call MPI_Allreduce(MPI_IN_PLACE, grid(2, :), 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    if (any(grid(2, :) /= [1, 2, 3] * (nranks * (nranks + 1) / 2)) .or. &
        any(grid(1, :) /= [1, 5, 9] + 100 * rank)) call fail('allreduce of a row')
    allocate(rows(2, nranks), counts(nranks), displs(nranks))
    rows = -5
    counts = 1
    displs = [(i, i = 0, nranks - 1)]
    call MPI_Allgatherv(rank + 10, 1, MPI_INTEGER, rows(1, :), counts, displs, MPI_INTEGER, &
                        MPI_COMM_WORLD)
    if (any(rows(1, :) /= [(i + 10, i = 0, nranks - 1)]) .or. any(rows(2, :) /= -5)) &
        call fail('allgatherv into a row')
    call MPI_Get_address(grid(2, :), a_row)
    call MPI_Get_address(grid(2, 1), a_elem)
    if (a_row /= a_elem) call fail('get_address of a section')

    call MPI_Get_processor_name(pname, rlen)
    if (rlen <= 0 .or. len_trim(pname) /= rlen) call fail('processor name')
    call MPI_Comm_dup(MPI_COMM_WORLD, dup)
    if (dup == MPI_COMM_WORLD .or. .not. (dup /= MPI_COMM_NULL)) call fail('handle compare')
    call MPI_Comm_set_name(dup, 'fgen f08')
    call MPI_Comm_get_name(dup, cname, rlen)
    if (cname /= 'fgen f08' .or. rlen /= 8) call fail('comm name')
    call MPI_Comm_free(dup)
    if (dup /= MPI_COMM_NULL) call fail('comm_free')

    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
    call MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN)
    call MPI_Pready(0, MPI_REQUEST_NULL, ierr)
    call MPI_Error_class(ierr, cls)
    if (cls /= MPI_ERR_UNSUPPORTED_OPERATION) call fail('stub')
    call MPI_Send(val, 1, MPI_DATATYPE_NULL, 0, 1, MPI_COMM_SELF, ierr)
    call MPI_Error_class(ierr, cls)
    if (cls /= MPI_ERR_TYPE) call fail('bad datatype')
    ! a nonblocking call cannot work on a copy
    call MPI_Iallreduce(MPI_IN_PLACE, grid(2, :), 3, MPI_INTEGER, MPI_SUM, MPI_COMM_SELF, &
                        req, ierr)
    call MPI_Error_class(ierr, cls)
    if (cls /= MPI_ERR_BUFFER) call fail('nonblocking call on a section')

    call MPI_Finalize()
    if (nerr /= 0) stop 1
    if (rank == 0) print '(a)', 'ok'
contains
    subroutine fail(what)
        character(len=*), intent(in) :: what
        print '(2a)', 'FAIL: ', what
        nerr = nerr + 1
    end subroutine fail
end program fgen_f08
