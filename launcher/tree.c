/* The launch tree: frames over TCP between the head and the daemons
 * (launcher/tree.h). Every socket is nonblocking; what cannot be written
 * now waits in the link's buffer for POLLOUT. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "launcher/iof.h"
#include "launcher/tree.h"

enum { HELLO = 0 };

struct hello {
    uint8_t secret[BMPI_TREE_SECRET_LEN];
    int32_t vertex;
};

/* ---- shape ------------------------------------------------------------------ */

int bmpi_tree_parent(const struct bmpi_tree *t, int v)
{
    return v <= 0 ? -1 : (v - 1) / t->fanout;
}

bool bmpi_tree_has_children(const struct bmpi_tree *t, int v)
{
    return (long)v * t->fanout + 1 < t->nvertices;
}

bool bmpi_tree_in_subtree(const struct bmpi_tree *t, int root, int v)
{
    while (v > root)
        v = bmpi_tree_parent(t, v);
    return v == root;
}

/* ---- links --------------------------------------------------------------------- */

static void link_init(struct bmpi_tree_link *l, int fd, int vertex, const char *peer)
{
    *l = (struct bmpi_tree_link){.fd = fd, .vertex = vertex};
    snprintf(l->peer, sizeof(l->peer), "%s", peer);
}

static void link_close(struct bmpi_tree_link *l)
{
    if (l->fd >= 0)
        close(l->fd);
    free(l->in);
    free(l->out);
    int vertex = l->vertex;
    char peer[sizeof(l->peer)];
    memcpy(peer, l->peer, sizeof(peer));
    link_init(l, -1, vertex, peer);
}

static void sockaddr_text(const struct sockaddr *sa, char *buf, size_t len)
{
    char host[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const void *)sa;
        inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
        port = ntohs(in->sin_port);
        snprintf(buf, len, "%s:%d", host, port);
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const void *)sa;
        if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr))
            inet_ntop(AF_INET, &in6->sin6_addr.s6_addr[12], host, sizeof(host));
        else
            inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
        port = ntohs(in6->sin6_port);
        snprintf(buf, len, strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, port);
    } else {
        snprintf(buf, len, "?");
    }
}

static int reserve(char **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 4096;
    while (c < need)
        c *= 2;
    char *grown = realloc(*buf, c);
    if (grown == NULL)
        return -1;
    *buf = grown;
    *cap = c;
    return 0;
}

static void link_write_some(struct bmpi_tree_link *l)
{
    while (l->fd >= 0 && l->out_off < l->out_len) {
        ssize_t n = send(l->fd, l->out + l->out_off, l->out_len - l->out_off, MSG_NOSIGNAL);
        if (n > 0) {
            l->out_off += (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else {
            return; /* EAGAIN: POLLOUT later; an error: the read side sees it */
        }
    }
    if (l->out_off == l->out_len)
        l->out_off = l->out_len = 0;
}

static int link_queue(struct bmpi_tree_link *l, const struct bmpi_tree_hdr *h, const void *a, size_t alen,
                      const void *b, size_t blen)
{
    if (l->fd < 0)
        return -1;
    if (l->out_off > 0 && l->out_off == l->out_len)
        l->out_off = l->out_len = 0;
    if (reserve(&l->out, &l->out_cap, l->out_len + sizeof(*h) + alen + blen) != 0) {
        bmpi_say("out of memory for a message to %s", l->peer);
        return -1;
    }
    memcpy(l->out + l->out_len, h, sizeof(*h));
    l->out_len += sizeof(*h);
    if (alen > 0)
        memcpy(l->out + l->out_len, a, alen);
    l->out_len += alen;
    if (blen > 0)
        memcpy(l->out + l->out_len, b, blen);
    l->out_len += blen;
    link_write_some(l);
    return 0;
}

/* ---- setup ----------------------------------------------------------------------- */

void bmpi_tree_init(struct bmpi_tree *t, int self, int nvertices, int fanout,
                    const uint8_t secret[BMPI_TREE_SECRET_LEN], const struct bmpi_tree_events *ev)
{
    *t = (struct bmpi_tree){.self = self, .nvertices = nvertices, .fanout = fanout > 0 ? fanout : 1,
                            .listen_fd = -1, .ev = *ev};
    memcpy(t->secret, secret, BMPI_TREE_SECRET_LEN);
    link_init(&t->up, -1, bmpi_tree_parent(t, self), "parent");
}

static void set_nonblock(int fd)
{
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static void set_nodelay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

int bmpi_tree_listen(struct bmpi_tree *t)
{
    int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_storage ss = {0};
    socklen_t sl;
    if (fd >= 0) {
        int zero = 0;
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
        struct sockaddr_in6 *a6 = (void *)&ss;
        a6->sin6_family = AF_INET6;
        a6->sin6_addr = in6addr_any;
        sl = sizeof(*a6);
    } else {
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in *a4 = (void *)&ss;
        a4->sin_family = AF_INET;
        a4->sin_addr.s_addr = htonl(INADDR_ANY);
        sl = sizeof(*a4);
    }
    if (fd < 0 || bind(fd, (struct sockaddr *)&ss, sl) != 0 || listen(fd, 128) != 0) {
        bmpi_say("cannot listen for the daemons of the job's other hosts (TCP): %m");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    sl = sizeof(ss);
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    set_nonblock(fd);
    t->listen_fd = fd;
    int port = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                        : ntohs(((struct sockaddr_in *)&ss)->sin_port);
    snprintf(t->listen_addr, sizeof(t->listen_addr), "%d", port);
    return 0;
}

/* "ADDR:PORT" or "[V6]:PORT" -> host and port strings. */
static int split_addr(const char *s, char *host, size_t hlen, char *port, size_t plen)
{
    const char *colon = strrchr(s, ':');
    if (colon == NULL || colon == s)
        return -1;
    const char *h = s;
    size_t n = (size_t)(colon - s);
    if (*h == '[' && n >= 2 && h[n - 1] == ']') {
        h++;
        n -= 2;
    }
    if (n >= hlen || strlen(colon + 1) >= plen)
        return -1;
    memcpy(host, h, n);
    host[n] = '\0';
    strcpy(port, colon + 1);
    return 0;
}

/* Nonblocking connect, at most timeout_ms. The fd, or -1 with errno. */
static int connect_within(const struct addrinfo *ai, int timeout_ms)
{
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
        return fd;
    if (errno == EINPROGRESS) {
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        int err = ETIMEDOUT;
        socklen_t el = sizeof(err);
        if (poll(&p, 1, timeout_ms) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err == 0)
            return fd;
        errno = err;
    }
    int saved = errno;
    close(fd);
    errno = saved;
    return -1;
}

static int connect_one(const char *addr, int timeout_ms, char *why, size_t why_len)
{
    char host[INET6_ADDRSTRLEN + 8], port[16];
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV}, *res;
    if (split_addr(addr, host, sizeof(host), port, sizeof(port)) != 0 ||
        getaddrinfo(host, port, &hints, &res) != 0) {
        snprintf(why, why_len, "%s: not an address", addr);
        return -1;
    }
    int fd = connect_within(res, timeout_ms);
    if (fd < 0)
        snprintf(why, why_len, "%s: %s", addr, strerror(errno));
    freeaddrinfo(res);
    return fd;
}

/* The parent's answer to our HELLO: an empty HELLO back. Nothing else may
 * come before it; a refusal is the connection's end. */
static int wait_welcome(struct bmpi_tree *t, int timeout_ms)
{
    struct bmpi_tree_hdr h;
    size_t got = 0;
    while (got < sizeof(h)) {
        struct pollfd p = {.fd = t->up.fd, .events = POLLIN | (t->up.out_len > t->up.out_off ? POLLOUT : 0)};
        if (poll(&p, 1, timeout_ms) <= 0)
            return -1;
        if (p.revents & POLLOUT)
            link_write_some(&t->up);
        if (!(p.revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        ssize_t n = recv(t->up.fd, (char *)&h + got, sizeof(h) - got, 0);
        if (n <= 0 && !(n < 0 && (errno == EAGAIN || errno == EINTR)))
            return -1;
        got += n > 0 ? (size_t)n : 0;
    }
    return h.type == HELLO && h.len == 0 ? 0 : -1;
}

int bmpi_tree_connect(struct bmpi_tree *t, const char *addrs, int timeout_ms, char *why, size_t why_len)
{
    char *list = strdup(addrs), *save = NULL;
    int fd = -1;
    size_t off = 0;
    why[0] = '\0';
    for (char *a = list ? strtok_r(list, " ", &save) : NULL; a != NULL && fd < 0; a = strtok_r(NULL, " ", &save)) {
        char one[160];
        fd = connect_one(a, timeout_ms, one, sizeof(one));
        if (fd < 0 && off < why_len)
            off += (size_t)snprintf(why + off, why_len - off, "%s%s", off ? "; " : "", one);
        if (fd >= 0)
            link_init(&t->up, fd, bmpi_tree_parent(t, t->self), a);
    }
    free(list);
    if (fd < 0)
        return -1;
    set_nodelay(fd);
    struct hello h = {.vertex = t->self};
    memcpy(h.secret, t->secret, sizeof(h.secret));
    struct bmpi_tree_hdr hdr = {.len = sizeof(h), .type = HELLO, .src = t->self, .dst = t->up.vertex};
    if (link_queue(&t->up, &hdr, &h, sizeof(h), NULL, 0) != 0 || wait_welcome(t, timeout_ms) != 0) {
        snprintf(why, why_len, "%s closed the connection: it refused this daemon (a wrong job secret?)",
                 t->up.peer);
        link_close(&t->up);
        return -1;
    }
    return 0;
}

void bmpi_tree_local_addr(const struct bmpi_tree *t, char *buf, size_t len)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    char text[80];
    if (t->up.fd < 0 || getsockname(t->up.fd, (struct sockaddr *)&ss, &sl) != 0) {
        snprintf(buf, len, "?");
        return;
    }
    sockaddr_text((struct sockaddr *)&ss, text, sizeof(text));
    char *colon = strrchr(text, ':'); /* replace the port with the listen port */
    if (colon != NULL)
        *colon = '\0';
    snprintf(buf, len, "%s:%s", text, t->listen_addr);
}

/* ---- routing ------------------------------------------------------------------------ */

static struct bmpi_tree_link *child_link(struct bmpi_tree *t, int child)
{
    for (int i = 0; i < t->ndown; i++)
        if (t->down[i].vertex == child && t->down[i].fd >= 0)
            return &t->down[i];
    return NULL;
}

/* The link toward dst, NULL when it is gone. */
static struct bmpi_tree_link *next_hop(struct bmpi_tree *t, int dst)
{
    if (dst > t->self && bmpi_tree_in_subtree(t, t->self, dst)) {
        int c = dst;
        while (bmpi_tree_parent(t, c) != t->self)
            c = bmpi_tree_parent(t, c);
        return child_link(t, c);
    }
    return t->up.fd >= 0 ? &t->up : NULL;
}

static void forward_down_all(struct bmpi_tree *t, const struct bmpi_tree_hdr *h, const void *payload)
{
    for (int i = 0; i < t->ndown; i++)
        if (t->down[i].fd >= 0 && t->down[i].vertex >= 0)
            link_queue(&t->down[i], h, payload, h->len, NULL, 0);
}

int bmpi_tree_sendv(struct bmpi_tree *t, int dst, uint16_t type, const void *a, size_t alen, const void *b,
                    size_t blen)
{
    struct bmpi_tree_hdr h = {.len = (uint32_t)(alen + blen), .type = type, .src = t->self, .dst = dst};
    if (alen + blen > BMPI_TREE_MAX_FRAME)
        return -1;
    if (dst == BMPI_TREE_ALL) {
        for (int i = 0; i < t->ndown; i++)
            if (t->down[i].fd >= 0 && t->down[i].vertex >= 0)
                link_queue(&t->down[i], &h, a, alen, b, blen);
        return 0;
    }
    struct bmpi_tree_link *l = next_hop(t, dst);
    return l != NULL ? link_queue(l, &h, a, alen, b, blen) : -1;
}

int bmpi_tree_send(struct bmpi_tree *t, int dst, uint16_t type, const void *payload, size_t len)
{
    return bmpi_tree_sendv(t, dst, type, payload, len, NULL, 0);
}

/* ---- receiving ------------------------------------------------------------------------- */

static bool secret_matches(const struct bmpi_tree *t, const uint8_t *s)
{
    uint8_t diff = 0;
    for (int i = 0; i < BMPI_TREE_SECRET_LEN; i++)
        diff |= (uint8_t)(s[i] ^ t->secret[i]);
    return diff == 0;
}

/* The first frame of an incoming connection must be a HELLO with the
 * secret from one of our children not yet joined. */
static bool accept_hello(struct bmpi_tree *t, struct bmpi_tree_link *l, const struct bmpi_tree_hdr *h,
                         const void *payload)
{
    struct hello hello;
    if (h->type != HELLO || h->len != sizeof(hello)) {
        bmpi_say("refused a connection from %s: not a bmpirun daemon of this job", l->peer);
        return false;
    }
    memcpy(&hello, payload, sizeof(hello));
    if (!secret_matches(t, hello.secret)) {
        bmpi_say("refused a connection from %s: wrong job secret", l->peer);
        return false;
    }
    if (hello.vertex <= 0 || hello.vertex >= t->nvertices || bmpi_tree_parent(t, hello.vertex) != t->self ||
        child_link(t, hello.vertex) != NULL) {
        bmpi_say("refused a connection from %s: it claims vertex %d, not a child of vertex %d waiting to join",
                 l->peer, (int)hello.vertex, t->self);
        return false;
    }
    l->vertex = hello.vertex;
    struct bmpi_tree_hdr welcome = {.type = HELLO, .src = t->self, .dst = l->vertex};
    link_queue(l, &welcome, NULL, 0, NULL, 0);
    if (t->ev.joined != NULL)
        t->ev.joined(t->ev.ctx, l->vertex, l->peer);
    return true;
}

static void route(struct bmpi_tree *t, const struct bmpi_tree_hdr *h, const void *payload)
{
    if (h->dst == t->self) {
        t->ev.deliver(t->ev.ctx, h, payload);
    } else if (h->dst == BMPI_TREE_ALL) {
        forward_down_all(t, h, payload);
        t->ev.deliver(t->ev.ctx, h, payload);
    } else {
        struct bmpi_tree_link *l = next_hop(t, h->dst);
        if (l != NULL)
            link_queue(l, h, payload, h->len, NULL, 0);
    }
}

/* Read what is there and act on every whole frame; false when the link
 * should be closed. */
static bool link_read(struct bmpi_tree *t, struct bmpi_tree_link *l)
{
    for (;;) {
        if (reserve(&l->in, &l->in_cap, l->in_len + 65536) != 0)
            return false;
        ssize_t n = recv(l->fd, l->in + l->in_len, l->in_cap - l->in_len, 0);
        if (n == 0)
            return false;
        if (n < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
        l->in_len += (size_t)n;
        size_t off = 0;
        while (l->in_len - off >= sizeof(struct bmpi_tree_hdr)) {
            struct bmpi_tree_hdr h;
            memcpy(&h, l->in + off, sizeof(h));
            uint32_t max = l->vertex < 0 ? BMPI_TREE_MAX_HELLO : BMPI_TREE_MAX_FRAME;
            if (h.len > max) {
                bmpi_say("dropped the connection from %s: a frame of %u bytes", l->peer, (unsigned)h.len);
                return false;
            }
            if (l->in_len - off - sizeof(h) < h.len)
                break;
            const char *payload = l->in + off + sizeof(h);
            off += sizeof(h) + h.len;
            if (l->vertex < 0 && l != &t->up) {
                if (!accept_hello(t, l, &h, payload))
                    return false;
                continue;
            }
            route(t, &h, payload);
            if (l->fd < 0)
                return false;
        }
        memmove(l->in, l->in + off, l->in_len - off);
        l->in_len -= off;
    }
}

/* Connections that have not said HELLO yet: at most this many, for at
 * most this long, so that a stranger who connects and says nothing holds
 * neither fds nor memory of the job for long. */
#define MAX_PENDING 64
#define PENDING_MS 10000

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void drop_stale_pending(struct bmpi_tree *t)
{
    long now = now_ms();
    for (int i = 0; i < t->ndown; i++) {
        struct bmpi_tree_link *l = &t->down[i];
        if (l->fd >= 0 && l->vertex < 0 && now - l->since_ms > PENDING_MS) {
            bmpi_say("dropped a connection from %s: no HELLO within %d s", l->peer, PENDING_MS / 1000);
            link_close(l);
        }
    }
}

int bmpi_tree_timeout_ms(const struct bmpi_tree *t)
{
    long soonest = -1, now = now_ms();
    for (int i = 0; i < t->ndown; i++) {
        const struct bmpi_tree_link *l = &t->down[i];
        if (l->fd < 0 || l->vertex >= 0)
            continue;
        long left = l->since_ms + PENDING_MS - now;
        left = left < 0 ? 0 : left + 1;
        if (soonest < 0 || left < soonest)
            soonest = left;
    }
    return soonest > 60000 ? 60000 : (int)soonest;
}

static int npending(const struct bmpi_tree *t)
{
    int n = 0;
    for (int i = 0; i < t->ndown; i++)
        n += t->down[i].fd >= 0 && t->down[i].vertex < 0;
    return n;
}

static void accept_new(struct bmpi_tree *t)
{
    for (;;) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof(ss);
        int fd = accept4(t->listen_fd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
            return;
        if (npending(t) >= MAX_PENDING) {
            close(fd);
            continue;
        }
        struct bmpi_tree_link *grown = realloc(t->down, (size_t)(t->ndown + 1) * sizeof(*grown));
        if (grown == NULL) {
            close(fd);
            return;
        }
        t->down = grown;
        char peer[80];
        sockaddr_text((struct sockaddr *)&ss, peer, sizeof(peer));
        set_nodelay(fd);
        link_init(&t->down[t->ndown], fd, -1, peer);
        t->down[t->ndown++].since_ms = now_ms();
    }
}

static void link_lost(struct bmpi_tree *t, struct bmpi_tree_link *l)
{
    int vertex = l->vertex;
    bool was_up = l == &t->up;
    link_close(l);
    if ((was_up || vertex >= 0) && t->ev.lost != NULL)
        t->ev.lost(t->ev.ctx, vertex);
}

size_t bmpi_tree_npollfds(const struct bmpi_tree *t)
{
    return 2 + (size_t)t->ndown;
}

size_t bmpi_tree_pollfds(const struct bmpi_tree *t, struct pollfd *pfd)
{
    size_t n = 0;
    pfd[n++] = (struct pollfd){.fd = t->listen_fd, .events = POLLIN};
    pfd[n++] = (struct pollfd){.fd = t->up.fd, .events = (short)(POLLIN | (t->up.out_len > t->up.out_off ? POLLOUT : 0))};
    for (int i = 0; i < t->ndown; i++) {
        const struct bmpi_tree_link *l = &t->down[i];
        pfd[n++] = (struct pollfd){.fd = l->fd, .events = (short)(POLLIN | (l->out_len > l->out_off ? POLLOUT : 0))};
    }
    return n;
}

static void handle_link(struct bmpi_tree *t, struct bmpi_tree_link *l, short revents)
{
    if (l->fd < 0 || revents == 0)
        return;
    if (revents & POLLOUT)
        link_write_some(l);
    if ((revents & (POLLIN | POLLHUP | POLLERR)) && !link_read(t, l))
        link_lost(t, l);
}

/* Closed links go once nothing points into the array any more. */
static void compact(struct bmpi_tree *t)
{
    int k = 0;
    for (int i = 0; i < t->ndown; i++)
        if (t->down[i].fd >= 0)
            t->down[k++] = t->down[i];
    t->ndown = k;
}

void bmpi_tree_handle(struct bmpi_tree *t, const struct pollfd *pfd, size_t n)
{
    int ndown = t->ndown;
    if (n >= 2)
        handle_link(t, &t->up, pfd[1].revents);
    for (int i = 0; i < ndown && (size_t)i + 2 < n; i++)
        if (pfd[i + 2].fd == t->down[i].fd)
            handle_link(t, &t->down[i], pfd[i + 2].revents);
    drop_stale_pending(t);
    compact(t);
    if (n >= 1 && t->listen_fd >= 0 && (pfd[0].revents & POLLIN))
        accept_new(t);
}

void bmpi_tree_flush(struct bmpi_tree *t, int timeout_ms)
{
    struct timespec end, now;
    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_sec += timeout_ms / 1000;
    end.tv_nsec += (timeout_ms % 1000) * 1000000L;
    for (;;) {
        struct pollfd p[1 + 64];
        size_t n = 0;
        if (t->up.fd >= 0 && t->up.out_len > t->up.out_off)
            p[n++] = (struct pollfd){.fd = t->up.fd, .events = POLLOUT};
        for (int i = 0; i < t->ndown && n < 65; i++)
            if (t->down[i].fd >= 0 && t->down[i].out_len > t->down[i].out_off)
                p[n++] = (struct pollfd){.fd = t->down[i].fd, .events = POLLOUT};
        clock_gettime(CLOCK_MONOTONIC, &now);
        long ms = (end.tv_sec - now.tv_sec) * 1000L + (end.tv_nsec - now.tv_nsec) / 1000000L;
        if (n == 0 || ms <= 0 || poll(p, n, (int)ms) <= 0)
            return;
        link_write_some(&t->up);
        for (int i = 0; i < t->ndown; i++)
            link_write_some(&t->down[i]);
    }
}

bool bmpi_tree_up_alive(const struct bmpi_tree *t)
{
    return t->up.fd >= 0;
}

void bmpi_tree_close(struct bmpi_tree *t)
{
    link_close(&t->up);
    for (int i = 0; i < t->ndown; i++)
        link_close(&t->down[i]);
    free(t->down);
    t->down = NULL;
    t->ndown = 0;
    if (t->listen_fd >= 0)
        close(t->listen_fd);
    t->listen_fd = -1;
}

/* ---- the secret as text ----------------------------------------------------------- */

void bmpi_tree_secret_hex(const uint8_t secret[BMPI_TREE_SECRET_LEN], char hex[2 * BMPI_TREE_SECRET_LEN + 1])
{
    for (int i = 0; i < BMPI_TREE_SECRET_LEN; i++)
        snprintf(hex + 2 * i, 3, "%02x", secret[i]);
}

int bmpi_tree_secret_parse(const char *hex, uint8_t secret[BMPI_TREE_SECRET_LEN])
{
    /* sscanf's %x alone would take blanks and signs */
    if (strlen(hex) != 2 * BMPI_TREE_SECRET_LEN || strspn(hex, "0123456789abcdefABCDEF") != 2 * BMPI_TREE_SECRET_LEN)
        return -1;
    for (int i = 0; i < BMPI_TREE_SECRET_LEN; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1)
            return -1;
        secret[i] = (uint8_t)v;
    }
    return 0;
}
