# test/abi: programs built with another MPI's compilers run on bmpi
# (docs/mpich-abi.md). They are compiled by the scripts, with those
# compilers, not by automake.
TESTS += test/abi/mpich.sh
EXTRA_DIST += test/abi/mpich.sh test/abi/mpich_c.c test/abi/mpich_cxx.cc
