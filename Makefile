# make install [PREFIX=~/.local] — binaries (authd and authctl's front in bin, authctl-full in
# libexec/authd), user units, man pages, shell completions and the x-scheme-handler desktop entry
# that hands custom-scheme sign-in redirects to authd.
# Also the C client library (libauthd-client: the shared library, its header and a pkg-config
# file), built with the system's C compiler.
# make uninstall removes exactly what install put there.
# CONFIGURATION=debug reuses a debug build (the test script does, to save a release build).
# The binaries are installed stripped (symbols and debug information left in the build folder,
# where a debugger can load them: `gdb -ex 'symbol-file .build/release/authd' -p PID`);
# STRIP=true installs them whole.

PREFIX ?= $(HOME)/.local
BINDIR ?= $(PREFIX)/bin
LIBEXECDIR ?= $(PREFIX)/libexec/authd
MANDIR ?= $(PREFIX)/share/man
UNITDIR ?= $(PREFIX)/share/systemd/user
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/site-functions
FISHCOMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d
APPLICATIONSDIR ?= $(PREFIX)/share/applications
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
CONFIGURATION ?= release

SWIFT ?= swift
STRIP ?= strip
# cc, else the Swift toolchain's clang (a fresh machine may have no other C compiler).
ifeq ($(origin CC),default)
CC := $(shell command -v cc >/dev/null 2>&1 && echo cc || echo clang)
endif
BUILT = $(shell $(SWIFT) build -c $(CONFIGURATION) --show-bin-path)
# The C client: only its API is exported (AUTHD_CLIENT_H's functions).
C_CLIENT = .build/c-client/libauthd-client.so.0
C_CLIENT_FLAGS = -std=c11 -O2 -g -Wall -Wextra -fPIC -fvisibility=hidden -shared -Wl,-soname,libauthd-client.so.0
# A library outside the loader's own directories (/lib, /usr/lib, lib64 and multiarch ones; even
# /usr/local/lib is found only once ldconfig ran) is found through the run path pkg-config gives.
C_CLIENT_RPATH = $(if $(filter /lib /usr/lib /lib64 /usr/lib64 /lib/%-linux-gnu /usr/lib/%-linux-gnu,$(LIBDIR)),,-Wl,-rpath,$${libdir} )

INSTALLED = \
	$(BINDIR)/authd $(BINDIR)/authctl $(LIBEXECDIR)/authctl-full \
	$(UNITDIR)/authd.service $(UNITDIR)/authd.socket \
	$(MANDIR)/man1/authctl.1 $(MANDIR)/man5/authd.conf.5 $(MANDIR)/man7/authd-protocol.7 $(MANDIR)/man8/authd.8 \
	$(BASHCOMPDIR)/authctl $(ZSHCOMPDIR)/_authctl $(FISHCOMPDIR)/authctl.fish \
	$(APPLICATIONSDIR)/authctl-open-url.desktop \
	$(LIBDIR)/libauthd-client.so.0 $(LIBDIR)/libauthd-client.so $(INCLUDEDIR)/authd-client.h $(PKGCONFIGDIR)/authd-client.pc

.PHONY: all build install uninstall

all: build

build: $(C_CLIENT)
	$(SWIFT) build -c $(CONFIGURATION) --product authd
	$(SWIFT) build -c $(CONFIGURATION) --product authctl
	$(SWIFT) build -c $(CONFIGURATION) --product authctl-full

$(C_CLIENT): clients/c/authd-client.c clients/c/authd-client.h
	mkdir -p $(dir $@)
	$(CC) $(C_CLIENT_FLAGS) -o $@ clients/c/authd-client.c

install: build
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 \
		$(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR) \
		$(DESTDIR)$(APPLICATIONSDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR)
	# Stripped: symbols and DWARF are half of a release binary's size (authd 151 → 74 MB),
	# and nothing at run time reads them (a crash prints the message; a core names the build id).
	install -m 755 -s --strip-program=$(STRIP) $(BUILT)/authd $(BUILT)/authctl $(DESTDIR)$(BINDIR)/
	# authctl is a small front that runs authctl-full, found at ../libexec/authd from its own
	# folder, for every command but `authctl token`; LIBEXECDIR must stay there.
	install -m 755 -s --strip-program=$(STRIP) $(BUILT)/authctl-full $(DESTDIR)$(LIBEXECDIR)/
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
	@echo "Installed. Start it with: systemctl --user daemon-reload && systemctl --user enable --now authd.socket"

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	rmdir --ignore-fail-on-non-empty $(DESTDIR)$(LIBEXECDIR) 2>/dev/null || true
	rmdir --ignore-fail-on-non-empty $(DESTDIR)$(PKGCONFIGDIR) 2>/dev/null || true
