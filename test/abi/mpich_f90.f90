! `use mpi`, compiled and linked with MPICH's mpifort
! (test/abi/mpich_fort.sh), runs on bmpi through libmpichfort.so.12.
! Rank 0 prints the library's version line, every rank "ok: rank R of N".
program mpich_f90
  use mpi
  implicit none
  integer :: ierr, rank, nranks, n, i
  double precision :: x(4)
  character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: version

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call MPI_Get_library_version(version, n, ierr)
  if (rank == 0) write (*, '(A,A)') 'library: ', version(1:index(version(1:n) // new_line('a'), new_line('a')) - 1)
  x = [(dble(rank + i), i = 1, 4)]
  call MPI_Allreduce(MPI_IN_PLACE, x, 4, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
  if (any(x /= [(dble(nranks - 1 + i), i = 1, 4)])) then
    write (*, *) 'FAIL: allreduce in place', x
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  call MPI_Bcast(x, 4, MPI_DOUBLE_PRECISION, nranks - 1, MPI_COMM_WORLD, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  write (*, '(A,I0,A,I0)') 'ok: rank ', rank, ' of ', nranks
  call MPI_Finalize(ierr)
end program
