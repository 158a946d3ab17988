! Communicators, attributes and error handlers through mpif.h, or the mpi
! module when compiled with -DBMPI_TEST_USE_MPI: MPI_Comm_split, names,
! MPI_Comm_dup copying attributes through a copy callback written in
! Fortran (and the predefined MPI_COMM_DUP_FN, MPI_COMM_NULL_COPY_FN,
! MPI_DUP_FN), delete callbacks, MPI_TAG_UB, an error handler written in
! Fortran, and MPI_ERRORS_RETURN giving the C error classes. Any number
! of ranks.
module f_comm_seen
  implicit none
  integer :: copies = 0, deletes = 0, last_deleted = 0, errh_calls = 0, errh_code = 0, errh_comm = 0
end module f_comm_seen

subroutine copy_fn(oldcomm, keyval, extra_state, val_in, val_out, flag, ierr)
  use f_comm_seen
#include "frt_mpi.h"
  integer :: oldcomm, keyval, ierr
  integer(kind=MPI_ADDRESS_KIND) :: extra_state, val_in, val_out
  logical :: flag
  copies = copies + 1
  flag = .false.
  ierr = MPI_ERR_OTHER
  if (extra_state /= 1234) return
  val_out = val_in + 1
  flag = .true.
  ierr = MPI_SUCCESS
end subroutine copy_fn

subroutine delete_fn(comm, keyval, val, extra_state, ierr)
  use f_comm_seen
#include "frt_mpi.h"
  integer :: comm, keyval, ierr
  integer(kind=MPI_ADDRESS_KIND) :: val, extra_state
  deletes = deletes + 1
  last_deleted = int(val)
  ierr = MPI_SUCCESS
end subroutine delete_fn

subroutine errh(comm, code)
  use f_comm_seen
  implicit none
  integer :: comm, code
  errh_calls = errh_calls + 1
  errh_code = code
  errh_comm = comm
end subroutine errh

program f_comm
  use f_comm_seen
#include "frt_mpi.h"
  character(len=*), parameter :: prog = 'f_comm'
  external :: copy_fn, delete_fn, errh
  integer :: rank, n, ierr, i, sub, subrank, subsize, total, want, cmp, cls, len
  integer :: dup1, dup2, kv, kv_dup, kv_null, kv_old, eh, old_int, buf
  integer(kind=MPI_ADDRESS_KIND) :: val
  logical :: flag
  character(len=MPI_MAX_OBJECT_NAME) :: name
  character(len=MPI_MAX_ERROR_STRING) :: text

  call start()

  ! split by parity, ordered by descending rank
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), -rank, sub, ierr)
  call MPI_Comm_size(sub, subsize, ierr)
  call MPI_Comm_rank(sub, subrank, ierr)
  call check(subsize == (n - mod(rank, 2) + 1) / 2, 'split size')
  call check(subrank == (n - 1 - rank) / 2, 'split rank ordered by key')
  call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, sub, ierr)
  want = 0
  do i = mod(rank, 2), n - 1, 2
    want = want + i
  end do
  call check(total == want, 'Allreduce on the split communicator')
  call MPI_Comm_free(sub, ierr)
  call check(sub == MPI_COMM_NULL, 'MPI_Comm_free')

  ! names
  call MPI_Comm_dup(MPI_COMM_WORLD, dup1, ierr)
  call MPI_Comm_compare(dup1, MPI_COMM_WORLD, cmp, ierr)
  call check(cmp == MPI_CONGRUENT, 'a dup is congruent')
  call MPI_Comm_get_name(MPI_COMM_WORLD, name, len, ierr)
  call check(name(1:len) == 'MPI_COMM_WORLD' .and. len == 14, 'name of MPI_COMM_WORLD')
  call MPI_Comm_set_name(dup1, 'fortran dup', ierr)
  name = 'garbage garbage'
  call MPI_Comm_get_name(dup1, name, len, ierr)
  call check(len == 11 .and. name == 'fortran dup', 'MPI_Comm_set_name/get_name, blank-padded')

  ! attributes copied by a Fortran callback
  call MPI_Comm_create_keyval(copy_fn, delete_fn, kv, 1234_MPI_ADDRESS_KIND, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Comm_create_keyval')
  call MPI_Comm_set_attr(dup1, kv, 41_MPI_ADDRESS_KIND, ierr)
  call MPI_Comm_dup(dup1, dup2, ierr)
  call check(ierr == MPI_SUCCESS .and. copies == 1, 'copy callback called once')
  call MPI_Comm_get_attr(dup2, kv, val, flag, ierr)
  call check(flag .and. val == 42, 'attribute copied by the Fortran callback')
  call MPI_Comm_get_attr(dup1, kv, val, flag, ierr)
  call check(flag .and. val == 41, 'original attribute untouched')
  call MPI_Comm_free(dup2, ierr)
  call check(deletes == 1 .and. last_deleted == 42, 'delete callback on MPI_Comm_free')
  call MPI_Comm_delete_attr(dup1, kv, ierr)
  call check(deletes == 2 .and. last_deleted == 41, 'delete callback on MPI_Comm_delete_attr')
  call MPI_Comm_get_attr(dup1, kv, val, flag, ierr)
  call check(.not. flag, 'deleted attribute gone')
  call MPI_Comm_free_keyval(kv, ierr)
  call check(kv == MPI_KEYVAL_INVALID, 'MPI_Comm_free_keyval')

  ! the predefined callbacks, passed as procedures
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, kv_dup, 0_MPI_ADDRESS_KIND, ierr)
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, kv_null, 0_MPI_ADDRESS_KIND, ierr)
  call MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, kv_old, 0, ierr)
  call MPI_Comm_set_attr(dup1, kv_dup, 7_MPI_ADDRESS_KIND, ierr)
  call MPI_Comm_set_attr(dup1, kv_null, 8_MPI_ADDRESS_KIND, ierr)
  call MPI_Attr_put(dup1, kv_old, -5, ierr)
  call MPI_Attr_get(dup1, kv_old, old_int, flag, ierr)
  call check(flag .and. old_int == -5, 'MPI_Attr_put/MPI_Attr_get')
  call MPI_Comm_dup(dup1, dup2, ierr)
  call MPI_Comm_get_attr(dup2, kv_dup, val, flag, ierr)
  call check(flag .and. val == 7, 'MPI_COMM_DUP_FN copies')
  call MPI_Comm_get_attr(dup2, kv_null, val, flag, ierr)
  call check(.not. flag, 'MPI_COMM_NULL_COPY_FN does not copy')
  old_int = 0
  call MPI_Attr_get(dup2, kv_old, old_int, flag, ierr)
  call check(flag .and. old_int == -5, 'MPI_DUP_FN copies')
  call MPI_Comm_free(dup2, ierr)
  call MPI_Comm_free_keyval(kv_dup, ierr)
  call MPI_Comm_free_keyval(kv_null, ierr)
  call MPI_Keyval_free(kv_old, ierr)

  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, val, flag, ierr)
  call check(flag .and. val >= 32767, 'MPI_TAG_UB')

  ! an error handler written in Fortran
  call MPI_Comm_create_errhandler(errh, eh, ierr)
  call MPI_Comm_set_errhandler(dup1, eh, ierr)
  call MPI_Comm_call_errhandler(dup1, MPI_ERR_OTHER, ierr)
  call check(errh_calls == 1 .and. errh_code == MPI_ERR_OTHER .and. errh_comm == dup1, &
             'MPI_Comm_call_errhandler runs the Fortran handler')
  call MPI_Send(buf, 1, MPI_INTEGER, n + 5, 0, dup1, ierr)
  call MPI_Error_class(errh_code, cls, i)
  call check(errh_calls == 2 .and. cls == MPI_ERR_RANK .and. ierr /= MPI_SUCCESS, 'handler on a bad rank')
  call MPI_Errhandler_free(eh, ierr)
  call check(eh == MPI_ERRHANDLER_NULL, 'MPI_Errhandler_free')

  ! MPI_ERRORS_RETURN: the C error classes
  call MPI_Comm_set_errhandler(dup1, MPI_ERRORS_RETURN, ierr)
  call MPI_Send(buf, 1, MPI_INTEGER, n + 5, 0, dup1, ierr)
  call MPI_Error_class(ierr, cls, i)
  call check(cls == MPI_ERR_RANK, 'MPI_ERR_RANK returned')
  call MPI_Error_string(ierr, text, len, i)
  call check(len > 0 .and. len_trim(text) == len, 'MPI_Error_string')
  call MPI_Send(buf, -1, MPI_INTEGER, 0, 0, dup1, ierr)
  call MPI_Error_class(ierr, cls, i)
  call check(cls == MPI_ERR_COUNT, 'MPI_ERR_COUNT returned')
  call MPI_Send(buf, 1, MPI_DATATYPE_NULL, 0, 0, dup1, ierr)
  call MPI_Error_class(ierr, cls, i)
  call check(cls == MPI_ERR_TYPE, 'MPI_ERR_TYPE returned')
  call MPI_Comm_size(MPI_COMM_NULL, i, ierr)
  call MPI_Error_class(ierr, cls, i)
  call check(cls == MPI_ERR_COMM, 'MPI_ERR_COMM returned')
  call MPI_Comm_free(dup1, ierr)

  call MPI_Finalize(ierr)
  if (rank == 0) print '(a)', 'f_comm: ok'

contains

  include 'frt_check.h'
end program f_comm
