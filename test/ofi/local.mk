# test/ofi: the libfabric transport alone (BMPI_TRANSPORT=ofi) over the tcp
# and shm providers; the scripts skip (77) when libfabric is not built in or
# the provider is not available here.
check_PROGRAMS += test/ofi/ofi_sanity
test_ofi_ofi_sanity_LDADD = libbmpi.la
check_PROGRAMS += test/ofi/ofi_rma_error
test_ofi_ofi_rma_error_LDADD = libbmpi.la
# Calls the transport contract itself: links the core library.
check_PROGRAMS += test/ofi/ofi_amo
test_ofi_ofi_amo_CFLAGS = $(AM_CFLAGS) $(PMIX_CFLAGS)
test_ofi_ofi_amo_LDADD = libbmpi_core.la
TESTS += test/ofi/ofi_tcp.sh test/ofi/ofi_net.sh test/ofi/ofi_shm.sh test/ofi/ofi_errors.sh test/ofi/ofi_other.sh \
	test/ofi/ofi_unreachable.sh test/ofi/bmpi_info.sh test/ofi/ofi_amo.sh test/ofi/ofi_kallsyms.sh
EXTRA_DIST += test/ofi/lib.sh test/ofi/ofi_tcp.sh test/ofi/ofi_net.sh test/ofi/ofi_shm.sh test/ofi/ofi_errors.sh test/ofi/ofi_other.sh \
	test/ofi/ofi_unreachable.sh test/ofi/bmpi_info.sh test/ofi/ofi_amo.sh test/ofi/ofi_kallsyms.sh
