/*
 * The runtime's internal point-to-point API: what MPI_Isend/MPI_Irecv and
 * the collectives are built on. Arguments are already validated.
 */
#ifndef BMPI_RUNTIME_P2P_H
#define BMPI_RUNTIME_P2P_H

#include <stddef.h>
#include <mpi.h>

#include "runtime/comm.h"
#include "runtime/request.h"

/* Start a send of (buf, count, type) to comm rank dest. context_id is
 * comm->context_id for user traffic, comm->context_id + 1 for collectives. */
int bmpi_isend(const void *buf, size_t count, MPI_Datatype type, int dest, int tag,
               struct bmpi_comm *comm, uint32_t context_id, enum bmpi_send_mode mode,
               struct bmpi_request **out);
int bmpi_irecv(void *buf, size_t count, MPI_Datatype type, int source, int tag,
               struct bmpi_comm *comm, uint32_t context_id, struct bmpi_request **out);
/* bmpi_irecv with a choice of who copies a large contiguous message
 * where the transport's RMA is a CPU copy (p2p.c, rget_start). bmpi_irecv
 * shares it: the sender writes half while this rank reads the rest
 * (BMPI_RECV_COPY_SHARED). A rank that exchanges large messages with many
 * peers at once through a buffer it reuses (collective I/O's aggregator)
 * should leave all the copying to the peers: its receives ask the sender
 * to write everything (BMPI_RECV_COPY_SENDER), and the peers' receives of
 * its messages read everything (BMPI_RECV_COPY_RECEIVER). The copies then
 * run on the peers' cores instead of one after another on its own, and
 * only the pages of its reused buffer are mapped into the peers, where it
 * would map every peer's buffer afresh (docs/performance.md, "Fresh
 * memory"). */
int bmpi_irecv_copied_by(void *buf, size_t count, MPI_Datatype type, int source, int tag, struct bmpi_comm *comm,
                         uint32_t context_id, enum bmpi_recv_copy who, struct bmpi_request **out);

/* A send or receive request of (buf, count, type) with peer and tag,
 * holding references on the datatype and the communicator; not started. */
struct bmpi_request *bmpi_p2p_request_new(enum bmpi_req_kind kind, void *buf, size_t count,
                                          MPI_Datatype type, int peer, int tag, struct bmpi_comm *comm,
                                          uint32_t context_id);

/* (Re)start a prepared send or receive request: persistent requests and
 * the above share it. */
int bmpi_send_start(struct bmpi_request *req);
int bmpi_recv_start(struct bmpi_request *req);

/* Receive-side cancel: succeeds if the receive has not matched yet. */
int bmpi_recv_cancel(struct bmpi_request *req);

/* Probe the unexpected queue (the caller progresses); *found when a message
 * matches, with its status. take: remove it into *msg (MPI_Mprobe). */
int bmpi_iprobe(int source, int tag, struct bmpi_comm *comm, int *found, MPI_Status *status,
                struct bmpi_request **msg);
/* Receive a message taken by bmpi_iprobe(take) into (buf, count, type). */
int bmpi_mrecv_start(struct bmpi_request *msg, void *buf, size_t count, MPI_Datatype type);

/* Progress the runtime's own queues (pending sends, staged receives). */
int bmpi_p2p_progress(void);
/* Flush everything this rank still has to send (MPI_Finalize). */
int bmpi_p2p_drain(void);

/* Start a prepared (persistent) send or receive, whatever its mode. */
int bmpi_request_start(struct bmpi_request *req);
/* Buffered send: copy into the attached buffer, then send from there. */
int bmpi_bsend_start(struct bmpi_request *req);

/* Argument checks shared by the entry points; each reports through the
 * error handler and returns the code to return. */
int bmpi_check_comm(MPI_Comm comm, const char *fn, struct bmpi_comm **c);
/* The same, refusing intercommunicators (runtime/intercomm.c) for the calls
 * MPI defines on intracommunicators only: topologies, neighbourhood
 * collectives, MPI_Comm_create_group. */
int bmpi_check_intracomm(MPI_Comm comm, const char *fn, struct bmpi_comm **c);
int bmpi_check_buffer(MPI_Comm comm, const char *fn, const void *buf, MPI_Count count,
                      MPI_Datatype type);
/* The two halves of it, for a call with several buffers of one type: the
 * type is valid and committed (into *dt); a buffer of count elements of it. */
int bmpi_check_type(MPI_Comm comm, const char *fn, MPI_Datatype type, struct bmpi_datatype **dt);
int bmpi_check_buffer_of(MPI_Comm comm, const char *fn, const void *buf, MPI_Count count,
                         const struct bmpi_datatype *dt);
/* Report the error in a completed operation's status. */
int bmpi_report_status(struct bmpi_comm *c, const char *fn, const MPI_Status *st);

/* A blocking standard send of contiguous data small enough for one eager
 * active message, handed to the transport at once with no request.
 * BMPI_TL_EAGAIN: not taken (too large, non-contiguous, MPI_PROC_NULL,
 * earlier messages still queued, transport full); use the general path. */
int bmpi_send_immediate(const void *buf, size_t count, MPI_Datatype type, int dest, int tag,
                        struct bmpi_comm *comm, uint32_t context_id);

/* Blocking conveniences for collectives and tests. */
int bmpi_send(const void *buf, size_t count, MPI_Datatype type, int dest, int tag,
              struct bmpi_comm *comm, uint32_t context_id);
int bmpi_recv(void *buf, size_t count, MPI_Datatype type, int source, int tag,
              struct bmpi_comm *comm, uint32_t context_id, MPI_Status *status);

#endif
