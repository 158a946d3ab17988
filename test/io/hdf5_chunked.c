/*
 * Parallel HDF5 as a real client of MPI-IO (issue 33). Built by
 * test/io/hdf5.sh with h5pcc, i.e. against MPICH's mpi.h and Debian's
 * HDF5 built for MPICH, and run under bmpirun through bmpi's MPICH ABI
 * (docs/mpich-abi.md); not built by automake.
 *
 *   hdf5_chunked FILE
 *
 * Creates FILE through the MPI-IO driver (H5Pset_fapl_mpio on
 * MPI_COMM_WORLD) with two chunked 2D datasets of doubles whose chunks
 * straddle the ranks' blocks (the ranks form a 2D grid, MPI_Dims_create):
 * "collective", each rank's hyperslab written with H5FD_MPIO_COLLECTIVE
 * (and HDF5 must report collective I/O on every chunk), and "independent",
 * written with H5FD_MPIO_INDEPENDENT; an attribute "writers" holds the
 * number of ranks. Then reopens the file read-only and every rank reads
 * both datasets whole, collectively and independently, and checks every
 * value. The file's contents do not depend on the number of ranks, so
 * hdf5.sh checks them with h5dump against one formula:
 *   collective[i][j] = i * 1000 + j,  independent[i][j] = -(i * 1000 + j) - 0.5
 *
 * Prints "library: ..." (rank 0, MPI_Get_library_version) and
 * "ok: rank R of N" as the test/abi programs do.
 */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpich_client.h"

#define ROWS 60
#define COLS 45
#define CHUNK_ROWS 16
#define CHUNK_COLS 10

static int rank, nranks;

/* An HDF5 call that returns a negative herr_t on failure. */
#define H5CHK(call) CHECK((call) >= 0, "%s failed", #call)

/* An HDF5 call that returns an identifier, negative on failure. */
static hid_t checked_id(hid_t id, const char *call, int line)
{
    if (id < 0) {
        fprintf(stderr, "FAIL rank %d line %d: %s failed\n", rank, line, call);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return id;
}
#define H5ID(call) checked_id((call), #call, __LINE__)

/* This rank's block of the ROWS x COLS array. */
struct block {
    hsize_t start[2], count[2];
};

static double value(const char *dset, hsize_t i, hsize_t j)
{
    double v = (double)(i * 1000 + j);
    return strcmp(dset, "collective") == 0 ? v : -v - 0.5;
}

/* Splits n into d pieces, the first n % d one longer. */
static void split(hsize_t n, int d, int i, hsize_t *start, hsize_t *len)
{
    hsize_t base = n / (hsize_t)d, extra = n % (hsize_t)d, ii = (hsize_t)i;
    *len = base + (ii < extra);
    *start = ii * base + (ii < extra ? ii : extra);
}

static struct block my_block(void)
{
    struct block b;
    int dims[2] = {0, 0};
    MPI_Dims_create(nranks, 2, dims);
    split(ROWS, dims[0], rank / dims[1], &b.start[0], &b.count[0]);
    split(COLS, dims[1], rank % dims[1], &b.start[1], &b.count[1]);
    return b;
}

static hid_t mpio_fapl(void)
{
    hid_t fapl = H5ID(H5Pcreate(H5P_FILE_ACCESS));
    H5CHK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL));
    return fapl;
}

static hid_t transfer(H5FD_mpio_xfer_t mode)
{
    hid_t dxpl = H5ID(H5Pcreate(H5P_DATASET_XFER));
    H5CHK(H5Pset_dxpl_mpio(dxpl, mode));
    return dxpl;
}

/* Creates the chunked dataset and writes this rank's block in `mode`. */
static void write_dataset(hid_t file, const char *name, H5FD_mpio_xfer_t mode, const struct block *b)
{
    hsize_t dims[2] = {ROWS, COLS}, chunk[2] = {CHUNK_ROWS, CHUNK_COLS};
    hid_t space = H5ID(H5Screate_simple(2, dims, NULL));
    hid_t dcpl = H5ID(H5Pcreate(H5P_DATASET_CREATE));
    H5CHK(H5Pset_chunk(dcpl, 2, chunk));
    hid_t dset = H5ID(H5Dcreate2(file, name, H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));

    size_t n = (size_t)(b->count[0] * b->count[1]);
    double *buf = malloc((n ? n : 1) * sizeof(double));
    CHECK(buf != NULL, "out of memory");
    for (hsize_t i = 0; i < b->count[0]; i++)
        for (hsize_t j = 0; j < b->count[1]; j++)
            buf[i * b->count[1] + j] = value(name, b->start[0] + i, b->start[1] + j);
    hid_t mem = H5ID(H5Screate_simple(2, b->count, NULL));
    H5CHK(H5Sselect_hyperslab(space, H5S_SELECT_SET, b->start, NULL, b->count, NULL));
    hid_t dxpl = transfer(mode);
    H5CHK(H5Dwrite(dset, H5T_NATIVE_DOUBLE, mem, space, dxpl, buf));
    if (mode == H5FD_MPIO_COLLECTIVE) {
        /* Not a silent fallback to independent I/O: every chunk went
         * through collective MPI-IO (what HDF5 chooses here under MPICH). */
        H5D_mpio_actual_io_mode_t how;
        uint32_t local_cause = 0, global_cause = 0;
        H5CHK(H5Pget_mpio_actual_io_mode(dxpl, &how));
        H5CHK(H5Pget_mpio_no_collective_cause(dxpl, &local_cause, &global_cause));
        CHECK(how == H5D_MPIO_CHUNK_COLLECTIVE,
              "%s: HDF5's I/O mode was %d, not collective on every chunk (causes of no "
              "collective I/O: local 0x%x, global 0x%x)", name, (int)how,
              (unsigned)local_cause, (unsigned)global_cause);
    }
    H5CHK(H5Pclose(dxpl));
    H5CHK(H5Sclose(mem));
    H5CHK(H5Dclose(dset));
    H5CHK(H5Pclose(dcpl));
    H5CHK(H5Sclose(space));
    free(buf);
}

static void write_file(const char *path, const struct block *b)
{
    hid_t fapl = mpio_fapl();
    hid_t file = H5ID(H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    H5CHK(H5Pclose(fapl));
    write_dataset(file, "collective", H5FD_MPIO_COLLECTIVE, b);
    write_dataset(file, "independent", H5FD_MPIO_INDEPENDENT, b);

    hid_t scalar = H5ID(H5Screate(H5S_SCALAR));
    hid_t attr = H5ID(H5Acreate2(file, "writers", H5T_NATIVE_INT, scalar, H5P_DEFAULT, H5P_DEFAULT));
    H5CHK(H5Awrite(attr, H5T_NATIVE_INT, &nranks));
    H5CHK(H5Aclose(attr));
    H5CHK(H5Sclose(scalar));
    H5CHK(H5Fclose(file));
}

/* Every rank reads the whole dataset (the other ranks' blocks included). */
static void check_dataset(hid_t file, const char *name, H5FD_mpio_xfer_t mode)
{
    hid_t dset = H5ID(H5Dopen2(file, name, H5P_DEFAULT));
    hid_t dcpl = H5ID(H5Dget_create_plist(dset));
    CHECK(H5Pget_layout(dcpl) == H5D_CHUNKED, "%s is not chunked", name);
    H5CHK(H5Pclose(dcpl));

    double *buf = malloc(sizeof(double) * ROWS * COLS);
    CHECK(buf != NULL, "out of memory");
    for (size_t k = 0; k < ROWS * COLS; k++) buf[k] = 1e300;
    hid_t dxpl = transfer(mode);
    H5CHK(H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, dxpl, buf));
    for (hsize_t i = 0; i < ROWS; i++)
        for (hsize_t j = 0; j < COLS; j++)
            CHECK(buf[i * COLS + j] == value(name, i, j), "%s[%llu][%llu] read %g, expected %g",
                  name, (unsigned long long)i, (unsigned long long)j, buf[i * COLS + j],
                  value(name, i, j));
    H5CHK(H5Pclose(dxpl));
    H5CHK(H5Dclose(dset));
    free(buf);
}

static void check_file(const char *path)
{
    hid_t fapl = mpio_fapl();
    hid_t file = H5ID(H5Fopen(path, H5F_ACC_RDONLY, fapl));
    H5CHK(H5Pclose(fapl));
    check_dataset(file, "collective", H5FD_MPIO_COLLECTIVE);
    check_dataset(file, "independent", H5FD_MPIO_INDEPENDENT);
    check_dataset(file, "collective", H5FD_MPIO_INDEPENDENT);
    check_dataset(file, "independent", H5FD_MPIO_COLLECTIVE);

    int writers = -1;
    hid_t attr = H5ID(H5Aopen(file, "writers", H5P_DEFAULT));
    H5CHK(H5Aread(attr, H5T_NATIVE_INT, &writers));
    CHECK(writers == nranks, "attribute writers is %d, expected %d", writers, nranks);
    H5CHK(H5Aclose(attr));
    H5CHK(H5Fclose(file));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    CHECK(argc == 2, "usage: %s FILE", argv[0]);
    mc_print_library(rank);
    struct block b = my_block();
    write_file(argv[1], &b);
    check_file(argv[1]);
    printf("ok: rank %d of %d\n", rank, nranks);
    MPI_Finalize();
    return 0;
}
