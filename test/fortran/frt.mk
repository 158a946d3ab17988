# test/fortran/frt.mk: the runtime side of the Fortran bindings.
# lang_cb (C): the callback glue and the language hooks, called as
# gfortran calls them. f_p2p, f_coll, f_types, f_comm, f_io: Fortran programs,
# each built for mpif.h (_mpifh), the mpi module (_mpi; the same .F90
# with -DBMPI_TEST_USE_MPI) and mpi_f08 (_f08, its own .f90), run at 1-4
# ranks by frt-run. They are
# compiled as the contract's build-tree wrapper would: mpif.h from the
# source tree's include/, the .mod files from the build tree's fortran/.
if BMPI_FORTRAN
check_PROGRAMS += test/fortran/lang_cb
test_fortran_lang_cb_SOURCES = test/fortran/lang_cb.c test/mpi/testutil.h
test_fortran_lang_cb_LDADD = libbmpifort.la libbmpi.la
TESTS += test/fortran/lang_cb.sh

# -fallow-argument-mismatch: mpif.h declares no interfaces, so gfortran
# compares the choice buffers of one routine's calls with each other
frt_fcflags = -I$(top_srcdir)/include -I$(top_builddir)/fortran -fallow-argument-mismatch
check_PROGRAMS += test/fortran/f_p2p_mpifh test/fortran/f_p2p_mpi test/fortran/f_coll_mpifh \
	test/fortran/f_coll_mpi test/fortran/f_types_mpifh test/fortran/f_types_mpi test/fortran/f_comm_mpifh \
	test/fortran/f_comm_mpi test/fortran/f_p2p_f08 test/fortran/f_coll_f08 test/fortran/f_types_f08 \
	test/fortran/f_comm_f08 test/fortran/f_io_mpifh test/fortran/f_io_mpi test/fortran/f_io_f08
TESTS += test/fortran/f_p2p.sh test/fortran/f_coll.sh test/fortran/f_types.sh test/fortran/f_comm.sh \
	test/fortran/f_io.sh

test_fortran_f_p2p_mpifh_SOURCES = test/fortran/f_p2p.F90
test_fortran_f_p2p_mpi_SOURCES = test/fortran/f_p2p.F90
test_fortran_f_coll_mpifh_SOURCES = test/fortran/f_coll.F90
test_fortran_f_coll_mpi_SOURCES = test/fortran/f_coll.F90
test_fortran_f_types_mpifh_SOURCES = test/fortran/f_types.F90
test_fortran_f_types_mpi_SOURCES = test/fortran/f_types.F90
test_fortran_f_comm_mpifh_SOURCES = test/fortran/f_comm.F90
test_fortran_f_comm_mpi_SOURCES = test/fortran/f_comm.F90
test_fortran_f_p2p_f08_SOURCES = test/fortran/f_p2p_f08.f90
test_fortran_f_coll_f08_SOURCES = test/fortran/f_coll_f08.f90
test_fortran_f_types_f08_SOURCES = test/fortran/f_types_f08.f90
test_fortran_f_comm_f08_SOURCES = test/fortran/f_comm_f08.f90
test_fortran_f_io_mpifh_SOURCES = test/fortran/f_io.F90
test_fortran_f_io_mpi_SOURCES = test/fortran/f_io.F90
test_fortran_f_io_f08_SOURCES = test/fortran/f_io_f08.f90
# The test programs' own modules land in the build tree's top directory.
CLEANFILES += f_coll_f08_ops.mod f_comm_f08_cb.mod f_comm_seen.mod f_io_seen.mod f_io_f08_cb.mod
test_fortran_f_p2p_mpifh_FCFLAGS = $(frt_fcflags)
test_fortran_f_coll_mpifh_FCFLAGS = $(frt_fcflags)
test_fortran_f_types_mpifh_FCFLAGS = $(frt_fcflags)
test_fortran_f_comm_mpifh_FCFLAGS = $(frt_fcflags)
test_fortran_f_p2p_mpi_FCFLAGS = $(frt_fcflags) -DBMPI_TEST_USE_MPI
test_fortran_f_coll_mpi_FCFLAGS = $(frt_fcflags) -DBMPI_TEST_USE_MPI
test_fortran_f_types_mpi_FCFLAGS = $(frt_fcflags) -DBMPI_TEST_USE_MPI
test_fortran_f_comm_mpi_FCFLAGS = $(frt_fcflags) -DBMPI_TEST_USE_MPI
test_fortran_f_p2p_f08_FCFLAGS = $(frt_fcflags)
test_fortran_f_coll_f08_FCFLAGS = $(frt_fcflags)
test_fortran_f_types_f08_FCFLAGS = $(frt_fcflags)
test_fortran_f_comm_f08_FCFLAGS = $(frt_fcflags)
test_fortran_f_io_mpifh_FCFLAGS = $(frt_fcflags)
test_fortran_f_io_mpi_FCFLAGS = $(frt_fcflags) -DBMPI_TEST_USE_MPI
test_fortran_f_io_f08_FCFLAGS = $(frt_fcflags)
test_fortran_f_p2p_mpifh_LDADD = libbmpifort.la libbmpi.la
test_fortran_f_p2p_mpi_LDADD = libbmpifort.la libbmpi.la
test_fortran_f_coll_mpifh_LDADD = libbmpifort.la libbmpi.la
test_fortran_f_coll_mpi_LDADD = libbmpifort.la libbmpi.la
test_fortran_f_types_mpifh_LDADD = libbmpifort.la libbmpi.la
test_fortran_f_types_mpi_LDADD = libbmpifort.la libbmpi.la
test_fortran_f_comm_mpifh_LDADD = libbmpifort.la libbmpi.la
test_fortran_f_comm_mpi_LDADD = libbmpifort.la libbmpi.la
test_fortran_f_p2p_f08_LDADD = libbmpifort.la libbmpi.la
test_fortran_f_coll_f08_LDADD = libbmpifort.la libbmpi.la
test_fortran_f_types_f08_LDADD = libbmpifort.la libbmpi.la
test_fortran_f_comm_f08_LDADD = libbmpifort.la libbmpi.la
test_fortran_f_io_mpifh_LDADD = libbmpifort.la libbmpi.la
test_fortran_f_io_mpi_LDADD = libbmpifort.la libbmpi.la
test_fortran_f_io_f08_LDADD = libbmpifort.la libbmpi.la
# the programs that use a module need it built first
test/fortran/f_p2p_mpi-f_p2p.$(OBJEXT) test/fortran/f_coll_mpi-f_coll.$(OBJEXT) \
test/fortran/f_types_mpi-f_types.$(OBJEXT) test/fortran/f_comm_mpi-f_comm.$(OBJEXT) \
test/fortran/f_io_mpi-f_io.$(OBJEXT): \
	fortran/mpi.mod
test/fortran/f_p2p_f08-f_p2p_f08.$(OBJEXT) test/fortran/f_coll_f08-f_coll_f08.$(OBJEXT) \
test/fortran/f_types_f08-f_types_f08.$(OBJEXT) \
test/fortran/f_comm_f08-f_comm_f08.$(OBJEXT) test/fortran/f_io_f08-f_io_f08.$(OBJEXT): fortran/mpi_f08.mod
endif
EXTRA_DIST += test/fortran/lang_cb.sh test/fortran/frt-run test/fortran/frt_mpi.h test/fortran/frt_check.h \
	test/fortran/f_coll_predef.h test/fortran/f_coll_concat.h \
	test/fortran/f_p2p.sh test/fortran/f_coll.sh test/fortran/f_types.sh test/fortran/f_comm.sh \
	test/fortran/f_io.sh
