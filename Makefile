# cordon's build: one non-recursive Makefile. Three variants share the
# source list: build/ (release flags, the default), build/san/ (ASan and
# UBSan, what `make check` tests) and build/clang/ (a clang build, so both
# compilers keep -Werror clean). Flags for libraries come from pkg-config;
# header dependencies are tracked with -MMD.

PKGS      := libseccomp jansson libcrypto libpsl libcares liburing sqlite3
# cordon-host's own (the daemon's API server, the client's HTTP)
HOSTD_PKGS := libmicrohttpd libcurl libarchive
# Linked statically (Debian ships the archives): start-up time is part of
# every launch, and these would otherwise cost more to load than to run
# (loading and binding libpsl, libidn2, libunistring and libcares took
# 0.4 ms of every launch).
STATIC_PKGS := libseccomp jansson libcrypto libpsl libcares liburing sqlite3
# libpsl's own libraries, which its pkg-config file names for the dynamic
# case only (SQLite's libm is linked as glibc ships it, below).
STATIC_EXTRA := -lidn2 -lunistring
VERSION   := 0.1.0
CC        ?= cc
CLANG     ?= clang
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) $(HOSTD_PKGS) 2>/dev/null)
PKG_LIBS   := -Wl,-Bstatic $(shell pkg-config --libs $(STATIC_PKGS) 2>/dev/null) $(STATIC_EXTRA) \
              -Wl,-Bdynamic $(shell pkg-config --libs $(filter-out $(STATIC_PKGS),$(PKGS)) 2>/dev/null) -lm

WARN      := -Wall -Wextra -Werror -Wformat=2 -Wshadow -Wstrict-prototypes \
             -Wmissing-prototypes -Wvla -Wno-unused-parameter
BASEFLAGS := -std=c17 -D_GNU_SOURCE -DCORDON_VERSION='"$(VERSION)"' -Isrc \
             -Itests/lib $(WARN) -g -fPIE -fstack-protector-strong \
             -fstack-clash-protection $(PKG_CFLAGS)
RELFLAGS  := -O2 -D_FORTIFY_SOURCE=2
SANFLAGS  := -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
             -fno-sanitize-recover=all
LDBASE    := -pie -Wl,-z,relro,-z,now -Wl,-z,noexecstack

SRC_ALL   := $(shell find src -name '*.c' | LC_ALL=C sort)
SRC_MAIN  := src/cordon.c
# cordon-host: the daemon, its toolbelt server, the API's client and the
# CLI verbs that run on them, with the libraries only they use (linked
# into cordon itself, every launch would load them)
SRC_HOSTD := $(filter src/cordon-host.c src/daemon/% src/toolbelt/% src/client/% \
		src/cli/container.c src/cli/daemon.c src/cli/docker.c src/cli/job.c,$(SRC_ALL))
# the container providers' code speaks to Docker through libcurl and packs
# tarballs with libarchive: it goes into cordon-host only, beside the
# daemon (the contract's own helpers, src/container/*.c, need neither;
# nor does the SSH config's schema, target.c, which the config loader reads)
SRC_CONTAINER := $(filter-out src/container/ssh/target.c,$(filter src/container/docker/% \
		src/container/ssh/%,$(SRC_ALL)))
SRC_ENGINE := $(filter src/container/docker/engine/%,$(SRC_CONTAINER))
HOSTD_LIBS := $(shell pkg-config --libs $(HOSTD_PKGS) 2>/dev/null)
SRC_LIB   := $(filter-out $(SRC_MAIN) $(SRC_HOSTD) $(SRC_CONTAINER),$(SRC_ALL))
TEST_LIB  := tests/lib/tap.c tests/lib/providers.c
UNIT_SRC  := $(wildcard tests/unit/*.c)
HELPER_SRC := $(wildcard tests/helpers/*.c)
FUZZ_SRC  := $(wildcard tests/fuzz/*.c)

all: build/cordon build/cordon-host build/cordon-static

# variant template: $(1) = directory, $(2) = compiler, $(3) = flags
define VARIANT
$(1)/%.o: %.c
	@mkdir -p $$(@D)
	@echo '  CC      $$@'
	@$(2) $(BASEFLAGS) $(3) -MMD -MP -c $$< -o $$@

$(1)/libcordon.a: $(patsubst %.c,$(1)/%.o,$(SRC_LIB))
	@rm -f $$@
	@ar rcs $$@ $$^

$(1)/cordon: $(1)/src/cordon.o $(1)/libcordon.a
	@echo '  LD      $$@'
	@$(2) $(3) $(LDBASE) -o $$@ $$^ $(PKG_LIBS)

$(1)/cordon-host: $(patsubst %.c,$(1)/%.o,$(SRC_HOSTD) $(SRC_CONTAINER)) $(1)/libcordon.a
	@echo '  LD      $$@'
	@$(2) $(3) $(LDBASE) -o $$@ $$^ $(PKG_LIBS) $(HOSTD_LIBS)

$(1)/tests/unit/%.t: $(1)/tests/unit/%.o $(1)/tests/lib/tap.o $(1)/tests/lib/providers.o \
		$(1)/libcordon.a
	@mkdir -p $$(@D)
	@echo '  LD      $$@'
	@$(2) $(3) $(LDBASE) -o $$@ $$^ $(PKG_LIBS)

$(1)/tests/helpers/%: $(1)/tests/helpers/%.o $(1)/tests/lib/providers.o $(1)/libcordon.a
	@mkdir -p $$(@D)
	@echo '  LD      $$@'
	@$(2) $(3) $(LDBASE) -o $$@ $$^ $(PKG_LIBS)

# the Docker Engine probe: the engine client (not the providers above it)
$(1)/tests/helpers/engine-probe: $(1)/tests/helpers/engine-probe.o \
		$(patsubst %.c,$(1)/%.o,$(SRC_ENGINE)) $(1)/libcordon.a
	@mkdir -p $$(@D)
	@echo '  LD      $$@'
	@$(2) $(3) $(LDBASE) -o $$@ $$^ $(PKG_LIBS) $(HOSTD_LIBS)

# the conformance suite's fake providers: `cordon container` over them
$(1)/tests/helpers/fakectr: $(1)/tests/helpers/fakectr.o $(1)/src/cli/container.o \
		$(1)/libcordon.a
	@mkdir -p $$(@D)
	@echo '  LD      $$@'
	@$(2) $(3) $(LDBASE) -o $$@ $$^ $(PKG_LIBS)

# the mirror's unit test: src/container/ssh/mirror*.c (in cordon-host only)
# and libarchive, which both it and the test use
$(1)/tests/unit/mirror.t: $(1)/tests/unit/mirror.o \
		$(patsubst %.c,$(1)/%.o,$(filter src/container/ssh/mirror%,$(SRC_CONTAINER))) \
		$(1)/tests/lib/tap.o $(1)/tests/lib/providers.o $(1)/libcordon.a
	@mkdir -p $$(@D)
	@echo '  LD      $$@'
	@$(2) $(3) $(LDBASE) -o $$@ $$^ $(PKG_LIBS) $(HOSTD_LIBS)

-include $(patsubst %.c,$(1)/%.d,$(SRC_ALL) $(TEST_LIB) $(UNIT_SRC) $(HELPER_SRC))
endef

$(eval $(call VARIANT,build,$(CC),$(RELFLAGS)))
$(eval $(call VARIANT,build/san,$(CC),$(SANFLAGS)))
$(eval $(call VARIANT,build/clang,$(CLANG),$(RELFLAGS)))

# build/cordon-static: the release build with every library linked in,
# glibc too, so that it runs where nothing else is: copied into any image
# as a container's pid 1 (`cordon cinit`) or its gateway companion.
# static-pie keeps ASLR. glibc warns about getpwuid (host_home_dir, only
# when HOME is unset, on the host) and c-ares's getservbyname and
# getservbyport_r (never called: the gateway passes numeric services,
# ARES_AI_NUMERICSERV); nothing a container runs goes through NSS.
STATIC_LIBS := $(shell pkg-config --static --libs $(STATIC_PKGS) 2>/dev/null) $(STATIC_EXTRA)
build/cordon-static: build/src/cordon.o build/libcordon.a
	@echo '  LD      $@'
	@$(CC) $(RELFLAGS) -static-pie -Wl,-z,relro,-z,now -Wl,-z,noexecstack -o $@ $^ \
		$(STATIC_LIBS)

UNIT_BIN   := $(patsubst tests/unit/%.c,build/san/tests/unit/%.t,$(UNIT_SRC))
HELPER_BIN := $(patsubst tests/helpers/%.c,build/san/tests/helpers/%,$(HELPER_SRC))

# Fuzz targets: libFuzzer needs clang.
FUZZFLAGS := -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
# (each with cordon's provider registry, which the library looks in)
build/fuzz/%: tests/fuzz/%.c tests/lib/providers.c $(SRC_LIB)
	@mkdir -p $(@D)
	$(CLANG) $(BASEFLAGS) $(FUZZFLAGS) -o $@ $< tests/lib/providers.c $(SRC_LIB) $(PKG_LIBS)

FUZZ_BIN := $(patsubst tests/fuzz/%.c,build/fuzz/%,$(FUZZ_SRC))

.SECONDARY:
.DELETE_ON_ERROR:

.PHONY: all deps demo check test fuzz fuzz-run lint clean man install uninstall deb
deps:
	@scripts/deps

check: deps
	$(MAKE) build/cordon build/clang/cordon build/san/cordon build/cordon-static build/cordon-host \
		build/clang/cordon-host build/san/cordon-host $(UNIT_BIN) $(HELPER_BIN) $(FUZZ_BIN)
	$(MAKE) man deb
	$(MAKE) test
	$(MAKE) lint

# The Docker and SSH suites run beside the rest: each starts a dockerd or
# an sshd of its own on a lab of its own and mostly waits on it, as the
# package's test waits on Debian's archive for its clean root, and as the
# host suites run again as an ordinary user wait on their jobs; the rest
# in order. Both logs are printed, then what failed in either (last, so a
# log cut to its tail still shows it), and either failing fails the run.
DOCKER_T := tests/host/engine.t tests/host/docker.t tests/host/docker-doctor.t tests/host/docker-claude.t \
	tests/host/docker-conformance.t tests/host/ssh-lab.t tests/host/ssh.t tests/host/ssh-native.t \
	tests/host/ssh-conformance.t tests/pkg/deb.t tests/cli/completion.t tests/host/unprivileged.t
TEST_ENV := CORDON=$(CURDIR)/build/san/cordon CORDON_HELPERS=$(CURDIR)/build/san/tests/helpers \
	CORDON_FUZZ=$(CURDIR)/build/fuzz CORDON_SRC=$(CURDIR) \
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# make test T='tests/host/daemon.t hostdb ...': only those, with the same
# environment. A path (ending in .t) names a shell suite; a bare name
# names a unit test, tests/unit/NAME.c, run as build/san/tests/unit/NAME.t.
# What they need is built first: the san binaries and helpers for a
# suite (and the fuzz targets, the package or the man pages for the
# suites that read them: the prerequisites are at the end of this file,
# where those are named), the unit's own binary.
T_SUITES := $(filter %.t,$(T))
T_UNITS  := $(patsubst %,build/san/tests/unit/%.t,$(filter-out %.t,$(T)))
$(foreach s,$(T_SUITES),$(if $(wildcard $(s)),,$(error make test T=$(s): no such suite)))
$(foreach u,$(filter-out %.t,$(T)),$(if $(wildcard tests/unit/$(u).c),,\
	$(error make test T=$(u): no tests/unit/$(u).c (a unit test is named without its folder and .c))))
test: $(if $(T),$(T_UNITS) $(if $(T_SUITES),build/san/cordon build/san/cordon-host \
		build/cordon-static $(HELPER_BIN)),build/san/cordon build/san/cordon-host \
		build/cordon-static $(UNIT_BIN) $(HELPER_BIN))
	@mkdir -p build
ifneq ($(T),)
	@$(TEST_ENV) prove -v -e '' $(T_UNITS:%=./%) $(T_SUITES)
else
	@{ $(TEST_ENV) prove --timer -e '' $(DOCKER_T) >build/docker-tests.log 2>&1; \
	   echo $$? >build/docker-tests.rc; } & \
	{ $(TEST_ENV) prove --timer -e '' $(UNIT_BIN:%=./%) $(filter-out $(DOCKER_T),$(sort $(wildcard \
		tests/cli/*.t tests/isolation/*.t tests/gateway/*.t tests/host/*.t tests/container/*.t \
		tests/fuzz/*.t tests/pkg/*.t tests/faults/*.t))) 2>&1; echo $$? >build/main-tests.rc; } | tee build/main-tests.log; \
	wait; echo '--- the Docker and SSH suites:'; cat build/docker-tests.log; \
	r=$$(cat build/main-tests.rc 2>/dev/null || echo 1); d=$$(cat build/docker-tests.rc 2>/dev/null || echo 1); \
	echo "--- what failed (main group exit $$r, Docker and SSH group exit $$d):"; \
	sed -n '/^Test Summary Report/,/^Result:/p' build/main-tests.log build/docker-tests.log; \
	[ "$$r" = 0 ] && [ "$$d" = 0 ]
endif

fuzz: $(FUZZ_BIN)

demo: deps
	$(MAKE) build/cordon build/cordon-host
	scripts/demo

lint:
	@echo "  LINT    json-strict, tests-kill-by-pid, layers, clang-tidy, cppcheck"
	@scripts/json-strict
	@scripts/tests-kill-by-pid
	@scripts/layers
	@mkdir -p build
	@clang-tidy --quiet $(SRC_ALL) -- $(BASEFLAGS) >build/lint.log 2>&1; r=$$?; \
	  grep -v 'warnings generated' build/lint.log; exit $$r
	@cppcheck --quiet --error-exitcode=1 --enable=warning,portability \
	  --inline-suppr -Isrc --std=c11 $(SRC_ALL)

# The man pages: scdoc sources in docs/man/, their marker lines filled by
# scripts/man-page with what the built cordon prints for --help, so the
# pages and --help never differ. The date in them is the last commit's.
MAN_PAGES := build/man/cordon.1 build/man/cordon-policy.5 build/man/cordon-daemon.8
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || date +%s)
build/man/%: docs/man/%.scd scripts/man-page build/cordon build/cordon-host
	@mkdir -p $(@D)
	@echo '  SCDOC   $@'
	@scripts/man-page build/cordon $< >$@.scd
	@SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) scdoc <$@.scd >$@
	@rm -f $@.scd

man: $(MAN_PAGES)

# make install [PREFIX=/usr/local] [DESTDIR=]: the three programs go to
# LIBEXECDIR, side by side as they find each other (cordon runs
# cordon-host for the daemon's commands; the container providers copy
# cordon-static), and BINDIR/cordon is a link to the first.
PREFIX      ?= /usr/local
BINDIR      ?= $(PREFIX)/bin
LIBEXECDIR  ?= $(PREFIX)/libexec/cordon
MANDIR      ?= $(PREFIX)/share/man
DOCDIR      ?= $(PREFIX)/share/doc/cordon
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
SYSTEMDUSERDIR ?= $(PREFIX)/lib/systemd/user
INSTALL_DOCS := README.md $(wildcard docs/*.md)

install: build/cordon build/cordon-host build/cordon-static $(MAN_PAGES)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(DOCDIR) \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(SYSTEMDUSERDIR)
	install -m 0755 build/cordon build/cordon-host build/cordon-static $(DESTDIR)$(LIBEXECDIR)/
	ln -sfr $(DESTDIR)$(LIBEXECDIR)/cordon $(DESTDIR)$(BINDIR)/cordon
	install -m 0644 build/man/cordon.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 build/man/cordon-policy.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 0644 build/man/cordon-daemon.8 $(DESTDIR)$(MANDIR)/man8/
	install -m 0644 contrib/bash-completion/cordon $(DESTDIR)$(BASHCOMPDIR)/cordon
	sed 's|/usr/local/bin/|$(BINDIR)/|' contrib/cordon.service \
		>$(DESTDIR)$(SYSTEMDUSERDIR)/cordon.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUSERDIR)/cordon.service
	install -m 0644 $(INSTALL_DOCS) $(DESTDIR)$(DOCDIR)/

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/cordon $(DESTDIR)$(LIBEXECDIR)/cordon \
		$(DESTDIR)$(LIBEXECDIR)/cordon-host $(DESTDIR)$(LIBEXECDIR)/cordon-static \
		$(DESTDIR)$(MANDIR)/man1/cordon.1 $(DESTDIR)$(MANDIR)/man5/cordon-policy.5 \
		$(DESTDIR)$(MANDIR)/man8/cordon-daemon.8 $(DESTDIR)$(BASHCOMPDIR)/cordon \
		$(DESTDIR)$(SYSTEMDUSERDIR)/cordon.service \
		$(patsubst %,$(DESTDIR)$(DOCDIR)/%,$(notdir $(INSTALL_DOCS)))
	-rmdir $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(DOCDIR) 2>/dev/null

# make deb: build/cordon_<version>_<arch>.deb, from `make install` into a
# staging root (scripts/deb).
DEB := build/cordon_$(VERSION)_$(shell dpkg --print-architecture 2>/dev/null).deb
deb: $(DEB)
$(DEB): build/cordon build/cordon-host build/cordon-static $(MAN_PAGES) scripts/deb \
		contrib/cordon.service contrib/bash-completion/cordon $(INSTALL_DOCS)
	@echo '  DEB     $@'
	@scripts/deb $(VERSION) $@

clean:
	rm -rf build

# make test T=...: what the named suites read besides the san build (here,
# below the package's and the man pages' names)
test: $(if $(filter tests/fuzz/%,$(T_SUITES)),$(FUZZ_BIN)) \
	$(if $(filter tests/pkg/deb.t,$(T_SUITES)),$(DEB)) \
	$(if $(filter tests/pkg/man.t,$(T_SUITES)),$(MAN_PAGES) build/cordon)
