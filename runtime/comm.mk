# Communicators, groups, topologies, attributes, info and user error
# classes (the MPI-level API above runtime/comm.c's objects).
libbmpi_core_la_SOURCES += \
	runtime/attr.c runtime/attr.h \
	runtime/comm_api.c \
	runtime/context.c runtime/context.h \
	runtime/errors_api.c runtime/errors_api.h \
	runtime/group_api.c runtime/group_api.h \
	runtime/info.c runtime/info.h \
	runtime/neighbor.c \
	runtime/topo.c runtime/topo.h
