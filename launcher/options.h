/* bmpirun's command line: mpirun spellings in, one validated struct out.
 * Nothing is started while options are parsed, so every error here leaves
 * no trace. */
#ifndef BMPI_LAUNCHER_OPTIONS_H
#define BMPI_LAUNCHER_OPTIONS_H

#include <stdbool.h>

#include "launcher/hosts.h"
#include "launcher/placement.h"

/* AUTO: bind to cores when the job has more ranks than bmpirun has CPUs
 * (spawn.c says why), otherwise not. */
enum bmpi_bind { BMPI_BIND_AUTO, BMPI_BIND_NONE, BMPI_BIND_CORE };

struct bmpi_options {
    int nprocs;
    bool nprocs_given; /* by -n/-np: a second one must agree */
    bool tag_output;
    bool tag_host;        /* --tag-output=host: the host with the rank */
    bool report_bindings; /* one line per rank: the CPUs it may run on */
    char *wdir;           /* --wdir, absolute, malloc'd; NULL: bmpirun's */
    double timeout; /* seconds; 0 = none */
    enum bmpi_bind bind;
    /* Where ranks go (docs/launcher.md "Hosts and placement"): the hosts
     * of -H/--hostfile or the Slurm allocation, -N and --map-by. */
    struct bmpi_hostlist hosts;
    bool from_slurm; /* the hosts are the Slurm allocation's */
    int npernode;    /* 0: not given */
    /* MPI_UNIVERSE_SIZE (PMIX_UNIV_SIZE): the slots of the host list or
     * Slurm allocation, at least nprocs; nprocs without a host list. */
    int universe_size;
    enum bmpi_map_by map_by;
    bool oversubscribe;
    struct bmpi_placement place; /* node i of it is hosts.hosts[i] */
    bool multi_host; /* some rank is placed on another host than this */
    int local_host;  /* multi_host: the host that is this machine, or -1 */
    char *launch_agent; /* --launch-agent, malloc'd; NULL: ssh (or srun) */
    int tree_fanout;
    bool no_mpich_abi; /* leave LD_LIBRARY_PATH alone (launcher/mpich_abi.h) */
    int nenv;
    char **env;     /* "VAR=value" from -x, malloc'd */
    char *program;  /* absolute or relative path after the PATH lookup, malloc'd */
    char **argv;    /* the program's argv, NULL-terminated (points into main's argv) */
};

/* Returned by bmpi_options_parse when the job should run; any other value
 * is the exit code bmpirun should end with (0 after --help/--version). */
#define BMPI_OPT_RUN (-1)

int bmpi_options_parse(struct bmpi_options *o, int argc, char **argv);
void bmpi_options_free(struct bmpi_options *o);
/* Does a host name (of -H, or PMIX_HOST of a spawn) name this host? */
bool bmpi_options_is_this_host(const char *name);

#endif
