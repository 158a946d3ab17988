/*
 * bmpi_info: what this build of bmpi has and what it finds on this
 * machine: the version, the PMIx library, each transport compiled in with
 * whether it can run here and, if not, why; what the network transports
 * found (RDMA devices and ports, libfabric providers) and the transport a
 * job would use for each kind of peer; which chapters of the MPI API have
 * stubs (functions that link but report MPI_ERR_UNSUPPORTED_OPERATION),
 * and with --missing every stub by name. First comes a one-screen
 * summary (alone with --summary): version, MPI level, languages,
 * transports built in, chapters complete or with stubs, and how many of
 * the functions mpi.h declares are implemented.
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <mpi.h>
#include <pmix.h>

#include "runtime/api_status.h"
#include "runtime/error.h"
#include "transport/transport.h"
#ifdef BMPI_HAVE_OFI
#include "transport/ofi/ofi.h"
#endif
#ifdef BMPI_HAVE_VERBS
#include "transport/verbs/verbs.h"
#endif

/* A transport's query() verdict. Outside a job, verbs and ofi answer for
 * a job spanning nodes (they decline only when every rank of a job is on
 * one node). */
struct verdict {
    const char *name;
    bool usable;
};

static void usage(FILE *out)
{
    fprintf(out, "usage: bmpi_info [--summary | --version | --missing | --help]\n"
                 "Prints a summary of this build of bmpi (version, MPI level, languages,\n"
                 "transports, chapters of the MPI API complete or with stubs, functions\n"
                 "implemented; --summary: only that), then its PMIx library and the\n"
                 "transports built in, each with whether it can run on this machine and,\n"
                 "if not, why, what the network transports found here, which transport\n"
                 "each peer would get, and the chapters of the MPI API that have stubs\n"
                 "(functions that link but report MPI_ERR_UNSUPPORTED_OPERATION).\n"
                 "--missing prints every stub, one a line.\n");
}

/* A comma-separated list after a label, wrapped under its first item so
 * that the summary stays on one screen. */
enum { LIST_WIDTH = 78, LIST_INDENT = 16 };

struct wrapped_list {
    int column;
    bool empty;
};

static void list_start(struct wrapped_list *l, const char *label)
{
    printf("  %-*s", LIST_INDENT - 2, label);
    l->column = LIST_INDENT;
    l->empty = true;
}

static void list_item(struct wrapped_list *l, const char *item)
{
    int len = (int)strlen(item);
    if (!l->empty && l->column + 2 + len > LIST_WIDTH) {
        printf(",\n%*s", LIST_INDENT, "");
        l->column = LIST_INDENT;
    } else if (!l->empty) {
        printf(", ");
        l->column += 2;
    }
    printf("%s", item);
    l->column += len;
    l->empty = false;
}

static void list_end(struct wrapped_list *l)
{
    printf("%s\n", l->empty ? "none" : "");
}

static void report_summary(void)
{
    struct wrapped_list l;
    printf("bmpi %s: MPI %d.%d, MPICH ABI handles\n", PACKAGE_VERSION, MPI_VERSION, MPI_SUBVERSION);
    list_start(&l, "languages:");
    list_item(&l, "C (mpi.h, bmpicc)");
    list_item(&l, "C++ (mpi.h, bmpicxx; no C++ binding library)");
#ifdef BMPI_HAVE_FORTRAN
    list_item(&l, "Fortran (mpif.h, use mpi, use mpi_f08; bmpifort)");
#else
    list_item(&l, "no Fortran (configure found no Fortran compiler)");
#endif
    list_end(&l);
    list_start(&l, "transports:");
    for (int i = 0; i < bmpi_tl_ncomponents; i++)
        list_item(&l, bmpi_tl_components[i].name);
    list_end(&l);

    int declared = 0, stubs = 0;
    list_start(&l, "complete:");
    for (const struct bmpi_api_chapter *ch = bmpi_api_chapters; ch->title; ch++) {
        declared += ch->declared;
        stubs += ch->nstubs;
        if (!ch->nstubs)
            list_item(&l, bmpi_api_chapter_name(ch));
    }
    list_end(&l);
    list_start(&l, "with stubs:");
    for (const struct bmpi_api_chapter *ch = bmpi_api_chapters; ch->title; ch++) {
        char item[128];
        if (!ch->nstubs)
            continue;
        snprintf(item, sizeof(item), "%s (%d of %d)", bmpi_api_chapter_name(ch), ch->nstubs, ch->declared);
        list_item(&l, item);
    }
    list_end(&l);
    printf("  %-*s%d of the %d in mpi.h implemented (%d stubs: --missing)\n", LIST_INDENT - 2, "functions:",
           declared - stubs, declared, stubs);
}

static void report_missing(void)
{
    printf("MPI functions not implemented (stubs: MPI_ERR_UNSUPPORTED_OPERATION;\n"
           "mpi.h: BMPI_HAVE_<chapter> 0; bmpi_info --missing names them):\n");
    int total = 0;
    for (const struct bmpi_api_chapter *ch = bmpi_api_chapters; ch->title; ch++) {
        if (ch->nstubs)
            printf("  %-48s %3d of %3d\n", bmpi_api_chapter_name(ch), ch->nstubs, ch->declared);
        total += ch->nstubs;
    }
    if (!total)
        printf("  none\n");
}

static void list_missing(void)
{
    for (const struct bmpi_api_chapter *ch = bmpi_api_chapters; ch->title; ch++)
        for (const char *const *f = ch->stubs; *f; f++)
            printf("%s\n", *f);
}

static const char *first_usable(const struct verdict *v, int n, const char *const *names)
{
    for (int i = 0; i < n; i++)
        for (const char *const *p = names; *p; p++)
            if (v[i].usable && strcmp(v[i].name, *p) == 0)
                return v[i].name;
    return NULL;
}

static void report_choice(const struct verdict *v, int n)
{
    static const char *const self[] = {"self", NULL};
    static const char *const local[] = {"shm", "verbs", "ofi", NULL};
    static const char *const remote[] = {"verbs", "ofi", NULL};
    const char *l = first_usable(v, n, local), *r = first_usable(v, n, remote);
    printf("would be chosen (BMPI_TRANSPORT=a,b restricts, BMPI_VERBOSE=1 prints each rank's choice):\n"
           "  oneself:                 %s\n"
           "  a peer on this node:     %s (same PMIx node id)\n"
           "  a peer on another node:  %s\n",
           first_usable(v, n, self) ? "self" : "none", l ? l : "none",
           r ? r : "none: no network transport is usable here (see above)");
    printf("  in a job whose ranks are all on one node, verbs and ofi stay closed unless\n"
           "  BMPI_TRANSPORT names them (or BMPI_OFI_PROVIDER is set): shm serves them.\n");
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--help") == 0) {
        usage(stdout);
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "--missing") == 0) {
        list_missing();
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "--summary") == 0) {
        report_summary();
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "--version") != 0) {
        fprintf(stderr, "bmpi_info: unknown argument '%s'\n", argv[1]);
        usage(stderr);
        return 2;
    }
    if (argc > 1) {
        printf("bmpi %s (MPI %d.%d API, MPICH ABI handles)\n", PACKAGE_VERSION, MPI_VERSION, MPI_SUBVERSION);
        printf("PMIx library: %s\n", PMIx_Get_version());
        return 0;
    }
    report_summary();
    printf("\nPMIx library: %s\n", PMIx_Get_version());
    /* what follows depends on the BMPI_* variables, as in a job */
    if (bmpi_env_check() != BMPI_OK) {
        fprintf(stderr, "bmpi_info: %s\n", bmpi_err_reason());
        return 1;
    }
    struct verdict v[16];
    int n = bmpi_tl_ncomponents < 16 ? bmpi_tl_ncomponents : 16;
    printf("transports built in (in order of preference):\n");
    for (int i = 0; i < n; i++) {
        char why[512] = "";
        v[i].name = bmpi_tl_components[i].name;
        v[i].usable = bmpi_tl_components[i].ops->query(why, sizeof(why)) == 0;
        printf("  %-6s %s%s%s\n", v[i].name, v[i].usable ? "usable" : "unusable", v[i].usable ? "" : ": ",
               v[i].usable ? "" : why);
    }
#ifdef BMPI_HAVE_VERBS
    bmpi_verbs_report(stdout);
#endif
#ifdef BMPI_HAVE_OFI
    bmpi_ofi_report(stdout);
#endif
    report_choice(v, n);
    report_missing();
    return 0;
}
