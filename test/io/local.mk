# test/io: MPI-IO (issue 33, MPI 4.1 chapter 14). Each program runs through
# test/mpi/run-ranks at the rank counts its .sh names, on files in a fresh
# directory under $TMPDIR (tmpfs here) that the program removes; plain MPI
# only (over test/mpi/testutil.h and test/io/io_util.h), so that
# test/io/validate-with-mpich.sh builds the same sources against MPICH or
# Open MPI (see test/io/README).

# Parallel HDF5 (Debian's libhdf5-mpich-dev, built against MPICH) as a real
# client: hdf5.sh builds hdf5_chunked.c with h5pcc at test time and runs it
# under bmpirun through the MPICH ABI; skipped without h5pcc and h5dump.
TESTS += test/io/hdf5.sh
EXTRA_DIST += test/io/hdf5.sh test/io/hdf5_chunked.c
