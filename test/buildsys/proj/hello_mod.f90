! Fortran target of the build-system tests, `use mpi`: a sum over the ranks.
program hello_mod
  use mpi
  implicit none
  integer :: ierr, rank, nranks, total
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (total /= nranks * (nranks - 1) / 2) call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  if (rank == 0) print '(a,i0,a)', 'fortran use mpi ok at ', nranks, ' ranks'
  call MPI_Finalize(ierr)
end program hello_mod
