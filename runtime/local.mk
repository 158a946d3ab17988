# runtime: init/finalize, bootstrap, errors, communicators, requests,
# matching and the point-to-point protocol, and the hooks the language
# bindings use (lang.h). May call transport/ only through
# transport/transport.h.
libbmpi_core_la_SOURCES += \
	runtime/api.h \
	runtime/api_unimplemented.c \
	runtime/api_status.c runtime/api_status.h \
	runtime/bsend.c \
	runtime/comm.c runtime/comm.h \
	runtime/constants.c \
	runtime/dpm.c runtime/dpm.h \
	runtime/errhandler.c runtime/errhandler.h \
	runtime/error.c runtime/error.h \
	runtime/group.c runtime/group.h \
	runtime/handle.c runtime/handle.h \
	runtime/init.c \
	runtime/intercomm.c \
	runtime/lang.c runtime/lang.h \
	runtime/match.c runtime/match.h \
	runtime/names.c \
	runtime/p2p.c runtime/p2p.h runtime/p2p_proto.h runtime/counts.h \
	runtime/p2p_api.c \
	runtime/pmix.c runtime/pmix.h \
	runtime/progress.c runtime/progress.h \
	runtime/request.c runtime/request.h \
	runtime/mem_api.c \
	runtime/request_api.c \
	runtime/rma_atomic.c runtime/rma_atomic.h \
	runtime/status_api.c \
	runtime/tl_select.c runtime/tl_select.h \
	runtime/world.h
include runtime/datatype.mk
include runtime/rma.mk
include runtime/comm.mk
