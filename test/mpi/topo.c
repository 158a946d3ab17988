/*
 * Topologies: Dims_create, Cart_create/get/rank/coords/shift on periodic
 * and open grids, Cart_sub, Cart_map, Graph_create and queries,
 * Dist_graph_create_adjacent and Dist_graph_create, and the neighbourhood
 * collectives on a ring, a 2-d torus and a directed graph.
 */
#include "testutil.h"

static void test_dims(void)
{
    struct {
        int n, nd, in[4], out[4];
    } cases[] = {
        {6, 2, {0, 0}, {3, 2}},       {12, 3, {0, 0, 0}, {3, 2, 2}}, {16, 2, {0, 0}, {4, 4}},
        {24, 3, {0, 0, 0}, {4, 3, 2}}, {7, 2, {0, 0}, {7, 1}},       {12, 3, {0, 3, 0}, {2, 3, 2}},
        {1, 3, {0, 0, 0}, {1, 1, 1}},  {8, 1, {0}, {8}},             {36, 2, {0, 0}, {6, 6}},
        {72, 2, {0, 0}, {9, 8}},       {16, 3, {0, 0, 0}, {4, 2, 2}}, {1000000, 3, {0, 0, 0}, {100, 100, 100}},
        {2147483647, 2, {0, 0}, {2147483647, 1}}, {30, 4, {0, 0, 0, 0}, {5, 3, 2, 1}},
    };
    for (unsigned c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int d[4];
        memcpy(d, cases[c].in, sizeof d);
        MPICHK(MPI_Dims_create(cases[c].n, cases[c].nd, d));
        for (int i = 0; i < cases[c].nd; i++)
            CHECK(d[i] == cases[c].out[i], "Dims_create(%d, %d) case %u: dims[%d] = %d, expected %d", cases[c].n,
                  cases[c].nd, c, i, d[i], cases[c].out[i]);
    }
    int d[2] = {5, 0};
    EXPECT_CLASS(MPI_Dims_create(12, 2, d), MPI_ERR_DIMS);
    d[0] = -1;
    EXPECT_CLASS(MPI_Dims_create(12, 2, d), MPI_ERR_DIMS);
}

static void test_cart(void)
{
    /* 1-d periodic ring over everybody */
    MPI_Comm ring;
    int n = tu_size, periodic = 1, r;
    MPICHK(MPI_Cart_create(MPI_COMM_WORLD, 1, &n, &periodic, 0, &ring));
    MPICHK(MPI_Comm_rank(ring, &r));
    CHECK(r == tu_rank, "no reordering: rank %d", r);
    int st;
    MPICHK(MPI_Topo_test(ring, &st));
    CHECK(st == MPI_CART, "Topo_test %d", st);
    MPICHK(MPI_Topo_test(MPI_COMM_WORLD, &st));
    CHECK(st == MPI_UNDEFINED, "Topo_test(world) %d", st);
    int src, dst;
    MPICHK(MPI_Cart_shift(ring, 0, 1, &src, &dst));
    CHECK(src == (r + n - 1) % n && dst == (r + 1) % n, "ring shift: %d %d", src, dst);
    MPICHK(MPI_Cart_shift(ring, 0, -2, &src, &dst));
    CHECK(src == (r + 2) % n && dst == ((r - 2) % n + n) % n, "ring shift -2: %d %d", src, dst);

    /* neighbour allgather on the ring: [left, right] */
    int nb[2] = {-7, -7};
    MPICHK(MPI_Neighbor_allgather(&tu_rank, 1, MPI_INT, nb, 1, MPI_INT, ring));
    CHECK(nb[0] == (r + n - 1) % n && nb[1] == (r + 1) % n, "neighbor_allgather on ring: %d %d", nb[0], nb[1]);
    /* alltoall: send to left "L<me>", to right "R<me>" encoded as ints */
    int sb[2] = {1000 + r, 2000 + r}, rb[2] = {-1, -1};
    MPICHK(MPI_Neighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, ring));
    /* from my left neighbour I get what it sent right, and vice versa */
    CHECK(rb[0] == 2000 + (r + n - 1) % n && rb[1] == 1000 + (r + 1) % n,
          "neighbor_alltoall on ring of %d: got %d %d", n, rb[0], rb[1]);
    /* alltoallv with different counts per direction */
    int sv[3] = {10 + r, 20 + r, 21 + r}, scnt[2] = {1, 2}, sdis[2] = {0, 1};
    int rv[3] = {-1, -1, -1}, rcnt[2] = {2, 1}, rdis[2] = {0, 2};
    MPICHK(MPI_Neighbor_alltoallv(sv, scnt, sdis, MPI_INT, rv, rcnt, rdis, MPI_INT, ring));
    int L = (r + n - 1) % n, R = (r + 1) % n;
    CHECK(rv[0] == 20 + L && rv[1] == 21 + L && rv[2] == 10 + R, "alltoallv: %d %d %d", rv[0], rv[1], rv[2]);
    /* alltoallw: byte displacements */
    MPI_Aint swd[2] = {0, sizeof(int)}, rwd[2] = {sizeof(int), 0};
    MPI_Datatype ty[2] = {MPI_INT, MPI_INT};
    int one[2] = {1, 1};
    rb[0] = rb[1] = -1;
    MPICHK(MPI_Neighbor_alltoallw(sb, one, swd, ty, rb, one, rwd, ty, ring));
    CHECK(rb[1] == 2000 + L && rb[0] == 1000 + R, "alltoallw: %d %d", rb[0], rb[1]);
    /* allgatherv */
    int cnts[2] = {1, 1}, displs[2] = {1, 0};
    MPICHK(MPI_Neighbor_allgatherv(&tu_rank, 1, MPI_INT, nb, cnts, displs, MPI_INT, ring));
    CHECK(nb[1] == L && nb[0] == R, "allgatherv: %d %d", nb[0], nb[1]);

    /* nonblocking: two at once, with point-to-point traffic in between that
     * the neighbours only answer after they started theirs */
    {
        MPI_Request rq[4];
        int ag[2] = {-1, -1}, at[2] = {-1, -1}, ping = -1;
        MPICHK(MPI_Ineighbor_alltoall(sb, 1, MPI_INT, at, 1, MPI_INT, ring, &rq[0]));
        MPICHK(MPI_Ineighbor_allgather(&tu_rank, 1, MPI_INT, ag, 1, MPI_INT, ring, &rq[1]));
        MPICHK(MPI_Irecv(&ping, 1, MPI_INT, L, 9, ring, &rq[2]));
        MPICHK(MPI_Isend(&tu_rank, 1, MPI_INT, R, 9, ring, &rq[3]));
        MPICHK(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
        CHECK(at[0] == 2000 + L && at[1] == 1000 + R, "Ineighbor_alltoall: %d %d", at[0], at[1]);
        CHECK(ag[0] == L && ag[1] == R && ping == L, "Ineighbor_allgather: %d %d, ping %d", ag[0], ag[1], ping);
        int rv2[3] = {-1, -1, -1};
        MPICHK(MPI_Ineighbor_alltoallv(sv, scnt, sdis, MPI_INT, rv2, rcnt, rdis, MPI_INT, ring, &rq[0]));
        MPICHK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
        CHECK(rv2[0] == 20 + L && rv2[1] == 21 + L && rv2[2] == 10 + R, "Ineighbor_alltoallv");
        int one2[2] = {1, 1};
        MPICHK(MPI_Ineighbor_allgatherv(&tu_rank, 1, MPI_INT, ag, one2, displs, MPI_INT, ring, &rq[0]));
        MPICHK(MPI_Ineighbor_alltoallw(sb, one, swd, ty, rb, one, rwd, ty, ring, &rq[1]));
        MPICHK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        CHECK(ag[1] == L && ag[0] == R && rb[1] == 2000 + L && rb[0] == 1000 + R, "Ineighbor_allgatherv/w");
    }
    MPICHK(MPI_Comm_free(&ring));

    /* 2-d grid, periodic in x only: dims from Dims_create */
    int dims[2] = {0, 0}, per[2] = {1, 0};
    MPICHK(MPI_Dims_create(tu_size, 2, dims));
    MPI_Comm grid;
    MPICHK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, per, 1, &grid));
    int nd, gd[2], gp[2], co[2];
    MPICHK(MPI_Cartdim_get(grid, &nd));
    CHECK(nd == 2, "Cartdim_get %d", nd);
    MPICHK(MPI_Cart_get(grid, 2, gd, gp, co));
    CHECK(gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == 1 && gp[1] == 0, "Cart_get dims/periods");
    CHECK(co[0] == tu_rank / dims[1] && co[1] == tu_rank % dims[1], "Cart_get coords %d %d", co[0], co[1]);
    int cc[2];
    MPICHK(MPI_Cart_coords(grid, tu_size - 1, 2, cc));
    CHECK(cc[0] == dims[0] - 1 && cc[1] == dims[1] - 1, "coords of the last rank");
    int rr, wrap[2] = {co[0] + dims[0], co[1]};
    MPICHK(MPI_Cart_rank(grid, wrap, &rr));
    CHECK(rr == tu_rank, "Cart_rank with periodic wrap: %d", rr);
    int off[2] = {co[0], dims[1]};
    EXPECT_CLASS(MPI_Cart_rank(grid, off, &rr), MPI_ERR_ARG);
    MPICHK(MPI_Cart_shift(grid, 1, 1, &src, &dst));
    CHECK(src == (co[1] == 0 ? MPI_PROC_NULL : tu_rank - 1), "open shift source %d", src);
    CHECK(dst == (co[1] == dims[1] - 1 ? MPI_PROC_NULL : tu_rank + 1), "open shift dest %d", dst);
    MPICHK(MPI_Cart_shift(grid, 0, 1, &src, &dst));
    CHECK(src == ((co[0] + dims[0] - 1) % dims[0]) * dims[1] + co[1], "periodic shift source %d", src);
    EXPECT_CLASS(MPI_Cart_shift(grid, 2, 1, &src, &dst), MPI_ERR_DIMS);

    /* neighbour allgather on the grid: [x-1, x+1, y-1, y+1], untouched at open borders */
    int g4[4] = {-9, -9, -9, -9};
    MPICHK(MPI_Neighbor_allgather(&tu_rank, 1, MPI_INT, g4, 1, MPI_INT, grid));
    int want[4];
    MPICHK(MPI_Cart_shift(grid, 0, 1, &want[0], &want[1]));
    MPICHK(MPI_Cart_shift(grid, 1, 1, &want[2], &want[3]));
    for (int i = 0; i < 4; i++)
        CHECK(g4[i] == (want[i] == MPI_PROC_NULL ? -9 : want[i]), "grid allgather[%d] = %d, expected %d", i,
              g4[i], want[i]);

    /* Cart_sub: rows (keep y) and columns (keep x) */
    MPI_Comm row, col;
    int keep_y[2] = {0, 1}, keep_x[2] = {1, 0};
    MPICHK(MPI_Cart_sub(grid, keep_y, &row));
    MPICHK(MPI_Cart_sub(grid, keep_x, &col));
    int rs, rrk, cs, crk;
    MPICHK(MPI_Comm_size(row, &rs));
    MPICHK(MPI_Comm_rank(row, &rrk));
    MPICHK(MPI_Comm_size(col, &cs));
    MPICHK(MPI_Comm_rank(col, &crk));
    CHECK(rs == dims[1] && rrk == co[1] && cs == dims[0] && crk == co[0], "Cart_sub: row %d/%d col %d/%d", rrk,
          rs, crk, cs);
    int rd, rp;
    MPICHK(MPI_Cartdim_get(row, &nd));
    MPICHK(MPI_Cart_get(row, 1, &rd, &rp, cc));
    CHECK(nd == 1 && rd == dims[1] && rp == 0, "row topology %d %d %d", nd, rd, rp);
    MPICHK(MPI_Cart_get(col, 1, &rd, &rp, cc));
    CHECK(rd == dims[0] && rp == 1, "col topology %d %d", rd, rp);
    /* a message along the row */
    int got = -1;
    MPI_Request rq;
    MPICHK(MPI_Irecv(&got, 1, MPI_INT, (rrk + rs - 1) % rs, 0, row, &rq));
    MPICHK(MPI_Send(&tu_rank, 1, MPI_INT, (rrk + 1) % rs, 0, row));
    MPICHK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(got == co[0] * dims[1] + (co[1] + dims[1] - 1) % dims[1], "row message from %d", got);
    MPICHK(MPI_Comm_free(&row));
    MPICHK(MPI_Comm_free(&col));

    /* a topology survives dup */
    MPI_Comm gd2;
    MPICHK(MPI_Comm_dup(grid, &gd2));
    MPICHK(MPI_Topo_test(gd2, &st));
    CHECK(st == MPI_CART, "dup lost the topology");
    MPICHK(MPI_Comm_free(&gd2));
    MPICHK(MPI_Comm_free(&grid));

    /* a grid smaller than the world: the rest get MPI_COMM_NULL */
    int small = tu_size > 1 ? tu_size - 1 : 1, zero = 0;
    MPI_Comm sc;
    MPICHK(MPI_Cart_create(MPI_COMM_WORLD, 1, &small, &zero, 0, &sc));
    CHECK((sc == MPI_COMM_NULL) == (tu_rank >= small), "smaller grid membership");
    if (sc != MPI_COMM_NULL)
        MPICHK(MPI_Comm_free(&sc));
    int newrank;
    MPICHK(MPI_Cart_map(MPI_COMM_WORLD, 1, &small, &zero, &newrank));
    CHECK(newrank == (tu_rank < small ? tu_rank : MPI_UNDEFINED), "Cart_map %d", newrank);
    int big = tu_size + 1;
    EXPECT_CLASS(MPI_Cart_create(MPI_COMM_WORLD, 1, &big, &zero, 0, &sc), MPI_ERR_TOPOLOGY);
    EXPECT_CLASS(MPI_Cart_create(MPI_COMM_WORLD, -1, &big, &zero, 0, &sc), MPI_ERR_DIMS);
    EXPECT_CLASS(MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &src, &dst), MPI_ERR_TOPOLOGY);
    EXPECT_CLASS(MPI_Neighbor_allgather(&tu_rank, 1, MPI_INT, nb, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TOPOLOGY);
}

static void test_graph(void)
{
    /* a ring as an undirected graph: node i has neighbours i-1, i+1 */
    int n = tu_size, index[64], edges[128], e = 0;
    for (int i = 0; i < n; i++) {
        if (n > 1) {
            edges[e++] = (i + n - 1) % n;
            edges[e++] = (i + 1) % n;
        }
        index[i] = e;
    }
    MPI_Comm g;
    MPICHK(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &g));
    int st, nn, ne, cnt, nb[2];
    MPICHK(MPI_Topo_test(g, &st));
    CHECK(st == MPI_GRAPH, "Topo_test %d", st);
    MPICHK(MPI_Graphdims_get(g, &nn, &ne));
    CHECK(nn == n && ne == e, "Graphdims_get %d %d", nn, ne);
    MPICHK(MPI_Graph_neighbors_count(g, tu_rank, &cnt));
    CHECK(cnt == (n > 1 ? 2 : 0), "Graph_neighbors_count %d", cnt);
    if (cnt) {
        MPICHK(MPI_Graph_neighbors(g, tu_rank, 2, nb));
        CHECK(nb[0] == (tu_rank + n - 1) % n && nb[1] == (tu_rank + 1) % n, "Graph_neighbors %d %d", nb[0],
              nb[1]);
        int got[2] = {-1, -1};
        MPICHK(MPI_Neighbor_allgather(&tu_rank, 1, MPI_INT, got, 1, MPI_INT, g));
        CHECK(got[0] == nb[0] && got[1] == nb[1], "graph allgather %d %d", got[0], got[1]);
    }
    int gi[64], ge[128];
    MPICHK(MPI_Graph_get(g, n, e, gi, ge));
    CHECK(memcmp(gi, index, (size_t)n * sizeof(int)) == 0 && memcmp(ge, edges, (size_t)e * sizeof(int)) == 0,
          "Graph_get");
    EXPECT_CLASS(MPI_Graph_neighbors_count(g, n, &cnt), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Cartdim_get(g, &cnt), MPI_ERR_TOPOLOGY);
    MPICHK(MPI_Comm_free(&g));
    int bad[1] = {5};
    index[0] = 1;
    EXPECT_CLASS(MPI_Graph_create(MPI_COMM_WORLD, 1, index, bad, 0, &g), MPI_ERR_RANK);
}

static void test_dist_graph(void)
{
    /* directed: i -> i+1 (weight i), i -> i+2 (weight 100+i) */
    int n = tu_size, r = tu_rank;
    int dst[2] = {(r + 1) % n, (r + 2) % n}, dw[2] = {r, 100 + r};
    int src[2] = {(r + n - 1) % n, (r + n - 2) % n}, sw[2] = {(r + n - 1) % n, 100 + (r + n - 2) % n};
    MPI_Comm a;
    MPICHK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, sw, 2, dst, dw, MPI_INFO_NULL, 0, &a));
    int st, ind, outd, w;
    MPICHK(MPI_Topo_test(a, &st));
    CHECK(st == MPI_DIST_GRAPH, "Topo_test %d", st);
    MPICHK(MPI_Dist_graph_neighbors_count(a, &ind, &outd, &w));
    CHECK(ind == 2 && outd == 2 && w, "adjacent counts %d %d %d", ind, outd, w);
    int s2[2], sw2[2], d2[2], dw2[2];
    MPICHK(MPI_Dist_graph_neighbors(a, 2, s2, sw2, 2, d2, dw2));
    CHECK(s2[0] == src[0] && s2[1] == src[1] && sw2[1] == sw[1] && d2[1] == dst[1] && dw2[0] == dw[0],
          "adjacent neighbours");
    int got[2] = {-1, -1};
    MPICHK(MPI_Neighbor_allgather(&r, 1, MPI_INT, got, 1, MPI_INT, a));
    CHECK(got[0] == src[0] && got[1] == src[1], "dist graph allgather: %d %d", got[0], got[1]);
    int sb[2] = {10 * r + 1, 10 * r + 2};
    MPICHK(MPI_Neighbor_alltoall(sb, 1, MPI_INT, got, 1, MPI_INT, a));
    /* from i-1 its first (to i), from i-2 its second (to i) */
    if (n > 2)
        CHECK(got[0] == 10 * src[0] + 1 && got[1] == 10 * src[1] + 2, "dist graph alltoall: %d %d", got[0],
              got[1]);
    MPICHK(MPI_Comm_free(&a));

    /* the same graph given by rank 0 alone, unweighted */
    int nsrc = r == 0 ? n : 0, *srcs = malloc(sizeof(int) * (size_t)(n + 1));
    int *deg = malloc(sizeof(int) * (size_t)(n + 1)), *dsts = malloc(sizeof(int) * 2 * (size_t)(n + 1));
    for (int i = 0; i < n; i++) {
        srcs[i] = i;
        deg[i] = 2;
        dsts[2 * i] = (i + 1) % n;
        dsts[2 * i + 1] = (i + 2) % n;
    }
    MPI_Comm b;
    MPICHK(MPI_Dist_graph_create(MPI_COMM_WORLD, nsrc, srcs, deg, dsts, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &b));
    MPICHK(MPI_Dist_graph_neighbors_count(b, &ind, &outd, &w));
    CHECK(ind == 2 && outd == 2 && !w, "dist_graph_create counts %d %d %d", ind, outd, w);
    MPICHK(MPI_Dist_graph_neighbors(b, 2, s2, MPI_UNWEIGHTED, 2, d2, MPI_UNWEIGHTED));
    /* in and out edges come in the order rank 0 listed them */
    /* listed by source index: i-2 before i-1, except on rank 1 (sources 0, n-1) */
    int want_s[2] = {src[1], src[0]};
    if (r == 1) {
        want_s[0] = src[0];
        want_s[1] = src[1];
    }
    if (n > 1)
        CHECK(s2[0] == want_s[0] && s2[1] == want_s[1] && d2[0] == dst[0] && d2[1] == dst[1],
              "dist_graph_create neighbours: in %d %d out %d %d", s2[0], s2[1], d2[0], d2[1]);
    MPICHK(MPI_Neighbor_allgather(&r, 1, MPI_INT, got, 1, MPI_INT, b));
    CHECK(got[0] == s2[0] && got[1] == s2[1], "dist_graph_create allgather %d %d", got[0], got[1]);
    MPICHK(MPI_Comm_free(&b));
    /* back to back, each rank naming a different ring direction: no call may
     * take another's edges */
    for (int it = 0; it < 20; it++) {
        int step = 1 + it % 3, d1 = (r + step) % n;
        MPICHK(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &r, (int[]){1}, &d1, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &b));
        int s1, o1;
        MPICHK(MPI_Dist_graph_neighbors_count(b, &ind, &outd, &w));
        CHECK(ind == 1 && outd == 1, "iteration %d: degrees %d %d", it, ind, outd);
        MPICHK(MPI_Dist_graph_neighbors(b, 1, &s1, MPI_UNWEIGHTED, 1, &o1, MPI_UNWEIGHTED));
        CHECK(s1 == ((r - step) % n + n) % n && o1 == d1, "iteration %d: in %d out %d", it, s1, o1);
        MPICHK(MPI_Comm_free(&b));
    }
    /* everybody names its own out edges, weighted */
    MPICHK(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &r, (int[]){2}, dst, dw, MPI_INFO_NULL, 0, &b));
    MPICHK(MPI_Dist_graph_neighbors_count(b, &ind, &outd, &w));
    CHECK(ind == 2 && outd == 2 && w, "own edges: counts %d %d %d", ind, outd, w);
    MPICHK(MPI_Dist_graph_neighbors(b, 2, s2, sw2, 2, d2, dw2));
    for (int i = 0; i < 2; i++) {
        int wexp = s2[i] == src[0] ? sw[0] : sw[1];
        if (n > 2)
            CHECK(sw2[i] == wexp, "own edges: weight of in edge from %d is %d, expected %d", s2[i], sw2[i], wexp);
    }
    MPICHK(MPI_Comm_free(&b));
    free(srcs);
    free(deg);
    free(dsts);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "topo");
    test_dims();
    test_cart();
    tu_barrier();
    test_graph();
    tu_barrier();
    test_dist_graph();
    tu_finish();
    return 0;
}
