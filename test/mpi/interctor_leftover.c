/*
 * MPI_Finalize with objects the program never freed: intercommunicators,
 * their dups and merges, communicators split from those, a cartesian
 * topology, groups, an info, a datatype, an op, a keyval with attributes
 * and an error handler. Finalize must free them all in a safe order: the test script
 * runs this under valgrind too, which fails on any read of freed memory.
 * Needs at least 2 ranks (even and odd ranks are the two groups).
 */
#include "coll_util.h"

static int deleted;

static int count_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm, (void)keyval, (void)val, (void)extra;
    deleted++;
    return MPI_SUCCESS;
}

static void on_error(MPI_Comm *comm, int *code, ...)
{
    (void)comm, (void)code;
}

static void sum_op(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

/* The intercommunicator between the even and the odd ranks. */
static MPI_Comm even_odd(void)
{
    MPI_Comm local, inter;
    MPICHK(MPI_Comm_split(MPI_COMM_WORLD, cu_rank % 2, cu_rank, &local));
    MPICHK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - cu_rank % 2, 7, &inter));
    return inter; /* local is left behind too */
}

int main(int argc, char **argv)
{
    cu_init(&argc, &argv, "interctor_leftover");
    if (cu_size < 2) {
        cu_finish();
        return 0;
    }
    MPI_Comm inter = even_odd(), dup, merged, half, cart, inter2 = even_odd();
    MPICHK(MPI_Comm_dup(inter, &dup));
    MPICHK(MPI_Intercomm_merge(dup, cu_rank % 2, &merged));
    MPICHK(MPI_Comm_split(merged, cu_rank < 2 ? 0 : 1, 0, &half));
    int dims[1] = {cu_size}, periods[1] = {1};
    MPICHK(MPI_Cart_create(merged, 1, dims, periods, 0, &cart));
    /* the first intercommunicator goes first: its dup outlives it */
    MPICHK(MPI_Comm_free(&inter));

    int key;
    MPICHK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &key, NULL));
    MPICHK(MPI_Comm_set_attr(dup, key, &deleted));
    MPICHK(MPI_Comm_set_attr(cart, key, &deleted));
    MPI_Group g, rg;
    MPICHK(MPI_Comm_group(inter2, &g));
    MPICHK(MPI_Comm_remote_group(inter2, &rg));
    MPI_Info info;
    MPICHK(MPI_Info_create(&info));
    MPICHK(MPI_Info_set(info, "interctor", "left"));
    MPI_Datatype pair;
    MPICHK(MPI_Type_contiguous(2, MPI_INT, &pair));
    MPICHK(MPI_Type_commit(&pair));
    MPI_Op op;
    MPICHK(MPI_Op_create(sum_op, 1, &op));
    MPI_Errhandler eh;
    MPICHK(MPI_Comm_create_errhandler(on_error, &eh));

    /* traffic on what is left, so each object is in use before finalize */
    int v = cu_rank, r = -1;
    MPICHK(MPI_Allreduce(&v, &r, 1, MPI_INT, op, merged));
    CHECK(r == cu_size * (cu_size - 1) / 2, "allreduce on the merge gives %d", r);
    int me = cu_rank / 2, nremote;
    MPICHK(MPI_Comm_remote_size(dup, &nremote));
    if (me < nremote) { /* partners: local rank me of both groups */
        MPICHK(MPI_Sendrecv(&v, 1, MPI_INT, me, 3, &r, 1, MPI_INT, me, 3, dup, MPI_STATUS_IGNORE));
        CHECK(r == 2 * me + 1 - cu_rank % 2, "from the partner: %d", r);
    }
    MPICHK(MPI_Barrier(cart));
    MPICHK(MPI_Barrier(MPI_COMM_WORLD));
    if (cu_rank == 0)
        printf("PASS interctor_leftover at %d ranks (objects left for MPI_Finalize)\n", cu_size);
    MPICHK(MPI_Finalize());
    return 0;
}
