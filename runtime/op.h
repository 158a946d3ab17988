/*
 * Reduction operations: the predefined MPI_Op objects, user-defined ops
 * (MPI_Op_create), and the kernels that apply an op to typed buffers.
 *
 * Collectives call bmpi_op_apply(); it works on any committed datatype
 * whose data is made of one predefined basic type (bmpi_dt_basic), and on
 * any datatype at all for user ops. Argument order follows the standard:
 * inout = in op inout, where in holds the lower ranks' contribution.
 */
#ifndef BMPI_RUNTIME_OP_H
#define BMPI_RUNTIME_OP_H

#include <stdbool.h>
#include <stddef.h>
#include <mpi.h>

#include "runtime/datatype.h"
#include "runtime/lang.h"

struct bmpi_op {
    MPI_Op handle;
    int refs;          /* user's handle + pending operations */
    bool commute;
    bool predefined;
    int index;         /* predefined: low bits of the handle (MPI_MAX = 1 ...) */
    enum bmpi_lang lang; /* user_fn's ABI: MPI_User_function or bmpi_f_user_function */
    void (*user_fn)(void);
    MPI_User_function_c *user_fn_c; /* MPI_Op_create_c: instead of user_fn */
};

/* The op behind a valid handle, NULL for MPI_OP_NULL, freed or garbage. */
struct bmpi_op *bmpi_op_get(MPI_Op h);
/* A pending nonblocking collective keeps the op alive across MPI_Op_free. */
void bmpi_op_retain(struct bmpi_op *op);
void bmpi_op_release(struct bmpi_op *op);
/* Frees the ops the program left (MPI_Finalize, after the requests). */
void bmpi_op_finalize(void);

static inline bool bmpi_op_commutative(const struct bmpi_op *op) { return op->commute; }

/* The op's name for messages ("MPI_SUM", "user op 0x98000001"); static buffer. */
const char *bmpi_op_name(const struct bmpi_op *op);

/* Whether op may reduce data of type dt: 0, or MPI_ERR_OP with the reason
 * recorded by bmpi_err_set() ("MPI_SUM is not defined on MPI_2INT"). */
int bmpi_op_check(const struct bmpi_op *op, const struct bmpi_datatype *dt);

/* inout[i] = in[i] op inout[i] for count elements of dt, both buffers
 * laid out as dt describes (same addresses relative to buf). A user op
 * gets dt's handle as its datatype argument. */
void bmpi_op_apply(const struct bmpi_op *op, const void *in, void *inout, size_t count,
                   const struct bmpi_datatype *dt);

/* The reduction loop of a predefined op on contiguous elements of the
 * predefined type basic, for a caller that applies the same pair many
 * times: kernel(op->index, in, inout, n) is inout[i] = in[i] op inout[i]
 * for n elements. NULL where bmpi_op_apply() is the way: user ops,
 * MPI_REPLACE, MPI_NO_OP, the pair types. op must be valid on basic
 * (bmpi_op_check). */
typedef void (*bmpi_op_kernel_fn)(int op_index, const void *in, void *inout, size_t n);
bmpi_op_kernel_fn bmpi_op_basic_kernel(const struct bmpi_op *op, MPI_Datatype basic);

/* out = in op src for count elements of a contiguous dt, all three laid
 * out alike; out must not overlap in or src. Predefined ops on basic types
 * compute straight into out; the others copy src to out and apply. */
void bmpi_op_apply_into(const struct bmpi_op *op, const void *in, const void *src, void *out,
                        size_t count, const struct bmpi_datatype *dt);

#endif
