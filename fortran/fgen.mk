# fortran/fgen.mk: the generated bindings (tools/gen-fortran from mpi.h and
# tools/fortran-api.txt; the generated files are committed, like
# docs/api-status.md, and test/fortran/check-gen-fortran.sh keeps them fresh).
# Included from fortran/local.mk inside `if BMPI_FORTRAN`.
#
# gfortran writes the .mod files into fortran/ of the build tree (-J); a
# module must be compiled before the files that use it, hence the object
# dependencies below.
libbmpifort_la_SOURCES += fortran/glue.h fortran/support.c fortran/glue.c fortran/mpi.f90 \
	fortran/mpi_f08_types.f90 fortran/mpi_f08_link_constants.f90 \
	fortran/mpi_f08_compile_constants.f90
libbmpifort_la_CPPFLAGS = $(AM_CPPFLAGS)
libbmpifort_la_FCFLAGS = -J fortran -I fortran
include_HEADERS += include/mpif.h

fortranmoddir = $(includedir)
bmpi_f_modules = mpi mpi_f08_types mpi_f08_link_constants mpi_f08_compile_constants
nodist_fortranmod_DATA = $(bmpi_f_modules:%=fortran/%.mod)
fortran/libbmpifort_la-mpi_f08_link_constants.lo: fortran/libbmpifort_la-mpi_f08_types.lo
fortran/libbmpifort_la-mpi_f08_compile_constants.lo: fortran/libbmpifort_la-mpi_f08_types.lo
# A module file is a by-product of its object; remade with it when missing.
$(bmpi_f_modules:%=fortran/%.mod): fortran/%.mod: fortran/libbmpifort_la-%.lo
	@test -f $@ || { rm -f $<; $(MAKE) $(AM_MAKEFLAGS) $<; }
CLEANFILES += fortran/*.mod

EXTRA_DIST += tools/gen-fortran tools/fortran-api.txt
