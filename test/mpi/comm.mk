# test/mpi: communicators, groups, topologies, attributes, info and user
# error classes (issue 4); each runs through run-ranks at 1 2 3 4 8 ranks.

check_PROGRAMS += test/mpi/comm_split
test_mpi_comm_split_SOURCES = test/mpi/comm_split.c test/mpi/testutil.h
test_mpi_comm_split_LDADD = libbmpi.la
TESTS += test/mpi/comm_split.sh
EXTRA_DIST += test/mpi/comm_split.sh

check_PROGRAMS += test/mpi/comm_ctx
test_mpi_comm_ctx_SOURCES = test/mpi/comm_ctx.c test/mpi/testutil.h
test_mpi_comm_ctx_LDADD = libbmpi.la
TESTS += test/mpi/comm_ctx.sh
EXTRA_DIST += test/mpi/comm_ctx.sh

check_PROGRAMS += test/mpi/group_ops
test_mpi_group_ops_SOURCES = test/mpi/group_ops.c test/mpi/testutil.h
test_mpi_group_ops_LDADD = libbmpi.la
TESTS += test/mpi/group_ops.sh
EXTRA_DIST += test/mpi/group_ops.sh

check_PROGRAMS += test/mpi/topo
test_mpi_topo_SOURCES = test/mpi/topo.c test/mpi/testutil.h
test_mpi_topo_LDADD = libbmpi.la
TESTS += test/mpi/topo.sh
EXTRA_DIST += test/mpi/topo.sh

check_PROGRAMS += test/mpi/attr
test_mpi_attr_SOURCES = test/mpi/attr.c test/mpi/testutil.h
test_mpi_attr_LDADD = libbmpi.la
TESTS += test/mpi/attr.sh
EXTRA_DIST += test/mpi/attr.sh

check_PROGRAMS += test/mpi/info_err
test_mpi_info_err_SOURCES = test/mpi/info_err.c test/mpi/testutil.h
test_mpi_info_err_LDADD = libbmpi.la
TESTS += test/mpi/info_err.sh
EXTRA_DIST += test/mpi/info_err.sh

check_PROGRAMS += test/mpi/intercomm
test_mpi_intercomm_SOURCES = test/mpi/intercomm.c test/mpi/coll_util.h
test_mpi_intercomm_LDADD = libbmpi.la
TESTS += test/mpi/intercomm.sh
EXTRA_DIST += test/mpi/intercomm.sh
