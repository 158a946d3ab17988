# test/unit/check_ofi_order: the ofi transport's reorder queue
# (transport/ofi/ofi_order.c), which has no libfabric dependency.
if HAVE_CHECK
check_PROGRAMS += test/unit/check_ofi_order
TESTS += test/unit/check_ofi_order
test_unit_check_ofi_order_SOURCES = test/unit/check_ofi_order.c \
	transport/ofi/ofi_order.h transport/ofi/ofi_order.c
test_unit_check_ofi_order_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
test_unit_check_ofi_order_LDADD = $(CHECK_LIBS)
endif
