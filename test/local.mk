# Tests: unit/ (Check, link the core library), mpi/ (multi-rank programs run
# by bmpirun), launcher/ (bmpirun's own behaviour).
include test/unit/local.mk
include test/mpi/local.mk
include test/dpm/local.mk
include test/launcher/local.mk
include test/api/local.mk
include test/abi/local.mk
include test/ofi/local.mk
include test/verbs/local.mk
include test/netns/local.mk
include test/slurm/local.mk
include test/buildsys/local.mk

# the timeout around every launch in the multi-rank tests
EXTRA_DIST += test/with-timeout

# The whole suite once more on each transport the ranks can be restricted
# to (issue 5, docs/ofi.md "Tests"): ofi over tcp;ofi_rxm, ofi over
# libfabric's shm provider, and verbs over its test-only emulation
# (preloaded into every process of that run; tests that check this
# machine's own devices unset it). Not part of check or CI: the three
# take about 50 minutes on 2 cores.
check-transports:
	$(MAKE) $(AM_MAKEFLAGS) check TESTS=
	BMPI_TRANSPORT=ofi BMPI_OFI_PROVIDER=tcp $(MAKE) $(AM_MAKEFLAGS) check
	BMPI_TRANSPORT=ofi BMPI_OFI_PROVIDER=shm $(MAKE) $(AM_MAKEFLAGS) check
	BMPI_TRANSPORT=self,verbs LD_PRELOAD='$(abs_top_builddir)/test/verbs/.libs/libibverbs-emu.so' \
	    $(MAKE) $(AM_MAKEFLAGS) check
.PHONY: check-transports
include test/fortran/local.mk
include test/rma/local.mk
include test/io/local.mk
