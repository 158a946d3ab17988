#!/bin/sh
# The MPI-IO programs across two simulated hosts (test/netns/lib.sh:
# network namespaces joined by a bridge, 192.0.2.0/24), started by bmpirun
# through test/netns/host-agent.sh at 1+1 and 2+2 ranks: collective
# buffering then has one aggregator per node and moves pieces between
# hosts over ofi, which no single-host run shows. The hosts share this
# machine's file system, as nodes share an NFS mount (NFS itself cannot be
# mounted here: the kernel has no nfs client). Root only; skips (77)
# without ip, unshare or the ofi transport. Everything it creates
# (namespaces, processes in them, temporary files, shm segments of its
# jobs) is removed on any exit.
set -u
unset BMPI_TRANSPORT BMPI_OFI_PROVIDER LD_PRELOAD
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}

. "$top_srcdir/test/netns/lib.sh"
netns_require_tools
netns_require_ofi_build
netns_require_bmpirun
netns_test_setup bmio 2
netns_bmpirun_setup
# the files of the programs, in one directory every host sees
mkdir -p "$NETNS_TMP/files" || exit 1

for slots in 1 2; do
    for p in io_coll io_views io_nonblock io_atomic io_file io_shared; do
        netns_bmpirun_check $slots "$p" env BMPI_IO_TEST_DIR="$NETNS_TMP/files" "$top_builddir/test/io/$p"
    done
done
echo "ok: MPI-IO across simulated hosts"
