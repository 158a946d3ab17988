# test/io: MPI-IO (issue 33, MPI 4.1 chapter 14). Each program runs through
# test/mpi/run-ranks at the rank counts its .sh names, on files in a fresh
# directory under $TMPDIR (tmpfs here) that the program removes; plain MPI
# only (over test/mpi/testutil.h and test/io/io_util.h), so that
# test/io/validate-with-mpich.sh builds the same sources against MPICH or
# Open MPI (see test/io/README).

check_PROGRAMS += test/io/io_coll
test_io_io_coll_SOURCES = test/io/io_coll.c test/io/io_util.h test/mpi/testutil.h
test_io_io_coll_LDADD = libbmpi.la
TESTS += test/io/io_coll.sh
EXTRA_DIST += test/io/io_coll.sh
