#!/bin/sh
# The generated Fortran bindings (include/mpif.h, fortran/glue.c, the
# module sources) are up to date with include/mpi.h and
# tools/fortran-api.txt, and every function mpi.h declares is described.
set -u
: "${top_srcdir:?}"
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP: python3 not found (it runs tools/gen-fortran)"
    exit 77
fi
exec python3 "$top_srcdir/tools/gen-fortran" --check
