/* MPI_Publish_name, MPI_Lookup_name, MPI_Unpublish_name through bmpirun's
 * name service: rank 0 publishes, everybody looks up, the error classes of
 * a duplicate, a foreign unpublish, a missing name and bad arguments. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>

static int failures;

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("rank %d: FAIL line %d: ", rank, __LINE__);                                     \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static int err_class(int code)
{
    int cls;
    MPI_Error_class(code, &cls);
    return cls;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char port[MPI_MAX_PORT_NAME], svc[64], want[64];
    snprintf(svc, sizeof(svc), "bmpi-test-names");
    snprintf(want, sizeof(want), "port-of-rank-0");

    if (rank == 0) {
        EXPECT(MPI_Publish_name(svc, MPI_INFO_NULL, want) == MPI_SUCCESS, "publish");
        int rc = MPI_Publish_name(svc, MPI_INFO_NULL, "another");
        EXPECT(err_class(rc) == MPI_ERR_SERVICE, "duplicate publish gave class %d", err_class(rc));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    memset(port, 0, sizeof(port));
    EXPECT(MPI_Lookup_name(svc, MPI_INFO_NULL, port) == MPI_SUCCESS, "lookup");
    EXPECT(strcmp(port, want) == 0, "lookup gave '%s'", port);
    int rc = MPI_Lookup_name("bmpi-test-never-published", MPI_INFO_NULL, port);
    EXPECT(err_class(rc) == MPI_ERR_NAME, "missing name gave class %d", err_class(rc));
    if (rank == size - 1 && size > 1) {
        rc = MPI_Unpublish_name(svc, MPI_INFO_NULL, want);
        EXPECT(err_class(rc) == MPI_ERR_SERVICE, "unpublish of another's name gave class %d", err_class(rc));
    }
    rc = MPI_Lookup_name(NULL, MPI_INFO_NULL, port);
    EXPECT(err_class(rc) == MPI_ERR_ARG, "NULL service gave class %d", err_class(rc));
    rc = MPI_Publish_name(svc, MPI_INFO_NULL, NULL);
    EXPECT(err_class(rc) == MPI_ERR_ARG, "NULL port name gave class %d", err_class(rc));
    rc = MPI_Lookup_name(svc, (MPI_Info)0x7777, port);
    EXPECT(err_class(rc) == MPI_ERR_INFO, "bad info gave class %d", err_class(rc));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        EXPECT(MPI_Unpublish_name(svc, MPI_INFO_NULL, want) == MPI_SUCCESS, "unpublish");
    MPI_Barrier(MPI_COMM_WORLD);
    rc = MPI_Lookup_name(svc, MPI_INFO_NULL, port);
    EXPECT(err_class(rc) == MPI_ERR_NAME, "lookup after unpublish gave class %d", err_class(rc));
    rc = MPI_Unpublish_name(svc, MPI_INFO_NULL, want);
    EXPECT(err_class(rc) == MPI_ERR_SERVICE, "second unpublish gave class %d", err_class(rc));

    /* a name published again after its unpublish is a new name */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == size - 1) {
        EXPECT(MPI_Publish_name(svc, MPI_INFO_NULL, "port-of-last") == MPI_SUCCESS, "republish");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT(MPI_Lookup_name(svc, MPI_INFO_NULL, port) == MPI_SUCCESS && strcmp(port, "port-of-last") == 0,
           "lookup of the republished name gave '%s'", port);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == size - 1)
        EXPECT(MPI_Unpublish_name(svc, MPI_INFO_NULL, "port-of-last") == MPI_SUCCESS, "unpublish");

    int total;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(total ? "names: %d failures\n" : "names: ok\n", total);
    MPI_Finalize();
    return total != 0;
}
