# test/fortran/fgen.mk: the generated bindings (fortran/fgen.mk).
# check-gen-fortran.sh: generated files fresh, every mpi.h function described.
# fgen_mpif.sh: mpif.h in fixed form and `use mpi` at 1-4 ranks.
# fgen_fstatus.sh (C): the conversions refuse MPI_F_STATUS_IGNORE and friends.
TESTS += test/fortran/check-gen-fortran.sh test/fortran/fgen_fstatus.sh
EXTRA_DIST += test/fortran/check-gen-fortran.sh test/fortran/fgen_mpif.sh \
	test/fortran/fgen_fstatus.sh test/fortran/fgen_f08.sh test/fortran/f08_large.sh docs/fortran.md fortran/README.md
check_PROGRAMS += test/fortran/fgen_fstatus
test_fortran_fgen_fstatus_LDADD = libbmpi.la
if BMPI_FORTRAN
# Compiled as the contract's build-tree wrapper would (AM_FCFLAGS of
# fortran/fgen.mk): mpif.h from the source tree's include/, the .mod files
# from the build tree's fortran/.
check_PROGRAMS += test/fortran/fgen_mpif test/fortran/fgen_mpi
test_fortran_fgen_mpif_SOURCES = test/fortran/fgen_mpif.f90
test_fortran_fgen_mpif_FCFLAGS = -ffixed-form $(AM_FCFLAGS)
test_fortran_fgen_mpif_LDADD = libbmpifort.la libbmpi.la
test_fortran_fgen_mpi_SOURCES = test/fortran/fgen_mpi.f90
test_fortran_fgen_mpi_LDADD = libbmpifort.la libbmpi.la
test/fortran/fgen_mpi.$(OBJEXT): fortran/mpi.mod
TESTS += test/fortran/fgen_mpif.sh
# fgen_f08.sh: `use mpi_f08`.
check_PROGRAMS += test/fortran/fgen_f08
test_fortran_fgen_f08_SOURCES = test/fortran/fgen_f08.f90
test_fortran_fgen_f08_LDADD = libbmpifort.la libbmpi.la
test/fortran/fgen_f08.$(OBJEXT): fortran/mpi_f08.mod
TESTS += test/fortran/fgen_f08.sh
# f08_large.sh: more than 2^31 elements through the _c specifics of mpi_f08.
check_PROGRAMS += test/fortran/f08_large
test_fortran_f08_large_SOURCES = test/fortran/f08_large.f90
test_fortran_f08_large_LDADD = libbmpifort.la libbmpi.la
test/fortran/f08_large.$(OBJEXT): fortran/mpi_f08.mod
TESTS += test/fortran/f08_large.sh
endif
