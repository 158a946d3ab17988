/* What programs compiled against MPICH's mpi.h import from libmpich.so.12
 * beyond the names libbmpi exports (docs/mpich-abi.md):
 *
 * - symbols that MPICH's header macros expand to (MPIR_Dup_fn);
 * - the MPI-1 functions that MPI 3.0 removed, which MPICH 4's mpi.h still
 *   declares, and MPI_LB/MPI_UB in MPI_Type_struct;
 * - MPICH's MPIX_Query_*_support GPU queries, which mpi4py and build
 *   systems probe.
 *
 * This file is linked into the compat libraries libmpich.so.12 and
 * libmpi.so.12 only (mpich-abi/README.md), so that programs built against
 * bmpi's own mpi.h never see these names. It is a layer above the library:
 * each function calls the MPI function that replaced it (as PMPI_, so a
 * profiling tool sees the call the program made), whose error reports
 * therefore name that function. */
#include <mpi.h>
#include <stddef.h>

#include "mpich-abi/mpich_abi.h"

/* MPICH's handles of the removed MPI-1 bound markers (its mpi.h). */
#define MPICH_LB ((MPI_Datatype)0x4c000010)
#define MPICH_UB ((MPI_Datatype)0x4c000011)

/* MPICH's mpi.h declares these (and those of mpich_abi.h); bmpi's does not. */
int MPIR_Dup_fn(MPI_Comm oldcomm, int keyval, void *extra_state, void *attribute_val_in,
                void *attribute_val_out, int *flag);
int PMPI_Address(void *location, MPI_Aint *address);
int PMPI_Errhandler_create(MPI_Comm_errhandler_function *function, MPI_Errhandler *errhandler);
int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler);
int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler);
int MPIX_Query_cuda_support(void);
int MPIX_Query_hip_support(void);
int MPIX_Query_ze_support(void);

/* MPICH's MPI_DUP_FN, MPI_COMM_DUP_FN, MPI_TYPE_DUP_FN and MPI_WIN_DUP_FN
 * are casts of this one function: copy the attribute's value, set flag. */
int MPIR_Dup_fn(MPI_Comm oldcomm, int keyval, void *extra_state, void *attribute_val_in,
                void *attribute_val_out, int *flag)
{
    return PMPI_DUP_FN(oldcomm, keyval, extra_state, attribute_val_in, attribute_val_out, flag);
}

/* ---- removed in MPI 3.0, still in MPICH ----------------------------------- */

#pragma weak MPI_Address = PMPI_Address
int PMPI_Address(void *location, MPI_Aint *address)
{
    return PMPI_Get_address(location, address);
}

#pragma weak MPI_Type_extent = PMPI_Type_extent
int PMPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent)
{
    MPI_Aint lb;
    return PMPI_Type_get_extent(datatype, &lb, extent);
}

#pragma weak MPI_Type_lb = PMPI_Type_lb
int PMPI_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement)
{
    MPI_Aint extent;
    return PMPI_Type_get_extent(datatype, displacement, &extent);
}

#pragma weak MPI_Type_ub = PMPI_Type_ub
int PMPI_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement)
{
    MPI_Aint lb = 0, extent = 0;
    int rc = PMPI_Type_get_extent(datatype, &lb, &extent);
    if (rc == MPI_SUCCESS)
        *displacement = lb + extent;
    return rc;
}

#pragma weak MPI_Type_hindexed = PMPI_Type_hindexed
int PMPI_Type_hindexed(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                       MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return PMPI_Type_create_hindexed(count, array_of_blocklengths, array_of_displacements, oldtype, newtype);
}

#pragma weak MPI_Type_hvector = PMPI_Type_hvector
int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                      MPI_Datatype *newtype)
{
    return PMPI_Type_create_hvector(count, blocklength, stride, oldtype, newtype);
}

/* The bounds MPI_LB and MPI_UB entries set, as MPICH: the lowest MPI_LB
 * displacement, the highest MPI_UB one; 0 when the type has none. */
static int struct_markers(int count, const MPI_Aint disps[], const MPI_Datatype types[], MPI_Aint *lb,
                          int *has_lb, MPI_Aint *ub, int *has_ub)
{
    int markers = 0;
    *has_lb = *has_ub = 0;
    for (int i = 0; i < count; i++) {
        if (types[i] == MPICH_LB && (!*has_lb || disps[i] < *lb)) {
            *lb = disps[i];
            *has_lb = 1;
        } else if (types[i] == MPICH_UB && (!*has_ub || disps[i] > *ub)) {
            *ub = disps[i];
            *has_ub = 1;
        }
        markers += types[i] == MPICH_LB || types[i] == MPICH_UB;
    }
    return markers;
}

/* The struct of the entries that are not markers, resized to the markers'
 * bounds (a missing one keeps the struct's own). The copies without the
 * markers come from MPI_Alloc_mem, which reports a failure itself. */
static int struct_with_markers(int count, const int lens[], const MPI_Aint disps[],
                               const MPI_Datatype types[], int markers, MPI_Aint lb, int has_lb,
                               MPI_Aint ub, int has_ub, MPI_Datatype *newtype)
{
    size_t kept = (size_t)(count - markers);
    MPI_Aint *keep_disps, own_lb, own_extent;
    int rc = PMPI_Alloc_mem((MPI_Aint)(kept * (sizeof(MPI_Aint) + sizeof(int) + sizeof(MPI_Datatype)) + 1),
                            MPI_INFO_NULL, &keep_disps);
    if (rc != MPI_SUCCESS)
        return rc;
    int *keep_lens = (int *)(keep_disps + kept);
    MPI_Datatype *keep_types = (MPI_Datatype *)(keep_lens + kept), inner;
    int n = 0;
    for (int i = 0; i < count; i++) {
        if (types[i] != MPICH_LB && types[i] != MPICH_UB) {
            keep_lens[n] = lens[i];
            keep_disps[n] = disps[i];
            keep_types[n++] = types[i];
        }
    }
    rc = PMPI_Type_create_struct(n, keep_lens, keep_disps, keep_types, &inner);
    PMPI_Free_mem(keep_disps);
    if (rc != MPI_SUCCESS)
        return rc;
    if ((rc = PMPI_Type_get_extent(inner, &own_lb, &own_extent)) == MPI_SUCCESS) {
        lb = has_lb ? lb : own_lb;
        ub = has_ub ? ub : own_lb + own_extent;
        rc = PMPI_Type_create_resized(inner, lb, ub - lb, newtype);
    }
    PMPI_Type_free(&inner);
    return rc;
}

#pragma weak MPI_Type_struct = PMPI_Type_struct
int PMPI_Type_struct(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                     MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    MPI_Aint lb = 0, ub = 0;
    int has_lb, has_ub, markers = 0;
    /* bad arguments are the replacement's to report */
    if (count > 0 && array_of_displacements && array_of_types && array_of_blocklengths && newtype)
        markers = struct_markers(count, array_of_displacements, array_of_types, &lb, &has_lb, &ub, &has_ub);
    if (markers == 0)
        return PMPI_Type_create_struct(count, array_of_blocklengths, array_of_displacements, array_of_types,
                                       newtype);
    return struct_with_markers(count, array_of_blocklengths, array_of_displacements, array_of_types, markers,
                               lb, has_lb, ub, has_ub, newtype);
}

#pragma weak MPI_Errhandler_create = PMPI_Errhandler_create
int PMPI_Errhandler_create(MPI_Comm_errhandler_function *function, MPI_Errhandler *errhandler)
{
    return PMPI_Comm_create_errhandler(function, errhandler);
}

#pragma weak MPI_Errhandler_set = PMPI_Errhandler_set
int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler)
{
    return PMPI_Comm_set_errhandler(comm, errhandler);
}

#pragma weak MPI_Errhandler_get = PMPI_Errhandler_get
int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    return PMPI_Comm_get_errhandler(comm, errhandler);
}

/* ---- MPICH's GPU queries: bmpi moves host memory only ---------------------- */

int MPIX_Query_cuda_support(void)
{
    return 0;
}

int MPIX_Query_hip_support(void)
{
    return 0;
}

int MPIX_Query_ze_support(void)
{
    return 0;
}
