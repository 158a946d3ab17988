# test/io: MPI-IO (issue 33, MPI 4.1 chapter 14). Each program runs through
# test/mpi/run-ranks at the rank counts its .sh names, on files in a fresh
# directory under $TMPDIR (tmpfs here) that the program removes; plain MPI
# only (over test/mpi/testutil.h and test/io/io_util.h), so that
# test/io/validate-with-mpich.sh builds the same sources against MPICH or
# Open MPI (see test/io/README).

# Independent access and the file object (test/io/README): io_views,
# io_file, io_atomic through run-ranks; io_nospace.sh (root: a full
# tmpfs) and io_killed.sh (a rank SIGKILLed mid-write) drive their
# programs themselves.
check_PROGRAMS += test/io/io_views test/io/io_file test/io/io_atomic test/io/io_nospace test/io/io_killed
test_io_io_views_SOURCES = test/io/io_views.c test/io/io_util.h test/mpi/testutil.h
test_io_io_views_LDADD = libbmpi.la
test_io_io_file_SOURCES = test/io/io_file.c test/io/io_util.h test/mpi/testutil.h
test_io_io_file_LDADD = libbmpi.la
test_io_io_atomic_SOURCES = test/io/io_atomic.c test/io/io_util.h test/mpi/testutil.h
test_io_io_atomic_LDADD = libbmpi.la
test_io_io_nospace_SOURCES = test/io/io_nospace.c test/io/io_util.h test/mpi/testutil.h
test_io_io_nospace_LDADD = libbmpi.la
test_io_io_killed_SOURCES = test/io/io_killed.c test/io/io_util.h test/mpi/testutil.h
test_io_io_killed_LDADD = libbmpi.la
IO_INDEPENDENT_TESTS = test/io/io_views.sh test/io/io_file.sh test/io/io_atomic.sh test/io/io_nospace.sh \
	test/io/io_killed.sh
TESTS += $(IO_INDEPENDENT_TESTS)
EXTRA_DIST += $(IO_INDEPENDENT_TESTS) test/io/validate-with-mpich.sh test/io/README

# Nonblocking independent access and data representations (nonblock.c,
# datarep.c): io_nonblock and io_datarep through run-ranks at 1 2 4 ranks.
check_PROGRAMS += test/io/io_nonblock test/io/io_datarep
test_io_io_nonblock_SOURCES = test/io/io_nonblock.c test/io/io_util.h test/mpi/testutil.h
test_io_io_nonblock_LDADD = libbmpi.la
test_io_io_datarep_SOURCES = test/io/io_datarep.c test/io/io_util.h test/mpi/testutil.h
test_io_io_datarep_LDADD = libbmpi.la
IO_NBDR_TESTS = test/io/io_nonblock.sh test/io/io_datarep.sh
TESTS += $(IO_NBDR_TESTS)
EXTRA_DIST += $(IO_NBDR_TESTS)

check_PROGRAMS += test/io/io_coll
test_io_io_coll_SOURCES = test/io/io_coll.c test/io/io_util.h test/mpi/testutil.h
test_io_io_coll_LDADD = libbmpi.la
TESTS += test/io/io_coll.sh
EXTRA_DIST += test/io/io_coll.sh

# The shared file pointer and the ordered forms (shared.c): io_shared
# through run-ranks at 1 2 3 4 8 ranks.
check_PROGRAMS += test/io/io_shared
test_io_io_shared_SOURCES = test/io/io_shared.c test/io/io_util.h test/mpi/testutil.h
test_io_io_shared_LDADD = libbmpi.la
TESTS += test/io/io_shared.sh
EXTRA_DIST += test/io/io_shared.sh

# io_netns.sh: the programs above across two simulated hosts (root only).
TESTS += test/io/io_netns.sh
EXTRA_DIST += test/io/io_netns.sh

# Parallel HDF5 (Debian's libhdf5-mpich-dev, built against MPICH) as a real
# client: hdf5.sh builds hdf5_chunked.c with h5pcc at test time and runs it
# under bmpirun through the MPICH ABI; skipped without h5pcc and h5dump.
TESTS += test/io/hdf5.sh
EXTRA_DIST += test/io/hdf5.sh test/io/hdf5_chunked.c test/io/mpich_client.sh test/io/mpich_client.h

# ADIOS 1 (Debian's libadios-mpich-dev, static, built against MPICH) the
# same way: adios.sh builds adios_rw.c with mpicc.mpich, runs its write
# methods MPI, MPI_AGGREGATE and POSIX and its BP reader under bmpirun and
# checks the files with bpls; skipped without them (libadios-bin).
TESTS += test/io/adios.sh
EXTRA_DIST += test/io/adios.sh test/io/adios_rw.c

# io_tmpfs.sh: the access programs with their files on a tmpfs.
TESTS += test/io/io_tmpfs.sh
EXTRA_DIST += test/io/io_tmpfs.sh
