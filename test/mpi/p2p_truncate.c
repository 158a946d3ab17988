/*
 * Truncation: a message longer than the receive buffer, for eager and
 * rendezvous sizes, contiguous and (if the datatype engine is there) vector
 * receive types. Under MPI_ERRORS_RETURN the receive returns a code of
 * class MPI_ERR_TRUNCATE, the status count is the buffer size, the buffer
 * holds the message's first bytes, and guard bytes after the buffer stay
 * untouched. The sender sees success, and the pair keeps working after.
 *
 * Each rank sends to its right neighbour and receives from its left (at 1
 * rank: to itself). The .sh runs it again with BMPI_SHM_CMA=0.
 */
#include "testutil.h"

#define GUARD 0xa5
#define NGUARD 4096

struct tcase {
    size_t len, cap;
};

static const struct tcase cases[] = {
    {1, 0},           {100, 60},          {16384, 1000},       {16384, 16383},     {16385, 16384},
    {40000, 32768},   {200000, 100000},   {200000, 1},         {3 << 20, 1 << 20}, {(4 << 20) - 3, 300000},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

static int right, left;

/* How the receive is completed: varies with the case. */
enum how { BY_RECV, BY_WAIT, BY_WAITALL, BY_TEST, BY_WAITANY, BY_WAITSOME, BY_TESTSOME, BY_HOW_MAX };

static const char *how_name[] = {"MPI_Recv", "MPI_Wait", "MPI_Waitall", "MPI_Test", "MPI_Waitany", "MPI_Waitsome",
                                 "MPI_Testsome"};

static void expect_truncate(int rc, const char *what, int c)
{
    CHECK(rc != MPI_SUCCESS, "case %d (%zu into %zu): %s returned success on a truncated message", c,
          cases[c].len, cases[c].cap, what);
    int cls = -1;
    MPICHK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_TRUNCATE, "case %d (%zu into %zu): %s returned class %d, expected MPI_ERR_TRUNCATE (%d): %s",
          c, cases[c].len, cases[c].cap, what, cls, MPI_ERR_TRUNCATE, tu_errstr(rc));
}

static void contig_case(int c, enum how how)
{
    size_t len = cases[c].len, cap = cases[c].cap;
    unsigned char *sbuf = malloc(len);
    unsigned char *rbuf = malloc(cap + NGUARD);
    CHECK(sbuf && rbuf, "malloc");
    uint64_t seed = tu_seed(10, left, tu_rank, c);
    tu_fill(sbuf, len, tu_seed(10, tu_rank, right, c));
    memset(rbuf, GUARD, cap + NGUARD);
    MPI_Request sreq, rreq;
    MPI_Status st;
    int tag = 40 + c;
    int rc;
    /* the sender starts only when the receive is posted (a go message), so
     * large messages take the matched-receive path; every other case
     * starts the send first and the message arrives unexpected */
    int posted_first = c % 2;
    if (!posted_first)
        MPICHK(MPI_Isend(sbuf, (int)len, MPI_BYTE, right, tag, MPI_COMM_WORLD, &sreq));
    if (how == BY_RECV) {
        if (posted_first)
            MPICHK(MPI_Isend(sbuf, (int)len, MPI_BYTE, right, tag, MPI_COMM_WORLD, &sreq));
        rc = MPI_Recv(rbuf, (int)cap, MPI_BYTE, left, tag, MPI_COMM_WORLD, &st);
        expect_truncate(rc, how_name[how], c);
    } else {
        MPICHK(MPI_Irecv(rbuf, (int)cap, MPI_BYTE, left, tag, MPI_COMM_WORLD, &rreq));
        if (posted_first) {
            /* make sure the peer's receive is posted too before sending */
            MPICHK(MPI_Sendrecv(NULL, 0, MPI_BYTE, left, 1, NULL, 0, MPI_BYTE, right, 1, MPI_COMM_WORLD,
                                MPI_STATUS_IGNORE));
            MPICHK(MPI_Isend(sbuf, (int)len, MPI_BYTE, right, tag, MPI_COMM_WORLD, &sreq));
        }
        switch (how) {
        case BY_WAIT:
            rc = MPI_Wait(&rreq, &st);
            expect_truncate(rc, how_name[how], c);
            break;
        case BY_WAITALL: {
            MPI_Request two[2] = {MPI_REQUEST_NULL, rreq};
            MPI_Status sts[2];
            sts[1].MPI_ERROR = -1;
            rc = MPI_Waitall(2, two, sts);
            int cls = -1;
            MPI_Error_class(rc, &cls);
            CHECK(cls == MPI_ERR_IN_STATUS, "case %d: MPI_Waitall returned class %d, expected MPI_ERR_IN_STATUS",
                  c, cls);
            expect_truncate(sts[1].MPI_ERROR, "MPI_Waitall's status", c);
            CHECK(two[1] == MPI_REQUEST_NULL, "case %d: MPI_Waitall did not free the request", c);
            rreq = MPI_REQUEST_NULL;
            st = sts[1];
            break;
        }
        case BY_TEST: {
            int flag = 0;
            double t0 = tu_now();
            do {
                rc = MPI_Test(&rreq, &flag, &st);
                CHECK(tu_now() - t0 < 60, "case %d: MPI_Test never completed", c);
            } while (rc == MPI_SUCCESS && !flag);
            expect_truncate(rc, how_name[how], c);
            break;
        }
        case BY_WAITSOME:
        case BY_TESTSOME: {
            /* the error belongs to MPI_COMM_WORLD (MPI_ERRORS_RETURN), not
             * to MPI_COMM_SELF (left MPI_ERRORS_ARE_FATAL in main) */
            MPI_Request arr[3] = {MPI_REQUEST_NULL, rreq, MPI_REQUEST_NULL};
            int out = 0, idx[3];
            MPI_Status sts[3];
            double t0 = tu_now();
            do {
                if (how == BY_WAITSOME)
                    rc = MPI_Waitsome(3, arr, &out, idx, sts);
                else
                    rc = MPI_Testsome(3, arr, &out, idx, sts);
                CHECK(tu_now() - t0 < 60, "case %d: %s never completed", c, how_name[how]);
            } while (rc == MPI_SUCCESS && out == 0);
            int cls = -1;
            MPI_Error_class(rc, &cls);
            CHECK(cls == MPI_ERR_IN_STATUS, "case %d: %s returned class %d, expected MPI_ERR_IN_STATUS", c,
                  how_name[how], cls);
            CHECK(out == 1 && idx[0] == 1, "case %d: %s: outcount %d index %d", c, how_name[how], out, idx[0]);
            expect_truncate(sts[0].MPI_ERROR, how_name[how], c);
            st = sts[0];
            break;
        }
        default: {
            int idx = -1;
            MPI_Request arr[3] = {MPI_REQUEST_NULL, rreq, MPI_REQUEST_NULL};
            rc = MPI_Waitany(3, arr, &idx, &st);
            expect_truncate(rc, how_name[how], c);
            CHECK(idx == 1, "case %d: Waitany index %d", c, idx);
            break;
        }
        }
    }
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == tag, "case %d: status source %d tag %d", c, st.MPI_SOURCE,
          st.MPI_TAG);
    int count = -1;
    if (tu_get_count(&st, MPI_BYTE, &count))
        CHECK(count == (int)cap, "case %d (%zu into %zu, %s): status count %d, expected the buffer size %zu", c,
              len, cap, how_name[how], count, cap);
    long bad = tu_verify(rbuf, cap, seed);
    CHECK(bad < 0, "case %d (%zu into %zu, %s): byte %ld of the buffer is not the message's", c, len, cap,
          how_name[how], bad);
    bad = tu_verify_byte(rbuf + cap, NGUARD, GUARD);
    CHECK(bad < 0, "case %d (%zu into %zu, %s): guard byte %ld after the buffer overwritten", c, len, cap,
          how_name[how], bad);
    /* the sender is not told about the receiver's truncation */
    MPICHK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    free(sbuf);
    free(rbuf);

    /* the pair still works */
    int x = tu_rank * 1000 + c, y = -1;
    MPICHK(MPI_Sendrecv(&x, 1, MPI_INT, right, 2, &y, 1, MPI_INT, left, 2, MPI_COMM_WORLD, &st));
    CHECK(y == left * 1000 + c, "case %d: follow-up message %d, expected %d", c, y, left * 1000 + c);
}

/* Truncation into a vector receive type: blocks of 100 bytes every 150. */
static void vector_case(size_t len, int nblocks)
{
    MPI_Datatype vec;
    MPICHK(MPI_Type_vector(nblocks, 100, 150, MPI_BYTE, &vec));
    MPICHK(MPI_Type_commit(&vec));
    size_t extent = (size_t)(nblocks - 1) * 150 + 100;
    unsigned char *sbuf = malloc(len), *rbuf = malloc(extent + NGUARD);
    tu_fill(sbuf, len, tu_seed(11, tu_rank, right, nblocks));
    memset(rbuf, GUARD, extent + NGUARD);
    MPI_Request sreq;
    MPI_Status st;
    MPICHK(MPI_Isend(sbuf, (int)len, MPI_BYTE, right, 3, MPI_COMM_WORLD, &sreq));
    int rc = MPI_Recv(rbuf, 1, vec, left, 3, MPI_COMM_WORLD, &st);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE, "%zu bytes into %d blocks of 100: class %d, expected MPI_ERR_TRUNCATE", len,
          nblocks, cls);
    int elems = -1;
    if (TU_OPTIONAL(MPI_Get_elements(&st, MPI_BYTE, &elems), "MPI_Get_elements"))
        CHECK(elems == nblocks * 100, "Get_elements %d, expected %d", elems, nblocks * 100);
    unsigned char *expect = malloc(len);
    tu_fill(expect, len, tu_seed(11, left, tu_rank, nblocks));
    for (int b = 0; b < nblocks; b++) {
        CHECK(memcmp(rbuf + (size_t)b * 150, expect + (size_t)b * 100, 100) == 0, "block %d differs", b);
        if (b + 1 < nblocks)
            CHECK(tu_verify_byte(rbuf + (size_t)b * 150 + 100, 50, GUARD) < 0, "gap after block %d written", b);
    }
    long bad = tu_verify_byte(rbuf + extent, NGUARD, GUARD);
    CHECK(bad < 0, "%zu bytes into %d blocks of 100: guard byte %ld after the vector written", len, nblocks, bad);
    MPICHK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    MPICHK(MPI_Type_free(&vec));
    free(expect);
    free(sbuf);
    free(rbuf);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "p2p_truncate");
    right = (tu_rank + 1) % tu_size;
    left = (tu_rank + tu_size - 1) % tu_size;
    /* every error here is on MPI_COMM_WORLD: one reported through
     * MPI_COMM_SELF's handler kills the test */
    MPICHK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
    for (int c = 0; c < NCASES; c++)
        for (int how = 0; how < BY_HOW_MAX; how++)
            if ((c + how) % 2 == 0 || cases[c].len < 300000)
                contig_case(c, (enum how)how);
    tu_barrier();
    MPI_Datatype probe;
    if (TU_OPTIONAL(MPI_Type_vector(2, 1, 2, MPI_BYTE, &probe), "MPI_Type_vector")) {
        MPICHK(MPI_Type_free(&probe));
        vector_case(1000, 5);         /* eager */
        vector_case(30000, 100);      /* eager limit .. max_am */
        vector_case(500000, 3000);    /* rendezvous, staged pulls */
        vector_case(2 << 20, 5000);   /* several staging chunks */
    }
    tu_finish();
    return 0;
}
