! Fortran target of the build-system tests, `use mpi_f08`: a maximum over
! the ranks, with TYPE(MPI_Comm) handles and no ierror arguments.
program hello_f08
  use mpi_f08
  implicit none
  type(MPI_Comm) :: comm
  integer :: rank, nranks, top
  call MPI_Init()
  comm = MPI_COMM_WORLD
  call MPI_Comm_rank(comm, rank)
  call MPI_Comm_size(comm, nranks)
  call MPI_Allreduce(rank, top, 1, MPI_INTEGER, MPI_MAX, comm)
  if (top /= nranks - 1) call MPI_Abort(comm, 1)
  if (rank == 0) print '(a,i0,a)', 'fortran use mpi_f08 ok at ', nranks, ' ranks'
  call MPI_Finalize()
end program hello_f08
