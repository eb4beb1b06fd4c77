# make install [PREFIX=~/.local] — binaries (authd, which is also the whole authctl, and authctl's
# front, in bin), user units, man pages, shell completions and the x-scheme-handler desktop entry
# that hands custom-scheme sign-in redirects to authd.
# Also the C client library (libauthd-client: the shared library, its header and a pkg-config
# file), built with the system's C compiler, and the Python client module (authd_client.py).
# make uninstall removes exactly what install put there.
# CONFIGURATION=debug reuses a debug build (the test script does, to save a release build).
# The binaries are installed stripped (symbols and debug information left in the build folder,
# where a debugger can load them: `gdb -ex 'symbol-file .build/release/authd' -p PID`);
# STRIP=true installs them whole.
# make deb builds the Debian packages into .build/deb (supabase-authd_<version>-<revision>_<arch>.deb,
# libauthd-client0, libauthd-client-dev and python3-authd-client beside it) from a release build: `make install` into a
# staging tree laid out for /usr, then packaging/deb/build. `make -o build deb BUILT=DIR` packages
# binaries built earlier in DIR without building. make deb-lint runs lintian on them.

PREFIX ?= $(HOME)/.local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
UNITDIR ?= $(PREFIX)/share/systemd/user
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/site-functions
FISHCOMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d
APPLICATIONSDIR ?= $(PREFIX)/share/applications
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
# The Python client goes where $(PYTHON) looks under PREFIX: Debian's python3 reads
# /usr/lib/python3/dist-packages, /usr/local/lib/python3.X/dist-packages and the user's
# ~/.local/lib/python3.X/site-packages (the X ties those two to one Python version). Under any
# other prefix (or one this Python does not search) it is $(PREFIX)/lib/python3/dist-packages,
# which apps find through PYTHONPATH. The system's python3, which desktop apps run, decides, not
# whichever python3 (a venv, pyenv) comes first on PATH: its version and folders may differ, and
# `make uninstall` must find the same folder again.
# Each is worked out once (:=), not at every use as `?=` would, which started python3 about five
# times per install; a value given on the command line or in the environment still wins.
ifeq ($(origin PYTHON),undefined)
PYTHON := $(shell test -x /usr/bin/python3 && echo /usr/bin/python3 || echo python3)
endif
ifeq ($(origin PYTHONDIR),undefined)
PYTHONDIR := $(shell $(PYTHON) -c 'import site, sys; lib = sys.argv[1].rstrip("/") + "/lib/"; \
	print(next((p for p in sys.path + [site.getusersitepackages()] if p.startswith(lib) and p.endswith("-packages")), lib + "python3/dist-packages"))' \
	'$(PREFIX)' 2>/dev/null || echo '$(PREFIX)/lib/python3/dist-packages')
endif
CONFIGURATION ?= release

SWIFT ?= swift
STRIP ?= strip
# cc, else the Swift toolchain's clang (a fresh machine may have no other C compiler).
ifeq ($(origin CC),default)
CC := $(shell command -v cc >/dev/null 2>&1 && echo cc || echo clang)
endif
BUILT = $(shell $(SWIFT) build -c $(CONFIGURATION) --show-bin-path)
# The C client: only its API is exported (AUTHD_CLIENT_H's functions). Hardened as Debian builds
# C (dpkg-buildflags): checked string and memory calls, stack protector, relocations read-only
# and bound at load (RELRO, BIND_NOW).
C_CLIENT = .build/c-client/libauthd-client.so.0
C_CLIENT_FLAGS = -std=c11 -O2 -g -Wall -Wextra -fPIC -fvisibility=hidden -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=2 -fstack-protector-strong \
	-shared -Wl,-soname,libauthd-client.so.0 -Wl,-z,relro -Wl,-z,now
# A library outside the loader's own directories (/lib, /usr/lib, lib64 and multiarch ones; even
# /usr/local/lib is found only once ldconfig ran) is found through the run path pkg-config gives.
C_CLIENT_RPATH = $(if $(filter /lib /usr/lib /lib64 /usr/lib64 /lib/%-linux-gnu /usr/lib/%-linux-gnu,$(LIBDIR)),,-Wl,-rpath,$${libdir} )

# The version: AuthdVersion.string, what `authd --version` and `authctl --version` print.
AUTHD_VERSION = $(shell sed -n '/enum AuthdVersion/,/^}/s/.*static let string = "\([^"]*\)".*/\1/p' Sources/AuthProtocol/JSONRPC.swift)
DEB_REVISION ?= 1
DEB_DIR = .build/deb
DEB_STAGE = $(DEB_DIR)/stage
DEB = $(DEB_DIR)/supabase-authd_$(AUTHD_VERSION)-$(DEB_REVISION)_$(shell dpkg --print-architecture).deb
DEB_MULTIARCH = $(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null)

INSTALLED = \
	$(BINDIR)/authd $(BINDIR)/authctl \
	$(UNITDIR)/authd.service $(UNITDIR)/authd.socket \
	$(MANDIR)/man1/authctl.1 $(MANDIR)/man5/authd.conf.5 $(MANDIR)/man7/authd-protocol.7 $(MANDIR)/man8/authd.8 \
	$(BASHCOMPDIR)/authctl $(ZSHCOMPDIR)/_authctl $(FISHCOMPDIR)/authctl.fish \
	$(APPLICATIONSDIR)/authctl-open-url.desktop \
	$(LIBDIR)/libauthd-client.so.0 $(LIBDIR)/libauthd-client.so $(INCLUDEDIR)/authd-client.h $(PKGCONFIGDIR)/authd-client.pc \
	$(PYTHONDIR)/authd_client.py

.PHONY: all build install uninstall deb deb-lint deb-path version

all: build

build: $(C_CLIENT)
	$(SWIFT) build -c $(CONFIGURATION) --product authd
	$(MAKE) --no-print-directory front

# authctl's front, in C (clients/c/authctl-front.c, which includes the C client's code): fully
# static, so that `authctl token` starts without the dynamic loader (benchmark P2). Built beside
# authd, which it runs as the whole authctl.
FRONT = $(BUILT)/authctl
FRONT_FLAGS = -std=c11 -O2 -Wall -Wextra -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=2 -fstack-protector-strong \
	-static -ffunction-sections -fdata-sections -Wl,--gc-sections
.PHONY: front
front:
	mkdir -p $(BUILT)
	$(CC) $(FRONT_FLAGS) -o $(FRONT) clients/c/authctl-front.c

$(C_CLIENT): clients/c/authd-client.c clients/c/authd-client.h Makefile
	mkdir -p $(dir $@)
	$(CC) $(C_CLIENT_FLAGS) -o $@ clients/c/authd-client.c

install: build
	# An earlier install's authctl-full (now part of authd) would lie there unused: 56 MiB.
	rm -f $(DESTDIR)$(PREFIX)/libexec/authd/authctl-full
	rmdir $(DESTDIR)$(PREFIX)/libexec/authd 2>/dev/null || true
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 \
		$(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR) \
		$(DESTDIR)$(APPLICATIONSDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(PYTHONDIR)
	# Stripped: symbols and DWARF are most of a release binary's size (authd 114 → 34 MB),
	# and nothing at run time reads them (a crash prints the message; a core names the build id).
	# authctl is a small front that runs the authd beside it (as the whole authctl) for every
	# command but `authctl token`: the two stay in one folder.
	install -m 755 -s --strip-program=$(STRIP) $(BUILT)/authd $(BUILT)/authctl $(DESTDIR)$(BINDIR)/
	sed 's|^ExecStart=.*|ExecStart=$(BINDIR)/authd|' systemd/authd.service > $(DESTDIR)$(UNITDIR)/authd.service
	chmod 644 $(DESTDIR)$(UNITDIR)/authd.service
	install -m 644 systemd/authd.socket $(DESTDIR)$(UNITDIR)/
	install -m 644 man/authctl.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 man/authd.conf.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 644 man/authd-protocol.7 $(DESTDIR)$(MANDIR)/man7/
	install -m 644 man/authd.8 $(DESTDIR)$(MANDIR)/man8/
	$(BUILT)/authctl --generate-completion-script bash > $(DESTDIR)$(BASHCOMPDIR)/authctl
	$(BUILT)/authctl --generate-completion-script zsh > $(DESTDIR)$(ZSHCOMPDIR)/_authctl
	$(BUILT)/authctl --generate-completion-script fish > $(DESTDIR)$(FISHCOMPDIR)/authctl.fish
	sed 's|^Exec=authctl |Exec=$(BINDIR)/authctl |' desktop/authctl-open-url.desktop > $(DESTDIR)$(APPLICATIONSDIR)/authctl-open-url.desktop
	chmod 644 $(DESTDIR)$(APPLICATIONSDIR)/authctl-open-url.desktop
	install -m 755 -s --strip-program=$(STRIP) $(C_CLIENT) $(DESTDIR)$(LIBDIR)/
	ln -sf libauthd-client.so.0 $(DESTDIR)$(LIBDIR)/libauthd-client.so
	install -m 644 clients/c/authd-client.h $(DESTDIR)$(INCLUDEDIR)/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@RPATH@|$(C_CLIENT_RPATH)|' \
		clients/c/authd-client.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/authd-client.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/authd-client.pc
	install -m 644 clients/python/authd_client.py $(DESTDIR)$(PYTHONDIR)/
	@$(PYTHON) -c 'import sys; sys.exit(sys.argv[1] not in sys.path)' '$(PYTHONDIR)' 2>/dev/null || \
		echo "The Python client is in $(PYTHONDIR), which $(PYTHON) does not search: apps find it with PYTHONPATH=$(PYTHONDIR)"
	@echo "Installed. Start it with: systemctl --user daemon-reload && systemctl --user enable --now authd.socket"

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	# What Python compiled on import, beside the module.
	rm -f $(DESTDIR)$(PYTHONDIR)/__pycache__/authd_client.*.pyc
	# What installs before authctl-full became part of authd put in libexec.
	rm -f $(DESTDIR)$(PREFIX)/libexec/authd/authctl-full
	rmdir $(DESTDIR)$(PREFIX)/libexec/authd 2>/dev/null || true
	rmdir --ignore-fail-on-non-empty $(DESTDIR)$(PKGCONFIGDIR) 2>/dev/null || true

# The Debian packages. The staging tree is what `make install` puts in place for a distribution
# (units in /usr/lib/systemd/user, the library in the multiarch directory, zsh's completion where
# Debian's zsh looks for packages'); -o build: the build is done, by this target's prerequisite.
deb: build
	@[ "$(CONFIGURATION)" = release ] || { echo "make deb: a package is made from a release build, not CONFIGURATION=$(CONFIGURATION)" >&2; exit 1; }
	@[ -n "$(AUTHD_VERSION)" ] || { echo "make deb: no AuthdVersion.string in Sources/AuthProtocol/JSONRPC.swift" >&2; exit 1; }
	@[ -n "$(DEB_MULTIARCH)" ] || { echo "make deb: dpkg-architecture is missing: apt-get install dpkg-dev" >&2; exit 1; }
	rm -rf $(DEB_STAGE)
	$(MAKE) --no-print-directory -o build install DESTDIR=$(CURDIR)/$(DEB_STAGE)/debian/tmp BUILT=$(BUILT) CONFIGURATION=release \
		PREFIX=/usr UNITDIR=/usr/lib/systemd/user LIBDIR=/usr/lib/$(DEB_MULTIARCH) \
		ZSHCOMPDIR=/usr/share/zsh/vendor-completions PYTHONDIR=/usr/lib/python3/dist-packages >/dev/null
	packaging/deb/build $(DEB_STAGE) $(DEB_DIR) $(AUTHD_VERSION) $(DEB_REVISION)

# lintian over the packages make deb built: errors and warnings fail; overrides, each with its
# reason, are in packaging/deb/*.lintian-overrides.
deb-lint:
	lintian --fail-on error,warning --display-info --pedantic $(DEB_DIR)/*_$(AUTHD_VERSION)-$(DEB_REVISION)_*.deb

# The path of the supabase-authd package make deb builds (for scripts).
deb-path:
	@echo $(DEB)

# The version (for scripts: the Python and Node packages must carry it too).
version:
	@echo $(AUTHD_VERSION)
