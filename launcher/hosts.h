/* Host lists as mpirun and Hydra spell them, and Slurm's allocation.
 * Pure parsing: nothing is resolved or contacted here. A list is owned by
 * its caller; the first error is kept in it as one line naming where it
 * was found (flag or file and line) and the bad text. */
#ifndef BMPI_LAUNCHER_HOSTS_H
#define BMPI_LAUNCHER_HOSTS_H

#include <stdbool.h>

struct bmpi_host {
    char *name;    /* as written (Slurm: expanded, zero padding kept) */
    int slots;     /* ranks it takes without oversubscribing */
    int max_slots; /* hard limit even with --oversubscribe; 0 = none */
};

struct bmpi_hostlist {
    int n;
    struct bmpi_host *hosts; /* in order of first mention; repeats add slots */
    char error[512];         /* the first error, one line without newline */
};

/* -H/--host "h1:2,h2" (a name without ":N" is one slot); flag names the
 * option in errors. Returns 0, or -1 with l->error set. */
int bmpi_hostlist_add_list(struct bmpi_hostlist *l, const char *flag, const char *list);
/* One line of a hostfile, either dialect: "host [slots=N] [max_slots=M]"
 * (Open MPI) or "host[:N]" (MPICH); '#' starts a comment, blank lines are
 * skipped. where names the file in errors, lineno its line. */
int bmpi_hostlist_add_line(struct bmpi_hostlist *l, const char *where, int lineno, const char *line);
/* A whole hostfile. */
int bmpi_hostlist_read_file(struct bmpi_hostlist *l, const char *path);
/* SLURM_JOB_NODELIST ("node[01-04,07],gpu[1-2]") with SLURM_TASKS_PER_NODE
 * ("2(x3),1") as the slots; tasks may be NULL (one slot a node). */
int bmpi_hostlist_add_slurm(struct bmpi_hostlist *l, const char *nodelist, const char *tasks);
int bmpi_hostlist_total_slots(const struct bmpi_hostlist *l);
void bmpi_hostlist_free(struct bmpi_hostlist *l);

#endif
