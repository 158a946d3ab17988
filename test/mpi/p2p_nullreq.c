/*
 * The nonblocking and persistent point-to-point calls with request NULL:
 * each is an error (MPI_ERR_ARG or MPI_ERR_REQUEST) and does nothing; a
 * send must not go out as a blocking one, a receive must not block.
 * Every rank addresses its right neighbour (itself at one rank).
 */
#include "testutil.h"

#define TAG 11

static void expect_null_request_error(int rc, const char *call)
{
    int cls = -1;
    CHECK(rc != MPI_SUCCESS, "%s with request NULL succeeded", call);
    MPICHK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_ARG || cls == MPI_ERR_REQUEST, "%s with request NULL: %s", call, tu_errstr(rc));
}

#define EXPECT_NULL_REQUEST(call) expect_null_request_error((call), #call)

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "p2p_nullreq");
    int to = (tu_rank + 1) % tu_size, from = (tu_rank + tu_size - 1) % tu_size;
    int out = 42 + tu_rank, in = -1, flag = -1;
    MPI_Comm comm = MPI_COMM_WORLD;

    static char bsend_buf[4096];
    MPICHK(MPI_Buffer_attach(bsend_buf, sizeof bsend_buf));
    EXPECT_NULL_REQUEST(MPI_Isend(&out, 1, MPI_INT, to, TAG, comm, NULL));
    EXPECT_NULL_REQUEST(MPI_Issend(&out, 1, MPI_INT, to, TAG, comm, NULL));
    EXPECT_NULL_REQUEST(MPI_Irsend(&out, 1, MPI_INT, to, TAG, comm, NULL));
    EXPECT_NULL_REQUEST(MPI_Ibsend(&out, 1, MPI_INT, to, TAG, comm, NULL));
    EXPECT_NULL_REQUEST(MPI_Irecv(&in, 1, MPI_INT, from, TAG, comm, NULL));
    EXPECT_NULL_REQUEST(MPI_Irecv(&in, 1, MPI_INT, MPI_PROC_NULL, TAG, comm, NULL));
    EXPECT_NULL_REQUEST(MPI_Send_init(&out, 1, MPI_INT, to, TAG, comm, NULL));
    EXPECT_NULL_REQUEST(MPI_Ssend_init(&out, 1, MPI_INT, to, TAG, comm, NULL));
    EXPECT_NULL_REQUEST(MPI_Rsend_init(&out, 1, MPI_INT, to, TAG, comm, NULL));
    EXPECT_NULL_REQUEST(MPI_Bsend_init(&out, 1, MPI_INT, to, TAG, comm, NULL));
    EXPECT_NULL_REQUEST(MPI_Recv_init(&in, 1, MPI_INT, from, TAG, comm, NULL));
    EXPECT_NULL_REQUEST(MPI_Isendrecv(&out, 1, MPI_INT, to, TAG, &in, 1, MPI_INT, from, TAG, comm, NULL));
    EXPECT_NULL_REQUEST(MPI_Isendrecv_replace(&out, 1, MPI_INT, to, TAG, from, TAG, comm, NULL));
    MPI_Message msg = MPI_MESSAGE_NO_PROC;
    EXPECT_NULL_REQUEST(MPI_Imrecv(&in, 1, MPI_INT, &msg, NULL));
    CHECK(msg == MPI_MESSAGE_NO_PROC, "a failed MPI_Imrecv consumed the message (0x%x)", (unsigned)msg);
    EXPECT_CLASS(MPI_Improbe(MPI_PROC_NULL, TAG, comm, &flag, NULL, MPI_STATUS_IGNORE), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Improbe(MPI_PROC_NULL, TAG, comm, NULL, &msg, MPI_STATUS_IGNORE), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Iprobe(from, TAG, comm, NULL, MPI_STATUS_IGNORE), MPI_ERR_ARG);
    CHECK(in == -1, "a failed receive wrote the buffer (%d)", in);

    /* None of the failed sends went out: a message sent after them from the
     * same peer arrives, and nothing with TAG came before it. */
    MPICHK(MPI_Sendrecv(&out, 1, MPI_INT, to, TAG + 1, &in, 1, MPI_INT, from, TAG + 1, comm,
                        MPI_STATUS_IGNORE));
    MPICHK(MPI_Iprobe(MPI_ANY_SOURCE, TAG, comm, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "a send that failed for its NULL request delivered a message");

    void *detached;
    int size;
    MPICHK(MPI_Buffer_detach(&detached, &size));
    tu_finish();
    return 0;
}
