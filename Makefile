# tidemark: colocation node runtime (sched_ext scheduler + node daemon).
# `make demo` and `make test` are the entry points; see README.md.

BUILD    := build
ABSBUILD := $(abspath $(BUILD))
CLANG    ?= clang-16
LLVM_STRIP ?= llvm-strip-16
CC       ?= gcc
# Path of the extracted linux-source-6.12 tree, written by tools/ksrc.sh.
# Recursive so it is read only when a recipe runs (after $(BUILD)/ksrc exists).
KSRC      = $(shell cat $(BUILD)/ksrc)
BPFTOOL  := $(BUILD)/bpftool/bootstrap/bpftool
LIBBPF_A := $(BUILD)/libbpf/libbpf.a
LIBBPF_INC := $(BUILD)/libbpf/include

CFLAGS   ?= -O2 -g
WARN     := -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Werror
# Each program's own folder is on its include path when it builds; the
# library, host policy headers, topology and the BPF ABI are on every one.
USER_INC  = -Ibpf -Iuserspace/lib -Iuserspace/policy -Itopology -I$(BUILD) -I$(LIBBPF_INC) \
	    -isystem $(KSRC)/tools/sched_ext/include
USER_CFLAGS = $(CPPFLAGS) $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -MMD -MP $(USER_INC)
USER_LIBS := $(LIBBPF_A) -lelf -lz -lzstd -lpthread

BPF_CFLAGS = -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -mlittle-endian \
	     -Wall -Wno-compare-distinct-pointer-types -Werror \
	     -Ibpf -I$(LIBBPF_INC) -I$(KSRC)/tools/sched_ext/include \
	     -I$(KSRC)/tools/include/uapi

# The release every program prints with --version: this number, and the
# commit it was built from when built from a git checkout.
TM_RELEASE := 0.6.0
TM_GIT     := $(shell h=$$(git rev-parse --short HEAD 2>/dev/null) && \
		{ git diff --quiet HEAD -- 2>/dev/null || h=$$h-dirty; echo $$h; })
TM_VERSION := $(TM_RELEASE)$(if $(TM_GIT),+git.$(TM_GIT))

# make CLUSTER=0: a node-only tidemarkd, cluster/none.c in place of the
# API client, the kubeconfig reader and the HTTP client, so it links neither
# libcurl nor libyaml nor libcrypto (NodeMetric and the pod table stay).
CLUSTER ?= 1
NODE_ONLY := $(BUILD)/node-only
DAEMON_NODE_LIBS = $(USER_LIBS) -ljansson -lmicrohttpd -lhwloc $(NL_LIBS) -lm -lsystemd
DAEMON_FULL_LIBS = $(DAEMON_NODE_LIBS) -lcurl -lyaml -lcrypto
ifeq ($(CLUSTER),0)
LIBTMD := $(NODE_ONLY)/libtidemarkd.a
TIDEMARKD := $(NODE_ONLY)/tidemarkd
DAEMON_LIBS = $(DAEMON_NODE_LIBS)
else ifeq ($(CLUSTER),1)
LIBTMD := $(BUILD)/libtidemarkd.a
TIDEMARKD := $(BUILD)/tidemarkd
DAEMON_LIBS = $(DAEMON_FULL_LIBS)
else
$(error CLUSTER must be 1 (the default: the whole daemon) or 0 (node-only), not '$(CLUSTER)')
endif

BINS := $(BUILD)/scx_tidemark $(TIDEMARKD) $(BUILD)/tidemarkctl $(BUILD)/tm-probe $(BUILD)/tm-svc

.SECONDARY:

.PHONY: mutants mutant-needs layering-objs install uninstall deb image kernel-deb kernel-deb-config all deps kernel vmlinux-h test check test-needs test-needs-host test-unit test-vm demo clean format format-check format-files bench verifier soak soak-api fuzz asan-build

all: $(BINS)

# Debian packages, as root: make demo and make test run this first.
deps:
	@tools/deps.sh

$(BUILD)/ksrc:
	@mkdir -p $(BUILD)
	tools/ksrc.sh > $@.tmp && mv $@.tmp $@

# libbpf and bpftool from the kernel tree: Debian's libbpf 1.1 / bpftool 7.1
# predate sched_ext. Built with their own flags, not a package build's
# (dpkg-buildpackage's CFLAGS in the environment broke bpftool's).
SUBMAKE_ENV := env -u CFLAGS -u CPPFLAGS -u LDFLAGS -u CXXFLAGS
$(LIBBPF_A): $(BUILD)/ksrc
	@mkdir -p $(BUILD)/libbpf
	$(SUBMAKE_ENV) $(MAKE) -s -C $(KSRC)/tools/lib/bpf OUTPUT=$(ABSBUILD)/libbpf/ \
		DESTDIR=$(ABSBUILD)/libbpf prefix= EXTRA_CFLAGS='-O2 -g -fPIC' \
		all install_headers >/dev/null
	@touch $@

$(BPFTOOL): $(BUILD)/ksrc | $(LIBBPF_A)
	@mkdir -p $(BUILD)/bpftool
	$(SUBMAKE_ENV) $(MAKE) -s -C $(KSRC)/tools/bpf/bpftool OUTPUT=$(ABSBUILD)/bpftool/ \
		bootstrap >/dev/null
	@touch $@

kernel:
	@tools/kernel.sh >/dev/null

# make kernel-deb: a linux-image package for nodes, Debian's own 6.12 config
# plus kernel-config/tidemark.config (docs/kernel.md; hours on 2 cores).
# make kernel-deb-config: the merged config and its check only.
kernel-deb:
	tools/kernel-deb.sh $(BUILD)/kernel-deb/obj
kernel-deb-config:
	tools/kernel-deb.sh $(BUILD)/kernel-deb/obj --config-only

# Regenerate the committed bpf/vmlinux.h from the test kernel's BTF.
vmlinux-h: $(BPFTOOL)
	tools/gen-vmlinux-h.sh $(BPFTOOL) > bpf/vmlinux.h.tmp && mv bpf/vmlinux.h.tmp bpf/vmlinux.h

$(BUILD)/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) bpf/vmlinux.h $(LIBBPF_A) $(BPFTOOL)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp
	$(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o $(BPFTOOL)
	$(BPFTOOL) gen skeleton $< name $* > $@.tmp && mv $@.tmp $@

NL_CFLAGS := $(shell pkg-config --cflags libnl-genl-3.0 2>/dev/null || echo -I/usr/include/libnl3)
NL_LIBS := $(shell pkg-config --libs libnl-genl-3.0 2>/dev/null || echo -lnl-genl-3 -lnl-3)

# userspace/lib and topology: one static library every program links.
LIB_SRCS    := $(wildcard userspace/lib/*.c topology/*.c)
LOADER_SRCS := $(wildcard userspace/loader/*.c)
CLUSTER_SRCS := $(filter-out %/none.c,$(wildcard userspace/daemon/cluster/*.c))
CLUSTER_NODE_SRCS := userspace/daemon/cluster/nodemetric.c userspace/daemon/cluster/pods.c \
		     userspace/daemon/cluster/nodeslo.c \
		     userspace/daemon/cluster/none.c
DAEMON_CORE_SRCS := $(wildcard userspace/daemon/*.c userspace/daemon/strategies/*.c)
DAEMON_SRCS := $(DAEMON_CORE_SRCS) $(CLUSTER_SRCS)
# the daemon's own headers: its core, and the cluster wing behind a wall
DAEMON_INC  := -Iuserspace/daemon -Iuserspace/daemon/cluster
CTL_SRCS    := $(wildcard userspace/ctl/*.c)
obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
LIBTM := $(BUILD)/libtidemark.a
# tidemarkd but its main(): what the daemon's unit tests link
DAEMON_LIB_SRCS := $(filter-out userspace/daemon/main.c,$(DAEMON_SRCS))
NODE_LIB_SRCS := $(filter-out userspace/daemon/main.c,$(DAEMON_CORE_SRCS)) $(CLUSTER_NODE_SRCS)

$(BUILD)/obj/%.o: %.c $(LIBBPF_A)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -c -o $@ $<

# The loader includes the skeleton.
$(call obj,$(LOADER_SRCS)): $(BUILD)/tidemark.skel.h
$(call obj,$(LOADER_SRCS)): USER_CFLAGS += -Iuserspace/loader
$(call obj,$(sort $(DAEMON_SRCS) $(CLUSTER_NODE_SRCS))): USER_CFLAGS += $(DAEMON_INC) $(NL_CFLAGS)
$(call obj,$(CTL_SRCS)): USER_CFLAGS += -Iuserspace/ctl

-include $(wildcard $(BUILD)/obj/*/*.d $(BUILD)/obj/*/*/*.d $(BUILD)/obj/*/*/*/*.d)

# Rewritten only when the version changes, so version.o rebuilds only then.
$(BUILD)/version.txt: FORCE
	@mkdir -p $(BUILD)
	@echo '$(TM_VERSION)' | cmp -s - $@ || echo '$(TM_VERSION)' > $@
$(BUILD)/obj/userspace/lib/version.o: $(BUILD)/version.txt
$(BUILD)/obj/userspace/lib/version.o: USER_CFLAGS += -DTM_VERSION='"$(TM_VERSION)"'

.PHONY: FORCE
FORCE:

$(LIBTM): $(call obj,$(LIB_SRCS))
	rm -f $@ && ar rcs $@ $^

$(BUILD)/scx_tidemark: $(call obj,$(LOADER_SRCS)) $(LIBTM)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(USER_LIBS) -lhwloc -ljansson -lsystemd

$(BUILD)/libtidemarkd.a: $(call obj,$(DAEMON_LIB_SRCS))
	rm -f $@ && ar rcs $@ $^

$(BUILD)/tidemarkd: $(call obj,userspace/daemon/main.c) $(BUILD)/libtidemarkd.a $(LIBTM)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(DAEMON_FULL_LIBS)

$(NODE_ONLY)/libtidemarkd.a: $(call obj,$(NODE_LIB_SRCS))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# none.o first: its HTTP client stand-in keeps libtidemark.a's out
$(NODE_ONLY)/tidemarkd: $(call obj,userspace/daemon/main.c) $(NODE_ONLY)/libtidemarkd.a $(LIBTM)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(call obj,userspace/daemon/main.c) \
		$(call obj,userspace/daemon/cluster/none.c) $(NODE_ONLY)/libtidemarkd.a $(LIBTM) \
		$(DAEMON_NODE_LIBS)

$(BUILD)/tidemarkctl: $(call obj,$(CTL_SRCS)) $(LIBTM)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(USER_LIBS) -lhwloc -ljansson -lcurl

# scx_tidemark with every trace point compiled out: what the trace's
# zero-cost measurement compares with (tests/vm/trace.sh).
NOTRACE := $(BUILD)/notrace
$(NOTRACE)/tidemark.bpf.o: bpf/tidemark.bpf.c $(wildcard bpf/*.h) bpf/vmlinux.h $(LIBBPF_A) $(BPFTOOL)
	@mkdir -p $(NOTRACE)
	$(CLANG) $(BPF_CFLAGS) -DTM_TRACE_COMPILED_OUT -c $< -o $@.tmp
	$(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp
$(NOTRACE)/tidemark.skel.h: $(NOTRACE)/tidemark.bpf.o $(BPFTOOL)
	$(BPFTOOL) gen skeleton $< name tidemark > $@.tmp && mv $@.tmp $@
$(NOTRACE)/obj/%.o: userspace/loader/%.c $(NOTRACE)/tidemark.skel.h
	@mkdir -p $(dir $@)
	$(CC) -I$(NOTRACE) $(USER_CFLAGS) -Iuserspace/loader -c -o $@ $<
-include $(wildcard $(NOTRACE)/obj/*.d)
$(BUILD)/scx_tidemark_notrace: $(patsubst userspace/loader/%.c,$(NOTRACE)/obj/%.o,$(LOADER_SRCS)) $(LIBTM)
	$(CC) $(CFLAGS) -o $@ $^ $(USER_LIBS) -lhwloc -ljansson -lsystemd

# Each program's object files, a line each, for tests/host/layering.sh
# (built first: .SECONDARY lets make skip objects a program is newer than).
layering-objs: $(call obj,$(LOADER_SRCS) $(DAEMON_SRCS) $(CLUSTER_NODE_SRCS) $(CTL_SRCS) $(LIB_SRCS))
	@echo scx_tidemark $(call obj,$(LOADER_SRCS) $(LIB_SRCS))
	@echo tidemarkd $(call obj,$(DAEMON_SRCS) $(LIB_SRCS))
	@echo tidemarkd-node-only $(call obj,$(DAEMON_CORE_SRCS) $(CLUSTER_NODE_SRCS) \
		$(filter-out userspace/lib/httpc.c,$(LIB_SRCS)))
	@echo tidemarkctl $(call obj,$(CTL_SRCS) $(LIB_SRCS))

# The verifier's instruction count per program (make verifier).
$(BUILD)/tm-insns: tools/verifier/insns.c $(LIBBPF_A)
	$(CC) $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -I$(LIBBPF_INC) -o $@ $< $(USER_LIBS)

verifier: all $(BUILD)/tm-insns kernel
	tools/verifier/run.sh

# The ONLINE latency probe used by tests, the demo and benchmarks.
$(BUILD)/tm-probe: tools/probe/tm-probe.c
	@mkdir -p $(BUILD)
	$(CC) -O2 -g -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -o $@ $< -lpthread

# The multi-threaded request service (a dispatcher and a worker pool).
$(BUILD)/tm-svc: tools/probe/tm-svc.c
	@mkdir -p $(BUILD)
	$(CC) -O2 -g -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -o $@ $< -lpthread

include tests/tests.mk
include tools/bench/bench.mk

# make install [PREFIX=/usr/local] [SYSCONFDIR=/etc] [DESTDIR=]: the three
# programs, the systemd units (paths rewritten for PREFIX and SYSCONFDIR),
# the documentation and sample configuration. Configuration and environment
# files an operator already has are never overwritten.
PREFIX     ?= /usr/local
SYSCONFDIR ?= /etc
UNITDIR    ?= $(PREFIX)/lib/systemd/system
DOCDIR     ?= $(PREFIX)/share/doc/tidemark
UNIT_SED = -e 's|/usr/local/sbin/|$(PREFIX)/sbin/|g' -e 's|/usr/local/share/doc/tidemark/|$(DOCDIR)/|g' \
	   -e 's|/etc/tidemark/|$(SYSCONFDIR)/tidemark/|g'

# Manual pages from each program's --help and --version (help2man).
MAN_PAGES := $(BUILD)/man/scx_tidemark.8 $(BUILD)/man/tidemarkd.8 $(BUILD)/man/tidemarkctl.8
MAN_NAME_scx_tidemark := the tidemark sched_ext colocation scheduler
MAN_NAME_tidemarkd := the tidemark node daemon: eviction, interference, node-load reports
MAN_NAME_tidemarkctl := change and inspect tidemark on a node, and check what the node lacks
HELP2MAN = @mkdir -p $(dir $@) && help2man --no-info --section 8 --name '$(MAN_NAME_$(1))' \
	   --source tidemark --version-string '$(TM_RELEASE)' --output $@.tmp ./$< && mv $@.tmp $@
$(BUILD)/man/scx_tidemark.8 $(BUILD)/man/tidemarkctl.8: $(BUILD)/man/%.8: $(BUILD)/%
	$(call HELP2MAN,$*)
$(BUILD)/man/tidemarkd.8: $(TIDEMARKD)
	$(call HELP2MAN,tidemarkd)

INSTALL_DOCS := README.md dist/tidemarkd.json.sample $(wildcard docs/*.md)
INSTALL_EXAMPLES := dist/grafana/tidemark.json $(wildcard dist/kubernetes/*.yaml dist/kubernetes/*.json)

install: $(BUILD)/scx_tidemark $(TIDEMARKD) $(BUILD)/tidemarkctl $(MAN_PAGES)
	install -d $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(UNITDIR) $(DESTDIR)$(DOCDIR) \
		$(DESTDIR)$(PREFIX)/share/man/man8 \
		$(DESTDIR)$(DOCDIR)/examples/kubernetes $(DESTDIR)$(DOCDIR)/examples/grafana \
		$(DESTDIR)$(SYSCONFDIR)/tidemark
	install -m 0755 $(filter-out %.8,$^) $(DESTDIR)$(PREFIX)/sbin/
	install -m 0644 $(MAN_PAGES) $(DESTDIR)$(PREFIX)/share/man/man8/
	for u in scx_tidemark tidemarkd; do \
		sed $(UNIT_SED) dist/$$u.service > $(DESTDIR)$(UNITDIR)/$$u.service.tmp && \
		chmod 0644 $(DESTDIR)$(UNITDIR)/$$u.service.tmp && \
		mv $(DESTDIR)$(UNITDIR)/$$u.service.tmp $(DESTDIR)$(UNITDIR)/$$u.service || exit 1; \
	done
	install -m 0644 $(INSTALL_DOCS) $(DESTDIR)$(DOCDIR)/
	install -m 0644 dist/grafana/tidemark.json $(DESTDIR)$(DOCDIR)/examples/grafana/
	install -m 0644 $(wildcard dist/kubernetes/*.yaml dist/kubernetes/*.json) \
		$(DESTDIR)$(DOCDIR)/examples/kubernetes/
	for f in scx_tidemark.env tidemarkd.env; do \
		[ -e $(DESTDIR)$(SYSCONFDIR)/tidemark/$$f ] || \
		sed $(UNIT_SED) dist/$$f > $(DESTDIR)$(SYSCONFDIR)/tidemark/$$f || exit 1; \
	done
	[ -e $(DESTDIR)$(SYSCONFDIR)/tidemark/tidemarkd.json ] || \
		install -m 0644 dist/tidemarkd.json.sample $(DESTDIR)$(SYSCONFDIR)/tidemark/tidemarkd.json

# make uninstall [the same PREFIX, SYSCONFDIR, DESTDIR]: what make install
# put there, but configuration an operator changed (kept, and named); the
# units are stopped first when systemd runs them, and tidemarkd puts back
# the cgroup values it changed (--cleanup).
uninstall:
	@if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then \
		systemctl disable --now tidemarkd.service scx_tidemark.service 2>/dev/null || true; \
	fi
	@if [ -z "$(DESTDIR)" ] && [ -x $(PREFIX)/sbin/tidemarkd ] && [ -e $(SYSCONFDIR)/tidemark/tidemarkd.json ]; then \
		$(PREFIX)/sbin/tidemarkd --cleanup --config $(SYSCONFDIR)/tidemark/tidemarkd.json || true; \
	fi
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/sbin/,scx_tidemark tidemarkd tidemarkctl) \
		$(addprefix $(DESTDIR)$(PREFIX)/share/man/man8/,scx_tidemark.8 tidemarkd.8 tidemarkctl.8) \
		$(addprefix $(DESTDIR)$(UNITDIR)/,scx_tidemark.service tidemarkd.service)
	rm -rf $(DESTDIR)$(DOCDIR)
	@for f in scx_tidemark.env tidemarkd.env tidemarkd.json; do \
		p=$(DESTDIR)$(SYSCONFDIR)/tidemark/$$f; [ -e $$p ] || continue; \
		case $$f in *.json) src=dist/tidemarkd.json.sample ;; *) src=dist/$$f ;; esac; \
		if { case $$f in *.json) cat $$src ;; *) sed $(UNIT_SED) $$src ;; esac; } | cmp -s - $$p; then \
			rm -f $$p; \
		else \
			echo "uninstall: $$p was changed: kept"; \
		fi; \
	done
	@rmdir $(DESTDIR)$(SYSCONFDIR)/tidemark 2>/dev/null || true
	@if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then systemctl daemon-reload; fi

# make deb: build/deb/tidemark_<version>_amd64.deb with Debian's tooling,
# from a copy of the tree with dist/debian as its debian/ (the tree itself
# gets no debian/ and no build droppings).
DEB_VERSION := $(shell dpkg-parsechangelog -l dist/debian/changelog -S Version 2>/dev/null)
DEB_STAGE := $(BUILD)/deb/tidemark-$(TM_RELEASE)
DEB_FILE := $(BUILD)/deb/tidemark_$(TM_RELEASE)_amd64.deb
# rebuilt when a file of the tree changed (git's list, when there is one)
DEB_SOURCES = $(wildcard $(shell git ls-files --cached --others --exclude-standard 2>/dev/null))
deb: $(DEB_FILE)
$(DEB_FILE): $(DEB_SOURCES)
	@[ "$(DEB_VERSION)" = "$(TM_RELEASE)" ] || { echo "deb: dist/debian/changelog says $(DEB_VERSION), the Makefile $(TM_RELEASE)"; exit 1; }
	rm -rf $(BUILD)/deb && mkdir -p $(DEB_STAGE)
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then \
		git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - | tar -xf - -C $(DEB_STAGE); \
	else \
		tar --exclude=./$(BUILD) -cf - . | tar -xf - -C $(DEB_STAGE); \
	fi
	cp -r dist/debian $(DEB_STAGE)/debian
	cd $(DEB_STAGE) && dpkg-buildpackage -b -us -uc -j$(shell nproc) >../build.log 2>&1 || \
		{ tail -40 ../build.log; exit 1; }
	@touch $@ && ls $(BUILD)/deb/*.deb

# make image: build/image/tidemark.tar, the package on a minimal Debian root
# as an OCI archive (podman load, docker load, ctr import), tagged as
# dist/kubernetes names it: IMAGE_NAME:IMAGE_TAG.
IMAGE_NAME ?= tidemark
IMAGE_TAG ?= $(TM_RELEASE)
image: $(DEB_FILE)
	tools/image/build.sh $(DEB_FILE) $(BUILD)/image/tidemark.tar \
		$(IMAGE_NAME) $(IMAGE_TAG)
	@du -h $(BUILD)/image/tidemark.tar

# The two entry points install what is missing first; every other target
# only builds (a missing package is named, with `make deps`).
demo:
	@tools/deps.sh
	$(MAKE) all kernel
	tools/demo.sh

clean:
	rm -rf $(BUILD)

# Every C file and header of the project (bpf/vmlinux.h is generated).
FORMAT_FILES = $(filter-out bpf/vmlinux.h,$(wildcard bpf/*.c bpf/*.h userspace/*/*.c \
	       userspace/*/*.h userspace/*/*/*.c userspace/*/*/*.h topology/*.c topology/*.h tests/unit/*.c tests/unit/*.h \
	       tests/fuzz/*.c tests/fuzz/*.h \
	       tools/*/*.c))

format:
	clang-format -i $(FORMAT_FILES)

format-check:
	clang-format --dry-run --Werror $(FORMAT_FILES)

# The list, for tests/host/format.sh.
format-files:
	@echo $(FORMAT_FILES)
