# tools: the bmpicc compiler wrapper (and the mpicc/mpirun/mpiexec links).
#
# bmpicc is generated here by sed rather than by AC_CONFIG_FILES so that
# $(libdir) and friends are fully expanded (configure leaves them as
# ${exec_prefix}/lib) and `make prefix=...` is honoured. Two scripts come
# from one template:
#   tools/bmpicc        installed; points at $(includedir) and $(libdir)
#   tools/bmpicc-build  not installed; points at the source tree's include/
#                       and the build tree's .libs, for bench/ and tests
#                       before `make install`

bin_SCRIPTS += tools/bmpicc
noinst_SCRIPTS = tools/bmpicc-build
EXTRA_DIST += tools/bmpicc.in
CLEANFILES += tools/bmpicc tools/bmpicc-build

bmpicc_edit = sed \
	-e 's|@VERSION[@]|$(VERSION)|g' \
	-e 's|@CC[@]|$(CC)|g' \
	-e 's|@PMIX_LIBDIR[@]|$(PMIX_LIBDIR)|g'

# Write to a temporary and rename, so an interrupted make never leaves a
# half-written script that looks up to date.
tools/bmpicc: $(srcdir)/tools/bmpicc.in Makefile
	$(AM_V_GEN)$(MKDIR_P) tools && rm -f $@ $@.tmp && \
	$(bmpicc_edit) \
	  -e 's|@includedir[@]|$(includedir)|g' \
	  -e 's|@libdir[@]|$(libdir)|g' \
	  $(srcdir)/tools/bmpicc.in >$@.tmp && \
	chmod +x $@.tmp && mv $@.tmp $@

# (cd && pwd turns abs_top_srcdir's build/../src into a plain path for -show.)
tools/bmpicc-build: $(srcdir)/tools/bmpicc.in Makefile
	$(AM_V_GEN)$(MKDIR_P) tools && rm -f $@ $@.tmp && \
	src=`cd '$(top_srcdir)' && pwd` && \
	$(bmpicc_edit) \
	  -e "s|@includedir[@]|$$src/include|g" \
	  -e 's|@libdir[@]|$(abs_top_builddir)/.libs|g' \
	  $(srcdir)/tools/bmpicc.in >$@.tmp && \
	chmod +x $@.tmp && mv $@.tmp $@

# mpicc, mpirun and mpiexec as links to bmpi's own tools, so that scripts
# and build systems that call the conventional names find bmpi when its
# bindir comes first in PATH. The names follow --program-prefix/-suffix/
# -transform-name like the programs they point at. This is the Makefile's
# only install-exec-hook/uninstall-hook; add to these, do not define others.
bmpi_link_names = mpicc:bmpicc mpirun:bmpirun mpiexec:bmpirun

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
