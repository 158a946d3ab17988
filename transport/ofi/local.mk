# transport/ofi: the libfabric transport (docs/ofi.md), built when
# configure finds libfabric.
if HAVE_OFI
libbmpi_core_la_SOURCES += \
	transport/ofi/ofi.h \
	transport/ofi/ofi.c \
	transport/ofi/ofi_order.h \
	transport/ofi/ofi_order.c \
	transport/ofi/ofi_mr.c \
	transport/ofi/ofi_amo.c \
	transport/ofi/ofi_jobs.c \
	transport/ofi/ofi_info.c \
	transport/ofi/ofi_dl.c \
	transport/ofi/ofi_kallsyms.c
endif
EXTRA_DIST += docs/ofi.md
