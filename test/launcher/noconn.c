/* An MPI job in which one rank does not connect to bmpirun in time, for
 * test/launcher/noconn.sh:
 *
 *   noconn skip VICTIM [MARKER]       the victim exits 0 without MPI_Init
 *   noconn late VICTIM SECONDS [...]  the victim sleeps before MPI_Init
 * VICTIM "all": every rank.
 * Every other rank calls MPI_Init, MPI_Barrier and MPI_Finalize. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "late") == 0 && argc < 4)) {
        fprintf(stderr, "usage: noconn skip VICTIM | late VICTIM SECONDS\n");
        return 2;
    }
    /* The world rank before MPI_Init, from the launcher's environment. */
    const char *env = getenv("PMIX_RANK");
    int me = env != NULL ? atoi(env) : -1;
    if (me == atoi(argv[2]) || strcmp(argv[2], "all") == 0) {
        if (strcmp(argv[1], "skip") == 0) {
            printf("rank %d leaves without MPI\n", me);
            return 0;
        }
        sleep((unsigned)atoi(argv[3]));
    }
    MPI_Init(&argc, &argv);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
