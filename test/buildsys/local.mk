# test/buildsys: the compiler wrappers, pkg-config files and bmpi under
# the build systems that find an MPI (CMake's FindMPI, Meson, autoconf).
TESTS += test/buildsys/wrappers.sh
EXTRA_DIST += test/buildsys/wrappers.sh
TESTS += test/buildsys/cxx.sh
EXTRA_DIST += test/buildsys/cxx.sh test/buildsys/cxx.cc

# Against an installed bmpi (make install DESTDIR= into each test's own
# directory, one install at a time: test/buildsys/lib.sh).
TESTS += test/buildsys/pkgconfig.sh test/buildsys/cmake.sh test/buildsys/meson.sh \
	test/buildsys/autotools.sh
EXTRA_DIST += test/buildsys/lib.sh test/buildsys/pkgconfig.sh test/buildsys/cmake.sh \
	test/buildsys/meson.sh test/buildsys/autotools.sh test/buildsys/proj/CMakeLists.txt \
	test/buildsys/proj/configure.ac test/buildsys/proj/Makefile.am \
	test/buildsys/proj/meson.build test/buildsys/proj/meson_options.txt \
	test/buildsys/proj/hello_c.c test/buildsys/proj/hello_cxx.cc \
	test/buildsys/proj/hello_mod.f90 test/buildsys/proj/hello_h.f \
	test/buildsys/proj/hello_f08.f90
CLEANFILES += tools/install.lock
