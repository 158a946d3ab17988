#!/usr/bin/env python3
"""bibw.py: bench/bibw.c's bidirectional bandwidth, with a Python
interpreter as the rank, as a Python code using MPI through its bindings
runs.

MPI is called through ctypes, so the same script runs on any library with
MPICH's ABI (bmpi, MPICH): BIBW_MPI_LIB names it (default libmpi.so.12;
for bmpi, libbmpi.so.0 or its path). As Python bindings do, it asks for
MPI_THREAD_MULTIPLE (-T sets another level), and buffers come from an
anonymous mmap (Python's mmap module), not from malloc.

Per iteration each of ranks 0 and 1 posts a window of MPI_Irecv into one
buffer, then a window of MPI_Isend, and waits for all; sizes, warm-up and
samples as in bibw.c.

Output: bibw <size_bytes> <best_MB/s> <median_MB/s>
Options: -m MIN -M MAX (bytes, k/m suffix), -W window (64), -s samples
(7), -t ms per sample (20), -T thread level (3: MULTIPLE)
"""
import ctypes
import getopt
import mmap
import os
import sys

MPI_COMM_WORLD = 0x44000000  # MPICH ABI
MPI_CHAR = 0x4C000101
MPI_STATUSES_IGNORE = ctypes.c_void_p(1)


def parse_size(s):
    mult = {"k": 1024, "m": 1024 * 1024}.get(s[-1:].lower(), 1)
    return int(float(s[:-1] if mult > 1 else s) * mult)


def main():
    opts, _ = getopt.getopt(sys.argv[1:], "m:M:W:s:t:T:")
    o = dict(opts)
    lo, hi = parse_size(o.get("-m", "4k")), parse_size(o.get("-M", "16m"))
    win, samples = int(o.get("-W", 64)), int(o.get("-s", 7))
    target, level = float(o.get("-t", 20)) / 1e3, int(o.get("-T", 3))

    mpi = ctypes.CDLL(os.environ.get("BIBW_MPI_LIB", "libmpi.so.12"), mode=ctypes.RTLD_GLOBAL)
    mpi.MPI_Wtime.restype = ctypes.c_double
    provided = ctypes.c_int()
    mpi.MPI_Init_thread(None, None, level, ctypes.byref(provided))
    rank = ctypes.c_int()
    mpi.MPI_Comm_rank(MPI_COMM_WORLD, ctypes.byref(rank))
    rank, peer = rank.value, 1 - rank.value
    sbuf, rbuf = mmap.mmap(-1, hi), mmap.mmap(-1, hi)
    sbuf.write(b"\1" * hi)
    saddr = ctypes.addressof(ctypes.c_char.from_buffer(sbuf))
    raddr = ctypes.addressof(ctypes.c_char.from_buffer(rbuf))
    reqs = (ctypes.c_int * (2 * win))()
    irecv, isend, waitall = mpi.MPI_Irecv, mpi.MPI_Isend, mpi.MPI_Waitall
    req_ptrs = [ctypes.byref(reqs, 4 * i) for i in range(2 * win)]

    def window(n):
        for i in range(win):
            irecv(ctypes.c_void_p(raddr), n, MPI_CHAR, peer, 100, MPI_COMM_WORLD, req_ptrs[i])
        for i in range(win):
            isend(ctypes.c_void_p(saddr), n, MPI_CHAR, peer, 100, MPI_COMM_WORLD, req_ptrs[win + i])
        waitall(2 * win, reqs, MPI_STATUSES_IGNORE)

    if rank == 0:
        print("# bibw.py provided thread level %d" % provided.value)
    size = lo
    while size <= hi:
        for _ in range(4):
            window(size)
        mpi.MPI_Barrier(MPI_COMM_WORLD)
        t = mpi.MPI_Wtime()
        window(size)
        per = max(mpi.MPI_Wtime() - t, 1e-7)
        batch = ctypes.c_int(max(1, int(target / per)))
        mpi.MPI_Bcast(ctypes.byref(batch), 1, 0x4C000405, 0, MPI_COMM_WORLD)  # MPI_INT
        rates = []
        for _ in range(samples):
            mpi.MPI_Barrier(MPI_COMM_WORLD)
            t = mpi.MPI_Wtime()
            for _ in range(batch.value):
                window(size)
            t = mpi.MPI_Wtime() - t
            rates.append(2.0 * size * win * batch.value / t / 1e6)
        rates.sort()
        if rank == 0:
            print("bibw %d %.1f %.1f" % (size, rates[-1], rates[len(rates) // 2]))
            sys.stdout.flush()
        size *= 2
    del sbuf, rbuf
    mpi.MPI_Finalize()


main()
