! Communicators, attributes and error handlers through the mpi_f08 module:
! the checks of f_comm.F90 with callbacks of the MPI_Comm_copy_attr_function,
! MPI_Comm_delete_attr_function and MPI_Comm_errhandler_function
! interfaces, TYPE(MPI_Comm) and TYPE(MPI_Errhandler), ierror left out.
! Any number of ranks.
module f_comm_f08_cb
  use mpi_f08
  implicit none
  integer :: copies = 0, deletes = 0, last_deleted = 0, errh_calls = 0, errh_code = 0
  type(MPI_Comm) :: errh_comm, attr_comm
contains
  ! copies val + 1, if called on attr_comm with the keyval's extra state;
  ! a TYPE(MPI_Comm) argument as MPICH's mpi_f08 passes it
  subroutine copy_fn(oldcomm, keyval, extra_state, val_in, val_out, flag, ierror)
    type(MPI_Comm) :: oldcomm
    integer :: keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extra_state, val_in, val_out
    logical :: flag
    copies = copies + 1
    flag = oldcomm == attr_comm .and. extra_state == 1234
    if (flag) val_out = val_in + 1
    ierror = merge(MPI_SUCCESS, MPI_ERR_OTHER, flag)
  end subroutine copy_fn

  subroutine delete_fn(comm, keyval, val, extra_state, ierror)
    type(MPI_Comm) :: comm
    integer :: keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: val, extra_state
    deletes = deletes + 1
    last_deleted = int(val)
    ierror = merge(MPI_SUCCESS, MPI_ERR_OTHER, comm /= MPI_COMM_NULL)
  end subroutine delete_fn

  subroutine errh(comm, code)
    type(MPI_Comm) :: comm
    integer :: code
    errh_calls = errh_calls + 1
    errh_code = code
    errh_comm = comm
  end subroutine errh
end module f_comm_f08_cb

program f_comm_f08
  use mpi_f08
  use f_comm_f08_cb
  implicit none
  character(len=*), parameter :: prog = 'f_comm_f08'
  integer :: rank, n, ierr, i, subrank, subsize, total, want, cmp, cls, len, kv, kv_dup, kv_null, buf
  type(MPI_Comm) :: sub, dup1, dup2
  type(MPI_Errhandler) :: eh
  integer(kind=MPI_ADDRESS_KIND) :: val
  logical :: flag
  character(len=MPI_MAX_OBJECT_NAME) :: name
  character(len=MPI_MAX_ERROR_STRING) :: text

  call start()

  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), -rank, sub)
  call MPI_Comm_size(sub, subsize)
  call MPI_Comm_rank(sub, subrank)
  call check(subsize == (n - mod(rank, 2) + 1) / 2, 'split size')
  call check(subrank == (n - 1 - rank) / 2, 'split rank ordered by key')
  call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, sub)
  want = 0
  do i = mod(rank, 2), n - 1, 2
    want = want + i
  end do
  call check(total == want, 'Allreduce on the split communicator')
  call MPI_Comm_free(sub)
  call check(sub == MPI_COMM_NULL, 'MPI_Comm_free')

  call MPI_Comm_dup(MPI_COMM_WORLD, dup1)
  call MPI_Comm_compare(dup1, MPI_COMM_WORLD, cmp)
  call check(cmp == MPI_CONGRUENT, 'a dup is congruent')
  call MPI_Comm_set_name(dup1, 'fortran dup')
  name = 'garbage garbage'
  call MPI_Comm_get_name(dup1, name, len)
  call check(len == 11 .and. name == 'fortran dup', 'MPI_Comm_set_name/get_name, blank-padded')

  call MPI_Comm_create_keyval(copy_fn, delete_fn, kv, 1234_MPI_ADDRESS_KIND, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Comm_create_keyval')
  attr_comm = dup1
  call MPI_Comm_set_attr(dup1, kv, 41_MPI_ADDRESS_KIND)
  call MPI_Comm_dup(dup1, dup2, ierr)
  call check(ierr == MPI_SUCCESS .and. copies == 1, 'copy callback called once')
  call MPI_Comm_get_attr(dup2, kv, val, flag)
  call check(flag .and. val == 42, 'attribute copied by the Fortran callback')
  call MPI_Comm_free(dup2)
  call check(deletes == 1 .and. last_deleted == 42, 'delete callback on MPI_Comm_free')
  call MPI_Comm_delete_attr(dup1, kv)
  call check(deletes == 2 .and. last_deleted == 41, 'delete callback on MPI_Comm_delete_attr')
  call MPI_Comm_free_keyval(kv)
  call check(kv == MPI_KEYVAL_INVALID, 'MPI_Comm_free_keyval')

  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, kv_dup, 0_MPI_ADDRESS_KIND)
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, kv_null, 0_MPI_ADDRESS_KIND)
  call MPI_Comm_set_attr(dup1, kv_dup, 7_MPI_ADDRESS_KIND)
  call MPI_Comm_set_attr(dup1, kv_null, 8_MPI_ADDRESS_KIND)
  call MPI_Comm_dup(dup1, dup2)
  call MPI_Comm_get_attr(dup2, kv_dup, val, flag)
  call check(flag .and. val == 7, 'MPI_COMM_DUP_FN copies')
  call MPI_Comm_get_attr(dup2, kv_null, val, flag)
  call check(.not. flag, 'MPI_COMM_NULL_COPY_FN does not copy')
  call MPI_Comm_free(dup2)
  call MPI_Comm_free_keyval(kv_dup)
  call MPI_Comm_free_keyval(kv_null)

  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, val, flag)
  call check(flag .and. val >= 32767, 'MPI_TAG_UB')

  call MPI_Comm_create_errhandler(errh, eh)
  call MPI_Comm_set_errhandler(dup1, eh)
  call MPI_Comm_call_errhandler(dup1, MPI_ERR_OTHER)
  call check(errh_calls == 1 .and. errh_code == MPI_ERR_OTHER .and. errh_comm == dup1, &
             'MPI_Comm_call_errhandler runs the Fortran handler')
  call MPI_Send(buf, 1, MPI_INTEGER, n + 5, 0, dup1, ierr)
  call MPI_Error_class(errh_code, cls)
  call check(errh_calls == 2 .and. cls == MPI_ERR_RANK .and. ierr /= MPI_SUCCESS, 'handler on a bad rank')
  call MPI_Errhandler_free(eh)
  call check(eh == MPI_ERRHANDLER_NULL, 'MPI_Errhandler_free')

  call MPI_Comm_set_errhandler(dup1, MPI_ERRORS_RETURN)
  call MPI_Send(buf, 1, MPI_INTEGER, n + 5, 0, dup1, ierr)
  call MPI_Error_class(ierr, cls)
  call check(cls == MPI_ERR_RANK, 'MPI_ERR_RANK returned')
  call MPI_Error_string(ierr, text, len)
  call check(len > 0 .and. len_trim(text) == len, 'MPI_Error_string')
  call MPI_Send(buf, 1, MPI_DATATYPE_NULL, 0, 0, dup1, ierr)
  call MPI_Error_class(ierr, cls)
  call check(cls == MPI_ERR_TYPE, 'MPI_ERR_TYPE returned')
  call MPI_Comm_size(MPI_COMM_NULL, i, ierr)
  call MPI_Error_class(ierr, cls)
  call check(cls == MPI_ERR_COMM, 'MPI_ERR_COMM returned')
  call MPI_Comm_free(dup1)

  call MPI_Finalize()
  if (rank == 0) print '(a)', 'f_comm_f08: ok'

contains

  include 'frt_check.h'
end program f_comm_f08
