/*
 * Connecting jobs (docs/dynamic.md): MPI_Open_port, MPI_Close_port,
 * MPI_Comm_accept, MPI_Comm_connect, MPI_Comm_join, MPI_Comm_spawn,
 * MPI_Comm_spawn_multiple, MPI_Comm_get_parent.
 *
 * A port is a listening TCP socket of the accepting root; its name says
 * where (address and port) and carries a random nonce that a connecting
 * root must present. The two roots talk over that socket only (the user's
 * socket for MPI_Comm_join): each brings its group's free context pairs
 * (ANDed over the group) and every member's card (bmpi_tl_card, gathered
 * to the root), the two swap them, each broadcasts the other side's in its
 * group, and every process makes the other group's processes peers
 * (bmpi_tl_add_process) and reserves the lowest pair free in both groups.
 * The intercommunicator then carries everything over the transport that
 * reaches other jobs (ofi). Nothing needs a PMIx server both jobs share.
 *
 * An error at a root (a bad port, a refused connection, the other side's
 * failure) travels to its group through the same broadcast, so every
 * member returns the same error class and none waits forever.
 *
 * Spawning is the same: the root opens a port, starts the processes with
 * PMIx_Spawn (their environment names the port: BMPI_PARENT_PORT), and
 * accepts; the children connect to it inside MPI_Init.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <limits.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "collectives/coll.h"
#include "runtime/api.h"
#include "runtime/comm.h"
#include "runtime/context.h"
#include "runtime/dpm.h"
#include "runtime/info.h"
#include "runtime/op.h"
#include "runtime/p2p.h"
#include "runtime/pmix.h"
#include "runtime/progress.h"
#include "runtime/tl_select.h"
#include "runtime/world.h"

#define PORT_PREFIX "bmpi-port:"
#define HELLO_MAGIC UINT64_C(0x31444d50494d5042) /* "BPMIPMD1" */
/* Between two polls of a socket, MPI progress runs (the group's other
 * traffic goes on while a root waits). */
#define POLL_MS 20
/* How long an accepting root waits for the hello of a connection. */
#define HELLO_TIMEOUT_S 10
/* More members than that in the other group is a corrupt message. */
#define BMPI_MAX_GROUP (1 << 24)

struct port {
    struct port *next;
    int fd;
    uint64_t nonce;
    char name[MPI_MAX_PORT_NAME];
};

/* The ports this process has open, and the intercommunicator to the
 * parent of a spawned job (MPI_Comm_get_parent). */
static struct {
    struct port *ports;
    MPI_Comm parent;
    struct bmpi_comm *parent_obj; /* the object, to see that the handle still names it */
} dpm = {.parent = MPI_COMM_NULL};

/* First words on the bridge, from either root. */
struct hello {
    uint64_t magic;
    uint64_t nonce; /* the port's; 0 for MPI_Comm_join */
    uint64_t job;
    int32_t rank;
    int32_t zero;
};

/* One member of a group: who it is, and how to reach it (card_len 0: it
 * could not open a transport for other jobs, and card holds the start of
 * why, a string). */
struct member {
    uint64_t job;
    int32_t rank;
    uint32_t card_len;
    unsigned char card[BMPI_CARD_MAX];
};

/* What a root tells the other root, then its group. */
struct side {
    uint64_t mask[BMPI_CTX_WORDS]; /* context pairs free on every member */
    int32_t n;                     /* members */
    int32_t errclass;              /* MPI_SUCCESS, or why the side failed: */
    char why[640];
};

/* ---- sockets -------------------------------------------------------- */

static int sock_fail(int errclass, const char *what)
{
    return bmpi_err_set(errclass, "%s: %s", what, strerror(errno));
}

/* Wait until fd is ready for events, running MPI progress meanwhile. */
static int wait_fd(int fd, short events)
{
    for (;;) {
        struct pollfd p = {.fd = fd, .events = events};
        int n = poll(&p, 1, POLL_MS);
        if (n > 0)
            return (p.revents & (POLLERR | POLLNVAL)) && !(p.revents & events) ? -1 : 0;
        if (n < 0 && errno != EINTR)
            return -1;
        bmpi_progress();
    }
}

/* Send out[0 .. out_len) and receive in[0 .. in_len) at once: neither
 * root waits for the other to read first, whatever the sizes. Gives up at
 * PMPI_Wtime() == until (0: never). */
static int swap_bytes_until(int fd, const void *out, size_t out_len, void *in, size_t in_len, double until)
{
    size_t sent = 0, got = 0;
    while (sent < out_len || got < in_len) {
        if (until > 0 && PMPI_Wtime() > until)
            return bmpi_err_set(MPI_ERR_OTHER, "the other side said nothing for %d s", HELLO_TIMEOUT_S);
        struct pollfd p = {.fd = fd, .events = (short)((sent < out_len ? POLLOUT : 0) | (got < in_len ? POLLIN : 0))};
        int n = poll(&p, 1, POLL_MS);
        if (n < 0 && errno != EINTR)
            return sock_fail(MPI_ERR_OTHER, "poll on the connection to the other job");
        if (n <= 0) {
            bmpi_progress();
            continue;
        }
        if ((p.revents & POLLOUT) && sent < out_len) {
            ssize_t k = send(fd, (const char *)out + sent, out_len - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (k < 0 && errno != EAGAIN && errno != EINTR)
                return sock_fail(MPI_ERR_OTHER, "send to the other job");
            sent += k > 0 ? (size_t)k : 0;
        }
        if ((p.revents & (POLLIN | POLLHUP | POLLERR)) && got < in_len) {
            ssize_t k = recv(fd, (char *)in + got, in_len - got, MSG_DONTWAIT);
            if (k == 0)
                return bmpi_err_set(MPI_ERR_OTHER, "the other job closed the connection");
            if (k < 0 && errno != EAGAIN && errno != EINTR)
                return sock_fail(MPI_ERR_OTHER, "receive from the other job");
            got += k > 0 ? (size_t)k : 0;
        }
    }
    return BMPI_OK;
}

static int swap_bytes(int fd, const void *out, size_t out_len, void *in, size_t in_len)
{
    return swap_bytes_until(fd, out, out_len, in, in_len, 0);
}

/* The hellos; until as for swap_bytes_until. */
static int swap_hello(int fd, uint64_t nonce, struct hello *theirs, double until)
{
    struct hello mine = {.magic = HELLO_MAGIC, .nonce = nonce, .job = bmpi_world.job_id, .rank = bmpi_world.rank};
    int err = swap_bytes_until(fd, &mine, sizeof(mine), theirs, sizeof(*theirs), until);
    if (err)
        return err;
    if (theirs->magic != HELLO_MAGIC)
        return bmpi_err_set(MPI_ERR_PORT, "the other end of the connection is not a bmpi process");
    if (theirs->nonce != nonce)
        return bmpi_err_set(MPI_ERR_PORT, "the other end presented the nonce of another port");
    return BMPI_OK;
}

/* ---- ports ---------------------------------------------------------- */

/* The addresses others may reach this host at, best first: IPv4 then
 * global IPv6 of the interfaces that are up, loopback last (a process of
 * this host can always use it), IPv6 in brackets, ',' between them, as
 * many as fit in a port name. The host's name is not asked: it may
 * resolve to a loopback address (Debian's 127.0.1.1) or not at all. */
static void reachable_addresses(char *list, size_t len)
{
    struct ifaddrs *ifs = NULL;
    size_t off = 0;
    list[0] = '\0';
    if (getifaddrs(&ifs) != 0)
        ifs = NULL;
    for (int pass = 0; pass < 3; pass++) {
        for (const struct ifaddrs *i = ifs; i != NULL; i = i->ifa_next) {
            if (i->ifa_addr == NULL || !(i->ifa_flags & IFF_UP) || ((i->ifa_flags & IFF_LOOPBACK) != 0) != (pass == 2))
                continue;
            char addr[INET6_ADDRSTRLEN + 2], text[INET6_ADDRSTRLEN];
            int family = i->ifa_addr->sa_family;
            if (family == AF_INET && pass != 1) {
                inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)i->ifa_addr)->sin_addr, addr, sizeof(addr));
            } else if (family == AF_INET6 && pass == 1) {
                const struct in6_addr *a6 = &((const struct sockaddr_in6 *)(const void *)i->ifa_addr)->sin6_addr;
                if (IN6_IS_ADDR_LINKLOCAL(a6))
                    continue;
                inet_ntop(AF_INET6, a6, text, sizeof(text));
                snprintf(addr, sizeof(addr), "[%s]", text);
            } else {
                continue;
            }
            if (off + strlen(addr) + 2 < len)
                off += (size_t)snprintf(list + off, len - off, "%s%s", off ? "," : "", addr);
        }
    }
    freeifaddrs(ifs);
    if (off == 0)
        snprintf(list, len, "127.0.0.1");
}

/* "bmpi-port:<address>[,<address>...]:<port>:<nonce>". */
static void port_name(struct port *p, int tcp_port)
{
    char addrs[MPI_MAX_PORT_NAME - 40];
    reachable_addresses(addrs, sizeof(addrs));
    snprintf(p->name, sizeof(p->name), "%s%s:%d:%016" PRIx64, PORT_PREFIX, addrs, tcp_port, p->nonce);
}

/* A listening socket on every address of this host (IPv4 and IPv6). */
static int listen_here(struct port *p)
{
    struct sockaddr_storage ss = {0};
    socklen_t len;
    int zero = 0;
    p->fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (p->fd >= 0) {
        setsockopt(p->fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
        ((struct sockaddr_in6 *)&ss)->sin6_family = AF_INET6;
        ((struct sockaddr_in6 *)&ss)->sin6_addr = in6addr_any;
        len = sizeof(struct sockaddr_in6);
    } else {
        p->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ((struct sockaddr_in *)&ss)->sin_family = AF_INET;
        ((struct sockaddr_in *)&ss)->sin_addr.s_addr = htonl(INADDR_ANY);
        len = sizeof(struct sockaddr_in);
    }
    if (p->fd < 0)
        return sock_fail(MPI_ERR_OTHER, "socket for a port");
    if (bind(p->fd, (struct sockaddr *)&ss, len) || listen(p->fd, 16) ||
        getsockname(p->fd, (struct sockaddr *)&ss, &len))
        return sock_fail(MPI_ERR_OTHER, "listening socket for a port");
    port_name(p, ntohs(((struct sockaddr_in *)&ss)->sin_port)); /* same place in sockaddr_in6 */
    return BMPI_OK;
}

static struct port *find_port(const char *name)
{
    for (struct port *p = dpm.ports; p; p = p->next)
        if (strcmp(p->name, name) == 0)
            return p;
    return NULL;
}

/* A new port of this process's, in dpm.ports. */
static int open_port(struct port **out)
{
    struct port *p = calloc(1, sizeof(*p));
    if (!p)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory");
    p->fd = -1;
    while (getrandom(&p->nonce, sizeof(p->nonce), 0) != (ssize_t)sizeof(p->nonce) || !p->nonce)
        ;
    int err = listen_here(p);
    if (err) {
        if (p->fd >= 0)
            close(p->fd);
        free(p);
        return err;
    }
    p->next = dpm.ports;
    dpm.ports = p;
    *out = p;
    return BMPI_OK;
}

static bool close_port(const char *name)
{
    for (struct port **pp = &dpm.ports; *pp; pp = &(*pp)->next) {
        struct port *p = *pp;
        if (strncmp(p->name, name, MPI_MAX_PORT_NAME) == 0) {
            *pp = p->next;
            close(p->fd);
            free(p);
            return true;
        }
    }
    return false;
}

BMPI_API(MPI_Open_port)
int PMPI_Open_port(MPI_Info info, char *port_name)
{
    const char *fn = "MPI_Open_port";
    if (!bmpi_initialized())
        return bmpi_err_noobj(MPI_ERR_OTHER, fn, "MPI is not initialized");
    if (info != MPI_INFO_NULL && !bmpi_info_lookup(info))
        return bmpi_err_noobj(MPI_ERR_INFO, fn, "invalid info 0x%x", (unsigned)info);
    if (!port_name)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "port_name is NULL");
    struct port *p;
    int err = open_port(&p);
    if (err)
        return bmpi_err_noobj(err, fn, NULL);
    memcpy(port_name, p->name, strlen(p->name) + 1);
    return MPI_SUCCESS;
}

BMPI_API(MPI_Close_port)
int PMPI_Close_port(const char *port_name)
{
    const char *fn = "MPI_Close_port";
    if (!bmpi_initialized())
        return bmpi_err_noobj(MPI_ERR_OTHER, fn, "MPI is not initialized");
    if (!port_name)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "port_name is NULL");
    if (close_port(port_name))
        return MPI_SUCCESS;
    return bmpi_err_noobj(MPI_ERR_PORT, fn, "'%.*s' is not a port this process opened (or it was closed)",
                          MPI_MAX_PORT_NAME - 1, port_name);
}

void bmpi_dpm_finalize(void)
{
    while (dpm.ports) {
        struct port *p = dpm.ports;
        dpm.ports = p->next;
        close(p->fd);
        free(p);
    }
}

/* The accepting root: the next connection to port that presents its
 * nonce (strangers are dropped). */
static int accept_on(const char *name, int *fd, struct hello *theirs)
{
    struct port *p = find_port(name);
    if (!p)
        return bmpi_err_set(MPI_ERR_PORT, "'%.*s' is not a port this process has open", MPI_MAX_PORT_NAME - 1, name);
    for (;;) {
        if (wait_fd(p->fd, POLLIN))
            return sock_fail(MPI_ERR_OTHER, "waiting for a connection on a port");
        *fd = accept4(p->fd, NULL, NULL, SOCK_CLOEXEC);
        if (*fd < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED)
                continue;
            return sock_fail(MPI_ERR_OTHER, "accept on a port");
        }
        /* a connector speaks first thing: one that does not is dropped */
        if (swap_hello(*fd, p->nonce, theirs, PMPI_Wtime() + HELLO_TIMEOUT_S) == BMPI_OK)
            return BMPI_OK;
        close(*fd);
    }
}

/* Split a port name into its address list, TCP port and nonce. */
static int parse_port(const char *name, char *hosts, size_t hosts_len, char *service, size_t service_len,
                      uint64_t *nonce)
{
    size_t plen = strlen(PORT_PREFIX);
    const char *bad = "it is not of the form " PORT_PREFIX "<address>[,<address>...]:<port>:<nonce> that "
                      "MPI_Open_port gives";
    if (strncmp(name, PORT_PREFIX, plen) != 0)
        return bmpi_err_set(MPI_ERR_PORT, "port name '%.*s': %s", MPI_MAX_PORT_NAME - 1, name, bad);
    const char *addr = name + plen, *last = strrchr(addr, ':');
    const char *mid = last ? last - 1 : NULL;
    while (mid && mid > addr && *mid != ':')
        mid--;
    char *end;
    errno = 0;
    *nonce = last ? strtoull(last + 1, &end, 16) : 0;
    if (!last || !mid || mid <= addr || errno || *end || !*nonce || (size_t)(last - mid - 1) >= service_len ||
        (size_t)(mid - addr) >= hosts_len)
        return bmpi_err_set(MPI_ERR_PORT, "port name '%.*s': %s", MPI_MAX_PORT_NAME - 1, name, bad);
    memcpy(hosts, addr, (size_t)(mid - addr));
    hosts[mid - addr] = '\0';
    memcpy(service, mid + 1, (size_t)(last - mid - 1));
    service[last - mid - 1] = '\0';
    return BMPI_OK;
}

/* A connection to one address of a port ("192.0.2.1" or "[2001:db8::1]"),
 * within CONNECT_MS; -1 with errno. */
#define CONNECT_MS 3000
static int connect_address(const char *address, const char *service)
{
    char host[INET6_ADDRSTRLEN + 2];
    size_t n = strlen(address);
    if (n >= 2 && address[0] == '[' && address[n - 1] == ']')
        snprintf(host, sizeof(host), "%.*s", (int)(n - 2), address + 1);
    else
        snprintf(host, sizeof(host), "%s", address);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV}, *res = NULL;
    if (getaddrinfo(host, service, &hints, &res) != 0) {
        errno = EINVAL;
        return -1;
    }
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int rc = fd < 0 ? -1 : connect(fd, res->ai_addr, res->ai_addrlen);
    freeaddrinfo(res);
    if (rc != 0 && fd >= 0 && errno == EINPROGRESS) {
        struct pollfd pf = {.fd = fd, .events = POLLOUT};
        int err = ETIMEDOUT;
        socklen_t el = sizeof(err);
        if (poll(&pf, 1, CONNECT_MS) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err == 0)
            rc = 0;
        else
            errno = err;
    }
    if (rc != 0) {
        int saved = errno;
        if (fd >= 0)
            close(fd);
        errno = saved;
        return -1;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
}

/* The connecting root: a connection to the port (its addresses in turn),
 * and the hellos. */
static int connect_to(const char *name, int *fd, struct hello *theirs)
{
    char hosts[MPI_MAX_PORT_NAME], service[8], why[MPI_MAX_PORT_NAME] = "";
    uint64_t nonce = 0;
    int err = parse_port(name, hosts, sizeof(hosts), service, sizeof(service), &nonce);
    if (err)
        return err;
    *fd = -1;
    size_t off = 0;
    char *save = NULL;
    for (char *a = strtok_r(hosts, ",", &save); a != NULL && *fd < 0; a = strtok_r(NULL, ",", &save)) {
        *fd = connect_address(a, service);
        if (*fd < 0 && off < sizeof(why))
            off += (size_t)snprintf(why + off, sizeof(why) - off, "%s%s: %s", off ? "; " : "", a, strerror(errno));
    }
    if (*fd < 0)
        return bmpi_err_set(MPI_ERR_PORT, "port '%s': nobody listens there (%s): the port was never opened, or "
                            "is closed", name, why);
    /* the owner of the port says hello once it accepts: no limit */
    return swap_hello(*fd, nonce, theirs, 0);
}

/* ---- the agreement of the two groups --------------------------------- */

static int run_built(struct bmpi_sched *s, int err)
{
    if (err) {
        bmpi_sched_destroy(s);
        return err;
    }
    return bmpi_sched_run(s);
}

static int group_band(struct bmpi_comm *c, uint64_t *mask)
{
    struct bmpi_sched s;
    bmpi_sched_init(&s, c);
    bmpi_sched_set_op(&s, bmpi_op_get(MPI_BAND));
    return run_built(&s, bmpi_coll_allreduce(&s, MPI_IN_PLACE, mask, BMPI_CTX_WORDS, MPI_UINT64_T));
}

static int group_bcast(struct bmpi_comm *c, void *buf, size_t bytes, int root)
{
    struct bmpi_sched s;
    bmpi_sched_init(&s, c);
    return run_built(&s, bmpi_coll_bcast(&s, buf, bytes, MPI_BYTE, root));
}

static int group_gather(struct bmpi_comm *c, const void *mine, void *all, size_t bytes, int root)
{
    struct bmpi_sched s;
    bmpi_sched_init(&s, c);
    return run_built(&s, bmpi_coll_gather(&s, mine, bytes, MPI_BYTE, all, bytes, MPI_BYTE, root));
}

/* How the root reaches the other root: by accepting on a port, connecting
 * to one, or over the program's socket (join). */
enum bridge_kind { BRIDGE_ACCEPT, BRIDGE_CONNECT, BRIDGE_JOIN };

struct bridge {
    enum bridge_kind kind;
    const char *port; /* ACCEPT, CONNECT */
    int fd;           /* JOIN; the others' connection, once made */
    int err;          /* the root's arguments are bad: this class, bmpi_err_reason() says why */
};

/* This process as a member: its card, or card_len 0 and why. */
static int describe_me(struct member *me)
{
    memset(me, 0, sizeof(*me));
    me->job = bmpi_world.job_id;
    me->rank = bmpi_world.rank;
    size_t len = 0;
    int err = bmpi_tl_open_other_jobs();
    if (!err)
        err = bmpi_tl_card(me->card, &len);
    me->card_len = err ? 0 : (uint32_t)len;
    if (err)
        snprintf((char *)me->card, sizeof(me->card), "%s", bmpi_err_reason());
    return err;
}

static int open_bridge(struct bridge *b)
{
    struct hello theirs;
    switch (b->kind) {
    case BRIDGE_ACCEPT: return accept_on(b->port, &b->fd, &theirs);
    case BRIDGE_CONNECT: return connect_to(b->port, &b->fd, &theirs);
    default: return swap_hello(b->fd, 0, &theirs, 0);
    }
}

/* The root: its group's side (members gathered in ours_m) goes to the
 * other root, whose side comes back in *theirs and *theirs_m (malloc'ed).
 * A failure of either side ends up in theirs->errclass and why; a side
 * that failed still tells the other, so that neither waits forever. */
static void root_exchange(struct bridge *b, struct side *ours, const struct member *ours_m, int root,
                          const char *root_why, struct side *theirs, struct member **theirs_m)
{
    *theirs_m = NULL;
    for (int i = 0; i < ours->n && !ours->errclass; i++) {
        if (ours_m[i].card_len)
            continue;
        /* the root's own reason whole, another member's as far as its card holds it */
        int most = i == root ? (int)strlen(root_why) : (int)sizeof(ours_m[i].card) - 1;
        ours->errclass = MPI_ERR_OTHER;
        snprintf(ours->why, sizeof(ours->why), "process %d of the %s group: %.*s", i,
                 b->kind == BRIDGE_CONNECT ? "connecting" : b->kind == BRIDGE_ACCEPT ? "accepting" : "joining", most,
                 i == root ? root_why : (const char *)ours_m[i].card);
    }
    int err = b->err ? b->err : open_bridge(b);
    if (!err)
        err = swap_bytes(b->fd, ours, sizeof(*ours), theirs, sizeof(*theirs));
    if (err)
        goto failed;
    if (ours->errclass) {
        theirs->errclass = ours->errclass;
        memcpy(theirs->why, ours->why, sizeof(theirs->why));
        return;
    }
    theirs->why[sizeof(theirs->why) - 1] = '\0';
    if (theirs->errclass)
        return;
    if (theirs->n <= 0 || theirs->n > BMPI_MAX_GROUP)
        err = bmpi_err_set(MPI_ERR_OTHER, "the other side announced %d members", (int)theirs->n);
    else if (!(*theirs_m = malloc((size_t)theirs->n * sizeof(**theirs_m))))
        err = bmpi_err_set(MPI_ERR_NO_MEM, "out of memory for the %d members of the other group", theirs->n);
    else
        err = swap_bytes(b->fd, ours_m, (size_t)ours->n * sizeof(*ours_m), *theirs_m,
                         (size_t)theirs->n * sizeof(**theirs_m));
    if (!err)
        return;
failed:
    theirs->errclass = err;
    snprintf(theirs->why, sizeof(theirs->why), "%s", bmpi_err_reason());
    free(*theirs_m);
    *theirs_m = NULL;
}

/* Every process: the other group's members become peers. */
static int add_members(const struct member *m, int n, int *index)
{
    for (int i = 0; i < n; i++) {
        int err = bmpi_tl_add_process(m[i].job, m[i].rank, m[i].card, m[i].card_len, &index[i]);
        if (err)
            return err;
    }
    return BMPI_OK;
}

/* The intercommunicator from theirs (known on every process now). */
static int build_from(struct bmpi_comm *c, struct side *ours, const struct side *theirs, const struct member *m,
                      struct bmpi_comm **out)
{
    int *index = malloc((size_t)theirs->n * sizeof(int));
    if (!index)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory");
    int err = add_members(m, theirs->n, index);
    uint32_t id;
    for (int w = 0; w < BMPI_CTX_WORDS; w++)
        ours->mask[w] &= theirs->mask[w];
    if (!err)
        err = bmpi_ctx_reserve_lowest(ours->mask, &id);
    if (!err)
        err = bmpi_intercomm_build(c, index, theirs->n, id, out);
    free(index);
    return err;
}

/* Collective over c: the intercommunicator between c's group and the
 * group on the other side of the bridge, which the root makes. */
static int connect_groups(struct bmpi_comm *c, int root, struct bridge *b, struct bmpi_comm **out)
{
    struct member me, *ours_m = NULL, *theirs_m = NULL;
    struct side ours = {.n = c->size}, theirs = {0};
    char my_why[sizeof(ours.why)] = "";
    /* card_len 0 tells the root; the root keeps its own reason whole */
    int err = describe_me(&me);
    if (err)
        snprintf(my_why, sizeof(my_why), "%s", bmpi_err_reason());
    err = BMPI_OK;
    bmpi_ctx_free_mask(ours.mask);
    if ((err = group_band(c, ours.mask)))
        return err;
    if (c->rank == root && !(ours_m = malloc((size_t)c->size * sizeof(*ours_m)))) {
        ours.errclass = MPI_ERR_NO_MEM;
        snprintf(ours.why, sizeof(ours.why), "out of memory");
    }
    struct member scratch;
    if ((err = group_gather(c, &me, ours_m ? (void *)ours_m : &scratch, sizeof(me), root))) {
        free(ours_m);
        return err;
    }
    if (c->rank == root)
        root_exchange(b, &ours, ours_m, root, my_why, &theirs, &theirs_m);
    free(ours_m);
    err = group_bcast(c, &theirs, sizeof(theirs), root);
    if (!err && theirs.errclass)
        err = bmpi_err_set(theirs.errclass, "%s", theirs.why);
    if (!err && c->rank != root && !(theirs_m = malloc((size_t)theirs.n * sizeof(*theirs_m))))
        err = bmpi_err_set(MPI_ERR_NO_MEM, "out of memory"); /* the broadcast below is lost then */
    if (!err)
        err = group_bcast(c, theirs_m, (size_t)theirs.n * sizeof(*theirs_m), root);
    if (!err)
        err = build_from(c, &ours, &theirs, theirs_m, out);
    free(theirs_m);
    return err;
}

/* ---- accept, connect, join ------------------------------------------ */

/* What only the root of accept and connect looks at: a bad one is its
 * group's error, so it travels through the group's agreement. */
static int check_root_args(const char *port_name, MPI_Info info)
{
    if (info != MPI_INFO_NULL && !bmpi_info_lookup(info))
        return bmpi_err_set(MPI_ERR_INFO, "invalid info 0x%x at the root", (unsigned)info);
    if (!port_name)
        return bmpi_err_set(MPI_ERR_ARG, "port_name is NULL at the root");
    if (!memchr(port_name, '\0', MPI_MAX_PORT_NAME))
        return bmpi_err_set(MPI_ERR_PORT, "port_name is longer than MPI_MAX_PORT_NAME - 1 (%d)",
                            MPI_MAX_PORT_NAME - 1);
    return BMPI_OK;
}

static int accept_or_connect(const char *fn, enum bridge_kind kind, const char *port_name, MPI_Info info, int root,
                             MPI_Comm comm, MPI_Comm *newcomm)
{
    struct bmpi_comm *c, *inter;
    int err = bmpi_check_intracomm(comm, fn, &c);
    if (err)
        return err;
    if (!newcomm)
        return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "newcomm is NULL");
    if (root < 0 || root >= c->size)
        return bmpi_err_comm(comm, MPI_ERR_ROOT, fn, "invalid root %d (communicator size %d)", root, c->size);
    struct bridge b = {.kind = kind, .port = port_name, .fd = -1};
    if (c->rank == root)
        b.err = check_root_args(port_name, info);
    err = connect_groups(c, root, &b, &inter);
    if (b.fd >= 0)
        close(b.fd);
    if (err)
        return bmpi_err_comm(comm, err, fn, NULL);
    *newcomm = inter->handle;
    return MPI_SUCCESS;
}

BMPI_API(MPI_Comm_accept)
int PMPI_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    return accept_or_connect("MPI_Comm_accept", BRIDGE_ACCEPT, port_name, info, root, comm, newcomm);
}

BMPI_API(MPI_Comm_connect)
int PMPI_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    return accept_or_connect("MPI_Comm_connect", BRIDGE_CONNECT, port_name, info, root, comm, newcomm);
}

/* Both sides are MPI_COMM_SELF and talk over the program's socket, so
 * neither accepts: the exchange is symmetric. */
BMPI_API(MPI_Comm_join)
int PMPI_Comm_join(int fd, MPI_Comm *intercomm)
{
    const char *fn = "MPI_Comm_join";
    if (!bmpi_initialized())
        return bmpi_err_noobj(MPI_ERR_OTHER, fn, "MPI is not initialized");
    if (!intercomm)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "intercomm is NULL");
    int type;
    socklen_t len = sizeof(type);
    if (fd < 0 || getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) || type != SOCK_STREAM)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "fd %d is not a connected stream socket", fd);
    struct bridge b = {.kind = BRIDGE_JOIN, .fd = fd};
    struct bmpi_comm *inter;
    int err = connect_groups(bmpi_comm_get(MPI_COMM_SELF), 0, &b, &inter);
    if (err) {
        *intercomm = MPI_COMM_NULL;
        return bmpi_err_noobj(err, fn, NULL);
    }
    *intercomm = inter->handle;
    return MPI_SUCCESS;
}

/* ---- spawning ------------------------------------------------------ */

/* The variable that gives spawned processes their parent's port. */
#define PARENT_PORT_VAR "BMPI_PARENT_PORT"

int bmpi_dpm_init(void)
{
    const char *port = bmpi_env_string(PARENT_PORT_VAR);
    if (!port)
        return BMPI_OK;
    char name[MPI_MAX_PORT_NAME];
    snprintf(name, sizeof(name), "%s", port);
    /* not for what this process starts in turn */
    unsetenv(PARENT_PORT_VAR);
    struct bridge b = {.kind = BRIDGE_CONNECT, .port = name, .fd = -1};
    struct bmpi_comm *inter;
    int err = connect_groups(bmpi_comm_get(MPI_COMM_WORLD), 0, &b, &inter);
    if (b.fd >= 0)
        close(b.fd);
    if (err)
        return bmpi_err_set(err, "connecting to the parent job (MPI_Comm_spawn's port %s): %s", name,
                            bmpi_err_reason());
    snprintf(inter->name, sizeof(inter->name), "MPI_COMM_PARENT");
    dpm.parent = inter->handle;
    dpm.parent_obj = inter;
    return BMPI_OK;
}

BMPI_API(MPI_Comm_get_parent)
int PMPI_Comm_get_parent(MPI_Comm *parent)
{
    const char *fn = "MPI_Comm_get_parent";
    if (!bmpi_initialized())
        return bmpi_err_noobj(MPI_ERR_OTHER, fn, "MPI is not initialized");
    if (!parent)
        return bmpi_err_noobj(MPI_ERR_ARG, fn, "parent is NULL");
    /* MPI_COMM_NULL once the program has freed or disconnected it */
    if (dpm.parent != MPI_COMM_NULL && bmpi_comm_get(dpm.parent) != dpm.parent_obj)
        dpm.parent = MPI_COMM_NULL;
    if (dpm.parent == MPI_COMM_NULL && bmpi_pmix_spawned() && !dpm.parent_obj)
        return bmpi_err_noobj(MPI_ERR_OTHER, fn,
                              "this job was started by PMIx_Spawn, but not by MPI_Comm_spawn of bmpi (no "
                              "parent port to connect to)");
    *parent = dpm.parent;
    return MPI_SUCCESS;
}

/* The command as the launcher should run it: looked up in the
 * directories of the `path` info key (':'-separated) when it has no '/'
 * and is there; else as given (the launcher searches its PATH). */
static char *resolve_command(const char *cmd, const char *path)
{
    if (path && !strchr(cmd, '/')) {
        for (const char *p = path; *p;) {
            size_t len = strcspn(p, ":");
            char *cand;
            if (len && asprintf(&cand, "%.*s/%s", (int)len, p, cmd) >= 0) {
                if (access(cand, X_OK) == 0)
                    return cand;
                free(cand);
            }
            p += len + (p[len] == ':');
        }
    }
    return strdup(cmd);
}

/* wdir relative to this process's working directory. */
static char *absolute_dir(const char *dir)
{
    if (!dir || dir[0] == '/')
        return dir ? strdup(dir) : NULL;
    char cwd[4096];
    char *abs;
    if (!getcwd(cwd, sizeof(cwd)) || asprintf(&abs, "%s/%s", cwd, dir) < 0)
        return NULL;
    return abs;
}

struct spawn_args {
    int count;
    char **commands;
    char ***argvs;    /* NULL: MPI_ARGV_NULL for all */
    const int *maxprocs;
    const MPI_Info *infos;
};

static void free_apps(struct bmpi_spawn_app *apps, int n)
{
    for (int a = 0; a < n; a++) {
        free((char *)apps[a].cmd);
        free(apps[a].argv);
        free((char *)apps[a].wdir);
        free((char *)apps[a].host);
    }
    free(apps);
}

/* The apps of args; env (shared) gives the children the parent's port. */
static int build_apps(const struct spawn_args *args, char **env, struct bmpi_spawn_app **out)
{
    struct bmpi_spawn_app *apps = calloc((size_t)args->count, sizeof(*apps));
    if (!apps)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory");
    for (int a = 0; a < args->count; a++) {
        struct bmpi_info *inf = args->infos[a] == MPI_INFO_NULL ? NULL : bmpi_info_lookup(args->infos[a]);
        const char *wdir = inf ? bmpi_info_value(inf, "wdir") : NULL;
        const char *host = inf ? bmpi_info_value(inf, "host") : NULL;
        char **uargv = args->argvs ? args->argvs[a] : NULL;
        int nargs = 0;
        while (uargv && uargv[nargs])
            nargs++;
        apps[a].cmd = resolve_command(args->commands[a], inf ? bmpi_info_value(inf, "path") : NULL);
        apps[a].argv = calloc((size_t)nargs + 2, sizeof(char *));
        apps[a].wdir = absolute_dir(wdir);
        apps[a].host = host ? strdup(host) : NULL;
        apps[a].maxprocs = args->maxprocs[a];
        apps[a].env = env;
        if (!apps[a].cmd || !apps[a].argv || (wdir && !apps[a].wdir) || (host && !apps[a].host)) {
            free_apps(apps, a + 1);
            return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory");
        }
        apps[a].argv[0] = (char *)apps[a].cmd;
        if (nargs > 0)
            memcpy(apps[a].argv + 1, uargv, (size_t)nargs * sizeof(char *));
    }
    *out = apps;
    return BMPI_OK;
}

/* What only the root reads. */
static int check_spawn_root_args(const struct spawn_args *args, int *total)
{
    *total = 0;
    if (args->count < 1)
        return bmpi_err_set(MPI_ERR_ARG, "count %d at the root: at least one command is needed", args->count);
    if (!args->commands || !args->maxprocs || !args->infos)
        return bmpi_err_set(MPI_ERR_ARG, "array_of_commands, array_of_maxprocs or array_of_info is NULL at the root");
    for (int a = 0; a < args->count; a++) {
        if (!args->commands[a] || !args->commands[a][0])
            return bmpi_err_set(MPI_ERR_ARG, "command %d is NULL or empty at the root", a);
        if (args->maxprocs[a] < 1 || args->maxprocs[a] > INT32_MAX - *total)
            return bmpi_err_set(MPI_ERR_ARG, "invalid maxprocs %d of command %d ('%s') at the root",
                                args->maxprocs[a], a, args->commands[a]);
        if (args->infos[a] != MPI_INFO_NULL && !bmpi_info_lookup(args->infos[a]))
            return bmpi_err_set(MPI_ERR_INFO, "invalid info 0x%x of command %d at the root",
                                (unsigned)args->infos[a], a);
        *total += args->maxprocs[a];
    }
    return BMPI_OK;
}

/* The root: start the processes, which connect to port. */
static int root_spawn(const struct spawn_args *args, const struct port *port)
{
    char *var;
    if (asprintf(&var, "%s=%s", PARENT_PORT_VAR, port->name) < 0)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory");
    char *env[] = {var, NULL};
    struct bmpi_spawn_app *apps = NULL;
    int err = build_apps(args, env, &apps);
    if (!err) {
        err = bmpi_pmix_spawn(apps, args->count);
        free_apps(apps, args->count);
    }
    free(var);
    return err;
}

/* Collective over comm: the root spawns, then accepts the children's
 * connection on a port of its own; errors at the root reach every member
 * through the agreement. errcodes (at the root): one per process. */
static int spawn(const char *fn, const struct spawn_args *args, int root, MPI_Comm comm, MPI_Comm *intercomm,
                 int *errcodes)
{
    struct bmpi_comm *c, *inter = NULL;
    int err = bmpi_check_intracomm(comm, fn, &c);
    if (err)
        return err;
    if (!intercomm)
        return bmpi_err_comm(comm, MPI_ERR_ARG, fn, "intercomm is NULL");
    if (root < 0 || root >= c->size)
        return bmpi_err_comm(comm, MPI_ERR_ROOT, fn, "invalid root %d (communicator size %d)", root, c->size);
    struct bridge b = {.kind = BRIDGE_ACCEPT, .fd = -1};
    struct port *port = NULL;
    int total = 0;
    if (c->rank == root) {
        b.err = check_spawn_root_args(args, &total);
        if (!b.err)
            b.err = open_port(&port);
        if (!b.err)
            b.err = root_spawn(args, port);
        b.port = port ? port->name : NULL;
    }
    err = connect_groups(c, root, &b, &inter);
    if (b.fd >= 0)
        close(b.fd);
    if (port)
        close_port(port->name);
    if (c->rank == root && errcodes != MPI_ERRCODES_IGNORE)
        for (int i = 0; i < total; i++)
            errcodes[i] = err ? MPI_ERR_SPAWN : MPI_SUCCESS;
    *intercomm = err ? MPI_COMM_NULL : inter->handle;
    /* bad arguments keep their class; whatever kept the children from
     * starting or connecting is MPI_ERR_SPAWN */
    bool own_class = err == MPI_ERR_ARG || err == MPI_ERR_INFO || err == MPI_ERR_NO_MEM;
    if (err)
        return bmpi_err_comm(comm, own_class ? err : MPI_ERR_SPAWN, fn, NULL);
    return MPI_SUCCESS;
}

BMPI_API(MPI_Comm_spawn)
int PMPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm,
                    MPI_Comm *intercomm, int array_of_errcodes[])
{
    char *cmd = (char *)command;
    char **argvs[1] = {argv};
    struct spawn_args args = {.count = 1, .commands = &cmd, .argvs = argv == MPI_ARGV_NULL ? NULL : argvs,
                              .maxprocs = &maxprocs, .infos = &info};
    return spawn("MPI_Comm_spawn", &args, root, comm, intercomm, array_of_errcodes);
}

BMPI_API(MPI_Comm_spawn_multiple)
int PMPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
                             const int array_of_maxprocs[], const MPI_Info array_of_info[], int root,
                             MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
    struct spawn_args args = {.count = count, .commands = array_of_commands,
                              .argvs = array_of_argv == MPI_ARGVS_NULL ? NULL : array_of_argv,
                              .maxprocs = array_of_maxprocs, .infos = array_of_info};
    return spawn("MPI_Comm_spawn_multiple", &args, root, comm, intercomm, array_of_errcodes);
}
