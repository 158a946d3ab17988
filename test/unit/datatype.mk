# test/unit/check_datatype: datatype layouts, envelopes and the pack/unpack
# cursor against a naive reference packer; links the core library.
if HAVE_CHECK
check_PROGRAMS += test/unit/check_datatype
TESTS += test/unit/check_datatype
test_unit_check_datatype_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(PMIX_CFLAGS)
test_unit_check_datatype_LDADD = libbmpi_core.la $(CHECK_LIBS)
endif
