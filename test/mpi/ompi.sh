#!/bin/sh
# The same binary starts under Open MPI's mpirun: its daemon hosts a PMIx
# server that bmpi's ranks join as plain PMIx clients.
set -u
command -v mpirun.openmpi >/dev/null 2>&1 || { echo "SKIP: Open MPI's mpirun is not installed"; exit 77; }
prog="$top_builddir/test/mpi/hello"
for n in 2 4; do
    out=$(OMPI_MCA_plm_rsh_agent=false timeout -k 5 120 mpirun.openmpi --allow-run-as-root --oversubscribe -n "$n" "$prog") \
        || { printf '%s\n' "$out"; echo "FAIL: mpirun -n $n hello exited $?"; exit 1; }
    ranks=$(printf '%s\n' "$out" | sed -n "s/^hello from rank \([0-9]*\) of $n on .*/\1/p" | sort -un | wc -l)
    [ "$ranks" -eq "$n" ] || { printf '%s\n' "$out"; echo "FAIL: expected $n ranks"; exit 1; }
    echo "ok: Open MPI mpirun -n $n"
done
