# test/api: the public interface. check-api-status.sh: generated stubs up to
# date, every mpi.h function exported as weak MPI_X + PMPI_X. check-mpi-h.sh:
# mpi.h compiles in C99/C11/C++ and keeps MPICH's ABI values.
TESTS += test/api/check-api-status.sh test/api/check-mpi-h.sh
EXTRA_DIST += test/api/check-api-status.sh test/api/check-mpi-h.sh \
	tools/gen-api-status docs/api-status.md
include test/api/features.mk
