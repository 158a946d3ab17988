#!/bin/sh
# A Python interpreter as the rank, through ctypes: libbmpi loaded after
# start-up (glibc's malloc stays the interpreter's, the shared heap stands
# down), then preloaded (libbmpi's malloc serves the interpreter and its
# large objects live in the heap). Large bytearrays go round the ranks
# and must arrive intact.
lib=$top_builddir/.libs/libbmpi.so
if ! command -v python3 >/dev/null || ! python3 -c 'import ctypes' 2>/dev/null; then
    echo "SKIP: no python3 with ctypes"
    exit 77
fi
# A sanitizer's runtime must be loaded first: not so in a plain python3.
if ! nm -D "$lib" 2>/dev/null | grep -q ' T malloc$'; then
    echo "SKIP: this libbmpi has no shared heap (sanitizer build)"
    exit 77
fi
# The rank's program: argv[1] is libbmpi.so, argv[2] "loaded" or
# "preloaded"; the shared heap must be set up only when preloaded.
script=$(cat <<'EOF'
import ctypes
import sys

MPI_COMM_WORLD = 0x44000000
MPI_BYTE = 0x4C00010D
MPI_STATUS_IGNORE = ctypes.c_void_p(1)

lib = ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)
preloaded = sys.argv[2] == "preloaded"


def check(rc, call):
    if rc != 0:
        sys.exit("heap_python: %s returned %d" % (call, rc))


check(lib.MPI_Init(None, None), "MPI_Init")
rank, size = ctypes.c_int(), ctypes.c_int()
check(lib.MPI_Comm_rank(MPI_COMM_WORLD, ctypes.byref(rank)), "MPI_Comm_rank")
check(lib.MPI_Comm_size(MPI_COMM_WORLD, ctypes.byref(size)), "MPI_Comm_size")
me, n = rank.value, size.value
to, frm = (me + 1) % n, (me + n - 1) % n

for length in (100 * 1024 + 7, 4 << 20, 16 << 20):
    send = bytearray((i * 7 + me) & 0xFF for i in range(256)) * (length // 256 + 1)
    send = send[:length]
    recv = bytearray(length)
    sbuf = (ctypes.c_char * length).from_buffer(send)
    rbuf = (ctypes.c_char * length).from_buffer(recv)
    check(lib.MPI_Sendrecv(sbuf, length, MPI_BYTE, to, 5, rbuf, length, MPI_BYTE, frm, 5,
                           MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Sendrecv")
    want = bytearray((i * 7 + frm) & 0xFF for i in range(256)) * (length // 256 + 1)
    if recv != want[:length]:
        sys.exit("heap_python: rank %d: %d bytes from rank %d are wrong" % (me, length, frm))
    del sbuf, rbuf

with open("/proc/self/maps") as maps:
    heap_mapped = "bmpi-heap" in maps.read()
if heap_mapped != preloaded:
    sys.exit("heap_python: rank %d: shared heap %s, libbmpi %s" % (
        me, "set up" if heap_mapped else "missing", sys.argv[2]))
check(lib.MPI_Finalize(), "MPI_Finalize")
if me == 0:
    print("PASS heap_python at %d ranks, libbmpi %s" % (n, sys.argv[2]))
EOF
)
# BMPI_SHM_HEAP=1: the heap is on when preloaded also where huge-page
# settings make it stand down by default, and stands down when loaded
# late even so.
export BMPI_SHM_HEAP=1
for n in 1 2 3; do
    "$top_srcdir/test/with-timeout" 120 "${BMPIRUN:-bmpirun}" -n $n python3 -c "$script" "$lib" loaded ||
        { echo "FAIL: python3 with libbmpi loaded by ctypes at $n ranks"; exit 1; }
    LD_PRELOAD=$lib "$top_srcdir/test/with-timeout" 120 "${BMPIRUN:-bmpirun}" -n $n python3 \
        -c "$script" "$lib" preloaded ||
        { echo "FAIL: python3 with libbmpi preloaded at $n ranks"; exit 1; }
done
