# docs: the living design notes, shipped in the tarball.
EXTRA_DIST += docs/architecture.md docs/collectives.md docs/communicators.md \
	docs/ofi.md docs/performance.md docs/shm.md docs/verbs.md docs/environment.md
EXTRA_DIST += docs/large-counts.md
EXTRA_DIST += docs/building.md
EXTRA_DIST += docs/fortran-internals.md
EXTRA_DIST += docs/launcher.md
EXTRA_DIST += docs/cluster.md
EXTRA_DIST += docs/dynamic.md
EXTRA_DIST += docs/rma.md
EXTRA_DIST += docs/io.md
