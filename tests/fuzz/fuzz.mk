# libFuzzer targets (clang-16, ASan + UBSan), each built from the project's
# sources with the sanitizers (not from the gcc-built library):
#   make fuzz [FUZZ_SECONDS=60]  every target for FUZZ_SECONDS, new finds
#                                 kept in build/fuzz/corpus/TARGET
#   tests/host/fuzz.sh            (make test) seeds and kept crashes, then
#                                 a few seconds of each target
# Seeds: tests/fuzz/corpus/TARGET; inputs that once crashed a target:
# tests/fuzz/regress/TARGET (replayed every run).
FUZZ_TARGETS := fuzz_config fuzz_rules fuzz_cpuset fuzz_cgfiles fuzz_http fuzz_kube \
		fuzz_kubeconfig fuzz_report
FUZZ_BINS    := $(addprefix $(BUILD)/fuzz/,$(FUZZ_TARGETS))
FUZZ_SECONDS ?= 60
comma := ,
FUZZ_CFLAGS   = -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-std=gnu11 -D_GNU_SOURCE -DTM_VERSION='"fuzz"' $(USER_INC) $(DAEMON_INC) \
		$(NL_CFLAGS) -Itests/fuzz
FUZZ_SRCS    := $(LIB_SRCS) $(filter-out userspace/daemon/main.c,$(DAEMON_SRCS))
FUZZ_OBJS    := $(patsubst %.c,$(BUILD)/fuzz/obj/%.o,$(FUZZ_SRCS))
FUZZ_LIBS     = $(USER_LIBS) -lhwloc -ljansson -lcurl -lyaml -lcrypto -lmicrohttpd $(NL_LIBS) -lsystemd -lm

# the project's sources with the sanitizers (fuzzer-no-link: instrumented,
# no main)
$(BUILD)/fuzz/obj/%.o: %.c $(LIBBPF_A) $(BUILD)/ksrc $(wildcard bpf/*.h userspace/*/*.h topology/*.h)
	@mkdir -p $(dir $@)
	$(CLANG) $(subst fuzzer$(comma),fuzzer-no-link$(comma),$(FUZZ_CFLAGS)) -c -o $@ $<

$(BUILD)/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz.h $(FUZZ_OBJS)
	$(CLANG) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_OBJS) $(FUZZ_LIBS)

fuzz-build: $(FUZZ_BINS)

fuzz: $(FUZZ_BINS)
	tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)
