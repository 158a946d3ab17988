/*
 * Request arrays holding values that were never requests (garbage ints,
 * freed handles, handles of other object kinds, an MPI_Mprobe message):
 * every completion call reports MPI_ERR_REQUEST, naming the index and the
 * value for arrays, and never crashes or touches the valid requests.
 */
#include "testutil.h"

#define TAG 3

/* rc must be MPI_ERR_REQUEST and its text must contain each of the words. */
static void expect_request_error(int rc, const char *call, const char *word1, const char *word2)
{
    int cls = -1, len = 0;
    char text[MPI_MAX_ERROR_STRING];
    CHECK(rc != MPI_SUCCESS, "%s accepted an invalid request", call);
    MPICHK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_REQUEST, "%s: %s", call, tu_errstr(rc));
    MPICHK(MPI_Error_string(rc, text, &len));
    CHECK(strstr(text, word1) && (!word2 || strstr(text, word2)), "%s: the message \"%s\" does not name %s%s%s",
          call, text, word1, word2 ? " and " : "", word2 ? word2 : "");
}

/* Every array call on reqs, whose entry bad is invalid. */
static void array_calls(MPI_Request *reqs, int n, int bad)
{
    char idx[32], val[32];
    snprintf(idx, sizeof idx, "[%d]", bad);
    snprintf(val, sizeof val, "0x%x", (unsigned)reqs[bad]);
    int flag, index, outcount, indices[8];
    MPI_Status st, sts[8];
    expect_request_error(MPI_Waitall(n, reqs, sts), "MPI_Waitall", idx, val);
    expect_request_error(MPI_Testall(n, reqs, &flag, MPI_STATUSES_IGNORE), "MPI_Testall", idx, val);
    expect_request_error(MPI_Waitany(n, reqs, &index, &st), "MPI_Waitany", idx, val);
    expect_request_error(MPI_Testany(n, reqs, &index, &flag, MPI_STATUS_IGNORE), "MPI_Testany", idx, val);
    expect_request_error(MPI_Waitsome(n, reqs, &outcount, indices, sts), "MPI_Waitsome", idx, val);
    expect_request_error(MPI_Testsome(n, reqs, &outcount, indices, MPI_STATUSES_IGNORE), "MPI_Testsome", idx, val);
    expect_request_error(MPI_Request_get_status_all(n, reqs, &flag, MPI_STATUSES_IGNORE),
                         "MPI_Request_get_status_all", idx, val);
    expect_request_error(MPI_Request_get_status_any(n, reqs, &index, &flag, MPI_STATUS_IGNORE),
                         "MPI_Request_get_status_any", idx, val);
    expect_request_error(MPI_Request_get_status_some(n, reqs, &outcount, indices, MPI_STATUSES_IGNORE),
                         "MPI_Request_get_status_some", idx, val);
}

/* The single-request calls on the invalid handle h. */
static void single_calls(MPI_Request h)
{
    char val[32];
    snprintf(val, sizeof val, "0x%x", (unsigned)h);
    MPI_Request r = h;
    int flag;
    expect_request_error(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait", val, NULL);
    expect_request_error(MPI_Test(&r, &flag, MPI_STATUS_IGNORE), "MPI_Test", val, NULL);
    expect_request_error(MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE), "MPI_Request_get_status", val, NULL);
    expect_request_error(MPI_Request_free(&r), "MPI_Request_free", val, NULL);
    expect_request_error(MPI_Cancel(&r), "MPI_Cancel", val, NULL);
    expect_request_error(MPI_Start(&r), "MPI_Start", val, NULL);
    CHECK(r == h, "a failed call changed the handle 0x%x to 0x%x", (unsigned)h, (unsigned)r);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "req_garbage");
    int to = (tu_rank + 1) % tu_size, from = (tu_rank + tu_size - 1) % tu_size;
    int out = tu_rank, in = -1;

    MPI_Request freed;
    MPICHK(MPI_Irecv(&in, 1, MPI_INT, from, TAG, MPI_COMM_WORLD, &freed));
    MPI_Request live = freed;
    MPICHK(MPI_Cancel(&live));
    MPICHK(MPI_Wait(&live, MPI_STATUS_IGNORE));
    /* before its slot is given out again */
    single_calls(freed);
    array_calls(&freed, 1, 0);
    MPI_Message msg;
    MPICHK(MPI_Send(&out, 1, MPI_INT, to, TAG, MPI_COMM_WORLD));
    MPICHK(MPI_Mprobe(from, TAG, MPI_COMM_WORLD, &msg, MPI_STATUS_IGNORE));

    const MPI_Request garbage[] = {
        (MPI_Request)12345, (MPI_Request)-1, (MPI_Request)0, (MPI_Request)0x7fffffff,
        (MPI_Request)0xac00ffff, /* a request's kind and type bits, an index never given out */
        (MPI_Request)0x6c000000, /* a builtin handle (MPI_MESSAGE_NO_PROC) */
        (MPI_Request)MPI_COMM_WORLD, (MPI_Request)msg,
    };
    int ngarbage = (int)(sizeof garbage / sizeof garbage[0]);
    for (int g = 0; g < ngarbage; g++) {
        single_calls(garbage[g]);
        /* after a valid pending receive, a null request and an inactive
         * persistent one */
        MPI_Request reqs[4];
        MPICHK(MPI_Irecv(&in, 1, MPI_INT, from, TAG + 1, MPI_COMM_WORLD, &reqs[0]));
        reqs[1] = MPI_REQUEST_NULL;
        MPICHK(MPI_Recv_init(&in, 1, MPI_INT, from, TAG + 1, MPI_COMM_WORLD, &reqs[2]));
        reqs[3] = garbage[g];
        array_calls(reqs, 4, 3);
        CHECK(reqs[1] == MPI_REQUEST_NULL && reqs[3] == garbage[g], "a failed call changed the array");
        MPICHK(MPI_Request_free(&reqs[2]));
        MPICHK(MPI_Send(&out, 1, MPI_INT, to, TAG + 1, MPI_COMM_WORLD));
        MPICHK(MPI_Wait(&reqs[0], MPI_STATUS_IGNORE));
        CHECK(in == from, "the valid receive got %d, expected %d", in, from);
    }
    MPICHK(MPI_Mrecv(&in, 1, MPI_INT, &msg, MPI_STATUS_IGNORE));
    tu_finish();
    return 0;
}
