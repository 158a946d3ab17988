! MPI-IO through the mpi_f08 module: the checks of f_io.F90 with
! TYPE(MPI_File), TYPE(MPI_Datatype), TYPE(MPI_Status), a handler of the
! MPI_File_errhandler_function interface, and ierror left out where the
! result is not checked. Any number of ranks.
module f_io_f08_cb
  use mpi_f08
  implicit none
  integer :: errh_calls = 0, errh_code = 0
  type(MPI_File) :: errh_file
contains
  subroutine file_errh(fh, code)
    type(MPI_File) :: fh
    integer :: code
    errh_calls = errh_calls + 1
    errh_code = code
    errh_file = fh
  end subroutine file_errh
end module f_io_f08_cb

program f_io_f08
  use mpi_f08
  use f_io_f08_cb
  implicit none
  integer, parameter :: nb = 50, blk = 4
  integer :: rank, n, ierr, i, cls, cnt
  integer :: buf(nb * blk), back(nb * blk)
  type(MPI_File) :: fh
  type(MPI_Datatype) :: ftype
  type(MPI_Errhandler) :: eh
  type(MPI_Status) :: status
  integer(kind=MPI_OFFSET_KIND) :: disp, sz, pos
  character(len=512) :: dir, path

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, n)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
  call get_environment_variable('TMPDIR', dir)
  if (len_trim(dir) == 0) dir = '/tmp'
  if (rank == 0) write (path, '(a,a,i0,a)') trim(dir), '/bmpi-f_io_f08-', getpid(), '.dat'
  call MPI_Bcast(path, len(path), MPI_CHARACTER, 0, MPI_COMM_WORLD)

  call MPI_File_open(MPI_COMM_WORLD, trim(path), ior(MPI_MODE_CREATE, MPI_MODE_RDWR), MPI_INFO_NULL, fh, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_File_open')
  call MPI_Type_vector(nb, blk, blk * n, MPI_INTEGER, ftype)
  call MPI_Type_commit(ftype)
  disp = rank * blk * 4
  call MPI_File_set_view(fh, disp, MPI_INTEGER, ftype, 'native', MPI_INFO_NULL, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_File_set_view')
  buf = [(rank * 100000 + i, i = 1, nb * blk)]
  call MPI_File_write_at(fh, 0_MPI_OFFSET_KIND, buf, nb * blk / 2, MPI_INTEGER, status, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_File_write_at')
  call MPI_Get_count(status, MPI_INTEGER, cnt)
  call check(cnt == nb * blk / 2, 'count of MPI_File_write_at')
  call MPI_File_seek(fh, int(nb * blk / 2, MPI_OFFSET_KIND), MPI_SEEK_SET)
  call MPI_File_write(fh, buf(nb * blk / 2 + 1:), nb * blk / 2, MPI_INTEGER, status, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_File_write')
  call MPI_File_get_position(fh, pos)
  call check(pos == nb * blk, 'MPI_File_get_position after the write')
  call MPI_File_sync(fh)
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_File_sync(fh)
  call MPI_File_get_size(fh, sz)
  call check(sz == int(nb, MPI_OFFSET_KIND) * blk * n * 4, 'MPI_File_get_size')
  back = 0
  call MPI_File_read_at(fh, 0_MPI_OFFSET_KIND, back, nb * blk, MPI_INTEGER, status, ierr)
  call check(ierr == MPI_SUCCESS .and. all(back == buf), 'MPI_File_read_at gives back what was written')

  call MPI_File_read_at(fh, -1_MPI_OFFSET_KIND, back, 1, MPI_INTEGER, status, ierr)
  call MPI_Error_class(ierr, cls)
  call check(cls == MPI_ERR_ARG, 'a negative offset returns MPI_ERR_ARG')
  call MPI_File_create_errhandler(file_errh, eh)
  call MPI_File_set_errhandler(fh, eh)
  call MPI_File_call_errhandler(fh, MPI_ERR_IO)
  call check(errh_calls == 1 .and. errh_code == MPI_ERR_IO .and. errh_file == fh, &
             'MPI_File_call_errhandler runs the Fortran handler with the file')
  call MPI_Errhandler_free(eh)
  call MPI_File_close(fh, ierr)
  call check(ierr == MPI_SUCCESS .and. fh == MPI_FILE_NULL, 'MPI_File_close')
  call MPI_Type_free(ftype)

  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) then
    call MPI_File_delete(trim(path), MPI_INFO_NULL, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_File_delete')
    call MPI_File_delete(trim(path), MPI_INFO_NULL, ierr)
    call MPI_Error_class(ierr, cls)
    call check(cls == MPI_ERR_NO_SUCH_FILE, 'deleting it again: MPI_ERR_NO_SUCH_FILE')
  end if
  call MPI_Finalize()

contains
  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    if (.not. cond) then
      print '(a,i0,2a)', 'FAIL f_io_f08: rank ', rank, ': ', what
      call MPI_Abort(MPI_COMM_WORLD, 1)
    end if
  end subroutine check
end program f_io_f08
