/*
 * The single-completion calls leave status.MPI_ERROR as the user set it
 * (MPI 4.1 3.2.5: their return code carries the error), both for
 * MPI_PROC_NULL and for a real message; MPICH behaves so. Each rank
 * exchanges with its neighbours (itself at one rank).
 */
#include "testutil.h"

#define MARK 4711 /* no error class has this value */
#define TAG 5

static MPI_Status marked(void)
{
    MPI_Status st;
    memset(&st, 0, sizeof st);
    st.MPI_ERROR = MARK;
    return st;
}

#define CHECK_KEPT(st, call) \
    CHECK((st).MPI_ERROR == MARK, "%s overwrote status.MPI_ERROR with %d", call, (st).MPI_ERROR)

static void proc_null_calls(void)
{
    MPI_Comm comm = MPI_COMM_WORLD;
    MPI_Status st;
    MPI_Message msg;
    MPI_Request req;
    int buf = 0, flag = 0, index = -1;

    st = marked();
    MPICHK(MPI_Recv(&buf, 1, MPI_INT, MPI_PROC_NULL, TAG, comm, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "MPI_Recv from MPI_PROC_NULL: source %d", st.MPI_SOURCE);
    CHECK_KEPT(st, "MPI_Recv(MPI_PROC_NULL)");
    st = marked();
    MPICHK(MPI_Probe(MPI_PROC_NULL, TAG, comm, &st));
    CHECK_KEPT(st, "MPI_Probe(MPI_PROC_NULL)");
    st = marked();
    MPICHK(MPI_Iprobe(MPI_PROC_NULL, TAG, comm, &flag, &st));
    CHECK_KEPT(st, "MPI_Iprobe(MPI_PROC_NULL)");
    st = marked();
    MPICHK(MPI_Mprobe(MPI_PROC_NULL, TAG, comm, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NO_PROC && st.MPI_SOURCE == MPI_PROC_NULL, "MPI_Mprobe(MPI_PROC_NULL)");
    CHECK_KEPT(st, "MPI_Mprobe(MPI_PROC_NULL)");
    st = marked();
    MPICHK(MPI_Mrecv(&buf, 1, MPI_INT, &msg, &st));
    CHECK_KEPT(st, "MPI_Mrecv(MPI_MESSAGE_NO_PROC)");
    st = marked();
    MPICHK(MPI_Improbe(MPI_PROC_NULL, TAG, comm, &flag, &msg, &st));
    CHECK(flag && msg == MPI_MESSAGE_NO_PROC, "MPI_Improbe(MPI_PROC_NULL): flag %d", flag);
    CHECK_KEPT(st, "MPI_Improbe(MPI_PROC_NULL)");
    MPICHK(MPI_Imrecv(&buf, 1, MPI_INT, &msg, &req));
    st = marked();
    MPICHK(MPI_Wait(&req, &st));
    CHECK_KEPT(st, "MPI_Wait(an MPI_Imrecv of MPI_MESSAGE_NO_PROC)");
    st = marked();
    MPICHK(MPI_Sendrecv(&buf, 1, MPI_INT, MPI_PROC_NULL, TAG, &buf, 1, MPI_INT, MPI_PROC_NULL, TAG, comm, &st));
    CHECK_KEPT(st, "MPI_Sendrecv(MPI_PROC_NULL)");

    /* null requests: the empty status, MPI_ERROR still kept */
    req = MPI_REQUEST_NULL;
    st = marked();
    MPICHK(MPI_Wait(&req, &st));
    CHECK_KEPT(st, "MPI_Wait(MPI_REQUEST_NULL)");
    st = marked();
    MPICHK(MPI_Test(&req, &flag, &st));
    CHECK_KEPT(st, "MPI_Test(MPI_REQUEST_NULL)");
    st = marked();
    MPICHK(MPI_Waitany(1, &req, &index, &st));
    CHECK_KEPT(st, "MPI_Waitany(MPI_REQUEST_NULL)");
    st = marked();
    MPICHK(MPI_Request_get_status(req, &flag, &st));
    CHECK_KEPT(st, "MPI_Request_get_status(MPI_REQUEST_NULL)");
}

static void message_calls(void)
{
    MPI_Comm comm = MPI_COMM_WORLD;
    int to = (tu_rank + 1) % tu_size, from = (tu_rank + tu_size - 1) % tu_size;
    int out = tu_rank, in = -1, flag = 0, index = -1;
    MPI_Request sreq[3], rreq;
    MPI_Status st;
    MPI_Message msg;

    /* MPI_Probe, MPI_Iprobe, MPI_Mprobe, MPI_Mrecv, MPI_Recv */
    for (int i = 0; i < 3; i++)
        MPICHK(MPI_Isend(&out, 1, MPI_INT, to, TAG + i, comm, &sreq[i]));
    st = marked();
    MPICHK(MPI_Probe(from, TAG, comm, &st));
    CHECK_STATUS(st, from, TAG, 1, MPI_INT);
    CHECK_KEPT(st, "MPI_Probe");
    st = marked();
    do
        MPICHK(MPI_Iprobe(from, TAG, comm, &flag, &st));
    while (!flag);
    CHECK_KEPT(st, "MPI_Iprobe");
    st = marked();
    MPICHK(MPI_Mprobe(from, TAG, comm, &msg, &st));
    CHECK_KEPT(st, "MPI_Mprobe");
    st = marked();
    MPICHK(MPI_Mrecv(&in, 1, MPI_INT, &msg, &st));
    CHECK(in == from, "MPI_Mrecv got %d, expected %d", in, from);
    CHECK_KEPT(st, "MPI_Mrecv");
    st = marked();
    MPICHK(MPI_Wait(&sreq[0], &st));
    CHECK_KEPT(st, "MPI_Wait (a send)");
    st = marked();
    MPICHK(MPI_Recv(&in, 1, MPI_INT, from, TAG + 1, comm, &st));
    CHECK_KEPT(st, "MPI_Recv");
    MPICHK(MPI_Improbe(from, TAG + 2, comm, &flag, &msg, MPI_STATUS_IGNORE));
    while (!flag) {
        st = marked();
        MPICHK(MPI_Improbe(from, TAG + 2, comm, &flag, &msg, &st));
        if (flag)
            CHECK_KEPT(st, "MPI_Improbe");
    }
    MPICHK(MPI_Imrecv(&in, 1, MPI_INT, &msg, &rreq));
    st = marked();
    do
        MPICHK(MPI_Test(&rreq, &flag, &st));
    while (!flag);
    CHECK_KEPT(st, "MPI_Test");
    MPICHK(MPI_Waitall(3, sreq, MPI_STATUSES_IGNORE));

    /* MPI_Request_get_status, MPI_Waitany, MPI_Testany, MPI_Sendrecv */
    MPICHK(MPI_Irecv(&in, 1, MPI_INT, from, TAG, comm, &rreq));
    MPICHK(MPI_Send(&out, 1, MPI_INT, to, TAG, comm));
    do {
        st = marked();
        MPICHK(MPI_Request_get_status(rreq, &flag, &st));
    } while (!flag);
    CHECK_KEPT(st, "MPI_Request_get_status");
    st = marked();
    MPICHK(MPI_Waitany(1, &rreq, &index, &st));
    CHECK(index == 0, "MPI_Waitany: index %d", index);
    CHECK_KEPT(st, "MPI_Waitany");
    MPICHK(MPI_Irecv(&in, 1, MPI_INT, from, TAG, comm, &rreq));
    MPICHK(MPI_Send(&out, 1, MPI_INT, to, TAG, comm));
    do {
        st = marked();
        MPICHK(MPI_Testany(1, &rreq, &index, &flag, &st));
    } while (!flag);
    CHECK_KEPT(st, "MPI_Testany");
    st = marked();
    MPICHK(MPI_Sendrecv(&out, 1, MPI_INT, to, TAG, &in, 1, MPI_INT, from, TAG, comm, &st));
    CHECK_STATUS(st, from, TAG, 1, MPI_INT);
    CHECK_KEPT(st, "MPI_Sendrecv");
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "status_error");
    proc_null_calls();
    message_calls();
    tu_finish();
    return 0;
}
