# Tests: unit/ (Check, link the core library), mpi/ (multi-rank programs run
# by bmpirun), launcher/ (bmpirun's own behaviour).
include test/unit/local.mk
include test/mpi/local.mk
include test/launcher/local.mk
include test/api/local.mk
include test/ofi/local.mk
include test/verbs/local.mk
include test/netns/local.mk
include test/slurm/local.mk

# the timeout around every launch in the multi-rank tests
EXTRA_DIST += test/with-timeout
