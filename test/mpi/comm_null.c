/*
 * MPI_Comm_get_name(MPI_COMM_NULL) gives "MPI_COMM_NULL" (as MPICH);
 * MPI_Comm_disconnect fails with MPI_ERR_COMM on MPI_COMM_NULL and the
 * predefined communicators, and frees a communicator whose communication
 * has completed.
 */
#include "testutil.h"

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "comm_null");
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MPICHK(MPI_Comm_get_name(MPI_COMM_NULL, name, &len));
    CHECK(strcmp(name, "MPI_COMM_NULL") == 0 && len == 13, "name of MPI_COMM_NULL: \"%s\" (%d)", name, len);
    EXPECT_CLASS(MPI_Comm_get_name(MPI_COMM_NULL, NULL, &len), MPI_ERR_ARG);
    MPICHK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(strcmp(name, "MPI_COMM_WORLD") == 0, "name of MPI_COMM_WORLD: \"%s\"", name);

    MPI_Comm comm = MPI_COMM_NULL;
    EXPECT_CLASS(MPI_Comm_disconnect(&comm), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Comm_disconnect(NULL), MPI_ERR_ARG);
    comm = MPI_COMM_WORLD;
    EXPECT_CLASS(MPI_Comm_disconnect(&comm), MPI_ERR_COMM);
    comm = MPI_COMM_SELF;
    EXPECT_CLASS(MPI_Comm_disconnect(&comm), MPI_ERR_COMM);
    comm = (MPI_Comm)0x12345;
    EXPECT_CLASS(MPI_Comm_disconnect(&comm), MPI_ERR_COMM);

    MPICHK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    MPICHK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    int to = (tu_rank + 1) % tu_size, from = (tu_rank + tu_size - 1) % tu_size, in = -1;
    MPICHK(MPI_Sendrecv(&tu_rank, 1, MPI_INT, to, 0, &in, 1, MPI_INT, from, 0, comm, MPI_STATUS_IGNORE));
    CHECK(in == from, "got %d, expected %d", in, from);
    MPI_Comm copy = comm;
    MPICHK(MPI_Comm_disconnect(&comm));
    CHECK(comm == MPI_COMM_NULL, "MPI_Comm_disconnect left the handle 0x%x", (unsigned)comm);
    EXPECT_CLASS(MPI_Comm_disconnect(&copy), MPI_ERR_COMM);
    tu_finish();
    return 0;
}
