# bench: micro-benchmarks that build against bmpi AND any other MPI, and
# bench/run-compare, which runs them side by side with Open MPI and MPICH.
# Nothing here is built by `make`: the programs are compiled by run-compare
# with each MPI's own wrapper. `make bench` runs the comparison against
# this build tree; pass options in BENCH_ARGS, e.g.
#   make bench BENCH_ARGS='--reps 5 p2p'
# See bench/README.md.

bench_sources = \
	bench/hello.c \
	bench/pingpong.c \
	bench/bw.c \
	bench/bibw.c \
	bench/bibw.py \
	bench/coll.c \
	bench/rma.c \
	bench/firstcall.c \
	bench/limits.c \
	bench/stream.c \
	bench/ofi_floor.c \
	bench/tcp_stream.c \
	bench/spawn.c \
	bench/io.c \
	bench/poll.c \
	bench/reduce_local.c

EXTRA_DIST += $(bench_sources) bench/bench_util.h bench/run-compare bench/io-raw bench/net-compare bench/startup-hosts bench/bundle bench/README.md

BENCH_ARGS = all

.PHONY: bench
bench: all
	$(srcdir)/bench/run-compare --bmpi-prefix '$(abs_top_builddir)' $(BENCH_ARGS)
