/*
 * Between the datatype files only (datatype.c, dt_node.c, dt_pack.c,
 * dt_array.c, dt_external.c, dt_repr.c, type_api.c); everyone else uses datatype.h.
 */
#ifndef BMPI_RUNTIME_DATATYPE_IMPL_H
#define BMPI_RUNTIME_DATATYPE_IMPL_H

#include "runtime/datatype.h"

/* MPI_ERR_VALUE_TOO_LARGE is MPI-4; older headers lack it. */
#ifdef MPI_ERR_VALUE_TOO_LARGE
#define BMPI_ERR_TOO_LARGE MPI_ERR_VALUE_TOO_LARGE
#else
#define BMPI_ERR_TOO_LARGE MPI_ERR_ARG
#endif

/*
 * A type's type map is a sequence of parts; part i is
 *   for c in 0..count-1, for b in 0..bl-1:  type at disp + c*stride + b*extent(type)
 * Parts are decoded from the constructor's arguments on demand, so a
 * hindexed type with a million blocks keeps only the user's arrays.
 */
struct bmpi_dt_part {
    MPI_Aint disp;
    MPI_Count count;
    MPI_Aint stride;
    MPI_Count bl;
    struct bmpi_datatype *type;
};

size_t bmpi_dt_nparts(const struct bmpi_datatype *dt);
void bmpi_dt_part(const struct bmpi_datatype *dt, size_t i, struct bmpi_dt_part *p);

/*
 * Create an anonymous type (no handle yet, one reference owned by the
 * caller) from a constructor's arguments, as MPI_Type_get_contents will
 * return them. Each of types[] gains a reference. inner (subarray, darray)
 * is the equivalent type the layout comes from; its reference passes to the
 * new type. Checks the arguments' arithmetic (overflow, nesting depth) and
 * records the reason on failure.
 */
int bmpi_dt_create(int combiner, int n_ints, const int *ints, int n_aints, const MPI_Aint *aints,
                   int n_types, struct bmpi_datatype *const *types, struct bmpi_datatype *inner,
                   struct bmpi_datatype **out);
/* The same from a large-count constructor's arguments (all in counts[],
 * the addresses from a_off on; see struct bmpi_datatype). */
int bmpi_dt_create_large(int combiner, int n_counts, const MPI_Count *counts, int a_off,
                         int n_types, struct bmpi_datatype *const *types,
                         struct bmpi_datatype **out);
/* Give an anonymous type a handle; the caller's reference becomes the
 * user's. On failure the type is released. */
int bmpi_dt_register(struct bmpi_datatype *dt, MPI_Datatype *h);
/* MPI_Type_free: drop the user's reference; the handle is invalid after. */
void bmpi_dt_user_free(struct bmpi_datatype *dt);
/* MPI_Type_get_contents hands out handles of the types a type was built
 * from; each is a new user reference (the user frees it). */
MPI_Datatype bmpi_dt_user_handle(struct bmpi_datatype *dt);

/* Compile the layout (dt_node.c); idempotent. */
int bmpi_dt_commit(struct bmpi_datatype *dt);
int bmpi_dt_compile(struct bmpi_datatype *dt);
void bmpi_dt_node_release(struct bmpi_dt_node *n);
/* The segment covering count elements, for the cursor's root. */
void bmpi_dt_root_seg(const struct bmpi_datatype *dt, size_t count, struct bmpi_dt_seg *root);

/* Subarray and darray (dt_array.c): build the equivalent type from
 * vectors, then the type with its own envelope. */
int bmpi_dt_subarray(int ndims, const int sizes[], const int subsizes[], const int starts[],
                     int order, struct bmpi_datatype *old, struct bmpi_datatype **out);
int bmpi_dt_darray(int size, int rank, int ndims, const int gsizes[], const int distribs[],
                   const int dargs[], const int psizes[], int order, struct bmpi_datatype *old,
                   struct bmpi_datatype **out);

/* The type MPI_Type_create_f90_* returns for (p, r): base's layout with its
 * own envelope, one per (combiner, p, r), never freed before finalize. */
int bmpi_dt_f90(int combiner, int p, int r, MPI_Datatype base, MPI_Datatype *out);

/* Predefined type of a given class and size (MPI_Type_match_size). */
MPI_Datatype bmpi_dt_match_size(int typeclass, int size);
/* Name as set or default; "" for derived types without one. */
const char *bmpi_dt_get_name(const struct bmpi_datatype *dt);
int bmpi_dt_set_name(struct bmpi_datatype *dt, const char *name);

/* What a predefined basic type is, for external32 and reductions. */
enum bmpi_dt_kind {
    BMPI_DT_K_NONE,    /* derived */
    BMPI_DT_K_INT,     /* signed integer */
    BMPI_DT_K_UINT,    /* unsigned integer, bool, wchar */
    BMPI_DT_K_FLOAT,   /* IEEE float, double; long double (x87) */
    BMPI_DT_K_COMPLEX, /* two floats */
    BMPI_DT_K_BYTE,    /* char, byte, packed: copied as is */
    BMPI_DT_K_MARKER,  /* MPI_LB, MPI_UB */
    BMPI_DT_K_PAIR,    /* value-index pair: a struct of two basic types */
};
enum bmpi_dt_kind bmpi_dt_kind(const struct bmpi_datatype *dt);

#endif
