# fortran/frt.mk: the hand-written part of the Fortran bindings: the glue
# of the routines that take callbacks or attribute values, the predefined
# callback procedures, and mpi_f08's choice-buffer descriptors as
# datatypes (docs/fortran-internals.md).
libbmpifort_la_SOURCES += fortran/callbacks.c fortran/cdesc.c fortran/cdesc.h
