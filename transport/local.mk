# transport: byte movers behind transport/transport.h. A transport calls
# back into the runtime only through bmpi_am_deliver() and the PMIx and
# error helpers.
libbmpi_core_la_SOURCES += \
	transport/transport.h \
	transport/copy.h \
	transport/common.c \
	transport/env.c \
	transport/self/self.c
include transport/shm/local.mk
include transport/ofi/local.mk
include transport/verbs/local.mk
