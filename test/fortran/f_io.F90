! MPI-IO through mpif.h, or the mpi module when compiled with
! -DBMPI_TEST_USE_MPI: open with MPI_MODE_CREATE, a view of interleaved
! integer blocks (MPI_Type_vector), MPI_File_write_at and MPI_File_read_at
! with INTEGER(KIND=MPI_OFFSET_KIND) offsets, the individual pointer
! (MPI_File_write, MPI_File_seek, MPI_File_get_position), MPI_File_get_size,
! a file error handler written in Fortran that receives the Fortran file
! handle, MPI_ERRORS_RETURN as the files' default, and MPI_File_delete.
! The file goes to $TMPDIR (or /tmp). Any number of ranks.
module f_io_seen
  implicit none
  integer :: errh_calls = 0, errh_code = 0, errh_file = 0
end module f_io_seen

subroutine file_errh(fh, code)
  use f_io_seen
  implicit none
  integer :: fh, code
  errh_calls = errh_calls + 1
  errh_code = code
  errh_file = fh
end subroutine file_errh

program f_io
  use f_io_seen
#include "frt_mpi.h"
  character(len=*), parameter :: prog = 'f_io'
  integer, parameter :: nb = 50, blk = 4
  external :: file_errh
  integer :: rank, n, ierr, i, fh, ftype, eh, cls, cnt
  integer :: buf(nb * blk), back(nb * blk), status(MPI_STATUS_SIZE)
  integer(kind=MPI_OFFSET_KIND) :: disp, sz, pos
  character(len=512) :: dir, path

  call start()
  call get_environment_variable('TMPDIR', dir)
  if (len_trim(dir) == 0) dir = '/tmp'
  if (rank == 0) write (path, '(a,a,i0,a)') trim(dir), '/bmpi-f_io-', getpid(), '.dat'
  call MPI_Bcast(path, len(path), MPI_CHARACTER, 0, MPI_COMM_WORLD, ierr)

  call MPI_File_open(MPI_COMM_WORLD, trim(path), MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, fh, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_File_open')
  call MPI_Type_vector(nb, blk, blk * n, MPI_INTEGER, ftype, ierr)
  call MPI_Type_commit(ftype, ierr)
  disp = rank * blk * 4
  call MPI_File_set_view(fh, disp, MPI_INTEGER, ftype, 'native', MPI_INFO_NULL, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_File_set_view')
  do i = 1, nb * blk
    buf(i) = rank * 100000 + i
  end do
  ! the first half with an explicit offset, the rest through the pointer
  call MPI_File_write_at(fh, 0_MPI_OFFSET_KIND, buf, nb * blk / 2, MPI_INTEGER, status, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_File_write_at')
  call MPI_Get_count(status, MPI_INTEGER, cnt, ierr)
  call check(cnt == nb * blk / 2, 'count of MPI_File_write_at')
  call MPI_File_seek(fh, int(nb * blk / 2, MPI_OFFSET_KIND), MPI_SEEK_SET, ierr)
  call MPI_File_write(fh, buf(nb * blk / 2 + 1), nb * blk / 2, MPI_INTEGER, status, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_File_write')
  call MPI_File_get_position(fh, pos, ierr)
  call check(pos == nb * blk, 'MPI_File_get_position after the write')
  call MPI_File_sync(fh, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_File_sync(fh, ierr)
  call MPI_File_get_size(fh, sz, ierr)
  call check(sz == int(nb, MPI_OFFSET_KIND) * blk * n * 4, 'MPI_File_get_size')
  back = 0
  call MPI_File_read_at(fh, 0_MPI_OFFSET_KIND, back, nb * blk, MPI_INTEGER, status, ierr)
  call check(ierr == MPI_SUCCESS .and. all(back == buf), 'MPI_File_read_at gives back what was written')

  ! errors return by default; a Fortran handler gets the Fortran handle
  call MPI_File_read_at(fh, -1_MPI_OFFSET_KIND, back, 1, MPI_INTEGER, status, ierr)
  call MPI_Error_class(ierr, cls, i)
  call check(cls == MPI_ERR_ARG, 'a negative offset returns MPI_ERR_ARG')
  call MPI_File_create_errhandler(file_errh, eh, ierr)
  call MPI_File_set_errhandler(fh, eh, ierr)
  call MPI_File_call_errhandler(fh, MPI_ERR_IO, ierr)
  call check(errh_calls == 1 .and. errh_code == MPI_ERR_IO .and. errh_file == fh, &
             'MPI_File_call_errhandler runs the Fortran handler with the file')
  call MPI_Errhandler_free(eh, ierr)
  call MPI_File_close(fh, ierr)
  call check(ierr == MPI_SUCCESS .and. fh == MPI_FILE_NULL, 'MPI_File_close')
  call MPI_Type_free(ftype, ierr)

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    call MPI_File_delete(trim(path), MPI_INFO_NULL, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_File_delete')
    call MPI_File_delete(trim(path), MPI_INFO_NULL, ierr)
    call MPI_Error_class(ierr, cls, i)
    call check(cls == MPI_ERR_NO_SUCH_FILE, 'deleting it again: MPI_ERR_NO_SUCH_FILE')
  end if
  call MPI_Finalize(ierr)

contains
#include "frt_check.h"
end program f_io
