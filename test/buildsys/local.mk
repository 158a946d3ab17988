# test/buildsys: the compiler wrappers, pkg-config files and bmpi under
# the build systems that find an MPI (CMake's FindMPI, Meson, autoconf).
TESTS += test/buildsys/wrappers.sh
EXTRA_DIST += test/buildsys/wrappers.sh
TESTS += test/buildsys/cxx.sh
EXTRA_DIST += test/buildsys/cxx.sh test/buildsys/cxx.cc
