# test/buildsys: the compiler wrappers, pkg-config files and bmpi under
# the build systems that find an MPI (CMake's FindMPI, Meson, autoconf).
TESTS += test/buildsys/wrappers.sh
EXTRA_DIST += test/buildsys/wrappers.sh
