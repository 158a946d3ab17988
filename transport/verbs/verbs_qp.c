/*
 * verbs: queue pairs and the connection exchange (see verbs.h for the
 * sequence, docs/verbs.md for the reasons).
 *
 * Every process has one UD queue pair, published through PMIx at open.
 * RC queue pairs are created on first use of a peer: the initiator sends
 * CONN{qpn, psn} to the peer's UD QP; the peer creates its own RC QP,
 * brings it to RTS and answers CONN{qpn, psn, READY}; the initiator
 * brings its QP up and says HELLO over RC. Crossing requests (both sides
 * start at once) work the same way: each side has exactly one QP per peer
 * and each CONN carries the same information. UD may lose a datagram:
 * requests without an answer are sent again every 100 ms, and after
 * cm_timeout_s the peer is declared unreachable.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "runtime/error.h"
#include "runtime/world.h"
#include "transport/verbs/verbs.h"

#define CM_RESEND_NS (100ull * 1000 * 1000)

uint64_t verbs_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint32_t random_psn(void)
{
    uint32_t v = 0;
    if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t)sizeof(v))
        v = (uint32_t)verbs_now_ns();
    return v & 0xffffff;
}

void verbs_peer_broken(struct verbs_state *s, struct verbs_peer *p, const char *fmt, ...)
{
    if (p->state == VERBS_PEER_BROKEN)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->why, sizeof(p->why), fmt, ap);
    va_end(ap);
    p->state = VERBS_PEER_BROKEN;
    if (bmpi_world.verbose)
        fprintf(stderr, "bmpi: rank %d: verbs: connection to rank %d failed: %s\n",
                bmpi_world.rank, p->rank, p->why);
    /* get/put waiting on this peer fail from progress (retry_rma) */
    (void)s;
}

/* ---- UD: the connection channel ----------------------------------------- */

static int post_ud_recv(struct verbs_state *s, int slot)
{
    size_t sz = VERBS_GRH + sizeof(struct verbs_cm_msg);
    struct ibv_sge sge = {.addr = (uintptr_t)(s->ud_mem + (size_t)slot * sz),
                          .length = (uint32_t)sz,
                          .lkey = s->ud_mr->lkey};
    struct ibv_recv_wr wr = {.wr_id = verbs_rx_wrid(VERBS_WR_RECV_UD, 0, slot),
                             .sg_list = &sge,
                             .num_sge = 1};
    struct ibv_recv_wr *bad;
    int rc = ibv_post_recv(s->ud, &wr, &bad);
    if (rc)
        return bmpi_err_set(MPI_ERR_OTHER, "verbs: ibv_post_recv on the UD queue pair: %s",
                            strerror(rc));
    return BMPI_OK;
}

int verbs_ud_open(struct verbs_state *s)
{
    s->ud_depth = 64;
    size_t sz = VERBS_GRH + sizeof(struct verbs_cm_msg);
    size_t bytes = ((size_t)s->ud_depth + VERBS_UD_SEND) * sz;
    s->ud_mem = calloc(1, bytes);
    if (!s->ud_mem)
        return bmpi_err_set(MPI_ERR_NO_MEM, "verbs: out of memory");
    s->ud_mr = ibv_reg_mr(s->pd, s->ud_mem, bytes, IBV_ACCESS_LOCAL_WRITE);
    if (!s->ud_mr)
        return bmpi_err_set(MPI_ERR_OTHER, "verbs: ibv_reg_mr for the UD buffers: %s",
                            strerror(errno));
    struct ibv_qp_init_attr ia = {
        .send_cq = s->scq,
        .recv_cq = s->rcq,
        .cap = {.max_send_wr = VERBS_UD_SEND, .max_recv_wr = (uint32_t)s->ud_depth,
                .max_send_sge = 1, .max_recv_sge = 1, .max_inline_data = s->max_inline},
        .qp_type = IBV_QPT_UD,
    };
    s->ud = ibv_create_qp(s->pd, &ia);
    if (!s->ud && s->max_inline) {
        /* the device takes no (or less) inline data: do without */
        ia.cap.max_inline_data = 0;
        s->ud = ibv_create_qp(s->pd, &ia);
    }
    if (!s->ud)
        return bmpi_err_set(MPI_ERR_OTHER, "verbs: ibv_create_qp(UD) on %s: %s", s->devname,
                            strerror(errno));
    if (ia.cap.max_inline_data < s->max_inline)
        s->max_inline = ia.cap.max_inline_data;
    s->ud_sq_free = VERBS_UD_SEND;
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT,
                            .pkey_index = 0,
                            .port_num = (uint8_t)s->port,
                            .qkey = VERBS_QKEY};
    int rc = ibv_modify_qp(s->ud, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
    if (!rc) {
        memset(&a, 0, sizeof(a));
        a.qp_state = IBV_QPS_RTR;
        rc = ibv_modify_qp(s->ud, &a, IBV_QP_STATE);
    }
    if (!rc) {
        memset(&a, 0, sizeof(a));
        a.qp_state = IBV_QPS_RTS;
        a.sq_psn = random_psn();
        rc = ibv_modify_qp(s->ud, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
    }
    if (rc)
        return bmpi_err_set(MPI_ERR_OTHER, "verbs: bringing the UD queue pair up on %s: %s",
                            s->devname, strerror(rc));
    for (int i = 0; i < s->ud_depth; i++) {
        int err = post_ud_recv(s, i);
        if (err)
            return err;
    }
    return BMPI_OK;
}

void verbs_ud_close(struct verbs_state *s)
{
    if (s->ud)
        ibv_destroy_qp(s->ud);
    s->ud = NULL;
    if (s->ud_mr)
        ibv_dereg_mr(s->ud_mr);
    s->ud_mr = NULL;
    free(s->ud_mem);
    s->ud_mem = NULL;
}

static void fill_ah(struct verbs_state *s, const struct verbs_addr *to, struct ibv_ah_attr *ah)
{
    memset(ah, 0, sizeof(*ah));
    ah->dlid = to->lid;
    ah->sl = (uint8_t)s->cfg.sl;
    ah->port_num = (uint8_t)s->port;
    if (s->global) {
        ah->is_global = 1;
        ah->grh.dgid = to->gid;
        ah->grh.sgid_index = (uint8_t)s->gid_index;
        ah->grh.hop_limit = 64;
    }
}

/* Send our CONN to peer p; the UD send buffer is the slot after the
 * receive slots (one CONN at a time: the send is inline when possible,
 * and we wait for its completion otherwise). */
static int send_cm(struct verbs_state *s, struct verbs_peer *p)
{
    if (!p->ah) {
        struct ibv_ah_attr aa;
        fill_ah(s, &p->addr, &aa);
        p->ah = ibv_create_ah(s->pd, &aa);
        if (!p->ah)
            return bmpi_err_set(MPI_ERR_OTHER, "verbs: ibv_create_ah towards rank %d: %s",
                                p->rank, strerror(errno));
    }
    if (s->ud_sq_free <= 0)
        return BMPI_TL_EAGAIN;
    size_t sz = VERBS_GRH + sizeof(struct verbs_cm_msg);
    /* UD sends complete in order: a slot is free again when its turn
     * comes round, since at most VERBS_UD_SEND are in flight */
    size_t slot = (size_t)s->ud_depth + s->ud_tx_next++ % VERBS_UD_SEND;
    struct verbs_cm_msg *m = (struct verbs_cm_msg *)(s->ud_mem + slot * sz);
    *m = (struct verbs_cm_msg){.magic = VERBS_CM_MAGIC,
                               .src = bmpi_world.rank,
                               .qpn = p->qp->qp_num,
                               .psn = p->psn,
                               .flags = p->rtr ? VERBS_CM_READY : 0};
    struct verbs_op *op = s->op_free;
    if (op)
        s->op_free = op->next;
    else if (!(op = calloc(1, sizeof(*op))))
        return bmpi_err_set(MPI_ERR_NO_MEM, "verbs: out of memory");
    memset(op, 0, sizeof(*op));
    op->kind = VERBS_OP_CM;
    op->peer = p->rank;
    op->tx = -1;
    struct ibv_sge sge = {.addr = (uintptr_t)m, .length = sizeof(*m), .lkey = s->ud_mr->lkey};
    struct ibv_send_wr wr = {.wr_id = (uintptr_t)op,
                             .sg_list = &sge,
                             .num_sge = 1,
                             .opcode = IBV_WR_SEND,
                             .send_flags = IBV_SEND_SIGNALED |
                                           (sizeof(*m) <= s->max_inline ? IBV_SEND_INLINE : 0)};
    wr.wr.ud.ah = p->ah;
    wr.wr.ud.remote_qpn = p->addr.cm_qpn;
    wr.wr.ud.remote_qkey = VERBS_QKEY;
    struct ibv_send_wr *bad;
    int rc = ibv_post_send(s->ud, &wr, &bad);
    if (rc) {
        op->next = s->op_free;
        s->op_free = op;
        return rc == ENOMEM ? BMPI_TL_EAGAIN
                            : bmpi_err_set(MPI_ERR_OTHER,
                                           "verbs: sending a connection request to rank %d: %s",
                                           p->rank, strerror(rc));
    }
    s->ud_sq_free--;
    s->ops_busy++;
    p->cm_last_ns = verbs_now_ns();
    if (!p->cm_first_ns)
        p->cm_first_ns = p->cm_last_ns;
    return BMPI_OK;
}

/* ---- RC queue pairs -------------------------------------------------------- */

int verbs_post_rx(struct verbs_state *s, struct verbs_peer *p, int slot)
{
    struct ibv_sge sge = {.addr = (uintptr_t)(p->rx_mem + (size_t)slot * s->buf_size),
                          .length = (uint32_t)s->buf_size,
                          .lkey = p->rx_mr->lkey};
    struct ibv_recv_wr wr = {.wr_id = verbs_rx_wrid(VERBS_WR_RECV_RC, p->rank, slot),
                             .sg_list = &sge,
                             .num_sge = 1};
    struct ibv_recv_wr *bad;
    int rc = ibv_post_recv(p->qp, &wr, &bad);
    if (rc)
        return bmpi_err_set(MPI_ERR_OTHER, "verbs: ibv_post_recv for rank %d: %s", p->rank,
                            strerror(rc));
    return BMPI_OK;
}

/* Create the RC QP for p, bring it to INIT and post its receive ring. */
static int qp_create(struct verbs_state *s, struct verbs_peer *p)
{
    int nrx = s->cfg.rx_depth + VERBS_CTL_RSV;
    size_t bytes = (size_t)nrx * s->buf_size;
    if (posix_memalign((void **)&p->rx_mem, 4096, bytes))
        return bmpi_err_set(MPI_ERR_NO_MEM, "verbs: out of memory for a receive ring of %zu bytes",
                            bytes);
    p->rx_mr = ibv_reg_mr(s->pd, p->rx_mem, bytes, IBV_ACCESS_LOCAL_WRITE);
    if (!p->rx_mr)
        return bmpi_err_set(MPI_ERR_OTHER, "verbs: ibv_reg_mr of a receive ring (%zu bytes): %s",
                            bytes, strerror(errno));
    struct ibv_qp_init_attr ia = {
        .send_cq = s->scq,
        .recv_cq = s->rcq,
        .cap = {.max_send_wr = (uint32_t)s->cfg.sq_depth,
                .max_recv_wr = (uint32_t)nrx,
                .max_send_sge = 1,
                .max_recv_sge = 1,
                .max_inline_data = s->max_inline},
        .qp_type = IBV_QPT_RC,
        .sq_sig_all = 0,
    };
    p->qp = ibv_create_qp(s->pd, &ia);
    if (!p->qp && s->max_inline) {
        /* less inline data than the UD QP took: do without from now on */
        ia.cap.max_inline_data = 0;
        p->qp = ibv_create_qp(s->pd, &ia);
        if (p->qp)
            s->max_inline = 0;
    }
    if (!p->qp)
        return bmpi_err_set(MPI_ERR_OTHER, "verbs: ibv_create_qp(RC) for rank %d: %s", p->rank,
                            strerror(errno));
    if (ia.cap.max_inline_data < s->max_inline)
        s->max_inline = ia.cap.max_inline_data;
    p->psn = random_psn();
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT,
                            .pkey_index = 0,
                            .port_num = (uint8_t)s->port,
                            .qp_access_flags = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
                                               IBV_ACCESS_LOCAL_WRITE |
                                               (s->atomics ? IBV_ACCESS_REMOTE_ATOMIC : 0)};
    int rc = ibv_modify_qp(p->qp, &a,
                           IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
    if (rc)
        return bmpi_err_set(MPI_ERR_OTHER, "verbs: RC queue pair for rank %d to INIT: %s",
                            p->rank, strerror(rc));
    for (int i = 0; i < nrx; i++) {
        int err = verbs_post_rx(s, p, i);
        if (err)
            return err;
    }
    p->credits = s->cfg.rx_depth;
    p->ctl_credits = VERBS_CTL_RSV;
    p->to_return = p->ctl_to_return = 0;
    p->sq_free = s->cfg.sq_depth;
    p->state = VERBS_PEER_CONNECTING;
    s->connecting[s->nconnecting++] = p->rank;
    return BMPI_OK;
}

static int qp_rtr_rts(struct verbs_state *s, struct verbs_peer *p, uint32_t qpn, uint32_t psn)
{
    struct ibv_qp_attr a;
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = (enum ibv_mtu)(p->addr.mtu < (uint32_t)s->pattr.active_mtu ? p->addr.mtu
                                                                            : s->pattr.active_mtu);
    a.dest_qp_num = qpn;
    a.rq_psn = psn;
    a.max_dest_rd_atomic = (uint8_t)s->max_rd_atomic;
    a.min_rnr_timer = 12;
    fill_ah(s, &p->addr, &a.ah_attr);
    int rc = ibv_modify_qp(p->qp, &a,
                           IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                               IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
    if (rc)
        return bmpi_err_set(MPI_ERR_OTHER, "verbs: RC queue pair for rank %d to RTR: %s", p->rank,
                            strerror(rc));
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTS;
    a.timeout = 14;  /* 4.096 us * 2^14 = 67 ms per try */
    a.retry_cnt = 7;
    a.rnr_retry = 7; /* 7 = retry for ever on "receiver not ready" */
    a.sq_psn = p->psn;
    a.max_rd_atomic = (uint8_t)s->max_rd_atomic;
    rc = ibv_modify_qp(p->qp, &a,
                       IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                           IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
    if (rc)
        return bmpi_err_set(MPI_ERR_OTHER, "verbs: RC queue pair for rank %d to RTS: %s", p->rank,
                            strerror(rc));
    p->rtr = true;
    return BMPI_OK;
}

static void drop_connecting(struct verbs_state *s, int rank)
{
    for (int i = 0; i < s->nconnecting; i++)
        if (s->connecting[i] == rank) {
            s->connecting[i] = s->connecting[--s->nconnecting];
            return;
        }
}

int verbs_connect(struct verbs_state *s, struct verbs_peer *p)
{
    if (p->state != VERBS_PEER_NONE)
        return BMPI_OK;
    if (!p->known) {
        verbs_peer_broken(s, p, "rank %d published no usable verbs address", p->rank);
        return bmpi_err_set(MPI_ERR_OTHER, "verbs: %s", p->why);
    }
    int rc = qp_create(s, p);
    if (!rc) {
        rc = send_cm(s, p);
        if (rc == BMPI_TL_EAGAIN)
            rc = BMPI_OK; /* sent again from progress */
    }
    if (rc) {
        drop_connecting(s, p->rank);
        verbs_peer_broken(s, p, "%s", bmpi_err_reason());
    }
    return rc;
}

void verbs_cm_handle(struct verbs_state *s, const struct verbs_cm_msg *m)
{
    if (m->magic != VERBS_CM_MAGIC || m->src < 0 || m->src >= s->nranks)
        return;
    struct verbs_peer *p = &s->peers[m->src];
    if (p->state == VERBS_PEER_BROKEN || !p->known)
        return;
    int rc = BMPI_OK;
    if (p->state == VERBS_PEER_NONE)
        rc = qp_create(s, p);
    bool was_rtr = p->rtr;
    if (!rc && !p->rtr)
        rc = qp_rtr_rts(s, p, m->qpn, m->psn);
    if (rc) {
        drop_connecting(s, p->rank);
        verbs_peer_broken(s, p, "%s", bmpi_err_reason());
        return;
    }
    if (!(m->flags & VERBS_CM_READY)) {
        /* the peer waits for our QP number: answer (again, if it repeats) */
        if (send_cm(s, p) == BMPI_TL_EAGAIN)
            p->cm_last_ns = 0; /* from verbs_cm_retry */
        return;
    }
    if (p->state == VERBS_PEER_CONNECTING) {
        drop_connecting(s, p->rank);
        /* If we came up only now, the peer does not know that we take its
         * messages: HELLO tells it. */
        verbs_peer_ready(s, p, !was_rtr);
    }
}

int verbs_cm_retry(struct verbs_state *s)
{
    uint64_t now = verbs_now_ns();
    int n = 0;
    for (int i = 0; i < s->nconnecting; i++) {
        struct verbs_peer *p = &s->peers[s->connecting[i]];
        if (p->state != VERBS_PEER_CONNECTING || now - p->cm_last_ns < CM_RESEND_NS)
            continue;
        if (p->cm_first_ns && now - p->cm_first_ns > (uint64_t)(s->cfg.cm_timeout_s * 1e9)) {
            int r = p->rank;
            drop_connecting(s, r);
            verbs_peer_broken(s, p,
                              "rank %d did not answer the connection request within %.0f s "
                              "(BMPI_VERBS_CONNECT_TIMEOUT)",
                              r, s->cfg.cm_timeout_s);
            i--;
            n++;
            continue;
        }
        int rc = send_cm(s, p);
        if (rc && rc != BMPI_TL_EAGAIN) {
            drop_connecting(s, p->rank);
            verbs_peer_broken(s, p, "%s", bmpi_err_reason());
            i--;
        }
        n++;
    }
    return n;
}

void verbs_qp_destroy(struct verbs_state *s, struct verbs_peer *p)
{
    if (p->qp) {
        int rc = ibv_destroy_qp(p->qp);
        if (rc && bmpi_world.verbose)
            fprintf(stderr, "bmpi: rank %d: verbs: ibv_destroy_qp (rank %d): %s\n",
                    bmpi_world.rank, p->rank, strerror(rc));
    }
    p->qp = NULL;
    if (p->rx_mr)
        ibv_dereg_mr(p->rx_mr);
    p->rx_mr = NULL;
    free(p->rx_mem);
    p->rx_mem = NULL;
    if (p->ah)
        ibv_destroy_ah(p->ah);
    p->ah = NULL;
}
