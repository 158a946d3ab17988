# runtime: one-sided communication (runtime/win.h, docs/rma.md). Calls the
# collectives through the MPI entry points, the transports through
# transport/transport.h and node memory through transport/shm/node.h.
libbmpi_core_la_SOURCES += \
	runtime/win.c runtime/win.h \
	runtime/win_obj.c \
	runtime/rma.c runtime/rma_impl.h runtime/rma_proto.h \
	runtime/rma_sync.c \
	runtime/rma_am.c \
	runtime/rma_amo.c \
	runtime/rma_batch.c \
	runtime/rma_pull.c \
	runtime/rma_atomic.h
