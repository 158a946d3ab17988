# collectives: MPI collectives as schedules on the runtime's point-to-point
# (see collectives/coll.h), and the reduction operations they apply.
libbmpi_core_la_SOURCES += \
	collectives/coll.h collectives/coll_impl.h \
	collectives/sched.c \
	collectives/select.c \
	collectives/barrier.c \
	collectives/bcast.c \
	collectives/bcast_pipeline.c \
	collectives/bcast_linear.c \
	collectives/reduce.c \
	collectives/reduce_pipeline.c \
	collectives/reduce_halves.c \
	collectives/allreduce.c \
	collectives/allgather.c \
	collectives/allgather_linear.c \
	collectives/gather.c \
	collectives/alltoall.c \
	collectives/reduce_scatter.c \
	collectives/scan.c \
	collectives/inter.c \
	collectives/shm_coll.h collectives/shm_coll_impl.h \
	collectives/shm_region.c \
	collectives/shm_ring.c \
	collectives/shm_direct.c \
	collectives/shm_barrier.c \
	collectives/shm_bcast.c \
	collectives/shm_reduce.c \
	collectives/shm_allgather.c \
	collectives/shm_alltoall.c \
	collectives/coll_api.c \
	runtime/op.c runtime/op.h
EXTRA_DIST += collectives/README.md
