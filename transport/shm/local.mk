# transport/shm: the shared-memory transport (docs/shm.md)
libbmpi_core_la_SOURCES += \
	transport/shm/shm.h \
	transport/shm/cacheline.h \
	transport/shm/shm.c \
	transport/shm/segment.c \
	transport/shm/cma.c \
	transport/shm/heap.h \
	transport/shm/heap.c \
	transport/shm/peer_heap.c \
	transport/shm/node.h \
	transport/shm/node.c
