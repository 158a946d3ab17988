// A C++ program that uses MPI's C API, compiled and linked with MPICH's
// mpicxx (test/abi/mpich.sh), runs on bmpi: it loads bmpi's
// libmpichcxx.so.12 (which carries no MPI:: bindings, docs/mpich-abi.md)
// and libmpich.so.12. Rank 0 prints the library's version line, every
// rank "ok: rank R of N".
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <numeric>
#include <vector>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(version, &len);
    if (rank == 0)
        std::printf("library: %.*s\n", static_cast<int>(std::strcspn(version, "\n")), version);

    std::vector<int> all(static_cast<size_t>(size), -1);
    MPI_Allgather(&rank, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
    std::vector<int> expect(static_cast<size_t>(size));
    std::iota(expect.begin(), expect.end(), 0);
    double sum = 0, mine = rank + 0.5;
    MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (all != expect || sum != size * size / 2.0) {
        std::fprintf(stderr, "FAIL rank %d: allgather or allreduce (sum %g)\n", rank, sum);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    std::printf("ok: rank %d of %d\n", rank, size);
    MPI_Finalize();
    return 0;
}
