/*
 * verbs: the rdma-core transport (docs/verbs.md).
 *
 * Device and port: BMPI_VERBS_DEVICE=name[:port], else the first device
 * with an ACTIVE port. Addresses (LID, GID, the UD queue pair that takes
 * connection requests) travel through PMIx; RC queue pairs are created on
 * first use of a peer (verbs_qp.c).
 *
 * Active messages: [struct verbs_wire][runtime header][payload] with
 * IBV_WR_SEND, inline up to the QP's max_inline_data, else copied into a
 * registered send buffer (the runtime's memory is free when am_send
 * returns). The receiver posted rx_depth + VERBS_CTL_RSV buffers of
 * buf_size per peer when it created the QP.
 *
 * Flow control, per direction: the sender holds credits (ordinary
 * messages, rx_depth to start with) and ctl_credits (HELLO and credit
 * messages, VERBS_CTL_RSV). The receiver counts the buffers it has reposted
 * after delivery (to_return, ctl_to_return) and gives them back on every
 * message it sends; when to_return reaches rx_depth/2 with nothing to send,
 * it sends a credit message (which needs a ctl credit, never an ordinary
 * one). A sender out of credits or send-queue slots returns BMPI_TL_EAGAIN;
 * nothing is dropped, and the RC QP never meets a receiver without a
 * posted buffer (no RNR in normal operation).
 *
 * Why this cannot deadlock: a credit message is only needed after
 * rx_depth/2 ordinary messages arrived from the peer, and every message
 * carries the ctl credits its sender owes; the ctl credit of an
 * unanswered credit message comes back with the first message the peer
 * sends after it — and the peer, having just been given credits, is not
 * the one that is stuck.
 *
 * Every work request is signaled: completions return send buffers and
 * send-queue slots, and a failed one names its operation.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/error.h"
#include "runtime/pmix.h"
#include "runtime/world.h"
#include "transport/verbs/verbs.h"

#define VERBS_CQ_BATCH 16
#define VERBS_RX_PER_PROGRESS 64

/* ---- configuration --------------------------------------------------------- */

static void read_config(struct verbs_config *c)
{
    c->max_am = bmpi_env_uint("BMPI_VERBS_MAX_AM", 16384);
    /* within what fits one message with the runtime's header */
    c->eager_limit = bmpi_env_uint("BMPI_VERBS_EAGER_LIMIT", 12288);
    if (c->eager_limit > c->max_am - 256)
        c->eager_limit = c->max_am - 256;
    c->rx_depth = (int)bmpi_env_uint("BMPI_VERBS_RX_DEPTH", 16);
    c->sq_depth = (int)bmpi_env_uint("BMPI_VERBS_SQ_DEPTH", 64);
    c->tx_bufs = (int)bmpi_env_uint("BMPI_VERBS_TX_BUFS", 64);
    c->mr_cache = (int)bmpi_env_uint("BMPI_VERBS_MR_CACHE", 256);
    c->odp = bmpi_env_switch("BMPI_VERBS_ODP");
    c->leave_pinned = bmpi_env_switch("BMPI_VERBS_LEAVE_PINNED") == 1;
    c->sl = (int)bmpi_env_uint("BMPI_VERBS_SL", 0);
    c->gid_index = bmpi_env_string("BMPI_VERBS_GID_INDEX")
                       ? (int)bmpi_env_uint("BMPI_VERBS_GID_INDEX", 0)
                       : -1;
    c->cm_timeout_s = (double)bmpi_env_uint("BMPI_VERBS_CONNECT_TIMEOUT", 60);
}

static bool verbose_here(void)
{
    return bmpi_world.verbose >= 2 || (bmpi_world.verbose && bmpi_world.rank == 0);
}

/* ---- device and port ---------------------------------------------------------- */

const char *verbs_link_name(uint8_t ll)
{
    return ll == IBV_LINK_LAYER_INFINIBAND ? "InfiniBand"
           : ll == IBV_LINK_LAYER_ETHERNET ? "Ethernet"
                                           : "unknown link layer";
}

struct ibv_context *verbs_choose_port(struct ibv_device **devs, int ndev, int *port_out,
                                       struct ibv_port_attr *pa_out, char *why, size_t why_len)
{
    const char *want = bmpi_env_string("BMPI_VERBS_DEVICE");
    char name[64] = "";
    int want_port = 0;
    if (want) {
        snprintf(name, sizeof(name), "%s", want);
        char *colon = strchr(name, ':');
        if (colon) {
            *colon = 0;
            want_port = atoi(colon + 1);
        }
    }
    size_t n = (size_t)snprintf(why, why_len, "no ACTIVE port:");
    bool found_dev = false;
    for (int d = 0; d < ndev; d++) {
        const char *dn = ibv_get_device_name(devs[d]);
        if (name[0] && strcmp(dn, name) != 0)
            continue;
        found_dev = true;
        struct ibv_context *ctx = ibv_open_device(devs[d]);
        if (!ctx) {
            if (n < why_len)
                n += (size_t)snprintf(why + n, why_len - n, " %s: ibv_open_device: %s;", dn,
                                      strerror(errno));
            continue;
        }
        struct ibv_device_attr da;
        if (ibv_query_device(ctx, &da) == 0) {
            for (int p = 1; p <= da.phys_port_cnt; p++) {
                if (want_port && p != want_port)
                    continue;
                struct ibv_port_attr pa;
                if (ibv_query_port(ctx, (uint8_t)p, &pa) != 0)
                    continue;
                if (pa.state == IBV_PORT_ACTIVE &&
                    (pa.link_layer == IBV_LINK_LAYER_INFINIBAND ||
                     pa.link_layer == IBV_LINK_LAYER_ETHERNET ||
                     pa.link_layer == IBV_LINK_LAYER_UNSPECIFIED)) {
                    *port_out = p;
                    *pa_out = pa;
                    if (pa.link_layer == IBV_LINK_LAYER_UNSPECIFIED)
                        pa_out->link_layer = IBV_LINK_LAYER_INFINIBAND;
                    return ctx;
                }
                if (n < why_len)
                    n += (size_t)snprintf(why + n, why_len - n, " %s:%d is %s;", dn, p,
                                          ibv_port_state_str(pa.state));
            }
        }
        ibv_close_device(ctx);
    }
    if (!found_dev)
        snprintf(why, why_len, "BMPI_VERBS_DEVICE=%s: no such RDMA device", want);
    else if (n > 0 && n < why_len && why[n - 1] == ';')
        why[n - 1] = 0;
    return NULL;
}

void verbs_no_device_why(struct ibv_device **devs, int err, char *why, size_t why_len)
{
    if (devs)
        snprintf(why, why_len, "no RDMA device found (ibv_get_device_list returned 0 devices)");
    else
        snprintf(why, why_len,
                 "no RDMA device found (ibv_get_device_list failed: %s; no RDMA kernel "
                 "support here: is ib_uverbs loaded?)",
                 strerror(err));
}

static void fork_init_once(void);

/* Is "verbs" named in BMPI_TRANSPORT? */
static bool verbs_requested(void)
{
    const char *list = bmpi_env_string("BMPI_TRANSPORT");
    if (!list)
        return false;
    for (const char *p = list; (p = strstr(p, "verbs")); p += 5)
        if ((p == list || p[-1] == ',') && (p[5] == 0 || p[5] == ','))
            return true;
    return false;
}

static int verbs_query_why(char *why, size_t why_len);

static int verbs_query(char *why, size_t why_len)
{
    int rc = verbs_query_why(why, why_len);
    if (rc && verbose_here())
        fprintf(stderr, "bmpi: rank %d: verbs unusable: %s\n", bmpi_world.rank, why);
    return rc;
}

static int verbs_query_why(char *why, size_t why_len)
{
    /* A job on one node is served by shm: no device to open, no memory to
     * pin. */
    if (bmpi_world.size > 0 && bmpi_world.local_size >= bmpi_world.size && !verbs_requested()) {
        snprintf(why, why_len,
                 "all %d ranks are on this node, where shm serves them (BMPI_TRANSPORT=verbs "
                 "uses verbs anyway)",
                 bmpi_world.size);
        return MPI_ERR_OTHER;
    }
    fork_init_once();
    int ndev = 0;
    struct ibv_device **devs = ibv_get_device_list(&ndev);
    if (!devs || ndev == 0) {
        verbs_no_device_why(devs, errno, why, why_len);
        if (devs)
            ibv_free_device_list(devs);
        return MPI_ERR_OTHER;
    }
    int port;
    struct ibv_port_attr pa;
    struct ibv_context *ctx = verbs_choose_port(devs, ndev, &port, &pa, why, why_len);
    if (ctx)
        ibv_close_device(ctx);
    ibv_free_device_list(devs);
    return ctx ? BMPI_OK : MPI_ERR_OTHER;
}

/* A GID to route by: BMPI_VERBS_GID_INDEX, else for RoCE the first RoCE v2
 * entry (routable), else the first non-zero one. */
static int choose_gid(struct verbs_state *s)
{
    s->gid_index = s->cfg.gid_index >= 0 ? s->cfg.gid_index : 0;
    s->global = s->pattr.link_layer == IBV_LINK_LAYER_ETHERNET || s->cfg.gid_index >= 0;
    if (s->pattr.link_layer == IBV_LINK_LAYER_ETHERNET && s->cfg.gid_index < 0) {
        int first = -1, v2 = -1;
        for (int i = 0; i < s->pattr.gid_tbl_len && v2 < 0; i++) {
            union ibv_gid g;
            if (ibv_query_gid(s->ctx, (uint8_t)s->port, i, &g) != 0)
                continue;
            if (!g.global.subnet_prefix && !g.global.interface_id)
                continue;
            if (first < 0)
                first = i;
            struct ibv_gid_entry ge;
            if (ibv_query_gid_ex(s->ctx, (uint32_t)s->port, (uint32_t)i, &ge, 0) == 0 &&
                ge.gid_type == IBV_GID_TYPE_ROCE_V2)
                v2 = i;
        }
        if (first < 0)
            return bmpi_err_set(MPI_ERR_OTHER,
                                "verbs: %s port %d (RoCE) has no GID: is an IP address "
                                "configured on its network interface?",
                                s->devname, s->port);
        s->gid_index = v2 >= 0 ? v2 : first;
    }
    if (ibv_query_gid(s->ctx, (uint8_t)s->port, s->gid_index, &s->gid) != 0)
        return bmpi_err_set(MPI_ERR_OTHER, "verbs: ibv_query_gid(%s port %d, index %d): %s",
                            s->devname, s->port, s->gid_index, strerror(errno));
    return BMPI_OK;
}

/* The device's RC on-demand paging capabilities (IBV_ODP_SUPPORT_*), 0
 * without ODP. */
static uint32_t rc_odp_caps(struct verbs_state *s)
{
    struct ibv_device_attr_ex ax;
    memset(&ax, 0, sizeof(ax));
    if (ibv_query_device_ex(s->ctx, NULL, &ax) != 0 ||
        !(ax.odp_caps.general_caps & IBV_ODP_SUPPORT))
        return 0;
    return ax.odp_caps.per_transport_caps.rc_odp_caps;
}

static bool odp_usable(struct verbs_state *s)
{
    uint32_t need = IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_WRITE;
    return s->cfg.odp == 1 && (rc_odp_caps(s) & need) == need;
}

/* 8-byte atomics: the device does them (atomic_cap; IBV_ATOMIC_HCA, atomic
 * with respect to the device's other atomics only, is what transport.h
 * asks), it has responder resources for them, and an ODP registration can
 * serve them. */
static bool atomics_usable(struct verbs_state *s, bool odp)
{
    if (s->dattr.atomic_cap == IBV_ATOMIC_NONE || s->dattr.max_qp_rd_atom < 1 ||
        s->dattr.max_qp_init_rd_atom < 1)
        return false;
    return !odp || (rc_odp_caps(s) & IBV_ODP_SUPPORT_ATOMIC);
}

/* The registered buffer that the old values of non-fetching atomics land
 * in (the HCA writes them somewhere; nobody reads them). */
static int amo_scratch_open(struct verbs_state *s)
{
    if (posix_memalign((void **)&s->amo_scratch, 64, 64))
        return bmpi_err_set(MPI_ERR_NO_MEM, "verbs: out of memory");
    s->amo_scratch_mr = ibv_reg_mr(s->pd, s->amo_scratch, 64, IBV_ACCESS_LOCAL_WRITE);
    if (!s->amo_scratch_mr)
        return bmpi_err_set(MPI_ERR_OTHER, "verbs: ibv_reg_mr of 64 bytes for atomics: %s",
                            strerror(errno));
    return BMPI_OK;
}

/* ---- lifecycle ----------------------------------------------------------------- */

static void verbs_close(struct bmpi_tl *tl);

/* rdma-core's way: ibv_fork_init() only when asked, before anything is
 * registered; never fatal. */
static void fork_init_once(void)
{
    static bool done;
    if (done)
        return;
    done = true;
    const char *b = getenv("RDMAV_FORK_SAFE"); /* rdma-core's own: any value */
    if (bmpi_env_switch("BMPI_VERBS_FORK_SAFE") == 1 || (b && *b)) {
        int rc = ibv_fork_init();
        if (rc && verbose_here())
            fprintf(stderr, "bmpi: verbs: ibv_fork_init failed (%s): fork() after MPI_Init may "
                            "corrupt registered memory\n",
                    strerror(rc));
    }
}

static void fork_report(void)
{
    if (!verbose_here())
        return;
    enum ibv_fork_status st = ibv_is_fork_initialized();
    fprintf(stderr, "bmpi: verbs: fork support: %s\n",
            st == IBV_FORK_UNNEEDED  ? "not needed (the kernel copes)"
            : st == IBV_FORK_ENABLED ? "enabled (ibv_fork_init)"
                                     : "off (BMPI_VERBS_FORK_SAFE=1 or RDMAV_FORK_SAFE turns it on)");
}

static int verbs_open(struct bmpi_tl *tl)
{
    struct verbs_state *s = calloc(1, sizeof(*s));
    if (!s)
        return bmpi_err_set(MPI_ERR_NO_MEM, "verbs: out of memory");
    tl->priv = s;
    read_config(&s->cfg);
    fork_init_once();
    fork_report();
    int rc;
    char why[256];
    int ndev = 0;
    s->devs = ibv_get_device_list(&ndev);
    if (!s->devs || ndev == 0) {
        rc = bmpi_err_set(MPI_ERR_OTHER, "verbs: no RDMA device found");
        goto fail;
    }
    s->ctx = verbs_choose_port(s->devs, ndev, &s->port, &s->pattr, why, sizeof(why));
    if (!s->ctx) {
        rc = bmpi_err_set(MPI_ERR_OTHER, "verbs: %s", why);
        goto fail;
    }
    snprintf(s->devname, sizeof(s->devname), "%s", ibv_get_device_name(s->ctx->device));
    if (ibv_query_device(s->ctx, &s->dattr) != 0) {
        rc = bmpi_err_set(MPI_ERR_OTHER, "verbs: ibv_query_device(%s): %s", s->devname,
                          strerror(errno));
        goto fail;
    }
    rc = choose_gid(s);
    if (rc)
        goto fail;
    if (s->dattr.max_qp_wr > 0 && s->cfg.sq_depth > s->dattr.max_qp_wr)
        s->cfg.sq_depth = s->dattr.max_qp_wr;
    if (s->dattr.max_qp_wr > 0 && s->cfg.rx_depth + VERBS_CTL_RSV > s->dattr.max_qp_wr)
        s->cfg.rx_depth = s->dattr.max_qp_wr - VERBS_CTL_RSV;
    int rd = s->dattr.max_qp_rd_atom < s->dattr.max_qp_init_rd_atom ? s->dattr.max_qp_rd_atom
                                                                    : s->dattr.max_qp_init_rd_atom;
    s->max_rd_atomic = rd < 1 ? 1 : rd > 16 ? 16 : rd;
    s->buf_size = (sizeof(struct verbs_wire) + s->cfg.max_am + 63) & ~(size_t)63;
    s->max_inline = (uint32_t)bmpi_env_uint("BMPI_VERBS_MAX_INLINE", 128);
    s->nranks = bmpi_world.size;

    s->pd = ibv_alloc_pd(s->ctx);
    if (!s->pd) {
        rc = bmpi_err_set(MPI_ERR_OTHER, "verbs: ibv_alloc_pd(%s): %s", s->devname, strerror(errno));
        goto fail;
    }
    bool odp = odp_usable(s);
    verbs_mr_cache_init(&s->mrc, s->pd, odp || s->cfg.leave_pinned, s->cfg.mr_cache);
    s->mrc.odp = odp;
    s->atomics = atomics_usable(s, odp);
    if (s->atomics && (rc = amo_scratch_open(s)))
        goto fail;

    /* Completion queues big enough for every queue pair we may create:
     * one per peer (receive ring; send queue) plus the UD one. */
    long long rq = (long long)s->nranks * (s->cfg.rx_depth + VERBS_CTL_RSV) + 64;
    long long sq = (long long)s->nranks * s->cfg.sq_depth + VERBS_UD_SEND;
    int maxcqe = s->dattr.max_cqe > 0 ? s->dattr.max_cqe : 65536;
    s->rcq = ibv_create_cq(s->ctx, (int)(rq < maxcqe ? rq : maxcqe), NULL, NULL, 0);
    s->scq = s->rcq ? ibv_create_cq(s->ctx, (int)(sq < maxcqe ? sq : maxcqe), NULL, NULL, 0) : NULL;
    if (!s->rcq || !s->scq) {
        rc = bmpi_err_set(MPI_ERR_OTHER, "verbs: ibv_create_cq(%s): %s", s->devname, strerror(errno));
        goto fail;
    }

    /* send buffers */
    size_t txbytes = (size_t)s->cfg.tx_bufs * s->buf_size;
    if (posix_memalign((void **)&s->tx_mem, 4096, txbytes) ||
        !(s->tx_free = malloc((size_t)s->cfg.tx_bufs * sizeof(int)))) {
        rc = bmpi_err_set(MPI_ERR_NO_MEM, "verbs: out of memory for send buffers");
        goto fail;
    }
    s->tx_mr = ibv_reg_mr(s->pd, s->tx_mem, txbytes, IBV_ACCESS_LOCAL_WRITE);
    if (!s->tx_mr) {
        rc = bmpi_err_set(MPI_ERR_OTHER, "verbs: ibv_reg_mr of %zu bytes of send buffers: %s%s",
                          txbytes, strerror(errno),
                          errno == ENOMEM ? " (locked-memory limit? see 'ulimit -l')" : "");
        goto fail;
    }
    for (int i = 0; i < s->cfg.tx_bufs; i++)
        s->tx_free[i] = s->cfg.tx_bufs - 1 - i;
    s->tx_nfree = s->cfg.tx_bufs;

    s->peers = calloc((size_t)s->nranks, sizeof(*s->peers));
    s->connecting = calloc((size_t)s->nranks, sizeof(int));
    s->due = calloc((size_t)s->nranks, sizeof(int));
    if (!s->peers || !s->connecting || !s->due) {
        rc = bmpi_err_set(MPI_ERR_NO_MEM, "verbs: out of memory for %d peers", s->nranks);
        goto fail;
    }
    for (int r = 0; r < s->nranks; r++)
        s->peers[r].rank = r;

    rc = verbs_ud_open(s);
    if (rc)
        goto fail;

    struct verbs_addr a = {
        .magic = VERBS_ADDR_MAGIC,
        .rank = bmpi_world.rank,
        .link_layer = s->pattr.link_layer,
        .port = (uint8_t)s->port,
        .lid = s->pattr.lid,
        .cm_qpn = s->ud->qp_num,
        .mtu = (uint32_t)s->pattr.active_mtu,
        .max_am = (uint32_t)s->cfg.max_am,
        .rx_depth = (uint32_t)s->cfg.rx_depth,
        .gid = s->gid,
    };
    rc = bmpi_pmix_put(VERBS_PMIX_KEY, &a, sizeof(a));
    if (rc)
        goto fail;

    tl->caps = (struct bmpi_tl_caps){
        .name = "verbs",
        .exclusivity = BMPI_TL_EXCL_NETWORK,
        .max_am = s->cfg.max_am,
        .eager_limit = s->cfg.eager_limit,
        .rma_limit = s->pattr.max_msg_sz ? s->pattr.max_msg_sz : (1u << 30),
        /* An RC completion of a WRITE or an atomic comes with the
         * responder's acknowledgement: the data is in the peer's memory.
         * Not BMPI_TL_RMA_ORDERED: the responder may execute a WRITE
         * behind an earlier READ or atomic before that one has read its
         * data (IBA's ordering rules; IBV_SEND_FENCE would be needed), so
         * the runtime orders dependent operations itself. */
        .flags = BMPI_TL_RMA_GET | BMPI_TL_RMA_PUT | BMPI_TL_NEEDS_MR | BMPI_TL_RMA_REMOTE_DONE |
                 (s->atomics ? BMPI_TL_RMA_AMO : 0) |
                 /* IBV_ATOMIC_GLOB: atomic also with respect to the CPUs */
                 (s->atomics && s->dattr.atomic_cap == IBV_ATOMIC_GLOB ? BMPI_TL_RMA_AMO_CPU : 0),
        .latency_us = 1.5,
        .bandwidth_mbs = 12000,
    };
    if (verbose_here())
        fprintf(stderr,
                "bmpi: rank %d: verbs: %s port %d (%s, LID %u, GID index %d, MTU %d, "
                "max_msg_sz %u), max_am %zu, eager %zu, %d receive buffers per peer, "
                "inline up to %u bytes, registration cache: %s, atomics: %s\n",
                bmpi_world.rank, s->devname, s->port, verbs_link_name(s->pattr.link_layer),
                s->pattr.lid, s->gid_index, 128 << s->pattr.active_mtu, s->pattr.max_msg_sz,
                s->cfg.max_am, s->cfg.eager_limit, s->cfg.rx_depth + VERBS_CTL_RSV,
                s->max_inline,
                odp                   ? "ODP, unused registrations kept"
                : s->cfg.leave_pinned ? "kept (BMPI_VERBS_LEAVE_PINNED: unsafe if memory is freed)"
                                      : "per operation (no ODP)",
                s->atomics ? "fetch-and-add, compare-and-swap (64-bit)"
                : s->dattr.atomic_cap == IBV_ATOMIC_NONE ? "none (the device has none)"
                                                         : "none (not with ODP on this device)");
    return BMPI_OK;

fail:
    if (verbose_here())
        fprintf(stderr, "bmpi: rank %d: verbs unusable: %s\n", bmpi_world.rank, bmpi_err_reason());
    verbs_close(tl);
    return rc;
}

static int verbs_add_peers(struct bmpi_tl *tl, const int *peers, int npeers, bool *reachable,
                           char (*why)[128])
{
    struct verbs_state *s = tl->priv;
    for (int i = 0; i < npeers; i++) {
        int r = peers[i];
        char reason[128] = "";
        void *data = NULL;
        size_t len = 0;
        reachable[i] = false;
        if (r < 0 || r >= s->nranks) {
            snprintf(reason, sizeof(reason), "no such rank");
        } else if (bmpi_pmix_get(r, VERBS_PMIX_KEY, &data, &len) != BMPI_OK) {
            snprintf(reason, sizeof(reason), "no verbs address published (no usable port there?)");
        } else if (len != sizeof(struct verbs_addr) ||
                   ((struct verbs_addr *)data)->magic != VERBS_ADDR_MAGIC) {
            snprintf(reason, sizeof(reason), "malformed verbs address (%zu bytes)", len);
        } else {
            struct verbs_addr *a = data;
            if (a->link_layer != s->pattr.link_layer) {
                snprintf(reason, sizeof(reason), "its port is %s, this rank's %s",
                         verbs_link_name(a->link_layer), verbs_link_name(s->pattr.link_layer));
            } else if (a->link_layer == IBV_LINK_LAYER_INFINIBAND && !s->global &&
                       a->gid.global.subnet_prefix != s->gid.global.subnet_prefix) {
                snprintf(reason, sizeof(reason),
                         "another InfiniBand subnet (prefix 0x%016llx, here 0x%016llx)",
                         (unsigned long long)be64toh(a->gid.global.subnet_prefix),
                         (unsigned long long)be64toh(s->gid.global.subnet_prefix));
            } else if (a->max_am != s->cfg.max_am || a->rx_depth != (uint32_t)s->cfg.rx_depth) {
                snprintf(reason, sizeof(reason),
                         "BMPI_VERBS_MAX_AM/RX_DEPTH differ (%u/%u there, %zu/%d here)",
                         a->max_am, a->rx_depth, s->cfg.max_am, s->cfg.rx_depth);
            } else {
                s->peers[r].addr = *a;
                s->peers[r].known = true;
                reachable[i] = true;
            }
        }
        free(data);
        if (!reachable[i] && why)
            snprintf(why[i], sizeof(why[i]), "%s", reason);
    }
    return BMPI_OK;
}

/* ---- operations and send buffers --------------------------------------------------- */

static struct verbs_op *op_get(struct verbs_state *s)
{
    struct verbs_op *op = s->op_free;
    if (op)
        s->op_free = op->next;
    else if (!(op = malloc(sizeof(*op))))
        return NULL;
    memset(op, 0, sizeof(*op));
    op->tx = -1;
    return op;
}

static void op_put(struct verbs_state *s, struct verbs_op *op)
{
    op->next = s->op_free;
    s->op_free = op;
}

static void oplist_push(struct verbs_oplist *l, struct verbs_op *op)
{
    op->next = NULL;
    if (l->tail)
        l->tail->next = op;
    else
        l->head = op;
    l->tail = op;
}

static struct verbs_op *oplist_pop(struct verbs_oplist *l)
{
    struct verbs_op *op = l->head;
    if (op) {
        l->head = op->next;
        if (!l->head)
            l->tail = NULL;
    }
    return op;
}

static const char *op_name(enum verbs_op_kind k)
{
    switch (k) {
    case VERBS_OP_READ:
        return "RDMA READ";
    case VERBS_OP_WRITE:
        return "RDMA WRITE";
    case VERBS_OP_FADD:
        return "ATOMIC FETCH AND ADD";
    case VERBS_OP_CSWAP:
        return "ATOMIC COMPARE AND SWAP";
    default:
        return "SEND";
    }
}

/* ---- send-side completions ----------------------------------------------------------- */

static void set_async_err(struct verbs_state *s, const char *msg)
{
    if (!s->async_err[0])
        snprintf(s->async_err, sizeof(s->async_err), "%s", msg);
}

static void send_completion(struct verbs_state *s, const struct ibv_wc *wc)
{
    struct verbs_op *op = (struct verbs_op *)(uintptr_t)wc->wr_id;
    s->ops_busy--;
    if (op->kind == VERBS_OP_CM) {
        s->ud_sq_free++;
        if (wc->status != IBV_WC_SUCCESS && wc->status != IBV_WC_WR_FLUSH_ERR && bmpi_world.verbose)
            fprintf(stderr, "bmpi: rank %d: verbs: a connection request to rank %d failed: %s\n",
                    bmpi_world.rank, op->peer, ibv_wc_status_str(wc->status));
        op_put(s, op);
        return;
    }
    struct verbs_peer *p = &s->peers[op->peer];
    p->sq_free++;
    if (op->tx >= 0)
        s->tx_free[s->tx_nfree++] = op->tx;
    bool flushed = wc->status == IBV_WC_WR_FLUSH_ERR && p->state == VERBS_PEER_BROKEN;
    if (wc->status != IBV_WC_SUCCESS && !flushed) {
        char what[200], size[40] = "";
        if (op->kind != VERBS_OP_SEND)
            snprintf(size, sizeof(size), " of %zu bytes", op->len);
        snprintf(what, sizeof(what), "%s%s %s rank %d failed: %s (vendor error 0x%x)",
                 op_name(op->kind), size, op->kind == VERBS_OP_READ ? "from" : "to", op->peer,
                 ibv_wc_status_str(wc->status), wc->vendor_err);
        verbs_peer_broken(s, p, "%s", what);
    }
    if (op->kind == VERBS_OP_SEND) {
        if (wc->status != IBV_WC_SUCCESS) {
            char msg[400];
            snprintf(msg, sizeof(msg), "verbs (%s): a message to rank %d is lost: %s", s->devname,
                     op->peer, p->why);
            set_async_err(s, msg);
        }
        op_put(s, op);
        return;
    }
    /* get/put/atomics: the callback runs from progress, with the reason
     * recorded right before it (bmpi_err_set keeps only the last one). */
    verbs_mr_put(&s->mrc, op->lmr);
    op->lmr = NULL;
    op->status = wc->status == IBV_WC_SUCCESS ? BMPI_OK : MPI_ERR_OTHER;
    op->wc_status = (int)wc->status;
    op->vendor_err = wc->vendor_err;
    oplist_push(&s->done, op);
}

static int reap_sends(struct verbs_state *s)
{
    struct ibv_wc wc[VERBS_CQ_BATCH];
    int total = 0;
    for (;;) {
        int n = ibv_poll_cq(s->scq, VERBS_CQ_BATCH, wc);
        if (n < 0) {
            set_async_err(s, "verbs: ibv_poll_cq on the send queue failed");
            break;
        }
        for (int i = 0; i < n; i++)
            send_completion(s, &wc[i]);
        total += n;
        if (n < VERBS_CQ_BATCH)
            break;
    }
    return total;
}

/* ---- sending -------------------------------------------------------------------------- */

/* Post one message (wire header, then hdr and iov) on p's QP. The caller
 * checked credits and the send-queue slot. */
static int post_msg(struct verbs_state *s, struct verbs_peer *p, uint8_t type, uint8_t am_id,
                    const void *hdr, size_t hdr_len, const struct iovec *iov, int iovcnt,
                    size_t total)
{
    char stack[1024] __attribute__((aligned(8)));
    bool inl = total <= s->max_inline && total <= sizeof(stack);
    int tx = -1;
    char *buf = stack;
    if (!inl) {
        if (!s->tx_nfree)
            return BMPI_TL_EAGAIN;
        tx = s->tx_free[--s->tx_nfree];
        buf = s->tx_mem + (size_t)tx * s->buf_size;
    }
    struct verbs_op *op = op_get(s);
    if (!op) {
        if (tx >= 0)
            s->tx_free[s->tx_nfree++] = tx;
        return bmpi_err_set(MPI_ERR_NO_MEM, "verbs: out of memory");
    }
    unsigned ret = p->to_return > UINT16_MAX ? UINT16_MAX : p->to_return;
    unsigned cret = p->ctl_to_return > UINT8_MAX ? UINT8_MAX : p->ctl_to_return;
    struct verbs_wire *w = (struct verbs_wire *)buf;
    *w = (struct verbs_wire){.hdr_len = (uint16_t)hdr_len,
                             .am_id = am_id,
                             .type = type,
                             .credits = (uint16_t)ret,
                             .ctl_credits = (uint8_t)cret};
    char *d = buf + sizeof(*w);
    if (hdr_len)
        memcpy(d, hdr, hdr_len);
    d += hdr_len;
    for (int i = 0; i < iovcnt; i++) {
        memcpy(d, iov[i].iov_base, iov[i].iov_len);
        d += iov[i].iov_len;
    }
    op->kind = VERBS_OP_SEND;
    op->peer = p->rank;
    op->tx = tx;
    struct ibv_sge sge = {.addr = (uintptr_t)buf,
                          .length = (uint32_t)total,
                          .lkey = inl ? 0 : s->tx_mr->lkey};
    struct ibv_send_wr wr = {.wr_id = (uintptr_t)op,
                             .sg_list = &sge,
                             .num_sge = 1,
                             .opcode = IBV_WR_SEND,
                             .send_flags = IBV_SEND_SIGNALED | (inl ? IBV_SEND_INLINE : 0)};
    struct ibv_send_wr *bad;
    int rc = ibv_post_send(p->qp, &wr, &bad);
    if (rc) {
        if (tx >= 0)
            s->tx_free[s->tx_nfree++] = tx;
        op_put(s, op);
        if (rc == ENOMEM)
            return BMPI_TL_EAGAIN;
        verbs_peer_broken(s, p, "ibv_post_send: %s", strerror(rc));
        return bmpi_err_set(MPI_ERR_OTHER, "verbs: sending to rank %d: %s", p->rank, p->why);
    }
    s->ops_busy++;
    p->sq_free--;
    p->to_return -= ret;
    p->ctl_to_return -= cret;
    return BMPI_OK;
}

static void mark_due(struct verbs_state *s, struct verbs_peer *p)
{
    if (!p->credit_due) {
        p->credit_due = true;
        s->due[s->ndue++] = p->rank;
    }
}

/* A HELLO or credit message, if resources allow; true when nothing more
 * is owed to p. */
static bool send_ctl(struct verbs_state *s, struct verbs_peer *p)
{
    if (p->state != VERBS_PEER_READY)
        return p->state == VERBS_PEER_BROKEN;
    bool want_credit = p->to_return >= (unsigned)(s->cfg.rx_depth / 2);
    if (!p->hello_due && !want_credit)
        return true;
    if (p->ctl_credits < 1 || p->sq_free < 1)
        return false;
    int rc = post_msg(s, p, p->hello_due ? VERBS_MSG_HELLO : VERBS_MSG_CREDIT, 0, NULL, 0, NULL,
                      0, sizeof(struct verbs_wire));
    if (rc == BMPI_TL_EAGAIN)
        return false;
    if (rc == BMPI_OK)
        p->ctl_credits--;
    p->hello_due = false;
    return true;
}

static void post_rma(struct verbs_state *s, struct verbs_peer *p, struct verbs_op *op);

void verbs_peer_ready(struct verbs_state *s, struct verbs_peer *p, bool say_hello)
{
    p->state = VERBS_PEER_READY;
    if (verbose_here())
        fprintf(stderr, "bmpi: rank %d: verbs: connected to rank %d (QP %u)\n", bmpi_world.rank,
                p->rank, p->qp->qp_num);
    if (say_hello) {
        p->hello_due = true;
        if (!send_ctl(s, p))
            mark_due(s, p);
    }
    /* get/put waiting for the connection are posted from progress */
}

static int verbs_am_send(struct bmpi_tl *tl, int peer, uint8_t am_id, const void *hdr,
                         size_t hdr_len, const struct iovec *iov, int iovcnt)
{
    struct verbs_state *s = tl->priv;
    size_t total = sizeof(struct verbs_wire) + hdr_len;
    for (int i = 0; i < iovcnt; i++)
        total += iov[i].iov_len;
    if (__builtin_expect(total > s->buf_size || hdr_len > UINT16_MAX ||
                             (unsigned)peer >= (unsigned)s->nranks,
                         0)) {
        if ((unsigned)peer >= (unsigned)s->nranks)
            return bmpi_err_set(MPI_ERR_INTERN, "verbs: no rank %d", peer);
        return bmpi_err_set(MPI_ERR_INTERN,
                            "verbs: active message of %zu bytes (header %zu) exceeds max_am %zu",
                            total - sizeof(struct verbs_wire), hdr_len, s->cfg.max_am);
    }
    struct verbs_peer *p = &s->peers[peer];
    if (__builtin_expect(p->state != VERBS_PEER_READY, 0)) {
        if (p->state == VERBS_PEER_BROKEN)
            return bmpi_err_set(MPI_ERR_OTHER, "verbs: connection to rank %d failed: %s", peer,
                                p->why);
        if (p->state == VERBS_PEER_NONE) {
            int rc = verbs_connect(s, p);
            if (rc)
                return rc;
        }
        return BMPI_TL_EAGAIN; /* connecting: progress() completes it */
    }
    if (p->credits < 1)
        return BMPI_TL_EAGAIN; /* credits come back only through delivery, in progress() */
    if (p->sq_free < 1 || (total > s->max_inline && !s->tx_nfree)) {
        reap_sends(s);
        if (p->sq_free < 1)
            return BMPI_TL_EAGAIN;
    }
    int rc = post_msg(s, p, VERBS_MSG_AM, am_id, hdr, hdr_len, iov, iovcnt, total);
    if (rc == BMPI_OK)
        p->credits--;
    return rc;
}

/* ---- receiving ------------------------------------------------------------------------- */

static void rc_receive(struct verbs_state *s, const struct ibv_wc *wc)
{
    int peer = (int)((wc->wr_id >> 24) & 0xffffffffu);
    int slot = (int)(wc->wr_id & 0xffffff);
    struct verbs_peer *p = &s->peers[peer];
    if (wc->status != IBV_WC_SUCCESS) {
        if (wc->status == IBV_WC_WR_FLUSH_ERR && p->state == VERBS_PEER_BROKEN)
            return; /* the QP failed earlier; its receives come back */
        verbs_peer_broken(s, p, "receive from rank %d failed: %s (vendor error 0x%x)", peer,
                          ibv_wc_status_str(wc->status), wc->vendor_err);
        char msg[400];
        snprintf(msg, sizeof(msg), "verbs (%s): connection to rank %d lost: %s", s->devname, peer,
                 p->why);
        set_async_err(s, msg);
        return;
    }
    if (p->state == VERBS_PEER_CONNECTING && p->rtr) {
        /* the first message over RC: the peer's QP takes ours */
        for (int i = 0; i < s->nconnecting; i++)
            if (s->connecting[i] == peer) {
                s->connecting[i] = s->connecting[--s->nconnecting];
                break;
            }
        verbs_peer_ready(s, p, false);
    }
    const char *buf = p->rx_mem + (size_t)slot * s->buf_size;
    struct verbs_wire w;
    memcpy(&w, buf, sizeof(w));
    if (wc->byte_len < sizeof(w) || wc->byte_len < sizeof(w) + w.hdr_len) {
        set_async_err(s, "verbs: malformed message received");
        return;
    }
    p->credits += w.credits;
    p->ctl_credits += w.ctl_credits;
    if (w.type == VERBS_MSG_AM) {
        const char *hdr = buf + sizeof(w);
        bmpi_am_deliver(peer, w.am_id, hdr, w.hdr_len, hdr + w.hdr_len,
                        wc->byte_len - sizeof(w) - w.hdr_len);
    }
    if (p->state == VERBS_PEER_BROKEN || !p->qp)
        return;
    if (verbs_post_rx(s, p, slot) != BMPI_OK) {
        verbs_peer_broken(s, p, "%s", bmpi_err_reason());
        set_async_err(s, bmpi_err_reason());
        return;
    }
    if (w.type == VERBS_MSG_AM)
        p->to_return++;
    else
        p->ctl_to_return++;
    if (p->to_return >= (unsigned)(s->cfg.rx_depth / 2) && !send_ctl(s, p))
        mark_due(s, p);
}

static int poll_receives(struct verbs_state *s)
{
    struct ibv_wc wc[VERBS_CQ_BATCH];
    int total = 0;
    while (total < VERBS_RX_PER_PROGRESS) {
        int n = ibv_poll_cq(s->rcq, VERBS_CQ_BATCH, wc);
        if (n < 0) {
            set_async_err(s, "verbs: ibv_poll_cq on the receive queue failed");
            break;
        }
        for (int i = 0; i < n; i++) {
            if ((wc[i].wr_id >> 56) == VERBS_WR_RECV_UD) {
                int slot = (int)(wc[i].wr_id & 0xffffff);
                if (wc[i].status != IBV_WC_SUCCESS)
                    continue;
                size_t sz = VERBS_GRH + sizeof(struct verbs_cm_msg);
                struct verbs_cm_msg m;
                bool ok = wc[i].byte_len >= sz;
                if (ok)
                    memcpy(&m, s->ud_mem + (size_t)slot * sz + VERBS_GRH, sizeof(m));
                int rc = ibv_post_recv(s->ud,
                                       &(struct ibv_recv_wr){
                                           .wr_id = wc[i].wr_id,
                                           .sg_list = &(struct ibv_sge){
                                               .addr = (uintptr_t)(s->ud_mem + (size_t)slot * sz),
                                               .length = (uint32_t)sz,
                                               .lkey = s->ud_mr->lkey},
                                           .num_sge = 1},
                                       &(struct ibv_recv_wr *){NULL});
                if (rc)
                    set_async_err(s, "verbs: reposting a UD receive failed");
                if (ok)
                    verbs_cm_handle(s, &m);
            } else {
                rc_receive(s, &wc[i]);
            }
        }
        total += n;
        if (n < VERBS_CQ_BATCH)
            break;
    }
    return total;
}

/* ---- RMA ------------------------------------------------------------------------------ */

static void fail_op(struct verbs_state *s, struct verbs_op *op)
{
    verbs_mr_put(&s->mrc, op->lmr);
    op->lmr = NULL;
    op->status = MPI_ERR_OTHER;
    op->wc_status = -1;
    oplist_push(&s->done, op);
}

/* Post op on p's QP, or fail it if the connection is broken; EAGAIN (op
 * untouched) when the send queue is full. */
static int rma_post_now(struct verbs_state *s, struct verbs_peer *p, struct verbs_op *op)
{
    if (p->state == VERBS_PEER_BROKEN) {
        fail_op(s, op);
        return BMPI_OK;
    }
    if (p->sq_free < 1)
        return BMPI_TL_EAGAIN;
    struct ibv_sge sge = {.addr = (uintptr_t)op->local,
                          .length = (uint32_t)op->len,
                          .lkey = op->lkey};
    struct ibv_send_wr wr = {.wr_id = (uintptr_t)op,
                             .sg_list = &sge,
                             .num_sge = op->len ? 1 : 0,
                             .send_flags = IBV_SEND_SIGNALED};
    if (op->kind == VERBS_OP_READ || op->kind == VERBS_OP_WRITE) {
        wr.opcode = op->kind == VERBS_OP_READ ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;
        wr.wr.rdma.remote_addr = op->raddr;
        wr.wr.rdma.rkey = op->rkey;
    } else {
        /* the arguments in host order: the provider puts them on the wire */
        wr.opcode = op->kind == VERBS_OP_FADD ? IBV_WR_ATOMIC_FETCH_AND_ADD
                                              : IBV_WR_ATOMIC_CMP_AND_SWP;
        wr.wr.atomic.remote_addr = op->raddr;
        wr.wr.atomic.rkey = op->rkey;
        wr.wr.atomic.compare_add = op->kind == VERBS_OP_FADD ? op->operand : op->compare;
        wr.wr.atomic.swap = op->operand;
    }
    struct ibv_send_wr *bad;
    int rc = ibv_post_send(p->qp, &wr, &bad);
    if (rc == ENOMEM)
        return BMPI_TL_EAGAIN;
    if (rc) {
        verbs_peer_broken(s, p, "ibv_post_send(%s): %s", op_name(op->kind), strerror(rc));
        fail_op(s, op);
        return BMPI_OK;
    }
    s->ops_busy++;
    p->sq_free--;
    return BMPI_OK;
}

/* A new get/put: now, or behind those already waiting on p (in order). */
static void post_rma(struct verbs_state *s, struct verbs_peer *p, struct verbs_op *op)
{
    if ((p->state == VERBS_PEER_BROKEN || (p->state == VERBS_PEER_READY && !p->rma_wait.head)) &&
        rma_post_now(s, p, op) != BMPI_TL_EAGAIN)
        return;
    if (!p->rma_wait.head)
        s->rma_waiting++;
    oplist_push(&p->rma_wait, op);
    if (p->state == VERBS_PEER_NONE)
        verbs_connect(s, p);
}

/* Waiting get/put of peers that are ready (or broken: they fail). */
static int retry_rma(struct verbs_state *s)
{
    int n = 0;
    for (int r = 0; r < s->nranks && s->rma_waiting > 0; r++) {
        struct verbs_peer *p = &s->peers[r];
        if (!p->rma_wait.head ||
            (p->state != VERBS_PEER_READY && p->state != VERBS_PEER_BROKEN))
            continue;
        struct verbs_op *op;
        while ((op = oplist_pop(&p->rma_wait))) {
            if (rma_post_now(s, p, op) == BMPI_TL_EAGAIN) {
                op->next = p->rma_wait.head; /* back in front */
                p->rma_wait.head = op;
                if (!p->rma_wait.tail)
                    p->rma_wait.tail = op;
                break;
            }
            n++;
        }
        if (!p->rma_wait.head)
            s->rma_waiting--;
    }
    return n;
}

/* Record why op failed (bmpi_err_set keeps only the last reason). */
static void op_failure(struct verbs_state *s, const struct verbs_op *op)
{
    const struct verbs_peer *p = &s->peers[op->peer];
    const char *dir = op->kind == VERBS_OP_READ ? "from" : "to";
    if (op->wc_status >= 0 && op->wc_status != IBV_WC_WR_FLUSH_ERR)
        bmpi_err_set(MPI_ERR_OTHER,
                     "verbs (%s): %s of %zu bytes %s rank %d failed: %s (vendor error 0x%x)",
                     s->devname, op_name(op->kind), op->len, dir, op->peer,
                     ibv_wc_status_str((enum ibv_wc_status)op->wc_status), op->vendor_err);
    else
        bmpi_err_set(MPI_ERR_OTHER,
                     "verbs (%s): %s of %zu bytes %s rank %d failed: the connection failed "
                     "earlier: %s",
                     s->devname, op_name(op->kind), op->len, dir, op->peer, p->why);
}

/* An element of a multi-element amo() completed; true (with the caller's
 * callback and status in *done, *ctx, *status) when it was the last. */
static bool amo_group_finish(struct verbs_state *s, struct verbs_op *op, bmpi_tl_done_fn *done,
                             void **ctx, int *status)
{
    struct verbs_amo_group *g = op->group;
    if (op->status && !g->status) {
        op_failure(s, op);
        g->status = op->status;
        snprintf(g->why, sizeof(g->why), "%s", bmpi_err_reason());
    }
    if (--g->left > 0)
        return false;
    *done = g->done;
    *ctx = g->ctx;
    *status = g->status;
    if (g->status)
        bmpi_err_set(g->status, "%s", g->why);
    free(g);
    return true;
}

static int finish_rma(struct verbs_state *s)
{
    int n = 0;
    struct verbs_op *op;
    while ((op = oplist_pop(&s->done))) {
        bmpi_tl_done_fn done = op->done;
        void *ctx = op->ctx;
        int status = op->status;
        bool call = true;
        if (op->group)
            call = amo_group_finish(s, op, &done, &ctx, &status);
        else if (status)
            op_failure(s, op); /* recorded right before the callback */
        op_put(s, op);
        if (call)
            done(ctx, status);
        n++;
    }
    return n;
}

static int verbs_rma(struct bmpi_tl *tl, enum verbs_op_kind kind, int peer, void *local,
                     void *local_memh, size_t len, uint64_t remote_addr, const void *rkey,
                     size_t rkey_len, bmpi_tl_done_fn done, void *ctx)
{
    struct verbs_state *s = tl->priv;
    struct verbs_rkey k;
    if ((unsigned)peer >= (unsigned)s->nranks)
        return bmpi_err_set(MPI_ERR_INTERN, "verbs: no rank %d", peer);
    if (rkey_len != sizeof(k))
        return bmpi_err_set(MPI_ERR_INTERN, "verbs: remote key of %zu bytes, expected %zu",
                            rkey_len, sizeof(k));
    if (len > tl->caps.rma_limit)
        return bmpi_err_set(MPI_ERR_INTERN, "verbs: %s of %zu bytes exceeds the port's %zu",
                            op_name(kind), len, tl->caps.rma_limit);
    memcpy(&k, rkey, sizeof(k));
    struct verbs_peer *p = &s->peers[peer];
    if (p->state == VERBS_PEER_BROKEN)
        return bmpi_err_set(MPI_ERR_OTHER, "verbs: %s rank %d: connection failed: %s",
                            op_name(kind), peer, p->why);
    struct verbs_op *op = op_get(s);
    if (!op)
        return bmpi_err_set(MPI_ERR_NO_MEM, "verbs: out of memory");
    op->kind = kind;
    op->peer = peer;
    op->local = local;
    op->len = len;
    op->raddr = remote_addr;
    op->rkey = k.rkey;
    op->done = done;
    op->ctx = ctx;
    /* The runtime passes no local registration (local_memh NULL): take one
     * from the cache for the duration of the operation. */
    if (local_memh) {
        op->lmr = local_memh;
        op->lmr->refs++;
    } else {
        int rc = verbs_mr_get(&s->mrc, local, len,
                              kind == VERBS_OP_READ ? IBV_ACCESS_LOCAL_WRITE : 0, &op->lmr);
        if (rc) {
            op_put(s, op);
            return rc;
        }
    }
    op->lkey = op->lmr->mr->lkey;
    post_rma(s, p, op);
    return BMPI_OK;
}

static int verbs_get(struct bmpi_tl *tl, int peer, void *local, void *local_memh, size_t len,
                     uint64_t remote_addr, const void *rkey, size_t rkey_len, bmpi_tl_done_fn done,
                     void *ctx)
{
    return verbs_rma(tl, VERBS_OP_READ, peer, local, local_memh, len, remote_addr, rkey, rkey_len,
                     done, ctx);
}

static int verbs_put(struct bmpi_tl *tl, int peer, const void *local, void *local_memh,
                     size_t len, uint64_t remote_addr, const void *rkey, size_t rkey_len,
                     bmpi_tl_done_fn done, void *ctx)
{
    return verbs_rma(tl, VERBS_OP_WRITE, peer, (void *)local, local_memh, len, remote_addr, rkey,
                     rkey_len, done, ctx);
}

/* ---- atomics -------------------------------------------------------------------------- */

/* IB has two 8-byte atomics, and the device applies them to the target's
 * memory in host order (docs/verbs.md, "RMA and atomics"): SUM on 64-bit
 * integers is FETCH_AND_ADD (two's complement: one adder for both),
 * CSWAP is CMP_AND_SWP, and READ is a FETCH_AND_ADD of 0, atomic with
 * respect to the other atomics where an RDMA READ is not. Everything else
 * the runtime does itself with active messages. */
static bool verbs_amo_native(struct bmpi_tl *tl, int peer, enum bmpi_tl_amo_op op,
                             enum bmpi_tl_amo_type type, bool fetch)
{
    const struct verbs_state *s = tl->priv;
    (void)peer;
    if (!s->atomics || (type != BMPI_TL_AMO_INT64 && type != BMPI_TL_AMO_UINT64))
        return false;
    return op == BMPI_TL_AMO_SUM || op == BMPI_TL_AMO_CSWAP || (op == BMPI_TL_AMO_READ && fetch);
}

/* What amo() refuses: 0, or an MPI error class with the reason. */
static int amo_check(struct bmpi_tl *tl, int peer, const struct bmpi_tl_amo *a)
{
    const struct verbs_state *s = tl->priv;
    if ((unsigned)peer >= (unsigned)s->nranks)
        return bmpi_err_set(MPI_ERR_INTERN, "verbs: no rank %d", peer);
    if (a->rkey_len != sizeof(struct verbs_rkey))
        return bmpi_err_set(MPI_ERR_INTERN, "verbs: remote key of %zu bytes, expected %zu",
                            a->rkey_len, sizeof(struct verbs_rkey));
    if (!verbs_amo_native(tl, peer, a->op, a->type, a->result != NULL))
        return bmpi_err_set(MPI_ERR_INTERN,
                            "verbs: atomic op %d on type %d%s is not native here (amo_native)",
                            (int)a->op, (int)a->type, a->result ? " with fetch" : "");
    if (a->count == 0 || (a->op == BMPI_TL_AMO_CSWAP && a->count != 1) ||
        a->count > SIZE_MAX / sizeof(uint64_t))
        return bmpi_err_set(MPI_ERR_INTERN, "verbs: atomic of %zu elements", a->count);
    if (a->remote_addr % sizeof(uint64_t))
        return bmpi_err_set(MPI_ERR_INTERN,
                            "verbs: atomic at 0x%llx: IB atomics need an 8-byte aligned target",
                            (unsigned long long)a->remote_addr);
    struct verbs_peer *p = &s->peers[peer];
    if (p->state == VERBS_PEER_BROKEN)
        return bmpi_err_set(MPI_ERR_OTHER, "verbs: atomic to rank %d: connection failed: %s", peer,
                            p->why);
    return BMPI_OK;
}

/* The work request of element i of a (its old value to res, or to the
 * scratch buffer without a result). */
static void amo_element(struct verbs_state *s, struct verbs_op *op, int peer,
                        const struct bmpi_tl_amo *a, uint32_t rkey, size_t i,
                        struct verbs_mr_entry *res)
{
    op->kind = a->op == BMPI_TL_AMO_CSWAP ? VERBS_OP_CSWAP : VERBS_OP_FADD;
    op->peer = peer;
    op->len = sizeof(uint64_t);
    op->raddr = a->remote_addr + i * sizeof(uint64_t);
    op->rkey = rkey;
    if (a->op == BMPI_TL_AMO_READ)
        op->operand = 0;
    else
        memcpy(&op->operand, (const char *)a->operand + i * sizeof(uint64_t), sizeof(uint64_t));
    if (a->op == BMPI_TL_AMO_CSWAP)
        memcpy(&op->compare, a->compare, sizeof(uint64_t));
    if (res) {
        op->local = (char *)a->result + i * sizeof(uint64_t);
        op->lmr = res;
        op->lkey = res->mr->lkey;
    } else {
        op->local = s->amo_scratch;
        op->lkey = s->amo_scratch_mr->lkey;
    }
}

static void oplist_free(struct verbs_state *s, struct verbs_oplist *l)
{
    struct verbs_op *op;
    while ((op = oplist_pop(l)))
        op_put(s, op);
}

/* One work request per element, queued in order behind the peer's
 * waiting RMA; done runs once all have completed. */
static int verbs_amo(struct bmpi_tl *tl, int peer, const struct bmpi_tl_amo *a,
                     bmpi_tl_done_fn done, void *ctx)
{
    struct verbs_state *s = tl->priv;
    int rc = amo_check(tl, peer, a);
    if (rc)
        return rc;
    struct verbs_rkey k;
    memcpy(&k, a->rkey, sizeof(k));
    struct verbs_mr_entry *res = NULL;
    if (a->result &&
        (rc = verbs_mr_get(&s->mrc, a->result, a->count * sizeof(uint64_t), IBV_ACCESS_LOCAL_WRITE,
                           &res)))
        return rc;
    struct verbs_amo_group *g = NULL;
    struct verbs_oplist ops = {NULL, NULL};
    if (a->count > 1 && !(g = calloc(1, sizeof(*g))))
        goto nomem;
    for (size_t i = 0; i < a->count; i++) {
        struct verbs_op *op = op_get(s);
        if (!op)
            goto nomem;
        amo_element(s, op, peer, a, k.rkey, i, res);
        op->group = g;
        op->done = done;
        op->ctx = ctx;
        oplist_push(&ops, op);
    }
    if (g)
        *g = (struct verbs_amo_group){.left = a->count, .done = done, .ctx = ctx};
    if (res)
        res->refs += (int)a->count - 1; /* one for each element, released at its completion */
    struct verbs_op *op;
    while ((op = oplist_pop(&ops)))
        post_rma(s, &s->peers[peer], op);
    return BMPI_OK;

nomem:
    oplist_free(s, &ops);
    free(g);
    verbs_mr_put(&s->mrc, res);
    return bmpi_err_set(MPI_ERR_NO_MEM, "verbs: out of memory for an atomic of %zu elements",
                        a->count);
}

static int verbs_mem_reg(struct bmpi_tl *tl, void *addr, size_t len, void **memh)
{
    struct verbs_state *s = tl->priv;
    struct verbs_mr_entry *e;
    /* window memory is a target of atomics too */
    int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
                 (s->atomics ? IBV_ACCESS_REMOTE_ATOMIC : 0);
    int rc = verbs_mr_get(&s->mrc, addr, len, access, &e);
    if (rc)
        return rc;
    *memh = e;
    return BMPI_OK;
}

static int verbs_mem_dereg(struct bmpi_tl *tl, void *memh)
{
    struct verbs_state *s = tl->priv;
    verbs_mr_put(&s->mrc, memh);
    return BMPI_OK;
}

static int verbs_rkey_pack(struct bmpi_tl *tl, void *memh, void *buf, size_t *len)
{
    struct verbs_mr_entry *e = memh;
    struct verbs_rkey k = {.rkey = e->mr->rkey, .base = e->base, .len = e->len};
    /* Fault injection for tests: a key the device does not know, so that
     * the peer's RDMA READ fails (test/verbs/verbs_emu.sh). */
    if (bmpi_env_switch("BMPI_VERBS_FAULT_RKEY") == 1)
        k.rkey ^= 0x5a5a0000u;
    if (*len < sizeof(k))
        return bmpi_err_set(MPI_ERR_INTERN, "verbs: rkey of %zu bytes does not fit in %zu",
                            sizeof(k), *len);
    memcpy(buf, &k, sizeof(k));
    *len = sizeof(k);
    return BMPI_OK;
}

/* ---- progress ---------------------------------------------------------------------------- */

static int service_due(struct verbs_state *s)
{
    int n = 0;
    for (int i = 0; i < s->ndue;) {
        struct verbs_peer *p = &s->peers[s->due[i]];
        if (send_ctl(s, p)) {
            p->credit_due = false;
            s->due[i] = s->due[--s->ndue];
            n++;
        } else {
            i++;
        }
    }
    return n;
}

static int verbs_progress(struct bmpi_tl *tl)
{
    struct verbs_state *s = tl->priv;
    if (s->in_progress)
        return 0; /* re-entered from a handler: delivering now would break order */
    s->in_progress = true;
    int n = reap_sends(s);
    n += poll_receives(s);
    if (s->nconnecting)
        verbs_cm_retry(s);
    if (s->ndue)
        n += service_due(s);
    if (s->rma_waiting)
        n += retry_rma(s);
    if (s->done.head)
        n += finish_rma(s);
    if (s->async_err[0]) {
        char msg[sizeof(s->async_err)];
        memcpy(msg, s->async_err, sizeof(msg));
        s->async_err[0] = 0;
        s->in_progress = false;
        bmpi_err_comm(MPI_COMM_WORLD, MPI_ERR_OTHER, "MPI progress", "%s", msg);
        return n + 1;
    }
    s->in_progress = false;
    /* At least 1 while work requests are in flight, so that MPI_Finalize's
     * drain (bounded by the runtime) waits for their completions before
     * the queue pairs are destroyed. */
    return n ? n : s->ops_busy > 0;
}

/* ---- close ------------------------------------------------------------------------------- */

/* An RMA operation that will never run its callback (close). */
static void op_discard(struct verbs_state *s, struct verbs_op *op)
{
    verbs_mr_put(&s->mrc, op->lmr);
    if (op->group && --op->group->left == 0)
        free(op->group);
    free(op);
}

static void verbs_close(struct bmpi_tl *tl)
{
    struct verbs_state *s = tl->priv;
    if (!s)
        return;
    /* Let sends in flight finish (bounded): every peer is past the
     * runtime's final fence, so nothing new is coming. */
    if (s->scq) {
        uint64_t t0 = verbs_now_ns();
        while (s->ops_busy > 0 && verbs_now_ns() - t0 < 200ull * 1000 * 1000)
            reap_sends(s);
    }
    if (bmpi_world.verbose >= 2)
        fprintf(stderr,
                "bmpi: rank %d: verbs: registrations: %llu ibv_reg_mr, %llu cache hits\n",
                bmpi_world.rank, (unsigned long long)s->mrc.regs, (unsigned long long)s->mrc.hits);
    if (s->peers)
        for (int r = 0; r < s->nranks; r++) {
            struct verbs_op *op;
            while ((op = oplist_pop(&s->peers[r].rma_wait)))
                op_discard(s, op);
            verbs_qp_destroy(s, &s->peers[r]);
        }
    verbs_ud_close(s);
    if (s->tx_mr)
        ibv_dereg_mr(s->tx_mr);
    free(s->tx_mem);
    if (s->amo_scratch_mr)
        ibv_dereg_mr(s->amo_scratch_mr);
    free(s->amo_scratch);
    free(s->tx_free);
    struct verbs_op *op;
    while ((op = oplist_pop(&s->done)))
        op_discard(s, op);
    if (s->pd)
        verbs_mr_cache_fini(&s->mrc);
    if (s->scq)
        ibv_destroy_cq(s->scq);
    if (s->rcq)
        ibv_destroy_cq(s->rcq);
    if (s->pd) {
        int rc = ibv_dealloc_pd(s->pd);
        if (rc && bmpi_world.verbose)
            fprintf(stderr, "bmpi: rank %d: verbs: ibv_dealloc_pd: %s\n", bmpi_world.rank,
                    strerror(rc));
    }
    if (s->ctx)
        ibv_close_device(s->ctx);
    if (s->devs)
        ibv_free_device_list(s->devs);
    while ((op = s->op_free)) {
        s->op_free = op->next;
        free(op);
    }
    /* operations never completed are leaked rather than freed under the
     * device's feet */
    free(s->peers);
    free(s->connecting);
    free(s->due);
    free(s);
    tl->priv = NULL;
}

const struct bmpi_tl_ops bmpi_tl_verbs_ops = {
    .query = verbs_query,
    .open = verbs_open,
    .add_peers = verbs_add_peers,
    .close = verbs_close,
    .query_other_jobs = bmpi_tl_unsupported_query_other_jobs,
    .card = bmpi_tl_unsupported_card,
    .add_card = bmpi_tl_unsupported_add_card,
    .am_send = verbs_am_send,
    .mem_reg = verbs_mem_reg,
    .mem_dereg = verbs_mem_dereg,
    .rkey_pack = verbs_rkey_pack,
    .get = verbs_get,
    .put = verbs_put,
    .amo_native = verbs_amo_native,
    .amo = verbs_amo,
    .flush = bmpi_tl_flush_done,
    .progress = verbs_progress,
};
