// C++ target of the build-system tests: rank 0 broadcasts a vector.
#include <mpi.h>
#include <iostream>
#include <numeric>
#include <vector>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<int> v(8, -1);
    if (rank == 0)
        std::iota(v.begin(), v.end(), 1);
    MPI_Bcast(v.data(), static_cast<int>(v.size()), MPI_INT, 0, MPI_COMM_WORLD);
    if (std::accumulate(v.begin(), v.end(), 0) != 36)
        MPI_Abort(MPI_COMM_WORLD, 1);
    if (rank == 0)
        std::cout << "c++ ok at " << size << " ranks\n";
    return MPI_Finalize();
}
