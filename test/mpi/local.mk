# test/mpi: sources are added here
