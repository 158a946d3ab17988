/*
 * Reductions on MPI_CHAR with the arithmetic, logical and bitwise ops, as
 * Open MPI and MPICH allow (a widely used benchmark suite reduces MPI_CHAR
 * with MPI_SUM): the result is that of the C type char, the same as on
 * MPI_SIGNED_CHAR (or MPI_UNSIGNED_CHAR where char is unsigned).
 */
#include <limits.h>

#include "testutil.h"

#define N 37

/* Element i of rank r's contribution: small, so sums stay in range. */
static char value(int r, int i)
{
    return (char)((r * 7 + i * 3) % 11 - (CHAR_MIN < 0 ? 5 : 0));
}

static char reference(MPI_Op op, int i)
{
    int acc = value(0, i);
    for (int r = 1; r < tu_size; r++) {
        int v = value(r, i);
        if (op == MPI_SUM)
            acc = (char)(acc + v);
        else if (op == MPI_PROD)
            acc = (char)(acc * v);
        else if (op == MPI_MIN)
            acc = v < acc ? v : acc;
        else if (op == MPI_MAX)
            acc = v > acc ? v : acc;
        else if (op == MPI_LAND)
            acc = acc && v;
        else if (op == MPI_BOR)
            acc = acc | v;
    }
    return (char)acc;
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "reduce_char");
    const MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX, MPI_LAND, MPI_BOR};
    const char *names[] = {"MPI_SUM", "MPI_PROD", "MPI_MIN", "MPI_MAX", "MPI_LAND", "MPI_BOR"};
    char in[N], out[N], signed_out[N];
    for (int i = 0; i < N; i++)
        in[i] = value(tu_rank, i);
    for (int o = 0; o < 6; o++) {
        memset(out, 0x55, sizeof out);
        MPICHK(MPI_Allreduce(in, out, N, MPI_CHAR, ops[o], MPI_COMM_WORLD));
        for (int i = 0; i < N; i++)
            CHECK(out[i] == reference(ops[o], i), "MPI_Allreduce %s on MPI_CHAR: [%d] = %d, expected %d",
                  names[o], i, out[i], reference(ops[o], i));
        MPICHK(MPI_Reduce(in, out, N, MPI_CHAR, ops[o], 0, MPI_COMM_WORLD));
        if (CHAR_MIN < 0) {
            MPICHK(MPI_Allreduce(in, signed_out, N, MPI_SIGNED_CHAR, ops[o], MPI_COMM_WORLD));
            if (tu_rank == 0)
                CHECK(memcmp(out, signed_out, N) == 0, "%s: MPI_CHAR and MPI_SIGNED_CHAR differ", names[o]);
        }
        memcpy(out, in, N);
        MPICHK(MPI_Reduce_local(in, out, N, MPI_CHAR, ops[o]));
    }
    /* wide and Fortran characters still take no op */
    EXPECT_CLASS(MPI_Reduce_local(in, out, 1, MPI_CHARACTER, MPI_SUM), MPI_ERR_OP);
    EXPECT_CLASS(MPI_Allreduce(in, out, 1, MPI_CHAR, MPI_MAXLOC, MPI_COMM_WORLD), MPI_ERR_OP);
    tu_finish();
    return 0;
}
