# launcher: bmpirun, the PMIx server that starts the ranks (launcher/README.md)
bin_PROGRAMS += launcher/bmpirun
launcher_bmpirun_SOURCES = \
	launcher/main.c \
	launcher/options.c launcher/options.h \
	launcher/job.c launcher/job.h \
	launcher/pmix_server.c launcher/pmix_server.h \
	launcher/spawn.c launcher/spawn.h \
	launcher/iof.c launcher/iof.h
launcher_bmpirun_CFLAGS = $(AM_CFLAGS) $(PMIX_CFLAGS)
launcher_bmpirun_LDADD = $(PMIX_LIBS)
launcher_bmpirun_LDFLAGS = -Wl,-rpath,$(PMIX_LIBDIR)
EXTRA_DIST += launcher/README.md
