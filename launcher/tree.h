/* The launch tree of a job across hosts: the head bmpirun is vertex 0, the
 * daemon of each other host a vertex 1..n-1; vertex v > 0 hangs under
 * (v - 1) / fanout. Links are TCP connections from a child to its parent,
 * each opened with the job's secret (a connection without it is refused
 * and logged). Messages are routed along the tree: up to the parent, down
 * to the child whose subtree holds the destination, or to every vertex
 * below (BMPI_TREE_ALL, sent by the head).
 *
 * Pure transport: frames, links, routing, authentication. What a message
 * means is the caller's (launcher/remote.c on the head, launcher/daemon.c
 * on a daemon); this file knows no job. Single-threaded: the main loop of
 * the owning process polls the fds and calls bmpi_tree_handle. */
#ifndef BMPI_LAUNCHER_TREE_H
#define BMPI_LAUNCHER_TREE_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BMPI_TREE_SECRET_LEN 32
#define BMPI_TREE_ALL (-1)  /* destination: every vertex below the sender */
#define BMPI_TREE_DEFAULT_FANOUT 32
/* The largest frame a link accepts once authenticated (an output chunk, a
 * fence's blobs of a whole subtree), and before (a HELLO). */
#define BMPI_TREE_MAX_FRAME (256u << 20)
#define BMPI_TREE_MAX_HELLO 256u

struct bmpi_tree_hdr {
    uint32_t len;  /* payload bytes after the header */
    uint16_t type; /* the caller's message type; 0 is HELLO */
    uint16_t flags;
    int32_t src;
    int32_t dst; /* a vertex or BMPI_TREE_ALL */
};

struct bmpi_tree_link {
    int fd;     /* -1: closed */
    int vertex; /* the vertex at the other end; -1 before HELLO */
    char peer[80]; /* "192.0.2.1:40312" for messages */
    long since_ms;  /* accepted at (CLOCK_MONOTONIC): HELLO is due soon */
    char *in;
    size_t in_len, in_cap;
    char *out;
    size_t out_len, out_off, out_cap;
};

/* What a tree tells its owner. */
struct bmpi_tree_events {
    void *ctx;
    /* A message for this vertex (also each one sent to BMPI_TREE_ALL). */
    void (*deliver)(void *ctx, const struct bmpi_tree_hdr *h, const void *payload);
    /* Child vertex joined (authenticated) from peer. */
    void (*joined)(void *ctx, int vertex, const char *peer);
    /* The link to vertex (the parent, or a child) broke: its whole
     * subtree is unreachable now. */
    void (*lost)(void *ctx, int vertex);
};

struct bmpi_tree {
    int self;
    int nvertices;
    int fanout;
    uint8_t secret[BMPI_TREE_SECRET_LEN];
    int listen_fd;              /* -1 at a leaf */
    char listen_addr[80];       /* "ADDR:PORT" others reach it at */
    struct bmpi_tree_link up;   /* to the parent; fd -1 at the head */
    struct bmpi_tree_link *down; /* children and connections still in HELLO */
    int ndown;
    struct bmpi_tree_events ev;
};

int bmpi_tree_parent(const struct bmpi_tree *t, int v);
/* Vertices with a child: they listen. */
bool bmpi_tree_has_children(const struct bmpi_tree *t, int v);
/* Is v in the subtree rooted at root (root included)? */
bool bmpi_tree_in_subtree(const struct bmpi_tree *t, int root, int v);

/* A tree at vertex self of nvertices; no link yet. */
void bmpi_tree_init(struct bmpi_tree *t, int self, int nvertices, int fanout,
                    const uint8_t secret[BMPI_TREE_SECRET_LEN], const struct bmpi_tree_events *ev);
/* Listen on every address, an ephemeral port (the head, and daemons with
 * children). 0 or -1 after saying why. */
int bmpi_tree_listen(struct bmpi_tree *t);
/* Connect to the parent, trying each "ADDR:PORT" of the blank-separated
 * list for up to timeout_ms each, and present the secret. 0, or -1 with
 * why filled. */
int bmpi_tree_connect(struct bmpi_tree *t, const char *addrs, int timeout_ms, char *why, size_t why_len);
/* The local address this vertex reached its parent from (what its own
 * children can reach it at, with the listen port). */
void bmpi_tree_local_addr(const struct bmpi_tree *t, char *buf, size_t len);

/* Queue a message; routed now as far as this vertex goes. 0, or -1 when
 * the next hop is gone. */
int bmpi_tree_send(struct bmpi_tree *t, int dst, uint16_t type, const void *payload, size_t len);
int bmpi_tree_sendv(struct bmpi_tree *t, int dst, uint16_t type, const void *a, size_t alen, const void *b,
                    size_t blen);

/* The fds to poll: at most bmpi_tree_npollfds. Returns how many were set. */
size_t bmpi_tree_npollfds(const struct bmpi_tree *t);
size_t bmpi_tree_pollfds(const struct bmpi_tree *t, struct pollfd *pfd);
/* Handle what poll found on those fds (same order). */
void bmpi_tree_handle(struct bmpi_tree *t, const struct pollfd *pfd, size_t n);
/* Milliseconds until a connection that has not said HELLO is due to be
 * dropped (bmpi_tree_handle drops it), -1 for none: the owner's poll
 * timeout, so that an idle job drops strangers too. */
int bmpi_tree_timeout_ms(const struct bmpi_tree *t);
/* Write out what is queued, waiting at most timeout_ms (before exit). */
void bmpi_tree_flush(struct bmpi_tree *t, int timeout_ms);
bool bmpi_tree_up_alive(const struct bmpi_tree *t);
void bmpi_tree_close(struct bmpi_tree *t);

/* Hex for the bootstrap text; 0 or -1 on a malformed string. */
void bmpi_tree_secret_hex(const uint8_t secret[BMPI_TREE_SECRET_LEN], char hex[2 * BMPI_TREE_SECRET_LEN + 1]);
int bmpi_tree_secret_parse(const char *hex, uint8_t secret[BMPI_TREE_SECRET_LEN]);

#endif
