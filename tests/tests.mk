# Tests: host unit tests (kselftest_harness.h used in place from the kernel
# tree), host shell tests, and VM tests run through tools/vm/run.
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
ifeq ($(CLUSTER),0)
# the node-only daemon's: the kubeconfig reader is not in it
UNIT_SRCS := $(filter-out tests/unit/test_kubeconfig.c,$(UNIT_SRCS))
UNIT_OUT := $(NODE_ONLY)/tests
else
UNIT_OUT := $(BUILD)/tests
endif
UNIT_BINS := $(patsubst tests/unit/%.c,$(UNIT_OUT)/%,$(UNIT_SRCS))

# Built with the programs' own warnings (but -Wclobbered, which the harness's
# own vfork in TEST_F trips); linked with the daemon's library (the path
# tests drive its configuration parser and actuators).
$(UNIT_OUT)/%: tests/unit/%.c $(wildcard bpf/*.h userspace/*/*.h userspace/*/*/*.h topology/*.h tests/unit/*.h) $(LIBTMD) $(LIBTM) $(BUILD)/ksrc
	@mkdir -p $(UNIT_OUT)
	$(CC) $(UNIT_MUT_INC) $(CFLAGS) $(WARN) -Wno-clobbered -std=gnu11 -D_GNU_SOURCE $(USER_INC) $(DAEMON_INC) \
		-I$(KSRC)/tools/testing/selftests -o $@ $< $(LIBTMD) $(LIBTM) $(DAEMON_LIBS)

include tests/fuzz/fuzz.mk
include tests/asan.mk

# The whole suite, VM tests included (the kernel is built or reused first).
# (scx_simple and scx_flatcg, the bench's peers: tests/vm/progs.sh measures
# scx_simple too, tests/bench/host-mode.sh, in make bench, runs its host mode with both)
# What it needs is built a job per CPU (2 CPUs, warm cache: 49 s, one at a
# time 108 s); the tests then run as tests/run orders them. The test kernel
# is not among them: where it is not built yet, tests/run builds it while
# the host programs run.
TEST_NEEDS_HOST := all $(UNIT_BINS) fuzz-build asan-build $(BUILD)/scx_tidemark_notrace $(BUILD)/tm-insns \
	$(BUILD)/peers/scx_simple $(BUILD)/peers/scx_flatcg
TEST_NEEDS := $(TEST_NEEDS_HOST) kernel
test:
	@tools/deps.sh
	$(MAKE) -j$(shell nproc) test-needs-host
	tests/run $(UNIT_BINS) $(wildcard tests/host/*.sh) $(wildcard tests/vm/*.sh)

# The inner loop: every host program and one VM test per claim, in at most
# 12 minutes on 2 cores with the test kernel built (make test is the whole
# suite). The claims: the ABI and a load (abi), the L3 domains (topology),
# the line (bursty), ONLINE first (priority), cpu.weight (weight), cpu.max
# (cpumax), the fallback (fallback), eviction (daemon).
CHECK_VM := $(addprefix tests/vm/,abi.sh topology.sh bursty.sh priority.sh weight.sh cpumax.sh fallback.sh \
	daemon.sh)
check:
	@tools/deps.sh
	$(MAKE) -j$(shell nproc) test-needs-host
	tests/run $(UNIT_BINS) $(wildcard tests/host/*.sh) $(CHECK_VM)

test-needs: $(TEST_NEEDS)
test-needs-host: $(TEST_NEEDS_HOST)

ifeq ($(CLUSTER),0)
# the node-only daemon's own: its unit tests and tests/host/node-only.sh
test-unit: all $(UNIT_BINS)
	tests/run $(UNIT_BINS) tests/host/node-only.sh
else
test-unit: all $(UNIT_BINS) fuzz-build asan-build
	tests/run $(UNIT_BINS) $(wildcard tests/host/*.sh)
endif

test-vm: all asan-build $(BUILD)/scx_tidemark_notrace $(BUILD)/tm-insns kernel $(BUILD)/peers/scx_simple \
	$(BUILD)/peers/scx_flatcg
	tests/run $(wildcard tests/vm/*.sh)

# The mutation test (tools/mutants.py, tests/mutants/mutants.ini): each
# mutant built in a copy of the tree and run against the tests that own its
# claim, the kernel built first. Long (VM tests per mutant): not in make
# test, where tests/host/mutants.sh checks the list and runs the mutants its
# unit tests kill. MUTANTS=id,id runs some.
MUTANT_NEEDS := all $(UNIT_BINS) $(BUILD)/scx_tidemark_notrace $(BUILD)/tm-insns
mutant-needs: $(MUTANT_NEEDS)
mutants: $(MUTANT_NEEDS) kernel
	tools/mutants.py $(if $(MUTANTS),--only $(MUTANTS))

# The API traffic of one tidemarkd in steady state over more than five
# minutes (make test counts 90 s of it).
soak-api: all
	TM_API_SOAK_S=330 tests/run tests/host/api-traffic.sh

# Long fault injection: SOAK_FAULTS kill -9s of scx_tidemark and tidemarkd
# (make test runs 8 of tests/vm/soak.sh); SOAK_SEED replays a run.
SOAK_FAULTS ?= 100
SOAK_SEED ?= $(shell echo $$RANDOM)
soak: all kernel
	tools/vm/run --cpus 2 --timeout $$(( $(SOAK_FAULTS) * 20 + 300 )) -- env \
		TIDEMARK_SOAK_FAULTS=$(SOAK_FAULTS) TIDEMARK_SOAK_SEED=$(SOAK_SEED) tests/vm/soak.sh
