/*
 * Probe, Iprobe, Mprobe/Mrecv and Improbe/Imrecv with ANY_SOURCE and
 * ANY_TAG while every rank sends to the root concurrently, eager and
 * rendezvous sizes mixed: sizes come from the probe's status, per-sender
 * order holds, and a matched probe removes its message (a later probe or
 * receive cannot see it, a concurrent receive cannot steal it).
 *
 * The root is the last rank (tu_barrier's arrivals go to rank 0).
 */
#include "testutil.h"

#define NMSG 16

static size_t msg_len(int phase, int src, int seq)
{
    uint64_t s = tu_seed(phase, src, 7, seq);
    switch (tu_rand(&s) % 4) {
    case 0:
        return tu_range(&s, 0, 8);
    case 1:
        return tu_range(&s, 9, 16500);
    case 2:
        return tu_range(&s, 16500, 300000);
    default:
        return tu_range(&s, 300000, 1 << 20);
    }
}

static void fill_msg(unsigned char *b, size_t len, int phase, int src, int seq)
{
    tu_fill(b, len, tu_seed(phase, src, 8, seq));
}

/* every rank but the root sends its sequence; the root's own come from
 * itself, nonblocking */
static void start_sends(int phase, int root, MPI_Request *reqs, unsigned char **bufs)
{
    for (int i = 0; i < NMSG; i++) {
        size_t len = msg_len(phase, tu_rank, i);
        bufs[i] = malloc(len + 1);
        fill_msg(bufs[i], len, phase, tu_rank, i);
        MPICHK(MPI_Isend(bufs[i], (int)len, MPI_BYTE, root, 100 + i, MPI_COMM_WORLD, &reqs[i]));
    }
}

static void end_sends(MPI_Request *reqs, unsigned char **bufs)
{
    MPICHK(MPI_Waitall(NMSG, reqs, MPI_STATUSES_IGNORE));
    for (int i = 0; i < NMSG; i++)
        free(bufs[i]);
}

/* One received message: right sender order, size and content. */
static void check_recv(int phase, int *next, const MPI_Status *st, const unsigned char *buf, size_t probed_len)
{
    int src = st->MPI_SOURCE;
    CHECK(src >= 0 && src < tu_size && next[src] < NMSG, "phase %d: source %d", phase, src);
    int seq = next[src]++;
    size_t len = msg_len(phase, src, seq);
    CHECK(st->MPI_TAG == 100 + seq, "phase %d: from %d expected tag %d next, got %d: order broken", phase, src,
          100 + seq, st->MPI_TAG);
    CHECK(probed_len == len, "phase %d: probe said %zu bytes, message %d from %d has %zu", phase, probed_len, seq, src,
          len);
    CHECK_STATUS(*st, src, 100 + seq, (int)len, MPI_BYTE);
    unsigned char *ref = malloc(len + 1);
    fill_msg(ref, len, phase, src, seq);
    CHECK(memcmp(ref, buf, len) == 0, "phase %d: message %d from %d (%zu bytes) differs", phase, seq, src, len);
    free(ref);
}

static size_t probed_bytes(const MPI_Status *st)
{
    int n = -1;
    if (!tu_get_count(st, MPI_BYTE, &n))
        CHECK(0, "no way to read a status count");
    CHECK(n >= 0, "probe status count %d", n);
    return (size_t)n;
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "p2p_probe");
    const int root = tu_size - 1;
    const int total = tu_size * NMSG;
    int *next = calloc((size_t)tu_size, sizeof(int));
    MPI_Request sreqs[NMSG];
    unsigned char *sbufs[NMSG];

    for (int phase = 1; phase <= 4; phase++) {
        start_sends(phase, root, sreqs, sbufs);
        if (tu_rank == root) {
            memset(next, 0, sizeof(int) * (size_t)tu_size);
            for (int k = 0; k < total; k++) {
                MPI_Status st, st2;
                unsigned char *buf;
                size_t len;
                int flag = 0;
                double t0 = tu_now();
                switch (phase) {
                case 1: /* Probe, then Recv of exactly that (source, tag) */
                    MPICHK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
                    len = probed_bytes(&st);
                    buf = malloc(len + 1);
                    MPICHK(MPI_Recv(buf, (int)len, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st2));
                    check_recv(phase, next, &st2, buf, len);
                    break;
                case 2: /* Iprobe loop */
                    while (!flag) {
                        MPICHK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
                        CHECK(tu_now() - t0 < 60, "Iprobe found nothing for 60 s (%d of %d received)", k, total);
                    }
                    len = probed_bytes(&st);
                    buf = malloc(len + 1);
                    MPICHK(MPI_Recv(buf, (int)len, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st2));
                    check_recv(phase, next, &st2, buf, len);
                    break;
                case 3: { /* Mprobe + Mrecv */
                    MPI_Message m = MPI_MESSAGE_NULL;
                    MPICHK(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &m, &st));
                    CHECK(m != MPI_MESSAGE_NULL && m != MPI_MESSAGE_NO_PROC, "Mprobe message 0x%x", (unsigned)m);
                    len = probed_bytes(&st);
                    buf = malloc(len + 1);
                    MPICHK(MPI_Mrecv(buf, (int)len, MPI_BYTE, &m, &st2));
                    CHECK(m == MPI_MESSAGE_NULL, "Mrecv left the message handle 0x%x", (unsigned)m);
                    CHECK(st2.MPI_SOURCE == st.MPI_SOURCE && st2.MPI_TAG == st.MPI_TAG,
                          "Mrecv got (%d, %d), Mprobe said (%d, %d)", st2.MPI_SOURCE, st2.MPI_TAG, st.MPI_SOURCE,
                          st.MPI_TAG);
                    check_recv(phase, next, &st2, buf, len);
                    break;
                }
                default: { /* Improbe + Imrecv, with a wildcard Irecv posted in between */
                    MPI_Message m = MPI_MESSAGE_NULL;
                    while (!flag) {
                        MPICHK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, &st));
                        CHECK(tu_now() - t0 < 60, "Improbe found nothing for 60 s (%d of %d received)", k, total);
                    }
                    len = probed_bytes(&st);
                    buf = malloc(len + 1);
                    /* a receive posted now must not get the probed message */
                    int stolen = 0;
                    MPI_Request thief, r;
                    MPICHK(MPI_Irecv(&stolen, 1, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &thief));
                    MPICHK(MPI_Imrecv(buf, (int)len, MPI_BYTE, &m, &r));
                    CHECK(m == MPI_MESSAGE_NULL, "Imrecv left the message handle 0x%x", (unsigned)m);
                    MPICHK(MPI_Wait(&r, &st2));
                    check_recv(phase, next, &st2, buf, len);
                    int tflag = 1;
                    MPICHK(MPI_Test(&thief, &tflag, MPI_STATUS_IGNORE));
                    CHECK(!tflag, "a receive posted after Improbe matched the probed message (source %d tag %d)",
                          st.MPI_SOURCE, st.MPI_TAG);
                    MPICHK(MPI_Cancel(&thief));
                    MPI_Status cst;
                    MPICHK(MPI_Wait(&thief, &cst));
                    MPICHK(MPI_Test_cancelled(&cst, &tflag));
                    CHECK(tflag, "the unmatched receive could not be cancelled");
                    break;
                }
                }
                free(buf);
            }
            int flag = 1;
            MPI_Status st;
            MPICHK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
            CHECK(!flag, "phase %d: a message (source %d tag %d) left over", phase, st.MPI_SOURCE, st.MPI_TAG);
        }
        end_sends(sreqs, sbufs);
        tu_barrier();
    }

    /* ---- a matched probe takes its message away from probes and receives */
    {
        int a = 1, b = 2, x = 0;
        MPI_Request s[2];
        MPI_Message m;
        MPI_Status st;
        MPICHK(MPI_Isend(&a, 1, MPI_INT, tu_rank, 7, MPI_COMM_WORLD, &s[0]));
        MPICHK(MPI_Isend(&b, 1, MPI_INT, tu_rank, 7, MPI_COMM_WORLD, &s[1]));
        MPICHK(MPI_Mprobe(tu_rank, 7, MPI_COMM_WORLD, &m, &st));
        int flag = 0;
        double t0 = tu_now();
        while (!flag) {
            MPICHK(MPI_Iprobe(tu_rank, 7, MPI_COMM_WORLD, &flag, &st));
            CHECK(tu_now() - t0 < 30, "second self message never seen");
        }
        MPICHK(MPI_Recv(&x, 1, MPI_INT, tu_rank, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(x == 2, "Recv after Mprobe got %d, expected the second message 2", x);
        MPICHK(MPI_Mrecv(&x, 1, MPI_INT, &m, MPI_STATUS_IGNORE));
        CHECK(x == 1, "Mrecv got %d, expected the first message 1", x);
        MPICHK(MPI_Waitall(2, s, MPI_STATUSES_IGNORE));
        /* Iprobe with a wrong tag sees nothing; Improbe with nothing there */
        MPICHK(MPI_Iprobe(tu_rank, 8, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        CHECK(!flag, "Iprobe found a message that was not sent");
        m = 123;
        MPICHK(MPI_Improbe(tu_rank, 8, MPI_COMM_WORLD, &flag, &m, MPI_STATUS_IGNORE));
        CHECK(!flag, "Improbe found a message that was not sent");
        /* a truncated Mrecv */
        char big[100], small[10];
        memset(big, 'x', sizeof big);
        memset(small, 0, sizeof small);
        MPICHK(MPI_Isend(big, 100, MPI_CHAR, tu_rank, 9, MPI_COMM_WORLD, &s[0]));
        MPICHK(MPI_Mprobe(tu_rank, 9, MPI_COMM_WORLD, &m, &st));
        EXPECT_CLASS(MPI_Mrecv(small, 5, MPI_CHAR, &m, &st), MPI_ERR_TRUNCATE);
        CHECK(small[4] == 'x' && small[5] == 0, "truncated Mrecv wrote %c at 5", small[5]);
        MPICHK(MPI_Wait(&s[0], MPI_STATUS_IGNORE));
    }
    free(next);
    tu_finish();
    return 0;
}
