/* What the head tells each daemon on its launch agent's stdin, before any
 * TCP connection: the job's secret (never on a command line, which other
 * users can read), the head's addresses, the nodes and ranks, the program
 * and its environment. Text, one "key value" a line, values
 * percent-encoded; the same text for every daemon (srun hands one stdin to
 * all), which finds its node by --node or by Slurm's node name. Later
 * lines ("parent VERTEX ADDR:PORT") tell daemons deeper in the tree where
 * their parent listens. Both sides of the format live here. */
#ifndef BMPI_LAUNCHER_BOOTSTRAP_H
#define BMPI_LAUNCHER_BOOTSTRAP_H

#include <stddef.h>
#include <stdint.h>

#include "launcher/tree.h"

struct bmpi_job;

#define BMPI_BOOTSTRAP_MAGIC "bmpi-daemon-bootstrap 1"

/* The whole text for job (malloc'd, *len bytes). */
char *bmpi_bootstrap_text(const struct bmpi_job *job, const uint8_t secret[BMPI_TREE_SECRET_LEN],
                          const char *head_addrs, size_t *len);
/* "parent VERTEX ADDR:PORT\n" */
int bmpi_bootstrap_parent_line(char *buf, size_t len, int vertex, const char *addr);

/* A reader of fd's lines, for the daemon: bootstrap first, parent lines
 * later (with poll in between). */
struct bmpi_linebuf {
    int fd;
    char *buf;
    size_t len, cap;
    int eof;
};
/* The next whole line (malloc'd, no newline), NULL when none is buffered;
 * bmpi_linebuf_fill reads what is there (blocking if block), 0 at EOF. */
char *bmpi_linebuf_next(struct bmpi_linebuf *lb);
int bmpi_linebuf_fill(struct bmpi_linebuf *lb);

/* Fill the daemon's job (options, nodes, nspace) from the bootstrap text,
 * read up to its "end" line. node: from --node, or -1 to find it by
 * SLURMD_NODENAME. why is set on failure. */
struct bmpi_boot_info {
    uint8_t secret[BMPI_TREE_SECRET_LEN];
    char *head_addrs;
    int fanout;
    int nvertices;
};
int bmpi_bootstrap_read(struct bmpi_linebuf *lb, struct bmpi_job *job, int node, struct bmpi_boot_info *info,
                        char *why, size_t why_len);

#endif
