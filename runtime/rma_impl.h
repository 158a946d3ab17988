/*
 * What the RMA files (win.c, rma.c, rma_sync.c, rma_am.c) share beyond
 * runtime/win.h: one call's arguments, checked, and the functions each
 * file offers the others. Private to those files.
 */
#ifndef BMPI_RUNTIME_RMA_IMPL_H
#define BMPI_RUNTIME_RMA_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <mpi.h>

#include "runtime/datatype.h"
#include "runtime/win.h"

struct bmpi_group;
struct bmpi_op;
struct bmpi_request;

enum bmpi_rma_kind { BMPI_RMA_PUT, BMPI_RMA_GET, BMPI_RMA_ACC, BMPI_RMA_GACC, BMPI_RMA_CAS };

/* One communication call, its arguments checked. */
struct bmpi_rma_call {
    enum bmpi_rma_kind kind;
    const void *origin; /* NULL: MPI_NO_OP's ignored origin */
    size_t ocount;
    struct bmpi_datatype *odt;
    void *result; /* GET: the origin buffer; GACC, CAS: the result buffer */
    size_t rcount;
    struct bmpi_datatype *rdt;
    const void *compare; /* CAS */
    int target;
    uint64_t offset;     /* bytes from the target's base (dynamic: an address) */
    size_t tcount;
    struct bmpi_datatype *tdt;
    size_t bytes;        /* of data at the target */
    struct bmpi_op *op;  /* ACC, GACC */
    MPI_Datatype basic;  /* ACC, GACC, CAS: the element type */
    struct bmpi_request *req; /* request forms, else NULL */
};

/* Where an answer goes: a request to complete, and (GET, GACC, CAS) the
 * buffer the answered data is unpacked into. Counts its pieces in flight
 * plus one held by the issuer until it has issued them all. */
struct bmpi_rma_track {
    struct bmpi_win *win;
    int target;
    struct bmpi_request *req;
    void *buf;
    size_t count;
    struct bmpi_datatype *dt; /* retained */
    int refs;
    bool ordered;             /* PUT or ACC by active messages, a gathered GET (win.h, ordered_issued) */
    void *bounce;             /* NET: packed data, freed at the end */
    bool unpack_at_end;       /* NET get: bounce goes into buf once all pieces are in */
    struct bmpi_tl *reg_tl;   /* ACC_PULL: the origin data is registered with it ... */
    void *memh;               /* ... as memh, released at the end */
};

/* win.c */
int bmpi_win_foreach(int (*fn)(struct bmpi_win *w));
bool bmpi_win_attached(const struct bmpi_win *w, uint64_t addr, uint64_t len);

/* rma_sync.c */
/* Whether target is in the group of the open PSCW access epoch. */
bool bmpi_rma_started(const struct bmpi_win *w, int target);

/* Whether an operation on target may be issued now (request forms:
 * passive target epochs only). Inline: every Put and Get asks. */
static inline bool bmpi_rma_access_ok(const struct bmpi_win *w, int target, bool request_form)
{
    switch (w->access) {
    case BMPI_EPOCH_FENCE:
        return !request_form;
    case BMPI_EPOCH_PSCW:
        return !request_form && bmpi_rma_started(w, target);
    case BMPI_EPOCH_LOCK:
        return w->t[target].lock_held != 0;
    case BMPI_EPOCH_LOCK_ALL:
        return true;
    default:
        return false;
    }
}
bool bmpi_rma_epoch_closable(const struct bmpi_win *w);
/* Drop a group kept for PSCW (win.c frees a window's). */
void bmpi_rma_forget_group(struct bmpi_group **g, int **ranks);
/* An answer arrived for target (rma_am.c, NET completions). */
void bmpi_rma_answered(struct bmpi_win *w, int target, int status);

/* rma.c: tracking records */
struct bmpi_rma_track *bmpi_rma_track_new(struct bmpi_win *w, const struct bmpi_rma_call *c);
/* One piece of t is answered (data: unpack len bytes at offset first). */
void bmpi_rma_track_piece(struct bmpi_rma_track *t, uint64_t offset, const void *data, size_t len,
                          int status);
void bmpi_rma_track_drop(struct bmpi_rma_track *t);

/* Wait until every operation issued to target has been answered. */
void bmpi_rma_wait_answered(struct bmpi_win *w, int target);
/* ... to every target: answers the epochs' ends did not wait for
 * (rma_sync.c) must not come to a window that is gone. */
void bmpi_rma_wait_all_answered(struct bmpi_win *w);

/* rma_amo.c */
/* Whether the transport's atomics may carry c; if so *amo describes it. */
bool bmpi_rma_amo_fits(const struct bmpi_win *w, const struct bmpi_rma_call *c, struct bmpi_tl_amo *amo);
int bmpi_rma_amo_issue(struct bmpi_win *w, const struct bmpi_rma_call *c, const struct bmpi_tl_amo *amo);
/* An accumulate to target goes via via next: keep the accumulates'
 * order across paths (waits where needed). */
void bmpi_rma_acc_order(struct bmpi_win *w, int target, enum bmpi_rma_acc_via via);

/* rma_batch.c */
/* BMPI_RMA_BATCH: the largest Put gathered (0: none; Accumulates and
 * Gets take a multiple of it, rma_batch.c). */
size_t bmpi_rma_batch_limit(void);
/* Whether c may be gathered with others to its target. */
bool bmpi_rma_batch_fits(const struct bmpi_win *w, const struct bmpi_rma_call *c);
/* Gather c (*taken), or leave it to be sent alone (a record too large
 * for one message); an error of sending the earlier ones. */
int bmpi_rma_batch_add(struct bmpi_win *w, const struct bmpi_rma_call *c, bool *taken);
/* Send what is gathered for target (nothing: BMPI_OK), asking for an
 * answer that counts it and every batch sent ahead of it. On error the
 * operations count as answered with it. */
int bmpi_rma_batch_send(struct bmpi_win *w, int target);
/* The same without asking for an answer (the buffer is full, another
 * operation must follow the gathered ones): the next bmpi_rma_batch_send
 * or the end of the epoch counts them. */
int bmpi_rma_batch_send_ahead(struct bmpi_win *w, int target);
/* The same at the end of an active target epoch: answered only on error
 * (counted answered now), with complete carrying the PSCW complete. */
int bmpi_rma_batch_end_epoch(struct bmpi_win *w, int target, bool complete);
/* Gets gathered for t, sent or not, whose data has not come. */
uint64_t bmpi_rma_batch_gets_unanswered(const struct bmpi_win_target *t);
/* Whether operations are gathered for t. */
bool bmpi_rma_batch_pending(const struct bmpi_win_target *t);
void bmpi_rma_batch_free(struct bmpi_win_target *t);
struct bmpi_rma_batch_hdr;
struct bmpi_rma_batch_answer;
void bmpi_rma_batch_serve(int peer, const struct bmpi_rma_batch_hdr *h, const void *payload, size_t len);
/* A BATCH_ACK, and the data of the Gets it answers. */
void bmpi_rma_batch_answered(const struct bmpi_rma_batch_answer *a, const void *data, size_t len);

/* rma_pull.c */
/* BMPI_RMA_ACC_PULL: the smallest Accumulate the target pulls (0: none). */
size_t bmpi_rma_pull_limit(void);
/* Whether the target of c should pull its data. */
bool bmpi_rma_pull_fits(const struct bmpi_win *w, const struct bmpi_rma_call *c);
int bmpi_rma_pull_issue(struct bmpi_win *w, const struct bmpi_rma_call *c);
struct bmpi_rma_op_hdr;
void bmpi_rma_pull_serve(int peer, const struct bmpi_rma_op_hdr *h, const void *payload, size_t len);
/* A window goes: free the staging buffers it kept. */
void bmpi_rma_pull_forget(struct bmpi_win *w);

/* rma_am.c */
/* An active message to peer, queued in order when the transport cannot
 * take it now. */
int bmpi_rma_am_send(int peer, uint8_t am_id, const void *hdr, size_t hdr_len, const struct iovec *iov,
                     int iovcnt);
struct bmpi_rma_seg;
/* Where segment s lies in this process, or NULL when it is outside the
 * window (or outside what a dynamic window has attached). */
char *bmpi_rma_am_segment(const struct bmpi_win *w, const struct bmpi_rma_seg *s);
int bmpi_rma_am_issue(struct bmpi_win *w, const struct bmpi_rma_call *c);
/* Whether c's target side is strided enough to go as runs: its first
 * runs hold four blocks or more on average (a column, a vector). */
bool bmpi_rma_runs_pay(const struct bmpi_rma_call *c);
struct bmpi_rma_run;
struct bmpi_dt_run;
/* Appends r's blocks to runs[0..*m): the last run continued when they
 * extend its stride, else a new run (the caller leaves room for one). */
void bmpi_rma_run_add(struct bmpi_rma_run *runs, uint32_t *m, const struct bmpi_dt_run *r);
/* Target side. Where run r's first block lies in w, a window of one
 * region, or NULL when one of its blocks falls outside it (or w is
 * dynamic: its runs are expanded into segments). */
char *bmpi_rma_run_at(const struct bmpi_win *w, const struct bmpi_rma_run *r);
/* Whether every one of runs[0..n) lies in w (bmpi_rma_run_at) and their
 * counts add up to nseg blocks; *bytes what they cover. */
bool bmpi_rma_runs_in_window(const struct bmpi_win *w, const struct bmpi_rma_run *runs, uint32_t n, uint64_t nseg,
                             uint64_t *bytes);
/* Run r, checked by bmpi_rma_run_at, served in place: PUT copies data
 * into it, GET copies it into out, ACC and GACC apply data (NULL: NO_OP)
 * with op on basic elements, the old values into out unless NULL. */
void bmpi_rma_serve_run(struct bmpi_win *w, uint8_t am_id, MPI_Op op, MPI_Datatype basic,
                        const struct bmpi_rma_run *r, const char *data, char *out);
/* rma.c: the first contiguous pieces of c's target side (max of them,
 * max_bytes in all at most) into iov; returns how many, *bytes their
 * total. What decides how a call of a non-contiguous type goes. */
int bmpi_rma_target_pieces(const struct bmpi_rma_call *c, struct iovec *iov, int max, size_t max_bytes,
                           size_t *bytes);
/* One message of c to its target: the segments iov[0..n) at offset off
 * of c's data, then data (for CAS the compare operand first, of the same
 * length); counted as issued to the target, answered through track. */
int bmpi_rma_am_send_piece(struct bmpi_win *w, const struct bmpi_rma_call *c, struct bmpi_rma_track *track,
                           uint8_t am_id, const struct iovec *iov, int n, uint64_t off, struct iovec data);
/* Target side. The window a message names, its nseg segments (at the
 * start of payload) checked and located in at[], *bytes their total;
 * NULL after answering the origin with the error. */
struct bmpi_win *bmpi_rma_am_target(int peer, const struct bmpi_rma_op_hdr *h, const void *payload, size_t len,
                                    char **at, size_t *bytes);
/* Applies an accumulate's data (NULL: MPI_NO_OP) to segs[0..nseg) of w,
 * located at at[] (NULL: checked segments, located here), the old values
 * into out unless NULL, each element atomically with respect to every
 * other update (up to 256 segments under one close of w's gate). */
void bmpi_rma_apply_segments(struct bmpi_win *w, MPI_Op op, MPI_Datatype basic, const struct bmpi_rma_seg *segs,
                             char *const *at, uint32_t nseg, const char *data, char *out);
/* bmpi_rma_apply_segments() of a message's segments, by its header. */
void bmpi_rma_am_apply(struct bmpi_win *w, const struct bmpi_rma_op_hdr *h, const struct bmpi_rma_seg *segs,
                       char *const *at, const char *data, char *out);
/* Answers one message of an operation (status, and data for RESP). */
void bmpi_rma_am_answer(int peer, const struct bmpi_rma_op_hdr *h, int me, int status, const void *data,
                        size_t len);
int bmpi_rma_am_ctl(struct bmpi_win *w, int target, uint8_t am_id, int lock_type);
/* A window goes: drop lock requests still waiting for it. */
void bmpi_rma_am_forget(struct bmpi_win *w);
/* Lock word operations on a control block (shared memory). */
bool bmpi_rma_lock_try(struct bmpi_win_ctl *ctl, int lock_type);
void bmpi_rma_lock_release(struct bmpi_win_ctl *ctl, int lock_type);

#endif
