/*
 * MPI_F_STATUS_IGNORE, MPI_F_STATUSES_IGNORE, MPI_F08_STATUS_IGNORE and
 * MPI_F08_STATUSES_IGNORE exist, are distinct, and the status conversions
 * refuse them with an MPI_ERR_ARG-class error, as MPICH does.
 */
#include <stdio.h>

#include <mpi.h>

static int failures;

static void expect_arg_error(int rc, const char *what)
{
    int cls = MPI_SUCCESS;
    MPI_Error_class(rc, &cls);
    if (cls != MPI_ERR_ARG) {
        printf("FAIL: %s gave error class %d, not MPI_ERR_ARG\n", what, cls);
        failures++;
    }
}

int main(int argc, char **argv)
{
    MPI_Status c = {0};
    MPI_Fint f[MPI_F_STATUS_SIZE] = {0};
    MPI_F08_status f08 = {0};

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    if (!MPI_F_STATUS_IGNORE || !MPI_F08_STATUS_IGNORE ||
        (void *)MPI_F_STATUS_IGNORE == (void *)MPI_F_STATUSES_IGNORE ||
        (void *)MPI_F08_STATUS_IGNORE == (void *)MPI_F08_STATUSES_IGNORE ||
        (void *)MPI_F_STATUS_IGNORE == (void *)MPI_STATUS_IGNORE) {
        printf("FAIL: the Fortran status sentinels are not distinct addresses\n");
        failures++;
    }
    expect_arg_error(MPI_Status_f2c(MPI_F_STATUS_IGNORE, &c),
                     "MPI_Status_f2c(MPI_F_STATUS_IGNORE)");
    expect_arg_error(MPI_Status_f2c(MPI_F_STATUSES_IGNORE, &c),
                     "MPI_Status_f2c(MPI_F_STATUSES_IGNORE)");
    expect_arg_error(MPI_Status_c2f(&c, MPI_F_STATUS_IGNORE),
                     "MPI_Status_c2f(.., MPI_F_STATUS_IGNORE)");
    expect_arg_error(MPI_Status_f082c(MPI_F08_STATUS_IGNORE, &c),
                     "MPI_Status_f082c(MPI_F08_STATUS_IGNORE)");
    expect_arg_error(MPI_Status_c2f08(&c, MPI_F08_STATUSES_IGNORE),
                     "MPI_Status_c2f08(.., MPI_F08_STATUSES_IGNORE)");
    expect_arg_error(MPI_Status_f2f08(MPI_F_STATUS_IGNORE, &f08),
                     "MPI_Status_f2f08(MPI_F_STATUS_IGNORE)");
    expect_arg_error(MPI_Status_f082f(&f08, MPI_F_STATUS_IGNORE),
                     "MPI_Status_f082f(.., MPI_F_STATUS_IGNORE)");
    /* and real statuses still convert */
    c.MPI_SOURCE = 3;
    if (MPI_Status_c2f(&c, f) != MPI_SUCCESS || f[MPI_F_SOURCE] != 3) {
        printf("FAIL: MPI_Status_c2f of a real status\n");
        failures++;
    }
    MPI_Finalize();
    if (!failures)
        printf("ok\n");
    return failures != 0;
}
