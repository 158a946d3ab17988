/*
 * bmpi_info: what this build of bmpi has and what it finds on this
 * machine: the version, the PMIx library, and each transport compiled in
 * with whether it can run here and, if not, why.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <pmix.h>

#include "transport/transport.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: bmpi_info [--version | --help]\n"
                 "Prints bmpi's version, its PMIx library and the transports built in,\n"
                 "each with whether it can run on this machine and, if not, why.\n");
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--help") == 0) {
        usage(stdout);
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "--version") != 0) {
        fprintf(stderr, "bmpi_info: unknown argument '%s'\n", argv[1]);
        usage(stderr);
        return 2;
    }
    printf("bmpi %s (MPI 4.1 API, MPICH ABI handles)\n", PACKAGE_VERSION);
    printf("PMIx library: %s\n", PMIx_Get_version());
    if (argc > 1)
        return 0;
    printf("transports built in (in order of preference):\n");
    for (int i = 0; i < bmpi_tl_ncomponents; i++) {
        char why[256] = "";
        int rc = bmpi_tl_components[i].ops->query(why, sizeof(why));
        printf("  %-6s %s%s%s\n", bmpi_tl_components[i].name, rc == 0 ? "usable" : "unusable",
               rc == 0 ? "" : ": ", rc == 0 ? "" : why);
    }
    printf("selection per peer: self for oneself, shm on the same node (PMIx node id),\n"
           "then the network transports; BMPI_TRANSPORT=a,b restricts the choice and\n"
           "BMPI_VERBOSE=1 prints each rank's choice per peer.\n");
    return 0;
}
