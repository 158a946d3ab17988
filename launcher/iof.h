/* Output forwarding: each rank's stdout and stderr arrive through pipes and
 * leave bmpirun's stdout and stderr line by line, so that a line of one rank
 * is never cut by a line of another; stdin of bmpirun goes to rank 0. */
#ifndef BMPI_LAUNCHER_IOF_H
#define BMPI_LAUNCHER_IOF_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>

enum { BMPI_STDOUT = 0, BMPI_STDERR = 1, BMPI_NSTREAMS = 2 };

/* A line longer than this is passed on in pieces. */
#define BMPI_IOF_MAX_LINE (1024 * 1024)

struct bmpi_iof_stream {
    int fd; /* read end of the rank's pipe; -1 once closed */
    int ns; /* the rank's namespace: 0 the job's, k the k-th spawned (tag "[k.rank]") */
    int owner; /* the rank's index in the job's rank table */
    char *buf;
    size_t len, cap;
};

struct bmpi_iof {
    bool tag;
    const char *const *tag_host; /* per stream owner: its host, in the tag; NULL: the rank only */
    /* A daemon passes its ranks' output on as it comes (launcher/daemon.c)
     * instead of writing lines; NULL on the head. */
    void (*forward)(void *ctx, int owner, int which, const char *buf, size_t len);
    void *forward_ctx;
    bool stdin_remote; /* rank 0's stdin comes from bmpi_iof_stdin_feed */
    bool sink_gone[BMPI_NSTREAMS]; /* our stdout/stderr reader went away */
    char *scratch;                 /* tagged lines are assembled here */
    size_t scratch_cap;
    /* stdin -> rank 0 */
    int in_src; /* 0, or -1 when done */
    int in_dst; /* write end of rank 0's stdin pipe, or -1 */
    char *in_buf;
    size_t in_len, in_off;
};

void bmpi_iof_init(struct bmpi_iof *iof, bool tag, const char *const *tag_host);
void bmpi_iof_fini(struct bmpi_iof *iof);

void bmpi_iof_stream_init(struct bmpi_iof_stream *s);
/* Read what is available and forward complete lines; returns false at EOF
 * or error, when the stream should be closed. */
bool bmpi_iof_stream_read(struct bmpi_iof *iof, struct bmpi_iof_stream *s, int rank, int which);
/* Output of a rank on another host, as its daemon read it. */
void bmpi_iof_stream_feed(struct bmpi_iof *iof, struct bmpi_iof_stream *s, int rank, int which, const char *buf,
                          size_t len);
/* The rank is gone: forward everything still in the pipe, the partial last
 * line included, then close it. */
void bmpi_iof_stream_close(struct bmpi_iof *iof, struct bmpi_iof_stream *s, int rank, int which);

/* stdin forwarding: dst is the write end of rank 0's stdin pipe. */
void bmpi_iof_stdin_start(struct bmpi_iof *iof, int dst);
void bmpi_iof_stdin_pollfds(struct bmpi_iof *iof, struct pollfd *src, struct pollfd *dst);
void bmpi_iof_stdin_handle(struct bmpi_iof *iof, const struct pollfd *src, const struct pollfd *dst);
void bmpi_iof_stdin_stop(struct bmpi_iof *iof);
/* stdin_remote: the next piece of rank 0's input, from the head; the
 * previous one must have been written (bmpi_iof_stdin_idle). */
void bmpi_iof_stdin_feed(struct bmpi_iof *iof, const char *buf, size_t len);
bool bmpi_iof_stdin_idle(const struct bmpi_iof *iof);

/* Write a whole message to our own stderr (used for bmpirun's messages, so
 * they never land inside a forwarded line). */
void bmpi_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "bmpirun" unless said otherwise (a daemon names its host). */
void bmpi_say_set_prefix(const char *who);

#endif
