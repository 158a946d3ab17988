/*
 * Bad arguments under MPI_ERRORS_RETURN give the right error class, and
 * the error string names the call; communication works afterwards.
 *
 *   p2p_errors          the checks
 *   p2p_errors fatal    MPI_Send to rank 12345 under MPI_ERRORS_ARE_FATAL:
 *                       must not return (p2p_errors.sh checks the exit code
 *                       and that stderr names MPI_Send and 12345)
 */
#include "testutil.h"

#include <limits.h>
#include <unistd.h>

#define BAD_RANK 12345

static void expect_string(int rc, const char *fn, const char *value)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPICHK(MPI_Error_string(rc, s, &len));
    CHECK(strstr(s, fn) != NULL, "error string \"%s\" does not name %s", s, fn);
    if (value)
        CHECK(strstr(s, value) != NULL, "error string \"%s\" does not name the bad value %s", s, value);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "p2p_errors");
    int right = (tu_rank + 1) % tu_size, left = (tu_rank + tu_size - 1) % tu_size;
    int x = 0, buf[16] = {0};
    MPI_Request r;
    MPI_Status st;

    if (argc > 1 && strcmp(argv[1], "fatal") == 0) {
        MPICHK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
        if (tu_rank == 0) {
            MPI_Send(&x, 1, MPI_INT, BAD_RANK, 0, MPI_COMM_WORLD);
            fprintf(stderr, "p2p_errors: MPI_Send to rank %d returned under MPI_ERRORS_ARE_FATAL\n", BAD_RANK);
            fflush(stderr);
            _exit(0); /* "success": the .sh must catch it */
        }
        /* the others wait for a message that never comes: the launcher must
         * take them down when rank 0 dies */
        MPI_Recv(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        _exit(0);
    }

    /* ---- ranks */
    EXPECT_CLASS(MPI_Send(&x, 1, MPI_INT, BAD_RANK, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    expect_string(MPI_Send(&x, 1, MPI_INT, BAD_RANK, 0, MPI_COMM_WORLD), "MPI_Send", "12345");
    EXPECT_CLASS(MPI_Send(&x, 1, MPI_INT, tu_size, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Send(&x, 1, MPI_INT, -5, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Send(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Isend(&x, 1, MPI_INT, tu_size, 0, MPI_COMM_WORLD, &r), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Ssend(&x, 1, MPI_INT, tu_size, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Rsend(&x, 1, MPI_INT, tu_size, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Bsend(&x, 1, MPI_INT, tu_size, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Recv(&x, 1, MPI_INT, tu_size, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Irecv(&x, 1, MPI_INT, -7, 0, MPI_COMM_WORLD, &r), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Probe(tu_size, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK);
    int flag;
    EXPECT_CLASS(MPI_Iprobe(tu_size, 0, MPI_COMM_WORLD, &flag, &st), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Send_init(&x, 1, MPI_INT, tu_size, 0, MPI_COMM_WORLD, &r), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Sendrecv(&x, 1, MPI_INT, tu_size, 0, &x, 1, MPI_INT, left, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK);

    /* ---- counts */
    EXPECT_CLASS(MPI_Send(buf, -1, MPI_INT, right, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    expect_string(MPI_Send(buf, -1, MPI_INT, right, 0, MPI_COMM_WORLD), "MPI_Send", "-1");
    EXPECT_CLASS(MPI_Isend(buf, -3, MPI_INT, right, 0, MPI_COMM_WORLD, &r), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Recv(buf, -1, MPI_INT, left, 0, MPI_COMM_WORLD, &st), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Irecv(buf, -1, MPI_INT, left, 0, MPI_COMM_WORLD, &r), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Recv_init(buf, -1, MPI_INT, left, 0, MPI_COMM_WORLD, &r), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Bsend(buf, -1, MPI_INT, right, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);

    /* ---- tags */
    EXPECT_CLASS(MPI_Send(&x, 1, MPI_INT, right, -5, MPI_COMM_WORLD), MPI_ERR_TAG);
    expect_string(MPI_Send(&x, 1, MPI_INT, right, -5, MPI_COMM_WORLD), "MPI_Send", "-5");
    EXPECT_CLASS(MPI_Send(&x, 1, MPI_INT, right, MPI_ANY_TAG, MPI_COMM_WORLD), MPI_ERR_TAG);
    EXPECT_CLASS(MPI_Isend(&x, 1, MPI_INT, right, -5, MPI_COMM_WORLD, &r), MPI_ERR_TAG);
    EXPECT_CLASS(MPI_Recv(&x, 1, MPI_INT, left, -5, MPI_COMM_WORLD, &st), MPI_ERR_TAG);
    EXPECT_CLASS(MPI_Bsend(&x, 1, MPI_INT, right, -5, MPI_COMM_WORLD), MPI_ERR_TAG);
    EXPECT_CLASS(MPI_Iprobe(left, -5, MPI_COMM_WORLD, &flag, &st), MPI_ERR_TAG);
    {
        int *ub = NULL, have = 0;
        int rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &have), cls = -1;
        MPI_Error_class(rc, &cls);
        /* not implemented yet: the negative tags above have to do */
        if (cls == MPI_ERR_UNSUPPORTED_OPERATION && tu_rank == 0)
            printf("NOTE p2p_errors: MPI_Comm_get_attr is a stub; tag > MPI_TAG_UB not checked\n");
        if (cls != MPI_ERR_UNSUPPORTED_OPERATION) {
            MPICHK(rc);
            CHECK(have && ub && *ub >= 32767, "MPI_TAG_UB attribute: flag %d value %d", have, ub ? *ub : -1);
            if (*ub < INT_MAX) {
                EXPECT_CLASS(MPI_Send(&x, 1, MPI_INT, right, *ub + 1, MPI_COMM_WORLD), MPI_ERR_TAG);
                EXPECT_CLASS(MPI_Irecv(&x, 1, MPI_INT, left, *ub + 1, MPI_COMM_WORLD, &r), MPI_ERR_TAG);
            }
            /* the upper bound itself is a valid tag */
            MPICHK(MPI_Irecv(&x, 1, MPI_INT, left, *ub, MPI_COMM_WORLD, &r));
            int y = 5;
            MPICHK(MPI_Send(&y, 1, MPI_INT, right, *ub, MPI_COMM_WORLD));
            MPICHK(MPI_Wait(&r, &st));
            CHECK(x == 5 && st.MPI_TAG == *ub, "message with tag MPI_TAG_UB: value %d tag %d", x, st.MPI_TAG);
        }
    }

    /* ---- datatypes */
    EXPECT_CLASS(MPI_Send(&x, 1, MPI_DATATYPE_NULL, right, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Recv(&x, 1, MPI_DATATYPE_NULL, left, 0, MPI_COMM_WORLD, &st), MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Send(&x, 1, (MPI_Datatype)0x12345678, right, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    {
        MPI_Datatype t;
        if (TU_OPTIONAL(MPI_Type_contiguous(4, MPI_INT, &t), "MPI_Type_contiguous")) {
            /* not committed */
            EXPECT_CLASS(MPI_Send(buf, 1, t, right, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
            EXPECT_CLASS(MPI_Irecv(buf, 1, t, left, 0, MPI_COMM_WORLD, &r), MPI_ERR_TYPE);
            /* committed, then freed: the handle is dead */
            MPICHK(MPI_Type_commit(&t));
            MPI_Datatype stale = t;
            MPICHK(MPI_Type_free(&t));
            EXPECT_CLASS(MPI_Send(buf, 1, stale, right, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
            EXPECT_CLASS(MPI_Recv(buf, 1, stale, left, 0, MPI_COMM_WORLD, &st), MPI_ERR_TYPE);
        }
    }

    /* ---- communicators */
    EXPECT_CLASS(MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &st), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Isend(&x, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &r), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Irecv(&x, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &r), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Probe(0, 0, MPI_COMM_NULL, &st), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Bsend(&x, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Send(&x, 1, MPI_INT, 0, 0, (MPI_Comm)0x12345678), MPI_ERR_COMM);

    /* ---- requests */
    r = MPI_REQUEST_NULL;
    EXPECT_CLASS(MPI_Start(&r), MPI_ERR_REQUEST);
    MPI_Request two[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    EXPECT_CLASS(MPI_Startall(2, two), MPI_ERR_REQUEST);
    r = MPI_REQUEST_NULL;
    EXPECT_CLASS(MPI_Request_free(&r), MPI_ERR_REQUEST);
    r = MPI_REQUEST_NULL;
    EXPECT_CLASS(MPI_Cancel(&r), MPI_ERR_REQUEST);
    /* a non-persistent request cannot be started */
    MPICHK(MPI_Irecv(&x, 1, MPI_INT, left, 30, MPI_COMM_WORLD, &r));
    EXPECT_CLASS(MPI_Start(&r), MPI_ERR_REQUEST);
    int y = 77;
    MPICHK(MPI_Send(&y, 1, MPI_INT, right, 30, MPI_COMM_WORLD));
    MPICHK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(x == 77, "after the errors: got %d", x);
    /* a garbage handle */
    r = (MPI_Request)0x12345678;
    EXPECT_CLASS(MPI_Wait(&r, &st), MPI_ERR_REQUEST);

    /* ---- nothing was sent by the failed calls: a probe finds nothing */
    tu_barrier();
    MPICHK(MPI_Iprobe(MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &flag, &st));
    CHECK(!flag, "a failed call sent a message (source %d tag %d)", st.MPI_SOURCE, st.MPI_TAG);
    tu_finish();
    return 0;
}
