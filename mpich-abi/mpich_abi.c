/* What programs compiled against MPICH's mpi.h import from libmpich.so.12
 * beyond the MPI names libbmpi exports: the symbols MPICH's header macros
 * expand to. This file is linked into the compat libraries libmpich.so.12
 * and libmpi.so.12 only (mpich-abi/README.md), so that programs built
 * against bmpi's own mpi.h never see these names. */
#include <mpi.h>

int MPIR_Dup_fn(MPI_Comm oldcomm, int keyval, void *extra_state, void *attribute_val_in,
                void *attribute_val_out, int *flag);

/* MPICH's MPI_DUP_FN, MPI_COMM_DUP_FN, MPI_TYPE_DUP_FN and MPI_WIN_DUP_FN
 * are casts of this one function: copy the attribute's value, set flag. */
int MPIR_Dup_fn(MPI_Comm oldcomm, int keyval, void *extra_state, void *attribute_val_in,
                void *attribute_val_out, int *flag)
{
    return PMPI_DUP_FN(oldcomm, keyval, extra_state, attribute_val_in, attribute_val_out, flag);
}
