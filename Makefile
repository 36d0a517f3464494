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
USER_CFLAGS = $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -Ibpf -Iuserspace -I$(BUILD) \
	      -I$(LIBBPF_INC) -isystem $(KSRC)/tools/sched_ext/include
USER_LIBS := $(LIBBPF_A) -lelf -lz -lzstd -lpthread

BPF_CFLAGS = -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -mlittle-endian \
	     -Wall -Wno-compare-distinct-pointer-types -Werror \
	     -Ibpf -I$(LIBBPF_INC) -I$(KSRC)/tools/sched_ext/include \
	     -I$(KSRC)/tools/include/uapi

BINS := $(BUILD)/scx_tidemark $(BUILD)/tidemarkd $(BUILD)/tidemarkctl $(BUILD)/tm-probe

.SECONDARY:

.PHONY: all deps kernel vmlinux-h test test-unit test-vm demo clean format bench

all: $(BINS)

deps:
	@tools/deps.sh

$(BUILD)/ksrc: | deps
	@mkdir -p $(BUILD)
	tools/ksrc.sh > $@.tmp && mv $@.tmp $@

# libbpf and bpftool from the kernel tree: Debian's libbpf 1.1 / bpftool 7.1
# predate sched_ext.
$(LIBBPF_A): $(BUILD)/ksrc
	@mkdir -p $(BUILD)/libbpf
	$(MAKE) -s -C $(KSRC)/tools/lib/bpf OUTPUT=$(ABSBUILD)/libbpf/ \
		DESTDIR=$(ABSBUILD)/libbpf prefix= EXTRA_CFLAGS='-O2 -g -fPIC' \
		all install_headers >/dev/null
	@touch $@

$(BPFTOOL): $(BUILD)/ksrc
	@mkdir -p $(BUILD)/bpftool
	$(MAKE) -s -C $(KSRC)/tools/bpf/bpftool OUTPUT=$(ABSBUILD)/bpftool/ \
		bootstrap >/dev/null
	@touch $@

kernel: | deps
	@tools/kernel.sh >/dev/null

# Regenerate the committed bpf/vmlinux.h from the test kernel's BTF.
vmlinux-h: $(BPFTOOL) | deps
	tools/gen-vmlinux-h.sh $(BPFTOOL) > bpf/vmlinux.h.tmp && mv bpf/vmlinux.h.tmp bpf/vmlinux.h

$(BUILD)/%.bpf.o: bpf/%.bpf.c bpf/tidemark.h bpf/tidemark_compat.bpf.h bpf/vmlinux.h $(LIBBPF_A) $(BPFTOOL)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp
	$(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o $(BPFTOOL)
	$(BPFTOOL) gen skeleton $< name $* > $@.tmp && mv $@.tmp $@

TMLIB := userspace/tmlib.c userspace/tmlib.h userspace/rules.c userspace/rules.h userspace/tmmaps.h
TMLIB_SRCS := userspace/tmlib.c userspace/rules.c
TOPO := topology/topo.c topology/topo.h topology/placement.h
PLACE := userspace/place.c userspace/place.h

$(BUILD)/scx_tidemark: userspace/scx_tidemark.c $(BUILD)/tidemark.skel.h bpf/tidemark.h $(TMLIB) $(TOPO) $(PLACE) $(LIBBPF_A)
	$(CC) $(USER_CFLAGS) -Itopology -o $@ $< $(TMLIB_SRCS) userspace/place.c topology/topo.c \
		$(USER_LIBS) -lhwloc

DAEMON_SRCS := userspace/tidemarkd.c userspace/config.c userspace/report.c userspace/httpc.c \
	       userspace/strategy_cpusuppress.c userspace/strategy_memevict.c \
	       userspace/strategy_cpuevict.c userspace/strategy_interfere.c userspace/signals.c
DAEMON_HDRS := userspace/daemon.h userspace/config.h userspace/evict.h userspace/nodeload.h \
	       userspace/httpc.h userspace/interfere.h userspace/signals.h

NL_CFLAGS := $(shell pkg-config --cflags libnl-genl-3.0 2>/dev/null || echo -I/usr/include/libnl3)
NL_LIBS := $(shell pkg-config --libs libnl-genl-3.0 2>/dev/null || echo -lnl-genl-3 -lnl-3)

$(BUILD)/tidemarkd: $(DAEMON_SRCS) $(DAEMON_HDRS) bpf/tidemark.h $(TMLIB) $(TOPO) $(LIBBPF_A)
	$(CC) $(USER_CFLAGS) $(NL_CFLAGS) -Itopology -o $@ $(DAEMON_SRCS) $(TMLIB_SRCS) topology/topo.c \
		$(USER_LIBS) -ljansson -lmicrohttpd -lhwloc $(NL_LIBS) -lm

$(BUILD)/tidemarkctl: userspace/tidemarkctl.c userspace/httpc.c userspace/httpc.h bpf/tidemark.h $(TMLIB) $(TOPO) $(LIBBPF_A)
	$(CC) $(USER_CFLAGS) -Itopology -o $@ $< userspace/httpc.c $(TMLIB_SRCS) topology/topo.c $(USER_LIBS) -lhwloc -ljansson

# The ONLINE latency probe used by tests, the demo and benchmarks.
$(BUILD)/tm-probe: tools/probe/tm-probe.c
	@mkdir -p $(BUILD)
	$(CC) -O2 -g -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -o $@ $< -lpthread

include tests/tests.mk
include tools/bench/bench.mk

demo: all kernel
	tools/demo.sh

clean:
	rm -rf $(BUILD)

format:
	clang-format -i bpf/*.c bpf/tidemark.h userspace/*.c tests/unit/*.c
