/* The Fortran side of mpich_abi.c: the MPI-1 datatype calls that MPI 3.0
 * removed and MPICH's libmpichfort still has, under MPICH's gfortran names
 * (fortran/fortran.h), for programs built with mpifort.mpich and mpif.h.
 * As in MPI-1's Fortran binding (and MPICH's), displacements and extents
 * are default INTEGERs. Linked into libmpichfort.so.12 and
 * libmpifort.so.12 only, beside mpich_abi.c, whose C functions these call.
 *
 * Not here: MPI_ADDRESS (a 64-bit address does not fit the INTEGER it
 * returns, and MPICH fails it so) and MPI_ERRHANDLER_CREATE/SET/GET
 * (docs/mpich-abi.md). */
#include <stddef.h>

#include "fortran/fortran.h"
#include "mpich-abi/mpich_abi.h"

void pmpi_type_extent_(MPI_Fint *datatype, MPI_Fint *extent, MPI_Fint *ierr);
void pmpi_type_lb_(MPI_Fint *datatype, MPI_Fint *displacement, MPI_Fint *ierr);
void pmpi_type_ub_(MPI_Fint *datatype, MPI_Fint *displacement, MPI_Fint *ierr);
void pmpi_type_hvector_(MPI_Fint *count, MPI_Fint *blocklength, MPI_Fint *stride, MPI_Fint *oldtype,
                        MPI_Fint *newtype, MPI_Fint *ierr);
void pmpi_type_hindexed_(MPI_Fint *count, MPI_Fint *blocklengths, MPI_Fint *displacements,
                         MPI_Fint *oldtype, MPI_Fint *newtype, MPI_Fint *ierr);
void pmpi_type_struct_(MPI_Fint *count, MPI_Fint *blocklengths, MPI_Fint *displacements, MPI_Fint *types,
                       MPI_Fint *newtype, MPI_Fint *ierr);

/* An MPI_Aint result into an INTEGER, as MPICH's binding does. */
static void aint_query(int (*query)(MPI_Datatype, MPI_Aint *), MPI_Fint *datatype, MPI_Fint *out,
                       MPI_Fint *ierr)
{
    MPI_Aint v = 0;
    *ierr = query(MPI_Type_f2c(*datatype), &v);
    if (*ierr == MPI_SUCCESS)
        *out = (MPI_Fint)v;
}

void pmpi_type_extent_(MPI_Fint *datatype, MPI_Fint *extent, MPI_Fint *ierr)
{
    aint_query(PMPI_Type_extent, datatype, extent, ierr);
}
BMPI_F77_NAMES(type_extent, TYPE_EXTENT)

void pmpi_type_lb_(MPI_Fint *datatype, MPI_Fint *displacement, MPI_Fint *ierr)
{
    aint_query(PMPI_Type_lb, datatype, displacement, ierr);
}
BMPI_F77_NAMES(type_lb, TYPE_LB)

void pmpi_type_ub_(MPI_Fint *datatype, MPI_Fint *displacement, MPI_Fint *ierr)
{
    aint_query(PMPI_Type_ub, datatype, displacement, ierr);
}
BMPI_F77_NAMES(type_ub, TYPE_UB)

void pmpi_type_hvector_(MPI_Fint *count, MPI_Fint *blocklength, MPI_Fint *stride, MPI_Fint *oldtype,
                        MPI_Fint *newtype, MPI_Fint *ierr)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    *ierr = PMPI_Type_hvector(*count, *blocklength, *stride, MPI_Type_f2c(*oldtype), &t);
    if (*ierr == MPI_SUCCESS)
        *newtype = MPI_Type_c2f(t);
}
BMPI_F77_NAMES(type_hvector, TYPE_HVECTOR)

/* INTEGER displacements as MPI_Aint, from MPI_Alloc_mem (which reports a
 * failure itself); NULL, with the error in *ierr, when it fails. A count
 * below 1 gives an empty array: the C call judges the count. */
static MPI_Aint *aint_displacements(MPI_Fint count, const MPI_Fint *displacements, MPI_Fint *ierr)
{
    MPI_Aint *d;
    size_t n = count > 0 ? (size_t)count : 0;
    *ierr = PMPI_Alloc_mem((MPI_Aint)((n + 1) * sizeof(*d)), MPI_INFO_NULL, &d);
    if (*ierr != MPI_SUCCESS)
        return NULL;
    for (size_t i = 0; i < n; i++)
        d[i] = displacements[i];
    return d;
}

/* After a constructor given aint_displacements' array d: rc into *ierr,
 * the new type into *newtype when there is one. */
static void constructed(MPI_Aint *d, int rc, const MPI_Datatype *t, MPI_Fint *newtype, MPI_Fint *ierr)
{
    PMPI_Free_mem(d);
    *ierr = rc;
    if (rc == MPI_SUCCESS)
        *newtype = MPI_Type_c2f(*t);
}

void pmpi_type_hindexed_(MPI_Fint *count, MPI_Fint *blocklengths, MPI_Fint *displacements,
                         MPI_Fint *oldtype, MPI_Fint *newtype, MPI_Fint *ierr)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    MPI_Aint *d = aint_displacements(*count, displacements, ierr);
    if (d != NULL)
        constructed(d, PMPI_Type_hindexed(*count, blocklengths, d, MPI_Type_f2c(*oldtype), &t), &t, newtype,
                    ierr);
}
BMPI_F77_NAMES(type_hindexed, TYPE_HINDEXED)

/* MPI_LB and MPI_UB entries as in C (mpich_abi.c). A Fortran handle is the
 * C handle, so the types array is passed as it is. */
void pmpi_type_struct_(MPI_Fint *count, MPI_Fint *blocklengths, MPI_Fint *displacements, MPI_Fint *types,
                       MPI_Fint *newtype, MPI_Fint *ierr)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    MPI_Aint *d = aint_displacements(*count, displacements, ierr);
    if (d != NULL)
        constructed(d, PMPI_Type_struct(*count, blocklengths, d, (MPI_Datatype *)types, &t), &t, newtype, ierr);
}
BMPI_F77_NAMES(type_struct, TYPE_STRUCT)
