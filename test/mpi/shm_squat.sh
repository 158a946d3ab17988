#!/bin/sh
# Another user (nobody) takes every /dev/shm name the old naming gave the
# job before its MPI_Init (shm_squat.c): the job must run with its fast
# paths and shared-memory collectives, none of which may report a
# fallback under BMPI_VERBOSE=1. Needs root to become nobody: skipped
# (77) otherwise.
set -u
if [ "$(id -u)" -ne 0 ] || ! id nobody >/dev/null 2>&1; then
    echo "SKIP: needs root and a user nobody"
    exit 77
fi
prog=$top_builddir/test/mpi/shm_squat
out=$(BMPI_VERBOSE=1 "$top_srcdir/test/mpi/run-ranks" "$prog" 2 4 2>&1)
rc=$?
printf '%s\n' "$out"
[ $rc -eq 0 ] || { echo "FAIL: the job did not run beside the squatter's files"; exit 1; }
if printf '%s\n' "$out" | grep -E 'no fast path|collectives off|refusing to map|already exists'; then
    echo "FAIL: the squatter's files cost the job a fast path or its collectives"
    exit 1
fi
echo "ok: the squatter's files did not touch the job"
