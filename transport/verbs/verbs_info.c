/*
 * verbs: what bmpi_info prints about RDMA devices on this machine — each
 * device and port with its state and link layer, or why there is none,
 * and the port a job spanning nodes would use.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>

#include <infiniband/verbs.h>

#include "transport/verbs/verbs.h"

static void report_ports(FILE *out, struct ibv_device *dev)
{
    const char *name = ibv_get_device_name(dev);
    struct ibv_context *ctx = ibv_open_device(dev);
    if (!ctx) {
        fprintf(out, "    %s: ibv_open_device: %m\n", name);
        return;
    }
    struct ibv_device_attr da;
    if (ibv_query_device(ctx, &da) != 0) {
        fprintf(out, "    %s: ibv_query_device: %m\n", name);
        ibv_close_device(ctx);
        return;
    }
    for (int p = 1; p <= da.phys_port_cnt; p++) {
        struct ibv_port_attr pa;
        if (ibv_query_port(ctx, (uint8_t)p, &pa) != 0) {
            fprintf(out, "    %s port %d: ibv_query_port: %m\n", name, p);
            continue;
        }
        fprintf(out, "    %s port %d: %s, %s, lid %u, active MTU %d\n", name, p, ibv_port_state_str(pa.state),
                verbs_link_name(pa.link_layer), pa.lid, 128 << pa.active_mtu);
    }
    ibv_close_device(ctx);
}

void bmpi_verbs_report(FILE *out)
{
    int ndev = 0;
    struct ibv_device **devs = ibv_get_device_list(&ndev);
    char why[512];
    if (!devs || ndev == 0) {
        verbs_no_device_why(devs, errno, why, sizeof(why));
        fprintf(out, "verbs: %s\n", why);
        if (devs)
            ibv_free_device_list(devs);
        return;
    }
    fprintf(out, "verbs: %d RDMA device%s:\n", ndev, ndev == 1 ? "" : "s");
    for (int d = 0; d < ndev; d++)
        report_ports(out, devs[d]);
    int port;
    struct ibv_port_attr pa;
    struct ibv_context *ctx = verbs_choose_port(devs, ndev, &port, &pa, why, sizeof(why));
    if (ctx) {
        fprintf(out, "  port for peers on other nodes: %s:%d (BMPI_VERBS_DEVICE=name:port chooses)\n",
                ibv_get_device_name(ctx->device), port);
        ibv_close_device(ctx);
    } else {
        fprintf(out, "  no port for peers on other nodes: %s\n", why);
    }
    ibv_free_device_list(devs);
}
