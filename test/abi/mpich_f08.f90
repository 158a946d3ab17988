! `use mpi_f08`, compiled and linked with MPICH's mpifort
! (test/abi/mpich_fort.sh), runs on bmpi through libmpichfort.so.12.
! Rank 0 prints the library's version line, every rank "ok: rank R of N".
program mpich_f08
  use mpi_f08
  implicit none
  integer :: rank, nranks, n, right, left, got(3)
  type(MPI_Status) :: st
  type(MPI_Comm) :: dup
  character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: version

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  call MPI_Get_library_version(version, n)
  if (rank == 0) write (*, '(A,A)') 'library: ', version(1:index(version(1:n) // new_line('a'), new_line('a')) - 1)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  right = mod(rank + 1, nranks)
  left = mod(rank + nranks - 1, nranks)
  call MPI_Sendrecv([rank, 2 * rank, 3 * rank], 3, MPI_INTEGER, right, 9, got, 3, MPI_INTEGER, &
                    MPI_ANY_SOURCE, MPI_ANY_TAG, dup, st)
  call MPI_Get_count(st, MPI_INTEGER, n)
  if (any(got /= [left, 2 * left, 3 * left]) .or. st%MPI_SOURCE /= left .or. st%MPI_TAG /= 9 .or. n /= 3) then
    write (*, *) 'FAIL: sendrecv', got, st%MPI_SOURCE, st%MPI_TAG, n
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end if
  call MPI_Comm_free(dup)
  if (dup /= MPI_COMM_NULL) then
    write (*, *) 'FAIL: MPI_Comm_free left the handle'
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end if
  write (*, '(A,I0,A,I0)') 'ok: rank ', rank, ' of ', nranks
  call MPI_Finalize()
end program
