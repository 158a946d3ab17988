/*
 * MPI_Type_get_name: every predefined datatype of mpi.h (C, C++, Fortran,
 * the pair types) has its standard name; a type built from one, a dup of
 * a predefined type and a dup of a named derived type have the empty name
 * (MPI 4.1 7.8: names are not propagated), until MPI_Type_set_name.
 */
#include "testutil.h"

static const struct {
    MPI_Datatype type;
    const char *name;
} predefined[] = {
#define T(x) {x, #x}
    T(MPI_CHAR), T(MPI_SIGNED_CHAR), T(MPI_UNSIGNED_CHAR),
    T(MPI_BYTE), T(MPI_WCHAR), T(MPI_SHORT),
    T(MPI_UNSIGNED_SHORT), T(MPI_INT), T(MPI_UNSIGNED),
    T(MPI_LONG), T(MPI_UNSIGNED_LONG), T(MPI_FLOAT),
    T(MPI_DOUBLE), T(MPI_LONG_DOUBLE), T(MPI_LONG_LONG_INT),
    T(MPI_UNSIGNED_LONG_LONG), T(MPI_PACKED), T(MPI_INT8_T),
    T(MPI_INT16_T), T(MPI_INT32_T), T(MPI_INT64_T),
    T(MPI_UINT8_T), T(MPI_UINT16_T), T(MPI_UINT32_T),
    T(MPI_UINT64_T), T(MPI_C_BOOL), T(MPI_C_FLOAT_COMPLEX),
    T(MPI_C_DOUBLE_COMPLEX), T(MPI_C_LONG_DOUBLE_COMPLEX), T(MPI_AINT),
    T(MPI_OFFSET), T(MPI_COUNT), T(MPI_CXX_BOOL),
    T(MPI_CXX_FLOAT_COMPLEX), T(MPI_CXX_DOUBLE_COMPLEX), T(MPI_CXX_LONG_DOUBLE_COMPLEX),
    T(MPI_FLOAT_INT), T(MPI_DOUBLE_INT), T(MPI_LONG_INT),
    T(MPI_SHORT_INT), T(MPI_2INT), T(MPI_LONG_DOUBLE_INT),
    T(MPI_CHARACTER), T(MPI_INTEGER), T(MPI_REAL),
    T(MPI_LOGICAL), T(MPI_COMPLEX), T(MPI_DOUBLE_PRECISION),
    T(MPI_DOUBLE_COMPLEX), T(MPI_2INTEGER), T(MPI_2REAL),
    T(MPI_2DOUBLE_PRECISION), T(MPI_REAL4), T(MPI_REAL8),
    T(MPI_REAL16), T(MPI_COMPLEX8), T(MPI_COMPLEX16),
    T(MPI_COMPLEX32), T(MPI_INTEGER1), T(MPI_INTEGER2),
    T(MPI_INTEGER4), T(MPI_INTEGER8),
#undef T
};

static void expect_name(MPI_Datatype t, const char *want, const char *what)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    memset(name, '?', sizeof name);
    MPICHK(MPI_Type_get_name(t, name, &len));
    CHECK(strcmp(name, want) == 0 && len == (int)strlen(want), "%s: name \"%.*s\" (length %d), expected \"%s\"",
          what, MPI_MAX_OBJECT_NAME - 1, name, len, want);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "type_names");
    for (size_t i = 0; i < sizeof predefined / sizeof predefined[0]; i++)
        expect_name(predefined[i].type, predefined[i].name, predefined[i].name);
    expect_name(MPI_LONG_LONG, "MPI_LONG_LONG_INT", "MPI_LONG_LONG (the same handle)");

    MPI_Datatype dup, vec, named_dup, resized, pair_vec;
    MPICHK(MPI_Type_dup(MPI_INT, &dup));
    expect_name(dup, "", "a dup of MPI_INT");
    MPICHK(MPI_Type_vector(3, 2, 4, MPI_DOUBLE, &vec));
    expect_name(vec, "", "a vector of MPI_DOUBLE");
    MPICHK(MPI_Type_set_name(vec, "my vector"));
    expect_name(vec, "my vector", "a named vector");
    MPICHK(MPI_Type_dup(vec, &named_dup));
    expect_name(named_dup, "", "a dup of a named vector");
    MPICHK(MPI_Type_create_resized(MPI_2INT, 0, 16, &resized));
    expect_name(resized, "", "MPI_2INT resized");
    MPICHK(MPI_Type_contiguous(2, MPI_FLOAT_INT, &pair_vec));
    expect_name(pair_vec, "", "a contiguous of MPI_FLOAT_INT");
    expect_name(MPI_FLOAT_INT, "MPI_FLOAT_INT", "MPI_FLOAT_INT after use");
    MPI_Datatype all[] = {dup, vec, named_dup, resized, pair_vec};
    for (int i = 0; i < 5; i++)
        MPICHK(MPI_Type_free(&all[i]));
    tu_finish();
    return 0;
}
