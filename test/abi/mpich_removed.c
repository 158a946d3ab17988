/* What MPICH's mpi.h still declares though MPI 3.0 removed it, and its
 * MPIX_ GPU queries: a program built with MPICH's mpicc that uses them
 * runs on bmpi (test/abi/mpich.sh) with MPICH's results (the expected
 * values are those MPICH 4.0.2 gives), MPI_LB and MPI_UB in
 * MPI_Type_struct setting the bounds included.
 *
 * Rank 0 prints the library's version line, every rank "ok: rank R of N". */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

static int rank, size;

static void check_addresses_and_bounds(void)
{
    double pair[2];
    MPI_Aint a0, a1, extent, lb, ub;
    MPI_Datatype vec, hvec;

    MPI_Address(&pair[0], &a0);
    MPI_Address(&pair[1], &a1);
    CHECK(a1 - a0 == sizeof(double), "MPI_Address %ld apart", (long)(a1 - a0));
    MPI_Type_vector(3, 1, 2, MPI_INT, &vec);
    MPI_Type_extent(vec, &extent);
    MPI_Type_lb(vec, &lb);
    MPI_Type_ub(vec, &ub);
    CHECK(extent == 5 * sizeof(int) && lb == 0 && ub == extent, "vector extent %ld lb %ld ub %ld",
          (long)extent, (long)lb, (long)ub);
    MPI_Type_hvector(2, 1, 3 * sizeof(int), vec, &hvec);
    MPI_Type_extent(hvec, &extent);
    CHECK(extent == 8 * sizeof(int), "hvector extent %ld", (long)extent);
    MPI_Type_free(&hvec);
    MPI_Type_free(&vec);
}

/* MPI_LB and MPI_UB in MPI_Type_struct set the bounds of the new type:
 * two ints padded to an extent of 16 bytes starting 4 bytes early. */
static void check_struct_markers(void)
{
    int lens[4] = {1, 2, 1, 1}, buf[8], got[8], tsize, right = (rank + 1) % size,
        left = (rank + size - 1) % size;
    MPI_Aint disps[4] = {-4, 0, 12, 8}, lb, extent, ub;
    MPI_Datatype types[4] = {MPI_LB, MPI_INT, MPI_UB, MPI_INT}, padded, hidx;

    MPI_Type_struct(4, lens, disps, types, &padded);
    MPI_Type_commit(&padded);
    MPI_Type_lb(padded, &lb);
    MPI_Type_ub(padded, &ub);
    MPI_Type_extent(padded, &extent);
    MPI_Type_size(padded, &tsize);
    CHECK(lb == -4 && ub == 12 && extent == 16 && tsize == 3 * sizeof(int),
          "struct with markers: lb %ld ub %ld extent %ld size %d", (long)lb, (long)ub, (long)extent, tsize);
    for (int i = 0; i < 8; i++) {
        buf[i] = rank * 10 + i;
        got[i] = -1;
    }
    /* two elements from buf[1]: ints 1,2,3 then (one extent, 4 ints on) 5,6,7 */
    MPI_Sendrecv(&buf[1], 2, padded, right, 0, got, 6, MPI_INT, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < 6; i++)
        CHECK(got[i] == left * 10 + 1 + i + i / 3, "struct data [%d] = %d", i, got[i]);
    MPI_Type_free(&padded);

    int blocks[2] = {1, 1};
    MPI_Aint hd[2] = {0, 2 * sizeof(int)};
    MPI_Type_hindexed(2, blocks, hd, MPI_INT, &hidx);
    MPI_Type_size(hidx, &tsize);
    MPI_Type_extent(hidx, &extent);
    CHECK(tsize == 2 * sizeof(int) && extent == 3 * sizeof(int), "hindexed size %d extent %ld", tsize,
          (long)extent);
    MPI_Type_free(&hidx);
}

static int handler_calls;

static void count_error(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    (void)code;
    handler_calls++;
}

static void check_errhandlers(void)
{
    MPI_Errhandler eh, got;
    int buf = 0;

    MPI_Errhandler_create(count_error, &eh);
    MPI_Errhandler_set(MPI_COMM_WORLD, eh);
    MPI_Errhandler_get(MPI_COMM_WORLD, &got);
    CHECK(got == eh, "MPI_Errhandler_get gave %#x, not %#x", (unsigned)got, (unsigned)eh);
    MPI_Errhandler_free(&got);
    MPI_Send(&buf, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
    CHECK(handler_calls == 1, "handler called %d times", handler_calls);
    MPI_Errhandler_set(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Errhandler_free(&eh);
}

static void check_gpu_queries(void)
{
    CHECK(MPIX_Query_cuda_support() == 0 && MPIX_Query_hip_support() == 0 && MPIX_Query_ze_support() == 0,
          "a GPU is said to be supported");
}

int main(int argc, char **argv)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_library_version(version, &len);
    if (rank == 0)
        printf("library: %.*s\n", (int)strcspn(version, "\n"), version);
    check_addresses_and_bounds();
    check_struct_markers();
    check_errhandlers();
    check_gpu_queries();
    printf("ok: rank %d of %d\n", rank, size);
    MPI_Finalize();
    return 0;
}
