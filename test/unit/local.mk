# test/unit: Check unit tests; each component adds its own fragment.
include test/unit/shm.mk
include test/unit/heap.mk
include test/unit/datatype.mk
include test/unit/ofi_order.mk
include test/unit/shmenv.mk
include test/unit/cdesc.mk
include test/unit/place.mk
include test/unit/bootstrap.mk
include test/unit/tree.mk
include test/unit/rma_atomic.mk
include test/unit/copy.mk
