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
	fortran/mpi_f08_compile_constants.f90 fortran/mpi_f08_callbacks.f90 fortran/mpi_f08.f90
# The routines with choice buffers, over fortran/cdesc.h.
libbmpifort_la_SOURCES += fortran/f08ts.h fortran/f08ts.c fortran/glue_f08ts.c \
	fortran/mpi_f08ts.f90
# (No per-target flags: objects keep their plain names, so that the module
# dependencies below do not replace automake's rules for them.)
AM_FCFLAGS = -J fortran -I fortran -I$(top_srcdir)/include
include_HEADERS += include/mpif.h

fortranmoddir = $(includedir)
bmpi_f_modules = mpi mpi_f08_types mpi_f08_link_constants mpi_f08_compile_constants \
	mpi_f08_callbacks mpi_f08
nodist_fortranmod_DATA = $(bmpi_f_modules:%=fortran/%.mod)
fortran/mpi_f08_link_constants.lo: fortran/mpi_f08_types.lo
fortran/mpi_f08_compile_constants.lo: fortran/mpi_f08_types.lo
fortran/mpi_f08_callbacks.lo: fortran/mpi_f08_compile_constants.lo
fortran/mpi_f08.lo: fortran/mpi_f08_callbacks.lo \
	fortran/mpi_f08_link_constants.lo
fortran/mpi_f08ts.lo: fortran/mpi_f08_compile_constants.lo
# A module file is a by-product of its object; remade with it when missing.
$(bmpi_f_modules:%=fortran/%.mod): fortran/%.mod: fortran/%.lo
	@test -f $@ || { rm -f $<; $(MAKE) $(AM_MAKEFLAGS) $<; }
CLEANFILES += fortran/*.mod

EXTRA_DIST += tools/gen-fortran tools/fortran-api.txt
