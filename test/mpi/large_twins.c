/*
 * Every implemented large-count (_c) function against its int twin, with
 * small counts: the same call made both ways must give the same result
 * (buffers, statuses, sizes, positions, new types). Quick, so the whole _c
 * surface runs at several rank counts; test/mpi/large_count.c moves the
 * counts above 2^31.
 */
#include "testutil.h"

#include <limits.h>
#include <stdbool.h>

#define NE 37 /* elements per block: odd, so no size lines up by chance */

static int prev, next;

static void same(const void *a, const void *b, size_t n, const char *what)
{
    CHECK(memcmp(a, b, n) == 0, "%s: the _c call's result differs from the int call's", what);
}

/* ---------------------------------------------------------------- p2p */

/* A message of NE ints from prev, sent by next's twin call: the same data
 * and status count both ways. */
static void recv_both(int *got, MPI_Status *st, int tag, const char *what)
{
    MPI_Count n = -1;
    int ni = -1;
    MPICHK(MPI_Get_count_c(st, MPI_INT, &n));
    MPICHK(MPI_Get_count(st, MPI_INT, &ni));
    CHECK(n == NE && ni == NE, "%s: counts %lld and %d, expected %d", what, n, ni, NE);
    MPICHK(MPI_Get_elements_c(st, MPI_INT, &n));
    CHECK(n == NE, "%s: MPI_Get_elements_c %lld", what, n);
    CHECK(tu_verify(got, NE * sizeof(int), tu_seed(tag, prev, tu_rank, 0)) < 0,
          "%s: wrong data", what);
}

static void p2p(void)
{
    int out[NE], in[NE];
    MPI_Status st;
    MPI_Request r[2];
    for (int tag = 1; tag <= 9; tag++) {
        tu_fill(out, sizeof out, tu_seed(tag, tu_rank, next, 0));
        memset(in, 0, sizeof in);
        switch (tag) {
        case 1:
            MPICHK(MPI_Irecv_c(in, NE, MPI_INT, prev, tag, MPI_COMM_WORLD, &r[0]));
            MPICHK(MPI_Send_c(out, NE, MPI_INT, next, tag, MPI_COMM_WORLD));
            MPICHK(MPI_Wait(&r[0], &st));
            break;
        case 2:
            MPICHK(MPI_Issend_c(out, NE, MPI_INT, next, tag, MPI_COMM_WORLD, &r[0]));
            MPICHK(MPI_Recv_c(in, NE, MPI_INT, prev, tag, MPI_COMM_WORLD, &st));
            MPICHK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
            break;
        case 3:
            MPICHK(MPI_Irecv_c(in, NE, MPI_INT, prev, tag, MPI_COMM_WORLD, &r[0]));
            MPICHK(MPI_Isend_c(out, NE, MPI_INT, next, tag, MPI_COMM_WORLD, &r[1]));
            MPICHK(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
            MPICHK(MPI_Wait(&r[0], &st));
            break;
        case 4:
            MPICHK(MPI_Sendrecv_c(out, NE, MPI_INT, next, tag, in, NE, MPI_INT, prev, tag,
                                  MPI_COMM_WORLD, &st));
            break;
        case 5:
            memcpy(in, out, sizeof in);
            MPICHK(MPI_Sendrecv_replace_c(in, NE, MPI_INT, next, tag, prev, tag, MPI_COMM_WORLD,
                                          &st));
            break;
        case 6:
            MPICHK(MPI_Isendrecv_c(out, NE, MPI_INT, next, tag, in, NE, MPI_INT, prev, tag,
                                   MPI_COMM_WORLD, &r[0]));
            MPICHK(MPI_Wait(&r[0], &st));
            break;
        case 7:
            memcpy(in, out, sizeof in);
            MPICHK(MPI_Isendrecv_replace_c(in, NE, MPI_INT, next, tag, prev, tag, MPI_COMM_WORLD,
                                           &r[0]));
            MPICHK(MPI_Wait(&r[0], &st));
            break;
        case 8: {
            MPI_Message m;
            MPICHK(MPI_Isend_c(out, NE, MPI_INT, next, tag, MPI_COMM_WORLD, &r[1]));
            MPICHK(MPI_Mprobe(prev, tag, MPI_COMM_WORLD, &m, MPI_STATUS_IGNORE));
            MPICHK(MPI_Mrecv_c(in, NE, MPI_INT, &m, &st));
            MPICHK(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
            break;
        }
        default: {
            MPI_Message m;
            MPICHK(MPI_Isend_c(out, NE, MPI_INT, next, tag, MPI_COMM_WORLD, &r[1]));
            MPICHK(MPI_Mprobe(prev, tag, MPI_COMM_WORLD, &m, MPI_STATUS_IGNORE));
            MPICHK(MPI_Imrecv_c(in, NE, MPI_INT, &m, &r[0]));
            MPICHK(MPI_Wait(&r[0], &st));
            MPICHK(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
            break;
        }
        }
        recv_both(in, &st, tag, "point-to-point _c call");
    }
}

/* Ready, persistent and buffered sends, with MPI_Buffer_attach_c/detach_c. */
static void p2p_modes(void)
{
    int out[NE], in[NE];
    MPI_Request r[2];
    MPI_Status st;
    size_t bsize = 4 * (NE * sizeof(int) + MPI_BSEND_OVERHEAD);
    char *bbuf = malloc(bsize);
    CHECK(bbuf != NULL, "out of memory");
    MPICHK(MPI_Buffer_attach_c(bbuf, (MPI_Count)bsize));
    for (int tag = 19; tag < 25; tag++) {
        tu_fill(out, sizeof out, tu_seed(tag, tu_rank, next, 0));
        MPICHK(MPI_Recv_init_c(in, NE, MPI_INT, prev, tag, MPI_COMM_WORLD, &r[0]));
        MPICHK(MPI_Start(&r[0]));
        tu_barrier(); /* every receive is posted: the ready sends may go */
        switch (tag) {
        case 19: MPICHK(MPI_Irsend_c(out, NE, MPI_INT, next, tag, MPI_COMM_WORLD, &r[1])); break;
        case 20: MPICHK(MPI_Send_init_c(out, NE, MPI_INT, next, tag, MPI_COMM_WORLD, &r[1])); break;
        case 21: MPICHK(MPI_Ssend_init_c(out, NE, MPI_INT, next, tag, MPI_COMM_WORLD, &r[1])); break;
        case 22: MPICHK(MPI_Rsend_init_c(out, NE, MPI_INT, next, tag, MPI_COMM_WORLD, &r[1])); break;
        case 23: MPICHK(MPI_Bsend_init_c(out, NE, MPI_INT, next, tag, MPI_COMM_WORLD, &r[1])); break;
        default: MPICHK(MPI_Ibsend_c(out, NE, MPI_INT, next, tag, MPI_COMM_WORLD, &r[1])); break;
        }
        bool started = tag == 19 || tag == 24; /* the nonblocking ones */
        if (!started)
            MPICHK(MPI_Start(&r[1]));
        MPICHK(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
        MPICHK(MPI_Wait(&r[0], &st));
        recv_both(in, &st, tag, "persistent or buffered _c call");
        if (!started)
            MPICHK(MPI_Request_free(&r[1]));
        MPICHK(MPI_Request_free(&r[0]));
    }
    tu_fill(out, sizeof out, tu_seed(25, tu_rank, next, 0));
    MPICHK(MPI_Bsend_c(out, NE, MPI_INT, next, 25, MPI_COMM_WORLD));
    MPICHK(MPI_Rsend_c(out, 0, MPI_INT, MPI_PROC_NULL, 26, MPI_COMM_WORLD));
    MPICHK(MPI_Ssend_c(out, 0, MPI_INT, MPI_PROC_NULL, 26, MPI_COMM_WORLD));
    MPICHK(MPI_Recv_c(in, NE, MPI_INT, prev, 25, MPI_COMM_WORLD, &st));
    recv_both(in, &st, 25, "MPI_Bsend_c");
    void *addr;
    MPI_Count size = 0;
    MPICHK(MPI_Buffer_detach_c(&addr, &size));
    CHECK(addr == bbuf && size == (MPI_Count)bsize, "MPI_Buffer_detach_c: %p, %lld", addr, size);
    free(bbuf);
}

/* ----------------------------------------------------------- datatypes */

/* Two types must describe the same layout: sizes, extents and the packed
 * bytes of two elements of a patterned buffer. */
static void same_type(MPI_Datatype a, MPI_Datatype b, const char *what)
{
    static unsigned char src[4096], pa[4096], pb[4096];
    tu_fill(src, sizeof src, 77);
    MPI_Count sa, sb, la, ea, lb, eb, tla, tea, tlb, teb;
    MPICHK(MPI_Type_commit(&a));
    MPICHK(MPI_Type_commit(&b));
    MPICHK(MPI_Type_size_x(a, &sa));
    MPICHK(MPI_Type_size_c(b, &sb));
    MPICHK(MPI_Type_get_extent_x(a, &la, &ea));
    MPICHK(MPI_Type_get_extent_c(b, &lb, &eb));
    MPICHK(MPI_Type_get_true_extent_x(a, &tla, &tea));
    MPICHK(MPI_Type_get_true_extent_c(b, &tlb, &teb));
    CHECK(sa == sb && la == lb && ea == eb && tla == tlb && tea == teb,
          "%s: size %lld/%lld, extent (%lld, %lld)/(%lld, %lld), true (%lld, %lld)/(%lld, %lld)",
          what, sa, sb, la, ea, lb, eb, tla, tea, tlb, teb);
    int pos = 0;
    MPI_Count posc = 0;
    MPICHK(MPI_Pack(src + 512, 2, a, pa, sizeof pa, &pos, MPI_COMM_WORLD));
    MPICHK(MPI_Pack_c(src + 512, 2, b, pb, sizeof pb, &posc, MPI_COMM_WORLD));
    CHECK(pos == posc, "%s: packed %d and %lld bytes", what, pos, posc);
    same(pa, pb, (size_t)pos, what);
    /* the envelope of a type made from small counts is the int one */
    int na, nd, nt, comb, combc;
    MPI_Count ni, nadr, nc, ndt;
    MPICHK(MPI_Type_get_envelope(a, &na, &nd, &nt, &comb));
    MPICHK(MPI_Type_get_envelope_c(b, &ni, &nadr, &nc, &ndt, &combc));
    CHECK(comb == combc && na == ni && nd == nadr && nc == 0 && nt == ndt,
          "%s: envelopes differ", what);
    int ia[64], ib[64];
    MPI_Aint aa[64], ab[64];
    MPI_Datatype ta[64], tb[64];
    if (comb != MPI_COMBINER_NAMED) {
        MPICHK(MPI_Type_get_contents(a, 64, 64, 64, ia, aa, ta));
        MPICHK(MPI_Type_get_contents_c(b, 64, 64, 0, 64, ib, ab, NULL, tb));
        same(ia, ib, (size_t)na * sizeof(int), what);
        same(aa, ab, (size_t)nd * sizeof(MPI_Aint), what);
        same(ta, tb, (size_t)nt * sizeof(MPI_Datatype), what);
        for (int i = 0; i < nt; i++) {
            int c;
            MPICHK(MPI_Type_get_envelope(ta[i], &c, &c, &c, &comb));
            if (comb != MPI_COMBINER_NAMED) {
                MPICHK(MPI_Type_free(&ta[i]));
                MPICHK(MPI_Type_free(&tb[i]));
            }
        }
    }
    MPICHK(MPI_Type_free(&a));
    MPICHK(MPI_Type_free(&b));
}

static void datatypes(void)
{
    MPI_Datatype a, b;
    int bl[3] = {2, 0, 3}, di[3] = {5, 1, 0};
    MPI_Count blc[3] = {2, 0, 3}, dic[3] = {5, 1, 0};
    MPI_Aint da[3] = {40, 4, 0};
    MPI_Count dac[3] = {40, 4, 0};
    MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};

    MPICHK(MPI_Type_contiguous(5, MPI_INT, &a));
    MPICHK(MPI_Type_contiguous_c(5, MPI_INT, &b));
    same_type(a, b, "MPI_Type_contiguous_c");
    MPICHK(MPI_Type_vector(3, 2, -4, MPI_SHORT, &a));
    MPICHK(MPI_Type_vector_c(3, 2, -4, MPI_SHORT, &b));
    same_type(a, b, "MPI_Type_vector_c");
    MPICHK(MPI_Type_create_hvector(3, 2, 24, MPI_INT, &a));
    MPICHK(MPI_Type_create_hvector_c(3, 2, 24, MPI_INT, &b));
    same_type(a, b, "MPI_Type_create_hvector_c");
    MPICHK(MPI_Type_indexed(3, bl, di, MPI_INT, &a));
    MPICHK(MPI_Type_indexed_c(3, blc, dic, MPI_INT, &b));
    same_type(a, b, "MPI_Type_indexed_c");
    MPICHK(MPI_Type_create_hindexed(3, bl, da, MPI_INT, &a));
    MPICHK(MPI_Type_create_hindexed_c(3, blc, dac, MPI_INT, &b));
    same_type(a, b, "MPI_Type_create_hindexed_c");
    MPICHK(MPI_Type_create_indexed_block(3, 2, di, MPI_INT, &a));
    MPICHK(MPI_Type_create_indexed_block_c(3, 2, dic, MPI_INT, &b));
    same_type(a, b, "MPI_Type_create_indexed_block_c");
    MPICHK(MPI_Type_create_hindexed_block(3, 2, da, MPI_INT, &a));
    MPICHK(MPI_Type_create_hindexed_block_c(3, 2, dac, MPI_INT, &b));
    same_type(a, b, "MPI_Type_create_hindexed_block_c");
    MPICHK(MPI_Type_create_struct(3, bl, da, types, &a));
    MPICHK(MPI_Type_create_struct_c(3, blc, dac, types, &b));
    same_type(a, b, "MPI_Type_create_struct_c");
    MPICHK(MPI_Type_create_resized(MPI_INT, -4, 12, &a));
    MPICHK(MPI_Type_create_resized_c(MPI_INT, -4, 12, &b));
    same_type(a, b, "MPI_Type_create_resized_c");
    int sz[2] = {6, 7}, sub[2] = {3, 2}, st[2] = {1, 4};
    MPI_Count szc[2] = {6, 7}, subc[2] = {3, 2}, stc[2] = {1, 4};
    MPICHK(MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, MPI_INT, &a));
    MPICHK(MPI_Type_create_subarray_c(2, szc, subc, stc, MPI_ORDER_C, MPI_INT, &b));
    same_type(a, b, "MPI_Type_create_subarray_c");
    int dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC}, darg[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2};
    int psz[2] = {2, 2};
    MPICHK(MPI_Type_create_darray(4, 3, 2, sz, dist, darg, psz, MPI_ORDER_FORTRAN, MPI_INT, &a));
    MPICHK(MPI_Type_create_darray_c(4, 3, 2, szc, dist, darg, psz, MPI_ORDER_FORTRAN, MPI_INT, &b));
    same_type(a, b, "MPI_Type_create_darray_c");

    /* above INT_MAX the arguments come back as large counts */
    MPI_Count big = (MPI_Count)INT_MAX + 2, got[3] = {0};
    MPICHK(MPI_Type_vector_c(2, 1, big, MPI_CHAR, &b));
    MPI_Count ni, na, nc, nd;
    int comb, small;
    MPICHK(MPI_Type_get_envelope_c(b, &ni, &na, &nc, &nd, &comb));
    CHECK(comb == MPI_COMBINER_VECTOR && ni == 0 && na == 0 && nc == 3 && nd == 1,
          "a vector with a large stride: envelope %d %lld %lld %lld %lld", comb, ni, na, nc, nd);
    MPI_Datatype old;
    MPICHK(MPI_Type_get_contents_c(b, 0, 0, 3, 1, NULL, NULL, got, &old));
    CHECK(got[0] == 2 && got[1] == 1 && got[2] == big && old == MPI_CHAR, "contents %lld %lld %lld",
          got[0], got[1], got[2]);
    MPI_Count lb, ext;
    MPICHK(MPI_Type_get_extent_c(b, &lb, &ext));
    CHECK(lb == 0 && ext == big + 1, "extent of the large vector: (%lld, %lld)", lb, ext);
    MPICHK(MPI_Type_size(b, &small));
    CHECK(small == 2, "size of the large vector: %d", small);
    EXPECT_CLASS(MPI_Type_get_envelope(b, &small, &small, &small, &comb), MPI_ERR_TYPE);
    MPICHK(MPI_Type_free(&b));
}

/* Pack, Unpack and external32, both ways. */
static void packing(void)
{
    double src[NE], back[NE];
    unsigned char pa[1024], pb[1024];
    tu_fill(src, sizeof src, 5);
    int size, pos = 0, upos = 0;
    MPI_Count sizec, posc = 0, uposc = 0;
    MPICHK(MPI_Pack_size(NE, MPI_DOUBLE, MPI_COMM_WORLD, &size));
    MPICHK(MPI_Pack_size_c(NE, MPI_DOUBLE, MPI_COMM_WORLD, &sizec));
    CHECK(size == sizec, "MPI_Pack_size_c %lld, int %d", sizec, size);
    MPICHK(MPI_Pack(src, NE, MPI_DOUBLE, pa, sizeof pa, &pos, MPI_COMM_WORLD));
    MPICHK(MPI_Pack_c(src, NE, MPI_DOUBLE, pb, sizeof pb, &posc, MPI_COMM_WORLD));
    CHECK(pos == posc, "MPI_Pack_c position %lld, int %d", posc, pos);
    same(pa, pb, (size_t)pos, "MPI_Pack_c");
    MPICHK(MPI_Unpack_c(pb, posc, &uposc, back, NE, MPI_DOUBLE, MPI_COMM_WORLD));
    CHECK(uposc == posc, "MPI_Unpack_c position %lld", uposc);
    same(back, src, sizeof src, "MPI_Unpack_c");
    MPICHK(MPI_Unpack(pa, pos, &upos, back, NE, MPI_DOUBLE, MPI_COMM_WORLD));
    MPI_Aint esize, epos = 0, eupos = 0;
    MPI_Count esizec, eposc = 0, euposc = 0;
    MPICHK(MPI_Pack_external_size("external32", NE, MPI_DOUBLE, &esize));
    MPICHK(MPI_Pack_external_size_c("external32", NE, MPI_DOUBLE, &esizec));
    CHECK(esize == esizec, "MPI_Pack_external_size_c %lld, int %ld", esizec, (long)esize);
    MPICHK(MPI_Pack_external("external32", src, NE, MPI_DOUBLE, pa, sizeof pa, &epos));
    MPICHK(MPI_Pack_external_c("external32", src, NE, MPI_DOUBLE, pb, sizeof pb, &eposc));
    CHECK(epos == eposc, "MPI_Pack_external_c position %lld", eposc);
    same(pa, pb, (size_t)epos, "MPI_Pack_external_c");
    memset(back, 0, sizeof back);
    MPICHK(MPI_Unpack_external_c("external32", pb, eposc, &euposc, back, NE, MPI_DOUBLE));
    same(back, src, sizeof src, "MPI_Unpack_external_c");
    MPICHK(MPI_Unpack_external("external32", pa, epos, &eupos, back, NE, MPI_DOUBLE));
    CHECK(eupos == euposc, "external32 unpack positions %ld, %lld", (long)eupos, euposc);
}

/* --------------------------------------------------------- collectives */

static void sum_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *type)
{
    (void)type;
    for (MPI_Count i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

static void sum_i(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

#define MAXP 16
enum { B = NE * MAXP }; /* room for a block per rank */

static int p;
static int sbuf[B], ra[B], rb[B];
static int cnt[MAXP], dsp[MAXP], wdsp[MAXP];
static MPI_Count cntc[MAXP];
/* alltoall(v,w): rank j sends cnt[i] to rank i, so rank i receives its own
 * cnt from everyone */
static int rcnt[MAXP];
static MPI_Count rcntc[MAXP];
static MPI_Aint dspc[MAXP], wdspc[MAXP];
static MPI_Datatype wt[MAXP];

/* Patterned input small enough that sums over the ranks cannot overflow. */
static void fill_small(uint64_t seed)
{
    tu_fill(sbuf, sizeof sbuf, seed);
    for (int i = 0; i < B; i++)
        sbuf[i] &= 0xfffff;
}

/* Run the int form into ra and the _c form into rb, from the same input. */
#define BOTH(intcall, ccall, what)                                                                 \
    do {                                                                                           \
        fill_small(tu_seed(400, tu_rank, 0, __LINE__));                                            \
        memset(ra, 0, sizeof ra);                                                                  \
        memset(rb, 0, sizeof rb);                                                                  \
        int *r_ = ra;                                                                              \
        MPICHK(intcall);                                                                           \
        r_ = rb;                                                                                   \
        MPICHK(ccall);                                                                             \
        same(ra, rb, sizeof ra, what);                                                             \
    } while (0)

/* A nonblocking or persistent call as a blocking one. */
static int done(int rc, MPI_Request *r, int persistent)
{
    if (rc)
        return rc;
    if (persistent && (rc = MPI_Start(r)))
        return rc;
    if ((rc = MPI_Wait(r, MPI_STATUS_IGNORE)))
        return rc;
    return persistent ? MPI_Request_free(r) : MPI_SUCCESS;
}

static void collectives(void)
{
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Info in = MPI_INFO_NULL;
    MPI_Request q;
    MPI_Op op, opc;
    MPICHK(MPI_Op_create(sum_i, 1, &op));
    MPICHK(MPI_Op_create_c(sum_c, 1, &opc));
    for (int i = 0; i < p; i++) {
        cnt[i] = (i * 7) % NE + 1;
        cntc[i] = cnt[i];
        dsp[i] = i * NE;
        dspc[i] = dsp[i];
        wdsp[i] = dsp[i] * (int)sizeof(int);
        wdspc[i] = wdsp[i];
        wt[i] = MPI_INT;
    }
    for (int i = 0; i < p; i++) {
        rcnt[i] = cnt[tu_rank];
        rcntc[i] = rcnt[i];
    }
    int me = cnt[tu_rank];

    BOTH(MPI_Bcast(memcpy(r_, sbuf, NE * sizeof(int)), NE, MPI_INT, p - 1, w),
         MPI_Bcast_c(memcpy(r_, sbuf, NE * sizeof(int)), NE, MPI_INT, p - 1, w), "MPI_Bcast_c");
    BOTH(MPI_Reduce(sbuf, r_, NE, MPI_INT, MPI_SUM, 0, w),
         MPI_Reduce_c(sbuf, r_, NE, MPI_INT, MPI_SUM, 0, w), "MPI_Reduce_c");
    BOTH(MPI_Allreduce(sbuf, r_, NE, MPI_INT, op, w), MPI_Allreduce_c(sbuf, r_, NE, MPI_INT, opc, w),
         "MPI_Allreduce_c with MPI_Op_create_c");
    BOTH(MPI_Reduce_local(sbuf, r_, NE, MPI_INT, MPI_SUM),
         MPI_Reduce_local_c(sbuf, r_, NE, MPI_INT, MPI_SUM), "MPI_Reduce_local_c");
    BOTH(MPI_Gather(sbuf, NE, MPI_INT, r_, NE, MPI_INT, 0, w),
         MPI_Gather_c(sbuf, NE, MPI_INT, r_, NE, MPI_INT, 0, w), "MPI_Gather_c");
    BOTH(MPI_Scatter(sbuf, NE, MPI_INT, r_, NE, MPI_INT, 0, w),
         MPI_Scatter_c(sbuf, NE, MPI_INT, r_, NE, MPI_INT, 0, w), "MPI_Scatter_c");
    BOTH(MPI_Allgather(sbuf, NE, MPI_INT, r_, NE, MPI_INT, w),
         MPI_Allgather_c(sbuf, NE, MPI_INT, r_, NE, MPI_INT, w), "MPI_Allgather_c");
    BOTH(MPI_Alltoall(sbuf, 3, MPI_INT, r_, 3, MPI_INT, w),
         MPI_Alltoall_c(sbuf, 3, MPI_INT, r_, 3, MPI_INT, w), "MPI_Alltoall_c");
    BOTH(MPI_Reduce_scatter_block(sbuf, r_, 3, MPI_INT, MPI_SUM, w),
         MPI_Reduce_scatter_block_c(sbuf, r_, 3, MPI_INT, MPI_SUM, w), "MPI_Reduce_scatter_block_c");
    BOTH(MPI_Scan(sbuf, r_, NE, MPI_INT, MPI_SUM, w), MPI_Scan_c(sbuf, r_, NE, MPI_INT, MPI_SUM, w),
         "MPI_Scan_c");
    BOTH(MPI_Exscan(sbuf, r_, NE, MPI_INT, MPI_SUM, w),
         MPI_Exscan_c(sbuf, r_, NE, MPI_INT, MPI_SUM, w), "MPI_Exscan_c");
    BOTH(MPI_Gatherv(sbuf, me, MPI_INT, r_, cnt, dsp, MPI_INT, 0, w),
         MPI_Gatherv_c(sbuf, me, MPI_INT, r_, cntc, dspc, MPI_INT, 0, w), "MPI_Gatherv_c");
    BOTH(MPI_Scatterv(sbuf, cnt, dsp, MPI_INT, r_, me, MPI_INT, 0, w),
         MPI_Scatterv_c(sbuf, cntc, dspc, MPI_INT, r_, me, MPI_INT, 0, w), "MPI_Scatterv_c");
    BOTH(MPI_Allgatherv(sbuf, me, MPI_INT, r_, cnt, dsp, MPI_INT, w),
         MPI_Allgatherv_c(sbuf, me, MPI_INT, r_, cntc, dspc, MPI_INT, w), "MPI_Allgatherv_c");
    BOTH(MPI_Alltoallv(sbuf, cnt, dsp, MPI_INT, r_, rcnt, dsp, MPI_INT, w),
         MPI_Alltoallv_c(sbuf, cntc, dspc, MPI_INT, r_, rcntc, dspc, MPI_INT, w), "MPI_Alltoallv_c");
    BOTH(MPI_Alltoallw(sbuf, cnt, wdsp, wt, r_, rcnt, wdsp, wt, w),
         MPI_Alltoallw_c(sbuf, cntc, wdspc, wt, r_, rcntc, wdspc, wt, w), "MPI_Alltoallw_c");
    BOTH(MPI_Reduce_scatter(sbuf, r_, cnt, MPI_INT, MPI_SUM, w),
         MPI_Reduce_scatter_c(sbuf, r_, cntc, MPI_INT, MPI_SUM, w), "MPI_Reduce_scatter_c");

    /* nonblocking (i = 0) and persistent (i = 1) forms of the same calls */
    for (int i = 0; i < 2; i++) {
#define NBP(icall, initcall) (i ? done(initcall, &q, 1) : done(icall, &q, 0))
        BOTH(NBP(MPI_Ibcast(memcpy(r_, sbuf, NE * sizeof(int)), NE, MPI_INT, 0, w, &q),
                 MPI_Bcast_init(memcpy(r_, sbuf, NE * sizeof(int)), NE, MPI_INT, 0, w, in, &q)),
             NBP(MPI_Ibcast_c(memcpy(r_, sbuf, NE * sizeof(int)), NE, MPI_INT, 0, w, &q),
                 MPI_Bcast_init_c(memcpy(r_, sbuf, NE * sizeof(int)), NE, MPI_INT, 0, w, in, &q)),
             "MPI_Ibcast_c / MPI_Bcast_init_c");
        BOTH(NBP(MPI_Ireduce(sbuf, r_, NE, MPI_INT, MPI_SUM, 0, w, &q),
                 MPI_Reduce_init(sbuf, r_, NE, MPI_INT, MPI_SUM, 0, w, in, &q)),
             NBP(MPI_Ireduce_c(sbuf, r_, NE, MPI_INT, MPI_SUM, 0, w, &q),
                 MPI_Reduce_init_c(sbuf, r_, NE, MPI_INT, MPI_SUM, 0, w, in, &q)),
             "MPI_Ireduce_c / MPI_Reduce_init_c");
        BOTH(NBP(MPI_Iallreduce(sbuf, r_, NE, MPI_INT, MPI_SUM, w, &q),
                 MPI_Allreduce_init(sbuf, r_, NE, MPI_INT, MPI_SUM, w, in, &q)),
             NBP(MPI_Iallreduce_c(sbuf, r_, NE, MPI_INT, MPI_SUM, w, &q),
                 MPI_Allreduce_init_c(sbuf, r_, NE, MPI_INT, MPI_SUM, w, in, &q)),
             "MPI_Iallreduce_c / MPI_Allreduce_init_c");
        BOTH(NBP(MPI_Igather(sbuf, NE, MPI_INT, r_, NE, MPI_INT, 0, w, &q),
                 MPI_Gather_init(sbuf, NE, MPI_INT, r_, NE, MPI_INT, 0, w, in, &q)),
             NBP(MPI_Igather_c(sbuf, NE, MPI_INT, r_, NE, MPI_INT, 0, w, &q),
                 MPI_Gather_init_c(sbuf, NE, MPI_INT, r_, NE, MPI_INT, 0, w, in, &q)),
             "MPI_Igather_c / MPI_Gather_init_c");
        BOTH(NBP(MPI_Iscatter(sbuf, NE, MPI_INT, r_, NE, MPI_INT, 0, w, &q),
                 MPI_Scatter_init(sbuf, NE, MPI_INT, r_, NE, MPI_INT, 0, w, in, &q)),
             NBP(MPI_Iscatter_c(sbuf, NE, MPI_INT, r_, NE, MPI_INT, 0, w, &q),
                 MPI_Scatter_init_c(sbuf, NE, MPI_INT, r_, NE, MPI_INT, 0, w, in, &q)),
             "MPI_Iscatter_c / MPI_Scatter_init_c");
        BOTH(NBP(MPI_Iallgather(sbuf, NE, MPI_INT, r_, NE, MPI_INT, w, &q),
                 MPI_Allgather_init(sbuf, NE, MPI_INT, r_, NE, MPI_INT, w, in, &q)),
             NBP(MPI_Iallgather_c(sbuf, NE, MPI_INT, r_, NE, MPI_INT, w, &q),
                 MPI_Allgather_init_c(sbuf, NE, MPI_INT, r_, NE, MPI_INT, w, in, &q)),
             "MPI_Iallgather_c / MPI_Allgather_init_c");
        BOTH(NBP(MPI_Ialltoall(sbuf, 3, MPI_INT, r_, 3, MPI_INT, w, &q),
                 MPI_Alltoall_init(sbuf, 3, MPI_INT, r_, 3, MPI_INT, w, in, &q)),
             NBP(MPI_Ialltoall_c(sbuf, 3, MPI_INT, r_, 3, MPI_INT, w, &q),
                 MPI_Alltoall_init_c(sbuf, 3, MPI_INT, r_, 3, MPI_INT, w, in, &q)),
             "MPI_Ialltoall_c / MPI_Alltoall_init_c");
        BOTH(NBP(MPI_Ireduce_scatter_block(sbuf, r_, 3, MPI_INT, MPI_SUM, w, &q),
                 MPI_Reduce_scatter_block_init(sbuf, r_, 3, MPI_INT, MPI_SUM, w, in, &q)),
             NBP(MPI_Ireduce_scatter_block_c(sbuf, r_, 3, MPI_INT, MPI_SUM, w, &q),
                 MPI_Reduce_scatter_block_init_c(sbuf, r_, 3, MPI_INT, MPI_SUM, w, in, &q)),
             "MPI_Ireduce_scatter_block_c / MPI_Reduce_scatter_block_init_c");
        BOTH(NBP(MPI_Iscan(sbuf, r_, NE, MPI_INT, MPI_SUM, w, &q),
                 MPI_Scan_init(sbuf, r_, NE, MPI_INT, MPI_SUM, w, in, &q)),
             NBP(MPI_Iscan_c(sbuf, r_, NE, MPI_INT, MPI_SUM, w, &q),
                 MPI_Scan_init_c(sbuf, r_, NE, MPI_INT, MPI_SUM, w, in, &q)),
             "MPI_Iscan_c / MPI_Scan_init_c");
        BOTH(NBP(MPI_Iexscan(sbuf, r_, NE, MPI_INT, MPI_SUM, w, &q),
                 MPI_Exscan_init(sbuf, r_, NE, MPI_INT, MPI_SUM, w, in, &q)),
             NBP(MPI_Iexscan_c(sbuf, r_, NE, MPI_INT, MPI_SUM, w, &q),
                 MPI_Exscan_init_c(sbuf, r_, NE, MPI_INT, MPI_SUM, w, in, &q)),
             "MPI_Iexscan_c / MPI_Exscan_init_c");
        BOTH(NBP(MPI_Igatherv(sbuf, me, MPI_INT, r_, cnt, dsp, MPI_INT, 0, w, &q),
                 MPI_Gatherv_init(sbuf, me, MPI_INT, r_, cnt, dsp, MPI_INT, 0, w, in, &q)),
             NBP(MPI_Igatherv_c(sbuf, me, MPI_INT, r_, cntc, dspc, MPI_INT, 0, w, &q),
                 MPI_Gatherv_init_c(sbuf, me, MPI_INT, r_, cntc, dspc, MPI_INT, 0, w, in, &q)),
             "MPI_Igatherv_c / MPI_Gatherv_init_c");
        BOTH(NBP(MPI_Iscatterv(sbuf, cnt, dsp, MPI_INT, r_, me, MPI_INT, 0, w, &q),
                 MPI_Scatterv_init(sbuf, cnt, dsp, MPI_INT, r_, me, MPI_INT, 0, w, in, &q)),
             NBP(MPI_Iscatterv_c(sbuf, cntc, dspc, MPI_INT, r_, me, MPI_INT, 0, w, &q),
                 MPI_Scatterv_init_c(sbuf, cntc, dspc, MPI_INT, r_, me, MPI_INT, 0, w, in, &q)),
             "MPI_Iscatterv_c / MPI_Scatterv_init_c");
        BOTH(NBP(MPI_Iallgatherv(sbuf, me, MPI_INT, r_, cnt, dsp, MPI_INT, w, &q),
                 MPI_Allgatherv_init(sbuf, me, MPI_INT, r_, cnt, dsp, MPI_INT, w, in, &q)),
             NBP(MPI_Iallgatherv_c(sbuf, me, MPI_INT, r_, cntc, dspc, MPI_INT, w, &q),
                 MPI_Allgatherv_init_c(sbuf, me, MPI_INT, r_, cntc, dspc, MPI_INT, w, in, &q)),
             "MPI_Iallgatherv_c / MPI_Allgatherv_init_c");
        BOTH(NBP(MPI_Ialltoallv(sbuf, cnt, dsp, MPI_INT, r_, rcnt, dsp, MPI_INT, w, &q),
                 MPI_Alltoallv_init(sbuf, cnt, dsp, MPI_INT, r_, rcnt, dsp, MPI_INT, w, in, &q)),
             NBP(MPI_Ialltoallv_c(sbuf, cntc, dspc, MPI_INT, r_, rcntc, dspc, MPI_INT, w, &q),
                 MPI_Alltoallv_init_c(sbuf, cntc, dspc, MPI_INT, r_, rcntc, dspc, MPI_INT, w, in, &q)),
             "MPI_Ialltoallv_c / MPI_Alltoallv_init_c");
        BOTH(NBP(MPI_Ialltoallw(sbuf, cnt, wdsp, wt, r_, rcnt, wdsp, wt, w, &q),
                 MPI_Alltoallw_init(sbuf, cnt, wdsp, wt, r_, rcnt, wdsp, wt, w, in, &q)),
             NBP(MPI_Ialltoallw_c(sbuf, cntc, wdspc, wt, r_, rcntc, wdspc, wt, w, &q),
                 MPI_Alltoallw_init_c(sbuf, cntc, wdspc, wt, r_, rcntc, wdspc, wt, w, in, &q)),
             "MPI_Ialltoallw_c / MPI_Alltoallw_init_c");
        BOTH(NBP(MPI_Ireduce_scatter(sbuf, r_, cnt, MPI_INT, MPI_SUM, w, &q),
                 MPI_Reduce_scatter_init(sbuf, r_, cnt, MPI_INT, MPI_SUM, w, in, &q)),
             NBP(MPI_Ireduce_scatter_c(sbuf, r_, cntc, MPI_INT, MPI_SUM, w, &q),
                 MPI_Reduce_scatter_init_c(sbuf, r_, cntc, MPI_INT, MPI_SUM, w, in, &q)),
             "MPI_Ireduce_scatter_c / MPI_Reduce_scatter_init_c");
#undef NBP
    }
    MPICHK(MPI_Op_free(&op));
    MPICHK(MPI_Op_free(&opc));
}

/* The neighbourhood collectives on a periodic ring. */
static void neighbours(void)
{
    MPI_Comm ring;
    int dims[1] = {p}, periods[1] = {1};
    MPI_Request q;
    MPICHK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    int c2[2] = {3, 5}, d2[2] = {0, NE};
    MPI_Count c2c[2] = {3, 5};
    MPI_Aint d2c[2] = {0, NE}, w2a[2] = {0, NE * (MPI_Aint)sizeof(int)};
    MPI_Datatype t2[2] = {MPI_INT, MPI_INT};
    for (int i = 0; i < 2; i++) {
#define NB(call, icall) (i ? done(icall, &q, 0) : (call))
        BOTH(NB(MPI_Neighbor_allgather(sbuf, NE, MPI_INT, r_, NE, MPI_INT, ring),
                MPI_Ineighbor_allgather(sbuf, NE, MPI_INT, r_, NE, MPI_INT, ring, &q)),
             NB(MPI_Neighbor_allgather_c(sbuf, NE, MPI_INT, r_, NE, MPI_INT, ring),
                MPI_Ineighbor_allgather_c(sbuf, NE, MPI_INT, r_, NE, MPI_INT, ring, &q)),
             "MPI_(I)neighbor_allgather_c");
        BOTH(NB(MPI_Neighbor_allgatherv(sbuf, 4, MPI_INT, r_, (int[]){4, 4}, d2, MPI_INT, ring),
                MPI_Ineighbor_allgatherv(sbuf, 4, MPI_INT, r_, (int[]){4, 4}, d2, MPI_INT, ring, &q)),
             NB(MPI_Neighbor_allgatherv_c(sbuf, 4, MPI_INT, r_, (MPI_Count[]){4, 4}, d2c, MPI_INT, ring),
                MPI_Ineighbor_allgatherv_c(sbuf, 4, MPI_INT, r_, (MPI_Count[]){4, 4}, d2c, MPI_INT,
                                           ring, &q)),
             "MPI_(I)neighbor_allgatherv_c");
        BOTH(NB(MPI_Neighbor_alltoall(sbuf, 6, MPI_INT, r_, 6, MPI_INT, ring),
                MPI_Ineighbor_alltoall(sbuf, 6, MPI_INT, r_, 6, MPI_INT, ring, &q)),
             NB(MPI_Neighbor_alltoall_c(sbuf, 6, MPI_INT, r_, 6, MPI_INT, ring),
                MPI_Ineighbor_alltoall_c(sbuf, 6, MPI_INT, r_, 6, MPI_INT, ring, &q)),
             "MPI_(I)neighbor_alltoall_c");
        /* the -1 neighbour gets 3 ints and sends 5 back: a ring's blocks cross */
        BOTH(NB(MPI_Neighbor_alltoallv(sbuf, c2, d2, MPI_INT, r_, (int[]){5, 3}, d2, MPI_INT, ring),
                MPI_Ineighbor_alltoallv(sbuf, c2, d2, MPI_INT, r_, (int[]){5, 3}, d2, MPI_INT, ring, &q)),
             NB(MPI_Neighbor_alltoallv_c(sbuf, c2c, d2c, MPI_INT, r_, (MPI_Count[]){5, 3}, d2c, MPI_INT,
                                         ring),
                MPI_Ineighbor_alltoallv_c(sbuf, c2c, d2c, MPI_INT, r_, (MPI_Count[]){5, 3}, d2c,
                                          MPI_INT, ring, &q)),
             "MPI_(I)neighbor_alltoallv_c");
        BOTH(NB(MPI_Neighbor_alltoallw(sbuf, c2, w2a, t2, r_, (int[]){5, 3}, w2a, t2, ring),
                MPI_Ineighbor_alltoallw(sbuf, c2, w2a, t2, r_, (int[]){5, 3}, w2a, t2, ring, &q)),
             NB(MPI_Neighbor_alltoallw_c(sbuf, c2c, w2a, t2, r_, (MPI_Count[]){5, 3}, w2a, t2, ring),
                MPI_Ineighbor_alltoallw_c(sbuf, c2c, w2a, t2, r_, (MPI_Count[]){5, 3}, w2a, t2, ring,
                                          &q)),
             "MPI_(I)neighbor_alltoallw_c");
#undef NB
    }
    MPICHK(MPI_Comm_free(&ring));
}

/* The checks of the _c calls, and int results that cannot hold a value. */
static void errors(void)
{
    char c = 0, msg[MPI_MAX_ERROR_STRING];
    int len, small, rc;
    MPI_Count big = (MPI_Count)INT_MAX + 1, n;
    MPI_Datatype t;
    MPI_Request q;
    EXPECT_CLASS(MPI_Send_c(&c, -1, MPI_CHAR, next, 1, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Irecv_c(&c, 1, MPI_CHAR, prev, 1, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Bcast_c(&c, -2, MPI_CHAR, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Allgatherv_c(&c, 1, MPI_CHAR, &c, NULL, NULL, MPI_CHAR, MPI_COMM_WORLD),
                 MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Type_contiguous_c(-1, MPI_INT, &t), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Type_indexed_c(1, NULL, &n, MPI_INT, &t), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Type_create_subarray_c(1, &big, &n, &n, MPI_ORDER_C, MPI_CHAR, &t),
                 MPI_ERR_VALUE_TOO_LARGE);
    rc = MPI_Type_vector_c(1, -3, 1, MPI_INT, &t);
    EXPECT_CLASS(rc, MPI_ERR_ARG);
    MPICHK(MPI_Error_string(rc, msg, &len));
    CHECK(strstr(msg, "MPI_Type_vector_c") && strstr(msg, "-3"),
          "the message names the call and the value: %s", msg);
    EXPECT_CLASS(MPI_Isend_c(&c, 1, MPI_DATATYPE_NULL, next, 1, MPI_COMM_WORLD, &q), MPI_ERR_TYPE);

    /* a buffer whose size an int cannot hold: the int detach refuses and
     * leaves it attached (nothing is ever sent into it) */
    MPICHK(MPI_Buffer_attach_c(&c, big));
    void *addr = NULL;
    EXPECT_CLASS(MPI_Buffer_detach(&addr, &small), MPI_ERR_VALUE_TOO_LARGE);
    MPICHK(MPI_Buffer_detach_c(&addr, &n));
    CHECK(addr == &c && n == big, "MPI_Buffer_detach_c: %p, %lld", addr, n);

    /* counts above INT_MAX in a status */
    MPI_Status st;
    MPICHK(MPI_Status_set_elements_x(&st, MPI_CHAR, big));
    MPICHK(MPI_Get_count(&st, MPI_CHAR, &small));
    MPICHK(MPI_Get_count_c(&st, MPI_CHAR, &n));
    CHECK(small == MPI_UNDEFINED && n == big, "counts %d, %lld", small, n);
    MPICHK(MPI_Get_elements(&st, MPI_CHAR, &small));
    MPICHK(MPI_Get_elements_c(&st, MPI_CHAR, &n));
    CHECK(small == MPI_UNDEFINED && n == big, "elements %d, %lld", small, n);
    MPICHK(MPI_Status_set_elements_x(&st, MPI_CHAR, big + 1));
    MPICHK(MPI_Get_count_c(&st, MPI_INT, &n));
    CHECK(n == MPI_UNDEFINED, "MPI_Get_count_c of a partial int: %lld", n);
    /* more than INT_MAX elements in all, of a type without data: nothing
     * to move, but no count may be cut to an int on the way */
    MPI_Datatype empty;
    MPICHK(MPI_Type_contiguous(0, MPI_INT, &empty));
    MPICHK(MPI_Type_commit(&empty));
    MPICHK(MPI_Reduce_scatter_block_c(MPI_IN_PLACE, &c, big, empty, MPI_SUM, MPI_COMM_WORLD));
    MPI_Count *many = malloc((size_t)p * sizeof *many);
    CHECK(many != NULL, "out of memory");
    for (int i = 0; i < p; i++)
        many[i] = big;
    MPICHK(MPI_Reduce_scatter_c(MPI_IN_PLACE, &c, many, empty, MPI_SUM, MPI_COMM_WORLD));
    free(many);
    MPICHK(MPI_Type_free(&empty));
    EXPECT_CLASS(MPI_Pack_size(INT_MAX, MPI_INT, MPI_COMM_WORLD, &small), MPI_ERR_VALUE_TOO_LARGE);
    MPICHK(MPI_Pack_size_c(INT_MAX, MPI_INT, MPI_COMM_WORLD, &n));
    CHECK(n == (MPI_Count)INT_MAX * 4, "MPI_Pack_size_c: %lld", n);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "large_twins");
    p = tu_size;
    CHECK(p <= MAXP, "at most %d ranks", MAXP);
    prev = (tu_rank - 1 + p) % p;
    next = (tu_rank + 1) % p;
    p2p();
    p2p_modes();
    datatypes();
    packing();
    collectives();
    neighbours();
    errors();
    tu_finish();
    return 0;
}
