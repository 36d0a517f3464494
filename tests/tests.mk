# Tests: host unit tests (kselftest_harness.h used in place from the kernel
# tree), host shell tests, and VM tests run through tools/vm/run.
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))

$(BUILD)/tests/%: tests/unit/%.c $(wildcard bpf/*.h userspace/*/*.h topology/*.h) userspace/daemon/config.c $(LIBTM) $(BUILD)/ksrc
	@mkdir -p $(BUILD)/tests
	$(CC) $(CFLAGS) -Wall -Werror -std=gnu11 -D_GNU_SOURCE -Ibpf -Iuserspace/lib -Iuserspace/policy \
		-Iuserspace/daemon -Itopology -I$(LIBBPF_INC) -I$(KSRC)/tools/testing/selftests \
		-o $@ $< userspace/daemon/config.c $(LIBTM) -lhwloc -ljansson -lm

# The whole suite, VM tests included (the kernel is built or reused first).
test: all $(UNIT_BINS) kernel
	tests/run $(UNIT_BINS) $(wildcard tests/host/*.sh) $(wildcard tests/vm/*.sh)

test-unit: all $(UNIT_BINS)
	tests/run $(UNIT_BINS) $(wildcard tests/host/*.sh)

test-vm: all kernel
	tests/run $(wildcard tests/vm/*.sh)
