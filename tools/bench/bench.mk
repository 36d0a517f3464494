# `make bench`: the colocation benchmark (tools/bench/run.sh). The peers
# scx_simple and scx_flatcg are built from linux-source's tools/sched_ext
# with the project's toolchain, unmodified.
PEERS := $(BUILD)/peers/scx_simple $(BUILD)/peers/scx_flatcg

$(BUILD)/peers/%.bpf.o: $(BUILD)/ksrc bpf/vmlinux.h $(LIBBPF_A) $(BPFTOOL)
	@mkdir -p $(BUILD)/peers
	$(CLANG) $(BPF_CFLAGS) -I$(KSRC)/tools/sched_ext -c $(KSRC)/tools/sched_ext/$*.bpf.c -o $@.tmp
	$(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

$(BUILD)/peers/%.bpf.skel.h: $(BUILD)/peers/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $* > $@.tmp && mv $@.tmp $@

$(BUILD)/peers/%: $(BUILD)/peers/%.bpf.skel.h
	$(CC) -O2 -g -std=gnu11 -D_GNU_SOURCE -I$(BUILD)/peers -I$(KSRC)/tools/sched_ext \
		-I$(LIBBPF_INC) -isystem $(KSRC)/tools/sched_ext/include \
		-o $@ $(KSRC)/tools/sched_ext/$*.c $(USER_LIBS)

# BENCH_MODE=quick (default, about 18 min), full (longer), or sweep (docs/tuning.md)
# in the test VM; host or host-full on this machine, booted with a sched_ext
# kernel (no VM, no test kernel built; report in build/bench-host/).
BENCH_MODE ?= quick
# The VM modes also measure the decision trace's cost against the build with
# it compiled out (tests/bench/trace-cost.sh, which reads the BPF statistics
# with tm-insns), and then check host mode itself in the test VM (refusals,
# the report's facts, cleanup: tests/bench/host-mode.sh; its short runs
# judge no figure, so it is not in make test).
bench: all $(PEERS) $(if $(filter host%,$(BENCH_MODE)),,kernel $(BUILD)/scx_tidemark_notrace $(BUILD)/tm-insns)
	tools/bench/run.sh $(if $(filter host%,$(BENCH_MODE)),host $(or $(subst host-,,$(filter host-%,$(BENCH_MODE))),quick),$(BENCH_MODE))
ifeq ($(filter host%,$(BENCH_MODE)),)
	tests/run tests/bench/host-mode.sh
endif
