#!/bin/sh
# Every rma program across two simulated hosts (test/netns/lib.sh: network
# namespaces joined by a bridge, 192.0.2.0/24), started by bmpirun through
# test/netns/host-agent.sh at 1+1 and 2+2 ranks: windows then span two
# nodes (two node regions; peers on the other host through ofi, on this
# host through the node region or shm), which no single-host run shows.
# rma_matrix skips the shared flavor there by itself (not all on one node).
# Root only; skips (77) without ip, unshare or the ofi transport.
# Everything it creates (namespaces, processes in them, temporary files,
# bmpi shm segments of its jobs) is removed on any exit.
set -u
unset BMPI_TRANSPORT BMPI_OFI_PROVIDER LD_PRELOAD
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}

. "$top_srcdir/test/netns/lib.sh"
. "$top_srcdir/test/rma/lib.sh"
netns_require_tools
netns_require_ofi_build
netns_require_bmpirun
netns_test_setup bmrma 2
netns_bmpirun_setup

for slots in 1 2; do
    for f in $rma_flavors; do
        netns_bmpirun_check $slots "rma_matrix $f" "$top_builddir/test/rma/rma_matrix" "$f"
    done
    for p in $rma_programs; do
        netns_bmpirun_check $slots "$p" "$top_builddir/test/rma/$p"
    done
done
# Gathered messages to the other host fill up to their bound (64 KiB over
# ofi less the headers: at least three quarters of it), some of their
# data by reference, none with gathering off.
rma_launcher="$NETNS_BMPIRUN --host $(netns_host_list 1) $NETNS_TMP/rank"
rma_check_gathered "ofi/net across two hosts" 2 49152
# Large accumulates to the other host are pulled by their target over
# net (runtime/rma_pull.c), and go as active messages with the pull off.
rma_launcher="$NETNS_BMPIRUN --host $(netns_host_list 2) $NETNS_TMP/rank"
rma_check_pulled "ofi/net across two hosts" 2
# Over tcp;ofi_rxm (whose atomics the target's CPU applies; the default
# provider, net, has none) accumulates to the other host take the
# transport's atomics, while ranks on the target's host update the same
# counters with CPU atomics: the storms of rma_atomic must still add up,
# and one origin's accumulates must stay in order across both paths.
rma_launcher="$NETNS_BMPIRUN --host $(netns_host_list 2) $NETNS_TMP/rank env BMPI_OFI_PROVIDER=tcp"
for p in rma_atomic rma_acc_order; do
    rma_check_net_atomics "ofi/tcp across two hosts" 4 "$p"
done
echo "ok: rma across simulated hosts"
