# io: MPI-IO (MPI 4.1 chapter 14) on POSIX files, with collective
# buffering (io/file.h, docs/io.md). Calls other ranks only through MPI
# entry points; of the runtime, errors, error handlers, info, datatypes,
# requests, progress and a communicator's node map. The runtime calls in through io/io.h only.
libbmpi_core_la_SOURCES += \
	io/io.h io/file.h \
	io/access.c \
	io/datarep.c \
	io/file.c \
	io/file_err.c \
	io/nonblock.c \
	io/pending.c \
	io/view.c \
	io/walk.c \
	io/coll.c \
	io/shared.c
EXTRA_DIST += io/README.md
