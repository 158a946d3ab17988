# test/mpi/coll_*: the collectives and reduction ops (issue 4). Each .sh
# runs its program at several rank counts once per algorithm, forcing it
# with the BMPI_COLL_* variables (docs/collectives.md).
check_PROGRAMS += test/mpi/coll_reduce test/mpi/coll_data test/mpi/coll_scan test/mpi/coll_ops \
	test/mpi/coll_storm test/mpi/coll_shm
test_mpi_coll_reduce_SOURCES = test/mpi/coll_reduce.c test/mpi/coll_util.h
test_mpi_coll_reduce_LDADD = libbmpi.la
test_mpi_coll_data_SOURCES = test/mpi/coll_data.c test/mpi/coll_util.h
test_mpi_coll_data_LDADD = libbmpi.la
test_mpi_coll_scan_SOURCES = test/mpi/coll_scan.c test/mpi/coll_util.h
test_mpi_coll_scan_LDADD = libbmpi.la
test_mpi_coll_ops_SOURCES = test/mpi/coll_ops.c test/mpi/coll_util.h
test_mpi_coll_ops_LDADD = libbmpi.la
test_mpi_coll_storm_SOURCES = test/mpi/coll_storm.c test/mpi/coll_util.h
test_mpi_coll_storm_LDADD = libbmpi.la
test_mpi_coll_shm_SOURCES = test/mpi/coll_shm.c test/mpi/coll_util.h
test_mpi_coll_shm_LDADD = libbmpi.la
TESTS += test/mpi/coll_reduce.sh test/mpi/coll_data.sh test/mpi/coll_scan.sh test/mpi/coll_ops.sh \
	test/mpi/coll_storm.sh test/mpi/coll_shm.sh
EXTRA_DIST += test/mpi/coll_reduce.sh test/mpi/coll_data.sh test/mpi/coll_scan.sh test/mpi/coll_ops.sh \
	test/mpi/coll_storm.sh test/mpi/coll_shm.sh
# A direct collective whose copy fails on one rank (coll_shm.sh preloads
# the fault into coll_shm_fault; the library is never installed).
check_PROGRAMS += test/mpi/coll_shm_fault
test_mpi_coll_shm_fault_LDADD = libbmpi.la
check_LTLIBRARIES += test/mpi/libcma-fault.la
test_mpi_libcma_fault_la_SOURCES = test/mpi/cma_fault.c
test_mpi_libcma_fault_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
check_PROGRAMS += test/mpi/coll_persist
test_mpi_coll_persist_SOURCES = test/mpi/coll_persist.c test/mpi/coll_util.h
test_mpi_coll_persist_LDADD = libbmpi.la
TESTS += test/mpi/coll_persist.sh
EXTRA_DIST += test/mpi/coll_persist.sh
