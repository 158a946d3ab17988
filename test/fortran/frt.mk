# test/fortran/frt.mk: the runtime side of the Fortran bindings: the
# callback glue and language hooks driven from C (lang_cb).
if BMPI_FORTRAN
check_PROGRAMS += test/fortran/lang_cb
test_fortran_lang_cb_SOURCES = test/fortran/lang_cb.c test/mpi/testutil.h
test_fortran_lang_cb_LDADD = libbmpifort.la libbmpi.la
TESTS += test/fortran/lang_cb.sh
endif
EXTRA_DIST += test/fortran/lang_cb.sh
