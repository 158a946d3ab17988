# test/mpi/shm_squat: another user's files under the job's old /dev/shm
# names do not touch the job (docs/shm.md, "Names nobody else can take").
check_PROGRAMS += test/mpi/shm_squat
test_mpi_shm_squat_SOURCES = test/mpi/shm_squat.c test/mpi/testutil.h
test_mpi_shm_squat_LDADD = libbmpi.la
TESTS += test/mpi/shm_squat.sh
EXTRA_DIST += test/mpi/shm_squat.sh
# test/mpi/env_strict.sh: bad BMPI_* values fail MPI_Init with a message
# naming them; good spellings run (docs/environment.md).
TESTS += test/mpi/env_strict.sh
EXTRA_DIST += test/mpi/env_strict.sh
