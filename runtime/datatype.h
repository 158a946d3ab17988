/*
 * MPI datatypes: the objects behind MPI_Datatype handles and the engine that
 * moves typed data between user buffers and packed byte streams.
 *
 * This header is the contract with the point-to-point, collective and RMA
 * code. It may call only error.h; it knows nothing of communicators or
 * transports.
 *
 * Handles follow the MPICH ABI: predefined types are the constants of
 * mpi.h (0x4c00SSII: size SS, index II; the pair types MPI_FLOAT_INT ...
 * are 0x8c00000I). Derived types are 0xcc000000 | generation << 20 | slot,
 * a range MPICH leaves to "indirect" objects, so they never collide with a
 * predefined handle.
 *
 * Representation. At commit a type is compiled into a tree of nodes. A node
 * is a list of segments in type-map order; a segment is `count` repetitions,
 * `stride` bytes apart, of either a contiguous block of `blen` bytes (a
 * leaf) or one instance of a child node. Construction merges what it can:
 * adjacent blocks become one block, equally spaced equal blocks become one
 * vector segment, small children are inlined, regularly tiled vectors
 * collapse into one. So a vector of a million doubles is one segment, a
 * 3-d subarray is three nested segments, and memory stays proportional to
 * the arguments of the constructors, never to the data. The cursor walks
 * this tree with an explicit stack of at most BMPI_DT_MAX_DEPTH frames.
 *
 * Lifetime. Every type is reference counted. The user's handle is one
 * reference; a type built from another holds one on it; pending operations
 * take one with bmpi_dt_retain(). MPI_Type_free drops the user's reference
 * and makes the handle invalid at once; the object lives on until the last
 * reference goes. Predefined types are never freed (retain/release are
 * no-ops for them).
 *
 * Threads: the handle table is process-wide and not yet locked; a later
 * MPI_THREAD_MULTIPLE puts a lock in struct bmpi_dt_table (datatype.c).
 */
#ifndef BMPI_RUNTIME_DATATYPE_H
#define BMPI_RUNTIME_DATATYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <mpi.h>

#include "runtime/error.h"

/* Deepest nesting of a compiled type (after merging), which bounds the
 * cursor's size (~0.6 KB). Every level left after merging at least doubles
 * the blocks per element, so a type needs more only with 2^16 blocks or so;
 * MPI_Type_commit fails with MPI_ERR_TYPE for it instead. */
#define BMPI_DT_MAX_DEPTH 16

/* One segment of a compiled node (see above). Read-only outside datatype code. */
struct bmpi_dt_seg {
    MPI_Aint disp;          /* first repetition, from the node's base */
    MPI_Aint stride;        /* between repetitions (may be negative or 0 when count == 1) */
    size_t count;           /* repetitions, >= 1 */
    size_t blen;            /* bytes of data per repetition (> 0) */
    struct bmpi_dt_node *child; /* NULL: each repetition is one contiguous block */
    size_t before;          /* packed bytes of the node before this segment */
};

struct bmpi_dt_node {
    int refs;
    int depth;    /* 1 if all segments are leaves */
    size_t size;  /* packed bytes of one instance */
    size_t nsegs;
    struct bmpi_dt_seg segs[];
};

/* Type flags. */
#define BMPI_DT_PREDEFINED 0x01u
#define BMPI_DT_COMMITTED  0x02u
#define BMPI_DT_LB_MARK    0x04u /* lb is sticky (resized, MPI_LB, subarray) */
#define BMPI_DT_UB_MARK    0x08u /* ub is sticky */
#define BMPI_DT_EMPTY      0x10u /* empty type map: no data, no markers */
#define BMPI_DT_CONTIG     0x20u /* compiled, one block with size == extent */
#define BMPI_DT_PAIR       0x40u /* predefined pair type (MPI_DOUBLE_INT, MPI_2INT, ...) */
#define BMPI_DT_NOFREE     0x80u /* MPI_Type_create_f90_*: the user may not free it */

/*
 * The object. Fields are read-only outside runtime/datatype*.c and
 * runtime/dt_*.c; use the accessors below.
 */
struct bmpi_datatype {
    MPI_Datatype handle;  /* MPI_DATATYPE_NULL for internal, anonymous types */
    int refs;             /* all references */
    int user_refs;        /* references held through the handle */
    unsigned flags;
    int kind;             /* enum bmpi_dt_kind (datatype_impl.h): what a predefined type holds */
    int combiner;         /* MPI_COMBINER_* as MPI_Type_get_envelope reports it */
    int defn;             /* combiner its contents are decoded with (pair types: STRUCT) */
    MPI_Datatype basic;   /* the one predefined type it is made of, or MPI_DATATYPE_NULL */
    int align;            /* alignment, for the padding of struct extents */

    MPI_Count size;       /* bytes of data */
    MPI_Aint lb, ub;      /* extent = ub - lb */
    MPI_Aint true_lb, true_ub;
    MPI_Count nelem;      /* basic elements per element (MPI_Get_elements) */

    /* what the constructor was given (MPI_Type_get_contents) */
    int n_ints, n_aints, n_types;
    int *ints;
    MPI_Aint *aints;
    struct bmpi_datatype **types; /* each holds a reference */
    /* A large-count constructor's arguments when one of its integers does
     * not fit an int (else they are in ints/aints as from the int call):
     * ints and aints in one MPI_Count array, the aints from a_off on. */
    int n_counts, a_off;
    MPI_Count *counts;
    struct bmpi_datatype *inner;  /* subarray, darray, F90: the equivalent type it was built as */

    struct bmpi_dt_node *node;    /* compiled layout; NULL until commit */
    char *name;                   /* MPI_Type_set_name; NULL: default */
};

/* --- setup -------------------------------------------------------------- */

/* MPI_Init/MPI_Finalize. Predefined types work before bmpi_dt_init (they
 * are set up on first use, so the MPI_Type_* functions work in unit tests);
 * finalize frees every derived type left and resets the table. */
int bmpi_dt_init(void);
void bmpi_dt_finalize(void);

/* --- handles -------------------------------------------------------------- */

/* The object of a valid handle (predefined, or derived and not freed by the
 * user), NULL otherwise (MPI_DATATYPE_NULL, garbage, freed). */
struct bmpi_datatype *bmpi_dt_get(MPI_Datatype h);

/* For communication: h must be valid and committed (predefined types are).
 * Returns 0 and sets *dt, or MPI_ERR_TYPE with the reason recorded by
 * bmpi_err_set() ("datatype 0x... is not committed"). */
int bmpi_dt_check_usable(MPI_Datatype h, struct bmpi_datatype **dt);

/* The type's name for messages: "MPI_INT", the user's name, or
 * "datatype 0xcc000003"; never NULL. The returned string may be a static
 * buffer overwritten by the next call. */
const char *bmpi_dt_name(MPI_Datatype h);

/* A pending operation keeps the type alive across MPI_Type_free. */
void bmpi_dt_retain(struct bmpi_datatype *dt);
void bmpi_dt_release(struct bmpi_datatype *dt);

/* --- properties ------------------------------------------------------------- */

static inline size_t bmpi_dt_size(const struct bmpi_datatype *dt) { return (size_t)dt->size; }
static inline MPI_Aint bmpi_dt_lb(const struct bmpi_datatype *dt) { return dt->lb; }
static inline MPI_Aint bmpi_dt_extent(const struct bmpi_datatype *dt) { return dt->ub - dt->lb; }
static inline MPI_Aint bmpi_dt_true_lb(const struct bmpi_datatype *dt) { return dt->true_lb; }
/* Basic elements in one element: a bound on the contiguous pieces it has. */
static inline MPI_Count bmpi_dt_nelem(const struct bmpi_datatype *dt) { return dt->nelem; }
static inline MPI_Aint bmpi_dt_true_extent(const struct bmpi_datatype *dt)
{
    return dt->true_ub - dt->true_lb;
}
/* count elements of this type are one contiguous run of count * size bytes
 * starting at buf + true_lb (committed types only). */
static inline bool bmpi_dt_is_contig(const struct bmpi_datatype *dt)
{
    return (dt->flags & BMPI_DT_CONTIG) != 0;
}
/* The single predefined type the data is made of (MPI_DOUBLE for a vector
 * of doubles, MPI_DOUBLE_INT for an array of pairs), else MPI_DATATYPE_NULL.
 * Reductions work element by element on it: count * size / size(basic). */
static inline MPI_Datatype bmpi_dt_basic(const struct bmpi_datatype *dt) { return dt->basic; }
static inline bool bmpi_dt_is_predefined(const struct bmpi_datatype *dt)
{
    return (dt->flags & BMPI_DT_PREDEFINED) != 0;
}

/* Bytes of data of count elements; false if that overflows size_t. */
bool bmpi_dt_total(const struct bmpi_datatype *dt, size_t count, size_t *bytes);

/* The range of memory [buf + *lo, buf + *hi) that (buf, count, dt) touches,
 * for memory registration; *lo == *hi when there is no data. */
void bmpi_dt_span(const struct bmpi_datatype *dt, size_t count, MPI_Aint *lo, MPI_Aint *hi);

/* --- moving data ------------------------------------------------------------- */

/*
 * A position in the packed stream of (buf, count, type): pack and unpack
 * move bounded chunks and can resume where they stopped, so a large
 * non-contiguous message goes out in pipelined fragments. Stack-allocatable;
 * it keeps no pointer into itself, so it may be copied (e.g. into a request).
 * The type must be committed (or predefined) and stay alive while the cursor
 * is used (retain it for pending operations).
 */
struct bmpi_dt_frame {
    const struct bmpi_dt_node *node; /* NULL: the cursor's root segment */
    size_t seg, rep;
    uintptr_t base;                  /* address of this node instance */
};

struct bmpi_dt_cursor {
    uintptr_t buf;
    size_t total; /* bytes in the stream */
    size_t pos;   /* bytes already packed/unpacked */
    bool contig;  /* stream is [buf + root.disp, + total) */
    int depth;    /* frames in use; the deepest is at a leaf segment */
    size_t leaf_off; /* bytes done in the current block */
    struct bmpi_dt_seg root; /* the count elements, as one segment */
    struct bmpi_dt_frame f[BMPI_DT_MAX_DEPTH + 1];
};

void bmpi_dt_cursor_init(struct bmpi_dt_cursor *c, void *buf, size_t count,
                         const struct bmpi_datatype *dt);
/* Position within the packed stream (0 .. total; beyond is clamped). */
void bmpi_dt_cursor_seek(struct bmpi_dt_cursor *c, size_t byte_offset);
static inline size_t bmpi_dt_cursor_left(const struct bmpi_dt_cursor *c)
{
    return c->total - c->pos;
}

/* Copy the next min(max_bytes, left) bytes of the stream to dst; returns
 * the bytes copied and advances. */
size_t bmpi_dt_pack(struct bmpi_dt_cursor *c, void *dst, size_t max_bytes);
/* Copy bytes from src into the buffer at the cursor; never writes past the
 * described data: returns min(bytes, left) and advances. */
size_t bmpi_dt_unpack(struct bmpi_dt_cursor *c, const void *src, size_t bytes);
/* Fill iov with the next contiguous pieces of the buffer (adjacent pieces
 * merged), at most max_iov entries and max_bytes bytes in all; returns the
 * entries filled, stores their total in *bytes and advances past them. */
int bmpi_dt_iov(struct bmpi_dt_cursor *c, struct iovec *iov, int max_iov, size_t max_bytes,
                size_t *bytes);

/* count blocks of len bytes, stride bytes apart from addr. */
struct bmpi_dt_run {
    uintptr_t addr;
    size_t len, count;
    MPI_Aint stride;
};

/* The next blocks of the buffer as one run: the rest of the current
 * leaf segment's blocks, at most max_blocks of them and max_bytes in all
 * (a block begun before, or cut by max_bytes, is a run of its own).
 * Returns the bytes the run covers and advances past them; 0 at the end.
 * Costs one step per run where bmpi_dt_iov costs one per block. */
size_t bmpi_dt_next_run(struct bmpi_dt_cursor *c, size_t max_bytes, size_t max_blocks, struct bmpi_dt_run *r);

/* The first n bytes of the packed stream of (src, scount, sdt) into
 * (dst, dcount, ddt): one walk of each side when the other is one run
 * (memmove then, so in-place copies are safe), else through a bounded
 * staging buffer, so that each walk copies whole runs of blocks. */
void bmpi_dt_copy(const void *src, size_t scount, const struct bmpi_datatype *sdt, void *dst, size_t dcount,
                  const struct bmpi_datatype *ddt, size_t n);

/* Whole-buffer conveniences: pack/unpack count elements at once. */
void bmpi_dt_pack_all(const void *buf, size_t count, const struct bmpi_datatype *dt, void *dst);
void bmpi_dt_unpack_all(const void *src, void *buf, size_t count, const struct bmpi_datatype *dt);

/* --- elements ---------------------------------------------------------------- */

/* Basic elements in the first `bytes` bytes of the packed stream of dt
 * (MPI_Get_elements); -1 if that ends inside a basic element. */
MPI_Count bmpi_dt_elements(const struct bmpi_datatype *dt, MPI_Count bytes);
/* The inverse: bytes of the first n basic elements (MPI_Status_set_elements);
 * -1 on overflow. */
MPI_Count bmpi_dt_elements_bytes(const struct bmpi_datatype *dt, MPI_Count n);

/* --- external32 (dt_external.c) ------------------------------------------------ */

/* MPI_Pack_external and the I/O layer's "external32" data representation
 * (io/datarep.c): the external32 size of one element of dt, and count
 * elements packed to / unpacked from external32 at *position of a buffer of
 * dstsize / srcsize bytes (MPI_ERR_TRUNCATE if they do not fit,
 * MPI_ERR_CONVERSION for a value the external size cannot hold). */
int bmpi_dt_external_size(const struct bmpi_datatype *dt, MPI_Count *size);
int bmpi_dt_pack_external(const void *buf, size_t count, const struct bmpi_datatype *dt,
                          void *dst, MPI_Count dstsize, MPI_Count *position);
int bmpi_dt_unpack_external(const void *src, MPI_Count srcsize, MPI_Count *position, void *buf,
                            size_t count, const struct bmpi_datatype *dt);

/* --- other representations (dt_repr.c) ----------------------------------------- */

/* A representation's size of one predefined type (a pair type: of each
 * member): external32's fixed sizes, or a registered data
 * representation's extent function (io/datarep.c). Returns 0 or an error
 * class with the reason recorded. */
typedef int bmpi_dt_basic_size_fn(const struct bmpi_datatype *basic, void *ctx, MPI_Count *size);

/* Bytes of one element of dt when every basic type takes what fn says. */
int bmpi_dt_size_in(const struct bmpi_datatype *dt, bmpi_dt_basic_size_fn *fn, void *ctx, MPI_Count *size);
/* Of one element of dt in that representation, the leading basic items
 * that lie whole within its first `limit` bytes: *mem is their bytes in
 * memory (the element a short read cut). */
int bmpi_dt_prefix_in(const struct bmpi_datatype *dt, bmpi_dt_basic_size_fn *fn, void *ctx, MPI_Count limit,
                      MPI_Count *mem);
/* dt's layout in that representation: its constructors called again with
 * the same arguments, over a block of the representation's bytes wherever
 * a predefined type's size differs there (a pair type counts as one).
 * Counts and strides in elements therefore scale with the new sizes while
 * displacements, strides and bounds given in bytes stay, which is how MPI
 * 4.1 (section 14.5.1) reads a filetype under a data representation.
 * Committed; the caller owns one reference (bmpi_dt_release). */
int bmpi_dt_relayout(struct bmpi_datatype *dt, bmpi_dt_basic_size_fn *fn, void *ctx, struct bmpi_datatype **out);

/* Call fn on each predefined basic type of dt's type map (pair types as
 * their two members), once per part of the type rather than per element,
 * so the cost follows the constructors' arguments, never the data; stops
 * at and returns the first nonzero return of fn. Types of size 0 (MPI_LB,
 * MPI_UB, empty parts) are skipped. For the I/O layer's data
 * representations, which compare basic sizes in the file and in memory. */
int bmpi_dt_for_each_basic(const struct bmpi_datatype *dt,
                           int (*fn)(const struct bmpi_datatype *basic, void *ctx), void *ctx);

#endif
