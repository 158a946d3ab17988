/*
 * ofi: what bmpi_info prints about libfabric on this machine — every
 * provider that offers an FI_EP_RDM endpoint, then bmpi's preference list
 * with each entry's verdict (the same test the transport applies when it
 * opens), and the provider a job spanning nodes would use.
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include "transport/ofi/ofi.h"

static bool same_provider(const struct fi_info *a, const struct fi_info *b)
{
    return strcmp(a->fabric_attr->prov_name, b->fabric_attr->prov_name) == 0;
}

/* Is j's provider, fabric and domain already in the list from first on?
 * (fi_getinfo answers once per capability set it offers.) */
static bool listed_before(const struct fi_info *first, const struct fi_info *j)
{
    for (const struct fi_info *k = first; k != j; k = k->next)
        if (same_provider(k, j) && strcmp(k->fabric_attr->name, j->fabric_attr->name) == 0 &&
            strcmp(k->domain_attr->name, j->domain_attr->name) == 0)
            return true;
    return false;
}

/* Every provider with an RDM endpoint, each name once with the fabrics
 * (networks) it offers, as fi_info -t FI_EP_RDM would list them. */
static void report_rdm_providers(FILE *out)
{
    struct fi_info *hints = fi_allocinfo();
    struct fi_info *all = NULL;
    if (!hints) {
        fprintf(out, "    (out of memory)\n");
        return;
    }
    hints->ep_attr->type = FI_EP_RDM;
    int rc = fi_getinfo(OFI_API_VERSION, NULL, NULL, 0, hints, &all);
    fi_freeinfo(hints);
    if (rc) {
        fprintf(out, "    none: fi_getinfo: %s\n", fi_strerror(-rc));
        return;
    }
    for (struct fi_info *i = all; i; i = i->next) {
        bool seen = false;
        for (struct fi_info *j = all; j != i && !seen; j = j->next)
            seen = same_provider(j, i);
        if (seen)
            continue;
        fprintf(out, "    %-14s", i->fabric_attr->prov_name);
        const char *sep = " fabrics:";
        for (struct fi_info *j = i; j; j = j->next) {
            if (!same_provider(j, i) || listed_before(i, j))
                continue;
            fprintf(out, "%s %s (%s)", sep, j->fabric_attr->name, j->domain_attr->name);
            sep = ",";
        }
        fputc('\n', out);
    }
    fi_freeinfo(all);
}

static void report_one(FILE *out, const char *name, const char *mark)
{
    char why[160];
    struct fi_info *info = ofi_try_provider(name, why, sizeof(why));
    if (!info) {
        fprintf(out, "    %-14s unusable: %s\n", name, why);
        return;
    }
    bool layered = strcmp(name, info->fabric_attr->prov_name) != 0; /* tcp -> tcp;ofi_rxm */
    fprintf(out, "    %-14s usable%s%s: fabric %s, domain %s, RMA %s, inject %zu B%s%s\n", name,
            layered ? " as " : "", layered ? info->fabric_attr->prov_name : "", info->fabric_attr->name,
            info->domain_attr->name, (info->caps & FI_RMA) ? "yes" : "no", info->tx_attr->inject_size,
            strcmp(info->fabric_attr->prov_name, "shm") == 0 ? ", this node only" : "", mark);
    fi_freeinfo(info);
}

void bmpi_ofi_report(FILE *out)
{
    uint32_t v = fi_version();
    if (!v) {
        fprintf(out, "ofi: libfabric could not be loaded (%s)\n", fi_strerror(FI_ENOSYS));
        return;
    }
    fprintf(out, "ofi: libfabric %u.%u; providers with FI_EP_RDM endpoints:\n", FI_MAJOR(v), FI_MINOR(v));
    report_rdm_providers(out);

    char why[512];
    struct fi_info *chosen = ofi_choose_provider(why, sizeof(why), false);
    const char *forced = bmpi_env_string("BMPI_OFI_PROVIDER");
    fprintf(out, "  bmpi's preference list (FI_EP_RDM, FI_MSG, send-after-send order; FI_RMA, FI_ATOMIC if "
                 "offered):\n");
    for (int i = 0; i < ofi_npreference; i++) {
        bool is_chosen = chosen && !forced &&
                         strcmp(chosen->fabric_attr->prov_name, ofi_preference[i]) == 0;
        report_one(out, ofi_preference[i], is_chosen ? "  <- chosen" : "");
    }
    if (forced && *forced)
        report_one(out, forced, chosen ? "  <- chosen (BMPI_OFI_PROVIDER)" : "  (BMPI_OFI_PROVIDER)");
    if (chosen)
        fprintf(out, "  provider for peers on other nodes: %s\n", chosen->fabric_attr->prov_name);
    else
        fprintf(out, "  no provider for peers on other nodes: %s\n", why);
    fi_freeinfo(chosen);
}
