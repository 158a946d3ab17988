/*
 * A message above 2 GiB: count 2100 of a 1 MiB contiguous type (2.05 GiB,
 * more bytes than an int holds) from rank 0 to rank 1, then back with the
 * receive posted late (unexpected). Checks content, MPI_Get_count in units
 * of the big type, MPI_Get_elements (MPI_UNDEFINED: too many bytes for an
 * int) and MPI_Get_elements_x (exact). Then MPI_Sendrecv_replace of the
 * same 2.05 GiB both ways (it needs a second copy: done only when the
 * machine has the memory, and not when run with BMPI_SHM_CMA=0).
 *
 * Only at 2 ranks (other sizes: a note, success). Needs ~2.1 GB per rank;
 * if malloc fails it says so and skips.
 */
#include "testutil.h"

#define MIB (1024 * 1024)
#define COUNT 2100

int main(int argc, char **argv)
{
    tu_init(&argc, &argv, "p2p_huge");
    if (tu_size != 2) {
        if (tu_rank == 0)
            printf("NOTE p2p_huge: runs at 2 ranks only, not %d\n", tu_size);
        tu_finish();
        return 0;
    }
    MPI_Datatype big;
    if (!TU_OPTIONAL(MPI_Type_contiguous(MIB, MPI_BYTE, &big), "MPI_Type_contiguous")) {
        tu_finish();
        return 0;
    }
    MPICHK(MPI_Type_commit(&big));
    const size_t bytes = (size_t)COUNT * MIB;
    unsigned char *buf = malloc(bytes);
    /* both ranks must agree to go on */
    long ok = tu_sum(buf != NULL);
    if (ok != 2) {
        if (tu_rank == 0)
            printf("NOTE p2p_huge: could not allocate %zu bytes on every rank; skipped\n", bytes);
        free(buf);
        MPICHK(MPI_Type_free(&big));
        tu_finish();
        return 0;
    }
    const int peer = 1 - tu_rank;
    for (int dir = 0; dir < 2; dir++) {
        int sender = dir == 0 ? 0 : 1;
        uint64_t seed = tu_seed(90, sender, 1 - sender, dir);
        if (tu_rank == sender) {
            tu_fill(buf, bytes, seed);
            if (dir == 1)
                tu_barrier(); /* the receiver posts only after this: unexpected */
            double t0 = MPI_Wtime();
            MPICHK(MPI_Send(buf, COUNT, big, peer, 5, MPI_COMM_WORLD));
            printf("p2p_huge: %zu bytes sent in %.2f s (%s)\n", bytes, MPI_Wtime() - t0,
                   dir ? "receive posted late" : "receive posted first");
        } else {
            memset(buf, 0, bytes);
            MPI_Status st;
            if (dir == 0) {
                MPI_Request r;
                MPICHK(MPI_Irecv(buf, COUNT, big, peer, 5, MPI_COMM_WORLD, &r));
                MPICHK(MPI_Wait(&r, &st));
            } else {
                tu_barrier();
                tu_sleep_ms(100);
                MPICHK(MPI_Recv(buf, COUNT, big, peer, 5, MPI_COMM_WORLD, &st));
            }
            CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == 5, "status (%d, %d)", st.MPI_SOURCE, st.MPI_TAG);
            int count = -1;
            if (tu_get_count(&st, big, &count))
                CHECK(count == COUNT, "MPI_Get_count in 1 MiB units: %d, expected %d", count, COUNT);
            int elems = 0;
            if (TU_OPTIONAL(MPI_Get_elements(&st, MPI_BYTE, &elems), "MPI_Get_elements"))
                CHECK(elems == MPI_UNDEFINED, "MPI_Get_elements in bytes of a %zu-byte message: %d, expected MPI_UNDEFINED",
                      bytes, elems);
            MPI_Count ex = 0;
            if (TU_OPTIONAL(MPI_Get_elements_x(&st, MPI_BYTE, &ex), "MPI_Get_elements_x"))
                CHECK(ex == (MPI_Count)bytes, "MPI_Get_elements_x: %lld, expected %zu", (long long)ex, bytes);
            long bad = tu_verify(buf, bytes, seed);
            CHECK(bad < 0, "message of %zu bytes: byte %ld differs", bytes, bad);
        }
        if (dir == 0)
            tu_barrier();
    }

    /* ---- Sendrecv_replace above 2 GiB: exchange the two ranks' data */
    long avail_kb = 0;
    FILE *mi = fopen("/proc/meminfo", "r");
    if (mi) {
        char line[256];
        while (fgets(line, sizeof line, mi))
            if (sscanf(line, "MemAvailable: %ld kB", &avail_kb) == 1)
                break;
        fclose(mi);
    }
    const char *cma = getenv("BMPI_SHM_CMA");
    long go = avail_kb > 12L * 1024 * 1024 && !(cma && strcmp(cma, "0") == 0);
    if (tu_sum(go) == 2) {
        tu_fill(buf, bytes, tu_seed(91, tu_rank, peer, 0));
        MPI_Status st;
        double t0 = MPI_Wtime();
        MPICHK(MPI_Sendrecv_replace(buf, COUNT, big, peer, 6, peer, 6, MPI_COMM_WORLD, &st));
        if (tu_rank == 0)
            printf("p2p_huge: Sendrecv_replace of %zu bytes in %.2f s\n", bytes, MPI_Wtime() - t0);
        int count = -1;
        if (tu_get_count(&st, big, &count))
            CHECK(count == COUNT, "Sendrecv_replace: MPI_Get_count %d, expected %d", count, COUNT);
        long bad = tu_verify(buf, bytes, tu_seed(91, peer, tu_rank, 0));
        CHECK(bad < 0, "Sendrecv_replace of %zu bytes: byte %ld differs", bytes, bad);
    } else if (tu_rank == 0) {
        printf("NOTE p2p_huge: Sendrecv_replace above 2 GiB skipped (memory or BMPI_SHM_CMA=0)\n");
    }
    free(buf);
    MPICHK(MPI_Type_free(&big));
    tu_finish();
    return 0;
}
