/* The ranks' library path for programs built with MPICH's compilers
 * (docs/mpich-abi.md): bmpi's directory of MPICH sonames goes first on
 * LD_LIBRARY_PATH, so that such a program loads bmpi where it asks for
 * libmpich.so.12. Programs built against bmpi or Open MPI ask for other
 * names and are unaffected. */
#ifndef BMPI_LAUNCHER_MPICH_ABI_H
#define BMPI_LAUNCHER_MPICH_ABI_H

#include <stdbool.h>

/* "LD_LIBRARY_PATH=<compat dir>[:old]" (malloc'd) for the ranks, where old
 * is the value in env (NULL-terminated "VAR=value" strings; the last one
 * of that name counts); NULL when there is no compat directory (nothing
 * built or installed there) or no memory. */
char *bmpi_mpich_abi_ld_path(const char *const *env);

/* Warn when program needs an MPICH soname and has a DT_RPATH (without a
 * DT_RUNPATH) naming a directory that holds it: the loader searches that
 * before LD_LIBRARY_PATH, so the ranks would load MPICH itself. */
void bmpi_mpich_abi_check_program(const char *program);

/* Whether program is a 64-bit ELF file whose symbols (dynamic, or a static
 * build's unstripped table) name MPI_Init or MPI_Init_thread, C or Fortran,
 * and that does not need bmpi's libbmpi.so: an MPI program of another MPI
 * (or of MPICH's ABI, which bmpirun serves with bmpi unless --no-mpich-abi).
 * A script, a stripped static build or a program that loads MPI with
 * dlopen answers false. */
bool bmpi_program_uses_other_mpi(const char *program);

#endif
