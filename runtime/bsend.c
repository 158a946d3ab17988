/*
 * Buffered sends: the message is packed into the buffer the user attached
 * (MPI_Buffer_attach), the user's send completes at once, and an internal
 * send carries the packed copy; its block of the buffer is released when
 * that send completes. Blocks are carved first-fit, in address order.
 */
#include "config.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "runtime/api.h"
#include "runtime/p2p.h"
#include "runtime/progress.h"
#include "runtime/world.h"

/* A block in the attached buffer; its data follows the header. Each block
 * costs at most MPI_BSEND_OVERHEAD bytes beyond the data. */
struct bsend_block {
    struct bsend_block *next; /* next block in address order */
    size_t size;              /* bytes of the block, header included */
};

_Static_assert(sizeof(struct bsend_block) + 16 <= MPI_BSEND_OVERHEAD, "block header too large");

static struct {
    char *buf;
    size_t size;
    struct bsend_block *blocks; /* busy blocks, in address order */
    int busy;
} attached;

static size_t align16(size_t n) { return (n + 15) & ~(size_t)15; }

static struct bsend_block *block_alloc(size_t data_len)
{
    size_t need = align16(sizeof(struct bsend_block) + data_len);
    char *base = (char *)(((uintptr_t)attached.buf + 15) & ~(uintptr_t)15);
    char *end = attached.buf + attached.size;
    struct bsend_block **link = &attached.blocks;
    char *gap = base;
    for (;;) {
        char *gap_end = *link ? (char *)*link : end;
        if (gap_end >= gap && (size_t)(gap_end - gap) >= need) {
            struct bsend_block *b = (struct bsend_block *)gap;
            b->size = need;
            b->next = *link;
            *link = b;
            attached.busy++;
            return b;
        }
        if (!*link)
            return NULL;
        gap = (char *)*link + (*link)->size;
        link = &(*link)->next;
    }
}

static void block_release(struct bsend_block *b)
{
    for (struct bsend_block **link = &attached.blocks; *link; link = &(*link)->next) {
        if (*link == b) {
            *link = b->next;
            attached.busy--;
            return;
        }
    }
}

static void carried(struct bmpi_request *inner) { block_release(inner->ctx); }

int bmpi_bsend_start(struct bmpi_request *req)
{
    if (req->peer == MPI_PROC_NULL)
        return bmpi_send_start(req); /* nothing to buffer */
    size_t bytes = req->count * bmpi_dt_size(req->dt);
    struct bsend_block *b = attached.buf ? block_alloc(bytes) : NULL;
    if (!b)
        return bmpi_err_set(MPI_ERR_BUFFER,
                            "no room for a %zu-byte buffered send in the attached buffer (%zu bytes%s); "
                            "attach a larger buffer with MPI_Buffer_attach",
                            bytes, attached.size, attached.buf ? "" : ", none attached");
    bmpi_dt_pack_all(req->buf, req->count, req->dt, b + 1);
    struct bmpi_request *inner;
    int rc = bmpi_isend(b + 1, bytes, MPI_BYTE, req->peer, req->tag, req->comm, req->context_id,
                        BMPI_SEND_STANDARD, &inner);
    if (rc) {
        block_release(b);
        return rc;
    }
    if (inner->complete) {
        block_release(b);
        bmpi_request_free(inner);
    } else {
        inner->ctx = b;
        inner->on_complete = carried;
        inner->user_freed = true;
    }
    bmpi_status_set(&req->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0);
    bmpi_request_complete(req);
    return BMPI_OK;
}

/* Which call: only the blocking one goes without a request. */
enum bsend_call { BSEND_BLOCKING, BSEND_NONBLOCKING, BSEND_PERSISTENT };

static int bsend(const char *fn, const void *buf, MPI_Count count, MPI_Datatype type, int dest,
                 int tag,
                 MPI_Comm comm, MPI_Request *request, enum bsend_call call)
{
    struct bmpi_comm *c;
    int err = bmpi_check_comm(comm, fn, &c);
    if (!err)
        err = bmpi_check_buffer(comm, fn, buf, count, type);
    if (err)
        return err;
    if (dest != MPI_PROC_NULL && (dest < 0 || dest >= bmpi_comm_peer_size(c)))
        return bmpi_err_comm(comm, MPI_ERR_RANK, fn, "invalid rank %d (communicator size %d)", dest,
                             bmpi_comm_peer_size(c));
    if (tag < 0)
        return bmpi_err_comm(comm, MPI_ERR_TAG, fn, "invalid tag %d", tag);
    if (call != BSEND_BLOCKING && !request)
        return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "request is NULL");
    struct bmpi_request *req =
        bmpi_p2p_request_new(BMPI_REQ_SEND, (void *)buf, (size_t)count, type, dest, tag, c, c->context_id);
    if (!req)
        return bmpi_err_comm(comm, MPI_ERR_NO_MEM, fn, "out of memory");
    req->mode = BMPI_SEND_BUFFERED;
    if (call == BSEND_PERSISTENT) {
        req->persistent = true;
        req->complete = true;
        *request = bmpi_request_handle(req);
        return MPI_SUCCESS;
    }
    err = bmpi_bsend_start(req);
    if (err) {
        bmpi_request_free(req);
        return bmpi_err_comm(comm, err, fn, NULL);
    }
    if (call == BSEND_NONBLOCKING) {
        *request = bmpi_request_handle(req);
        return MPI_SUCCESS;
    }
    bmpi_request_free(req);
    return MPI_SUCCESS;
}

BMPI_API(MPI_Bsend)
int PMPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    return bsend("MPI_Bsend", buf, count, datatype, dest, tag, comm, NULL, BSEND_BLOCKING);
}

BMPI_API(MPI_Bsend_c)
int PMPI_Bsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm)
{
    return bsend("MPI_Bsend_c", buf, count, datatype, dest, tag, comm, NULL, BSEND_BLOCKING);
}

BMPI_API(MPI_Ibsend)
int PMPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request *request)
{
    return bsend("MPI_Ibsend", buf, count, datatype, dest, tag, comm, request, BSEND_NONBLOCKING);
}

BMPI_API(MPI_Ibsend_c)
int PMPI_Ibsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                  MPI_Comm comm, MPI_Request *request)
{
    return bsend("MPI_Ibsend_c", buf, count, datatype, dest, tag, comm, request, BSEND_NONBLOCKING);
}

BMPI_API(MPI_Bsend_init)
int PMPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                    MPI_Request *request)
{
    return bsend("MPI_Bsend_init", buf, count, datatype, dest, tag, comm, request, BSEND_PERSISTENT);
}

BMPI_API(MPI_Bsend_init_c)
int PMPI_Bsend_init_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                      MPI_Comm comm, MPI_Request *request)
{
    return bsend("MPI_Bsend_init_c", buf, count, datatype, dest, tag, comm, request, BSEND_PERSISTENT);
}

static int attach(const char *fn, void *buffer, MPI_Count size)
{
    if (size < 0)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "negative size %lld", size);
    if (!buffer && size > 0)
        return bmpi_err_noobj(MPI_ERR_BUFFER, fn, "buffer is NULL");
    if (buffer == MPI_BUFFER_AUTOMATIC)
        return bmpi_err_noobj(MPI_ERR_UNSUPPORTED_OPERATION, fn,
                              "MPI_BUFFER_AUTOMATIC is not supported by bmpi yet");
    if (attached.buf)
        return bmpi_err_noobj(MPI_ERR_BUFFER, fn, "a buffer is already attached; detach it first");
    attached.buf = buffer;
    attached.size = (size_t)size;
    attached.blocks = NULL;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Buffer_attach)
int PMPI_Buffer_attach(void *buffer, int size)
{
    return attach("MPI_Buffer_attach", buffer, size);
}

BMPI_API(MPI_Buffer_attach_c)
int PMPI_Buffer_attach_c(void *buffer, MPI_Count size)
{
    return attach("MPI_Buffer_attach_c", buffer, size);
}

/* Detach waits until every buffered message has left the buffer. A size
 * that max_size cannot hold (the int call after MPI_Buffer_attach_c) is
 * refused before anything is detached. */
static int detach(const char *fn, void *buffer_addr, MPI_Count *size, MPI_Count max_size)
{
    if (!buffer_addr || !size)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "%s is NULL", size ? "buffer_addr" : "size");
    if (attached.size > (size_t)max_size)
        return bmpi_err_noobj(MPI_ERR_VALUE_TOO_LARGE, fn,
                              "the attached buffer has %zu bytes, more than an int holds; "
                              "detach it with MPI_Buffer_detach_c", attached.size);
    unsigned idle = 0;
    while (attached.busy) {
        if (!bmpi_progress())
            bmpi_progress_idle(&idle);
    }
    *(void **)buffer_addr = attached.buf;
    *size = (MPI_Count)attached.size;
    attached.buf = NULL;
    attached.size = 0;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Buffer_detach)
int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    MPI_Count n;
    int err = detach("MPI_Buffer_detach", buffer_addr, size ? &n : NULL, INT_MAX);
    if (!err)
        *size = (int)n;
    return err;
}

BMPI_API(MPI_Buffer_detach_c)
int PMPI_Buffer_detach_c(void *buffer_addr, MPI_Count *size)
{
    return detach("MPI_Buffer_detach_c", buffer_addr, size, LLONG_MAX);
}
