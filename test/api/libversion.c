/*
 * Prints MPI_Get_library_version's string (callable before MPI_Init) for
 * check-features.sh; fails if resultlen disagrees with the string or it
 * does not fit MPI_MAX_LIBRARY_VERSION_STRING.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = -1;
    memset(version, 'x', sizeof version);
    if (MPI_Get_library_version(version, &len) != MPI_SUCCESS) {
        fprintf(stderr, "FAIL: MPI_Get_library_version failed\n");
        return 1;
    }
    size_t n = strnlen(version, sizeof version);
    if (n == sizeof version || (size_t)len != n) {
        fprintf(stderr, "FAIL: resultlen %d, string of %zu bytes (limit %d with its NUL)\n", len,
                n, MPI_MAX_LIBRARY_VERSION_STRING);
        return 1;
    }
    printf("%s\n", version);
    return 0;
}
