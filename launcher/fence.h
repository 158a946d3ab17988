/* Fences and direct modex of a job across hosts, along the launch tree.
 *
 * Each host's PMIx server hands bmpirun its part of a fence (fence_nb
 * upcall); a vertex waits for its own part and for each child whose
 * subtree takes part, sends the parts together to its parent, and the head
 * sends the joined data (each server's part, in vertex order) to every
 * vertex, which gives it back to its server. Fences are told apart by
 * their procs (the signature) and, for equal signatures, by order: every
 * server sees a job's fences in the same order.
 *
 * A direct modex (a rank's data wanted before a fence collected it) goes
 * to the vertex of that rank, whose server answers it.
 *
 * Runs in the main thread; the upcalls reach it through the job's event
 * pipe. Knows no PMIx: completions are callbacks (pmix_server.c). */
#ifndef BMPI_LAUNCHER_FENCE_H
#define BMPI_LAUNCHER_FENCE_H

#include <stddef.h>
#include <stdint.h>

struct bmpi_job;
struct bmpi_tree_hdr;

/* status 0: success; otherwise a PMIx status the callback passes on. */
typedef void (*bmpi_fence_done_fn)(void *arg, int status, const char *data, size_t len);

/* A fence's local part, from the upcall (freed by fence.c). sig names its
 * procs: "nspace:rank" or "nspace:*", ',' between them. */
struct bmpi_fence_req {
    char *sig;
    char *data;
    size_t len;
    bmpi_fence_done_fn done;
    void *arg;
};

/* The library wants rank's data of nspace (freed by fence.c). */
struct bmpi_dmodex_req {
    char nspace[256];
    int rank;
    bmpi_fence_done_fn done;
    void *arg;
};

/* This host's server answered another vertex's request (freed by fence.c). */
struct bmpi_dmodex_data {
    uint64_t id;
    int requester;
    int status;
    char *data;
    size_t len;
};

int bmpi_fences_init(struct bmpi_job *job);
/* Fences still open fail (the job is ending). */
void bmpi_fences_fini(struct bmpi_job *job);

void bmpi_fence_local(struct bmpi_job *job, struct bmpi_fence_req *req);
void bmpi_fence_dmodex_ask(struct bmpi_job *job, struct bmpi_dmodex_req *req);
void bmpi_fence_dmodex_answer(struct bmpi_job *job, struct bmpi_dmodex_data *d);
/* A fence or dmodex message from the tree; 1 if it was one. */
int bmpi_fence_deliver(struct bmpi_job *job, const struct bmpi_tree_hdr *h, const void *payload);

#endif
