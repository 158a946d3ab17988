/*
 * Storms of messages of random sizes (0 B .. 4 MiB, around the eager limit
 * and the fragment size of shm) between all pairs of ranks, self included,
 * in every send mode, with full-content verification.
 *
 * Phase 1: contiguous MPI_BYTE; some receive buffers are longer than the
 *          message (the tail must stay untouched).
 * Phase 2: derived datatypes: vectors on either side, the receive vector
 *          sometimes with more blocks than the message fills (the gaps and
 *          the unused blocks must stay untouched).
 *
 * Sizes and layouts come from a seed per (phase, round, src, dst, index),
 * so both sides know them without talking. Run once normally and once with
 * BMPI_SHM_CMA=0 (pipelined fragments instead of single-copy get).
 *
 *   p2p_storm [rounds]
 */
#include "testutil.h"

#define GUARD 0xa5
#define GAP 0x5a

static int rounds = 3;
static int per_peer = 6; /* messages from each rank to each rank per round */

/* Message size from a seed: a mix of classes so that every protocol
 * boundary is crossed many times. */
static size_t pick_size(uint64_t *s)
{
    switch (tu_rand(s) % 16) {
    case 0:
        return 0;
    case 1:
    case 2:
        return tu_range(s, 1, 64);
    case 3:
    case 4:
        return tu_range(s, 16384 - 64, 16384 + 64); /* eager limit */
    case 5:
    case 6:
        return tu_range(s, 32768 - 96, 32768 + 64); /* one fragment / max_am */
    case 7:
        return tu_range(s, 2 * 32768 - 128, 2 * 32768 + 64);
    case 8:
        return tu_range(s, 256 * 1024 - 64, 256 * 1024 + 64); /* RGET staging chunk */
    case 9:
    case 10:
        return tu_range(s, 65, 16000);
    case 11:
    case 12:
        return tu_range(s, 16500, 200000);
    case 13:
        return tu_range(s, 200000, 1 << 20);
    case 14:
        return tu_range(s, 1 << 20, 4 << 20);
    default:
        return (size_t)(4 << 20) - tu_range(s, 0, 1); /* 4 MiB and just under */
    }
}

/* ------------------------------------------------------------ phase 1 */

struct cmsg {
    size_t len, cap;
    unsigned char *buf;
    uint64_t seed;
    MPI_Request req;
};

static void contig_round(int round)
{
    const int n = tu_size;
    struct cmsg *in = calloc((size_t)n * per_peer, sizeof *in);
    struct cmsg *out = calloc((size_t)n * per_peer, sizeof *out);
    CHECK(in && out, "calloc");

    /* Receives first, for everything coming from every rank. */
    for (int src = 0; src < n; src++) {
        for (int i = 0; i < per_peer; i++) {
            struct cmsg *m = &in[src * per_peer + i];
            uint64_t s = tu_seed(1000 + round, src, tu_rank, i);
            m->seed = s;
            m->len = pick_size(&s);
            m->cap = m->len + (tu_rand(&s) % 4 == 0 ? tu_range(&s, 1, 5000) : 0);
            m->buf = malloc(m->cap + 64);
            CHECK(m->buf, "malloc %zu", m->cap + 64);
            memset(m->buf, GUARD, m->cap + 64);
            MPICHK(MPI_Irecv(m->buf, (int)m->cap, MPI_BYTE, src, i, MPI_COMM_WORLD, &m->req));
        }
    }
    /* All receives are posted everywhere: ready sends are legal now. */
    tu_barrier();

    /* Sends in a shuffled order of destinations, each in some mode. */
    uint64_t order = tu_seed(2000 + round, tu_rank, 0, 0);
    int first = (int)(tu_rand(&order) % (uint64_t)n);
    for (int k = 0; k < n; k++) {
        int dst = (first + k) % n;
        for (int i = 0; i < per_peer; i++) {
            struct cmsg *m = &out[dst * per_peer + i];
            uint64_t s = tu_seed(1000 + round, tu_rank, dst, i);
            m->seed = s;
            m->len = pick_size(&s);
            m->buf = malloc(m->len ? m->len : 1);
            CHECK(m->buf, "malloc %zu", m->len);
            tu_fill(m->buf, m->len, m->seed);
            m->req = MPI_REQUEST_NULL;
            int mode = (int)(tu_mix(m->seed + 17) % 7);
            switch (mode) {
            case 0:
                MPICHK(MPI_Send(m->buf, (int)m->len, MPI_BYTE, dst, i, MPI_COMM_WORLD));
                break;
            case 1:
                MPICHK(MPI_Ssend(m->buf, (int)m->len, MPI_BYTE, dst, i, MPI_COMM_WORLD));
                break;
            case 2:
                MPICHK(MPI_Rsend(m->buf, (int)m->len, MPI_BYTE, dst, i, MPI_COMM_WORLD));
                break;
            case 3:
                MPICHK(MPI_Issend(m->buf, (int)m->len, MPI_BYTE, dst, i, MPI_COMM_WORLD, &m->req));
                break;
            case 4:
                MPICHK(MPI_Irsend(m->buf, (int)m->len, MPI_BYTE, dst, i, MPI_COMM_WORLD, &m->req));
                break;
            default:
                MPICHK(MPI_Isend(m->buf, (int)m->len, MPI_BYTE, dst, i, MPI_COMM_WORLD, &m->req));
                break;
            }
        }
    }

    /* Complete: sends with Waitall, receives one by one with Waitany. */
    MPI_Request *sreqs = malloc(sizeof(MPI_Request) * (size_t)n * per_peer);
    MPI_Request *rreqs = malloc(sizeof(MPI_Request) * (size_t)n * per_peer);
    for (int j = 0; j < n * per_peer; j++) {
        sreqs[j] = out[j].req;
        rreqs[j] = in[j].req;
    }
    for (int done = 0; done < n * per_peer; done++) {
        int idx;
        MPI_Status st;
        MPICHK(MPI_Waitany(n * per_peer, rreqs, &idx, &st));
        CHECK(idx >= 0 && idx < n * per_peer, "Waitany index %d", idx);
        CHECK(rreqs[idx] == MPI_REQUEST_NULL, "Waitany left request %d non-null", idx);
        struct cmsg *m = &in[idx];
        int src = idx / per_peer, tag = idx % per_peer;
        CHECK_STATUS(st, src, tag, (int)m->len, MPI_BYTE);
        long bad = tu_verify(m->buf, m->len, m->seed);
        CHECK(bad < 0, "round %d: message %d from %d (%zu bytes into %zu): byte %ld differs", round, tag,
              src, m->len, m->cap, bad);
        bad = tu_verify_byte(m->buf + m->len, m->cap + 64 - m->len, GUARD);
        CHECK(bad < 0, "round %d: message %d from %d (%zu bytes into %zu): byte %zu past the message written",
              round, tag, src, m->len, m->cap, m->len + (size_t)bad);
    }
    int idx = 0;
    MPICHK(MPI_Waitany(n * per_peer, rreqs, &idx, MPI_STATUS_IGNORE));
    CHECK(idx == MPI_UNDEFINED, "Waitany over all-null requests: index %d", idx);

    MPI_Status *sts = malloc(sizeof(MPI_Status) * (size_t)n * per_peer);
    MPICHK(MPI_Waitall(n * per_peer, sreqs, sts));
    for (int j = 0; j < n * per_peer; j++)
        CHECK(sreqs[j] == MPI_REQUEST_NULL, "Waitall left request %d", j);
    for (int j = 0; j < n * per_peer; j++) {
        free(in[j].buf);
        free(out[j].buf);
    }
    free(sts);
    free(sreqs);
    free(rreqs);
    free(in);
    free(out);
    tu_barrier();
}

/* ------------------------------------------------------------ phase 2 */

struct layout {
    size_t len;         /* message bytes */
    size_t bl;          /* block length */
    size_t nb;          /* blocks the message fills (last may be partial: no, len = nb * bl) */
    int send_vec;       /* sender uses the vector (else contiguous) */
    size_t send_stride;
    int recv_vec;
    size_t recv_nb;     /* blocks of the receive vector (>= nb) */
    size_t recv_stride;
};

static struct layout pick_layout(uint64_t seed)
{
    static const size_t bls[] = {1, 3, 8, 64, 1000, 4096, 65536};
    uint64_t s = seed;
    struct layout l;
    size_t want = pick_size(&s);
    do {
        l.bl = bls[tu_rand(&s) % (sizeof bls / sizeof bls[0])];
    } while (l.bl < 64 && want > 40000); /* keep element-wise packing cheap */
    l.nb = want / l.bl;
    if (l.nb == 0)
        l.nb = 1;
    l.len = l.nb * l.bl;
    int how = (int)(tu_rand(&s) % 4);
    l.send_vec = how != 0;               /* contiguous sender -> RGET into a vector receiver */
    l.recv_vec = how != 1;               /* vector sender into a contiguous receive */
    l.send_stride = l.bl + tu_range(&s, 1, 64);
    l.recv_stride = l.bl + tu_range(&s, 1, 64);
    l.recv_nb = l.nb + (tu_rand(&s) % 3 == 0 ? tu_range(&s, 1, 3) : 0);
    return l;
}

struct vmsg {
    struct layout l;
    uint64_t seed;
    unsigned char *buf;
    size_t extent;
    MPI_Datatype type;
    MPI_Request req;
};

static MPI_Datatype make_vector(size_t nb, size_t bl, size_t stride)
{
    MPI_Datatype t;
    MPICHK(MPI_Type_vector((int)nb, (int)bl, (int)stride, MPI_BYTE, &t));
    MPICHK(MPI_Type_commit(&t));
    return t;
}

static void vector_round(int round)
{
    const int n = tu_size;
    const int per = per_peer / 2 ? per_peer / 2 : 1;
    struct vmsg *in = calloc((size_t)n * per, sizeof *in);
    struct vmsg *out = calloc((size_t)n * per, sizeof *out);
    CHECK(in && out, "calloc");
    for (int src = 0; src < n; src++) {
        for (int i = 0; i < per; i++) {
            struct vmsg *m = &in[src * per + i];
            m->seed = tu_seed(3000 + round, src, tu_rank, i);
            m->l = pick_layout(m->seed);
            if (m->l.recv_vec) {
                m->extent = (m->l.recv_nb - 1) * m->l.recv_stride + m->l.bl;
                m->type = make_vector(m->l.recv_nb, m->l.bl, m->l.recv_stride);
            } else {
                m->extent = m->l.len;
                m->type = MPI_BYTE;
            }
            m->buf = malloc(m->extent + 64);
            CHECK(m->buf, "malloc %zu", m->extent + 64);
            memset(m->buf, GAP, m->extent + 64);
            int count = m->l.recv_vec ? 1 : (int)m->l.len;
            MPICHK(MPI_Irecv(m->buf, count, m->type, src, 100 + i, MPI_COMM_WORLD, &m->req));
        }
    }
    for (int k = 0; k < n; k++) {
        int dst = (tu_rank + k) % n;
        for (int i = 0; i < per; i++) {
            struct vmsg *m = &out[dst * per + i];
            m->seed = tu_seed(3000 + round, tu_rank, dst, i);
            m->l = pick_layout(m->seed);
            unsigned char *packed = malloc(m->l.len ? m->l.len : 1);
            CHECK(packed, "malloc");
            tu_fill(packed, m->l.len, m->seed);
            if (m->l.send_vec) {
                m->extent = (m->l.nb - 1) * m->l.send_stride + m->l.bl;
                m->buf = malloc(m->extent);
                CHECK(m->buf, "malloc %zu", m->extent);
                memset(m->buf, 0xee, m->extent);
                for (size_t b = 0; b < m->l.nb; b++)
                    memcpy(m->buf + b * m->l.send_stride, packed + b * m->l.bl, m->l.bl);
                free(packed);
                m->type = make_vector(m->l.nb, m->l.bl, m->l.send_stride);
                MPICHK(MPI_Isend(m->buf, 1, m->type, dst, 100 + i, MPI_COMM_WORLD, &m->req));
                /* the send holds its own reference: freeing now must be safe */
                MPICHK(MPI_Type_free(&m->type));
            } else {
                m->buf = packed;
                m->type = MPI_BYTE;
                MPICHK(MPI_Isend(m->buf, (int)m->l.len, MPI_BYTE, dst, 100 + i, MPI_COMM_WORLD, &m->req));
            }
        }
    }
    for (int j = 0; j < n * per; j++) {
        struct vmsg *m = &in[j];
        int src = j / per, tag = 100 + j % per;
        MPI_Status st;
        MPICHK(MPI_Wait(&m->req, &st));
        CHECK(st.MPI_SOURCE == src && st.MPI_TAG == tag, "status (%d, %d), expected (%d, %d)", st.MPI_SOURCE,
              st.MPI_TAG, src, tag);
        int elems = -1, cnt = -1;
        if (TU_OPTIONAL(MPI_Get_elements(&st, MPI_BYTE, &elems), "MPI_Get_elements"))
            CHECK(elems == (int)m->l.len, "Get_elements %d, expected %zu", elems, m->l.len);
        if (m->l.recv_vec) {
            int want = m->l.recv_nb == m->l.nb ? 1 : MPI_UNDEFINED;
            if (tu_get_count(&st, m->type, &cnt))
                CHECK(cnt == want, "Get_count of %zu blocks into a %zu-block vector: %d, expected %d", m->l.nb,
                  m->l.recv_nb, cnt, want);
            /* message blocks, then gaps and unused blocks untouched */
            unsigned char *expect = malloc(m->l.len ? m->l.len : 1);
            tu_fill(expect, m->l.len, m->seed);
            for (size_t b = 0; b < m->l.recv_nb; b++) {
                unsigned char *blk = m->buf + b * m->l.recv_stride;
                if (b < m->l.nb) {
                    CHECK(memcmp(blk, expect + b * m->l.bl, m->l.bl) == 0,
                          "round %d msg %d from %d: block %zu of %zu (bl %zu, stride %zu, %s sender) differs",
                          round, tag, src, b, m->l.nb, m->l.bl, m->l.recv_stride,
                          m->l.send_vec ? "vector" : "contiguous");
                } else {
                    long bad = tu_verify_byte(blk, m->l.bl, GAP);
                    CHECK(bad < 0,
                          "round %d msg %d from %d (%zu bytes, %s sender): unused block %zu of the receive vector "
                          "(%zu blocks of %zu, stride %zu) written at byte %ld",
                          round, tag, src, m->l.len, m->l.send_vec ? "vector" : "contiguous", b, m->l.recv_nb,
                          m->l.bl, m->l.recv_stride, bad);
                }
                if (b + 1 < m->l.recv_nb) {
                    long bad = tu_verify_byte(blk + m->l.bl, m->l.recv_stride - m->l.bl, GAP);
                    CHECK(bad < 0, "round %d msg %d from %d: gap after block %zu written", round, tag, src, b);
                }
            }
            long bad = tu_verify_byte(m->buf + m->extent, 64, GAP);
            CHECK(bad < 0, "round %d msg %d from %d: written past the receive extent", round, tag, src);
            free(expect);
            MPICHK(MPI_Type_free(&m->type));
        } else {
            CHECK_STATUS(st, src, tag, (int)m->l.len, MPI_BYTE);
            long bad = tu_verify(m->buf, m->l.len, m->seed);
            CHECK(bad < 0, "round %d msg %d from %d: %zu bytes from a %s sender (bl %zu stride %zu): byte %ld differs",
                  round, tag, src, m->l.len, m->l.send_vec ? "vector" : "contiguous", m->l.bl, m->l.send_stride,
                  bad);
        }
    }
    for (int j = 0; j < n * per; j++) {
        MPICHK(MPI_Wait(&out[j].req, MPI_STATUS_IGNORE));
        free(out[j].buf);
        free(in[j].buf);
    }
    free(in);
    free(out);
    tu_barrier();
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "p2p_storm");
    if (argc > 1)
        rounds = atoi(argv[1]);
    if (tu_size >= 8)
        per_peer = 4; /* oversubscribed: keep the run short */
    const char *cma = getenv("BMPI_SHM_CMA");
    if (tu_rank == 0)
        printf("p2p_storm: %d ranks, %d rounds, %d messages per pair%s\n", tu_size, rounds, per_peer,
               cma ? (strcmp(cma, "0") ? "" : ", BMPI_SHM_CMA=0") : "");
    for (int r = 0; r < rounds; r++)
        contig_round(r);
    /* derived datatypes, if the datatype engine is there */
    MPI_Datatype probe;
    int have_types = TU_OPTIONAL(MPI_Type_vector(2, 1, 2, MPI_BYTE, &probe), "MPI_Type_vector");
    if (have_types) {
        MPICHK(MPI_Type_free(&probe));
        for (int r = 0; r < rounds; r++)
            vector_round(r);
    }
    tu_finish();
    return 0;
}
