# fortran: the Fortran bindings (mpif.h, the mpi and mpi_f08 modules) in
# libbmpifort, a layer above libbmpi that calls only the MPI C API and
# runtime/lang.h. Built when configure found a Fortran 2018 compiler.
# Each part of the bindings adds its sources in its own .mk below.
if BMPI_FORTRAN
lib_LTLIBRARIES += libbmpifort.la
libbmpifort_la_SOURCES = fortran/fortran.h
libbmpifort_la_LIBADD = libbmpi.la
libbmpifort_la_LDFLAGS = -version-info 0:0:0 -no-undefined
include fortran/fgen.mk
include fortran/frt.mk
endif
