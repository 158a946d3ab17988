# mpich-abi: bmpi under the sonames that programs built with MPICH's
# compilers load (docs/mpich-abi.md). Each is a small ELF library with
# MPICH's soname that depends on libbmpi (or libbmpifort), installed in
# $(mpichabidir); bmpirun puts that directory first on the ranks'
# LD_LIBRARY_PATH. In the build tree they are in mpich-abi/.libs.
mpichabidir = $(pkglibdir)/mpich-abi
mpichabi_LTLIBRARIES = mpich-abi/libmpi.la mpich-abi/libmpich.la \
	mpich-abi/libmpicxx.la mpich-abi/libmpichcxx.la
EXTRA_DIST += mpich-abi/README.md docs/mpich-abi.md

mpichabi_ldflags = -version-info 12:0:0 -no-undefined
# The Fortran ones define nothing themselves: their dependency is their
# whole point (mpifort links libmpich.so.12 too, but a linker that
# defaults to --as-needed drops it), and must survive --as-needed.
# libtool moves every -Wl flag behind the libraries, so the library is
# named again after the flag (LIBADD still gives the rpath).
mpichabi_keep = -Wl,--no-as-needed,$(top_builddir)/.libs/
# only the names of mpich-abi/mpich_abi.c (and mpich_abi_fort.c), none of
# libbmpi's
mpichabi_c_names = MPIR_Dup_fn|P?MPI_(Address|Type_(extent|lb|ub|hindexed|hvector|struct)|Errhandler_(create|set|get))|MPIX_Query_(cuda|hip|ze)_support
mpichabi_c_ldflags = $(mpichabi_ldflags) -export-symbols-regex '^($(mpichabi_c_names))$$'
mpichabi_fort_names = p?mpi_type_(extent|lb|ub|hvector|hindexed|struct)_{0,2}|P?MPI_TYPE_(EXTENT|LB|UB|HVECTOR|HINDEXED|STRUCT)

mpich_abi_libmpi_la_SOURCES = mpich-abi/mpich_abi.c mpich-abi/mpich_abi.h
mpich_abi_libmpi_la_LIBADD = libbmpi.la
mpich_abi_libmpi_la_LDFLAGS = $(mpichabi_c_ldflags)
mpich_abi_libmpich_la_SOURCES = mpich-abi/mpich_abi.c mpich-abi/mpich_abi.h
mpich_abi_libmpich_la_LIBADD = libbmpi.la
mpich_abi_libmpich_la_LDFLAGS = $(mpichabi_c_ldflags)

# MPICH's C++ bindings (MPI::...) are not provided, only the names, empty:
# mpicxx links libmpich.so.12 too, which brings bmpi.
mpich_abi_libmpicxx_la_SOURCES =
mpich_abi_libmpicxx_la_LDFLAGS = $(mpichabi_ldflags)
mpich_abi_libmpichcxx_la_SOURCES =
mpich_abi_libmpichcxx_la_LDFLAGS = $(mpichabi_ldflags)

if BMPI_FORTRAN
mpichabi_LTLIBRARIES += mpich-abi/libmpifort.la mpich-abi/libmpichfort.la
mpichabi_fort_sources = mpich-abi/mpich_abi.c mpich-abi/mpich_abi.h mpich-abi/mpich_abi_fort.c
mpichabi_fort_ldflags = $(mpichabi_ldflags) $(mpichabi_keep)libbmpifort.so \
	-export-symbols-regex '^($(mpichabi_c_names)|$(mpichabi_fort_names))$$'
mpich_abi_libmpifort_la_SOURCES = $(mpichabi_fort_sources)
mpich_abi_libmpifort_la_LIBADD = libbmpifort.la libbmpi.la
mpich_abi_libmpifort_la_LDFLAGS = $(mpichabi_fort_ldflags)
mpich_abi_libmpichfort_la_SOURCES = $(mpichabi_fort_sources)
mpich_abi_libmpichfort_la_LIBADD = libbmpifort.la libbmpi.la
mpich_abi_libmpichfort_la_LDFLAGS = $(mpichabi_fort_ldflags)
endif
