! `use mpi`: the same basics as fgen_mpif.f90 through the module's explicit
! interfaces (any type and rank of choice buffer, scalars included).
program fgen_mpi
    use mpi
    implicit none
    integer :: ierr, rank, nranks, next, prev, cnt, cls, rlen, nerr
    integer :: status(MPI_STATUS_SIZE), reqs(2)
    integer :: val, got, info, buflen, cart, dims(2), coords(2), idx, outcount, indices(2)
    integer :: graph, indeg, outdeg
    double precision :: sum(2)
    logical :: flag, periods(2)
    character(len=MPI_MAX_INFO_KEY + 40) :: longkey
    character(len=20) :: value
    character(len=MPI_MAX_PROCESSOR_NAME) :: pname
    character(len=MPI_MAX_OBJECT_NAME) :: cname

    nerr = 0
    call MPI_Init(ierr)
    call MPI_Initialized(flag, ierr)
    if (.not. flag) call fail('not initialized')
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
    next = mod(rank + 1, nranks)
    prev = mod(rank + nranks - 1, nranks)

    val = 1000 + rank
    call MPI_Sendrecv(val, 1, MPI_INTEGER, next, 7, got, 1, MPI_INTEGER, prev, 7, &
                      MPI_COMM_WORLD, status, ierr)
    if (got /= 1000 + prev) call fail('sendrecv value')
    if (status(MPI_SOURCE) /= prev .or. status(MPI_TAG) /= 7) call fail('status')
    call MPI_Get_count(status, MPI_INTEGER, cnt, ierr)
    if (cnt /= 1) call fail('get_count')

    call MPI_Irecv(got, 1, MPI_INTEGER, prev, 8, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Isend(val, 1, MPI_INTEGER, next, 8, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
    call MPI_F_sync_reg(got)
    call MPI_Pcontrol(1)
    if (ierr /= MPI_SUCCESS .or. got /= 1000 + prev) call fail('waitall')

    ! request indices are 1-based in Fortran; MPI_UNDEFINED when none is active
    call MPI_Irecv(got, 1, MPI_INTEGER, 0, 5, MPI_COMM_SELF, reqs(1), ierr)
    call MPI_Isend(val, 1, MPI_INTEGER, 0, 5, MPI_COMM_SELF, reqs(2), ierr)
    call MPI_Waitany(2, reqs, idx, status, ierr)
    if (idx /= 1 .and. idx /= 2) call fail('waitany index')
    if (reqs(idx) /= MPI_REQUEST_NULL) call fail('waitany freed another request')
    call MPI_Waitany(2, reqs, idx, status, ierr)
    if (idx /= 1 .and. idx /= 2) call fail('second waitany index')
    call MPI_Waitany(2, reqs, idx, status, ierr)
    if (idx /= MPI_UNDEFINED) call fail('waitany of inactive requests')
    call MPI_Irecv(got, 1, MPI_INTEGER, 0, 6, MPI_COMM_SELF, reqs(1), ierr)
    call MPI_Isend(val, 1, MPI_INTEGER, 0, 6, MPI_COMM_SELF, reqs(2), ierr)
    call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
    call MPI_Waitsome(2, reqs, outcount, indices, MPI_STATUSES_IGNORE, ierr)
    if (outcount /= MPI_UNDEFINED) call fail('waitsome of inactive requests')
    call MPI_Irecv(got, 1, MPI_INTEGER, 0, 7, MPI_COMM_SELF, reqs(2), ierr)
    call MPI_Send(val, 1, MPI_INTEGER, 0, 7, MPI_COMM_SELF, ierr)
    call MPI_Waitsome(2, reqs, outcount, indices, MPI_STATUSES_IGNORE, ierr)
    if (outcount /= 1 .or. indices(1) /= 2) call fail('waitsome indices')

    call MPI_Iprobe(MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, flag, MPI_STATUS_IGNORE, ierr)
    if (flag) call fail('iprobe found a message')
    call MPI_Send(val, 1, MPI_INTEGER, 0, 9, MPI_COMM_SELF, ierr)
    flag = .false.
    do while (.not. flag)
        call MPI_Iprobe(0, 9, MPI_COMM_SELF, flag, status, ierr)
    end do
    call MPI_Recv(got, 1, MPI_INTEGER, 0, 9, MPI_COMM_SELF, MPI_STATUS_IGNORE, ierr)

    sum = [dble(rank), 1d0]
    call MPI_Allreduce(MPI_IN_PLACE, sum, 2, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (sum(1) /= nranks * (nranks - 1) / 2 .or. sum(2) /= nranks) call fail('allreduce')

    call MPI_Get_processor_name(pname, rlen, ierr)
    if (rlen <= 0 .or. len_trim(pname) /= rlen) call fail('processor name')
    call MPI_Comm_set_name(MPI_COMM_WORLD, 'fgen mpi', ierr)
    call MPI_Comm_get_name(MPI_COMM_WORLD, cname, rlen, ierr)
    if (cname /= 'fgen mpi' .or. rlen /= 8) call fail('comm name')
    if (MPI_Wtime() <= 0d0 .or. MPI_Wtick() <= 0d0) call fail('wtime')

    ! LOGICAL arrays in and out
    dims = [nranks, 1]
    periods = [.true., .false.]
    call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .false., cart, ierr)
    periods = [.false., .true.]
    call MPI_Cart_get(cart, 2, dims, periods, coords, ierr)
    if (.not. periods(1) .or. periods(2) .or. coords(1) /= rank) call fail('cart_get')
    call MPI_Comm_free(cart, ierr)

    ! MPI_UNWEIGHTED (a scalar of mpif.h's common blocks) reaches C as such
    call MPI_Dist_graph_create_adjacent(MPI_COMM_SELF, 1, [0], MPI_UNWEIGHTED, 1, [0], &
                                        MPI_UNWEIGHTED, MPI_INFO_NULL, .false., graph, ierr)
    call MPI_Dist_graph_neighbors_count(graph, indeg, outdeg, flag, ierr)
    if (ierr /= MPI_SUCCESS .or. flag .or. indeg /= 1) call fail('unweighted graph')
    call MPI_Comm_free(graph, ierr)

    ! info strings: blanks trimmed, lengths without the null, values padded
    call MPI_Info_create(info, ierr)
    call MPI_Info_set(info, '  fgen_key ', ' some value  ', ierr)
    buflen = len(value)
    value = 'x'
    call MPI_Info_get_string(info, 'fgen_key', buflen, value, flag, ierr)
    if (.not. flag .or. value /= 'some value' .or. buflen /= 10) call fail('info_get_string')

    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
    call MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN, ierr)
    ! a key longer than MPI_MAX_INFO_KEY is refused as in C, never truncated
    longkey = repeat('k', len(longkey))
    call MPI_Info_set(info, longkey, 'v', ierr)
    call MPI_Error_class(ierr, cls, ierr)
    if (cls /= MPI_ERR_INFO_KEY) call fail('long info key')
    call MPI_Info_free(info, ierr)
    call MPI_Pready(0, MPI_REQUEST_NULL, ierr)
    call MPI_Error_class(ierr, cls, ierr)
    if (cls /= MPI_ERR_UNSUPPORTED_OPERATION) call fail('stub')
    call MPI_Send(val, 1, MPI_DATATYPE_NULL, 0, 1, MPI_COMM_SELF, ierr)
    call MPI_Error_class(ierr, cls, ierr)
    if (cls /= MPI_ERR_TYPE) call fail('bad datatype')

    call MPI_Finalize(ierr)
    if (nerr /= 0) stop 1
    if (rank == 0) print '(a)', 'ok'
contains
    subroutine fail(what)
        character(len=*), intent(in) :: what
        print '(2a)', 'FAIL: ', what
        nerr = nerr + 1
    end subroutine fail
end program fgen_mpi
