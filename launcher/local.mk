# launcher: bmpirun, the PMIx server that starts the ranks (launcher/README.md)
bin_PROGRAMS += launcher/bmpirun
launcher_bmpirun_SOURCES = \
	launcher/main.c \
	launcher/options.c launcher/options.h \
	launcher/hosts.c launcher/hosts.h \
	launcher/placement.c launcher/placement.h \
	launcher/job.c launcher/job.h \
	launcher/pmix_server.c launcher/pmix_server.h \
	launcher/names.c launcher/names.h \
	launcher/dpm.c launcher/dpm.h \
	launcher/spawn.c launcher/spawn.h \
	launcher/iof.c launcher/iof.h \
	launcher/mpich_abi.c launcher/mpich_abi.h \
	launcher/tree.c launcher/tree.h \
	launcher/wire.h \
	launcher/bootstrap.c launcher/bootstrap.h \
	launcher/fence.c launcher/fence.h \
	launcher/remote.c launcher/remote.h \
	launcher/daemon.c launcher/daemon.h
# the installed and the build tree's directory of MPICH sonames (mpich-abi/)
launcher_bmpirun_CPPFLAGS = $(AM_CPPFLAGS) -DBMPI_MPICH_ABI_DIR='"$(mpichabidir)"' \
	-DBMPI_BUILD_MPICH_ABI_DIR='"$(abs_top_builddir)/mpich-abi/.libs"' \
	-DBMPI_BUILD_BMPIRUN='"$(abs_top_builddir)/launcher/bmpirun"'
launcher_bmpirun_CFLAGS = $(AM_CFLAGS) $(PMIX_CFLAGS)
launcher_bmpirun_LDADD = $(PMIX_LIBS)
launcher_bmpirun_LDFLAGS = -Wl,-rpath,$(PMIX_LIBDIR)
EXTRA_DIST += launcher/README.md
