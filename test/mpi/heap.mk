# The shared heap (transport/shm/heap.c) as the program's malloc: what a
# program may do with glibc's must still work (heap_libc).
check_PROGRAMS += test/mpi/heap_libc
test_mpi_heap_libc_SOURCES = test/mpi/heap_libc.c test/mpi/testutil.h
test_mpi_heap_libc_LDADD = libbmpi.la -lpthread
TESTS += test/mpi/heap_libc.sh
EXTRA_DIST += test/mpi/heap_libc.sh
