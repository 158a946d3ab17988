# bmpi_info links the core library statically: it asks the transports
# themselves what they find, through internal interfaces.
bin_PROGRAMS += tools/bmpi_info
tools_bmpi_info_SOURCES = tools/bmpi_info.c
tools_bmpi_info_CPPFLAGS = $(AM_CPPFLAGS) $(PMIX_CFLAGS)
tools_bmpi_info_LDADD = libbmpi_core.la
tools_bmpi_info_LDFLAGS = -Wl,-rpath,$(PMIX_LIBDIR)
