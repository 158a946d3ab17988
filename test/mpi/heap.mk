# The shared heap (transport/shm/heap.c) as the program's malloc: what a
# program may do with glibc's must still work (heap_libc), also for a
# program that brings its own allocator (heap_own_malloc) and for Python
# loading libbmpi (heap_python).
check_PROGRAMS += test/mpi/heap_libc
test_mpi_heap_libc_SOURCES = test/mpi/heap_libc.c test/mpi/testutil.h
test_mpi_heap_libc_LDADD = libbmpi.la -lpthread
TESTS += test/mpi/heap_libc.sh
EXTRA_DIST += test/mpi/heap_libc.sh
check_PROGRAMS += test/mpi/heap_own_malloc
test_mpi_heap_own_malloc_SOURCES = test/mpi/heap_own_malloc.c test/mpi/testutil.h
test_mpi_heap_own_malloc_LDADD = libbmpi.la
TESTS += test/mpi/heap_own_malloc.sh
EXTRA_DIST += test/mpi/heap_own_malloc.sh
TESTS += test/mpi/heap_python.sh
EXTRA_DIST += test/mpi/heap_python.sh
