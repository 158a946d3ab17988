# test/unit/check_cdesc: mpi_f08 choice buffers (Fortran descriptors built
# with libgfortran's CFI_establish/CFI_section) as datatypes
# (fortran/cdesc.c), checked by packing against a reference walk.
if HAVE_CHECK
if BMPI_FORTRAN
check_PROGRAMS += test/unit/check_cdesc
TESTS += test/unit/check_cdesc
test_unit_check_cdesc_SOURCES = test/unit/check_cdesc.c test/unit/run_suite.h
test_unit_check_cdesc_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
test_unit_check_cdesc_LDADD = libbmpifort.la libbmpi.la $(CHECK_LIBS) -lgfortran
endif
endif
