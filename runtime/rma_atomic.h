/*
 * Element-wise atomic updates of window memory (runtime/win.h): every
 * accumulate-family operation of bmpi ends here, whether the origin
 * applies it to a mapped target or the target applies it for an active
 * message, so all are atomic with respect to each other.
 *
 * An element of 1, 2, 4 or 8 bytes at its natural alignment is updated
 * with one CPU atomic (a fetch-op where the CPU has it, else a
 * compare-and-swap loop); any other element (long double, complex types,
 * the pair types of MINLOC/MAXLOC, unaligned data) under one stripe of
 * the target's lock table, chosen by the element's address, so that two
 * updates of one element always take the same stripe.
 *
 * A wide update (many contiguous elements) instead takes the target's
 * gate, waits until no element update is in flight on the node, and runs
 * op.c's reduction loop at memory speed; element updates announce
 * themselves and wait while a gate is held. A target whose memory a
 * transport's atomics may update keeps its gate shut (BMPI_RMA_GATE_NEVER):
 * its wide updates go element by element.
 */
#ifndef BMPI_RUNTIME_RMA_ATOMIC_H
#define BMPI_RUNTIME_RMA_ATOMIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <mpi.h>

#include "runtime/win.h"

struct bmpi_op;

/* What an update of one target's memory synchronizes with: the target's
 * control block (lock table and gate), and every process that updates
 * window memory on its node (this one first). */
struct bmpi_rma_guard {
    struct bmpi_win_ctl *ctl;
    const struct bmpi_win_updaters *updaters;
};

static inline struct bmpi_rma_guard bmpi_rma_guard_of(const struct bmpi_win *w,
                                                      struct bmpi_win_ctl *ctl)
{
    return (struct bmpi_rma_guard){ctl, &w->updaters};
}

/* Whether op (predefined, MPI_REPLACE and MPI_NO_OP included) may update
 * elements of the predefined type basic: 0, or MPI_ERR_OP with the reason
 * recorded by bmpi_err_set(). */
int bmpi_rma_atomic_check(const struct bmpi_op *op, MPI_Datatype basic);

/* For i < count: result[i] = target[i] (when result is not NULL), then
 * target[i] = origin[i] op target[i] (MPI_REPLACE: origin[i]; MPI_NO_OP:
 * unchanged, origin may be NULL), each element in one atomic step.
 * target, origin and result hold count elements of basic each, element
 * i at i * extent(basic), as a C array (the pair types' padding included:
 * MPI_DOUBLE_INT elements are 16 bytes apart with 12 of data; callers
 * that hold packed pairs apply them one element at a time);
 * result and origin are private memory, target is window memory of the
 * rank whose guard is g. */
void bmpi_rma_atomic_apply(const struct bmpi_op *op, MPI_Datatype basic, const void *origin,
                           void *target, void *result, size_t count, struct bmpi_rma_guard g);

/* e for op and basic, valid together: false when basic names no
 * datatype. */
bool bmpi_rma_elem_resolve(struct bmpi_rma_elem *e, const struct bmpi_op *op, MPI_Datatype basic);
/* bmpi_rma_atomic_apply() of a pair resolved once: what a loop of
 * accumulates of one type and op calls. */
void bmpi_rma_atomic_apply_elem(const struct bmpi_rma_elem *e, const void *origin, void *target, void *result,
                                size_t count, struct bmpi_rma_guard g);

/* bmpi_rma_atomic_apply() of runs of elements: iov_len bytes at each
 * iov_base of target[0..n), their origin and result elements one run
 * after another. The runs go under one close of the gate when they are
 * wide enough together (a column of doubles: each element then costs a
 * plain reduction, not an atomic), else run by run. */
void bmpi_rma_atomic_apply_runs(const struct bmpi_op *op, MPI_Datatype basic, const void *origin,
                                const struct iovec *target, size_t n, void *result, struct bmpi_rma_guard g);

/* bmpi_rma_atomic_apply() of count blocks of len bytes, stride bytes
 * apart from target (a column), their origin and result elements one
 * block after another. When the blocks are wide enough together they go
 * under one close of the gate, gathered a few KiB at a time, reduced by
 * one call of the op and scattered back; else block by block. */
void bmpi_rma_atomic_apply_strided(const struct bmpi_op *op, MPI_Datatype basic, const void *origin, char *target,
                                   ptrdiff_t stride, size_t len, size_t count, void *result,
                                   struct bmpi_rma_guard g);

/* One element: result = target; if target == compare, target = origin.
 * basic is an integer, logical, byte or multi-language type (the types
 * MPI_Compare_and_swap takes). */
void bmpi_rma_atomic_cswap(MPI_Datatype basic, const void *compare, const void *origin, void *target,
                           void *result, struct bmpi_rma_guard g);

/* Which types MPI_Compare_and_swap accepts: 0 or MPI_ERR_TYPE (reason
 * recorded). */
int bmpi_rma_cswap_check(MPI_Datatype basic);

#endif
