/*
 * libibverbs-emu: a test-only emulation of the libibverbs calls that
 * transport/verbs uses, over shared memory and CMA, loaded with LD_PRELOAD
 * so that the real transport code runs unchanged on a machine without an
 * RDMA device. Never installed, never linked into libbmpi.
 *
 * One device, "emu0", one port, ACTIVE:
 *   BMPI_VERBS_EMU_LINK=ib (default): InfiniBand, LID = pid, GID[0] =
 *     fe80::<pid>;
 *   BMPI_VERBS_EMU_LINK=eth: RoCE, LID 0, GID[0] a RoCE v1 link-local entry,
 *     GID[1] a RoCE v2 entry ::ffff:127.<pid>; address handles need a GRH.
 *   BMPI_VERBS_EMU_DEVICES=0: no device at all; BMPI_VERBS_EMU_PORT=down:
 *     the port is DOWN; BMPI_VERBS_EMU_ODP=1: an extended context whose
 *     query_device_ex reports RC on-demand paging; BMPI_VERBS_EMU_UD_DROP=n:
 *     every n-th UD datagram a process sends is lost; BMPI_VERBS_EMU_LAZY=1:
 *     half of the posts leave their work for the next poll.
 *
 * Each process has one shared segment (a memfd, so there is no name to
 * leak; peers open it as /proc/<pid>/fd/<n>) holding its memory-region
 * table and, per queue pair, a ring of incoming messages. A SEND is copied
 * by the sender into the receiver's ring; the receiver moves it into a
 * posted receive (and makes the completion) when it polls a CQ; with no
 * receive posted it waits in the ring (RNR retried for ever). RDMA READ
 * and WRITE are process_vm_readv/writev against the target's registration,
 * checked in its table: a key that is not there, a range outside it or a
 * missing access right completes with IBV_WC_REM_ACCESS_ERR and moves both
 * queue pairs to the error state (their work requests flush).
 *
 * Atomics (IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_ATOMIC_CMP_AND_SWP, 8 bytes,
 * atomic_cap IBV_ATOMIC_HCA): the target's memory is private to it, so no
 * CPU atomic can reach it from here; instead every emulated atomic on a
 * process's memory holds that process's amo_lock (a process-shared, robust
 * mutex in its segment) around its read-modify-write by
 * process_vm_readv/writev. That makes them atomic with respect to each
 * other, from all processes, and not with respect to the target CPU's own
 * accesses: what IBV_ATOMIC_HCA promises. It needs no action of the
 * target, as on hardware. BMPI_VERBS_EMU_ATOMIC=none: the device has no
 * atomics; BMPI_VERBS_EMU_ATOMIC=racy: no lock, and a yield between the
 * read and the write, so that a test can show that it would notice.
 *
 * What a real HCA does that is modelled, because the transport must cope:
 * send-queue and receive-queue limits (ENOMEM), CQ overrun (abort), QP state
 * transitions with their required attributes (EINVAL), PSN agreement,
 * sending to a QP that is not in RTR (packets dropped: after the retry
 * budget, IBV_WC_RETRY_EXC_ERR), inline limits, local key checks
 * (IBV_WC_LOC_PROT_ERR), short receive buffers (IBV_WC_LOC_LEN_ERR), and
 * pinning: a registration whose memory is unmapped keeps the old pages (a
 * copy taken at munmap), so RDMA through a stale registration sees stale
 * bytes, as on hardware. ODP registrations follow the current mapping.
 * Not modelled: see docs/verbs.md.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <endian.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define EMU_MAGIC 0x756d65696d706265ull
#define EMU_MAX_MR 4096
#define EMU_MAX_QP 256
#define EMU_RING (1u << 20)
#define EMU_QPN_BASE 0x100
#define EMU_MAX_INLINE 256
#define EMU_MAX_SEND (EMU_RING / 4)
#define EMU_LINE 64
#define EMU_ALIGN(x) (((x) + EMU_LINE - 1) & ~(uint64_t)(EMU_LINE - 1))

/* ---- the shared segment ------------------------------------------------------ */

struct emu_mr_slot {
    uint32_t valid;
    uint32_t key;
    uint64_t addr, len;
    int32_t access;
    uint32_t stale;  /* unmapped while registered: the pinned pages are at shadow */
    uint64_t shadow;
};

struct emu_qp_slot {
    uint32_t state; /* enum ibv_qp_state + 1; 0 = free */
    uint32_t type;
    uint32_t error;  /* set by a peer: the responder side failed */
    uint32_t lock;   /* producers of a UD ring */
    uint32_t qkey;
    uint32_t rq_psn;
    int32_t peer_pid;
    uint32_t peer_qpn;
    uint64_t head; /* bytes produced */
    uint32_t access; /* qp_access_flags: what a requester may do here */
    uint8_t pad0[EMU_LINE - 44];
    uint64_t tail; /* bytes consumed */
    uint8_t pad1[EMU_LINE - 8];
};

struct emu_seg {
    uint64_t magic;
    int32_t pid;
    uint32_t pad;
    pthread_mutex_t amo_lock; /* held by every atomic on this process's memory */
    struct emu_mr_slot mr[EMU_MAX_MR];
    struct emu_qp_slot qp[EMU_MAX_QP];
};

#define EMU_RING_OFF (((sizeof(struct emu_seg)) + 4095) & ~(size_t)4095)
#define EMU_SEG_SIZE (EMU_RING_OFF + (size_t)EMU_MAX_QP * EMU_RING)

struct emu_ent {
    uint64_t flag; /* position + 1, stored last */
    uint32_t len;
    uint32_t type; /* 1 data, 2 wrap */
    uint32_t src_qpn;
    int32_t src_pid;
    uint32_t imm;
    uint32_t pad;
};

static uint8_t *ring_of(struct emu_seg *s, int idx)
{
    return (uint8_t *)s + EMU_RING_OFF + (size_t)idx * EMU_RING;
}

/* ---- process state ------------------------------------------------------------- */

static struct {
    pthread_mutex_t lock;
    struct emu_seg *me;
    int fd;
    int nmr;
    bool eth, odp, fork_init;
    uint8_t gen;
    struct emu_peer {
        int pid;
        struct emu_seg *seg;
    } peers[1024];
    int npeers;
    struct emu_qp *qps[EMU_MAX_QP];
} E = {.lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1};

static struct ibv_device emu_device;

/* The system call itself: no dlsym from inside munmap (the loader unmaps
 * with its lock held). */
static int real_munmap(void *addr, size_t len)
{
    return (int)syscall(SYS_munmap, addr, len);
}
static struct ibv_device *emu_list[2];

struct emu_ctx {
    struct verbs_context v; /* v.context is what callers see */
    int npd, ncq;
};

struct emu_pd {
    struct ibv_pd pd;
    int nres;
};

struct emu_mr {
    struct ibv_mr mr;
    int slot;
};

struct emu_cqe {
    struct ibv_wc wc;
    struct emu_qp *qp;
    bool send;
};

struct emu_cq {
    struct ibv_cq cq;
    int cap, n, head;
    struct emu_cqe *e;
    int nqp;
};

struct emu_ah {
    struct ibv_ah ah;
    int pid;
};

struct emu_swr {
    struct emu_swr *next;
    struct ibv_send_wr wr;
    struct ibv_sge sg[8];
    char *inl; /* inline data, copied at post */
    uint32_t inl_len;
    int pid; /* UD destination */
};

struct emu_qp {
    struct ibv_qp qp;
    int idx;
    struct emu_qp_slot *slot;
    struct emu_cq *scq, *rcq;
    struct emu_pd *pd;
    struct emu_swr *sq_head, *sq_tail;
    int sq_used, max_send, max_recv, max_sge;
    uint32_t max_inline;
    struct ibv_recv_wr *rq; /* ring of posted receives (sg copied) */
    struct ibv_sge *rq_sg;
    int rq_head, rq_n;
    int peer_pid;
    uint32_t dest_qpn, sq_psn;
    uint8_t timeout, retry_cnt;
    bool psn_ok;
    uint64_t blocked_since;
    bool flushed;
};

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "emu (pid %d): ", (int)getpid());
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int self_seg(void)
{
    if (E.me)
        return 0;
    char name[64];
    snprintf(name, sizeof(name), "bmpi.emu.%d", (int)getpid());
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    if (ftruncate(fd, (off_t)EMU_SEG_SIZE) != 0) {
        close(fd);
        return -1;
    }
    void *a = mmap(NULL, EMU_SEG_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (a == MAP_FAILED) {
        close(fd);
        return -1;
    }
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
    /* a process that dies holding it does not stop the others */
    pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
    int mrc = pthread_mutex_init(&((struct emu_seg *)a)->amo_lock, &ma);
    pthread_mutexattr_destroy(&ma);
    if (mrc) {
        real_munmap(a, EMU_SEG_SIZE);
        close(fd);
        return -1;
    }
    E.me = a;
    E.fd = fd;
    E.me->pid = (int32_t)getpid();
    __atomic_store_n(&E.me->magic, EMU_MAGIC, __ATOMIC_RELEASE);
    const char *l = getenv("BMPI_VERBS_EMU_LINK");
    E.eth = l && !strcmp(l, "eth");
    const char *o = getenv("BMPI_VERBS_EMU_ODP");
    E.odp = o && *o == '1';
    E.gen = (uint8_t)(getpid() * 7);
    return 0;
}

/* The segment of process pid, mapped on first use. */
static struct emu_seg *peer_seg(int pid)
{
    if (pid == (int)getpid())
        return E.me;
    for (int i = 0; i < E.npeers; i++)
        if (E.peers[i].pid == pid)
            return E.peers[i].seg;
    char dir[64], want[64], path[400], link[300];
    snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
    snprintf(want, sizeof(want), "/memfd:bmpi.emu.%d", pid);
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    struct emu_seg *seg = NULL;
    struct dirent *de;
    while (!seg && (de = readdir(d))) {
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        ssize_t n = readlink(path, link, sizeof(link) - 1);
        if (n <= 0)
            continue;
        link[n] = 0;
        if (strncmp(link, want, strlen(want)) != 0 || (link[strlen(want)] != ' ' && link[strlen(want)]))
            continue;
        int fd = open(path, O_RDWR);
        if (fd < 0)
            continue;
        void *a = mmap(NULL, EMU_SEG_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        if (a != MAP_FAILED)
            seg = a;
    }
    closedir(d);
    if (!seg || __atomic_load_n(&seg->magic, __ATOMIC_ACQUIRE) != EMU_MAGIC || seg->pid != pid)
        return NULL;
    if (E.npeers < (int)(sizeof(E.peers) / sizeof(E.peers[0])))
        E.peers[E.npeers++] = (struct emu_peer){pid, seg};
    return seg;
}

/* ---- device, context, port ------------------------------------------------------ */

/* Only bmpi sees the emulated device: libfabric's verbs provider and
 * librdmacm (loaded when ofi is opened) would drive it through rdma-core
 * internals the emulation does not have, so their calls go to the real
 * library (which finds no device here). */
static bool foreign_caller(void *ra)
{
    Dl_info di;
    if (!dladdr(ra, &di) || !di.dli_fname)
        return false;
    return strstr(di.dli_fname, "librdmacm") || strstr(di.dli_fname, "libfabric") ||
           strstr(di.dli_fname, "libucs") || strstr(di.dli_fname, "libuct");
}

#define EMU_LIST_MAGIC ((struct ibv_device *)(uintptr_t)0x656d756c697374ull)

struct ibv_device **ibv_get_device_list(int *num)
{
    if (foreign_caller(__builtin_return_address(0))) {
        struct ibv_device **(*real)(int *) =
            (struct ibv_device * *(*)(int *))dlsym(RTLD_NEXT, "ibv_get_device_list");
        if (real)
            return real(num);
        if (num)
            *num = 0;
        errno = ENOSYS;
        return NULL;
    }
    const char *n = getenv("BMPI_VERBS_EMU_DEVICES");
    bool none = n && *n == '0';
    emu_device.node_type = IBV_NODE_CA;
    emu_device.transport_type = IBV_TRANSPORT_IB;
    snprintf(emu_device.name, sizeof(emu_device.name), "emu0");
    snprintf(emu_device.dev_name, sizeof(emu_device.dev_name), "uverbs-emu0");
    struct ibv_device **l = calloc(3, sizeof(*l));
    if (!l)
        return NULL;
    l[0] = EMU_LIST_MAGIC; /* tells our lists from the real library's */
    if (!none)
        l[1] = &emu_device;
    if (num)
        *num = none ? 0 : 1;
    (void)emu_list;
    return l + 1;
}

void ibv_free_device_list(struct ibv_device **list)
{
    if (list && list[-1] == EMU_LIST_MAGIC) {
        free(list - 1);
        return;
    }
    void (*real)(struct ibv_device **) =
        (void (*)(struct ibv_device **))dlsym(RTLD_NEXT, "ibv_free_device_list");
    if (real)
        real(list);
}

const char *ibv_get_device_name(struct ibv_device *device) { return device->name; }

/* librdmacm (loaded by libfabric) asks for these of every listed device;
 * the real ones would read rdma-core's private device structure. */
__be64 ibv_get_device_guid(struct ibv_device *device)
{
    (void)device;
    return htobe64(0x0002c90300000000ull | (uint64_t)getpid());
}

int ibv_get_device_index(struct ibv_device *device)
{
    (void)device;
    return -1;
}

static int emu_poll_cq(struct ibv_cq *cq, int num, struct ibv_wc *wc);
static int emu_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
static int post_send_list(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
static int emu_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
static int emu_req_notify(struct ibv_cq *cq, int solicited) { (void)cq, (void)solicited; return 0; }
static int emu_query_port_ex(struct ibv_context *c, uint8_t port, struct ibv_port_attr *a, size_t len);
static int emu_query_device_ex(struct ibv_context *c, const struct ibv_query_device_ex_input *in,
                               struct ibv_device_attr_ex *attr, size_t len);

struct ibv_context *ibv_open_device(struct ibv_device *device)
{
    if (device != &emu_device) {
        errno = ENODEV;
        return NULL;
    }
    pthread_mutex_lock(&E.lock);
    int rc = self_seg();
    pthread_mutex_unlock(&E.lock);
    if (rc) {
        errno = ENOMEM;
        return NULL;
    }
    struct emu_ctx *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    struct ibv_context *ctx = &c->v.context;
    ctx->device = device;
    ctx->cmd_fd = -1;
    ctx->async_fd = -1;
    ctx->num_comp_vectors = 1;
    ctx->ops.poll_cq = emu_poll_cq;
    ctx->ops.post_send = emu_post_send;
    ctx->ops.post_recv = emu_post_recv;
    ctx->ops.req_notify_cq = emu_req_notify;
    pthread_mutex_init(&ctx->mutex, NULL);
    if (E.odp) {
        /* an extended context: the inline ibv_query_port and
         * ibv_query_device_ex go through these */
        c->v.sz = sizeof(struct verbs_context);
        c->v.query_port = emu_query_port_ex;
        c->v.query_device_ex = emu_query_device_ex;
        ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
    }
    return ctx;
}

int ibv_close_device(struct ibv_context *ctx)
{
    struct emu_ctx *c = (struct emu_ctx *)((char *)ctx - offsetof(struct emu_ctx, v.context));
    if (c->npd || c->ncq)
        fprintf(stderr, "emu (pid %d): ibv_close_device with %d PDs and %d CQs still open\n",
                (int)getpid(), c->npd, c->ncq);
    free(c);
    return 0;
}

static void fill_device_attr(struct ibv_device_attr *a)
{
    memset(a, 0, sizeof(*a));
    snprintf(a->fw_ver, sizeof(a->fw_ver), "emu-1.0");
    a->max_mr_size = 1ull << 40;
    a->page_size_cap = 4096;
    a->vendor_id = 0x02c9;
    a->max_qp = EMU_MAX_QP;
    a->max_qp_wr = 16384;
    a->max_sge = 8;
    a->max_cq = 1024;
    a->max_cqe = 4 * 1024 * 1024;
    a->max_mr = EMU_MAX_MR;
    a->max_pd = 64;
    a->max_qp_rd_atom = 16;
    a->max_qp_init_rd_atom = 16;
    const char *at = getenv("BMPI_VERBS_EMU_ATOMIC");
    a->atomic_cap = at && !strcmp(at, "none") ? IBV_ATOMIC_NONE : IBV_ATOMIC_HCA;
    a->phys_port_cnt = 1;
    a->max_pkeys = 1;
}

int ibv_query_device(struct ibv_context *ctx, struct ibv_device_attr *a)
{
    (void)ctx;
    fill_device_attr(a);
    return 0;
}

static int emu_query_device_ex(struct ibv_context *c, const struct ibv_query_device_ex_input *in,
                               struct ibv_device_attr_ex *attr, size_t len)
{
    (void)c, (void)in;
    memset(attr, 0, len);
    fill_device_attr(&attr->orig_attr);
    attr->odp_caps.general_caps = IBV_ODP_SUPPORT;
    attr->odp_caps.per_transport_caps.rc_odp_caps = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
                                                    IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
                                                    IBV_ODP_SUPPORT_ATOMIC;
    return 0;
}

static void fill_port(struct ibv_port_attr *a)
{
    memset(a, 0, sizeof(*a));
    const char *st = getenv("BMPI_VERBS_EMU_PORT");
    a->state = st && !strcmp(st, "down") ? IBV_PORT_DOWN : IBV_PORT_ACTIVE;
    a->phys_state = a->state == IBV_PORT_ACTIVE ? 5 : 3;
    a->max_mtu = IBV_MTU_4096;
    a->active_mtu = E.eth ? IBV_MTU_1024 : IBV_MTU_4096;
    a->gid_tbl_len = E.eth ? 2 : 1;
    a->max_msg_sz = 1u << 30;
    a->pkey_tbl_len = 1;
    a->lid = E.eth ? 0 : (uint16_t)getpid();
    a->sm_lid = E.eth ? 0 : 1;
    a->link_layer = E.eth ? IBV_LINK_LAYER_ETHERNET : IBV_LINK_LAYER_INFINIBAND;
    a->active_width = 2;
    a->active_speed = 32;
}

#undef ibv_query_port
int ibv_query_port(struct ibv_context *ctx, uint8_t port, struct _compat_ibv_port_attr *attr)
{
    (void)ctx;
    if (port != 1)
        return EINVAL;
    fill_port((struct ibv_port_attr *)attr);
    return 0;
}

static int emu_query_port_ex(struct ibv_context *c, uint8_t port, struct ibv_port_attr *a, size_t len)
{
    (void)c;
    if (port != 1 || len < sizeof(*a))
        return EINVAL;
    fill_port(a);
    return 0;
}

static int gid_of(int index, union ibv_gid *g, uint32_t *type)
{
    int pid = (int)getpid();
    memset(g, 0, sizeof(*g));
    if (index == 0) {
        g->raw[0] = 0xfe;
        g->raw[1] = 0x80;
        *type = E.eth ? IBV_GID_TYPE_ROCE_V1 : IBV_GID_TYPE_IB;
    } else if (index == 1 && E.eth) {
        g->raw[10] = 0xff;
        g->raw[11] = 0xff;
        *type = IBV_GID_TYPE_ROCE_V2;
    } else {
        return EINVAL;
    }
    g->raw[12] = (uint8_t)(pid >> 24);
    g->raw[13] = (uint8_t)(pid >> 16);
    g->raw[14] = (uint8_t)(pid >> 8);
    g->raw[15] = (uint8_t)pid;
    return 0;
}

int ibv_query_gid(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid)
{
    (void)ctx;
    uint32_t t;
    if (port != 1)
        return EINVAL;
    return gid_of(index, gid, &t) ? -1 : 0;
}

int _ibv_query_gid_ex(struct ibv_context *ctx, uint32_t port, uint32_t index,
                      struct ibv_gid_entry *entry, uint32_t flags, size_t size)
{
    (void)ctx, (void)flags;
    if (port != 1 || size < sizeof(*entry))
        return EINVAL;
    memset(entry, 0, sizeof(*entry));
    if (gid_of((int)index, &entry->gid, &entry->gid_type))
        return ENODATA;
    entry->gid_index = index;
    entry->port_num = port;
    return 0;
}

int ibv_fork_init(void)
{
    E.fork_init = true;
    return 0;
}

enum ibv_fork_status ibv_is_fork_initialized(void)
{
    return E.fork_init ? IBV_FORK_ENABLED : IBV_FORK_DISABLED;
}

/* ---- PD, MR -------------------------------------------------------------------- */

static struct emu_ctx *ectx(struct ibv_context *ctx)
{
    return (struct emu_ctx *)((char *)ctx - offsetof(struct emu_ctx, v.context));
}

struct ibv_pd *ibv_alloc_pd(struct ibv_context *ctx)
{
    struct emu_pd *p = calloc(1, sizeof(*p));
    if (!p) {
        errno = ENOMEM;
        return NULL;
    }
    p->pd.context = ctx;
    ectx(ctx)->npd++;
    return &p->pd;
}

int ibv_dealloc_pd(struct ibv_pd *pd)
{
    struct emu_pd *p = (struct emu_pd *)pd;
    if (p->nres) {
        fprintf(stderr, "emu (pid %d): ibv_dealloc_pd with %d resources (MRs, QPs, AHs) left\n",
                (int)getpid(), p->nres);
        return EBUSY;
    }
    ectx(pd->context)->npd--;
    free(p);
    return 0;
}

static struct ibv_mr *reg(struct ibv_pd *pd, void *addr, size_t len, unsigned access)
{
    if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
        !(access & IBV_ACCESS_LOCAL_WRITE)) {
        errno = EINVAL;
        return NULL;
    }
    if ((access & IBV_ACCESS_ON_DEMAND) && !E.odp) {
        errno = EOPNOTSUPP;
        return NULL;
    }
    /* unmapped memory cannot be pinned */
    long pg = 4096;
    uintptr_t a0 = (uintptr_t)addr & ~(uintptr_t)(pg - 1);
    if (len && madvise((void *)a0, (uintptr_t)addr + len - a0, MADV_NORMAL) != 0) {
        errno = EFAULT;
        return NULL;
    }
    struct emu_mr *m = calloc(1, sizeof(*m));
    if (!m) {
        errno = ENOMEM;
        return NULL;
    }
    pthread_mutex_lock(&E.lock);
    int slot = -1;
    for (int i = 1; i < EMU_MAX_MR; i++)
        if (!E.me->mr[i].valid) {
            slot = i;
            break;
        }
    if (slot < 0) {
        pthread_mutex_unlock(&E.lock);
        free(m);
        errno = ENOMEM;
        return NULL;
    }
    struct emu_mr_slot *s = &E.me->mr[slot];
    s->key = ((uint32_t)slot << 8) | (uint8_t)++E.gen;
    s->addr = (uintptr_t)addr;
    s->len = len;
    s->access = (int32_t)access;
    s->stale = 0;
    s->shadow = 0;
    __atomic_store_n(&s->valid, 1, __ATOMIC_RELEASE);
    E.nmr++;
    pthread_mutex_unlock(&E.lock);
    m->slot = slot;
    m->mr.context = pd->context;
    m->mr.pd = pd;
    m->mr.addr = addr;
    m->mr.length = len;
    m->mr.lkey = m->mr.rkey = s->key;
    ((struct emu_pd *)pd)->nres++;
    return &m->mr;
}

#undef ibv_reg_mr
struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
    return reg(pd, addr, length, (unsigned)access);
}

struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
                                unsigned int access)
{
    if (iova != (uintptr_t)addr) {
        errno = EOPNOTSUPP; /* the transport uses virtual addresses */
        return NULL;
    }
    return reg(pd, addr, length, access);
}

int ibv_dereg_mr(struct ibv_mr *mr)
{
    struct emu_mr *m = (struct emu_mr *)mr;
    pthread_mutex_lock(&E.lock);
    struct emu_mr_slot *s = &E.me->mr[m->slot];
    __atomic_store_n(&s->valid, 0, __ATOMIC_RELEASE);
    if (s->shadow) {
        real_munmap((void *)(uintptr_t)s->shadow, s->len);
        s->shadow = 0;
    }
    E.nmr--;
    pthread_mutex_unlock(&E.lock);
    ((struct emu_pd *)mr->pd)->nres--;
    free(m);
    return 0;
}

/* Pinning: the pages of a registration stay with it when the application
 * unmaps them; a new mapping at the same address gets other pages. */
int munmap(void *addr, size_t len)
{
    if (E.me && __atomic_load_n(&E.nmr, __ATOMIC_RELAXED) > 0) {
        pthread_mutex_lock(&E.lock);
        uintptr_t a = (uintptr_t)addr, b = a + len;
        for (int i = 1; i < EMU_MAX_MR; i++) {
            struct emu_mr_slot *s = &E.me->mr[i];
            if (!s->valid || s->stale || (s->access & IBV_ACCESS_ON_DEMAND) || !s->len)
                continue;
            if (s->addr >= b || s->addr + s->len <= a)
                continue;
            void *sh = mmap(NULL, s->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (sh == MAP_FAILED)
                continue;
            memcpy(sh, (void *)(uintptr_t)s->addr, s->len);
            s->shadow = (uintptr_t)sh;
            __atomic_store_n(&s->stale, 1, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&E.lock);
    }
    return real_munmap(addr, len);
}

/* Where the bytes of [addr, addr+len) behind key live in process seg->pid,
 * or 0 if the key does not cover them with access. */
static uint64_t mr_check(struct emu_seg *seg, uint32_t key, uint64_t addr, uint64_t len, int access)
{
    uint32_t slot = key >> 8;
    if (slot == 0 || slot >= EMU_MAX_MR)
        return 0;
    struct emu_mr_slot *s = &seg->mr[slot];
    if (!__atomic_load_n(&s->valid, __ATOMIC_ACQUIRE) || s->key != key)
        return 0;
    if (addr < s->addr || addr + len > s->addr + s->len || len > s->len)
        return 0;
    if ((s->access & access) != access)
        return 0;
    if (__atomic_load_n(&s->stale, __ATOMIC_ACQUIRE))
        return s->shadow + (addr - s->addr);
    return addr ? addr : 1; /* non-zero */
}

/* ---- CQ ------------------------------------------------------------------------------ */

struct ibv_cq *ibv_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
                             struct ibv_comp_channel *channel, int comp_vector)
{
    (void)channel, (void)comp_vector;
    if (cqe < 1 || cqe > 4 * 1024 * 1024) {
        errno = EINVAL;
        return NULL;
    }
    struct emu_cq *c = calloc(1, sizeof(*c));
    if (!c || !(c->e = calloc((size_t)cqe, sizeof(*c->e)))) {
        free(c);
        errno = ENOMEM;
        return NULL;
    }
    c->cap = cqe;
    c->cq.context = ctx;
    c->cq.cq_context = cq_context;
    c->cq.cqe = cqe;
    ectx(ctx)->ncq++;
    return &c->cq;
}

int ibv_destroy_cq(struct ibv_cq *cq)
{
    struct emu_cq *c = (struct emu_cq *)cq;
    if (c->nqp) {
        fprintf(stderr, "emu (pid %d): ibv_destroy_cq with %d QPs still using it\n", (int)getpid(),
                c->nqp);
        return EBUSY;
    }
    ectx(cq->context)->ncq--;
    free(c->e);
    free(c);
    return 0;
}

static void cq_push(struct emu_cq *c, struct emu_qp *qp, bool send, uint64_t wr_id,
                    enum ibv_wc_status st, enum ibv_wc_opcode op, uint32_t len)
{
    if (c->n == c->cap)
        die("CQ overrun (%d entries): the transport posted more work than its CQ holds", c->cap);
    struct emu_cqe *e = &c->e[(c->head + c->n++) % c->cap];
    memset(e, 0, sizeof(*e));
    e->wc.wr_id = wr_id;
    e->wc.status = st;
    e->wc.opcode = op;
    e->wc.byte_len = len;
    e->wc.qp_num = qp->qp.qp_num;
    e->wc.vendor_err = st == IBV_WC_SUCCESS ? 0 : 0x100 + st;
    e->qp = qp;
    e->send = send;
}

/* ---- QP ------------------------------------------------------------------------------ */

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *ia)
{
    if ((ia->qp_type != IBV_QPT_RC && ia->qp_type != IBV_QPT_UD) || !ia->send_cq || !ia->recv_cq ||
        ia->srq || ia->cap.max_send_wr > 16384 || ia->cap.max_recv_wr > 16384 ||
        ia->cap.max_send_sge > 8 || ia->cap.max_recv_sge > 8 ||
        ia->cap.max_inline_data > EMU_MAX_INLINE) {
        errno = EINVAL;
        return NULL;
    }
    int idx = -1;
    for (int i = 0; i < EMU_MAX_QP; i++)
        if (!E.qps[i] && !E.me->qp[i].state) {
            idx = i;
            break;
        }
    if (idx < 0) {
        errno = ENOMEM;
        return NULL;
    }
    struct emu_qp *q = calloc(1, sizeof(*q));
    int nr = (int)ia->cap.max_recv_wr + 1;
    if (!q || !(q->rq = calloc((size_t)nr, sizeof(*q->rq))) ||
        !(q->rq_sg = calloc((size_t)nr * 8, sizeof(*q->rq_sg)))) {
        if (q)
            free(q->rq);
        free(q);
        errno = ENOMEM;
        return NULL;
    }
    q->idx = idx;
    q->slot = &E.me->qp[idx];
    memset(q->slot, 0, sizeof(*q->slot));
    q->slot->type = ia->qp_type;
    __atomic_store_n(&q->slot->state, IBV_QPS_RESET + 1, __ATOMIC_RELEASE);
    q->scq = (struct emu_cq *)ia->send_cq;
    q->rcq = (struct emu_cq *)ia->recv_cq;
    q->scq->nqp++;
    q->rcq->nqp++;
    q->pd = (struct emu_pd *)pd;
    q->pd->nres++;
    q->max_send = (int)ia->cap.max_send_wr;
    q->max_recv = (int)ia->cap.max_recv_wr;
    q->max_sge = (int)ia->cap.max_send_sge;
    q->max_inline = ia->cap.max_inline_data;
    q->qp.context = pd->context;
    q->qp.qp_context = ia->qp_context;
    q->qp.pd = pd;
    q->qp.send_cq = ia->send_cq;
    q->qp.recv_cq = ia->recv_cq;
    q->qp.qp_num = EMU_QPN_BASE + (uint32_t)idx;
    q->qp.state = IBV_QPS_RESET;
    q->qp.qp_type = ia->qp_type;
    E.qps[idx] = q;
    return &q->qp;
}

static void set_state(struct emu_qp *q, enum ibv_qp_state st)
{
    q->qp.state = st;
    __atomic_store_n(&q->slot->state, (uint32_t)st + 1, __ATOMIC_RELEASE);
}

static int resolve_ah(const struct ibv_ah_attr *ah)
{
    if (E.eth) {
        if (!ah->is_global)
            return -1; /* RoCE needs a GRH */
        const uint8_t *r = ah->grh.dgid.raw;
        return (int)((uint32_t)r[12] << 24 | (uint32_t)r[13] << 16 | (uint32_t)r[14] << 8 | r[15]);
    }
    return ah->dlid;
}

int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
    struct emu_qp *q = (struct emu_qp *)qp;
    if (!(mask & IBV_QP_STATE))
        return EINVAL;
    enum ibv_qp_state cur = qp->state, to = a->qp_state;
    bool rc = qp->qp_type == IBV_QPT_RC;
    int need = 0;
    switch (to) {
    case IBV_QPS_RESET:
    case IBV_QPS_ERR:
        set_state(q, to);
        return 0;
    case IBV_QPS_INIT:
        if (cur != IBV_QPS_RESET && cur != IBV_QPS_INIT)
            return EINVAL;
        need = IBV_QP_PKEY_INDEX | IBV_QP_PORT | (rc ? IBV_QP_ACCESS_FLAGS : IBV_QP_QKEY);
        if ((mask & need) != need || a->port_num != 1)
            return EINVAL;
        if (!rc)
            q->slot->qkey = a->qkey;
        else
            q->slot->access = (uint32_t)a->qp_access_flags;
        break;
    case IBV_QPS_RTR:
        if (cur != IBV_QPS_INIT)
            return EINVAL;
        if (rc) {
            need = IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                   IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
            if ((mask & need) != need || a->path_mtu > (E.eth ? IBV_MTU_1024 : IBV_MTU_4096) ||
                a->path_mtu < IBV_MTU_256 || a->max_dest_rd_atomic > 16)
                return EINVAL;
            int pid = resolve_ah(&a->ah_attr);
            if (pid <= 0)
                return EINVAL;
            q->peer_pid = pid;
            q->dest_qpn = a->dest_qp_num;
            q->slot->peer_pid = pid;
            q->slot->peer_qpn = a->dest_qp_num;
            q->slot->rq_psn = a->rq_psn & 0xffffff;
        }
        break;
    case IBV_QPS_RTS:
        if (cur != IBV_QPS_RTR)
            return EINVAL;
        need = IBV_QP_SQ_PSN | (rc ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                         IBV_QP_MAX_QP_RD_ATOMIC
                                   : 0);
        if ((mask & need) != need || (rc && (a->retry_cnt > 7 || a->rnr_retry > 7 ||
                                             a->timeout > 31 || a->max_rd_atomic > 16)))
            return EINVAL;
        q->sq_psn = a->sq_psn & 0xffffff;
        q->timeout = a->timeout;
        q->retry_cnt = a->retry_cnt;
        break;
    default:
        return EINVAL;
    }
    set_state(q, to);
    return 0;
}

int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask, struct ibv_qp_init_attr *ia)
{
    (void)mask;
    struct emu_qp *q = (struct emu_qp *)qp;
    memset(a, 0, sizeof(*a));
    a->qp_state = qp->state;
    a->cap.max_send_wr = (uint32_t)q->max_send;
    a->cap.max_recv_wr = (uint32_t)q->max_recv;
    a->cap.max_inline_data = q->max_inline;
    if (ia) {
        memset(ia, 0, sizeof(*ia));
        ia->cap = a->cap;
        ia->qp_type = qp->qp_type;
    }
    return 0;
}

int ibv_destroy_qp(struct ibv_qp *qp)
{
    struct emu_qp *q = (struct emu_qp *)qp;
    struct emu_swr *w;
    while ((w = q->sq_head)) {
        q->sq_head = w->next;
        free(w->inl);
        free(w);
    }
    /* completions of this QP still queued in its CQs go with it */
    struct emu_cq *cqs[2] = {q->scq, q->rcq};
    for (int k = 0; k < 2; k++) {
        struct emu_cq *c = cqs[k];
        if (k == 1 && c == cqs[0])
            break;
        int n = 0;
        for (int i = 0; i < c->n; i++) {
            struct emu_cqe *e = &c->e[(c->head + i) % c->cap];
            if (e->qp != q)
                c->e[(c->head + n++) % c->cap] = *e;
        }
        c->n = n;
    }
    q->scq->nqp--;
    q->rcq->nqp--;
    q->pd->nres--;
    E.qps[q->idx] = NULL;
    __atomic_store_n(&q->slot->state, 0, __ATOMIC_RELEASE);
    free(q->rq);
    free(q->rq_sg);
    free(q);
    return 0;
}

struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
    int pid = resolve_ah(attr);
    if (pid <= 0 || attr->port_num != 1) {
        errno = EINVAL;
        return NULL;
    }
    struct emu_ah *a = calloc(1, sizeof(*a));
    if (!a) {
        errno = ENOMEM;
        return NULL;
    }
    a->ah.context = pd->context;
    a->ah.pd = pd;
    a->pid = pid;
    ((struct emu_pd *)pd)->nres++;
    return &a->ah;
}

int ibv_destroy_ah(struct ibv_ah *ah)
{
    ((struct emu_pd *)ah->pd)->nres--;
    free(ah);
    return 0;
}

/* ---- data path ------------------------------------------------------------------------ */

static int post_recv_one(struct emu_qp *q, const struct ibv_recv_wr *wr)
{
    if (q->rq_n >= q->max_recv)
        return ENOMEM;
    if (wr->num_sge > 8 || wr->num_sge < 0)
        return EINVAL;
    int at = (q->rq_head + q->rq_n) % (q->max_recv + 1);
    q->rq[at] = *wr;
    memcpy(&q->rq_sg[at * 8], wr->sg_list, (size_t)wr->num_sge * sizeof(struct ibv_sge));
    q->rq[at].sg_list = &q->rq_sg[at * 8];
    q->rq[at].next = NULL;
    q->rq_n++;
    return 0;
}

static int emu_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
    struct emu_qp *q = (struct emu_qp *)qp;
    if (qp->state == IBV_QPS_RESET) {
        *bad = wr;
        return EINVAL;
    }
    for (; wr; wr = wr->next) {
        int rc = post_recv_one(q, wr);
        if (rc) {
            *bad = wr;
            return rc;
        }
    }
    return 0;
}

static uint64_t sge_total(const struct ibv_sge *sg, int n)
{
    uint64_t t = 0;
    for (int i = 0; i < n; i++)
        t += sg[i].length;
    return t;
}

static void run_sq(struct emu_qp *q);

static bool is_atomic(enum ibv_wr_opcode op)
{
    return op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP;
}

/* Work requests run at once when they can: the "hardware" has no thread of
 * its own, and a process that posts its last message and goes into a PMIx
 * fence never polls again. What cannot run yet (peer not ready, ring full)
 * runs from the next poll of any CQ. */
static int emu_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    int rc = post_send_list(qp, wr, bad);
    /* BMPI_VERBS_EMU_LAZY=1: half of the time the work waits for the next
     * poll, so completions come late and out of step with the posts */
    static int lazy = -1;
    static unsigned seed;
    if (lazy < 0) {
        const char *l = getenv("BMPI_VERBS_EMU_LAZY");
        lazy = l && *l == '1';
        seed = (unsigned)getpid();
    }
    if (!lazy || rand_r(&seed) % 2)
        run_sq((struct emu_qp *)qp);
    return rc;
}

static int post_send_list(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    struct emu_qp *q = (struct emu_qp *)qp;
    for (; wr; wr = wr->next) {
        int rc = 0;
        if (qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_ERR)
            rc = EINVAL;
        else if (q->sq_used >= q->max_send)
            rc = ENOMEM;
        else if (wr->num_sge > q->max_sge || wr->num_sge < 0)
            rc = EINVAL;
        else if ((wr->send_flags & IBV_SEND_INLINE) &&
                 (sge_total(wr->sg_list, wr->num_sge) > q->max_inline || wr->opcode == IBV_WR_RDMA_READ))
            rc = EINVAL;
        else if (qp->qp_type == IBV_QPT_UD && wr->opcode != IBV_WR_SEND &&
                 wr->opcode != IBV_WR_SEND_WITH_IMM)
            rc = EINVAL;
        else if (wr->opcode != IBV_WR_SEND && wr->opcode != IBV_WR_RDMA_READ &&
                 wr->opcode != IBV_WR_RDMA_WRITE && wr->opcode != IBV_WR_SEND_WITH_IMM &&
                 !is_atomic(wr->opcode))
            rc = EINVAL;
        else if (is_atomic(wr->opcode) &&
                 ((wr->send_flags & IBV_SEND_INLINE) || wr->num_sge != 1 ||
                  wr->sg_list[0].length != sizeof(uint64_t)))
            rc = EINVAL; /* one 8-byte buffer for the old value */
        struct emu_swr *w = rc ? NULL : calloc(1, sizeof(*w));
        if (!rc && !w)
            rc = ENOMEM;
        if (rc) {
            *bad = wr;
            return rc;
        }
        w->wr = *wr;
        w->wr.next = NULL;
        memcpy(w->sg, wr->sg_list, (size_t)wr->num_sge * sizeof(struct ibv_sge));
        w->wr.sg_list = w->sg;
        if (wr->send_flags & IBV_SEND_INLINE) {
            uint32_t n = (uint32_t)sge_total(wr->sg_list, wr->num_sge);
            w->inl = malloc(n ? n : 1);
            if (!w->inl) {
                free(w);
                *bad = wr;
                return ENOMEM;
            }
            for (int i = 0, off = 0; i < wr->num_sge; off += (int)wr->sg_list[i].length, i++)
                memcpy(w->inl + off, (void *)(uintptr_t)wr->sg_list[i].addr, wr->sg_list[i].length);
            w->inl_len = n;
        }
        if (qp->qp_type == IBV_QPT_UD)
            w->pid = ((struct emu_ah *)wr->wr.ud.ah)->pid;
        if (q->sq_tail)
            q->sq_tail->next = w;
        else
            q->sq_head = w;
        q->sq_tail = w;
        q->sq_used++;
    }
    return 0;
}

/* Gather a send's bytes (checking local keys); false on a bad key. */
static bool gather(struct emu_swr *w, char *dst)
{
    if (w->inl) {
        memcpy(dst, w->inl, w->inl_len);
        return true;
    }
    size_t off = 0;
    for (int i = 0; i < w->wr.num_sge; i++) {
        const struct ibv_sge *s = &w->sg[i];
        uint64_t at = mr_check(E.me, s->lkey, s->addr, s->length, 0);
        if (!at)
            return false;
        memcpy(dst + off, (void *)(uintptr_t)at, s->length);
        off += s->length;
    }
    return true;
}

static void spin_lock(uint32_t *l)
{
    while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
        sched_yield();
}

static void spin_unlock(uint32_t *l) { __atomic_store_n(l, 0, __ATOMIC_RELEASE); }

/* Room for len bytes in a ring; NULL when full. Nothing is visible to
 * the consumer before ring_commit. */
struct ring_pos {
    uint64_t pos;     /* of the entry */
    uint64_t wrap_at; /* position of a wrap marker to write first, or ~0 */
};

static struct emu_ent *ring_reserve(struct emu_seg *seg, int idx, uint32_t len, struct ring_pos *rp)
{
    struct emu_qp_slot *s = &seg->qp[idx];
    uint8_t *ring = ring_of(seg, idx);
    uint64_t need = EMU_ALIGN(sizeof(struct emu_ent) + len);
    uint64_t pos = s->head;
    uint64_t off = pos & (EMU_RING - 1);
    uint64_t skip = off + need > EMU_RING ? EMU_RING - off : 0;
    uint64_t tail = __atomic_load_n(&s->tail, __ATOMIC_ACQUIRE);
    if (pos + skip + need - tail > EMU_RING)
        return NULL;
    rp->wrap_at = skip ? pos : ~0ull;
    rp->pos = pos + skip;
    return (struct emu_ent *)(ring + ((pos + skip) & (EMU_RING - 1)));
}

static void ring_commit(struct emu_seg *seg, int idx, struct emu_ent *e, const struct ring_pos *rp,
                        uint32_t len)
{
    if (rp->wrap_at != ~0ull) {
        struct emu_ent *w = (struct emu_ent *)(ring_of(seg, idx) + (rp->wrap_at & (EMU_RING - 1)));
        w->type = 2;
        __atomic_store_n(&w->flag, rp->wrap_at + 1, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&e->flag, rp->pos + 1, __ATOMIC_RELEASE);
    seg->qp[idx].head = rp->pos + EMU_ALIGN(sizeof(struct emu_ent) + len);
}

static void qp_error(struct emu_qp *q)
{
    set_state(q, IBV_QPS_ERR);
}

/* BMPI_VERBS_EMU_ATOMIC=racy */
static bool atomics_racy(void)
{
    static int racy = -1;
    if (racy < 0) {
        const char *a = getenv("BMPI_VERBS_EMU_ATOMIC");
        racy = a && !strcmp(a, "racy");
    }
    return racy;
}

static void amo_lock(struct emu_seg *seg)
{
    if (pthread_mutex_lock(&seg->amo_lock) == EOWNERDEAD)
        pthread_mutex_consistent(&seg->amo_lock); /* its holder died; the 8 bytes are whole */
}

/* The read-modify-write of an atomic on the 8 bytes at remote in process
 * pid, the old value to *old; false if the memory is not there. */
static bool amo_apply(struct emu_seg *seg, int pid, const struct ibv_send_wr *wr, uint64_t remote,
                      uint64_t *old)
{
    bool racy = atomics_racy();
    if (!racy)
        amo_lock(seg);
    struct iovec liov = {old, sizeof(*old)};
    struct iovec riov = {(void *)(uintptr_t)remote, sizeof(*old)};
    bool ok = process_vm_readv(pid, &liov, 1, &riov, 1, 0) == (ssize_t)sizeof(*old);
    uint64_t v = *old;
    bool write = ok;
    if (wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD)
        v += wr->wr.atomic.compare_add;
    else
        write = ok && v == wr->wr.atomic.compare_add;
    if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP)
        v = wr->wr.atomic.swap;
    if (racy)
        sched_yield(); /* let another requester read the same old value */
    liov.iov_base = &v;
    if (write)
        ok = process_vm_writev(pid, &liov, 1, &riov, 1, 0) == (ssize_t)sizeof(v);
    if (!racy)
        pthread_mutex_unlock(&seg->amo_lock);
    return ok;
}

/* The remote end of an RC QP; NULL if it is gone or not connected to us. */
static struct emu_qp_slot *rc_remote(struct emu_qp *q, struct emu_seg **seg_out)
{
    struct emu_seg *seg = peer_seg(q->peer_pid);
    if (!seg)
        return NULL;
    uint32_t idx = q->dest_qpn - EMU_QPN_BASE;
    if (idx >= EMU_MAX_QP)
        return NULL;
    *seg_out = seg;
    return &seg->qp[idx];
}

enum exec { EXEC_DONE, EXEC_BLOCKED };

/* Execute one send-queue work request; EXEC_BLOCKED leaves it queued. */
static enum exec exec_swr(struct emu_qp *q, struct emu_swr *w, enum ibv_wc_status *st, uint32_t *len)
{
    *st = IBV_WC_SUCCESS;
    *len = 0;
    if (q->qp.state == IBV_QPS_ERR) {
        *st = IBV_WC_WR_FLUSH_ERR;
        return EXEC_DONE;
    }
    uint64_t total = w->inl ? w->inl_len : sge_total(w->sg, w->wr.num_sge);
    if (q->qp.qp_type == IBV_QPT_UD) {
        struct emu_seg *seg = peer_seg(w->pid);
        uint32_t idx = w->wr.wr.ud.remote_qpn - EMU_QPN_BASE;
        *len = (uint32_t)total;
        if (!seg || idx >= EMU_MAX_QP || total > 4096)
            return EXEC_DONE; /* UD: lost, silently */
        static int ud_drop = -1;
        static unsigned ud_sent;
        if (ud_drop < 0) {
            const char *d = getenv("BMPI_VERBS_EMU_UD_DROP");
            ud_drop = d ? atoi(d) : 0;
        }
        if (ud_drop > 0 && ++ud_sent % (unsigned)ud_drop == 0)
            return EXEC_DONE; /* BMPI_VERBS_EMU_UD_DROP=n: every n-th datagram is lost */
        struct emu_qp_slot *rs = &seg->qp[idx];
        uint32_t rstate = __atomic_load_n(&rs->state, __ATOMIC_ACQUIRE);
        if (rstate < IBV_QPS_RTR + 1 || rstate == IBV_QPS_ERR + 1 || rs->type != IBV_QPT_UD ||
            rs->qkey != w->wr.wr.ud.remote_qkey)
            return EXEC_DONE;
        spin_lock(&rs->lock);
        struct ring_pos pos;
        struct emu_ent *e = ring_reserve(seg, (int)idx, (uint32_t)total, &pos);
        if (e) {
            e->len = (uint32_t)total;
            e->type = 1;
            e->src_qpn = q->qp.qp_num;
            e->src_pid = (int32_t)getpid();
            if (!gather(w, (char *)(e + 1))) {
                spin_unlock(&rs->lock);
                *st = IBV_WC_LOC_PROT_ERR;
                return EXEC_DONE;
            }
            ring_commit(seg, (int)idx, e, &pos, (uint32_t)total);
        }
        spin_unlock(&rs->lock);
        return EXEC_DONE; /* a full ring drops the datagram */
    }

    struct emu_seg *seg = NULL;
    struct emu_qp_slot *rs = rc_remote(q, &seg);
    uint32_t rstate = rs ? __atomic_load_n(&rs->state, __ATOMIC_ACQUIRE) : 0;
    bool connected = rs && rstate >= IBV_QPS_RTR + 1 && rstate != IBV_QPS_ERR + 1 &&
                     rs->peer_pid == (int32_t)getpid() && rs->peer_qpn == q->qp.qp_num;
    if (connected && !q->psn_ok) {
        if (rs->rq_psn != q->sq_psn) {
            fprintf(stderr, "emu (pid %d): QP %u: PSN %u does not match the responder's %u\n",
                    (int)getpid(), q->qp.qp_num, q->sq_psn, rs->rq_psn);
            *st = IBV_WC_RETRY_EXC_ERR;
            return EXEC_DONE;
        }
        q->psn_ok = true;
    }
    if (!connected) {
        /* packets dropped; the requester retries retry_cnt times, each after
         * the local ACK timeout */
        uint64_t now = now_ns();
        if (!q->blocked_since)
            q->blocked_since = now;
        uint64_t budget = (uint64_t)(4096.0 * (double)(1ull << q->timeout) * (q->retry_cnt + 1));
        if (now - q->blocked_since < budget)
            return EXEC_BLOCKED;
        q->blocked_since = 0;
        *st = IBV_WC_RETRY_EXC_ERR;
        return EXEC_DONE;
    }
    q->blocked_since = 0;
    if (rs->error) {
        *st = IBV_WC_RETRY_EXC_ERR;
        return EXEC_DONE;
    }
    uint32_t ridx = q->dest_qpn - EMU_QPN_BASE;
    switch (w->wr.opcode) {
    case IBV_WR_SEND:
    case IBV_WR_SEND_WITH_IMM: {
        if (total > EMU_MAX_SEND) {
            *st = IBV_WC_LOC_LEN_ERR;
            return EXEC_DONE;
        }
        struct ring_pos pos;
        struct emu_ent *e = ring_reserve(seg, (int)ridx, (uint32_t)total, &pos);
        if (!e)
            return EXEC_BLOCKED; /* the receiver is behind: wait (RNR, retried for ever) */
        e->len = (uint32_t)total;
        e->type = 1;
        e->src_qpn = q->qp.qp_num;
        e->src_pid = (int32_t)getpid();
        e->imm = w->wr.imm_data;
        if (!gather(w, (char *)(e + 1))) {
            *st = IBV_WC_LOC_PROT_ERR;
            return EXEC_DONE;
        }
        ring_commit(seg, (int)ridx, e, &pos, (uint32_t)total);
        *len = (uint32_t)total;
        return EXEC_DONE;
    }
    case IBV_WR_RDMA_READ:
    case IBV_WR_RDMA_WRITE: {
        bool rd = w->wr.opcode == IBV_WR_RDMA_READ;
        uint64_t remote = mr_check(seg, w->wr.wr.rdma.rkey, w->wr.wr.rdma.remote_addr, total,
                                   rd ? IBV_ACCESS_REMOTE_READ : IBV_ACCESS_REMOTE_WRITE);
        if (!remote && total) {
            *st = IBV_WC_REM_ACCESS_ERR;
            __atomic_store_n(&rs->error, 1, __ATOMIC_RELEASE); /* the responder fails too */
            return EXEC_DONE;
        }
        uint64_t roff = 0;
        for (int i = 0; i < w->wr.num_sge && total; i++) {
            const struct ibv_sge *s = &w->sg[i];
            uint64_t local = mr_check(E.me, s->lkey, s->addr, s->length,
                                      rd ? IBV_ACCESS_LOCAL_WRITE : 0);
            if (!local && !w->inl) {
                *st = IBV_WC_LOC_PROT_ERR;
                return EXEC_DONE;
            }
            void *lp = w->inl ? w->inl + roff : (void *)(uintptr_t)local;
            struct iovec liov = {lp, s->length};
            struct iovec riov = {(void *)(uintptr_t)(remote + roff), s->length};
            ssize_t n = rd ? process_vm_readv(q->peer_pid, &liov, 1, &riov, 1, 0)
                           : process_vm_writev(q->peer_pid, &liov, 1, &riov, 1, 0);
            if (n != (ssize_t)s->length) {
                *st = IBV_WC_REM_ACCESS_ERR;
                __atomic_store_n(&rs->error, 1, __ATOMIC_RELEASE);
                return EXEC_DONE;
            }
            roff += s->length;
        }
        *len = (uint32_t)total;
        return EXEC_DONE;
    }
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
    case IBV_WR_ATOMIC_CMP_AND_SWP: {
        uint64_t raddr = w->wr.wr.atomic.remote_addr;
        uint64_t remote = mr_check(seg, w->wr.wr.atomic.rkey, raddr, sizeof(uint64_t),
                                   IBV_ACCESS_REMOTE_ATOMIC);
        if (raddr % sizeof(uint64_t) || !(rs->access & IBV_ACCESS_REMOTE_ATOMIC)) {
            *st = IBV_WC_REM_INV_REQ_ERR; /* misaligned, or the QP takes no atomics */
            __atomic_store_n(&rs->error, 1, __ATOMIC_RELEASE);
            return EXEC_DONE;
        }
        uint64_t local = mr_check(E.me, w->sg[0].lkey, w->sg[0].addr, sizeof(uint64_t),
                                  IBV_ACCESS_LOCAL_WRITE);
        if (!local) {
            *st = IBV_WC_LOC_PROT_ERR;
            return EXEC_DONE;
        }
        uint64_t old;
        if (!remote || !amo_apply(seg, q->peer_pid, &w->wr, remote, &old)) {
            *st = IBV_WC_REM_ACCESS_ERR;
            __atomic_store_n(&rs->error, 1, __ATOMIC_RELEASE);
            return EXEC_DONE;
        }
        memcpy((void *)(uintptr_t)local, &old, sizeof(old));
        *len = sizeof(old);
        return EXEC_DONE;
    }
    default:
        *st = IBV_WC_LOC_QP_OP_ERR;
        return EXEC_DONE;
    }
}

static enum ibv_wc_opcode wc_op(enum ibv_wr_opcode op)
{
    switch (op) {
    case IBV_WR_RDMA_READ:
        return IBV_WC_RDMA_READ;
    case IBV_WR_RDMA_WRITE:
        return IBV_WC_RDMA_WRITE;
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
        return IBV_WC_FETCH_ADD;
    case IBV_WR_ATOMIC_CMP_AND_SWP:
        return IBV_WC_COMP_SWAP;
    default:
        return IBV_WC_SEND;
    }
}

static void run_sq(struct emu_qp *q)
{
    struct emu_swr *w;
    while ((w = q->sq_head)) {
        enum ibv_wc_status st;
        uint32_t len;
        if (exec_swr(q, w, &st, &len) == EXEC_BLOCKED)
            return;
        q->sq_head = w->next;
        if (!q->sq_head)
            q->sq_tail = NULL;
        if (st != IBV_WC_SUCCESS && q->qp.state != IBV_QPS_ERR)
            qp_error(q);
        if ((w->wr.send_flags & IBV_SEND_SIGNALED) || st != IBV_WC_SUCCESS)
            cq_push(q->scq, q, true, w->wr.wr_id, st, wc_op(w->wr.opcode), len);
        else
            q->sq_used--; /* an unsignaled request frees its slot at once here */
        free(w->inl);
        free(w);
    }
}

/* Move arrived messages into posted receives (at most budget of them). */
static void run_rq(struct emu_qp *q, int budget)
{
    if (q->qp.state == IBV_QPS_ERR) {
        while (q->rq_n) {
            struct ibv_recv_wr *r = &q->rq[q->rq_head];
            cq_push(q->rcq, q, false, r->wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0);
            q->rq_head = (q->rq_head + 1) % (q->max_recv + 1);
            q->rq_n--;
        }
        return;
    }
    if (q->qp.state < IBV_QPS_RTR)
        return;
    struct emu_qp_slot *s = q->slot;
    uint8_t *ring = ring_of(E.me, q->idx);
    bool ud = q->qp.qp_type == IBV_QPT_UD;
    while (q->rq_n && budget-- > 0) {
        uint64_t pos = s->tail;
        struct emu_ent *e = (struct emu_ent *)(ring + (pos & (EMU_RING - 1)));
        if (__atomic_load_n(&e->flag, __ATOMIC_ACQUIRE) != pos + 1)
            return;
        if (e->type == 2) {
            __atomic_store_n(&s->tail, (pos | (EMU_RING - 1)) + 1, __ATOMIC_RELEASE);
            continue;
        }
        struct ibv_recv_wr *r = &q->rq[q->rq_head];
        uint64_t room = sge_total(r->sg_list, r->num_sge);
        uint32_t hdr = ud ? 40 : 0;
        enum ibv_wc_status st = IBV_WC_SUCCESS;
        if (room < e->len + hdr) {
            st = IBV_WC_LOC_LEN_ERR;
        } else {
            const char *src = (const char *)(e + 1);
            uint64_t skip = hdr, copied = 0;
            for (int i = 0; i < r->num_sge && copied < e->len; i++) {
                const struct ibv_sge *g = &r->sg_list[i];
                uint64_t at = mr_check(E.me, g->lkey, g->addr, g->length, IBV_ACCESS_LOCAL_WRITE);
                if (!at) {
                    st = IBV_WC_LOC_PROT_ERR;
                    break;
                }
                char *dst = (char *)(uintptr_t)at;
                uint64_t gl = g->length;
                if (skip) {
                    uint64_t k = skip < gl ? skip : gl;
                    memset(dst, 0, k);
                    dst += k;
                    gl -= k;
                    skip -= k;
                }
                uint64_t n = e->len - copied < gl ? e->len - copied : gl;
                memcpy(dst, src + copied, n);
                copied += n;
            }
        }
        cq_push(q->rcq, q, false, r->wr_id, st, IBV_WC_RECV, e->len + hdr);
        struct emu_cqe *ce = &q->rcq->e[(q->rcq->head + q->rcq->n - 1) % q->rcq->cap];
        ce->wc.src_qp = e->src_qpn;
        ce->wc.slid = E.eth ? 0 : (uint16_t)e->src_pid;
        if (ud)
            ce->wc.wc_flags = IBV_WC_GRH;
        q->rq_head = (q->rq_head + 1) % (q->max_recv + 1);
        q->rq_n--;
        __atomic_store_n(&s->tail, pos + EMU_ALIGN(sizeof(struct emu_ent) + e->len), __ATOMIC_RELEASE);
        if (st != IBV_WC_SUCCESS) {
            qp_error(q);
            run_rq(q, 0);
            return;
        }
    }
}

/* Queue pairs are served from a random one on, a random number of
 * arrivals each: completions of different QPs interleave in the CQ as
 * they would on hardware (each QP's own stay in order). */
static void progress_all(void)
{
    static unsigned seed;
    if (!seed)
        seed = (unsigned)getpid() * 2654435761u;
    int start = (int)(rand_r(&seed) % EMU_MAX_QP);
    for (int k = 0; k < EMU_MAX_QP; k++) {
        struct emu_qp *q = E.qps[(start + k) % EMU_MAX_QP];
        if (!q)
            continue;
        if (q->slot->error && q->qp.state != IBV_QPS_ERR)
            qp_error(q); /* the responder side of a failed RDMA operation */
        if (q->sq_head)
            run_sq(q);
        run_rq(q, 1 + (int)(rand_r(&seed) % 8));
        if (q->qp.state == IBV_QPS_ERR && q->sq_head)
            run_sq(q);
    }
}

static int emu_poll_cq(struct ibv_cq *cq, int num, struct ibv_wc *wc)
{
    struct emu_cq *c = (struct emu_cq *)cq;
    progress_all();
    int n = 0;
    while (n < num && c->n) {
        struct emu_cqe *e = &c->e[c->head];
        wc[n++] = e->wc;
        if (e->send)
            e->qp->sq_used--;
        c->head = (c->head + 1) % c->cap;
        c->n--;
    }
    return n;
}
