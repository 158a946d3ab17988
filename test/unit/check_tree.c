/*
 * Unit test of the launch tree (launcher/tree.c) over loopback.
 *
 * The test process plays the head, vertex 0; each daemon vertex is a
 * forked process with its own struct bmpi_tree. The trees of every vertex
 * that has children listen before the fork, so that each child knows its
 * parent's port. A forked vertex reports what was wrong on stderr and
 * through its exit status; the Check test asserts that it exited 0. Every
 * forked vertex dies with the test process (PR_SET_PDEATHSIG) or by its
 * alarm at the latest.
 *
 * What the parent side says (bmpi_say: refusals, drops) is read from the
 * test process's stderr, redirected into a file while it runs.
 *
 * silent_connections_are_dropped_after_10_s waits those 10 s.
 */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "launcher/tree.h"
#include "test/unit/run_suite.h"

#define MAXV 8
#define NMSG 20              /* messages each way between the head and a daemon: their order */
#define BIG_LEN (8u << 20)   /* more than a socket takes while its reader sleeps */
#define BIG_VERTEX 5         /* the full tree's vertex that echoes a big message */
#define CHILD_ALARM_S 25     /* a forked vertex is gone by then, whatever happens */
#define WAIT_MS 15000        /* the most any step of a test waits */
#define CONNECT_MS 5000

enum { T_UP = 1, T_DOWN, T_GO, T_PEER, T_BIG, T_DONE };

/* One vertex: its tree and what its events saw. */
struct vertex {
    struct bmpi_tree tree;
    int self, nvertices;
    int up_next[MAXV]; /* the head: the next T_UP number from each daemon */
    int down_next;     /* a daemon: the next T_DOWN number from the head */
    int ngo, npeer, nbig, ndone;
    int big_peer; /* the head: who sends it the big message */
    bool done_from[MAXV];
    int njoined, joined[MAXV];
    char joined_peer[MAXV][80];
    int nlost, lost[MAXV];
    char error[512]; /* the first thing that was wrong */
};

/* The vertices of one test, shared by copy with every forked vertex. */
struct world {
    int n, fanout;
    uint8_t secret[BMPI_TREE_SECRET_LEN];
    struct vertex v[MAXV];
    pid_t pid[MAXV]; /* of each forked vertex; 0 once reaped */
    int code[MAXV];  /* its exit code once reaped: 128 + signal when killed */
};

static struct world *w;

static void setup(void)
{
    w = calloc(1, sizeof(*w));
    ck_assert_ptr_nonnull(w);
    for (int i = 0; i < BMPI_TREE_SECRET_LEN; i++)
        w->secret[i] = (uint8_t)(i * 11 + 3);
}

static void teardown(void)
{
    for (int v = 0; v < w->n; v++) {
        if (w->pid[v] > 0) {
            kill(w->pid[v], SIGKILL);
            waitpid(w->pid[v], NULL, 0);
        }
        bmpi_tree_close(&w->v[v].tree);
    }
    free(w);
}

/* ---- events ------------------------------------------------------------------------- */

static void wrong(struct vertex *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void wrong(struct vertex *x, const char *fmt, ...)
{
    if (x->error[0] != '\0')
        return;
    int n = snprintf(x->error, sizeof(x->error), "vertex %d: ", x->self);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->error + n, sizeof(x->error) - (size_t)n, fmt, ap);
    va_end(ap);
}

static int next_daemon(const struct vertex *x, int v)
{
    return v % (x->nvertices - 1) + 1;
}

static int prev_daemon(const struct vertex *x, int v)
{
    return (v + x->nvertices - 3) % (x->nvertices - 1) + 1;
}

static uint8_t big_byte(size_t i)
{
    return (uint8_t)((i * 131 + 7) ^ (i >> 12));
}

/* The big message, in two pieces as sendv takes them. */
static int send_big(struct bmpi_tree *t, int dst)
{
    uint8_t *big = malloc(BIG_LEN);
    if (big == NULL)
        return -1;
    for (size_t i = 0; i < BIG_LEN; i++)
        big[i] = big_byte(i);
    int rc = bmpi_tree_sendv(t, dst, T_BIG, big, 1000, big + 1000, BIG_LEN - 1000);
    free(big);
    return rc;
}

static void expect_text(struct vertex *x, const struct bmpi_tree_hdr *h, const void *payload, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void expect_text(struct vertex *x, const struct bmpi_tree_hdr *h, const void *payload, const char *fmt, ...)
{
    char want[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(want, sizeof(want), fmt, ap);
    va_end(ap);
    if (h->len != strlen(want) || memcmp(payload, want, h->len) != 0)
        wrong(x, "type %u from %d: '%.*s', not '%s'", h->type, (int)h->src, (int)(h->len < 100 ? h->len : 100),
              (const char *)payload, want);
}

static void expect_route(struct vertex *x, const struct bmpi_tree_hdr *h, int src, int dst)
{
    if (h->src != src || h->dst != dst)
        wrong(x, "type %u: from %d to %d, not from %d to %d", h->type, (int)h->src, (int)h->dst, src, dst);
}

static void deliver_big(struct vertex *x, const struct bmpi_tree_hdr *h, const uint8_t *payload)
{
    expect_route(x, h, x->self == 0 ? x->big_peer : 0, x->self);
    if (h->len != BIG_LEN) {
        wrong(x, "a big message of %u bytes, not %u", (unsigned)h->len, BIG_LEN);
        return;
    }
    for (size_t i = 0; i < BIG_LEN; i++)
        if (payload[i] != big_byte(i)) {
            wrong(x, "byte %zu of the big message is 0x%02x, not 0x%02x", i, payload[i], big_byte(i));
            return;
        }
    x->nbig++;
}

static void on_deliver(void *ctx, const struct bmpi_tree_hdr *h, const void *payload)
{
    struct vertex *x = ctx;
    switch (h->type) {
    case T_UP:
        if (x->self != 0 || h->src <= 0 || h->src >= x->nvertices) {
            wrong(x, "T_UP from %d", (int)h->src);
            return;
        }
        expect_route(x, h, h->src, 0);
        expect_text(x, h, payload, "up %d #%d", (int)h->src, x->up_next[h->src]++);
        break;
    case T_DOWN:
        expect_route(x, h, 0, x->self);
        expect_text(x, h, payload, "down %d #%d", x->self, x->down_next++);
        break;
    case T_GO:
        /* the head sent every T_DOWN (and the big one) before it */
        expect_route(x, h, 0, BMPI_TREE_ALL);
        expect_text(x, h, payload, "go");
        if (x->down_next != NMSG || x->nbig != (x->self == BIG_VERTEX))
            wrong(x, "T_GO after %d T_DOWN and %d big", x->down_next, x->nbig);
        x->ngo++;
        break;
    case T_PEER:
        expect_route(x, h, prev_daemon(x, x->self), x->self);
        expect_text(x, h, payload, "peer %d to %d", prev_daemon(x, x->self), x->self);
        x->npeer++;
        break;
    case T_BIG:
        deliver_big(x, h, payload);
        break;
    case T_DONE:
        expect_route(x, h, h->src, 0);
        if (x->self != 0 || h->src <= 0 || h->src >= x->nvertices || x->done_from[h->src] || h->len != 0) {
            wrong(x, "T_DONE from %d (%u bytes)", (int)h->src, (unsigned)h->len);
            return;
        }
        x->done_from[h->src] = true;
        x->ndone++;
        break;
    default:
        wrong(x, "a message of type %u from %d", h->type, (int)h->src);
    }
}

static void on_joined(void *ctx, int vertex, const char *peer)
{
    struct vertex *x = ctx;
    if (x->njoined == MAXV) {
        wrong(x, "too many joined");
        return;
    }
    snprintf(x->joined_peer[x->njoined], sizeof(x->joined_peer[0]), "%s", peer);
    x->joined[x->njoined++] = vertex;
}

static void on_lost(void *ctx, int vertex)
{
    struct vertex *x = ctx;
    if (x->nlost == MAXV) {
        wrong(x, "too many lost");
        return;
    }
    x->lost[x->nlost++] = vertex;
}

/* ---- vertices and processes --------------------------------------------------------- */

static struct vertex *vertex_init(int v, int self, const uint8_t *secret)
{
    struct vertex *x = &w->v[v];
    struct bmpi_tree_events ev = {.ctx = x, .deliver = on_deliver, .joined = on_joined, .lost = on_lost};
    *x = (struct vertex){.self = self, .nvertices = w->n};
    bmpi_tree_init(&x->tree, self, w->n, w->fanout, secret, &ev);
    return x;
}

/* n vertices with the job's secret; the head listens. */
static void world_init(int n, int fanout)
{
    ck_assert_int_le(n, MAXV);
    w->n = n;
    w->fanout = fanout;
    for (int v = 0; v < n; v++)
        vertex_init(v, v, w->secret);
    ck_assert_int_eq(bmpi_tree_listen(&w->v[0].tree), 0);
}

static void listen_addr_of(int v, char *buf, size_t len)
{
    snprintf(buf, len, "127.0.0.1:%s", w->v[v].tree.listen_addr);
}

/* Wait for the tree's fds for at most ms, then let it handle them (also
 * when nothing came: its timers). */
static void pump(struct bmpi_tree *t, int ms)
{
    struct pollfd *pfd = calloc(bmpi_tree_npollfds(t), sizeof(*pfd));
    if (pfd == NULL)
        abort();
    size_t n = bmpi_tree_pollfds(t, pfd);
    if (poll(pfd, n, ms) >= 0)
        bmpi_tree_handle(t, pfd, n);
    free(pfd);
}

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Pump until done(arg) or ms have passed; returns done(arg). */
static bool pump_until(struct bmpi_tree *t, bool (*done)(void *), void *arg, int ms)
{
    long end = now_ms() + ms;
    while (!done(arg) && now_ms() < end)
        pump(t, 50);
    return done(arg);
}

/* Run body(v) as vertex v in a process of its own; it keeps only its own
 * tree. */
static void start_vertex(int v, int (*body)(struct vertex *, int), int arg)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        alarm(CHILD_ALARM_S);
        for (int u = 0; u < w->n; u++)
            if (u != v)
                bmpi_tree_close(&w->v[u].tree);
        int rc = body(&w->v[v], arg);
        if (w->v[v].error[0] != '\0') {
            fprintf(stderr, "%s\n", w->v[v].error);
            rc = rc ? rc : 1;
        }
        bmpi_tree_close(&w->v[v].tree);
        fflush(stderr);
        _exit(rc);
    }
    w->pid[v] = pid;
}

/* Has vertex v's process ended? Reaps it (w->code) when it has. */
static bool ended(int v)
{
    int st;
    if (w->pid[v] > 0 && waitpid(w->pid[v], &st, WNOHANG) == w->pid[v]) {
        w->pid[v] = 0;
        w->code[v] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }
    return w->pid[v] == 0;
}

/* The exit code of vertex v's process, waiting at most ms; one still
 * running then is killed and gives -1. */
static int reap(int v, int ms)
{
    long end = now_ms() + ms;
    while (!ended(v)) {
        if (now_ms() >= end) {
            kill(w->pid[v], SIGKILL);
            waitpid(w->pid[v], NULL, 0);
            w->pid[v] = 0;
            return -1;
        }
        usleep(10000);
    }
    return w->code[v];
}

struct vertex_range {
    int first, last;
};

static bool all_ended(void *arg)
{
    const struct vertex_range *r = arg;
    bool all = true;
    for (int v = r->first; v <= r->last; v++)
        all = ended(v) && all;
    return all;
}

/* ---- what the parent side says -------------------------------------------------------- */

struct capture {
    int saved, fd;
};

static void capture_start(struct capture *c)
{
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    c->fd = dup(fileno(f));
    fclose(f);
    ck_assert_int_ge(c->fd, 0);
    fflush(stderr);
    c->saved = dup(STDERR_FILENO);
    ck_assert_int_ge(c->saved, 0);
    ck_assert_int_eq(dup2(c->fd, STDERR_FILENO), STDERR_FILENO);
}

/* What was said since capture_start (malloc'd), also passed on to the
 * real stderr for the test's log. */
static char *capture_end(struct capture *c)
{
    fflush(stderr);
    dup2(c->saved, STDERR_FILENO);
    close(c->saved);
    off_t len = lseek(c->fd, 0, SEEK_END);
    char *text = calloc(1, (size_t)len + 1);
    ck_assert_ptr_nonnull(text);
    ck_assert_int_eq(pread(c->fd, text, (size_t)len, 0), (ssize_t)len);
    close(c->fd);
    fputs(text, stderr);
    return text;
}

static int count_lines_with(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)) != NULL; p += strlen(what))
        n++;
    return n;
}

/* ---- bodies of forked vertices --------------------------------------------------------- */

static bool lost_something(void *arg)
{
    return ((struct vertex *)arg)->nlost > 0;
}

enum leaf_mode {
    LEAF_STAYS,         /* until the parent goes */
    LEAF_EXITS,         /* right after joining */
    LEAF_HEARS_ONE,     /* stays, and hears one T_DOWN before the parent goes */
    LEAF_TRADES_BIG,    /* sends the big message, sleeps, takes one, says T_DONE */
};

/* Join at the parent's address and do what mode says. */
static int leaf(struct vertex *x, int mode)
{
    char addr[64], why[512];
    listen_addr_of(bmpi_tree_parent(&x->tree, x->self), addr, sizeof(addr));
    if (bmpi_tree_connect(&x->tree, addr, CONNECT_MS, why, sizeof(why)) != 0) {
        wrong(x, "could not join: %s", why);
        return 2;
    }
    if (mode == LEAF_EXITS)
        return 0;
    bool sent_done = false;
    if (mode == LEAF_TRADES_BIG) {
        if (send_big(&x->tree, 0) != 0)
            wrong(x, "the big message not taken");
        usleep(500000); /* reading nothing: the head's big message waits at its end */
    }
    /* as long as the alarm lets it: the parent decides when this ends */
    for (long end = now_ms() + (CHILD_ALARM_S - 1) * 1000L; x->nlost == 0 && now_ms() < end;) {
        pump(&x->tree, 50);
        if (mode == LEAF_TRADES_BIG && x->nbig == 1 && !sent_done) {
            if (bmpi_tree_send(&x->tree, 0, T_DONE, NULL, 0) != 0)
                wrong(x, "T_DONE not taken");
            sent_done = true;
        }
    }
    if (x->nlost == 0)
        wrong(x, "the parent never went away");
    else if (x->nlost != 1 || x->lost[0] != bmpi_tree_parent(&x->tree, x->self))
        wrong(x, "lost %d links, the first to %d", x->nlost, x->lost[0]);
    if (bmpi_tree_up_alive(&x->tree))
        wrong(x, "the link up is still alive after it was lost");
    if (bmpi_tree_send(&x->tree, 0, T_UP, "x", 1) != -1)
        wrong(x, "a message to the head was taken without a link up");
    if (x->down_next != (mode == LEAF_HEARS_ONE))
        wrong(x, "%d T_DOWN came", x->down_next);
    if (x->nbig != (mode == LEAF_TRADES_BIG) || sent_done != (mode == LEAF_TRADES_BIG))
        wrong(x, "%d big messages came, T_DONE %s", x->nbig, sent_done ? "sent" : "not sent");
    return 0;
}

/* Present ourselves where vertex at listens, and expect to be refused. */
static int refused(struct vertex *x, int at)
{
    char addr[64], why[512];
    listen_addr_of(at, addr, sizeof(addr));
    if (bmpi_tree_connect(&x->tree, addr, CONNECT_MS, why, sizeof(why)) == 0)
        wrong(x, "joined, but should have been refused");
    else if (strstr(why, "refused this daemon") == NULL)
        wrong(x, "the reason does not name the refusal: %s", why);
    if (bmpi_tree_up_alive(&x->tree))
        wrong(x, "the link up is alive after a refusal");
    return 0;
}

static bool tree_work_done(void *arg)
{
    const struct vertex *x = arg;
    return x->nlost > 0 || x->error[0] != '\0';
}

/* A daemon of the full tree: say NMSG T_UP to the head, take NMSG
 * T_DOWN, on T_GO send T_PEER to the next daemon, then T_DONE; the big one
 * goes back and forth between the head and BIG_VERTEX. Ends when the
 * parent goes. arg: the parent's addresses start with ones that fail. */
static int daemon_of_full_tree(struct vertex *x, int bad_addrs_first)
{
    struct bmpi_tree *t = &x->tree;
    int parent = bmpi_tree_parent(t, x->self);
    char addrs[256], own[64], why[512];
    listen_addr_of(parent, own, sizeof(own));
    if (bad_addrs_first) {
        /* a port nobody listens on: the one a socket just had */
        int s = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t sl = sizeof(sa);
        if (s < 0 || bind(s, (struct sockaddr *)&sa, sl) != 0 || getsockname(s, (struct sockaddr *)&sa, &sl) != 0)
            return 3;
        close(s);
        snprintf(addrs, sizeof(addrs), "not-an-address 127.0.0.1:%d %s", ntohs(sa.sin_port), own);
    } else {
        snprintf(addrs, sizeof(addrs), "%s", own);
    }
    if (bmpi_tree_connect(t, addrs, CONNECT_MS, why, sizeof(why)) != 0) {
        wrong(x, "could not join at '%s': %s", addrs, why);
        return 2;
    }
    if (bmpi_tree_has_children(t, x->self)) {
        char local[128], want[64];
        bmpi_tree_local_addr(t, local, sizeof(local));
        listen_addr_of(x->self, want, sizeof(want));
        if (strcmp(local, want) != 0)
            wrong(x, "bmpi_tree_local_addr says %s, not %s", local, want);
    }
    for (int k = 0; k < NMSG; k++) {
        char text[64];
        snprintf(text, sizeof(text), "up %d #%d", x->self, k);
        if (bmpi_tree_send(t, 0, T_UP, text, strlen(text)) != 0)
            wrong(x, "T_UP #%d not taken", k);
    }
    bool sent_peer = false, sent_done = false;
    while (!tree_work_done(x)) {
        pump(t, 1000);
        if (x->ngo == 1 && !sent_peer) {
            char text[64];
            snprintf(text, sizeof(text), "peer %d to %d", x->self, next_daemon(x, x->self));
            if (x->self == BIG_VERTEX && send_big(t, 0) != 0)
                wrong(x, "the big message back not taken");
            if (bmpi_tree_send(t, next_daemon(x, x->self), T_PEER, text, strlen(text)) != 0)
                wrong(x, "T_PEER not taken");
            sent_peer = true;
        }
        if (x->npeer == 1 && sent_peer && !sent_done) {
            if (bmpi_tree_send(t, 0, T_DONE, NULL, 0) != 0)
                wrong(x, "T_DONE not taken");
            sent_done = true;
        }
    }
    if (!sent_done)
        wrong(x, "the parent went before all was done (T_GO %d, T_PEER %d)", x->ngo, x->npeer);
    if (x->nlost != 1 || x->lost[0] != parent)
        wrong(x, "lost %d links, the first to %d, not the one to %d", x->nlost, x->lost[0], parent);
    /* its own children joined here, each once */
    int nchildren = 0;
    for (int c = 1; c < x->nvertices; c++)
        nchildren += bmpi_tree_parent(t, c) == x->self;
    if (x->njoined != nchildren)
        wrong(x, "%d children joined, not %d", x->njoined, nchildren);
    for (int i = 0; i < x->njoined; i++)
        if (bmpi_tree_parent(t, x->joined[i]) != x->self)
            wrong(x, "vertex %d joined here", x->joined[i]);
    return 0;
}

/* ---- shape ------------------------------------------------------------------------------ */

static struct bmpi_tree shape(int n, int fanout)
{
    struct bmpi_tree t;
    struct bmpi_tree_events ev = {0};
    uint8_t secret[BMPI_TREE_SECRET_LEN] = {0};
    bmpi_tree_init(&t, 0, n, fanout, secret, &ev);
    return t;
}

/* The definitions: a parent below each vertex, children exactly where
 * some vertex names this one as parent, subtrees as ancestor chains. */
static void assert_shape_consistent(const struct bmpi_tree *t)
{
    ck_assert_int_eq(bmpi_tree_parent(t, 0), -1);
    for (int v = 0; v < t->nvertices; v++) {
        if (v > 0) {
            int p = bmpi_tree_parent(t, v);
            ck_assert_int_ge(p, 0);
            ck_assert_int_lt(p, v);
        }
        int nchildren = 0;
        for (int c = 1; c < t->nvertices; c++)
            nchildren += bmpi_tree_parent(t, c) == v;
        ck_assert_int_le(nchildren, t->fanout);
        ck_assert_msg(bmpi_tree_has_children(t, v) == (nchildren > 0), "n %d fanout %d v %d", t->nvertices,
                      t->fanout, v);
        for (int root = 0; root < t->nvertices; root++) {
            bool below = false;
            for (int a = v; a >= 0 && !below; a = bmpi_tree_parent(t, a))
                below = a == root;
            ck_assert_msg(bmpi_tree_in_subtree(t, root, v) == below, "n %d fanout %d root %d v %d", t->nvertices,
                          t->fanout, root, v);
        }
        ck_assert(!bmpi_tree_in_subtree(t, v, BMPI_TREE_ALL));
    }
}

START_TEST(shape_fanout_1_is_a_chain)
{
    struct bmpi_tree t = shape(5, 1);
    for (int v = 1; v < 5; v++)
        ck_assert_int_eq(bmpi_tree_parent(&t, v), v - 1);
    for (int v = 0; v < 4; v++)
        ck_assert(bmpi_tree_has_children(&t, v));
    ck_assert(!bmpi_tree_has_children(&t, 4));
    ck_assert(bmpi_tree_in_subtree(&t, 2, 4));
    ck_assert(bmpi_tree_in_subtree(&t, 2, 2));
    ck_assert(!bmpi_tree_in_subtree(&t, 2, 1));
    /* a fanout below 1 is taken as 1 */
    t = shape(5, 0);
    ck_assert_int_eq(t.fanout, 1);
    ck_assert_int_eq(bmpi_tree_parent(&t, 4), 3);
    for (int n = 1; n < 40; n++) {
        t = shape(n, 1);
        assert_shape_consistent(&t);
    }
}
END_TEST

START_TEST(shape_fanout_2_is_binary)
{
    struct bmpi_tree t = shape(6, 2);
    static const int parent[] = {-1, 0, 0, 1, 1, 2};
    for (int v = 0; v < 6; v++)
        ck_assert_int_eq(bmpi_tree_parent(&t, v), parent[v]);
    ck_assert(bmpi_tree_has_children(&t, 0));
    ck_assert(bmpi_tree_has_children(&t, 1));
    ck_assert(bmpi_tree_has_children(&t, 2)); /* 5 */
    ck_assert(!bmpi_tree_has_children(&t, 3));
    ck_assert(bmpi_tree_in_subtree(&t, 1, 4));
    ck_assert(!bmpi_tree_in_subtree(&t, 1, 5));
    ck_assert(bmpi_tree_in_subtree(&t, 2, 5));
    ck_assert(bmpi_tree_in_subtree(&t, 0, 5));
    t = shape(5, 2);
    ck_assert(!bmpi_tree_has_children(&t, 2));
    for (int n = 1; n < 70; n++) {
        t = shape(n, 2);
        assert_shape_consistent(&t);
    }
}
END_TEST

START_TEST(shape_fanout_32_is_flat)
{
    struct bmpi_tree t = shape(33, 32);
    for (int v = 1; v < 33; v++)
        ck_assert_int_eq(bmpi_tree_parent(&t, v), 0);
    ck_assert(bmpi_tree_has_children(&t, 0));
    ck_assert(!bmpi_tree_has_children(&t, 1));
    t = shape(34, 32);
    ck_assert_int_eq(bmpi_tree_parent(&t, 33), 1);
    ck_assert(bmpi_tree_has_children(&t, 1));
    ck_assert(!bmpi_tree_has_children(&t, 2));
    t = shape(2000, 32);
    ck_assert_int_eq(bmpi_tree_parent(&t, 64), 1);
    ck_assert_int_eq(bmpi_tree_parent(&t, 65), 2);
    ck_assert_int_eq(bmpi_tree_parent(&t, 1056), 32);
    ck_assert_int_eq(bmpi_tree_parent(&t, 1057), 33);
    ck_assert(bmpi_tree_in_subtree(&t, 1, 1057));
    ck_assert(bmpi_tree_in_subtree(&t, 33, 1057));
    ck_assert(!bmpi_tree_in_subtree(&t, 2, 1057));
    ck_assert(!bmpi_tree_in_subtree(&t, 34, 1057));
    ck_assert(bmpi_tree_has_children(&t, 62));  /* 62 * 32 + 1 = 1985 */
    ck_assert(!bmpi_tree_has_children(&t, 63)); /* 2017 */
    for (int n = 1; n < 120; n++) {
        t = shape(n, 32);
        assert_shape_consistent(&t);
    }
}
END_TEST

START_TEST(secret_as_hex)
{
    uint8_t secret[BMPI_TREE_SECRET_LEN], back[BMPI_TREE_SECRET_LEN];
    char hex[2 * BMPI_TREE_SECRET_LEN + 1];
    for (int i = 0; i < BMPI_TREE_SECRET_LEN; i++)
        secret[i] = (uint8_t)(255 - i * 7);
    bmpi_tree_secret_hex(secret, hex);
    ck_assert_uint_eq(strlen(hex), 2 * BMPI_TREE_SECRET_LEN);
    ck_assert_int_eq(strncmp(hex, "fff8f1ea", 8), 0);
    ck_assert_int_eq(bmpi_tree_secret_parse(hex, back), 0);
    ck_assert_mem_eq(back, secret, sizeof(secret));
    hex[5] = 'F';
    ck_assert_int_eq(bmpi_tree_secret_parse(hex, back), 0);
    ck_assert_uint_eq(back[2], 0xfF);
    hex[5] = 'g';
    ck_assert_int_eq(bmpi_tree_secret_parse(hex, back), -1);
    hex[5] = ' ';
    ck_assert_int_eq(bmpi_tree_secret_parse(hex, back), -1);
    hex[4] = '+';
    hex[5] = '1';
    ck_assert_int_eq(bmpi_tree_secret_parse(hex, back), -1);
    ck_assert_int_eq(bmpi_tree_secret_parse("00ff", back), -1);
    ck_assert_int_eq(bmpi_tree_secret_parse("", back), -1);
}
END_TEST

/* ---- over loopback ------------------------------------------------------------------------ */

/* (or something was wrong: the test says what) */
static bool heard_every_up(void *arg)
{
    const struct vertex *x = arg;
    if (x->error[0] != '\0')
        return true;
    for (int v = 1; v < x->nvertices; v++)
        if (x->up_next[v] < NMSG)
            return false;
    return true;
}

static bool heard_every_done(void *arg)
{
    const struct vertex *x = arg;
    return (x->ndone == x->nvertices - 1 && x->nbig == 1) || x->error[0] != '\0';
}

/* Six vertices, fanout 2: 1 and 2 under the head, 3 and 4 under 1, 5
 * under 2. Every daemon to the head, the head to every daemon, a
 * broadcast, daemon to daemon across the head, a message bigger than a
 * socket takes at once both ways; each arrives once, in order, from and
 * to whom it says. */
START_TEST(tree_of_six_routes_every_message)
{
    world_init(6, 2);
    struct vertex *head = &w->v[0];
    ck_assert_int_eq(bmpi_tree_listen(&w->v[1].tree), 0);
    ck_assert_int_eq(bmpi_tree_listen(&w->v[2].tree), 0);
    for (int v = 1; v < 6; v++)
        start_vertex(v, daemon_of_full_tree, v == 5);
    for (int v = 1; v < 6; v++)
        bmpi_tree_close(&w->v[v].tree); /* the head keeps only its own */
    ck_assert_msg(pump_until(&head->tree, heard_every_up, head, WAIT_MS), "T_UP: %d %d %d %d %d",
                  head->up_next[1], head->up_next[2], head->up_next[3], head->up_next[4], head->up_next[5]);
    ck_assert_msg(head->error[0] == '\0', "%s", head->error);
    for (int v = 1; v < 6; v++)
        for (int k = 0; k < NMSG; k++) {
            char text[64];
            snprintf(text, sizeof(text), "down %d #%d", v, k);
            ck_assert_int_eq(bmpi_tree_send(&head->tree, v, T_DOWN, text, strlen(text)), 0);
        }
    head->big_peer = BIG_VERTEX;
    ck_assert_int_eq(send_big(&head->tree, BIG_VERTEX), 0);
    ck_assert_int_eq(bmpi_tree_send(&head->tree, BMPI_TREE_ALL, T_GO, "go", 2), 0);
    ck_assert_msg(pump_until(&head->tree, heard_every_done, head, WAIT_MS), "T_DONE from %d, big %d",
                  head->ndone, head->nbig);
    ck_assert_msg(head->error[0] == '\0', "%s", head->error);
    ck_assert_int_eq(head->nlost, 0);
    ck_assert_int_eq(head->njoined, 2);
    ck_assert_int_eq(head->joined[0] + head->joined[1], 3); /* 1 and 2, each once */
    ck_assert_int_ne(head->joined[0], head->joined[1]);
    for (int i = 0; i < 2; i++)
        ck_assert_msg(strncmp(head->joined_peer[i], "127.0.0.1:", 10) == 0, "peer %s", head->joined_peer[i]);
    /* The head leaves: 1 and 2 lose it and leave, and so on down. */
    bmpi_tree_close(&head->tree);
    for (int v = 1; v < 6; v++)
        ck_assert_msg(reap(v, WAIT_MS) == 0, "vertex %d failed (its stderr says why)", v);
}
END_TEST

static bool lost_or_joined(void *arg)
{
    const struct vertex *x = arg;
    return x->njoined > 0 || x->nlost > 0;
}

START_TEST(wrong_secret_is_refused)
{
    world_init(2, 2);
    uint8_t other[BMPI_TREE_SECRET_LEN];
    memcpy(other, w->secret, sizeof(other));
    other[BMPI_TREE_SECRET_LEN - 1] ^= 1;
    vertex_init(1, 1, other);
    start_vertex(1, refused, 0);
    struct capture c;
    capture_start(&c);
    struct vertex_range r = {1, 1};
    bool all = pump_until(&w->v[0].tree, all_ended, &r, WAIT_MS);
    pump(&w->v[0].tree, 100); /* nothing more may come */
    char *said = capture_end(&c);
    ck_assert_msg(all, "the refused vertex did not end");
    ck_assert_int_eq(w->code[1], 0);
    ck_assert_int_eq(count_lines_with(said, "refused a connection from 127.0.0.1:"), 1);
    ck_assert_int_eq(count_lines_with(said, ": wrong job secret\n"), 1);
    free(said);
    ck_assert(!lost_or_joined(&w->v[0]));
    ck_assert_int_eq(w->v[0].tree.ndown, 0);
}
END_TEST

static bool joined_one(void *arg)
{
    return ((struct vertex *)arg)->njoined == 1;
}

/* A HELLO with the right secret from a vertex that is no child of this
 * one, or one that has joined already. */
START_TEST(non_child_vertex_is_refused)
{
    world_init(6, 2);
    struct vertex *head = &w->v[0];
    start_vertex(1, leaf, LEAF_STAYS);
    ck_assert(pump_until(&head->tree, joined_one, head, WAIT_MS));
    /* slots 2..5 of the world play the claimants */
    static const int claim[] = {3, 0, 6, 1};
    for (int i = 0; i < 4; i++) {
        vertex_init(2 + i, claim[i], w->secret);
        start_vertex(2 + i, refused, 0);
    }
    struct capture c;
    capture_start(&c);
    struct vertex_range r = {2, 5};
    bool all = pump_until(&head->tree, all_ended, &r, WAIT_MS);
    pump(&head->tree, 100);
    char *said = capture_end(&c);
    ck_assert_msg(all, "a claimant did not end");
    for (int i = 0; i < 4; i++) {
        ck_assert_msg(w->code[2 + i] == 0, "the claimant of vertex %d failed", claim[i]);
        char want[128];
        snprintf(want, sizeof(want), ": it claims vertex %d, not a child of vertex 0 waiting to join\n", claim[i]);
        ck_assert_msg(count_lines_with(said, want) == 1, "no '%s'", want);
    }
    ck_assert_int_eq(count_lines_with(said, "refused a connection from 127.0.0.1:"), 4);
    free(said);
    ck_assert_int_eq(head->njoined, 1);
    ck_assert_int_eq(head->joined[0], 1);
    ck_assert_int_eq(head->nlost, 0);
    ck_assert_int_eq(head->tree.ndown, 1);
    ck_assert_msg(head->error[0] == '\0', "%s", head->error);
    bmpi_tree_close(&head->tree);
    ck_assert_int_eq(reap(1, WAIT_MS), 0);
}
END_TEST

static bool lost_one_of_two(void *arg)
{
    const struct vertex *x = arg;
    return x->njoined == 2 && x->nlost > 0;
}

START_TEST(parent_loses_a_child_that_exits)
{
    world_init(3, 2);
    struct vertex *head = &w->v[0];
    start_vertex(1, leaf, LEAF_EXITS);
    start_vertex(2, leaf, LEAF_HEARS_ONE);
    ck_assert(pump_until(&head->tree, lost_one_of_two, head, WAIT_MS));
    pump(&head->tree, 100);
    ck_assert_int_eq(head->nlost, 1);
    ck_assert_int_eq(head->lost[0], 1);
    ck_assert_int_eq(reap(1, WAIT_MS), 0);
    ck_assert_int_eq(bmpi_tree_send(&head->tree, 1, T_DOWN, "x", 1), -1);
    /* the other child stays, and hears from the head */
    ck_assert_int_eq(head->njoined, 2);
    ck_assert_int_eq(head->tree.ndown, 1);
    ck_assert_int_eq(head->tree.down[0].vertex, 2);
    ck_assert_int_eq(bmpi_tree_send(&head->tree, 2, T_DOWN, "down 2 #0", 9), 0);
    bmpi_tree_close(&head->tree);
    ck_assert_int_eq(reap(2, WAIT_MS), 0);
    ck_assert_msg(head->error[0] == '\0', "%s", head->error);
}
END_TEST

static bool traded_big(void *arg)
{
    const struct vertex *x = arg;
    return (x->ndone == 1 && x->nbig == 1) || x->error[0] != '\0';
}

/* Messages larger than a socket takes while its reader does not read
 * wait in the link's buffer, both ways, and arrive whole. */
START_TEST(big_messages_wait_for_a_slow_reader)
{
    world_init(2, 2);
    struct vertex *head = &w->v[0];
    head->big_peer = 1;
    start_vertex(1, leaf, LEAF_TRADES_BIG);
    ck_assert(pump_until(&head->tree, joined_one, head, WAIT_MS));
    usleep(300000); /* reading nothing: the daemon's big message waits at its end */
    ck_assert_int_eq(send_big(&head->tree, 1), 0);
    ck_assert_msg(pump_until(&head->tree, traded_big, head, WAIT_MS), "T_DONE %d, big %d", head->ndone, head->nbig);
    ck_assert_msg(head->error[0] == '\0', "%s", head->error);
    bmpi_tree_close(&head->tree);
    ck_assert_int_eq(reap(1, WAIT_MS), 0);
}
END_TEST

START_TEST(child_loses_a_parent_that_closes)
{
    world_init(2, 2);
    struct vertex *head = &w->v[0];
    start_vertex(1, leaf, LEAF_STAYS);
    ck_assert(pump_until(&head->tree, joined_one, head, WAIT_MS));
    ck_assert_int_eq(head->joined[0], 1);
    ck_assert_msg(strncmp(head->joined_peer[0], "127.0.0.1:", 10) == 0, "peer %s", head->joined_peer[0]);
    bmpi_tree_close(&head->tree);
    ck_assert_int_eq(reap(1, WAIT_MS), 0); /* leaf checks lost(0) */
}
END_TEST

START_TEST(connect_names_every_address_tried)
{
    world_init(2, 2);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof(sa);
    ck_assert_int_ge(s, 0);
    ck_assert_int_eq(bind(s, (struct sockaddr *)&sa, sl), 0);
    ck_assert_int_eq(getsockname(s, (struct sockaddr *)&sa, &sl), 0);
    close(s); /* nobody listens on that port now */
    char addrs[128], why[512], want[512];
    snprintf(addrs, sizeof(addrs), "192.0.2.1 127.0.0.1:%d", ntohs(sa.sin_port));
    ck_assert_int_eq(bmpi_tree_connect(&w->v[1].tree, addrs, CONNECT_MS, why, sizeof(why)), -1);
    snprintf(want, sizeof(want), "192.0.2.1: not an address; 127.0.0.1:%d: %s", ntohs(sa.sin_port),
             strerror(ECONNREFUSED));
    ck_assert_str_eq(why, want);
    ck_assert(!bmpi_tree_up_alive(&w->v[1].tree));
}
END_TEST

/* A stranger's connection (no bmpirun) to where vertex v listens. */
static int stranger(int v)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(w->v[v].tree.listen_addr)),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    return fd;
}

static void stranger_says(int fd, uint16_t type, uint32_t len, size_t send_len)
{
    struct bmpi_tree_hdr h = {.len = len, .type = type, .src = 1, .dst = 0};
    char buf[sizeof(h) + 512] = {0};
    memcpy(buf, &h, sizeof(h));
    ck_assert_uint_le(send_len, sizeof(buf));
    ck_assert_int_eq(send(fd, buf, send_len, MSG_NOSIGNAL), (ssize_t)send_len);
}

/* Did the other end close fd (EOF, or reset)? Waits at most ms. */
static bool closed_by_peer(int fd, int ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, ms) != 1)
        return false;
    char c;
    ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno == ECONNRESET);
}

struct strangers {
    const int *fd;
    int n;
};

static int count_dropped(const struct strangers *s)
{
    int n = 0;
    for (int i = 0; i < s->n; i++)
        n += closed_by_peer(s->fd[i], 0);
    return n;
}

static bool strangers_dropped(void *arg)
{
    const struct strangers *s = arg;
    return count_dropped(s) == s->n;
}

static bool one_stranger_dropped(void *arg)
{
    return count_dropped(arg) > 0;
}

/* Before HELLO, a frame longer than a HELLO can be, or another message
 * than HELLO, closes the connection at once. */
START_TEST(strangers_before_hello_are_dropped)
{
    world_init(2, 2);
    struct vertex *head = &w->v[0];
    int fd[3] = {stranger(0), stranger(0), stranger(0)};
    stranger_says(fd[0], 0, BMPI_TREE_MAX_HELLO + 1, sizeof(struct bmpi_tree_hdr));
    stranger_says(fd[1], T_UP, 0, sizeof(struct bmpi_tree_hdr));
    stranger_says(fd[2], 0, 10, sizeof(struct bmpi_tree_hdr) + 10); /* a HELLO of the wrong size */
    struct capture c;
    capture_start(&c);
    struct strangers s = {fd, 3};
    bool dropped = pump_until(&head->tree, strangers_dropped, &s, WAIT_MS);
    char *said = capture_end(&c);
    ck_assert(dropped);
    char want[128];
    snprintf(want, sizeof(want), ": a frame of %u bytes\n", BMPI_TREE_MAX_HELLO + 1);
    ck_assert_int_eq(count_lines_with(said, want), 1);
    ck_assert_int_eq(count_lines_with(said, ": not a bmpirun daemon of this job\n"), 2);
    free(said);
    for (int i = 0; i < 3; i++)
        close(fd[i]);
    ck_assert(!lost_or_joined(head));
    ck_assert_int_eq(head->tree.ndown, 0);
}
END_TEST

static bool no_links(void *arg)
{
    return ((const struct bmpi_tree *)arg)->ndown == 0;
}

/* At most 64 connections wait for their HELLO; more are closed at once.
 * Once the strangers leave, a daemon joins. */
START_TEST(pending_connections_are_limited)
{
    enum { NSTRANGERS = 65 };
    world_init(2, 2);
    struct vertex *head = &w->v[0];
    int fd[NSTRANGERS];
    for (int i = 0; i < NSTRANGERS; i++)
        fd[i] = stranger(0);
    struct strangers s = {fd, NSTRANGERS};
    ck_assert(pump_until(&head->tree, one_stranger_dropped, &s, WAIT_MS));
    for (int i = 0; i < 10; i++)
        pump(&head->tree, 20); /* a second drop would come now */
    ck_assert_int_eq(head->tree.ndown, NSTRANGERS - 1);
    ck_assert_int_eq(count_dropped(&s), 1);
    for (int i = 0; i < NSTRANGERS; i++)
        close(fd[i]);
    ck_assert(pump_until(&head->tree, no_links, &head->tree, WAIT_MS));
    start_vertex(1, leaf, LEAF_STAYS);
    ck_assert(pump_until(&head->tree, joined_one, head, WAIT_MS));
    ck_assert(!lost_something(head));
    bmpi_tree_close(&head->tree);
    ck_assert_int_eq(reap(1, WAIT_MS), 0);
}
END_TEST

/* A connection that says nothing, and one that starts a HELLO and stops,
 * are dropped after 10 s; a joined daemon stays. */
START_TEST(silent_connections_are_dropped_after_10_s)
{
    world_init(2, 2);
    struct vertex *head = &w->v[0];
    start_vertex(1, leaf, LEAF_STAYS);
    ck_assert(pump_until(&head->tree, joined_one, head, WAIT_MS));
    long start = now_ms();
    int fd[2] = {stranger(0), stranger(0)};
    stranger_says(fd[1], 0, 36, 10);
    struct capture c;
    capture_start(&c);
    struct strangers s = {fd, 2};
    bool dropped = pump_until(&head->tree, strangers_dropped, &s, WAIT_MS);
    long waited = now_ms() - start;
    char *said = capture_end(&c);
    ck_assert(dropped);
    ck_assert_msg(waited >= 9990, "dropped after %ld ms", waited); /* accepted after start */
    ck_assert_int_eq(count_lines_with(said, ": no HELLO within 10 s\n"), 2);
    free(said);
    close(fd[0]);
    close(fd[1]);
    ck_assert(!lost_something(head));
    ck_assert_int_eq(head->tree.ndown, 1);
    ck_assert_int_eq(head->tree.down[0].vertex, 1);
    bmpi_tree_close(&head->tree);
    ck_assert_int_eq(reap(1, WAIT_MS), 0);
}
END_TEST

int main(void)
{
    const TTest *const tests[] = {
        shape_fanout_1_is_a_chain,
        shape_fanout_2_is_binary,
        shape_fanout_32_is_flat,
        secret_as_hex,
        tree_of_six_routes_every_message,
        wrong_secret_is_refused,
        non_child_vertex_is_refused,
        parent_loses_a_child_that_exits,
        child_loses_a_parent_that_closes,
        big_messages_wait_for_a_slow_reader,
        connect_names_every_address_tried,
        strangers_before_hello_are_dropped,
        pending_connections_are_limited,
        silent_connections_are_dropped_after_10_s,
    };
    return run_suite("tree", setup, teardown, tests, sizeof(tests) / sizeof(tests[0]));
}
