# tools: the compiler wrappers bmpicc, bmpicxx and bmpifort (and the
# mpicc/mpicxx/mpifort/mpirun/mpiexec links).
#
# The wrappers are generated here by sed rather than by AC_CONFIG_FILES so
# that $(libdir) and friends are fully expanded (configure leaves them as
# ${exec_prefix}/lib) and `make prefix=...` is honoured. All six scripts
# come from one template, tools/bmpi-wrapper.in; the name of the target
# says the language and the tree it points at:
#   tools/bmpicc, bmpicxx, bmpifort   installed; point at $(includedir)
#                                     and $(libdir)
#   tools/bmpicc-build, bmpicxx-build, bmpifort-build
#                                     not installed; point at the source
#                                     tree's include/ and the build tree's
#                                     .libs and fortran/ (modules), for
#                                     bench/ and tests before `make install`

bmpi_wrappers = tools/bmpicc tools/bmpicxx tools/bmpifort
bmpi_build_wrappers = tools/bmpicc-build tools/bmpicxx-build tools/bmpifort-build
bin_SCRIPTS += $(bmpi_wrappers)
noinst_SCRIPTS = $(bmpi_build_wrappers)
EXTRA_DIST += tools/bmpi-wrapper.in
CLEANFILES += $(bmpi_wrappers) $(bmpi_build_wrappers)

# bmpifort knows whether there is anything for it to link.
if BMPI_FORTRAN
bmpi_fortran_built = yes
else
bmpi_fortran_built = no
endif

# `make prefix=DIR install` must not install files that name the
# configured prefix: what names installation directories depends on this
# stamp, rewritten only when one of them changes (test/buildsys/lib.sh
# reads the directories from it).
tools/install-dirs: bmpi-force
	@$(MKDIR_P) tools && \
	echo '$(prefix) $(exec_prefix) $(includedir) $(libdir)' >$@.tmp && \
	if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
bmpi-force:
.PHONY: bmpi-force
CLEANFILES += tools/install-dirs

# the MPI level, from mpi.h's MPI_VERSION and MPI_SUBVERSION (4.1)
bmpi_mpi_level = `sed -n 's/^\#define MPI_VERSION  *\([0-9]*\).*/\1/p; s/^\#define MPI_SUBVERSION  *\([0-9]*\).*/.\1/p' \
	$(srcdir)/include/mpi.h | tr -d '\n'`

# Write to a temporary and rename, so an interrupted make never leaves a
# half-written script that looks up to date. (cd && pwd turns
# abs_top_srcdir's build/../src into a plain path for -show.)
$(bmpi_wrappers): tools/install-dirs
$(bmpi_wrappers) $(bmpi_build_wrappers): $(srcdir)/tools/bmpi-wrapper.in $(srcdir)/include/mpi.h Makefile
	$(AM_V_GEN)$(MKDIR_P) tools && rm -f $@ $@.tmp && \
	case $@ in \
	  *bmpicc*) lang=c bindings=yes ;; \
	  *bmpicxx*) lang=cxx bindings=yes ;; \
	  *bmpifort*) lang=fortran bindings=$(bmpi_fortran_built) ;; \
	esac && \
	case $@ in \
	  *-build) src=`cd '$(top_srcdir)' && pwd` && \
	    inc=$$src/include fmod='$(abs_top_builddir)/fortran' lib='$(abs_top_builddir)/.libs' ;; \
	  *) inc='$(includedir)' fmod='$(includedir)' lib='$(libdir)' ;; \
	esac && \
	fc='$(FC)' && fc=$${fc:-gfortran} && \
	sed -e 's|@VERSION[@]|$(VERSION)|g' \
	  -e "s|@MPI_LEVEL[@]|$(bmpi_mpi_level)|g" \
	  -e "s|@WRAPPER_LANG[@]|$$lang|g" \
	  -e "s|@BINDINGS[@]|$$bindings|g" \
	  -e 's|@CC[@]|$(CC)|g' -e 's|@CXX[@]|$(CXX)|g' -e "s|@FC[@]|$$fc|g" \
	  -e 's|@PMIX_LIBDIR[@]|$(PMIX_LIBDIR)|g' \
	  -e "s|@includedir[@]|$$inc|g" -e "s|@fmoddir[@]|$$fmod|g" -e "s|@libdir[@]|$$lib|g" \
	  $(srcdir)/tools/bmpi-wrapper.in >$@.tmp && \
	chmod +x $@.tmp && mv $@.tmp $@

# pkg-config files, one template: bmpi (C), bmpi-cxx, bmpi-fort, and the
# generic names mpi (C) and mpi-c, mpi-cxx, mpi-fort (CMake's FindMPI asks
# pkg-config for these when it finds no working wrapper). The Fortran ones
# only when the Fortran bindings are built.
bmpi_pc_files = tools/bmpi.pc tools/bmpi-cxx.pc tools/mpi.pc tools/mpi-c.pc tools/mpi-cxx.pc
if BMPI_FORTRAN
bmpi_pc_files += tools/bmpi-fort.pc tools/mpi-fort.pc
endif
pkgconfig_DATA += $(bmpi_pc_files)
EXTRA_DIST += tools/bmpi.pc.in
CLEANFILES += $(bmpi_pc_files)

$(bmpi_pc_files): $(srcdir)/tools/bmpi.pc.in $(srcdir)/include/mpi.h tools/install-dirs Makefile
	$(AM_V_GEN)$(MKDIR_P) tools && rm -f $@ $@.tmp && \
	case $@ in \
	  *-cxx.pc) lang=C++ libs=-lbmpi ;; \
	  *-fort.pc) lang=Fortran libs='-lbmpifort -lbmpi' ;; \
	  *) lang=C libs=-lbmpi ;; \
	esac && \
	name=`basename $@ .pc` && \
	sed -e 's|@prefix[@]|$(prefix)|g' -e 's|@exec_prefix[@]|$(exec_prefix)|g' \
	  -e 's|@libdir[@]|$(libdir)|g' -e 's|@includedir[@]|$(includedir)|g' \
	  -e 's|@VERSION[@]|$(VERSION)|g' -e "s|@MPI_LEVEL[@]|$(bmpi_mpi_level)|g" \
	  -e "s|@PC_NAME[@]|$$name|g" -e "s|@PC_LANGUAGE[@]|$$lang|g" -e "s|@PC_LIBS[@]|$$libs|g" \
	  $(srcdir)/tools/bmpi.pc.in >$@.tmp && \
	mv $@.tmp $@

# mpicc, mpicxx, mpifort, mpirun ... as links to bmpi's own tools, so that scripts
# and build systems that call the conventional names find bmpi when its
# bindir comes first in PATH. The names follow --program-prefix/-suffix/
# -transform-name like the programs they point at. This is the Makefile's
# only install-exec-hook/uninstall-hook; add to these, do not define others.
bmpi_link_names = mpicc:bmpicc mpicxx:bmpicxx mpic++:bmpicxx mpiCC:bmpicxx \
	mpifort:bmpifort mpif90:bmpifort mpif77:bmpifort mpirun:bmpirun mpiexec:bmpirun

install-exec-hook:
	@$(NORMAL_INSTALL)
	$(MKDIR_P) '$(DESTDIR)$(bindir)'
	@cd '$(DESTDIR)$(bindir)' && \
	for pair in $(bmpi_link_names); do \
	  link=`echo "$${pair%%:*}" | sed '$(transform)'`; \
	  target=`echo "$${pair#*:}" | sed '$(transform)'`; \
	  echo " ln -s $$target '$(DESTDIR)$(bindir)/$$link'"; \
	  rm -f "$$link" && ln -s "$$target" "$$link" || exit 1; \
	done

uninstall-hook:
	@$(NORMAL_UNINSTALL)
	@for pair in $(bmpi_link_names); do \
	  link=`echo "$${pair%%:*}" | sed '$(transform)'`; \
	  echo " rm -f '$(DESTDIR)$(bindir)/$$link'"; \
	  rm -f "$(DESTDIR)$(bindir)/$$link"; \
	done
