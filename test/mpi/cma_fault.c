/*
 * Test-only preload: process_vm_writev fails with EFAULT, as it would for
 * a peer whose buffer is not mapped, so that test/mpi/coll_shm_fault.c can
 * check how a direct collective reports a copy that failed on one rank.
 * Never installed nor linked into libbmpi.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/uio.h>

ssize_t process_vm_writev(pid_t pid, const struct iovec *local, unsigned long liovcnt,
                          const struct iovec *remote, unsigned long riovcnt, unsigned long flags)
{
    (void)pid, (void)local, (void)liovcnt, (void)remote, (void)riovcnt, (void)flags;
    errno = EFAULT;
    return -1;
}
