# test/fortran: Fortran programs over the bindings of fortran/, run through
# bmpirun (test/mpi/run-ranks). Each part has its own .mk file.
include test/fortran/fgen.mk
include test/fortran/frt.mk
