/* Output forwarding. Every rank writes into its own pair of pipes; bmpirun
 * reads them as poll() says and writes only whole lines to its own stdout
 * and stderr, one write sequence per batch of lines, from one thread. That
 * is what keeps lines of different ranks from mixing. A line that outgrows
 * BMPI_IOF_MAX_LINE is passed on in pieces (each piece whole, and tagged
 * with --tag-output).
 *
 * A rank's partial last line is passed on when the rank is reaped: a rank
 * that has exited has all its output in the pipe already, so reading until
 * the pipe is empty loses nothing, even if a grandchild keeps the write end
 * open. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher/iof.h"

#define IOF_READ_CHUNK 65536
#define IOF_MIN_BUF 16384
/* Reading a dead rank's pipe stops after this much (a grandchild may still
 * be writing into it). */
#define IOF_DRAIN_LIMIT (16 * 1024 * 1024)

/* Write all of buf, waiting when fd is non-blocking and full. -1 when the
 * reader is gone or fd broke. */
static int write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n > 0) {
            buf += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct pollfd p = {.fd = fd, .events = POLLOUT};
            (void)poll(&p, 1, 1000);
            continue;
        }
        return -1;
    }
    return 0;
}

/* Who speaks in bmpi_say's lines: "bmpirun", or a daemon naming its host.
 * Process-wide by nature, like a program's name; set once at start. */
static char say_prefix[300] = "bmpirun: ";

void bmpi_say_set_prefix(const char *who)
{
    snprintf(say_prefix, sizeof(say_prefix), "%s: ", who);
}

void bmpi_say(const char *fmt, ...)
{
    char buf[4096];
    size_t off = (size_t)snprintf(buf, sizeof(buf), "%s", say_prefix);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + off, sizeof(buf) - off - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t len = off + (size_t)n;
    if (len > sizeof(buf) - 2)
        len = sizeof(buf) - 2;
    while (len > off && buf[len - 1] == '\n')
        len--;
    buf[len++] = '\n';
    (void)write_all(STDERR_FILENO, buf, len);
}

void bmpi_iof_init(struct bmpi_iof *iof, bool tag, const char *const *tag_host)
{
    *iof = (struct bmpi_iof){.tag = tag, .tag_host = tag_host, .in_src = -1, .in_dst = -1};
}

void bmpi_iof_fini(struct bmpi_iof *iof)
{
    bmpi_iof_stdin_stop(iof);
    free(iof->scratch);
    free(iof->in_buf);
    iof->scratch = NULL;
    iof->in_buf = NULL;
}

void bmpi_iof_stream_init(struct bmpi_iof_stream *s)
{
    *s = (struct bmpi_iof_stream){.fd = -1};
}

static void sink(struct bmpi_iof *iof, int which, const char *buf, size_t len)
{
    if (iof->sink_gone[which] || len == 0)
        return;
    int fd = which == BMPI_STDOUT ? STDOUT_FILENO : STDERR_FILENO;
    if (write_all(fd, buf, len) != 0)
        iof->sink_gone[which] = true; /* e.g. `bmpirun ... | head`: drop the rest */
}

/* Pass on the first len bytes of s->buf; every line gets the rank's tag
 * and ends in '\n' when tagging. */
static void emit(struct bmpi_iof *iof, struct bmpi_iof_stream *s, int rank, int which, size_t len)
{
    if (!iof->tag) {
        sink(iof, which, s->buf, len);
        return;
    }
    char tag[HOST_NAME_MAX + 32];
    char who[32];
    if (s->ns)
        snprintf(who, sizeof(who), "%d.%d", s->ns, rank);
    else
        snprintf(who, sizeof(who), "%d", rank);
    /* spawned processes run on this host, as the job's rank 0 (launcher/dpm.c) */
    int taglen = iof->tag_host ? snprintf(tag, sizeof(tag), "[%s@%s] ", who, iof->tag_host[s->owner])
                               : snprintf(tag, sizeof(tag), "[%s] ", who);
    size_t lines = 1;
    for (const char *p = s->buf; (p = memchr(p, '\n', (size_t)(s->buf + len - p))) != NULL; p++)
        lines++;
    size_t need = len + lines * ((size_t)taglen + 1);
    if (need > iof->scratch_cap) {
        char *grown = realloc(iof->scratch, need);
        if (grown == NULL) {
            sink(iof, which, s->buf, len); /* untagged beats lost */
            return;
        }
        iof->scratch = grown;
        iof->scratch_cap = need;
    }
    char *out = iof->scratch;
    size_t o = 0, i = 0;
    while (i < len) {
        const char *nl = memchr(s->buf + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - s->buf) : len;
        memcpy(out + o, tag, (size_t)taglen);
        o += (size_t)taglen;
        memcpy(out + o, s->buf + i, end - i);
        o += end - i;
        out[o++] = '\n';
        i = end + 1;
    }
    sink(iof, which, out, o);
}

/* Forward the complete lines in the buffer (all of it when final, or when
 * one line has grown past the limit) and keep the rest. */
static void flush_lines(struct bmpi_iof *iof, struct bmpi_iof_stream *s, int rank, int which, bool final)
{
    if (s->len == 0)
        return;
    size_t upto;
    if (final) {
        upto = s->len;
    } else {
        const char *nl = memrchr(s->buf, '\n', s->len);
        upto = nl ? (size_t)(nl - s->buf) + 1 : 0;
        if (upto == 0 && s->len >= BMPI_IOF_MAX_LINE)
            upto = s->len;
    }
    if (upto == 0)
        return;
    emit(iof, s, rank, which, upto);
    memmove(s->buf, s->buf + upto, s->len - upto);
    s->len -= upto;
}

/* 1 data read, 0 EOF, -1 nothing now (EAGAIN), -2 error. */
static int read_some(struct bmpi_iof *iof, struct bmpi_iof_stream *s, int rank, int which)
{
    if (s->cap - s->len < IOF_READ_CHUNK && s->cap < BMPI_IOF_MAX_LINE + IOF_READ_CHUNK) {
        size_t cap = s->cap ? s->cap * 2 : IOF_MIN_BUF;
        while (cap - s->len < IOF_READ_CHUNK && cap < BMPI_IOF_MAX_LINE + IOF_READ_CHUNK)
            cap *= 2;
        char *grown = realloc(s->buf, cap);
        if (grown != NULL) {
            s->buf = grown;
            s->cap = cap;
        }
    }
    if (s->cap == s->len) {
        flush_lines(iof, s, rank, which, true);
        if (s->cap == 0)
            return -2; /* out of memory: stop reading this stream */
    }
    ssize_t n = read(s->fd, s->buf + s->len, s->cap - s->len);
    if (n > 0 && iof->forward != NULL) {
        iof->forward(iof->forward_ctx, s->owner, which, s->buf + s->len, (size_t)n);
        return 1;
    }
    if (n > 0) {
        s->len += (size_t)n;
        flush_lines(iof, s, rank, which, false);
        return 1;
    }
    if (n == 0)
        return 0;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
        return -1;
    return -2;
}

bool bmpi_iof_stream_read(struct bmpi_iof *iof, struct bmpi_iof_stream *s, int rank, int which)
{
    int rc = read_some(iof, s, rank, which);
    return rc == 1 || rc == -1;
}

void bmpi_iof_stream_feed(struct bmpi_iof *iof, struct bmpi_iof_stream *s, int rank, int which, const char *buf,
                          size_t len)
{
    while (len > 0) {
        if (s->len == s->cap) {
            size_t cap = s->cap ? s->cap * 2 : IOF_MIN_BUF;
            char *grown = s->cap < BMPI_IOF_MAX_LINE + IOF_READ_CHUNK ? realloc(s->buf, cap) : NULL;
            if (grown == NULL) {
                flush_lines(iof, s, rank, which, true);
                if (s->cap == 0)
                    return;
            } else {
                s->buf = grown;
                s->cap = cap;
            }
        }
        size_t n = s->cap - s->len < len ? s->cap - s->len : len;
        memcpy(s->buf + s->len, buf, n);
        s->len += n;
        buf += n;
        len -= n;
        flush_lines(iof, s, rank, which, false);
    }
}

void bmpi_iof_stream_close(struct bmpi_iof *iof, struct bmpi_iof_stream *s, int rank, int which)
{
    if (s->fd >= 0) {
        size_t drained = 0;
        int rc;
        while ((rc = read_some(iof, s, rank, which)) == 1 && drained < IOF_DRAIN_LIMIT)
            drained += IOF_READ_CHUNK;
        close(s->fd);
        s->fd = -1;
    }
    flush_lines(iof, s, rank, which, true);
    free(s->buf);
    s->buf = NULL;
    s->len = s->cap = 0;
}

/* ---- stdin -> rank 0 ---------------------------------------------------- */

static void stdin_push(struct bmpi_iof *iof);

void bmpi_iof_stdin_start(struct bmpi_iof *iof, int dst)
{
    iof->in_dst = dst;
    if (iof->stdin_remote)
        return; /* bmpi_iof_stdin_feed brings its input */
    iof->in_src = fcntl(STDIN_FILENO, F_GETFL) != -1 ? STDIN_FILENO : -1;
    iof->in_buf = malloc(IOF_READ_CHUNK);
    if (iof->in_src < 0 || iof->in_buf == NULL)
        bmpi_iof_stdin_stop(iof); /* rank 0 reads EOF */
}

void bmpi_iof_stdin_stop(struct bmpi_iof *iof)
{
    if (iof->in_dst >= 0)
        close(iof->in_dst);
    iof->in_dst = -1;
    iof->in_src = -1;
    iof->in_len = iof->in_off = 0;
}

void bmpi_iof_stdin_feed(struct bmpi_iof *iof, const char *buf, size_t len)
{
    if (iof->in_dst < 0)
        return; /* rank 0 closed its stdin or is gone: the rest is dropped */
    if (len == 0) {
        bmpi_iof_stdin_stop(iof);
        return;
    }
    char *grown = realloc(iof->in_buf, len);
    if (grown == NULL) {
        bmpi_iof_stdin_stop(iof);
        return;
    }
    iof->in_buf = grown;
    iof->in_len = len;
    iof->in_off = 0;
    memcpy(iof->in_buf, buf, len);
    stdin_push(iof);
}

bool bmpi_iof_stdin_idle(const struct bmpi_iof *iof)
{
    return iof->in_len == 0;
}

void bmpi_iof_stdin_pollfds(struct bmpi_iof *iof, struct pollfd *src, struct pollfd *dst)
{
    bool open = (iof->in_src >= 0 || iof->stdin_remote) && iof->in_dst >= 0;
    src->fd = open && iof->in_len == 0 ? iof->in_src : -1;
    src->events = POLLIN;
    src->revents = 0;
    dst->fd = open && iof->in_len > 0 ? iof->in_dst : -1;
    dst->events = POLLOUT;
    dst->revents = 0;
}

static void stdin_push(struct bmpi_iof *iof)
{
    while (iof->in_off < iof->in_len) {
        ssize_t n = write(iof->in_dst, iof->in_buf + iof->in_off, iof->in_len - iof->in_off);
        if (n > 0) {
            iof->in_off += (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return; /* rank 0 is not reading yet: wait for POLLOUT */
        } else {
            bmpi_iof_stdin_stop(iof); /* rank 0 closed its stdin */
            return;
        }
    }
    iof->in_len = iof->in_off = 0;
}

void bmpi_iof_stdin_handle(struct bmpi_iof *iof, const struct pollfd *src, const struct pollfd *dst)
{
    if (src->fd >= 0 && (src->revents & (POLLIN | POLLHUP | POLLERR))) {
        ssize_t n = read(iof->in_src, iof->in_buf, IOF_READ_CHUNK);
        if (n > 0) {
            iof->in_len = (size_t)n;
            iof->in_off = 0;
            stdin_push(iof);
        } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
            /* EOF, or a terminal we may not read (background job): either
             * way rank 0 now sees the end of its input */
            bmpi_iof_stdin_stop(iof);
        }
    }
    if (dst->fd >= 0 && (dst->revents & (POLLOUT | POLLERR | POLLHUP)))
        stdin_push(iof);
}
