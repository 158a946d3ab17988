/* The messages of the launch tree (launcher/tree.h carries them): what the
 * head and the daemons of a job across hosts tell each other. Payloads are
 * packed host-order structs followed by bytes: every host of a job runs
 * the same bmpi build (the bootstrap checks the version), on the same
 * architecture. */
#ifndef BMPI_LAUNCHER_WIRE_H
#define BMPI_LAUNCHER_WIRE_H

#include <stdint.h>

enum bmpi_wire_type {
    /* daemon -> head */
    BMPI_WIRE_JOINED = 1, /* text: "ADDR:PORT" the daemon listens at, or "" */
    BMPI_WIRE_STARTED,    /* bmpi_wire_rank_pid[]: the ranks it started */
    BMPI_WIRE_FAILED,     /* text: why the daemon cannot run its ranks */
    BMPI_WIRE_CONNECTED,  /* int32 rank: PMIx_Init */
    BMPI_WIRE_FINALIZED,  /* int32 rank: PMIx_Finalize */
    BMPI_WIRE_EXITED,     /* bmpi_wire_exited */
    BMPI_WIRE_ABORT,      /* bmpi_wire_abort + text */
    BMPI_WIRE_OUTPUT,     /* bmpi_wire_output + bytes */
    BMPI_WIRE_STDIN_ACK,  /* empty: the last stdin piece reached rank 0 */
    BMPI_WIRE_LOST,       /* int32 vertex: a daemon below broke away */
    /* either way, vertex to vertex (launcher/fence.c) */
    BMPI_WIRE_FENCE,       /* child -> parent: uint32 siglen, sig, pieces */
    BMPI_WIRE_FENCE_DONE,  /* head -> all: uint32 siglen, sig, joined data */
    BMPI_WIRE_DMODEX_REQ,  /* bmpi_wire_dmodex_req + nspace */
    BMPI_WIRE_DMODEX_RESP, /* bmpi_wire_dmodex_resp + data */
    /* spawning across hosts (launcher/dpm.c) */
    BMPI_WIRE_SPAWN_REQ,  /* daemon -> head: uint64 id, the request */
    BMPI_WIRE_SPAWN_NS,   /* head -> all: the namespace, its apps, each process's node */
    BMPI_WIRE_SPAWN_ACK,  /* daemon -> head: int32 namespace, int32 status */
    BMPI_WIRE_SPAWN_DONE, /* head -> asking daemon: uint64 id, int32 status, nspace */
    /* head -> daemons */
    BMPI_WIRE_STDIN,    /* bytes for rank 0; empty: end of input */
    BMPI_WIRE_SIGNAL,   /* int32 signal for every rank */
    BMPI_WIRE_SHUTDOWN, /* the job is over: clean up and exit */
};

struct bmpi_wire_rank_pid {
    int32_t rank;
    int32_t pid;
};

struct bmpi_wire_exited {
    int32_t rank;
    int32_t wstatus;
    uint8_t connected, finalized;
};

struct bmpi_wire_abort {
    int32_t rank;
    int32_t status;
};

struct bmpi_wire_output {
    int32_t rank;
    int32_t stream;
};

struct bmpi_wire_dmodex_req {
    uint64_t id;
    int32_t rank;
};

struct bmpi_wire_dmodex_resp {
    uint64_t id;
    int32_t status;
};

#endif
