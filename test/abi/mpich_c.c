/* A C program as MPICH users write them, compiled and linked with MPICH's
 * own mpicc (test/abi/mpich.sh), that runs on bmpi through the MPICH
 * sonames (docs/mpich-abi.md). It uses the parts of mpi.h whose values are
 * the ABI: handles and constants compiled into the program, the MPI_Status
 * layout, and the objects and functions MPICH's header macros name
 * (MPI_COMM_DUP_FN is MPIR_Dup_fn, MPI_UNWEIGHTED a library variable).
 *
 * Rank 0 prints the library's version line ("library: ..."), every rank
 * "ok: rank R of N" once everything held; a failed check prints what and
 * aborts. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int rank, size;

static void print_library(void)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len, major, minor;
    MPI_Get_library_version(version, &len);
    MPI_Get_version(&major, &minor);
    CHECK(len > 0 && (size_t)len == strlen(version), "library version length %d", len);
    if (rank == 0)
        printf("library: %.*s (MPI %d.%d)\n", (int)strcspn(version, "\n"), version, major, minor);
}

static void check_p2p(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[3] = {rank, rank * 10, rank * 100}, in[3] = {-1, -1, -1}, count;
    MPI_Status st;
    MPI_Request reqs[2];
    MPI_Status sts[2];

    MPI_Sendrecv(out, 3, MPI_INT, right, 7, in, 3, MPI_INT, left, 7, MPI_COMM_WORLD, &st);
    CHECK(in[0] == left && in[2] == left * 100, "sendrecv got %d %d", in[0], in[2]);
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 7, "status source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 3, "MPI_Get_count %d", count);

    /* the status array of a multiple completion: MPI_ERROR is written */
    sts[0].MPI_ERROR = sts[1].MPI_ERROR = -5;
    MPI_Irecv(in, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend(out, 2, MPI_INT, right, 100 + rank, MPI_COMM_WORLD, &reqs[1]);
    MPI_Waitall(2, reqs, sts);
    CHECK(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL, "requests not freed");
    CHECK(sts[0].MPI_SOURCE == left && sts[0].MPI_TAG == 100 + left && sts[0].MPI_ERROR == MPI_SUCCESS,
          "waitall status %d %d %d", sts[0].MPI_SOURCE, sts[0].MPI_TAG, sts[0].MPI_ERROR);

    /* every rank sends before it receives: nonblocking, so that no
     * implementation's buffering is relied on */
    MPI_Isend(out, 1, MPI_INT, right, 3, MPI_COMM_WORLD, &reqs[1]);
    MPI_Probe(left, 3, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 1 && st.MPI_SOURCE == left, "probe count %d source %d", count, st.MPI_SOURCE);
    MPI_Recv(in, 1, MPI_INT, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&reqs[1], MPI_STATUS_IGNORE);
    CHECK(in[0] == left, "recv got %d", in[0]);

    MPI_Recv(in, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG, "proc null status");
}

static void absmax(void *in, void *inout, int *len, MPI_Datatype *type)
{
    const int *a = in;
    int *b = inout;
    (void)type;
    for (int i = 0; i < *len; i++)
        if (abs(a[i]) > abs(b[i]))
            b[i] = a[i];
}

static void check_collectives(void)
{
    int v = rank + 1, sum = 0, root = size - 1, bcast = rank == root ? 42 : 0;
    int *all = malloc((size_t)size * sizeof(int)), *to = malloc((size_t)size * sizeof(int));
    double d = rank, dmax = -1;
    MPI_Op op;

    MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == size * (size + 1) / 2, "allreduce sum %d", sum);
    MPI_Reduce(&d, &dmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    CHECK(rank != 0 || dmax == size - 1, "reduce max %g", dmax);
    MPI_Bcast(&bcast, 1, MPI_INT, root, MPI_COMM_WORLD);
    CHECK(bcast == 42, "bcast %d", bcast);
    MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++)
        CHECK(all[i] == i, "allgather [%d] = %d", i, all[i]);
    for (int i = 0; i < size; i++)
        all[i] = rank * size + i;
    MPI_Alltoall(all, 1, MPI_INT, to, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++)
        CHECK(to[i] == i * size + rank, "alltoall [%d] = %d", i, to[i]);
    MPI_Scan(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == (rank + 1) * (rank + 2) / 2, "scan %d", sum);

    MPI_Op_create(absmax, 1, &op);
    v = rank % 2 ? -(rank + 1) : rank;
    MPI_Allreduce(&v, &sum, 1, MPI_INT, op, MPI_COMM_WORLD);
    CHECK(abs(sum) == (size % 2 ? size - 1 : size), "user op gave %d", sum);
    MPI_Op_free(&op);
    CHECK(op == MPI_OP_NULL, "op not freed");

    struct { double value; int rank; } mine = {(double)(rank % 3), rank}, best;
    MPI_Allreduce(&mine, &best, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
    CHECK(best.value == (size > 2 ? 2.0 : size - 1.0) && best.rank == (size > 2 ? 2 : size - 1),
          "maxloc %g at %d", best.value, best.rank);
    MPI_Barrier(MPI_COMM_WORLD);
    free(all);
    free(to);
}

static void check_datatypes(void)
{
    struct particle { int id; double pos[3]; char tag; } p[2], q[2];
    int lens[3] = {1, 3, 1};
    MPI_Aint disps[3], lb, extent;
    MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, particle, column;
    int matrix[4][4], col[4], tsize;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    for (int i = 0; i < 2; i++) {
        p[i].id = rank * 2 + i;
        p[i].pos[0] = p[i].pos[1] = p[i].pos[2] = rank + 0.5 * i;
        p[i].tag = (char)('a' + rank);
    }
    MPI_Get_address(&p[0].id, &disps[0]);
    MPI_Get_address(&p[0].pos, &disps[1]);
    MPI_Get_address(&p[0].tag, &disps[2]);
    for (int i = 2; i >= 0; i--)
        disps[i] -= disps[0];
    MPI_Type_create_struct(3, lens, disps, types, &particle);
    MPI_Type_create_resized(particle, 0, sizeof(struct particle), &particle);
    MPI_Type_commit(&particle);
    MPI_Type_get_extent(particle, &lb, &extent);
    CHECK(lb == 0 && extent == sizeof(struct particle), "struct extent %ld", (long)extent);
    MPI_Sendrecv(p, 2, particle, right, 0, q, 2, particle, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(q[1].id == left * 2 + 1 && q[1].pos[2] == left + 0.5 && q[0].tag == 'a' + left,
          "struct received %d %g %c", q[1].id, q[1].pos[2], q[0].tag);
    MPI_Type_free(&particle);

    MPI_Type_vector(4, 1, 4, MPI_INT, &column);
    MPI_Type_commit(&column);
    MPI_Type_size(column, &tsize);
    CHECK(tsize == 4 * (int)sizeof(int), "vector size %d", tsize);
    for (int i = 0; i < 16; i++)
        matrix[i / 4][i % 4] = rank * 100 + i;
    MPI_Sendrecv(&matrix[0][1], 1, column, right, 1, col, 4, MPI_INT, left, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    for (int i = 0; i < 4; i++)
        CHECK(col[i] == left * 100 + i * 4 + 1, "column [%d] = %d", i, col[i]);
    MPI_Type_free(&column);
    CHECK(column == MPI_DATATYPE_NULL, "type not freed");
}

static void check_communicators(void)
{
    MPI_Comm half, dup, graph;
    MPI_Group world_group, half_group;
    int hrank, hsize, result, key, flag, indegree, outdegree, weighted;
    int value = 1234, *got;

    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    MPI_Comm_rank(half, &hrank);
    MPI_Comm_size(half, &hsize);
    CHECK(hsize == (size + 1 - rank % 2) / 2, "split size %d", hsize);
    CHECK(hrank == hsize - 1 - rank / 2, "split rank %d (keys reversed)", hrank);
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    MPI_Comm_group(half, &half_group);
    MPI_Group_compare(world_group, half_group, &result);
    CHECK(result == (size == 1 ? MPI_IDENT : MPI_UNEQUAL), "group compare %d", result);
    MPI_Group_free(&half_group);
    MPI_Group_free(&world_group);
    MPI_Comm_free(&half);
    CHECK(half == MPI_COMM_NULL, "comm not freed");

    /* MPI_COMM_DUP_FN is MPICH's MPIR_Dup_fn: a library function */
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL);
    MPI_Comm_set_attr(MPI_COMM_WORLD, key, &value);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_compare(MPI_COMM_WORLD, dup, &result);
    CHECK(result == MPI_CONGRUENT, "dup compare %d", result);
    MPI_Comm_get_attr(dup, key, &got, &flag);
    CHECK(flag && got == &value, "attribute not copied by MPI_COMM_DUP_FN");
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &got, &flag);
    CHECK(flag && *got >= 32767, "MPI_TAG_UB");
    MPI_Comm_delete_attr(MPI_COMM_WORLD, key);
    MPI_Comm_free_keyval(&key);

    /* MPI_UNWEIGHTED is a library variable in MPICH */
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    MPI_Dist_graph_create_adjacent(dup, 1, &left, MPI_UNWEIGHTED, 1, &right, MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &graph);
    MPI_Dist_graph_neighbors_count(graph, &indegree, &outdegree, &weighted);
    CHECK(indegree == 1 && outdegree == 1 && !weighted, "graph %d %d %d", indegree, outdegree, weighted);
    MPI_Comm_free(&graph);
    MPI_Comm_free(&dup);
}

static int handler_calls, handler_code;

static void count_error(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    handler_calls++;
    handler_code = *code;
}

static void check_errors(void)
{
    MPI_Errhandler eh;
    int rc, cls, len, buf = 0;
    char msg[MPI_MAX_ERROR_STRING];

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    rc = MPI_Send(&buf, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "bad rank gave class %d", cls);
    MPI_Error_string(rc, msg, &len);
    CHECK(len > 0, "empty error string");
    rc = MPI_Send(&buf, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TYPE, "null type gave class %d", cls);

    MPI_Comm_create_errhandler(count_error, &eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
    rc = MPI_Recv(&buf, 1, MPI_INT, 0, -7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Error_class(handler_code, &cls);
    CHECK(rc != MPI_SUCCESS && handler_calls == 1 && cls == MPI_ERR_TAG, "handler calls %d class %d",
          handler_calls, cls);
    MPI_Errhandler_free(&eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void check_wtime(void)
{
    double t0 = MPI_Wtime(), t1;
    CHECK(MPI_Wtick() > 0 && MPI_Wtick() < 1, "MPI_Wtick %g", MPI_Wtick());
    MPI_Barrier(MPI_COMM_WORLD);
    t1 = MPI_Wtime();
    CHECK(t1 >= t0, "MPI_Wtime went back: %g then %g", t0, t1);
}

int main(int argc, char **argv)
{
    int provided, flag;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Initialized(&flag);
    CHECK(flag && provided >= MPI_THREAD_SINGLE, "initialized %d provided %d", flag, provided);
    print_library();
    check_p2p();
    check_collectives();
    check_datatypes();
    check_communicators();
    check_errors();
    check_wtime();
    printf("ok: rank %d of %d\n", rank, size);
    MPI_Finalize();
    MPI_Finalized(&flag);
    return flag ? 0 : 1;
}
