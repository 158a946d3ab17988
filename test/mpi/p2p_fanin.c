/*
 * ANY_SOURCE fan-in: every rank (the root too, to itself) sends a sequence
 * of messages of mixed sizes (eager and rendezvous interleaved) and tags to
 * the root, which receives them with wildcards. MPI's non-overtaking rule:
 * from one sender, matching follows sending order, whatever the protocol.
 *
 *  1. blocking MPI_Recv(ANY_SOURCE, ANY_TAG)
 *  2. a window of pre-posted MPI_Irecv(ANY_SOURCE, ANY_TAG), completed with
 *     MPI_Waitsome: order is checked in posting order
 *  3. ANY_SOURCE with a fixed tag: all of tag B first, then tag A; the
 *     order holds within each tag
 *
 * The root is the last rank: tu_barrier sends arrival messages to rank 0,
 * which must not meet an (ANY_SOURCE, ANY_TAG) receive.
 */
#include "testutil.h"

#define NMSG 24
#define MAXLEN (160 * 1024)

static size_t msg_len(int phase, int src, int seq)
{
    uint64_t s = tu_seed(phase, src, 0, seq);
    switch (tu_rand(&s) % 5) {
    case 0:
        return tu_range(&s, 0, 16);
    case 1:
        return tu_range(&s, 16000, 17000);
    case 2:
        return tu_range(&s, 40000, MAXLEN - 16); /* rendezvous */
    default:
        return tu_range(&s, 16, 4000);
    }
}

/* Payload: sender and sequence number in front, then the pattern. */
static void make_msg(unsigned char *buf, size_t len, int phase, int src, int seq)
{
    tu_fill(buf, len, tu_seed(phase, src, 1, seq));
    if (len >= 8) {
        int hdr[2] = {src, seq};
        memcpy(buf, hdr, 8);
    }
}

static void check_msg(const unsigned char *buf, const MPI_Status *st, int phase, int expect_seq, int expect_tag)
{
    int src = st->MPI_SOURCE;
    CHECK(src >= 0 && src < tu_size, "phase %d: source %d", phase, src);
    size_t len = msg_len(phase, src, expect_seq);
    CHECK_STATUS(*st, src, expect_tag, (int)len, MPI_BYTE);
    if (len >= 8) {
        int hdr[2];
        memcpy(hdr, buf, 8);
        CHECK(hdr[0] == src && hdr[1] == expect_seq,
              "phase %d: from %d expected message %d next, got message %d (of rank %d): overtaken", phase, src,
              expect_seq, hdr[1], hdr[0]);
    }
    unsigned char *ref = malloc(len + 1);
    make_msg(ref, len, phase, src, expect_seq);
    CHECK(memcmp(ref, buf, len) == 0, "phase %d: message %d from %d (%zu bytes) differs", phase, expect_seq, src,
          len);
    free(ref);
}

static int tag_of(int phase, int seq)
{
    return phase == 3 ? (seq % 3 == 0 ? 7 : 5) : seq % 4;
}

static void send_all(int phase, int root)
{
    MPI_Request reqs[NMSG];
    unsigned char *bufs[NMSG];
    for (int i = 0; i < NMSG; i++) {
        size_t len = msg_len(phase, tu_rank, i);
        bufs[i] = malloc(len + 1);
        make_msg(bufs[i], len, phase, tu_rank, i);
        int tag = tag_of(phase, i);
        switch (i % 3) {
        case 0:
            MPICHK(MPI_Isend(bufs[i], (int)len, MPI_BYTE, root, tag, MPI_COMM_WORLD, &reqs[i]));
            break;
        case 1:
            MPICHK(MPI_Issend(bufs[i], (int)len, MPI_BYTE, root, tag, MPI_COMM_WORLD, &reqs[i]));
            break;
        default:
            MPICHK(MPI_Isend(bufs[i], (int)len, MPI_BYTE, root, tag, MPI_COMM_WORLD, &reqs[i]));
            break;
        }
    }
    (void)root;
    MPICHK(MPI_Waitall(NMSG, reqs, MPI_STATUSES_IGNORE));
    for (int i = 0; i < NMSG; i++)
        free(bufs[i]);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "p2p_fanin");
    const int root = tu_size - 1;
    const int total = tu_size * NMSG;
    int *next = calloc((size_t)tu_size, sizeof(int));
    unsigned char *buf = malloc(MAXLEN);

    /* ---- 1: blocking wildcard receives */
    {
        MPI_Request own[NMSG];
        unsigned char *ownbuf[NMSG];
        int nown = 0;
        if (tu_rank == root) {
            /* own messages to itself first, nonblocking */
            for (int i = 0; i < NMSG; i++) {
                size_t len = msg_len(1, tu_rank, i);
                ownbuf[i] = malloc(len + 1);
                make_msg(ownbuf[i], len, 1, tu_rank, i);
                MPICHK(MPI_Isend(ownbuf[i], (int)len, MPI_BYTE, root, tag_of(1, i), MPI_COMM_WORLD, &own[i]));
                nown++;
            }
            for (int k = 0; k < total; k++) {
                MPI_Status st;
                MPICHK(MPI_Recv(buf, MAXLEN, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
                int src = st.MPI_SOURCE;
                CHECK(src >= 0 && src < tu_size, "source %d", src);
                CHECK(next[src] < NMSG, "more than %d messages from %d", NMSG, src);
                check_msg(buf, &st, 1, next[src], tag_of(1, next[src]));
                next[src]++;
            }
            MPICHK(MPI_Waitall(nown, own, MPI_STATUSES_IGNORE));
            for (int i = 0; i < nown; i++)
                free(ownbuf[i]);
        } else {
            send_all(1, root);
        }
    }
    tu_barrier();

    /* ---- 2: pre-posted wildcard receives, completed in any order */
    {
        MPI_Request own[NMSG];
        unsigned char *ownbuf[NMSG];
        if (tu_rank == root) {
            MPI_Request *rr = malloc(sizeof(MPI_Request) * (size_t)total);
            MPI_Status *sts = malloc(sizeof(MPI_Status) * (size_t)total);
            unsigned char **rb = malloc(sizeof(void *) * (size_t)total);
            int *idx = malloc(sizeof(int) * (size_t)total);
            for (int k = 0; k < total; k++) {
                rb[k] = malloc(MAXLEN);
                MPICHK(MPI_Irecv(rb[k], MAXLEN, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rr[k]));
            }
            for (int i = 0; i < NMSG; i++) {
                size_t len = msg_len(2, tu_rank, i);
                ownbuf[i] = malloc(len + 1);
                make_msg(ownbuf[i], len, 2, tu_rank, i);
                MPICHK(MPI_Isend(ownbuf[i], (int)len, MPI_BYTE, root, tag_of(2, i), MPI_COMM_WORLD, &own[i]));
            }
            /* go: the senders start only now, with every receive posted */
            for (int r = 0; r < tu_size; r++)
                if (r != root)
                    MPICHK(MPI_Send(NULL, 0, MPI_BYTE, r, 999, MPI_COMM_WORLD));
            MPI_Status *all = malloc(sizeof(MPI_Status) * (size_t)total);
            int done = 0;
            while (done < total) {
                int out;
                MPICHK(MPI_Waitsome(total, rr, &out, idx, sts));
                CHECK(out != MPI_UNDEFINED && out > 0, "Waitsome outcount %d with %d pending", out, total - done);
                for (int j = 0; j < out; j++) {
                    CHECK(rr[idx[j]] == MPI_REQUEST_NULL, "Waitsome left request %d", idx[j]);
                    all[idx[j]] = sts[j];
                }
                done += out;
            }
            int out = 0;
            MPICHK(MPI_Waitsome(total, rr, &out, idx, sts));
            CHECK(out == MPI_UNDEFINED, "Waitsome over null requests: outcount %d", out);
            memset(next, 0, sizeof(int) * (size_t)tu_size);
            for (int k = 0; k < total; k++) {
                int src = all[k].MPI_SOURCE;
                CHECK(src >= 0 && src < tu_size && next[src] < NMSG, "receive %d: source %d", k, src);
                check_msg(rb[k], &all[k], 2, next[src], tag_of(2, next[src]));
                next[src]++;
                free(rb[k]);
            }
            MPICHK(MPI_Waitall(NMSG, own, MPI_STATUSES_IGNORE));
            for (int i = 0; i < NMSG; i++)
                free(ownbuf[i]);
            free(all);
            free(rr);
            free(sts);
            free(rb);
            free(idx);
        } else {
            MPICHK(MPI_Recv(NULL, 0, MPI_BYTE, root, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            send_all(2, root);
        }
    }
    tu_barrier();

    /* ---- 3: ANY_SOURCE with a fixed tag: tag 7 first, then tag 5 */
    {
        MPI_Request own[NMSG];
        unsigned char *ownbuf[NMSG];
        if (tu_rank == root) {
            for (int i = 0; i < NMSG; i++) {
                size_t len = msg_len(3, tu_rank, i);
                ownbuf[i] = malloc(len + 1);
                make_msg(ownbuf[i], len, 3, tu_rank, i);
                MPICHK(MPI_Isend(ownbuf[i], (int)len, MPI_BYTE, root, tag_of(3, i), MPI_COMM_WORLD, &own[i]));
            }
            int per_tag[2] = {0, 0};
            for (int i = 0; i < NMSG; i++)
                per_tag[tag_of(3, i) == 7]++;
            for (int pass = 0; pass < 2; pass++) {
                int tag = pass == 0 ? 7 : 5;
                memset(next, 0, sizeof(int) * (size_t)tu_size);
                for (int k = 0; k < tu_size * per_tag[pass == 0]; k++) {
                    MPI_Status st;
                    MPICHK(MPI_Recv(buf, MAXLEN, MPI_BYTE, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st));
                    int src = st.MPI_SOURCE;
                    CHECK(src >= 0 && src < tu_size, "source %d", src);
                    while (next[src] < NMSG && tag_of(3, next[src]) != tag)
                        next[src]++;
                    CHECK(next[src] < NMSG, "too many tag-%d messages from %d", tag, src);
                    check_msg(buf, &st, 3, next[src], tag);
                    next[src]++;
                }
            }
            MPICHK(MPI_Waitall(NMSG, own, MPI_STATUSES_IGNORE));
            for (int i = 0; i < NMSG; i++)
                free(ownbuf[i]);
        } else {
            send_all(3, root);
        }
    }
    free(next);
    free(buf);
    tu_finish();
    return 0;
}
