// mpi.h from C++: handles, predefined constants, MPI_Status fields,
// callbacks written in C++ (a user op, an error handler, attribute copy
// and delete), MPI_BOTTOM and MPI_IN_PLACE. Built by test/buildsys/cxx.sh
// with g++ -std=c++11 ... c++20 -Wall -Wextra -pedantic -Werror and run at
// 2 ranks; any wrong result aborts the job.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

int errors_seen = 0;

void check(bool ok, const char *what)
{
    if (!ok) {
        std::fprintf(stderr, "cxx: %s\n", what);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

extern "C" void absmax(void *in, void *inout, int *len, MPI_Datatype *type)
{
    const int *a = static_cast<const int *>(in);
    int *b = static_cast<int *>(inout);
    check(*type == MPI_INT, "the op got another datatype");
    for (int i = 0; i < *len; i++)
        if (std::abs(a[i]) > std::abs(b[i]))
            b[i] = a[i];
}

extern "C" void count_errors(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    (void)code;
    errors_seen++;
}

extern "C" int copy_value(MPI_Comm, int, void *, void *in, void *out, int *flag)
{
    *static_cast<void **>(out) = in;
    *flag = 1;
    return MPI_SUCCESS;
}

extern "C" int forget_value(MPI_Comm, int, void *, void *)
{
    return MPI_SUCCESS;
}

} // namespace

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = -1, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    check(size == 2, "expected 2 ranks");
    const int peer = 1 - rank;

    // point to point, status fields read directly
    int token = 100 + rank, got = -1;
    MPI_Status st;
    MPI_Sendrecv(&token, 1, MPI_INT, peer, 7, &got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                 MPI_COMM_WORLD, &st);
    check(got == 100 + peer, "sendrecv value");
    check(st.MPI_SOURCE == peer && st.MPI_TAG == 7, "status source and tag");
    int count = -1;
    MPI_Get_count(&st, MPI_INT, &count);
    check(count == 1, "status count");

    // a user op written in C++, over MPI_IN_PLACE
    MPI_Op op;
    MPI_Op_create(absmax, 1, &op);
    std::vector<int> v = {rank ? -5 : 3, rank ? 1 : -2};
    MPI_Allreduce(MPI_IN_PLACE, v.data(), 2, MPI_INT, op, MPI_COMM_WORLD);
    check(v[0] == -5 && v[1] == -2, "user op through MPI_IN_PLACE");
    MPI_Op_free(&op);

    // MPI_BOTTOM with absolute addresses in a datatype
    MPI_Aint where;
    int pair[2] = {rank, rank * 10};
    MPI_Get_address(pair, &where);
    MPI_Datatype abs_pair;
    int blocklen = 2;
    MPI_Datatype member = MPI_INT;
    MPI_Type_create_struct(1, &blocklen, &where, &member, &abs_pair);
    MPI_Type_commit(&abs_pair);
    MPI_Bcast(MPI_BOTTOM, 1, abs_pair, 0, MPI_COMM_WORLD);
    check(pair[0] == 0 && pair[1] == 0, "bcast through MPI_BOTTOM");
    MPI_Type_free(&abs_pair);
    check(abs_pair == MPI_DATATYPE_NULL, "a freed type is MPI_DATATYPE_NULL");

    // an error handler written in C++
    MPI_Errhandler eh;
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_create_errhandler(count_errors, &eh);
    MPI_Comm_set_errhandler(dup, eh);
    int rc = MPI_Send(&token, 1, MPI_INT, size + 3, 0, dup);
    check(rc != MPI_SUCCESS && errors_seen == 1, "the C++ error handler was not called");
    MPI_Errhandler_free(&eh);

    // attribute callbacks written in C++, copied by MPI_Comm_dup
    int key = MPI_KEYVAL_INVALID, flag = 0;
    static int value = 42;
    MPI_Comm_create_keyval(copy_value, forget_value, &key, nullptr);
    MPI_Comm_set_attr(dup, key, &value);
    MPI_Comm dup2;
    MPI_Comm_dup(dup, &dup2);
    int *seen = nullptr;
    MPI_Comm_get_attr(dup2, key, &seen, &flag);
    check(flag && seen == &value, "attribute copied by the C++ copy callback");
    MPI_Comm_free(&dup2);
    MPI_Comm_free(&dup);
    MPI_Comm_free_keyval(&key);
    check(dup == MPI_COMM_NULL && key == MPI_KEYVAL_INVALID, "freed handles");

    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        std::printf("cxx ok\n");
    return MPI_Finalize();
}
