#!/bin/sh
# Every rma program over the verbs transport on libibverbs-emu (preloaded,
# as in test/verbs/verbs_emu.sh; BMPI_TRANSPORT=self,verbs keeps shm out),
# at 2 and 4 ranks (RMA_COUNTS). Skips (77) when bmpi was built without
# verbs or the emulation is not built.
set -u
if ! grep -q '^#define BMPI_HAVE_VERBS 1' "$top_builddir/config.h" 2>/dev/null; then
    echo "SKIP: bmpi was built without verbs (libibverbs-dev)"
    exit 77
fi
emu="$top_builddir/test/verbs/.libs/libibverbs-emu.so"
if [ ! -f "$emu" ]; then
    echo "SKIP: $emu not built"
    exit 77
fi
LD_PRELOAD=$emu
BMPI_TRANSPORT=self,verbs
export LD_PRELOAD BMPI_TRANSPORT
. "$top_srcdir/test/rma/lib.sh"
rma_run_all "verbs (emulated)" ${RMA_COUNTS:-2 4}
rma_check_pulled "verbs (emulated)" 3
# Nothing left behind in /dev/shm (the emulation uses memfds).
if ls /dev/shm 2>/dev/null | grep -q "bmpi.emu"; then
    echo "FAIL: emulation segments left in /dev/shm"
    exit 1
fi
echo "ok: rma over verbs (emulated)"
