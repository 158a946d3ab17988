# test/mpi: argument checks and edge cases of point-to-point, requests,
# groups, topologies, datatypes and reductions (issue 29, p2pmisc), each
# through run-ranks.

check_PROGRAMS += test/mpi/p2p_nullreq
test_mpi_p2p_nullreq_SOURCES = test/mpi/p2p_nullreq.c test/mpi/testutil.h
test_mpi_p2p_nullreq_LDADD = libbmpi.la
TESTS += test/mpi/p2p_nullreq.sh
EXTRA_DIST += test/mpi/p2p_nullreq.sh

check_PROGRAMS += test/mpi/status_error
test_mpi_status_error_SOURCES = test/mpi/status_error.c test/mpi/testutil.h
test_mpi_status_error_LDADD = libbmpi.la
TESTS += test/mpi/status_error.sh
EXTRA_DIST += test/mpi/status_error.sh

check_PROGRAMS += test/mpi/req_garbage
test_mpi_req_garbage_SOURCES = test/mpi/req_garbage.c test/mpi/testutil.h
test_mpi_req_garbage_LDADD = libbmpi.la
TESTS += test/mpi/req_garbage.sh
EXTRA_DIST += test/mpi/req_garbage.sh

check_PROGRAMS += test/mpi/comm_null
test_mpi_comm_null_SOURCES = test/mpi/comm_null.c test/mpi/testutil.h
test_mpi_comm_null_LDADD = libbmpi.la
TESTS += test/mpi/comm_null.sh
EXTRA_DIST += test/mpi/comm_null.sh

check_PROGRAMS += test/mpi/reduce_char
test_mpi_reduce_char_SOURCES = test/mpi/reduce_char.c test/mpi/testutil.h
test_mpi_reduce_char_LDADD = libbmpi.la
TESTS += test/mpi/reduce_char.sh
EXTRA_DIST += test/mpi/reduce_char.sh

check_PROGRAMS += test/mpi/type_names
test_mpi_type_names_SOURCES = test/mpi/type_names.c test/mpi/testutil.h
test_mpi_type_names_LDADD = libbmpi.la
TESTS += test/mpi/type_names.sh
EXTRA_DIST += test/mpi/type_names.sh

check_PROGRAMS += test/mpi/dims_create
test_mpi_dims_create_SOURCES = test/mpi/dims_create.c test/mpi/testutil.h
test_mpi_dims_create_LDADD = libbmpi.la
TESTS += test/mpi/dims_create.sh
EXTRA_DIST += test/mpi/dims_create.sh

check_PROGRAMS += test/mpi/group_edge
test_mpi_group_edge_SOURCES = test/mpi/group_edge.c test/mpi/testutil.h
test_mpi_group_edge_LDADD = libbmpi.la
TESTS += test/mpi/group_edge.sh
EXTRA_DIST += test/mpi/group_edge.sh
