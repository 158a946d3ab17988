/*
 * ofi_floor: what a libfabric provider allows without any MPI on top — the
 * floor under bmpi's ofi transport. Two processes, one FI_EP_RDM endpoint
 * each, FI_MSG only, one completion queue polled with fi_cq_read (busy, as
 * an MPI rank waits):
 *
 *   latency   SIZE-byte pingpong (fi_inject when it fits, else fi_send),
 *             one-way = round trip / 2
 *   bandwidth windows of 64 (-W) fi_send of SIZE bytes into receives posted
 *             into one buffer (as bench/bw.c), a 1-byte ack per window
 *
 * Not an MPI program: built with `cc -O2 ofi_floor.c -lfabric` (bench/
 * net-compare does it). The server prints its endpoint name in hex to the
 * file given with -a; the client gets it with -c and sends its own name
 * in its first message.
 *
 *   ofi_floor -p PROVIDER [-b] [-m SIZE] [-W WINDOW] [-s SAMPLES] [-t MS] (-a FILE | -c HEXNAME)
 *
 * Output as bench/: `floor-lat SIZE BEST_US MEDIAN_US` or
 * `floor-bw SIZE BEST_MBps MEDIAN_MBps`, printed by the client.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#define WINDOW 64
#define NAME_MAX_BYTES 256

struct ep {
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_cq *cq;
    struct fid_av *av;
    struct fid_ep *ep;
    fi_addr_t peer;
    size_t inject;
};

static void die(const char *what, int rc)
{
    fprintf(stderr, "ofi_floor: %s: %s\n", what, fi_strerror(rc < 0 ? -rc : rc));
    exit(1);
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void open_ep(struct ep *e, const char *prov)
{
    struct fi_info *h = fi_allocinfo();
    h->caps = FI_MSG;
    h->mode = FI_CONTEXT | FI_CONTEXT2;
    h->ep_attr->type = FI_EP_RDM;
    h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | FI_MR_ALLOCATED;
    h->domain_attr->threading = FI_THREAD_DOMAIN;
    h->fabric_attr->prov_name = strdup(prov);
    int rc = fi_getinfo(FI_VERSION(1, 10), NULL, NULL, 0, h, &e->info);
    fi_freeinfo(h);
    if (rc)
        die(prov, rc);
    if (e->info->domain_attr->mr_mode & FI_MR_LOCAL) {
        fprintf(stderr, "ofi_floor: provider %s needs FI_MR_LOCAL, not handled here\n", prov);
        exit(1);
    }
    e->inject = e->info->tx_attr->inject_size;
    if ((rc = fi_fabric(e->info->fabric_attr, &e->fabric, NULL)))
        die("fi_fabric", rc);
    if ((rc = fi_domain(e->fabric, e->info, &e->domain, NULL)))
        die("fi_domain", rc);
    struct fi_cq_attr cq = {.format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_NONE, .size = 1024};
    if ((rc = fi_cq_open(e->domain, &cq, &e->cq, NULL)))
        die("fi_cq_open", rc);
    struct fi_av_attr av = {.type = FI_AV_TABLE, .count = 2};
    if ((rc = fi_av_open(e->domain, &av, &e->av, NULL)))
        die("fi_av_open", rc);
    if ((rc = fi_endpoint(e->domain, e->info, &e->ep, NULL)))
        die("fi_endpoint", rc);
    if ((rc = fi_ep_bind(e->ep, &e->av->fid, 0)) || (rc = fi_ep_bind(e->ep, &e->cq->fid, FI_TRANSMIT | FI_RECV)))
        die("fi_ep_bind", rc);
    if ((rc = fi_enable(e->ep)))
        die("fi_enable", rc);
}

/* Wait for n completions of any kind. */
static void wait_comp(struct ep *e, int n)
{
    struct fi_cq_entry c[16];
    while (n > 0) {
        ssize_t k = fi_cq_read(e->cq, c, n < 16 ? (size_t)n : 16);
        if (k > 0) {
            n -= (int)k;
        } else if (k == -FI_EAVAIL) {
            struct fi_cq_err_entry err = {0};
            fi_cq_readerr(e->cq, &err, 0);
            die("completion", err.err);
        } else if (k != -FI_EAGAIN) {
            die("fi_cq_read", (int)k);
        }
    }
}

static struct fi_context2 ctx[WINDOW + 2];

static void post_recv(struct ep *e, void *buf, size_t len, int i)
{
    ssize_t rc;
    while ((rc = fi_recv(e->ep, buf, len, NULL, FI_ADDR_UNSPEC, &ctx[i])) == -FI_EAGAIN)
        fi_cq_read(e->cq, NULL, 0);
    if (rc)
        die("fi_recv", (int)rc);
}

/* A send; completion counted by the caller unless injected. Returns the
 * completions to wait for (0 or 1). */
static int send_msg(struct ep *e, const void *buf, size_t len, int i)
{
    ssize_t rc;
    bool inject = len <= e->inject;
    for (;;) {
        rc = inject ? fi_inject(e->ep, buf, len, e->peer) : fi_send(e->ep, buf, len, NULL, e->peer, &ctx[i]);
        if (rc != -FI_EAGAIN)
            break;
        fi_cq_read(e->cq, NULL, 0);
    }
    if (rc)
        die(inject ? "fi_inject" : "fi_send", (int)rc);
    return inject ? 0 : 1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static size_t parse_size(const char *s)
{
    char *end;
    size_t x = strtoull(s, &end, 0);
    if (*end == 'k' || *end == 'K')
        x <<= 10;
    else if (*end == 'm' || *end == 'M')
        x <<= 20;
    return x;
}

int main(int argc, char **argv)
{
    const char *prov = "tcp", *addr_file = NULL, *peer_hex = NULL;
    size_t size = 8;
    int samples = 7, ms = 20, window = WINDOW, opt;
    bool bw = false;
    while ((opt = getopt(argc, argv, "p:bm:s:t:W:a:c:")) != -1) {
        switch (opt) {
        case 'p': prov = optarg; break;
        case 'b': bw = true; break;
        case 'm': size = parse_size(optarg); break;
        case 's': samples = atoi(optarg); break;
        case 'W': window = atoi(optarg); break;
        case 't': ms = atoi(optarg); break;
        case 'a': addr_file = optarg; break;
        case 'c': peer_hex = optarg; break;
        default:
            fprintf(stderr, "usage: ofi_floor -p PROV [-b] [-m SIZE] [-W N] [-s N] [-t MS] (-a FILE | -c HEXNAME)\n");
            return 2;
        }
    }
    if (!addr_file == !peer_hex || samples < 1 || samples > 1000 || size < 1 || window < 1 || window > WINDOW) {
        fprintf(stderr, "ofi_floor: give -a FILE (server) or -c HEXNAME (client)\n");
        return 2;
    }
    bool client = peer_hex != NULL;
    struct ep e = {0};
    open_ep(&e, prov);

    unsigned char name[NAME_MAX_BYTES];
    size_t namelen = sizeof(name);
    int rc = fi_getname(&e.ep->fid, name, &namelen);
    if (rc)
        die("fi_getname", rc);
    char *buf = aligned_alloc(4096, (size + 4095) & ~(size_t)4095);
    char *hello = calloc(1, NAME_MAX_BYTES + 8);
    if (!buf || !hello)
        die("out of memory", FI_ENOMEM);
    memset(buf, 'x', size);

    if (client) {
        unsigned char peer[NAME_MAX_BYTES];
        size_t n = strlen(peer_hex) / 2;
        for (size_t i = 0; i < n && i < sizeof(peer); i++)
            sscanf(peer_hex + 2 * i, "%2hhx", &peer[i]);
        if (fi_av_insert(e.av, peer, 1, &e.peer, 0, NULL) != 1)
            die("fi_av_insert", FI_EINVAL);
        memcpy(hello, &namelen, sizeof(namelen));
        memcpy(hello + 8, name, namelen);
        wait_comp(&e, send_msg(&e, hello, NAME_MAX_BYTES + 8, 0));
    } else {
        char tmp[4096];
        snprintf(tmp, sizeof(tmp), "%s.tmp", addr_file);
        FILE *f = fopen(tmp, "w");
        if (!f)
            die("cannot write the address file", FI_EIO);
        for (size_t i = 0; i < namelen; i++)
            fprintf(f, "%02x", name[i]);
        fclose(f);
        rename(tmp, addr_file); /* the client waits for the whole name */
        post_recv(&e, hello, NAME_MAX_BYTES + 8, 0);
        wait_comp(&e, 1);
        if (fi_av_insert(e.av, hello + 8, 1, &e.peer, 0, NULL) != 1)
            die("fi_av_insert", FI_EINVAL);
    }

    /* Iterations per sample from a calibration run, the same on both sides:
     * the client measures and sends the count. */
    char ack = 0;
    double *res = calloc((size_t)samples, sizeof(double));
    long iters = 1;
    for (int s = -1; s < samples; s++) {
        if (client) {
            /* tell the server how many iterations come */
            wait_comp(&e, send_msg(&e, &iters, sizeof(iters), 0));
        } else {
            post_recv(&e, &iters, sizeof(iters), 0);
            wait_comp(&e, 1);
        }
        double t0 = now_us();
        for (long i = 0; i < iters; i++) {
            if (bw) {
                if (client) {
                    int comps = 0;
                    for (int w = 0; w < window; w++)
                        comps += send_msg(&e, buf, size, w);
                    post_recv(&e, &ack, 1, window);
                    wait_comp(&e, comps + 1);
                } else {
                    for (int w = 0; w < window; w++)
                        post_recv(&e, buf, size, w);
                    wait_comp(&e, window);
                    wait_comp(&e, send_msg(&e, &ack, 1, window));
                }
            } else if (client) {
                post_recv(&e, buf, size, 0);
                wait_comp(&e, 1 + send_msg(&e, buf, size, 1));
            } else {
                /* The next receive is posted before the reply goes out, so
                 * that no message arrives unexpected (as in bmpi, whose
                 * receive buffers are always posted). */
                if (i == 0)
                    post_recv(&e, buf, size, 0);
                wait_comp(&e, 1);
                if (i + 1 < iters)
                    post_recv(&e, buf, size, 0);
                wait_comp(&e, send_msg(&e, buf, size, 1));
            }
        }
        double t = now_us() - t0;
        if (s < 0) { /* calibration: aim at ms per sample */
            iters = (long)(ms * 1000.0 / (t > 1 ? t : 1));
            if (iters < 1)
                iters = 1;
            continue;
        }
        res[s] = bw ? (double)size * window * (double)iters / t : t / (double)iters / 2;
    }
    if (client) {
        qsort(res, (size_t)samples, sizeof(double), cmp_double);
        if (bw)
            printf("floor-bw %zu %.1f %.1f\n", size, res[samples - 1], res[samples / 2]);
        else
            printf("floor-lat %zu %.3f %.3f\n", size, res[0], res[samples / 2]);
    }
    fi_close(&e.ep->fid);
    fi_close(&e.av->fid);
    fi_close(&e.cq->fid);
    fi_close(&e.domain->fid);
    fi_close(&e.fabric->fid);
    fi_freeinfo(e.info);
    free(res);
    free(buf);
    free(hello);
    return 0;
}
