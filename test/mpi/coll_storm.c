/*
 * Random storms of nonblocking collectives: every rank draws the same
 * sequence (same seed), starts up to 8 of them at once on MPI_COMM_WORLD
 * and a duplicate, and completes them in a random order (Waitany, Testany
 * loops, reverse Waits), with blocking collectives interleaved. Each
 * result is checked against its serial reference: a cross-matched message
 * between two collectives in flight shows up as wrong data or a hang.
 */
#include "coll_util.h"

enum { AR, BC, RD, AG, A2A, BAR, SCAN, NKINDS };

struct op {
    int kind, n, root;
    MPI_Comm comm;
    int *s, *r;
    int salt;
};

static uint64_t seed = 12345;
static unsigned rnd(unsigned m)
{
    seed = cu_mix(seed);
    return (unsigned)(seed % m);
}

static void start(struct op *o, int p, int me, MPI_Request *rq)
{
    size_t sz = (size_t)o->n * (size_t)p + 1;
    o->s = malloc(sizeof(int) * sz);
    o->r = malloc(sizeof(int) * sz);
    for (size_t i = 0; i < sz; i++)
        o->s[i] = cu_val(me, i, o->salt), o->r[i] = -7;
    switch (o->kind) {
    case AR: MPICHK(MPI_Iallreduce(o->s, o->r, o->n, MPI_INT, MPI_SUM, o->comm, rq)); break;
    case BC:
        if (me == o->root)
            memcpy(o->r, o->s, sizeof(int) * (size_t)o->n);
        MPICHK(MPI_Ibcast(o->r, o->n, MPI_INT, o->root, o->comm, rq));
        break;
    case RD: MPICHK(MPI_Ireduce(o->s, o->r, o->n, MPI_INT, MPI_MAX, o->root, o->comm, rq)); break;
    case AG: MPICHK(MPI_Iallgather(o->s, o->n, MPI_INT, o->r, o->n, MPI_INT, o->comm, rq)); break;
    case A2A: MPICHK(MPI_Ialltoall(o->s, o->n, MPI_INT, o->r, o->n, MPI_INT, o->comm, rq)); break;
    case BAR: MPICHK(MPI_Ibarrier(o->comm, rq)); break;
    case SCAN: MPICHK(MPI_Iscan(o->s, o->r, o->n, MPI_INT, MPI_SUM, o->comm, rq)); break;
    }
}

static void check(struct op *o, int p, int me)
{
    int n = o->n;
    for (int i = 0; i < n; i++) {
        int want = 0;
        switch (o->kind) {
        case AR:
        case SCAN:
            for (int q = 0; q < (o->kind == AR ? p : me + 1); q++)
                want += cu_val(q, (size_t)i, o->salt);
            CHECK(o->r[i] == want, "kind %d n %d [%d]", o->kind, n, i);
            break;
        case BC: CHECK(o->r[i] == cu_val(o->root, (size_t)i, o->salt), "bcast n %d [%d]", n, i); break;
        case RD:
            if (me != o->root)
                break;
            want = cu_val(0, (size_t)i, o->salt);
            for (int q = 1; q < p; q++)
                want = cu_val(q, (size_t)i, o->salt) > want ? cu_val(q, (size_t)i, o->salt) : want;
            CHECK(o->r[i] == want, "reduce n %d [%d]", n, i);
            break;
        case AG:
            for (int q = 0; q < p; q++)
                CHECK(o->r[q * n + i] == cu_val(q, (size_t)i, o->salt), "allgather n %d", n);
            break;
        case A2A:
            for (int q = 0; q < p; q++)
                CHECK(o->r[q * n + i] == cu_val(q, (size_t)(me * n + i), o->salt), "alltoall n %d", n);
            break;
        }
    }
    free(o->s);
    free(o->r);
}

int main(int argc, char **argv)
{
    cu_init(&argc, &argv, "coll_storm");
    int p = cu_size, me = cu_rank;
    MPI_Comm dup;
    MPICHK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    const int sizes[] = {0, 1, 3, 64, 1000, 20000};
    int rounds = p > 4 ? 40 : 80;
    for (int round = 0; round < rounds; round++) {
        struct op ops[8];
        MPI_Request rq[8];
        int k = 1 + (int)rnd(8);
        for (int j = 0; j < k; j++) {
            ops[j] = (struct op){.kind = (int)rnd(NKINDS), .n = sizes[rnd(6)], .root = (int)rnd((unsigned)p),
                                 .comm = rnd(2) ? dup : MPI_COMM_WORLD, .salt = round * 8 + j};
            if (ops[j].kind == A2A && ops[j].n > 1000)
                ops[j].n = 1000;
            start(&ops[j], p, me, &rq[j]);
        }
        if (rnd(4) == 0) { /* a blocking collective while the others are in flight */
            int x = me, y;
            MPICHK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
            CHECK(y == p * (p - 1) / 2, "blocking allreduce among nonblocking ones");
        }
        switch (rnd(3)) {
        case 0:
            for (int j = k - 1; j >= 0; j--)
                MPICHK(MPI_Wait(&rq[j], MPI_STATUS_IGNORE));
            for (int j = 0; j < k; j++)
                check(&ops[j], p, me);
            break;
        case 1:
            for (int left = k; left > 0; left--) {
                int idx;
                MPICHK(MPI_Waitany(k, rq, &idx, MPI_STATUS_IGNORE));
                CHECK(idx != MPI_UNDEFINED, "waitany");
                check(&ops[idx], p, me);
            }
            break;
        default:
            for (int left = k; left > 0;) {
                int idx, flag;
                MPICHK(MPI_Testany(k, rq, &idx, &flag, MPI_STATUS_IGNORE));
                if (flag && idx != MPI_UNDEFINED) {
                    check(&ops[idx], p, me);
                    left--;
                }
            }
            break;
        }
    }
    MPICHK(MPI_Comm_free(&dup));
    cu_finish();
    return 0;
}
