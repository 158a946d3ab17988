/*
 * ofi: the libfabric transport (docs/ofi.md).
 *
 * Provider: the first of a preference list (or BMPI_OFI_PROVIDER) whose
 * fi_getinfo gives an FI_EP_RDM endpoint with FI_MSG and send-after-send
 * order; with FI_RMA when it has it (then get/put are fi_read/fi_write),
 * without otherwise (the runtime then streams fragments).
 *
 * Active messages: [struct ofi_wire][runtime header][payload], up to
 * buf_size bytes. Small ones are injected from the stack, larger
 * ones are copied into a send buffer of a registered pool and leave with
 * fi_send; the runtime may reuse its memory as soon as am_send returns.
 * Receives land in a pool of buffers of buf_size bytes, posted at open and
 * posted again once their message has been delivered.
 *
 * When the provider pushes back (-FI_EAGAIN, or no free send buffer),
 * am_send reads the transmit completion queue once — which drives the
 * provider's progress and frees send buffers — tries once more and then
 * returns BMPI_TL_EAGAIN; the runtime keeps the message and retries after
 * progress(). RMA operations that meet -FI_EAGAIN wait in a list of their
 * own and are posted again from progress(), since the runtime expects get()
 * to take the operation. No callback of the runtime ever runs inside
 * am_send/get/put: completions found there are kept for progress().
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "runtime/error.h"
#include "runtime/pmix.h"
#include "runtime/world.h"
#include "transport/ofi/ofi.h"

#define OFI_DEFAULT_MAX_AM (64u * 1024u)
#define OFI_DEFAULT_EAGER (16u * 1024u)
#define OFI_DEFAULT_RX_BUFS 32      /* receive buffers without FI_MULTI_RECV */
#define OFI_DEFAULT_MULTI_BUFS 4    /* with FI_MULTI_RECV ... */
#define OFI_DEFAULT_MULTI_SIZE (1u << 20) /* ... of this many bytes */
#define OFI_DEFAULT_RMA_LIMIT (1ul << 30)
#define OFI_SOCKET_RMA_LIMIT (1ul << 20)    /* providers over TCP sockets: see open */
#define OFI_BBR_RMA_PIECE (256u * 1024u)     /* TCP sockets under BBR: see open */
#define OFI_LOCAL_WRITE_MAX (64u * 1024u)   /* writes flushed by a read: see post_write */
#define OFI_DEFAULT_TX_BUFS 16      /* large send buffers; 4 times as many small */
#define OFI_TX_SMALL 2048           /* bytes in a small send buffer */
#define OFI_DEFAULT_MR_CACHE 256
#define OFI_INJECT_STACK 4096 /* largest inject we stage on the stack */
#define OFI_INJECT_TOKENS 256 /* injected sends in flight */
#define OFI_CQ_BATCH 16
#define OFI_RX_PER_PROGRESS 64 /* deliveries per progress() call, for fairness */

/* "net" is libfabric 1.17's native RDM over TCP (later folded into "tcp"):
 * lower latency than tcp;ofi_rxm at 8 B, same bandwidth (docs/ofi.md,
 * "Provider choice" and "Measurements"). */
const char *const ofi_preference[] = {"verbs;ofi_rxm", "efa", "psm3", "net", "tcp;ofi_rxm", "shm"};
const int ofi_npreference = (int)(sizeof(ofi_preference) / sizeof(ofi_preference[0]));

/* What rank publishes under OFI_PMIX_KEY. */
struct ofi_blob {
    char prov[OFI_PROV_MAX];
    uint32_t addrlen;
    unsigned char addr[];
};

/* libfabric's own variable, read as libfabric does (not one of bmpi's:
 * a value it cannot read leaves the default). */
static size_t rxm_buffer_size(void)
{
    const char *v = getenv("FI_OFI_RXM_BUFFER_SIZE");
    char *end;
    unsigned long long x = v ? strtoull(v, &end, 0) : 0;
    return v && *v && !*end ? (size_t)x : 16384;
}

/* Whether new TCP sockets of this network namespace use BBR, the
 * congestion control that paces each connection at the bandwidth it last
 * measured: on links of microseconds (loopback, veth) a stream of
 * megabytes then settles far below what the link carries, while bounded
 * RMA pieces keep up (docs/ofi.md, "Congestion control"). */
static bool sockets_paced_by_bbr(void)
{
    char cc[32] = "";
    FILE *f = fopen("/proc/sys/net/ipv4/tcp_congestion_control", "r");
    if (!f)
        return false;
    bool bbr = fgets(cc, sizeof(cc), f) && strncmp(cc, "bbr", 3) == 0;
    fclose(f);
    return bbr;
}

/* libfabric 1.17's net provider, fed by several connections at once
 * (ranks on three nodes or more, test/slurm/cluster.sh), now and then
 * loses a message received into a multi-receive buffer: the sender has
 * its completion, the receiver never does, and the messages after it
 * wait for their turn forever. Without FI_MULTI_RECV it did not happen.
 * Likely the slice-order bug fixed in the tcp provider that replaced it
 * (ofiwg/libfabric#9420: the release flag went with the last slice of a
 * buffer, not the last to complete). */
static bool multi_recv_reliable(const char *prov) { return strcmp(prov, "net") != 0; }

static bool verbose_here(void) { return bmpi_world.verbose >= 2 || (bmpi_world.verbose && bmpi_world.rank == 0); }

/* ------------------------------------------------------ provider choice */

static struct fi_info *make_hints(const char *prov, uint64_t caps)
{
    struct fi_info *h = fi_allocinfo();
    if (!h)
        return NULL;
    h->caps = caps;
    h->mode = FI_CONTEXT | FI_CONTEXT2;
    h->ep_attr->type = FI_EP_RDM;
    h->tx_attr->msg_order = FI_ORDER_SAS;
    h->rx_attr->msg_order = FI_ORDER_SAS;
    h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | FI_MR_ALLOCATED | FI_MR_ENDPOINT;
    h->domain_attr->threading = FI_THREAD_DOMAIN;
    h->domain_attr->av_type = FI_AV_TABLE;
    h->fabric_attr->prov_name = strdup(prov);
    if (!h->fabric_attr->prov_name) {
        fi_freeinfo(h);
        return NULL;
    }
    return h;
}

struct fi_info *ofi_try_provider(const char *prov, char *why, size_t why_len)
{
    /* The most a provider can give first: RMA with atomics, then RMA,
     * then messages alone. Ordering beyond send-after-send is not asked
     * for: shm 1.17 gives up its fast RMA (copies made by the initiator)
     * when RMA ordering is requested (docs/ofi.md, "RMA and atomics"). */
    static const uint64_t caps[] = {FI_MSG | FI_RMA | FI_ATOMIC, FI_MSG | FI_RMA, FI_MSG};
    const int ncaps = (int)(sizeof(caps) / sizeof(caps[0]));
    struct fi_info *info = NULL;
    int rc = -FI_ENODATA;
    /* off: no RMA (nor atomics), the runtime streams fragments */
    for (int i = bmpi_env_switch("BMPI_OFI_RMA") == 0 ? ncaps - 1 : 0; i < ncaps && !info; i++) {
        struct fi_info *hints = make_hints(prov, caps[i]);
        if (!hints) {
            snprintf(why, why_len, "out of memory");
            return NULL;
        }
        rc = fi_getinfo(OFI_API_VERSION, NULL, NULL, 0, hints, &info);
        fi_freeinfo(hints);
        if (rc)
            info = NULL;
    }
    if (!info) {
        snprintf(why, why_len, "fi_getinfo: %s", fi_strerror(-rc));
        return NULL;
    }
    if (!(info->tx_attr->msg_order & FI_ORDER_SAS) || !(info->rx_attr->msg_order & FI_ORDER_SAS)) {
        snprintf(why, why_len, "no send-after-send ordering (FI_ORDER_SAS)");
        fi_freeinfo(info);
        return NULL;
    }
    if (info->domain_attr->mr_mode & FI_MR_RAW) {
        snprintf(why, why_len, "needs raw memory keys (FI_MR_RAW)");
        fi_freeinfo(info);
        return NULL;
    }
    /* Keep the first entry only. */
    if (info->next) {
        struct fi_info *first = fi_dupinfo(info);
        fi_freeinfo(info);
        info = first;
        if (!info) {
            snprintf(why, why_len, "out of memory");
            return NULL;
        }
    }
    return info;
}

struct fi_info *ofi_choose_provider(char *why, size_t why_len, bool report)
{
    const char *forced = bmpi_env_string("BMPI_OFI_PROVIDER");
    char reason[160];
    if (forced) {
        struct fi_info *info = ofi_try_provider(forced, reason, sizeof(reason));
        if (!info)
            snprintf(why, why_len, "provider %s (BMPI_OFI_PROVIDER) unusable: %s", forced, reason);
        else if (report)
            fprintf(stderr, "bmpi: rank %d: ofi: provider %s (forced by BMPI_OFI_PROVIDER=%s)\n",
                    bmpi_world.rank, info->fabric_attr->prov_name, forced);
        return info;
    }
    size_t n = (size_t)snprintf(why, why_len, "no usable libfabric provider:");
    for (int i = 0; i < ofi_npreference; i++) {
        struct fi_info *info = ofi_try_provider(ofi_preference[i], reason, sizeof(reason));
        if (info) {
            if (report)
                fprintf(stderr, "bmpi: rank %d: ofi: provider %s (fabric %s, domain %s)\n", bmpi_world.rank,
                        info->fabric_attr->prov_name, info->fabric_attr->name, info->domain_attr->name);
            return info;
        }
        if (report)
            fprintf(stderr, "bmpi: rank %d: ofi: skipped %s: %s\n", bmpi_world.rank, ofi_preference[i], reason);
        if (n < why_len)
            n += (size_t)snprintf(why + n, why_len - n, " %s: %s;", ofi_preference[i], reason);
    }
    return NULL;
}

/* Is "ofi" named in BMPI_TRANSPORT? */
static bool ofi_requested(void)
{
    const char *list = bmpi_env_string("BMPI_TRANSPORT");
    if (!list)
        return false;
    for (const char *p = list; (p = strstr(p, "ofi")); p += 3)
        if ((p == list || p[-1] == ',') && (p[3] == 0 || p[3] == ','))
            return true;
    return false;
}

static int ofi_query(char *why, size_t why_len)
{
    /* libfabric's first fi_getinfo loads and initialises every provider
     * (about half a second of wall time per process here, much more when
     * many ranks share few cores): not worth it when shm reaches all. */
    if (bmpi_world.size > 0 && bmpi_world.local_size >= bmpi_world.size && !ofi_requested() &&
        !bmpi_env_string("BMPI_OFI_PROVIDER")) {
        snprintf(why, why_len,
                 "all %d ranks are on this node, where shm serves them (BMPI_TRANSPORT=ofi or "
                 "BMPI_OFI_PROVIDER uses ofi anyway)",
                 bmpi_world.size);
        return MPI_ERR_OTHER;
    }
    struct fi_info *info = ofi_choose_provider(why, why_len, false);
    if (!info)
        return MPI_ERR_OTHER;
    fi_freeinfo(info);
    return BMPI_OK;
}

/* ------------------------------------------------------------ lifecycle */

static int fi_fail(struct ofi_state *s, const char *what, int rc)
{
    return bmpi_err_set(MPI_ERR_OTHER, "ofi (%s): %s failed: %s", s->prov, what, fi_strerror(-rc));
}

static void list_push(struct ofi_list *l, struct ofi_op *op)
{
    op->next = NULL;
    if (l->tail)
        l->tail->next = op;
    else
        l->head = op;
    l->tail = op;
}

static struct ofi_op *list_pop(struct ofi_list *l)
{
    struct ofi_op *op = l->head;
    if (op) {
        l->head = op->next;
        if (!l->head)
            l->tail = NULL;
        op->next = NULL;
    }
    return op;
}

static int post_recv(struct ofi_state *s, struct ofi_op *op)
{
    ssize_t rc;
    if (s->multi_recv) {
        struct iovec iov = {.iov_base = op->buf, .iov_len = s->rx.size};
        struct fi_msg msg = {.msg_iov = &iov, .desc = &op->desc, .iov_count = 1, .addr = FI_ADDR_UNSPEC, .context = op};
        rc = fi_recvmsg(s->ep, &msg, FI_MULTI_RECV);
    } else {
        rc = fi_recv(s->ep, op->buf, s->rx.size, op->desc, FI_ADDR_UNSPEC, op);
    }
    if (rc == -FI_EAGAIN) {
        list_push(&s->repost, op);
        return BMPI_OK;
    }
    return rc ? fi_fail(s, "fi_recv", (int)rc) : BMPI_OK;
}

/* A pool of n buffers of size bytes each, registered if the provider wants
 * local registrations; send pools start with every buffer free. */
static int make_pool(struct ofi_state *s, struct ofi_pool *pool, int n, size_t size, enum ofi_op_kind kind,
                     uint64_t access)
{
    pool->n = n;
    pool->size = size;
    size_t bytes = (size_t)n * size;
    if (bytes && posix_memalign((void **)&pool->mem, 4096, bytes) != 0) {
        pool->mem = NULL;
        return bmpi_err_set(MPI_ERR_NO_MEM, "ofi: out of memory for %d buffers of %zu bytes", n, size);
    }
    pool->ops = calloc((size_t)n, sizeof(struct ofi_op));
    if (!pool->ops)
        return bmpi_err_set(MPI_ERR_NO_MEM, "ofi: out of memory");
    if (bytes && (s->mr_mode & FI_MR_LOCAL)) {
        int rc = ofi_mr_reg_raw(s, pool->mem, bytes, access, s->mrc.next_key++, &pool->mr);
        if (rc)
            return rc;
    }
    for (int i = n - 1; i >= 0; i--) {
        struct ofi_op *op = &pool->ops[i];
        op->kind = kind;
        op->pool = pool;
        op->buf = bytes ? pool->mem + (size_t)i * size : NULL;
        op->desc = pool->mr ? fi_mr_desc(pool->mr) : NULL;
        if (kind == OFI_OP_SEND) {
            op->next = pool->free;
            pool->free = op;
        }
    }
    return BMPI_OK;
}

static void free_pool(struct ofi_pool *pool)
{
    if (pool->mr)
        fi_close(&pool->mr->fid);
    pool->mr = NULL;
    free(pool->mem);
    free(pool->ops);
    pool->mem = NULL;
    pool->ops = NULL;
}

static void ofi_close(struct bmpi_tl *tl);

/* A size for people: "unbounded" for SIZE_MAX. */
static const char *size_text(size_t n, char *buf, size_t len)
{
    if (n == SIZE_MAX)
        return "unbounded";
    snprintf(buf, len, "%zu", n);
    return buf;
}

static void report_sizes(const struct ofi_state *s, const struct bmpi_tl_caps *caps)
{
    char piece[24], inflight[24];
    fprintf(stderr,
            "bmpi: rank %d: ofi: %s: mr_mode%s%s%s%s%s%s, inject %zu, max_am %zu, eager %zu, RMA %s%s%s%s, "
            "rma_limit %zu (pieces %s, in flight %s), receive buffers %d x %zu%s\n",
            bmpi_world.rank, s->prov, s->mr_mode ? "" : " none", (s->mr_mode & FI_MR_LOCAL) ? " LOCAL" : "",
            (s->mr_mode & FI_MR_VIRT_ADDR) ? " VIRT_ADDR" : "", (s->mr_mode & FI_MR_PROV_KEY) ? " PROV_KEY" : "",
            (s->mr_mode & FI_MR_ALLOCATED) ? " ALLOCATED" : "", (s->mr_mode & FI_MR_ENDPOINT) ? " ENDPOINT" : "",
            s->inject_max, caps->max_am, caps->eager_limit, s->rma ? "yes" : "no",
            (caps->flags & BMPI_TL_RMA_AMO_CPU)   ? " with atomics (on the target's CPU)"
            : (caps->flags & BMPI_TL_RMA_AMO) ? " with atomics"
                                              : "",
            (caps->flags & BMPI_TL_RMA_ORDERED)       ? ", ordered"
            : (caps->flags & BMPI_TL_RMA_AMO_ORDERED) ? ", atomics ordered"
                                                      : "",
            s->flush_by_read ? ", writes flushed by a read" : "", caps->rma_limit,
            size_text(s->rma_piece, piece, sizeof(piece)), size_text(s->rma_bytes_max, inflight, sizeof(inflight)),
            s->rx.n, s->rx.size, s->multi_recv ? " (FI_MULTI_RECV)" : "");
}

/* put() and amo() to a peer take effect in the order issued
 * (BMPI_TL_RMA_ORDERED): the provider orders every read and write, RMA
 * and atomic alike, after every earlier one, on both sides, up to the
 * largest get/put. Only what the provider answered to bmpi's hints
 * counts, and they ask for send-after-send only (see ofi_try_provider). */
static bool rma_ordered(const struct fi_info *info, size_t rma_limit)
{
    const uint64_t all = FI_ORDER_RAR | FI_ORDER_RAW | FI_ORDER_WAR | FI_ORDER_WAW;
    const struct fi_ep_attr *ep = info->ep_attr;
    return (info->tx_attr->msg_order & all) == all && (info->rx_attr->msg_order & all) == all &&
           ep->max_order_raw_size >= rma_limit && ep->max_order_war_size >= rma_limit &&
           ep->max_order_waw_size >= rma_limit;
}

/* Whether the provider applies atomics on the target's CPU with atomic
 * instructions (BMPI_TL_RMA_AMO_CPU). libfabric's software providers run
 * its util_atomic.c handlers from the target's progress, and those are
 * built on the compiler's __atomic builtins wherever the compiler has them
 * (HAVE_BUILTIN_MM_ATOMICS: gcc and clang on every CPU bmpi builds for).
 * The provider that executes an atomic is the outermost layer of a
 * layered name ("tcp;ofi_rxm": ofi_rxm). Hardware providers are left
 * out: their NICs' atomics need not be atomic with the CPU's. */
static bool amo_on_target_cpu(const char *prov_name)
{
    static const char *const software[] = {"ofi_rxm", "ofi_rxd", "tcp", "sockets", "udp", "shm", "sm2", "net"};
    const char *outer = strrchr(prov_name, ';');
    outer = outer ? outer + 1 : prov_name;
    for (size_t i = 0; i < sizeof software / sizeof *software; i++)
        if (!strcmp(outer, software[i]))
            return true;
    return false;
}

/* A provider that moves everything through TCP sockets. */
static bool over_sockets(const char *prov)
{
    return strstr(prov, "tcp") || strstr(prov, "sockets") || strcmp(prov, "net") == 0;
}

/* Writes complete once their source is free, and flush() reads behind them
 * (docs/ofi.md, "Completion"), where both hold:
 * - delivery completion would cost a message back per write: the socket
 *   providers, which ask the peer for an acknowledgement of each;
 * - the provider places a read behind the writes issued before it
 *   (read-after-write order, of RMA at least, on both sides).
 * Not under FI_MR_LOCAL, where the read's one-byte sink would need a
 * registration. BMPI_OFI_FLUSH_READ=off asks for delivery completion. */
static bool flush_by_read(const struct fi_info *info, bool sockets, uint64_t mr_mode)
{
    const uint64_t raw = FI_ORDER_RAW | FI_ORDER_RMA_RAW;
    return bmpi_env_switch("BMPI_OFI_FLUSH_READ") != 0 && sockets && !(mr_mode & FI_MR_LOCAL) &&
           (info->tx_attr->msg_order & raw) && (info->rx_attr->msg_order & raw) &&
           info->ep_attr->max_order_raw_size > 0;
}

/* amo()s to a peer take effect in issue order (BMPI_TL_RMA_AMO_ORDERED):
 * each atomic reads after the earlier ones wrote and writes after them
 * (FI_ORDER_ATOMIC_RAW, FI_ORDER_ATOMIC_WAW); an atomic's own read comes
 * before its write, so write-after-read follows. */
static bool amo_ordered(const struct fi_info *info)
{
    const uint64_t need = FI_ORDER_ATOMIC_RAW | FI_ORDER_ATOMIC_WAW;
    return (info->tx_attr->msg_order & need) == need && (info->rx_attr->msg_order & need) == need;
}

static int ofi_open(struct bmpi_tl *tl)
{
    struct ofi_state *s = calloc(1, sizeof(*s));
    if (!s)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory");
    tl->priv = s;
    char why[512];
    s->info = ofi_choose_provider(why, sizeof(why), verbose_here());
    if (!s->info) {
        int err = bmpi_err_set(MPI_ERR_OTHER, "%s", why);
        ofi_close(tl);
        return err;
    }
    struct fi_info *info = s->info;
    snprintf(s->prov, sizeof(s->prov), "%s", info->fabric_attr->prov_name);
    s->mr_mode = info->domain_attr->mr_mode;
    /* Tests: behave as for a provider that requires local registrations
     * (pools registered, get/put register their local buffer, no cache of
     * unused regions) on one that merely accepts descriptors. */
    if (bmpi_env_switch("BMPI_OFI_MR_LOCAL") == 1)
        s->mr_mode |= FI_MR_LOCAL;
    s->rma = (info->caps & FI_RMA) != 0;
    s->nranks = bmpi_world.size;
    if (ofi_order_init(&s->order, s->nranks)) {
        int err = bmpi_err_set(MPI_ERR_NO_MEM, "ofi: out of memory for %d peers", s->nranks);
        ofi_close(tl);
        return err;
    }

    /* Sizes: max_am is the largest runtime header + payload of one message. */
    size_t max_msg = info->ep_attr->max_msg_size;
    size_t max_am = bmpi_env_uint("BMPI_OFI_MAX_AM", OFI_DEFAULT_MAX_AM);
    s->buf_size = (max_am + OFI_WIRE_MAX + 63) & ~(size_t)63;
    if (max_msg && s->buf_size > max_msg)
        s->buf_size = max_msg & ~(size_t)7;
    /* ofi_rxm sends a message larger than its buffer size (16 KiB unless
     * FI_OFI_RXM_BUFFER_SIZE says otherwise) in segments, and those go
     * out only while the sender calls into the provider. The runtime may
     * stop calling (MPI_Finalize's fence right after a last send): keep
     * every active message within one rxm buffer. */
    if (strstr(info->fabric_attr->prov_name, "ofi_rxm")) {
        size_t rxm_buf = rxm_buffer_size();
        if (rxm_buf >= 1024 && s->buf_size > rxm_buf)
            s->buf_size = rxm_buf & ~(size_t)7;
    }
    if (max_am > s->buf_size - OFI_WIRE_MAX)
        max_am = s->buf_size - OFI_WIRE_MAX;
    size_t eager = bmpi_env_uint("BMPI_OFI_EAGER_LIMIT", OFI_DEFAULT_EAGER);
    if (eager > max_am - 256)
        eager = max_am - 256;
    s->inject_max = info->tx_attr->inject_size;
    if (s->inject_max > OFI_INJECT_STACK)
        s->inject_max = OFI_INJECT_STACK;
    /* FI_MULTI_RECV is a secondary capability: usable when reported, and
     * where it does not lose messages (BMPI_OFI_MULTI_RECV=1 forces it). */
    int multi = bmpi_env_switch("BMPI_OFI_MULTI_RECV");
    s->multi_recv = (info->caps & FI_MULTI_RECV) && (multi == 1 || (multi == -1 && multi_recv_reliable(s->prov)));
    int nrx = (int)bmpi_env_uint("BMPI_OFI_RX_BUFS", s->multi_recv ? OFI_DEFAULT_MULTI_BUFS : OFI_DEFAULT_RX_BUFS);
    int ntx = (int)bmpi_env_uint("BMPI_OFI_TX_BUFS", OFI_DEFAULT_TX_BUFS);
    size_t rx_size = s->buf_size;
    if (s->multi_recv) {
        rx_size = bmpi_env_uint("BMPI_OFI_MULTI_RECV_SIZE", OFI_DEFAULT_MULTI_SIZE);
        if (rx_size < 4 * s->buf_size)
            rx_size = 4 * s->buf_size;
        rx_size = (rx_size + 4095) & ~(size_t)4095;
    }
    /* Providers that pin memory keep their own cache (see ofi_mr.c). */
    int cache = (int)bmpi_env_uint("BMPI_OFI_MR_CACHE", (s->mr_mode & FI_MR_LOCAL) ? 0 : OFI_DEFAULT_MR_CACHE);
    ofi_mr_cache_init(s, cache);

    int rc = fi_fabric(info->fabric_attr, &s->fabric, NULL);
    if (rc)
        goto fail_rc_fabric;
    rc = fi_domain(s->fabric, info, &s->domain, NULL);
    if (rc) {
        rc = fi_fail(s, "fi_domain", rc);
        goto fail;
    }
    struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_MSG, .wait_obj = FI_WAIT_NONE};
    cq_attr.size = (size_t)(5 * ntx + 256);
    rc = fi_cq_open(s->domain, &cq_attr, &s->txcq, NULL);
    if (rc) {
        rc = fi_fail(s, "fi_cq_open (transmit)", rc);
        goto fail;
    }
    cq_attr.format = FI_CQ_FORMAT_DATA; /* the buffer of each multi-receive message */
    cq_attr.size = (size_t)(nrx * (s->multi_recv ? 64 : 1) + 256);
    rc = fi_cq_open(s->domain, &cq_attr, &s->rxcq, NULL);
    if (rc) {
        rc = fi_fail(s, "fi_cq_open (receive)", rc);
        goto fail;
    }
    struct fi_av_attr av_attr = {.type = FI_AV_TABLE, .count = (size_t)bmpi_world.size};
    rc = fi_av_open(s->domain, &av_attr, &s->av, NULL);
    if (rc) {
        rc = fi_fail(s, "fi_av_open", rc);
        goto fail;
    }
    rc = fi_endpoint(s->domain, info, &s->ep, NULL);
    if (rc) {
        rc = fi_fail(s, "fi_endpoint", rc);
        goto fail;
    }
    rc = fi_ep_bind(s->ep, &s->av->fid, 0);
    if (!rc)
        rc = fi_ep_bind(s->ep, &s->txcq->fid, FI_TRANSMIT);
    if (!rc)
        rc = fi_ep_bind(s->ep, &s->rxcq->fid, FI_RECV);
    if (rc) {
        rc = fi_fail(s, "fi_ep_bind", rc);
        goto fail;
    }
    rc = fi_enable(s->ep);
    if (rc) {
        rc = fi_fail(s, "fi_enable", rc);
        goto fail;
    }
    /* After fi_enable: shm 1.17 crashes on it before. */
    if (s->multi_recv) {
        size_t min = s->buf_size;
        rc = fi_setopt(&s->ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &min, sizeof(min));
        if (rc) {
            rc = fi_fail(s, "fi_setopt(FI_OPT_MIN_MULTI_RECV)", rc);
            goto fail;
        }
    }

    rc = make_pool(s, &s->rx, nrx, rx_size, OFI_OP_RECV, FI_RECV);
    if (!rc)
        rc = make_pool(s, &s->tx_small, 4 * ntx, OFI_TX_SMALL, OFI_OP_SEND, FI_SEND);
    if (!rc)
        rc = make_pool(s, &s->tx_large, ntx, s->buf_size, OFI_OP_SEND, FI_SEND);
    if (!rc)
        rc = make_pool(s, &s->tx_inject, OFI_INJECT_TOKENS, 0, OFI_OP_SEND, 0);
    for (int i = 0; i < nrx && !rc; i++)
        rc = post_recv(s, &s->rx.ops[i]);
    if (rc)
        goto fail;

    /* Publish: provider name, then the endpoint's address. */
    size_t addrlen = 0;
    rc = fi_getname(&s->ep->fid, NULL, &addrlen);
    if (rc != -FI_ETOOSMALL && rc != 0) {
        rc = fi_fail(s, "fi_getname", rc);
        goto fail;
    }
    struct ofi_blob *blob = calloc(1, sizeof(*blob) + addrlen);
    if (!blob) {
        rc = bmpi_err_set(MPI_ERR_NO_MEM, "out of memory");
        goto fail;
    }
    snprintf(blob->prov, sizeof(blob->prov), "%s", s->prov);
    rc = fi_getname(&s->ep->fid, blob->addr, &addrlen);
    blob->addrlen = (uint32_t)addrlen;
    if (rc) {
        free(blob);
        rc = fi_fail(s, "fi_getname", rc);
        goto fail;
    }
    rc = bmpi_pmix_put(OFI_PMIX_KEY, blob, sizeof(*blob) + addrlen);
    free(blob);
    if (rc)
        goto fail;

    /* One get moves at most this much: the provider's limit, and 1 GiB
     * anyway (multi-GiB single transfers are where providers' 32-bit
     * corners hide; the runtime pulls larger messages piece by piece).
     * Over sockets 1 MiB, so that a get of another message waits behind
     * at most 1 MiB of each large one (all go out through one socket). */
    bool shm = strcmp(s->prov, "shm") == 0;
    bool tcp = over_sockets(s->prov);
    size_t rma_limit = bmpi_env_uint("BMPI_OFI_RMA_LIMIT", tcp ? OFI_SOCKET_RMA_LIMIT : OFI_DEFAULT_RMA_LIMIT);
    if (max_msg && rma_limit > max_msg)
        rma_limit = max_msg;
    /* Under BBR a get/put over TCP sockets goes out as 256 KiB pieces, two
     * in flight; under any other congestion control as one piece
     * (docs/ofi.md, "Congestion control"). */
    s->rma_piece = bmpi_env_uint("BMPI_OFI_RMA_PIECE", tcp && sockets_paced_by_bbr() ? OFI_BBR_RMA_PIECE : SIZE_MAX);
    if (s->rma_piece == 0)
        s->rma_piece = SIZE_MAX;
    s->rma_bytes_max = bmpi_env_uint("BMPI_OFI_RMA_INFLIGHT", s->rma_piece == SIZE_MAX ? SIZE_MAX : 2 * s->rma_piece);
    if (s->rma_bytes_max == 0)
        s->rma_bytes_max = SIZE_MAX;
    tl->caps = (struct bmpi_tl_caps){
        .name = "ofi",
        .exclusivity = BMPI_TL_EXCL_NETWORK,
        .max_am = max_am,
        .eager_limit = eager,
        .rma_limit = rma_limit,
        .flags = (s->rma ? (BMPI_TL_RMA_GET | BMPI_TL_RMA_PUT) : 0) | BMPI_TL_OTHER_JOBS,
        .latency_us = shm ? 0.5 : tcp ? 15 : 2,
        .bandwidth_mbs = shm ? 5000 : tcp ? 1000 : 10000,
    };
    /* The shm provider's RMA is a copy made by the calling process (CMA),
     * like bmpi's shm transport: the runtime then splits large messages
     * between a put by the sender and a get by the receiver. */
    if (s->rma && shm)
        tl->caps.flags |= BMPI_TL_RMA_CPU;
    /* get() registers the local buffer itself (runtime passes no memh). */
    if (s->rma && (s->mr_mode & FI_MR_LOCAL))
        tl->caps.flags |= BMPI_TL_NEEDS_MR;
    /* One-sided communication (docs/ofi.md, "Completion"): every atomic
     * fetches, so its done is remote; so is a write's, unless flush()
     * completes them. */
    s->flush_by_read = s->rma && flush_by_read(info, tcp, s->mr_mode);
    if (s->rma && !s->flush_by_read)
        tl->caps.flags |= BMPI_TL_RMA_REMOTE_DONE;
    if (s->rma && ofi_amo_init(s))
        tl->caps.flags |= BMPI_TL_RMA_AMO | (amo_on_target_cpu(s->prov) ? BMPI_TL_RMA_AMO_CPU : 0) |
                          (amo_ordered(info) ? BMPI_TL_RMA_AMO_ORDERED : 0);
    if (s->rma && rma_ordered(info, rma_limit))
        tl->caps.flags |= BMPI_TL_RMA_ORDERED;
    if (verbose_here())
        report_sizes(s, &tl->caps);
    return BMPI_OK;

fail_rc_fabric:
    rc = fi_fail(s, "fi_fabric", rc);
fail:
    ofi_close(tl);
    return rc;
}

int ofi_peers_grow(struct ofi_state *s, int n)
{
    if (n <= s->nranks && s->peers)
        return BMPI_OK;
    int have = s->peers ? s->nranks : 0;
    int want = n > s->nranks ? n : s->nranks;
    struct ofi_peer *a = realloc(s->peers, (size_t)want * sizeof(*a));
    if (!a)
        return bmpi_err_set(MPI_ERR_NO_MEM, "ofi: out of memory for %d peers", want);
    for (int i = have; i < want; i++)
        a[i] = (struct ofi_peer){.addr = FI_ADDR_NOTAVAIL};
    s->peers = a;
    if (ofi_order_grow(&s->order, want))
        return bmpi_err_set(MPI_ERR_NO_MEM, "ofi: out of memory for %d peers", want);
    s->nranks = want;
    return BMPI_OK;
}

static int ofi_add_peers(struct bmpi_tl *tl, const int *peers, int npeers, bool *reachable, char (*why)[128])
{
    struct ofi_state *s = tl->priv;
    int err = ofi_peers_grow(s, s->nranks);
    if (err)
        return err;
    bool shm = strcmp(s->prov, "shm") == 0;
    for (int i = 0; i < npeers; i++) {
        int r = peers[i];
        reachable[i] = false;
        char reason[128] = "";
        void *data = NULL;
        size_t len = 0;
        if (r < 0 || r >= s->nranks) {
            snprintf(reason, sizeof(reason), "no such rank");
        } else if (shm && bmpi_world.peers[r].nodeid != bmpi_world.nodeid) {
            snprintf(reason, sizeof(reason), "provider shm reaches only this node");
        } else if (bmpi_pmix_get(r, OFI_PMIX_KEY, &data, &len) != BMPI_OK) {
            snprintf(reason, sizeof(reason), "no ofi address published: %s", bmpi_err_reason());
        } else if (len < sizeof(struct ofi_blob) || len < sizeof(struct ofi_blob) + ((struct ofi_blob *)data)->addrlen) {
            snprintf(reason, sizeof(reason), "malformed ofi address (%zu bytes)", len);
        } else {
            struct ofi_blob *b = data;
            b->prov[sizeof(b->prov) - 1] = 0;
            if (strcmp(b->prov, s->prov) != 0) {
                snprintf(reason, sizeof(reason), "it uses provider %.40s, this rank %.40s", b->prov, s->prov);
            } else {
                int n = fi_av_insert(s->av, b->addr, 1, &s->peers[r].addr, 0, NULL);
                if (n == 1)
                    reachable[i] = true;
                else
                    snprintf(reason, sizeof(reason), "fi_av_insert: %s", n < 0 ? fi_strerror(-n) : "address rejected");
            }
        }
        free(data);
        if (!reachable[i] && why)
            snprintf(why[i], sizeof(why[i]), "%s", reason);
    }
    return BMPI_OK;
}

/* ------------------------------------------------------------- progress */

static void send_failed(struct ofi_state *s, struct fi_cq_err_entry *err, const char *text)
{
    if (!s->send_err[0])
        snprintf(s->send_err, sizeof(s->send_err), "ofi (%s): a send failed in the provider: %s (%s)", s->prov,
                 text, fi_strerror(err->err));
}

static void tx_release(struct ofi_op *op)
{
    op->next = op->pool->free;
    op->pool->free = op;
    op->pool->busy--;
}

/* ------------------------------------------------- RMA in pieces
 *
 * A get/put of the runtime goes to the provider as fi_read/fi_write pieces
 * of at most rma_piece bytes, posted in order while fewer than
 * rma_bytes_max bytes are in flight (always at least one piece). Over TCP
 * sockets under BBR that bound keeps the connection's rate up (docs/ofi.md,
 * "Congestion control"); elsewhere a get/put is one piece and the bound is
 * off. The get/put completes, from progress, once every piece
 * has (with the first error of any). */

struct ofi_op *ofi_rma_op_new(struct ofi_state *s)
{
    struct ofi_op *op = s->rma_free;
    if (op)
        s->rma_free = op->next;
    else if (!(op = malloc(sizeof(*op))))
        return NULL;
    memset(op, 0, sizeof(*op));
    return op;
}

static void rma_op_free(struct ofi_state *s, struct ofi_op *op)
{
    op->next = s->rma_free;
    s->rma_free = op;
}

/* Nothing more of op goes to the provider: all posted, or it failed. */
static bool rma_all_posted(const struct ofi_op *op) { return op->posted == op->len || op->status != BMPI_OK; }

static void piece_done(struct ofi_state *s, struct ofi_op *piece, int status)
{
    struct ofi_op *op = piece->parent;
    s->rma_bytes -= piece->len;
    rma_op_free(s, piece);
    op->pieces--;
    if (status != BMPI_OK && op->status == BMPI_OK)
        op->status = status;
    /* Only the head of rma_wait posts pieces; while it is still there,
     * post_waiting moves it on. */
    if (op->pieces == 0 && rma_all_posted(op) && s->rma_wait.head != op)
        list_push(&s->rma_done, op);
}

/* Read the transmit queue: free send buffers and move finished RMA
 * operations to rma_done. Runs no callback of the runtime, so it is safe
 * anywhere (am_send uses it to make the provider progress). */
static int tx_drain(struct ofi_state *s)
{
    int events = 0;
    struct fi_cq_msg_entry comp[OFI_CQ_BATCH];
    for (;;) {
        ssize_t n = fi_cq_read(s->txcq, comp, OFI_CQ_BATCH);
        if (n == -FI_EAGAIN)
            break;
        if (n == -FI_EAVAIL) {
            struct fi_cq_err_entry err;
            memset(&err, 0, sizeof(err));
            if (fi_cq_readerr(s->txcq, &err, 0) != 1)
                break;
            struct ofi_op *op = err.op_context;
            const char *text = fi_cq_strerror(s->txcq, err.prov_errno, err.err_data, NULL, 0);
            if (!op)
                continue;
            events++;
            if (op->kind == OFI_OP_SEND) {
                send_failed(s, &err, text ? text : "");
                tx_release(op);
            } else {
                struct ofi_op *rma = op->parent;
                piece_done(s, op,
                           bmpi_err_set(MPI_ERR_OTHER, "ofi (%s): %s of %zu bytes %s rank %d failed: %s (%s)",
                                        s->prov, ofi_op_call(rma->kind), rma->len,
                                        rma->kind == OFI_OP_READ ? "from" : "at", rma->peer, text ? text : "",
                                        fi_strerror(err.err)));
            }
            continue;
        }
        if (n < 0) {
            if (!s->send_err[0])
                snprintf(s->send_err, sizeof(s->send_err), "ofi (%s): fi_cq_read: %s", s->prov, fi_strerror((int)-n));
            break;
        }
        for (ssize_t i = 0; i < n; i++) {
            struct ofi_op *op = comp[i].op_context;
            if (!op)
                continue;
            if (op->kind == OFI_OP_SEND)
                tx_release(op);
            else
                piece_done(s, op, BMPI_OK);
        }
        events += (int)n;
        if (n < OFI_CQ_BATCH)
            break;
    }
    return events;
}

const char *ofi_op_call(enum ofi_op_kind kind)
{
    switch (kind) {
    case OFI_OP_READ:
        return "fi_read";
    case OFI_OP_WRITE:
        return "fi_writemsg";
    case OFI_OP_FETCH_ATOMIC:
        return "fi_fetch_atomic";
    case OFI_OP_COMPARE_ATOMIC:
        return "fi_compare_atomic";
    default:
        return "fi_send";
    }
}

/* A write completes once its data is in the peer's memory
 * (FI_DELIVERY_COMPLETE), and put()'s done means remote completion
 * (BMPI_TL_RMA_REMOTE_DONE). Under flush_by_read, a write of at most
 * OFI_LOCAL_WRITE_MAX bytes completes once its source buffer is free
 * instead (FI_INJECT_COMPLETE: the socket providers treat
 * FI_TRANSMIT_COMPLETE as delivery, with an acknowledgement), and
 * ofi_flush gives remote completion; larger ones keep the
 * acknowledgement, which bounds what is in flight (docs/ofi.md,
 * "Completion"). */
static ssize_t post_write(struct ofi_state *s, const struct ofi_op *op, void *local, size_t len, uint64_t raddr,
                          void *context)
{
    struct ofi_peer *peer = &s->peers[op->peer];
    struct iovec iov = {.iov_base = local, .iov_len = len};
    void *desc = op->local_mr ? op->local_mr->desc : NULL;
    struct fi_rma_iov rma = {.addr = raddr, .len = len, .key = op->key};
    struct fi_msg_rma msg = {.msg_iov = &iov,
                             .desc = &desc,
                             .iov_count = 1,
                             .addr = peer->addr,
                             .rma_iov = &rma,
                             .rma_iov_count = 1,
                             .context = context};
    if (!s->flush_by_read || len > OFI_LOCAL_WRITE_MAX)
        return fi_writemsg(s->ep, &msg, FI_COMPLETION | FI_DELIVERY_COMPLETE);
    ssize_t rc = fi_writemsg(s->ep, &msg, FI_COMPLETION | FI_INJECT_COMPLETE);
    if (rc == 0 && len) {
        peer->last_raddr = raddr + len - 1;
        peer->last_key = op->key;
        peer->unflushed = true;
    }
    return rc;
}

static bool is_atomic(enum ofi_op_kind kind) { return kind >= OFI_OP_FETCH_ATOMIC; }

/* The next piece of op: 0, -FI_EAGAIN (the bound or the provider says
 * wait) or the provider's error. */
static int post_piece(struct ofi_state *s, struct ofi_op *op)
{
    size_t len = op->len - op->posted;
    size_t piece_max = is_atomic(op->kind) ? op->piece_max : s->rma_piece; /* whole elements */
    if (len > piece_max)
        len = piece_max;
    if (s->rma_bytes && s->rma_bytes + len > s->rma_bytes_max)
        return -FI_EAGAIN;
    struct ofi_op *piece = ofi_rma_op_new(s);
    if (!piece)
        return -FI_ENOMEM;
    piece->kind = op->kind;
    piece->parent = op;
    piece->len = len;
    void *local = (char *)op->local + op->posted;
    uint64_t raddr = op->raddr + op->posted;
    void *desc = op->local_mr ? op->local_mr->desc : NULL;
    ssize_t rc;
    if (is_atomic(op->kind))
        rc = ofi_amo_post(s, op, len, piece);
    else if (op->kind == OFI_OP_READ)
        rc = fi_read(s->ep, local, len, desc, s->peers[op->peer].addr, raddr, op->key, piece);
    else
        rc = post_write(s, op, local, len, raddr, piece);
    if (rc) {
        rma_op_free(s, piece);
        return (int)rc;
    }
    op->posted += len;
    op->pieces++;
    s->rma_bytes += len;
    return 0;
}

void ofi_rma_discard(struct ofi_state *s, struct ofi_op *op)
{
    if (op->local_mr)
        ofi_mr_put(s, op->local_mr);
    if (op->result_mr)
        ofi_mr_put(s, op->result_mr);
    op->local_mr = op->result_mr = NULL;
    free(op->copy);
    op->copy = NULL;
    rma_op_free(s, op);
}

static void rma_release(struct ofi_state *s, struct ofi_op *op)
{
    ofi_rma_discard(s, op);
    s->rma_busy--;
}

/* Post pieces of the waiting get/put operations, in order, as far as the
 * bound and the provider allow; returns the pieces posted. */
static int post_waiting(struct ofi_state *s)
{
    int posted = 0;
    struct ofi_op *op;
    while ((op = s->rma_wait.head)) {
        if (rma_all_posted(op)) {
            list_pop(&s->rma_wait);
            if (op->pieces == 0)
                list_push(&s->rma_done, op);
            continue;
        }
        int rc = post_piece(s, op);
        if (rc == -FI_EAGAIN)
            break;
        if (rc)
            op->status = fi_fail(s, ofi_op_call(op->kind), rc);
        else
            posted++;
    }
    return posted;
}

/* Completed RMA operations: their callbacks, which may start new ones. */
static int finish_rma(struct ofi_state *s)
{
    int events = 0;
    struct ofi_op *op;
    while ((op = list_pop(&s->rma_done))) {
        bmpi_tl_done_fn done = op->done;
        void *ctx = op->ctx;
        int status = op->status;
        rma_release(s, op);
        done(ctx, status);
        events++;
    }
    return events;
}

/* Hand one message from peer to the runtime. The wire header and the
 * runtime's header are copied out when not 8-byte aligned (a message
 * anywhere in a multi-receive buffer), since handlers read the header in
 * place. */
static void dispatch(int peer, const char *buf, size_t len)
{
    struct ofi_wire w;
    memcpy(&w, buf, sizeof(w));
    size_t wlen = ofi_wire_len(w.src);
    const char *hdr = buf + wlen;
    const char *payload = hdr + w.hdr_len;
    size_t plen = len - wlen - w.hdr_len - (w.am_pad & 7);
    uint8_t am_id = w.am_pad >> 3;
    if (((uintptr_t)hdr & 7) == 0 || w.hdr_len == 0) {
        bmpi_am_deliver(peer, am_id, hdr, w.hdr_len, payload, plen);
        return;
    }
    uint64_t copy[(UINT8_MAX + 7) / 8]; /* hdr_len is 8 bits */
    memcpy(copy, hdr, w.hdr_len);
    bmpi_am_deliver(peer, am_id, copy, w.hdr_len, payload, plen);
}

static void malformed(const struct ofi_state *s, size_t len, int32_t src)
{
    bmpi_err_comm(MPI_COMM_WORLD, MPI_ERR_INTERN, "MPI progress",
                  "ofi (%s): malformed message of %zu bytes from %s %d", s->prov, len,
                  src < 0 ? "a process of another job, rank" : "rank", src < 0 ? -1 - src : src);
}

/* The peer index of a message's sender: its rank for one of this job, a
 * lookup for another job's; -1 (message parked) while that one is not a
 * peer yet, -2 when the message is malformed (reported). */
static int sender(struct ofi_state *s, const struct ofi_wire *w, const char *buf, size_t len)
{
    if (len < ofi_wire_len(w->src) + w->hdr_len + (w->am_pad & 7)) {
        malformed(s, len, w->src);
        return -2;
    }
    if (w->src >= 0) {
        if (w->src >= bmpi_world.size) {
            malformed(s, len, w->src);
            return -2;
        }
        return w->src;
    }
    struct ofi_wire_job j;
    memcpy(&j, buf + sizeof(*w), sizeof(j));
    int peer = ofi_foreign_peer(s, j.job, -1 - w->src);
    if (peer < 0 && ofi_park(s, j.job, -1 - w->src, buf, len))
        bmpi_err_comm(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI progress",
                      "ofi (%s): out of memory keeping a message from a process of another job", s->prov);
    return peer;
}

/* One message at buf, delivered in its sender's order: at once when it is
 * next in turn (then any held ones it unblocks), else copied and held. */
void ofi_deliver(struct ofi_state *s, const char *buf, size_t len)
{
    struct ofi_wire w;
    if (len < sizeof(w)) {
        bmpi_err_comm(MPI_COMM_WORLD, MPI_ERR_INTERN, "MPI progress",
                      "ofi (%s): malformed message of %zu bytes received", s->prov, len);
        return;
    }
    memcpy(&w, buf, sizeof(w));
    int src = sender(s, &w, buf, len);
    if (src < 0)
        return;
    int err;
    if (!ofi_order_arrived(&s->order, src, w.seq, buf, len, &err)) {
        if (err)
            bmpi_err_comm(MPI_COMM_WORLD, MPI_ERR_INTERN, "MPI progress",
                          "ofi (%s): message %u from peer %d came twice or could not be held for its turn "
                          "(out of memory)",
                          s->prov, (unsigned)w.seq, src);
        return;
    }
    dispatch(src, buf, len);
    struct ofi_held *h;
    while ((h = ofi_order_pop_ready(&s->order, src))) {
        dispatch(src, (const char *)h->msg, h->len);
        free(h);
    }
}

static void rx_done(struct ofi_state *s, struct ofi_op *op, uint64_t flags)
{
    /* A multi-receive buffer comes back once the provider releases it. */
    if (s->multi_recv && !(flags & FI_MULTI_RECV))
        return;
    int rc = post_recv(s, op);
    if (rc)
        bmpi_err_comm(MPI_COMM_WORLD, rc, "MPI progress", NULL);
}

static int rx_poll(struct ofi_state *s)
{
    int events = 0;
    struct fi_cq_data_entry comp[OFI_CQ_BATCH];
    while (events < OFI_RX_PER_PROGRESS) {
        ssize_t n = fi_cq_read(s->rxcq, comp, OFI_CQ_BATCH);
        if (n == -FI_EAGAIN)
            break;
        if (n == -FI_EAVAIL) {
            struct fi_cq_err_entry err;
            memset(&err, 0, sizeof(err));
            if (fi_cq_readerr(s->rxcq, &err, 0) != 1)
                break;
            struct ofi_op *op = err.op_context;
            if (err.err == FI_ECANCELED)
                continue;
            const char *text = fi_cq_strerror(s->rxcq, err.prov_errno, err.err_data, NULL, 0);
            if (op && op->kind == OFI_OP_RECV)
                rx_done(s, op, err.flags);
            bmpi_err_comm(MPI_COMM_WORLD, MPI_ERR_OTHER, "MPI progress",
                          "ofi (%s): a receive failed in the provider, a message is lost: %s (%s)", s->prov,
                          text ? text : "", fi_strerror(err.err));
            events++;
            continue;
        }
        if (n < 0) {
            bmpi_err_comm(MPI_COMM_WORLD, MPI_ERR_OTHER, "MPI progress", "ofi (%s): fi_cq_read: %s", s->prov,
                          fi_strerror((int)-n));
            break;
        }
        for (ssize_t i = 0; i < n; i++) {
            struct ofi_op *op = comp[i].op_context;
            if (comp[i].len > 0) /* 0: only the release of a multi-receive buffer */
                ofi_deliver(s, s->multi_recv ? comp[i].buf : op->buf, comp[i].len);
            rx_done(s, op, comp[i].flags);
        }
        events += (int)n;
        if (n < OFI_CQ_BATCH)
            break;
    }
    return events;
}

/* Sends or RMA operations the provider has not completed yet. */
static bool in_flight(const struct ofi_state *s)
{
    return s->tx_inject.busy > 0 || s->tx_small.busy > 0 || s->tx_large.busy > 0 || s->rma_busy > 0;
}

/* Returns the events handled, and at least 1 while operations are in
 * flight: some providers (ofi_rxm over tcp) move queued data only while
 * we call them, so whoever waits for quiet (MPI_Finalize before its fence)
 * must keep calling until this returns 0. */
static int ofi_progress(struct bmpi_tl *tl)
{
    struct ofi_state *s = tl->priv;
    /* Reading a completion queue makes the provider progress the whole
     * endpoint (one poll of its sockets each time, for tcp): read the
     * transmit queue only when something can be in it. */
    if (s->in_progress)
        return in_flight(s) ? tx_drain(s) : 0;
    s->in_progress = true;
    int events = in_flight(s) ? tx_drain(s) : 0;
    if (s->repost.head) {
        struct ofi_list again = s->repost;
        s->repost.head = s->repost.tail = NULL;
        struct ofi_op *op;
        while ((op = list_pop(&again)))
            post_recv(s, op);
    }
    if (s->rma_wait.head)
        events += post_waiting(s);
    if (s->rma_done.head)
        events += finish_rma(s);
    if (s->replay)
        events += ofi_replay(s);
    events += rx_poll(s);
    if (s->send_err[0]) {
        char msg[sizeof(s->send_err)];
        memcpy(msg, s->send_err, sizeof(msg));
        s->send_err[0] = 0;
        bmpi_err_comm(MPI_COMM_WORLD, MPI_ERR_OTHER, "MPI progress", "%s", msg);
    }
    s->in_progress = false;
    return events ? events : in_flight(s);
}

/* ------------------------------------------------------------ data path */

/* Messages are padded to a multiple of 8 bytes, so that one after the
 * other in a multi-receive buffer each header stays aligned. */
static void pack(void *dst, size_t padded, int peer, uint16_t seq, uint8_t am_id, const void *hdr, size_t hdr_len,
                 const struct iovec *iov, int iovcnt)
{
    struct ofi_wire *w = dst;
    bool other_job = peer >= bmpi_world.size;
    w->src = other_job ? -1 - bmpi_world.rank : bmpi_world.rank;
    w->seq = seq;
    w->hdr_len = (uint8_t)hdr_len;
    char *p = (char *)dst + sizeof(*w);
    if (other_job) {
        struct ofi_wire_job j = {.job = bmpi_world.job_id};
        memcpy(p, &j, sizeof(j));
        p += sizeof(j);
    }
    memcpy(p, hdr, hdr_len);
    p += hdr_len;
    for (int i = 0; i < iovcnt; i++) {
        memcpy(p, iov[i].iov_base, iov[i].iov_len);
        p += iov[i].iov_len;
    }
    uint8_t pad = (uint8_t)((char *)dst + padded - p);
    w->am_pad = (uint8_t)(am_id << 3 | pad);
    memset(p, 0, pad);
}

static int ofi_am_send(struct bmpi_tl *tl, int peer, uint8_t am_id, const void *hdr, size_t hdr_len,
                       const struct iovec *iov, int iovcnt)
{
    struct ofi_state *s = tl->priv;
    size_t wlen = peer >= bmpi_world.size ? OFI_WIRE_MAX : sizeof(struct ofi_wire);
    size_t total = wlen + hdr_len;
    for (int i = 0; i < iovcnt; i++)
        total += iov[i].iov_len;
    if (total > s->buf_size || hdr_len > UINT8_MAX || am_id > OFI_AM_ID_MAX)
        return bmpi_err_set(MPI_ERR_INTERN,
                            "ofi: active message (id %u, %zu bytes, header %zu) over the limits: max_am %zu, "
                            "header %d bytes, id %d",
                            am_id, total - wlen, hdr_len, tl->caps.max_am, UINT8_MAX,
                            OFI_AM_ID_MAX);
    size_t padded = (total + 7) & ~(size_t)7;
    fi_addr_t dest = s->peers[peer].addr;
    if (padded <= s->inject_max && (s->tx_inject.free || (tx_drain(s), s->tx_inject.free))) {
        /* Injected (the buffer is ours again at once) but with a
         * completion, so that we know when it has left: see in_flight(). */
        char buf[OFI_INJECT_STACK] __attribute__((aligned(8)));
        pack(buf, padded, peer, ofi_order_tx_seq(&s->order, peer), am_id, hdr, hdr_len, iov, iovcnt);
        struct ofi_op *tok = s->tx_inject.free;
        s->tx_inject.free = tok->next;
        s->tx_inject.busy++;
        struct iovec v = {.iov_base = buf, .iov_len = padded};
        struct fi_msg msg = {.msg_iov = &v, .iov_count = 1, .addr = dest, .context = tok};
        ssize_t rc = fi_sendmsg(s->ep, &msg, FI_INJECT | FI_COMPLETION);
        if (rc == -FI_EAGAIN) {
            tx_drain(s);
            rc = fi_sendmsg(s->ep, &msg, FI_INJECT | FI_COMPLETION);
        }
        if (rc == 0) {
            ofi_order_sent(&s->order, peer);
            return BMPI_OK;
        }
        tx_release(tok);
        return rc == -FI_EAGAIN ? BMPI_TL_EAGAIN : fi_fail(s, "fi_sendmsg(FI_INJECT)", (int)rc);
    }
    struct ofi_pool *pool = padded <= s->tx_small.size ? &s->tx_small : &s->tx_large;
    if (!pool->free)
        tx_drain(s);
    if (!pool->free && pool == &s->tx_small)
        pool = &s->tx_large;
    struct ofi_op *op = pool->free;
    if (!op)
        return BMPI_TL_EAGAIN;
    pool->free = op->next;
    pool->busy++;
    pack(op->buf, padded, peer, ofi_order_tx_seq(&s->order, peer), am_id, hdr, hdr_len, iov, iovcnt);
    ssize_t rc = fi_send(s->ep, op->buf, padded, op->desc, dest, op);
    if (rc == -FI_EAGAIN) {
        tx_drain(s);
        rc = fi_send(s->ep, op->buf, padded, op->desc, dest, op);
    }
    if (rc == 0) {
        ofi_order_sent(&s->order, peer);
        return BMPI_OK;
    }
    tx_release(op);
    return rc == -FI_EAGAIN ? BMPI_TL_EAGAIN : fi_fail(s, "fi_send", (int)rc);
}

static int ofi_mem_reg(struct bmpi_tl *tl, void *addr, size_t len, void **memh)
{
    struct ofi_state *s = tl->priv;
    struct ofi_mr_entry *e;
    int rc = ofi_mr_get(s, addr, len, &e);
    if (rc)
        return rc;
    *memh = e;
    return BMPI_OK;
}

static int ofi_mem_dereg(struct bmpi_tl *tl, void *memh)
{
    ofi_mr_put(tl->priv, memh);
    return BMPI_OK;
}

static int ofi_rkey_pack(struct bmpi_tl *tl, void *memh, void *buf, size_t *len)
{
    struct ofi_state *s = tl->priv;
    struct ofi_mr_entry *e = memh;
    struct ofi_rkey k = {.key = e->key, .base = e->base};
    /* Fault injection for tests: a key the provider does not know, so
     * that the peer's get fails (test/ofi/ofi_errors.sh). */
    if (bmpi_env_switch("BMPI_OFI_FAULT_RKEY") == 1)
        k.key ^= 0x5a5a0000u;
    size_t n = (s->mr_mode & FI_MR_VIRT_ADDR) ? sizeof(k.key) : sizeof(k);
    if (*len < n)
        return bmpi_err_set(MPI_ERR_INTERN, "ofi: rkey of %zu bytes does not fit in %zu", n, *len);
    memcpy(buf, &k, n);
    *len = n;
    return BMPI_OK;
}

int ofi_rkey_unpack(const struct ofi_state *s, const void *rkey, size_t rkey_len, uint64_t remote_addr,
                    uint64_t *raddr, uint64_t *key)
{
    struct ofi_rkey k = {0, 0};
    size_t need = (s->mr_mode & FI_MR_VIRT_ADDR) ? sizeof(k.key) : sizeof(k);
    if (rkey_len < need)
        return bmpi_err_set(MPI_ERR_INTERN, "ofi: remote key of %zu bytes, expected %zu", rkey_len, need);
    memcpy(&k, rkey, need);
    *raddr = (s->mr_mode & FI_MR_VIRT_ADDR) ? remote_addr : remote_addr - k.base;
    *key = k.key;
    return BMPI_OK;
}

void ofi_rma_submit(struct ofi_state *s, struct ofi_op *op)
{
    s->rma_busy++;
    /* In order behind the operations still waiting; what cannot be posted
     * now is posted from progress, and a failure completes op with it. */
    list_push(&s->rma_wait, op);
    if (!post_waiting(s) && s->rma_wait.head == op) {
        tx_drain(s);
        post_waiting(s);
    }
}

/* A get/put of len bytes between local and (raddr, key) of peer, done(ctx)
 * at the end; NULL when out of memory. */
static struct ofi_op *rma_op_make(struct ofi_state *s, enum ofi_op_kind kind, int peer, void *local, size_t len,
                                  uint64_t raddr, uint64_t key, bmpi_tl_done_fn done, void *ctx)
{
    struct ofi_op *op = ofi_rma_op_new(s);
    if (op)
        *op = (struct ofi_op){.kind = kind, .peer = peer, .local = local, .len = len, .raddr = raddr, .key = key,
                              .done = done, .ctx = ctx};
    return op;
}

static int ofi_rma(struct bmpi_tl *tl, enum ofi_op_kind kind, int peer, void *local, void *local_memh, size_t len,
                   uint64_t remote_addr, const void *rkey, size_t rkey_len, bmpi_tl_done_fn done, void *ctx)
{
    struct ofi_state *s = tl->priv;
    if (!s->rma)
        return bmpi_err_set(MPI_ERR_UNSUPPORTED_OPERATION, "ofi (%s): the provider has no RMA", s->prov);
    uint64_t raddr, key;
    int rc = ofi_rkey_unpack(s, rkey, rkey_len, remote_addr, &raddr, &key);
    if (rc)
        return rc;
    struct ofi_op *op = rma_op_make(s, kind, peer, local, len, raddr, key, done, ctx);
    if (!op)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory");
    /* Under FI_MR_LOCAL the local buffer needs a descriptor; the runtime
     * passes its own registration when it has one, else we take one from
     * the cache for the duration of the operation. */
    if (s->mr_mode & FI_MR_LOCAL) {
        if (local_memh) {
            op->local_mr = local_memh;
            op->local_mr->refs++;
        } else {
            rc = ofi_mr_get(s, local, len, &op->local_mr);
            if (rc) {
                ofi_rma_discard(s, op);
                return rc;
            }
        }
    }
    ofi_rma_submit(s, op);
    return BMPI_OK;
}

static int ofi_get(struct bmpi_tl *tl, int peer, void *local, void *local_memh, size_t len, uint64_t remote_addr,
                   const void *rkey, size_t rkey_len, bmpi_tl_done_fn done, void *ctx)
{
    return ofi_rma(tl, OFI_OP_READ, peer, local, local_memh, len, remote_addr, rkey, rkey_len, done, ctx);
}

static int ofi_put(struct bmpi_tl *tl, int peer, const void *local, void *local_memh, size_t len,
                   uint64_t remote_addr, const void *rkey, size_t rkey_len, bmpi_tl_done_fn done, void *ctx)
{
    return ofi_rma(tl, OFI_OP_WRITE, peer, (void *)local, local_memh, len, remote_addr, rkey, rkey_len, done, ctx);
}

/* Remote completion of the writes to peer. Under flush_by_read: a read of
 * the last byte the latest write wrote, which the provider places behind
 * every earlier write to peer (read-after-write order), so its completion
 * says they are all in. Atomics all fetch: done at once for those. */
static int ofi_flush(struct bmpi_tl *tl, int peer, bmpi_tl_done_fn done, void *ctx)
{
    struct ofi_state *s = tl->priv;
    if (peer < 0 || peer >= s->nranks || !s->peers)
        return bmpi_err_set(MPI_ERR_INTERN, "ofi: flush of rank %d, which this transport does not reach", peer);
    struct ofi_peer *p = &s->peers[peer];
    if (!p->unflushed) { /* set by post_write under flush_by_read only */
        done(ctx, BMPI_OK);
        return BMPI_OK;
    }
    struct ofi_op *op = rma_op_make(s, OFI_OP_READ, peer, &s->flush_sink, 1, p->last_raddr, p->last_key, done, ctx);
    if (!op)
        return bmpi_err_set(MPI_ERR_NO_MEM, "out of memory");
    p->unflushed = false;
    ofi_rma_submit(s, op);
    return BMPI_OK;
}

/* ---------------------------------------------------------------- close */

static void close_fid(struct fid *f)
{
    if (f)
        fi_close(f);
}

static void ofi_close(struct bmpi_tl *tl)
{
    struct ofi_state *s = tl->priv;
    if (!s)
        return;
    /* Let sends and RMA operations in flight finish (bounded), so that the
     * last messages of the job are not cut off. */
    if (s->ep) {
        for (long spins = 0; in_flight(s) && spins < 2000000; spins++) {
            tx_drain(s);
            if (s->rma_wait.head)
                post_waiting(s);
            struct ofi_op *op;
            while ((op = list_pop(&s->rma_done)))
                rma_release(s, op);
        }
    }
    if (bmpi_world.verbose >= 2)
        fprintf(stderr, "bmpi: rank %d: ofi: registration cache: %llu hits, %llu misses; %llu messages came early\n",
                bmpi_world.rank, (unsigned long long)s->mrc.hits, (unsigned long long)s->mrc.misses,
                (unsigned long long)s->order.early);
    /* Memory regions before the endpoint they may be bound to. */
    ofi_mr_cache_fini(s);
    /* The endpoint before the buffers' registrations (closing it cancels
     * the receives posted in them) — unless they are bound to it. */
    bool bound = (s->mr_mode & FI_MR_ENDPOINT) != 0;
    if (bound) {
        free_pool(&s->rx);
        free_pool(&s->tx_small);
        free_pool(&s->tx_large);
        free_pool(&s->tx_inject);
    }
    if (s->ep)
        fi_close(&s->ep->fid);
    if (!bound) {
        free_pool(&s->rx);
        free_pool(&s->tx_small);
        free_pool(&s->tx_large);
        free_pool(&s->tx_inject);
    }
    if (s->av)
        close_fid(&s->av->fid);
    if (s->txcq)
        close_fid(&s->txcq->fid);
    if (s->rxcq)
        close_fid(&s->rxcq->fid);
    if (s->domain)
        close_fid(&s->domain->fid);
    if (s->fabric)
        close_fid(&s->fabric->fid);
    if (s->info)
        fi_freeinfo(s->info);
    struct ofi_op *op;
    while ((op = s->rma_free)) {
        s->rma_free = op->next;
        free(op);
    }
    ofi_order_fini(&s->order);
    ofi_jobs_fini(s);
    /* Operations never completed (timeout above) are leaked rather than
     * freed under the provider's feet; it is gone now. */
    free(s->peers);
    free(s);
    tl->priv = NULL;
}

const struct bmpi_tl_ops bmpi_tl_ofi_ops = {
    .query = ofi_query,
    .open = ofi_open,
    .add_peers = ofi_add_peers,
    .close = ofi_close,
    .query_other_jobs = ofi_query_other_jobs,
    .card = ofi_card,
    .add_card = ofi_add_card,
    .am_send = ofi_am_send,
    .mem_reg = ofi_mem_reg,
    .mem_dereg = ofi_mem_dereg,
    .rkey_pack = ofi_rkey_pack,
    .get = ofi_get,
    .put = ofi_put,
    .amo_native = ofi_amo_native,
    .amo = ofi_amo,
    .flush = ofi_flush,
    .progress = ofi_progress,
};
