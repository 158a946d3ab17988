/*
 * The I/O layer's internal contract (docs/io.md): the file object behind
 * an MPI_File, its view and hints, and the pieces the files of io/ share.
 *
 * Layering. io/ sits above the runtime like collectives/ does: it calls
 * other processes only through MPI entry points (PMPI_*) on the file's
 * private communicator, and of the runtime it uses errors, error handlers,
 * info objects, datatypes, requests, progress and a communicator's node
 * map (bmpi_comm_node_leaders). Nothing below io/
 * includes this header; the runtime sees io/io.h only.
 *
 * Files:
 *   file.c      open, close, delete, size, info and hints, sync, handles
 *   file_err.c  file error handlers and the errno -> error class mapping
 *   view.c      views: set/get, the map from stream offsets to file runs
 *   access.c    independent blocking access: explicit offsets and the
 *               individual file pointer; system calls, atomic mode locks
 *   walk.c      the walk: one independent access as a bounded, resumable
 *               engine (data sieving, the lock rules) that access.c and
 *               nonblock.c share
 *   coll.c      collective access: two-phase collective buffering, as a
 *               state machine that the blocking, nonblocking and split
 *               forms share
 *   shared.c    the shared file pointer and the ordered forms
 *   nonblock.c  nonblocking independent access
 *   datarep.c   data representations: native, internal, external32 and
 *               those registered with MPI_Register_datarep
 *   pending.c   the list of pending operations bmpi_io_progress advances,
 *               and the status of a finished access
 */
#ifndef BMPI_IO_FILE_H
#define BMPI_IO_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <mpi.h>

#include "runtime/datatype.h"
#include "runtime/error.h"
#include "runtime/request.h"

struct iovec;

struct bmpi_info;

#define BMPI_FILE_MAGIC 0x62464c45u /* "bFLE": a live file object */

/* --- hints (MPI_Info keys, docs/io.md) ---------------------------------- */

enum bmpi_io_toggle { BMPI_IO_AUTO, BMPI_IO_ENABLE, BMPI_IO_DISABLE };

struct bmpi_file_hints {
    size_t cb_buffer_size;          /* "cb_buffer_size": bytes an aggregator moves per round */
    int cb_nodes;                   /* "cb_nodes": aggregators; 0 = one per node */
    enum bmpi_io_toggle cb_read;    /* "romio_cb_read" / "cb_read" */
    enum bmpi_io_toggle cb_write;   /* "romio_cb_write" / "cb_write" */
    enum bmpi_io_toggle ds_read;    /* "romio_ds_read": data sieving of independent reads */
    enum bmpi_io_toggle ds_write;   /* "romio_ds_write" */
    size_t ind_rd_buffer_size;      /* "ind_rd_buffer_size": sieving buffer for reads */
    size_t ind_wr_buffer_size;      /* "ind_wr_buffer_size": sieving buffer for writes */
    size_t striping_unit;           /* "striping_unit": file domains align to it; 0 = none */
    char access_style[64];          /* "access_style": kept and reported, no effect */
};

/* --- data representations (datarep.c) ------------------------------------ */

struct bmpi_datarep;

/* --- the view (view.c) ----------------------------------------------------- */

struct bmpi_file_view {
    MPI_Offset disp;                /* bytes from the start of the file */
    MPI_Datatype etype, filetype;   /* predefined, or our own duplicates */
    /* their layouts in the file: the types themselves, or when rep gives
     * a basic type another size than memory does, rep's layouts of them
     * (bmpi_datarep_layout), owned here (elayout, flayout; else NULL) */
    struct bmpi_datatype *edt, *fdt;
    struct bmpi_datatype *elayout, *flayout;
    size_t esize;                   /* bytes of one etype in the file */
    size_t fsize;                   /* data bytes of one filetype in the file */
    MPI_Aint fextent;               /* extent of one filetype (tiling step) */
    bool contig;                    /* the filetype is one run: file = disp + stream */
    const struct bmpi_datarep *rep;
};

/* --- the file object -------------------------------------------------------- */

struct bmpi_io_shared;  /* shared.c */
struct bmpi_io_split;   /* coll.c: a split collective between begin and end */
struct bmpi_io_coll;    /* coll.c: the node map and operation count of collective access */

struct bmpi_file {
    uint32_t magic;
    int fhandle;                    /* Fortran handle (file.c's table) */
    MPI_Comm comm;                  /* private duplicate of the open's communicator */
    int rank, size;
    int fd;
    bool readable;                  /* fd can read: sieving may fill holes */
    char *path;
    int amode;
    MPI_Errhandler errhandler;
    struct bmpi_info *info;         /* the hints as the user gave them, for get_info */
    struct bmpi_file_hints hints;
    struct bmpi_file_view view;
    MPI_Offset pos;                 /* individual file pointer, in etypes of the view */
    bool atomic;                    /* MPI_File_set_atomicity */
    struct bmpi_io_shared *shared;
    struct bmpi_io_split *split;
    struct bmpi_io_coll *coll;      /* made by the first collective access */
    int pending_ops;                /* nonblocking operations not yet complete */
};

/* The live file behind fh; reports MPI_ERR_FILE through MPI_FILE_NULL's
 * handler and returns its code when there is none. */
int bmpi_file_check(MPI_File fh, const char *fn, struct bmpi_file **f);

/* Collective over f->comm: every rank's outcome of a step (0 or an error
 * class with its reason recorded) made one, the worst. A rank that
 * succeeded where another failed records "another rank could not <what>
 * <path>". */
int bmpi_io_agree(struct bmpi_file *f, int mine, const char *what);

/* --- errors (file_err.c) ----------------------------------------------------- */

/* Report errclass for fn through f's error handler (MPI_FILE_NULL's for
 * NULL, as for MPI_File_open and MPI_File_delete), like bmpi_err_comm:
 * fmt NULL takes the reason recorded with bmpi_err_set(). */
int bmpi_err_file_obj(struct bmpi_file *f, int errclass, const char *fn, const char *fmt, ...)
    BMPI_PRINTF(4, 5);
/* The error class of a failed system call's errno, with the reason
 * "<what> <path>: <strerror>" recorded by bmpi_err_set(). */
int bmpi_io_errno(int err, const char *what, const char *path);
/* MPI_FILE_NULL's handler (MPI_ERRORS_RETURN until the program sets one). */
MPI_Errhandler bmpi_file_null_errhandler(void);
void bmpi_file_errhandler_finalize(void);

/* --- views (view.c) ----------------------------------------------------------- */

/* The default view: displacement 0, MPI_BYTE, MPI_BYTE, "native". */
void bmpi_view_init_default(struct bmpi_file_view *v);
void bmpi_view_release(struct bmpi_file_view *v);

/* One contiguous piece of the file. */
struct bmpi_io_run {
    MPI_Offset off;
    size_t len;
};

/* Walks the file runs of `bytes` bytes of the view's stream starting at
 * stream byte `start`, in stream order. Stack-allocatable. */
struct bmpi_io_map {
    const struct bmpi_file_view *view;
    MPI_Offset base;                /* file offset of the cursor's address 0 */
    size_t left;                    /* bytes still to map */
    struct bmpi_dt_cursor cursor;   /* over the tiled filetype (unused if contig) */
    MPI_Offset next_contig;         /* contig view: the next file offset */
};
void bmpi_io_map_init(struct bmpi_io_map *m, const struct bmpi_file_view *v, MPI_Offset start, size_t bytes);
/* The next runs, at most max of them, adjacent runs merged; returns how
 * many (0 once all bytes are mapped). */
int bmpi_io_map_next(struct bmpi_io_map *m, struct bmpi_io_run *runs, int max);
/* The same, stopping after max_bytes bytes (a run may be cut). */
int bmpi_io_map_next_max(struct bmpi_io_map *m, struct bmpi_io_run *runs, int max, size_t max_bytes);
/* The file bytes [*lo, *hi) that the stream bytes [start, start + bytes)
 * touch at first and last; *lo == *hi when bytes is 0. */
void bmpi_io_map_bounds(const struct bmpi_file_view *v, MPI_Offset start, size_t bytes, MPI_Offset *lo,
                        MPI_Offset *hi);
/* The file offset of stream byte `start` (MPI_File_get_byte_offset). */
MPI_Offset bmpi_io_map_byte(const struct bmpi_file_view *v, MPI_Offset start);
/* The stream bytes of the view that lie before file offset file_size (the
 * end of file, in the view's terms: MPI_SEEK_END). */
MPI_Offset bmpi_io_map_stream_end(const struct bmpi_file_view *v, MPI_Offset file_size);

/* --- checks shared by the data access entry points (access.c) ------------- */

enum bmpi_io_dir { BMPI_IO_READ, BMPI_IO_WRITE };

/* One data access as the entry point received it, validated. */
struct bmpi_io_access {
    enum bmpi_io_dir dir;
    void *buf;
    size_t count;
    MPI_Datatype type;
    struct bmpi_datatype *dt;
    const struct bmpi_datarep *rep; /* the view's when the access was checked */
    size_t bytes;                   /* count elements of dt in rep: the access's stretch of the view's stream */
};

/* Bytes one element of a's datatype takes in the file (0 when a has none). */
static inline size_t bmpi_io_access_element(const struct bmpi_io_access *a)
{
    return a->count ? a->bytes / a->count : 0;
}

/* Validate (buf, count, datatype) for an access of f in direction dir by
 * fn: the amode allows it, the count, the type (committed, whole etypes),
 * and explicit offsets (offset >= 0, not on an MPI_MODE_SEQUENTIAL file)
 * when offset is not NULL. Fills *a; reports through f's handler. */
int bmpi_io_access_check(struct bmpi_file *f, const char *fn, enum bmpi_io_dir dir, const MPI_Offset *offset,
                         const void *buf, MPI_Count count, MPI_Datatype datatype, struct bmpi_io_access *a);

/* Independent blocking access: a's data at etype offset `offset` of f's
 * view, converted from or to its representation: a walk stepped to its
 * end. Returns 0 or an error class (reason recorded); *done is the bytes
 * moved (a read past the end of file stops short). */
int bmpi_io_independent(struct bmpi_file *f, const struct bmpi_io_access *a, MPI_Offset offset, size_t *done);

/* Atomic mode: lock file bytes [off, off + len) for reading or writing
 * (fcntl byte-range locks, which NFS honours), and unlock them. */
int bmpi_io_lock(struct bmpi_file *f, MPI_Offset off, MPI_Offset len, enum bmpi_io_dir dir);
void bmpi_io_unlock(struct bmpi_file *f, MPI_Offset off, MPI_Offset len);

/* Whole-buffer pread/pwrite: loops over short transfers and EINTR. A read
 * stops at end of file (*done < len, no error). */
int bmpi_io_pread(struct bmpi_file *f, void *buf, size_t len, MPI_Offset off, size_t *done);
int bmpi_io_pwrite(struct bmpi_file *f, const void *buf, size_t len, MPI_Offset off);
/* The n buffers of iov written one after the other from off (pwritev, any
 * number of buffers); iov is consumed. */
int bmpi_io_pwritev(struct bmpi_file *f, struct iovec *iov, size_t n, MPI_Offset off);

/* --- the walk: independent access, blocking or not (walk.c) ---------------- */

/* One independent access in progress: a's data at an etype offset of f's
 * view, moved in bounded steps; the blocking path steps it to the end at
 * once, nonblock.c a few MiB per progress call. Data sieving: runs whose
 * span fits the hint's buffer cost one pread of the span (and a write one
 * pwrite back, under a write lock of the span); while writes sieve, every
 * plain pwrite takes its run's write lock (another rank's read-modify-write
 * may span it). Atomic mode (as f was at init): a step locks the access's
 * whole file range and runs it to the end, and no other lock is taken.
 * Stack-allocatable; callers read `done` only. */
struct bmpi_io_walk {
    size_t done;                    /* stream bytes moved: the status count */
    struct bmpi_file *f;
    struct bmpi_io_access a;        /* a copy; the caller keeps a.dt alive */
    struct bmpi_io_map map;         /* the file runs still to walk */
    bool over;                      /* a read met the end of file, or a step failed */
    bool atomic;
    MPI_Offset lock_lo, lock_hi;    /* atomic: the file range a step locks */
    char *mem;                      /* contiguous memory side at stream byte 0; NULL: bounce */
    char *conv;                     /* non-native representation: the access in file form */
    char *bounce;                   /* one chunk, for non-contiguous memory */
    struct bmpi_dt_cursor cursor;   /* over the user's buffer, with bounce */
    char *sieve;                    /* the sieving buffer, allocated on first use */
    size_t sieve_cap;
    struct bmpi_io_run *runs;       /* room for many runs a chunk, once the access proved fragmented */
};

/* Start a walk of a at etype offset `offset` (MPI_ERR_ARG when it passes
 * the largest file offset); a non-native write is converted here. Call
 * bmpi_io_walk_release afterwards whatever it returns. */
int bmpi_io_walk_init(struct bmpi_io_walk *w, struct bmpi_file *f, const struct bmpi_io_access *a,
                      MPI_Offset offset);
/* Move at most max_bytes more (SIZE_MAX: to the end; atomic mode always
 * goes to the end). Returns 0 or an error class (reason recorded), after
 * which the walk is done; the step that ends a non-native read converts
 * its data into the user's buffer. */
int bmpi_io_walk_step(struct bmpi_io_walk *w, size_t max_bytes);
/* True once every byte moved, a read met the end of file or a step failed. */
bool bmpi_io_walk_done(const struct bmpi_io_walk *w);
void bmpi_io_walk_release(struct bmpi_io_walk *w);

/* --- data representations (datarep.c) ----------------------------------------- */

/* The representation named datarep ("native", "internal", "external32"
 * or a registered one), or NULL (MPI_ERR_UNSUPPORTED_DATAREP recorded). */
const struct bmpi_datarep *bmpi_datarep_find(const char *datarep);
const char *bmpi_datarep_name(const struct bmpi_datarep *rep);
/* True when the file holds data as memory does (no conversion). */
bool bmpi_datarep_is_native(const struct bmpi_datarep *rep);
/* dt's layout in rep's files when some basic type of it takes another
 * size there than in memory (*layout, one reference for the caller; the
 * standard's reading: counts in elements scale, bytes stay), else NULL:
 * the layout is dt's own. */
int bmpi_datarep_layout(const struct bmpi_datarep *rep, struct bmpi_datatype *dt, struct bmpi_datatype **layout);
/* Bytes of count elements of dt in rep's files (MPI_ERR_COUNT past 2^63). */
int bmpi_datarep_size(const struct bmpi_datarep *rep, const struct bmpi_datatype *dt, size_t count, size_t *bytes);
/* The memory bytes of an access that moved `done` bytes of its stream:
 * whole basic items only where an element was cut (the status). */
size_t bmpi_datarep_memory_bytes(const struct bmpi_io_access *a, size_t done);
/* The extent of datatype in the file under rep (MPI_File_get_type_extent). */
int bmpi_datarep_extent(const struct bmpi_datarep *rep, MPI_Datatype datatype, MPI_Aint *extent);
/* A non-native write: the access's data packed and converted into a new
 * buffer of a->bytes bytes, its file representation (*out, free() it). A
 * non-native read: convert and unpack `bytes` bytes of file
 * representation at src into the access's buffer. */
int bmpi_datarep_to_file(const struct bmpi_datarep *rep, const struct bmpi_io_access *a, void **out);
int bmpi_datarep_from_file(const struct bmpi_datarep *rep, const struct bmpi_io_access *a, const void *src,
                           size_t bytes);
void bmpi_datarep_finalize(void);

/* --- collective access (coll.c) ------------------------------------------------ */

/* A collective access of every rank of f at etype offset `offset` of its
 * view (each rank its own offset and data), as a nonblocking operation:
 * the blocking forms start and wait, the split forms start at _begin and
 * wait at _end. *req completes with the status of this rank's part. */
int bmpi_io_coll_start(struct bmpi_file *f, const struct bmpi_io_access *a, MPI_Offset offset,
                       struct bmpi_request **req);
/* How many aggregators collective access on f uses (cb_nodes, else one
 * per node, at most one per rank); 0 when that takes messages to learn
 * (ranks of other jobs in the group). Local. */
int bmpi_io_coll_aggregators(struct bmpi_file *f);
/* MPI_File_close: free what collective access kept for f, its round
 * buffers going to the next file's collective accesses (and a split
 * collective left open, which is erroneous). Local. */
void bmpi_io_coll_close(struct bmpi_file *f);
/* MPI_Finalize: free the round buffers closed files left for the next. */
void bmpi_io_coll_finalize(void);

/* --- the shared file pointer (shared.c) ---------------------------------------- */

/* Collective parts of open and close. Open starts the pointer at f->pos
 * (set it first: the end of file under MPI_MODE_APPEND) and, on more than
 * one rank, creates a window over f->comm and synchronizes the ranks;
 * close frees the window (no ordered split may be active). */
int bmpi_io_shared_open(struct bmpi_file *f);
void bmpi_io_shared_close(struct bmpi_file *f);
/* Without collective steps (MPI_Finalize, a failed open): free what
 * shared.c holds; the runtime frees the window itself. */
void bmpi_io_shared_release(struct bmpi_file *f);
/* Collective (MPI_File_set_view), once every rank has entered the call
 * (set_view's agreement): the pointer back to 0, no rank leaving before
 * it is. */
int bmpi_io_shared_reset(struct bmpi_file *f);
/* True between an ordered split collective's begin and end; coll.c's
 * begins refuse to start while it is, as shared.c's refuse while
 * f->split is set. */
bool bmpi_io_shared_split_active(const struct bmpi_file *f);
/* Collective: the shared pointer once every rank's accesses before the
 * call are done (MPI_DISPLACEMENT_CURRENT in set_view). */
int bmpi_io_shared_position(struct bmpi_file *f, MPI_Offset *etypes);

/* --- nonblocking independent access (nonblock.c) --------------------------------- */

/* A walk of a at etype offset `offset` as a pending operation; *req
 * completes with its status. Errors found at start are returned. */
int bmpi_io_nonblocking_start(struct bmpi_file *f, const struct bmpi_io_access *a, MPI_Offset offset,
                              struct bmpi_request **req);

/* --- pending operations (pending.c) ----------------------------------------------- */

/* A pending operation: advance() does a bounded step (a few MiB of I/O, or
 * one test of its outstanding messages) and returns the events handled;
 * it completes op->req and returns once the operation is over, after
 * which the list drops it and calls destroy(). */
struct bmpi_io_op {
    struct bmpi_io_op *next;
    struct bmpi_file *file;
    struct bmpi_request *req;
    bool done;
    int (*advance)(struct bmpi_io_op *op);
    void (*destroy)(struct bmpi_io_op *op);
};
/* Put op on the pending list and give it a first step. */
void bmpi_io_op_start(struct bmpi_io_op *op);
/* A request of kind BMPI_REQ_IO for op, with op->req set. */
struct bmpi_request *bmpi_io_request_new(struct bmpi_io_op *op);
/* The status of access a that moved `done` bytes of its stream (status
 * may be MPI_STATUS_IGNORE): their bytes in memory. */
void bmpi_io_status(MPI_Status *status, const struct bmpi_io_access *a, size_t done);
/* Finish op: that status, error class err, and complete its request. */
void bmpi_io_op_finish(struct bmpi_io_op *op, int err, const struct bmpi_io_access *a, size_t done);
/* MPI_Finalize: drop what is still pending. */
void bmpi_io_pending_finalize(void);

#endif
