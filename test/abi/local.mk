# test/abi: programs built with another MPI's compilers run on bmpi
# (docs/mpich-abi.md). They are compiled by the scripts, with those
# compilers, not by automake. ld_path.sh: the ranks' library path, which
# needs no MPICH.
TESTS += test/abi/ld_path.sh test/abi/mpich.sh
if BMPI_FORTRAN
TESTS += test/abi/mpich_fort.sh
endif
EXTRA_DIST += test/abi/lib.sh test/abi/check.h test/abi/ld_path.sh \
	test/abi/mpich.sh test/abi/mpich_c.c test/abi/mpich_removed.c test/abi/mpich_cxx.cc \
	test/abi/mpich_fort.sh test/abi/mpich_f77.f test/abi/mpich_f90.f90 test/abi/mpich_f08.f90
