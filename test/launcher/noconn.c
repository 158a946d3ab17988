/* An MPI job in which one rank does not connect to bmpirun in time, for
 * test/launcher/noconn.sh:
 *
 *   noconn skip VICTIM [MARKER]       the victim exits 0 without MPI_Init
 *   noconn late VICTIM SECONDS [...]  the victim sleeps before MPI_Init
 *   noconn latefin VICTIM SECONDS     ... before MPI_Finalize
 * VICTIM "all": every rank.
 * Every other rank calls MPI_Init, MPI_Barrier and MPI_Finalize. */
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    bool skip = strcmp(argv[1], "skip") == 0, late_fin = strcmp(argv[1], "latefin") == 0;
    if (argc < 3 || (!skip && argc < 4)) {
        fprintf(stderr, "usage: noconn skip VICTIM | late|latefin VICTIM SECONDS\n");
        return 2;
    }
    /* The world rank before MPI_Init, from the launcher's environment. */
    const char *env = getenv("PMIX_RANK");
    int me = env != NULL ? atoi(env) : -1;
    bool victim = me == atoi(argv[2]) || strcmp(argv[2], "all") == 0;
    if (victim && skip) {
        printf("rank %d leaves without MPI\n", me);
        return 0;
    }
    if (victim && !late_fin)
        sleep((unsigned)atoi(argv[3]));
    MPI_Init(&argc, &argv);
    MPI_Barrier(MPI_COMM_WORLD);
    if (victim && late_fin)
        sleep((unsigned)atoi(argv[3]));
    MPI_Finalize();
    return 0;
}
