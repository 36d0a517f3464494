# The programs and host unit tests again with AddressSanitizer and
# UndefinedBehaviorSanitizer (gcc, -O1, any report fatal), in build/asan:
# tests/host/asan.sh runs the unit tests and the host shell tests against
# them (make test), tests/vm/asan-reload.sh drives tidemarkd through
# reloads under it.
ASAN := $(BUILD)/asan
ASAN_CFLAGS = -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
	      -fno-sanitize-recover=undefined $(WARN) -std=gnu11 -D_GNU_SOURCE \
	      -DTM_VERSION='"$(TM_VERSION)"' $(USER_INC) $(DAEMON_INC) -Iuserspace/ctl \
	      -Iuserspace/loader $(NL_CFLAGS)
asan_obj = $(patsubst %.c,$(ASAN)/obj/%.o,$(1))
ASAN_UNIT_BINS := $(patsubst tests/unit/%.c,$(ASAN)/tests/%,$(UNIT_SRCS))
ASAN_BINS := $(ASAN)/tidemarkd $(ASAN)/tidemarkctl $(ASAN)/scx_tidemark

$(ASAN)/obj/%.o: %.c $(LIBBPF_A) $(BUILD)/tidemark.skel.h $(wildcard bpf/*.h userspace/*/*.h topology/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_CFLAGS) -c -o $@ $<

$(ASAN)/tidemarkd: $(call asan_obj,$(DAEMON_SRCS) $(LIB_SRCS))
	$(CC) -fsanitize=address,undefined -o $@ $^ $(DAEMON_FULL_LIBS)

$(ASAN)/tidemarkctl: $(call asan_obj,$(CTL_SRCS) $(LIB_SRCS))
	$(CC) -fsanitize=address,undefined -o $@ $^ $(USER_LIBS) -lhwloc -ljansson -lcurl

$(ASAN)/scx_tidemark: $(call asan_obj,$(LOADER_SRCS) $(LIB_SRCS))
	$(CC) -fsanitize=address,undefined -o $@ $^ $(USER_LIBS) -lhwloc -ljansson -lsystemd -lcurl

$(ASAN)/libtidemarkd.a: $(call asan_obj,$(DAEMON_LIB_SRCS) $(LIB_SRCS))
	rm -f $@ && ar rcs $@ $^

$(ASAN)/tests/%: tests/unit/%.c $(ASAN)/libtidemarkd.a $(BUILD)/ksrc
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_CFLAGS) -Wno-clobbered -I$(KSRC)/tools/testing/selftests -o $@ $< \
		$(ASAN)/libtidemarkd.a $(DAEMON_LIBS)

asan-build: $(ASAN_BINS) $(ASAN_UNIT_BINS)
