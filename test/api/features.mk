# test/api/check-features.sh: mpi.h's feature macros, MPI_Get_library_version
# and bmpi_info tell the same stubs as tools/gen-api-status.
check_PROGRAMS += test/api/libversion
test_api_libversion_LDADD = libbmpi.la
TESTS += test/api/check-features.sh
EXTRA_DIST += test/api/check-features.sh
