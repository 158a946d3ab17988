/*
 * The completion calls: Wait, Waitall, Waitany, Waitsome, Test, Testall,
 * Testany, Testsome and Request_get_status, with MPI_REQUEST_NULL entries,
 * inactive persistent requests, empty arrays, MPI_STATUS(ES)_IGNORE and
 * the MPI_UNDEFINED outcomes.
 *
 * Each rank receives from its left neighbour (at 1 rank: itself). Pending
 * states are checked before the rank tells its left neighbour "go", so
 * they are deterministic: no message can have arrived yet.
 */
#include "testutil.h"

#define K 8 /* receives per array, interleaved with null entries */

static int right, left;

static void check_empty(const MPI_Status *st, const char *what)
{
    int count = -1;
    if (!tu_get_count(st, MPI_INT, &count))
        count = 0;
    CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && count == 0,
          "%s: status (source %d, tag %d, count %d) is not empty", what, st->MPI_SOURCE, st->MPI_TAG, count);
    int flag = 1;
    MPICHK(MPI_Test_cancelled(st, &flag));
    CHECK(!flag, "%s: empty status says cancelled", what);
}

/* Serve one "go" from the right neighbour: send K ints, tags base+i. */
static void serve(void)
{
    int base;
    MPICHK(MPI_Recv(&base, 1, MPI_INT, right, 900, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    static int vals[K];
    MPI_Request r[K];
    for (int i = 0; i < K; i++) {
        vals[i] = base * 100 + i;
        MPICHK(MPI_Isend(&vals[i], 1, MPI_INT, right, base + i, MPI_COMM_WORLD, &r[i]));
    }
    MPICHK(MPI_Waitall(K, r, MPI_STATUSES_IGNORE));
}

/* 2K slots: receives at odd positions, null at even ones. */
static void post(int base, MPI_Request *reqs, int *vals)
{
    for (int i = 0; i < 2 * K; i++) {
        reqs[i] = MPI_REQUEST_NULL;
        vals[i] = -1;
    }
    for (int i = 0; i < K; i++)
        MPICHK(MPI_Irecv(&vals[2 * i + 1], 1, MPI_INT, left, base + i, MPI_COMM_WORLD, &reqs[2 * i + 1]));
}

static void check_slot(int base, int slot, const MPI_Status *st, const int *vals)
{
    CHECK(slot % 2 == 1, "completed slot %d holds MPI_REQUEST_NULL", slot);
    int i = slot / 2;
    CHECK(vals[slot] == base * 100 + i, "slot %d: value %d, expected %d", slot, vals[slot], base * 100 + i);
    if (st)
        CHECK_STATUS(*st, left, base + i, 1, MPI_INT);
}

/* Tell the left neighbour to send batch base, and serve the right one's
 * request (at 1 rank both are this rank). */
static void go_and_serve(int base)
{
    MPI_Request r;
    MPICHK(MPI_Isend(&base, 1, MPI_INT, left, 900, MPI_COMM_WORLD, &r));
    serve();
    MPICHK(MPI_Wait(&r, MPI_STATUS_IGNORE));
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "p2p_complete");
    right = (tu_rank + 1) % tu_size;
    left = (tu_rank + tu_size - 1) % tu_size;
    MPI_Request reqs[2 * K];
    int vals[2 * K];
    MPI_Status sts[2 * K], st;
    int idx[2 * K];
    int flag, index, outcount;

    /* ---- all-null and empty arrays */
    for (int i = 0; i < 2 * K; i++)
        reqs[i] = MPI_REQUEST_NULL;
    MPICHK(MPI_Wait(&reqs[0], &st));
    check_empty(&st, "MPI_Wait(MPI_REQUEST_NULL)");
    flag = 0;
    MPICHK(MPI_Test(&reqs[0], &flag, &st));
    CHECK(flag, "MPI_Test(MPI_REQUEST_NULL): flag false");
    check_empty(&st, "MPI_Test(MPI_REQUEST_NULL)");
    MPICHK(MPI_Waitall(2 * K, reqs, sts));
    for (int i = 0; i < 2 * K; i++)
        check_empty(&sts[i], "MPI_Waitall over nulls");
    MPICHK(MPI_Waitall(0, NULL, MPI_STATUSES_IGNORE));
    flag = 0;
    MPICHK(MPI_Testall(2 * K, reqs, &flag, MPI_STATUSES_IGNORE));
    CHECK(flag, "MPI_Testall over nulls: flag false");
    index = 5;
    MPICHK(MPI_Waitany(2 * K, reqs, &index, &st));
    CHECK(index == MPI_UNDEFINED, "MPI_Waitany over nulls: index %d", index);
    check_empty(&st, "MPI_Waitany over nulls");
    index = 5;
    MPICHK(MPI_Waitany(0, NULL, &index, MPI_STATUS_IGNORE));
    CHECK(index == MPI_UNDEFINED, "MPI_Waitany(0): index %d", index);
    flag = 0;
    index = 5;
    MPICHK(MPI_Testany(2 * K, reqs, &index, &flag, &st));
    CHECK(flag && index == MPI_UNDEFINED, "MPI_Testany over nulls: flag %d index %d", flag, index);
    check_empty(&st, "MPI_Testany over nulls");
    outcount = 5;
    MPICHK(MPI_Waitsome(2 * K, reqs, &outcount, idx, sts));
    CHECK(outcount == MPI_UNDEFINED, "MPI_Waitsome over nulls: outcount %d", outcount);
    outcount = 5;
    MPICHK(MPI_Testsome(2 * K, reqs, &outcount, idx, MPI_STATUSES_IGNORE));
    CHECK(outcount == MPI_UNDEFINED, "MPI_Testsome over nulls: outcount %d", outcount);
    outcount = 5;
    MPICHK(MPI_Testsome(0, NULL, &outcount, NULL, MPI_STATUSES_IGNORE));
    CHECK(outcount == MPI_UNDEFINED, "MPI_Testsome(0): outcount %d", outcount);
    flag = 0;
    MPICHK(MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st));
    CHECK(flag, "MPI_Request_get_status(MPI_REQUEST_NULL): flag false");
    check_empty(&st, "MPI_Request_get_status(MPI_REQUEST_NULL)");

    /* inactive persistent requests count as null */
    int pbuf = 0;
    MPI_Request pers[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPICHK(MPI_Recv_init(&pbuf, 1, MPI_INT, left, 77, MPI_COMM_WORLD, &pers[0]));
    MPICHK(MPI_Send_init(&pbuf, 1, MPI_INT, right, 77, MPI_COMM_WORLD, &pers[1]));
    MPICHK(MPI_Wait(&pers[0], &st));
    CHECK(pers[0] != MPI_REQUEST_NULL, "MPI_Wait freed an inactive persistent request");
    check_empty(&st, "MPI_Wait(inactive persistent)");
    index = 5;
    MPICHK(MPI_Waitany(2, pers, &index, &st));
    CHECK(index == MPI_UNDEFINED, "MPI_Waitany over inactive persistent requests: index %d", index);
    flag = 0;
    MPICHK(MPI_Testall(2, pers, &flag, sts));
    CHECK(flag, "MPI_Testall over inactive persistent requests: flag false");
    outcount = 5;
    MPICHK(MPI_Testsome(2, pers, &outcount, idx, sts));
    CHECK(outcount == MPI_UNDEFINED, "MPI_Testsome over inactive persistent requests: outcount %d", outcount);
    MPICHK(MPI_Request_free(&pers[0]));
    MPICHK(MPI_Request_free(&pers[1]));
    CHECK(pers[0] == MPI_REQUEST_NULL && pers[1] == MPI_REQUEST_NULL, "MPI_Request_free left a handle");
    tu_barrier();

    /* ---- Waitany / Testany / Testall / Test / Request_get_status */
    int base = 1000;
    post(base, reqs, vals);
    /* nothing can have arrived: the left neighbour waits for our go */
    flag = 1;
    index = 5;
    MPICHK(MPI_Testany(2 * K, reqs, &index, &flag, &st));
    CHECK(!flag && index == MPI_UNDEFINED, "MPI_Testany with nothing arrived: flag %d index %d", flag, index);
    flag = 1;
    MPICHK(MPI_Testall(2 * K, reqs, &flag, sts));
    CHECK(!flag, "MPI_Testall with nothing arrived: flag true");
    for (int i = 0; i < K; i++)
        CHECK(reqs[2 * i + 1] != MPI_REQUEST_NULL, "MPI_Testall (false) freed request %d", 2 * i + 1);
    outcount = 5;
    MPICHK(MPI_Testsome(2 * K, reqs, &outcount, idx, sts));
    CHECK(outcount == 0, "MPI_Testsome with nothing arrived: outcount %d", outcount);
    flag = 1;
    MPICHK(MPI_Test(&reqs[1], &flag, &st));
    CHECK(!flag && reqs[1] != MPI_REQUEST_NULL, "MPI_Test with nothing arrived: flag %d", flag);
    flag = 1;
    MPICHK(MPI_Request_get_status(reqs[3], &flag, &st));
    CHECK(!flag, "MPI_Request_get_status with nothing arrived: flag true");
    go_and_serve(base);
    /* Request_get_status until complete: the request stays valid */
    double t0 = tu_now();
    do {
        MPICHK(MPI_Request_get_status(reqs[3], &flag, &st));
        CHECK(tu_now() - t0 < 60, "MPI_Request_get_status never saw completion");
    } while (!flag);
    CHECK(reqs[3] != MPI_REQUEST_NULL, "MPI_Request_get_status freed the request");
    check_slot(base, 3, &st, vals);
    MPICHK(MPI_Request_get_status(reqs[3], &flag, MPI_STATUS_IGNORE));
    CHECK(flag, "MPI_Request_get_status: second call on a complete request says incomplete");
    MPICHK(MPI_Wait(&reqs[3], &st));
    CHECK(reqs[3] == MPI_REQUEST_NULL, "MPI_Wait did not free the request");
    check_slot(base, 3, &st, vals);
    /* one by one with Waitany and Testany */
    int seen[2 * K] = {0};
    seen[3] = 1;
    for (int n = 1; n < K; n++) {
        if (n % 2) {
            MPICHK(MPI_Waitany(2 * K, reqs, &index, &st));
        } else {
            flag = 0;
            t0 = tu_now();
            do {
                MPICHK(MPI_Testany(2 * K, reqs, &index, &flag, &st));
                CHECK(tu_now() - t0 < 60, "MPI_Testany never completed");
            } while (!flag);
        }
        CHECK(index >= 0 && index < 2 * K && !seen[index], "completion index %d (seen before: %d)", index,
              index >= 0 && index < 2 * K ? seen[index] : -1);
        seen[index] = 1;
        CHECK(reqs[index] == MPI_REQUEST_NULL, "completed request %d not freed", index);
        check_slot(base, index, &st, vals);
    }
    index = 5;
    MPICHK(MPI_Waitany(2 * K, reqs, &index, MPI_STATUS_IGNORE));
    CHECK(index == MPI_UNDEFINED, "MPI_Waitany after all completed: index %d", index);
    tu_barrier();

    /* ---- Waitsome / Testsome */
    for (int round = 0; round < 2; round++) {
        base = 2000 + 100 * round;
        post(base, reqs, vals);
        outcount = 5;
        MPICHK(MPI_Testsome(2 * K, reqs, &outcount, idx, sts));
        CHECK(outcount == 0, "MPI_Testsome with nothing arrived: outcount %d", outcount);
        go_and_serve(base);
        memset(seen, 0, sizeof seen);
        int done = 0;
        t0 = tu_now();
        while (done < K) {
            if (round == 0)
                MPICHK(MPI_Waitsome(2 * K, reqs, &outcount, idx, sts));
            else
                MPICHK(MPI_Testsome(2 * K, reqs, &outcount, idx, sts));
            CHECK(outcount != MPI_UNDEFINED && outcount >= 0 && outcount <= K - done,
                  "outcount %d with %d pending", outcount, K - done);
            CHECK(round == 1 || outcount > 0, "MPI_Waitsome returned nothing");
            for (int j = 0; j < outcount; j++) {
                CHECK(idx[j] >= 0 && idx[j] < 2 * K && !seen[idx[j]], "index %d twice or out of range", idx[j]);
                seen[idx[j]] = 1;
                CHECK(reqs[idx[j]] == MPI_REQUEST_NULL, "completed request %d not freed", idx[j]);
                check_slot(base, idx[j], &sts[j], vals);
            }
            done += outcount;
            CHECK(tu_now() - t0 < 60, "Waitsome/Testsome: only %d of %d completed", done, K);
        }
        outcount = 5;
        MPICHK(MPI_Waitsome(2 * K, reqs, &outcount, idx, MPI_STATUSES_IGNORE));
        CHECK(outcount == MPI_UNDEFINED, "MPI_Waitsome after all completed: outcount %d", outcount);
        tu_barrier();
    }

    /* ---- Testall until true; Waitall with MPI_STATUSES_IGNORE */
    base = 3000;
    post(base, reqs, vals);
    go_and_serve(base);
    flag = 0;
    t0 = tu_now();
    while (!flag) {
        MPICHK(MPI_Testall(2 * K, reqs, &flag, sts));
        CHECK(tu_now() - t0 < 60, "MPI_Testall never completed");
    }
    for (int i = 0; i < 2 * K; i++) {
        CHECK(reqs[i] == MPI_REQUEST_NULL, "MPI_Testall left request %d", i);
        if (i % 2)
            check_slot(base, i, &sts[i], vals);
        else
            check_empty(&sts[i], "MPI_Testall's status of a null entry");
    }
    tu_barrier();
    base = 4000;
    post(base, reqs, vals);
    go_and_serve(base);
    MPICHK(MPI_Waitall(2 * K, reqs, MPI_STATUSES_IGNORE));
    for (int i = 0; i < K; i++)
        check_slot(base, 2 * i + 1, NULL, vals);

    /* ---- MPI_Test on a send, with status ignored */
    {
        int x = 5, y = 0;
        MPI_Request s, r;
        MPICHK(MPI_Irecv(&y, 1, MPI_INT, left, 5, MPI_COMM_WORLD, &r));
        MPICHK(MPI_Isend(&x, 1, MPI_INT, right, 5, MPI_COMM_WORLD, &s));
        flag = 0;
        t0 = tu_now();
        while (!flag) {
            MPICHK(MPI_Test(&s, &flag, MPI_STATUS_IGNORE));
            CHECK(tu_now() - t0 < 60, "MPI_Test on a send never completed");
        }
        CHECK(s == MPI_REQUEST_NULL, "completed MPI_Test did not free the send");
        MPICHK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK(y == 5, "value %d", y);
    }
    tu_finish();
    return 0;
}
