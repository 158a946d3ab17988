# transport/verbs: the rdma-core verbs transport (docs/verbs.md), built
# when configure finds libibverbs.
if HAVE_VERBS
libbmpi_core_la_SOURCES += \
	transport/verbs/verbs.h \
	transport/verbs/verbs.c \
	transport/verbs/verbs_qp.c \
	transport/verbs/verbs_mr.c \
	transport/verbs/verbs_info.c
endif
